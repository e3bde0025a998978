import { memo, useMemo, useState, type ReactNode } from "react";
import type { ProjectSummary, SearchHit } from "../shared/api/generated";
import { useApp } from "../shared/context";
import { formatFullTime, formatTime } from "../shared/i18n";
import { ContentSearch } from "../features/search";

export interface SidebarProps {
  projects: ProjectSummary[] | null;
  selectedId: string | null;
  showArchived: boolean;
  /** The sync state (and its popover), shown beside the settings link. */
  sync: ReactNode;
  onShowArchived: (v: boolean) => void;
  onSelect: (id: string) => void;
  /** Opens a content search hit: its project, at the match. */
  onOpenHit: (hit: SearchHit) => void;
  onNew: () => void;
  /** Creates the sample project in the UI language and opens it (first run). */
  onSample: () => void;
  onImport: () => void;
  onSettings: () => void;
  onHelp: () => void;
  /** Opens the workspace's performance dashboard. */
  onDashboard: () => void;
  dashboardOpen: boolean;
}

export const Sidebar = memo(function Sidebar({
  projects,
  selectedId,
  showArchived,
  sync,
  onShowArchived,
  onSelect,
  onOpenHit,
  onNew,
  onSample,
  onImport,
  onSettings,
  onHelp,
  onDashboard,
  dashboardOpen,
}: SidebarProps) {
  const { t, lang, now, mod } = useApp();
  const [query, setQuery] = useState("");
  const shown = useMemo(() => {
    const q = query.trim().toLowerCase();
    const list = (projects ?? []).filter((p) => (showArchived ? true : !p.archived));
    return q ? list.filter((p) => p.title.toLowerCase().includes(q) || p.excerpt.toLowerCase().includes(q)) : list;
  }, [projects, query, showArchived]);
  const nowMs = now();

  return (
    <aside className="sidebar" aria-label={t("projects.heading")} data-testid="sidebar">
      <header className="sidebar-header">
        <h1>{t("projects.heading")}</h1>
        <button type="button" className="primary small-btn" data-testid="new-project" onClick={onNew} title={`${mod}+N`}>
          + {t("new.label")}
        </button>
      </header>
      <div className="sidebar-search">
        <input
          type="search"
          data-testid="project-search"
          placeholder={t("projects.search")}
          aria-label={t("projects.search")}
          value={query}
          onChange={(e) => setQuery(e.target.value)}
        />
        <label className="small muted check">
          <input type="checkbox" data-testid="show-archived" checked={showArchived} onChange={(e) => onShowArchived(e.target.checked)} />
          {t("projects.showArchived")}
        </label>
      </div>
      <ContentSearch query={query} onOpen={onOpenHit} />
      {projects === null ? (
        <p className="muted small pad">{t("projects.loading")}</p>
      ) : (
        <ul className="project-list" data-testid="project-list">
          {shown.map((p) => (
            <li key={p.id} data-testid="project-item" data-archived={p.archived}>
              <button
                type="button"
                className="project"
                aria-current={p.id === selectedId ? "true" : undefined}
                onClick={() => onSelect(p.id)}
              >
                <span className="project-title">{p.title}</span>
                <span className="project-meta small muted">
                  <time dateTime={p.updatedAt} title={formatFullTime(lang, p.updatedAt)}>
                    {formatTime(lang, p.updatedAt, nowMs)}
                  </time>
                  <span aria-hidden="true"> · </span>
                  <span>{p.head > 0 ? t("project.head", { n: p.head }) : t("project.head.none")}</span>
                  {p.archived && <span> · {t("project.archivedBadge")}</span>}
                </span>
              </button>
            </li>
          ))}
        </ul>
      )}
      {projects && projects.length === 0 && (
        <div className="empty" data-testid="empty-state">
          <p className="empty-title">{t("empty.title")}</p>
          <p className="muted">{t("empty.body")}</p>
          <div className="row wrap">
            <button type="button" className="primary" data-testid="first-run-sample" onClick={onSample}>
              {t("empty.sample")}
            </button>
            <button type="button" data-testid="first-run-import" onClick={onImport}>
              {t("empty.import")}
            </button>
            <button type="button" data-testid="first-run-new" onClick={onNew}>
              {t("empty.new")}
            </button>
          </div>
          <p className="muted small">{t("empty.sample.note")}</p>
          <p className="muted small">{t("empty.shortcut", { mod })}</p>
        </div>
      )}
      {projects && projects.length > 0 && shown.length === 0 && <p className="muted small pad">{t("projects.nomatch")}</p>}
      <footer className="sidebar-footer">
        <button type="button" className="link" data-testid="open-dashboard" aria-current={dashboardOpen ? "page" : undefined} title={`${mod}+Shift+D`} onClick={onDashboard}>
          ▤ {t("sidebar.dashboard")}
        </button>
        <button type="button" className="link" data-testid="open-settings" onClick={onSettings}>
          ⚙ {t("settings.title")}
        </button>
        <button type="button" className="link" data-testid="open-help" title="F1" onClick={onHelp}>
          ? {t("help.button")}
        </button>
        {sync}
      </footer>
    </aside>
  );
});
