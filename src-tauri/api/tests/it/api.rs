//! The API's behaviour: projects, versions, conflicts, restore, diff, comments, errors.

use inkstone_api::{Engine, EngineConfig, ErrorCode};
use inkstone_test_support::TestEngine;
use serde_json::{json, Value};

fn create_project(t: &TestEngine, title: &str, source: &str) -> String {
    t.ok("project.create", json!({"title": title, "source": source}))["id"].as_str().unwrap().to_owned()
}

fn err(t: &TestEngine, method: &str, params: Value) -> inkstone_api::ApiError {
    t.engine.call(method, params).expect_err("call should fail")
}

/// Everything the store holds, as JSON, to prove a refused call changed nothing.
fn everything(t: &TestEngine) -> Value {
    let projects = t.ok("project.list", json!({"includeArchived": true}));
    let mut versions = Vec::new();
    for project in projects["projects"].as_array().unwrap() {
        versions.push(t.ok("version.list", json!({"projectId": project["id"]})));
        versions.push(t.ok("project.get", json!({"projectId": project["id"]})));
        versions.push(t.ok("comment.list", json!({"projectId": project["id"]})));
    }
    json!({"projects": projects, "versions": versions, "activity": t.ok("activity.list", json!({"limit": 1000}))})
}

#[test]
fn versions_are_numbered_per_project_from_one() {
    let t = TestEngine::new();
    let a = create_project(&t, "A", "a1");
    let b = create_project(&t, "B", "b1");
    let numbers: Vec<u64> = [&a, &b, &a, &a, &b].iter().map(|id| t.ok("version.create", json!({"projectId": id}))["number"].as_u64().unwrap()).collect();
    assert_eq!(numbers, vec![1, 1, 2, 3, 2]);
    let listed: Vec<u64> = t.ok("version.list", json!({"projectId": a}))["versions"].as_array().unwrap().iter().map(|v| v["number"].as_u64().unwrap()).collect();
    assert_eq!(listed, vec![3, 2, 1], "newest first");
    assert_eq!(t.ok("project.get", json!({"projectId": a}))["head"], 3);
}

#[test]
fn a_version_snapshots_the_working_copy_and_is_immutable() {
    let t = TestEngine::new();
    let id = create_project(&t, "春天", "第一稿");
    let v1 = t.ok("version.create", json!({"projectId": id, "message": "初稿"}));
    assert_eq!(v1["origin"], json!({"type": "manual"}));
    assert_eq!(v1["author"], "Tester");
    t.ok("project.update", json!({"projectId": id, "source": "第二稿", "title": "夏天"}));
    let again = t.ok("version.get", json!({"projectId": id, "number": 1}));
    assert_eq!((again["title"].as_str(), again["source"].as_str(), again["message"].as_str()), (Some("春天"), Some("第一稿"), Some("初稿")));
    assert_eq!(again, v1);
}

#[test]
fn update_with_a_stale_base_revision_is_a_conflict_and_changes_nothing() {
    let t = TestEngine::new();
    let id = create_project(&t, "T", "one");
    let p1 = t.ok("project.update", json!({"projectId": id, "baseRevision": 1, "source": "two"}));
    assert_eq!(p1["revision"], 2);
    let before = everything(&t);
    let error = err(&t, "project.update", json!({"projectId": id, "baseRevision": 1, "source": "from another tab"}));
    assert_eq!(error.code, ErrorCode::Conflict);
    let details = error.details.clone().unwrap();
    assert_eq!((details["baseRevision"].as_u64(), details["currentRevision"].as_u64()), (Some(1), Some(2)));
    assert_eq!(details["current"]["source"], "two", "the conflict carries the current text so the UI can show both");
    assert_eq!(error.hints[0].id, "reload_and_merge");
    let wire = serde_json::to_value(&error).unwrap();
    assert_eq!(
        (wire["messageId"].as_str(), wire["params"]["current"].as_str(), wire["params"]["base"].as_str()),
        (Some("project.changed"), Some("2"), Some("1")),
        "the UI words this conflict in the person's language"
    );
    assert_eq!(everything(&t), before);
    // Without a base revision the write goes through (last writer wins by choice).
    assert_eq!(t.ok("project.update", json!({"projectId": id, "source": "three"}))["revision"], 3);
}

#[test]
fn an_update_that_changes_nothing_keeps_the_revision() {
    let t = TestEngine::new();
    let id = create_project(&t, "T", "same");
    assert_eq!(t.ok("project.update", json!({"projectId": id, "baseRevision": 1, "source": "same"}))["revision"], 1);
}

#[test]
fn restore_without_unsaved_changes_makes_one_new_version() {
    let t = TestEngine::new();
    let id = create_project(&t, "T", "v1 text");
    t.ok("version.create", json!({"projectId": id}));
    t.ok("project.update", json!({"projectId": id, "source": "v2 text"}));
    t.ok("version.create", json!({"projectId": id}));
    let result = t.ok("version.restore", json!({"projectId": id, "number": 1}));
    assert_eq!(result["autosnapshot"], Value::Null);
    assert_eq!(result["restored"]["number"], 3);
    assert_eq!(result["restored"]["origin"], json!({"type": "restore", "from": 1}));
    assert_eq!(result["project"]["source"], "v1 text");
    assert_eq!(result["project"]["head"], 3);
    let v3 = t.ok("version.get", json!({"projectId": id, "number": 3}));
    let v1 = t.ok("version.get", json!({"projectId": id, "number": 1}));
    assert_eq!(v3["contentHash"], v1["contentHash"]);
}

#[test]
fn restore_keeps_unsaved_work_as_an_autosnapshot_first() {
    let t = TestEngine::new();
    let id = create_project(&t, "T", "saved");
    t.ok("version.create", json!({"projectId": id}));
    t.ok("project.update", json!({"projectId": id, "source": "unsaved 未保存的修改"}));
    let result = t.ok("version.restore", json!({"projectId": id, "number": 1}));
    assert_eq!(result["autosnapshot"]["number"], 2);
    assert_eq!(result["autosnapshot"]["origin"], json!({"type": "autosnapshot"}));
    assert_eq!(t.ok("version.get", json!({"projectId": id, "number": 2}))["source"], "unsaved 未保存的修改");
    assert_eq!(result["restored"]["number"], 3);
    assert_eq!(t.ok("project.get", json!({"projectId": id}))["source"], "saved");
    // The messages the core wrote carry their language-neutral form (the English stays
    // for the CLI); a person's message has none.
    let list = t.ok("version.list", json!({"projectId": id}))["versions"].clone();
    let by_number = |n: u64| list.as_array().unwrap().iter().find(|v| v["number"] == n).unwrap().clone();
    assert_eq!((by_number(2)["messageId"].clone(), by_number(2)["messageParams"].clone()), (json!("autosnapshot_before_restore"), json!({"n": "1"})));
    assert_eq!((by_number(3)["messageId"].clone(), by_number(3)["messageParams"].clone()), (json!("restored_version"), json!({"n": "1"})));
    assert_eq!(by_number(3)["message"], "Restored version 1");
    assert_eq!(t.ok("version.get", json!({"projectId": id, "number": 3}))["messageId"], "restored_version");
    let manual = by_number(1);
    assert!(manual.get("messageId").is_none() && manual.get("messageParams").is_none(), "{manual}");
}

/// A version stored before `messageId` existed reads as one without it, and one without
/// a core-written message is stored as before (no new fields).
#[test]
fn a_version_without_a_message_id_reads_and_writes_as_before() {
    let old = json!({"id": "ver_1", "projectId": "prj_1", "number": 1, "title": "T", "source": "s", "author": "a",
        "message": "Restored version 1", "origin": {"type": "restore", "from": 1}, "contentHash": "sha256:00", "createdAt": "2026-01-01T00:00:00Z"});
    let version: inkstone_api::model::Version = serde_json::from_value(old.clone()).unwrap();
    assert_eq!((version.message_id.as_deref(), version.message_params.len()), (None, 0));
    assert_eq!(serde_json::to_value(&version).unwrap(), old);
}

#[test]
fn restore_of_a_project_without_versions_snapshots_nothing_it_cannot_find() {
    let t = TestEngine::new();
    let id = create_project(&t, "T", "text");
    let before = everything(&t);
    let error = err(&t, "version.restore", json!({"projectId": id, "number": 7}));
    assert_eq!(error.code, ErrorCode::NotFound);
    assert_eq!(everything(&t), before, "a failed restore writes nothing, not even the autosnapshot");
}

#[test]
fn diff_between_versions_and_against_the_working_copy_marks_chinese_words() {
    let t = TestEngine::new();
    let id = create_project(&t, "T", "# 标题\n\n今天天气很好。\n");
    t.ok("version.create", json!({"projectId": id}));
    t.ok("project.update", json!({"projectId": id, "source": "# 标题\n\n今天天气不错。\n"}));
    let diff = t.ok("version.diff", json!({"projectId": id, "from": 1}));
    assert_eq!(diff["to"], Value::Null);
    assert_eq!(diff["diff"]["nInsertions"], 1);
    let lines = diff["diff"]["hunks"][0]["lines"].as_array().unwrap();
    let changed: Vec<(&str, &str)> = lines
        .iter()
        .flat_map(|l| l["segments"].as_array().unwrap().iter().filter(|s| s["emphasized"] == true).map(move |s| (l["kind"].as_str().unwrap(), s["text"].as_str().unwrap())))
        .collect();
    assert_eq!(changed, vec![("delete", "很好"), ("insert", "不错")]);
    t.ok("version.create", json!({"projectId": id}));
    let between = t.ok("version.diff", json!({"projectId": id, "from": 1, "to": 2}));
    assert_eq!(between["diff"], diff["diff"]);
}

#[test]
fn comments_anchor_to_utf16_ranges_and_resolve() {
    let t = TestEngine::new();
    let id = create_project(&t, "T", "😀 春眠不觉晓");
    // The emoji is two UTF-16 units; "春眠" is 3..5.
    let comment = t.ok("comment.add", json!({"projectId": id, "body": "好句", "anchor": {"from": 3, "to": 5}}));
    assert_eq!(comment["quote"], "春眠");
    let error = err(&t, "comment.add", json!({"projectId": id, "body": "x", "anchor": {"from": 3, "to": 99}}));
    assert_eq!((error.code, error.details.unwrap()["field"].as_str()), (ErrorCode::Validation, Some("anchor")));
    let resolved = t.ok("comment.resolve", json!({"projectId": id, "commentId": comment["id"], "resolved": true}));
    assert_eq!(resolved["resolved"], true);
    assert_eq!(t.ok("comment.list", json!({"projectId": id, "includeResolved": false}))["comments"], json!([]));
    t.ok("comment.resolve", json!({"projectId": id, "commentId": comment["id"], "resolved": false}));
    assert_eq!(t.ok("comment.list", json!({"projectId": id}))["comments"].as_array().unwrap().len(), 1);
}

#[test]
fn every_state_change_is_an_activity() {
    let t = TestEngine::new();
    let id = create_project(&t, "T", "x");
    t.ok("version.create", json!({"projectId": id}));
    t.ok("project.update", json!({"projectId": id, "title": "T2"}));
    t.ok("project.archive", json!({"projectId": id, "archived": true}));
    let kinds: Vec<String> = t.ok("activity.list", json!({"projectId": id}))["activities"].as_array().unwrap().iter().map(|a| a["kind"].as_str().unwrap().to_owned()).collect();
    assert_eq!(kinds, vec!["project_archived", "project_renamed", "version_created", "project_created"]);
}

#[test]
fn projects_from_templates_and_with_brand_profiles() {
    let t = TestEngine::new();
    let template =
        t.ok("template.create", json!({"name": "周报", "titleTemplate": "周报 {date}", "sourceTemplate": "## 本周\n", "defaultPlatforms": ["zhihu", "wechat", "zhihu"]}));
    let brand = t.ok("brandProfile.create", json!({"name": "墨石", "bannedWords": ["最佳", " 最佳 ", ""]}));
    assert_eq!(brand["bannedWords"], json!(["最佳"]));
    let project = t.ok("project.create", json!({"templateId": template["id"], "brandProfileId": brand["id"]}));
    assert_eq!(project["title"], "周报 2026-01-01");
    assert_eq!(project["source"], "## 本周\n");
    assert_eq!(project["platforms"], json!(["wechat", "zhihu"]));
    assert_eq!(project["templateId"], template["id"]);
    t.ok("brandProfile.delete", json!({"id": brand["id"]}));
    assert_eq!(t.ok("project.get", json!({"projectId": project["id"]}))["brandProfileId"], Value::Null, "deleting a profile clears it from projects");
    let updated = t.ok("template.update", json!({"id": template["id"], "template": {"name": "月报"}}));
    assert_eq!((updated["name"].as_str(), updated["sourceTemplate"].as_str()), (Some("月报"), Some("")));
}

#[test]
fn list_is_recent_first_and_hides_archived_projects() {
    let t = TestEngine::new();
    let a = create_project(&t, "Alpha", "");
    let b = create_project(&t, "Beta 贝塔", "");
    t.ok("project.update", json!({"projectId": a, "source": "touched"}));
    let titles = |params: Value| -> Vec<String> { t.ok("project.list", params)["projects"].as_array().unwrap().iter().map(|p| p["title"].as_str().unwrap().to_owned()).collect() };
    assert_eq!(titles(json!({})), vec!["Alpha", "Beta 贝塔"]);
    t.ok("project.archive", json!({"projectId": a, "archived": true}));
    assert_eq!(titles(json!({})), vec!["Beta 贝塔"]);
    assert_eq!(titles(json!({"includeArchived": true})), vec!["Alpha", "Beta 贝塔"]);
    assert_eq!(titles(json!({"query": "贝塔"})), vec!["Beta 贝塔"]);
    let _ = b;
}

#[test]
fn bad_input_is_a_structured_error_that_changes_nothing() {
    let t = TestEngine::new();
    let id = create_project(&t, "T", "x");
    let before = everything(&t);
    let check = |method: &str, params: Value, code: ErrorCode, field: Option<&str>| {
        let error = err(&t, method, params.clone());
        assert_eq!(error.code, code, "{method} {params}: {error:?}");
        if let Some(field) = field {
            assert_eq!(error.details.as_ref().and_then(|d| d["field"].as_str()), Some(field), "{method} {params}: {error:?}");
        }
        assert!(!error.message.is_empty());
    };
    check("project.explode", json!({}), ErrorCode::NotFound, None);
    let similar = err(&t, "project.explode", json!({}));
    let methods = &similar.hints.iter().find(|h| h.id == "similar_methods").unwrap().params["methods"];
    assert!(methods.split(", ").all(|m| m.starts_with("project.")) && methods.contains("project.create"), "{methods}");
    assert_eq!(serde_json::to_value(&similar).unwrap()["hints"][0]["params"]["methods"], methods.as_str(), "the values reach the UI");
    check("project.create", json!({}), ErrorCode::Validation, Some("title"));
    check("project.create", json!({"title": "   "}), ErrorCode::Validation, Some("title"));
    check("project.create", json!({"title": 42}), ErrorCode::Validation, Some("title"));
    check("project.create", json!({"title": "x", "colour": "red"}), ErrorCode::Validation, None);
    check("project.create", json!({"title": "x", "platforms": ["myspace"]}), ErrorCode::Validation, Some("platforms[0]"));
    check("project.create", json!("not an object"), ErrorCode::Validation, None);
    check("project.update", json!({"projectId": id, "title": "x".repeat(201)}), ErrorCode::Validation, Some("title"));
    check("project.get", json!({"projectId": "prj_nope"}), ErrorCode::NotFound, None);
    check("version.create", json!({"projectId": "prj_nope"}), ErrorCode::NotFound, None);
    check("version.restore", json!({"projectId": id, "number": 1}), ErrorCode::NotFound, None);
    check("version.diff", json!({"projectId": id, "from": 1}), ErrorCode::NotFound, None);
    check("comment.add", json!({"projectId": id, "body": ""}), ErrorCode::Validation, Some("body"));
    check("media.add", json!({"projectId": id, "path": "/definitely/not/here.png"}), ErrorCode::Validation, Some("path"));
    check("media.addBytes", json!({"projectId": id, "fileName": "a.txt", "dataBase64": "aGVsbG8="}), ErrorCode::Validation, Some("path"));
    check("project.create", json!({"title": "x", "templateId": "tpl_nope"}), ErrorCode::Validation, Some("templateId"));
    assert_eq!(everything(&t), before);
}

#[test]
fn unknown_methods_suggest_the_resource_methods() {
    let t = TestEngine::new();
    let error = err(&t, "version.undo", json!({}));
    assert_eq!(error.code, ErrorCode::NotFound);
    assert!(error.hints[0].message.contains("version.restore"), "{:?}", error.hints);
}

#[test]
fn the_display_name_is_the_author() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(EngineConfig::for_tests(dir.path()).with_display_name("林小墨")).unwrap();
    assert_eq!(engine.call("workspace.get", json!({})).unwrap()["displayName"], "林小墨");
    engine.call("workspace.update", json!({"displayName": "Lin"})).unwrap();
    let project = engine.call("project.create", json!({"title": "x"})).unwrap();
    let version = engine.call("version.create", json!({"projectId": project["id"]})).unwrap();
    assert_eq!(version["author"], "Lin");
}

#[test]
fn media_is_copied_into_the_data_dir_with_its_size() {
    let t = TestEngine::new();
    let id = create_project(&t, "T", "x");
    let png = inkstone_test_support::tiny_png();
    let source = t.data_dir().join("..").join(format!("inkstone-test-{}.png", std::process::id()));
    std::fs::write(&source, &png).unwrap();
    let asset = t.ok("media.add", json!({"projectId": id, "path": source.display().to_string(), "altText": "点"}));
    std::fs::remove_file(&source).unwrap();
    assert_eq!((asset["width"].as_u64(), asset["height"].as_u64(), asset["byteSize"].as_u64()), (Some(1), Some(1), Some(png.len() as u64)));
    assert_eq!(asset["mimeType"], "image/png");
    let stored = t.data_dir().join("media").join(asset["fileName"].as_str().unwrap());
    assert_eq!(std::fs::read(stored).unwrap(), png);
    // The same bytes again, for another project, are one asset used by both.
    let other = create_project(&t, "U", "y");
    let again = t.ok("media.addBytes", json!({"projectId": other, "fileName": "copy.png", "dataBase64": inkstone_test_support::tiny_png_base64()}));
    assert_eq!(again["id"], asset["id"]);
    assert_eq!(again["projectIds"], json!([id, other]));
    assert_eq!(t.ok("media.list", json!({"projectId": other}))["media"].as_array().unwrap().len(), 1);
}
