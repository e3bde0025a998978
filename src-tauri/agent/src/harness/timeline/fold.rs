//! The fold: one logged event at a time into the items and the state around them.

use super::super::event::{CompactionMode, Event, EventBody, Selection, ToolStatus, TurnEndReason};
use super::super::model_call::CUT_OFF_BY_ERROR;
use super::items::{ApprovalPrompt, Compacting, CompactionFailure, ContextEstimate, KeyProblem, QuestionPrompt, RetryTask, StepState, Timeline, TimelineItem};
use super::step_state;
use crate::error::Hint;
use crate::llm::ToolCall;

/// The start of the message of a compaction the person stopped (`SummaryError::Stopped`).
const COMPACTION_STOPPED: &str = "Stopped by the user";

/// Splits a user message of an older session (before selections were typed) back into
/// the task and its selection: `task\n\n<selection from="F" to="T">\ntext\n</selection>`.
pub(super) fn parse_task(message: &str) -> (String, Option<Selection>) {
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
    /// The latest step of tool call `tool_use_id`, to change (which may make it queued
    /// or running again, so the settled part ends before it).
    fn step_mut(&mut self, tool_use_id: Option<&str>) -> Option<&mut TimelineItem> {
        let id = tool_use_id?;
        let index = self.items.iter().rposition(|item| matches!(item, TimelineItem::Tool { tool_use_id, .. } if tool_use_id == id))?;
        self.settled.0 = self.settled.0.min(index);
        self.items.get_mut(index)
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
}

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

/// Applies one event. Live-only events (sequence 0) leave the state as it is.
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
        EventBody::UserMessage { text, was_queued, selection } => user_message(timeline, key, sequence, text, *was_queued, selection),
        EventBody::MessageQueued { text, .. } => timeline.state.queued.push(text.clone()),
        EventBody::TurnStarted {} => timeline.state.turn_open = true,
        EventBody::ContextAssembled { estimated_tokens, layers, .. } => {
            timeline.state.context = Some(ContextEstimate { estimated_tokens: *estimated_tokens, layers: layers.clone() })
        }
        // The answer that streams now has the key of its model call; its item is made
        // by the first text that reaches the log, and replaced by the logged answer.
        EventBody::ModelCallStarted { .. } => timeline.state.streaming_key = Some(key),
        EventBody::AssistantStreamed { text } => streamed(timeline, sequence, text),
        EventBody::AssistantDelta { .. } | EventBody::ReasoningDelta { .. } => {}
        EventBody::AssistantMessage { text, tool_calls, finish_reason, interrupted, input_tokens, output_tokens } => {
            timeline.state.input_tokens += input_tokens;
            timeline.state.output_tokens += output_tokens;
            let cut_off = *interrupted && finish_reason == CUT_OFF_BY_ERROR;
            answer(timeline, key, sequence, text, tool_calls, *interrupted, cut_off);
        }
        EventBody::ToolDecision { decision, .. } => timeline.set_step(tool_use_id, sequence, |old| match decision.as_str() {
            "allow" => StepState::Running,
            "ask" => StepState::Waiting,
            _ => old,
        }),
        EventBody::ToolResult { status, content, .. } => tool_result(timeline, event, *status, content),
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
        EventBody::ApprovalResolved { request_id, approved, note, note_id, .. } => approval_resolved(timeline, event, request_id, *approved, note, note_id),
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
        EventBody::TurnEnded { reason, message, hints } => turn_ended(timeline, key, sequence, *reason, message, hints),
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
        EventBody::CompactionFailed { consecutive, message, .. } => compaction_failed(timeline, key, sequence, *consecutive, message),
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

/// The person's message: its item (a retry of the failed turn just above when it sends
/// the same task again), the task Retry would send, and its place off the queue.
fn user_message(timeline: &mut Timeline, key: String, sequence: u64, text: &str, was_queued: bool, selection: &Option<Selection>) {
    // The typed selection; a message from before it existed carries a tagged block.
    let (task, shown) = match selection {
        Some(typed) => (text.to_owned(), Some(typed.clone())),
        None => parse_task(text),
    };
    // The same task right after the failed turn that offered Retry: that retry.
    let retry = matches!(timeline.items.last(), Some(TimelineItem::End { retry: Some(task), .. }) if task.text == *text && task.selection == *selection);
    timeline.items.push(TimelineItem::User { key, changed_at: sequence, text: task, selection: shown, was_queued, retry });
    // As submitted: an older message keeps its tagged block in the text.
    timeline.state.last_task = Some(RetryTask { text: text.to_owned(), selection: selection.clone() });
    if let Some(at) = timeline.state.queued.iter().position(|q| q == text) {
        timeline.state.queued.remove(at);
    }
}

/// Text of the answer streaming now that reached the log: the answer's one item grows.
fn streamed(timeline: &mut Timeline, sequence: u64, text: &str) {
    let Some(streaming_key) = timeline.state.streaming_key.clone() else { return };
    match recent_mut(&mut timeline.items, &streaming_key) {
        Some(TimelineItem::Assistant { text: shown, changed_at, .. }) => {
            shown.push_str(text);
            *changed_at = sequence;
        }
        _ => timeline.items.push(TimelineItem::Assistant { key: streaming_key, changed_at: sequence, text: text.to_owned(), streaming: true, interrupted: false, cut_off: false }),
    }
}

/// The logged answer: it replaces the streamed item, and each tool call it makes is a
/// queued step.
fn answer(timeline: &mut Timeline, key: String, sequence: u64, text: &str, tool_calls: &[ToolCall], interrupted: bool, cut_off: bool) {
    let key = timeline.state.streaming_key.take().unwrap_or(key);
    let answer = TimelineItem::Assistant { key: key.clone(), changed_at: sequence, text: text.to_owned(), streaming: false, interrupted, cut_off };
    // The streamed item becomes the answer (empty when the answer is only tool
    // calls: items are never removed, and an empty answer draws nothing).
    match recent_mut(&mut timeline.items, &key) {
        Some(slot) => *slot = answer,
        None if !text.trim().is_empty() || interrupted => timeline.items.push(answer),
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

/// A tool call's result settles its step, collects the proposals it made and closes
/// the prompt that waited on it.
fn tool_result(timeline: &mut Timeline, event: &Event, status: ToolStatus, content: &str) {
    let tool_use_id = event.tool_use_id.as_deref();
    let mut ids: Vec<String> = event.proposal_id.iter().cloned().collect();
    for id in proposal_ids_in(content) {
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    if let Some(TimelineItem::Tool { state: step, status: step_status, result, proposal_ids, changed_at, .. }) = timeline.step_mut(tool_use_id) {
        *step = step_state(status);
        *step_status = Some(status);
        *result = Some(content.to_owned());
        proposal_ids.clone_from(&ids);
        *changed_at = event.sequence;
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

/// The person's decision on an approval: a line, and the step runs on when approved.
fn approval_resolved(timeline: &mut Timeline, event: &Event, request_id: &str, approved: bool, note: &str, note_id: &Option<String>) {
    let tool = match &timeline.state.pending_approval {
        Some(pending) if pending.request_id == request_id => pending.tool.clone(),
        _ => String::new(),
    };
    if timeline.state.pending_approval.as_ref().is_some_and(|p| p.request_id == request_id) {
        timeline.state.pending_approval = None;
    }
    let plan = tool == "exit_plan_mode";
    let sequence = event.sequence;
    timeline.items.push(TimelineItem::Decision { key: sequence.to_string(), changed_at: sequence, tool, approved, note: note.to_owned(), note_id: note_id.clone(), plan });
    timeline.set_step(event.tool_use_id.as_deref(), sequence, |old| if approved { StepState::Running } else { old });
}

/// A turn's end: the answer streaming stops, the steps still queued or running are
/// cancelled (unless the turn waits on the person), and an end worth a line gets one,
/// with what Retry would send and the key problem it names.
fn turn_ended(timeline: &mut Timeline, key: String, sequence: u64, reason: TurnEndReason, message: &str, hints: &[Hint]) {
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
        let from = timeline.settled.0.min(timeline.items.len());
        for item in &mut timeline.items[from..] {
            if let TimelineItem::Tool { state: step @ (StepState::Queued | StepState::Running), changed_at, .. } = item {
                *step = StepState::Cancelled;
                *changed_at = sequence;
            }
        }
        timeline.settled.0 = timeline.items.len();
    }
    let last_cut_off = matches!(timeline.items.last(), Some(TimelineItem::Assistant { cut_off: true, .. }));
    // An answer cut short already says it stopped; the end line would repeat it.
    let said_stopped = reason == TurnEndReason::Interrupted && matches!(timeline.items.last(), Some(TimelineItem::Assistant { interrupted: true, .. }));
    // The core says when it was the connection (not an error the provider sent).
    let model_error = reason == TurnEndReason::ModelError;
    let cut_off = model_error && last_cut_off && hints.iter().any(|h| h.id == "connection_lost");
    let retry = if model_error { timeline.state.last_task.clone() } else { None };
    let key_problem = if model_error { key_problem_of(hints) } else { None };
    let quiet = matches!(reason, TurnEndReason::Completed) || blocked;
    if !quiet && !said_stopped {
        timeline.items.push(TimelineItem::End { key, changed_at: sequence, reason, message: message.to_owned(), hints: hints.to_vec(), cut_off, retry, key_problem });
    }
    // The pin list reads its budget again, so it shows what to unpin.
    if reason == TurnEndReason::PinsTooLong {
        timeline.state.long_session_seq = sequence;
    }
}

/// A compaction that replaced nothing: a line saying whether it failed or was stopped.
fn compaction_failed(timeline: &mut Timeline, key: String, sequence: u64, consecutive: u32, message: &str) {
    // A stop (by the person, or of the app) does not count as a failure: the count stays.
    let outcome = if message.starts_with(COMPACTION_STOPPED) {
        CompactionFailure::Stopped
    } else if consecutive > timeline.state.compaction_failures {
        CompactionFailure::Failed
    } else {
        CompactionFailure::Interrupted
    };
    timeline.items.push(TimelineItem::CompactionFailed { key, changed_at: sequence, consecutive, message: message.to_owned(), outcome });
    timeline.state.compacting = None;
    timeline.state.compaction_failures = consecutive;
}

/// The fold of `events` from the empty timeline.
pub fn fold_all<'a>(events: impl IntoIterator<Item = &'a Event>) -> Timeline {
    let mut timeline = Timeline::default();
    for event in events {
        fold(&mut timeline, event);
    }
    timeline
}
