//! The AI activity view through the API, over real sessions with the scripted model
//! server (real HTTP on loopback, a real sled store): a rejected proposal with its
//! reason, a proposal the person accepted, one the assistant applied after approval —
//! each with its model, profile, host, prompt layers, actor, tokens — the filters, the
//! CSV export, bad filters refused, and the index surviving a backup round trip.

use inkstone_test_support::model_server::{ModelServer, Reply};
use inkstone_test_support::TestEngine;
use serde_json::{json, Value};

use crate::harness::stream;

const POEM: &str = "# 春晓\n\n春眠不觉晓，\n\n处处闻啼鸟。\n\n夜来风雨声，\n\n花落知多少。\n";

struct A {
    t: TestEngine,
    server: ModelServer,
    project: String,
    session: String,
}

fn setup() -> A {
    let server = ModelServer::start(Vec::new());
    let t = TestEngine::new();
    t.ok("llmProfile.create", json!({"name": "写作助手", "baseUrl": server.base_url(), "model": "fake-model", "contextWindow": 65_536}));
    let project = t.ok("project.create", json!({"title": "春晓", "source": POEM}))["id"].as_str().unwrap().to_owned();
    let session = t.ok("session.create", json!({"projectId": project}))["session"]["id"].as_str().unwrap().to_owned();
    A { t, server, project, session }
}

impl A {
    fn send(&self, replies: Vec<Reply>, text: &str) -> Value {
        for reply in replies {
            self.server.push(reply);
        }
        let (result, _) = stream(&self.t.engine, "session.submit", json!({"sessionId": self.session, "text": text}));
        result.unwrap_or_else(|e| panic!("submit failed: {e:?}"))
    }

    /// The model proposes one edit in a turn; the proposal's id.
    fn proposes(&self, call_id: &str, find: &str, replace: &str) -> String {
        let input = json!({"summary": format!("{find} → {replace}"), "edits": [{"find": find, "replace": replace}]}).to_string();
        self.send(vec![Reply::tool_calls(&[(call_id, "propose_source_patch", &input)]), Reply::text("提好了")], "改一改");
        let list = self.t.ok("proposal.list", json!({"projectId": self.project}))["proposals"].as_array().unwrap().clone();
        list.iter().rev().find(|p| p["status"] == "proposed").and_then(|p| p["id"].as_str()).unwrap().to_owned()
    }

    fn rows(&self, filter: Value) -> Vec<Value> {
        self.t.ok("aiActivity.list", json!({"filter": filter}))["rows"].as_array().unwrap().clone()
    }
}

#[test]
fn accepted_rejected_and_approved_changes_each_appear_once_with_model_prompts_actor_reason_and_tokens() {
    let a = setup();
    // 1. Rejected by the person, with a reason (a comma and a quote, for the CSV).
    let rejected = a.proposes("p1", "处处闻啼鸟", "处处闻鸟啼");
    let reason = "不要改诗句，保持\"原样\", 谢谢";
    a.t.ok("proposal.reject", json!({"proposalId": rejected, "reason": reason}));
    // 2. Accepted by the person in review.
    let accepted = a.proposes("p2", "花落知多少", "花落知几多");
    let revision = a.t.ok("project.get", json!({"projectId": a.project}))["revision"].clone();
    a.t.ok("proposal.accept", json!({"proposalId": accepted, "expectedBase": revision}));
    // 3. Applied by the assistant after the person approved.
    let approved = a.proposes("p3", "夜来风雨声", "夜来风雨急");
    let input = json!({"proposalId": approved}).to_string();
    let result = a.send(vec![Reply::tool_calls(&[("a1", "apply_proposal", &input)]), Reply::text("已应用")], "应用吧");
    let request = result["session"]["pendingApproval"]["requestId"].as_str().unwrap().to_owned();
    stream(&a.t.engine, "session.resolveApproval", json!({"sessionId": a.session, "requestId": request, "approved": true})).0.unwrap();

    let rows = a.rows(json!({}));
    assert_eq!(rows.len(), 3, "one row per decision: {rows:#?}");
    let ids: Vec<&str> = rows.iter().map(|r| r["proposalId"].as_str().unwrap()).collect();
    assert_eq!(ids, [approved.as_str(), accepted.as_str(), rejected.as_str()], "newest first");
    let author = a.t.ok("workspace.get", json!({}))["author"].as_str().map(str::to_owned);
    for row in &rows {
        assert_eq!(row["projectId"], json!(a.project));
        assert_eq!(row["projectTitle"], "春晓");
        assert_eq!(row["model"]["model"], "fake-model");
        assert_eq!(row["model"]["profileName"], "写作助手");
        assert_eq!(row["model"]["providerHost"], "127.0.0.1");
        let layers: Vec<&str> = row["promptLayers"].as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect();
        assert!(layers.iter().any(|l| l.starts_with("core-identity@")), "{layers:?}");
        assert!(row["contextSnapshotId"].as_str().is_some_and(|s| !s.is_empty()), "{row:#}");
        assert!(row["promptVersion"].as_str().is_some());
        let tokens = &row["tokens"];
        assert_eq!(tokens["scope"], "turn");
        assert!(tokens["inputTokens"].as_u64().unwrap() > 0 && tokens["outputTokens"].as_u64().unwrap() > 0, "{row:#}");
        assert_eq!(tokens["calls"], 1, "the call that proposed it, not the turn's closing call nor later turns: {row:#}");
        assert_eq!(row["nHunks"], 1);
        assert_eq!(row["nHunksTotal"], 1);
        if let Some(author) = &author {
            assert_eq!(&row["actor"], author);
        }
    }
    let (r3, r2, r1) = (&rows[0], &rows[1], &rows[2]);
    assert_eq!((r1["decision"].as_str(), r1["reason"].as_str(), r1["version"].as_u64()), (Some("rejected"), Some(reason), None));
    assert_eq!(r1["through"], json!({"type": "draftingSession", "sessionId": a.session}));
    assert_eq!((r2["decision"].as_str(), r2["version"].as_u64()), (Some("accepted"), Some(1)));
    assert_eq!(r2["through"]["type"], "draftingSession");
    assert_eq!((r3["decision"].as_str(), r3["version"].as_u64()), (Some("accepted"), Some(2)));
    assert_eq!(r3["through"], json!({"type": "applyProposal", "sessionId": a.session, "approvalRequestId": request}));
    let proposal = a.t.ok("proposal.get", json!({"proposalId": approved}));
    let hunks = proposal["hunks"][0]["id"].clone();
    assert!(hunks.is_string(), "{proposal:#}");
    assert_eq!(r3["hunks"], json!([hunks]), "the hunk ids open the diff");

    // Filters.
    let decided = |d: &str| a.rows(json!({"decision": d})).iter().map(|r| r["proposalId"].as_str().unwrap().to_owned()).collect::<Vec<_>>();
    assert_eq!(decided("rejected"), std::slice::from_ref(&rejected));
    assert_eq!(decided("accepted"), [approved.clone(), accepted.clone()]);
    assert_eq!(a.rows(json!({"projectId": a.project})).len(), 3);
    assert_eq!(a.rows(json!({"model": "fake-model"})).len(), 3);
    assert!(a.rows(json!({"model": "another-model"})).is_empty());
    assert!(a.rows(json!({"person": "somebody else"})).is_empty());
    let actor = r1["actor"].clone();
    assert_eq!(a.rows(json!({"person": actor, "decision": "rejected"})).len(), 1);
    let at = |r: &Value| r["at"].as_str().unwrap().to_owned();
    assert!(a.rows(json!({"to": at(r1)})).is_empty(), "`to` is exclusive");
    assert_eq!(a.rows(json!({"from": at(r1)})).len(), 3);
    let page = a.t.ok("aiActivity.list", json!({"limit": 2}));
    assert_eq!((page["rows"].as_array().unwrap().len(), page["truncated"].as_bool()), (2, Some(true)));

    // CSV: BOM, header, one record per row, the reason quoted whole.
    let export = a.t.ok("aiActivity.export", json!({}));
    assert_eq!(export["nRows"], 3);
    let csv = export["csv"].as_str().unwrap();
    assert!(csv.starts_with('\u{feff}'), "UTF-8 with a BOM");
    let mut reader = csv::Reader::from_reader(csv.trim_start_matches('\u{feff}').as_bytes());
    let header: Vec<String> = reader.headers().unwrap().iter().map(str::to_owned).collect();
    assert_eq!(header, inkstone_api::activity::CSV_HEADER);
    let records: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(records.len(), 3);
    let column = |name: &str| header.iter().position(|h| h == name).unwrap();
    assert_eq!(&records[2][column("reason")], reason);
    assert_eq!(&records[2][column("project_title")], "春晓");
    assert_eq!(&records[0][column("through")], "apply_proposal");
    assert_eq!(&records[1][column("version")], "1");
    assert_eq!(&records[0][column("provider_host")], "127.0.0.1");
}

#[test]
fn bad_filters_are_refused_and_unknown_projects_are_not_found() {
    let a = setup();
    let code = |params: Value| a.t.engine.call("aiActivity.list", params).unwrap_err().code;
    use inkstone_api::api::ErrorCode;
    assert_eq!(code(json!({"limit": 0})), ErrorCode::Validation);
    assert_eq!(code(json!({"limit": 5000})), ErrorCode::Validation);
    assert_eq!(code(json!({"filter": {"decision": "maybe"}})), ErrorCode::Validation);
    assert_eq!(code(json!({"filter": {"person": "  "}})), ErrorCode::Validation);
    assert_eq!(code(json!({"filter": {"from": "2026-02-01T00:00:00Z", "to": "2026-01-01T00:00:00Z"}})), ErrorCode::Validation);
    assert_eq!(code(json!({"filter": {"projectId": "prj_nope"}})), ErrorCode::NotFound);
    assert_eq!(code(json!({"filter": {"colour": "red"}})), ErrorCode::Validation);
    // Nothing yet: an empty page, and a CSV with only its header.
    assert_eq!(a.rows(json!({})), Vec::<Value>::new());
    let export = a.t.ok("aiActivity.export", json!({"filter": {"projectId": a.project}}));
    assert_eq!(export["nRows"], 0);
    assert_eq!(export["csv"].as_str().unwrap().lines().count(), 1);
}

#[test]
fn an_export_carries_the_audit_records_and_importing_them_rebuilds_the_activity_index() {
    let a = setup();
    let rejected = a.proposes("p1", "处处闻啼鸟", "处处闻鸟啼");
    a.t.ok("proposal.reject", json!({"proposalId": rejected, "reason": "保持原样"}));
    let before = a.rows(json!({}));
    assert_eq!(before.len(), 1);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("export");
    a.t.ok("export.run", json!({"path": path.display().to_string()}));
    // The index is not in the export: it is derived, not recorded twice.
    let files: Vec<String> = walk(&path).into_iter().map(|p| p.strip_prefix(&path).unwrap().display().to_string()).collect();
    assert!(files.iter().any(|f| f == "proposals/audit.jsonl"), "{files:?}");
    assert!(!files.iter().any(|f| f.contains("index") && f.contains("audit")), "{files:?}");
    let target = TestEngine::new();
    target.ok("import.run", json!({"path": path.display().to_string()}));
    let after = target.ok("aiActivity.list", json!({}))["rows"].as_array().unwrap().clone();
    let strip = |rows: &[Value]| rows.iter().map(|r| (r["proposalId"].clone(), r["reason"].clone(), r["tokens"].clone(), r["model"].clone())).collect::<Vec<_>>();
    assert_eq!(strip(&after), strip(&before));
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}
