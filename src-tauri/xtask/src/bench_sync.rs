//! `cargo xtask bench sync [--versions 1000] [--clients 1,4,16,64] [--batch 1] [--no-pg]`: the workspace
//! server's push rate over loopback, against a trivial axum echo endpoint measured in
//! the same run with the same request bodies and the same HTTP client.
//!
//! Each client pushes its own project, one version per push (`--batch N`: N versions
//! per push and per echo request; the rates are then also given in versions), so no
//! push is refused as stale. Every push is durable before it is acknowledged (sled:
//! flushed and synced; PostgreSQL: committed with `fsync` on). The PostgreSQL run
//! starts a throwaway cluster (Debian's `postgresql` package); `--no-pg` leaves it out.
//!
//! Target: the embedded store's pushes per second at least half the echo
//! endpoint's requests per second. A second baseline, the echo endpoint appending each
//! body to a file and fdatasyncing it before answering, shows what one disk sync per
//! request leaves of the echo rate on this disk. Build it optimised:
//! `cargo run --release -p xtask -- bench sync`, or, without compiling the engine, the
//! same code as `cargo run --release -p inkstone-server --example bench-sync`.
//!
//! What bounds it: a push is acknowledged only once durable, so one client waits for a
//! disk sync per push; concurrent pushes share one sled transaction and one sync on the
//! embedded store (group commit, `SledStorage`). On PostgreSQL the pushes of one workspace are ordered by its row lock,
//! which is held until the commit's WAL flush, so one workspace gets about one commit
//! per disk sync however many clients push; other workspaces run in parallel.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context, Result};
use inkstone_server::http::{router, AppState, RateLimit};
use inkstone_server::pgtemp::TempCluster;
use inkstone_server::storage::pg::PgStorage;
use inkstone_server::storage::{SledStorage, Storage};
use serde_json::{json, Value};

fn arg(args: &[String], name: &str, default: usize) -> Result<usize> {
    match args.iter().position(|a| a == name) {
        Some(i) => args.get(i + 1).context("missing value")?.parse().context("not a number"),
        None => Ok(default),
    }
}

/// One version of a ~1,000-character article, as a client pushes it.
fn version(client: usize, i: usize) -> Value {
    let source = "今天我们聊聊如何把一篇文章写得更清楚。Clear writing starts with a clear question. ".repeat(14);
    json!({
        "clientId": format!("c{client}-v{i}"),
        "title": "标题",
        "source": format!("{source}{i}"),
        "author": "amy",
        "message": null,
        "contentHash": format!("sha256:{}", "c".repeat(64)),
        "createdAt": "2026-11-23T00:00:00Z"
    })
}

async fn listen(app: axum::Router) -> Result<String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}", listener.local_addr()?);
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok(url)
}

/// Requests per second of `clients` clients sending `total` echo requests between them.
/// With `log`, each request's body is first appended to that file and the file
/// fdatasynced (one disk sync per request, no group commit): the floor any durable push
/// stands on.
async fn echo_rate(total: usize, clients: usize, batch: usize, log: Option<&std::path::Path>) -> Result<f64> {
    let app = match log {
        None => axum::Router::new().route("/echo", axum::routing::post(|body: axum::body::Bytes| async move { body })),
        Some(path) => {
            let file = Arc::new(std::sync::Mutex::new(std::fs::OpenOptions::new().create(true).append(true).open(path)?));
            axum::Router::new().route(
                "/echo",
                axum::routing::post(move |body: axum::body::Bytes| {
                    let file = file.clone();
                    async move {
                        let synced = tokio::task::spawn_blocking(move || {
                            use std::io::Write;
                            let mut file = file.lock().map_err(|_| std::io::Error::other("log lock poisoned"))?;
                            file.write_all(&body)?;
                            file.sync_data()?;
                            std::io::Result::Ok(body)
                        })
                        .await;
                        match synced {
                            Ok(Ok(body)) => Ok(body),
                            Ok(Err(e)) => Err((axum::http::StatusCode::INTERNAL_SERVER_ERROR, e.to_string())),
                            Err(e) => Err((axum::http::StatusCode::INTERNAL_SERVER_ERROR, e.to_string())),
                        }
                    }
                }),
            )
        }
    };
    let url = listen(app).await?;
    let http = reqwest::Client::new();
    let per_client = total / clients / batch;
    // Warm up the connections.
    for c in 0..clients {
        http.post(format!("{url}/echo")).json(&json!({"base": 0, "versions": [version(c, 0)]})).send().await?.error_for_status()?;
    }
    let started = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|c| {
            let (http, url) = (http.clone(), url.clone());
            tokio::spawn(async move {
                for i in 0..per_client {
                    let body = json!({"base": i * batch, "versions": (0..batch).map(|b| version(c, i * batch + b)).collect::<Vec<_>>()});
                    http.post(format!("{url}/echo")).json(&body).send().await?.error_for_status()?.bytes().await?;
                }
                anyhow::Ok(())
            })
        })
        .collect();
    for task in tasks {
        task.await??;
    }
    Ok((per_client * clients) as f64 / started.elapsed().as_secs_f64())
}

/// Pushes per second of `clients` clients pushing `total` versions between them, one
/// version per push, each client its own project.
async fn push_rate(storage: Arc<dyn Storage>, total: usize, clients: usize, batch: usize, round: usize) -> Result<(f64, Duration)> {
    let (_, owner) = tokio::task::spawn_blocking({
        let storage = storage.clone();
        move || storage.create_workspace("bench", "olive")
    })
    .await?
    .map_err(|e| anyhow!("{e}"))?;
    let state = AppState::new(storage, RateLimit { per_second: 1e9, burst: 1e9 });
    let url = listen(router(state)).await?;
    let http = reqwest::Client::new();
    let per_client = total / clients / batch;
    let started = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|c| {
            let (http, url, token) = (http.clone(), url.clone(), owner.token.clone());
            tokio::spawn(async move {
                let mut slowest = Duration::ZERO;
                for i in 0..per_client {
                    let body = json!({"base": i * batch, "versions": (0..batch).map(|b| version(c, i * batch + b)).collect::<Vec<_>>()});
                    let sent = Instant::now();
                    let response = http
                        .post(format!("{url}/v1/projects/prj_r{round}c{c}/push"))
                        .bearer_auth(&token)
                        .header("Idempotency-Key", format!("r{round}c{c}k{i}"))
                        .json(&body)
                        .send()
                        .await?;
                    let status = response.status();
                    let text = response.text().await?;
                    if status != reqwest::StatusCode::CREATED {
                        return Err(anyhow!("push {i} of client {c}: {status} {text}"));
                    }
                    slowest = slowest.max(sent.elapsed());
                }
                anyhow::Ok(slowest)
            })
        })
        .collect();
    let mut slowest = Duration::ZERO;
    for task in tasks {
        slowest = slowest.max(task.await??);
    }
    Ok(((per_client * clients) as f64 / started.elapsed().as_secs_f64(), slowest))
}

pub fn run(args: &[String]) -> Result<()> {
    let total = arg(args, "--versions", 1000)?;
    let counts: Vec<usize> = match args.iter().position(|a| a == "--clients") {
        Some(i) => args
            .get(i + 1)
            .context("missing value")?
            .split(',')
            .map(|n| n.trim().parse::<usize>().map(|n| n.max(1)))
            .collect::<Result<_, _>>()
            .context("--clients takes numbers, comma-separated")?,
        None => vec![1, 4, 16, 64],
    };
    let batch = arg(args, "--batch", 1)?.clamp(1, 100);
    let with_pg = !args.iter().any(|a| a == "--no-pg");
    if cfg!(debug_assertions) {
        println!("bench-sync: WARNING: a debug build; run `cargo run --release -p xtask -- bench sync` for real figures");
    }
    let dir = tempfile::tempdir()?;
    let sled: Arc<dyn Storage> = Arc::new(SledStorage::open(dir.path()).map_err(|e| anyhow!("{e}"))?);
    let cluster = if with_pg { Some(TempCluster::start(true).map_err(|e| anyhow!("{e}"))?) } else { None };
    let pg: Option<Arc<dyn Storage>> = match &cluster {
        Some(cluster) => {
            let url = cluster.create_database("bench").map_err(|e| anyhow!("{e}"))?;
            Some(Arc::new(PgStorage::connect(&url, 16).map_err(|e| anyhow!("{e}"))?))
        }
        None => None,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    println!("bench-sync: {total} versions (~1,000 characters each, {batch} per push) over loopback; every push durable before its answer");
    let versions = |rate: f64| if batch > 1 { format!(" ({:.0} versions/s)", rate * batch as f64) } else { String::new() };
    for (round, clients) in counts.into_iter().enumerate() {
        let echo = runtime.block_on(echo_rate(total, clients, batch, None))?;
        let synced_echo = runtime.block_on(echo_rate(total, clients, batch, Some(&dir.path().join(format!("echo-{round}.log")))))?;
        let (embedded, embedded_slowest) = runtime.block_on(push_rate(sled.clone(), total, clients, batch, round))?;
        let ratio = embedded / echo;
        let verdict = if ratio >= 0.5 { "met" } else { "MISSED" };
        println!("bench-sync: {clients} client(s): echo endpoint      {echo:>9.0} requests/s");
        println!("bench-sync: {clients} client(s): echo + fdatasync   {synced_echo:>9.0} requests/s   = {:.2}× echo", synced_echo / echo);
        println!(
            "bench-sync: {clients} client(s): embedded (sled)   {embedded:>9.0} pushes/s{}   = {ratio:.2}× echo (target ≥ 0.50×: {verdict}), {:.2}× echo + fdatasync; slowest push {:.1} ms",
            versions(embedded),
            embedded / synced_echo,
            embedded_slowest.as_secs_f64() * 1000.0
        );
        if let Some(pg) = &pg {
            let (rate, slowest) = runtime.block_on(push_rate(pg.clone(), total, clients, batch, round))?;
            println!(
                "bench-sync: {clients} client(s): PostgreSQL         {rate:>9.0} pushes/s{}   = {:.2}× echo; slowest push {:.1} ms",
                versions(rate),
                rate / echo,
                slowest.as_secs_f64() * 1000.0
            );
        }
    }
    drop(runtime);
    drop(pg);
    drop(cluster);
    Ok(())
}
