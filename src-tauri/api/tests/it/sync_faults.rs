//! Faults: three clients pushing at once through a seeded faulty proxy keep every
//! version exactly once (a history checker says so), and kill -9 of the client during
//! pushes loses and duplicates nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use inkstone_api::llm::keychain::{MemoryKeychain, SecretStore};
use inkstone_api::outbox::JobState;
use inkstone_api::Engine;
use inkstone_test_support::Rng;
use serde_json::json;

use super::sync::*;

/// Settles every client: no faults, cycles until every job is finished and every
/// open conflict resolved (a client keeps its own side, merging when it can).
pub fn settle(run: &str, clients: &[&Client]) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let mut busy = false;
        for client in clients {
            client.engine.sync_runtime().run(client.engine.kernel(), inkstone_api::sync::cycle::What::Both).unwrap();
            for conflict in client.ok("sync.conflicts", json!({}))["conflicts"].as_array().unwrap() {
                let choice = if conflict.get("merged").is_some() { "merged" } else { "mine" };
                client.ok("sync.resolve", json!({"conflictId": conflict["id"], "choice": choice}));
                busy = true;
            }
            busy |= client.jobs().iter().any(|j| !matches!(j.state, JobState::Finalized | JobState::Superseded { .. }));
        }
        if !busy {
            // One more pull each, so everyone holds everything.
            for client in clients {
                client.engine.sync_runtime().run(client.engine.kernel(), inkstone_api::sync::cycle::What::Pull).unwrap();
            }
            return;
        }
        if Instant::now() >= deadline {
            for client in clients {
                let stuck: Vec<String> = client
                    .jobs()
                    .iter()
                    .filter(|j| !matches!(j.state, JobState::Finalized | JobState::Superseded { .. }))
                    .map(|j| format!("{} v{} {:?} {:?}", j.project_id, j.version_number, j.state, j.last_error))
                    .collect();
                eprintln!("{}: {stuck:?}", client.name);
            }
            panic!("{run}: the clients did not settle");
        }
    }
}

fn fault_run(seed: u64) -> BTreeMap<&'static str, u32> {
    let run = format!("run {seed} (replay with INKSTONE_SYNC_FAULT_SEED={seed})");
    let server_dir = tempfile::tempdir().unwrap();
    let server = Server::start(server_dir.path());
    let (ws, tokens) = server.workspace(&["a", "b", "c"]);
    let proxy = Proxy::start(server.addr, seed);
    let clients: Vec<Client> = ["A", "B", "C"].iter().map(|n| Client::new(n)).collect();
    for (client, token) in clients.iter().zip(&tokens) {
        // Connecting goes through the faults too: try until the server answers.
        let mut tries = 0;
        while client.call("sync.connect", json!({"serverUrl": proxy.url, "token": token})).is_err() {
            tries += 1;
            assert!(tries < 50, "{run}: cannot connect");
        }
    }
    // A shared project everyone edits (conflicts) and one of each client's own.
    let shared = clients[0].new_project("共享", "一\n二\n三\n四\n五\n六\n七\n八\n");
    clients[0].ok("version.create", json!({"projectId": shared}));
    let mut tries = 0;
    while clients[0].ok("sync.push", json!({}))["status"]["pending"] != 0 {
        tries += 1;
        assert!(tries < 100, "{run}: the shared project did not reach the server");
    }
    for client in &clients[1..] {
        while !client.ok("project.list", json!({}))["projects"].as_array().unwrap().iter().any(|p| p["id"] == shared.as_str()) {
            client.call("sync.pull", json!({})).unwrap();
        }
    }
    std::thread::scope(|scope| {
        for (i, client) in clients.iter().enumerate() {
            let shared = shared.clone();
            let run = run.clone();
            scope.spawn(move || {
                let mut rng = Rng::new(seed ^ ((i as u64 + 1) * 0x51));
                let own = client.new_project(&format!("{} 的稿", client.name), "起\n");
                for step in 0..(3 + rng.below(4)) {
                    let project = if rng.below(3) == 0 { &shared } else { &own };
                    // One to three versions between cycles: a backlog goes in batches.
                    for again in 0..(1 + rng.below(3)) {
                        let current = client.ok("project.get", json!({"projectId": project}));
                        let mut lines: Vec<String> = current["source"].as_str().unwrap().lines().map(str::to_owned).collect();
                        let at = rng.below(lines.len() as u64 + 1) as usize;
                        lines.insert(at.min(lines.len()), format!("{}{step}.{again}", client.name));
                        client.save(project, &(lines.join("\n") + "\n"));
                    }
                    for _ in 0..(1 + rng.below(2)) {
                        client.engine.sync_runtime().run(client.engine.kernel(), inkstone_api::sync::cycle::What::Both).unwrap_or_else(|e| panic!("{run}: {e:?}"));
                    }
                }
            });
        }
    });
    proxy.faults(false);
    let refs: Vec<&Client> = clients.iter().collect();
    settle(&run, &refs);
    check_history(&run, &server.versions(&ws), &refs);
    let mut counts = proxy.counts.lock().unwrap().clone();
    // Pushes that carried more than one version.
    counts.insert("batchedPushes", clients.iter().map(|c| c.jobs().iter().filter(|j| !j.batch.is_empty()).count() as u32).sum());
    counts
}

/// `INKSTONE_SYNC_FAULT_RUNS` (default 4) seeded runs; `INKSTONE_SYNC_FAULT_SEED`
/// replays one.
#[test]
fn concurrent_pushes_through_a_faulty_network_keep_every_version_exactly_once() {
    let runs: u64 = std::env::var("INKSTONE_SYNC_FAULT_RUNS").ok().and_then(|s| s.parse().ok()).unwrap_or(4);
    let seeds: Vec<u64> = match std::env::var("INKSTONE_SYNC_FAULT_SEED").ok().and_then(|s| s.parse().ok()) {
        Some(seed) => vec![seed],
        None => (1..=runs).collect(),
    };
    let started = Instant::now();
    let mut totals: BTreeMap<&'static str, u32> = BTreeMap::new();
    for seed in &seeds {
        for (fault, n) in fault_run(*seed) {
            *totals.entry(fault).or_insert(0) += n;
        }
    }
    eprintln!("sync faults: {} runs in {:.1} s, connections by fault: {totals:?}", seeds.len(), started.elapsed().as_secs_f64());
    for fault in ["reset", "dropAnswer", "duplicate", "batchedPushes"] {
        assert!(totals.get(fault).copied().unwrap_or(0) > 0, "the runs never injected (or sent) {fault}");
    }
}

// ---------------------------------------------------------------------------------
// kill -9 of the client during pushes.

const KILL_CHILD_DIR: &str = "INKSTONE_SYNC_KILL_CHILD_DIR";

/// The child: a client that saves versions and pushes them, until killed. Its
/// keychain is the parent's (the token comes in the environment, as the OS keychain
/// would hand it over after a restart).
#[test]
fn sync_kill_child() {
    let Ok(dir) = std::env::var(KILL_CHILD_DIR) else { return };
    let url = std::env::var("INKSTONE_SYNC_KILL_URL").unwrap();
    let token = std::env::var("INKSTONE_SYNC_KILL_TOKEN").unwrap();
    let keychain = Arc::new(MemoryKeychain::default());
    let engine = Engine::open(config(Path::new(&dir), "K", &keychain)).unwrap();
    engine.call("sync.connect", json!({"serverUrl": url, "token": token})).unwrap();
    let projects = engine.call("project.list", json!({})).unwrap()["projects"].as_array().unwrap().clone();
    let project = match projects.first() {
        Some(p) => p["id"].as_str().unwrap().to_owned(),
        None => engine.call("project.create", json!({"title": "杀", "source": "0\n"})).unwrap()["id"].as_str().unwrap().to_owned(),
    };
    println!("READY");
    std::io::stdout().flush().unwrap();
    let mut n = 0u64;
    loop {
        // One to three versions per push: kills land in batched pushes too.
        for _ in 0..(n % 3 + 1) {
            n += 1;
            let current = engine.call("project.get", json!({"projectId": project})).unwrap();
            engine
                .call("project.update", json!({"projectId": project, "baseRevision": current["revision"], "source": format!("{}{n}\n", current["source"].as_str().unwrap())}))
                .unwrap();
            engine.call("version.create", json!({"projectId": project})).unwrap();
        }
        let _ = engine.call("sync.push", json!({}));
    }
}

/// `INKSTONE_SYNC_KILLS` (default 5) kills of the client at random moments during
/// pushes; after each, the reopened client finishes its jobs and the history holds.
#[test]
fn killing_the_client_during_pushes_loses_and_duplicates_nothing() {
    if std::env::var(KILL_CHILD_DIR).is_ok() {
        return;
    }
    let kills: u64 = std::env::var("INKSTONE_SYNC_KILLS").ok().and_then(|s| s.parse().ok()).unwrap_or(5);
    let seed: u64 = std::env::var("INKSTONE_SYNC_KILL_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(11);
    let mut rng = Rng::new(seed);
    let server_dir = tempfile::tempdir().unwrap();
    let server = Server::start(server_dir.path());
    let (ws, tokens) = server.workspace(&["k"]);
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let mut batched = false;
    for kill in 0..kills {
        let mut child = std::process::Command::new(&exe)
            .args(["--exact", "sync_faults::sync_kill_child", "--nocapture", "--test-threads=1"])
            .env(KILL_CHILD_DIR, dir.path())
            .env("INKSTONE_SYNC_KILL_URL", &server.url)
            .env("INKSTONE_SYNC_KILL_TOKEN", &tokens[0])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let mut seen = Vec::new();
        let mut byte = [0u8; 1];
        while !String::from_utf8_lossy(&seen).contains("READY\n") {
            assert_eq!(stdout.read(&mut byte).unwrap(), 1, "kill {kill}: the child ended before READY");
            seen.push(byte[0]);
        }
        std::thread::sleep(Duration::from_millis(50 + rng.below(400)));
        child.kill().unwrap(); // SIGKILL on Unix
        child.wait().unwrap();
        drop(stdout);

        let keychain = Arc::new(MemoryKeychain::default());
        let engine = Arc::new(Engine::open(config(dir.path(), "K", &keychain)).unwrap());
        let workspace_id = engine.call("workspace.get", json!({})).unwrap()["id"].as_str().unwrap().to_owned();
        keychain.set(&format!("sync:{workspace_id}"), &inkstone_api::llm::ApiKey::new(tokens[0].as_str())).unwrap();
        let client = Client { engine, dir: tempfile::tempdir().unwrap(), keychain, name: "K".into() };
        let run = format!("kill {kill} (seed {seed})");
        settle(&run, &[&client]);
        check_history(&run, &server.versions(&ws), &[&client]);
        let local: BTreeSet<String> = client.jobs().iter().map(|j| j.version_id.clone()).collect();
        assert_eq!(local.len(), server.versions(&ws).len(), "{run}: every version of the client is on the server once");
        batched |= client.jobs().iter().any(|j| !j.batch.is_empty());
    }
    assert!(server.versions(&ws).len() as u64 > kills, "the child pushed too few versions for the test to mean anything");
    assert!(batched, "no push carried more than one version");
}
