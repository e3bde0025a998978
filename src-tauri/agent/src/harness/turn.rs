//! The turn loop. A user message (or a decision that unblocks a turn) starts it; it
//! records the message, then alternates model calls (`model_call`) and the tool calls
//! they ask for (`execution`) until the model finishes, the turn blocks on an approval
//! or a question, it is interrupted, or a limit trips.
//!
//! The loop works for an [`Owner`](super::Owner) within a [`Scope`] (a session today;
//! an optimization run uses the same loop) and never reads the session record itself.
//! Exactly one turn runs per log at a time: a [`TurnClaim`] held for the whole drive
//! and released when it is dropped, whatever path leaves it.
//!
//! Failures are tool results (unknown tool, schema violation with the JSON pointer,
//! permission denied, timeout, interrupted, tool error); only an engine fault ends a
//! turn with an error.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use super::event::{EventBody, Selection, ToolStatus, TurnEndReason};
use super::log::{ApprovalRecord, Session};
use super::{Harness, Live, Meta, Scope, TurnClaim};
use crate::error::{ApiError, ErrorCode, Hint};
use crate::llm::Cancel;
use crate::proposals::checkpoints::{self, Checkpoint, CheckpointReason};
use crate::store::{Batch, Durability};

/// The longest user message, in characters.
pub const MAX_MESSAGE_CHARS: usize = 20_000;

/// How a submit ended.
#[derive(Debug, Clone, PartialEq)]
pub enum SubmitOutcome {
    /// A turn was running; the message waits for its boundary.
    Queued,
    /// The turn (and any queued ones after it) ended.
    Finished { reason: TurnEndReason, stats: TurnStats },
}

/// Where the time of a drive went.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TurnStats {
    pub model_calls: u32,
    pub model_time: Duration,
    pub durable_syncs: u32,
    pub sync_time: Duration,
    pub total_time: Duration,
}

pub(crate) type Emit<'a> = &'a mut dyn FnMut(&super::Event);

enum Start {
    Message { text: String, was_queued: bool, selection: Option<Selection> },
    Resume,
}

pub(super) enum Flow {
    Continue,
    End(TurnEndReason, String, Vec<Hint>),
}

pub(super) fn hint(id: &str, message: &str) -> Hint {
    Hint::new(id, message)
}

/// One turn in progress: what it works for, its counters and its detectors.
pub(super) struct Turn<'a, 'e> {
    pub(super) engine: Harness<'a>,
    pub(super) scope: &'a Scope,
    pub(super) live: &'a Live,
    pub(super) emit: Emit<'e>,
    pub(super) turn_id: String,
    pub(super) model_turns: u32,
    /// The kind of the last failure and how many came in a row.
    pub(super) breaker: Option<(ToolStatus, u32)>,
    pub(super) repeats: HashMap<String, u32>,
    pub(super) loop_tripped: Option<String>,
    /// The first write of this turn that failed (its tool, call id and status): the
    /// later writes of the turn are not run.
    pub(super) failed_write: Option<(String, String, ToolStatus)>,
    /// Estimated tokens the model's context still has room for: what tool results may
    /// take inline. Set by each model call; worked out on first use in a resumed turn.
    pub(super) result_room: Option<u64>,
    pub(super) stats: &'a mut TurnStats,
    /// The log sequence of this turn's `turn_started` (the `turn` of its proposals).
    pub(super) turn_sequence: Option<u64>,
    /// Proposals the tools of this turn made.
    pub(super) proposals_made: AtomicUsize,
    /// The one reactive compaction (after CONTEXT_TOO_LONG) of this turn was used.
    pub(super) reactive_used: bool,
}

impl Turn<'_, '_> {
    pub(super) fn append(&mut self, meta: Meta, body: EventBody, extra: Batch, durability: Durability) -> Result<super::Event, ApiError> {
        let meta = Meta { turn_id: Some(self.turn_id.clone()), ..meta };
        let started = Instant::now();
        let event = self.engine.append_event(self.live, meta, body, extra, durability)?;
        if durability == Durability::Durable {
            self.stats.durable_syncs += 1;
            self.stats.sync_time += started.elapsed();
        }
        (self.emit)(&event);
        Ok(event)
    }

    pub(super) fn append_simple(&mut self, body: EventBody, durability: Durability) -> Result<super::Event, ApiError> {
        self.append(Meta::default(), body, Batch::new(), durability)
    }

    pub(super) fn state<T>(&self, f: impl FnOnce(&super::SessionState) -> T) -> T {
        f(&self.live.lock_state())
    }

    /// Compacts the conversation within this turn (its events carry the turn id).
    pub(super) fn compact(
        &mut self,
        trigger: super::compaction::CompactionTrigger,
        keep: super::compaction::Keep,
        room: super::compaction::Room,
    ) -> Result<super::compaction::Outcome, ApiError> {
        let (engine, scope, live) = (self.engine, self.scope, self.live);
        let mut stats = TurnStats::default();
        let outcome = {
            let mut append = |body: EventBody, durability: Durability| self.append_simple(body, durability);
            super::compaction::compact(engine, scope, live, trigger, keep, room, &mut append, &mut stats)
        };
        self.stats.model_calls += stats.model_calls;
        self.stats.model_time += stats.model_time;
        self.result_room = None;
        outcome
    }

    fn run(&mut self, start: Start) -> Result<(TurnEndReason, String, Vec<Hint>), ApiError> {
        let started = self.append_simple(EventBody::TurnStarted {}, Durability::Grouped)?;
        self.turn_sequence = Some(started.sequence);
        // The project as it stands before the turn, read once: its checkpoint, in memory,
        // is kept only when the turn makes more than one proposal; the intent's rules
        // read it too. (A project that cannot be read: no checkpoint, the intent as it is.)
        let project = crate::project::load(self.engine.store(), &self.scope.project_id).ok();
        let before = project.as_ref().and_then(|p| checkpoints::capture_of(self.engine.kernel, self.scope.owner.id(), p, "", CheckpointReason::BeforeTurn, started.sequence).ok());
        if let Start::Message { text, was_queued, selection } = start {
            self.append_simple(EventBody::UserMessage { text: text.clone(), was_queued, selection }, Durability::Durable)?;
            if let Some(project) = &project {
                self.update_intent(&text, project)?;
            }
        }
        let flow = self.turn_loop()?;
        let (reason, message, hints) = match flow {
            Flow::End(reason, message, hints) => (reason, message, hints),
            Flow::Continue => (TurnEndReason::Completed, String::new(), Vec::new()),
        };
        self.keep_checkpoints(before)?;
        self.append_simple(EventBody::TurnEnded { reason, message: message.clone(), hints: hints.clone() }, Durability::Durable)?;
        Ok((reason, message, hints))
    }

    /// Reads the session's intent from the person's message (rules, no model call) and
    /// logs it when it changed. Drafting sessions only.
    fn update_intent(&mut self, text: &str, project: &crate::model::Project) -> Result<(), ApiError> {
        if self.scope.purpose != super::Purpose::Drafting {
            return Ok(());
        }
        // The project and its brand are all the rules read (not the versions, comments
        // and media the model's context gathers).
        let Ok(brand) = crate::project::brand(self.engine.store(), project) else { return Ok(()) };
        let current = self.state(|s| s.intent.clone());
        let next = crate::intent::update(&current, text, &super::project_hints(project, brand.as_ref()));
        if next != current {
            self.append_simple(EventBody::IntentUpdated { intent: next, by: super::event::IntentSource::Message }, Durability::Grouped)?;
        }
        Ok(())
    }

    /// A checkpoint of the scope's project now (reads only); `None` when the project
    /// cannot be read (the turn then goes on without one). Named when it is kept.
    fn capture(&self, reason: CheckpointReason, sequence: u64) -> Option<Checkpoint> {
        checkpoints::capture(self.engine.kernel, self.scope.owner.id(), &self.scope.project_id, "", reason, sequence).ok()
    }

    /// When the turn made more than one proposal, stores the checkpoint from before it
    /// and one of now, durably, so the person can go back to either.
    fn keep_checkpoints(&mut self, before: Option<Checkpoint>) -> Result<(), ApiError> {
        let made = self.proposals_made.load(Ordering::SeqCst);
        let Some(mut before) = before.filter(|_| made > 1) else { return Ok(()) };
        let sequence = self.state(|s| s.last_sequence);
        let Some(after) = self.capture(CheckpointReason::AfterTurn, sequence) else { return Ok(()) };
        // Language-neutral names: an id and the count, worded by the UI (the English
        // stays in `label` for the CLI).
        let proposals = [("proposals", made.to_string())];
        let after = after.worded("turn_after", format!("After a turn that made {made} proposals"), &proposals);
        before = before.worded("turn_before", format!("Before a turn that made {made} proposals"), &proposals);
        let mut batch = Batch::new();
        batch.put(&before)?;
        batch.put(&after)?;
        let _guard = self.engine.write_lock();
        self.engine.store().apply(batch, Durability::Durable)?;
        Ok(())
    }

    fn turn_loop(&mut self) -> Result<Flow, ApiError> {
        loop {
            if self.live.interrupted() {
                return Ok(Flow::End(TurnEndReason::Interrupted, "Stopped by the user.".to_owned(), Vec::new()));
            }
            if self.state(|s| !s.open_calls.is_empty()) {
                if let Flow::End(reason, message, hints) = self.process_calls()? {
                    return Ok(Flow::End(reason, message, hints));
                }
                continue;
            }
            if let Flow::End(reason, message, hints) = self.model_call()? {
                return Ok(Flow::End(reason, message, hints));
            }
        }
    }
}

/// Answers every open block before a new message: a pending approval is superseded
/// and every call without a result is answered as cancelled.
fn close_blocks(engine: Harness<'_>, live: &Live, emit: Emit<'_>) -> Result<(), ApiError> {
    let (pending, open) = {
        let state = live.lock_state();
        (state.pending_approval.clone(), state.open_calls.clone())
    };
    if let Some(pending) = pending {
        let meta = Meta { tool_use_id: Some(pending.tool_use_id.clone()), ..Meta::default() };
        let event = engine.append_event(
            live,
            meta,
            EventBody::ApprovalResolved {
                request_id: pending.request_id,
                approved: false,
                rule_id: None,
                decided_by: "user".to_owned(),
                note: "Superseded by a new message.".to_owned(),
                note_id: Some("superseded_by_new_message".to_owned()),
            },
            Batch::new(),
            Durability::Durable,
        )?;
        emit(&event);
    }
    for call in open {
        let meta = Meta { tool_use_id: Some(call.id.clone()), ..Meta::default() };
        let content = json!({"error": "cancelled", "message": "Not run: the user sent a new message instead."}).to_string();
        let event = engine.append_event(
            live,
            meta,
            EventBody::ToolResult { tool: call.name.clone(), status: ToolStatus::Cancelled, content, result_ref: None, reused_execution: false },
            Batch::new(),
            Durability::Grouped,
        )?;
        emit(&event);
    }
    Ok(())
}

/// Runs turns until one ends with nothing queued behind it. The claim is released when
/// the last turn ends (or, on an error, when it is dropped).
fn drive(engine: Harness<'_>, scope: &Scope, live: &Live, mut claim: TurnClaim<'_>, emit: Emit<'_>, mut start: Start) -> Result<SubmitOutcome, ApiError> {
    let mut stats = TurnStats::default();
    let began = Instant::now();
    loop {
        live.interrupt.store(false, Ordering::SeqCst);
        *live.cancel.lock().unwrap_or_else(|p| p.into_inner()) = Cancel::new();
        if matches!(start, Start::Message { .. }) {
            close_blocks(engine, live, &mut *emit)?;
        }
        let turn_id = engine.new_id("trn");
        let mut turn = Turn {
            engine,
            scope,
            live,
            emit: &mut *emit,
            turn_id,
            model_turns: 0,
            breaker: None,
            repeats: HashMap::new(),
            loop_tripped: None,
            failed_write: None,
            result_room: None,
            stats: &mut stats,
            turn_sequence: None,
            proposals_made: AtomicUsize::new(0),
            reactive_used: false,
        };
        let reason = match turn.run(start) {
            Ok((reason, _, _)) => reason,
            Err(error) => {
                // Best effort: close the turn so the log stays consistent.
                let body = EventBody::TurnEnded { reason: TurnEndReason::EngineFault, message: error.message.clone(), hints: error.hints.clone() };
                let _ = turn.append_simple(body, Durability::Durable);
                return Err(error);
            }
        };
        match claim.next_or_release() {
            Some(next) => {
                start = Start::Message { text: next.text, was_queued: true, selection: next.selection };
            }
            None => {
                stats.total_time = began.elapsed();
                return Ok(SubmitOutcome::Finished { reason, stats });
            }
        }
    }
}

fn check_open(engine: Harness<'_>, session: &Session) -> Result<(), ApiError> {
    if session.archived {
        return Err(ApiError::validation("sessionId", "The session is archived.")
            .action("unarchive_session", &[("session", &session.id)])
            .hint("new_session", "Start a new session."));
    }
    engine.check_project_open(session)
}

/// Submits a user message (scoped to `selection`, already checked against the source
/// by the caller): runs the turn now, or queues it behind the running one.
pub fn submit_message(engine: Harness<'_>, session_id: &str, text: &str, selection: Option<Selection>, emit: Emit<'_>) -> Result<SubmitOutcome, ApiError> {
    let session = engine.load_session(session_id)?;
    check_open(engine, &session)?;
    let text = crate::error::required_text("text", text, MAX_MESSAGE_CHARS)?;
    let scope = engine.session_scope(&session)?;
    let live = engine.live_session(session_id)?;
    let claim = TurnClaim::take_or(&live, || {
        let event =
            engine.append_event(&live, Meta::default(), EventBody::MessageQueued { text: text.clone(), selection: selection.clone() }, Batch::new(), Durability::Durable)?;
        emit(&event);
        Ok::<_, ApiError>(SubmitOutcome::Queued)
    });
    match claim {
        Ok(claim) => drive(engine, &scope, &live, claim, emit, Start::Message { text, was_queued: false, selection }),
        Err(queued) => queued,
    }
}

/// The note of an approval refused because the change moved since it was shown.
const STALE_CHANGE_NOTE: &str =
    "Not applied: the proposal's change is no longer the one shown when approval was asked (a hunk was rejected, the proposal was replaced, or its base moved).";
/// Its id, for the UI to word.
pub(crate) const STALE_CHANGE_NOTE_ID: &str = "stale_change";

/// Records the user's decision on a pending approval and continues the turn.
/// The person's answer to a permission prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Deny,
    AllowOnce,
    /// Allow, and store the "always allow" rule the prompt offered, in this scope.
    AllowAlways(super::AllowScope),
}

pub fn resolve_approval(engine: Harness<'_>, session_id: &str, request_id: &str, answer: Answer, note: &str, decided_by: &str, emit: Emit<'_>) -> Result<SubmitOutcome, ApiError> {
    let session = engine.load_session(session_id)?;
    check_open(engine, &session)?;
    let scope = engine.session_scope(&session)?;
    let live = engine.live_session(session_id)?;
    let claim = TurnClaim::take(&live)?;
    let pending = live.lock_state().pending_approval.clone();
    let Some(pending) = pending.filter(|p| p.request_id == request_id) else {
        return Err(ApiError::new(ErrorCode::Conflict, format!("Approval request {request_id} is not pending (it was decided, superseded, or never asked)."))
            .action("show_session", &[("session", session_id)])
            .details(json!({"requestId": request_id})));
    };
    // "Always allow" only where the prompt offered it: never for a tool that always
    // asks (the offer is absent). Refused before anything is written.
    let (approved, offer) = match (answer, &pending.offer) {
        (Answer::Deny, _) => (false, None),
        (Answer::AllowOnce, _) => (true, None),
        (Answer::AllowAlways(scope_choice), Some(offer)) => (true, Some((scope_choice, offer.clone()))),
        (Answer::AllowAlways(_), None) => {
            return Err(ApiError::new(ErrorCode::Validation, format!("`{}` always asks: this request cannot be allowed always, only once.", pending.tool))
                .details(json!({"requestId": request_id, "tool": pending.tool})));
        }
    };
    // The change the person was shown is bound by its hunk-set hash: when the
    // proposal no longer yields the same set (the person rejected a hunk meanwhile, a
    // newer proposal replaced it, its base moved), the approval is refused as stale and
    // recorded as such; the turn goes on and the call asks again with the change as it
    // is now (or is answered with why it cannot apply).
    // A request logged before every hunk had to be listed, which left some out, is
    // refused the same way: the person was not shown all it applies.
    let stale = match pending.change.as_deref() {
        Some(change) if approved && change.omitted_hunks > 0 => true,
        Some(super::event::ApprovalChange { hunk_set_hash: Some(shown), .. }) if approved => {
            let arguments = live.lock_state().open_calls.iter().find(|c| c.id == pending.tool_use_id).map(|c| c.arguments.clone()).unwrap_or_default();
            super::execution::current_hunk_set_hash(engine.store(), &scope.project_id, &arguments)?.as_deref() != Some(shown.as_str())
        }
        _ => false,
    };
    let (approved, note, note_id) = if stale { (false, STALE_CHANGE_NOTE, Some(STALE_CHANGE_NOTE_ID.to_owned())) } else { (approved, note, None) };
    let record = ApprovalRecord {
        request_id: pending.request_id.clone(),
        session_id: scope.owner.session_id().unwrap_or_default().to_owned(),
        run_id: scope.owner.run_id().map(str::to_owned),
        workspace_id: scope.workspace_id.clone(),
        project_id: scope.project_id.clone(),
        consumed_by: None,
        tool: pending.tool.clone(),
        input_hash: pending.input_hash.clone(),
        target_version: pending.target_version,
        idempotency_key: pending.idempotency_key.clone(),
        approved,
        decided_by: decided_by.to_owned(),
        decided_at: engine.now(),
    };
    let mut extra = Batch::new();
    extra.put(&record)?;
    // The rule is stored with the answer, in one write; a stale change makes none.
    let rule_id = match offer {
        Some((scope_choice, offer)) if approved => {
            let rule = super::AllowRule {
                id: engine.new_id("rul"),
                workspace_id: scope.workspace_id.clone(),
                tool: offer.tool,
                scope: scope_choice,
                pattern: offer.pattern,
                project_id: scope.project_id.clone(),
                owner_id: scope.owner.id().to_owned(),
                request_id: pending.request_id.clone(),
                created_by: decided_by.to_owned(),
                created_at: engine.now(),
                allowed_count: 0,
                last_allowed_at: None,
            };
            extra.put(&rule)?;
            Some(rule.id)
        }
        _ => None,
    };
    let meta = Meta { tool_use_id: Some(pending.tool_use_id.clone()), ..Meta::default() };
    let event = engine.append_event(
        &live,
        meta.clone(),
        EventBody::ApprovalResolved { request_id: request_id.to_owned(), approved, rule_id, decided_by: decided_by.to_owned(), note: note.to_owned(), note_id },
        extra,
        Durability::Durable,
    )?;
    emit(&event);
    if !approved && !stale {
        let message = if note.is_empty() { "The user denied this call.".to_owned() } else { format!("The user denied this call: {note}") };
        let content = json!({"error": "permission_denied", "message": message}).to_string();
        let event = engine.append_event(
            &live,
            meta,
            EventBody::ToolResult { tool: pending.tool.clone(), status: ToolStatus::Denied, content, result_ref: None, reused_execution: false },
            Batch::new(),
            Durability::Durable,
        )?;
        emit(&event);
    }
    drive(engine, &scope, &live, claim, emit, Start::Resume)
}

/// Records the user's answer to a pending question and continues the turn.
pub fn answer_question(engine: Harness<'_>, session_id: &str, question_id: &str, answer: &str, emit: Emit<'_>) -> Result<SubmitOutcome, ApiError> {
    let session = engine.load_session(session_id)?;
    check_open(engine, &session)?;
    let answer = crate::error::required_text("answer", answer, MAX_MESSAGE_CHARS)?;
    let scope = engine.session_scope(&session)?;
    let live = engine.live_session(session_id)?;
    let claim = TurnClaim::take(&live)?;
    let pending = live.lock_state().pending_question.clone();
    let Some(pending) = pending.filter(|p| p.question_id == question_id) else {
        return Err(ApiError::new(ErrorCode::Conflict, format!("Question {question_id} is not pending.")).details(json!({"questionId": question_id})));
    };
    let meta = Meta { tool_use_id: Some(pending.tool_use_id.clone()), ..Meta::default() };
    let event =
        engine.append_event(&live, meta.clone(), EventBody::QuestionAnswered { question_id: question_id.to_owned(), answer: answer.clone() }, Batch::new(), Durability::Durable)?;
    emit(&event);
    let content = json!({"answer": answer}).to_string();
    let event = engine.append_event(
        &live,
        meta,
        EventBody::ToolResult { tool: "ask_user_question".to_owned(), status: ToolStatus::Success, content, result_ref: None, reused_execution: false },
        Batch::new(),
        Durability::Durable,
    )?;
    emit(&event);
    drive(engine, &scope, &live, claim, emit, Start::Resume)
}

/// Compacts a session outside a turn (`session.compact`): its own model call over the
/// stored log, so a session that no longer fits can be compacted without first
/// being sent to a model. Errors: CONFLICT while a turn runs or while the session
/// waits for an approval or an answer (a summary cannot split a call from its
/// result); validation when archived.
pub fn compact_session(engine: Harness<'_>, session_id: &str, emit: Emit<'_>) -> Result<(super::compaction::Outcome, TurnStats), ApiError> {
    let session = engine.load_session(session_id)?;
    check_open(engine, &session)?;
    let scope = engine.session_scope(&session)?;
    let live = engine.live_session(session_id)?;
    let _claim = TurnClaim::take(&live)?;
    if live.lock_state().is_blocked() || !live.lock_state().open_calls.is_empty() {
        return Err(ApiError::new(ErrorCode::Conflict, "The session waits for an approval or an answer; compact it after that.")
            .hint("answer_first", "Answer the pending approval or question first."));
    }
    live.interrupt.store(false, Ordering::SeqCst);
    *live.cancel.lock().unwrap_or_else(|p| p.into_inner()) = Cancel::new();
    let mut stats = TurnStats::default();
    let began = Instant::now();
    let mut append = |body: EventBody, durability: Durability| {
        let event = engine.append_event(&live, Meta::default(), body, Batch::new(), durability)?;
        emit(&event);
        Ok(event)
    };
    let room = super::compaction::session_room(engine, &session, &live.lock_state().clone())?;
    let outcome =
        super::compaction::compact(engine, &scope, &live, super::compaction::CompactionTrigger::Manual, super::compaction::Keep::LatestTurn, room, &mut append, &mut stats)?;
    stats.total_time = began.elapsed();
    Ok((outcome, stats))
}

/// After a restart: a turn left open is closed consistently. A half-streamed reply
/// becomes an interrupted assistant message holding the text its `assistant_streamed`
/// checkpoints kept; a pending approval or question stays
/// pending; calls that were running are answered as interrupted.
pub(crate) fn recover(engine: Harness<'_>, live: &Arc<Live>) -> Result<(), ApiError> {
    let (open_turn, model_call_open, streamed, blocked, open_calls, pending_use) = {
        let state = live.lock_state();
        let pending_use = state.pending_approval.as_ref().map(|p| p.tool_use_id.clone()).or_else(|| state.pending_question.as_ref().map(|q| q.tool_use_id.clone()));
        let blocked = state.pending_approval.is_some() || state.pending_question.is_some();
        (state.open_turn.clone(), state.model_call_open, state.streamed.clone(), blocked, state.open_calls.clone(), pending_use)
    };
    // A compaction the process died in: nothing was replaced (the boundary is one
    // event), so it is closed as failed without counting against the breaker.
    let open_compaction = {
        let state = live.lock_state();
        state.compaction.open.map(|trigger| (trigger, state.compaction.consecutive_failures))
    };
    if let Some((trigger, consecutive)) = open_compaction {
        let body = EventBody::CompactionFailed {
            trigger,
            consecutive,
            message: "The app stopped during this compaction; nothing was replaced.".to_owned(),
            input_tokens: 0,
            output_tokens: 0,
        };
        engine.append_event(live, Meta { turn_id: open_turn.clone(), ..Meta::default() }, body, Batch::new(), Durability::Durable)?;
    }
    // Calls can also be left open outside a turn: a crash after a superseded approval
    // was recorded and before the cancelled results were synced.
    let stray_calls = !blocked && !open_calls.is_empty();
    if open_turn.is_none() && !stray_calls {
        return Ok(());
    }
    let meta = || Meta { turn_id: open_turn.clone(), ..Meta::default() };
    if model_call_open {
        // What streamed before the stop, as far as its checkpoints reached disk.
        let body =
            EventBody::AssistantMessage { text: streamed, tool_calls: Vec::new(), finish_reason: "interrupted".to_owned(), interrupted: true, input_tokens: 0, output_tokens: 0 };
        engine.append_event(live, meta(), body, Batch::new(), Durability::Durable)?;
    }
    let (reason, message) = if blocked {
        let waiting = if live.lock_state().pending_approval.is_some() { TurnEndReason::BlockedOnApproval } else { TurnEndReason::BlockedOnQuestion };
        (waiting, "Still waiting for you after a restart.".to_owned())
    } else {
        for call in open_calls.iter().filter(|c| Some(&c.id) != pending_use.as_ref()) {
            let content = json!({"error": "interrupted", "message": "The app stopped while this call was pending; it did not complete."}).to_string();
            let tool_meta = Meta { tool_use_id: Some(call.id.clone()), ..meta() };
            engine.append_event(
                live,
                tool_meta,
                EventBody::ToolResult { tool: call.name.clone(), status: ToolStatus::Interrupted, content, result_ref: None, reused_execution: false },
                Batch::new(),
                Durability::Durable,
            )?;
        }
        (TurnEndReason::Restarted, "The app stopped during this turn; it was closed as interrupted.".to_owned())
    };
    if open_turn.is_none() {
        return Ok(());
    }
    engine.append_event(live, meta(), EventBody::TurnEnded { reason, message, hints: Vec::new() }, Batch::new(), Durability::Durable)?;
    Ok(())
}
