//! `session.watch`: a caller that does not drive a turn (another window, a reload) is
//! pushed what the session's log gains, in order, as the driver and other callers
//! append it; the watch ends with the turn, when its listener leaves, or when the
//! engine closes, and refuses bad parameters before sending anything.

use std::sync::mpsc;
use std::time::Duration;

use inkstone_api::api::dto::TimelinePatch;
use inkstone_api::api::{dto, StreamEvent};
use inkstone_api::ErrorCode;
use inkstone_test_support::model_server::{ModelServer, Reply};
use inkstone_test_support::TestEngine;
use serde_json::{json, Value};

/// An engine with a model that streams a first word and then stalls, and a session.
fn stalled_session() -> (TestEngine, ModelServer, String) {
    let server = ModelServer::start(vec![Reply::Stall { content: "写到一半".to_owned() }]);
    let t = TestEngine::new();
    t.ok("llmProfile.create", json!({"name": "fake", "baseUrl": server.base_url(), "model": "fake-model", "contextWindow": 32000}));
    let project = t.ok("project.create", json!({"title": "春茶", "source": "# 春茶\n\n山上的春茶。"}))["id"].as_str().unwrap().to_owned();
    let session = t.ok("session.create", json!({"projectId": project}))["session"]["id"].as_str().unwrap().to_owned();
    (t, server, session)
}

/// Submits on its own thread (the driver), returning once the first word streamed.
fn drive<'scope, 'env>(
    scope: &'scope std::thread::Scope<'scope, 'env>,
    t: &'env TestEngine,
    session: &'env str,
) -> std::thread::ScopedJoinHandle<'scope, Result<Value, inkstone_api::ApiError>> {
    let (first_word, arrived) = mpsc::channel();
    let driver = scope.spawn(move || {
        t.engine.call_stream("session.submit", json!({"sessionId": session, "text": "写一句"}), &mut |event| {
            if let StreamEvent::Harness(event) = event {
                if matches!(event.body, dto::EventBody::AssistantDelta { .. }) {
                    let _ = first_word.send(());
                }
            }
        })
    });
    arrived.recv_timeout(Duration::from_secs(60)).expect("the first word streams");
    driver
}

fn patch_of(event: StreamEvent) -> TimelinePatch {
    match event {
        StreamEvent::Timeline(patch) => *patch,
        other => panic!("session.watch sent {other:?}"),
    }
}

#[test]
fn what_another_caller_appends_is_pushed_in_order_and_the_watch_ends_with_the_turn() {
    let (t, _server, session) = stalled_session();
    std::thread::scope(|scope| {
        let driver = drive(scope, &t, &session);
        let (sender, patches) = mpsc::channel();
        let watcher = scope.spawn(|| {
            let sender = sender;
            t.engine.call_stream_while("session.watch", json!({"sessionId": session}), &mut |event| sender.send(patch_of(event)).is_ok())
        });
        let first = patches.recv_timeout(Duration::from_secs(10)).expect("the state at once");
        assert!(first.state.as_ref().unwrap().turn_open, "the turn runs: {first:?}");
        let kinds = |patch: &TimelinePatch| -> Vec<Value> { patch.items.iter().map(|i| serde_json::to_value(i).unwrap()["kind"].clone()).collect() };
        assert_eq!(kinds(&first).first(), Some(&json!("user")), "the logged items so far");
        // The driver checkpoints the streamed text into the log: that append is pushed
        // while the turn still runs.
        let mut sent = vec![first];
        while !sent.iter().any(|p| p.items.iter().any(|i| serde_json::to_value(i).unwrap()["text"] == "写到一半")) {
            sent.push(patches.recv_timeout(Duration::from_secs(10)).expect("the streamed text, once logged, is pushed"));
        }
        assert!(sent.last().unwrap().state.as_ref().unwrap().turn_open);
        // Nothing more is appended: nothing more is sent (no timer reads the log).
        assert!(patches.recv_timeout(Duration::from_millis(700)).is_err());

        // A third caller stops the turn: its appends reach the watch, then the watch ends.
        assert_eq!(t.ok("session.interrupt", json!({"sessionId": session}))["interrupted"], true);
        let ended = watcher.join().unwrap().expect("the watch ends with the turn");
        assert_eq!(driver.join().unwrap().unwrap()["reason"], "interrupted");
        assert_eq!(ended["ended"], "turnEnded");

        sent.extend(patches.try_iter());
        let sequences: Vec<u64> = sent.iter().map(|p| p.sequence).collect();
        assert!(sequences.windows(2).all(|w| w[0] < w[1]), "patches come in the log's order: {sequences:?}");
        // Put by key, the patches hold exactly what session.timeline answers now.
        let mut held: Vec<(String, Value)> = Vec::new();
        for patch in &sent {
            for item in &patch.items {
                let item = serde_json::to_value(item).unwrap();
                let key = item["key"].as_str().unwrap().to_owned();
                match held.iter_mut().find(|(k, _)| *k == key) {
                    Some(slot) => slot.1 = item,
                    None => held.push((key, item)),
                }
            }
        }
        let now = t.ok("session.timeline", json!({"sessionId": session}));
        assert_eq!(Value::Array(held.into_iter().map(|(_, item)| item).collect()), now["items"]);
        let last = sent.last().unwrap().state.as_ref().unwrap();
        assert!(!last.turn_open);
        assert_eq!(ended["lastSequence"], now["lastSequence"]);
        assert_eq!(last.last_sequence, now["lastSequence"].as_u64().unwrap());
    });
}

#[test]
fn a_gone_listener_or_a_closed_engine_ends_the_watch() {
    let (t, server, session) = stalled_session();
    server.push(Reply::Stall { content: "又写到一半".to_owned() });
    std::thread::scope(|scope| {
        // The listener takes the first patch and is gone for the next: the interrupt's
        // appends find nobody, and the watch ends there.
        let driver = drive(scope, &t, &session);
        let (opened, open) = mpsc::channel();
        let watcher = scope.spawn(|| {
            let opened = opened;
            let mut heard = 0;
            t.engine.call_stream_while("session.watch", json!({"sessionId": session}), &mut |_| {
                heard += 1;
                let _ = opened.send(());
                heard == 1
            })
        });
        open.recv_timeout(Duration::from_secs(10)).expect("the watch sent its first patch");
        t.ok("session.interrupt", json!({"sessionId": session}));
        driver.join().unwrap().unwrap();
        assert_eq!(watcher.join().unwrap().expect("a watch whose listener left answers")["ended"], "listenerGone");
        assert_eq!(open.try_iter().count(), 1, "nothing was sent after the listener left");

        // A closed engine ends a watch that the next running turn holds open.
        let driver = drive(scope, &t, &session);
        let (opened, open) = mpsc::channel();
        let watcher = scope.spawn(|| {
            let opened = opened;
            t.engine.call_stream_while("session.watch", json!({"sessionId": session}), &mut |_| {
                let _ = opened.send(());
                true
            })
        });
        open.recv_timeout(Duration::from_secs(10)).expect("the second watch sent its first patch");
        t.engine.close_watches();
        assert_eq!(watcher.join().unwrap().expect("a closed engine's watch answers")["ended"], "closed");
        t.ok("session.interrupt", json!({"sessionId": session}));
        driver.join().unwrap().unwrap();
    });
}

#[test]
fn bad_parameters_are_refused_and_an_idle_session_ends_at_once() {
    let (t, _server, session) = stalled_session();
    let mut sent = 0;
    let mut refused = |params: Value| {
        let error = t.engine.call_stream_while("session.watch", params, &mut |_| {
            sent += 1;
            true
        });
        error.expect_err("refused").code
    };
    assert_eq!(refused(json!({"sessionId": session, "every": 5})), ErrorCode::Validation);
    assert_eq!(refused(json!({"sessionId": "not an id"})), ErrorCode::Validation);
    assert_eq!(refused(json!({"sessionId": session, "since": 99})), ErrorCode::Validation);
    assert_eq!(refused(json!({"sessionId": "ses_01J00000000000000000000000"})), ErrorCode::NotFound);
    assert_eq!(sent, 0, "nothing is sent before a refusal");
    // No turn runs: one patch with the state, and the watch ends.
    let mut patches = Vec::new();
    let answer = t.engine.call_stream_while("session.watch", json!({"sessionId": session}), &mut |event| {
        patches.push(patch_of(event));
        true
    });
    assert_eq!(answer.unwrap()["ended"], "turnEnded");
    assert_eq!(patches.len(), 1);
    assert!(!patches[0].state.as_ref().unwrap().turn_open);
}

#[test]
fn a_turn_started_anywhere_is_pushed_to_every_window_as_session_activity() {
    // A window showing an idle session learns that a turn started elsewhere from the
    // sync status it already holds open (its session-activity marker), not from reading
    // the log on a timer; the turn itself is then followed through `session.watch`.
    let (t, _server, session) = stalled_session();
    std::thread::scope(|scope| {
        let (sender, statuses) = mpsc::channel();
        let watcher = scope.spawn(|| {
            let sender = sender;
            t.engine.call_stream_while("sync.watch", json!({}), &mut |event| match event {
                StreamEvent::SyncStatus(status) => sender.send(*status).is_ok(),
                other => panic!("sync.watch sent {other:?}"),
            })
        });
        let first = statuses.recv_timeout(Duration::from_secs(10)).expect("the status at once");
        // Nothing starts: nothing is pushed.
        assert!(statuses.recv_timeout(Duration::from_millis(500)).is_err());

        let driver = drive(scope, &t, &session);
        let started = loop {
            let status = statuses.recv_timeout(Duration::from_secs(10)).expect("a turn start is pushed");
            if status.session_activity != first.session_activity {
                break status;
            }
        };
        assert_eq!(started.session_activity, first.session_activity + 1, "one start, one move");
        // What the window reads on that push shows the turn running, to follow.
        assert_eq!(t.ok("session.timeline", json!({"sessionId": session, "since": 0}))["turnOpen"], true);

        // The rest of the turn (its streamed text logged, its interruption, its end) does
        // not move the marker: the turn's own watch brings those.
        assert_eq!(t.ok("session.interrupt", json!({"sessionId": session}))["interrupted"], true);
        assert_eq!(driver.join().unwrap().unwrap()["reason"], "interrupted");
        std::thread::sleep(Duration::from_millis(300));
        assert!(statuses.try_iter().all(|status| status.session_activity == started.session_activity));

        t.engine.close_watches();
        watcher.join().unwrap().expect("the watch ends with the engine");
    });
}
