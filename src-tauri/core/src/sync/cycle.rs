//! One sync cycle: pull the workspace's changes, then push the due delivery jobs.
//! The network calls run without the store's write lock; every state change is one
//! durable batch under it. A job is marked dispatched (durably) before it is sent, so
//! a crash mid-send resumes it as pending and resends the same push. A project's
//! backlog goes in batches: the first send of a job takes the project's next unsent
//! jobs along (up to `DeliverySettings::max_batch`), and records them on the job with
//! the base, so a resend is the same push under the same key.
//!
//! The parts: `pull` (changes in, conflicts opened) and `push` (the due jobs out).

mod pull;
mod push;

use super::transport::{Failure, Transport};
use super::{connection, token, Jitter};
use crate::error::{ApiError, ErrorCode};
use crate::kernel::Kernel;
use crate::outbox::{self, DeliveryJob, Event, JobState};
use crate::store::{Batch, Durability};

/// Which halves of a cycle to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum What {
    Pull,
    Push,
    Both,
}

/// What a cycle did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CycleReport {
    /// Colleagues' versions brought in.
    pub pulled: u32,
    /// Versions the server acknowledged.
    pub pushed: u32,
    /// Performance records (accounts, publications, snapshots) the server took, and
    /// those a pull changed here.
    pub perf_pushed: u32,
    pub perf_pulled: u32,
    /// Conflicts opened.
    pub new_conflicts: u32,
    /// Jobs waiting out a backoff.
    pub waiting: u32,
    /// The server could not be reached.
    pub offline: bool,
    /// The server answered at least once.
    pub contacted: bool,
    /// The last failure, for the person (English), and its code for the UI to word.
    pub error: Option<String>,
    pub error_code: Option<String>,
}

impl CycleReport {
    fn failed(&mut self, failure: &Failure) {
        self.offline |= matches!(failure, Failure::Network(_));
        self.contacted |= matches!(failure, Failure::Status { .. });
        self.noted(failure);
    }

    /// Keeps the failure as the last error; returns its reason.
    fn noted(&mut self, failure: &Failure) -> String {
        let reason = failure.reason();
        self.error = Some(reason.clone());
        self.error_code = Some(failure.code().to_owned());
        reason
    }
}

pub(crate) fn not_connected() -> ApiError {
    ApiError::new(ErrorCode::Conflict, "This workspace is not connected to a workspace server.").problem("sync.not_connected", &[]).action("connect", &[])
}

/// After a restart: what was in the air goes back to pending (same dedupe key).
pub fn resume_after_restart(kernel: &Kernel) -> Result<(), ApiError> {
    let _guard = kernel.write_lock();
    let policy = kernel.config().sync.retry;
    let mut batch = Batch::new();
    for job in super::jobs(kernel)? {
        if job.state == JobState::Dispatched {
            batch.put(&advance(&job, &Event::Restarted, kernel, &policy, 0.0)?)?;
        }
    }
    kernel.store().apply(batch, Durability::Durable)?;
    Ok(())
}

fn advance(job: &DeliveryJob, event: &Event, kernel: &Kernel, policy: &outbox::RetryPolicy, unit: f64) -> Result<DeliveryJob, ApiError> {
    advance_at(job, event, kernel.now(), policy, unit)
}

/// [`advance`] at a given time: the jobs of one push move at one instant, so they
/// wait out the same backoff and come due together.
fn advance_at(job: &DeliveryJob, event: &Event, now: crate::model::Timestamp, policy: &outbox::RetryPolicy, unit: f64) -> Result<DeliveryJob, ApiError> {
    outbox::advance(job, event, now, policy, unit).map_err(|e| ApiError::internal(format!("delivery job {}: {e}", job.id)))
}

/// Runs `what`. Errors: CONFLICT when not connected or the token is missing; store
/// errors. A server that cannot be reached is not an error: the report says offline.
pub fn run(kernel: &Kernel, transport: &Transport, jitter: &mut Jitter, what: What) -> Result<CycleReport, ApiError> {
    let connection = connection(kernel)?.ok_or_else(not_connected)?;
    let token = token(kernel)?;
    let mut report = CycleReport::default();
    if matches!(what, What::Pull | What::Both) {
        pull::pull(kernel, transport, &connection, &token, &mut report, None)?;
    }
    if matches!(what, What::Push | What::Both) {
        // A failed pull does not hold the pushes back: they go on the bases this client
        // has (a stale one meets a 409). Whether the server is unreachable, they find
        // out for themselves.
        let pull_offline = std::mem::take(&mut report.offline);
        // As the pull left it (what the server said it supports).
        let connection = super::connection(kernel)?.ok_or_else(not_connected)?;
        push::push(kernel, transport, &connection, &token, jitter, &mut report)?;
        report.offline |= pull_offline;
    }
    Ok(report)
}
