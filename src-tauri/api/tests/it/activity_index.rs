//! The AI activity index gives exactly what a full scan of the audit trail gives: for
//! random audit records (projects, people, models, every action including rebases,
//! times that collide) and random filters (any mix of project, person, model,
//! decision, dates and a limit), `activity::list` — which picks one index scope,
//! compound decision scopes included — returns the same rows in the same order, and
//! the same `truncated`, as filtering every stored audit record by hand.

use chrono::TimeZone;
use inkstone_api::activity::{self, Decision, Query};
use inkstone_api::model::Timestamp;
use inkstone_api::proposals::apply::{AuditAction, AuditRecord};
use inkstone_api::proposals::{Origin, ProposalKind};
use inkstone_api::store::{Batch, Durability, Store, StoreOptions};
use proptest::prelude::*;

const PROJECTS: [&str; 3] = ["prj_a", "prj_b", "prj_c"];
const PEOPLE: [&str; 3] = ["林小墨", "Olga", "Eddie"];
const MODELS: [&str; 3] = ["model-0", "model-1", "qwen:7b"];
const ACTIONS: [AuditAction; 5] = [AuditAction::Accepted, AuditAction::PartiallyAccepted, AuditAction::Rejected, AuditAction::HunksRejected, AuditAction::Rebased];

fn at(minute: i64) -> Timestamp {
    chrono::Utc.with_ymd_and_hms(2026, 3, 1, 0, 0, 0).unwrap() + chrono::Duration::minutes(minute)
}

/// (project, person, model, action, minute): minutes collide often, so order by id
/// within one time is exercised too.
type Seed = (usize, usize, usize, usize, i64);

fn record(i: usize, (project, person, model, action, minute): Seed) -> AuditRecord {
    AuditRecord {
        id: format!("aud_{i:05}"),
        project_id: PROJECTS[project].to_owned(),
        proposal_id: format!("prp_{i:05}"),
        kind: ProposalKind::SourcePatch,
        action: ACTIONS[action],
        hunks: vec!["h1".to_owned()],
        hunk_hashes: vec!["x".to_owned()],
        choices: Vec::new(),
        actor: PEOPLE[person].to_owned(),
        via: "person".to_owned(),
        approval_request_id: None,
        origin: Origin { model: MODELS[model].to_owned(), profile_id: "llm_1".to_owned(), ..Origin::default() },
        version: None,
        draft_revision: None,
        reason: None,
        at: at(minute),
    }
}

fn decision_of(action: AuditAction) -> Option<Decision> {
    match action {
        AuditAction::Accepted | AuditAction::PartiallyAccepted => Some(Decision::Accepted),
        AuditAction::Rejected | AuditAction::HunksRejected => Some(Decision::Rejected),
        AuditAction::Rebased => None,
    }
}

/// The full scan: every audit record, filtered by hand, newest first (ties by id,
/// newest id first), cut at the limit.
fn scanned(store: &Store, query: &Query) -> (Vec<String>, bool) {
    let mut records: Vec<AuditRecord> = store
        .scan::<AuditRecord>(b"")
        .unwrap()
        .into_iter()
        .filter(|r| decision_of(r.action).is_some())
        .filter(|r| query.project_id.as_ref().is_none_or(|p| &r.project_id == p))
        .filter(|r| query.person.as_ref().is_none_or(|p| &r.actor == p))
        .filter(|r| query.model.as_ref().is_none_or(|m| &r.origin.model == m))
        .filter(|r| query.decision.is_none_or(|d| decision_of(r.action) == Some(d)))
        .filter(|r| query.from.is_none_or(|f| r.at >= f) && query.to.is_none_or(|t| r.at < t))
        .collect();
    records.sort_by(|a, b| (b.at, &b.id).cmp(&(a.at, &a.id)));
    let limit = query.limit.unwrap_or(usize::MAX);
    let truncated = records.len() > limit;
    (records.into_iter().take(limit).map(|r| r.id).collect(), truncated)
}

type Filter = (Option<usize>, Option<usize>, Option<usize>, Option<bool>, Option<i64>, Option<i64>, Option<usize>);

fn query((project, person, model, rejected, from, to, limit): Filter) -> Query {
    Query {
        project_id: project.map(|i| PROJECTS[i].to_owned()),
        person: person.map(|i| PEOPLE[i].to_owned()),
        model: model.map(|i| MODELS[i].to_owned()),
        from: from.map(at),
        to: to.map(at),
        decision: rejected.map(|r| if r { Decision::Rejected } else { Decision::Accepted }),
        limit,
    }
}

fn seeds() -> impl Strategy<Value = Vec<Seed>> {
    prop::collection::vec((0..3usize, 0..3usize, 0..3usize, 0..5usize, 0..60i64), 0..120)
}

fn filters() -> impl Strategy<Value = Vec<Filter>> {
    let one = (
        prop::option::of(0..3usize),
        prop::option::of(0..3usize),
        prop::option::of(0..3usize),
        prop::option::of(any::<bool>()),
        prop::option::of(0..60i64),
        prop::option::of(0..61i64),
        prop::option::of(0..12usize),
    );
    prop::collection::vec(one, 12)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
    #[test]
    fn the_indexed_query_returns_what_a_full_scan_returns(seeds in seeds(), filters in filters()) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), &StoreOptions { holder: "test".into(), cache_capacity_bytes: 8 << 20, group_commit_millis: 1000 }).unwrap();
        let mut batch = Batch::new();
        for (i, seed) in seeds.iter().enumerate() {
            batch.put(&record(i, *seed)).unwrap();
        }
        store.apply(batch, Durability::Grouped).unwrap();
        for filter in filters {
            let query = query(filter);
            let page = activity::list(&store, &query).unwrap();
            let indexed: Vec<String> = page.rows.iter().map(|r| r.id.clone()).collect();
            let (expected, truncated) = scanned(&store, &query);
            prop_assert_eq!(&indexed, &expected, "{:?}", query);
            prop_assert_eq!(page.truncated, truncated, "{:?}", query);
            for row in &page.rows {
                prop_assert!(query.decision.is_none_or(|d| row.decision == d));
            }
        }
    }
}
