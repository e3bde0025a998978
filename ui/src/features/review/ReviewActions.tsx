// The review's footer: progress and the accept, stage and reject buttons, or the
// reject form (a reason is optional and becomes a constraint the model keeps to).
import { useState } from "react";
import type { ProposalView } from "../../shared/api/generated";
import { useApp } from "../../shared/context";

/** Keyed by the hunk in its parent: another hunk's rejection starts with an empty reason. */
export function RejectForm({ view, hunk, onReject, onCancel }: { view: ProposalView; hunk: string | null; onReject: (reason: string) => void; onCancel: (refocus: boolean) => void }) {
  const { t } = useApp();
  const [reason, setReason] = useState("");
  return (
    <form
      className="row grow"
      data-testid="reject-form"
      onSubmit={(e) => {
        e.preventDefault();
        onReject(reason);
      }}
    >
      <span className="small">{hunk ? t("ai.review.rejectHunk", { index: (view.hunks.findIndex((h) => h.id === hunk) ?? 0) + 1 }) : t("ai.review.rejectAll")}</span>
      <input
        className="grow"
        data-testid="reject-reason"
        aria-label={t("ai.review.reason")}
        title={t("ai.review.reason")}
        placeholder={t("ai.review.reasonShort")}
        value={reason}
        autoFocus
        maxLength={2000}
        onChange={(e) => setReason(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Escape") {
            e.preventDefault();
            e.stopPropagation();
            onCancel(hunk !== null);
          }
        }}
      />
      <button type="submit" className="primary" data-testid="reject-confirm">
        {t("ai.review.reject")}
      </button>
      <button type="button" onClick={() => onCancel(false)}>
        {t("common.cancel")}
      </button>
    </form>
  );
}

export interface ReviewActionsProps {
  view: ProposalView;
  busy: string | null;
  stale: boolean;
  pending: number;
  /** Hunks accepted here and not yet applied. */
  acceptedLocal: string[];
  /** The draft's status when accepting needs the person's confirmation (ready or published), else null. */
  confirmStatus: string | null;
  confirmFinal: boolean;
  onConfirmFinal: (confirmed: boolean) => void;
  canStage: boolean;
  acceptDisabled: boolean;
  onApply: () => void;
  onStage: () => void;
  onRejectAll: () => void;
  onAcceptAll: () => void;
}

export function ReviewActions({ view, busy, stale, pending, acceptedLocal, confirmStatus, confirmFinal, onConfirmFinal, canStage, acceptDisabled, onApply, onStage, onRejectAll, onAcceptAll }: ReviewActionsProps) {
  const { t } = useApp();
  return (
    <>
      {busy ? (
        <span className="busy small" role="status">
          <span className="spinner" aria-hidden="true" /> {busy}
        </span>
      ) : (
        view.hunks.length > 0 && <span className="small muted">{t("ai.review.progress", { done: view.hunks.length - pending, total: view.hunks.length })}</span>
      )}
      <span className="spacer" />
      {confirmStatus !== null && (
        <label className="small">
          <input type="checkbox" data-testid="review-confirm-final" checked={confirmFinal} onChange={(e) => onConfirmFinal(e.target.checked)} /> {t("ai.review.confirmFinal", { status: confirmStatus })}
        </label>
      )}
      {acceptedLocal.length > 0 && pending > 0 && (
        <button type="button" data-testid="review-apply" disabled={!!busy || stale} onClick={onApply}>
          {t("ai.review.applyNow", { n: acceptedLocal.length })}
        </button>
      )}
      {canStage && (
        <button type="button" data-testid="review-stage" disabled={!!busy} title={t("ai.review.stageHint")} onClick={onStage}>
          {t("ai.review.stage")}
        </button>
      )}
      <button type="button" data-testid="review-reject-all" disabled={!!busy} onClick={onRejectAll}>
        {t("ai.review.rejectAll")}…
      </button>
      <button type="button" className="primary" data-testid="review-accept-all" disabled={acceptDisabled} onClick={onAcceptAll}>
        {view.payload.type === "candidates" ? t("ai.review.acceptChoice") : t("ai.review.acceptAll")}
      </button>
    </>
  );
}
