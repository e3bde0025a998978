// The workspace dashboard: every publication with its latest metrics (absent is "—",
// never 0), filtered by platform, account, format and dates and sorted by any column
// (a metric orders within each platform: platforms count different things); each
// platform's median of one metric over time, one small chart per platform with its own
// scale so no two bases share an axis; and when the person posts (day of week × hour,
// in each publication's own time zone). The engine computes all of it
// (`perf.dashboard`); the CSV is the engine's too (`perf.export`).
import { useState } from "react";
import { toClientError } from "../../shared/api/client";
import type { AgeBucket, Dashboard, Platform, PublicationFormat } from "../../shared/api/generated";
import { useMethod } from "../../shared/api/query";
import { useApp } from "../../shared/context";
import type { MessageId } from "../../shared/i18n";
import { ErrorBanner } from "../../shared/ui/ErrorBanner";
import { MedianChart, PostingTimes } from "./DashboardCharts";
import { type DashboardFilters, NO_FILTERS, toParams } from "./dashboardFilters";
import { PLATFORMS, USUAL_METRICS } from "./format";
import { metricName } from "./Metrics";
import { PlatformOptions } from "./PlatformOptions";
import { PublicationTable } from "./PublicationTable";
import { useCsvExport } from "./useCsvExport";

const PAGE = 200;
const MAX_ROWS = 1000;
const FORMATS: PublicationFormat[] = ["article", "answer", "imageText", "video", "thread", "post", "other"];
const AGES: AgeBucket[] = ["24h", "72h", "7d"];

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
