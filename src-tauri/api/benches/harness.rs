//! Harness overhead: the time of a turn spent in the harness (everything but the model
//! call and the durable syncs, which are counted and reported separately) on a session
//! that already has 1,000 events, and the time to replay 100,000 events.
//! Targets: under 0.5 ms p95 per turn, under 1 s for the replay.
//!
//! `cargo bench -p inkstone-api --bench harness` prints the figures; under
//! `cargo test` (no `--bench` argument) it runs a few rounds as a smoke test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use inkstone_api::harness::replay;
use inkstone_test_support::model_server::{ModelServer, Reply, Usage};
use inkstone_test_support::TestEngine;
use serde_json::json;

fn percentile(values: &mut [Duration], p: f64) -> Duration {
    values.sort();
    let index = ((values.len() as f64 - 1.0) * p).round() as usize;
    values[index]
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let (target_events, rounds, replay_events) = if full { (1_000, 100, 100_000) } else { (60, 5, 2_000) };
    let server = ModelServer::start(vec![]);
    server.set_fallback(Reply::text_with("好的，已读。", 8, Usage::Fixed { input: 20, output: 5 }));
    let t = TestEngine::new();
    t.ok("llmProfile.create", json!({"name": "fake", "baseUrl": server.base_url(), "model": "fake-model", "contextWindow": 200000}));
    let project = t.ok("project.create", json!({"title": "基准", "source": "春眠不觉晓，处处闻啼鸟。".repeat(50)}))["id"].clone();
    let session = t.ok("session.create", json!({"projectId": project}))["session"]["id"].as_str().unwrap().to_owned();

    let send = |i: usize| t.ok("session.submit", json!({"sessionId": session, "text": format!("第 {i} 条消息")}));
    let mut i = 0;
    while t.engine.session_events(&session).unwrap().len() < target_events {
        send(i);
        i += 1;
    }
    let events_before = t.engine.session_events(&session).unwrap().len();

    let (mut harness, mut total, mut model, mut sync) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut syncs = 0u64;
    for _ in 0..rounds {
        let result = send(i);
        i += 1;
        let timings = &result["timings"];
        let micros = |key: &str| Duration::from_micros(timings[key].as_u64().unwrap());
        harness.push(micros("harnessMicros"));
        total.push(micros("totalMicros"));
        model.push(micros("modelMicros"));
        sync.push(micros("syncMicros"));
        syncs += timings["durableSyncs"].as_u64().unwrap();
    }
    println!(
        "harness overhead per turn on a {events_before}-event session ({rounds} turns): p50 {:?}, p95 {:?} (target < 0.5 ms p95)",
        percentile(&mut harness, 0.5),
        percentile(&mut harness, 0.95)
    );
    println!(
        "  separately: model call p50 {:?}; durable syncs {} per turn, p50 {:?} per turn; whole turn p50 {:?}",
        percentile(&mut model, 0.5),
        syncs / rounds as u64,
        percentile(&mut sync, 0.5),
        percentile(&mut total, 0.5)
    );

    let log = t.engine.session_events(&session).unwrap();
    let started = Instant::now();
    let loaded = t.engine.session_events(&session).unwrap();
    println!("  reading and checking the {}-event log from sled: {:?}", loaded.len(), started.elapsed());
    let mut events = Vec::with_capacity(replay_events);
    while events.len() < replay_events {
        let room = replay_events - events.len();
        events.extend(log.iter().take(room).cloned());
    }
    let started = Instant::now();
    let replayed = replay(events.iter());
    let elapsed = started.elapsed();
    println!("replay of {} events: {elapsed:?} (target < 1 s); {} model-visible messages, hash {}", events.len(), replayed.messages().len(), &replayed.messages_hash()[..19]);
}
