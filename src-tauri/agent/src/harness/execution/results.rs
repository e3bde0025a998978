//! The results of a turn's tool calls, appended to the log in the order the model
//! asked for them: a reused execution's recorded result, an outcome shaped to the
//! model's room (large results kept in the result store), a write's execution record
//! kept or dropped with it, and the failures the circuit breaker counts.

use serde_json::{json, Value};

use super::super::event::{EventBody, Mode, ToolStatus};
use super::super::log::{shape_result, ToolExecution};
use super::super::replay::is_failure;
use super::super::turn::Turn;
use super::super::Meta;
use super::{CallFailure, Execution, Outcome, Run};
use crate::error::ApiError;
use crate::llm::ToolCall;
use crate::store::{Batch, Durability, Kind};

impl Turn<'_, '_> {
    /// Answers every call still open (after an interrupt, a breaker trip).
    pub(super) fn close_open_calls(&mut self, status: ToolStatus, why: CallFailure) -> Result<(), ApiError> {
        let open = self.state(|s| s.open_calls.clone());
        for call in open {
            let name = call.name.clone();
            self.append_result(&call, &name, Outcome { status, value: Err(why.clone()), note: None }, Execution::None)?;
        }
        Ok(())
    }

    /// Appends each call's result in request order: a reused execution's recorded
    /// result (or, for a write whose outcome is unknown, that it was not run again),
    /// else its outcome; a successful plan-mode tool changes the mode.
    pub(super) fn append_batch_results(&mut self, runs: Vec<Run>, mut reused: Vec<Option<ToolExecution>>, mut outcomes: Vec<Option<Outcome>>) -> Result<(), ApiError> {
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
            let outcome = outcomes[index].take().unwrap_or(Outcome { status: ToolStatus::ToolError, value: Err(CallFailure::NoResult), note: None });
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

    pub(super) fn record_result_status(&mut self, status: ToolStatus) {
        if is_failure(status) {
            self.breaker = match self.breaker {
                Some((last, count)) if last == status => Some((status, count + 1)),
                _ => Some((status, 1)),
            };
        } else {
            self.breaker = None;
        }
    }

    pub(super) fn append_result(&mut self, call: &ToolCall, tool: &str, outcome: Outcome, execution: Execution) -> Result<(), ApiError> {
        self.append_result_with(call, tool, outcome, super::super::PREVIEW_CHARS, execution)
    }

    pub(super) fn append_result_with(&mut self, call: &ToolCall, tool: &str, outcome: Outcome, max_chars: usize, execution: Execution) -> Result<(), ApiError> {
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
            Err(why) => {
                let status = serde_json::to_value(outcome.status).unwrap_or(Value::Null);
                (json!({"error": status, "message": why.to_string()}).to_string(), None)
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
