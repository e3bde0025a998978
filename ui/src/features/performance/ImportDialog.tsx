// Import of a platform's own export: choose the file, see what each row would do
// (matched, unmatched, ambiguous, not understood), match or skip the open rows, then
// commit in one write. Nothing is written before the commit; a file imported before
// says so and changes nothing. An account's daily export (公众号 用户分析) has no
// publications to match: its rows are days of the account the person picks.
import { useState } from "react";
import { type ClientError, toClientError } from "../../shared/api/client";
import type { PerfImportResult, Platform, PublicationView, RowPreview } from "../../shared/api/generated";
import { useCalls, useMethod } from "../../shared/api/query";
import { useApp } from "../../shared/context";
import type { MessageId } from "../../shared/i18n";
import { blobToBase64 } from "../../shared/lib/files";
import { Dialog } from "../../shared/ui/Dialog";
import { ErrorBanner } from "../../shared/ui/ErrorBanner";
import { formatMetric, localTime, USUAL_METRICS } from "./format";
import { PlatformOptions } from "./PlatformOptions";
import { metricName } from "./Metrics";

interface Picked {
  fileName: string;
  dataBase64: string;
}

/** Where a metric comes in the platform's usual order (others after, alphabetically). */
function usualRank(platform: Platform, key: string): number {
  const i = USUAL_METRICS[platform].indexOf(key);
  return i >= 0 ? i : 100;
}

/** True when a row still needs the person's choice before a commit. */
export function isOpen(r: RowPreview): boolean {
  return r.outcome.status === "unmatched" || r.outcome.status === "ambiguous" || r.outcome.status === "notUnderstood";
}

export function ImportDialog({ publications, onClose }: { publications: PublicationView[]; onClose: () => void }) {
  const { t, lang, toast } = useApp();
  const { call } = useCalls();
  const [file, setFile] = useState<Picked | null>(null);
  const [platform, setPlatform] = useState<Platform | "">("");
  const [account, setAccount] = useState("");
  const accountList = useMethod("account.list", {});
  const [assign, setAssign] = useState<Record<string, string>>({});
  const [result, setResult] = useState<PerfImportResult | null>(null);
  const [busy, setBusy] = useState(false);
  // Kept beside the form on purpose (not the app's banner): the import is a dialog whose
  // error names the file or the rows to fix before the next preview or commit.
  const [error, setError] = useState<ClientError | null>(null);

  const run = async (picked: Picked, choices: Record<string, string>, commit: boolean, accountId = account) => {
    setBusy(true);
    try {
      const r = await call("perf.import", {
        ...picked,
        ...(platform ? { platform } : {}),
        ...(accountId ? { accountId } : {}),
        assign: choices,
        commit,
      });
      setResult(r);
      setError(null);
      if (r.committed) {
        toast(t("perf.import.done", { n: r.snapshots.length }));
        onClose();
      }
    } catch (e) {
      setError(toClientError(e));
      if (!commit) setResult(null);
    } finally {
      setBusy(false);
    }
  };

  const choose = async (files: FileList | null) => {
    const f = files?.[0];
    if (!f) return;
    const picked = { fileName: f.name, dataBase64: await blobToBase64(f) };
    setFile(picked);
    setAssign({});
    await run(picked, {}, false);
  };

  const decide = (row: number, choice: string) => {
    const next = { ...assign };
    if (choice === "") delete next[row];
    else next[row] = choice;
    setAssign(next);
    if (file) void run(file, next, false);
  };

  const skipOpen = () => {
    if (!result || !file) return;
    const next = { ...assign };
    for (const r of result.preview.rows) if (isOpen(r)) next[r.row] = "skip";
    setAssign(next);
    void run(file, next, false);
  };

  const preview = result?.preview ?? null;
  const live = publications.filter((p) => !p.publication.removedAt && p.publication.platform === preview?.platform);
  const open = preview ? preview.rows.filter(isOpen).length : 0;
  const already = preview?.alreadyImported ?? null;
  const days = preview?.target === "account";
  const platformAccounts = (accountList.data?.accounts ?? []).filter((a) => a.platform === preview?.platform);
  const pickAccount = (id: string) => {
    setAccount(id);
    if (file) void run(file, assign, false, id);
  };

  const outcome = (r: RowPreview): string => {
    switch (r.outcome.status) {
      case "matched":
        return t(`perf.import.by.${r.outcome.by}` as MessageId);
      case "ambiguous":
        return t("perf.import.ambiguous", { n: r.outcome.candidates.length });
      case "unmatched":
        return t("perf.import.unmatched");
      case "skipped":
        return t("perf.import.skipped");
      case "notUnderstood":
        return r.outcome.problem;
      case "accountDay":
        return t("perf.import.accountDay");
    }
  };
  const current = (r: RowPreview): string =>
    assign[r.row] ?? (r.outcome.status === "matched" ? r.outcome.publicationId : r.outcome.status === "skipped" ? "skip" : "");

  return (
    <Dialog title={t("perf.import.title")} onClose={onClose} testId="perf-import" wide>
      <div className="form">
        <p className="small muted">{t("perf.import.help")}</p>
        <div className="row">
          <label className="field small">
            {t("perf.import.file")}
            <input type="file" data-testid="perf-import-file" accept=".csv,.txt,.xls,.xlsx,.html" onChange={(e) => void choose(e.target.files)} />
          </label>
          <label className="field small">
            {t("perf.field.platform")}
            <select data-testid="perf-import-platform" value={platform} onChange={(e) => setPlatform(e.target.value as Platform | "")}>
              <option value="">{t("perf.import.anyPlatform")}</option>
              <PlatformOptions />
            </select>
          </label>
        </div>
        {error && <ErrorBanner error={error} onDismiss={() => setError(null)} />}
        {busy && !preview && (
          <p className="small muted" role="status">
            <span className="spinner" aria-hidden="true" /> {t("perf.import.reading")}
          </p>
        )}
        {preview && (
          <>
            <p className="small" data-testid="perf-import-summary">
              {t("perf.import.summary", {
                name: preview.importerName,
                matched: preview.matched,
                unmatched: preview.unmatched + preview.ambiguous,
                skipped: preview.skipped,
                notUnderstood: preview.notUnderstood,
              })}
            </p>
            {already && (
              <p className="notice small" role="status" data-testid="perf-import-already">
                {t("perf.import.already")}
              </p>
            )}
            {days && !already && (
              <label className="field small">
                {t("perf.import.account")}
                <select data-testid="perf-import-account" value={preview.accountId ?? ""} disabled={busy} onChange={(e) => pickAccount(e.target.value)}>
                  <option value="">{t("perf.import.choose")}</option>
                  {platformAccounts.map((a) => (
                    <option key={a.id} value={a.id}>
                      {a.name}
                    </option>
                  ))}
                </select>
                {platformAccounts.length === 0 && <span className="muted">{t("perf.import.noAccount")}</span>}
              </label>
            )}
            <div className="perf-table-wrap">
              <table className="perf-table small" data-testid="perf-import-rows">
                <thead>
                  <tr>
                    <th scope="col">{t("perf.import.row")}</th>
                    {!days && <th scope="col">{t("perf.field.title")}</th>}
                    <th scope="col">{days ? t("perf.import.day") : t("perf.field.publishedAt")}</th>
                    <th scope="col">{t("perf.import.metrics")}</th>
                    <th scope="col">{t("perf.import.outcome")}</th>
                    {!days && <th scope="col">{t("perf.import.choice")}</th>}
                  </tr>
                </thead>
                <tbody>
                  {preview.rows.map((r) => (
                    <tr key={r.row} data-testid="perf-import-row" data-status={r.outcome.status}>
                      <td>{r.row}</td>
                      {!days && <td className="perf-title-cell">{r.title || "—"}</td>}
                      <td>
                        {r.outcome.status === "accountDay"
                          ? r.outcome.date
                          : r.publishedAt
                            ? localTime(r.publishedAt, preview.platform === "x" ? "UTC" : "Asia/Shanghai").slice(0, days ? 10 : undefined)
                            : "—"}
                      </td>
                      <td className="perf-title-cell">
                        {Object.entries(r.metrics)
                          .sort(([a], [b]) => usualRank(preview.platform, a) - usualRank(preview.platform, b))
                          .slice(0, 3)
                          .map(([k, v]) => `${metricName(t, k)} ${formatMetric(lang, v)}`)
                          .join(" · ")}
                      </td>
                      <td>{outcome(r)}</td>
                      {!days && (
                      <td>
                        {!already && (
                          <select
                            aria-label={t("perf.import.choiceFor", { row: r.row })}
                            data-testid="perf-import-choice"
                            value={current(r)}
                            disabled={busy}
                            onChange={(e) => decide(r.row, e.target.value)}
                          >
                            <option value="">{t("perf.import.choose")}</option>
                            {r.outcome.status !== "notUnderstood" &&
                              live.map((p) => (
                                <option key={p.publication.id} value={p.publication.id}>
                                  {`${p.publication.title} · ${localTime(p.publication.publishedAt, p.publication.timeZone)}`}
                                </option>
                              ))}
                            <option value="skip">{t("perf.import.skip")}</option>
                          </select>
                        )}
                      </td>
                      )}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </>
        )}
        <div className="draft-actions">
          {preview && open > 0 && !already && (
            <span className="small muted" data-testid="perf-import-open">
              {days && !preview.accountId ? t("perf.import.pickAccount") : t("perf.import.open", { n: open })}
            </span>
          )}
          <span className="spacer" />
          {preview && open > 0 && !already && !(days && !preview.accountId) && (
            <button type="button" data-testid="perf-import-skip-open" disabled={busy} onClick={skipOpen}>
              {t("perf.import.skipOpen")}
            </button>
          )}
          <button type="button" onClick={onClose}>
            {already ? t("perf.close") : t("perf.cancel")}
          </button>
          {!already && (
            <button
              type="button"
              className="primary"
              data-testid="perf-import-commit"
              disabled={busy || !preview || open > 0 || preview.matched === 0}
              onClick={() => file && void run(file, assign, true)}
            >
              {t("perf.import.commit", { n: preview?.matched ?? 0 })}
            </button>
          )}
        </div>
      </div>
    </Dialog>
  );
}
