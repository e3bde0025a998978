//! A session's staged set of proposals, stored and as the person reviews it (see
//! [`super`]).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::Proposal;
use crate::api::dto::TextDiffResult;
use crate::model::Timestamp;

/// One staged proposal and the hunks of it that were staged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct StagedEntry {
    pub proposal_id: String,
    pub hunks: Vec<String>,
}

/// The staged set of one session (at most one record per session).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Staging {
    pub session_id: String,
    pub project_id: String,
    /// The official working copy the staged changes sit on: its revision and the hash
    /// of its source.
    pub base_revision: u64,
    pub base_hash: String,
    pub entries: Vec<StagedEntry>,
    /// The source with every staged change applied.
    pub effective_source: String,
    pub updated_at: Timestamp,
}

/// A session's staged set as the person reviews it.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct StagingView {
    /// The staged set (`null` when nothing is staged).
    pub staging: Option<Staging>,
    /// The staged proposals, in staging order.
    pub proposals: Vec<Proposal>,
    /// The source the set was staged on (the official working copy when nothing is staged).
    pub base_source: String,
    /// The source with every staged change applied.
    pub effective_source: String,
    /// `base_source` → `effective_source`.
    pub diff: TextDiffResult,
    /// True when the official working copy moved since the set was staged: applying
    /// it is a CONFLICT; discard it and stage again.
    pub baseline_moved: bool,
}
impl From<&crate::proposals::staging::StagedEntry> for StagedEntry {
    fn from(record: &crate::proposals::staging::StagedEntry) -> Self {
        StagedEntry { proposal_id: record.proposal_id.clone(), hunks: record.hunks.clone() }
    }
}

impl From<&crate::proposals::staging::Staging> for Staging {
    fn from(record: &crate::proposals::staging::Staging) -> Self {
        Staging {
            session_id: record.session_id.clone(),
            project_id: record.project_id.clone(),
            base_revision: record.base_revision,
            base_hash: record.base_hash.clone(),
            entries: record.entries.iter().map(Into::into).collect(),
            effective_source: record.effective_source.clone(),
            updated_at: record.updated_at,
        }
    }
}

impl From<&crate::proposals::staging::StagingView> for StagingView {
    fn from(record: &crate::proposals::staging::StagingView) -> Self {
        StagingView {
            staging: record.staging.as_ref().map(Into::into),
            proposals: record.proposals.iter().map(Into::into).collect(),
            base_source: record.base_source.clone(),
            effective_source: record.effective_source.clone(),
            diff: (&record.diff).into(),
            baseline_moved: record.baseline_moved,
        }
    }
}

impl From<crate::proposals::staging::StagingView> for StagingView {
    fn from(record: crate::proposals::staging::StagingView) -> Self {
        Self::from(&record)
    }
}
