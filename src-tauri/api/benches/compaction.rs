//! Long sessions: the time to assemble a model call's context on a 1,000-turn session
//! that has been compacted many times (read the log, fold it, gather the project
//! records, assemble the layers), and the overhead of a compaction without the model's
//! time (cut, transcript, validation, the boundary event and its durable sync).
//!
//! `cargo bench -p inkstone-core --bench compaction` prints the figures; under
//! `cargo test` (no `--bench` argument) it runs a short session as a smoke test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use inkstone_api::context::{assemble, gather, ContextInput};
use inkstone_api::harness::compaction::COMPACTION_PROMPT_HEAD;
use inkstone_api::harness::{context_extras, replay, EventBody};
use inkstone_test_support::model_server::{ModelServer, Reply, Responder, Usage};
use inkstone_test_support::TestEngine;
use serde_json::{json, Value};

fn percentile(values: &mut [Duration], p: f64) -> Duration {
    values.sort();
    let index = ((values.len() as f64 - 1.0) * p).round() as usize;
    values[index]
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let (turns, rounds, manual) = if full { (1_000, 50, 20) } else { (60, 5, 3) };
    let server = ModelServer::start(vec![]);
    let summary = json!({"summary": "The person and the assistant drafted the tea article section by section.", "user_intent": "A spring tea article",
        "accepted_changes": [], "rejected_directions": [], "open_tasks": ["next section"], "active_artifacts": ["source"], "source_refs": [], "next_step_hint": "go on"})
    .to_string();
    server.set_fallback(Reply::Computed(Responder(Arc::new(move |body: &Value| {
        if body["messages"][0]["content"].as_str().unwrap_or("").starts_with(COMPACTION_PROMPT_HEAD) {
            Reply::text_with(&summary, 256, Usage::Fixed { input: 500, output: 80 })
        } else {
            Reply::text_with("好的，已记下。", 16, Usage::Omitted)
        }
    }))));
    let t = TestEngine::new();
    t.ok("llmProfile.create", json!({"name": "fake", "baseUrl": server.base_url(), "model": "fake-model", "contextWindow": 8000}));
    let project = t.ok("project.create", json!({"title": "基准", "source": "春眠不觉晓，处处闻啼鸟。".repeat(50)}))["id"].as_str().unwrap().to_owned();
    let session = t.ok("session.create", json!({"projectId": project, "limits": {"maxOutputTokens": 256}}))["session"]["id"].as_str().unwrap().to_owned();
    // Memory and an intent, as a real session has them: both are in every call's pinned layer.
    t.ok("memory.add", json!({"scope": "workspace", "text": "这个品牌不用标题党。"}));
    t.ok("memory.add", json!({"scope": "project", "projectId": project, "text": "This account writes in a calm, professional tone."}));
    t.ok("session.submit", json!({"sessionId": session, "text": "帮我为山茶社品牌写一篇关于春茶上市的小红书文案，300字左右"}));
    for turn in 0..turns {
        let text = if turn % 10 == 0 { format!("Remember: fact {turn} stays.") } else { format!("第 {turn} 段：采茶人在清晨上山，茶叶在阴凉处萎凋。") };
        t.ok("session.submit", json!({"sessionId": session, "text": text}));
    }
    let log = t.engine.session_events(&session).unwrap();
    let boundaries = log.iter().filter(|e| matches!(e.body, EventBody::CompactBoundary { .. })).count();

    let workspace = t.ok("workspace.get", json!({}))["id"].as_str().unwrap().to_owned();
    // Context assembly as a model call does it, from the stored log.
    let (mut assembly, mut fold) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let started = Instant::now();
        let events = t.engine.session_events(&session).unwrap();
        let state = replay(events.iter()).state;
        fold.push(started.elapsed());
        // What a live model call does: the fold is in memory already.
        let started = Instant::now();
        let records = gather(t.engine.store(), &project).unwrap();
        let pins: Vec<String> = state.pins.iter().map(|p| p.text.clone()).collect();
        let extras = context_extras(t.engine.store(), &workspace, &records, &state.intent).unwrap();
        let input =
            ContextInput { intent: &extras.intent, memory: &extras.memory, memory_left_out: extras.memory_left_out, ..records.input(state.mode, &state.summary, &[], &pins, None) };
        let snapshot = assemble(&input, 8_000).unwrap();
        assert!(snapshot.system.contains("topic: 春茶上市") && snapshot.system.contains("这个品牌不用标题党"));
        assert!(!snapshot.system.is_empty());
        assembly.push(started.elapsed());
    }
    println!(
        "context assembly on a {turns}-turn session ({} events, {boundaries} compactions): p50 {:?}, p95 {:?} (gather, intent, memory + assemble, as a live call); \
         reading and replaying the log (a resume): p50 {:?}",
        log.len(),
        percentile(&mut assembly, 0.5),
        percentile(&mut assembly, 0.95),
        percentile(&mut fold, 0.5)
    );

    // Manual compactions: the overhead without the model's time.
    let (mut overhead, mut model, mut sync) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..manual {
        for turn in 0..3 {
            t.ok("session.submit", json!({"sessionId": session, "text": format!("补充 {round}.{turn}：炭火烘焙。")}));
        }
        let result = t.ok("session.compact", json!({"sessionId": session}));
        assert_eq!(result["compacted"], true);
        let timings = &result["timings"];
        let micros = |key: &str| Duration::from_micros(timings[key].as_u64().unwrap());
        overhead.push(micros("totalMicros").saturating_sub(micros("modelMicros")));
        model.push(micros("modelMicros"));
        sync.push(micros("syncMicros"));
    }
    println!(
        "compaction overhead without model time ({manual} manual compactions): p50 {:?}, p95 {:?}; model call p50 {:?}",
        percentile(&mut overhead, 0.5),
        percentile(&mut overhead, 0.95),
        percentile(&mut model, 0.5)
    );
}
