//! inkstone-cli through its real binary: commands, exit codes, and `serve` over HTTP.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod activity;
mod checkpoints;
mod commands;
mod optimize;
mod performance;
mod profile;
mod proposal;
mod rules;
mod serve;
mod session;
mod sync;
mod sync_exit;
mod update;

use std::path::Path;
use std::process::{Command, Output};

pub fn cli(data_dir: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_inkstone-cli"));
    command.arg("--data-dir").arg(data_dir).env_remove("INKSTONE_DATA_DIR").env("INKSTONE_LOG", "off");
    command
}

pub fn run(data_dir: &Path, args: &[&str]) -> Output {
    cli(data_dir).args(args).output().unwrap()
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Runs a command that must succeed and returns its JSON output (`--json`).
pub fn json_ok(data_dir: &Path, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let output = run(data_dir, &all);
    assert!(output.status.success(), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}
