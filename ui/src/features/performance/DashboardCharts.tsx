// The dashboard's charts: each platform's median of one metric over time, on its own
// scale, and when the person posts (day of week × hour).
import { useId } from "react";
import type { PlatformMedians, PostingCell } from "../../shared/api/generated";
import { useApp } from "../../shared/context";
import type { MessageId } from "../../shared/i18n";
import { formatMetric } from "./format";
import { metricName } from "./Metrics";

const WEEKDAYS = [0, 1, 2, 3, 4, 5, 6] as const;
const HOURS = Array.from({ length: 24 }, (_, h) => h);
const W = 240;
const H = 64;

/** One platform's median per period: its own scale, its own metric, n on each point. */
export function MedianChart({ medians }: { medians: PlatformMedians }) {
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
export function PostingTimes({ cells }: { cells: PostingCell[] }) {
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
