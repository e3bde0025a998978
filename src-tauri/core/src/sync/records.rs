//! What sync keeps in the store: the connection, the change marker, each project's
//! link to the server's history, conflicts and the last cycle's failure.

use serde::{Deserialize, Serialize};

use crate::error::ApiError;
use crate::kernel::Kernel;
use crate::model::Timestamp;
use crate::store::{Batch, Kind, Record};

use super::*;

/// The link of this data dir to a workspace server (a meta record). The token is in
/// the keychain; this holds its fingerprint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Connection {
    pub server_url: String,
    pub remote_workspace_id: String,
    pub remote_workspace_name: String,
    pub member_id: String,
    pub member_name: String,
    /// owner, editor or viewer.
    pub role: String,
    pub token_fingerprint: String,
    /// The workspace's change cursor this client has read up to.
    pub cursor: u64,
    pub connected_at: Timestamp,
    /// The server keeps versions' origins (it said so at connect or at the last pull):
    /// pushes carry them. An older server refuses fields it does not know.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub server_takes_origin: bool,
    /// The server keeps the workspace's performance data (`performanceData`, said at
    /// connect or at the last pull): publications, accounts and snapshots travel.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub server_keeps_performance: bool,
    /// The server keeps versions' AI origin detail (`aiActivity`, at connect or the
    /// last pull): while the workspace policy shares activity, pushes carry it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub server_takes_ai: bool,
    /// The server keeps accounts' days too (`accountSnapshots`, at connect or the last
    /// pull): account snapshots travel. Without it they stay in this data folder.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub server_keeps_account_days: bool,
}

pub const META_CONNECTION: &[u8] = b"sync_connection";

impl Record for Connection {
    const KIND: Kind = Kind::Meta;
    fn key(&self) -> Vec<u8> {
        META_CONNECTION.to_vec()
    }
}

/// The sync change marker (a meta record): moves, only ever up, whenever sync changes
/// this data folder's projects — a colleague's version pulled in (a project created
/// with it), a conflict opened, moved on or resolved. It is written in the same batch
/// as the change, so every window of the data folder (and a restart) sees it; the
/// status carries it, and the UI reads projects again only when it moves.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangeMarker {
    pub n: u64,
}

pub const META_CHANGES: &[u8] = b"sync_changes";

impl Record for ChangeMarker {
    const KIND: Kind = Kind::Meta;
    fn key(&self) -> Vec<u8> {
        META_CHANGES.to_vec()
    }
}

/// The change marker as stored (0 before sync changed anything).
pub fn change_marker(kernel: &Kernel) -> Result<u64, ApiError> {
    Ok(kernel.store().get::<ChangeMarker>(META_CHANGES)?.map_or(0, |m| m.n))
}

/// Moves the change marker in `batch` (the caller holds the write lock and applies the
/// batch with the change itself). Staged twice in one batch, it moves once.
pub(crate) fn stage_change_marker(kernel: &Kernel, batch: &mut Batch) -> Result<(), ApiError> {
    let n = change_marker(kernel)?.saturating_add(1);
    batch.put(&ChangeMarker { n })?;
    Ok(())
}

/// Per project: what this client knows of the server's history.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProjectLink {
    pub project_id: String,
    /// The server's head this client has seen (0: none). The base of the next push.
    pub server_head: u32,
    /// The local version whose content is that head (0: none).
    pub base_local: u32,
}

impl Record for ProjectLink {
    const KIND: Kind = Kind::SyncProjects;
    fn key(&self) -> Vec<u8> {
        self.project_id.as_bytes().to_vec()
    }
}

/// What started a conflict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ConflictKind {
    /// The server refused a push: its head had moved.
    Push,
    /// A pulled head arrived while the working copy or local versions were unsynced.
    Pull,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ConflictState {
    Open,
    Resolved,
}

/// One side of a conflict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConflictSide {
    pub title: String,
    pub source: String,
    pub author: String,
    /// The local version holding it (none for an unsaved working copy or an empty base).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_number: Option<u32>,
    /// The server's number, when the server holds it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_number: Option<u32>,
}

/// A conflict for the person to resolve.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncConflict {
    pub id: String,
    pub project_id: String,
    pub kind: ConflictKind,
    pub state: ConflictState,
    /// The common base: the last content both sides shared.
    pub base: ConflictSide,
    /// The person's side.
    pub mine: ConflictSide,
    /// The server's side.
    pub theirs: ConflictSide,
    /// The three-way merge, when the edits do not overlap (title and source).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged: Option<MergedContent>,
    /// Where the edits overlap, for the merge view.
    pub overlaps: Vec<Overlap>,
    /// The delivery jobs the conflict holds back (superseded on resolving).
    pub job_ids: Vec<String>,
    /// The local version that resolved it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution: Option<u32>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MergedContent {
    pub title: String,
    pub source: String,
}

impl Record for SyncConflict {
    const KIND: Kind = Kind::SyncConflicts;
    fn key(&self) -> Vec<u8> {
        self.id.as_bytes().to_vec()
    }
}

impl SyncConflict {
    /// Recomputes the merge of the three sides.
    pub fn remerge(&mut self) {
        let title = merge::merge_title(&self.base.title, &self.mine.title, &self.theirs.title);
        let source = merge::merge3(&self.base.source, &self.mine.source, &self.theirs.source);
        match (title, source) {
            (Some(title), merge::Merged::Clean(source)) => {
                self.merged = Some(MergedContent { title, source });
                self.overlaps = Vec::new();
            }
            (title, source) => {
                self.merged = None;
                self.overlaps = match source {
                    merge::Merged::Overlapping(overlaps) => overlaps,
                    merge::Merged::Clean(_) => Vec::new(),
                };
                if title.is_none() {
                    self.overlaps.insert(0, Overlap { base_start: 0, base_len: 0, mine: self.mine.title.clone(), theirs: self.theirs.title.clone() });
                }
            }
        }
    }
}

/// The last cycle's failure, kept (a meta record) until a cycle succeeds, so that
/// another process — `inkstone-cli sync status` after a failed `sync pull` — tells the
/// same story as the one that ran it. Written only when the failure changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LastFailure {
    pub offline: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    pub at: Timestamp,
}

pub const META_LAST_FAILURE: &[u8] = b"sync_last_failure";

impl Record for LastFailure {
    const KIND: Kind = Kind::Meta;
    fn key(&self) -> Vec<u8> {
        META_LAST_FAILURE.to_vec()
    }
}
