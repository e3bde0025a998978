//! Export, import, backups and the first-schema fixture.

use inkstone_api::{Engine, EngineConfig, ErrorCode};
use inkstone_test_support::{read_tree, unpack_fixture, TestEngine};
use serde_json::{json, Value};

/// A store with a bit of everything.
fn populated() -> TestEngine {
    let t = TestEngine::new();
    let brand = t.ok("brandProfile.create", json!({"name": "墨石", "voice": "克制", "bannedWords": ["最佳"]}));
    let template = t.ok("template.create", json!({"name": "周报", "sourceTemplate": "## 本周\n"}));
    let a = t.ok("project.create", json!({"title": "春天", "source": "# 春天\n\n今天天气很好。\n", "platforms": ["wechat"], "brandProfileId": brand["id"]}));
    t.ok("version.create", json!({"projectId": a["id"], "message": "初稿"}));
    t.ok("project.update", json!({"projectId": a["id"], "source": "# 春天\n\n今天天气不错。\n"}));
    t.ok("version.create", json!({"projectId": a["id"]}));
    t.ok("comment.add", json!({"projectId": a["id"], "body": "具体些", "anchor": {"from": 0, "to": 4}}));
    t.ok("platformDraft.save", json!({"projectId": a["id"], "platform": "wechat"}));
    t.ok("project.create", json!({"templateId": template["id"], "title": "第二篇"}));
    t.ok("media.addBytes", json!({"projectId": a["id"], "fileName": "dot.png", "dataBase64": inkstone_test_support::tiny_png_base64()}));
    t.ok("project.update", json!({"projectId": a["id"], "source": "unsaved working copy 未保存"}));
    t
}

/// Everything readable through the API, for comparing two stores.
fn snapshot(t: &TestEngine) -> Value {
    let mut out = serde_json::Map::new();
    let projects = t.ok("project.list", json!({"includeArchived": true}));
    for project in projects["projects"].as_array().unwrap() {
        let id = project["id"].as_str().unwrap();
        let mut versions = Vec::new();
        for v in t.ok("version.list", json!({"projectId": id}))["versions"].as_array().unwrap() {
            versions.push(t.ok("version.get", json!({"projectId": id, "number": v["number"]})));
        }
        out.insert(
            id.to_owned(),
            json!({
                "project": t.ok("project.get", json!({"projectId": id})),
                "versions": versions,
                "comments": t.ok("comment.list", json!({"projectId": id})),
                "drafts": t.ok("platformDraft.list", json!({"projectId": id})),
            }),
        );
    }
    json!({
        "projects": out,
        "list": projects,
        "workspace": t.ok("workspace.get", json!({})),
        "activity": t.ok("activity.list", json!({"limit": 1000})),
        "brands": t.ok("brandProfile.list", json!({})),
        "templates": t.ok("template.list", json!({})),
        "media": t.ok("media.list", json!({})),
    })
}

#[test]
fn export_then_import_gives_identical_content() {
    let source = populated();
    let out = tempfile::tempdir().unwrap();
    let first = out.path().join("first");
    let mut events = Vec::new();
    let result = source.engine.call_stream("export.run", json!({"path": first.display().to_string()}), &mut |e| events.push(e)).unwrap();
    assert_eq!(
        result["manifest"]["counts"],
        json!({"projects": 2, "versions": 2, "comments": 1, "activities": 9, "brandProfiles": 1, "templates": 1, "media": 1, "llmProfiles": 0, "usageRecords": 0, "platformDrafts": 1, "sessions": 0, "sessionEvents": 0})
    );
    assert!(!events.is_empty(), "export reports progress");
    assert_eq!(
        std::fs::read_to_string(first.join("projects").join(source.ok("project.list", json!({}))["projects"][0]["id"].as_str().unwrap()).join("source.md")).unwrap(),
        "unsaved working copy 未保存"
    );

    let target = TestEngine::new();
    let imported = target.ok("import.run", json!({"path": first.display().to_string()}));
    assert_eq!(imported["counts"], result["manifest"]["counts"]);
    assert_eq!(snapshot(&target), snapshot(&source));
    let media = target.ok("media.list", json!({}))["media"][0].clone();
    assert_eq!(std::fs::read(target.data_dir().join("media").join(media["fileName"].as_str().unwrap())).unwrap(), inkstone_test_support::tiny_png());

    // A second export of the imported store is byte-identical but for the manifest's time.
    let second = out.path().join("second");
    target.ok("export.run", json!({"path": second.display().to_string()}));
    let (mut a, mut b) = (read_tree(&first), read_tree(&second));
    let (ma, mb) = (a.remove("manifest.json").unwrap(), b.remove("manifest.json").unwrap());
    assert_eq!(a, b);
    let strip_time = |bytes: Vec<u8>| {
        let mut v: Value = serde_json::from_slice(&bytes).unwrap();
        v.as_object_mut().unwrap().remove("exportedAt");
        v
    };
    assert_eq!(strip_time(ma), strip_time(mb));
}

#[test]
fn import_refuses_a_data_dir_that_holds_projects_and_changes_nothing() {
    let source = populated();
    let out = tempfile::tempdir().unwrap();
    let path = out.path().join("export");
    source.ok("export.run", json!({"path": path.display().to_string()}));
    let target = TestEngine::new();
    target.ok("project.create", json!({"title": "already here"}));
    let error = target.engine.call("import.run", json!({"path": path.display().to_string()})).unwrap_err();
    assert_eq!(error.code, ErrorCode::Conflict);
    assert_eq!(target.ok("project.list", json!({}))["projects"].as_array().unwrap().len(), 1);
    let error = source.engine.call("export.run", json!({"path": path.display().to_string()})).unwrap_err();
    assert_eq!(error.code, ErrorCode::Validation, "exporting over an existing folder is refused");
}

#[test]
fn a_damaged_export_is_refused_without_writing() {
    let source = populated();
    let out = tempfile::tempdir().unwrap();
    let path = out.path().join("export");
    source.ok("export.run", json!({"path": path.display().to_string()}));
    std::fs::remove_dir_all(path.join("templates")).unwrap();
    let target = TestEngine::new();
    let error = target.engine.call("import.run", json!({"path": path.display().to_string()})).unwrap_err();
    assert_eq!(error.code, ErrorCode::Validation, "{error:?}");
    assert!(error.message.contains("manifest"), "{}", error.message);
    assert!(target.engine.store().is_empty());
}

#[test]
fn markdown_files_become_one_project_each() {
    let t = TestEngine::new();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("b-note.md"), "no heading here\n").unwrap();
    std::fs::write(dir.path().join("a.md"), "# 春天来了\n\n正文。\n").unwrap();
    std::fs::write(dir.path().join("skip.txt"), "not markdown").unwrap();
    let result = t.ok("import.markdown", json!({"path": dir.path().display().to_string()}));
    let titles: Vec<&str> = result["projects"].as_array().unwrap().iter().map(|p| p["title"].as_str().unwrap()).collect();
    assert_eq!(titles, vec!["春天来了", "b-note"]);
    let first = t.ok("project.get", json!({"projectId": result["projects"][0]["id"]}));
    assert_eq!(first["source"], "正文。\n");
}

/// Importing the same file again makes no duplicate: the file is
/// skipped and named with the project that holds it; a changed file is imported; two
/// equal files in one folder make one project.
#[test]
fn importing_the_same_markdown_again_skips_it_and_says_which_project_has_it() {
    let t = TestEngine::new();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("walk.md");
    std::fs::write(&file, "# 散步\n\n正文。\n").unwrap();
    let first = t.ok("import.markdown", json!({"path": file.display().to_string()}));
    assert_eq!(first["projects"].as_array().unwrap().len(), 1);
    assert_eq!(first["skipped"], json!([]));
    let id = first["projects"][0]["id"].clone();
    let marker = inkstone_api::backup::change_marker(t.engine.store()).unwrap();

    let again = t.ok("import.markdown", json!({"path": file.display().to_string()}));
    assert_eq!(again["projects"], json!([]));
    assert_eq!(again["skipped"][0]["path"], file.display().to_string());
    assert_eq!(again["skipped"][0]["existing"]["id"], id);
    assert_eq!(inkstone_api::backup::change_marker(t.engine.store()).unwrap(), marker, "nothing written");
    assert_eq!(t.ok("project.list", json!({}))["projects"].as_array().unwrap().len(), 1);

    // A folder with the same file, a copy of it and a new one: only the new one.
    std::fs::write(dir.path().join("walk-copy.md"), "# 散步\n\n正文。\n").unwrap();
    std::fs::write(dir.path().join("zz-other.md"), "# 散步\n\n另一篇正文。\n").unwrap();
    std::fs::write(dir.path().join("twin-a.md"), "# 双胞胎\n\n同一篇。\n").unwrap();
    std::fs::write(dir.path().join("twin-b.md"), "# 双胞胎\n\n同一篇。\n").unwrap();
    let folder = t.ok("import.markdown", json!({"path": dir.path().display().to_string()}));
    let titles: Vec<&str> = folder["projects"].as_array().unwrap().iter().map(|p| p["excerpt"].as_str().unwrap()).collect();
    assert_eq!(titles, vec!["同一篇。\n", "另一篇正文。\n"], "twin-a, then zz-other (same title, other text)");
    let skipped: Vec<(String, String)> = folder["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (std::path::Path::new(s["path"].as_str().unwrap()).file_name().unwrap().to_string_lossy().into_owned(), s["existing"]["title"].as_str().unwrap().to_owned()))
        .collect();
    assert_eq!(skipped, vec![("twin-b.md".to_owned(), "双胞胎".to_owned()), ("walk-copy.md".to_owned(), "散步".to_owned()), ("walk.md".to_owned(), "散步".to_owned())]);
    assert_eq!(t.ok("project.list", json!({}))["projects"].as_array().unwrap().len(), 3);
}

#[test]
fn automatic_backups_keep_five_generations_and_skip_when_unchanged() {
    let t = TestEngine::new();
    assert_eq!(t.ok("backup.auto", json!({"reason": "exit"}))["backup"], Value::Null, "an empty store needs no backup");
    let id = t.ok("project.create", json!({"title": "T"}))["id"].clone();
    for round in 0..7 {
        t.ok("project.update", json!({"projectId": id, "source": format!("round {round}")}));
        assert_ne!(t.ok("backup.auto", json!({"reason": "exit"}))["backup"], Value::Null);
    }
    assert_eq!(t.ok("backup.auto", json!({"reason": "exit"}))["backup"], Value::Null, "unchanged since the last backup");
    let backups = t.ok("backup.list", json!({}))["backups"].as_array().unwrap().clone();
    assert_eq!(backups.len(), 5);
    // The newest backup restores the newest state.
    let restored = TestEngine::new();
    restored.ok("import.run", json!({"path": backups[0]["path"]}));
    assert_eq!(restored.ok("project.get", json!({"projectId": id}))["source"], "round 6");
    // Daily: not again within a day even after a change.
    t.ok("project.update", json!({"projectId": id, "source": "later"}));
    assert_eq!(t.ok("backup.auto", json!({"reason": "daily"}))["backup"], Value::Null);
}

#[test]
fn the_first_schema_fixture_opens_with_its_content() {
    let dir = tempfile::tempdir().unwrap();
    unpack_fixture("store-v1.tar.gz", dir.path());
    let engine = Engine::open(EngineConfig::for_tests(dir.path().join("data"))).unwrap();
    let call = |m: &str, p: Value| engine.call(m, p).unwrap();
    assert_eq!(call("app.info", json!({}))["schemaVersion"], inkstone_api::store::SCHEMA_VERSION);
    assert_eq!(call("workspace.get", json!({}))["displayName"], "林小墨");
    let projects = call("project.list", json!({"includeArchived": true}))["projects"].as_array().unwrap().clone();
    assert_eq!(projects.len(), 3);
    let spring = projects.iter().find(|p| p["title"] == "春天的第一篇").unwrap();
    let versions = call("version.list", json!({"projectId": spring["id"]}))["versions"].as_array().unwrap().clone();
    let origins: Vec<Value> = versions.iter().map(|v| v["origin"].clone()).collect();
    assert_eq!(origins, vec![json!({"type": "restore", "from": 1}), json!({"type": "manual"}), json!({"type": "manual"})]);
    assert_eq!(call("version.get", json!({"projectId": spring["id"], "number": 3}))["source"], "今天天气很好。\n\nThe quick brown fox.\n");
    assert_eq!(call("comment.list", json!({"projectId": spring["id"]}))["comments"][0]["quote"], "今天天气不错", "the comment was made on version 2's text");
    assert_eq!(call("brandProfile.list", json!({}))["brandProfiles"][0]["bannedWords"], json!(["最佳", "第一"]));
    assert_eq!(call("media.list", json!({}))["media"][0]["altText"], "一个点");
    // And it stays writable.
    call("version.create", json!({"projectId": spring["id"]}));
}

#[test]
fn restoring_a_backup_replaces_everything_and_keeps_a_safety_backup() {
    let t = TestEngine::new();
    let id = t.ok("project.create", json!({"title": "Before"}))["id"].clone();
    let backup = t.ok("backup.create", json!({}));
    t.ok("project.update", json!({"projectId": id, "title": "After"}));
    let later = t.ok("project.create", json!({"title": "Made after the backup"}))["id"].clone();
    let result = t.ok("backup.restore", json!({"name": backup["name"]}));
    assert_eq!(result["counts"]["projects"], 1);
    assert_eq!(t.ok("project.get", json!({"projectId": id}))["title"], "Before");
    assert_eq!(t.engine.call("project.get", json!({"projectId": later})).unwrap_err().code, ErrorCode::NotFound);
    assert_eq!(t.ok("project.list", json!({}))["projects"].as_array().unwrap().len(), 1);
    // The safety backup undoes the restore.
    t.ok("backup.restore", json!({"name": result["safetyBackup"]["name"]}));
    assert_eq!(t.ok("project.get", json!({"projectId": id}))["title"], "After");
    assert_eq!(t.ok("project.get", json!({"projectId": later}))["title"], "Made after the backup");
    let missing = t.engine.call("backup.restore", json!({"name": "nope"})).unwrap_err();
    assert_eq!(missing.code, ErrorCode::NotFound);
}

#[test]
fn media_read_returns_the_bytes_for_previews() {
    let t = TestEngine::new();
    let id = t.ok("project.create", json!({"title": "T"}))["id"].clone();
    let asset = t.ok("media.addBytes", json!({"projectId": id, "fileName": "dot.png", "dataBase64": inkstone_test_support::tiny_png_base64()}));
    let read = t.ok("media.read", json!({"id": asset["id"]}));
    assert_eq!(read["dataBase64"], inkstone_test_support::tiny_png_base64());
    assert_eq!(read["asset"], asset);
}
