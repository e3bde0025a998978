//! `cargo xtask <task>`: project chores that are code, not shell.
//!
//! - `codegen [--check]`: write `ui/src/shared/api/generated.ts` from the Rust API types; with
//!   `--check`, fail when the committed file is stale.
//! - `fixture-store`: write `tests/fixtures/store-v1.tar.gz`, the first-schema store that
//!   every migration is tested against. Refuses to overwrite it: the fixture must stay
//!   what schema 1 wrote.
//! - `bench [--projects N] [--versions N]`: the store benchmark (not run in CI).
//! - `bench sync [--versions 1000] [--clients 1,4,16,64] [--batch 1] [--no-pg]`: the workspace server's
//!   pushes per second (embedded store, PostgreSQL) beside an axum echo endpoint.
//! - `bench-pipeline [--samples N]`: compile all five platforms for a 10,000-character
//!   article, against plain `comrak::markdown_to_html` of the same text as the baseline
//!   (runs inkstone-text's `pipeline` benchmark, optimised).
//! - `bench-retrieval [--docs N]`: search p50/p95 (lexical, fused) over 50,000
//!   documents against a plain tantivy BM25 query, and save-to-searchable time.
//! - `bench-start [--runs N] [--warmup N] [--projects N] [--no-build] [--baseline PATH]`: cold start of the
//!   desktop app (first screen with the project list painted; memory of the app and its
//!   WebKit processes at 5 s) beside a minimal Tauri 2 app (`tests/bench/minimal-tauri/`),
//!   release builds, alternating launches under Xvfb; prints medians, the ratio and
//!   Inkstone's startup profile. Run by hand, not in CI.
//! - `bench-build [--runs N] [--sites text,harness,store,cli] [--no-test]`: rebuild time of
//!   `inkstone-cli` after a one-line change in a compiler, the harness and the store, and
//!   `cargo test -p inkstone-text`'s wall time. Edits and restores the sources; by hand.
//! - `search-corpus [--check]`: write (or check) the search evaluation's fixture corpus
//!   in `tests/fixtures/search/` from a fixed seed.
//! - `eval-search`: score search on that corpus (lexical, semantic with the scripted
//!   embedding model, fused): nDCG@10 and recall@20 per query class.

mod bench;
mod bench_build;
mod bench_start;
mod bench_sync;
mod context_cost;
mod fixture;
mod search_corpus;

use std::path::PathBuf;

use anyhow::{bail, Context, Result};

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(task) = args.first() else {
        bail!("usage: cargo xtask <codegen [--check] | fixture-store | bench [--projects N] [--versions N] | bench sync>");
    };
    let rest = &args[1..];
    match task.as_str() {
        "codegen" => codegen(rest.iter().any(|a| a == "--check")),
        "fixture-store" => fixture::write(&repo_root().join("tests/fixtures/store-v1.tar.gz")),
        "bench" if rest.first().is_some_and(|a| a == "sync") => bench_sync::run(&rest[1..]),
        "bench" => bench::run(rest),
        "context-cost" => context_cost::run(),
        "bench-pipeline" => bench::run_pipeline(rest),
        "bench-retrieval" => bench::run_retrieval(rest),
        "bench-start" => bench_start::run(rest),
        "bench-build" => bench_build::run(rest),
        "search-corpus" => search_corpus::run(&repo_root().join("tests/fixtures/search"), rest.iter().any(|a| a == "--check")),
        "eval-search" => {
            print!("{}", inkstone_test_support::search_eval::table(&inkstone_test_support::search_eval::evaluate()));
            Ok(())
        }
        other => bail!(
            "unknown task {other:?}; try codegen, fixture-store, bench, bench-pipeline, bench-retrieval, bench-start, bench-build, context-cost, search-corpus or eval-search"
        ),
    }
}

fn codegen(check: bool) -> Result<()> {
    let path = repo_root().join("ui/src/shared/api/generated.ts");
    let fresh = inkstone_api::api::typescript::generated_file();
    if check {
        let current = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
        if current != fresh {
            bail!("{} is stale: run `cargo xtask codegen` and commit the result", path.display());
        }
        println!("codegen: {} is up to date", path.display());
        return Ok(());
    }
    std::fs::write(&path, fresh).with_context(|| format!("writing {}", path.display()))?;
    println!("codegen: wrote {}", path.display());
    Ok(())
}
