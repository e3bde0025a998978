//! The AI activity view over 100,000 audit records (100 projects, 10 people, 3 models,
//! one run of 5 usage records behind every 5 decisions, 100,000 proposals): p50/p95 of
//! `aiActivity.list` pages (200 rows, every row read in full: proposal, profile,
//! project title, the run's usage) for the filters the view offers, including a rare
//! person and a rare decision, and the time of a full CSV export.
//!
//! Then the workspace scope: a workspace server (in-process, its sled
//! store, HTTP on loopback) holding 100,000 members' accepted AI versions with their
//! origin detail (100 projects, 10 members, one of them rare, 3 models), and an owner's
//! engine asking `aiActivity.list {scope: workspace}` for a page as Settings → Workspace
//! does (500 rows): everyone, one person, a rare person, one model, one project, accepted
//! only, rejected only (none travel), person + model. Each line prints the engine's
//! p50/p95 (HTTP, the server's query, the rows) beside the server storage's own query.
//!
//! `cargo bench -p inkstone-core --bench activity` prints the figures; under
//! `cargo test` (no `--bench` argument) it runs on 2,000 records as a smoke test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::TimeZone;
use inkstone_api::proposals::apply::{AuditAction, AuditRecord};
use inkstone_api::proposals::{self, NewProposal, Origin, Payload, ProposalKind, Target};
use inkstone_api::store::{Batch, Durability};
use inkstone_api::usage::{UsageOutcome, UsageRecord};
use inkstone_server::http::{router, AppState, RateLimit};
use inkstone_server::proto::{AiActivityQuery, AiOrigin, AiThrough, PushRequest, PushVersion, Role};
use inkstone_server::storage::{SledStorage, Storage};
use inkstone_test_support::TestEngine;
use serde_json::{json, Value};

fn percentile(values: &mut [Duration], p: f64) -> Duration {
    values.sort();
    let index = ((values.len() as f64 - 1.0) * p).round() as usize;
    values[index]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let (n_records, rounds) = if full { (100_000usize, 200) } else { (2_000, 3) };
    let t = TestEngine::new();
    let kernel = t.engine.kernel();
    let profile = t.ok("llmProfile.create", json!({"name": "基准", "baseUrl": "http://127.0.0.1:9/v1", "model": "model-0", "contextWindow": 32_768}))["profile"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let projects: Vec<String> =
        (0..100).map(|i| t.ok("project.create", json!({"title": format!("项目 {i}"), "source": "春眠不觉晓，\n处处闻啼鸟。\n"}))["id"].as_str().unwrap().to_owned()).collect();
    // One real proposal per project, cloned under new ids (a proposal per decision).
    let templates: Vec<proposals::Proposal> = projects
        .iter()
        .map(|project_id| {
            proposals::create(
                kernel,
                NewProposal {
                    project_id: project_id.clone(),
                    kind: ProposalKind::SourcePatch,
                    target: Target::Source,
                    summary: "一处修改".into(),
                    payload: Payload::Text { base_text: "春眠不觉晓，\n处处闻啼鸟。\n".into(), proposed_text: "春眠不觉晓，\n处处闻鸟啼。\n".into() },
                    origin: Origin { run_id: Some("run_x".into()), model: "model-0".into(), profile_id: profile.clone(), ..Origin::default() },
                },
            )
            .unwrap()
        })
        .collect();
    let start = chrono::Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
    let people: Vec<String> = (0..9).map(|i| format!("person {i}")).chain(["rare person".to_owned()]).collect();
    let started = Instant::now();
    let mut batch = Batch::new();
    for i in 0..n_records {
        let at = start + chrono::Duration::seconds(i as i64 * 30);
        let project = i % projects.len();
        let run_id = format!("run_{:08}", i / 5);
        let mut proposal = templates[project].clone();
        proposal.id = format!("prp_b{i:09}");
        proposal.origin.run_id = Some(run_id.clone());
        proposal.origin.model = format!("model-{}", i % 3);
        proposal.created_at = at;
        let person = if i % 1000 == 7 { people[9].clone() } else { people[i % 9].clone() };
        // 1 in 100 is a rejection.
        let action = if i % 100 == 3 { AuditAction::Rejected } else { AuditAction::Accepted };
        batch
            .put(&AuditRecord {
                id: format!("aud_b{i:09}"),
                project_id: proposal.project_id.clone(),
                proposal_id: proposal.id.clone(),
                kind: ProposalKind::SourcePatch,
                action,
                hunks: proposal.hunks.iter().map(|h| h.id.clone()).collect(),
                hunk_hashes: proposal.hunks.iter().map(|h| h.content_hash.clone()).collect(),
                choices: Vec::new(),
                actor: person,
                via: "person".into(),
                approval_request_id: None,
                origin: proposal.origin.clone(),
                version: (action == AuditAction::Accepted).then_some(2),
                draft_revision: None,
                reason: (action == AuditAction::Rejected).then(|| "保持原样".to_owned()),
                at,
            })
            .unwrap();
        batch.put(&proposal).unwrap();
        batch
            .put(&UsageRecord {
                id: format!("use_b{i:09}"),
                at,
                profile_id: profile.clone(),
                profile_name: "基准".into(),
                model: proposal.origin.model.clone(),
                purpose: "optimize".into(),
                session_id: None,
                run_id: Some(run_id),
                input_tokens: 1_200,
                output_tokens: 300,
                tokens_estimated: false,
                cost: Some(0.002),
                latency_ms: 900,
                attempts: 1,
                outcome: UsageOutcome::Ok,
            })
            .unwrap();
        if batch.len() >= 20_000 {
            kernel.store().apply(std::mem::take(&mut batch), Durability::Grouped).unwrap();
        }
    }
    kernel.store().apply(batch, Durability::Durable).unwrap();
    println!("seeded {n_records} audit records, {n_records} proposals and usage records in {:.1} s", started.elapsed().as_secs_f64());

    let mid = (start + chrono::Duration::seconds(n_records as i64 * 15)).to_rfc3339();
    let queries: Vec<(&str, Value)> = vec![
        ("workspace, newest 200", json!({})),
        ("one project", json!({"projectId": projects[42]})),
        ("one person", json!({"person": people[4]})),
        ("one model", json!({"model": "model-1"})),
        ("a rare person (1 in 1,000)", json!({"person": people[9]})),
        ("rejected only (1 in 100)", json!({"decision": "rejected"})),
        ("project + rejected", json!({"projectId": projects[3], "decision": "rejected"})),
        ("person + rejected", json!({"person": people[4], "decision": "rejected"})),
        ("model + rejected", json!({"model": "model-2", "decision": "rejected"})),
        ("accepted only (99 in 100)", json!({"decision": "accepted"})),
        ("before a date, in the middle", json!({"to": mid})),
        ("project + model nobody used", json!({"projectId": projects[7], "model": "model-9"})),
    ];
    let mut worst_p95 = Duration::ZERO;
    for (name, filter) in &queries {
        let mut times = Vec::with_capacity(rounds);
        let mut n_rows = 0;
        for _ in 0..rounds {
            let began = Instant::now();
            let page = t.ok("aiActivity.list", json!({"filter": filter}));
            times.push(began.elapsed());
            n_rows = page["rows"].as_array().unwrap().len();
        }
        let (p50, p95) = (percentile(&mut times, 0.5), percentile(&mut times, 0.95));
        worst_p95 = worst_p95.max(p95);
        println!("aiActivity.list {name:<32} rows {n_rows:>4}  p50 {:>7.2} ms  p95 {:>7.2} ms", ms(p50), ms(p95));
    }
    println!("worst p95 over the filters: {:.2} ms (target < 50 ms)", ms(worst_p95));
    let began = Instant::now();
    let export = t.ok("aiActivity.export", json!({}));
    println!("aiActivity.export of every row: {} rows, {:.1} MB, {:.0} ms", export["nRows"], export["csv"].as_str().unwrap().len() as f64 / 1e6, ms(began.elapsed()));
    workspace_scope(n_records, rounds);
}

/// The workspace scope: the server's rows as an owner's engine reads them.
fn workspace_scope(n_records: usize, rounds: usize) {
    let server_dir = tempfile::tempdir().unwrap();
    let storage = Arc::new(SledStorage::open(server_dir.path()).unwrap());
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let state = AppState::new(storage.clone() as Arc<dyn Storage>, RateLimit { per_second: 100_000.0, burst: 100_000.0 });
    let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    runtime.spawn(async move { axum::serve(listener, router(state)).await });
    let (workspace, owner) = storage.create_workspace("基准", "owner").unwrap();
    // Nine members push nearly everything; a tenth ("rare") one version in 10,000.
    let members: Vec<_> = (0..10)
        .map(|i| {
            let name = if i == 9 { "rare member".to_owned() } else { format!("member {i}") };
            let token = storage.invite(&workspace, &name, Role::Editor).unwrap().token;
            (name, storage.authenticate(&token).unwrap().unwrap())
        })
        .collect();

    let n_projects = 100;
    let per_push = 100;
    let per_project = n_records / n_projects;
    let start_ms: u64 = 1_767_225_600_000; // 2026-01-01
    let started = Instant::now();
    let mut seq = 0u64;
    let mut n_pushed = 0usize;
    for project in 0..n_projects {
        let project_id = format!("prj_bench{project:04}");
        let mut head = 0u32;
        // Every tenth project begins with one version of the rare member's.
        let rare = usize::from(project % 10 == 0);
        for chunk in 0..rare + per_project.div_ceil(per_push) {
            let (n, (name, caller)) = if chunk < rare { (1, &members[9]) } else { (per_push.min(per_project - (chunk - rare) * per_push), &members[(project + chunk) % 9]) };
            let versions = (0..n)
                .map(|_| {
                    seq += 1;
                    let at = start_ms + seq * 30_000;
                    PushVersion {
                        client_id: format!("ver_bench{seq:09}"),
                        title: format!("项目 {project}"),
                        source: "春眠不觉晓，\n处处闻鸟啼。\n".into(),
                        author: name.clone(),
                        message: None,
                        content_hash: format!("{seq:064x}"),
                        created_at: chrono::DateTime::from_timestamp_millis(at as i64).unwrap().to_rfc3339(),
                        origin: Some("aiProposal".into()),
                        ai: Some(AiOrigin {
                            accepted_by: name.clone(),
                            accepted_at: at,
                            model: format!("model-{}", seq % 3),
                            provider_host: Some("api.example.com".into()),
                            prompt_version: Some("drafting@v1".into()),
                            prompt_layers: vec!["core-identity@v1".into(), "guardrails@v1".into(), "mode.drafting@v1".into()],
                            proposal_id: format!("prp_bench{seq:09}"),
                            n_hunks: 1,
                            n_hunks_total: Some(1),
                            through: AiThrough::DraftingSession { session_id: format!("ses_bench{project:04}") },
                        }),
                    }
                })
                .collect::<Vec<_>>();
            n_pushed += versions.len();
            let request = PushRequest { base: head, versions };
            let key = format!("bench:{project}:{chunk}");
            match storage.push(caller, &project_id, &request, &key, &key).unwrap() {
                inkstone_server::storage::PushOutcome::Done(response) => head = response.head,
                other => panic!("push: {other:?}"),
            }
        }
    }
    println!("\nseeded the workspace server with {n_pushed} accepted AI versions and their origin detail in {:.1} s", started.elapsed().as_secs_f64());

    let t = TestEngine::new();
    t.ok("sync.connect", json!({"serverUrl": url, "token": owner.token, "displayName": "owner"}));
    let queries: Vec<(&str, Value, AiActivityQuery)> = vec![
        ("everyone, newest 500", json!({}), AiActivityQuery::default()),
        ("one person (1 in 9)", json!({"person": "member 4"}), AiActivityQuery { person: Some("member 4".into()), ..AiActivityQuery::default() }),
        ("a rare person (1 in 10,000)", json!({"person": "rare member"}), AiActivityQuery { person: Some("rare member".into()), ..AiActivityQuery::default() }),
        ("one model (1 in 3)", json!({"model": "model-1"}), AiActivityQuery { model: Some("model-1".into()), ..AiActivityQuery::default() }),
        ("one project (1 in 100)", json!({"projectId": "prj_bench0042"}), AiActivityQuery { project: Some("prj_bench0042".into()), ..AiActivityQuery::default() }),
        ("accepted only (every row)", json!({"decision": "accepted"}), AiActivityQuery::default()),
        ("rejected only (none travel)", json!({"decision": "rejected"}), AiActivityQuery::default()),
        (
            "person + model",
            json!({"person": "member 4", "model": "model-2"}),
            AiActivityQuery { person: Some("member 4".into()), model: Some("model-2".into()), ..AiActivityQuery::default() },
        ),
    ];
    let mut worst_p95 = Duration::ZERO;
    for (name, filter, mut wire) in queries {
        wire.limit = Some(500);
        let mut engine_times = Vec::with_capacity(rounds);
        let mut server_times = Vec::with_capacity(rounds);
        let mut n_rows = 0;
        for _ in 0..rounds {
            let began = Instant::now();
            let page = t.ok("aiActivity.list", json!({"scope": "workspace", "filter": filter, "limit": 500}));
            engine_times.push(began.elapsed());
            n_rows = page["rows"].as_array().unwrap().len();
            let began = Instant::now();
            storage.ai_activity(&workspace, None, &wire).unwrap();
            server_times.push(began.elapsed());
        }
        let (p50, p95) = (percentile(&mut engine_times, 0.5), percentile(&mut engine_times, 0.95));
        worst_p95 = worst_p95.max(p95);
        let server_p95 = percentile(&mut server_times, 0.95);
        println!(
            "aiActivity.list workspace {name:<28} rows {n_rows:>4}  p50 {:>7.2} ms  p95 {:>7.2} ms  (the server's query alone: p95 {:>7.2} ms)",
            ms(p50),
            ms(p95),
            ms(server_p95)
        );
    }
    println!("worst p95 of the workspace scope over the filters: {:.2} ms (target < 50 ms)", ms(worst_p95));
    runtime.shutdown_timeout(Duration::from_secs(2));
}
