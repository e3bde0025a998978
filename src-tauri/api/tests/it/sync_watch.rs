//! `sync.watch`: the engine pushes the sync status when it changes — pause and resume,
//! a version delivered to a real workspace server, the server going out of reach — with
//! no client reading `sync.status` meanwhile; it ends when its listener is gone or the
//! engine closes, and refuses bad parameters before sending anything.

use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use inkstone_api::api::{LocalChange, StreamEvent, SyncStatus};
use inkstone_api::llm::keychain::MemoryKeychain;
use inkstone_api::{Engine, ErrorCode};
use serde_json::json;

use super::sync::*;

/// A watch running on its own thread, its events on a channel.
struct Watch {
    events: mpsc::Receiver<SyncStatus>,
    thread: Option<std::thread::JoinHandle<Result<serde_json::Value, inkstone_api::ApiError>>>,
}

impl Watch {
    fn start(engine: &Arc<Engine>) -> Watch {
        let (sender, events) = mpsc::channel();
        let engine = Arc::clone(engine);
        let thread = std::thread::spawn(move || {
            engine.call_stream_while("sync.watch", json!({}), &mut |event| match event {
                StreamEvent::SyncStatus(status) => sender.send(*status).is_ok(),
                other => panic!("sync.watch sent {other:?}"),
            })
        });
        Watch { events, thread: Some(thread) }
    }

    /// The next pushed status that satisfies `wanted`, within `timeout`.
    fn until(&self, what: &str, timeout: Duration, wanted: impl Fn(&SyncStatus) -> bool) -> SyncStatus {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.events.recv_timeout(left) {
                Ok(status) if wanted(&status) => return status,
                Ok(_) => {}
                Err(_) => panic!("no pushed status showed {what} within {timeout:?}"),
            }
        }
    }
}

fn watched_client(url: &str, token: &str) -> (Client, Watch) {
    let dir = tempfile::tempdir().unwrap();
    let keychain = Arc::new(MemoryKeychain::default());
    let mut cfg = config(dir.path(), "Alice", &keychain);
    // The background cycle waits a minute: only a push can show a change in time.
    cfg.sync.poll = Duration::from_secs(60);
    let engine = Arc::new(Engine::open(cfg).unwrap());
    engine.start_sync();
    let alice = Client { engine, dir, keychain, name: "Alice".to_owned() };
    let watch = Watch::start(&alice.engine);
    let first = watch.until("the status at once", Duration::from_secs(5), |_| true);
    assert!(!first.connected, "the first event is the status as it is: not connected yet");
    alice.connect(url, token);
    (alice, watch)
}

#[test]
fn the_watch_pushes_pause_resume_a_delivered_version_and_going_offline() {
    let server_dir = tempfile::tempdir().unwrap();
    let server = Server::start(server_dir.path());
    let (ws, tokens) = server.workspace(&["alice"]);
    let proxy = Proxy::start(server.addr, 1);
    proxy.faults(false);
    let (alice, watch) = watched_client(&proxy.url, &tokens[0]);
    let status = |what: &str, wanted: &dyn Fn(&SyncStatus) -> bool| watch.until(what, Duration::from_secs(10), wanted);

    status("connected and synced", &|s| s.connected && s.state == inkstone_api::api::dto::SyncState::Synced);
    alice.ok("sync.pause", json!({}));
    status("paused", &|s| s.paused);
    alice.ok("sync.resume", json!({}));
    status("resumed", &|s| !s.paused);

    // The delivery thread sends the version at once; the watch shows it on its way and
    // then finalized, read only because the outbox's commits moved.
    let project = alice.new_project("推送", "一\n");
    alice.ok("version.create", json!({"projectId": project}));
    status("the version's job", &|s| !s.jobs.is_empty());
    status("the version delivered", &|s| s.pending == 0 && s.jobs.iter().all(|j| j.state == inkstone_api::api::dto::JobState::Finalized));
    assert_eq!(server.versions(&ws).len(), 1);

    // The server goes out of reach: the next cycle's health is pushed, no commit needed.
    proxy.faults(true);
    let _ = alice.call("sync.pull", json!({}));
    status("offline", &|s| s.offline);
    proxy.faults(false);
    let _ = alice.call("sync.pull", json!({}));
    let mut last = status("back online", &|s| !s.offline && s.state == inkstone_api::api::dto::SyncState::Synced);

    alice.engine.sync_runtime().close_watches();
    let mut watch = watch;
    let answer = watch.thread.take().unwrap().join().unwrap().expect("a closed watch answers its last status");
    // A cycle begun while the proxy faulted may end after the one that came back, and
    // its health is pushed too: the answer is whatever was pushed last.
    while let Ok(later) = watch.events.try_recv() {
        last = later;
    }
    assert_eq!(answer, serde_json::to_value(&last).unwrap(), "a closed watch answers the last status it pushed");
}

#[test]
fn an_unchanged_status_is_not_sent_again_and_a_gone_listener_ends_the_watch() {
    let alice = Client::new("Alice");
    let (sender, events) = mpsc::channel();
    let engine = Arc::clone(&alice.engine);
    let thread = std::thread::spawn(move || {
        engine.call_stream_while("sync.watch", json!({}), &mut |event| {
            let StreamEvent::SyncStatus(status) = event else { panic!("sync.watch sends statuses only") };
            sender.send(*status).is_ok()
        })
    });
    let first = events.recv_timeout(Duration::from_secs(5)).expect("the status at once");
    assert!(!first.connected);
    // A template is no part of the status: its commit sends nothing.
    alice.ok("template.create", json!({"name": "周报", "sourceTemplate": "## 本周\n"}));
    assert!(events.recv_timeout(Duration::from_millis(500)).is_err(), "a commit that changes nothing shown sends nothing");
    // A project saved (here: made) moves the local-change marker: the other windows
    // read their projects again on that push, not at a timer.
    let project = alice.new_project("本地", "一\n");
    let saved = events.recv_timeout(Duration::from_secs(5)).expect("a saved project moves the local-change marker");
    assert!(saved.local_changes > first.local_changes, "{} then {}", first.local_changes, saved.local_changes);
    assert!(first.last_local_change.is_none(), "no project written yet: {:?}", first.last_local_change);
    // It names the project written and its revision: an editor that just stored that
    // revision knows the push is its own save and reads nothing.
    let mut saved = saved;
    while saved.last_local_change.is_none() {
        saved = events.recv_timeout(Duration::from_secs(5)).expect("the project's own push");
    }
    let revision = alice.ok("project.get", json!({"projectId": project}))["revision"].as_u64().unwrap();
    assert_eq!(saved.last_local_change, Some(LocalChange { project_id: project.clone(), revision }));
    let updated = alice.ok("project.update", json!({"projectId": project, "baseRevision": revision, "source": "一\n二\n"}));
    let mut pushed = events.recv_timeout(Duration::from_secs(5)).expect("the save is pushed");
    while pushed.last_local_change.as_ref().map(|c| c.revision) != updated["revision"].as_u64() {
        pushed = events.recv_timeout(Duration::from_secs(5)).expect("the save's revision is pushed");
    }
    assert_eq!(pushed.last_local_change.as_ref().unwrap().project_id, project);
    let saved = pushed;
    let mut after = saved.clone();
    // A version moves it too, and is counted (a project with versions not sent anywhere yet).
    alice.ok("version.create", json!({"projectId": project}));
    while after.local_only_versions == 0 {
        after = events.recv_timeout(Duration::from_secs(5)).expect("the new local-only version is pushed");
    }
    assert_eq!(after.local_only_versions, 1);
    assert!(after.local_changes > saved.local_changes);
    while events.recv_timeout(Duration::from_millis(300)).is_ok() {}
    // The listener leaves: the next send finds nobody and the watch ends by itself.
    drop(events);
    alice.ok("version.create", json!({"projectId": project}));
    let answer = thread.join().unwrap().expect("a watch whose listener left answers its last status");
    assert_eq!(answer["localOnlyVersions"], 2);
}

#[test]
fn bad_parameters_are_refused_before_anything_is_sent() {
    let alice = Client::new("Alice");
    let mut sent = 0;
    let error = alice.engine.call_stream_while("sync.watch", json!({"every": 5}), &mut |_| {
        sent += 1;
        true
    });
    let error = error.expect_err("an unknown parameter is refused");
    assert_eq!(error.code, ErrorCode::Validation);
    assert_eq!(sent, 0);
    // A watch on a closing engine ends at once with the status it read.
    alice.engine.sync_runtime().close_watches();
    let answer = alice.engine.call_stream_while("sync.watch", json!({}), &mut |_| true).expect("a closed engine's watch ends");
    assert_eq!(answer["connected"], false);
}

/// A cycle begun on the old connection that ends after a reconnect does not put its
/// health over the reconnect's: the pull is held mid-flight on the old route, the
/// person reconnects through another, and only then does the old route vanish.
#[test]
fn a_cycle_begun_before_a_reconnect_does_not_overwrite_the_newer_health() {
    use std::sync::atomic::Ordering::SeqCst;
    let server_dir = tempfile::tempdir().unwrap();
    let server = Server::start(server_dir.path());
    let (_ws, tokens) = server.workspace(&["alice"]);
    let old_route = Proxy::start(server.addr, 1);
    old_route.faults(false);
    let new_route = Proxy::start(server.addr, 2);
    new_route.faults(false);
    // No delivery thread: the test runs every cycle itself.
    let alice = Client::new("Alice");
    alice.connect(&old_route.url, &tokens[0]);

    old_route.hold(true);
    let engine = Arc::clone(&alice.engine);
    let stale = std::thread::spawn(move || engine.call("sync.pull", json!({})));
    until("the pull held on the old route", Duration::from_secs(10), || old_route.held.load(SeqCst) >= 1);
    alice.connect(&new_route.url, &tokens[0]);
    let reconnected = alice.ok("sync.status", json!({}));
    assert_eq!((reconnected["offline"].clone(), reconnected["lastError"].clone()), (json!(false), json!(null)));

    // The old route closes the held request unanswered: that cycle ends offline, last.
    old_route.release();
    let ran = stale.join().unwrap().expect("an unreachable server is a report, not an error");
    assert!(!ran["error"].is_null(), "the stale cycle itself saw the server vanish: {ran}");
    let after = alice.ok("sync.status", json!({}));
    assert_eq!(
        (after["offline"].clone(), after["lastError"].clone(), after["state"].clone()),
        (json!(false), json!(null), json!("synced")),
        "the older cycle's health does not overwrite the reconnect's: {after}"
    );
    // The next cycle, begun after the reconnect, is applied as usual.
    new_route.hold(true);
    let engine = Arc::clone(&alice.engine);
    let failing = std::thread::spawn(move || engine.call("sync.pull", json!({})));
    until("the pull held on the new route", Duration::from_secs(10), || new_route.held.load(SeqCst) >= 1);
    new_route.release();
    failing.join().unwrap().unwrap();
    assert_eq!(alice.ok("sync.status", json!({}))["offline"], true, "a newer cycle's health is shown");
}

#[test]
fn every_status_says_how_far_it_is_so_a_window_can_tell_an_older_answer_from_a_newer_push() {
    let alice = Client::new("Alice");
    let (sender, events) = mpsc::channel();
    let engine = Arc::clone(&alice.engine);
    let thread = std::thread::spawn(move || {
        engine.call_stream_while("sync.watch", json!({}), &mut |event| {
            let StreamEvent::SyncStatus(status) = event else { panic!("sync.watch sends statuses only") };
            sender.send(*status).is_ok()
        })
    });
    let first = events.recv_timeout(Duration::from_secs(5)).expect("the status at once");
    // A read begun now is no further than what the watch pushes after the next commit.
    let read_before = alice.ok("sync.status", json!({}))["asOf"].as_u64().expect("asOf is a count");
    assert!(read_before >= first.as_of, "{read_before} after {}", first.as_of);
    let project = alice.new_project("先后", "一\n");
    let mut pushed = events.recv_timeout(Duration::from_secs(5)).expect("the new project is pushed");
    while pushed.last_local_change.is_none() {
        pushed = events.recv_timeout(Duration::from_secs(5)).expect("the project's own push");
    }
    assert!(pushed.as_of > read_before, "the push after a commit is further than the read before it: {} vs {read_before}", pushed.as_of);
    // Every later push and every later read is at least as far.
    alice.ok("version.create", json!({"projectId": project}));
    let mut later = pushed.clone();
    while later.local_only_versions == 0 {
        let next = events.recv_timeout(Duration::from_secs(5)).expect("the version is pushed");
        assert!(next.as_of >= later.as_of, "pushes never go back: {} after {}", next.as_of, later.as_of);
        later = next;
    }
    let read_after = alice.ok("sync.status", json!({}))["asOf"].as_u64().unwrap();
    assert!(read_after >= later.as_of, "a read after a push is at least as far: {read_after} vs {}", later.as_of);
    drop(events);
    alice.ok("version.create", json!({"projectId": project}));
    thread.join().unwrap().expect("the watch ends once its listener left");
}
