// What the review says above the diff: a stale proposal's banner (rebase, regenerate,
// compare), a superseded proposal's note, what it carries over, the conflicts a rebase
// left, and the findings that fall in no hunk.
import type { Finding, ProposalView } from "../../shared/api/generated";
import { useApp } from "../../shared/context";
import { describeFinding, type MessageId } from "../../shared/i18n";

export function StaleBanner({ view, busy, canRegenerate, compare, onRebase, onRegenerate, onToggleCompare }: {
  view: ProposalView | null;
  busy: boolean;
  canRegenerate: boolean;
  compare: boolean;
  onRebase: () => void;
  onRegenerate: () => void;
  onToggleCompare: () => void;
}) {
  const { t } = useApp();
  const text = view?.payload.type === "text";
  return (
    <div className="stale-banner" role="alert" data-testid="stale-banner">
      <p>{t("ai.review.stale")}</p>
      <div className="row">
        {text && (
          <button type="button" className="primary" data-testid="review-rebase" disabled={busy} onClick={onRebase}>
            {t("ai.review.rebase")}
          </button>
        )}
        <button type="button" data-testid="review-regenerate" disabled={busy || !canRegenerate} onClick={onRegenerate}>
          {t("ai.review.regenerate")}
        </button>
        {text && (
          <button type="button" aria-pressed={compare} data-testid="review-compare" onClick={onToggleCompare}>
            {t("ai.review.compare")}
          </button>
        )}
      </div>
    </div>
  );
}

export function SupersededNote({ view, onOpen }: { view: ProposalView; onOpen: (id: string) => void }) {
  const { t } = useApp();
  return (
    <div className="notice small row" role="status" data-testid="superseded-note" data-reason={view.supersededReason ?? "replaced"}>
      <span className="grow">{t(`ai.proposal.superseded.${view.supersededReason ?? "replaced"}` as MessageId)}</span>
      {view.supersededBy && (
        <button type="button" data-testid="open-successor" onClick={() => view.supersededBy && onOpen(view.supersededBy)}>
          {t("ai.proposal.openSuccessor")}
        </button>
      )}
    </div>
  );
}

/** The new findings that fall in no hunk (those in a hunk show on its bar). */
export function OtherFindings({ findings }: { findings: Finding[] }) {
  const { lang } = useApp();
  return (
    <ul className="findings small" data-testid="review-findings">
      {findings.map((f, i) => {
        const text = describeFinding(lang, f);
        return (
          <li key={i} className={`sev-${f.severity}`} data-testid="review-finding">
            {text.message}
            {text.suggestion && <span className="muted">{` — ${text.suggestion}`}</span>}
          </li>
        );
      })}
    </ul>
  );
}
