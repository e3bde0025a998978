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
import type { MessageId } from "../../shared/i18n";
import type { HunkDecision } from "../review";
import { InterruptedRun, NoModel, UnreviewedRuns, UnsavedDrafts } from "./FormNotices";
import { type ConstraintKey, keptHunks, MAX_UNREVIEWED, type OptimizeDialogProps, PLATFORMS, resumable, type StageLine, targetKey, unreviewed } from "./run";
import { PlatformChoice, RunOptions } from "./RunOptions";
import { RunProgress } from "./RunProgress";
import { RunReview } from "./RunReview";

export { unreviewed };
export type { OptimizeDialogProps };

export function OptimizeDialog({ projectId, platforms, draft, flush, onApplied, onClose, onSetUpModel, onDraftsSaved }: OptimizeDialogProps) {
  const { client, t, toast } = useApp();
  const { call } = useCalls();
  const [phase, setPhase] = useState<"form" | "running" | "review">("form");
  const [chosen, setChosen] = useState<Platform[]>(draft ? [draft] : platforms.length > 0 ? platforms : PLATFORMS);
  const [goal, setGoal] = useState<Goal>("recommendation");
  const [intensity, setIntensity] = useState<Intensity>("balanced");
  const [constraints, setConstraints] = useState<Record<ConstraintKey, boolean>>({ keepVoice: true, keepTitle: false, keepStructure: false, avoidClickbait: true });
  const [stages, setStages] = useState<StageLine[]>([]);
  // Kept in the dialog on purpose: a run's failure or an apply's conflict is read with the
  // run it belongs to, and a conflict reloads what the dialog shows.
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
      const hunks = keptHunks(proposals, decisions);
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

  if (phase === "running") return <RunProgress stages={stages} onCancel={() => void cancel()} />;

  return (
    <Dialog title={draft ? t("optimize.draftTitle", { platform: t(`platform.${draft}` as MessageId) }) : t("optimize.title.dialog")} onClose={onClose} testId="optimize-dialog">
      {error && <ErrorBanner error={error} onDismiss={() => setError(null)} />}
      {interrupted && <InterruptedRun run={interrupted} onDiscard={() => void discard(interrupted)} onResume={() => void resume(interrupted)} />}
      {waiting.length > 0 && <UnreviewedRuns runs={waiting} onReopen={(r) => void showRun(r).catch((e) => setError(toClientError(e)))} />}
      {noModel && <NoModel onSetUpModel={onSetUpModel} />}
      <p className="small muted">{t("optimize.intro")}</p>
      <PlatformChoice disabled={!!draft} chosen={chosen} onChosen={setChosen} />
      {unsaved.length > 0 && <UnsavedDrafts platforms={unsaved} saving={savingDrafts} onSave={() => void saveDrafts()} />}
      <RunOptions goal={goal} onGoal={setGoal} intensity={intensity} onIntensity={setIntensity} constraints={constraints} onConstraints={setConstraints} />
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
