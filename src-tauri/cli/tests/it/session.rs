//! `inkstone-cli session …` through the real binary against the scripted model server:
//! `send` prints NDJSON events and exits when the turn blocks; `answer` continues it.

use inkstone_test_support::model_server::{ModelServer, Reply};
use serde_json::Value;

use crate::{json_ok, run, stdout};

fn ndjson(text: &str) -> Vec<Value> {
    text.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect()
}

#[test]
fn send_blocks_on_a_question_and_answer_finishes_the_turn() {
    let server = ModelServer::start(vec![Reply::tool_calls(&[("q1", "ask_user_question", r#"{"question":"哪个标题？"}"#)]), Reply::text("好的")]);
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    json_ok(data, &["profile", "add", "--name", "local", "--base-url", &server.base_url(), "--model", "fake-model", "--no-key"]);
    let project = json_ok(data, &["project", "create", "春天"])["id"].as_str().unwrap().to_owned();
    let session = stdout(&run(data, &["session", "new", &project])).trim().to_owned();
    assert!(session.starts_with("ses_"), "{session}");

    let sent = run(data, &["session", "send", &session, "改个标题", "--mode", "plan"]);
    assert!(sent.status.success(), "{}", String::from_utf8_lossy(&sent.stderr));
    let lines = ndjson(&stdout(&sent));
    let last = lines.last().unwrap();
    assert_eq!(last["type"], "result");
    assert_eq!(last["data"]["reason"], "blocked_on_question");
    assert_eq!(last["data"]["session"]["mode"], "plan");
    assert!(lines.iter().any(|l| l["kind"] == "question_asked"));
    let question = last["data"]["session"]["pendingQuestion"]["questionId"].as_str().unwrap().to_owned();

    let answered = run(data, &["session", "answer", &session, &question, "第二个"]);
    assert!(answered.status.success(), "{}", String::from_utf8_lossy(&answered.stderr));
    assert_eq!(ndjson(&stdout(&answered)).last().unwrap()["data"]["reason"], "completed");

    let events = ndjson(&stdout(&run(data, &["session", "events", &session, "--from", "2"])));
    assert_eq!(events[0]["sequence"], 2);
    let sequences: Vec<u64> = events.iter().map(|e| e["sequence"].as_u64().unwrap()).collect();
    assert_eq!(sequences, (2..2 + events.len() as u64).collect::<Vec<_>>());
    let shown = stdout(&run(data, &["session", "show", &session]));
    assert!(shown.contains("status idle") && shown.contains("第二个"), "{shown}");
    let denied = run(data, &["session", "approve", &session, "apr_nope"]);
    assert_eq!(denied.status.code(), Some(1));
    assert_eq!(serde_json::from_slice::<Value>(&denied.stderr).unwrap()["code"], "CONFLICT");
    server.assert_tool_results_paired();
}

/// `send --select PASSAGE` scopes the task to that passage: the selection the engine
/// records is the passage's UTF-16 range (the emoji before it counts two units), the
/// model sees it, and a passage that is missing or occurs twice is refused with hints
/// and nothing sent.
#[test]
fn send_with_select_scopes_the_task_to_a_unique_passage() {
    let server = ModelServer::start(vec![Reply::text("好的")]);
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    json_ok(data, &["profile", "add", "--name", "local", "--base-url", &server.base_url(), "--model", "fake-model", "--no-key"]);
    let source = dir.path().join("a.md");
    std::fs::write(&source, "# 春天 🌸\n\n第一段写早起。\n\n第二段写散步。散步很好。\n").unwrap();
    let project = json_ok(data, &["project", "create", "春天", "--source-file", source.to_str().unwrap()])["id"].as_str().unwrap().to_owned();
    let session = stdout(&run(data, &["session", "new", &project])).trim().to_owned();

    let sent = run(data, &["session", "send", &session, "改得更生动", "--select", "第二段写散步"]);
    assert!(sent.status.success(), "{}", String::from_utf8_lossy(&sent.stderr));
    let lines = ndjson(&stdout(&sent));
    assert_eq!(lines.last().unwrap()["data"]["reason"], "completed");
    let message = lines.iter().find(|l| l["kind"] == "user_message").expect("the user message event");
    let expected_from = "# 春天 🌸\n\n第一段写早起。\n\n".encode_utf16().count();
    assert_eq!(message["payload"]["selection"]["from"], expected_from, "{message}");
    assert_eq!(message["payload"]["selection"]["to"], expected_from + 6);
    let request = server.chat_requests().pop().unwrap();
    assert!(request.body["messages"][0]["content"].as_str().unwrap().contains("第二段写散步"), "the selection is in the working set");

    let before = server.chat_requests().len();
    for (passage, says) in [("第三段", "is not in"), ("散步", "occurs 2 times")] {
        let refused = run(data, &["session", "send", &session, "再改", "--select", passage]);
        assert_eq!(refused.status.code(), Some(1), "{passage}");
        let error: Value = serde_json::from_slice(&refused.stderr).unwrap();
        assert_eq!(error["code"], "VALIDATION");
        assert!(error["message"].as_str().unwrap().contains(says), "{error}");
        assert!(!error["hints"].as_array().unwrap().is_empty());
    }
    assert_eq!(server.chat_requests().len(), before, "a refused selection sends nothing");
}

/// `session unarchive` brings an archived session back: `send` is refused while it is
/// archived (with the way back among the hints) and works after.
#[test]
fn unarchive_brings_an_archived_session_back() {
    let server = ModelServer::start(vec![Reply::text("好的")]);
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    json_ok(data, &["profile", "add", "--name", "local", "--base-url", &server.base_url(), "--model", "fake-model", "--no-key"]);
    let project = json_ok(data, &["project", "create", "春天"])["id"].as_str().unwrap().to_owned();
    let session = stdout(&run(data, &["session", "new", &project])).trim().to_owned();
    assert_eq!(json_ok(data, &["session", "archive", &session])["status"], "archived");

    let refused = run(data, &["session", "send", &session, "再写一段"]);
    assert_eq!(refused.status.code(), Some(1));
    let error: Value = serde_json::from_slice(&refused.stderr).unwrap();
    assert!(error["hints"].as_array().unwrap().iter().any(|h| h["id"] == "unarchive_session"), "{error}");

    let missing = run(data, &["session", "unarchive", "ses_nope"]);
    assert_eq!(missing.status.code(), Some(1));
    assert_eq!(serde_json::from_slice::<Value>(&missing.stderr).unwrap()["code"], "NOT_FOUND");

    let restored = run(data, &["session", "unarchive", &session]);
    assert!(restored.status.success(), "{}", String::from_utf8_lossy(&restored.stderr));
    assert_eq!(stdout(&restored).trim(), format!("Unarchived {session}"));
    assert_eq!(json_ok(data, &["session", "list"])["sessions"][0]["id"], session.as_str());
    let sent = run(data, &["session", "send", &session, "再写一段"]);
    assert!(sent.status.success(), "{}", String::from_utf8_lossy(&sent.stderr));
    assert_eq!(ndjson(&stdout(&sent)).last().unwrap()["data"]["reason"], "completed");
}
