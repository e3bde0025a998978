// How full the model's context window is, by layer (from the last `context_assembled`
// event), and the session's tokens and cost against its budget; beside it "Compact now",
// and in its detail when the session compacts by itself.
import { useEffect, useState, useSyncExternalStore } from "react";
import type { CompactThreshold, Limits, SessionContextView } from "../../shared/api/generated";
import { useApp } from "../../shared/context";
import { has, type MessageId } from "../../shared/i18n";
import { isRunning, type SessionStore } from "./store";
import type { ContextEstimate } from "./timeline";

const LAYER_COLORS = ["var(--accent)", "#2f9e77", "#d08c2b", "#9b59b6", "#5c7cfa", "#e8590c", "#868e96"];

/** How full the context is. With the engine's budget: the request's tokens as a share of
 * the room a request has (the window less the reply's reserve), the share the compaction
 * threshold compares; else the last request against the profile's window. */
export interface ContextFill {
  used: number;
  window: number;
  /** Kept free for the reply (0 when the backend does not say). */
  reserve: number;
  pct: number;
  budget: SessionContextView | null;
}

export function contextFill(context: ContextEstimate | null, profileWindow: number | null, budget: SessionContextView | null): ContextFill {
  // An older backend's view has no reserve: then as before.
  if (budget && budget.contextWindow > 0 && typeof budget.replyReserveTokens === "number" && typeof budget.fixedTokens === "number") {
    return { used: budget.estimatedTokens, window: budget.contextWindow, reserve: budget.replyReserveTokens, pct: Math.min(100, Math.round(budget.percent)), budget };
  }
  const used = context?.estimatedTokens ?? 0;
  const window = profileWindow ?? 0;
  return { used, window, reserve: 0, pct: window > 0 ? Math.min(100, Math.round((used / window) * 100)) : 0, budget: null };
}

/** The meter's title: the share, and with the budget what it is made of. */
export function fillTitle(t: ReturnType<typeof useApp>["t"], lang: "en" | "zh", fill: ContextFill): string {
  const head = t("ai.context.label", { pct: fill.pct });
  const b = fill.budget;
  if (!b) return head;
  const n = (x: number) => x.toLocaleString(lang === "zh" ? "zh-CN" : "en");
  const budget = t("ai.context.budget", { used: n(fill.used), room: n(b.inputBudgetTokens), window: n(b.contextWindow), reserve: n(b.replyReserveTokens) });
  const fixed = t("ai.context.fixed", { fixed: n(b.fixedTokens), prompt: n(b.systemPromptTokens), tools: n(b.toolTokens) });
  return `${head}\n${budget}\n${fixed}`;
}

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
  store,
  budget = null,
}: {
  context: ContextEstimate | null;
  /** The profile's window; null when the profile is unknown. */
  contextWindow: number | null;
  inputTokens: number;
  outputTokens: number;
  limits: Limits;
  cost: number | null;
  /** The session, for "Compact now" and the compaction setting (absent: neither). */
  store?: SessionStore;
  /** The engine's context budget (`session.context`), when read. */
  budget?: SessionContextView | null;
}) {
  const { t, lang } = useApp();
  const [open, setOpen] = useState(false);
  const fill = contextFill(context, contextWindow, budget);
  const { used, window, reserve } = fill;
  const share = fill.pct / 100;
  const tokens = inputTokens + outputTokens;
  const layerName = (layer: string) => (has(lang, `ai.layer.${layer}`) ? t(`ai.layer.${layer}` as MessageId) : layer);
  const pct = fill.pct;
  const usage =
    (limits.tokenBudget
      ? t("ai.usage.tokensOf", { n: compact(tokens, lang), budget: compact(limits.tokenBudget, lang) })
      : t("ai.usage.tokens", { n: compact(tokens, lang) })) +
    (cost !== null ? ` · ${limits.costBudget ? t("ai.usage.costOf", { cost: cost.toFixed(4), budget: limits.costBudget }) : t("ai.usage.cost", { cost: cost.toFixed(4) })}` : "");
  return (
    <>
      <div className="meter-wrap">
        <button
          type="button"
          className={`meter ${share >= 0.8 ? "meter-high" : ""}`}
          data-testid="context-meter"
          data-used={used}
          aria-expanded={open}
          data-reserve={reserve}
          aria-label={t("ai.context.label", { pct })}
          title={fillTitle(t, lang, fill)}
          onClick={() => setOpen((o) => !o)}
        >
          <span className="meter-bar" aria-hidden="true">
            {window > 0 &&
              (context?.layers ?? []).map((l, i) => (
                <span key={l.layer} style={{ width: `${(Math.min(l.tokens, window) / window) * 100}%`, background: LAYER_COLORS[i % LAYER_COLORS.length] }} />
              ))}
            {window > 0 && reserve > 0 && <span className="meter-reserve" data-testid="meter-reserve" style={{ width: `${(Math.min(reserve, window) / window) * 100}%` }} />}
          </span>
          <span className="small">
            {window > 0
              ? reserve > 0
                ? t("ai.context.shortReserve", { used: compact(used, lang), reserve: compact(reserve, lang), window: compact(window, lang) })
                : t("ai.context.short", { used: compact(used, lang), window: compact(window, lang) })
              : t("ai.context.none")}
          </span>
        </button>
        <span className="small muted meter-usage" data-testid="session-usage" title={usage}>
          {usage}
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
            {store && <CompactionSetting store={store} />}
          </div>
        )}
      </div>
      {store && <CompactNow store={store} />}
      {budget?.fixedFits === false && (
        <p className="notice small" role="alert" data-testid="context-fixed-too-large">
          {t("ai.context.fixedTooLarge")}
        </p>
      )}
    </>
  );
}

/** Summarises the earlier conversation now; the timeline shows it running, with Stop. */
export function CompactNow({ store }: { store: SessionStore }) {
  const { t, toast } = useApp();
  const snap = useSyncExternalStore(store.subscribe, store.getSnapshot);
  if (!store.offers("session.compact")) return null;
  return (
    <button
      type="button"
      className="small-btn compact-now"
      data-testid="compact-now"
      title={t("ai.compact.title")}
      disabled={isRunning(snap) || snap.timeline.archived}
      onClick={() =>
        void store.compact().then((r) => {
          if (r === "nothing") toast(t("ai.compact.nothing"));
        })
      }
    >
      {t("ai.compact.now")}
    </button>
  );
}

const PERCENTS = [50, 60, 70, 80, 90];

function thresholdValue(threshold: CompactThreshold | undefined): string {
  if (!threshold) return "default";
  return threshold.mode === "manual" ? "manual" : String(threshold.percent);
}

/** When the session compacts by itself: as its model's profile says, at a share, or never. */
function CompactionSetting({ store }: { store: SessionStore }) {
  const { t } = useApp();
  const [view, setView] = useState<SessionContextView | null>(null);
  useEffect(() => {
    let live = true;
    void store.readContext().then((v) => live && setView(v));
    return () => {
      live = false;
    };
  }, [store]);
  if (!view || !store.offers("session.setCompaction")) return null;
  const describe = (x: CompactThreshold | undefined) => (x?.mode === "manual" ? t("ai.compact.manual") : t("ai.compact.at", { pct: x?.percent ?? 80 }));
  const value = thresholdValue(view.sessionThreshold);
  const percents = view.sessionThreshold?.mode === "auto" && !PERCENTS.includes(view.sessionThreshold.percent) ? [...PERCENTS, view.sessionThreshold.percent].sort((a, b) => a - b) : PERCENTS;
  return (
    <label className="small compaction-setting">
      {t("ai.compact.setting")}
      <select
        data-testid="compaction-threshold"
        value={value}
        onChange={(e) => {
          const v = e.target.value;
          const next: CompactThreshold | undefined = v === "default" ? undefined : v === "manual" ? { mode: "manual" } : { mode: "auto", percent: Number(v) };
          void store.setCompaction(next).then((r) => r && setView(r));
        }}
      >
        <option value="default">{t("ai.compact.default", { what: describe(view.profileThreshold) })}</option>
        {percents.map((p) => (
          <option key={p} value={String(p)}>
            {t("ai.compact.at", { pct: p })}
          </option>
        ))}
        <option value="manual">{t("ai.compact.manual")}</option>
      </select>
    </label>
  );
}
