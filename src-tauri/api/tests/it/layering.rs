//! The domain writes compose: several subsystems stage records into one `Batch`, and the
//! caller commits once, so one user action is one transaction.

use inkstone_api::model::{Activity, ActivityKind, Platform, PlatformDraft, Version};
use inkstone_api::project::{self, drafts, versions};
use inkstone_api::store::{keys, Batch, Durability};
use inkstone_test_support::TestEngine;
use serde_json::json;

fn project_id(t: &TestEngine) -> String {
    let created = t.ok("project.create", json!({"title": "春天", "source": "# 春天\n\n第一段。\n", "platforms": ["x"]}));
    created["id"].as_str().unwrap().to_owned()
}

/// A version, a draft revision and an activity entry staged by three subsystems are
/// committed together by one `apply` (one durable sync), and none of them is visible
/// before it.
#[test]
fn one_batch_carries_a_version_a_draft_revision_and_an_activity() {
    let t = TestEngine::new();
    let id = project_id(&t);
    let kernel = t.engine.kernel();
    let activities_before = kernel.store().scan::<Activity>(b"").unwrap().len();

    let _guard = kernel.write_lock();
    let mut project = project::load(kernel.store(), &id).unwrap();
    let mut batch = Batch::new();
    let version = versions::stage_save(kernel, &mut batch, &mut project, Some("with the X draft")).unwrap();
    let compiled = drafts::compile(kernel, &project, Some(vec![Platform::X]), None).unwrap();
    let saved = drafts::stage_save(kernel, &mut batch, &project, &compiled.drafts[0], None).unwrap();
    let note = kernel.activity(Some(&id), ActivityKind::DraftSaved, "a note of the whole action".to_owned()).unwrap();
    batch.put(&note).unwrap();

    // Nothing is written while the batch is only staged.
    assert!(kernel.store().get::<Version>(&keys::version(&id, version.number)).unwrap().is_none());
    assert!(kernel.store().get::<PlatformDraft>(&keys::platform_draft(&id, Platform::X)).unwrap().is_none());
    assert_eq!(kernel.store().scan::<Activity>(b"").unwrap().len(), activities_before);

    let syncs = kernel.store().durable_sync_count();
    kernel.store().apply(batch, Durability::Durable).unwrap();
    assert_eq!(kernel.store().durable_sync_count(), syncs + 1, "one commit, one sync");

    assert_eq!(kernel.store().get::<Version>(&keys::version(&id, 1)).unwrap().unwrap(), version);
    assert_eq!(kernel.store().get::<PlatformDraft>(&keys::platform_draft(&id, Platform::X)).unwrap().unwrap(), saved.draft);
    assert_eq!(saved.draft.source_version, 1, "the draft was staged after the version moved the head");
    let activities = kernel.store().scan::<Activity>(b"").unwrap();
    // version saved + draft saved + the note.
    assert_eq!(activities.len(), activities_before + 3);
    assert!(activities.iter().any(|a| a.id == note.id));
    assert_eq!(project::load(kernel.store(), &id).unwrap().head, 1);
}

/// A stage that fails leaves the batch uncommitted: nothing of the action is written.
#[test]
fn a_refused_stage_writes_nothing_of_the_action() {
    let t = TestEngine::new();
    let id = project_id(&t);
    t.ok("platformDraft.save", json!({"projectId": id, "platform": "x"}));
    let kernel = t.engine.kernel();
    let _guard = kernel.write_lock();
    let mut project = project::load(kernel.store(), &id).unwrap();
    let mut batch = Batch::new();
    versions::stage_save(kernel, &mut batch, &mut project, None).unwrap();
    let compiled = drafts::compile(kernel, &project, Some(vec![Platform::X]), None).unwrap();
    // A stale replace revision: CONFLICT, and the caller drops the batch.
    let refused = drafts::stage_save(kernel, &mut batch, &project, &compiled.drafts[0], Some(7)).unwrap_err();
    assert_eq!(refused.code, inkstone_api::ErrorCode::Conflict);
    drop(batch);
    assert_eq!(project::load(kernel.store(), &id).unwrap().head, 0);
    assert!(versions::list(kernel.store(), &id).unwrap().is_empty());
}
