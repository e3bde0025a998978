//! Running the calls a turn decided to run: each write's durable execution marker
//! (and the approval it uses up) before anything begins, then the calls themselves,
//! parallel-safe reads together on scoped threads, each until it answers, the person
//! interrupts or the tool timeout passes.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::super::event::ToolStatus;
use super::super::log::{ApprovalRecord, ToolExecution};
use super::super::tools::{InterruptBehavior, ToolContext, ToolFailure};
use super::super::turn::Turn;
use super::{CallFailure, Outcome, Run};
use crate::error::ApiError;
use crate::store::{Batch, Durability};

impl Turn<'_, '_> {
    /// Runs calls (concurrently when more than one) and appends their results in
    /// request order.
    pub(super) fn run_batch(&mut self, runs: Vec<Run>, tool_names: &[String]) -> Result<(), ApiError> {
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
    pub(super) fn claim_executions(&mut self, runs: &[Run]) -> Result<Vec<Option<ToolExecution>>, ApiError> {
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
    pub(super) fn run_concurrently(&self, runs: &[Run], reused: &[Option<ToolExecution>], tool_names: &[String]) -> Vec<Option<Outcome>> {
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
                                Err(failure) if failure.interrupted => Outcome { status: ToolStatus::Interrupted, value: Err(CallFailure::Tool(failure.message)), note: None },
                                Err(failure) => Outcome { status: ToolStatus::ToolError, value: Err(CallFailure::Tool(failure.message)), note: None },
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
                                outcomes[index] = Some(Outcome { status: ToolStatus::Interrupted, value: Err(CallFailure::StoppedWhileRunning), note: None });
                                pending -= 1;
                            } else if timed_out {
                                flags[index].store(true, Ordering::SeqCst);
                                outcomes[index] = Some(Outcome { status: ToolStatus::Timeout, value: Err(CallFailure::TimedOut { millis: timeout.as_millis() }), note: None });
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
}
