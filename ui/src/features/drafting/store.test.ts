import { beforeEach, describe, expect, it, vi } from "vitest";
import type { HarnessEvent } from "../../shared/api/client";
import { ApiClient } from "../../shared/api/client";
import { FakeTransport } from "../../shared/api/fake";
import { offlineError } from "../../shared/api/errors";
import { assistant, compactBoundary, compactionStarted, created, delta, ev, proposal, resetSeq, session, sessionView, turnEnded, turnStarted, user, view } from "../../shared/testing/fixtures";
import { Drafting, followTiming, isRunning, PAGE, SessionStore } from "./store";
import { serveLog } from "./testLog";

beforeEach(() => resetSeq());

/** A transport whose log is `log` (session.timeline answers its fold). */
function backend(log: HarnessEvent[], status: "idle" | "running" = "idle") {
  const transport = new FakeTransport();
  transport.on("session.get", () => sessionView({ status, lastSequence: log.length }));
  serveLog(transport, log);
  transport.on("proposal.list", () => ({ proposals: [] }));
  transport.on("usage.list", () => ({ records: [] }));
  return transport;
}

const frame = () => new Promise((r) => setTimeout(r, 30));

describe("the session store", () => {
  it("loads the whole log into the timeline", async () => {
    const log = [ev(created()), ev(user("改短")), ev(turnStarted()), ev(assistant("好")), ev(turnEnded("completed"))];
    const store = new SessionStore(new ApiClient(backend(log)), session(), "prj_1");
    await store.load();
    const s = store.getSnapshot();
    expect(s.loaded).toBe(true);
    expect(s.timeline.lastSequence).toBe(5);
    expect(s.timeline.items.map((i) => i.kind)).toEqual(["user", "assistant"]);
    expect(isRunning(s)).toBe(false);
  });

  it("reads the latest page first, earlier pages when asked, and then only what changed", async () => {
    const log = [ev(created())];
    for (let n = 0; n < PAGE; n++) log.push(ev(user(`第${n}句`)), ev(turnStarted()), ev(assistant(`答${n}`)), ev(turnEnded("completed")));
    const transport = backend(log);
    const store = new SessionStore(new ApiClient(transport), session(), "prj_1");
    await store.load();
    let s = store.getSnapshot();
    expect(s.timeline.items).toHaveLength(PAGE);
    expect(s.timeline.earlier).toBe(PAGE);
    expect(s.timeline.items[0]).toMatchObject({ kind: "user", text: `第${PAGE / 2}句` });
    expect(transport.callsTo("session.timeline")).toEqual([{ sessionId: "ses_1", limit: PAGE }]);
    await store.loadEarlier();
    s = store.getSnapshot();
    expect(s.timeline.items).toHaveLength(2 * PAGE);
    expect(s.timeline.earlier).toBe(0);
    expect(s.timeline.items[0]).toMatchObject({ kind: "user", text: "第0句" });
    expect(transport.callsTo("session.timeline")[1]).toEqual({ sessionId: "ses_1", before: `${2 + (PAGE / 2) * 4}`, limit: PAGE });
    // Another turn logged elsewhere: only the items changed since the held sequence come.
    const since = s.timeline.lastSequence;
    log.push(ev(user("再来")), ev(turnStarted()));
    await store.catchUp();
    expect(transport.callsTo("session.timeline").at(-1)).toEqual({ sessionId: "ses_1", since });
    s = store.getSnapshot();
    expect(s.timeline.items).toHaveLength(2 * PAGE + 1);
    expect(s.timeline.items.at(-1)).toMatchObject({ kind: "user", text: "再来" });
    expect(s.timeline.turnOpen).toBe(true);
  });

  it("streams deltas to their own subscribers only, and drops them when the message lands", async () => {
    const store = new SessionStore(new ApiClient(backend([])), session(), "prj_1");
    let timelineRenders = 0;
    let streamRenders = 0;
    store.subscribe(() => timelineRenders++);
    store.subscribeStream(() => streamRenders++);
    const state = { ...store.getSnapshot().timeline, lastSequence: 4, turnOpen: true, streamingKey: "4" };
    store.applyPatch({ sequence: 4, items: [{ kind: "user", key: "2", changedAt: 2, text: "写", selection: null, wasQueued: false, retry: false }], removed: [], append: null, state });
    const afterLogged = timelineRenders;
    for (const piece of ["春", "天", "来", "了"]) store.applyPatch({ sequence: 0, items: [], removed: [], append: { key: "4", text: piece, reasoning: false }, state: null });
    expect(store.getStreaming()?.text).toBe("春天来了");
    expect(timelineRenders).toBe(afterLogged);
    await frame();
    // Four deltas in one frame: one notification.
    expect(streamRenders).toBe(1);
    const answer = { kind: "assistant" as const, key: "4", changedAt: 5, text: "春天来了", streaming: false, interrupted: false, cutOff: false };
    store.applyPatch({ sequence: 5, items: [answer], removed: [], append: null, state: { ...state, lastSequence: 5, streamingKey: null } });
    expect(store.getStreaming()).toBeNull();
    expect(store.getSnapshot().timeline.items.map((i) => i.kind)).toEqual(["user", "assistant"]);
  });

  it("drives a turn through session.submit and follows the stream's events", async () => {
    const transport = backend([]);
    transport.on("session.submit", (params, emit) => {
      emit(ev(user(params.text)));
      emit(ev(turnStarted()));
      emit(ev(delta("好"), {}, true));
      emit(ev(assistant("好")));
      emit(ev(turnEnded("completed")));
      return { queued: false, reason: "completed", session: sessionView({ lastSequence: 4 }) };
    });
    const store = new SessionStore(new ApiClient(transport), session(), "prj_1");
    await store.submit("改");
    const s = store.getSnapshot();
    expect(s.driving).toBe(0);
    expect(s.timeline.items.map((i) => i.kind)).toEqual(["user", "assistant"]);
    // The window asks for the timeline's patches, not the log's events.
    expect(transport.callsTo("session.submit")).toEqual([{ sessionId: "ses_1", text: "改", timeline: true }]);
  });

  it("a turn submitted while the session's first page is read keeps the streamed state", async () => {
    const transport = backend([]);
    let release: () => void = () => undefined;
    const empty = { since: 0, items: [], earlier: 0, lastSequence: 0 };
    // The first page is read before the turn starts, and answers after its patches came.
    transport.on("session.timeline", async () => {
      await new Promise<void>((r) => (release = r));
      return { ...store.getSnapshot().timeline, ...empty, turnOpen: false, pendingApproval: null };
    });
    const store = new SessionStore(new ApiClient(transport), session(), "prj_1");
    const loading = store.load();
    await frame();
    const state = { ...store.getSnapshot().timeline, lastSequence: 3, turnOpen: true };
    store.applyPatch({ sequence: 3, items: [{ kind: "user", key: "2", changedAt: 2, text: "存个检查点", selection: null, wasQueued: false, retry: false }], removed: [], append: null, state });
    release();
    await loading;
    const s = store.getSnapshot();
    expect(s.timeline.lastSequence).toBe(3);
    expect(s.timeline.turnOpen).toBe(true);
    expect(s.timeline.items).toMatchObject([{ kind: "user", text: "存个检查点" }]);
  });

  it("after a reload mid-turn it polls the log until the turn ends", async () => {
    const log = [ev(created()), ev(user("改")), ev(turnStarted())];
    let status: "running" | "idle" = "running";
    const transport = backend(log, "running");
    transport.on("session.get", () => sessionView({ status, lastSequence: log.length }));
    const store = new SessionStore(new ApiClient(transport), session(), "prj_1");
    await store.load();
    expect(isRunning(store.getSnapshot())).toBe(true);
    log.push(ev(assistant("改好了")), ev(turnEnded("completed")));
    status = "idle";
    await new Promise((r) => setTimeout(r, 900));
    const s = store.getSnapshot();
    expect(s.following).toBe(false);
    expect(s.timeline.items.at(-1)).toMatchObject({ kind: "assistant", text: "改好了" });
    expect(isRunning(s)).toBe(false);
  });

  it("a backend that goes away mid-turn is tried again with backoff; once back, the turn shows closed", async () => {
    const saved = { ...followTiming };
    followTiming.retryMs = [10, 20];
    try {
      const log = [ev(created()), ev(user("改")), ev(turnStarted())];
      let down = false;
      const transport = backend(log);
      transport.on("session.submit", (_params, emit) => {
        for (const e of log.slice(1)) emit(e);
        emit(ev(delta("改到一"), {}, true));
        down = true;
        throw offlineError("stream broke");
      });
      const timeline = transport.handlers["session.timeline"];
      transport.on("session.timeline", (params, emit) => {
        if (down) throw offlineError("connection refused");
        return timeline!(params, emit);
      });
      transport.on("session.get", () => {
        if (down) throw offlineError("connection refused");
        return sessionView({ status: "idle", lastSequence: log.length });
      });
      const store = new SessionStore(new ApiClient(transport), session(), "prj_1");
      await store.submit("改");
      await frame();
      // Offline: still following, saying so, the error shown.
      let s = store.getSnapshot();
      expect(s.following).toBe(true);
      expect(s.reconnecting).toBe(true);
      expect(s.error?.code).toBe("OFFLINE");
      expect(store.getStreaming()).toBeNull();
      // The backend comes back; reopening the session closed the turn.
      log.push(ev(assistant("改到一", [], true)), ev(turnEnded("restarted")));
      down = false;
      await new Promise((r) => setTimeout(r, 120));
      s = store.getSnapshot();
      expect(s.following).toBe(false);
      expect(s.reconnecting).toBe(false);
      expect(s.error).toBeNull();
      expect(isRunning(s)).toBe(false);
      expect(s.timeline.items.at(-1)).toMatchObject({ kind: "end", reason: "restarted" });
    } finally {
      Object.assign(followTiming, saved);
    }
  });

  it("a turn run elsewhere is pushed as it is logged: no read of the log while it runs", async () => {
    const log = [ev(created()), ev(user("改")), ev(turnStarted())];
    let status: "running" | "idle" = "running";
    const transport = backend(log, "running");
    transport.on("session.get", () => sessionView({ status, lastSequence: log.length }));
    const store = new SessionStore(new ApiClient(transport), session(), "prj_1");
    await store.load();
    await frame();
    expect(store.getSnapshot().following).toBe(true);
    expect(transport.callsTo("session.watch")).toEqual([{ sessionId: "ses_1", since: 3 }]);
    const reads = transport.callsTo("session.timeline").length;
    // Quiet for over a second: nothing is read (the old follow read the log every 400 ms).
    await new Promise((r) => setTimeout(r, 1000));
    expect(transport.callsTo("session.timeline")).toHaveLength(reads);
    expect(transport.callsTo("session.get")).toHaveLength(1);
    // Another window's turn logs its answer: it shows within a frame, pushed.
    log.push(ev(assistant("改好了")));
    await frame();
    expect(store.getSnapshot().timeline.items.at(-1)).toMatchObject({ kind: "assistant", text: "改好了" });
    expect(transport.callsTo("session.timeline")).toHaveLength(reads);
    log.push(ev(turnEnded("completed")));
    status = "idle";
    await new Promise((r) => setTimeout(r, 150));
    const s = store.getSnapshot();
    expect(s.following).toBe(false);
    expect(isRunning(s)).toBe(false);
    expect(transport.callsTo("session.watch")).toHaveLength(1);
    store.dispose();
  });

  it("a watch that breaks is opened again after a backoff, from the sequence held", async () => {
    const saved = { ...followTiming };
    followTiming.retryMs = [10, 20];
    try {
      const log = [ev(created()), ev(user("改")), ev(turnStarted())];
      const transport = backend(log, "running");
      let breaks = 1;
      const stream = transport.stream.bind(transport);
      transport.stream = (method, params, onEvent, options) => {
        if (method === "session.watch" && breaks > 0) {
          breaks--;
          transport.calls.push({ method: "session.watch", params });
          return Promise.reject(offlineError("connection refused"));
        }
        return stream(method, params, onEvent, options);
      };
      const store = new SessionStore(new ApiClient(transport), session(), "prj_1");
      await store.load();
      await new Promise((r) => setTimeout(r, 60));
      expect(transport.callsTo("session.watch")).toEqual([
        { sessionId: "ses_1", since: 3 },
        { sessionId: "ses_1", since: 3 },
      ]);
      expect(store.getSnapshot().following).toBe(true);
      expect(store.getSnapshot().reconnecting).toBe(false);
      log.push(ev(assistant("好")));
      await frame();
      expect(store.getSnapshot().timeline.items.at(-1)).toMatchObject({ kind: "assistant", text: "好" });
      // Disposed (the project closed): the watch is let go.
      store.dispose();
      await frame();
      log.push(ev(turnEnded("completed")));
      expect(transport.callsTo("session.watch")).toHaveLength(2);
    } finally {
      Object.assign(followTiming, saved);
    }
  });

  it("while idle nothing reads the log: a compaction the API starts is pushed (the session-activity marker), followed and ends", async () => {
    const log = [ev(created()), ev(user("改")), ev(turnStarted()), ev(assistant("好")), ev(turnEnded("completed"))];
    let status: "idle" | "running" = "idle";
    const transport = backend(log);
    transport.on("session.get", () => sessionView({ status, lastSequence: log.length }));
    const store = new SessionStore(new ApiClient(transport), session(), "prj_1");
    const logReads = () => transport.calls.filter((c) => ["session.timeline", "session.get", "session.watch"].includes(c.method)).length;
    vi.useFakeTimers();
    try {
      await store.load();
      const read = logReads();
      // Half a minute idle: no read of the log at all (the old panel read it every 2.5 s).
      await vi.advanceTimersByTimeAsync(30_000);
      expect(logReads()).toBe(read);
    } finally {
      vi.useRealTimers();
    }
    expect(isRunning(store.getSnapshot())).toBe(false);
    status = "running";
    log.push(ev(compactionStarted("manual")));
    expect(store.getSnapshot().timeline.compacting).toBeNull();
    // The engine pushes that something started: the store reads what changed and follows.
    await store.noticeActivity();
    let s = store.getSnapshot();
    expect(s.timeline.compacting).not.toBeNull();
    expect(isRunning(s)).toBe(true);
    await frame();
    expect(transport.callsTo("session.watch")).toHaveLength(1);
    log.push(ev(compactBoundary()));
    status = "idle";
    await new Promise((r) => setTimeout(r, 60));
    s = store.getSnapshot();
    expect(s.timeline.compacting).toBeNull();
    expect(s.timeline.items.at(-1)).toMatchObject({ kind: "boundary" });
    expect(isRunning(s)).toBe(false);
    store.dispose();
  });

  it("the drafting store hands a moved session-activity marker to the open session, and only a moved one", async () => {
    const log = [ev(created()), ev(user("改")), ev(turnStarted()), ev(assistant("好")), ev(turnEnded("completed"))];
    let status: "idle" | "running" = "idle";
    const transport = backend(log);
    transport.on("session.get", () => sessionView({ status, lastSequence: log.length }));
    const drafting = new Drafting(new ApiClient(transport), "prj_1");
    drafting.open(session());
    await frame();
    const store = drafting.getSnapshot().active!;
    expect(store.getSnapshot().loaded).toBe(true);
    const reads = transport.callsTo("session.timeline").length;
    // The first marker seen is where the window starts from; the same one again is no news.
    drafting.sessionActivity(4);
    drafting.sessionActivity(4);
    await frame();
    expect(transport.callsTo("session.timeline")).toHaveLength(reads);
    // Another window submits: its turn starts, and the marker moves.
    status = "running";
    log.push(ev(user("再改")), ev(turnStarted()));
    drafting.sessionActivity(5);
    await frame();
    expect(store.getSnapshot().following).toBe(true);
    expect(store.getSnapshot().timeline.items.at(-1)).toMatchObject({ kind: "user", text: "再改" });
    log.push(ev(assistant("改好了")), ev(turnEnded("completed")));
    status = "idle";
    await new Promise((r) => setTimeout(r, 150));
    expect(store.getSnapshot().following).toBe(false);
    expect(store.getSnapshot().timeline.items.at(-1)).toMatchObject({ kind: "assistant", text: "改好了" });
    expect(isRunning(store.getSnapshot())).toBe(false);
    drafting.dispose();
  });

  it("a proposal list read before the proposal existed, answered late, does not hide it", async () => {
    const transport = backend([ev(created())]);
    const answers: ((r: { proposals: ReturnType<typeof view>[] }) => void)[] = [];
    transport.on("proposal.list", () => new Promise((resolve) => answers.push(resolve)));
    const store = new SessionStore(new ApiClient(transport), session(), "prj_1");
    const older = store.refreshProposals();
    const newer = store.refreshProposals();
    await vi.waitFor(() => expect(answers).toHaveLength(2));
    answers[1]({ proposals: [view()] });
    await newer;
    answers[0]({ proposals: [] });
    await older;
    expect(store.getSnapshot().proposals.map((p) => p.id)).toEqual(["prp_1"]);
    // A decision made here outranks a read started before it.
    const stale = store.refreshProposals();
    await vi.waitFor(() => expect(answers).toHaveLength(3));
    store.putProposal(proposal({ status: "accepted" }));
    answers[2]({ proposals: [view()] });
    await stale;
    expect(store.getSnapshot().proposals[0].status).toBe("accepted");
    store.dispose();
  });
});
