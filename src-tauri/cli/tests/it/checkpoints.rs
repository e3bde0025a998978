//! `inkstone-cli checkpoint …`, `constraint …` and the staging commands of `session`
//! through the real binary: a checkpoint restored as new versions, the staged set's
//! views, and refusals with exit code 1.

use serde_json::Value;

use crate::{json_ok, run, stdout};

#[test]
fn checkpoints_constraints_and_staging_through_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let source = data.join("spring.md");
    std::fs::write(&source, "第一稿。\n").unwrap();
    // No model is called: the profile only has to exist for the session.
    json_ok(data, &["profile", "add", "--name", "local", "--base-url", "http://127.0.0.1:9/v1", "--model", "fake-model", "--no-key"]);
    let project = json_ok(data, &["project", "create", "春天", "--source-file", source.to_str().unwrap()])["id"].as_str().unwrap().to_owned();
    run(data, &["version", "create", &project]);
    let session = stdout(&run(data, &["session", "new", &project])).trim().to_owned();

    let created = stdout(&run(data, &["checkpoint", "create", &session, "第一稿之后"]));
    assert!(created.starts_with("Created checkpoint chk_") && created.contains("(v1, event 1)"), "{created}");
    let listed = json_ok(data, &["checkpoint", "list", &session]);
    let checkpoint = listed["checkpoints"][0]["id"].as_str().unwrap().to_owned();
    assert!(stdout(&run(data, &["checkpoint", "list", &session])).contains("第一稿之后"));

    std::fs::write(&source, "第二稿，没保存。\n").unwrap();
    json_ok(data, &["project", "update", &project, "--source-file", source.to_str().unwrap()]);
    let restored = stdout(&run(data, &["checkpoint", "restore", &session, &checkpoint]));
    assert_eq!(restored, format!("Unsaved changes kept as version 2\nRestored checkpoint {checkpoint} as version 3\n"));
    assert_eq!(json_ok(data, &["project", "show", &project])["source"], "第一稿。\n");
    let versions = stdout(&run(data, &["version", "list", &project]));
    assert!(versions.starts_with("v3") && versions.contains(&format!("checkpoint {checkpoint}")) && versions.contains("autosnapshot"), "{versions}");
    let events = stdout(&run(data, &["session", "events", &session]));
    let last: Value = serde_json::from_str(events.lines().last().unwrap()).unwrap();
    assert_eq!((last["kind"].as_str(), last["payload"]["version"].as_u64()), (Some("rewound"), Some(3)));

    assert_eq!(stdout(&run(data, &["session", "staging", &session])), "Nothing is staged.\n");
    assert_eq!(json_ok(data, &["session", "staging", &session])["effectiveSource"], "第一稿。\n");
    assert_eq!(stdout(&run(data, &["session", "discard-staging", &session])), "Nothing was staged.\n");
    let nothing = run(data, &["session", "apply-staging", &session]);
    assert_eq!(nothing.status.code(), Some(1));
    let error: Value = serde_json::from_slice(&nothing.stderr).unwrap();
    assert_eq!((error["code"].as_str(), error["hints"][0]["id"].as_str()), (Some("CONFLICT"), Some("stage")));
    let missing = run(data, &["session", "stage", &session, "prp_nope"]);
    assert_eq!(serde_json::from_slice::<Value>(&missing.stderr).unwrap()["code"], "NOT_FOUND");

    assert_eq!(stdout(&run(data, &["constraint", "list", &session])), "No constraints.\n");
    let gone = run(data, &["constraint", "remove", &session, "cns_nope"]);
    assert_eq!(gone.status.code(), Some(1));
    assert_eq!(serde_json::from_slice::<Value>(&gone.stderr).unwrap()["code"], "NOT_FOUND");
    let bad = run(data, &["checkpoint", "restore", &session, "chk_nope"]);
    assert_eq!(serde_json::from_slice::<Value>(&bad.stderr).unwrap()["code"], "NOT_FOUND");
    assert_eq!(run(data, &["checkpoint", "create", &session]).status.code(), Some(2), "a label is required");
}

/// The engine gives an action (the hint `stage` with the session); the CLI words it as
/// the command to run, where the window says it in its own words.
#[test]
fn the_cli_words_the_engines_actions_as_commands() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    json_ok(data, &["profile", "add", "--name", "local", "--base-url", "http://127.0.0.1:9/v1", "--model", "fake-model", "--no-key"]);
    let project = json_ok(data, &["project", "create", "春天"])["id"].as_str().unwrap().to_owned();
    let session = stdout(&run(data, &["session", "new", &project])).trim().to_owned();
    let nothing = run(data, &["session", "apply-staging", &session]);
    let error: Value = serde_json::from_slice(&nothing.stderr).unwrap();
    let hint = &error["hints"][0];
    assert_eq!((hint["id"].as_str(), hint["params"]["session"].as_str()), (Some("stage"), Some(session.as_str())));
    assert_eq!(hint["message"].as_str(), Some(format!("Stage a proposal first (`inkstone-cli session stage {session} <proposal>`).").as_str()));
}
