// Settings → Usage: tokens and cost per day (plain SVG), tables by purpose and by
// profile from `usage.report`, and the workspace quotas.

import { useId, useState } from "react";
import { toClientError } from "../../shared/api/client";
import type { UsageRow, UsageTotals } from "../../shared/api/generated";
import { useMethod } from "../../shared/api/query";
import { ErrorBanner } from "../../shared/ui/ErrorBanner";
import { useApp } from "../../shared/context";
import { has, type MessageId } from "../../shared/i18n";
import { QuotaForm } from "./QuotaForm";
import { fillDays, formatCost, formatTokens, monthStart, utcDay, windowStart } from "../settings";

const WINDOWS = [7, 30, 90] as const;

export function Usage() {
  const { t, lang, now } = useApp();
  const [nDays, setNDays] = useState<number>(30);
  const from = windowStart(now(), nDays);
  // Saved quotas make both reports stale (methods.ts): the cache reads them again.
  const windowed = useMethod("usage.report", { from: new Date(from).toISOString() });
  const thisMonth = useMethod("usage.report", { from: new Date(monthStart(now())).toISOString() });
  const report = windowed.data ?? null;
  const month = thisMonth.data?.totals ?? null;
  const failed = windowed.error ?? thisMonth.error;
  const error = failed ? toClientError(failed) : null;
  const load = () => Promise.all([windowed.refetch(), thisMonth.refetch()]);

  const days = report ? fillDays(report.byDay, from, nDays) : [];
  const today = utcDay(now());
  const todayTokens = days.find((d) => d.key === today)?.totals;
  const purposeLabel = (key: string) => {
    const id = `purpose.${key}`;
    return has(lang, id) ? t(id as MessageId) : key;
  };

  return (
    <div className="form usage" data-testid="usage">
      <div className="row between">
        <p className="small muted">{t("usage.help")}</p>
        <div className="segmented" role="group" aria-label={t("usage.window")}>
          {WINDOWS.map((n) => (
            <button key={n} type="button" className="small-btn" aria-pressed={nDays === n} onClick={() => setNDays(n)}>
              {t("usage.days", { n })}
            </button>
          ))}
        </div>
      </div>
      {error && <ErrorBanner error={error} retry={() => void load()} />}
      {!report && !error && (
        <p className="progress small muted" role="status">
          <span className="spinner" aria-hidden="true" /> {t("usage.loading")}
        </p>
      )}
      {report && (
        <>
          <div className="usage-totals" data-testid="usage-totals">
            <Stat label={t("usage.calls")} value={formatTokens(lang, report.totals.calls)} sub={report.totals.failedCalls ? t("usage.failed", { n: report.totals.failedCalls }) : undefined} />
            <Stat label={t("usage.tokensIn")} value={formatTokens(lang, report.totals.inputTokens)} />
            <Stat label={t("usage.tokensOut")} value={formatTokens(lang, report.totals.outputTokens)} />
            <Stat label={t("usage.cost")} value={report.totals.pricedCalls > 0 ? formatCost(lang, report.totals.cost) : "—"} />
          </div>
          {report.totals.estimated && <p className="small muted">{t("usage.estimated")}</p>}
          {report.totals.calls === 0 ? (
            <p className="muted" data-testid="usage-empty">
              {t("usage.empty")}
            </p>
          ) : (
            <>
              <DayChart
                testId="chart-tokens"
                title={t("usage.chartTokens", { n: nDays })}
                days={days}
                series={[
                  { label: t("usage.tokensIn"), className: "bar-in", value: (x) => x.inputTokens },
                  { label: t("usage.tokensOut"), className: "bar-out", value: (x) => x.outputTokens },
                ]}
                format={(n) => formatTokens(lang, n)}
              />
              {report.totals.cost > 0 ? (
                <DayChart
                  testId="chart-cost"
                  title={t("usage.chartCost", { n: nDays })}
                  days={days}
                  series={[{ label: t("usage.cost"), className: "bar-cost", value: (x) => x.cost }]}
                  format={(n) => formatCost(lang, n)}
                />
              ) : (
                <p className="small muted" data-testid="cost-none">
                  {t("usage.noCost")}
                </p>
              )}
              <UsageTable testId="usage-by-purpose" caption={t("usage.byPurpose")} head={t("usage.purpose")} rows={report.byPurpose} label={purposeLabel} />
              <UsageTable testId="usage-by-profile" caption={t("usage.byProfile")} head={t("usage.profile")} rows={report.byProfile} label={(k) => k} />
            </>
          )}
        </>
      )}
      <QuotaForm quotas={report?.quotas ?? null} todayTokens={todayTokens ? todayTokens.inputTokens + todayTokens.outputTokens : 0} monthCost={month?.cost ?? 0} />
    </div>
  );
}

function Stat({ label, value, sub }: { label: string; value: string; sub?: string }) {
  return (
    <div className="stat">
      <span className="small muted">{label}</span>
      <strong>{value}</strong>
      {sub && <span className="small danger-text">{sub}</span>}
    </div>
  );
}

interface Series {
  label: string;
  className: string;
  value: (t: UsageTotals) => number;
}

const CHART_W = 560;
const CHART_H = 120;
const PAD_TOP = 16;
const PAD_BOTTOM = 18;

/** Stacked bars per day. The svg is an image with a text summary; each bar has a title. */
function DayChart({
  testId,
  title,
  days,
  series,
  format,
}: {
  testId: string;
  title: string;
  days: UsageRow[];
  series: Series[];
  format: (n: number) => string;
}) {
  const { t } = useApp();
  const titleId = useId();
  const descId = useId();
  const totals = days.map((d) => series.reduce((sum, s) => sum + s.value(d.totals), 0));
  const max = Math.max(0, ...totals);
  const sum = totals.reduce((a, b) => a + b, 0);
  const peak = totals.indexOf(max);
  const plotH = CHART_H - PAD_TOP - PAD_BOTTOM;
  const slot = CHART_W / Math.max(1, days.length);
  const barW = Math.max(1, slot * 0.7);
  const y = (v: number) => (max > 0 ? (v / max) * plotH : 0);
  const summary =
    max > 0
      ? t("usage.chartSummary", { total: format(sum), max: format(max), day: days[peak]?.key ?? "" })
      : t("usage.chartNone");
  return (
    <figure className="chart" data-testid={testId}>
      <figcaption className="row between">
        <span id={titleId} className="small">
          {title}
        </span>
        {series.length > 1 && (
          <span className="legend small muted" aria-hidden="true">
            {series.map((s) => (
              <span key={s.className}>
                <span className={`swatch ${s.className}`} /> {s.label}
              </span>
            ))}
          </span>
        )}
      </figcaption>
      <svg viewBox={`0 0 ${CHART_W} ${CHART_H}`} width="100%" role="img" aria-labelledby={`${titleId} ${descId}`}>
        <desc id={descId}>{summary}</desc>
        <line className="axis" x1={0} x2={CHART_W} y1={CHART_H - PAD_BOTTOM + 0.5} y2={CHART_H - PAD_BOTTOM + 0.5} />
        {max > 0 && (
          <text className="tick" x={0} y={PAD_TOP - 4}>
            {format(max)}
          </text>
        )}
        {days.map((d, i) => {
          let base = CHART_H - PAD_BOTTOM;
          const x = i * slot + (slot - barW) / 2;
          return (
            <g key={d.key} data-day={d.key}>
              <title>{`${d.key}: ${series.map((s) => `${s.label} ${format(s.value(d.totals))}`).join(", ")}`}</title>
              {/* A full-height transparent slot so the title shows on hover over empty days too. */}
              <rect x={i * slot} y={PAD_TOP} width={slot} height={plotH} fill="transparent" />
              {series.map((s) => {
                const h = y(s.value(d.totals));
                base -= h;
                return h > 0 ? <rect key={s.className} className={s.className} x={x} y={base} width={barW} height={h} /> : null;
              })}
            </g>
          );
        })}
        <text className="tick" x={0} y={CHART_H - 4}>
          {days[0]?.key.slice(5)}
        </text>
        <text className="tick" x={CHART_W} y={CHART_H - 4} textAnchor="end">
          {days[days.length - 1]?.key.slice(5)}
        </text>
      </svg>
    </figure>
  );
}

function UsageTable({
  testId,
  caption,
  head,
  rows,
  label,
}: {
  testId: string;
  caption: string;
  head: string;
  rows: UsageRow[];
  label: (key: string) => string;
}) {
  const { t, lang } = useApp();
  const sorted = [...rows].sort((a, b) => b.totals.inputTokens + b.totals.outputTokens - (a.totals.inputTokens + a.totals.outputTokens));
  return (
    <table className="usage-table" data-testid={testId}>
      <caption>{caption}</caption>
      <thead>
        <tr>
          <th scope="col">{head}</th>
          <th scope="col">{t("usage.calls")}</th>
          <th scope="col">{t("usage.tokensIn")}</th>
          <th scope="col">{t("usage.tokensOut")}</th>
          <th scope="col">{t("usage.cost")}</th>
          <th scope="col">{t("usage.avgLatency")}</th>
        </tr>
      </thead>
      <tbody>
        {sorted.map((r) => (
          <tr key={r.key}>
            <th scope="row">{label(r.key)}</th>
            <td>
              {formatTokens(lang, r.totals.calls)}
              {r.totals.failedCalls > 0 && <span className="small danger-text"> ({t("usage.failed", { n: r.totals.failedCalls })})</span>}
            </td>
            <td>
              {formatTokens(lang, r.totals.inputTokens)}
              {r.totals.estimated && <span title={t("usage.estimated")}>*</span>}
            </td>
            <td>{formatTokens(lang, r.totals.outputTokens)}</td>
            <td>{r.totals.pricedCalls > 0 ? formatCost(lang, r.totals.cost) : "—"}</td>
            <td>{r.totals.calls > 0 ? t("usage.ms", { ms: Math.round(r.totals.latencyMsTotal / r.totals.calls) }) : "—"}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
