//! What the status shows and the person can do about it: the jobs and conflicts, the
//! pause, the jobs' counts and what each waits behind, the overall state, and retry.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::{ApiError, ErrorCode};
use crate::kernel::Kernel;
use crate::outbox::{DeliveryJob, JobState, Paused};
use crate::store::{Batch, Durability};

use super::*;

/// Every delivery job, in creation order.
pub fn jobs(kernel: &Kernel) -> Result<Vec<DeliveryJob>, ApiError> {
    Ok(kernel.store().scan::<DeliveryJob>(b"")?)
}

/// Every conflict, oldest first.
pub fn conflicts(kernel: &Kernel) -> Result<Vec<SyncConflict>, ApiError> {
    Ok(kernel.store().scan::<SyncConflict>(b"")?)
}

/// True when the local workspace's deliveries are paused.
pub fn is_paused(kernel: &Kernel) -> Result<bool, ApiError> {
    let workspace = kernel.workspace()?;
    Ok(kernel.store().get::<Paused>(crate::outbox::META_PAUSED)?.is_some_and(|p| p.workspaces.contains(&workspace.id)))
}

/// Pauses or resumes the workspace's deliveries and pulls.
pub fn set_paused(kernel: &Kernel, paused: bool) -> Result<(), ApiError> {
    let _guard = kernel.write_lock();
    let workspace = kernel.workspace()?;
    let mut record = kernel.store().get::<Paused>(crate::outbox::META_PAUSED)?.unwrap_or_default();
    record.workspaces.retain(|w| w != &workspace.id);
    if paused {
        record.workspaces.push(workspace.id);
    }
    let mut batch = Batch::new();
    batch.put(&record)?;
    kernel.store().apply(batch, Durability::Durable)?;
    Ok(())
}

/// Counts of the jobs by what they mean to the person.
pub fn job_counts(jobs: &[DeliveryJob]) -> BTreeMap<&'static str, u32> {
    let mut counts = BTreeMap::new();
    for job in jobs {
        *counts.entry(job.state.name()).or_insert(0) += 1;
    }
    counts
}

/// True while a job still has to reach the server.
pub fn unsynced(state: &JobState) -> bool {
    match state {
        JobState::Pending | JobState::Dispatched | JobState::RetryWait { .. } | JobState::Acked { .. } => true,
        JobState::Finalized | JobState::Conflict { .. } | JobState::Failed | JobState::Superseded { .. } => false,
    }
}

/// True while a job's version is owed to the workspace server: not there yet, and
/// going there by itself — on its way, or failed and waiting for a retry. (A version
/// held in a conflict goes as part of the resolution; it is counted as a conflict.)
pub fn owed(state: &JobState) -> bool {
    match state {
        JobState::Pending | JobState::Dispatched | JobState::RetryWait { .. } | JobState::Acked { .. } | JobState::Failed => true,
        JobState::Finalized | JobState::Conflict { .. } | JobState::Superseded { .. } => false,
    }
}

/// True for a job that failed because its version cannot travel as it is (a control
/// character in its text, refused by the protocol on every server): it needs the
/// person's attention, but holds none of its project's later versions back, since
/// resending it would never succeed.
pub fn unsendable(job: &DeliveryJob) -> bool {
    job.state == JobState::Failed && job.last_error_code.as_deref() == Some(inkstone_sync_proto::CODE_CONTROL_CHARACTER)
}

/// For each unfinished job that cannot go yet, the earlier job of its project it waits
/// behind: one that failed or is held in a conflict. A project's pushes go in order,
/// each on the one before, so the later ones wait until the person retries or
/// resolves it; the status says so instead of showing them as merely pending.
pub fn held_behind(jobs: &[DeliveryJob]) -> BTreeMap<String, String> {
    let mut blocker_of_project: BTreeMap<&str, &str> = BTreeMap::new();
    let mut held = BTreeMap::new();
    for job in jobs {
        match job.state {
            JobState::Failed if unsendable(job) => {}
            JobState::Failed | JobState::Conflict { .. } => {
                blocker_of_project.entry(&job.project_id).or_insert(&job.id);
            }
            JobState::Pending | JobState::Dispatched | JobState::RetryWait { .. } => {
                if let Some(blocker) = blocker_of_project.get(job.project_id.as_str()) {
                    held.insert(job.id.clone(), (*blocker).to_owned());
                }
            }
            JobState::Acked { .. } | JobState::Finalized | JobState::Superseded { .. } => {}
        }
    }
    held
}

pub(super) fn retried(job: &DeliveryJob, kernel: &Kernel, policy: &crate::outbox::RetryPolicy) -> Result<DeliveryJob, ApiError> {
    crate::outbox::advance(job, &crate::outbox::Event::Retry, kernel.now(), policy, 0.0).map_err(|e| ApiError::internal(format!("delivery job {}: {e}", job.id)))
}

/// Sends failed jobs again: `job_id`'s, or (none) every failed job of this
/// workspace. A project's pushes go in order, so retrying one job also retries the
/// failed jobs of its project before it; and a push moves as a whole, so the jobs it
/// carries go with it. Each is the same push as before, under the same dedupe key.
/// Returns how many jobs were requeued (0 when nothing had failed).
///
/// Errors: CONFLICT when not connected (`sync.not_connected`), or when `job_id`'s job
/// has not failed (`sync.not_failed`); VALIDATION for a malformed id; NOT_FOUND for an
/// unknown job. A refusal changes nothing.
pub fn retry(kernel: &Kernel, runtime: &Runtime, job_id: Option<&str>) -> Result<u32, ApiError> {
    let _guard = kernel.write_lock();
    if connection(kernel)?.is_none() {
        return Err(cycle::not_connected());
    }
    let workspace_id = kernel.workspace()?.id;
    let all = jobs(kernel)?;
    let chosen: Vec<&DeliveryJob> = match job_id {
        None => all.iter().filter(|j| j.workspace_id == workspace_id && j.state == JobState::Failed).collect(),
        Some(job_id) => {
            if job_id.is_empty() || job_id.len() > 100 {
                return Err(ApiError::validation("jobId", "A job id is 1–100 characters, as the sync status lists it."));
            }
            let job = all.iter().find(|j| j.id == job_id).ok_or_else(|| ApiError::not_found("delivery job", job_id).action("list_jobs", &[]))?;
            if job.state != JobState::Failed {
                return Err(ApiError::new(ErrorCode::Conflict, format!("Delivery job {job_id} has not failed (it is {}); only a failed job is retried.", job.state.name()))
                    .problem("sync.not_failed", &[])
                    .details(serde_json::json!({"jobId": job_id, "state": job.state.name()})));
            }
            // Job ids sort by creation: the project's failed jobs up to this one.
            all.iter().filter(|j| j.project_id == job.project_id && j.state == JobState::Failed && j.id <= job.id).collect()
        }
    };
    let mut requeue: std::collections::BTreeSet<&str> = chosen.iter().map(|j| j.id.as_str()).collect();
    for job in &chosen {
        requeue.extend(job.batch.iter().map(String::as_str));
    }
    let policy = kernel.config().sync.retry;
    let mut batch = Batch::new();
    let mut n_requeued = 0;
    for job in all.iter().filter(|j| requeue.contains(j.id.as_str()) && j.state == JobState::Failed) {
        batch.put(&retried(job, kernel, &policy)?)?;
        n_requeued += 1;
    }
    if n_requeued > 0 {
        batch.delete::<LastFailure>(META_LAST_FAILURE.to_vec());
        kernel.store().apply(batch, Durability::Durable)?;
        runtime.set_health(|health| {
            health.last_error = None;
            health.last_error_code = None;
        });
    }
    runtime.wake();
    Ok(n_requeued)
}

/// The state the sidebar shows, most pressing first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum SyncState {
    NotConnected,
    Paused,
    Conflict,
    Offline,
    Failed,
    Pending,
    Synced,
}

/// Decides the overall state. Pure.
pub fn overall(connected: bool, paused: bool, open_conflicts: usize, failed: u32, pending: u32, offline: bool) -> SyncState {
    if !connected {
        SyncState::NotConnected
    } else if paused {
        SyncState::Paused
    } else if open_conflicts > 0 {
        SyncState::Conflict
    } else if offline {
        SyncState::Offline
    } else if failed > 0 {
        SyncState::Failed
    } else if pending > 0 {
        SyncState::Pending
    } else {
        SyncState::Synced
    }
}
