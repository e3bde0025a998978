//! The wire form of the harness's log: its events (what `StreamEvent::Harness`
//! sends), the log's lines and what waits for the person (see [`super`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::Hint;
use super::ToolCall;
use super::{AllowOffer, CompactThreshold, CompactionMode, CompactionSummary, CompactionTrigger, Hunk, Mode, PinSource, ProposalKind, Selection, Target};
use crate::model::Timestamp;

/// How a tool call ended, as the model and the UI see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ToolStatus {
    Success,
    UnknownTool,
    SchemaViolation,
    PermissionDenied,
    Timeout,
    Interrupted,
    ToolError,
    /// Stopped by the loop detector (same tool, same input, three times in a turn).
    LoopDetected,
    /// Never answered: the user moved on, or the process restarted.
    Cancelled,
    /// The model asked for an action reserved for the person (accepting or rejecting a
    /// proposal): it is not a tool, and never will be one for the model.
    ToolForbidden,
    /// Not run: the session is in plan mode (read and propose only). Logs written
    /// before this status say `permission_denied`.
    Blocked,
    /// Not run: the person denied the approval. Logs written before this status say
    /// `permission_denied` (which now means a rule denied it).
    Denied,
}

/// Why a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum TurnEndReason {
    /// The model finished its answer.
    Completed,
    /// Waiting for the user to approve or deny a tool call.
    BlockedOnApproval,
    /// Waiting for the user to answer a question.
    BlockedOnQuestion,
    Interrupted,
    /// The model-turn limit per user message tripped.
    MaxModelTurns,
    /// The session's token or cost budget is spent.
    BudgetExceeded,
    /// Three consecutive failures of the same kind.
    CircuitBreaker,
    /// The same tool with the same input three times in one turn.
    LoopDetected,
    /// Three proposals of one turn rewrote the same passage with small differences:
    /// the person is asked how to go on.
    ChurnDetected,
    ContextTooLong,
    /// The fixed part of every request (system prompt and tool definitions) with the
    /// reply's reserve does not fit the model's window: no compaction was tried.
    FixedContextTooLong,
    /// The pins take more than their share of the model's window: nothing was sent;
    /// the person unpins something (or chooses a larger window).
    PinsTooLong,
    /// The model call failed (provider error after retries).
    ModelError,
    /// The process stopped in the middle of the turn.
    Restarted,
    /// A bug or a storage failure.
    EngineFault,
}

/// Who changed the session's intent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum IntentSource {
    /// Read from the person's message.
    Message,
    /// Edited by the person in the panel.
    Person,
}

/// An estimate of one context layer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct LayerEstimate {
    pub layer: String,
    pub tokens: u64,
    /// True when the layer was shortened to fit.
    pub trimmed: bool,
}

/// One hunk of a proposal an approval covers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalHunk {
    pub id: String,
    /// The hash the approval is bound to.
    pub content_hash: String,
    /// The change with context and word-level emphasis; absent when the diffs of the
    /// selection are too large for one log line (then the review panel shows them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub display: Option<Hunk>,
}

/// What approving a call that applies a proposal would change: shown with the
/// approval request, so the person approves the exact change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalChange {
    pub proposal_id: String,
    pub kind: ProposalKind,
    pub summary: String,
    pub target: Target,
    /// The selected hunks, in the proposal's order.
    pub hunks: Vec<ApprovalHunk>,
    /// Selected hunks left out of `hunks` because the list would not fit the log line.
    /// Only logs written before every hunk had to be listed carry a non-zero count
    /// (kept so they replay): a change whose hunks cannot all be listed is no longer
    /// put to the person in a prompt (the call is answered with a tool error that
    /// sends them to the review panel).
    #[serde(default)]
    pub omitted_hunks: u32,
    /// `sha256:` of everything the approval applies: the proposal id with the sorted
    /// content hashes of every selected hunk (or, without hunks, its payload's hash),
    /// the material of the call's bound input hash. Deciding checks it against the
    /// proposal as it is then: a different hash refuses the approval as stale.
    /// Absent in logs written before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub hunk_set_hash: Option<String>,
    /// How many hunks the approval applies (all listed in `hunks`). Absent before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub total_hunks: Option<u32>,
    /// The size of the change: UTF-8 bytes of the selected hunks' old and new lines.
    /// Absent before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub total_bytes: Option<u64>,
    /// For a proposal without hunks: what would be made (the reply, the chosen
    /// candidates, the settings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub detail: Option<String>,
    /// The version number accepting would save, when accepting saves a version (a
    /// source change or a new title), as of the request (a version the person saves
    /// meanwhile moves it up by one); absent for a draft, a comment reply, settings
    /// that leave the title, or an artifact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub creates_version: Option<u32>,
}

/// What happened. `kind` and `payload` in the envelope.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", content = "payload", rename_all = "snake_case")]
pub enum EventBody {
    #[serde(rename_all = "camelCase")]
    SessionCreated {
        project_id: String,
        profile: String,
        mode: Mode,
    },
    /// A user message, delivered to the model.
    #[serde(rename_all = "camelCase")]
    UserMessage {
        text: String,
        was_queued: bool,
        /// The part of the source the message is scoped to (the model's working set
        /// shows it while this is the latest message).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        selection: Option<Selection>,
    },
    /// A message submitted while a turn ran; delivered at the next turn boundary.
    #[serde(rename_all = "camelCase")]
    MessageQueued {
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        selection: Option<Selection>,
    },
    TurnStarted {},
    /// The context of the next model call, stored as an immutable snapshot.
    #[serde(rename_all = "camelCase")]
    ContextAssembled {
        snapshot_id: String,
        estimated_tokens: u64,
        layers: Vec<LayerEstimate>,
        /// The id of every prompt layer of the call, in order (see `crate::prompts`);
        /// empty in logs written before prompts were versioned.
        #[serde(default)]
        prompt_layers: Vec<String>,
    },
    /// A model call is about to be sent with these model-visible messages (their hash
    /// and count; the system context is the snapshot of the envelope).
    #[serde(rename_all = "camelCase")]
    ModelCallStarted {
        model_turn: u32,
        messages_hash: String,
        message_count: u32,
    },
    /// A piece of the answer, live only (the log keeps the completed message).
    AssistantDelta {
        text: String,
    },
    /// What streamed of the answer since the previous such event: a checkpoint written
    /// while the answer streams (at most every `STREAM_CHECKPOINT_MILLIS` or
    /// `STREAM_CHECKPOINT_CHARS`, grouped durability), so a process killed mid-answer
    /// still finds the half-streamed text on restart. Not model-visible and not shown:
    /// the assistant message that closes the call holds the text.
    AssistantStreamed {
        text: String,
    },
    /// A piece of the model's reasoning, live only.
    ReasoningDelta {
        text: String,
    },
    /// A completed (or interrupted) assistant message.
    #[serde(rename_all = "camelCase")]
    AssistantMessage {
        text: String,
        tool_calls: Vec<ToolCall>,
        finish_reason: String,
        interrupted: bool,
        input_tokens: u64,
        output_tokens: u64,
    },
    /// What the permission engine decided for a tool call (audit; the envelope's
    /// `tool_use_id` names the call).
    #[serde(rename_all = "camelCase")]
    ToolDecision {
        tool: String,
        decision: String,
        reason: String,
        /// The "always allow" rule that allowed it (its count was updated in the
        /// same write as this event).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        rule_id: Option<String>,
    },
    /// A tool result (or failure) as the model sees it: `content` is the exact text
    /// sent; a large result is stored in the result store under `resultRef`.
    #[serde(rename_all = "camelCase")]
    ToolResult {
        tool: String,
        status: ToolStatus,
        content: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        result_ref: Option<String>,
        /// True when an earlier execution's stored result was returned instead of
        /// running a write again.
        #[serde(default)]
        reused_execution: bool,
    },
    #[serde(rename_all = "camelCase")]
    ApprovalRequested {
        request_id: String,
        tool: String,
        /// The normalized input (a preview when large).
        #[ts(type = "unknown")]
        input: serde_json::Value,
        input_hash: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        target_version: Option<u64>,
        idempotency_key: String,
        /// Why it asks, in English (for the model's log and the CLI).
        reason: String,
        /// Why it asks, for the UI to word: `rule`, `policy` or `write`
        /// (`harness::permission::decide`); absent in logs written before.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        reason_id: Option<String>,
        /// For a call that applies a proposal: exactly what would change (the
        /// proposal, its target and the selected hunks' diffs), which the approval is
        /// bound to.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        change: Option<Box<ApprovalChange>>,
        /// What "always allow" would store (tool and argument pattern), when the tool
        /// offers it; absent for the tools that always ask and in older logs.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        offer: Option<AllowOffer>,
    },
    #[serde(rename_all = "camelCase")]
    ApprovalResolved {
        request_id: String,
        approved: bool,
        /// The "always allow" rule the person made with this answer.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        rule_id: Option<String>,
        decided_by: String,
        /// The person's note, or (with `noteId`) the engine's English reason.
        note: String,
        /// Set when the engine resolved it, naming why for the UI to word:
        /// `superseded_by_new_message` (the person sent a new message instead).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        note_id: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    QuestionAsked {
        question_id: String,
        question: String,
        options: Vec<String>,
    },
    #[serde(rename_all = "camelCase")]
    QuestionAnswered {
        question_id: String,
        answer: String,
    },
    #[serde(rename_all = "camelCase")]
    ModeChanged {
        mode: Mode,
        by: String,
    },
    #[serde(rename_all = "camelCase")]
    TurnEnded {
        reason: TurnEndReason,
        message: String,
        hints: Vec<Hint>,
    },
    SessionArchived {},
    /// The person brought the archived session back (`session.archive` with
    /// `archived: false`): it can be continued again.
    SessionUnarchived {},
    /// The person restored a checkpoint of this session: the project's content is the
    /// checkpoint's again, as the new version `version`. `to_sequence` is the log
    /// sequence the checkpoint was made at. The model is told (a note in the
    /// conversation), so it does not build on text that is gone.
    #[serde(rename_all = "camelCase")]
    Rewound {
        checkpoint_id: String,
        to_sequence: u64,
        version: u32,
    },
    /// The estimated context of the next model call passed the warning share of the
    /// profile's context window (70%); once per stretch between compactions.
    #[serde(rename_all = "camelCase")]
    ContextWarning {
        estimated_tokens: u64,
        context_window: u64,
        /// `estimated_tokens` as a share of the window, in percent.
        percent: u32,
        /// The share at which the session compacts by itself; absent when manual only.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        compact_at_percent: Option<u32>,
    },
    /// A compaction began (its model call, or a deterministic truncation, follows).
    #[serde(rename_all = "camelCase")]
    CompactionStarted {
        trigger: CompactionTrigger,
        estimated_tokens: u64,
        context_window: u64,
    },
    /// A compaction attempt failed; `consecutive` failures in a row so far (the third
    /// falls back to truncation).
    #[serde(rename_all = "camelCase")]
    CompactionFailed {
        trigger: CompactionTrigger,
        consecutive: u32,
        message: String,
        /// What the summarising calls of this attempt used (they count against the
        /// session's budget like any other call).
        #[serde(default)]
        input_tokens: u64,
        #[serde(default)]
        output_tokens: u64,
    },
    /// Earlier conversation was compacted: the model-visible messages before the last
    /// `kept_messages` are replaced by `summary_text` (the session summary layer of the
    /// system message), and the person's explicit instructions among them are pinned,
    /// verbatim, without passing through the summarising model.
    #[serde(rename_all = "camelCase")]
    CompactBoundary {
        trigger: CompactionTrigger,
        mode: CompactionMode,
        /// The validated summary (absent for a truncation).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        summary: Option<Box<CompactionSummary>>,
        /// The text of the session summary layer from now on.
        summary_text: String,
        /// The latest model-visible messages kept raw.
        kept_messages: u32,
        /// The messages replaced by the summary.
        compacted_messages: u32,
        /// The person's instructions found in the compacted messages, pinned verbatim.
        pinned_instructions: Vec<String>,
        tokens_before: u64,
        tokens_after: u64,
        /// What the panel says ("Earlier conversation summarised", or the truncation
        /// note).
        note: String,
        /// What the summarising calls used (zero for a truncation without any); they
        /// count against the session's budget like any other call.
        #[serde(default)]
        input_tokens: u64,
        #[serde(default)]
        output_tokens: u64,
        /// What the model had read so far (see `harness::provenance`): the summary
        /// keeps these references, so a proposal after the boundary still names them.
        /// Absent in logs written before provenance was kept (the fold then keeps what
        /// it had).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        sources: Option<Vec<super::ProvenanceSource>>,
    },
    /// The person pinned a text: in the pinned context of every later call, verbatim.
    #[serde(rename_all = "camelCase")]
    PinAdded {
        pin_id: String,
        text: String,
        source: PinSource,
    },
    #[serde(rename_all = "camelCase")]
    PinRemoved {
        pin_id: String,
    },
    /// The session's intent changed: read from the person's message by rules
    /// (`crate::intent::update`), or edited by the person. It is model-visible through
    /// the pinned layer of the next call's context (the snapshot), not as a message.
    #[serde(rename_all = "camelCase")]
    IntentUpdated {
        intent: super::SessionIntent,
        by: IntentSource,
    },
    /// An optimization run began (the first event of a run's log).
    #[serde(rename_all = "camelCase")]
    RunStarted {
        project_id: String,
        profile: String,
    },
    /// A stage of an optimization run began or ended (`snapshot`, `strategy`,
    /// `source`, `platform:x`, `checks`, `proposals`); `state` is `started`, `done`,
    /// `repair` or `flagged`.
    #[serde(rename_all = "camelCase")]
    RunStage {
        stage: String,
        state: String,
        message: String,
    },
    /// The run ended: `ready`, `failed` or `cancelled`.
    #[serde(rename_all = "camelCase")]
    RunEnded {
        status: String,
        message: String,
    },
    /// The session's compaction threshold changed (`None`: the profile's setting).
    #[serde(rename_all = "camelCase")]
    CompactionSettingChanged {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        threshold: Option<CompactThreshold>,
    },
}

/// One event of a session's (or run's) log. Live-only events carry sequence 0.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    pub event_id: String,
    pub sequence: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub run_id: Option<String>,
    /// The project the owner works on. Set on every event appended since the envelope
    /// carried it; absent in older logs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    #[ts(as = "Option<String>")]
    pub project_id: Option<std::sync::Arc<str>>,
    /// The workspace of the project. Set on every event appended since the envelope
    /// carried it; absent in older logs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    #[ts(as = "Option<String>")]
    pub workspace_id: Option<std::sync::Arc<str>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub turn_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub parent_event_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tool_use_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub context_snapshot_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub proposal_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub artifact_id: Option<String>,
    pub created_at: Timestamp,
    pub model_visible: bool,
    #[serde(flatten)]
    #[ts(flatten)]
    pub body: EventBody,
}

/// One line of a log as text, an event at a time (`session.get` with `timeline`, the
/// CLI's `session show`, an optimization run's log): a map of each event, not a fold;
/// the drafting panel draws [`super::TimelineItem`]s.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct LogLine {
    pub sequence: u64,
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub turn_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tool_use_id: Option<String>,
    /// A short text for the timeline: the person's or the model's words, or (with
    /// `textId`) the engine's English wording of what happened.
    pub text: String,
    /// What happened, for a client to word in the person's language (`session_started`,
    /// `tool_result`, `archived`, …, with `params`); absent when `text` is the person's
    /// or the model's own words (a message, a question, an answer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub text_id: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[ts(as = "Option<BTreeMap<String, String>>", optional)]
    pub params: BTreeMap<String, String>,
}

/// An approval waiting for the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PendingApproval {
    pub request_id: String,
    pub tool_use_id: String,
    pub tool: String,
    pub input_hash: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub target_version: Option<u64>,
    pub idempotency_key: String,
    pub reason: String,
    /// Why it asks, for the UI to word (see `EventBody::ApprovalRequested`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub reason_id: Option<String>,
    /// For a call that applies a proposal: exactly what would change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub change: Option<Box<ApprovalChange>>,
    /// What "always allow" would store, when the tool offers it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub offer: Option<AllowOffer>,
}

/// A question waiting for the user's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PendingQuestion {
    pub question_id: String,
    pub tool_use_id: String,
    pub question: String,
    pub options: Vec<String>,
}

impl EventBody {
    /// The `kind` tag this event goes out with (`user_message`, `tool_result`, ...).
    pub fn kind_name(&self) -> &'static str {
        match self {
            EventBody::SessionCreated { .. } => "session_created",
            EventBody::UserMessage { .. } => "user_message",
            EventBody::MessageQueued { .. } => "message_queued",
            EventBody::TurnStarted {} => "turn_started",
            EventBody::ContextAssembled { .. } => "context_assembled",
            EventBody::ModelCallStarted { .. } => "model_call_started",
            EventBody::AssistantDelta { .. } => "assistant_delta",
            EventBody::AssistantStreamed { .. } => "assistant_streamed",
            EventBody::ReasoningDelta { .. } => "reasoning_delta",
            EventBody::AssistantMessage { .. } => "assistant_message",
            EventBody::ToolDecision { .. } => "tool_decision",
            EventBody::ToolResult { .. } => "tool_result",
            EventBody::ApprovalRequested { .. } => "approval_requested",
            EventBody::ApprovalResolved { .. } => "approval_resolved",
            EventBody::QuestionAsked { .. } => "question_asked",
            EventBody::QuestionAnswered { .. } => "question_answered",
            EventBody::ModeChanged { .. } => "mode_changed",
            EventBody::TurnEnded { .. } => "turn_ended",
            EventBody::SessionArchived {} => "session_archived",
            EventBody::SessionUnarchived {} => "session_unarchived",
            EventBody::Rewound { .. } => "rewound",
            EventBody::ContextWarning { .. } => "context_warning",
            EventBody::CompactionStarted { .. } => "compaction_started",
            EventBody::CompactionFailed { .. } => "compaction_failed",
            EventBody::CompactBoundary { .. } => "compact_boundary",
            EventBody::PinAdded { .. } => "pin_added",
            EventBody::PinRemoved { .. } => "pin_removed",
            EventBody::CompactionSettingChanged { .. } => "compaction_setting_changed",
            EventBody::IntentUpdated { .. } => "intent_updated",
            EventBody::RunStarted { .. } => "run_started",
            EventBody::RunStage { .. } => "run_stage",
            EventBody::RunEnded { .. } => "run_ended",
        }
    }
}

impl Event {
    /// The `kind` tag of its body.
    pub fn kind_name(&self) -> &'static str {
        self.body.kind_name()
    }
}

impl From<&crate::harness::event::ToolStatus> for ToolStatus {
    fn from(record: &crate::harness::event::ToolStatus) -> Self {
        match record {
            crate::harness::event::ToolStatus::Success => Self::Success,
            crate::harness::event::ToolStatus::UnknownTool => Self::UnknownTool,
            crate::harness::event::ToolStatus::SchemaViolation => Self::SchemaViolation,
            crate::harness::event::ToolStatus::PermissionDenied => Self::PermissionDenied,
            crate::harness::event::ToolStatus::Timeout => Self::Timeout,
            crate::harness::event::ToolStatus::Interrupted => Self::Interrupted,
            crate::harness::event::ToolStatus::ToolError => Self::ToolError,
            crate::harness::event::ToolStatus::LoopDetected => Self::LoopDetected,
            crate::harness::event::ToolStatus::Cancelled => Self::Cancelled,
            crate::harness::event::ToolStatus::ToolForbidden => Self::ToolForbidden,
            crate::harness::event::ToolStatus::Blocked => Self::Blocked,
            crate::harness::event::ToolStatus::Denied => Self::Denied,
        }
    }
}

impl From<&crate::harness::event::TurnEndReason> for TurnEndReason {
    fn from(record: &crate::harness::event::TurnEndReason) -> Self {
        match record {
            crate::harness::event::TurnEndReason::Completed => Self::Completed,
            crate::harness::event::TurnEndReason::BlockedOnApproval => Self::BlockedOnApproval,
            crate::harness::event::TurnEndReason::BlockedOnQuestion => Self::BlockedOnQuestion,
            crate::harness::event::TurnEndReason::Interrupted => Self::Interrupted,
            crate::harness::event::TurnEndReason::MaxModelTurns => Self::MaxModelTurns,
            crate::harness::event::TurnEndReason::BudgetExceeded => Self::BudgetExceeded,
            crate::harness::event::TurnEndReason::CircuitBreaker => Self::CircuitBreaker,
            crate::harness::event::TurnEndReason::LoopDetected => Self::LoopDetected,
            crate::harness::event::TurnEndReason::ChurnDetected => Self::ChurnDetected,
            crate::harness::event::TurnEndReason::ContextTooLong => Self::ContextTooLong,
            crate::harness::event::TurnEndReason::FixedContextTooLong => Self::FixedContextTooLong,
            crate::harness::event::TurnEndReason::PinsTooLong => Self::PinsTooLong,
            crate::harness::event::TurnEndReason::ModelError => Self::ModelError,
            crate::harness::event::TurnEndReason::Restarted => Self::Restarted,
            crate::harness::event::TurnEndReason::EngineFault => Self::EngineFault,
        }
    }
}

impl From<&crate::harness::event::IntentSource> for IntentSource {
    fn from(record: &crate::harness::event::IntentSource) -> Self {
        match record {
            crate::harness::event::IntentSource::Message => Self::Message,
            crate::harness::event::IntentSource::Person => Self::Person,
        }
    }
}

impl From<&crate::harness::event::LayerEstimate> for LayerEstimate {
    fn from(record: &crate::harness::event::LayerEstimate) -> Self {
        LayerEstimate { layer: record.layer.clone(), tokens: record.tokens, trimmed: record.trimmed }
    }
}

impl From<&crate::harness::event::ApprovalHunk> for ApprovalHunk {
    fn from(record: &crate::harness::event::ApprovalHunk) -> Self {
        ApprovalHunk { id: record.id.clone(), content_hash: record.content_hash.clone(), display: record.display.as_ref().map(Into::into) }
    }
}

impl From<&crate::harness::event::ApprovalChange> for ApprovalChange {
    fn from(record: &crate::harness::event::ApprovalChange) -> Self {
        ApprovalChange {
            proposal_id: record.proposal_id.clone(),
            kind: record.kind.into(),
            summary: record.summary.clone(),
            target: (&record.target).into(),
            hunks: record.hunks.iter().map(Into::into).collect(),
            omitted_hunks: record.omitted_hunks,
            hunk_set_hash: record.hunk_set_hash.clone(),
            total_hunks: record.total_hunks,
            total_bytes: record.total_bytes,
            detail: record.detail.clone(),
            creates_version: record.creates_version,
        }
    }
}

impl From<&crate::harness::event::EventBody> for EventBody {
    fn from(record: &crate::harness::event::EventBody) -> Self {
        match record {
            crate::harness::event::EventBody::SessionCreated { project_id, profile, mode } => {
                Self::SessionCreated { project_id: project_id.clone(), profile: profile.clone(), mode: (*mode).into() }
            }
            crate::harness::event::EventBody::UserMessage { text, was_queued, selection } => {
                Self::UserMessage { text: text.clone(), was_queued: *was_queued, selection: selection.as_ref().map(Into::into) }
            }
            crate::harness::event::EventBody::MessageQueued { text, selection } => Self::MessageQueued { text: text.clone(), selection: selection.as_ref().map(Into::into) },
            crate::harness::event::EventBody::TurnStarted {} => Self::TurnStarted {},
            crate::harness::event::EventBody::ContextAssembled { snapshot_id, estimated_tokens, layers, prompt_layers } => Self::ContextAssembled {
                snapshot_id: snapshot_id.clone(),
                estimated_tokens: *estimated_tokens,
                layers: layers.iter().map(Into::into).collect(),
                prompt_layers: prompt_layers.clone(),
            },
            crate::harness::event::EventBody::ModelCallStarted { model_turn, messages_hash, message_count } => {
                Self::ModelCallStarted { model_turn: *model_turn, messages_hash: messages_hash.clone(), message_count: *message_count }
            }
            crate::harness::event::EventBody::AssistantDelta { text } => Self::AssistantDelta { text: text.clone() },
            crate::harness::event::EventBody::AssistantStreamed { text } => Self::AssistantStreamed { text: text.clone() },
            crate::harness::event::EventBody::ReasoningDelta { text } => Self::ReasoningDelta { text: text.clone() },
            crate::harness::event::EventBody::AssistantMessage { text, tool_calls, finish_reason, interrupted, input_tokens, output_tokens } => Self::AssistantMessage {
                text: text.clone(),
                tool_calls: tool_calls.iter().map(ToolCall::from).collect(),
                finish_reason: finish_reason.clone(),
                interrupted: *interrupted,
                input_tokens: *input_tokens,
                output_tokens: *output_tokens,
            },
            crate::harness::event::EventBody::ToolDecision { tool, decision, reason, rule_id } => {
                Self::ToolDecision { tool: tool.clone(), decision: decision.clone(), reason: reason.clone(), rule_id: rule_id.clone() }
            }
            crate::harness::event::EventBody::ToolResult { tool, status, content, result_ref, reused_execution } => {
                Self::ToolResult { tool: tool.clone(), status: status.into(), content: content.clone(), result_ref: result_ref.clone(), reused_execution: *reused_execution }
            }
            crate::harness::event::EventBody::ApprovalRequested { request_id, tool, input, input_hash, target_version, idempotency_key, reason, reason_id, change, offer } => {
                Self::ApprovalRequested {
                    request_id: request_id.clone(),
                    tool: tool.clone(),
                    input: input.clone(),
                    input_hash: input_hash.clone(),
                    target_version: *target_version,
                    idempotency_key: idempotency_key.clone(),
                    reason: reason.clone(),
                    reason_id: reason_id.clone(),
                    change: change.as_ref().map(|x| Box::new(x.as_ref().into())),
                    offer: offer.as_ref().map(Into::into),
                }
            }
            crate::harness::event::EventBody::ApprovalResolved { request_id, approved, rule_id, decided_by, note, note_id } => Self::ApprovalResolved {
                request_id: request_id.clone(),
                approved: *approved,
                rule_id: rule_id.clone(),
                decided_by: decided_by.clone(),
                note: note.clone(),
                note_id: note_id.clone(),
            },
            crate::harness::event::EventBody::QuestionAsked { question_id, question, options } => {
                Self::QuestionAsked { question_id: question_id.clone(), question: question.clone(), options: options.clone() }
            }
            crate::harness::event::EventBody::QuestionAnswered { question_id, answer } => Self::QuestionAnswered { question_id: question_id.clone(), answer: answer.clone() },
            crate::harness::event::EventBody::ModeChanged { mode, by } => Self::ModeChanged { mode: (*mode).into(), by: by.clone() },
            crate::harness::event::EventBody::TurnEnded { reason, message, hints } => {
                Self::TurnEnded { reason: reason.into(), message: message.clone(), hints: hints.iter().map(Into::into).collect() }
            }
            crate::harness::event::EventBody::SessionArchived {} => Self::SessionArchived {},
            crate::harness::event::EventBody::SessionUnarchived {} => Self::SessionUnarchived {},
            crate::harness::event::EventBody::Rewound { checkpoint_id, to_sequence, version } => {
                Self::Rewound { checkpoint_id: checkpoint_id.clone(), to_sequence: *to_sequence, version: *version }
            }
            crate::harness::event::EventBody::ContextWarning { estimated_tokens, context_window, percent, compact_at_percent } => {
                Self::ContextWarning { estimated_tokens: *estimated_tokens, context_window: *context_window, percent: *percent, compact_at_percent: *compact_at_percent }
            }
            crate::harness::event::EventBody::CompactionStarted { trigger, estimated_tokens, context_window } => {
                Self::CompactionStarted { trigger: trigger.into(), estimated_tokens: *estimated_tokens, context_window: *context_window }
            }
            crate::harness::event::EventBody::CompactionFailed { trigger, consecutive, message, input_tokens, output_tokens } => {
                Self::CompactionFailed { trigger: trigger.into(), consecutive: *consecutive, message: message.clone(), input_tokens: *input_tokens, output_tokens: *output_tokens }
            }
            crate::harness::event::EventBody::CompactBoundary {
                trigger,
                mode,
                summary,
                summary_text,
                kept_messages,
                compacted_messages,
                pinned_instructions,
                tokens_before,
                tokens_after,
                note,
                input_tokens,
                output_tokens,
                sources,
            } => Self::CompactBoundary {
                trigger: trigger.into(),
                mode: mode.into(),
                summary: summary.as_ref().map(|x| Box::new(x.as_ref().into())),
                summary_text: summary_text.clone(),
                kept_messages: *kept_messages,
                compacted_messages: *compacted_messages,
                pinned_instructions: pinned_instructions.clone(),
                tokens_before: *tokens_before,
                tokens_after: *tokens_after,
                note: note.clone(),
                input_tokens: *input_tokens,
                output_tokens: *output_tokens,
                sources: sources.as_ref().map(|sources| sources.iter().map(Into::into).collect()),
            },
            crate::harness::event::EventBody::PinAdded { pin_id, text, source } => Self::PinAdded { pin_id: pin_id.clone(), text: text.clone(), source: source.into() },
            crate::harness::event::EventBody::PinRemoved { pin_id } => Self::PinRemoved { pin_id: pin_id.clone() },
            crate::harness::event::EventBody::IntentUpdated { intent, by } => Self::IntentUpdated { intent: intent.into(), by: by.into() },
            crate::harness::event::EventBody::RunStarted { project_id, profile } => Self::RunStarted { project_id: project_id.clone(), profile: profile.clone() },
            crate::harness::event::EventBody::RunStage { stage, state, message } => Self::RunStage { stage: stage.clone(), state: state.clone(), message: message.clone() },
            crate::harness::event::EventBody::RunEnded { status, message } => Self::RunEnded { status: status.clone(), message: message.clone() },
            crate::harness::event::EventBody::CompactionSettingChanged { threshold } => Self::CompactionSettingChanged { threshold: threshold.as_ref().map(Into::into) },
        }
    }
}

impl From<&crate::harness::event::Event> for Event {
    fn from(record: &crate::harness::event::Event) -> Self {
        Event {
            event_id: record.event_id.clone(),
            sequence: record.sequence,
            session_id: record.session_id.clone(),
            run_id: record.run_id.clone(),
            project_id: record.project_id.clone(),
            workspace_id: record.workspace_id.clone(),
            turn_id: record.turn_id.clone(),
            parent_event_id: record.parent_event_id.clone(),
            tool_use_id: record.tool_use_id.clone(),
            context_snapshot_id: record.context_snapshot_id.clone(),
            proposal_id: record.proposal_id.clone(),
            artifact_id: record.artifact_id.clone(),
            created_at: record.created_at,
            model_visible: record.model_visible,
            body: (&record.body).into(),
        }
    }
}

impl From<&crate::harness::replay::LogLine> for LogLine {
    fn from(record: &crate::harness::replay::LogLine) -> Self {
        LogLine {
            sequence: record.sequence,
            kind: record.kind.clone(),
            turn_id: record.turn_id.clone(),
            tool_use_id: record.tool_use_id.clone(),
            text: record.text.clone(),
            text_id: record.text_id.clone(),
            params: record.params.clone(),
        }
    }
}

impl From<&crate::harness::replay::PendingApproval> for PendingApproval {
    fn from(record: &crate::harness::replay::PendingApproval) -> Self {
        PendingApproval {
            request_id: record.request_id.clone(),
            tool_use_id: record.tool_use_id.clone(),
            tool: record.tool.clone(),
            input_hash: record.input_hash.clone(),
            target_version: record.target_version,
            idempotency_key: record.idempotency_key.clone(),
            reason: record.reason.clone(),
            reason_id: record.reason_id.clone(),
            change: record.change.as_ref().map(|x| Box::new(x.as_ref().into())),
            offer: record.offer.as_ref().map(Into::into),
        }
    }
}

impl From<&crate::harness::replay::PendingQuestion> for PendingQuestion {
    fn from(record: &crate::harness::replay::PendingQuestion) -> Self {
        PendingQuestion { question_id: record.question_id.clone(), tool_use_id: record.tool_use_id.clone(), question: record.question.clone(), options: record.options.clone() }
    }
}
