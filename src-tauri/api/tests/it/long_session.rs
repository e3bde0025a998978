//! Long sessions beyond compaction, against the scripted model server over real HTTP:
//! the session intent (read from each message by rules, carried across a turn that
//! only pastes a link, model-visible, editable; clarification only when needed),
//! memory (proposed by the model and confirmed by the person, or added by them; in the
//! next request once confirmed, gone once deleted; habits with their sources), budgets
//! (per session and per project, a hard stop the person can raise) and churn.

use inkstone_api::harness::{replay, EventBody, IntentSource};
use inkstone_api::ErrorCode;
use inkstone_test_support::model_server::{ModelServer, Reply, Usage};
use inkstone_test_support::TestEngine;
use serde_json::{json, Value};

use super::harness::{stream, wire_messages};

struct S {
    t: TestEngine,
    server: ModelServer,
    project: String,
    session: String,
}

fn setup(source: &str) -> S {
    let server = ModelServer::start(vec![]);
    server.set_fallback(Reply::text("好的。"));
    let t = TestEngine::new();
    t.ok("llmProfile.create", json!({"name": "fake", "baseUrl": server.base_url(), "model": "fake-model", "contextWindow": 32000}));
    let project = t.ok("project.create", json!({"title": "春茶", "source": source}))["id"].as_str().unwrap().to_owned();
    let session = t.ok("session.create", json!({"projectId": project}))["session"]["id"].as_str().unwrap().to_owned();
    S { t, server, project, session }
}

impl S {
    fn send(&self, text: &str) -> (Value, Vec<inkstone_api::api::dto::Event>) {
        let (result, events) = stream(&self.t.engine, "session.submit", json!({"sessionId": self.session, "text": text}));
        (result.unwrap_or_else(|e| panic!("submit failed: {e:?}")), events)
    }
    /// The system message of the last request the model was sent.
    fn last_system(&self) -> String {
        wire_messages(&self.server.chat_requests().last().unwrap().body)[0].content.to_string()
    }
    fn error(&self, method: &str, params: Value) -> ErrorCode {
        self.t.engine.call(method, params).unwrap_err().code
    }
}

fn call(id: &str, tool: &str, input: Value) -> Reply {
    Reply::tool_calls(&[(id, tool, &input.to_string())])
}

#[test]
fn intent_is_read_from_messages_carried_across_a_pasted_link_model_visible_and_editable() {
    let s = setup("");
    let (result, events) = s.send("帮我为山茶社品牌写一篇关于春茶上市的小红书文案，300字左右");
    assert_eq!(result["reason"], "completed");
    assert!(
        events.iter().any(|e| matches!(&e.body, inkstone_api::api::dto::EventBody::IntentUpdated { by: inkstone_api::api::dto::IntentSource::Message, .. })),
        "the panel hears of the new intent"
    );
    let system = s.last_system();
    for line in ["brand: 山茶社\n", "topic: 春茶上市\n", "output: copy\n", "platforms: xiaohongshu\n", "length: 300 characters\n"] {
        assert!(system.contains(line), "{line} in {system}");
    }
    assert!(!system.contains("Clarify first"), "nothing is missing: no clarification");

    // A turn that only pastes a link keeps the subject: no new intent, same lines sent.
    let (_, events) = s.send("https://example.com/reports/spring-tea-2026");
    assert!(!events.iter().any(|e| e.kind_name() == "intent_updated"));
    assert!(s.last_system().contains("topic: 春茶上市\n"), "the subject survives the link");
    // So does a pasted document.
    let (_, events) = s.send(&"二零二六年春茶采摘报告：山间雾气重，芽叶肥厚。".repeat(40));
    assert!(!events.iter().any(|e| e.kind_name() == "intent_updated"));
    assert!(s.last_system().contains("brand: 山茶社\n"));

    // The panel reads it and the person edits it; the next request carries the edit.
    let view = s.t.ok("session.intent", json!({"sessionId": s.session}));
    assert_eq!(view["intent"]["brand"], "山茶社");
    assert_eq!(view["intent"]["platforms"], json!(["xiaohongshu"]));
    assert!(view.get("clarification").is_none());
    let mut edited = view["intent"].clone();
    edited["topic"] = json!("夏茶预售");
    edited["platforms"] = json!(["wechat", "wechat", "zhihu"]);
    let view = s.t.ok("session.setIntent", json!({"sessionId": s.session, "intent": edited}));
    assert_eq!(view["intent"]["platforms"], json!(["wechat", "zhihu"]), "duplicates dropped");
    assert!(view["modelText"].as_str().unwrap().contains("topic: 夏茶预售"));
    let before = s.t.engine.session_events(&s.session).unwrap().len();
    assert_eq!(s.error("session.setIntent", json!({"sessionId": s.session, "intent": {"brand": "长".repeat(300)}})), ErrorCode::Validation);
    assert_eq!(s.error("session.setIntent", json!({"sessionId": s.session, "intent": {"colour": "red"}})), ErrorCode::Validation);
    assert_eq!(s.t.engine.session_events(&s.session).unwrap().len(), before, "a refused edit writes nothing");
    s.send("继续");
    let system = s.last_system();
    assert!(system.contains("topic: 夏茶预售\n") && system.contains("platforms: wechat, zhihu\n"), "{system}");
    let log = s.t.engine.session_events(&s.session).unwrap();
    assert!(log.iter().any(|e| matches!(&e.body, EventBody::IntentUpdated { by: IntentSource::Person, .. })));
    // Replay rebuilds the same intent.
    assert_eq!(serde_json::to_value(&replay(log.iter()).state.intent).unwrap(), view["intent"]);
}

#[test]
fn clarification_only_when_needed_never_for_analysis() {
    let s = setup("");
    s.send("分析一下我们上个月小红书笔记的数据，为什么互动变少了");
    let system = s.last_system();
    assert!(system.contains("output: an analysis\n"), "{system}");
    assert!(!system.contains("Clarify first"), "an analysis request is never held up by a question");
    assert!(s.t.ok("session.intent", json!({"sessionId": s.session})).get("clarification").is_none());
    // A copy request with no subject in an empty project, no platform: ask first.
    let s = setup("");
    s.send("写一篇文案");
    let system = s.last_system();
    assert!(system.contains("Clarify first: Before writing copy, ask the person what it is about"), "{system}");
    let view = s.t.ok("session.intent", json!({"sessionId": s.session}));
    assert_eq!(view["clarification"]["missing"], json!(["subject", "platform", "length"]));
    // Once the person says, the question goes.
    s.send("关于春茶上市，发公众号");
    assert!(!s.last_system().contains("Clarify first"));
}

#[test]
fn memory_the_person_confirms_is_in_the_next_request_and_gone_once_deleted() {
    let s = setup("# 春茶\n\n山间的茶。");
    s.server.push(call("m1", "propose_memory", json!({"text": "这个品牌不用标题党", "scope": "workspace"})));
    s.server.push(Reply::text("我提议记住这一点，请确认。"));
    let (result, _) = s.send("记住：我们品牌从来不用标题党");
    assert_eq!(result["reason"], "completed");
    let list = s.t.ok("memory.list", json!({"projectId": s.project}));
    let item = list["items"][0].clone();
    assert_eq!((item["status"].as_str(), item["scope"]["type"].as_str(), item["origin"]["type"].as_str()), (Some("proposed"), Some("workspace"), Some("model")));
    assert_eq!(item["origin"]["toolUseId"], "m1");
    // Proposed is not remembered: the next request does not carry it.
    s.send("你好");
    assert!(!s.last_system().contains("这个品牌不用标题党"));
    let id = item["id"].as_str().unwrap();
    let pinned_before = s.t.ok("session.pins", json!({"sessionId": s.session}))["pinnedTokens"].as_u64().unwrap();
    s.t.ok("memory.confirm", json!({"memoryId": id}));
    let pinned_after = s.t.ok("session.pins", json!({"sessionId": s.session}))["pinnedTokens"].as_u64().unwrap();
    assert!(pinned_after > pinned_before, "confirmed memory counts in the pinned budget: {pinned_before} → {pinned_after}");
    s.send("你好");
    assert!(s.last_system().contains("- [workspace] 这个品牌不用标题党\n"), "{}", s.last_system());

    // The person's own project item, edited, then deleted.
    let own = s.t.ok("memory.add", json!({"scope": "project", "projectId": s.project, "text": "This account writes in a professional tone."}));
    assert_eq!(own["status"], "confirmed");
    s.send("next");
    assert!(s.last_system().contains("- [project] This account writes in a professional tone.\n"));
    s.t.ok("memory.update", json!({"memoryId": own["id"], "text": "This account writes in a calm, professional tone."}));
    s.send("next");
    let system = s.last_system();
    assert!(system.contains("calm, professional tone") && !system.contains("writes in a professional tone"));
    s.t.ok("memory.delete", json!({"memoryId": id}));
    s.send("next");
    assert!(!s.last_system().contains("这个品牌不用标题党"), "deleted memory is gone from the next request");

    // Bad input changes nothing.
    let before = s.t.ok("memory.list", json!({"projectId": s.project}));
    assert_eq!(s.error("memory.add", json!({"scope": "workspace", "text": "  "})), ErrorCode::Validation);
    assert_eq!(s.error("memory.add", json!({"scope": "project", "text": "x"})), ErrorCode::Validation);
    assert_eq!(s.error("memory.add", json!({"scope": "project", "projectId": "prj_missing", "text": "x"})), ErrorCode::NotFound);
    assert_eq!(s.error("memory.add", json!({"scope": "workspace", "text": "长".repeat(501)})), ErrorCode::Validation);
    assert_eq!(s.error("memory.delete", json!({"memoryId": id})), ErrorCode::NotFound);
    assert_eq!(s.error("memory.update", json!({"memoryId": own["id"], "text": ""})), ErrorCode::Validation);
    assert_eq!(s.t.ok("memory.list", json!({"projectId": s.project})), before);

    // Memory travels in the export.
    let out = tempfile::tempdir().unwrap();
    let path = out.path().join("export");
    s.t.ok("export.run", json!({"path": path.display().to_string()}));
    let target = TestEngine::new();
    target.ok("import.run", json!({"path": path.display().to_string()}));
    assert_eq!(target.ok("memory.list", json!({"projectId": s.project}))["items"], before["items"]);
    assert!(std::fs::read_to_string(path.join("harness/profile-context.jsonl")).unwrap().contains("\"samples\""), "the calibration is exported too");
}

#[test]
fn habits_come_from_accepted_and_rejected_work_with_their_sources_and_can_be_removed() {
    let s = setup("春眠不觉晓\n处处闻啼鸟\n夜来风雨声\n");
    let propose = |id: &str, find: &str, replace: &str| {
        s.server.push(call(id, "propose_source_patch", json!({"summary": "改一处", "edits": [{"find": find, "replace": replace}]})));
        s.server.push(Reply::text("提好了"));
        s.send("改一改");
        s.t.ok("proposal.list", json!({"projectId": s.project}))["proposals"].as_array().unwrap().iter().find(|p| p["status"] == "proposed").unwrap()["id"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let revision = || s.t.ok("project.get", json!({"projectId": s.project}))["revision"].clone();
    let first = propose("p1", "春眠不觉晓", "春眠未觉晓");
    s.t.ok("proposal.accept", json!({"proposalId": first, "expectedBase": revision()}));
    let second = propose("p2", "处处闻啼鸟", "处处闻鸟啼");
    s.t.ok("proposal.accept", json!({"proposalId": second, "expectedBase": revision()}));
    let third = propose("p3", "夜来风雨声", "震惊！夜来风雨声");
    s.t.ok("proposal.reject", json!({"proposalId": third, "reason": "不要标题党式的开头"}));
    let habits = s.t.ok("memory.list", json!({}))["habits"].clone();
    let length = habits.as_array().unwrap().iter().find(|h| h["kind"] == "typical_length").unwrap().clone();
    assert_eq!(length["sources"].as_array().unwrap().len(), 2, "learnt from the two accepted versions: {length}");
    let rejected = habits.as_array().unwrap().iter().find(|h| h["kind"] == "rejected_style").unwrap().clone();
    assert_eq!(rejected["sources"], json!([third]));
    assert!(rejected["text"].as_str().unwrap().contains("不要标题党式的开头"));
    s.send("再来");
    assert!(s.last_system().contains("[habit] The person rejected work because: 不要标题党式的开头"), "habits are in the context");
    s.t.ok("memory.dismissHabit", json!({"habitId": rejected["id"]}));
    let habits = s.t.ok("memory.list", json!({}))["habits"].clone();
    assert!(!habits.as_array().unwrap().iter().any(|h| h["id"] == rejected["id"]), "removed");
    assert_eq!(s.error("memory.dismissHabit", json!({"habitId": rejected["id"]})), ErrorCode::NotFound);
}

#[test]
fn session_and_project_budgets_stop_hard_explain_and_can_be_raised() {
    let s = setup("春眠不觉晓");
    s.server.set_fallback(Reply::text_with("好的。", 16, Usage::Fixed { input: 500, output: 100 }));
    s.t.ok("session.setBudget", json!({"sessionId": s.session, "budget": {"tokenBudget": 1000}}));
    assert_eq!(s.send("一").0["reason"], "completed");
    assert_eq!(s.send("二").0["reason"], "completed");
    let calls = s.server.chat_requests().len();
    let (result, events) = s.send("三");
    assert_eq!(result["reason"], "budget_exceeded");
    assert_eq!(s.server.chat_requests().len(), calls, "nothing was sent");
    let end = events.iter().find_map(|e| match &e.body {
        inkstone_api::api::dto::EventBody::TurnEnded { message, hints, .. } => Some((message.clone(), hints.clone())),
        _ => None,
    });
    let (message, hints) = end.unwrap();
    assert!(message.contains("budget of 1000 tokens is spent (1200 used)"), "{message}");
    assert!(hints.iter().any(|h| h.id == "raise_budget"));
    let view = s.t.ok("session.budget", json!({"sessionId": s.session}));
    assert_eq!((view["exceeded"].as_bool(), view["spent"]["tokens"].as_u64()), (Some(true), Some(1200)));
    assert_eq!(s.error("session.setBudget", json!({"sessionId": s.session, "budget": {"tokenBudget": 0}})), ErrorCode::Validation);
    let view = s.t.ok("session.setBudget", json!({"sessionId": s.session, "budget": {"tokenBudget": 5000}}));
    assert_eq!(view["exceeded"], false);
    assert_eq!(s.send("三").0["reason"], "completed", "raised: it goes on");

    // The project's budget counts every session of the project.
    let other = s.t.ok("session.create", json!({"projectId": s.project}))["session"]["id"].as_str().unwrap().to_owned();
    let view = s.t.ok("project.setBudget", json!({"projectId": s.project, "budget": {"tokenBudget": 2000}}));
    assert_eq!((view["exceeded"].as_bool(), view["spent"]["tokens"].as_u64()), (Some(false), Some(1800)));
    let (result, _) = stream(&s.t.engine, "session.submit", json!({"sessionId": other, "text": "四"}));
    assert_eq!(result.unwrap()["reason"], "completed");
    let calls = s.server.chat_requests().len();
    let (result, events) = stream(&s.t.engine, "session.submit", json!({"sessionId": other, "text": "五"}));
    assert_eq!(result.unwrap()["reason"], "budget_exceeded");
    assert_eq!(s.server.chat_requests().len(), calls);
    assert!(events.iter().any(|e| matches!(&e.body, inkstone_api::api::dto::EventBody::TurnEnded { hints, .. } if hints.iter().any(|h| h.id == "raise_project_budget"))));
    assert_eq!(s.t.ok("project.budget", json!({"projectId": s.project}))["exceeded"], true);
    assert_eq!(s.error("project.setBudget", json!({"projectId": s.project, "budget": {"costBudget": -1.0}})), ErrorCode::Validation);
    s.t.ok("project.setBudget", json!({"projectId": s.project, "budget": {}}));
    let (result, _) = stream(&s.t.engine, "session.submit", json!({"sessionId": other, "text": "五"}));
    assert_eq!(result.unwrap()["reason"], "completed");
}

#[test]
fn three_close_rewrites_of_one_passage_in_a_turn_stop_and_ask() {
    let s = setup("春眠不觉晓\n处处闻啼鸟\n夜来风雨声\n");
    for (id, replace) in [("c1", "春眠未觉晓"), ("c2", "春眠尚未觉晓"), ("c3", "春眠还未觉晓")] {
        s.server.push(call(id, "propose_source_patch", json!({"summary": "改首句", "edits": [{"find": "春眠不觉晓", "replace": replace}]})));
    }
    s.server.push(Reply::text("never sent"));
    let (result, events) = s.send("把首句改好");
    assert_eq!(result["reason"], "churn_detected", "{result}");
    assert_eq!(s.server.chat_requests().len(), 3, "stopped after the third proposal");
    assert_eq!(s.server.remaining_script(), 1);
    let message = events.iter().find_map(|e| match &e.body {
        inkstone_api::api::dto::EventBody::TurnEnded { message, .. } => Some(message.clone()),
        _ => None,
    });
    assert!(message.unwrap().contains("3 versions of the same passage (line 1)"));
    s.server.assert_tool_results_paired();

    // Three proposals on different lines are work, not churn.
    let s = setup("春眠不觉晓\n处处闻啼鸟\n夜来风雨声\n");
    for (id, find, replace) in [("d1", "春眠不觉晓", "春眠未觉晓"), ("d2", "处处闻啼鸟", "处处闻鸟啼"), ("d3", "夜来风雨声", "夜来风和雨")] {
        s.server.push(call(id, "propose_source_patch", json!({"summary": "改一句", "edits": [{"find": find, "replace": replace}]})));
    }
    s.server.push(Reply::text("都提好了"));
    assert_eq!(s.send("逐句润色").0["reason"], "completed");
}
