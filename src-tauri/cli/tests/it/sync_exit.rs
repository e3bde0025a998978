//! Exit codes and what outlives a command, through the real binary: a sync pull that
//! failed exits 3 and the next `sync status` (another process) still says why; a
//! session's turn that ended with an error exits 3. Connecting takes the token from
//! `INKSTONE_WORKSPACE_TOKEN` (no keychain needed, nothing stored), the person's name
//! (`--name`) and, with `--upload-existing`, the projects made before.

use std::path::Path;
use std::process::Output;

use inkstone_server::proto::Role;
use inkstone_server::storage::Storage;
use inkstone_test_support::model_server::{ModelServer, Reply};
use serde_json::{json, Value};

use super::sync::Server;
use super::{cli, json_ok, run, stdout};

/// The CLI with the workspace token in its environment (and nothing on stdin).
fn with_token(data: &Path, token: &str, args: &[&str]) -> Output {
    cli(data).env("INKSTONE_WORKSPACE_TOKEN", token).args(args).output().unwrap()
}

fn failed_with(output: &Output) -> Value {
    assert_eq!(output.status.code(), Some(3), "stdout {} stderr {}", stdout(output), String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stderr).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stderr)))
}

#[test]
fn a_failed_pull_exits_3_and_the_status_keeps_the_failure() {
    let server_dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(server_dir.path());
    let (ws, _owner) = server.storage.create_workspace("团队", "olive").unwrap();
    let alice = server.storage.invite(&ws, "alice", Role::Editor).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();

    // Made before connecting: local-only, counted, and sent only when asked.
    let project = json_ok(data, &["project", "create", "春天"])["id"].as_str().unwrap().to_owned();
    json_ok(data, &["version", "create", &project]);
    json_ok(data, &["version", "create", &project, "-m", "第二版"]);
    let before = json_ok(data, &["sync", "status"]);
    assert_eq!((before["localOnlyProjects"].as_u64(), before["localOnlyVersions"].as_u64()), (Some(1), Some(2)), "{before}");
    assert!(stdout(&run(data, &["sync", "status"])).contains("2 versions of 1 projects are local-only"));

    let connected = with_token(data, &alice.token, &["--json", "sync", "connect", &server.url, "--upload-existing", "--name", "李爱丽"]);
    assert!(connected.status.success(), "{}", String::from_utf8_lossy(&connected.stderr));
    assert_eq!(json_ok(data, &["call", "workspace.get"])["displayName"], "李爱丽");
    let pushed = with_token(data, &alice.token, &["--json", "sync", "push"]);
    assert!(pushed.status.success(), "{}", String::from_utf8_lossy(&pushed.stderr));
    assert_eq!(serde_json::from_slice::<Value>(&pushed.stdout).unwrap()["pushed"], 2);
    let on_server = server.storage.changes(&ws, 0, 100).unwrap().versions;
    assert_eq!(on_server.iter().map(|v| (v.number, v.author.as_str())).collect::<Vec<_>>(), [(1, "alice"), (2, "alice")]);
    assert_eq!(server.storage.project(&ws, &project).unwrap().head, 2);

    // A refused pull: exit 3 with the code, and the status of the next process says it.
    server.storage.revoke(&ws, &alice.token_id).unwrap();
    let refused = failed_with(&with_token(data, &alice.token, &["sync", "pull"]));
    assert_eq!(refused["code"], "UNAUTHORIZED", "{refused}");
    let status = json_ok(data, &["sync", "status"]);
    assert_eq!((status["state"].as_str(), status["lastErrorCode"].as_str()), (Some("failed"), Some("UNAUTHORIZED")), "{status}");

    // An unreachable server: exit 3 too, and `sync status` says offline, not synced.
    server.stop();
    let offline = failed_with(&with_token(data, &alice.token, &["--json", "sync", "pull"]));
    assert_eq!(offline["code"], "UNREACHABLE");
    let status = json_ok(data, &["sync", "status"]);
    assert_eq!((status["state"].as_str(), status["offline"].as_bool(), status["lastErrorCode"].as_str()), (Some("offline"), Some(true), Some("UNREACHABLE")), "{status}");
    let text = stdout(&run(data, &["sync", "status"]));
    assert!(text.starts_with("offline:") && text.contains("last error: the server could not be reached"), "{text}");
}

#[test]
fn a_turn_that_ends_with_an_error_exits_3() {
    let server = ModelServer::start(vec![Reply::error(401, json!({"error": {"message": "invalid api key"}}))]);
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    json_ok(data, &["profile", "add", "--name", "local", "--base-url", &server.base_url(), "--model", "fake-model", "--no-key"]);
    let project = json_ok(data, &["project", "create", "春天"])["id"].as_str().unwrap().to_owned();
    let session = stdout(&run(data, &["session", "new", &project])).trim().to_owned();
    let sent = run(data, &["session", "send", &session, "写一段"]);
    let error = failed_with(&sent);
    let last: Value = serde_json::from_str(stdout(&sent).lines().last().unwrap()).unwrap();
    assert_eq!(last["type"], "result", "the result is still printed");
    assert_eq!(error["code"], last["data"]["reason"], "{error}");
    assert_ne!(last["data"]["reason"], "completed");
    assert!(error["message"].as_str().unwrap().starts_with("The turn ended without finishing"), "{error}");
}
