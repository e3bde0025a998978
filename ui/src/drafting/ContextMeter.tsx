// How full the model's context window is, by layer (from the last `context_assembled`
// event), and the session's tokens and cost against its budget.
import { useState } from "react";
import type { Limits } from "../api/generated";
import { useApp } from "../context";
import { has, type MessageId } from "../i18n";
import type { ContextEstimate } from "./timeline";

const LAYER_COLORS = ["var(--accent)", "#2f9e77", "#d08c2b", "#9b59b6", "#5c7cfa", "#e8590c", "#868e96"];

function compact(n: number, lang: "en" | "zh"): string {
  return new Intl.NumberFormat(lang === "zh" ? "zh-CN" : "en", { notation: n >= 10_000 ? "compact" : "standard", maximumFractionDigits: 1 }).format(n);
}

export function ContextMeter({
  context,
  contextWindow,
  inputTokens,
  outputTokens,
  limits,
  cost,
}: {
  context: ContextEstimate | null;
  /** The profile's window; null when the profile is unknown. */
  contextWindow: number | null;
  inputTokens: number;
  outputTokens: number;
  limits: Limits;
  cost: number | null;
}) {
  const { t, lang } = useApp();
  const [open, setOpen] = useState(false);
  const used = context?.estimatedTokens ?? 0;
  const window = contextWindow ?? 0;
  const share = window > 0 ? Math.min(1, used / window) : 0;
  const tokens = inputTokens + outputTokens;
  const layerName = (layer: string) => (has(lang, `ai.layer.${layer}`) ? t(`ai.layer.${layer}` as MessageId) : layer);
  const pct = Math.round(share * 100);
  return (
    <div className="meter-wrap">
      <button
        type="button"
        className={`meter ${share >= 0.8 ? "meter-high" : ""}`}
        data-testid="context-meter"
        data-used={used}
        aria-expanded={open}
        aria-label={t("ai.context.label", { pct })}
        title={t("ai.context.label", { pct })}
        onClick={() => setOpen((o) => !o)}
      >
        <span className="meter-bar" aria-hidden="true">
          {window > 0 &&
            (context?.layers ?? []).map((l, i) => (
              <span key={l.layer} style={{ width: `${(Math.min(l.tokens, window) / window) * 100}%`, background: LAYER_COLORS[i % LAYER_COLORS.length] }} />
            ))}
        </span>
        <span className="small">{window > 0 ? t("ai.context.short", { used: compact(used, lang), window: compact(window, lang) }) : t("ai.context.none")}</span>
      </button>
      <span className="small muted" data-testid="session-usage">
        {limits.tokenBudget
          ? t("ai.usage.tokensOf", { n: compact(tokens, lang), budget: compact(limits.tokenBudget, lang) })
          : t("ai.usage.tokens", { n: compact(tokens, lang) })}
        {cost !== null && ` · ${limits.costBudget ? t("ai.usage.costOf", { cost: cost.toFixed(4), budget: limits.costBudget }) : t("ai.usage.cost", { cost: cost.toFixed(4) })}`}
      </span>
      {open && (
        <div className="meter-detail" data-testid="context-layers">
          {context ? (
            <table className="small">
              <tbody>
                {context.layers.map((l, i) => (
                  <tr key={l.layer}>
                    <td>
                      <span className="swatch" style={{ background: LAYER_COLORS[i % LAYER_COLORS.length] }} aria-hidden="true" /> {layerName(l.layer)}
                    </td>
                    <td className="num">{l.tokens.toLocaleString(lang === "zh" ? "zh-CN" : "en")}</td>
                    <td className="muted">{l.trimmed ? t("ai.context.trimmed") : ""}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : (
            <p className="small muted">{t("ai.context.notYet")}</p>
          )}
        </div>
      )}
    </div>
  );
}
