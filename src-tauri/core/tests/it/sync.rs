//! Team sync end to end: real engines (sled, the real sync transport) against a real
//! `inkstone-server` started in-process on loopback, with its sled store. Push exactly
//! once, offline then online, 409 → conflict → resolve, pull with authors, a pulled
//! head against an edited working copy, pause/resume with the delivery thread, a
//! restart that resumes jobs, the token kept out of the store; then the fault runs
//! (a seeded loopback proxy that drops, delays, duplicates and resets connections,
//! three clients pushing at once, a history checker) and kill -9 of the client.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use inkstone_core::llm::keychain::{MemoryKeychain, SecretStore};
use inkstone_core::outbox::{DeliveryJob, JobState};
use inkstone_core::{Engine, EngineConfig};
use inkstone_server::http::{router, AppState, RateLimit};
use inkstone_server::proto::{Role, ServerVersion};
use inkstone_server::storage::{SledStorage, Storage};
use inkstone_test_support::Rng;
use serde_json::{json, Value};

/// A workspace server on loopback, in-process, on its own sled store.
pub struct Server {
    pub url: String,
    pub addr: SocketAddr,
    pub storage: Arc<SledStorage>,
    runtime: Option<tokio::runtime::Runtime>,
    dir: PathBuf,
}

impl Server {
    pub fn start(dir: &Path) -> Server {
        Server::start_at(dir, "127.0.0.1:0".parse().unwrap())
    }

    fn start_at(dir: &Path, addr: SocketAddr) -> Server {
        Server::serve_at(dir, addr, false)
    }

    /// A server as builds before version origins answered: it lists no features,
    /// returns no origins and refuses a push that carries one (as its
    /// `deny_unknown_fields` did).
    pub fn start_old(dir: &Path) -> Server {
        Server::serve_at(dir, "127.0.0.1:0".parse().unwrap(), true)
    }

    fn serve_at(dir: &Path, addr: SocketAddr, old: bool) -> Server {
        let storage = Arc::new(SledStorage::open(dir).unwrap());
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let state = AppState::new(storage.clone() as Arc<dyn Storage>, RateLimit { per_second: 100_000.0, burst: 100_000.0 });
        let listener = runtime.block_on(tokio::net::TcpListener::bind(addr)).unwrap();
        let addr = listener.local_addr().unwrap();
        let app = if old { router(state).layer(axum::middleware::from_fn(as_old_server)) } else { router(state) };
        runtime.spawn(async move { axum::serve(listener, app).await });
        Server { url: format!("http://{addr}"), addr, storage, runtime: Some(runtime), dir: dir.to_owned() }
    }

    /// Stops serving and closes the store (the port is free again).
    pub fn stop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_timeout(Duration::from_secs(2));
        }
    }

    /// Starts again on the same port and data.
    pub fn restart(self) -> Server {
        let (dir, addr) = (self.dir.clone(), self.addr);
        drop(self);
        // The old runtime's tasks held the store; wait until sled lets go of it.
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match std::panic::catch_unwind(|| Server::start_at(&dir, addr)) {
                Ok(server) => return server,
                Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(50)),
                Err(e) => std::panic::resume_unwind(e),
            }
        }
    }

    /// A workspace and `names.len()` editors; their tokens.
    pub fn workspace(&self, names: &[&str]) -> (String, Vec<String>) {
        let (id, _owner) = self.storage.create_workspace("团队", "owner").unwrap();
        let tokens = names.iter().map(|n| self.storage.invite(&id, n, Role::Editor).unwrap().token).collect();
        (id, tokens)
    }

    /// Every version the server holds in the workspace, in cursor order.
    pub fn versions(&self, workspace_id: &str) -> Vec<ServerVersion> {
        self.storage.changes(workspace_id, 0, 1_000_000).unwrap().versions
    }
}

/// What a server from before version origins did with a request and its answer.
async fn as_old_server(request: axum::extract::Request, next: axum::middleware::Next) -> axum::response::Response {
    use axum::body::{to_bytes, Body};
    use axum::response::IntoResponse;
    let (parts, body) = request.into_parts();
    let bytes = to_bytes(body, usize::MAX).await.unwrap();
    let carries_origin = serde_json::from_slice::<Value>(&bytes).is_ok_and(|v| v["versions"].as_array().is_some_and(|vs| vs.iter().any(|x| x.get("origin").is_some())));
    if parts.method == axum::http::Method::POST && carries_origin {
        let refusal = json!({"code": "VALIDATION", "message": "The push is not valid JSON of the right shape: unknown field `origin`.", "hints": []});
        return (axum::http::StatusCode::BAD_REQUEST, axum::Json(refusal)).into_response();
    }
    let answer = next.run(axum::extract::Request::from_parts(parts, Body::from(bytes))).await;
    let (mut parts, body) = answer.into_parts();
    let bytes = to_bytes(body, usize::MAX).await.unwrap();
    let Ok(mut value) = serde_json::from_slice::<Value>(&bytes) else { return axum::response::Response::from_parts(parts, Body::from(bytes)) };
    fn strip(value: &mut Value) {
        if let Some(object) = value.as_object_mut() {
            object.remove("features");
            object.remove("origin");
            object.values_mut().for_each(strip);
        } else if let Some(array) = value.as_array_mut() {
            array.iter_mut().for_each(strip);
        }
    }
    strip(&mut value);
    parts.headers.remove(axum::http::header::CONTENT_LENGTH);
    axum::response::Response::from_parts(parts, Body::from(serde_json::to_vec(&value).unwrap()))
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A client: an engine with its own data dir, display name and keychain.
pub struct Client {
    pub engine: Arc<Engine>,
    pub dir: tempfile::TempDir,
    pub keychain: Arc<MemoryKeychain>,
    pub name: String,
}

/// A test engine (fake clock) with real ULIDs: ids are unique across clients and
/// across restarts, as the dedupe keys and the server's client ids need (sequential
/// test ids would repeat in every data dir).
pub fn config(dir: &Path, name: &str, keychain: &Arc<MemoryKeychain>) -> EngineConfig {
    let mut config = EngineConfig::for_tests(dir).with_display_name(name).with_secrets(keychain.clone() as Arc<dyn SecretStore>);
    config.ids = Arc::new(inkstone_core::config::UlidIds::default());
    config
}

impl Client {
    pub fn new(name: &str) -> Client {
        Client::with(name, |_| {})
    }

    /// A client whose test config `change` adjusts first.
    pub fn with(name: &str, change: impl FnOnce(&mut EngineConfig)) -> Client {
        let dir = tempfile::tempdir().unwrap();
        let keychain = Arc::new(MemoryKeychain::default());
        let mut config = config(dir.path(), name, &keychain);
        change(&mut config);
        let engine = Arc::new(Engine::open(config).unwrap());
        Client { engine, dir, keychain, name: name.to_owned() }
    }

    pub fn call(&self, method: &str, params: Value) -> Result<Value, inkstone_core::ApiError> {
        self.engine.call(method, params)
    }

    pub fn ok(&self, method: &str, params: Value) -> Value {
        self.call(method, params).unwrap_or_else(|e| panic!("{} {method}: {e:?}", self.name))
    }

    pub fn connect(&self, url: &str, token: &str) -> Value {
        // The person gives their name as they connect (else a name never chosen would
        // become their member name).
        self.ok("sync.connect", json!({"serverUrl": url, "token": token, "displayName": self.name}))
    }

    /// Closes the engine and opens the same data dir again (same keychain).
    pub fn reopen(&mut self) {
        let engine = std::mem::replace(&mut self.engine, Arc::new(Engine::open(config(tempfile::tempdir().unwrap().path(), "tmp", &self.keychain)).unwrap()));
        drop(engine);
        self.engine = Arc::new(Engine::open(config(self.dir.path(), &self.name, &self.keychain)).unwrap());
    }

    pub fn jobs(&self) -> Vec<DeliveryJob> {
        self.engine.store().scan::<DeliveryJob>(b"").unwrap()
    }

    pub fn new_project(&self, title: &str, source: &str) -> String {
        self.ok("project.create", json!({"title": title, "source": source}))["id"].as_str().unwrap().to_owned()
    }

    /// Sets the working copy's source and saves a version; returns its number.
    pub fn save(&self, project: &str, source: &str) -> u64 {
        let revision = self.ok("project.get", json!({"projectId": project}))["revision"].clone();
        self.ok("project.update", json!({"projectId": project, "baseRevision": revision, "source": source}));
        self.ok("version.create", json!({"projectId": project}))["number"].as_u64().unwrap()
    }

    pub fn versions(&self, project: &str) -> Vec<Value> {
        let mut list = self.ok("version.list", json!({"projectId": project}))["versions"].as_array().unwrap().clone();
        list.reverse();
        list.iter().map(|v| self.ok("version.get", json!({"projectId": project, "number": v["number"]}))).collect()
    }
}

/// The start most sync tests share: a server on a fresh folder (dropped after the
/// server, as the binding order below makes it), a workspace whose editors are the
/// clients' names in lower case, and each client connected with its token, in order.
pub struct Connected<const N: usize> {
    pub server_dir: tempfile::TempDir,
    pub server: Server,
    pub ws: String,
    pub clients: [Client; N],
}

pub fn connected<const N: usize>(names: [&str; N]) -> Connected<N> {
    let server_dir = tempfile::tempdir().unwrap();
    let server = Server::start(server_dir.path());
    let members: Vec<String> = names.iter().map(|n| n.to_lowercase()).collect();
    let (ws, tokens) = server.workspace(&members.iter().map(String::as_str).collect::<Vec<_>>());
    let clients = names.map(Client::new);
    for (client, token) in clients.iter().zip(&tokens) {
        client.connect(&server.url, token);
    }
    Connected { server_dir, server, ws, clients }
}

fn until(what: &str, timeout: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_version_reaches_the_server_exactly_once_and_colleagues_pull_it_with_its_author() {
    let server_dir = tempfile::tempdir().unwrap();
    let server = Server::start(server_dir.path());
    let (ws, tokens) = server.workspace(&["alice", "bob"]);
    let alice = Client::new("Alice");
    let bob = Client::new("Bob");
    let status = alice.connect(&server.url, &tokens[0]);
    assert_eq!((status["state"].as_str(), status["memberName"].as_str(), status["role"].as_str()), (Some("synced"), Some("alice"), Some("editor")));
    assert_eq!(status["tokenFingerprint"].as_str().unwrap(), format!("…{}", &tokens[0][tokens[0].len() - 4..]));

    let project = alice.new_project("春", "第一行\n第二行\n");
    alice.save(&project, "第一行\n第二行\n第三行\n");
    assert_eq!(alice.ok("sync.status", json!({}))["state"], "pending");
    let run = alice.ok("sync.push", json!({}));
    assert_eq!((run["pushed"].as_u64(), run["status"]["state"].as_str()), (Some(1), Some("synced")));
    // Pushing again sends nothing; the server holds the version once.
    assert_eq!(alice.ok("sync.push", json!({}))["pushed"], 0);
    let on_server = server.versions(&ws);
    assert_eq!(on_server.len(), 1);
    assert_eq!(
        (on_server[0].number, on_server[0].author.as_str(), on_server[0].pushed_by.as_str()),
        (1, "alice", "alice"),
        "the author is the member who pushed, not the name the client claims"
    );
    let job = &alice.jobs()[0];
    assert_eq!((&job.state, job.server_number, job.base), (&JobState::Finalized, Some(1), Some(0)));

    bob.connect(&server.url, &tokens[1]);
    let pulled = bob.ok("sync.pull", json!({}));
    assert_eq!(pulled["pulled"], 1);
    let theirs = bob.versions(&project);
    assert_eq!(theirs.len(), 1);
    assert_eq!((theirs[0]["author"].as_str(), theirs[0]["origin"]["type"].as_str(), theirs[0]["origin"]["pushedBy"].as_str()), (Some("alice"), Some("pulled"), Some("alice")));
    assert_eq!(theirs[0]["source"], "第一行\n第二行\n第三行\n");
    let working = bob.ok("project.get", json!({"projectId": project}));
    assert_eq!((working["source"].as_str(), working["title"].as_str()), (Some("第一行\n第二行\n第三行\n"), Some("春")));
    // A pulled version is never delivered back.
    assert!(bob.jobs().is_empty());
    assert_eq!(bob.ok("sync.pull", json!({}))["pulled"], 0, "the cursor moved on");

    // Bob's own version goes on top, and Alice's pull follows her clean working copy.
    bob.save(&project, "第一行\n第二行\n第三行\n第四行\n");
    assert_eq!(bob.ok("sync.push", json!({}))["pushed"], 1);
    assert_eq!(alice.ok("sync.pull", json!({}))["pulled"], 1);
    let mine = alice.versions(&project);
    assert_eq!(mine.iter().map(|v| v["author"].as_str().unwrap()).collect::<Vec<_>>(), ["Alice", "bob"]);
    assert_eq!(alice.ok("project.get", json!({"projectId": project}))["source"], "第一行\n第二行\n第三行\n第四行\n");
    assert_eq!(server.versions(&ws).iter().map(|v| v.number).collect::<Vec<_>>(), [1, 2]);
}

#[test]
fn offline_jobs_wait_and_go_when_the_server_is_back() {
    let Connected { server_dir: _server_dir, mut server, ws, clients: [alice] } = connected(["Alice"]);
    let project = alice.new_project("离线", "一\n");
    server.stop();
    alice.save(&project, "一\n二\n");
    let run = alice.ok("sync.push", json!({}));
    assert_eq!((run["pushed"].as_u64(), run["status"]["state"].as_str(), run["status"]["pending"].as_u64()), (Some(0), Some("offline"), Some(1)));
    // The UI words the failure from its code.
    assert_eq!(run["status"]["lastErrorCode"], "UNREACHABLE");
    let job = &alice.jobs()[0];
    assert!(matches!(job.state, JobState::RetryWait { .. }), "{:?}", job.state);
    assert!(job.last_error.as_deref().unwrap().contains("could not be reached"));
    alice.save(&project, "一\n二\n三\n");
    alice.ok("sync.push", json!({}));
    let server = server.restart();
    let run = alice.ok("sync.push", json!({}));
    assert_eq!((run["pushed"].as_u64(), run["status"]["state"].as_str()), (Some(2), Some("synced")));
    assert!(run["status"].get("lastErrorCode").is_none() && run["status"].get("lastError").is_none(), "{}", run["status"]);
    let on_server = server.versions(&ws);
    assert_eq!(on_server.iter().map(|v| (v.number, v.source.as_str())).collect::<Vec<_>>(), [(1, "一\n二\n"), (2, "一\n二\n三\n")]);
}

/// Alice and Bob edit the same project; Bob's push on a stale base is a conflict
/// with both sides and the base; the clean merge resolves it as a new version.
#[test]
fn a_stale_push_becomes_a_conflict_and_its_resolution_is_pushed_on_the_new_base() {
    let Connected { server_dir: _server_dir, server, ws, clients: [alice, bob] } = connected(["Alice", "Bob"]);
    let base = "甲\n乙\n丙\n丁\n戊\n己\n";
    let project = alice.new_project("合", base);
    alice.ok("version.create", json!({"projectId": project}));
    alice.ok("sync.push", json!({}));
    bob.ok("sync.pull", json!({}));

    alice.save(&project, "甲改\n乙\n丙\n丁\n戊\n己\n");
    bob.save(&project, "甲\n乙\n丙\n丁\n戊\n己改\n");
    assert_eq!(alice.ok("sync.push", json!({}))["pushed"], 1);
    let run = bob.ok("sync.push", json!({}));
    assert_eq!((run["pushed"].as_u64(), run["newConflicts"].as_u64(), run["status"]["state"].as_str()), (Some(0), Some(1), Some("conflict")));
    // Nothing was overwritten: the server kept Alice's head, Bob keeps his version and
    // working copy, and Alice's version is in Bob's history with her name.
    assert_eq!(server.versions(&ws).len(), 2);
    assert_eq!(bob.ok("project.get", json!({"projectId": project}))["source"], "甲\n乙\n丙\n丁\n戊\n己改\n");
    let history = bob.versions(&project);
    assert_eq!(
        history.iter().map(|v| (v["author"].as_str().unwrap(), v["source"].as_str().unwrap())).collect::<Vec<_>>(),
        [("alice", base), ("Bob", "甲\n乙\n丙\n丁\n戊\n己改\n"), ("alice", "甲改\n乙\n丙\n丁\n戊\n己\n")]
    );
    let conflicts = bob.ok("sync.conflicts", json!({}))["conflicts"].as_array().unwrap().clone();
    assert_eq!(conflicts.len(), 1);
    let conflict = &conflicts[0];
    assert_eq!((conflict["kind"].as_str(), conflict["base"]["source"].as_str()), (Some("push"), Some(base)));
    assert_eq!((conflict["mine"]["source"].as_str(), conflict["theirs"]["source"].as_str()), (Some("甲\n乙\n丙\n丁\n戊\n己改\n"), Some("甲改\n乙\n丙\n丁\n戊\n己\n")));
    assert_eq!(conflict["merged"]["source"], "甲改\n乙\n丙\n丁\n戊\n己改\n");
    assert!(matches!(bob.jobs()[0].state, JobState::Conflict { server_head: 2 }));

    let resolved = bob.ok("sync.resolve", json!({"conflictId": conflict["id"], "choice": "merged"}));
    assert_eq!((resolved["version"]["number"].as_u64(), resolved["version"]["origin"]["type"].as_str()), (Some(4), Some("syncResolution")));
    assert!(resolved.get("autosnapshot").is_none(), "the working copy was Bob's side: nothing unsaved to keep");
    assert!(matches!(bob.jobs()[0].state, JobState::Superseded { by_version: 4 }));
    assert_eq!(bob.ok("sync.push", json!({}))["pushed"], 1);
    let on_server = server.versions(&ws);
    assert_eq!(on_server.iter().map(|v| (v.number, v.author.as_str())).collect::<Vec<_>>(), [(1, "alice"), (2, "alice"), (3, "bob")]);
    assert_eq!(on_server[2].source, "甲改\n乙\n丙\n丁\n戊\n己改\n");
    assert_eq!(bob.ok("sync.status", json!({}))["state"], "synced");
    // Resolving twice is refused.
    let again = bob.call("sync.resolve", json!({"conflictId": conflict["id"], "choice": "mine"})).unwrap_err();
    assert_eq!(again.code, inkstone_core::ErrorCode::Conflict);
    alice.ok("sync.pull", json!({}));
    assert_eq!(alice.ok("project.get", json!({"projectId": project}))["source"], "甲改\n乙\n丙\n丁\n戊\n己改\n");
    // The resolution reaches Alice labelled as one: the server kept how Bob's client
    // made each version (the kind only: no conflict id, nothing of Bob's setup).
    assert_eq!(server.versions(&ws).iter().map(|v| v.origin.as_deref()).collect::<Vec<_>>(), [Some("manual"), Some("manual"), Some("syncResolution")]);
    let head = alice.versions(&project).last().unwrap().clone();
    assert_eq!(head["origin"], json!({"type": "pulled", "serverNumber": 3, "pushedBy": "bob", "remoteOrigin": "syncResolution"}));
    assert_eq!(bob.versions(&project)[0]["origin"], json!({"type": "pulled", "serverNumber": 1, "pushedBy": "alice", "remoteOrigin": "manual"}));
}

/// Against a server from before version origins (it refuses fields it does not know),
/// pushes carry none and every version still goes; once the server is upgraded and
/// says so, the next pull lets pushes carry them.
#[test]
fn an_older_server_gets_no_origin_and_an_upgraded_one_gets_them_after_a_pull() {
    let server_dir = tempfile::tempdir().unwrap();
    let server = Server::start_old(server_dir.path());
    let (ws, tokens) = server.workspace(&["alice", "bob"]);
    let alice = Client::new("Alice");
    let bob = Client::new("Bob");
    alice.connect(&server.url, &tokens[0]);
    bob.connect(&server.url, &tokens[1]);
    let project = alice.new_project("旧", "一\n二\n三\n四\n");
    alice.ok("version.create", json!({"projectId": project}));
    assert_eq!(alice.ok("sync.push", json!({}))["pushed"], 1);
    bob.ok("sync.pull", json!({}));
    alice.save(&project, "一（甲）\n二\n三\n四\n");
    alice.ok("sync.push", json!({}));
    bob.save(&project, "一\n二\n三\n四（乙）\n");
    assert_eq!(bob.ok("sync.push", json!({}))["newConflicts"], 1);
    let conflict = bob.ok("sync.conflicts", json!({}))["conflicts"][0]["id"].clone();
    bob.ok("sync.resolve", json!({"conflictId": conflict, "choice": "merged"}));
    let run = bob.ok("sync.push", json!({}));
    assert_eq!((run["pushed"].as_u64(), run["status"]["failed"].as_u64()), (Some(1), Some(0)), "{run}");
    assert!(server.versions(&ws).iter().all(|v| v.origin.is_none()));
    alice.ok("sync.pull", json!({}));
    let head = alice.versions(&project).last().unwrap().clone();
    assert_eq!(head["origin"], json!({"type": "pulled", "serverNumber": 3, "pushedBy": "bob"}));

    // The server is upgraded on the same data: a pull hears it keeps origins.
    let (dir, addr) = (server_dir.path().to_owned(), server.addr);
    drop(server);
    let server = {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match std::panic::catch_unwind(|| Server::start_at(&dir, addr)) {
                Ok(server) => break server,
                Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(50)),
                Err(e) => std::panic::resume_unwind(e),
            }
        }
    };
    bob.ok("sync.pull", json!({}));
    bob.save(&project, "一（甲）\n二\n三\n四（乙）\n五\n");
    assert_eq!(bob.ok("sync.push", json!({}))["pushed"], 1);
    assert_eq!(server.versions(&ws).last().unwrap().origin.as_deref(), Some("manual"));
    alice.ok("sync.pull", json!({}));
    assert_eq!(alice.versions(&project).last().unwrap()["origin"]["remoteOrigin"], "manual");
    check_history("an older server, then upgraded", &server.versions(&ws), &[&alice, &bob]);
}

#[test]
fn overlapping_edits_need_the_merge_view_and_an_edited_resolution() {
    let Connected { server_dir: _server_dir, server, ws, clients: [alice, bob] } = connected(["Alice", "Bob"]);
    let project = alice.new_project("叠", "一\n二\n三\n");
    alice.ok("version.create", json!({"projectId": project}));
    alice.ok("sync.push", json!({}));
    bob.ok("sync.pull", json!({}));
    alice.save(&project, "一\n二A\n三\n");
    bob.save(&project, "一\n二B\n三\n");
    alice.ok("sync.push", json!({}));
    bob.ok("sync.push", json!({}));
    let conflict = bob.ok("sync.conflicts", json!({"projectId": project}))["conflicts"][0].clone();
    assert!(conflict.get("merged").is_none());
    assert_eq!(conflict["overlaps"], json!([{"baseStart": 1, "baseLen": 1, "mine": "二B\n", "theirs": "二A\n"}]));
    // The merge view's regions come with it, from the fold that found the overlap.
    assert_eq!(
        conflict["regions"],
        json!([
            {"kind": "same", "baseStart": 0, "baseEnd": 1, "mineLine": 0, "base": "一\n", "mine": "一\n", "theirs": "一\n"},
            {"kind": "conflict", "baseStart": 1, "baseEnd": 2, "mineLine": 1, "base": "二\n", "mine": "二B\n", "theirs": "二A\n"},
            {"kind": "same", "baseStart": 2, "baseEnd": 3, "mineLine": 2, "base": "三\n", "mine": "三\n", "theirs": "三\n"},
        ])
    );
    assert_eq!(conflict["mergedTitle"], "叠");
    let refused = bob.call("sync.resolve", json!({"conflictId": conflict["id"], "choice": "merged"})).unwrap_err();
    assert_eq!(refused.code, inkstone_core::ErrorCode::Conflict);
    assert_eq!(refused.hints[0].id, "merge_view");
    let missing = bob.call("sync.resolve", json!({"conflictId": conflict["id"], "choice": "edited"})).unwrap_err();
    assert_eq!(missing.code, inkstone_core::ErrorCode::Validation);
    let before = bob.versions(&project).len();
    assert_eq!(before, 3, "the refusals wrote nothing");
    bob.ok("sync.resolve", json!({"conflictId": conflict["id"], "choice": "edited", "title": "叠", "source": "一\n二AB\n三\n"}));
    bob.ok("sync.push", json!({}));
    assert_eq!(server.versions(&ws).last().unwrap().source, "一\n二AB\n三\n");
}

#[test]
fn a_pulled_head_never_overwrites_an_edited_working_copy() {
    let Connected { server_dir: _server_dir, server, ws, clients: [alice, bob] } = connected(["Alice", "Bob"]);
    let project = alice.new_project("草稿", "一\n二\n三\n四\n");
    alice.ok("version.create", json!({"projectId": project}));
    alice.ok("sync.push", json!({}));
    bob.ok("sync.pull", json!({}));
    // Bob types (no version); Alice's next version arrives.
    let revision = bob.ok("project.get", json!({"projectId": project}))["revision"].clone();
    bob.ok("project.update", json!({"projectId": project, "baseRevision": revision, "source": "一\n二\n三\n四（未存）\n"}));
    alice.save(&project, "一（改）\n二\n三\n四\n");
    alice.ok("sync.push", json!({}));
    let run = bob.ok("sync.pull", json!({}));
    assert_eq!((run["pulled"].as_u64(), run["newConflicts"].as_u64()), (Some(1), Some(1)));
    assert_eq!(bob.ok("project.get", json!({"projectId": project}))["source"], "一\n二\n三\n四（未存）\n", "the working copy is Bob's");
    assert_eq!(bob.versions(&project).last().unwrap()["source"], "一（改）\n二\n三\n四\n", "Alice's version is in the history");
    let conflict = bob.ok("sync.conflicts", json!({}))["conflicts"][0].clone();
    assert_eq!((conflict["kind"].as_str(), conflict["mine"].get("localNumber")), (Some("pull"), None));
    assert_eq!(conflict["merged"]["source"], "一（改）\n二\n三\n四（未存）\n");
    let resolved = bob.ok("sync.resolve", json!({"conflictId": conflict["id"], "choice": "merged"}));
    // The working copy was neither side's version: it is kept first.
    assert_eq!(resolved["autosnapshot"]["source"], "一\n二\n三\n四（未存）\n");
    assert_eq!(bob.ok("project.get", json!({"projectId": project}))["source"], "一（改）\n二\n三\n四（未存）\n");
    // Both versions say what they are by origin, with the conflict's id, for the UI to
    // word in the person's language; neither carries an English message.
    let snapshot = &resolved["autosnapshot"];
    assert_eq!((&snapshot["origin"], &snapshot["message"]), (&json!({"type": "autosnapshot", "conflictId": conflict["id"]}), &Value::Null));
    assert_eq!((&resolved["version"]["origin"], &resolved["version"]["message"]), (&json!({"type": "syncResolution", "conflictId": conflict["id"]}), &Value::Null));
    // Only the resolution goes to the team: the autosnapshot is Bob's unsaved work and
    // has no delivery job.
    assert!(bob.jobs().iter().all(|j| j.version_id != snapshot["id"].as_str().unwrap()), "{:?}", bob.jobs());
    assert_eq!(bob.ok("sync.push", json!({}))["pushed"], 1);
    let on_server = server.versions(&ws);
    assert_eq!(on_server.iter().map(|v| v.source.as_str()).collect::<Vec<_>>(), ["一\n二\n三\n四\n", "一（改）\n二\n三\n四\n", "一（改）\n二\n三\n四（未存）\n"]);
    assert_eq!(on_server.last().unwrap().client_id, resolved["version"]["id"].as_str().unwrap());
    assert_eq!(alice.ok("sync.pull", json!({}))["pulled"], 1);
    let alices = alice.versions(&project);
    assert!(alices.iter().all(|v| v["source"] != "一\n二\n三\n四（未存）\n"), "Bob's unsaved work is not in Alice's history");
    assert_eq!(bob.ok("sync.status", json!({}))["state"], "synced");
    check_history("resolved with an autosnapshot", &server.versions(&ws), &[&alice, &bob]);
}

/// The status's change marker moves when sync changes this data folder's projects (a
/// pull brings a version, a conflict opens, moves on or is resolved) and at nothing
/// else: polling, an empty pull, the person's own saves and pushes leave it, so the UI
/// reads projects again only when it moves. It is stored, so a restart keeps it.
#[test]
fn the_change_marker_moves_when_sync_changes_projects_and_only_then() {
    let Connected { server_dir: _server_dir, server: _server, ws: _, clients: [alice, mut bob] } = connected(["Alice", "Bob"]);
    let marker = |c: &Client| c.ok("sync.status", json!({}))["changes"].as_u64().expect("the status carries the marker");
    let start = marker(&bob);
    assert_eq!(marker(&bob), start, "polling moves nothing");

    // A pull that brings a colleague's version (and a project new here) moves it.
    let project = alice.new_project("标记", "一\n二\n三\n");
    alice.ok("version.create", json!({"projectId": project}));
    alice.ok("sync.push", json!({}));
    assert_eq!(marker(&alice), 0, "the person's own versions and pushes change nothing sync brought");
    assert_eq!(bob.ok("sync.pull", json!({}))["pulled"], 1);
    let pulled = marker(&bob);
    assert!(pulled > start, "{pulled} after {start}");
    assert_eq!(bob.ok("sync.pull", json!({}))["pulled"], 0);
    assert_eq!(marker(&bob), pulled, "an empty pull moves nothing");

    // Bob's own version and its push: nothing sync brought.
    bob.save(&project, "一\n二\n三（乙）\n");
    bob.ok("sync.push", json!({}));
    assert_eq!(marker(&bob), pulled, "an acknowledged push of one's own version moves nothing");
    assert_eq!(alice.ok("sync.pull", json!({}))["pulled"], 1);

    // A stale push opens a conflict: it moves.
    alice.save(&project, "一（甲）\n二\n三（乙）\n");
    alice.ok("sync.push", json!({}));
    bob.save(&project, "一\n二\n三（乙）\n四\n");
    assert_eq!(bob.ok("sync.push", json!({}))["newConflicts"], 1);
    let conflicted = marker(&bob);
    assert!(conflicted > pulled);
    // Another version of Bob's waits with the open conflict, which moves on: it moves.
    bob.save(&project, "一\n二\n三（乙）\n四\n五\n");
    bob.ok("sync.push", json!({}));
    let held = marker(&bob);
    assert!(held > conflicted);

    // The resolution moves it; a restart keeps it.
    let conflict = bob.ok("sync.conflicts", json!({}))["conflicts"][0]["id"].clone();
    bob.ok("sync.resolve", json!({"conflictId": conflict, "choice": "merged"}));
    let resolved = marker(&bob);
    assert!(resolved > held);
    bob.reopen();
    assert_eq!(marker(&bob), resolved, "the marker is stored with the changes");
    bob.ok("sync.push", json!({}));
    assert_eq!(marker(&bob), resolved);
}

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
    assert_eq!((refused.code, refused.hints[0].id.as_str()), (inkstone_core::ErrorCode::Conflict, "resume"));
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
        let mut batch = inkstone_core::store::Batch::new();
        batch.put(&job).unwrap();
        store.apply(batch, inkstone_core::store::Durability::Durable).unwrap();
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
    let push_only = || alice.engine.sync_runtime().run(alice.engine.kernel(), inkstone_core::sync::cycle::What::Push).unwrap();
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
    assert_eq!((refused.code, refused.details.as_ref().unwrap()["field"].as_str()), (inkstone_core::ErrorCode::Validation, Some("serverUrl")));
    assert!(refused.hints.iter().any(|h| h.id == "allow_plain_http"));
    assert!(!format!("{refused:?}").contains(&tokens[0][4..]), "the token is in no error");
    assert_eq!(alice.ok("sync.status", json!({}))["state"], "notConnected", "nothing was stored");
    for bad in ["ftp://host", "https://user:pw@host", "host:8787", ""] {
        assert_eq!(alice.call("sync.connect", json!({"serverUrl": bad, "token": tokens[0]})).unwrap_err().code, inkstone_core::ErrorCode::Validation, "{bad}");
    }
    let wrong = alice.call("sync.connect", json!({"serverUrl": server.url, "token": "isk_wrong"})).unwrap_err();
    assert_eq!(wrong.code, inkstone_core::ErrorCode::PermissionDenied);
    let unreachable = alice.call("sync.connect", json!({"serverUrl": "http://127.0.0.1:9", "token": tokens[0]})).unwrap_err();
    assert_eq!(unreachable.code, inkstone_core::ErrorCode::Offline);
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

// ---------------------------------------------------------------------------------
// Faults: a seeded loopback proxy between the clients and the server.

/// What the proxy does to one connection (one request: the client closes each).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    Pass,
    /// Wait before forwarding the request.
    DelayRequest(u64),
    /// Close the client's connection before anything reaches the server.
    Reset,
    /// Forward, then drop the server's answer: the push may be stored, unacknowledged.
    DropAnswer,
    /// Send the request to the server twice (at once); answer with the first.
    Duplicate,
    /// Wait before answering.
    DelayAnswer(u64),
}

/// A loopback proxy whose faults come from one seeded generator.
pub struct Proxy {
    pub url: String,
    faults_on: Arc<std::sync::atomic::AtomicBool>,
    pub counts: Arc<Mutex<BTreeMap<&'static str, u32>>>,
    /// POST requests seen (pushes, connects, invites).
    pub posts: Arc<std::sync::atomic::AtomicUsize>,
    /// The next this many POSTs reach the server, and their answers are lost.
    pub lose_post_answers: Arc<std::sync::atomic::AtomicUsize>,
    /// POSTs wait this long before they go on to the server.
    pub post_delay_ms: Arc<std::sync::atomic::AtomicU64>,
    runtime: Option<tokio::runtime::Runtime>,
}

async fn read_request(stream: &mut tokio::net::TcpStream) -> Option<Vec<u8>> {
    use tokio::io::AsyncReadExt;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            let length: usize = head.lines().find_map(|l| l.strip_prefix("content-length:").map(|v| v.trim().parse().unwrap_or(0))).unwrap_or(0);
            if buf.len() >= end + 4 + length {
                return Some(buf);
            }
        }
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

async fn exchange(server: SocketAddr, request: &[u8]) -> Option<Vec<u8>> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut upstream = tokio::net::TcpStream::connect(server).await.ok()?;
    upstream.write_all(request).await.ok()?;
    let mut answer = Vec::new();
    // The request says `Connection: close`: the server closes after its answer.
    upstream.read_to_end(&mut answer).await.ok()?;
    Some(answer)
}

impl Proxy {
    pub fn start(server: SocketAddr, seed: u64) -> Proxy {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let rng = Arc::new(Mutex::new(Rng::new(seed)));
        let faults_on = Arc::new(std::sync::atomic::AtomicBool::new(true));
        let counts: Arc<Mutex<BTreeMap<&'static str, u32>>> = Arc::default();
        let posts: Arc<std::sync::atomic::AtomicUsize> = Arc::default();
        let lose_post_answers: Arc<std::sync::atomic::AtomicUsize> = Arc::default();
        let post_delay_ms: Arc<std::sync::atomic::AtomicU64> = Arc::default();
        let (on, tally, seen_posts, lose, post_delay) = (faults_on.clone(), counts.clone(), posts.clone(), lose_post_answers.clone(), post_delay_ms.clone());
        runtime.spawn(async move {
            loop {
                let Ok((mut client, _)) = listener.accept().await else { return };
                let fault = if on.load(std::sync::atomic::Ordering::SeqCst) {
                    let mut rng = rng.lock().unwrap();
                    match rng.below(20) {
                        0..=9 => Fault::Pass,
                        10 | 11 => Fault::DelayRequest(rng.below(30)),
                        12 | 13 => Fault::Reset,
                        14 | 15 => Fault::DropAnswer,
                        16 | 17 => Fault::Duplicate,
                        _ => Fault::DelayAnswer(rng.below(30)),
                    }
                } else {
                    Fault::Pass
                };
                let name = match fault {
                    Fault::Pass => "pass",
                    Fault::DelayRequest(_) => "delayRequest",
                    Fault::Reset => "reset",
                    Fault::DropAnswer => "dropAnswer",
                    Fault::Duplicate => "duplicate",
                    Fault::DelayAnswer(_) => "delayAnswer",
                };
                *tally.lock().unwrap().entry(name).or_insert(0) += 1;
                let (seen_posts, lose, post_delay) = (seen_posts.clone(), lose.clone(), post_delay.clone());
                tokio::spawn(async move {
                    use std::sync::atomic::Ordering::SeqCst;
                    use tokio::io::AsyncWriteExt;
                    let Some(request) = read_request(&mut client).await else { return };
                    if request.starts_with(b"POST") {
                        seen_posts.fetch_add(1, SeqCst);
                        let delay = post_delay.load(SeqCst);
                        if delay > 0 {
                            tokio::time::sleep(Duration::from_millis(delay)).await;
                        }
                        if lose.fetch_update(SeqCst, SeqCst, |n| n.checked_sub(1)).is_ok() {
                            let _ = exchange(server, &request).await;
                            return;
                        }
                    }
                    let answer = match fault {
                        Fault::Reset => return,
                        Fault::Pass => exchange(server, &request).await,
                        Fault::DelayRequest(ms) => {
                            tokio::time::sleep(Duration::from_millis(ms)).await;
                            exchange(server, &request).await
                        }
                        Fault::DropAnswer => {
                            let _ = exchange(server, &request).await;
                            return;
                        }
                        Fault::Duplicate => {
                            let (first, _second) = tokio::join!(exchange(server, &request), exchange(server, &request));
                            first
                        }
                        Fault::DelayAnswer(ms) => {
                            let answer = exchange(server, &request).await;
                            tokio::time::sleep(Duration::from_millis(ms)).await;
                            answer
                        }
                    };
                    if let Some(answer) = answer {
                        let _ = client.write_all(&answer).await;
                        let _ = client.shutdown().await;
                    }
                });
            }
        });
        Proxy { url, faults_on, counts, posts, lose_post_answers, post_delay_ms, runtime: Some(runtime) }
    }

    pub fn faults(&self, on: bool) {
        self.faults_on.store(on, std::sync::atomic::Ordering::SeqCst);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// The history checker. The server: every project's numbers are 1..=n, each version
/// (by the client's id) once. Every client: each version it made is on the server
/// exactly once with its content (its job finalized with that number, or superseded
/// by a resolution that is itself on the server), and it holds every version of the
/// server (its own, or pulled with the author).
pub fn check_history(run: &str, server_versions: &[ServerVersion], clients: &[&Client]) {
    let mut by_project: BTreeMap<&str, Vec<u32>> = BTreeMap::new();
    let mut by_client_id: BTreeMap<&str, &ServerVersion> = BTreeMap::new();
    for v in server_versions {
        by_project.entry(&v.project_id).or_default().push(v.number);
        assert!(by_client_id.insert(&v.client_id, v).is_none(), "{run}: version {} is on the server twice", v.client_id);
    }
    for (project, numbers) in &by_project {
        let mut sorted = numbers.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (1..=numbers.len() as u32).collect::<Vec<_>>(), "{run}: project {project} has gaps or duplicates: {numbers:?}");
    }
    for client in clients {
        let jobs = client.jobs();
        for job in jobs.clone() {
            let version = client.ok("version.get", json!({"projectId": job.project_id, "number": job.version_number}));
            match job.state {
                JobState::Finalized => {
                    let on_server = by_client_id.get(job.version_id.as_str()).unwrap_or_else(|| panic!("{run}: {} lost version {}", client.name, job.version_id));
                    assert_eq!(Some(on_server.number), job.server_number, "{run}: {} acknowledged a number the server did not give", client.name);
                    assert_eq!(on_server.content_hash, version["contentHash"].as_str().unwrap(), "{run}: content differs");
                }
                JobState::Superseded { by_version } => {
                    assert!(!by_client_id.contains_key(job.version_id.as_str()), "{run}: a superseded version reached the server");
                    // A resolution may itself have met a newer head and been resolved
                    // again: follow the chain to the one the server holds.
                    let mut number = by_version;
                    loop {
                        let resolution = client.ok("version.get", json!({"projectId": job.project_id, "number": number}));
                        let resolution_job = jobs.iter().find(|j| j.version_id == resolution["id"].as_str().unwrap()).unwrap();
                        match resolution_job.state {
                            JobState::Superseded { by_version } => number = by_version,
                            _ => {
                                assert!(by_client_id.contains_key(resolution["id"].as_str().unwrap()), "{run}: {}'s resolution is not on the server", client.name);
                                break;
                            }
                        }
                    }
                }
                other => panic!("{run}: {}'s job {} ended {other:?}", client.name, job.id),
            }
        }
        for v in server_versions {
            let local: Vec<Value> = client.versions(&v.project_id);
            let held = local
                .iter()
                .any(|l| l["id"] == v.client_id.as_str() || (l["origin"]["type"] == "pulled" && l["origin"]["serverNumber"] == v.number && l["author"] == v.author.as_str()));
            assert!(held, "{run}: {} does not hold server version {} of {}", client.name, v.number, v.project_id);
        }
    }
}

/// Settles every client: no faults, cycles until every job is finished and every
/// open conflict resolved (a client keeps its own side, merging when it can).
pub fn settle(run: &str, clients: &[&Client]) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let mut busy = false;
        for client in clients {
            client.engine.sync_runtime().run(client.engine.kernel(), inkstone_core::sync::cycle::What::Both).unwrap();
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
                client.engine.sync_runtime().run(client.engine.kernel(), inkstone_core::sync::cycle::What::Pull).unwrap();
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
                        client.engine.sync_runtime().run(client.engine.kernel(), inkstone_core::sync::cycle::What::Both).unwrap_or_else(|e| panic!("{run}: {e:?}"));
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
            .args(["--exact", "sync::sync_kill_child", "--nocapture", "--test-threads=1"])
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
        keychain.set(&format!("sync:{workspace_id}"), &inkstone_core::llm::ApiKey::new(tokens[0].as_str())).unwrap();
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

// ---------------------------------------------------------------------------------
// Members and leaving.

fn hint_ids(error: &inkstone_core::ApiError) -> Vec<&str> {
    error.hints.iter().map(|h| h.id.as_str()).collect()
}

#[test]
fn owners_list_invite_and_revoke_members_and_others_are_refused() {
    use inkstone_core::ErrorCode;
    let server_dir = tempfile::tempdir().unwrap();
    let server = Server::start(server_dir.path());
    let (ws, owner) = server.storage.create_workspace("团队", "Olga").unwrap();
    let editor = server.storage.invite(&ws, "eddie", Role::Editor).unwrap();
    let olga = Client::new("Olga");

    let not_connected = olga.call("sync.members", json!({})).unwrap_err();
    assert_eq!((not_connected.code, hint_ids(&not_connected)), (ErrorCode::Conflict, vec!["connect"]));

    olga.connect(&server.url, &owner.token);
    let listed = olga.ok("sync.members", json!({}));
    assert_eq!((listed["canManage"].as_bool(), listed["role"].as_str(), listed["workspaceName"].as_str()), (Some(true), Some("owner"), Some("团队")));
    let members = listed["members"].as_array().unwrap();
    assert_eq!(members.len(), 2);
    let me = members.iter().find(|m| m["me"] == true).unwrap();
    assert_eq!((me["name"].as_str(), me["role"].as_str(), me["tokenId"].as_str()), (Some("Olga"), Some("owner"), Some(owner.token_id.as_str())));
    assert_eq!(me["tokenFingerprint"].as_str().unwrap(), format!("…{}", &owner.token[owner.token.len() - 4..]));
    let eddie_entry = members.iter().find(|m| m["name"] == "eddie").unwrap();
    assert_eq!((eddie_entry["tokenId"].as_str(), eddie_entry["role"].as_str(), eddie_entry["revoked"].as_bool()), (Some(editor.token_id.as_str()), Some("editor"), Some(false)));
    assert!(eddie_entry["joinedAt"].as_str().is_some_and(|t| t.starts_with("20")), "{eddie_entry}");
    assert!(eddie_entry.get("tokenFingerprint").is_none(), "only the person's own token has a fingerprint");

    // An invite returns the token once; it works, and it is nowhere in the data dir.
    let invited = olga.ok("sync.invite", json!({"name": "维拉", "role": "viewer"}));
    let token = invited["token"].as_str().unwrap().to_owned();
    assert!(token.starts_with("isk_") && token.len() == 68, "{token}");
    assert_eq!((invited["member"]["name"].as_str(), invited["member"]["role"].as_str()), (Some("维拉"), Some("viewer")));
    let vera_token_id = invited["member"]["tokenId"].as_str().unwrap().to_owned();
    let vera = Client::new("Vera");
    assert_eq!(vera.connect(&server.url, &token)["role"], "viewer");
    assert_eq!(olga.ok("sync.members", json!({}))["members"].as_array().unwrap().len(), 3);
    for (path, bytes) in inkstone_test_support::read_tree(olga.dir.path()) {
        assert!(!bytes.windows(token.len() - 4).any(|w| w == &token.as_bytes()[4..]), "the invite token is in {path}");
    }

    // An editor sees the members but may not invite or revoke: nothing changes.
    let eddie = Client::new("Eddie");
    eddie.connect(&server.url, &editor.token);
    let seen = eddie.ok("sync.members", json!({}));
    assert_eq!((seen["canManage"].as_bool(), seen["members"].as_array().unwrap().len()), (Some(false), 3));
    let forbidden = eddie.call("sync.invite", json!({"name": "mallory", "role": "owner"})).unwrap_err();
    assert_eq!((forbidden.code, hint_ids(&forbidden)), (ErrorCode::PermissionDenied, vec!["owner_only"]));
    assert_eq!(forbidden.details.as_ref().unwrap()["reason"], "forbidden");
    assert!(forbidden.message.contains("owner"), "{}", forbidden.message);
    let forbidden = eddie.call("sync.revokeMember", json!({"tokenId": vera_token_id})).unwrap_err();
    assert_eq!((forbidden.code, hint_ids(&forbidden)), (ErrorCode::PermissionDenied, vec!["owner_only"]));
    assert_eq!(server.storage.members(&ws).unwrap().len(), 3);
    assert!(server.storage.authenticate(&token).unwrap().is_some(), "the viewer's token still works");

    // Bad input is refused before anything is sent.
    for (params, code) in [
        (json!({"name": "  ", "role": "editor"}), ErrorCode::Validation),
        (json!({"name": "x", "role": "boss"}), ErrorCode::Validation),
        (json!({"name": "x"}), ErrorCode::Validation),
    ] {
        assert_eq!(olga.call("sync.invite", params.clone()).unwrap_err().code, code, "{params}");
    }
    assert_eq!(olga.call("sync.revokeMember", json!({"tokenId": "tok_nope"})).unwrap_err().code, ErrorCode::NotFound);
    assert_eq!(olga.call("sync.revokeMember", json!({"tokenId": "../x"})).unwrap_err().code, ErrorCode::Validation);
    let own = olga.call("sync.revokeMember", json!({"tokenId": owner.token_id})).unwrap_err();
    assert_eq!((own.code, hint_ids(&own)), (ErrorCode::Validation, vec!["disconnect"]));
    assert_eq!(server.storage.members(&ws).unwrap().len(), 3);
    assert!(server.storage.members(&ws).unwrap().iter().all(|m| m.tokens.iter().all(|t| !t.revoked)));

    // The owner revokes the viewer: the list says so and the token stops working.
    let after = olga.ok("sync.revokeMember", json!({"tokenId": vera_token_id}));
    let vera_entry = after["members"].as_array().unwrap().iter().find(|m| m["name"] == "维拉").unwrap().clone();
    assert_eq!(vera_entry["revoked"], true);
    assert!(server.storage.authenticate(&token).unwrap().is_none());
    let locked_out = vera.call("sync.members", json!({})).unwrap_err();
    assert_eq!((locked_out.code, hint_ids(&locked_out)), (ErrorCode::PermissionDenied, vec!["reconnect"]));
    // Her push is refused for the revoked token, and the status names it by code.
    let project = vera.new_project("只读", "一\n");
    vera.save(&project, "一\n二\n");
    let run = vera.ok("sync.push", json!({}));
    assert_eq!((run["status"]["lastErrorCode"].as_str(), run["status"]["state"].as_str()), (Some("UNAUTHORIZED"), Some("failed")), "{}", run["status"]);
}

#[test]
fn disconnect_removes_the_token_keeps_unsynced_versions_paused_and_loses_nothing() {
    use inkstone_core::ErrorCode;
    let server_dir = tempfile::tempdir().unwrap();
    let server = Server::start(server_dir.path());
    let (ws, tokens) = server.workspace(&["alice"]);
    let alice = Client::new("Alice");
    let refused = alice.call("sync.disconnect", json!({})).unwrap_err();
    assert_eq!((refused.code, hint_ids(&refused)), (ErrorCode::Conflict, vec!["connect"]));

    alice.connect(&server.url, &tokens[0]);
    let project = alice.new_project("离开", "一\n");
    alice.ok("version.create", json!({"projectId": project}));
    assert_eq!(alice.ok("sync.push", json!({}))["pushed"], 1);
    alice.save(&project, "一\n二\n");
    alice.save(&project, "一\n二\n三\n");
    let workspace_id = alice.ok("workspace.get", json!({}))["id"].as_str().unwrap().to_owned();
    let account = format!("sync:{workspace_id}");
    assert!(alice.keychain.get(&account).unwrap().is_some());

    let done = alice.ok("sync.disconnect", json!({}));
    assert_eq!((done["keptJobs"].as_u64(), done["workspaceName"].as_str()), (Some(2), Some("团队")));
    assert_eq!((done["status"]["state"].as_str(), done["status"]["connected"].as_bool()), (Some("notConnected"), Some(false)));
    assert!(alice.keychain.get(&account).unwrap().is_none(), "the token left the keychain");
    // Nothing local is lost; the jobs are kept, not sent, and no new ones are made.
    assert_eq!(alice.versions(&project).len(), 3);
    assert_eq!(alice.ok("project.get", json!({"projectId": project}))["source"], "一\n二\n三\n");
    let kept: Vec<JobState> = alice.jobs().into_iter().map(|j| j.state).collect();
    assert_eq!(kept, [JobState::Finalized, JobState::Pending, JobState::Pending]);
    alice.save(&project, "一\n二\n三\n四\n");
    assert_eq!(alice.jobs().len(), 3, "a version made while disconnected has no delivery job");
    assert_eq!(alice.call("sync.push", json!({})).unwrap_err().code, ErrorCode::Conflict);
    assert_eq!(alice.call("sync.disconnect", json!({})).unwrap_err().code, ErrorCode::Conflict, "disconnecting twice");
    assert_eq!(server.versions(&ws).len(), 1);

    // Another workspace's token may not take the versions owed to the first.
    let (_other, other_tokens) = server.workspace(&["alice2"]);
    let wrong = alice.call("sync.connect", json!({"serverUrl": server.url, "token": other_tokens[0]})).unwrap_err();
    assert_eq!(wrong.code, ErrorCode::Conflict);
    assert!(hint_ids(&wrong).contains(&"reconnect_previous"));
    assert_eq!(alice.ok("sync.status", json!({}))["connected"], false);
    assert!(alice.keychain.get(&account).unwrap().is_none());

    // The same workspace again: paused until resumed, then the kept jobs go, once.
    let back = alice.connect(&server.url, &tokens[0]);
    assert_eq!((back["state"].as_str(), back["pending"].as_u64()), (Some("paused"), Some(2)));
    alice.ok("sync.resume", json!({}));
    assert_eq!(alice.ok("sync.push", json!({}))["pushed"], 2);
    assert_eq!(server.versions(&ws).iter().map(|v| v.number).collect::<Vec<_>>(), [1, 2, 3]);
    assert_eq!(alice.ok("sync.pull", json!({}))["pulled"], 0, "the cursor continued where it stopped");
}

// ---------------------------------------------------------------------------------
// Failed jobs: their reason stays, and a retry or a reconnect sends them.

fn job_view<'a>(status: &'a Value, job_id: &str) -> &'a Value {
    status["jobs"].as_array().unwrap().iter().find(|j| j["id"] == job_id).unwrap_or_else(|| panic!("job {job_id} is not in {status}"))
}

/// The audit's case: an owner revokes Boris, his next version fails (401) and the one
/// after it waits behind it; the status keeps saying why and offers a retry; after a
/// disconnect the count covers both; reconnecting with a new token sends them, once.
#[test]
fn a_refused_token_fails_jobs_with_their_reason_until_a_retry_or_a_reconnect_sends_them() {
    use inkstone_core::ErrorCode;
    let server_dir = tempfile::tempdir().unwrap();
    let server = Server::start(server_dir.path());
    let (ws, _owner) = server.storage.create_workspace("团队", "Olga").unwrap();
    let first = server.storage.invite(&ws, "boris", Role::Editor).unwrap();
    let boris = Client::new("Boris");
    assert_eq!(boris.call("sync.retry", json!({})).unwrap_err().message_id.as_deref(), Some("sync.not_connected"));
    boris.connect(&server.url, &first.token);
    let project = boris.new_project("稿", "一\n");
    boris.ok("version.create", json!({"projectId": project}));
    assert_eq!(boris.ok("sync.push", json!({}))["pushed"], 1);

    server.storage.revoke(&ws, &first.token_id).unwrap();
    boris.save(&project, "一\n二\n");
    let run = boris.ok("sync.push", json!({}));
    assert_eq!((run["status"]["state"].as_str(), run["status"]["failed"].as_u64()), (Some("failed"), Some(1)), "{}", run["status"]);
    let failed = boris.jobs()[1].clone();
    assert_eq!((&failed.state, failed.last_error_code.as_deref(), failed.base), (&JobState::Failed, Some("UNAUTHORIZED"), Some(1)));
    boris.save(&project, "一\n二\n三\n");
    let later = boris.jobs()[2].clone();

    // A push that sends nothing (the project waits behind its failed job) still says
    // why: the failed job's reason and code, and which job the later one waits behind.
    let status = boris.ok("sync.push", json!({}))["status"].clone();
    assert_eq!((status["state"].as_str(), status["failed"].as_u64(), status["pending"].as_u64()), (Some("failed"), Some(1), Some(1)));
    assert_eq!(status["lastErrorCode"], "UNAUTHORIZED", "{status}");
    assert!(status["lastError"].as_str().unwrap().starts_with("401 UNAUTHORIZED"), "{status}");
    assert_eq!(job_view(&status, &failed.id)["lastErrorCode"], "UNAUTHORIZED");
    assert_eq!(status["heldBy"], json!({later.id.as_str(): failed.id.as_str()}));

    // Bad retries change nothing.
    let jobs_before = boris.jobs();
    let not_failed = boris.call("sync.retry", json!({"jobId": later.id})).unwrap_err();
    assert_eq!((not_failed.code, not_failed.message_id.as_deref()), (ErrorCode::Conflict, Some("sync.not_failed")));
    assert_eq!(boris.call("sync.retry", json!({"jobId": "job_nope"})).unwrap_err().code, ErrorCode::NotFound);
    assert_eq!(boris.call("sync.retry", json!({"jobId": 3})).unwrap_err().code, ErrorCode::Validation);
    assert_eq!(boris.call("sync.retry", json!({"jobId": ""})).unwrap_err().code, ErrorCode::Validation);
    assert_eq!(boris.call("sync.retry", json!({"job": failed.id})).unwrap_err().code, ErrorCode::Validation);
    assert_eq!(boris.jobs(), jobs_before);

    // A retry sends the same push again (same base, same key); the token is still
    // refused, so it fails again, with its reason.
    let retried = boris.ok("sync.retry", json!({"jobId": failed.id}));
    assert_eq!((retried["state"].as_str(), retried["failed"].as_u64(), retried["pending"].as_u64()), (Some("pending"), Some(0), Some(2)), "{retried}");
    assert!(retried.get("heldBy").is_none(), "{retried}");
    let requeued = boris.jobs()[1].clone();
    assert_eq!((&requeued.state, requeued.base, requeued.attempts, &requeued.dedupe_key), (&JobState::Pending, Some(1), 0, &failed.dedupe_key));
    assert_eq!(boris.ok("sync.push", json!({}))["status"]["lastErrorCode"], "UNAUTHORIZED");
    assert_eq!(boris.jobs()[1].state, JobState::Failed);
    assert_eq!(server.versions(&ws).len(), 1);

    // Disconnecting counts every version still owed: the failed one and the waiting one.
    let done = boris.ok("sync.disconnect", json!({}));
    assert_eq!(done["keptJobs"], 2, "{done}");

    // The owner invites Boris again; connecting with the new token sends both, once.
    let second = server.storage.invite(&ws, "boris", Role::Editor).unwrap();
    let back = boris.connect(&server.url, &second.token);
    assert_eq!((back["state"].as_str(), back["failed"].as_u64(), back["pending"].as_u64()), (Some("paused"), Some(0), Some(2)), "{back}");
    assert!(back.get("lastError").is_none() && back.get("lastErrorCode").is_none(), "{back}");
    boris.ok("sync.resume", json!({}));
    let run = boris.ok("sync.push", json!({}));
    assert_eq!((run["pushed"].as_u64(), run["status"]["state"].as_str()), (Some(2), Some("synced")), "{run}");
    assert_eq!(server.versions(&ws).iter().map(|v| v.source.as_str()).collect::<Vec<_>>(), ["一\n", "一\n二\n", "一\n二\n三\n"]);

    // Revoked again while connected: a plain reconnect (no disconnect) requeues too.
    server.storage.revoke(&ws, &second.token_id).unwrap();
    boris.save(&project, "一\n二\n三\n四\n");
    assert_eq!(boris.ok("sync.push", json!({}))["status"]["failed"], 1);
    let third = server.storage.invite(&ws, "boris", Role::Editor).unwrap();
    assert_eq!(boris.connect(&server.url, &third.token)["pending"], 1);
    assert_eq!(boris.ok("sync.push", json!({}))["pushed"], 1);
    check_history("retried after a refused token", &server.versions(&ws), &[&boris]);
}

/// A loopback HTTP server that answers every request with `status_line`, `content_type`
/// and `body`, for `n` connections.
fn answering(n: usize, status_line: &'static str, content_type: &'static str, body: &'static str) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().take(n) {
            let Ok(mut stream) = stream else { continue };
            let mut buf = [0u8; 8192];
            let _ = stream.read(&mut buf);
            let answer = format!("HTTP/1.1 {status_line}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len());
            let _ = stream.write_all(answer.as_bytes());
        }
    });
    url
}

/// Each way a connect can fail has its own code and wording; the parser's or the
/// server's words are in the details, never the headline; nothing is stored.
#[test]
fn a_connect_names_what_answered_and_why_it_failed() {
    use inkstone_core::ErrorCode;
    let server_dir = tempfile::tempdir().unwrap();
    let server = Server::start(server_dir.path());
    let (_ws, tokens) = server.workspace(&["alice"]);
    let alice = Client::new("Alice");
    let connect = |url: &str, token: &str| alice.call("sync.connect", json!({"serverUrl": url, "token": token})).unwrap_err();

    // Another web server: 200 with a page.
    let page = connect(&answering(1, "200 OK", "text/html", "<!doctype html><title>NAS</title>"), &tokens[0]);
    assert_eq!((page.code, page.message_id.as_deref(), hint_ids(&page)), (ErrorCode::Validation, Some("sync.not_a_server"), vec!["check_server_url"]));
    assert_eq!(page.message, "The address answers, but not as an Inkstone workspace server.");
    let details = page.details.clone().unwrap();
    assert_eq!((details["field"].as_str(), details["status"].as_u64(), details["code"].as_str()), (Some("serverUrl"), Some(200), Some("HTTP")));
    assert!(details["reason"].as_str().unwrap().contains("expected value"), "the parser's words are kept in the details: {details}");
    // Another JSON service (or another version): the same, and it may be the versions.
    let json_service = connect(&answering(1, "200 OK", "application/json", r#"{"status":"ok"}"#), &tokens[0]);
    assert_eq!((json_service.message_id.as_deref(), hint_ids(&json_service)), (Some("sync.not_a_server"), vec!["check_server_url", "match_versions"]));
    assert_eq!(json_service.details.unwrap()["code"], "BAD_ANSWER");
    // A page that is not found there: the wrong port or path.
    let missing = connect(&answering(1, "404 Not Found", "text/html", "<h1>404</h1>"), &tokens[0]);
    assert_eq!((missing.code, missing.message_id.as_deref()), (ErrorCode::Validation, Some("sync.not_a_server")));
    // A proxy's error page in front of a server that is down: try again later.
    let down = connect(&answering(1, "502 Bad Gateway", "text/html", "<h1>502</h1>"), &tokens[0]);
    assert_eq!((down.code, down.message_id.as_deref(), hint_ids(&down)), (ErrorCode::Offline, Some("sync.server_unavailable"), vec!["server_retry_later"]));
    // The workspace server refusing the token: the server refused, not Inkstone.
    let wrong = connect(&server.url, "isk_wrong");
    assert_eq!((wrong.code, wrong.message_id.as_deref(), hint_ids(&wrong)), (ErrorCode::PermissionDenied, Some("sync.token_refused"), vec!["new_invite"]));
    assert_eq!(wrong.details.as_ref().unwrap()["code"], "UNAUTHORIZED");
    for error in [&page, &wrong] {
        assert!(!format!("{error:?}").contains(&tokens[0][4..]), "the token is in no error");
    }
    // Nothing was stored.
    let status = alice.ok("sync.status", json!({}));
    assert_eq!(status["state"], "notConnected");
    assert!(alice.keychain.get(&format!("sync:{}", alice.ok("workspace.get", json!({}))["id"].as_str().unwrap())).unwrap().is_none());
}
