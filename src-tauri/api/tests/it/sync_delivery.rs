//! The delivery thread: a new version goes at once, an acknowledged push is followed
//! by a pull, pause and resume, a restart resumes jobs, backlogs go in batches under
//! the server's body limit; and the token stays in the keychain.

use std::sync::Arc;
use std::time::Duration;

use inkstone_api::llm::keychain::{MemoryKeychain, SecretStore};
use inkstone_api::outbox::JobState;
use inkstone_api::Engine;
use serde_json::json;

use super::sync::*;

#[test]
fn a_new_version_is_delivered_at_once_not_at_the_next_poll() {
    let server_dir = tempfile::tempdir().unwrap();
    let server = Server::start(server_dir.path());
    let (ws, tokens) = server.workspace(&["alice"]);
    let dir = tempfile::tempdir().unwrap();
    let keychain = Arc::new(MemoryKeychain::default());
    let mut cfg = config(dir.path(), "Alice", &keychain);
    // The app's poll is 30 s; a minute here, so only a wake can deliver in time.
    cfg.sync.poll = Duration::from_secs(60);
    let engine = Arc::new(Engine::open(cfg).unwrap());
    engine.start_sync();
    let alice = Client { engine, dir, keychain, name: "Alice".to_owned() };
    alice.connect(&server.url, &tokens[0]);
    until("the connect's own cycle", Duration::from_secs(10), || alice.ok("sync.status", json!({}))["state"] == "synced");
    let project = alice.new_project("立刻", "一\n");
    alice.ok("version.create", json!({"projectId": project}));
    until("the version is delivered without waiting for the poll", Duration::from_secs(10), || server.versions(&ws).len() == 1);
    until("its job is finalized", Duration::from_secs(10), || alice.jobs().iter().all(|j| j.state == JobState::Finalized));
}

/// Once the server acknowledged this client's push, the delivery thread pulls again at
/// once: a colleague's version pushed while Alice's was on its way arrives without
/// waiting for the next poll (a minute here).
#[test]
fn an_acknowledged_push_is_followed_by_a_pull_at_once() {
    let server_dir = tempfile::tempdir().unwrap();
    let server = Server::start(server_dir.path());
    let (_ws, tokens) = server.workspace(&["alice", "bob"]);
    let proxy = Proxy::start(server.addr, 1);
    proxy.faults(false);
    let dir = tempfile::tempdir().unwrap();
    let keychain = Arc::new(MemoryKeychain::default());
    let mut cfg = config(dir.path(), "Alice", &keychain);
    cfg.sync.poll = Duration::from_secs(60);
    let engine = Arc::new(Engine::open(cfg).unwrap());
    engine.start_sync();
    let alice = Client { engine, dir, keychain, name: "Alice".to_owned() };
    alice.connect(&proxy.url, &tokens[0]);
    until("the connect's own cycle", Duration::from_secs(10), || alice.ok("sync.status", json!({}))["state"] == "synced");
    let bob = Client::new("Bob");
    bob.connect(&server.url, &tokens[1]);

    // Alice's push is held on its way; meanwhile Bob's version of another project lands.
    proxy.post_delay_ms.store(800, std::sync::atomic::Ordering::SeqCst);
    let posts = proxy.posts.load(std::sync::atomic::Ordering::SeqCst);
    let mine = alice.new_project("甲的", "一\n");
    alice.ok("version.create", json!({"projectId": mine}));
    until("Alice's push is on its way", Duration::from_secs(10), || proxy.posts.load(std::sync::atomic::Ordering::SeqCst) > posts);
    let theirs = bob.new_project("乙的", "二\n");
    bob.ok("version.create", json!({"projectId": theirs}));
    assert_eq!(bob.ok("sync.push", json!({}))["pushed"], 1);
    until("Alice's push is acknowledged", Duration::from_secs(10), || alice.jobs().iter().all(|j| j.state == JobState::Finalized));
    until("Bob's project reaches Alice without waiting for the poll", Duration::from_secs(5), || alice.call("project.get", json!({"projectId": theirs})).is_ok());
}

#[test]
fn pause_holds_deliveries_and_resume_lets_the_thread_send_them() {
    let server_dir = tempfile::tempdir().unwrap();
    let server = Server::start(server_dir.path());
    let (ws, tokens) = server.workspace(&["alice"]);
    let alice = Client::new("Alice");
    alice.engine.start_sync();
    alice.connect(&server.url, &tokens[0]);
    let project = alice.new_project("暂停", "一\n");
    alice.ok("version.create", json!({"projectId": project}));
    until("the thread delivers the first version", Duration::from_secs(20), || server.versions(&ws).len() == 1);
    let paused = alice.ok("sync.pause", json!({}));
    assert_eq!((paused["paused"].as_bool(), paused["state"].as_str()), (Some(true), Some("paused")));
    alice.save(&project, "一\n二\n");
    let refused = alice.call("sync.push", json!({})).unwrap_err();
    assert_eq!((refused.code, refused.hints[0].id.as_str()), (inkstone_api::ErrorCode::Conflict, "resume_sync"));
    std::thread::sleep(Duration::from_millis(400));
    assert_eq!(server.versions(&ws).len(), 1, "nothing goes while paused");
    assert_eq!(alice.jobs()[1].state, JobState::Pending);
    alice.ok("sync.resume", json!({}));
    until("the thread delivers after resume", Duration::from_secs(20), || server.versions(&ws).len() == 2);
    until("the status says synced", Duration::from_secs(20), || alice.ok("sync.status", json!({}))["state"] == "synced");
}

#[test]
fn a_restart_resumes_jobs_where_they_stopped() {
    let Connected { server_dir: _server_dir, mut server, ws, clients: [mut alice] } = connected(["Alice"]);
    let project = alice.new_project("重启", "一\n");
    alice.ok("version.create", json!({"projectId": project}));
    server.stop();
    alice.save(&project, "一\n二\n");
    alice.ok("sync.push", json!({}));
    // A crash right after a send was marked dispatched: the job was in the air.
    {
        let store = alice.engine.store();
        let mut job = alice.jobs()[0].clone();
        job.state = JobState::Dispatched;
        job.base = Some(0);
        let mut batch = inkstone_api::store::Batch::new();
        batch.put(&job).unwrap();
        store.apply(batch, inkstone_api::store::Durability::Durable).unwrap();
    }
    alice.reopen();
    let server = server.restart();
    let status = alice.ok("sync.status", json!({}));
    assert_eq!(status["pending"], 2);
    let run = alice.ok("sync.push", json!({}));
    assert_eq!(run["pushed"], 2);
    assert_eq!(server.versions(&ws).iter().map(|v| v.number).collect::<Vec<_>>(), [1, 2]);
}

#[test]
fn a_backlog_goes_in_batches_and_a_lost_answer_resends_the_same_push() {
    use std::sync::atomic::Ordering::SeqCst;
    let server_dir = tempfile::tempdir().unwrap();
    let server = Server::start(server_dir.path());
    let (ws, tokens) = server.workspace(&["alice"]);
    let proxy = Proxy::start(server.addr, 0);
    proxy.faults(false);
    let alice = Client::with("Alice", |config| config.sync.max_batch = 4);
    alice.connect(&proxy.url, &tokens[0]);
    let project = alice.new_project("积压", "0\n");
    // Ten versions made offline (paused).
    alice.ok("sync.pause", json!({}));
    for n in 1..=10 {
        alice.save(&project, &format!("{}\n", (0..=n).map(|i| i.to_string()).collect::<Vec<_>>().join("\n")));
    }
    alice.ok("sync.resume", json!({}));
    let jobs = alice.jobs();
    assert_eq!(jobs.len(), 10);
    let posts_before = proxy.posts.load(SeqCst);

    // The first push reaches the server, and its answer is lost.
    proxy.lose_post_answers.store(1, SeqCst);
    let push_only = || alice.engine.sync_runtime().run(alice.engine.kernel(), inkstone_api::sync::cycle::What::Push).unwrap();
    let lost = push_only();
    assert_eq!(lost.pushed, 0, "{lost:?}");
    assert_eq!(server.versions(&ws).len(), 4, "the server took the first four in one push");
    let after_loss = alice.jobs();
    let first_four: Vec<String> = jobs[1..4].iter().map(|j| j.id.clone()).collect();
    assert_eq!(after_loss[0].batch, first_four, "the batch is fixed on the first job");
    for job in &after_loss[..4] {
        assert!(matches!(job.state, JobState::RetryWait { .. }), "{job:?}");
        assert_eq!((job.base, job.attempts), (Some(0), 1));
    }
    for job in &after_loss[4..] {
        assert_eq!((&job.state, job.base, job.batch.len()), (&JobState::Pending, None, 0), "the rest were never sent");
    }

    // The resend is the same push under the same key: the server answers with what it
    // stored, and nothing is there twice. The rest follow in two more pushes.
    let resent = push_only();
    assert_eq!(resent.pushed, 10, "{resent:?}");
    assert_eq!(proxy.posts.load(SeqCst) - posts_before, 4, "ten versions in pushes of 4, 4 and 2, plus the resend");
    let done = alice.jobs();
    assert_eq!(done.iter().map(|j| j.batch.len()).collect::<Vec<_>>(), [3, 0, 0, 0, 3, 0, 0, 0, 1, 0]);
    let on_server = server.versions(&ws);
    assert_eq!(on_server.iter().map(|v| v.number).collect::<Vec<_>>(), (1..=10).collect::<Vec<u32>>());
    for (job, version) in done.iter().zip(&on_server) {
        assert_eq!((job.state.clone(), job.server_number), (JobState::Finalized, Some(version.number)));
        assert_eq!(job.version_id, version.client_id, "the server numbered them in the order they were made");
    }
    assert_eq!(alice.ok("sync.status", json!({}))["pending"], 0);
}

#[test]
fn a_batch_stays_under_the_servers_body_limit() {
    let Connected { server_dir: _server_dir, server, ws, clients: [alice] } = connected(["Alice"]);
    let project = alice.new_project("长稿", "起\n");
    alice.ok("sync.pause", json!({}));
    // Three versions near the longest source (1,000,000 characters, 3 MB in UTF-8
    // each): two fit in one push's 8 MiB, three do not.
    for n in 0..3 {
        let line = format!("第{}稿", ["一", "二", "三"][n]).repeat(50) + "\n";
        let source = line.repeat(990_000 / line.chars().count());
        alice.save(&project, &source);
    }
    alice.ok("sync.resume", json!({}));
    let run = alice.ok("sync.push", json!({}));
    assert_eq!(run["pushed"], 3, "{run}");
    assert_eq!(alice.jobs().iter().map(|j| j.batch.len()).collect::<Vec<_>>(), [1, 0, 0]);
    assert_eq!(server.versions(&ws).len(), 3);
}

#[test]
fn the_token_stays_in_the_keychain_and_plain_http_to_another_machine_needs_confirmation() {
    let server_dir = tempfile::tempdir().unwrap();
    let server = Server::start(server_dir.path());
    let (_ws, tokens) = server.workspace(&["alice"]);
    let alice = Client::new("Alice");
    let refused = alice.call("sync.connect", json!({"serverUrl": "http://192.0.2.10:8787", "token": tokens[0]})).unwrap_err();
    assert_eq!((refused.code, refused.details.as_ref().unwrap()["field"].as_str()), (inkstone_api::ErrorCode::Validation, Some("serverUrl")));
    assert!(refused.hints.iter().any(|h| h.id == "allow_plain_http"));
    assert!(!format!("{refused:?}").contains(&tokens[0][4..]), "the token is in no error");
    assert_eq!(alice.ok("sync.status", json!({}))["state"], "notConnected", "nothing was stored");
    for bad in ["ftp://host", "https://user:pw@host", "host:8787", ""] {
        assert_eq!(alice.call("sync.connect", json!({"serverUrl": bad, "token": tokens[0]})).unwrap_err().code, inkstone_api::ErrorCode::Validation, "{bad}");
    }
    let wrong = alice.call("sync.connect", json!({"serverUrl": server.url, "token": "isk_wrong"})).unwrap_err();
    assert_eq!(wrong.code, inkstone_api::ErrorCode::PermissionDenied);
    let unreachable = alice.call("sync.connect", json!({"serverUrl": "http://127.0.0.1:9", "token": tokens[0]})).unwrap_err();
    assert_eq!(unreachable.code, inkstone_api::ErrorCode::Offline);
    assert_eq!(unreachable.message_id.as_deref(), Some("sync.unreachable"), "the UI says the workspace server, not its own backend, is unreachable");

    alice.connect(&format!("{}/", server.url), &tokens[0]);
    let project = alice.new_project("密", "一\n");
    alice.ok("version.create", json!({"projectId": project}));
    alice.ok("sync.push", json!({}));
    let workspace_id = alice.ok("workspace.get", json!({}))["id"].as_str().unwrap().to_owned();
    assert_eq!(alice.keychain.get(&format!("sync:{workspace_id}")).unwrap().unwrap().expose(), tokens[0]);
    drop(alice.engine.clone());
    // Not one byte of the token in the data dir (sled's files included).
    let secret = &tokens[0][4..];
    for (path, bytes) in inkstone_test_support::read_tree(alice.dir.path()) {
        assert!(!bytes.windows(secret.len()).any(|w| w == secret.as_bytes()), "the token is in {path}");
    }
}
