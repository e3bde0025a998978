// One publication's numbers: every snapshot ordered by its age since publishing (a
// metric that was not reported is "—", never 0), a small trend chart per metric over
// age, and manual entry of the platform's usual metrics in the forms the platform shows
// them (`1.2万`, `10w+`, `12.3%`; the engine reads them).
import { useId, useState } from "react";
import { toClientError } from "../../shared/api/client";
import type { MetricSnapshot, Publication } from "../../shared/api/generated";
import { useMethod, useWrite } from "../../shared/api/query";
import { useApp } from "../../shared/context";
import type { MessageId } from "../../shared/i18n";
import { ErrorBanner } from "../../shared/ui/ErrorBanner";
import { ABSENT, byAge, formatAge, formatMetric, localTime, reportedKeys, USUAL_METRICS } from "./format";

export function metricName(t: (id: MessageId) => string, key: string): string {
  if (key.startsWith("extra.")) return key.split(".").slice(2).join(".") || key;
  return t(`perf.metric.${key}` as MessageId);
}

export function PublicationMetrics({ publication }: { publication: Publication }) {
  const { t, lang } = useApp();
  const list = useMethod("perf.list", { publicationId: publication.id });
  const error = list.error ? toClientError(list.error) : null;
  const snapshots = byAge(list.data?.snapshots ?? []);
  const keys = reportedKeys(publication.platform, snapshots, true);
  const source = (s: MetricSnapshot) =>
    s.source.type === "import" ? t("perf.source.import", { row: s.source.row }) : s.source.type === "manual" ? t("perf.source.manual") : t("perf.source.api");
  return (
    <div className="perf-metrics" data-testid="perf-metrics">
      {error && <ErrorBanner error={error} retry={() => void list.refetch()} />}
      {list.isPending && !error && (
        <p className="small muted" role="status">
          {t("perf.loading")}
        </p>
      )}
      {list.data && snapshots.length === 0 && (
        <p className="small muted" data-testid="perf-no-snapshots">
          {t("perf.noSnapshots")}
        </p>
      )}
      {snapshots.length > 0 && (
        <>
          <div className="perf-table-wrap">
            <table className="perf-table small" data-testid="perf-snapshots">
              <thead>
                <tr>
                  <th scope="col">{t("perf.col.age")}</th>
                  <th scope="col">{t("perf.col.observed")}</th>
                  {keys.map((k) => (
                    <th key={k} scope="col">
                      {metricName(t, k)}
                    </th>
                  ))}
                  <th scope="col">{t("perf.col.source")}</th>
                </tr>
              </thead>
              <tbody>
                {snapshots.map((s) => (
                  <tr key={s.id} data-testid="perf-snapshot">
                    <td>{formatAge(lang, s.ageHours)}</td>
                    <td>{localTime(s.observedAt, publication.timeZone)}</td>
                    {keys.map((k) => (
                      <td key={k} data-metric={k} title={s.metrics[k]?.raw ?? t("perf.notReported")}>
                        {formatMetric(lang, s.metrics[k])}
                      </td>
                    ))}
                    <td>{source(s)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <div className="perf-trends" data-testid="perf-trends">
            {keys
              // A trend needs two ages: snapshots read at one moment are one point.
              .filter((k) => new Set(snapshots.filter((s) => s.metrics[k]).map((s) => s.ageHours)).size >= 2)
              .map((k) => (
                <Trend key={k} metric={k} snapshots={snapshots} />
              ))}
          </div>
        </>
      )}
      <ManualEntry publication={publication} />
    </div>
  );
}

const W = 200;
const H = 48;

/** A metric over age since publishing: only snapshots that report it, no interpolation
 * across the ones that do not. */
function Trend({ metric, snapshots }: { metric: string; snapshots: MetricSnapshot[] }) {
  const { t, lang } = useApp();
  const titleId = useId();
  const descId = useId();
  const points = snapshots.filter((s) => s.metrics[metric]).map((s) => ({ age: s.ageHours, v: s.metrics[metric] }));
  // The x axis spans the observed ages (not from publishing), so two readings a day
  // apart, months after publishing, are not squeezed into one edge.
  const minAge = Math.min(...points.map((p) => p.age));
  const span = Math.max(Math.max(...points.map((p) => p.age)) - minAge, 1e-9);
  const values = points.map((p) => p.v.value);
  const lo = Math.min(...values, 0);
  const hi = Math.max(...values, lo + 1e-9);
  const x = (age: number) => ((age - minAge) / span) * W;
  const y = (v: number) => H - ((v - lo) / (hi - lo)) * H;
  const first = points[0];
  const last = points[points.length - 1];
  const summary = t("perf.trendSummary", {
    n: points.length,
    from: formatMetric(lang, first.v),
    fromAge: formatAge(lang, first.age),
    to: formatMetric(lang, last.v),
    toAge: formatAge(lang, last.age),
  });
  return (
    <figure className="chart perf-trend" data-testid="perf-trend" data-metric={metric}>
      <figcaption id={titleId} className="small">
        {metricName(t, metric)}
      </figcaption>
      <svg viewBox={`-4 -4 ${W + 8} ${H + 8}`} width="100%" role="img" aria-labelledby={`${titleId} ${descId}`}>
        <desc id={descId}>{summary}</desc>
        <polyline className="perf-line" fill="none" points={points.map((p) => `${x(p.age)},${y(p.v.value)}`).join(" ")} />
        {points.map((p, i) => (
          <circle key={i} className="perf-dot" cx={x(p.age)} cy={y(p.v.value)} r={2.5}>
            <title>{`${formatAge(lang, p.age)}: ${formatMetric(lang, p.v)}`}</title>
          </circle>
        ))}
      </svg>
      <span className="small muted">{summary}</span>
    </figure>
  );
}

function ManualEntry({ publication }: { publication: Publication }) {
  const { t, toast } = useApp();
  const [values, setValues] = useState<Record<string, string>>({});
  const [observedAt, setObservedAt] = useState("");
  // A refused entry (a number the engine cannot read, say) goes to the app's one error
  // banner (the data layer's default); the fields keep what was typed.
  const add = useWrite("perf.add");
  const keys = USUAL_METRICS[publication.platform];
  const removed = publication.removedAt !== null && publication.removedAt !== undefined;
  const submit = async () => {
    const metrics = Object.fromEntries(Object.entries(values).filter(([, v]) => v.trim() !== ""));
    const r = await add.run({ publicationId: publication.id, metrics, ...(observedAt.trim() ? { observedAt } : {}) });
    if (r) {
      setValues({});
      setObservedAt("");
      toast(t("perf.added", { n: Object.keys(r.metrics).length + Object.keys(r.extras).length }));
    }
  };
  if (removed) return null;
  return (
    <form
      className="perf-entry"
      data-testid="perf-entry"
      onSubmit={(ev) => {
        ev.preventDefault();
        void submit();
      }}
    >
      <p className="small">{t("perf.entry.title")}</p>
      <div className="perf-grid">
        {keys.map((k) => (
          <label key={k} className="field small">
            {metricName(t, k)}
            <input
              data-testid={`perf-entry-${k}`}
              value={values[k] ?? ""}
              placeholder={ABSENT}
              inputMode="decimal"
              onChange={(ev) => setValues((v) => ({ ...v, [k]: ev.target.value }))}
            />
          </label>
        ))}
        <label className="field small">
          {t("perf.entry.observedAt")}
          <input data-testid="perf-entry-observed" value={observedAt} placeholder={t("perf.entry.now")} onChange={(ev) => setObservedAt(ev.target.value)} />
        </label>
      </div>
      <div className="draft-actions">
        <span className="small muted">{t("perf.entry.help")}</span>
        <span className="spacer" />
        <button type="submit" className="primary" data-testid="perf-entry-save" disabled={add.isPending}>
          {t("perf.entry.save")}
        </button>
      </div>
    </form>
  );
}
