// Silent autosave of a project's working copy through `project.update` with its base
// revision. Never overwrites newer content: a CONFLICT stops autosaving and hands both
// sides to the UI, which lets the person choose.

import { type ApiClient, type ClientError, toClientError } from "../../shared/api/client";
import type { Project, ProjectUpdateParams } from "../../shared/api/generated";

export interface Draft {
  title: string;
  source: string;
}
export interface Theirs extends Draft {
  revision: number;
}
export interface Conflict {
  mine: Draft;
  theirs: Theirs;
  /** What both sides started from: the text as this editor last stored or loaded it. */
  base: Draft;
}
/** What `arrived` did with a newer working copy. */
export type Arrival = "same" | "adopted" | "conflict";
export type SaveState = "saved" | "dirty" | "saving" | "conflict" | "error";

export interface SaverOptions {
  client: ApiClient;
  project: Pick<Project, "id" | "title" | "source" | "revision">;
  delayMs?: number;
  /** Reads the editor's current source; called only when a save starts (see `touch`). */
  pull?: () => string;
  /** True while an input method composition is open; saving waits for it to end. */
  isComposing?: () => boolean;
  onState?: (state: SaveState) => void;
  onSaved?: (project: Project) => void;
  onConflict?: (conflict: Conflict) => void;
  onError?: (error: ClientError) => void;
}

function theirsFrom(error: ClientError): Theirs | null {
  const d = error.details as { current?: Partial<Theirs> } | undefined;
  const c = d?.current;
  if (!c || typeof c.revision !== "number") return null;
  return { title: String(c.title ?? ""), source: String(c.source ?? ""), revision: c.revision };
}

export class Saver {
  revision: number;
  state: SaveState = "saved";
  conflict: Conflict | null = null;
  private saved: Draft;
  private latest: Draft;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private inflight: Promise<void> | null = null;
  private retryMs = 0;
  /** The editor changed since `pull` was last called. */
  private stale = false;
  private disposed = false;
  private readonly delayMs: number;

  constructor(private readonly opts: SaverOptions) {
    this.revision = opts.project.revision;
    this.saved = { title: opts.project.title, source: opts.project.source };
    this.latest = { ...this.saved };
    this.delayMs = opts.delayMs ?? 800;
  }

  /** The project this saver stores. */
  get projectId(): string {
    return this.opts.project.id;
  }

  get draft(): Draft {
    return this.latest;
  }

  get dirty(): boolean {
    // An empty title is not storable, so it never counts as unsaved.
    const titleDirty = this.latest.title !== this.saved.title && this.latest.title.trim() !== "";
    return titleDirty || this.latest.source !== this.saved.source;
  }

  /** Records a local edit and schedules a save. */
  change(patch: Partial<Draft>) {
    this.latest = { ...this.latest, ...patch };
    if (this.state === "conflict") return; // waits for the person's choice
    if (this.dirty) {
      this.setState(this.inflight ? "saving" : "dirty");
      if (!this.timer) this.schedule(this.delayMs);
    } else if (!this.inflight && !this.stale) {
      this.setState("saved");
    }
  }

  /**
   * The editor changed; its text is read (through `pull`) only when the save runs, so a
   * keystroke costs nothing here. Saves at most once per delay while typing goes on.
   */
  touch() {
    this.stale = true;
    if (this.state === "conflict") return;
    if (this.state === "saved") this.setState("dirty");
    if (!this.timer) this.schedule(this.delayMs);
  }

  /** Pulls the editor's text if it changed since the last pull. */
  private sync() {
    if (!this.stale || !this.opts.pull) return;
    this.stale = false;
    this.latest = { ...this.latest, source: this.opts.pull() };
  }

  /** Saves now (unless in conflict) and resolves when everything is stored. */
  async flush(): Promise<void> {
    this.clearTimer();
    for (let i = 0; i < 5; i++) {
      if (this.inflight) await this.inflight;
      this.sync();
      if (this.state === "conflict") throw conflictError();
      if (!this.dirty) return;
      await this.save();
      if (this.state === "error") throw new Error("save failed");
    }
  }

  /** Keep mine: write my text over theirs, based on their revision. */
  async keepMine(): Promise<void> {
    if (!this.conflict) return;
    this.sync();
    await this.resolveWith({ ...this.latest });
  }

  /** The person's text as it is now (the editor's, read at once). */
  current(): Draft {
    this.sync();
    return { ...this.latest };
  }

  /** Ends a conflict with `result` (a merge of both sides, or mine), saved on their revision. */
  async resolveWith(result: Draft): Promise<void> {
    const c = this.conflict;
    if (!c) return;
    this.conflict = null;
    this.revision = c.theirs.revision;
    this.saved = { title: c.theirs.title, source: c.theirs.source };
    this.latest = { ...result };
    this.stale = false;
    this.setState("dirty");
    await this.save();
  }

  /** A save is on its way. */
  get busy(): boolean {
    return this.inflight !== null;
  }

  /** Resolves once no save is on its way. */
  async whenIdle(): Promise<void> {
    while (this.inflight) await this.inflight;
  }

  /**
   * The working copy moved on elsewhere (a teammate's version synced in, a resolution,
   * another window): `theirs` is it now. Without unsaved text here it becomes the
   * editor's ("adopted"); with unsaved text nothing is dropped: both sides wait in a
   * conflict for the person ("conflict"). The same content is only a newer revision.
   * Call it while no save is on its way.
   */
  arrived(newer: Theirs): Arrival {
    const theirs: Theirs = { title: newer.title, source: newer.source, revision: newer.revision };
    if (this.state === "conflict" && this.conflict) {
      // Already choosing: a newer text is the other side now.
      if (theirs.revision > this.conflict.theirs.revision) {
        this.conflict = { ...this.conflict, theirs };
        this.opts.onConflict?.(this.conflict);
      }
      return "conflict";
    }
    if (theirs.revision <= this.revision) return "same";
    if (theirs.title === this.saved.title && theirs.source === this.saved.source) {
      this.revision = theirs.revision;
      return "same";
    }
    this.sync();
    if (!this.dirty) {
      this.reset(theirs);
      return "adopted";
    }
    this.clearTimer();
    this.conflict = { mine: { ...this.latest }, theirs, base: { ...this.saved } };
    this.setState("conflict");
    this.opts.onConflict?.(this.conflict);
    return "conflict";
  }

  /**
   * Text kept from when the editor last went away unsaved (see kept.ts), on the stored
   * text as loaded. On the same base it is an unsaved edit, saved as usual; on a base
   * that moved on it is the person's side of a conflict with the stored text.
   */
  restoreKept(mine: Draft, base: Draft | null) {
    this.latest = { ...mine };
    this.stale = false;
    if (!base) {
      if (this.dirty) {
        this.setState("dirty");
        this.schedule(0);
      }
      return;
    }
    this.clearTimer();
    this.conflict = { mine: { ...mine }, theirs: { ...this.saved, revision: this.revision }, base: { ...base } };
    this.setState("conflict");
    this.opts.onConflict?.(this.conflict);
  }

  /** The stored text this editor's edits are written on. */
  get base(): Draft {
    return this.conflict ? { ...this.conflict.base } : { ...this.saved };
  }

  /** Take theirs: the working copy becomes theirs; returns it for the editor. */
  takeTheirs(): Draft {
    const c = this.conflict;
    if (!c) return this.latest;
    this.conflict = null;
    this.reset({ ...c.theirs });
    return { title: c.theirs.title, source: c.theirs.source };
  }

  /** The project changed by another path (restore, reload): adopt it as saved. */
  /** The title as last stored. */
  get savedTitle(): string {
    return this.saved.title;
  }

  reset(p: Pick<Project, "title" | "source" | "revision">) {
    this.clearTimer();
    this.revision = p.revision;
    this.saved = { title: p.title, source: p.source };
    this.latest = { ...this.saved };
    this.stale = false;
    this.conflict = null;
    this.setState("saved");
  }

  /** Adopts a new revision after a non-content update (e.g. brand profile). */
  adoptRevision(p: Pick<Project, "revision">) {
    this.revision = Math.max(this.revision, p.revision);
  }

  dispose() {
    this.disposed = true;
    this.clearTimer();
  }

  private schedule(ms: number) {
    this.clearTimer();
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.opts.isComposing?.()) {
        this.schedule(this.delayMs); // never save in the middle of a composition
        return;
      }
      void this.save();
    }, ms);
  }

  private clearTimer() {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private save(): Promise<void> {
    if (this.inflight) return this.inflight;
    if (this.state !== "conflict") this.sync();
    if (!this.dirty || this.state === "conflict") return Promise.resolve();
    const sent = { ...this.latest };
    const params: ProjectUpdateParams = { projectId: this.opts.project.id, baseRevision: this.revision };
    if (sent.source !== this.saved.source) params.source = sent.source;
    if (sent.title !== this.saved.title && sent.title.trim() !== "") params.title = sent.title;
    this.setState("saving");
    const run = async () => {
      try {
        const p = await this.opts.client.call("project.update", params);
        if (this.disposed) return;
        this.revision = p.revision;
        // What was sent is now stored (comparing with what was sent, not with the server's
        // echo, so a normalising server cannot cause an endless save loop).
        this.saved = {
          title: params.title !== undefined ? sent.title : this.saved.title,
          source: params.source !== undefined ? sent.source : this.saved.source,
        };
        this.retryMs = 0;
        this.opts.onSaved?.(p);
        if (this.dirty || this.stale) {
          this.setState("dirty");
          this.schedule(this.delayMs);
        } else this.setState("saved");
      } catch (e) {
        if (this.disposed) return;
        const err = toClientError(e);
        const theirs = err.code === "CONFLICT" ? theirsFrom(err) : null;
        if (theirs) {
          this.sync();
          this.conflict = { mine: { ...this.latest }, theirs, base: { ...this.saved } };
          this.setState("conflict");
          this.opts.onConflict?.(this.conflict);
        } else {
          this.setState("error");
          this.opts.onError?.(err);
          this.retryMs = Math.min(this.retryMs ? this.retryMs * 2 : 2000, 30_000);
          this.schedule(this.retryMs);
        }
      }
    };
    this.inflight = run().finally(() => {
      this.inflight = null;
    });
    return this.inflight;
  }

  private setState(s: SaveState) {
    if (this.state === s) return;
    this.state = s;
    this.opts.onState?.(s);
  }
}

function conflictError(): ClientError {
  return { code: "CONFLICT", message: "The project changed elsewhere.", hints: [{ id: "reload_and_merge", message: "" }] };
}
