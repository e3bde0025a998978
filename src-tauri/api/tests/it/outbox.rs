//! The sync outbox's seam: in a workspace linked to a server, every new accepted
//! version — saved, restored, or from an accepted proposal — has its delivery job
//! written in the same transaction; an autosnapshot of unsaved work has none (it stays
//! private); a local workspace writes none.

use inkstone_api::outbox::{DeliveryJob, JobState};
use inkstone_api::store::{Batch, Durability};
use inkstone_test_support::TestEngine;
use serde_json::json;

fn link(t: &TestEngine) {
    let store = t.engine.store();
    let mut workspace = store.workspace().unwrap().unwrap();
    workspace.server_url = Some("https://team.example".into());
    let mut batch = Batch::new();
    batch.put(&workspace).unwrap();
    store.apply(batch, Durability::Durable).unwrap();
}

fn jobs(t: &TestEngine) -> Vec<DeliveryJob> {
    t.engine.store().scan::<DeliveryJob>(b"").unwrap()
}

#[test]
fn a_local_workspace_queues_nothing() {
    let t = TestEngine::new();
    let id = t.ok("project.create", json!({"title": "本地", "source": "一\n"}))["id"].clone();
    t.ok("version.create", json!({"projectId": id}));
    assert!(jobs(&t).is_empty());
}

#[test]
fn every_version_of_a_linked_workspace_has_its_job_in_the_same_transaction() {
    let t = TestEngine::new();
    link(&t);
    let id = t.ok("project.create", json!({"title": "团队", "source": "一\n"}))["id"].as_str().unwrap().to_owned();
    let syncs = t.engine.store().durable_sync_count();
    let v1 = t.ok("version.create", json!({"projectId": id}));
    assert_eq!(t.engine.store().durable_sync_count(), syncs + 1, "the version and its job: one commit");
    let rev = t.ok("project.get", json!({"projectId": id}))["revision"].as_u64().unwrap();
    t.ok("project.update", json!({"projectId": id, "baseRevision": rev, "source": "二\n"}));
    let restored = t.ok("version.restore", json!({"projectId": id, "number": 1}));
    let all = jobs(&t);
    // v1 and the restore (v3); the autosnapshot (v2) of the unsaved "二" is the
    // person's unsaved work, not an accepted version: it is never delivered.
    assert_eq!(restored["autosnapshot"]["number"], 2);
    assert_eq!(all.iter().map(|j| j.version_number).collect::<Vec<_>>(), [1, 3]);
    assert!(all.iter().all(|j| j.state == JobState::Pending && j.attempts == 0 && j.project_id == id));
    assert_eq!(all[0].version_id, v1["id"].as_str().unwrap());
    assert_eq!(all[1].version_id, restored["restored"]["id"].as_str().unwrap());
    let keys: std::collections::BTreeSet<&str> = all.iter().map(|j| j.dedupe_key.as_str()).collect();
    assert_eq!(keys.len(), 2, "one dedupe key per version");

    // An accepted proposal's version too.
    let project = inkstone_api::project::load(t.engine.store(), &id).unwrap();
    let proposal = inkstone_api::proposals::create(
        t.engine.kernel(),
        inkstone_api::proposals::NewProposal {
            project_id: id.clone(),
            kind: inkstone_api::proposals::ProposalKind::SourcePatch,
            target: inkstone_api::proposals::Target::Source,
            summary: "改".into(),
            payload: inkstone_api::proposals::Payload::Text { base_text: project.source.clone(), proposed_text: "三\n".into() },
            origin: inkstone_api::proposals::Origin { session_id: Some("ses_x".into()), model: "m".into(), profile_id: "p".into(), ..Default::default() },
        },
    )
    .unwrap();
    let accepted = t.ok("proposal.accept", json!({"proposalId": proposal.id, "expectedBase": project.revision}));
    let last = jobs(&t).pop().unwrap();
    assert_eq!(last.version_id, accepted["version"]["id"].as_str().unwrap());
    assert_eq!(last.version_number, 4);
}
