//! Checkpoints through the API on real sled: a restore makes new versions (an
//! autosnapshot first when there are unsaved changes) and new draft revisions, never
//! rewrites history, leaves publishing and newer drafts alone, drops the session's
//! staged set, and tells the session with a `rewound` event the model reads and a
//! replay rebuilds exactly.

use std::time::Duration;

use inkstone_api::api::StreamEvent;
use inkstone_api::harness::{replay, rewound_note, EventBody};
use inkstone_api::proposals::apply;
use inkstone_api::ErrorCode;
use inkstone_test_support::model_server::{ModelServer, Reply};
use serde_json::{json, Value};

use crate::staging::{fixture, fixture_at, Fx, SOURCE};

fn versions(fx: &Fx) -> Vec<Value> {
    let list = fx.call("version.list", json!({"projectId": fx.project}));
    let mut out: Vec<Value> = list["versions"].as_array().unwrap().iter().map(|v| fx.call("version.get", json!({"projectId": fx.project, "number": v["number"]}))).collect();
    out.reverse();
    out
}

fn draft(fx: &Fx, platform: &str) -> Value {
    fx.call("platformDraft.get", json!({"projectId": fx.project, "platform": platform}))
}

fn checkpoint(fx: &Fx, label: &str) -> Value {
    fx.call("checkpoint.create", json!({"sessionId": fx.session, "label": label}))
}

fn restore(fx: &Fx, checkpoint: &Value) -> Value {
    fx.call("checkpoint.restore", json!({"sessionId": fx.session, "checkpointId": checkpoint["id"]}))
}

#[test]
fn a_restore_makes_new_versions_and_draft_revisions_and_keeps_history() {
    let fx = fixture(SOURCE, json!(["wechat", "x"]));
    fx.call("version.create", json!({"projectId": fx.project, "message": "first"}));
    fx.call("platformDraft.save", json!({"projectId": fx.project, "platform": "wechat"}));
    fx.call("platformDraft.save", json!({"projectId": fx.project, "platform": "x"}));
    let saved_wechat = draft(&fx, "wechat");
    let revision_then = fx.revision();

    let cp = checkpoint(&fx, "before the edits");
    assert!(cp["id"].as_str().unwrap().starts_with("chk_"));
    assert_eq!((cp["head"].as_u64(), cp["revision"].as_u64(), cp["sequence"].as_u64()), (Some(1), Some(revision_then), Some(1)));
    assert_eq!(cp["reason"], "manual");
    assert!(cp.get("workingSource").is_none(), "the working copy equals version 1, so it is not stored twice");
    assert_eq!(cp["drafts"].as_array().unwrap().len(), 2);
    assert_eq!(fx.call("checkpoint.list", json!({"sessionId": fx.session}))["checkpoints"], json!([cp]));

    // Work after the checkpoint: a saved version, an accepted proposal, a hand edit of
    // a draft, a draft of a new platform, unsaved changes, and a staged proposal.
    let second = SOURCE.replace("路上的花", "路边的花");
    fx.call("project.update", json!({"projectId": fx.project, "source": second}));
    fx.call("version.create", json!({"projectId": fx.project, "message": "second"}));
    let third = second.replace("傍晚的风", "夜里的风");
    let p = fx.propose(&second, &third, "Night");
    let accepted = apply::accept(
        fx.t.engine.kernel(),
        &apply::Accept { proposal_id: p.id.clone(), hunks: None, expected_base: fx.revision(), choices: None, confirm_final: false, actor: apply::Actor::Person },
    )
    .unwrap();
    assert_eq!(accepted.version.unwrap().number, 3);
    let edited =
        fx.call("platformDraft.edit", json!({"projectId": fx.project, "platform": "wechat", "baseRevision": 1, "content": {"type": "html", "html": "<p>手改</p>", "digest": ""}}));
    assert_eq!(edited["draft"]["revision"], 2);
    fx.call("platformDraft.save", json!({"projectId": fx.project, "platform": "zhihu"}));
    let unsaved = format!("{third}\n没保存的一段。\n");
    fx.call("project.update", json!({"projectId": fx.project, "source": unsaved}));
    let staged = fx.propose(&unsaved, &unsaved.replace("没保存", "还没保存"), "Staged");
    fx.stage(&staged.id);
    let history = versions(&fx);
    assert_eq!(history.len(), 3);
    let (x_before, zhihu_before) = (draft(&fx, "x"), draft(&fx, "zhihu"));
    let revision_before = fx.revision();

    let restored = restore(&fx, &cp);
    assert_eq!(restored["checkpointId"], cp["id"]);
    assert_eq!(restored["autosnapshot"]["number"], 4, "the unsaved changes are kept first");
    assert_eq!(restored["version"]["number"], 5);
    assert_eq!(restored["version"]["origin"], json!({"type": "checkpoint", "checkpointId": cp["id"]}));
    assert_eq!(restored["project"]["source"], SOURCE);
    assert_eq!(restored["project"]["revision"], revision_before + 1);
    assert_eq!(restored["project"]["head"], 5);
    assert_eq!(restored["draftsUnchanged"], json!(["x"]));
    assert_eq!(restored["draftsNewer"], json!(["zhihu"]));
    assert_eq!(restored["draftsSkipped"], json!([]));
    assert_eq!(restored["stagingDiscarded"], true);
    assert_eq!(restored["draftsRestored"].as_array().unwrap().len(), 1);

    let all = versions(&fx);
    assert_eq!(all.len(), 5);
    assert_eq!(&all[..3], &history[..], "history is never rewritten");
    assert_eq!(all[3]["source"], json!(unsaved));
    assert_eq!(all[3]["origin"]["type"], "autosnapshot");
    assert_eq!(all[3]["messageId"], "autosnapshot_before_checkpoint");
    assert_eq!(all[4]["messageId"], "restored_checkpoint");
    assert_eq!(all[4]["messageParams"]["label"], cp["label"], "{}", all[4]);
    assert_eq!((all[4]["source"].as_str(), all[4]["title"].as_str()), (Some(SOURCE), Some("春天")));
    let project = fx.project();
    assert_eq!((project["source"].as_str(), project["head"].as_u64()), (Some(SOURCE), Some(5)));

    let wechat = draft(&fx, "wechat");
    assert_eq!(wechat["revision"], 3, "a new revision, not the old one back");
    assert_eq!(wechat["content"], saved_wechat["content"]);
    assert_eq!(wechat["title"], saved_wechat["title"]);
    assert_eq!(wechat["handEdited"], false);
    assert_eq!(restored["draftsRestored"][0], wechat);
    assert_eq!(draft(&fx, "x"), x_before);
    assert_eq!(draft(&fx, "zhihu"), zhihu_before, "a draft made after the checkpoint is left alone");

    assert!(fx.staging()["staging"].is_null(), "the staged set sat on the replaced working copy");
    let activity = fx.call("activity.list", json!({"projectId": fx.project, "limit": 1}));
    assert_eq!(activity["activities"][0]["kind"], "checkpoint_restored");

    // The session's log says so, and the model will read it.
    let events = fx.call("session.events", json!({"sessionId": fx.session}));
    let last = events["events"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["kind"], "rewound");
    assert_eq!(last["payload"], json!({"checkpointId": cp["id"], "toSequence": 1, "version": 5}));
    assert_eq!(last["modelVisible"], true);
    assert_eq!(restored["event"], last);
    let log = fx.t.engine.session_events(&fx.session).unwrap();
    let replayed = replay(log.iter());
    assert_eq!(&*replayed.messages().last().unwrap().content, rewound_note(cp["id"].as_str().unwrap(), 1, 5));
    let view = fx.call("session.get", json!({"sessionId": fx.session, "timeline": true}));
    assert_eq!(view["messagesHash"], json!(replayed.messages_hash()));
    assert_eq!(view["timeline"].as_array().unwrap().last().unwrap()["kind"], "rewound");

    // Restoring again, with nothing unsaved, makes one more version and no autosnapshot.
    let again = restore(&fx, &cp);
    assert!(again.get("autosnapshot").is_none());
    assert_eq!(again["version"]["number"], 6);
    assert_eq!(again["draftsRestored"], json!([]));
    assert_eq!(again["draftsUnchanged"], json!(["wechat", "x"]));
    assert_eq!(versions(&fx).len(), 6);
}

#[test]
fn a_checkpoint_before_any_version_restores_its_working_copy_and_skips_a_publishing_draft() {
    let fx = fixture(SOURCE, json!(["x"]));
    fx.call("platformDraft.save", json!({"projectId": fx.project, "platform": "x"}));
    let cp = checkpoint(&fx, "unsaved start");
    assert_eq!(cp["head"], 0);
    assert_eq!(cp["workingSource"], SOURCE, "with no version yet the working copy itself is kept");
    fx.call("project.update", json!({"projectId": fx.project, "title": "夏天", "source": "# 夏天\n"}));
    let posts = json!({"type": "thread", "posts": [{"text": "改过的帖子", "weightedLength": 0}]});
    fx.call("platformDraft.edit", json!({"projectId": fx.project, "platform": "x", "baseRevision": 1, "content": posts}));
    fx.call("platformDraft.setStatus", json!({"projectId": fx.project, "platform": "x", "status": "publishing"}));
    let publishing = draft(&fx, "x");

    let restored = restore(&fx, &cp);
    assert_eq!(restored["autosnapshot"]["number"], 1, "the project had no version: its working copy is kept first");
    assert_eq!(restored["version"]["number"], 2);
    assert_eq!((restored["project"]["title"].as_str(), restored["project"]["source"].as_str()), (Some("春天"), Some(SOURCE)));
    assert_eq!(restored["draftsSkipped"][0]["platform"], "x");
    assert!(restored["draftsSkipped"][0]["reason"].as_str().unwrap().contains("published"));
    assert_eq!(restored["draftsRestored"], json!([]));
    assert_eq!(draft(&fx, "x"), publishing, "a publishing draft is never overwritten");
    let history = versions(&fx);
    assert_eq!((history[0]["title"].as_str(), history[0]["source"].as_str()), (Some("夏天"), Some("# 夏天\n")));
}

#[test]
fn checkpoint_calls_refuse_bad_input_and_write_nothing() {
    let fx = fixture(SOURCE, json!([]));
    let cp = checkpoint(&fx, "one");
    let before = fx.everything();
    let empty = fx.err("checkpoint.create", json!({"sessionId": fx.session, "label": "  "}));
    assert_eq!((empty.code, empty.details.unwrap()["field"].as_str()), (ErrorCode::Validation, Some("label")));
    let long = fx.err("checkpoint.create", json!({"sessionId": fx.session, "label": "长".repeat(201)}));
    assert_eq!(long.code, ErrorCode::Validation);
    assert_eq!(fx.err("checkpoint.create", json!({"sessionId": fx.session})).code, ErrorCode::Validation);
    assert_eq!(fx.err("checkpoint.create", json!({"sessionId": "ses_nope", "label": "x"})).code, ErrorCode::NotFound);
    let unknown = fx.err("checkpoint.restore", json!({"sessionId": fx.session, "checkpointId": cp["id"], "force": true}));
    assert_eq!((unknown.code, unknown.details.unwrap()["field"].as_str()), (ErrorCode::Validation, Some("force")));
    let missing = fx.err("checkpoint.restore", json!({"sessionId": fx.session, "checkpointId": "chk_nope"}));
    assert_eq!((missing.code, missing.hints[0].id.as_str()), (ErrorCode::NotFound, "list_checkpoints"));
    // A checkpoint belongs to its session.
    let other = fx.call("session.create", json!({"projectId": fx.project}))["session"]["id"].as_str().unwrap().to_owned();
    assert_eq!(fx.err("checkpoint.restore", json!({"sessionId": other, "checkpointId": cp["id"]})).code, ErrorCode::NotFound);
    fx.call("session.archive", json!({"sessionId": other}));
    assert_eq!(fx.err("checkpoint.create", json!({"sessionId": other, "label": "x"})).code, ErrorCode::Validation);
    assert_eq!(fx.call("checkpoint.list", json!({"sessionId": other})), json!({"checkpoints": []}));
    assert_eq!(fx.everything(), before, "refused calls write nothing");
}

fn stream(fx: &Fx, method: &str, params: Value) -> Result<Value, inkstone_api::ApiError> {
    fx.t.engine.call_stream(method, params, &mut |_: StreamEvent| {})
}

#[test]
fn the_model_reads_the_rewind_and_replay_equals_what_it_was_sent() {
    let server = ModelServer::start(vec![
        Reply::tool_calls(&[("q1", "ask_user_question", r#"{"question":"哪一段？"}"#)]),
        Reply::text("好的，改第二段。"),
        Reply::text("收到，我重新读一遍。"),
    ]);
    let fx = fixture_at(&server.base_url(), SOURCE, json!([]));
    let cp = checkpoint(&fx, "start");
    fx.call("project.update", json!({"projectId": fx.project, "source": format!("{SOURCE}\n新的一段。\n")}));
    let blocked = stream(&fx, "session.submit", json!({"sessionId": fx.session, "text": "改一下"})).unwrap();
    assert_eq!(blocked["reason"], "blocked_on_question");

    // The assistant's question waits for an answer: the note cannot go between the
    // call and its result.
    let before = fx.everything();
    let error = fx.err("checkpoint.restore", json!({"sessionId": fx.session, "checkpointId": cp["id"]}));
    assert_eq!((error.code, error.hints[0].id.as_str()), (ErrorCode::Conflict, "decide_first"));
    assert_eq!(fx.everything(), before, "nothing written");

    let question = blocked["session"]["pendingQuestion"]["questionId"].as_str().unwrap().to_owned();
    let answered = stream(&fx, "session.answerQuestion", json!({"sessionId": fx.session, "questionId": question, "answer": "第二段"})).unwrap();
    assert_eq!(answered["reason"], "completed");
    let restored = restore(&fx, &cp);
    assert_eq!(restored["autosnapshot"]["number"], 1);
    let note = rewound_note(cp["id"].as_str().unwrap(), cp["sequence"].as_u64().unwrap(), 2);
    let next = stream(&fx, "session.submit", json!({"sessionId": fx.session, "text": "继续"})).unwrap();
    assert_eq!(next["reason"], "completed");

    // The third request carries the note right before the new message.
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 3);
    let sent = requests[2].body["messages"].as_array().unwrap().clone();
    let n = sent.len();
    assert_eq!((sent[n - 2]["role"].as_str(), sent[n - 2]["content"].as_str()), (Some("user"), Some(note.as_str())));
    assert_eq!((sent[n - 1]["role"].as_str(), sent[n - 1]["content"].as_str()), (Some("user"), Some("继续")));
    server.assert_tool_results_paired();

    // Replay of the log gives, call by call, exactly the messages each call recorded.
    let log = fx.t.engine.session_events(&fx.session).unwrap();
    let calls: Vec<usize> = log.iter().enumerate().filter(|(_, e)| matches!(e.body, EventBody::ModelCallStarted { .. })).map(|(i, _)| i).collect();
    assert_eq!(calls.len(), 3);
    for (index, request) in calls.iter().zip(&requests) {
        let EventBody::ModelCallStarted { messages_hash, message_count, .. } = &log[*index].body else { unreachable!() };
        let replayed = replay(log[..*index].iter());
        assert_eq!(&replayed.messages_hash(), messages_hash);
        assert_eq!(replayed.messages().len(), *message_count as usize);
        let wire = request.body["messages"].as_array().unwrap();
        assert_eq!(wire.len(), replayed.messages().len() + 1, "the system message and the replayed ones");
        for (sent, message) in wire[1..].iter().zip(replayed.messages()) {
            assert_eq!(sent["content"].as_str().unwrap_or(""), &*message.content);
            assert_eq!(sent["role"], serde_json::to_value(message.role).unwrap());
        }
    }
    let view = fx.call("session.get", json!({"sessionId": fx.session}));
    assert_eq!(view["messagesHash"], json!(replay(log.iter()).messages_hash()));
}

#[test]
fn a_restore_while_a_turn_runs_is_a_conflict() {
    let server = ModelServer::start(vec![Reply::delayed(Duration::from_millis(700), Reply::text("慢慢来"))]);
    let fx = fixture_at(&server.base_url(), SOURCE, json!([]));
    let cp = checkpoint(&fx, "start");
    let refused = std::thread::scope(|scope| {
        let turn = scope.spawn(|| stream(&fx, "session.submit", json!({"sessionId": fx.session, "text": "写点什么"})));
        std::thread::sleep(Duration::from_millis(250));
        let refused = fx.t.engine.call("checkpoint.restore", json!({"sessionId": fx.session, "checkpointId": cp["id"]}));
        assert_eq!(turn.join().unwrap().unwrap()["reason"], "completed");
        refused
    });
    let error = refused.unwrap_err();
    assert_eq!(error.code, ErrorCode::Conflict);
    assert!(error.hints.iter().any(|h| h.id == "interrupt"));
    assert_eq!(versions(&fx).len(), 0, "nothing was restored");
    let restored = restore(&fx, &cp);
    assert_eq!((restored["autosnapshot"]["number"].as_u64(), restored["version"]["number"].as_u64()), (Some(1), Some(2)));
}
