//! A session's timeline: the drafting panel's view of its event log. [`fold`] turns
//! logged events into what the panel shows — messages, tool steps with their states,
//! decisions, answers, mode changes, turn ends worth a line, compaction boundaries and
//! failures, context warnings — and the state around them (the prompt waiting for the
//! person, the mode, the context estimate, the tokens, what is queued). Pure, and the
//! only fold of the log for the screen: the UI draws these items (`session.timeline`)
//! instead of folding the log a second time, so a reload rebuilds the same screen.
//! Live-only events (sequence 0: the streamed pieces of an answer) are not folded: they
//! belong to the one streaming message.
//!
//! Every item records the sequence of the last event that changed it (`changedAt`), so a
//! reader that holds the fold up to sequence `n` asks for the items changed since `n`
//! and replaces them by key ([`Timeline::changed_since`]). Items are only ever added
//! or changed, never removed.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::event::{ApprovalChange, CompactionMode, CompactionSummary, CompactionTrigger, Event, EventBody, LayerEstimate, Mode, Selection, ToolStatus, TurnEndReason};
use super::model_call::CUT_OFF_BY_ERROR;
use crate::error::Hint;

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
pub enum TimelineEntry {
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
    Assistant {
        key: String,
        changed_at: u64,
        text: String,
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

impl TimelineEntry {
    /// The item's stable key.
    pub fn key(&self) -> &str {
        match self {
            TimelineEntry::User { key, .. }
            | TimelineEntry::Assistant { key, .. }
            | TimelineEntry::Tool { key, .. }
            | TimelineEntry::Decision { key, .. }
            | TimelineEntry::Answer { key, .. }
            | TimelineEntry::Mode { key, .. }
            | TimelineEntry::End { key, .. }
            | TimelineEntry::Archived { key, .. }
            | TimelineEntry::Unarchived { key, .. }
            | TimelineEntry::Rewound { key, .. }
            | TimelineEntry::Boundary { key, .. }
            | TimelineEntry::CompactionFailed { key, .. }
            | TimelineEntry::ContextWarning { key, .. } => key,
        }
    }

    /// The sequence of the last event that changed the item.
    pub fn changed_at(&self) -> u64 {
        match self {
            TimelineEntry::User { changed_at, .. }
            | TimelineEntry::Assistant { changed_at, .. }
            | TimelineEntry::Tool { changed_at, .. }
            | TimelineEntry::Decision { changed_at, .. }
            | TimelineEntry::Answer { changed_at, .. }
            | TimelineEntry::Mode { changed_at, .. }
            | TimelineEntry::End { changed_at, .. }
            | TimelineEntry::Archived { changed_at, .. }
            | TimelineEntry::Unarchived { changed_at, .. }
            | TimelineEntry::Rewound { changed_at, .. }
            | TimelineEntry::Boundary { changed_at, .. }
            | TimelineEntry::CompactionFailed { changed_at, .. }
            | TimelineEntry::ContextWarning { changed_at, .. } => *changed_at,
        }
    }
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
    pub offer: Option<super::allow_rule::AllowOffer>,
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

/// The fold of a session's log up to `lastSequence`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Timeline {
    pub last_sequence: u64,
    pub items: Vec<TimelineEntry>,
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
}

/// The start of the message of a compaction the person stopped (`compaction::STOPPED`).
const COMPACTION_STOPPED: &str = "Stopped by the user";

/// Splits a user message of an older session (before selections were typed) back into
/// the task and its selection: `task\n\n<selection from="F" to="T">\ntext\n</selection>`.
fn parse_task(message: &str) -> (String, Option<Selection>) {
    const OPEN: &str = "\n\n<selection from=\"";
    const CLOSE: &str = "\n</selection>";
    let Some(body_end) = message.strip_suffix(CLOSE).map(str::len) else { return (message.to_owned(), None) };
    for (at, _) in message.match_indices(OPEN) {
        let rest = &message[at + OPEN.len()..];
        let Some((from, rest)) = rest.split_once("\" to=\"") else { continue };
        let Some((to, rest)) = rest.split_once("\">\n") else { continue };
        let text_start = message.len() - rest.len();
        let digits = |n: &str| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit());
        if !digits(from) || !digits(to) || text_start > body_end {
            continue;
        }
        let (Ok(from), Ok(to)) = (from.parse::<u32>(), to.parse::<u32>()) else { continue };
        return (message[..at].to_owned(), Some(Selection { from, to, text: message[text_start..body_end].to_owned() }));
    }
    (message.to_owned(), None)
}

/// Proposal ids a tool result names: `proposalId`, `proposal.id`, `proposals[].id` (or
/// plain ids), `proposalIds`.
pub fn proposal_ids_in(content: &str) -> Vec<String> {
    let Ok(serde_json::Value::Object(value)) = serde_json::from_str::<serde_json::Value>(content) else { return Vec::new() };
    let mut out: Vec<String> = Vec::new();
    let mut add = |id: Option<&serde_json::Value>| {
        if let Some(id) = id.and_then(serde_json::Value::as_str) {
            if id.starts_with("prp_") && !out.iter().any(|x| x == id) {
                out.push(id.to_owned());
            }
        }
    };
    add(value.get("proposalId"));
    add(value.get("proposal").and_then(|p| p.get("id")));
    if let Some(list) = value.get("proposals").and_then(serde_json::Value::as_array) {
        for p in list {
            add(if p.is_object() { p.get("id") } else { Some(p) });
        }
    }
    if let Some(list) = value.get("proposalIds").and_then(serde_json::Value::as_array) {
        for id in list {
            add(Some(id));
        }
    }
    out
}

fn key_problem_of(hints: &[Hint]) -> Option<KeyProblem> {
    let has = |id: &str| hints.iter().any(|h| h.id == id);
    if has("check_api_key") {
        Some(KeyProblem::Rejected)
    } else if has("set_api_key") {
        Some(KeyProblem::Missing)
    } else if has("set_api_key_again") {
        Some(KeyProblem::Gone)
    } else {
        None
    }
}

impl Timeline {
    /// The latest step of tool call `tool_use_id`, to change.
    fn step_mut(&mut self, tool_use_id: Option<&str>) -> Option<&mut TimelineEntry> {
        let id = tool_use_id?;
        self.items.iter_mut().rev().find(|item| matches!(item, TimelineEntry::Tool { tool_use_id, .. } if tool_use_id == id))
    }

    /// Sets the state of tool call `tool_use_id`'s step, through `change` (given the old state).
    fn set_step(&mut self, tool_use_id: Option<&str>, sequence: u64, change: impl FnOnce(StepState) -> StepState) {
        if let Some(TimelineEntry::Tool { state, changed_at, .. }) = self.step_mut(tool_use_id) {
            let next = change(*state);
            if next != *state {
                *state = next;
                *changed_at = sequence;
            }
        }
    }

    /// Items changed by an event after `sequence`, in timeline order.
    pub fn changed_since(&self, sequence: u64) -> impl Iterator<Item = &TimelineEntry> {
        self.items.iter().filter(move |item| item.changed_at() > sequence)
    }
}

/// Applies one event. Live-only events (sequence 0) leave the state as it is.
pub fn fold(state: &mut Timeline, event: &Event) {
    let sequence = event.sequence;
    if sequence == 0 {
        return;
    }
    state.last_sequence = state.last_sequence.max(sequence);
    let key = sequence.to_string();
    let tool_use_id = event.tool_use_id.as_deref();
    match &event.body {
        EventBody::SessionCreated { mode, .. } => state.mode = *mode,
        EventBody::UserMessage { text, was_queued, selection } => {
            // The typed selection; a message from before it existed carries a tagged block.
            let (task, shown) = match selection {
                Some(typed) => (text.clone(), Some(typed.clone())),
                None => parse_task(text),
            };
            // The same task right after the failed turn that offered Retry: that retry.
            let retry = matches!(state.items.last(), Some(TimelineEntry::End { retry: Some(task), .. }) if task.text == *text && task.selection == *selection);
            state.items.push(TimelineEntry::User { key, changed_at: sequence, text: task, selection: shown, was_queued: *was_queued, retry });
            // As submitted: an older message keeps its tagged block in the text.
            state.last_task = Some(RetryTask { text: text.clone(), selection: selection.clone() });
            if let Some(at) = state.queued.iter().position(|q| q == text) {
                state.queued.remove(at);
            }
        }
        EventBody::MessageQueued { text, .. } => state.queued.push(text.clone()),
        EventBody::TurnStarted {} => state.turn_open = true,
        EventBody::ContextAssembled { estimated_tokens, layers, .. } => state.context = Some(ContextEstimate { estimated_tokens: *estimated_tokens, layers: layers.clone() }),
        EventBody::ModelCallStarted { .. } | EventBody::AssistantDelta { .. } | EventBody::AssistantStreamed { .. } | EventBody::ReasoningDelta { .. } => {}
        EventBody::AssistantMessage { text, tool_calls, finish_reason, interrupted, input_tokens, output_tokens } => {
            state.input_tokens += input_tokens;
            state.output_tokens += output_tokens;
            let cut_off = *interrupted && finish_reason == CUT_OFF_BY_ERROR;
            if !text.trim().is_empty() || *interrupted {
                state.items.push(TimelineEntry::Assistant { key: key.clone(), changed_at: sequence, text: text.clone(), interrupted: *interrupted, cut_off });
            }
            for call in tool_calls {
                state.items.push(TimelineEntry::Tool {
                    key: format!("{key}:{}", call.id),
                    changed_at: sequence,
                    tool_use_id: call.id.clone(),
                    name: call.name.clone(),
                    args: call.arguments.clone(),
                    state: StepState::Queued,
                    status: None,
                    result: None,
                    proposal_ids: Vec::new(),
                });
            }
        }
        EventBody::ToolDecision { decision, .. } => state.set_step(tool_use_id, sequence, |old| match decision.as_str() {
            "allow" => StepState::Running,
            "ask" => StepState::Waiting,
            _ => old,
        }),
        EventBody::ToolResult { status, content, .. } => {
            let mut ids: Vec<String> = event.proposal_id.iter().cloned().collect();
            for id in proposal_ids_in(content) {
                if !ids.contains(&id) {
                    ids.push(id);
                }
            }
            if let Some(TimelineEntry::Tool { state: step, status: step_status, result, proposal_ids, changed_at, .. }) = state.step_mut(tool_use_id) {
                *step = step_state(*status);
                *step_status = Some(*status);
                *result = Some(content.clone());
                proposal_ids.clone_from(&ids);
                *changed_at = sequence;
            }
            for id in ids {
                if !state.proposal_ids.contains(&id) {
                    state.proposal_ids.push(id);
                }
            }
            if tool_use_id.is_some() && state.pending_approval.as_ref().is_some_and(|p| Some(p.tool_use_id.as_str()) == tool_use_id) {
                state.pending_approval = None;
            }
            if tool_use_id.is_some() && state.pending_question.as_ref().is_some_and(|q| Some(q.tool_use_id.as_str()) == tool_use_id) {
                state.pending_question = None;
            }
        }
        EventBody::ApprovalRequested { request_id, tool, input, target_version, reason, reason_id, change, offer, .. } => {
            state.pending_approval = Some(ApprovalPrompt {
                request_id: request_id.clone(),
                tool_use_id: tool_use_id.unwrap_or_default().to_owned(),
                tool: tool.clone(),
                input: input.clone(),
                reason: reason.clone(),
                reason_id: reason_id.clone(),
                target_version: *target_version,
                change: change.clone(),
                offer: offer.clone(),
            });
            state.set_step(tool_use_id, sequence, |_| StepState::Waiting);
        }
        EventBody::ApprovalResolved { request_id, approved, note, note_id, .. } => {
            let tool = match &state.pending_approval {
                Some(pending) if pending.request_id == *request_id => pending.tool.clone(),
                _ => String::new(),
            };
            if state.pending_approval.as_ref().is_some_and(|p| p.request_id == *request_id) {
                state.pending_approval = None;
            }
            let plan = tool == "exit_plan_mode";
            state.items.push(TimelineEntry::Decision { key, changed_at: sequence, tool, approved: *approved, note: note.clone(), note_id: note_id.clone(), plan });
            state.set_step(tool_use_id, sequence, |old| if *approved { StepState::Running } else { old });
        }
        EventBody::QuestionAsked { question_id, question, options } => {
            state.pending_question = Some(QuestionPrompt {
                question_id: question_id.clone(),
                tool_use_id: tool_use_id.unwrap_or_default().to_owned(),
                question: question.clone(),
                options: options.clone(),
            });
            state.set_step(tool_use_id, sequence, |_| StepState::Waiting);
        }
        EventBody::QuestionAnswered { question_id, answer } => {
            let question = match state.pending_question.take() {
                Some(pending) if pending.question_id == *question_id => pending.question,
                other => {
                    state.pending_question = other;
                    String::new()
                }
            };
            state.items.push(TimelineEntry::Answer { key, changed_at: sequence, question, answer: answer.clone() });
        }
        EventBody::ModeChanged { mode, by } => {
            state.mode = *mode;
            state.items.push(TimelineEntry::Mode { key, changed_at: sequence, mode: *mode, by: by.clone() });
        }
        EventBody::TurnEnded { reason, message, hints } => {
            state.turn_open = false;
            state.compacting = None;
            let blocked = matches!(reason, TurnEndReason::BlockedOnApproval | TurnEndReason::BlockedOnQuestion);
            // A turn blocked on the person keeps its waiting step; any other end settles the rest.
            if !blocked {
                for item in &mut state.items {
                    if let TimelineEntry::Tool { state: step @ (StepState::Queued | StepState::Running), changed_at, .. } = item {
                        *step = StepState::Cancelled;
                        *changed_at = sequence;
                    }
                }
            }
            let last_cut_off = matches!(state.items.last(), Some(TimelineEntry::Assistant { cut_off: true, .. }));
            // An answer cut short already says it stopped; the end line would repeat it.
            let said_stopped = *reason == TurnEndReason::Interrupted && matches!(state.items.last(), Some(TimelineEntry::Assistant { interrupted: true, .. }));
            // The core says when it was the connection (not an error the provider sent).
            let model_error = *reason == TurnEndReason::ModelError;
            let cut_off = model_error && last_cut_off && hints.iter().any(|h| h.id == "connection_lost");
            let retry = if model_error { state.last_task.clone() } else { None };
            let key_problem = if model_error { key_problem_of(hints) } else { None };
            let quiet = matches!(reason, TurnEndReason::Completed) || blocked;
            if !quiet && !said_stopped {
                state.items.push(TimelineEntry::End { key, changed_at: sequence, reason: *reason, message: message.clone(), hints: hints.clone(), cut_off, retry, key_problem });
            }
            // The pin list reads its budget again, so it shows what to unpin.
            if *reason == TurnEndReason::PinsTooLong {
                state.long_session_seq = sequence;
            }
        }
        EventBody::SessionArchived {} => {
            state.archived = true;
            state.items.push(TimelineEntry::Archived { key, changed_at: sequence });
        }
        EventBody::SessionUnarchived {} => {
            state.archived = false;
            state.items.push(TimelineEntry::Unarchived { key, changed_at: sequence });
        }
        EventBody::Rewound { version, .. } => state.items.push(TimelineEntry::Rewound { key, changed_at: sequence, version: *version }),
        EventBody::CompactBoundary { mode, summary, summary_text, compacted_messages, tokens_before, tokens_after, note, .. } => {
            state.items.push(TimelineEntry::Boundary {
                key,
                changed_at: sequence,
                mode: *mode,
                note: note.clone(),
                summary_text: summary_text.clone(),
                summary: summary.as_deref().cloned(),
                compacted: *compacted_messages,
                tokens_before: *tokens_before,
                tokens_after: *tokens_after,
            });
            state.truncated = *mode == CompactionMode::Truncated;
            state.long_session_seq = sequence;
            state.compacting = None;
            state.compaction_failures = 0;
        }
        EventBody::CompactionStarted { trigger, estimated_tokens, context_window } => {
            state.compacting = Some(Compacting { trigger: *trigger, estimated_tokens: *estimated_tokens, context_window: *context_window });
        }
        EventBody::CompactionFailed { consecutive, message, .. } => {
            // A stop (by the person, or of the app) does not count as a failure: the count stays.
            let outcome = if message.starts_with(COMPACTION_STOPPED) {
                CompactionFailure::Stopped
            } else if *consecutive > state.compaction_failures {
                CompactionFailure::Failed
            } else {
                CompactionFailure::Interrupted
            };
            state.items.push(TimelineEntry::CompactionFailed { key, changed_at: sequence, consecutive: *consecutive, message: message.clone(), outcome });
            state.compacting = None;
            state.compaction_failures = *consecutive;
        }
        EventBody::ContextWarning { percent, compact_at_percent, .. } => {
            state.items.push(TimelineEntry::ContextWarning { key, changed_at: sequence, percent: *percent, compact_at: *compact_at_percent });
        }
        EventBody::IntentUpdated { .. } | EventBody::PinAdded { .. } | EventBody::PinRemoved { .. } | EventBody::CompactionSettingChanged { .. } => {
            state.long_session_seq = sequence
        }
        // An optimization run's own events: a run's log is not a drafting timeline.
        EventBody::RunStarted { .. } | EventBody::RunStage { .. } | EventBody::RunEnded { .. } => {}
    }
}

/// The fold of `events` from the empty timeline.
pub fn fold_all<'a>(events: impl IntoIterator<Item = &'a Event>) -> Timeline {
    let mut state = Timeline::default();
    for event in events {
        fold(&mut state, event);
    }
    state
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::{json, Value};

    use super::*;

    /// A log built as the harness writes it: sequences 1, 2, 3, … in order.
    struct Log(Vec<Event>);

    impl Log {
        fn add(&mut self, kind: &str, payload: Value, tool_use_id: Option<&str>) -> &mut Self {
            let sequence = self.0.len() as u64 + 1;
            let mut envelope = json!({"eventId": format!("evt_{sequence}"), "sequence": sequence, "sessionId": "ses_1", "createdAt": "2026-11-27T12:00:00Z", "modelVisible": false, "kind": kind, "payload": payload});
            if let Some(id) = tool_use_id {
                envelope["toolUseId"] = json!(id);
            }
            self.0.push(serde_json::from_value(envelope).unwrap());
            self
        }
    }

    fn call(id: &str, name: &str) -> Value {
        json!({"id": id, "name": name, "arguments": "{}"})
    }

    fn answer(text: &str, calls: Vec<Value>, interrupted: bool, finish: &str) -> Value {
        json!({"text": text, "toolCalls": calls, "finishReason": finish, "interrupted": interrupted, "inputTokens": 100, "outputTokens": 10})
    }

    fn end(reason: &str, hints: Value) -> Value {
        json!({"reason": reason, "message": format!("ended: {reason}"), "hints": hints})
    }

    /// A session with a step asked and denied, an interrupted answer, a failed and then
    /// a successful compaction, a connection lost mid-answer and its retry.
    fn session_log() -> Log {
        let mut log = Log(Vec::new());
        log.add("session_created", json!({"projectId": "prj_1", "profile": "fake", "mode": "default"}), None)
            .add("user_message", json!({"text": "把开头改短\n\n<selection from=\"3\" to=\"9\">\n第一段。\n</selection>", "wasQueued": false}), None)
            .add("turn_started", json!({}), None)
            .add("assistant_message", answer("我先读一下。", vec![call("c1", "read_project_context"), call("c2", "apply_proposal")], false, "tool_calls"), None)
            .add("tool_decision", json!({"tool": "read_project_context", "decision": "allow", "reason": ""}), Some("c1"))
            .add("tool_result", json!({"tool": "read_project_context", "status": "success", "content": "{\"proposalIds\": [\"prp_1\"]}"}), Some("c1"))
            .add(
                "approval_requested",
                json!({"requestId": "req_1", "tool": "apply_proposal", "input": {}, "inputHash": "h", "idempotencyKey": "k", "reason": "writes", "reasonId": "write"}),
                Some("c2"),
            )
            .add("turn_ended", end("blocked_on_approval", json!([])), None)
            .add("approval_resolved", json!({"requestId": "req_1", "approved": false, "decidedBy": "me", "note": "先别改"}), Some("c2"))
            .add("tool_result", json!({"tool": "apply_proposal", "status": "denied", "content": "denied: 先别改"}), Some("c2"))
            .add("message_queued", json!({"text": "继续"}), None)
            .add("user_message", json!({"text": "继续", "wasQueued": true}), None)
            .add("turn_started", json!({}), None)
            .add("assistant_message", answer("写到一半", vec![], true, "interrupted"), None)
            .add("turn_ended", end("interrupted", json!([])), None)
            .add("compaction_started", json!({"trigger": "manual", "estimatedTokens": 3000, "contextWindow": 4096}), None)
            .add("compaction_failed", json!({"trigger": "manual", "consecutive": 1, "message": "the summary was not valid"}), None)
            .add("compaction_started", json!({"trigger": "manual", "estimatedTokens": 3000, "contextWindow": 4096}), None)
            .add("compaction_failed", json!({"trigger": "manual", "consecutive": 1, "message": "Stopped by the user; nothing was replaced."}), None)
            .add(
                "compact_boundary",
                json!({"trigger": "auto", "mode": "truncated", "summaryText": "- 把开头改短", "keptMessages": 2, "compactedMessages": 6, "pinnedInstructions": [], "tokensBefore": 3000, "tokensAfter": 900, "note": "removed without a summary"}),
                None,
            )
            .add("user_message", json!({"text": "再试", "wasQueued": false, "selection": {"from": 1, "to": 2, "text": "一"}}), None)
            .add("turn_started", json!({}), None)
            .add("assistant_message", answer("断了", vec![], true, "error"), None)
            .add("turn_ended", end("model_error", json!([{"id": "connection_lost", "message": "lost"}])), None)
            .add("user_message", json!({"text": "再试", "wasQueued": false, "selection": {"from": 1, "to": 2, "text": "一"}}), None);
        log
    }

    /// Each item as `(kind, key, a short summary of its state)`.
    fn shape(timeline: &Timeline) -> Vec<(String, String, String)> {
        timeline
            .items
            .iter()
            .map(|item| {
                let value = serde_json::to_value(item).unwrap();
                let kind = value["kind"].as_str().unwrap().to_owned();
                let summary = match item {
                    TimelineEntry::User { text, selection, was_queued, retry, .. } => {
                        format!("{text}|{}|{was_queued}|{retry}", selection.as_ref().map_or(String::new(), |s| s.text.clone()))
                    }
                    TimelineEntry::Assistant { text, interrupted, cut_off, .. } => format!("{text}|{interrupted}|{cut_off}"),
                    TimelineEntry::Tool { name, state, proposal_ids, .. } => format!("{name}|{state:?}|{}", proposal_ids.join(",")),
                    TimelineEntry::Decision { tool, approved, note, .. } => format!("{tool}|{approved}|{note}"),
                    TimelineEntry::End { reason, cut_off, retry, .. } => format!("{reason:?}|{cut_off}|{}", retry.as_ref().map_or(String::new(), |r| r.text.clone())),
                    TimelineEntry::Boundary { mode, compacted, .. } => format!("{mode:?}|{compacted}"),
                    TimelineEntry::CompactionFailed { consecutive, outcome, .. } => format!("{consecutive}|{outcome:?}"),
                    other => serde_json::to_string(other).unwrap(),
                };
                (kind, item.key().to_owned(), summary)
            })
            .collect()
    }

    #[test]
    fn a_session_folds_into_its_timeline_steps_prompts_interrupts_and_compactions() {
        let log = session_log();
        let timeline = fold_all(&log.0);
        let expected: Vec<(String, String, String)> = [
            ("user", "2", "把开头改短|第一段。|false|false"),
            ("assistant", "4", "我先读一下。|false|false"),
            ("tool", "4:c1", "read_project_context|Done|prp_1"),
            ("tool", "4:c2", "apply_proposal|Denied|"),
            ("decision", "9", "apply_proposal|false|先别改"),
            ("user", "12", "继续||true|false"),
            ("assistant", "14", "写到一半|true|false"),
            ("compactionFailed", "17", "1|Failed"),
            ("compactionFailed", "19", "1|Stopped"),
            ("boundary", "20", "Truncated|6"),
            ("user", "21", "再试|一|false|false"),
            ("assistant", "23", "断了|true|true"),
            ("end", "24", "ModelError|true|再试"),
            ("user", "25", "再试|一|false|true"),
        ]
        .iter()
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
        .collect();
        assert_eq!(shape(&timeline), expected);
        assert_eq!(timeline.last_sequence, 25);
        assert_eq!(timeline.proposal_ids, ["prp_1"]);
        assert!(timeline.pending_approval.is_none() && timeline.queued.is_empty() && !timeline.turn_open);
        assert!(timeline.truncated);
        // The boundary after the failures starts the count again.
        assert_eq!((timeline.compaction_failures, timeline.compacting), (0, None));
        assert_eq!(timeline.input_tokens, 300);
        assert_eq!(timeline.long_session_seq, 20);
    }

    #[test]
    fn a_prompt_waits_until_decided_and_a_blocked_turn_keeps_its_waiting_step() {
        let log = session_log();
        let at_block = fold_all(&log.0[..8]);
        assert_eq!(at_block.pending_approval.as_ref().map(|p| (p.request_id.as_str(), p.tool_use_id.as_str(), p.reason_id.as_deref())), Some(("req_1", "c2", Some("write"))));
        assert!(matches!(at_block.items.last(), Some(TimelineEntry::Tool { state: StepState::Waiting, .. })));
        // A live-only event changes nothing.
        let mut live = at_block.clone();
        let mut delta = log.0[3].clone();
        delta.sequence = 0;
        fold(&mut live, &delta);
        assert_eq!(live, at_block);
    }

    /// A reader holding the fold up to any sequence `n` that replaces the items changed
    /// since `n` by key (appending new keys) holds the whole fold: what `session.timeline`
    /// with `since` promises the live panel.
    #[test]
    fn the_items_changed_since_any_sequence_bring_a_reader_to_the_whole_fold() {
        let log = session_log();
        let whole = fold_all(&log.0);
        for n in 0..=log.0.len() {
            let mut held = fold_all(&log.0[..n]);
            for item in whole.changed_since(n as u64) {
                match held.items.iter_mut().find(|i| i.key() == item.key()) {
                    Some(slot) => *slot = item.clone(),
                    None => held.items.push(item.clone()),
                }
            }
            assert_eq!(held.items, whole.items, "caught up from sequence {n}");
        }
    }

    #[test]
    fn step_states_and_proposal_ids_in_results() {
        assert_eq!(step_state(ToolStatus::Success), StepState::Done);
        assert_eq!(step_state(ToolStatus::Interrupted), StepState::Cancelled);
        assert_eq!(step_state(ToolStatus::Denied), StepState::Denied);
        assert_eq!(step_state(ToolStatus::PermissionDenied), StepState::Blocked);
        assert_eq!(step_state(ToolStatus::Timeout), StepState::Failed);
        assert_eq!(
            proposal_ids_in(r#"{"proposalId": "prp_1", "proposal": {"id": "prp_2"}, "proposals": [{"id": "prp_3"}, "prp_4"], "proposalIds": ["prp_1", "x"]}"#),
            ["prp_1", "prp_2", "prp_3", "prp_4"]
        );
        assert!(proposal_ids_in("not json").is_empty());
        assert_eq!(parse_task("任务\n\n<selection from=\"3\" to=\"9\">\n第一段。\n</selection>"), ("任务".to_owned(), Some(Selection { from: 3, to: 9, text: "第一段。".into() })));
        assert_eq!(parse_task("no block").1, None);
    }
}
