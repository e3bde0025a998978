import { lazy, Suspense, useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from "react";
import { type ApiClient, type ClientError, onOpenedProject, toClientError } from "../shared/api/client";
import type { BrandProfile, ContentTemplate, Project, ProjectListResult, ProjectSummary, SearchHit } from "../shared/api/generated";
import { ErrorBanner } from "../shared/ui/ErrorBanner";
import { Sidebar } from "./Sidebar";
import { SyncIndicator } from "../features/sync";
import { syncStoreFor } from "../features/sync";
import { AppCtx, type Ctx } from "../shared/context";
import type { Command } from "./CommandPalette";
import { sampleProject } from "./samples";
import { Settings, type SettingsSection } from "../features/settings";
import { LocalModelOffer } from "../features/settings";
import { HelpDialog, type HelpTab } from "../features/help";
import { UpdateNotice } from "../features/updates";
import { loadPerformanceDashboard, PerformanceDashboard } from "../features/performance";
import type { SourceTarget } from "../features/drafting";
import { loadProjectView, type ProjectViewHandle, type Reveal } from "../features/editor";
import { type PanelTab, TABS } from "../features/editor";
import { type Lang, loadMessages, type MessageId, messagesLoaded, modKeyLabel, translate, useMessagesGeneration } from "../shared/i18n";
import { afterFirstScreen, firstScreenShown, markStartup } from "../shared/lib/startup";
import { applyLang, applyTheme, initialPanelTab, initialSidebar, lastProject, saveLang, saveLastProject, savePanelTab, saveSidebar, saveTheme, type Theme } from "../shared/lib/prefs";

export interface AppProps {
  client: ApiClient;
  lang: Lang;
  theme?: Theme;
  /** For "3 minutes ago"; tests pin it. */
  now?: () => number;
  platform?: string;
  /** `project.list {includeArchived: true}`, already asked for by main.tsx while the
   * window's code loaded: the first read of the list takes it instead of asking again
   * (and asks again if it failed, so errors show as from any read). */
  firstProjects?: Promise<ProjectListResult>;
}

// The editor (CodeMirror) loads while the project list is already usable.
const ProjectView = lazy(() => loadProjectView().then((m) => ({ default: m.ProjectView })));
// Not on the first screen either: the palette (Ctrl+K) and the new-project dialog (Ctrl+N).
const loadCommandPalette = () => import("./CommandPalette");
const CommandPalette = lazy(() => loadCommandPalette().then((m) => ({ default: m.CommandPalette })));
const loadNewProjectDialog = () => import("./NewProjectDialog");
const NewProjectDialog = lazy(() => loadNewProjectDialog().then((m) => ({ default: m.NewProjectDialog })));

interface Toast {
  id: number;
  text: string;
}

function summaryOf(p: Project): ProjectSummary {
  const { source, ...rest } = p;
  return { ...rest, excerpt: source.slice(0, 120), nChars: [...source].length };
}

const byRecent = (a: ProjectSummary, b: ProjectSummary) => Date.parse(b.updatedAt) - Date.parse(a.updatedAt);

/** The project to reopen at start: the last open one, if it is still listed and not
 * archived; otherwise none (the normal empty state, no error). */
export function projectToReopen(projects: readonly ProjectSummary[], saved: string | null = lastProject()): string | null {
  if (!saved) return null;
  const p = projects.find((x) => x.id === saved);
  return p && !p.archived ? p.id : null;
}

export function App({ client, lang: initialLang, theme: initialTheme = "system", now = Date.now, platform, firstProjects }: AppProps) {
  const [lang, setLang] = useState<Lang>(initialLang);
  const [theme, setTheme] = useState<Theme>(initialTheme);
  // A catalog's arrival gives `t` a new identity, so everything worded from it (the
  // context's consumers, the editor's placeholder) words itself again.
  const messages = useMessagesGeneration();
  // eslint-disable-next-line react-hooks/exhaustive-deps -- what `translate` returns changes when a catalog arrives
  const t = useCallback((id: MessageId, vars?: Record<string, string | number>) => translate(lang, id, vars), [lang, messages]);
  const mod = modKeyLabel(platform ?? (typeof navigator !== "undefined" ? navigator.platform : ""));

  const [projects, setProjects] = useState<ProjectSummary[] | null>(null);
  const [showArchived, setShowArchived] = useState(false);
  const [selectedId, setSelectedId] = useState<string | null>(null);
  /** The performance dashboard fills the centre while open; opening a project closes it. */
  const [dashboard, setDashboard] = useState(false);
  /** Where to show the project that a search hit opened. */
  const [reveal, setReveal] = useState<Reveal | null>(null);
  const openSource = useCallback((target: SourceTarget) => {
    setDashboard(false);
    setSelectedId(target.projectId);
    setReveal((r) => ({ projectId: target.projectId, span: target.span, version: target.version, commentId: target.commentId, seq: (r?.seq ?? 0) + 1 }));
  }, []);
  const openHit = useCallback((hit: SearchHit) => openSource(hit), [openSource]);
  const [sidebar, setSidebar] = useState(initialSidebar);
  const [tab, setTab] = useState<PanelTab>(() => initialPanelTab(TABS, "history"));
  const [palette, setPalette] = useState(false);
  const [settings, setSettings] = useState<SettingsSection | null>(null);
  const [help, setHelp] = useState<HelpTab | null>(null);
  const [newDialog, setNewDialog] = useState<{ templateId?: string } | null>(null);
  const [error, setError] = useState<{ error: ClientError; retry?: () => void } | null>(null);
  const [staleAddress, setStaleAddress] = useState(false);
  useEffect(() => client.onStaleAddress(() => setStaleAddress(true)), [client]);
  const [toasts, setToasts] = useState<Toast[]>([]);
  const [brands, setBrands] = useState<BrandProfile[]>([]);
  const [templates, setTemplates] = useState<ContentTemplate[]>([]);
  // Memoised so the sidebar (a memo component) does not re-render with every App render.
  const syncSlot = useMemo(() => <SyncIndicator onOpenSettings={() => setSettings("workspace")} />, []);
  const view = useRef<ProjectViewHandle>(null);
  const toastId = useRef(0);
  /** Until the first project list arrives, the last open project is still to reopen. */
  const reopenPending = useRef(true);
  const primedProjects = useRef(firstProjects);
  /** The first screen (the project list) is painted: what it does not need starts now. */
  const [shown, setShown] = useState(false);

  useEffect(() => {
    applyTheme(theme);
  }, [theme]);
  useEffect(() => {
    applyLang(lang);
  }, [lang]);
  useEffect(() => {
    savePanelTab(tab);
  }, [tab]);
  useEffect(() => {
    saveSidebar(sidebar);
  }, [sidebar]);
  useEffect(() => {
    // Only an open project is remembered: the start, before the reopen, is not a choice.
    if (selectedId) saveLastProject(selectedId);
  }, [selectedId]);

  const toast = useCallback((text: string) => {
    const id = ++toastId.current;
    setToasts((l) => [...l.slice(-2), { id, text }]);
    setTimeout(() => setToasts((l) => l.filter((x) => x.id !== id)), 4000);
  }, []);
  const showError = useCallback((e: unknown, retry?: () => void) => setError({ error: toClientError(e), retry }), []);

  const loadProjects = useCallback(
    function load(quiet = false): Promise<void> {
      const read = () => client.call("project.list", { includeArchived: true });
      const primed = primedProjects.current;
      primedProjects.current = undefined;
      return (primed ? primed.catch(read) : read()).then(
        (r) => {
          markStartup("page.list");
          const list = r.projects.sort(byRecent);
          setProjects(list);
          if (reopenPending.current) {
            reopenPending.current = false;
            const reopen = projectToReopen(list);
            // A project the person opened meanwhile stays open.
            if (reopen) setSelectedId((cur) => cur ?? reopen);
          }
        },
        (e) => {
          setProjects((p) => p ?? []);
          // A background refresh (after sync) that fails waits for the next one.
          if (!quiet) showError(e, () => void load());
        },
      );
    },
    [client, showError],
  );

  const loadLibrary = useCallback(
    async function library(): Promise<void> {
      try {
        const [b, tp] = await Promise.all([client.call("brandProfile.list", {}), client.call("template.list", {})]);
        setBrands(b.brandProfiles);
        setTemplates(tp.templates);
      } catch (e) {
        // Retry reads the projects again too: a store held by another process (the CLI)
        // failed both, and this banner is the one left on screen.
        showError(e, () => {
          void loadProjects();
          void library();
        });
      }
    },
    [client, loadProjects, showError],
  );

  useEffect(() => {
    markStartup("page.mounted");
    void loadProjects();
  }, [client, loadProjects]);

  // The first screen is the project list: once it is painted, the shell hears of it, and
  // what the list does not need starts: the brands and templates, the local model offer,
  // and (a moment later) the code of what is not on the first screen, so opening a
  // project, the palette, a new project or the dashboard is instant.
  const listed = projects !== null;
  useEffect(() => {
    if (!listed) return;
    firstScreenShown();
    return afterFirstScreen(() => setShown(true));
  }, [listed]);
  useEffect(() => {
    if (!shown) return;
    void loadLibrary();
    const idle = setTimeout(() => {
      void loadProjectView();
      void loadCommandPalette();
      void loadNewProjectDialog();
      void loadPerformanceDashboard();
    }, 300);
    return () => clearTimeout(idle);
  }, [shown, loadLibrary]);

  // Sync may have brought projects (a first pull of a teammate's project, new heads), or
  // another window of this data folder saved one (the engine pushes its local-change
  // marker): the list reads itself again, without a reload.
  useEffect(() => {
    const store = syncStoreFor(client);
    let { changes, local } = store.getSnapshot();
    return store.subscribe(() => {
      const now = store.getSnapshot();
      if (now.changes === changes && now.local === local) return;
      ({ changes, local } = now);
      void loadProjects(true);
    });
  }, [client, loadProjects]);

  // A Markdown file given to a later launch became a project (the desktop shell imported
  // it): the list reads itself again and the project opens.
  useEffect(
    () =>
      onOpenedProject((projectId) => {
        void loadProjects(true).then(() => {
          if (projectId) setSelectedId(projectId);
        });
      }),
    [loadProjects],
  );

  const onProjectChanged = useCallback((p: Project) => {
    setProjects((list) => {
      const s = summaryOf(p);
      const rest = (list ?? []).filter((x) => x.id !== p.id);
      return [s, ...rest].sort(byRecent);
    });
  }, []);

  const onCreated = useCallback(
    (p: Project) => {
      setNewDialog(null);
      onProjectChanged(p);
      setSelectedId(p.id);
      toast(t("project.created", { title: p.title }));
    },
    [onProjectChanged, t, toast],
  );

  // First run: the sample project in the UI's language, opened at once.
  const sampleBusy = useRef(false);
  const createSample = useCallback(() => {
    if (sampleBusy.current) return;
    sampleBusy.current = true;
    client
      .call("project.create", sampleProject(lang))
      .then(onCreated, (e) => showError(e))
      .finally(() => {
        sampleBusy.current = false;
      });
  }, [client, lang, onCreated, showError]);

  // The other language's catalog loads on the first switch to it; the switch shows once it
  // is in (a catalog that fails to load still switches: ids show, as at start).
  const langWanted = useRef(initialLang);
  const changeLang = useCallback((l: Lang) => {
    langWanted.current = l;
    saveLang(l);
    const apply = () => {
      // Two quick switches: the last one wins, whichever catalog arrives last.
      if (langWanted.current === l) setLang(l);
    };
    if (messagesLoaded(l)) apply();
    else loadMessages(l).then(apply, apply);
  }, []);
  const changeTheme = useCallback((th: Theme) => {
    setTheme(th);
    saveTheme(th);
  }, []);

  const selectTab = useCallback((k: PanelTab) => setTab(k), []);
  const openProject = useCallback((id: string) => {
    setDashboard(false);
    setSelectedId(id);
  }, []);
  // What a palette command does to the open project; the view is only read when one runs.
  const onView = useCallback((act: (v: ProjectViewHandle) => void) => {
    if (view.current) act(view.current);
  }, []);

  const commands = useMemo<Command[]>(() => {
    const cmd = (id: string, msg: MessageId, run: () => void, shortcut?: string): Command => ({
      id,
      label: t(msg),
      name: msg,
      shortcut,
      run,
    });
    const list: Command[] = [
      cmd("new", "cmd.new", () => setNewDialog({}), `${mod}+N`),
      cmd("sidebar", "cmd.sidebar", () => setSidebar((s) => !s), `${mod}+\\`),
      cmd("settings", "cmd.settings", () => setSettings("general")),
      cmd("lang", "cmd.lang", () => changeLang(lang === "zh" ? "en" : "zh")),
      cmd("theme-light", "cmd.themeLight", () => changeTheme("light")),
      cmd("theme-dark", "cmd.themeDark", () => changeTheme("dark")),
      cmd("theme-system", "cmd.themeSystem", () => changeTheme("system")),
      cmd("export", "cmd.export", () => setSettings("data")),
      cmd("import", "cmd.import", () => setSettings("data")),
      cmd("backups", "cmd.backups", () => setSettings("data")),
      cmd("brands", "cmd.brands", () => setSettings("brands")),
      cmd("templates", "cmd.templates", () => setSettings("templates")),
      cmd("models", "cmd.models", () => setSettings("models")),
      cmd("usage", "cmd.usage", () => setSettings("usage")),
      cmd("dashboard", "cmd.dashboard", () => setDashboard(true), `${mod}+Shift+D`),
      cmd("archived", "cmd.archived", () => setShowArchived((s) => !s)),
      cmd("help", "cmd.help", () => setHelp("shortcuts"), `F1 / ${mod}+/`),
      cmd("about", "cmd.about", () => setHelp("about")),
      cmd("report", "cmd.report", () => setHelp("report")),
    ];
    if (selectedId) {
      list.unshift(
        cmd("save", "cmd.save", () => onView((v) => v.openSaveVersion()), `${mod}+S`),
        cmd("optimize", "ai.optimize", () => onView((v) => v.openOptimize()), `${mod}+Shift+O`),
        cmd("preview", "cmd.preview", () => onView((v) => v.togglePreview())),
        cmd("compare", "cmd.compare", () => onView((v) => v.compareWithHead())),
        cmd("comment", "cmd.comment", () => onView((v) => v.focusComment())),
        cmd("archive", "cmd.archive", () => onView((v) => v.toggleArchive())),
        cmd("focus-editor", "cmd.focusEditor", () => onView((v) => v.focusEditor())),
        cmd("compact-session", "cmd.compactSession", () => onView((v) => void (v.compactAi() || toast(t("ai.compact.unavailable"))))),
        cmd("stop-ai", "cmd.stopAi", () => onView((v) => void (v.stopAi() || toast(t("ai.stop.nothing")))), "Esc"),
        ...TABS.map((k, i) => cmd(`tab-${k}`, `cmd.tab.${k}` as MessageId, () => setTab(k), k === "ai" ? `${mod}+${i + 1} / ${mod}+J` : `${mod}+${i + 1}`)),
      );
    }
    for (const tpl of templates) {
      list.push({ id: `tpl-${tpl.id}`, label: t("cmd.fromTemplate", { name: tpl.name }), keywords: "template new", run: () => setNewDialog({ templateId: tpl.id }) });
    }
    for (const p of projects ?? []) {
      if (p.archived && !showArchived) continue;
      list.push({ id: `open-${p.id}`, label: t("cmd.open", { title: p.title }), keywords: "open project", run: () => openProject(p.id) });
    }
    return list;
  }, [t, mod, lang, selectedId, templates, projects, showArchived, changeLang, changeTheme, onView, toast, openProject]);

  // Global shortcuts. Nothing acts during an input-method composition.
  const stateRef = useRef({ palette, settings, newDialog, selectedId, tab, help, dashboard });
  useLayoutEffect(() => {
    stateRef.current = { palette, settings, newDialog, selectedId, tab, help, dashboard };
  });
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.isComposing || e.keyCode === 229) return;
      const s = stateRef.current;
      const modKey = e.ctrlKey || e.metaKey;
      const k = e.key.toLowerCase();
      if (modKey && !e.altKey && !e.shiftKey && k === "k") {
        e.preventDefault();
        setPalette((p) => !p);
        return;
      }
      // The shortcut list, from anywhere (F1, or Mod+/ where F1 is taken).
      if ((e.key === "F1" && !modKey) || (modKey && !e.altKey && e.key === "/")) {
        e.preventDefault();
        setPalette(false);
        setHelp((h) => (h === "shortcuts" ? null : "shortcuts"));
        return;
      }
      if (e.key === "Escape") {
        // A form or overlay inside handled it (closing itself, not everything).
        if (e.defaultPrevented) return;
        // The sync popover closes itself (its own listener), and only itself.
        if (document.querySelector("[data-testid=sync-popover]")) return;
        if (s.palette) setPalette(false);
        else if (s.help) setHelp(null);
        else if (s.settings) setSettings(null);
        else if (s.newDialog) setNewDialog(null);
        else if (s.dashboard) setDashboard(false);
        // Esc stops the AI first when it runs, then closes what is open.
        else if (view.current?.stopAi()) e.preventDefault();
        else if (view.current?.closeOverlay()) e.preventDefault();
        return;
      }
      if (s.palette || s.settings || s.newDialog || s.help) return;
      if (!modKey || e.altKey) return;
      if (k === "d" && e.shiftKey) {
        e.preventDefault();
        setDashboard((d) => !d);
        return;
      }
      if (k === "o" && e.shiftKey && s.selectedId) {
        e.preventDefault();
        view.current?.openOptimize();
        return;
      }
      if (k === "s" && !e.shiftKey) {
        e.preventDefault();
        // In the save dialog, the dialog's own handler confirms.
        if ((e.target as HTMLElement | null)?.dataset?.testid !== "version-message") view.current?.openSaveVersion();
      } else if (k === "n" && !e.shiftKey) {
        e.preventDefault();
        setNewDialog({});
      } else if (e.key === "\\" || e.code === "Backslash") {
        e.preventDefault();
        setSidebar((v) => !v);
      } else if (k === "j" && !e.shiftKey && s.selectedId) {
        e.preventDefault();
        // Focus follows: into the AI panel's composer (a task typed next goes there, not
        // into the article), and back into the editor when the panel goes.
        const toAi = s.tab !== "ai";
        setTab(toAi ? "ai" : "history");
        if (toAi) view.current?.focusAi();
        else view.current?.focusEditor();
      } else if (/^[1-5]$/.test(e.key) && s.selectedId) {
        e.preventDefault();
        setTab(TABS[Number(e.key) - 1]);
      }
    };
    window.addEventListener("keydown", onKey, true);
    return () => window.removeEventListener("keydown", onKey, true);
  }, []);

  const ctx = useMemo<Ctx>(() => ({ client, lang, t, mod, now, toast, showError }), [client, lang, t, mod, now, toast, showError]);

  // A page whose access token the backend refuses can do nothing: say so over everything.
  if (staleAddress) {
    return (
      <main className="stale-address" role="alert" data-testid="stale-address">
        <h1>{t("stale.title")}</h1>
        <p>{t("stale.body")}</p>
        <p className="muted small">{t("stale.why")}</p>
      </main>
    );
  }

  return (
    <AppCtx.Provider value={ctx}>
      <div className={`app ${sidebar ? "" : "no-sidebar"} ${selectedId ? "has-project" : ""} ${selectedId && (tab === "drafts" || tab === "ai") ? "wide-panel" : ""}`} data-testid="app">
        {sidebar && (
          <Sidebar
            projects={projects}
            selectedId={selectedId}
            showArchived={showArchived}
            sync={syncSlot}
            onShowArchived={setShowArchived}
            onSelect={openProject}
            onOpenHit={openHit}
            onNew={() => setNewDialog({})}
            onSample={createSample}
            onImport={() => setSettings("data")}
            onSettings={() => setSettings("general")}
            onHelp={() => setHelp("about")}
            onDashboard={() => setDashboard(true)}
            dashboardOpen={dashboard}
          />
        )}
        {dashboard ? (
          <main className="center perf-dash-wrap">
            {!sidebar && (
              <div>
                <button type="button" className="small-btn" data-testid="show-sidebar" onClick={() => setSidebar(true)}>
                  {t("projects.heading")}
                </button>
              </div>
            )}
            <Suspense fallback={<p className="muted pad" aria-busy="true" />}>
              <PerformanceDashboard onClose={() => setDashboard(false)} />
            </Suspense>
          </main>
        ) : selectedId ? (
          <Suspense
            fallback={
              <main className="center" aria-busy="true">
                <p className="muted pad">{t("project.opening")}</p>
              </main>
            }
          >
            <ProjectView
              key={selectedId}
              ref={view}
              projectId={selectedId}
              reveal={reveal?.projectId === selectedId ? reveal : null}
              tab={tab}
              onTab={selectTab}
              brands={brands}
              onProjectChanged={onProjectChanged}
              onSetUpModel={() => setSettings("models")}
              onOpenSource={openSource}
              onOpenMemory={() => setSettings("memory")}
              leading={
                sidebar ? undefined : (
                  <button type="button" className="small-btn" data-testid="show-sidebar" title={`${mod}+\\`} onClick={() => setSidebar(true)}>
                    {t("projects.heading")}
                  </button>
                )
              }
            />
          </Suspense>
        ) : (
          <main className="center welcome-wrap">
            {!sidebar && (
              <div>
                <button type="button" className="small-btn" data-testid="show-sidebar" onClick={() => setSidebar(true)}>
                  {t("projects.heading")}
                </button>
              </div>
            )}
            <section className="welcome" data-testid="welcome">
              <h2>{t("welcome.title")}</h2>
              <p className="muted">{t("welcome.body")}</p>
              <dl className="keys small">
                <dt>
                  <kbd>{mod}+N</kbd>
                </dt>
                <dd>{t("welcome.key.new")}</dd>
                <dt>
                  <kbd>{mod}+K</kbd>
                </dt>
                <dd>{t("welcome.key.palette")}</dd>
                <dt>
                  <kbd>{mod}+\</kbd>
                </dt>
                <dd>{t("cmd.sidebar")}</dd>
              </dl>
            </section>
          </main>
        )}
        {error && (
          <div className="error-float">
            <ErrorBanner
              error={error.error}
              retry={
                error.retry
                  ? () => {
                      const r = error.retry;
                      setError(null);
                      r?.();
                    }
                  : undefined
              }
              onDismiss={() => setError(null)}
            />
          </div>
        )}
        {shown && !settings && <LocalModelOffer onSetUp={() => setSettings("models")} />}
        {!help && <UpdateNotice onDetails={() => setHelp("about")} />}
        <div className="toasts" role="status" aria-live="polite" data-testid="toasts">
          {toasts.map((x) => (
            <div key={x.id} className="toast" data-testid="toast">
              {x.text}
            </div>
          ))}
        </div>
        {help && (
          <Suspense fallback={null}>
            <HelpDialog tab={help} onTab={setHelp} onClose={() => setHelp(null)} />
          </Suspense>
        )}
        {palette && (
          <Suspense fallback={null}>
            <CommandPalette commands={commands} onClose={() => setPalette(false)} />
          </Suspense>
        )}
        {newDialog && (
          <Suspense fallback={null}>
            <NewProjectDialog
              templates={templates}
              brands={brands}
              initialTemplateId={newDialog.templateId}
              onCreated={onCreated}
              onClose={() => setNewDialog(null)}
            />
          </Suspense>
        )}
        {settings && (
          <Suspense fallback={null}>
            <Settings
              section={settings}
              onSection={setSettings}
              lang={lang}
              theme={theme}
              onLang={changeLang}
              onTheme={changeTheme}
              brands={brands}
              templates={templates}
              onLibraryChanged={() => void loadLibrary()}
              onDataChanged={(replaced) => {
                void loadProjects();
                void loadLibrary();
                // An import adds projects: the open one stays open. A restore replaced
                // everything, so the open project may be gone or older.
                if (replaced) {
                  setSelectedId(null);
                  saveLastProject(null);
                }
              }}
              onNewFromTemplate={(id) => {
                setSettings(null);
                setNewDialog({ templateId: id });
              }}
              onClose={() => setSettings(null)}
            />
          </Suspense>
        )}
      </div>
    </AppCtx.Provider>
  );
}
