//! Team sync end to end: real engines (sled, the real sync transport) against a real
//! `inkstone-server` started in-process on loopback, with its sled store. This module
//! holds what the sync tests share: the server, the clients, the `connected` start
//! most tests take, and a seeded loopback proxy that drops, delays, duplicates and
//! resets connections. The tests are in `sync_exchange` (push exactly once, pull with
//! authors, 409 → conflict → resolve), `sync_delivery` (the delivery thread, pause,
//! restart, batches, the token), `sync_faults` (three clients through a faulty
//! network, a history checker, kill -9 of the client) and `sync_members` (members,
//! disconnecting, failed jobs and connect failures).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use inkstone_api::llm::keychain::{MemoryKeychain, SecretStore};
use inkstone_api::outbox::{DeliveryJob, JobState};
use inkstone_api::{Engine, EngineConfig};
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

    pub(crate) fn start_at(dir: &Path, addr: SocketAddr) -> Server {
        Server::serve_at(dir, addr, false)
    }

    /// A server as builds before version origins answered: it lists no features,
    /// returns no origins and refuses a push that carries one (as its
    /// `deny_unknown_fields` did).
    pub fn start_old(dir: &Path) -> Server {
        Server::serve_at(dir, "127.0.0.1:0".parse().unwrap(), true)
    }

    /// A server from before the `aiActivity` feature (origins and policy, no AI detail).
    pub fn start_before_ai_activity(dir: &Path) -> Server {
        Server::serve_with(dir, "127.0.0.1:0".parse().unwrap(), |app| app.layer(axum::middleware::from_fn(as_server_before_ai_activity)))
    }

    /// A server from before `accountSnapshots` (performance data, no accounts' days).
    pub fn start_before_account_days(dir: &Path) -> Server {
        Server::serve_with(dir, "127.0.0.1:0".parse().unwrap(), |app| app.layer(axum::middleware::from_fn(as_server_before_account_days)))
    }

    fn serve_at(dir: &Path, addr: SocketAddr, old: bool) -> Server {
        Server::serve_with(dir, addr, |app| if old { app.layer(axum::middleware::from_fn(as_old_server)) } else { app })
    }

    fn serve_with(dir: &Path, addr: SocketAddr, wrap: impl FnOnce(axum::Router) -> axum::Router) -> Server {
        let storage = Arc::new(SledStorage::open(dir).unwrap());
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let state = AppState::new(storage.clone() as Arc<dyn Storage>, RateLimit { per_second: 100_000.0, burst: 100_000.0 });
        let listener = runtime.block_on(tokio::net::TcpListener::bind(addr)).unwrap();
        let addr = listener.local_addr().unwrap();
        let app = wrap(router(state));
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
    // It had no performance data routes.
    if parts.uri.path().starts_with("/v1/perf") {
        let refusal = json!({"code": "NOT_FOUND", "message": "There is no such route.", "hints": []});
        return (axum::http::StatusCode::NOT_FOUND, axum::Json(refusal)).into_response();
    }
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

/// What a server from before `aiActivity` did: it refused a push whose versions carry
/// `ai` (unknown field), had no `/v1/ai-activity`, and listed no such feature.
async fn as_server_before_ai_activity(request: axum::extract::Request, next: axum::middleware::Next) -> axum::response::Response {
    use axum::body::{to_bytes, Body};
    use axum::response::IntoResponse;
    let (parts, body) = request.into_parts();
    let bytes = to_bytes(body, usize::MAX).await.unwrap();
    let carries_ai = serde_json::from_slice::<Value>(&bytes).is_ok_and(|v| v["versions"].as_array().is_some_and(|vs| vs.iter().any(|x| x.get("ai").is_some())));
    if parts.method == axum::http::Method::POST && carries_ai {
        let refusal = json!({"code": "VALIDATION", "message": "The push is not valid JSON of the right shape: unknown field `ai`.", "hints": []});
        return (axum::http::StatusCode::BAD_REQUEST, axum::Json(refusal)).into_response();
    }
    if parts.uri.path() == "/v1/ai-activity" {
        return (axum::http::StatusCode::NOT_FOUND, axum::Json(json!({"code": "NOT_FOUND", "message": "There is no such endpoint.", "hints": []}))).into_response();
    }
    let answer = next.run(axum::extract::Request::from_parts(parts, Body::from(bytes))).await;
    let (mut parts, body) = answer.into_parts();
    let bytes = to_bytes(body, usize::MAX).await.unwrap();
    let Ok(mut value) = serde_json::from_slice::<Value>(&bytes) else { return axum::response::Response::from_parts(parts, Body::from(bytes)) };
    if let Some(features) = value.get_mut("features").and_then(Value::as_array_mut) {
        features.retain(|f| f != "aiActivity");
    }
    parts.headers.remove(axum::http::header::CONTENT_LENGTH);
    axum::response::Response::from_parts(parts, Body::from(serde_json::to_vec(&value).unwrap()))
}

/// What a server from before `accountSnapshots` did: its `PerfKind` had no
/// `accountSnapshot`, so a push carrying one was refused whole (400, as serde words an
/// unknown variant); it did not list the feature, and it held no days to send.
async fn as_server_before_account_days(request: axum::extract::Request, next: axum::middleware::Next) -> axum::response::Response {
    use axum::body::{to_bytes, Body};
    use axum::response::IntoResponse;
    let (parts, body) = request.into_parts();
    let bytes = to_bytes(body, usize::MAX).await.unwrap();
    let carries_day = serde_json::from_slice::<Value>(&bytes).is_ok_and(|v| v["records"].as_array().is_some_and(|rs| rs.iter().any(|r| r["kind"] == "accountSnapshot")));
    if parts.method == axum::http::Method::POST && parts.uri.path() == "/v1/perf" && carries_day {
        let refusal = json!({"code": "VALIDATION", "message": "The push is not valid JSON of the right shape: unknown variant `accountSnapshot`.", "hints": []});
        return (axum::http::StatusCode::BAD_REQUEST, axum::Json(refusal)).into_response();
    }
    let answer = next.run(axum::extract::Request::from_parts(parts, Body::from(bytes))).await;
    let (mut parts, body) = answer.into_parts();
    let bytes = to_bytes(body, usize::MAX).await.unwrap();
    let Ok(mut value) = serde_json::from_slice::<Value>(&bytes) else { return axum::response::Response::from_parts(parts, Body::from(bytes)) };
    if let Some(features) = value.get_mut("features").and_then(Value::as_array_mut) {
        features.retain(|f| f != "accountSnapshots");
    }
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
    config.ids = Arc::new(inkstone_api::config::UlidIds::default());
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

    pub fn call(&self, method: &str, params: Value) -> Result<Value, inkstone_api::ApiError> {
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

pub(crate) fn until(what: &str, timeout: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
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
    /// While on, each request is held (counted in `held`) until [`Proxy::release`],
    /// then its connection is closed unanswered: a cycle caught mid-flight, on cue.
    holding: Arc<std::sync::atomic::AtomicBool>,
    pub held: Arc<std::sync::atomic::AtomicUsize>,
    released: Arc<tokio::sync::Semaphore>,
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
        let holding: Arc<std::sync::atomic::AtomicBool> = Arc::default();
        let held: Arc<std::sync::atomic::AtomicUsize> = Arc::default();
        let released = Arc::new(tokio::sync::Semaphore::new(0));
        let (hold_on, held_count, release) = (holding.clone(), held.clone(), released.clone());
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
                let (seen_posts, lose, post_delay, tally) = (seen_posts.clone(), lose.clone(), post_delay.clone(), tally.clone());
                let (hold_on, held_count, release) = (hold_on.clone(), held_count.clone(), release.clone());
                tokio::spawn(async move {
                    use std::sync::atomic::Ordering::SeqCst;
                    use tokio::io::AsyncWriteExt;
                    let Some(request) = read_request(&mut client).await else { return };
                    if hold_on.load(SeqCst) {
                        held_count.fetch_add(1, SeqCst);
                        if let Ok(permit) = release.acquire().await {
                            permit.forget();
                        }
                        return;
                    }
                    // Performance pushes that met a fault that loses or repeats them.
                    if request.starts_with(b"POST /v1/perf") && matches!(fault, Fault::Reset | Fault::DropAnswer | Fault::Duplicate) {
                        *tally.lock().unwrap().entry("perfPushFaulted").or_insert(0) += 1;
                    }
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
        Proxy { url, faults_on, counts, posts, lose_post_answers, post_delay_ms, holding, held, released, runtime: Some(runtime) }
    }

    /// Holds every request from now on (see `held`), or stops holding new ones.
    pub fn hold(&self, on: bool) {
        self.holding.store(on, std::sync::atomic::Ordering::SeqCst);
    }

    /// Closes every held request unanswered (the client sees the server vanish).
    pub fn release(&self) {
        self.released.add_permits(self.held.load(std::sync::atomic::Ordering::SeqCst));
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
