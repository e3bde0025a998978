//! The workspace policy's check before a model call (`llm::check_policy`): the time it
//! adds to every call, on a real sled store holding a cached policy. Target: under
//! 0.1 ms. Three cases: no policy, a provider rule only (one meta record read), and a
//! monthly cap (the month's running total read too, with 1,000 and with 100,000 calls
//! this month: the time must not grow with them).
//!
//! `cargo bench -p inkstone-core --bench policy` prints the figures; under `cargo test`
//! (no `--bench` argument) it runs a few rounds as a smoke test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use inkstone_api::llm::check_policy;
use inkstone_api::policy::{CachedPolicy, Policy, ProviderRule};
use inkstone_api::store::{Batch, Durability};
use inkstone_api::usage::{UsageOutcome, UsageRecord};
use inkstone_test_support::TestEngine;
use serde_json::json;

fn percentile(mut values: Vec<Duration>, p: f64) -> Duration {
    values.sort();
    values[((values.len() - 1) as f64 * p).round() as usize]
}

fn measure(t: &TestEngine, profile: &inkstone_api::llm::profile::LlmProfile, rounds: usize) -> (Duration, Duration) {
    let clock = t.engine.config().clock.clone();
    let mut times = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let started = Instant::now();
        check_policy(t.engine.store(), clock.as_ref(), profile, 500).unwrap();
        times.push(started.elapsed());
    }
    (percentile(times.clone(), 0.5), percentile(times, 0.95))
}

fn store_policy(t: &TestEngine, policy: Policy) {
    let cached = CachedPolicy { workspace_id: "wsp_1".into(), workspace_name: "团队".into(), policy, set_by: Some("Olga".into()), set_at: None, fetched_at: t.engine.now() };
    let mut batch = Batch::new();
    batch.put(&cached).unwrap();
    t.engine.store().apply(batch, Durability::Durable).unwrap();
}

fn main() {
    let benching = std::env::args().any(|a| a == "--bench");
    let rounds = if benching { 20_000 } else { 50 };
    let t = TestEngine::new();
    t.ok("llmProfile.create", json!({"name": "here", "baseUrl": "http://127.0.0.1:9/v1", "model": "m", "keyRequired": false, "contextWindow": 8192}));
    let profile = inkstone_api::llm::load_profile(t.engine.store(), "here").unwrap();

    let (p50, p95) = measure(&t, &profile, rounds);
    println!("policy check, no policy cached:          p50 {:>8.4} ms  p95 {:>8.4} ms", p50.as_secs_f64() * 1e3, p95.as_secs_f64() * 1e3);

    store_policy(&t, Policy { providers: ProviderRule::Hosts { hosts: vec!["llm.corp.example".into(), "127.0.0.1".into()] }, ..Policy::default() });
    let (p50, p95) = measure(&t, &profile, rounds);
    println!("policy check, host list:                 p50 {:>8.4} ms  p95 {:>8.4} ms", p50.as_secs_f64() * 1e3, p95.as_secs_f64() * 1e3);
    assert!(!benching || p95 < Duration::from_micros(100), "the provider check takes {p95:?}");

    // A cap reads the month's running total, written with each call as the runtime
    // writes it (`usage::stage_call`).
    let seed = |from: usize, to: usize| {
        let _guard = t.engine.store().write_lock();
        for i in from..to {
            let record = UsageRecord {
                id: format!("usg_{i:08}"),
                at: t.engine.now(),
                profile_id: profile.id.clone(),
                profile_name: "here".into(),
                model: "m".into(),
                purpose: "drafting".into(),
                session_id: None,
                run_id: None,
                input_tokens: 900,
                output_tokens: 100,
                tokens_estimated: false,
                cost: Some(0.001),
                latency_ms: 10,
                attempts: 1,
                outcome: UsageOutcome::Ok,
            };
            let mut batch = Batch::new();
            inkstone_api::usage::stage_call(t.engine.store(), &mut batch, &record).unwrap();
            t.engine.store().apply(batch, Durability::Grouped).unwrap();
        }
    };
    seed(0, 1_000);
    store_policy(&t, Policy { monthly_cap_usd: Some(1_000_000.0), ..Policy::default() });
    let (p50, p95) = measure(&t, &profile, rounds);
    println!("policy check, monthly cap, 1,000 calls:  p50 {:>8.4} ms  p95 {:>8.4} ms", p50.as_secs_f64() * 1e3, p95.as_secs_f64() * 1e3);
    assert!(!benching || p95 < Duration::from_micros(100), "the cap check takes {p95:?}");
    seed(1_000, if benching { 100_000 } else { 2_000 });
    let (p50, p95) = measure(&t, &profile, rounds);
    println!("policy check, monthly cap, {} calls: p50 {:>8.4} ms  p95 {:>8.4} ms", if benching { "100,000" } else { "  2,000" }, p50.as_secs_f64() * 1e3, p95.as_secs_f64() * 1e3);
    assert!(!benching || p95 < Duration::from_micros(100), "the cap check takes {p95:?}");
}
