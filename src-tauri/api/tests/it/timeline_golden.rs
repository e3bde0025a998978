//! The drafting panel's Vitest sessions are written as event logs and served by a test
//! copy of the fold (`ui/src/features/drafting/testLog.ts`). This test ties that copy to
//! the core: it folds a set of representative logs with the real fold
//! (`harness::timeline::fold_all`, what `SessionState::apply` keeps), pages them as
//! `session.timeline` does (`api::timeline_page`) and streams them through the real
//! `LiveFeed`, and holds `ui/src/features/drafting/__golden__/timeline.json` to the
//! answers. The UI's `testLog.golden.test.ts` holds `testLog.ts` to the same file, so a
//! change to either fold fails one side. `INKSTONE_UPDATE_FIXTURES=1` rewrites the file
//! from the core (then run the Vitest test, and look at the diff).

use std::path::PathBuf;

use inkstone_api::api::{timeline_page, SessionTimelineParams};
use inkstone_api::harness::timeline::{fold, LiveFeed, Timeline};
use inkstone_api::harness::{Event, EventBody};
use serde_json::{json, Value};

fn golden_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../ui/src/features/drafting/__golden__/timeline.json")
}

/// A log as the harness writes it: logged events numbered 1, 2, 3, …; live ones
/// (streamed deltas) carry sequence 0 and sit where the stream sent them.
#[derive(Default)]
struct Log {
    events: Vec<Event>,
    sequence: u64,
}

impl Log {
    fn event(&mut self, sequence: u64, kind: &str, payload: Value, extra: Value) -> &mut Self {
        let mut envelope = json!({"eventId": format!("evt_{}", self.events.len() + 1), "sequence": sequence, "sessionId": "ses_golden", "turnId": "turn_1", "createdAt": "2026-11-27T12:00:00Z", "modelVisible": false, "kind": kind, "payload": payload});
        for (field, value) in extra.as_object().unwrap() {
            envelope[field] = value.clone();
        }
        self.events.push(serde_json::from_value(envelope).unwrap());
        self
    }
    /// A logged event with envelope fields `extra` (`toolUseId`, `proposalId`).
    fn logged(&mut self, kind: &str, payload: Value, extra: Value) -> &mut Self {
        self.sequence += 1;
        self.event(self.sequence, kind, payload, extra)
    }
    fn ev(&mut self, kind: &str, payload: Value) -> &mut Self {
        self.logged(kind, payload, json!({}))
    }
    fn tool(&mut self, kind: &str, payload: Value, tool_use_id: &str) -> &mut Self {
        self.logged(kind, payload, json!({"toolUseId": tool_use_id}))
    }
    fn live(&mut self, kind: &str, text: &str) -> &mut Self {
        self.event(0, kind, json!({"text": text}), json!({}))
    }

    fn created(&mut self) -> &mut Self {
        self.ev("session_created", json!({"projectId": "prj_1", "profile": "llm_1", "mode": "default"}))
    }
    fn user(&mut self, text: &str) -> &mut Self {
        self.ev("user_message", json!({"text": text, "wasQueued": false}))
    }
    fn turn(&mut self) -> &mut Self {
        self.ev("turn_started", json!({}))
    }
    fn call_started(&mut self) -> &mut Self {
        self.ev("model_call_started", json!({"modelTurn": 1, "messagesHash": "sha256:x", "messageCount": 2}))
    }
    fn answer(&mut self, text: &str, calls: Value, finish: &str, interrupted: bool) -> &mut Self {
        self.ev("assistant_message", json!({"text": text, "toolCalls": calls, "finishReason": finish, "interrupted": interrupted, "inputTokens": 100, "outputTokens": 20}))
    }
    fn said(&mut self, text: &str) -> &mut Self {
        self.answer(text, json!([]), "stop", false)
    }
    fn ended(&mut self, reason: &str, hints: Value) -> &mut Self {
        self.ev("turn_ended", json!({"reason": reason, "message": format!("turn {reason}"), "hints": hints}))
    }
    fn result(&mut self, tool_use_id: &str, tool: &str, status: &str, content: &str) -> &mut Self {
        self.tool("tool_result", json!({"tool": tool, "status": status, "content": content, "reusedExecution": false}), tool_use_id)
    }
}

fn call(id: &str, name: &str, args: Value) -> Value {
    json!({"id": id, "name": name, "arguments": args.to_string()})
}

/// A turn that asks to apply a proposal and waits for the person.
fn approval_asked(log: &mut Log) -> &mut Log {
    log.created()
        .user("改短第一段")
        .turn()
        .call_started()
        .answer("我提一个修改。", json!([call("c1", "apply_proposal", json!({"proposalId": "prp_1"}))]), "tool_calls", false)
        .tool("tool_decision", json!({"tool": "apply_proposal", "decision": "ask", "reason": "writes need approval"}), "c1")
        .tool(
            "approval_requested",
            json!({"requestId": "req_1", "tool": "apply_proposal", "input": {"proposalId": "prp_1"}, "inputHash": "sha256:x", "idempotencyKey": "k1", "targetVersion": 3, "reason": "writes need approval", "reasonId": "write"}),
            "c1",
        )
        .ended("blocked_on_approval", json!([]))
}

/// The representative logs, each with what it shows.
fn cases() -> Vec<(&'static str, &'static str, Log)> {
    let mut out = Vec::new();
    let mut add = |name, about, build: &dyn Fn(&mut Log)| {
        let mut log = Log::default();
        build(&mut log);
        out.push((name, about, log));
    };
    add("a message and its answer", "A task, its context estimate, one answer; an older message's tagged selection is split back out.", &|log| {
        log.created()
            .user("写一句开头")
            .turn()
            .ev("context_assembled", json!({"snapshotId": "ctx_1", "estimatedTokens": 1200, "layers": [{"layer": "pinned", "tokens": 800, "trimmed": false}]}))
            .call_started()
            .said("山上的春茶。")
            .ended("completed", json!([]))
            .ev("user_message", json!({"text": "把开头改短\n\n<selection from=\"3\" to=\"9\">\n第一段。\n</selection>", "wasQueued": false}))
            .turn()
            .said("好。")
            .ended("completed", json!([]));
    });
    add("a streamed answer", "Deltas (sequence 0) stream into the model call's one item; a logged checkpoint and the answer replace it.", &|log| {
        log.created().user("写两句").turn().call_started().live("assistant_delta", "山上").live("reasoning_delta", "想想").live("assistant_delta", "的");
        log.ev("assistant_streamed", json!({"text": "山上的"})).live("assistant_delta", "春茶").said("山上的春茶").ended("completed", json!([]));
    });
    add(
        "an answer still streaming",
        "The log ends mid-answer: the core draws the text that reached the log as a streaming item; a reader of the stream appends the deltas.",
        &|log| {
            log.created().user("写").turn().call_started().live("assistant_delta", "写到");
            log.ev("assistant_streamed", json!({"text": "写到"})).live("assistant_delta", "一半");
        },
    );
    add("an answer of tool calls only", "An answer with no text makes no item, only its steps; whitespace counts as no text.", &|log| {
        log.created()
            .user("读一下")
            .turn()
            .call_started()
            .answer("", json!([call("c1", "read_versions", json!({}))]), "tool_calls", false)
            .tool("tool_decision", json!({"tool": "read_versions", "decision": "allow", "reason": ""}), "c1")
            .result("c1", "read_versions", "success", "{}")
            .call_started()
            .live("assistant_delta", " ")
            .answer(" ", json!([call("c2", "read_versions", json!({}))]), "tool_calls", false)
            .result("c2", "read_versions", "success", "{}")
            .call_started()
            .said("读完了。")
            .ended("completed", json!([]));
    });
    add(
        "an answer of tool calls only after a checkpoint",
        "Whitespace reached the log before the answer turned out to be only tool calls: the item stays, empty (items are never removed).",
        &|log| {
            log.created().user("读").turn().call_started().live("assistant_delta", " ");
            log.ev("assistant_streamed", json!({"text": " "})).answer("", json!([call("c1", "read_versions", json!({}))]), "tool_calls", false).result(
                "c1",
                "read_versions",
                "success",
                "{}",
            );
        },
    );
    add("an approval pending", "The step waits and the prompt is in the state; the blocked turn keeps its waiting step.", &|log| {
        approval_asked(log);
    });
    add("an approval allowed", "The person approves: a decision line, the step runs and then is done with the proposal it applied.", &|log| {
        approval_asked(log)
            .tool("approval_resolved", json!({"requestId": "req_1", "approved": true, "decidedBy": "me", "note": ""}), "c1")
            .turn()
            .logged(
                "tool_result",
                json!({"tool": "apply_proposal", "status": "success", "content": "{\"version\": 4}", "reusedExecution": false}),
                json!({"toolUseId": "c1", "proposalId": "prp_1"}),
            )
            .said("改好了。")
            .ended("completed", json!([]));
    });
    add("an approval denied", "The person says no with a note: the step is denied, the turn ends, nothing is applied.", &|log| {
        approval_asked(log)
            .tool("approval_resolved", json!({"requestId": "req_1", "approved": false, "decidedBy": "me", "note": "先别改"}), "c1")
            .result("c1", "apply_proposal", "denied", "denied: 先别改")
            .turn()
            .said("好的，不改。")
            .ended("completed", json!([]));
    });
    add("a step a rule blocked and one that failed", "Plan mode blocks a write; a timeout fails; a turn that ends settles steps still queued.", &|log| {
        log.created()
            .ev("mode_changed", json!({"mode": "plan", "by": "user"}))
            .user("改")
            .turn()
            .answer("", json!([call("c1", "apply_proposal", json!({})), call("c2", "read_versions", json!({})), call("c3", "read_versions", json!({}))]), "tool_calls", false)
            .tool("tool_decision", json!({"tool": "apply_proposal", "decision": "deny", "reason": "plan mode"}), "c1")
            .result("c1", "apply_proposal", "blocked", "plan mode")
            .result("c2", "read_versions", "timeout", "took too long")
            .ended("max_model_turns", json!([]));
    });
    add("a question", "The model asks; the question waits in the state, then the answer is a line and the step is done.", &|log| {
        log.created()
            .user("写个标题")
            .turn()
            .answer("", json!([call("q1", "ask_user", json!({"question": "正式还是轻松？"}))]), "tool_calls", false)
            .tool("question_asked", json!({"questionId": "qst_1", "question": "正式还是轻松？", "options": ["正式", "轻松"]}), "q1")
            .ended("blocked_on_question", json!([]));
    });
    add("a question answered", "The answer is a line; the step gets its result.", &|log| {
        log.created()
            .user("写个标题")
            .turn()
            .answer("", json!([call("q1", "ask_user", json!({"question": "正式还是轻松？"}))]), "tool_calls", false)
            .tool("question_asked", json!({"questionId": "qst_1", "question": "正式还是轻松？", "options": ["正式", "轻松"]}), "q1")
            .ended("blocked_on_question", json!([]))
            .ev("question_answered", json!({"questionId": "qst_1", "answer": "轻松"}))
            .result("q1", "ask_user", "success", "轻松")
            .turn()
            .said("《山上的春茶》")
            .ended("completed", json!([]));
    });
    add("proposals", "Proposal ids from the envelope and from results (proposalId, proposal.id, proposals[], proposalIds), each once.", &|log| {
        log.created()
            .user("提两个修改")
            .turn()
            .answer("", json!([call("c1", "propose_edit", json!({})), call("c2", "propose_edit", json!({}))]), "tool_calls", false)
            .result("c1", "propose_edit", "success", "{\"proposalId\": \"prp_1\", \"proposal\": {\"id\": \"prp_2\"}}")
            .result("c2", "propose_edit", "success", "{\"proposals\": [{\"id\": \"prp_3\"}, \"prp_1\"], \"proposalIds\": [\"prp_4\", \"ver_1\"]}")
            .said("提好了。")
            .ended("completed", json!([]));
    });
    add(
        "compaction",
        "A warning line; a failed and a stopped summary; a summarised boundary starts the count again; a truncation sets `truncated`; pins and intent mark the long-session views.",
        &|log| {
            log.created()
                .user("继续")
                .turn()
                .ev("context_warning", json!({"estimatedTokens": 23000, "contextWindow": 32768, "percent": 72, "compactAtPercent": 80}))
                .ev("compaction_started", json!({"trigger": "auto", "estimatedTokens": 26000, "contextWindow": 32768}))
                .ev("compaction_failed", json!({"trigger": "auto", "consecutive": 1, "message": "The model's summary broke the schema."}))
                .ev("compaction_started", json!({"trigger": "manual", "estimatedTokens": 26000, "contextWindow": 32768}))
                .ev("compaction_failed", json!({"trigger": "manual", "consecutive": 1, "message": "Stopped by the user; nothing was replaced."}))
                .ev("compaction_started", json!({"trigger": "manual", "estimatedTokens": 26000, "contextWindow": 32768}))
                .ev(
                    "compact_boundary",
                    json!({"trigger": "manual", "mode": "summarized", "summary": {"summary": "我们把三个步骤改短了。", "user_intent": "一篇公众号文章", "accepted_changes": [{"proposal_id": "prp_1", "version": 2}], "rejected_directions": [], "open_tasks": ["改标题"], "active_artifacts": [], "source_refs": [], "next_step_hint": "给标题三个候选"}, "summaryText": "# Earlier conversation\n我们把三个步骤改短了。\n", "keptMessages": 2, "compactedMessages": 12, "pinnedInstructions": [], "tokensBefore": 26000, "tokensAfter": 3000, "note": "Earlier conversation summarised", "inputTokens": 2000, "outputTokens": 200}),
                )
                .said("继续写。")
                .ended("completed", json!([]))
                .ev("pin_added", json!({"pinId": "pin_1", "text": "用短句", "source": "person"}))
                .ev("pin_removed", json!({"pinId": "pin_1"}))
                .ev("compaction_setting_changed", json!({"threshold": {"mode": "auto", "percent": 70}}))
                .ev("compact_boundary", json!({"trigger": "auto", "mode": "truncated", "summaryText": "- 继续", "keptMessages": 2, "compactedMessages": 6, "pinnedInstructions": ["用短句"], "tokensBefore": 3000, "tokensAfter": 900, "note": "removed without a summary"}))
                .ev("context_warning", json!({"estimatedTokens": 23000, "contextWindow": 32768, "percent": 75}))
                .ev("compaction_started", json!({"trigger": "auto", "estimatedTokens": 26000, "contextWindow": 32768}));
        },
    );
    add(
        "interrupted turns",
        "The person stops an answer (its line says so, no end line); a lost connection cuts one off (end line with Retry); the same task again is that retry; a missing key is named.",
        &|log| {
            log.created()
                .user("写")
                .turn()
                .call_started()
                .answer("写到一半", json!([]), "interrupted", true)
                .ended("interrupted", json!([]))
                .ev("user_message", json!({"text": "再试", "wasQueued": false, "selection": {"from": 1, "to": 2, "text": "一"}}))
                .turn()
                .call_started()
                .answer("断了", json!([]), "error", true)
                .ended("model_error", json!([{"id": "connection_lost", "message": "The text that arrived is kept."}]))
                .ev("user_message", json!({"text": "再试", "wasQueued": false, "selection": {"from": 1, "to": 2, "text": "一"}}))
                .turn()
                .ended("model_error", json!([{"id": "set_api_key", "message": "Set the key."}]))
                .user("写")
                .turn()
                .ended("pins_too_long", json!([{"id": "unpin", "message": "Unpin something."}]));
        },
    );
    add("an answer the process lost", "The log ends mid-stream and the next start closes the turn: what streamed stays, as stopped.", &|log| {
        log.created().user("写").turn().call_started().ev("assistant_streamed", json!({"text": "写到"})).ended("restarted", json!([]));
    });
    add("queued messages", "Messages sent while a turn runs wait in `queued` until delivered (marked as queued).", &|log| {
        log.created()
            .user("写")
            .turn()
            .ev("message_queued", json!({"text": "再短一点"}))
            .ev("message_queued", json!({"text": "加个标题"}))
            .said("写好了。")
            .ended("completed", json!([]))
            .ev("user_message", json!({"text": "再短一点", "wasQueued": true}))
            .turn();
    });
    add("mode, archive, rewind and intent", "Lines for a mode change, archiving and bringing back, a rewind; the intent marks the long-session views.", &|log| {
        log.created()
            .ev("mode_changed", json!({"mode": "plan", "by": "user"}))
            .ev("intent_updated", json!({"intent": {"topic": "春茶"}, "by": "person"}))
            .ev("rewound", json!({"checkpointId": "chk_1", "toSequence": 1, "version": 4}))
            .ev("session_archived", json!({}))
            .ev("session_unarchived", json!({}))
            .ev("mode_changed", json!({"mode": "default", "by": "user"}));
    });
    add("a long session", "Twelve exchanges, to page: the latest `limit` items, `before` a key, `since` a sequence, and refusals.", &|log| {
        log.created();
        for n in 1..=12 {
            log.user(&format!("第{n}句")).turn().said(&format!("好的，第{n}句。")).ended("completed", json!([]));
        }
    });
    out
}

/// The `session.timeline` requests each case is paged with: the whole, and a catch-up
/// from the middle; the long session adds pages and refusals.
fn requests(name: &str, timeline: &Timeline) -> Vec<Value> {
    let mut out = vec![json!({}), json!({"since": timeline.state.last_sequence / 2})];
    if name == "a long session" {
        let key = |at: usize| timeline.items[at].key().to_owned();
        out.extend([
            json!({"limit": 5}),
            json!({"limit": 5, "before": key(15)}),
            json!({"before": key(2)}),
            json!({"before": key(0)}),
            json!({"since": 30, "limit": 3}),
            json!({"since": 16, "before": key(20), "limit": 4}),
            json!({"since": 200}),
            json!({"before": "999"}),
            json!({"limit": 0}),
            json!({"limit": 1001}),
        ]);
    }
    out
}

/// Everything the core answers for one case.
fn answered(name: &str, about: &str, log: &Log) -> Value {
    let mut timeline = Timeline::default();
    let mut feed = LiveFeed::default();
    let mut patches = Vec::new();
    // As the harness streams: each logged event is folded as it is logged, then patched.
    for event in &log.events {
        fold(&mut timeline, event);
        patches.push(serde_json::to_value(feed.patch(&timeline, event)).unwrap());
    }
    let pages: Vec<Value> = requests(name, &timeline)
        .into_iter()
        .map(|request| {
            let mut params = request.clone();
            params["sessionId"] = json!("ses_golden");
            let params: SessionTimelineParams = serde_json::from_value(params).unwrap();
            match timeline_page(&timeline, &params) {
                Ok(page) => json!({"request": request, "result": page}),
                Err(error) => json!({"request": request, "error": {"code": error.code, "message": error.message}}),
            }
        })
        .collect();
    json!({"name": name, "about": about, "events": log.events, "pages": pages, "patches": patches})
}

fn golden() -> Value {
    json!({
        "about": "Event logs with what the core's timeline fold answers for them: each page of `session.timeline` (`request` without the session id) and the patch the live stream sends for each event (null: none). Written by src-tauri/api/tests/it/timeline_golden.rs (INKSTONE_UPDATE_FIXTURES=1 rewrites it from the core, which then fails on drift); ui/src/features/drafting/testLog.golden.test.ts holds the UI tests' fold (testLog.ts) to it.",
        "cases": cases().iter().map(|(name, about, log)| answered(name, about, log)).collect::<Vec<_>>(),
    })
}

/// The file's text: a line per event, page and patch (a diff shows what changed where,
/// and the file stays a fraction of its pretty-printed size).
fn layout(doc: &Value) -> String {
    let line = |value: &Value| serde_json::to_string(value).unwrap();
    let mut out = format!("{{\n  \"about\": {},\n  \"cases\": [\n", line(&doc["about"]));
    let cases = doc["cases"].as_array().unwrap();
    for (at, case) in cases.iter().enumerate() {
        out += &format!("    {{\n      \"name\": {},\n      \"about\": {},\n", line(&case["name"]), line(&case["about"]));
        for (n, field) in ["events", "pages", "patches"].into_iter().enumerate() {
            let rows: Vec<String> = case[field].as_array().unwrap().iter().map(|row| format!("        {}", line(row))).collect();
            out += &format!("      \"{field}\": [\n{}\n      ]{}\n", rows.join(",\n"), if n < 2 { "," } else { "" });
        }
        out += if at + 1 < cases.len() { "    },\n" } else { "    }\n" };
    }
    out + "  ]\n}\n"
}

#[test]
fn the_ui_tests_timeline_fold_answers_are_the_cores() {
    let path = golden_path();
    let now = golden();
    let text = layout(&now);
    if std::env::var_os("INKSTONE_UPDATE_FIXTURES").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        return;
    }
    let stored: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("the golden file; write it with INKSTONE_UPDATE_FIXTURES=1")).unwrap();
    let (stored_cases, now_cases) = (stored["cases"].as_array().unwrap(), now["cases"].as_array().unwrap());
    for (stored_case, now_case) in stored_cases.iter().zip(now_cases) {
        let name = now_case["name"].as_str().unwrap();
        assert_eq!(stored_case["events"], now_case["events"], "{name}: the golden file's events are not this test's");
        for field in ["pages", "patches"] {
            let (stored_rows, now_rows) = (stored_case[field].as_array().unwrap(), now_case[field].as_array().unwrap());
            for (at, (stored_row, now_row)) in stored_rows.iter().zip(now_rows).enumerate() {
                // Compact JSON on both sides, so a failure reads as the file does.
                assert_eq!(
                    serde_json::to_string(stored_row).unwrap(),
                    serde_json::to_string(now_row).unwrap(),
                    "{name}: {field}[{at}] of the golden file (left) is not what the core answers (right). If the change is meant, rewrite the file with INKSTONE_UPDATE_FIXTURES=1 and make ui/src/features/drafting/testLog.ts agree (its golden test)"
                );
            }
        }
    }
    assert_eq!(stored, now, "the golden file's cases are not this test's cases");
}

/// Whether a drafting session's log holds this kind of event (an optimization run's own
/// events are not a timeline). No wildcard: a new kind fails to compile here until it is
/// decided, and if a session logs it, a golden log must have it (the test below).
fn in_a_session_log(body: &EventBody) -> bool {
    match body {
        EventBody::SessionCreated { .. }
        | EventBody::UserMessage { .. }
        | EventBody::MessageQueued { .. }
        | EventBody::TurnStarted {}
        | EventBody::ContextAssembled { .. }
        | EventBody::ModelCallStarted { .. }
        | EventBody::AssistantDelta { .. }
        | EventBody::AssistantStreamed { .. }
        | EventBody::ReasoningDelta { .. }
        | EventBody::AssistantMessage { .. }
        | EventBody::ToolDecision { .. }
        | EventBody::ToolResult { .. }
        | EventBody::ApprovalRequested { .. }
        | EventBody::ApprovalResolved { .. }
        | EventBody::QuestionAsked { .. }
        | EventBody::QuestionAnswered { .. }
        | EventBody::ModeChanged { .. }
        | EventBody::TurnEnded { .. }
        | EventBody::SessionArchived {}
        | EventBody::SessionUnarchived {}
        | EventBody::Rewound { .. }
        | EventBody::ContextWarning { .. }
        | EventBody::CompactionStarted { .. }
        | EventBody::CompactionFailed { .. }
        | EventBody::CompactBoundary { .. }
        | EventBody::PinAdded { .. }
        | EventBody::PinRemoved { .. }
        | EventBody::CompactionSettingChanged { .. }
        | EventBody::IntentUpdated { .. } => true,
        EventBody::RunStarted { .. } | EventBody::RunStage { .. } | EventBody::RunEnded { .. } => false,
    }
}

/// The kinds a session logs, as named in the log (kept beside `in_a_session_log`).
const SESSION_KINDS: [&str; 29] = [
    "session_created",
    "user_message",
    "message_queued",
    "turn_started",
    "context_assembled",
    "model_call_started",
    "assistant_delta",
    "assistant_streamed",
    "reasoning_delta",
    "assistant_message",
    "tool_decision",
    "tool_result",
    "approval_requested",
    "approval_resolved",
    "question_asked",
    "question_answered",
    "mode_changed",
    "turn_ended",
    "session_archived",
    "session_unarchived",
    "rewound",
    "context_warning",
    "compaction_started",
    "compaction_failed",
    "compact_boundary",
    "pin_added",
    "pin_removed",
    "compaction_setting_changed",
    "intent_updated",
];

/// The golden logs are worth holding the UI to: every kind of event a session logs, every
/// kind of item the panel draws and every step state appears in them.
#[test]
fn the_golden_logs_hold_every_event_kind_item_kind_and_step_state() {
    let logs = cases();
    for event in logs.iter().flat_map(|(_, _, log)| &log.events) {
        let kind = event.body.kind_name();
        assert_eq!(in_a_session_log(&event.body), SESSION_KINDS.contains(&kind), "{kind}: SESSION_KINDS and in_a_session_log disagree");
    }
    for kind in SESSION_KINDS {
        assert!(logs.iter().any(|(_, _, log)| log.events.iter().any(|e| e.body.kind_name() == kind)), "no golden log has a `{kind}` event");
    }
    let doc = golden();
    let mut kinds: Vec<String> = Vec::new();
    let mut states: Vec<String> = Vec::new();
    for case in doc["cases"].as_array().unwrap() {
        for item in case["pages"][0]["result"]["items"].as_array().unwrap() {
            kinds.push(item["kind"].as_str().unwrap().to_owned());
            if let Some(state) = item["state"].as_str() {
                states.push(state.to_owned());
            }
        }
    }
    for kind in ["user", "assistant", "tool", "decision", "answer", "mode", "end", "archived", "unarchived", "rewound", "boundary", "compactionFailed", "contextWarning"] {
        assert!(kinds.iter().any(|k| k == kind), "no golden log makes a `{kind}` item");
    }
    for state in ["waiting", "done", "failed", "cancelled", "denied", "blocked"] {
        assert!(states.iter().any(|s| s == state), "no golden log leaves a step `{state}`");
    }
}
