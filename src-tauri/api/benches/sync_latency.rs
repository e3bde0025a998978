//! Sync: the client's time from accept to acknowledged. A proposal is accepted on an
//! engine linked to a workspace server (in-process, on its own sled store, over HTTP
//! on loopback); its delivery job is staged in the accept's transaction, the outbox
//! write wakes the sync thread, and the clock stops when the job holds the server's
//! number (acked or finalized). Both sides sync to disk before they answer.
//!
//! Then a backlog: `versions` versions made while paused (a time offline), delivered
//! by the client's push cycle once resumed, one version per push (`max_batch` 1, as
//! before batching) and batched (the default, up to 100 per push), beside a trivial
//! axum echo endpoint's rate for the same client settings (one request per
//! connection, one version's body) measured in the same run.
//!
//! `cargo bench -p inkstone-core --bench sync_latency` prints the figures; under
//! `cargo test` (no `--bench` argument) it runs a few rounds as a smoke test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use inkstone_api::llm::keychain::{MemoryKeychain, SecretStore};
use inkstone_api::outbox::{DeliveryJob, JobState};
use inkstone_api::proposals::{self, NewProposal, Origin, Payload, ProposalKind, Target};
use inkstone_api::{Engine, EngineConfig};
use inkstone_server::http::{router, AppState, RateLimit};
use inkstone_server::proto::Role;
use inkstone_server::storage::{SledStorage, Storage};
use serde_json::json;

fn percentile(values: &mut [Duration], p: f64) -> Duration {
    values.sort();
    values[((values.len() as f64 - 1.0) * p).round() as usize]
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let rounds = if full { 100 } else { 3 };

    // The workspace server.
    let server_dir = tempfile::tempdir().unwrap();
    let storage = Arc::new(SledStorage::open(server_dir.path()).unwrap());
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let state = AppState::new(storage.clone() as Arc<dyn Storage>, RateLimit { per_second: 100_000.0, burst: 100_000.0 });
    let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    runtime.spawn(async move { axum::serve(listener, router(state)).await });
    let (workspace, _owner) = storage.create_workspace("基准", "owner").unwrap();
    let token = storage.invite(&workspace, "alice", Role::Editor).unwrap().token;

    // The client: real ids (the server dedupes by them), the app's poll (30 s), so only
    // the outbox write's wake delivers in time.
    let dir = tempfile::tempdir().unwrap();
    let keychain = Arc::new(MemoryKeychain::default());
    let mut config = EngineConfig::new(dir.path(), "Alice").with_secrets(keychain as Arc<dyn SecretStore>);
    config.sync.poll = Duration::from_secs(30);
    let engine = Arc::new(Engine::open(config).unwrap());
    engine.start_sync();
    engine.call("sync.connect", json!({"serverUrl": url, "token": token})).unwrap();
    let id = engine.call("project.create", json!({"title": "基准", "source": "第一行\n第二行\n第三行\n"})).unwrap()["id"].as_str().unwrap().to_owned();
    let jobs_acked = |engine: &Engine| engine.store().scan::<DeliveryJob>(b"").unwrap().iter().filter(|j| matches!(j.state, JobState::Acked { .. } | JobState::Finalized)).count();

    let mut times = Vec::new();
    for round in 0..rounds {
        let project = inkstone_api::project::load(engine.store(), &id).unwrap();
        let proposed = format!("{}第{round}次修改。\n", project.source);
        let proposal = proposals::create(
            engine.kernel(),
            NewProposal {
                project_id: id.clone(),
                kind: ProposalKind::SourcePatch,
                target: Target::Source,
                summary: "一处修改".into(),
                payload: Payload::Text { base_text: project.source.clone(), proposed_text: proposed },
                origin: Origin { session_id: Some("ses_bench".into()), model: "bench".into(), profile_id: "llm_bench".into(), ..Origin::default() },
            },
        )
        .unwrap();
        let acked_before = jobs_acked(&engine);
        let started = Instant::now();
        engine.call("proposal.accept", json!({"proposalId": proposal.id, "expectedBase": project.revision})).unwrap();
        let deadline = started + Duration::from_secs(20);
        while jobs_acked(&engine) == acked_before {
            assert!(Instant::now() < deadline, "round {round}: the accepted version was not acknowledged within 20 s");
            std::thread::sleep(Duration::from_micros(200));
        }
        times.push(started.elapsed());
    }
    assert_eq!(storage.changes(&workspace, 0, 1_000_000).unwrap().versions.len(), rounds, "every accepted version on the server, once");
    let (p50, p95, max) = (percentile(&mut times, 0.5), percentile(&mut times, 0.95), percentile(&mut times, 1.0));
    let versions = if full { 1_000 } else { 12 };
    let echo = echo_rate(versions);
    let one = backlog(&storage, &url, &workspace, versions, 1);
    let batched = backlog(&storage, &url, &workspace, versions, if full { inkstone_sync_proto::MAX_VERSIONS_PER_PUSH } else { 5 });
    println!("backlog of {versions} versions: echo endpoint (same client settings, one version per request): {echo:>7.0} requests/s");
    for (label, (rate, pushes)) in [("one version per push", one), ("batched", batched)] {
        println!("backlog of {versions} versions: {label:<21} {rate:>7.0} versions/s in {pushes:>4} pushes = {:.2}× echo, {:.1}× one per push", rate / echo, rate / one.0);
    }
    println!(
        "accept → acknowledged (one proposal accepted, delivered by the sync thread to an embedded server on loopback, both durable): p50 {:.2} ms, p95 {:.2} ms, max {:.2} ms over {rounds} rounds",
        p50.as_secs_f64() * 1000.0,
        p95.as_secs_f64() * 1000.0,
        max.as_secs_f64() * 1000.0
    );
}

/// Requests per second of a trivial axum echo endpoint on loopback, sent one after
/// another by a client set up as the sync transport's (one request per connection),
/// each carrying one version as a push would.
fn echo_rate(requests: usize) -> f64 {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let app = axum::Router::new().route("/echo", axum::routing::post(|body: axum::body::Bytes| async move { body }));
    let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
    let url = format!("http://{}/echo", listener.local_addr().unwrap());
    runtime.spawn(async move { axum::serve(listener, app).await });
    let client = reqwest::Client::builder().pool_max_idle_per_host(0).tcp_nodelay(true).build().unwrap();
    let body = serde_json::to_vec(&json!({"base": 0, "versions": [{"clientId": "ver_01", "title": "基准", "source": "第一行\n第二行\n第三行\n", "author": "Alice", "contentHash": "0".repeat(64), "createdAt": "2026-11-23T00:00:00Z"}]})).unwrap();
    runtime.block_on(async {
        let started = Instant::now();
        for _ in 0..requests {
            client.post(&url).header("content-type", "application/json").body(body.clone()).send().await.unwrap().error_for_status().unwrap().bytes().await.unwrap();
        }
        requests as f64 / started.elapsed().as_secs_f64()
    })
}

/// A backlog of `versions` versions made while paused, then delivered by push cycles
/// with at most `max_batch` versions per push: versions per second and pushes.
fn backlog(storage: &Arc<SledStorage>, url: &str, workspace: &str, versions: usize, max_batch: usize) -> (f64, usize) {
    let token = storage.invite(workspace, &format!("backlog{max_batch}"), Role::Editor).unwrap().token;
    let dir = tempfile::tempdir().unwrap();
    let keychain = Arc::new(MemoryKeychain::default());
    let mut config = EngineConfig::new(dir.path(), "Bob").with_secrets(keychain as Arc<dyn SecretStore>);
    config.sync.max_batch = max_batch;
    let engine = Engine::open(config).unwrap();
    engine.call("sync.connect", json!({"serverUrl": url, "token": token})).unwrap();
    engine.call("sync.pause", json!({})).unwrap();
    let id = engine.call("project.create", json!({"title": "积压", "source": "起\n"})).unwrap()["id"].as_str().unwrap().to_owned();
    for n in 0..versions {
        let project = inkstone_api::project::load(engine.store(), &id).unwrap();
        engine.call("project.update", json!({"projectId": id, "baseRevision": project.revision, "source": format!("{}第{n}行。\n", project.source)})).unwrap();
        engine.call("version.create", json!({"projectId": id})).unwrap();
    }
    engine.call("sync.resume", json!({})).unwrap();
    let pushes_before = storage.changes(workspace, 0, 1_000_000).unwrap().versions.len();
    let started = Instant::now();
    loop {
        let pending = engine.store().scan::<DeliveryJob>(b"").unwrap().iter().filter(|j| j.state != JobState::Finalized).count();
        if pending == 0 {
            break;
        }
        let report = engine.sync_runtime().run(engine.kernel(), inkstone_api::sync::cycle::What::Push).unwrap();
        assert!(report.error.is_none(), "{report:?}");
    }
    let elapsed = started.elapsed();
    let jobs = engine.store().scan::<DeliveryJob>(b"").unwrap();
    // Each push is led by one job; the others ride in its batch.
    let pushes = jobs.len() - jobs.iter().map(|j| j.batch.len()).sum::<usize>();
    assert_eq!(storage.changes(workspace, 0, 1_000_000).unwrap().versions.len() - pushes_before, versions, "every version on the server, once");
    (versions as f64 / elapsed.as_secs_f64(), pushes)
}
