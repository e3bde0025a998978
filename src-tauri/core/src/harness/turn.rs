//! The turn loop. A user message (or a decision that unblocks a turn) starts it; it
//! records the message, assembles the context, calls the model, validates every tool
//! call against its schema, asks the permission engine, runs what is allowed (reads
//! concurrently, exclusive tools one at a time, in request order), appends results in
//! the order the model asked for them, and calls the model again until it finishes,
//! blocks on an approval or a question, is interrupted, or a limit trips.
//!
//! Failures are tool results (unknown tool, schema violation with the JSON pointer,
//! permission denied, timeout, interrupted, tool error); only an engine fault ends a
//! turn with an error.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::event::{EventBody, LayerEstimate, ToolStatus, TurnEndReason};
use super::log::{shape_result, ApprovalRecord, Session, ToolExecution};
use super::permission::{decide, CallFacts, Decision};
use super::replay::is_failure;
use super::tools::{idempotency_key, input_hash, normalize, BaseVersionPolicy, Capability, Concurrency, InterruptBehavior, RegisteredTool, ToolContext, ToolFailure};
use super::Harness;
use super::{Live, Meta, Mode};
use crate::context::{assemble, ContextInput};
use crate::error::{ApiError, ErrorCode, Hint};
use crate::llm::ModelCall;
use crate::llm::{estimate_request_tokens, Cancel, ChatEvent, ChatRequest, Message, ToolCall, ToolSpec};
use crate::model::{BrandProfile, Comment, ContentTemplate, MediaAsset, Project, Version};
use crate::store::{keys, Batch, Durability, Kind};

/// The longest user message, in characters.
pub const MAX_MESSAGE_CHARS: usize = 20_000;

/// How a submit ended.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum SubmitOutcome {
    /// A turn was running; the message waits for its boundary.
    Queued,
    /// The turn (and any queued ones after it) ended.
    Finished { reason: TurnEndReason, stats: TurnStats },
}

/// Where the time of a drive went.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct TurnStats {
    pub model_calls: u32,
    pub model_time: Duration,
    pub durable_syncs: u32,
    pub sync_time: Duration,
    pub total_time: Duration,
}

pub(crate) type Emit<'a> = &'a mut dyn FnMut(&super::Event);

enum Start {
    Message { text: String, was_queued: bool },
    Resume,
}

enum Flow {
    Continue,
    End(TurnEndReason, String, Vec<Hint>),
}

/// What the result of a call records about a write's execution.
enum Execution {
    None,
    /// The write ran: its result is kept under the idempotency key.
    Completed(String),
    /// The write reported that it did nothing: its marker goes.
    NotRun(String),
}

fn hint(id: &str, message: &str) -> Hint {
    Hint { id: id.to_owned(), message: message.to_owned() }
}

/// One call ready to run.
struct Run {
    call: ToolCall,
    tool: RegisteredTool,
    input: Value,
    idempotency_key: String,
}

enum Prepared {
    Immediate { call: ToolCall, tool: String, status: ToolStatus, message: String },
    Run(Run),
    Approval { call: ToolCall, tool: String, normalized: Value, input_hash: String, target_version: Option<u64>, idempotency_key: String, reason: String },
    Question { call: ToolCall, question: String, options: Vec<String> },
}

struct Outcome {
    status: ToolStatus,
    value: Result<Value, String>,
    note: Option<String>,
}

struct Turn<'a, 'e> {
    engine: Harness<'a>,
    session: &'a Session,
    live: &'a Live,
    emit: Emit<'e>,
    turn_id: String,
    model_turns: u32,
    /// The kind of the last failure and how many came in a row.
    breaker: Option<(ToolStatus, u32)>,
    repeats: HashMap<String, u32>,
    loop_tripped: Option<String>,
    stats: &'a mut TurnStats,
}

impl Turn<'_, '_> {
    fn append(&mut self, meta: Meta, body: EventBody, extra: Batch, durability: Durability) -> Result<super::Event, ApiError> {
        let meta = Meta { turn_id: Some(self.turn_id.clone()), ..meta };
        let started = Instant::now();
        let event = self.engine.append_event(&self.session.id, self.live, meta, body, extra, durability)?;
        if durability == Durability::Durable {
            self.stats.durable_syncs += 1;
            self.stats.sync_time += started.elapsed();
        }
        (self.emit)(&event);
        Ok(event)
    }

    fn append_simple(&mut self, body: EventBody, durability: Durability) -> Result<super::Event, ApiError> {
        self.append(Meta::default(), body, Batch::new(), durability)
    }

    fn state<T>(&self, f: impl FnOnce(&super::SessionState) -> T) -> T {
        f(&self.live.lock_state())
    }

    fn run(&mut self, start: Start) -> Result<(TurnEndReason, String, Vec<Hint>), ApiError> {
        self.append_simple(EventBody::TurnStarted {}, Durability::Grouped)?;
        if let Start::Message { text, was_queued } = start {
            self.append_simple(EventBody::UserMessage { text, was_queued }, Durability::Durable)?;
        }
        let flow = self.turn_loop()?;
        let (reason, message, hints) = match flow {
            Flow::End(reason, message, hints) => (reason, message, hints),
            Flow::Continue => (TurnEndReason::Completed, String::new(), Vec::new()),
        };
        self.append_simple(EventBody::TurnEnded { reason, message: message.clone(), hints: hints.clone() }, Durability::Durable)?;
        Ok((reason, message, hints))
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

    fn budget_check(&self, profile: &crate::llm::profile::LlmProfile) -> Option<Flow> {
        let limits = &self.session.limits;
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
        None
    }

    fn model_call(&mut self) -> Result<Flow, ApiError> {
        let limits = self.session.limits.clone();
        if self.model_turns >= limits.max_model_turns {
            return Ok(Flow::End(
                TurnEndReason::MaxModelTurns,
                format!("The model was called {} times for this message, the limit; the turn stopped.", self.model_turns),
                vec![hint("continue", "Send a message to let it continue, or raise the session's model-turn limit.")],
            ));
        }
        let profile = self.engine.llm_profile(&self.session.profile_id)?;
        if let Some(flow) = self.budget_check(&profile) {
            return Ok(flow);
        }
        self.model_turns += 1;
        let registry = self.engine.harness().registry()?;
        let tools: Vec<ToolSpec> = registry.definitions().map(|d| ToolSpec { name: d.name.clone(), description: d.prompt.clone(), parameters: d.input_schema.clone() }).collect();
        let messages: Vec<Message> = self.state(|s| s.messages.clone());
        let max_output = limits.max_output_tokens.min(profile.max_output_tokens.unwrap_or(u32::MAX)).min(profile.context_window / 2).max(1);
        let mut request = ChatRequest::new(messages);
        request.tools = tools;
        request.max_output_tokens = Some(max_output);
        let conversation_tokens = estimate_request_tokens(&request);
        let budget = u64::from(profile.context_window).saturating_sub(u64::from(max_output)).saturating_sub(conversation_tokens);

        // Context: typed records only (no profiles, settings or keys).
        let store = self.engine.store();
        let project = store.get::<Project>(self.session.project_id.as_bytes())?.ok_or_else(|| ApiError::not_found("project", &self.session.project_id))?;
        let brand = match &project.brand_profile_id {
            Some(id) => store.get::<BrandProfile>(id.as_bytes())?,
            None => None,
        };
        let template = match &project.template_id {
            Some(id) => store.get::<ContentTemplate>(id.as_bytes())?,
            None => None,
        };
        let versions = store.scan::<Version>(&keys::project_prefix(&project.id))?;
        let comments = store.scan::<Comment>(&keys::project_prefix(&project.id))?;
        let media: Vec<MediaAsset> = store.scan::<MediaAsset>(b"")?.into_iter().filter(|m| m.project_ids.contains(&project.id)).collect();
        let mode = self.state(|s| s.mode);
        let input = ContextInput {
            project: &project,
            brand: brand.as_ref(),
            template: template.as_ref(),
            versions: &versions,
            comments: &comments,
            media: &media,
            mode,
            session_summary: "",
        };
        let snapshot = match assemble(&input, budget) {
            Ok(snapshot) => snapshot,
            Err(too_long) => {
                return Ok(Flow::End(
                    TurnEndReason::ContextTooLong,
                    format!(
                    "This session no longer fits the model's context window ({} tokens): the conversation takes about {conversation_tokens} and the project context at least {}.",
                    profile.context_window, too_long.needed
                ),
                    vec![
                        hint("new_session", "Start a new session; the project and its versions are kept."),
                        hint("larger_context", "Or choose a model with a larger context window."),
                    ],
                ))
            }
        };
        let mut extra = Batch::new();
        if !store.contains(Kind::ContextSnapshots, snapshot.id.as_bytes())? {
            extra.put(&snapshot)?;
        }
        let layers: Vec<LayerEstimate> = snapshot.layers.iter().map(|l| LayerEstimate { layer: l.name.clone(), tokens: l.tokens, trimmed: l.trimmed }).collect();
        let estimated_tokens = layers.iter().map(|l| l.tokens).sum::<u64>() + conversation_tokens;
        let snapshot_meta = Meta { context_snapshot_id: Some(snapshot.id.clone()), ..Meta::default() };
        self.append(snapshot_meta.clone(), EventBody::ContextAssembled { snapshot_id: snapshot.id.clone(), estimated_tokens, layers }, extra, Durability::Grouped)?;
        let messages_hash = super::messages_hash(&request.messages);
        let message_count = request.messages.len() as u32;
        self.append(snapshot_meta, EventBody::ModelCallStarted { model_turn: self.model_turns, messages_hash, message_count }, Batch::new(), Durability::Durable)?;
        request.messages.insert(0, Message::system(snapshot.system.clone()));

        let cancel = self.live.cancel.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let call = ModelCall { profile: &self.session.profile_id, purpose: "drafting", session_id: Some(&self.session.id), run_id: None };
        let started = Instant::now();
        let mut partial = String::new();
        let engine = self.engine;
        let session_id = self.session.id.clone();
        let turn_id = self.turn_id.clone();
        let emit = &mut self.emit;
        let result = std::thread::scope(|scope| {
            let (tx, rx) = mpsc::channel::<ChatEvent>();
            let request = &request;
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
            for event in rx.iter() {
                let body = match event {
                    ChatEvent::TextDelta(text) => {
                        partial.push_str(&text);
                        EventBody::AssistantDelta { text }
                    }
                    ChatEvent::ReasoningDelta(text) => EventBody::ReasoningDelta { text },
                    ChatEvent::ToolCallStarted { .. } => continue,
                };
                let event = engine.live_event(&session_id, &turn_id, body);
                emit(&event);
            }
            handle.join().unwrap_or_else(|_| Err(ApiError::internal("the model call stopped unexpectedly")))
        });
        self.stats.model_calls += 1;
        self.stats.model_time += started.elapsed();

        match result {
            Ok(reply) => {
                let finished = reply.tool_calls.is_empty();
                let body = EventBody::AssistantMessage {
                    text: reply.text,
                    tool_calls: reply.tool_calls,
                    finish_reason: format!("{:?}", reply.finish_reason).to_lowercase(),
                    interrupted: false,
                    input_tokens: reply.usage.input_tokens,
                    output_tokens: reply.usage.output_tokens,
                };
                self.append_simple(body, Durability::Grouped)?;
                if finished {
                    return Ok(Flow::End(TurnEndReason::Completed, String::new(), Vec::new()));
                }
                Ok(Flow::Continue)
            }
            Err(error) if error.code == ErrorCode::Cancelled || self.live.interrupted() => {
                let body = EventBody::AssistantMessage {
                    text: partial,
                    tool_calls: Vec::new(),
                    finish_reason: "interrupted".to_owned(),
                    interrupted: true,
                    input_tokens: 0,
                    output_tokens: 0,
                };
                self.append_simple(body, Durability::Grouped)?;
                Ok(Flow::End(TurnEndReason::Interrupted, "Stopped by the user while the model was answering.".to_owned(), Vec::new()))
            }
            Err(error) if matches!(error.code, ErrorCode::Internal | ErrorCode::StoreCorrupt | ErrorCode::Io) => Err(error),
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

    /// Validation, permission, and the plan of one call.
    fn prepare(
        &mut self,
        registry: &super::Registry,
        call: ToolCall,
        rules: &[super::PermissionRule],
        approvals: &[ApprovalRecord],
        revision: Option<u64>,
    ) -> Result<Prepared, ApiError> {
        let Some(tool) = registry.get(&call.name).cloned() else {
            let names = registry.names().join(", ");
            let name = call.name.clone();
            return Ok(Prepared::Immediate { call, tool: name.clone(), status: ToolStatus::UnknownTool, message: format!("There is no tool `{name}`. Available tools: {names}.") });
        };
        let name = tool.definition.name.clone();
        let raw = if call.arguments.trim().is_empty() { "{}" } else { call.arguments.as_str() };
        let input: Value = match serde_json::from_str(raw) {
            Ok(value) => value,
            Err(e) => {
                return Ok(Prepared::Immediate {
                    call,
                    tool: name,
                    status: ToolStatus::SchemaViolation,
                    message: format!("The arguments are not valid JSON (at pointer \"\"): {e}."),
                })
            }
        };
        if let Err(problems) = tool.validate(&input) {
            let text: Vec<String> = problems.iter().map(|(pointer, message)| format!("at pointer \"{pointer}\": {message}")).collect();
            return Ok(Prepared::Immediate {
                call,
                tool: name,
                status: ToolStatus::SchemaViolation,
                message: format!("The input does not match the schema of `{}`: {}.", tool.definition.name, text.join("; ")),
            });
        }
        let normalized = normalize(&input);
        let hash = input_hash(&normalized);
        let loop_key = format!("{name}\u{0}{hash}");
        let seen = self.repeats.entry(loop_key).or_insert(0);
        *seen += 1;
        if *seen >= self.session.limits.loop_threshold {
            self.loop_tripped = Some(name.clone());
            return Ok(Prepared::Immediate {
                call,
                tool: name.clone(),
                status: ToolStatus::LoopDetected,
                message: format!("`{name}` was called with the same input {} times in this turn; it was not run again. The user will be asked how to go on.", seen),
            });
        }
        let target_version = match tool.definition.base_version {
            BaseVersionPolicy::None => None,
            BaseVersionPolicy::ProjectRevision => revision,
        };
        let key = idempotency_key(&tool.definition, &normalized, target_version);
        let mode = self.state(|s| s.mode);
        let decision = decide(&tool.definition, CallFacts { input_hash: &hash, target_version, idempotency_key: &key }, mode, rules, approvals);
        let meta = Meta { tool_use_id: Some(call.id.clone()), ..Meta::default() };
        self.append(
            meta,
            EventBody::ToolDecision { tool: name.clone(), decision: decision.name().to_owned(), reason: decision.reason().to_owned() },
            Batch::new(),
            Durability::Grouped,
        )?;
        Ok(match decision {
            Decision::Deny { reason } => Prepared::Immediate { call, tool: name, status: ToolStatus::PermissionDenied, message: format!("Permission denied: {reason}") },
            Decision::Ask { reason } => Prepared::Approval { call, tool: name, normalized, input_hash: hash, target_version, idempotency_key: key, reason },
            Decision::Allow { .. } if name == "ask_user_question" => Prepared::Question {
                call,
                question: input["question"].as_str().unwrap_or("").to_owned(),
                options: input["options"].as_array().map(|o| o.iter().filter_map(|x| x.as_str().map(str::to_owned)).collect()).unwrap_or_default(),
            },
            Decision::Allow { .. } => Prepared::Run(Run { call, tool, input, idempotency_key: key }),
        })
    }

    fn process_calls(&mut self) -> Result<Flow, ApiError> {
        let calls = self.state(|s| s.open_calls.clone());
        let registry = self.engine.harness().registry()?;
        let rules = self.engine.permission_rules()?;
        let approvals: Vec<ApprovalRecord> = self.engine.store().scan::<ApprovalRecord>(b"")?;
        let revision = self.engine.store().get::<Project>(self.session.project_id.as_bytes())?.map(|p| p.revision);
        let mut parallel: Vec<Run> = Vec::new();
        for call in calls {
            if self.live.interrupted() {
                self.run_batch(std::mem::take(&mut parallel))?;
                self.close_open_calls(ToolStatus::Interrupted, "Stopped by the user before this tool ran.")?;
                return Ok(Flow::End(TurnEndReason::Interrupted, "Stopped by the user.".to_owned(), Vec::new()));
            }
            match self.prepare(&registry, call, &rules, &approvals, revision)? {
                Prepared::Run(run) if run.tool.definition.concurrency == Concurrency::ParallelSafe && run.tool.definition.capability != Capability::Write => parallel.push(run),
                prepared => {
                    self.run_batch(std::mem::take(&mut parallel))?;
                    match prepared {
                        Prepared::Immediate { call, tool, status, message } => {
                            self.append_result(&call, &tool, Outcome { status, value: Err(message), note: None }, Execution::None)?;
                        }
                        Prepared::Run(run) => self.run_batch(vec![run])?,
                        Prepared::Approval { call, tool, normalized, input_hash, target_version, idempotency_key, reason } => {
                            let request_id = self.engine.new_id("apr");
                            let mut input = normalized;
                            if input.to_string().len() > 8 * 1024 {
                                input = json!({"preview": input.to_string().chars().take(2000).collect::<String>(), "truncated": true});
                            }
                            let meta = Meta { tool_use_id: Some(call.id.clone()), ..Meta::default() };
                            self.append(
                                meta,
                                EventBody::ApprovalRequested { request_id, tool: tool.clone(), input, input_hash, target_version, idempotency_key, reason },
                                Batch::new(),
                                Durability::Durable,
                            )?;
                            return Ok(Flow::End(
                                TurnEndReason::BlockedOnApproval,
                                format!("Waiting for your approval of `{tool}`."),
                                vec![hint("approve", "Approve or deny the request to continue.")],
                            ));
                        }
                        Prepared::Question { call, question, options } => {
                            let question_id = self.engine.new_id("qst");
                            let meta = Meta { tool_use_id: Some(call.id.clone()), ..Meta::default() };
                            self.append(meta, EventBody::QuestionAsked { question_id, question, options }, Batch::new(), Durability::Durable)?;
                            return Ok(Flow::End(
                                TurnEndReason::BlockedOnQuestion,
                                "Waiting for your answer.".to_owned(),
                                vec![hint("answer", "Answer the question to continue.")],
                            ));
                        }
                    }
                }
            }
            if let Some(flow) = self.breaker_tripped() {
                self.run_batch(std::mem::take(&mut parallel))?;
                self.close_open_calls(ToolStatus::Cancelled, "Not run: the turn stopped after repeated failures.")?;
                return Ok(flow);
            }
        }
        self.run_batch(parallel)?;
        if self.live.interrupted() {
            self.close_open_calls(ToolStatus::Interrupted, "Stopped by the user before this tool ran.")?;
            return Ok(Flow::End(TurnEndReason::Interrupted, "Stopped by the user.".to_owned(), Vec::new()));
        }
        if let Some(tool) = self.loop_tripped.take() {
            return Ok(Flow::End(
                TurnEndReason::LoopDetected,
                format!("The model called `{tool}` with the same input {} times in this turn; it was stopped so you can say how to go on.", self.session.limits.loop_threshold),
                vec![hint("rephrase", "Tell the assistant what to do differently, or start a new request.")],
            ));
        }
        if let Some(flow) = self.breaker_tripped() {
            return Ok(flow);
        }
        Ok(Flow::Continue)
    }

    fn breaker_tripped(&self) -> Option<Flow> {
        match self.breaker {
            Some((status, count)) if count >= self.session.limits.breaker_threshold => {
                let kind = serde_json::to_value(status).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
                Some(Flow::End(
                    TurnEndReason::CircuitBreaker,
                    format!("{count} tool calls in a row failed with `{kind}`; the turn was stopped."),
                    vec![hint("check_request", "Look at the failures above, then rephrase the request or change the session's settings.")],
                ))
            }
            _ => None,
        }
    }

    /// Answers every call still open (after an interrupt, a breaker trip).
    fn close_open_calls(&mut self, status: ToolStatus, message: &str) -> Result<(), ApiError> {
        let open = self.state(|s| s.open_calls.clone());
        for call in open {
            let name = call.name.clone();
            self.append_result(&call, &name, Outcome { status, value: Err(message.to_owned()), note: None }, Execution::None)?;
        }
        Ok(())
    }

    /// Runs calls (concurrently when more than one) and appends their results in
    /// request order.
    fn run_batch(&mut self, runs: Vec<Run>) -> Result<(), ApiError> {
        if runs.is_empty() {
            return Ok(());
        }
        // A write with a recorded execution is not run again.
        let mut outcomes: Vec<Option<Outcome>> = Vec::with_capacity(runs.len());
        let mut reused: Vec<Option<ToolExecution>> = Vec::with_capacity(runs.len());
        for run in &runs {
            let previous = if run.tool.definition.capability == Capability::Write { self.engine.store().get::<ToolExecution>(run.idempotency_key.as_bytes())? } else { None };
            if previous.is_none() && run.tool.definition.capability == Capability::Write {
                // The marker is durable before the write begins, so a crash during the
                // write can never lead to running it a second time.
                let marker = ToolExecution {
                    idempotency_key: run.idempotency_key.clone(),
                    tool: run.tool.definition.name.clone(),
                    session_id: self.session.id.clone(),
                    tool_use_id: run.call.id.clone(),
                    content: String::new(),
                    result_ref: None,
                    executed_at: self.engine.now(),
                    completed: false,
                };
                let started = Instant::now();
                let _guard = self.engine.write_lock();
                let mut batch = Batch::new();
                batch.put(&marker)?;
                self.engine.store().apply(batch, Durability::Durable)?;
                self.stats.durable_syncs += 1;
                self.stats.sync_time += started.elapsed();
            }
            reused.push(previous);
            outcomes.push(None);
        }
        let timeout = Duration::from_millis(self.session.limits.tool_timeout_ms);
        let flags: Vec<AtomicBool> = runs.iter().map(|_| AtomicBool::new(false)).collect();
        let engine = self.engine;
        let live = self.live;
        let session = self.session;
        let mode = self.state(|s| s.mode);
        std::thread::scope(|scope| {
            let (tx, rx) = mpsc::channel::<(usize, Result<Value, ToolFailure>)>();
            let mut started = 0;
            for (index, run) in runs.iter().enumerate() {
                if reused[index].is_some() {
                    continue;
                }
                started += 1;
                let tx = tx.clone();
                let flag = &flags[index];
                scope.spawn(move || {
                    let ctx = ToolContext { kernel: engine.kernel, session_id: &session.id, project_id: &session.project_id, tool_use_id: &run.call.id, mode, cancel: flag };
                    // A panicking tool is a failed call, not a failed turn.
                    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (run.tool.handler)(&ctx, &run.input)))
                        .unwrap_or_else(|_| Err(ToolFailure::new("The tool failed unexpectedly (a bug in the tool).")));
                    let _ = tx.send((index, result));
                });
            }
            drop(tx);
            let deadline = Instant::now() + timeout;
            let mut pending = started;
            while pending > 0 {
                match rx.recv_timeout(Duration::from_millis(5)) {
                    Ok((index, result)) => {
                        if outcomes[index].is_none() {
                            let interrupted_after = live.interrupted() && runs[index].tool.definition.interrupt == InterruptBehavior::Block;
                            outcomes[index] = Some(match result {
                                Ok(value) => Outcome {
                                    status: ToolStatus::Success,
                                    value: Ok(value),
                                    note: interrupted_after.then(|| "The interrupt came while this tool was committing; it finished.".to_owned()),
                                },
                                Err(failure) if failure.interrupted => Outcome { status: ToolStatus::Interrupted, value: Err(failure.message), note: None },
                                Err(failure) => Outcome { status: ToolStatus::ToolError, value: Err(failure.message), note: None },
                            });
                            pending -= 1;
                        }
                    }
                    Err(mpsc::RecvTimeoutError::Timeout) => {
                        let interrupted = live.interrupted();
                        let timed_out = Instant::now() >= deadline;
                        for (index, run) in runs.iter().enumerate() {
                            if outcomes[index].is_some() || reused[index].is_some() {
                                continue;
                            }
                            if interrupted && run.tool.definition.interrupt == InterruptBehavior::Cancel {
                                flags[index].store(true, Ordering::SeqCst);
                                outcomes[index] = Some(Outcome { status: ToolStatus::Interrupted, value: Err("Stopped by the user while running.".to_owned()), note: None });
                                pending -= 1;
                            } else if timed_out {
                                flags[index].store(true, Ordering::SeqCst);
                                outcomes[index] = Some(Outcome {
                                    status: ToolStatus::Timeout,
                                    value: Err(format!("No result within {} ms; the tool was stopped.", timeout.as_millis())),
                                    note: None,
                                });
                                pending -= 1;
                            }
                        }
                    }
                    Err(mpsc::RecvTimeoutError::Disconnected) => break,
                }
            }
        });
        for (index, run) in runs.into_iter().enumerate() {
            if let Some(previous) = reused[index].take() {
                let meta = Meta { tool_use_id: Some(run.call.id.clone()), ..Meta::default() };
                let (status, content, result_ref) = if previous.completed {
                    (ToolStatus::Success, previous.content, previous.result_ref)
                } else {
                    let message = "This write began before the app stopped and its outcome is unknown, so it was not run again. Check the project before asking for it again.";
                    (ToolStatus::Interrupted, json!({"error": "interrupted", "message": message}).to_string(), None)
                };
                let body = EventBody::ToolResult { tool: run.tool.definition.name.clone(), status, content, result_ref, reused_execution: true };
                self.record_result_status(status);
                self.append(meta, body, Batch::new(), Durability::Durable)?;
                continue;
            }
            let outcome = outcomes[index].take().unwrap_or(Outcome { status: ToolStatus::ToolError, value: Err("The tool stopped without a result.".to_owned()), note: None });
            let name = run.tool.definition.name.clone();
            let execution = if run.tool.definition.capability != Capability::Write {
                Execution::None
            } else {
                match outcome.status {
                    ToolStatus::Success => Execution::Completed(run.idempotency_key.clone()),
                    // The handler said it did nothing: the write may be asked for again.
                    ToolStatus::ToolError | ToolStatus::Interrupted => Execution::NotRun(run.idempotency_key.clone()),
                    // A timed-out write may still finish: its marker stays (unknown).
                    _ => Execution::None,
                }
            };
            let success = outcome.status == ToolStatus::Success;
            self.append_result_with(&run.call, &name, outcome, run.tool.definition.max_result_chars, execution)?;
            if success {
                match name.as_str() {
                    "enter_plan_mode" => {
                        self.append_simple(EventBody::ModeChanged { mode: Mode::Plan, by: "assistant".to_owned() }, Durability::Durable)?;
                    }
                    "exit_plan_mode" => {
                        self.append_simple(EventBody::ModeChanged { mode: Mode::Default, by: "user (plan approved)".to_owned() }, Durability::Durable)?;
                    }
                    _ => {}
                }
            }
        }
        Ok(())
    }

    fn record_result_status(&mut self, status: ToolStatus) {
        if is_failure(status) {
            self.breaker = match self.breaker {
                Some((last, count)) if last == status => Some((status, count + 1)),
                _ => Some((status, 1)),
            };
        } else {
            self.breaker = None;
        }
    }

    fn append_result(&mut self, call: &ToolCall, tool: &str, outcome: Outcome, execution: Execution) -> Result<(), ApiError> {
        self.append_result_with(call, tool, outcome, super::PREVIEW_CHARS, execution)
    }

    fn append_result_with(&mut self, call: &ToolCall, tool: &str, outcome: Outcome, max_chars: usize, execution: Execution) -> Result<(), ApiError> {
        self.record_result_status(outcome.status);
        let mut extra = Batch::new();
        let (content, result_ref) = match outcome.value {
            Ok(mut value) => {
                if let (Some(note), Value::Object(map)) = (&outcome.note, &mut value) {
                    map.insert("note".to_owned(), Value::String(note.clone()));
                }
                let shaped = shape_result(&value, max_chars);
                let reference = shaped.stored.as_ref().map(|s| s.id.clone());
                if let Some(stored) = &shaped.stored {
                    if !self.engine.store().contains(Kind::ToolResults, stored.id.as_bytes())? {
                        extra.put(stored)?;
                    }
                }
                (shaped.content, reference)
            }
            Err(message) => {
                let status = serde_json::to_value(outcome.status).unwrap_or(Value::Null);
                (json!({"error": status, "message": message}).to_string(), None)
            }
        };
        let durability = match execution {
            Execution::Completed(key) => {
                extra.put(&ToolExecution {
                    idempotency_key: key,
                    tool: tool.to_owned(),
                    session_id: self.session.id.clone(),
                    tool_use_id: call.id.clone(),
                    content: content.clone(),
                    result_ref: result_ref.clone(),
                    executed_at: self.engine.now(),
                    completed: true,
                })?;
                Durability::Durable
            }
            Execution::NotRun(key) => {
                extra.delete::<ToolExecution>(key.into_bytes());
                Durability::Durable
            }
            Execution::None => Durability::Grouped,
        };
        let meta = Meta { tool_use_id: Some(call.id.clone()), ..Meta::default() };
        self.append(meta, EventBody::ToolResult { tool: tool.to_owned(), status: outcome.status, content, result_ref, reused_execution: false }, extra, durability)?;
        Ok(())
    }
}

/// Answers every open block before a new message: a pending approval is superseded
/// and every call without a result is answered as cancelled.
fn close_blocks(engine: Harness<'_>, session: &Session, live: &Live, emit: Emit<'_>) -> Result<(), ApiError> {
    let (pending, open) = {
        let state = live.lock_state();
        (state.pending_approval.clone(), state.open_calls.clone())
    };
    if let Some(pending) = pending {
        let meta = Meta { tool_use_id: Some(pending.tool_use_id.clone()), ..Meta::default() };
        let event = engine.append_event(
            &session.id,
            live,
            meta,
            EventBody::ApprovalResolved { request_id: pending.request_id, approved: false, decided_by: "user".to_owned(), note: "Superseded by a new message.".to_owned() },
            Batch::new(),
            Durability::Durable,
        )?;
        emit(&event);
    }
    for call in open {
        let meta = Meta { tool_use_id: Some(call.id.clone()), ..Meta::default() };
        let content = json!({"error": "cancelled", "message": "Not run: the user sent a new message instead."}).to_string();
        let event = engine.append_event(
            &session.id,
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

/// Runs turns until one ends with nothing queued behind it.
fn drive(engine: Harness<'_>, session: &Session, live: &Live, emit: Emit<'_>, mut start: Start) -> Result<SubmitOutcome, ApiError> {
    let mut stats = TurnStats::default();
    let began = Instant::now();
    loop {
        live.interrupt.store(false, Ordering::SeqCst);
        *live.cancel.lock().unwrap_or_else(|p| p.into_inner()) = Cancel::new();
        if matches!(start, Start::Message { .. }) {
            close_blocks(engine, session, live, &mut *emit)?;
        }
        let turn_id = engine.new_id("trn");
        let mut turn = Turn { engine, session, live, emit: &mut *emit, turn_id, model_turns: 0, breaker: None, repeats: HashMap::new(), loop_tripped: None, stats: &mut stats };
        let reason = match turn.run(start) {
            Ok((reason, _, _)) => reason,
            Err(error) => {
                // Best effort: close the turn so the log stays consistent.
                let body = EventBody::TurnEnded { reason: TurnEndReason::EngineFault, message: error.message.clone(), hints: error.hints.clone() };
                let _ = turn.append_simple(body, Durability::Durable);
                *live.lock_running() = false;
                return Err(error);
            }
        };
        let mut running = live.lock_running();
        let next = live.lock_state().queued.first().cloned();
        match next {
            Some(text) => {
                start = Start::Message { text, was_queued: true };
            }
            None => {
                *running = false;
                stats.total_time = began.elapsed();
                return Ok(SubmitOutcome::Finished { reason, stats });
            }
        }
    }
}

fn check_open(session: &Session) -> Result<(), ApiError> {
    if session.archived {
        return Err(ApiError::validation("sessionId", "The session is archived.").hint("new_session", "Start a new session."));
    }
    Ok(())
}

/// Submits a user message: runs the turn now, or queues it behind the running one.
pub(crate) fn submit_message(engine: Harness<'_>, session_id: &str, text: &str, emit: Emit<'_>) -> Result<SubmitOutcome, ApiError> {
    let session = engine.load_session(session_id)?;
    check_open(&session)?;
    let text = crate::error::required_text("text", text, MAX_MESSAGE_CHARS)?;
    let live = engine.live_session(session_id)?;
    {
        let mut running = live.lock_running();
        if *running {
            let event = engine.append_event(&session.id, &live, Meta::default(), EventBody::MessageQueued { text }, Batch::new(), Durability::Durable)?;
            emit(&event);
            return Ok(SubmitOutcome::Queued);
        }
        *running = true;
    }
    drive(engine, &session, &live, emit, Start::Message { text, was_queued: false })
}

/// Takes the running flag for a decision, or says a turn is running.
fn claim(live: &Live) -> Result<(), ApiError> {
    let mut running = live.lock_running();
    if *running {
        return Err(ApiError::new(ErrorCode::Conflict, "A turn of this session is running.").hint("wait", "Wait for the turn to end or interrupt it."));
    }
    *running = true;
    Ok(())
}

fn release(live: &Live) {
    *live.lock_running() = false;
}

/// Records the user's decision on a pending approval and continues the turn.
pub(crate) fn resolve_approval(
    engine: Harness<'_>,
    session_id: &str,
    request_id: &str,
    approved: bool,
    note: &str,
    decided_by: &str,
    emit: Emit<'_>,
) -> Result<SubmitOutcome, ApiError> {
    let session = engine.load_session(session_id)?;
    check_open(&session)?;
    let live = engine.live_session(session_id)?;
    claim(&live)?;
    let pending = live.lock_state().pending_approval.clone();
    let Some(pending) = pending.filter(|p| p.request_id == request_id) else {
        release(&live);
        return Err(ApiError::new(ErrorCode::Conflict, format!("Approval request {request_id} is not pending (it was decided, superseded, or never asked)."))
            .hint("show_session", "See what the session waits for with `inkstone-cli session show`.")
            .details(json!({"requestId": request_id})));
    };
    let record = ApprovalRecord {
        request_id: pending.request_id.clone(),
        session_id: session.id.clone(),
        tool: pending.tool.clone(),
        input_hash: pending.input_hash.clone(),
        target_version: pending.target_version,
        idempotency_key: pending.idempotency_key.clone(),
        approved,
        decided_by: decided_by.to_owned(),
        decided_at: engine.now(),
    };
    let mut extra = Batch::new();
    if let Err(error) = extra.put(&record) {
        release(&live);
        return Err(error.into());
    }
    let meta = Meta { tool_use_id: Some(pending.tool_use_id.clone()), ..Meta::default() };
    let appended = engine.append_event(
        &session.id,
        &live,
        meta.clone(),
        EventBody::ApprovalResolved { request_id: request_id.to_owned(), approved, decided_by: decided_by.to_owned(), note: note.to_owned() },
        extra,
        Durability::Durable,
    );
    let result = appended.and_then(|event| {
        emit(&event);
        if approved {
            return Ok(());
        }
        let message = if note.is_empty() { "The user denied this call.".to_owned() } else { format!("The user denied this call: {note}") };
        let content = json!({"error": "permission_denied", "message": message}).to_string();
        let event = engine.append_event(
            &session.id,
            &live,
            meta,
            EventBody::ToolResult { tool: pending.tool.clone(), status: ToolStatus::PermissionDenied, content, result_ref: None, reused_execution: false },
            Batch::new(),
            Durability::Durable,
        )?;
        emit(&event);
        Ok(())
    });
    if let Err(error) = result {
        release(&live);
        return Err(error);
    }
    drive(engine, &session, &live, emit, Start::Resume)
}

/// Records the user's answer to a pending question and continues the turn.
pub(crate) fn answer_question(engine: Harness<'_>, session_id: &str, question_id: &str, answer: &str, emit: Emit<'_>) -> Result<SubmitOutcome, ApiError> {
    let session = engine.load_session(session_id)?;
    check_open(&session)?;
    let answer = crate::error::required_text("answer", answer, MAX_MESSAGE_CHARS)?;
    let live = engine.live_session(session_id)?;
    claim(&live)?;
    let pending = live.lock_state().pending_question.clone();
    let Some(pending) = pending.filter(|p| p.question_id == question_id) else {
        release(&live);
        return Err(ApiError::new(ErrorCode::Conflict, format!("Question {question_id} is not pending.")).details(json!({"questionId": question_id})));
    };
    let meta = Meta { tool_use_id: Some(pending.tool_use_id.clone()), ..Meta::default() };
    let result = engine
        .append_event(
            &session.id,
            &live,
            meta.clone(),
            EventBody::QuestionAnswered { question_id: question_id.to_owned(), answer: answer.clone() },
            Batch::new(),
            Durability::Durable,
        )
        .and_then(|event| {
            emit(&event);
            let content = json!({"answer": answer}).to_string();
            let event = engine.append_event(
                &session.id,
                &live,
                meta,
                EventBody::ToolResult { tool: "ask_user_question".to_owned(), status: ToolStatus::Success, content, result_ref: None, reused_execution: false },
                Batch::new(),
                Durability::Durable,
            )?;
            emit(&event);
            Ok(())
        });
    if let Err(error) = result {
        release(&live);
        return Err(error);
    }
    drive(engine, &session, &live, emit, Start::Resume)
}

/// After a restart: a turn left open is closed consistently. A half-streamed reply
/// becomes an interrupted assistant message; a pending approval or question stays
/// pending; calls that were running are answered as interrupted.
pub(crate) fn recover(engine: Harness<'_>, session: &Session, live: &Arc<Live>) -> Result<(), ApiError> {
    let (open_turn, model_call_open, blocked, open_calls, pending_use) = {
        let state = live.lock_state();
        let pending_use = state.pending_approval.as_ref().map(|p| p.tool_use_id.clone()).or_else(|| state.pending_question.as_ref().map(|q| q.tool_use_id.clone()));
        (state.open_turn.clone(), state.model_call_open, state.pending_approval.is_some() || state.pending_question.is_some(), state.open_calls.clone(), pending_use)
    };
    // Calls can also be left open outside a turn: a crash after a superseded approval
    // was recorded and before the cancelled results were synced.
    let stray_calls = !blocked && !open_calls.is_empty();
    if open_turn.is_none() && !stray_calls {
        return Ok(());
    }
    let meta = || Meta { turn_id: open_turn.clone(), ..Meta::default() };
    if model_call_open {
        let body = EventBody::AssistantMessage {
            text: String::new(),
            tool_calls: Vec::new(),
            finish_reason: "interrupted".to_owned(),
            interrupted: true,
            input_tokens: 0,
            output_tokens: 0,
        };
        engine.append_event(&session.id, live, meta(), body, Batch::new(), Durability::Durable)?;
    }
    let (reason, message) = if blocked {
        let waiting = if live.lock_state().pending_approval.is_some() { TurnEndReason::BlockedOnApproval } else { TurnEndReason::BlockedOnQuestion };
        (waiting, "Still waiting for you after a restart.".to_owned())
    } else {
        for call in open_calls.iter().filter(|c| Some(&c.id) != pending_use.as_ref()) {
            let content = json!({"error": "interrupted", "message": "The app stopped while this call was pending; it did not complete."}).to_string();
            let tool_meta = Meta { tool_use_id: Some(call.id.clone()), ..meta() };
            engine.append_event(
                &session.id,
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
    engine.append_event(&session.id, live, meta(), EventBody::TurnEnded { reason, message, hints: Vec::new() }, Batch::new(), Durability::Durable)?;
    Ok(())
}
