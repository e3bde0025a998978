// Reviewing one proposal where the text lives: over the editor, in CodeMirror's merge
// view. Per hunk: Enter accepts the focused hunk, Backspace rejects it (with an
// optional reason, which becomes a constraint the model keeps to). Accepted hunks are
// applied together, in one version, once every hunk is decided (or on "apply now");
// the whole proposal can be accepted or rejected at once. Candidates are choices. A
// stale proposal says so and offers rebase, regenerate, or comparing both texts.
import { useState } from "react";
import type { Accepted, ProposalView } from "../../shared/api/generated";
import { ErrorBanner } from "../../shared/ui/ErrorBanner";
import { useApp } from "../../shared/context";
import type { MessageId } from "../../shared/i18n";
import { OtherFindings, StaleBanner, SupersededNote } from "./ReviewNotices";
import { Candidates, PlainPayload } from "./ReviewPayload";
import { RejectForm, ReviewActions } from "./ReviewActions";
import { MergeDiff } from "./MergeDiff";
import { DraftProposalPreview } from "./DraftProposalPreview";
import { ProposalBadge, targetLabel } from "../drafting";
import type { SessionStore, SourceTarget } from "../drafting";
import { WhyThisChange } from "./WhyThisChange";
import { useReview } from "./useReview";

export interface ProposalReviewProps {
  proposalId: string;
  store: SessionStore | null;
  /** Saves the editor's pending text, so the accept is checked against what is on screen. */
  flush: () => Promise<void>;
  /** The project's working-copy revision now (after `flush`). */
  revision: () => number;
  /** The editor's text now (for comparing a stale proposal with it). */
  currentText: () => string;
  onAccepted: (accepted: Accepted) => void;
  /** Asks the session for a new proposal on the current text. */
  onRegenerate: (view: ProposalView) => void;
  onClose: () => void;
  /** Opens a source of "Why this change?" (a search hit's document at its span). */
  onOpenSource?: (target: SourceTarget) => void;
  /** Opens Settings → Memory. */
  onOpenMemory?: () => void;
}

type Mode = "inline" | "split";


/** Keyed by `proposalId` in its parent: another proposal is another review. */
export function ProposalReview({ proposalId, store, flush, revision, currentText, onAccepted, onRegenerate, onClose, onOpenSource, onOpenMemory }: ProposalReviewProps) {
  const { t } = useApp();
  const [mode, setMode] = useState<Mode>("inline");
  const r = useReview({ proposalId, store, flush, revision, onAccepted, onClose });
  const { id, setId, view, error, setError, compare, setCompare, rejecting, setRejecting, busy, conflicts, choices, setChoices, confirmFinal, setConfirmFinal } = r;
  const { draft, draftStatus, needsConfirm, root, focusNext, open, stale, accept, reject, onAct, other, bars, labels, acceptedLocal, pendingCount, canStage, stage, rebase } = r;
  const payload = view?.payload;
  const kindLabel = view ? t(`ai.kind.${view.kind}` as MessageId) : "";

  return (
    <section
      ref={root}
      className="overlay review"
      data-testid="proposal-review"
      data-proposal={view?.id ?? id}
      data-status={view?.status}
      data-stale={stale ? "true" : "false"}
      aria-label={t("ai.review.title")}
    >
      <header className="overlay-bar">
        <h2 className="overlay-title">
          {view ? view.summary : t("ai.loading")}
          {view && <span className="muted small">{` · ${kindLabel} · ${targetLabel(t, view)}`}</span>}
        </h2>
        {view && <ProposalBadge view={view} />}
        {payload?.type === "text" && (
          <div className="seg" role="group" aria-label={t("diff.mode")}>
            <button type="button" aria-pressed={mode === "inline"} data-testid="review-inline" onClick={() => setMode("inline")}>
              {t("diff.inline")}
            </button>
            <button type="button" aria-pressed={mode === "split"} data-testid="review-split" onClick={() => setMode("split")}>
              {t("diff.split")}
            </button>
          </div>
        )}
        <button type="button" data-testid="review-close" data-autofocus onClick={onClose}>
          {t("common.close")} <kbd>Esc</kbd>
        </button>
      </header>
      {error && (
        <div className="pad-x">
          <ErrorBanner error={error} onDismiss={() => setError(null)} />
        </div>
      )}
      {stale && (
        <StaleBanner
          view={view}
          busy={!!busy}
          canRegenerate={!!store}
          compare={compare}
          onRebase={() => void rebase()}
          onRegenerate={() => view && onRegenerate(view)}
          onToggleCompare={() => setCompare((c) => !c)}
        />
      )}
      {view?.status === "superseded" && <SupersededNote view={view} onOpen={setId} />}
      {view?.carries && view.carries.length > 0 && (
        <p className="small muted pad-x" data-testid="carries">
          {t("ai.proposal.carries", { summary: view.carries.map((c) => c.summary).join("；") })}
        </p>
      )}
      {view && (
        <div className="pad-x">
          <WhyThisChange key={view.id} proposalId={view.id} onOpenSource={onOpenSource} onOpenMemory={onOpenMemory} />
        </div>
      )}
      {conflicts > 0 && (
        <p className="notice small" role="status" data-testid="rebase-conflicts">
          {t("ai.review.rebaseConflicts", { n: conflicts })}
        </p>
      )}
      {view && view.newFindings.length > 0 && other.length > 0 && <OtherFindings findings={other} />}
      <div className="overlay-body review-body">
        {view && payload?.type === "text" && (
          <>
            {compare && <p className="small muted pad-x">{t("ai.review.compareHelp")}</p>}
            <MergeDiff
              a={payload.baseText}
              b={compare ? currentText() : payload.proposedText}
              hunks={compare ? null : view.hunks}
              mode={compare ? "split" : mode}
              bars={compare ? [] : bars}
              labels={labels}
              onAct={onAct}
              ariaLabel={t("ai.review.title")}
            />
            {view.kind === "draft_patch" && draft && !compare && <DraftProposalPreview draft={draft} proposedText={payload.proposedText} />}
          </>
        )}
        {view && payload?.type === "candidates" && <Candidates view={view} open={open} choices={choices} onChoices={setChoices} />}
        {view && <PlainPayload view={view} />}
      </div>
      {view && open && (
        <footer className="overlay-bar review-actions">
          {rejecting ? (
            <RejectForm
              key={rejecting.hunk ?? ""}
              view={view}
              hunk={rejecting.hunk}
              onReject={(reason) => {
                const target = rejecting.hunk;
                setRejecting(null);
                void reject(view, target, reason);
              }}
              onCancel={(refocus) => {
                setRejecting(null);
                if (refocus) focusNext();
              }}
            />
          ) : (
            <ReviewActions
              view={view}
              busy={busy}
              stale={stale}
              pending={pendingCount}
              acceptedLocal={acceptedLocal}
              confirmStatus={needsConfirm ? draftStatus : null}
              confirmFinal={confirmFinal}
              onConfirmFinal={setConfirmFinal}
              canStage={canStage}
              acceptDisabled={!!busy || stale || (payload?.type === "candidates" && choices.length === 0) || (needsConfirm && !confirmFinal)}
              onApply={() => void accept(view, acceptedLocal)}
              onStage={() => void stage()}
              onRejectAll={() => setRejecting({ hunk: null })}
              onAcceptAll={() => void accept(view)}
            />
          )}
        </footer>
      )}
    </section>
  );
}
