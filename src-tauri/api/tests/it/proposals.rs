//! Proposals through the JSON API on real sled: accept of all hunks and of a subset, a
//! stale base (CONFLICT, nothing written), rebase that merges and rebase that
//! conflicts, supersede, drafts that refuse, candidates, rejection constraints, audit,
//! and a property test over interleavings of hand edits, proposals, accepts and
//! restores.

use inkstone_api::kernel::Kernel;
use inkstone_api::model::Version;
use inkstone_api::proposals::{self, apply_edits, Edit, EditError, NewProposal, Origin, Payload, Proposal, ProposalKind, Target};
use inkstone_api::store::keys;
use inkstone_api::ErrorCode;
use inkstone_test_support::TestEngine;
use proptest::prelude::*;
use serde_json::{json, Value};

fn err(t: &TestEngine, method: &str, params: Value) -> inkstone_api::ApiError {
    match t.engine.call(method, params) {
        Ok(value) => panic!("{method} succeeded: {value}"),
        Err(error) => error,
    }
}

const SOURCE: &str = "# 春天\n\n第一段：今天天气很好。\n\n第二段：我们去公园散步。\n\n第三段：晚上回家吃饭。\n\n第四段：明天继续。\n";

fn project(t: &TestEngine, source: &str) -> String {
    let created = t.ok("project.create", json!({"title": "春天", "source": source, "platforms": ["x", "xiaohongshu"]}));
    created["id"].as_str().unwrap().to_owned()
}

fn origin(session: &str) -> Origin {
    Origin { session_id: Some(session.to_owned()), model: "scripted".into(), profile_id: "llm_test".into(), prompt_version: proposals::PROMPT_VERSION.into(), ..Origin::default() }
}

fn source_proposal(kernel: &Kernel, project_id: &str, session: &str, edits: &[(&str, &str)]) -> Proposal {
    let project = inkstone_api::project::load(kernel.store(), project_id).unwrap();
    let edits: Vec<Edit> = edits.iter().map(|(f, r)| Edit { find: (*f).into(), replace: (*r).into() }).collect();
    let proposed = apply_edits(&project.source, &edits).unwrap();
    proposals::create(
        kernel,
        NewProposal {
            project_id: project_id.to_owned(),
            kind: ProposalKind::SourcePatch,
            target: Target::Source,
            summary: "润色".into(),
            payload: Payload::Text { base_text: project.source, proposed_text: proposed },
            origin: origin(session),
        },
    )
    .unwrap()
}

fn revision(t: &TestEngine, id: &str) -> u64 {
    t.ok("project.get", json!({"projectId": id}))["revision"].as_u64().unwrap()
}

fn versions(t: &TestEngine, id: &str) -> Vec<Value> {
    t.ok("version.list", json!({"projectId": id}))["versions"].as_array().unwrap().clone()
}

#[test]
fn anchored_edits_name_the_edit_that_cannot_be_placed() {
    let text = "甲乙丙\n甲乙\n";
    let edit = |f: &str, r: &str| Edit { find: f.into(), replace: r.into() };
    assert_eq!(apply_edits(text, &[edit("丙", "丁")]).unwrap(), "甲乙丁\n甲乙\n");
    assert_eq!(apply_edits(text, &[edit("丙", "丁"), edit("甲乙", "x")]), Err(EditError::Ambiguous { index: 2, count: 2 }));
    assert!(matches!(apply_edits(text, &[edit("戊", "x")]), Err(EditError::Missing { index: 1, .. })));
    assert_eq!(apply_edits(text, &[edit("乙丙", "x"), edit("甲乙丙", "y")]), Err(EditError::Overlap { first: 1, second: 2 }));
    assert_eq!(apply_edits(text, &[edit("", "x")]), Err(EditError::Empty { index: 1 }));
    let near = apply_edits("第一段 内容\n", &[edit("第一段内容", "x")]).unwrap_err();
    assert!(near.to_string().contains("different spacing"), "{near}");
}

#[test]
fn accepting_every_hunk_makes_one_version_with_the_proposal_as_origin() {
    let t = TestEngine::new();
    let id = project(&t, SOURCE);
    t.ok("version.create", json!({"projectId": id}));
    let kernel = t.engine.kernel();
    let proposal = source_proposal(kernel, &id, "ses_a", &[("天气很好", "天气不错"), ("明天继续", "明天再来")]);
    assert_eq!(proposal.hunks.len(), 2, "two separate line changes");
    assert!(proposal.hunks.iter().all(|h| h.id.starts_with("hk_") && h.content_hash.starts_with("sha256:")));
    // Hunk ids are stable: recomputing gives the same ids.
    let again = proposals::hunks(SOURCE, &SOURCE.replace("天气很好", "天气不错").replace("明天继续", "明天再来"));
    assert_eq!(again.iter().map(|h| &h.id).collect::<Vec<_>>(), proposal.hunks.iter().map(|h| &h.id).collect::<Vec<_>>());

    let view = t.ok("proposal.get", json!({"proposalId": proposal.id}));
    assert_eq!(view["stale"], false);
    assert_eq!(view["status"], "proposed");

    let syncs = kernel.store().durable_sync_count();
    let rev = revision(&t, &id);
    let accepted = t.ok("proposal.accept", json!({"proposalId": proposal.id, "expectedBase": rev}));
    assert_eq!(kernel.store().durable_sync_count(), syncs + 1, "one transaction");
    assert_eq!(accepted["proposal"]["status"], "accepted");
    assert_eq!(accepted["version"]["number"], 2);
    assert_eq!(accepted["version"]["origin"]["type"], "aiProposal");
    assert_eq!(accepted["version"]["origin"]["proposalId"], proposal.id.as_str());
    assert_eq!(accepted["version"]["origin"]["sessionId"], "ses_a");
    let project = t.ok("project.get", json!({"projectId": id}));
    assert_eq!(project["source"], SOURCE.replace("天气很好", "天气不错").replace("明天继续", "明天再来"));
    assert_eq!(project["revision"].as_u64().unwrap(), rev + 1);
    assert_eq!(project["head"], 2);

    let audit = t.ok("proposal.audit", json!({"projectId": id}));
    let record = &audit["records"][0];
    assert_eq!(record["action"], "accepted");
    assert_eq!(record["via"], "person");
    assert_eq!(record["hunks"].as_array().unwrap().len(), 2);
    assert_eq!(record["origin"]["model"], "scripted");
    assert_eq!(record["version"], 2);
    let activities = t.ok("activity.list", json!({"projectId": id}));
    assert!(activities["activities"].as_array().unwrap().iter().any(|a| a["kind"] == "proposal_accepted"));

    // Accepted once: a second accept is a CONFLICT.
    let again = err(&t, "proposal.accept", json!({"proposalId": proposal.id, "expectedBase": rev + 1}));
    assert_eq!(again.code, ErrorCode::Conflict);
}

#[test]
fn accepting_a_subset_takes_only_those_hunks() {
    let t = TestEngine::new();
    let id = project(&t, SOURCE);
    let kernel = t.engine.kernel();
    let proposal = source_proposal(kernel, &id, "ses_a", &[("天气很好", "天气不错"), ("公园", "湖边"), ("明天继续", "明天再来")]);
    assert_eq!(proposal.hunks.len(), 3);
    let second = proposal.hunks[1].id.clone();
    let accepted = t.ok("proposal.accept", json!({"proposalId": proposal.id, "hunks": [second], "expectedBase": revision(&t, &id)}));
    assert_eq!(accepted["proposal"]["status"], "partially_accepted");
    assert_eq!(accepted["proposal"]["acceptedHunks"], json!([second]));
    let source = t.ok("project.get", json!({"projectId": id}))["source"].as_str().unwrap().to_owned();
    assert_eq!(source, SOURCE.replace("公园", "湖边"));
    let audit = t.ok("proposal.audit", json!({"projectId": id}));
    assert_eq!(audit["records"][0]["action"], "partially_accepted");
    assert_eq!(audit["records"][0]["hunkHashes"], json!([proposal.hunks[1].content_hash]));

    // Unknown hunk ids are a VALIDATION error that writes nothing.
    let other = source_proposal(kernel, &id, "ses_b", &[("晚上", "傍晚")]);
    let before = versions(&t, &id).len();
    let bad = err(&t, "proposal.accept", json!({"proposalId": other.id, "hunks": ["hk_nope"], "expectedBase": revision(&t, &id)}));
    assert_eq!(bad.code, ErrorCode::Validation);
    assert_eq!(versions(&t, &id).len(), before);
}

#[test]
fn a_stale_base_is_a_conflict_with_both_sides_and_writes_nothing() {
    let t = TestEngine::new();
    let id = project(&t, SOURCE);
    let kernel = t.engine.kernel();
    let proposal = source_proposal(kernel, &id, "ses_a", &[("天气很好", "天气不错")]);
    // The person edits by hand after the proposal was made.
    let rev = revision(&t, &id);
    let edited = SOURCE.replace("晚上回家吃饭", "晚上回家做饭");
    t.ok("project.update", json!({"projectId": id, "baseRevision": rev, "source": edited}));
    let view = t.ok("proposal.get", json!({"proposalId": proposal.id}));
    assert_eq!(view["stale"], true);
    assert!(view["staleReason"].as_str().unwrap().contains("source changed"));

    let before_versions = versions(&t, &id);
    let before_project = t.ok("project.get", json!({"projectId": id}));
    let syncs = kernel.store().durable_sync_count();
    let conflict = err(&t, "proposal.accept", json!({"proposalId": proposal.id, "expectedBase": rev + 1}));
    assert_eq!(conflict.code, ErrorCode::Conflict);
    let details = conflict.details.clone().unwrap();
    assert_eq!(details["current"]["text"], edited.as_str());
    assert_eq!(details["base"]["revision"], rev);
    assert!(!details["changedSince"]["hunks"].as_array().unwrap().is_empty(), "what changed in between");
    assert!(conflict.hints.iter().any(|h| h.id == "rebase"));
    assert_eq!(kernel.store().durable_sync_count(), syncs, "nothing written");
    assert_eq!(versions(&t, &id), before_versions);
    assert_eq!(t.ok("project.get", json!({"projectId": id})), before_project);
    assert_eq!(t.ok("proposal.get", json!({"proposalId": proposal.id}))["status"], "proposed");

    // A fresh proposal with the wrong expectedBase (the person reviewed an older
    // revision) is a CONFLICT too.
    let fresh = source_proposal(kernel, &id, "ses_b", &[("公园", "湖边")]);
    let conflict = err(&t, "proposal.accept", json!({"proposalId": fresh.id, "expectedBase": rev}));
    assert_eq!(conflict.code, ErrorCode::Conflict);
}

#[test]
fn rebase_carries_hunks_that_do_not_touch_edits_made_since() {
    let t = TestEngine::new();
    let id = project(&t, SOURCE);
    let kernel = t.engine.kernel();
    let proposal = source_proposal(kernel, &id, "ses_a", &[("天气很好", "天气不错"), ("明天继续", "明天再来")]);
    // The person changes the third paragraph and inserts a line at the end.
    let rev = revision(&t, &id);
    let edited = SOURCE.replace("晚上回家吃饭", "晚上回家做饭");
    t.ok("project.update", json!({"projectId": id, "baseRevision": rev, "source": edited}));

    let rebased = t.ok("proposal.rebase", json!({"proposalId": proposal.id}));
    assert_eq!(rebased["previous"]["status"], "superseded");
    assert_eq!(rebased["conflicts"], json!([]));
    let new_id = rebased["proposal"]["id"].as_str().unwrap().to_owned();
    assert_eq!(rebased["previous"]["supersededBy"], new_id.as_str());
    assert_eq!(rebased["proposal"]["origin"]["rebasedFrom"], proposal.id.as_str());
    assert_eq!(t.ok("proposal.get", json!({"proposalId": new_id}))["stale"], false);
    t.ok("proposal.accept", json!({"proposalId": new_id, "expectedBase": rev + 1}));
    let source = t.ok("project.get", json!({"projectId": id}))["source"].as_str().unwrap().to_owned();
    assert_eq!(source, edited.replace("天气很好", "天气不错").replace("明天继续", "明天再来"), "both sides kept");
}

#[test]
fn rebase_reports_overlapping_hunks_and_never_guesses() {
    let t = TestEngine::new();
    let id = project(&t, SOURCE);
    let kernel = t.engine.kernel();
    let proposal = source_proposal(kernel, &id, "ses_a", &[("天气很好", "天气不错"), ("明天继续", "明天再来")]);
    let rev = revision(&t, &id);
    // The person rewrote the first paragraph's line the proposal also changes.
    let edited = SOURCE.replace("今天天气很好", "今天下雨了");
    t.ok("project.update", json!({"projectId": id, "baseRevision": rev, "source": edited}));
    let rebased = t.ok("proposal.rebase", json!({"proposalId": proposal.id}));
    let conflicts = rebased["conflicts"].as_array().unwrap();
    assert_eq!(conflicts.len(), 1);
    assert_eq!(conflicts[0]["hunkId"], proposal.hunks[0].id.as_str());
    assert!(conflicts[0]["theirText"].as_str().unwrap().contains("今天下雨了"));
    let new_id = rebased["proposal"]["id"].as_str().unwrap();
    let view = t.ok("proposal.get", json!({"proposalId": new_id}));
    assert_eq!(view["hunks"].as_array().unwrap().len(), 1, "only the hunk that did not overlap");
    assert!(view["payload"]["proposedText"].as_str().unwrap().contains("今天下雨了"), "the person's edit is kept");

    // When every hunk overlaps, nothing is written and the CONFLICT lists them.
    let only = source_proposal(kernel, &id, "ses_b", &[("公园", "湖边")]);
    let rev = revision(&t, &id);
    t.ok("project.update", json!({"projectId": id, "baseRevision": rev, "source": edited.replace("我们去公园散步", "我们在家")}));
    let count = t.ok("proposal.list", json!({"projectId": id}))["proposals"].as_array().unwrap().len();
    let conflict = err(&t, "proposal.rebase", json!({"proposalId": only.id}));
    assert_eq!(conflict.code, ErrorCode::Conflict);
    assert_eq!(conflict.details.unwrap()["conflicts"].as_array().unwrap().len(), 1);
    assert_eq!(t.ok("proposal.list", json!({"projectId": id}))["proposals"].as_array().unwrap().len(), count);
    assert_eq!(t.ok("proposal.get", json!({"proposalId": only.id}))["status"], "proposed");
}

#[test]
fn a_newer_proposal_for_the_same_target_in_the_same_session_supersedes_the_older() {
    let t = TestEngine::new();
    let id = project(&t, SOURCE);
    let kernel = t.engine.kernel();
    let first = source_proposal(kernel, &id, "ses_a", &[("天气很好", "天气不错")]);
    let other_session = source_proposal(kernel, &id, "ses_b", &[("公园", "湖边")]);
    let second = source_proposal(kernel, &id, "ses_a", &[("天气很好", "阳光明媚")]);
    let first = t.ok("proposal.get", json!({"proposalId": first.id}));
    assert_eq!(first["status"], "superseded");
    assert_eq!(first["supersededBy"], second.id.as_str());
    assert_eq!(first["supersededReason"], "overlapped", "the same words rewritten again: the newer edit replaces the older");
    assert!(second.carries.is_empty());
    assert_eq!(t.ok("proposal.get", json!({"proposalId": other_session.id}))["status"], "proposed", "another session's proposal stays");
    let listed = t.ok("proposal.list", json!({"projectId": id, "status": "proposed"}));
    assert_eq!(listed["proposals"].as_array().unwrap().len(), 2);
    let conflict = err(&t, "proposal.accept", json!({"proposalId": first["id"], "expectedBase": revision(&t, &id)}));
    assert_eq!(conflict.code, ErrorCode::Conflict);
    let newer = conflict.hints.iter().find(|h| h.id == "open_newer").expect("the hint to open the newer proposal");
    assert_eq!(newer.params.get("newer").map(String::as_str), Some(second.id.as_str()), "the UI can name the newer proposal in any language");
}

#[test]
fn a_second_edit_of_another_paragraph_on_the_same_base_carries_the_first() {
    let t = TestEngine::new();
    let id = project(&t, SOURCE);
    let kernel = t.engine.kernel();
    let opening = source_proposal(kernel, &id, "ses_a", &[("第一段：今天天气很好。", "第一段：今天阳光灿烂，正适合出门！")]);
    let ending = source_proposal(kernel, &id, "ses_a", &[("第四段：明天继续。", "第四段：明天继续，你也来吧！")]);
    // The opening's edit is not lost: the newer proposal carries it, and the older one
    // names the proposal that carries it and why.
    let first = t.ok("proposal.get", json!({"proposalId": opening.id}));
    assert_eq!(first["status"], "superseded");
    assert_eq!(first["supersededBy"], ending.id.as_str());
    assert_eq!(first["supersededReason"], "merged");
    assert_eq!(ending.hunks.len(), 2, "both edits, each a hunk: {:?}", ending.hunks);
    assert_eq!(ending.carries.len(), 1);
    assert_eq!(ending.carries[0].proposal_id, opening.id);
    assert_eq!(ending.carries[0].summary, "润色");
    assert_eq!(ending.carries[0].hunk_ids, vec![opening.hunks[0].id.clone()], "the opening's hunk keeps its id");
    assert_eq!(ending.summary, "润色; 润色");
    let Payload::Text { proposed_text, .. } = &ending.payload else { panic!("a text proposal") };
    assert!(proposed_text.contains("阳光灿烂") && proposed_text.contains("你也来吧"));
    let listed = t.ok("proposal.list", json!({"projectId": id, "status": "proposed"}));
    assert_eq!(listed["proposals"].as_array().unwrap().len(), 1, "one proposal to review, with both edits");
    // Per-hunk review keeps them separate: accept the opening, leave the ending.
    let accepted = t.ok("proposal.accept", json!({"proposalId": ending.id, "hunks": [opening.hunks[0].id], "expectedBase": revision(&t, &id)}));
    let source = t.ok("project.get", json!({"projectId": id}))["source"].as_str().unwrap().to_owned();
    assert!(source.contains("阳光灿烂") && !source.contains("你也来吧"), "{accepted}");
    // A third edit that touches a carried one replaces that edit, carries the other,
    // and the superseded proposal says why.
    let t2 = TestEngine::new();
    let id2 = project(&t2, SOURCE);
    let kernel2 = t2.engine.kernel();
    let a = source_proposal(kernel2, &id2, "ses_a", &[("第一段：今天天气很好。", "第一段：阳光灿烂。")]);
    let b = source_proposal(kernel2, &id2, "ses_a", &[("第四段：明天继续。", "第四段：明天见。")]);
    let c = source_proposal(kernel2, &id2, "ses_a", &[("第一段：今天天气很好。", "第一段：晴。")]);
    let b_now = t2.ok("proposal.get", json!({"proposalId": b.id}));
    assert_eq!((b_now["supersededBy"].as_str(), b_now["supersededReason"].as_str()), (Some(c.id.as_str()), Some("overlapped")));
    assert_eq!(t2.ok("proposal.get", json!({"proposalId": a.id}))["supersededReason"], "merged");
    assert_eq!(c.hunks.len(), 2);
    assert_eq!(c.carries.len(), 1, "only the ending is carried: the opening was rewritten again");
    let ending_hunk = b.hunks.iter().find(|h| !b.carries[0].hunk_ids.contains(&h.id)).unwrap();
    assert_eq!((c.carries[0].proposal_id.as_str(), &c.carries[0].hunk_ids), (b.id.as_str(), &vec![ending_hunk.id.clone()]));
    let Payload::Text { proposed_text, .. } = &c.payload else { panic!("a text proposal") };
    assert!(proposed_text.contains("第一段：晴。") && proposed_text.contains("明天见") && !proposed_text.contains("阳光灿烂"));
}

#[test]
fn a_proposal_reports_the_findings_it_introduces() {
    let t = TestEngine::new();
    let id = project(&t, SOURCE);
    let proposal = source_proposal(t.engine.kernel(), &id, "ses_a", &[("天气很好", "天气是最佳的")]);
    assert!(proposal.new_findings.iter().any(|f| f.matched.as_deref() == Some("最佳")), "{:?}", proposal.new_findings);
    assert!(proposal.findings.len() >= proposal.new_findings.len());
}

fn draft_proposal(kernel: &Kernel, project_id: &str, platform: &str, find: &str, replace: &str) -> Result<Proposal, inkstone_api::ApiError> {
    let platform: inkstone_api::model::Platform = serde_json::from_value(json!(platform)).unwrap();
    let draft = inkstone_api::project::drafts::require(kernel.store(), project_id, platform)?;
    let base = proposals::draft_patch_text(&draft.content);
    let proposed = apply_edits(&base, &[Edit { find: find.into(), replace: replace.into() }]).unwrap();
    proposals::create(
        kernel,
        NewProposal {
            project_id: project_id.to_owned(),
            kind: ProposalKind::DraftPatch,
            target: Target::Draft { platform },
            summary: "改草稿".into(),
            payload: Payload::Text { base_text: base, proposed_text: proposed },
            origin: origin("ses_a"),
        },
    )
}

#[test]
fn draft_proposals_respect_the_drafts_status() {
    let t = TestEngine::new();
    let id = project(&t, SOURCE);
    let kernel = t.engine.kernel();
    let saved = t.ok("platformDraft.save", json!({"projectId": id, "platform": "xiaohongshu"}));
    let revision = saved["draft"]["revision"].as_u64().unwrap();
    let proposal = draft_proposal(kernel, &id, "xiaohongshu", "公园", "湖边").unwrap();
    assert_eq!(proposal.base.draft_revision, Some(revision as u32));

    // Ready: the person must confirm.
    // A status change is not a text change: the proposal stays fresh.
    let ready = t.ok("platformDraft.setStatus", json!({"projectId": id, "platform": "xiaohongshu", "status": "ready"}));
    let revision = ready["revision"].as_u64().unwrap();
    assert_eq!(t.ok("proposal.get", json!({"proposalId": proposal.id}))["stale"], false);
    let refused = err(&t, "proposal.accept", json!({"proposalId": proposal.id, "expectedBase": revision}));
    assert_eq!(refused.code, ErrorCode::ReadOnly);
    assert!(refused.hints.iter().any(|h| h.id == "confirm_final"));
    let accepted = t.ok("proposal.accept", json!({"proposalId": proposal.id, "expectedBase": revision, "confirmFinal": true}));
    assert!(accepted["draft"]["content"]["body"].as_str().unwrap().contains("湖边"));
    assert_eq!(accepted["draft"]["revision"].as_u64().unwrap(), revision + 1);
    let revision = revision + 1;

    // Publishing: never, confirmed or not; and no new proposal over it.
    let proposal = draft_proposal(kernel, &id, "xiaohongshu", "湖边", "海边").unwrap();
    t.ok("platformDraft.setStatus", json!({"projectId": id, "platform": "xiaohongshu", "status": "publishing"}));
    let publishing = t.ok("platformDraft.get", json!({"projectId": id, "platform": "xiaohongshu"}))["revision"].as_u64().unwrap();
    assert!(publishing >= revision);
    let refused = err(&t, "proposal.accept", json!({"proposalId": proposal.id, "expectedBase": publishing, "confirmFinal": true}));
    assert_eq!(refused.code, ErrorCode::ReadOnly);
    assert_eq!(draft_proposal(kernel, &id, "xiaohongshu", "湖边", "山边").unwrap_err().code, ErrorCode::ReadOnly);
    let draft = t.ok("platformDraft.get", json!({"projectId": id, "platform": "xiaohongshu"}));
    assert!(draft["content"]["body"].as_str().unwrap().contains("湖边"), "unchanged");

    // The model can never change a final draft, even with the person's approval of the call.
    t.ok("platformDraft.setStatus", json!({"projectId": id, "platform": "xiaohongshu", "status": "ready"}));
    let draft = t.ok("platformDraft.get", json!({"projectId": id, "platform": "xiaohongshu"}));
    let rev = draft["revision"].as_u64().unwrap();
    let proposal = draft_proposal(kernel, &id, "xiaohongshu", "湖边", "河边").unwrap();
    let by_model = proposals::apply::accept(
        kernel,
        &proposals::apply::Accept {
            proposal_id: proposal.id.clone(),
            hunks: None,
            expected_base: rev,
            choices: None,
            confirm_final: true,
            actor: proposals::apply::Actor::Model { tool_use_id: "call_1".into(), approval: Some("apr_1".into()) },
        },
    )
    .unwrap_err();
    assert_eq!(by_model.code, ErrorCode::ReadOnly);
}

#[test]
fn title_tag_metadata_and_reply_proposals_apply_what_the_person_chose() {
    let t = TestEngine::new();
    let id = project(&t, SOURCE);
    let kernel = t.engine.kernel();
    let candidates = |texts: &[&str]| Payload::Candidates { candidates: texts.iter().map(|x| proposals::Candidate { text: (*x).into(), rationale: String::new() }).collect() };
    let make =
        |kind, target, payload| proposals::create(kernel, NewProposal { project_id: id.clone(), kind, target, summary: "候选".into(), payload, origin: origin("ses_a") }).unwrap();

    let titles = make(ProposalKind::TitleCandidates, Target::Source, candidates(&["春日散步", "公园一日"]));
    let missing = err(&t, "proposal.accept", json!({"proposalId": titles.id, "expectedBase": revision(&t, &id)}));
    assert_eq!(missing.code, ErrorCode::Validation);
    let wrong = err(&t, "proposal.accept", json!({"proposalId": titles.id, "expectedBase": revision(&t, &id), "choices": ["别的"]}));
    assert_eq!(wrong.code, ErrorCode::Validation);
    let accepted = t.ok("proposal.accept", json!({"proposalId": titles.id, "expectedBase": revision(&t, &id), "choices": ["公园一日"]}));
    assert_eq!(accepted["version"]["title"], "公园一日");
    assert_eq!(t.ok("project.get", json!({"projectId": id}))["title"], "公园一日");

    t.ok("platformDraft.save", json!({"projectId": id, "platform": "xiaohongshu"}));
    let rev = t.ok("platformDraft.get", json!({"projectId": id, "platform": "xiaohongshu"}))["revision"].as_u64().unwrap();
    let tags = make(ProposalKind::TagCandidates, Target::Draft { platform: inkstone_api::model::Platform::Xiaohongshu }, candidates(&["春天", "散步", "生活"]));
    let accepted = t.ok("proposal.accept", json!({"proposalId": tags.id, "expectedBase": rev, "choices": ["散步", "春天"]}));
    assert_eq!(accepted["draft"]["content"]["tags"], json!(["散步", "春天"]));

    let meta = make(
        ProposalKind::Metadata,
        Target::Metadata,
        Payload::Metadata { change: proposals::MetadataChange { platforms: Some(vec![inkstone_api::model::Platform::Zhihu]), ..Default::default() } },
    );
    t.ok("proposal.accept", json!({"proposalId": meta.id, "expectedBase": revision(&t, &id)}));
    assert_eq!(t.ok("project.get", json!({"projectId": id}))["platforms"], json!(["zhihu"]));

    let comment = t.ok("comment.add", json!({"projectId": id, "body": "这里写得太平了"}));
    let comment_id = comment["id"].as_str().unwrap().to_owned();
    let reply = make(
        ProposalKind::CommentReply,
        Target::Comment { comment_id: comment_id.clone() },
        Payload::CommentReply { comment_id: comment_id.clone(), body: "已改为更具体的描写。".into() },
    );
    let accepted = t.ok("proposal.accept", json!({"proposalId": reply.id, "expectedBase": revision(&t, &id)}));
    assert_eq!(accepted["comment"]["replyTo"], comment_id.as_str());
    assert_eq!(accepted["comment"]["body"], "已改为更具体的描写。");
}

#[test]
fn a_rejection_reason_becomes_a_constraint_of_the_session() {
    let t = TestEngine::new();
    let id = project(&t, SOURCE);
    let kernel = t.engine.kernel();
    let proposal = source_proposal(kernel, &id, "ses_a", &[("天气很好", "天气难道不好吗？"), ("明天继续", "明天再来")]);
    // Reject one hunk with a reason: the proposal stays open for the other.
    let rejected = t.ok("proposal.reject", json!({"proposalId": proposal.id, "hunks": [proposal.hunks[0].id], "reason": "不要在开头用反问句"}));
    assert_eq!(rejected["proposal"]["status"], "proposed");
    assert_eq!(rejected["constraint"]["text"], "不要在开头用反问句");
    assert_eq!(rejected["constraint"]["ownerId"], "ses_a");
    let constraints = proposals::apply::constraints(kernel.store(), "ses_a").unwrap();
    assert_eq!(constraints.len(), 1);
    // The rejected hunk cannot be accepted; accepting the rest takes only the other.
    let refused = err(&t, "proposal.accept", json!({"proposalId": proposal.id, "hunks": [proposal.hunks[0].id], "expectedBase": revision(&t, &id)}));
    assert_eq!(refused.code, ErrorCode::Validation);
    let accepted = t.ok("proposal.accept", json!({"proposalId": proposal.id, "expectedBase": revision(&t, &id)}));
    assert_eq!(accepted["proposal"]["status"], "partially_accepted");
    assert_eq!(t.ok("project.get", json!({"projectId": id}))["source"], SOURCE.replace("明天继续", "明天再来"));

    // Rejecting a whole proposal without a reason adds no constraint.
    let other = source_proposal(kernel, &id, "ses_a", &[("公园", "湖边")]);
    let rejected = t.ok("proposal.reject", json!({"proposalId": other.id}));
    assert_eq!(rejected["proposal"]["status"], "rejected");
    assert!(rejected.get("constraint").is_none());
    assert_eq!(proposals::apply::constraints(kernel.store(), "ses_a").unwrap().len(), 1);
    let audit = t.ok("proposal.audit", json!({"projectId": id}));
    let actions: Vec<&str> = audit["records"].as_array().unwrap().iter().map(|r| r["action"].as_str().unwrap()).collect();
    assert_eq!(actions, ["hunks_rejected", "partially_accepted", "rejected"]);
}

#[test]
fn bad_input_is_a_clear_error_that_changes_nothing() {
    let t = TestEngine::new();
    let id = project(&t, SOURCE);
    assert_eq!(err(&t, "proposal.get", json!({"proposalId": "prp_nope"})).code, ErrorCode::NotFound);
    assert_eq!(err(&t, "proposal.accept", json!({"proposalId": "prp_nope", "expectedBase": 1})).code, ErrorCode::NotFound);
    assert_eq!(err(&t, "proposal.accept", json!({"proposalId": "x"})).code, ErrorCode::Validation, "expectedBase is required");
    assert_eq!(err(&t, "proposal.list", json!({"projectId": "prj_nope"})).code, ErrorCode::NotFound);
    let proposal = source_proposal(t.engine.kernel(), &id, "ses_a", &[("公园", "湖边")]);
    let long = "长".repeat(3000);
    assert_eq!(err(&t, "proposal.reject", json!({"proposalId": proposal.id, "reason": long})).code, ErrorCode::Validation);
    assert_eq!(t.ok("proposal.get", json!({"proposalId": proposal.id}))["status"], "proposed");
    // A proposal that changes nothing is refused.
    let project = inkstone_api::project::load(t.engine.store(), &id).unwrap();
    let same = proposals::create(
        t.engine.kernel(),
        NewProposal {
            project_id: id.clone(),
            kind: ProposalKind::SourcePatch,
            target: Target::Source,
            summary: "无".into(),
            payload: Payload::Text { base_text: project.source.clone(), proposed_text: project.source },
            origin: origin("ses_a"),
        },
    );
    assert_eq!(same.unwrap_err().code, ErrorCode::Validation);
}

/// One step of an interleaving.
#[derive(Debug, Clone)]
enum Step {
    /// The person edits paragraph `n` by hand.
    HandEdit(usize),
    /// The model proposes a change to paragraphs (a bitmask over four).
    Propose(u8),
    /// The person accepts the latest open proposal (all hunks, or the first only).
    Accept { first_only: bool, latest: bool },
    /// The person restores version `n` (modulo the head).
    Restore(u32),
    /// The person rebases the oldest open stale proposal.
    Rebase,
    /// The person makes a checkpoint of the session.
    Checkpoint,
    /// The person restores checkpoint `n` (modulo the count).
    RestoreCheckpoint(usize),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (0usize..4).prop_map(Step::HandEdit),
        (1u8..16).prop_map(Step::Propose),
        (any::<bool>(), any::<bool>()).prop_map(|(first_only, latest)| Step::Accept { first_only, latest }),
        (1u32..6).prop_map(Step::Restore),
        Just(Step::Rebase),
        Just(Step::Checkpoint),
        (0usize..4).prop_map(Step::RestoreCheckpoint),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
    /// Whatever the order of hand edits, proposals, accepts, rebases, version restores
    /// and checkpoint restores:
    /// existing versions never change and are numbered without gaps; every accept
    /// that succeeds made a version whose source is exactly its base with the accepted
    /// hunks, and its base was the working copy at that moment (nothing newer was
    /// overwritten); every accept that fails writes nothing.
    #[test]
    fn interleavings_never_lose_an_accepted_hunk_or_overwrite_a_newer_version(steps in proptest::collection::vec(step(), 1..14)) {
        let t = TestEngine::new();
        let source = "第一段：甲。\n\n第二段：乙。\n\n第三段：丙。\n\n第四段：丁。\n";
        let id = project(&t, source);
        t.ok("version.create", json!({"projectId": id}));
        // A session for checkpoints (its model is never called).
        t.ok("llmProfile.create", json!({"name": "unused", "baseUrl": "http://127.0.0.1:9", "model": "m"}));
        let session = t.ok("session.create", json!({"projectId": id}))["session"]["id"].as_str().unwrap().to_owned();
        let mut checkpoints: Vec<String> = Vec::new();
        let kernel = t.engine.kernel();
        let mut seen: Vec<Version> = Vec::new();
        let mut open: Vec<Proposal> = Vec::new();
        let mut counter = 0;
        let marks = ["甲", "乙", "丙", "丁"];
        for step in steps {
            counter += 1;
            let before = inkstone_api::project::load(kernel.store(), &id).unwrap();
            match step {
                Step::HandEdit(n) => {
                    let lines: Vec<&str> = before.source.split_inclusive('\n').collect();
                    let line = n * 2;
                    if line < lines.len() {
                        let mut next: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
                        next[line] = next[line].replace('\n', &format!("手{counter}\n"));
                        t.ok("project.update", json!({"projectId": id, "baseRevision": before.revision, "source": next.concat()}));
                    }
                }
                Step::Propose(mask) => {
                    let edits: Vec<Edit> = (0..4).filter(|i| mask & (1 << i) != 0).filter(|i| before.source.matches(marks[*i]).count() == 1)
                        .map(|i| Edit { find: marks[i].to_owned(), replace: format!("{}{}", marks[i], counter) }).collect();
                    if edits.is_empty() { continue; }
                    let proposed = apply_edits(&before.source, &edits).unwrap();
                    let p = proposals::create(kernel, NewProposal {
                        project_id: id.clone(), kind: ProposalKind::SourcePatch, target: Target::Source, summary: "改".into(),
                        payload: Payload::Text { base_text: before.source.clone(), proposed_text: proposed }, origin: origin(&format!("ses_{counter}")),
                    }).unwrap();
                    open.push(p);
                }
                Step::Accept { first_only, latest } => {
                    if open.is_empty() { continue; }
                    let p = if latest { open.pop().unwrap() } else { open.remove(0) };
                    let hunks = first_only.then(|| vec![p.hunks[0].id.clone()]);
                    let versions_before = inkstone_api::project::versions::list(kernel.store(), &id).unwrap();
                    let result = t.engine.call("proposal.accept", json!({"proposalId": p.id, "hunks": hunks, "expectedBase": before.revision}));
                    let Payload::Text { base_text, .. } = &p.payload else { unreachable!() };
                    match result {
                        Ok(accepted) => {
                            prop_assert_eq!(base_text, &before.source, "an accept only succeeds on the text it was based on");
                            let taken: Vec<&proposals::ProposalHunk> = match &hunks { Some(_) => vec![&p.hunks[0]], None => p.hunks.iter().collect() };
                            let splices: Vec<_> = taken.iter().map(|h| h.splice()).collect();
                            let expected = inkstone_api::diff::apply_changes(base_text, &splices).unwrap();
                            let number = accepted["version"]["number"].as_u64().unwrap() as u32;
                            let version = kernel.store().get::<Version>(&keys::version(&id, number)).unwrap().unwrap();
                            prop_assert_eq!(&version.source, &expected);
                            for h in &taken { prop_assert!(version.source.contains(h.new_text.as_str())); }
                        }
                        Err(_) => {
                            let after = inkstone_api::project::load(kernel.store(), &id).unwrap();
                            prop_assert_eq!(after, before.clone(), "a failed accept writes nothing");
                            prop_assert_eq!(inkstone_api::project::versions::list(kernel.store(), &id).unwrap(), versions_before);
                        }
                    }
                }
                Step::Restore(n) => {
                    let number = 1 + (n - 1) % before.head.max(1);
                    t.ok("version.restore", json!({"projectId": id, "number": number}));
                }
                Step::Checkpoint => {
                    let made = t.ok("checkpoint.create", json!({"sessionId": session, "label": format!("c{counter}")}));
                    checkpoints.push(made["id"].as_str().unwrap().to_owned());
                }
                Step::RestoreCheckpoint(n) => {
                    if checkpoints.is_empty() { continue; }
                    let chosen = &checkpoints[n % checkpoints.len()];
                    let restored = t.ok("checkpoint.restore", json!({"sessionId": session, "checkpointId": chosen}));
                    prop_assert!(restored["version"]["number"].as_u64().unwrap() as u32 > before.head, "a restore makes a new version");
                }
                Step::Rebase => {
                    let stale = open.iter().position(|p| proposals::staleness(kernel.store(), p).unwrap().stale);
                    if let Some(index) = stale {
                        let p = open.remove(index);
                        if let Ok(rebased) = t.engine.call("proposal.rebase", json!({"proposalId": p.id})) {
                            open.push(proposals::load(kernel.store(), rebased["proposal"]["id"].as_str().unwrap()).unwrap());
                        }
                    }
                }
            }
            let all = inkstone_api::project::versions::list(kernel.store(), &id).unwrap();
            for (i, v) in all.iter().enumerate() {
                prop_assert_eq!(v.number as usize, i + 1, "numbered without gaps");
            }
            for old in &seen {
                prop_assert_eq!(Some(old), all.get(old.number as usize - 1), "a version never changes");
            }
            seen = all;
        }
    }
}
