//! The delivery job's state machine, sans IO: [`advance`] takes a job and an event
//! to the job's next state (pending → dispatched → acked → finalized, retry_wait with
//! full-jitter backoff that honours Retry-After, failed, conflict, superseded), and
//! [`due`] says whether a job goes now.

use super::{DeliveryJob, JobState};
use crate::model::Timestamp;

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
