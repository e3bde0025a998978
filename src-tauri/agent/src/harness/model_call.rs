//! One model call of a turn: limits and budgets first, then the context (gathered by
//! `context::gather`, with the owner's constraints from `proposals`, assembled into an
//! immutable snapshot), the request with the
//! model-visible messages of the log, the metered call (`Kernel::model_chat`) with its
//! deltas streamed live, and the completed (or interrupted) reply appended.

use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use super::event::{EventBody, LayerEstimate, TurnEndReason};
use super::turn::{hint, Flow, Turn};
use super::Meta;
use crate::context::{assemble, gather};
use crate::error::{ApiError, ErrorCode};
use crate::llm::profile::LlmProfile;
use crate::llm::{estimate_message_tokens, estimate_request_tokens, ChatEvent, ChatRequest, Message, ModelCall};
use crate::store::{Batch, Durability, Kind};

/// A request sized to the window, with what sized it: its context snapshot, the
/// conversation's estimated tokens, the reply's reserve and the room's shares.
struct SizedRequest {
    request: ChatRequest,
    /// The hash of the request's messages (before the system message is put first).
    messages_hash: String,
    snapshot: crate::context::ContextSnapshot,
    conversation_tokens: u64,
    reserve: ReplyReserve,
    shares: super::compaction::Room,
}

impl Turn<'_, '_> {
    fn budget_check(&self, profile: &LlmProfile) -> Option<Flow> {
        let limits = &self.scope.limits;
        let (input, output) = self.state(|s| (s.input_tokens, s.output_tokens));
        if let Some(budget) = limits.token_budget {
            if input + output >= budget {
                return Some(Flow::End(
                    TurnEndReason::BudgetExceeded,
                    format!("The session's budget of {budget} tokens is spent ({} used); nothing more was sent.", input + output),
                    vec![hint("raise_budget", "Raise the session's token budget, or start a new session.")],
                ));
            }
        }
        if let Some(budget) = limits.cost_budget {
            let spent = crate::usage::cost(profile.input_price_per_mtok, profile.output_price_per_mtok, input, output).unwrap_or(0.0);
            if spent >= budget {
                return Some(Flow::End(
                    TurnEndReason::BudgetExceeded,
                    format!("The session's cost budget of {budget:.4} is spent ({spent:.4}); nothing more was sent."),
                    vec![hint("raise_budget", "Raise the session's cost budget, or start a new session.")],
                ));
            }
        }
        self.project_budget_check()
    }

    /// The project's budget, across its sessions (every metered call, compactions too).
    fn project_budget_check(&self) -> Option<Flow> {
        let store = self.engine.store();
        let budget = store.get::<crate::usage::ProjectBudget>(self.scope.project_id.as_bytes()).ok().flatten()?;
        if budget.token_budget.is_none() && budget.cost_budget.is_none() {
            return None;
        }
        let sessions: Vec<String> = store.scan::<super::Session>(b"").ok()?.into_iter().filter(|s| s.project_id == self.scope.project_id).map(|s| s.id).collect();
        let records = store.scan::<crate::usage::UsageRecord>(b"").ok()?;
        let spent = crate::usage::spent_by(&records, &sessions);
        let message = crate::usage::budget_exceeded("project", budget.token_budget, budget.cost_budget, spent)?;
        Some(Flow::End(
            TurnEndReason::BudgetExceeded,
            message,
            vec![hint("raise_project_budget", "Raise the project's budget in the AI panel (or with `project.setBudget`), then send the message again.")],
        ))
    }

    /// The room (estimated tokens) tool results may still take in the model's context:
    /// set by the last model call of this turn, else worked out as that call would
    /// (window − output reserve − conversation − the last context snapshot). Without a
    /// readable profile there is no cap here; the next model call reports the problem.
    pub(super) fn result_room(&mut self) -> Result<u64, ApiError> {
        if let Some(room) = self.result_room {
            return Ok(room);
        }
        let Ok(profile) = self.engine.llm_profile(&self.scope.profile_id) else { return Ok(u64::MAX) };
        let (conversation_tokens, snapshot_id, selection) = self.state(|s| (s.messages_tokens(), s.last_snapshot_id.clone(), s.selection.clone()));
        let max_output = ReplyReserve::for_step(self.scope.limits.max_output_tokens, &profile, selection.as_ref()).wanted;
        let context_tokens = match snapshot_id {
            Some(id) => self.engine.store().get::<crate::context::ContextSnapshot>(id.as_bytes())?.map(|s| s.layers.iter().map(|l| l.tokens).sum::<u64>()).unwrap_or(0),
            None => 0,
        };
        let room = u64::from(profile.context_window).saturating_sub(u64::from(max_output)).saturating_sub(conversation_tokens).saturating_sub(context_tokens);
        self.result_room = Some(room);
        Ok(room)
    }

    /// Folds the usage a server reported into the profile's calibration.
    fn learn(&self, profile_id: &str, estimated: u64, reported: u64) -> Result<(), ApiError> {
        let _guard = self.engine.write_lock();
        let mut calibration = super::compaction::profile_context(self.engine.store(), profile_id)?;
        calibration.learn(estimated, reported);
        let mut batch = Batch::new();
        batch.put(&calibration)?;
        self.engine.store().apply(batch, Durability::Grouped)?;
        Ok(())
    }

    /// The next model call: `Continue` when the reply asked for tools, else the end of
    /// the turn (completed, interrupted, a limit, a model error).
    pub(super) fn model_call(&mut self) -> Result<Flow, ApiError> {
        let limits = self.scope.limits.clone();
        if self.model_turns >= limits.max_model_turns {
            return Ok(Flow::End(
                TurnEndReason::MaxModelTurns,
                format!("The model was called {} times for this message, the limit; the turn stopped.", self.model_turns),
                vec![hint("continue", "Send a message to let it continue, or raise the session's model-turn limit.")],
            ));
        }
        let profile = self.engine.llm_profile(&self.scope.profile_id)?;
        if let Some(flow) = self.budget_check(&profile) {
            return Ok(flow);
        }
        self.model_turns += 1;
        let window = u64::from(profile.context_window);
        let calibration = super::compaction::profile_context(self.engine.store(), &profile.id)?;
        let mut sized = match self.sized_request(&profile, &calibration)? {
            Ok(sized) => sized,
            Err(end) => return Ok(end),
        };
        self.record_call(&mut sized, window)?;
        let SizedRequest { request, shares, conversation_tokens, .. } = sized;
        // What `estimate_request_tokens` gives for the request: the conversation and
        // tools counted while sizing it, and the system message put first since.
        let request_tokens = conversation_tokens + request.messages.first().map_or(0, estimate_message_tokens);

        let owner = &self.scope.owner;
        let call = ModelCall { profile: &self.scope.profile_id, purpose: self.scope.purpose.as_str(), session_id: owner.session_id(), run_id: owner.run_id() };
        let turn_id = self.turn_id.clone();
        let Streamed { result, partial, elapsed } = stream_reply(self.engine, self.live, &turn_id, call, &request, Checkpoints::IntoLog, self.emit)?;
        self.stats.model_calls += 1;
        self.stats.model_time += elapsed;
        self.settle(result, partial, (&request, request_tokens), &profile, &calibration, shares)
    }

    /// The request of the next call, sized to the window: the context gathered and
    /// assembled into what the conversation and the reply leave, and the conversation
    /// compacted first past the threshold (once per call) or until the request fits (at
    /// most `MAX_FAILURES` attempts; the last one truncates). `Ok(Err(end))`: the turn
    /// ends instead (the fixed part or the pins do not fit, the person stopped it, or
    /// the request does not fit even at its smallest).
    fn sized_request(&mut self, profile: &LlmProfile, calibration: &super::compaction::ProfileContext) -> Result<Result<SizedRequest, Flow>, ApiError> {
        let limits = self.scope.limits.clone();
        let registry = self.engine.harness().registry()?;
        let window = u64::from(profile.context_window);
        let engine = self.engine;
        let store = engine.store();

        // Context: typed records only (no profiles, settings or keys).
        let records = gather(store, &self.scope.project_id)?;
        // The person's rejection reasons: model-visible in every later turn.
        let constraints: Vec<String> = crate::proposals::apply::constraints(store, self.scope.owner.id())?.into_iter().map(|c| c.text).collect();
        // The session's intent and the memory that fits: pinned, never summarised.
        let intent = self.state(|s| s.intent.clone());
        let extras = super::context_extras(store, &self.scope.workspace_id, &records, &intent)?;
        // The versioned prompt layers (with the data folder's overrides).
        let prompts = crate::prompts::PromptSet::load(&engine.config().data_dir.join("prompts"))?;
        let mut attempts = 0u32;
        let mut nothing_to_compact = false;
        loop {
            // The messages with their hash and tokens as the state keeps them (see
            // `SessionState::messages_hash`), read together.
            let ((messages, messages_hash, message_tokens), mode, summary, pins, selection, threshold, warned, just_compacted) = self.state(|s| {
                let pins: Vec<String> = s.pins.iter().map(|p| p.text.clone()).collect();
                let messages = (s.messages.clone(), s.messages_hash(), s.messages_tokens());
                (messages, s.mode, s.summary.clone(), pins, s.selection.clone(), s.compaction.threshold, s.compaction.warned, s.compaction.just_compacted())
            });
            let threshold = threshold.or(calibration.threshold).unwrap_or_default();
            // The reply's reserve, sized to the step (see `ReplyReserve`).
            let reserve = ReplyReserve::for_step(limits.max_output_tokens, profile, selection.as_ref());
            // The tool definitions this call sends: the largest set the profile's
            // loading allows that fits its share of the window (see `offered_within`).
            let (tool_set, offer) = registry.offer_within(profile.tool_loading, window, &messages);
            let task = messages.iter().rev().find(|m| m.role == crate::llm::Role::User).map(|m| m.content.clone()).unwrap_or_default();
            let mut request = ChatRequest::new(messages);
            request.tools = Arc::clone(&offer.specs);
            let conversation_tokens = message_tokens + offer.tokens;
            let prompt = prompts.compose(&prompt_mode(mode), crate::prompts::Entry::Article);
            let input = crate::context::ContextInput {
                intent: &extras.intent,
                memory: &extras.memory,
                memory_left_out: extras.memory_left_out,
                prompt: Some(&prompt),
                task: &task,
                performance: &extras.performance,
                ..records.input(mode, &summary, &constraints, &pins, selection.as_ref())
            };
            // The fixed part of every request (the smallest system message the context
            // can shrink to, and the tool definitions) with the least a reply may be
            // left: when that alone does not fit, no compaction can help, so none is tried.
            // Pins and the summary are left out of it: they have budgets of their own
            // in the room it leaves (`compaction::Room`), which the person is told of.
            let overhead = Overhead::of(&crate::context::ContextInput { pins: &[], session_summary: "", ..input }, offer.tokens, reserve, window, calibration);
            if overhead.fixed_total() + super::compaction::MIN_FREE_TOKENS > window {
                return Ok(Err(overhead.too_long(window, tool_set)));
            }
            let shares = super::compaction::Room::new(window, overhead.fixed_total(), calibration.ratio);
            if let Some(over) = shares.pins_over(&pins) {
                return Ok(Err(Flow::End(TurnEndReason::PinsTooLong, over.message(), over.hints())));
            }
            // The article and context fill what the conversation and the step's reply
            // leave (in estimated tokens: the calibration says how the server counts);
            // when even its smallest form leaves less than the reply wants, the reply
            // gets what is left, never less than its floor.
            let estimate_of = |calibrated: u64| (calibrated as f64 / calibration.ratio.max(0.1)) as u64;
            let budget_with = |reply: u32| estimate_of(window.saturating_sub(u64::from(reply))).saturating_sub(conversation_tokens);
            let assembled = match assemble(&input, budget_with(reserve.wanted)) {
                Ok(snapshot) => Ok(snapshot),
                Err(_) => assemble(&input, budget_with(reserve.floor)),
            };
            let estimated = conversation_tokens + assembled.as_ref().map_or_else(|t| t.needed, |s| s.layers.iter().map(|l| l.tokens).sum());
            let calibrated = calibration.calibrated(estimated);
            let fits = assembled.is_ok() && calibrated + u64::from(reserve.floor) <= window;
            // An article given in part grows and shrinks with the room: the threshold
            // and the warning look at what the conversation adds to its smallest form.
            let article_trimmed = assembled.as_ref().is_ok_and(|s| s.layers.iter().any(|l| l.name == "working_set" && l.trimmed));
            let filling = if article_trimmed { calibration.calibrated(conversation_tokens) + overhead.system_prompt_tokens } else { calibrated };
            let over = !just_compacted && threshold.percent().is_some_and(|p| filling * 100 >= u64::from(p) * window);
            // Past the threshold: one attempt per call. Not fitting: until it fits
            // (the third failure in a row truncates, so this ends).
            let wanted = (over && attempts == 0) || !fits;
            if wanted && !nothing_to_compact && attempts < super::compaction::MAX_FAILURES {
                attempts += 1;
                // Keep as many recent tokens as leave the next call 15 points under the
                // threshold (after the fixed part: context, tools, summary).
                let target = threshold.percent().map_or(0, |p| window * u64::from(p.saturating_sub(15)) / 100);
                let fixed = estimated.saturating_sub(message_tokens);
                let room = (target as f64 / calibration.ratio.max(0.1)) as u64;
                let keep = if fits { super::compaction::Keep::Recent(room.saturating_sub(fixed)) } else { super::compaction::Keep::LatestTurn };
                if self.compact(super::compaction::CompactionTrigger::Auto, keep, shares)? == super::compaction::Outcome::Nothing {
                    nothing_to_compact = true;
                }
                if self.live.interrupted() {
                    return Ok(Err(Flow::End(TurnEndReason::Interrupted, "Stopped by the user while the session was compacting.".to_owned(), Vec::new())));
                }
                continue;
            }
            // The reply may use what the window leaves, up to the session's and the
            // profile's output limit; the step's reserve is what was kept for it.
            // A tenth of the prompt is left spare: an estimate can run low, and a server
            // such as vLLM refuses a prompt whose `max_tokens` overruns the window.
            let left = window.saturating_sub(calibrated + calibrated / 10);
            let max_output = reserve.cap.min(u32::try_from(left).unwrap_or(u32::MAX)).max(reserve.floor);
            request.max_output_tokens = Some(max_output);
            let snapshot = match assembled {
                Ok(snapshot) if fits => snapshot,
                Ok(_) | Err(_) => return Ok(Err(self.does_not_fit(&request, calibrated, profile, reserve.floor, tool_set))),
            };
            if filling * 100 >= u64::from(super::compaction::WARN_PERCENT) * window && !warned {
                let percent = (filling * 100 / window.max(1)) as u32;
                self.append_simple(
                    EventBody::ContextWarning { estimated_tokens: filling, context_window: window, percent, compact_at_percent: threshold.percent() },
                    Durability::Grouped,
                )?;
            }
            return Ok(Ok(SizedRequest { request, messages_hash, snapshot, conversation_tokens, reserve, shares }));
        }
    }

    /// The end of a turn whose request does not fit the window even at its smallest:
    /// what takes the room, and what the person can do.
    fn does_not_fit(&self, request: &ChatRequest, calibrated: u64, profile: &LlmProfile, reserve_floor: u32, tool_set: super::tools::ToolSet) -> Flow {
        // A first message names what takes the room; a longer session has outgrown it.
        let first_turn = self.state(|s| s.last_turn_end.is_none());
        let what = if first_turn { "This request does not fit" } else { "This session no longer fits" };
        let mut tools_only = ChatRequest::new(Vec::new());
        tools_only.tools = Arc::clone(&request.tools);
        let tool_tokens = estimate_request_tokens(&tools_only);
        Flow::End(
            TurnEndReason::ContextTooLong,
            format!(
                "{what} the model's context window ({} tokens): the request takes about {calibrated} tokens (about {tool_tokens} of them tool definitions) with the reply's reserve of {}.",
                profile.context_window, reserve_floor
            ),
            {
                let mut hints = vec![
                    hint("shorter_message", "Send a shorter message, or paste long material in parts: the earlier conversation is compacted first."),
                    hint("new_session", "Start a new session; the project and its versions are kept."),
                    hint("compact", "Or pin what matters and compact the session."),
                    hint("larger_context", "Or choose a model with a larger context window."),
                ];
                if tool_set == super::tools::ToolSet::All {
                    hints.push(hint(
                        "tools_on_demand",
                        "Or let this model load tools on demand (Settings → AI models): each request then carries about 1,400 fewer tokens of tool definitions.",
                    ));
                }
                hints
            },
        )
    }

    /// Records what the call sends (its context snapshot, then that the call started),
    /// sets the room tool results may take, and puts the system message first.
    fn record_call(&mut self, sized: &mut SizedRequest, window: u64) -> Result<(), ApiError> {
        let SizedRequest { request, messages_hash, snapshot, conversation_tokens, reserve, .. } = sized;
        let (snapshot, conversation_tokens, reserve) = (&*snapshot, *conversation_tokens, *reserve);
        let engine = self.engine;
        let store = engine.store();
        let mut extra = Batch::new();
        if !store.contains(Kind::ContextSnapshots, snapshot.id.as_bytes())? {
            extra.put(snapshot)?;
        }
        let layers: Vec<LayerEstimate> = snapshot.layers.iter().map(|l| LayerEstimate { layer: l.name.clone(), tokens: l.tokens, trimmed: l.trimmed }).collect();
        let context_tokens = layers.iter().map(|l| l.tokens).sum::<u64>();
        let estimated_tokens = context_tokens + conversation_tokens;
        // Tool results may take what the step's reply does not need.
        self.result_room = Some(window.saturating_sub(u64::from(reserve.wanted)).saturating_sub(conversation_tokens).saturating_sub(context_tokens));
        let snapshot_meta = Meta { context_snapshot_id: Some(snapshot.id.clone()), ..Meta::default() };
        self.append(
            snapshot_meta.clone(),
            EventBody::ContextAssembled { snapshot_id: snapshot.id.clone(), estimated_tokens, layers, prompt_layers: snapshot.prompt_layers.clone() },
            extra,
            Durability::Grouped,
        )?;
        let message_count = request.messages.len() as u32;
        let messages_hash = std::mem::take(messages_hash);
        self.append(snapshot_meta, EventBody::ModelCallStarted { model_turn: self.model_turns, messages_hash, message_count }, Batch::new(), Durability::Durable)?;
        request.messages.insert(0, Message::system(snapshot.system.as_str()));
        Ok(())
    }

    /// What the reply (or its failure) makes of the turn: the reply appended and the
    /// calibration taught, an interrupt or a broken-off answer kept, one reactive
    /// compaction and retry on a refusal as too long, or the end with what to do.
    fn settle(
        &mut self,
        result: Result<crate::llm::ChatResponse, ApiError>,
        partial: String,
        (request, request_tokens): (&ChatRequest, u64),
        profile: &LlmProfile,
        calibration: &super::compaction::ProfileContext,
        shares: super::compaction::Room,
    ) -> Result<Flow, ApiError> {
        let window = u64::from(profile.context_window);
        // A stream cut before a word arrived on a request near the window is most
        // likely an overflow the server only logged (llama-cpp-python): said as one,
        // so the turn compacts and retries, or ends saying the real cause.
        let result = result.map_err(|error| likely_overflow(error, request, calibration, window, profile.server_window.map(|w| w.server)));
        // A server that refuses a request as too long and says how many tokens it
        // counted (llama.cpp, vLLM, OpenAI) calibrates the estimate as usage does: its
        // tokenizer may count far more than the estimate (Chinese on a small model),
        // and without this the next request would be sized as wrongly again.
        if let Err(error) = &result {
            if let Some(reported) = error.details.as_ref().and_then(|d| d["promptTokens"].as_u64()).filter(|_| error.code == ErrorCode::ContextTooLong) {
                self.learn(&profile.id, request_tokens, reported)?;
            }
        }
        match result {
            Ok(reply) => {
                if !reply.usage.estimated && reply.usage.input_tokens > 0 {
                    self.learn(&profile.id, request_tokens, reply.usage.input_tokens)?;
                }
                let finished = reply.tool_calls.is_empty();
                self.append_simple(answered(reply), Durability::Grouped)?;
                if finished {
                    return Ok(Flow::End(TurnEndReason::Completed, String::new(), Vec::new()));
                }
                Ok(Flow::Continue)
            }
            Err(error) if error.code == ErrorCode::Cancelled || self.live.interrupted() => {
                self.append_simple(broken_off(partial, INTERRUPTED), Durability::Grouped)?;
                Ok(Flow::End(TurnEndReason::Interrupted, "Stopped by the user while the model was answering.".to_owned(), Vec::new()))
            }
            Err(error) if matches!(error.code, ErrorCode::Internal | ErrorCode::StoreCorrupt | ErrorCode::Io) => Err(error),
            // The server says the request is too long although the estimate said it
            // fits: one reactive compaction, then exactly one retry.
            Err(error) if error.code == ErrorCode::ContextTooLong && !self.reactive_used => {
                self.reactive_used = true;
                self.compact(super::compaction::CompactionTrigger::Reactive, super::compaction::Keep::LatestTurn, shares)?;
                self.model_call()
            }
            // The answer broke off after some of it arrived (the server died, the
            // connection dropped): what arrived is kept, as an interrupt keeps it, marked
            // as cut off by the failure (`finish_reason` "error"), and the turn ends
            // saying what cut it off: mostly the lost connection.
            Err(error) if !partial.trim().is_empty() => {
                self.append_simple(broken_off(partial, CUT_OFF_BY_ERROR), Durability::Grouped)?;
                if connection_lost(&error) {
                    return Ok(Flow::End(
                        TurnEndReason::ModelError,
                        format!("The connection to the model was lost during the answer; the text that arrived is kept. {:?}: {}", error.code, error.message),
                        cut_off_hints(&error),
                    ));
                }
                // The provider stopped it with an error of its own (a rate limit, the
                // quota): its hints say what to do.
                Ok(Flow::End(
                    TurnEndReason::ModelError,
                    format!("The model's answer broke off; the text that arrived is kept. {:?}: {}", error.code, error.message),
                    error.hints.clone(),
                ))
            }
            Err(error) => {
                let reason = if error.code == ErrorCode::ContextTooLong { TurnEndReason::ContextTooLong } else { TurnEndReason::ModelError };
                let mut hints = error.hints.clone();
                if reason == TurnEndReason::ContextTooLong {
                    hints.push(hint("new_session", "Start a new session; the project and its versions are kept."));
                }
                Ok(Flow::End(reason, format!("{:?}: {}", error.code, error.message), hints))
            }
        }
    }
}

/// Whether a call's streamed text is checkpointed into the log as it arrives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Checkpoints {
    /// A drafting turn's: `assistant_streamed` events, so a killed process keeps what
    /// streamed (the turn's resume shows it).
    IntoLog,
    /// A scripted step's: its resume asks again for a reply that did not finish, so a
    /// half-streamed one is worth nothing to keep.
    None,
}

/// What one streamed model call gave: the reply (or why there is none), the text that
/// arrived before it ended, and how long it took.
pub(crate) struct Streamed {
    pub result: Result<crate::llm::ChatResponse, ApiError>,
    pub partial: String,
    pub elapsed: Duration,
}

/// The one way the harness calls a model: `request` through the metered
/// `Kernel::model_chat` (quotas first, one usage record whatever the outcome), on its
/// own thread so the stream's deltas reach `emit` live (under `turn_id`), cancelled by
/// `live`'s cancel. The caller appends the reply, or what arrived, as its log needs.
/// Errors: only the store's, from a checkpoint (the model's error is in `result`).
pub(crate) fn stream_reply(
    engine: super::Harness<'_>,
    live: &super::Live,
    turn_id: &str,
    call: ModelCall<'_>,
    request: &ChatRequest,
    checkpoints: Checkpoints,
    emit: &mut dyn FnMut(&super::Event),
) -> Result<Streamed, ApiError> {
    let cancel = live.cancel.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let started = Instant::now();
    let mut partial = String::new();
    let mut checkpoint_error: Option<ApiError> = None;
    let result = std::thread::scope(|scope| {
        let (tx, rx) = mpsc::channel::<ChatEvent>();
        let cancel = &cancel;
        let handle = scope.spawn(move || {
            engine.model_chat(
                call,
                request,
                &mut move |event| {
                    let _ = tx.send(event);
                },
                cancel,
            )
        });
        // The streamed text is checkpointed into the log as it arrives (bounded:
        // at most every STREAM_CHECKPOINT_MILLIS, or when STREAM_CHECKPOINT_CHARS
        // are waiting), so a killed process keeps what streamed. Durably: the
        // group commit (a second by default) would double what a kill can lose,
        // and one disk sync per half second of streaming costs little.
        let mut checkpoint = StreamCheckpoint::default();
        let mut last_saved = Instant::now();
        let interval = Duration::from_millis(STREAM_CHECKPOINT_MILLIS);
        loop {
            match rx.recv_timeout(interval.saturating_sub(last_saved.elapsed()).max(Duration::from_millis(1))) {
                Ok(ChatEvent::TextDelta(text)) => {
                    partial.push_str(&text);
                    if checkpoints == Checkpoints::IntoLog {
                        checkpoint.push(&text);
                    }
                    emit(&engine.live_event(live, turn_id, EventBody::AssistantDelta { text }));
                }
                Ok(ChatEvent::ReasoningDelta(text)) => emit(&engine.live_event(live, turn_id, EventBody::ReasoningDelta { text })),
                Ok(ChatEvent::ToolCallStarted { .. }) | Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
            let interval_passed = last_saved.elapsed() >= interval;
            if checkpoint.due(interval_passed) {
                for text in checkpoint.take() {
                    let meta = Meta { turn_id: Some(turn_id.to_owned()), ..Meta::default() };
                    if let Err(error) = engine.append_event(live, meta, EventBody::AssistantStreamed { text }, Batch::new(), Durability::Durable) {
                        checkpoint_error.get_or_insert(error);
                    }
                }
            }
            if interval_passed {
                last_saved = Instant::now();
            }
        }
        handle.join().unwrap_or_else(|_| Err(ApiError::internal("the model call stopped unexpectedly")))
    });
    if let Some(error) = checkpoint_error {
        // The store failed under the stream: an engine fault, as for any append.
        return Err(error);
    }
    Ok(Streamed { result, partial, elapsed: started.elapsed() })
}

/// The `finish_reason` of an assistant message the person (or a cancel) stopped.
pub(crate) const INTERRUPTED: &str = "interrupted";

/// The log's record of a model call's reply.
pub(crate) fn answered(reply: crate::llm::ChatResponse) -> EventBody {
    EventBody::AssistantMessage {
        text: reply.text,
        tool_calls: reply.tool_calls,
        finish_reason: format!("{:?}", reply.finish_reason).to_lowercase(),
        interrupted: false,
        input_tokens: reply.usage.input_tokens,
        output_tokens: reply.usage.output_tokens,
    }
}

/// The log's record of a reply that broke off (`finish_reason` [`INTERRUPTED`] or
/// [`CUT_OFF_BY_ERROR`]): the text that had arrived.
pub(crate) fn broken_off(partial: String, finish_reason: &str) -> EventBody {
    EventBody::AssistantMessage { text: partial, tool_calls: Vec::new(), finish_reason: finish_reason.to_owned(), interrupted: true, input_tokens: 0, output_tokens: 0 }
}

/// `error` said as a likely CONTEXT_TOO_LONG ([`crate::llm::error::likely_overflow`]),
/// the request counted with the profile's calibration.
pub(crate) fn likely_overflow(
    error: ApiError,
    request: &ChatRequest,
    calibration: &super::compaction::ProfileContext,
    window: u64,
    server: Option<crate::llm::window::ServerKind>,
) -> ApiError {
    let prompt = calibration.calibrated(estimate_request_tokens(request));
    crate::llm::error::likely_overflow(error, prompt, u64::from(request.max_output_tokens.unwrap_or(0)), window, server)
}

/// What every request of a session carries whatever its conversation: the smallest
/// system message the context can be trimmed to, the tool definitions it sends, and
/// the room reserved for the reply (estimated tokens, calibrated for the profile).
/// `session.context` reports the same parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overhead {
    pub system_prompt_tokens: u64,
    pub tool_tokens: u64,
    /// The step's reserve as far as the window leaves it after the fixed part (never
    /// less than the floor).
    pub reply_reserve_tokens: u64,
    /// The least the reply may be left ([`ReplyReserve::floor`]).
    pub reply_floor_tokens: u64,
}

impl Overhead {
    pub(crate) fn of(
        input: &crate::context::ContextInput<'_>,
        estimated_tool_tokens: u64,
        reserve: ReplyReserve,
        window: u64,
        calibration: &super::compaction::ProfileContext,
    ) -> Overhead {
        // With no room at all, `assemble` reports what its smallest form needs.
        let system = match assemble(input, 0) {
            Ok(snapshot) => snapshot.layers.iter().map(|l| l.tokens).sum(),
            Err(too_long) => too_long.needed,
        };
        let system_prompt_tokens = calibration.calibrated(system);
        let tool_tokens = calibration.calibrated(estimated_tool_tokens);
        let floor = u64::from(reserve.floor);
        let left = window.saturating_sub(system_prompt_tokens + tool_tokens);
        Overhead { system_prompt_tokens, tool_tokens, reply_reserve_tokens: u64::from(reserve.wanted).min(left).max(floor), reply_floor_tokens: floor }
    }

    /// The fixed part with the least a reply may be left: over the window, nothing
    /// can be sent.
    pub(crate) fn fixed_total(&self) -> u64 {
        self.system_prompt_tokens + self.tool_tokens + self.reply_floor_tokens
    }

    /// The end of a turn whose fixed part alone does not fit the window: said as such
    /// (not as a long conversation), with what would make room.
    fn too_long(&self, window: u64, tool_set: super::tools::ToolSet) -> Flow {
        let (system, tools, reserve) = (self.system_prompt_tokens.to_string(), self.tool_tokens.to_string(), self.reply_floor_tokens.to_string());
        let window_text = window.to_string();
        let mut hints = vec![crate::error::Hint::with(
            "context_overhead",
            format!("The system prompt takes about {system} tokens and the tool definitions about {tools}; {reserve} are reserved for the reply, of a window of {window_text}."),
            &[("system", &system), ("tools", &tools), ("reserve", &reserve), ("window", &window_text)],
        )];
        if tool_set == super::tools::ToolSet::All {
            hints.push(hint(
                "tools_on_demand",
                "Or let this model load tools on demand (Settings → AI models): each request then carries about 1,400 fewer tokens of tool definitions.",
            ));
        }
        hints.push(hint("larger_context", "Or choose a model with a larger context window."));
        Flow::End(
            TurnEndReason::FixedContextTooLong,
            format!(
                "The model's context window ({window} tokens) cannot hold the fixed part of a request: the system prompt (about {system} tokens) and the tool definitions (about {tools}) with the reply's reserve of {reserve}. Nothing was sent and nothing was compacted: the conversation is not what takes the room."
            ),
            hints,
        )
    }
}

/// The fixed part of the next request of `session` (see [`Overhead`]), worked out as
/// the next model call would: its context input, the tools its profile's loading
/// offers for the conversation, the reply reserve of its limits and profile.
pub fn session_overhead(engine: super::Harness<'_>, session: &super::Session, state: &super::SessionState) -> Result<Overhead, ApiError> {
    let store = engine.store();
    let profile = engine.llm_profile(&session.profile_id)?;
    let calibration = super::compaction::profile_context(store, &profile.id)?;
    let records = gather(store, &session.project_id)?;
    let constraints: Vec<String> = crate::proposals::apply::constraints(store, &session.id)?.into_iter().map(|c| c.text).collect();
    let pins: Vec<String> = state.pins.iter().map(|p| p.text.clone()).collect();
    let workspace_id = engine.session_scope(session)?.workspace_id;
    let extras = super::context_extras(store, &workspace_id, &records, &state.intent)?;
    let prompts = crate::prompts::PromptSet::load(&engine.config().data_dir.join("prompts"))?;
    let prompt = prompts.compose(&prompt_mode(state.mode), crate::prompts::Entry::Article);
    let input = crate::context::ContextInput {
        intent: &extras.intent,
        memory: &extras.memory,
        memory_left_out: extras.memory_left_out,
        prompt: Some(&prompt),
        performance: &extras.performance,
        ..records.input(state.mode, &state.summary, &constraints, &pins, state.selection.as_ref())
    };
    let window = u64::from(profile.context_window);
    let (_, offer) = engine.harness().registry()?.offer_within(profile.tool_loading, window, &state.messages);
    Ok(Overhead::of(&input, offer.tokens, ReplyReserve::for_step(session.limits.max_output_tokens, &profile, state.selection.as_ref()), window, &calibration))
}

/// The least a drafting step's reply may be left: a tool call with a short summary,
/// or a few sentences.
pub const REPLY_FLOOR_TOKENS: u32 = 256;
/// What a step's reply needs around the text it writes: its own words, a tool call's
/// name, summary and quotes.
pub const REPLY_BASE_TOKENS: u32 = 384;
/// The text a step without a selection is sized to write: a paragraph or a section
/// rewritten, or an answer. A longer rewrite goes in several steps (each proposal
/// carries the earlier ones' hunks), and a window with room sends more (see
/// [`ReplyReserve::cap`]).
pub const OPEN_STEP_TOKENS: u32 = 1_024;

/// The room kept for a drafting step's reply, sized to the step rather than to the
/// window: an edit of a selection needs its quote and its replacement (twice the
/// selection, a tenth spare) and the words around them; a step without one
/// [`OPEN_STEP_TOKENS`]. The article and the context are fitted to leave it; when
/// their smallest forms leave less, the reply gets what the window leaves, down to
/// `floor`. The request's output limit is what the window leaves, up to `cap`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReplyReserve {
    pub wanted: u32,
    pub floor: u32,
    /// The session's and the profile's output limit.
    pub cap: u32,
}

impl ReplyReserve {
    pub(crate) fn for_step(session_max_output: u32, profile: &LlmProfile, selection: Option<&crate::context::Selection>) -> ReplyReserve {
        let cap = session_max_output.min(profile.max_output_tokens.unwrap_or(u32::MAX)).max(1);
        let writes = match selection {
            Some(selection) => u32::try_from(crate::llm::estimate_tokens(&selection.text) * 22 / 10).unwrap_or(u32::MAX),
            None => OPEN_STEP_TOKENS,
        };
        let wanted = REPLY_BASE_TOKENS.saturating_add(writes).min(cap);
        ReplyReserve { wanted, floor: REPLY_FLOOR_TOKENS.min(wanted), cap }
    }
}

/// The longest a streamed answer waits before what arrived is checkpointed into the
/// log (`assistant_streamed`, synced to disk): what a kill -9 can lose of a stream.
pub const STREAM_CHECKPOINT_MILLIS: u64 = 500;
/// The most characters a checkpoint holds; more waiting are written at once, in
/// pieces of this size (so no log line outgrows its limit).
pub const STREAM_CHECKPOINT_CHARS: usize = 2_000;

/// The streamed text not yet checkpointed.
#[derive(Default)]
struct StreamCheckpoint {
    unsaved: String,
    chars: usize,
}

impl StreamCheckpoint {
    fn push(&mut self, text: &str) {
        self.unsaved.push_str(text);
        self.chars += text.chars().count();
    }

    /// Something waits, and the interval passed or enough waits.
    fn due(&self, interval_passed: bool) -> bool {
        self.chars > 0 && (interval_passed || self.chars >= STREAM_CHECKPOINT_CHARS)
    }

    /// The waiting text in pieces of at most `STREAM_CHECKPOINT_CHARS` characters.
    fn take(&mut self) -> Vec<String> {
        self.chars = 0;
        let text = std::mem::take(&mut self.unsaved);
        let chars: Vec<char> = text.chars().collect();
        chars.chunks(STREAM_CHECKPOINT_CHARS).map(|piece| piece.iter().collect()).collect()
    }
}

/// The `finish_reason` of an assistant message that a failed model call cut off (the
/// text that had arrived, kept; `interrupted` is true, as for a stop by the person).
pub const CUT_OFF_BY_ERROR: &str = "error";

/// Whether a model call that failed after part of its answer arrived lost its
/// connection (the stream broke or stopped, the server went away), rather than being
/// stopped by an error the provider sent.
fn connection_lost(error: &ApiError) -> bool {
    // A reply stopped because the model repeated itself did not lose its connection.
    matches!(error.code, ErrorCode::ProviderBadResponse | ErrorCode::ProviderUnavailable | ErrorCode::Offline | ErrorCode::Timeout)
        && error.message_id.as_deref() != Some("model.repetition")
}

/// The hints of a turn whose answer broke off midway: the connection was lost (so
/// "check that the server is OpenAI-compatible" no longer applies: it was answering),
/// then the error's own advice that still does (a timeout's, an overloaded server's).
fn cut_off_hints(error: &ApiError) -> Vec<crate::error::Hint> {
    let mut hints = vec![hint("connection_lost", "The text that arrived is kept; try again for the whole answer.")];
    hints.extend(error.hints.iter().filter(|h| !matches!(h.id.as_str(), "check_compatible" | "retry_connection")).cloned());
    if !hints.iter().any(|h| h.id == "check_server_running") && matches!(error.code, ErrorCode::ProviderBadResponse | ErrorCode::ProviderUnavailable | ErrorCode::Offline) {
        hints.push(hint("check_server_running", "For a local server (Ollama, LM Studio, llama.cpp, vLLM), check that it is running and listening on the profile's address."));
    }
    hints
}

/// The prompt set's mode for a session mode: drafting, or plan.
fn prompt_mode(mode: crate::context::Mode) -> crate::prompts::Mode {
    match mode {
        crate::context::Mode::Default => crate::prompts::Mode::Drafting,
        crate::context::Mode::Plan => crate::prompts::Mode::Plan,
    }
}
