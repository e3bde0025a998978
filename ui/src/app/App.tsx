// The window's shell: what is open (a project, the dashboard, a dialog), the project list
// beside it, the app's one error banner and its toasts. The list, the library, the
// shortcuts and the palette's commands live in their own modules beside this one.
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import type { ApiClient } from "../shared/api/client";
import type { Project, ProjectListResult, SearchHit } from "../shared/api/generated";
import { ErrorBanner } from "../shared/ui/ErrorBanner";
import { Sidebar } from "./Sidebar";
import { SyncIndicator } from "../features/sync";
import { AppCtx, type Ctx } from "../shared/context";
import { type SettingsSection, LocalModelOffer } from "../features/settings";
import type { HelpTab } from "../features/help";
import { UpdateNotice } from "../features/updates";
import type { SourceTarget } from "../features/drafting";
import { type PanelTab, type ProjectViewHandle, type Reveal, TABS } from "../features/editor";
import { type Lang, modKeyLabel } from "../shared/i18n";
import { initialPanelTab, initialSidebar, saveLastProject, savePanelTab, saveSidebar, type Theme } from "../shared/lib/prefs";
import { Center } from "./Center";
import { paletteCommands } from "./commands";
import { ShellDialogs } from "./ShellDialogs";
import { useFirstScreen } from "./useFirstScreen";
import { useLanguageAndTheme } from "./useLanguageAndTheme";
import { useLibrary } from "./useLibrary";
import { useNotices } from "./useNotices";
import { projectToReopen } from "./projects";
import { useProjectList, useSampleProject } from "./useProjectList";
import { useProjectListRefresh } from "./useProjectListRefresh";
import { useShortcuts } from "./useShortcuts";

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
  /** That list, when it has already arrived: the first render shows it (and the project
   * it reopens), so React's first frame matches the entry's static one (firstFrame.ts)
   * instead of showing "Loading" in its place. */
  firstList?: ProjectListResult;
}

export function App({ client, lang: initialLang, theme: initialTheme = "system", now = Date.now, platform, firstProjects, firstList }: AppProps) {
  const { lang, theme, t, changeLang, changeTheme } = useLanguageAndTheme(initialLang, initialTheme);
  const mod = modKeyLabel(platform ?? (typeof navigator !== "undefined" ? navigator.platform : ""));

  const [showArchived, setShowArchived] = useState(false);
  const [selectedId, setSelectedId] = useState<string | null>(() => (firstList ? projectToReopen(firstList.projects) : null));
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
  const { error, showError, dismissError, toasts, toast } = useNotices();
  const [staleAddress, setStaleAddress] = useState(false);
  useEffect(() => client.onStaleAddress(() => setStaleAddress(true)), [client]);
  // Memoised so the sidebar (a memo component) does not re-render with every App render.
  const syncSlot = useMemo(() => <SyncIndicator onOpenSettings={() => setSettings("workspace")} />, []);
  const view = useRef<ProjectViewHandle>(null);

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

  const { projects, loadProjects, onProjectChanged } = useProjectList(client, firstProjects, firstList, showError, setSelectedId);
  const { brands, templates, loadLibrary } = useLibrary(client, loadProjects, showError);
  /** The first screen (the project list) is painted: what it does not need starts now. */
  const shown = useFirstScreen(projects !== null, loadLibrary);
  useProjectListRefresh(client, loadProjects);

  const onCreated = useCallback(
    (p: Project) => {
      setNewDialog(null);
      onProjectChanged(p);
      setSelectedId(p.id);
      toast(t("project.created", { title: p.title }));
    },
    [onProjectChanged, t, toast],
  );
  const createSample = useSampleProject(client, lang, onCreated, showError);

  const selectTab = useCallback((k: PanelTab) => setTab(k), []);
  const openProject = useCallback((id: string) => {
    setDashboard(false);
    setSelectedId(id);
  }, []);
  // What a palette command does to the open project; the view is only read when one runs.
  const onView = useCallback((act: (v: ProjectViewHandle) => void) => {
    if (view.current) act(view.current);
  }, []);

  const commands = useMemo(
    () =>
      paletteCommands(
        { t, mod, lang, selectedId, templates, projects, showArchived },
        // paletteCommands only builds the list: the view (a ref) is read when a command runs.
        // eslint-disable-next-line react-hooks/refs
        {
          newProject: (templateId) => setNewDialog(templateId === undefined ? {} : { templateId }),
          toggleSidebar: () => setSidebar((s) => !s),
          openSettings: setSettings,
          changeLang,
          changeTheme,
          openDashboard: () => setDashboard(true),
          toggleArchived: () => setShowArchived((s) => !s),
          openHelp: setHelp,
          onView,
          toast,
          selectTab: setTab,
          openProject,
        },
      ),
    [t, mod, lang, selectedId, templates, projects, showArchived, changeLang, changeTheme, onView, toast, openProject],
  );

  useShortcuts(
    { palette, settings, newDialog, selectedId, tab, help, dashboard },
    { setPalette, setHelp, setSettings, setNewDialog, setDashboard, setSidebar, setTab },
    view,
  );

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
        <Center
          dashboard={dashboard}
          selectedId={selectedId}
          sidebar={sidebar}
          view={view}
          reveal={reveal}
          tab={tab}
          onTab={selectTab}
          brands={brands}
          onProjectChanged={onProjectChanged}
          onOpenSource={openSource}
          onSettings={setSettings}
          onShowSidebar={() => setSidebar(true)}
          onCloseDashboard={() => setDashboard(false)}
        />
        {error && (
          <div className="error-float">
            <ErrorBanner
              error={error.error}
              retry={
                error.retry
                  ? () => {
                      const r = error.retry;
                      dismissError();
                      r?.();
                    }
                  : undefined
              }
              onDismiss={dismissError}
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
        <ShellDialogs
          help={help}
          setHelp={setHelp}
          palette={palette}
          commands={commands}
          onClosePalette={() => setPalette(false)}
          newDialog={newDialog}
          setNewDialog={setNewDialog}
          onCreated={onCreated}
          settings={settings}
          setSettings={setSettings}
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
        />
      </div>
    </AppCtx.Provider>
  );
}
