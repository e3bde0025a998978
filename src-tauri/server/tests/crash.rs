//! Kill -9 of the server at random points while clients push, then a restart on the
//! same data: on the embedded store (one process on its data folder) and on PostgreSQL
//! (two processes on one database, one of them killed each time). Afterwards every
//! acknowledged version is on the server exactly once, with the number and cursor it
//! was acknowledged with; numbers and cursors have no gaps; nothing unacknowledged is
//! there (every client retries an unanswered push with the same dedupe key until it
//! gets an answer).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::{BTreeMap, HashSet};
use std::io::{BufRead, BufReader};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use common::{Rng, Store};
use reqwest::{Client, StatusCode};
use serde_json::{json, Value};

on_both_storages!(kill_9_during_pushes_loses_and_duplicates_nothing);

const BIN: &str = env!("CARGO_BIN_EXE_inkstone-server");

struct Process {
    child: Child,
    _stdout: BufReader<ChildStdout>,
    url: String,
}

fn spawn(store: &Store) -> Process {
    let mut child = Command::new(BIN)
        .args(store.args())
        .args(["serve", "--addr", "127.0.0.1:0", "--rate", "1000000", "--burst", "1000000"])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let url = line.trim().strip_prefix("INKSTONE_SERVER_URL=").unwrap_or_else(|| panic!("the server did not start: {line:?}")).to_owned();
    Process { child, _stdout: stdout, url }
}

/// `workspace create` through the binary: (workspace id, owner token).
fn create_workspace(store: &Store) -> (String, String) {
    let output = Command::new(BIN).args(store.args()).args(["workspace", "create", "团队"]).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let text = String::from_utf8(output.stdout).unwrap();
    let field = |prefix: &str| text.lines().find_map(|l| l.strip_prefix(prefix)).unwrap().split_whitespace().next().unwrap().to_owned();
    (field("workspace "), field("token "))
}

fn version(client_id: &str, text: &str) -> Value {
    let hash = format!("sha256:{}", "b".repeat(64));
    json!({"clientId": client_id, "title": "标题", "source": text, "author": "amy", "message": null, "contentHash": hash, "createdAt": "2026-11-23T00:00:00Z"})
}

/// One client: pushes of 1–3 versions to two projects until `stop` (and at least
/// `min_pushes`); a quarter of its requests time out after 1–20 ms. An unanswered push
/// (connection reset, refused, timed out, 5xx, in flight) is
/// sent again, same key and body, to whichever server is up; a stale base is pushed
/// again on the server's head with a new key. Returns (project, client id, number,
/// cursor) of everything acknowledged, and how many pushes went unanswered at first.
async fn client(c: usize, urls: Arc<RwLock<Vec<String>>>, token: String, seed: u64, stop: Arc<AtomicBool>, min_pushes: usize) -> (Vec<(String, String, u64, u64)>, usize) {
    let http = Client::builder().timeout(Duration::from_secs(20)).build().unwrap();
    let mut rng = Rng((seed ^ (c as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15)) | 1);
    let mut bases: BTreeMap<&str, u64> = BTreeMap::from([("prj_a", 0), ("prj_b", 0)]);
    let mut acked = Vec::new();
    let mut attempt = 0;
    let mut interrupted = 0;
    let mut i = 0;
    while i < min_pushes || !stop.load(Ordering::SeqCst) {
        let project = ["prj_a", "prj_b"][(rng.next() % 2) as usize];
        let versions: Vec<Value> = (0..1 + rng.next() % 3).map(|j| version(&format!("c{c}-{i}-{j}"), &format!("客户 {c} 第 {i} 次 {j}"))).collect();
        attempt += 1;
        let mut key = format!("c{c}-a{attempt}");
        let mut body = json!({"base": bases[project], "versions": versions});
        let mut unanswered = 0;
        loop {
            let url = {
                let urls = urls.read().unwrap();
                urls[(rng.next() % urls.len() as u64) as usize].clone()
            };
            let mut request = http.post(format!("{url}/v1/projects/{project}/push")).bearer_auth(&token).header("Idempotency-Key", &key).json(&body);
            if rng.next().is_multiple_of(4) {
                // An impatient client: it may give up after the push committed, so its
                // answer is lost and only the dedupe key can tell the retry apart.
                request = request.timeout(Duration::from_millis(1 + rng.next() % 20));
            }
            let sent = request.send().await;
            let (status, result) = match sent {
                Ok(response) => {
                    let status = response.status();
                    match response.json::<Value>().await {
                        Ok(value) => (status, value),
                        Err(_) => (StatusCode::BAD_GATEWAY, Value::Null),
                    }
                }
                Err(_) => (StatusCode::BAD_GATEWAY, Value::Null),
            };
            if status == StatusCode::CREATED || status == StatusCode::OK {
                bases.insert(project, result["head"].as_u64().unwrap());
                for v in result["versions"].as_array().unwrap() {
                    acked.push((project.to_owned(), v["clientId"].as_str().unwrap().to_owned(), v["number"].as_u64().unwrap(), v["cursor"].as_u64().unwrap()));
                }
                break;
            }
            if status == StatusCode::CONFLICT && result["code"] == "STALE_BASE" {
                bases.insert(project, result["stale"]["head"].as_u64().unwrap());
                attempt += 1;
                key = format!("c{c}-a{attempt}");
                body = json!({"base": bases[project], "versions": versions});
                continue;
            }
            let retriable = status.is_server_error() || (status == StatusCode::CONFLICT && result["code"] == "IN_FLIGHT");
            assert!(retriable, "client {c}: unexpected {status} {result}");
            unanswered += 1;
            assert!(unanswered < 2_000, "client {c}: no answer for key {key} after {unanswered} tries");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        if unanswered > 0 {
            interrupted += 1;
        }
        i += 1;
    }
    (acked, interrupted)
}

fn kill_9_during_pushes_loses_and_duplicates_nothing(store: Store) {
    let seed = std::env::var("INKSTONE_CRASH_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0xdead_u64);
    eprintln!("crash: seed {seed}");
    let (workspace_id, token) = create_workspace(&store);
    let processes = if store.is_pg() { 2 } else { 1 };
    let mut running: Vec<Process> = (0..processes).map(|_| spawn(&store)).collect();
    let urls = Arc::new(RwLock::new(running.iter().map(|p| p.url.clone()).collect::<Vec<_>>()));
    let stop = Arc::new(AtomicBool::new(false));
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let clients: Vec<_> = (0..3).map(|c| runtime.spawn(client(c, urls.clone(), token.clone(), seed, stop.clone(), 10))).collect();

    // Kill -9 at random points while the clients push, then restart on the same data.
    let mut rng = Rng(seed | 1);
    let kills = 6;
    for _ in 0..kills {
        std::thread::sleep(Duration::from_millis(50 + rng.next() % 400));
        let victim = (rng.next() % running.len() as u64) as usize;
        running[victim].child.kill().unwrap(); // SIGKILL
        running[victim].child.wait().unwrap();
        if processes == 1 {
            // Nothing serves until the restart: the clients keep retrying.
            std::thread::sleep(Duration::from_millis(rng.next() % 200));
        }
        running[victim] = spawn(&store);
        *urls.write().unwrap() = running.iter().map(|p| p.url.clone()).collect();
    }
    stop.store(true, Ordering::SeqCst);
    let mut acked = Vec::new();
    let mut interrupted = 0;
    for task in clients {
        let (a, i) = runtime.block_on(task).unwrap();
        acked.extend(a);
        interrupted += i;
    }
    assert!(interrupted > 0, "no push was cut off");
    drop(runtime);
    for mut p in running {
        p.child.kill().unwrap();
        p.child.wait().unwrap();
    }

    // The history, read straight from the store.
    let storage = store.open();
    let mut all = Vec::new();
    let mut cursor = 0;
    loop {
        let page = storage.changes(&workspace_id, cursor, 500).unwrap();
        all.extend(page.versions);
        cursor = page.cursor;
        if !page.more {
            break;
        }
    }
    assert!(acked.len() >= 30, "the clients pushed too little to mean anything: {}", acked.len());
    let cursors: Vec<u64> = all.iter().map(|v| v.cursor).collect();
    assert_eq!(cursors, (1..=all.len() as u64).collect::<Vec<_>>(), "change cursors without gaps or duplicates");
    let mut by_project: BTreeMap<&str, Vec<u32>> = BTreeMap::new();
    for v in &all {
        by_project.entry(&v.project_id).or_default().push(v.number);
    }
    for (project, numbers) in &by_project {
        assert_eq!(numbers, &(1..=numbers.len() as u32).collect::<Vec<_>>(), "{project}: numbers without gaps or duplicates");
        assert_eq!(storage.project(&workspace_id, project).unwrap().head, numbers.len() as u32);
    }
    let ids: HashSet<&str> = all.iter().map(|v| v.client_id.as_str()).collect();
    assert_eq!(ids.len(), all.len(), "a version is on the server twice");
    let on_server: BTreeMap<&str, (&str, u64, u64)> = all.iter().map(|v| (v.client_id.as_str(), (v.project_id.as_str(), v.number as u64, v.cursor))).collect();
    assert_eq!(on_server.len(), acked.len(), "exactly the acknowledged versions are on the server");
    for (project, client_id, number, cursor) in &acked {
        assert_eq!(on_server.get(client_id.as_str()), Some(&(project.as_str(), *number, *cursor)), "{client_id} as acknowledged");
    }
    eprintln!("crash: {kills} kills, {interrupted} pushes cut off and retried, {} versions acknowledged and present once", acked.len());
}
