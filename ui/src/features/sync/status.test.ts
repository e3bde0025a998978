// The window's sync store listens to the engine's `sync.watch` subscription: each pushed
// status becomes the snapshot without any read of `sync.status`, and a lost
// subscription opens again after a backoff while the snapshot keeps what it showed.
import { afterEach, describe, expect, it, vi } from "vitest";
import { ApiClient } from "../../shared/api/client";
import { apiError, FakeTransport } from "../../shared/api/fake";
import type { SyncStatus } from "../../shared/api/generated";
import { RECONNECT_MAX_MS, RECONNECT_MIN_MS, SyncStore } from "./status";

afterEach(() => {
  vi.useRealTimers();
});

const synced: SyncStatus = {
  state: "synced",
  connected: true,
  paused: false,
  serverUrl: "https://team.example",
  workspaceName: "团队",
  memberName: "bob",
  pending: 0,
  perfPending: 0,
  perfUnavailable: false,
  perfAccountDaysLocal: 0,
  perfConflicts: 0,
  localOnlyProjects: 0,
  localOnlyVersions: 0,
  failed: 0,
  conflicts: 0,
  offline: false,
  changes: 0,
  localChanges: 0,
  sessionActivity: 0,
  jobs: [],
  asOf: 0,
};

/** A `sync.watch` the test drives: each subscription is one entry; `emit` pushes a
 * status on it, `fail` ends it with a transport error. */
function watchable() {
  const subscriptions: { emit: (s: SyncStatus) => void; fail: (e: unknown) => void }[] = [];
  const transport = new FakeTransport().on(
    "sync.watch",
    (_params, emit) =>
      new Promise<SyncStatus>((_resolve, reject) => {
        subscriptions.push({ emit, fail: reject });
      }),
  );
  return { transport, subscriptions, store: new SyncStore(new ApiClient(transport)) };
}

const settle = () => new Promise((r) => setTimeout(r, 0));

describe("the sync store", () => {
  it("shows each pushed status and never reads sync.status", async () => {
    const { transport, subscriptions, store } = watchable();
    const seen: SyncStatus[] = [];
    const stop = store.subscribe(() => seen.push(store.getSnapshot().status as SyncStatus));
    await vi.waitFor(() => expect(subscriptions).toHaveLength(1));
    subscriptions[0].emit(synced);
    await vi.waitFor(() => expect(store.getSnapshot().status?.state).toBe("synced"));
    subscriptions[0].emit({ ...synced, state: "paused", paused: true });
    await vi.waitFor(() => expect(store.getSnapshot().status?.paused).toBe(true));
    subscriptions[0].emit({ ...synced, state: "offline", offline: true });
    await vi.waitFor(() => expect(store.getSnapshot().status?.state).toBe("offline"));
    expect(seen.map((s) => s.state)).toEqual(["synced", "paused", "offline"]);
    expect(transport.callsTo("sync.status")).toEqual([]);
    expect(transport.callsTo("sync.watch")).toHaveLength(1);
    stop();
    expect(store.subscribed).toBe(false);
  });

  it("moves `changes` when the pushed change marker moves, and fetches the open conflicts", async () => {
    const { transport, subscriptions, store } = watchable();
    transport.on("sync.conflicts", () => ({ conflicts: [] }));
    const stop = store.subscribe(() => undefined);
    await vi.waitFor(() => expect(subscriptions).toHaveLength(1));
    subscriptions[0].emit(synced);
    await vi.waitFor(() => expect(store.getSnapshot().status).not.toBeNull());
    const before = store.getSnapshot().changes;
    subscriptions[0].emit({ ...synced, changes: 1 });
    await vi.waitFor(() => expect(store.getSnapshot().changes).toBe(before + 1));
    subscriptions[0].emit({ ...synced, changes: 1, conflicts: 1, state: "conflict" });
    await vi.waitFor(() => expect(transport.callsTo("sync.conflicts")).toHaveLength(1));
    stop();
  });

  it("moves `local`, not `changes`, when a pushed status carries a moved local-change marker", async () => {
    const { subscriptions, store } = watchable();
    const stop = store.subscribe(() => undefined);
    await vi.waitFor(() => expect(subscriptions).toHaveLength(1));
    subscriptions[0].emit(synced);
    await vi.waitFor(() => expect(store.getSnapshot().status).not.toBeNull());
    const before = store.getSnapshot();
    // Another window saved a project: the engine pushes the status with the marker moved.
    subscriptions[0].emit({ ...synced, localChanges: 3 });
    await vi.waitFor(() => expect(store.getSnapshot().local).toBe(before.local + 1));
    expect(store.getSnapshot().changes).toBe(before.changes);
    expect(store.getSnapshot().epoch).toBe(before.epoch);
    stop();
  });

  it("opens the subscription again after a stream error, backing off, and keeps the snapshot meanwhile", async () => {
    vi.useFakeTimers();
    const { transport, subscriptions, store } = watchable();
    const stop = store.subscribe(() => undefined);
    await vi.waitFor(() => expect(subscriptions).toHaveLength(1));
    subscriptions[0].emit(synced);
    await vi.waitFor(() => expect(store.getSnapshot().status?.state).toBe("synced"));

    // The stream is lost: nothing changes on screen, and nothing is asked at once.
    subscriptions[0].fail(apiError("INTERNAL", "the stream broke"));
    await vi.advanceTimersByTimeAsync(RECONNECT_MIN_MS - 1);
    expect(subscriptions).toHaveLength(1);
    expect(store.getSnapshot().status?.state).toBe("synced");
    await vi.advanceTimersByTimeAsync(1);
    expect(subscriptions).toHaveLength(2);

    // It fails again before sending anything: the wait doubles.
    subscriptions[1].fail(apiError("INTERNAL", "still broken"));
    await vi.advanceTimersByTimeAsync(2 * RECONNECT_MIN_MS - 1);
    expect(subscriptions).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(subscriptions).toHaveLength(3);

    // The new subscription's first event is the status now; a success resets the wait.
    subscriptions[2].emit({ ...synced, state: "pending", pending: 1 });
    await vi.waitFor(() => expect(store.getSnapshot().status?.state).toBe("pending"));
    subscriptions[2].fail(apiError("INTERNAL", "once more"));
    await vi.advanceTimersByTimeAsync(RECONNECT_MIN_MS);
    expect(subscriptions).toHaveLength(4);
    expect(transport.callsTo("sync.status")).toEqual([]);
    stop();
  });

  it("waits at most RECONNECT_MAX_MS between tries, and stops trying once nothing listens", async () => {
    vi.useFakeTimers();
    const { subscriptions, store } = watchable();
    const stop = store.subscribe(() => undefined);
    await vi.waitFor(() => expect(subscriptions).toHaveLength(1));
    for (let i = 0; i < 8; i++) {
      subscriptions[i].fail(apiError("INTERNAL", "down"));
      await vi.advanceTimersByTimeAsync(RECONNECT_MAX_MS);
      expect(subscriptions).toHaveLength(i + 2);
    }
    stop();
    subscriptions[8].fail(apiError("INTERNAL", "down"));
    await vi.advanceTimersByTimeAsync(10 * RECONNECT_MAX_MS);
    expect(subscriptions).toHaveLength(9);
  });

  it("does not show a read's answer over a newer pushed status that arrived before it", async () => {
    const { transport, subscriptions, store } = watchable();
    // The read begins before the version reaches the server and is answered after the
    // push that says it did (answers and pushes travel apart).
    let answer: (s: SyncStatus) => void = () => undefined;
    transport.on("sync.status", () => new Promise<SyncStatus>((resolve) => (answer = resolve)));
    const stop = store.subscribe(() => undefined);
    await vi.waitFor(() => expect(subscriptions).toHaveLength(1));
    subscriptions[0].emit({ ...synced, asOf: 3 });
    await vi.waitFor(() => expect(store.getSnapshot().status?.asOf).toBe(3));
    const read = store.refresh();
    await vi.waitFor(() => expect(transport.callsTo("sync.status")).toHaveLength(1));
    subscriptions[0].emit({ ...synced, asOf: 6 });
    await vi.waitFor(() => expect(store.getSnapshot().status?.asOf).toBe(6));
    answer({ ...synced, state: "pending", pending: 1, asOf: 4 });
    await read;
    expect(store.getSnapshot().status?.state).toBe("synced");
    expect(store.getSnapshot().status?.asOf).toBe(6);
    // An answer as far as the status shown (or further) is shown.
    const again = store.refresh();
    answer({ ...synced, state: "paused", paused: true, asOf: 6 });
    await again;
    expect(store.getSnapshot().status?.state).toBe("paused");
    stop();
  });

  it("shows a new subscription's first status even with a lower count (the engine restarted)", async () => {
    vi.useFakeTimers();
    const { subscriptions, store } = watchable();
    const stop = store.subscribe(() => undefined);
    await vi.waitFor(() => expect(subscriptions).toHaveLength(1));
    subscriptions[0].emit({ ...synced, asOf: 40 });
    await vi.waitFor(() => expect(store.getSnapshot().status?.asOf).toBe(40));
    subscriptions[0].fail(apiError("INTERNAL", "serve stopped"));
    await vi.advanceTimersByTimeAsync(RECONNECT_MIN_MS);
    expect(subscriptions).toHaveLength(2);
    subscriptions[1].emit({ ...synced, state: "pending", pending: 2, asOf: 1 });
    await vi.waitFor(() => expect(store.getSnapshot().status?.state).toBe("pending"));
    subscriptions[1].emit({ ...synced, asOf: 2 });
    await vi.waitFor(() => expect(store.getSnapshot().status?.state).toBe("synced"));
    stop();
  });

  it("a malformed event is not shown and does not end the subscription", async () => {
    const { subscriptions, store } = watchable();
    const stop = store.subscribe(() => undefined);
    await vi.waitFor(() => expect(subscriptions).toHaveLength(1));
    subscriptions[0].emit(synced);
    await vi.waitFor(() => expect(store.getSnapshot().status?.state).toBe("synced"));
    subscriptions[0].emit(null as unknown as SyncStatus);
    await settle();
    expect(store.getSnapshot().status?.state).toBe("synced");
    subscriptions[0].emit({ ...synced, state: "paused", paused: true });
    await vi.waitFor(() => expect(store.getSnapshot().status?.state).toBe("paused"));
    expect(subscriptions).toHaveLength(1);
    stop();
  });
});
