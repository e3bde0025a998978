// The window's centre: the performance dashboard while open, else the open project, else
// the welcome with its first keys.
import { type Ref, Suspense } from "react";
import type { BrandProfile, Project } from "../shared/api/generated";
import { useApp } from "../shared/context";
import { PerformanceDashboard } from "../features/performance";
import type { SourceTarget } from "../features/drafting";
import type { PanelTab, ProjectViewHandle, Reveal } from "../features/editor";
import type { SettingsSection } from "../features/settings";
import { ProjectView } from "./deferred";

export interface CenterProps {
  dashboard: boolean;
  selectedId: string | null;
  sidebar: boolean;
  view: Ref<ProjectViewHandle>;
  reveal: Reveal | null;
  tab: PanelTab;
  onTab: (tab: PanelTab) => void;
  brands: BrandProfile[];
  onProjectChanged: (p: Project) => void;
  onOpenSource: (target: SourceTarget) => void;
  onSettings: (section: SettingsSection) => void;
  onShowSidebar: () => void;
  onCloseDashboard: () => void;
}

export function Center({ dashboard, selectedId, sidebar, view, reveal, tab, onTab, brands, onProjectChanged, onOpenSource, onSettings, onShowSidebar, onCloseDashboard }: CenterProps) {
  const { t, mod } = useApp();
  const showSidebar = (
    <div>
      <button type="button" className="small-btn" data-testid="show-sidebar" onClick={onShowSidebar}>
        {t("projects.heading")}
      </button>
    </div>
  );
  if (dashboard) {
    return (
      <main className="center perf-dash-wrap">
        {!sidebar && showSidebar}
        <Suspense fallback={<p className="muted pad" aria-busy="true" />}>
          <PerformanceDashboard onClose={onCloseDashboard} />
        </Suspense>
      </main>
    );
  }
  if (selectedId) {
    return (
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
          onTab={onTab}
          brands={brands}
          onProjectChanged={onProjectChanged}
          onSetUpModel={() => onSettings("models")}
          onOpenSource={onOpenSource}
          onOpenMemory={() => onSettings("memory")}
          leading={
            sidebar ? undefined : (
              <button type="button" className="small-btn" data-testid="show-sidebar" title={`${mod}+\\`} onClick={onShowSidebar}>
                {t("projects.heading")}
              </button>
            )
          }
        />
      </Suspense>
    );
  }
  return (
    <main className="center welcome-wrap">
      {!sidebar && showSidebar}
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
  );
}
