// One-click optimize: the dialog (platforms, goal, intensity, constraints, each with a
// short explanation), the progress by stage with cancel (the run's own log, streamed),
// and the review: one tab per target (the source and each platform) with the diff
// (per-hunk accept/reject, in the same merge view as the AI panel's review), the
// summary, the risks, flags and the fit report before → after; "apply selected" takes
// the chosen targets, each in its own transaction (a moved target is a conflict for it
// alone). Nothing changes until then.
import { useCallback, useEffect, useRef, useState } from "react";
import { type ClientError, type HarnessEvent, toClientError } from "../../shared/api/client";
import type { Goal, Intensity, Platform, ProposalView, Run } from "../../shared/api/generated";
import { readFresh, useCalls } from "../../shared/api/query";
import { Dialog } from "../../shared/ui/Dialog";
import { ErrorBanner } from "../../shared/ui/ErrorBanner";
import { useApp } from "../../shared/context";
import { formatTime, type MessageId } from "../../shared/i18n";
import type { HunkDecision } from "../review";

import { CONSTRAINTS, type ConstraintKey, GOALS, INTENSITIES, MAX_UNREVIEWED, type OptimizeDialogProps, PLATFORMS, resumable, type StageLine, stageLabel, stageState, targetKey, unreviewed } from "./run";
import { RunReview } from "./RunReview";

export { unreviewed };
export type { OptimizeDialogProps };

export function OptimizeDialog({ projectId, platforms, draft, flush, onApplied, onClose, onSetUpModel, onDraftsSaved }: OptimizeDialogProps) {
  const { client, t, toast, lang } = useApp();
  const { call } = useCalls();
  const [phase, setPhase] = useState<"form" | "running" | "review">("form");
  const [chosen, setChosen] = useState<Platform[]>(draft ? [draft] : platforms.length > 0 ? platforms : PLATFORMS);
  const [goal, setGoal] = useState<Goal>("recommendation");
  const [intensity, setIntensity] = useState<Intensity>("balanced");
  const [constraints, setConstraints] = useState<Record<ConstraintKey, boolean>>({ keepVoice: true, keepTitle: false, keepStructure: false, avoidClickbait: true });
  const [stages, setStages] = useState<StageLine[]>([]);
  const [error, setError] = useState<ClientError | null>(null);
  const [run, setRun] = useState<Run | null>(null);
  const [tab, setTab] = useState<string>("source");
  const [proposals, setProposals] = useState<Record<string, ProposalView>>({});
  const [decisions, setDecisions] = useState<Record<string, Record<string, HunkDecision>>>({});
  const [selected, setSelected] = useState<Record<string, boolean>>({});
  const [title, setTitle] = useState<string>("");
  const [busy, setBusy] = useState(false);
  const runId = useRef<string | null>(null);

  const showRun = useCallback(
    async (r: Run) => {
      setRun(r);
      const loaded: Record<string, ProposalView> = {};
      for (const target of r.targets) {
        if (target.proposalId) loaded[targetKey(target)] = await readFresh(client, "proposal.get", { proposalId: target.proposalId });
      }
      setProposals(loaded);
      setSelected(Object.fromEntries(r.targets.filter((x) => x.outcome === "pending" && x.proposalId).map((x) => [targetKey(x), true])));
      setTab(r.targets[0] ? targetKey(r.targets[0]) : "source");
      setPhase("review");
    },
    [client],
  );

  // With no model set up, say so before the person fills the form (and follow a
  // profile made in Settings meanwhile). Unknown (the list failed): the run says why.
  const [noModel, setNoModel] = useState(false);
  useEffect(() => {
    let live = true;
    const read = () =>
      void readFresh(client, "llmProfile.list", {})
        .then((r) => live && setNoModel(r.profiles.length === 0))
        .catch(() => undefined);
    read();
    const unfollow = client.onProfilesChanged(read);
    return () => {
      live = false;
      unfollow();
    };
  }, [client]);

  // A run of this kind that the app's closing interrupted, or that failed on a model
  // call, is offered for resuming (the steps it finished are reused); finished runs
  // whose package was left for later ("Decide later", a reload) are listed to review.
  const [interrupted, setInterrupted] = useState<Run | null>(null);
  const [waiting, setWaiting] = useState<Run[]>([]);
  useEffect(() => {
    let live = true;
    readFresh(client, "optimize.list", { projectId })
      .then((r) => {
        if (!live) return;
        const last = r.runs[0];
        if (last && resumable(last) && (last.input.draft ?? null) === (draft ?? null)) setInterrupted(last);
        setWaiting(r.runs.filter((x) => unreviewed(x) && (x.input.draft ?? null) === (draft ?? null)).slice(0, MAX_UNREVIEWED));
      })
      .catch(() => undefined);
    return () => {
      live = false;
    };
  }, [client, projectId, draft]);

  // The platforms without a saved draft: an adapted draft has nothing to apply to, so
  // the run does not adapt them (no model call); said before the run, with the way to
  // save the compiled drafts first.
  const [saved, setSaved] = useState<Platform[] | null>(null);
  const [savingDrafts, setSavingDrafts] = useState(false);
  const readSaved = useCallback(
    () =>
      readFresh(client, "platformDraft.list", { projectId }).then(
        (r) => setSaved(r.drafts.map((d) => d.platform)),
        () => setSaved(null),
      ),
    [client, projectId],
  );
  useEffect(() => {
    void readSaved();
  }, [readSaved]);
  const unsaved = saved === null || draft ? [] : chosen.filter((p) => !saved.includes(p));
  const saveDrafts = async () => {
    setSavingDrafts(true);
    setError(null);
    try {
      await flush();
      for (const platform of unsaved) await call("platformDraft.save", { projectId, platform });
      await readSaved();
      onDraftsSaved?.();
      toast(t("optimize.draftsSaved"));
    } catch (e) {
      setError(toClientError(e));
    } finally {
      setSavingDrafts(false);
    }
  };

  const follow = async (begin: (onEvent: (event: HarnessEvent) => void) => Promise<Run>) => {
    setError(null);
    setStages([]);
    setPhase("running");
    try {
      const result = await begin((event: HarnessEvent) => {
        if (event.runId) runId.current = event.runId;
        if (event.kind === "run_stage") setStages((s) => [...s, { stage: event.payload.stage, state: event.payload.state, message: event.payload.message }]);
      });
      if (result.status === "ready") await showRun(result);
      else {
        setRun(result);
        setPhase("form");
        if (resumable(result)) setInterrupted(result);
        if (result.error) setError(toClientError({ code: result.error.code, message: result.error.message, hints: result.error.hints }));
        else toast(t("optimize.cancelled"));
      }
    } catch (e) {
      setError(toClientError(e));
      setPhase("form");
    }
  };

  const start = () =>
    follow(async (onEvent) => {
      await flush();
      return client.stream("optimize.start", { projectId, platforms: chosen, goal, intensity, constraints, draft: draft ?? undefined }, onEvent);
    });

  const resume = (r: Run) => {
    setInterrupted(null);
    runId.current = r.id;
    return follow((onEvent) => client.stream("optimize.resume", { runId: r.id }, onEvent));
  };

  const discard = async (r: Run) => {
    try {
      await call("optimize.cancel", { runId: r.id });
      setInterrupted(null);
      toast(t("optimize.discarded"));
    } catch (e) {
      setError(toClientError(e));
    }
  };

  const cancel = async () => {
    if (runId.current) await call("optimize.cancel", { runId: runId.current }).catch(() => undefined);
  };

  const apply = async (rejectAll = false) => {
    if (!run) return;
    setBusy(true);
    setError(null);
    try {
      const hunks: Record<string, string[]> = {};
      for (const [key, view] of Object.entries(proposals)) {
        const d = decisions[key] ?? {};
        const rejected = view.hunks.filter((h) => d[h.id] === "rejected");
        if (rejected.length > 0) hunks[view.id] = view.hunks.filter((h) => d[h.id] !== "rejected").map((h) => h.id);
      }
      const chosenPlatforms = PLATFORMS.filter((p) => selected[p]);
      const result = await call("optimize.apply", {
        runId: run.id,
        rejectAll,
        source: !rejectAll && (selected.source === true || title !== ""),
        platforms: rejectAll ? [] : chosenPlatforms,
        title: !rejectAll && title !== "" ? title : undefined,
        hunks,
      });
      onApplied(result);
      const conflicts = result.results.filter((r) => r.outcome === "conflict");
      if (conflicts.length > 0) setError(toClientError(conflicts[0].error));
      else toast(rejectAll ? t("optimize.rejected") : t("optimize.applied"));
      await showRun(result.run);
      if (conflicts.length === 0) onClose();
    } catch (e) {
      setError(toClientError(e));
    } finally {
      setBusy(false);
    }
  };

  if (phase === "review" && run) {
    return (
      <RunReview
        run={run}
        tab={tab}
        setTab={setTab}
        proposals={proposals}
        decisions={decisions}
        setDecisions={setDecisions}
        selected={selected}
        setSelected={setSelected}
        title={title}
        setTitle={setTitle}
        busy={busy}
        error={error}
        setError={setError}
        apply={apply}
        onClose={onClose}
      />
    );
  }

  if (phase === "running") {
    return (
      <Dialog title={t("optimize.running")} onClose={() => void cancel()} testId="optimize-progress">
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
          <button type="button" data-testid="optimize-cancel" onClick={() => void cancel()}>
            {t("optimize.cancel")}
          </button>
        </div>
      </Dialog>
    );
  }

  return (
    <Dialog title={draft ? t("optimize.draftTitle", { platform: t(`platform.${draft}` as MessageId) }) : t("optimize.title.dialog")} onClose={onClose} testId="optimize-dialog">
      {error && <ErrorBanner error={error} onDismiss={() => setError(null)} />}
      {interrupted && (
        <div className="warning" role="status" data-testid="optimize-interrupted">
          <p>{t(interrupted.status === "failed" ? "optimize.failedResumable" : "optimize.interrupted", { stage: stageLabel(t, interrupted.stage) })}</p>
          <div className="row end">
            <button type="button" data-testid="optimize-discard" onClick={() => void discard(interrupted)}>
              {t("optimize.discard")}
            </button>
            <button type="button" className="primary" data-testid="optimize-resume" onClick={() => void resume(interrupted)}>
              {t("optimize.resume")}
            </button>
          </div>
        </div>
      )}
      {waiting.length > 0 && (
        <div className="warning" role="status" data-testid="optimize-unreviewed">
          <p>{t("optimize.unreviewed")}</p>
          <ul className="small">
            {waiting.map((r) => (
              <li key={r.id} data-testid="optimize-unreviewed-run" data-run={r.id}>
                {t("optimize.unreviewedRun", {
                  when: formatTime(lang, r.createdAt),
                  platforms: r.input.platforms.map((p) => t(`platform.${p}` as MessageId)).join(lang === "zh" ? "、" : ", "),
                })}{" "}
                <button type="button" data-testid="optimize-reopen" onClick={() => void showRun(r).catch((e) => setError(toClientError(e)))}>
                  {t("optimize.reviewRun")}
                </button>
              </li>
            ))}
          </ul>
        </div>
      )}
      {noModel && (
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
      )}
      <p className="small muted">{t("optimize.intro")}</p>
      <fieldset disabled={!!draft}>
        <legend>{t("optimize.platforms")}</legend>
        {PLATFORMS.map((p) => (
          <label key={p} className="inline">
            <input
              type="checkbox"
              data-testid={`optimize-platform-${p}`}
              checked={chosen.includes(p)}
              onChange={(e) => setChosen((c) => (e.target.checked ? [...c, p] : c.filter((x) => x !== p)))}
            />{" "}
            {t(`platform.${p}` as MessageId)}
          </label>
        ))}
      </fieldset>
      {unsaved.length > 0 && (
        <div className="warning" role="status" data-testid="optimize-unsaved">
          <p>{t("optimize.unsaved", { platforms: unsaved.map((p) => t(`platform.${p}` as MessageId)).join(lang === "zh" ? "、" : ", ") })}</p>
          <div className="row end">
            <button type="button" data-testid="optimize-save-drafts" disabled={savingDrafts} onClick={() => void saveDrafts()}>
              {t("optimize.saveDrafts")}
            </button>
          </div>
        </div>
      )}
      <label>
        {t("optimize.goal")}{" "}
        <select value={goal} data-testid="optimize-goal" onChange={(e) => setGoal(e.target.value as Goal)}>
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
            <input type="radio" name="intensity" data-testid={`optimize-intensity-${i}`} checked={intensity === i} onChange={() => setIntensity(i)} /> {t(`optimize.intensity.${i}` as MessageId)}
            <span className="small muted"> — {t(`optimize.intensityHelp.${i}` as MessageId)}</span>
          </label>
        ))}
      </fieldset>
      <fieldset>
        <legend>{t("optimize.constraints")}</legend>
        {CONSTRAINTS.map((c) => (
          <label key={c} className="block">
            <input type="checkbox" data-testid={`optimize-constraint-${c}`} checked={constraints[c]} onChange={(e) => setConstraints((x) => ({ ...x, [c]: e.target.checked }))} />{" "}
            {t(`optimize.constraint.${c}` as MessageId)}
          </label>
        ))}
      </fieldset>
      <div className="row end">
        <button type="button" onClick={onClose}>
          {t("optimize.close")}
        </button>
        <button type="button" className="primary" data-testid="optimize-start" disabled={chosen.length === 0 || noModel} onClick={() => void start()}>
          {t("optimize.start")}
        </button>
      </div>
    </Dialog>
  );
}
