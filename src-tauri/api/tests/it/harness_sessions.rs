//! Sessions: the session API, archived projects and sessions, export and import.

use std::time::Duration;

use inkstone_api::ErrorCode;
use inkstone_test_support::model_server::Reply;
use inkstone_test_support::TestEngine;
use serde_json::json;

use super::harness::*;

#[test]
fn session_api_lists_archives_and_refuses_bad_input() {
    let h = setup(vec![], json!({}));
    let list = h.t.ok("session.list", json!({"projectId": h.project}));
    assert_eq!(list["sessions"].as_array().unwrap().len(), 1);
    let error = h.t.engine.call("session.submit", json!({"sessionId": h.session, "text": "  "})).unwrap_err();
    assert_eq!(error.code, ErrorCode::Validation);
    let error = h.t.engine.call("session.get", json!({"sessionId": "ses_nope"})).unwrap_err();
    assert_eq!(error.code, ErrorCode::NotFound);
    let view = h.t.ok("session.setMode", json!({"sessionId": h.session, "mode": "plan"}));
    assert_eq!(view["mode"], "plan");
    let view = h.t.ok("session.rename", json!({"sessionId": h.session, "title": "  标题：改写开头  "}));
    assert_eq!(view["session"]["title"], "标题：改写开头");
    let error = h.t.engine.call("session.rename", json!({"sessionId": h.session, "title": " "})).unwrap_err();
    assert_eq!((error.code, error.details.as_ref().and_then(|d| d["field"].as_str())), (ErrorCode::Validation, Some("title")));
    let error = h.t.engine.call("session.rename", json!({"sessionId": "ses_nope", "title": "x"})).unwrap_err();
    assert_eq!(error.code, ErrorCode::NotFound);
    let view = h.t.ok("session.archive", json!({"sessionId": h.session}));
    assert_eq!(view["status"], "archived");
    assert_eq!(h.t.ok("session.list", json!({}))["sessions"].as_array().unwrap().len(), 0);
    let error = h.t.engine.call("session.submit", json!({"sessionId": h.session, "text": "hi"})).unwrap_err();
    assert_eq!(error.code, ErrorCode::Validation);
    let view = h.t.ok("session.get", json!({"sessionId": h.session, "timeline": true}));
    assert!(view["timeline"].as_array().unwrap().len() >= 3);
}

/// A session whose project is archived is read-only until the project is restored:
/// sending, approving a pending write, setting the mode or the intent and compacting
/// are refused (VALIDATION `session.project_archived`, with the way out), nothing is
/// written and no model is asked. Archiving a project while one of its sessions runs
/// a turn is refused (CONFLICT `project.session_running`). Restored, it continues.
#[test]
fn a_session_of_an_archived_project_is_refused_until_the_project_is_restored() {
    let h = setup(vec![Reply::tool_calls(&[("w1", "slow_write_note", r#"{"note":"x","ms":600}"#)]), Reply::text("saved"), Reply::text("继续")], json!({}));
    let (result, _) = h.send("write");
    let request = pending_request(&result);
    h.t.ok("project.archive", json!({"projectId": h.project, "archived": true}));
    let log_before = h.log();
    let requests_before = h.server.chat_requests().len();
    let refusals = [
        ("session.submit", json!({"sessionId": h.session, "text": "再来"})),
        ("session.resolveApproval", json!({"sessionId": h.session, "requestId": request, "approved": true})),
        ("session.setMode", json!({"sessionId": h.session, "mode": "plan"})),
        ("session.setIntent", json!({"sessionId": h.session, "intent": {"topic": "春天"}})),
        ("session.compact", json!({"sessionId": h.session})),
    ];
    for (method, params) in refusals {
        let error = h.stream(method, params).0.unwrap_err();
        assert_eq!((error.code, error.message_id.as_deref()), (ErrorCode::Validation, Some("session.project_archived")), "{method}: {error:?}");
        assert_eq!(error.params.as_ref().and_then(|p| p.get("project")).map(String::as_str), Some("春日"), "{method}");
        assert!(error.hints.iter().any(|hint| hint.id == "unarchive_project_first" && hint.params.get("project") == Some(&h.project)), "{method}: {error:?}");
    }
    assert_eq!(h.log(), log_before, "a refused call wrote to the log");
    assert_eq!(h.server.chat_requests().len(), requests_before, "a refused call asked the model");
    assert_eq!(h.comments(), 0, "the write ran in an archived project");
    assert_eq!(h.t.ok("session.get", json!({"sessionId": h.session}))["status"], "waitingForApproval");

    // Restored, the write is asked again (archiving moved the project on: the approval
    // was for the version before), and, approved, runs; while it runs, the project
    // cannot be archived.
    h.t.ok("project.archive", json!({"projectId": h.project, "archived": false}));
    let (result, _) = h.approve(&request, true);
    assert_eq!(result["reason"], "blocked_on_approval");
    let request = pending_request(&result);
    let (result, refused) = std::thread::scope(|scope| {
        let approving = scope.spawn(|| h.stream("session.resolveApproval", json!({"sessionId": h.session, "requestId": request, "approved": true})));
        std::thread::sleep(Duration::from_millis(250));
        let refused = h.t.engine.call("project.archive", json!({"projectId": h.project, "archived": true})).unwrap_err();
        (approving.join().unwrap(), refused)
    });
    assert_eq!((refused.code, refused.message_id.as_deref()), (ErrorCode::Conflict, Some("project.session_running")), "{refused:?}");
    assert_eq!(h.t.ok("project.get", json!({"projectId": h.project}))["archived"], false);
    assert_eq!(result.0.unwrap()["reason"], "completed");
    assert_eq!(h.comments(), 1);
    let (result, _) = h.send("再来");
    assert_eq!(result["reason"], "completed");
}

/// An archived session comes back with `session.archive {archived: false}`: it is
/// listed and can be continued again, its log says so, and the model sees the whole
/// conversation as before. Restoring one whose project is archived is refused with the
/// way out, and nothing changes.
#[test]
fn an_archived_session_can_be_brought_back_and_continued() {
    let h = setup(vec![Reply::text("第一次回答"), Reply::text("恢复后的回答")], json!({}));
    h.send("写个开头");
    h.t.ok("session.archive", json!({"sessionId": h.session}));
    let refused = h.t.engine.call("session.submit", json!({"sessionId": h.session, "text": "再来"})).unwrap_err();
    assert_eq!(refused.code, ErrorCode::Validation);
    assert!(refused.hints.iter().any(|hint| hint.id == "unarchive_session" && hint.params.get("session") == Some(&h.session)), "{refused:?}");

    // The project archived too: restoring the session is refused, with the way out.
    h.t.ok("project.archive", json!({"projectId": h.project, "archived": true}));
    let log_before = h.log().len();
    let error = h.t.engine.call("session.archive", json!({"sessionId": h.session, "archived": false})).unwrap_err();
    assert_eq!(error.code, ErrorCode::Validation);
    assert_eq!(error.message_id.as_deref(), Some("session.project_archived"));
    assert!(error.hints.iter().any(|hint| hint.id == "unarchive_project_first" && hint.params.get("project") == Some(&h.project)), "{error:?}");
    assert_eq!(h.log().len(), log_before, "a refused restore wrote to the log");
    assert_eq!(h.t.ok("session.get", json!({"sessionId": h.session}))["status"], "archived");
    let error = h.t.engine.call("session.archive", json!({"sessionId": "ses_nope", "archived": false})).unwrap_err();
    assert_eq!(error.code, ErrorCode::NotFound);
    let error = h.t.engine.call("session.archive", json!({"sessionId": h.session, "archived": "no"})).unwrap_err();
    assert_eq!(error.code, ErrorCode::Validation);

    h.t.ok("project.archive", json!({"projectId": h.project, "archived": false}));
    let view = h.t.ok("session.archive", json!({"sessionId": h.session, "archived": false}));
    assert_eq!(view["status"], "idle");
    assert_eq!(view["session"]["archived"], false);
    let last = h.log().pop().unwrap();
    assert_eq!(last.body.kind_name(), "session_unarchived");
    // Again: already restored, nothing written.
    let log_len = h.log().len();
    h.t.ok("session.archive", json!({"sessionId": h.session, "archived": false}));
    assert_eq!(h.log().len(), log_len);
    assert_eq!(h.t.ok("session.list", json!({"projectId": h.project}))["sessions"].as_array().unwrap().len(), 1);

    // It continues where it left off: the model sees the first exchange.
    let (result, _) = h.send("再来");
    assert_eq!(result["reason"], "completed");
    let request = h.server.chat_requests().pop().unwrap();
    let body = request.body.to_string();
    assert!(body.contains("写个开头") && body.contains("第一次回答") && body.contains("再来"), "{body}");
    // The same state after a replay of the log (a restart).
    let view = h.t.ok("session.get", json!({"sessionId": h.session}));
    assert_eq!(view["status"], "idle");
}

#[test]
fn a_session_survives_export_and_import() {
    let h = setup(vec![Reply::tool_calls(&[("w1", "test_write_note", r#"{"note":"hello"}"#)]), Reply::text("saved")], json!({}));
    h.t.ok("permissionRules.set", json!({"rules": [{"tool": "read_media_summary", "decision": "ask"}]}));
    let (result, _) = h.send("add a note");
    h.approve(&pending_request(&result), true);
    let before = h.t.ok("session.get", json!({"sessionId": h.session}));
    let out = h.t.data_dir().join("export-out");
    let manifest = h.t.ok("export.run", json!({"path": out}));
    assert_eq!(manifest["manifest"]["counts"]["sessions"], 1);
    assert_eq!(manifest["manifest"]["counts"]["sessionEvents"], json!(h.log().len()));

    let other = TestEngine::new();
    other.ok("import.run", json!({"path": out}));
    let after = other.ok("session.get", json!({"sessionId": h.session}));
    assert_eq!(after["messagesHash"], before["messagesHash"]);
    assert_eq!(other.engine.session_events(&h.session).unwrap(), h.log());
    assert_eq!(other.ok("permissionRules.get", json!({}))["rules"][0]["tool"], "read_media_summary");
    let snapshot = h.log().into_iter().find_map(|e| e.context_snapshot_id).unwrap();
    assert!(other.engine.context_snapshot(&snapshot).unwrap().is_some());
}
