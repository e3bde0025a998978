//! `inkstone-cli optimize …` through the real binary against the scripted model
//! server: the run prints NDJSON events then the run; `show` prints each target's
//! summary and fit; `apply --platform` takes one platform, `--source` the source.

use inkstone_test_support::model_server::{ModelServer, Reply};
use serde_json::{json, Value};

use crate::{json_ok, run, stdout};

fn ndjson(text: &str) -> Vec<Value> {
    text.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect()
}

#[test]
fn optimize_prints_progress_then_the_run_and_applies_per_platform() {
    let source = "# 周报\n\n很多人的周报写得很长。\n\n先写结论。\n";
    let replies = vec![
        Reply::text(&json!({"summary": "s", "changes": ["a sharper first line"], "platforms": []}).to_string()),
        Reply::text(&json!({"source": "# 周报\n\n周报越长，越没人读。\n\n先写结论。\n", "titles": [], "summary": "Strengthened the opening."}).to_string()),
        Reply::text(&json!({"text": "周报越长，越没人读。\n\n---\n\n先写结论。", "summary": "Compressed the thread to 2 posts."}).to_string()),
    ];
    let server = ModelServer::start(replies);
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let file = data.join("a.md");
    std::fs::write(&file, source).unwrap();
    json_ok(data, &["profile", "add", "--name", "local", "--base-url", &server.base_url(), "--model", "fake-model", "--no-key"]);
    let project = json_ok(data, &["project", "create", "周报", "--source-file", file.to_str().unwrap(), "--platform", "x"])["id"].as_str().unwrap().to_owned();
    json_ok(data, &["draft", "save", &project, "--platform", "x"]);

    let out = run(data, &["optimize", &project, "--platform", "x", "--goal", "completion", "--intensity", "conservative", "--keep-title"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let lines = ndjson(&stdout(&out));
    assert_eq!(lines[0]["kind"], "run_started");
    assert!(lines.iter().any(|l| l["kind"] == "run_stage" && l["payload"]["stage"] == "strategy"));
    let last = lines.last().unwrap();
    assert_eq!(last["type"], "result");
    let run_id = last["data"]["id"].as_str().unwrap().to_owned();
    assert_eq!(last["data"]["status"], "ready");
    assert_eq!(last["data"]["input"]["constraints"]["keepTitle"], true);

    let shown = stdout(&run(data, &["optimize", "show", &run_id]));
    assert!(shown.contains("[x] pending") && shown.contains("Compressed the thread") && shown.contains("fit "), "{shown}");

    let applied = stdout(&run(data, &["optimize", "apply", &run_id, "--platform", "x"]));
    assert!(applied.contains("x: applied draft revision 2"), "{applied}");
    let applied = stdout(&run(data, &["optimize", "apply", &run_id, "--source"]));
    assert!(applied.contains("source: applied version 1") && applied.contains("is applied"), "{applied}");
    let bad = run(data, &["optimize", "apply", "run_nope"]);
    assert_eq!(bad.status.code(), Some(1));
    assert_eq!(serde_json::from_slice::<Value>(&bad.stderr).unwrap()["code"], "NOT_FOUND");
}
