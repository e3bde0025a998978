// The window's first frame, painted by the entry (main.tsx) in plain DOM as soon as the
// first project list arrives, before React, the shell's code and the message catalog are
// in: the same markup and classes as the shell (Sidebar.tsx, Center.tsx), so when React
// mounts and replaces it (createRoot clears the container in the commit that shows the
// shell) nothing moves. It shows only what the first screen shows, with its handful of
// strings (FIRST_FRAME_TEXT, checked against the catalogs by firstFrame.test.ts).
//
// The frame is not interactive, and it does not swallow input: a click on one of its
// buttons or projects, or a key pressed while it shows, is held and given to the shell
// once React has painted (`takeOver`). Text typed into its search field is not: the field
// is read-only until the shell's replaces it.
import type { ProjectListResult, ProjectSummary } from "../shared/api/generated";
import { formatFullTime, formatTime, type Lang, type MessageId } from "../shared/i18n";
import { formatMessage } from "../shared/i18n/format";
import { byRecent, projectToReopen } from "./projects";

type FrameId =
  | "projects.heading"
  | "new.label"
  | "projects.search"
  | "projects.showArchived"
  | "project.head"
  | "project.head.none"
  | "project.archivedBadge"
  | "empty.title"
  | "empty.body"
  | "empty.sample"
  | "empty.import"
  | "empty.new"
  | "empty.sample.note"
  | "empty.shortcut"
  | "sidebar.dashboard"
  | "settings.title"
  | "help.button"
  | "welcome.title"
  | "welcome.body"
  | "welcome.key.new"
  | "welcome.key.palette"
  | "cmd.sidebar"
  | "project.opening";

/** The first frame's words, copied from the catalogs (messages/<lang>/*.json) so that the
 * frame needs neither: the test fails when a catalog's wording moves away from these. */
export const FIRST_FRAME_TEXT: Record<Lang, Record<FrameId & MessageId, string>> = {
  en: {
    "projects.heading": "Projects",
    "new.label": "New project",
    "projects.search": "Search projects",
    "projects.showArchived": "Show archived",
    "project.head": "v{n}",
    "project.head.none": "no versions yet",
    "project.archivedBadge": "archived",
    "empty.title": "No projects yet",
    "empty.body": "Start from a sample project to see what Inkstone does, import a folder of Markdown files (or an Inkstone export), or begin an empty project.",
    "empty.sample": "Start from a sample project",
    "empty.import": "Import folder",
    "empty.new": "New empty project",
    "empty.sample.note": "The sample is an ordinary project marked “Sample”: change it freely, and archive it when you are done.",
    "empty.shortcut": "{mod}+N creates a project from anywhere; {mod}+K finds any action.",
    "sidebar.dashboard": "Performance",
    "settings.title": "Settings",
    "help.button": "Help",
    "welcome.title": "Pick a project, or start a new one",
    "welcome.body": "Projects are saved on this computer. Pick one on the left to open the editor here.",
    "welcome.key.new": "New project",
    "welcome.key.palette": "Every action by name",
    "cmd.sidebar": "Toggle the projects sidebar",
    "project.opening": "Opening…",
  },
  zh: {
    "projects.heading": "项目",
    "new.label": "新建项目",
    "projects.search": "搜索项目",
    "projects.showArchived": "显示已归档",
    "project.head": "第 {n} 版",
    "project.head.none": "尚无版本",
    "project.archivedBadge": "已归档",
    "empty.title": "还没有项目",
    "empty.body": "从示例项目开始，看看 Inkstone 能做什么；或导入一个 Markdown 文件夹（或 Inkstone 导出）；或新建一个空项目。",
    "empty.sample": "从示例项目开始",
    "empty.import": "导入文件夹",
    "empty.new": "新建空项目",
    "empty.sample.note": "示例是标有“示例”的普通项目：可以随意修改，用完归档即可。",
    "empty.shortcut": "在任何位置按 {mod}+N 新建项目；按 {mod}+K 查找任何操作。",
    "sidebar.dashboard": "数据看板",
    "settings.title": "设置",
    "help.button": "帮助",
    "welcome.title": "选择一个项目，或新建一个",
    "welcome.body": "项目保存在这台电脑上。在左侧选择一个项目，编辑器会在这里打开。",
    "welcome.key.new": "新建项目",
    "welcome.key.palette": "按名称查找任何操作",
    "cmd.sidebar": "显示或隐藏项目侧栏",
    "project.opening": "正在打开…",
  },
};

export interface FirstFrameInput {
  lang: Lang;
  list: ProjectListResult;
  /** The modifier key's label ("Ctrl", "⌘"). */
  mod: string;
  now: number;
  /** The last open project, reopened at start (prefs.lastProject). */
  lastProject: string | null;
  /** The right-hand panel's saved tab: two of them widen it (App's `wide-panel`). */
  panelTab: string | null;
}

/** Attribute naming what a frame element stands for in the shell, for `takeOver`. */
const STANDS_FOR = "data-first-frame-for";

type Child = Node | string | false | null | undefined;

function el(tag: string, attrs: Record<string, string | undefined>, ...children: Child[]): HTMLElement {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) if (value !== undefined) node.setAttribute(name, value);
  // Text goes in as text nodes: project titles are the person's own text, never markup.
  for (const child of children) if (child) node.append(child);
  return node;
}

/** The first frame for `input`: the shell with the sidebar shown (a hidden sidebar is
 * React's to show), the project list as Sidebar renders it, and the centre as Center
 * does before anything opens (the welcome, or "Opening…" for the project reopened). */
export function firstFrame(input: FirstFrameInput): HTMLElement {
  const text = FIRST_FRAME_TEXT[input.lang];
  const plural = new Intl.PluralRules(input.lang);
  const say = (id: FrameId, vars: Record<string, string | number> = {}) => formatMessage(text[id], vars, plural);
  const all = [...input.list.projects].sort(byRecent);
  const shown = all.filter((p) => !p.archived);
  const reopen = projectToReopen(all, input.lastProject);
  const wide = reopen !== null && (input.panelTab === "drafts" || input.panelTab === "ai");
  const button = (standsFor: string, attrs: Record<string, string | undefined>, ...children: Child[]) =>
    el("button", { type: "button", [STANDS_FOR]: standsFor, ...attrs }, ...children);

  const item = (p: ProjectSummary, index: number) =>
    el(
      "li",
      { "data-archived": String(p.archived) },
      button(
        `project:${index}`,
        { class: "project", "aria-current": p.id === reopen ? "true" : undefined },
        el("span", { class: "project-title" }, p.title),
        el(
          "span",
          { class: "project-meta small muted" },
          el("time", { datetime: p.updatedAt, title: formatFullTime(input.lang, p.updatedAt) }, formatTime(input.lang, p.updatedAt, input.now)),
          el("span", { "aria-hidden": "true" }, " · "),
          el("span", {}, p.head > 0 ? say("project.head", { n: p.head }) : say("project.head.none")),
        ),
      ),
    );

  const empty =
    all.length === 0 &&
    el(
      "div",
      { class: "empty" },
      el("p", { class: "empty-title" }, say("empty.title")),
      el("p", { class: "muted" }, say("empty.body")),
      el(
        "div",
        { class: "row wrap" },
        button("first-run-sample", { class: "primary" }, say("empty.sample")),
        button("first-run-import", {}, say("empty.import")),
        button("first-run-new", {}, say("empty.new")),
      ),
      el("p", { class: "muted small" }, say("empty.sample.note")),
      el("p", { class: "muted small" }, say("empty.shortcut", { mod: input.mod })),
    );

  const sidebar = el(
    "aside",
    { class: "sidebar", "aria-label": say("projects.heading") },
    el(
      "header",
      { class: "sidebar-header" },
      el("h1", {}, say("projects.heading")),
      button("new-project", { class: "primary small-btn", title: `${input.mod}+N` }, `+ ${say("new.label")}`),
    ),
    el(
      "div",
      { class: "sidebar-search" },
      el("input", { placeholder: say("projects.search"), "aria-label": say("projects.search"), type: "search", readonly: "" }),
      el("label", { class: "small muted check" }, el("input", { type: "checkbox", [STANDS_FOR]: "show-archived" }), say("projects.showArchived")),
    ),
    el("ul", { class: "project-list" }, ...shown.map(item)),
    empty,
    el(
      "footer",
      { class: "sidebar-footer" },
      button("open-dashboard", { class: "link", title: `${input.mod}+Shift+D` }, `▤ ${say("sidebar.dashboard")}`),
      button("open-settings", { class: "link" }, `⚙ ${say("settings.title")}`),
      button("open-help", { class: "link", title: "F1" }, `? ${say("help.button")}`),
    ),
  );

  const center = reopen
    ? el("main", { class: "center", "aria-busy": "true" }, el("p", { class: "muted pad" }, say("project.opening")))
    : el(
        "main",
        { class: "center welcome-wrap" },
        el(
          "section",
          { class: "welcome" },
          el("h2", {}, say("welcome.title")),
          el("p", { class: "muted" }, say("welcome.body")),
          el(
            "dl",
            { class: "keys small" },
            el("dt", {}, el("kbd", {}, `${input.mod}+N`)),
            el("dd", {}, say("welcome.key.new")),
            el("dt", {}, el("kbd", {}, `${input.mod}+K`)),
            el("dd", {}, say("welcome.key.palette")),
            el("dt", {}, el("kbd", {}, `${input.mod}+\\`)),
            el("dd", {}, say("cmd.sidebar")),
          ),
        ),
      );

  return el("div", { class: `app  ${reopen ? "has-project" : ""} ${wide ? "wide-panel" : ""}`, "data-first-frame": "" }, sidebar, center);
}

/** Paints `frame` into `root` (still empty: React has not mounted) and holds the input
 * that reaches it. Returns `takeOver`, to call once the shell has replaced the frame and
 * is painted: it gives the shell the keys pressed meanwhile (in order) and the last click,
 * on the element that stands for the one clicked (the same project by its place in the
 * list, which the shell shows in the same order, or the same button). */
export function showFirstFrame(root: HTMLElement, frame: HTMLElement): () => void {
  const keys: KeyboardEventInit[] = [];
  let clicked: string | null = null;
  const onClick = (e: MouseEvent) => {
    if (!(e.target instanceof Element) || !frame.contains(e.target)) return;
    e.preventDefault();
    e.stopPropagation();
    clicked = e.target.closest(`[${STANDS_FOR}]`)?.getAttribute(STANDS_FOR) ?? clicked;
  };
  const onKey = (e: KeyboardEvent) => {
    if (!frame.isConnected || e.isComposing) return;
    e.preventDefault();
    const { key, code, ctrlKey, metaKey, shiftKey, altKey } = e;
    keys.push({ key, code, ctrlKey, metaKey, shiftKey, altKey, bubbles: true, cancelable: true });
  };
  document.addEventListener("click", onClick, true);
  window.addEventListener("keydown", onKey, true);
  root.append(frame);
  return () => {
    document.removeEventListener("click", onClick, true);
    window.removeEventListener("keydown", onKey, true);
    frame.remove();
    for (const init of keys) (document.activeElement ?? document.body).dispatchEvent(new KeyboardEvent("keydown", init));
    if (clicked === null) return;
    const project = /^project:(\d+)$/.exec(clicked);
    const target = project
      ? document.querySelectorAll<HTMLElement>('[data-testid="project-item"] button.project')[Number(project[1])]
      : document.querySelector<HTMLElement>(`[data-testid="${clicked}"]`);
    target?.click();
  };
}
