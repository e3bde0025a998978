//! The tool registry: definitions (everything the turn loop and the permission engine
//! need to know about a tool), compiled input validators, and the handlers. The tools
//! themselves are in `crate::tools`; the engine registers them.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use ts_rs::TS;

use super::event::Mode;
use super::permission::PermissionPolicy;
use crate::kernel::Kernel;
use crate::llm::structured::{InvalidSchema, Validator};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum Capability {
    Read,
    Propose,
    Validate,
    Write,
    Workflow,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum RiskLevel {
    Low,
    Medium,
    High,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum Concurrency {
    /// May run beside other parallel-safe calls.
    ParallelSafe,
    /// Runs alone, one at a time, in request order.
    Exclusive,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum InterruptBehavior {
    /// Stops at once on interrupt.
    Cancel,
    /// Finishes (or rolls back) what it began, and reports which.
    Block,
}

/// Which version of its target a tool's effect depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum BaseVersionPolicy {
    /// The tool does not depend on a target version.
    None,
    /// The session project's working-copy revision; an approval is bound to it.
    ProjectRevision,
}

/// Everything the harness knows about a tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolDefinition {
    pub name: String,
    pub version: u32,
    /// For people (the UI, the CLI).
    pub description: String,
    /// For the model: sent as the tool's description.
    pub prompt: String,
    #[ts(type = "unknown")]
    pub input_schema: Value,
    #[ts(type = "unknown")]
    pub output_schema: Value,
    pub capability: Capability,
    pub risk: RiskLevel,
    pub permission: PermissionPolicy,
    pub read_only: bool,
    pub destructive: bool,
    pub concurrency: Concurrency,
    pub interrupt: InterruptBehavior,
    /// Input fields that identify one effect; with the tool name and target version
    /// they make the idempotency key. Empty: the whole normalized input.
    pub idempotency_key_fields: Vec<String>,
    pub base_version: BaseVersionPolicy,
    /// Most characters of the result the model sees inline (capped at 2,000).
    pub max_result_chars: usize,
    /// A compact description of the result, for summaries and the UI.
    pub result_summary: String,
}

/// What a tool gets to work with.
pub struct ToolContext<'a> {
    pub kernel: &'a Kernel,
    /// The session (or run) the call belongs to.
    pub owner: &'a super::Owner,
    pub project_id: &'a str,
    pub tool_use_id: &'a str,
    pub mode: Mode,
    /// Set on interrupt or timeout; cancellable tools check it.
    pub cancel: &'a AtomicBool,
}

impl ToolContext<'_> {
    pub fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::SeqCst)
    }
}

/// A tool's failure, told to the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolFailure {
    pub message: String,
    /// True when the tool stopped because it was cancelled.
    pub interrupted: bool,
}

impl ToolFailure {
    pub fn new(message: impl Into<String>) -> Self {
        ToolFailure { message: message.into(), interrupted: false }
    }
}

impl From<crate::error::ApiError> for ToolFailure {
    fn from(error: crate::error::ApiError) -> Self {
        ToolFailure::new(format!("{:?}: {}", error.code, error.message))
    }
}

pub type ToolHandler = Arc<dyn Fn(&ToolContext<'_>, &Value) -> Result<Value, ToolFailure> + Send + Sync>;

/// A registered tool: its definition, compiled validator and handler.
#[derive(Clone)]
pub struct RegisteredTool {
    pub definition: ToolDefinition,
    validator: Arc<Validator>,
    pub handler: ToolHandler,
}

impl RegisteredTool {
    /// Validates `input`; the error lists at most five problems, each with its JSON
    /// pointer.
    pub fn validate(&self, input: &Value) -> Result<(), Vec<(String, String)>> {
        self.validator.check(input).map_err(|violations| violations.0.into_iter().map(|v| (v.pointer, v.message)).collect())
    }
}

/// A tool whose input schema is not a valid JSON schema.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the input schema of `{tool}` is invalid: {source}")]
pub struct InvalidToolSchema {
    pub tool: String,
    pub source: InvalidSchema,
}

/// The tools of one engine, by name.
#[derive(Clone, Default)]
pub struct Registry {
    tools: BTreeMap<String, RegisteredTool>,
}

impl Registry {
    pub fn register(&mut self, definition: ToolDefinition, handler: ToolHandler) -> Result<(), InvalidToolSchema> {
        let validator = Validator::new(&definition.input_schema).map_err(|source| InvalidToolSchema { tool: definition.name.clone(), source })?;
        self.tools.insert(definition.name.clone(), RegisteredTool { definition, validator: Arc::new(validator), handler });
        Ok(())
    }

    pub fn get(&self, name: &str) -> Option<&RegisteredTool> {
        self.tools.get(name)
    }

    pub fn definitions(&self) -> impl Iterator<Item = &ToolDefinition> {
        self.tools.values().map(|t| &t.definition)
    }

    pub fn names(&self) -> Vec<String> {
        self.tools.keys().cloned().collect()
    }
}

/// The input with object keys sorted (serde_json's map is ordered) and strings
/// trimmed of surrounding whitespace, so equal requests hash equally.
pub fn normalize(input: &Value) -> Value {
    match input {
        Value::Object(map) => Value::Object(map.iter().map(|(k, v)| (k.clone(), normalize(v))).collect::<std::collections::BTreeMap<_, _>>().into_iter().collect()),
        Value::Array(items) => Value::Array(items.iter().map(normalize).collect()),
        Value::String(s) => Value::String(s.trim().to_owned()),
        other => other.clone(),
    }
}

/// `sha256:<hex>` of the normalized input's JSON.
pub fn input_hash(normalized: &Value) -> String {
    super::log::sha256_ref(normalized.to_string().as_bytes())
}

/// The idempotency key of a call: tool, version of the target, and the key fields of
/// the input (all of it when the tool names none).
pub fn idempotency_key(definition: &ToolDefinition, normalized: &Value, target_version: Option<u64>) -> String {
    let fields: Value = if definition.idempotency_key_fields.is_empty() {
        normalized.clone()
    } else {
        Value::Object(definition.idempotency_key_fields.iter().map(|f| (f.clone(), normalized.get(f).cloned().unwrap_or(Value::Null))).collect())
    };
    let material = json!({"tool": definition.name, "toolVersion": definition.version, "target": target_version, "input": fields});
    super::log::sha256_ref(material.to_string().as_bytes())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn builtins_compile_and_validate_with_pointers() {
        let mut registry = Registry::default();
        for (definition, handler) in crate::tools::builtins() {
            registry.register(definition, handler).unwrap();
        }
        assert_eq!(registry.names().len(), 11);
        let ask = registry.get("ask_user_question").unwrap();
        assert!(ask.validate(&json!({"question": "Which title?"})).is_ok());
        let problems = ask.validate(&json!({"question": 3})).unwrap_err();
        assert_eq!(problems[0].0, "/question");
        let problems = ask.validate(&json!({})).unwrap_err();
        assert_eq!(problems[0].0, "");
    }

    #[test]
    fn normalized_inputs_hash_equally() {
        let a = normalize(&json!({"b": " x ", "a": [1, {"d": 1, "c": 2}]}));
        let b = normalize(&json!({"a": [1, {"c": 2, "d": 1}], "b": "x"}));
        assert_eq!(input_hash(&a), input_hash(&b));
    }
}
