//! Permissions and approvals: a write waits for approval bound to its input and target
//! version, denials, plan mode, questions, and approvals that authorise nothing else.

use std::sync::Arc;

use inkstone_api::harness::tools::{BaseVersionPolicy, Capability, Concurrency};
use inkstone_api::harness::{EventBody, PermissionPolicy, ToolFailure, ToolHandler};
use inkstone_api::{Engine, EngineConfig, ErrorCode};
use inkstone_test_support::model_server::{ModelServer, Reply};
use serde_json::{json, Value};

use super::harness::*;

#[test]
fn a_write_waits_for_approval_runs_once_and_never_again_on_retry_or_restart() {
    let mut h = setup(
        vec![
            Reply::tool_calls(&[("w1", "test_write_note", r#"{"note":"hello"}"#)]),
            Reply::text("saved"),
            // After the restart the model asks for the same write again.
            Reply::tool_calls(&[("w2", "test_write_note", r#"{"note": " hello "}"#)]),
            Reply::text("already saved"),
        ],
        json!({}),
    );
    let (result, events) = h.send("add a note");
    assert_eq!(result["reason"], "blocked_on_approval");
    assert_eq!(result["session"]["status"], "waitingForApproval");
    assert!(kinds(&events).contains(&"approval_requested"));
    assert_eq!(h.comments(), 0, "nothing ran before approval");
    let request = pending_request(&result);

    let (result, _) = h.approve(&request, true);
    assert_eq!(result["reason"], "completed");
    assert_eq!(h.comments(), 1);
    // Retrying the decision is refused, and runs nothing.
    let (again, _) = h.stream("session.resolveApproval", json!({"sessionId": h.session, "requestId": request, "approved": true}));
    assert_eq!(again.unwrap_err().code, ErrorCode::Conflict);
    assert_eq!(h.comments(), 1);
    h.assert_replay_matches_live();

    // Restart: a new engine on the same data dir.
    let dir = std::mem::replace(&mut h.t.dir, tempfile::tempdir().unwrap());
    let old = std::mem::replace(&mut h.t.engine, Engine::open(EngineConfig::for_tests(h.t.dir.path())).unwrap());
    drop(old);
    let mut config = EngineConfig::for_tests(dir.path());
    config.ids = Arc::new(inkstone_api::config::UlidIds::default());
    h.t.engine = Engine::open(config).unwrap();
    h.t.dir = dir;
    register_test_tools(&h.t.engine);
    let (result, _) = h.send("save it again");
    assert_eq!(result["reason"], "completed", "the recorded approval matches the same normalized input and revision");
    assert_eq!(h.comments(), 1, "executing the approved write twice has the effect of once");
    let reused = h.log().into_iter().any(|e| matches!(e.body, EventBody::ToolResult { reused_execution: true, .. }));
    assert!(reused);
    h.assert_replay_matches_live();
}

#[test]
fn an_approval_does_not_cover_a_changed_input_or_a_moved_target() {
    let h = setup(
        vec![
            Reply::tool_calls(&[("w1", "test_write_note", r#"{"note":"hello"}"#)]),
            Reply::text("saved"),
            Reply::tool_calls(&[("w2", "test_write_note", r#"{"note":"hello, world"}"#)]),
            Reply::text("unused"),
        ],
        json!({}),
    );
    let (result, _) = h.send("add a note");
    let first = pending_request(&result);
    // The target moves while the request waits: the approval is for revision 1.
    h.t.ok("project.update", json!({"projectId": h.project, "source": "changed"}));
    let (result, _) = h.approve(&first, true);
    assert_eq!(result["reason"], "blocked_on_approval", "a moved target needs a new approval");
    let second = pending_request(&result);
    assert_ne!(second, first);
    assert_eq!(h.comments(), 0);
    let (result, _) = h.approve(&second, true);
    assert_eq!(result["reason"], "completed");
    assert_eq!(h.comments(), 1);
    // A changed input asks again.
    let (result, _) = h.send("another");
    assert_eq!(result["reason"], "blocked_on_approval");
    assert_eq!(h.comments(), 1);
    h.assert_replay_matches_live();
}

#[test]
fn denials_by_rule_and_by_the_user_are_results_and_the_turn_goes_on() {
    let h =
        setup(vec![Reply::tool_calls(&[("c1", "read_comments", "{}")]), Reply::tool_calls(&[("w1", "test_write_note", r#"{"note":"x"}"#)]), Reply::text("understood")], json!({}));
    h.t.ok("permissionRules.set", json!({"rules": [{"tool": "read_comments", "decision": "deny"}, {"tool": "test_write_note", "decision": "allow"}]}));
    let (result, _) = h.send("go");
    assert_eq!(result["reason"], "blocked_on_approval", "an allow rule does not loosen the tool's ask");
    assert_eq!(h.results()[0].1, "permission_denied");
    let (result, _) = h.approve(&pending_request(&result), false);
    assert_eq!(result["reason"], "completed");
    assert_eq!(h.results()[1].1, "denied", "the person's denial is its own status, not a rule's");
    assert_eq!(h.comments(), 0);
    h.assert_replay_matches_live();
}

#[test]
fn plan_mode_refuses_a_write_the_model_insists_on_and_the_breaker_trips() {
    let args: Vec<String> = (0..3).map(|i| format!(r#"{{"note":"n{i}"}}"#)).collect();
    let script: Vec<Reply> = ["w1", "w2", "w3"].iter().zip(&args).map(|(id, a)| Reply::tool_calls(&[(id, "test_write_note", a.as_str())])).collect();
    let h = setup(script, json!({}));
    let (result, _) = h.stream("session.submit", json!({"sessionId": h.session, "text": "write it", "mode": "plan"}));
    let result = result.unwrap();
    assert_eq!(result["session"]["mode"], "plan");
    assert_eq!(result["reason"], "circuit_breaker");
    let statuses: Vec<String> = h.results().into_iter().map(|r| r.1).collect();
    assert_eq!(statuses, ["blocked", "blocked", "blocked"], "plan mode blocks: not a failure, not a rule's denial");
    assert!(h.results()[0].2.contains("plan mode"));
    assert_eq!(h.comments(), 0);
    h.server.assert_calls(3);
    h.assert_replay_matches_live();
}

#[test]
fn questions_and_plan_approval_are_answered_by_the_user() {
    let h = setup(
        vec![
            Reply::tool_calls(&[("q1", "ask_user_question", r#"{"question":"哪个标题？","options":["A","B"]}"#)]),
            Reply::tool_calls(&[("p0", "enter_plan_mode", "{}")]),
            Reply::tool_calls(&[("p1", "exit_plan_mode", r#"{"plan":"1. 改标题"}"#)]),
            Reply::text("done"),
        ],
        json!({}),
    );
    let (result, _) = h.send("改一下");
    assert_eq!(result["reason"], "blocked_on_question");
    let question = result["session"]["pendingQuestion"]["questionId"].as_str().unwrap().to_owned();
    let (result, _) = h.stream("session.answerQuestion", json!({"sessionId": h.session, "questionId": question, "answer": "B"}));
    let result = result.unwrap();
    assert_eq!(result["reason"], "blocked_on_approval", "leaving plan mode needs the user's approval");
    assert_eq!(result["session"]["mode"], "plan");
    let (result, _) = h.approve(&pending_request(&result), true);
    assert_eq!(result["reason"], "completed");
    assert_eq!(result["session"]["mode"], "default");
    assert!(h.results()[0].2.contains("\"B\""));
    h.assert_replay_matches_live();
}

#[test]
fn an_approval_in_one_project_and_session_authorises_nothing_in_another() {
    // Session A on project A (this H); session B on project B, with its own model server.
    let h = setup(
        vec![
            Reply::tool_calls(&[("a1", "test_write_note", r#"{"note":"hello"}"#)]),
            Reply::text("saved in A"),
            Reply::tool_calls(&[("a2", "test_write_note", r#"{"note":"second"}"#)]),
            Reply::text("second saved in A"),
        ],
        json!({}),
    );
    let server_b = ModelServer::start(vec![
        Reply::tool_calls(&[("b1", "test_write_note", r#"{"note":"hello"}"#)]),
        Reply::text("saved in B"),
        Reply::tool_calls(&[("b2", "test_write_note", r#"{"note":"second"}"#)]),
        Reply::text("second saved in B"),
    ]);
    h.t.ok("llmProfile.create", json!({"name": "fake-b", "baseUrl": server_b.base_url(), "model": "fake-model"}));
    let project_b = h.t.ok("project.create", json!({"title": "秋日", "source": "另一篇稿子。"}))["id"].as_str().unwrap().to_owned();
    let session_b = h.t.ok("session.create", json!({"projectId": project_b, "profile": "fake-b"}))["session"]["id"].as_str().unwrap().to_owned();
    let revision = |project: &str| h.t.ok("project.get", json!({"projectId": project}))["revision"].clone();
    assert_eq!(revision(&h.project), revision(&project_b), "both targets are at the same revision");
    let comments = |project: &str| h.t.ok("comment.list", json!({"projectId": project}))["comments"].as_array().unwrap().len();
    let send_b = |text: &str| stream(h.engine(), "session.submit", json!({"sessionId": session_b, "text": text})).0.unwrap();
    let approve_b = |request: &str| stream(h.engine(), "session.resolveApproval", json!({"sessionId": session_b, "requestId": request, "approved": true})).0.unwrap();
    let results_b = || -> Vec<(String, bool)> {
        h.engine()
            .session_events(&session_b)
            .unwrap()
            .into_iter()
            .filter_map(|e| match e.body {
                EventBody::ToolResult { status, reused_execution, .. } => Some((serde_json::to_value(status).unwrap().as_str().unwrap().to_owned(), reused_execution)),
                _ => None,
            })
            .collect()
    };

    // A approves and runs the write.
    let (result, _) = h.send("write hello");
    let (result, _) = h.approve(&pending_request(&result), true);
    assert_eq!(result["reason"], "completed");
    assert_eq!((comments(&h.project), comments(&project_b)), (1, 0));

    // B asks for the same call at the same revision: A's approval does not cover it,
    // and A's execution is not B's.
    let result = send_b("write hello");
    assert_eq!(result["reason"], "blocked_on_approval", "A's approval is not B's");
    assert_eq!(comments(&project_b), 0);
    let result = approve_b(&pending_request(&result));
    assert_eq!(result["reason"], "completed");
    assert_eq!((comments(&h.project), comments(&project_b)), (1, 1), "B's write really ran, on B");
    assert_eq!(results_b(), [("success".to_owned(), false)], "not skipped as already executed");

    // The other way round: B approves first, then A asks for the same call.
    let result = send_b("write second");
    approve_b(&pending_request(&result));
    assert_eq!(comments(&project_b), 2);
    let (result, _) = h.send("write second");
    assert_eq!(result["reason"], "blocked_on_approval", "B's approval is not A's");
    let (result, _) = h.approve(&pending_request(&result), true);
    assert_eq!(result["reason"], "completed");
    assert_eq!((comments(&h.project), comments(&project_b)), (2, 2));

    h.assert_replay_matches_live();
    assert_replay_matches_live(&h.t, &server_b, &session_b, &project_b);
}

#[test]
fn an_approval_is_used_up_by_the_execution_it_allowed() {
    let h = setup(
        vec![
            Reply::tool_calls(&[("f1", "flaky_write", r#"{"note":"x"}"#)]),
            Reply::text("it failed"),
            Reply::tool_calls(&[("f2", "flaky_write", r#"{"note":"x"}"#)]),
            Reply::text("saved"),
        ],
        json!({}),
    );
    // `flaky_write`: fails (having written nothing) the first time, then writes.
    let mut flaky = definition("flaky_write", Capability::Write, PermissionPolicy::Ask);
    flaky.read_only = false;
    flaky.concurrency = Concurrency::Exclusive;
    flaky.base_version = BaseVersionPolicy::ProjectRevision;
    let failed_once = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let handler: ToolHandler = Arc::new(move |ctx, input| {
        if !failed_once.swap(true, std::sync::atomic::Ordering::SeqCst) {
            return Err(ToolFailure::new("the disk was full"));
        }
        let comment = inkstone_api::project::comments::add(ctx.writer()?, ctx.project_id, input["note"].as_str().unwrap_or(""), None)?;
        Ok(json!({"commentId": comment.id}))
    });
    h.engine().register_tool(flaky, handler).unwrap();
    let (result, _) = h.send("write");
    let (result, _) = h.approve(&pending_request(&result), true);
    assert_eq!(result["reason"], "completed");
    assert_eq!(h.results()[0].1, "tool_error");
    // The same call, same input, same revision: the approval was used by the failed
    // execution, so it asks again.
    let (result, _) = h.send("try again");
    assert_eq!(result["reason"], "blocked_on_approval", "a used approval allows nothing more");
    assert_eq!(h.comments(), 0);
    let (result, _) = h.approve(&pending_request(&result), true);
    assert_eq!(result["reason"], "completed");
    assert_eq!(h.comments(), 1);
    h.assert_replay_matches_live();
}

#[test]
fn request_permission_reports_the_decision_and_grants_nothing() {
    let h = setup(
        vec![
            Reply::tool_calls(&[("p1", "request_permission", r#"{"permission":"write notes without asking","reason":"faster"}"#)]),
            Reply::tool_calls(&[("w1", "test_write_note", r#"{"note":"x"}"#)]),
            Reply::text("unused"),
        ],
        json!({}),
    );
    let (result, _) = h.send("go");
    assert_eq!(result["reason"], "blocked_on_approval");
    let (result, _) = h.approve(&pending_request(&result), true);
    let (_, status, content) = h.results()[0].clone();
    assert_eq!(status, "success");
    let value: Value = serde_json::from_str(&content).unwrap();
    assert_eq!(value["decision"], "approved");
    assert_eq!(value["changed"], "nothing");
    assert!(value.get("granted").is_none(), "{content}");
    assert!(value["message"].as_str().unwrap().contains("Nothing else changed"));
    assert_eq!(result["reason"], "blocked_on_approval", "the write still asks");
    assert_eq!(h.comments(), 0);
    h.assert_replay_matches_live();
}
