//! What a proposal holds besides its hunks, by kind: the texts, candidates, a
//! checklist or the settings it would set (see [`super`]).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::api::dto::Platform;

/// A candidate (a title, a tag) with why the model suggests it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Candidate {
    pub text: String,
    #[serde(default)]
    pub rationale: String,
}

/// One item of a publish-readiness checklist.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ChecklistItem {
    pub id: String,
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub platform: Option<Platform>,
    pub blocking: bool,
    pub resolved: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub note: Option<String>,
}

/// Project settings a metadata proposal sets; `None` leaves a field as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct MetadataChange {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub platforms: Option<Vec<Platform>>,
    /// `Some(None)` clears the brand profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "string | null")]
    pub brand_profile_id: Option<Option<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "string | null")]
    pub template_id: Option<Option<String>>,
}

/// What a proposal holds besides its hunks, by kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Payload {
    /// Source patch, source rewrite, draft patch: the base text and the full proposed
    /// text (the hunks are the difference).
    #[serde(rename_all = "camelCase")]
    Text {
        base_text: String,
        proposed_text: String,
    },
    /// Title or tag candidates; the person picks.
    Candidates {
        candidates: Vec<Candidate>,
    },
    Outline {
        outline: String,
    },
    #[serde(rename_all = "camelCase")]
    CommentReply {
        comment_id: String,
        body: String,
    },
    Checklist {
        items: Vec<ChecklistItem>,
    },
    Metadata {
        change: MetadataChange,
    },
}
impl From<&crate::proposals::Candidate> for Candidate {
    fn from(record: &crate::proposals::Candidate) -> Self {
        Candidate { text: record.text.clone(), rationale: record.rationale.clone() }
    }
}

impl From<&crate::proposals::ChecklistItem> for ChecklistItem {
    fn from(record: &crate::proposals::ChecklistItem) -> Self {
        ChecklistItem {
            id: record.id.clone(),
            text: record.text.clone(),
            platform: record.platform.map(Into::into),
            blocking: record.blocking,
            resolved: record.resolved,
            note: record.note.clone(),
        }
    }
}

impl From<&crate::proposals::MetadataChange> for MetadataChange {
    fn from(record: &crate::proposals::MetadataChange) -> Self {
        MetadataChange {
            title: record.title.clone(),
            platforms: record.platforms.as_ref().map(|platforms| platforms.iter().map(Into::into).collect()),
            brand_profile_id: record.brand_profile_id.clone(),
            template_id: record.template_id.clone(),
        }
    }
}

impl From<&crate::proposals::Payload> for Payload {
    fn from(record: &crate::proposals::Payload) -> Self {
        match record {
            crate::proposals::Payload::Text { base_text, proposed_text } => Self::Text { base_text: base_text.clone(), proposed_text: proposed_text.clone() },
            crate::proposals::Payload::Candidates { candidates } => Self::Candidates { candidates: candidates.iter().map(Into::into).collect() },
            crate::proposals::Payload::Outline { outline } => Self::Outline { outline: outline.clone() },
            crate::proposals::Payload::CommentReply { comment_id, body } => Self::CommentReply { comment_id: comment_id.clone(), body: body.clone() },
            crate::proposals::Payload::Checklist { items } => Self::Checklist { items: items.iter().map(Into::into).collect() },
            crate::proposals::Payload::Metadata { change } => Self::Metadata { change: change.into() },
        }
    }
}
