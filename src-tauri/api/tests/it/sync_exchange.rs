//! Sync's exchange: a version reaches the server exactly once and colleagues pull it
//! with its author; offline jobs wait; a stale push becomes a conflict whose resolution
//! is pushed on the new base; older servers; merges; pulled heads never overwrite an
//! edited working copy; the change marker.

use std::time::{Duration, Instant};

use inkstone_api::outbox::JobState;
use serde_json::{json, Value};

use super::sync::*;

#[test]
fn a_version_reaches_the_server_exactly_once_and_colleagues_pull_it_with_its_author() {
    let server_dir = tempfile::tempdir().unwrap();
    let server = Server::start(server_dir.path());
    let (ws, tokens) = server.workspace(&["alice", "bob"]);
    let alice = Client::new("Alice");
    let bob = Client::new("Bob");
    let status = alice.connect(&server.url, &tokens[0]);
    assert_eq!((status["state"].as_str(), status["memberName"].as_str(), status["role"].as_str()), (Some("synced"), Some("alice"), Some("editor")));
    assert_eq!(status["tokenFingerprint"].as_str().unwrap(), format!("…{}", &tokens[0][tokens[0].len() - 4..]));

    let project = alice.new_project("春", "第一行\n第二行\n");
    alice.save(&project, "第一行\n第二行\n第三行\n");
    assert_eq!(alice.ok("sync.status", json!({}))["state"], "pending");
    let run = alice.ok("sync.push", json!({}));
    assert_eq!((run["pushed"].as_u64(), run["status"]["state"].as_str()), (Some(1), Some("synced")));
    // Pushing again sends nothing; the server holds the version once.
    assert_eq!(alice.ok("sync.push", json!({}))["pushed"], 0);
    let on_server = server.versions(&ws);
    assert_eq!(on_server.len(), 1);
    assert_eq!(
        (on_server[0].number, on_server[0].author.as_str(), on_server[0].pushed_by.as_str()),
        (1, "alice", "alice"),
        "the author is the member who pushed, not the name the client claims"
    );
    let job = &alice.jobs()[0];
    assert_eq!((&job.state, job.server_number, job.base), (&JobState::Finalized, Some(1), Some(0)));

    bob.connect(&server.url, &tokens[1]);
    let pulled = bob.ok("sync.pull", json!({}));
    assert_eq!(pulled["pulled"], 1);
    let theirs = bob.versions(&project);
    assert_eq!(theirs.len(), 1);
    assert_eq!((theirs[0]["author"].as_str(), theirs[0]["origin"]["type"].as_str(), theirs[0]["origin"]["pushedBy"].as_str()), (Some("alice"), Some("pulled"), Some("alice")));
    assert_eq!(theirs[0]["source"], "第一行\n第二行\n第三行\n");
    let working = bob.ok("project.get", json!({"projectId": project}));
    assert_eq!((working["source"].as_str(), working["title"].as_str()), (Some("第一行\n第二行\n第三行\n"), Some("春")));
    // A pulled version is never delivered back.
    assert!(bob.jobs().is_empty());
    assert_eq!(bob.ok("sync.pull", json!({}))["pulled"], 0, "the cursor moved on");

    // Bob's own version goes on top, and Alice's pull follows her clean working copy.
    bob.save(&project, "第一行\n第二行\n第三行\n第四行\n");
    assert_eq!(bob.ok("sync.push", json!({}))["pushed"], 1);
    assert_eq!(alice.ok("sync.pull", json!({}))["pulled"], 1);
    let mine = alice.versions(&project);
    assert_eq!(mine.iter().map(|v| v["author"].as_str().unwrap()).collect::<Vec<_>>(), ["Alice", "bob"]);
    assert_eq!(alice.ok("project.get", json!({"projectId": project}))["source"], "第一行\n第二行\n第三行\n第四行\n");
    assert_eq!(server.versions(&ws).iter().map(|v| v.number).collect::<Vec<_>>(), [1, 2]);
}

#[test]
fn offline_jobs_wait_and_go_when_the_server_is_back() {
    let Connected { server_dir: _server_dir, mut server, ws, clients: [alice] } = connected(["Alice"]);
    let project = alice.new_project("离线", "一\n");
    server.stop();
    alice.save(&project, "一\n二\n");
    let run = alice.ok("sync.push", json!({}));
    assert_eq!((run["pushed"].as_u64(), run["status"]["state"].as_str(), run["status"]["pending"].as_u64()), (Some(0), Some("offline"), Some(1)));
    // The UI words the failure from its code.
    assert_eq!(run["status"]["lastErrorCode"], "UNREACHABLE");
    let job = &alice.jobs()[0];
    assert!(matches!(job.state, JobState::RetryWait { .. }), "{:?}", job.state);
    assert!(job.last_error.as_deref().unwrap().contains("could not be reached"));
    alice.save(&project, "一\n二\n三\n");
    alice.ok("sync.push", json!({}));
    let server = server.restart();
    let run = alice.ok("sync.push", json!({}));
    assert_eq!((run["pushed"].as_u64(), run["status"]["state"].as_str()), (Some(2), Some("synced")));
    assert!(run["status"].get("lastErrorCode").is_none() && run["status"].get("lastError").is_none(), "{}", run["status"]);
    let on_server = server.versions(&ws);
    assert_eq!(on_server.iter().map(|v| (v.number, v.source.as_str())).collect::<Vec<_>>(), [(1, "一\n二\n"), (2, "一\n二\n三\n")]);
}

/// Alice and Bob edit the same project; Bob's push on a stale base is a conflict
/// with both sides and the base; the clean merge resolves it as a new version.
#[test]
fn a_stale_push_becomes_a_conflict_and_its_resolution_is_pushed_on_the_new_base() {
    let Connected { server_dir: _server_dir, server, ws, clients: [alice, bob] } = connected(["Alice", "Bob"]);
    let base = "甲\n乙\n丙\n丁\n戊\n己\n";
    let project = alice.new_project("合", base);
    alice.ok("version.create", json!({"projectId": project}));
    alice.ok("sync.push", json!({}));
    bob.ok("sync.pull", json!({}));

    alice.save(&project, "甲改\n乙\n丙\n丁\n戊\n己\n");
    bob.save(&project, "甲\n乙\n丙\n丁\n戊\n己改\n");
    assert_eq!(alice.ok("sync.push", json!({}))["pushed"], 1);
    let run = bob.ok("sync.push", json!({}));
    assert_eq!((run["pushed"].as_u64(), run["newConflicts"].as_u64(), run["status"]["state"].as_str()), (Some(0), Some(1), Some("conflict")));
    // Nothing was overwritten: the server kept Alice's head, Bob keeps his version and
    // working copy, and Alice's version is in Bob's history with her name.
    assert_eq!(server.versions(&ws).len(), 2);
    assert_eq!(bob.ok("project.get", json!({"projectId": project}))["source"], "甲\n乙\n丙\n丁\n戊\n己改\n");
    let history = bob.versions(&project);
    assert_eq!(
        history.iter().map(|v| (v["author"].as_str().unwrap(), v["source"].as_str().unwrap())).collect::<Vec<_>>(),
        [("alice", base), ("Bob", "甲\n乙\n丙\n丁\n戊\n己改\n"), ("alice", "甲改\n乙\n丙\n丁\n戊\n己\n")]
    );
    let conflicts = bob.ok("sync.conflicts", json!({}))["conflicts"].as_array().unwrap().clone();
    assert_eq!(conflicts.len(), 1);
    let conflict = &conflicts[0];
    assert_eq!((conflict["kind"].as_str(), conflict["base"]["source"].as_str()), (Some("push"), Some(base)));
    assert_eq!((conflict["mine"]["source"].as_str(), conflict["theirs"]["source"].as_str()), (Some("甲\n乙\n丙\n丁\n戊\n己改\n"), Some("甲改\n乙\n丙\n丁\n戊\n己\n")));
    assert_eq!(conflict["merged"]["source"], "甲改\n乙\n丙\n丁\n戊\n己改\n");
    assert!(matches!(bob.jobs()[0].state, JobState::Conflict { server_head: 2 }));

    let resolved = bob.ok("sync.resolve", json!({"conflictId": conflict["id"], "choice": "merged"}));
    assert_eq!((resolved["version"]["number"].as_u64(), resolved["version"]["origin"]["type"].as_str()), (Some(4), Some("syncResolution")));
    assert!(resolved.get("autosnapshot").is_none(), "the working copy was Bob's side: nothing unsaved to keep");
    assert!(matches!(bob.jobs()[0].state, JobState::Superseded { by_version: 4 }));
    assert_eq!(bob.ok("sync.push", json!({}))["pushed"], 1);
    let on_server = server.versions(&ws);
    assert_eq!(on_server.iter().map(|v| (v.number, v.author.as_str())).collect::<Vec<_>>(), [(1, "alice"), (2, "alice"), (3, "bob")]);
    assert_eq!(on_server[2].source, "甲改\n乙\n丙\n丁\n戊\n己改\n");
    assert_eq!(bob.ok("sync.status", json!({}))["state"], "synced");
    // Resolving twice is refused.
    let again = bob.call("sync.resolve", json!({"conflictId": conflict["id"], "choice": "mine"})).unwrap_err();
    assert_eq!(again.code, inkstone_api::ErrorCode::Conflict);
    alice.ok("sync.pull", json!({}));
    assert_eq!(alice.ok("project.get", json!({"projectId": project}))["source"], "甲改\n乙\n丙\n丁\n戊\n己改\n");
    // The resolution reaches Alice labelled as one: the server kept how Bob's client
    // made each version (the kind only: no conflict id, nothing of Bob's setup).
    assert_eq!(server.versions(&ws).iter().map(|v| v.origin.as_deref()).collect::<Vec<_>>(), [Some("manual"), Some("manual"), Some("syncResolution")]);
    let head = alice.versions(&project).last().unwrap().clone();
    assert_eq!(head["origin"], json!({"type": "pulled", "serverNumber": 3, "pushedBy": "bob", "remoteOrigin": "syncResolution"}));
    assert_eq!(bob.versions(&project)[0]["origin"], json!({"type": "pulled", "serverNumber": 1, "pushedBy": "alice", "remoteOrigin": "manual"}));
}

/// Against a server from before version origins (it refuses fields it does not know),
/// pushes carry none and every version still goes; once the server is upgraded and
/// says so, the next pull lets pushes carry them.
#[test]
fn an_older_server_gets_no_origin_and_an_upgraded_one_gets_them_after_a_pull() {
    let server_dir = tempfile::tempdir().unwrap();
    let server = Server::start_old(server_dir.path());
    let (ws, tokens) = server.workspace(&["alice", "bob"]);
    let alice = Client::new("Alice");
    let bob = Client::new("Bob");
    alice.connect(&server.url, &tokens[0]);
    bob.connect(&server.url, &tokens[1]);
    let project = alice.new_project("旧", "一\n二\n三\n四\n");
    alice.ok("version.create", json!({"projectId": project}));
    assert_eq!(alice.ok("sync.push", json!({}))["pushed"], 1);
    bob.ok("sync.pull", json!({}));
    alice.save(&project, "一（甲）\n二\n三\n四\n");
    alice.ok("sync.push", json!({}));
    bob.save(&project, "一\n二\n三\n四（乙）\n");
    assert_eq!(bob.ok("sync.push", json!({}))["newConflicts"], 1);
    let conflict = bob.ok("sync.conflicts", json!({}))["conflicts"][0]["id"].clone();
    bob.ok("sync.resolve", json!({"conflictId": conflict, "choice": "merged"}));
    let run = bob.ok("sync.push", json!({}));
    assert_eq!((run["pushed"].as_u64(), run["status"]["failed"].as_u64()), (Some(1), Some(0)), "{run}");
    assert!(server.versions(&ws).iter().all(|v| v.origin.is_none()));
    alice.ok("sync.pull", json!({}));
    let head = alice.versions(&project).last().unwrap().clone();
    assert_eq!(head["origin"], json!({"type": "pulled", "serverNumber": 3, "pushedBy": "bob"}));

    // The server is upgraded on the same data: a pull hears it keeps origins.
    let (dir, addr) = (server_dir.path().to_owned(), server.addr);
    drop(server);
    let server = {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match std::panic::catch_unwind(|| Server::start_at(&dir, addr)) {
                Ok(server) => break server,
                Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(50)),
                Err(e) => std::panic::resume_unwind(e),
            }
        }
    };
    bob.ok("sync.pull", json!({}));
    bob.save(&project, "一（甲）\n二\n三\n四（乙）\n五\n");
    assert_eq!(bob.ok("sync.push", json!({}))["pushed"], 1);
    assert_eq!(server.versions(&ws).last().unwrap().origin.as_deref(), Some("manual"));
    alice.ok("sync.pull", json!({}));
    assert_eq!(alice.versions(&project).last().unwrap()["origin"]["remoteOrigin"], "manual");
    check_history("an older server, then upgraded", &server.versions(&ws), &[&alice, &bob]);
}

#[test]
fn overlapping_edits_need_the_merge_view_and_an_edited_resolution() {
    let Connected { server_dir: _server_dir, server, ws, clients: [alice, bob] } = connected(["Alice", "Bob"]);
    let project = alice.new_project("叠", "一\n二\n三\n");
    alice.ok("version.create", json!({"projectId": project}));
    alice.ok("sync.push", json!({}));
    bob.ok("sync.pull", json!({}));
    alice.save(&project, "一\n二A\n三\n");
    bob.save(&project, "一\n二B\n三\n");
    alice.ok("sync.push", json!({}));
    bob.ok("sync.push", json!({}));
    let conflict = bob.ok("sync.conflicts", json!({"projectId": project}))["conflicts"][0].clone();
    assert!(conflict.get("merged").is_none());
    assert_eq!(conflict["overlaps"], json!([{"baseStart": 1, "baseLen": 1, "mine": "二B\n", "theirs": "二A\n"}]));
    // The merge view's regions come with it, from the fold that found the overlap.
    assert_eq!(
        conflict["regions"],
        json!([
            {"kind": "same", "baseStart": 0, "baseEnd": 1, "mineLine": 0, "base": "一\n", "mine": "一\n", "theirs": "一\n"},
            {"kind": "conflict", "baseStart": 1, "baseEnd": 2, "mineLine": 1, "base": "二\n", "mine": "二B\n", "theirs": "二A\n"},
            {"kind": "same", "baseStart": 2, "baseEnd": 3, "mineLine": 2, "base": "三\n", "mine": "三\n", "theirs": "三\n"},
        ])
    );
    assert_eq!(conflict["mergedTitle"], "叠");
    let refused = bob.call("sync.resolve", json!({"conflictId": conflict["id"], "choice": "merged"})).unwrap_err();
    assert_eq!(refused.code, inkstone_api::ErrorCode::Conflict);
    assert_eq!(refused.hints[0].id, "merge_view");
    let missing = bob.call("sync.resolve", json!({"conflictId": conflict["id"], "choice": "edited"})).unwrap_err();
    assert_eq!(missing.code, inkstone_api::ErrorCode::Validation);
    let before = bob.versions(&project).len();
    assert_eq!(before, 3, "the refusals wrote nothing");
    bob.ok("sync.resolve", json!({"conflictId": conflict["id"], "choice": "edited", "title": "叠", "source": "一\n二AB\n三\n"}));
    bob.ok("sync.push", json!({}));
    assert_eq!(server.versions(&ws).last().unwrap().source, "一\n二AB\n三\n");
}

#[test]
fn a_pulled_head_never_overwrites_an_edited_working_copy() {
    let Connected { server_dir: _server_dir, server, ws, clients: [alice, bob] } = connected(["Alice", "Bob"]);
    let project = alice.new_project("草稿", "一\n二\n三\n四\n");
    alice.ok("version.create", json!({"projectId": project}));
    alice.ok("sync.push", json!({}));
    bob.ok("sync.pull", json!({}));
    // Bob types (no version); Alice's next version arrives.
    let revision = bob.ok("project.get", json!({"projectId": project}))["revision"].clone();
    bob.ok("project.update", json!({"projectId": project, "baseRevision": revision, "source": "一\n二\n三\n四（未存）\n"}));
    alice.save(&project, "一（改）\n二\n三\n四\n");
    alice.ok("sync.push", json!({}));
    let run = bob.ok("sync.pull", json!({}));
    assert_eq!((run["pulled"].as_u64(), run["newConflicts"].as_u64()), (Some(1), Some(1)));
    assert_eq!(bob.ok("project.get", json!({"projectId": project}))["source"], "一\n二\n三\n四（未存）\n", "the working copy is Bob's");
    assert_eq!(bob.versions(&project).last().unwrap()["source"], "一（改）\n二\n三\n四\n", "Alice's version is in the history");
    let conflict = bob.ok("sync.conflicts", json!({}))["conflicts"][0].clone();
    assert_eq!((conflict["kind"].as_str(), conflict["mine"].get("localNumber")), (Some("pull"), None));
    assert_eq!(conflict["merged"]["source"], "一（改）\n二\n三\n四（未存）\n");
    let resolved = bob.ok("sync.resolve", json!({"conflictId": conflict["id"], "choice": "merged"}));
    // The working copy was neither side's version: it is kept first.
    assert_eq!(resolved["autosnapshot"]["source"], "一\n二\n三\n四（未存）\n");
    assert_eq!(bob.ok("project.get", json!({"projectId": project}))["source"], "一（改）\n二\n三\n四（未存）\n");
    // Both versions say what they are by origin, with the conflict's id, for the UI to
    // word in the person's language; neither carries an English message.
    let snapshot = &resolved["autosnapshot"];
    assert_eq!((&snapshot["origin"], &snapshot["message"]), (&json!({"type": "autosnapshot", "conflictId": conflict["id"]}), &Value::Null));
    assert_eq!((&resolved["version"]["origin"], &resolved["version"]["message"]), (&json!({"type": "syncResolution", "conflictId": conflict["id"]}), &Value::Null));
    // Only the resolution goes to the team: the autosnapshot is Bob's unsaved work and
    // has no delivery job.
    assert!(bob.jobs().iter().all(|j| j.version_id != snapshot["id"].as_str().unwrap()), "{:?}", bob.jobs());
    assert_eq!(bob.ok("sync.push", json!({}))["pushed"], 1);
    let on_server = server.versions(&ws);
    assert_eq!(on_server.iter().map(|v| v.source.as_str()).collect::<Vec<_>>(), ["一\n二\n三\n四\n", "一（改）\n二\n三\n四\n", "一（改）\n二\n三\n四（未存）\n"]);
    assert_eq!(on_server.last().unwrap().client_id, resolved["version"]["id"].as_str().unwrap());
    assert_eq!(alice.ok("sync.pull", json!({}))["pulled"], 1);
    let alices = alice.versions(&project);
    assert!(alices.iter().all(|v| v["source"] != "一\n二\n三\n四（未存）\n"), "Bob's unsaved work is not in Alice's history");
    assert_eq!(bob.ok("sync.status", json!({}))["state"], "synced");
    check_history("resolved with an autosnapshot", &server.versions(&ws), &[&alice, &bob]);
}

/// The status's change marker moves when sync changes this data folder's projects (a
/// pull brings a version, a conflict opens, moves on or is resolved) and at nothing
/// else: polling, an empty pull, the person's own saves and pushes leave it, so the UI
/// reads projects again only when it moves. It is stored, so a restart keeps it.
#[test]
fn the_change_marker_moves_when_sync_changes_projects_and_only_then() {
    let Connected { server_dir: _server_dir, server: _server, ws: _, clients: [alice, mut bob] } = connected(["Alice", "Bob"]);
    let marker = |c: &Client| c.ok("sync.status", json!({}))["changes"].as_u64().expect("the status carries the marker");
    let start = marker(&bob);
    assert_eq!(marker(&bob), start, "polling moves nothing");

    // A pull that brings a colleague's version (and a project new here) moves it.
    let project = alice.new_project("标记", "一\n二\n三\n");
    alice.ok("version.create", json!({"projectId": project}));
    alice.ok("sync.push", json!({}));
    assert_eq!(marker(&alice), 0, "the person's own versions and pushes change nothing sync brought");
    assert_eq!(bob.ok("sync.pull", json!({}))["pulled"], 1);
    let pulled = marker(&bob);
    assert!(pulled > start, "{pulled} after {start}");
    assert_eq!(bob.ok("sync.pull", json!({}))["pulled"], 0);
    assert_eq!(marker(&bob), pulled, "an empty pull moves nothing");

    // Bob's own version and its push: nothing sync brought.
    bob.save(&project, "一\n二\n三（乙）\n");
    bob.ok("sync.push", json!({}));
    assert_eq!(marker(&bob), pulled, "an acknowledged push of one's own version moves nothing");
    assert_eq!(alice.ok("sync.pull", json!({}))["pulled"], 1);

    // A stale push opens a conflict: it moves.
    alice.save(&project, "一（甲）\n二\n三（乙）\n");
    alice.ok("sync.push", json!({}));
    bob.save(&project, "一\n二\n三（乙）\n四\n");
    assert_eq!(bob.ok("sync.push", json!({}))["newConflicts"], 1);
    let conflicted = marker(&bob);
    assert!(conflicted > pulled);
    // Another version of Bob's waits with the open conflict, which moves on: it moves.
    bob.save(&project, "一\n二\n三（乙）\n四\n五\n");
    bob.ok("sync.push", json!({}));
    let held = marker(&bob);
    assert!(held > conflicted);

    // The resolution moves it; a restart keeps it.
    let conflict = bob.ok("sync.conflicts", json!({}))["conflicts"][0]["id"].clone();
    bob.ok("sync.resolve", json!({"conflictId": conflict, "choice": "merged"}));
    let resolved = marker(&bob);
    assert!(resolved > held);
    bob.reopen();
    assert_eq!(marker(&bob), resolved, "the marker is stored with the changes");
    bob.ok("sync.push", json!({}));
    assert_eq!(marker(&bob), resolved);
}
