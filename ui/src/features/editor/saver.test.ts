import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ApiClient, type ClientError } from "../../shared/api/client";
import { FakeTransport } from "../../shared/api/fake";
import type { Project, ProjectUpdateParams } from "../../shared/api/generated";
import { type Conflict, type SaveState, Saver } from "./saver";

function project(over: Partial<Project> = {}): Project {
  return {
    id: "prj_1",
    title: "T",
    source: "a",
    revision: 3,
    head: 0,
    platforms: [],
    brandProfileId: null,
    templateId: null,
    archived: false,
    createdAt: "2026-11-22T00:00:00Z",
    updatedAt: "2026-11-22T00:00:00Z",
    ...over,
  };
}

/** A backend with one project whose revision moves on every update. */
function backend() {
  let stored = project();
  const transport = new FakeTransport().on("project.update", (p: ProjectUpdateParams) => {
    if (p.baseRevision !== undefined && p.baseRevision !== stored.revision) {
      const err: ClientError = {
        code: "CONFLICT",
        message: "stale",
        hints: [],
        details: { current: { title: stored.title, source: stored.source, revision: stored.revision } },
      };
      throw err;
    }
    stored = { ...stored, title: p.title ?? stored.title, source: p.source ?? stored.source, revision: stored.revision + 1 };
    return stored;
  });
  return {
    transport,
    client: new ApiClient(transport),
    get stored() {
      return stored;
    },
    set stored(v: Project) {
      stored = v;
    },
  };
}

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe("Saver", () => {
  it("debounces edits into one update carrying the base revision", async () => {
    const b = backend();
    const states: SaveState[] = [];
    const s = new Saver({ client: b.client, project: project(), delayMs: 500, onState: (x) => states.push(x) });
    s.change({ source: "ab" });
    s.change({ source: "abc" });
    await vi.advanceTimersByTimeAsync(499);
    expect(b.transport.callsTo("project.update")).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(b.transport.callsTo("project.update")).toEqual([{ projectId: "prj_1", baseRevision: 3, source: "abc" }]);
    expect(s.revision).toBe(4);
    expect(states).toEqual(["dirty", "saving", "saved"]);
    s.change({ title: "New" });
    await vi.advanceTimersByTimeAsync(500);
    expect(b.transport.callsTo("project.update")[1]).toEqual({ projectId: "prj_1", baseRevision: 4, title: "New" });
  });

  it("waits while an input method composition is open", async () => {
    const b = backend();
    let composing = true;
    const s = new Saver({ client: b.client, project: project(), delayMs: 100, isComposing: () => composing });
    s.change({ source: "春" });
    await vi.advanceTimersByTimeAsync(1000);
    expect(b.transport.callsTo("project.update")).toHaveLength(0);
    composing = false;
    await vi.advanceTimersByTimeAsync(100);
    expect(b.transport.callsTo("project.update")).toHaveLength(1);
  });

  it("on CONFLICT stops, shows both sides, and never overwrites without a choice", async () => {
    const b = backend();
    let conflict: Conflict | null = null;
    const s = new Saver({ client: b.client, project: project(), delayMs: 10, onConflict: (c) => (conflict = c) });
    b.stored = { ...b.stored, source: "theirs", revision: 7 };
    s.change({ source: "mine" });
    await vi.advanceTimersByTimeAsync(10);
    expect(s.state).toBe("conflict");
    expect(conflict).toEqual({ mine: { title: "T", source: "mine" }, theirs: { title: "T", source: "theirs", revision: 7 }, base: { title: "T", source: "a" } });
    s.change({ source: "mine!" });
    await vi.advanceTimersByTimeAsync(1000);
    expect(b.stored.source).toBe("theirs");
    await s.keepMine();
    expect(b.transport.callsTo("project.update").at(-1)).toEqual({ projectId: "prj_1", baseRevision: 7, source: "mine!" });
    expect(b.stored.source).toBe("mine!");
    expect(s.state).toBe("saved");
  });

  it("take theirs adopts their text and revision", async () => {
    const b = backend();
    const s = new Saver({ client: b.client, project: project(), delayMs: 10 });
    b.stored = { ...b.stored, source: "theirs", revision: 9 };
    s.change({ source: "mine" });
    await vi.advanceTimersByTimeAsync(10);
    expect(s.takeTheirs()).toEqual({ title: "T", source: "theirs" });
    expect(s.revision).toBe(9);
    s.change({ source: "theirs+" });
    await vi.advanceTimersByTimeAsync(10);
    expect(b.stored.source).toBe("theirs+");
  });

  it("a newer working copy is adopted when nothing is unsaved, and only the same content keeps a dirty edit", async () => {
    const b = backend();
    const s = new Saver({ client: b.client, project: project(), delayMs: 10 });
    expect(s.arrived({ title: "T", source: "a\nA 加的\n", revision: 5 })).toBe("adopted");
    expect(s.revision).toBe(5);
    expect(s.draft.source).toBe("a\nA 加的\n");
    expect(s.state).toBe("saved");
    // An older or equal revision is nothing new.
    expect(s.arrived({ title: "T", source: "old", revision: 5 })).toBe("same");
    // Unsaved text and a newer revision with the same content (a platform change): the edit stays and saves on it.
    s.change({ source: "a\nA 加的\n乙" });
    expect(s.arrived({ title: "T", source: "a\nA 加的\n", revision: 6 })).toBe("same");
    b.stored = { ...b.stored, source: "a\nA 加的\n", revision: 6 };
    await vi.advanceTimersByTimeAsync(10);
    expect(b.transport.callsTo("project.update").at(-1)).toEqual({ projectId: "prj_1", baseRevision: 6, source: "a\nA 加的\n乙" });
  });

  it("a newer working copy under unsaved text never drops either side: both wait in a conflict, then merge onto it", async () => {
    const b = backend();
    let conflict: Conflict | null = null;
    let typed = "a\n乙\n";
    const s = new Saver({ client: b.client, project: project({ source: "a\n" }), delayMs: 10, pull: () => typed, onConflict: (c) => (conflict = c) });
    s.touch(); // a keystroke not saved yet
    b.stored = { ...b.stored, source: "a\nA 加的\n", revision: 8 };
    expect(s.arrived({ title: "T", source: "a\nA 加的\n", revision: 8 })).toBe("conflict");
    expect(conflict).toEqual({ mine: { title: "T", source: "a\n乙\n" }, theirs: { title: "T", source: "a\nA 加的\n", revision: 8 }, base: { title: "T", source: "a\n" } });
    await vi.advanceTimersByTimeAsync(1000);
    expect(b.transport.callsTo("project.update")).toHaveLength(0); // nothing written over theirs
    typed = "a\n乙乙\n";
    s.touch();
    expect(s.current().source).toBe("a\n乙乙\n");
    await s.resolveWith({ title: "T", source: "a\n乙乙\nA 加的\n" });
    expect(b.transport.callsTo("project.update")).toEqual([{ projectId: "prj_1", baseRevision: 8, source: "a\n乙乙\nA 加的\n" }]);
    expect(s.state).toBe("saved");
  });

  it("flush saves immediately and an empty title is never sent", async () => {
    const b = backend();
    const s = new Saver({ client: b.client, project: project(), delayMs: 10_000 });
    s.change({ title: "  ", source: "x" });
    await s.flush();
    expect(b.transport.callsTo("project.update")).toEqual([{ projectId: "prj_1", baseRevision: 3, source: "x" }]);
    expect(s.dirty).toBe(false);
  });

  it("retries after a failure with backoff", async () => {
    const b = backend();
    let fail = true;
    const ok = b.transport.handlers["project.update"]!;
    b.transport.on("project.update", (p, cb) => {
      if (fail) throw { code: "IO", message: "disk", hints: [{ id: "check_disk", message: "" }] };
      return ok(p, cb);
    });
    const errors: string[] = [];
    const s = new Saver({ client: b.client, project: project(), delayMs: 10, onError: (e) => errors.push(e.code) });
    s.change({ source: "z" });
    await vi.advanceTimersByTimeAsync(10);
    expect(s.state).toBe("error");
    expect(errors).toEqual(["IO"]);
    fail = false;
    await vi.advanceTimersByTimeAsync(2000);
    expect(s.state).toBe("saved");
    expect(b.stored.source).toBe("z");
  });
});
