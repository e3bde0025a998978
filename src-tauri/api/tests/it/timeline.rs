//! `session.timeline` through the API on a real session (scripted model over loopback,
//! real sled): the items are the core's fold of the stored log, a reader that held an
//! earlier answer catches up with the items changed since it, a long timeline comes in
//! pages, the live stream's patches keep a reader's items equal to the fold (each
//! streamed answer one item), a reader gets the log's events or the patches as it asked
//! (one message per event, never both), and bad input is refused.

use inkstone_api::api::dto::TimelinePatch;
use inkstone_api::api::StreamEvent;
use inkstone_api::harness::timeline::fold_all;
use inkstone_api::ErrorCode;
use inkstone_test_support::model_server::{ModelServer, Reply, Usage};
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

/// The patches a streaming call sent, in order.
fn patches(t: &TestEngine, method: &str, mut params: Value) -> Vec<TimelinePatch> {
    let mut out = Vec::new();
    params["timeline"] = json!(true);
    t.engine
        .call_stream(method, params, &mut |event| match event {
            StreamEvent::Timeline(patch) => out.push(*patch),
            other => panic!("a reader of patches got {other:?}"),
        })
        .unwrap();
    out
}

/// A reader of the stream: drops, puts by key, appends the streaming text.
fn read(reader: &mut Vec<Value>, patch: &TimelinePatch) {
    for key in &patch.removed {
        reader.retain(|item| item["key"] != json!(key));
    }
    for item in &patch.items {
        let item = serde_json::to_value(item).unwrap();
        match reader.iter_mut().find(|held| held["key"] == item["key"]) {
            Some(slot) => *slot = item,
            None => reader.push(item),
        }
    }
    if let Some(append) = patch.append.as_ref().filter(|a| !a.reasoning) {
        match reader.iter_mut().find(|held| held["key"] == json!(append.key)) {
            Some(held) => held["text"] = json!(format!("{}{}", held["text"].as_str().unwrap(), append.text)),
            None => reader.push(json!({"kind": "assistant", "key": append.key, "changedAt": 0, "text": append.text, "streaming": true, "interrupted": false, "cutOff": false})),
        }
    }
}

#[test]
fn the_live_stream_sends_timeline_patches_that_keep_a_reader_at_the_fold() {
    let server = ModelServer::start(vec![Reply::tool_calls(&[("c1", "read_project_context", "{}")]), Reply::text_with("山上的春茶，清明前采。", 2, Usage::Counted)]);
    let t = TestEngine::new();
    t.ok("llmProfile.create", json!({"name": "fake", "baseUrl": server.base_url(), "model": "fake-model", "contextWindow": 32000}));
    let project = t.ok("project.create", json!({"title": "春茶", "source": "# 春茶\n\n山上的春茶。"}))["id"].as_str().unwrap().to_owned();
    let session = t.ok("session.create", json!({"projectId": project}))["session"]["id"].as_str().unwrap().to_owned();
    let sent = patches(&t, "session.submit", json!({"sessionId": session, "text": "读一下再写一句"}));
    let mut reader = Vec::new();
    let mut lengths = Vec::new();
    for patch in &sent {
        read(&mut reader, patch);
        lengths.push(reader.len());
    }
    let now = t.ok("session.timeline", json!({"sessionId": session}));
    assert_eq!(Value::Array(reader), now["items"], "the patches bring the reader to the fold");
    let kinds: Vec<&str> = now["items"].as_array().unwrap().iter().map(|i| i["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["user", "tool", "assistant"]);
    assert_eq!(now["items"][2]["text"], "山上的春茶，清明前采。");
    assert_eq!(now["items"][2]["streaming"], false);
    // The streamed answer arrived in pieces, each appended to that answer's one item.
    let appends: Vec<&str> = sent.iter().filter_map(|p| p.append.as_ref()).map(|a| a.key.as_str()).collect();
    assert!(appends.len() >= 5, "the answer streamed in pieces: {appends:?}");
    assert!(appends.iter().all(|key| *key == now["items"][2]["key"]), "{appends:?}");
    // The last patch carries the state after the turn.
    let state = sent.last().unwrap().state.as_ref().unwrap();
    assert!(!state.turn_open && state.streaming_key.is_none());
    assert_eq!(state.last_sequence, now["lastSequence"].as_u64().unwrap());
    assert!(lengths.windows(2).all(|w| w[1] >= w[0]));
}

#[test]
fn a_long_timeline_comes_in_pages_from_the_latest() {
    let server = ModelServer::start(vec![]);
    server.set_fallback(Reply::text("好。"));
    let t = TestEngine::new();
    t.ok("llmProfile.create", json!({"name": "fake", "baseUrl": server.base_url(), "model": "fake-model", "contextWindow": 32000}));
    let project = t.ok("project.create", json!({"title": "春茶", "source": "# 春茶"}))["id"].as_str().unwrap().to_owned();
    let session = t.ok("session.create", json!({"projectId": project}))["session"]["id"].as_str().unwrap().to_owned();
    for n in 0..3 {
        stream(&t.engine, "session.submit", json!({"sessionId": session, "text": format!("第{n}句")})).0.unwrap();
    }
    let whole = t.ok("session.timeline", json!({"sessionId": session}));
    let items = whole["items"].as_array().unwrap().clone();
    assert_eq!(items.len(), 6);
    assert_eq!(whole["earlier"], 0);
    let last_two = t.ok("session.timeline", json!({"sessionId": session, "limit": 2}));
    assert_eq!(last_two["items"], json!(items[4..]));
    assert_eq!(last_two["earlier"], 4);
    let before = t.ok("session.timeline", json!({"sessionId": session, "limit": 2, "before": items[4]["key"]}));
    assert_eq!(before["items"], json!(items[2..4]));
    assert_eq!(before["earlier"], 2);
    assert_eq!(before["lastSequence"], whole["lastSequence"], "every page carries the whole state");
    for bad in [json!({"sessionId": session, "limit": 0}), json!({"sessionId": session, "limit": 1001}), json!({"sessionId": session, "before": "999999"})] {
        let error = t.engine.call("session.timeline", bad).unwrap_err();
        assert_eq!(error.code, ErrorCode::Validation);
    }
}

/// Every message a streaming call sent: (live events, logged events, patches).
fn messages(t: &TestEngine, method: &str, params: Value) -> (usize, usize, usize) {
    let (mut live, mut logged, mut patches) = (0, 0, 0);
    t.engine
        .call_stream(method, params, &mut |event| match event {
            StreamEvent::Harness(event) if event.sequence == 0 => live += 1,
            StreamEvent::Harness(_) => logged += 1,
            StreamEvent::Timeline(_) => patches += 1,
            StreamEvent::Progress(_) => panic!("a session sends no progress"),
            StreamEvent::SyncStatus(_) => panic!("a session sends no sync status"),
        })
        .unwrap();
    (live, logged, patches)
}

/// A streamed answer of N deltas reaches the window as N + (logged events) messages, not
/// twice that: the window asks for patches (`timeline: true`) and gets no raw events;
/// the CLI and scripts ask for nothing and get the events alone, as before patches existed.
#[test]
fn a_reader_gets_the_events_or_the_patches_it_asked_for_one_message_per_event() {
    const DELTAS: usize = 40;
    let answer: String = "春茶清香。".repeat(DELTAS);
    let server = ModelServer::start(vec![]);
    server.set_fallback(Reply::text_with(&answer, 5, Usage::Counted));
    let t = TestEngine::new();
    t.ok("llmProfile.create", json!({"name": "fake", "baseUrl": server.base_url(), "model": "fake-model", "contextWindow": 32000}));
    let project = t.ok("project.create", json!({"title": "春茶", "source": "# 春茶"}))["id"].as_str().unwrap().to_owned();
    let session = t.ok("session.create", json!({"projectId": project}))["session"]["id"].as_str().unwrap().to_owned();

    let (live, logged, no_patches) = messages(&t, "session.submit", json!({"sessionId": session, "text": "写"}));
    assert_eq!(no_patches, 0, "a reader of events gets no patches");
    assert_eq!(live, DELTAS, "the answer streamed in {DELTAS} pieces");
    let (live_after, logged_after, patches_after) = messages(&t, "session.submit", json!({"sessionId": session, "text": "再写", "timeline": true}));
    assert_eq!((live_after, logged_after), (0, 0), "a reader of patches gets no raw events");
    // One patch per event: a delta is one `append`, a logged event one put.
    assert_eq!(patches_after, live + logged);
    let sent = patches(&t, "session.submit", json!({"sessionId": session, "text": "三写"}));
    assert_eq!(sent.iter().filter(|p| p.append.is_some()).count(), live, "each delta is one append");
    // Before the opt-in, the window got every event and its patch: twice the messages.
    eprintln!("one answer of {live} deltas, {logged} logged events: {} messages before (event + patch each), {patches_after} after", 2 * (live + logged));

    // The other turn-driving methods take the same choice; an unknown one is refused.
    let error = t.engine.call("session.compact", json!({"sessionId": session, "patches": true})).unwrap_err();
    assert_eq!(error.code, ErrorCode::Validation);
    let (_, compact_logged, compact_patches) = messages(&t, "session.compact", json!({"sessionId": session, "timeline": true}));
    assert_eq!(compact_logged, 0);
    assert!(compact_patches > 0);
}
