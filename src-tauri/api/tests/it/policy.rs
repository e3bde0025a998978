//! The workspace policy end to end: an owner sets it on a real workspace server, a
//! member's app fetches it and refuses model calls it forbids before a byte is sent to
//! the provider (the scripted model server sees no request), keeps to it offline, and
//! an editor can change nothing. An app talking to an older server has no policy.

use inkstone_api::llm::{Cancel, ChatRequest, Message, ModelCall};
use inkstone_api::ErrorCode;
use inkstone_server::proto::Role;
use inkstone_server::storage::Storage;
use inkstone_test_support::model_server::{ModelServer, Reply};
use serde_json::{json, Value};

use super::sync::*;

/// A host that is never contacted: `.invalid` never resolves (RFC 6761), and the policy
/// refuses before any lookup would be made.
const REMOTE: &str = "https://models.policy-test.invalid/v1";

fn profile(client: &Client, name: &str, base_url: &str, extra: Value) {
    let mut params = json!({"name": name, "baseUrl": base_url, "model": "fake-model", "keyRequired": false, "contextWindow": 8192});
    for (k, v) in extra.as_object().unwrap() {
        params[k] = v.clone();
    }
    client.ok("llmProfile.create", params);
}

fn hint<'a>(error: &'a Value, id: &str) -> Option<&'a Value> {
    error["hints"].as_array().and_then(|hints| hints.iter().find(|h| h["id"] == id))
}

fn drafting_call(client: &Client, profile: &str) -> Result<inkstone_api::llm::ChatResponse, inkstone_api::ApiError> {
    let call = ModelCall { profile, purpose: "drafting", session_id: None, run_id: None };
    client.engine.model_chat(call, &ChatRequest::new(vec![Message::user("改写这一段")]), &mut |_| {}, &Cancel::new())
}

#[test]
fn a_forbidden_provider_is_refused_before_a_byte_is_sent_and_the_cached_policy_holds_offline() {
    let model = ModelServer::start(vec![]);
    model.set_fallback(Reply::text("OK"));
    let server_dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(server_dir.path());
    let (ws, owner) = server.storage.create_workspace("团队", "Olga").unwrap();
    let editor = server.storage.invite(&ws, "Eddie", Role::Editor).unwrap();
    let olga = Client::new("Olga");
    let eddie = Client::new("Eddie");
    olga.connect(&server.url, &owner.token);
    eddie.connect(&server.url, &editor.token);
    profile(&eddie, "here", &model.base_url(), json!({}));
    profile(&eddie, "far", REMOTE, json!({}));

    // No policy set: the defaults, which refuse nothing.
    let shown = eddie.ok("sync.policy", json!({}));
    assert_eq!((shown["fresh"].as_bool(), shown["canSet"].as_bool()), (Some(true), Some(false)));
    assert_eq!(shown["policy"]["policy"]["providers"], json!({"kind": "any"}));
    assert!(shown["policy"].get("setBy").is_none());
    assert_eq!(eddie.ok("llmProfile.test", json!({"profile": "here"}))["ok"], true);

    // The owner allows one host only; the editor's app learns it at its next pull.
    let set = olga.ok("sync.setPolicy", json!({"providers": {"kind": "hosts", "hosts": ["LLM.corp.example "]}, "performanceContext": false}));
    assert_eq!(set["policy"]["policy"]["providers"], json!({"kind": "hosts", "hosts": ["llm.corp.example"]}));
    assert_eq!((set["policy"]["setBy"].as_str(), set["canSet"].as_bool()), (Some("Olga"), Some(true)));
    eddie.ok("sync.pull", json!({}));
    let before = model.requests().len();
    let result = eddie.ok("llmProfile.test", json!({"profile": "here"}));
    assert_eq!((result["ok"].as_bool(), result["error"]["code"].as_str()), (Some(false), Some("POLICY_REFUSED")), "{result}");
    let action = hint(&result["error"], "policy_providers").unwrap_or_else(|| panic!("no policy hint: {result}"));
    assert_eq!((action["params"]["owner"].as_str(), action["params"]["workspace"].as_str()), (Some("Olga"), Some("团队")));
    assert_eq!(result["error"]["details"]["policy"], "providers");
    let refused = drafting_call(&eddie, "here").unwrap_err();
    assert_eq!(refused.code, ErrorCode::PolicyRefused);
    assert_eq!(model.requests().len(), before, "a refused call sent nothing, not even a window probe");
    assert!(eddie.ok("usage.list", json!({}))["records"].as_array().unwrap().len() == 1, "a refused call leaves no usage record");

    // Local only: the loopback server is allowed, another machine refused unsent.
    olga.ok("sync.setPolicy", json!({"providers": {"kind": "local"}}));
    eddie.ok("sync.pull", json!({}));
    assert_eq!(eddie.ok("llmProfile.test", json!({"profile": "here"}))["ok"], true);
    assert!(model.requests().len() > before, "the loopback server was asked");
    let far = eddie.ok("llmProfile.test", json!({"profile": "far"}));
    assert_eq!(far["error"]["code"], "POLICY_REFUSED", "{far}");
    assert_eq!((far["error"]["details"]["rule"].as_str(), far["error"]["details"]["host"].as_str()), (Some("local"), Some("models.policy-test.invalid")));
    assert!(far["error"]["message"].as_str().unwrap().contains("Olga"), "{far}");

    // An editor cannot change it: the server refuses, nothing changes anywhere.
    let forbidden = eddie.call("sync.setPolicy", json!({"providers": {"kind": "any"}})).unwrap_err();
    assert_eq!(forbidden.code, ErrorCode::PermissionDenied);
    assert!(forbidden.hints.iter().any(|h| h.id == "owner_only"));
    assert_eq!(server.storage.policy(&ws).unwrap().unwrap().policy.providers, inkstone_server::proto::ProviderRule::Local);
    assert_eq!(eddie.ok("sync.policy", json!({}))["policy"]["policy"]["providers"]["kind"], "local");

    // Offline: the server is gone; the policy last seen holds.
    server.stop();
    let shown = eddie.ok("sync.policy", json!({}));
    assert_eq!((shown["fresh"].as_bool(), shown["policy"]["policy"]["providers"]["kind"].as_str()), (Some(false), Some("local")));
    assert_eq!(drafting_call(&eddie, "far").unwrap_err().code, ErrorCode::PolicyRefused);
    assert!(drafting_call(&eddie, "here").is_ok(), "the loopback server still answers");
}

#[test]
fn a_member_over_the_monthly_cap_is_refused_before_the_call_and_sees_why() {
    let model = ModelServer::start(vec![]);
    model.set_fallback(Reply::text("OK"));
    let server_dir = tempfile::tempdir().unwrap();
    let server = Server::start(server_dir.path());
    let (ws, owner) = server.storage.create_workspace("团队", "Olga").unwrap();
    let editor = server.storage.invite(&ws, "Eddie", Role::Editor).unwrap();
    let olga = Client::new("Olga");
    let eddie = Client::new("Eddie");
    olga.connect(&server.url, &owner.token);
    olga.ok("sync.setPolicy", json!({"monthlyCapUsd": 0.5}));
    eddie.connect(&server.url, &editor.token);
    // A price that makes one small call cost more than the cap.
    profile(&eddie, "pricey", &model.base_url(), json!({"inputPricePerMtok": 100000.0, "outputPricePerMtok": 100000.0}));

    assert!(drafting_call(&eddie, "pricey").is_ok(), "under the cap the call goes");
    let standing = eddie.ok("sync.policy", json!({}));
    assert!(standing["spent"]["costUsd"].as_f64().unwrap() >= 0.5, "{standing}");
    let sent = model.chat_requests().len();
    let refused = drafting_call(&eddie, "pricey").unwrap_err();
    assert_eq!(refused.code, ErrorCode::PolicyRefused);
    assert!(refused.hints.iter().any(|h| h.id == "policy_monthly_cap" && h.params.get("owner").map(String::as_str) == Some("Olga")), "{refused:?}");
    assert_eq!(refused.details.as_ref().unwrap()["policy"], "monthlyCapUsd");
    assert_eq!(model.chat_requests().len(), sent, "nothing was sent over the cap");
}

#[test]
fn an_app_talking_to_an_older_server_has_no_policy_and_still_syncs() {
    let model = ModelServer::start(vec![]);
    model.set_fallback(Reply::text("OK"));
    let server_dir = tempfile::tempdir().unwrap();
    let server = Server::start_old(server_dir.path());
    let (ws, owner) = server.storage.create_workspace("团队", "Olga").unwrap();
    // Even with a record on the server's disk, an older server shows none.
    server
        .storage
        .set_policy(
            &ws,
            &inkstone_server::proto::PolicyRecord {
                policy: inkstone_server::proto::WorkspacePolicy { providers: inkstone_server::proto::ProviderRule::Local, ..Default::default() },
                set_by: None,
                set_at: None,
            },
        )
        .unwrap();
    let olga = Client::new("Olga");
    olga.connect(&server.url, &owner.token);
    let shown = olga.ok("sync.policy", json!({}));
    assert!(shown.get("policy").is_none(), "{shown}");
    profile(&olga, "far", REMOTE, json!({}));
    // Not refused by a policy (it fails to reach the host, as any unreachable provider).
    assert_ne!(drafting_call(&olga, "far").unwrap_err().code, ErrorCode::PolicyRefused);
    let project = olga.new_project("旧服务器", "一\n");
    olga.save(&project, "一\n二\n");
    let run = olga.ok("sync.push", json!({}));
    assert_eq!((run["status"]["state"].as_str(), run["status"]["failed"].as_u64()), (Some("synced"), Some(0)), "{run}");
    assert!(run["pushed"].as_u64().is_some_and(|n| n >= 1), "{run}");
}
