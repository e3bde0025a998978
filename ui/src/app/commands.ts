// The command palette's commands, from what the window shows (the open project, the
// templates, the listed projects) and what each command does.
import type { ContentTemplate, ProjectSummary } from "../shared/api/generated";
import type { HelpTab } from "../features/help";
import type { SettingsSection } from "../features/settings";
import { type PanelTab, type ProjectViewHandle, TABS } from "../features/editor";
import type { Lang, MessageId } from "../shared/i18n";
import type { Theme } from "../shared/lib/prefs";
import type { T } from "../shared/context";
import type { Command } from "./CommandPalette";

export interface CommandInputs {
  t: T;
  /** The modifier key's label (Ctrl or ⌘). */
  mod: string;
  lang: Lang;
  selectedId: string | null;
  templates: readonly ContentTemplate[];
  projects: readonly ProjectSummary[] | null;
  showArchived: boolean;
}

export interface CommandActions {
  newProject(templateId?: string): void;
  toggleSidebar(): void;
  openSettings(section: SettingsSection): void;
  changeLang(lang: Lang): void;
  changeTheme(theme: Theme): void;
  openDashboard(): void;
  toggleArchived(): void;
  openHelp(tab: HelpTab): void;
  /** Acts on the open project's view, if there is one. */
  onView(act: (v: ProjectViewHandle) => void): void;
  toast(text: string): void;
  selectTab(tab: PanelTab): void;
  openProject(id: string): void;
}

export function paletteCommands({ t, mod, lang, selectedId, templates, projects, showArchived }: CommandInputs, a: CommandActions): Command[] {
  const cmd = (id: string, msg: MessageId, run: () => void, shortcut?: string): Command => ({
    id,
    label: t(msg),
    name: msg,
    shortcut,
    run,
  });
  const list: Command[] = [
    cmd("new", "cmd.new", () => a.newProject(), `${mod}+N`),
    cmd("sidebar", "cmd.sidebar", () => a.toggleSidebar(), `${mod}+\\`),
    cmd("settings", "cmd.settings", () => a.openSettings("general")),
    cmd("lang", "cmd.lang", () => a.changeLang(lang === "zh" ? "en" : "zh")),
    cmd("theme-light", "cmd.themeLight", () => a.changeTheme("light")),
    cmd("theme-dark", "cmd.themeDark", () => a.changeTheme("dark")),
    cmd("theme-system", "cmd.themeSystem", () => a.changeTheme("system")),
    cmd("export", "cmd.export", () => a.openSettings("data")),
    cmd("import", "cmd.import", () => a.openSettings("data")),
    cmd("backups", "cmd.backups", () => a.openSettings("data")),
    cmd("brands", "cmd.brands", () => a.openSettings("brands")),
    cmd("templates", "cmd.templates", () => a.openSettings("templates")),
    cmd("models", "cmd.models", () => a.openSettings("models")),
    cmd("usage", "cmd.usage", () => a.openSettings("usage")),
    cmd("dashboard", "cmd.dashboard", () => a.openDashboard(), `${mod}+Shift+D`),
    cmd("archived", "cmd.archived", () => a.toggleArchived()),
    cmd("help", "cmd.help", () => a.openHelp("shortcuts"), `F1 / ${mod}+/`),
    cmd("about", "cmd.about", () => a.openHelp("about")),
    cmd("report", "cmd.report", () => a.openHelp("report")),
  ];
  if (selectedId) {
    list.unshift(
      cmd("save", "cmd.save", () => a.onView((v) => v.openSaveVersion()), `${mod}+S`),
      cmd("optimize", "ai.optimize", () => a.onView((v) => v.openOptimize()), `${mod}+Shift+O`),
      cmd("preview", "cmd.preview", () => a.onView((v) => v.togglePreview())),
      cmd("compare", "cmd.compare", () => a.onView((v) => v.compareWithHead())),
      cmd("comment", "cmd.comment", () => a.onView((v) => v.focusComment())),
      cmd("archive", "cmd.archive", () => a.onView((v) => v.toggleArchive())),
      cmd("focus-editor", "cmd.focusEditor", () => a.onView((v) => v.focusEditor())),
      cmd("compact-session", "cmd.compactSession", () => a.onView((v) => void (v.compactAi() || a.toast(t("ai.compact.unavailable"))))),
      cmd("stop-ai", "cmd.stopAi", () => a.onView((v) => void (v.stopAi() || a.toast(t("ai.stop.nothing")))), "Esc"),
      ...TABS.map((k, i) => cmd(`tab-${k}`, `cmd.tab.${k}` as MessageId, () => a.selectTab(k), k === "ai" ? `${mod}+${i + 1} / ${mod}+J` : `${mod}+${i + 1}`)),
    );
  }
  for (const tpl of templates) {
    list.push({ id: `tpl-${tpl.id}`, label: t("cmd.fromTemplate", { name: tpl.name }), keywords: "template new", run: () => a.newProject(tpl.id) });
  }
  for (const p of projects ?? []) {
    if (p.archived && !showArchived) continue;
    list.push({ id: `open-${p.id}`, label: t("cmd.open", { title: p.title }), keywords: "open project", run: () => a.openProject(p.id) });
  }
  return list;
}
