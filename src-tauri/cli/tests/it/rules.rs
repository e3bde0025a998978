//! `inkstone-cli rules …` and `session approve --always` through the real binary: an
//! "always allow" made from a prompt is listed with its scope, pattern and count, is
//! narrowed, and removed; a missing rule is NOT_FOUND with exit code 1.

use inkstone_test_support::model_server::{ModelServer, Reply};
use serde_json::Value;

use crate::{json_ok, run, stdout};

fn last_result(output: &std::process::Output) -> Value {
    let text = stdout(output);
    serde_json::from_str::<Value>(text.lines().last().unwrap()).unwrap()["data"].clone()
}

#[test]
fn rules_are_made_from_a_prompt_listed_narrowed_and_removed() {
    let server = ModelServer::start(vec![
        Reply::tool_calls(&[("c1", "create_checkpoint", r#"{"label":"第一"}"#)]),
        Reply::text("好的"),
        Reply::tool_calls(&[("c2", "create_checkpoint", r#"{"label":"第二"}"#)]),
        Reply::text("好的"),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    json_ok(data, &["profile", "add", "--name", "local", "--base-url", &server.base_url(), "--model", "fake-model", "--no-key"]);
    let project = json_ok(data, &["project", "create", "春天"])["id"].as_str().unwrap().to_owned();
    let session = stdout(&run(data, &["session", "new", &project])).trim().to_owned();
    assert_eq!(stdout(&run(data, &["rules", "list"])), "No rules. A rule is made by answering a permission prompt with \"always allow\".\n");

    let sent = last_result(&run(data, &["session", "send", &session, "存个检查点"]));
    assert_eq!(sent["reason"], "blocked_on_approval");
    assert_eq!(sent["session"]["pendingApproval"]["offer"]["tool"], "create_checkpoint");
    let request = sent["session"]["pendingApproval"]["requestId"].as_str().unwrap().to_owned();
    let approved = run(data, &["session", "approve", &session, &request, "--always", "project"]);
    assert!(approved.status.success(), "{}", String::from_utf8_lossy(&approved.stderr));
    // The next checkpoint runs without asking and counts on the rule.
    assert_eq!(last_result(&run(data, &["session", "send", &session, "再存一个"]))["reason"], "completed");

    let listed = json_ok(data, &["rules", "list"]);
    let rule = listed["rules"][0].clone();
    let id = rule["id"].as_str().unwrap().to_owned();
    assert_eq!((rule["tool"].as_str(), rule["scope"].as_str(), rule["allowedCount"].as_u64()), (Some("create_checkpoint"), Some("project"), Some(1)));
    let text = stdout(&run(data, &["rules", "list"]));
    assert!(text.starts_with(&format!("{id}  create_checkpoint  project 春天  any input  made ")) && text.contains("allowed 1, last "), "{text}");

    let narrowed = stdout(&run(data, &["rules", "narrow", &id, "--scope", "session", "--pattern", "label=第*"]));
    assert_eq!(narrowed, format!("Narrowed {id}: create_checkpoint session {session}, label=第*\n"));
    let wider = run(data, &["rules", "narrow", &id, "--scope", "workspace"]);
    assert_eq!(wider.status.code(), Some(1));
    assert_eq!(serde_json::from_slice::<Value>(&wider.stderr).unwrap()["code"], "VALIDATION");

    assert_eq!(stdout(&run(data, &["rules", "remove", &id])), format!("Removed {id}\n"));
    let gone = run(data, &["rules", "remove", &id]);
    assert_eq!(gone.status.code(), Some(1));
    let error: Value = serde_json::from_slice(&gone.stderr).unwrap();
    assert_eq!((error["code"].as_str(), error["hints"][0]["id"].as_str()), (Some("NOT_FOUND"), Some("list_rules")));
    server.assert_tool_results_paired();
}
