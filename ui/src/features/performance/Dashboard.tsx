// The workspace dashboard: every publication with its latest metrics (absent is "—",
// never 0), filtered by platform, account, format and dates and sorted by any column
// (a metric orders within each platform: platforms count different things); each
// platform's median of one metric over time, one small chart per platform with its own
// scale so no two bases share an axis; and when the person posts (day of week × hour,
// in each publication's own time zone). The engine computes all of it
// (`perf.dashboard`); the CSV is the engine's too (`perf.export`).
import { useId, useState } from "react";
import { toClientError } from "../../shared/api/client";
import type { AgeBucket, Dashboard, DashboardRow, PerfDashboardParams, Platform, PlatformMedians, PostingCell, PublicationFormat } from "../../shared/api/generated";
import { useMethod } from "../../shared/api/query";
import { useApp } from "../../shared/context";
import type { MessageId } from "../../shared/i18n";
import { ErrorBanner } from "../../shared/ui/ErrorBanner";
import { ABSENT, formatMetric, localTime, PLATFORMS, USUAL_METRICS } from "./format";
import { metricName } from "./Metrics";
import { PlatformOptions } from "./PlatformOptions";
import { useCsvExport } from "./useCsvExport";

const PAGE = 200;
const MAX_ROWS = 1000;
const FORMATS: PublicationFormat[] = ["article", "answer", "imageText", "video", "thread", "post", "other"];
const AGES: AgeBucket[] = ["24h", "72h", "7d"];
const WEEKDAYS = [0, 1, 2, 3, 4, 5, 6] as const;
const HOURS = Array.from({ length: 24 }, (_, h) => h);

export interface DashboardFilters {
  platform: Platform | "";
  accountId: string;
  format: PublicationFormat | "";
  /** `YYYY-MM-DD`, both days included; local days of this computer. */
  from: string;
  to: string;
}

export const NO_FILTERS: DashboardFilters = { platform: "", accountId: "", format: "", from: "", to: "" };

/** The engine's parameters for `filters`: a date is the local midnight it starts, and
 * the range's last day is included (the engine's `to` is exclusive). */
export function toParams(filters: DashboardFilters, sort: string, descending: boolean): PerfDashboardParams {
  const params: PerfDashboardParams = { sort, descending };
  if (filters.platform) params.platform = filters.platform;
  if (filters.accountId) params.accountId = filters.accountId;
  if (filters.format) params.format = filters.format;
  if (filters.from) params.from = new Date(`${filters.from}T00:00:00`).toISOString();
  if (filters.to) {
    const end = new Date(`${filters.to}T00:00:00`);
    end.setDate(end.getDate() + 1);
    params.to = end.toISOString();
  }
  return params;
}

export function PerformanceDashboard({ onClose }: { onClose: () => void }) {
  const { t } = useApp();
  const [filters, setFilters] = useState<DashboardFilters>(NO_FILTERS);
  const [sort, setSort] = useState("publishedAt");
  const [descending, setDescending] = useState(true);
  const [limit, setLimit] = useState(PAGE);
  const [metric, setMetric] = useState("");
  const [age, setAge] = useState<AgeBucket | "">("");
  const base = toParams(filters, sort, descending);
  // The last answer stays on screen while the next filter's is read.
  const read = useMethod("perf.dashboard", { ...base, limit, ...(metric ? { metric } : {}), ...(age ? { age } : {}) }, { keepPrevious: true });
  const accounts = useMethod("account.list", {});
  const error = read.error ? toClientError(read.error) : null;
  const board: Dashboard | undefined = read.data;
  const { exportCsv, exporting } = useCsvExport();
  const set = (patch: Partial<DashboardFilters>) => {
    setFilters((f) => ({ ...f, ...patch }));
    setLimit(PAGE);
  };
  const sortBy = (key: string) => {
    if (key === sort) setDescending((d) => !d);
    else {
      setSort(key);
      // Text reads A→Z first; times and numbers newest or largest first.
      setDescending(!["title", "platform", "account", "format"].includes(key));
    }
  };
  const shownAccounts = (accounts.data?.accounts ?? []).filter((a) => !filters.platform || a.platform === filters.platform);
  const metricChoices = [...new Set(PLATFORMS.filter((p) => !filters.platform || p === filters.platform).flatMap((p) => USUAL_METRICS[p]))];

  return (
    <section className="perf-dash" data-testid="perf-dashboard" aria-labelledby="perf-dash-title">
      <header className="row between perf-dash-head">
        <div>
          <h2 id="perf-dash-title">{t("perf.dash.title")}</h2>
          <p className="small muted">{t("perf.dash.help")}</p>
        </div>
        <div className="row">
          <button
            type="button"
            className="small-btn"
            data-testid="perf-dash-export"
            disabled={exporting || !board || board.total === 0}
            onClick={() => void exportCsv({ dashboard: base }, "performance")}
          >
            {exporting ? t("perf.export.busy") : t("perf.export.button")}
          </button>
          <button type="button" className="small-btn" data-testid="perf-dash-close" onClick={onClose}>
            {t("perf.close")}
          </button>
        </div>
      </header>
      <div className="row wrap perf-dash-filters" data-testid="perf-dash-filters">
        <label className="field small">
          {t("perf.field.platform")}
          <select data-testid="perf-dash-platform" value={filters.platform} onChange={(e) => set({ platform: e.target.value as Platform | "", accountId: "" })}>
            <option value="">{t("perf.dash.all")}</option>
            <PlatformOptions />
          </select>
        </label>
        <label className="field small">
          {t("perf.field.account")}
          <select data-testid="perf-dash-account" value={filters.accountId} onChange={(e) => set({ accountId: e.target.value })}>
            <option value="">{t("perf.dash.all")}</option>
            {shownAccounts.map((a) => (
              <option key={a.id} value={a.id}>
                {a.name}
              </option>
            ))}
          </select>
        </label>
        <label className="field small">
          {t("perf.field.format")}
          <select data-testid="perf-dash-format" value={filters.format} onChange={(e) => set({ format: e.target.value as PublicationFormat | "" })}>
            <option value="">{t("perf.dash.all")}</option>
            {FORMATS.map((f) => (
              <option key={f} value={f}>
                {t(`perf.format.${f}` as MessageId)}
              </option>
            ))}
          </select>
        </label>
        <label className="field small">
          {t("perf.dash.from")}
          <input type="date" data-testid="perf-dash-from" value={filters.from} onChange={(e) => set({ from: e.target.value })} />
        </label>
        <label className="field small">
          {t("perf.dash.to")}
          <input type="date" data-testid="perf-dash-to" value={filters.to} onChange={(e) => set({ to: e.target.value })} />
        </label>
      </div>
      {error && <ErrorBanner error={error} retry={() => void read.refetch()} />}
      {read.isPending && !error && (
        <p className="small muted" role="status">
          <span className="spinner" aria-hidden="true" /> {t("perf.loading")}
        </p>
      )}
      {board && board.total === 0 && (
        <p className="muted" data-testid="perf-dash-empty">
          {t("perf.dash.empty")}
        </p>
      )}
      {board && board.total > 0 && (
        <>
          <div className="perf-dash-charts">
            <section className="perf-dash-medians" data-testid="perf-dash-medians">
              <div className="row wrap">
                <h3 className="small">{t("perf.dash.medians")}</h3>
                <label className="field small">
                  {t("perf.report.metric")}
                  <select data-testid="perf-dash-metric" value={metric} onChange={(e) => setMetric(e.target.value)}>
                    <option value="">{t("perf.dash.reach")}</option>
                    {metricChoices.map((k) => (
                      <option key={k} value={k}>
                        {metricName(t, k)}
                      </option>
                    ))}
                  </select>
                </label>
                <label className="field small">
                  {t("perf.report.age")}
                  <select data-testid="perf-dash-age" value={age} onChange={(e) => setAge(e.target.value as AgeBucket | "")}>
                    <option value="">{t("perf.dash.latest")}</option>
                    {AGES.map((b) => (
                      <option key={b} value={b}>
                        {t(`perf.report.bucket.${b}` as MessageId)}
                      </option>
                    ))}
                  </select>
                </label>
              </div>
              <p className="small muted">{t(board.interval === "week" ? "perf.dash.mediansHelpWeek" : "perf.dash.mediansHelpMonth")}</p>
              <div className="perf-dash-multiples">
                {board.medians.map((m) => (
                  <MedianChart key={m.platform} medians={m} />
                ))}
              </div>
            </section>
            <PostingTimes cells={board.postingTimes} />
          </div>
          <PublicationTable board={board} sort={sort} descending={descending} onSort={sortBy} />
          <div className="row between">
            <span className="small muted" data-testid="perf-dash-count">
              {t("perf.dash.count", { shown: board.rows.length, n: board.total })}
            </span>
            {board.rows.length < board.total && limit < MAX_ROWS && (
              <button type="button" className="small-btn" data-testid="perf-dash-more" onClick={() => setLimit((l) => Math.min(l + PAGE, MAX_ROWS))}>
                {t("perf.dash.more")}
              </button>
            )}
          </div>
        </>
      )}
    </section>
  );
}

const W = 240;
const H = 64;

/** One platform's median per period: its own scale, its own metric, n on each point. */
function MedianChart({ medians }: { medians: PlatformMedians }) {
  const { t, lang } = useApp();
  const titleId = useId();
  const descId = useId();
  const points = medians.points;
  const unit = medians.unit ?? "count";
  const show = (v: number) => formatMetric(lang, { value: v, unit, qualifier: "exact", raw: "" });
  const name = `${t(`platform.${medians.platform}` as MessageId)} · ${metricName(t, medians.metric)}`;
  if (points.length === 0) {
    return (
      <figure className="chart perf-dash-chart" data-testid="perf-dash-chart" data-platform={medians.platform} data-points={0}>
        <figcaption className="small">{name}</figcaption>
        <p className="small muted">{t("perf.dash.noValues", { n: medians.withoutValue })}</p>
      </figure>
    );
  }
  const values = points.map((p) => p.median);
  const lo = Math.min(...values, 0);
  const hi = Math.max(...values, lo + 1e-9);
  const x = (i: number) => (points.length === 1 ? W / 2 : (i / (points.length - 1)) * W);
  const y = (v: number) => H - ((v - lo) / (hi - lo)) * H;
  const summary = t("perf.dash.chartSummary", {
    periods: points.length,
    first: points[0].period,
    last: points[points.length - 1].period,
    from: show(points[0].median),
    to: show(points[points.length - 1].median),
    max: show(hi),
  });
  return (
    <figure className="chart perf-dash-chart" data-testid="perf-dash-chart" data-platform={medians.platform} data-points={points.length}>
      <figcaption id={titleId} className="small">
        {name}
      </figcaption>
      <svg viewBox={`-4 -14 ${W + 8} ${H + 30}`} width="100%" role="img" aria-labelledby={`${titleId} ${descId}`}>
        <desc id={descId}>{summary}</desc>
        <line className="axis" x1={0} x2={W} y1={H + 0.5} y2={H + 0.5} />
        <text className="tick" x={0} y={-4}>
          {show(hi)}
        </text>
        <polyline className="perf-line" fill="none" points={points.map((p, i) => `${x(i)},${y(p.median)}`).join(" ")} />
        {points.map((p, i) => (
          <circle key={p.period} className="perf-dot" cx={x(i)} cy={y(p.median)} r={2.5} data-testid="perf-dash-point">
            <title>{t("perf.dash.pointTitle", { period: p.period, median: show(p.median), n: p.n })}</title>
          </circle>
        ))}
        <text className="tick" x={0} y={H + 14}>
          {points[0].period}
        </text>
        {points.length > 1 && (
          <text className="tick" x={W} y={H + 14} textAnchor="end">
            {points[points.length - 1].period}
          </text>
        )}
      </svg>
      {medians.withoutValue > 0 && <span className="small muted">{t("perf.dash.withoutValue", { n: medians.withoutValue })}</span>}
    </figure>
  );
}

/** Day of week × hour, with counts; a darker cell holds more posts. */
function PostingTimes({ cells }: { cells: PostingCell[] }) {
  const { t } = useApp();
  const count = (d: number, h: number) => cells.find((c) => c.weekday === d && c.hour === h)?.count ?? 0;
  const max = Math.max(1, ...cells.map((c) => c.count));
  return (
    <section className="perf-dash-posting" data-testid="perf-dash-posting">
      <h3 className="small">{t("perf.dash.posting")}</h3>
      <p className="small muted">{t("perf.dash.postingHelp")}</p>
      <div className="perf-table-wrap">
        <table className="perf-posting small">
          <thead>
            <tr>
              <th scope="col" />
              {HOURS.map((h) => (
                <th key={h} scope="col">
                  {h}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {WEEKDAYS.map((d) => (
              <tr key={d}>
                <th scope="row">{t(`perf.dash.weekday.${d}` as MessageId)}</th>
                {HOURS.map((h) => {
                  const n = count(d, h);
                  return (
                    <td
                      key={h}
                      data-testid={n > 0 ? "perf-dash-slot" : undefined}
                      data-slot={`${d}-${h}`}
                      className={n > 0 ? `heat-${Math.ceil((n / max) * 4)}` : undefined}
                      title={t("perf.dash.slotTitle", { day: t(`perf.dash.weekday.${d}` as MessageId), hour: h, n })}
                    >
                      {n > 0 ? n : ""}
                    </td>
                  );
                })}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

function SortHeader({ id, label, sort, descending, onSort }: { id: string; label: string; sort: string; descending: boolean; onSort: (k: string) => void }) {
  const active = sort === id;
  return (
    <th scope="col" aria-sort={active ? (descending ? "descending" : "ascending") : "none"}>
      <button type="button" className="link" data-testid={`perf-dash-sort-${id}`} onClick={() => onSort(id)}>
        {label}
        {active ? (descending ? " ↓" : " ↑") : ""}
      </button>
    </th>
  );
}

function PublicationTable({ board, sort, descending, onSort }: { board: Dashboard; sort: string; descending: boolean; onSort: (k: string) => void }) {
  const { t, lang } = useApp();
  const head = (id: string, label: string) => <SortHeader id={id} label={label} sort={sort} descending={descending} onSort={onSort} />;
  return (
    <section className="perf-dash-table">
      {board.groupedByPlatform && (
        <p className="small muted" data-testid="perf-dash-grouped">
          {t("perf.dash.grouped")}
        </p>
      )}
      <div className="perf-table-wrap">
        <table className="perf-table small" data-testid="perf-dash-table">
          <thead>
            <tr>
              {head("publishedAt", t("perf.field.publishedAt"))}
              {head("title", t("perf.field.title"))}
              {head("platform", t("perf.field.platform"))}
              {head("account", t("perf.field.account"))}
              {head("format", t("perf.field.format"))}
              {board.metricKeys.map((k) => (
                <SortHeader key={k} id={`metric:${k}`} label={metricName(t, k)} sort={sort} descending={descending} onSort={onSort} />
              ))}
            </tr>
          </thead>
          <tbody>
            {board.rows.map((r) => (
              <Row key={r.publication.id} row={r} keys={board.metricKeys} lang={lang} />
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

function Row({ row, keys, lang }: { row: DashboardRow; keys: string[]; lang: "en" | "zh" }) {
  const { t } = useApp();
  const p = row.publication;
  return (
    <tr data-testid="perf-dash-row" data-id={p.id} data-platform={p.platform}>
      <td title={p.timeZone}>{localTime(p.publishedAt, p.timeZone)}</td>
      <td className="perf-title-cell">
        {p.title}
        {p.aiChanges.length > 0 && (
          <span className="badge" title={t("perf.aiChanges.help")}>
            {t("perf.aiChanges", { n: p.aiChanges.length })}
          </span>
        )}
      </td>
      <td>{t(`platform.${p.platform}` as MessageId)}</td>
      <td>{row.accountName ?? ABSENT}</td>
      <td>{t(`perf.format.${p.format}` as MessageId)}</td>
      {keys.map((k) => {
        const v = row.latest[k];
        return (
          <td key={k} data-metric={k} title={v ? t("perf.dash.cellTitle", { raw: v.raw, time: localTime(v.observedAt, p.timeZone) }) : t("perf.notReported")}>
            {formatMetric(lang, v)}
          </td>
        );
      })}
    </tr>
  );
}
