//! Performance data travels with the workspace: two data folders through a real
//! server (and a seeded faulty proxy) end with the same accounts, publications and
//! snapshots, each exactly once; edits are last-writer-wins the same way everywhere;
//! a confirmed removal travels; an older server leaves the data here, says so, and
//! sends it all once the server is updated. Accounts' days (a WeChat 用户分析 import)
//! travel the same way: once each, a changed copy under the same id is a conflict the
//! status counts, and a server from before them leaves them here and says so.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use inkstone_api::sync::cycle::What;
use inkstone_test_support::Rng;
use serde_json::{json, Value};

use inkstone_server::storage::Storage;

use super::sync::*;

fn cycle(client: &Client, what: What) {
    client.engine.sync_runtime().run(client.engine.kernel(), what).unwrap_or_else(|e| panic!("{}: {e:?}", client.name));
}

fn status(client: &Client) -> Value {
    client.ok("sync.status", json!({}))
}

/// Cycles every client without faults until nothing is owed, then pulls once more each.
fn settle_perf(run: &str, clients: &[&Client]) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let mut busy = false;
        for client in clients {
            cycle(client, What::Both);
            let s = status(client);
            busy |= s["perfPending"] != 0 || s["pending"] != 0;
        }
        if !busy {
            for client in clients {
                cycle(client, What::Pull);
            }
            return;
        }
        assert!(Instant::now() < deadline, "{run}: the clients did not settle: {:?}", clients.iter().map(|c| status(c)).collect::<Vec<_>>());
    }
}

/// What a data folder shows of the workspace's performance data: each publication
/// (by id) with what the person typed, the content of the version it
/// names, and its snapshots (by id) with their numbers.
fn seen(client: &Client) -> BTreeMap<String, (Value, BTreeMap<String, Value>)> {
    let list = client.ok("publication.list", json!({"includeRemoved": true}));
    let mut out = BTreeMap::new();
    for entry in list["publications"].as_array().unwrap() {
        let p = &entry["publication"];
        let id = p["id"].as_str().unwrap().to_owned();
        let version = client.ok("version.get", json!({"projectId": p["projectId"], "number": p["versionNumber"]}));
        let facts = json!({
            "title": p["title"], "url": p["url"], "platform": p["platform"], "accountId": p["accountId"],
            "publishedAt": p["publishedAt"], "removedAt": p["removedAt"], "updatedAt": p["updatedAt"], "content": version["contentHash"],
        });
        let snapshots = client.ok("perf.list", json!({"publicationId": id}))["snapshots"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| (s["id"].as_str().unwrap().to_owned(), s["metrics"].clone()))
            .collect::<BTreeMap<_, _>>();
        out.insert(id, (facts, snapshots));
    }
    out
}

fn accounts(client: &Client) -> Vec<Value> {
    client.ok("account.list", json!({}))["accounts"].as_array().unwrap().clone()
}

fn perf_fault_run(seed: u64) -> BTreeMap<&'static str, u32> {
    let run = format!("run {seed} (replay with INKSTONE_PERF_FAULT_SEED={seed})");
    let server_dir = tempfile::tempdir().unwrap();
    let server = Server::start(server_dir.path());
    let (ws, tokens) = server.workspace(&["a", "b"]);
    let proxy = Proxy::start(server.addr, seed);
    let clients: Vec<Client> = ["A", "B"].iter().map(|n| Client::new(n)).collect();
    for (client, token) in clients.iter().zip(&tokens) {
        let mut tries = 0;
        while client.call("sync.connect", json!({"serverUrl": proxy.url, "token": token, "displayName": client.name})).is_err() {
            tries += 1;
            assert!(tries < 50, "{run}: cannot connect");
        }
    }
    // A shared project, on the server, in both folders.
    let shared = clients[0].new_project("共享", "一\n二\n");
    clients[0].ok("version.create", json!({"projectId": shared}));
    let mut tries = 0;
    while clients[0].ok("sync.push", json!({}))["status"]["pending"] != 0 {
        tries += 1;
        assert!(tries < 100, "{run}: the shared project did not reach the server");
    }
    while !clients[1].ok("project.list", json!({}))["projects"].as_array().unwrap().iter().any(|p| p["id"] == shared.as_str()) {
        let _ = clients[1].call("sync.pull", json!({}));
    }
    let made_snapshots: Mutex<BTreeSet<String>> = Mutex::default();
    let made_publications: Mutex<BTreeMap<String, usize>> = Mutex::default();
    std::thread::scope(|scope| {
        for (i, client) in clients.iter().enumerate() {
            let (shared, run, made_snapshots, made_publications) = (shared.clone(), run.clone(), &made_snapshots, &made_publications);
            scope.spawn(move || {
                let mut rng = Rng::new(seed ^ ((i as u64 + 1) * 0x9e37));
                let account = client.ok("account.create", json!({"platform": "wechat", "name": format!("{} 的号", client.name)}))["id"].as_str().unwrap().to_owned();
                let mut mine: Vec<String> = Vec::new();
                for step in 0..(4 + rng.below(4)) {
                    match (rng.below(4), mine.is_empty()) {
                        (0, _) | (_, true) => {
                            let details =
                                json!({"accountId": account, "url": format!("https://mp.weixin.qq.com/s/{}{step}", client.name), "title": format!("{} 第{step}篇", client.name)});
                            let p = client.ok("publication.add", json!({"projectId": shared, "platform": "wechat", "details": details}));
                            let id = p["id"].as_str().unwrap().to_owned();
                            made_publications.lock().unwrap().insert(id.clone(), i);
                            mine.push(id);
                        }
                        (1, false) => {
                            let target = &mine[rng.below(mine.len() as u64) as usize];
                            client.ok("publication.edit", json!({"publicationId": target, "details": {"title": format!("{} 改{step}", client.name)}}));
                        }
                        _ => {
                            // A snapshot of any publication this folder can see (a
                            // colleague's too, once pulled).
                            let visible: Vec<String> = client.ok("publication.list", json!({}))["publications"]
                                .as_array()
                                .unwrap()
                                .iter()
                                .map(|e| e["publication"]["id"].as_str().unwrap().to_owned())
                                .collect();
                            let target = &visible[rng.below(visible.len() as u64) as usize];
                            let views = format!("{}", 100 + rng.below(10_000));
                            let s = client.ok("perf.add", json!({"publicationId": target, "metrics": {"views": views, "likes": "1.2万"}}));
                            made_snapshots.lock().unwrap().insert(s["id"].as_str().unwrap().to_owned());
                        }
                    }
                    for _ in 0..(1 + rng.below(2)) {
                        client.engine.sync_runtime().run(client.engine.kernel(), What::Both).unwrap_or_else(|e| panic!("{run}: {e:?}"));
                    }
                }
            });
        }
    });
    proxy.faults(false);
    let refs: Vec<&Client> = clients.iter().collect();
    settle_perf(&run, &refs);

    // Both folders hold the same records, and every one that was made.
    let (a, b) = (seen(&clients[0]), seen(&clients[1]));
    assert_eq!(a, b, "{run}: the folders differ");
    let publications: BTreeSet<String> = a.keys().cloned().collect();
    assert_eq!(publications, made_publications.lock().unwrap().keys().cloned().collect::<BTreeSet<_>>(), "{run}: publications lost or made up");
    let snapshots: Vec<String> = a.values().flat_map(|(_, s)| s.keys().cloned()).collect();
    assert_eq!(snapshots.iter().cloned().collect::<BTreeSet<_>>(), *made_snapshots.lock().unwrap(), "{run}: snapshots lost or made up");
    assert_eq!(snapshots.len(), made_snapshots.lock().unwrap().len(), "{run}: a snapshot twice");
    assert_eq!(accounts(&clients[0]), accounts(&clients[1]), "{run}: accounts differ");
    assert_eq!(accounts(&clients[0]).len(), 2);
    // A colleague's publication says who added it: the member who pushed it.
    for (id, maker) in made_publications.lock().unwrap().iter() {
        let other = &clients[1 - maker];
        let got = other.ok("publication.get", json!({"publicationId": id}));
        assert_eq!(got["publication"]["createdBy"], ["a", "b"][*maker], "{run}: {id}");
    }
    // The server holds each record once.
    let page = server.storage.perf_changes(&ws, 0, 1_000_000).unwrap();
    let mut ids = BTreeSet::new();
    for record in &page.records {
        assert!(ids.insert((record.record.kind, record.record.id.clone())), "{run}: {} twice on the server", record.record.id);
    }
    assert_eq!(ids.len(), 2 + made_publications.lock().unwrap().len() + made_snapshots.lock().unwrap().len(), "{run}");
    let counts = proxy.counts.lock().unwrap().clone();
    counts
}

/// `INKSTONE_PERF_FAULT_RUNS` (default 3) seeded runs; `INKSTONE_PERF_FAULT_SEED`
/// replays one.
#[test]
fn two_data_folders_through_a_faulty_network_hold_the_same_performance_data_each_record_once() {
    let runs: u64 = std::env::var("INKSTONE_PERF_FAULT_RUNS").ok().and_then(|s| s.parse().ok()).unwrap_or(3);
    let seeds: Vec<u64> = match std::env::var("INKSTONE_PERF_FAULT_SEED").ok().and_then(|s| s.parse().ok()) {
        Some(seed) => vec![seed],
        None => (1..=runs).collect(),
    };
    let mut totals: BTreeMap<&'static str, u32> = BTreeMap::new();
    for seed in &seeds {
        for (fault, n) in perf_fault_run(*seed) {
            *totals.entry(fault).or_insert(0) += n;
        }
    }
    eprintln!("perf sync faults: {} runs, connections by fault: {totals:?}", seeds.len());
    assert!(totals.get("perfPushFaulted").copied().unwrap_or(0) > 0, "no performance push met a lost or repeated request");
}

/// Edits of one publication in two folders end the same in both: the later write
/// (`updatedAt`, then the edit's hash) wins, whoever syncs first. A confirmed removal
/// takes the publication and its snapshots from the other folder and the server.
#[test]
fn edits_are_last_writer_wins_everywhere_and_a_confirmed_removal_travels() {
    let server_dir = tempfile::tempdir().unwrap();
    let server = Server::start(server_dir.path());
    let (ws, tokens) = server.workspace(&["a", "b"]);
    let b_clock = std::sync::Arc::new(inkstone_api::clock::FakeClock::new(1000));
    let a_clock = std::sync::Arc::new(inkstone_api::clock::FakeClock::new(1000));
    let a = Client::with("A", |config| config.clock = a_clock.clone());
    let b = Client::with("B", |config| config.clock = b_clock.clone());
    a.connect(&server.url, &tokens[0]);
    b.connect(&server.url, &tokens[1]);
    let project = a.new_project("稿", "正文\n");
    a.ok("version.create", json!({"projectId": project}));
    let p = a.ok("publication.add", json!({"projectId": project, "platform": "zhihu", "details": {"title": "初"}}))["id"].as_str().unwrap().to_owned();
    let kept = a.ok("perf.add", json!({"publicationId": p, "metrics": {"upvotes": "12"}}))["id"].as_str().unwrap().to_owned();
    cycle(&a, What::Both);
    assert_eq!(status(&a)["perfPending"], 0);
    cycle(&b, What::Both);
    let theirs = b.ok("publication.get", json!({"publicationId": p}))["publication"].clone();
    assert_eq!((theirs["title"].as_str(), theirs["createdBy"].as_str()), (Some("初"), Some("a")), "{theirs}");
    // B's copy names B's own local version of the same content.
    assert_eq!(b.ok("version.get", json!({"projectId": project, "number": theirs["versionNumber"]}))["source"], "正文\n");

    // Both edit; B's edit is the later one (its clock moved on), yet A syncs last.
    a.ok("publication.edit", json!({"publicationId": p, "details": {"title": "A 的改"}}));
    b_clock.advance_millis(3_600_000);
    b.ok("publication.edit", json!({"publicationId": p, "details": {"title": "B 的改"}}));
    cycle(&b, What::Both);
    cycle(&a, What::Both);
    cycle(&b, What::Both);
    for client in [&a, &b] {
        let got = client.ok("publication.get", json!({"publicationId": p}));
        assert_eq!(got["publication"]["title"], "B 的改", "{}", client.name);
        assert_eq!(status(client)["perfPending"], 0, "{}", client.name);
    }
    // A snapshot is never replaced: B holds A's as A wrote it.
    let list = b.ok("perf.list", json!({"publicationId": p}));
    assert_eq!(list["snapshots"][0]["id"], kept.as_str());
    assert_eq!(list["snapshots"][0]["metrics"]["upvotes"]["value"], 12.0);

    // A removes it (recoverable: it travels as an edit), then confirms. (A removal is
    // a write like any other: A's clock must be past B's edit for it to win.)
    a_clock.advance_millis(7_200_000);
    a.ok("publication.remove", json!({"publicationId": p}));
    cycle(&a, What::Both);
    cycle(&b, What::Both);
    assert!(b.ok("publication.list", json!({}))["publications"].as_array().unwrap().is_empty(), "a removed publication is hidden in B too");
    a.ok("publication.purge", json!({"publicationId": p, "confirm": true}));
    cycle(&a, What::Both);
    cycle(&b, What::Both);
    assert!(b.call("publication.get", json!({"publicationId": p})).is_err(), "the confirmed removal did not reach B");
    assert_eq!(b.engine.store().count(inkstone_api::store::Kind::MetricSnapshots), 0);
    let on_server = server.storage.perf_changes(&ws, 0, 1000).unwrap();
    assert!(on_server.records.iter().all(|r| r.record.kind != inkstone_sync_proto::PerfKind::Snapshot), "the server kept a purged publication's snapshot");
}

/// An older server (no `performanceData`): the app keeps working, never asks it, says
/// sync of performance data is unavailable and keeps what it owes; once the server is
/// updated, everything goes, and a folder connected later receives it.
#[test]
fn an_older_server_leaves_performance_data_here_and_says_so_until_it_is_updated() {
    let server_dir = tempfile::tempdir().unwrap();
    let server = Server::start_old(server_dir.path());
    let (ws, tokens) = server.workspace(&["a", "b"]);
    let a = Client::new("A");
    a.connect(&server.url, &tokens[0]);
    let project = a.new_project("稿", "正文\n");
    a.ok("version.create", json!({"projectId": project}));
    let account = a.ok("account.create", json!({"platform": "x", "name": "官方号"}))["id"].as_str().unwrap().to_owned();
    let p = a.ok("publication.add", json!({"projectId": project, "platform": "x", "details": {"accountId": account}}))["id"].as_str().unwrap().to_owned();
    a.ok("perf.add", json!({"publicationId": p, "metrics": {"impressions": "2.5k"}}));
    for _ in 0..3 {
        let pushed = a.ok("sync.push", json!({}));
        assert!(pushed.get("error").is_none(), "an older server is not an error: {pushed}");
    }
    let s = status(&a);
    assert_eq!((s["perfUnavailable"].as_bool(), s["perfPending"].as_u64(), s["pending"].as_u64()), (Some(true), Some(3), Some(0)), "{s}");
    assert_eq!(s["state"], "synced", "versions still sync: {s}");
    assert!(a.ok("perf.report", json!({"platform": "x"})).is_object(), "the local views keep working");

    // The server is updated in place: the next cycle sends what was owed.
    let server = server.restart();
    cycle(&a, What::Both);
    let s = status(&a);
    assert_eq!((s["perfUnavailable"].as_bool(), s["perfPending"].as_u64()), (Some(false), Some(0)), "{s}");
    assert_eq!(server.storage.perf_changes(&ws, 0, 100).unwrap().records.len(), 3);
    let b = Client::new("B");
    b.connect(&server.url, &tokens[1]);
    cycle(&b, What::Both);
    assert_eq!(seen(&a), seen(&b));
    assert_eq!(accounts(&a), accounts(&b));
}

fn user_analysis_file() -> Vec<u8> {
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/performance");
    std::fs::read(fixtures.join("wechat-user-analysis.xls")).unwrap()
}

/// Imports the WeChat 用户分析 fixture into the folder's WeChat account; its day ids.
fn import_days(client: &Client, account: &str) -> Vec<String> {
    use base64::Engine as _;
    let data = base64::engine::general_purpose::STANDARD.encode(user_analysis_file());
    let done = client.ok("perf.import", json!({"dataBase64": data, "fileName": "用户分析.xls", "accountId": account, "commit": true}));
    assert_eq!(done["committed"], true, "{done}");
    done["snapshots"].as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_owned()).collect()
}

fn days(client: &Client, account: &str) -> Value {
    client.ok("perf.accountDays", json!({"accountId": account}))["days"].clone()
}

fn server_days(server: &Server, ws: &str) -> Vec<inkstone_server::proto::ServerPerfRecord> {
    let all = server.storage.perf_changes(ws, 0, 100_000).unwrap().records;
    all.into_iter().filter(|r| r.record.kind == inkstone_sync_proto::PerfKind::AccountSnapshot).collect()
}

/// Forgets that the days were queued, as a data folder of a build before account days
/// travelled (it staged none): the next cycle queues every day this folder holds.
fn as_if_upgraded(client: &Client) {
    use inkstone_api::performance::sync::{PerfSyncState, META_PERF_SYNC};
    use inkstone_api::store::{Batch, Durability};
    let store = client.engine.store();
    let mut state = store.get::<PerfSyncState>(META_PERF_SYNC).unwrap().unwrap();
    state.queued_account_days = false;
    let mut batch = Batch::new();
    batch.put(&state).unwrap();
    store.apply(batch, Durability::Durable).unwrap();
}

/// A imports a WeChat 用户分析 file into its account and syncs; B syncs and sees the same
/// days of the same account. Each day is on the server once; resending them all (a
/// folder upgraded from a build that kept days local: A its own, B the pulled ones)
/// changes nothing and is no conflict. A copy of a day changed under its id is refused
/// as a conflict: the status counts it, it is not sent again, the server and B keep the
/// first copy.
#[test]
fn accounts_days_from_an_import_reach_a_colleague_once_and_a_changed_copy_is_a_conflict() {
    let Connected { server_dir: _server_dir, server, ws, clients: [a, b] } = connected(["A", "B"]);
    let account = a.ok("account.create", json!({"platform": "wechat", "name": "墨砚官方号"}))["id"].as_str().unwrap().to_owned();
    let made = import_days(&a, &account);
    assert_eq!(made.len(), 3);
    assert_eq!(status(&a)["perfPending"], 4, "the account and its three days are owed");
    cycle(&a, What::Both);
    let s = status(&a);
    assert_eq!((s["perfPending"].as_u64(), s["perfAccountDaysLocal"].as_u64(), s["perfConflicts"].as_u64()), (Some(0), Some(0), Some(0)), "{s}");
    cycle(&b, What::Both);
    assert_eq!(accounts(&a), accounts(&b));
    let theirs = days(&b, &account);
    assert_eq!(theirs, days(&a, &account), "B sees A's days as A holds them");
    let dates: Vec<&str> = theirs.as_array().unwrap().iter().map(|d| d["date"].as_str().unwrap()).collect();
    assert_eq!(dates, ["2026-03-01", "2026-03-02", "2026-03-03"]);
    assert_eq!(theirs[0]["metrics"]["followers_total"]["value"], 1204.0);
    assert!(theirs[2]["metrics"].get("followers_lost").is_none(), "absent stays absent, never 0");
    assert_eq!(server_days(&server, &ws).len(), 3);
    assert_eq!(status(&b)["perfPending"], 0, "pulled days are not sent back");

    // Everything again, from both folders: nothing new on the server, no conflict.
    let top = server.storage.perf_changes(&ws, 0, 100_000).unwrap().cursor;
    for client in [&a, &b] {
        as_if_upgraded(client);
        cycle(client, What::Both);
        let s = status(client);
        assert_eq!((s["perfPending"].as_u64(), s["perfConflicts"].as_u64()), (Some(0), Some(0)), "{}: {s}", client.name);
    }
    assert_eq!(server.storage.perf_changes(&ws, 0, 100_000).unwrap().cursor, top, "a resend took a cursor");

    // A's copy of a day changes under its id (a hand-edited or restored data folder).
    {
        use inkstone_api::performance::account_days::{snapshots, AccountSnapshot};
        use inkstone_api::store::{Batch, Durability};
        let kernel = a.engine.kernel();
        let mut day: AccountSnapshot = snapshots(kernel.store(), &account).unwrap().into_iter().find(|d| d.id == made[0]).unwrap();
        day.metrics.get_mut("followers_total").unwrap().value = 9999.0;
        let mut batch = Batch::new();
        batch.put(&day).unwrap();
        inkstone_api::performance::sync::stage_day_delivery(kernel, &mut batch, &day).unwrap();
        kernel.store().apply(batch, Durability::Durable).unwrap();
    }
    for _ in 0..3 {
        cycle(&a, What::Both);
    }
    let s = status(&a);
    assert_eq!((s["perfConflicts"].as_u64(), s["perfPending"].as_u64(), s["state"].as_str()), (Some(1), Some(0), Some("synced")), "{s}");
    assert_eq!(server.storage.perf_changes(&ws, 0, 100_000).unwrap().cursor, top, "a conflict wrote something, or was sent again");
    let held = server_days(&server, &ws);
    assert!(held.iter().all(|r| !r.record.body.as_deref().unwrap().contains("9999")), "the server replaced a day");
    cycle(&b, What::Both);
    assert_eq!(days(&b, &account)[0]["metrics"]["followers_total"]["value"], 1204.0, "B keeps the first copy");
}

/// A server from before accounts' days (it keeps performance data, not days): the days
/// stay here and the status says so, with no error and no resend loop, while the
/// account and the rest still travel; once the server is updated they go, and a
/// colleague sees them.
#[test]
fn a_server_before_account_days_leaves_them_here_and_says_so_until_it_is_updated() {
    let server_dir = tempfile::tempdir().unwrap();
    let server = Server::start_before_account_days(server_dir.path());
    let (ws, tokens) = server.workspace(&["a", "b"]);
    let a = Client::new("A");
    a.connect(&server.url, &tokens[0]);
    let account = a.ok("account.create", json!({"platform": "wechat", "name": "墨砚官方号"}))["id"].as_str().unwrap().to_owned();
    import_days(&a, &account);
    for _ in 0..3 {
        let pushed = a.ok("sync.push", json!({}));
        assert!(pushed.get("error").is_none(), "an older server is not an error: {pushed}");
    }
    let s = status(&a);
    assert_eq!(
        (s["perfUnavailable"].as_bool(), s["perfAccountDaysLocal"].as_u64(), s["perfPending"].as_u64(), s["state"].as_str(), s.get("lastError")),
        (Some(false), Some(3), Some(0), Some("synced"), None),
        "{s}"
    );
    let on_server = server.storage.perf_changes(&ws, 0, 100).unwrap().records;
    assert_eq!(on_server.iter().map(|r| r.record.kind.as_str()).collect::<Vec<_>>(), ["account"], "only the account went");

    let server = server.restart();
    cycle(&a, What::Both);
    let s = status(&a);
    assert_eq!((s["perfAccountDaysLocal"].as_u64(), s["perfPending"].as_u64()), (Some(0), Some(0)), "{s}");
    assert_eq!(server_days(&server, &ws).len(), 3);
    let b = Client::new("B");
    b.connect(&server.url, &tokens[1]);
    cycle(&b, What::Both);
    assert_eq!(days(&b, &account), days(&a, &account));
}

/// Deleting an account takes its days with it everywhere: here at once, on the server
/// when the deletion arrives, and in a colleague's folder when it syncs. A colleague who
/// still sends the days (queued before it heard of the deletion) does not bring them
/// back: the server keeps no day of a deleted account.
#[test]
fn a_deleted_accounts_days_go_here_on_the_server_and_at_a_colleagues_and_do_not_come_back() {
    use inkstone_api::store::Kind;
    let server_dir = tempfile::tempdir().unwrap();
    let server = Server::start(server_dir.path());
    let (ws, tokens) = server.workspace(&["a", "b"]);
    let (a, b) = (Client::new("A"), Client::new("B"));
    a.connect(&server.url, &tokens[0]);
    b.connect(&server.url, &tokens[1]);
    let account = a.ok("account.create", json!({"platform": "wechat", "name": "墨砚官方号"}))["id"].as_str().unwrap().to_owned();
    import_days(&a, &account);
    cycle(&a, What::Both);
    cycle(&b, What::Both);
    assert_eq!(days(&b, &account).as_array().unwrap().len(), 3);
    assert_eq!(server_days(&server, &ws).len(), 3);

    a.ok("account.delete", json!({"accountId": account}));
    assert_eq!(a.engine.store().count(Kind::AccountSnapshots), 0, "the days stayed here");
    assert_eq!(status(&a)["perfPending"], 1, "only the account's deletion is owed");
    cycle(&a, What::Both);
    assert!(server_days(&server, &ws).is_empty(), "the server kept the deleted account's days");

    // B still sends its copies of the days (as a folder that queues every day it holds).
    as_if_upgraded(&b);
    cycle(&b, What::Both);
    cycle(&b, What::Both);
    assert_eq!(b.engine.store().count(Kind::AccountSnapshots), 0, "B kept the deleted account's days");
    assert!(accounts(&b).is_empty());
    assert!(server_days(&server, &ws).is_empty(), "B's copies brought the days back to the server");
    cycle(&a, What::Both);
    assert_eq!(a.engine.store().count(Kind::AccountSnapshots), 0, "the days came back here");
    let s = status(&b);
    assert_eq!((s["perfPending"].as_u64(), s["perfConflicts"].as_u64()), (Some(0), Some(0)), "{s}");
}
