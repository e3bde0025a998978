//! Long articles through sync: two data folders and a real `inkstone-server` on
//! loopback, on its embedded sled store and on PostgreSQL (a throwaway cluster;
//! `INKSTONE_SKIP_POSTGRES=1` skips those on a developer machine). Versions of 3 MB
//! and 8 MB come in pages the client reads; a 409 that carries only part of the newer
//! versions still opens the conflict with all of them; a pull that fails does not hold
//! pushes back; an older server that pages by count is asked for smaller pages.

use std::sync::{Arc, OnceLock};

use inkstone_api::outbox::JobState;
use inkstone_api::sync::cycle::What;
use inkstone_server::http::{router, AppState, RateLimit};
use inkstone_server::pgtemp::TempCluster;
use inkstone_server::proto::Role;
use inkstone_server::storage::pg::PgStorage;
use inkstone_server::storage::{SledStorage, Storage};
use serde_json::{json, Value};

use crate::sync::Client;

/// A workspace server on loopback over either storage; `layer` may change what it
/// answers (an older server, a failing route).
struct Served {
    url: String,
    storage: Arc<dyn Storage>,
    runtime: Option<tokio::runtime::Runtime>,
    _dir: Option<tempfile::TempDir>,
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_timeout(std::time::Duration::from_secs(2));
        }
    }
}

#[derive(Clone, Copy)]
enum Kind {
    Sled,
    Pg,
}

fn cluster() -> &'static TempCluster {
    static CLUSTER: OnceLock<Result<TempCluster, String>> = OnceLock::new();
    match CLUSTER.get_or_init(|| TempCluster::start(false)) {
        Ok(cluster) => cluster,
        Err(e) => panic!("the PostgreSQL tests need PostgreSQL (set INKSTONE_SKIP_POSTGRES=1 to skip them on a developer machine): {e}"),
    }
}

/// Wraps the server's router, e.g. to answer as an older server would.
type Layer = fn(Arc<dyn Storage>, axum::Router) -> axum::Router;

/// None when the developer asked to skip PostgreSQL.
fn serve(kind: Kind, layer: Option<Layer>) -> Option<Served> {
    let (storage, dir): (Arc<dyn Storage>, _) = match kind {
        Kind::Sled => {
            let dir = tempfile::tempdir().unwrap();
            (Arc::new(SledStorage::open(dir.path()).unwrap()), Some(dir))
        }
        Kind::Pg => {
            if std::env::var("INKSTONE_SKIP_POSTGRES").is_ok_and(|v| v == "1") {
                eprintln!("skipping a PostgreSQL test: INKSTONE_SKIP_POSTGRES=1");
                return None;
            }
            static COUNT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
            let name = format!("paging{}", COUNT.fetch_add(1, std::sync::atomic::Ordering::SeqCst));
            (Arc::new(PgStorage::connect(&cluster().create_database(&name).unwrap(), 8).unwrap()), None)
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let state = AppState::new(storage.clone(), RateLimit { per_second: 100_000.0, burst: 100_000.0 });
    let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let app = match layer {
        Some(layer) => layer(storage.clone(), router(state)),
        None => router(state),
    };
    runtime.spawn(async move { axum::serve(listener, app).await });
    Some(Served { url, storage, runtime: Some(runtime), _dir: dir })
}

impl Served {
    fn workspace(&self, names: &[&str]) -> (String, Vec<String>) {
        let (id, _) = self.storage.create_workspace("团队", "owner").unwrap();
        let tokens = names.iter().map(|n| self.storage.invite(&id, n, Role::Editor).unwrap().token).collect();
        (id, tokens)
    }
}

/// A client whose requests may take long: a push of two 3 MB versions on a busy
/// machine takes longer than the tests' 5 s.
fn client(name: &str) -> Client {
    Client::with(name, |config| config.sync.timeout = std::time::Duration::from_secs(300))
}

/// Pushes until nothing is pending; the versions pushed.
fn push_all(client: &Client) -> u64 {
    let mut pushed = 0;
    for _ in 0..10 {
        let run = client.ok("sync.push", json!({}));
        pushed += run["pushed"].as_u64().unwrap();
        if run["status"]["pending"] == 0 {
            return pushed;
        }
    }
    panic!("{} still has versions to push", client.name);
}

/// A source of about 3 MB: 990,000 characters (the app takes up to 1,000,000), three
/// bytes each in UTF-8.
fn three_mb(n: usize) -> String {
    let line = format!("第{}稿", ["一", "二", "三", "四", "五", "六"][n % 6]).repeat(50) + "\n";
    line.repeat(990_000 / line.chars().count())
}

/// Pushes a version of about 8 MB as another client would (the app's sources stop at
/// 1,000,000 characters; the server takes any push up to 8 MiB); returns the head.
fn push_eight_mb(url: &str, token: &str, project: &str, base: u64, n: usize) -> u64 {
    // Eight lines of a million bytes: a conflict's line merge over it stays cheap.
    let source = (0..8).map(|i| format!("long line {i} of version {n}: {}\n", "x".repeat(999_970))).collect::<String>();
    let title = "长稿";
    let version = json!({
        "clientId": format!("ver_01JDZZZZZZZZZZZZZZZZZZZZ{n:02}"),
        "title": title,
        "source": source,
        "author": "Carol",
        "message": null,
        "contentHash": inkstone_api::project::versions::content_hash(title, &source),
        "createdAt": "2026-11-27T06:00:00Z",
    });
    let body = serde_json::to_vec(&json!({"base": base, "versions": [version]})).unwrap();
    assert!(body.len() > 7_900_000 && body.len() < inkstone_server::proto::MAX_BODY_BYTES, "{}", body.len());
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let response = reqwest::Client::builder()
            .timeout(std::time::Duration::from_secs(300))
            .build()
            .unwrap()
            .post(format!("{url}/v1/projects/{project}/push"))
            .bearer_auth(token)
            .header("Idempotency-Key", format!("carol-{n}"))
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), 201);
        serde_json::from_slice::<Value>(&response.bytes().await.unwrap()).unwrap()["head"].as_u64().unwrap()
    })
}

/// Alice pushes four versions of 3 MB and Carol two of 8 MB; Bob, in his own data
/// folder, pulls them all (the page the server used to send, every version at once,
/// was 28 MB: more than a client reads, so every pull failed).
fn long_versions_reach_a_colleague_in_pages(kind: Kind) {
    let Some(server) = serve(kind, None) else { return };
    let (_, tokens) = server.workspace(&["alice", "bob", "carol"]);
    let alice = client("Alice");
    let bob = client("Bob");
    alice.connect(&server.url, &tokens[0]);
    let project = alice.new_project("长稿", "起\n");
    alice.ok("sync.pause", json!({}));
    for n in 0..4 {
        alice.save(&project, &three_mb(n));
    }
    alice.ok("sync.resume", json!({}));
    assert_eq!(push_all(&alice), 4);
    let mut head = 4;
    for n in 0..2 {
        head = push_eight_mb(&server.url, &tokens[2], &project, head, n);
    }
    assert_eq!(head, 6);

    bob.connect(&server.url, &tokens[1]);
    let pulled = bob.ok("sync.pull", json!({}));
    assert_eq!(pulled["pulled"], 6, "{}", pulled["status"]);
    assert!(pulled["status"].get("lastErrorCode").is_none(), "{}", pulled["status"]);
    let theirs = bob.versions(&project);
    let lengths: Vec<usize> = theirs.iter().map(|v| v["source"].as_str().unwrap().len()).collect();
    assert_eq!(lengths.len(), 6);
    assert!(lengths[..4].iter().all(|&n| (2_900_000..3_100_000).contains(&n)) && lengths[4..].iter().all(|&n| n > 7_900_000), "{lengths:?}");
    // Authors are the server's record of each pusher (the members' names).
    assert_eq!((theirs[3]["author"].as_str(), theirs[4]["author"].as_str()), (Some("alice"), Some("carol")));
    assert_eq!(theirs[3]["source"].as_str().unwrap(), three_mb(3));
    assert_eq!(bob.ok("project.get", json!({"projectId": project}))["source"].as_str().unwrap().len(), lengths[5]);
    assert_eq!(bob.ok("sync.pull", json!({}))["pulled"], 0, "the cursor moved past them all");
}

#[test]
fn long_versions_reach_a_colleague_in_pages_on_sled() {
    long_versions_reach_a_colleague_in_pages(Kind::Sled);
}

#[test]
fn long_versions_reach_a_colleague_in_pages_on_postgres() {
    long_versions_reach_a_colleague_in_pages(Kind::Pg);
}

/// Bob pushes on a base three long versions old: the 409 carries only the first page
/// of them (it used to carry all, 24 MB, which the client refused, so the push was
/// retried forever); Bob's client pulls the rest and opens the conflict against the
/// newest.
fn a_409_that_leaves_versions_out_still_opens_the_conflict_with_all_of_them(kind: Kind) {
    let Some(server) = serve(kind, None) else { return };
    let (_, tokens) = server.workspace(&["alice", "bob", "carol"]);
    let alice = client("Alice");
    let bob = client("Bob");
    alice.connect(&server.url, &tokens[0]);
    bob.connect(&server.url, &tokens[1]);
    let project = alice.new_project("长稿", "起\n");
    alice.ok("version.create", json!({"projectId": project}));
    alice.ok("sync.push", json!({}));
    assert_eq!(bob.ok("sync.pull", json!({}))["pulled"], 1);
    let mut head = 1;
    for n in 0..3 {
        head = push_eight_mb(&server.url, &tokens[2], &project, head, n);
    }

    bob.save(&project, "起\n鲍勃的一行\n");
    let run = bob.ok("sync.push", json!({}));
    assert_eq!((run["pushed"].as_u64(), run["newConflicts"].as_u64(), run["status"]["state"].as_str()), (Some(0), Some(1), Some("conflict")), "{run}");
    assert!(matches!(bob.jobs()[0].state, JobState::Conflict { .. }), "{:?}", bob.jobs()[0].state);
    let conflicts = bob.ok("sync.conflicts", json!({}))["conflicts"].as_array().unwrap().clone();
    assert_eq!(conflicts.len(), 1);
    assert_eq!((conflicts[0]["kind"].as_str(), conflicts[0]["theirs"]["serverNumber"].as_u64()), (Some("push"), Some(4)));
    assert!(conflicts[0]["theirs"]["source"].as_str().unwrap().starts_with("long line 0 of version 2: "));
    assert_eq!(conflicts[0]["mine"]["source"], "起\n鲍勃的一行\n");
    // All of Carol's versions are in Bob's history; his own version and working copy
    // are as he left them.
    let history = bob.versions(&project);
    assert_eq!(history.iter().filter(|v| v["author"] == "carol").count(), 3);
    assert_eq!(bob.ok("project.get", json!({"projectId": project}))["source"], "起\n鲍勃的一行\n");
}

#[test]
fn a_409_that_leaves_versions_out_still_opens_the_conflict_on_sled() {
    a_409_that_leaves_versions_out_still_opens_the_conflict_with_all_of_them(Kind::Sled);
}

#[test]
fn a_409_that_leaves_versions_out_still_opens_the_conflict_on_postgres() {
    a_409_that_leaves_versions_out_still_opens_the_conflict_with_all_of_them(Kind::Pg);
}

/// Every pull answered with more than a client reads.
fn pulls_fail(_: Arc<dyn Storage>, app: axum::Router) -> axum::Router {
    app.layer(axum::middleware::from_fn(|request: axum::extract::Request, next: axum::middleware::Next| async move {
        if request.uri().path() == "/v1/changes" {
            let junk = vec![b' '; inkstone_server::proto::MAX_ANSWER_BYTES + 1024];
            return axum::response::IntoResponse::into_response(([("content-type", "application/json")], junk));
        }
        next.run(request).await
    }))
}

/// The pull fails (its answer is too long to read, at every page size), and the
/// version is pushed all the same; the failure is in the report. (A failed pull used
/// to count as offline and skip the pushes.)
#[test]
fn a_failed_pull_does_not_hold_pushes_back() {
    let Some(server) = serve(Kind::Sled, Some(pulls_fail)) else { return };
    let (ws, tokens) = server.workspace(&["alice"]);
    let alice = client("Alice");
    alice.connect(&server.url, &tokens[0]);
    let project = alice.new_project("春", "一\n");
    alice.ok("sync.pause", json!({}));
    alice.save(&project, "一\n二\n");
    alice.ok("sync.resume", json!({}));
    let report = alice.engine.sync_runtime().run(alice.engine.kernel(), What::Both).unwrap();
    assert_eq!(report.pushed, 1, "{report:?}");
    assert_eq!(report.error_code.as_deref(), Some("ANSWER_TOO_LARGE"), "{report:?}");
    assert!(!report.offline, "{report:?}");
    assert_eq!(server.storage.changes(&ws, 0, 10).unwrap().versions.len(), 1);
}

/// A server from before byte paging: a page holds as many versions as asked.
fn pages_by_count(storage: Arc<dyn Storage>, app: axum::Router) -> axum::Router {
    app.layer(axum::middleware::from_fn(move |request: axum::extract::Request, next: axum::middleware::Next| {
        let storage = storage.clone();
        async move {
            if request.uri().path() != "/v1/changes" {
                return next.run(request).await;
            }
            let token = request.headers().get("authorization").and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Bearer ")).unwrap_or_default().to_owned();
            let query: std::collections::HashMap<String, u64> =
                request.uri().query().unwrap_or_default().split('&').filter_map(|kv| kv.split_once('=')).filter_map(|(k, v)| Some((k.to_owned(), v.parse().ok()?))).collect();
            let page = tokio::task::spawn_blocking(move || {
                let caller = storage.authenticate(&token).unwrap().unwrap();
                let limit = query.get("limit").copied().unwrap_or(100).clamp(1, 500) as usize;
                storage.changes(&caller.workspace_id, query.get("since").copied().unwrap_or(0), limit).unwrap()
            })
            .await
            .unwrap();
            axum::response::IntoResponse::into_response(axum::Json(page))
        }
    }))
}

/// Against an older server, whose page of 200 would be 24 MB, the client asks for
/// fewer versions at a time and gets them all.
#[test]
fn a_new_client_pulls_from_an_older_server_in_smaller_pages() {
    let Some(server) = serve(Kind::Sled, Some(pages_by_count)) else { return };
    let (_, tokens) = server.workspace(&["alice", "bob", "carol"]);
    let alice = client("Alice");
    let bob = client("Bob");
    alice.connect(&server.url, &tokens[0]);
    let project = alice.new_project("长稿", "起\n");
    alice.ok("version.create", json!({"projectId": project}));
    assert_eq!(push_all(&alice), 1);
    let mut head = 1;
    for n in 0..3 {
        head = push_eight_mb(&server.url, &tokens[2], &project, head, n);
    }
    bob.connect(&server.url, &tokens[1]);
    let pulled = bob.ok("sync.pull", json!({}));
    assert_eq!(pulled["pulled"], 4, "{}", pulled["status"]);
    assert_eq!(bob.versions(&project).len(), 4);
}
