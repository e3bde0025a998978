//! `inkstone-cli ai-activity …` through the real binary: an accepted and a rejected AI
//! proposal listed with who, why and which model; the filters; the CSV file with its
//! BOM; bad filters refused with exit code 1.

use inkstone_api::proposals::{self, Edit, NewProposal, Origin, Payload, ProposalKind, Target};
use inkstone_api::{Engine, EngineConfig};
use serde_json::Value;

use crate::{json_ok, run, stdout};

fn seed(data: &std::path::Path, project_id: &str, find: &str, replace: &str) -> String {
    let engine = Engine::open(EngineConfig::new(data.to_path_buf(), "test")).unwrap();
    let project = inkstone_api::project::load(engine.store(), project_id).unwrap();
    let proposed = proposals::apply_edits(&project.source, &[Edit { find: find.into(), replace: replace.into() }]).unwrap();
    let origin = Origin {
        session_id: Some("ses_cli".into()),
        model: "scripted-model".into(),
        profile_id: "llm_x".into(),
        prompt_version: "drafting@1".into(),
        prompt_layers: vec!["core-identity@v1".into(), "mode.drafting@v1".into()],
        ..Origin::default()
    };
    let new = NewProposal {
        project_id: project_id.to_owned(),
        kind: ProposalKind::SourcePatch,
        target: Target::Source,
        summary: format!("{find} → {replace}"),
        payload: Payload::Text { base_text: project.source, proposed_text: proposed },
        origin,
    };
    proposals::create(engine.kernel(), new).unwrap().id
}

#[test]
fn list_filter_and_export_ai_changes() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let source = data.join("a.md");
    std::fs::write(&source, "今天天气很好。\n\n我们去公园散步。\n").unwrap();
    let project = json_ok(data, &["project", "create", "春天", "--source-file", source.to_str().unwrap()])["id"].as_str().unwrap().to_owned();
    assert_eq!(stdout(&run(data, &["ai-activity", "list"])), "No AI changes match.\n");

    let rejected = seed(data, &project, "很好", "不错");
    run(data, &["proposal", "reject", &rejected, "--reason", "=保持原样, 谢谢"]);
    let accepted = seed(data, &project, "公园", "湖边");
    let revision = json_ok(data, &["project", "show", &project])["revision"].to_string();
    run(data, &["proposal", "accept", &accepted, "--base", &revision]);

    let listed = stdout(&run(data, &["ai-activity", "list"]));
    let lines: Vec<&str> = listed.lines().collect();
    assert!(lines[0].contains("accepted  v1  春天") && lines[0].contains(&accepted) && lines[0].contains("1 hunks"), "{listed}");
    assert!(listed.contains("via session ses_cli; model scripted-model"), "{listed}");
    assert!(listed.contains("prompts core-identity@v1, mode.drafting@v1"), "{listed}");
    assert!(listed.contains("reason: =保持原样, 谢谢"), "{listed}");
    let rows = json_ok(data, &["ai-activity", "list", "--decision", "rejected"])["rows"].as_array().unwrap().clone();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["proposalId"], Value::from(rejected.clone()));
    let actor = rows[0]["actor"].as_str().unwrap().to_owned();
    assert_eq!(json_ok(data, &["ai-activity", "list", "--person", &actor, "--project", &project])["rows"].as_array().unwrap().len(), 2);
    assert_eq!(json_ok(data, &["ai-activity", "list", "--model", "other"])["rows"].as_array().unwrap().len(), 0);
    assert_eq!(json_ok(data, &["ai-activity", "list", "--since", "2999-01-01"])["rows"].as_array().unwrap().len(), 0);
    assert_eq!(json_ok(data, &["ai-activity", "list", "--since", "2000-01-01"])["rows"].as_array().unwrap().len(), 2);

    let file = data.join("活动.csv");
    let wrote = stdout(&run(data, &["ai-activity", "export", file.to_str().unwrap()]));
    assert_eq!(wrote, format!("Wrote 2 AI changes to {}\n", file.display()));
    let bytes = std::fs::read(&file).unwrap();
    assert!(bytes.starts_with(b"\xEF\xBB\xBF"), "UTF-8 with a BOM");
    let mut reader = csv::Reader::from_reader(&bytes[3..]);
    let header = reader.headers().unwrap().clone();
    let records: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(records.len(), 2);
    let reason = header.iter().position(|h| h == "reason").unwrap();
    assert_eq!(&records[1][reason], "'=保持原样, 谢谢", "quoted whole, and a formula-like cell defused");

    for bad in [vec!["ai-activity", "list", "--decision", "maybe"], vec!["ai-activity", "list", "--since", "yesterday"], vec!["ai-activity", "list", "--project", "prj_nope"]] {
        let out = run(data, &bad);
        assert_eq!(out.status.code(), Some(1), "{bad:?}");
        let error: Value = serde_json::from_slice(&out.stderr).unwrap();
        assert!(matches!(error["code"].as_str(), Some("VALIDATION" | "NOT_FOUND")), "{bad:?}: {error}");
    }
}

/// `ai-activity list|export --workspace`: a member's accepted AI change, pushed while the
/// workspace shares activity, listed and exported from the owner's data folder with the
/// member's name and the model; not connected, it says to connect.
#[test]
fn the_workspace_scope_lists_and_exports_a_members_ai_changes() {
    use super::sync::Server;
    use inkstone_server::proto::Role;
    use inkstone_server::storage::Storage;
    use std::io::Write;

    let server_dir = tempfile::tempdir().unwrap();
    let server = Server::start(server_dir.path());
    let (ws, olive) = server.storage.create_workspace("团队", "olive").unwrap();
    let bob = server.storage.invite(&ws, "bob", Role::Editor).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));

    let out = run(&a, &["--json", "ai-activity", "list", "--workspace"]);
    assert_eq!(out.status.code(), Some(1));
    let error: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!((error["code"].as_str(), error["hints"][0]["id"].as_str()), (Some("CONFLICT"), Some("connect")), "{error}");
    if std::env::var("INKSTONE_TEST_SECRET_SERVICE").as_deref() != Ok("1") {
        return;
    }
    let connect = |data: &std::path::Path, token: &str| {
        let mut child = crate::cli(data)
            .args(["sync", "connect", &server.url])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(format!("{token}\n").as_bytes()).unwrap();
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    };
    connect(&a, &olive.token);
    json_ok(&a, &["sync", "policy", "set", "--providers", "any", "--performance-context", "on", "--share-activity", "on"]);
    connect(&b, &bob.token);
    json_ok(&b, &["sync", "pull"]);
    let source = dir.path().join("s.md");
    std::fs::write(&source, "今天天气很好。\n").unwrap();
    let project = json_ok(&b, &["project", "create", "春天", "--source-file", source.to_str().unwrap()])["id"].as_str().unwrap().to_owned();
    let accepted = seed(&b, &project, "很好", "不错");
    let revision = json_ok(&b, &["project", "show", &project])["revision"].to_string();
    run(&b, &["proposal", "accept", &accepted, "--base", &revision]);
    json_ok(&b, &["sync", "push"]);

    let listed = stdout(&run(&a, &["ai-activity", "list", "--workspace"]));
    assert!(listed.contains("server v") && listed.contains(&accepted) && listed.contains("by bob"), "{listed}");
    assert!(listed.contains("model scripted-model"), "{listed}");
    assert_eq!(json_ok(&a, &["ai-activity", "list", "--workspace", "--person", "olive"])["rows"].as_array().unwrap().len(), 0);
    let file = dir.path().join("团队.csv");
    let wrote = stdout(&run(&a, &["ai-activity", "export", file.to_str().unwrap(), "--workspace"]));
    assert_eq!(wrote, format!("Wrote 1 AI changes to {}\n", file.display()));
    let bytes = std::fs::read(&file).unwrap();
    assert!(bytes.starts_with(b"\xEF\xBB\xBF") && String::from_utf8_lossy(&bytes).contains("bob"));
}
