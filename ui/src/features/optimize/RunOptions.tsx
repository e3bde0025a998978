// The optimize form's choices, each with a short explanation: the platforms, the goal,
// the intensity and the constraints.
import type { Goal, Intensity, Platform } from "../../shared/api/generated";
import { useApp } from "../../shared/context";
import type { MessageId } from "../../shared/i18n";
import { CONSTRAINTS, type ConstraintKey, GOALS, INTENSITIES, PLATFORMS } from "./run";

export function PlatformChoice({ disabled, chosen, onChosen }: { disabled: boolean; chosen: Platform[]; onChosen: (update: (chosen: Platform[]) => Platform[]) => void }) {
  const { t } = useApp();
  return (
    <fieldset disabled={disabled}>
      <legend>{t("optimize.platforms")}</legend>
      {PLATFORMS.map((p) => (
        <label key={p} className="inline">
          <input type="checkbox" data-testid={`optimize-platform-${p}`} checked={chosen.includes(p)} onChange={(e) => onChosen((c) => (e.target.checked ? [...c, p] : c.filter((x) => x !== p)))} />{" "}
          {t(`platform.${p}` as MessageId)}
        </label>
      ))}
    </fieldset>
  );
}

export interface RunOptionsProps {
  goal: Goal;
  onGoal: (goal: Goal) => void;
  intensity: Intensity;
  onIntensity: (intensity: Intensity) => void;
  constraints: Record<ConstraintKey, boolean>;
  onConstraints: (update: (constraints: Record<ConstraintKey, boolean>) => Record<ConstraintKey, boolean>) => void;
}

export function RunOptions({ goal, onGoal, intensity, onIntensity, constraints, onConstraints }: RunOptionsProps) {
  const { t } = useApp();
  return (
    <>
      <label>
        {t("optimize.goal")}{" "}
        <select value={goal} data-testid="optimize-goal" onChange={(e) => onGoal(e.target.value as Goal)}>
          {GOALS.map((g) => (
            <option key={g} value={g}>
              {t(`optimize.goal.${g}` as MessageId)}
            </option>
          ))}
        </select>
      </label>
      <p className="small muted">{t(`optimize.goalHelp.${goal}` as MessageId)}</p>
      <fieldset>
        <legend>{t("optimize.intensity")}</legend>
        {INTENSITIES.map((i) => (
          <label key={i} className="block">
            <input type="radio" name="intensity" data-testid={`optimize-intensity-${i}`} checked={intensity === i} onChange={() => onIntensity(i)} /> {t(`optimize.intensity.${i}` as MessageId)}
            <span className="small muted"> — {t(`optimize.intensityHelp.${i}` as MessageId)}</span>
          </label>
        ))}
      </fieldset>
      <fieldset>
        <legend>{t("optimize.constraints")}</legend>
        {CONSTRAINTS.map((c) => (
          <label key={c} className="block">
            <input type="checkbox" data-testid={`optimize-constraint-${c}`} checked={constraints[c]} onChange={(e) => onConstraints((x) => ({ ...x, [c]: e.target.checked }))} />{" "}
            {t(`optimize.constraint.${c}` as MessageId)}
          </label>
        ))}
      </fieldset>
    </>
  );
}
