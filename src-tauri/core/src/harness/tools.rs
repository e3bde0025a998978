//! The tool registry: definitions (everything the turn loop and the permission engine
//! need to know about a tool), compiled input validators, and the handlers. The read
//! tools go through the engine's own API, so they see exactly what the UI sees.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use ts_rs::TS;

use super::event::Mode;
use super::permission::PermissionPolicy;
use crate::api::Engine;
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
    pub engine: &'a Engine,
    pub session_id: &'a str,
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

impl From<crate::api::ApiError> for ToolFailure {
    fn from(error: crate::api::ApiError) -> Self {
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
    /// The built-in tools.
    pub fn with_builtins() -> Result<Registry, InvalidToolSchema> {
        let mut registry = Registry::default();
        for definition in builtin_definitions() {
            let handler = builtin_handler(&definition.name);
            registry.register(definition, handler)?;
        }
        Ok(registry)
    }

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

fn schema(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

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

/// The definitions of the built-in tools.
pub fn builtin_definitions() -> Vec<ToolDefinition> {
    vec![
        read_tool(
            "read_project_context",
            "Read the session's project: title, revision, latest version number, target platforms, brand profile and template ids, and the Markdown source.",
            json!({"includeSource": {"type": "boolean", "description": "Include the Markdown source (default true)."}}),
            "project fields and its source",
        ),
        read_tool(
            "read_publications",
            "Report each platform draft of the project: the saved draft (revision, status draft/ready/publishing/published, hand-edited or not, whether the source changed since) and a fresh compile's check results (blocking, warnings).",
            json!({"platforms": {"type": "array", "items": {"type": "string", "enum": ["wechat", "zhihu", "x", "douyin", "xiaohongshu"]}}}),
            "one status per platform draft",
        ),
        read_tool(
            "read_comments",
            "Read the comments on the project, with the quoted text they anchor to.",
            json!({"includeResolved": {"type": "boolean"}}),
            "comments, oldest first",
        ),
        read_tool("read_versions", "List the project's saved versions (number, title, author, message, size), newest last.", json!({}), "version summaries"),
        read_tool("read_brand_profile", "Read the brand profile of the project: voice, audience, banned words, CTA, link strategy, default tags.", json!({}), "the brand profile or null"),
        read_tool("read_templates", "List the content templates of the workspace.", json!({}), "templates"),
        read_tool("read_media_summary", "List the images used by the project: name, type, size, dimensions and alt text.", json!({}), "media summaries"),
        workflow_tool(
            "ask_user_question",
            "Ask the user a question and wait for the answer. Use it when the request is ambiguous.",
            schema(json!({"question": {"type": "string", "minLength": 1, "maxLength": 2000}, "options": {"type": "array", "items": {"type": "string"}, "maxItems": 8}}), &["question"]),
            PermissionPolicy::Allow,
            "the user's answer",
        ),
        workflow_tool(
            "enter_plan_mode",
            "Switch the session to plan mode: read and propose only, no writes, until the user approves a plan.",
            schema(json!({}), &[]),
            PermissionPolicy::Allow,
            "the new mode",
        ),
        workflow_tool(
            "exit_plan_mode",
            "Present a plan to the user; on approval the session leaves plan mode.",
            schema(json!({"plan": {"type": "string", "minLength": 1, "maxLength": 20000}}), &["plan"]),
            PermissionPolicy::Ask,
            "whether the plan was approved",
        ),
        workflow_tool(
            "request_permission",
            "Ask the user for something the current mode or rules do not allow; it is shown as an approval prompt.",
            schema(json!({"permission": {"type": "string", "minLength": 1, "maxLength": 500}, "reason": {"type": "string", "maxLength": 2000}}), &["permission"]),
            PermissionPolicy::Ask,
            "whether the user granted it",
        ),
    ]
}

fn builtin_handler(name: &str) -> ToolHandler {
    match name {
        "read_project_context" => Arc::new(|ctx, input| {
            let project = ctx.engine.call("project.get", json!({"projectId": ctx.project_id}))?;
            let mut out = json!({
                "id": project["id"], "title": project["title"], "revision": project["revision"], "head": project["head"],
                "platforms": project["platforms"], "brandProfileId": project["brandProfileId"], "templateId": project["templateId"],
            });
            if input["includeSource"].as_bool() != Some(false) {
                out["source"] = project["source"].clone();
            }
            Ok(out)
        }),
        "read_publications" => Arc::new(|ctx, input| {
            let mut params = json!({"projectId": ctx.project_id});
            if input["platforms"].is_array() {
                params["platforms"] = input["platforms"].clone();
            }
            let compiled = ctx.engine.call("pipeline.compile", params)?;
            let saved = ctx.engine.call("platformDraft.list", json!({"projectId": ctx.project_id}))?;
            let count = |findings: &Value, severity: &str| findings.as_array().map(|f| f.iter().filter(|x| x["severity"] == severity).count()).unwrap_or(0);
            let drafts: Vec<Value> = compiled["drafts"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|d| {
                    let blocking = count(&d["findings"], "block");
                    let platform = &d["draft"]["platform"];
                    // The person's saved draft for this platform, if any: its status is
                    // theirs to set, and a publishing draft must not be proposed over.
                    let saved = saved["drafts"].as_array().into_iter().flatten().find(|s| &s["platform"] == platform).map(|s| {
                        json!({
                            "revision": s["revision"], "status": s["status"], "handEdited": s["handEdited"],
                            "profileId": s["profileId"], "sourceRevision": s["sourceRevision"], "sourceVersion": s["sourceVersion"],
                            "sourceChangedSince": s["sourceRevision"].as_u64() < compiled["revision"].as_u64(),
                            "readOnly": s["status"] == "publishing",
                        })
                    });
                    json!({
                        "platform": platform, "profileId": d["draft"]["profileId"], "title": d["draft"]["title"],
                        "saved": saved,
                        "checks": if blocking > 0 { "blocked" } else if count(&d["findings"], "warn") > 0 { "needs_review" } else { "clear" },
                        "blocking": blocking, "warnings": count(&d["findings"], "warn"),
                        "findings": d["findings"].as_array().map(|f| f.iter().take(10).map(|x| json!({"check": x["check"], "severity": x["severity"], "message": x["message"]})).collect::<Vec<_>>()),
                    })
                })
                .collect();
            Ok(json!({"revision": compiled["revision"], "tags": compiled["tags"], "drafts": drafts, "sourceFindings": compiled["findings"].as_array().map(Vec::len)}))
        }),
        "read_comments" => Arc::new(|ctx, input| {
            let include_resolved = input["includeResolved"].as_bool().unwrap_or(false);
            let list = ctx.engine.call("comment.list", json!({"projectId": ctx.project_id, "includeResolved": include_resolved}))?;
            let comments: Vec<Value> = list["comments"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|c| json!({"id": c["id"], "body": c["body"], "quote": c["quote"], "resolved": c["resolved"], "author": c["author"]}))
                .collect();
            Ok(json!({"comments": comments}))
        }),
        "read_versions" => Arc::new(|ctx, _| {
            let list = ctx.engine.call("version.list", json!({"projectId": ctx.project_id}))?;
            Ok(list)
        }),
        "read_brand_profile" => Arc::new(|ctx, _| {
            let project = ctx.engine.call("project.get", json!({"projectId": ctx.project_id}))?;
            match project["brandProfileId"].as_str() {
                Some(id) => Ok(ctx.engine.call("brandProfile.get", json!({"id": id}))?),
                None => Ok(json!({"brandProfile": null, "note": "The project has no brand profile."})),
            }
        }),
        "read_templates" => Arc::new(|ctx, _| {
            let list = ctx.engine.call("template.list", json!({}))?;
            let templates: Vec<Value> = list["templates"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|t| json!({"id": t["id"], "name": t["name"], "titleTemplate": t["titleTemplate"], "defaultPlatforms": t["defaultPlatforms"], "tags": t["tags"]}))
                .collect();
            Ok(json!({"templates": templates}))
        }),
        "read_media_summary" => Arc::new(|ctx, _| {
            let list = ctx.engine.call("media.list", json!({"projectId": ctx.project_id}))?;
            let media: Vec<Value> = list["media"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|m| json!({"id": m["id"], "name": m["originalName"], "mimeType": m["mimeType"], "bytes": m["byteSize"], "width": m["width"], "height": m["height"], "altText": m["altText"]}))
                .collect();
            Ok(json!({"media": media}))
        }),
        "enter_plan_mode" => Arc::new(|_, _| Ok(json!({"mode": "plan", "note": "Plan mode: read and propose only. Present a plan with exit_plan_mode."}))),
        "exit_plan_mode" => Arc::new(|_, _| Ok(json!({"approved": true, "mode": "default"}))),
        "request_permission" => Arc::new(|_, input| Ok(json!({"granted": true, "permission": input["permission"]}))),
        // ask_user_question is answered by the user, not by a handler.
        _ => Arc::new(|_, _| Err(ToolFailure::new("this tool is answered by the user"))),
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
        let registry = Registry::with_builtins().unwrap();
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
