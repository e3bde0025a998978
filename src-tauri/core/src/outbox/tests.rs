#![allow(clippy::unwrap_used, clippy::expect_used)]

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
