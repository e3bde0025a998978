//! The team's AI activity end to end, over a real workspace server and the scripted
//! model server: a member accepts an AI change; with the workspace sharing activity,
//! the pushed version carries its AI origin detail and the owner's workspace view
//! shows it (the member's name, the model, host, prompt layers, proposal, hunks,
//! through what), editors see their own, viewers are refused, the CSV exports it,
//! offline and unconnected answers are errors with hints. Without sharing nothing
//! travels; a server from before the feature still takes the pushes.

use inkstone_api::ErrorCode;
use inkstone_server::proto::Role;
use inkstone_server::storage::Storage;
use inkstone_test_support::model_server::{ModelServer, Reply};
use serde_json::{json, Value};

use super::harness::stream;
use super::sync::*;

const POEM: &str = "# 春晓\n\n春眠不觉晓，\n\n处处闻啼鸟。\n";

/// `client` accepts a scripted AI edit of a new project; the project and proposal ids.
fn accepts_an_ai_change(client: &Client, model: &ModelServer) -> (String, String) {
    client.ok("llmProfile.create", json!({"name": "写作助手", "baseUrl": model.base_url(), "model": "fake-model", "keyRequired": false, "contextWindow": 65_536}));
    let project = client.new_project("春晓", POEM);
    let session = client.ok("session.create", json!({"projectId": project}))["session"]["id"].as_str().unwrap().to_owned();
    let input = json!({"summary": "鸟啼", "edits": [{"find": "处处闻啼鸟", "replace": "处处闻鸟啼"}]}).to_string();
    model.push(Reply::tool_calls(&[("p1", "propose_source_patch", &input)]));
    model.push(Reply::text("提好了"));
    stream(&client.engine, "session.submit", json!({"sessionId": session, "text": "改一改"})).0.unwrap();
    let proposals = client.ok("proposal.list", json!({"projectId": project}))["proposals"].as_array().unwrap().clone();
    let proposal = proposals.iter().find(|p| p["status"] == "proposed").and_then(|p| p["id"].as_str()).unwrap().to_owned();
    let revision = client.ok("project.get", json!({"projectId": project}))["revision"].clone();
    client.ok("proposal.accept", json!({"proposalId": proposal, "expectedBase": revision}));
    (project, proposal)
}

fn workspace_rows(client: &Client, filter: Value) -> Result<Vec<Value>, inkstone_api::ApiError> {
    client.call("aiActivity.list", json!({"scope": "workspace", "filter": filter})).map(|page| page["rows"].as_array().unwrap().clone())
}

#[test]
fn a_members_accepted_ai_change_reaches_the_owners_workspace_activity() {
    let model = ModelServer::start(vec![]);
    let server_dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(server_dir.path());
    let (ws, owner) = server.storage.create_workspace("团队", "Olga").unwrap();
    let editor = server.storage.invite(&ws, "Bea", Role::Editor).unwrap();
    let viewer = server.storage.invite(&ws, "Vic", Role::Viewer).unwrap();
    let (olga, bea, vic) = (Client::new("Olga"), Client::new("Bea"), Client::new("Vic"));
    olga.connect(&server.url, &owner.token);
    olga.ok("sync.setPolicy", json!({"shareActivity": true}));
    bea.connect(&server.url, &editor.token);
    vic.connect(&server.url, &viewer.token);
    assert_eq!(bea.ok("sync.policy", json!({}))["policy"]["policy"]["shareActivity"], true);

    let (project, proposal) = accepts_an_ai_change(&bea, &model);
    let run = bea.ok("sync.push", json!({}));
    assert_eq!(run["status"]["failed"].as_u64(), Some(0), "{run}");

    // The owner sees Bea's accept with the model and everything that travelled.
    let rows = workspace_rows(&olga, json!({})).unwrap();
    assert_eq!(rows.len(), 1, "{rows:#?}");
    let row = &rows[0];
    assert_eq!((row["actor"].as_str(), row["source"]["type"].as_str(), row["source"]["pushedBy"].as_str()), (Some("Bea"), Some("synced"), Some("Bea")));
    assert_eq!((row["model"]["model"].as_str(), row["model"]["providerHost"].as_str()), (Some("fake-model"), Some("127.0.0.1")));
    assert_eq!((row["proposalId"].as_str(), row["projectId"].as_str(), row["projectTitle"].as_str()), (Some(proposal.as_str()), Some(project.as_str()), Some("春晓")));
    assert_eq!((row["decision"].as_str(), row["nHunks"].as_u64(), row["through"]["type"].as_str()), (Some("accepted"), Some(1), Some("draftingSession")));
    // The same prompt layers as Bea's own view of the accept.
    let local = bea.ok("aiActivity.list", json!({}))["rows"][0].clone();
    assert!(!local["promptLayers"].as_array().unwrap().is_empty());
    assert_eq!(row["promptLayers"], local["promptLayers"]);
    assert_eq!(row["at"], local["at"]);
    // Nothing of the conversation travelled: no prompt text, no reply, no tokens.
    let stored = serde_json::to_string(&server.storage.ai_activity(&ws, None, &Default::default()).unwrap()).unwrap();
    assert!(!stored.contains("改一改") && !stored.contains("提好了") && !stored.contains("春眠"), "{stored}");
    assert!(row.get("tokens").is_none() && row.get("contextSnapshotId").is_none());

    // Filters, an editor's own view, a viewer refused.
    assert_eq!(workspace_rows(&olga, json!({"person": "Bea", "model": "fake-model", "projectId": project})).unwrap().len(), 1);
    assert_eq!(workspace_rows(&olga, json!({"person": "Olga"})).unwrap().len(), 0);
    assert_eq!(workspace_rows(&olga, json!({"decision": "rejected"})).unwrap().len(), 0);
    assert_eq!(workspace_rows(&olga, json!({"from": "2000-01-01T00:00:00Z", "to": "2000-01-02T00:00:00Z"})).unwrap().len(), 0);
    assert_eq!(workspace_rows(&bea, json!({})).unwrap().len(), 1);
    let refused = workspace_rows(&vic, json!({})).unwrap_err();
    assert_eq!(refused.code, ErrorCode::PermissionDenied, "{refused:?}");

    // The export: the local exporter's CSV (BOM, header, the row).
    let export = olga.ok("aiActivity.export", json!({"scope": "workspace"}));
    let csv = export["csv"].as_str().unwrap();
    assert!(csv.starts_with('\u{feff}'), "BOM");
    assert_eq!(export["nRows"], 1);
    assert!(csv.contains("Bea") && csv.contains("fake-model") && csv.contains(&proposal), "{csv}");

    // Not connected: a conflict that says to connect. Offline: OFFLINE with a hint.
    let alone = Client::new("Alone");
    let error = workspace_rows(&alone, json!({})).unwrap_err();
    assert_eq!(error.code, ErrorCode::Conflict);
    assert!(error.hints.iter().any(|h| h.id == "connect"), "{error:?}");
    server.stop();
    let error = workspace_rows(&olga, json!({})).unwrap_err();
    assert_eq!(error.code, ErrorCode::Offline, "{error:?}");
    assert!(error.hints.iter().any(|h| h.id == "check_server"), "{error:?}");
    // The local view is unaffected.
    assert_eq!(bea.ok("aiActivity.list", json!({}))["rows"].as_array().unwrap().len(), 1);
}

#[test]
fn without_sharing_nothing_travels_and_a_server_before_the_feature_still_takes_the_pushes() {
    let model = ModelServer::start(vec![]);
    // Sharing off (the default): the version syncs, its detail does not.
    let server_dir = tempfile::tempdir().unwrap();
    let server = Server::start(server_dir.path());
    let (ws, owner) = server.storage.create_workspace("团队", "Olga").unwrap();
    let editor = server.storage.invite(&ws, "Bea", Role::Editor).unwrap();
    let (olga, bea) = (Client::new("Olga"), Client::new("Bea"));
    olga.connect(&server.url, &owner.token);
    bea.connect(&server.url, &editor.token);
    accepts_an_ai_change(&bea, &model);
    let run = bea.ok("sync.push", json!({}));
    assert!(run["pushed"].as_u64().is_some_and(|n| n >= 1) && run["status"]["failed"] == 0, "{run}");
    assert_eq!(workspace_rows(&olga, json!({})).unwrap().len(), 0);
    assert!(server.versions(&ws).iter().any(|v| v.origin.as_deref() == Some("aiProposal")));

    // A server from before `aiActivity` (with the policy sharing): the push goes
    // without the detail, and the workspace view says the server is older.
    let old_dir = tempfile::tempdir().unwrap();
    let old = Server::start_before_ai_activity(old_dir.path());
    let (ws, owner) = old.storage.create_workspace("旧团队", "Olga").unwrap();
    let editor = old.storage.invite(&ws, "Bea", Role::Editor).unwrap();
    let (olga, bea) = (Client::new("Olga"), Client::new("Bea"));
    olga.connect(&old.url, &owner.token);
    olga.ok("sync.setPolicy", json!({"shareActivity": true}));
    bea.connect(&old.url, &editor.token);
    accepts_an_ai_change(&bea, &model);
    let run = bea.ok("sync.push", json!({}));
    assert_eq!((run["status"]["state"].as_str(), run["status"]["failed"].as_u64()), (Some("synced"), Some(0)), "{run}");
    assert!(old.versions(&ws).iter().any(|v| v.origin.as_deref() == Some("aiProposal")));
    let error = workspace_rows(&olga, json!({})).unwrap_err();
    assert_eq!(error.code, ErrorCode::Conflict, "{error:?}");
    assert!(error.hints.iter().any(|h| h.id == "match_versions"), "{error:?}");
}
