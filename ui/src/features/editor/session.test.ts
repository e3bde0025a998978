// The project screen's model on its own: a fake transport for the engine, a plain object
// for the editor, and a list for what the person is told.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ApiClient, type ClientError } from "../../shared/api/client";
import { FakeTransport } from "../../shared/api/fake";
import type { Project, ProjectUpdateParams, Version, VersionOrigin } from "../../shared/api/generated";
import { translate } from "../../shared/i18n";
import { keepUnsaved, readKept } from "./kept";
import { type EditorPort, ProjectSession } from "./session";

function project(over: Partial<Project> = {}): Project {
  return {
    id: "prj_1",
    title: "春天的信",
    source: "第一段。\n",
    revision: 3,
    head: 1,
    platforms: [],
    brandProfileId: null,
    templateId: null,
    archived: false,
    createdAt: "2026-11-22T00:00:00Z",
    updatedAt: "2026-11-22T00:00:00Z",
    ...over,
  };
}

/** An engine with one project: updates carry a base revision and are refused when it is stale. */
function engine(start: Project = project()) {
  let stored = start;
  const versions = new Map<number, Version>();
  const addVersion = (author: string, origin: VersionOrigin) =>
    versions.set(stored.head, {
      id: `ver_${stored.head}`,
      projectId: stored.id,
      number: stored.head,
      title: stored.title,
      source: stored.source,
      author,
      message: null,
      origin,
      contentHash: "",
      createdAt: "2026-11-22T00:00:00Z",
    });
  addVersion("Me", { type: "manual" });
  const transport = new FakeTransport()
    .on("project.get", () => stored)
    .on("version.get", ({ number }) => {
      const v = versions.get(number);
      if (!v) throw { code: "NOT_FOUND", message: "no such version", hints: [] } satisfies ClientError;
      return v;
    })
    .on("project.update", (p: ProjectUpdateParams) => {
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
    /** Another window of this data folder saved the working copy. */
    savedElsewhere(source: string) {
      stored = { ...stored, source, revision: stored.revision + 1 };
    },
    /** Sync brought in a teammate's version: the working copy and the head move on. */
    teammateVersion(author: string, source: string) {
      stored = { ...stored, source, revision: stored.revision + 1, head: stored.head + 1 };
      addVersion(author, { type: "pulled", serverNumber: stored.head, pushedBy: author });
    },
  };
}

/** A plain-object editor: its text, a composition flag, what was selected. */
function editor(text = ""): EditorPort & { text: string; composing: boolean; selected: [number, number] | null } {
  return {
    text,
    composing: false,
    selected: null,
    getText() {
      return this.text;
    },
    isComposing() {
      return this.composing;
    },
    setText(t: string) {
      this.text = t;
    },
    select(from: number, to: number) {
      this.selected = [from, to];
    },
    insert(t: string, at?: number) {
      const i = at ?? this.text.length;
      this.text = this.text.slice(0, i) + t + this.text.slice(i);
    },
    focus() {},
  };
}

function open(e: ReturnType<typeof engine>) {
  const told: string[] = [];
  const errors: unknown[] = [];
  const changed: Project[] = [];
  const session = new ProjectSession(
    e.client,
    "prj_1",
    {
      t: (id, vars) => translate("en", id, vars),
      toast: (m) => told.push(m),
      showError: (err) => errors.push(err),
      projectChanged: (p) => changed.push(p),
    },
    { saveDelayMs: 500, readDelayMs: 100 },
  );
  return { session, told, errors, changed };
}

beforeEach(() => {
  vi.useFakeTimers();
  localStorage.clear();
});
afterEach(() => vi.useRealTimers());

describe("ProjectSession", () => {
  it("saves typing after the delay on the revision it was written on, and counts the words", async () => {
    const e = engine();
    const { session, changed } = open(e);
    await session.open();
    const ed = editor(e.stored.source);
    session.attachEditor(ed);
    expect(session.getSnapshot()).toMatchObject({ title: "春天的信", head: 1, revision: 3, saveState: "saved", startText: null });

    ed.text = "第一段。\n第二段。\n";
    session.edited();
    expect(session.getSnapshot().saveState).toBe("dirty");
    await vi.advanceTimersByTimeAsync(499);
    expect(e.transport.callsTo("project.update")).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(e.transport.callsTo("project.update")).toEqual([{ projectId: "prj_1", baseRevision: 3, source: "第一段。\n第二段。\n" }]);
    expect(session.getSnapshot()).toMatchObject({ saveState: "saved", revision: 4, saved: { revision: 4, source: "第一段。\n第二段。\n" } });
    expect(session.getSnapshot().words).toEqual({ n: 8, unit: "chars" });
    // The title is stored the same way, and the sidebar hears of it at once.
    session.setTitle("夏天的信");
    await session.flush();
    expect(e.stored.title).toBe("夏天的信");
    expect(changed.at(-1)?.title).toBe("夏天的信");
  });

  it("a save that meets a newer working copy opens a conflict with both sides; keep both merges them on the newer revision", async () => {
    const e = engine(project({ source: "一\n二\n三\n" }));
    const { session, told } = open(e);
    await session.open();
    const ed = editor(e.stored.source);
    session.attachEditor(ed);
    e.savedElsewhere("一\n二\n三\n四\n");
    ed.text = "零\n一\n二\n三\n";
    session.edited();
    await vi.advanceTimersByTimeAsync(500);
    const snap = session.getSnapshot();
    expect(snap.saveState).toBe("conflict");
    expect(snap.conflict).toMatchObject({ mine: { source: "零\n一\n二\n三\n" }, theirs: { source: "一\n二\n三\n四\n", revision: 4 }, base: { source: "一\n二\n三\n" } });
    // Not a teammate's version (the head is the person's own): another window.
    expect(snap.cause).toEqual({ kind: "elsewhere" });
    expect(e.stored.source).toBe("一\n二\n三\n四\n");

    await session.keepBoth();
    expect(ed.text).toBe("零\n一\n二\n三\n四\n");
    expect(e.stored).toMatchObject({ source: "零\n一\n二\n三\n四\n", revision: 5 });
    expect(session.getSnapshot()).toMatchObject({ conflict: null, saveState: "saved" });
    expect(told).toContain(translate("en", "conflict.merged"));
  });

  it("text kept when a tab closed with a save pending comes back at the next opening and is saved", async () => {
    const e = engine();
    const first = open(e);
    await first.session.open();
    const ed = editor(e.stored.source);
    first.session.attachEditor(ed);
    ed.text = "第一段。\n关掉前写的。\n";
    first.session.edited();
    // The tab closes before the save ran, and the save it starts never reaches the engine.
    e.transport.on("project.update", () => new Promise(() => undefined));
    void first.session.leave();
    first.session.close();
    expect(readKept("prj_1")?.mine.source).toBe("第一段。\n关掉前写的。\n");
    expect(e.stored.source).toBe("第一段。\n");

    const e2 = engine(e.stored);
    const second = open(e2);
    await second.session.open();
    expect(second.session.getSnapshot()).toMatchObject({ startText: "第一段。\n关掉前写的。\n", saveState: "dirty" });
    second.session.attachEditor(editor("第一段。\n关掉前写的。\n"));
    await vi.advanceTimersByTimeAsync(0);
    await second.session.flush();
    expect(e2.stored.source).toBe("第一段。\n关掉前写的。\n");
    // Stored now: nothing is kept any more.
    expect(readKept("prj_1")).toBeNull();
  });

  it("kept text on a base that moved on since opens as the person's side of a conflict, said to be kept text", async () => {
    const e = engine(project({ source: "新的。\n", revision: 7 }));
    keepUnsaved("prj_1", { mine: { title: "春天的信", source: "我的。\n" }, base: { title: "春天的信", source: "旧的。\n" }, keptAt: "2026-11-22T00:00:00Z" });
    const { session } = open(e);
    await session.open();
    session.attachEditor(editor("我的。\n"));
    await vi.advanceTimersByTimeAsync(0);
    const snap = session.getSnapshot();
    expect(snap).toMatchObject({ startText: "我的。\n", saveState: "conflict", cause: { kind: "kept" } });
    expect(snap.conflict).toMatchObject({ mine: { source: "我的。\n" }, theirs: { source: "新的。\n", revision: 7 }, base: { source: "旧的。\n" } });
    // Nothing was written over the newer text.
    expect(e.transport.callsTo("project.update")).toEqual([]);
  });

  it("a teammate's version arriving while the person types waits beside their text; with nothing unsaved it is shown at once", async () => {
    const e = engine();
    const { session, told } = open(e);
    await session.open();
    const ed = editor(e.stored.source);
    session.attachEditor(ed);
    // Typing, not saved yet.
    ed.text = "第一段。\n我正在写。\n";
    session.edited();
    e.teammateVersion("Lin", "第一段。\nLin 写的。\n");
    await session.follow();
    // The overlay opens once it knows whose the newer text is.
    await vi.advanceTimersByTimeAsync(0);
    let snap = session.getSnapshot();
    expect(snap.cause).toEqual({ kind: "teammate", author: "Lin", n: 2 });
    expect(snap.conflict).toMatchObject({ mine: { source: "第一段。\n我正在写。\n" }, theirs: { source: "第一段。\nLin 写的。\n" } });
    expect(snap.head).toBe(2);
    expect(ed.text).toBe("第一段。\n我正在写。\n");
    await vi.advanceTimersByTimeAsync(5000);
    expect(e.transport.callsTo("project.update")).toEqual([]);
    session.takeTheirs();
    expect(ed.text).toBe("第一段。\nLin 写的。\n");

    // Nothing unsaved: the next version is adopted into the editor and said with who and which.
    e.teammateVersion("Lin", "第一段。\nLin 又写了。\n");
    await session.follow();
    snap = session.getSnapshot();
    expect(ed.text).toBe("第一段。\nLin 又写了。\n");
    expect(snap).toMatchObject({ conflict: null, head: 3, revision: e.stored.revision, saveState: "saved" });
    expect(told.at(-1)).toBe(translate("en", "sync.arrived.pulled", { author: "Lin", n: 3 }));
  });

  it("does not follow in the middle of an input method composition", async () => {
    const e = engine();
    const { session } = open(e);
    await session.open();
    const ed = editor(e.stored.source);
    session.attachEditor(ed);
    ed.composing = true;
    e.teammateVersion("Lin", "Lin 写的。\n");
    await session.follow();
    expect(ed.text).toBe("第一段。\n");
    ed.composing = false;
    await session.follow();
    expect(ed.text).toBe("Lin 写的。\n");
  });
});
