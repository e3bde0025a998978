//! Workflow tools: questions to the person, plan mode, and permission requests.

use std::sync::Arc;

use serde_json::{json, Value};

use super::{read_tool, schema};
use crate::harness::permission::PermissionPolicy;
use crate::harness::tools::{Capability, Concurrency, InterruptBehavior};
use crate::harness::{ToolDefinition, ToolFailure, ToolHandler};

fn workflow_tool(name: &str, description: &str, input: Value, permission: PermissionPolicy, summary: &str) -> ToolDefinition {
    ToolDefinition {
        capability: Capability::Workflow,
        permission,
        concurrency: Concurrency::Exclusive,
        interrupt: InterruptBehavior::Block,
        input_schema: input,
        ..read_tool(name, description, json!({}), summary)
    }
}

pub(super) fn tools() -> Vec<(ToolDefinition, ToolHandler)> {
    vec![
        (
            workflow_tool(
                "ask_user_question",
                "Ask the user a question and wait for the answer. Use it when the request is ambiguous.",
                schema(
                    json!({"question": {"type": "string", "minLength": 1, "maxLength": 2000}, "options": {"type": "array", "items": {"type": "string"}, "maxItems": 8}}),
                    &["question"],
                ),
                PermissionPolicy::Allow,
                "the user's answer",
            ),
            // Answered by the user, not by a handler: the turn loop blocks on it.
            Arc::new(|_, _| Err(ToolFailure::new("this tool is answered by the user"))),
        ),
        (
            workflow_tool(
                "enter_plan_mode",
                "Switch the session to plan mode: read and propose only, no writes, until the user approves a plan.",
                schema(json!({}), &[]),
                PermissionPolicy::Allow,
                "the new mode",
            ),
            Arc::new(|_, _| Ok(json!({"mode": "plan", "note": "Plan mode: read and propose only. Present a plan with exit_plan_mode."}))),
        ),
        (
            workflow_tool(
                "exit_plan_mode",
                "Present a plan to the user; on approval the session leaves plan mode.",
                schema(json!({"plan": {"type": "string", "minLength": 1, "maxLength": 20000}}), &["plan"]),
                PermissionPolicy::Ask,
                "whether the plan was approved",
            ),
            Arc::new(|_, _| Ok(json!({"approved": true, "mode": "default"}))),
        ),
        (
            workflow_tool(
                "request_permission",
                "Ask the user about something the current mode or rules do not allow; it is shown as an approval prompt. The answer is only the user's decision: it grants nothing, and every later tool call is decided as before.",
                schema(json!({"permission": {"type": "string", "minLength": 1, "maxLength": 500}, "reason": {"type": "string", "maxLength": 2000}}), &["permission"]),
                PermissionPolicy::Ask,
                "the user's decision; nothing is granted",
            ),
            // Runs only when the user approved (a denial is a permission_denied result).
            // It changes no mode, rule or approval, and says so, so the model does not
            // take the answer for a grant.
            Arc::new(|_, input| {
                Ok(json!({
                    "decision": "approved",
                    "permission": input["permission"],
                    "changed": "nothing",
                    "message": "The user approved this request. Nothing else changed: no permission, rule or mode was granted or altered, and every later tool call is decided exactly as before (writes still ask for approval).",
                }))
            }),
        ),
    ]
}
