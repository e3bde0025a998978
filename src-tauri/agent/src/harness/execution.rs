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

mod prepare;
mod proposal;
mod results;
mod run;

use serde_json::{json, Value};

use super::event::{ApprovalChange, EventBody, ToolStatus, TurnEndReason};
use super::log::ApprovalRecord;
use super::tools::{Concurrency, RegisteredTool};
use super::turn::{hint, Flow, Turn};
use super::Meta;
use crate::error::ApiError;
use crate::llm::ToolCall;
use crate::model::Project;
use crate::store::{Batch, Durability};

pub(crate) use proposal::current_hunk_set_hash;

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
    value: Result<Value, CallFailure>,
    note: Option<String>,
}

/// Why a call has no value. Its text is the `message` of the tool result the model
/// reads (beside the status).
#[derive(Debug, Clone, thiserror::Error)]
enum CallFailure {
    /// Answered before it ran (refused, an unknown tool, bad input, a loop, a proposal
    /// that cannot apply): the reason the checks gave.
    #[error("{0}")]
    Answered(String),
    /// A write held back because an earlier write of the turn failed.
    #[error("{0}")]
    HeldBack(String),
    #[error("Stopped by the user before this tool ran.")]
    StoppedBeforeRun,
    #[error("Not run: the turn stopped after repeated failures.")]
    BreakerTripped,
    /// The tool's handler failed (or was cancelled): its own message.
    #[error("{0}")]
    Tool(String),
    #[error("Stopped by the user while running.")]
    StoppedWhileRunning,
    #[error("No result within {millis} ms; the tool was stopped.")]
    TimedOut { millis: u128 },
    #[error("The tool stopped without a result.")]
    NoResult,
}

impl Turn<'_, '_> {
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
                self.close_open_calls(ToolStatus::Interrupted, CallFailure::StoppedBeforeRun)?;
                return Ok(Flow::End(TurnEndReason::Interrupted, "Stopped by the user.".to_owned(), Vec::new()));
            }
            match self.prepare(&registry, call, &rules, &approvals, &allow_rules, revision)? {
                Prepared::Run(run) if run.tool.definition.concurrency == Concurrency::ParallelSafe && !run.tool.definition.is_write() => parallel.push(run),
                prepared => {
                    self.run_batch(std::mem::take(&mut parallel), &tool_names)?;
                    match prepared {
                        Prepared::Immediate { call, tool, status, message } => {
                            self.append_result(&call, &tool, Outcome { status, value: Err(CallFailure::Answered(message)), note: None }, Execution::None)?;
                        }
                        Prepared::Skipped { call, tool, message } => {
                            // Not a new failure: the breaker counts the write that failed,
                            // not the writes held back after it.
                            let breaker = self.breaker;
                            self.append_result(&call, &tool, Outcome { status: ToolStatus::Cancelled, value: Err(CallFailure::HeldBack(message)), note: None }, Execution::None)?;
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
                self.close_open_calls(ToolStatus::Cancelled, CallFailure::BreakerTripped)?;
                return Ok(flow);
            }
        }
        self.run_batch(parallel, &tool_names)?;
        if self.live.interrupted() {
            self.close_open_calls(ToolStatus::Interrupted, CallFailure::StoppedBeforeRun)?;
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
}
