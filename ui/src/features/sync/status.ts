// The one source of the sync state for the whole window: the sidebar's indicator,
// Settings → Workspace and the open project read the same snapshot. It polls
// `sync.status` while anything listens (faster while versions are on their way), and
// every action that changes the state (connect, disconnect, pause, resume, a saved
// version, a resolution, "sync now") hands its result here or asks for a refresh.
//
// `changes` moves when sync changed projects: the core's change marker
// (`SyncStatus.changes`, moved by a pulled version, a conflict opened, moved on or
// resolved, in any window of the data folder) moved, the connection came or went, the
// open conflicts changed, or someone says so (`changed`). The project list and the
// open project read themselves again then, and only then: a poll that finds the
// marker where it was costs one small status read.
//
// When the window regains focus (the person is back), it syncs now, quietly — the path
// of the sidebar's "Sync now" — at most every FOCUS_SYNC_MIN_MS, and only while
// connected and not paused: colleagues' versions are there at once instead of at the
// next background pull (every 30 s). Nothing of it runs while the window sits idle.
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
}

export const POLL_MS = 5000;
/** While versions are on their way, so "synced" shows soon after they arrive. */
export const BUSY_POLL_MS = 1500;
/** While connected, the open project also reads itself this often: another window of
 * the data folder saves its working copy without moving the change marker. */
export const OTHER_WINDOW_MS = 30_000;
/** A window that regains focus syncs now at most this often. */
export const FOCUS_SYNC_MIN_MS = 10_000;

/** What "sync now" did. */
export interface SyncNowResult {
  pulled: number;
  pushed: number;
  offline: boolean;
}

export class SyncStore {
  private snap: SyncSnapshot = { status: null, conflicts: [], epoch: 0, changes: 0 };
  private readonly listeners = new Set<() => void>();
  private readonly pollers = new Set<(s: SyncSnapshot) => void>();
  private timer: ReturnType<typeof setTimeout> | null = null;
  private inflight: Promise<void> | null = null;
  private queued: Promise<void> | null = null;
  private forced = false;
  private focusSyncAt = Number.NEGATIVE_INFINITY;
  private focusHooked = false;

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

  /** Called after every poll or refresh, changed or not (the open project checks itself then). */
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
  async apply(status: SyncStatus): Promise<void> {
    const conflicts = status.conflicts > 0 ? await this.conflicts().catch(() => this.snap.conflicts) : [];
    this.publish(status, conflicts);
    this.schedule();
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
      // The status is a hint, not an action: a failed read tries again at the next poll.
    } finally {
      this.schedule();
    }
  }

  private publish(status: SyncStatus, conflicts: SyncConflictView[]) {
    const prev = this.snap;
    const changed =
      this.forced ||
      (prev.status !== null &&
        (prev.status.changes !== status.changes ||
          prev.status.connected !== status.connected ||
          prev.status.conflicts !== status.conflicts ||
          prev.conflicts.map((c) => c.id + c.updatedAt).join() !== conflicts.map((c) => c.id + c.updatedAt).join()));
    const moved = changed || (prev.status !== null && prev.status.lastContactAt !== status.lastContactAt);
    this.forced = false;
    const next: SyncSnapshot = { status, conflicts, epoch: prev.epoch + (moved ? 1 : 0), changes: prev.changes + (changed ? 1 : 0) };
    if (moved || JSON.stringify(prev.status) !== JSON.stringify(status) || JSON.stringify(prev.conflicts) !== JSON.stringify(conflicts)) {
      this.snap = next;
      for (const l of [...this.listeners]) l();
    }
    for (const p of [...this.pollers]) p(this.snap);
  }

  private busy(): boolean {
    const s = this.snap.status;
    return Boolean(s && s.connected && !s.paused && s.pending > 0);
  }

  private start() {
    if (!this.focusHooked && typeof window !== "undefined") {
      window.addEventListener("focus", this.onFocus);
      this.focusHooked = true;
    }
    if (this.timer || this.inflight) return;
    void this.refresh();
  }

  private schedule() {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.listeners.size === 0 && this.pollers.size === 0) return;
    this.timer = setTimeout(
      () => {
        this.timer = null;
        void this.refresh();
      },
      this.busy() ? BUSY_POLL_MS : POLL_MS,
    );
  }

  private stopIfIdle() {
    if (this.listeners.size > 0 || this.pollers.size > 0) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
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
