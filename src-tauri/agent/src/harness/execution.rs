//! The tool calls of a turn: each is validated against its schema, checked by the loop
//! detector, decided by the permission engine, and then answered at once (a failure or
//! a denial), blocked on the person (an approval, a question), or run. Parallel-safe
//! reads run together on scoped threads; writes and exclusive tools run alone, in
//! request order. Results are appended in the order the model asked for them.
//!
//! A write runs at most once: a durable marker under its idempotency key precedes it,
//! and its result is kept under the same key in the transaction that logs it.
//!
//! A call of an action reserved for the person (accepting or rejecting a proposal) is
//! answered `tool_forbidden`. A tool whose base version is the target of a proposal
//! (`apply_proposal`) is bound to that proposal's exact change: the target's current
//! revision, and the proposal id with the selected hunks' content hashes in the input
//! hash and the idempotency key; its approval request shows the change. A proposal
//! that cannot be applied (missing, not open, stale, a final draft) is a tool error at
//! once, without asking the person.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::event::{ApprovalChange, ApprovalHunk, EventBody, Mode, ToolStatus, TurnEndReason};
use super::log::{sha256_ref, shape_result, ApprovalRecord, ToolExecution};
use super::permission::{decide, CallFacts, Decision};
use super::replay::is_failure;
use super::tools::{idempotency_key, input_hash, normalize, BaseVersionPolicy, Concurrency, InterruptBehavior, RegisteredTool, ToolContext, ToolFailure, PERSON_ONLY_ACTIONS};
use super::turn::{hint, Flow, Turn};
use super::Meta;
use crate::error::{ApiError, ErrorCode};
use crate::llm::ToolCall;
use crate::model::{DraftStatus, Project};
use crate::proposals::{Payload, Proposal, ProposalHunk, ProposalStatus, Target};
use crate::store::{Batch, Durability, Kind, Store};

/// What the result of a call records about a write's execution.
enum Execution {
    None,
    /// The write ran: its result is kept under the idempotency key.
    Completed(String),
    /// The write reported that it did nothing: its marker goes.
    NotRun(String),
}

/// One call ready to run.
struct Run {
    call: ToolCall,
    tool: RegisteredTool,
    input: Value,
    idempotency_key: String,
    /// The approval that allowed the call: consumed by running it.
    approval: Option<String>,
    /// The target version the call was decided for.
    target_version: Option<u64>,
}

enum Prepared {
    Immediate {
        call: ToolCall,
        tool: String,
        status: ToolStatus,
        message: String,
    },
    /// A write not run because an earlier write of the turn failed.
    Skipped {
        call: ToolCall,
        tool: String,
        message: String,
    },
    Run(Run),
    Approval {
        call: ToolCall,
        tool: String,
        normalized: Value,
        input_hash: String,
        target_version: Option<u64>,
        idempotency_key: String,
        reason: String,
        reason_id: &'static str,
        change: Option<Box<ApprovalChange>>,
        offer: Option<super::allow_rule::AllowOffer>,
    },
    Question {
        call: ToolCall,
        question: String,
        options: Vec<String>,
    },
}

struct Outcome {
    status: ToolStatus,
    value: Result<Value, String>,
    note: Option<String>,
}

impl Turn<'_, '_> {
    /// Validation, permission, and the plan of one call.
    fn prepare(
        &mut self,
        registry: &super::Registry,
        call: ToolCall,
        rules: &[super::PermissionRule],
        approvals: &[ApprovalRecord],
        allow_rules: &[super::AllowRule],
        revision: Option<u64>,
    ) -> Result<Prepared, ApiError> {
        if PERSON_ONLY_ACTIONS.contains(&call.name.as_str()) {
            let name = call.name.clone();
            let message = format!(
                "`{name}` is the person's decision: only the person can accept, reject or rebase a proposal (in the review panel). To ask them to apply one, call apply_proposal, which always asks for their approval; otherwise tell them the proposal is ready for review."
            );
            return Ok(Prepared::Immediate { call, tool: name, status: ToolStatus::ToolForbidden, message });
        }
        let Some(tool) = registry.get(&call.name).cloned() else {
            let names = registry.names().join(", ");
            let name = call.name.clone();
            return Ok(Prepared::Immediate { call, tool: name.clone(), status: ToolStatus::UnknownTool, message: format!("There is no tool `{name}`. Available tools: {names}.") });
        };
        let name = tool.definition.name.clone();
        if let (true, Some((failed_tool, failed_call, status))) = (tool.definition.is_write(), &self.failed_write) {
            let status = serde_json::to_value(status).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
            let message = format!(
                "Not run: an earlier write of this turn (`{failed_tool}`, call {failed_call}) failed with `{status}`, and after a failed write the later writes of a turn are not run. Check the project, then ask for this write again."
            );
            return Ok(Prepared::Skipped { call, tool: name, message });
        }
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
        if *seen >= self.scope.limits.loop_threshold {
            self.loop_tripped = Some(name.clone());
            return Ok(Prepared::Immediate {
                call,
                tool: name.clone(),
                status: ToolStatus::LoopDetected,
                message: format!("`{name}` was called with the same input {} times in this turn; it was not run again. The user will be asked how to go on.", seen),
            });
        }
        let (target_version, hash, key, change) = match tool.definition.base_version {
            BaseVersionPolicy::None => (None, hash, idempotency_key(&tool.definition, &normalized, None, self.scope), None),
            BaseVersionPolicy::ProjectRevision => (revision, hash, idempotency_key(&tool.definition, &normalized, revision, self.scope), None),
            BaseVersionPolicy::ProposalTarget => match bind_proposal(self.engine.store(), &self.scope.project_id, &normalized)? {
                Err(message) => return Ok(Prepared::Immediate { call, tool: name, status: ToolStatus::ToolError, message }),
                Ok(binding) => {
                    // The exact change is part of what is approved and of the key: a
                    // changed selection or patch is another call.
                    let bound = input_hash(&json!({"input": normalized, "bound": binding.material}));
                    let key = idempotency_key(&tool.definition, &normalized, Some(binding.target_version), self.scope);
                    let key = sha256_ref(format!("{key}\u{0}{}", binding.material).as_bytes());
                    (Some(binding.target_version), bound, key, Some(Box::new(binding.change)))
                }
            },
        };
        let mode = self.state(|s| s.mode);
        let facts = CallFacts {
            input: &normalized,
            input_hash: &hash,
            target_version,
            idempotency_key: &key,
            workspace_id: &self.scope.workspace_id,
            project_id: &self.scope.project_id,
            owner: &self.scope.owner,
        };
        let mut decision = decide(&tool.definition, facts, mode, rules, approvals, allow_rules);
        // A write that already ran (or began) here under the same scoped key is not run
        // again: its recorded result is the answer, so there is nothing to approve.
        if tool.definition.is_write() && matches!(decision, Decision::Ask { .. }) && self.engine.store().contains(Kind::ToolExecutions, key.as_bytes())? {
            decision = Decision::Allow {
                reason: "already executed in this session under the same idempotency key: the recorded result is returned and nothing runs again".to_owned(),
                approval: None,
                rule: None,
            };
        }
        // A call an "always allow" rule allowed counts on the rule in the same write as
        // the decision event (read fresh: another session may have counted meanwhile).
        let mut extra = Batch::new();
        let rule_id = match &decision {
            Decision::Allow { rule: Some(rule_id), .. } => {
                if let Some(mut rule) = self.engine.store().get::<super::AllowRule>(&super::AllowRule::key_for(rule_id))? {
                    rule.allowed_count += 1;
                    rule.last_allowed_at = Some(self.engine.now());
                    extra.put(&rule)?;
                }
                Some(rule_id.clone())
            }
            _ => None,
        };
        let meta = Meta { tool_use_id: Some(call.id.clone()), ..Meta::default() };
        self.append(
            meta,
            EventBody::ToolDecision { tool: name.clone(), decision: decision.name().to_owned(), reason: decision.reason().to_owned(), rule_id },
            extra,
            Durability::Grouped,
        )?;
        Ok(match decision {
            Decision::Deny { reason, plan_mode } => {
                // Plan mode blocks the call; a rule denies it. The model reads the same
                // kind of message; the UI words the status.
                let status = if plan_mode { ToolStatus::Blocked } else { ToolStatus::PermissionDenied };
                Prepared::Immediate { call, tool: name, status, message: format!("Permission denied: {reason}") }
            }
            Decision::Ask { reason, reason_id } => {
                let offer = super::allow_rule::AllowOffer::for_call(&tool.definition, &normalized);
                Prepared::Approval { call, tool: name, normalized, input_hash: hash, target_version, idempotency_key: key, reason, reason_id, change, offer }
            }
            Decision::Allow { .. } if name == "ask_user_question" => Prepared::Question {
                call,
                question: input["question"].as_str().unwrap_or("").to_owned(),
                options: input["options"].as_array().map(|o| o.iter().filter_map(|x| x.as_str().map(str::to_owned)).collect()).unwrap_or_default(),
            },
            Decision::Allow { approval, .. } => Prepared::Run(Run { call, tool, input, idempotency_key: key, approval, target_version }),
        })
    }

    /// Answers the open calls of the last reply, or blocks on one of them.
    pub(super) fn process_calls(&mut self) -> Result<Flow, ApiError> {
        let calls = self.state(|s| s.open_calls.clone());
        let registry = self.engine.harness().registry()?;
        // For `load_tools`: the names every handler of this reply's calls may see.
        let tool_names = registry.names();
        let rules = self.engine.permission_rules()?;
        let allow_rules = self.engine.allow_rules()?;
        // Only this owner's approvals: an approval never crosses sessions or runs.
        let approvals: Vec<ApprovalRecord> = self.engine.store().scan::<ApprovalRecord>(&ApprovalRecord::owner_prefix(&self.scope.owner))?;
        let revision = self.engine.store().get::<Project>(self.scope.project_id.as_bytes())?.map(|p| p.revision);
        let mut parallel: Vec<Run> = Vec::new();
        for call in calls {
            if self.live.interrupted() {
                self.run_batch(std::mem::take(&mut parallel), &tool_names)?;
                self.close_open_calls(ToolStatus::Interrupted, "Stopped by the user before this tool ran.")?;
                return Ok(Flow::End(TurnEndReason::Interrupted, "Stopped by the user.".to_owned(), Vec::new()));
            }
            match self.prepare(&registry, call, &rules, &approvals, &allow_rules, revision)? {
                Prepared::Run(run) if run.tool.definition.concurrency == Concurrency::ParallelSafe && !run.tool.definition.is_write() => parallel.push(run),
                prepared => {
                    self.run_batch(std::mem::take(&mut parallel), &tool_names)?;
                    match prepared {
                        Prepared::Immediate { call, tool, status, message } => {
                            self.append_result(&call, &tool, Outcome { status, value: Err(message), note: None }, Execution::None)?;
                        }
                        Prepared::Skipped { call, tool, message } => {
                            // Not a new failure: the breaker counts the write that failed,
                            // not the writes held back after it.
                            let breaker = self.breaker;
                            self.append_result(&call, &tool, Outcome { status: ToolStatus::Cancelled, value: Err(message), note: None }, Execution::None)?;
                            self.breaker = breaker;
                        }
                        Prepared::Run(run) => self.run_batch(vec![run], &tool_names)?,
                        Prepared::Approval { call, tool, normalized, input_hash, target_version, idempotency_key, reason, reason_id, change, offer } => {
                            let request_id = self.engine.new_id("apr");
                            let mut input = normalized;
                            if input.to_string().len() > 8 * 1024 {
                                input = json!({"preview": input.to_string().chars().take(2000).collect::<String>(), "truncated": true});
                            }
                            let meta = Meta { tool_use_id: Some(call.id.clone()), ..Meta::default() };
                            self.append(
                                meta,
                                EventBody::ApprovalRequested {
                                    request_id,
                                    tool: tool.clone(),
                                    input,
                                    input_hash,
                                    target_version,
                                    idempotency_key,
                                    reason,
                                    reason_id: Some(reason_id.to_owned()),
                                    change,
                                    offer,
                                },
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
                self.run_batch(std::mem::take(&mut parallel), &tool_names)?;
                self.close_open_calls(ToolStatus::Cancelled, "Not run: the turn stopped after repeated failures.")?;
                return Ok(flow);
            }
        }
        self.run_batch(parallel, &tool_names)?;
        if self.live.interrupted() {
            self.close_open_calls(ToolStatus::Interrupted, "Stopped by the user before this tool ran.")?;
            return Ok(Flow::End(TurnEndReason::Interrupted, "Stopped by the user.".to_owned(), Vec::new()));
        }
        if let Some(flow) = self.churn()? {
            return Ok(flow);
        }
        if let Some(tool) = self.loop_tripped.take() {
            return Ok(Flow::End(
                TurnEndReason::LoopDetected,
                format!("The model called `{tool}` with the same input {} times in this turn; it was stopped so you can say how to go on.", self.scope.limits.loop_threshold),
                vec![hint("rephrase", "Tell the assistant what to do differently, or start a new request.")],
            ));
        }
        if let Some(flow) = self.breaker_tripped() {
            return Ok(flow);
        }
        Ok(Flow::Continue)
    }

    /// Churn: the proposals this turn made rewrite one passage again and again with
    /// small differences (`proposals::churn`). Looked at once the turn made three.
    fn churn(&self) -> Result<Option<Flow>, ApiError> {
        let made = self.proposals_made.load(std::sync::atomic::Ordering::SeqCst);
        if made < crate::proposals::churn::CHURN_PROPOSALS {
            return Ok(None);
        }
        let owner = self.scope.owner.id();
        let rewrites: Vec<crate::proposals::churn::Rewrite> = crate::proposals::list(self.engine.store(), &self.scope.project_id)?
            .iter()
            .filter(|p| p.origin.turn == self.turn_sequence && (p.origin.session_id.as_deref() == Some(owner) || p.origin.run_id.as_deref() == Some(owner)))
            .map(crate::proposals::churn::Rewrite::from)
            .collect();
        let Some(churn) = crate::proposals::churn::detect(&rewrites) else { return Ok(None) };
        Ok(Some(Flow::End(
            TurnEndReason::ChurnDetected,
            format!(
                "The assistant proposed {} versions of the same passage (line {}) with only small differences ({}); it was stopped so you can choose one or say what should change.",
                churn.proposal_ids.len(),
                churn.line + 1,
                churn.proposal_ids.join(", ")
            ),
            vec![hint("choose_or_redirect", "Review the proposals and accept one, or tell the assistant what is wrong with them.")],
        )))
    }

    fn breaker_tripped(&self) -> Option<Flow> {
        match self.breaker {
            Some((status, count)) if count >= self.scope.limits.breaker_threshold => {
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
    fn run_batch(&mut self, runs: Vec<Run>, tool_names: &[String]) -> Result<(), ApiError> {
        if runs.is_empty() {
            return Ok(());
        }
        let reused = self.claim_executions(&runs)?;
        let outcomes = self.run_concurrently(&runs, &reused, tool_names);
        self.append_batch_results(runs, reused, outcomes)
    }

    /// Before anything runs: each write's execution marker (durable before the write
    /// begins) and the approval it uses up, in one transaction per call. A write with a
    /// recorded execution is not run again: its record is returned in its place.
    fn claim_executions(&mut self, runs: &[Run]) -> Result<Vec<Option<ToolExecution>>, ApiError> {
        let mut reused: Vec<Option<ToolExecution>> = Vec::with_capacity(runs.len());
        for run in runs {
            let previous = if run.tool.definition.is_write() { self.engine.store().get::<ToolExecution>(run.idempotency_key.as_bytes())? } else { None };
            let mut batch = Batch::new();
            if previous.is_none() && run.tool.definition.is_write() {
                // The marker is durable before the write begins, so a crash during the
                // write can never lead to running it a second time.
                batch.put(&ToolExecution {
                    idempotency_key: run.idempotency_key.clone(),
                    tool: run.tool.definition.name.clone(),
                    session_id: self.scope.owner.id().to_owned(),
                    workspace_id: self.scope.workspace_id.clone(),
                    project_id: self.scope.project_id.clone(),
                    tool_use_id: run.call.id.clone(),
                    content: String::new(),
                    result_ref: None,
                    executed_at: self.engine.now(),
                    completed: false,
                })?;
            }
            // The approval is used up by the execution it allowed, in the same
            // transaction as the marker: it can never allow a second one.
            if let (None, Some(request_id)) = (&previous, &run.approval) {
                let key = ApprovalRecord::key_for(&self.scope.owner, request_id);
                if let Some(mut approval) = self.engine.store().get::<ApprovalRecord>(&key)? {
                    approval.consumed_by = Some(run.call.id.clone());
                    batch.put(&approval)?;
                }
            }
            if !batch.is_empty() {
                let started = Instant::now();
                let _guard = self.engine.write_lock();
                self.engine.store().apply(batch, Durability::Durable)?;
                self.stats.durable_syncs += 1;
                self.stats.sync_time += started.elapsed();
            }
            reused.push(previous);
        }
        Ok(reused)
    }

    /// Runs the calls not `reused`, each on its own thread, until each answers, the
    /// person interrupts (a cancellable tool is stopped) or the turn's tool timeout
    /// passes. Returns each call's outcome by index (None for a reused one).
    fn run_concurrently(&self, runs: &[Run], reused: &[Option<ToolExecution>], tool_names: &[String]) -> Vec<Option<Outcome>> {
        let mut outcomes: Vec<Option<Outcome>> = runs.iter().map(|_| None).collect();
        let timeout = Duration::from_millis(self.scope.limits.tool_timeout_ms);
        let flags: Vec<AtomicBool> = runs.iter().map(|_| AtomicBool::new(false)).collect();
        let engine = self.engine;
        let live = self.live;
        let turn_scope = self.scope;
        let (mode, sequence, snapshot_id, read_sources, pins) = self.state(|s| (s.mode, s.last_sequence, s.last_snapshot_id.clone(), s.sources.clone(), s.pins.clone()));
        let (read_sources, pins) = (read_sources.as_slice(), pins.as_slice());
        // The model that answers this turn, for the origin of proposals.
        let model = self.engine.llm_profile(&self.scope.profile_id).map(|p| p.model).unwrap_or_default();
        let (turn_sequence, proposals_made) = (self.turn_sequence, &self.proposals_made);
        let (model, snapshot_id) = (model.as_str(), snapshot_id.as_deref());
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
                    let ctx = ToolContext {
                        kernel: engine.kernel,
                        may_write: run.tool.definition.is_write(),
                        capability: run.tool.definition.capability,
                        proposals_made,
                        owner: &turn_scope.owner,
                        project_id: &turn_scope.project_id,
                        tool_use_id: &run.call.id,
                        mode,
                        cancel: flag,
                        turn: turn_sequence,
                        sequence,
                        context_snapshot_id: snapshot_id,
                        model,
                        profile_id: &turn_scope.profile_id,
                        approval: run.approval.as_deref(),
                        target_version: run.target_version,
                        tool_names,
                        sources: read_sources,
                        pins,
                    };
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
        outcomes
    }

    /// Appends each call's result in request order: a reused execution's recorded
    /// result (or, for a write whose outcome is unknown, that it was not run again),
    /// else its outcome; a successful plan-mode tool changes the mode.
    fn append_batch_results(&mut self, runs: Vec<Run>, mut reused: Vec<Option<ToolExecution>>, mut outcomes: Vec<Option<Outcome>>) -> Result<(), ApiError> {
        for (index, run) in runs.into_iter().enumerate() {
            if let Some(previous) = reused[index].take() {
                let meta = Meta { tool_use_id: Some(run.call.id.clone()), ..Meta::default() };
                let (status, content, result_ref) = if previous.completed {
                    (ToolStatus::Success, previous.content, previous.result_ref)
                } else {
                    let message = "This write began before the app stopped and its outcome is unknown, so it was not run again. Check the project before asking for it again.";
                    (ToolStatus::Interrupted, json!({"error": "interrupted", "message": message}).to_string(), None)
                };
                if status != ToolStatus::Success && self.failed_write.is_none() {
                    self.failed_write = Some((run.tool.definition.name.clone(), run.call.id.clone(), status));
                }
                let body = EventBody::ToolResult { tool: run.tool.definition.name.clone(), status, content, result_ref, reused_execution: true };
                self.record_result_status(status);
                self.append(meta, body, Batch::new(), Durability::Durable)?;
                continue;
            }
            let outcome = outcomes[index].take().unwrap_or(Outcome { status: ToolStatus::ToolError, value: Err("The tool stopped without a result.".to_owned()), note: None });
            let name = run.tool.definition.name.clone();
            let execution = if !run.tool.definition.is_write() {
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
            if run.tool.definition.is_write() && !success && self.failed_write.is_none() {
                self.failed_write = Some((name.clone(), run.call.id.clone(), outcome.status));
            }
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
        let room = self.result_room()?;
        let mut extra = Batch::new();
        let (content, result_ref) = match outcome.value {
            Ok(mut value) => {
                if let (Some(note), Value::Object(map)) = (&outcome.note, &mut value) {
                    map.insert("note".to_owned(), Value::String(note.clone()));
                }
                let shaped = shape_result(&value, max_chars, room);
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
                    session_id: self.scope.owner.id().to_owned(),
                    workspace_id: self.scope.workspace_id.clone(),
                    project_id: self.scope.project_id.clone(),
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
        // What this result takes is no longer room for the next ones.
        self.result_room = Some(room.saturating_sub(crate::llm::estimate_tokens(&content)));
        let meta = Meta { tool_use_id: Some(call.id.clone()), ..Meta::default() };
        self.append(meta, EventBody::ToolResult { tool: tool.to_owned(), status: outcome.status, content, result_ref, reused_execution: false }, extra, durability)?;
        Ok(())
    }
}

/// What the approval of a call that applies a proposal is bound to.
struct ProposalBinding {
    /// The current revision of the proposal's target.
    target_version: u64,
    /// The proposal id and the sorted content hashes of the selected hunks (or, for a
    /// proposal without hunks, the hash of its payload).
    material: Value,
    /// What the person is shown.
    change: ApprovalChange,
}

/// The most bytes the change shown with an approval request takes in its log line.
const CHANGE_BYTES: usize = 36 * 1024;

/// Binds a call naming `proposalId` (and optionally `hunks`) to the proposal's exact
/// change and its target's revision. `Ok(Err(message))`: the call cannot apply (no
/// such proposal, another project, not open, stale, bad hunk ids), answered as a tool
/// error without asking the person.
fn bind_proposal(store: &Store, project_id: &str, input: &Value) -> Result<Result<ProposalBinding, String>, ApiError> {
    let Some(id) = input["proposalId"].as_str() else { return Ok(Err("Name the proposal to apply (`proposalId`).".to_owned())) };
    let proposal = match crate::proposals::load(store, id) {
        Ok(proposal) => proposal,
        Err(error) if error.code == ErrorCode::NotFound => return Ok(Err(format!("There is no proposal `{id}`."))),
        Err(error) => return Err(error),
    };
    if proposal.project_id != project_id {
        return Ok(Err(format!("Proposal {id} belongs to another project; this session can only apply proposals of its own project.")));
    }
    if proposal.status != ProposalStatus::Proposed {
        let status = serde_json::to_value(proposal.status).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
        let newer = proposal.superseded_by.as_ref().map(|n| format!(" Apply the newer proposal {n} instead.")).unwrap_or_default();
        return Ok(Err(format!("Proposal {id} is {status}; only an open proposal can be applied.{newer}")));
    }
    let stale = crate::proposals::staleness(store, &proposal)?;
    if stale.stale {
        let reason = stale.reason.unwrap_or_default();
        return Ok(Err(format!("Proposal {id} is stale: {reason} Read the current text and make a new proposal.")));
    }
    let wanted: Option<Vec<String>> = input["hunks"].as_array().map(|ids| ids.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect());
    let open = |h: &&ProposalHunk| !proposal.rejected_hunks.contains(&h.id);
    let selected: Vec<&ProposalHunk> = match &wanted {
        None => proposal.hunks.iter().filter(open).collect(),
        Some(ids) => {
            if proposal.hunks.is_empty() && !ids.is_empty() {
                return Ok(Err(format!("Proposal {id} ({}) has no hunks; leave `hunks` out.", proposal.kind.as_str())));
            }
            for (i, wanted_id) in ids.iter().enumerate() {
                match proposal.hunks.iter().find(|h| &h.id == wanted_id) {
                    None => {
                        let known: Vec<&str> = proposal.hunks.iter().map(|h| h.id.as_str()).collect();
                        return Ok(Err(format!("hunks[{i}]: proposal {id} has no hunk {wanted_id}; its hunks are {}.", known.join(", "))));
                    }
                    Some(h) if proposal.rejected_hunks.contains(&h.id) => return Ok(Err(format!("hunks[{i}]: hunk {wanted_id} was rejected by the person."))),
                    Some(_) if ids[..i].contains(wanted_id) => return Ok(Err(format!("hunks[{i}]: hunk {wanted_id} is named twice."))),
                    Some(_) => {}
                }
            }
            proposal.hunks.iter().filter(|h| ids.contains(&h.id)).collect()
        }
    };
    if !proposal.hunks.is_empty() && selected.is_empty() {
        return Ok(Err(format!("No hunk of proposal {id} is selected: name at least one open hunk, or leave `hunks` out.")));
    }
    let project = crate::project::load(store, project_id)?;
    // The version an accept would save (see `ApprovalChange::creates_version`).
    let creates_version = match (&proposal.target, &proposal.payload) {
        (Target::Source, Payload::Text { .. } | Payload::Candidates { .. }) => Some(project.head + 1),
        (Target::Metadata, Payload::Metadata { change }) if change.title.as_ref().is_some_and(|t| *t != project.title) => Some(project.head + 1),
        _ => None,
    };
    let target_version = match &proposal.target {
        Target::Draft { platform } => match crate::project::drafts::load(store, project_id, *platform)? {
            // Not worth asking the person for what the accept refuses the assistant.
            Some(draft) if draft.status != DraftStatus::Draft => {
                let status = serde_json::to_value(draft.status).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
                return Ok(Err(format!("The {} draft is {status}: only the person can change it (they can accept proposal {id} in the review panel).", platform.as_str())));
            }
            Some(draft) => u64::from(draft.revision),
            None => return Ok(Err(format!("The {} draft of proposal {id} no longer exists.", platform.as_str()))),
        },
        _ => project.revision,
    };
    let mut hashes: Vec<&str> = selected.iter().map(|h| h.content_hash.as_str()).collect();
    hashes.sort_unstable();
    let payload = if proposal.hunks.is_empty() { Some(sha256_ref(&serde_json::to_vec(&proposal.payload).unwrap_or_default())) } else { None };
    let material = json!({"proposal": id, "hunkHashes": hashes, "payload": payload});
    let change = match approval_change(&proposal, &selected, input, creates_version, hunk_set_hash(&material)) {
        Ok(change) => change,
        Err(message) => return Ok(Err(message)),
    };
    Ok(Ok(ProposalBinding { target_version, material, change }))
}

/// The hash of everything an approval of `material` (see [`bind_proposal`]) applies.
fn hunk_set_hash(material: &Value) -> String {
    sha256_ref(material.to_string().as_bytes())
}

/// The hunk-set hash a pending `apply_proposal` call (its raw arguments) would apply
/// now: `Ok(None)` when it cannot apply any more (the turn answers it when it goes on).
pub(crate) fn current_hunk_set_hash(store: &Store, project_id: &str, arguments: &str) -> Result<Option<String>, ApiError> {
    let raw = if arguments.trim().is_empty() { "{}" } else { arguments };
    let Ok(input) = serde_json::from_str::<Value>(raw) else { return Ok(None) };
    Ok(match bind_proposal(store, project_id, &normalize(&input))? {
        Ok(binding) => binding.change.hunk_set_hash,
        Err(_) => None,
    })
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

/// What the person is shown with the approval request: the proposal, its target and
/// every selected hunk, within [`CHANGE_BYTES`] (the diffs of the first hunks that
/// fit; the UI reads the others from the proposal by id). When even the bare list of
/// the selected hunks does not fit, the change is not put to the person in a prompt:
/// `Err` is the tool error that says so and sends them to the review panel, so a
/// prompt never shows fewer hunks than the approval applies.
fn approval_change(proposal: &Proposal, selected: &[&ProposalHunk], input: &Value, creates_version: Option<u32>, hunk_set_hash: String) -> Result<ApprovalChange, String> {
    let choices: Vec<&str> = input["choices"].as_array().map(|c| c.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
    let detail = match &proposal.payload {
        Payload::Text { .. } => None,
        Payload::Candidates { candidates } if choices.is_empty() => Some(format!("Candidates: {}", candidates.iter().map(|c| c.text.as_str()).collect::<Vec<_>>().join(" | "))),
        Payload::Candidates { .. } => Some(format!("Take: {}", choices.join(" | "))),
        Payload::CommentReply { comment_id, body } => Some(format!("Reply to comment {comment_id}: {body}")),
        Payload::Metadata { change } => Some(format!("Project settings: {}", serde_json::to_string(change).unwrap_or_default())),
        Payload::Outline { outline } => Some(format!("Record the outline as accepted (nothing official changes): {outline}")),
        Payload::Checklist { items } => Some(format!("Record the checklist of {} items as accepted (nothing official changes).", items.len())),
    };
    let total_bytes: u64 = selected.iter().map(|h| (h.old_text.len() + h.new_text.len()) as u64).sum();
    let mut change = ApprovalChange {
        proposal_id: proposal.id.clone(),
        kind: proposal.kind,
        summary: short(&proposal.summary, 1_000),
        target: proposal.target.clone(),
        hunks: Vec::new(),
        omitted_hunks: 0,
        detail: detail.map(|d| short(&d, 4_000)),
        creates_version,
        hunk_set_hash: Some(hunk_set_hash),
        total_hunks: Some(u32::try_from(selected.len()).unwrap_or(u32::MAX)),
        total_bytes: Some(total_bytes),
    };
    let bare: Vec<ApprovalHunk> = selected.iter().map(|h| ApprovalHunk { id: h.id.clone(), content_hash: h.content_hash.clone(), display: None }).collect();
    let bare_bytes: Vec<usize> = bare.iter().map(|h| serde_json::to_vec(h).map(|v| v.len()).unwrap_or(CHANGE_BYTES) + 1).collect();
    let base = serde_json::to_vec(&change).map(|v| v.len()).unwrap_or(CHANGE_BYTES);
    let listed: usize = base + bare_bytes.iter().sum::<usize>();
    if listed > CHANGE_BYTES {
        // How many hunks one prompt can list, for the model to apply in parts.
        let mut room = CHANGE_BYTES.saturating_sub(base);
        let fit = bare_bytes.iter().take_while(|b| room.checked_sub(**b).map(|left| room = left).is_some()).count();
        let kib = total_bytes.div_ceil(1024);
        return Err(format!(
            "Proposal {id} is too large to put to the person in an approval prompt: its {n} selected hunks ({kib} KiB of changed text) cannot all be shown there, and a person only approves what they are shown. Nothing was applied. Tell the person to review proposal {id} in the review panel, where they see every hunk and accept what they choose; or apply it in parts by naming at most {fit} hunks in `hunks` per call.",
            id = proposal.id,
            n = selected.len(),
        ));
    }
    // The diffs of the first hunks that fit; once one does not, the rest are listed
    // without theirs, so the shown diffs are a prefix of the selection.
    let mut used = listed;
    let mut showing = true;
    for ((hunk, bare), bare_bytes) in selected.iter().zip(bare).zip(bare_bytes) {
        if showing {
            let shown = ApprovalHunk { display: Some(hunk.display.clone()), ..bare.clone() };
            let bytes = serde_json::to_vec(&shown).map(|v| v.len()).unwrap_or(CHANGE_BYTES) + 1;
            if used - bare_bytes + bytes <= CHANGE_BYTES {
                used = used - bare_bytes + bytes;
                change.hunks.push(shown);
                continue;
            }
            showing = false;
        }
        change.hunks.push(bare);
    }
    Ok(change)
}
