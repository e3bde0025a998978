//! Every event kind with its payload, the `kind` tag it goes out with, and its copy
//! from the harness's record (see [`super`]).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::{ApprovalChange, IntentSource, LayerEstimate, ToolStatus, TurnEndReason};
use crate::api::dto::Hint;
use crate::api::dto::ToolCall;
use crate::api::dto::{AllowOffer, CompactThreshold, CompactionMode, CompactionSummary, CompactionTrigger, Mode, PinSource, Selection, SessionIntent};

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
        sources: Option<Vec<crate::api::dto::ProvenanceSource>>,
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
        intent: SessionIntent,
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
