//! Tools through the harness: parallel and exclusive runs, unknown outcomes,
//! validation, timeouts and interrupts of tools, large results, the registry's rules,
//! failed writes, long articles and tools loaded on demand.

use std::sync::Arc;
use std::time::Duration;

use inkstone_api::harness::tools::{Capability, Concurrency};
use inkstone_api::harness::{replay, EventBody, PermissionPolicy, ToolFailure, ToolHandler};
use inkstone_api::ErrorCode;
use inkstone_test_support::model_server::Reply;
use serde_json::{json, Value};

use super::harness::*;

#[test]
fn parallel_reads_come_back_in_request_order_though_they_finish_out_of_order() {
    let h = setup(
        vec![
            Reply::tool_calls(&[
                ("c1", "slow_read", r#"{"label":"slow","ms":400}"#),
                ("c2", "slow_read", r#"{"label":"fast","ms":5}"#),
                ("c3", "read_project_context", "{}"),
                ("c4", "read_versions", "{}"),
            ]),
            Reply::text("done"),
        ],
        json!({}),
    );
    let (result, _) = h.send("look");
    assert_eq!(result["reason"], "completed");
    assert_eq!(*h.finished.lock().unwrap(), ["fast", "slow"], "they ran concurrently");
    let ids: Vec<String> = h.results().into_iter().map(|r| r.0).collect();
    assert_eq!(ids, ["c1", "c2", "c3", "c4"]);
    let last = &h.server.chat_requests()[1].body["messages"];
    let tool_ids: Vec<&str> = last.as_array().unwrap().iter().filter_map(|m| m["tool_call_id"].as_str()).collect();
    assert_eq!(tool_ids, ["c1", "c2", "c3", "c4"]);
    assert!(h.results()[2].2.contains("春眠不觉晓"));
    let log = h.log();
    let assistant = log.iter().find(|e| matches!(e.body, EventBody::AssistantMessage { .. })).unwrap().event_id.clone();
    assert!(
        log.iter().filter(|e| matches!(e.body, EventBody::ToolResult { .. })).all(|e| e.parent_event_id.as_deref() == Some(assistant.as_str())),
        "tool results point at the message that asked for them"
    );
    h.server.assert_calls(2);
    h.assert_replay_matches_live();
}

#[test]
fn exclusive_tools_run_one_at_a_time_in_request_order() {
    let h = setup(
        vec![
            Reply::tool_calls(&[
                ("e1", "exclusive_probe", r#"{"n":1}"#),
                ("e2", "exclusive_probe", r#"{"n":2}"#),
                ("s1", "slow_read", r#"{"label":"r","ms":5}"#),
                ("e3", "exclusive_probe", r#"{"n":3}"#),
                ("p1", "panicking_tool", "{}"),
            ]),
            Reply::text("ok"),
        ],
        json!({}),
    );
    let (result, _) = h.send("go");
    assert_eq!(result["reason"], "completed");
    let probes: Vec<String> = h.finished.lock().unwrap().iter().filter(|l| l.starts_with("probe")).cloned().collect();
    assert_eq!(probes, ["probe1 overlap 1", "probe2 overlap 1", "probe3 overlap 1"]);
    let ids: Vec<String> = h.results().into_iter().map(|r| r.0).collect();
    assert_eq!(ids, ["e1", "e2", "s1", "e3", "p1"]);
    assert_eq!(h.results()[4].1, "tool_error", "a panicking tool is a failed call");
    h.assert_replay_matches_live();
}

#[test]
fn a_write_whose_outcome_is_unknown_is_not_run_again() {
    let h = setup(
        vec![
            Reply::tool_calls(&[("w1", "slow_write_note", r#"{"note":"x","ms":600}"#)]),
            Reply::text("timed out"),
            Reply::tool_calls(&[("w2", "slow_write_note", r#"{"note":"x","ms":600}"#)]),
            Reply::text("ok"),
        ],
        json!({"toolTimeoutMs": 100}),
    );
    let (result, _) = h.send("write");
    let (result, _) = h.approve(&pending_request(&result), true);
    assert_eq!(result["reason"], "completed");
    assert_eq!(h.results()[0].1, "timeout");
    assert_eq!(h.comments(), 1, "the write finished after its timeout");
    let (result, _) = h.send("again");
    assert_eq!(result["reason"], "completed");
    assert_eq!(h.results()[1].1, "interrupted");
    assert!(h.results()[1].2.contains("outcome is unknown"));
    assert_eq!(h.comments(), 1, "at most once");
    h.assert_replay_matches_live();
}

#[test]
fn schema_violations_and_unknown_tools_are_results_the_model_sees() {
    let h = setup(
        vec![
            Reply::tool_calls(&[("c1", "read_comments", r#"{"includeResolved":"yes"}"#), ("c2", "delete_everything", "{}"), ("c3", "read_templates", "not json")]),
            Reply::text("ok"),
        ],
        json!({}),
    );
    let (result, _) = h.send("go");
    assert_eq!(result["reason"], "completed");
    let results = h.results();
    assert_eq!(results[0].1, "schema_violation");
    assert!(results[0].2.contains("/includeResolved"), "names the JSON pointer: {}", results[0].2);
    assert_eq!(results[1].1, "unknown_tool");
    assert!(results[1].2.contains("read_project_context"), "lists the tools");
    assert_eq!(results[2].1, "schema_violation");
    h.assert_replay_matches_live();
}

#[test]
fn interrupt_during_a_tool_stops_it() {
    let h = setup(vec![Reply::tool_calls(&[("c1", "slow_read", r#"{"label":"long","ms":20000}"#)])], json!({}));
    let started = std::time::Instant::now();
    let (result, _) = std::thread::scope(|scope| {
        let sender = scope.spawn(|| h.stream("session.submit", json!({"sessionId": h.session, "text": "go"})));
        std::thread::sleep(Duration::from_millis(500));
        h.t.ok("session.interrupt", json!({"sessionId": h.session}));
        sender.join().unwrap()
    });
    assert_eq!(result.unwrap()["reason"], "interrupted");
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(h.results()[0].1, "interrupted");
    assert!(h.finished.lock().unwrap().is_empty());
    h.assert_replay_matches_live();
}

#[test]
fn a_tool_past_its_timeout_is_stopped_and_reported() {
    let h = setup(vec![Reply::tool_calls(&[("c1", "slow_read", r#"{"label":"long","ms":20000}"#)]), Reply::text("ok")], json!({"toolTimeoutMs": 200}));
    let (result, _) = h.send("go");
    assert_eq!(result["reason"], "completed");
    assert_eq!(h.results()[0].1, "timeout");
    h.assert_replay_matches_live();
}

#[test]
fn large_results_go_to_the_result_store_and_the_model_sees_a_preview() {
    // Over the log line (40,000 CJK characters are 120 KB); a few thousand are now
    // seen whole (see the next test).
    let source = "长文".repeat(20_000);
    let h = setup_with(vec![Reply::tool_calls(&[("c1", "read_project_context", "{}")]), Reply::text("ok")], json!({}), &source);
    h.send("read all");
    let content = h.results()[0].2.clone();
    let visible: Value = serde_json::from_str(&content).unwrap();
    assert_eq!(visible["truncated"], true);
    assert!(visible["preview"].as_str().unwrap().chars().count() <= 2_000);
    let stored = h.engine().stored_result(visible["ref"].as_str().unwrap()).unwrap().unwrap();
    assert!(stored.contains(&source));
    for event in h.log() {
        assert!(serde_json::to_vec(&event).unwrap().len() <= inkstone_api::harness::MAX_EVENT_BYTES);
    }
    h.assert_replay_matches_live();
}

#[test]
fn an_interrupt_during_a_write_lets_it_finish_and_says_so() {
    let h = setup(vec![Reply::tool_calls(&[("w1", "slow_write_note", r#"{"note":"x","ms":700}"#)])], json!({}));
    let (result, _) = h.send("write");
    let request = pending_request(&result);
    let (result, _) = std::thread::scope(|scope| {
        let approving = scope.spawn(|| h.stream("session.resolveApproval", json!({"sessionId": h.session, "requestId": request, "approved": true})));
        std::thread::sleep(Duration::from_millis(300));
        h.t.ok("session.interrupt", json!({"sessionId": h.session}));
        approving.join().unwrap()
    });
    assert_eq!(result.unwrap()["reason"], "interrupted");
    assert_eq!(h.comments(), 1, "the write that had begun finished");
    let (_, status, content) = h.results()[0].clone();
    assert_eq!(status, "success");
    assert!(content.contains("it finished"), "{content}");
    h.assert_replay_matches_live();
}

#[test]
fn read_publications_reports_saved_drafts_with_their_status() {
    let h = setup(vec![Reply::tool_calls(&[("p1", "read_publications", r#"{"platforms":["x","wechat"]}"#)]), Reply::text("ok")], json!({}));
    h.t.ok("platformDraft.save", json!({"projectId": h.project, "platform": "x"}));
    h.t.ok("platformDraft.setStatus", json!({"projectId": h.project, "platform": "x", "status": "publishing"}));
    h.t.ok("project.update", json!({"projectId": h.project, "source": "# 春日\n\n改过的正文。"}));
    let (result, _) = h.send("where do the drafts stand?");
    assert_eq!(result["reason"], "completed");
    let (_, status, content) = h.results().into_iter().next().unwrap();
    assert_eq!(status, "success");
    let value: Value = serde_json::from_str(&content).unwrap_or_else(|_| panic!("not JSON: {content}"));
    let drafts = value["drafts"].as_array().unwrap();
    let x = drafts.iter().find(|d| d["platform"] == "x").unwrap();
    assert_eq!(x["saved"]["status"], "publishing");
    assert_eq!(x["saved"]["readOnly"], true);
    assert_eq!(x["saved"]["revision"], 2);
    assert_eq!(x["saved"]["sourceChangedSince"], true);
    let wechat = drafts.iter().find(|d| d["platform"] == "wechat").unwrap();
    assert!(wechat["saved"].is_null(), "no saved WeChat draft: {wechat}");
    h.assert_replay_matches_live();
}

#[test]
fn the_registry_refuses_a_write_that_would_not_ask_and_read_tools_cannot_write() {
    let h = setup(
        vec![
            Reply::tool_calls(&[("r1", "sneaky_read", "{}")]),
            Reply::text("ok"),
            Reply::tool_calls(&[("u1", "undeclared_write", r#"{"note":"x"}"#)]),
            Reply::tool_calls(&[("u2", "undeclared_write", r#"{"note":"x"}"#)]),
            Reply::text("done"),
        ],
        json!({}),
    );
    let handler: ToolHandler = Arc::new(|ctx, input| {
        let comment = inkstone_api::project::comments::add(ctx.writer()?, ctx.project_id, input["note"].as_str().unwrap_or("sneaky"), None)?;
        Ok(json!({"commentId": comment.id}))
    });
    // A write, or a tool that is not read-only, with `allow`: refused.
    let error = h.engine().register_tool(definition("bad_write", Capability::Write, PermissionPolicy::Allow), Arc::clone(&handler)).unwrap_err();
    assert_eq!(error.code, ErrorCode::Validation);
    assert_eq!(error.details.as_ref().unwrap()["field"], "permission", "{error:?}");
    let mut not_read_only = definition("bad_read", Capability::Read, PermissionPolicy::Allow);
    not_read_only.read_only = false;
    assert_eq!(h.engine().register_tool(not_read_only.clone(), Arc::clone(&handler)).unwrap_err().code, ErrorCode::Validation);
    assert!(h.engine().tool_definitions().unwrap().iter().all(|d| d.name != "bad_write" && d.name != "bad_read"));

    // A read tool's handler cannot reach a write.
    h.engine().register_tool(definition("sneaky_read", Capability::Read, PermissionPolicy::Allow), Arc::clone(&handler)).unwrap();
    let (result, _) = h.send("read");
    assert_eq!(result["reason"], "completed");
    assert_eq!(h.results()[0].1, "tool_error");
    assert!(h.results()[0].2.contains("read-only"), "{}", h.results()[0].2);
    assert_eq!(h.comments(), 0);

    // Not read-only but not declared a write: it asks, and runs at most once.
    let mut undeclared = not_read_only;
    undeclared.name = "undeclared_write".to_owned();
    undeclared.permission = PermissionPolicy::Ask;
    h.engine().register_tool(undeclared, handler).unwrap();
    let (result, _) = h.send("write");
    assert_eq!(result["reason"], "blocked_on_approval");
    let (result, _) = h.approve(&pending_request(&result), true);
    assert_eq!(result["reason"], "completed");
    assert_eq!(h.comments(), 1);
    let reused = h.log().into_iter().filter(|e| matches!(e.body, EventBody::ToolResult { reused_execution: true, .. })).count();
    assert_eq!(reused, 1, "the same call again returns the recorded result");
    assert_eq!(h.comments(), 1, "at most once");
    // And plan mode denies it.
    h.server.push(Reply::tool_calls(&[("u3", "undeclared_write", r#"{"note":"y"}"#)]));
    h.server.push(Reply::text("refused"));
    let (result, _) = h.stream("session.submit", json!({"sessionId": h.session, "text": "again", "mode": "plan"}));
    assert_eq!(result.unwrap()["reason"], "completed");
    assert_eq!(h.results().last().unwrap().1, "blocked");
    assert_eq!(h.comments(), 1);
    h.assert_replay_matches_live();
}

#[test]
fn after_a_write_fails_the_later_writes_of_the_turn_are_not_run() {
    let h = setup(
        vec![
            Reply::tool_calls(&[("f1", "failing_write", r#"{"note":"a"}"#), ("w1", "test_write_note", r#"{"note":"b"}"#), ("r1", "read_versions", "{}")]),
            Reply::tool_calls(&[("w2", "test_write_note", r#"{"note":"c"}"#)]),
            Reply::text("stopped"),
        ],
        json!({}),
    );
    let mut failing = definition("failing_write", Capability::Write, PermissionPolicy::Ask);
    failing.read_only = false;
    failing.concurrency = Concurrency::Exclusive;
    h.engine().register_tool(failing, Arc::new(|_, _| Err(ToolFailure::new("the disk was full")))).unwrap();
    let (result, _) = h.send("write both");
    assert_eq!(result["reason"], "blocked_on_approval");
    let (result, _) = h.approve(&pending_request(&result), true);
    assert_eq!(result["reason"], "completed", "the later writes were not asked for");
    let results = h.results();
    let statuses: Vec<(&str, &str)> = results.iter().map(|(id, status, _)| (id.as_str(), status.as_str())).collect();
    assert_eq!(statuses, [("f1", "tool_error"), ("w1", "cancelled"), ("r1", "success"), ("w2", "cancelled")], "reads still run; writes, in this reply and the next, do not");
    assert!(results[1].2.contains("earlier write of this turn (`failing_write`, call f1) failed"), "{}", results[1].2);
    assert_eq!(h.comments(), 0);
    h.assert_replay_matches_live();
}

#[test]
fn the_model_sees_a_long_article_whole_and_reads_the_rest_of_a_larger_one() {
    // A Chinese article of several thousand characters: read_project_context shows all
    // of it (it used to be cut to 2,000 characters).
    let article = "春眠不觉晓，处处闻啼鸟。夜来风雨声，花落知多少。".repeat(250);
    let h = setup_with(vec![Reply::tool_calls(&[("c1", "read_project_context", "{}"), ("c2", "read_versions", "{}")]), Reply::text("ok")], json!({}), &article);
    h.t.ok("llmProfile.update", json!({"profile": "fake", "changes": {"name": "fake", "baseUrl": h.server.base_url(), "model": "fake-model", "contextWindow": 200000}}));
    h.send("read it");
    let content = h.results()[0].2.clone();
    let visible: Value = serde_json::from_str(&content).unwrap();
    assert_eq!(visible["source"].as_str(), Some(article.as_str()), "the whole {}-character article", article.chars().count());
    h.assert_replay_matches_live();

    // Larger than the log line: preview and reference, and read_stored_result reads on.
    let long = "长文".repeat(20_000);
    h.t.ok("project.update", json!({"projectId": h.project, "source": long}));
    h.server.push(Reply::tool_calls(&[("c3", "read_project_context", "{}")]));
    h.server.push(Reply::text("too long"));
    h.send("read it again");
    let visible: Value = serde_json::from_str(&h.results()[2].2).unwrap();
    assert_eq!(visible["truncated"], true);
    let reference = visible["ref"].as_str().unwrap().to_owned();
    let offset = visible["nextOffset"].as_u64().unwrap();
    let stored = h.engine().stored_result(&reference).unwrap().unwrap();
    let args = json!({"ref": reference, "offset": offset}).to_string();
    h.server.push(Reply::tool_calls(&[("c4", "read_stored_result", args.as_str())]));
    h.server.push(Reply::text("read on"));
    h.send("go on");
    let (_, status, content) = h.results()[3].clone();
    assert_eq!(status, "success");
    let slice: Value = serde_json::from_str(&content).unwrap_or_else(|_| panic!("a slice is seen inline: {content}"));
    let taken = slice["chars"].as_u64().unwrap() as usize;
    let expected: String = stored.chars().skip(offset as usize).take(taken).collect();
    assert_eq!(slice["text"].as_str(), Some(expected.as_str()));
    assert!(taken >= 10_000, "a large slice: {taken}");
    assert_eq!(slice["nextOffset"], json!(offset as usize + taken));
    assert_eq!(slice["totalChars"], json!(stored.chars().count()));
    for event in h.log() {
        assert!(serde_json::to_vec(&event).unwrap().len() <= inkstone_api::harness::MAX_EVENT_BYTES);
    }
    h.assert_replay_matches_live();
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"].as_array().map(|tools| tools.iter().map(|t| t["function"]["name"].as_str().unwrap().to_owned()).collect()).unwrap_or_default()
}

#[test]
fn a_profile_that_loads_tools_on_demand_sends_the_core_and_what_the_model_loaded() {
    use inkstone_api::harness::tools::{loaded_tools, CORE_TOOLS, LOAD_TOOLS};
    let h = setup(
        vec![
            Reply::tool_calls(&[("l1", LOAD_TOOLS, r#"{"names":["propose_tags","no_such_tool"]}"#)]),
            Reply::tool_calls(&[("l2", LOAD_TOOLS, r#"{"names":["nothing_here"]}"#)]),
            Reply::text("loaded"),
            Reply::text("next turn"),
        ],
        json!({}),
    );
    let profile = h.t.ok("llmProfile.list", json!({}))["profiles"][0].clone();
    assert_eq!(profile["toolLoading"], "all", "the default sends every tool");
    h.t.ok("llmProfile.update", json!({"profile": "fake", "changes": {"name": "fake", "baseUrl": h.server.base_url(), "model": "fake-model", "toolLoading": "onDemand"}}));
    let (result, _) = h.send("给这篇加标签");
    assert_eq!(result["reason"], "completed");
    let (result, _) = h.send("再看看");
    assert_eq!(result["reason"], "completed");
    let requests = h.server.chat_requests();
    assert_eq!(requests.len(), 4);

    // First call: the core tools and load_tools, whose description lists the rest.
    let first = tool_names(&requests[0].body);
    let mut expected: Vec<String> = CORE_TOOLS.iter().map(|s| (*s).to_owned()).collect();
    expected.push(LOAD_TOOLS.to_owned());
    let mut sorted = first.clone();
    sorted.sort();
    expected.sort();
    assert_eq!(sorted, expected);
    let load =
        |body: &Value| body["tools"].as_array().unwrap().iter().find(|t| t["function"]["name"] == LOAD_TOOLS).map(|t| t["function"]["description"].as_str().unwrap().to_owned());
    let listed = load(&requests[0].body).unwrap();
    assert!(listed.contains("- propose_tags: ") && listed.contains("- update_project_metadata: "), "{listed}");
    assert!(!listed.contains("- propose_source_patch: "), "a core tool is not listed to load");
    let all: usize = h.engine().tool_definitions().unwrap().len();
    assert!(first.len() < all / 2, "{} of {all} tools sent", first.len());

    // The load: propose_tags is known, the other is reported unknown; a load of only
    // unknown names fails and changes nothing.
    let results = h.results();
    assert_eq!(results[0].1, "success");
    assert!(results[0].2.contains("propose_tags") && results[0].2.contains("no_such_tool"), "{}", results[0].2);
    assert_eq!(results[1].1, "tool_error", "{results:?}");
    assert!(results[1].2.contains("`nothing_here`"), "{}", results[1].2);

    // From the next call on, propose_tags is sent in full and no longer listed; it
    // stays loaded into the next turn (it is derived from the conversation).
    for request in &requests[1..] {
        let names = tool_names(&request.body);
        assert!(names.contains(&"propose_tags".to_owned()), "{names:?}");
        assert_eq!(names.len(), first.len() + 1);
        assert!(!load(&request.body).unwrap().contains("- propose_tags: "));
    }
    // Smaller: the first request's tool definitions against every tool's.
    let sent = requests[0].body["tools"].to_string().len();
    let full: usize = h
        .engine()
        .tool_definitions()
        .unwrap()
        .iter()
        .filter(|d| d.name != LOAD_TOOLS)
        .map(|d| json!({"type": "function", "function": {"name": d.name, "description": d.prompt, "parameters": d.input_schema}}).to_string().len() + 1)
        .sum();
    assert!(sent * 2 < full, "on demand sends {sent} bytes of tool definitions, all would be {full}");

    // A replay of the log gives the same messages, so the same tools.
    h.assert_replay_matches_live();
    let log = h.log();
    let replayed = replay(log.iter());
    assert!(loaded_tools(replayed.messages()).contains("propose_tags"));

    // Back to every tool (in a window where they take at most a quarter): no
    // load_tools in the request.
    h.t.ok("llmProfile.update", json!({"profile": "fake", "changes": {"name": "fake", "baseUrl": h.server.base_url(), "model": "fake-model", "contextWindow": 32768}}));
    h.server.push(Reply::text("all"));
    let (result, _) = h.send("全部");
    assert_eq!(result["reason"], "completed");
    let last = tool_names(&h.server.chat_requests()[4].body);
    assert!(!last.contains(&LOAD_TOOLS.to_owned()));
    assert_eq!(last.len(), all - 1);
}
