//! The optimization run: one button, one reviewable package per platform.
//!
//! A run has its own harness log (owner [`Owner::Run`], in the sessions' event tree),
//! so it can be watched live, replayed and audited like a session, and a run the
//! app's closing interrupted is `interrupted` and can be [`resume`]d from that log
//! (the model's recorded replies are reused; see the harness's `script`). The run is a
//! fixed plan of steps (`growth/steps/`, one file each) that the harness's script runs,
//! with the harness's appends, model calls, metering and replay. The plan:
//!
//! 1. an immutable context snapshot (project, brand, template, saved drafts, comment
//!    and version summaries, the platforms' rules), with the composed optimize prompt;
//! 2. a strategy: JSON validated against [`strategy_schema`], at most [`MAX_REPAIRS`]
//!    repair round trips, then a clear failure;
//! 3. title candidates and an optimized source (skipped for one draft); a candidate
//!    over a target platform's title limit is flagged for that platform (never cut); a
//!    candidate the engine would refuse as a proposal (a line break, over 200
//!    characters; rules the schema the model sees states too) is dropped and named
//!    (`dropped_titles`), never the run's failure;
//! 4. per platform: the deterministic compile of the optimized source, the adaptation
//!    to the platform's audience profile (a model call; none for a platform without a
//!    saved draft, which has nothing to apply it to: flagged `no_saved_draft`), the
//!    draft profile's validator;
//!    a candidate over a limit gets one more round, then is flagged (never cut); a
//!    draft title over its limit is flagged at once (the candidate cannot change it;
//!    the source step's title candidates can);
//! 5. quality checks (risks with spans) on the source, every title candidate and every
//!    platform candidate against what the person has now: a candidate that introduces
//!    a banned word, an absolute term or a growth promise gets one more round asking to
//!    remove it (with the limits' round when both are due), then is flagged
//!    `risky_terms`; the growth-promise check on every summary (a promising summary is
//!    rejected and regenerated once);
//! 6. proposals, one per target, in one transaction; the fit report before and after.
//!
//! Nothing official changes until [`apply`]: every accept is the proposals module's
//! transaction, so a target that moved since the run is a CONFLICT for that proposal
//! alone. The run records which proposals were adopted.

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use super::apply::apply;
pub use super::apply::{target_name, AppliedTarget, ApplySelection};
pub use super::steps::{platform_schema, source_schema, strategy_schema, MAX_REPAIRS, MAX_TITLE_CANDIDATES, ONE_LINE_PATTERN};

use super::fit::{self, FitReport};
use super::steps::{Pipeline, PLAN};
use crate::error::{ApiError, ErrorCode, Hint};
use crate::harness::script::{Recorded, Script, Stop, RESUME_STAGE};
use crate::harness::{Event, EventBody, Harness, Live, Meta, Purpose, TurnClaim};
use crate::model::{Platform, Timestamp};
use crate::pipeline::Finding;
use crate::prompts::{Goal, Intensity};
use crate::proposals::Target;
use crate::store::{Batch, Durability, Kind, Record};

/// What the person wants kept or avoided.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RunConstraints {
    #[serde(default)]
    pub keep_voice: bool,
    #[serde(default)]
    pub keep_title: bool,
    #[serde(default)]
    pub keep_structure: bool,
    #[serde(default)]
    pub avoid_clickbait: bool,
}

impl RunConstraints {
    /// The constraints as instructions for the model.
    pub fn texts(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.keep_voice {
            out.push("keep the writer's voice and wording style".to_owned());
        }
        if self.keep_title {
            out.push("keep the title exactly as it is (no title candidates)".to_owned());
        }
        if self.keep_structure {
            out.push("keep the structure: the sections and their order".to_owned());
        }
        if self.avoid_clickbait {
            out.push("avoid clickbait: no exaggeration, no withheld-answer titles".to_owned());
        }
        out
    }
}

/// A run's input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunInput {
    pub platforms: Vec<Platform>,
    pub goal: Goal,
    pub intensity: Intensity,
    pub constraints: RunConstraints,
    /// "Optimize this draft": only this platform's draft, the source unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draft: Option<Platform>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Running,
    /// Stopped mid-run when the app closed; [`resume`] carries on where it stopped.
    Interrupted,
    Ready,
    Failed,
    Cancelled,
    Applied,
    PartlyApplied,
    Rejected,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Ready => "ready",
            RunStatus::Failed => "failed",
            RunStatus::Cancelled => "cancelled",
            RunStatus::Applied => "applied",
            RunStatus::PartlyApplied => "partly_applied",
            RunStatus::Rejected => "rejected",
        }
    }
}

/// What became of one target of the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetOutcome {
    /// Waiting for the person.
    Pending,
    /// Accepted (all or some hunks).
    Applied,
    /// The target moved since the run; nothing was written for it.
    Conflict,
    Rejected,
    /// Nothing to apply: no change, or no saved draft to change.
    Unavailable,
}

/// One target of a run: the source or a platform draft.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunTarget {
    pub target: Target,
    /// The proposal to review (a source patch, or a draft patch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposal_id: Option<String>,
    /// The title candidates (source only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title_proposal_id: Option<String>,
    /// What changed and why, in a sentence or two; never a promise.
    pub summary: String,
    /// Findings of the candidate: risky terms (with spans into the source), limits.
    pub risks: Vec<Finding>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fit_before: Option<FitReport>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fit_after: Option<FitReport>,
    /// Why the candidate needs the person's eye: `over_limit: …`, `risky_terms: …`
    /// (each banned, absolute or promising term the candidate still introduces after
    /// another round, with its UTF-16 span into the candidate text or its title
    /// candidate), `dropped_titles` (title candidates the engine would refuse, each
    /// named by a `title_candidate` finding in `risks`), `no_saved_draft`,
    /// `summary_withheld`.
    pub flags: Vec<String>,
    pub outcome: TargetOutcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome_message: Option<String>,
}

/// Why a run failed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunError {
    pub code: ErrorCode,
    pub message: String,
    pub hints: Vec<Hint>,
}

/// Where a run's time went: all of it, and the model calls' share (the rest is the
/// engine's overhead: snapshot, compiles, checks, fit reports, proposals, the log).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunTimings {
    pub total_micros: u64,
    pub model_micros: u64,
    pub model_calls: u32,
}

/// An optimization run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Run {
    pub id: String,
    pub project_id: String,
    pub profile_id: String,
    /// The model the server reported.
    pub model: String,
    pub input: RunInput,
    pub status: RunStatus,
    /// The stage running or reached last.
    pub stage: String,
    /// The project's revision and latest version the run read.
    pub base_revision: u64,
    pub base_head: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot_id: Option<String>,
    /// The id of every prompt layer the run's model calls used.
    pub prompt_layers: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<Value>,
    pub titles: Vec<String>,
    pub targets: Vec<RunTarget>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<RunError>,
    /// Whether `optimize.resume` can take it up again, reusing the model's replies
    /// already recorded: a run the app's closing interrupted, or one that failed
    /// because a model call failed (not because the model kept answering wrongly,
    /// which a replay would only repeat).
    #[serde(default)]
    pub resumable: bool,
    /// What the fit report measures, and what it does not.
    pub disclaimer: String,
    #[serde(default)]
    pub timings: RunTimings,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

impl Record for Run {
    const KIND: Kind = Kind::OptimizeRuns;
    fn key(&self) -> Vec<u8> {
        self.id.as_bytes().to_vec()
    }
}

/// A run by id. Errors: NOT_FOUND.
pub fn load(h: Harness<'_>, run_id: &str) -> Result<Run, ApiError> {
    let run = h.store().get::<Run>(run_id.as_bytes())?.ok_or_else(|| ApiError::not_found("run", run_id).action("list_runs", &[]))?;
    Ok(settle_orphan(h, run))
}

/// The runs of a project, newest first.
pub fn list(h: Harness<'_>, project_id: &str) -> Result<Vec<Run>, ApiError> {
    crate::project::load(h.store(), project_id)?;
    let mut runs: Vec<Run> = h.store().scan::<Run>(b"")?.into_iter().filter(|r| r.project_id == project_id).map(|r| settle_orphan(h, r)).collect();
    runs.sort_by(|a, b| b.id.cmp(&a.id));
    Ok(runs)
}

/// A run left `running` by a process that stopped is `interrupted` when read: nothing
/// was proposed or applied (proposals are only made at its end, in one transaction),
/// and [`resume`] carries it on from its log.
fn settle_orphan(h: Harness<'_>, mut run: Run) -> Run {
    if run.status != RunStatus::Running || h.live_if_loaded(&run.id).is_some_and(|l| l.is_running()) {
        return run;
    }
    // The record holds the stage of its last write; the log holds the stage it reached.
    let reached = h.session_events(&run.id).ok().and_then(|log| {
        log.iter().rev().find_map(|e| match &e.body {
            EventBody::RunStage { stage, state, .. } if state == "started" && stage != RESUME_STAGE => Some(stage.clone()),
            _ => None,
        })
    });
    if let Some(stage) = reached {
        run.stage = stage;
    }
    run.status = RunStatus::Interrupted;
    run.resumable = true;
    run.error = Some(RunError {
        code: ErrorCode::Cancelled,
        message: format!("The run stopped at stage {} when the app closed; nothing was proposed or applied yet.", run.stage),
        hints: vec![
            Hint::new("resume", "Resume it: the model's replies already received are reused, so only the remaining steps ask the model."),
            Hint::new("start_again", "Or start a new optimization."),
        ],
    });
    let _guard = h.write_lock();
    let mut batch = Batch::new();
    if batch.put(&run).is_ok() {
        let _ = h.store().apply(batch, Durability::Durable);
    }
    run
}

/// Asks a running run to stop, or discards an interrupted one. `false` when it is
/// neither running in this process nor interrupted.
pub fn cancel(h: Harness<'_>, run_id: &str) -> Result<bool, ApiError> {
    let mut run = load(h, run_id)?;
    if run.status == RunStatus::Interrupted || (run.status == RunStatus::Failed && run.resumable) {
        // Discarding an interrupted (or resumable failed) run: it will not be resumed.
        let live = h.live_run(&run.id, &run.project_id)?;
        let _claim = TurnClaim::take(&live)?;
        run.status = RunStatus::Cancelled;
        run.resumable = false;
        run.error = None;
        run.updated_at = h.now();
        let mut extra = Batch::new();
        extra.put(&run)?;
        let body = EventBody::RunEnded { status: "cancelled".to_owned(), message: "Discarded after an interruption; nothing was proposed or applied.".to_owned() };
        h.append_event(&live, Meta::default(), body, extra, Durability::Durable)?;
        return Ok(true);
    }
    if run.status != RunStatus::Running {
        return Ok(false);
    }
    let Some(live) = h.live_if_loaded(run_id) else { return Ok(false) };
    live.interrupt.store(true, std::sync::atomic::Ordering::SeqCst);
    live.cancel.lock().unwrap_or_else(|p| p.into_inner()).cancel();
    Ok(true)
}

/// Starts and runs an optimization of `project_id`, streaming the run's events to
/// `emit`. Returns the finished run (ready, failed or cancelled); the errors are the
/// input's (VALIDATION, NOT_FOUND) and engine faults.
pub fn start(h: Harness<'_>, project_id: &str, profile: Option<&str>, input: RunInput, emit: &mut dyn FnMut(&Event)) -> Result<Run, ApiError> {
    let store = h.store();
    let project = crate::project::load(store, project_id)?;
    if project.archived {
        return Err(ApiError::validation("projectId", "The project is archived; restore it to optimize it."));
    }
    let profile = match profile {
        Some(name) => h.llm_profile(name)?,
        None => store
            .scan::<crate::llm::profile::LlmProfile>(b"")?
            .into_iter()
            .find(|p| p.is_default)
            .ok_or_else(|| ApiError::validation("profile", "There is no LLM profile to talk to.").action("add_profile", &[]))?,
    };
    let mut input = input;
    if let Some(draft) = input.draft {
        crate::project::drafts::require(store, &project.id, draft).map_err(|e| e.hint("save_draft", "Save the platform's draft in the Drafts tab first."))?;
        input.platforms = vec![draft];
    }
    if input.platforms.is_empty() {
        input.platforms = if project.platforms.is_empty() { Platform::ALL.to_vec() } else { project.platforms.clone() };
    }
    let mut seen = Vec::new();
    for (i, p) in input.platforms.iter().enumerate() {
        if seen.contains(p) {
            return Err(ApiError::validation(&format!("platforms[{i}]"), format!("{} is named twice.", p.as_str())));
        }
        seen.push(*p);
    }
    let now = h.now();
    let run = Run {
        id: h.new_id("run"),
        project_id: project.id.clone(),
        profile_id: profile.id.clone(),
        model: String::new(),
        input,
        status: RunStatus::Running,
        stage: "snapshot".to_owned(),
        base_revision: project.revision,
        base_head: project.head,
        snapshot_id: None,
        prompt_layers: Vec::new(),
        strategy: None,
        titles: Vec::new(),
        targets: Vec::new(),
        error: None,
        resumable: false,
        disclaimer: fit::DISCLAIMER.to_owned(),
        timings: RunTimings::default(),
        created_at: now,
        updated_at: now,
    };
    let live = h.live_run(&run.id, &project.id)?;
    let _claim = TurnClaim::take(&live)?;
    let mut extra = Batch::new();
    extra.put(&run)?;
    let first = h.append_event(&live, Meta::default(), EventBody::RunStarted { project_id: project.id.clone(), profile: profile.id.clone() }, extra, Durability::Durable)?;
    emit(&first);
    execute(h, &live, run, &profile, None, emit)
}

/// Carries on a run that the app's closing interrupted, from its log: the pipeline
/// runs again over the same snapshot, takes the model's recorded replies instead of
/// asking again, and goes on live from the first step it had not finished. A run
/// whose project, drafts or rules changed since it stopped cannot be resumed and fails
/// with CONFLICT (nothing proposed). Returns the finished run, as [`start`] does.
///
/// Errors: NOT_FOUND; CONFLICT when the run is not interrupted (running here, or
/// finished).
pub fn resume(h: Harness<'_>, run_id: &str, emit: &mut dyn FnMut(&Event)) -> Result<Run, ApiError> {
    let mut run = load(h, run_id)?;
    let failed = run.status == RunStatus::Failed && run.resumable;
    if run.status != RunStatus::Interrupted && !failed {
        return Err(ApiError::new(
            ErrorCode::Conflict,
            format!("Run {} is {}; only an interrupted run, or one the model server failed, can be resumed.", run.id, run.status.as_str()),
        )
        .hint("start_again", "Start a new optimization instead."));
    }
    let profile = h.llm_profile(&run.profile_id).map_err(|e| e.hint("start_again", "The run's model profile is gone; start a new optimization with another profile."))?;
    let live = h.live_run(&run.id, &run.project_id)?;
    let _claim = TurnClaim::take(&live)?;
    let log = h.session_events(&run.id)?;
    let recorded = Recorded::new(&log);
    let from = run.stage.clone();
    run.status = RunStatus::Running;
    run.resumable = false;
    run.error = None;
    run.updated_at = h.now();
    let mut extra = Batch::new();
    extra.put(&run)?;
    let why = if failed { "a failure" } else { "the app closed" };
    let message = format!("Resuming after {why} at stage {from}; {} recorded steps are replayed", recorded.len());
    let meta = Meta { context_snapshot_id: run.snapshot_id.clone(), ..Meta::default() };
    let marker = h.append_event(&live, meta, EventBody::RunStage { stage: RESUME_STAGE.to_owned(), state: "started".to_owned(), message }, extra, Durability::Durable)?;
    emit(&marker);
    // Stopped after its proposals were recorded (one transaction with the run's
    // record): only its end is missing.
    let proposed = recorded.reached("proposals", "done");
    if proposed {
        return finish(h, &live, run, Ok(()), emit);
    }
    execute(h, &live, run, &profile, Some(recorded), emit)
}

/// Runs the plan over `run` (fresh, or replaying an interrupted run's record) and
/// records its end.
fn execute(h: Harness<'_>, live: &Live, run: Run, profile: &crate::llm::profile::LlmProfile, recorded: Option<Recorded>, emit: &mut dyn FnMut(&Event)) -> Result<Run, ApiError> {
    let started = std::time::Instant::now();
    let script = Script::new(h, live, Purpose::Optimize, &run.profile_id, recorded, emit);
    let mut pipeline = Pipeline::new(script, run, profile);
    let mut outcome = Ok(());
    for step in PLAN {
        outcome = pipeline.s.check_interrupt().and_then(|()| step(&mut pipeline));
        if outcome.is_err() {
            break;
        }
    }
    let mut run = pipeline.run;
    if run.model.is_empty() {
        // Every reply came from the record: the profile's model answered them.
        run.model = profile.model.clone();
    }
    run.timings.total_micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
    finish(h, live, run, outcome, pipeline.s.emit)
}

/// Records a run's end: ready, cancelled or failed (with the error), in one durable
/// write with its `run_ended` event.
fn finish(h: Harness<'_>, live: &Live, mut run: Run, outcome: Result<(), Stop>, emit: &mut dyn FnMut(&Event)) -> Result<Run, ApiError> {
    let (status, message) = match outcome {
        Ok(()) => (RunStatus::Ready, format!("{} targets ready for review.", run.targets.len())),
        Err(Stop::Cancelled) => (RunStatus::Cancelled, "Cancelled by the person; nothing was proposed or applied.".to_owned()),
        Err(Stop::Failed(error)) if matches!(error.code, ErrorCode::Internal | ErrorCode::Io | ErrorCode::StoreCorrupt) => return Err(error),
        Err(Stop::Failed(error)) => {
            let message = error.message.clone();
            let mut hints = error.hints;
            if run.resumable {
                hints.push(Hint::new("resume_failed", "Once that is fixed (or the model server answers again), resume the run: the steps already done are reused."));
            }
            run.error = Some(RunError { code: error.code, message: error.message, hints });
            (RunStatus::Failed, message)
        }
    };
    if status != RunStatus::Failed {
        run.resumable = false;
    }
    run.status = status;
    run.updated_at = h.now();
    let mut extra = Batch::new();
    extra.put(&run)?;
    let meta = Meta { context_snapshot_id: run.snapshot_id.clone(), ..Meta::default() };
    let event = h.append_event(live, meta, EventBody::RunEnded { status: status.as_str().to_owned(), message }, extra, Durability::Durable)?;
    emit(&event);
    Ok(run)
}
