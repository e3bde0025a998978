//! Search tools: the project's history, the rest of the workspace, and examples for a
//! platform, all through the local search index (`retrieval`). Results are compact:
//! a reference, a title and a snippet of at most a hundred characters per hit, never
//! a whole document (the model reads a version with `read_versions` and the project
//! with `read_project_context`).

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{json, Value};

use super::{parse, platform_schema, read_tool};
use crate::harness::{ToolContext, ToolDefinition, ToolFailure, ToolHandler};
use crate::model::Platform;
use crate::retrieval::{self, CompactResults, DocKind};

/// The most hits one search tool returns.
pub const MAX_SEARCH_RESULTS: usize = 30;
/// Hits when `limit` is absent.
const DEFAULT_RESULTS: usize = 8;

fn limit(asked: Option<usize>) -> usize {
    asked.unwrap_or(DEFAULT_RESULTS).clamp(1, MAX_SEARCH_RESULTS)
}

fn query(text: &str) -> Result<String, ToolFailure> {
    let query = text.trim();
    if query.is_empty() {
        return Err(ToolFailure::new("`query` is empty."));
    }
    Ok(query.to_owned())
}

/// The tool's answer: the hits, and a note when there are none or the index said
/// something the model should know.
fn answer(query: &str, results: CompactResults, extra: Value) -> Result<Value, ToolFailure> {
    let hits = serde_json::to_value(&results.hits).map_err(|e| ToolFailure::new(e.to_string()))?;
    let mut out = json!({"query": query, "results": hits});
    if let Value::Object(extra) = extra {
        for (key, value) in extra {
            out[key] = value;
        }
    }
    if results.hits.is_empty() {
        out["note"] = json!("Nothing matched. Try fewer or other words; one or two Chinese characters also match.");
    }
    if let Some(notice) = results.notice {
        out["notice"] = json!(notice.message);
    }
    Ok(out)
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct HistoryInput {
    query: String,
    limit: Option<usize>,
}

/// The project's working copy, saved versions and comments that match; equal texts
/// are one hit (the working copy, else the newest version).
fn search_project_history(ctx: &ToolContext<'_>, input: &Value) -> Result<Value, ToolFailure> {
    let input: HistoryInput = parse(input)?;
    let query = query(&input.query)?;
    let reads = ctx.reads();
    reads.project(ctx.project_id)?;
    let results = retrieval::search_project_history(reads.search_index(), ctx.project_id, &query, limit(input.limit))?;
    answer(&query, results, json!({}))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WorkspaceInput {
    query: String,
    kinds: Option<Vec<DocKind>>,
    limit: Option<usize>,
}

/// The other projects of the workspace (imported articles are projects too), their
/// versions and comments: the best hit of each project, and matching comments.
fn search_workspace(ctx: &ToolContext<'_>, input: &Value) -> Result<Value, ToolFailure> {
    let input: WorkspaceInput = parse(input)?;
    let query = query(&input.query)?;
    let reads = ctx.reads();
    let results = retrieval::search_workspace(reads.search_index(), &query, Some(ctx.project_id), input.kinds.unwrap_or_default(), limit(input.limit))?;
    answer(&query, results, json!({}))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExamplesInput {
    platform: Platform,
    query: Option<String>,
    limit: Option<usize>,
}

/// Other projects written for a platform that match the query (default: this
/// project's title), most relevant first.
fn find_relevant_examples(ctx: &ToolContext<'_>, input: &Value) -> Result<Value, ToolFailure> {
    let input: ExamplesInput = parse(input)?;
    let reads = ctx.reads();
    let project = reads.project(ctx.project_id)?;
    let query = match input.query.as_deref().map(str::trim) {
        Some(given) if !given.is_empty() => given.to_owned(),
        _ => project.title.clone(),
    };
    let results = retrieval::find_relevant_examples(reads.search_index(), input.platform, &query, Some(ctx.project_id), limit(input.limit))?;
    // No performance data is recorded yet, so relevance alone orders the examples.
    answer(&query, results, json!({"platform": input.platform, "orderedBy": "relevance"}))
}

pub(super) fn tools() -> Vec<(ToolDefinition, ToolHandler)> {
    let query = json!({"type": "string", "minLength": 1, "maxLength": 200});
    let limit = json!({"type": "integer", "minimum": 1, "maximum": MAX_SEARCH_RESULTS});
    vec![
        (
            ToolDefinition {
                input_schema: super::schema(json!({"query": query, "limit": limit}), &["query"]),
                prompt: "Search this project's text, versions and comments (words, a phrase, 1–2 Chinese characters). \
Returns references (`prj@v3:from-to`) and short snippets, best first."
                    .to_owned(),
                max_result_chars: 6_000,
                ..read_tool(
                    "search_project_history",
                    "Search the project's working copy, versions and comments; returns snippets with references, version numbers and comment ids.",
                    json!({}),
                    "matching snippets with references",
                )
            },
            Arc::new(search_project_history),
        ),
        (
            ToolDefinition {
                input_schema: super::schema(
                    json!({
                        "query": query,
                        "kinds": {"type": "array", "items": {"type": "string", "enum": ["working", "version", "comment"]}},
                        "limit": limit,
                    }),
                    &["query"],
                ),
                prompt: "Search the person's other projects (imports included), versions and comments. One hit per project: reference, title, snippet.".to_owned(),
                max_result_chars: 6_000,
                ..read_tool(
                    "search_workspace",
                    "Search the other projects of the workspace, their versions and comments; returns snippets with references.",
                    json!({}),
                    "matching snippets from other projects",
                )
            },
            Arc::new(search_workspace),
        ),
        (
            ToolDefinition {
                input_schema: super::schema(json!({"platform": platform_schema(), "query": query, "limit": limit}), &["platform"]),
                prompt: "The person's other pieces for a platform on a topic (default: this title), as style examples: references, titles, snippets.".to_owned(),
                max_result_chars: 6_000,
                ..read_tool(
                    "find_relevant_examples",
                    "Find other projects written for a platform that match a topic; returns snippets with references.",
                    json!({}),
                    "example snippets for the platform",
                )
            },
            Arc::new(find_relevant_examples),
        ),
    ]
}
