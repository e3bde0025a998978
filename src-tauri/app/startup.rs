//! How long the start took. The shell marks its own steps (main, setup, the engine
//! opened); the page marks its own and calls `startup_done` once the first screen (the
//! project list) is painted (and again once React has taken over from the entry's static
//! first frame, with the marks set since). The log then says how long that took; with
//! `INKSTONE_STARTUP_MARK=<file>` (set by `cargo xtask bench-start`), one JSON line per call,
//! `{"pid":…,"painted_us":…,"marks":{name: ms since the Unix epoch}}` is appended to
//! that file.

use std::io::Write;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};

static MARKS: Mutex<Vec<(&str, f64)>> = Mutex::new(Vec::new());
/// Set once the first screen is painted; background start-up work waits for it.
static SHOWN: (Mutex<bool>, Condvar) = (Mutex::new(false), Condvar::new());

/// Waits until the first screen is painted, or `at_most` (a page that never reports
/// must not keep the work from running).
pub fn wait_for_first_screen(at_most: Duration) {
    let (shown, changed) = &SHOWN;
    let guard = shown.lock().unwrap_or_else(|p| p.into_inner());
    let _ = changed.wait_timeout_while(guard, at_most, |shown| !*shown);
}

fn epoch_ms() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs_f64() * 1000.0).unwrap_or(0.0)
}

/// Records the shell's step `name` now.
pub fn mark(name: &'static str) {
    MARKS.lock().unwrap_or_else(|p| p.into_inner()).push((name, epoch_ms()));
}

/// The page's first screen is painted; `marks` are the page's own.
#[tauri::command]
pub fn startup_done(marks: Option<Map<String, Value>>) {
    let painted = epoch_ms();
    // The page may call again (the entry painted a static first frame, then React took
    // over): the first call is the first screen; later ones only add their marks as
    // another line of the mark file.
    let first = !std::mem::replace(&mut *SHOWN.0.lock().unwrap_or_else(|p| p.into_inner()), true);
    SHOWN.1.notify_all();
    let mut all = marks.unwrap_or_default();
    all.retain(|_, v| v.is_f64() || v.is_u64());
    let shell = MARKS.lock().unwrap_or_else(|p| p.into_inner()).clone();
    for (name, at) in &shell {
        all.insert(format!("rust.{name}"), (*at).into());
    }
    if let Some((_, main)) = shell.iter().find(|(name, _)| *name == "main").filter(|_| first) {
        tracing::info!(ms = (painted - main).round(), "first screen painted");
    }
    let Some(path) = std::env::var_os("INKSTONE_STARTUP_MARK") else { return };
    let line = serde_json::json!({ "pid": std::process::id(), "painted_us": painted * 1000.0, "marks": all });
    match std::fs::OpenOptions::new().create(true).append(true).open(&path) {
        Ok(mut file) => {
            let _ = writeln!(file, "{line}");
        }
        Err(error) => tracing::warn!(%error, "writing the startup mark"),
    }
}
