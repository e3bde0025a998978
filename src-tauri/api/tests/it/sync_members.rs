//! Members and leaving: owners list, invite and revoke members; disconnecting keeps
//! unsynced versions; a refused token fails jobs until a retry or a reconnect; a
//! connect names what answered and why it failed.

use std::io::{Read, Write};

use inkstone_api::llm::keychain::SecretStore;
use inkstone_api::outbox::JobState;
use inkstone_server::proto::Role;
use inkstone_server::storage::Storage;
use serde_json::{json, Value};

use super::sync::*;

// ---------------------------------------------------------------------------------
// Members and leaving.

fn hint_ids(error: &inkstone_api::ApiError) -> Vec<&str> {
    error.hints.iter().map(|h| h.id.as_str()).collect()
}

#[test]
fn owners_list_invite_and_revoke_members_and_others_are_refused() {
    use inkstone_api::ErrorCode;
    let server_dir = tempfile::tempdir().unwrap();
    let server = Server::start(server_dir.path());
    let (ws, owner) = server.storage.create_workspace("团队", "Olga").unwrap();
    let editor = server.storage.invite(&ws, "eddie", Role::Editor).unwrap();
    let olga = Client::new("Olga");

    let not_connected = olga.call("sync.members", json!({})).unwrap_err();
    assert_eq!((not_connected.code, hint_ids(&not_connected)), (ErrorCode::Conflict, vec!["connect"]));

    olga.connect(&server.url, &owner.token);
    let listed = olga.ok("sync.members", json!({}));
    assert_eq!((listed["canManage"].as_bool(), listed["role"].as_str(), listed["workspaceName"].as_str()), (Some(true), Some("owner"), Some("团队")));
    let members = listed["members"].as_array().unwrap();
    assert_eq!(members.len(), 2);
    let me = members.iter().find(|m| m["me"] == true).unwrap();
    assert_eq!((me["name"].as_str(), me["role"].as_str(), me["tokenId"].as_str()), (Some("Olga"), Some("owner"), Some(owner.token_id.as_str())));
    assert_eq!(me["tokenFingerprint"].as_str().unwrap(), format!("…{}", &owner.token[owner.token.len() - 4..]));
    let eddie_entry = members.iter().find(|m| m["name"] == "eddie").unwrap();
    assert_eq!((eddie_entry["tokenId"].as_str(), eddie_entry["role"].as_str(), eddie_entry["revoked"].as_bool()), (Some(editor.token_id.as_str()), Some("editor"), Some(false)));
    assert!(eddie_entry["joinedAt"].as_str().is_some_and(|t| t.starts_with("20")), "{eddie_entry}");
    assert!(eddie_entry.get("tokenFingerprint").is_none(), "only the person's own token has a fingerprint");

    // An invite returns the token once; it works, and it is nowhere in the data dir.
    let invited = olga.ok("sync.invite", json!({"name": "维拉", "role": "viewer"}));
    let token = invited["token"].as_str().unwrap().to_owned();
    assert!(token.starts_with("isk_") && token.len() == 68, "{token}");
    assert_eq!((invited["member"]["name"].as_str(), invited["member"]["role"].as_str()), (Some("维拉"), Some("viewer")));
    let vera_token_id = invited["member"]["tokenId"].as_str().unwrap().to_owned();
    let vera = Client::new("Vera");
    assert_eq!(vera.connect(&server.url, &token)["role"], "viewer");
    assert_eq!(olga.ok("sync.members", json!({}))["members"].as_array().unwrap().len(), 3);
    for (path, bytes) in inkstone_test_support::read_tree(olga.dir.path()) {
        assert!(!bytes.windows(token.len() - 4).any(|w| w == &token.as_bytes()[4..]), "the invite token is in {path}");
    }

    // An editor sees the members but may not invite or revoke: nothing changes.
    let eddie = Client::new("Eddie");
    eddie.connect(&server.url, &editor.token);
    let seen = eddie.ok("sync.members", json!({}));
    assert_eq!((seen["canManage"].as_bool(), seen["members"].as_array().unwrap().len()), (Some(false), 3));
    let forbidden = eddie.call("sync.invite", json!({"name": "mallory", "role": "owner"})).unwrap_err();
    assert_eq!((forbidden.code, hint_ids(&forbidden)), (ErrorCode::PermissionDenied, vec!["owner_only"]));
    assert_eq!(forbidden.details.as_ref().unwrap()["reason"], "forbidden");
    assert!(forbidden.message.contains("owner"), "{}", forbidden.message);
    let forbidden = eddie.call("sync.revokeMember", json!({"tokenId": vera_token_id})).unwrap_err();
    assert_eq!((forbidden.code, hint_ids(&forbidden)), (ErrorCode::PermissionDenied, vec!["owner_only"]));
    assert_eq!(server.storage.members(&ws).unwrap().len(), 3);
    assert!(server.storage.authenticate(&token).unwrap().is_some(), "the viewer's token still works");

    // Bad input is refused before anything is sent.
    for (params, code) in [
        (json!({"name": "  ", "role": "editor"}), ErrorCode::Validation),
        (json!({"name": "x", "role": "boss"}), ErrorCode::Validation),
        (json!({"name": "x"}), ErrorCode::Validation),
    ] {
        assert_eq!(olga.call("sync.invite", params.clone()).unwrap_err().code, code, "{params}");
    }
    assert_eq!(olga.call("sync.revokeMember", json!({"tokenId": "tok_nope"})).unwrap_err().code, ErrorCode::NotFound);
    assert_eq!(olga.call("sync.revokeMember", json!({"tokenId": "../x"})).unwrap_err().code, ErrorCode::Validation);
    let own = olga.call("sync.revokeMember", json!({"tokenId": owner.token_id})).unwrap_err();
    assert_eq!((own.code, hint_ids(&own)), (ErrorCode::Validation, vec!["disconnect"]));
    assert_eq!(server.storage.members(&ws).unwrap().len(), 3);
    assert!(server.storage.members(&ws).unwrap().iter().all(|m| m.tokens.iter().all(|t| !t.revoked)));

    // The owner revokes the viewer: the list says so and the token stops working.
    let after = olga.ok("sync.revokeMember", json!({"tokenId": vera_token_id}));
    let vera_entry = after["members"].as_array().unwrap().iter().find(|m| m["name"] == "维拉").unwrap().clone();
    assert_eq!(vera_entry["revoked"], true);
    assert!(server.storage.authenticate(&token).unwrap().is_none());
    let locked_out = vera.call("sync.members", json!({})).unwrap_err();
    assert_eq!((locked_out.code, hint_ids(&locked_out)), (ErrorCode::PermissionDenied, vec!["reconnect"]));
    // Her push is refused for the revoked token, and the status names it by code.
    let project = vera.new_project("只读", "一\n");
    vera.save(&project, "一\n二\n");
    let run = vera.ok("sync.push", json!({}));
    assert_eq!((run["status"]["lastErrorCode"].as_str(), run["status"]["state"].as_str()), (Some("UNAUTHORIZED"), Some("failed")), "{}", run["status"]);
}

#[test]
fn disconnect_removes_the_token_keeps_unsynced_versions_paused_and_loses_nothing() {
    use inkstone_api::ErrorCode;
    let server_dir = tempfile::tempdir().unwrap();
    let server = Server::start(server_dir.path());
    let (ws, tokens) = server.workspace(&["alice"]);
    let alice = Client::new("Alice");
    let refused = alice.call("sync.disconnect", json!({})).unwrap_err();
    assert_eq!((refused.code, hint_ids(&refused)), (ErrorCode::Conflict, vec!["connect"]));

    alice.connect(&server.url, &tokens[0]);
    let project = alice.new_project("离开", "一\n");
    alice.ok("version.create", json!({"projectId": project}));
    assert_eq!(alice.ok("sync.push", json!({}))["pushed"], 1);
    alice.save(&project, "一\n二\n");
    alice.save(&project, "一\n二\n三\n");
    let workspace_id = alice.ok("workspace.get", json!({}))["id"].as_str().unwrap().to_owned();
    let account = format!("sync:{workspace_id}");
    assert!(alice.keychain.get(&account).unwrap().is_some());

    let done = alice.ok("sync.disconnect", json!({}));
    assert_eq!((done["keptJobs"].as_u64(), done["workspaceName"].as_str()), (Some(2), Some("团队")));
    assert_eq!((done["status"]["state"].as_str(), done["status"]["connected"].as_bool()), (Some("notConnected"), Some(false)));
    assert!(alice.keychain.get(&account).unwrap().is_none(), "the token left the keychain");
    // Nothing local is lost; the jobs are kept, not sent, and no new ones are made.
    assert_eq!(alice.versions(&project).len(), 3);
    assert_eq!(alice.ok("project.get", json!({"projectId": project}))["source"], "一\n二\n三\n");
    let kept: Vec<JobState> = alice.jobs().into_iter().map(|j| j.state).collect();
    assert_eq!(kept, [JobState::Finalized, JobState::Pending, JobState::Pending]);
    alice.save(&project, "一\n二\n三\n四\n");
    assert_eq!(alice.jobs().len(), 3, "a version made while disconnected has no delivery job");
    assert_eq!(alice.call("sync.push", json!({})).unwrap_err().code, ErrorCode::Conflict);
    assert_eq!(alice.call("sync.disconnect", json!({})).unwrap_err().code, ErrorCode::Conflict, "disconnecting twice");
    assert_eq!(server.versions(&ws).len(), 1);

    // Another workspace's token may not take the versions owed to the first.
    let (_other, other_tokens) = server.workspace(&["alice2"]);
    let wrong = alice.call("sync.connect", json!({"serverUrl": server.url, "token": other_tokens[0]})).unwrap_err();
    assert_eq!(wrong.code, ErrorCode::Conflict);
    assert!(hint_ids(&wrong).contains(&"reconnect_previous"));
    assert_eq!(alice.ok("sync.status", json!({}))["connected"], false);
    assert!(alice.keychain.get(&account).unwrap().is_none());

    // The same workspace again: paused until resumed, then the kept jobs go, once.
    let back = alice.connect(&server.url, &tokens[0]);
    assert_eq!((back["state"].as_str(), back["pending"].as_u64()), (Some("paused"), Some(2)));
    alice.ok("sync.resume", json!({}));
    assert_eq!(alice.ok("sync.push", json!({}))["pushed"], 2);
    assert_eq!(server.versions(&ws).iter().map(|v| v.number).collect::<Vec<_>>(), [1, 2, 3]);
    assert_eq!(alice.ok("sync.pull", json!({}))["pulled"], 0, "the cursor continued where it stopped");
}

// ---------------------------------------------------------------------------------
// Failed jobs: their reason stays, and a retry or a reconnect sends them.

fn job_view<'a>(status: &'a Value, job_id: &str) -> &'a Value {
    status["jobs"].as_array().unwrap().iter().find(|j| j["id"] == job_id).unwrap_or_else(|| panic!("job {job_id} is not in {status}"))
}

/// The audit's case: an owner revokes Boris, his next version fails (401) and the one
/// after it waits behind it; the status keeps saying why and offers a retry; after a
/// disconnect the count covers both; reconnecting with a new token sends them, once.
#[test]
fn a_refused_token_fails_jobs_with_their_reason_until_a_retry_or_a_reconnect_sends_them() {
    use inkstone_api::ErrorCode;
    let server_dir = tempfile::tempdir().unwrap();
    let server = Server::start(server_dir.path());
    let (ws, _owner) = server.storage.create_workspace("团队", "Olga").unwrap();
    let first = server.storage.invite(&ws, "boris", Role::Editor).unwrap();
    let boris = Client::new("Boris");
    assert_eq!(boris.call("sync.retry", json!({})).unwrap_err().message_id.as_deref(), Some("sync.not_connected"));
    boris.connect(&server.url, &first.token);
    let project = boris.new_project("稿", "一\n");
    boris.ok("version.create", json!({"projectId": project}));
    assert_eq!(boris.ok("sync.push", json!({}))["pushed"], 1);

    server.storage.revoke(&ws, &first.token_id).unwrap();
    boris.save(&project, "一\n二\n");
    let run = boris.ok("sync.push", json!({}));
    assert_eq!((run["status"]["state"].as_str(), run["status"]["failed"].as_u64()), (Some("failed"), Some(1)), "{}", run["status"]);
    let failed = boris.jobs()[1].clone();
    assert_eq!((&failed.state, failed.last_error_code.as_deref(), failed.base), (&JobState::Failed, Some("UNAUTHORIZED"), Some(1)));
    boris.save(&project, "一\n二\n三\n");
    let later = boris.jobs()[2].clone();

    // A push that sends nothing (the project waits behind its failed job) still says
    // why: the failed job's reason and code, and which job the later one waits behind.
    let status = boris.ok("sync.push", json!({}))["status"].clone();
    assert_eq!((status["state"].as_str(), status["failed"].as_u64(), status["pending"].as_u64()), (Some("failed"), Some(1), Some(1)));
    assert_eq!(status["lastErrorCode"], "UNAUTHORIZED", "{status}");
    assert!(status["lastError"].as_str().unwrap().starts_with("401 UNAUTHORIZED"), "{status}");
    assert_eq!(job_view(&status, &failed.id)["lastErrorCode"], "UNAUTHORIZED");
    assert_eq!(status["heldBy"], json!({later.id.as_str(): failed.id.as_str()}));

    // Bad retries change nothing.
    let jobs_before = boris.jobs();
    let not_failed = boris.call("sync.retry", json!({"jobId": later.id})).unwrap_err();
    assert_eq!((not_failed.code, not_failed.message_id.as_deref()), (ErrorCode::Conflict, Some("sync.not_failed")));
    assert_eq!(boris.call("sync.retry", json!({"jobId": "job_nope"})).unwrap_err().code, ErrorCode::NotFound);
    assert_eq!(boris.call("sync.retry", json!({"jobId": 3})).unwrap_err().code, ErrorCode::Validation);
    assert_eq!(boris.call("sync.retry", json!({"jobId": ""})).unwrap_err().code, ErrorCode::Validation);
    assert_eq!(boris.call("sync.retry", json!({"job": failed.id})).unwrap_err().code, ErrorCode::Validation);
    assert_eq!(boris.jobs(), jobs_before);

    // A retry sends the same push again (same base, same key); the token is still
    // refused, so it fails again, with its reason.
    let retried = boris.ok("sync.retry", json!({"jobId": failed.id}));
    assert_eq!((retried["state"].as_str(), retried["failed"].as_u64(), retried["pending"].as_u64()), (Some("pending"), Some(0), Some(2)), "{retried}");
    assert!(retried.get("heldBy").is_none(), "{retried}");
    let requeued = boris.jobs()[1].clone();
    assert_eq!((&requeued.state, requeued.base, requeued.attempts, &requeued.dedupe_key), (&JobState::Pending, Some(1), 0, &failed.dedupe_key));
    assert_eq!(boris.ok("sync.push", json!({}))["status"]["lastErrorCode"], "UNAUTHORIZED");
    assert_eq!(boris.jobs()[1].state, JobState::Failed);
    assert_eq!(server.versions(&ws).len(), 1);

    // Disconnecting counts every version still owed: the failed one and the waiting one.
    let done = boris.ok("sync.disconnect", json!({}));
    assert_eq!(done["keptJobs"], 2, "{done}");

    // The owner invites Boris again; connecting with the new token sends both, once.
    let second = server.storage.invite(&ws, "boris", Role::Editor).unwrap();
    let back = boris.connect(&server.url, &second.token);
    assert_eq!((back["state"].as_str(), back["failed"].as_u64(), back["pending"].as_u64()), (Some("paused"), Some(0), Some(2)), "{back}");
    assert!(back.get("lastError").is_none() && back.get("lastErrorCode").is_none(), "{back}");
    boris.ok("sync.resume", json!({}));
    let run = boris.ok("sync.push", json!({}));
    assert_eq!((run["pushed"].as_u64(), run["status"]["state"].as_str()), (Some(2), Some("synced")), "{run}");
    assert_eq!(server.versions(&ws).iter().map(|v| v.source.as_str()).collect::<Vec<_>>(), ["一\n", "一\n二\n", "一\n二\n三\n"]);

    // Revoked again while connected: a plain reconnect (no disconnect) requeues too.
    server.storage.revoke(&ws, &second.token_id).unwrap();
    boris.save(&project, "一\n二\n三\n四\n");
    assert_eq!(boris.ok("sync.push", json!({}))["status"]["failed"], 1);
    let third = server.storage.invite(&ws, "boris", Role::Editor).unwrap();
    assert_eq!(boris.connect(&server.url, &third.token)["pending"], 1);
    assert_eq!(boris.ok("sync.push", json!({}))["pushed"], 1);
    check_history("retried after a refused token", &server.versions(&ws), &[&boris]);
}

/// A loopback HTTP server that answers every request with `status_line`, `content_type`
/// and `body`, for `n` connections.
fn answering(n: usize, status_line: &'static str, content_type: &'static str, body: &'static str) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().take(n) {
            let Ok(mut stream) = stream else { continue };
            let mut buf = [0u8; 8192];
            let _ = stream.read(&mut buf);
            let answer = format!("HTTP/1.1 {status_line}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len());
            let _ = stream.write_all(answer.as_bytes());
        }
    });
    url
}

/// Each way a connect can fail has its own code and wording; the parser's or the
/// server's words are in the details, never the headline; nothing is stored.
#[test]
fn a_connect_names_what_answered_and_why_it_failed() {
    use inkstone_api::ErrorCode;
    let server_dir = tempfile::tempdir().unwrap();
    let server = Server::start(server_dir.path());
    let (_ws, tokens) = server.workspace(&["alice"]);
    let alice = Client::new("Alice");
    let connect = |url: &str, token: &str| alice.call("sync.connect", json!({"serverUrl": url, "token": token})).unwrap_err();

    // Another web server: 200 with a page.
    let page = connect(&answering(1, "200 OK", "text/html", "<!doctype html><title>NAS</title>"), &tokens[0]);
    assert_eq!((page.code, page.message_id.as_deref(), hint_ids(&page)), (ErrorCode::Validation, Some("sync.not_a_server"), vec!["check_server_url"]));
    assert_eq!(page.message, "The address answers, but not as an Inkstone workspace server.");
    let details = page.details.clone().unwrap();
    assert_eq!((details["field"].as_str(), details["status"].as_u64(), details["code"].as_str()), (Some("serverUrl"), Some(200), Some("HTTP")));
    assert!(details["reason"].as_str().unwrap().contains("expected value"), "the parser's words are kept in the details: {details}");
    // Another JSON service (or another version): the same, and it may be the versions.
    let json_service = connect(&answering(1, "200 OK", "application/json", r#"{"status":"ok"}"#), &tokens[0]);
    assert_eq!((json_service.message_id.as_deref(), hint_ids(&json_service)), (Some("sync.not_a_server"), vec!["check_server_url", "match_versions"]));
    assert_eq!(json_service.details.unwrap()["code"], "BAD_ANSWER");
    // A page that is not found there: the wrong port or path.
    let missing = connect(&answering(1, "404 Not Found", "text/html", "<h1>404</h1>"), &tokens[0]);
    assert_eq!((missing.code, missing.message_id.as_deref()), (ErrorCode::Validation, Some("sync.not_a_server")));
    // A proxy's error page in front of a server that is down: try again later.
    let down = connect(&answering(1, "502 Bad Gateway", "text/html", "<h1>502</h1>"), &tokens[0]);
    assert_eq!((down.code, down.message_id.as_deref(), hint_ids(&down)), (ErrorCode::Offline, Some("sync.server_unavailable"), vec!["server_retry_later"]));
    // The workspace server refusing the token: the server refused, not Inkstone.
    let wrong = connect(&server.url, "isk_wrong");
    assert_eq!((wrong.code, wrong.message_id.as_deref(), hint_ids(&wrong)), (ErrorCode::PermissionDenied, Some("sync.token_refused"), vec!["new_invite"]));
    assert_eq!(wrong.details.as_ref().unwrap()["code"], "UNAUTHORIZED");
    for error in [&page, &wrong] {
        assert!(!format!("{error:?}").contains(&tokens[0][4..]), "the token is in no error");
    }
    // Nothing was stored.
    let status = alice.ok("sync.status", json!({}));
    assert_eq!(status["state"], "notConnected");
    assert!(alice.keychain.get(&format!("sync:{}", alice.ok("workspace.get", json!({}))["id"].as_str().unwrap())).unwrap().is_none());
}
