//! The server's storage: one trait, so the embedded store and a database can serve the
//! same routes.
//!
//! - [`sled`]: the embedded store, [`SledStorage`]. Every acknowledged write is flushed
//!   and its folder synced before the call returns (sled's own flush is not power-loss
//!   durable on Linux), and pushes share a group commit.
//! - [`pg`]: the same trait on PostgreSQL, [`pg::PgStorage`], for several server
//!   processes on one database.
//!
//! This file is the face both implement: [`Storage`], its errors and outcomes, and the
//! helpers both use (pages of changes, tokens, hashes).

pub mod pg;
pub mod sled;

pub use self::sled::SledStorage;

use std::time::{SystemTime, UNIX_EPOCH};

use inkstone_sync_proto::{
    AiActivityEntry, AiActivityQuery, AiActivityResponse, ChangesResponse, IssuedToken, Member, MemberEntry, PerfAck, PerfChangesResponse, PerfKind, PerfPushResponse, PerfRecord,
    PolicyRecord, ProjectHead, PushRequest, PushResponse, Role, StaleBase, WorkspaceInfo,
};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tokio::sync::oneshot;

/// Dedupe keys are kept at least this long.
pub const DEDUPE_KEEP_MILLIS: u64 = 30 * 24 * 3600 * 1000;

#[derive(Debug, Clone, thiserror::Error)]
pub enum StorageError {
    #[error("not found: {0}")]
    NotFound(String),
    #[error("stale base")]
    Stale(StaleBase),
    #[error("the dedupe key was used for another request")]
    KeyReused,
    #[error("a request with this dedupe key is still in flight")]
    InFlight,
    /// A push carries a version id the workspace holds already (pushed by anyone).
    #[error("the version id {0} is taken")]
    VersionIdTaken(String),
    #[error("storage failed: {0}")]
    Io(String),
}

impl From<::sled::Error> for StorageError {
    fn from(e: ::sled::Error) -> Self {
        StorageError::Io(e.to_string())
    }
}

impl From<std::io::Error> for StorageError {
    fn from(e: std::io::Error) -> Self {
        StorageError::Io(e.to_string())
    }
}

impl From<serde_json::Error> for StorageError {
    fn from(e: serde_json::Error) -> Self {
        StorageError::Io(e.to_string())
    }
}

/// Who a token belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Caller {
    pub token_id: String,
    pub workspace_id: String,
    pub member: Member,
}

/// What a push with a dedupe key returned.
#[derive(Debug, Clone, PartialEq)]
pub enum PushOutcome {
    Done(PushResponse),
    /// The same key and payload were pushed before: the original result.
    Replayed(PushResponse),
}

/// The server's storage.
pub trait Storage: Send + Sync {
    /// A new workspace with its owner; returns the owner's token (shown once).
    fn create_workspace(&self, name: &str, owner_name: &str) -> Result<(String, IssuedToken), StorageError>;
    /// A new member and their token (shown once).
    fn invite(&self, workspace_id: &str, name: &str, role: Role) -> Result<IssuedToken, StorageError>;
    /// Revokes a token of `workspace_id`; NotFound when it is not one of its tokens.
    fn revoke(&self, workspace_id: &str, token_id: &str) -> Result<(), StorageError>;
    /// The caller a token names, unless unknown or revoked.
    fn authenticate(&self, token: &str) -> Result<Option<Caller>, StorageError>;
    fn workspace(&self, caller: &Caller) -> Result<WorkspaceInfo, StorageError>;
    /// The workspace's members with their tokens' ids (revoked ones too), by member id.
    fn members(&self, workspace_id: &str) -> Result<Vec<MemberEntry>, StorageError>;
    /// Pushes versions of a project, deduplicated by `key` (with `payload_hash` the
    /// hash of the request body).
    fn push(&self, caller: &Caller, project_id: &str, request: &PushRequest, key: &str, payload_hash: &str) -> Result<PushOutcome, StorageError>;
    /// Hands a push to the store's group commit without waiting, when the store has
    /// one (the embedded store): the answer arrives once the push is durable, and the
    /// caller need not hold a thread meanwhile. None: call [`Storage::push`] on a
    /// thread that may block.
    fn submit_push(&self, _caller: &Caller, _project_id: &str, _request: &PushRequest, _key: &str, _payload_hash: &str) -> Option<Result<PendingPush, StorageError>> {
        None
    }
    /// Whether reads and authentication answer from memory or a local file without
    /// waiting on a network (the embedded store), so an async task may call them.
    fn local(&self) -> bool {
        false
    }
    /// Versions after `cursor`, at most `limit`, whatever their size.
    fn changes(&self, workspace_id: &str, cursor: u64, limit: usize) -> Result<ChangesResponse, StorageError> {
        self.changes_page(workspace_id, cursor, limit, usize::MAX)
    }
    /// Versions after `cursor`: at most `limit`, and at most `max_bytes` of them as JSON
    /// (a single larger version comes alone), so an answer stays within what a client
    /// reads and what the server holds in memory for it. What is left out is `more`.
    fn changes_page(&self, workspace_id: &str, cursor: u64, limit: usize, max_bytes: usize) -> Result<ChangesResponse, StorageError>;
    /// [`Storage::changes_page`] as the JSON the server answers.
    fn changes_json(&self, workspace_id: &str, cursor: u64, limit: usize, max_bytes: usize) -> Result<Vec<u8>, StorageError> {
        let page = self.changes_page(workspace_id, cursor, limit, max_bytes)?;
        let mut out = Vec::with_capacity(json_len(&page));
        serde_json::to_writer(&mut out, &page)?;
        Ok(out)
    }
    fn project(&self, workspace_id: &str, project_id: &str) -> Result<ProjectHead, StorageError>;
    /// The workspace's policy as an owner last set it; None: never set.
    fn policy(&self, workspace_id: &str) -> Result<Option<PolicyRecord>, StorageError>;
    /// Replaces the workspace's policy (durable before it returns). The caller checked
    /// the setter is an owner and the policy is valid.
    fn set_policy(&self, workspace_id: &str, record: &PolicyRecord) -> Result<(), StorageError>;
    /// Stores a push of performance records (checked by the caller: [`PerfRecord::invalid`]),
    /// in order, each by [`perf_decision`], in one transaction, durable before it
    /// returns. A record written gets the workspace's next performance cursor; one
    /// already held or beaten changes nothing (so a resend is a no-op).
    fn perf_push(&self, caller: &Caller, records: &[PerfRecord]) -> Result<PerfPushResponse, StorageError>;
    /// The latest write of each performance record written after `cursor`, at most
    /// `limit`, oldest first.
    fn perf_changes(&self, workspace_id: &str, cursor: u64, limit: usize) -> Result<PerfChangesResponse, StorageError>;
    /// The accepted AI versions whose origin detail was pushed, newest first (by the
    /// accept's time), filtered by `query`, and by the pushing member when
    /// `only_member` names one (an editor sees their own); at most `query.page()`.
    fn ai_activity(&self, workspace_id: &str, only_member: Option<&str>, query: &AiActivityQuery) -> Result<AiActivityResponse, StorageError>;
    /// Forgets dedupe keys older than [`DEDUPE_KEEP_MILLIS`] at `now` (Unix ms); returns
    /// how many. The server runs it hourly.
    fn prune_dedupe(&self, now: u64) -> Result<usize, StorageError>;
}

/// What a storage does with a pushed performance record, given the record it holds
/// under the same (kind, id) (`held`: its stamp and whether it is deleted) and, for a
/// snapshot, whether its parent (a publication's snapshot: the publication; an
/// account's day: the account) is deleted on the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PerfDecision {
    /// Store it (a new record or a later write), with a new cursor.
    Write,
    /// Store it and delete the snapshots under it (a publication's confirmed removal:
    /// its snapshots; an account's deletion: its days).
    WriteAndDropSnapshots,
    /// Change nothing: a resend, an older write, a snapshot held already with the same
    /// content, or a snapshot of a deleted publication or account.
    Keep,
    /// Change nothing, and say so: the server holds other content under this
    /// append-only id (snapshots are written once, never replaced).
    Conflict,
}

/// The one rule both storages apply: accounts and publications are last-writer-wins
/// by [`PerfRecord::stamp`] (a deletion is a write too, so a stale edit arriving after
/// it does not bring the record back); a snapshot (of a publication or of an account)
/// is written once: the same content again is a resend, other content a conflict.
pub fn perf_decision(incoming: &PerfRecord, held: Option<((u64, &str), bool)>, parent_deleted: bool) -> PerfDecision {
    match incoming.kind {
        PerfKind::Snapshot | PerfKind::AccountSnapshot => match held {
            // `editId` is the SHA-256 of the body: another one is other content.
            Some(((_, edit), _)) if edit != incoming.edit_id => PerfDecision::Conflict,
            Some(_) => PerfDecision::Keep,
            None if parent_deleted => PerfDecision::Keep,
            None => PerfDecision::Write,
        },
        PerfKind::Account | PerfKind::Publication => match held {
            Some((stamp, _)) if incoming.stamp() <= stamp => PerfDecision::Keep,
            _ if incoming.deleted => PerfDecision::WriteAndDropSnapshots,
            _ => PerfDecision::Write,
        },
    }
}

/// The ack of a record `decision` wrote nothing for.
pub(crate) fn perf_unapplied(record: &PerfRecord, decision: PerfDecision) -> PerfAck {
    PerfAck { kind: record.kind, id: record.id.clone(), edit_id: record.edit_id.clone(), applied: false, conflict: decision == PerfDecision::Conflict }
}

/// A push handed to a group commit ([`Storage::submit_push`]): its answer, once durable.
pub type PendingPush = oneshot::Receiver<Result<PushOutcome, StorageError>>;

/// Fills a page: at most `limit` versions and `max_bytes` of them, the first always.
pub(crate) struct Page {
    limit: usize,
    max_bytes: usize,
    count: usize,
    bytes: usize,
}

impl Page {
    pub(crate) fn new(limit: usize, max_bytes: usize) -> Page {
        Page { limit: limit.max(1), max_bytes, count: 0, bytes: 0 }
    }

    /// Takes a version of `bytes` into the page unless it would pass a bound (a first
    /// version is taken whatever its size); false: the page is full.
    pub(crate) fn admit(&mut self, bytes: usize) -> bool {
        if self.count >= self.limit || (self.count > 0 && self.bytes.saturating_add(bytes) > self.max_bytes) {
            return false;
        }
        self.count += 1;
        self.bytes = self.bytes.saturating_add(bytes);
        true
    }
}

/// The length of `value` as JSON, counted without building it.
pub(crate) fn json_len<T: Serialize>(value: &T) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    match serde_json::to_writer(&mut count, value) {
        Ok(()) => count.0,
        Err(_) => usize::MAX,
    }
}

/// What both storages support beyond the first protocol: they keep a version's origin,
/// the workspace's policy, its performance data (accounts' days too) and the AI origin
/// detail of versions.
pub fn features() -> Vec<String> {
    vec![
        inkstone_sync_proto::FEATURE_VERSION_ORIGIN.to_owned(),
        inkstone_sync_proto::FEATURE_WORKSPACE_POLICY.to_owned(),
        inkstone_sync_proto::FEATURE_PERFORMANCE_DATA.to_owned(),
        inkstone_sync_proto::FEATURE_AI_ACTIVITY.to_owned(),
        inkstone_sync_proto::FEATURE_ACCOUNT_SNAPSHOTS.to_owned(),
    ]
}

/// Matching entries as a page: newest accept first (then the newest cursor), at most
/// `limit`, `truncated` when more matched.
pub(crate) fn ai_page(mut entries: Vec<AiActivityEntry>, limit: usize) -> AiActivityResponse {
    entries.sort_by(|a, b| b.ai.accepted_at.cmp(&a.ai.accepted_at).then(b.cursor.cmp(&a.cursor)));
    let truncated = entries.len() > limit;
    entries.truncate(limit);
    AiActivityResponse { entries, truncated }
}

/// `sha256` hex of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

pub(crate) fn now_millis() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

pub(crate) fn random_hex(bytes: usize) -> Result<String, StorageError> {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf).map_err(|e| StorageError::Io(format!("no randomness: {e}")))?;
    Ok(hex::encode(buf))
}

/// A new 256-bit token: `isk_` + 64 hex characters.
pub(crate) fn new_token() -> Result<String, StorageError> {
    Ok(format!("isk_{}", random_hex(32)?))
}
