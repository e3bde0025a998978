// The AI activity view: one row per AI change accepted or rejected (`aiActivity.list`),
// newest first, with filters; ↑/↓ (Home/End) move the selection, Enter opens the
// selected change's diff and Escape closes it; "Export CSV" asks the engine for the
// CSV of every matching row (`aiActivity.export`) and saves it as a file.

import { useId, useMemo, useRef, useState, type KeyboardEvent } from "react";
import { toClientError } from "../../shared/api/client";
import { saveCsv } from "../../shared/lib/files";
import { exportActivity } from "./data";
import type { ActivityRow, ActivityScope, AiActivityFilter, Decision, TextDiffResult } from "../../shared/api/generated";
import { useMethod } from "../../shared/api/query";
import { ErrorBanner } from "../../shared/ui/ErrorBanner";
import { DiffView } from "../../shared/ui/DiffView";
import { useApp } from "../../shared/context";
import { formatFullTime, formatTime, type MessageId } from "../../shared/i18n";

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

function decisionLabel(row: ActivityRow): MessageId {
  if (row.decision === "accepted") return row.partial ? "aiActivity.decision.partlyAccepted" : "aiActivity.decision.accepted";
  return row.partial ? "aiActivity.decision.partlyRejected" : "aiActivity.decision.rejected";
}

function Row({ row, showProject }: { row: ActivityRow; showProject: boolean }) {
  const { t, lang, now } = useApp();
  const made =
    row.version != null
      ? t("aiActivity.version", { n: row.version })
      : row.draftRevision != null
        ? t("aiActivity.draftRevision", { n: row.draftRevision })
        : row.source.type === "synced"
          ? t("aiActivity.serverVersion", { n: row.source.serverNumber })
          : null;
  const model = [row.model.model, row.model.providerHost ? `@${row.model.providerHost}` : "", row.model.profileName ? ` (${row.model.profileName})` : ""].join("");
  const tokens = row.tokens
    ? t(row.tokens.scope === "run" ? "aiActivity.tokensRun" : "aiActivity.tokens", {
        input: row.tokens.inputTokens.toLocaleString(lang),
        output: row.tokens.outputTokens.toLocaleString(lang),
      })
    : null;
  return (
    <div className="ai-activity-summary">
      <div className="row between">
        <span>
          <span className={`badge badge-${row.decision}`} data-testid="row-decision">
            {t(decisionLabel(row))}
          </span>{" "}
          {showProject && <strong>{row.projectTitle ?? row.projectId}</strong>} {made && <span>{made}</span>} <span className="muted small">{t("aiActivity.hunks", { n: row.nHunks })}</span>
        </span>
        <time className="small muted" dateTime={row.at} title={formatFullTime(lang, row.at)}>
          {formatTime(lang, row.at, now())}
        </time>
      </div>
      <div className="small">
        <span data-testid="row-actor">{t("aiActivity.by", { person: row.actor })}</span> · {t(`aiActivity.through.${row.through.type}` as MessageId)} · <code data-testid="row-model">{model}</code>
        {tokens && <span className="muted"> · {tokens}</span>}
        {row.tokens?.cost != null && <span className="muted"> · {row.tokens.cost.toFixed(4)}</span>}
      </div>
      {row.reason && (
        <div className="small" data-testid="row-reason">
          {t("aiActivity.reason", { reason: row.reason })}
        </div>
      )}
    </div>
  );
}

/** The hunks of the change, from the stored proposal; for a teammate's change (its
 * detail came through the workspace server), what travelled: the prompt layers. */
function RowDiff({ row }: { row: ActivityRow }) {
  if (row.source.type === "synced") return <SyncedDetail row={row} />;
  return <LocalDiff row={row} />;
}

function SyncedDetail({ row }: { row: ActivityRow }) {
  const { t } = useApp();
  return (
    <div className="ai-activity-diff" data-testid="ai-activity-synced" onClick={(e) => e.stopPropagation()}>
      {row.promptLayers.length > 0 && <p className="small muted">{t("aiActivity.prompts", { layers: row.promptLayers.join(", ") })}</p>}
      <p className="small muted">{t("aiActivity.syncedDetail", { proposal: row.proposalId, n: row.nHunksTotal ?? row.nHunks })}</p>
    </div>
  );
}

function LocalDiff({ row }: { row: ActivityRow }) {
  const { t } = useApp();
  const proposal = useMethod("proposal.get", { proposalId: row.proposalId });
  if (proposal.error) {
    const error = toClientError(proposal.error);
    return error.code === "NOT_FOUND" ? <p className="small muted">{t("aiActivity.diffGone")}</p> : <ErrorBanner error={error} retry={() => void proposal.refetch()} />;
  }
  if (!proposal.data) return <p className="small muted">{t("aiActivity.diffLoading")}</p>;
  const hunks = proposal.data.hunks.filter((h) => row.hunks.length === 0 || row.hunks.includes(h.id)).map((h) => h.display);
  const diff: TextDiffResult = { hunks, nInsertions: 0, nDeletions: 0, identical: hunks.length === 0 };
  return (
    <div className="ai-activity-diff" data-testid="ai-activity-diff" onClick={(e) => e.stopPropagation()}>
      {row.promptLayers.length > 0 && <p className="small muted">{t("aiActivity.prompts", { layers: row.promptLayers.join(", ") })}</p>}
      {row.contextSnapshotId && <p className="small muted">{t("aiActivity.context", { id: row.contextSnapshotId })}</p>}
      <DiffView diff={diff} mode="inline" identicalLabel={t("aiActivity.noDiff")} />
    </div>
  );
}
