//! The drafting tools through real sessions: the scripted model server over real HTTP,
//! a real sled store. Propose tools record proposals (with their origin) and change
//! nothing official; `apply_proposal` asks with the exact change, is bound to the
//! selected hunks and the target's revision, and makes an audited version; the
//! person's constraints reach the next model request; the person's actions are not
//! the model's; plan mode, staged changes and the checkpoints around a turn.

use inkstone_api::api::dto;
use inkstone_api::harness::{ApprovalChange, Event, EventBody};
use inkstone_api::proposals::apply::{audit, reject, Reject};
use inkstone_api::proposals::checkpoints::{self, CheckpointReason};
use inkstone_api::proposals::staging::{StagedEntry, Staging};
use inkstone_api::proposals::{self, NewProposal, Origin, Payload, Proposal, ProposalKind, ProposalStatus, Target};
use inkstone_api::store::{Batch, Durability};
use inkstone_test_support::model_server::{ModelServer, Reply};
use inkstone_test_support::TestEngine;
use serde_json::{json, Value};

use crate::harness::{assert_replay_matches_live, stream};

const POEM: &str = "# 春晓\n\n春眠不觉晓，\n\n处处闻啼鸟。\n\n夜来风雨声，\n\n花落知多少。\n\n春眠不觉晓，是开头也是结尾。\n";

struct D {
    t: TestEngine,
    server: ModelServer,
    project: String,
    session: String,
    profile: String,
}

/// A project with `source`, a session on it, and a fake-model profile with a large
/// window (so results are seen inline), its script given later with `push`.
fn setup(source: &str) -> D {
    setup_with_window(source, 65_536)
}

fn setup_with_window(source: &str, window: u32) -> D {
    let server = ModelServer::start(Vec::new());
    let t = TestEngine::new();
    let profile = t.ok("llmProfile.create", json!({"name": "fake", "baseUrl": server.base_url(), "model": "fake-model", "contextWindow": window}))["profile"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let project = t.ok("project.create", json!({"title": "春晓", "source": source}))["id"].as_str().unwrap().to_owned();
    let session = t.ok("session.create", json!({"projectId": project}))["session"]["id"].as_str().unwrap().to_owned();
    D { t, server, project, session, profile }
}

impl D {
    fn push(&self, replies: Vec<Reply>) {
        for reply in replies {
            self.server.push(reply);
        }
    }

    fn send(&self, text: &str) -> (Value, Vec<dto::Event>) {
        let (result, events) = stream(&self.t.engine, "session.submit", json!({"sessionId": self.session, "text": text}));
        (result.unwrap_or_else(|e| panic!("submit failed: {e:?}")), events)
    }

    fn send_in_plan_mode(&self, text: &str) -> Value {
        stream(&self.t.engine, "session.submit", json!({"sessionId": self.session, "text": text, "mode": "plan"})).0.unwrap()
    }

    fn approve(&self, request_id: &str) -> (Value, Vec<dto::Event>) {
        let (result, events) = stream(&self.t.engine, "session.resolveApproval", json!({"sessionId": self.session, "requestId": request_id, "approved": true}));
        (result.unwrap_or_else(|e| panic!("resolveApproval failed: {e:?}")), events)
    }

    fn log(&self) -> Vec<Event> {
        self.t.engine.session_events(&self.session).unwrap()
    }

    /// The status and content of the result of tool call `id`.
    fn result(&self, id: &str) -> (String, String) {
        self.log()
            .into_iter()
            .find_map(|e| match e.body {
                EventBody::ToolResult { status, content, .. } if e.tool_use_id.as_deref() == Some(id) => {
                    Some((serde_json::to_value(status).unwrap().as_str().unwrap().to_owned(), content))
                }
                _ => None,
            })
            .unwrap_or_else(|| panic!("no result for {id}"))
    }

    /// The result of call `id`, which must have succeeded, as JSON.
    fn ok(&self, id: &str) -> Value {
        let (status, content) = self.result(id);
        assert_eq!(status, "success", "{id}: {content}");
        serde_json::from_str(&content).unwrap_or_else(|_| panic!("{id}: not JSON: {content}"))
    }

    fn proposals(&self) -> Vec<Proposal> {
        proposals::list(self.t.engine.store(), &self.project).unwrap()
    }

    fn proposal(&self, id: &str) -> Proposal {
        proposals::load(self.t.engine.store(), id).unwrap()
    }

    fn source(&self) -> String {
        self.t.ok("project.get", json!({"projectId": self.project}))["source"].as_str().unwrap().to_owned()
    }

    fn versions(&self) -> Vec<Value> {
        self.t.ok("version.list", json!({"projectId": self.project}))["versions"].as_array().unwrap().clone()
    }

    /// The system message of every chat request the model server received.
    fn system_messages(&self) -> Vec<String> {
        self.server.chat_requests().iter().map(|r| r.body["messages"][0]["content"].as_str().unwrap().to_owned()).collect()
    }

    fn assert_replay_matches_live(&self) {
        assert_replay_matches_live(&self.t, &self.server, &self.session, &self.project);
    }

    /// A proposal made directly (as the session's, outside the model), for tests that
    /// need its id before the model is scripted.
    fn propose_directly(&self, kind: ProposalKind, target: Target, payload: Payload) -> Proposal {
        let origin =
            Origin { session_id: Some(self.session.clone()), model: "fake-model".into(), profile_id: self.profile.clone(), prompt_version: "test".into(), ..Origin::default() };
        proposals::create(self.t.engine.kernel(), NewProposal { project_id: self.project.clone(), kind, target, summary: "直接提出".into(), payload, origin }).unwrap()
    }
}

fn call(id: &str, tool: &str, input: Value) -> (String, String, String) {
    (id.to_owned(), tool.to_owned(), input.to_string())
}

fn calls(list: &[(String, String, String)]) -> Reply {
    let borrowed: Vec<(&str, &str, &str)> = list.iter().map(|(a, b, c)| (a.as_str(), b.as_str(), c.as_str())).collect();
    Reply::tool_calls(&borrowed)
}

fn pending_request(result: &Value) -> String {
    result["session"]["pendingApproval"]["requestId"].as_str().unwrap_or_else(|| panic!("no pending approval in {result}")).to_owned()
}

/// The change shown with approval request `request_id`.
fn approval_change(events: &[dto::Event], request_id: &str) -> (Option<u64>, Option<Box<dto::ApprovalChange>>, String) {
    events
        .iter()
        .find_map(|e| match &e.body {
            dto::EventBody::ApprovalRequested { request_id: id, target_version, change, input_hash, reason_id, .. } if id == request_id => {
                // Why it asks, by an id the UI words (a write asks by its policy).
                assert_eq!(reason_id.as_deref(), Some("policy"), "{request_id}");
                Some((*target_version, change.clone(), input_hash.clone()))
            }
            _ => None,
        })
        .unwrap_or_else(|| panic!("no approval request {request_id}"))
}

fn two_edits() -> Value {
    json!({"summary": "换两个词", "edits": [{"find": "处处闻啼鸟", "replace": "处处闻鸟啼"}, {"find": "花落知多少", "replace": "花落知几多"}]})
}

/// The model proposes `input` as `propose_source_patch` in one turn; returns the id.
fn model_proposes(d: &D, call_id: &str, input: Value) -> String {
    d.push(vec![calls(&[call(call_id, "propose_source_patch", input)]), Reply::text("提好了")]);
    let (result, _) = d.send("改一改");
    assert_eq!(result["reason"], "completed");
    d.ok(call_id)["proposalId"].as_str().unwrap().to_owned()
}

#[test]
fn an_ambiguous_anchor_is_a_tool_error_naming_the_edit_and_a_retry_succeeds() {
    let d = setup(POEM);
    d.push(vec![
        calls(&[call(
            "p1",
            "propose_source_patch",
            json!({"summary": "改两处", "edits": [{"find": "处处闻啼鸟", "replace": "处处闻鸟啼"}, {"find": "春眠不觉晓", "replace": "春眠未觉晓"}]}),
        )]),
        calls(&[call(
            "p2",
            "propose_source_patch",
            json!({"summary": "改两处", "edits": [{"find": "处处闻啼鸟", "replace": "处处闻鸟啼"}, {"find": "春眠不觉晓，\n", "replace": "春眠未觉晓，\n"}]}),
        )]),
        Reply::text("提好了"),
    ]);
    let (result, _) = d.send("改一下");
    assert_eq!(result["reason"], "completed");
    let (status, content) = d.result("p1");
    assert_eq!(status, "tool_error");
    assert!(content.contains("edit 2") && content.contains("occurs 2 times"), "names the edit and why: {content}");
    assert!(content.contains("No proposal was made"), "{content}");
    // The model saw the error in its next request.
    assert!(d.server.chat_requests()[1].body.to_string().contains("edit 2: the quoted text occurs 2 times"));

    let out = d.ok("p2");
    assert_eq!(out["kind"], "source_patch");
    assert_eq!(out["hunks"], 2);
    assert_eq!(out["hunkIds"].as_array().unwrap().len(), 2);
    assert!(out["note"].as_str().unwrap().contains("the person reviews"), "{out}");
    let proposals = d.proposals();
    assert_eq!(proposals.len(), 1, "the failed call made no proposal");
    let p = &proposals[0];
    assert_eq!(p.id, out["proposalId"].as_str().unwrap());
    let Payload::Text { base_text, proposed_text } = &p.payload else { panic!("a text proposal") };
    assert_eq!(base_text, POEM);
    assert_eq!(proposed_text, &POEM.replacen("处处闻啼鸟", "处处闻鸟啼", 1).replacen("春眠不觉晓", "春眠未觉晓", 1));
    // Where it came from: the session, the turn, the call, the snapshot, the model.
    let log = d.log();
    let turn = log.iter().find(|e| matches!(e.body, EventBody::TurnStarted {})).unwrap().sequence;
    let asked = log.iter().position(|e| matches!(&e.body, EventBody::AssistantMessage { tool_calls, .. } if tool_calls.iter().any(|c| c.id == "p2"))).unwrap();
    let snapshot = log[..asked].iter().rev().find(|e| matches!(e.body, EventBody::ContextAssembled { .. })).unwrap().context_snapshot_id.clone();
    let o = &p.origin;
    assert_eq!(o.session_id.as_deref(), Some(d.session.as_str()));
    assert_eq!((o.turn, o.tool_use_id.as_deref()), (Some(turn), Some("p2")));
    assert_eq!(o.context_snapshot_id, snapshot);
    assert!(o.context_snapshot_id.is_some());
    assert_eq!((o.model.as_str(), o.profile_id.as_str(), o.prompt_version.as_str()), ("fake-model", d.profile.as_str(), proposals::PROMPT_VERSION));
    assert_eq!(d.source(), POEM, "nothing official changed");
    assert!(d.versions().len() <= 1);
    d.assert_replay_matches_live();
}

#[test]
fn a_newer_proposal_supersedes_the_older_one_of_the_session() {
    let d = setup(POEM);
    let first = model_proposes(&d, "p1", json!({"summary": "一", "edits": [{"find": "处处闻啼鸟", "replace": "处处闻鸟啼"}]}));
    let second = model_proposes(&d, "p2", json!({"summary": "二", "rewrite": "# 春晓\n\n全新的正文。\n"}));
    assert_eq!(d.ok("p2")["kind"], "source_rewrite");
    assert_eq!(d.ok("p2")["supersedes"], json!([first]));
    let older = d.proposal(&first);
    assert_eq!(older.status, ProposalStatus::Superseded);
    assert_eq!(older.superseded_by.as_deref(), Some(second.as_str()));
    assert_eq!(d.proposal(&second).status, ProposalStatus::Proposed);
    d.assert_replay_matches_live();
}

#[test]
fn apply_proposal_asks_with_the_exact_diff_then_makes_an_audited_ai_version() {
    let d = setup(POEM);
    let id = model_proposes(&d, "p1", two_edits());
    let proposal = d.proposal(&id);
    let versions_before = d.versions().len();
    d.push(vec![calls(&[call("a1", "apply_proposal", json!({"proposalId": id}))]), Reply::text("已应用")]);
    let (result, events) = d.send("应用吧");
    assert_eq!(result["reason"], "blocked_on_approval");
    let request = pending_request(&result);
    let (target_version, change, _) = approval_change(&events, &request);
    let revision = d.t.ok("project.get", json!({"projectId": d.project}))["revision"].as_u64();
    assert_eq!(target_version, revision, "bound to the project's revision");
    let change = change.expect("the request shows the change");
    assert_eq!((change.proposal_id.as_str(), change.kind, &change.target), (id.as_str(), dto::ProposalKind::SourcePatch, &dto::Target::Source));
    assert_eq!(change.summary, "换两个词");
    assert_eq!(change.hunks.iter().map(|h| h.id.clone()).collect::<Vec<_>>(), proposal.hunks.iter().map(|h| h.id.clone()).collect::<Vec<_>>());
    let shown = serde_json::to_string(&change.hunks).unwrap();
    assert!(shown.contains("处处闻啼") && shown.contains("\"几\"") && shown.contains("\"emphasized\":true"), "the diffs are shown: {shown}");
    assert!(change.hunks.iter().all(|h| h.display.is_some()));
    // What the person is told the accept saves: the next version, not the revision.
    let head = d.t.ok("project.get", json!({"projectId": d.project}))["head"].as_u64().unwrap() as u32;
    assert_eq!(change.creates_version, Some(head + 1), "the version the accept would save");
    // The session view shows it too, and nothing changed yet.
    assert_eq!(result["session"]["pendingApproval"]["change"]["proposalId"], json!(id));
    assert_eq!(d.source(), POEM);

    let (result, _) = d.approve(&request);
    assert_eq!(result["reason"], "completed");
    let out = d.ok("a1");
    assert_eq!(out["status"], "accepted");
    let versions = d.versions();
    assert_eq!(versions.len(), versions_before + 1);
    let number = out["version"].as_u64().unwrap();
    assert_eq!(Some(number as u32), change.creates_version, "the accept saved the version the request named");
    let version = d.t.ok("version.get", json!({"projectId": d.project, "number": number}));
    assert_eq!(version["origin"]["type"], "aiProposal");
    assert_eq!(version["origin"]["proposalId"], json!(id));
    assert_eq!(version["origin"]["sessionId"], json!(d.session));
    assert_eq!(d.source(), POEM.replace("处处闻啼鸟", "处处闻鸟啼").replace("花落知多少", "花落知几多"));
    let record = audit(d.t.engine.store(), &d.project).unwrap().pop().unwrap();
    assert_eq!(record.via, "assistant");
    assert_eq!(record.approval_request_id.as_deref(), Some(request.as_str()));
    assert_eq!(record.proposal_id, id);
    assert_eq!(record.version, Some(number as u32));
    assert_eq!(d.proposal(&id).status, ProposalStatus::Accepted);
    d.assert_replay_matches_live();
}

#[test]
fn an_approval_is_not_reused_when_the_target_moved() {
    let d = setup(POEM);
    let id = model_proposes(&d, "p1", two_edits());
    d.push(vec![calls(&[call("a1", "apply_proposal", json!({"proposalId": id}))]), Reply::text("已应用")]);
    let (result, events) = d.send("应用吧");
    let first = pending_request(&result);
    let (first_version, _, first_hash) = approval_change(&events, &first);
    // The project moves (not its text) while the request waits.
    d.t.ok("project.update", json!({"projectId": d.project, "platforms": ["x"]}));
    let (result, events) = d.approve(&first);
    assert_eq!(result["reason"], "blocked_on_approval", "a moved target needs a new decision");
    let second = pending_request(&result);
    assert_ne!(second, first);
    let (second_version, change, second_hash) = approval_change(&events, &second);
    assert_eq!(second_version, first_version.map(|v| v + 1));
    assert_eq!(first_hash, second_hash, "the same change, on another revision");
    assert!(change.is_some());
    assert_eq!(d.source(), POEM, "nothing was applied on the old approval");
    let (result, _) = d.approve(&second);
    assert_eq!(result["reason"], "completed");
    assert_eq!(d.ok("a1")["status"], "accepted");
    assert_ne!(d.source(), POEM);
    d.assert_replay_matches_live();
}

#[test]
fn an_approval_whose_proposal_went_stale_applies_nothing() {
    let d = setup(POEM);
    let id = model_proposes(&d, "p1", two_edits());
    d.push(vec![calls(&[call("a1", "apply_proposal", json!({"proposalId": id}))]), Reply::text("好的")]);
    let (result, _) = d.send("应用吧");
    let request = pending_request(&result);
    let edited = POEM.replace("夜来风雨声", "夜来风和雨");
    d.t.ok("project.update", json!({"projectId": d.project, "source": edited}));
    let versions = d.versions().len();
    let (result, _) = d.approve(&request);
    assert_eq!(result["reason"], "completed");
    let (status, content) = d.result("a1");
    assert_eq!(status, "tool_error");
    assert!(content.contains("stale"), "{content}");
    assert_eq!(d.source(), edited);
    assert_eq!(d.versions().len(), versions);
    assert_eq!(d.proposal(&id).status, ProposalStatus::Proposed);
    d.assert_replay_matches_live();
}

#[test]
fn an_approval_covers_only_the_hunks_it_was_asked_for_and_a_rejection_reason_reaches_the_model() {
    let d = setup(POEM);
    let id = model_proposes(&d, "p1", two_edits());
    let proposal = d.proposal(&id);
    let (h1, h2) = (proposal.hunks[0].id.clone(), proposal.hunks[1].id.clone());
    d.push(vec![calls(&[call("a1", "apply_proposal", json!({"proposalId": id}))]), Reply::text("只应用了第一处")]);
    let (result, events) = d.send("全部应用");
    let first = pending_request(&result);
    let (_, change, first_hash) = approval_change(&events, &first);
    assert_eq!(change.unwrap().hunks.len(), 2);
    // While the request waits the person rejects the second hunk, with a reason: the
    // selection the call would apply is now another one.
    let reason = "“花落知多少”是原句，不要改";
    reject(d.t.engine.kernel(), &Reject { proposal_id: id.clone(), hunks: Some(vec![h2.clone()]), reason: Some(reason.into()) }).unwrap();
    let (result, events) = d.approve(&first);
    assert_eq!(result["reason"], "blocked_on_approval", "another selection needs a new decision");
    let second = pending_request(&result);
    let (_, change, second_hash) = approval_change(&events, &second);
    assert_ne!(first_hash, second_hash);
    assert_eq!(change.unwrap().hunks.iter().map(|h| h.id.clone()).collect::<Vec<_>>(), std::slice::from_ref(&h1));
    assert_eq!(d.source(), POEM);
    let (result, _) = d.approve(&second);
    assert_eq!(result["reason"], "completed");
    assert_eq!(d.ok("a1")["hunksApplied"], json!([h1]));
    assert_eq!(d.source(), POEM.replace("处处闻啼鸟", "处处闻鸟啼"));
    assert_eq!(d.proposal(&id).status, ProposalStatus::PartiallyAccepted);
    // The reason is in the system message of every model request after the rejection.
    let systems = d.system_messages();
    let heading = "# The person's constraints (verbatim; follow them)";
    // Requests 0 and 1 proposed, 2 asked to apply; the rejection came after them.
    let (before, after) = systems.split_at(3);
    assert_eq!(after.len(), 1);
    assert!(before.iter().all(|s| !s.contains(heading)), "no constraint before the rejection");
    assert!(after.iter().all(|s| s.contains(&format!("{heading}\n- {reason}\n"))), "{after:?}");
    d.assert_replay_matches_live();
}

#[test]
fn a_rejection_reason_is_visible_in_the_next_model_request() {
    let d = setup(POEM);
    let id = model_proposes(&d, "p1", json!({"summary": "换标题", "edits": [{"find": "# 春晓", "replace": "# 春天的早晨"}]}));
    let reason = "不要改标题，保持原样";
    let rejected = reject(d.t.engine.kernel(), &Reject { proposal_id: id, hunks: None, reason: Some(reason.into()) }).unwrap();
    assert!(rejected.constraint.is_some());
    d.push(vec![Reply::text("明白")]);
    d.send("继续");
    let systems = d.system_messages();
    assert_eq!(systems.len(), 3);
    assert!(!systems[0].contains(reason) && !systems[1].contains(reason));
    assert!(systems[2].contains(&format!("# The person's constraints (verbatim; follow them)\n- {reason}\n")), "{}", systems[2]);
    d.assert_replay_matches_live();
}

#[test]
fn accepting_or_rejecting_is_the_persons_and_the_model_is_told_so() {
    let d = setup(POEM);
    let proposal = d.propose_directly(ProposalKind::Outline, Target::Session, Payload::Outline { outline: "1. 开头".into() });
    d.push(vec![
        calls(&[
            call("x1", "accept_proposal", json!({"proposalId": proposal.id})),
            call("x2", "proposal.reject", json!({"proposalId": proposal.id})),
            call("x3", "no_such_tool", json!({})),
        ]),
        Reply::text("好的，请你来决定"),
    ]);
    let (result, _) = d.send("接受它");
    assert_eq!(result["reason"], "completed");
    for id in ["x1", "x2"] {
        let (status, content) = d.result(id);
        assert_eq!(status, "tool_forbidden", "{id}");
        assert!(content.contains("only the person"), "{content}");
    }
    assert_eq!(d.result("x3").0, "unknown_tool", "other names are still unknown tools");
    assert_eq!(d.proposal(&proposal.id).status, ProposalStatus::Proposed);
    d.assert_replay_matches_live();
}

#[test]
fn plan_mode_denies_apply_proposal_but_runs_the_propose_tools() {
    let d = setup(POEM);
    let proposal = d.propose_directly(ProposalKind::SourcePatch, Target::Source, Payload::Text { base_text: POEM.into(), proposed_text: POEM.replace("处处闻啼鸟", "处处闻鸟啼") });
    d.push(vec![
        calls(&[
            call("o1", "propose_outline", json!({"summary": "结构", "outline": "1. 春眠\n2. 鸟啼\n3. 风雨"})),
            call("p1", "propose_source_patch", json!({"summary": "改一处", "edits": [{"find": "夜来风雨声", "replace": "夜来风和雨"}]})),
            call("a1", "apply_proposal", json!({"proposalId": proposal.id})),
        ]),
        Reply::text("计划如上"),
    ]);
    let result = d.send_in_plan_mode("先规划");
    assert_eq!(result["session"]["mode"], "plan");
    assert_eq!(result["reason"], "completed");
    assert_eq!(d.ok("o1")["kind"], "outline");
    assert_eq!(d.ok("p1")["kind"], "source_patch");
    let (status, content) = d.result("a1");
    assert_eq!(status, "blocked");
    assert!(content.contains("plan mode"), "{content}");
    assert_eq!(d.source(), POEM);
    // The direct proposal was superseded by the model's newer source proposal.
    assert_eq!(d.proposal(&proposal.id).status, ProposalStatus::Superseded);
    d.assert_replay_matches_live();
}

#[test]
fn read_project_context_shows_the_effective_source_when_changes_are_staged() {
    let d = setup(POEM);
    let effective = POEM.replace("处处闻啼鸟。", "处处闻啼鸟。\n\n（暂存的一段新文字。）");
    let project = d.t.ok("project.get", json!({"projectId": d.project}));
    let staging = Staging {
        session_id: d.session.clone(),
        project_id: d.project.clone(),
        base_revision: project["revision"].as_u64().unwrap(),
        base_hash: proposals::text_hash(POEM),
        entries: vec![StagedEntry { proposal_id: "prp_staged".into(), hunks: vec!["hk_1".into()] }],
        effective_source: effective.clone(),
        updated_at: chrono::DateTime::from_timestamp_millis(0).unwrap(),
    };
    let mut batch = Batch::new();
    batch.put(&staging).unwrap();
    d.t.engine.store().apply(batch, Durability::Durable).unwrap();
    d.push(vec![
        calls(&[
            call("r1", "read_project_context", json!({})),
            call("p1", "propose_source_patch", json!({"summary": "改暂存的那段", "edits": [{"find": "暂存的一段新文字", "replace": "暂存后又改的文字"}]})),
            call("b1", "run_brand_check", json!({})),
        ]),
        Reply::text("看到了"),
    ]);
    d.send("读一下");
    let out = d.ok("r1");
    assert_eq!(out["source"], json!(effective));
    assert_eq!(out["staged"]["proposals"], json!(["prp_staged"]));
    assert!(out["staged"]["note"].as_str().unwrap().contains("staged"), "{out}");
    assert_eq!(d.ok("p1")["basedOn"], "the source with this session's staged changes", "anchors are found in the effective source");
    assert!(d.ok("b1")["checked"].as_str().unwrap().contains("staged"));
    assert_eq!(d.source(), POEM, "the official working copy is unchanged");

    // Another session of the project sees the official source.
    let other = d.t.ok("session.create", json!({"projectId": d.project}))["session"]["id"].as_str().unwrap().to_owned();
    d.push(vec![calls(&[call("r2", "read_project_context", json!({}))]), Reply::text("ok")]);
    stream(&d.t.engine, "session.submit", json!({"sessionId": other, "text": "读"})).0.unwrap();
    let content = d.t.engine.session_events(&other).unwrap().into_iter().find_map(|e| match e.body {
        EventBody::ToolResult { content, .. } => Some(content),
        _ => None,
    });
    let out: Value = serde_json::from_str(&content.unwrap()).unwrap();
    assert_eq!(out["source"], json!(POEM));
    assert!(out["staged"].is_null());
}

#[test]
fn a_turn_with_more_than_one_proposal_is_checkpointed_before_and_after() {
    let d = setup(POEM);
    d.push(vec![
        calls(&[
            call("o1", "propose_outline", json!({"summary": "结构", "outline": "1. 春眠\n2. 鸟啼"})),
            call("t1", "propose_title_candidates", json!({"summary": "标题", "candidates": [{"text": "春眠", "rationale": "短"}, {"text": "春晓新读"}]})),
        ]),
        Reply::text("两份提议"),
    ]);
    d.send("给点建议");
    let list = checkpoints::list(d.t.engine.store(), &d.session).unwrap();
    assert_eq!(list.iter().map(|c| c.reason).collect::<Vec<_>>(), [CheckpointReason::BeforeTurn, CheckpointReason::AfterTurn]);
    let log = d.log();
    let started = log.iter().find(|e| matches!(e.body, EventBody::TurnStarted {})).unwrap().sequence;
    assert_eq!(list[0].sequence, started, "taken when the turn started");
    assert!(list[1].sequence > list[0].sequence);
    assert!(list[1].label.contains("2 proposals"), "{}", list[1].label);
    // Language-neutral on the wire: the wording id and its values (the UI words them).
    assert_eq!(list.iter().map(|c| c.label_id.as_deref()).collect::<Vec<_>>(), [Some("turn_before"), Some("turn_after")]);
    for c in &list {
        assert_eq!(c.label_params.get("proposals").map(String::as_str), Some("2"), "{c:?}");
    }
    let wire = d.t.ok("checkpoint.list", json!({"sessionId": d.session}));
    assert_eq!(wire["checkpoints"][0]["labelId"], "turn_before");
    assert_eq!(wire["checkpoints"][1]["labelParams"]["proposals"], "2");
    let project = d.t.ok("project.get", json!({"projectId": d.project}));
    assert_eq!(Some(list[0].revision), project["revision"].as_u64());

    // A turn with a single proposal keeps none.
    model_proposes(&d, "p1", json!({"summary": "一处", "edits": [{"find": "处处闻啼鸟", "replace": "处处闻鸟啼"}]}));
    assert_eq!(checkpoints::list(d.t.engine.store(), &d.session).unwrap().len(), 2);
    d.assert_replay_matches_live();
}

#[test]
fn read_tool_result_reads_on_in_a_stored_result_and_search_finds_history() {
    // A window the long source fits in as context, but not again as a result: the
    // result is stored.
    let long = format!("{POEM}\n{}", "长文".repeat(3_000));
    let d = setup_with_window(&long, 16_384);
    d.t.ok("version.create", json!({"projectId": d.project, "message": "第一版"}));
    d.t.ok("project.update", json!({"projectId": d.project, "source": long.replace("处处闻啼鸟", "处处闻鸟鸣")}));
    d.t.ok("version.create", json!({"projectId": d.project, "message": "第二版"}));
    d.t.ok("comment.add", json!({"projectId": d.project, "body": "鸟鸣比啼鸟好吗？"}));
    // Indexing these long texts takes a debug build more than the tool's wait.
    assert!(d.t.engine.search_index().wait_idle(std::time::Duration::from_secs(20)));
    d.push(vec![calls(&[call("r1", "read_project_context", json!({})), call("s1", "search_project_history", json!({"query": "啼鸟"}))]), Reply::text("ok")]);
    d.send("读");
    let preview = d.ok("r1");
    assert_eq!(preview["truncated"], true);
    let reference = preview["ref"].as_str().unwrap().to_owned();
    let search = d.ok("s1");
    let results = search["results"].as_array().unwrap();
    let mut kinds: Vec<&str> = results.iter().map(|r| r["kind"].as_str().unwrap()).collect();
    kinds.sort();
    assert_eq!(kinds, ["comment", "version"], "the first version and the comment: {search}");
    let version = results.iter().find(|r| r["kind"] == "version").unwrap();
    assert_eq!(version["version"], 1, "only the first version has 啼鸟");
    assert!(version["ref"].is_null() && version["reference"].as_str().unwrap().starts_with(&format!("{}@v1:", d.project)), "{version}");
    assert!(version["snippet"].as_str().unwrap().contains("处处闻啼鸟"));
    assert!(version["snippet"].as_str().unwrap().chars().count() < 120, "a snippet, not the document");
    let comment = results.iter().find(|r| r["kind"] == "comment").unwrap();
    assert!(comment["commentId"].as_str().unwrap().starts_with("cmt_"), "{comment}");

    d.push(vec![calls(&[call("r2", "read_tool_result", json!({"ref": reference, "offset": preview["nextOffset"], "maxChars": 500}))]), Reply::text("ok")]);
    d.send("接着读");
    let slice = d.ok("r2");
    assert_eq!(slice["offset"], preview["nextOffset"]);
    assert!(slice["text"].as_str().unwrap().contains("长文"));
    d.assert_replay_matches_live();
}

#[test]
fn every_drafting_tool_does_its_job() {
    let source = "# 春晓\n\n春眠不觉晓，处处闻啼鸟。这是最佳的春天读物。\n\n![花](https://example.com/flower.png)\n\n更多请看 [原文](https://example.com/poem)。\n\n夜来风雨声，花落知多少。\n\n关注我们，获取更多好诗。\n";
    let d = setup(source);
    let brand = d.t.ok("brandProfile.create", json!({"name": "诗社", "voice": "温和", "bannedWords": ["读物"], "cta": "关注我们"}))["id"].as_str().unwrap().to_owned();
    let template = d.t.ok("template.create", json!({"name": "诗", "titleTemplate": "{title}"}))["id"].as_str().unwrap().to_owned();
    d.t.ok("project.update", json!({"projectId": d.project, "brandProfileId": brand, "platforms": ["wechat", "x", "douyin"]}));
    d.t.ok("version.create", json!({"projectId": d.project, "message": "第一版"}));
    for platform in ["wechat", "x", "douyin"] {
        d.t.ok("platformDraft.save", json!({"projectId": d.project, "platform": platform}));
    }
    let comment = d.t.ok("comment.add", json!({"projectId": d.project, "body": "第二句可以更好"}))["id"].as_str().unwrap().to_owned();
    // The person marked the X draft ready: it can be proposed for, not applied to.
    d.t.ok("platformDraft.setStatus", json!({"projectId": d.project, "platform": "x", "status": "ready"}));
    let x_text = d.t.ok("platformDraft.get", json!({"projectId": d.project, "platform": "x"}))["content"]["posts"][0]["text"].as_str().unwrap().to_owned();
    let x_anchor: String = x_text.chars().skip(2).take(6).collect();

    // Reads, checks and proposals run together, without asking.
    d.push(vec![
        calls(&[
            call("s1", "search_project_history", json!({"query": "风雨", "limit": 5})),
            call("c1", "compile_platform_drafts", json!({"platforms": ["wechat", "x", "douyin"]})),
            call("v1", "validate_adapted_content", json!({"platform": "x", "content": format!("{}\n\n---\n\n第二条", "长".repeat(200))})),
            call("v2", "validate_adapted_content", json!({"platform": "douyin", "title": "春晓", "content": "春眠不觉晓"})),
            call("b1", "run_brand_check", json!({})),
            call("k1", "run_platform_check", json!({"platforms": ["x"]})),
            call("r1", "run_publish_readiness_check", json!({"platforms": ["wechat", "douyin"]})),
            call("t1", "propose_title_candidates", json!({"summary": "更有画面感的标题", "candidates": [{"text": "春眠不觉晓", "rationale": "首句"}, {"text": "最佳春晓"}]})),
            call("g1", "propose_tags", json!({"platform": "douyin", "summary": "话题", "candidates": [{"text": "古诗"}, {"text": "春天", "rationale": "应季"}]})),
            call("g2", "propose_tags", json!({"platform": "x", "summary": "话题", "candidates": [{"text": "poetry"}]})),
            call("o1", "propose_outline", json!({"summary": "结构", "outline": "1. 春眠\n2. 风雨"})),
            call("m1", "propose_comment_reply", json!({"commentId": comment, "summary": "回应", "body": "已改成“处处闻鸟鸣”。"})),
            call("x1", "propose_draft_patch", json!({"platform": "x", "summary": "改 X 帖子", "edits": [{"find": x_anchor, "replace": "【改】"}]})),
        ]),
        Reply::text("都看过了"),
    ]);
    let (result, _) = d.send("全面检查");
    assert_eq!(result["reason"], "completed");

    let search = d.ok("s1");
    // The working copy equals version 1: one hit, the working copy.
    assert_eq!(search["results"].as_array().unwrap().len(), 1, "{search}");
    assert_eq!(search["results"][0]["kind"], "working");
    assert!(search["results"][0]["snippet"].as_str().unwrap().contains("风雨"));
    let compiled = d.ok("c1");
    let drafts = compiled["drafts"].as_array().unwrap();
    assert_eq!(drafts.len(), 3);
    let wechat = drafts.iter().find(|x| x["platform"] == "wechat").unwrap();
    assert!(wechat["text"].as_str().unwrap().contains("<"), "WeChat HTML");
    assert_eq!(wechat["saved"]["sameAsCompile"], true, "{wechat}");
    assert_eq!(wechat["nImages"], 1);
    let v1 = d.ok("v1");
    assert_eq!(v1["valid"], false, "a post over 280 weighted characters: {v1}");
    assert!(v1["findings"].to_string().contains("limit.post"));
    assert_eq!(v1["lengths"]["posts"].as_array().unwrap().len(), 2);
    let v2 = d.ok("v2");
    assert_eq!(v2["valid"], true, "{v2}");
    let brand_check = d.ok("b1");
    assert_eq!(brand_check["brandProfile"]["name"], "诗社");
    let found: Vec<&str> = brand_check["findings"].as_array().unwrap().iter().filter_map(|f| f["check"].as_str()).collect();
    assert!(found.contains(&"brand_banned_word") && found.contains(&"ad_law"), "{brand_check}");
    assert_eq!(brand_check["blocking"], 1, "the banned word blocks");
    let platform_check = d.ok("k1");
    assert_eq!(platform_check["platforms"][0]["platform"], "x");
    assert_eq!(platform_check["sourceBlocking"], 1);

    let readiness = d.ok("r1");
    assert_eq!(readiness["kind"], "checklist");
    assert_eq!(readiness["ready"], false);
    let items = readiness["items"].as_array().unwrap();
    let ids: Vec<&str> = items.iter().map(|i| i["id"].as_str().unwrap()).collect();
    for id in ["source.block.1", "cta", "wechat.draft", "wechat.limits", "wechat.links", "wechat.images", "wechat.ai_declaration", "douyin.limits", "douyin.ai_declaration"] {
        assert!(ids.contains(&id), "{id} in {ids:?}");
    }
    let item = |id: &str| items.iter().find(|i| i["id"] == id).unwrap().clone();
    assert_eq!(item("source.block.1")["blocking"], true);
    assert!(item("source.block.1")["text"].as_str().unwrap().contains("读物"));
    assert_eq!(item("cta")["resolved"], true, "the brand's call to action is at the end");
    assert_eq!(item("wechat.links")["resolved"], false);
    assert_eq!(item("wechat.ai_declaration")["resolved"], false);
    let checklist = d.proposal(readiness["proposalId"].as_str().unwrap());
    assert_eq!((checklist.kind, &checklist.target), (ProposalKind::Checklist, &Target::Session));

    let titles = d.ok("t1");
    assert_eq!(titles["candidates"], json!(["春眠不觉晓", "最佳春晓"]));
    assert!(titles["newFindings"].to_string().contains("最佳"), "a candidate's new finding is reported: {titles}");
    let tags = d.ok("g1");
    assert_eq!(tags["target"], json!({"type": "draft", "platform": "douyin"}));
    let (status, content) = d.result("g2");
    assert_eq!(status, "schema_violation", "x drafts have no tags: {content}");
    assert_eq!(d.ok("o1")["kind"], "outline");
    assert_eq!(d.ok("m1")["target"], json!({"type": "comment", "commentId": comment}));
    let patch = d.ok("x1");
    assert_eq!(patch["kind"], "draft_patch");
    assert_eq!(patch["hunks"], 1);
    assert_eq!(patch["draftStatus"], "ready");
    assert!(patch["note"].as_str().unwrap().contains("only the person can apply"), "{patch}");
    assert!(d.versions().len() == 1, "nothing official changed");

    // Writes: each asks, and runs once approved.
    let tags_id = tags["proposalId"].as_str().unwrap().to_owned();
    let checklist_id = checklist.id.clone();
    let reply_id = d.ok("m1")["proposalId"].as_str().unwrap().to_owned();
    d.push(vec![
        calls(&[
            call("w1", "create_project_comment", json!({"body": "这句要核实出处", "quote": "夜来风雨声"})),
            call("w2", "update_project_metadata", json!({"summary": "改标题，加模板", "title": "春晓新读", "templateId": template})),
            call("w3", "resolve_checklist_item", json!({"proposalId": checklist_id, "itemId": "douyin.ai_declaration", "note": "发布时勾选"})),
            call("w4", "create_checkpoint", json!({"label": "改标题之后"})),
            call("w5", "apply_proposal", json!({"proposalId": tags_id, "choices": ["古诗", "春天"]})),
            call("w6", "apply_proposal", json!({"proposalId": reply_id})),
        ]),
        Reply::text("都完成了"),
    ]);
    let (mut result, mut events) = d.send("执行吧");
    let mut asked = Vec::new();
    while result["reason"] == "blocked_on_approval" {
        let request = pending_request(&result);
        let tool = result["session"]["pendingApproval"]["tool"].as_str().unwrap().to_owned();
        let (target_version, change, _) = approval_change(&events, &request);
        let creates_version = change.as_ref().and_then(|c| c.creates_version);
        asked.push((tool, target_version.is_some(), change.is_some(), creates_version));
        (result, events) = d.approve(&request);
    }
    assert_eq!(result["reason"], "completed");
    assert_eq!(
        asked,
        [
            ("create_project_comment".to_owned(), true, false, None),
            ("update_project_metadata".to_owned(), true, false, None),
            ("resolve_checklist_item".to_owned(), false, false, None),
            ("create_checkpoint".to_owned(), false, false, None),
            ("apply_proposal".to_owned(), true, true, None),
            ("apply_proposal".to_owned(), true, true, None),
        ],
        "every write asked; apply_proposal showed its change; tags on a draft and a comment reply save no version"
    );
    let anchored = d.ok("w1");
    assert_eq!((anchored["anchored"].as_bool(), anchored["quote"].as_str()), (Some(true), Some("夜来风雨声")));
    let meta = d.ok("w2");
    assert_eq!(meta["title"], "春晓新读");
    assert_eq!(meta["templateId"], json!(template));
    let project = d.t.ok("project.get", json!({"projectId": d.project}));
    assert_eq!(project["title"], "春晓新读");
    let metadata = d.proposal(meta["proposalId"].as_str().unwrap());
    assert_eq!((metadata.kind, metadata.status), (ProposalKind::Metadata, ProposalStatus::Accepted));
    let trail = audit(d.t.engine.store(), &d.project).unwrap();
    assert!(trail.iter().any(|a| a.proposal_id == metadata.id && a.via == "assistant" && a.approval_request_id.is_some()), "the metadata change is audited");
    let resolved = d.ok("w3");
    assert_eq!(resolved["resolved"], true);
    let Payload::Checklist { items } = d.proposal(&checklist_id).payload else { panic!("a checklist") };
    let done = items.iter().find(|i| i.id == "douyin.ai_declaration").unwrap();
    assert_eq!((done.resolved, done.note.as_deref()), (true, Some("发布时勾选")));
    let checkpoint = d.ok("w4");
    let kept = checkpoints::list(d.t.engine.store(), &d.session).unwrap();
    let assistant = kept.iter().find(|c| c.reason == CheckpointReason::Assistant).unwrap();
    assert_eq!((assistant.id.as_str(), assistant.label.as_str()), (checkpoint["checkpointId"].as_str().unwrap(), "改标题之后"));
    assert_eq!(d.ok("w5")["draft"]["platform"], "douyin");
    let douyin = d.t.ok("platformDraft.get", json!({"projectId": d.project, "platform": "douyin"}));
    assert_eq!(douyin["content"]["tags"], json!(["古诗", "春天"]));
    let reply = d.ok("w6");
    let comments = d.t.ok("comment.list", json!({"projectId": d.project}))["comments"].as_array().unwrap().clone();
    let posted = comments.iter().find(|c| c["id"] == reply["commentId"]).unwrap();
    assert_eq!(posted["replyTo"], json!(comment));

    // A ready draft is the person's to change: not even asked.
    let patch_id = patch["proposalId"].as_str().unwrap().to_owned();
    d.push(vec![calls(&[call("w7", "apply_proposal", json!({"proposalId": patch_id}))]), Reply::text("需要你来")]);
    let (result, _) = d.send("应用 X 的修改");
    assert_eq!(result["reason"], "completed");
    let (status, content) = d.result("w7");
    assert_eq!(status, "tool_error");
    assert!(content.contains("only the person"), "{content}");
    assert_eq!(d.proposal(&patch_id).status, ProposalStatus::Proposed);
    let x = d.t.ok("platformDraft.get", json!({"projectId": d.project, "platform": "x"}));
    assert_eq!(x["content"]["posts"][0]["text"], json!(x_text));
    d.assert_replay_matches_live();
}

/// The search tools go through the index: the project's own history (a version saved
/// just before the turn included), the rest of the workspace (an imported article and
/// a comment of another project, never this project), and examples for one platform;
/// every result is a reference and a short snippet, never the document.
#[test]
fn search_tools_find_history_the_workspace_and_platform_examples_through_the_index() {
    let d = setup(POEM);
    d.t.ok("project.update", json!({"projectId": d.project, "platforms": ["xiaohongshu"]}));
    d.t.ok("version.create", json!({"projectId": d.project, "message": "第一版"}));
    let long_tail = "公园里的樱花开了。".repeat(600);
    let kite = d.t.ok("project.create", json!({"title": "春游攻略", "source": format!("# 春游\n\n周末去公园放风筝，听见啼鸟声声。\n\n{long_tail}"), "platforms": ["xiaohongshu"]}))
        ["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let comment = d.t.ok("comment.add", json!({"projectId": kite, "body": "风筝这一段写得真好"}))["id"].as_str().unwrap().to_owned();
    let wechat = d.t.ok("project.create", json!({"title": "公众号：风筝的历史", "source": "风筝起源于春秋时期。", "platforms": ["wechat"]}))["id"].as_str().unwrap().to_owned();
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("kite.md"), "# 旧文：纸鸢\n\n古人把风筝叫作纸鸢。\n").unwrap();
    let imported = d.t.ok("import.markdown", json!({"path": folder.path().display().to_string()}))["projects"][0]["id"].as_str().unwrap().to_owned();
    // The long text takes a debug build a while to index; the short save below is what
    // the tool must see without any waiting by the test.
    assert!(d.t.engine.search_index().wait_idle(std::time::Duration::from_secs(20)));
    let revision = d.t.ok("project.get", json!({"projectId": d.project}))["revision"].clone();
    d.t.ok("project.update", json!({"projectId": d.project, "baseRevision": revision, "source": POEM.replace("夜来风雨声", "夜来放风筝")}));
    d.t.ok("version.create", json!({"projectId": d.project, "message": "第二版"}));

    d.push(vec![
        calls(&[
            call("h1", "search_project_history", json!({"query": "风筝"})),
            call("h2", "search_project_history", json!({"query": "雨"})),
            call("w1", "search_workspace", json!({"query": "风筝"})),
            call("w2", "search_workspace", json!({"query": "风筝", "kinds": ["comment"]})),
            call("e1", "find_relevant_examples", json!({"platform": "xiaohongshu", "query": "风筝"})),
            call("e2", "find_relevant_examples", json!({"platform": "wechat"})),
            call("n1", "search_workspace", json!({"query": "量子纠缠"})),
        ]),
        Reply::text("找到了"),
    ]);
    let (result, _) = d.send("找找写过的风筝");
    assert_eq!(result["reason"], "completed");

    // History: the version saved a moment ago (equal to the working copy: one hit).
    let history = d.ok("h1");
    let hits = history["results"].as_array().unwrap();
    assert_eq!(hits.len(), 1, "{history}");
    assert_eq!((hits[0]["projectId"].as_str(), hits[0]["kind"].as_str()), (Some(d.project.as_str()), Some("working")));
    // One character finds the line only version 1 still has.
    let rain = d.ok("h2");
    let rain_hits = rain["results"].as_array().unwrap();
    assert_eq!(rain_hits.len(), 1, "{rain}");
    assert_eq!((rain_hits[0]["kind"].as_str(), rain_hits[0]["version"].as_u64()), (Some("version"), Some(1)));
    assert!(rain_hits[0]["snippet"].as_str().unwrap().contains("夜来风雨声"));

    // The workspace: other projects (the imported article too) and the comment, never
    // this project, though its text matches.
    let workspace = d.ok("w1");
    let projects: Vec<&str> = workspace["results"].as_array().unwrap().iter().map(|h| h["projectId"].as_str().unwrap()).collect();
    assert!(!projects.contains(&d.project.as_str()), "{workspace}");
    for other in [&kite, &wechat, &imported] {
        assert!(projects.contains(&other.as_str()), "{other} in {workspace}");
    }
    let comments = d.ok("w2");
    assert_eq!(comments["results"].as_array().unwrap().len(), 1, "{comments}");
    assert_eq!(comments["results"][0]["commentId"], json!(comment));
    assert_eq!(comments["results"][0]["reference"], json!(format!("{kite}#{comment}")));

    // Examples: the platform's other projects only.
    let examples = d.ok("e1");
    let example_projects: Vec<&str> = examples["results"].as_array().unwrap().iter().map(|h| h["projectId"].as_str().unwrap()).collect();
    assert_eq!(example_projects, vec![kite.as_str()], "{examples}");
    assert_eq!(examples["platform"], "xiaohongshu");
    // Without a query, the project's title is the topic.
    let by_title = d.ok("e2");
    assert_eq!(by_title["query"], "春晓", "{by_title}");
    assert!(by_title["results"].as_array().unwrap().iter().all(|h| h["projectId"] == json!(wechat)), "{by_title}");
    let none = d.ok("n1");
    assert_eq!(none["results"], json!([]));
    assert!(none["note"].as_str().unwrap().contains("Nothing matched"));

    // Compact: snippets and references, never a whole document.
    for id in ["h1", "h2", "w1", "w2", "e1"] {
        let (_, content) = d.result(id);
        assert!(content.chars().count() < 3_000, "{id}: {} characters", content.chars().count());
        assert!(!content.contains(&"公园里的樱花开了。".repeat(20)), "{id} holds a document");
        for hit in d.ok(id)["results"].as_array().unwrap() {
            assert!(hit["snippet"].as_str().unwrap().chars().count() <= 100, "{hit}");
            assert!(hit["reference"].as_str().unwrap().starts_with(hit["projectId"].as_str().unwrap()));
        }
    }
    d.assert_replay_matches_live();
}

/// `n` paragraphs, and a rewrite changing every one of them (so `n` hunks); the last
/// one gains a link.
fn many_paragraphs(n: usize) -> (String, String) {
    let source: String = (1..=n).map(|i| format!("第{i}段：早起写作。\n\n")).collect();
    let rewrite: String = (1..=n)
        .map(|i| if i == n { format!("第{i}段：早起写作，[点这里领取](https://phish.example/login)。\n\n") } else { format!("第{i}段：早起写作，改过。\n\n") })
        .collect();
    (source, rewrite)
}

/// The model proposes `input` (a result too long to be inline); returns the id.
fn model_proposes_large(d: &D, input: Value) -> String {
    d.push(vec![calls(&[call("p1", "propose_source_patch", input)]), Reply::text("提好了")]);
    let (result, _) = d.send("改一改");
    assert_eq!(result["reason"], "completed");
    assert_eq!(d.result("p1").0, "success");
    let proposals = d.proposals();
    assert_eq!(proposals.len(), 1);
    proposals[0].id.clone()
}

#[test]
fn a_change_too_large_to_show_in_a_prompt_is_not_put_to_approval_and_the_review_panel_applies_it() {
    // The record once listed 54 of 800 hunks and the approved apply wrote
    // all 800, the last one's phishing link included.
    let (source, rewrite) = many_paragraphs(800);
    let d = setup(&source);
    let id = model_proposes_large(&d, json!({"summary": "全部改写", "rewrite": rewrite}));
    let proposal = d.proposal(&id);
    assert_eq!(proposal.hunks.len(), 800);
    assert!(proposal.hunks[799].new_text.contains("https://phish.example/login"));
    let versions = d.versions().len();
    d.push(vec![calls(&[call("a1", "apply_proposal", json!({"proposalId": id}))]), Reply::text("请在审阅面板里看")]);
    let (result, events) = d.send("应用吧");
    // Every approval asked for lists every hunk it would apply; this one asks none.
    for event in &events {
        if let dto::EventBody::ApprovalRequested { change: Some(change), .. } = &event.body {
            panic!("asked approval of a change listing {} of 800 hunks ({} omitted)", change.hunks.len(), change.omitted_hunks);
        }
    }
    assert_eq!(result["reason"], "completed", "{result}");
    let (status, content) = d.result("a1");
    assert_eq!(status, "tool_error");
    assert!(content.contains("too large") && content.contains("review panel") && content.contains("800 selected hunks"), "{content}");
    assert!(content.contains("at most") && content.contains("`hunks`"), "says how to apply it in parts: {content}");
    assert_eq!(d.source(), source, "nothing applied");
    assert_eq!(d.versions().len(), versions);
    assert_eq!(d.proposal(&id).status, ProposalStatus::Proposed);
    // The model was told, in its next request.
    assert!(d.server.chat_requests().last().unwrap().body.to_string().contains("too large to put to the person"));
    // The person reviews it and accepts it there.
    let revision = d.t.ok("project.get", json!({"projectId": d.project}))["revision"].as_u64().unwrap();
    d.t.ok("proposal.accept", json!({"proposalId": id, "expectedBase": revision}));
    assert_eq!(d.source(), rewrite);
    d.assert_replay_matches_live();
}

#[test]
fn a_prompt_lists_every_hunk_it_applies_with_the_count_size_and_hunk_set_hash() {
    // More hunks than their diffs fit one log line, few enough to list them all.
    let (source, rewrite) = many_paragraphs(150);
    let d = setup(&source);
    let id = model_proposes_large(&d, json!({"summary": "全部改写", "rewrite": rewrite}));
    let proposal = d.proposal(&id);
    assert_eq!(proposal.hunks.len(), 150);
    d.push(vec![calls(&[call("a1", "apply_proposal", json!({"proposalId": id}))]), Reply::text("已应用")]);
    let (result, events) = d.send("应用吧");
    assert_eq!(result["reason"], "blocked_on_approval", "{result}");
    let request = pending_request(&result);
    let (_, change, _) = approval_change(&events, &request);
    let change = change.unwrap();
    assert_eq!(change.omitted_hunks, 0);
    assert_eq!(change.hunks.iter().map(|h| h.id.as_str()).collect::<Vec<_>>(), proposal.hunks.iter().map(|h| h.id.as_str()).collect::<Vec<_>>(), "every hunk listed");
    assert!(change.hunks.iter().any(|h| h.display.is_none()), "this test needs diffs read from the proposal");
    assert_eq!(change.total_hunks, Some(150));
    let size: u64 = proposal.hunks.iter().map(|h| (h.old_text.len() + h.new_text.len()) as u64).sum();
    assert_eq!(change.total_bytes, Some(size));
    let hash = change.hunk_set_hash.clone().expect("bound to the hunk set");
    assert!(hash.starts_with("sha256:"));
    // The session view carries the same.
    assert_eq!(result["session"]["pendingApproval"]["change"]["hunkSetHash"], json!(hash));
    assert_eq!(result["session"]["pendingApproval"]["change"]["totalHunks"], json!(150));
    let (result, _) = d.approve(&request);
    assert_eq!(result["reason"], "completed");
    assert_eq!(d.result("a1").0, "success");
    assert_eq!(d.proposal(&id).accepted_hunks.len(), 150, "applies exactly what was listed");
    assert_eq!(d.source(), rewrite);
    d.assert_replay_matches_live();
}

#[test]
fn an_approval_of_a_change_that_moved_since_the_prompt_is_refused_as_stale() {
    let d = setup(POEM);
    let id = model_proposes(&d, "p1", two_edits());
    let h2 = d.proposal(&id).hunks[1].id.clone();
    d.push(vec![calls(&[call("a1", "apply_proposal", json!({"proposalId": id}))]), Reply::text("好的")]);
    let (result, events) = d.send("应用吧");
    let first = pending_request(&result);
    let shown = approval_change(&events, &first).1.unwrap().hunk_set_hash.unwrap();
    // The person rejects a hunk in the review panel while the prompt is open.
    reject(d.t.engine.kernel(), &Reject { proposal_id: id.clone(), hunks: Some(vec![h2]), reason: None }).unwrap();
    let (result, events) = d.approve(&first);
    let refused = events
        .iter()
        .find_map(|e| match &e.body {
            dto::EventBody::ApprovalResolved { request_id, approved, note_id, .. } if *request_id == first => Some((*approved, note_id.clone())),
            _ => None,
        })
        .expect("the decision is logged");
    assert_eq!(refused, (false, Some("stale_change".to_owned())), "refused as stale, not approved");
    assert_eq!(d.source(), POEM, "nothing applied");
    // The call asks again, with the change as it is now.
    assert_eq!(result["reason"], "blocked_on_approval");
    let second = pending_request(&result);
    assert_ne!(second, first);
    let now = approval_change(&events, &second).1.unwrap();
    assert_ne!(now.hunk_set_hash.as_deref(), Some(shown.as_str()));
    assert_eq!(now.total_hunks, Some(1));
    d.assert_replay_matches_live();
}

#[test]
fn an_approval_request_logged_before_the_hunk_set_hash_still_replays() {
    // A log line written before: 54 hunks listed, 746 omitted, no hash, count or size.
    let line = json!({
        "proposalId": "prp_old", "kind": "source_rewrite", "summary": "old", "target": {"type": "source"},
        "hunks": [{"id": "hk_1", "contentHash": "sha256:00"}], "omittedHunks": 746
    });
    let change: ApprovalChange = serde_json::from_value(line).unwrap();
    assert_eq!(change.omitted_hunks, 746);
    assert_eq!((change.hunk_set_hash, change.total_hunks, change.total_bytes), (None, None, None));
}
