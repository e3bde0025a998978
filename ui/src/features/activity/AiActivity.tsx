// The AI activity view: one row per AI change accepted or rejected (`aiActivity.list`),
// newest first, with filters; ↑/↓ (Home/End) move the selection, Enter opens the
// selected change's diff and Escape closes it; "Export CSV" asks the engine for the
// CSV of every matching row (`aiActivity.export`) and saves it as a file.

import { useId, useMemo, useRef, useState, type KeyboardEvent } from "react";
import { toClientError } from "../../shared/api/client";
import { saveCsv } from "../../shared/lib/files";
import { exportActivity } from "./data";
import type { ActivityScope, AiActivityFilter, Decision } from "../../shared/api/generated";
import { useMethod } from "../../shared/api/query";
import { ErrorBanner } from "../../shared/ui/ErrorBanner";
import { useApp } from "../../shared/context";
import { Row, RowDiff } from "./ActivityRow";

/** Rows one page shows; the engine says when more match. */
export const PAGE = 500;

export interface AiActivityProps {
  /** One project's activity; absent: the workspace's, with a project filter. */
  projectId?: string;
  /** `local` (this data folder, the default) or `workspace` (the workspace server's
   * shared activity: owners see every member's, editors their own). */
  scope?: ActivityScope;
}

interface Filters {
  projectId: string;
  person: string;
  model: string;
  from: string;
  to: string;
  decision: "" | Decision;
}

const NO_FILTERS: Filters = { projectId: "", person: "", model: "", from: "", to: "", decision: "" };

/** The filter as the engine takes it: dates are whole UTC days, `to` includes its day. */
export function toFilter(f: Filters, projectId?: string): AiActivityFilter {
  const filter: AiActivityFilter = {};
  const project = projectId ?? f.projectId;
  if (project) filter.projectId = project;
  if (f.person.trim()) filter.person = f.person.trim();
  if (f.model.trim()) filter.model = f.model.trim();
  if (f.from) filter.from = `${f.from}T00:00:00Z`;
  if (f.to) filter.to = new Date(Date.parse(`${f.to}T00:00:00Z`) + 86_400_000).toISOString();
  if (f.decision) filter.decision = f.decision;
  return filter;
}

export function AiActivity({ projectId, scope = "local" }: AiActivityProps) {
  const { t, client, toast, showError } = useApp();
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const filter = useMemo(() => toFilter(filters, projectId), [filters, projectId]);
  // The workspace's activity says so; the local one is the engine's default.
  const scoped = scope === "workspace" ? { scope } : {};
  const list = useMethod("aiActivity.list", { filter, limit: PAGE, ...scoped }, { keepPrevious: true });
  const projects = useMethod("project.list", {}, { enabled: projectId === undefined });
  const page = list.data ?? null;
  const error = list.error ? toClientError(list.error) : null;
  const [selected, setSelected] = useState(0);
  const [open, setOpen] = useState<string | null>(null);
  const [exporting, setExporting] = useState(false);
  const listId = useId();
  const listRef = useRef<HTMLUListElement>(null);
  const rows = page?.rows ?? [];
  const current = Math.min(selected, Math.max(0, rows.length - 1));
  const filtered = JSON.stringify(filters) !== JSON.stringify(NO_FILTERS);

  const set = (patch: Partial<Filters>) => {
    setFilters((f) => ({ ...f, ...patch }));
    setSelected(0);
    setOpen(null);
  };

  const onKey = (e: KeyboardEvent) => {
    if (e.nativeEvent.isComposing || rows.length === 0) return;
    const move = (to: number) => {
      e.preventDefault();
      const next = Math.max(0, Math.min(rows.length - 1, to));
      setSelected(next);
      listRef.current?.querySelector(`[data-index="${next}"]`)?.scrollIntoView?.({ block: "nearest" });
    };
    if (e.key === "ArrowDown") move(current + 1);
    else if (e.key === "ArrowUp") move(current - 1);
    else if (e.key === "Home") move(0);
    else if (e.key === "End") move(rows.length - 1);
    else if (e.key === "Enter") {
      e.preventDefault();
      const id = rows[current]?.id ?? null;
      setOpen((o) => (o === id ? null : id));
    } else if (e.key === "Escape" && open) {
      e.preventDefault();
      e.stopPropagation();
      setOpen(null);
    }
  };

  const exportCsv = async () => {
    setExporting(true);
    try {
      const result = await exportActivity(client, { filter, ...scoped });
      saveCsv(result.csv, "ai-activity");
      toast(t("aiActivity.exported", { n: result.nRows }));
    } catch (e) {
      showError(e, () => void exportCsv());
    } finally {
      setExporting(false);
    }
  };

  return (
    <section className="ai-activity form" data-testid={scope === "workspace" ? "ai-activity-workspace" : "ai-activity"}>
      <p className="small muted">{t(scope === "workspace" ? "aiActivity.workspaceHelp" : "aiActivity.help")}</p>
      <div className="row wrap ai-activity-filters" data-testid="ai-activity-filters">
        {projectId === undefined && (
          <label className="field">
            <span className="small muted">{t("aiActivity.filter.project")}</span>
            <select data-testid="filter-project" value={filters.projectId} onChange={(e) => set({ projectId: e.target.value })}>
              <option value="">{t("aiActivity.filter.anyProject")}</option>
              {(projects.data?.projects ?? []).map((p) => (
                <option key={p.id} value={p.id}>
                  {p.title}
                </option>
              ))}
            </select>
          </label>
        )}
        <label className="field">
          <span className="small muted">{t("aiActivity.filter.person")}</span>
          <input data-testid="filter-person" value={filters.person} onChange={(e) => set({ person: e.target.value })} />
        </label>
        <label className="field">
          <span className="small muted">{t("aiActivity.filter.model")}</span>
          <input data-testid="filter-model" value={filters.model} onChange={(e) => set({ model: e.target.value })} />
        </label>
        <label className="field">
          <span className="small muted">{t("aiActivity.filter.from")}</span>
          <input type="date" data-testid="filter-from" value={filters.from} onChange={(e) => set({ from: e.target.value })} />
        </label>
        <label className="field">
          <span className="small muted">{t("aiActivity.filter.to")}</span>
          <input type="date" data-testid="filter-to" value={filters.to} onChange={(e) => set({ to: e.target.value })} />
        </label>
        <label className="field">
          <span className="small muted">{t("aiActivity.filter.decision")}</span>
          <select data-testid="filter-decision" value={filters.decision} onChange={(e) => set({ decision: e.target.value as Filters["decision"] })}>
            <option value="">{t("aiActivity.filter.any")}</option>
            <option value="accepted">{t("aiActivity.decision.accepted")}</option>
            <option value="rejected">{t("aiActivity.decision.rejected")}</option>
          </select>
        </label>
        <button type="button" data-testid="ai-activity-export" disabled={exporting || rows.length === 0} onClick={() => void exportCsv()}>
          {exporting ? t("aiActivity.exporting") : t("aiActivity.export")}
        </button>
      </div>
      {error && <ErrorBanner error={error} retry={() => void list.refetch()} />}
      {!page && !error && (
        <p className="progress small muted" role="status" data-testid="ai-activity-loading">
          <span className="spinner" aria-hidden="true" /> {t("aiActivity.loading")}
        </p>
      )}
      {page && rows.length === 0 && !filtered && (
        <div className="empty" data-testid="ai-activity-empty">
          <p className="empty-title">{t("aiActivity.empty.title")}</p>
          <p className="muted">{t("aiActivity.empty.body")}</p>
        </div>
      )}
      {page && rows.length === 0 && filtered && (
        <div className="empty" data-testid="ai-activity-nomatch">
          <p className="muted">{t("aiActivity.noMatch")}</p>
          <button type="button" className="link" onClick={() => set(NO_FILTERS)}>
            {t("aiActivity.clearFilters")}
          </button>
        </div>
      )}
      {rows.length > 0 && (
        <ul
          ref={listRef}
          className="ai-activity-list"
          role="listbox"
          tabIndex={0}
          aria-label={t("aiActivity.list")}
          aria-activedescendant={`${listId}-${current}`}
          data-testid="ai-activity-list"
          onKeyDown={onKey}
        >
          {rows.map((row, i) => (
            <li
              key={row.id}
              id={`${listId}-${i}`}
              role="option"
              aria-selected={i === current}
              aria-expanded={open === row.id}
              data-index={i}
              data-testid="ai-activity-row"
              className={i === current ? "ai-activity-row selected" : "ai-activity-row"}
              onClick={() => {
                setSelected(i);
                setOpen((o) => (o === row.id ? null : row.id));
              }}
            >
              <Row row={row} showProject={projectId === undefined} />
              {open === row.id && <RowDiff row={row} />}
            </li>
          ))}
        </ul>
      )}
      {page?.truncated && (
        <p className="small muted" data-testid="ai-activity-truncated">
          {t("aiActivity.truncated", { n: rows.length })}
        </p>
      )}
    </section>
  );
}
