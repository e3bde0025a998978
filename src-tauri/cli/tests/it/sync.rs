//! `inkstone-cli sync …` end to end: a real workspace server (inkstone-server's routes
//! and sled store, in-process on loopback, its data in a temporary folder) and two
//! data folders driven through the real CLI binary. The token only ever enters on
//! standard input and goes to the OS keychain: with a keychain (scripts/test runs one,
//! INKSTONE_TEST_SECRET_SERVICE=1) the whole flow runs; without one, connecting is
//! refused with KEYCHAIN_UNAVAILABLE and nothing is stored.

use std::io::Write;
use std::path::Path;
use std::process::{Output, Stdio};
use std::sync::Arc;
use std::time::Duration;

use inkstone_server::http::{router, AppState, RateLimit};
use inkstone_server::proto::Role;
use inkstone_server::storage::{SledStorage, Storage};
use serde_json::Value;

use super::{cli, json_ok, run, stdout};

/// A workspace server on loopback for the CLI's sync tests (this file and `sync_exit`).
pub(super) struct Server {
    pub(super) url: String,
    pub(super) storage: Arc<SledStorage>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Server {
    pub(super) fn start(dir: &Path) -> Server {
        let storage = Arc::new(SledStorage::open(dir).unwrap());
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let state = AppState::new(storage.clone() as Arc<dyn Storage>, RateLimit::default());
        let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        runtime.spawn(async move { axum::serve(listener, router(state)).await });
        Server { url, storage, runtime: Some(runtime) }
    }
}

impl Server {
    /// Stops answering (the server becomes unreachable).
    pub(super) fn stop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_timeout(Duration::from_secs(2));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Runs the CLI with `input` on standard input (then closed).
fn with_stdin(data: &Path, args: &[&str], input: &str) -> Output {
    let mut child = cli(data).args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

fn error_of(output: &Output) -> Value {
    assert_eq!(output.status.code(), Some(1), "stdout {} stderr {}", stdout(output), String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stderr).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stderr)))
}

fn status(data: &Path) -> Value {
    json_ok(data, &["sync", "status"])
}

fn no_secret_in(data: &Path, secret: &str) {
    let found: Vec<String> = inkstone_test_support::read_tree(data).into_iter().filter(|(_, b)| b.windows(secret.len()).any(|w| w == secret.as_bytes())).map(|(p, _)| p).collect();
    assert!(found.is_empty(), "a token is in {found:?}");
}

#[test]
fn two_data_folders_sync_a_version_with_its_author_through_a_real_server() {
    let server_dir = tempfile::tempdir().unwrap();
    let server = Server::start(server_dir.path());
    let (ws, alice_token) = server.storage.create_workspace("团队", "alice").unwrap();
    let bob_token = server.storage.invite(&ws, "bob", Role::Editor).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));

    // Bad input: a clear error, and nothing changes.
    let empty = with_stdin(&a, &["sync", "connect", &server.url], "\n");
    assert_eq!(empty.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&empty.stderr).contains("standard input held no token"), "{}", String::from_utf8_lossy(&empty.stderr));
    let bad_url = error_of(&with_stdin(&a, &["--json", "sync", "connect", "ftp://team.example"], &alice_token.token));
    assert_eq!((bad_url["code"].as_str(), bad_url["details"]["field"].as_str()), (Some("VALIDATION"), Some("serverUrl")));
    assert!(bad_url["hints"].as_array().unwrap().iter().any(|h| h["id"] == "server_url_form"));
    let unreachable = error_of(&with_stdin(&a, &["--json", "sync", "connect", "http://127.0.0.1:9"], &alice_token.token));
    assert_eq!(unreachable["code"], "OFFLINE");
    let wrong = error_of(&with_stdin(&a, &["--json", "sync", "connect", &server.url], "isk_not_a_member"));
    assert_eq!(wrong["code"], "PERMISSION_DENIED");
    for refusal in [&bad_url, &unreachable] {
        assert!(!refusal.to_string().contains(&alice_token.token[4..]), "the token is in no error");
    }
    assert_eq!(status(&a)["connected"], false);
    let not_connected = error_of(&run(&a, &["--json", "sync", "members"]));
    assert_eq!(not_connected["code"], "CONFLICT");
    let no_retry = error_of(&run(&a, &["--json", "sync", "retry"]));
    assert_eq!((no_retry["code"].as_str(), no_retry["hints"][0]["id"].as_str()), (Some("CONFLICT"), Some("connect")));
    no_secret_in(&a, &alice_token.token[4..]);

    if std::env::var("INKSTONE_TEST_SECRET_SERVICE").as_deref() != Ok("1") {
        let refused = error_of(&with_stdin(&a, &["--json", "sync", "connect", &server.url], &alice_token.token));
        assert_eq!(refused["code"], "KEYCHAIN_UNAVAILABLE");
        assert_eq!(status(&a)["connected"], false, "nothing was stored");
        no_secret_in(&a, &alice_token.token[4..]);
        return;
    }

    json_ok(&a, &["call", "workspace.update", "--params", r#"{"displayName":"Alice"}"#]);
    json_ok(&b, &["call", "workspace.update", "--params", r#"{"displayName":"Bob"}"#]);
    let connected = with_stdin(&a, &["sync", "connect", &server.url], &format!("{}\n", alice_token.token));
    assert!(connected.status.success(), "{}", String::from_utf8_lossy(&connected.stderr));
    assert!(stdout(&connected).contains("团队"), "{}", stdout(&connected));
    assert!(!stdout(&connected).contains(&alice_token.token), "the token is never printed back");

    // A: a project and a version; push; the status says synced.
    let source = dir.path().join("spring.md");
    std::fs::write(&source, "第一行\n第二行\n").unwrap();
    let project = json_ok(&a, &["project", "create", "春", "--source-file", source.to_str().unwrap()])["id"].as_str().unwrap().to_owned();
    assert_eq!(json_ok(&a, &["version", "create", &project, "-m", "first"])["number"], 1);
    assert_eq!(status(&a)["state"], "pending");
    let pushed = json_ok(&a, &["sync", "push"]);
    assert_eq!((pushed["pushed"].as_u64(), pushed["status"]["state"].as_str()), (Some(1), Some("synced")));
    // Nothing failed: a retry sends nothing and says where sync stands; a job that
    // has not failed is refused.
    assert_eq!(json_ok(&a, &["sync", "retry"])["failed"], 0);
    let job_id = pushed["status"]["jobs"][0]["id"].as_str().unwrap().to_owned();
    let not_failed = error_of(&run(&a, &["--json", "sync", "retry", &job_id]));
    assert_eq!(not_failed["code"], "CONFLICT");
    assert!(not_failed["message"].as_str().unwrap().contains("has not failed"), "{not_failed}");
    let human = run(&a, &["sync", "status"]);
    assert!(stdout(&human).starts_with("synced: 团队"), "{}", stdout(&human));
    assert!(stdout(&human).contains("0 pending"), "{}", stdout(&human));
    let on_server = server.storage.changes(&ws, 0, 100).unwrap().versions;
    // The server records who pushed: the token's member ("alice", as invited), not the
    // name the client chose for itself.
    assert_eq!(on_server.iter().map(|v| (v.number, v.author.as_str())).collect::<Vec<_>>(), [(1, "alice")]);

    // B: pull brings the version with its author.
    let connected = with_stdin(&b, &["--json", "sync", "connect", &server.url], &bob_token.token);
    assert!(connected.status.success(), "{}", String::from_utf8_lossy(&connected.stderr));
    let pulled = json_ok(&b, &["sync", "pull"]);
    assert_eq!(pulled["pulled"], 1);
    let version = json_ok(&b, &["call", "version.get", "--params", &format!(r#"{{"projectId":"{project}","number":1}}"#)]);
    assert_eq!((version["author"].as_str(), version["source"].as_str(), version["origin"]["type"].as_str()), (Some("alice"), Some("第一行\n第二行\n"), Some("pulled")));

    // Members: both, with roles; an editor may not invite.
    let members = run(&b, &["sync", "members"]);
    let text = stdout(&members);
    assert!(members.status.success());
    assert!(text.contains("alice") && text.contains("bob"), "{text}");
    assert!(text.contains(&format!("(you, token …{})", &bob_token.token[bob_token.token.len() - 4..])), "{text}");
    assert!(text.contains(&bob_token.token_id) && text.contains(&alice_token.token_id), "{text}");
    let listed = json_ok(&b, &["sync", "members"]);
    assert_eq!((listed["canManage"].as_bool(), listed["members"].as_array().unwrap().len()), (Some(false), 2));
    let forbidden = error_of(&run(&b, &["--json", "sync", "invite", "carol"]));
    assert_eq!((forbidden["code"].as_str(), forbidden["hints"][0]["id"].as_str()), (Some("PERMISSION_DENIED"), Some("owner_only")));
    assert_eq!(server.storage.members(&ws).unwrap().len(), 2);

    // The owner invites: the token is printed once, with the warning; then revoked.
    let invited = run(&a, &["sync", "invite", "carol", "--role", "viewer"]);
    assert!(invited.status.success(), "{}", String::from_utf8_lossy(&invited.stderr));
    let text = stdout(&invited);
    assert!(text.contains("shown this once") && text.contains("private channel"), "{text}");
    let carol_token = text.split_whitespace().find(|w| w.starts_with("isk_")).unwrap().to_owned();
    let carol = server.storage.authenticate(&carol_token).unwrap().unwrap();
    assert_eq!((carol.member.name.as_str(), carol.member.role), ("carol", Role::Viewer));
    no_secret_in(&a, &carol_token[4..]);
    no_secret_in(&a, &alice_token.token[4..]);
    let revoked = json_ok(&a, &["sync", "revoke", &carol.token_id]);
    assert!(revoked["members"].as_array().unwrap().iter().any(|m| m["name"] == "carol" && m["revoked"] == true));
    assert!(server.storage.authenticate(&carol_token).unwrap().is_none());

    // Disconnecting B keeps its pulled work.
    let left = run(&b, &["sync", "disconnect"]);
    assert!(left.status.success(), "{}", String::from_utf8_lossy(&left.stderr));
    assert!(stdout(&left).contains("Nothing was waiting to be sent"), "{}", stdout(&left));
    assert_eq!(status(&b)["connected"], false);
    assert_eq!(json_ok(&b, &["version", "list", &project])["versions"].as_array().unwrap().len(), 1);
}
