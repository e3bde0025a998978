// The dashboard's table: every publication with its latest metrics (absent is "—",
// never 0), sorted by any column.
import type { Dashboard, DashboardRow } from "../../shared/api/generated";
import { useApp } from "../../shared/context";
import type { MessageId } from "../../shared/i18n";
import { ABSENT, formatMetric, localTime } from "./format";
import { metricName } from "./Metrics";

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

export function PublicationTable({ board, sort, descending, onSort }: { board: Dashboard; sort: string; descending: boolean; onSort: (k: string) => void }) {
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
