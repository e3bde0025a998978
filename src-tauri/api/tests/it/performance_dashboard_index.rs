//! The dashboard's fast path (publications and point lists kept in memory until the
//! store changes them, each row's latest values read from the snapshots' compact
//! metrics) answers exactly what the path before it answered: every publication decoded,
//! the points read from the store, each row's whole snapshots decoded. Compared over a
//! generated data set (five platforms, absent metrics, lower-bound and rounded values,
//! one-day windows, import rows with their raw rows, removed publications) for every
//! kind of query the view makes; again after writes (the cache must not answer stale);
//! and in a data folder written before the compact metrics existed (backfilled once
//! when it opens).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use chrono::TimeZone;
use inkstone_api::model::Platform;
use inkstone_api::performance::dashboard::{self as board, Dashboard, DashboardQuery, SortKey};
use inkstone_api::performance::metrics::{self, MetricPoint, MetricSnapshot, MetricUnit, MetricValue, SnapshotMetrics, SnapshotSource, SnapshotWindow};
use inkstone_api::performance::numbers::Qualifier;
use inkstone_api::performance::{accounts, all_publications, Distribution, Publication, PublicationFormat, Visibility};
use inkstone_api::store::{Batch, Durability, Kind, Record, Store};
use inkstone_api::{Engine, EngineConfig};
use inkstone_test_support::{Rng, TestEngine};
use serde_json::{json, Value};

const PLATFORMS: [Platform; 5] = [Platform::Wechat, Platform::Zhihu, Platform::X, Platform::Douyin, Platform::Xiaohongshu];
const KEYS: [&str; 6] = ["views", "likes", "readers", "impressions", "comments", "read_completion"];

/// `n` publications over `projects` and two accounts per platform, each with 0–9
/// snapshots of a random subset of keys (some lower bounds, some rounded), some
/// one-day windows and import rows; every 11th publication removed.
fn seed(t: &TestEngine, n: usize, seed: u64) -> Vec<String> {
    let mut rng = Rng::new(seed);
    let projects: Vec<String> = (0..4)
        .map(|i| {
            let id = t.ok("project.create", json!({"title": format!("项目 {i}"), "source": "# 项目\n\n正文。\n"}))["id"].as_str().unwrap().to_owned();
            t.ok("version.create", json!({"projectId": id}));
            id
        })
        .collect();
    let mut account_ids: BTreeMap<Platform, Vec<String>> = BTreeMap::new();
    for platform in PLATFORMS {
        for k in 0..2 {
            let id = t.ok("account.create", json!({"platform": platform.as_str(), "name": format!("{} {k}", platform.as_str())}))["id"].as_str().unwrap().to_owned();
            account_ids.entry(platform).or_default().push(id);
        }
    }
    let store = t.engine.kernel().store();
    let start = chrono::Utc.with_ymd_and_hms(2025, 1, 1, 0, 0, 0).unwrap();
    let mut batch = Batch::new();
    for i in 0..n {
        let platform = PLATFORMS[rng.below(5) as usize];
        let published_at = start + chrono::Duration::minutes(rng.below(400 * 24 * 60) as i64);
        let p = Publication {
            id: format!("pub_g{i:05}"),
            project_id: projects[rng.below(4) as usize].clone(),
            platform,
            version_number: 1,
            version_id: format!("ver_g{i:05}"),
            account_id: (rng.below(5) != 0).then(|| account_ids[&platform][rng.below(2) as usize].clone()),
            url: None,
            platform_post_id: None,
            title: format!("第 {} 篇", rng.below(50)),
            published_at,
            time_zone: if rng.below(3) == 0 { "UTC".into() } else { "Asia/Shanghai".into() },
            format: if rng.below(4) == 0 { PublicationFormat::Video } else { PublicationFormat::default_for(platform) },
            distribution: Distribution::default_for(platform),
            visibility: Visibility::Public,
            ai_changes: Vec::new(),
            previous_version_number: None,
            removed_at: (i % 11 == 0).then_some(published_at),
            created_by: "test".into(),
            created_at: published_at,
            updated_at: published_at,
        };
        batch.put(&p).unwrap();
        for s in 0..rng.below(10) {
            let age_hours = [6.0, 24.0, 30.0, 72.0, 100.0, 168.0, 200.0][rng.below(7) as usize] + s as f64;
            let observed_at = published_at + chrono::Duration::minutes((age_hours * 60.0) as i64);
            let mut metrics: BTreeMap<String, MetricValue> = BTreeMap::new();
            for key in KEYS {
                if rng.below(3) == 0 {
                    continue;
                }
                let (unit, value) = if key == "read_completion" { (MetricUnit::Ratio, rng.below(100) as f64 / 100.0) } else { (MetricUnit::Count, rng.below(20_000) as f64) };
                let qualifier = [Qualifier::Exact, Qualifier::Exact, Qualifier::LowerBound, Qualifier::Rounded][rng.below(4) as usize];
                metrics.insert(key.to_owned(), MetricValue { value, unit, qualifier, raw: format!("{value}") });
            }
            if metrics.is_empty() {
                continue;
            }
            let window = match rng.below(6) {
                0 => SnapshotWindow::Day { date: observed_at.date_naive() },
                _ => SnapshotWindow::Cumulative,
            };
            let source = if rng.below(3) == 0 {
                SnapshotSource::Import {
                    import_id: "imp_g".into(),
                    file_sha256: "sha256:00".into(),
                    importer: "x-content".into(),
                    importer_version: 1,
                    sheet: None,
                    row: s as u32 + 2,
                    raw_row: vec![("Impressions".into(), "1,234".into()), ("Likes".into(), "-".into())],
                }
            } else {
                SnapshotSource::Manual { author: "test".into() }
            };
            batch
                .put(&MetricSnapshot {
                    id: format!("snp_g{i:05}_{s:02}"),
                    publication_id: p.id.clone(),
                    project_id: p.project_id.clone(),
                    platform,
                    observed_at,
                    age_hours,
                    window,
                    source,
                    metrics,
                    extras: BTreeMap::new(),
                    created_at: observed_at,
                })
                .unwrap();
        }
    }
    store.apply(batch, Durability::Durable).unwrap();
    projects.into_iter().chain(account_ids.into_values().flatten()).collect()
}

/// The dashboard as it was computed before the fast path: every publication and every
/// point read from the store, each row from its whole snapshots (and its latest values
/// by [`board::latest_metrics`] over them).
fn reference(store: &Store, query: &DashboardQuery) -> Dashboard {
    let publications = all_publications(store).unwrap();
    let matching = board::matching(query, &publications);
    let mut points: HashMap<(Platform, String), Arc<Vec<MetricPoint>>> = HashMap::new();
    for (platform, key) in board::needed_points(query, &matching) {
        points.insert((platform, key.clone()), Arc::new(store.scan::<MetricPoint>(&MetricPoint::prefix(platform, &key)).unwrap()));
    }
    let mut board_ =
        board::dashboard(query, &matching, &points, &accounts(store).unwrap(), &mut |id| Ok(metrics::snapshots(store, id)?.iter().map(SnapshotMetrics::of).collect())).unwrap();
    for row in &mut board_.rows {
        let whole = metrics::snapshots(store, &row.publication.id).unwrap();
        row.latest = board::latest_metrics(&whole);
        row.snapshot_count = whole.len() as u32;
    }
    board_
}

fn query(params: &Value) -> DashboardQuery {
    let text = |k: &str| params.get(k).and_then(Value::as_str).map(str::to_owned);
    DashboardQuery {
        project_id: text("projectId"),
        platform: text("platform").map(|p| serde_json::from_value(json!(p)).unwrap()),
        account_id: text("accountId"),
        format: text("format").map(|f| serde_json::from_value(json!(f)).unwrap()),
        from: text("from").map(|f| f.parse().unwrap()),
        to: text("to").map(|f| f.parse().unwrap()),
        sort: match text("sort").as_deref() {
            None => SortKey::PublishedAt,
            Some("title") => SortKey::Title,
            Some(metric) => SortKey::Metric(metric.strip_prefix("metric:").unwrap().to_owned()),
        },
        descending: params.get("descending").and_then(Value::as_bool).unwrap_or(true),
        offset: params.get("offset").and_then(Value::as_u64).unwrap_or(0) as usize,
        limit: Some(params.get("limit").and_then(Value::as_u64).unwrap_or(200) as usize),
        metric: text("metric"),
        age: text("age").map(|a| serde_json::from_value(json!(a)).unwrap()),
        interval: text("interval").map(|i| serde_json::from_value(json!(i)).unwrap()),
    }
}

fn queries(ids: &[String]) -> Vec<Value> {
    vec![
        json!({}),
        json!({"platform": "wechat"}),
        json!({"accountId": ids[4]}),
        json!({"accountId": ids[9]}),
        json!({"format": "video"}),
        json!({"from": "2025-04-01T00:00:00Z", "to": "2025-07-01T00:00:00Z"}),
        json!({"sort": "metric:likes"}),
        json!({"sort": "metric:views", "descending": false, "offset": 30, "limit": 50}),
        json!({"metric": "likes", "age": "24h"}),
        json!({"metric": "read_completion", "age": "72h", "interval": "month"}),
        json!({"interval": "month", "sort": "title"}),
        json!({"projectId": ids[1]}),
        json!({"projectId": ids[2], "sort": "metric:readers"}),
    ]
}

/// Every query through the API equals the reference, twice (the second from memory).
fn check_all(t: &TestEngine, ids: &[String], when: &str) {
    let store = t.engine.kernel().store();
    for params in queries(ids) {
        let expected = serde_json::to_value(reference(store, &query(&params))).unwrap();
        for round in 0..2 {
            let got = t.ok("perf.dashboard", params.clone());
            assert_eq!(got, expected, "{when}: {params} (round {round})");
        }
    }
}

#[test]
fn the_fast_dashboard_answers_what_whole_snapshots_answer_before_and_after_writes() {
    let t = TestEngine::new();
    let ids = seed(&t, 400, 7);
    let store = t.engine.kernel().store();
    assert_eq!(store.count(Kind::SnapshotMetrics), store.count(Kind::MetricSnapshots), "one compact record per snapshot, written with it");
    check_all(&t, &ids, "seeded");
    // Absent stays absent and qualifiers stay: a row's values are the snapshots' own.
    let board = t.ok("perf.dashboard", json!({"limit": 1000}));
    let mut qualifiers = std::collections::BTreeSet::new();
    for row in board["rows"].as_array().unwrap() {
        for (key, latest) in row["latest"].as_object().unwrap() {
            assert!(KEYS.contains(&key.as_str()));
            qualifiers.insert(latest["qualifier"].as_str().unwrap().to_owned());
        }
    }
    assert_eq!(qualifiers.into_iter().collect::<Vec<_>>(), ["exact", "lowerBound", "rounded"]);
    assert!(board["rows"].as_array().unwrap().iter().any(|r| r["latest"].as_object().unwrap().len() < KEYS.len()), "some metric is absent somewhere");

    // Writes through the API: a new snapshot, an edited and a removed publication, a
    // new publication; every answer after them is the store's, not the memory's.
    let first = board["rows"][0]["publication"]["id"].as_str().unwrap().to_owned();
    t.ok("perf.add", json!({"publicationId": first, "metrics": {"likes": "10w+", "views": "1.2万"}, "observedAt": "2027-01-01 00:00"}));
    t.ok("publication.edit", json!({"publicationId": board["rows"][1]["publication"]["id"], "details": {"format": "video"}}));
    t.ok("publication.remove", json!({"publicationId": board["rows"][2]["publication"]["id"]}));
    t.ok("publication.add", json!({"projectId": ids[0], "platform": "x", "details": {"publishedAt": "2025-06-01 12:00"}}));
    check_all(&t, &ids, "after writes");
    let row = t.ok("perf.dashboard", json!({}))["rows"].as_array().unwrap().iter().find(|r| r["publication"]["id"] == first).cloned();
    if let Some(row) = row {
        assert_eq!(row["latest"]["likes"]["qualifier"], "lowerBound");
        assert_eq!(row["latest"]["views"]["qualifier"], "rounded");
    }
    // A confirmed removal deletes the compact records with the snapshots.
    let removed = board["rows"][2]["publication"]["id"].as_str().unwrap().to_owned();
    t.ok("publication.purge", json!({"publicationId": removed, "confirm": true}));
    assert_eq!(store.count(Kind::SnapshotMetrics), store.count(Kind::MetricSnapshots));
    check_all(&t, &ids, "after a purge");
}

/// The meta record that says the points and compact metrics were built.
#[derive(serde::Serialize, serde::Deserialize)]
struct PointsMarker {}

impl Record for PointsMarker {
    const KIND: Kind = Kind::Meta;
    fn key(&self) -> Vec<u8> {
        b"metric_points_v3".to_vec()
    }
}

/// A data folder written before the compact metrics (its snapshots without them, the
/// v2 marker) gets them once when it opens, and answers as before.
#[test]
fn a_folder_from_before_the_compact_metrics_is_backfilled_once_when_it_opens() {
    let t = TestEngine::new();
    let ids = seed(&t, 150, 11);
    let TestEngine { engine, dir } = t;
    {
        let store = engine.kernel().store();
        let mut batch = Batch::new();
        for record in store.scan::<SnapshotMetrics>(b"").unwrap() {
            batch.delete::<SnapshotMetrics>(record.key());
        }
        batch.delete::<PointsMarker>(b"metric_points_v3".to_vec());
        store.apply(batch, Durability::Durable).unwrap();
        assert_eq!(store.count(Kind::SnapshotMetrics), 0);
    }
    drop(engine);
    let engine = Engine::open(EngineConfig::for_tests(dir.path())).unwrap();
    let t = TestEngine { engine, dir };
    let store = t.engine.kernel().store();
    assert_eq!(store.count(Kind::SnapshotMetrics), store.count(Kind::MetricSnapshots));
    check_all(&t, &ids, "backfilled");
}
