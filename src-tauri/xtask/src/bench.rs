//! `cargo xtask bench`: the store benchmark. Fills a store with N projects × M versions
//! of ~5,000-character mixed Chinese/English articles (bulk, without per-write syncs),
//! then times the everyday calls through the API and prints p50/p95.
//!
//! Targets: open a project < 5 ms p95; create a version (durable) < 20 ms p95.
//! Run with `cargo xtask bench --release` semantics: it re-invokes nothing; build it
//! optimised with `cargo run --release -p xtask -- bench`.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use inkstone_api::model::VersionOrigin;
use inkstone_api::project::versions::{self, NewVersion};
use inkstone_api::project::{self, NewProject};
use inkstone_api::store::{Batch, Durability};
use inkstone_api::{Engine, EngineConfig};
use inkstone_test_support::Rng;
use serde_json::json;

const PHRASES: &[&str] = &[
    "今天我们聊聊如何把一篇文章写得更清楚。",
    "好的标题让读者愿意点开，好的开头让读者愿意读下去。",
    "Clear writing starts with a clear question. ",
    "每个平台的读者习惯不同，排版也要随之调整。",
    "We keep paragraphs short and concrete. ",
    "数据只能说明过去，写作要回答读者现在的问题。",
    "\n\n## 小结\n\n",
    "A draft is a conversation with a future reader. ",
];

fn article(rng: &mut Rng, n_chars: usize) -> String {
    let mut text = String::with_capacity(n_chars * 3);
    let mut count = 0;
    while count < n_chars {
        let phrase = PHRASES[(rng.next() % PHRASES.len() as u64) as usize];
        text.push_str(phrase);
        count += phrase.chars().count();
    }
    text
}

/// Small edits, as between two versions of the same article.
fn edit(rng: &mut Rng, text: &str) -> String {
    let mut lines: Vec<String> = text.split_inclusive('。').map(str::to_owned).collect();
    for _ in 0..5 {
        let idx = (rng.next() % lines.len().max(1) as u64) as usize;
        if let Some(line) = lines.get_mut(idx) {
            *line = format!("{}（修订）", line.trim_end_matches('。')) + "。\n";
        }
    }
    lines.concat()
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx.min(sorted.len() - 1)]
}

fn report(name: &str, mut samples: Vec<Duration>, target_p95_ms: Option<f64>) {
    samples.sort();
    let p50 = percentile(&samples, 0.50).as_secs_f64() * 1000.0;
    let p95 = percentile(&samples, 0.95).as_secs_f64() * 1000.0;
    let verdict = match target_p95_ms {
        Some(target) if p95 <= target => format!("  (target p95 < {target} ms: met)"),
        Some(target) => format!("  (target p95 < {target} ms: MISSED)"),
        None => String::new(),
    };
    println!("{name:<34} n={:<5} p50 {p50:>9.3} ms   p95 {p95:>9.3} ms{verdict}", samples.len());
}

fn time<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let start = Instant::now();
    let value = f();
    (value, start.elapsed())
}

fn arg(args: &[String], name: &str, default: usize) -> Result<usize> {
    match args.iter().position(|a| a == name) {
        Some(i) => args.get(i + 1).context("missing value")?.parse().context("not a number"),
        None => Ok(default),
    }
}

pub fn run(args: &[String]) -> Result<()> {
    let n_projects = arg(args, "--projects", 10_000)?;
    let n_versions = arg(args, "--versions", 10)?;
    let n_samples = arg(args, "--samples", 200)?;
    let dir = tempfile::tempdir()?;
    println!("bench: {n_projects} projects × {n_versions} versions of ~5,000-character articles in {}", dir.path().display());
    if cfg!(debug_assertions) {
        println!("bench: WARNING: a debug build; run `cargo run --release -p xtask -- bench` for real figures");
    }
    let mut config = EngineConfig::new(dir.path(), "xtask bench");
    config.cache_capacity_bytes = 64 * 1024 * 1024;
    let engine = Engine::open(config)?;
    let mut rng = Rng(0x1234_5678_9abc_def1);

    // Bulk fill straight through the store, 100 projects per transaction, one sync at
    // the end: the fill is set-up, not what is measured.
    let fill_start = Instant::now();
    let kernel = engine.kernel();
    let now = kernel.now();
    let mut ids = Vec::with_capacity(n_projects);
    let mut logical_bytes = 0usize;
    for chunk_start in (0..n_projects).step_by(100) {
        let mut batch = Batch::new();
        for idx in chunk_start..(chunk_start + 100).min(n_projects) {
            // The project and its versions are built by the domain functions the API
            // uses (one place numbers versions), only committed in bulk.
            let new = NewProject { title: format!("文章 {idx}"), ..NewProject::default() };
            let mut project = project::new_project(kernel, new, now);
            let mut source = article(&mut rng, 5_000);
            for _ in 1..=n_versions {
                let title = project.title.clone();
                let version = versions::stage_next(
                    kernel,
                    &mut batch,
                    &mut project,
                    NewVersion { title: &title, source: &source, origin: &VersionOrigin::Manual, message: None, message_id: None, message_params: None },
                )?;
                logical_bytes += version.source.len();
                source = edit(&mut rng, &source);
            }
            project.source = source;
            logical_bytes += project.source.len();
            batch.put(&project)?;
            let id = project.id;
            ids.push(id);
        }
        engine.store().apply(batch, Durability::Grouped)?;
    }
    engine.store().sync()?;
    println!("bench: filled {} records ({:.0} MiB of text) in {:.1} s", n_projects * (n_versions + 1), logical_bytes as f64 / 1_048_576.0, fill_start.elapsed().as_secs_f64());

    let pick = |rng: &mut Rng| ids[(rng.next() % ids.len() as u64) as usize].clone();

    let list_samples = (0..n_samples.min(30)).map(|_| time(|| engine.call("project.list", json!({}))).1).collect();
    report("project.list (all projects)", list_samples, None);

    let mut open = Vec::new();
    for _ in 0..n_samples {
        let id = pick(&mut rng);
        let (result, elapsed) = time(|| engine.call("project.get", json!({"projectId": id})));
        result?;
        open.push(elapsed);
    }
    report("project.get (open a project)", open, Some(5.0));

    let mut autosave = Vec::new();
    for _ in 0..n_samples {
        let id = pick(&mut rng);
        let source = article(&mut rng, 5_000);
        let (result, elapsed) = time(|| engine.call("project.update", json!({"projectId": id, "source": source})));
        result?;
        autosave.push(elapsed);
    }
    report("project.update (autosave)", autosave, None);

    let mut create = Vec::new();
    for _ in 0..n_samples {
        let id = pick(&mut rng);
        let syncs = engine.store().durable_sync_count();
        let (result, elapsed) = time(|| engine.call("version.create", json!({"projectId": id})));
        result?;
        anyhow::ensure!(engine.store().durable_sync_count() > syncs, "version.create returned without a durable sync");
        create.push(elapsed);
    }
    report("version.create (durable)", create, Some(20.0));

    // Two versions of a 10,000-character article.
    let long_id = "prj_bench_long";
    let first = article(&mut rng, 10_000);
    let created = engine.call("project.create", json!({"title": "长文", "source": first}))?;
    let long_id = created["id"].as_str().unwrap_or(long_id).to_owned();
    engine.call("version.create", json!({"projectId": long_id}))?;
    let second = edit(&mut rng, &first);
    engine.call("project.update", json!({"projectId": long_id, "source": second}))?;
    engine.call("version.create", json!({"projectId": long_id}))?;
    let mut diff = Vec::new();
    for _ in 0..n_samples.min(100) {
        let (result, elapsed) = time(|| engine.call("version.diff", json!({"projectId": long_id, "from": 1, "to": 2})));
        result?;
        diff.push(elapsed);
    }
    report("version.diff (10,000 chars)", diff, None);

    let disk: u64 = walk_size(&dir.path().join("db"));
    println!(
        "bench: store on disk {:.0} MiB for {:.0} MiB of text ({:.2}×)",
        disk as f64 / 1_048_576.0,
        logical_bytes as f64 / 1_048_576.0,
        disk as f64 / logical_bytes.max(1) as f64
    );
    Ok(())
}

fn walk_size(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| {
                    let path = e.path();
                    if path.is_dir() {
                        walk_size(&path)
                    } else {
                        e.metadata().map(|m| m.len()).unwrap_or(0)
                    }
                })
                .sum()
        })
        .unwrap_or(0)
}

/// Compiling all five platforms for one 10,000-character mixed article beside one
/// `comrak::markdown_to_html` of it in the same run: inkstone-text's own benchmark
/// (`cargo bench -p inkstone-text --bench pipeline`, optimised), so it builds without the
/// engine above the compilers. Arguments (`--samples N`) are passed on.
pub fn run_pipeline(args: &[String]) -> Result<()> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let status =
        std::process::Command::new(cargo).args(["bench", "-p", "inkstone-text", "--bench", "pipeline", "--", "--bench"]).args(args).status().context("running cargo bench")?;
    anyhow::ensure!(status.success(), "the pipeline benchmark failed: {status}");
    Ok(())
}

/// `cargo xtask bench-retrieval [--docs N] [--chars N] [--samples N]`: search over
/// N documents (default 50,000: N/2 projects, each a working copy and one version of
/// ~600 mixed characters). Prints p50/p95 of a lexical query and of the fused query
/// (without embeddings, so lexical retrievers fused by tier and RRF; target p95 under
/// 20 ms), a plain tantivy BM25 query over the same index in the same run and the
/// ratio of each to it, and the time from a saved version to its being searchable
/// (target under 1 s). Build it optimised: `cargo run --release -p xtask -- bench-retrieval`.
pub fn run_retrieval(args: &[String]) -> Result<()> {
    use inkstone_api::retrieval::{Filter, SearchMode, SearchRequest, SearchScope};

    let n_docs = arg(args, "--docs", 50_000)?;
    let n_chars = arg(args, "--chars", 600)?;
    let n_samples = arg(args, "--samples", 300)?;
    let n_projects = (n_docs / 2).max(1);
    let dir = tempfile::tempdir()?;
    println!("bench-retrieval: {n_projects} projects × (working copy + 1 version) = {} documents of ~{n_chars} characters in {}", n_projects * 2, dir.path().display());
    if cfg!(debug_assertions) {
        println!("bench-retrieval: WARNING: a debug build; run `cargo run --release -p xtask -- bench-retrieval` for real figures");
    }
    let mut config = EngineConfig::new(dir.path(), "xtask bench");
    config.cache_capacity_bytes = 64 * 1024 * 1024;
    let engine = Engine::open(config)?;
    let mut rng = Rng(0x0bad_cafe_1234_5678);
    const TOPICS: &[&str] = &["手冲咖啡", "周末跑步", "城市骑行", "读书笔记", "职场写作", "旅行攻略", "家庭厨房", "摄影入门", "Remote work", "播客剪辑"];

    let fill_start = Instant::now();
    let kernel = engine.kernel();
    let now = kernel.now();
    let mut ids = Vec::with_capacity(n_projects);
    for chunk_start in (0..n_projects).step_by(100) {
        let mut batch = Batch::new();
        for idx in chunk_start..(chunk_start + 100).min(n_projects) {
            let topic = TOPICS[(rng.next() % TOPICS.len() as u64) as usize];
            let new = NewProject { title: format!("{topic}：第 {idx} 篇"), ..NewProject::default() };
            let mut project = project::new_project(kernel, new, now);
            let source = format!("{topic}的一些想法。{}", article(&mut rng, n_chars));
            let title = project.title.clone();
            versions::stage_next(
                kernel,
                &mut batch,
                &mut project,
                NewVersion { title: &title, source: &source, origin: &VersionOrigin::Manual, message: None, message_id: None, message_params: None },
            )?;
            project.source = source;
            batch.put(&project)?;
            ids.push(project.id);
        }
        engine.store().apply(batch, Durability::Grouped)?;
    }
    engine.store().sync()?;
    println!("bench-retrieval: filled the store in {:.1} s", fill_start.elapsed().as_secs_f64());
    let index = engine.search_index();
    let index_start = Instant::now();
    anyhow::ensure!(index.wait_idle(Duration::from_secs(4 * 3600)), "the index did not catch up");
    let status = index.status();
    println!("bench-retrieval: indexed {} documents in {:.1} s (the index follows the store on its own thread)", status.documents, index_start.elapsed().as_secs_f64());

    // 1-, 2- and 3-character Chinese, words, a pasted title, English.
    let queries: Vec<String> = ["写", "标题", "读者愿", "平台 排版", "手冲咖啡", "城市骑行：第 1234 篇", "clear writing", "数据 过去 问题", "摄影", "future reader"]
        .iter()
        .map(|q| (*q).to_owned())
        .collect();
    let request = |q: &str, mode: SearchMode| SearchRequest { query: q.to_owned(), scope: SearchScope::Workspace, filter: Filter::default(), limit: 20, mode };
    // Warm the caches once per query.
    for q in &queries {
        index.search(&request(q, SearchMode::Fused)).map_err(|e| anyhow::anyhow!("{e:?}"))?;
        index.plain_bm25(q, 20).map_err(|e| anyhow::anyhow!("{e:?}"))?;
    }
    let mut lexical = Vec::new();
    let mut fused = Vec::new();
    let mut baseline = Vec::new();
    for i in 0..n_samples {
        let q = &queries[i % queries.len()];
        let (r, d) = time(|| index.search(&request(q, SearchMode::Lexical)));
        r.map_err(|e| anyhow::anyhow!("{e:?}"))?;
        lexical.push(d);
        let (r, d) = time(|| index.search(&request(q, SearchMode::Fused)));
        r.map_err(|e| anyhow::anyhow!("{e:?}"))?;
        fused.push(d);
        let (r, d) = time(|| index.plain_bm25(q, 20));
        r.map_err(|e| anyhow::anyhow!("{e:?}"))?;
        baseline.push(d);
    }
    let p = |samples: &mut Vec<Duration>, q: f64| {
        samples.sort();
        percentile(samples, q).as_secs_f64() * 1000.0
    };
    let (lex50, lex95, fus50, fus95, base50, base95) =
        (p(&mut lexical, 0.5), p(&mut lexical, 0.95), p(&mut fused, 0.5), p(&mut fused, 0.95), p(&mut baseline, 0.5), p(&mut baseline, 0.95));
    report("search lexical (tiers + RRF)", lexical, Some(20.0));
    report("search fused, no embeddings", fused, Some(20.0));
    report("plain tantivy BM25 (baseline)", baseline, None);
    println!("bench-retrieval: ratio to plain BM25: lexical p50 {:.1}× p95 {:.1}×; fused p50 {:.1}× p95 {:.1}×", lex50 / base50, lex95 / base95, fus50 / base50, fus95 / base95);

    // A save to being found: update the working copy, save a version, poll the index.
    let mut update = Vec::new();
    for n in 0..n_samples.clamp(5, 30) {
        let id = ids[(rng.next() % ids.len() as u64) as usize].clone();
        let marker = format!("zqxmarker{n}");
        let source = format!("{}\n\n{marker}", article(&mut rng, n_chars));
        engine.call("project.update", json!({"projectId": id, "source": source}))?;
        let saved_at = Instant::now();
        let version = engine.call("version.create", json!({"projectId": id}))?["number"].as_u64();
        let filter = Filter { project_id: Some(id.clone()), kinds: vec![inkstone_api::retrieval::DocKind::Version], ..Filter::default() };
        let find = SearchRequest { query: marker.clone(), scope: SearchScope::Project, filter, limit: 5, mode: SearchMode::Lexical };
        loop {
            let found = index.search(&find).map_err(|e| anyhow::anyhow!("{e:?}"))?;
            if found.hits.iter().any(|h| h.version.map(u64::from) == version) {
                break;
            }
            anyhow::ensure!(saved_at.elapsed() < Duration::from_secs(60), "a saved version was not searchable after a minute");
            std::thread::sleep(Duration::from_millis(1));
        }
        update.push(saved_at.elapsed());
    }
    report("save → searchable (version.create)", update, Some(1000.0));
    Ok(())
}
