//! Checkpoints: the project's state at a point of a session or run — its head version,
//! working-copy revision (and the working copy itself when it differs from the head
//! version), each saved draft as it stood, and the log's sequence number. Restoring
//! one makes new versions and draft revisions; history is never rewritten.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::error::ApiError;
use crate::kernel::Kernel;
use crate::model::{PlatformDraft, Timestamp};
use crate::store::{keys, Batch, Durability, Kind, Record, Store};

/// Why a checkpoint exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum CheckpointReason {
    /// The person made it.
    Manual,
    /// The assistant made it with `create_checkpoint` (approved by the person).
    Assistant,
    /// The harness, before a turn (kept when the turn produced more than one proposal).
    BeforeTurn,
    /// The harness, after a turn that produced more than one proposal.
    AfterTurn,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Checkpoint {
    pub id: String,
    /// The session or run.
    pub owner_id: String,
    pub project_id: String,
    pub label: String,
    pub reason: CheckpointReason,
    /// The project's latest version number then (0: none yet).
    pub head: u32,
    /// The working-copy revision then.
    pub revision: u64,
    /// The working copy, when it differed from the head version (unsaved changes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub working_title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub working_source: Option<String>,
    /// Every saved draft as it stood (each carries its revision).
    pub drafts: Vec<PlatformDraft>,
    /// The owner's log sequence number when it was made.
    pub sequence: u64,
    pub created_at: Timestamp,
}

impl Record for Checkpoint {
    const KIND: Kind = Kind::Checkpoints;
    fn key(&self) -> Vec<u8> {
        let mut key = keys::project_prefix(&self.owner_id);
        key.extend_from_slice(self.id.as_bytes());
        key
    }
}

/// The checkpoints of a session or run, oldest first.
pub fn list(store: &Store, owner_id: &str) -> Result<Vec<Checkpoint>, ApiError> {
    Ok(store.scan::<Checkpoint>(&keys::project_prefix(owner_id))?)
}

/// The checkpoint `id` of `owner_id`. Errors: NOT_FOUND.
pub fn load(store: &Store, owner_id: &str, id: &str) -> Result<Checkpoint, ApiError> {
    let mut key = keys::project_prefix(owner_id);
    key.extend_from_slice(id.as_bytes());
    store
        .get::<Checkpoint>(&key)?
        .ok_or_else(|| ApiError::not_found("checkpoint", id).hint("list_checkpoints", "List the session's checkpoints with `inkstone-cli checkpoint list <session>`."))
}

/// A checkpoint of `project_id` for `owner_id` as the project stands now (reads only).
pub fn capture(kernel: &Kernel, owner_id: &str, project_id: &str, label: &str, reason: CheckpointReason, sequence: u64) -> Result<Checkpoint, ApiError> {
    let store = kernel.store();
    let project = crate::project::load(store, project_id)?;
    let head_hash = match project.head {
        0 => None,
        head => Some(crate::project::versions::load(store, &project.id, head)?.content_hash),
    };
    let unsaved = head_hash.as_deref() != Some(crate::project::versions::content_hash(&project.title, &project.source).as_str());
    Ok(Checkpoint {
        id: kernel.new_id("chk"),
        owner_id: owner_id.to_owned(),
        project_id: project.id.clone(),
        label: label.to_owned(),
        reason,
        head: project.head,
        revision: project.revision,
        working_title: unsaved.then(|| project.title.clone()),
        working_source: unsaved.then(|| project.source.clone()),
        drafts: crate::project::drafts::list(store, &project.id)?,
        sequence,
        created_at: kernel.now(),
    })
}

/// Makes a checkpoint in its own durable transaction.
pub fn create(kernel: &Kernel, owner_id: &str, project_id: &str, label: &str, reason: CheckpointReason, sequence: u64) -> Result<Checkpoint, ApiError> {
    let label = crate::error::bounded_text("label", label, 200)?;
    let _guard = kernel.write_lock();
    let checkpoint = capture(kernel, owner_id, project_id, &label, reason, sequence)?;
    let mut batch = Batch::new();
    batch.put(&checkpoint)?;
    kernel.store().apply(batch, Durability::Durable)?;
    Ok(checkpoint)
}
