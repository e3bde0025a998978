// The one source of the sync state for the whole window: the sidebar's indicator,
// Settings → Workspace and the open project read the same snapshot. While anything
// listens it holds one `sync.watch` subscription open: the engine pushes the status at
// once and again each time it changes (a commit of what it reads, a cycle that went
// offline, came back or reached the server); nothing here reads it on a timer. Every
// action that changes the state (connect, disconnect, pause, resume, a resolution,
// "sync now") also hands its result here, so it shows before the push arrives.
//
// Answers (a read, an action's result) and pushed statuses can reach the window out of
// order. Each status carries `asOf`, the engine's count of status changes when its read
// began; one older than the status shown is not shown over it.
//
// A lost subscription (the engine restarted, `serve` stopped, the network between a
// browser and `serve` dropped) opens again after a backoff of RECONNECT_MIN_MS doubling
// to RECONNECT_MAX_MS: that timer is the one place the engine cannot push (nothing
// reaches a window whose stream is gone). The snapshot keeps what it last showed
// meanwhile; the first event of the new subscription is the status then.
//
// `changes` moves when sync changed projects: the core's change marker
// (`SyncStatus.changes`, moved by a pulled version, a conflict opened, moved on or
// resolved, in any window of the data folder) moved, the connection came or went, the
// open conflicts changed, or someone says so (`changed`). The project list and the
// open project read themselves again then, and only then.
//
// When the window regains focus (the person is back), it syncs now, quietly — the path
// of the sidebar's "Sync now" — at most every FOCUS_SYNC_MIN_MS, and only while
// connected and not paused: colleagues' versions are there at once instead of at the
// next background pull (every 30 s). Nothing of it runs while the window sits idle.
//
// `local` moves when the engine's local-change marker (`SyncStatus.localChanges`) moved:
// a project or version of this data folder was saved, by this window, another window
// or the API. It reaches every window as a push (the watch sends the status when the
// marker moved), so the project list and the open project read themselves again then,
// with no timer.
//
// `epoch` moves with `changes` and also whenever a cycle reached the server again
// (what waits for the server to answer — a list that failed to load — tries then).

import { useSyncExternalStore } from "react";
import type { ApiClient } from "../../shared/api/client";
import type { SyncConflictView, SyncConnectParams, SyncStatus } from "../../shared/api/generated";
import { useApp } from "../../shared/context";
import { describeSyncProblem, type Lang, type MessageId } from "../../shared/i18n";

export interface SyncSnapshot {
  status: SyncStatus | null;
  /** Open conflicts (fetched only when the status counts some). */
  conflicts: SyncConflictView[];
  epoch: number;
  /** Moves only when sync changed projects (see the top of this file). */
  changes: number;
  /** Moves when a project or version was saved in this data folder, here or elsewhere. */
  local: number;
}

/** A lost subscription opens again after this long, doubling with each failure… */
export const RECONNECT_MIN_MS = 1000;
/** …up to this long. */
export const RECONNECT_MAX_MS = 30_000;
/** A window that regains focus syncs now at most this often. */
export const FOCUS_SYNC_MIN_MS = 10_000;

/** What "sync now" did. */
export interface SyncNowResult {
  pulled: number;
  pushed: number;
  offline: boolean;
}

export class SyncStore {
  private snap: SyncSnapshot = { status: null, conflicts: [], epoch: 0, changes: 0, local: 0 };
  private readonly listeners = new Set<() => void>();
  private readonly pollers = new Set<(s: SyncSnapshot) => void>();
  /** The open subscription (aborted when nothing listens any more). */
  private watching: AbortController | null = null;
  /** The reconnect after a lost subscription. */
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private failures = 0;
  /** Pushed statuses are shown in the order they came, each after its conflicts. */
  private pushes: Promise<void> = Promise.resolve();
  private inflight: Promise<void> | null = null;
  private queued: Promise<void> | null = null;
  private forced = false;
  private focusSyncAt = Number.NEGATIVE_INFINITY;
  private focusHooked = false;
  /** The `asOf` of the status shown: one with a lower count is older (see `publish`). */
  private asOf = Number.NEGATIVE_INFINITY;

  constructor(private readonly client: ApiClient) {}

  /** "Sync now": pull first (as the background cycle does), then push what waits; the
   * state shows at once. Errors are the caller's (the sidebar says them). */
  async syncNow(): Promise<SyncNowResult> {
    const pulled = await this.client.call("sync.pull", {});
    const pushed = pulled.status.offline ? pulled : await this.client.call("sync.push", {});
    await this.apply(pushed.status);
    return { pulled: pulled.pulled, pushed: pushed === pulled ? 0 : pushed.pushed, offline: pushed.status.offline };
  }

  /** A failed version goes again (with the failed ones of its project before it), or all
   * of them; the state shows at once. */
  async retry(jobId?: string): Promise<void> {
    await this.apply(await this.client.call("sync.retry", jobId ? { jobId } : {}));
  }

  /** Pauses or resumes sync; the state shows at once. */
  async setPaused(paused: boolean): Promise<void> {
    await this.apply(await this.client.call(paused ? "sync.pause" : "sync.resume", {}));
  }

  /** Connects to a workspace server; the state shows at once, and everyone reads again. */
  async connect(params: SyncConnectParams): Promise<void> {
    await this.apply(await this.client.call("sync.connect", params));
    void this.changed();
  }

  /** Disconnects (the token leaves the keychain; unsynced versions stay, paused):
   * answers how many versions were kept. */
  async disconnect(): Promise<number> {
    const done = await this.client.call("sync.disconnect", {});
    await this.apply(done.status);
    return done.keptJobs;
  }

  /** The window regained focus: sync now, quietly, when connected and not paused (at most
   * every FOCUS_SYNC_MIN_MS). */
  async focused(): Promise<void> {
    const s = this.snap.status;
    if (!s?.connected || s.paused) return;
    const now = Date.now();
    if (now - this.focusSyncAt < FOCUS_SYNC_MIN_MS) return;
    this.focusSyncAt = now;
    try {
      await this.syncNow();
    } catch {
      // A hint, not an action: the background cycle tries again.
    }
  }

  private readonly onFocus = () => void this.focused();

  getSnapshot = (): SyncSnapshot => this.snap;

  /** Called when the snapshot changed. */
  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    this.start();
    return () => {
      this.listeners.delete(listener);
      this.stopIfIdle();
    };
  };

  /** Called after every pushed status or read, changed or not (the open project checks itself then). */
  onPoll(poller: (s: SyncSnapshot) => void): () => void {
    this.pollers.add(poller);
    this.start();
    return () => {
      this.pollers.delete(poller);
      this.stopIfIdle();
    };
  }

  /** Reads the status now. Calls made while one runs share the next read. */
  refresh(): Promise<void> {
    if (!this.inflight) {
      this.inflight = this.read().finally(() => {
        this.inflight = null;
      });
      return this.inflight;
    }
    if (!this.queued) {
      this.queued = this.inflight.then(() => {
        this.queued = null;
        return this.refresh();
      });
    }
    return this.queued;
  }

  /** An action returned the status (connect, pause, resume, disconnect): show it at once. */
  async apply(status: SyncStatus, fresh = false): Promise<void> {
    const conflicts = status.conflicts > 0 ? await this.conflicts().catch(() => this.snap.conflicts) : [];
    this.publish(status, conflicts, fresh);
  }

  /** Sync may have changed projects (a resolution, "sync now"): everyone reads again. */
  changed(): Promise<void> {
    this.forced = true;
    return this.refresh();
  }

  private conflicts(): Promise<SyncConflictView[]> {
    return this.client.call("sync.conflicts", {}).then((r) => r.conflicts);
  }

  private async read(): Promise<void> {
    try {
      const status = await this.client.call("sync.status", {});
      const conflicts = status.conflicts > 0 ? await this.conflicts() : [];
      this.publish(status, conflicts);
    } catch {
      // The status is a hint, not an action: the subscription brings the next one.
    }
  }

  /** True while a subscription is open or about to open again. */
  get subscribed(): boolean {
    return this.watching !== null;
  }

  /** Opens the subscription; when it ends while anything still listens, opens it again
   * after the backoff. */
  private watch() {
    const controller = new AbortController();
    this.watching = controller;
    let first = true;
    const onStatus = (status: SyncStatus) => {
      if (this.watching !== controller) return;
      this.failures = 0;
      // A new subscription's first status is shown whatever its count: the engine
      // behind it may have restarted and counts from zero again.
      const fresh = first;
      first = false;
      this.pushes = this.pushes.then(() => this.apply(status, fresh)).catch(() => undefined);
    };
    this.client.stream("sync.watch", {}, onStatus, { signal: controller.signal }).then(
      () => this.lost(controller),
      () => this.lost(controller),
    );
  }

  /** The subscription ended (the engine closed it, or the transport failed): unless
   * it was let go on purpose, it opens again after the backoff. The snapshot stays. */
  private lost(controller: AbortController) {
    if (this.watching !== controller || controller.signal.aborted) return;
    const delay = Math.min(RECONNECT_MAX_MS, RECONNECT_MIN_MS * 2 ** this.failures);
    this.failures += 1;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (this.watching === controller) this.watch();
    }, delay);
  }

  /** Shows `status` unless it is older than the one shown: answers (a read, an
   * action's result) and pushed statuses reach the window out of order, and a read
   * begun before a push that arrives after it would otherwise show what the push
   * already moved past — until the next change, which may be long (a version that
   * stays "pending" after it reached the server). `fresh` shows it regardless. */
  private publish(status: SyncStatus, conflicts: SyncConflictView[], fresh = false) {
    if (!fresh && status.asOf < this.asOf) {
      for (const p of [...this.pollers]) p(this.snap);
      return;
    }
    this.asOf = status.asOf;
    const prev = this.snap;
    const changed =
      this.forced ||
      (prev.status !== null &&
        (prev.status.changes !== status.changes ||
          prev.status.connected !== status.connected ||
          prev.status.conflicts !== status.conflicts ||
          prev.conflicts.map((c) => c.id + c.updatedAt).join() !== conflicts.map((c) => c.id + c.updatedAt).join()));
    const moved = changed || (prev.status !== null && prev.status.lastContactAt !== status.lastContactAt);
    const saved = prev.status !== null && prev.status.localChanges !== status.localChanges;
    this.forced = false;
    const next: SyncSnapshot = { status, conflicts, epoch: prev.epoch + (moved ? 1 : 0), changes: prev.changes + (changed ? 1 : 0), local: prev.local + (saved ? 1 : 0) };
    if (moved || saved || JSON.stringify(prev.status) !== JSON.stringify(status) || JSON.stringify(prev.conflicts) !== JSON.stringify(conflicts)) {
      this.snap = next;
      for (const l of [...this.listeners]) l();
    }
    for (const p of [...this.pollers]) p(this.snap);
  }

  private start() {
    if (!this.focusHooked && typeof window !== "undefined") {
      window.addEventListener("focus", this.onFocus);
      this.focusHooked = true;
    }
    if (!this.watching) this.watch();
  }

  private stopIfIdle() {
    if (this.listeners.size > 0 || this.pollers.size > 0) return;
    this.watching?.abort();
    this.watching = null;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.failures = 0;
    if (this.focusHooked) {
      window.removeEventListener("focus", this.onFocus);
      this.focusHooked = false;
    }
  }
}

const stores = new WeakMap<ApiClient, SyncStore>();

/** The window's sync store for this client. */
export function syncStoreFor(client: ApiClient): SyncStore {
  let s = stores.get(client);
  if (!s) {
    s = new SyncStore(client);
    stores.set(client, s);
  }
  return s;
}

/** The shared sync snapshot, re-rendering when it changes. */
export function useSync(): { snap: SyncSnapshot; store: SyncStore } {
  const { client } = useApp();
  const store = syncStoreFor(client);
  const snap = useSyncExternalStore(store.subscribe, store.getSnapshot);
  return { snap, store };
}

type Translate = ReturnType<typeof useApp>["t"];

/** The state's words for the sidebar (and Settings). */
export function syncLabel(t: Translate, status: SyncStatus | null): string {
  const state = status?.state ?? "notConnected";
  if (state === "pending") return t("sync.state.pending", { n: status?.pending ?? 0 });
  if (state === "conflict") {
    const n = status?.conflicts ?? 0;
    return t("sync.state.conflict", { n });
  }
  // Disconnected with versions still owed to the workspace: they are not forgotten.
  if (state === "notConnected" && (status?.pending ?? 0) + (status?.failed ?? 0) > 0) {
    return t("sync.state.notConnectedKept", { n: (status?.pending ?? 0) + (status?.failed ?? 0) });
  }
  return t(`sync.state.${state}` as MessageId);
}

/** The last failure in the person's language; the English detail only where it adds something. */
export function syncProblem(lang: Lang, status: SyncStatus | null): { title: string; detail: string | null; code?: string } | null {
  if (!status?.lastError) return null;
  const p = describeSyncProblem(lang, status.lastErrorCode, status.lastError);
  // "Could not be reached" says all there is: the transport's words repeat it.
  return { ...p, detail: status.lastErrorCode === "UNREACHABLE" ? null : p.detail, code: status.lastErrorCode };
}
