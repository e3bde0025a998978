// The drafting state of one open project, outside React: the sessions, the one being
// shown, its timeline as the engine folds it (`session.timeline`; see ./timeline.ts),
// its proposals, and the message streaming in.
//
// Components read it through `useSyncExternalStore`. The streamed text has its own
// subscription, notified at most once per animation frame, so while an answer streams
// only the streaming message re-renders; the timeline re-renders when an item changes.
// The store lives as long as the project view, so a turn keeps streaming while another
// right-hand tab is open.
//
// Items reach it from the call this window makes (`session.submit`, `resolveApproval`,
// `answerQuestion`, `compact`), which asks for the timeline's patches instead of the
// log's events (one message per event), and, when a turn runs that this window did not
// start (after a reload, or in another window), from `session.watch`: the engine pushes
// the items the log gains as they are logged, until the turn ends. A turn or compaction
// that starts elsewhere while the session is idle here is pushed too: the sync status
// every window holds open carries a session-activity marker (`SyncStatus.sessionActivity`),
// and when it moves the store reads what changed and follows what now runs
// (`noticeActivity`). Nothing reads the log on a timer. The latest page comes first;
// earlier pages are read as the person scrolls up.

import { type ApiClient, type ClientError, type TimelinePatch, toClientError } from "../../shared/api/client";
import type { AllowScope, Checkpoint, CheckpointRestoreResult, CompactThreshold, Constraint, SessionCompactResult, StagingApplied, LlmProfile, Mode, Proposal, ProposalView, Session, SessionContextView, SessionView, StagingView, TimelineState } from "../../shared/api/generated";
import { lastSession, saveLastSession } from "../../shared/lib/prefs";
import { Latest } from "../../shared/lib/latest";
import { emptyTimeline, type Item, madeAt, type TimelineView } from "./timeline";
import type { Selection } from "./scope";

type Listener = () => void;

/** Items per page of the timeline (the latest first, earlier ones as the person scrolls up). */
export const PAGE = 200;
/** Tools whose successful run changes the project's working copy or settings. */
const PROJECT_WRITES = ["apply_proposal", "update_project_metadata"];
/** The waits between tries to follow a turn while the backend cannot be reached (the
 * last one repeats): the one timer left, since nothing reaches a window whose stream is
 * gone. A followed turn is pushed (`session.watch`), and so is a turn that starts
 * elsewhere (`noticeActivity`); nothing is polled. Tests shorten them. */
export const followTiming = { retryMs: [500, 1000, 2000, 4000, 8000, 15000] };

/** The app's own backend is gone (not a server the core talks to). */
export function backendGone(error: ClientError | null): boolean {
  return error?.code === "OFFLINE" && error.hints.some((h) => h.id === "offline.check_running");
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Streaming {
  /** The key the answer's item has (and keeps when the answer is logged). */
  key: string;
  text: string;
  reasoning: string;
}

export interface SessionSnapshot {
  session: Session;
  timeline: TimelineView;
  loaded: boolean;
  /** Calls this window has open that drive a turn. */
  driving: number;
  /** A turn runs that this window follows (the engine pushes what its log gains). */
  following: boolean;
  /** Following, but the backend does not answer: it is tried again with backoff. */
  reconnecting: boolean;
  error: ClientError | null;
  proposals: ProposalView[];
  /** The session's cost so far, from its usage records; null when no call was priced. */
  cost: number | null;
  /** Rejection reasons the model keeps to; null when the backend has no constraints. */
  constraints: Constraint[] | null;
  /** Oldest first; null when the backend has no checkpoints. */
  checkpoints: Checkpoint[] | null;
  /** Changes the session staged and has not applied; null when none (or no staging). */
  staging: StagingView | null;
  /** Counts what the person sent here (a task, a decision, an answer, a restore): the
   * timeline scrolls to its end on each, wherever it was scrolled. */
  reveal: number;
  /** The context budget as the engine counts it (the reply's reserve, the fixed part);
   * null until read, or when the backend cannot say. */
  budget: SessionContextView | null;
}

export function isRunning(s: SessionSnapshot): boolean {
  return s.timeline.turnOpen || s.timeline.compacting !== null || s.driving > 0 || s.following;
}

/** An answer the model is still sending (the list shows it once it is logged). */
function isStreaming(item: Item): boolean {
  return item.kind === "assistant" && item.streaming;
}

/** A step of a tool that writes to the project, done. */
function isProjectWrite(item: Item): boolean {
  return item.kind === "tool" && item.status === "success" && PROJECT_WRITES.includes(item.name);
}

const schedule: (f: () => void) => void =
  typeof requestAnimationFrame === "function" ? (f) => void requestAnimationFrame(f) : (f) => void setTimeout(f, 16);

export class SessionStore {
  private snapshot: SessionSnapshot;
  private streaming: Streaming | null = null;
  private listeners = new Set<Listener>();
  private streamListeners = new Set<Listener>();
  private streamQueued = false;
  private catching: Promise<void> | null = null;
  private paging: Promise<void> | null = null;
  private disposed = false;
  private proposalTimer: ReturnType<typeof setTimeout> | null = null;
  // Reads of the same list may overlap and be answered out of order: the newest wins.
  private readonly proposalReads = new Latest();
  private readonly extrasReads = new Latest();
  private readonly budgetReads = new Latest();
  /** Lets go of the `session.watch` a followed turn holds open. */
  private followAbort: AbortController | null = null;

  constructor(
    private readonly client: ApiClient,
    session: Session,
    private readonly projectId: string,
    /** The API methods the backend offers (checkpoints, constraints and staging are newer). */
    private readonly methods: ReadonlySet<string> = new Set(),
    /** Told when a step of a live turn wrote to the project (an approved apply_proposal). */
    private readonly onProjectWrite: () => void = () => undefined,
  ) {
    this.snapshot = {
      session,
      timeline: emptyTimeline,
      loaded: false,
      driving: 0,
      following: false,
      reconnecting: false,
      error: null,
      proposals: [],
      cost: null,
      constraints: null,
      checkpoints: null,
      staging: null,
      reveal: 0,
      budget: null,
    };
  }

  get id(): string {
    return this.snapshot.session.id;
  }

  subscribe = (l: Listener): (() => void) => {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  };
  getSnapshot = (): SessionSnapshot => this.snapshot;
  subscribeStream = (l: Listener): (() => void) => {
    this.streamListeners.add(l);
    return () => this.streamListeners.delete(l);
  };
  getStreaming = (): Streaming | null => this.streaming;

  private set(change: Partial<SessionSnapshot>) {
    if (this.disposed) return;
    this.snapshot = { ...this.snapshot, ...change };
    for (const l of this.listeners) l();
  }

  private setStreaming(next: Streaming | null) {
    this.streaming = next;
    if (this.streamQueued) return;
    this.streamQueued = true;
    schedule(() => {
      this.streamQueued = false;
      for (const l of this.streamListeners) l();
    });
  }

  dispose() {
    this.disposed = true;
    this.followAbort?.abort();
    if (this.proposalTimer) clearTimeout(this.proposalTimer);
    this.listeners.clear();
    this.streamListeners.clear();
  }

  /** Reads the whole log and, when a turn runs, follows it. */
  async load(): Promise<void> {
    try {
      const view = await this.client.call("session.get", { sessionId: this.id });
      this.set({ session: view.session });
      await this.catchUp();
      this.set({ loaded: true });
      void this.refreshProposals();
      void this.refreshCost();
      void this.refreshExtras();
      if (view.status === "running") void this.follow();
    } catch (e) {
      this.set({ loaded: true, error: toClientError(e) });
    }
  }

  /** A turn or compaction started somewhere while this was following or driving: looked
   * at again once that is over (it may be one this window does not know of). */
  private recheck = false;

  /**
   * The engine pushed that a turn or a compaction started in some session (the sync
   * status's session-activity marker moved): if nothing runs here, reads what this
   * session's log gained and follows a turn or compaction that now runs. A window that
   * follows or drives already hears of its session's log; it looks again when done.
   */
  async noticeActivity(): Promise<void> {
    const s = this.snapshot;
    if (this.disposed || !s.loaded || s.timeline.archived) return;
    if (isRunning(s)) {
      this.recheck = true;
      return;
    }
    try {
      // A read already under way may have begun before the start: read after it.
      if (this.catching) await this.catching;
      await this.catchUp();
    } catch {
      // The next push, or the person's next action, reads again.
      return;
    }
    const now = this.snapshot.timeline;
    if (now.turnOpen || now.compacting) void this.follow();
  }

  /** What started while this was busy is looked at now. */
  private recheckActivity() {
    if (!this.recheck || this.disposed) return;
    this.recheck = false;
    void this.noticeActivity();
  }

  /** Takes `items` (put by key: replaced, or added after the held ones) and the state
   * after them; `removed` items are dropped. Items of a page not read yet stay unread. */
  private merge(items: readonly Item[], state: TimelineState | null, removed: readonly string[] = []) {
    const before = this.snapshot.timeline;
    let held = before.items;
    if (removed.length > 0) held = held.filter((i) => !removed.includes(i.key));
    const stream = this.streaming;
    let projectWrote = false;
    for (const item of items) {
      // An answer still streaming is drawn from its deltas (by the window that drives the
      // turn) until it is logged; a window that follows the turn shows it once logged.
      if (isStreaming(item)) continue;
      const at = held.findIndex((i) => i.key === item.key);
      if (at >= 0) {
        const old = held[at];
        if (isProjectWrite(item) && !isProjectWrite(old)) projectWrote = true;
        held = [...held.slice(0, at), item, ...held.slice(at + 1)];
      } else if (before.earlier > 0 && held.length > 0 && madeAt(item.key) < madeAt(held[0].key)) {
        // In a page before the one held: read with that page.
      } else {
        if (isProjectWrite(item)) projectWrote = true;
        held = [...held, item];
      }
      if (stream && item.key === stream.key) this.setStreaming(null);
    }
    let next: TimelineView = held === before.items ? before : { ...before, items: held };
    if (state && state.lastSequence >= before.lastSequence) next = { ...next, ...state, items: held, earlier: before.earlier };
    if (next === before) return;
    if (state && this.streaming && state.streamingKey !== this.streaming.key) this.setStreaming(null);
    this.set({ timeline: next });
    // A write tool that ran changed the project under the editor (not when reading the
    // timeline at load: the editor loaded the project as it is now).
    if (this.snapshot.loaded && projectWrote) this.onProjectWrite();
    const turnEnded = before.turnOpen && !next.turnOpen;
    if (next.proposalIds.length !== before.proposalIds.length || turnEnded) this.scheduleProposals();
    if (turnEnded) {
      void this.refreshCost();
      void this.refreshExtras();
    }
  }

  /** Applies one patch of the stream this window drives, in the order sent. */
  applyPatch(patch: TimelinePatch) {
    const append = patch.append;
    if (append) {
      const s = this.streaming?.key === append.key ? this.streaming : null;
      if (append.reasoning) {
        this.setStreaming({ key: append.key, text: s?.text ?? "", reasoning: (s?.reasoning ?? "") + append.text });
      } else {
        // Each model call streams under its own key, from its first delta on this stream.
        this.setStreaming({ key: append.key, text: (s?.text ?? "") + append.text, reasoning: s?.reasoning ?? "" });
      }
    }
    if (patch.items.length > 0 || patch.removed.length > 0 || patch.state) this.merge(patch.items, patch.state, patch.removed);
  }

  /** Reads the timeline: the latest page at first, then the items changed since the
   * last sequence held. */
  catchUp(): Promise<void> {
    this.catching ??= (async () => {
      try {
        const first = !this.snapshot.loaded && this.snapshot.timeline.lastSequence === 0 && this.snapshot.timeline.items.length === 0;
        if (first) {
          const r = await this.client.call("session.timeline", { sessionId: this.id, limit: PAGE });
          if (this.disposed) return;
          const { since: _since, items, earlier, ...state } = r;
          const now = this.snapshot.timeline;
          // A turn this window started right after opening the session may have streamed
          // patches while the page was read: the page is older than them, so it is merged
          // (the newer state stays) rather than put in their place.
          if (now.lastSequence > 0 || now.items.length > 0) {
            const known = new Set(now.items.map((i) => i.key));
            this.set({ timeline: { ...now, earlier } });
            this.merge(state.lastSequence >= now.lastSequence ? items : items.filter((i) => !known.has(i.key)), state);
            return;
          }
          this.set({ timeline: { ...state, items: items.filter((i) => !isStreaming(i)), earlier } });
          return;
        }
        const since = this.snapshot.timeline.lastSequence;
        const r = await this.client.call("session.timeline", { sessionId: this.id, since });
        if (this.disposed) return;
        const { since: _since, items, earlier: _earlier, ...state } = r;
        this.merge(items, state);
      } finally {
        this.catching = null;
      }
    })();
    return this.catching;
  }

  /** Reads the page of items before the first one held (the person scrolled up). */
  loadEarlier(): Promise<void> {
    const held = this.snapshot.timeline;
    if (held.earlier === 0 || held.items.length === 0) return Promise.resolve();
    this.paging ??= (async () => {
      try {
        const r = await this.client.call("session.timeline", { sessionId: this.id, before: held.items[0].key, limit: PAGE });
        if (this.disposed) return;
        const now = this.snapshot.timeline;
        const known = new Set(now.items.map((i) => i.key));
        this.set({ timeline: { ...now, items: [...r.items.filter((i) => !known.has(i.key) && !isStreaming(i)), ...now.items], earlier: r.earlier } });
        // Items of that page may have changed since the held state: read what changed.
        if (r.lastSequence > now.lastSequence) await this.catchUp();
      } catch (e) {
        this.set({ error: toClientError(e) });
      } finally {
        this.paging = null;
      }
    })();
    return this.paging;
  }

  /** Follows a turn this window does not drive: reads what changed, then holds a
   * `session.watch` open, through which the engine pushes what the log gains until the
   * turn ends. While the backend cannot be reached it keeps trying, with backoff, and
   * says so; once it answers again the log shows how the turn ended (a restart closes
   * it). */
  async follow(): Promise<void> {
    if (this.snapshot.following || this.disposed) return;
    this.set({ following: true });
    let failures = 0;
    const stopped = () => this.disposed || this.snapshot.driving > 0;
    try {
      while (!stopped()) {
        try {
          await this.catchUp();
          if (!this.snapshot.timeline.turnOpen && !this.snapshot.timeline.compacting) {
            const view = await this.client.call("session.get", { sessionId: this.id });
            if (view.status !== "running") {
              this.reached(failures);
              break;
            }
          }
          failures = this.reached(failures);
          if (stopped()) break;
          const controller = new AbortController();
          this.followAbort = controller;
          await this.client.stream("session.watch", { sessionId: this.id, since: this.snapshot.timeline.lastSequence }, (patch) => this.applyPatch(patch), { signal: controller.signal });
        } catch (e) {
          if (stopped()) break;
          const error = toClientError(e);
          this.set({ error, reconnecting: backendGone(error) });
          if (!backendGone(error) && failures >= followTiming.retryMs.length) break;
          await sleep(followTiming.retryMs[Math.min(failures, followTiming.retryMs.length - 1)]);
          failures++;
        } finally {
          this.followAbort = null;
        }
      }
    } finally {
      this.set({ following: false, reconnecting: false });
      this.recheckActivity();
    }
  }

  /** The backend answered while following: a lost connection is over. */
  private reached(failures: number): number {
    if (failures > 0 || this.snapshot.reconnecting || backendGone(this.snapshot.error)) {
      this.set({ reconnecting: false, ...(backendGone(this.snapshot.error) ? { error: null } : {}) });
    }
    return 0;
  }

  private async drive(run: (onPatch: (p: TimelinePatch) => void) => Promise<{ session: SessionView }>): Promise<boolean> {
    this.set({ driving: this.snapshot.driving + 1, error: null, reveal: this.snapshot.reveal + 1 });
    // This window drives now: its own stream brings the patches.
    this.followAbort?.abort();
    let ok = true;
    try {
      const r = await run((p) => this.applyPatch(p));
      this.set({ session: r.session.session });
    } catch (e) {
      ok = false;
      this.set({ error: toClientError(e) });
    } finally {
      this.set({ driving: this.snapshot.driving - 1 });
      if (this.snapshot.driving === 0) this.setStreaming(null);
    }
    await this.catchUp().catch(() => undefined);
    // The call broke off while a turn ran, or the backend went away: follow the log (once
    // the backend is back, it says how the turn ended).
    if (!ok && (this.snapshot.timeline.turnOpen || backendGone(this.snapshot.error))) void this.follow();
    else if (this.snapshot.driving === 0) this.recheckActivity();
    return ok;
  }

  /** Sends a task; `selection` scopes it to a range of the saved working copy (flush the
   * editor first: the engine checks the range and text against the stored source). */
  submit(text: string, mode?: Mode, selection?: Selection | null): Promise<boolean> {
    const params = { sessionId: this.id, text, ...(mode ? { mode } : {}), ...(selection ? { selection } : {}) };
    return this.drive((onPatch) => this.client.streamTimeline("session.submit", params, onPatch));
  }

  /** Summarises the earlier conversation now (Stop interrupts it): "compacted", "nothing"
   * (only the latest turn is there: nothing older to summarise), "failed" (or stopped; the
   * timeline says which), or null when the call failed (the error is shown). */
  async compact(): Promise<"compacted" | "nothing" | "failed" | null> {
    const before = this.snapshot.timeline.lastSequence;
    let result: SessionCompactResult | null = null;
    const ok = await this.drive(async (onPatch) => {
      result = await this.client.streamTimeline("session.compact", { sessionId: this.id }, onPatch);
      return result;
    });
    const r = result as SessionCompactResult | null;
    void this.refreshBudget();
    if (!ok || !r) return null;
    if (r.compacted) return "compacted";
    return this.snapshot.timeline.lastSequence === before ? "nothing" : "failed";
  }

  /** The context budget and compaction setting; null when the backend cannot say. */
  async readContext(): Promise<SessionContextView | null> {
    if (!this.methods.has("session.context")) return null;
    try {
      return await this.client.call("session.context", { sessionId: this.id });
    } catch {
      return null;
    }
  }

  /** Reads the context budget again (after a turn, a compaction, a new setting). */
  async refreshBudget(): Promise<void> {
    const ticket = this.budgetReads.begin();
    const budget = await this.readContext();
    if (budget && this.budgetReads.accept(ticket)) this.set({ budget });
  }

  /** Sets when the session compacts by itself (`undefined`: as its model's profile says). */
  async setCompaction(threshold: CompactThreshold | undefined): Promise<SessionContextView | null> {
    try {
      const view = await this.client.call("session.setCompaction", { sessionId: this.id, ...(threshold ? { threshold } : {}) });
      this.budgetReads.supersede();
      this.set({ budget: view });
      await this.catchUp();
      return view;
    } catch (e) {
      this.set({ error: toClientError(e) });
      return null;
    }
  }

  /** `always`: with an approval, also store the prompt's "always allow" rule in that scope. */
  resolveApproval(requestId: string, approved: boolean, note?: string, always?: AllowScope): Promise<boolean> {
    const params = { sessionId: this.id, requestId, approved, ...(note?.trim() ? { note: note.trim() } : {}), ...(always && approved ? { always } : {}) };
    return this.drive((onPatch) => this.client.streamTimeline("session.resolveApproval", params, onPatch));
  }

  answer(questionId: string, answer: string): Promise<boolean> {
    return this.drive((onPatch) => this.client.streamTimeline("session.answerQuestion", { sessionId: this.id, questionId, answer }, onPatch));
  }

  async setMode(mode: Mode): Promise<void> {
    try {
      await this.client.call("session.setMode", { sessionId: this.id, mode });
      await this.catchUp();
    } catch (e) {
      this.set({ error: toClientError(e) });
    }
  }

  /** Stops the running turn; true when something was running. */
  async interrupt(): Promise<boolean> {
    try {
      const r = await this.client.call("session.interrupt", { sessionId: this.id });
      return r.interrupted;
    } catch (e) {
      this.set({ error: toClientError(e) });
      return false;
    }
  }

  clearError() {
    this.set({ error: null });
  }

  private scheduleProposals() {
    if (this.proposalTimer) return;
    this.proposalTimer = setTimeout(() => {
      this.proposalTimer = null;
      void this.refreshProposals();
    }, 50);
  }

  async refreshProposals(): Promise<void> {
    const ticket = this.proposalReads.begin();
    try {
      const r = await this.client.call("proposal.list", { projectId: this.projectId, ownerId: this.id });
      if (this.proposalReads.accept(ticket)) this.set({ proposals: r.proposals });
    } catch {
      // The list is shown again on the next turn; a failure here is not the person's to fix.
    }
  }

  /** Replaces one proposal (after an accept, reject or rebase) without a round trip; a
   * proposal just decided or rebased is not stale. */
  putProposal(proposal: Proposal) {
    const view: ProposalView = { ...proposal, stale: false, basedOnStaged: false };
    const list = this.snapshot.proposals.filter((p) => p.id !== proposal.id);
    this.proposalReads.supersede();
    this.set({ proposals: [view, ...list].sort((a, b) => b.createdAt.localeCompare(a.createdAt)) });
    // A rejection with a reason made a constraint; an accept may have emptied the staging.
    void this.refreshExtras();
  }

  /** True when the backend offers `method`. */
  offers(method: string): boolean {
    return this.methods.has(method);
  }

  /** Constraints, checkpoints and staging, as far as the backend offers them. */
  async refreshExtras(): Promise<void> {
    const sessionId = this.id;
    const has = (m: string) => this.methods.has(m);
    const ticket = this.extrasReads.begin();
    try {
      void this.refreshBudget();
      const [constraints, checkpoints, staging] = await Promise.all([
        has("constraint.list") ? this.client.call("constraint.list", { sessionId }).then((r) => r.constraints) : null,
        has("checkpoint.list") ? this.client.call("checkpoint.list", { sessionId }).then((r) => r.checkpoints) : null,
        has("session.staging") ? this.client.call("session.staging", { sessionId }).then((r) => (r.staging ? r : null)) : null,
      ]);
      if (this.extrasReads.accept(ticket)) this.set({ constraints, checkpoints, staging });
    } catch {
      // Shown again after the next turn; nothing here is the person's to fix.
    }
  }

  async removeConstraint(constraintId: string): Promise<void> {
    try {
      await this.client.call("constraint.remove", { sessionId: this.id, constraintId });
      this.extrasReads.supersede();
      this.set({ constraints: (this.snapshot.constraints ?? []).filter((c) => c.id !== constraintId) });
    } catch (e) {
      this.set({ error: toClientError(e) });
    }
  }

  async createCheckpoint(label: string): Promise<void> {
    try {
      const c = await this.client.call("checkpoint.create", { sessionId: this.id, label });
      this.extrasReads.supersede();
      this.set({ checkpoints: [...(this.snapshot.checkpoints ?? []), c] });
    } catch (e) {
      this.set({ error: toClientError(e) });
    }
  }

  /** Restores a checkpoint: the project goes back to it (a new version) and the log says so. */
  async restoreCheckpoint(checkpointId: string): Promise<CheckpointRestoreResult | null> {
    try {
      const r = await this.client.call("checkpoint.restore", { sessionId: this.id, checkpointId });
      this.set({ reveal: this.snapshot.reveal + 1 });
      await this.catchUp();
      void this.refreshProposals();
      return r;
    } catch (e) {
      this.set({ error: toClientError(e) });
      return null;
    }
  }

  async applyStaging(expectedRevision: number): Promise<StagingApplied | null> {
    try {
      const r = await this.client.call("session.applyStaging", { sessionId: this.id, expectedRevision });
      this.extrasReads.supersede();
      this.set({ staging: null });
      void this.refreshProposals();
      return r;
    } catch (e) {
      this.set({ error: toClientError(e) });
      return null;
    }
  }

  async discardStaging(): Promise<void> {
    try {
      await this.client.call("session.discardStaging", { sessionId: this.id });
      this.extrasReads.supersede();
      this.set({ staging: null });
      void this.refreshProposals();
    } catch (e) {
      this.set({ error: toClientError(e) });
    }
  }

  async refreshCost(): Promise<void> {
    try {
      const r = await this.client.call("usage.list", { limit: 1000 });
      let cost: number | null = null;
      for (const rec of r.records) {
        if (rec.sessionId === this.id && rec.cost !== undefined) cost = (cost ?? 0) + rec.cost;
      }
      this.set({ cost });
    } catch {
      this.set({ cost: null });
    }
  }
}

/** A session in the list, with what only its log says. */
export interface SessionInfo {
  status: SessionView["status"];
  lastActivity: string;
}

export interface DraftingSnapshot {
  /** Null until loaded. */
  sessions: Session[] | null;
  info: Record<string, SessionInfo>;
  active: SessionStore | null;
  /** API methods the backend offers (checkpoints and constraints arrive later). */
  methods: ReadonlySet<string>;
  /** Null until loaded; empty means: offer to set a model up. */
  profiles: LlmProfile[] | null;
  error: ClientError | null;
}

/** The drafting sessions of one project. */
export class Drafting {
  private snapshot: DraftingSnapshot = { sessions: null, info: {}, active: null, methods: new Set(), profiles: null, error: null };
  private listeners = new Set<Listener>();
  private disposed = false;

  private onProjectWrite: () => void = () => undefined;

  /** The project view reloads the project when the assistant wrote to it. */
  setProjectWriteHandler(handler: () => void) {
    this.onProjectWrite = handler;
  }

  constructor(
    private readonly client: ApiClient,
    readonly projectId: string,
  ) {}

  subscribe = (l: Listener): (() => void) => {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  };
  getSnapshot = (): DraftingSnapshot => this.snapshot;

  private set(change: Partial<DraftingSnapshot>) {
    if (this.disposed) return;
    this.snapshot = { ...this.snapshot, ...change };
    for (const l of this.listeners) l();
  }

  /** Stops the active session's work (the view closed). `revive` undoes it for a view
   * that mounts again (React's development double-mount). */
  dispose() {
    this.snapshot.active?.dispose();
    this.snapshot = { ...this.snapshot, active: null, sessions: null };
    this.disposed = true;
  }

  revive() {
    this.disposed = false;
  }

  /** The last session-activity marker the engine pushed (null before the first). */
  private activity: number | null = null;

  /** Hands on a pushed sync status's session-activity marker (`SyncStatus.sessionActivity`):
   * when it moved, a turn or compaction started somewhere, and the open session looks
   * whether it is its own (`SessionStore.noticeActivity`). */
  sessionActivity(marker: number) {
    const moved = this.activity !== null && marker !== this.activity;
    this.activity = marker;
    if (moved && !this.disposed) void this.snapshot.active?.noticeActivity();
  }

  /** Loads profiles, methods and sessions, and opens the latest session. */
  async load(): Promise<void> {
    try {
      const [app, profiles, list] = await Promise.all([
        this.client.call("app.info", {}),
        this.client.call("llmProfile.list", {}),
        this.client.call("session.list", { projectId: this.projectId }),
      ]);
      const methods = new Set(app.methods);
      // Choose the session to resume before showing the list, so the panel does not
      // flash the empty state: the one last open here, else the latest activity.
      let resume: Session | undefined = list.sessions.find((s) => s.id === lastSession(this.projectId));
      let info = this.snapshot.info;
      if (!resume && list.sessions.length > 0) {
        info = await this.readInfo(list.sessions);
        resume = [...list.sessions].sort((a, b) => (info[b.id]?.lastActivity ?? b.updatedAt).localeCompare(info[a.id]?.lastActivity ?? a.updatedAt))[0];
      }
      this.set({ methods, profiles: profiles.profiles, sessions: list.sessions, info, error: null });
      if (resume && !this.snapshot.active) this.open(resume);
    } catch (e) {
      this.set({ error: toClientError(e) });
    }
  }

  /** Reads the profiles again whenever a call of this client changes them; returns
   * the unsubscribe. */
  followProfiles(): () => void {
    return this.client.onProfilesChanged(() => void this.reloadProfiles());
  }

  async reloadProfiles(): Promise<void> {
    try {
      const r = await this.client.call("llmProfile.list", {});
      this.set({ profiles: r.profiles });
    } catch (e) {
      this.set({ error: toClientError(e) });
    }
  }

  open(session: Session) {
    if (this.snapshot.active?.id === session.id) return;
    this.snapshot.active?.dispose();
    const store = new SessionStore(this.client, session, this.projectId, this.snapshot.methods, () => this.onProjectWrite());
    saveLastSession(this.projectId, session.id);
    this.set({ active: store });
    void store.load();
  }

  async create(title?: string, mode?: Mode): Promise<SessionStore | null> {
    try {
      const view = await this.client.call("session.create", { projectId: this.projectId, ...(title ? { title } : {}), ...(mode ? { mode } : {}) });
      this.set({ sessions: [view.session, ...(this.snapshot.sessions ?? [])] });
      this.open(view.session);
      return this.snapshot.active;
    } catch (e) {
      this.set({ error: toClientError(e) });
      return null;
    }
  }

  async rename(sessionId: string, title: string): Promise<boolean> {
    try {
      const view = await this.client.call("session.rename", { sessionId, title });
      this.set({ sessions: (this.snapshot.sessions ?? []).map((s) => (s.id === sessionId ? view.session : s)) });
      return true;
    } catch (e) {
      this.set({ error: toClientError(e) });
      return false;
    }
  }

  async archive(sessionId: string): Promise<boolean> {
    try {
      await this.client.call("session.archive", { sessionId });
      const rest = (this.snapshot.sessions ?? []).filter((s) => s.id !== sessionId);
      this.set({ sessions: rest });
      if (this.snapshot.active?.id === sessionId) {
        this.snapshot.active.dispose();
        this.set({ active: null });
        if (rest[0]) this.open(rest[0]);
      }
      return true;
    } catch (e) {
      this.set({ error: toClientError(e) });
      return false;
    }
  }

  /** Brings an archived session back (`session.archive` with `archived: false`): it joins
   * the list again and opens, read again from its log, ready to continue. */
  async unarchive(sessionId: string): Promise<boolean> {
    try {
      const view = await this.client.call("session.archive", { sessionId, archived: false });
      const rest = (this.snapshot.sessions ?? []).filter((s) => s.id !== sessionId);
      const sessions = [...rest, view.session].sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id));
      this.set({ sessions });
      if (this.snapshot.active?.id === sessionId) {
        this.snapshot.active.dispose();
        this.set({ active: null });
      }
      this.open(view.session);
      return true;
    } catch (e) {
      this.set({ error: toClientError(e) });
      return false;
    }
  }

  /** Reads each session's state and last activity for the list (the newest 30). */
  async describeSessions(): Promise<void> {
    const info = await this.readInfo(this.snapshot.sessions ?? []);
    this.set({ info });
  }

  private async readInfo(sessions: readonly Session[]): Promise<Record<string, SessionInfo>> {
    const info: Record<string, SessionInfo> = { ...this.snapshot.info };
    await Promise.all(
      sessions.slice(0, 30).map(async (s) => {
        try {
          const view = await this.client.call("session.get", { sessionId: s.id });
          const last = await this.client.call("session.events", { sessionId: s.id, from: Math.max(1, view.lastSequence), limit: 1 });
          info[s.id] = { status: view.status, lastActivity: last.events[0]?.createdAt ?? s.updatedAt };
        } catch {
          // A session that cannot be read shows without its state.
        }
      }),
    );
    return info;
  }

  clearError() {
    this.set({ error: null });
  }

  /** Compacts the active session now (the palette's action); false when none is open,
   * something runs, or it is archived. */
  compact(): boolean {
    const store = this.snapshot.active;
    if (!store) return false;
    const s = store.getSnapshot();
    if (isRunning(s) || s.timeline.archived) return false;
    void store.compact();
    return true;
  }

  /** Stops the active session's turn; true when one was running here. */
  stop(): boolean {
    const store = this.snapshot.active;
    if (!store || !isRunning(store.getSnapshot())) return false;
    void store.interrupt();
    return true;
  }
}
