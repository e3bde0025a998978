//! The sync outbox: one delivery job per accepted
//! version of a workspace linked to a server, created in the same transaction as the
//! version ([`stage_delivery`], called by `project::versions::stage_next`), so a version
//! can never exist without its job. How a job travels (endpoint, credential) is the
//! transport's business (the `sync` module); this module holds the records and a
//! sans-IO state machine ([`advance`]): pending → dispatched → acked → finalized, with
//! retry_wait (full-jitter exponential backoff that honours Retry-After), failed after
//! the maximum attempts, conflict for a stale base, and pause/resume per workspace. A
//! restart turns dispatched jobs back into pending ones ([`Event::Restarted`]); the
//! job's dedupe key makes sending it again safe. A failed job goes again, as the same
//! push, when the person retries it or reconnects ([`Event::Retry`]). Only accepted
//! versions are delivered ([`delivered`]): an autosnapshot of unsaved work has no job.

use serde::{Deserialize, Serialize};

use crate::model::{Timestamp, Version, VersionOrigin, Workspace};
use crate::store::{Batch, Kind, Record, StoreError};

mod machine;
#[cfg(test)]
mod tests;

pub use machine::{advance, due, Event, InvalidTransition, RetryPolicy};

/// Where a job stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "camelCase")]
pub enum JobState {
    /// Waiting to be sent.
    Pending,
    /// Sent; no answer yet.
    Dispatched,
    /// A transient failure; sent again at `until`.
    RetryWait { until: Timestamp },
    /// The server numbered the version.
    Acked { number: u32 },
    /// The client recorded the server's number; nothing left to do.
    Finalized,
    /// The server refused the base: the person resolves it (sync's conflict view).
    Conflict { server_head: u32 },
    /// Given up: after the maximum attempts, or a permanent refusal.
    Failed,
    /// A conflict's resolution replaced this job's version: the resolution version
    /// (local number `by_version`) carries its content on the new base. The version
    /// itself stays in the local history.
    #[serde(rename_all = "camelCase")]
    Superseded { by_version: u32 },
}

impl JobState {
    /// The wire name, for counts and the UI.
    pub fn name(&self) -> &'static str {
        match self {
            JobState::Pending => "pending",
            JobState::Dispatched => "dispatched",
            JobState::RetryWait { .. } => "retryWait",
            JobState::Acked { .. } => "acked",
            JobState::Finalized => "finalized",
            JobState::Conflict { .. } => "conflict",
            JobState::Failed => "failed",
            JobState::Superseded { .. } => "superseded",
        }
    }
}

/// One version to deliver to one workspace server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryJob {
    pub id: String,
    pub workspace_id: String,
    pub project_id: String,
    pub version_id: String,
    pub version_number: u32,
    /// Sent as the push's `Idempotency-Key`: a resend can never duplicate.
    pub dedupe_key: String,
    pub state: JobState,
    /// Sends so far.
    pub attempts: u32,
    /// The server head the first send was based on; every resend carries the same
    /// base, so a resend is byte-for-byte the same push under the same dedupe key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<u32>,
    /// The jobs (ids, in order) that the first send carried after this one: a backlog
    /// goes up to [`DeliverySettings::max_batch`] versions per push. Fixed with the
    /// base, so every resend is the same push under the same key ([`push_key`]). Only
    /// on the first job of a push; the others move through the states with it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub batch: Vec<String>,
    /// The first send carried the versions' origins (the server said it keeps them);
    /// every resend does the same, so it stays the same push. Only on the first job of
    /// a push, as `batch`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub with_origin: bool,
    /// The first send carried the versions' AI origin detail (the server keeps it and
    /// the workspace policy shared activity then); resends do the same. As `batch`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub with_ai: bool,
    /// The number the server gave the version, once acknowledged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_number: Option<u32>,
    /// Why the last attempt failed, for the person (English).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// Its stable code, for the UI to word it (`UNREACHABLE`, `UNAUTHORIZED`, ...: the
    /// codes of `SyncStatus::last_error_code`). Absent on jobs of older builds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error_code: Option<String>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

impl Record for DeliveryJob {
    const KIND: Kind = Kind::Outbox;
    /// Job ids sort by creation, so the tree is the delivery order.
    fn key(&self) -> Vec<u8> {
        self.id.as_bytes().to_vec()
    }
}

/// True when a version of this origin goes to the workspace server. Only accepted
/// versions sync: an autosnapshot is the person's unsaved work, kept automatically
/// (before a restore or a conflict's resolution), and stays private to this data
/// folder; a pulled version came from the server.
pub fn delivered(origin: &VersionOrigin) -> bool {
    match origin {
        VersionOrigin::Manual | VersionOrigin::Restore { .. } | VersionOrigin::AiProposal { .. } | VersionOrigin::Checkpoint { .. } | VersionOrigin::SyncResolution { .. } => true,
        VersionOrigin::Autosnapshot { .. } | VersionOrigin::Pulled { .. } => false,
    }
}

/// Adds the delivery job of `version` to `batch` when `workspace` is linked to a
/// server and the version is [`delivered`]; does nothing otherwise. The caller stages
/// the version in the same batch.
pub fn stage_delivery(batch: &mut Batch, workspace: &Workspace, version: &Version, job_id: String) -> Result<Option<DeliveryJob>, StoreError> {
    if workspace.server_url.is_none() || !delivered(&version.origin) {
        return Ok(None);
    }
    let job = DeliveryJob {
        dedupe_key: format!("{}:{}", workspace.id, version.id),
        id: job_id,
        workspace_id: workspace.id.clone(),
        project_id: version.project_id.clone(),
        version_id: version.id.clone(),
        version_number: version.number,
        state: JobState::Pending,
        attempts: 0,
        base: None,
        batch: Vec::new(),
        with_origin: false,
        with_ai: false,
        server_number: None,
        last_error: None,
        last_error_code: None,
        created_at: version.created_at,
        updated_at: version.created_at,
    };
    batch.put(&job)?;
    Ok(Some(job))
}

/// A performance record (account, publication, metric or account snapshot) owed to the workspace
/// server, staged in the batch that wrote the record, so a crash never loses one. One
/// entry per record (`kind 0x00 id`): a later write replaces the entry, and the record
/// is read as it is when the entry goes (its newest state). `edit` tells a write that
/// arrived during a send from the one sent: an ack removes the entry only when its
/// `edit` is still the one sent. Resends are harmless: the server keeps one row per
/// record, last writer wins (a snapshot is written once).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PerfDelivery {
    pub kind: inkstone_sync_proto::PerfKind,
    pub id: String,
    /// The project of a publication or snapshot (kept for a deletion, whose record is gone).
    #[serde(default)]
    pub project_id: Option<String>,
    /// The publication of a snapshot (its key's first part).
    #[serde(default)]
    pub publication_id: Option<String>,
    /// The account of an account snapshot (its key's first part).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account_id: Option<String>,
    /// Set when the record was deleted for good: the server is told so at this time.
    #[serde(default)]
    pub deleted_at: Option<Timestamp>,
    /// A new id per write.
    pub edit: String,
    /// Sends that failed so far.
    #[serde(default)]
    pub attempts: u32,
    #[serde(default)]
    pub last_error: Option<String>,
    /// The server holds other content under this append-only id (its ack said so):
    /// never sent again, and counted in the status until the record is gone.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub conflict: bool,
    pub queued_at: Timestamp,
}

impl Record for PerfDelivery {
    const KIND: Kind = Kind::PerfOutbox;
    fn key(&self) -> Vec<u8> {
        perf_delivery_key(self.kind, &self.id)
    }
}

/// The key of a record's [`PerfDelivery`].
pub fn perf_delivery_key(kind: inkstone_sync_proto::PerfKind, id: &str) -> Vec<u8> {
    crate::store::keys::child(kind.as_str(), id)
}

/// Adds (or replaces) the delivery of a performance record to `batch` when `workspace`
/// is linked to a server; does nothing otherwise. The caller stages the record's
/// write in the same batch.
pub fn stage_perf_delivery(batch: &mut Batch, workspace: &Workspace, delivery: PerfDelivery) -> Result<(), StoreError> {
    if workspace.server_url.is_none() {
        return Ok(());
    }
    batch.put(&delivery)?;
    Ok(())
}

/// The `Idempotency-Key` of the push that `job` leads: its own key when it goes
/// alone, its key and the count when it carries a batch. The batch is fixed at the
/// first send, so the key and the payload are the same on every resend.
pub fn push_key(job: &DeliveryJob) -> String {
    if job.batch.is_empty() {
        job.dedupe_key.clone()
    } else {
        format!("{}+{}", job.dedupe_key, job.batch.len())
    }
}

/// How the sync transport delivers jobs (`EngineConfig::sync`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeliverySettings {
    pub retry: RetryPolicy,
    /// Each request's limit (connect, answer and body).
    pub timeout: std::time::Duration,
    /// How often the delivery thread pulls when nothing wakes it.
    pub poll: std::time::Duration,
    /// The most versions of one project a push carries (a backlog after a time
    /// offline goes in a few pushes, not one per version); 1 sends one per push.
    pub max_batch: usize,
}

impl Default for DeliverySettings {
    fn default() -> Self {
        DeliverySettings {
            retry: RetryPolicy::default(),
            timeout: std::time::Duration::from_secs(20),
            poll: std::time::Duration::from_secs(30),
            max_batch: inkstone_sync_proto::MAX_VERSIONS_PER_PUSH,
        }
    }
}

/// Pause of a workspace's deliveries, kept in the meta tree.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Paused {
    pub workspaces: Vec<String>,
}

pub const META_PAUSED: &[u8] = b"outbox_paused";

impl Record for Paused {
    const KIND: Kind = Kind::Meta;
    fn key(&self) -> Vec<u8> {
        META_PAUSED.to_vec()
    }
}
