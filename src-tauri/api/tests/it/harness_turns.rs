//! Turns: streamed answers, the loop detector, budgets and limits, interrupts of
//! generation, broken streams, queued messages, selection-scoped tasks, a context too
//! long, and secrets kept out of snapshots and the log.

use std::time::Duration;

use inkstone_api::api::dto;
use inkstone_api::harness::{Event, EventBody};
use inkstone_api::llm::Role;
use inkstone_api::ErrorCode;
use inkstone_test_support::model_server::Reply;
use serde_json::{json, Value};

use super::harness::*;

#[test]
fn a_plain_answer_streams_deltas_and_logs_the_completed_message() {
    let h = setup(vec![Reply::text("你好，我读过了。")], json!({}));
    let (result, events) = h.send("读一下这篇稿子");
    assert_eq!(result["reason"], "completed");
    assert!(events.iter().any(|e| e.sequence == 0 && matches!(e.body, dto::EventBody::AssistantDelta { .. })), "deltas are delivered live");
    assert_eq!(kinds(&events), ["turn_started", "user_message", "context_assembled", "model_call_started", "assistant_message", "turn_ended"]);
    assert!(h.log().iter().all(|e| !matches!(e.body, EventBody::AssistantDelta { .. })), "the log keeps only the completed message");
    let from = h.t.ok("session.events", json!({"sessionId": h.session, "from": 3}));
    assert_eq!(from["events"][0]["sequence"], 3);
    assert_eq!(from["events"][0]["kind"], "user_message");
    assert_eq!(from["events"][0]["payload"]["text"], "读一下这篇稿子");
    assert!(result["timings"]["harnessMicros"].is_u64());
    h.assert_replay_matches_live();
}

#[test]
fn the_loop_detector_stops_the_same_call_the_third_time() {
    let h = setup(
        vec![Reply::tool_calls(&[("c1", "read_versions", "{}")]), Reply::tool_calls(&[("c2", "read_versions", "{ }")]), Reply::tool_calls(&[("c3", "read_versions", "{}")])],
        json!({}),
    );
    let (result, _) = h.send("go");
    assert_eq!(result["reason"], "loop_detected");
    let statuses: Vec<String> = h.results().into_iter().map(|r| r.1).collect();
    assert_eq!(statuses, ["success", "success", "loop_detected"]);
    h.server.assert_calls(3);
    h.assert_replay_matches_live();
}

#[test]
fn the_session_budget_stops_a_turn_and_says_so() {
    let h = setup(
        vec![Reply::ToolCalls { calls: vec![("c1".into(), "read_versions".into(), "{}".into())], content: String::new(), without_index: false, split_args: 0 }],
        json!({"tokenBudget": 10}),
    );
    let (result, _) = h.send("go");
    assert_eq!(result["reason"], "budget_exceeded");
    let (message, hints) = h.last_turn_end();
    assert!(message.contains("budget"), "{message}");
    assert_eq!(hints[0].id, "raise_budget");
    h.server.assert_calls(1);
    h.assert_replay_matches_live();
}

#[test]
fn the_model_turn_limit_ends_the_turn() {
    let h = setup(vec![Reply::tool_calls(&[("c1", "read_versions", "{}")]), Reply::tool_calls(&[("c2", "read_templates", "{}")])], json!({"maxModelTurns": 2}));
    let (result, _) = h.send("go");
    assert_eq!(result["reason"], "max_model_turns");
    h.server.assert_calls(2);
    h.assert_replay_matches_live();
}

#[test]
fn interrupt_during_generation_closes_the_reply_as_interrupted() {
    let h = setup(vec![Reply::Stall { content: "我正在写".to_owned() }], json!({}));
    // Interrupt once the first streamed word has arrived (not after a fixed pause, which
    // a loaded machine can outrun): the stalled stream then holds the connection open.
    let (first_word, arrived) = std::sync::mpsc::channel();
    let h = &h;
    let result = std::thread::scope(|scope| {
        let sender = scope.spawn(move || {
            h.engine().call_stream("session.submit", json!({"sessionId": h.session, "text": "write"}), &mut |event| {
                if let inkstone_api::api::StreamEvent::Harness(event) = event {
                    if matches!(event.body, dto::EventBody::AssistantDelta { .. }) {
                        let _ = first_word.send(());
                    }
                }
            })
        });
        arrived.recv_timeout(Duration::from_secs(60)).expect("the first word streams");
        let interrupted = h.t.ok("session.interrupt", json!({"sessionId": h.session}));
        assert_eq!(interrupted["interrupted"], true);
        sender.join().unwrap()
    });
    assert_eq!(result.unwrap()["reason"], "interrupted");
    let message = h.log().into_iter().find_map(|e| match e.body {
        EventBody::AssistantMessage { text, interrupted, .. } => Some((text, interrupted)),
        _ => None,
    });
    assert_eq!(message, Some(("我正在写".to_owned(), true)));
    assert_eq!(h.t.ok("session.interrupt", json!({"sessionId": h.session}))["interrupted"], false);
}

#[test]
fn a_stream_that_breaks_off_keeps_the_text_so_far_marked_cut_off_by_the_failure() {
    let garbage = Reply::Raw { status: 200, content_type: "text/html".to_owned(), body: "<html>not an API</html>".to_owned() };
    let provider_stop = Reply::StreamError { content: "夜来".to_owned(), error: json!({"message": "slow down", "code": 429}) };
    let h = setup(vec![garbage, Reply::Cut { content: "春眠不觉晓，处处".to_owned() }, provider_stop, Reply::text("春眠不觉晓，处处闻啼鸟。")], json!({}));
    let assistant = |log: &[Event]| -> Vec<(String, bool, String)> {
        log.iter()
            .filter_map(|e| match &e.body {
                EventBody::AssistantMessage { text, interrupted, finish_reason, .. } => Some((text.clone(), *interrupted, finish_reason.clone())),
                _ => None,
            })
            .collect()
    };
    let ids = |hints: &[inkstone_api::error::Hint]| hints.iter().map(|h| h.id.clone()).collect::<Vec<_>>();

    // A failure before any text: nothing to keep; the hints are the provider error's,
    // the retry one with its own id (not the generic `retry` of a storage failure).
    let (result, _) = h.send("写一句");
    assert_eq!(result["reason"], "model_error");
    assert!(assistant(&h.log()).is_empty(), "no text arrived, no assistant message");
    let (_, hints) = h.last_turn_end();
    assert_eq!(ids(&hints), ["check_compatible", "retry_connection"]);

    // The connection drops after part of the answer: the part is logged as an
    // interrupt keeps it, marked as cut off by the failure.
    let (result, events) = h.send("写一句");
    assert_eq!(result["reason"], "model_error");
    assert!(events.iter().any(|e| e.sequence == 0 && matches!(e.body, dto::EventBody::AssistantDelta { .. })), "the text streamed live first");
    assert_eq!(assistant(&h.log()), [("春眠不觉晓，处处".to_owned(), true, "error".to_owned())]);
    let (message, hints) = h.last_turn_end();
    assert!(message.starts_with("The connection to the model was lost during the answer"), "{message}");
    assert_eq!(ids(&hints), ["connection_lost", "check_server_running"], "an answering server is compatible: no hint to check that");
    // The log's order: the kept text comes before the turn's end (a reload shows both).
    let kinds: Vec<&str> = h.log().iter().rev().take(2).map(|e| e.kind_name()).collect();
    assert_eq!(kinds, ["turn_ended", "assistant_message"]);

    // The provider stops the answer with an error of its own: the text is kept too,
    // and the hints are that error's, not a lost connection's.
    let (result, _) = h.send("写一句");
    assert_eq!(result["reason"], "model_error");
    assert_eq!(assistant(&h.log()).last().unwrap(), &("夜来".to_owned(), true, "error".to_owned()));
    let (message, hints) = h.last_turn_end();
    assert!(message.starts_with("The model's answer broke off; the text that arrived is kept."), "{message}");
    assert_eq!(ids(&hints), ["wait_and_retry"]);

    // Trying again: the model sees its cut-off text, as after a stop.
    let (result, _) = h.send("写一句");
    assert_eq!(result["reason"], "completed");
    let sent = wire_messages(&h.server.chat_requests().last().unwrap().body);
    assert!(sent.iter().any(|m| m.role == Role::Assistant && &*m.content == "春眠不觉晓，处处"), "{sent:?}");
    h.assert_replay_matches_live();
}

#[test]
fn a_message_sent_while_a_turn_runs_is_queued_for_the_next_boundary() {
    let h = setup(vec![Reply::delayed(Duration::from_millis(600), Reply::text("first answer")), Reply::text("second answer")], json!({}));
    let (first, second) = std::thread::scope(|scope| {
        let first = scope.spawn(|| h.send("first"));
        std::thread::sleep(Duration::from_millis(250));
        let second = h.send("second");
        (first.join().unwrap(), second)
    });
    assert_eq!(second.0["queued"], true);
    assert_eq!(kinds(&second.1), ["message_queued"]);
    assert_eq!(first.0["reason"], "completed");
    let users: Vec<(String, bool)> = h
        .log()
        .into_iter()
        .filter_map(|e| match e.body {
            EventBody::UserMessage { text, was_queued, .. } => Some((text, was_queued)),
            _ => None,
        })
        .collect();
    assert_eq!(users, [("first".to_owned(), false), ("second".to_owned(), true)]);
    assert_eq!(first.0["session"]["queued"], json!([]));
    h.server.assert_calls(2);
    h.assert_replay_matches_live();
}

/// The UTF-16 range of `part` in `source` (its first occurrence).
fn utf16_range(source: &str, part: &str) -> (usize, usize) {
    let byte = source.find(part).unwrap();
    let from = source[..byte].encode_utf16().count();
    (from, from + part.encode_utf16().count())
}

#[test]
fn a_task_scoped_to_a_selection_is_checked_logged_and_in_the_working_set() {
    // "𠀀" takes two UTF-16 units: offsets after it differ from character counts.
    let source = "# 春日\n\n𠀀春眠不觉晓，处处闻啼鸟。A short draft.";
    let h = setup_with(vec![Reply::delayed(Duration::from_millis(600), Reply::text("改好了")), Reply::text("第二条"), Reply::text("第三条")], json!({}), source);
    let (from, to) = utf16_range(source, "处处闻啼鸟");
    assert_eq!(from, 14, "two units for 𠀀");
    let log_before = h.log().len();

    // Bad selections: a clear error naming the field, nothing written (not even the
    // mode switch that came with it), no model call.
    let refused = |selection: Value, field: &str| {
        let (result, events) = h.stream("session.submit", json!({"sessionId": h.session, "text": "改一下", "mode": "plan", "selection": selection}));
        let error = result.unwrap_err();
        assert_eq!(error.code, ErrorCode::Validation, "{error:?}");
        assert_eq!(error.details.as_ref().unwrap()["field"], field, "{error:?}");
        assert_eq!(error.hints.iter().map(|h| h.id.as_str()).collect::<Vec<_>>(), ["reselect_text"]);
        assert!(events.is_empty());
    };
    refused(json!({"from": from, "to": 400, "text": "处处闻啼鸟"}), "selection.to");
    refused(json!({"from": from - 1, "to": to - 1, "text": "处处闻啼鸟"}), "selection.text");
    refused(json!({"from": 6, "to": 7, "text": "𠀀"}), "selection.to");
    refused(json!({"from": to, "to": from, "text": "处处闻啼鸟"}), "selection.to");
    let (result, _) = h.stream("session.submit", json!({"sessionId": h.session, "text": "改一下", "selection": {"from": from, "to": to, "text": "处处闻啼鸟", "line": 1}}));
    assert_eq!(result.unwrap_err().code, ErrorCode::Validation, "unknown fields are refused");
    assert_eq!(h.log().len(), log_before, "a refused submit writes nothing");
    assert_eq!(h.t.ok("session.get", json!({"sessionId": h.session}))["mode"], "default");
    h.server.assert_calls(0);

    // A scoped task while another runs: queued with its selection, delivered with it.
    let selection = json!({"from": from, "to": to, "text": "处处闻啼鸟"});
    let (first, queued) = std::thread::scope(|scope| {
        let first = scope.spawn(|| h.send("先读一遍"));
        std::thread::sleep(Duration::from_millis(250));
        let queued = h.stream("session.submit", json!({"sessionId": h.session, "text": "把这句改得更短", "selection": selection}));
        (first.join().unwrap(), queued)
    });
    assert_eq!(queued.0.unwrap()["queued"], true);
    assert_eq!(first.0["reason"], "completed");
    let (_, third) = h.send("再看看全文");
    assert_eq!(third.iter().filter(|e| e.kind_name() == "user_message").count(), 1);

    let users: Vec<(String, bool, Option<Value>)> = h
        .log()
        .into_iter()
        .filter_map(|e| match e.body {
            EventBody::UserMessage { text, was_queued, selection } => Some((text, was_queued, selection.map(|s| serde_json::to_value(s).unwrap()))),
            _ => None,
        })
        .collect();
    assert_eq!(
        users,
        [("先读一遍".to_owned(), false, None), ("把这句改得更短".to_owned(), true, Some(selection.clone())), ("再看看全文".to_owned(), false, None)],
        "the selection is recorded in its user message"
    );
    let queued_event = h.log().into_iter().find(|e| e.kind_name() == "message_queued").unwrap();
    assert_eq!(serde_json::to_value(&queued_event.body).unwrap()["payload"]["selection"], selection);

    // The working set of the scoped message's call shows the selection; the next
    // message has none, and neither has its working set. The user message itself is
    // the task alone.
    let requests = h.server.chat_requests();
    assert_eq!(requests.len(), 3);
    let system = |i: usize| wire_messages(&requests[i].body)[0].content.clone();
    let heading = format!("selection (the person's latest message is about this part of the source; UTF-16 offsets {from}–{to} when it was sent):\n处处闻啼鸟\n");
    assert!(!system(0).contains("selection ("));
    assert!(system(1).contains(&heading), "{}", system(1));
    assert!(!system(2).contains("selection ("), "a later message without a selection drops it");
    let sent = wire_messages(&requests[1].body);
    assert_eq!(&*sent.last().unwrap().content, "把这句改得更短");
    h.assert_replay_matches_live();
}

#[test]
fn context_too_long_ends_the_turn_with_a_hint_to_start_a_new_session() {
    let h = setup(vec![], json!({}));
    let profile = |window: u64, loading: &str| {
        h.t.ok(
            "llmProfile.update",
            json!({"profile": "fake", "changes": {"name": "fake", "baseUrl": h.server.base_url(), "model": "fake-model", "contextWindow": window, "toolLoading": loading}}),
        );
    };
    // A 1k model: even the compact tool set with the smallest system message and the
    // least a reply may be left does not fit. The meter says so before anything is
    // sent, and the first message ends saying so, without a compaction.
    profile(1024, "all");
    let context = h.t.ok("session.context", json!({"sessionId": h.session}));
    let (fixed, reserve, tools) = (context["fixedTokens"].as_u64().unwrap(), context["replyReserveTokens"].as_u64().unwrap(), context["toolTokens"].as_u64().unwrap());
    assert_eq!(reserve, 256, "the least a reply may be left, when nothing more is: {context}");
    assert!(tools < 1_000, "the compact tool set: {context}");
    assert!(fixed + reserve > 1024);
    assert_eq!(context["fixedFits"], false, "{context}");
    assert_eq!(context["estimatedTokens"], fixed, "a new session's meter shows what the first message carries: {context}");
    let (result, _) = h.send("改一下开头");
    assert_eq!(result["reason"], "fixed_context_too_long", "{result}");
    let (message, hints) = h.last_turn_end();
    assert!(message.contains("cannot hold the fixed part of a request"), "{message}");
    let ids: Vec<&str> = hints.iter().map(|h| h.id.as_str()).collect();
    assert_eq!(ids, ["context_overhead", "larger_context"], "the compact set is already sent: no hint to load tools on demand");
    assert_eq!(hints[0].params.get("reserve").map(String::as_str), Some("256"));
    h.server.assert_calls(0);
    assert!(!h.log().iter().any(|e| matches!(e.body, EventBody::CompactionStarted { .. })), "no summary calls for what no compaction can shrink");

    // A window the fixed part fits: a first message too long for it is then the
    // request that does not fit, and nothing is compacted (there is nothing older to
    // compact).
    let window = fixed + reserve + 200;
    profile(window, "onDemand");
    let context = h.t.ok("session.context", json!({"sessionId": h.session}));
    assert_eq!(context["fixedFits"], true, "{context}");
    let (result, _) = h.send(&"很长的消息".repeat(100));
    assert_eq!(result["reason"], "context_too_long");
    let (message, hints) = h.last_turn_end();
    assert!(message.starts_with("This"), "{message}");
    assert!(message.contains("of them tool definitions"), "{message}");
    let ids: Vec<&str> = hints.iter().map(|h| h.id.as_str()).collect();
    assert_eq!(ids, ["shorter_message", "new_session", "compact", "larger_context"], "on demand, the hint to load tools on demand is not given again");
    h.server.assert_calls(0);
}

#[test]
fn secrets_never_enter_a_context_snapshot_or_the_log() {
    let h = setup(vec![Reply::tool_calls(&[("c1", "read_brand_profile", "{}"), ("c2", "read_project_context", "{}")]), Reply::text("ok")], json!({}));
    let key = "sk-supersecret-0123456789abcdef";
    h.t.ok("llmProfile.setKey", json!({"profile": "fake", "apiKey": key}));
    let brand = h.t.ok("brandProfile.create", json!({"name": "B", "voice": "warm"}))["id"].clone();
    h.t.ok("project.update", json!({"projectId": h.project, "brandProfileId": brand}));
    h.send("go");
    for request in h.server.chat_requests() {
        assert!(!request.body.to_string().contains(key), "no key in a request body");
    }
    for event in h.log() {
        assert!(!serde_json::to_string(&event).unwrap().contains(key));
        if let Some(id) = &event.context_snapshot_id {
            let snapshot = h.engine().context_snapshot(id).unwrap().unwrap();
            assert!(!serde_json::to_string(&snapshot).unwrap().contains(key));
            assert!(!snapshot.system.contains("…cdef") && !snapshot.system.contains("fake-model"), "not even the fingerprint or the profile");
        }
    }
}
