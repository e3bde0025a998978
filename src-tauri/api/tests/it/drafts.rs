//! Saved platform drafts: revisions, the source and profile they came from, hand edits
//! that a recompile never overwrites silently, statuses, and read-only `publishing`.

use inkstone_api::{Engine, EngineConfig, ErrorCode};
use inkstone_test_support::TestEngine;
use serde_json::{json, Value};

const SOURCE: &str = "# 春天\n\n第一段文字，写给早起的人。\n\nA second paragraph in English with a link https://example.com/spring .\n";

fn project(t: &TestEngine) -> String {
    t.ok("project.create", json!({"title": "春天来了", "source": SOURCE, "platforms": ["wechat", "x", "xiaohongshu"]}))["id"].as_str().unwrap().to_owned()
}

fn err(t: &TestEngine, method: &str, params: Value) -> inkstone_api::ApiError {
    t.engine.call(method, params).expect_err("call should fail")
}

fn save(t: &TestEngine, id: &str, platform: &str) -> Value {
    t.ok("platformDraft.save", json!({"projectId": id, "platform": platform}))
}

fn get(t: &TestEngine, id: &str, platform: &str) -> Value {
    t.ok("platformDraft.get", json!({"projectId": id, "platform": platform}))
}

fn x_posts(texts: &[&str]) -> Value {
    json!({"type": "thread", "posts": texts.iter().map(|t| json!({"text": t, "weightedLength": 0})).collect::<Vec<_>>()})
}

#[test]
fn a_saved_draft_records_its_revision_source_and_profile() {
    let t = TestEngine::new();
    let id = project(&t);
    t.ok("version.create", json!({"projectId": id, "message": "first"}));
    let first = save(&t, &id, "wechat");
    assert_eq!(first["outcome"], "created");
    let draft = &first["draft"];
    assert_eq!(draft["revision"], 1);
    assert_eq!(draft["status"], "draft");
    assert_eq!(draft["profileId"], "wechat@draft-v1");
    assert_eq!(draft["sourceVersion"], 1);
    assert_eq!(draft["handEdited"], false);
    let source_revision = draft["sourceRevision"].as_u64().unwrap();
    assert_eq!(draft["content"], first["compiled"]["draft"]["content"]);
    assert!(draft["content"]["html"].as_str().unwrap().contains("第一段文字"));

    assert_eq!(save(&t, &id, "wechat")["outcome"], "unchanged", "the same source compiles to the same draft");
    assert_eq!(get(&t, &id, "wechat")["revision"], 1);

    t.ok("project.update", json!({"projectId": id, "source": format!("{SOURCE}\n新的一段。\n")}));
    let second = save(&t, &id, "wechat");
    assert_eq!(second["outcome"], "updated");
    assert_eq!(second["draft"]["revision"], 2);
    assert!(second["draft"]["sourceRevision"].as_u64().unwrap() > source_revision);
    assert!(second["draft"]["content"]["html"].as_str().unwrap().contains("新的一段"));

    let list = t.ok("platformDraft.list", json!({"projectId": id}));
    assert_eq!(list["drafts"].as_array().unwrap().len(), 1);
    assert_eq!(list["sourceRevision"], second["draft"]["sourceRevision"]);
}

#[test]
fn a_recompile_shows_the_difference_instead_of_overwriting_hand_edits() {
    let t = TestEngine::new();
    let id = project(&t);
    save(&t, &id, "x");
    let edited = t.ok("platformDraft.edit", json!({"projectId": id, "platform": "x", "baseRevision": 1, "content": x_posts(&["我亲手改过的第一条。", "第二条"])}));
    assert_eq!(edited["draft"]["revision"], 2);
    assert_eq!(edited["draft"]["handEdited"], true);
    assert_eq!(edited["draft"]["content"]["posts"][0]["weightedLength"], 20, "lengths are recomputed, whatever the caller sent");

    let before = get(&t, &id, "x");
    let choice = save(&t, &id, "x");
    assert_eq!(choice["outcome"], "needsChoice");
    assert_eq!(get(&t, &id, "x"), before, "nothing was written");
    let diff = serde_json::to_string(&choice["diff"]).unwrap();
    assert!(diff.contains("我亲手改过的第一条") && diff.contains("第一段文字"), "the difference shows both sides: {diff}");

    let stale = err(&t, "platformDraft.save", json!({"projectId": id, "platform": "x", "replaceRevision": 1}));
    assert_eq!(stale.code, ErrorCode::Conflict);
    assert_eq!(get(&t, &id, "x"), before);

    let replaced = t.ok("platformDraft.save", json!({"projectId": id, "platform": "x", "replaceRevision": 2}));
    assert_eq!(replaced["outcome"], "updated");
    assert_eq!(replaced["draft"]["revision"], 3);
    assert_eq!(replaced["draft"]["handEdited"], false);
    assert_eq!(replaced["draft"]["content"], replaced["compiled"]["draft"]["content"]);
}

#[test]
fn a_publishing_draft_is_read_only_until_its_status_changes() {
    let t = TestEngine::new();
    let id = project(&t);
    save(&t, &id, "xiaohongshu");
    let ready = t.ok("platformDraft.setStatus", json!({"projectId": id, "platform": "xiaohongshu", "status": "ready"}));
    assert_eq!((ready["status"].as_str(), ready["revision"].as_u64()), (Some("ready"), Some(2)));
    let publishing = t.ok("platformDraft.setStatus", json!({"projectId": id, "platform": "xiaohongshu", "status": "publishing", "baseRevision": 2}));
    assert_eq!(publishing["revision"], 3);

    let before = get(&t, &id, "xiaohongshu");
    let card = json!({"type": "card", "body": "改一下", "tags": ["春天"]});
    let refused = err(&t, "platformDraft.edit", json!({"projectId": id, "platform": "xiaohongshu", "baseRevision": 3, "content": card}));
    assert_eq!(refused.code, ErrorCode::ReadOnly);
    assert!(!refused.hints.is_empty());
    t.ok("project.update", json!({"projectId": id, "source": "全新的内容。"}));
    assert_eq!(err(&t, "platformDraft.save", json!({"projectId": id, "platform": "xiaohongshu"})).code, ErrorCode::ReadOnly);
    assert_eq!(get(&t, &id, "xiaohongshu"), before, "a publishing draft changes only by its status");

    t.ok("platformDraft.setStatus", json!({"projectId": id, "platform": "xiaohongshu", "status": "published"}));
    let edited = t.ok("platformDraft.edit", json!({"projectId": id, "platform": "xiaohongshu", "baseRevision": 4, "content": card}));
    assert_eq!(edited["draft"]["content"]["body"], "改一下");
    assert_eq!(edited["draft"]["status"], "published");

    let stale = err(&t, "platformDraft.setStatus", json!({"projectId": id, "platform": "xiaohongshu", "status": "draft", "baseRevision": 1}));
    assert_eq!(stale.code, ErrorCode::Conflict);
    let activity = serde_json::to_string(&t.ok("activity.list", json!({"limit": 100}))).unwrap();
    assert!(activity.contains("draft_status_changed") && activity.contains("draft_saved"), "{activity}");
}

#[test]
fn bad_edits_are_refused_and_change_nothing() {
    let t = TestEngine::new();
    let id = project(&t);
    save(&t, &id, "x");
    let before = get(&t, &id, "x");
    let wrong_kind = err(&t, "platformDraft.edit", json!({"projectId": id, "platform": "x", "baseRevision": 1, "content": {"type": "markdown", "markdown": "x"}}));
    assert_eq!(wrong_kind.code, ErrorCode::Validation);
    let stale = err(&t, "platformDraft.edit", json!({"projectId": id, "platform": "x", "baseRevision": 7, "content": x_posts(&["a"])}));
    assert_eq!(stale.code, ErrorCode::Conflict);
    let two_lines = err(&t, "platformDraft.edit", json!({"projectId": id, "platform": "x", "baseRevision": 1, "title": "a\nb"}));
    assert_eq!(two_lines.code, ErrorCode::Validation);
    let unknown = err(&t, "platformDraft.edit", json!({"projectId": id, "platform": "x", "baseRevision": 1, "body": "x"}));
    assert_eq!(unknown.code, ErrorCode::Validation);
    assert_eq!(get(&t, &id, "x"), before);
    assert_eq!(err(&t, "platformDraft.get", json!({"projectId": id, "platform": "zhihu"})).code, ErrorCode::NotFound);
    assert_eq!(err(&t, "platformDraft.save", json!({"projectId": "prj_missing", "platform": "x"})).code, ErrorCode::NotFound);
}

#[test]
fn a_hand_edit_reports_the_limits_it_breaks() {
    let t = TestEngine::new();
    let id = project(&t);
    save(&t, &id, "x");
    let long = "长".repeat(141);
    let edited = t.ok("platformDraft.edit", json!({"projectId": id, "platform": "x", "baseRevision": 1, "content": x_posts(&["短的。", &long])}));
    assert_eq!(edited["draft"]["content"]["posts"][1]["weightedLength"], 282);
    let findings = edited["findings"].as_array().unwrap();
    assert!(findings.iter().any(|f| f["check"] == "limit.post" && f["location"] == "post 2"), "{findings:?}");
    assert!(!findings.iter().any(|f| f["location"] == "post 1"));
}

#[test]
fn a_draft_made_with_a_user_override_names_that_version() {
    let t = TestEngine::new();
    let dir = t.data_dir().join("profiles");
    std::fs::create_dir_all(&dir).unwrap();
    let builtin = std::fs::read_to_string(inkstone_test_support::fixtures_dir().join("../../profiles/draft/x@draft-v1.toml")).unwrap();
    std::fs::write(dir.join("x@draft-v1.toml"), builtin.replacen("platform = \"x\"", "platform = \"x\"\noverride = 2", 1)).unwrap();
    let id = project(&t);
    assert_eq!(save(&t, &id, "x")["draft"]["profileId"], "x@draft-v1+local.2");
}

#[test]
fn drafts_survive_a_reopen_and_an_export_round_trip() {
    let t = TestEngine::new();
    let id = project(&t);
    save(&t, &id, "wechat");
    t.ok("platformDraft.edit", json!({"projectId": id, "platform": "wechat", "baseRevision": 1, "title": "改过的标题"}));
    t.ok("platformDraft.setStatus", json!({"projectId": id, "platform": "wechat", "status": "ready"}));
    let saved = get(&t, &id, "wechat");
    let out = tempfile::tempdir().unwrap();
    let folder = out.path().join("export");
    let manifest = t.ok("export.run", json!({"path": folder}));
    assert_eq!(manifest["manifest"]["counts"]["platformDrafts"], 1);

    let data_dir = t.dir.path().to_path_buf();
    drop(t.engine);
    let engine = Engine::open(EngineConfig::for_tests(&data_dir)).unwrap();
    assert_eq!(engine.call("platformDraft.get", json!({"projectId": id, "platform": "wechat"})).unwrap(), saved);
    drop(engine);

    let other = TestEngine::new();
    other.ok("import.run", json!({"path": folder}));
    assert_eq!(other.ok("platformDraft.get", json!({"projectId": id, "platform": "wechat"})), saved);
}

#[test]
fn a_saved_draft_is_listed_with_its_own_texts_findings() {
    let t = TestEngine::new();
    let id = project(&t);
    save(&t, &id, "x");
    save(&t, &id, "xiaohongshu");
    let own = |list: &Value, platform: &str| -> Vec<String> {
        let entry = list["findings"].as_array().unwrap().iter().find(|f| f["platform"] == platform).unwrap_or_else(|| panic!("no findings entry for {platform}: {list}"));
        entry["findings"].as_array().unwrap().iter().map(|f| f["check"].as_str().unwrap().to_owned()).collect()
    };
    let list = t.ok("platformDraft.list", json!({"projectId": id}));
    assert_eq!(list["findings"].as_array().unwrap().len(), 2, "one entry per saved draft");
    assert!(own(&list, "x").is_empty(), "the clean compile breaks nothing: {list}");

    // A hand edit that brings in an absolute term: the edit's answer and the list both
    // carry it, though the source has none.
    let edited = t.ok("platformDraft.edit", json!({"projectId": id, "platform": "x", "baseRevision": 1, "content": x_posts(&["全网最佳的春天。"])}));
    let checks: Vec<&str> = edited["findings"].as_array().unwrap().iter().map(|f| f["check"].as_str().unwrap()).collect();
    assert!(checks.contains(&"ad_law"), "{edited}");
    assert!(edited["findings"].as_array().unwrap().iter().all(|f| f["span"].is_null()), "no span points into the source: {edited}");
    let list = t.ok("platformDraft.list", json!({"projectId": id}));
    assert!(own(&list, "x").contains(&"ad_law".to_owned()), "{list}");
    let source = t.ok("pipeline.compile", json!({"projectId": id}));
    assert!(!serde_json::to_string(&source["findings"]).unwrap().contains("ad_law"), "the source itself is clean");

    // An emptied body is kept (the autosave of someone retyping), and says so.
    let card = json!({"type": "card", "body": "  \n", "tags": ["春天"]});
    let emptied = t.ok("platformDraft.edit", json!({"projectId": id, "platform": "xiaohongshu", "baseRevision": 1, "content": card}));
    assert_eq!(emptied["draft"]["revision"], 2);
    let empty = emptied["findings"].as_array().unwrap().iter().find(|f| f["check"] == "draft.empty").unwrap_or_else(|| panic!("{emptied}"));
    assert_eq!((empty["severity"].as_str(), empty["messageId"].as_str(), empty["location"].as_str()), (Some("warn"), Some("draft.empty"), Some("body")));
    assert!(own(&t.ok("platformDraft.list", json!({"projectId": id})), "xiaohongshu").contains(&"draft.empty".to_owned()));
    let thread = t.ok("platformDraft.edit", json!({"projectId": id, "platform": "x", "baseRevision": 2, "content": x_posts(&[" "])}));
    assert!(thread["findings"].as_array().unwrap().iter().any(|f| f["check"] == "draft.empty"), "{thread}");
}
