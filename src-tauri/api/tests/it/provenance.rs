//! Provenance per hunk ("Why this change?"), against the scripted model server over
//! real HTTP: the model reads a search hit while a memory item is in its context, the
//! session is compacted three times, and the proposal it then makes still names both,
//! for its hunk and in the version accepting it made; a hunk carried from an earlier
//! proposal keeps that proposal's sources; records written before provenance load.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use inkstone_api::harness::compaction::COMPACTION_PROMPT_HEAD;
use inkstone_api::harness::{replay, EventBody};
use inkstone_api::proposals::Proposal;
use inkstone_api::ErrorCode;
use inkstone_test_support::model_server::{ModelServer, Reply, Responder};
use inkstone_test_support::TestEngine;
use serde_json::{json, Value};

use super::harness::stream;

/// A server whose summarising requests get a valid summary (which names no source:
/// the engine keeps the references, not the model) and whose drafting requests get
/// the queued replies in order (then a short answer).
struct Scripted {
    server: ModelServer,
    replies: Arc<Mutex<VecDeque<Reply>>>,
}

fn scripted() -> Scripted {
    let server = ModelServer::start(vec![]);
    let replies: Arc<Mutex<VecDeque<Reply>>> = Arc::default();
    let queue = Arc::clone(&replies);
    server.set_fallback(Reply::Computed(Responder(Arc::new(move |body: &Value| {
        let system = body["messages"][0]["content"].as_str().unwrap_or("");
        if system.starts_with(COMPACTION_PROMPT_HEAD) {
            let summary = json!({"summary": "They talked about the tea article.", "user_intent": "a tea article", "accepted_changes": [], "rejected_directions": [],
                "open_tasks": [], "active_artifacts": [], "source_refs": [], "next_step_hint": "go on"});
            return Reply::text(&summary.to_string());
        }
        queue.lock().unwrap().pop_front().unwrap_or_else(|| Reply::text("好的。"))
    }))));
    Scripted { server, replies }
}

fn call(id: &str, name: &str, args: Value) -> (String, String, String) {
    (id.to_owned(), name.to_owned(), args.to_string())
}

fn tool_calls(calls: &[(String, String, String)]) -> Reply {
    let borrowed: Vec<(&str, &str, &str)> = calls.iter().map(|(a, b, c)| (a.as_str(), b.as_str(), c.as_str())).collect();
    Reply::tool_calls(&borrowed)
}

struct P {
    t: TestEngine,
    model: Scripted,
    project: String,
    session: String,
    tea_garden: String,
}

const SOURCE: &str = "# 春茶\n\n第一段：山里的茶。\n\n第二段：采茶的人。\n";

fn setup() -> P {
    let model = scripted();
    let t = TestEngine::new();
    t.ok("llmProfile.create", json!({"name": "fake", "baseUrl": model.server.base_url(), "model": "fake-model", "contextWindow": 32_000}));
    let project = t.ok("project.create", json!({"title": "春茶", "source": SOURCE}))["id"].as_str().unwrap().to_owned();
    let tea_garden = t.ok("project.create", json!({"title": "茶园笔记", "source": "# 茶园\n\n明前龙井要在清明前采摘，芽叶细嫩。\n"}))["id"].as_str().unwrap().to_owned();
    assert!(t.engine.search_index().wait_idle(std::time::Duration::from_secs(20)));
    let session = t.ok("session.create", json!({"projectId": project}))["session"]["id"].as_str().unwrap().to_owned();
    P { t, model, project, session, tea_garden }
}

impl P {
    fn send(&self, text: &str) -> Value {
        let (result, _) = stream(&self.t.engine, "session.submit", json!({"sessionId": self.session, "text": text}));
        let result = result.unwrap_or_else(|e| panic!("submit failed: {e:?}"));
        assert_eq!(result["reason"], "completed", "{result}");
        result
    }
    fn push(&self, replies: Vec<Reply>) {
        self.model.replies.lock().unwrap().extend(replies);
    }
    fn compact(&self) {
        let (result, _) = stream(&self.t.engine, "session.compact", json!({"sessionId": self.session}));
        assert_eq!(result.unwrap()["compacted"], true);
    }
    fn proposal(&self, id: &str) -> Proposal {
        serde_json::from_value(self.t.ok("proposal.get", json!({"proposalId": id}))).unwrap()
    }
    fn open_proposal(&self) -> String {
        let list = self.t.ok("proposal.list", json!({"projectId": self.project, "status": "proposed"}));
        list["proposals"][0]["id"].as_str().unwrap().to_owned()
    }
}

fn err(t: &TestEngine, method: &str, params: Value) -> inkstone_api::ApiError {
    t.engine.call(method, params).expect_err("the call fails")
}

fn kinds(sources: &Value) -> Vec<String> {
    sources.as_array().unwrap().iter().map(|s| s["source"]["type"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn a_hunk_names_the_search_hit_and_memory_it_came_from_after_three_compactions_and_its_version_keeps_them() {
    let p = setup();
    let memory = p.t.ok("memory.add", json!({"scope": "project", "projectId": p.project, "text": "这个账号提到茶叶时总写明采摘时节。"}));
    let memory_id = memory["id"].as_str().unwrap().to_owned();

    // The model searches the workspace and reads the tea garden's notes.
    p.push(vec![tool_calls(&[call("s1", "search_workspace", json!({"query": "明前龙井"}))]), Reply::text("找到了茶园笔记。")]);
    p.send("找找我写过的明前龙井");
    let hits = p.t.engine.session_events(&p.session).unwrap();
    let read = hits.iter().find(|e| e.tool_use_id.as_deref() == Some("s1") && matches!(e.body, EventBody::ToolResult { .. })).unwrap();
    assert!(matches!(&read.body, EventBody::ToolResult { content, .. } if content.contains(&p.tea_garden)), "the search found the notes: {read:?}");

    // Three compactions between reading and proposing: each replaces the earlier
    // conversation (the search result among it) by a summary that names no source.
    let filler = "关于春茶的闲谈，与来源无关。".repeat(120);
    for round in 0..3 {
        p.send(&format!("第{round}轮：{filler}"));
        p.compact();
    }
    let events = p.t.engine.session_events(&p.session).unwrap();
    let boundaries = events.iter().filter(|e| matches!(e.body, EventBody::CompactBoundary { .. })).count();
    assert_eq!(boundaries, 3);
    for boundary in events.iter().filter_map(|e| match &e.body {
        EventBody::CompactBoundary { sources, .. } => Some(sources),
        _ => None,
    }) {
        let kept = boundary.as_ref().expect("every boundary keeps the references");
        assert!(kept.iter().any(|s| matches!(s, inkstone_api::model::ProvenanceSource::SearchHit { tool_use_id, .. } if tool_use_id == "s1")), "{kept:?}");
    }
    let state = replay(events.iter()).state;
    assert!(!state.messages.iter().any(|m| m.content.contains(&p.tea_garden)), "the search result itself is no longer in the conversation the model is sent");

    // The proposal, with one anchored edit: one hunk.
    p.push(vec![
        tool_calls(&[call(
            "e1",
            "propose_source_patch",
            json!({"summary": "写明采摘时节", "edits": [{"find": "第一段：山里的茶。", "replace": "第一段：山里的明前茶，清明前采摘。"}]}),
        )]),
        Reply::text("提议好了。"),
    ]);
    p.send("按茶园笔记改第一段");
    let proposal_id = p.open_proposal();
    let proposal = p.proposal(&proposal_id);
    assert_eq!(proposal.hunks.len(), 1);
    let hunk = proposal.hunks[0].id.clone();

    let why = p.t.ok("proposal.why", json!({"proposalId": proposal_id, "hunkId": hunk}));
    assert_eq!(why["hunkId"], json!(hunk));
    let sources = why["sources"].as_array().unwrap();
    let hit = sources.iter().find(|s| s["source"]["type"] == "searchHit").unwrap_or_else(|| panic!("a search hit in {why}"));
    assert_eq!(hit["source"]["projectId"], json!(p.tea_garden));
    assert_eq!(hit["source"]["toolUseId"], "s1");
    assert!(hit["source"]["snippet"].as_str().unwrap().contains("明前"), "{hit}");
    assert_eq!(hit["hunkIds"], json!([hunk]));
    let remembered = sources.iter().find(|s| s["source"]["type"] == "memory").unwrap_or_else(|| panic!("the memory item in {why}"));
    assert_eq!(remembered["source"]["memoryId"], json!(memory_id));
    assert!(sources.iter().all(|s| !s["source"]["tool"].as_str().unwrap_or("").starts_with("propose_")), "the model's own proposals are not sources: {why}");

    // Unknown hunk: NOT_FOUND naming the hunks, nothing else.
    let error = err(&p.t, "proposal.why", json!({"proposalId": proposal_id, "hunkId": "hk_nope"}));
    assert_eq!(error.code, ErrorCode::NotFound);
    assert_eq!(error.hints[0].id, "hunk_ids");
    assert_eq!(err(&p.t, "proposal.why", json!({"proposalId": "prp_nope"})).code, ErrorCode::NotFound);

    // Accepting makes a version whose origin carries the hunk's sources.
    let revision = p.t.ok("project.get", json!({"projectId": p.project}))["revision"].clone();
    let accepted = p.t.ok("proposal.accept", json!({"proposalId": proposal_id, "expectedBase": revision}));
    let version = p.t.ok("version.get", json!({"projectId": p.project, "number": accepted["version"]["number"]}));
    let origin_sources = version["origin"]["sources"].as_array().unwrap_or_else(|| panic!("sources in {version}"));
    let types: Vec<&str> = origin_sources.iter().map(|s| s["type"].as_str().unwrap()).collect();
    assert!(types.contains(&"searchHit") && types.contains(&"memory"), "{version}");

    // Replay folds to the same sources the live loop kept.
    let live = p.t.ok("session.get", json!({"sessionId": p.session}));
    assert!(live["session"]["id"].is_string());
    let replayed = replay(p.t.engine.session_events(&p.session).unwrap().iter()).state;
    assert!(replayed.sources.iter().any(|s| matches!(s, inkstone_api::model::ProvenanceSource::SearchHit { tool_use_id, .. } if tool_use_id == "s1")));
    p.model.server.assert_tool_results_paired();
}

#[test]
fn a_carried_hunk_keeps_the_sources_of_the_call_that_proposed_it() {
    let p = setup();
    // First call reads the tea garden's notes and proposes the opening.
    p.push(vec![
        tool_calls(&[call("s1", "search_workspace", json!({"query": "明前龙井"}))]),
        tool_calls(&[call("e1", "propose_source_patch", json!({"summary": "第一段", "edits": [{"find": "第一段：山里的茶。", "replace": "第一段：明前的茶。"}]}))]),
        // Then reads the project and proposes the second paragraph: the first edit is
        // carried into this proposal.
        tool_calls(&[call("r1", "read_project_context", json!({}))]),
        tool_calls(&[call("e2", "propose_source_patch", json!({"summary": "第二段", "edits": [{"find": "第二段：采茶的人。", "replace": "第二段：清明前采茶的人。"}]}))]),
        Reply::text("两处都提议了。"),
    ]);
    p.send("改两段，参考 https://example.com/tea-notes 的写法");
    let proposal = p.proposal(&p.open_proposal());
    assert_eq!(proposal.hunks.len(), 2, "the earlier hunk is carried");
    let first = proposal.hunks.iter().find(|h| h.new_text.contains("明前的茶")).unwrap().id.clone();
    let second = proposal.hunks.iter().find(|h| h.new_text.contains("清明前采茶")).unwrap().id.clone();
    let first_why = p.t.ok("proposal.why", json!({"proposalId": proposal.id, "hunkId": first}));
    let second_why = p.t.ok("proposal.why", json!({"proposalId": proposal.id, "hunkId": second}));
    assert!(!kinds(&first_why["sources"]).contains(&"toolResult".to_owned()), "the project was read after the first hunk was proposed: {first_why}");
    assert!(kinds(&first_why["sources"]).contains(&"searchHit".to_owned()));
    assert!(kinds(&first_why["sources"]).contains(&"link".to_owned()), "the pasted link: {first_why}");
    let second_kinds = kinds(&second_why["sources"]);
    assert!(second_kinds.contains(&"toolResult".to_owned()) && second_kinds.contains(&"searchHit".to_owned()), "{second_why}");
    let read = second_why["sources"].as_array().unwrap().iter().find(|s| s["source"]["type"] == "toolResult").unwrap();
    assert_eq!(read["source"]["tool"], "read_project_context");
    assert!(read["content"].as_str().unwrap().contains("山里的茶"), "a tool result opens to what the model was sent: {read}");

    // Accepting only the first hunk: the version names only its sources.
    let revision = p.t.ok("project.get", json!({"projectId": p.project}))["revision"].clone();
    let accepted = p.t.ok("proposal.accept", json!({"proposalId": proposal.id, "expectedBase": revision, "hunks": [first]}));
    let version = p.t.ok("version.get", json!({"projectId": p.project, "number": accepted["version"]["number"]}));
    let types: Vec<&str> = version["origin"]["sources"].as_array().unwrap().iter().map(|s| s["type"].as_str().unwrap()).collect();
    assert!(types.contains(&"searchHit") && !types.contains(&"toolResult"), "{version}");
}

#[test]
fn records_written_before_provenance_still_load() {
    // A proposal origin, a version origin and a compact boundary as they were stored
    // before provenance: no sources anywhere.
    let origin: inkstone_api::proposals::Origin =
        serde_json::from_value(json!({"sessionId": "ses_1", "model": "m", "profileId": "p", "promptVersion": "drafting@1", "promptLayers": []})).unwrap();
    assert!(origin.sources.is_empty());
    let version_origin: inkstone_api::model::VersionOrigin = serde_json::from_value(json!({"type": "aiProposal", "proposalId": "prp_1", "model": "m", "profileId": "p"})).unwrap();
    assert!(matches!(version_origin, inkstone_api::model::VersionOrigin::AiProposal { ref sources, .. } if sources.is_empty()));
    assert_eq!(serde_json::to_value(&version_origin).unwrap(), json!({"type": "aiProposal", "proposalId": "prp_1", "model": "m", "profileId": "p"}), "written as before");
    let boundary: EventBody = serde_json::from_value(json!({"kind": "compact_boundary", "payload": {"trigger": "manual", "mode": "truncated", "summaryText": "s",
        "keptMessages": 1, "compactedMessages": 2, "pinnedInstructions": [], "tokensBefore": 10, "tokensAfter": 5, "note": "n"}}))
    .unwrap();
    assert!(matches!(boundary, EventBody::CompactBoundary { sources: None, .. }));

    // A whole proposal stored before, read back through the API: why has no sources.
    let p = setup();
    p.push(vec![tool_calls(&[call("e1", "propose_source_patch", json!({"summary": "改", "edits": [{"find": "山里的茶", "replace": "山里的新茶"}]}))]), Reply::text("好")]);
    p.send("改一下");
    let id = p.open_proposal();
    let mut stored = serde_json::to_value(p.proposal(&id)).unwrap();
    stored["origin"].as_object_mut().unwrap().remove("sources");
    stored.as_object_mut().unwrap().remove("hunkSources");
    let old: Proposal = serde_json::from_value(stored).unwrap();
    assert!(old.origin.sources.is_empty() && old.hunk_sources.is_empty());
    assert!(old.sources_of_hunk(&old.hunks[0].id).is_empty());
}
