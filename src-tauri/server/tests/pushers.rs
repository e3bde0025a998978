//! What a push may carry, on both storages over real HTTP: text with a control
//! character is refused with its own code (PostgreSQL cannot store U+0000, so both
//! storages follow one rule), the author of a version is the member who pushed it, and
//! a version id the workspace holds already is refused, not stored twice.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use common::Store;
use inkstone_server::http::{router, AppState, RateLimit};
use inkstone_server::proto::Role;
use inkstone_server::storage::Storage;
use reqwest::{Client, StatusCode};
use serde_json::{json, Value};

on_both_storages!(a_control_character_is_refused_with_its_code_and_nothing_is_stored, the_pusher_is_the_author_and_a_version_id_is_never_reused,);

struct Server {
    url: String,
    storage: Arc<dyn Storage>,
    _runtime: tokio::runtime::Runtime,
}

fn start(store: &Store) -> Server {
    let storage = store.open();
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let state = AppState::new(storage.clone(), RateLimit { per_second: 1e6, burst: 1e6 });
    let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    runtime.spawn(async move { axum::serve(listener, router(state)).await });
    Server { url, storage, _runtime: runtime }
}

fn block<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(f)
}

fn version(client_id: &str, title: &str, source: &str, author: &str) -> Value {
    json!({"clientId": client_id, "title": title, "source": source, "author": author, "message": null, "contentHash": format!("sha256:{}", "a".repeat(64)), "createdAt": "2026-11-27T00:00:00Z"})
}

async fn push(url: &str, token: &str, project: &str, key: &str, body: &Value) -> (StatusCode, Value) {
    let response = Client::new().post(format!("{url}/v1/projects/{project}/push")).bearer_auth(token).header("Idempotency-Key", key).json(body).send().await.unwrap();
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

async fn changes(url: &str, token: &str) -> Vec<Value> {
    let response = Client::new().get(format!("{url}/v1/changes?since=0&limit=500")).bearer_auth(token).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    response.json::<Value>().await.unwrap()["versions"].as_array().unwrap().clone()
}

/// U+0000 (which PostgreSQL refuses in text: the bug answered 500 forever there while
/// the embedded store took it) and any other C0 control but tab and line breaks, in any
/// field, is a 400 with the code `CONTROL_CHARACTER` on both storages; the push stores
/// nothing, and the same text without it goes through.
fn a_control_character_is_refused_with_its_code_and_nothing_is_stored(store: Store) {
    let server = start(&store);
    let (id, _owner) = server.storage.create_workspace("团队", "olive").unwrap();
    let editor = server.storage.invite(&id, "eddie", Role::Editor).unwrap();
    block(async {
        let refused = [
            version("ver_a", "标题", "正文\u{0}结尾", "eddie"),
            version("ver_a", "标题\u{1b}[31m", "正文", "eddie"),
            version("ver_a", "标题", "正文", "ed\u{7}die"),
            json!({"clientId": "ver_a", "title": "标题", "source": "正文", "author": "eddie", "message": "备注\u{8}", "contentHash": format!("sha256:{}", "a".repeat(64)), "createdAt": "2026-11-27T00:00:00Z"}),
        ];
        for (i, v) in refused.into_iter().enumerate() {
            let (status, body) = push(&server.url, &editor.token, "prj_a", &format!("k{i}"), &json!({"base": 0, "versions": [version("ver_ok", "好", "好", "eddie"), v]})).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "case {i}: {body}");
            assert_eq!(body["code"], "CONTROL_CHARACTER", "case {i}: {body}");
            assert!(body["message"].as_str().unwrap().starts_with("versions[1]."), "case {i}: the message names where: {body}");
            assert!(!body["hints"].as_array().unwrap().is_empty());
        }
        assert!(changes(&server.url, &editor.token).await.is_empty(), "a refused push stored nothing");
        // Tabs and line breaks are text; the same push without the control goes through.
        let (status, body) = push(&server.url, &editor.token, "prj_a", "k9", &json!({"base": 0, "versions": [version("ver_a", "标题", "第一行\r\n\t第二行\n", "eddie")]})).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let stored = changes(&server.url, &editor.token).await;
        assert_eq!((stored.len(), stored[0]["source"].as_str()), (1, Some("第一行\r\n\t第二行\n")));
    });
}

/// The server records who pushed: a version's author is the token's member whatever
/// name the client claims, and colleagues pull that. A version id the workspace holds
/// already is refused with `VERSION_ID_TAKEN` (422: a client gives up rather than
/// retrying) whoever sends it and in whichever project, and writes nothing; the same
/// push under its own key is still answered with its original result.
fn the_pusher_is_the_author_and_a_version_id_is_never_reused(store: Store) {
    let server = start(&store);
    let (id, owner) = server.storage.create_workspace("团队", "olive").unwrap();
    let eddie = server.storage.invite(&id, "eddie", Role::Editor).unwrap();
    block(async {
        let first = json!({"base": 0, "versions": [version("ver_e1", "春", "一", "olive")]});
        let (status, body) = push(&server.url, &eddie.token, "prj_a", "e1", &first).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let pulled = changes(&server.url, &owner.token).await;
        assert_eq!((pulled[0]["author"].as_str(), pulled[0]["pushedBy"].as_str()), (Some("eddie"), Some("eddie")), "a claimed author is not kept");

        // Olive reuses eddie's version id: refused, in the same project and another.
        for (project, base, key) in [("prj_a", 1, "o1"), ("prj_b", 0, "o2")] {
            let (status, body) = push(&server.url, &owner.token, project, key, &json!({"base": base, "versions": [version("ver_e1", "夏", "二", "olive")]})).await;
            assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{project}: {body}");
            assert_eq!(body["code"], "VERSION_ID_TAKEN", "{body}");
            assert!(body["message"].as_str().unwrap().contains("ver_e1"), "{body}");
        }
        // Eddie sending it again under a new key is no second version either.
        let (status, body) =
            push(&server.url, &eddie.token, "prj_a", "e2", &json!({"base": 1, "versions": [version("ver_e2", "夏", "二", "eddie"), version("ver_e1", "春", "一", "eddie")]})).await;
        assert_eq!((status, body["code"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("VERSION_ID_TAKEN")), "{body}");
        // One id twice in a push is refused before anything else.
        let (status, body) =
            push(&server.url, &eddie.token, "prj_c", "e3", &json!({"base": 0, "versions": [version("ver_x", "a", "a", "eddie"), version("ver_x", "b", "b", "eddie")]})).await;
        assert_eq!((status, body["code"].as_str()), (StatusCode::BAD_REQUEST, Some("VALIDATION")), "{body}");
        // The original push under its own key: its original answer, not a refusal.
        let (status, body) = push(&server.url, &eddie.token, "prj_a", "e1", &first).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let all = changes(&server.url, &owner.token).await;
        assert_eq!(all.iter().map(|v| v["clientId"].as_str().unwrap()).collect::<Vec<_>>(), ["ver_e1"], "nothing of the refused pushes was stored");
        // Olive's own new version carries her name.
        let (status, body) = push(&server.url, &owner.token, "prj_a", "o3", &json!({"base": 1, "versions": [version("ver_o1", "夏", "二", "Inkstone user")]})).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let all = changes(&server.url, &eddie.token).await;
        assert_eq!((all[1]["author"].as_str(), all[1]["pushedBy"].as_str()), (Some("olive"), Some("olive")));
    });
}
