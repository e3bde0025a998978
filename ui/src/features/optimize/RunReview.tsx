// The review of a finished optimize run: one tab per target, each with its diff and
// per-hunk decisions, the title choice, and apply / reject all / decide later.
import type { Dispatch, SetStateAction } from "react";
import type { ClientError } from "../../shared/api/client";
import type { ProposalView, Run } from "../../shared/api/generated";
import { Dialog } from "../../shared/ui/Dialog";
import { ErrorBanner } from "../../shared/ui/ErrorBanner";
import { useApp } from "../../shared/context";
import type { MessageId } from "../../shared/i18n";
import type { HunkDecision } from "../review";
import { targetKey } from "./run";
import { TargetReview } from "./TargetReview";

export interface RunReviewProps {
  run: Run;
  tab: string;
  setTab: (tab: string) => void;
  proposals: Record<string, ProposalView>;
  decisions: Record<string, Record<string, HunkDecision>>;
  setDecisions: Dispatch<SetStateAction<Record<string, Record<string, HunkDecision>>>>;
  selected: Record<string, boolean>;
  setSelected: Dispatch<SetStateAction<Record<string, boolean>>>;
  title: string;
  setTitle: (title: string) => void;
  busy: boolean;
  error: ClientError | null;
  setError: (error: ClientError | null) => void;
  apply: (rejectAll?: boolean) => Promise<void>;
  onClose: () => void;
}

export function RunReview({ run, tab, setTab, proposals, decisions, setDecisions, selected, setSelected, title, setTitle, busy, error, setError, apply, onClose }: RunReviewProps) {
  const { t } = useApp();
  const current = run.targets.find((x) => targetKey(x) === tab) ?? run.targets[0];
  return (
    <Dialog title={t("optimize.reviewTitle")} onClose={onClose} testId="optimize-review" wide>
      {error && <ErrorBanner error={error} onDismiss={() => setError(null)} />}
      <div role="tablist" className="tabs">
        {run.targets.map((target) => {
          const key = targetKey(target);
          return (
            <button key={key} type="button" role="tab" aria-selected={key === tab} data-testid={`optimize-tab-${key}`} onClick={() => setTab(key)}>
              {key === "source" ? t("optimize.source") : t(`platform.${key}` as MessageId)}
            </button>
          );
        })}
      </div>
      {current && (
        <>
          <label className="small">
            <input
              type="checkbox"
              data-testid={`optimize-select-${targetKey(current)}`}
              disabled={current.outcome !== "pending" || !current.proposalId}
              checked={selected[targetKey(current)] === true}
              onChange={(e) => setSelected((s) => ({ ...s, [targetKey(current)]: e.target.checked }))}
            />{" "}
            {t("optimize.include")}
          </label>
          {current.target.type === "source" && run.titles.length > 0 && (
            <label className="small">
              {t("optimize.title")}{" "}
              <select value={title} data-testid="optimize-title" onChange={(e) => setTitle(e.target.value)}>
                <option value="">{t("optimize.keepTitle")}</option>
                {run.titles.map((x) => (
                  <option key={x} value={x}>
                    {x}
                  </option>
                ))}
              </select>
            </label>
          )}
          <TargetReview
            key={targetKey(current)}
            target={current}
            proposal={proposals[targetKey(current)] ?? null}
            decisions={decisions[targetKey(current)] ?? {}}
            onDecide={(hunk, action) =>
              setDecisions((d) => ({ ...d, [targetKey(current)]: { ...(d[targetKey(current)] ?? {}), [hunk]: action === "reject" ? "rejected" : "accepted" } }))
            }
          />
        </>
      )}
      <div className="row end">
        <button type="button" data-testid="optimize-reject-all" disabled={busy} onClick={() => void apply(true)}>
          {t("optimize.rejectAll")}
        </button>
        <button type="button" data-testid="optimize-later" onClick={onClose}>
          {t("optimize.later")}
        </button>
        <button type="button" className="primary" data-testid="optimize-apply" disabled={busy || !Object.values(selected).some(Boolean)} onClick={() => void apply()}>
          {t("optimize.applySelected")}
        </button>
      </div>
    </Dialog>
  );
}
