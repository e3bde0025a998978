// The project screen's state outside React: one open project's text as the editor shows
// it, saving (through the Saver), the text kept when the editor last went away (kept.ts),
// conflicts with a newer working copy and where it came from, and following what sync
// (or another window) wrote. ProjectView renders a snapshot of it; it knows the editor
// only through `EditorPort`, and the person only through `SessionHost`, so its tests run
// it against a fake transport and a plain-object editor.

import { type ApiClient, toClientError } from "../../shared/api/client";
import type { LocalChange, Project } from "../../shared/api/generated";
import type { MessageId } from "../../shared/i18n";
import { altFromName, blobToBase64, imageMarkdown } from "../../shared/lib/files";
import { createTextCounter, type TextCount } from "../../shared/lib/wordcount";
import { syncStoreFor } from "../sync";
import { dropKept, judgeKept, keepUnsaved, readKept } from "./kept";
import { merge3 } from "./merge";
import type { ConflictCause } from "./Overlays";
import { type Conflict, type Draft, type SaveState, Saver } from "./saver";

/** What the session needs of the editor. */
export interface EditorPort {
  getText(): string;
  isComposing(): boolean;
  setText(text: string): void;
  select(from: number, to: number): void;
  insert(text: string, at?: number): void;
  focus(): void;
}

/** What the session tells the person and the rest of the window. */
export interface SessionHost {
  t: (id: MessageId, vars?: Record<string, string | number>) => string;
  toast(message: string): void;
  showError(error: unknown): void;
  /** Title, head, archived or updatedAt changed (the sidebar follows). */
  projectChanged(p: Project): void;
}

export interface ProjectSnapshot {
  project: Project | null;
  loadError: unknown;
  title: string;
  saveState: SaveState;
  head: number;
  /** The saved working-copy revision (drafts recompile when it changes). */
  revision: number;
  words: TextCount;
  /** The text the preview shows (read from the editor while the preview is on). */
  previewSource: string;
  /** The source as last autosaved (comments' anchors are checked once per save). */
  saved: { revision: number; source: string } | null;
  conflict: Conflict | null;
  /** Where the other side of the conflict came from, for its wording. */
  cause: ConflictCause;
  /** The editor's first text when it is not the stored one (kept text restored). */
  startText: string | null;
  /** A long action under way, said in the status bar. */
  busy: string | null;
}

export interface SessionOptions {
  /** The autosave delay (the Saver's default when left out). */
  saveDelayMs?: number;
  /** How long after a keystroke the word count and preview read the editor. */
  readDelayMs?: number;
  now?: () => number;
}

const INITIAL: ProjectSnapshot = {
  project: null,
  loadError: null,
  title: "",
  saveState: "saved",
  head: 0,
  revision: 0,
  words: { n: 0, unit: "words" },
  previewSource: "",
  saved: null,
  conflict: null,
  cause: { kind: "elsewhere" },
  startText: null,
  busy: null,
};

export class ProjectSession {
  private snap: ProjectSnapshot = INITIAL;
  private readonly listeners = new Set<() => void>();
  private editor: EditorPort | null = null;
  private saver: Saver | null = null;
  /** The conflict opened by kept text when the project opened. */
  private keptConflict: Conflict | null = null;
  private readTimer: ReturnType<typeof setTimeout> | null = null;
  private reported = { title: "", at: 0 };
  private following = false;
  /** A change was pushed while `follow` read: it reads again once done. */
  private followAgain = false;
  private preview = false;
  /** Bumped by each `open`, so a load that an unmount or a newer open overtook is dropped. */
  private generation = 0;
  private readonly countWords = createTextCounter();
  private readonly now: () => number;

  constructor(
    private readonly client: ApiClient,
    readonly projectId: string,
    private readonly host: SessionHost,
    private readonly opts: SessionOptions = {},
  ) {
    this.now = opts.now ?? (() => Date.now());
  }

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };
  getSnapshot = (): ProjectSnapshot => this.snap;

  private set(patch: Partial<ProjectSnapshot>) {
    // Nothing new, no render (as React's own state setter skips an equal value).
    if ((Object.keys(patch) as (keyof ProjectSnapshot)[]).every((k) => Object.is(this.snap[k], patch[k]))) return;
    this.snap = { ...this.snap, ...patch };
    for (const l of this.listeners) l();
  }

  /** The editor, once mounted. The last one is kept: the final save on closing still reads it. */
  attachEditor(editor: EditorPort | null) {
    if (editor) this.editor = editor;
  }

  /** The saved revision as the saver knows it now (proposals are checked against it). */
  get revisionNow(): number {
    return this.saver?.revision ?? 0;
  }

  /** The text the editor shows now. */
  textNow(): string {
    return this.editor?.getText() ?? "";
  }

  /** Loads the project; text kept when the editor last went away comes back (see kept.ts). */
  async open(): Promise<void> {
    const generation = ++this.generation;
    let p: Project;
    try {
      p = await this.client.call("project.get", { projectId: this.projectId });
    } catch (e) {
      if (generation === this.generation) this.set({ loadError: e });
      return;
    }
    if (generation !== this.generation) return;
    this.saver?.dispose();
    const saver = new Saver({
      client: this.client,
      project: p,
      delayMs: this.opts.saveDelayMs,
      pull: () => this.editor?.getText() ?? p.source,
      isComposing: () => this.editor?.isComposing() ?? false,
      onState: (saveState) => this.set({ saveState }),
      onSaved: (np) => {
        // Text kept from an earlier closing is stored now (or resolved).
        dropKept(np.id);
        this.set({ revision: np.revision, saved: { revision: np.revision, source: np.source } });
        // Tell the sidebar when the title changed, otherwise at most every 5 s.
        const now = this.now();
        if (np.title !== this.reported.title || now - this.reported.at > 5000) {
          this.reported = { title: np.title, at: now };
          this.host.projectChanged(np);
        }
      },
      // The overlay opens once it can say where the other side came from.
      onConflict: (c) => void this.conflictFound(c),
      onError: (e) => this.host.showError(e),
    });
    this.saver = saver;
    // Text the editor could not store when it last went away comes back: as the unsaved
    // edit it was, or as the person's side of a conflict with newer text.
    const kept = judgeKept(readKept(this.projectId), p);
    const shown = kept.kind === "none" ? { title: p.title, source: p.source } : kept.mine;
    if (kept.kind === "none") dropKept(this.projectId);
    this.reported = { title: p.title, at: this.now() };
    this.set({
      project: p,
      startText: kept.kind === "none" ? null : shown.source,
      title: shown.title,
      head: p.head,
      revision: p.revision,
      words: this.countWords(shown.source),
      previewSource: shown.source,
      saveState: "saved",
    });
    if (kept.kind === "edit") saver.restoreKept(kept.mine, null);
    if (kept.kind === "conflict") {
      saver.restoreKept(kept.mine, kept.base);
      this.keptConflict = saver.conflict;
    }
  }

  /** Reads the editor's text into the word count and the preview (the saver pulls its own). */
  readEditor() {
    if (this.readTimer) clearTimeout(this.readTimer);
    this.readTimer = null;
    const text = this.editor?.getText();
    if (text === undefined) return;
    this.set(this.preview ? { words: this.countWords(text), previewSource: text } : { words: this.countWords(text) });
  }

  /** A keystroke in the editor. */
  edited() {
    this.saver?.touch();
    if (!this.readTimer) this.readTimer = setTimeout(() => this.readEditor(), this.opts.readDelayMs ?? 500);
  }

  async flush(): Promise<void> {
    this.readEditor();
    await this.saver?.flush();
  }

  setPreview(on: boolean) {
    this.preview = on;
    if (on) this.set({ previewSource: this.editor?.getText() ?? this.snap.previewSource });
  }

  /**
   * The editor goes away (the project closes, the page hides, the window closes): text
   * not stored yet is first kept in this browser profile (a synchronous write the closing
   * page still completes), then the last save is tried. A save that fails, waits in a
   * conflict or is cut off loses nothing.
   */
  async leave(): Promise<void> {
    this.readEditor();
    const s = this.saver;
    if (!s) return;
    const mine = s.current(); // reads the editor, so `dirty` knows the last keystroke
    if (s.dirty || s.state === "conflict") keepUnsaved(s.projectId, { mine, base: s.base, keptAt: new Date(this.now()).toISOString() });
    await s.flush();
  }

  setTitle(value: string) {
    this.set({ title: value });
    this.saver?.change({ title: value });
  }

  /** A project needs a title: one left empty goes back to the stored one, saying so. */
  titleBlurred() {
    if (this.snap.title.trim() !== "" || !this.saver) return;
    const kept = this.saver.savedTitle;
    this.setTitle(kept);
    this.host.toast(this.host.t("title.keptNotEmpty", { title: kept }));
  }

  /** Shows `p` as the working copy (after an accepted proposal, a restore, applied changes). */
  replace(p: Project, message: string | null) {
    this.editor?.setText(p.source);
    this.saver?.reset(p);
    this.set({ project: p, title: p.title, head: p.head, revision: p.revision, words: this.countWords(p.source), previewSource: p.source });
    this.host.projectChanged(p);
    if (message !== null) this.host.toast(message);
  }

  /** Reads the project again and shows it (the AI panel or optimize wrote to it). */
  async reload(message: (p: Project) => string): Promise<void> {
    try {
      const p = await this.client.call("project.get", { projectId: this.projectId });
      this.replace(p, message(p));
    } catch (e) {
      this.host.showError(e);
    }
  }

  async saveVersion(message: string): Promise<void> {
    const { t } = this.host;
    this.set({ busy: t("version.saving") });
    try {
      await this.flush();
      const m = message.trim();
      const v = await this.client.call("version.create", m ? { projectId: this.projectId, message: m } : { projectId: this.projectId });
      this.set({ head: v.number });
      // The new version's delivery shows in the sync state at once.
      void syncStoreFor(this.client).refresh();
      const p = await this.client.call("project.get", { projectId: this.projectId });
      this.host.projectChanged(p);
      this.host.toast(t("version.saved", { n: v.number }));
    } catch (e) {
      const err = toClientError(e);
      if (err.code !== "CONFLICT") this.host.showError(err);
    } finally {
      this.set({ busy: null });
      this.editor?.focus();
    }
  }

  /** Restores version `n`; true when it was restored. */
  async restore(n: number): Promise<boolean> {
    const { t } = this.host;
    this.set({ busy: t("restore.busy", { n }) });
    try {
      await this.flush();
      const r = await this.client.call("version.restore", { projectId: this.projectId, number: n });
      void syncStoreFor(this.client).refresh();
      this.replace(
        r.project,
        r.autosnapshot ? t("restore.doneSnapshot", { n, m: r.restored.number, s: r.autosnapshot.number }) : t("restore.done", { n, m: r.restored.number }),
      );
      return true;
    } catch (e) {
      const err = toClientError(e);
      if (err.code !== "CONFLICT") this.host.showError(err);
      return false;
    } finally {
      this.set({ busy: null });
    }
  }

  /** The person's text wins (only against their own text from another window). */
  async keepMine(): Promise<void> {
    this.set({ conflict: null });
    try {
      await this.saver?.keepMine();
      this.host.toast(this.host.t("conflict.keptMine"));
    } catch (e) {
      this.host.showError(e);
    }
  }

  takeTheirs() {
    const d = this.saver?.takeTheirs();
    this.set({ conflict: null });
    if (!d) return;
    this.editor?.setText(d.source);
    this.set({ title: d.title, revision: this.saver?.revision ?? 0, words: this.countWords(d.source), previewSource: d.source });
    this.host.toast(this.host.t("conflict.tookTheirs"));
  }

  /**
   * Both sides kept: a three-way merge of the person's text and the newer one, from the
   * text both started from. Where both changed the same lines, both texts stay for the
   * person to tidy up (the first such place is selected). Saved on the newer revision.
   */
  async keepBoth(): Promise<void> {
    const s = this.saver;
    const c = s?.conflict;
    if (!s || !c) return;
    const m = merge3(c.base, s.current(), c.theirs);
    this.set({ conflict: null });
    this.editor?.setText(m.source);
    this.set({ title: m.title, words: this.countWords(m.source), previewSource: m.source });
    const { t } = this.host;
    try {
      await s.resolveWith({ title: m.title, source: m.source });
      this.host.toast(m.overlaps === 0 ? t("conflict.merged") : t("conflict.keptBoth", { n: m.overlaps }));
      const first = m.spans[0];
      if (first) this.editor?.select(first.from, first.to);
      else this.editor?.focus();
    } catch (e) {
      this.host.showError(e);
    }
  }

  /** Stores the project's brand profile (after what is pending). */
  async setBrand(id: string): Promise<void> {
    try {
      await this.flush();
      const p = await this.client.call("project.update", { projectId: this.projectId, baseRevision: this.saver?.revision, brandProfileId: id });
      this.saver?.adoptRevision(p);
      this.set({ project: p, revision: p.revision });
      this.host.projectChanged(p);
    } catch (e) {
      this.host.showError(e);
    }
  }

  async toggleArchive(): Promise<void> {
    const project = this.snap.project;
    if (!project) return;
    try {
      await this.flush().catch(() => undefined);
      const p = await this.client.call("project.archive", { projectId: this.projectId, archived: !project.archived });
      this.set({ project: p });
      this.host.projectChanged(p);
      this.host.toast(p.archived ? this.host.t("project.archived") : this.host.t("project.unarchived"));
    } catch (e) {
      this.host.showError(e);
    }
  }

  /** Runs `work` with `label` said in the status bar. */
  async busyWith(label: string, work: () => Promise<void>): Promise<void> {
    this.set({ busy: label });
    try {
      await work();
    } finally {
      this.set({ busy: null });
    }
  }

  /** Adds pasted or dropped images to the project's media and their Markdown at `pos`. */
  async addImages(files: File[], pos: number): Promise<void> {
    const { t } = this.host;
    try {
      await this.busyWith(t("image.adding"), async () => {
        let at = pos;
        for (const f of files) {
          const ext = (f.type.split("/")[1] ?? "png").replace("jpeg", "jpg");
          const fileName = f.name || `pasted-${this.now()}.${ext}`;
          const alt = altFromName(fileName);
          const asset = await this.client.call("media.addBytes", { projectId: this.projectId, fileName, dataBase64: await blobToBase64(f), altText: alt });
          const text = `${imageMarkdown(alt, asset.fileName)}\n`;
          this.editor?.insert(text, at);
          at += text.length;
        }
        this.host.toast(t("image.added"));
      });
    } catch (e) {
      this.host.showError(e);
    }
  }

  /**
   * Where a newer working copy came from, from the head version it equals: a teammate's
   * version synced in, a resolution of a sync conflict, or (neither) another window of
   * this data folder. `sameText: false` asks only whose the head is.
   */
  private async describeCause(p: Pick<Project, "head" | "title" | "source">, sameText = true): Promise<ConflictCause> {
    if (p.head > 0) {
      try {
        const v = await this.client.call("version.get", { projectId: this.projectId, number: p.head });
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
  }

  /** A save met a newer working copy, or one arrived under unsaved text: both sides wait in the overlay. */
  private async conflictFound(c: Conflict): Promise<void> {
    const show = (why: ConflictCause) => {
      const s = this.saver;
      if (s?.conflict?.theirs.revision !== c.theirs.revision) return; // a newer one follows
      this.set({ cause: this.keptConflict && s.conflict === this.keptConflict ? { kind: "kept" } : why, conflict: s.conflict });
    };
    try {
      const p = await this.client.call("project.get", { projectId: this.projectId });
      if (p.head !== this.snap.head) this.set({ head: p.head });
      show(p.revision === c.theirs.revision ? await this.describeCause(p) : { kind: "elsewhere" });
    } catch {
      show({ kind: "elsewhere" });
    }
  }

  /**
   * Sync (or another window) moved the working copy on: the editor follows it when it
   * holds no unsaved text; otherwise both sides wait in the conflict overlay. The head,
   * History and the sidebar follow in both cases.
   */
  async follow(): Promise<void> {
    const s = this.saver;
    if (!s) return;
    if (this.following) {
      // A newer change than the one being read may have come: read once more after it.
      this.followAgain = true;
      return;
    }
    this.following = true;
    this.followAgain = false;
    const { t } = this.host;
    try {
      await s.whenIdle();
      const p = await this.client.call("project.get", { projectId: this.projectId });
      // A save that started meanwhile moves the revision itself: check at the next poll.
      if (this.saver !== s || s.busy) return;
      const known = this.snap.head;
      if (p.revision <= s.revision) {
        if (p.head !== known) {
          this.set({ head: p.head });
          this.host.projectChanged(p);
          if (p.head > known) {
            // A teammate's version under unsynced work opens a sync conflict (its bar
            // shows above the editor); the working copy stays the person's.
            const why = await this.describeCause(p, false);
            if (why.kind === "teammate" || (why.kind === "resolution" && why.author)) this.host.toast(t("sync.arrived.conflict", { author: why.author ?? "", n: why.n }));
          }
        }
        return;
      }
      if (this.editor?.isComposing()) return; // never in the middle of a composition
      const why = await this.describeCause(p);
      if (this.saver !== s || s.busy || this.editor?.isComposing()) return;
      const outcome = s.arrived(p);
      this.set({ head: p.head, project: p });
      this.host.projectChanged(p);
      if (outcome === "adopted") {
        this.editor?.setText(p.source);
        this.set({ title: p.title, revision: p.revision, words: this.countWords(p.source), previewSource: p.source });
        this.host.toast(
          why.kind === "teammate"
            ? t("sync.arrived.pulled", { author: why.author, n: why.n })
            : why.kind === "resolution"
              ? why.author
                ? t("sync.arrived.pulledResolution", { author: why.author, n: why.n })
                : t("sync.arrived.resolution", { n: why.n })
              : t("sync.arrived.elsewhere"),
        );
      } else if (outcome === "same") {
        this.set({ revision: p.revision });
      }
    } catch {
      // A failed read is retried at the next push.
    } finally {
      this.following = false;
      if (this.followAgain) void this.follow();
    }
  }

  /**
   * Follows the pushed sync status: whenever sync changed projects (its change marker
   * moved), and whenever a project was saved in this data folder (the local-change
   * marker moved: another window, the API, or this editor itself). Returns the way to
   * stop.
   */
  followSync(): () => void {
    const store = syncStoreFor(this.client);
    let { changes, local } = store.getSnapshot();
    return store.onPoll((snap) => {
      const synced = snap.changes !== changes;
      const saved = snap.local !== local;
      changes = snap.changes;
      local = snap.local;
      if (synced) void this.follow();
      else if (saved) void this.followLocal(snap.status?.lastLocalChange ?? null);
    });
  }

  /**
   * A project was saved in this data folder; the push names the last project record
   * written and its revision. This editor's own save (this project at the revision it
   * just stored) reads nothing, so typing costs no read per autosave. Anything else is
   * read and followed (`follow`): another window's newer text is adopted at once when
   * nothing is unsaved here; with unsaved text it is not, and both sides wait in the
   * conflict view, where "keep mine" wins only when chosen.
   */
  private async followLocal(change: LocalChange | null): Promise<void> {
    const s = this.saver;
    if (!s) return;
    // A save of this editor may be on its way: compare with what it stored.
    await s.whenIdle();
    if (this.saver !== s) return;
    if (change && change.projectId === this.projectId && change.revision <= s.revision) return;
    await this.follow();
  }

  /** The view went away: a load still on its way is dropped, the read timer stops. The
   * saver is left to finish what `leave` handed it. */
  close() {
    this.generation++;
    if (this.readTimer) clearTimeout(this.readTimer);
    this.readTimer = null;
  }
}

export type { Draft };
