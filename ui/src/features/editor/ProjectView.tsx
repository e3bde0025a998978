// One open project: title, editor (+ preview), status bar, right panel, overlays.
import { type ReactNode, forwardRef, lazy, Suspense, useCallback, useEffect, useImperativeHandle, useLayoutEffect, useMemo, useRef, useState } from "react";
import { toClientError } from "../../shared/api/client";
import type { Accepted, BrandProfile, Comment, Platform, Project, ProposalView, SyncConflict } from "../../shared/api/generated";
import { Dialog } from "../../shared/ui/Dialog";
import { useApp } from "../../shared/context";
import { AiPanel } from "../drafting";
import type { SourceTarget } from "../drafting";
import type { Selection } from "../drafting";
import { StatusAi } from "../drafting";
import { Drafting } from "../drafting";
import type { MessageId } from "../../shared/i18n";
import { locateAnchor } from "../../shared/lib/anchors";
import { altFromName, blobToBase64, imageMarkdown } from "../../shared/lib/files";
import { focusWhenShown } from "../../shared/lib/focus";
import { createTextCounter, type TextCount } from "../../shared/lib/wordcount";
import { CommentsPanel } from "../comments";
import { HistoryPanel } from "../history";
import { type AnchorMark, type EditorHandle, MarkdownEditor } from "./MarkdownEditor";
import { type ConflictCause, ConflictOverlay, DiffOverlay, VersionOverlay } from "./Overlays";
import { merge3 } from "./merge";
import { beforeClose } from "../../shared/lib/closeGuard";
import { dropKept, judgeKept, keepUnsaved, readKept } from "./kept";
import { type Conflict, type SaveState, Saver } from "./saver";
import { ConflictView } from "../sync";
import { OTHER_WINDOW_MS, syncStoreFor, useSync } from "../sync";
import { TitleField } from "./TitleField";
import { loadProposalReview } from "../review";
import { loadOptimizeDialog } from "../optimize";
import { loadDraftsPanel } from "../drafts";

// The preview (and its Markdown renderer) loads on first use, keeping startup small.
const Preview = lazy(() => import("../../shared/ui/Preview").then((m) => ({ default: m.Preview })));
// So does reviewing a proposal (CodeMirror's merge view).
const ProposalReview = lazy(() => loadProposalReview().then((m) => ({ default: m.ProposalReview })));
// So do the drafts panel and its previews.
const OptimizeDialog = lazy(() => loadOptimizeDialog().then((m) => ({ default: m.OptimizeDialog })));
const DraftsPanel = lazy(() => loadDraftsPanel().then((m) => ({ default: m.DraftsPanel })));

import { type PanelTab, TABS } from "./tabs";

export type { PanelTab };

export interface ProjectViewHandle {
  openSaveVersion(): void;
  togglePreview(): void;
  compareWithHead(): void;
  focusComment(): void;
  toggleArchive(): void;
  focusEditor(): void;
  /** Moves focus to the AI panel's composer (Ctrl/Cmd+J), once the panel shows it;
   * until then to the panel's tab, so nothing typed meanwhile goes into the article. */
  focusAi(): void;
  /** Closes the topmost overlay; false when none was open. */
  closeOverlay(): boolean;
  /** Stops the AI session's running turn; false when nothing ran. */
  stopAi(): boolean;
  /** Compacts the open AI session now; false when none is open or something runs. */
  compactAi(): boolean;
  /** Opens the one-click optimize dialog (Ctrl/Cmd+Shift+O). */
  openOptimize(): void;
  flush(): Promise<void>;
}

/** A place to show once the project is open: a search hit's match. */
export interface Reveal {
  projectId: string;
  /** UTF-16 offsets in the source (of the version, for a version). */
  span: { from: number; to: number } | null;
  version: number | null;
  commentId: string | null;
  /** Changes on every request, so choosing the same hit again shows it again. */
  seq: number;
}

export interface ProjectViewProps {
  projectId: string;
  /** Where to take the person once the project is loaded. */
  reveal?: Reveal | null;
  tab: PanelTab;
  onTab: (tab: PanelTab) => void;
  brands: BrandProfile[];
  /** Reports title/head/updatedAt/archived changes for the sidebar. */
  onProjectChanged: (p: Project) => void;
  /** Shown first in the top bar (the "show sidebar" button when it is hidden). */
  leading?: ReactNode;
  /** Opens Settings → AI models (the AI panel's offer when no model is set up). */
  onSetUpModel?: () => void;
  /** Opens a project (this one or another) at a place: an Ask citation's source. */
  onOpenSource?: (target: SourceTarget) => void;
}

type Overlay = { kind: "diff"; from: number; to: number | null } | { kind: "view"; n: number } | null;

export const ProjectView = forwardRef<ProjectViewHandle, ProjectViewProps>(function ProjectView(
  { projectId, reveal, tab, onTab, brands, onProjectChanged, leading, onSetUpModel, onOpenSource },
  ref,
) {
  const { client, t, toast, showError, lang, mod } = useApp();
  const [project, setProject] = useState<Project | null>(null);
  const [loadError, setLoadError] = useState<unknown>(null);
  const [title, setTitle] = useState("");
  const [saveState, setSaveState] = useState<SaveState>("saved");
  const [head, setHead] = useState(0);
  /** The one-click optimize dialog: open, for the whole article or one draft. */
  const [optimize, setOptimize] = useState<{ draft: Platform | null } | null>(null);
  /** Bumped after an optimization wrote drafts, so the Drafts tab reads them again. */
  const [draftsKey, setDraftsKey] = useState(0);
  /** The saved working-copy revision (drafts recompile when it changes). */
  const [revision, setRevision] = useState(0);
  const [words, setWords] = useState<TextCount>({ n: 0, unit: "words" });
  const [preview, setPreview] = useState(false);
  const [previewSource, setPreviewSource] = useState("");
  /** The source as last autosaved (for checking comments' anchors once per save). */
  const [saved, setSaved] = useState<{ revision: number; source: string } | null>(null);
  const [conflict, setConflict] = useState<Conflict | null>(null);
  /** Where the other side of the conflict came from, for its wording. */
  const [cause, setCause] = useState<ConflictCause>({ kind: "elsewhere" });
  const [overlay, setOverlay] = useState<Overlay>(null);
  const [saveDialog, setSaveDialog] = useState(false);
  const [restoreAsk, setRestoreAsk] = useState<number | null>(null);
  const [comments, setComments] = useState<Comment[] | null>(null);
  const [selectionText, setSelectionText] = useState("");
  const [busy, setBusy] = useState<string | null>(null);
  /** The proposal under review in the centre. */
  const [review, setReview] = useState<string | null>(null);
  // The project's drafting sessions live as long as the view, so a turn keeps streaming
  // while another tab of the right-hand panel is open.
  const [drafting] = useState(() => new Drafting(client, projectId));
  useEffect(() => {
    drafting.revive();
    return () => drafting.dispose();
  }, [drafting]);
  // Keeps the last handle: on unmount React detaches refs before effect cleanups run,
  // and the final save still needs the editor's text.
  const editor = useRef<EditorHandle | null>(null);
  const keepEditor = useCallback((h: EditorHandle | null) => {
    if (h) editor.current = h;
  }, []);
  // An opened project is ready to write in: the cursor goes into its text, unless the
  // person has moved on to a dialog or a field meanwhile.
  const focusOnOpen = useCallback(() => {
    const active = document.activeElement;
    if (!(active instanceof HTMLElement) || active === document.body) return true;
    return !active.closest("[role=dialog], [role=alertdialog]") && !active.matches("input, textarea, select, [contenteditable=true]");
  }, []);
  const stopFocusAi = useRef<() => void>(() => undefined);
  useEffect(() => () => stopFocusAi.current(), []);
  const saver = useRef<Saver | null>(null);
  /** Set below: a stale save found a newer working copy. */
  const conflictFound = useRef<(c: Conflict) => void>(() => undefined);
  // The conflict opened by text kept when the editor last went away (see kept.ts).
  const keptConflict = useRef<Conflict | null>(null);
  // The editor's first text when it is not the stored one (kept text restored).
  const [startText, setStartText] = useState<string | null>(null);
  /** The head as this view last showed it. */
  const headRef = useRef(0);
  const readTimer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const countWords = useMemo(() => createTextCounter(), []);
  const reported = useRef({ title: "", at: 0 });
  const previewRef = useRef(preview);
  const changedRef = useRef(onProjectChanged);
  useLayoutEffect(() => {
    headRef.current = head;
    previewRef.current = preview;
    changedRef.current = onProjectChanged;
  });

  // Load the project and its comments.
  useEffect(() => {
    let live = true;
    (async () => {
      try {
        const p = await client.call("project.get", { projectId });
        if (!live) return;
        saver.current?.dispose();
        saver.current = new Saver({
          client,
          project: p,
          pull: () => editor.current?.getText() ?? p.source,
          isComposing: () => editor.current?.isComposing() ?? false,
          onState: setSaveState,
          onSaved: (np) => {
            // Text kept from an earlier closing is stored now (or resolved).
            dropKept(np.id);
            setRevision(np.revision);
            setSaved({ revision: np.revision, source: np.source });
            // Tell the sidebar when the title changed, otherwise at most every 5 s.
            const now = Date.now();
            if (np.title !== reported.current.title || now - reported.current.at > 5000) {
              reported.current = { title: np.title, at: now };
              changedRef.current(np);
            }
          },
          // The overlay opens once it can say where the other side came from.
          onConflict: (c) => conflictFound.current(c),
          onError: (e) => showError(e),
        });
        // Text the editor could not store when it last went away comes back: as the
        // unsaved edit it was, or as the person's side of a conflict with newer text.
        const kept = judgeKept(readKept(projectId), p);
        const shown = kept.kind === "none" ? { title: p.title, source: p.source } : kept.mine;
        if (kept.kind === "none") dropKept(projectId);
        setProject(p);
        setStartText(kept.kind === "none" ? null : shown.source);
        setTitle(shown.title);
        reported.current = { title: p.title, at: Date.now() };
        setHead(p.head);
        setRevision(p.revision);
        setWords(countWords(shown.source));
        setPreviewSource(shown.source);
        setSaveState("saved");
        if (kept.kind === "edit") saver.current.restoreKept(kept.mine, null);
        if (kept.kind === "conflict") {
          saver.current.restoreKept(kept.mine, kept.base);
          keptConflict.current = saver.current.conflict;
        }
      } catch (e) {
        if (live) setLoadError(e);
      }
    })();
    client.call("comment.list", { projectId }).then(
      (r) => live && setComments(r.comments),
      () => live && setComments([]),
    );
    return () => {
      live = false;
    };
  }, [client, projectId, showError, countWords]);

  // Reads the editor's text into the word count and the preview (the saver pulls its own).
  const readEditor = useCallback(() => {
    if (readTimer.current) clearTimeout(readTimer.current);
    readTimer.current = null;
    const text = editor.current?.getText();
    if (text === undefined) return;
    setWords(countWords(text));
    if (previewRef.current) setPreviewSource(text);
  }, [countWords]);

  const onEditorChange = useCallback(() => {
    saver.current?.touch();
    if (!readTimer.current) readTimer.current = setTimeout(readEditor, 500);
  }, [readEditor]);

  const flush = useCallback(async () => {
    readEditor();
    await saver.current?.flush();
  }, [readEditor]);

  // Save what is pending when the project closes, the page goes away, or the desktop
  // window is asked to close (the shell waits for this save). Text that is not stored
  // yet is first kept in this browser profile (kept.ts): a save that fails, waits in a
  // conflict or is cut off by the closing loses nothing.
  useEffect(() => {
    const keepPending = () => {
      const s = saver.current;
      if (!s) return;
      const mine = s.current(); // reads the editor, so `dirty` knows the last keystroke
      if (!(s.dirty || s.state === "conflict")) return;
      keepUnsaved(s.projectId, { mine, base: s.base, keptAt: new Date().toISOString() });
    };
    const onHide = () => {
      readEditor();
      keepPending();
      void saver.current?.flush().catch(() => undefined);
    };
    window.addEventListener("pagehide", onHide);
    const unregister = beforeClose(async () => {
      readEditor();
      keepPending();
      await saver.current?.flush();
    });
    return () => {
      window.removeEventListener("pagehide", onHide);
      unregister();
      onHide();
    };
  }, [readEditor]);

  const missingImage = useCallback((alt: string) => t("preview.imageMissing", { alt }), [t]);

  const onTitle = (value: string) => {
    setTitle(value);
    saver.current?.change({ title: value });
  };

  // A project needs a title: one left empty goes back to the stored one, saying so
  // (rather than showing "Saved" for a title that was never stored).
  const onTitleBlur = () => {
    if (title.trim() !== "" || !saver.current) return;
    const kept = saver.current.savedTitle;
    onTitle(kept);
    toast(t("title.keptNotEmpty", { title: kept }));
  };

  const saveVersion = async (message: string) => {
    setSaveDialog(false);
    setBusy(t("version.saving"));
    try {
      await flush();
      const v = await client.call("version.create", message.trim() ? { projectId, message: message.trim() } : { projectId });
      setHead(v.number);
      // The new version's delivery shows in the sync state at once.
      void syncStoreFor(client).refresh();
      const p = await client.call("project.get", { projectId });
      changedRef.current(p);
      toast(t("version.saved", { n: v.number }));
    } catch (e) {
      const err = toClientError(e);
      if (err.code !== "CONFLICT") showError(err);
    } finally {
      setBusy(null);
      editor.current?.focus();
    }
  };

  const restore = async (n: number) => {
    setRestoreAsk(null);
    setBusy(t("restore.busy", { n }));
    try {
      await flush();
      const r = await client.call("version.restore", { projectId, number: n });
      void syncStoreFor(client).refresh();
      editor.current?.setText(r.project.source);
      saver.current?.reset(r.project);
      setProject(r.project);
      setTitle(r.project.title);
      setHead(r.project.head);
      setRevision(r.project.revision);
      setWords(countWords(r.project.source));
      setPreviewSource(r.project.source);
      setOverlay(null);
      changedRef.current(r.project);
      toast(
        r.autosnapshot
          ? t("restore.doneSnapshot", { n, m: r.restored.number, s: r.autosnapshot.number })
          : t("restore.done", { n, m: r.restored.number }),
      );
    } catch (e) {
      const err = toClientError(e);
      if (err.code !== "CONFLICT") showError(err);
    } finally {
      setBusy(null);
    }
  };

  const keepMine = async () => {
    setConflict(null);
    try {
      await saver.current?.keepMine();
      toast(t("conflict.keptMine"));
    } catch (e) {
      showError(e);
    }
  };
  const takeTheirs = () => {
    const d = saver.current?.takeTheirs();
    setConflict(null);
    if (!d) return;
    editor.current?.setText(d.source);
    setTitle(d.title);
    setRevision(saver.current?.revision ?? 0);
    setWords(countWords(d.source));
    setPreviewSource(d.source);
    toast(t("conflict.tookTheirs"));
  };

  // Both sides kept: a three-way merge of the person's text and the newer one, from the
  // text both started from. Where both changed the same lines, both texts stay for the
  // person to tidy up (the first such place is selected). Saved on the newer revision.
  const keepBoth = async () => {
    const s = saver.current;
    const c = s?.conflict;
    if (!s || !c) return;
    const m = merge3(c.base, s.current(), c.theirs);
    setConflict(null);
    editor.current?.setText(m.source);
    setTitle(m.title);
    setWords(countWords(m.source));
    setPreviewSource(m.source);
    try {
      await s.resolveWith({ title: m.title, source: m.source });
      toast(m.overlaps === 0 ? t("conflict.merged") : t(m.overlaps === 1 ? "conflict.keptBoth.one" : "conflict.keptBoth", { n: m.overlaps }));
      const first = m.spans[0];
      if (first) editor.current?.select(first.from, first.to);
      else editor.current?.focus();
    } catch (e) {
      showError(e);
    }
  };

  // Where a newer working copy came from, from the head version it equals: a teammate's
  // version synced in, a resolution of a sync conflict, or (neither) another window of
  // this data folder. `sameText: false` asks only whose the head is.
  const describeCause = useCallback(
    async (p: Pick<Project, "head" | "title" | "source">, sameText = true): Promise<ConflictCause> => {
      if (p.head > 0) {
        try {
          const v = await client.call("version.get", { projectId, number: p.head });
          if (!sameText || (v.title === p.title && v.source === p.source)) {
            // A teammate's resolution of a sync conflict says so (when their client and
            // the server carried how it was made).
            if (v.origin.type === "pulled" && v.origin.remoteOrigin === "syncResolution") return { kind: "resolution", n: v.number, author: v.author };
            if (v.origin.type === "pulled") return { kind: "teammate", author: v.author, n: v.number };
            if (v.origin.type === "syncResolution") return { kind: "resolution", n: v.number };
          }
        } catch {
          // The plain wording then.
        }
      }
      return { kind: "elsewhere" };
    },
    [client, projectId],
  );

  // A save met a newer working copy, or one arrived under unsaved text: both sides wait
  // in the overlay, which says where the newer text came from.
  useLayoutEffect(() => {
    conflictFound.current = (c: Conflict) => {
      const show = (why: ConflictCause) => {
        if (saver.current?.conflict?.theirs.revision !== c.theirs.revision) return; // a newer one follows
        setCause(keptConflict.current && saver.current.conflict === keptConflict.current ? { kind: "kept" } : why);
        setConflict(saver.current.conflict);
      };
      void client.call("project.get", { projectId }).then(
        async (p) => {
          if (p.head !== headRef.current) setHead(p.head);
          show(p.revision === c.theirs.revision ? await describeCause(p) : { kind: "elsewhere" });
        },
        () => show({ kind: "elsewhere" }),
      );
    };
  });

  // Sync (or another window) moved the working copy on: the editor follows it when it
  // holds no unsaved text; otherwise both sides wait in the conflict overlay. The head,
  // History and the sidebar follow in both cases. Runs whenever sync changed projects
  // (the status's change marker moved), and while connected at most every
  // OTHER_WINDOW_MS otherwise (see below).
  const following = useRef(false);
  const follow = useCallback(async () => {
    const s = saver.current;
    if (!s || following.current) return;
    following.current = true;
    try {
      await s.whenIdle();
      const p = await client.call("project.get", { projectId });
      // A save that started meanwhile moves the revision itself: check at the next poll.
      if (saver.current !== s || s.busy) return;
      const known = headRef.current;
      if (p.revision <= s.revision) {
        if (p.head !== known) {
          setHead(p.head);
          changedRef.current(p);
          if (p.head > known) {
            // A teammate's version under unsynced work opens a sync conflict (its bar
            // shows above the editor); the working copy stays the person's.
            const why = await describeCause(p, false);
            if (why.kind === "teammate" || (why.kind === "resolution" && why.author)) toast(t("sync.arrived.conflict", { author: why.author ?? "", n: why.n }));
          }
        }
        return;
      }
      if (editor.current?.isComposing()) return; // never in the middle of a composition
      const why = await describeCause(p);
      if (saver.current !== s || s.busy || editor.current?.isComposing()) return;
      const outcome = s.arrived(p);
      setHead(p.head);
      setProject(p);
      changedRef.current(p);
      if (outcome === "adopted") {
        editor.current?.setText(p.source);
        setTitle(p.title);
        setRevision(p.revision);
        setWords(countWords(p.source));
        setPreviewSource(p.source);
        toast(
          why.kind === "teammate"
            ? t("sync.arrived.pulled", { author: why.author, n: why.n })
            : why.kind === "resolution"
              ? why.author
                ? t("sync.arrived.pulledResolution", { author: why.author, n: why.n })
                : t("sync.arrived.resolution", { n: why.n })
              : t("sync.arrived.elsewhere"),
        );
      } else if (outcome === "same") {
        setRevision(p.revision);
      }
    } catch {
      // A failed read is retried at the next poll.
    } finally {
      following.current = false;
    }
  }, [client, projectId, countWords, describeCause, t, toast]);

  // A poll that finds the change marker where it was reads nothing more. Another window
  // of this data folder saves the working copy without moving the marker: while
  // connected, the project is read again at most every OTHER_WINDOW_MS to catch that
  // (a save here meets the newer text at once anyway).
  useEffect(() => {
    const store = syncStoreFor(client);
    let changes = store.getSnapshot().changes;
    let readAt = Date.now();
    return store.onPoll((snap) => {
      const moved = snap.changes !== changes;
      changes = snap.changes;
      if (moved || (snap.status?.connected && Date.now() - readAt >= OTHER_WINDOW_MS)) {
        readAt = Date.now();
        void follow();
      }
    });
  }, [client, follow]);

  const addComment = useCallback(
    async (body: string) => {
      try {
        await flush();
        const sel = editor.current?.getSelection() ?? { from: 0, to: 0 };
        const params = sel.to > sel.from ? { projectId, body, anchor: { from: sel.from, to: sel.to } } : { projectId, body };
        const c = await client.call("comment.add", params);
        setComments((list) => [...(list ?? []), c]);
        toast(t("comments.added"));
        return true;
      } catch (e) {
        showError(e);
        return false;
      }
    },
    [client, flush, projectId, showError, t, toast],
  );

  const resolveComment = useCallback(
    async (c: Comment, resolved: boolean) => {
      try {
        const nc = await client.call("comment.resolve", { projectId, commentId: c.id, resolved });
        setComments((list) => (list ?? []).map((x) => (x.id === nc.id ? nc : x)));
      } catch (e) {
        showError(e);
      }
    },
    [client, projectId, showError],
  );
  const deleteComment = useCallback(
    async (c: Comment) => {
      try {
        await client.call("comment.delete", { projectId, commentId: c.id });
        setComments((list) => (list ?? []).filter((x) => x.id !== c.id));
      } catch (e) {
        showError(e);
      }
    },
    [client, projectId, showError],
  );
  const jumpToComment = useCallback((c: Comment) => {
    const mapped = editor.current?.anchors().find((a) => a.id === c.id);
    const r = mapped ?? c.anchor;
    if (r) editor.current?.select(r.from, r.to);
  }, []);

  // A finding's span is from the compiled revision; if the text moved since, select the
  // nearest occurrence of what it matched instead.
  const jumpToSpan = useCallback((from: number, to: number, matched?: string | null) => {
    const text = editor.current?.getText() ?? "";
    const r = (matched ? locateAnchor(text, { from, to }, matched) : null) ?? { from, to };
    editor.current?.select(r.from, r.to);
  }, []);

  // A search hit: a version opens in its overlay; a comment shows the comments tab;
  // the match is selected in the editor (the editor mounts with the project).
  const loaded = project !== null;
  useEffect(() => {
    if (!reveal || !loaded) return;
    const timer = setTimeout(() => {
      if (reveal.version != null) {
        setOverlay({ kind: "view", n: reveal.version });
        return;
      }
      if (reveal.commentId) onTab("comments");
      if (reveal.span) jumpToSpan(reveal.span.from, reveal.span.to);
    }, 0);
    return () => clearTimeout(timer);
    // onTab is the parent's state setter wrapper; a new one must not re-run the reveal.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [reveal, loaded, jumpToSpan]);

  // Stable callbacks, so the memoised panels skip re-rendering while the person types.
  const onView = useCallback((n: number) => setOverlay({ kind: "view", n }), []);
  const onDiff = useCallback((from: number, to: number | null) => setOverlay({ kind: "diff", from, to }), []);

  // Anchors are placed in the editor's live text when the comments change (reading the
  // editor during render, on purpose); edits in between are mapped by the editor itself.
  // eslint-disable-next-line react-hooks/refs -- see above: the live text is wanted, not a render input
  const anchors = useMemo<AnchorMark[]>(() => {
    const text = editor.current?.getText() ?? project?.source ?? "";
    const out: AnchorMark[] = [];
    for (const c of comments ?? []) {
      if (c.resolved || !c.anchor) continue;
      const r = locateAnchor(text, c.anchor, c.quote);
      if (r) out.push({ id: c.id, ...r });
    }
    return out;
    // eslint-disable-next-line react-hooks/exhaustive-deps -- not on each save of the source: see above
  }, [comments, project?.id]);

  // Open comments whose quoted text was deleted since: the panel says so rather than
  // offering a jump to nowhere. Checked against the source as saved, once per save.
  const savedText = saved && project && saved.revision >= project.revision ? saved.source : (project?.source ?? "");
  const lostAnchors = useMemo<ReadonlySet<string>>(() => {
    const lost = new Set<string>();
    for (const c of comments ?? []) {
      if (!c.resolved && c.anchor && c.quote && !locateAnchor(savedText, c.anchor, c.quote)) lost.add(c.id);
    }
    return lost;
  }, [comments, savedText]);

  const onImageFiles = useCallback(
    async (files: File[], pos: number) => {
      setBusy(t("image.adding"));
      try {
        let at = pos;
        for (const f of files) {
          const ext = (f.type.split("/")[1] ?? "png").replace("jpeg", "jpg");
          const fileName = f.name || `pasted-${Date.now()}.${ext}`;
          const alt = altFromName(fileName);
          const asset = await client.call("media.addBytes", {
            projectId,
            fileName,
            dataBase64: await blobToBase64(f),
            altText: alt,
          });
          const text = `${imageMarkdown(alt, asset.fileName)}\n`;
          editor.current?.insert(text, at);
          at += text.length;
        }
        toast(t("image.added"));
      } catch (e) {
        showError(e);
      } finally {
        setBusy(null);
      }
    },
    [client, projectId, showError, t, toast],
  );

  const getSelection = useCallback((): Selection | null => {
    const ed = editor.current;
    if (!ed) return null;
    const { from, to } = ed.getSelection();
    return to > from ? { from, to, text: ed.getText().slice(from, to) } : null;
  }, []);
  const revisionNow = useCallback(() => saver.current?.revision ?? 0, []);
  const textNow = useCallback(() => editor.current?.getText() ?? "", []);
  const closeReview = useCallback(() => {
    setReview(null);
    editor.current?.focus();
  }, []);

  // The project changed underneath the editor (an accepted proposal, a restored
  // checkpoint, applied staged changes): the editor shows it, the saver builds on it.
  const replaceProject = useCallback(
    (p: Project, message: string) => {
      editor.current?.setText(p.source);
      saver.current?.reset(p);
      setProject(p);
      setTitle(p.title);
      setHead(p.head);
      setRevision(p.revision);
      setWords(countWords(p.source));
      setPreviewSource(p.source);
      changedRef.current(p);
      toast(message);
    },
    [countWords, toast],
  );
  const workingCopy = useMemo(() => ({ flush, revision: revisionNow, replace: replaceProject }), [flush, revisionNow, replaceProject]);

  // The assistant applied an approved change: show the project as it is now.
  useEffect(() => {
    drafting.setProjectWriteHandler(() => {
      void client.call("project.get", { projectId }).then(
        (p) => replaceProject(p, p.head > 0 ? t("ai.applied", { n: p.head }) : t("ai.review.acceptedNoVersion")),
        (e) => showError(e),
      );
    });
  }, [drafting, client, projectId, replaceProject, t, showError]);
  // A saved edit can make open proposals stale: list them again.
  useEffect(() => {
    const store = drafting.getSnapshot().active;
    if (!store || revision === 0) return;
    const timer = setTimeout(() => void store.refreshProposals(), 300);
    return () => clearTimeout(timer);
  }, [drafting, revision]);

  const onAccepted = useCallback(
    (accepted: Accepted) => {
      if (accepted.project) replaceProject(accepted.project, t("version.saved", { n: accepted.project.head }));
      else toast(t("ai.review.acceptedNoVersion"));
    },
    [replaceProject, t, toast],
  );

  const onRegenerate = useCallback(
    (view: ProposalView) => {
      const store = drafting.getSnapshot().active;
      setReview(null);
      onTab("ai");
      void store?.submit(t("ai.review.regenerateTask", { summary: view.summary }));
    },
    [drafting, onTab, t],
  );

  const onImageFilesRef = useRef(onImageFiles);
  useLayoutEffect(() => {
    onImageFilesRef.current = onImageFiles;
  });
  // Stable, like onView and onDiff above, for the memoised editor.
  const onImages = useCallback((f: File[], pos: number) => void onImageFilesRef.current(f, pos), []);

  const setBrand = async (id: string) => {
    try {
      await flush();
      const p = await client.call("project.update", { projectId, baseRevision: saver.current?.revision, brandProfileId: id });
      saver.current?.adoptRevision(p);
      setProject(p);
      setRevision(p.revision);
      changedRef.current(p);
    } catch (e) {
      showError(e);
    }
  };

  const toggleArchive = async () => {
    if (!project) return;
    try {
      await flush().catch(() => undefined);
      const p = await client.call("project.archive", { projectId, archived: !project.archived });
      setProject(p);
      changedRef.current(p);
      toast(p.archived ? t("project.archived") : t("project.unarchived"));
    } catch (e) {
      showError(e);
    }
  };

  const togglePreview = () => {
    setPreview((on) => {
      if (!on) setPreviewSource(editor.current?.getText() ?? "");
      return !on;
    });
  };

  useImperativeHandle(ref, () => ({
    openSaveVersion: () => {
      if (!editor.current?.isComposing()) setSaveDialog(true);
    },
    togglePreview,
    compareWithHead: () => {
      if (head > 0) setOverlay({ kind: "diff", from: head, to: null });
      else toast(t("history.empty.title"));
    },
    focusComment: () => {
      onTab("comments");
      setTimeout(() => document.querySelector<HTMLTextAreaElement>("[data-testid=comment-input]")?.focus(), 0);
    },
    toggleArchive: () => void toggleArchive(),
    focusEditor: () => editor.current?.focus(),
    focusAi: () => {
      stopFocusAi.current();
      // After the tab's panel has rendered.
      setTimeout(() => {
        stopFocusAi.current = focusWhenShown("[data-testid=ai-panel] [data-testid=composer-input]", document.querySelector<HTMLElement>("[data-testid=tab-ai]"));
      }, 0);
    },
    stopAi: () => drafting.stop(),
    compactAi: () => {
      onTab("ai");
      return drafting.compact();
    },
    openOptimize: () => setOptimize({ draft: null }),
    closeOverlay: () => {
      if (review) {
        closeReview();
        return true;
      }
      if (optimize) {
        setOptimize(null);
        return true;
      }
      if (saveDialog) {
        setSaveDialog(false);
        return true;
      }
      if (restoreAsk !== null) {
        setRestoreAsk(null);
        return true;
      }
      if (overlay) {
        setOverlay(null);
        editor.current?.focus();
        return true;
      }
      return false;
    },
    flush,
  }));

  if (loadError) {
    return (
      <main className="center">
        <p className="pad">{t("project.loadFailed")}</p>
      </main>
    );
  }
  if (!project) {
    return (
      <main className="center" aria-busy="true">
        <p className="muted pad">{t("project.opening")}</p>
      </main>
    );
  }

  const saveLabel = {
    saved: t("status.saved"),
    dirty: t("status.dirty"),
    saving: t("status.saving"),
    conflict: cause.kind === "teammate" ? t("status.conflictTeammate") : t("status.conflict"),
    error: t("status.error"),
  }[saveState];

  return (
    <>
      <main className="center" data-testid="project-view" data-project={projectId}>
        <div className="topbar">
          {leading}
          <label className="small muted brand-pick">
            <span>{t("brand.label")}</span>
            <select
              value={project.brandProfileId ?? ""}
              // The closed select is cut to the bar's width; the whole name shows on hover.
              title={brands.find((b) => b.id === project.brandProfileId)?.name}
              onChange={(e) => void setBrand(e.target.value)}
              data-testid="brand-select"
            >
              <option value="">{t("brand.none")}</option>
              {brands.map((b) => (
                <option key={b.id} value={b.id}>
                  {b.name}
                </option>
              ))}
            </select>
          </label>
          {project.archived && <span className="badge">{t("project.archivedBadge")}</span>}
          <button type="button" data-testid="optimize-open" title={`${mod}+Shift+O`} onClick={() => setOptimize({ draft: null })}>
            {t("ai.optimize")} <kbd className="hint-long">{mod}+Shift+O</kbd>
          </button>
          <button type="button" aria-pressed={preview} data-testid="toggle-preview" onClick={togglePreview}>
            {t("preview.toggle")}
          </button>
          <button type="button" className="primary" data-testid="save-version" title={`${mod}+S`} onClick={() => setSaveDialog(true)}>
            {t("version.save")} <kbd className="on-accent">{mod}+S</kbd>
          </button>
        </div>
        <SyncConflictBar projectId={projectId} flush={flush} />
        <div className={`doc ${preview ? "with-preview" : ""}`}>
          <div className="doc-source">
            <TitleField
              value={title}
              label={t("title.label")}
              placeholder={t("title.placeholder")}
              onChange={onTitle}
              onEnter={() => editor.current?.focus()}
              onBlur={onTitleBlur}
            />
            <MarkdownEditor
              ref={keepEditor}
              docKey={projectId}
              initialText={startText ?? project.source}
              ariaLabel={t("editor.label")}
              placeholder={t("editor.placeholder")}
              anchors={anchors}
              onChange={onEditorChange}
              onImageFiles={onImages}
              onSelectionText={setSelectionText}
              focusWhenReady={focusOnOpen}
            />
          </div>
          {preview && (
            <Suspense fallback={<p className="preview muted">{t("preview.loading")}</p>}>
              <Preview client={client} projectId={projectId} source={previewSource} label={t("preview.label")} missingImage={missingImage} />
            </Suspense>
          )}
        </div>
        <footer className="statusbar" data-testid="statusbar">
          <span data-testid="save-state" data-state={saveState} className={`save-${saveState}`}>
            {saveLabel}
          </span>
          <span aria-hidden="true">·</span>
          <span data-testid="head">{head > 0 ? t("project.head", { n: head }) : t("project.head.none")}</span>
          <span aria-hidden="true">·</span>
          <span data-testid="word-count" data-unit={words.unit} title={t(words.unit === "chars" ? "status.chars.help" : "status.words.help")}>
            {t(`status.${words.unit}${words.n === 1 ? ".one" : ""}` as MessageId, { n: words.n.toLocaleString(lang === "zh" ? "zh-CN" : "en") })}
          </span>
          <StatusAi drafting={drafting} />
          {busy && (
            <span className="busy" role="status" data-testid="busy">
              <span className="spinner" aria-hidden="true" /> {busy}
            </span>
          )}
        </footer>
        {overlay?.kind === "diff" && (
          <DiffOverlay
            projectId={projectId}
            from={overlay.from}
            to={overlay.to}
            beforeLoad={flush}
            onChange={(from, to) => setOverlay({ kind: "diff", from, to })}
            onClose={() => setOverlay(null)}
          />
        )}
        {overlay?.kind === "view" && (
          <VersionOverlay
            projectId={projectId}
            number={overlay.n}
            onDiff={() => setOverlay({ kind: "diff", from: overlay.n, to: null })}
            onRestore={() => setRestoreAsk(overlay.n)}
            onClose={() => setOverlay(null)}
          />
        )}
        {optimize && (
          <Suspense fallback={<p className="overlay muted pad">{t("ai.loading")}</p>}>
            <OptimizeDialog
              projectId={projectId}
              platforms={project.platforms}
              draft={optimize.draft}
              flush={flush}
              onSetUpModel={onSetUpModel}
              onDraftsSaved={() => setDraftsKey((k) => k + 1)}
              onApplied={(result) => {
                setDraftsKey((k) => k + 1);
                if (result.results.some((r) => r.version != null)) {
                  void client.call("project.get", { projectId }).then(
                    (p) => replaceProject(p, t("version.saved", { n: p.head })),
                    (e) => showError(e),
                  );
                }
              }}
              onClose={() => {
                setOptimize(null);
                editor.current?.focus();
              }}
            />
          </Suspense>
        )}
        {review && (
          <Suspense fallback={<p className="overlay muted pad">{t("ai.loading")}</p>}>
            <ProposalReview
              key={review}
              proposalId={review}
              store={drafting.getSnapshot().active}
              flush={flush}
              revision={revisionNow}
              currentText={textNow}
              onAccepted={onAccepted}
              onRegenerate={onRegenerate}
              onClose={closeReview}
            />
          </Suspense>
        )}
        {conflict && (
          <ConflictOverlay
            conflict={conflict}
            cause={cause}
            onKeepBoth={() => void keepBoth()}
            onKeepMine={cause.kind === "elsewhere" ? () => void keepMine() : undefined}
            onTakeTheirs={takeTheirs}
          />
        )}
      </main>
      <aside className="panel" aria-label={t("panel.label")}>
        <div className="tabs" role="tablist">
          {TABS.map((k, i) => (
            <button
              key={k}
              type="button"
              role="tab"
              aria-selected={tab === k}
              data-testid={`tab-${k}`}
              title={`${mod}+${i + 1}`}
              onClick={() => onTab(k)}
            >
              {t(`tab.${k}` as MessageId)}
            </button>
          ))}
        </div>
        {tab === "history" && (
          <HistoryPanel projectId={projectId} head={head} onView={onView} onDiff={onDiff} onRestore={setRestoreAsk} />
        )}
        {tab === "comments" && (
          <CommentsPanel
            comments={comments}
            selectionText={selectionText}
            onAdd={addComment}
            onResolve={resolveComment}
            onDelete={deleteComment}
            onJump={jumpToComment}
            lost={lostAnchors}
          />
        )}
        {tab === "drafts" && (
          <Suspense fallback={<p className="panel-body muted pad">{t("preview.loading")}</p>}>
            <DraftsPanel
              key={draftsKey}
              projectId={projectId}
              revision={revision}
              platforms={project.platforms}
              onJump={jumpToSpan}
              onOptimize={(platform) => setOptimize({ draft: platform })}
            />
          </Suspense>
        )}
        {tab === "ai" && (
          <AiPanel
            drafting={drafting}
            selectionText={selectionText}
            getSelection={getSelection}
            onReview={setReview}
            onSetUpModel={() => onSetUpModel?.()}
            workingCopy={workingCopy}
            onOpenSource={onOpenSource}
            projectArchived={project.archived}
            onRestoreProject={() => void toggleArchive()}
          />
        )}
      </aside>
      {saveDialog && <SaveVersionDialog next={head + 1} onSave={(m) => void saveVersion(m)} onClose={() => setSaveDialog(false)} />}
      {restoreAsk !== null && (
        <Dialog title={t("restore.title", { n: restoreAsk })} onClose={() => setRestoreAsk(null)} testId="restore-dialog">
          <p>{t("restore.body")}</p>
          <div className="row end">
            <button type="button" onClick={() => setRestoreAsk(null)}>
              {t("common.cancel")}
            </button>
            <button type="button" className="primary" data-testid="restore-confirm" data-autofocus onClick={() => void restore(restoreAsk)}>
              {t("restore.confirm", { n: restoreAsk })}
            </button>
          </div>
        </Dialog>
      )}
    </>
  );
});

/** An open sync conflict of this project: said above the editor, with the way to resolve it
 * (the sidebar's sync popover lists it too, but the sidebar may be hidden). */
function SyncConflictBar({ projectId, flush }: { projectId: string; flush: () => Promise<void> }) {
  const { t } = useApp();
  const { snap, store } = useSync();
  const [resolving, setResolving] = useState<SyncConflict | null>(null);
  const c = snap.conflicts.find((x) => x.projectId === projectId && x.state === "open");
  return (
    <>
      {c && (
        <div className="warning sync-conflict-bar" role="status" data-testid="sync-conflict-bar">
          <span>{t("sync.conflictBar", { author: c.theirs.author, n: c.theirs.localNumber ?? c.theirs.serverNumber ?? 0 })}</span>
          <button
            type="button"
            data-testid="sync-conflict-bar-resolve"
            onClick={async () => {
              // What is on screen is part of the person's side.
              await flush().catch(() => undefined);
              setResolving(c);
            }}
          >
            {t("sync.conflictBar.resolve")}
          </button>
        </div>
      )}
      {resolving && (
        <ConflictView
          conflict={resolving}
          onClose={() => setResolving(null)}
          onResolved={() => {
            setResolving(null);
            // The editor, History and the list follow the resolution.
            void store.changed();
          }}
        />
      )}
    </>
  );
}

function SaveVersionDialog({ next, onSave, onClose }: { next: number; onSave: (message: string) => void; onClose: () => void }) {
  const { t } = useApp();
  const [message, setMessage] = useState("");
  return (
    <Dialog title={t("version.dialogTitle", { n: next })} onClose={onClose} testId="save-version-dialog">
      <input
        data-testid="version-message"
        placeholder={t("version.messagePlaceholder")}
        aria-label={t("version.messagePlaceholder")}
        value={message}
        onChange={(e) => setMessage(e.target.value)}
        onKeyDown={(e) => {
          if (e.nativeEvent.isComposing || e.keyCode === 229) return;
          // Enter, or Ctrl/Cmd+S a second time, saves.
          const again = (e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "s";
          if (e.key === "Enter" || again) {
            e.preventDefault();
            e.stopPropagation();
            onSave(message);
          }
        }}
      />
      <div className="row end">
        <button type="button" onClick={onClose}>
          {t("common.cancel")}
        </button>
        <button type="button" className="primary" data-testid="version-confirm" onClick={() => onSave(message)}>
          {t("version.save")}
        </button>
      </div>
    </Dialog>
  );
}

