//! Proposals: the latency of `proposal.accept` of 20 hunks on a 10,000-character
//! source, durable sync included (one transaction: version, project, proposal status,
//! activity, audit), and the time to compute the hunks of a proposal on a
//! 50,000-character source, printed beside `version.diff`'s line diff of the same
//! texts (the reference the hunks build on).
//!
//! `cargo bench -p inkstone-core --bench proposals` prints the figures; under
//! `cargo test` (no `--bench` argument) it runs a few rounds as a smoke test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use inkstone_api::proposals::{self, NewProposal, Origin, Payload, ProposalKind, Target};
use inkstone_test_support::TestEngine;
use serde_json::json;

fn percentile(values: &mut [Duration], p: f64) -> Duration {
    values.sort();
    let index = ((values.len() as f64 - 1.0) * p).round() as usize;
    values[index]
}

/// `n` lines of about `width` characters, mixed Chinese and English.
fn text(n: usize, width: usize) -> String {
    (0..n)
        .map(|i| {
            let mut line = format!("第{i}行：春眠不觉晓，处处闻啼鸟。The quick brown fox {i}. ");
            while line.chars().count() < width {
                line.push_str("夜来风雨声。");
            }
            let line: String = line.chars().take(width).collect();
            format!("{line}\n")
        })
        .collect()
}

/// `base` with every `step`-th line changed (`count` lines), a word changed per line.
fn edited(base: &str, step: usize, count: usize, round: usize) -> String {
    base.split_inclusive('\n')
        .enumerate()
        .map(|(i, line)| if i % step == step / 2 && i / step < count { line.replacen("第", &format!("第〔{round}〕"), 1) } else { line.to_owned() })
        .collect()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let (accept_rounds, hunk_rounds) = if full { (60, 40) } else { (3, 3) };

    // Accept: 20 hunks on 10,000 characters.
    let t = TestEngine::new();
    let source = text(200, 50);
    assert!(source.chars().count() >= 10_000);
    let id = t.ok("project.create", json!({"title": "基准", "source": source}))["id"].as_str().unwrap().to_owned();
    let kernel = t.engine.kernel();
    let mut accept = Vec::new();
    let mut syncs = Vec::new();
    for round in 0..accept_rounds {
        let project = inkstone_api::project::load(kernel.store(), &id).unwrap();
        let proposed = edited(&project.source, 10, 20, round);
        let proposal = proposals::create(
            kernel,
            NewProposal {
                project_id: id.clone(),
                kind: ProposalKind::SourcePatch,
                target: Target::Source,
                summary: "二十处修改".into(),
                payload: Payload::Text { base_text: project.source.clone(), proposed_text: proposed },
                origin: Origin { session_id: Some("ses_bench".into()), model: "bench".into(), profile_id: "llm_bench".into(), ..Origin::default() },
            },
        )
        .unwrap();
        assert_eq!(proposal.hunks.len(), 20);
        let before = kernel.store().durable_sync_count();
        let started = Instant::now();
        t.ok("proposal.accept", json!({"proposalId": proposal.id, "expectedBase": project.revision}));
        accept.push(started.elapsed());
        syncs.push(kernel.store().durable_sync_count() - before);
    }
    assert!(syncs.iter().all(|s| *s == 1), "one durable sync per accept: {syncs:?}");
    // Reference in the same run: `version.create` of the same project (also one
    // transaction with one durable sync).
    let mut create = Vec::new();
    for _ in 0..accept_rounds {
        let started = Instant::now();
        t.ok("version.create", json!({"projectId": id}));
        create.push(started.elapsed());
    }

    // Hunks: 50,000 characters, 50 changed lines.
    let base = text(1_000, 50);
    assert!(base.chars().count() >= 50_000);
    let (mut hunk_times, mut diff_times) = (Vec::new(), Vec::new());
    for round in 0..hunk_rounds {
        let proposed = edited(&base, 20, 50, round);
        let started = Instant::now();
        let hunks = proposals::hunks(&base, &proposed);
        hunk_times.push(started.elapsed());
        assert_eq!(hunks.len(), 50);
        let started = Instant::now();
        let diff = inkstone_api::diff::diff_texts(&base, &proposed);
        diff_times.push(started.elapsed());
        assert!(!diff.identical);
    }
    let (a50, a95) = (percentile(&mut accept, 0.5), percentile(&mut accept, 0.95));
    let (c50, c95) = (percentile(&mut create, 0.5), percentile(&mut create, 0.95));
    let (h50, h95) = (percentile(&mut hunk_times, 0.5), percentile(&mut hunk_times, 0.95));
    let (d50, d95) = (percentile(&mut diff_times, 0.5), percentile(&mut diff_times, 0.95));
    println!(
        "proposal.accept, 20 hunks on {} chars, durable sync included: p50 {:.2} ms, p95 {:.2} ms ({} rounds, 1 sync each)",
        source.chars().count(),
        ms(a50),
        ms(a95),
        accept.len()
    );
    println!(
        "version.create of the same project (reference, 1 sync): p50 {:.2} ms, p95 {:.2} ms; accept / create p50 ratio {:.2}",
        ms(c50),
        ms(c95),
        a50.as_secs_f64() / c50.as_secs_f64().max(1e-9)
    );
    println!("hunks of a 50-change proposal on {} chars: p50 {:.2} ms, p95 {:.2} ms ({} rounds)", base.chars().count(), ms(h50), ms(h95), hunk_times.len());
    println!(
        "version.diff of the same texts (reference): p50 {:.2} ms, p95 {:.2} ms; hunks / diff p50 ratio {:.2}",
        ms(d50),
        ms(d95),
        h50.as_secs_f64() / d50.as_secs_f64().max(1e-9)
    );
}
