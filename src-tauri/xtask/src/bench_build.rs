//! `cargo xtask bench-build`: how long `inkstone-cli` takes to rebuild after a one-line
//! change in a compiler (inkstone-text), in the harness and in the store, and how
//! long `cargo test -p inkstone-text` takes.
//!
//! Each sample adds one statement (`std::hint::black_box(<n>);`, a new `n` each time, so
//! the function body really changes) at the top of a known function, runs
//! `cargo build -p inkstone-cli` and records its wall time and the CPU time cargo and
//! rustc used (from `/proc/self/stat`'s children times, so a loaded machine shows in the
//! wall figure but not in the CPU one). The sites are rotated, so every sample of a site
//! follows a build of another site. The edited files are restored at the end, also on
//! error. Run it by hand on an otherwise built tree; CI only compiles it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

/// Where the one-line change goes: a file and the line that opens the function.
struct Site {
    name: &'static str,
    file: &'static str,
    opens: &'static str,
}

const SITES: &[Site] = &[
    Site { name: "text (a compiler)", file: "src-tauri/text/src/pipeline/wechat.rs", opens: "fn spaces_to_nbsp(line: &str) -> String {" },
    Site { name: "harness", file: "src-tauri/agent/src/harness/turn.rs", opens: "fn check_open(engine: Harness<'_>, session: &Session) -> Result<(), ApiError> {" },
    Site { name: "store", file: "src-tauri/store/src/write.rs", opens: "    pub fn generation(&self, kind: Kind) -> u64 {" },
    Site { name: "cli only (compile+link)", file: "src-tauri/cli/src/main.rs", opens: "fn main() -> ExitCode {" },
];

/// Puts the edited files back as they were, whatever happens.
struct Restore(Vec<(PathBuf, String)>);

impl Drop for Restore {
    fn drop(&mut self) {
        for (path, text) in &self.0 {
            if let Err(error) = std::fs::write(path, text) {
                eprintln!("bench-build: could not restore {}: {error}", path.display());
            }
        }
    }
}

struct Sample {
    wall: Duration,
    cpu: Duration,
}

pub fn run(args: &[String]) -> Result<()> {
    let mut runs = 2usize;
    let mut only: Option<Vec<String>> = None;
    let mut test_text = true;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--runs" => runs = it.next().context("--runs needs a number")?.parse().context("--runs needs a number")?,
            "--sites" => only = Some(it.next().context("--sites needs a list, e.g. text,harness")?.split(',').map(str::to_owned).collect()),
            "--no-test" => test_text = false,
            other => bail!("unknown argument {other:?}; usage: cargo xtask bench-build [--runs N] [--sites text,harness,store,cli] [--no-test]"),
        }
    }
    let root = crate::repo_root().canonicalize().context("finding the repository root")?;
    let sites: Vec<&Site> = SITES.iter().filter(|s| only.as_ref().is_none_or(|o| o.iter().any(|n| s.name.starts_with(n.as_str())))).collect();
    if sites.is_empty() {
        bail!("no site matches --sites; the sites are text, harness, store and cli");
    }

    let originals = sites.iter().map(|s| {
        let path = root.join(s.file);
        let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
        if text.matches(s.opens).count() != 1 {
            bail!("{} no longer has exactly one line `{}`; update SITES in bench_build.rs", s.file, s.opens.trim());
        }
        Ok((path, text))
    });
    let restore = Restore(originals.collect::<Result<_>>()?);

    println!("bench-build: warming up (cargo build -p inkstone-cli)");
    build(&root)?;
    let mut samples: Vec<Vec<Sample>> = sites.iter().map(|_| Vec::new()).collect();
    let mut stamp = std::process::id() as u64 * 1000;
    for round in 0..runs {
        for (index, site) in sites.iter().enumerate() {
            stamp += 1;
            let (path, original) = &restore.0[index];
            let edited = original.replacen(site.opens, &format!("{}\n    std::hint::black_box({stamp});", site.opens), 1);
            std::fs::write(path, edited).with_context(|| format!("editing {}", path.display()))?;
            let sample = build(&root)?;
            println!("  round {} {:<26} {:>7.1} s wall {:>7.1} s cpu", round + 1, site.name, sample.wall.as_secs_f64(), sample.cpu.as_secs_f64());
            samples[index].push(sample);
        }
    }
    drop(restore);
    println!("bench-build: files restored; the next build recompiles the edited crates once more");

    println!("\n| rebuild of inkstone-cli after a one-line change in | runs | wall min | wall median | cpu median |");
    println!("|---|---|---|---|---|");
    for (site, samples) in sites.iter().zip(&samples) {
        let (wall_min, wall_median) = min_median(samples.iter().map(|s| s.wall).collect());
        let (_, cpu_median) = min_median(samples.iter().map(|s| s.cpu).collect());
        println!("| {} | {} | {:.1} s | {:.1} s | {:.1} s |", site.name, samples.len(), wall_min.as_secs_f64(), wall_median.as_secs_f64(), cpu_median.as_secs_f64());
    }

    if test_text {
        let before = children_cpu()?;
        let started = Instant::now();
        let status = cargo(&root).args(["test", "-p", "inkstone-text", "--quiet"]).status().context("running cargo test -p inkstone-text")?;
        let (wall, cpu) = (started.elapsed(), children_cpu()? - before);
        if !status.success() {
            bail!("cargo test -p inkstone-text failed");
        }
        println!("\n`cargo test -p inkstone-text` (after the restore, so it rebuilds the text crate): {:.1} s wall, {:.1} s cpu", wall.as_secs_f64(), cpu.as_secs_f64());
    }
    Ok(())
}

fn cargo(root: &Path) -> Command {
    let mut command = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    command.current_dir(root);
    command
}

fn build(root: &Path) -> Result<Sample> {
    let before = children_cpu()?;
    let started = Instant::now();
    let status = cargo(root).args(["build", "--quiet", "-p", "inkstone-cli"]).status().context("running cargo build -p inkstone-cli")?;
    let wall = started.elapsed();
    if !status.success() {
        bail!("cargo build -p inkstone-cli failed");
    }
    Ok(Sample { wall, cpu: children_cpu()? - before })
}

/// User plus system time of this process's waited-for children (cargo and, through it,
/// rustc and the linker), from `/proc/self/stat` (fields 16 and 17, in 1/100 s).
fn children_cpu() -> Result<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").context("reading /proc/self/stat (bench-build needs Linux)")?;
    let after_name = stat.rsplit_once(')').context("unexpected /proc/self/stat")?.1;
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    // After the name, field 3 (state) is index 0, so cutime (16) and cstime (17) are 13 and 14.
    let ticks = |i: usize| -> Result<u64> { fields.get(i).context("short /proc/self/stat")?.parse::<u64>().context("parsing /proc/self/stat") };
    Ok(Duration::from_millis((ticks(13)? + ticks(14)?) * 10))
}

fn min_median(mut values: Vec<Duration>) -> (Duration, Duration) {
    values.sort();
    let median = if values.len() % 2 == 1 { values[values.len() / 2] } else { (values[values.len() / 2 - 1] + values[values.len() / 2]) / 2 };
    (values[0], median)
}
