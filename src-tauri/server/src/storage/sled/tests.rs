use super::*;

use inkstone_sync_proto::PushVersion;

fn request(base: u32, ids: &[&str]) -> PushRequest {
    let versions = ids
        .iter()
        .map(|id| PushVersion {
            client_id: (*id).to_owned(),
            title: format!("标题 {id}"),
            source: format!("正文 {id}"),
            author: "amy".into(),
            message: None,
            content_hash: format!("sha256:{}", "a".repeat(64)),
            created_at: "2026-11-26T00:00:00Z".into(),
            origin: None,
            ai: None,
        })
        .collect();
    PushRequest { base, versions }
}

fn owner(storage: &SledStorage) -> Caller {
    let (_, issued) = storage.create_workspace("团队", "olive").unwrap();
    storage.authenticate(&issued.token).unwrap().unwrap()
}

fn job(storage: &SledStorage, caller: &Caller, key_name: &str, hash: &str, request: PushRequest) -> (PushJob, PendingPush) {
    let (reply, answer) = oneshot::channel();
    let claim = InFlightClaim { set: storage.inner.in_flight.clone(), key: key(&[caller.workspace_id.as_bytes(), key_name.as_bytes()]) };
    let job = PushJob {
        workspace_id: caller.workspace_id.clone(),
        pushed_by: caller.member.name.clone(),
        member_id: caller.member.id.clone(),
        project_id: "prj_a".into(),
        request,
        claim,
        payload_hash: hash.into(),
        at: now_millis(),
        reply,
    };
    (job, answer)
}

fn done(answer: &Result<PushOutcome, StorageError>) -> &PushResponse {
    match answer {
        Ok(PushOutcome::Done(response)) => response,
        other => panic!("expected a new push, got {other:?}"),
    }
}

#[test]
fn a_page_as_json_is_the_page_encoded_and_stops_at_its_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let storage = SledStorage::open(dir.path()).unwrap();
    let caller = owner(&storage);
    storage.push(&caller, "prj_a", &request(0, &["a1", "a2", "a3"]), "k", "h").unwrap();
    let one = storage.changes_page(&caller.workspace_id, 0, 10, usize::MAX).unwrap().versions[0].clone();
    let size = serde_json::to_vec(&one).unwrap().len();
    for (limit, max_bytes, count, more) in [(10, usize::MAX, 3, false), (2, usize::MAX, 2, true), (10, 2 * size, 2, true), (10, 1, 1, true)] {
        let page = storage.changes_page(&caller.workspace_id, 0, limit, max_bytes).unwrap();
        assert_eq!((page.versions.len(), page.more), (count, more), "{limit} {max_bytes}");
        assert_eq!(storage.changes_json(&caller.workspace_id, 0, limit, max_bytes).unwrap(), serde_json::to_vec(&page).unwrap());
    }
}

#[test]
fn a_group_applies_its_pushes_in_order_and_a_refused_one_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let storage = SledStorage::open(dir.path()).unwrap();
    let caller = owner(&storage);
    let group: Vec<PushJob> = [
        job(&storage, &caller, "ka", "h1", request(0, &["a1"])),
        // Same base as the push before it in the group: stale, and told of a1.
        job(&storage, &caller, "kb", "h2", request(0, &["b1"])),
        job(&storage, &caller, "kc", "h3", request(1, &["c1", "c2"])),
        // ka again with its payload: the original answer; with another: refused.
        job(&storage, &caller, "ka", "h1", request(0, &["a1"])),
        job(&storage, &caller, "ka", "other", request(3, &["x1"])),
    ]
    .into_iter()
    .map(|(job, _)| job)
    .collect();
    let answers = storage.inner.apply(&group).unwrap();
    assert_eq!(answers.len(), 5);
    let first = done(&answers[0]).clone();
    assert_eq!((first.head, first.versions[0].number, first.versions[0].cursor), (1, 1, 1));
    match &answers[1] {
        Err(StorageError::Stale(stale)) => {
            assert_eq!((stale.base, stale.head), (0, 1));
            assert_eq!(stale.newer.iter().map(|v| v.client_id.as_str()).collect::<Vec<_>>(), ["a1"]);
        }
        other => panic!("expected a stale base, got {other:?}"),
    }
    let third = done(&answers[2]);
    assert_eq!(third.head, 3);
    assert_eq!(third.versions.iter().map(|v| (v.number, v.cursor)).collect::<Vec<_>>(), [(2, 2), (3, 3)], "no number or cursor was taken by the stale push");
    assert!(matches!(&answers[3], Ok(PushOutcome::Replayed(r)) if *r == first));
    assert!(matches!(&answers[4], Err(StorageError::KeyReused)));

    // (Straight from the tree: `apply` alone is not durable, so a pull shows none yet.)
    let stored: Vec<(String, u32, u64)> =
        storage.inner.versions.iter().values().map(|v| serde_json::from_slice::<ServerVersion>(&v.unwrap()).unwrap()).map(|v| (v.client_id, v.number, v.cursor)).collect();
    assert_eq!(stored, [("a1".to_owned(), 1, 1), ("c1".to_owned(), 2, 2), ("c2".to_owned(), 3, 3)]);
    assert_eq!(storage.inner.changes.len(), 3);
    assert_eq!(storage.project(&caller.workspace_id, "prj_a").unwrap().head, 3);
}

#[test]
fn a_store_from_before_the_client_id_index_gets_it_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let storage = SledStorage::open(dir.path()).unwrap();
    let caller = owner(&storage);
    storage.push(&caller, "prj_a", &request(0, &["a1"]), "k1", "h1").unwrap();
    // As a build before the index left it.
    storage.inner.client_ids.clear().unwrap();
    storage.inner.durable().unwrap();
    drop(storage);
    let reopened = SledStorage::open(dir.path()).unwrap();
    assert_eq!(reopened.inner.client_ids.len(), 1);
    assert!(matches!(reopened.push(&caller, "prj_b", &request(0, &["a1"]), "k2", "h2"), Err(StorageError::VersionIdTaken(id)) if id == "a1"));
    assert!(reopened.push(&caller, "prj_b", &request(0, &["b1"]), "k3", "h3").is_ok());
}

/// Waits until `check` holds, at most 10 s.
fn eventually(what: &str, check: impl Fn() -> bool) {
    let started = std::time::Instant::now();
    while !check() {
        assert!(started.elapsed() < std::time::Duration::from_secs(10), "timed out waiting: {what}");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

#[test]
fn no_push_is_answered_before_its_group_is_durable_and_pushes_that_waited_share_one_group() {
    let dir = tempfile::tempdir().unwrap();
    let storage = SledStorage::open(dir.path()).unwrap();
    let caller = owner(&storage);
    let groups = || storage.inner.groups.load(Ordering::Relaxed);
    let before = groups();
    // Hold the sync: the committer applies the first push, then waits to sync it.
    let held = storage.inner.disk.hold_for_tests();
    let mut pending = vec![storage.queue_push(&caller, "prj_a", request(0, &["v1"]), "k1", "h1").unwrap()];
    eventually("the committer takes the first push", || groups() == before + 1);
    for i in 2..=9u32 {
        pending.push(storage.queue_push(&caller, "prj_a", request(i - 1, &[&format!("v{i}")]), &format!("k{i}"), "h").unwrap());
    }
    assert!(matches!(storage.queue_push(&caller, "prj_a", request(0, &["v1"]), "k1", "h1"), Err(StorageError::InFlight)), "a key is held until its push is answered");
    std::thread::sleep(std::time::Duration::from_millis(200));
    for answer in &mut pending {
        assert!(answer.try_recv().is_err(), "a push was answered before it was durable");
    }
    assert!(storage.changes(&caller.workspace_id, 0, 100).unwrap().versions.is_empty(), "a pull showed a version not yet durable");
    drop(held);
    let numbers: Vec<u32> = pending.into_iter().map(|answer| done(&answer.blocking_recv().unwrap()).head).collect();
    assert_eq!(numbers, (1..=9).collect::<Vec<_>>());
    assert_eq!(groups(), before + 2, "the eight pushes that waited for the first one's sync went in one group");
    assert_eq!(storage.changes(&caller.workspace_id, 0, 100).unwrap().versions.len(), 9);
    assert!(storage.queue_push(&caller, "prj_a", request(9, &["v10"]), "k1", "h10").is_ok(), "the key is free once answered");
}

#[test]
fn closing_the_store_answers_every_queued_push_and_frees_the_folder() {
    let dir = tempfile::tempdir().unwrap();
    let storage = SledStorage::open(dir.path()).unwrap();
    let caller = owner(&storage);
    let pending: Vec<PendingPush> = (1..=20u32).map(|i| storage.queue_push(&caller, "prj_a", request(i - 1, &[&format!("v{i}")]), &format!("k{i}"), "h").unwrap()).collect();
    drop(storage);
    let heads: Vec<u32> = pending.into_iter().map(|answer| done(&answer.blocking_recv().unwrap()).head).collect();
    assert_eq!(heads, (1..=20).collect::<Vec<_>>());
    let reopened = SledStorage::open(dir.path()).unwrap();
    assert_eq!(reopened.project(&caller.workspace_id, "prj_a").unwrap().head, 20);
}
