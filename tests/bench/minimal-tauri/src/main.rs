//! The minimal Tauri 2 app `cargo xtask bench-start` compares Inkstone against: one
//! window over a static page. The page calls `startup_done` once its list is painted;
//! with `INKSTONE_STARTUP_MARK` set, that appends the line Inkstone's does
//! (`{"pid":…,"painted_us":…,"marks":{…}}`, times since the Unix epoch) to that file.

use std::io::Write;
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

static MAIN_MS: OnceLock<f64> = OnceLock::new();

fn epoch_ms() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs_f64() * 1000.0).unwrap_or(0.0)
}

#[tauri::command]
fn startup_done(marks: Option<serde_json::Map<String, serde_json::Value>>) {
    let painted_us = epoch_ms() * 1000.0;
    let Some(path) = std::env::var_os("INKSTONE_STARTUP_MARK") else { return };
    let mut marks = marks.unwrap_or_default();
    if let Some(main) = MAIN_MS.get() {
        marks.insert("main".to_owned(), (*main).into());
    }
    let line = serde_json::json!({ "pid": std::process::id(), "painted_us": painted_us, "marks": marks });
    if let Ok(mut file) = std::fs::OpenOptions::new().create(true).append(true).open(path) {
        let _ = writeln!(file, "{line}");
    }
}

fn main() {
    let _ = MAIN_MS.set(epoch_ms());
    tauri::Builder::default().invoke_handler(tauri::generate_handler![startup_done]).run(tauri::generate_context!()).expect("error while running the minimal app");
}
