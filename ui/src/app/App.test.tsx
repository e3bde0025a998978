import { act, cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { EditorView } from "@codemirror/view";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { App } from "./App";
import { projectToReopen } from "./projects";
import { firstFrame } from "./firstFrame";
import { ApiClient } from "../shared/api/client";
import { apiError, FakeTransport } from "../shared/api/fake";
import type { Comment, ContentTemplate, Project, ProjectCreateParams, ProjectSummary, Version } from "../shared/api/generated";
import { type Lang, replaceCatalogForTest } from "../shared/i18n";
import { en } from "../shared/i18n/en";
import { zh } from "../shared/i18n/zh";
import { NOW } from "../shared/testing/utils";
import { loadProjectView } from "../features/editor";
import { loadSettings } from "../features/settings";

// The project screen and the settings load on demand (not on the first screen); load
// them once up front, so a test's wait measures the app, not the first transform.
beforeAll(async () => {
  await Promise.all([loadProjectView(), loadSettings()]);
}, 60_000);

function proj(id: string, title: string, updatedAt: string, over: Partial<Project> = {}): Project {
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
    createdAt: updatedAt,
    updatedAt,
    ...over,
  };
}

function summary(p: Project): ProjectSummary {
  const { source, ...rest } = p;
  return { ...rest, excerpt: source.slice(0, 120), nChars: [...source].length };
}

/** An in-memory backend: projects, versions, comments, templates. */
function backend(initial: Project[] = []) {
  const projects = new Map(initial.map((p) => [p.id, { ...p }]));
  const versions = new Map<string, Version[]>();
  const comments: Comment[] = [];
  const templates: ContentTemplate[] = [
    {
      id: "tpl_1",
      name: "周报",
      titleTemplate: "周报 {date}",
      sourceTemplate: "## 本周\n",
      defaultPlatforms: [],
      tags: [],
      createdAt: "",
      updatedAt: "",
    },
  ];
  let n = 0;
  const get = (id: string) => {
    const p = projects.get(id);
    if (!p) throw apiError("NOT_FOUND", "no project");
    return p;
  };
  const transport = new FakeTransport()
    .on("project.list", () => ({ projects: [...projects.values()].map(summary) }))
    .on("project.get", ({ projectId }) => ({ ...get(projectId) }))
    .on("project.create", ({ title, templateId }) => {
      const tpl = templates.find((t) => t.id === templateId);
      const p = proj(`new-${++n}`, title ?? tpl?.titleTemplate.replace("{date}", "2026-11-22") ?? "", new Date(NOW).toISOString(), {
        source: tpl?.sourceTemplate ?? "",
        templateId: templateId ?? null,
      });
      if (!p.title) throw apiError("VALIDATION", "title must not be empty");
      projects.set(p.id, p);
      return p;
    })
    .on("project.update", ({ projectId, baseRevision, source, title }) => {
      const p = get(projectId);
      if (baseRevision !== undefined && baseRevision !== p.revision) {
        throw { ...apiError("CONFLICT", "stale"), details: { current: { title: p.title, source: p.source, revision: p.revision } } };
      }
      Object.assign(p, { source: source ?? p.source, title: title ?? p.title, revision: p.revision + 1 });
      return { ...p };
    })
    .on("version.create", ({ projectId, message }) => {
      const p = get(projectId);
      p.head += 1;
      const v: Version = {
        id: `ver_${p.head}`,
        projectId,
        number: p.head,
        title: p.title,
        source: p.source,
        author: "Lin",
        message: message ?? null,
        origin: { type: "manual" },
        contentHash: "",
        createdAt: new Date(NOW).toISOString(),
      };
      versions.set(projectId, [...(versions.get(projectId) ?? []), v]);
      return v;
    })
    .on("version.list", ({ projectId }) => ({
      versions: [...(versions.get(projectId) ?? [])].reverse().map(({ source, projectId: _p, ...v }) => ({ ...v, nChars: source.length })),
    }))
    .on("comment.list", ({ projectId }) => ({ comments: comments.filter((c) => c.projectId === projectId) }))
    .on("comment.add", ({ projectId, body, anchor }) => {
      const p = get(projectId);
      const c: Comment = {
        id: `cmt_${comments.length + 1}`,
        projectId,
        body,
        anchor: anchor ?? null,
        quote: anchor ? p.source.slice(anchor.from, anchor.to) : null,
        resolved: false,
        author: "Lin",
        createdAt: new Date(NOW).toISOString(),
        updatedAt: new Date(NOW).toISOString(),
      };
      comments.push(c);
      return c;
    })
    .on("comment.resolve", ({ commentId, resolved }) => {
      const c = comments.find((x) => x.id === commentId)!;
      c.resolved = resolved;
      return { ...c };
    })
    .on("project.archive", ({ projectId, archived }) => {
      const p = get(projectId);
      p.archived = archived;
      return { ...p };
    })
    .on("brandProfile.list", () => ({ brandProfiles: [] }))
    .on("template.list", () => ({ templates }))
    .on("workspace.get", () => ({ id: "w", name: "w", displayName: "Lin", serverUrl: null, createdAt: "" }));
  return { transport, projects, versions, comments };
}

function renderApp(transport: FakeTransport, lang: Lang = "en") {
  return render(<App client={new ApiClient(transport)} lang={lang} now={() => NOW} platform="Linux x86_64" />);
}

const items = () => screen.queryAllByTestId("project-item");
const key = (k: string, init: KeyboardEventInit = {}) => fireEvent.keyDown(window, { key: k, ctrlKey: true, ...init });

afterEach(() => {
  cleanup();
  // The right-hand panel's tab is kept across reloads; each test starts from the default.
  window.localStorage.removeItem("inkstone.panelTab");
  // So are the last open project and the sidebar's state.
  window.localStorage.removeItem("inkstone.lastProject");
  window.localStorage.removeItem("inkstone.sidebar");
});

describe("the window", () => {
  it("lists projects most recent first, searches as you type, hides archived behind a filter", async () => {
    const { transport } = backend([
      proj("a", "Old essay", "2026-11-01T08:00:00Z", { head: 3 }),
      proj("b", "Launch post", "2026-11-22T11:57:00Z", { head: 12 }),
      proj("c", "Newsletter", "2026-11-22T09:00:00Z"),
      proj("d", "Archived piece", "2026-11-22T11:59:00Z", { archived: true }),
    ]);
    renderApp(transport);
    await waitFor(() => expect(items()).toHaveLength(3));
    expect(items().map((li) => li.querySelector(".project-title")?.textContent)).toEqual(["Launch post", "Newsletter", "Old essay"]);
    expect(items()[0].textContent).toContain("3 minutes ago");
    expect(items()[0].textContent).toContain("v12");
    fireEvent.change(screen.getByTestId("project-search"), { target: { value: "news" } });
    expect(items().map((li) => li.querySelector(".project-title")?.textContent)).toEqual(["Newsletter"]);
    fireEvent.change(screen.getByTestId("project-search"), { target: { value: "" } });
    fireEvent.click(screen.getByTestId("show-archived"));
    expect(items()[0].textContent).toContain("Archived piece");
  });

  it("teaches on an empty list (new project and import folder)", async () => {
    renderApp(backend().transport, "zh");
    const empty = await screen.findByTestId("empty-state");
    expect(empty.textContent).toContain("还没有项目");
    expect(within(empty).getByText("导入文件夹")).toBeTruthy();
  });

  it("first run: the sample project is in the UI language, marked as a sample, and opens; one per click", async () => {
    for (const [lang, mark, words] of [
      ["zh", "示例 · ", "这是一个**示例项目**"],
      ["en", "Sample · ", "This is a **sample project**"],
    ] as const) {
      const { transport } = backend();
      const { unmount } = renderApp(transport, lang);
      const empty = await screen.findByTestId("empty-state");
      expect(within(empty).getByTestId("first-run-import")).toBeTruthy();
      expect(within(empty).getByTestId("first-run-new")).toBeTruthy();
      fireEvent.click(within(empty).getByTestId("first-run-sample"));
      fireEvent.click(within(empty).getByTestId("first-run-sample"));
      await waitFor(() => expect(items()[0]?.textContent).toContain(mark.trim()));
      expect(document.querySelector(".app")?.classList.contains("has-project")).toBe(true);
      const calls = transport.callsTo("project.create") as ProjectCreateParams[];
      expect(calls).toHaveLength(1);
      expect(calls[0].title?.startsWith(mark)).toBe(true);
      expect(calls[0].source).toContain(words);
      expect(calls[0].platforms).toContain("wechat");
      unmount();
    }
  });

  it("Ctrl+N opens the new-project dialog; a template fills the title; the project opens in the editor", async () => {
    const { transport } = backend();
    renderApp(transport);
    await screen.findByTestId("empty-state");
    key("n");
    const dialog = await screen.findByTestId("new-project-dialog");
    expect(document.activeElement).toBe(screen.getByTestId("new-project-title"));
    fireEvent.change(within(dialog).getByTestId("new-project-template"), { target: { value: "tpl_1" } });
    fireEvent.click(within(dialog).getByTestId("create-project"));
    await screen.findByTestId("project-view");
    expect(transport.callsTo("project.create")).toEqual([{ templateId: "tpl_1" }]);
    await waitFor(() => expect((screen.getByTestId("title-input") as HTMLInputElement).value).toBe("周报 2026-11-22"));
    expect(items()[0].textContent).toContain("周报 2026-11-22");
  });

  it("Enter during an IME composition in the new-project title creates nothing", async () => {
    const { transport } = backend();
    renderApp(transport);
    await screen.findByTestId("empty-state");
    key("n");
    const input = await screen.findByTestId("new-project-title");
    fireEvent.change(input, { target: { value: "春天" } });
    fireEvent.keyDown(input, { key: "Enter", isComposing: true });
    fireEvent.keyDown(input, { key: "Enter", keyCode: 229 });
    expect(transport.callsTo("project.create")).toHaveLength(0);
    fireEvent.keyDown(input, { key: "Enter" });
    await waitFor(() => expect(transport.callsTo("project.create")).toEqual([{ title: "春天" }]));
  });

  it("opens a project: title heading, status bar with head and word count, tabs by Ctrl+1..4, sidebar by Ctrl+\\", async () => {
    const { transport } = backend([proj("a", "春天", "2026-11-22T11:00:00Z", { source: "春眠不觉晓 hello world", head: 2 })]);
    renderApp(transport);
    await waitFor(() => expect(items()).toHaveLength(1));
    fireEvent.click(items()[0].querySelector("button")!);
    await screen.findByTestId("project-view");
    expect((screen.getByTestId("title-input") as HTMLInputElement).value).toBe("春天");
    expect(screen.getByTestId("head").textContent).toBe("v2");
    // 春眠不觉晓 hello world: mostly Chinese, so characters (5 + 10), named so.
    expect(screen.getByTestId("word-count").textContent).toBe("15 characters");
    expect(screen.getByTestId("save-state").textContent).toBe("Saved");
    expect(screen.getByTestId("tab-history").getAttribute("aria-selected")).toBe("true");
    key("4");
    expect(screen.getByTestId("tab-comments").getAttribute("aria-selected")).toBe("true");
    key("1");
    expect(await screen.findByTestId("drafts-panel")).toBeTruthy();
    key("2");
    expect(screen.getByTestId("ai-panel")).toBeTruthy();
    key("j");
    expect(screen.getByTestId("tab-history").getAttribute("aria-selected")).toBe("true");
    key("j");
    expect(screen.getByTestId("tab-ai").getAttribute("aria-selected")).toBe("true");
    key("\\");
    expect(screen.queryByTestId("sidebar")).toBeNull();
    fireEvent.click(screen.getByTestId("show-sidebar"));
    expect(screen.getByTestId("sidebar")).toBeTruthy();
    // Shortcuts do nothing while an input method composes.
    key("4", { isComposing: true });
    expect(screen.getByTestId("tab-ai").getAttribute("aria-selected")).toBe("true");
  });

  it("opening a project puts the cursor in its text; Ctrl+J moves focus to the AI composer and back", async () => {
    const { transport } = backend([proj("a", "春天", "2026-11-22T11:00:00Z", { source: "春眠不觉晓" })]);
    transport
      .on("llmProfile.list", () => ({ profiles: [{ id: "llm_1" } as never], envKeyActive: false }))
      .on("session.list", () => ({ sessions: [] }))
      .on("app.info", () => ({ version: "0.1.0", dataDir: "/data/ink", os: "Linux", schemaVersion: 2, methods: [], streamingMethods: [] }));
    renderApp(transport);
    await waitFor(() => expect(items()).toHaveLength(1));
    fireEvent.click(items()[0].querySelector("button")!);
    await screen.findByTestId("project-view", {}, { timeout: 5000 });
    const content = () => screen.getByTestId("project-view").querySelector(".cm-content");
    await waitFor(() => expect(content()?.contains(document.activeElement)).toBe(true), { timeout: 3000 });
    key("j");
    expect(screen.getByTestId("tab-ai").getAttribute("aria-selected")).toBe("true");
    await waitFor(() => expect(document.activeElement).toBe(screen.getByTestId("composer-input")), { timeout: 3000 });
    key("j");
    expect(screen.getByTestId("tab-history").getAttribute("aria-selected")).toBe("true");
    await waitFor(() => expect(content()?.contains(document.activeElement)).toBe(true));
  });

  it("edits the title in place and autosaves it with the base revision", async () => {
    const { transport, projects } = backend([proj("a", "Draft", "2026-11-22T11:00:00Z", { revision: 5 })]);
    renderApp(transport);
    await waitFor(() => expect(items()).toHaveLength(1));
    fireEvent.click(items()[0].querySelector("button")!);
    const title = await screen.findByTestId("title-input");
    fireEvent.change(title, { target: { value: "Final draft" } });
    await waitFor(() => expect(projects.get("a")!.title).toBe("Final draft"), { timeout: 3000 });
    expect(transport.callsTo("project.update")[0]).toEqual({ projectId: "a", baseRevision: 5, title: "Final draft" });
    await waitFor(() => expect(screen.getByTestId("save-state").textContent).toBe("Saved"));
  });

  it("a CONFLICT shows both versions; keep mine writes over theirs only when chosen", async () => {
    const { transport, projects } = backend([proj("a", "Draft", "2026-11-22T11:00:00Z", { source: "base", revision: 5 })]);
    renderApp(transport);
    await waitFor(() => expect(items()).toHaveLength(1));
    fireEvent.click(items()[0].querySelector("button")!);
    const title = await screen.findByTestId("title-input");
    Object.assign(projects.get("a")!, { title: "Their title", source: "their text", revision: 9 });
    fireEvent.change(title, { target: { value: "My title" } });
    const conflict = await screen.findByTestId("conflict", {}, { timeout: 3000 });
    expect(within(conflict).getByTestId("conflict-mine").textContent).toContain("My title");
    expect(within(conflict).getByTestId("conflict-theirs").textContent).toContain("their text");
    expect(screen.getByTestId("save-state").dataset.state).toBe("conflict");
    expect(projects.get("a")!.title).toBe("Their title");
    fireEvent.click(within(conflict).getByTestId("conflict-keep-mine"));
    await waitFor(() => expect(projects.get("a")!.title).toBe("My title"));
    expect(transport.callsTo("project.update").at(-1)).toEqual({ projectId: "a", baseRevision: 9, source: "base", title: "My title" });
    expect(screen.queryByTestId("conflict")).toBeNull();
  });

  it("take theirs puts their text in the editor", async () => {
    const { transport, projects } = backend([proj("a", "Draft", "2026-11-22T11:00:00Z", { source: "base", revision: 5 })]);
    renderApp(transport);
    await waitFor(() => expect(items()).toHaveLength(1));
    fireEvent.click(items()[0].querySelector("button")!);
    const title = await screen.findByTestId("title-input");
    Object.assign(projects.get("a")!, { title: "Their title", source: "their text", revision: 9 });
    fireEvent.change(title, { target: { value: "Mine" } });
    fireEvent.click(await screen.findByTestId("conflict-take-theirs", {}, { timeout: 3000 }));
    expect((screen.getByTestId("title-input") as HTMLInputElement).value).toBe("Their title");
    expect(screen.getByTestId("editor-content").textContent).toBe("their text");
    expect(projects.get("a")!.title).toBe("Their title");
  });

  it("switching to another project saves the text typed just before", async () => {
    const { transport, projects } = backend([
      proj("a", "First", "2026-11-22T11:00:00Z", { source: "one" }),
      proj("b", "Second", "2026-11-22T10:00:00Z", { source: "two" }),
    ]);
    renderApp(transport);
    await waitFor(() => expect(items()).toHaveLength(2));
    fireEvent.click(items()[0].querySelector("button")!);
    await screen.findByTestId("editor-content");
    const view = EditorView.findFromDOM(screen.getByTestId("editor"))!;
    act(() => view.dispatch({ changes: { from: 3, insert: " more" } }));
    expect(screen.getByTestId("save-state").dataset.state).toBe("dirty");
    fireEvent.click(items()[1].querySelector("button")!);
    await waitFor(() => expect(projects.get("a")!.source).toBe("one more"));
    await waitFor(() => expect(screen.getByTestId("project-view").dataset.project).toBe("b"));
  });

  it("the drafts tab recompiles after an edit is saved, and a finding selects its text in the editor", async () => {
    const { transport, projects } = backend([proj("a", "春天", "2026-11-22T11:00:00Z", { source: "春天是最佳季节", platforms: ["zhihu"] })]);
    transport.on("pipeline.compile", ({ projectId }) => {
      const p = projects.get(projectId)!;
      const at = p.source.indexOf("最佳");
      return {
        projectId,
        revision: p.revision,
        tags: ["春天"],
        findings: [
          {
            check: "ad_law",
            severity: "warn",
            platform: null,
            span: { from: at, to: at + 2 },
            location: null,
            matched: "最佳",
            message: "absolute term",
            suggestion: null,
            route: null,
          },
        ],
        drafts: [
          {
            draft: { platform: "zhihu", profileId: "zhihu@draft-v1", title: p.title, content: { type: "markdown", markdown: p.source }, nImages: 0, nLinks: 0 },
            findings: [],
          },
        ],
      };
    });
    renderApp(transport);
    await waitFor(() => expect(items()).toHaveLength(1));
    fireEvent.click(items()[0].querySelector("button")!);
    await screen.findByTestId("editor-content");
    key("1");
    await waitFor(() => expect(screen.getByTestId("preview-zhihu").textContent).toContain("春天是最佳季节"));
    expect(screen.queryByTestId("draft-tab-wechat")).toBeNull();
    const view = EditorView.findFromDOM(screen.getByTestId("editor"))!;
    // The opened project's editor has focus; happy-dom (unlike a browser) reports the
    // selection change of a focused editor's dispatch synchronously, inside the update.
    act(() => view.contentDOM.blur());
    act(() => view.dispatch({ changes: { from: 0, insert: "今年" } }));
    await waitFor(() => expect(screen.getByTestId("preview-zhihu").textContent).toContain("今年春天是最佳季节"), { timeout: 4000 });
    expect(transport.callsTo("pipeline.compile")).toHaveLength(2);
    // Typed on since the last compile: the jump still lands on the matched text.
    act(() => view.dispatch({ changes: { from: 0, insert: "啊，" } }));
    fireEvent.click(screen.getByTestId("finding-jump"));
    const sel = view.state.selection.main;
    expect(view.state.sliceDoc(sel.from, sel.to)).toBe("最佳");
  });

  it("Ctrl+S saves a version with an optional message and says so", async () => {
    const { transport } = backend([proj("a", "Draft", "2026-11-22T11:00:00Z", { source: "text" })]);
    renderApp(transport, "zh");
    await waitFor(() => expect(items()).toHaveLength(1));
    fireEvent.click(items()[0].querySelector("button")!);
    await screen.findByTestId("project-view");
    key("s");
    const msg = await screen.findByTestId("version-message");
    fireEvent.change(msg, { target: { value: "初稿" } });
    fireEvent.keyDown(msg, { key: "Enter" });
    await waitFor(() => expect(screen.getByTestId("toasts").textContent).toContain("已保存为第 1 版"));
    expect(transport.callsTo("version.create")).toEqual([{ projectId: "a", message: "初稿" }]);
    expect(screen.getByTestId("head").textContent).toBe("第 1 版");
    await waitFor(() => expect(screen.getAllByTestId("version-item")[0].textContent).toContain("初稿"));
  });

  it("Ctrl+S twice saves a version without a message", async () => {
    const { transport } = backend([proj("a", "Draft", "2026-11-22T11:00:00Z", { source: "text" })]);
    renderApp(transport);
    await waitFor(() => expect(items()).toHaveLength(1));
    fireEvent.click(items()[0].querySelector("button")!);
    await screen.findByTestId("project-view");
    key("s");
    const msg = await screen.findByTestId("version-message");
    fireEvent.keyDown(msg, { key: "s", ctrlKey: true });
    await waitFor(() => expect(transport.callsTo("version.create")).toEqual([{ projectId: "a" }]));
    await waitFor(() => expect(screen.getByTestId("toasts").textContent).toContain("Saved as version 1"));
    expect(screen.queryByTestId("save-version-dialog")).toBeNull();
  });

  it("adds a comment anchored to nothing when no text is selected, then resolves and reopens it", async () => {
    const { transport } = backend([proj("a", "Draft", "2026-11-22T11:00:00Z", { source: "text" })]);
    renderApp(transport);
    await waitFor(() => expect(items()).toHaveLength(1));
    fireEvent.click(items()[0].querySelector("button")!);
    await screen.findByTestId("project-view");
    key("4");
    await screen.findByTestId("comments-empty");
    fireEvent.change(screen.getByTestId("comment-input"), { target: { value: "Tighten this" } });
    fireEvent.click(screen.getByTestId("comment-add"));
    await waitFor(() => expect(screen.getAllByTestId("comment-item")).toHaveLength(1));
    expect(transport.callsTo("comment.add")).toEqual([{ projectId: "a", body: "Tighten this" }]);
    fireEvent.click(screen.getByTestId("comment-resolve"));
    await waitFor(() => expect(screen.queryAllByTestId("comment-item")).toHaveLength(0));
    fireEvent.click(screen.getByText("Show 1 resolved"));
    fireEvent.click(screen.getByTestId("comment-resolve"));
    await waitFor(() => expect(screen.getAllByTestId("comment-item")[0].dataset.resolved).toBe("false"));
  });

  it("the palette (Ctrl+K) reaches actions by name and Esc closes it", async () => {
    const { transport } = backend();
    renderApp(transport);
    await screen.findByTestId("empty-state");
    key("k");
    const input = await screen.findByTestId("palette-input");
    fireEvent.change(input, { target: { value: "settings" } });
    fireEvent.keyDown(input, { key: "Enter" });
    await screen.findByTestId("settings");
    fireEvent.keyDown(window, { key: "Escape" });
    await waitFor(() => expect(screen.queryByTestId("settings")).toBeNull());
    key("k");
    await screen.findByTestId("palette");
    fireEvent.keyDown(screen.getByTestId("palette-input"), { key: "Escape" });
    expect(screen.queryByTestId("palette")).toBeNull();
  });

  it("F1 and Ctrl+/ open the shortcut list from anywhere, Esc closes it; Help in the sidebar opens About", async () => {
    const { transport } = backend();
    transport.on("app.info", () => ({ version: "9.9.9", dataDir: "/d", os: "Linux", schemaVersion: 3, methods: [], streamingMethods: [] }));
    renderApp(transport);
    await screen.findByTestId("empty-state");
    fireEvent.keyDown(window, { key: "F1" });
    await screen.findByTestId("help-shortcuts-body");
    fireEvent.keyDown(window, { key: "Escape" });
    await waitFor(() => expect(screen.queryByTestId("help")).toBeNull());
    fireEvent.keyDown(window, { key: "/", ctrlKey: true });
    await screen.findByTestId("help-shortcuts-body");
    fireEvent.keyDown(window, { key: "/", ctrlKey: true });
    await waitFor(() => expect(screen.queryByTestId("help")).toBeNull());
    fireEvent.click(screen.getByTestId("open-help"));
    expect((await screen.findByTestId("help-version")).textContent).toBe("9.9.9");
  });

  it("archives the open project from the palette; it moves behind the archived filter", async () => {
    const { transport } = backend([proj("a", "Draft", "2026-11-22T11:00:00Z")]);
    renderApp(transport);
    await waitFor(() => expect(items()).toHaveLength(1));
    fireEvent.click(items()[0].querySelector("button")!);
    await screen.findByTestId("project-view");
    key("k");
    const input = await screen.findByTestId("palette-input");
    fireEvent.change(input, { target: { value: "archive this" } });
    fireEvent.keyDown(input, { key: "Enter" });
    await waitFor(() => expect(transport.callsTo("project.archive")).toEqual([{ projectId: "a", archived: true }]));
    await waitFor(() => expect(items()).toHaveLength(0));
    fireEvent.click(screen.getByTestId("show-archived"));
    expect(items()[0].textContent).toContain("archived");
  });

  it("the palette finds the AI session's actions: compact and stop", async () => {
    const { transport } = backend([proj("a", "Draft", "2026-11-22T11:00:00Z")]);
    renderApp(transport);
    await waitFor(() => expect(items()).toHaveLength(1));
    fireEvent.click(items()[0].querySelector("button")!);
    await screen.findByTestId("project-view");
    for (const [query, toast] of [
      ["compact", "No AI session can be compacted now"],
      ["stop", "Nothing of the AI is running."],
    ]) {
      key("k");
      const input = await screen.findByTestId("palette-input");
      fireEvent.change(input, { target: { value: query } });
      fireEvent.keyDown(input, { key: "Enter" });
      // No session is open here: the action says so rather than doing nothing.
      await waitFor(() => expect(document.body.textContent).toContain(toast));
    }
  });

  it("switching language in settings re-renders the UI in Chinese", async () => {
    const { transport } = backend();
    transport.on("app.info", () => ({ version: "0.1.0", dataDir: "/data/ink", os: "Linux", schemaVersion: 2, methods: [], streamingMethods: [] }));
    renderApp(transport);
    await screen.findByTestId("empty-state");
    fireEvent.click(screen.getByTestId("open-settings"));
    await waitFor(() => expect(screen.getByTestId("data-dir").textContent).toBe("/data/ink"));
    expect(screen.getByTestId("settings").textContent).toContain("INKSTONE_DATA_DIR");
    fireEvent.change(screen.getByTestId("lang-select"), { target: { value: "zh" } });
    expect(screen.getByTestId("sidebar").querySelector("h1")?.textContent).toBe("项目");
    fireEvent.change(screen.getByTestId("theme-select"), { target: { value: "dark" } });
    expect(document.documentElement.dataset.theme).toBe("dark");
  });

  it("a switch to a language whose catalog is not loaded yet shows once it arrives, everywhere: the editor's placeholder and name too; the palette finds an English name before the English catalog is in", async () => {
    // The window started in Chinese: only the Chinese catalog is loaded. The English one
    // arrives when the test says.
    let arrive: (table: Record<string, string>) => void = () => undefined;
    const restore = replaceCatalogForTest("en", () => new Promise((resolve) => (arrive = resolve)));
    try {
      const { transport } = backend([proj("a", "春天", "2026-11-22T11:00:00Z")]);
      renderApp(transport, "zh");
      await waitFor(() => expect(items()).toHaveLength(1));
      fireEvent.click(items()[0].querySelector("button")!);
      await screen.findByTestId("project-view");
      const placeholder = () => document.querySelector(".cm-placeholder")?.textContent;
      const editorName = () => screen.getByTestId("editor-content").getAttribute("aria-label");
      await waitFor(() => expect(placeholder()).toBe(zh["editor.placeholder"]));
      expect(editorName()).toBe(zh["editor.label"]);

      // "language" is the English name of the switch: it is found and chosen although the
      // English catalog is still on its way, and nothing shows message ids meanwhile.
      key("k");
      const input = await screen.findByTestId("palette-input");
      fireEvent.change(input, { target: { value: "language" } });
      fireEvent.keyDown(input, { key: "Enter" });
      await new Promise((r) => setTimeout(r, 20));
      expect(screen.getByTestId("sidebar").querySelector("h1")?.textContent).toBe("项目");
      expect(placeholder()).toBe(zh["editor.placeholder"]);

      await act(async () => arrive(en));
      await waitFor(() => expect(screen.getByTestId("sidebar").querySelector("h1")?.textContent).toBe("Projects"));
      // The editor is not rebuilt, yet it speaks English too.
      await waitFor(() => expect(placeholder()).toBe(en["editor.placeholder"]));
      expect(editorName()).toBe(en["editor.label"]);
      expect(document.documentElement.lang).toBe("en");
    } finally {
      await restore();
    }
  });

  it("shows errors from their code and hint ids in the user's language", async () => {
    const transport = new FakeTransport()
      .on("project.list", () => {
        throw { code: "STORE_LOCKED", message: "locked by pid 7", hints: [{ id: "close_other_instance", message: "x" }] };
      })
      .on("brandProfile.list", () => ({ brandProfiles: [] }))
      .on("template.list", () => ({ templates: [] }))
      .on("workspace.get", () => ({ id: "w", name: "w", displayName: "Lin", serverUrl: null, createdAt: "" }));
    renderApp(transport, "zh");
    const banner = await screen.findByTestId("error-banner");
    expect(banner.textContent).toContain("项目库正被另一个 Inkstone 窗口或进程使用。");
    expect(banner.textContent).toContain("请关闭另一个 Inkstone 窗口或命令，然后重试。");
    expect(banner.textContent).not.toContain("locked by pid");
    await act(async () => {
      fireEvent.click(within(banner).getByText("重试"));
    });
    expect(transport.callsTo("project.list").length).toBeGreaterThanOrEqual(2);
  });

  it("an address from an earlier serve launch says so over everything, not 'No projects yet'", async () => {
    const refused = () => {
      throw { code: "PERMISSION_DENIED", message: "Missing or wrong access token.", hints: [{ id: "use_launch_url", message: "x" }], messageId: "stale_address" };
    };
    const transport = new FakeTransport()
      .on("project.list", refused)
      .on("brandProfile.list", refused)
      .on("template.list", refused)
      .on("workspace.get", refused)
      .on("sync.status", refused);
    renderApp(transport, "zh");
    const screenText = await screen.findByTestId("stale-address");
    expect(screenText.getAttribute("role")).toBe("alert");
    expect(screenText.textContent).toContain("这个地址来自之前的一次启动");
    expect(screenText.textContent).toContain("inkstone-cli serve");
    expect(screen.queryByTestId("empty-state")).toBeNull();
    expect(screen.queryByTestId("sidebar")).toBeNull();
    cleanup();
    renderApp(transport, "en");
    expect((await screen.findByTestId("stale-address")).textContent).toContain("This address is from an earlier launch");
  });

  it("importing Markdown keeps the open project open and says which files were already here", async () => {
    const { transport, projects } = backend([proj("a", "春天", "2026-11-22T11:00:00Z", { source: "春眠不觉晓" })]);
    const imported = proj("m1", "散步", "2026-11-22T11:59:00Z");
    transport
      .on("backup.list", () => ({ backups: [], folder: "/data/backups" }))
      .on("app.info", () => ({ version: "0.1.0", dataDir: "/data/ink", os: "Linux", schemaVersion: 2, methods: [], streamingMethods: [] }))
      .on("import.markdown", (_params, emit) => {
        emit({ phase: "import.markdown", done: 2, total: 2 });
        const first = !projects.has("m1");
        projects.set("m1", imported);
        return first ? { projects: [summary(imported)], skipped: [], skippedLinks: [] } : { projects: [], skipped: [{ path: "/notes/walk.md", existing: summary(imported) }], skippedLinks: [] };
      });
    renderApp(transport);
    await waitFor(() => expect(items()).toHaveLength(1));
    fireEvent.click(items()[0].querySelector("button")!);
    await waitFor(() => expect(screen.getByTestId("project-view").getAttribute("data-project")).toBe("a"));
    fireEvent.click(screen.getByTestId("open-settings"));
    const dataTab = await screen.findByTestId("settings-data");
    fireEvent.click(dataTab);
    fireEvent.change(await screen.findByTestId("import-md-path"), { target: { value: "/notes/walk.md" } });
    fireEvent.click(screen.getByTestId("import-md-run"));
    await waitFor(() => expect(document.body.textContent).toContain("Imported 1 project"));
    await waitFor(() => expect(items()).toHaveLength(2));
    fireEvent.click(screen.getByTestId("import-md-run"));
    await waitFor(() => expect(document.body.textContent).toContain("“散步” is already here, so it was not imported again"));
    fireEvent.keyDown(window, { key: "Escape" });
    await waitFor(() => expect(screen.queryByTestId("settings")).toBeNull());
    expect(screen.getByTestId("project-view").getAttribute("data-project")).toBe("a");
    expect((screen.getByTestId("title-input") as HTMLInputElement).value).toBe("春天");
    expect(items()).toHaveLength(2);
  });

  it("a reload reopens the last open project and keeps the sidebar hidden", async () => {
    const { transport } = backend([proj("a", "春天", "2026-11-22T11:00:00Z", { source: "春眠不觉晓" }), proj("b", "夏天", "2026-11-22T11:30:00Z")]);
    renderApp(transport);
    await waitFor(() => expect(items()).toHaveLength(2));
    expect(screen.getByTestId("welcome")).toBeTruthy();
    fireEvent.click(items()[1].querySelector("button")!);
    await waitFor(() => expect(screen.getByTestId("project-view").getAttribute("data-project")).toBe("a"));
    key("\\");
    expect(screen.queryByTestId("sidebar")).toBeNull();
    cleanup();

    renderApp(transport);
    await waitFor(() => expect(screen.getByTestId("project-view").getAttribute("data-project")).toBe("a"));
    await waitFor(() => expect((screen.getByTestId("title-input") as HTMLInputElement).value).toBe("春天"));
    expect(screen.queryByTestId("sidebar")).toBeNull();
    expect(screen.queryByTestId("error-banner")).toBeNull();
    // Shown again, it stays shown.
    fireEvent.click(screen.getByTestId("show-sidebar"));
    cleanup();
    renderApp(transport);
    await waitFor(() => expect(screen.getByTestId("project-view").getAttribute("data-project")).toBe("a"));
    expect(screen.getByTestId("sidebar")).toBeTruthy();
  });

  it("a last project that is gone or archived opens nothing, without an error", async () => {
    window.localStorage.setItem("inkstone.lastProject", "gone");
    const { transport } = backend([proj("a", "春天", "2026-11-22T11:00:00Z")]);
    renderApp(transport);
    await waitFor(() => expect(items()).toHaveLength(1));
    expect(screen.getByTestId("welcome")).toBeTruthy();
    expect(screen.queryByTestId("project-view")).toBeNull();
    expect(screen.queryByTestId("error-banner")).toBeNull();
    expect(transport.callsTo("project.get")).toHaveLength(0);
    cleanup();

    window.localStorage.setItem("inkstone.lastProject", "z");
    renderApp(backend([proj("z", "旧稿", "2026-11-22T11:00:00Z", { archived: true })]).transport);
    await screen.findByTestId("welcome");
    await waitFor(() => expect(screen.queryByTestId("sidebar")).toBeTruthy());
    expect(screen.queryByTestId("project-view")).toBeNull();
  });

  it("projectToReopen: only a listed project that is not archived", () => {
    const list = [summary(proj("a", "A", "2026-11-22T11:00:00Z")), summary(proj("b", "B", "2026-11-22T11:00:00Z", { archived: true }))];
    expect(projectToReopen(list, "a")).toBe("a");
    expect(projectToReopen(list, "b")).toBeNull();
    expect(projectToReopen(list, "c")).toBeNull();
    expect(projectToReopen(list, null)).toBeNull();
    expect(projectToReopen([], "a")).toBeNull();
  });
});

describe("the first screen", () => {
  it("takes the project list main.tsx already asked for, instead of asking again", async () => {
    const { transport } = backend([proj("a", "Launch post", "2026-11-22T11:57:00Z")]);
    const firstProjects = Promise.resolve({ projects: [summary(proj("a", "Launch post", "2026-11-22T11:57:00Z"))] });
    render(<App client={new ApiClient(transport)} lang="en" now={() => NOW} platform="Linux x86_64" firstProjects={firstProjects} />);
    await waitFor(() => expect(items()).toHaveLength(1));
    expect(transport.callsTo("project.list")).toHaveLength(0);
  });

  it("with the list already in, the first render matches the entry's static first frame: nothing moves when React takes over", async () => {
    // The markup both show, without what only one has: the shell's test ids, input state
    // and sync indicator (last in the footer), the frame's replay attributes.
    const shape = (root: Element) => {
      const copy = root.cloneNode(true) as Element;
      copy.querySelectorAll(".sync-indicator").forEach((e) => e.remove());
      for (const e of [copy, ...copy.querySelectorAll("*")]) {
        for (const name of [...e.getAttributeNames()]) if (/^data-testid$|^data-first-frame|^readonly$|^value$|^checked$/.test(name)) e.removeAttribute(name);
      }
      return copy.outerHTML.replaceAll("<!---->", "");
    };
    for (const [lang, projects, lastOpen] of [
      ["en", [proj("a", "Launch <b>post</b>", "2026-11-22T11:57:00Z", { head: 2 }), proj("b", "Older", "2026-11-01T10:00:00Z"), proj("c", "Old", "2026-10-01T10:00:00Z", { archived: true })], null],
      ["zh", [proj("a", "发布文案", "2026-11-22T11:57:00Z")], null],
      ["en", [], null],
      ["zh", [], null],
    ] as const) {
      if (lastOpen) window.localStorage.setItem("inkstone.lastProject", lastOpen);
      const { transport } = backend([...projects]);
      const list = { projects: projects.map(summary) };
      const frame = firstFrame({ lang, list: { projects: projects.map(summary) }, mod: "Ctrl", now: NOW, lastProject: lastOpen, panelTab: null });
      const { container } = render(<App client={new ApiClient(transport)} lang={lang} now={() => NOW} platform="Linux x86_64" firstProjects={Promise.resolve(list)} firstList={list} />);
      const app = container.querySelector('[data-testid="app"]') as Element;
      expect(shape(app.querySelector("aside") as Element), `${lang} ${projects.length}`).toBe(shape(frame.querySelector("aside") as Element));
      expect(shape(app.querySelector("main") as Element)).toBe(shape(frame.querySelector("main") as Element));
      cleanup();
    }
  });

  it("a list asked for early that failed is read again, and a failure then shows as from any read", async () => {
    const { transport } = backend([proj("a", "Launch post", "2026-11-22T11:57:00Z")]);
    const failed = Promise.reject(apiError("INTERNAL", "early read failed"));
    render(<App client={new ApiClient(transport)} lang="en" now={() => NOW} platform="Linux x86_64" firstProjects={failed} />);
    await waitFor(() => expect(items()).toHaveLength(1));
    expect(transport.callsTo("project.list")).toHaveLength(1);
    expect(screen.queryByTestId("error-banner")).toBeNull();
    cleanup();

    transport.on("project.list", () => {
      throw apiError("STORE_LOCKED", "locked by pid 7", [{ id: "close_other_instance", message: "x", params: {} }]);
    });
    render(<App client={new ApiClient(transport)} lang="en" now={() => NOW} platform="Linux x86_64" firstProjects={Promise.reject(apiError("STORE_LOCKED", "locked"))} />);
    expect((await screen.findByTestId("error-banner")).textContent).toContain(en["hint.close_other_instance"]);
  });

  it("what the list does not need (brands, templates, the local model offer) is asked for only once the list is painted", async () => {
    const { transport } = backend([proj("a", "Launch post", "2026-11-22T11:57:00Z")]);
    let release: (r: { projects: ProjectSummary[] }) => void = () => undefined;
    const held = new Promise<{ projects: ProjectSummary[] }>((resolve) => {
      release = resolve;
    });
    transport.on("llmProfile.list", () => ({ profiles: [], envKeyActive: false }));
    render(<App client={new ApiClient(transport)} lang="en" now={() => NOW} platform="Linux x86_64" firstProjects={held} />);
    await screen.findByTestId("sidebar");
    await new Promise((r) => setTimeout(r, 50));
    for (const method of ["brandProfile.list", "template.list", "llmProfile.list"] as const) expect(transport.callsTo(method), method).toHaveLength(0);
    release({ projects: [summary(proj("a", "Launch post", "2026-11-22T11:57:00Z"))] });
    await waitFor(() => expect(items()).toHaveLength(1));
    await waitFor(() => {
      for (const method of ["brandProfile.list", "template.list", "llmProfile.list"] as const) expect(transport.callsTo(method), method).toHaveLength(1);
    });
  });
});
