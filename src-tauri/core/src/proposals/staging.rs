//! A session's working copy: proposals the person staged without applying them. Read
//! tools see the effective view (the staged changes over the baseline), so multi-step
//! edits compose; nothing official changes until the staged set is applied, as one
//! transaction and one version.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::error::ApiError;
use crate::model::{Project, Timestamp};
use crate::store::{Kind, Record, Store};

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

impl Record for Staging {
    const KIND: Kind = Kind::Staging;
    fn key(&self) -> Vec<u8> {
        self.session_id.as_bytes().to_vec()
    }
}

/// The staged set of `session_id`, if it has one.
pub fn load(store: &Store, session_id: &str) -> Result<Option<Staging>, ApiError> {
    Ok(store.get::<Staging>(session_id.as_bytes())?)
}

/// The source as the session's tools see it: the staged changes over the official
/// working copy, or the working copy itself when nothing is staged.
pub fn effective_source(store: &Store, session_id: &str, project: &Project) -> Result<String, ApiError> {
    Ok(match load(store, session_id)? {
        Some(staging) if staging.project_id == project.id && !staging.entries.is_empty() => staging.effective_source,
        _ => project.source.clone(),
    })
}
