//! The tools the model may call, one file per group. Each tool is a definition (what
//! the harness and the permission engine need to know) and a handler that calls typed
//! core functions (never the JSON dispatcher), so a renamed field is a compile error.
//! The engine registers [`builtins`] into the harness's registry.

mod read;
mod workflow;

use serde_json::{json, Value};

use crate::harness::permission::PermissionPolicy;
use crate::harness::tools::{BaseVersionPolicy, Capability, Concurrency, InterruptBehavior, RiskLevel};
use crate::harness::{ToolDefinition, ToolHandler};

/// Every built-in tool with its handler.
pub fn builtins() -> Vec<(ToolDefinition, ToolHandler)> {
    let mut tools = read::tools();
    tools.extend(workflow::tools());
    tools
}

fn schema(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

/// A read tool: allowed, parallel-safe, cancellable, read-only, a small result budget
/// (lists and logs).
fn read_tool(name: &str, description: &str, properties: Value, summary: &str) -> ToolDefinition {
    ToolDefinition {
        name: name.to_owned(),
        version: 1,
        description: description.to_owned(),
        prompt: description.to_owned(),
        input_schema: schema(properties, &[]),
        output_schema: json!({"type": "object"}),
        capability: Capability::Read,
        risk: RiskLevel::Low,
        permission: PermissionPolicy::Allow,
        read_only: true,
        destructive: false,
        concurrency: Concurrency::ParallelSafe,
        interrupt: InterruptBehavior::Cancel,
        idempotency_key_fields: Vec::new(),
        base_version: BaseVersionPolicy::None,
        max_result_chars: 2_000,
        result_summary: summary.to_owned(),
    }
}
