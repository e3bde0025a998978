//! Replay: folding a log into the session state the turn loop resumes from — the
//! model-visible messages, what waits for the person — and the drafting panel's
//! timeline ([`super::timeline::fold`], kept in [`SessionState::timeline`]). The live
//! loop applies each event it appends with the same [`SessionState::apply`], so what the
//! model was sent, what a replay rebuilds and what the panel draws come from one pass.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::compaction::{CompactionMode, CompactionState, Pin, PinSource};
use super::event::{Event, EventBody, Mode, Selection, ToolStatus, TurnEndReason};
use crate::llm::{Message, ToolCall};

mod digest;
use digest::{Hashing, MessagesDigest};

/// The `run_stage` state of a step that starts (a scripted run's; see `script`).
pub const STEP_STARTED: &str = "started";
/// The `run_stage` state of a step's later batch, a request of its own.
pub const STEP_BATCH: &str = "batch";

/// One line of a log as text, an event at a time (`session.get` with `timeline`, the
/// CLI's `session show`, an optimization run's log): a map of each event, not a fold;
/// the drafting panel draws [`super::timeline::TimelineItem`]s.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LogLine {
    pub sequence: u64,
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    /// A short text for the timeline: the person's or the model's words, or (with
    /// `textId`) the engine's English wording of what happened.
    pub text: String,
    /// What happened, for a client to word in the person's language (`session_started`,
    /// `tool_result`, `archived`, …, with `params`); absent when `text` is the person's
    /// or the model's own words (a message, a question, an answer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_id: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<String, String>,
}

/// An approval waiting for the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingApproval {
    pub request_id: String,
    pub tool_use_id: String,
    pub tool: String,
    pub input_hash: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_version: Option<u64>,
    pub idempotency_key: String,
    pub reason: String,
    /// Why it asks, for the UI to word (see `EventBody::ApprovalRequested`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason_id: Option<String>,
    /// For a call that applies a proposal: exactly what would change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change: Option<Box<super::event::ApprovalChange>>,
    /// What "always allow" would store, when the tool offers it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offer: Option<super::allow_rule::AllowOffer>,
}

/// A question waiting for the user's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingQuestion {
    pub question_id: String,
    pub tool_use_id: String,
    pub question: String,
    pub options: Vec<String>,
}

/// Everything a log says about its session.
/// A message submitted while a turn ran, with the selection it was scoped to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueuedMessage {
    pub text: String,
    pub selection: Option<Selection>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionState {
    pub last_sequence: u64,
    pub mode: Mode,
    pub messages: Vec<Message>,
    /// Each logged event as a line of text.
    pub lines: Vec<LogLine>,
    /// The drafting panel's timeline: the one fold of the log for the screen.
    pub timeline: super::timeline::Timeline,
    /// The tool calls of the last assistant message that have no result yet.
    pub open_calls: Vec<ToolCall>,
    pub pending_approval: Option<PendingApproval>,
    pub pending_question: Option<PendingQuestion>,
    /// The turn that started and has not ended.
    pub open_turn: Option<String>,
    /// A model call started and not closed by an assistant message.
    pub model_call_open: bool,
    /// The text the open model call streamed, as far as its `assistant_streamed`
    /// checkpoints go: what a restart keeps of a half-streamed reply.
    pub streamed: String,
    pub last_turn_end: Option<TurnEndReason>,
    /// Messages queued and not delivered yet.
    pub queued: Vec<QueuedMessage>,
    /// The selection of the latest user message (none when it had none): the working
    /// set of the next model call shows it.
    pub selection: Option<Selection>,
    pub archived: bool,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub last_snapshot_id: Option<String>,
    /// The last assistant message: the parent of the tool events that follow it.
    pub last_assistant_event_id: Option<String>,
    /// The last approval request or question: the parent of its answer.
    pub last_block_event_id: Option<String>,
    /// The session summary layer's text (set by the last compact boundary).
    pub summary: String,
    /// The pinned texts (the person's pins and their carried instructions).
    pub pins: Vec<Pin>,
    pub compaction: CompactionState,
    /// The session's intent (the last `intent_updated`).
    pub intent: crate::intent::SessionIntent,
    /// What the model has read and still has in context, raw or summarised (see
    /// `harness::provenance`), oldest first.
    pub sources: Vec<crate::model::ProvenanceSource>,
    /// The hash and estimated tokens of `messages`, kept as they grow.
    digest: MessagesDigest,
}

fn short(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        let mut out: String = text.chars().take(max).collect();
        out.push('…');
        out
    }
}

/// A value's name on the wire (`plan`, `permission_denied`, …).
fn wire<T: Serialize>(value: &T) -> String {
    serde_json::to_value(value).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
}

/// How one event reads in the log: the person's or the model's own words, or the
/// engine's (an id and values, with the English).
struct Line<'e>(&'e Event);

impl Line<'_> {
    fn item(&self, text: String, text_id: Option<&str>, params: &[(&str, String)]) -> LogLine {
        let event = self.0;
        LogLine {
            sequence: event.sequence,
            kind: event.kind_name().to_owned(),
            turn_id: event.turn_id.clone(),
            tool_use_id: event.tool_use_id.clone(),
            text,
            text_id: text_id.map(str::to_owned),
            params: params.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect(),
        }
    }

    /// The person's or the model's own words.
    fn said(&self, text: String) -> LogLine {
        self.item(text, None, &[])
    }

    /// The engine's: an id and values, with the English.
    fn worded(&self, id: &str, params: &[(&str, String)], text: String) -> LogLine {
        self.item(text, Some(id), params)
    }
}

impl SessionState {
    /// Applies one logged event. Live-only events are ignored.
    pub fn apply(&mut self, event: &Event) {
        if event.sequence > 0 {
            self.last_sequence = event.sequence;
        }
        super::timeline::fold(&mut self.timeline, event);
        let line = Line(event);
        let item = match &event.body {
            // The session and its settings.
            EventBody::SessionCreated { mode, .. } => {
                self.mode = *mode;
                Some(line.worded("session_started", &[], "Session started".to_owned()))
            }
            EventBody::ModeChanged { mode, .. } => {
                self.mode = *mode;
                Some(line.worded("mode", &[("mode", wire(mode))], format!("Mode: {mode:?}")))
            }
            EventBody::SessionArchived {} => self.archived(true, &line),
            EventBody::SessionUnarchived {} => self.archived(false, &line),
            EventBody::Rewound { checkpoint_id, to_sequence, version } => self.rewound(checkpoint_id, *to_sequence, *version, &line),
            EventBody::IntentUpdated { intent, by } => self.intent_updated(intent, by, &line),
            // A turn: the person's message, the model's calls and reply.
            EventBody::UserMessage { text, selection, .. } => self.user_message(text, selection, &line),
            EventBody::MessageQueued { text, selection } => self.message_queued(text, selection, &line),
            EventBody::TurnStarted {} => {
                self.open_turn = event.turn_id.clone();
                None
            }
            EventBody::ContextAssembled { snapshot_id, estimated_tokens, .. } => {
                self.compaction.last_estimated_tokens = *estimated_tokens;
                self.last_snapshot_id = Some(snapshot_id.clone());
                None
            }
            EventBody::ModelCallStarted { .. } => {
                self.model_call_open = true;
                self.streamed.clear();
                None
            }
            EventBody::AssistantDelta { .. } | EventBody::ReasoningDelta { .. } => None,
            EventBody::AssistantStreamed { text } => {
                self.streamed.push_str(text);
                None
            }
            EventBody::AssistantMessage { text, tool_calls, interrupted, input_tokens, output_tokens, .. } => {
                self.assistant_message(text, tool_calls, *interrupted, (*input_tokens, *output_tokens), &line)
            }
            EventBody::TurnEnded { reason, message, .. } => self.turn_ended(*reason, message, &line),
            // A tool call, and what waits for the person.
            EventBody::ToolDecision { tool, decision, .. } => {
                Some(line.worded("tool_decision", &[("tool", tool.clone()), ("decision", decision.clone())], format!("{tool}: {decision}")))
            }
            EventBody::ToolResult { tool, status, content, result_ref, .. } => self.tool_result(tool, *status, content, result_ref.as_deref(), &line),
            EventBody::ApprovalRequested { request_id, tool, input_hash, target_version, idempotency_key, reason, reason_id, change, offer, .. } => {
                let pending = PendingApproval {
                    request_id: request_id.clone(),
                    tool_use_id: event.tool_use_id.clone().unwrap_or_default(),
                    tool: tool.clone(),
                    input_hash: input_hash.clone(),
                    target_version: *target_version,
                    idempotency_key: idempotency_key.clone(),
                    reason: reason.clone(),
                    reason_id: reason_id.clone(),
                    change: change.clone(),
                    offer: offer.clone(),
                };
                self.approval_requested(pending, &line)
            }
            EventBody::ApprovalResolved { request_id, approved, .. } => self.approval_resolved(request_id, *approved, &line),
            EventBody::QuestionAsked { question_id, question, options } => self.question_asked(question_id, question, options, &line),
            EventBody::QuestionAnswered { question_id, answer } => self.question_answered(question_id, answer, &line),
            // Compaction and the pins.
            EventBody::ContextWarning { percent, .. } => {
                self.compaction.warned = true;
                Some(line.worded("context_warning", &[("percent", percent.to_string())], format!("The context is {percent}% full")))
            }
            EventBody::CompactionStarted { trigger, .. } => {
                self.compaction.open = Some(*trigger);
                None
            }
            EventBody::CompactionFailed { consecutive, message, input_tokens, output_tokens, .. } => {
                self.compaction_failed(*consecutive, message, (*input_tokens, *output_tokens), &line)
            }
            EventBody::CompactBoundary { mode, summary_text, kept_messages, pinned_instructions, note, input_tokens, output_tokens, sources, .. } => {
                let boundary = Boundary {
                    mode: *mode,
                    summary_text,
                    kept_messages: *kept_messages,
                    pinned_instructions,
                    note,
                    used: (*input_tokens, *output_tokens),
                    sources: sources.as_deref(),
                };
                self.compact_boundary(boundary, &line)
            }
            EventBody::PinAdded { pin_id, text, source } => self.pin_added(pin_id, text, *source, &line),
            EventBody::PinRemoved { pin_id } => {
                self.pins.retain(|p| &p.id != pin_id);
                Some(line.worded("unpinned", &[("pin", pin_id.clone())], format!("Unpinned {pin_id}")))
            }
            EventBody::CompactionSettingChanged { threshold } => {
                self.compaction.threshold = *threshold;
                None
            }
            // An optimization run.
            EventBody::RunStarted { .. } => Some(line.worded("run_started", &[], "Optimization run started".to_owned())),
            EventBody::RunStage { stage, state, message } => self.run_stage(stage, state, message, &line),
            EventBody::RunEnded { status, message } => Some(line.worded("run_ended", &[("status", status.clone())], format!("Run {status}: {}", short(message, 200)))),
        };
        if let Some(item) = item {
            self.lines.push(item);
        }
        self.digest.catch_up(&self.messages);
    }
}

/// The session's own events: archiving, a restored checkpoint, the intent, a run's steps.
impl SessionState {
    fn archived(&mut self, archived: bool, line: &Line<'_>) -> Option<LogLine> {
        self.archived = archived;
        Some(if archived { line.worded("archived", &[], "Archived".to_owned()) } else { line.worded("unarchived", &[], "Restored from the archive".to_owned()) })
    }

    fn rewound(&mut self, checkpoint_id: &str, to_sequence: u64, version: u32, line: &Line<'_>) -> Option<LogLine> {
        self.messages.push(Message::user(rewound_note(checkpoint_id, to_sequence, version)));
        Some(line.worded(
            "rewound",
            &[("checkpoint", checkpoint_id.to_owned()), ("version", version.to_string())],
            format!("Restored checkpoint {checkpoint_id} as version {version}"),
        ))
    }

    fn intent_updated(&mut self, intent: &crate::intent::SessionIntent, by: &super::event::IntentSource, line: &Line<'_>) -> Option<LogLine> {
        self.intent = intent.clone();
        let (source, english) = match by {
            super::event::IntentSource::Message => ("message", "from the message"),
            super::event::IntentSource::Person => ("person", "edited"),
        };
        Some(line.worded("intent_updated", &[("by", source.to_owned())], format!("Intent updated ({english})")))
    }

    /// A scripted run's step (or a batch of one) sends only its own conversation: the
    /// model-visible messages start again with it.
    fn run_stage(&mut self, stage: &str, state: &str, message: &str, line: &Line<'_>) -> Option<LogLine> {
        if state == STEP_STARTED || state == STEP_BATCH {
            self.messages.clear();
            self.digest = MessagesDigest::default();
        }
        Some(line.worded("run_stage", &[("stage", stage.to_owned()), ("state", state.to_owned())], format!("{stage} {state}: {}", short(message, 200))))
    }
}

/// A turn: the person's message (delivered or queued), the model's reply, the turn's end.
impl SessionState {
    fn user_message(&mut self, text: &str, selection: &Option<Selection>, line: &Line<'_>) -> Option<LogLine> {
        self.compaction.user_turns += 1;
        self.messages.push(Message::user(text));
        self.selection = selection.clone();
        super::provenance::remember(&mut self.sources, super::provenance::of_message(text, selection.as_ref()));
        if let Some(pos) = self.queued.iter().position(|q| q.text == text && &q.selection == selection) {
            self.queued.remove(pos);
        }
        Some(line.said(short(text, 200)))
    }

    fn message_queued(&mut self, text: &str, selection: &Option<Selection>, line: &Line<'_>) -> Option<LogLine> {
        self.queued.push(QueuedMessage { text: text.to_owned(), selection: selection.clone() });
        Some(line.worded("queued", &[("text", short(text, 200))], format!("Queued: {}", short(text, 200))))
    }

    fn assistant_message(&mut self, text: &str, tool_calls: &[ToolCall], interrupted: bool, used: (u64, u64), line: &Line<'_>) -> Option<LogLine> {
        self.model_call_open = false;
        self.streamed.clear();
        self.last_assistant_event_id = Some(line.0.event_id.clone());
        self.input_tokens += used.0;
        self.output_tokens += used.1;
        self.messages.push(Message::assistant(text, tool_calls.to_vec()));
        self.open_calls = tool_calls.to_vec();
        let mut shown = short(text, 200);
        if interrupted {
            shown.push_str(" [interrupted]");
        }
        Some(line.said(shown))
    }

    fn turn_ended(&mut self, reason: TurnEndReason, message: &str, line: &Line<'_>) -> Option<LogLine> {
        self.open_turn = None;
        self.model_call_open = false;
        self.streamed.clear();
        self.last_turn_end = Some(reason);
        Some(line.worded("turn_ended", &[("reason", wire(&reason))], message.to_owned()))
    }
}

/// A tool call's result, and the approvals and questions that wait for the person.
impl SessionState {
    fn tool_result(&mut self, tool: &str, status: ToolStatus, content: &str, result_ref: Option<&str>, line: &Line<'_>) -> Option<LogLine> {
        let event = line.0;
        let id = event.tool_use_id.clone().unwrap_or_default();
        let owner = event.session_id.as_deref().or(event.run_id.as_deref()).unwrap_or_default();
        let read = super::provenance::of_tool_result(owner, event.sequence, &id, tool, status, content, result_ref);
        super::provenance::remember(&mut self.sources, read);
        self.messages.push(Message::tool_result(id.clone(), content));
        self.open_calls.retain(|c| c.id != id);
        if self.pending_approval.as_ref().is_some_and(|p| p.tool_use_id == id) {
            self.pending_approval = None;
        }
        if self.pending_question.as_ref().is_some_and(|p| p.tool_use_id == id) {
            self.pending_question = None;
        }
        let status = wire(&status);
        Some(line.worded("tool_result", &[("tool", tool.to_owned()), ("status", status.clone())], format!("{tool} → {status}")))
    }

    fn approval_requested(&mut self, pending: PendingApproval, line: &Line<'_>) -> Option<LogLine> {
        self.last_block_event_id = Some(line.0.event_id.clone());
        let item = line.worded(
            "approval_needed",
            &[("tool", pending.tool.clone()), ("why", pending.reason_id.clone().unwrap_or_default())],
            format!("Approval needed for {}: {}", pending.tool, pending.reason),
        );
        self.pending_approval = Some(pending);
        Some(item)
    }

    fn approval_resolved(&mut self, request_id: &str, approved: bool, line: &Line<'_>) -> Option<LogLine> {
        if self.pending_approval.as_ref().is_some_and(|p| p.request_id == request_id) {
            self.pending_approval = None;
        }
        Some(if approved { line.worded("approved", &[], "Approved".to_owned()) } else { line.worded("denied", &[], "Denied".to_owned()) })
    }

    fn question_asked(&mut self, question_id: &str, question: &str, options: &[String], line: &Line<'_>) -> Option<LogLine> {
        self.last_block_event_id = Some(line.0.event_id.clone());
        self.pending_question = Some(PendingQuestion {
            question_id: question_id.to_owned(),
            tool_use_id: line.0.tool_use_id.clone().unwrap_or_default(),
            question: question.to_owned(),
            options: options.to_vec(),
        });
        Some(line.said(short(question, 200)))
    }

    fn question_answered(&mut self, question_id: &str, answer: &str, line: &Line<'_>) -> Option<LogLine> {
        if self.pending_question.as_ref().is_some_and(|p| p.question_id == question_id) {
            self.pending_question = None;
        }
        Some(line.said(short(answer, 200)))
    }
}

/// A compact boundary as logged: what replaces the earlier conversation.
struct Boundary<'a> {
    mode: CompactionMode,
    summary_text: &'a str,
    kept_messages: u32,
    pinned_instructions: &'a [String],
    note: &'a str,
    /// The summarising call's input and output tokens.
    used: (u64, u64),
    sources: Option<&'a [crate::model::ProvenanceSource]>,
}

/// Compaction and the pins.
impl SessionState {
    fn compaction_failed(&mut self, consecutive: u32, message: &str, used: (u64, u64), line: &Line<'_>) -> Option<LogLine> {
        self.input_tokens += used.0;
        self.output_tokens += used.1;
        self.compaction.open = None;
        self.compaction.consecutive_failures = consecutive;
        Some(line.worded("compaction_failed", &[("consecutive", consecutive.to_string())], format!("Compaction failed ({consecutive} in a row): {}", short(message, 200))))
    }

    /// The earlier conversation replaced by the summary layer; the instructions carried
    /// out of it pinned.
    fn compact_boundary(&mut self, boundary: Boundary<'_>, line: &Line<'_>) -> Option<LogLine> {
        if let Some(sources) = boundary.sources {
            self.sources = sources.to_vec();
        }
        self.input_tokens += boundary.used.0;
        self.output_tokens += boundary.used.1;
        let keep = (boundary.kept_messages as usize).min(self.messages.len());
        self.messages.drain(..self.messages.len() - keep);
        self.digest = MessagesDigest::default();
        self.summary = boundary.summary_text.to_owned();
        for (index, text) in boundary.pinned_instructions.iter().enumerate() {
            if !self.pins.iter().any(|p| &p.text == text) {
                self.pins.push(Pin { id: format!("pin_{}_{index}", line.0.sequence), text: text.clone(), source: PinSource::Instruction });
            }
        }
        let compaction = &mut self.compaction;
        compaction.open = None;
        compaction.consecutive_failures = 0;
        compaction.compactions += 1;
        compaction.warned = false;
        compaction.boundary_at_user_turn = Some(compaction.user_turns);
        if boundary.mode == CompactionMode::Truncated {
            compaction.truncated_at_user_turn = Some(compaction.user_turns);
        }
        Some(line.worded("compacted", &[("mode", wire(&boundary.mode))], boundary.note.to_owned()))
    }

    fn pin_added(&mut self, pin_id: &str, text: &str, source: PinSource, line: &Line<'_>) -> Option<LogLine> {
        if !self.pins.iter().any(|p| p.id == pin_id) {
            self.pins.push(Pin { id: pin_id.to_owned(), text: text.to_owned(), source });
        }
        Some(line.worded("pinned", &[("text", short(text, 200))], format!("Pinned: {}", short(text, 200))))
    }
}

impl SessionState {
    /// The stable hash of the model-visible messages.
    pub fn messages_hash(&self) -> String {
        self.digest.of(&self.messages).map_or_else(|| messages_hash(&self.messages), |(hash, _)| hash)
    }

    /// The estimated tokens of the model-visible messages (`estimate_messages_tokens`).
    pub fn messages_tokens(&self) -> u64 {
        self.digest.of(&self.messages).map_or_else(|| crate::llm::estimate_messages_tokens(&self.messages), |(_, tokens)| tokens)
    }

    /// True while the session waits for the user (an approval or an answer).
    pub fn is_blocked(&self) -> bool {
        self.pending_approval.is_some() || self.pending_question.is_some()
    }
}

/// What the model reads when the person restores a checkpoint: a user-role note (a
/// system message in mid-conversation is refused by some local servers' chat
/// templates). Part of the model-visible messages, so its wording is fixed: changing
/// it would make replays of old logs differ from what their models were sent.
pub fn rewound_note(checkpoint_id: &str, to_sequence: u64, version: u32) -> String {
    format!(
        "[Inkstone] The person restored checkpoint {checkpoint_id} (made at event {to_sequence} of this session). The project's source and saved drafts are back to that point, as version {version}; changes made after it are no longer in the working copy (they stay in the version history). Read the project again before proposing changes."
    )
}

/// `sha256:<hex>` of the JSON serialization of `messages`.
pub fn messages_hash(messages: &[Message]) -> String {
    let mut hashing = Sha256::new();
    // Serializing plain structs of strings cannot fail; were it to, the hash would be
    // of what was written, still a stable answer.
    let _ = serde_json::to_writer(Hashing(&mut hashing), messages);
    format!("sha256:{}", hex::encode(hashing.finalize()))
}

/// The result of replaying a log.
#[derive(Debug, Clone)]
pub struct Replay {
    pub state: SessionState,
}

impl Replay {
    pub fn lines(&self) -> &[LogLine] {
        &self.state.lines
    }
    pub fn timeline(&self) -> &super::timeline::Timeline {
        &self.state.timeline
    }
    pub fn messages(&self) -> &[Message] {
        &self.state.messages
    }
    pub fn messages_hash(&self) -> String {
        self.state.messages_hash()
    }
}

/// Rebuilds the session state (the panel's timeline, the model-visible messages) from a log.
pub fn replay<'a>(events: impl IntoIterator<Item = &'a Event>) -> Replay {
    let mut state = SessionState::default();
    for event in events {
        state.apply(event);
    }
    Replay { state }
}

/// True for statuses that count as a failure for the circuit breaker.
pub fn is_failure(status: ToolStatus) -> bool {
    !matches!(status, ToolStatus::Success)
}

#[cfg(test)]
mod tests;
