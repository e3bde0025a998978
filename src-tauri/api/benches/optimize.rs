//! One-click optimize overhead: the time of a run spent in the engine (snapshot,
//! compiles, checks, fit reports, proposals, the log) excluding the model calls, for
//! five platforms on a 10,000-character article. The scripted model answers at once;
//! its calls (HTTP on loopback included) are timed by the run and subtracted.
//!
//! `cargo bench -p inkstone-api --bench optimize` prints the figures; under
//! `cargo test` (no `--bench` argument) it runs one round as a smoke test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use inkstone_test_support::model_server::{ModelServer, Reply, Responder};
use inkstone_test_support::TestEngine;
use serde_json::{json, Value};

fn article() -> String {
    let mut out = String::from("# 把周报写短的十个办法\n\n");
    let mut n = 0;
    while out.chars().count() < 10_000 {
        n += 1;
        out.push_str(&format!("## 第{n}点\n\n周报越长越没人读。先写结论，再写变化，最后写计划。每一段只讲一件事，数字要有来源。\n\n"));
    }
    out
}

fn reply_for(body: &Value, source: &str) -> Reply {
    let last = body["messages"].as_array().and_then(|m| m.last()).and_then(|m| m["content"].as_str()).unwrap_or("");
    let value = if last.starts_with("Step 1") {
        json!({"summary": "Sharper opening.", "changes": ["a sharper first line"], "platforms": []})
    } else if last.starts_with("Step 2") {
        json!({"source": format!("{source}\n你的周报有多长？欢迎留言。\n"), "titles": ["把周报写短的十个办法"], "summary": "Added a closing question."})
    } else if last.contains("(x)") {
        json!({"text": "周报越长越没人读。\n\n---\n\n先写结论，再写变化。", "summary": "A short thread."})
    } else if last.contains("(wechat)") {
        json!({"text": "<p>周报越长越没人读。</p><p>先写结论。欢迎关注。</p>", "summary": "Shorter."})
    } else {
        json!({"text": "周报越长越没人读。先写结论，再写变化。你怎么看？", "summary": "Shorter."})
    };
    Reply::text(&value.to_string())
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let rounds = if full { 10 } else { 1 };
    let source = article();
    let server = ModelServer::start(vec![]);
    let for_server = source.clone();
    server.set_fallback(Reply::Computed(Responder(Arc::new(move |body: &Value| reply_for(body, &for_server)))));
    let t = TestEngine::new();
    t.ok("llmProfile.create", json!({"name": "fake", "baseUrl": server.base_url(), "model": "fake-model", "contextWindow": 200000}));
    let platforms = ["wechat", "zhihu", "x", "douyin", "xiaohongshu"];
    let project = t.ok("project.create", json!({"title": "周报", "source": source, "platforms": platforms}))["id"].clone();
    for platform in platforms {
        t.ok("platformDraft.save", json!({"projectId": project, "platform": platform}));
    }
    let mut overheads: Vec<Duration> = Vec::new();
    let mut totals: Vec<Duration> = Vec::new();
    for _ in 0..rounds {
        let run = t.ok("optimize.start", json!({"projectId": project}));
        assert_eq!(run["status"], "ready", "{run:#}");
        let total = run["timings"]["totalMicros"].as_u64().unwrap();
        let model = run["timings"]["modelMicros"].as_u64().unwrap();
        assert_eq!(run["timings"]["modelCalls"], 7, "strategy, source and five platforms");
        totals.push(Duration::from_micros(total));
        overheads.push(Duration::from_micros(total - model));
    }
    overheads.sort();
    totals.sort();
    let p50 = overheads[overheads.len() / 2];
    let worst = overheads[overheads.len() - 1];
    println!(
        "optimize overhead (5 platforms, {} characters, model time excluded): p50 {:.1} ms, max {:.1} ms over {rounds} runs (whole run p50 {:.1} ms)",
        source.chars().count(),
        p50.as_secs_f64() * 1000.0,
        worst.as_secs_f64() * 1000.0,
        totals[totals.len() / 2].as_secs_f64() * 1000.0
    );
}
