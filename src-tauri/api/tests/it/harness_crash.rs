//! Restarts and replay: kill -9 of a child in a turn leaves a consistent log with
//! approvals still pending, and replaying a long log is fast and deterministic.

use std::time::Duration;

use inkstone_api::api::{dto, StreamEvent};
use inkstone_api::harness::{replay, Event, EventBody};
use inkstone_api::llm::ToolCall;
use inkstone_api::store::{Batch, Durability};
use inkstone_api::{Engine, EngineConfig};
use inkstone_test_support::model_server::{ModelServer, Reply, Usage};
use inkstone_test_support::Rng;
use serde_json::json;

use super::harness::*;

const CRASH_DIR: &str = "INKSTONE_HARNESS_CRASH_DIR";
const CRASH_URL: &str = "INKSTONE_HARNESS_CRASH_URL";

/// The child of the restart test: opens the data dir, sends one message and stays in
/// the turn (the model stalls, or the turn blocks) until it is killed.
#[test]
fn harness_crash_child() {
    let (Ok(dir), Ok(url)) = (std::env::var(CRASH_DIR), std::env::var(CRASH_URL)) else { return };
    let mut config = EngineConfig::new(&dir, "harness crash child");
    config.group_commit_millis = 20;
    let engine = Engine::open(config).unwrap();
    register_test_tools(&engine);
    let session = match engine.call("session.list", json!({})).unwrap()["sessions"][0]["id"].as_str() {
        Some(id) => id.to_owned(),
        None => {
            engine.call("llmProfile.create", json!({"name": "fake", "baseUrl": url, "model": "fake-model"})).unwrap();
            let project = engine.call("project.create", json!({"title": "t", "source": "s"})).unwrap()["id"].as_str().unwrap().to_owned();
            engine.call("session.create", json!({"projectId": project})).unwrap()["session"]["id"].as_str().unwrap().to_owned()
        }
    };
    let result = engine.call_stream("session.submit", json!({"sessionId": session, "text": "go"}), &mut |event| {
        if let StreamEvent::Harness(event) = event {
            if matches!(event.body, dto::EventBody::AssistantDelta { .. }) {
                println!("STREAMING {session}");
            }
        }
    });
    match result {
        Ok(_) => println!("ENDED {session}"),
        Err(error) => println!("FAILED {error:?}"),
    }
    std::thread::sleep(Duration::from_secs(60));
}

/// Runs the child until it prints `marker`, waits `linger`, then kills it (SIGKILL).
fn run_child_until(dir: &std::path::Path, url: &str, marker: &str, linger: Duration) -> String {
    use std::io::{BufRead, BufReader};
    let exe = std::env::current_exe().unwrap();
    let mut child = std::process::Command::new(exe)
        .args(["--exact", "harness_crash::harness_crash_child", "--nocapture", "--test-threads=1"])
        .env(CRASH_DIR, dir)
        .env(CRASH_URL, url)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut session = String::new();
    for line in BufReader::new(stdout).lines() {
        let line = line.unwrap();
        // libtest prints "test name ... " before the test's own output.
        if line.contains("FAILED ") {
            eprintln!("child: {line}");
            break;
        }
        if let Some(at) = line.find(marker) {
            session = line[at + marker.len()..].trim().to_owned();
            break;
        }
    }
    std::thread::sleep(linger);
    // SIGKILL: no destructors, no flush.
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(!session.is_empty(), "the child reached {marker}");
    session
}

#[test]
fn after_kill_9_the_log_is_consistent_and_pending_approvals_are_still_pending() {
    let server =
        ModelServer::start(vec![Reply::Stall { content: "半截回复".to_owned() }, Reply::tool_calls(&[("w1", "test_write_note", r#"{"note":"hi"}"#)]), Reply::text("saved")]);
    let dir = tempfile::tempdir().unwrap();
    // 1. Killed while a reply streams, after its text was checkpointed (at most
    // STREAM_CHECKPOINT_MILLIS; the checkpoint is synced to disk at once).
    let linger = Duration::from_millis(inkstone_api::harness::STREAM_CHECKPOINT_MILLIS + 700);
    let session = run_child_until(dir.path(), &server.base_url(), "STREAMING ", linger);
    {
        let engine = Engine::open(EngineConfig::new(dir.path(), "test")).unwrap();
        // The panel's first read after the restart (session.events before anything else)
        // already holds the turn the restart closed.
        let first_read = engine.call("session.events", json!({"sessionId": session})).unwrap();
        let kinds: Vec<&str> = first_read["events"].as_array().unwrap().iter().filter_map(|e| e["kind"].as_str()).collect();
        assert_eq!(kinds.last(), Some(&"turn_ended"), "{kinds:?}");
        assert_eq!(first_read["events"].as_array().unwrap().last().unwrap()["payload"]["reason"], "restarted");
        assert_eq!(first_read["lastSequence"].as_u64(), Some(kinds.len() as u64));
        let view = engine.call("session.get", json!({"sessionId": session})).unwrap();
        assert_eq!(view["lastTurnEnd"], "restarted");
        let log = engine.session_events(&session).unwrap();
        let sequences: Vec<u64> = log.iter().map(|e| e.sequence).collect();
        assert_eq!(sequences, (1..=log.len() as u64).collect::<Vec<_>>(), "no gaps");
        let closed = log.iter().find_map(|e| match &e.body {
            EventBody::AssistantMessage { interrupted: true, text, finish_reason, .. } => Some((text.as_str(), finish_reason.as_str())),
            _ => None,
        });
        assert_eq!(closed, Some(("半截回复", "interrupted")), "the half-streamed reply is closed as interrupted, with the text that streamed");
        assert_eq!(replay(log.iter()).messages_hash(), view["messagesHash"].as_str().unwrap());
    }
    // 2. Killed while a write waits for approval (the child sleeps after the turn blocks).
    let again = run_child_until(dir.path(), &server.base_url(), "ENDED ", Duration::ZERO);
    assert_eq!(again, session);
    let engine = Engine::open(EngineConfig::new(dir.path(), "test")).unwrap();
    register_test_tools(&engine);
    let view = engine.call("session.get", json!({"sessionId": session})).unwrap();
    assert_eq!(view["status"], "waitingForApproval", "a blocked approval is still pending after restart");
    let request = view["pendingApproval"]["requestId"].as_str().unwrap().to_owned();
    let (result, _) = stream(&engine, "session.resolveApproval", json!({"sessionId": session, "requestId": request, "approved": true}));
    assert_eq!(result.unwrap()["reason"], "completed");
    let comments = engine.call("comment.list", json!({"projectId": view["session"]["projectId"]})).unwrap();
    assert_eq!(comments["comments"].as_array().unwrap().len(), 1);
    server.assert_tool_results_paired();
}

#[test]
fn replaying_100_000_events_is_fast_and_deterministic() {
    // A real log: session.create writes event 1; 99,999 more are written through the
    // store in batches (one transaction per 2,000 events), folded as they are written,
    // then read back from sled after a restart and replayed.
    let mut h = setup(vec![], json!({}));
    let first = h.log();
    assert_eq!(first.len(), 1);
    let mut written = replay(first.iter()).state;
    let writing = std::time::Instant::now();
    // Batches are built (fold, serialize) here and committed on a second thread, so the
    // two overlap; the log is the same as one writer's.
    std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Batch>(2);
        let engine = h.engine();
        let writer = scope.spawn(move || {
            for batch in rx {
                let _guard = engine.write_lock();
                engine.store().apply(batch, Durability::Grouped).unwrap();
            }
            engine.store().sync().unwrap();
        });
        let mut batch = Batch::new();
        let mut turn = String::new();
        for sequence in 2..=100_000u64 {
            let call_id = format!("c{}", sequence - sequence % 5);
            let body = match sequence % 5 {
                1 => {
                    turn = format!("trn_{sequence}");
                    EventBody::TurnStarted {}
                }
                2 => EventBody::UserMessage { text: format!("第 {sequence} 条消息"), was_queued: false, selection: None },
                3 => EventBody::AssistantMessage {
                    text: "好的，我先读一下。".to_owned(),
                    tool_calls: vec![ToolCall { id: call_id.clone(), name: "read_versions".to_owned(), arguments: "{}".to_owned() }],
                    finish_reason: "tool_calls".to_owned(),
                    interrupted: false,
                    input_tokens: 20,
                    output_tokens: 5,
                },
                4 => EventBody::ToolResult {
                    tool: "read_versions".to_owned(),
                    status: inkstone_api::harness::ToolStatus::Success,
                    content: r#"{"versions":[]}"#.to_owned(),
                    result_ref: None,
                    reused_execution: false,
                },
                _ => EventBody::TurnEnded { reason: inkstone_api::harness::TurnEndReason::Completed, message: String::new(), hints: Vec::new() },
            };
            let tool_use_id = matches!(body, EventBody::ToolResult { .. }).then(|| call_id.clone());
            let model_visible = body.policy().1;
            let event = Event { event_id: format!("evt_{sequence}"), sequence, turn_id: Some(turn.clone()), tool_use_id, model_visible, body, ..first[0].clone() };
            written.apply(&event);
            batch.put(&event).unwrap();
            if batch.len() == 2_000 || sequence == 100_000 {
                tx.send(std::mem::replace(&mut batch, Batch::new())).unwrap();
            }
        }
        drop(tx);
        writer.join().unwrap();
    });
    let wrote = writing.elapsed();
    // Restart, so nothing is served from the running engine's memory.
    let dir = std::mem::replace(&mut h.t.dir, tempfile::tempdir().unwrap());
    let old = std::mem::replace(&mut h.t.engine, Engine::open(EngineConfig::for_tests(h.t.dir.path())).unwrap());
    drop(old);
    h.t.engine = Engine::open(EngineConfig::for_tests(dir.path())).unwrap();
    h.t.dir = dir;

    let started = std::time::Instant::now();
    let stored = h.log();
    let read = started.elapsed();
    let sequences: Vec<u64> = stored.iter().map(|e| e.sequence).collect();
    assert_eq!(sequences, (1..=100_000).collect::<Vec<_>>(), "gap-free, in order");
    let started = std::time::Instant::now();
    let replayed = replay(stored.iter());
    let elapsed = started.elapsed();
    assert_eq!(replayed.state, written, "replay of the stored log equals the fold done while writing");
    assert_eq!(replayed.messages_hash(), written.messages_hash());
    assert_eq!(replayed.messages().len(), written.messages.len());
    assert!(replayed.messages().len() > 59_000);
    assert_eq!(replayed.state.last_sequence, 100_000);
    assert!(replayed.state.open_turn.is_none() && replayed.state.open_calls.is_empty());
    // Debug build: sled and the codec dominate. The speed target is the harness bench's
    // (release, `cargo bench --bench harness`); a debug build's wall clock under a loaded
    // test run says little (6–12 s seen on a 2-core machine for the same binary, 64 s
    // with four builds beside it), so this bound only catches a replay gone
    // pathological (quadratic would take hours).
    eprintln!("100,000 events: written in {wrote:?}, read back in {read:?}, replayed in {elapsed:?}");
    assert!(elapsed < Duration::from_secs(600), "replay {elapsed:?} (debug build)");
    let _ = Usage::Counted;
}

const LOOP_DIR: &str = "INKSTONE_HARNESS_LOOP_DIR";

/// The child of the 50-kill test: sends messages forever on one session.
#[test]
fn harness_loop_child() {
    let (Ok(dir), Ok(url)) = (std::env::var(LOOP_DIR), std::env::var(CRASH_URL)) else { return };
    let mut config = EngineConfig::new(&dir, "harness loop child");
    config.group_commit_millis = 20;
    let engine = Engine::open(config).unwrap();
    register_test_tools(&engine);
    let session = match engine.call("session.list", json!({})).unwrap()["sessions"][0]["id"].as_str() {
        Some(id) => id.to_owned(),
        None => {
            engine.call("llmProfile.create", json!({"name": "fake", "baseUrl": url, "model": "fake-model", "contextWindow": 1000000})).unwrap();
            let project = engine.call("project.create", json!({"title": "t", "source": "s"})).unwrap()["id"].as_str().unwrap().to_owned();
            engine.call("session.create", json!({"projectId": project})).unwrap()["session"]["id"].as_str().unwrap().to_owned()
        }
    };
    println!("READY {session}");
    for i in 0.. {
        let _ = engine.call("session.submit", json!({"sessionId": session, "text": format!("m{i}")}));
    }
}

#[test]
fn kill_9_at_random_points_leaves_a_gapless_log_that_replays_and_keeps_approvals_pending() {
    use std::io::{BufRead, BufReader};
    let kills: u64 = std::env::var("INKSTONE_HARNESS_KILLS").ok().and_then(|s| s.parse().ok()).unwrap_or(50);
    let seed: u64 = std::env::var("INKSTONE_HARNESS_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x5eed);
    let mut rng = Rng(seed | 1);
    let server = ModelServer::start(vec![]);
    for n in 0..kills * 40 {
        let (a, b, w, note) = (format!("r{n}a"), format!("r{n}b"), format!("w{n}"), format!(r#"{{"note":"n{n}"}}"#));
        server.push(match rng.below(4) {
            0 => Reply::text("好的。"),
            1 => Reply::tool_calls(&[(a.as_str(), "read_versions", "{}"), (b.as_str(), "slow_read", r#"{"label":"x","ms":20}"#)]),
            2 => Reply::Stall { content: "写到一半".to_owned() },
            _ => Reply::tool_calls(&[(w.as_str(), "test_write_note", note.as_str())]),
        });
    }
    // A stalled reply holds its connection; the child is killed during it or earlier.
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    for kill in 0..kills {
        let mut child = std::process::Command::new(&exe)
            .args(["--exact", "harness_crash::harness_loop_child", "--nocapture", "--test-threads=1"])
            .env(LOOP_DIR, dir.path())
            .env(CRASH_URL, server.base_url())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut session = String::new();
        for line in BufReader::new(child.stdout.take().unwrap()).lines() {
            let line = line.unwrap();
            if let Some(at) = line.find("READY ") {
                session = line[at + 6..].trim().to_owned();
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(20 + rng.below(300)));
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(!session.is_empty(), "kill {kill}: the child started");

        let engine = Engine::open(EngineConfig::new(dir.path(), "test")).unwrap();
        let before = engine.session_events(&session).unwrap();
        let view = engine.call("session.get", json!({"sessionId": session})).unwrap();
        let log = engine.session_events(&session).unwrap();
        let sequences: Vec<u64> = log.iter().map(|e| e.sequence).collect();
        assert_eq!(sequences, (1..=log.len() as u64).collect::<Vec<_>>(), "kill {kill} (seed {seed}): no gaps");
        let replayed = replay(log.iter());
        assert!(replayed.state.open_turn.is_none(), "kill {kill}: the open turn was closed");
        assert_eq!(view["messagesHash"].as_str().unwrap(), replayed.messages_hash(), "kill {kill}: replay matches");
        let before_state = replay(before.iter()).state;
        if let Some(pending) = before_state.pending_approval {
            assert_eq!(view["pendingApproval"]["requestId"].as_str(), Some(pending.request_id.as_str()), "kill {kill}: the approval is still pending");
        }
        // Every tool call has exactly one result, except those waiting on the pending block.
        let mut open: Vec<String> = Vec::new();
        for message in replayed.messages() {
            open.extend(message.tool_calls.iter().map(|c| c.id.clone()));
            if let Some(id) = &message.tool_call_id {
                let at = open.iter().position(|o| o == id).unwrap_or_else(|| panic!("kill {kill}: result for unknown call {id}"));
                open.remove(at);
            }
        }
        if replayed.state.pending_approval.is_none() && replayed.state.pending_question.is_none() {
            assert!(open.is_empty(), "kill {kill}: calls without results: {open:?}");
        }
    }
}
