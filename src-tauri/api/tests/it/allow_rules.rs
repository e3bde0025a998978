//! "Always allow" through real sessions (scripted model over HTTP, real sled): the
//! prompt carries the rule it would store and the preview lists the workspace's past
//! calls it would have matched; answering with `always` stores it; the next matching
//! call runs without asking and counts on the rule in the same write as its decision;
//! narrowing and removing; tools that always ask refuse `always`; backups carry rules.

use inkstone_api::harness::{AllowRule, EventBody};
use inkstone_api::ErrorCode;
use inkstone_test_support::model_server::{ModelServer, Reply};
use inkstone_test_support::TestEngine;
use serde_json::{json, Value};

use crate::harness::{pending_request, stream};

fn call(id: &str, name: &str, args: Value) -> Reply {
    Reply::tool_calls(&[(id, name, &args.to_string())])
}

struct A {
    t: TestEngine,
    server: ModelServer,
}

impl A {
    fn new() -> A {
        let server = ModelServer::start(Vec::new());
        let t = TestEngine::new();
        t.ok("llmProfile.create", json!({"name": "fake", "baseUrl": server.base_url(), "model": "fake-model", "contextWindow": 65_536}));
        A { t, server }
    }

    fn session(&self, title: &str) -> (String, String) {
        let project = self.t.ok("project.create", json!({"title": title, "source": "# 春晓\n\n春眠不觉晓。\n"}))["id"].as_str().unwrap().to_owned();
        let session = self.t.ok("session.create", json!({"projectId": project}))["session"]["id"].as_str().unwrap().to_owned();
        (project, session)
    }

    fn send(&self, session: &str, replies: Vec<Reply>) -> Value {
        for reply in replies {
            self.server.push(reply);
        }
        stream(&self.t.engine, "session.submit", json!({"sessionId": session, "text": "go"})).0.unwrap()
    }

    fn rules(&self) -> Vec<Value> {
        self.t.ok("allowRule.list", json!({}))["rules"].as_array().unwrap().clone()
    }
}

#[test]
fn always_allow_shows_its_rule_and_matches_then_allows_counts_narrows_and_is_removed() {
    let a = A::new();
    let (project, session) = a.session("春晓");
    let (_, other_session) = a.session("夏夜");

    // A checkpoint in the other project earlier: asked, allowed once.
    let result = a.send(&other_session, vec![call("c0", "create_checkpoint", json!({"label": "before"})), Reply::text("ok")]);
    let request = pending_request(&result);
    stream(&a.t.engine, "session.resolveApproval", json!({"sessionId": other_session, "requestId": request, "approved": true})).0.unwrap();

    // Now in this project: the prompt carries the rule "always allow" would store.
    let result = a.send(&session, vec![call("c1", "create_checkpoint", json!({"label": "first"})), Reply::text("ok")]);
    let pending = &result["session"]["pendingApproval"];
    assert_eq!(pending["offer"], json!({"tool": "create_checkpoint", "pattern": {}}), "{pending}");
    let request = pending_request(&result);
    // How wide each scope is: this session and project see this call; the workspace
    // sees the other project's call too.
    let preview = |scope: &str| a.t.ok("allowRule.preview", json!({"sessionId": session, "requestId": request, "scope": scope}));
    let project_wide = preview("project");
    assert_eq!(project_wide["tool"], "create_checkpoint");
    assert_eq!(project_wide["scope"], "project");
    assert_eq!(project_wide["total"], 1);
    assert_eq!(project_wide["matches"][0]["projectId"], project.as_str());
    assert_eq!(project_wide["matches"][0]["projectTitle"], "春晓");
    assert_eq!(project_wide["matches"][0]["fields"], json!({}), "no input text is shown");
    assert_eq!(preview("session")["total"], 1);
    let workspace_wide = preview("workspace");
    assert_eq!(workspace_wide["total"], 2);
    assert_eq!(workspace_wide["matches"][1]["projectTitle"], "夏夜", "newest first");

    // "Always allow" in this project: the call runs, the rule is stored.
    let (result, _) = stream(&a.t.engine, "session.resolveApproval", json!({"sessionId": session, "requestId": request, "approved": true, "always": "project"}));
    assert_eq!(result.unwrap()["reason"], "completed");
    let rules = a.rules();
    assert_eq!(rules.len(), 1);
    let rule_id = rules[0]["id"].as_str().unwrap().to_owned();
    assert_eq!((rules[0]["scope"].clone(), rules[0]["allowedCount"].clone(), rules[0]["projectTitle"].clone()), (json!("project"), json!(0), json!("春晓")));
    assert!(rules[0].get("lastAllowedAt").is_none());

    // The next checkpoint of this project runs without asking, and counts.
    let result = a.send(&session, vec![call("c2", "create_checkpoint", json!({"label": "second"})), Reply::text("done")]);
    assert_eq!(result["reason"], "completed", "{result}");
    let rules = a.rules();
    assert_eq!(rules[0]["allowedCount"], 1);
    assert!(rules[0]["lastAllowedAt"].is_string());
    let decided = a.t.engine.session_events(&session).unwrap().into_iter().find_map(|e| match e.body {
        EventBody::ToolDecision { rule_id: Some(id), decision, .. } if e.tool_use_id.as_deref() == Some("c2") => Some((id, decision)),
        _ => None,
    });
    assert_eq!(decided, Some((rule_id.clone(), "allow".to_owned())));

    // The other project still asks.
    let result = a.send(&other_session, vec![call("c3", "create_checkpoint", json!({"label": "again"})), Reply::text("ok")]);
    assert_eq!(result["reason"], "blocked_on_approval");
    stream(&a.t.engine, "session.resolveApproval", json!({"sessionId": other_session, "requestId": pending_request(&result), "approved": false})).0.unwrap();

    // Narrowing: never wider; to this session it holds.
    let wider = a.t.engine.call("allowRule.narrow", json!({"ruleId": rule_id, "scope": "workspace"})).unwrap_err();
    assert_eq!(wider.code, ErrorCode::Validation);
    let wider = a.t.engine.call("allowRule.narrow", json!({"ruleId": rule_id, "pattern": {}, "scope": "project"})).map(|v| v["scope"].clone());
    assert_eq!(wider.unwrap(), "project", "the same pattern is not wider");
    let narrowed = a.t.ok("allowRule.narrow", json!({"ruleId": rule_id, "scope": "session", "pattern": {"label": "keep*"}}));
    assert_eq!((narrowed["scope"].clone(), narrowed["pattern"].clone()), (json!("session"), json!({"label": "keep*"})));
    let widened = a.t.engine.call("allowRule.narrow", json!({"ruleId": rule_id, "pattern": {}})).unwrap_err();
    assert_eq!(widened.code, ErrorCode::Validation, "dropping a field widens");
    let result = a.send(&session, vec![call("c4", "create_checkpoint", json!({"label": "other"})), Reply::text("ok")]);
    assert_eq!(result["reason"], "blocked_on_approval", "the narrowed pattern does not match");
    stream(&a.t.engine, "session.resolveApproval", json!({"sessionId": session, "requestId": pending_request(&result), "approved": false})).0.unwrap();
    let result = a.send(&session, vec![call("c5", "create_checkpoint", json!({"label": "keep this"})), Reply::text("ok")]);
    assert_eq!(result["reason"], "completed");
    assert_eq!(a.rules()[0]["allowedCount"], 2);

    // Backups carry the rule with its count.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("export");
    a.t.ok("export.run", json!({"path": path.display().to_string()}));
    let lines = std::fs::read_to_string(path.join("harness/allow-rules.jsonl")).unwrap();
    let stored: Vec<AllowRule> = lines.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!((stored.len(), stored[0].id.as_str(), stored[0].allowed_count), (1, rule_id.as_str(), 2));
    let restored = TestEngine::new();
    restored.ok("import.run", json!({"path": path.display().to_string()}));
    assert_eq!(restored.ok("allowRule.list", json!({}))["rules"][0]["allowedCount"], 2);

    // Removed: it asks again.
    assert_eq!(a.t.ok("allowRule.remove", json!({"ruleId": rule_id}))["deleted"], true);
    assert!(a.rules().is_empty());
    assert_eq!(a.t.engine.call("allowRule.remove", json!({"ruleId": rule_id})).unwrap_err().code, ErrorCode::NotFound);
    let result = a.send(&session, vec![call("c6", "create_checkpoint", json!({"label": "keep going"})), Reply::text("ok")]);
    assert_eq!(result["reason"], "blocked_on_approval");
}

#[test]
fn a_tool_that_always_asks_offers_no_rule_and_refuses_always() {
    let a = A::new();
    let (_, session) = a.session("春晓");
    let result = a.send(&session, vec![call("p1", "request_permission", json!({"permission": "publish to X"})), Reply::text("ok")]);
    let pending = &result["session"]["pendingApproval"];
    assert!(pending.get("offer").is_none(), "{pending}");
    let request = pending_request(&result);
    let preview = a.t.engine.call("allowRule.preview", json!({"sessionId": session, "requestId": request, "scope": "session"})).unwrap_err();
    assert_eq!(preview.code, ErrorCode::Validation);
    let (refused, events) = stream(&a.t.engine, "session.resolveApproval", json!({"sessionId": session, "requestId": request, "approved": true, "always": "workspace"}));
    assert_eq!(refused.unwrap_err().code, ErrorCode::Validation);
    assert!(events.is_empty(), "nothing was written");
    assert!(a.rules().is_empty());
    // A denial with `always` is refused too; the request is still pending.
    let (refused, _) = stream(&a.t.engine, "session.resolveApproval", json!({"sessionId": session, "requestId": request, "approved": false, "always": "session"}));
    assert_eq!(refused.unwrap_err().code, ErrorCode::Validation);
    let view = a.t.ok("session.get", json!({"sessionId": session}));
    assert_eq!(view["pendingApproval"]["requestId"].as_str().unwrap(), request);
}
