//! `cargo xtask bench-start`: cold start of the desktop app beside a minimal Tauri 2 app
//! (`tests/bench/minimal-tauri/`, same Tauri version, window and bundle settings), both
//! release builds, launched alternately on one private X server (Xvfb).
//!
//! Each launch gets a fresh HOME and XDG folders (so a fresh data folder), its own session
//! bus (`dbus-run-session`) and its own process group. Measured per launch:
//! - **on screen** (the target's figure): from just before the spawn to the moment the X
//!   server holds the first frame with content (text) in it: a watcher on the same display
//!   takes the screen's pixels at every damage event (the X DAMAGE extension) and counts
//!   their colours; a blank window or background has one or two, a frame with text dozens.
//!   This is what a person sees; a page's own marks cannot see when WebKit presents.
//! - **page mark**: from just before the spawn to the moment the page said its first
//!   screen is painted (Inkstone: the project list; the minimal app: its list). The page
//!   calls the app's `startup_done` command after that frame; with `INKSTONE_STARTUP_MARK`
//!   set the app appends `{"pid":…,"painted_us":…,"marks":{…}}` (Unix-epoch times) to
//!   that file.
//! - **memory at 5 s**: resident memory (RSS, and PSS, which splits shared pages fairly)
//!   of the app and every process under it (WebKit's web and network processes), 5 s
//!   after the spawn.
//!
//! It prints median, min and max of both, and the ratio of the medians against the 1.3×
//! target, then Inkstone's startup profile: the medians of the marks each side sets
//! (main, setup, engine opened, page start, script start, project list, painted).
//!
//! Options: `--runs N` (pairs, default 7, at least 5), `--warmup N` (pairs not counted,
//! default 1), `--projects N` (start on a data folder holding N projects instead of an
//! empty one), `--no-build` (use the binaries in target/release as they are),
//! `--inkstone PATH` (measure that build of the app instead, e.g. one kept from before a
//! change; implies nothing about building), `--baseline PATH` (also measure that build,
//! e.g. the one from before a change, in the same run: the three apps take turns, and
//! the report gives its figures and profile beside the others'), `--minimal PATH` (measure
//! that build of the minimal app instead, e.g. a wrapper that sets an environment
//! variable for a like-for-like comparison), `--debug` (debug builds instead: only for
//! a quick look when a release build cannot be had; its figures are not the target's).
//!
//! Not run in CI (CI only compiles this): it needs Xvfb and dbus-run-session, and release
//! builds of both apps (the first takes many minutes).

use std::collections::{BTreeMap, HashMap};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context, Result};
use serde_json::Value;

use crate::repo_root;

mod report;
mod screen;

use report::report;
use screen::ScreenWatch;

/// How long after the spawn memory is read.
const MEMORY_AT: Duration = Duration::from_secs(5);
/// A launch that has not painted by then failed.
const PAINT_TIMEOUT: Duration = Duration::from_secs(60);
/// The target: Inkstone's first screen at most this many times the minimal app's.
const TARGET_RATIO: f64 = 1.3;

struct Options {
    runs: usize,
    warmup: usize,
    projects: usize,
    build: bool,
    inkstone: Option<PathBuf>,
    baseline: Option<PathBuf>,
    minimal: Option<PathBuf>,
    debug: bool,
}

fn options(args: &[String]) -> Result<Options> {
    let mut options = Options { runs: 7, warmup: 1, projects: 0, build: true, inkstone: None, baseline: None, minimal: None, debug: false };
    let mut i = 0;
    while i < args.len() {
        let number =
            |i: usize| -> Result<usize> { args.get(i + 1).with_context(|| format!("{} needs a number", args[i]))?.parse().with_context(|| format!("{} needs a number", args[i])) };
        match args[i].as_str() {
            "--runs" => {
                options.runs = number(i)?;
                i += 1;
            }
            "--warmup" => {
                options.warmup = number(i)?;
                i += 1;
            }
            "--projects" => {
                options.projects = number(i)?;
                i += 1;
            }
            "--no-build" => options.build = false,
            "--debug" => options.debug = true,
            "--inkstone" => {
                options.inkstone = Some(PathBuf::from(args.get(i + 1).context("--inkstone needs a path")?));
                i += 1;
            }
            "--baseline" => {
                options.baseline = Some(PathBuf::from(args.get(i + 1).context("--baseline needs a path")?));
                i += 1;
            }
            "--minimal" => {
                options.minimal = Some(PathBuf::from(args.get(i + 1).context("--minimal needs a path")?));
                i += 1;
            }
            other => bail!("bench-start: unknown option {other:?}; try --runs N, --warmup N, --projects N, --no-build, --inkstone PATH, --baseline PATH, --minimal PATH"),
        }
        i += 1;
    }
    if options.runs < 5 {
        bail!("bench-start: --runs must be at least 5 (alternating pairs)");
    }
    Ok(options)
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
enum Which {
    Minimal,
    /// `--baseline`: another build of Inkstone (e.g. from before a change).
    Baseline,
    Inkstone,
}

impl Which {
    fn name(self) -> &'static str {
        match self {
            Which::Minimal => "minimal Tauri 2 app",
            Which::Baseline => "Inkstone (baseline)",
            Which::Inkstone => "Inkstone",
        }
    }
}

/// One launch's figures.
struct Sample {
    /// The first frame with content on the X screen (ms since the spawn).
    on_screen_ms: f64,
    /// The page's mark (ms since the spawn).
    first_screen_ms: f64,
    rss_kib: u64,
    pss_kib: u64,
    processes: usize,
    /// Each mark (ms since the spawn).
    marks: BTreeMap<String, f64>,
}

pub fn run(args: &[String]) -> Result<()> {
    let options = options(args)?;
    let root = repo_root().canonicalize().context("the repository root")?;
    for tool in ["Xvfb", "dbus-run-session"] {
        if !on_path(tool) {
            bail!("bench-start needs {tool} (apt: xvfb dbus)");
        }
    }
    let target = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root.join("target"));
    if options.build {
        build(&root, &target, options.debug)?;
    }
    let profile = if options.debug { "debug" } else { "release" };
    let inkstone = options.inkstone.clone().unwrap_or_else(|| target.join(profile).join("inkstone"));
    let minimal = options.minimal.clone().unwrap_or_else(|| target.join(profile).join("minimal-tauri"));
    let inkstone = inkstone.canonicalize().with_context(|| format!("{} is missing: run without --no-build", inkstone.display()))?;
    for binary in [&inkstone, &minimal] {
        if !binary.is_file() {
            bail!("{} is missing: run without --no-build", binary.display());
        }
    }
    let baseline = match &options.baseline {
        Some(path) => Some(path.canonicalize().with_context(|| format!("the baseline {} is missing", path.display()))?),
        None => None,
    };
    let seed = if options.projects > 0 { Some(seed_data(options.projects)?) } else { None };

    let xvfb = Xvfb::start()?;
    if options.debug {
        println!("bench-start: WARNING: debug builds (--debug); the target is measured on release builds");
    }
    println!(
        "bench-start: {} against the minimal app, {} alternating pairs (+{} warm-up) on display {}, {} data folder per launch",
        inkstone.display(),
        options.runs,
        options.warmup,
        xvfb.display,
        if options.projects > 0 { format!("a copy of a {}-project", options.projects) } else { "a fresh".to_owned() }
    );
    if let Some(baseline) = &baseline {
        println!("bench-start: baseline {} in the same rounds", baseline.display());
    }
    // The apps of a round, turn about: each goes first as often as the others.
    let mut apps = vec![Which::Minimal, Which::Inkstone];
    if baseline.is_some() {
        apps.insert(1, Which::Baseline);
    }
    let mut samples: HashMap<Which, Vec<Sample>> = HashMap::new();
    for pair in 0..options.warmup + options.runs {
        let mut order = apps.clone();
        order.rotate_left(pair % apps.len());
        for which in order {
            let binary = match which {
                Which::Inkstone => &inkstone,
                Which::Baseline => baseline.as_ref().unwrap_or(&inkstone),
                Which::Minimal => &minimal,
            };
            let seed = if which == Which::Minimal { None } else { seed.as_ref().map(|s| s.path()) };
            let sample = launch(binary, &xvfb.display, seed).with_context(|| format!("launching {}", which.name()))?;
            let counted = pair >= options.warmup;
            println!(
                "  {} {:<20} on screen {:>6.0} ms   page mark {:>6.0} ms   RSS {:>6.1} MiB   PSS {:>6.1} MiB   ({} processes)",
                if counted { format!("run {:>2}", pair - options.warmup + 1) } else { "warm-up".to_owned() },
                which.name(),
                sample.on_screen_ms,
                sample.first_screen_ms,
                mib(sample.rss_kib),
                mib(sample.pss_kib),
                sample.processes
            );
            if counted {
                samples.entry(which).or_default().push(sample);
            }
        }
    }
    drop(xvfb);
    report(&samples);
    Ok(())
}

fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(tool).is_file()))
}

fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

fn check(status: std::io::Result<std::process::ExitStatus>, what: &str) -> Result<()> {
    let status = status.with_context(|| format!("starting {what}"))?;
    if !status.success() {
        bail!("{what} failed ({status})");
    }
    Ok(())
}

/// The UI, then both apps, optimised, into the same target folder (the minimal app is
/// its own workspace, so no CI build compiles it).
fn build(root: &Path, target: &Path, debug: bool) -> Result<()> {
    let release: &[&str] = if debug { &[] } else { &["--release"] };
    println!("bench-start: building the UI (npm --prefix ui run build)");
    check(Command::new("npm").args(["--prefix", "ui", "run", "build"]).current_dir(root).stdout(Stdio::null()).status(), "npm --prefix ui run build")?;
    println!("bench-start: building Inkstone (cargo build{} -p inkstone)", if debug { "" } else { " --release" });
    check(cargo().arg("build").args(release).args(["--locked", "-p", "inkstone"]).current_dir(root).status(), "cargo build -p inkstone")?;
    println!("bench-start: building the minimal Tauri 2 app (tests/bench/minimal-tauri)");
    check(
        cargo().arg("build").args(release).args(["--locked", "--manifest-path", "tests/bench/minimal-tauri/Cargo.toml", "--target-dir"]).arg(target).current_dir(root).status(),
        "cargo build of tests/bench/minimal-tauri",
    )
}

/// A data folder holding `n` projects (made through the API), copied for every launch.
fn seed_data(n: usize) -> Result<tempfile::TempDir> {
    let dir = tempfile::tempdir()?;
    let engine = inkstone_api::Engine::open(inkstone_api::EngineConfig::new(dir.path().join("Inkstone"), "bench-start"))?;
    for i in 0..n {
        let source = format!("# Draft {i}\n\n今天我们聊聊如何把一篇文章写得更清楚。Clear writing starts with a clear question.\n");
        engine.call("project.create", serde_json::json!({ "title": format!("Draft {i}"), "source": source }))?;
    }
    engine.kernel().search_index().wait_idle(Duration::from_secs(60));
    drop(engine);
    Ok(dir)
}

fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

/// A private X server, stopped when dropped.
struct Xvfb {
    child: Child,
    display: String,
}

impl Xvfb {
    fn start() -> Result<Xvfb> {
        let number =
            (90..200).find(|n| !Path::new(&format!("/tmp/.X{n}-lock")).exists() && !Path::new(&format!("/tmp/.X11-unix/X{n}")).exists()).context("no free X display number")?;
        let display = format!(":{number}");
        let child = Command::new("Xvfb")
            .args([&display, "-screen", "0", "1280x800x24", "-nolisten", "tcp"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("starting Xvfb")?;
        let xvfb = Xvfb { child, display };
        let socket = PathBuf::from(format!("/tmp/.X11-unix/X{number}"));
        let deadline = Instant::now() + Duration::from_secs(10);
        while !socket.exists() {
            if Instant::now() > deadline {
                bail!("Xvfb did not start on {}", xvfb.display);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(xvfb)
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn epoch_us() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs_f64() * 1e6).unwrap_or(0.0)
}

/// One launch: fresh folders, spawn, wait for the paint mark, read memory at 5 s, stop
/// the whole process group.
fn launch(binary: &Path, display: &str, seed: Option<&Path>) -> Result<Sample> {
    let tmp = tempfile::tempdir()?;
    let home = tmp.path().join("home");
    let data = home.join(".local/share");
    for dir in [&home, &data, &home.join(".config"), &home.join(".cache")] {
        std::fs::create_dir_all(dir)?;
    }
    if let Some(seed) = seed {
        copy_dir(&seed.join("Inkstone"), &data.join("Inkstone"))?;
    }
    let mark = tmp.path().join("startup-mark");
    let log = std::fs::File::create(tmp.path().join("app.log"))?;
    let mut command = Command::new("dbus-run-session");
    command
        .arg("--")
        .arg(binary)
        .current_dir(&home)
        .env("DISPLAY", display)
        .env("HOME", &home)
        .env("XDG_DATA_HOME", &data)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env("INKSTONE_STARTUP_MARK", &mark)
        .env("GDK_BACKEND", "x11")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("INKSTONE_DATA_DIR")
        .env_remove("INKSTONE_LOG")
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .process_group(0);
    let screen = ScreenWatch::start(display)?;
    let spawned_us = epoch_us();
    let spawned = Instant::now();
    let child = command.spawn().context("starting dbus-run-session")?;
    let mut group = Group(child);
    let line = loop {
        if let Ok(text) = std::fs::read_to_string(&mark) {
            if let Some(line) = text.lines().next().filter(|l| l.ends_with('}')) {
                break line.to_owned();
            }
        }
        if let Some(status) = group.0.try_wait()? {
            bail!("the app exited ({status}) before painting; its log:\n{}", tail(&tmp.path().join("app.log")));
        }
        if spawned.elapsed() > PAINT_TIMEOUT {
            bail!("no first screen within {PAINT_TIMEOUT:?}; its log:\n{}", tail(&tmp.path().join("app.log")));
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let mark: Value = serde_json::from_str(&line).with_context(|| format!("the mark line {line:?}"))?;
    let pid = mark["pid"].as_u64().context("the mark has no pid")? as u32;
    let painted_us = mark["painted_us"].as_f64().context("the mark has no painted_us")?;
    let mut marks = BTreeMap::new();
    if let Some(object) = mark["marks"].as_object() {
        for (name, value) in object {
            if let Some(epoch_ms) = value.as_f64() {
                marks.insert(name.clone(), epoch_ms - spawned_us / 1000.0);
            }
        }
    }
    let shown = screen.wait(PAINT_TIMEOUT.saturating_sub(spawned.elapsed()))?;
    if let Some(wait) = MEMORY_AT.checked_sub(spawned.elapsed()) {
        std::thread::sleep(wait);
    }
    let (rss_kib, pss_kib, processes) = memory_of_tree(pid);
    group.stop();
    let on_screen_ms = shown.saturating_duration_since(spawned).as_secs_f64() * 1000.0;
    Ok(Sample { on_screen_ms, first_screen_ms: (painted_us - spawned_us) / 1000.0, rss_kib, pss_kib, processes, marks })
}

fn tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}

/// The launched process group, stopped (TERM, then KILL) when dropped.
struct Group(Child);

impl Group {
    fn signal(&self, signal: &str) {
        let _ = Command::new("kill").args([signal, "--", &format!("-{}", self.0.id())]).stderr(Stdio::null()).status();
    }

    fn stop(&mut self) {
        self.signal("-TERM");
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if matches!(self.0.try_wait(), Ok(Some(_))) && !group_alive(self.0.id()) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.signal("-KILL");
        let _ = self.0.wait();
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) || group_alive(self.0.id()) {
            self.stop();
        }
    }
}

fn group_alive(pgid: u32) -> bool {
    processes().iter().any(|p| p.pgid == pgid)
}

struct Proc {
    pid: u32,
    ppid: u32,
    pgid: u32,
}

fn processes() -> Vec<Proc> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            // After the command name (in parentheses, which may hold spaces): state, ppid, pgrp.
            let fields: Vec<&str> = stat[stat.rfind(')')? + 2..].split(' ').collect();
            Some(Proc { pid, ppid: fields.get(1)?.parse().ok()?, pgid: fields.get(2)?.parse().ok()? })
        })
        .collect()
}

/// RSS and PSS (KiB) of `pid` and all its descendants, and how many processes that is.
fn memory_of_tree(pid: u32) -> (u64, u64, usize) {
    let all = processes();
    let mut tree = vec![pid];
    let mut i = 0;
    while i < tree.len() {
        let parent = tree[i];
        tree.extend(all.iter().filter(|p| p.ppid == parent).map(|p| p.pid));
        i += 1;
    }
    let field = |path: String, name: &str| -> u64 {
        std::fs::read_to_string(path)
            .ok()
            .and_then(|text| text.lines().find(|l| l.starts_with(name)).and_then(|l| l.split_whitespace().nth(1)).and_then(|v| v.parse().ok()))
            .unwrap_or(0)
    };
    let rss = tree.iter().map(|p| field(format!("/proc/{p}/status"), "VmRSS:")).sum();
    let pss = tree.iter().map(|p| field(format!("/proc/{p}/smaps_rollup"), "Pss:")).sum();
    (rss, pss, tree.len())
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}
