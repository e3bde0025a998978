// What restoring a checkpoint would do, read when the person asks: the text's change,
// the title's, the versions it takes back and the version the restore saves as.
import { useEffect, useRef, useState } from "react";
import { type ClientError, toClientError } from "../../shared/api/client";
import type { Checkpoint, ProposalView } from "../../shared/api/generated";
import { useApp } from "../../shared/context";
import { DiffView } from "../../shared/ui/DiffView";
import { ErrorBanner } from "../../shared/ui/ErrorBanner";
import { planRestore, type RestorePlan, versionWhat } from "./checkpoint";

export function RestorePreview({ checkpoint, name, proposals, flush }: { checkpoint: Checkpoint; name: string; proposals: readonly ProposalView[]; flush: () => Promise<void> }) {
  const { client, t } = useApp();
  const [plan, setPlan] = useState<RestorePlan | null>(null);
  const [error, setError] = useState<ClientError | null>(null);
  // Read once per opening: a new `flush` or list refresh does not compare again.
  const latest = useRef({ checkpoint, flush });
  useEffect(() => {
    latest.current = { checkpoint, flush };
  });
  const id = checkpoint.id;
  useEffect(() => {
    let live = true;
    planRestore(client, latest.current.checkpoint, latest.current.flush).then(
      (p) => live && setPlan(p),
      (e) => live && setError(toClientError(e)),
    );
    return () => {
      live = false;
    };
  }, [client, id]);
  if (error) return <ErrorBanner error={error} />;
  if (!plan)
    return (
      <p className="small muted" role="status">
        {t("ai.checkpoint.loading")}
      </p>
    );
  return (
    <div className="restore-preview" data-testid="restore-preview">
      <p className="small">{t("ai.checkpoint.restoreWhat", { name })}</p>
      {plan.title && <p className="small" data-testid="restore-title">{t("ai.checkpoint.titleChange", plan.title)}</p>}
      <div className="restore-diff" data-testid="restore-diff">
        <DiffView diff={plan.diff} mode="inline" identicalLabel={t("ai.checkpoint.sameText")} />
      </div>
      {(plan.undone.length > 0 || plan.unsavedAs !== null) && (
        <div data-testid="restore-undoes">
          <p className="small">{t("ai.checkpoint.undoes")}</p>
          <ul className="small restore-undo-list">
            {plan.undone.map((v) => (
              <li key={v.id}>{t("ai.checkpoint.undoVersion", { n: v.number, what: versionWhat(t, v, proposals) })}</li>
            ))}
            {plan.unsavedAs !== null && <li>{t("ai.checkpoint.undoUnsaved", { n: plan.unsavedAs })}</li>}
          </ul>
        </div>
      )}
      {checkpoint.drafts.length > 0 && <p className="small muted">{t("ai.checkpoint.drafts")}</p>}
      <p className="small muted" data-testid="restore-saves">
        {t("ai.checkpoint.savesVersion", { n: plan.savesVersion })}
      </p>
    </div>
  );
}
