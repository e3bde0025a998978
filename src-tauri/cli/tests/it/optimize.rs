//! `inkstone-cli optimize …` through the real binary against the scripted model
//! server: the run prints NDJSON events then the run; `show` prints each target's
//! summary and fit; `apply --platform` takes one platform, `--source` the source;
//! `resume` carries on a run whose process was killed.

use inkstone_test_support::model_server::{ModelServer, Reply};
use serde_json::{json, Value};

use crate::{cli, json_ok, run, stdout};

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

#[test]
fn a_run_whose_process_was_killed_is_interrupted_and_resumes() {
    let strategy = Reply::text(&json!({"summary": "s", "changes": ["a sharper first line"], "platforms": []}).to_string());
    let source =
        Reply::text(&json!({"source": "# 周报\n\n周报越长，越没人读。\n\n先写结论。\n", "titles": ["周报写短的办法"], "summary": "Strengthened the opening."}).to_string());
    let thread = || Reply::text(&json!({"text": "周报越长，越没人读。\n\n---\n\n先写结论。", "summary": "Compressed the thread to 2 posts."}).to_string());
    let server = ModelServer::start(vec![strategy, source, Reply::delayed(std::time::Duration::from_secs(60), thread())]);
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let file = data.join("a.md");
    std::fs::write(&file, "# 周报\n\n很多人的周报写得很长。\n\n先写结论。\n").unwrap();
    json_ok(data, &["profile", "add", "--name", "local", "--base-url", &server.base_url(), "--model", "fake-model", "--no-key"]);
    let project = json_ok(data, &["project", "create", "周报", "--source-file", file.to_str().unwrap(), "--platform", "x"])["id"].as_str().unwrap().to_owned();
    json_ok(data, &["draft", "save", &project, "--platform", "x"]);

    // The optimization's process dies while the model writes the x thread.
    let mut child = cli(data).args(["optimize", &project]).stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null()).spawn().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while server.chat_requests().len() < 3 {
        assert!(std::time::Instant::now() < deadline && child.try_wait().unwrap().is_none(), "the run never reached the x step");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // Past the group commit (1 s), so the replies received are on disk.
    std::thread::sleep(std::time::Duration::from_millis(2_500));
    child.kill().unwrap();
    child.wait().unwrap();

    let runs = json_ok(data, &["optimize", "list", &project]);
    let run_id = runs["runs"][0]["id"].as_str().unwrap().to_owned();
    assert_eq!(runs["runs"][0]["status"], "interrupted", "{runs:#}");
    let shown = stdout(&run(data, &["optimize", "show", &run_id]));
    assert!(shown.contains("interrupted  stage platform:x") && shown.contains("hint: Resume it"), "{shown}");

    server.push(thread());
    let out = run(data, &["optimize", "resume", &run_id]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let lines = ndjson(&stdout(&out));
    assert!(lines.iter().any(|l| l["kind"] == "run_stage" && l["payload"]["stage"] == "resume"));
    let last = lines.last().unwrap();
    assert_eq!(last["data"]["status"], "ready", "{last:#}");
    assert_eq!(last["data"]["titles"], json!(["周报写短的办法"]));
    assert_eq!(server.chat_requests().len(), 4, "only the x step asked the model again");

    let again = run(data, &["optimize", "resume", &run_id]);
    assert_eq!(again.status.code(), Some(1));
    assert_eq!(serde_json::from_slice::<Value>(&again.stderr).unwrap()["code"], "CONFLICT");
}
