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

/// How hard to try.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// The first backoff ceiling, in milliseconds; doubled per attempt.
    pub base_millis: u64,
    /// The most a backoff may be.
    pub cap_millis: u64,
    /// Sends before a job fails.
    pub max_attempts: u32,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy { base_millis: 1_000, cap_millis: 5 * 60 * 1_000, max_attempts: 12 }
    }
}

impl RetryPolicy {
    /// Full jitter: a uniform draw in `[0, min(cap, base · 2^attempt)]`, with `unit` a
    /// uniform draw in `[0, 1)` from the caller (so the machine stays deterministic).
    pub fn backoff_millis(&self, attempt: u32, unit: f64) -> u64 {
        let ceiling = self.base_millis.saturating_mul(1u64 << attempt.min(30)).min(self.cap_millis);
        (ceiling as f64 * unit.clamp(0.0, 1.0)) as u64
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

/// What happened to a job.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// The transport sends it now.
    Dispatch,
    /// The server numbered the version.
    Acked { number: u32 },
    /// A timeout, a reset, a 5xx or a 429: try again later (`retry_after_millis` from
    /// the server's Retry-After, when it sent one). `code` is the failure's stable code.
    Transient { reason: String, code: String, retry_after_millis: Option<u64> },
    /// A refusal that will not change by retrying (401, 403, 422, a bad request).
    Permanent { reason: String, code: String },
    /// The server's head moved: a conflict for the person.
    StaleBase { server_head: u32 },
    /// The client stored the server's number.
    Finalize,
    /// The process restarted: what was in the air goes back to pending.
    Restarted,
    /// The person asked to try a failed or conflicted job again (or reconnected with
    /// a new token). A failed job keeps its base and batch: it is the same push again,
    /// under the same dedupe key, so a push the server stored before it gave up is
    /// answered with its original result, never stored twice.
    Retry,
    /// The person resolved the job's conflict with the version numbered `by_version`.
    Superseded { by_version: u32 },
    /// The version cannot travel as it is (its text holds a control character the
    /// protocol refuses): failed before any send, with no base or batch, so it holds
    /// nothing of its project back and a retry checks it afresh.
    Unsendable { reason: String, code: String },
    /// The push was refused for another version it carried: this one goes again in a
    /// new push of its own (no base, no batch; the refused push stored nothing).
    Unbatched,
}

/// Why an event does not apply to a job's state.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a {state} job cannot take {event}")]
pub struct InvalidTransition {
    pub state: &'static str,
    pub event: &'static str,
}

fn event_name(event: &Event) -> &'static str {
    match event {
        Event::Dispatch => "dispatch",
        Event::Acked { .. } => "acked",
        Event::Transient { .. } => "transient",
        Event::Permanent { .. } => "permanent",
        Event::StaleBase { .. } => "staleBase",
        Event::Finalize => "finalize",
        Event::Restarted => "restarted",
        Event::Retry => "retry",
        Event::Superseded { .. } => "superseded",
        Event::Unsendable { .. } => "unsendable",
        Event::Unbatched => "unbatched",
    }
}

/// The job after `event` at `now`. Pure. `unit` is a uniform draw in `[0, 1)` for the
/// backoff's jitter.
///
/// Errors: [`InvalidTransition`] for an event the state does not take (a dispatch of
/// a finalized job, an ack of a pending one, ...); the job is unchanged.
pub fn advance(job: &DeliveryJob, event: &Event, now: Timestamp, policy: &RetryPolicy, unit: f64) -> Result<DeliveryJob, InvalidTransition> {
    let invalid = || InvalidTransition { state: job.state.name(), event: event_name(event) };
    let mut next = job.clone();
    next.updated_at = now;
    match (&job.state, event) {
        (JobState::Pending, Event::Dispatch) => {
            next.state = JobState::Dispatched;
            next.attempts += 1;
        }
        (JobState::RetryWait { until }, Event::Dispatch) if *until <= now => {
            next.state = JobState::Dispatched;
            next.attempts += 1;
        }
        (JobState::Dispatched, Event::Acked { number }) => {
            next.state = JobState::Acked { number: *number };
            next.server_number = Some(*number);
            next.last_error = None;
            next.last_error_code = None;
        }
        (JobState::Dispatched, Event::Transient { reason, code, retry_after_millis }) => {
            next.last_error = Some(reason.clone());
            next.last_error_code = Some(code.clone());
            if job.attempts >= policy.max_attempts {
                next.state = JobState::Failed;
                next.last_error = Some(format!("{reason} (gave up after {} attempts)", job.attempts));
            } else {
                let wait = policy.backoff_millis(job.attempts, unit).max(retry_after_millis.unwrap_or(0));
                next.state = JobState::RetryWait { until: now + chrono::Duration::milliseconds(i64::try_from(wait).unwrap_or(i64::MAX)) };
            }
        }
        (JobState::Pending | JobState::RetryWait { .. }, Event::Unsendable { reason, code }) => {
            next.state = JobState::Failed;
            next.base = None;
            next.batch.clear();
            next.with_origin = false;
            next.with_ai = false;
            next.last_error = Some(reason.clone());
            next.last_error_code = Some(code.clone());
        }
        // Refused for another version it carried: not this job's failed attempt.
        (JobState::Dispatched, Event::Unbatched) => {
            next.state = JobState::Pending;
            next.attempts = job.attempts.saturating_sub(1);
            next.base = None;
            next.batch.clear();
            next.with_origin = false;
            next.with_ai = false;
        }
        (JobState::Dispatched, Event::Permanent { reason, code }) => {
            next.state = JobState::Failed;
            next.last_error = Some(reason.clone());
            next.last_error_code = Some(code.clone());
        }
        (JobState::Dispatched, Event::StaleBase { server_head }) => {
            next.state = JobState::Conflict { server_head: *server_head };
            next.last_error = Some(format!("the server's head moved to {server_head}"));
            next.last_error_code = None;
        }
        (JobState::Acked { .. }, Event::Finalize) => next.state = JobState::Finalized,
        // In the air when the process stopped: sent again under the same key, and the
        // attempt that got no answer is not counted (restarts cannot use up attempts).
        (JobState::Dispatched, Event::Restarted) => {
            next.state = JobState::Pending;
            next.attempts = job.attempts.saturating_sub(1);
        }
        // The same push again: the base and batch stay (see `Event::Retry`). The reason
        // stays too, until an answer replaces it.
        (JobState::Failed, Event::Retry) => {
            next.state = JobState::Pending;
            next.attempts = 0;
        }
        // The base was stale: the next send is a new push on the head seen by then.
        (JobState::Conflict { .. }, Event::Retry) => {
            next.state = JobState::Pending;
            next.attempts = 0;
            next.base = None;
            next.batch.clear();
        }
        // A pull can also see that the server holds a version whose ack never arrived
        // (or that its base moved) while the job waits to be resent, or after it gave
        // up.
        (JobState::Pending | JobState::RetryWait { .. } | JobState::Failed, Event::Acked { number }) => {
            next.state = JobState::Acked { number: *number };
            next.server_number = Some(*number);
            next.last_error = None;
            next.last_error_code = None;
        }
        (JobState::Pending | JobState::RetryWait { .. }, Event::StaleBase { server_head }) => {
            next.state = JobState::Conflict { server_head: *server_head };
            next.last_error = Some(format!("the server's head moved to {server_head}"));
            next.last_error_code = None;
        }
        (JobState::Conflict { .. }, Event::Superseded { by_version }) => {
            next.state = JobState::Superseded { by_version: *by_version };
            next.last_error = None;
            next.last_error_code = None;
        }
        // A restart leaves every other state as it is.
        (_, Event::Restarted) => {}
        _ => return Err(invalid()),
    }
    Ok(next)
}

/// True when the job should be sent at `now` (and its workspace is not paused).
pub fn due(job: &DeliveryJob, now: Timestamp) -> bool {
    match &job.state {
        JobState::Pending => true,
        JobState::RetryWait { until } => *until <= now,
        _ => false,
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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn at(ms: i64) -> Timestamp {
        chrono::DateTime::from_timestamp_millis(1_800_000_000_000 + ms).unwrap()
    }

    fn job() -> DeliveryJob {
        DeliveryJob {
            id: "job_1".into(),
            workspace_id: "wsp_1".into(),
            project_id: "prj_1".into(),
            version_id: "ver_1".into(),
            version_number: 3,
            dedupe_key: "wsp_1:ver_1".into(),
            state: JobState::Pending,
            attempts: 0,
            base: None,
            batch: Vec::new(),
            with_origin: false,
            with_ai: false,
            server_number: None,
            last_error: None,
            last_error_code: None,
            created_at: at(0),
            updated_at: at(0),
        }
    }

    #[test]
    fn the_happy_path_is_pending_dispatched_acked_finalized() {
        let policy = RetryPolicy::default();
        let j = advance(&job(), &Event::Dispatch, at(1), &policy, 0.5).unwrap();
        assert_eq!((j.state.clone(), j.attempts), (JobState::Dispatched, 1));
        let j = advance(&j, &Event::Acked { number: 7 }, at(2), &policy, 0.5).unwrap();
        assert_eq!(j.state, JobState::Acked { number: 7 });
        let j = advance(&j, &Event::Finalize, at(3), &policy, 0.5).unwrap();
        assert_eq!(j.state, JobState::Finalized);
        assert!(advance(&j, &Event::Dispatch, at(4), &policy, 0.5).is_err(), "a finalized job is never sent again");
    }

    #[test]
    fn transient_failures_back_off_with_full_jitter_and_honour_retry_after() {
        let policy = RetryPolicy { base_millis: 1_000, cap_millis: 60_000, max_attempts: 3 };
        let sent = advance(&job(), &Event::Dispatch, at(0), &policy, 0.0).unwrap();
        let waiting = advance(&sent, &Event::Transient { reason: "timeout".into(), code: "UNREACHABLE".into(), retry_after_millis: None }, at(10), &policy, 0.5).unwrap();
        // attempt 1: ceiling 2 s, half of it.
        assert_eq!(waiting.state, JobState::RetryWait { until: at(10 + 1_000) });
        assert!(!due(&waiting, at(500)) && due(&waiting, at(1_010)));
        assert!(advance(&waiting, &Event::Dispatch, at(500), &policy, 0.5).is_err(), "not before its time");
        // Retry-After beats a shorter jittered wait.
        let honoured = advance(&sent, &Event::Transient { reason: "429".into(), code: "RATE_LIMITED".into(), retry_after_millis: Some(30_000) }, at(10), &policy, 0.1).unwrap();
        assert_eq!(honoured.state, JobState::RetryWait { until: at(30_010) });
        // After the maximum attempts: failed, with the reason.
        let mut j = sent;
        for i in 0..2 {
            j = advance(&j, &Event::Transient { reason: "reset".into(), code: "UNREACHABLE".into(), retry_after_millis: None }, at(100 * i), &policy, 0.0).unwrap();
            j = advance(&j, &Event::Dispatch, at(100 * i + 50), &policy, 0.0).unwrap();
        }
        assert_eq!(j.attempts, 3);
        let failed = advance(&j, &Event::Transient { reason: "reset".into(), code: "UNREACHABLE".into(), retry_after_millis: None }, at(1_000), &policy, 0.0).unwrap();
        assert_eq!((&failed.state, failed.last_error_code.as_deref()), (&JobState::Failed, Some("UNREACHABLE")));
        assert!(failed.last_error.clone().unwrap().contains("gave up after 3 attempts"));
        // Retrying it is the same push again: same base, batch and key; a fresh count.
        let again = advance(&failed, &Event::Retry, at(2_000), &policy, 0.0).unwrap();
        assert_eq!((&again.state, again.attempts, again.base, &again.batch), (&JobState::Pending, 0, failed.base, &failed.batch));
        assert_eq!(push_key(&again), push_key(&failed));
        // A pull that finds the version on the server completes it, even after giving up.
        let found = advance(&failed, &Event::Acked { number: 4 }, at(2_000), &policy, 0.0).unwrap();
        assert_eq!((&found.state, found.last_error.as_deref(), found.last_error_code.as_deref()), (&JobState::Acked { number: 4 }, None, None));
    }

    #[test]
    fn a_permanent_refusal_fails_with_its_reason_and_code_until_retried() {
        let policy = RetryPolicy::default();
        let mut sent = advance(&job(), &Event::Dispatch, at(0), &policy, 0.0).unwrap();
        sent.base = Some(2);
        sent.batch = vec!["job_2".into()];
        let failed = advance(&sent, &Event::Permanent { reason: "401 UNAUTHORIZED: no".into(), code: "UNAUTHORIZED".into() }, at(1), &policy, 0.0).unwrap();
        assert_eq!((&failed.state, failed.last_error.as_deref(), failed.last_error_code.as_deref()), (&JobState::Failed, Some("401 UNAUTHORIZED: no"), Some("UNAUTHORIZED")));
        assert!(!due(&failed, at(1_000_000)), "a failed job waits for the person");
        let again = advance(&failed, &Event::Retry, at(2), &policy, 0.0).unwrap();
        assert_eq!((&again.state, again.attempts, again.base, again.batch.clone()), (&JobState::Pending, 0, Some(2), vec!["job_2".to_owned()]));
        assert!(due(&again, at(2)));
        assert!(advance(&again, &Event::Retry, at(3), &policy, 0.0).is_err(), "only a failed or conflicted job is retried");
    }

    #[test]
    fn only_accepted_versions_are_delivered() {
        use crate::model::VersionOrigin as O;
        let delivered_by_origin = [
            (O::Manual, true),
            (O::Restore { from: 1 }, true),
            (O::Checkpoint { checkpoint_id: "chk_1".into() }, true),
            (O::AiProposal { proposal_id: "prp_1".into(), session_id: None, run_id: None, model: "m".into(), profile_id: "p".into(), sources: Vec::new() }, true),
            (O::SyncResolution { conflict_id: "cnf_1".into() }, true),
            (O::Autosnapshot { conflict_id: None }, false),
            (O::Autosnapshot { conflict_id: Some("cnf_1".into()) }, false),
            (O::Pulled { server_number: 3, pushed_by: "bob".into(), remote_origin: None }, false),
        ];
        for (origin, expected) in delivered_by_origin {
            assert_eq!(delivered(&origin), expected, "{origin:?}");
        }
    }

    #[test]
    fn a_restart_resumes_what_was_in_the_air_and_a_stale_base_waits_for_the_person() {
        let policy = RetryPolicy::default();
        let sent = advance(&job(), &Event::Dispatch, at(0), &policy, 0.0).unwrap();
        let resumed = advance(&sent, &Event::Restarted, at(5), &policy, 0.0).unwrap();
        assert_eq!(resumed.state, JobState::Pending);
        assert_eq!(resumed.dedupe_key, job().dedupe_key, "the same key: a resend cannot duplicate");
        let conflict = advance(&sent, &Event::StaleBase { server_head: 9 }, at(5), &policy, 0.0).unwrap();
        assert_eq!(conflict.state, JobState::Conflict { server_head: 9 });
        assert!(!due(&conflict, at(1_000_000)));
        let retried = advance(&conflict, &Event::Retry, at(6), &policy, 0.0).unwrap();
        assert_eq!((retried.state, retried.base), (JobState::Pending, None), "a stale base is not sent again");
    }

    proptest! {
        /// Any sequence of events: a job is acked at most once and never leaves
        /// finalized; a refused event changes nothing; attempts never exceed the
        /// maximum plus one; backoff never exceeds the cap (or Retry-After).
        #[test]
        fn no_sequence_sends_a_finalized_job_or_exceeds_the_attempts(events in proptest::collection::vec(0u8..12, 0..60), units in proptest::collection::vec(0.0f64..1.0, 60)) {
            let policy = RetryPolicy { base_millis: 100, cap_millis: 1_000, max_attempts: 4 };
            let mut j = job();
            let mut now = 0;
            let mut finalized = false;
            let mut superseded = false;
            for (i, e) in events.iter().enumerate() {
                now += 2_000;
                let event = match e {
                    0 | 1 => Event::Dispatch,
                    2 => Event::Acked { number: 5 },
                    3 => Event::Transient { reason: "x".into(), code: "UNREACHABLE".into(), retry_after_millis: None },
                    4 => Event::Permanent { reason: "no".into(), code: "UNAUTHORIZED".into() },
                    5 => Event::Finalize,
                    6 => Event::Restarted,
                    7 => Event::Superseded { by_version: 9 },
                    8 => Event::Retry,
                    9 => Event::StaleBase { server_head: 2 },
                    10 => Event::Unsendable { reason: "U+0000".into(), code: "CONTROL_CHARACTER".into() },
                    _ => Event::Unbatched,
                };
                if let Ok(next) = advance(&j, &event, at(now), &policy, units[i]) {
                    prop_assert!(!finalized || next.state == JobState::Finalized, "left finalized: {:?}", next.state);
                    // A superseded version's content travels in the resolution: the
                    // job itself is never sent or acked again.
                    prop_assert!(!superseded || next.state == JobState::Superseded { by_version: 9 }, "left superseded: {:?}", next.state);
                    if let JobState::RetryWait { until } = next.state {
                        prop_assert!(until <= at(now + 1_000));
                    }
                    j = next;
                }
                finalized |= j.state == JobState::Finalized;
                superseded |= matches!(j.state, JobState::Superseded { .. });
                prop_assert!(!(finalized && superseded));
                prop_assert!(j.attempts <= policy.max_attempts + 1);
            }
        }
    }
}
