//! The wire form of a session's timeline: its items, the state around them and the
//! patches a live reader gets (`StreamEvent::Timeline`); see [`super`].

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::Hint;
use super::{AllowOffer, ApprovalChange, CompactionMode, CompactionSummary, CompactionTrigger, LayerEstimate, Mode, Selection, ToolStatus, TurnEndReason};

/// A tool step's state as the timeline shows it. `Denied`: the person said no;
/// `Blocked`: plan mode or a permission rule did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum StepState {
    Queued,
    Running,
    Waiting,
    Done,
    Failed,
    Cancelled,
    Denied,
    Blocked,
}

/// Why a compaction attempt replaced nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum CompactionFailure {
    /// It failed (the third in a row truncates).
    Failed,
    /// The person stopped it.
    Stopped,
    /// The app stopped during it.
    Interrupted,
}

/// What a turn end's hints say about the API key (the `PROVIDER_AUTH` hints).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum KeyProblem {
    /// The provider refused the key.
    Rejected,
    /// The profile has none.
    Missing,
    /// A key was saved, and the keychain no longer has it.
    Gone,
}

/// A task as it was submitted (its text and typed selection), to send again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RetryTask {
    pub text: String,
    pub selection: Option<Selection>,
}

/// One line of the timeline. `key` is stable (the sequence of the event that made it,
/// with the tool call's id for a step); `changedAt` is the sequence of the last event
/// that changed it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum TimelineItem {
    /// `retry`: the task of the failed turn just above, sent again by Retry.
    User {
        key: String,
        changed_at: u64,
        text: String,
        selection: Option<Selection>,
        was_queued: bool,
        retry: bool,
    },
    /// `interrupted`: the answer did not finish; `cutOff`: because the model call failed
    /// (the connection was lost), not because the person stopped it.
    ///
    /// `streaming`: the answer is still arriving (`text` is what reached the log, or,
    /// for a reader of the live stream, what it appended).
    Assistant {
        key: String,
        changed_at: u64,
        text: String,
        streaming: bool,
        interrupted: bool,
        cut_off: bool,
    },
    Tool {
        key: String,
        changed_at: u64,
        tool_use_id: String,
        name: String,
        args: String,
        state: StepState,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        status: Option<ToolStatus>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        result: Option<String>,
        /// Proposals the step made (from the envelope or its result).
        proposal_ids: Vec<String>,
    },
    /// `noteId`: a note the core words (e.g. the approval was superseded by a new message).
    Decision {
        key: String,
        changed_at: u64,
        tool: String,
        approved: bool,
        note: String,
        note_id: Option<String>,
        plan: bool,
    },
    Answer {
        key: String,
        changed_at: u64,
        question: String,
        answer: String,
    },
    Mode {
        key: String,
        changed_at: u64,
        mode: Mode,
        by: String,
    },
    End {
        key: String,
        changed_at: u64,
        reason: TurnEndReason,
        message: String,
        hints: Vec<Hint>,
        /// The answer above broke off when the connection to the model was lost.
        cut_off: bool,
        /// The task of a turn the model failed: sent again as it was by Retry.
        retry: Option<RetryTask>,
        key_problem: Option<KeyProblem>,
    },
    Archived {
        key: String,
        changed_at: u64,
    },
    /// The person brought the archived session back.
    Unarchived {
        key: String,
        changed_at: u64,
    },
    /// The person restored a checkpoint: the project went back to it as version `version`.
    Rewound {
        key: String,
        changed_at: u64,
        version: u32,
    },
    /// Earlier conversation was summarised (or truncated).
    Boundary {
        key: String,
        changed_at: u64,
        mode: CompactionMode,
        note: String,
        summary_text: String,
        /// The validated summary, by part (absent for a truncation).
        summary: Option<CompactionSummary>,
        compacted: u32,
        tokens_before: u64,
        tokens_after: u64,
    },
    /// A compaction attempt replaced nothing.
    CompactionFailed {
        key: String,
        changed_at: u64,
        consecutive: u32,
        message: String,
        outcome: CompactionFailure,
    },
    /// The context passed the warning share of the window.
    ContextWarning {
        key: String,
        changed_at: u64,
        percent: u32,
        compact_at: Option<u32>,
    },
}

/// A tool call waiting for the person's approval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalPrompt {
    pub request_id: String,
    pub tool_use_id: String,
    pub tool: String,
    /// The normalized input the tool would run with.
    #[ts(type = "unknown")]
    pub input: serde_json::Value,
    /// Why it asks, in English (logs written before `reasonId`).
    pub reason: String,
    /// Why it asks: `rule`, `policy` or `write`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub reason_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub target_version: Option<u64>,
    /// For a call that applies a proposal: exactly what would change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub change: Option<Box<ApprovalChange>>,
    /// What "always allow" would store (tool and argument pattern), when the tool
    /// offers it; the person picks the scope (`permissionRule.preview` shows its width).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub offer: Option<AllowOffer>,
}

/// A question waiting for the person's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct QuestionPrompt {
    pub question_id: String,
    pub tool_use_id: String,
    pub question: String,
    pub options: Vec<String>,
}

/// The context estimate of the latest model call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ContextEstimate {
    pub estimated_tokens: u64,
    pub layers: Vec<LayerEstimate>,
}

/// A compaction under way (between `compaction_started` and its boundary or failure).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Compacting {
    pub trigger: CompactionTrigger,
    pub estimated_tokens: u64,
    pub context_window: u64,
}

/// What the panel shows around the items: the prompt waiting for the person, the mode,
/// the context estimate, the tokens, what is queued, the answer streaming now.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TimelineState {
    pub last_sequence: u64,
    pub mode: Mode,
    /// A turn started and has not ended.
    pub turn_open: bool,
    pub pending_approval: Option<ApprovalPrompt>,
    pub pending_question: Option<QuestionPrompt>,
    /// Messages sent while a turn ran, not delivered yet.
    pub queued: Vec<String>,
    pub context: Option<ContextEstimate>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub archived: bool,
    /// Every proposal id a step of this session made, oldest first.
    pub proposal_ids: Vec<String>,
    /// The last compaction truncated (summarising failed).
    pub truncated: bool,
    /// The sequence of the last event that changed the intent, pins or compaction
    /// (views that read them refetch).
    pub long_session_seq: u64,
    /// The last task the person sent, as submitted (what Retry sends again).
    pub last_task: Option<RetryTask>,
    pub compacting: Option<Compacting>,
    /// Failed summaries in a row (a stopped or interrupted one does not count).
    pub compaction_failures: u32,
    /// The key the answer of the model call in progress has (and its item keeps when
    /// the answer is logged): live text deltas append to it.
    pub streaming_key: Option<String>,
}

/// Text for the item `key`: a live delta of the answer streaming now (or of its
/// reasoning, which no item keeps).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TextAppend {
    pub key: String,
    pub text: String,
    pub reasoning: bool,
}

/// What one event changed, for a reader of the live stream (`StreamEvent::Timeline`):
/// the items to put (insert, or replace by key), the keys of items to drop, the text
/// to append to the streaming item, and the state after the event. A reader that puts,
/// drops and appends in order holds the fold of the log plus the text streaming now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TimelinePatch {
    /// The sequence of the logged event (0 for a live delta).
    pub sequence: u64,
    pub items: Vec<TimelineItem>,
    /// Items the reader made from deltas that the logged answer does not keep (an answer
    /// that turned out to be only tool calls).
    pub removed: Vec<String>,
    pub append: Option<TextAppend>,
    /// The state after a logged event (none for a delta).
    pub state: Option<TimelineState>,
}

impl From<&crate::harness::timeline::StepState> for StepState {
    fn from(record: &crate::harness::timeline::StepState) -> Self {
        match record {
            crate::harness::timeline::StepState::Queued => Self::Queued,
            crate::harness::timeline::StepState::Running => Self::Running,
            crate::harness::timeline::StepState::Waiting => Self::Waiting,
            crate::harness::timeline::StepState::Done => Self::Done,
            crate::harness::timeline::StepState::Failed => Self::Failed,
            crate::harness::timeline::StepState::Cancelled => Self::Cancelled,
            crate::harness::timeline::StepState::Denied => Self::Denied,
            crate::harness::timeline::StepState::Blocked => Self::Blocked,
        }
    }
}

impl From<&crate::harness::timeline::CompactionFailure> for CompactionFailure {
    fn from(record: &crate::harness::timeline::CompactionFailure) -> Self {
        match record {
            crate::harness::timeline::CompactionFailure::Failed => Self::Failed,
            crate::harness::timeline::CompactionFailure::Stopped => Self::Stopped,
            crate::harness::timeline::CompactionFailure::Interrupted => Self::Interrupted,
        }
    }
}

impl From<&crate::harness::timeline::KeyProblem> for KeyProblem {
    fn from(record: &crate::harness::timeline::KeyProblem) -> Self {
        match record {
            crate::harness::timeline::KeyProblem::Rejected => Self::Rejected,
            crate::harness::timeline::KeyProblem::Missing => Self::Missing,
            crate::harness::timeline::KeyProblem::Gone => Self::Gone,
        }
    }
}

impl From<&crate::harness::timeline::RetryTask> for RetryTask {
    fn from(record: &crate::harness::timeline::RetryTask) -> Self {
        RetryTask { text: record.text.clone(), selection: record.selection.as_ref().map(Into::into) }
    }
}

impl From<&crate::harness::timeline::TimelineItem> for TimelineItem {
    fn from(record: &crate::harness::timeline::TimelineItem) -> Self {
        match record {
            crate::harness::timeline::TimelineItem::User { key, changed_at, text, selection, was_queued, retry } => {
                Self::User { key: key.clone(), changed_at: *changed_at, text: text.clone(), selection: selection.as_ref().map(Into::into), was_queued: *was_queued, retry: *retry }
            }
            crate::harness::timeline::TimelineItem::Assistant { key, changed_at, text, streaming, interrupted, cut_off } => {
                Self::Assistant { key: key.clone(), changed_at: *changed_at, text: text.clone(), streaming: *streaming, interrupted: *interrupted, cut_off: *cut_off }
            }
            crate::harness::timeline::TimelineItem::Tool { key, changed_at, tool_use_id, name, args, state, status, result, proposal_ids } => Self::Tool {
                key: key.clone(),
                changed_at: *changed_at,
                tool_use_id: tool_use_id.clone(),
                name: name.clone(),
                args: args.clone(),
                state: state.into(),
                status: status.as_ref().map(Into::into),
                result: result.clone(),
                proposal_ids: proposal_ids.clone(),
            },
            crate::harness::timeline::TimelineItem::Decision { key, changed_at, tool, approved, note, note_id, plan } => {
                Self::Decision { key: key.clone(), changed_at: *changed_at, tool: tool.clone(), approved: *approved, note: note.clone(), note_id: note_id.clone(), plan: *plan }
            }
            crate::harness::timeline::TimelineItem::Answer { key, changed_at, question, answer } => {
                Self::Answer { key: key.clone(), changed_at: *changed_at, question: question.clone(), answer: answer.clone() }
            }
            crate::harness::timeline::TimelineItem::Mode { key, changed_at, mode, by } => {
                Self::Mode { key: key.clone(), changed_at: *changed_at, mode: (*mode).into(), by: by.clone() }
            }
            crate::harness::timeline::TimelineItem::End { key, changed_at, reason, message, hints, cut_off, retry, key_problem } => Self::End {
                key: key.clone(),
                changed_at: *changed_at,
                reason: reason.into(),
                message: message.clone(),
                hints: hints.iter().map(Into::into).collect(),
                cut_off: *cut_off,
                retry: retry.as_ref().map(Into::into),
                key_problem: key_problem.as_ref().map(Into::into),
            },
            crate::harness::timeline::TimelineItem::Archived { key, changed_at } => Self::Archived { key: key.clone(), changed_at: *changed_at },
            crate::harness::timeline::TimelineItem::Unarchived { key, changed_at } => Self::Unarchived { key: key.clone(), changed_at: *changed_at },
            crate::harness::timeline::TimelineItem::Rewound { key, changed_at, version } => Self::Rewound { key: key.clone(), changed_at: *changed_at, version: *version },
            crate::harness::timeline::TimelineItem::Boundary { key, changed_at, mode, note, summary_text, summary, compacted, tokens_before, tokens_after } => Self::Boundary {
                key: key.clone(),
                changed_at: *changed_at,
                mode: mode.into(),
                note: note.clone(),
                summary_text: summary_text.clone(),
                summary: summary.as_ref().map(Into::into),
                compacted: *compacted,
                tokens_before: *tokens_before,
                tokens_after: *tokens_after,
            },
            crate::harness::timeline::TimelineItem::CompactionFailed { key, changed_at, consecutive, message, outcome } => {
                Self::CompactionFailed { key: key.clone(), changed_at: *changed_at, consecutive: *consecutive, message: message.clone(), outcome: outcome.into() }
            }
            crate::harness::timeline::TimelineItem::ContextWarning { key, changed_at, percent, compact_at } => {
                Self::ContextWarning { key: key.clone(), changed_at: *changed_at, percent: *percent, compact_at: *compact_at }
            }
        }
    }
}

impl From<&crate::harness::timeline::ApprovalPrompt> for ApprovalPrompt {
    fn from(record: &crate::harness::timeline::ApprovalPrompt) -> Self {
        ApprovalPrompt {
            request_id: record.request_id.clone(),
            tool_use_id: record.tool_use_id.clone(),
            tool: record.tool.clone(),
            input: record.input.clone(),
            reason: record.reason.clone(),
            reason_id: record.reason_id.clone(),
            target_version: record.target_version,
            change: record.change.as_ref().map(|x| Box::new(x.as_ref().into())),
            offer: record.offer.as_ref().map(Into::into),
        }
    }
}

impl From<&crate::harness::timeline::QuestionPrompt> for QuestionPrompt {
    fn from(record: &crate::harness::timeline::QuestionPrompt) -> Self {
        QuestionPrompt { question_id: record.question_id.clone(), tool_use_id: record.tool_use_id.clone(), question: record.question.clone(), options: record.options.clone() }
    }
}

impl From<&crate::harness::timeline::ContextEstimate> for ContextEstimate {
    fn from(record: &crate::harness::timeline::ContextEstimate) -> Self {
        ContextEstimate { estimated_tokens: record.estimated_tokens, layers: record.layers.iter().map(Into::into).collect() }
    }
}

impl From<&crate::harness::timeline::Compacting> for Compacting {
    fn from(record: &crate::harness::timeline::Compacting) -> Self {
        Compacting { trigger: (&record.trigger).into(), estimated_tokens: record.estimated_tokens, context_window: record.context_window }
    }
}

impl From<&crate::harness::timeline::TimelineState> for TimelineState {
    fn from(record: &crate::harness::timeline::TimelineState) -> Self {
        TimelineState {
            last_sequence: record.last_sequence,
            mode: record.mode.into(),
            turn_open: record.turn_open,
            pending_approval: record.pending_approval.as_ref().map(Into::into),
            pending_question: record.pending_question.as_ref().map(Into::into),
            queued: record.queued.clone(),
            context: record.context.as_ref().map(Into::into),
            input_tokens: record.input_tokens,
            output_tokens: record.output_tokens,
            archived: record.archived,
            proposal_ids: record.proposal_ids.clone(),
            truncated: record.truncated,
            long_session_seq: record.long_session_seq,
            last_task: record.last_task.as_ref().map(Into::into),
            compacting: record.compacting.as_ref().map(Into::into),
            compaction_failures: record.compaction_failures,
            streaming_key: record.streaming_key.clone(),
        }
    }
}

impl From<&crate::harness::timeline::TextAppend> for TextAppend {
    fn from(record: &crate::harness::timeline::TextAppend) -> Self {
        TextAppend { key: record.key.clone(), text: record.text.clone(), reasoning: record.reasoning }
    }
}

impl From<&crate::harness::timeline::TimelinePatch> for TimelinePatch {
    fn from(record: &crate::harness::timeline::TimelinePatch) -> Self {
        TimelinePatch {
            sequence: record.sequence,
            items: record.items.iter().map(Into::into).collect(),
            removed: record.removed.clone(),
            append: record.append.as_ref().map(Into::into),
            state: record.state.as_ref().map(Into::into),
        }
    }
}
