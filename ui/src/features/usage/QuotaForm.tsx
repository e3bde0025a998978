// Settings → Usage → quotas: the workspace's daily token and monthly cost limits, with
// what today and this month used so far.
import { useState } from "react";
import type { Quotas } from "../../shared/api/generated";
import { useWrite } from "../../shared/api/query";
import { useApp } from "../../shared/context";
import { formatCost, formatTokens, parseOptionalNumber } from "../settings";

export function QuotaForm({
  quotas,
  todayTokens,
  monthCost,
}: {
  quotas: Quotas | null;
  todayTokens: number;
  monthCost: number;
}) {
  const { t, lang, toast } = useApp();
  const [daily, setDaily] = useState("");
  const [monthly, setMonthly] = useState("");
  // A failed save goes to the app's one error banner (the data layer's default).
  const setQuotas = useWrite("usage.setQuotas");
  const saving = setQuotas.isPending;
  // The fields follow the stored limits whenever a report brings them.
  const [shownQuotas, setShownQuotas] = useState<Quotas | null>(null);
  if (quotas && quotas !== shownQuotas) {
    setShownQuotas(quotas);
    setDaily(quotas.dailyTokens?.toString() ?? "");
    setMonthly(quotas.monthlyCost?.toString() ?? "");
  }
  const dailyN = parseOptionalNumber(daily);
  const monthlyN = parseOptionalNumber(monthly);
  const invalid = dailyN === null || monthlyN === null || (dailyN !== undefined && !Number.isInteger(dailyN));
  const unchanged = quotas !== null && dailyN === quotas.dailyTokens && monthlyN === quotas.monthlyCost;
  // Saving makes the reports stale (methods.ts): they bring the stored limits back here.
  const save = async () => {
    if (invalid) return;
    const params: { dailyTokens?: number; monthlyCost?: number } = {};
    if (dailyN !== undefined && dailyN !== null) params.dailyTokens = dailyN;
    if (monthlyN !== undefined && monthlyN !== null) params.monthlyCost = monthlyN;
    if (await setQuotas.run(params)) toast(t("usage.quotasSaved"));
  };
  return (
    <form
      className="form quotas"
      data-testid="quotas"
      onSubmit={(e) => {
        e.preventDefault();
        void save();
      }}
    >
      <h3 className="section-title">{t("usage.quotas")}</h3>
      <p className="small muted">{t("usage.quotasHelp")}</p>
      <div className="grid-2">
        <label className="field">
          <span className="small muted">{t("usage.dailyTokens")}</span>
          <input
            data-testid="quota-daily"
            type="number"
            min={0}
            step={1}
            placeholder={t("usage.noLimit")}
            value={daily}
            aria-invalid={dailyN === null || undefined}
            onChange={(e) => setDaily(e.target.value)}
          />
          <span className="small muted">
            {quotas?.dailyTokens !== undefined
              ? t("usage.todayOf", { used: formatTokens(lang, todayTokens), limit: formatTokens(lang, quotas.dailyTokens) })
              : t("usage.today", { used: formatTokens(lang, todayTokens) })}
          </span>
        </label>
        <label className="field">
          <span className="small muted">{t("usage.monthlyCost")}</span>
          <input
            data-testid="quota-monthly"
            type="number"
            min={0}
            step="any"
            placeholder={t("usage.noLimit")}
            value={monthly}
            aria-invalid={monthlyN === null || undefined}
            onChange={(e) => setMonthly(e.target.value)}
          />
          <span className="small muted">
            {quotas?.monthlyCost !== undefined
              ? t("usage.monthOf", { used: formatCost(lang, monthCost), limit: formatCost(lang, quotas.monthlyCost) })
              : t("usage.month", { used: formatCost(lang, monthCost) })}
          </span>
        </label>
      </div>
      <div className="row end">
        <button type="submit" data-testid="quota-save" disabled={invalid || unchanged || saving || quotas === null}>
          {t("usage.saveQuotas")}
        </button>
      </div>
    </form>
  );
}
