//! Deciding one tool call before anything runs: the call is checked (a person-only
//! action, an unknown tool, a write after a failed one, arguments that are not JSON or
//! do not match the schema), counted by the loop detector, bound to what it changes
//! (the project revision, or a proposal's exact change), decided by the permission
//! engine, and turned into its plan: an answer at once, an approval, a question, or a
//! run.

use std::ops::ControlFlow;

use serde_json::{json, Value};

use super::super::event::{EventBody, ToolStatus};
use super::super::log::{sha256_ref, ApprovalRecord};
use super::super::permission::{decide, CallFacts, Decision};
use super::super::tools::{idempotency_key, input_hash, normalize, BaseVersionPolicy, RegisteredTool, PERSON_ONLY_ACTIONS};
use super::super::turn::Turn;
use super::super::Meta;
use super::proposal::bind_proposal;
use super::{Prepared, Run};
use crate::error::ApiError;
use crate::llm::ToolCall;
use crate::store::{Batch, Durability, Kind};

impl Turn<'_, '_> {
    /// Validation, permission, and the plan of one call.
    pub(super) fn prepare(
        &mut self,
        registry: &super::super::Registry,
        call: ToolCall,
        rules: &[super::super::PermissionRule],
        approvals: &[ApprovalRecord],
        allow_rules: &[super::super::AllowRule],
        revision: Option<u64>,
    ) -> Result<Prepared, ApiError> {
        let (call, tool, input) = match self.validate(registry, call) {
            ControlFlow::Continue(valid) => valid,
            ControlFlow::Break(answer) => return Ok(answer),
        };
        let name = tool.definition.name.clone();
        let normalized = normalize(&input);
        let hash = input_hash(&normalized);
        if let Some(message) = self.repeated(&name, &hash) {
            return Ok(Prepared::Immediate { call, tool: name, status: ToolStatus::LoopDetected, message });
        }
        let (target_version, hash, key, change) = match tool.definition.base_version {
            BaseVersionPolicy::None => (None, hash, idempotency_key(&tool.definition, &normalized, None, self.scope), None),
            BaseVersionPolicy::ProjectRevision => (revision, hash, idempotency_key(&tool.definition, &normalized, revision, self.scope), None),
            BaseVersionPolicy::ProposalTarget => match bind_proposal(self.engine.store(), &self.scope.project_id, &normalized)? {
                Err(why) => return Ok(Prepared::Immediate { call, tool: name, status: ToolStatus::ToolError, message: why.to_string() }),
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
        let facts = CallFacts {
            input: &normalized,
            input_hash: &hash,
            target_version,
            idempotency_key: &key,
            workspace_id: &self.scope.workspace_id,
            project_id: &self.scope.project_id,
            owner: &self.scope.owner,
        };
        let decision = self.decide_call(&call, &tool, facts, rules, approvals, allow_rules)?;
        Ok(match decision {
            Decision::Deny { reason, plan_mode } => {
                // Plan mode blocks the call; a rule denies it. The model reads the same
                // kind of message; the UI words the status.
                let status = if plan_mode { ToolStatus::Blocked } else { ToolStatus::PermissionDenied };
                Prepared::Immediate { call, tool: name, status, message: format!("Permission denied: {reason}") }
            }
            Decision::Ask { reason, reason_id } => {
                let offer = super::super::allow_rule::AllowOffer::for_call(&tool.definition, &normalized);
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

    /// The checks before a call is decided: a person-only action, an unknown tool, a
    /// write after a failed write of the turn, arguments that are not JSON or do not
    /// match the tool's schema. `Break` is the answer given at once; `Continue` is the
    /// call with its tool and parsed input.
    fn validate(&self, registry: &super::super::Registry, call: ToolCall) -> ControlFlow<Prepared, (ToolCall, RegisteredTool, Value)> {
        if PERSON_ONLY_ACTIONS.contains(&call.name.as_str()) {
            let name = call.name.clone();
            let message = format!(
                "`{name}` is the person's decision: only the person can accept, reject or rebase a proposal (in the review panel). To ask them to apply one, call apply_proposal, which always asks for their approval; otherwise tell them the proposal is ready for review."
            );
            return ControlFlow::Break(Prepared::Immediate { call, tool: name, status: ToolStatus::ToolForbidden, message });
        }
        let Some(tool) = registry.get(&call.name).cloned() else {
            let names = registry.names().join(", ");
            let name = call.name.clone();
            return ControlFlow::Break(Prepared::Immediate {
                call,
                tool: name.clone(),
                status: ToolStatus::UnknownTool,
                message: format!("There is no tool `{name}`. Available tools: {names}."),
            });
        };
        let name = tool.definition.name.clone();
        if let (true, Some((failed_tool, failed_call, status))) = (tool.definition.is_write(), &self.failed_write) {
            let status = serde_json::to_value(status).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
            let message = format!(
                "Not run: an earlier write of this turn (`{failed_tool}`, call {failed_call}) failed with `{status}`, and after a failed write the later writes of a turn are not run. Check the project, then ask for this write again."
            );
            return ControlFlow::Break(Prepared::Skipped { call, tool: name, message });
        }
        let raw = if call.arguments.trim().is_empty() { "{}" } else { call.arguments.as_str() };
        let input: Value = match serde_json::from_str(raw) {
            Ok(value) => value,
            Err(e) => {
                return ControlFlow::Break(Prepared::Immediate {
                    call,
                    tool: name,
                    status: ToolStatus::SchemaViolation,
                    message: format!("The arguments are not valid JSON (at pointer \"\"): {e}."),
                })
            }
        };
        if let Err(problems) = tool.validate(&input) {
            let text: Vec<String> = problems.iter().map(|(pointer, message)| format!("at pointer \"{pointer}\": {message}")).collect();
            return ControlFlow::Break(Prepared::Immediate {
                call,
                tool: name,
                status: ToolStatus::SchemaViolation,
                message: format!("The input does not match the schema of `{}`: {}.", tool.definition.name, text.join("; ")),
            });
        }
        ControlFlow::Continue((call, tool, input))
    }

    /// The loop detector: counts the call by tool and input hash; at the turn's
    /// threshold it trips, and the message is the call's answer (it is not run).
    fn repeated(&mut self, name: &str, hash: &str) -> Option<String> {
        let loop_key = format!("{name}\u{0}{hash}");
        let seen = self.repeats.entry(loop_key).or_insert(0);
        *seen += 1;
        if *seen >= self.scope.limits.loop_threshold {
            self.loop_tripped = Some(name.to_owned());
            return Some(format!("`{name}` was called with the same input {} times in this turn; it was not run again. The user will be asked how to go on.", seen));
        }
        None
    }

    /// The permission decision of a call, logged as its `tool_decision` event (with
    /// the count on the "always allow" rule that allowed it, in the same write).
    fn decide_call(
        &mut self,
        call: &ToolCall,
        tool: &RegisteredTool,
        facts: CallFacts<'_>,
        rules: &[super::super::PermissionRule],
        approvals: &[ApprovalRecord],
        allow_rules: &[super::super::AllowRule],
    ) -> Result<Decision, ApiError> {
        let mode = self.state(|s| s.mode);
        let key = facts.idempotency_key;
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
                if let Some(mut rule) = self.engine.store().get::<super::super::AllowRule>(&super::super::AllowRule::key_for(rule_id))? {
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
            EventBody::ToolDecision { tool: tool.definition.name.clone(), decision: decision.name().to_owned(), reason: decision.reason().to_owned(), rule_id },
            extra,
            Durability::Grouped,
        )?;
        Ok(decision)
    }
}
