// The before/after report on accepted AI changes: posts whose version carries them next
// to the same account's comparable posts without them, each as a multiple of the
// account's own median at the same age. It shows what went together and how many posts
// it rests on ("association, not causation"); under three posts a side it gives no
// number.
import { useState } from "react";
import { toClientError } from "../../shared/api/client";
import type { AgeBucket, BeforeAfterReport, Platform, ReportSide } from "../../shared/api/generated";
import { useMethod } from "../../shared/api/query";
import { useApp } from "../../shared/context";
import type { MessageId } from "../../shared/i18n";
import { Dialog } from "../../shared/ui/Dialog";
import { ErrorBanner } from "../../shared/ui/ErrorBanner";
import { formatMetric, localTime, USUAL_METRICS } from "./format";
import { PlatformOptions } from "./PlatformOptions";
import { metricName } from "./Metrics";
import { useCsvExport } from "./useCsvExport";

const BUCKETS: AgeBucket[] = ["24h", "72h", "7d"];
const DEFAULT_METRIC: Record<Platform, string> = { wechat: "readers", x: "impressions", xiaohongshu: "impressions", zhihu: "views", douyin: "views" };

const times = (v: number | null | undefined) => (v === null || v === undefined ? "—" : `${v.toFixed(2)}×`);

export function ReportDialog({ projectId, platform: first, onClose }: { projectId: string; platform: Platform; onClose: () => void }) {
  const { t, lang } = useApp();
  const [platform, setPlatform] = useState<Platform>(first);
  const [metric, setMetric] = useState(DEFAULT_METRIC[first]);
  const [bucket, setBucket] = useState<AgeBucket>("24h");
  const [wholeAccount, setWholeAccount] = useState(false);
  const read = useMethod("perf.report", { platform, metric, bucket, ...(wholeAccount ? {} : { projectId }) });
  const error = read.error ? toClientError(read.error) : null;
  const r: BeforeAfterReport | undefined = read.data;
  const metrics = [...new Set([DEFAULT_METRIC[platform], ...USUAL_METRICS[platform]])];
  const { exportCsv, exporting } = useCsvExport();

  const sideRow = (label: string, s: ReportSide, testId: string) => (
    <tr data-testid={testId}>
      <th scope="row">{label}</th>
      <td>{s.n}</td>
      <td>{s.medianMultiple === null ? <span className="muted">{t("perf.report.notEnough")}</span> : times(s.medianMultiple)}</td>
      <td>{s.p30 === null ? "—" : `${times(s.p30)} – ${times(s.p70)}`}</td>
    </tr>
  );

  return (
    <Dialog title={t("perf.report.title")} onClose={onClose} testId="perf-report" wide>
      <div className="form">
        <p className="notice small" data-testid="perf-report-association">
          {t("perf.report.association")}
        </p>
        <div className="row">
          <label className="field small">
            {t("perf.field.platform")}
            <select
              data-testid="perf-report-platform"
              value={platform}
              onChange={(e) => {
                const p = e.target.value as Platform;
                setPlatform(p);
                setMetric(DEFAULT_METRIC[p]);
              }}
            >
              <PlatformOptions />
            </select>
          </label>
          <label className="field small">
            {t("perf.report.metric")}
            <select data-testid="perf-report-metric" value={metric} onChange={(e) => setMetric(e.target.value)}>
              {metrics.map((k) => (
                <option key={k} value={k}>
                  {metricName(t, k)}
                </option>
              ))}
            </select>
          </label>
          <label className="field small">
            {t("perf.report.age")}
            <select data-testid="perf-report-bucket" value={bucket} onChange={(e) => setBucket(e.target.value as AgeBucket)}>
              {BUCKETS.map((b) => (
                <option key={b} value={b}>
                  {t(`perf.report.bucket.${b}` as MessageId)}
                </option>
              ))}
            </select>
          </label>
          <label className="small row">
            <input type="checkbox" data-testid="perf-report-account" checked={wholeAccount} onChange={(e) => setWholeAccount(e.target.checked)} />
            {t("perf.report.wholeAccount")}
          </label>
        </div>
        {error && <ErrorBanner error={error} retry={() => void read.refetch()} />}
        {read.isPending && !error && (
          <p className="small muted" role="status">
            {t("perf.loading")}
          </p>
        )}
        {r && (
          <>
            <p className="small muted">{t("perf.report.how", { age: t(`perf.report.bucket.${r.bucket}` as MessageId), metric: metricName(t, r.metric) })}</p>
            <table className="perf-table small" data-testid="perf-report-sides">
              <thead>
                <tr>
                  <th scope="col" />
                  <th scope="col">{t("perf.report.n")}</th>
                  <th scope="col">{t("perf.report.median")}</th>
                  <th scope="col">{t("perf.report.band")}</th>
                </tr>
              </thead>
              <tbody>
                {sideRow(t("perf.report.withAi"), r.withAi, "perf-report-with")}
                {sideRow(t("perf.report.withoutAi"), r.withoutAi, "perf-report-without")}
              </tbody>
            </table>
            {!r.enoughData && (
              <p className="small" data-testid="perf-report-not-enough">
                {t("perf.report.notEnoughHelp", { with: r.withAi.n, without: r.withoutAi.n })}
              </p>
            )}
            {r.afterWeakPost > 0 && (
              <p className="notice small" data-testid="perf-report-weak">
                {t("perf.report.afterWeak", { n: r.afterWeakPost })}
              </p>
            )}
            {Object.keys(r.excluded).length > 0 && (
              <p className="small muted" data-testid="perf-report-excluded">
                {t("perf.report.excluded")}{" "}
                {Object.entries(r.excluded)
                  .map(([reason, n]) => `${t(`perf.report.exclusion.${reason}` as MessageId)} ${n}`)
                  .join(" · ")}
              </p>
            )}
            {r.points.length > 0 && (
              <div className="perf-table-wrap">
                <table className="perf-table small" data-testid="perf-report-points">
                  <thead>
                    <tr>
                      <th scope="col">{t("perf.field.publishedAt")}</th>
                      <th scope="col">{t("perf.field.title")}</th>
                      <th scope="col">{t("perf.report.ai")}</th>
                      <th scope="col">{metricName(t, r.metric)}</th>
                      <th scope="col">{t("perf.report.baseline")}</th>
                      <th scope="col">{t("perf.report.multiple")}</th>
                    </tr>
                  </thead>
                  <tbody>
                    {r.points.map((p) => (
                      <tr key={p.publicationId} data-testid="perf-report-point" data-excluded={p.excluded ?? ""}>
                        <td>{localTime(p.publishedAt, "UTC").slice(0, 10)}</td>
                        <td className="perf-title-cell">{p.title}</td>
                        <td>{p.ai ? t("perf.report.yes") : t("perf.report.no")}</td>
                        <td>{formatMetric(lang, { value: p.value, unit: r.unit ?? "count", qualifier: "exact", raw: "" })}</td>
                        <td>{p.baseline === null ? "—" : formatMetric(lang, { value: p.baseline, unit: r.unit ?? "count", qualifier: "exact", raw: "" })}</td>
                        <td>{p.excluded ? t(`perf.report.exclusion.${p.excluded}` as MessageId) : times(p.multiple)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </>
        )}
        <div className="draft-actions">
          <span className="small muted">{t("perf.report.oneThing")}</span>
          <span className="spacer" />
          <button
            type="button"
            data-testid="perf-report-export"
            disabled={exporting || !r || r.points.length === 0}
            onClick={() => void exportCsv({ report: { platform, metric, bucket, ...(wholeAccount ? {} : { projectId }) } }, "before-after")}
          >
            {exporting ? t("perf.export.busy") : t("perf.export.button")}
          </button>
          <button type="button" onClick={onClose}>
            {t("perf.close")}
          </button>
        </div>
      </div>
    </Dialog>
  );
}
