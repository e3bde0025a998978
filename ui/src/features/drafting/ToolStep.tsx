// A tool call in the timeline: one compact line (state, tool, what it does), expandable
// to its input and result, with a chip per proposal it made; and the proposal's badge.
import { useState, useSyncExternalStore } from "react";
import type { ProposalView } from "../../shared/api/generated";
import { useApp } from "../../shared/context";
import type { MessageId } from "../../shared/i18n";
import { argSummary, preview, STATE_ICON, toolLabel } from "./stepText";
import type { SessionStore } from "./store";
import type { Item, StepState } from "./timeline";
import { ToolArgs } from "./ToolInput";

function StateIcon({ state }: { state: StepState }) {
  const { t } = useApp();
  return (
    <span className={`step-icon step-${state}`} role="img" aria-label={t(`ai.step.${state}` as MessageId)} title={t(`ai.step.${state}` as MessageId)}>
      {STATE_ICON[state]}
    </span>
  );
}

function ProposalChip({ store, id, onReview }: { store: SessionStore; id: string; onReview: (id: string) => void }) {
  const { t } = useApp();
  const view = useSyncExternalStore(store.subscribe, () => store.getSnapshot().proposals.find((p) => p.id === id));
  return (
    <button type="button" className="proposal-chip" data-testid="proposal-chip" data-proposal={id} onClick={() => onReview(id)}>
      <span className="proposal-chip-title">{view?.summary ?? t("ai.proposal.loading")}</span>
      {view && <ProposalBadge view={view} />}
    </button>
  );
}

export function ProposalBadge({ view }: { view: ProposalView }) {
  const { t } = useApp();
  if (view.status === "proposed" && view.stale) {
    return (
      <span className="badge badge-warn" data-testid="proposal-stale">
        {t("ai.proposal.stale")}
      </span>
    );
  }
  return (
    <span className={`badge badge-${view.status}`} data-testid="proposal-status" data-status={view.status}>
      {t(`ai.proposal.status.${view.status}` as MessageId)}
    </span>
  );
}

export function ToolStep({ item, store, onReview }: { item: Extract<Item, { kind: "tool" }>; store: SessionStore; onReview: (id: string) => void }) {
  const { t, lang } = useApp();
  const [open, setOpen] = useState(false);
  const summary = argSummary(t, lang, item.args);
  return (
    <div className={`step step-${item.state}`} data-testid="tool-step" data-tool={item.name} data-state={item.state}>
      <button type="button" className="step-line" aria-expanded={open} onClick={() => setOpen((o) => !o)}>
        <StateIcon state={item.state} />
        <span className="step-name">{toolLabel(t, lang, item.name)}</span>
        {summary && <span className="step-arg muted">{summary}</span>}
        <span className="step-state muted small">{t(`ai.step.${item.state}` as MessageId)}</span>
      </button>
      {open && (
        <div className="step-detail" data-testid="tool-detail">
          <p className="small muted">{t("ai.step.input")}</p>
          <ToolArgs tool={item.name} args={item.args} />
          {item.result !== undefined && (
            <>
              <p className="small muted">
                {t("ai.step.result")}
                {item.status && item.status !== "success" ? ` · ${t(`ai.status.${item.status}` as MessageId)}` : ""}
              </p>
              <pre>{preview(item.result)}</pre>
            </>
          )}
        </div>
      )}
      {item.proposalIds.map((id) => (
        <ProposalChip key={id} store={store} id={id} onReview={onReview} />
      ))}
    </div>
  );
}
