//! The workspace server over real HTTP on loopback, every test twice: on the embedded
//! sled store (`sled::…`) and on PostgreSQL in a throwaway cluster (`pg::…`): push and
//! pull, stale bases, dedupe keys (kept 30 days), roles, limits, restarts, concurrent
//! pushes through two servers on one store, and a randomised isolation test over every
//! endpoint × role × another workspace's ids.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use common::{Rng, Store};
use inkstone_server::http::{router, AppState, Limits, RateLimit};
use inkstone_server::proto::{IssuedToken, Role};
use inkstone_server::storage::{Storage, DEDUPE_KEEP_MILLIS};
use reqwest::{Client, StatusCode};
use serde_json::{json, Value};

on_both_storages!(
    push_pull_stale_base_and_dedupe,
    roles_tokens_and_limits,
    a_token_over_its_rate_gets_429_with_retry_after,
    acknowledged_pushes_survive_a_restart,
    no_request_crosses_a_workspace,
    dedupe_keys_are_kept_30_days_then_forgotten,
    concurrent_pushes_through_two_servers_on_one_store,
    a_versions_origin_is_kept_and_returned_and_optional,
    changes_come_in_pages_of_bytes_and_a_409_carries_at_most_a_page,
    every_error_is_the_json_error_shape,
    a_request_without_a_valid_token_is_refused_before_its_body_is_read,
    requests_without_a_valid_token_are_rate_limited_per_address,
    connections_are_capped_and_bodies_share_a_budget,
    owners_set_the_policy_every_member_reads_it_and_nobody_else_touches_it,
    performance_records_editors_write_members_read_last_writer_wins_snapshots_once,
    account_snapshots_are_written_once_a_changed_copy_is_a_conflict_and_only_readers_that_ask_get_them,
    ai_origin_detail_is_kept_apart_owners_see_the_workspace_editors_their_own,
);

/// PostgreSQL's schema: migrations are recorded, run once however many servers start,
/// and a database migrated by a newer server is refused rather than misread.
#[test]
fn pg_migrations_are_recorded_and_a_newer_schema_is_refused() {
    let Some(Store::Pg(url)) = Store::pg() else { return };
    let first = inkstone_server::storage::pg::PgStorage::connect(&url, 2).unwrap();
    let second = inkstone_server::storage::pg::PgStorage::connect(&url, 2).unwrap();
    let known: Vec<i32> = inkstone_server::storage::pg::MIGRATIONS.iter().map(|(v, _)| *v).collect();
    assert_eq!(first.applied_migrations().unwrap(), known);
    assert_eq!(second.applied_migrations().unwrap(), known, "a second start applies nothing again");
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    client.execute("INSERT INTO schema_migrations (version) VALUES (9999)", &[]).unwrap();
    let refused = inkstone_server::storage::pg::PgStorage::connect(&url, 2).err().expect("a newer schema is refused");
    assert!(refused.to_string().contains("9999"), "{refused}");
}

/// A database an older server wrote (schema 2, before origins) is migrated at start;
/// its versions read back without an origin.
#[test]
fn pg_versions_of_an_older_schema_read_without_an_origin() {
    let Some(Store::Pg(url)) = Store::pg() else { return };
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    client.batch_execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())").unwrap();
    for (version, sql) in inkstone_server::storage::pg::MIGRATIONS.iter().filter(|(v, _)| *v <= 2) {
        client.batch_execute(sql).unwrap();
        client.execute("INSERT INTO schema_migrations (version) VALUES ($1)", &[version]).unwrap();
    }
    client
        .batch_execute(
            "INSERT INTO workspaces (id, name, cursor) VALUES ('w1', '团队', 1); \
             INSERT INTO projects (workspace_id, project_id, head, title) VALUES ('w1', 'prj_a', 1, '题'); \
             INSERT INTO versions (workspace_id, project_id, number, cursor, client_id, title, source, author, message, content_hash, created_at, pushed_by) \
             VALUES ('w1', 'prj_a', 1, 1, 'ver_1', '题', '文', 'amy', NULL, 'sha256:x', '2026-11-23T00:00:00Z', 'amy');",
        )
        .unwrap();
    let storage = inkstone_server::storage::pg::PgStorage::connect(&url, 2).unwrap();
    let known: Vec<i32> = inkstone_server::storage::pg::MIGRATIONS.iter().map(|(v, _)| *v).collect();
    assert_eq!(storage.applied_migrations().unwrap(), known);
    let changes = storage.changes("w1", 0, 10).unwrap();
    assert_eq!((changes.versions.len(), changes.versions[0].origin.as_deref()), (1, None));
    assert_eq!(changes.features, ["versionOrigin", "workspacePolicy", "performanceData", "aiActivity", "accountSnapshots"]);
}

struct Server {
    url: String,
    storage: Arc<dyn Storage>,
    _runtime: tokio::runtime::Runtime,
}

fn start(store: &Store, rate: RateLimit) -> Server {
    serve(store.open(), rate)
}

fn serve(storage: Arc<dyn Storage>, rate: RateLimit) -> Server {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let state = AppState::new(storage.clone(), rate);
    let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    runtime.spawn(async move { axum::serve(listener, router(state)).await });
    Server { url, storage, _runtime: runtime }
}

/// A server as `inkstone-server serve` runs it: with its caps on connections and
/// client addresses.
fn start_limited(store: &Store, rate: RateLimit, limits: Limits) -> Server {
    let storage = store.open();
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let state = AppState::with_limits(storage.clone(), rate, limits);
    let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    runtime.spawn(inkstone_server::http::serve(listener, state, std::future::pending()));
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

fn push_pull_stale_base_and_dedupe(store: Store) {
    let server = start(&store, RateLimit::default());
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

/// A version's origin (how the client made it: a resolution, ...) is kept and comes
/// back on pull and in a 409; it is optional (older clients send none, and get none
/// back), of the wire's form, and the server says it keeps it (`features`), also
/// after a restart on the same data.
fn a_versions_origin_is_kept_and_returned_and_optional(store: Store) {
    let server = start(&store, RateLimit::default());
    let (_, _, editor, _) = workspace(&server, "团队");
    let token = editor.token.clone();
    let url = server.url.clone();
    block(async move {
        let client = Client::new();
        let (status, info) = get(&client, &url, &token, "/v1/workspace").await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(info["features"], json!(["versionOrigin", "workspacePolicy", "performanceData", "aiActivity", "accountSnapshots"]));
        let mut resolution = version("v2", "二");
        resolution["origin"] = json!("syncResolution");
        let body = json!({"base": 0, "versions": [version("v1", "一"), resolution]});
        let (status, pushed) = push(&client, &url, &token, "prj_o", "o1", &body).await;
        assert_eq!(status, StatusCode::CREATED, "{pushed}");
        // The same key and payload replays; the origin is part of the payload.
        assert_eq!(push(&client, &url, &token, "prj_o", "o1", &body).await.0, StatusCode::OK);
        let (_, changes) = get(&client, &url, &token, "/v1/changes?since=0").await;
        assert_eq!(changes["features"], json!(["versionOrigin", "workspacePolicy", "performanceData", "aiActivity", "accountSnapshots"]));
        let versions = changes["versions"].as_array().unwrap();
        assert!(versions[0].get("origin").is_none(), "no origin sent, none returned: {}", versions[0]);
        assert_eq!(versions[1]["origin"], "syncResolution");
        // A stale push hears of the newer versions with their origins.
        let (status, stale) = push(&client, &url, &token, "prj_o", "o2", &json!({"base": 1, "versions": [version("x", "别")]})).await;
        assert_eq!(status, StatusCode::CONFLICT);
        assert_eq!(stale["stale"]["newer"][0]["origin"], "syncResolution");
        // An origin not of the wire's form is refused, and nothing is written.
        let mut bad = version("v3", "三");
        bad["origin"] = json!("sk-not a kind");
        let (status, error) = push(&client, &url, &token, "prj_o", "o3", &json!({"base": 2, "versions": [bad]})).await;
        assert_eq!((status, error["code"].as_str()), (StatusCode::BAD_REQUEST, Some("VALIDATION")));
        let (_, head) = get(&client, &url, &token, "/v1/projects/prj_o").await;
        assert_eq!(head["head"], 2);
    });
    // What was stored reads back the same from a new server on the data.
    drop(server);
    let again = start(&store, RateLimit::default());
    let token = editor.token.clone();
    let url = again.url.clone();
    block(async move {
        let (_, changes) = get(&Client::new(), &url, &token, "/v1/changes?since=0").await;
        let origins: Vec<Option<&str>> = changes["versions"].as_array().unwrap().iter().map(|v| v["origin"].as_str()).collect();
        assert_eq!(origins, [None, Some("syncResolution")]);
    });
}

fn roles_tokens_and_limits(store: Store) {
    let server = start(&store, RateLimit::default());
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
        // The list names every member's tokens by id, revoked ones marked; never a
        // token or its hash.
        let (_, members) = get(&client, &url, &owner.token, "/v1/members").await;
        let eddie = members["members"].as_array().unwrap().iter().find(|m| m["name"] == "eddie").unwrap().clone();
        assert_eq!(eddie["tokens"].as_array().unwrap().len(), 1, "{eddie}");
        assert_eq!((eddie["tokens"][0]["tokenId"].as_str(), eddie["tokens"][0]["revoked"].as_bool()), (Some(editor.token_id.as_str()), Some(true)));
        assert!(eddie["tokens"][0]["issuedAt"].as_u64().is_some_and(|ms| ms > 1_700_000_000_000), "{eddie}");
        let listed = members.to_string();
        for secret in [&owner.token, &editor.token, &viewer.token] {
            assert!(!listed.contains(&secret[4..]), "a token is in the member list");
            assert!(!listed.contains(&inkstone_server::storage::sha256_hex(secret.as_bytes())), "a token hash is in the member list");
        }
        let (status, error) = push(&client, &url, &editor.token, "prj_a", "k", &body).await;
        assert_eq!((status, error["code"].as_str()), (StatusCode::UNAUTHORIZED, Some("UNAUTHORIZED")));
        let (status, _) = get(&client, &url, "isk_nonsense", "/v1/workspace").await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);

        // Bad input: a clear 4xx with a code, nothing written.
        let too_many = json!({"base": 0, "versions": (0..101).map(|i| version(&format!("v{i}"), "x")).collect::<Vec<_>>()});
        let (status, error) = push(&client, &url, &owner.token, "prj_a", "k3", &too_many).await;
        assert_eq!((status, error["code"].as_str()), (StatusCode::BAD_REQUEST, Some("VALIDATION")));
        let huge = json!({"base": 0, "versions": [version("v1", &"长".repeat(3_000_000))]});
        // Refused from its declared length: the answer is read on a raw connection that
        // sends no body (a client still writing could fail on the closed connection).
        let length = serde_json::to_vec(&huge).unwrap().len();
        let head = format!(
            "POST /v1/projects/prj_a/push HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {}\r\nidempotency-key: k4\r\ncontent-type: application/json\r\ncontent-length: {length}\r\n\r\n",
            owner.token
        );
        let answer = raw(&url, &head, std::time::Duration::from_secs(5)).await.expect("too large: no answer");
        let (answer_head, answer_body) = answer.split_once("\r\n\r\n").expect("a head and a body");
        let status = answer_head.split(' ').nth(1).and_then(|code| code.parse::<u16>().ok()).and_then(|code| StatusCode::from_u16(code).ok());
        let error: Value = serde_json::from_str(answer_body).unwrap_or(Value::Null);
        assert_eq!((status, error["code"].as_str()), (Some(StatusCode::PAYLOAD_TOO_LARGE), Some("TOO_LARGE")));
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

fn a_token_over_its_rate_gets_429_with_retry_after(store: Store) {
    let server = start(&store, RateLimit { per_second: 0.5, burst: 3.0 });
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

fn acknowledged_pushes_survive_a_restart(store: Store) {
    let token = {
        let server = start(&store, RateLimit::default());
        let (_, _, editor, _) = workspace(&server, "团队");
        let url = server.url.clone();
        let token = editor.token.clone();
        block(async move {
            let body = json!({"base": 0, "versions": [version("v1", "一")]});
            assert_eq!(push(&Client::new(), &url, &token, "prj_a", "k", &body).await.0, StatusCode::CREATED);
        });
        editor.token
    };
    let server = start(&store, RateLimit::default());
    let url = server.url.clone();
    block(async move {
        let (status, head) = get(&Client::new(), &url, &token, "/v1/projects/prj_a").await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(head["head"], 1);
    });
}

/// Randomised: every endpoint × role × the other workspace's ids. No read or write
/// crosses a workspace; each refusal is the designed 403 or 404.
fn no_request_crosses_a_workspace(store: Store) {
    let server = start(&store, RateLimit { per_second: 10_000.0, burst: 10_000.0 });
    let (_, a_owner, a_editor, a_viewer) = workspace(&server, "A");
    let (_, b_owner, b_editor, b_viewer) = workspace(&server, "B");
    let url = server.url.clone();
    let seed = std::env::var("INKSTONE_ISOLATION_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x5eed_u64);
    eprintln!("isolation: seed {seed}");
    block(async move {
        let client = Client::new();
        // Workspace B has a project and versions; A has its own.
        let shared = json!({"providers": {"kind": "any"}, "performanceContext": true, "shareActivity": true});
        assert_eq!(put_policy(&client, &url, &b_owner.token, &shared).await.0, StatusCode::OK);
        let mut b1 = version("b1", "B 的秘密");
        b1["ai"] = ai_detail("B 的秘密模型", 1_795_000_000_000);
        let body = json!({"base": 0, "versions": [b1]});
        assert_eq!(push(&client, &url, &b_editor.token, "prj_b", "kb", &body).await.0, StatusCode::CREATED);
        let body = json!({"base": 0, "versions": [version("a1", "A 的文字")]});
        assert_eq!(push(&client, &url, &a_editor.token, "prj_a", "ka", &body).await.0, StatusCode::CREATED);
        let a_tokens = [(&a_owner, Role::Owner), (&a_editor, Role::Editor), (&a_viewer, Role::Viewer)];
        let mut rng = Rng(seed | 1);
        for round in 0..300 {
            let (caller, role) = a_tokens[(rng.next() % 3) as usize];
            let endpoint = rng.next() % 7;
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
                5 => get(&client, &url, &caller.token, "/v1/ai-activity").await,
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
                5 if role == Role::Viewer => assert_eq!(status, StatusCode::FORBIDDEN),
                5 => {
                    assert_eq!(status, StatusCode::OK);
                    // A shares nothing: B's detail (its model "B 的秘密模型") never shows.
                    assert_eq!(body["entries"], json!([]), "round {round}: B's activity reached A");
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

const DAY_MILLIS: u64 = 24 * 3600 * 1000;

fn now_millis() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64
}

/// A dedupe key answers with its original result for 30 days; after that the server
/// forgets it (the same request then runs again: here its base is stale, so 409).
fn dedupe_keys_are_kept_30_days_then_forgotten(store: Store) {
    let server = start(&store, RateLimit::default());
    let (_, _, editor, _) = workspace(&server, "团队");
    let url = server.url.clone();
    let token = editor.token.clone();
    let body = json!({"base": 0, "versions": [version("v1", "一")]});
    let (status, first) = block(async { push(&Client::new(), &url, &token, "prj_a", "k1", &body).await });
    assert_eq!(status, StatusCode::CREATED, "{first}");
    let now = now_millis();
    assert_eq!(server.storage.prune_dedupe(now + DEDUPE_KEEP_MILLIS - DAY_MILLIS).unwrap(), 0, "a 29-day-old key is kept");
    let (status, again) = block(async { push(&Client::new(), &url, &token, "prj_a", "k1", &body).await });
    assert_eq!((status, &again), (StatusCode::OK, &first), "the original result after 29 days");
    assert_eq!(server.storage.prune_dedupe(now + DEDUPE_KEEP_MILLIS + DAY_MILLIS).unwrap(), 1, "a 31-day-old key is forgotten");
    let (status, error) = block(async { push(&Client::new(), &url, &token, "prj_a", "k1", &body).await });
    assert_eq!((status, error["code"].as_str()), (StatusCode::CONFLICT, Some("STALE_BASE")));
    let (_, changes) = block(async { get(&Client::new(), &url, &token, "/v1/changes").await });
    assert_eq!(changes["versions"].as_array().unwrap().len(), 1, "nothing was written twice");
}

/// One client's pushes: `pushes` pushes of 1–3 versions to two projects, each sent to
/// one of the servers at random, a quarter of them to both at once with the same key
/// (never numbered twice), some re-sent after their answer (the original result). A
/// stale base is answered by pushing again on the server's head. Returns what was
/// acknowledged: (project, client id, number, cursor).
async fn pusher(c: usize, urls: [String; 2], token: String, seed: u64, pushes: usize) -> Vec<(String, String, u64, u64)> {
    let client = Client::new();
    let mut rng = Rng((seed ^ (c as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15)) | 1);
    let mut bases: BTreeMap<&str, u64> = BTreeMap::from([("prj_a", 0), ("prj_b", 0)]);
    let mut acked = Vec::new();
    let mut attempt = 0;
    for i in 0..pushes {
        let project = ["prj_a", "prj_b"][(rng.next() % 2) as usize];
        let versions: Vec<Value> = (0..1 + rng.next() % 3).map(|j| version(&format!("c{c}-{i}-{j}"), &format!("客户 {c} 第 {i} 次 {j}"))).collect();
        loop {
            attempt += 1;
            let key = format!("c{c}-a{attempt}");
            let body = json!({"base": bases[project], "versions": versions});
            let pick = (rng.next() % 2) as usize;
            let (status, result) = if rng.next().is_multiple_of(4) {
                let (x, y) = tokio::join!(push(&client, &urls[0], &token, project, &key, &body), push(&client, &urls[1], &token, project, &key, &body));
                let in_flight = |r: &(StatusCode, Value)| r.0 == StatusCode::CONFLICT && r.1["code"] == "IN_FLIGHT";
                match (x, y) {
                    (a, b) if a.0 == StatusCode::CREATED && b.0 == StatusCode::CREATED => panic!("one key numbered twice: {} and {}", a.1, b.1),
                    (a, b) | (b, a) if a.0 == StatusCode::CREATED => {
                        assert!(in_flight(&b) || (b.0 == StatusCode::OK && b.1 == a.1), "the twin of a push got {} {}", b.0, b.1);
                        a
                    }
                    (a, b) => {
                        assert!(!(in_flight(&a) && in_flight(&b)), "both twins in flight");
                        if in_flight(&a) {
                            b
                        } else {
                            a
                        }
                    }
                }
            } else {
                push(&client, &urls[pick], &token, project, &key, &body).await
            };
            if status == StatusCode::CONFLICT && result["code"] == "STALE_BASE" {
                bases.insert(project, result["stale"]["head"].as_u64().unwrap());
                continue;
            }
            assert_eq!(status, StatusCode::CREATED, "client {c}: {result}");
            if rng.next().is_multiple_of(5) {
                let again = push(&client, &urls[1 - pick], &token, project, &key, &body).await;
                assert_eq!(again, (StatusCode::OK, result.clone()), "a re-sent push gets its original result from the other server");
            }
            bases.insert(project, result["head"].as_u64().unwrap());
            for v in result["versions"].as_array().unwrap() {
                acked.push((project.to_owned(), v["clientId"].as_str().unwrap().to_owned(), v["number"].as_u64().unwrap(), v["cursor"].as_u64().unwrap()));
            }
            break;
        }
    }
    acked
}

/// Every version on the server, by cursor; checks the workspace's cursors run 1..=n and
/// each project's numbers 1..=head, and no client id is there twice.
async fn history(client: &Client, url: &str, token: &str) -> Vec<Value> {
    let mut all = Vec::new();
    let mut since = 0;
    loop {
        let (status, page) = get(client, url, token, &format!("/v1/changes?since={since}&limit=500")).await;
        assert_eq!(status, StatusCode::OK, "{page}");
        all.extend(page["versions"].as_array().unwrap().iter().cloned());
        since = page["cursor"].as_u64().unwrap();
        if page["more"] != true {
            break;
        }
    }
    let cursors: Vec<u64> = all.iter().map(|v| v["cursor"].as_u64().unwrap()).collect();
    assert_eq!(cursors, (1..=all.len() as u64).collect::<Vec<_>>(), "change cursors without gaps or duplicates");
    let mut by_project: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for v in &all {
        by_project.entry(v["projectId"].as_str().unwrap().to_owned()).or_default().push(v["number"].as_u64().unwrap());
    }
    for (project, numbers) in &by_project {
        assert_eq!(numbers, &(1..=numbers.len() as u64).collect::<Vec<_>>(), "{project}: numbers without gaps or duplicates");
        let (_, head) = get(client, url, token, &format!("/v1/projects/{project}")).await;
        assert_eq!(head["head"].as_u64(), Some(numbers.len() as u64));
    }
    let ids: HashSet<&str> = all.iter().map(|v| v["clientId"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), all.len(), "a version is on the server twice");
    all
}

/// Two servers on one store (PostgreSQL: each with its own pool, as two processes;
/// sled: one process holds the folder, so they share it), four clients pushing to
/// both at once: every acknowledged version is there once, with the number and cursor
/// it was acknowledged with, and nothing else is.
fn concurrent_pushes_through_two_servers_on_one_store(store: Store) {
    let fast = RateLimit { per_second: 1e6, burst: 1e6 };
    let first = store.open();
    let second = if store.is_pg() { store.open() } else { first.clone() };
    let a = serve(first, fast);
    let b = serve(second, fast);
    let (_, _, editor, _) = workspace(&a, "团队");
    let urls = [a.url.clone(), b.url.clone()];
    let seed = std::env::var("INKSTONE_CONCURRENCY_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0xc0ffee_u64);
    eprintln!("concurrency: seed {seed}");
    block(async move {
        let tasks: Vec<_> = (0..4).map(|c| tokio::spawn(pusher(c, urls.clone(), editor.token.clone(), seed, 12))).collect();
        let mut acked = Vec::new();
        for task in tasks {
            acked.extend(task.await.unwrap());
        }
        for url in &urls {
            let all = history(&Client::new(), url, &editor.token).await;
            let on_server: BTreeMap<String, (String, u64, u64)> = all
                .iter()
                .map(|v| (v["clientId"].as_str().unwrap().to_owned(), (v["projectId"].as_str().unwrap().to_owned(), v["number"].as_u64().unwrap(), v["cursor"].as_u64().unwrap())))
                .collect();
            assert_eq!(on_server.len(), acked.len(), "exactly the acknowledged versions are on the server");
            for (project, client_id, number, cursor) in &acked {
                assert_eq!(on_server.get(client_id), Some(&(project.clone(), *number, *cursor)), "{client_id} as acknowledged");
            }
        }
    });
}

/// A source of about `bytes` bytes (ASCII lines, so its JSON is as long), marked `n`.
fn long_text(n: usize, bytes: usize) -> String {
    let line = format!("version {n}: a long article, line after line of it.\n");
    line.repeat(bytes / line.len())
}

/// Versions of 3 MB and 8 MB: a page of changes holds at most `MAX_PAGE_BYTES` of
/// them, a larger one comes alone, and every answer stays within what a client reads;
/// a 409 carries at most one page of the newer versions and says there are more.
fn changes_come_in_pages_of_bytes_and_a_409_carries_at_most_a_page(store: Store) {
    use inkstone_server::proto::{MAX_ANSWER_BYTES, MAX_PAGE_BYTES};
    let server = start(&store, RateLimit::default());
    let (_, _, editor, viewer) = workspace(&server, "团队");
    let url = server.url.clone();
    block(async move {
        let client = Client::new();
        let sizes = [3_000_000, 3_000_000, 8_000_000, 3_000_000, 8_000_000, 3_000_000, 3_000_000, 3_000_000];
        for (n, bytes) in sizes.iter().enumerate() {
            let body = json!({"base": n, "versions": [version(&format!("v{n}"), &long_text(n, *bytes))]});
            let (status, answer) = push(&client, &url, &editor.token, "prj_big", &format!("k{n}"), &body).await;
            assert_eq!(status, StatusCode::CREATED, "{answer}");
        }
        // Page by page, as a client asks (200 at a time).
        let mut since = 0;
        let mut seen = Vec::new();
        loop {
            let response = client.get(format!("{url}/v1/changes?since={since}&limit=200")).bearer_auth(&viewer.token).send().await.unwrap();
            assert_eq!(response.status(), StatusCode::OK);
            let bytes = response.bytes().await.unwrap();
            let page: Value = serde_json::from_slice(&bytes).unwrap();
            let versions = page["versions"].as_array().unwrap();
            assert!(!versions.is_empty());
            assert!(bytes.len() <= MAX_ANSWER_BYTES, "an answer of {} bytes", bytes.len());
            let held: usize = versions.iter().map(|v| v.to_string().len()).sum();
            assert!(versions.len() == 1 || held <= MAX_PAGE_BYTES, "{} versions of {held} bytes in one page", versions.len());
            seen.extend(versions.iter().map(|v| v["source"].as_str().unwrap().len()));
            since = page["cursor"].as_u64().unwrap();
            if page["more"] != true {
                break;
            }
        }
        let expected: Vec<usize> = sizes.iter().enumerate().map(|(n, b)| long_text(n, *b).len()).collect();
        assert_eq!(seen, expected, "every version once, in order");
        // A push on the first version's base: the 409 names the head, and carries the
        // newer versions only up to a page.
        let (status, error) = push(&client, &url, &editor.token, "prj_big", "stale", &json!({"base": 1, "versions": [version("x", "别的")]})).await;
        assert_eq!((status, error["code"].as_str()), (StatusCode::CONFLICT, Some("STALE_BASE")));
        let stale = &error["stale"];
        assert_eq!((stale["base"].as_u64(), stale["head"].as_u64(), stale["more"].as_bool()), (Some(1), Some(8), Some(true)));
        let newer = stale["newer"].as_array().unwrap();
        assert_eq!(newer.iter().map(|v| v["number"].as_u64().unwrap()).collect::<Vec<_>>(), [2], "one page: the 3 MB version; the 8 MB one would pass it");
        // On the head's base before: everything newer fits, and nothing more is said.
        let (_, error) = push(&client, &url, &editor.token, "prj_big", "stale2", &json!({"base": 7, "versions": [version("x", "别的")]})).await;
        assert_eq!(error["stale"]["newer"].as_array().unwrap().len(), 1);
        assert!(error["stale"].get("more").is_none(), "{}", error["stale"]["head"]);
    });
}

/// Every error the server answers is `{code, message, hints}` JSON, also the router's
/// own refusals (a bad query, a method, an unknown route, bad JSON, a body too large).
fn every_error_is_the_json_error_shape(store: Store) {
    let server = start(&store, RateLimit::default());
    let (_, owner, editor, _) = workspace(&server, "团队");
    let url = server.url.clone();
    block(async move {
        let client = Client::new();
        let t = &editor.token;
        let cases: Vec<(&str, reqwest::RequestBuilder, StatusCode, &str)> = vec![
            ("since=-1", client.get(format!("{url}/v1/changes?since=-1")).bearer_auth(t), StatusCode::BAD_REQUEST, "VALIDATION"),
            ("since=x", client.get(format!("{url}/v1/changes?since=x&limit=2")).bearer_auth(t), StatusCode::BAD_REQUEST, "VALIDATION"),
            ("limit=-3", client.get(format!("{url}/v1/changes?limit=-3")).bearer_auth(t), StatusCode::BAD_REQUEST, "VALIDATION"),
            ("PUT on changes", client.put(format!("{url}/v1/changes")).bearer_auth(t), StatusCode::METHOD_NOT_ALLOWED, "METHOD_NOT_ALLOWED"),
            ("GET on push", client.get(format!("{url}/v1/projects/prj_a/push")).bearer_auth(t), StatusCode::METHOD_NOT_ALLOWED, "METHOD_NOT_ALLOWED"),
            ("DELETE on health", client.delete(format!("{url}/v1/health")), StatusCode::METHOD_NOT_ALLOWED, "METHOD_NOT_ALLOWED"),
            ("unknown route", client.get(format!("{url}/v2/nothing")).bearer_auth(t), StatusCode::NOT_FOUND, "NOT_FOUND"),
            ("unknown route, no token", client.get(format!("{url}/nothing")), StatusCode::UNAUTHORIZED, "UNAUTHORIZED"),
            (
                "bad JSON",
                client.post(format!("{url}/v1/projects/prj_a/push")).bearer_auth(t).header("Idempotency-Key", "j").body("{not json"),
                StatusCode::BAD_REQUEST,
                "VALIDATION",
            ),
            ("bad invite", client.post(format!("{url}/v1/members")).bearer_auth(&owner.token).body("[1, 2"), StatusCode::BAD_REQUEST, "VALIDATION"),
            ("bad path", client.get(format!("{url}/v1/projects/%FF%FE")).bearer_auth(t), StatusCode::BAD_REQUEST, "VALIDATION"),
            ("no token", client.get(format!("{url}/v1/workspace")), StatusCode::UNAUTHORIZED, "UNAUTHORIZED"),
        ];
        for (what, request, status, code) in cases {
            let response = match request.send().await {
                Ok(response) => response,
                Err(e) => panic!("{what}: {e}"),
            };
            assert_eq!(response.status(), status, "{what}");
            let content_type = response.headers().get("content-type").map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default();
            assert!(content_type.starts_with("application/json"), "{what}: {content_type}");
            let body: Value = response.json().await.unwrap_or_else(|e| panic!("{what}: not JSON: {e}"));
            assert_eq!(body["code"], code, "{what}: {body}");
            assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()), "{what}: {body}");
            assert!(body["hints"].is_array(), "{what}: {body}");
        }
        // Too large: refused from its declared length, so the answer can come while a
        // client is still sending (and a client that does not read it before its write
        // fails sees only a broken pipe); read on a raw connection that sends no body.
        let head = format!(
            "POST /v1/projects/prj_a/push HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {t}\r\nidempotency-key: big\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            9 * 1024 * 1024
        );
        let answer = raw(&url, &head, std::time::Duration::from_secs(5)).await.expect("too large: no answer");
        let (head, body) = answer.split_once("\r\n\r\n").expect("too large: a head and a body");
        assert!(head.starts_with("HTTP/1.1 413"), "too large: {head}");
        assert!(head.to_ascii_lowercase().contains("content-type: application/json"), "too large: {head}");
        let body: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("too large: not JSON: {e}: {body}"));
        assert_eq!(body["code"], "TOO_LARGE", "too large: {body}");
        assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()), "too large: {body}");
        assert!(body["hints"].is_array(), "too large: {body}");
        let (_, changes) = get(&client, &url, t, "/v1/changes").await;
        assert_eq!(changes["versions"], json!([]), "nothing was written");
    });
}

/// Sends `head` on a raw connection and reads what comes back within `wait`.
async fn raw(url: &str, head: &str, wait: std::time::Duration) -> Option<String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(url.trim_start_matches("http://")).await.unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    let read = async {
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    answer.extend_from_slice(&buf[..n]);
                    let text = String::from_utf8_lossy(&answer);
                    if let Some(end) = text.find("\r\n\r\n") {
                        let length = text[..end].lines().find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length: ").and_then(|n| n.trim().parse::<usize>().ok()));
                        if length.is_some_and(|n| answer.len() >= end + 4 + n) {
                            break;
                        }
                    }
                }
            }
        }
    };
    tokio::time::timeout(wait, read).await.ok()?;
    Some(String::from_utf8_lossy(&answer).into_owned())
}

/// A push without a valid token, or from a viewer, is answered from its headers: the
/// answer comes while the client has not sent a byte of its 8 MB body.
fn a_request_without_a_valid_token_is_refused_before_its_body_is_read(store: Store) {
    let server = start(&store, RateLimit::default());
    let (_, _, _, viewer) = workspace(&server, "团队");
    let url = server.url.clone();
    block(async move {
        let wait = std::time::Duration::from_secs(5);
        for (token, status) in [("isk_wrong", "401"), (viewer.token.as_str(), "403")] {
            let head = format!(
                "POST /v1/projects/prj_a/push HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {token}\r\nidempotency-key: k\r\ncontent-type: application/json\r\ncontent-length: 8000000\r\n\r\n"
            );
            let answer = raw(&url, &head, wait).await.unwrap_or_else(|| panic!("no answer without the body (expected {status})"));
            assert!(answer.starts_with(&format!("HTTP/1.1 {status}")), "{answer}");
            assert!(answer.contains("\"code\""), "{answer}");
        }
        let head = "POST /v1/members HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 8000000\r\n\r\n";
        let answer = raw(&url, head, wait).await.expect("no answer without the body");
        assert!(answer.starts_with("HTTP/1.1 401") && answer.contains("UNAUTHORIZED"), "{answer}");
    });
}

/// Requests without a valid token count against their address; over the rate they are
/// 429 in the JSON shape with Retry-After, before any token is looked up.
fn requests_without_a_valid_token_are_rate_limited_per_address(store: Store) {
    let limits = Limits { strangers: RateLimit { per_second: 0.2, burst: 4.0 }, ..Limits::default() };
    let server = start_limited(&store, RateLimit::default(), limits);
    let (_, _, editor, _) = workspace(&server, "团队");
    let url = server.url.clone();
    block(async move {
        let client = Client::new();
        // A member's requests do not count.
        for _ in 0..10 {
            assert_eq!(get(&client, &url, &editor.token, "/v1/workspace").await.0, StatusCode::OK);
        }
        assert_eq!(client.get(format!("{url}/v1/health")).send().await.unwrap().status(), StatusCode::OK);
        for _ in 0..3 {
            assert_eq!(get(&client, &url, "isk_guess", "/v1/workspace").await.0, StatusCode::UNAUTHORIZED);
        }
        let response = client.get(format!("{url}/v1/workspace")).bearer_auth("isk_guess").send().await.unwrap();
        assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
        assert!(response.headers().get("retry-after").unwrap().to_str().unwrap().parse::<u64>().unwrap() >= 1);
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["code"], "RATE_LIMITED");
        assert_eq!(client.get(format!("{url}/v1/health")).send().await.unwrap().status(), StatusCode::TOO_MANY_REQUESTS);
    });
}

/// At most `max_connections` are served at once (the next waits until one closes), and
/// bodies being read share one budget of bytes: a body that finds no room is 503.
fn connections_are_capped_and_bodies_share_a_budget(store: Store) {
    use tokio::io::AsyncWriteExt;
    let limits = Limits { max_connections: 2, body_budget: inkstone_server::proto::MAX_BODY_BYTES, busy_wait: std::time::Duration::from_millis(300), ..Limits::default() };
    let server = start_limited(&store, RateLimit::default(), limits);
    let (_, _, editor, _) = workspace(&server, "团队");
    let url = server.url.clone();
    block(async move {
        let addr = url.trim_start_matches("http://").to_owned();
        let client = Client::builder().timeout(std::time::Duration::from_millis(1500)).build().unwrap();
        // Two connections held open: a third request waits.
        let first = tokio::net::TcpStream::connect(&addr).await.unwrap();
        let mut second = tokio::net::TcpStream::connect(&addr).await.unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        assert!(client.get(format!("{url}/v1/health")).send().await.is_err(), "a third connection was served");
        drop(first);
        assert_eq!(client.get(format!("{url}/v1/health")).send().await.unwrap().status(), StatusCode::OK);
        // The second holds the whole body budget with a push it has not finished.
        let head = format!(
            "POST /v1/projects/prj_a/push HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {}\r\nidempotency-key: slow\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{{",
            editor.token,
            inkstone_server::proto::MAX_BODY_BYTES
        );
        second.write_all(head.as_bytes()).await.unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        let body = json!({"base": 0, "versions": [version("v1", "一")]});
        let (status, error) = push(&client, &url, &editor.token, "prj_a", "k1", &body).await;
        assert_eq!((status, error["code"].as_str()), (StatusCode::SERVICE_UNAVAILABLE, Some("BUSY")), "{error}");
        drop(second);
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        let (status, answer) = push(&client, &url, &editor.token, "prj_a", "k1", &body).await;
        assert_eq!(status, StatusCode::CREATED, "{answer}");
    });
}

async fn put_policy(client: &Client, url: &str, token: &str, body: &Value) -> (StatusCode, Value) {
    let response = client.put(format!("{url}/v1/policy")).bearer_auth(token).json(body).send().await.unwrap();
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// The policy's matrix: every member reads it (the default until set), only an owner
/// sets it, bad input changes nothing, another workspace's tokens see their own, and a
/// restart keeps it. The server lists the feature.
fn owners_set_the_policy_every_member_reads_it_and_nobody_else_touches_it(store: Store) {
    let server = start(&store, RateLimit { per_second: 10_000.0, burst: 10_000.0 });
    let (_, owner, editor, viewer) = workspace(&server, "A");
    let (_, other_owner, _, _) = workspace(&server, "B");
    let url = server.url.clone();
    let (owner_token, editor_token) = (owner.token.clone(), editor.token.clone());
    block(async move {
        let client = Client::new();
        let (_, info) = get(&client, &url, &viewer.token, "/v1/workspace").await;
        assert!(info["features"].as_array().unwrap().iter().any(|f| f == "workspacePolicy"), "{info}");
        for token in [&owner.token, &editor.token, &viewer.token] {
            let (status, record) = get(&client, &url, token, "/v1/policy").await;
            assert_eq!(status, StatusCode::OK);
            assert_eq!(record, json!({"policy": {"providers": {"kind": "any"}, "performanceContext": true, "shareActivity": false}}));
        }
        let wanted = json!({"providers": {"kind": "hosts", "hosts": ["llm.corp.example"]}, "performanceContext": false, "monthlyCapUsd": 5.0, "shareActivity": true});
        for token in [&editor.token, &viewer.token] {
            let (status, error) = put_policy(&client, &url, token, &wanted).await;
            assert_eq!((status, error["code"].as_str()), (StatusCode::FORBIDDEN, Some("FORBIDDEN")), "{error}");
        }
        let (status, _) = put_policy(&client, &url, "isk_nonsense", &wanted).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        for bad in [
            json!({"providers": {"kind": "hosts", "hosts": []}, "performanceContext": true, "shareActivity": false}),
            json!({"providers": {"kind": "hosts", "hosts": ["https://x.example"]}, "performanceContext": true, "shareActivity": false}),
            json!({"providers": {"kind": "any"}, "performanceContext": true, "shareActivity": false, "monthlyCapUsd": -3}),
            json!({"providers": {"kind": "everywhere"}, "performanceContext": true, "shareActivity": false}),
            json!({"providers": {"kind": "any"}, "performanceContext": true, "shareActivity": false, "surprise": 1}),
        ] {
            let (status, error) = put_policy(&client, &url, &owner.token, &bad).await;
            assert_eq!((status, error["code"].as_str()), (StatusCode::BAD_REQUEST, Some("VALIDATION")), "{bad}: {error}");
        }
        let (_, unchanged) = get(&client, &url, &viewer.token, "/v1/policy").await;
        assert!(unchanged.get("setBy").is_none(), "refused input changed the policy: {unchanged}");

        let (status, record) = put_policy(&client, &url, &owner.token, &wanted).await;
        assert_eq!(status, StatusCode::OK, "{record}");
        assert_eq!(record["policy"], wanted);
        assert_eq!((record["setBy"]["name"].as_str(), record["setBy"]["role"].as_str()), (Some("olive"), Some("owner")));
        assert!(record["setAt"].as_u64().is_some_and(|ms| ms > 1_700_000_000_000));
        for token in [&editor.token, &viewer.token] {
            assert_eq!(get(&client, &url, token, "/v1/policy").await.1, record);
        }
        // Another workspace's owner sets and reads only its own.
        let (_, theirs) = get(&client, &url, &other_owner.token, "/v1/policy").await;
        assert!(theirs.get("setBy").is_none(), "A's policy reached B: {theirs}");
        let (status, _) = put_policy(&client, &url, &other_owner.token, &json!({"providers": {"kind": "local"}, "performanceContext": true, "shareActivity": false})).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(get(&client, &url, &viewer.token, "/v1/policy").await.1, record, "B's owner changed A's policy");
    });
    drop(server);
    // Durable: a new server over the same data has it.
    let server = start(&store, RateLimit::default());
    let url = server.url.clone();
    block(async move {
        let (status, record) = get(&Client::new(), &url, &editor_token, "/v1/policy").await;
        assert_eq!((status, record["policy"]["providers"]["kind"].as_str(), record["policy"]["monthlyCapUsd"].as_f64()), (StatusCode::OK, Some("hosts"), Some(5.0)));
        let _ = owner_token;
    });
}

async fn perf_post(client: &Client, url: &str, token: &str, body: &Value) -> (StatusCode, Value) {
    let response = client.post(format!("{url}/v1/perf")).bearer_auth(token).json(body).send().await.unwrap();
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

fn perf(kind: &str, id: &str, at: u64, body: &str) -> Value {
    let edit = format!("sha256:{}", inkstone_server::storage::sha256_hex(body.as_bytes()));
    let mut record = json!({"kind": kind, "id": id, "updatedAt": at, "editId": edit, "body": body});
    match kind {
        "publication" => record["projectId"] = json!("prj_1"),
        "snapshot" => {
            record["projectId"] = json!("prj_1");
            record["publicationId"] = json!("pub_1");
        }
        "accountSnapshot" => record["accountId"] = json!("acc_1"),
        _ => {}
    }
    record
}

/// Performance data's matrix: editors and owners write, viewers only read, no token
/// nothing, another workspace sees none of it; accounts and publications are
/// last-writer-wins by (updatedAt, editId) whatever order writes arrive in, a resend
/// changes nothing (no new cursor), a snapshot is never replaced, a deleted publication
/// takes its snapshots and refuses new ones, and a restart keeps it all.
fn performance_records_editors_write_members_read_last_writer_wins_snapshots_once(store: Store) {
    let server = start(&store, RateLimit { per_second: 10_000.0, burst: 10_000.0 });
    let (_, owner, editor, viewer) = workspace(&server, "A");
    let (_, other_owner, _, _) = workspace(&server, "B");
    let url = server.url.clone();
    let viewer_token = viewer.token.clone();
    block(async move {
        let client = Client::new();
        let (_, info) = get(&client, &url, &viewer.token, "/v1/workspace").await;
        assert!(info["features"].as_array().unwrap().iter().any(|f| f == "performanceData"), "{info}");
        let account = perf("account", "acc_1", 10, r#"{"name":"官方号"}"#);
        // A viewer and a stranger cannot write; bad records are refused whole.
        let (status, error) = perf_post(&client, &url, &viewer.token, &json!({"records": [account]})).await;
        assert_eq!((status, error["code"].as_str()), (StatusCode::FORBIDDEN, Some("FORBIDDEN")), "{error}");
        assert_eq!(perf_post(&client, &url, "isk_nonsense", &json!({"records": [account]})).await.0, StatusCode::UNAUTHORIZED);
        for bad in [
            json!({"records": []}),
            json!({"records": [perf("publication", "pub 1", 1, "{}")]}),
            json!({"records": [{"kind": "account", "id": "acc_2", "updatedAt": 1, "editId": "nope", "body": "{}"}]}),
            json!({"records": [perf("snapshot", "snp_1", 1, "{}"), {"kind": "snapshot", "id": "snp_2", "projectId": "prj_1", "updatedAt": 1, "editId": format!("sha256:{}", "a".repeat(64)), "deleted": true}]}),
            json!({"records": [perf("account", "acc_2", 1, "{\"n\":\"\u{0}\"}")]}),
            json!({"records": [account], "extra": true}),
        ] {
            let (status, error) = perf_post(&client, &url, &owner.token, &bad).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {error}");
        }
        let (_, empty) = get(&client, &url, &viewer.token, "/v1/perf?since=0").await;
        assert_eq!(empty["records"], json!([]), "a refused push wrote something");

        // The editor writes an account, a publication and two snapshots.
        let first = json!({"records": [account, perf("publication", "pub_1", 20, r#"{"title":"v1"}"#), perf("snapshot", "snp_1", 30, r#"{"views":1}"#), perf("snapshot", "snp_2", 40, r#"{"views":2}"#)]});
        let (status, acks) = perf_post(&client, &url, &editor.token, &first).await;
        assert_eq!(status, StatusCode::OK, "{acks}");
        assert!(acks["acks"].as_array().unwrap().iter().all(|a| a["applied"] == true), "{acks}");
        // The same push again (a lost answer, retried): nothing new.
        let (_, again) = perf_post(&client, &url, &editor.token, &first).await;
        assert!(again["acks"].as_array().unwrap().iter().all(|a| a["applied"] == false), "{again}");
        let (_, page) = get(&client, &url, &viewer.token, "/v1/perf?since=0").await;
        assert_eq!(page["records"].as_array().unwrap().len(), 4, "{page}");
        assert_eq!(page["cursor"], 4, "a resend took cursors: {page}");
        assert_eq!(page["records"][1]["createdBy"], "eddie");
        // A snapshot is never replaced, not even by its own id with other numbers.
        let (_, kept) = perf_post(&client, &url, &owner.token, &json!({"records": [perf("snapshot", "snp_1", 99, r#"{"views":1000}"#)]})).await;
        assert_eq!((&kept["acks"][0]["applied"], &kept["acks"][0]["conflict"]), (&json!(false), &json!(true)), "other content under a snapshot's id is a conflict: {kept}");
        assert!(again["acks"].as_array().unwrap().iter().all(|a| a.get("conflict").is_none()), "a resend is no conflict: {again}");
        // Last writer wins: a later edit by the owner, then an older one arriving late.
        let (_, newer) = perf_post(&client, &url, &owner.token, &json!({"records": [perf("publication", "pub_1", 50, r#"{"title":"v3"}"#)]})).await;
        assert_eq!(newer["acks"][0]["applied"], true);
        let (_, older) = perf_post(&client, &url, &editor.token, &json!({"records": [perf("publication", "pub_1", 45, r#"{"title":"v2"}"#)]})).await;
        assert_eq!(older["acks"][0]["applied"], false);
        let (_, page) = get(&client, &url, &viewer.token, "/v1/perf?since=4").await;
        let records = page["records"].as_array().unwrap();
        assert_eq!(records.len(), 1, "{page}");
        assert_eq!(
            (records[0]["record"]["body"].as_str(), records[0]["createdBy"].as_str(), records[0]["pushedBy"].as_str()),
            (Some(r#"{"title":"v3"}"#), Some("eddie"), Some("olive"))
        );
        // Paging: a limit of 1 walks the whole log, each record once at its latest write.
        let mut since = 0;
        let mut seen = Vec::new();
        loop {
            let (_, page) = get(&client, &url, &viewer.token, &format!("/v1/perf?since={since}&limit=1")).await;
            for r in page["records"].as_array().unwrap() {
                seen.push(r["record"]["id"].as_str().unwrap().to_owned());
            }
            since = page["cursor"].as_u64().unwrap();
            if page["more"] != true {
                break;
            }
        }
        assert_eq!(seen, ["acc_1", "snp_1", "snp_2", "pub_1"]);
        // Another workspace sees and touches none of it.
        let (_, theirs) = get(&client, &url, &other_owner.token, "/v1/perf?since=0").await;
        assert_eq!(theirs["records"], json!([]));
        let (_, written) = perf_post(&client, &url, &other_owner.token, &json!({"records": [perf("publication", "pub_1", 999, r#"{"title":"B's"}"#)]})).await;
        assert_eq!(written["acks"][0]["applied"], true, "B has its own pub_1");
        // A confirmed removal deletes the publication and its snapshots; a snapshot sent
        // after it is not kept, nor is an older edit.
        let tombstone = json!({"kind": "publication", "id": "pub_1", "projectId": "prj_1", "updatedAt": 60, "editId": format!("sha256:{}", "d".repeat(64)), "deleted": true});
        let (status, gone) =
            perf_post(&client, &url, &editor.token, &json!({"records": [tombstone, perf("snapshot", "snp_3", 61, r#"{"views":3}"#), perf("publication", "pub_1", 55, "{}")]}))
                .await;
        assert_eq!(status, StatusCode::OK, "{gone}");
        let applied: Vec<bool> = gone["acks"].as_array().unwrap().iter().map(|a| a["applied"].as_bool().unwrap()).collect();
        assert_eq!(applied, [true, false, false]);
        let (_, page) = get(&client, &url, &viewer.token, "/v1/perf?since=0").await;
        let ids: Vec<&str> = page["records"].as_array().unwrap().iter().map(|r| r["record"]["id"].as_str().unwrap()).collect();
        assert_eq!(ids, ["acc_1", "pub_1"], "{page}");
        assert_eq!(page["records"][1]["record"]["deleted"], true);
        // Deleting an account deletes its days, and a day sent after it is not kept.
        let days = json!({"records": [perf("accountSnapshot", "day_1", 62, r#"{"followers_total":1}"#), perf("accountSnapshot", "day_2", 63, r#"{"followers_total":2}"#)]});
        let (_, kept) = perf_post(&client, &url, &editor.token, &days).await;
        assert!(kept["acks"].as_array().unwrap().iter().all(|a| a["applied"] == true), "{kept}");
        let account_tombstone = json!({"kind": "account", "id": "acc_1", "updatedAt": 70, "editId": format!("sha256:{}", "e".repeat(64)), "deleted": true});
        let (status, gone) =
            perf_post(&client, &url, &editor.token, &json!({"records": [perf("accountSnapshot", "day_3", 64, r#"{"followers_total":3}"#), account_tombstone, perf("accountSnapshot", "day_4", 71, r#"{"followers_total":4}"#)]})).await;
        assert_eq!(status, StatusCode::OK, "{gone}");
        let applied: Vec<bool> = gone["acks"].as_array().unwrap().iter().map(|a| a["applied"].as_bool().unwrap()).collect();
        assert_eq!(applied, [true, true, false], "a day before the deletion in the same push is applied, then dropped with the others");
        let (_, page) = get(&client, &url, &viewer.token, "/v1/perf?since=0&include=accountSnapshot").await;
        let ids: Vec<&str> = page["records"].as_array().unwrap().iter().map(|r| r["record"]["id"].as_str().unwrap()).collect();
        assert_eq!(ids, ["pub_1", "acc_1"], "the deleted account's days stayed: {page}");
        assert_eq!(page["records"][1]["record"]["deleted"], true);
        // A day of the deleted account resent later is not kept either.
        let (_, late) = perf_post(&client, &url, &owner.token, &json!({"records": [perf("accountSnapshot", "day_1", 62, r#"{"followers_total":1}"#)]})).await;
        assert_eq!(late["acks"][0]["applied"], false, "{late}");
    });
    drop(server);
    let server = start(&store, RateLimit::default());
    let url = server.url.clone();
    block(async move {
        let (_, page) = get(&Client::new(), &url, &viewer_token, "/v1/perf?since=0").await;
        assert_eq!(page["records"].as_array().unwrap().len(), 2, "{page}");
    });
}

/// Accounts' days (`accountSnapshots`): an account snapshot names its account only; it
/// is written once (a resend changes nothing, other content under its id is a conflict
/// said in the ack, and the first copy stays); a page carries them only to a reader
/// that asks (`include=accountSnapshot`), while every reader's cursor moves past them;
/// viewers cannot write them; a restart keeps them.
fn account_snapshots_are_written_once_a_changed_copy_is_a_conflict_and_only_readers_that_ask_get_them(store: Store) {
    let server = start(&store, RateLimit { per_second: 10_000.0, burst: 10_000.0 });
    let (_, owner, editor, viewer) = workspace(&server, "A");
    let (_, other_owner, _, _) = workspace(&server, "B");
    let url = server.url.clone();
    let viewer_token = viewer.token.clone();
    let day = |id: &str, followers: u32| perf("accountSnapshot", id, 30, &format!(r#"{{"date":"2026-03-01","followers_total":{followers}}}"#));
    block(async move {
        let client = Client::new();
        let (_, info) = get(&client, &url, &viewer.token, "/v1/workspace").await;
        assert!(info["features"].as_array().unwrap().iter().any(|f| f == "accountSnapshots"), "{info}");
        // Refused whole: a day naming a project or no account, a deleted day, a viewer.
        let mut with_project = day("asn_1", 1);
        with_project["projectId"] = json!("prj_1");
        let mut without_account = day("asn_1", 1);
        without_account.as_object_mut().unwrap().remove("accountId");
        let deleted = json!({"kind": "accountSnapshot", "id": "asn_1", "accountId": "acc_1", "updatedAt": 1, "editId": format!("sha256:{}", "a".repeat(64)), "deleted": true});
        for bad in [with_project, without_account, deleted] {
            let (status, error) = perf_post(&client, &url, &owner.token, &json!({"records": [perf("account", "acc_1", 10, "{}"), bad]})).await;
            assert_eq!((status, error["code"].as_str()), (StatusCode::BAD_REQUEST, Some("VALIDATION")), "{error}");
        }
        assert_eq!(perf_post(&client, &url, &viewer.token, &json!({"records": [day("asn_1", 1)]})).await.0, StatusCode::FORBIDDEN);
        let (_, empty) = get(&client, &url, &viewer.token, "/v1/perf?since=0&include=accountSnapshot").await;
        assert_eq!(empty["records"], json!([]), "a refused push wrote something");

        // The editor sends the account and two days; the same push again changes nothing.
        let first = json!({"records": [perf("account", "acc_1", 10, r#"{"name":"官方号"}"#), day("asn_1", 1204), day("asn_2", 1201)]});
        let (status, acks) = perf_post(&client, &url, &editor.token, &first).await;
        assert_eq!(status, StatusCode::OK, "{acks}");
        assert!(acks["acks"].as_array().unwrap().iter().all(|a| a["applied"] == true && a.get("conflict").is_none()), "{acks}");
        let (_, again) = perf_post(&client, &url, &editor.token, &first).await;
        assert!(again["acks"].as_array().unwrap().iter().all(|a| a["applied"] == false && a.get("conflict").is_none()), "a resend: {again}");
        // Other numbers under a day's id: not kept, and said to be a conflict.
        let (status, clash) = perf_post(&client, &url, &owner.token, &json!({"records": [day("asn_1", 9999), day("asn_3", 1190)]})).await;
        assert_eq!(status, StatusCode::OK, "{clash}");
        assert_eq!(clash["acks"][0], json!({"kind": "accountSnapshot", "id": "asn_1", "editId": day("asn_1", 9999)["editId"], "applied": false, "conflict": true}));
        assert_eq!((&clash["acks"][1]["applied"], clash["acks"][1].get("conflict")), (&json!(true), None), "the rest of the push is kept: {clash}");

        // A reader that asks sees each day once, as first written, naming its account.
        let (_, page) = get(&client, &url, &viewer.token, "/v1/perf?since=0&include=accountSnapshot").await;
        let records = page["records"].as_array().unwrap();
        let ids: Vec<&str> = records.iter().map(|r| r["record"]["id"].as_str().unwrap()).collect();
        assert_eq!(ids, ["acc_1", "asn_1", "asn_2", "asn_3"], "{page}");
        assert_eq!(records[1]["record"]["body"], day("asn_1", 1204)["body"]);
        assert_eq!((records[1]["record"]["accountId"].as_str(), records[1]["createdBy"].as_str()), (Some("acc_1"), Some("eddie")));
        assert_eq!(page["cursor"], 4, "a resend or a conflict took a cursor: {page}");
        // A reader that does not ask (an older app) gets none of them, and moves past them.
        let (_, old) = get(&client, &url, &viewer.token, "/v1/perf?since=0").await;
        let ids: Vec<&str> = old["records"].as_array().unwrap().iter().map(|r| r["record"]["id"].as_str().unwrap()).collect();
        assert_eq!((ids, &old["cursor"], &old["more"]), (vec!["acc_1"], &json!(4), &json!(false)), "{old}");
        let (_, paged) = get(&client, &url, &viewer.token, "/v1/perf?since=1&limit=2").await;
        assert_eq!((paged["records"].as_array().unwrap().len(), &paged["cursor"], &paged["more"]), (0, &json!(3), &json!(true)), "{paged}");
        // Another workspace sees none of it.
        let (_, theirs) = get(&client, &url, &other_owner.token, "/v1/perf?since=0&include=accountSnapshot").await;
        assert_eq!(theirs["records"], json!([]));
    });
    drop(server);
    let server = start(&store, RateLimit::default());
    let url = server.url.clone();
    block(async move {
        let (_, page) = get(&Client::new(), &url, &viewer_token, "/v1/perf?since=0&include=accountSnapshot").await;
        assert_eq!(page["records"].as_array().unwrap().len(), 4, "{page}");
        assert_eq!(page["records"][1]["record"]["body"], day("asn_1", 1204)["body"], "the first copy after a restart");
    });
}

/// A database an older server wrote (schema 7: performance data, no account days) is
/// migrated at start: its performance records read back as they were, and it then
/// keeps account days.
#[test]
fn pg_performance_records_of_schema_7_survive_migration_8() {
    let Some(Store::Pg(url)) = Store::pg() else { return };
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    client.batch_execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())").unwrap();
    for (version, sql) in inkstone_server::storage::pg::MIGRATIONS.iter().filter(|(v, _)| *v <= 7) {
        client.batch_execute(sql).unwrap();
        client.execute("INSERT INTO schema_migrations (version) VALUES ($1)", &[version]).unwrap();
    }
    let edit = format!("sha256:{}", "a".repeat(64));
    client.execute("INSERT INTO workspaces (id, name, cursor, perf_cursor) VALUES ('w1', '团队', 0, 2)", &[]).unwrap();
    client
        .execute(
            "INSERT INTO perf_records (workspace_id, kind, id, project_id, publication_id, updated_at, edit_id, deleted, body, created_by, pushed_by, cursor) VALUES              ('w1', 'account', 'acc_1', NULL, NULL, 10, $1, false, '{}', 'amy', 'amy', 1), ('w1', 'snapshot', 'snp_1', 'prj_1', 'pub_1', 20, $1, false, '{}', 'amy', 'amy', 2)",
            &[&edit],
        )
        .unwrap();
    let refused = client.execute(
        "INSERT INTO perf_records (workspace_id, kind, id, updated_at, edit_id, deleted, body, created_by, pushed_by, cursor) VALUES ('w1', 'accountSnapshot', 'asn_0', 1, $1, false, '{}', 'amy', 'amy', 3)",
        &[&edit],
    );
    assert!(refused.is_err(), "schema 7 has no account snapshots");
    drop(client);
    let storage = inkstone_server::storage::pg::PgStorage::connect(&url, 2).unwrap();
    assert_eq!(storage.applied_migrations().unwrap().last(), Some(&8));
    let before = storage.perf_changes("w1", 0, 10).unwrap();
    let kinds: Vec<(&str, Option<&str>)> = before.records.iter().map(|r| (r.record.kind.as_str(), r.record.account_id.as_deref())).collect();
    assert_eq!(kinds, [("account", None), ("snapshot", None)]);
    let member = storage.invite("w1", "amy", Role::Editor).unwrap();
    let caller = storage.authenticate(&member.token).unwrap().unwrap();
    let day: inkstone_server::proto::PerfRecord = serde_json::from_value(perf("accountSnapshot", "asn_1", 30, "{}")).unwrap();
    let acks = storage.perf_push(&caller, std::slice::from_ref(&day)).unwrap();
    assert!(acks.acks[0].applied);
    let after = storage.perf_changes("w1", 2, 10).unwrap();
    assert_eq!((after.records.len(), after.records[0].record.clone(), after.cursor), (1, day, 3));
}

/// An AI origin detail as an app sends it.
fn ai_detail(model: &str, accepted_at: u64) -> Value {
    json!({"acceptedBy": "本地名", "acceptedAt": accepted_at, "model": model, "providerHost": "127.0.0.1", "promptVersion": "drafting@3",
        "promptLayers": ["system@3", "brand@1"], "proposalId": "prp_1", "nHunks": 2, "nHunksTotal": 3, "through": {"type": "draftingSession", "sessionId": "ses_1"}})
}

async fn ai_activity(client: &Client, url: &str, token: &str, query: &str) -> (StatusCode, Value) {
    get(client, url, token, &format!("/v1/ai-activity{query}")).await
}

fn entry_models(page: &Value) -> Vec<String> {
    page["entries"].as_array().unwrap().iter().map(|e| format!("{}:{}", e["pushedBy"].as_str().unwrap(), e["ai"]["model"].as_str().unwrap())).collect()
}

/// The AI origin detail of pushed versions: kept with the version while the workspace
/// shares activity (dropped otherwise), never carried by a pull, bounded, and read back
/// whole through `GET /v1/ai-activity` — owners see every member's rows, editors their
/// own, viewers and tokens that are not the workspace's are refused; the filters apply
/// on both storages alike; a restart keeps it.
fn ai_origin_detail_is_kept_apart_owners_see_the_workspace_editors_their_own(store: Store) {
    let server = start(&store, RateLimit { per_second: 10_000.0, burst: 10_000.0 });
    let (id, owner, editor, viewer) = workspace(&server, "A");
    let bella = server.storage.invite(&id, "bella", Role::Editor).unwrap();
    let (_, other_owner, _, _) = workspace(&server, "B");
    let url = server.url.clone();
    let (owner_token, editor_token) = (owner.token.clone(), editor.token.clone());
    let (t1, t2) = (1_795_000_000_000_u64, 1_795_000_100_000_u64);
    block(async move {
        let client = Client::new();
        let (_, info) = get(&client, &url, &viewer.token, "/v1/workspace").await;
        assert!(info["features"].as_array().unwrap().iter().any(|f| f == "aiActivity"), "{info}");
        // Sharing is off by default: a detail sent anyway is not kept (the version is).
        let mut v0 = version("v0", "零");
        v0["ai"] = ai_detail("early-model", t1 - 1);
        assert_eq!(push(&client, &url, &editor.token, "prj_a", "k0", &json!({"base": 0, "versions": [v0]})).await.0, StatusCode::CREATED);
        assert_eq!(entry_models(&ai_activity(&client, &url, &owner.token, "").await.1), Vec::<String>::new());
        let shared = json!({"providers": {"kind": "any"}, "performanceContext": true, "shareActivity": true});
        assert_eq!(put_policy(&client, &url, &owner.token, &shared).await.0, StatusCode::OK);

        // eddie's AI change, bella's AI change, and eddie's manual version (no detail,
        // as an older app sends it).
        let mut v1 = version("v1", "一");
        v1["ai"] = ai_detail("model-one", t1);
        assert_eq!(push(&client, &url, &editor.token, "prj_a", "k1", &json!({"base": 1, "versions": [v1.clone()]})).await.0, StatusCode::CREATED);
        let mut v2 = version("v2", "二");
        v2["ai"] = ai_detail("model-two", t2);
        v2["ai"]["through"] = json!({"type": "applyProposal", "approvalRequestId": "apr_1"});
        assert_eq!(push(&client, &url, &bella.token, "prj_a", "k2", &json!({"base": 2, "versions": [v2.clone()]})).await.0, StatusCode::CREATED);
        assert_eq!(push(&client, &url, &editor.token, "prj_a", "k3", &json!({"base": 3, "versions": [version("v3", "三")]})).await.0, StatusCode::CREATED);
        // A bad detail refuses the push; nothing is written.
        for bad in [json!({"model": ""}), json!({"acceptedBy": "a\u{0}b"}), json!({"promptLayers": vec!["x"; 51]})] {
            let mut v = version("vbad", "坏");
            v["ai"] = ai_detail("m", t2);
            for (k, value) in bad.as_object().unwrap() {
                v["ai"][k] = value.clone();
            }
            let (status, error) = push(&client, &url, &editor.token, "prj_a", "kbad", &json!({"base": 4, "versions": [v]})).await;
            assert_eq!((status, error["code"].as_str()), (StatusCode::BAD_REQUEST, Some("VALIDATION")), "{bad}: {error}");
        }
        assert_eq!(get(&client, &url, &viewer.token, "/v1/projects/prj_a").await.1["head"], 4);

        // A pull never carries the detail: every member reads versions.
        let (_, changes) = get(&client, &url, &viewer.token, "/v1/changes?since=0").await;
        assert_eq!(changes["versions"].as_array().unwrap().len(), 4);
        assert!(!changes.to_string().contains("model-one"), "{changes}");

        // The owner: the workspace's rows, newest accept first, each detail whole.
        let (status, page) = ai_activity(&client, &url, &owner.token, "").await;
        assert_eq!(status, StatusCode::OK, "{page}");
        assert_eq!(entry_models(&page), ["bella:model-two", "eddie:model-one"]);
        assert_eq!(page["truncated"], false);
        let first = &page["entries"][0];
        assert_eq!(first["ai"], v2["ai"], "the detail round-trips");
        assert_eq!(
            (first["projectId"].as_str(), first["projectTitle"].as_str(), first["number"].as_u64(), first["clientId"].as_str()),
            (Some("prj_a"), Some("标题"), Some(3), Some("v2"))
        );
        assert_eq!(first["memberId"], bella.member.id);
        assert_eq!(page["entries"][1]["ai"], v1["ai"]);
        // The filters.
        for (query, wanted) in [
            ("?person=eddie", vec!["eddie:model-one"]),
            ("?model=model-two", vec!["bella:model-two"]),
            ("?project=prj_a", vec!["bella:model-two", "eddie:model-one"]),
            ("?project=prj_other", vec![]),
            (&format!("?since={t2}"), vec!["bella:model-two"]),
            (&format!("?until={t2}"), vec!["eddie:model-one"]),
            (&format!("?since={t1}&until={}", t2 + 1), vec!["bella:model-two", "eddie:model-one"]),
        ] {
            assert_eq!(entry_models(&ai_activity(&client, &url, &owner.token, query).await.1), wanted, "{query}");
        }
        let (_, one) = ai_activity(&client, &url, &owner.token, "?limit=1").await;
        assert_eq!((entry_models(&one), one["truncated"].as_bool()), (vec!["bella:model-two".to_owned()], Some(true)));
        for bad in ["?since=5&until=5", "?limit=many", "?project=a%20b", "?surprise=1"] {
            let (status, error) = ai_activity(&client, &url, &owner.token, bad).await;
            assert_eq!((status, error["code"].as_str()), (StatusCode::BAD_REQUEST, Some("VALIDATION")), "{bad}: {error}");
        }
        // An editor: their own rows only, whatever they ask.
        assert_eq!(entry_models(&ai_activity(&client, &url, &editor.token, "").await.1), ["eddie:model-one"]);
        assert_eq!(entry_models(&ai_activity(&client, &url, &editor.token, "?person=bella").await.1), Vec::<String>::new());
        assert_eq!(entry_models(&ai_activity(&client, &url, &bella.token, "").await.1), ["bella:model-two"]);
        // A viewer is refused, a token of no workspace too; another workspace's owner
        // sees only theirs (none).
        let (status, error) = ai_activity(&client, &url, &viewer.token, "").await;
        assert_eq!((status, error["code"].as_str()), (StatusCode::FORBIDDEN, Some("FORBIDDEN")), "{error}");
        assert_eq!(ai_activity(&client, &url, "isk_nonsense", "").await.0, StatusCode::UNAUTHORIZED);
        let (status, theirs) = ai_activity(&client, &url, &other_owner.token, "").await;
        assert_eq!((status, entry_models(&theirs)), (StatusCode::OK, vec![]));
        // Sharing turned off: later details are not kept, earlier ones stay.
        let off = json!({"providers": {"kind": "any"}, "performanceContext": true, "shareActivity": false});
        assert_eq!(put_policy(&client, &url, &owner.token, &off).await.0, StatusCode::OK);
        let mut v5 = version("v5", "五");
        v5["ai"] = ai_detail("model-five", t2 + 5);
        assert_eq!(push(&client, &url, &editor.token, "prj_a", "k5", &json!({"base": 4, "versions": [v5]})).await.0, StatusCode::CREATED);
        assert_eq!(entry_models(&ai_activity(&client, &url, &owner.token, "").await.1), ["bella:model-two", "eddie:model-one"]);
    });
    drop(server);
    let server = start(&store, RateLimit::default());
    let url = server.url.clone();
    block(async move {
        let client = Client::new();
        assert_eq!(entry_models(&ai_activity(&client, &url, &owner_token, "").await.1), ["bella:model-two", "eddie:model-one"]);
        assert_eq!(entry_models(&ai_activity(&client, &url, &editor_token, "").await.1), ["eddie:model-one"]);
    });
}
