//! `session.timeline` through the API on a real session (scripted model over loopback,
//! real sled): the entries are the core's fold of the stored log, a reader that held an
//! earlier answer catches up with the entries changed since it, and bad input is refused.

use inkstone_core::harness::timeline::fold_all;
use inkstone_core::ErrorCode;
use inkstone_test_support::model_server::{ModelServer, Reply};
use inkstone_test_support::TestEngine;
use serde_json::{json, Value};

use super::harness::stream;

fn keyed(items: &Value) -> Vec<(String, Value)> {
    items.as_array().unwrap().iter().map(|i| (i["key"].as_str().unwrap().to_owned(), i.clone())).collect()
}

#[test]
fn the_timeline_is_the_fold_of_the_log_and_catches_a_reader_up() {
    let server = ModelServer::start(vec![]);
    server.set_fallback(Reply::text("好的，改好了。"));
    let t = TestEngine::new();
    t.ok("llmProfile.create", json!({"name": "fake", "baseUrl": server.base_url(), "model": "fake-model", "contextWindow": 32000}));
    let project = t.ok("project.create", json!({"title": "春茶", "source": "# 春茶\n\n山上的春茶。"}))["id"].as_str().unwrap().to_owned();
    let session = t.ok("session.create", json!({"projectId": project}))["session"]["id"].as_str().unwrap().to_owned();
    stream(&t.engine, "session.submit", json!({"sessionId": session, "text": "写一句"})).0.unwrap();
    let first = t.ok("session.timeline", json!({"sessionId": session}));
    assert_eq!(first["since"], 0);
    let kinds: Vec<&str> = first["items"].as_array().unwrap().iter().map(|i| i["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["user", "assistant"]);
    assert_eq!(first["items"][1]["text"], "好的，改好了。");
    assert_eq!(first["turnOpen"], false);

    stream(&t.engine, "session.submit", json!({"sessionId": session, "text": "再写一句", "selection": {"from": 6, "to": 12, "text": "山上的春茶。"}})).0.unwrap();
    t.ok("session.setMode", json!({"sessionId": session, "mode": "plan"}));
    t.ok("session.archive", json!({"sessionId": session}));

    // The whole answer is the fold of the stored log.
    let log = t.engine.session_events(&session).unwrap();
    let whole = serde_json::to_value(fold_all(&log)).unwrap();
    let now = t.ok("session.timeline", json!({"sessionId": session}));
    for field in ["items", "lastSequence", "mode", "archived", "inputTokens", "lastTask"] {
        assert_eq!(now[field], whole[field], "{field}");
    }
    assert_eq!(now["mode"], "plan");
    assert_eq!(now["archived"], true);
    assert_eq!(now["items"][2]["selection"]["text"], "山上的春茶。");

    // A reader that held the first answer replaces by key and appends: it holds the whole.
    let since = first["lastSequence"].as_u64().unwrap();
    let changed = t.ok("session.timeline", json!({"sessionId": session, "since": since}));
    assert_eq!(changed["since"], since);
    let mut held = keyed(&first["items"]);
    for (key, item) in keyed(&changed["items"]) {
        match held.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = item,
            None => held.push((key, item)),
        }
    }
    assert_eq!(Value::Array(held.into_iter().map(|(_, i)| i).collect()), now["items"]);
    assert!(changed["items"].as_array().unwrap().len() < now["items"].as_array().unwrap().len(), "only what changed is sent again");
    // Nothing changed since the last sequence: no entries, the same state.
    let none = t.ok("session.timeline", json!({"sessionId": session, "since": now["lastSequence"]}));
    assert_eq!(none["items"], json!([]));

    let error = t.engine.call("session.timeline", json!({"sessionId": "ses_nope"})).unwrap_err();
    assert_eq!(error.code, ErrorCode::NotFound);
    let error = t.engine.call("session.timeline", json!({"sessionId": session, "from": 3})).unwrap_err();
    assert_eq!(error.code, ErrorCode::Validation);
}
