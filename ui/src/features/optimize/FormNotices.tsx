// What the optimize form says before a run: a run to resume or discard, finished runs
// still waiting for review, no model set up, and platforms with no saved draft to adapt.
import type { Platform, Run } from "../../shared/api/generated";
import { useApp } from "../../shared/context";
import { formatTime, type MessageId } from "../../shared/i18n";
import { stageLabel } from "./run";

export function InterruptedRun({ run, onDiscard, onResume }: { run: Run; onDiscard: () => void; onResume: () => void }) {
  const { t } = useApp();
  return (
    <div className="warning" role="status" data-testid="optimize-interrupted">
      <p>{t(run.status === "failed" ? "optimize.failedResumable" : "optimize.interrupted", { stage: stageLabel(t, run.stage) })}</p>
      <div className="row end">
        <button type="button" data-testid="optimize-discard" onClick={onDiscard}>
          {t("optimize.discard")}
        </button>
        <button type="button" className="primary" data-testid="optimize-resume" onClick={onResume}>
          {t("optimize.resume")}
        </button>
      </div>
    </div>
  );
}

export function UnreviewedRuns({ runs, onReopen }: { runs: Run[]; onReopen: (run: Run) => void }) {
  const { t, lang } = useApp();
  return (
    <div className="warning" role="status" data-testid="optimize-unreviewed">
      <p>{t("optimize.unreviewed")}</p>
      <ul className="small">
        {runs.map((r) => (
          <li key={r.id} data-testid="optimize-unreviewed-run" data-run={r.id}>
            {t("optimize.unreviewedRun", {
              when: formatTime(lang, r.createdAt),
              platforms: r.input.platforms.map((p) => t(`platform.${p}` as MessageId)).join(lang === "zh" ? "、" : ", "),
            })}{" "}
            <button type="button" data-testid="optimize-reopen" onClick={() => onReopen(r)}>
              {t("optimize.reviewRun")}
            </button>
          </li>
        ))}
      </ul>
    </div>
  );
}

export function NoModel({ onSetUpModel }: { onSetUpModel?: () => void }) {
  const { t } = useApp();
  return (
    <div className="warning" role="status" data-testid="optimize-no-model">
      <p>{t("optimize.noModel")}</p>
      {onSetUpModel && (
        <div className="row end">
          <button type="button" className="primary" data-testid="optimize-set-up-model" onClick={onSetUpModel}>
            {t("ai.setup.open")}
          </button>
        </div>
      )}
    </div>
  );
}

export function UnsavedDrafts({ platforms, saving, onSave }: { platforms: Platform[]; saving: boolean; onSave: () => void }) {
  const { t, lang } = useApp();
  return (
    <div className="warning" role="status" data-testid="optimize-unsaved">
      <p>{t("optimize.unsaved", { platforms: platforms.map((p) => t(`platform.${p}` as MessageId)).join(lang === "zh" ? "、" : ", ") })}</p>
      <div className="row end">
        <button type="button" data-testid="optimize-save-drafts" disabled={saving} onClick={onSave}>
          {t("optimize.saveDrafts")}
        </button>
      </div>
    </div>
  );
}
