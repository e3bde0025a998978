//! Sync hardened from outside: one rule for control characters at the API
//! and on the wire, the pusher as the author, a failure that outlives its process, the
//! projects made before connecting, a token without a keychain, and the name colleagues
//! see. Real engines against a real `inkstone-server` on loopback (sled).

use std::sync::Arc;

use inkstone_api::llm::keychain::{KeychainError, SecretStore};
use inkstone_api::llm::ApiKey;
use inkstone_api::model::Version;
use inkstone_api::outbox::{DeliveryJob, JobState};
use inkstone_api::store::{Batch, Durability};
use serde_json::{json, Value};

use super::sync::{connected, Client, Connected, Server};

fn error_of(client: &Client, method: &str, params: Value) -> inkstone_api::ApiError {
    client.call(method, params).expect_err("refused")
}

/// Every entry point that takes text refuses a C0 control character other than tab
/// and line breaks, naming the field, and writes nothing: U+0000 used to go into a
/// version and then block the project's sync on PostgreSQL forever.
#[test]
fn text_with_a_control_character_is_refused_wherever_it_enters() {
    let client = Client::new("Alice");
    let project = client.new_project("春", "第一行\n");
    let revision = client.ok("project.get", json!({"projectId": project}))["revision"].clone();
    let cases = [
        ("project.create", json!({"title": "春\u{0}", "source": "x"}), "title"),
        ("project.create", json!({"title": "春", "source": "正文\u{1b}[31m"}), "source"),
        ("project.update", json!({"projectId": project, "baseRevision": revision, "source": "一\u{0}二"}), "source"),
        ("version.create", json!({"projectId": project, "message": "备注\u{7}"}), "message"),
        ("comment.add", json!({"projectId": project, "body": "评论\u{0}"}), "body"),
        ("workspace.update", json!({"displayName": "A\u{0}"}), "displayName"),
        ("sync.resolve", json!({"conflictId": "cnf_x", "choice": "edited", "title": "t", "source": "\u{0}"}), "source"),
    ];
    for (method, params, field) in cases {
        let error = error_of(&client, method, params);
        assert_eq!(format!("{:?}", error.code), "Validation", "{method}: {error:?}");
        assert_eq!(error.details.as_ref().unwrap()["field"], field, "{method}: {error:?}");
        assert_eq!(error.message_id.as_deref(), Some("text.control_character"), "{method}");
        assert_eq!(error.params.as_ref().unwrap().get("field").map(String::as_str), Some(field));
    }
    // Nothing was written.
    assert_eq!(client.ok("project.list", json!({}))["projects"].as_array().unwrap().len(), 1);
    assert_eq!(client.ok("project.get", json!({"projectId": project}))["source"], "第一行\n");
    assert!(client.ok("version.list", json!({"projectId": project}))["versions"].as_array().unwrap().is_empty());
    // Tabs and line breaks (\r\n too) are text.
    client.ok("project.update", json!({"projectId": project, "baseRevision": revision, "source": "一\t二\r\n三\n"}));

    // A Markdown file that holds one is refused as a whole: nothing is imported.
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("a.md"), "# 好\n\n正文\n").unwrap();
    std::fs::write(folder.path().join("b.md"), "# 坏\n\n正\u{0}文\n").unwrap();
    let error = error_of(&client, "import.markdown", json!({"path": folder.path().display().to_string()}));
    assert_eq!(error.message_id.as_deref(), Some("text.control_character"), "{error:?}");
    assert!(error.message.contains("b.md"), "{error:?}");
    assert_eq!(client.ok("project.list", json!({}))["projects"].as_array().unwrap().len(), 1);
}

/// Writes `source` into a stored version as an older build could have saved it.
fn corrupt(client: &Client, project: &str, number: u64, source: &str) {
    let versions: Vec<Version> = inkstone_api::project::versions::list(client.engine.store(), project).unwrap();
    let mut version = versions.into_iter().find(|v| u64::from(v.number) == number).unwrap();
    version.source = source.to_owned();
    let mut batch = Batch::new();
    batch.put(&version).unwrap();
    client.engine.store().apply(batch, Durability::Durable).unwrap();
}

fn job_of(client: &Client, number: u64) -> DeliveryJob {
    client.jobs().into_iter().find(|j| u64::from(j.version_number) == number).unwrap()
}

/// A version saved with U+0000 by an older build never goes out: its job fails at once
/// with `CONTROL_CHARACTER` (no send, no retry), and the project's later versions are
/// not held behind it. A push fixed before this build that carries such a version (the
/// bug: PostgreSQL answered 500 forever and the job held everything back) is refused
/// by the server with that code: the version fails, the others go again alone.
#[test]
fn a_version_that_cannot_travel_fails_alone_and_the_later_ones_go() {
    let Connected { server_dir: _server_dir, server, ws, clients: [alice] } = connected(["Alice"]);
    let project = alice.new_project("春", "一\n");
    alice.save(&project, "一\n二\n");
    corrupt(&alice, &project, 1, "一\u{0}二\n");
    alice.save(&project, "一\n二\n三\n");
    let run = alice.ok("sync.push", json!({}));
    assert_eq!(run["pushed"], 1, "{run}");
    let failed = job_of(&alice, 1);
    assert_eq!((&failed.state, failed.last_error_code.as_deref(), failed.attempts), (&JobState::Failed, Some("CONTROL_CHARACTER"), 0), "failed before any send");
    assert!(failed.last_error.as_deref().unwrap().contains("U+0000"), "{failed:?}");
    assert_eq!(job_of(&alice, 2).state, JobState::Finalized);
    let on_server = server.versions(&ws);
    assert_eq!(on_server.iter().map(|v| v.source.as_str()).collect::<Vec<_>>(), ["一\n二\n三\n"]);
    let status = alice.ok("sync.status", json!({}));
    assert_eq!((status["state"].as_str(), status["failed"].as_u64()), (Some("failed"), Some(1)), "{status}");
    assert!(status.get("heldBy").is_none(), "nothing waits behind it: {status}");
    // A retry checks it again and fails it again, without sending.
    alice.ok("sync.retry", json!({}));
    alice.ok("sync.push", json!({}));
    assert_eq!(job_of(&alice, 1).last_error_code.as_deref(), Some("CONTROL_CHARACTER"));
    assert_eq!(server.versions(&ws).len(), 1);

    // The old bug's shape: three versions fixed as one push (base 0 on a fresh project)
    // before this build, the middle one with U+0000.
    let other = alice.new_project("夏", "a\n");
    alice.ok("sync.pause", json!({}));
    for text in ["a\nb\n", "a\nb\nc\n", "a\nb\nc\nd\n"] {
        alice.save(&other, text);
    }
    corrupt(&alice, &other, 2, "a\u{0}b\nc\n");
    let jobs: Vec<DeliveryJob> = alice.jobs().into_iter().filter(|j| j.project_id == other).collect();
    let mut batch = Batch::new();
    let mut leader = jobs[0].clone();
    leader.base = Some(0);
    leader.batch = vec![jobs[1].id.clone(), jobs[2].id.clone()];
    batch.put(&leader).unwrap();
    for member in &jobs[1..] {
        let mut member = member.clone();
        member.base = Some(0);
        batch.put(&member).unwrap();
    }
    alice.engine.store().apply(batch, Durability::Durable).unwrap();
    alice.ok("sync.resume", json!({}));
    let first = alice.ok("sync.push", json!({}));
    assert_eq!(first["errorCode"], "CONTROL_CHARACTER", "the server refused the old push: {first}");
    let states: Vec<(JobState, Option<String>)> = alice.jobs().into_iter().filter(|j| j.project_id == other).map(|j| (j.state, j.last_error_code)).collect();
    assert_eq!(states[1], (JobState::Failed, Some("CONTROL_CHARACTER".to_owned())));
    assert_eq!((&states[0].0, &states[2].0), (&JobState::Pending, &JobState::Pending), "the clean ones go again: {states:?}");
    alice.ok("sync.push", json!({}));
    let sources: Vec<String> = server.versions(&ws).into_iter().filter(|v| v.project_id == other).map(|v| v.source).collect();
    assert_eq!(sources, ["a\nb\n", "a\nb\nc\nd\n"]);
}

/// A colleague's version arrives with the name the server knows its pusher by, not the
/// name their client claimed (their first-run default, "Inkstone user" in English to a
/// Chinese UI). Connecting sets the person's display name when they give one, and
/// otherwise replaces a name they never chose with their member name.
#[test]
fn the_pusher_is_the_author_and_connecting_settles_the_name() {
    let server_dir = tempfile::tempdir().unwrap();
    let server = Server::start(server_dir.path());
    let (_, tokens) = server.workspace(&["amy", "bo"]);
    let amy = Client::new("Inkstone user");
    let bo = Client::new("Bo");
    // Amy never chose a name: she becomes "amy" on connecting.
    amy.ok("sync.connect", json!({"serverUrl": server.url, "token": tokens[0]}));
    assert_eq!(amy.ok("workspace.get", json!({}))["displayName"], "amy");
    // Bo gives one.
    bo.ok("sync.connect", json!({"serverUrl": server.url, "token": tokens[1], "displayName": "  李波 "}));
    assert_eq!(bo.ok("workspace.get", json!({}))["displayName"], "李波");
    let refused = bo.call("sync.connect", json!({"serverUrl": server.url, "token": tokens[1], "displayName": " "})).unwrap_err();
    assert_eq!(refused.details.as_ref().unwrap()["field"], "displayName");

    let project = amy.new_project("春", "一\n");
    amy.save(&project, "一\n二\n");
    amy.ok("sync.push", json!({}));
    // Whatever a client claims, the pull shows the member who pushed it.
    bo.ok("sync.pull", json!({}));
    let theirs = bo.versions(&project);
    assert_eq!((theirs[0]["author"].as_str(), theirs[0]["origin"]["pushedBy"].as_str()), (Some("amy"), Some("amy")));
    bo.save(&project, "一\n二\n三\n");
    bo.ok("sync.push", json!({}));
    amy.ok("sync.pull", json!({}));
    assert_eq!(amy.versions(&project).iter().map(|v| v["author"].as_str().unwrap().to_owned()).collect::<Vec<_>>(), ["amy", "bo"]);
}

/// A failed pull is a failed run (its error in the result), and the status keeps the
/// failure — in another process too — until a cycle succeeds.
#[test]
fn a_failure_outlives_its_process_until_a_cycle_succeeds() {
    let Connected { server_dir: _server_dir, server, ws: _, clients: [mut alice] } = connected(["Alice"]);
    assert_eq!(alice.ok("sync.pull", json!({})).get("error"), None);
    let addr = server.addr;
    let mut server = server;
    server.stop();
    let run = alice.ok("sync.pull", json!({}));
    assert_eq!((run["errorCode"].as_str(), run["status"]["state"].as_str()), (Some("UNREACHABLE"), Some("offline")), "{run}");
    alice.reopen();
    let status = alice.ok("sync.status", json!({}));
    assert_eq!((status["state"].as_str(), status["offline"].as_bool()), (Some("offline"), Some(true)), "another process sees it: {status}");
    assert!(status["lastError"].as_str().unwrap().contains("could not be reached"), "{status}");
    let server = server.restart();
    assert_eq!(server.addr, addr);
    let run = alice.ok("sync.pull", json!({}));
    assert_eq!((run.get("error"), run["status"]["state"].as_str()), (None, Some("synced")), "{run}");
    alice.reopen();
    let status = alice.ok("sync.status", json!({}));
    assert_eq!((status["state"].as_str(), status.get("lastError")), (Some("synced"), None), "{status}");
}

/// Projects made before connecting are counted as local-only and sent only when the
/// person asks (`uploadExisting`); an autosnapshot stays private either way.
#[test]
fn connecting_can_send_the_projects_made_before() {
    let server_dir = tempfile::tempdir().unwrap();
    let server = Server::start(server_dir.path());
    let (ws, tokens) = server.workspace(&["alice", "bob"]);
    let alice = Client::new("Alice");
    let spring = alice.new_project("春", "一\n");
    alice.save(&spring, "一\n二\n");
    alice.save(&spring, "一\n二\n三\n");
    let summer = alice.new_project("夏", "a\n");
    alice.save(&summer, "a\nb\n");
    alice.new_project("空", "没有版本\n");
    let status = alice.ok("sync.status", json!({}));
    assert_eq!((status["localOnlyProjects"].as_u64(), status["localOnlyVersions"].as_u64()), (Some(2), Some(3)), "{status}");

    // Without asking: nothing made before goes, and the status says so.
    let bob = Client::new("Bob");
    let bobs = bob.new_project("秋", "x\n");
    bob.save(&bobs, "x\ny\n");
    bob.connect(&server.url, &tokens[1]);
    bob.ok("sync.push", json!({}));
    assert!(server.versions(&ws).is_empty());
    let status = bob.ok("sync.status", json!({}));
    assert_eq!((status["state"].as_str(), status["localOnlyVersions"].as_u64()), (Some("synced"), Some(1)), "{status}");

    alice.ok("sync.connect", json!({"serverUrl": server.url, "token": tokens[0], "uploadExisting": true}));
    let run = alice.ok("sync.push", json!({}));
    assert_eq!(run["pushed"], 3, "{run}");
    let on_server: Vec<(String, u32, String)> = server.versions(&ws).into_iter().map(|v| (v.project_id, v.number, v.source)).collect();
    assert_eq!(on_server, [(spring.clone(), 1, "一\n二\n".to_owned()), (spring.clone(), 2, "一\n二\n三\n".to_owned()), (summer.clone(), 1, "a\nb\n".to_owned())]);
    let status = alice.ok("sync.status", json!({}));
    assert_eq!((status["localOnlyProjects"].as_u64(), status["localOnlyVersions"].as_u64(), status["state"].as_str()), (Some(0), Some(0), Some("synced")));
    bob.ok("sync.pull", json!({}));
    assert_eq!(bob.versions(&spring).len(), 2);
}

/// A keychain that is not there, as on Linux without a desktop session.
#[derive(Debug, Default)]
struct NoKeychain;

impl SecretStore for NoKeychain {
    fn set(&self, _: &str, _: &ApiKey) -> Result<(), KeychainError> {
        Err(KeychainError::Unavailable { backend: "Secret Service".into(), detail: "no D-Bus session".into() })
    }
    fn get(&self, _: &str) -> Result<Option<ApiKey>, KeychainError> {
        Err(KeychainError::Unavailable { backend: "Secret Service".into(), detail: "no D-Bus session".into() })
    }
    fn delete(&self, _: &str) -> Result<(), KeychainError> {
        Err(KeychainError::Unavailable { backend: "Secret Service".into(), detail: "no D-Bus session".into() })
    }
    fn backend(&self) -> &str {
        "Secret Service"
    }
}

/// Without a keychain, connecting is refused with hints that name the workspace
/// token's variable (not the model key's) and the kernel keyring; with
/// `INKSTONE_WORKSPACE_TOKEN` the process connects, syncs and disconnects, and the token
/// is stored nowhere.
#[test]
fn a_workspace_token_from_the_environment_needs_no_keychain() {
    let server_dir = tempfile::tempdir().unwrap();
    let server = Server::start(server_dir.path());
    let (ws, tokens) = server.workspace(&["alice"]);
    let plain = Client::with("Alice", |config| config.secrets = Arc::new(NoKeychain));
    let refused = plain.call("sync.connect", json!({"serverUrl": server.url, "token": tokens[0]})).unwrap_err();
    assert_eq!(format!("{:?}", refused.code), "KeychainUnavailable");
    let hints: Vec<&str> = refused.hints.iter().map(|h| h.id.as_str()).collect();
    assert!(hints.contains(&"use_env_token") && hints.contains(&"use_kernel_keyring") && !hints.contains(&"use_env_key"), "{hints:?}");
    assert!(refused.hints.iter().any(|h| h.message.contains("INKSTONE_WORKSPACE_TOKEN")));
    assert!(refused.hints.iter().any(|h| h.message.contains("INKSTONE_KEYCHAIN=keyutils")));
    assert_eq!(plain.ok("sync.status", json!({}))["connected"], false, "nothing changed");
    let missing = plain.call("sync.connect", json!({"serverUrl": server.url})).unwrap_err();
    assert_eq!(missing.details.as_ref().unwrap()["field"], "token");

    let token = tokens[0].clone();
    let env = Client::with("Alice", move |config| {
        config.secrets = Arc::new(NoKeychain);
        config.env_workspace_token = Some(ApiKey::new(&token));
    });
    let status = env.ok("sync.connect", json!({"serverUrl": server.url}));
    assert_eq!(status["state"], "synced", "{status}");
    let project = env.new_project("春", "一\n");
    env.save(&project, "一\n二\n");
    assert_eq!(env.ok("sync.push", json!({}))["pushed"], 1);
    assert_eq!(server.versions(&ws).len(), 1);
    let found: Vec<String> =
        inkstone_test_support::read_tree(env.dir.path()).into_iter().filter(|(_, b)| b.windows(tokens[0].len()).any(|w| w == tokens[0].as_bytes())).map(|(p, _)| p).collect();
    assert!(found.is_empty(), "the token is in {found:?}");
    env.ok("sync.disconnect", json!({}));
}
