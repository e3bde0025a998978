//! Harness sessions over the API (`session.*`, `permissionRules.*`). The turn loop
//! itself is in `crate::harness`; these methods check parameters, start or continue
//! turns, and stream every event: as itself (`StreamEvent::Harness`, the default) or as
//! the timeline patch it makes (`StreamEvent::Timeline`, with `timeline: true`).
//!
//! The wire types and what every method shares (the view of a session, how its
//! stream reads) are here; in the folder beside this file the methods by family: a
//! session's life, its turns, and what fills its context window.

mod lifecycle;
mod turns;
mod window;

pub(super) use lifecycle::{archive, create, get, list, rename};
pub(super) use turns::{answer_question, events, interrupt, resolve_approval, set_mode, submit};
pub(super) use window::{compact, context, pin, pins, set_compaction, unpin};

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::dto::{CompactThreshold, CompactionMode, Mode, Pin, Selection};
use super::dto::{Event, LogLine, PendingApproval, PendingQuestion, TurnEndReason};
use super::{ApiError, Empty, Engine, StreamEvent};
use crate::harness::{self, PermissionRule, TurnStats};

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
