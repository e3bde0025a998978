//! The event envelope and the event kinds. Whether a kind is kept in the log and
//! whether the model sees it is decided by one exhaustive match ([`EventBody::policy`]),
//! so a new kind cannot be added without deciding both.

mod approval;
mod outcome;

use serde::{Deserialize, Serialize};

pub use super::compaction::{CompactThreshold, CompactionMode, CompactionSummary, CompactionTrigger, PinSource};
pub use crate::context::{Mode, Selection};
use crate::error::Hint;
use crate::llm::ToolCall;
use crate::model::Timestamp;
pub use approval::{ApprovalChange, ApprovalHunk};
pub use outcome::{ToolStatus, TurnEndReason};

/// Who changed the session's intent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IntentSource {
    /// Read from the person's message.
    Message,
    /// Edited by the person in the panel.
    Person,
}

/// An estimate of one context layer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LayerEstimate {
    pub layer: String,
    pub tokens: u64,
    /// True when the layer was shortened to fit.
    pub trimmed: bool,
}

/// What happened. `kind` and `payload` in the envelope.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
        selection: Option<Selection>,
    },
    /// A message submitted while a turn ran; delivered at the next turn boundary.
    #[serde(rename_all = "camelCase")]
    MessageQueued {
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
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
        input: serde_json::Value,
        input_hash: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        target_version: Option<u64>,
        idempotency_key: String,
        /// Why it asks, in English (for the model's log and the CLI).
        reason: String,
        /// Why it asks, for the UI to word: `rule`, `policy` or `write`
        /// (`harness::permission::decide`); absent in logs written before.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason_id: Option<String>,
        /// For a call that applies a proposal: exactly what would change (the
        /// proposal, its target and the selected hunks' diffs), which the approval is
        /// bound to.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        change: Option<Box<ApprovalChange>>,
        /// What "always allow" would store (tool and argument pattern), when the tool
        /// offers it; absent for the tools that always ask and in older logs.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        offer: Option<super::allow_rule::AllowOffer>,
    },
    #[serde(rename_all = "camelCase")]
    ApprovalResolved {
        request_id: String,
        approved: bool,
        /// The "always allow" rule the person made with this answer.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rule_id: Option<String>,
        decided_by: String,
        /// The person's note, or (with `noteId`) the engine's English reason.
        note: String,
        /// Set when the engine resolved it, naming why for the UI to word:
        /// `superseded_by_new_message` (the person sent a new message instead).
        #[serde(default, skip_serializing_if = "Option::is_none")]
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
        sources: Option<Vec<crate::model::ProvenanceSource>>,
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
        intent: crate::intent::SessionIntent,
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
        threshold: Option<CompactThreshold>,
    },
}

/// Whether a kind is kept in the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Persist {
    Logged,
    LiveOnly,
}

impl EventBody {
    /// Persisted? Model-visible? One exhaustive match.
    pub fn policy(&self) -> (Persist, bool) {
        use Persist::*;
        match self {
            EventBody::SessionCreated { .. } => (Logged, false),
            EventBody::UserMessage { .. } => (Logged, true),
            EventBody::MessageQueued { .. } => (Logged, false),
            EventBody::TurnStarted {} => (Logged, false),
            EventBody::ContextAssembled { .. } => (Logged, false),
            EventBody::ModelCallStarted { .. } => (Logged, false),
            EventBody::AssistantDelta { .. } => (LiveOnly, false),
            // Logged so a restart keeps a half-streamed reply; the completed (or
            // interrupted) assistant message is what the model sees.
            EventBody::AssistantStreamed { .. } => (Logged, false),
            EventBody::ReasoningDelta { .. } => (LiveOnly, false),
            EventBody::AssistantMessage { .. } => (Logged, true),
            EventBody::ToolDecision { .. } => (Logged, false),
            EventBody::ToolResult { .. } => (Logged, true),
            EventBody::ApprovalRequested { .. } => (Logged, false),
            EventBody::ApprovalResolved { .. } => (Logged, false),
            EventBody::QuestionAsked { .. } => (Logged, false),
            EventBody::QuestionAnswered { .. } => (Logged, false),
            EventBody::ModeChanged { .. } => (Logged, false),
            EventBody::TurnEnded { .. } => (Logged, false),
            EventBody::SessionArchived {} => (Logged, false),
            EventBody::SessionUnarchived {} => (Logged, false),
            EventBody::Rewound { .. } => (Logged, true),
            EventBody::ContextWarning { .. } => (Logged, false),
            EventBody::CompactionStarted { .. } => (Logged, false),
            EventBody::CompactionFailed { .. } => (Logged, false),
            // It replaces model-visible messages with the summary.
            EventBody::CompactBoundary { .. } => (Logged, true),
            // Pins are in the system message's pinned layer, not in the messages.
            EventBody::PinAdded { .. } => (Logged, false),
            EventBody::PinRemoved { .. } => (Logged, false),
            EventBody::CompactionSettingChanged { .. } => (Logged, false),
            // In the pinned layer of the system message (the snapshot), not a message.
            EventBody::IntentUpdated { .. } => (Logged, false),
            EventBody::RunStarted { .. } => (Logged, false),
            EventBody::RunStage { .. } => (Logged, false),
            EventBody::RunEnded { .. } => (Logged, false),
        }
    }

    /// The stable kind name (`user_message`, `tool_result`, ...).
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

/// One event of a session's (or run's) log. Live-only events carry sequence 0.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    pub event_id: String,
    pub sequence: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// The project the owner works on. Set on every event appended since the envelope
    /// carried it; absent in older logs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_id: Option<std::sync::Arc<str>>,
    /// The workspace of the project. Set on every event appended since the envelope
    /// carried it; absent in older logs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_id: Option<std::sync::Arc<str>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_event_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_snapshot_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposal_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact_id: Option<String>,
    pub created_at: Timestamp,
    pub model_visible: bool,
    #[serde(flatten)]
    pub body: EventBody,
}

impl Event {
    pub fn kind_name(&self) -> &'static str {
        self.body.kind_name()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn events_of_older_logs_without_project_or_workspace_still_read() {
        let old = r#"{"eventId":"evt_1","sequence":1,"sessionId":"ses_1","createdAt":"2026-01-01T00:00:00Z","modelVisible":true,"kind":"user_message","payload":{"text":"hi","wasQueued":false}}"#;
        let event: Event = serde_json::from_str(old).unwrap();
        assert_eq!((event.project_id.as_deref(), event.workspace_id.as_deref()), (None, None));
        let mut new = event.clone();
        new.project_id = Some("prj_1".into());
        new.workspace_id = Some("wsp_1".into());
        let json = serde_json::to_value(&new).unwrap();
        assert_eq!((json["projectId"].as_str(), json["workspaceId"].as_str()), (Some("prj_1"), Some("wsp_1")));
        assert_eq!(serde_json::from_value::<Event>(json).unwrap(), new);
    }
}
