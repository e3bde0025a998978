import { beforeEach, describe, expect, it } from "vitest";
import type { HarnessEvent } from "../../shared/api/client";
import { ApiClient } from "../../shared/api/client";
import { FakeTransport } from "../../shared/api/fake";
import { offlineError } from "../../shared/api/errors";
import { assistant, compactBoundary, compactionStarted, created, delta, ev, resetSeq, session, sessionView, turnEnded, turnStarted, user } from "../../shared/testing/fixtures";
import { followTiming, isRunning, SessionStore } from "./store";

beforeEach(() => resetSeq());

/** A transport whose log is `log` (session.events pages through it). */
function backend(log: HarnessEvent[], status: "idle" | "running" = "idle") {
  const transport = new FakeTransport();
  transport.on("session.get", () => sessionView({ status, lastSequence: log.length }));
  transport.on("session.events", ({ from = 1, limit = 1000 }) => ({ events: log.filter((e) => e.sequence >= from).slice(0, limit), lastSequence: log.length }));
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

  it("applies events in order, filling a gap from the log, and ignores repeats", async () => {
    const log = [ev(created()), ev(user("一")), ev(turnStarted()), ev(assistant("答"))];
    const transport = backend(log);
    const store = new SessionStore(new ApiClient(transport), session(), "prj_1");
    store.ingest([log[0]]);
    // Event 4 arrives before 2 and 3 (another window's stream): it waits, and the gap is read.
    store.ingest([log[3]]);
    await frame();
    expect(store.getSnapshot().timeline.lastSequence).toBe(4);
    expect(transport.callsTo("session.events")).toEqual([{ sessionId: "ses_1", from: 2, limit: 1000 }]);
    const before = store.getSnapshot();
    store.ingest([log[1], log[3]]);
    expect(store.getSnapshot()).toBe(before);
  });

  it("streams deltas to their own subscribers only, and drops them when the message lands", async () => {
    const store = new SessionStore(new ApiClient(backend([])), session(), "prj_1");
    let timelineRenders = 0;
    let streamRenders = 0;
    store.subscribe(() => timelineRenders++);
    store.subscribeStream(() => streamRenders++);
    store.ingest([ev(created()), ev(user("写")), ev(turnStarted())]);
    const afterLogged = timelineRenders;
    for (const piece of ["春", "天", "来", "了"]) store.ingest([ev(delta(piece), {}, true)]);
    expect(store.getStreaming()?.text).toBe("春天来了");
    expect(timelineRenders).toBe(afterLogged);
    await frame();
    // Four deltas in one frame: one notification.
    expect(streamRenders).toBe(1);
    store.ingest([ev(assistant("春天来了"))]);
    expect(store.getStreaming()).toBeNull();
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
    expect(transport.callsTo("session.submit")).toEqual([{ sessionId: "ses_1", text: "改" }]);
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
    followTiming.pollMs = 5;
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
      transport.on("session.events", ({ from = 1 }) => {
        if (down) throw offlineError("connection refused");
        return { events: log.filter((e) => e.sequence >= from), lastSequence: log.length };
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

  it("reads the log again when it says it holds more than the page brought", async () => {
    const log = [ev(created()), ev(user("改")), ev(turnStarted())];
    const transport = backend(log);
    let reads = 0;
    // The first read closes the turn after scanning (as a backend does on its first use after a restart).
    transport.on("session.events", ({ from = 1 }) => {
      const events = log.filter((e) => e.sequence >= from);
      if (reads++ === 0) log.push(ev(turnEnded("restarted")));
      return { events, lastSequence: log.length };
    });
    const store = new SessionStore(new ApiClient(transport), session(), "prj_1");
    await store.load();
    const s = store.getSnapshot();
    expect(s.timeline.turnOpen).toBe(false);
    expect(s.timeline.items.at(-1)).toMatchObject({ kind: "end", reason: "restarted" });
  });

  it("while idle it reads the log now and then: a compaction the API started shows, runs and ends", async () => {
    const saved = { ...followTiming };
    followTiming.pollMs = 5;
    followTiming.idleMs = 10;
    try {
      const log = [ev(created()), ev(user("改")), ev(turnStarted()), ev(assistant("好")), ev(turnEnded("completed"))];
      let status: "idle" | "running" = "idle";
      const transport = backend(log);
      transport.on("session.get", () => sessionView({ status, lastSequence: log.length }));
      const store = new SessionStore(new ApiClient(transport), session(), "prj_1");
      await store.load();
      expect(isRunning(store.getSnapshot())).toBe(false);
      status = "running";
      log.push(ev(compactionStarted("manual")));
      await new Promise((r) => setTimeout(r, 60));
      let s = store.getSnapshot();
      expect(s.timeline.compacting).not.toBeNull();
      expect(isRunning(s)).toBe(true);
      log.push(ev(compactBoundary()));
      status = "idle";
      await new Promise((r) => setTimeout(r, 60));
      s = store.getSnapshot();
      expect(s.timeline.compacting).toBeNull();
      expect(s.timeline.items.at(-1)).toMatchObject({ kind: "boundary" });
      expect(isRunning(s)).toBe(false);
      store.dispose();
    } finally {
      Object.assign(followTiming, saved);
    }
  });
});
