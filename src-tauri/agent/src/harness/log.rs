//! The durable side of the harness: session records, the append-only event log, the
//! content-addressed result store, context snapshots, approvals and executions.

use serde::{Deserialize, Serialize};

use super::event::Event;
use super::Owner;
use crate::model::Timestamp;
use crate::store::{keys, Kind, Record};

/// No event line (its JSON) is larger than this.
pub const MAX_EVENT_BYTES: usize = 64 * 1024;
/// The characters of a large result's preview (and the inline limit of failures and
/// of tools that keep the default).
pub const PREVIEW_CHARS: usize = 2_000;
/// The most bytes a result's content may take inline (JSON-escaped), leaving room for
/// the envelope within [`MAX_EVENT_BYTES`]; a larger result is stored by reference.
pub const INLINE_RESULT_BYTES: usize = MAX_EVENT_BYTES - 4 * 1024;
/// What an empty result becomes.
pub const EMPTY_RESULT_MARKER: &str = "{\"ok\":true,\"note\":\"The tool succeeded and returned nothing.\"}";

/// Limits of a session; every one can be changed per session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Limits {
    /// Model calls per user message.
    pub max_model_turns: u32,
    /// Per tool call, for tools that do not call a model.
    pub tool_timeout_ms: u64,
    /// Input plus output tokens over the whole session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_budget: Option<u64>,
    /// Cost over the whole session, in the profile's currency.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_budget: Option<f64>,
    /// Consecutive failures of the same kind that block the turn.
    pub breaker_threshold: u32,
    /// Repeats of the same tool with the same normalized input in one turn that stop it.
    pub loop_threshold: u32,
    /// Most output tokens per model call.
    pub max_output_tokens: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_model_turns: 50, tool_timeout_ms: 30_000, token_budget: None, cost_budget: None, breaker_threshold: 3, loop_threshold: 3, max_output_tokens: 4096 }
    }
}

/// A drafting session on one project.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Session {
    pub id: String,
    pub project_id: String,
    pub title: String,
    /// The LLM profile id every model call of the session uses.
    pub profile_id: String,
    pub limits: Limits,
    pub archived: bool,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

impl Record for Session {
    const KIND: Kind = Kind::Sessions;
    fn key(&self) -> Vec<u8> {
        self.id.as_bytes().to_vec()
    }
}

impl Record for Event {
    const KIND: Kind = Kind::SessionEvents;
    fn key(&self) -> Vec<u8> {
        let owner = self.session_id.as_deref().or(self.run_id.as_deref()).unwrap_or("");
        keys::session_event(owner, self.sequence)
    }
}

/// A tool result too large for the log, stored by content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredResult {
    /// `sha256:<hex>` of `content`.
    pub id: String,
    pub content: String,
}

impl Record for StoredResult {
    const KIND: Kind = Kind::ToolResults;
    fn key(&self) -> Vec<u8> {
        self.id.as_bytes().to_vec()
    }
}

/// A decision on a tool call, bound to what exactly was approved and where: the
/// workspace, project and owner (session or run) it was asked in. It allows at most one
/// execution: running the call records `consumed_by`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalRecord {
    pub request_id: String,
    /// The session asked in (empty for a run).
    #[serde(default)]
    pub session_id: String,
    /// The run asked in, when the owner is a run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// Empty in records written before approvals were scoped: those match nothing.
    #[serde(default)]
    pub workspace_id: String,
    /// Empty in records written before approvals were scoped: those match nothing.
    #[serde(default)]
    pub project_id: String,
    pub tool: String,
    pub input_hash: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_version: Option<u64>,
    pub idempotency_key: String,
    pub approved: bool,
    pub decided_by: String,
    pub decided_at: Timestamp,
    /// The tool call whose execution used this approval up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consumed_by: Option<String>,
}

impl ApprovalRecord {
    /// The owner the approval was asked in.
    pub fn owner(&self) -> Owner {
        match &self.run_id {
            Some(run_id) => Owner::Run(run_id.clone()),
            None => Owner::Session(self.session_id.clone()),
        }
    }

    /// The key prefix of an owner's approvals.
    pub fn owner_prefix(owner: &Owner) -> Vec<u8> {
        keys::project_prefix(owner.id())
    }

    /// The key of approval `request_id` of `owner`.
    pub fn key_for(owner: &Owner, request_id: &str) -> Vec<u8> {
        let mut key = Self::owner_prefix(owner);
        key.extend_from_slice(request_id.as_bytes());
        key
    }
}

impl Record for ApprovalRecord {
    const KIND: Kind = Kind::Approvals;
    /// `owner_id 0x00 request_id`: an owner's approvals are one prefix scan.
    fn key(&self) -> Vec<u8> {
        Self::key_for(&self.owner(), &self.request_id)
    }
}

/// A write tool that ran, by idempotency key (which is scoped to workspace, project
/// and owner): running it again there returns this.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolExecution {
    pub idempotency_key: String,
    pub tool: String,
    /// The owner (session or run) id.
    pub session_id: String,
    #[serde(default)]
    pub workspace_id: String,
    #[serde(default)]
    pub project_id: String,
    pub tool_use_id: String,
    /// The model-visible result of the execution.
    pub content: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_ref: Option<String>,
    pub executed_at: Timestamp,
    /// False from just before the write starts until its result is recorded: a record
    /// left unfinished by a crash means the outcome is unknown, and the write is not
    /// run again (at most once).
    #[serde(default = "finished_default")]
    pub completed: bool,
}

fn finished_default() -> bool {
    true
}

impl Record for ToolExecution {
    const KIND: Kind = Kind::ToolExecutions;
    fn key(&self) -> Vec<u8> {
        self.idempotency_key.as_bytes().to_vec()
    }
}

pub use crate::context::{ContextLayer, ContextSnapshot};
pub use crate::store::sha256_ref;

/// What the model and the log see of a result: the result itself when it is short,
/// else a preview, a summary and a reference (with the full text to store).
#[derive(Debug, Clone, PartialEq)]
pub struct Shaped {
    pub content: String,
    pub stored: Option<StoredResult>,
}

/// A short structured summary of a JSON value: its type and size, and for objects
/// their keys, for arrays their length.
fn summarize(value: &serde_json::Value, chars: usize) -> serde_json::Value {
    use serde_json::{json, Value};
    match value {
        Value::Object(map) => json!({"type": "object", "keys": map.keys().take(20).collect::<Vec<_>>(), "chars": chars}),
        Value::Array(items) => json!({"type": "array", "items": items.len(), "chars": chars}),
        Value::String(_) => json!({"type": "string", "chars": chars}),
        _ => json!({"type": "value", "chars": chars}),
    }
}

/// Shapes a tool's output for the model: empty → the success marker; within the
/// tool's budget (at most `max_chars` characters and `max_tokens` estimated tokens, the
/// room left in the model's context) and within [`INLINE_RESULT_BYTES`] → as is;
/// otherwise a [`PREVIEW_CHARS`] preview, a summary and a reference, with the full
/// text to store. The model reads the rest with `read_stored_result {ref, offset}`.
pub fn shape_result(value: &serde_json::Value, max_chars: usize, max_tokens: u64) -> Shaped {
    let is_empty = match value {
        serde_json::Value::Null => true,
        serde_json::Value::String(s) => s.trim().is_empty(),
        serde_json::Value::Array(a) => a.is_empty(),
        serde_json::Value::Object(o) => o.is_empty(),
        _ => false,
    };
    if is_empty {
        return Shaped { content: EMPTY_RESULT_MARKER.to_owned(), stored: None };
    }
    let text = match value {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let chars = text.chars().count();
    let fits = chars <= max_chars
        && serde_json::to_string(&text).map(|escaped| escaped.len()).unwrap_or(usize::MAX) <= INLINE_RESULT_BYTES
        && crate::llm::estimate_tokens(&text) <= max_tokens;
    if fits {
        return Shaped { content: text, stored: None };
    }
    let id = sha256_ref(text.as_bytes());
    let preview_chars = PREVIEW_CHARS.min(max_chars.max(1)).saturating_sub(1);
    let preview: String = text.chars().take(preview_chars).collect();
    let shaped = serde_json::json!({
        "truncated": true,
        "preview": format!("{preview}…"),
        "summary": summarize(value, chars),
        "ref": id,
        "nextOffset": preview_chars,
        "readMore": "read_stored_result with this ref and nextOffset returns the rest, a slice at a time",
    });
    Shaped { content: shaped.to_string(), stored: Some(StoredResult { id, content: text }) }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn empty_results_become_a_success_marker() {
        for empty in [json!(null), json!(""), json!([]), json!({})] {
            assert_eq!(shape_result(&empty, 2000, u64::MAX).content, EMPTY_RESULT_MARKER);
        }
    }

    #[test]
    fn large_results_are_stored_and_previewed() {
        // Over the log line (30,000 CJK characters are 90 KB).
        let big = json!({"text": "字".repeat(30_000)});
        let shaped = shape_result(&big, 50_000, u64::MAX);
        let stored = shaped.stored.expect("stored");
        assert_eq!(stored.id, sha256_ref(big.to_string().as_bytes()));
        let visible: serde_json::Value = serde_json::from_str(&shaped.content).unwrap();
        assert!(visible["preview"].as_str().unwrap().chars().count() <= PREVIEW_CHARS);
        assert_eq!(visible["ref"], json!(stored.id));
        assert_eq!(visible["summary"]["type"], "object");
        // Same content, same reference.
        assert_eq!(shape_result(&big, 50_000, u64::MAX).stored.unwrap().id, stored.id);
        let small = json!({"a": 1});
        assert_eq!(shape_result(&small, 2000, u64::MAX).content, r#"{"a":1}"#);
    }

    #[test]
    fn each_tool_has_its_own_budget_within_the_context_room_and_the_log_line() {
        let article = json!({"source": "春".repeat(6_000)});
        assert!(shape_result(&article, 200_000, 100_000).stored.is_none(), "a few thousand characters are seen whole");
        assert!(shape_result(&article, 2_000, 100_000).stored.is_some(), "a small budget (lists, logs) previews");
        assert!(shape_result(&article, 200_000, 3_000).stored.is_some(), "no more than the context has room for");
        let visible: serde_json::Value = serde_json::from_str(&shape_result(&article, 2_000, 100_000).content).unwrap();
        assert_eq!(visible["nextOffset"], json!(PREVIEW_CHARS - 1));
        // Control characters escape to six bytes each: the log line still holds.
        let escaped = json!({"source": "\u{1}".repeat(12_000)});
        assert!(shape_result(&escaped, 200_000, u64::MAX).stored.is_some());
    }
}
