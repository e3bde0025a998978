// One target of an optimize run under review: its diff with per-hunk accept/reject
// (the AI panel's merge view), summary, risks and flags, and the fit report before →
// after.
import { useMemo } from "react";
import type { FitReport, ProposalView, RunTarget } from "../../shared/api/generated";
import { type T, useApp } from "../../shared/context";
import { describeFinding, describeFitPoint, describeLocation, type Lang, type MessageId } from "../../shared/i18n";
import { type HunkAction, type HunkBarState, type HunkDecision, hunkBars, MergeDiff, useBarLabels } from "../review";
import { targetKey } from "./run";

function FitTable({ before, after }: { before?: FitReport; after?: FitReport }) {
  const { t, lang } = useApp();
  if (!before && !after) return null;
  const points = (after ?? before)!.points;
  return (
    <div className="fit" data-testid="fit-report">
      <p>
        <strong>{t("optimize.fit")}</strong>{" "}
        <span data-testid="fit-scores">
          {before?.score ?? "–"} → {after?.score ?? "–"}
        </span>
      </p>
      <table className="small">
        <tbody>
          {points.map((p) => {
            const b = before?.points.find((x) => x.check === p.check);
            const text = describeFitPoint(lang, p);
            return (
              <tr key={p.check} data-check={p.check}>
                <td>{b ? (b.passed ? "✓" : "✗") : "–"} → {p.passed ? "✓" : "✗"}</td>
                <td>{text.measured}</td>
                <td className="muted" title={text.ruleDetail ?? undefined}>
                  {text.rule}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      <p className="small muted">{t("optimize.fitDisclaimer")}</p>
    </div>
  );
}

/** Why a target has nothing to apply, or why applying it failed; null when neither. */
function outcomeText(t: T, lang: Lang, target: RunTarget): string | null {
  if (target.outcome === "unavailable") return target.flags.includes("no_saved_draft") ? null : t("optimize.outcome.same");
  if (target.outcome === "conflict") return t("optimize.outcome.conflict");
  if (!target.outcomeMessage) return null;
  return lang === "en" ? target.outcomeMessage : t("optimize.outcome.failed");
}

export function TargetReview({
  target,
  proposal,
  decisions,
  onDecide,
}: {
  target: RunTarget;
  proposal: ProposalView | null;
  decisions: Record<string, HunkDecision>;
  onDecide: (hunk: string, action: HunkAction) => void;
}) {
  const { t, lang } = useApp();
  const outcome = outcomeText(t, lang, target);
  // Optimize's hunks start accepted: the person rejects what they do not want.
  const bars = useMemo<HunkBarState[]>(() => hunkBars(proposal?.hunks ?? [], decisions, { undecided: "accepted" }), [proposal, decisions]);
  const labels = useBarLabels();
  return (
    <div className="optimize-target" data-testid={`optimize-target-${targetKey(target)}`} data-outcome={target.outcome}>
      <p data-testid="optimize-summary">{target.summary}</p>
      {target.flags.length > 0 && (
        <ul className="small" data-testid="optimize-flags">
          {target.flags.map((f) => (
            <li key={f} className="warn">
              {/* The flags' details are the findings listed under them, worded there. */}
              {f.startsWith("over_limit")
                ? t("optimize.flag.overLimit")
                : f.startsWith("risky_terms")
                  ? t("optimize.flag.riskyTerms")
                  : t(`optimize.flag.${f}` as MessageId)}
            </li>
          ))}
        </ul>
      )}
      {outcome && (
        <p className="small muted" data-testid="optimize-outcome">
          {outcome}
        </p>
      )}
      {target.risks.length > 0 && (
        <ul className="small" data-testid="optimize-risks">
          {target.risks.map((r, i) => (
            <li key={i} className={r.severity === "block" ? "error" : "warn"}>
              {r.matched ? <mark>{r.matched}</mark> : null} {describeFinding(lang, r).message}
              {r.location ? <span className="muted"> ({describeLocation(lang, r.location)})</span> : null}
            </li>
          ))}
        </ul>
      )}
      {proposal && proposal.payload.type === "text" && (
        <MergeDiff a={proposal.payload.baseText} b={proposal.payload.proposedText} hunks={proposal.hunks} mode="inline" bars={bars} labels={labels} onAct={onDecide} ariaLabel={t("optimize.diff")} />
      )}
      <FitTable before={target.fitBefore} after={target.fitAfter} />
    </div>
  );
}
