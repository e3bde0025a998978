//! A session's working copy through the API on real sled: staged proposals compose,
//! nothing official changes until the staged set is applied as one version, a moved
//! baseline is a CONFLICT that writes nothing, discard, and the constraints a
//! rejection leaves.

use inkstone_api::proposals::{self, apply, NewProposal, Origin, Payload, Proposal, ProposalKind, ProposalStatus, Target};
use inkstone_api::ErrorCode;
use inkstone_test_support::TestEngine;
use serde_json::{json, Value};

pub const SOURCE: &str = "# 春天\n\n第一段：早起的人。\n\n第二段：路上的花。\n\n第三段：傍晚的风。\n";

/// An engine with a project and a drafting session on it (no model is called).
pub struct Fx {
    pub t: TestEngine,
    pub project: String,
    pub session: String,
}

pub fn fixture(source: &str, platforms: Value) -> Fx {
    fixture_at("http://127.0.0.1:9/v1", source, platforms)
}

/// [`fixture`] with the session's model at `base_url`.
pub fn fixture_at(base_url: &str, source: &str, platforms: Value) -> Fx {
    let t = TestEngine::new();
    t.ok("llmProfile.create", json!({"name": "fake", "baseUrl": base_url, "model": "fake-model"}));
    let project = t.ok("project.create", json!({"title": "春天", "source": source, "platforms": platforms}))["id"].as_str().unwrap().to_owned();
    let session = t.ok("session.create", json!({"projectId": project}))["session"]["id"].as_str().unwrap().to_owned();
    Fx { t, project, session }
}

impl Fx {
    pub fn call(&self, method: &str, params: Value) -> Value {
        self.t.ok(method, params)
    }

    pub fn err(&self, method: &str, params: Value) -> inkstone_api::ApiError {
        self.t.engine.call(method, params).expect_err("the call should fail")
    }

    pub fn project(&self) -> Value {
        self.call("project.get", json!({"projectId": self.project}))
    }

    pub fn revision(&self) -> u64 {
        self.project()["revision"].as_u64().unwrap()
    }

    /// A source proposal of the session over `base`.
    pub fn propose_in(&self, session: &str, base: &str, proposed: &str, summary: &str) -> Proposal {
        proposals::create(
            self.t.engine.kernel(),
            NewProposal {
                project_id: self.project.clone(),
                kind: ProposalKind::SourcePatch,
                target: Target::Source,
                summary: summary.to_owned(),
                payload: Payload::Text { base_text: base.to_owned(), proposed_text: proposed.to_owned() },
                origin: Origin {
                    session_id: Some(session.to_owned()),
                    model: "fake-model".to_owned(),
                    profile_id: "llm_fake".to_owned(),
                    prompt_version: proposals::PROMPT_VERSION.to_owned(),
                    ..Origin::default()
                },
            },
        )
        .unwrap()
    }

    pub fn propose(&self, base: &str, proposed: &str, summary: &str) -> Proposal {
        self.propose_in(&self.session, base, proposed, summary)
    }

    pub fn proposal(&self, id: &str) -> Proposal {
        proposals::load(self.t.engine.store(), id).unwrap()
    }

    pub fn stage(&self, proposal: &str) -> Value {
        self.call("session.stage", json!({"sessionId": self.session, "proposalId": proposal}))
    }

    pub fn staging(&self) -> Value {
        self.call("session.staging", json!({"sessionId": self.session}))
    }

    /// Every official record a staging call must not touch, plus the staged set and
    /// the proposals, as JSON.
    pub fn everything(&self) -> Value {
        let versions: Vec<Value> = self.call("version.list", json!({"projectId": self.project}))["versions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| self.call("version.get", json!({"projectId": self.project, "number": v["number"]})))
            .collect();
        let store = self.t.engine.store();
        json!({
            "project": self.project(),
            "versions": versions,
            "drafts": self.call("platformDraft.list", json!({"projectId": self.project})),
            "activity": self.call("activity.list", json!({"projectId": self.project, "limit": 1000})),
            "staging": self.staging(),
            "proposals": proposals::list(store, &self.project).unwrap(),
            "audit": apply::audit(store, &self.project).unwrap(),
            "checkpoints": self.call("checkpoint.list", json!({"sessionId": self.session})),
            "events": self.call("session.events", json!({"sessionId": self.session})),
        })
    }
}

fn version_count(fx: &Fx) -> usize {
    fx.call("version.list", json!({"projectId": fx.project}))["versions"].as_array().unwrap().len()
}

#[test]
fn two_staged_proposals_compose_and_apply_as_exactly_one_version() {
    let fx = fixture(SOURCE, json!([]));
    fx.call("version.create", json!({"projectId": fx.project, "message": "first"}));
    let revision = fx.revision();
    let first_text = SOURCE.replace("早起的人", "早起的人和鸟");
    let p1 = fx.propose(SOURCE, &first_text, "Add the birds");
    assert_eq!(fx.stage(&p1.id)["effectiveSource"], json!(first_text));
    // Nothing official changed.
    assert_eq!(fx.project()["source"], SOURCE);
    assert_eq!(fx.revision(), revision);
    assert_eq!(version_count(&fx), 1);

    // The second proposal is written over the effective text (as the read tools see it).
    let effective = proposals::staging::effective_source(fx.t.engine.store(), &fx.session, &serde_json::from_value(fx.project()).unwrap()).unwrap();
    assert_eq!(effective, first_text);
    let both_text = first_text.replace("傍晚的风", "傍晚的风，很轻");
    let p2 = fx.propose(&effective, &both_text, "Soften the evening");
    assert_eq!(fx.proposal(&p1.id).status, ProposalStatus::Proposed, "a staged proposal is not superseded by one written on top of it");
    let staleness = proposals::staleness(fx.t.engine.store(), &fx.proposal(&p2.id)).unwrap();
    assert!(!staleness.stale && staleness.based_on_staged, "{staleness:?}");
    assert!(proposals::view(fx.t.engine.store(), fx.proposal(&p2.id)).unwrap().based_on_staged);

    // Accepting it on its own would drop the staged change under it: refused.
    let before = fx.everything();
    let request = apply::Accept { proposal_id: p2.id.clone(), hunks: None, expected_base: revision, choices: None, confirm_final: false, actor: apply::Actor::Person };
    let error = apply::accept(fx.t.engine.kernel(), &request).unwrap_err();
    assert_eq!(error.code, ErrorCode::Conflict);
    assert_eq!(error.details.as_ref().unwrap()["basedOnStaged"], true);
    assert_eq!(error.hints.iter().map(|h| h.id.as_str()).collect::<Vec<_>>(), vec!["stage_it", "apply_staged"]);
    assert_eq!(fx.everything(), before, "a refused accept writes nothing");

    let staged = fx.stage(&p2.id);
    assert_eq!(staged["effectiveSource"], json!(both_text));
    assert_eq!(staged["baseSource"], SOURCE);
    assert_eq!(staged["baselineMoved"], false);
    assert_eq!(staged["staging"]["baseRevision"], revision);
    let ids: Vec<&str> = staged["staging"]["entries"].as_array().unwrap().iter().map(|e| e["proposalId"].as_str().unwrap()).collect();
    assert_eq!(ids, vec![p1.id.as_str(), p2.id.as_str()]);
    assert_eq!(staged["proposals"].as_array().unwrap().len(), 2);
    let hunks = staged["diff"]["hunks"].as_array().unwrap();
    let changed: String = hunks
        .iter()
        .flat_map(|h| h["lines"].as_array().unwrap().iter())
        .filter(|l| l["kind"] == "insert")
        .flat_map(|l| l["segments"].as_array().unwrap().iter())
        .filter(|seg| seg["emphasized"] == true)
        .map(|seg| seg["text"].as_str().unwrap())
        .collect();
    assert_eq!(changed, "和鸟，很轻", "the diff runs from the baseline to the effective source: {}", staged["diff"]);
    assert_eq!((staged["diff"]["nInsertions"].as_u64(), staged["diff"]["nDeletions"].as_u64()), (Some(2), Some(2)));
    assert_eq!(fx.staging(), staged);
    assert_eq!(fx.project()["source"], SOURCE, "still nothing official");
    assert_eq!(version_count(&fx), 1);

    let activity_before = fx.call("activity.list", json!({"projectId": fx.project, "limit": 1000}))["activities"].as_array().unwrap().len();
    let applied = fx.call("session.applyStaging", json!({"sessionId": fx.session, "expectedRevision": revision}));
    assert_eq!(version_count(&fx), 2, "exactly one new version");
    let version = fx.call("version.get", json!({"projectId": fx.project, "number": 2}));
    assert_eq!(version["source"], json!(both_text), "the version has both changes");
    assert_eq!(version["origin"]["type"], "aiProposal");
    assert_eq!(version["origin"]["proposalId"], json!(p1.id), "the origin names the first proposal");
    assert_eq!(version["origin"]["sessionId"], json!(fx.session));
    let message = version["message"].as_str().unwrap();
    assert!(message.contains(&p1.summary) && message.contains(&p2.summary), "the message lists every proposal by its summary: {message}");
    assert!(!message.contains("prp_") && !message.contains("ses_"), "no ids in human text: {message}");
    assert_eq!(version["messageId"], "applied_staged");
    assert_eq!(version["messageParams"], json!({"count": "2", "summaries": format!("{}; {}", p1.summary, p2.summary)}));
    assert_eq!(applied["version"]["number"], 2);
    let project = fx.project();
    assert_eq!(project["source"], json!(both_text));
    assert_eq!((project["head"].as_u64(), project["revision"].as_u64()), (Some(2), Some(revision + 1)));
    for id in [&p1.id, &p2.id] {
        let proposal = fx.proposal(id);
        assert_eq!(proposal.status, ProposalStatus::Accepted, "{id}");
        assert_eq!(proposal.accepted_hunks, proposal.hunks.iter().map(|h| h.id.clone()).collect::<Vec<_>>());
        assert_eq!(proposal.applied.as_ref().unwrap().version, Some(2));
    }
    let audit = apply::audit(fx.t.engine.store(), &fx.project).unwrap();
    assert_eq!(audit.len(), 2, "one audit record per proposal");
    assert_eq!(audit.iter().map(|a| a.proposal_id.as_str()).collect::<Vec<_>>(), vec![p1.id.as_str(), p2.id.as_str()]);
    for record in &audit {
        assert_eq!(record.action, apply::AuditAction::Accepted);
        assert_eq!(record.version, Some(2));
        assert_eq!(record.via, "person");
        assert_eq!(record.hunk_hashes.len(), record.hunks.len());
    }
    assert_eq!(applied["audit"].as_array().unwrap().len(), 2);
    let activities = fx.call("activity.list", json!({"projectId": fx.project, "limit": 1000}))["activities"].as_array().unwrap().clone();
    assert_eq!(activities.len(), activity_before + 1, "one activity entry");
    assert_eq!(activities[0]["kind"], "proposal_accepted");
    assert!(fx.staging()["staging"].is_null(), "the staged set is gone");
    assert_eq!(fx.staging()["effectiveSource"], json!(both_text));
}

#[test]
fn a_partly_staged_proposal_is_partially_accepted() {
    let fx = fixture(SOURCE, json!([]));
    let proposed = SOURCE.replace("早起的人", "早起的人们").replace("傍晚的风", "夜里的风");
    let p = fx.propose(SOURCE, &proposed, "Two changes");
    assert_eq!(p.hunks.len(), 2);
    let staged = fx.call("session.stage", json!({"sessionId": fx.session, "proposalId": p.id, "hunks": [p.hunks[1].id]}));
    assert_eq!(staged["effectiveSource"], json!(SOURCE.replace("傍晚的风", "夜里的风")));
    let applied = fx.call("session.applyStaging", json!({"sessionId": fx.session, "expectedRevision": fx.revision()}));
    assert_eq!(applied["proposals"][0]["status"], "partially_accepted");
    assert_eq!(applied["proposals"][0]["acceptedHunks"], json!([p.hunks[1].id]));
    assert_eq!(applied["audit"][0]["action"], "partially_accepted");
    assert_eq!(fx.project()["source"], json!(SOURCE.replace("傍晚的风", "夜里的风")));
    assert_eq!(fx.proposal(&p.id).status, ProposalStatus::PartiallyAccepted);
}

#[test]
fn apply_after_a_hand_edit_is_a_conflict_and_writes_nothing() {
    let fx = fixture(SOURCE, json!([]));
    let p = fx.propose(SOURCE, &SOURCE.replace("路上的花", "路边的花"), "Roadside");
    fx.stage(&p.id);
    let edited = format!("{SOURCE}\n第四段：手写的。\n");
    let revision = fx.call("project.update", json!({"projectId": fx.project, "source": edited}))["revision"].as_u64().unwrap();
    assert!(fx.staging()["baselineMoved"] == true);
    let before = fx.everything();
    let error = fx.err("session.applyStaging", json!({"sessionId": fx.session, "expectedRevision": revision}));
    assert_eq!(error.code, ErrorCode::Conflict);
    let details = error.details.clone().unwrap();
    assert_eq!(details["baseline"]["revision"], revision - 1);
    assert_eq!(details["current"]["revision"], revision);
    assert!(details["changedSince"]["hunks"].as_array().is_some_and(|h| !h.is_empty()), "{details}");
    assert!(error.hints.iter().any(|h| h.id == "discard_staging"));
    assert_eq!(fx.everything(), before, "nothing written");
    // Staging more on a moved baseline is refused too.
    let other = fx.propose(&edited, &edited.replace("手写的", "手写的字"), "Fourth");
    assert_eq!(fx.err("session.stage", json!({"sessionId": fx.session, "proposalId": other.id})).code, ErrorCode::Conflict);

    // Discard drops the set; the proposals stay open and the official copy is as edited.
    let discarded = fx.call("session.discardStaging", json!({"sessionId": fx.session}));
    assert_eq!(discarded, json!({"discarded": true, "proposalIds": [p.id]}));
    assert!(fx.staging()["staging"].is_null());
    assert_eq!(fx.staging()["effectiveSource"], json!(edited));
    assert_eq!(fx.proposal(&p.id).status, ProposalStatus::Proposed);
    assert_eq!(fx.project()["source"], json!(edited));
    assert_eq!(fx.project()["revision"], revision);
    assert_eq!(fx.call("session.discardStaging", json!({"sessionId": fx.session}))["discarded"], false);
    // On the current text, the other proposal stages.
    assert_eq!(fx.stage(&other.id)["staging"]["baseRevision"], revision);
}

#[test]
fn apply_with_a_stale_expected_revision_is_a_conflict() {
    let fx = fixture(SOURCE, json!([]));
    let revision = fx.revision();
    let p = fx.propose(SOURCE, &SOURCE.replace("路上的花", "路边的花"), "Roadside");
    fx.stage(&p.id);
    let before = fx.everything();
    let error = fx.err("session.applyStaging", json!({"sessionId": fx.session, "expectedRevision": revision - 1}));
    assert_eq!(error.code, ErrorCode::Conflict);
    assert_eq!(fx.everything(), before);
}

#[test]
fn staging_refuses_bad_input_and_writes_nothing() {
    let fx = fixture(SOURCE, json!([]));
    let first = fx.propose(SOURCE, &SOURCE.replace("早起的人", "早起的鸟"), "Birds");
    let before = fx.everything();
    let unknown = fx.err("session.stage", json!({"sessionId": fx.session, "proposalId": first.id, "hunk": []}));
    assert_eq!((unknown.code, unknown.details.unwrap()["field"].as_str()), (ErrorCode::Validation, Some("hunk")));
    assert_eq!(fx.err("session.stage", json!({"sessionId": fx.session})).code, ErrorCode::Validation);
    assert_eq!(fx.err("session.stage", json!({"sessionId": fx.session, "proposalId": "prp_nope"})).code, ErrorCode::NotFound);
    assert_eq!(fx.err("session.stage", json!({"sessionId": "ses_nope", "proposalId": first.id})).code, ErrorCode::NotFound);
    let bad_hunk = fx.err("session.stage", json!({"sessionId": fx.session, "proposalId": first.id, "hunks": ["hk_nope"]}));
    assert_eq!((bad_hunk.code, bad_hunk.details.unwrap()["field"].as_str()), (ErrorCode::Validation, Some("hunks[0]")));
    let nothing = fx.err("session.applyStaging", json!({"sessionId": fx.session, "expectedRevision": fx.revision()}));
    assert_eq!((nothing.code, nothing.hints[0].id.as_str()), (ErrorCode::Conflict, "stage"));
    assert_eq!(fx.everything(), before, "refused calls write nothing");
    // Another session's proposal is not this session's to stage.
    let other_session = fx.call("session.create", json!({"projectId": fx.project}))["session"]["id"].as_str().unwrap().to_owned();
    let foreign = fx.propose_in(&other_session, SOURCE, &SOURCE.replace("第二段", "Part 2"), "Foreign");
    let error = fx.err("session.stage", json!({"sessionId": fx.session, "proposalId": foreign.id}));
    assert_eq!((error.code, error.details.unwrap()["field"].as_str()), (ErrorCode::Validation, Some("proposalId")));
    // A title candidates proposal is not a source text.
    let titles = proposals::create(
        fx.t.engine.kernel(),
        NewProposal {
            project_id: fx.project.clone(),
            kind: ProposalKind::TitleCandidates,
            target: Target::Source,
            summary: "Titles".to_owned(),
            payload: Payload::Candidates { candidates: vec![proposals::Candidate { text: "夏天".to_owned(), rationale: String::new() }] },
            origin: Origin { session_id: Some(fx.session.clone()), model: "m".to_owned(), profile_id: "p".to_owned(), prompt_version: "v".to_owned(), ..Origin::default() },
        },
    )
    .unwrap();
    assert_eq!(fx.err("session.stage", json!({"sessionId": fx.session, "proposalId": titles.id})).code, ErrorCode::Validation);
    assert!(fx.staging()["staging"].is_null(), "nothing was staged by refused calls");

    // Staging the same proposal twice, or one written over the official copy after
    // something was staged, is a conflict.
    fx.stage(&first.id);
    let staged = fx.staging();
    assert_eq!(fx.err("session.stage", json!({"sessionId": fx.session, "proposalId": first.id})).code, ErrorCode::Conflict);
    let over_official = fx.propose(SOURCE, &SOURCE.replace("傍晚", "夜晚"), "Evening");
    assert_eq!(fx.proposal(&first.id).status, ProposalStatus::Proposed);
    let error = fx.err("session.stage", json!({"sessionId": fx.session, "proposalId": over_official.id}));
    assert_eq!(error.code, ErrorCode::Conflict);
    assert!(error.message.contains("undo"), "{}", error.message);
    assert_eq!(fx.staging(), staged);
    // A rejected proposal cannot be staged.
    apply::reject(fx.t.engine.kernel(), &apply::Reject { proposal_id: over_official.id.clone(), hunks: None, reason: None }).unwrap();
    assert_eq!(fx.err("session.stage", json!({"sessionId": fx.session, "proposalId": over_official.id})).code, ErrorCode::Conflict);
    // An archived session stages nothing.
    fx.call("session.archive", json!({"sessionId": fx.session}));
    let second = fx.propose(staged["effectiveSource"].as_str().unwrap(), "# 新\n", "Rewrite");
    assert_eq!(fx.err("session.stage", json!({"sessionId": fx.session, "proposalId": second.id})).code, ErrorCode::Validation);
}

#[test]
fn a_staged_proposal_rejected_meanwhile_makes_apply_a_conflict() {
    let fx = fixture(SOURCE, json!([]));
    let p = fx.propose(SOURCE, &SOURCE.replace("路上的花", "路边的花"), "Roadside");
    fx.stage(&p.id);
    apply::reject(fx.t.engine.kernel(), &apply::Reject { proposal_id: p.id.clone(), hunks: None, reason: None }).unwrap();
    let before = fx.everything();
    let error = fx.err("session.applyStaging", json!({"sessionId": fx.session, "expectedRevision": fx.revision()}));
    assert_eq!(error.code, ErrorCode::Conflict);
    assert_eq!(error.details.unwrap()["status"], "rejected");
    assert_eq!(fx.everything(), before);
}

#[test]
fn a_rejection_reason_is_a_constraint_the_person_can_list_and_remove() {
    let fx = fixture(SOURCE, json!([]));
    assert_eq!(fx.call("constraint.list", json!({"sessionId": fx.session})), json!({"constraints": []}));
    let p = fx.propose(SOURCE, &SOURCE.replace("早起的人", "最好的人"), "Superlative");
    let rejected = apply::reject(fx.t.engine.kernel(), &apply::Reject { proposal_id: p.id.clone(), hunks: None, reason: Some("不要用最高级".to_owned()) }).unwrap();
    let constraint = rejected.constraint.unwrap();
    let listed = fx.call("constraint.list", json!({"sessionId": fx.session}));
    assert_eq!(listed["constraints"].as_array().unwrap().len(), 1);
    assert_eq!(listed["constraints"][0]["text"], "不要用最高级");
    assert_eq!(listed["constraints"][0]["proposalId"], json!(p.id));
    assert_eq!(listed["constraints"][0]["id"], json!(constraint.id));

    // Another session's id does not reach this session's constraint.
    let other = fx.call("session.create", json!({"projectId": fx.project}))["session"]["id"].as_str().unwrap().to_owned();
    assert_eq!(fx.err("constraint.remove", json!({"sessionId": other, "constraintId": constraint.id})).code, ErrorCode::NotFound);
    assert_eq!(fx.err("constraint.remove", json!({"sessionId": fx.session, "constraintId": constraint.id, "force": true})).code, ErrorCode::Validation);
    assert_eq!(fx.err("constraint.list", json!({"sessionId": "ses_nope"})).code, ErrorCode::NotFound);
    assert_eq!(fx.call("constraint.list", json!({"sessionId": fx.session}))["constraints"].as_array().unwrap().len(), 1);

    let removed = fx.call("constraint.remove", json!({"sessionId": fx.session, "constraintId": constraint.id}));
    assert_eq!(removed, json!({"id": constraint.id, "deleted": true}));
    assert_eq!(fx.call("constraint.list", json!({"sessionId": fx.session})), json!({"constraints": []}));
    assert_eq!(fx.err("constraint.remove", json!({"sessionId": fx.session, "constraintId": constraint.id})).code, ErrorCode::NotFound);
}
