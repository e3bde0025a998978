//! One model call of a turn: limits and budgets first, then the context (gathered by
//! `context::gather`, with the owner's constraints from `proposals`, assembled into an
//! immutable snapshot), the request with the
//! model-visible messages of the log, the metered call (`Kernel::model_chat`) with its
//! deltas streamed live, and the completed (or interrupted) reply appended.
//!
//! The parts: [`overhead`] sizes what every request carries and the reply's reserve,
//! [`stream`] makes the streamed call, [`settle`] turns its reply (or failure) into
//! the turn's next step.

use std::sync::Arc;

use super::event::{EventBody, LayerEstimate, TurnEndReason};
use super::turn::{hint, Flow, Turn};
use super::Meta;
use crate::context::{assemble, gather};
use crate::error::ApiError;
use crate::llm::profile::LlmProfile;
use crate::llm::{estimate_message_tokens, estimate_request_tokens, ChatRequest, Message, ModelCall};
use crate::store::{Batch, Durability, Kind};

mod overhead;
mod settle;
mod stream;

use overhead::prompt_mode;
pub(crate) use overhead::ReplyReserve;
pub use overhead::{session_overhead, Overhead};
pub use settle::CUT_OFF_BY_ERROR;
pub(crate) use settle::{answered, broken_off, likely_overflow, INTERRUPTED};
pub(crate) use stream::{stream_reply, Checkpoints, Streamed};
pub use stream::{STREAM_CHECKPOINT_CHARS, STREAM_CHECKPOINT_MILLIS};

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
}
