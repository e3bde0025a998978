// @vitest-environment node
// The shell's plain modules: the project list's rules (projects.ts) and the palette's
// commands (commands.ts).
import { describe, expect, it } from "vitest";
import type { ContentTemplate, Project, ProjectSummary } from "../shared/api/generated";
import { type CommandActions, paletteCommands } from "./commands";
import { byRecent, projectToReopen, summaryOf, withChanged } from "./projects";

function proj(id: string, updatedAt: string, over: Partial<Project> = {}): Project {
  const p: Project = { id, title: id, source: "", revision: 1, head: 0, platforms: [], brandProfileId: null, templateId: null, archived: false, createdAt: updatedAt, updatedAt };
  return { ...p, ...over };
}

describe("project list", () => {
  it("a summary keeps the first 120 characters and counts characters, not UTF-16 units", () => {
    const s = summaryOf(proj("a", "2026-11-01T00:00:00Z", { source: "写".repeat(130) + "😀" }));
    expect(s.excerpt).toBe("写".repeat(120));
    expect(s.nChars).toBe(131);
    expect("source" in s).toBe(false);
  });

  it("a saved project moves to the top once, and the list stays most recent first", () => {
    const list: ProjectSummary[] = [summaryOf(proj("b", "2026-11-03T00:00:00Z")), summaryOf(proj("a", "2026-11-02T00:00:00Z")), summaryOf(proj("c", "2026-11-01T00:00:00Z"))];
    expect([...list].reverse().sort(byRecent).map((p) => p.id)).toEqual(["b", "a", "c"]);
    const changed = withChanged(list, proj("c", "2026-11-04T00:00:00Z", { title: "new" }));
    expect(changed.map((p) => [p.id, p.title])).toEqual([
      ["c", "new"],
      ["b", "b"],
      ["a", "a"],
    ]);
    expect(withChanged(null, proj("d", "2026-11-04T00:00:00Z")).map((p) => p.id)).toEqual(["d"]);
  });

  it("reopens the last project only while it is listed and not archived", () => {
    const list = [summaryOf(proj("a", "2026-11-01T00:00:00Z")), summaryOf(proj("z", "2026-11-01T00:00:00Z", { archived: true }))];
    expect(projectToReopen(list, "a")).toBe("a");
    expect(projectToReopen(list, "z")).toBeNull();
    expect(projectToReopen(list, "gone")).toBeNull();
    expect(projectToReopen(list, null)).toBeNull();
  });
});

describe("palette commands", () => {
  const done: string[] = [];
  const actions: CommandActions = {
    newProject: (id) => done.push(`new:${id ?? ""}`),
    toggleSidebar: () => done.push("sidebar"),
    openSettings: (s) => done.push(`settings:${s}`),
    changeLang: (l) => done.push(`lang:${l}`),
    changeTheme: (th) => done.push(`theme:${th}`),
    openDashboard: () => done.push("dashboard"),
    toggleArchived: () => done.push("archived"),
    openHelp: (tab) => done.push(`help:${tab}`),
    onView: () => done.push("view"),
    toast: (text) => done.push(`toast:${text}`),
    selectTab: (tab) => done.push(`tab:${tab}`),
    openProject: (id) => done.push(`open:${id}`),
  };
  const tpl = { id: "t1", name: "Weekly" } as ContentTemplate;
  const projects = [summaryOf(proj("a", "2026-11-01T00:00:00Z")), summaryOf(proj("z", "2026-11-01T00:00:00Z", { archived: true }))];
  const inputs = { t: (id: string, vars?: Record<string, string | number>) => (vars ? `${id} ${JSON.stringify(vars)}` : id), mod: "Ctrl", lang: "zh" as const, selectedId: null, templates: [tpl], projects, showArchived: false };

  it("with no project open: no project commands, templates and listed projects at the end, archived hidden", () => {
    const list = paletteCommands(inputs, actions);
    const ids = list.map((c) => c.id);
    expect(ids[0]).toBe("new");
    expect(ids).not.toContain("save");
    expect(ids.slice(-2)).toEqual(["tpl-t1", "open-a"]);
    expect(list.find((c) => c.id === "new")?.shortcut).toBe("Ctrl+N");
    done.length = 0;
    for (const id of ["new", "lang", "tpl-t1", "open-a", "backups", "report"]) list.find((c) => c.id === id)?.run();
    expect(done).toEqual(["new:", "lang:en", "new:t1", "open:a", "settings:data", "help:report"]);
    expect(paletteCommands({ ...inputs, showArchived: true }, actions).map((c) => c.id)).toContain("open-z");
  });

  it("with a project open: its commands come first, and each tab has its Mod+number", () => {
    const list = paletteCommands({ ...inputs, selectedId: "a" }, actions);
    expect(list[0]?.id).toBe("save");
    const tabs = list.filter((c) => c.id.startsWith("tab-"));
    expect(tabs.map((c) => c.shortcut)).toEqual(tabs.map((_, i) => (tabs[i]?.id === "tab-ai" ? `Ctrl+${i + 1} / Ctrl+J` : `Ctrl+${i + 1}`)));
    done.length = 0;
    list.find((c) => c.id === "tab-history")?.run();
    expect(done).toEqual(["tab:history"]);
  });
});
