// The open project follows what sync brings in: a teammate's version, a resolution, a
// project pulled for the first time; unsaved text is never dropped and never written
// over a teammate's version.
import { act, cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { EditorView } from "@codemirror/view";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { App } from "./App";
import { ApiClient } from "../shared/api/client";
import { apiError, FakeTransport } from "../shared/api/fake";
import type { Project, SyncConflictView, SyncStatus, Version, VersionOrigin } from "../shared/api/generated";
import { asSent } from "../shared/testing/mergeRegions";
import type { Lang } from "../shared/i18n";
import { syncStoreFor } from "../features/sync";
import { loadProjectView } from "../features/editor";

// The project screen loads on demand; load it once up front, so a test's wait measures
// the app, not the first transform.
beforeAll(async () => {
  await loadProjectView();
}, 60_000);
import { NOW } from "../shared/testing/utils";

const A_PARAGRAPH = "第四段：A 加的。\n";

function proj(id: string, title: string, over: Partial<Project> = {}): Project {
  return {
    id,
    title,
    source: "",
    revision: 1,
    head: 0,
    platforms: [],
    brandProfileId: null,
    templateId: null,
    archived: false,
    createdAt: "2026-11-22T11:00:00Z",
    updatedAt: "2026-11-22T11:00:00Z",
    ...over,
  };
}

/** One data folder connected to a workspace: `pull` plays the background cycle. */
function team() {
  const projects = new Map<string, Project>([["a", proj("a", "春天的信", { source: "# 春天的信\n\n第一段。\n", head: 1 })]]);
  const versions = new Map<string, Version[]>();
  const version = (p: Project, author: string, origin: VersionOrigin): Version => ({
    id: `ver_${p.id}_${p.head}`,
    projectId: p.id,
    number: p.head,
    title: p.title,
    source: p.source,
    author,
    message: null,
    origin,
    contentHash: "",
    createdAt: new Date(NOW).toISOString(),
  });
  versions.set("a", [version(projects.get("a")!, "Boris", { type: "manual" })]);
  let contact = 0;
  /** The core's change marker: moves when sync changed projects. */
  let marker = 0;
  /** The core's local-change marker: moves on every commit of a project or a version. */
  let local = 0;
  /** The project record the last local change wrote (the core's `lastLocalChange`). */
  let lastLocal: { projectId: string; revision: number } | undefined;
  const wrote = (p: Project) => {
    local++;
    lastLocal = { projectId: p.id, revision: p.revision };
  };
  let conflicts: SyncConflictView[] = [];
  const status = (): SyncStatus => ({
    state: conflicts.length > 0 ? "conflict" : "synced",
    connected: true,
    paused: false,
    serverUrl: "http://127.0.0.1:5600",
    workspaceName: "团队",
    memberName: "Boris",
    role: "editor",
    pending: 0,
    perfPending: 0,
    perfUnavailable: false,
    perfAccountDaysLocal: 0,
    perfConflicts: 0,
    localOnlyProjects: 0,
    localOnlyVersions: 0,
    failed: 0,
    conflicts: conflicts.length,
    offline: false,
    lastContactAt: `2026-11-22T12:00:${String(contact).padStart(2, "0")}Z`,
    changes: marker,
    localChanges: local,
    asOf: 0,
    sessionActivity: 0,
    ...(lastLocal ? { lastLocalChange: lastLocal } : {}),
    jobs: [],
  });
  const get = (id: string) => {
    const p = projects.get(id);
    if (!p) throw apiError("NOT_FOUND", "no project");
    return p;
  };
  const transport = new FakeTransport()
    .on("project.list", () => ({ projects: [...projects.values()].map(({ source, ...p }) => ({ ...p, excerpt: source.slice(0, 120), nChars: source.length })) }))
    .on("project.get", ({ projectId }) => ({ ...get(projectId) }))
    .on("project.update", ({ projectId, baseRevision, source, title }) => {
      const p = get(projectId);
      if (baseRevision !== undefined && baseRevision !== p.revision) {
        throw { ...apiError("CONFLICT", "stale"), details: { current: { title: p.title, source: p.source, revision: p.revision } } };
      }
      Object.assign(p, { source: source ?? p.source, title: title ?? p.title, revision: p.revision + 1 });
      wrote(p);
      return { ...p };
    })
    .on("version.get", ({ projectId, number }) => {
      const v = (versions.get(projectId) ?? []).find((x) => x.number === number);
      if (!v) throw apiError("NOT_FOUND", "no version");
      return v;
    })
    .on("version.list", ({ projectId }) => ({
      versions: [...(versions.get(projectId) ?? [])].reverse().map(({ source, projectId: _p, ...v }) => ({ ...v, nChars: source.length })),
    }))
    .on("comment.list", () => ({ comments: [] }))
    .on("brandProfile.list", () => ({ brandProfiles: [] }))
    .on("template.list", () => ({ templates: [] }))
    .on("sync.status", status)
    .on("sync.conflicts", () => ({ conflicts }));
  /** The backend writes a new version and the working copy follows it (the core's clean pull). */
  const land = (id: string, source: string, author: string, origin: VersionOrigin) => {
    const p = projects.get(id) ?? proj(id, "夏天的信");
    Object.assign(p, { source, head: p.head + 1, revision: p.revision + 1 });
    projects.set(id, p);
    versions.set(id, [...(versions.get(id) ?? []), version(p, author, origin)]);
    contact++;
    marker++;
    wrote(p);
  };
  /** A teammate's version under the person's saved edits: the core keeps the working copy and opens a conflict. */
  const pullUnder = (id: string, source: string) => {
    const p = get(id);
    const mine = p.source;
    const theirs = { ...p, source, head: p.head + 1 };
    versions.set(id, [...(versions.get(id) ?? []), version(theirs, "Olga", { type: "pulled", serverNumber: 2, pushedBy: "mem_olga" })]);
    p.head += 1;
    contact++;
    marker++;
    wrote(p);
    conflicts = [
      asSent({
        id: "cnf_1",
        projectId: id,
        kind: "pull",
        state: "open",
        base: { title: p.title, source: "", author: "Boris", localNumber: 1 },
        mine: { title: p.title, source: mine, author: "Boris" },
        theirs: { title: p.title, source, author: "Olga", localNumber: p.head, serverNumber: 2 },
        overlaps: [],
        jobIds: [],
        createdAt: "",
        updatedAt: "",
      }),
    ];
  };
  return {
    transport,
    projects,
    pullUnder,
    /** A background cycle reached the server and brought nothing. */
    cycle: () => contact++,
    /** Another window of the data folder saved the working copy (sync moved nothing;
     * the local-change marker moved). */
    otherWindow: (id: string, source: string) => {
      const p = get(id);
      Object.assign(p, { source, revision: p.revision + 1 });
      wrote(p);
    },
    /** Another window of the data folder made a project. */
    otherWindowCreated: (p: Project) => {
      projects.set(p.id, p);
      wrote(p);
    },
    pull: (id: string, source: string) => land(id, source, "Olga", { type: "pulled", serverNumber: 2, pushedBy: "mem_olga" }),
    resolve: (id: string, source: string) => land(id, source, "Boris", { type: "syncResolution", conflictId: "cnf_1" }),
    /** A teammate's resolution of a sync conflict, pulled (the server said how it was made). */
    pullResolution: (id: string, source: string) =>
      land(id, source, "Olga", { type: "pulled", serverNumber: 2, pushedBy: "mem_olga", remoteOrigin: "syncResolution" }),
  };
}

function renderApp(transport: FakeTransport, lang: Lang = "en") {
  const client = new ApiClient(transport);
  render(<App client={client} lang={lang} now={() => NOW} platform="Linux x86_64" />);
  // What the window's sync poll does every few seconds.
  return { poll: () => act(() => syncStoreFor(client).refresh()) };
}

const editorText = () => screen.getByTestId("editor-content").textContent ?? "";
const toasts = () => screen.queryAllByTestId("toast").map((x) => x.textContent);

async function openProject() {
  await waitFor(() => expect(screen.queryAllByTestId("project-item").length).toBeGreaterThan(0));
  fireEvent.click(screen.getAllByTestId("project-item")[0].querySelector("button")!);
  await screen.findByTestId("editor-content");
  return EditorView.findFromDOM(screen.getByTestId("editor"))!;
}

afterEach(() => {
  cleanup();
  window.localStorage.removeItem("inkstone.panelTab");
  window.localStorage.removeItem("inkstone.lastProject");
  // Text an unmounted editor kept (kept.ts): each test starts without.
  for (const key of Object.keys(window.localStorage)) if (key.startsWith("inkstone.kept.")) window.localStorage.removeItem(key);
});

describe("text the editor could not store when it went away", () => {
  it("a conflict left open when the window closes comes back as the same choice, and nothing was written meanwhile", async () => {
    const b = team();
    const { poll } = renderApp(b.transport, "zh");
    const view = await openProject();
    act(() => view.dispatch({ changes: { from: "# 春天的信".length, insert: "乙" } }));
    const pulled = "# 春天的信\n\n第一段。\n" + A_PARAGRAPH;
    b.pull("a", pulled);
    await poll();
    await screen.findByTestId("conflict");
    // The window goes away with the choice open: the person's text was never stored.
    cleanup();
    expect(b.projects.get("a")!.source).toBe(pulled);
    expect(b.transport.callsTo("project.update")).toHaveLength(0);
    renderApp(b.transport, "zh");
    await openProject();
    const conflict = await screen.findByTestId("conflict");
    await waitFor(() => expect(conflict.dataset.cause).toBe("kept"));
    expect(conflict.textContent).toContain("上次关闭时你的文字");
    expect(within(conflict).getByTestId("conflict-mine").textContent).toContain("# 春天的信乙");
    expect(within(conflict).getByTestId("conflict-theirs").textContent).toContain("第四段：A 加的。");
    expect(within(conflict).queryByTestId("conflict-keep-mine")).toBeNull();
    // Keep both: a three-way merge on the base the text was written on.
    fireEvent.click(within(conflict).getByTestId("conflict-keep-both"));
    const merged = "# 春天的信乙\n\n第一段。\n" + A_PARAGRAPH;
    await waitFor(() => expect(b.projects.get("a")!.source).toBe(merged));
    await waitFor(() => expect(window.localStorage.getItem("inkstone.kept.a")).toBeNull());
  });

  it("a keystroke whose save the closing cut off is saved at the next opening; text already stored is not kept", async () => {
    const b = team();
    renderApp(b.transport);
    const view = await openProject();
    const before = b.projects.get("a")!.source;
    act(() => view.dispatch({ changes: { from: view.state.doc.length, insert: "最后一句。" } }));
    // The closing page: kept at once; the save it starts is lost with the process.
    b.transport.on("project.update", () => new Promise(() => undefined));
    cleanup();
    expect(b.projects.get("a")!.source).toBe(before);
    expect(JSON.parse(window.localStorage.getItem("inkstone.kept.a")!).mine.source).toBe(before + "最后一句。");
    const c = team();
    Object.assign(c.projects.get("a")!, b.projects.get("a")!);
    renderApp(c.transport);
    await openProject();
    await waitFor(() => expect(c.projects.get("a")!.source).toBe(before + "最后一句。"));
    expect(screen.queryByTestId("conflict")).toBeNull();
    expect(window.localStorage.getItem("inkstone.kept.a")).toBeNull();
    // Closing with everything stored keeps nothing.
    cleanup();
    expect(window.localStorage.getItem("inkstone.kept.a")).toBeNull();
  });
});

describe("the open project follows sync", () => {
  it("shows a teammate's pulled version at once, with who and which, and the next keystroke keeps it", async () => {
    const b = team();
    const { poll } = renderApp(b.transport, "zh");
    const view = await openProject();
    await waitFor(() => expect(screen.getAllByTestId("version-item")).toHaveLength(1));
    const pulled = "# 春天的信\n\n第一段。\n" + A_PARAGRAPH;
    b.pull("a", pulled);
    await poll();
    await waitFor(() => expect(editorText()).toContain("第四段：A 加的。"));
    expect(toasts()).toContain("Olga 的第 2 版已同步");
    expect(screen.getByTestId("head").textContent).toBe("第 2 版");
    // History says whose version it is, not "saved".
    await waitFor(() => expect(screen.getAllByTestId("version-item")).toHaveLength(2));
    expect(screen.getAllByTestId("version-item")[0].textContent).toContain("来自 Olga · 服务器第 2 版");
    // The next keystroke builds on the teammate's version: nothing asks to keep "mine".
    act(() => view.dispatch({ changes: { from: view.state.doc.length, insert: "乙" } }));
    await waitFor(() => expect(b.projects.get("a")!.source).toBe(pulled + "乙"), { timeout: 3000 });
    expect(b.transport.callsTo("project.update").at(-1)).toEqual({ projectId: "a", baseRevision: 2, source: pulled + "乙" });
    expect(screen.queryByTestId("conflict")).toBeNull();
  });

  it("with unsaved text, says a teammate's version arrived and keeps both (no 'keep mine', no 'another window')", async () => {
    const b = team();
    const { poll } = renderApp(b.transport);
    const view = await openProject();
    // A keystroke the autosave has not sent yet.
    act(() => view.dispatch({ changes: { from: "# 春天的信".length, insert: "乙" } }));
    b.pull("a", "# 春天的信\n\n第一段。\n" + A_PARAGRAPH);
    await poll();
    const conflict = await screen.findByTestId("conflict");
    expect(conflict.dataset.cause).toBe("teammate");
    expect(conflict.textContent).toContain("Olga’s version 2 arrived");
    expect(conflict.textContent).not.toContain("another window");
    expect(within(conflict).queryByTestId("conflict-keep-mine")).toBeNull();
    expect(within(conflict).getByTestId("conflict-keep-both").className).toContain("primary");
    // Nothing was written over the teammate's version while the person chooses.
    await new Promise((r) => setTimeout(r, 1000));
    expect(b.transport.callsTo("project.update")).toHaveLength(0);
    fireEvent.click(within(conflict).getByTestId("conflict-keep-both"));
    const merged = "# 春天的信乙\n\n第一段。\n" + A_PARAGRAPH;
    await waitFor(() => expect(b.projects.get("a")!.source).toBe(merged));
    expect(b.transport.callsTo("project.update").at(-1)).toEqual({ projectId: "a", baseRevision: 2, source: merged });
    expect(editorText()).toBe(merged.replaceAll("\n", ""));
    await waitFor(() => expect(toasts()).toContain("Merged: both sides’ changes are kept"));
  });

  it("a save refused because a teammate's version landed first names the teammate", async () => {
    const b = team();
    renderApp(b.transport, "zh");
    const view = await openProject();
    b.pull("a", "# 春天的信\n\n第一段。\n" + A_PARAGRAPH);
    // No poll in between: the autosave meets the newer working copy itself.
    act(() => view.dispatch({ changes: { from: 0, insert: "乙" } }));
    const conflict = await screen.findByTestId("conflict", {}, { timeout: 3000 });
    await waitFor(() => expect(conflict.dataset.cause).toBe("teammate"));
    expect(conflict.textContent).toContain("Olga 的第 2 版已同步");
    expect(conflict.textContent).not.toContain("另一个窗口");
    expect(within(conflict).queryByTestId("conflict-keep-mine")).toBeNull();
  });

  it("follows a resolution and lists a project pulled for the first time, without a reload", async () => {
    const b = team();
    const { poll } = renderApp(b.transport);
    await openProject();
    b.resolve("a", "合并后的文字\n");
    b.pull("b", "# 夏天的信\n");
    await poll();
    await waitFor(() => expect(editorText()).toBe("合并后的文字"));
    expect(toasts()).toContain("Now showing the resolution, version 2");
    await waitFor(() => expect(screen.getAllByTestId("project-item").map((x) => x.textContent).join()).toContain("夏天的信"));
  });

  it("a teammate's resolution arrives labelled as a resolution, in the toast and in History", async () => {
    const b = team();
    const { poll } = renderApp(b.transport);
    await openProject();
    await waitFor(() => expect(screen.getAllByTestId("version-item")).toHaveLength(1));
    b.pullResolution("a", "合并后的文字\n");
    await poll();
    await waitFor(() => expect(editorText()).toBe("合并后的文字"));
    expect(toasts()).toContain("Olga resolved a sync conflict: now showing version 2");
    await waitFor(() => expect(screen.getAllByTestId("version-item")).toHaveLength(2));
    const item = screen.getAllByTestId("version-item")[0].textContent;
    expect(item).toContain("resolved by Olga · server v2");
    expect(item).toContain("Resolved a sync conflict");
  });

  it("reads the open project and the list again only when sync's change marker moves", async () => {
    const b = team();
    const { poll } = renderApp(b.transport);
    await openProject();
    await poll();
    const gets = b.transport.callsTo("project.get").length;
    const lists = b.transport.callsTo("project.list").length;
    // Cycles that reach the server and bring nothing: each poll is one status read.
    for (let i = 0; i < 3; i++) {
      b.cycle();
      await poll();
    }
    await act(() => new Promise((r) => setTimeout(r, 50)));
    expect(b.transport.callsTo("project.get")).toHaveLength(gets);
    expect(b.transport.callsTo("project.list")).toHaveLength(lists);
    // A teammate's version moves the marker: the editor and the list read again.
    b.pull("a", "# 春天的信\n\n第一段。\n" + A_PARAGRAPH);
    await poll();
    await waitFor(() => expect(editorText()).toContain("第四段：A 加的。"));
    expect(b.transport.callsTo("project.get").length).toBeGreaterThan(gets);
    await waitFor(() => expect(b.transport.callsTo("project.list").length).toBeGreaterThan(lists));
  });

  it("adopts another window's save at once when nothing is unsaved here, saying so quietly", async () => {
    const b = team();
    const { poll } = renderApp(b.transport);
    await openProject();
    await poll();
    b.otherWindow("a", "另一个窗口写的。\n");
    // The next pushed status carries the moved local-change marker: no timer waits.
    await poll();
    await waitFor(() => expect(editorText()).toBe("另一个窗口写的。"));
    expect(toasts()).toContain("Loaded the changes saved in another window");
    expect(screen.queryByTestId("conflict")).toBeNull();
    // The next keystroke is saved on the adopted text: no conflict, nothing lost.
    const view = EditorView.findFromDOM(screen.getByTestId("editor"))!;
    act(() => view.dispatch({ changes: { from: view.state.doc.length, insert: "再写一句。" } }));
    await waitFor(() => expect(b.projects.get("a")!.source).toBe("另一个窗口写的。\n再写一句。"), { timeout: 3000 });
    expect(screen.queryByTestId("conflict")).toBeNull();
  });

  it("with unsaved text, another window's save is not adopted: both versions wait in the conflict view, and mine wins only when chosen", async () => {
    const b = team();
    const { poll } = renderApp(b.transport);
    const view = await openProject();
    await poll();
    const before = b.projects.get("a")!.source;
    // A keystroke the autosave has not sent yet, when the other window saves.
    act(() => view.dispatch({ changes: { from: view.state.doc.length, insert: "这个窗口的修改。" } }));
    b.otherWindow("a", "另一个窗口写的。\n");
    await poll();
    const conflict = await screen.findByTestId("conflict");
    expect(conflict.dataset.cause).toBe("elsewhere");
    expect(within(conflict).getByTestId("conflict-mine").textContent).toContain("这个窗口的修改。");
    expect(within(conflict).getByTestId("conflict-theirs").textContent).toContain("另一个窗口写的。");
    expect(editorText()).toBe((before + "这个窗口的修改。").replaceAll("\n", ""));
    // Nothing is written over the other window's text while the person chooses.
    await new Promise((r) => setTimeout(r, 1000));
    expect(b.transport.callsTo("project.update")).toHaveLength(0);
    expect(b.projects.get("a")!.source).toBe("另一个窗口写的。\n");
    fireEvent.click(within(conflict).getByTestId("conflict-keep-mine"));
    await waitFor(() => expect(b.projects.get("a")!.source).toBe(before + "这个窗口的修改。"));
    expect(b.transport.callsTo("project.update").at(-1)).toMatchObject({ projectId: "a", baseRevision: 2 });
  });

  it("does not read the project or the list again for its own saves while the person types", async () => {
    const b = team();
    const { poll } = renderApp(b.transport);
    const view = await openProject();
    await poll();
    const gets = b.transport.callsTo("project.get").length;
    const lists = b.transport.callsTo("project.list").length;
    for (const word of ["一", "二", "三"]) {
      const saves = b.transport.callsTo("project.update").length;
      act(() => view.dispatch({ changes: { from: view.state.doc.length, insert: word } }));
      await waitFor(() => expect(b.transport.callsTo("project.update").length).toBeGreaterThan(saves), { timeout: 3000 });
      // Each save is pushed to every window, this one too: the local marker moved.
      await poll();
    }
    await act(() => new Promise((r) => setTimeout(r, 50)));
    expect(b.projects.get("a")!.source.endsWith("一二三")).toBe(true);
    expect(b.transport.callsTo("project.get")).toHaveLength(gets);
    expect(b.transport.callsTo("project.list")).toHaveLength(lists);
    // Another window's save of the same project is read (and adopted), and listed.
    b.otherWindow("a", "另一个窗口写的。\n");
    await poll();
    await waitFor(() => expect(editorText()).toBe("另一个窗口写的。"));
    expect(b.transport.callsTo("project.get").length).toBeGreaterThan(gets);
    await waitFor(() => expect(b.transport.callsTo("project.list").length).toBeGreaterThan(lists));
  });

  it("lists a project another window of the data folder created, on the same push", async () => {
    const b = team();
    const { poll } = renderApp(b.transport);
    await openProject();
    await poll();
    b.otherWindowCreated({ ...b.projects.get("a")!, id: "c", title: "另一个窗口建的项目" });
    await poll();
    await waitFor(() => expect(screen.getAllByTestId("project-item").map((x) => x.textContent).join()).toContain("另一个窗口建的项目"));
  });

  it("a teammate's version that opens a sync conflict keeps the person's text, says so above the editor and opens the resolution from there", async () => {
    const b = team();
    const { poll } = renderApp(b.transport);
    await openProject();
    const mine = b.projects.get("a")!.source;
    b.pullUnder("a", "# 春天的信\n\n第一段。\n" + A_PARAGRAPH);
    await poll();
    const bar = await screen.findByTestId("sync-conflict-bar");
    expect(bar.textContent).toContain("Olga’s version 2 conflicts with your changes");
    await waitFor(() => expect(toasts()).toContain("Olga’s version 2 arrived; it conflicts with your changes"));
    expect(screen.getByTestId("head").textContent).toBe("v2");
    expect(editorText()).toBe(mine.replaceAll("\n", ""));
    expect(screen.queryByTestId("conflict")).toBeNull();
    fireEvent.click(within(bar).getByTestId("sync-conflict-bar-resolve"));
    expect(await screen.findByTestId("sync-conflict")).toBeTruthy();
  });
});
