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

use super::event::{ApprovalChange, CompactionMode, CompactionSummary, CompactionTrigger, Event, EventBody, LayerEstimate, Mode, Selection, ToolStatus, TurnEndReason};
use super::model_call::CUT_OFF_BY_ERROR;
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
    pub offer: Option<super::allow_rule::AllowOffer>,
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
    fn step_mut(&mut self, tool_use_id: Option<&str>) -> Option<&mut TimelineItem> {
        let id = tool_use_id?;
        self.items.iter_mut().rev().find(|item| matches!(item, TimelineItem::Tool { tool_use_id, .. } if tool_use_id == id))
    }

    /// Sets the state of tool call `tool_use_id`'s step, through `change` (given the old state).
    fn set_step(&mut self, tool_use_id: Option<&str>, sequence: u64, change: impl FnOnce(StepState) -> StepState) {
        if let Some(TimelineItem::Tool { state, changed_at, .. }) = self.step_mut(tool_use_id) {
            let next = change(*state);
            if next != *state {
                *state = next;
                *changed_at = sequence;
            }
        }
    }

    /// Items changed by an event after `sequence`, in timeline order.
    pub fn changed_since(&self, sequence: u64) -> impl Iterator<Item = &TimelineItem> {
        self.items.iter().filter(move |item| item.changed_at() > sequence)
    }
}

/// Applies one event. Live-only events (sequence 0) leave the state as it is.
/// The item `key` among the latest items. Items are pushed in the order of the events
/// that make them (a key starts with its event's sequence), so the search stops at the
/// first item made before `key`'s event: an answer whose call left no item costs a few
/// steps, not a walk over the whole session (a 100,000-event replay).
fn recent_mut<'a>(items: &'a mut [TimelineItem], key: &str) -> Option<&'a mut TimelineItem> {
    let made = |k: &str| k.split(':').next().and_then(|n| n.parse::<u64>().ok());
    let target = made(key);
    for item in items.iter_mut().rev() {
        if item.key() == key {
            return Some(item);
        }
        if let (Some(target), Some(at)) = (target, made(item.key())) {
            if at < target {
                return None;
            }
        }
    }
    None
}

pub fn fold(timeline: &mut Timeline, event: &Event) {
    let sequence = event.sequence;
    if sequence == 0 {
        return;
    }
    timeline.state.last_sequence = timeline.state.last_sequence.max(sequence);
    let key = sequence.to_string();
    let tool_use_id = event.tool_use_id.as_deref();
    match &event.body {
        EventBody::SessionCreated { mode, .. } => timeline.state.mode = *mode,
        EventBody::UserMessage { text, was_queued, selection } => {
            // The typed selection; a message from before it existed carries a tagged block.
            let (task, shown) = match selection {
                Some(typed) => (text.clone(), Some(typed.clone())),
                None => parse_task(text),
            };
            // The same task right after the failed turn that offered Retry: that retry.
            let retry = matches!(timeline.items.last(), Some(TimelineItem::End { retry: Some(task), .. }) if task.text == *text && task.selection == *selection);
            timeline.items.push(TimelineItem::User { key, changed_at: sequence, text: task, selection: shown, was_queued: *was_queued, retry });
            // As submitted: an older message keeps its tagged block in the text.
            timeline.state.last_task = Some(RetryTask { text: text.clone(), selection: selection.clone() });
            if let Some(at) = timeline.state.queued.iter().position(|q| q == text) {
                timeline.state.queued.remove(at);
            }
        }
        EventBody::MessageQueued { text, .. } => timeline.state.queued.push(text.clone()),
        EventBody::TurnStarted {} => timeline.state.turn_open = true,
        EventBody::ContextAssembled { estimated_tokens, layers, .. } => {
            timeline.state.context = Some(ContextEstimate { estimated_tokens: *estimated_tokens, layers: layers.clone() })
        }
        // The answer that streams now has the key of its model call; its item is made
        // by the first text that reaches the log, and replaced by the logged answer.
        EventBody::ModelCallStarted { .. } => timeline.state.streaming_key = Some(key),
        EventBody::AssistantStreamed { text } => {
            if let Some(streaming_key) = timeline.state.streaming_key.clone() {
                match recent_mut(&mut timeline.items, &streaming_key) {
                    Some(TimelineItem::Assistant { text: shown, changed_at, .. }) => {
                        shown.push_str(text);
                        *changed_at = sequence;
                    }
                    _ => timeline.items.push(TimelineItem::Assistant {
                        key: streaming_key,
                        changed_at: sequence,
                        text: text.clone(),
                        streaming: true,
                        interrupted: false,
                        cut_off: false,
                    }),
                }
            }
        }
        EventBody::AssistantDelta { .. } | EventBody::ReasoningDelta { .. } => {}
        EventBody::AssistantMessage { text, tool_calls, finish_reason, interrupted, input_tokens, output_tokens } => {
            timeline.state.input_tokens += input_tokens;
            timeline.state.output_tokens += output_tokens;
            let cut_off = *interrupted && finish_reason == CUT_OFF_BY_ERROR;
            let key = timeline.state.streaming_key.take().unwrap_or(key);
            let answer = TimelineItem::Assistant { key: key.clone(), changed_at: sequence, text: text.clone(), streaming: false, interrupted: *interrupted, cut_off };
            // The streamed item becomes the answer (empty when the answer is only tool
            // calls: items are never removed, and an empty answer draws nothing).
            match recent_mut(&mut timeline.items, &key) {
                Some(slot) => *slot = answer,
                None if !text.trim().is_empty() || *interrupted => timeline.items.push(answer),
                None => {}
            }
            for call in tool_calls {
                timeline.items.push(TimelineItem::Tool {
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
        EventBody::ToolDecision { decision, .. } => timeline.set_step(tool_use_id, sequence, |old| match decision.as_str() {
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
            if let Some(TimelineItem::Tool { state: step, status: step_status, result, proposal_ids, changed_at, .. }) = timeline.step_mut(tool_use_id) {
                *step = step_state(*status);
                *step_status = Some(*status);
                *result = Some(content.clone());
                proposal_ids.clone_from(&ids);
                *changed_at = sequence;
            }
            for id in ids {
                if !timeline.state.proposal_ids.contains(&id) {
                    timeline.state.proposal_ids.push(id);
                }
            }
            if tool_use_id.is_some() && timeline.state.pending_approval.as_ref().is_some_and(|p| Some(p.tool_use_id.as_str()) == tool_use_id) {
                timeline.state.pending_approval = None;
            }
            if tool_use_id.is_some() && timeline.state.pending_question.as_ref().is_some_and(|q| Some(q.tool_use_id.as_str()) == tool_use_id) {
                timeline.state.pending_question = None;
            }
        }
        EventBody::ApprovalRequested { request_id, tool, input, target_version, reason, reason_id, change, offer, .. } => {
            timeline.state.pending_approval = Some(ApprovalPrompt {
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
            timeline.set_step(tool_use_id, sequence, |_| StepState::Waiting);
        }
        EventBody::ApprovalResolved { request_id, approved, note, note_id, .. } => {
            let tool = match &timeline.state.pending_approval {
                Some(pending) if pending.request_id == *request_id => pending.tool.clone(),
                _ => String::new(),
            };
            if timeline.state.pending_approval.as_ref().is_some_and(|p| p.request_id == *request_id) {
                timeline.state.pending_approval = None;
            }
            let plan = tool == "exit_plan_mode";
            timeline.items.push(TimelineItem::Decision { key, changed_at: sequence, tool, approved: *approved, note: note.clone(), note_id: note_id.clone(), plan });
            timeline.set_step(tool_use_id, sequence, |old| if *approved { StepState::Running } else { old });
        }
        EventBody::QuestionAsked { question_id, question, options } => {
            timeline.state.pending_question = Some(QuestionPrompt {
                question_id: question_id.clone(),
                tool_use_id: tool_use_id.unwrap_or_default().to_owned(),
                question: question.clone(),
                options: options.clone(),
            });
            timeline.set_step(tool_use_id, sequence, |_| StepState::Waiting);
        }
        EventBody::QuestionAnswered { question_id, answer } => {
            let question = match timeline.state.pending_question.take() {
                Some(pending) if pending.question_id == *question_id => pending.question,
                other => {
                    timeline.state.pending_question = other;
                    String::new()
                }
            };
            timeline.items.push(TimelineItem::Answer { key, changed_at: sequence, question, answer: answer.clone() });
        }
        EventBody::ModeChanged { mode, by } => {
            timeline.state.mode = *mode;
            timeline.items.push(TimelineItem::Mode { key, changed_at: sequence, mode: *mode, by: by.clone() });
        }
        EventBody::TurnEnded { reason, message, hints } => {
            timeline.state.turn_open = false;
            timeline.state.compacting = None;
            // An answer the log kept only in part (the process stopped mid-stream) streams no more.
            if let Some(streaming_key) = timeline.state.streaming_key.take() {
                if let Some(TimelineItem::Assistant { streaming, interrupted, changed_at, .. }) = recent_mut(&mut timeline.items, &streaming_key) {
                    *streaming = false;
                    *interrupted = true;
                    *changed_at = sequence;
                }
            }
            let blocked = matches!(reason, TurnEndReason::BlockedOnApproval | TurnEndReason::BlockedOnQuestion);
            // A turn blocked on the person keeps its waiting step; any other end settles the rest.
            if !blocked {
                for item in &mut timeline.items {
                    if let TimelineItem::Tool { state: step @ (StepState::Queued | StepState::Running), changed_at, .. } = item {
                        *step = StepState::Cancelled;
                        *changed_at = sequence;
                    }
                }
            }
            let last_cut_off = matches!(timeline.items.last(), Some(TimelineItem::Assistant { cut_off: true, .. }));
            // An answer cut short already says it stopped; the end line would repeat it.
            let said_stopped = *reason == TurnEndReason::Interrupted && matches!(timeline.items.last(), Some(TimelineItem::Assistant { interrupted: true, .. }));
            // The core says when it was the connection (not an error the provider sent).
            let model_error = *reason == TurnEndReason::ModelError;
            let cut_off = model_error && last_cut_off && hints.iter().any(|h| h.id == "connection_lost");
            let retry = if model_error { timeline.state.last_task.clone() } else { None };
            let key_problem = if model_error { key_problem_of(hints) } else { None };
            let quiet = matches!(reason, TurnEndReason::Completed) || blocked;
            if !quiet && !said_stopped {
                timeline.items.push(TimelineItem::End { key, changed_at: sequence, reason: *reason, message: message.clone(), hints: hints.clone(), cut_off, retry, key_problem });
            }
            // The pin list reads its budget again, so it shows what to unpin.
            if *reason == TurnEndReason::PinsTooLong {
                timeline.state.long_session_seq = sequence;
            }
        }
        EventBody::SessionArchived {} => {
            timeline.state.archived = true;
            timeline.items.push(TimelineItem::Archived { key, changed_at: sequence });
        }
        EventBody::SessionUnarchived {} => {
            timeline.state.archived = false;
            timeline.items.push(TimelineItem::Unarchived { key, changed_at: sequence });
        }
        EventBody::Rewound { version, .. } => timeline.items.push(TimelineItem::Rewound { key, changed_at: sequence, version: *version }),
        EventBody::CompactBoundary { mode, summary, summary_text, compacted_messages, tokens_before, tokens_after, note, .. } => {
            timeline.items.push(TimelineItem::Boundary {
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
            timeline.state.truncated = *mode == CompactionMode::Truncated;
            timeline.state.long_session_seq = sequence;
            timeline.state.compacting = None;
            timeline.state.compaction_failures = 0;
        }
        EventBody::CompactionStarted { trigger, estimated_tokens, context_window } => {
            timeline.state.compacting = Some(Compacting { trigger: *trigger, estimated_tokens: *estimated_tokens, context_window: *context_window });
        }
        EventBody::CompactionFailed { consecutive, message, .. } => {
            // A stop (by the person, or of the app) does not count as a failure: the count stays.
            let outcome = if message.starts_with(COMPACTION_STOPPED) {
                CompactionFailure::Stopped
            } else if *consecutive > timeline.state.compaction_failures {
                CompactionFailure::Failed
            } else {
                CompactionFailure::Interrupted
            };
            timeline.items.push(TimelineItem::CompactionFailed { key, changed_at: sequence, consecutive: *consecutive, message: message.clone(), outcome });
            timeline.state.compacting = None;
            timeline.state.compaction_failures = *consecutive;
        }
        EventBody::ContextWarning { percent, compact_at_percent, .. } => {
            timeline.items.push(TimelineItem::ContextWarning { key, changed_at: sequence, percent: *percent, compact_at: *compact_at_percent });
        }
        EventBody::IntentUpdated { .. } | EventBody::PinAdded { .. } | EventBody::PinRemoved { .. } | EventBody::CompactionSettingChanged { .. } => {
            timeline.state.long_session_seq = sequence
        }
        // An optimization run's own events: a run's log is not a drafting timeline.
        EventBody::RunStarted { .. } | EventBody::RunStage { .. } | EventBody::RunEnded { .. } => {}
    }
}

/// The fold of `events` from the empty timeline.
pub fn fold_all<'a>(events: impl IntoIterator<Item = &'a Event>) -> Timeline {
    let mut timeline = Timeline::default();
    for event in events {
        fold(&mut timeline, event);
    }
    timeline
}

/// Text for the item `key`: a live delta of the answer streaming now (or of its
/// reasoning, which no item keeps).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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

/// One live stream's side of the timeline: the streaming items it sent deltas for, so
/// a logged checkpoint of text the reader already has is not sent back shorter, and an
/// item the reader made from deltas and the answer does not keep is dropped.
#[derive(Debug, Default)]
pub struct LiveFeed {
    appended: Vec<String>,
}

impl LiveFeed {
    /// The patch `event` makes, given `timeline` already folded with it (the harness
    /// folds an event as it logs it, before sending it). None for events that change
    /// nothing a reader holds.
    pub fn patch(&mut self, timeline: &Timeline, event: &Event) -> Option<TimelinePatch> {
        if event.sequence == 0 {
            let (text, reasoning) = match &event.body {
                EventBody::AssistantDelta { text } => (text, false),
                EventBody::ReasoningDelta { text } => (text, true),
                _ => return None,
            };
            let key = timeline.state.streaming_key.clone()?;
            if !reasoning && !self.appended.contains(&key) {
                self.appended.push(key.clone());
            }
            return Some(TimelinePatch { sequence: 0, items: Vec::new(), removed: Vec::new(), append: Some(TextAppend { key, text: text.clone(), reasoning }), state: None });
        }
        let checkpoint = matches!(event.body, EventBody::AssistantStreamed { .. });
        let items: Vec<TimelineItem> =
            timeline.items.iter().filter(|item| item.changed_at() == event.sequence && !(checkpoint && self.appended.iter().any(|key| key == item.key()))).cloned().collect();
        let mut removed = Vec::new();
        if timeline.state.streaming_key.is_none() {
            for key in self.appended.drain(..) {
                if !timeline.items.iter().rev().any(|item| item.key() == key) {
                    removed.push(key);
                }
            }
        }
        Some(TimelinePatch { sequence: event.sequence, items, removed, append: None, state: Some(timeline.state.clone()) })
    }
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
                    TimelineItem::User { text, selection, was_queued, retry, .. } => {
                        format!("{text}|{}|{was_queued}|{retry}", selection.as_ref().map_or(String::new(), |s| s.text.clone()))
                    }
                    TimelineItem::Assistant { text, interrupted, cut_off, .. } => format!("{text}|{interrupted}|{cut_off}"),
                    TimelineItem::Tool { name, state, proposal_ids, .. } => format!("{name}|{state:?}|{}", proposal_ids.join(",")),
                    TimelineItem::Decision { tool, approved, note, .. } => format!("{tool}|{approved}|{note}"),
                    TimelineItem::End { reason, cut_off, retry, .. } => format!("{reason:?}|{cut_off}|{}", retry.as_ref().map_or(String::new(), |r| r.text.clone())),
                    TimelineItem::Boundary { mode, compacted, .. } => format!("{mode:?}|{compacted}"),
                    TimelineItem::CompactionFailed { consecutive, outcome, .. } => format!("{consecutive}|{outcome:?}"),
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
        assert_eq!(timeline.state.last_sequence, 25);
        assert_eq!(timeline.state.proposal_ids, ["prp_1"]);
        assert!(timeline.state.pending_approval.is_none() && timeline.state.queued.is_empty() && !timeline.state.turn_open);
        assert!(timeline.state.truncated);
        // The boundary after the failures starts the count again.
        assert_eq!((timeline.state.compaction_failures, timeline.state.compacting), (0, None));
        assert_eq!(timeline.state.input_tokens, 300);
        assert_eq!(timeline.state.long_session_seq, 20);
    }

    #[test]
    fn a_prompt_waits_until_decided_and_a_blocked_turn_keeps_its_waiting_step() {
        let log = session_log();
        let at_block = fold_all(&log.0[..8]);
        assert_eq!(at_block.state.pending_approval.as_ref().map(|p| (p.request_id.as_str(), p.tool_use_id.as_str(), p.reason_id.as_deref())), Some(("req_1", "c2", Some("write"))));
        assert!(matches!(at_block.items.last(), Some(TimelineItem::Tool { state: StepState::Waiting, .. })));
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

    // ---- The cases of the UI's former timeline.test.ts: the same inputs (its fixtures,
    // ---- `ui/src/shared/testing/fixtures.ts`), the same expected items.

    /// Events numbered as the UI's `ev` numbers them (a live one has sequence 0).
    #[derive(Default)]
    struct Script {
        sequence: u64,
    }

    type Body = (&'static str, Value);

    impl Script {
        fn ev(&mut self, body: Body) -> Event {
            self.sequence += 1;
            envelope(self.sequence, body, None)
        }
        fn ev_tool(&mut self, body: Body, tool_use_id: &str) -> Event {
            self.sequence += 1;
            envelope(self.sequence, body, Some(tool_use_id))
        }
    }

    fn envelope(sequence: u64, (kind, payload): Body, tool_use_id: Option<&str>) -> Event {
        let mut value = json!({"eventId": format!("evt_{sequence}"), "sequence": sequence, "sessionId": "ses_1", "turnId": "turn_1", "createdAt": "2026-11-22T11:59:00Z", "modelVisible": false, "kind": kind, "payload": payload});
        if let Some(id) = tool_use_id {
            value["toolUseId"] = json!(id);
        }
        serde_json::from_value(value).unwrap()
    }

    fn live(body: Body) -> Event {
        envelope(0, body, None)
    }

    fn created() -> Body {
        ("session_created", json!({"projectId": "prj_1", "profile": "llm_1", "mode": "default"}))
    }
    fn user(text: &str) -> Body {
        ("user_message", json!({"text": text, "wasQueued": false}))
    }
    fn queued_user(text: &str) -> Body {
        ("user_message", json!({"text": text, "wasQueued": true}))
    }
    fn user_with(text: &str, selection: Value) -> Body {
        ("user_message", json!({"text": text, "wasQueued": false, "selection": selection}))
    }
    fn turn_started() -> Body {
        ("turn_started", json!({}))
    }
    fn assistant(text: &str, calls: Vec<Value>, interrupted: bool) -> Body {
        let finish = if calls.is_empty() { "stop" } else { "tool_calls" };
        ("assistant_message", json!({"text": text, "toolCalls": calls, "finishReason": finish, "interrupted": interrupted, "inputTokens": 100, "outputTokens": 20}))
    }
    fn cut_off(text: &str) -> Body {
        ("assistant_message", json!({"text": text, "toolCalls": [], "finishReason": "error", "interrupted": true, "inputTokens": 100, "outputTokens": 20}))
    }
    fn call_with(id: &str, name: &str, args: Value) -> Value {
        json!({"id": id, "name": name, "arguments": args.to_string()})
    }
    fn tool_result(tool: &str, content: &str, status: &str) -> Body {
        ("tool_result", json!({"tool": tool, "status": status, "content": content, "reusedExecution": false}))
    }
    fn turn_ended(reason: &str, hints: Value) -> Body {
        ("turn_ended", json!({"reason": reason, "message": format!("turn {reason}"), "hints": hints}))
    }
    fn approval_requested(request_id: &str, tool: &str, input: Value) -> Body {
        ("approval_requested", json!({"requestId": request_id, "tool": tool, "input": input, "inputHash": "sha256:x", "idempotencyKey": "k", "reason": "writes need approval"}))
    }
    fn approval_resolved(request_id: &str, note: &str, note_id: Option<&str>) -> Body {
        let mut payload = json!({"requestId": request_id, "approved": false, "decidedBy": "me", "note": note});
        if let Some(id) = note_id {
            payload["noteId"] = json!(id);
        }
        ("approval_resolved", payload)
    }
    fn compaction_started(trigger: &str) -> Body {
        ("compaction_started", json!({"trigger": trigger, "estimatedTokens": 26000, "contextWindow": 32768}))
    }
    fn compaction_failed(consecutive: u32, message: &str) -> Body {
        ("compaction_failed", json!({"trigger": "auto", "consecutive": consecutive, "message": message, "inputTokens": 0, "outputTokens": 0}))
    }
    fn compact_boundary() -> Body {
        (
            "compact_boundary",
            json!({
                "trigger": "manual",
                "mode": "summarized",
                "summary": {
                    "summary": "我们把三个步骤改短了，结尾加了行动号召。",
                    "user_intent": "一篇适合公众号的写作计划",
                    "accepted_changes": [{"proposal_id": "prp_1", "version": 2}],
                    "rejected_directions": [{"direction": "用“最佳”这类词", "reason": "绝对化用语"}],
                    "open_tasks": ["改标题"],
                    "active_artifacts": [],
                    "source_refs": [],
                    "next_step_hint": "给标题三个候选"
                },
                "summaryText": "# Earlier conversation (summarised; the full log is kept)\n我们把三个步骤改短了。\n",
                "keptMessages": 2,
                "compactedMessages": 12,
                "pinnedInstructions": [],
                "tokensBefore": 26000,
                "tokensAfter": 3000,
                "note": "Earlier conversation summarised",
                "inputTokens": 2000,
                "outputTokens": 200
            }),
        )
    }
    fn context_warning(percent: u32, compact_at: Option<u32>) -> Body {
        let mut payload = json!({"estimatedTokens": 23000, "contextWindow": 32768, "percent": percent});
        if let Some(at) = compact_at {
            payload["compactAtPercent"] = json!(at);
        }
        ("context_warning", payload)
    }

    fn folded(from: Timeline, events: &[Event]) -> Timeline {
        let mut timeline = from;
        events.iter().for_each(|event| fold(&mut timeline, event));
        timeline
    }

    fn kinds(timeline: &Timeline) -> Vec<String> {
        timeline.items.iter().map(|item| serde_json::to_value(item).unwrap()["kind"].as_str().unwrap().to_owned()).collect()
    }

    /// Item `at` as JSON (its wire shape, which the UI's `toMatchObject` read).
    fn item(timeline: &Timeline, at: usize) -> Value {
        serde_json::to_value(&timeline.items[at]).unwrap()
    }

    fn last(timeline: &Timeline) -> Value {
        item(timeline, timeline.items.len() - 1)
    }

    /// `actual` holds every field of `expected` (the UI test's `toMatchObject`).
    fn matches(actual: &Value, expected: Value) {
        match (actual, &expected) {
            (Value::Object(actual), Value::Object(expected)) => {
                for (field, value) in expected {
                    matches(actual.get(field).unwrap_or(&Value::Null), value.clone());
                }
            }
            (Value::Array(actual), Value::Array(expected)) if actual.len() == expected.len() => {
                actual.iter().zip(expected).for_each(|(a, e)| matches(a, e.clone()));
            }
            _ => assert_eq!(*actual, expected),
        }
    }

    #[test]
    fn shows_a_message_s_typed_selection_as_its_scope_and_the_text_as_the_task() {
        let mut ev = Script::default();
        let selection = json!({"from": 3, "to": 9, "text": "第一段。"});
        let s = fold_all(&[ev.ev(created()), ev.ev(user_with("把开头改短", selection.clone()))]);
        matches(&item(&s, 0), json!({"kind": "user", "text": "把开头改短", "selection": selection}));
    }

    #[test]
    fn shows_messages_and_one_step_per_tool_call_through_its_states() {
        let mut ev = Script::default();
        let events = [
            ev.ev(created()),
            ev.ev(user("把开头改短\n\n<selection from=\"3\" to=\"9\">\n第一段。\n</selection>")),
            ev.ev(turn_started()),
            ev.ev(assistant("我先读一下。", vec![call_with("c1", "read_project_context", json!({})), call_with("c2", "propose_source_patch", json!({"summary": "改短"}))], false)),
            ev.ev_tool(("tool_decision", json!({"tool": "read_project_context", "decision": "allow", "reason": ""})), "c1"),
        ];
        let mut s = fold_all(&events);
        assert!(s.state.turn_open);
        assert_eq!(kinds(&s), ["user", "assistant", "tool", "tool"]);
        matches(&item(&s, 0), json!({"text": "把开头改短", "selection": {"from": 3, "to": 9, "text": "第一段。"}}));
        let states = |s: &Timeline| {
            s.items.iter().filter_map(|i| if let TimelineItem::Tool { state, proposal_ids, .. } = i { Some((*state, proposal_ids.clone())) } else { None }).collect::<Vec<_>>()
        };
        assert_eq!(states(&s).iter().map(|x| x.0).collect::<Vec<_>>(), [StepState::Running, StepState::Queued]);
        s = folded(
            s,
            &[
                ev.ev_tool(tool_result("read_project_context", "{}", "success"), "c1"),
                ev.ev_tool(tool_result("propose_source_patch", &json!({"proposalId": "prp_9", "hunks": 2}).to_string(), "success"), "c2"),
            ],
        );
        assert_eq!(states(&s), [(StepState::Done, vec![]), (StepState::Done, vec!["prp_9".to_owned()])]);
        assert_eq!(s.state.proposal_ids, ["prp_9"]);
        s = folded(s, &[ev.ev(assistant("好了。", vec![], false)), ev.ev(turn_ended("completed", json!([])))]);
        assert!(!s.state.turn_open);
        // A completed turn adds no line of its own.
        matches(&last(&s), json!({"kind": "assistant", "text": "好了。"}));
        assert_eq!(s.state.input_tokens, 200);
        assert_eq!(s.state.last_sequence, 9);
    }

    #[test]
    fn a_prompt_waits_for_the_person_until_decided_and_a_denial_is_not_a_failure() {
        let mut ev = Script::default();
        let mut s = fold_all(&[
            ev.ev(created()),
            ev.ev(user("直接改吧")),
            ev.ev(turn_started()),
            ev.ev(assistant("", vec![call_with("c1", "apply_proposal", json!({"proposalId": "prp_1"}))], false)),
            ev.ev_tool(approval_requested("req_1", "apply_proposal", json!({"proposalId": "prp_1"})), "c1"),
            ev.ev(turn_ended("blocked_on_approval", json!([]))),
        ]);
        matches(&serde_json::to_value(&s.state.pending_approval).unwrap(), json!({"requestId": "req_1", "tool": "apply_proposal", "toolUseId": "c1"}));
        matches(&last(&s), json!({"kind": "tool", "state": "waiting"}));
        s = folded(s, &[ev.ev_tool(approval_resolved("req_1", "先别改", None), "c1"), ev.ev_tool(tool_result("apply_proposal", "denied: 先别改", "denied"), "c1")]);
        assert!(s.state.pending_approval.is_none());
        let find = |s: &Timeline, kind: &str| s.items.iter().map(|i| serde_json::to_value(i).unwrap()).find(|v| v["kind"] == kind).unwrap();
        matches(&find(&s, "decision"), json!({"approved": false, "note": "先别改", "noteId": null, "tool": "apply_proposal", "plan": false}));
        matches(&find(&s, "tool"), json!({"state": "denied", "status": "denied"}));
        // Plan mode's or a rule's refusal is blocked; only a real error fails.
        assert_eq!(
            [step_state(ToolStatus::Blocked), step_state(ToolStatus::PermissionDenied), step_state(ToolStatus::ToolError), step_state(ToolStatus::Success)],
            [StepState::Blocked, StepState::Blocked, StepState::Failed, StepState::Done]
        );
        // A note the core words (a new message superseded the approval) keeps its id.
        s = folded(s, &[ev.ev(approval_resolved("req_2", "Superseded by a new message.", Some("superseded_by_new_message")))]);
        matches(&last(&s), json!({"kind": "decision", "noteId": "superseded_by_new_message"}));
    }

    #[test]
    fn queued_messages_wait_below_the_turn_and_join_the_history_when_delivered() {
        let mut ev = Script::default();
        let mut s = fold_all(&[ev.ev(created()), ev.ev(user("一")), ev.ev(turn_started()), ev.ev(("message_queued", json!({"text": "二"})))]);
        assert_eq!(s.state.queued, ["二"]);
        s = folded(s, &[ev.ev(assistant("好", vec![], false)), ev.ev(queued_user("二"))]);
        assert!(s.state.queued.is_empty());
        matches(&last(&s), json!({"kind": "user", "text": "二", "wasQueued": true}));
    }

    #[test]
    fn an_interrupted_turn_cancels_the_steps_still_running_and_says_so_once() {
        let mut ev = Script::default();
        let s = fold_all(&[
            ev.ev(created()),
            ev.ev(user("改")),
            ev.ev(turn_started()),
            ev.ev(assistant("", vec![call_with("c1", "read_versions", json!({}))], false)),
            ev.ev(turn_ended("interrupted", json!([]))),
        ]);
        let shape: Vec<(String, String)> =
            s.items.iter().map(|i| serde_json::to_value(i).unwrap()).map(|v| (v["kind"].as_str().unwrap().to_owned(), v["state"].as_str().unwrap_or("").to_owned())).collect();
        assert_eq!(shape, [("user".to_owned(), String::new()), ("tool".to_owned(), "cancelled".to_owned()), ("end".to_owned(), String::new())]);
        // A reply cut short already says it stopped: no second line.
        let mut ev = Script::default();
        let t = fold_all(&[ev.ev(created()), ev.ev(user("写")), ev.ev(turn_started()), ev.ev(assistant("写到一半", vec![], true)), ev.ev(turn_ended("interrupted", json!([])))]);
        assert_eq!(kinds(&t), ["user", "assistant"]);
    }

    #[test]
    fn an_error_end_keeps_its_hints_for_the_person_and_the_task_to_send_again() {
        let mut ev = Script::default();
        let s =
            fold_all(&[ev.ev(created()), ev.ev(user("改")), ev.ev(turn_started()), ev.ev(turn_ended("model_error", json!([{"id": "retry_connection", "message": "Try again."}])))]);
        matches(&last(&s), json!({"kind": "end", "reason": "model_error", "hints": [{"id": "retry_connection"}], "cutOff": false, "retry": {"text": "改", "selection": null}}));
        // Other ends offer no retry.
        let mut ev = Script::default();
        let t = fold_all(&[ev.ev(created()), ev.ev(user("改")), ev.ev(turn_started()), ev.ev(turn_ended("max_model_turns", json!([])))]);
        matches(&last(&t), json!({"kind": "end", "retry": null}));
    }

    #[test]
    fn pins_too_long_end_the_turn_with_what_to_unpin_and_the_pin_list_reads_its_budget_again() {
        let mut ev = Script::default();
        let before = fold_all(&[ev.ev(created()), ev.ev(user("继续")), ev.ev(turn_started())]);
        let mut other_ev = Script { sequence: ev.sequence };
        let s = folded(
            before.clone(),
            &[ev.ev(turn_ended("pins_too_long", json!([{"id": "unpin", "message": "Unpin something."}, {"id": "larger_context", "message": "Or a larger window."}])))],
        );
        matches(&last(&s), json!({"kind": "end", "reason": "pins_too_long", "hints": [{"id": "unpin"}, {"id": "larger_context"}], "retry": null}));
        assert!(s.state.long_session_seq > before.state.long_session_seq);
        let other = folded(before.clone(), &[other_ev.ev(turn_ended("context_too_long", json!([])))]);
        assert_eq!(other.state.long_session_seq, before.state.long_session_seq);
    }

    #[test]
    fn an_answer_a_failed_call_cut_off_is_kept_and_marked_so_unlike_one_the_person_stopped() {
        let selection = json!({"from": 3, "to": 9, "text": "第一段。"});
        let mut ev = Script::default();
        let s = fold_all(&[
            ev.ev(created()),
            ev.ev(user_with("把开头改短", selection.clone())),
            ev.ev(turn_started()),
            ev.ev(cut_off("写到一半")),
            ev.ev(turn_ended("model_error", json!([{"id": "connection_lost", "message": "The text that arrived is kept."}]))),
        ]);
        assert_eq!(kinds(&s), ["user", "assistant", "end"]);
        matches(&item(&s, 1), json!({"kind": "assistant", "text": "写到一半", "interrupted": true, "cutOff": true}));
        matches(&item(&s, 2), json!({"kind": "end", "reason": "model_error", "cutOff": true, "retry": {"text": "把开头改短", "selection": selection}}));
        // Cut off by an error the provider sent (no lost connection): its own end line.
        let mut ev = Script::default();
        let provider = fold_all(&[
            ev.ev(created()),
            ev.ev(user("写")),
            ev.ev(turn_started()),
            ev.ev(cut_off("写到一半")),
            ev.ev(turn_ended("model_error", json!([{"id": "wait_and_retry", "message": "Wait a moment and try again."}]))),
        ]);
        matches(&item(&provider, 1), json!({"kind": "assistant", "cutOff": true}));
        matches(&item(&provider, 2), json!({"kind": "end", "cutOff": false, "retry": {"text": "写"}}));
        let mut ev = Script::default();
        let stopped =
            fold_all(&[ev.ev(created()), ev.ev(user("写")), ev.ev(turn_started()), ev.ev(assistant("写到一半", vec![], true)), ev.ev(turn_ended("interrupted", json!([])))]);
        matches(&item(&stopped, 1), json!({"kind": "assistant", "interrupted": true, "cutOff": false}));
    }

    #[test]
    fn live_only_events_and_duplicates_leave_the_state_alone_and_mode_context_and_rewinds_are_tracked() {
        let mut ev = Script::default();
        let mut s = fold_all(&[ev.ev(created()), ev.ev(("mode_changed", json!({"mode": "plan", "by": "user"})))]);
        assert_eq!(s.state.mode, Mode::Plan);
        let same = folded(s.clone(), &[live(("assistant_delta", json!({"text": "流"})))]);
        assert_eq!(same, s);
        s = folded(s, &[ev.ev(("context_assembled", json!({"snapshotId": "ctx_1", "estimatedTokens": 1200, "layers": [{"layer": "pinned", "tokens": 800, "trimmed": false}]})))]);
        assert_eq!(s.state.context.as_ref().map(|c| c.estimated_tokens), Some(1200));
        s = folded(s, &[ev.ev(("rewound", json!({"checkpointId": "chk_1", "toSequence": 1, "version": 4})))]);
        matches(&last(&s), json!({"kind": "rewound", "version": 4}));
    }

    #[test]
    fn finds_proposal_ids_in_a_tool_s_result() {
        assert_eq!(proposal_ids_in(&json!({"proposalId": "prp_1"}).to_string()), ["prp_1"]);
        assert_eq!(proposal_ids_in(&json!({"proposals": [{"id": "prp_2"}, "prp_3"], "proposalIds": ["prp_2"]}).to_string()), ["prp_2", "prp_3"]);
        assert!(proposal_ids_in("not json").is_empty());
        assert!(proposal_ids_in(&json!({"proposalId": "ver_1"}).to_string()).is_empty());
        let mut ev = Script::default();
        assert!(fold_all(&[ev.ev(created())]).items.is_empty());
    }

    #[test]
    fn a_compaction_runs_between_its_start_and_its_boundary_and_a_warning_is_a_line() {
        let mut ev = Script::default();
        let mut s = fold_all(&[ev.ev(created()), ev.ev(user("改")), ev.ev(turn_started()), ev.ev(context_warning(72, Some(80))), ev.ev(compaction_started("auto"))]);
        matches(&serde_json::to_value(s.state.compacting).unwrap(), json!({"trigger": "auto", "contextWindow": 32768}));
        matches(&last(&s), json!({"kind": "contextWarning", "percent": 72, "compactAt": 80}));
        s = folded(s, &[ev.ev(compact_boundary())]);
        assert!(s.state.compacting.is_none());
        matches(&last(&s), json!({"kind": "boundary", "compacted": 12, "summary": {"next_step_hint": "给标题三个候选"}}));
        let warned = folded(s, &[ev.ev(context_warning(75, None))]);
        matches(&last(&warned), json!({"kind": "contextWarning", "compactAt": null}));
    }

    #[test]
    fn a_compaction_the_person_or_the_app_stopped_is_not_a_failure_and_a_failure_counts() {
        let mut ev = Script::default();
        let mut s = fold_all(&[ev.ev(created()), ev.ev(compaction_started("manual")), ev.ev(compaction_failed(0, "Stopped by the user; nothing was replaced."))]);
        assert!(s.state.compacting.is_none());
        matches(&last(&s), json!({"kind": "compactionFailed", "outcome": "stopped"}));
        s = folded(s, &[ev.ev(compaction_started("auto")), ev.ev(compaction_failed(1, "The model's summary broke the schema."))]);
        matches(&last(&s), json!({"kind": "compactionFailed", "outcome": "failed", "consecutive": 1}));
        s = folded(s, &[ev.ev(compaction_started("auto")), ev.ev(compaction_failed(1, "The app stopped during this compaction; nothing was replaced."))]);
        matches(&last(&s), json!({"kind": "compactionFailed", "outcome": "interrupted"}));
        // A turn end closes a compaction the log left open.
        let closed = folded(s, &[ev.ev(compaction_started("auto")), ev.ev(turn_ended("interrupted", json!([])))]);
        assert!(closed.state.compacting.is_none());
    }

    #[test]
    fn the_same_task_sent_again_right_after_a_failed_turn_is_that_turn_s_retry_and_an_api_key_problem_is_named() {
        let mut ev = Script::default();
        let s = fold_all(&[
            ev.ev(created()),
            ev.ev(user("写一句")),
            ev.ev(turn_started()),
            ev.ev(turn_ended("model_error", json!([{"id": "check_api_key", "message": "Check the API key of this profile; set it again if it changed."}]))),
            ev.ev(user("写一句")),
        ]);
        assert_eq!(kinds(&s), ["user", "end", "user"]);
        matches(&item(&s, 1), json!({"kind": "end", "keyProblem": "rejected"}));
        matches(&item(&s, 0), json!({"retry": false}));
        matches(&item(&s, 2), json!({"retry": true}));
        // Another task after a failure is not a retry.
        let mut ev = Script::default();
        let other = fold_all(&[ev.ev(created()), ev.ev(user("一")), ev.ev(turn_started()), ev.ev(turn_ended("model_error", json!([]))), ev.ev(user("二"))]);
        matches(&last(&other), json!({"retry": false}));
        matches(&item(&other, 1), json!({"keyProblem": null}));
    }

    #[test]
    fn a_key_that_was_never_set_and_a_key_gone_from_the_keychain_are_told_apart() {
        let end = |hint: &str| {
            let mut ev = Script::default();
            let s = fold_all(&[
                ev.ev(created()),
                ev.ev(user("写一句")),
                ev.ev(turn_started()),
                ev.ev(turn_ended("model_error", json!([{"id": hint, "message": "…"}, {"id": "use_env_key", "message": "…"}]))),
            ]);
            item(&s, 1)
        };
        matches(&end("set_api_key"), json!({"kind": "end", "keyProblem": "missing"}));
        matches(&end("set_api_key_again"), json!({"kind": "end", "keyProblem": "gone"}));
    }

    // ---- Streaming: the answer in progress is one item, keyed by its model call.

    fn model_call_started() -> Body {
        ("model_call_started", json!({"modelTurn": 1, "messagesHash": "sha256:x", "messageCount": 2}))
    }
    fn streamed(text: &str) -> Body {
        ("assistant_streamed", json!({"text": text}))
    }
    fn delta(text: &str) -> Body {
        ("assistant_delta", json!({"text": text}))
    }

    /// What a reader of the live stream does with a patch: drop, put by key, append.
    fn read(reader: &mut Vec<TimelineItem>, patch: &TimelinePatch) {
        for key in &patch.removed {
            reader.retain(|item| item.key() != key);
        }
        for item in &patch.items {
            match reader.iter_mut().find(|held| held.key() == item.key()) {
                Some(slot) => *slot = item.clone(),
                None => reader.push(item.clone()),
            }
        }
        if let Some(TextAppend { key, text, reasoning: false }) = &patch.append {
            match reader.iter_mut().find(|held| held.key() == key) {
                Some(TimelineItem::Assistant { text: shown, .. }) => shown.push_str(text),
                _ => reader.push(TimelineItem::Assistant { key: key.clone(), changed_at: 0, text: text.clone(), streaming: true, interrupted: false, cut_off: false }),
            }
        }
    }

    #[test]
    fn the_answer_streaming_is_one_item_that_the_logged_answer_replaces() {
        let mut ev = Script::default();
        let head = [ev.ev(created()), ev.ev(user("写一句")), ev.ev(turn_started()), ev.ev(model_call_started())];
        let mut s = fold_all(&head);
        assert_eq!(s.state.streaming_key.as_deref(), Some("4"));
        assert_eq!(kinds(&s), ["user"], "nothing is drawn before text arrives");
        s = folded(s, &[ev.ev(streamed("山上")), ev.ev(streamed("的春茶"))]);
        matches(&last(&s), json!({"kind": "assistant", "key": "4", "text": "山上的春茶", "streaming": true, "changedAt": 6}));
        assert_eq!(s.items.len(), 2);
        s = folded(s, &[ev.ev(assistant("山上的春茶。", vec![], false)), ev.ev(turn_ended("completed", json!([])))]);
        assert_eq!(s.items.len(), 2);
        matches(&last(&s), json!({"kind": "assistant", "key": "4", "text": "山上的春茶。", "streaming": false, "changedAt": 7}));
        assert_eq!(s.state.streaming_key, None);
        // An answer of tool calls only makes no answer item; a log that ends mid-stream
        // (the process stopped) keeps what streamed, as stopped.
        let mut ev = Script::default();
        let tools = fold_all(&[
            ev.ev(created()),
            ev.ev(user("读")),
            ev.ev(turn_started()),
            ev.ev(model_call_started()),
            ev.ev(assistant("", vec![call_with("c1", "read_versions", json!({}))], false)),
        ]);
        assert_eq!(kinds(&tools), ["user", "tool"]);
        let mut ev = Script::default();
        let cut = fold_all(&[
            ev.ev(created()),
            ev.ev(user("写")),
            ev.ev(turn_started()),
            ev.ev(model_call_started()),
            ev.ev(streamed("写到")),
            ev.ev(turn_ended("restarted", json!([]))),
        ]);
        matches(&item(&cut, 1), json!({"kind": "assistant", "text": "写到", "streaming": false, "interrupted": true}));
    }

    /// The live stream: each logged event is folded (as the harness does when it logs
    /// it) and then patched; deltas are only patched. A reader of the patches holds the
    /// fold of the log, and every delta of an answer updates that answer's one item.
    #[test]
    fn a_reader_of_the_live_patches_holds_the_fold_and_each_delta_updates_one_item() {
        let mut ev = Script::default();
        let stream: Vec<Event> = vec![
            ev.ev(created()),
            ev.ev(user("写两句")),
            ev.ev(turn_started()),
            ev.ev(model_call_started()),
            live(delta("山上")),
            live(delta("的")),
            ev.ev(streamed("山上的")),
            live(delta("春茶")),
            ev.ev(assistant("山上的春茶", vec![call_with("c1", "read_versions", json!({}))], false)),
            ev.ev_tool(tool_result("read_versions", "{}", "success"), "c1"),
            ev.ev(model_call_started()),
            // Whitespace that turns out to be an answer of tool calls only.
            live(delta(" ")),
            ev.ev(assistant(" ", vec![call_with("c2", "read_versions", json!({}))], false)),
            ev.ev_tool(tool_result("read_versions", "{}", "success"), "c2"),
            ev.ev(model_call_started()),
            live(delta("好了")),
            ev.ev(assistant("好了", vec![], false)),
            ev.ev(turn_ended("completed", json!([]))),
        ];
        let mut harness = Timeline::default();
        let mut feed = LiveFeed::default();
        let mut reader: Vec<TimelineItem> = Vec::new();
        let mut appended_to: Vec<String> = Vec::new();
        for (at, event) in stream.iter().enumerate() {
            fold(&mut harness, event);
            let patch = feed.patch(&harness, event).unwrap();
            if let Some(append) = &patch.append {
                appended_to.push(append.key.clone());
            }
            read(&mut reader, &patch);
            if at == 7 {
                // Mid-stream the reader has every delta (more than the log's checkpoint).
                matches(&serde_json::to_value(reader.last().unwrap()).unwrap(), json!({"kind": "assistant", "key": "4", "text": "山上的春茶", "streaming": true}));
            }
        }
        assert_eq!(appended_to, ["4", "4", "4", "8", "11"], "the deltas of one answer go to one item");
        assert_eq!(reader, fold_all(&stream).items);
        assert_eq!(kinds(&fold_all(&stream)), ["user", "assistant", "tool", "tool", "assistant"]);
    }

    /// Replay keeps the panel's timeline in the session state: the one fold, the same
    /// whether the log is replayed or applied an event at a time as the live loop does.
    #[test]
    fn the_session_state_holds_the_timeline_fold_live_and_replayed() {
        let log = session_log();
        let replayed = super::super::replay::replay(log.0.iter());
        assert_eq!(*replayed.timeline(), fold_all(&log.0));
        let mut live = super::super::replay::SessionState::default();
        log.0.iter().for_each(|event| live.apply(event));
        assert_eq!(live.timeline, fold_all(&log.0));
    }
}
