//! The wire form of the harness's log: its events (what `StreamEvent::Harness`
//! sends), the log's lines and what waits for the person (see [`super`]). The envelope
//! and the log line are here; in the folder beside this file the event kinds with their
//! payloads, the values those payloads carry, and the approvals and questions that wait.

mod approval;
mod body;
mod payload;

pub use approval::*;
pub use body::*;
pub use payload::*;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::model::Timestamp;

/// One event of a session's (or run's) log. Live-only events carry sequence 0.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    pub event_id: String,
    pub sequence: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub run_id: Option<String>,
    /// The project the owner works on. Set on every event appended since the envelope
    /// carried it; absent in older logs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    #[ts(as = "Option<String>")]
    pub project_id: Option<std::sync::Arc<str>>,
    /// The workspace of the project. Set on every event appended since the envelope
    /// carried it; absent in older logs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    #[ts(as = "Option<String>")]
    pub workspace_id: Option<std::sync::Arc<str>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub turn_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub parent_event_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tool_use_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub context_snapshot_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub proposal_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub artifact_id: Option<String>,
    pub created_at: Timestamp,
    pub model_visible: bool,
    #[serde(flatten)]
    #[ts(flatten)]
    pub body: EventBody,
}

/// One line of a log as text, an event at a time (`session.get` with `timeline`, the
/// CLI's `session show`, an optimization run's log): a map of each event, not a fold;
/// the drafting panel draws [`super::TimelineItem`]s.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct LogLine {
    pub sequence: u64,
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub turn_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tool_use_id: Option<String>,
    /// A short text for the timeline: the person's or the model's words, or (with
    /// `textId`) the engine's English wording of what happened.
    pub text: String,
    /// What happened, for a client to word in the person's language (`session_started`,
    /// `tool_result`, `archived`, …, with `params`); absent when `text` is the person's
    /// or the model's own words (a message, a question, an answer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub text_id: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[ts(as = "Option<BTreeMap<String, String>>", optional)]
    pub params: BTreeMap<String, String>,
}

impl Event {
    /// The `kind` tag of its body.
    pub fn kind_name(&self) -> &'static str {
        self.body.kind_name()
    }
}

impl From<&crate::harness::event::Event> for Event {
    fn from(record: &crate::harness::event::Event) -> Self {
        Event {
            event_id: record.event_id.clone(),
            sequence: record.sequence,
            session_id: record.session_id.clone(),
            run_id: record.run_id.clone(),
            project_id: record.project_id.clone(),
            workspace_id: record.workspace_id.clone(),
            turn_id: record.turn_id.clone(),
            parent_event_id: record.parent_event_id.clone(),
            tool_use_id: record.tool_use_id.clone(),
            context_snapshot_id: record.context_snapshot_id.clone(),
            proposal_id: record.proposal_id.clone(),
            artifact_id: record.artifact_id.clone(),
            created_at: record.created_at,
            model_visible: record.model_visible,
            body: (&record.body).into(),
        }
    }
}

impl From<&crate::harness::replay::LogLine> for LogLine {
    fn from(record: &crate::harness::replay::LogLine) -> Self {
        LogLine {
            sequence: record.sequence,
            kind: record.kind.clone(),
            turn_id: record.turn_id.clone(),
            tool_use_id: record.tool_use_id.clone(),
            text: record.text.clone(),
            text_id: record.text_id.clone(),
            params: record.params.clone(),
        }
    }
}
