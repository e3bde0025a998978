//! The index of open proposals by session or run (`proposals::open_index`): it always
//! equals what a scan of every proposal says is open, whatever the order of proposals,
//! accepts and rejects; a new proposal supersedes exactly the open alternatives that
//! scan finds; and the index is carried through an export and import as the
//! proposals it is derived from, and built when a folder written before it opens.

use std::collections::BTreeSet;

use inkstone_api::proposals::open_index::{self, OpenProposal};
use inkstone_api::proposals::{self, MetadataChange, NewProposal, Origin, Payload, Proposal, ProposalKind, ProposalStatus, Target};
use inkstone_api::store::{Batch, Durability, Record, Store};
use inkstone_api::{Engine, EngineConfig};
use inkstone_test_support::TestEngine;
use proptest::prelude::*;
use serde_json::json;

const SOURCE: &str = "第一段：甲。\n\n第二段：乙。\n\n第三段：丙。\n";

fn project(t: &TestEngine) -> String {
    t.ok("project.create", json!({"title": "春天", "source": SOURCE, "platforms": ["x"]}))["id"].as_str().unwrap().to_owned()
}

fn origin(owner: Option<&str>) -> Origin {
    Origin { session_id: owner.map(str::to_owned), model: "scripted".into(), profile_id: "llm_test".into(), prompt_version: proposals::PROMPT_VERSION.into(), ..Origin::default() }
}

/// What a proposal of each test shape changes.
#[derive(Debug, Clone, Copy)]
enum Shape {
    Patch,
    Rewrite,
    Metadata,
    Outline,
}

fn propose(engine: &Engine, project_id: &str, owner: Option<&str>, shape: Shape, n: usize) -> Proposal {
    let kernel = engine.kernel();
    let source = inkstone_api::project::load(kernel.store(), project_id).unwrap().source;
    let text = |mark: &str| Payload::Text { base_text: source.clone(), proposed_text: source.replacen(mark, &format!("{mark}{n}"), 1) };
    let (kind, target, payload) = match shape {
        Shape::Patch => (ProposalKind::SourcePatch, Target::Source, text("甲")),
        Shape::Rewrite => (ProposalKind::SourceRewrite, Target::Source, text("丙")),
        Shape::Metadata => {
            (ProposalKind::Metadata, Target::Metadata, Payload::Metadata { change: MetadataChange { title: Some(format!("标题{n}")), ..MetadataChange::default() } })
        }
        Shape::Outline => (ProposalKind::Outline, Target::Session, Payload::Outline { outline: format!("1. 提纲{n}") }),
    };
    proposals::create(kernel, NewProposal { project_id: project_id.to_owned(), kind, target, summary: "改".into(), payload, origin: origin(owner) }).unwrap()
}

fn family(kind: ProposalKind) -> &'static str {
    match kind {
        ProposalKind::SourcePatch | ProposalKind::SourceRewrite => "source",
        other => other.as_str(),
    }
}

/// (owner, proposal id) of every open proposal of a session or run, by a scan of every
/// proposal: what the index must say.
fn open_by_scan(store: &Store) -> BTreeSet<(String, String)> {
    let all = store.scan::<Proposal>(b"").unwrap();
    all.iter().filter(|p| p.status == ProposalStatus::Proposed).filter_map(|p| Some((p.origin.owner_id()?.to_owned(), p.id.clone()))).collect()
}

fn open_by_index(store: &Store) -> BTreeSet<(String, String)> {
    store.scan::<OpenProposal>(b"").unwrap().into_iter().map(|e| (e.owner_id, e.proposal_id)).collect()
}

#[test]
fn the_index_follows_each_proposal_from_proposed_to_superseded_accepted_and_rejected() {
    let t = TestEngine::new();
    let id = project(&t);
    let store = t.engine.store();
    let a = propose(&t.engine, &id, Some("ses_a"), Shape::Patch, 1);
    let b = propose(&t.engine, &id, Some("ses_b"), Shape::Patch, 2);
    let outline = propose(&t.engine, &id, Some("ses_a"), Shape::Outline, 3);
    let by_person = propose(&t.engine, &id, None, Shape::Metadata, 4);
    let listed: Vec<String> = open_index::of_owner(store, &id, "ses_a").unwrap().into_iter().map(|e| e.proposal_id).collect();
    assert_eq!(listed, vec![a.id.clone(), outline.id.clone()], "the session's open proposals, oldest first; another session's and a person's are not listed");
    assert!(open_by_index(store).iter().all(|(_, p)| p != &by_person.id), "a proposal of no session or run is not indexed");

    // A rewrite of the same text supersedes the patch (one family): the entry goes in
    // the same write.
    let rewrite = propose(&t.engine, &id, Some("ses_a"), Shape::Rewrite, 5);
    let listed: Vec<String> = open_index::of_owner(store, &id, "ses_a").unwrap().into_iter().map(|e| e.proposal_id).collect();
    assert_eq!(listed, vec![outline.id.clone(), rewrite.id.clone()]);
    assert_eq!(t.ok("proposal.get", json!({"proposalId": a.id}))["supersededBy"], rewrite.id.as_str());

    let revision = t.ok("project.get", json!({"projectId": id}))["revision"].clone();
    t.ok("proposal.accept", json!({"proposalId": rewrite.id, "expectedBase": revision}));
    t.ok("proposal.reject", json!({"proposalId": b.id, "reason": "不要"}));
    assert_eq!(open_by_index(store), BTreeSet::from([("ses_a".to_owned(), outline.id.clone())]));
    assert_eq!(open_by_index(store), open_by_scan(store));
}

#[test]
fn the_index_travels_as_its_proposals_and_is_built_when_an_older_folder_opens() {
    let t = TestEngine::new();
    let id = project(&t);
    let older = propose(&t.engine, &id, Some("ses_a"), Shape::Patch, 1);
    propose(&t.engine, &id, Some("ses_b"), Shape::Metadata, 2);
    propose(&t.engine, &id, Some("ses_b"), Shape::Metadata, 3);
    let expected = open_by_scan(t.engine.store());
    assert_eq!(expected.len(), 2);

    // Export and import: the export carries no index, the import writes it.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("export");
    t.ok("export.run", json!({"path": path.display().to_string()}));
    let imported = TestEngine::new();
    imported.ok("import.run", json!({"path": path.display().to_string()}));
    assert_eq!(open_by_index(imported.engine.store()), expected);

    // A folder written before the index: no entries and no marker. Opening builds it,
    // and a new proposal then supersedes the older one as before.
    let store = t.engine.store();
    let mut batch = Batch::new();
    for entry in store.scan::<OpenProposal>(b"").unwrap() {
        batch.delete::<OpenProposal>(entry.key());
    }
    // The marker is a meta record: any meta kind deletes it.
    batch.delete::<inkstone_api::policy::CachedPolicy>(b"open_proposals_indexed_v1".to_vec());
    store.apply(batch, Durability::Durable).unwrap();
    assert!(open_by_index(store).is_empty());
    let TestEngine { engine, dir } = t;
    drop(engine);
    let engine = Engine::open(EngineConfig::for_tests(dir.path())).unwrap();
    assert_eq!(open_by_index(engine.store()), expected, "built once when the folder opens");
    let newer = propose(&engine, &id, Some("ses_a"), Shape::Rewrite, 4);
    let older = proposals::load(engine.store(), &older.id).unwrap();
    assert_eq!((older.status, older.superseded_by.as_deref()), (ProposalStatus::Superseded, Some(newer.id.as_str())));
}

#[derive(Debug, Clone)]
enum Step {
    Propose { owner: usize, shape: usize },
    Accept(usize),
    Reject(usize),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (0..3usize, 0..4usize).prop_map(|(owner, shape)| Step::Propose { owner, shape }),
        1 => (0..8usize).prop_map(Step::Accept),
        1 => (0..8usize).prop_map(Step::Reject),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]
    /// Whatever the order of proposals from two sessions and a person, accepts and
    /// rejects: the index equals what a scan of every proposal says is open, and each
    /// new proposal supersedes exactly the open proposals of its session with its
    /// target and kind family that the scan finds.
    #[test]
    fn the_index_always_equals_a_scan_and_supersedes_what_the_scan_finds(steps in proptest::collection::vec(step(), 1..16)) {
        let t = TestEngine::new();
        let id = project(&t);
        let store = t.engine.store();
        let owners = [Some("ses_a"), Some("ses_b"), None];
        let shapes = [Shape::Patch, Shape::Rewrite, Shape::Metadata, Shape::Outline];
        for (n, step) in steps.into_iter().enumerate() {
            let open: Vec<Proposal> = store.scan::<Proposal>(b"").unwrap().into_iter().filter(|p| p.status == ProposalStatus::Proposed).collect();
            match step {
                Step::Propose { owner, shape } => {
                    let new = propose(&t.engine, &id, owners[owner], shapes[shape], n);
                    let expected: BTreeSet<String> = match new.origin.owner_id() {
                        None => BTreeSet::new(),
                        Some(owner) => open.iter().filter(|p| p.origin.owner_id() == Some(owner) && p.target == new.target && family(p.kind) == family(new.kind)).map(|p| p.id.clone()).collect(),
                    };
                    let superseded: BTreeSet<String> = store.scan::<Proposal>(b"").unwrap().into_iter().filter(|p| p.superseded_by.as_deref() == Some(new.id.as_str())).map(|p| p.id).collect();
                    prop_assert_eq!(superseded, expected);
                }
                Step::Accept(i) | Step::Reject(i) if open.is_empty() => { let _ = i; }
                Step::Accept(i) => {
                    let p = &open[i % open.len()];
                    let revision = t.ok("project.get", json!({"projectId": id}))["revision"].clone();
                    // A stale one is refused and changes nothing; the index must agree either way.
                    let _ = t.engine.call("proposal.accept", json!({"proposalId": p.id, "expectedBase": revision}));
                }
                Step::Reject(i) => {
                    t.ok("proposal.reject", json!({"proposalId": open[i % open.len()].id}));
                }
            }
            prop_assert_eq!(open_by_index(store), open_by_scan(store));
        }
    }
}
