//! Workflow tools: questions to the person, plan mode, and permission requests.

use std::sync::Arc;

use serde_json::{json, Value};

use super::{read_tool, schema};
use crate::harness::permission::PermissionPolicy;
use crate::harness::tools::{Capability, Concurrency, InterruptBehavior, LOAD_TOOLS};
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
            ToolDefinition {
                max_result_chars: 1_000,
                input_schema: schema(json!({"names": {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 64}, "minItems": 1, "maxItems": 40}}), &["names"]),
                ..read_tool(LOAD_TOOLS, "Load more tools by name. Their full definitions come with your next step; call them then.", json!({}), "the tools loaded")
            },
            Arc::new(|ctx, input| {
                let asked: Vec<&str> = input["names"].as_array().map(|names| names.iter().filter_map(|n| n.as_str()).map(str::trim).collect()).unwrap_or_default();
                let (loaded, unknown): (Vec<&str>, Vec<&str>) = asked.into_iter().partition(|name| *name != LOAD_TOOLS && ctx.tool_names.iter().any(|t| t == name));
                if loaded.is_empty() {
                    return Err(ToolFailure::new(format!(
                        "No tool is named {}. The tools you can load are listed in this tool's description.",
                        unknown.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
                    )));
                }
                Ok(json!({"loaded": loaded, "unknown": unknown, "note": "Their definitions come with your next step; call them then."}))
            }),
        ),
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
