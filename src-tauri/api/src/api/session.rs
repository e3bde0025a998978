//! Harness sessions over the API (`session.*`, `permissionRules.*`). The turn loop
//! itself is in `crate::harness`; these methods check parameters, start or continue
//! turns, and stream every event: as itself (`StreamEvent::Harness`, the default) or as
//! the timeline patch it makes (`StreamEvent::Timeline`, with `timeline: true`).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::dto::{CompactThreshold, CompactionMode, Mode, Pin, Selection};
use super::dto::{Event, LogLine, PendingApproval, PendingQuestion, TurnEndReason};
use super::{required_text, ApiError, Empty, Engine, StreamEvent};
use crate::harness::compaction::{self, Outcome};
use crate::harness::{self, EventBody, Limits, PermissionRule, Session, SubmitOutcome, TurnStats};
use crate::llm::profile::LlmProfile;
use crate::model::Project;
use crate::store::{Batch, Durability};

/// Changes to the default limits; absent fields keep the default.
#[derive(Debug, Clone, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LimitsInput {
    #[serde(default)]
    #[ts(optional)]
    pub max_model_turns: Option<u32>,
    #[serde(default)]
    #[ts(optional)]
    pub tool_timeout_ms: Option<u64>,
    #[serde(default)]
    #[ts(optional)]
    pub token_budget: Option<u64>,
    #[serde(default)]
    #[ts(optional)]
    pub cost_budget: Option<f64>,
    #[serde(default)]
    #[ts(optional)]
    pub breaker_threshold: Option<u32>,
    #[serde(default)]
    #[ts(optional)]
    pub loop_threshold: Option<u32>,
    #[serde(default)]
    #[ts(optional)]
    pub max_output_tokens: Option<u32>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionCreateParams {
    pub project_id: String,
    /// An LLM profile id or name; the default profile when absent.
    #[serde(default)]
    #[ts(optional)]
    pub profile: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub title: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub mode: Option<Mode>,
    #[serde(default)]
    #[ts(optional)]
    pub limits: Option<LimitsInput>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionRef {
    pub session_id: String,
}

/// `session.archive`: the shape of `project.archive`, with `archived` optional so a
/// plain `{sessionId}` still archives.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionArchiveParams {
    pub session_id: String,
    /// `false` brings an archived session back (it can be continued again); default `true`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub archived: Option<bool>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionRenameParams {
    pub session_id: String,
    /// The new title (1 to 200 characters, trimmed).
    pub title: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionGetParams {
    pub session_id: String,
    /// Include the UI timeline (default false).
    #[serde(default)]
    #[ts(optional)]
    pub timeline: Option<bool>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionListParams {
    #[serde(default)]
    #[ts(optional)]
    pub project_id: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub include_archived: Option<bool>,
}

/// Where a session stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum SessionStatus {
    Idle,
    Running,
    WaitingForApproval,
    WaitingForAnswer,
    Archived,
}

/// A session and its state, as a replay of its log gives it.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SessionView {
    pub session: super::dto::Session,
    pub status: SessionStatus,
    pub mode: Mode,
    pub last_sequence: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub pending_approval: Option<PendingApproval>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub pending_question: Option<PendingQuestion>,
    /// Messages waiting for the running turn to end.
    pub queued: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub last_turn_end: Option<TurnEndReason>,
    /// The hash of the model-visible messages (`sha256:...`).
    pub messages_hash: String,
    pub message_count: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub timeline: Option<Vec<LogLine>>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SessionListResult {
    /// Newest first.
    pub sessions: Vec<super::dto::Session>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionSubmitParams {
    pub session_id: String,
    pub text: String,
    /// The part of the project's working copy the task is scoped to: UTF-16 offsets
    /// `from..to` and the text there, checked against the source (VALIDATION when the
    /// range is outside it or holds other text; nothing is written). It is recorded in
    /// the user-message event and shown in the model's working set.
    #[serde(default)]
    #[ts(optional)]
    pub selection: Option<Selection>,
    /// Switch the mode first.
    #[serde(default)]
    #[ts(optional)]
    pub mode: Option<Mode>,
    /// Stream the panel's timeline instead of the log: `true` sends only
    /// `StreamEvent::Timeline` patches (each live delta one `append`), the default only
    /// the logged and live `StreamEvent::Harness` events. One message per event either way.
    #[serde(default)]
    #[ts(optional)]
    pub timeline: Option<bool>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionResolveApprovalParams {
    pub session_id: String,
    pub request_id: String,
    pub approved: bool,
    /// With an approval: also store the "always allow" rule the prompt offered, in
    /// this scope (refused for a tool that always asks).
    #[serde(default)]
    #[ts(optional)]
    pub always: Option<super::dto::AllowScope>,
    #[serde(default)]
    #[ts(optional)]
    pub note: Option<String>,
    /// Stream the panel's timeline instead of the log: `true` sends only
    /// `StreamEvent::Timeline` patches (each live delta one `append`), the default only
    /// the logged and live `StreamEvent::Harness` events. One message per event either way.
    #[serde(default)]
    #[ts(optional)]
    pub timeline: Option<bool>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionAnswerParams {
    pub session_id: String,
    pub question_id: String,
    pub answer: String,
    /// Stream the panel's timeline instead of the log: `true` sends only
    /// `StreamEvent::Timeline` patches (each live delta one `append`), the default only
    /// the logged and live `StreamEvent::Harness` events. One message per event either way.
    #[serde(default)]
    #[ts(optional)]
    pub timeline: Option<bool>,
}

/// `session.compact`: the session, and how the stream reads (as for a submit).
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionCompactParams {
    pub session_id: String,
    /// Stream the panel's timeline instead of the log: `true` sends only
    /// `StreamEvent::Timeline` patches (each live delta one `append`), the default only
    /// the logged and live `StreamEvent::Harness` events. One message per event either way.
    #[serde(default)]
    #[ts(optional)]
    pub timeline: Option<bool>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionSetModeParams {
    pub session_id: String,
    pub mode: Mode,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionEventsParams {
    pub session_id: String,
    /// The first sequence number to return (default 1).
    #[serde(default)]
    #[ts(optional)]
    pub from: Option<u64>,
    /// At most this many events (default 1,000).
    #[serde(default)]
    #[ts(optional)]
    pub limit: Option<u32>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SessionEventsResult {
    pub events: Vec<Event>,
    pub last_sequence: u64,
}

/// Where the time of a submit went (microseconds).
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TurnTimings {
    pub model_calls: u32,
    pub model_micros: u64,
    pub durable_syncs: u32,
    pub sync_micros: u64,
    pub total_micros: u64,
    /// Everything but model time and durable syncs.
    pub harness_micros: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SessionSubmitResult {
    /// True when a turn was running and the message waits for its end.
    pub queued: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub reason: Option<TurnEndReason>,
    pub session: SessionView,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub timings: Option<TurnTimings>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SessionInterruptResult {
    /// False when no turn was running.
    pub interrupted: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PermissionRules {
    pub rules: Vec<super::dto::PermissionRule>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SessionCompactResult {
    /// False when there was nothing older than the latest turn to compact, or the
    /// attempt failed (then `consecutiveFailures` says how many in a row).
    pub compacted: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub mode: Option<CompactionMode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tokens_before: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tokens_after: Option<u64>,
    pub consecutive_failures: u32,
    pub session: SessionView,
    pub timings: TurnTimings,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionPinParams {
    pub session_id: String,
    pub text: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionUnpinParams {
    pub session_id: String,
    pub pin_id: String,
}

/// A session's pins and what the pinned context costs.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SessionPins {
    /// Oldest first: the person's pins and the instructions carried out of compacted
    /// conversation.
    pub pins: Vec<Pin>,
    /// The estimated tokens of the pins alone.
    pub pins_tokens: u64,
    /// The estimated tokens of the whole pinned layer (rules, permissions, project,
    /// brand, constraints, pins); it is never trimmed or summarised.
    pub pinned_tokens: u64,
    pub context_window: u64,
    /// `pinnedTokens` as a share of the window, in percent.
    pub pinned_percent: u32,
    /// The most `pinsTokens` may be: the pins' share of the room the window leaves
    /// beside the fixed part of a request (0 when the profile cannot be read).
    pub pin_budget_tokens: u64,
    /// False when the pins take more than their budget: no message is sent (the turn
    /// ends `pins_too_long`) until something is unpinned or the window is larger.
    pub pins_fit: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionSetCompactionParams {
    pub session_id: String,
    /// `{mode: "auto", percent}` (40–95) or `{mode: "manual"}`; absent: the profile's.
    #[serde(default)]
    #[ts(optional)]
    pub threshold: Option<CompactThreshold>,
}

/// How full a session's context is and when it compacts (the panel's context meter).
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SessionContextView {
    pub context_window: u64,
    /// The calibrated estimate of the next request's input: the last model call's, and
    /// never less than `fixedTokens` (what even the first message carries).
    pub estimated_tokens: u64,
    /// `estimatedTokens` as a share of the window, the share the compaction threshold
    /// and the 70% warning compare. A request must also fit `inputBudgetTokens`
    /// (compaction runs whenever it would not).
    pub percent: u32,
    /// The room for the request: the window less `replyReserveTokens`.
    pub input_budget_tokens: u64,
    /// Kept free for the model's reply, sized to the step (a selection's quote and
    /// replacement, or a paragraph or section without one; within the session's and
    /// the profile's output limit), never more than the window leaves after the fixed
    /// part, never less than the 256-token floor.
    pub reply_reserve_tokens: u64,
    /// What every request carries whatever the conversation: `systemPromptTokens` +
    /// `toolTokens` (estimated, calibrated).
    pub fixed_tokens: u64,
    /// The smallest system message the context can be trimmed to (prompt, pinned
    /// layer, summary, the smallest working set).
    pub system_prompt_tokens: u64,
    /// The tool definitions sent: the largest set the profile's `toolLoading` allows
    /// that takes at most a quarter of the window (all, the core set), else the compact set.
    pub tool_tokens: u64,
    /// False when the fixed part with the least a reply may be left does not fit the
    /// window (even with the compact tool set): no message can be sent until the
    /// window is larger (a turn then ends `fixed_context_too_long` without any
    /// compaction).
    pub fixed_fits: bool,
    pub warn_percent: u32,
    /// The threshold in force (the session's, else the profile's, else 80%).
    pub threshold: CompactThreshold,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub session_threshold: Option<CompactThreshold>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub profile_threshold: Option<CompactThreshold>,
    /// Reported ÷ estimated input tokens for the profile.
    pub calibration_ratio: f64,
    pub calibration_samples: u32,
    pub compactions: u32,
    pub consecutive_failures: u32,
    /// True while automatic compaction only truncates (after a fallback).
    pub in_cooldown: bool,
    pub summary_tokens: u64,
    pub pinned_tokens: u64,
}

fn timings(stats: &TurnStats) -> TurnTimings {
    let micros = |d: std::time::Duration| d.as_micros() as u64;
    TurnTimings {
        model_calls: stats.model_calls,
        model_micros: micros(stats.model_time),
        durable_syncs: stats.durable_syncs,
        sync_micros: micros(stats.sync_time),
        total_micros: micros(stats.total_time),
        harness_micros: micros(stats.total_time.saturating_sub(stats.model_time).saturating_sub(stats.sync_time)),
    }
}

/// What a reader of a session's stream asked for: the log's events (the CLI, scripts)
/// or the panel's timeline patches (the window). Never both: each event is one message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Feed {
    Events,
    Timeline,
}

impl Feed {
    fn of(timeline: Option<bool>) -> Self {
        if timeline.unwrap_or(false) {
            Feed::Timeline
        } else {
            Feed::Events
        }
    }
}

/// Sends each event of a session on the stream as the reader asked: the event itself
/// (`StreamEvent::Harness`), or the timeline patch it makes (`StreamEvent::Timeline`), so
/// a reader of patches keeps the panel's items without folding the log and the text
/// streaming now updates one item.
fn session_stream<'a>(engine: &'a Engine, session_id: &'a str, feed: Feed, on_event: &'a mut dyn FnMut(StreamEvent)) -> impl FnMut(&harness::Event) + 'a {
    let mut live = harness::timeline::LiveFeed::default();
    move |event: &harness::Event| match feed {
        Feed::Events => on_event(StreamEvent::Harness(Box::new(event.into()))),
        Feed::Timeline => {
            if let Some(patch) = engine.harness().timeline_patch(session_id, &mut live, event) {
                on_event(StreamEvent::Timeline(Box::new((&patch).into())));
            }
        }
    }
}

pub(super) fn compact(engine: &Engine, params: SessionCompactParams, on_event: &mut dyn FnMut(StreamEvent)) -> Result<SessionCompactResult, ApiError> {
    let mut emit = session_stream(engine, &params.session_id, Feed::of(params.timeline), on_event);
    let (outcome, stats) = harness::compact_session(engine.harness(), &params.session_id, &mut emit)?;
    let session = view(engine, &params.session_id, false)?;
    let (compacted, mode, tokens_before, tokens_after) = match outcome {
        Outcome::Nothing | Outcome::Failed { .. } => (false, None, None, None),
        Outcome::Compacted { mode, tokens_before, tokens_after } => (true, Some((&mode).into()), Some(tokens_before), Some(tokens_after)),
    };
    let (state, _) = engine.harness().session_state(&params.session_id)?;
    Ok(SessionCompactResult { compacted, mode, tokens_before, tokens_after, consecutive_failures: state.compaction.consecutive_failures, session, timings: timings(&stats) })
}

/// The whole pinned layer's estimate for a session now.
fn pinned_layer_tokens(engine: &Engine, session: &Session, state: &harness::SessionState) -> Result<u64, ApiError> {
    let records = crate::context::gather(engine.store(), &session.project_id)?;
    let constraints: Vec<String> = crate::proposals::apply::constraints(engine.store(), &session.id)?.into_iter().map(|c| c.text).collect();
    let pins: Vec<String> = state.pins.iter().map(|p| p.text.clone()).collect();
    // The intent and memory ride in the pinned layer too, as in a model call.
    let extras = harness::context_extras(engine.store(), &engine.workspace()?.id, &records, &state.intent)?;
    let input = crate::context::ContextInput {
        intent: &extras.intent,
        memory: &extras.memory,
        memory_left_out: extras.memory_left_out,
        ..records.input(state.mode, &state.summary, &constraints, &pins, state.selection.as_ref())
    };
    Ok(crate::context::pinned_tokens(&input))
}

pub(super) fn pins(engine: &Engine, params: SessionRef) -> Result<SessionPins, ApiError> {
    let session = engine.harness().load_session(&params.session_id)?;
    let (state, _) = engine.harness().session_state(&params.session_id)?;
    let window = u64::from(engine.llm_profile(&session.profile_id).map(|p| p.context_window).unwrap_or(0));
    let pinned_tokens = pinned_layer_tokens(engine, &session, &state)?;
    let texts: Vec<String> = state.pins.iter().map(|p| p.text.clone()).collect();
    let pins_tokens = compaction::pins_tokens(&texts);
    let pinned_percent = (pinned_tokens * 100).checked_div(window).unwrap_or(0) as u32;
    // Without a readable profile there is no window to hold the pins against.
    let room = compaction::session_room(engine.harness(), &session, &state).ok();
    let pin_budget_tokens = room.map_or(0, |r| r.pin_budget());
    let pins_fit = room.is_none_or(|r| r.pins_over(&texts).is_none());
    Ok(SessionPins { pins: state.pins.iter().map(Into::into).collect(), pins_tokens, pinned_tokens, context_window: window, pinned_percent, pin_budget_tokens, pins_fit })
}

pub(super) fn pin(engine: &Engine, params: SessionPinParams) -> Result<SessionPins, ApiError> {
    engine.harness().pin(&params.session_id, &params.text)?;
    pins(engine, SessionRef { session_id: params.session_id })
}

pub(super) fn unpin(engine: &Engine, params: SessionUnpinParams) -> Result<SessionPins, ApiError> {
    engine.harness().load_session(&params.session_id)?;
    engine.harness().unpin(&params.session_id, &params.pin_id)?;
    pins(engine, SessionRef { session_id: params.session_id })
}

pub(super) fn context(engine: &Engine, params: SessionRef) -> Result<SessionContextView, ApiError> {
    let session = engine.harness().load_session(&params.session_id)?;
    let (state, _) = engine.harness().session_state(&params.session_id)?;
    let profile = engine.llm_profile(&session.profile_id).ok();
    let window = u64::from(profile.as_ref().map_or(0, |p| p.context_window));
    let calibration = compaction::profile_context(engine.store(), &session.profile_id)?;
    // Without a readable profile there is no request to size: zeros (the next turn
    // reports the profile's problem).
    let overhead = match &profile {
        Some(_) => Some(harness::session_overhead(engine.harness(), &session, &state)?),
        None => None,
    };
    let (system_prompt_tokens, tool_tokens, reply_reserve_tokens) = overhead.map_or((0, 0, 0), |o| (o.system_prompt_tokens, o.tool_tokens, o.reply_reserve_tokens));
    let fixed_tokens = system_prompt_tokens + tool_tokens;
    let input_budget = window.saturating_sub(reply_reserve_tokens);
    let estimated = calibration.calibrated(state.compaction.last_estimated_tokens).max(fixed_tokens);
    Ok(SessionContextView {
        context_window: window,
        estimated_tokens: estimated,
        percent: (estimated * 100).checked_div(window).unwrap_or(0) as u32,
        input_budget_tokens: input_budget,
        reply_reserve_tokens,
        fixed_tokens,
        system_prompt_tokens,
        tool_tokens,
        fixed_fits: fixed_tokens + reply_reserve_tokens <= window,
        warn_percent: compaction::WARN_PERCENT,
        threshold: (&state.compaction.threshold.or(calibration.threshold).unwrap_or_default()).into(),
        session_threshold: state.compaction.threshold.as_ref().map(Into::into),
        profile_threshold: calibration.threshold.as_ref().map(Into::into),
        calibration_ratio: calibration.ratio,
        calibration_samples: calibration.samples,
        compactions: state.compaction.compactions,
        consecutive_failures: state.compaction.consecutive_failures,
        in_cooldown: state.compaction.in_cooldown(),
        summary_tokens: crate::llm::estimate_tokens(&state.summary),
        pinned_tokens: pinned_layer_tokens(engine, &session, &state)?,
    })
}

pub(super) fn set_compaction(engine: &Engine, params: SessionSetCompactionParams) -> Result<SessionContextView, ApiError> {
    engine.harness().load_session(&params.session_id)?;
    engine.harness().set_compaction_threshold(&params.session_id, params.threshold.map(Into::into))?;
    context(engine, SessionRef { session_id: params.session_id })
}

fn view(engine: &Engine, session_id: &str, with_timeline: bool) -> Result<SessionView, ApiError> {
    let session = engine.harness().load_session(session_id)?;
    engine.harness().with_session_state(session_id, |state, running| view_of(&session, state, running, with_timeline))
}

fn view_of(session: &harness::Session, state: &harness::SessionState, running: bool, with_timeline: bool) -> SessionView {
    let status = if session.archived {
        SessionStatus::Archived
    } else if running {
        SessionStatus::Running
    } else if state.pending_approval.is_some() {
        SessionStatus::WaitingForApproval
    } else if state.pending_question.is_some() {
        SessionStatus::WaitingForAnswer
    } else {
        SessionStatus::Idle
    };
    SessionView {
        status,
        mode: state.mode.into(),
        last_sequence: state.last_sequence,
        messages_hash: state.messages_hash(),
        message_count: state.messages.len() as u32,
        pending_approval: state.pending_approval.as_ref().map(Into::into),
        pending_question: state.pending_question.as_ref().map(Into::into),
        queued: state.queued.iter().map(|q| q.text.clone()).collect(),
        last_turn_end: state.last_turn_end.as_ref().map(Into::into),
        input_tokens: state.input_tokens,
        output_tokens: state.output_tokens,
        timeline: with_timeline.then(|| state.lines.iter().map(Into::into).collect()),
        session: session.into(),
    }
}

fn limits(input: Option<LimitsInput>) -> Result<Limits, ApiError> {
    let mut limits = Limits::default();
    let Some(input) = input else { return Ok(limits) };
    if let Some(n) = input.max_model_turns {
        if !(1..=1000).contains(&n) {
            return Err(ApiError::validation("limits.maxModelTurns", "`maxModelTurns` must be between 1 and 1000."));
        }
        limits.max_model_turns = n;
    }
    if let Some(ms) = input.tool_timeout_ms {
        if !(10..=3_600_000).contains(&ms) {
            return Err(ApiError::validation("limits.toolTimeoutMs", "`toolTimeoutMs` must be between 10 ms and one hour."));
        }
        limits.tool_timeout_ms = ms;
    }
    limits.token_budget = input.token_budget;
    if let Some(cost) = input.cost_budget {
        if !cost.is_finite() || cost < 0.0 {
            return Err(ApiError::validation("limits.costBudget", "`costBudget` must be a number ≥ 0."));
        }
        limits.cost_budget = Some(cost);
    }
    if let Some(n) = input.breaker_threshold {
        limits.breaker_threshold = n.max(1);
    }
    if let Some(n) = input.loop_threshold {
        limits.loop_threshold = n.max(2);
    }
    if let Some(n) = input.max_output_tokens {
        limits.max_output_tokens = n.max(1);
    }
    Ok(limits)
}

pub(super) fn create(engine: &Engine, params: SessionCreateParams) -> Result<SessionView, ApiError> {
    let project = engine.store().get::<Project>(params.project_id.as_bytes())?.ok_or_else(|| ApiError::not_found("project", &params.project_id))?;
    let profile: LlmProfile = match &params.profile {
        Some(name) => engine.llm_profile(name)?,
        None => engine
            .store()
            .scan::<LlmProfile>(b"")?
            .into_iter()
            .find(|p| p.is_default)
            .ok_or_else(|| ApiError::validation("profile", "There is no LLM profile to talk to.").action("add_profile", &[]))?,
    };
    let title = match &params.title {
        Some(title) => required_text("title", title, super::MAX_TITLE_CHARS)?,
        None => project.title.clone(),
    };
    let limits = limits(params.limits)?;
    let now = engine.now();
    let session =
        Session { id: engine.new_id("ses"), project_id: project.id.clone(), title, profile_id: profile.id.clone(), limits, archived: false, created_at: now, updated_at: now };
    // The session record and its first event are one transaction: no session without
    // a log, no log without its session.
    engine.harness().start_session(&session, params.mode.map(Into::into).unwrap_or_default())?;
    view(engine, &session.id, false)
}

pub(super) fn list(engine: &Engine, params: SessionListParams) -> Result<SessionListResult, ApiError> {
    let include_archived = params.include_archived.unwrap_or(false);
    let mut sessions: Vec<Session> = engine
        .store()
        .scan::<Session>(b"")?
        .into_iter()
        .filter(|s| include_archived || !s.archived)
        .filter(|s| params.project_id.as_ref().is_none_or(|p| &s.project_id == p))
        .collect();
    sessions.sort_by(|a, b| b.created_at.cmp(&a.created_at).then_with(|| b.id.cmp(&a.id)));
    Ok(SessionListResult { sessions: sessions.iter().map(Into::into).collect() })
}

pub(super) fn get(engine: &Engine, params: SessionGetParams) -> Result<SessionView, ApiError> {
    view(engine, &params.session_id, params.timeline.unwrap_or(false))
}

/// Archives a session (`archived`, default true) or brings an archived one back
/// (`archived: false`). Already so: nothing changes. Errors: NOT_FOUND; CONFLICT
/// (`session.running`) archiving while a turn runs; VALIDATION
/// (`session.project_archived`) restoring a session whose project is archived.
pub(super) fn archive(engine: &Engine, params: SessionArchiveParams) -> Result<SessionView, ApiError> {
    let archived = params.archived.unwrap_or(true);
    let mut session = engine.harness().load_session(&params.session_id)?;
    if session.archived == archived {
        return view(engine, &session.id, false);
    }
    let live = engine.harness().live_session(&session.id)?;
    if archived && live.is_running() {
        return Err(ApiError::new(super::ErrorCode::Conflict, "A turn of this session is running.").problem("session.running", &[]).hint("interrupt", "Interrupt it first."));
    }
    if !archived {
        let project = crate::project::load(engine.store(), &session.project_id)?;
        if project.archived {
            return Err(crate::project::archived_for_session(&project));
        }
    }
    session.archived = archived;
    session.updated_at = engine.now();
    let mut extra = Batch::new();
    extra.put(&session)?;
    let body = if archived { EventBody::SessionArchived {} } else { EventBody::SessionUnarchived {} };
    engine.harness().append_event(&live, harness::Meta::default(), body, extra, Durability::Durable)?;
    view(engine, &session.id, false)
}

/// Renames a session. The title lives on the session record only (the log and what the
/// model sees do not carry it), so a rename is a record update, allowed while a turn
/// runs and on an archived session.
pub(super) fn rename(engine: &Engine, params: SessionRenameParams) -> Result<SessionView, ApiError> {
    let title = required_text("title", &params.title, super::MAX_TITLE_CHARS)?;
    {
        let _guard = engine.write_lock();
        let mut session = engine.harness().load_session(&params.session_id)?;
        if session.title != title {
            session.title = title;
            session.updated_at = engine.now();
            let mut batch = Batch::new();
            batch.put(&session)?;
            engine.store().apply(batch, Durability::Durable)?;
        }
    }
    view(engine, &params.session_id, false)
}

fn submit_result(engine: &Engine, session_id: &str, outcome: SubmitOutcome) -> Result<SessionSubmitResult, ApiError> {
    let session = view(engine, session_id, false)?;
    Ok(match outcome {
        SubmitOutcome::Queued => SessionSubmitResult { queued: true, reason: None, session, timings: None },
        SubmitOutcome::Finished { reason, stats } => SessionSubmitResult { queued: false, reason: Some((&reason).into()), session, timings: Some(timings(&stats)) },
    })
}

pub(super) fn submit(engine: &Engine, params: SessionSubmitParams, on_event: &mut dyn FnMut(StreamEvent)) -> Result<SessionSubmitResult, ApiError> {
    // Checked before anything is written (a mode switch included).
    let selection = params.selection.map(crate::context::Selection::from);
    if let Some(selection) = &selection {
        let session = engine.harness().load_session(&params.session_id)?;
        let project = crate::project::load(engine.store(), &session.project_id)?;
        selection.check(&project.source)?;
    }
    let feed = Feed::of(params.timeline);
    if let Some(mode) = params.mode {
        set_mode_inner(engine, &params.session_id, mode.into(), feed, on_event)?;
    }
    let mut emit = session_stream(engine, &params.session_id, feed, on_event);
    let outcome = harness::submit_message(engine.harness(), &params.session_id, &params.text, selection, &mut emit)?;
    submit_result(engine, &params.session_id, outcome)
}

pub(super) fn interrupt(engine: &Engine, params: SessionRef) -> Result<SessionInterruptResult, ApiError> {
    engine.harness().load_session(&params.session_id)?;
    Ok(SessionInterruptResult { interrupted: engine.harness().interrupt_session(&params.session_id)? })
}

pub(super) fn resolve_approval(engine: &Engine, params: SessionResolveApprovalParams, on_event: &mut dyn FnMut(StreamEvent)) -> Result<SessionSubmitResult, ApiError> {
    let decided_by = engine.author()?;
    let note = params.note.unwrap_or_default();
    let mut emit = session_stream(engine, &params.session_id, Feed::of(params.timeline), on_event);
    let answer = match (params.approved, params.always) {
        (false, None) => harness::Answer::Deny,
        (true, None) => harness::Answer::AllowOnce,
        (true, Some(scope)) => harness::Answer::AllowAlways(scope.into()),
        (false, Some(_)) => return Err(ApiError::validation("always", "\"always\" goes with an approval; a denial makes no rule.")),
    };
    let outcome = harness::resolve_approval(engine.harness(), &params.session_id, &params.request_id, answer, &note, &decided_by, &mut emit)?;
    submit_result(engine, &params.session_id, outcome)
}

pub(super) fn answer_question(engine: &Engine, params: SessionAnswerParams, on_event: &mut dyn FnMut(StreamEvent)) -> Result<SessionSubmitResult, ApiError> {
    let mut emit = session_stream(engine, &params.session_id, Feed::of(params.timeline), on_event);
    let outcome = harness::answer_question(engine.harness(), &params.session_id, &params.question_id, &params.answer, &mut emit)?;
    submit_result(engine, &params.session_id, outcome)
}

fn set_mode_inner(engine: &Engine, session_id: &str, mode: harness::Mode, feed: Feed, on_event: &mut dyn FnMut(StreamEvent)) -> Result<(), ApiError> {
    let session = engine.harness().load_session(session_id)?;
    if session.archived {
        return Err(ApiError::validation("sessionId", "The session is archived."));
    }
    engine.harness().check_project_open(&session)?;
    let live = engine.harness().live_session(session_id)?;
    if live.state.lock().unwrap_or_else(|p| p.into_inner()).mode == mode {
        return Ok(());
    }
    let event = engine.harness().append_event(&live, harness::Meta::default(), EventBody::ModeChanged { mode, by: "user".to_owned() }, Batch::new(), Durability::Durable)?;
    session_stream(engine, session_id, feed, on_event)(&event);
    Ok(())
}

pub(super) fn set_mode(engine: &Engine, params: SessionSetModeParams) -> Result<SessionView, ApiError> {
    set_mode_inner(engine, &params.session_id, params.mode.into(), Feed::Events, &mut |_| {})?;
    view(engine, &params.session_id, false)
}

pub(super) fn events(engine: &Engine, params: SessionEventsParams) -> Result<SessionEventsResult, ApiError> {
    engine.harness().load_session(&params.session_id)?;
    let from = params.from.unwrap_or(1).max(1);
    let limit = params.limit.unwrap_or(1000).clamp(1, 10_000) as usize;
    let prefix = crate::store::keys::project_prefix(&params.session_id);
    let start = crate::store::keys::session_event(&params.session_id, from);
    // The state first: its first read after a restart closes the turn the old process
    // left open (`turn_ended: restarted`), which this read must then include.
    let (state, _) = engine.harness().session_state(&params.session_id)?;
    let events = engine.store().scan_from_limit::<harness::Event>(&prefix, &start, limit)?;
    Ok(SessionEventsResult { events: events.iter().map(Into::into).collect(), last_sequence: state.last_sequence })
}

pub(super) fn get_rules(engine: &Engine, _: Empty) -> Result<PermissionRules, ApiError> {
    Ok(PermissionRules { rules: engine.harness().permission_rules()?.iter().map(Into::into).collect() })
}

pub(super) fn set_rules(engine: &Engine, params: PermissionRules) -> Result<PermissionRules, ApiError> {
    for (index, rule) in params.rules.iter().enumerate() {
        if rule.tool.trim().is_empty() {
            return Err(ApiError::validation(&format!("rules[{index}].tool"), "A rule names a tool or `*`."));
        }
    }
    engine.harness().set_permission_rules(params.rules.iter().map(PermissionRule::from).collect())?;
    Ok(params)
}
