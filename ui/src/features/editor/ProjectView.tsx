// One open project: title, editor (+ preview), status bar, right panel, overlays. The
// project's state (saving, kept text, conflicts, following sync) is a ProjectSession
// (session.ts); this component renders it and holds only what is on screen.
import { forwardRef, useCallback, useEffect, useImperativeHandle, useRef, useState } from "react";
import type { Accepted, Platform, Project, ProposalView } from "../../shared/api/generated";
import { useApp } from "../../shared/context";
import { locateAnchor } from "../../shared/lib/anchors";
import { focusWhenShown } from "../../shared/lib/focus";
import type { Selection } from "../drafting";
import type { EditorHandle } from "./MarkdownEditor";
import { DocumentPane } from "./DocumentPane";
import { CenterLayers, type Overlay } from "./CenterLayers";
import { RestoreDialog, SaveVersionDialog, StatusBar, SyncConflictBar, TopBar } from "./parts";
import { useDrafting, useProjectSession } from "./useProjectSession";
import { useComments } from "./useComments";

import type { PanelTab } from "./tabs";
import type { ProjectViewHandle, ProjectViewProps } from "./screen";
import { SidePanel } from "./SidePanel";

export type { PanelTab };

export type { ProjectViewHandle, ProjectViewProps, Reveal } from "./screen";

export const ProjectView = forwardRef<ProjectViewHandle, ProjectViewProps>(function ProjectView(
  { projectId, reveal, tab, onTab, brands, onProjectChanged, leading, onSetUpModel, onOpenSource, onOpenMemory },
  ref,
) {
  const { client, t, toast } = useApp();
  const { session, s } = useProjectSession(projectId, onProjectChanged);
  const { project } = s;
  /** The one-click optimize dialog: open, for the whole article or one draft. */
  const [optimize, setOptimize] = useState<{ draft: Platform | null } | null>(null);
  /** Bumped after an optimization wrote drafts, so the Drafts tab reads them again. */
  const [draftsKey, setDraftsKey] = useState(0);
  const [preview, setPreview] = useState(false);
  const [overlay, setOverlay] = useState<Overlay>(null);
  const [saveDialog, setSaveDialog] = useState(false);
  const [restoreAsk, setRestoreAsk] = useState<number | null>(null);
  const [selectionText, setSelectionText] = useState("");
  /** The proposal under review in the centre. */
  const [review, setReview] = useState<string | null>(null);
  const drafting = useDrafting(client, projectId, session, s.revision);
  // Keeps the last handle: on unmount React detaches refs before effect cleanups run,
  // and the final save still needs the editor's text.
  const editor = useRef<EditorHandle | null>(null);
  const keepEditor = useCallback(
    (h: EditorHandle | null) => {
      if (h) editor.current = h;
      session.attachEditor(h);
    },
    [session],
  );
  // An opened project is ready to write in: the cursor goes into its text, unless the
  // person has moved on to a dialog or a field meanwhile.
  const focusOnOpen = useCallback(() => {
    const active = document.activeElement;
    if (!(active instanceof HTMLElement) || active === document.body) return true;
    return !active.closest("[role=dialog], [role=alertdialog]") && !active.matches("input, textarea, select, [contenteditable=true]");
  }, []);
  const stopFocusAi = useRef<() => void>(() => undefined);
  useEffect(() => () => stopFocusAi.current(), []);

  const flush = useCallback(() => session.flush(), [session]);
  const [currentEditor] = useState(() => () => editor.current);
  const comments = useComments({ projectId, project, saved: s.saved, editor: currentEditor, flush });
  const missingImage = useCallback((alt: string) => t("preview.imageMissing", { alt }), [t]);

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

  // Stable callbacks, so the memoised panels and editor skip re-rendering while the person types.
  const onView = useCallback((n: number) => setOverlay({ kind: "view", n }), []);
  const onDiff = useCallback((from: number, to: number | null) => setOverlay({ kind: "diff", from, to }), []);
  const onEditorChange = useCallback(() => session.edited(), [session]);
  const onImages = useCallback((files: File[], pos: number) => void session.addImages(files, pos), [session]);
  const getSelection = useCallback((): Selection | null => {
    const ed = editor.current;
    if (!ed) return null;
    const { from, to } = ed.getSelection();
    return to > from ? { from, to, text: ed.getText().slice(from, to) } : null;
  }, []);
  const revisionNow = useCallback(() => session.revisionNow, [session]);
  const textNow = useCallback(() => session.textNow(), [session]);
  const closeReview = useCallback(() => {
    setReview(null);
    editor.current?.focus();
  }, []);
  // The project changed underneath the editor (an accepted proposal, a restored
  // checkpoint, applied staged changes): the editor shows it, the saver builds on it.
  const replaceProject = useCallback((p: Project, message: string) => session.replace(p, message), [session]);
  const [workingCopy] = useState(() => ({ flush, revision: revisionNow, replace: replaceProject }));

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

  const togglePreview = () => {
    session.setPreview(!preview);
    setPreview(!preview);
  };

  useImperativeHandle(ref, () => ({
    openSaveVersion: () => {
      if (!editor.current?.isComposing()) setSaveDialog(true);
    },
    togglePreview,
    compareWithHead: () => {
      if (s.head > 0) setOverlay({ kind: "diff", from: s.head, to: null });
      else toast(t("history.empty.title"));
    },
    focusComment: () => {
      onTab("comments");
      setTimeout(() => document.querySelector<HTMLTextAreaElement>("[data-testid=comment-input]")?.focus(), 0);
    },
    toggleArchive: () => void session.toggleArchive(),
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
      const close = [
        [review, closeReview],
        [optimize, () => setOptimize(null)],
        [saveDialog, () => setSaveDialog(false)],
        [restoreAsk !== null, () => setRestoreAsk(null)],
        [overlay, () => (setOverlay(null), editor.current?.focus())],
      ] as const;
      const open = close.find(([on]) => on);
      open?.[1]();
      return !!open;
    },
    flush,
  }));

  if (s.loadError) {
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

  return (
    <>
      <main className="center" data-testid="project-view" data-project={projectId}>
        <TopBar
          leading={leading}
          project={project}
          brands={brands}
          preview={preview}
          onBrand={(id) => void session.setBrand(id)}
          onOptimize={() => setOptimize({ draft: null })}
          onTogglePreview={togglePreview}
          onSaveVersion={() => setSaveDialog(true)}
        />
        <SyncConflictBar projectId={projectId} flush={flush} />
        <DocumentPane
          projectId={projectId}
          project={project}
          s={s}
          session={session}
          preview={preview}
          editorRef={keepEditor}
          anchors={comments.anchors}
          onEditorChange={onEditorChange}
          onImages={onImages}
          onSelectionText={setSelectionText}
          focusWhenReady={focusOnOpen}
          focusEditor={() => editor.current?.focus()}
          missingImage={missingImage}
        />
        <StatusBar saveState={s.saveState} cause={s.cause} head={s.head} words={s.words} busy={s.busy} drafting={drafting} />
        <CenterLayers
          projectId={projectId}
          project={project}
          session={session}
          flush={flush}
          conflict={s.conflict}
          cause={s.cause}
          overlay={overlay}
          setOverlay={setOverlay}
          optimize={optimize}
          setOptimize={setOptimize}
          review={review}
          drafting={drafting}
          revisionNow={revisionNow}
          textNow={textNow}
          onAccepted={onAccepted}
          onRegenerate={onRegenerate}
          closeReview={closeReview}
          onSetUpModel={onSetUpModel}
          onDraftsChanged={() => setDraftsKey((k) => k + 1)}
          focusEditor={() => editor.current?.focus()}
          onRestoreAsk={setRestoreAsk}
          onOpenSource={onOpenSource}
          onOpenMemory={onOpenMemory}
        />
      </main>
      <SidePanel
        projectId={projectId}
        project={project}
        tab={tab}
        onTab={onTab}
        head={s.head}
        revision={s.revision}
        draftsKey={draftsKey}
        onView={onView}
        onDiff={onDiff}
        onRestore={setRestoreAsk}
        comments={comments}
        selectionText={selectionText}
        onJump={jumpToSpan}
        onOptimize={(platform: Platform) => setOptimize({ draft: platform })}
        drafting={drafting}
        getSelection={getSelection}
        onReview={setReview}
        onSetUpModel={() => onSetUpModel?.()}
        workingCopy={workingCopy}
        onOpenSource={onOpenSource}
        onOpenMemory={onOpenMemory}
        onRestoreProject={() => void session.toggleArchive()}
      />
      {saveDialog && (
        <SaveVersionDialog
          next={s.head + 1}
          onSave={(m) => {
            setSaveDialog(false);
            void session.saveVersion(m);
          }}
          onClose={() => setSaveDialog(false)}
        />
      )}
      {restoreAsk !== null && (
        <RestoreDialog
          n={restoreAsk}
          onClose={() => setRestoreAsk(null)}
          onConfirm={() => {
            setRestoreAsk(null);
            void session.restore(restoreAsk).then((ok) => ok && setOverlay(null));
          }}
        />
      )}
    </>
  );
});
