//! Help → Report a problem: a plain text the person reads before copying it anywhere.
//! It holds the version, the system, the folders and the last lines of the newest log
//! file. Nothing is sent: the text goes back to the window, which shows it.
//!
//! The logs never hold secrets (the engine logs codes and safe messages only); as a
//! second line of defence every line is scrubbed of what looks like a key or token, and
//! of this process's own keys from the environment.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::{ApiError, Empty, Engine};

/// How many log lines the report carries, at most.
pub const REPORT_LOG_LINES: usize = 200;
/// How much of the newest log file is read from its end, at most.
const TAIL_BYTES: u64 = 256 * 1024;

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ProblemReport {
    /// The whole report, ready to copy.
    pub text: String,
    /// The log file the lines come from; absent when this process keeps no log file.
    #[ts(optional)]
    pub log_file: Option<String>,
    /// How many log lines it carries.
    pub log_lines: u32,
    /// How many of them had something that looked like a secret replaced.
    pub scrubbed_lines: u32,
}

pub(super) fn report(engine: &Engine, _: Empty) -> Result<ProblemReport, ApiError> {
    let config = engine.config();
    let mut known: Vec<String> = Vec::new();
    for key in [&config.env_api_key, &config.env_workspace_token].into_iter().flatten() {
        known.push(key.expose().to_owned());
    }
    let log_file = config.log_dir.as_deref().and_then(newest_log);
    let tail = log_file.as_deref().map(|f| tail_lines(f, REPORT_LOG_LINES)).unwrap_or_default();
    let mut scrubbed_lines = 0u32;
    let lines: Vec<String> = tail
        .into_iter()
        .map(|line| {
            let clean = scrub(&line, &known);
            if clean != line {
                scrubbed_lines += 1;
            }
            clean
        })
        .collect();
    let schema = engine.store().schema_version()?.unwrap_or(crate::store::SCHEMA_VERSION);
    let mut text = String::new();
    text.push_str(&format!("Inkstone {}\n", env!("CARGO_PKG_VERSION")));
    text.push_str(&format!("System: {} ({}/{})\n", os_name(), std::env::consts::OS, std::env::consts::ARCH));
    text.push_str(&format!("Data folder: {}\n", config.data_dir.display()));
    text.push_str(&format!("Store schema: {schema}\n"));
    match (&config.log_dir, &log_file) {
        (Some(_), Some(file)) => text.push_str(&format!("Log file: {}\n", file.display())),
        (Some(dir), None) => text.push_str(&format!("Log folder: {} (no log file yet)\n", dir.display())),
        (None, _) => text.push_str("Log folder: none (this process logs to the terminal that started it)\n"),
    }
    if !lines.is_empty() {
        text.push_str(&format!("\nLast {} log lines:\n", lines.len()));
        for line in &lines {
            text.push_str(line);
            text.push('\n');
        }
    }
    Ok(ProblemReport { text, log_file: log_file.map(|f| f.display().to_string()), log_lines: lines.len() as u32, scrubbed_lines })
}

/// The name of the operating system as it calls itself (`PRETTY_NAME` of
/// `/etc/os-release` on Linux), else the family name.
pub(super) fn os_name() -> String {
    std::fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|text| text.lines().find_map(|l| l.strip_prefix("PRETTY_NAME=").map(|v| v.trim_matches('"').to_owned())))
        .unwrap_or_else(|| std::env::consts::OS.to_owned())
}

/// The most recently written `inkstone*.log` in `dir`.
fn newest_log(dir: &Path) -> Option<PathBuf> {
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.starts_with("inkstone") && name.ends_with(".log")
        })
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .max()
        .map(|(_, path)| path)
}

/// The last `n` lines of `file`, reading at most [`TAIL_BYTES`] from its end.
fn tail_lines(file: &Path, n: usize) -> Vec<String> {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut f) = std::fs::File::open(file) else { return Vec::new() };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let start = len.saturating_sub(TAIL_BYTES);
    if f.seek(SeekFrom::Start(start)).is_err() {
        return Vec::new();
    }
    let mut bytes = Vec::new();
    if f.read_to_end(&mut bytes).is_err() {
        return Vec::new();
    }
    let text = String::from_utf8_lossy(&bytes);
    let mut lines: Vec<&str> = text.lines().collect();
    // A read that began mid-file began mid-line: drop the partial first line.
    if start > 0 && !lines.is_empty() {
        lines.remove(0);
    }
    let skip = lines.len().saturating_sub(n);
    lines[skip..].iter().map(|l| l.to_string()).collect()
}

/// What looks like a credential: provider keys (`sk-…`, `sk-ant-…`, `gsk_…`, `xai-…`,
/// `hf_…`), a bearer token, a URL's password, and `key=`/`token=`/`secret=`/`password=`
/// values.
static SECRET_SHAPES: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    [
        r"\b(?:sk|gsk|xai|hf|ghp|gho|glpat)[-_][A-Za-z0-9_\-]{8,}",
        r"(?i)\bbearer\s+[A-Za-z0-9._~+/=\-]{8,}",
        r"(?i)\b(api[_-]?key|token|secret|password|authorization)(\s*[=:]\s*)\x22?[^\s\x22,;]{4,}",
        r"(?i)(://[^/\s:@]+:)[^@\s/]+@",
    ]
    .iter()
    .filter_map(|p| Regex::new(p).ok())
    .collect()
});

/// `line` with every known secret and every secret-shaped value replaced by `[redacted]`.
pub fn scrub(line: &str, known: &[String]) -> String {
    let mut out = line.to_owned();
    for secret in known.iter().filter(|s| s.len() >= 4) {
        out = out.replace(secret.as_str(), "[redacted]");
    }
    for (i, shape) in SECRET_SHAPES.iter().enumerate() {
        out = match i {
            2 => shape.replace_all(&out, "$1$2[redacted]").into_owned(),
            3 => shape.replace_all(&out, "$1[redacted]@").into_owned(),
            _ => shape.replace_all(&out, "[redacted]").into_owned(),
        };
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrubs_keys_tokens_and_url_passwords_and_leaves_the_rest() {
        let known = vec!["my-own-env-key-123".to_owned()];
        let cases = [
            ("calling with sk-proj-abcdefghijklmnop now", "calling with [redacted] now"),
            ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.x", "Authorization: [redacted]"),
            ("api_key=abcd1234efgh done", "api_key=[redacted] done"),
            ("token: \"zzzzyyyyxxxx\"", "token: [redacted]\""),
            ("server https://ann:hunter22@example.com/v1", "server https://ann:[redacted]@example.com/v1"),
            ("key from env my-own-env-key-123!", "key from env [redacted]!"),
            ("INFO store opened data_dir=/home/a/Inkstone", "INFO store opened data_dir=/home/a/Inkstone"),
            ("WARN sync paused code=Offline 阅读 10w+", "WARN sync paused code=Offline 阅读 10w+"),
        ];
        for (line, want) in cases {
            assert_eq!(scrub(line, &known), want, "{line}");
        }
    }

    #[test]
    fn tail_keeps_the_last_lines_and_drops_a_partial_first_line() {
        let dir = tempfile::tempdir().expect("dir");
        let file = dir.path().join("inkstone.2026-11-27.log");
        let text: String = (0..30_000).map(|i| format!("line {i}\n")).collect();
        std::fs::write(&file, &text).expect("write");
        let lines = tail_lines(&file, 5);
        assert_eq!(lines, vec!["line 29995", "line 29996", "line 29997", "line 29998", "line 29999"]);
        let all = tail_lines(&file, 1_000_000);
        assert!(all.first().is_some_and(|l| l.starts_with("line ")), "no partial line: {:?}", all.first());
        assert_eq!(newest_log(dir.path()), Some(file));
    }
}
