//! A scripted owner: a fixed plan of steps run over the harness's log, for work whose
//! order the engine decides (an optimization run) rather than the model's tool calls.
//!
//! The script uses the harness's machinery and nothing of its own: events are appended
//! with [`Harness::append_event`] (folded into the live state by the same
//! `SessionState::apply` that [`super::replay`] uses), model calls go through
//! [`super::model_call::stream_reply`] (metered by `Kernel::model_chat`, one usage
//! record per call, under the owner's [`Purpose`]), and a stopped script resumes from
//! its log with [`Recorded`]: the plan runs again from its first step, each event it
//! would append must equal the recorded one (it is shown again, not written again) and
//! each model call takes the recorded reply, until the record ends and the script goes
//! on live. Every step between model calls must be deterministic for that to hold.

use serde_json::json;

use super::event::{Event, EventBody};
use super::model_call::{answered, broken_off, stream_reply, Checkpoints, Streamed, INTERRUPTED};
use super::turn::Emit;
use super::{messages_hash, Harness, Live, Meta, Purpose};
use crate::error::{ApiError, ErrorCode};
use crate::llm::{ChatRequest, FinishReason, Message, ModelCall, ResponseFormat};
use crate::store::{Batch, Durability};

/// The stage of the marker a resume writes.
pub const RESUME_STAGE: &str = "resume";

/// The turn id a script's live deltas carry.
const SCRIPT_TURN: &str = "run";

/// Why a script stopped early.
pub(crate) enum Stop {
    Cancelled,
    Failed(ApiError),
}

impl<E: Into<ApiError>> From<E> for Stop {
    fn from(error: E) -> Self {
        Stop::Failed(error.into())
    }
}

/// The log of a stopped script, replayed on resume (see the module docs).
pub(crate) struct Recorded {
    /// The events after the owner's start, without resume markers, without its end
    /// (a failed script goes on from before it) and without model calls that never
    /// got their reply.
    events: Vec<Event>,
    next: usize,
}

impl Recorded {
    pub(crate) fn new(log: &[Event]) -> Recorded {
        let kept: Vec<&Event> = log
            .iter()
            .filter(|e| !matches!(&e.body, EventBody::RunStarted { .. } | EventBody::RunEnded { .. }))
            .filter(|e| !matches!(&e.body, EventBody::RunStage { stage, .. } if stage == RESUME_STAGE))
            .collect();
        let mut events = Vec::new();
        for (i, event) in kept.iter().enumerate() {
            let answered = matches!(kept.get(i + 1).map(|e| &e.body), Some(EventBody::AssistantMessage { interrupted: false, .. }));
            if matches!(event.body, EventBody::ModelCallStarted { .. }) && !answered {
                continue;
            }
            events.push((*event).clone());
        }
        Recorded { events, next: 0 }
    }

    /// How many events the record holds.
    pub(crate) fn len(&self) -> usize {
        self.events.len()
    }

    /// Whether the record holds a `stage` stage `state` event.
    pub(crate) fn reached(&self, stage: &str, state: &str) -> bool {
        self.events.iter().any(|e| matches!(&e.body, EventBody::RunStage { stage: s, state: t, .. } if s == stage && t == state))
    }

    fn diverged(recorded: Option<&Event>, body: &EventBody) -> ApiError {
        ApiError::new(
            ErrorCode::Conflict,
            "The run cannot be resumed: the project, its drafts or the platforms' rules changed since it stopped, so its recorded replies no longer fit. Nothing was proposed or applied.",
        )
        .hint("start_again", "Start a new optimization.")
        .details(json!({"recorded": recorded.map(|e| e.body.kind_name()), "now": body.kind_name()}))
    }
}

/// A model call's reply as a step reads it: its text, and whether the output limit
/// cut it off.
pub(crate) struct Reply {
    pub text: String,
    pub cut_off: bool,
}

/// A script in progress: the log it appends to, its record when resuming, and what
/// its model calls cost.
pub(crate) struct Script<'a, 'e> {
    pub h: Harness<'a>,
    pub live: &'a Live,
    pub emit: Emit<'e>,
    purpose: Purpose,
    profile_id: String,
    recorded: Option<Recorded>,
    /// The context snapshot the script's events point at (none before it has one).
    pub snapshot_id: Option<String>,
    pub model_turns: u32,
    /// The model the server reported (empty until a live call answers).
    pub model: String,
    pub model_micros: u64,
    pub model_calls: u32,
    /// A model call failed (the server, the connection, the key): another try may get
    /// the reply, so the script can be resumed from its log.
    pub model_failed: bool,
}

impl<'a, 'e> Script<'a, 'e> {
    pub(crate) fn new(h: Harness<'a>, live: &'a Live, purpose: Purpose, profile_id: &str, recorded: Option<Recorded>, emit: Emit<'e>) -> Script<'a, 'e> {
        Script {
            h,
            live,
            emit,
            purpose,
            profile_id: profile_id.to_owned(),
            recorded,
            snapshot_id: None,
            model_turns: 0,
            model: String::new(),
            model_micros: 0,
            model_calls: 0,
            model_failed: false,
        }
    }

    /// [`Stop::Cancelled`] once the person asked the script to stop.
    pub(crate) fn check_interrupt(&self) -> Result<(), Stop> {
        if self.live.interrupted() {
            return Err(Stop::Cancelled);
        }
        Ok(())
    }

    fn meta(&self) -> Meta {
        Meta { context_snapshot_id: self.snapshot_id.clone(), ..Meta::default() }
    }

    pub(crate) fn append(&mut self, body: EventBody) -> Result<(), ApiError> {
        self.append_with(body, Batch::new())
    }

    /// Appends `body` with `extra` in the same transaction (group-committed), or, while
    /// a record lasts, checks it against the recorded event and shows that again.
    pub(crate) fn append_with(&mut self, body: EventBody, extra: Batch) -> Result<(), ApiError> {
        if let Some(recorded) = &mut self.recorded {
            if let Some(event) = recorded.events.get(recorded.next) {
                if event.body != body {
                    return Err(Recorded::diverged(Some(event), &body));
                }
                recorded.next += 1;
                (self.emit)(event);
                return Ok(());
            }
            self.recorded = None;
        }
        let event = self.h.append_event(self.live, self.meta(), body, extra, Durability::Grouped)?;
        (self.emit)(&event);
        Ok(())
    }

    /// Appends the event and records that `stage` builds under the write lock, as one
    /// durable transaction (see [`Harness::append_staged`]).
    pub(crate) fn append_staged<T>(&mut self, stage: impl FnOnce(&mut Batch) -> Result<(EventBody, T), ApiError>) -> Result<T, ApiError> {
        let (event, value) = self.h.append_staged(self.live, self.meta(), Durability::Durable, stage)?;
        (self.emit)(&event);
        Ok(value)
    }

    /// The recorded reply of the next model call while a record lasts.
    fn recorded_reply(&mut self) -> Result<Option<Reply>, ApiError> {
        let Some(recorded) = &mut self.recorded else { return Ok(None) };
        let next = recorded.next;
        match (recorded.events.get(next).map(|e| &e.body), recorded.events.get(next + 1).map(|e| &e.body)) {
            (None, _) => {
                self.recorded = None;
                Ok(None)
            }
            (Some(EventBody::ModelCallStarted { .. }), Some(EventBody::AssistantMessage { text, finish_reason, .. })) => {
                let reply = Reply { text: text.clone(), cut_off: finish_reason == "length" };
                for event in &recorded.events[next..next + 2] {
                    (self.emit)(event);
                }
                recorded.next += 2;
                Ok(Some(reply))
            }
            (Some(_), _) => {
                let event = recorded.events.get(next).cloned();
                Err(Recorded::diverged(event.as_ref(), &EventBody::ModelCallStarted { model_turn: self.model_turns + 1, messages_hash: String::new(), message_count: 0 }))
            }
        }
    }

    /// One model call of `system` and `messages` (the step's conversation), its reply
    /// limited to `max_output` tokens, with the server asked for `response_format` when
    /// given. While a record lasts, the recorded reply.
    /// `error` said as a likely CONTEXT_TOO_LONG when the stream was cut off before a
    /// word on a request that fills the profile's window (llama-cpp-python reports an
    /// overflow only in its log), as a drafting turn says it.
    fn likely_overflow(&self, error: ApiError, request: &ChatRequest) -> ApiError {
        let Ok(profile) = self.h.kernel.llm_profile(&self.profile_id) else { return error };
        let Ok(calibration) = super::compaction::profile_context(self.h.store(), &profile.id) else { return error };
        super::model_call::likely_overflow(error, request, &calibration, u64::from(profile.context_window), profile.server_window.map(|w| w.server))
    }

    pub(crate) fn model_call(&mut self, system: &str, messages: Vec<Message>, max_output: u32, response_format: Option<ResponseFormat>) -> Result<Reply, Stop> {
        self.check_interrupt()?;
        if let Some(reply) = self.recorded_reply()? {
            self.model_turns += 1;
            return Ok(reply);
        }
        self.model_turns += 1;
        let body = EventBody::ModelCallStarted { model_turn: self.model_turns, messages_hash: messages_hash(&messages), message_count: messages.len() as u32 };
        self.append(body)?;
        let mut request = ChatRequest::new(std::iter::once(Message::system(system)).chain(messages).collect());
        request.max_output_tokens = Some(max_output);
        if let Some(format) = response_format {
            request.response_format = format;
        }
        let owner = &self.live.owner;
        let call = ModelCall { profile: &self.profile_id, purpose: self.purpose.as_str(), session_id: owner.session_id(), run_id: owner.run_id() };
        let Streamed { result, partial, elapsed } = stream_reply(self.h, self.live, SCRIPT_TURN, call, &request, Checkpoints::None, self.emit)?;
        self.model_micros += u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
        self.model_calls += 1;
        match result {
            Ok(reply) => {
                if self.model.is_empty() {
                    self.model = reply.model.clone();
                }
                let out = Reply { text: reply.text.clone(), cut_off: reply.finish_reason == FinishReason::Length };
                // A script offers no tools: a tool call the model made anyway is not its reply.
                self.append(answered(crate::llm::ChatResponse { tool_calls: Vec::new(), ..reply }))?;
                Ok(out)
            }
            Err(error) if error.code == ErrorCode::Cancelled || self.live.interrupted() => {
                self.append(broken_off(partial, INTERRUPTED))?;
                Err(Stop::Cancelled)
            }
            Err(error) => {
                self.model_failed = true;
                Err(Stop::Failed(self.likely_overflow(error, &request)))
            }
        }
    }
}
