// One-click optimize: the dialog (platforms, goal, intensity, constraints, each with a
// short explanation), the progress by stage with cancel (the run's own log, streamed),
// and the review: one tab per target (the source and each platform) with the diff
// (per-hunk accept/reject, in the same merge view as the AI panel's review), the
// summary, the risks, flags and the fit report before → after; "apply selected" takes
// the chosen targets, each in its own transaction (a moved target is a conflict for it
// alone). Nothing changes until then.
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { type ClientError, type HarnessEvent, toClientError } from "../../shared/api/client";
import type { FitReport, Goal, Intensity, OptimizeApplyResult, Platform, ProposalView, Run, RunTarget } from "../../shared/api/generated";
import { readFresh, useCalls } from "../../shared/api/query";
import { Dialog } from "../../shared/ui/Dialog";
import { ErrorBanner } from "../../shared/ui/ErrorBanner";
import { type T, useApp } from "../../shared/context";
import { describeFinding, describeFitPoint, describeLocation, formatTime, has, type Lang, type MessageId } from "../../shared/i18n";
import { type HunkAction, type HunkBarState, type HunkDecision, hunkBars, MergeDiff, useBarLabels } from "../review";

const PLATFORMS: Platform[] = ["wechat", "zhihu", "x", "douyin", "xiaohongshu"];
const GOALS: Goal[] = ["recommendation", "views", "ctr", "completion", "engagement", "conversion"];
const INTENSITIES: Intensity[] = ["conservative", "balanced", "aggressive"];
const CONSTRAINTS = ["keepVoice", "keepTitle", "keepStructure", "avoidClickbait"] as const;
type ConstraintKey = (typeof CONSTRAINTS)[number];

export interface OptimizeDialogProps {
  projectId: string;
  /** The project's platforms (the default targets). */
  platforms: Platform[];
  /** "Optimize this draft": only this platform. */
  draft?: Platform | null;
  /** Saves the editor's pending text first, so the run reads what is on screen. */
  flush: () => Promise<void>;
  /** After an apply wrote something: reload the project, drafts and history. */
  onApplied: (result: OptimizeApplyResult) => void;
  onClose: () => void;
  /** Opens Settings → Models (offered when no model is set up). */
  onSetUpModel?: () => void;
  /** After the dialog saved compiled drafts: reload the drafts. */
  onDraftsSaved?: () => void;
}

interface StageLine {
  stage: string;
  state: string;
  message: string;
}

/** "Adapting (X)" for `platform:x`. */
function stageLabel(t: T, stage: string): string {
  const [name, detail] = stage.split(":");
  const platform = detail && (PLATFORMS as string[]).includes(detail) ? t(`platform.${detail}` as MessageId) : detail;
  return t(`optimize.stage.${name}` as MessageId) + (platform ? ` (${platform})` : "");
}

/** A stage's line after its name: "done", or what it is doing. English shows the run's
 * own specific words; other languages the state's wording (the specifics, such as the
 * terms still flagged, are in the review). */
function stageState(t: T, lang: Lang, s: StageLine): string {
  if (s.state === "done") return t("optimize.done");
  // The stage's name says what it does ("Adapting (WeChat)"); its own start line only
  // repeats it, with the platform's id.
  if (s.state === "started" && s.stage !== "resume") return t("optimize.state.started");
  const id = `optimize.state.${s.state}`;
  return lang === "en" || !has(lang, id) ? s.message : t(id as MessageId);
}

/** Whether `optimize.resume` can take the run up again. */
function resumable(r: Run): boolean {
  return r.status === "interrupted" || (r.status === "failed" && r.resumable);
}

/** A finished run whose package still waits for the person ("Decide later", a reload):
 * ready or partly applied, with a proposal still open. */
export function unreviewed(r: Run): boolean {
  return (r.status === "ready" || r.status === "partly_applied") && r.targets.some((x) => x.outcome === "pending" && (x.proposalId != null || x.titleProposalId != null));
}

/** How many unreviewed runs the dialog lists (newest first). */
const MAX_UNREVIEWED = 5;

function targetKey(t: RunTarget): string {
  return t.target.type === "draft" ? t.target.platform : "source";
}

function FitTable({ before, after }: { before?: FitReport; after?: FitReport }) {
  const { t, lang } = useApp();
  if (!before && !after) return null;
  const points = (after ?? before)!.points;
  return (
    <div className="fit" data-testid="fit-report">
      <p>
        <strong>{t("optimize.fit")}</strong>{" "}
        <span data-testid="fit-scores">
          {before?.score ?? "–"} → {after?.score ?? "–"}
        </span>
      </p>
      <table className="small">
        <tbody>
          {points.map((p) => {
            const b = before?.points.find((x) => x.check === p.check);
            const text = describeFitPoint(lang, p);
            return (
              <tr key={p.check} data-check={p.check}>
                <td>{b ? (b.passed ? "✓" : "✗") : "–"} → {p.passed ? "✓" : "✗"}</td>
                <td>{text.measured}</td>
                <td className="muted" title={text.ruleDetail ?? undefined}>
                  {text.rule}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      <p className="small muted">{t("optimize.fitDisclaimer")}</p>
    </div>
  );
}

/** Why a target has nothing to apply, or why applying it failed; null when neither. */
function outcomeText(t: T, lang: Lang, target: RunTarget): string | null {
  if (target.outcome === "unavailable") return target.flags.includes("no_saved_draft") ? null : t("optimize.outcome.same");
  if (target.outcome === "conflict") return t("optimize.outcome.conflict");
  if (!target.outcomeMessage) return null;
  return lang === "en" ? target.outcomeMessage : t("optimize.outcome.failed");
}

function TargetReview({
  target,
  proposal,
  decisions,
  onDecide,
}: {
  target: RunTarget;
  proposal: ProposalView | null;
  decisions: Record<string, HunkDecision>;
  onDecide: (hunk: string, action: HunkAction) => void;
}) {
  const { t, lang } = useApp();
  const outcome = outcomeText(t, lang, target);
  // Optimize's hunks start accepted: the person rejects what they do not want.
  const bars = useMemo<HunkBarState[]>(() => hunkBars(proposal?.hunks ?? [], decisions, { undecided: "accepted" }), [proposal, decisions]);
  const labels = useBarLabels();
  return (
    <div className="optimize-target" data-testid={`optimize-target-${targetKey(target)}`} data-outcome={target.outcome}>
      <p data-testid="optimize-summary">{target.summary}</p>
      {target.flags.length > 0 && (
        <ul className="small" data-testid="optimize-flags">
          {target.flags.map((f) => (
            <li key={f} className="warn">
              {/* The flags' details are the findings listed under them, worded there. */}
              {f.startsWith("over_limit")
                ? t("optimize.flag.overLimit")
                : f.startsWith("risky_terms")
                  ? t("optimize.flag.riskyTerms")
                  : t(`optimize.flag.${f}` as MessageId)}
            </li>
          ))}
        </ul>
      )}
      {outcome && (
        <p className="small muted" data-testid="optimize-outcome">
          {outcome}
        </p>
      )}
      {target.risks.length > 0 && (
        <ul className="small" data-testid="optimize-risks">
          {target.risks.map((r, i) => (
            <li key={i} className={r.severity === "block" ? "error" : "warn"}>
              {r.matched ? <mark>{r.matched}</mark> : null} {describeFinding(lang, r).message}
              {r.location ? <span className="muted"> ({describeLocation(lang, r.location)})</span> : null}
            </li>
          ))}
        </ul>
      )}
      {proposal && proposal.payload.type === "text" && (
        <MergeDiff a={proposal.payload.baseText} b={proposal.payload.proposedText} hunks={proposal.hunks} mode="inline" bars={bars} labels={labels} onAct={onDecide} ariaLabel={t("optimize.diff")} />
      )}
      <FitTable before={target.fitBefore} after={target.fitAfter} />
    </div>
  );
}

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
    const current = run.targets.find((x) => targetKey(x) === tab) ?? run.targets[0];
    return (
      <Dialog title={t("optimize.reviewTitle")} onClose={onClose} testId="optimize-review" wide>
        {error && <ErrorBanner error={error} onDismiss={() => setError(null)} />}
        <div role="tablist" className="tabs">
          {run.targets.map((target) => {
            const key = targetKey(target);
            return (
              <button key={key} type="button" role="tab" aria-selected={key === tab} data-testid={`optimize-tab-${key}`} onClick={() => setTab(key)}>
                {key === "source" ? t("optimize.source") : t(`platform.${key}` as MessageId)}
              </button>
            );
          })}
        </div>
        {current && (
          <>
            <label className="small">
              <input
                type="checkbox"
                data-testid={`optimize-select-${targetKey(current)}`}
                disabled={current.outcome !== "pending" || !current.proposalId}
                checked={selected[targetKey(current)] === true}
                onChange={(e) => setSelected((s) => ({ ...s, [targetKey(current)]: e.target.checked }))}
              />{" "}
              {t("optimize.include")}
            </label>
            {current.target.type === "source" && run.titles.length > 0 && (
              <label className="small">
                {t("optimize.title")}{" "}
                <select value={title} data-testid="optimize-title" onChange={(e) => setTitle(e.target.value)}>
                  <option value="">{t("optimize.keepTitle")}</option>
                  {run.titles.map((x) => (
                    <option key={x} value={x}>
                      {x}
                    </option>
                  ))}
                </select>
              </label>
            )}
            <TargetReview
              key={targetKey(current)}
              target={current}
              proposal={proposals[targetKey(current)] ?? null}
              decisions={decisions[targetKey(current)] ?? {}}
              onDecide={(hunk, action) =>
                setDecisions((d) => ({ ...d, [targetKey(current)]: { ...(d[targetKey(current)] ?? {}), [hunk]: action === "reject" ? "rejected" : "accepted" } }))
              }
            />
          </>
        )}
        <div className="row end">
          <button type="button" data-testid="optimize-reject-all" disabled={busy} onClick={() => void apply(true)}>
            {t("optimize.rejectAll")}
          </button>
          <button type="button" data-testid="optimize-later" onClick={onClose}>
            {t("optimize.later")}
          </button>
          <button type="button" className="primary" data-testid="optimize-apply" disabled={busy || !Object.values(selected).some(Boolean)} onClick={() => void apply()}>
            {t("optimize.applySelected")}
          </button>
        </div>
      </Dialog>
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
