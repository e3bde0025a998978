//! `cargo xtask bench sync`'s code, built without the rest of the workspace:
//! `cargo run --release -p inkstone-server --example bench-sync -- [--versions 1000]
//! [--clients 1,4,16,64] [--batch 1] [--no-pg]` (an optimised xtask build compiles the whole engine first).

#[path = "../../xtask/src/bench_sync.rs"]
mod bench_sync;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    bench_sync::run(&args)
}
