//! The workspace server over real HTTP on loopback with the embedded sled store:
//! push and pull, stale bases, dedupe keys, roles, limits, restarts, and a randomised
//! isolation test over every endpoint × role × another workspace's ids.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use inkstone_server::http::{router, AppState, RateLimit};
use inkstone_server::proto::{IssuedToken, Role};
use inkstone_server::storage::{SledStorage, Storage};
use reqwest::{Client, StatusCode};
use serde_json::{json, Value};

struct Server {
    url: String,
    storage: Arc<SledStorage>,
    _runtime: tokio::runtime::Runtime,
}

fn start(dir: &std::path::Path, rate: RateLimit) -> Server {
    let storage = Arc::new(SledStorage::open(dir).unwrap());
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let state = AppState::new(storage.clone() as Arc<dyn Storage>, rate);
    let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    runtime.spawn(async move { axum::serve(listener, router(state)).await });
    Server { url, storage, _runtime: runtime }
}

fn block<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(f)
}

fn version(client_id: &str, text: &str) -> Value {
    let hash = format!("sha256:{}", "a".repeat(64));
    json!({"clientId": client_id, "title": "标题", "source": text, "author": "amy", "message": null, "contentHash": hash, "createdAt": "2026-11-23T00:00:00Z"})
}

async fn push(client: &Client, url: &str, token: &str, project: &str, key: &str, body: &Value) -> (StatusCode, Value) {
    let response = client.post(format!("{url}/v1/projects/{project}/push")).bearer_auth(token).header("Idempotency-Key", key).json(body).send().await.unwrap();
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

async fn get(client: &Client, url: &str, token: &str, path: &str) -> (StatusCode, Value) {
    let response = client.get(format!("{url}{path}")).bearer_auth(token).send().await.unwrap();
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

fn workspace(server: &Server, name: &str) -> (String, IssuedToken, IssuedToken, IssuedToken) {
    let (id, owner) = server.storage.create_workspace(name, "olive").unwrap();
    let editor = server.storage.invite(&id, "eddie", Role::Editor).unwrap();
    let viewer = server.storage.invite(&id, "vera", Role::Viewer).unwrap();
    (id, owner, editor, viewer)
}

#[test]
fn push_pull_stale_base_and_dedupe() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path(), RateLimit::default());
    let (_, _, editor, _) = workspace(&server, "团队");
    let token = editor.token.clone();
    let url = server.url.clone();
    block(async move {
        let client = Client::new();
        let body = json!({"base": 0, "versions": [version("v1", "一"), version("v2", "二")]});
        let (status, first) = push(&client, &url, &token, "prj_a", "k1", &body).await;
        assert_eq!(status, StatusCode::CREATED, "{first}");
        assert_eq!(first["head"], 2);
        assert_eq!(first["versions"][1]["number"], 2);

        // The same key and payload: the original result, nothing new.
        let (status, again) = push(&client, &url, &token, "prj_a", "k1", &body).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(again, first);
        // The same key with another payload: 422, nothing written.
        let other = json!({"base": 2, "versions": [version("v3", "三")]});
        let (status, error) = push(&client, &url, &token, "prj_a", "k1", &other).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(error["code"], "IDEMPOTENCY_KEY_REUSED");

        // A stale base: 409 with what the client has not seen.
        let stale = json!({"base": 1, "versions": [version("x1", "别的")]});
        let (status, error) = push(&client, &url, &token, "prj_a", "k2", &stale).await;
        assert_eq!(status, StatusCode::CONFLICT);
        assert_eq!(error["code"], "STALE_BASE");
        assert_eq!(error["stale"]["head"], 2);
        assert_eq!(error["stale"]["newer"].as_array().unwrap().len(), 1);
        assert_eq!(error["stale"]["newer"][0]["source"], "二");
        // The key of a refused push is free again: a retry on the right base runs.
        let retried = json!({"base": 2, "versions": [version("x1", "别的")]});
        let (status, result) = push(&client, &url, &token, "prj_a", "k2", &retried).await;
        assert_eq!(status, StatusCode::CREATED, "{result}");
        assert_eq!(result["head"], 3);

        let (status, changes) = get(&client, &url, &token, "/v1/changes?since=0").await;
        assert_eq!(status, StatusCode::OK);
        let numbers: Vec<u64> = changes["versions"].as_array().unwrap().iter().map(|v| v["number"].as_u64().unwrap()).collect();
        assert_eq!(numbers, [1, 2, 3], "no duplicates, no gaps");
        assert_eq!(changes["versions"][0]["pushedBy"], "eddie");
        let (_, page) = get(&client, &url, &token, "/v1/changes?since=1&limit=1").await;
        assert_eq!(page["versions"].as_array().unwrap().len(), 1);
        assert_eq!(page["more"], true);
        assert_eq!(page["cursor"], 2);
        let (_, head) = get(&client, &url, &token, "/v1/projects/prj_a").await;
        assert_eq!(head["head"], 3);
    });
}

#[test]
fn roles_tokens_and_limits() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path(), RateLimit::default());
    let (_, owner, editor, viewer) = workspace(&server, "团队");
    let url = server.url.clone();
    block(async move {
        let client = Client::new();
        let body = json!({"base": 0, "versions": [version("v1", "一")]});
        let (status, error) = push(&client, &url, &viewer.token, "prj_a", "k", &body).await;
        assert_eq!((status, error["code"].as_str()), (StatusCode::FORBIDDEN, Some("FORBIDDEN")));
        let invite = |token: String| {
            let client = client.clone();
            let url = url.clone();
            async move { client.post(format!("{url}/v1/members")).bearer_auth(token).json(&json!({"name": "new", "role": "viewer"})).send().await.unwrap() }
        };
        assert_eq!(invite(editor.token.clone()).await.status(), StatusCode::FORBIDDEN);
        let created = invite(owner.token.clone()).await;
        assert_eq!(created.status(), StatusCode::CREATED);
        let issued: Value = created.json().await.unwrap();
        assert!(issued["token"].as_str().unwrap().starts_with("isk_") && issued["token"].as_str().unwrap().len() == 68);
        let (_, members) = get(&client, &url, &viewer.token, "/v1/members").await;
        assert_eq!(members["members"].as_array().unwrap().len(), 4);

        // Revoked: 401 from then on.
        let revoke = client.delete(format!("{url}/v1/tokens/{}", editor.token_id)).bearer_auth(&owner.token).send().await.unwrap();
        assert_eq!(revoke.status(), StatusCode::NO_CONTENT);
        let (status, error) = push(&client, &url, &editor.token, "prj_a", "k", &body).await;
        assert_eq!((status, error["code"].as_str()), (StatusCode::UNAUTHORIZED, Some("UNAUTHORIZED")));
        let (status, _) = get(&client, &url, "isk_nonsense", "/v1/workspace").await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);

        // Bad input: a clear 4xx with a code, nothing written.
        let too_many = json!({"base": 0, "versions": (0..101).map(|i| version(&format!("v{i}"), "x")).collect::<Vec<_>>()});
        let (status, error) = push(&client, &url, &owner.token, "prj_a", "k3", &too_many).await;
        assert_eq!((status, error["code"].as_str()), (StatusCode::BAD_REQUEST, Some("VALIDATION")));
        let huge = json!({"base": 0, "versions": [version("v1", &"长".repeat(3_000_000))]});
        let (status, error) = push(&client, &url, &owner.token, "prj_a", "k4", &huge).await;
        assert_eq!((status, error["code"].as_str()), (StatusCode::PAYLOAD_TOO_LARGE, Some("TOO_LARGE")));
        let malformed = client.post(format!("{url}/v1/projects/prj_a/push")).bearer_auth(&owner.token).header("Idempotency-Key", "k5").body("{not json").send().await.unwrap();
        assert_eq!(malformed.status(), StatusCode::BAD_REQUEST);
        let no_key = client.post(format!("{url}/v1/projects/prj_a/push")).bearer_auth(&owner.token).json(&body).send().await.unwrap();
        assert_eq!(no_key.status(), StatusCode::BAD_REQUEST);
        let bad_id = client.post(format!("{url}/v1/projects/a%20b/push")).bearer_auth(&owner.token).header("Idempotency-Key", "k6").json(&body).send().await.unwrap();
        assert_eq!(bad_id.status(), StatusCode::BAD_REQUEST);
        let (_, changes) = get(&client, &url, &owner.token, "/v1/changes").await;
        assert_eq!(changes["versions"], json!([]), "nothing was written by bad input");
    });
}

#[test]
fn a_token_over_its_rate_gets_429_with_retry_after() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path(), RateLimit { per_second: 0.5, burst: 3.0 });
    let (_, _, _, viewer) = workspace(&server, "团队");
    let url = server.url.clone();
    block(async move {
        let client = Client::new();
        for _ in 0..3 {
            assert_eq!(get(&client, &url, &viewer.token, "/v1/workspace").await.0, StatusCode::OK);
        }
        let response = client.get(format!("{url}/v1/workspace")).bearer_auth(&viewer.token).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
        assert!(response.headers().get("retry-after").unwrap().to_str().unwrap().parse::<u64>().unwrap() >= 1);
    });
}

#[test]
fn acknowledged_pushes_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let token = {
        let server = start(dir.path(), RateLimit::default());
        let (_, _, editor, _) = workspace(&server, "团队");
        let url = server.url.clone();
        let token = editor.token.clone();
        block(async move {
            let body = json!({"base": 0, "versions": [version("v1", "一")]});
            assert_eq!(push(&Client::new(), &url, &token, "prj_a", "k", &body).await.0, StatusCode::CREATED);
        });
        editor.token
    };
    let server = start(dir.path(), RateLimit::default());
    let url = server.url.clone();
    block(async move {
        let (status, head) = get(&Client::new(), &url, &token, "/v1/projects/prj_a").await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(head["head"], 1);
    });
}

/// xorshift64*: a seeded generator, so a failing seed replays.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

/// Randomised: every endpoint × role × the other workspace's ids. No read or write
/// crosses a workspace; each refusal is the designed 403 or 404.
#[test]
fn no_request_crosses_a_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path(), RateLimit { per_second: 10_000.0, burst: 10_000.0 });
    let (_, a_owner, a_editor, a_viewer) = workspace(&server, "A");
    let (_, b_owner, b_editor, b_viewer) = workspace(&server, "B");
    let url = server.url.clone();
    let seed = std::env::var("INKSTONE_ISOLATION_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x5eed_u64);
    eprintln!("isolation: seed {seed}");
    block(async move {
        let client = Client::new();
        // Workspace B has a project and versions; A has its own.
        let body = json!({"base": 0, "versions": [version("b1", "B 的秘密")]});
        assert_eq!(push(&client, &url, &b_editor.token, "prj_b", "kb", &body).await.0, StatusCode::CREATED);
        let body = json!({"base": 0, "versions": [version("a1", "A 的文字")]});
        assert_eq!(push(&client, &url, &a_editor.token, "prj_a", "ka", &body).await.0, StatusCode::CREATED);
        let a_tokens = [(&a_owner, Role::Owner), (&a_editor, Role::Editor), (&a_viewer, Role::Viewer)];
        let mut rng = Rng(seed | 1);
        for round in 0..300 {
            let (caller, role) = a_tokens[(rng.next() % 3) as usize];
            let endpoint = rng.next() % 6;
            let key = format!("iso{round}");
            let (status, body) = match endpoint {
                0 => get(&client, &url, &caller.token, "/v1/projects/prj_b").await,
                1 => push(&client, &url, &caller.token, "prj_b", &key, &json!({"base": 1, "versions": [version("x", "入侵")]})).await,
                2 => {
                    let r = client.delete(format!("{url}/v1/tokens/{}", b_viewer.token_id)).bearer_auth(&caller.token).send().await.unwrap();
                    (r.status(), r.json().await.unwrap_or(Value::Null))
                }
                3 => get(&client, &url, &caller.token, "/v1/changes?since=0").await,
                4 => get(&client, &url, &caller.token, "/v1/members").await,
                _ => get(&client, &url, &caller.token, "/v1/workspace").await,
            };
            let text = body.to_string();
            assert!(!text.contains("B 的秘密"), "round {round} (seed {seed}): B's text reached A: {text}");
            match endpoint {
                0 => assert_eq!(status, StatusCode::NOT_FOUND, "round {round}: B's project read from A"),
                // A push to "prj_b" in A's workspace is A's own project of that name:
                // it never touches B's. A viewer is refused; others push to A's.
                1 if role == Role::Viewer => assert_eq!(status, StatusCode::FORBIDDEN),
                1 => assert!(status == StatusCode::CREATED || status == StatusCode::CONFLICT, "round {round}: {status}"),
                2 if role == Role::Owner => assert_eq!(status, StatusCode::NOT_FOUND, "round {round}: B's token revoked from A"),
                2 => assert_eq!(status, StatusCode::FORBIDDEN),
                3 => {
                    assert_eq!(status, StatusCode::OK);
                    assert!(body["versions"].as_array().unwrap().iter().all(|v| v["source"] != "B 的秘密"));
                }
                4 => {
                    assert_eq!(status, StatusCode::OK);
                    let names: Vec<&str> = body["members"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap()).collect();
                    assert!(!names.contains(&b_owner.member.id.as_str()) && !names.contains(&b_viewer.member.id.as_str()));
                }
                _ => assert_eq!(body["name"], "A"),
            }
        }
        // B is untouched: one project, one version, its viewer's token still works.
        let (status, head) = get(&client, &url, &b_viewer.token, "/v1/projects/prj_b").await;
        assert_eq!((status, head["head"].as_u64()), (StatusCode::OK, Some(1)));
        let (_, changes) = get(&client, &url, &b_owner.token, "/v1/changes?since=0").await;
        assert_eq!(changes["versions"].as_array().unwrap().len(), 1);
    });
}
