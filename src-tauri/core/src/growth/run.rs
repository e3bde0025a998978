//! The optimization run: one button, one reviewable package per platform.
//!
//! A run has its own harness log (owner [`Owner::Run`], in the sessions' event tree),
//! so it can be watched live, replayed and audited like a session, and a run the
//! app's closing interrupted is `interrupted` and can be [`resume`]d from that log
//! (the model's recorded replies are reused; see [`Replay`]). The pipeline:
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

use std::sync::mpsc;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use ts_rs::TS;

use super::fit::{self, FitReport};
use crate::error::{ApiError, ErrorCode, Hint};
use crate::harness::{messages_hash, Event, EventBody, Harness, Live, Meta, TurnClaim};
use crate::llm::structured::{extract_json, Validator};
use crate::llm::{ChatEvent, ChatRequest, Message, ModelCall};
use crate::model::{DraftContent, Platform, PlatformDraft, Project, Timestamp};
use crate::pipeline::Finding;
use crate::profiles::Severity;
use crate::prompts::{Composed, Entry, Goal, Intensity, PromptSet};
use crate::proposals::apply::{Accept, Actor, Reject};
use crate::proposals::{self, Candidate, NewProposal, Origin, Payload, ProposalKind, Target};
use crate::store::{Batch, Durability, Kind, Record};

/// Repair round trips after a malformed structured reply.
pub const MAX_REPAIRS: u32 = 2;

/// What the person wants kept or avoided.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RunInput {
    pub platforms: Vec<Platform>,
    pub goal: Goal,
    pub intensity: Intensity,
    pub constraints: RunConstraints,
    /// "Optimize this draft": only this platform's draft, the source unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub draft: Option<Platform>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RunTarget {
    pub target: Target,
    /// The proposal to review (a source patch, or a draft patch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub proposal_id: Option<String>,
    /// The title candidates (source only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub title_proposal_id: Option<String>,
    /// What changed and why, in a sentence or two; never a promise.
    pub summary: String,
    /// Findings of the candidate: risky terms (with spans into the source), limits.
    pub risks: Vec<Finding>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub fit_before: Option<FitReport>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
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
    #[ts(optional)]
    pub outcome_message: Option<String>,
}

/// Why a run failed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RunError {
    pub code: ErrorCode,
    pub message: String,
    pub hints: Vec<Hint>,
}

/// Where a run's time went: all of it, and the model calls' share (the rest is the
/// engine's overhead: snapshot, compiles, checks, fit reports, proposals, the log).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RunTimings {
    pub total_micros: u64,
    pub model_micros: u64,
    pub model_calls: u32,
}

/// An optimization run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
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
    #[ts(optional)]
    pub snapshot_id: Option<String>,
    /// The id of every prompt layer the run's model calls used.
    pub prompt_layers: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "unknown")]
    pub strategy: Option<Value>,
    pub titles: Vec<String>,
    pub targets: Vec<RunTarget>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
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
pub(crate) fn load(h: Harness<'_>, run_id: &str) -> Result<Run, ApiError> {
    let run = h.store().get::<Run>(run_id.as_bytes())?.ok_or_else(|| ApiError::not_found("run", run_id).action("list_runs", &[]))?;
    Ok(settle_orphan(h, run))
}

/// The runs of a project, newest first.
pub(crate) fn list(h: Harness<'_>, project_id: &str) -> Result<Vec<Run>, ApiError> {
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
pub(crate) fn cancel(h: Harness<'_>, run_id: &str) -> Result<bool, ApiError> {
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

/// Why a pipeline stopped early.
enum Stop {
    Cancelled,
    Failed(ApiError),
}

impl<E: Into<ApiError>> From<E> for Stop {
    fn from(error: E) -> Self {
        Stop::Failed(error.into())
    }
}

/// The JSON schema of the strategy.
pub fn strategy_schema() -> Value {
    json!({
        "type": "object",
        "required": ["summary", "changes", "platforms"],
        "properties": {
            "summary": {"type": "string", "minLength": 1, "maxLength": 2000},
            "changes": {"type": "array", "minItems": 1, "maxItems": 12, "items": {"type": "string", "minLength": 1}},
            "platforms": {"type": "array", "items": {
                "type": "object",
                "required": ["platform", "plan"],
                "properties": {"platform": {"type": "string"}, "plan": {"type": "string"}}
            }}
        }
    })
}

/// The JSON schema of a later strategy batch: the plans of its platforms only.
fn strategy_platforms_schema() -> Value {
    let mut schema = strategy_schema();
    schema["required"] = json!(["platforms"]);
    schema["properties"] = json!({"platforms": schema["properties"]["platforms"].clone()});
    schema
}

/// The strategy as a step that comes after it is told it: the summary, the changes
/// and the plans (only `platform`'s, when given). A step sends only its own
/// conversation, so this is how the strategy reaches it.
fn strategy_digest(strategy: &Value, platform: Option<Platform>) -> String {
    let changes: Vec<&str> = strategy["changes"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    let plans: Vec<String> = strategy["platforms"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|plan| platform.is_none_or(|p| plan["platform"].as_str().is_some_and(|name| name.eq_ignore_ascii_case(p.as_str()))))
        .map(|plan| format!("{}: {}", plan["platform"].as_str().unwrap_or_default(), plan["plan"].as_str().unwrap_or_default()))
        .collect();
    let mut out = strategy["summary"].as_str().unwrap_or_default().to_owned();
    if !changes.is_empty() {
        out.push_str(&format!(" Changes: {}.", changes.join("; ")));
    }
    if !plans.is_empty() {
        out.push_str(&format!(" Plans: {}.", plans.join("; ")));
    }
    out
}

/// Why a platform without a saved draft has nothing to apply.
const NO_SAVED_DRAFT: &str = "There is no saved draft for this platform to change, so it was not adapted; save the compiled draft in the Drafts tab, then run again.";

/// Most title candidates a run offers.
pub const MAX_TITLE_CANDIDATES: usize = 5;

/// A title candidate is one line: no line break (what the proposals module enforces
/// for every candidate). Anchored and plain, so a llama.cpp server can turn it into
/// its grammar.
pub const ONE_LINE_PATTERN: &str = "^[^\\n\\r]*$";

/// The JSON schema of the source step, as the model sees it: every rule the engine
/// enforces on what it proposes from the reply is here (a title candidate is one line
/// of at most [`proposals::MAX_TITLE_CANDIDATE_CHARS`] characters; a text at most
/// [`proposals::MAX_TEXT_CHARS`]; a summary at most [`proposals::MAX_SUMMARY_CHARS`]).
pub fn source_schema() -> Value {
    json!({
        "type": "object",
        "required": ["source", "titles", "summary"],
        "properties": {
            "source": {"type": "string", "minLength": 1, "maxLength": proposals::MAX_TEXT_CHARS},
            "titles": {"type": "array", "maxItems": MAX_TITLE_CANDIDATES, "items": {"type": "string", "minLength": 1, "maxLength": proposals::MAX_TITLE_CANDIDATE_CHARS, "pattern": ONE_LINE_PATTERN}},
            "summary": {"type": "string", "minLength": 1, "maxLength": proposals::MAX_SUMMARY_CHARS}
        }
    })
}

/// What the engine requires of a source reply before reading it: [`source_schema`]
/// without the rules on single title candidates. A candidate that breaks one is
/// dropped and named (`dropped_titles`), never a repair round for the whole reply nor
/// the run's failure.
fn source_reply_schema() -> Value {
    let mut schema = source_schema();
    schema["properties"]["titles"] = json!({"type": "array", "items": {"type": "string"}});
    schema
}

/// The JSON schema of a platform step (the same bounds as the source's).
pub fn platform_schema() -> Value {
    json!({
        "type": "object",
        "required": ["text", "summary"],
        "properties": {
            "text": {"type": "string", "minLength": 1, "maxLength": proposals::MAX_TEXT_CHARS},
            "summary": {"type": "string", "minLength": 1, "maxLength": proposals::MAX_SUMMARY_CHARS}
        }
    })
}

/// Why the engine would refuse `title` as a title candidate (the proposals module's
/// rules: one line, not empty, at most [`proposals::MAX_TITLE_CANDIDATE_CHARS`] characters):
/// the reason in English, and the id of its wording when it has one.
fn title_problem(title: &str) -> Option<(String, Option<&'static str>)> {
    let error = proposals::check_candidates(&[Candidate { text: title.to_owned(), rationale: String::new() }], proposals::MAX_TITLE_CANDIDATE_CHARS).err()?;
    Some(if title.contains(['\n', '\r']) {
        ("a title is one line, and this one has a line break.".to_owned(), Some("title_candidate.dropped_line"))
    } else if title.chars().count() > proposals::MAX_TITLE_CANDIDATE_CHARS {
        (format!("a title has at most {} characters, and this one has {}.", proposals::MAX_TITLE_CANDIDATE_CHARS, title.chars().count()), Some("title_candidate.dropped_length"))
    } else {
        (error.message, None)
    })
}

/// A title candidate as a place to name: its line breaks shown as ↵.
fn shown_title(title: &str) -> String {
    title.replace("\r\n", "↵").replace(['\n', '\r'], "↵")
}

fn summary_schema() -> Value {
    json!({"type": "object", "required": ["summary"], "properties": {"summary": {"type": "string", "minLength": 1, "maxLength": 2000}}})
}

/// The growth promises in `text` (the growth-promise list's terms).
fn promises(h: Harness<'_>, text: &str) -> Result<Vec<String>, ApiError> {
    let set = crate::project::drafts::profiles(h.kernel)?;
    let input = crate::quality::CheckInput { title: "", source: text, brand: None, platforms: &[], ad_law: None, growth_promise: set.risk_list("growth-promise@v1") };
    Ok(crate::quality::check(&input).into_iter().filter(|f| f.check == "growth_promise").filter_map(|f| f.matched).collect())
}

/// The log of an interrupted run, replayed by [`resume`]: the pipeline runs again from
/// the start over the same snapshot, and while the recorded events last, each event it
/// would append must equal the next recorded one (it is not written again) and each
/// model call takes the recorded reply instead of asking the model. The first step past
/// the record runs live. Every step between model calls is deterministic, so the
/// replayed state is the state the run had when it stopped.
struct Replay {
    /// The events after `run_started`, without resume markers and without model calls
    /// that never got their reply.
    events: Vec<Event>,
    next: usize,
    /// Model replies taken from the record.
    reused: u32,
}

impl Replay {
    fn new(log: &[Event]) -> Replay {
        let kept: Vec<&Event> = log
            .iter()
            .filter(|e| !matches!(&e.body, EventBody::RunStarted { .. }))
            .filter(|e| !matches!(&e.body, EventBody::RunStage { stage, .. } if stage == RESUME_STAGE))
            // A failed run's end: resuming goes on from before it.
            .filter(|e| !matches!(&e.body, EventBody::RunEnded { .. }))
            .collect();
        let mut events = Vec::new();
        for (i, event) in kept.iter().enumerate() {
            let answered = matches!(kept.get(i + 1).map(|e| &e.body), Some(EventBody::AssistantMessage { interrupted: false, .. }));
            if matches!(event.body, EventBody::ModelCallStarted { .. }) && !answered {
                continue;
            }
            events.push((*event).clone());
        }
        Replay { events, next: 0, reused: 0 }
    }

    fn diverged(recorded: Option<&Event>, body: &EventBody) -> ApiError {
        ApiError::new(
            ErrorCode::Conflict,
            "The run cannot be resumed: the project, its drafts or the platforms' rules changed since it stopped, so its recorded replies no longer fit. Nothing was proposed or applied.",
        )
        .hint("start_again", "Start a new optimization.")
        .details(json!({"recorded": recorded.map(|e| e.body.kind_name()), "now": body.kind_name()}))
    }
}

/// The stage of the marker [`resume`] writes.
const RESUME_STAGE: &str = "resume";

/// The pipeline's working state.
struct Pipeline<'a, 'e> {
    h: Harness<'a>,
    live: &'a Live,
    run: Run,
    system: String,
    snapshot_id: String,
    model_turns: u32,
    /// The current step's reply reserve: the room its requests leave in the window for
    /// the reply, sized to what the step writes.
    max_output: u32,
    /// The output limit of the latest request ([`Self::output_limit`]).
    limit: u32,
    emit: &'e mut dyn FnMut(&Event),
    replay: Option<Replay>,
    /// The run's profile: how its server is asked for a JSON schema, if it can be.
    profile: crate::llm::profile::LlmProfile,
    /// The pieces each step's system message is made of.
    parts: Parts,
    /// The current step's system message and its conversation (its instruction, the
    /// replies and the repair asks): a step sends only its own, so each request is
    /// sized to what its step needs, not to the run so far.
    step_system: String,
    step: Vec<Message>,
}

/// The snapshot's pieces, to give each step the part of it that step needs: the
/// context layers (pinned, working set, summary, references), the saved drafts and the
/// written rules per platform, and the apply policy.
#[derive(Default)]
struct Parts {
    head: Vec<crate::context::ContextLayer>,
    drafts: Vec<(Platform, String)>,
    rules: Vec<(Platform, String)>,
    policy: Option<crate::context::ContextLayer>,
    /// The working set holds an excerpt of the source, not all of it.
    source_trimmed: bool,
}

/// How much of the snapshot a step's system message holds, from all of it to the least
/// the step can work with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cut {
    /// The whole snapshot (every platform's draft and rules).
    Whole,
    /// The context layers, and only these platforms' drafts and rules.
    Platforms,
    /// The context layers and these platforms' rules, no drafts.
    RulesOnly,
    /// The context layers alone (the article, the project, the brand).
    Context,
    /// The pinned layer (rules, project, brand) and these platforms' rules only: for a
    /// step whose instruction holds the text it works on.
    Least,
}

impl Parts {
    fn system(&self, whole: &str, cut: Cut, platforms: &[Platform]) -> String {
        if cut == Cut::Whole {
            return whole.to_owned();
        }
        let mut texts: Vec<String> = self.head.iter().filter(|l| cut != Cut::Least || l.name == "pinned").map(|l| l.text.clone()).collect();
        if cut == Cut::Platforms {
            let drafts: Vec<&String> = self.drafts.iter().filter(|(p, _)| platforms.contains(p)).map(|(_, t)| t).collect();
            if !drafts.is_empty() {
                texts.push(format!("# Saved platform drafts\n{}", drafts.into_iter().map(String::as_str).collect::<String>()));
            }
        }
        let rules: Vec<&String> = self.rules.iter().filter(|(p, _)| cut != Cut::Context && platforms.contains(p)).map(|(_, t)| t).collect();
        if !rules.is_empty() {
            texts.push(format!("# The target platforms' written rules\n{}", rules.into_iter().map(String::as_str).collect::<String>()));
        }
        texts.extend(self.policy.iter().map(|l| l.text.clone()));
        texts.retain(|t| !t.is_empty());
        texts.join("\n")
    }
}

/// Reply reserves, in estimated tokens: each step's fits its purpose (a strategy of a
/// few lines per platform, a summary, a rewrite about as long as what it rewrites).
const STRATEGY_RESERVE: u32 = 320;
const STRATEGY_RESERVE_PER_PLATFORM: u32 = 160;
const SUMMARY_RESERVE: u32 = 320;
/// Besides the rewritten text: the summary (and, for the source, the titles).
const REWRITE_EXTRA: u32 = 320;
/// The least reserve any step gets.
const MIN_RESERVE: u32 = 256;

impl Pipeline<'_, '_> {
    fn append(&mut self, body: EventBody) -> Result<(), ApiError> {
        self.append_with(body, Batch::new())
    }

    /// Appends `body` with `extra` in the same transaction, or, while a replay lasts,
    /// checks it against the recorded event (and shows the recorded one again).
    fn append_with(&mut self, body: EventBody, extra: Batch) -> Result<(), ApiError> {
        if let Some(replay) = &mut self.replay {
            if let Some(recorded) = replay.events.get(replay.next) {
                if recorded.body != body {
                    return Err(Replay::diverged(Some(recorded), &body));
                }
                replay.next += 1;
                let recorded = recorded.clone();
                (self.emit)(&recorded);
                return Ok(());
            }
            self.replay = None;
        }
        let meta = Meta { context_snapshot_id: Some(self.snapshot_id.clone()).filter(|s| !s.is_empty()), ..Meta::default() };
        let event = self.h.append_event(self.live, meta, body, extra, Durability::Grouped)?;
        (self.emit)(&event);
        Ok(())
    }

    /// The recorded reply of the next model call while a replay lasts (its text, and
    /// whether it was cut off at the output limit).
    fn replayed_reply(&mut self) -> Result<Option<(String, bool)>, ApiError> {
        let Some(replay) = &mut self.replay else { return Ok(None) };
        match (replay.events.get(replay.next).map(|e| &e.body), replay.events.get(replay.next + 1).map(|e| &e.body)) {
            (None, _) => {
                self.replay = None;
                Ok(None)
            }
            (Some(EventBody::ModelCallStarted { .. }), Some(EventBody::AssistantMessage { text, finish_reason, .. })) => {
                let reply = (text.clone(), finish_reason == "length");
                for event in &replay.events[replay.next..replay.next + 2] {
                    (self.emit)(event);
                }
                replay.next += 2;
                replay.reused += 1;
                Ok(Some(reply))
            }
            (Some(_), _) => {
                let recorded = replay.events.get(replay.next).cloned();
                Err(Replay::diverged(recorded.as_ref(), &EventBody::ModelCallStarted { model_turn: self.model_turns + 1, messages_hash: String::new(), message_count: 0 }))
            }
        }
    }

    fn stage(&mut self, stage: &str, state: &str, message: impl Into<String>) -> Result<(), Stop> {
        if self.live.interrupted() {
            return Err(Stop::Cancelled);
        }
        if state == "started" {
            self.run.stage = stage.to_owned();
        }
        self.append(EventBody::RunStage { stage: stage.to_owned(), state: state.to_owned(), message: message.into() })?;
        Ok(())
    }

    /// One model call over the log's model-visible messages; with `schema`, the server
    /// is asked for JSON matching it when the profile says it can be. Returns the text
    /// and whether the reply was cut off at the output limit.
    fn call(&mut self, schema: Option<(&str, &Value)>) -> Result<(String, bool), Stop> {
        if self.live.interrupted() {
            return Err(Stop::Cancelled);
        }
        let messages = self.fitted_messages()?;
        self.limit = self.output_limit(&messages);
        if let Some(reply) = self.replayed_reply()? {
            self.model_turns += 1;
            self.step.push(Message::assistant(reply.0.clone(), Vec::new()));
            return Ok(reply);
        }
        self.model_turns += 1;
        let hash = messages_hash(&messages);
        let count = messages.len() as u32;
        self.append(EventBody::ModelCallStarted { model_turn: self.model_turns, messages_hash: hash, message_count: count })?;
        let mut request = ChatRequest::new(std::iter::once(Message::system(self.step_system.clone())).chain(messages).collect());
        request.max_output_tokens = Some(self.limit);
        if let Some((name, schema)) = schema {
            request.response_format = self.profile.response_format(name, schema);
        }
        let cancel = self.live.cancel.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let call = ModelCall { profile: &self.run.profile_id, purpose: "optimize", session_id: None, run_id: Some(&self.run.id) };
        let kernel = self.h.kernel;
        let (h, live) = (self.h, self.live);
        let emit = &mut self.emit;
        let mut partial = String::new();
        let started = std::time::Instant::now();
        let result = std::thread::scope(|scope| {
            let (tx, rx) = mpsc::channel::<ChatEvent>();
            let request = &request;
            let cancel = &cancel;
            let handle = scope.spawn(move || {
                kernel.model_chat(
                    call,
                    request,
                    &mut move |event| {
                        let _ = tx.send(event);
                    },
                    cancel,
                )
            });
            for event in rx.iter() {
                if let ChatEvent::TextDelta(text) = event {
                    partial.push_str(&text);
                    let event = h.live_event(live, "run", EventBody::AssistantDelta { text });
                    emit(&event);
                }
            }
            handle.join().unwrap_or_else(|_| Err(ApiError::internal("the model call stopped unexpectedly")))
        });
        self.run.timings.model_micros += u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
        self.run.timings.model_calls += 1;
        match result {
            Ok(reply) => {
                if self.run.model.is_empty() {
                    self.run.model = reply.model.clone();
                }
                self.append(EventBody::AssistantMessage {
                    text: reply.text.clone(),
                    tool_calls: Vec::new(),
                    finish_reason: format!("{:?}", reply.finish_reason).to_lowercase(),
                    interrupted: false,
                    input_tokens: reply.usage.input_tokens,
                    output_tokens: reply.usage.output_tokens,
                })?;
                self.step.push(Message::assistant(reply.text.clone(), Vec::new()));
                Ok((reply.text, reply.finish_reason == crate::llm::FinishReason::Length))
            }
            Err(error) if error.code == ErrorCode::Cancelled || self.live.interrupted() => {
                self.append(EventBody::AssistantMessage {
                    text: partial,
                    tool_calls: Vec::new(),
                    finish_reason: "interrupted".to_owned(),
                    interrupted: true,
                    input_tokens: 0,
                    output_tokens: 0,
                })?;
                Err(Stop::Cancelled)
            }
            Err(error) => {
                // The model call itself failed (the server, the connection, the key):
                // another try may get the reply, so the run can be resumed from here.
                self.run.resumable = true;
                Err(Stop::Failed(error))
            }
        }
    }

    /// Asks for one JSON value matching `schema`: the instruction, then at most
    /// [`MAX_REPAIRS`] repair round trips, then a clear failure.
    fn json_step(&mut self, stage: &str, instruction: String, schema: &Value) -> Result<Value, Stop> {
        self.json_step_checked(stage, instruction, schema, schema)
    }

    /// [`Self::json_step`] that shows the model (and its server) `schema` and repairs
    /// only what breaks `checked`: a looser schema, when the caller deals with the
    /// rest itself (a bad title candidate is dropped, not worth a round trip).
    fn json_step_checked(&mut self, stage: &str, instruction: String, schema: &Value, checked: &Value) -> Result<Value, Stop> {
        let validator = Validator::new(checked).map_err(|e| ApiError::internal(e.to_string()))?;
        let text = format!("{instruction}\n\nReply with only a JSON value matching this JSON schema:\n{schema}");
        self.append(EventBody::UserMessage { text: text.clone(), was_queued: false, selection: None })?;
        self.step.push(Message::user(text));
        let mut repairs = 0;
        let name = stage.split(':').next().unwrap_or(stage).to_owned();
        loop {
            let (text, cut_off) = self.call(Some((&name, schema)))?;
            let problem = match extract_json(&text) {
                Some(value) => match validator.check(&value) {
                    Ok(()) => return Ok(value),
                    // A cut-off reply's first complete value is a fragment; say why.
                    Err(_) if cut_off => self.cut_off_problem(),
                    Err(violations) => violations.to_string(),
                },
                None if cut_off => self.cut_off_problem(),
                None => "the reply holds no JSON value".to_owned(),
            };
            if repairs >= MAX_REPAIRS {
                let mut error = ApiError::new(
                    ErrorCode::ProviderBadResponse,
                    format!("The model's {stage} is not valid after {MAX_REPAIRS} repairs: {problem}. Nothing was proposed or applied."),
                );
                if cut_off {
                    error = error.hint("raise_output", "Raise the profile's maximum output tokens (Settings → AI models), or choose a model that answers more briefly.");
                }
                // What can help: another try, another model, or less to answer at once
                // (restarting Inkstone cannot, so not the generic `retry` hint).
                return Err(Stop::Failed(
                    error
                        .hint("retry_optimize", "Start the optimization again; models often answer correctly on another try.")
                        .hint("other_model", "Or choose a model that follows JSON instructions more reliably (Settings → AI models).")
                        .hint("smaller_input", "Or ask for less at once: fewer platforms per run, or a shorter article.")
                        .details(json!({"stage": stage, "problem": problem, "cutOff": cut_off})),
                ));
            }
            repairs += 1;
            self.stage(stage, "repair", format!("repair {repairs} of {MAX_REPAIRS}: {problem}"))?;
            let text = format!("That reply is not valid: {problem}. Reply again with only the corrected JSON, matching the schema.");
            self.append(EventBody::UserMessage { text: text.clone(), was_queued: false, selection: None })?;
            self.step.push(Message::user(text));
        }
    }

    /// Starts a step: the first of `cuts` whose system message leaves room for the
    /// step's instruction (about `ask_tokens`) and a reply of `reserve` tokens within
    /// the window, and a conversation of its own. CONTEXT_TOO_LONG, with the numbers
    /// of the least of them, when none does.
    fn begin_step(&mut self, what: &str, cuts: &[Cut], platforms: &[Platform], ask_tokens: u64, reserve: u32) -> Result<(), Stop> {
        self.max_output = reserve;
        self.step.clear();
        let window = u64::from(self.profile.context_window);
        let mut needed = 0;
        for cut in cuts {
            let system = self.parts.system(&self.system, *cut, platforms);
            needed = request_tokens(&system, &[]) + ask_tokens;
            if needed + u64::from(reserve) <= window {
                self.step_system = system;
                return Ok(());
            }
        }
        Err(self.too_long(what, needed))
    }

    /// Whether a step of `cuts` fits (see [`Self::begin_step`]), without starting it.
    fn fits(&self, cuts: &[Cut], platforms: &[Platform], ask_tokens: u64, reserve: u32) -> bool {
        let window = u64::from(self.profile.context_window);
        cuts.iter().any(|cut| request_tokens(&self.parts.system(&self.system, *cut, platforms), &[]) + ask_tokens + u64::from(reserve) <= window)
    }

    /// The step's conversation as the next request sends it: all of it when it fits
    /// with the reply reserve, else the instruction and the latest ask only (earlier
    /// failed replies left out: the ask says what was wrong with them).
    fn fitted_messages(&self) -> Result<Vec<Message>, Stop> {
        let window = u64::from(self.profile.context_window);
        let reserve = u64::from(self.max_output);
        let needed = request_tokens(&self.step_system, &self.step);
        if needed + reserve <= window || self.step.len() < 3 {
            return if needed + reserve <= window { Ok(self.step.clone()) } else { Err(self.too_long(&self.run.stage.clone(), needed)) };
        }
        let short: Vec<Message> = self.step.first().into_iter().chain(self.step.last()).cloned().collect();
        let needed = request_tokens(&self.step_system, &short);
        if needed + reserve <= window {
            Ok(short)
        } else {
            Err(self.too_long(&self.run.stage.clone(), needed))
        }
    }

    /// CONTEXT_TOO_LONG for a step that cannot fit the window even cut down: the
    /// numbers, and the choices (fewer platforms, a smaller input, a larger window said
    /// for the profile's server).
    fn too_long(&self, what: &str, prompt_tokens: u64) -> Stop {
        let window = u64::from(self.profile.context_window);
        let message = format!(
            "the optimization's {what} step needs about {} tokens ({prompt_tokens} of prompt, {} for its reply), and the window is {window} tokens; nothing was sent",
            prompt_tokens + u64::from(self.max_output),
            self.max_output
        );
        let error = crate::llm::LlmError::ContextTooLong {
            message,
            prompt_tokens: Some(prompt_tokens + u64::from(self.max_output)),
            window: Some(window),
            server: self.profile.server_window.map(|w| w.server),
        };
        Stop::Failed(ApiError::from(error).details(json!({
            "promptTokens": prompt_tokens + u64::from(self.max_output),
            "replyReserve": self.max_output,
            "contextWindow": window,
            "stage": what,
            "server": self.profile.server_window.map(|w| w.server.id()),
        })))
    }

    fn cut_off_problem(&self) -> String {
        format!("the reply was cut off at the output limit ({} tokens) before its JSON ended; keep every value shorter", self.limit)
    }

    /// The output limit of a request of the step's system and `messages`: the room the
    /// window leaves, up to the profile's output limit (8,192 when it sets none), and
    /// never less than the step's reserve (which [`Self::begin_step`] made room for).
    /// A small window gets the reserve its step needs; a large one the usual limit.
    fn output_limit(&self, messages: &[Message]) -> u32 {
        let room = u64::from(self.profile.context_window).saturating_sub(request_tokens(&self.step_system, messages));
        let cap = u64::from(self.profile.max_output_tokens.unwrap_or(8_192));
        (room.min(cap) as u32).max(self.max_output)
    }

    /// `summary`, or its regeneration when it promises growth; a second promise
    /// withholds it (flagged).
    fn clean_summary(&mut self, stage: &str, summary: String, flags: &mut Vec<String>) -> Result<String, Stop> {
        if summary.trim().is_empty() {
            // Blank passes the schema's minLength but not the proposal's summary rule.
            return Ok("The model gave no summary; review the changes themselves.".to_owned());
        }
        let found = promises(self.h, &summary)?;
        if found.is_empty() {
            return Ok(summary);
        }
        self.stage(stage, "repair", format!("the summary promises an outcome ({}); asking for another", found.join(", ")))?;
        let smaller = SUMMARY_RESERVE.min(self.max_output).max(MIN_RESERVE);
        let reserve = std::mem::replace(&mut self.max_output, smaller);
        let value = self.json_step(
            stage,
            format!(
                "Your summary promises an outcome ({}). Nothing may promise growth, reach or results. Write the summary again: what changed and why, nothing about what it will achieve.",
                found.join(", ")
            ),
            &summary_schema(),
        );
        self.max_output = reserve;
        let value = value?;
        let again = value["summary"].as_str().unwrap_or_default().to_owned();
        if promises(self.h, &again)?.is_empty() {
            return Ok(again);
        }
        flags.push("summary_withheld".to_owned());
        Ok("The model's summary was withheld because it promised an outcome; review the changes themselves.".to_owned())
    }
}

/// The estimated prompt tokens of a request of `system` and `messages`.
fn request_tokens(system: &str, messages: &[Message]) -> u64 {
    let request = ChatRequest::new(std::iter::once(Message::system(system)).chain(messages.iter().cloned()).collect());
    crate::llm::estimate_request_tokens(&request)
}

/// A reply reserve of `tokens`, within the profile's output limit and at least
/// [`MIN_RESERVE`].
fn reserve_of(profile: &crate::llm::profile::LlmProfile, tokens: u64) -> u32 {
    let cap = profile.max_output_tokens.unwrap_or(8_192);
    (tokens.min(u64::from(u32::MAX)) as u32).max(MIN_RESERVE).min(cap.max(1))
}

/// A source step's reply as read: the optimized source, the title candidates, the
/// findings each introduces (the source's, the titles'), and one finding per title
/// candidate dropped because the engine would refuse it.
type SourceReply = (String, Vec<String>, Vec<Finding>, Vec<Finding>, Vec<Finding>);

/// The findings of the word checks ([`crate::quality::TERM_CHECKS`]): banned words,
/// absolute terms, growth promises.
fn risky(findings: &[Finding]) -> Vec<&Finding> {
    findings.iter().filter(|f| crate::quality::TERM_CHECKS.contains(&f.check.as_str())).collect()
}

/// `“最佳” (ad_law), “保证涨粉” (growth_promise)`, for the model and the log.
fn term_list<'f>(findings: impl IntoIterator<Item = &'f Finding>) -> String {
    let mut parts: Vec<String> = Vec::new();
    for part in findings.into_iter().map(|f| format!("“{}” ({})", f.matched.as_deref().unwrap_or_default(), f.check)) {
        if !parts.contains(&part) {
            parts.push(part);
        }
    }
    parts.join(", ")
}

/// The `risky_terms` flag's detail: each term and where it is (UTF-16 span into the
/// candidate text, or the title candidate).
fn term_spans(findings: &[Finding]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let each = findings.iter().map(|f| {
        let term = f.matched.as_deref().unwrap_or_default();
        match (f.span, &f.location) {
            (Some(span), _) => format!("“{term}” at {}–{}", span.from, span.to),
            (None, Some(location)) => format!("“{term}” in {location}"),
            (None, None) => format!("“{term}”"),
        }
    });
    // One entry per term and place (a list may hold a term twice in different cases).
    for part in each {
        if !parts.contains(&part) {
            parts.push(part);
        }
    }
    parts.join("; ")
}

/// Everything a platform step needs about the project as the run found it.
struct Found {
    project: Project,
    saved: Vec<PlatformDraft>,
}

fn platform_rules(growth: &crate::profiles::GrowthProfile, draft: &crate::profiles::DraftProfile) -> String {
    let mut out = format!("## {} ({}, {})\naudience: {}\n", growth.platform.as_str(), growth.id, draft.id, growth.audience);
    for (name, rules) in [
        ("title", &growth.title_rules),
        ("opening", &growth.opening_rules),
        ("structure", &growth.structure_rules),
        ("tags", &growth.tag_rules),
        ("call to action", &growth.cta_rules),
        ("risks", &growth.risk_rules),
    ] {
        if !rules.is_empty() {
            out.push_str(&format!("{name}: {}\n", rules.join(" / ")));
        }
    }
    let limits: Vec<String> =
        draft.limits.iter().map(|l| format!("{:?} {}{} {:?}", l.field, l.min.map(|m| format!("{m}–")).unwrap_or_else(|| "≤".to_owned()), l.max, l.unit).to_lowercase()).collect();
    out.push_str(&format!("limits: {}\nformat: {}\n", limits.join("; "), draft.format));
    out
}

/// How the model writes a platform's text.
fn format_note(content: &DraftContent) -> &'static str {
    match content {
        DraftContent::Html { .. } => "The text is the draft's HTML (keep its inline styles and tags).",
        DraftContent::Markdown { .. } => "The text is the draft's Markdown.",
        DraftContent::Thread { .. } => "The text is the thread's posts, separated by a line holding only --- with a blank line on each side.",
        DraftContent::Card { .. } => "The text is the card's body text.",
    }
}

/// Starts and runs an optimization of `project_id`, streaming the run's events to
/// `emit`. Returns the finished run (ready, failed or cancelled); the errors are the
/// input's (VALIDATION, NOT_FOUND) and engine faults.
pub(crate) fn start(h: Harness<'_>, project_id: &str, profile: Option<&str>, input: RunInput, emit: &mut dyn FnMut(&Event)) -> Result<Run, ApiError> {
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
pub(crate) fn resume(h: Harness<'_>, run_id: &str, emit: &mut dyn FnMut(&Event)) -> Result<Run, ApiError> {
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
    let replay = Replay::new(&log);
    let from = run.stage.clone();
    run.status = RunStatus::Running;
    run.resumable = false;
    run.error = None;
    run.updated_at = h.now();
    let mut extra = Batch::new();
    extra.put(&run)?;
    let why = if failed { "a failure" } else { "the app closed" };
    let message = format!("Resuming after {why} at stage {from}; {} recorded steps are replayed", replay.events.len());
    let meta = Meta { context_snapshot_id: run.snapshot_id.clone(), ..Meta::default() };
    let marker = h.append_event(&live, meta, EventBody::RunStage { stage: RESUME_STAGE.to_owned(), state: "started".to_owned(), message }, extra, Durability::Durable)?;
    emit(&marker);
    // Stopped after its proposals were recorded (one transaction with the run's
    // record): only its end is missing.
    let proposed = replay.events.iter().any(|e| matches!(&e.body, EventBody::RunStage { stage, state, .. } if stage == "proposals" && state == "done"));
    if proposed {
        return finish(h, &live, run, Ok(()), emit);
    }
    execute(h, &live, run, &profile, Some(replay), emit)
}

/// Runs the pipeline of `run` (fresh, or replaying an interrupted run's log) and
/// records its end.
fn execute(h: Harness<'_>, live: &Live, run: Run, profile: &crate::llm::profile::LlmProfile, replay: Option<Replay>, emit: &mut dyn FnMut(&Event)) -> Result<Run, ApiError> {
    let max_output = reserve_of(profile, u64::from(STRATEGY_RESERVE));
    let started = std::time::Instant::now();
    let mut pipeline = Pipeline {
        h,
        live,
        run,
        system: String::new(),
        snapshot_id: String::new(),
        model_turns: 0,
        max_output,
        limit: max_output,
        emit,
        replay,
        profile: profile.clone(),
        parts: Parts::default(),
        step_system: String::new(),
        step: Vec::new(),
    };
    let outcome = run_pipeline(&mut pipeline, profile.context_window);
    let mut run = pipeline.run.clone();
    if run.model.is_empty() {
        // Every reply came from the record: the profile's model answered them.
        run.model = profile.model.clone();
    }
    run.timings.total_micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
    let emit = pipeline.emit;
    finish(h, live, run, outcome, emit)
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

fn run_pipeline(p: &mut Pipeline<'_, '_>, window: u32) -> Result<(), Stop> {
    let h = p.h;
    let store = h.store();
    // 1. The snapshot.
    p.stage("snapshot", "started", "Reading the project, its drafts and the platforms' rules")?;
    let records = crate::context::gather(store, &p.run.project_id)?;
    let found = Found { project: records.project.clone(), saved: crate::project::drafts::list(store, &p.run.project_id)? };
    let set = crate::project::drafts::profiles(h.kernel)?;
    let prompts = PromptSet::load(&h.config().data_dir.join("prompts"))?;
    let entry = match p.run.input.draft {
        Some(platform) => Entry::Draft(platform),
        None => Entry::Article,
    };
    let mode = crate::prompts::Mode::Optimize { goal: p.run.input.goal, intensity: p.run.input.intensity, constraints: p.run.input.constraints.texts() };
    let prompt: Composed = prompts.compose(&mode, entry);
    let constraints = p.run.input.constraints.texts();
    let input = crate::context::ContextInput { prompt: Some(&prompt), ..records.input(crate::context::Mode::Plan, "", &constraints, &[], None) };
    // The context layers take what the smallest step leaves; each step then takes the
    // part of the snapshot it needs ([`Parts`]).
    let budget = u64::from(window).saturating_sub(u64::from(MIN_RESERVE));
    p.max_output = MIN_RESERVE;
    let assembled = crate::context::assemble(&input, budget).map_err(|too| p.too_long("snapshot", too.needed))?;
    let mut layers = assembled.layers;
    let policy = layers.pop();
    p.parts.source_trimmed = layers.iter().any(|l| l.name == "working_set" && l.trimmed);
    p.parts.head = layers.clone();
    p.parts.policy = policy.clone();
    let mut drafts_text = String::from("# Saved platform drafts\n");
    for draft in &found.saved {
        let text = proposals::draft_patch_text(&draft.content);
        let head: String = text.chars().take(1_500).collect();
        let entry = format!("## {} (revision {}, {:?})\ntitle: {}\n{head}\n", draft.platform.as_str(), draft.revision, draft.status, draft.title);
        drafts_text.push_str(&entry);
        p.parts.drafts.push((draft.platform, entry));
    }
    if found.saved.is_empty() {
        drafts_text.push_str("none\n");
    }
    layers.push(crate::context::named_layer("drafts", drafts_text));
    let mut rules = String::from("# The target platforms' written rules\n");
    for platform in &p.run.input.platforms {
        let growth = set.growth.get(platform).ok_or_else(|| ApiError::internal(format!("no growth profile for {}", platform.as_str())))?;
        let entry = platform_rules(growth, crate::project::drafts::draft_profile(&set, *platform)?);
        rules.push_str(&entry);
        p.parts.rules.push((*platform, entry));
    }
    layers.push(crate::context::named_layer("platform_rules", rules));
    layers.extend(policy);
    let snapshot = crate::context::snapshot(layers, &prompt);
    let mut extra = Batch::new();
    if !store.contains(Kind::ContextSnapshots, snapshot.id.as_bytes())? {
        extra.put(&snapshot)?;
    }
    p.system = snapshot.system.clone();
    p.snapshot_id = snapshot.id.clone();
    p.run.snapshot_id = Some(snapshot.id.clone());
    p.run.prompt_layers = snapshot.prompt_layers.clone();
    extra.put(&p.run)?;
    let estimates: Vec<crate::harness::LayerEstimate> =
        snapshot.layers.iter().map(|l| crate::harness::LayerEstimate { layer: l.name.clone(), tokens: l.tokens, trimmed: l.trimmed }).collect();
    let estimated_tokens = estimates.iter().map(|l| l.tokens).sum();
    p.append_with(EventBody::ContextAssembled { snapshot_id: snapshot.id.clone(), estimated_tokens, layers: estimates, prompt_layers: snapshot.prompt_layers.clone() }, extra)?;
    p.stage("snapshot", "done", format!("snapshot {}", snapshot.id))?;

    // 2. The strategy.
    p.stage("strategy", "started", "Planning the changes")?;
    // One request for every platform when it fits the window; else the platforms in
    // batches that fit (one each at the least), the later ones asking only for their
    // plans.
    let all = p.run.input.platforms.clone();
    let schema_tokens = crate::llm::estimate_tokens(&strategy_schema().to_string()) + 80;
    let profile = p.profile.clone();
    let strategy_reserve = |n: usize| reserve_of(&profile, u64::from(STRATEGY_RESERVE + STRATEGY_RESERVE_PER_PLATFORM * n as u32));
    // The strategy needs the article: never cut to the least.
    let cuts = [Cut::Whole, Cut::Platforms, Cut::RulesOnly];
    let mut batches: Vec<Vec<Platform>> = Vec::new();
    let mut rest = all.clone();
    while !rest.is_empty() {
        let mut size = rest.len();
        while size > 1 && !p.fits(if batches.is_empty() && size == all.len() { &cuts } else { &cuts[1..] }, &rest[..size], schema_tokens, strategy_reserve(size)) {
            size -= 1;
        }
        batches.push(rest.drain(..size).collect());
    }
    let mut strategy = Value::Null;
    for (idx, batch) in batches.iter().enumerate() {
        let names: Vec<&str> = batch.iter().map(|x| x.as_str()).collect();
        let whole = batches.len() == 1;
        p.begin_step("strategy", if whole { &cuts } else { &cuts[1..] }, batch, schema_tokens, strategy_reserve(batch.len()))?;
        if idx == 0 {
            let instruction = format!(
                "Step 1 of the optimization: the strategy. For the goal and intensity above, list the changes you will make to the article and, for each target platform ({}), the plan for its draft.",
                names.join(", ")
            );
            strategy = p.json_step("strategy", instruction, &strategy_schema())?;
        } else {
            p.stage("strategy", "batch", format!("plans for {} (batch {} of {}, to fit the model's window)", names.join(", "), idx + 1, batches.len()))?;
            let instruction =
                format!("Step 1 of the optimization, continued: the plan for the drafts of {} only. The strategy so far: {}", names.join(", "), strategy_digest(&strategy, None));
            let more = p.json_step("strategy", instruction, &strategy_platforms_schema())?;
            if let (Some(plans), Some(more)) = (strategy["platforms"].as_array_mut(), more["platforms"].as_array()) {
                plans.extend(more.iter().cloned());
            }
        }
    }
    p.run.strategy = Some(strategy.clone());
    p.stage("strategy", "done", "strategy valid")?;

    // 3. Titles and the optimized source.
    let project = &found.project;
    let mut source = project.source.clone();
    if p.run.input.draft.is_none() {
        p.stage("source", "started", "Writing the title candidates and the optimized source")?;
        let keep_title = p.run.input.constraints.keep_title;
        let instruction = format!(
            "Step 2: the optimized source. Follow your strategy. `source` is the whole optimized Markdown source; `titles` {}; `summary` says in one or two sentences what changed and why.\n\nYour strategy: {}",
            if keep_title {
                "is an empty list (the title is kept)".to_owned()
            } else {
                format!("holds up to {MAX_TITLE_CANDIDATES} title candidates, each one line (no line break) of at most {} characters", proposals::MAX_TITLE_CANDIDATE_CHARS)
            },
            strategy_digest(&strategy, None)
        );
        // The reply is the whole source again, with its titles and summary.
        let source_tokens = crate::llm::estimate_tokens(&project.source);
        let reserve = reserve_of(&p.profile, source_tokens + source_tokens / 4 + u64::from(REWRITE_EXTRA));
        let ask = crate::llm::estimate_tokens(&instruction) + crate::llm::estimate_tokens(&source_schema().to_string()) + 40;
        if p.parts.source_trimmed {
            // Rewriting an excerpt would propose deleting the rest.
            p.max_output = reserve;
            let needed = request_tokens(&p.system, &[]) + source_tokens + ask;
            return Err(p.too_long("source", needed));
        }
        p.begin_step("source", &[Cut::Whole, Cut::RulesOnly, Cut::Context], &all, ask, reserve)?;
        let value = p.json_step_checked("source", instruction, &source_schema(), &source_reply_schema())?;
        let before = crate::project::drafts::source_findings_of(h.kernel, project)?;
        let title_before = crate::project::drafts::source_findings_of(h.kernel, &Project { source: String::new(), ..project.clone() })?;
        // What a reply proposes, and the terms it introduces: into the source (spans into
        // the optimized text) and into each title candidate. A candidate the engine
        // would refuse (a line break, too long) is dropped, with a finding naming it.
        let read = |value: &Value| -> Result<SourceReply, ApiError> {
            let source = value["source"].as_str().unwrap_or_default().to_owned();
            let mut titles: Vec<String> = Vec::new();
            let mut dropped: Vec<Finding> = Vec::new();
            let offered = if keep_title { Vec::new() } else { value["titles"].as_array().cloned().unwrap_or_default() };
            for title in offered.iter().filter_map(|t| t.as_str()).map(str::trim).filter(|t| !t.is_empty() && *t != project.title) {
                if titles.iter().any(|t| t == title) {
                    continue;
                }
                let problem = match title_problem(title) {
                    Some(problem) => Some(problem),
                    None if titles.len() >= MAX_TITLE_CANDIDATES => {
                        Some((format!("a run offers at most {MAX_TITLE_CANDIDATES} title candidates."), Some("title_candidate.dropped_count")))
                    }
                    None => None,
                };
                match problem {
                    Some((problem, id)) => {
                        let shown = shown_title(title);
                        let mut finding = Finding::new("title_candidate", Severity::Warn, None, format!("Title candidate “{shown}” was dropped: {problem}"));
                        if let Some(id) = id {
                            finding = finding.worded(id, &[]);
                        }
                        finding.location = Some(format!("title candidate “{shown}”"));
                        dropped.push(finding);
                    }
                    None => titles.push(title.to_owned()),
                }
            }
            let after = crate::project::drafts::source_findings_of(h.kernel, &Project { source: source.clone(), ..project.clone() })?;
            let risks = proposals::new_findings(&before, &after);
            let mut title_risks = Vec::new();
            for title in &titles {
                let after = crate::project::drafts::source_findings_of(h.kernel, &Project { title: title.clone(), source: String::new(), ..project.clone() })?;
                for mut finding in proposals::new_findings(&title_before, &after) {
                    if finding.location.as_deref() == Some("title") {
                        finding.location = Some(format!("title candidate “{title}”"));
                        title_risks.push(finding);
                    }
                }
            }
            Ok((source, titles, risks, title_risks, dropped))
        };
        let (mut new_source, mut titles, mut risks, mut title_risks, mut dropped) = read(&value)?;
        let mut summary = value["summary"].as_str().unwrap_or_default().to_owned();
        let mut flags = Vec::new();
        if !risky(&risks).is_empty() || !risky(&title_risks).is_empty() {
            let named = term_list(risky(&risks).into_iter().chain(risky(&title_risks)));
            p.stage("source", "repair", format!("risky terms: {named}"))?;
            let again = p.json_step_checked(
                "source",
                format!(
                    "Your reply introduces terms the original does not have that are restricted (absolute or superlative claims, banned words) or promise outcomes: {named}. Rewrite those sentences and titles without them (state what is true with its scope, or describe instead; each title still one line of at most {} characters) and reply with the corrected JSON.",
                    proposals::MAX_TITLE_CANDIDATE_CHARS
                ),
                &source_schema(),
                &source_reply_schema(),
            )?;
            (new_source, titles, risks, title_risks, dropped) = read(&again)?;
            summary = again["summary"].as_str().unwrap_or_default().to_owned();
            let still: Vec<Finding> = risky(&risks).into_iter().chain(risky(&title_risks)).cloned().collect();
            if !still.is_empty() {
                flags.push(format!("risky_terms: {}", term_spans(&still)));
                p.stage("source", "flagged", format!("still introduces risky terms: {}", term_list(still.iter())))?;
            }
        }
        source = new_source;
        // Each title candidate against each target platform's title limit: one title
        // serves every platform, so a candidate too long for one is flagged for it (the
        // person picks), never cut.
        let mut title_over = Vec::new();
        for title in &titles {
            for platform in &p.run.input.platforms {
                let profile = crate::project::drafts::draft_profile(&set, *platform)?;
                let empty = DraftContent::Markdown { markdown: String::new() };
                for mut finding in crate::pipeline::check_draft(profile, title, &empty) {
                    if finding.severity == Severity::Block && finding.location.as_deref() == Some("title") {
                        title_over.push(format!("title candidate “{title}” on {}: {}", platform.as_str(), finding.message));
                        finding.location = Some(format!("title candidate “{title}” ({})", platform.as_str()));
                        title_risks.push(finding);
                    }
                }
            }
        }
        if !title_over.is_empty() {
            flags.insert(0, format!("over_limit: {}", title_over.join("; ")));
            p.stage("source", "flagged", format!("title candidates over a platform's limit: {}", title_over.join("; ")))?;
        }
        if !dropped.is_empty() {
            let named: Vec<String> = dropped.iter().map(|f| f.message.clone()).collect();
            flags.push("dropped_titles".to_owned());
            p.stage("source", "flagged", format!("{} title candidates dropped: {}", dropped.len(), named.join(" ")))?;
        }
        p.run.titles = titles;
        let summary = p.clean_summary("source", summary, &mut flags)?;
        risks.extend(title_risks);
        risks.extend(dropped);
        p.run.targets.push(RunTarget {
            target: Target::Source,
            proposal_id: None,
            title_proposal_id: None,
            summary,
            risks,
            fit_before: None,
            fit_after: None,
            flags,
            outcome: TargetOutcome::Pending,
            outcome_message: None,
        });
        p.stage("source", "done", format!("{} title candidates", p.run.titles.len()))?;
    }

    // 4. Per platform: compile, adapt, validate.
    let optimized = Project { source: source.clone(), ..project.clone() };
    let mut candidates: Vec<(Platform, String)> = Vec::new();
    // One compile of each text for every platform (tags are suggested once per text).
    let platforms_all = p.run.input.platforms.clone();
    let compiled_all = crate::project::drafts::compile(h.kernel, &optimized, Some(platforms_all.clone()), None)?.drafts;
    let current_all = if platforms_all.iter().any(|x| !found.saved.iter().any(|d| d.platform == *x)) {
        crate::project::drafts::compile(h.kernel, project, Some(platforms_all.clone()), None)?.drafts
    } else {
        Vec::new()
    };
    let brand = crate::project::brand(store, project)?;
    for platform in platforms_all {
        let stage = format!("platform:{}", platform.as_str());
        p.stage(&stage, "started", format!("Adapting the {} draft", platform.as_str()))?;
        let profile = crate::project::drafts::draft_profile(&set, platform)?.clone();
        let growth = set.growth.get(&platform).cloned().ok_or_else(|| ApiError::internal("no growth profile"))?;
        let saved = found.saved.iter().find(|d| d.platform == platform).cloned();
        let compiled = compiled_all.iter().find(|c| c.draft.platform == platform).cloned().ok_or_else(|| ApiError::internal("nothing compiled"))?;
        let (title, base_content) = match (&saved, p.run.input.draft) {
            (Some(saved), Some(_)) => (saved.title.clone(), saved.content.clone()),
            (Some(saved), None) => (saved.title.clone(), compiled.draft.content.clone()),
            (None, _) => (compiled.draft.title.clone(), compiled.draft.content.clone()),
        };
        let (fit_before, before_text) = match &saved {
            Some(saved) => (fit::report(&growth, &profile, &saved.title, &saved.content), proposals::draft_patch_text(&saved.content)),
            None => {
                let current = current_all.iter().find(|c| c.draft.platform == platform).ok_or_else(|| ApiError::internal("nothing compiled"))?;
                (fit::report(&growth, &profile, &current.draft.title, &current.draft.content), proposals::draft_patch_text(&current.draft.content))
            }
        };
        if saved.is_none() {
            // Nothing to apply a candidate to: no model call is spent on it (the dialog
            // says so before the run, and offers to save the compiled draft first).
            p.stage(&stage, "flagged", format!("no saved {} draft: not adapted (save the compiled draft in the Drafts tab, then optimize again)", platform.as_str()))?;
            p.run.targets.push(RunTarget {
                target: Target::Draft { platform },
                proposal_id: None,
                title_proposal_id: None,
                summary: format!("Not adapted: there is no saved {} draft to change.", platform.as_str()),
                risks: Vec::new(),
                fit_before: Some(fit_before),
                fit_after: None,
                flags: vec!["no_saved_draft".to_owned()],
                outcome: TargetOutcome::Unavailable,
                outcome_message: Some(NO_SAVED_DRAFT.to_owned()),
            });
            p.stage(&stage, "done", format!("{} skipped: no saved draft", platform.as_str()))?;
            continue;
        }
        let base_text = proposals::draft_patch_text(&base_content);
        let instruction = format!(
            "Step 3 ({}): adapt this draft to the platform's audience profile and rules (see \"{}\" in the context), following your strategy. {} Keep every limit; if something must go, rewrite rather than cut mid-sentence. `summary` says what changed and why.\n\nYour strategy: {}\n\nThe draft:\n{base_text}",
            platform.as_str(),
            growth.platform.as_str(),
            format_note(&base_content),
            strategy_digest(&strategy, Some(platform))
        );
        // One platform per request: its rules, its draft, and a reply about as long.
        let draft_tokens = crate::llm::estimate_tokens(&base_text);
        let reserve = reserve_of(&p.profile, draft_tokens + draft_tokens / 4 + u64::from(REWRITE_EXTRA));
        let ask = crate::llm::estimate_tokens(&instruction) + crate::llm::estimate_tokens(&platform_schema().to_string()) + 40;
        p.begin_step(&stage, &[Cut::Whole, Cut::RulesOnly, Cut::Least], &[platform], ask, reserve)?;
        let value = p.json_step(&stage, instruction, &platform_schema())?;
        let mut text = value["text"].as_str().unwrap_or_default().to_owned();
        let mut flags = Vec::new();
        let mut summary = value["summary"].as_str().unwrap_or_default().to_owned();
        let check = |text: &str| {
            let content = crate::pipeline::normalize_content(proposals::with_patch_text(&base_content, text));
            let findings = crate::pipeline::check_draft(&profile, &title, &content);
            (content, findings)
        };
        // The terms the candidate introduces, against the draft the person has now (the
        // saved draft, or the compile of the current source).
        let html = matches!(base_content, DraftContent::Html { .. });
        let words = |text: &str| crate::quality::draft_findings(text, html, brand.as_ref(), set.risk_list("ad-law-zh@v2"), set.risk_list("growth-promise@v1"));
        let words_before = words(&before_text);
        let introduced = |text: &str| proposals::new_findings(&words_before, &words(text));
        let (mut content, mut findings) = check(&text);
        let mut new_words = introduced(&text);
        // The limits the candidate's text can fix. The draft's title is not the
        // candidate's (it is the project's title, whose candidates the source step
        // proposes): a title over its limit is flagged without a round that cannot fix it.
        let over_limit = |f: &[Finding], title_too: bool| {
            f.iter().filter(|f| f.severity == Severity::Block && (title_too || f.location.as_deref() != Some("title"))).map(|f| f.message.clone()).collect::<Vec<_>>()
        };
        let over = over_limit(&findings, false);
        if !over.is_empty() || !risky(&new_words).is_empty() {
            let mut asks = Vec::new();
            if !over.is_empty() {
                p.stage(&stage, "repair", format!("over a limit: {}", over.join("; ")))?;
                asks.push(format!("The {} draft breaks these limits: {}. Fix it by rewriting (never by cutting text off mid-sentence).", platform.as_str(), over.join("; ")));
            }
            if !risky(&new_words).is_empty() {
                let named = term_list(risky(&new_words));
                p.stage(&stage, "repair", format!("risky terms: {named}"))?;
                asks.push(format!(
                    "The {} draft introduces terms the original does not have that are restricted (absolute or superlative claims, banned words) or promise outcomes: {named}. Rewrite those sentences without them (state what is true with its scope, or describe instead).",
                    platform.as_str()
                ));
            }
            asks.push("Reply with the corrected JSON.".to_owned());
            let again = p.json_step(&stage, asks.join(" "), &platform_schema())?;
            text = again["text"].as_str().unwrap_or_default().to_owned();
            summary = again["summary"].as_str().unwrap_or_default().to_owned();
            (content, findings) = check(&text);
            new_words = introduced(&text);
            let still: Vec<Finding> = risky(&new_words).into_iter().cloned().collect();
            if !still.is_empty() {
                flags.push(format!("risky_terms: {}", term_spans(&still)));
                p.stage(&stage, "flagged", format!("still introduces risky terms: {}", term_list(still.iter())))?;
            }
        }
        let still = over_limit(&findings, true);
        if !still.is_empty() {
            flags.insert(0, format!("over_limit: {}", still.join("; ")));
            p.stage(&stage, "flagged", format!("still over a limit: {}", still.join("; ")))?;
        }
        findings.extend(new_words);
        let summary = p.clean_summary(&stage, summary, &mut flags)?;
        let fit_after = fit::report(&growth, &profile, &title, &content);
        p.run.targets.push(RunTarget {
            target: Target::Draft { platform },
            proposal_id: None,
            title_proposal_id: None,
            summary,
            risks: findings,
            fit_before: Some(fit_before),
            fit_after: Some(fit_after),
            flags,
            outcome: TargetOutcome::Pending,
            outcome_message: None,
        });
        candidates.push((platform, proposals::draft_patch_text(&content)));
        p.stage(&stage, "done", format!("{} draft adapted", platform.as_str()))?;
    }

    // 5 and 6. Proposals, one per target, in one transaction.
    p.stage("proposals", "started", "Recording the proposals for review")?;
    if p.live.interrupted() {
        return Err(Stop::Cancelled);
    }
    let origin = Origin {
        session_id: None,
        run_id: Some(p.run.id.clone()),
        turn: None,
        tool_use_id: None,
        context_snapshot_id: Some(p.snapshot_id.clone()),
        model: p.run.model.clone(),
        profile_id: p.run.profile_id.clone(),
        prompt_version: prompt.version(),
        prompt_layers: p.run.prompt_layers.clone(),
        rebased_from: None,
    };
    let titles = p.run.titles.clone();
    let run_snapshot = p.run.clone();
    let (event, run) = h.append_staged(p.live, Meta { context_snapshot_id: Some(p.snapshot_id.clone()), ..Meta::default() }, Durability::Durable, |batch| {
        let mut run = run_snapshot;
        let current = crate::project::load(store, &run.project_id)?;
        for target in &mut run.targets {
            let summary = target.summary.clone();
            match &target.target {
                Target::Source => {
                    if source != current.source {
                        let new = NewProposal {
                            project_id: run.project_id.clone(),
                            kind: ProposalKind::SourcePatch,
                            target: Target::Source,
                            summary: summary.clone(),
                            payload: Payload::Text { base_text: current.source.clone(), proposed_text: source.clone() },
                            origin: origin.clone(),
                        };
                        target.proposal_id = Some(proposals::stage_create(h.kernel, batch, new)?.id);
                    }
                    if !titles.is_empty() {
                        let new = NewProposal {
                            project_id: run.project_id.clone(),
                            kind: ProposalKind::TitleCandidates,
                            target: Target::Source,
                            summary: "Title candidates".to_owned(),
                            payload: Payload::Candidates { candidates: titles.iter().map(|t| Candidate { text: t.clone(), rationale: String::new() }).collect() },
                            origin: origin.clone(),
                        };
                        target.title_proposal_id = Some(proposals::stage_create(h.kernel, batch, new)?.id);
                    }
                }
                Target::Draft { platform } => {
                    let Some((_, text)) = candidates.iter().find(|(p, _)| p == platform) else { continue };
                    if let Some(saved) = crate::project::drafts::load(store, &run.project_id, *platform)? {
                        let base_text = proposals::draft_patch_text(&saved.content);
                        if &base_text != text && saved.status != crate::model::DraftStatus::Publishing {
                            let new = NewProposal {
                                project_id: run.project_id.clone(),
                                kind: ProposalKind::DraftPatch,
                                target: Target::Draft { platform: *platform },
                                summary: summary.clone(),
                                payload: Payload::Text { base_text, proposed_text: text.clone() },
                                origin: origin.clone(),
                            };
                            target.proposal_id = Some(proposals::stage_create(h.kernel, batch, new)?.id);
                        }
                    }
                }
                _ => {}
            }
            if target.proposal_id.is_none() && target.title_proposal_id.is_none() {
                target.outcome = TargetOutcome::Unavailable;
                target.outcome_message =
                    Some(if target.flags.iter().any(|f| f == "no_saved_draft") { NO_SAVED_DRAFT.to_owned() } else { "The candidate is the same as the current text.".to_owned() });
            }
        }
        run.stage = "proposals".to_owned();
        run.updated_at = h.now();
        batch.put(&run)?;
        let made = run.targets.iter().filter(|t| t.proposal_id.is_some()).count() + run.targets.iter().filter(|t| t.title_proposal_id.is_some()).count();
        Ok((EventBody::RunStage { stage: "proposals".to_owned(), state: "done".to_owned(), message: format!("{made} proposals recorded") }, run))
    })?;
    (p.emit)(&event);
    p.run = run;
    Ok(())
}

/// What to apply of a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApplySelection {
    /// Every target (the source and every platform).
    pub all: bool,
    /// The source proposal.
    pub source: bool,
    /// These platforms' draft proposals.
    pub platforms: Vec<Platform>,
    /// Reject every open proposal of the run instead.
    pub reject_all: bool,
    /// The title to take from the candidates (with the source).
    pub title: Option<String>,
    /// Per proposal, the hunks to take (the rest stay open); absent: every hunk.
    pub hunks: std::collections::BTreeMap<String, Vec<String>>,
    /// The person confirmed changing ready or published drafts.
    pub confirm_final: bool,
}

/// What applying did for one target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AppliedTarget {
    pub target: Target,
    pub outcome: TargetOutcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub version: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub draft_revision: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub error: Option<ApiError>,
}

/// Applies the selected targets of a ready run, each in its own transaction (a moved
/// target is a CONFLICT for that target alone and writes nothing for it), and records
/// the outcomes on the run.
///
/// Errors: NOT_FOUND; VALIDATION for an empty selection or a platform not in the run;
/// CONFLICT when the run is not ready (running, failed, cancelled).
pub(crate) fn apply(h: Harness<'_>, run_id: &str, selection: &ApplySelection) -> Result<(Run, Vec<AppliedTarget>), ApiError> {
    let mut run = load(h, run_id)?;
    if !matches!(run.status, RunStatus::Ready | RunStatus::PartlyApplied) {
        return Err(ApiError::new(ErrorCode::Conflict, format!("Run {} is {}; only a ready run can be applied.", run.id, run.status.as_str()))
            .hint("start_again", "Start a new optimization."));
    }
    for (i, platform) in selection.platforms.iter().enumerate() {
        if !run.targets.iter().any(|t| t.target == Target::Draft { platform: *platform }) {
            return Err(ApiError::validation(&format!("platforms[{i}]"), format!("Run {} has no {} target.", run.id, platform.as_str())));
        }
    }
    if !selection.all && !selection.source && selection.platforms.is_empty() && !selection.reject_all {
        return Err(ApiError::validation("platforms", "Choose what to apply: all, the source, platforms, or reject all."));
    }
    let mut results = Vec::new();
    for target in &mut run.targets {
        let chosen = selection.reject_all
            || selection.all
            || match &target.target {
                Target::Source => selection.source,
                Target::Draft { platform } => selection.platforms.contains(platform),
                _ => false,
            };
        if !chosen || target.outcome != TargetOutcome::Pending {
            continue;
        }
        if selection.reject_all {
            for id in [&target.proposal_id, &target.title_proposal_id].into_iter().flatten() {
                let request = Reject { proposal_id: id.clone(), hunks: None, reason: None };
                if let Err(error) = proposals::apply::reject(h.kernel, &request) {
                    if error.code != ErrorCode::Conflict {
                        return Err(error);
                    }
                }
            }
            target.outcome = TargetOutcome::Rejected;
            results.push(AppliedTarget { target: target.target.clone(), outcome: TargetOutcome::Rejected, version: None, draft_revision: None, error: None });
            continue;
        }
        let mut applied = AppliedTarget { target: target.target.clone(), outcome: TargetOutcome::Applied, version: None, draft_revision: None, error: None };
        let mut accept_one = |proposal_id: &str, expected_base: u64, choices: Option<Vec<String>>| -> Result<Option<ApiError>, ApiError> {
            let request = Accept {
                proposal_id: proposal_id.to_owned(),
                hunks: selection.hunks.get(proposal_id).cloned(),
                expected_base,
                choices,
                confirm_final: selection.confirm_final,
                actor: Actor::Person,
            };
            match proposals::apply::accept(h.kernel, &request) {
                Ok(accepted) => {
                    applied.version = accepted.version.as_ref().map(|v| v.number).or(applied.version);
                    applied.draft_revision = accepted.draft.as_ref().map(|d| d.revision).or(applied.draft_revision);
                    Ok(None)
                }
                Err(error) if matches!(error.code, ErrorCode::Conflict | ErrorCode::ReadOnly | ErrorCode::Validation) => Ok(Some(error)),
                Err(error) => Err(error),
            }
        };
        let mut failure = None;
        if let Some(id) = &target.proposal_id {
            let proposal = proposals::load(h.store(), id)?;
            let expected = match &proposal.target {
                Target::Draft { .. } => u64::from(proposal.base.draft_revision.unwrap_or(0)),
                _ => proposal.base.revision,
            };
            failure = accept_one(id, expected, None)?;
        }
        if failure.is_none() {
            if let (Some(id), Some(title)) = (&target.title_proposal_id, &selection.title) {
                // The title is taken on top of what this action just applied.
                let proposal = proposals::load(h.store(), id)?;
                let current = crate::project::load(h.store(), &proposal.project_id)?;
                let expected = if target.proposal_id.is_some() { current.revision } else { proposal.base.revision };
                failure = accept_one(id, expected, Some(vec![title.clone()]))?;
            }
        }
        if target.proposal_id.is_none() && selection.title.is_none() {
            continue;
        }
        if let Some(error) = failure {
            applied.outcome = if error.code == ErrorCode::Conflict { TargetOutcome::Conflict } else { TargetOutcome::Pending };
            target.outcome_message = Some(error.message.clone());
            applied.error = Some(error);
        } else {
            target.outcome_message = None;
        }
        target.outcome = applied.outcome;
        results.push(applied);
    }
    let open = run.targets.iter().filter(|t| t.outcome == TargetOutcome::Pending).count();
    let adopted = run.targets.iter().filter(|t| t.outcome == TargetOutcome::Applied).count();
    run.status = match (adopted, open) {
        (0, _) if run.targets.iter().all(|t| matches!(t.outcome, TargetOutcome::Rejected | TargetOutcome::Unavailable)) => RunStatus::Rejected,
        (0, _) => run.status,
        (_, 0) if run.targets.iter().all(|t| matches!(t.outcome, TargetOutcome::Applied | TargetOutcome::Unavailable)) => RunStatus::Applied,
        _ => RunStatus::PartlyApplied,
    };
    run.updated_at = h.now();
    let live = h.live_run(&run.id, &run.project_id)?;
    let mut extra = Batch::new();
    extra.put(&run)?;
    let message = results.iter().map(|r| format!("{}: {:?}", target_name(&r.target), r.outcome).to_lowercase()).collect::<Vec<_>>().join(", ");
    h.append_event(&live, Meta::default(), EventBody::RunStage { stage: "apply".to_owned(), state: "done".to_owned(), message }, extra, Durability::Durable)?;
    Ok((run, results))
}

/// `source` or the platform's name.
pub fn target_name(target: &Target) -> String {
    match target {
        Target::Draft { platform } => platform.as_str().to_owned(),
        _ => "source".to_owned(),
    }
}
