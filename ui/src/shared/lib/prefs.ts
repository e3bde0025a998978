// Preferences kept in this browser profile / webview: language, theme, dismissed offers.
import { detectLang, type Lang } from "../i18n";

export type Theme = "light" | "dark" | "system";
const LANG_KEY = "inkstone.lang";
const THEME_KEY = "inkstone.theme";

function read(key: string): string | null {
  try {
    return window.localStorage.getItem(key);
  } catch {
    return null;
  }
}
function write(key: string, value: string | null) {
  try {
    if (value === null) window.localStorage.removeItem(key);
    else window.localStorage.setItem(key, value);
  } catch {
    // storage unavailable: the choice lasts for this session only
  }
}

// What the window comes back to after a reload or a restart: the last open project and
// whether the sidebar was hidden.
const LAST_PROJECT_KEY = "inkstone.lastProject";
const SIDEBAR_KEY = "inkstone.sidebar";

/** The sidebar is shown unless the person hid it. */
export function initialSidebar(): boolean {
  return read(SIDEBAR_KEY) !== "hidden";
}
export function saveSidebar(shown: boolean) {
  write(SIDEBAR_KEY, shown ? "shown" : "hidden");
}
export function lastProject(): string | null {
  return read(LAST_PROJECT_KEY);
}
export function saveLastProject(projectId: string | null) {
  write(LAST_PROJECT_KEY, projectId);
}

const LOCAL_OFFER_KEY = "inkstone.localModelOffer";

/** Whether the person dismissed the first-run offer of a local model server. */
export function localOfferDismissed(): boolean {
  return read(LOCAL_OFFER_KEY) === "dismissed";
}
export function dismissLocalOffer() {
  write(LOCAL_OFFER_KEY, "dismissed");
}

// The update notice, dismissed for one version: a newer one shows again.
const UPDATE_NOTICE_KEY = "inkstone.updateNoticeDismissed";
export function updateNoticeDismissed(version: string): boolean {
  return read(UPDATE_NOTICE_KEY) === version;
}
export function dismissUpdateNotice(version: string) {
  write(UPDATE_NOTICE_KEY, version);
}

export function initialLang(osLanguage: string | undefined): Lang {
  const saved = read(LANG_KEY);
  return saved === "zh" || saved === "en" ? saved : detectLang(osLanguage);
}
export function saveLang(lang: Lang) {
  write(LANG_KEY, lang);
}
export function initialTheme(): Theme {
  const saved = read(THEME_KEY);
  return saved === "light" || saved === "dark" ? saved : "system";
}
export function saveTheme(theme: Theme) {
  write(THEME_KEY, theme);
}
export function applyTheme(theme: Theme) {
  const root = document.documentElement;
  if (theme === "system") delete root.dataset.theme;
  else root.dataset.theme = theme;
}
export function applyLang(lang: Lang) {
  document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
}

const PANEL_TAB_KEY = "inkstone.panelTab";

/** The right-hand panel's tab, kept across reloads (a reload mid-turn comes back to it). */
export function initialPanelTab<T extends string>(tabs: readonly T[], fallback: T): T {
  const saved = read(PANEL_TAB_KEY);
  return (tabs as readonly string[]).includes(saved ?? "") ? (saved as T) : fallback;
}
export function savePanelTab(tab: string) {
  write(PANEL_TAB_KEY, tab);
}

const SESSION_KEY = "inkstone.session.";

/** The drafting session last open in a project, to come back to. */
export function lastSession(projectId: string): string | null {
  return read(SESSION_KEY + projectId);
}
export function saveLastSession(projectId: string, sessionId: string) {
  write(SESSION_KEY + projectId, sessionId);
}
