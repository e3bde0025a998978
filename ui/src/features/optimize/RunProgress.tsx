// A run in progress: its stages as the run's own log streams them, with cancel.
import { Dialog } from "../../shared/ui/Dialog";
import { useApp } from "../../shared/context";
import { type StageLine, stageLabel, stageState } from "./run";

export function RunProgress({ stages, onCancel }: { stages: StageLine[]; onCancel: () => void }) {
  const { t, lang } = useApp();
  return (
    <Dialog title={t("optimize.running")} onClose={onCancel} testId="optimize-progress">
      <ol className="stages" data-testid="optimize-stages" aria-live="polite">
        {stages
          .filter((s) => s.state !== "started" || !stages.some((x) => x.stage === s.stage && x.state === "done"))
          .map((s, i) => (
            <li key={i} data-state={s.state}>
              {stageLabel(t, s.stage)} — {stageState(t, lang, s)}
            </li>
          ))}
      </ol>
      <p className="muted small">
        <span className="spinner" aria-hidden="true" /> {t("optimize.wait")}
      </p>
      <div className="row end">
        <button type="button" data-testid="optimize-cancel" onClick={onCancel}>
          {t("optimize.cancel")}
        </button>
      </div>
    </Dialog>
  );
}
