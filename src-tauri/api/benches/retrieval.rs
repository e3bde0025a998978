//! Search: p50/p95 query time of the tiered lexical search and of the fused search
//! without embeddings (what every user without an embedding model gets) over 50,000
//! documents, the time until a saved version is searchable, and a plain tantivy BM25
//! query over the same index in the same run as the baseline (the ratio is printed).
//! Targets: fused p95 < 20 ms; a save searchable < 1 s.
//!
//! `cargo bench -p inkstone-core --bench retrieval` prints the figures; under
//! `cargo test` (no `--bench` argument) it runs 600 documents as a smoke test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use inkstone_api::project::{self, NewProject};
use inkstone_api::retrieval::{Filter, SearchMode, SearchRequest, SearchScope};
use inkstone_api::store::{Batch, Durability};
use inkstone_test_support::Rng;
use inkstone_test_support::TestEngine;
use serde_json::json;

const WORDS: &[&str] = &[
    "咖啡",
    "跑步",
    "露营",
    "骑行",
    "面包",
    "远程办公",
    "阅读",
    "理财",
    "猫咪",
    "摄影",
    "旅行",
    "多肉",
    "睡眠",
    "写作",
    "人工智能",
    "吉他",
    "收纳",
    "绘本",
    "英语",
    "健身",
    "茶叶",
    "登山",
    "编程",
    "菜谱",
    "书法",
    "电动车",
    "冥想",
    "电影",
    "桌游",
    "回收",
    "标题",
    "公众号",
    "小红书",
    "选题",
    "排版",
    "数据",
    "用户",
    "增长",
    "内容",
    "平台",
];
const SENTENCES: &[&str] = &[
    "第一次接触{a}的时候，我最在意的是{b}。",
    "很多人觉得{a}很难，其实关键在于{b}。",
    "如果预算有限，可以先从{a}开始。",
    "{a}和{b}之间的关系，常常被忽略。",
    "This week I tried {e} again and wrote it down.",
    "记录下来之后才发现，{a}的进步大多来自{b}。",
];
const ENGLISH: &[&str] = &["coffee", "running", "camping", "writing", "reading", "budget", "travel", "design"];

fn document(rng: &mut Rng, n: usize) -> (String, String) {
    let title = format!("{}与{}：第{n}篇", rng.pick(WORDS), rng.pick(WORDS));
    let mut source = format!("# {title}\n\n");
    for _ in 0..(6 + rng.next() % 8) {
        let sentence = rng.pick(SENTENCES).replace("{a}", rng.pick(WORDS)).replace("{b}", rng.pick(WORDS)).replace("{e}", rng.pick(ENGLISH));
        source.push_str(&sentence);
        if rng.next().is_multiple_of(4) {
            source.push_str("\n\n");
        }
    }
    (title, source)
}

fn percentile(values: &mut [Duration], p: f64) -> Duration {
    values.sort();
    values[((values.len() as f64 - 1.0) * p).round() as usize]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let (n_docs, rounds, saves) = if full { (50_000, 3, 20) } else { (600, 1, 3) };
    let t = TestEngine::new();
    let kernel = t.engine.kernel();
    let index = kernel.search_index();
    let mut rng = Rng(0x5eed_1234);
    let mut titles = Vec::new();

    // The corpus goes into the store in batches, as an import would; the index
    // follows through the store's subscription.
    let started = Instant::now();
    let mut batch = Batch::new();
    for n in 0..n_docs {
        let (title, source) = document(&mut rng, n);
        if n.is_multiple_of((n_docs / 50).max(1)) {
            titles.push(title.clone());
        }
        project::stage_create(kernel, &mut batch, NewProject { title, source, ..NewProject::default() }, kernel.now()).unwrap();
        if batch.len() >= 2700 {
            let _guard = kernel.write_lock();
            kernel.store().apply(std::mem::take(&mut batch), Durability::Grouped).unwrap();
        }
    }
    {
        let _guard = kernel.write_lock();
        kernel.store().apply(batch, Durability::Durable).unwrap();
    }
    assert!(index.wait_idle(Duration::from_secs(3600)));
    let build = started.elapsed();
    assert_eq!(index.status().documents, n_docs as u64);

    // Queries: 1-, 2- and 3-character Chinese, words, pasted titles, English.
    let mut queries: Vec<String> = ["咖", "猫", "书", "咖啡", "跑步", "数据", "公众号", "小红书", "人工智", "远程办公 效率", "写作 标题 排版", "coffee", "camping trip"]
        .iter()
        .map(|q| (*q).to_owned())
        .collect();
    queries.extend(titles.iter().cloned());
    queries.extend(WORDS.iter().map(|w| (*w).to_owned()));
    let search = |q: &str, mode: SearchMode| {
        let request = SearchRequest { query: q.to_owned(), scope: SearchScope::Workspace, filter: Filter::default(), limit: 20, mode };
        index.search(&request).unwrap()
    };
    let mut lexical = Vec::new();
    let mut fused = Vec::new();
    let mut plain = Vec::new();
    for _ in 0..rounds {
        for q in &queries {
            let at = Instant::now();
            let hits = search(q, SearchMode::Lexical);
            lexical.push(at.elapsed());
            assert!(!hits.hits.is_empty(), "{q} finds something");
            let at = Instant::now();
            let result = search(q, SearchMode::Fused);
            fused.push(at.elapsed());
            assert_eq!(result.notice.map(|n| n.code), Some(inkstone_api::retrieval::NoticeCode::SemanticOff));
            let at = Instant::now();
            let _ = index.plain_bm25(q, 20).unwrap();
            plain.push(at.elapsed());
        }
    }
    for title in &titles {
        assert_eq!(search(title, SearchMode::Fused).hits[0].title, *title, "a pasted title comes first");
    }

    // A save, searchable: the time from calling `version.create` (a durable write:
    // flush and fsync) to the first search that finds the version's new word, and
    // from the call's return.
    let target = t.ok("project.create", json!({"title": "保存基准", "source": "# 保存基准\n\n开头。"}))["id"].as_str().unwrap().to_owned();
    assert!(index.wait_idle(Duration::from_secs(60)));
    let mut visible = Vec::new();
    let mut after_return = Vec::new();
    for round in 0..saves {
        let project = t.ok("project.get", json!({"projectId": target}));
        let word = format!("独角兽{round}号");
        let source = format!("{}\n\n今天写到了{word}。", project["source"].as_str().unwrap());
        t.ok("project.update", json!({"projectId": target, "baseRevision": project["revision"], "source": source}));
        let called = Instant::now();
        t.ok("version.create", json!({"projectId": target}));
        let at = Instant::now();
        loop {
            let request = SearchRequest {
                query: word.clone(),
                scope: SearchScope::Project,
                filter: Filter { project_id: Some(target.clone()), kinds: vec![inkstone_api::retrieval::DocKind::Version], ..Filter::default() },
                limit: 5,
                mode: SearchMode::Lexical,
            };
            if !index.search(&request).unwrap().hits.is_empty() {
                break;
            }
            assert!(at.elapsed() < Duration::from_secs(10), "the save never became searchable");
            std::thread::sleep(Duration::from_millis(1));
        }
        after_return.push(at.elapsed());
        visible.push(called.elapsed());
    }

    let (l50, l95) = (percentile(&mut lexical, 0.5), percentile(&mut lexical, 0.95));
    let (f50, f95) = (percentile(&mut fused, 0.5), percentile(&mut fused, 0.95));
    let (p50, p95) = (percentile(&mut plain, 0.5), percentile(&mut plain, 0.95));
    let (v50, v95) = (percentile(&mut visible, 0.5), percentile(&mut visible, 0.95));
    let (r50, r95) = (percentile(&mut after_return, 0.5), percentile(&mut after_return, 0.95));
    println!("retrieval: {n_docs} documents indexed in {:.1} s; {} queries x {rounds}", build.as_secs_f64(), queries.len());
    println!("  tiered lexical    p50 {:>7.2} ms  p95 {:>7.2} ms", ms(l50), ms(l95));
    println!("  fused, no vectors p50 {:>7.2} ms  p95 {:>7.2} ms  (target p95 < 20 ms)", ms(f50), ms(f95));
    println!("  plain BM25        p50 {:>7.2} ms  p95 {:>7.2} ms  (top 20 ids, no tiers, no snippets)", ms(p50), ms(p95));
    println!("  fused / plain BM25: p50 {:.1}x  p95 {:.1}x", ms(f50) / ms(p50).max(1e-9), ms(f95) / ms(p95).max(1e-9));
    println!("  save called -> searchable   p50 {:>7.1} ms  p95 {:>7.1} ms  (target < 1000 ms)", ms(v50), ms(v95));
    println!("  save returned -> searchable p50 {:>7.1} ms  p95 {:>7.1} ms", ms(r50), ms(r95));
}
