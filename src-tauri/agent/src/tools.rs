//! The tools the model may call, one file per group. Each tool is a definition (what
//! the harness and the permission engine need to know) and a handler that calls typed
//! core functions (never the JSON dispatcher), so a renamed field is a compile error.
//! The engine registers [`builtins`] into the harness's registry.
//!
//! - `read`: the project, its drafts, comments, versions, brand, templates, images,
//!   and stored large results.
//! - `search`: the project's history, the rest of the workspace and examples for a
//!   platform, through the search index; snippets with references, never documents.
//! - `propose`: proposals for the person to review; they record the proposal and
//!   change nothing official.
//! - `check`: deterministic checks (compiles, limits, brand and publish readiness).
//! - `workflow`: questions, plan mode, permission requests.
//! - `write`: the few official changes the model can ask for; every one asks.

mod check;
mod propose;
mod read;
mod search;
mod workflow;
mod write;

use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use crate::harness::permission::PermissionPolicy;
use crate::harness::tools::{BaseVersionPolicy, Capability, Concurrency, InterruptBehavior, RiskLevel};
use crate::harness::{ToolContext, ToolDefinition, ToolFailure, ToolHandler};
use crate::model::Project;
use crate::pipeline::Finding;

/// Every built-in tool with its handler.
pub fn builtins() -> Vec<(ToolDefinition, ToolHandler)> {
    let mut tools = read::tools();
    tools.extend(search::tools());
    tools.extend(propose::tools());
    tools.extend(check::tools());
    tools.extend(workflow::tools());
    tools.extend(write::tools());
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

/// The input as its typed shape (the schema was checked before the handler runs;
/// this only fails on a shape the schema cannot express).
fn parse<T: DeserializeOwned>(input: &Value) -> Result<T, ToolFailure> {
    serde_json::from_value(input.clone()).map_err(|e| ToolFailure::new(format!("The input does not fit: {e}.")))
}

/// The platform enum of the JSON schemas.
fn platform_schema() -> Value {
    json!({"type": "string", "enum": ["wechat", "zhihu", "x", "douyin", "xiaohongshu"]})
}

/// The session's project as its tools see it: with the session's staged changes in the
/// source, when it has any (`true` then).
fn effective_project(ctx: &ToolContext<'_>) -> Result<(Project, bool), ToolFailure> {
    let reads = ctx.reads();
    let mut project = reads.project(ctx.project_id)?;
    let Some(session) = ctx.owner.session_id() else { return Ok((project, false)) };
    match reads.staging(session)? {
        Some(staging) if staging.project_id == project.id && !staging.entries.is_empty() => {
            project.source = staging.effective_source;
            Ok((project, true))
        }
        _ => Ok((project, false)),
    }
}

/// What a check looked at, in words, for its result.
fn checked_text(project: &Project, staged: bool) -> String {
    if staged {
        format!("the source with this session's staged changes (not applied yet; the official working copy is revision {})", project.revision)
    } else {
        format!("the working copy (revision {})", project.revision)
    }
}

/// A finding as the model sees it: what, how bad, where, and what to do.
fn compact_finding(finding: &Finding) -> Value {
    let mut out = json!({"check": finding.check, "severity": finding.severity, "message": finding.message});
    if let Some(platform) = finding.platform {
        out["platform"] = json!(platform);
    }
    if let Some(matched) = &finding.matched {
        out["matched"] = json!(matched);
    }
    if let Some(location) = &finding.location {
        out["location"] = json!(location);
    }
    if let Some(span) = finding.span {
        out["span"] = json!([span.from, span.to]);
    }
    if let Some(suggestion) = &finding.suggestion {
        out["suggestion"] = json!(suggestion);
    }
    out
}

/// At most `max` findings, the most severe first, and how many were left out.
fn compact_findings(findings: &[Finding], max: usize) -> (Vec<Value>, usize) {
    let mut sorted: Vec<&Finding> = findings.iter().collect();
    sorted.sort_by_key(|f| std::cmp::Reverse(f.severity));
    let shown = sorted.iter().take(max).map(|f| compact_finding(f)).collect();
    (shown, findings.len().saturating_sub(max))
}
