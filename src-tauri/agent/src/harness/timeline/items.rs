//! What the timeline holds: its items by kind, the prompts waiting for the person and
//! the state around the items.

use serde::{Deserialize, Serialize};

use super::super::event::{ApprovalChange, CompactionMode, CompactionSummary, CompactionTrigger, LayerEstimate, Mode, Selection, ToolStatus, TurnEndReason};
use crate::error::Hint;

/// A tool step's state as the timeline shows it. `Denied`: the person said no;
/// `Blocked`: plan mode or a permission rule did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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

/// A refusal is not a failure: the person's is `Denied`, plan mode's or a rule's is
/// `Blocked`. Every other status (a schema error, a timeout, a tool error, ...) failed.
pub fn step_state(status: ToolStatus) -> StepState {
    match status {
        ToolStatus::Success => StepState::Done,
        ToolStatus::Interrupted | ToolStatus::Cancelled => StepState::Cancelled,
        ToolStatus::Denied => StepState::Denied,
        ToolStatus::Blocked | ToolStatus::PermissionDenied | ToolStatus::ToolForbidden => StepState::Blocked,
        ToolStatus::UnknownTool | ToolStatus::SchemaViolation | ToolStatus::Timeout | ToolStatus::ToolError | ToolStatus::LoopDetected => StepState::Failed,
    }
}

/// Why a compaction attempt replaced nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RetryTask {
    pub text: String,
    pub selection: Option<Selection>,
}

/// One line of the timeline. `key` is stable (the sequence of the event that made it,
/// with the tool call's id for a step); `changedAt` is the sequence of the last event
/// that changed it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
        status: Option<ToolStatus>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
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

impl TimelineItem {
    /// The item's stable key.
    pub fn key(&self) -> &str {
        match self {
            TimelineItem::User { key, .. }
            | TimelineItem::Assistant { key, .. }
            | TimelineItem::Tool { key, .. }
            | TimelineItem::Decision { key, .. }
            | TimelineItem::Answer { key, .. }
            | TimelineItem::Mode { key, .. }
            | TimelineItem::End { key, .. }
            | TimelineItem::Archived { key, .. }
            | TimelineItem::Unarchived { key, .. }
            | TimelineItem::Rewound { key, .. }
            | TimelineItem::Boundary { key, .. }
            | TimelineItem::CompactionFailed { key, .. }
            | TimelineItem::ContextWarning { key, .. } => key,
        }
    }

    /// The sequence of the last event that changed the item.
    pub fn changed_at(&self) -> u64 {
        match self {
            TimelineItem::User { changed_at, .. }
            | TimelineItem::Assistant { changed_at, .. }
            | TimelineItem::Tool { changed_at, .. }
            | TimelineItem::Decision { changed_at, .. }
            | TimelineItem::Answer { changed_at, .. }
            | TimelineItem::Mode { changed_at, .. }
            | TimelineItem::End { changed_at, .. }
            | TimelineItem::Archived { changed_at, .. }
            | TimelineItem::Unarchived { changed_at, .. }
            | TimelineItem::Rewound { changed_at, .. }
            | TimelineItem::Boundary { changed_at, .. }
            | TimelineItem::CompactionFailed { changed_at, .. }
            | TimelineItem::ContextWarning { changed_at, .. } => *changed_at,
        }
    }
}

/// A tool call waiting for the person's approval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalPrompt {
    pub request_id: String,
    pub tool_use_id: String,
    pub tool: String,
    /// The normalized input the tool would run with.
    pub input: serde_json::Value,
    /// Why it asks, in English (logs written before `reasonId`).
    pub reason: String,
    /// Why it asks: `rule`, `policy` or `write`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_version: Option<u64>,
    /// For a call that applies a proposal: exactly what would change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change: Option<Box<ApprovalChange>>,
    /// What "always allow" would store (tool and argument pattern), when the tool
    /// offers it; the person picks the scope (`permissionRule.preview` shows its width).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offer: Option<super::super::allow_rule::AllowOffer>,
}

/// A question waiting for the person's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QuestionPrompt {
    pub question_id: String,
    pub tool_use_id: String,
    pub question: String,
    pub options: Vec<String>,
}

/// The context estimate of the latest model call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextEstimate {
    pub estimated_tokens: u64,
    pub layers: Vec<LayerEstimate>,
}

/// A compaction under way (between `compaction_started` and its boundary or failure).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Compacting {
    pub trigger: CompactionTrigger,
    pub estimated_tokens: u64,
    pub context_window: u64,
}

/// The fold of a session's log up to `lastSequence`: its items, and the state around them.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Timeline {
    pub items: Vec<TimelineItem>,
    #[serde(flatten)]
    pub state: TimelineState,
    /// How far the items are known to hold no queued or running step (see [`Settled`]).
    #[serde(skip)]
    pub(crate) settled: Settled,
}

/// An index before which no item is a queued or running step: a turn's end settles
/// only the steps after it, so a long session's fold does not walk every earlier item
/// at every turn's end. Lowered whenever a step is changed, raised when a turn's end
/// has settled them all. Derived data, as the digest of the model-visible messages:
/// two timelines with the same items are equal whatever it holds.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Settled(pub(crate) usize);

impl PartialEq for Settled {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// What the panel shows around the items: the prompt waiting for the person, the mode,
/// the context estimate, the tokens, what is queued, the answer streaming now.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
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

impl Timeline {
    /// Items changed by an event after `sequence`, in timeline order.
    pub fn changed_since(&self, sequence: u64) -> impl Iterator<Item = &TimelineItem> {
        self.items.iter().filter(move |item| item.changed_at() > sequence)
    }
}
