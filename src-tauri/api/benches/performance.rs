//! Performance data at a busy creator's scale, through `Engine::call` on real sled:
//!
//! - importing a 10,000-row platform export (X's content export as CSV, every row
//!   matched by its post id to one of 10,000 publications): the preview, then the commit
//!   (one batch, durable);
//! - the workspace dashboard (`perf.dashboard`) over 5,000 publications × 10 snapshots
//!   (five platforms, ten accounts; the tenth snapshot of each an import row with its raw
//!   row kept, as imports write them): p50/p95 per query the view makes (target p95 under
//!   50 ms), and the CSV export of every row;
//! - the before/after report (`perf.report`) on the same data, per platform and age
//!   (target p95 under 100 ms);
//! - the AI's performance summary (`perf.summary`, per platform) and the context layer
//!   a model call builds from it (`performance::context::layer_text` over the five
//!   platforms, as for a project that names none).
//!
//! `cargo bench -p inkstone-core --bench performance` prints the figures; under
//! `cargo test` (no `--bench` argument) it runs on 300 rows and 200 publications as a
//! smoke test. `PERF_BENCH_ROUNDS=n` sets the rounds per query (60 with `--bench`): a
//! debug build's relative figures need fewer; `PERF_BENCH_CLOCK=cpu` times by this
//! thread's CPU time instead of the wall clock (figures on a loaded machine).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use chrono::TimeZone;
use inkstone_api::model::Platform;
use inkstone_api::performance::metrics::{MetricSnapshot, MetricUnit, MetricValue, SnapshotSource, SnapshotWindow};
use inkstone_api::performance::numbers::Qualifier;
use inkstone_api::performance::{AiChange, Distribution, Publication, PublicationFormat, Visibility};
use inkstone_api::store::{Batch, Durability};
use inkstone_test_support::TestEngine;
use serde_json::{json, Value};

fn percentile(values: &mut [Duration], p: f64) -> Duration {
    values.sort();
    let index = ((values.len() as f64 - 1.0) * p).round() as usize;
    values[index]
}

/// This thread's CPU time (Linux: `/proc/thread-self/schedstat`, in ns).
fn cpu_now() -> Option<Duration> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    text.split_whitespace().next()?.parse::<u64>().ok().map(Duration::from_nanos)
}

/// A stopwatch on the clock the run asked for: wall time, or with `PERF_BENCH_CLOCK=cpu`
/// this thread's CPU time (a debug build's relative figures on a loaded machine).
struct Watch {
    wall: Instant,
    cpu: Option<Duration>,
}

impl Watch {
    fn start() -> Watch {
        let cpu = if std::env::var("PERF_BENCH_CLOCK").as_deref() == Ok("cpu") { cpu_now() } else { None };
        Watch { wall: Instant::now(), cpu }
    }

    fn elapsed(&self) -> Duration {
        match (self.cpu, cpu_now()) {
            (Some(began), Some(now)) => now.saturating_sub(began),
            _ => self.wall.elapsed(),
        }
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

const PLATFORMS: [Platform; 5] = [Platform::Wechat, Platform::Zhihu, Platform::X, Platform::Douyin, Platform::Xiaohongshu];

fn keys_of(platform: Platform) -> &'static [&'static str] {
    match platform {
        Platform::Wechat => &["readers", "views", "likes", "wow", "shares", "read_completion"],
        Platform::Zhihu => &["views", "upvotes", "zhihu_likes", "comments", "saves"],
        Platform::X => &["impressions", "likes", "reposts", "comments", "engagements"],
        Platform::Douyin => &["views", "likes", "comments", "shares", "play_completion"],
        Platform::Xiaohongshu => &["impressions", "views", "likes", "saves", "cover_ctr"],
    }
}

fn publication(i: usize, project_id: &str, platform: Platform, account_id: &str, published_at: chrono::DateTime<chrono::Utc>, post_id: Option<String>) -> Publication {
    Publication {
        id: format!("pub_b{i:08}"),
        project_id: project_id.to_owned(),
        platform,
        version_number: 1,
        version_id: format!("ver_b{i:08}"),
        account_id: Some(account_id.to_owned()),
        url: None,
        platform_post_id: post_id,
        title: format!("第 {i} 篇：春天来了"),
        published_at,
        time_zone: if platform == Platform::X { "UTC".into() } else { "Asia/Shanghai".into() },
        format: if i.is_multiple_of(4) { PublicationFormat::Video } else { PublicationFormat::default_for(platform) },
        distribution: if i.is_multiple_of(17) { Distribution::Boosted } else { Distribution::default_for(platform) },
        visibility: Visibility::Public,
        ai_changes: if i.is_multiple_of(3) {
            vec![AiChange {
                version_number: 1,
                proposal_id: Some(format!("prp_b{i}")),
                proposal_kind: Some("source_patch".into()),
                session_id: None,
                run_id: None,
                model: Some("m".into()),
                pulled_from: None,
            }]
        } else {
            Vec::new()
        },
        previous_version_number: None,
        removed_at: None,
        created_by: "bench".into(),
        created_at: published_at,
        updated_at: published_at,
    }
}

/// 5,000 publications (or `n`) with 10 snapshots each at ages 6 h … 20 d.
fn seed_dashboard(t: &TestEngine, n: usize, projects: &[String], accounts: &BTreeMap<Platform, Vec<String>>) {
    let store = t.engine.kernel().store();
    let start = chrono::Utc.with_ymd_and_hms(2025, 1, 1, 0, 0, 0).unwrap();
    let ages = [6.0, 12.0, 24.0, 30.0, 48.0, 72.0, 100.0, 168.0, 200.0, 480.0];
    let mut batch = Batch::new();
    for i in 0..n {
        let platform = PLATFORMS[i % 5];
        let account = &accounts[&platform][(i / 5) % 2];
        // Spread over a year, at varied hours.
        let published_at = start + chrono::Duration::minutes((i as i64) * 97 + (i as i64 % 13) * 60);
        let p = publication(i, &projects[i % projects.len()], platform, account, published_at, None);
        batch.put(&p).unwrap();
        let level = 500.0 + ((i * 7919) % 5000) as f64;
        for (s, age) in ages.iter().enumerate() {
            let grown = level * (1.0 + s as f64 * 0.3);
            let metrics: BTreeMap<String, MetricValue> = keys_of(platform)
                .iter()
                .enumerate()
                .filter(|(k, _)| (i + k + s) % 7 != 0)
                .map(|(k, key)| {
                    let ratio = key.ends_with("completion") || *key == "cover_ctr";
                    let value = if ratio { 0.1 + (k as f64) * 0.05 } else { (grown / (k as f64 + 1.0)).round() };
                    ((*key).to_owned(), MetricValue { value, unit: if ratio { MetricUnit::Ratio } else { MetricUnit::Count }, qualifier: Qualifier::Exact, raw: value.to_string() })
                })
                .collect();
            let source = if s == 9 {
                SnapshotSource::Import {
                    import_id: format!("imp_b{}", i / 1000),
                    file_sha256: "sha256:0000000000000000000000000000000000000000000000000000000000000000".into(),
                    importer: "x-content".into(),
                    importer_version: 1,
                    sheet: None,
                    row: (i % 1000) as u32 + 2,
                    raw_row: [
                        "Post id",
                        "Date",
                        "Post text",
                        "Post Link",
                        "Impressions",
                        "Likes",
                        "Engagements",
                        "Bookmarks",
                        "Shares",
                        "New follows",
                        "Replies",
                        "Reposts",
                        "Profile visits",
                        "Detail Expands",
                        "URL Clicks",
                        "Hashtag Clicks",
                        "Permalink Clicks",
                    ]
                    .iter()
                    .map(|h| ((*h).to_owned(), format!("{h} {i}")))
                    .collect(),
                }
            } else {
                SnapshotSource::Manual { author: "bench".into() }
            };
            let observed_at = published_at + chrono::Duration::minutes((age * 60.0) as i64);
            batch
                .put(&MetricSnapshot {
                    id: format!("snp_b{i:08}_{s:02}"),
                    publication_id: p.id.clone(),
                    project_id: p.project_id.clone(),
                    platform,
                    observed_at,
                    age_hours: *age,
                    window: SnapshotWindow::Cumulative,
                    source,
                    metrics,
                    extras: BTreeMap::new(),
                    created_at: observed_at,
                })
                .unwrap();
        }
        if batch.len() >= 20_000 {
            store.apply(std::mem::take(&mut batch), Durability::Grouped).unwrap();
        }
    }
    store.apply(batch, Durability::Durable).unwrap();
}

fn time(t: &TestEngine, rounds: usize, method: &str, params: &Value) -> (Duration, Duration, Value) {
    let mut times = Vec::with_capacity(rounds);
    let mut last = Value::Null;
    for _ in 0..rounds {
        let began = Watch::start();
        last = t.ok(method, params.clone());
        times.push(began.elapsed());
    }
    (percentile(&mut times, 0.5), percentile(&mut times, 0.95), last)
}

fn bench_import(n_rows: usize) {
    let t = TestEngine::new();
    let project = t.ok("project.create", json!({"title": "基准", "source": "# 基准\n\n正文。\n"}))["id"].as_str().unwrap().to_owned();
    t.ok("version.create", json!({"projectId": project}));
    let account = t.ok("account.create", json!({"platform": "x", "name": "bench"}))["id"].as_str().unwrap().to_owned();
    let start = chrono::Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
    let store = t.engine.kernel().store();
    let mut batch = Batch::new();
    for i in 0..n_rows {
        let published_at = start + chrono::Duration::minutes(i as i64 * 30);
        batch.put(&publication(i, &project, Platform::X, &account, published_at, Some(format!("{}", 1_800_000_000_000_000_000u64 + i as u64)))).unwrap();
    }
    store.apply(batch, Durability::Durable).unwrap();
    let mut csv = String::from("\u{feff}Post id,Date,Post text,Post Link,Impressions,Likes,Engagements,Bookmarks,Shares,New follows,Replies,Reposts,Profile visits,Detail Expands,URL Clicks,Hashtag Clicks,Permalink Clicks\r\n");
    for i in 0..n_rows {
        let id = 1_800_000_000_000_000_000u64 + i as u64;
        let date = (start + chrono::Duration::minutes(i as i64 * 30)).format("%a, %b %-d, %Y");
        csv.push_str(&format!(
            "{id},\"{date}\",\"第 {i} 篇：春天来了 #写作\",https://x.com/inkstone/status/{id},\"{},{:03}\",{},{},{},{},{},{},{},{},{},{},{},{}\r\n",
            1 + i % 90,
            i % 1000,
            i % 500,
            i % 300,
            i % 40,
            i % 30,
            i % 20,
            i % 10,
            i % 25,
            i % 15,
            i % 60,
            i % 35,
            i % 5,
            i % 45
        ));
    }
    let path = t.data_dir().join("account_analytics_content_2026-01-01_2026-07-31.csv");
    std::fs::write(&path, &csv).unwrap();
    let params = json!({"path": path.display().to_string()});
    let began = Watch::start();
    let preview = t.ok("perf.import", params.clone());
    let preview_time = began.elapsed();
    assert_eq!(preview["preview"]["matched"], n_rows as u64, "every row matched by its post id");
    let began = Watch::start();
    let committed = t.ok("perf.import", json!({"path": path.display().to_string(), "commit": true}));
    let commit_time = began.elapsed();
    assert_eq!(committed["committed"], true);
    assert_eq!(committed["snapshots"].as_array().unwrap().len(), n_rows);
    println!(
        "perf.import of a {n_rows}-row X content export ({:.1} MB) against {n_rows} publications: preview {:.0} ms, commit (preview again + one durable batch) {:.0} ms",
        csv.len() as f64 / 1e6,
        ms(preview_time),
        ms(commit_time)
    );
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let (n_rows, n_publications, rounds) = if full { (10_000usize, 5_000usize, 60usize) } else { (300, 200, 2) };
    let rounds = std::env::var("PERF_BENCH_ROUNDS").ok().and_then(|r| r.parse::<usize>().ok()).filter(|r| *r > 0).unwrap_or(rounds);

    // `PERF_BENCH_SKIP_IMPORT=1` measures the dashboard and the report only.
    if std::env::var_os("PERF_BENCH_SKIP_IMPORT").is_none() {
        bench_import(n_rows);
    }

    let t = TestEngine::new();
    let projects: Vec<String> = (0..50)
        .map(|i| {
            let id = t.ok("project.create", json!({"title": format!("项目 {i}"), "source": "# 项目\n\n正文。\n"}))["id"].as_str().unwrap().to_owned();
            t.ok("version.create", json!({"projectId": id}));
            id
        })
        .collect();
    let mut accounts: BTreeMap<Platform, Vec<String>> = BTreeMap::new();
    for platform in PLATFORMS {
        for k in 0..2 {
            let id = t.ok("account.create", json!({"platform": platform.as_str(), "name": format!("{} {k}", platform.as_str())}))["id"].as_str().unwrap().to_owned();
            accounts.entry(platform).or_default().push(id);
        }
    }
    let began = Instant::now();
    seed_dashboard(&t, n_publications, &projects, &accounts);
    println!("seeded {n_publications} publications × 10 snapshots in {:.1} s", began.elapsed().as_secs_f64());

    let x_account = accounts[&Platform::X][0].clone();
    let queries: Vec<(&str, Value)> = vec![
        ("the view opening (newest 200)", json!({})),
        ("one platform", json!({"platform": "wechat"})),
        ("one account", json!({"accountId": x_account})),
        ("one format", json!({"format": "video"})),
        ("a date range (a quarter)", json!({"from": "2025-04-01T00:00:00Z", "to": "2025-07-01T00:00:00Z"})),
        ("sorted by a metric", json!({"sort": "metric:likes"})),
        ("medians of one key at 24 h", json!({"metric": "likes", "age": "24h"})),
        ("medians by month", json!({"interval": "month"})),
        ("one project", json!({"projectId": projects[7]})),
    ];
    let mut worst = Duration::ZERO;
    for (name, params) in &queries {
        let (p50, p95, board) = time(&t, rounds, "perf.dashboard", params);
        worst = worst.max(p95);
        println!("perf.dashboard {name:<32} rows {:>4} of {:>5}  p50 {:>7.2} ms  p95 {:>7.2} ms", board["rows"].as_array().unwrap().len(), board["total"], ms(p50), ms(p95));
    }
    println!("perf.dashboard worst p95: {:.2} ms (target < 50 ms)", ms(worst));
    let began = Watch::start();
    let export = t.ok("perf.export", json!({"dashboard": {}}));
    println!("perf.export of the whole dashboard: {} rows, {:.1} MB, {:.0} ms", export["nRows"], export["csv"].as_str().unwrap().len() as f64 / 1e6, ms(began.elapsed()));

    let mut worst = Duration::ZERO;
    for platform in PLATFORMS {
        for bucket in ["24h", "7d"] {
            let params = json!({"platform": platform.as_str(), "bucket": bucket});
            let (p50, p95, report) = time(&t, rounds, "perf.report", &params);
            worst = worst.max(p95);
            println!(
                "perf.report {:<12} {bucket:<4} points {:>4}  with AI n={:<4} without n={:<4}  p50 {:>7.2} ms  p95 {:>7.2} ms",
                platform.as_str(),
                report["points"].as_array().unwrap().len(),
                report["withAi"]["n"],
                report["withoutAi"]["n"],
                ms(p50),
                ms(p95)
            );
        }
    }
    let (p50, p95, _) = time(&t, rounds, "perf.report", &json!({"platform": "x", "projectId": projects[2]}));
    worst = worst.max(p95);
    println!("perf.report x, one project                                          p50 {:>7.2} ms  p95 {:>7.2} ms", ms(p50), ms(p95));
    println!("perf.report worst p95: {:.2} ms (target < 100 ms)", ms(worst));
    // Where a report's time goes: the publications, the key's points and the
    // snapshots' stamps it reads, and (for comparison) every snapshot of the platform,
    // which it read before the point index.
    {
        use inkstone_api::performance::{all_publications, metrics, report};
        let store = t.engine.kernel().store();
        let w = Watch::start();
        let publications: Vec<Publication> = all_publications(store).unwrap().into_iter().filter(|p| p.platform == Platform::X).collect();
        let publications_time = w.elapsed();
        let w = Watch::start();
        let observed = report::load_observations(store, Platform::X, "impressions", &publications, &[report::AgeBucket::H24]).unwrap();
        let index_time = w.elapsed();
        let w = Watch::start();
        let snapshots: BTreeMap<String, Vec<MetricSnapshot>> = publications.iter().map(|p| (p.id.clone(), metrics::snapshots(store, &p.id).unwrap())).collect();
        let snapshots_time = w.elapsed();
        let query = report::ReportQuery { platform: Platform::X, project_id: None, metric: "impressions".into(), bucket: report::AgeBucket::H24, include_boosted: false };
        let w = Watch::start();
        let from_index = report::before_after_observed(&query, &publications, &observed);
        let compute_time = w.elapsed();
        assert_eq!(from_index, report::before_after(&query, &publications, &snapshots), "the index and the snapshots give one report");
        println!(
            "perf.report x 24h, its parts: every publication decoded {:.0} ms; the key's points (and the stamps of posts without one at 24 h) {:.0} ms (the platform's whole snapshots, as before: {:.0} ms); the report itself {:.0} ms",
            ms(publications_time),
            ms(index_time),
            ms(snapshots_time),
            ms(compute_time)
        );
    }

    let mut worst = Duration::ZERO;
    for platform in PLATFORMS {
        let (p50, p95, summary) = time(&t, rounds, "perf.summary", &json!({"platform": platform.as_str()}));
        worst = worst.max(p95);
        assert!(!summary["text"].as_str().unwrap().is_empty(), "the summary of {} says something", platform.as_str());
        println!(
            "perf.summary {:<12} eligible {:>4} at {:<4}  p50 {:>7.2} ms  p95 {:>7.2} ms",
            platform.as_str(),
            summary["eligible"],
            summary["bucket"].as_str().unwrap(),
            ms(p50),
            ms(p95)
        );
    }
    println!("perf.summary worst p95: {:.2} ms", ms(worst));
    let store = t.engine.kernel().store();
    let mut times = Vec::with_capacity(rounds);
    let mut text = String::new();
    for _ in 0..rounds {
        let began = Watch::start();
        text = inkstone_api::performance::context::layer_text(store, &PLATFORMS).unwrap();
        times.push(began.elapsed());
    }
    println!(
        "performance context layer (five platforms, once per model call): {} chars  p50 {:>7.2} ms  p95 {:>7.2} ms",
        text.chars().count(),
        ms(percentile(&mut times, 0.5)),
        ms(percentile(&mut times, 0.95))
    );
}
