use serde_json::{json, Value};

use crate::{json_ok, run, stdout};

#[test]
fn a_project_lifecycle_through_readable_commands() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let source = dir.path().join("spring.md");
    std::fs::write(&source, "今天天气很好。\n").unwrap();
    let project = json_ok(data, &["project", "create", "春天", "--source-file", source.to_str().unwrap(), "--platform", "wechat"]);
    let id = project["id"].as_str().unwrap();
    let listed = stdout(&run(data, &["project", "list"]));
    assert!(listed.contains("春天") && listed.contains(id), "{listed}");
    assert_eq!(stdout(&run(data, &["version", "create", id, "-m", "初稿"])).trim(), "Saved as version 1");
    std::fs::write(&source, "今天天气不错。\n").unwrap();
    json_ok(data, &["project", "update", id, "--source-file", source.to_str().unwrap(), "--base-revision", "1"]);
    let diff = stdout(&run(data, &["version", "diff", id, "1"]));
    assert!(diff.contains("-今天天气[很好]。") && diff.contains("+今天天气[不错]。"), "{diff}");
    let restore = stdout(&run(data, &["version", "restore", id, "1"]));
    assert_eq!(restore, "Unsaved changes kept as version 2\nRestored as version 3\n");
    let versions = stdout(&run(data, &["version", "list", id]));
    assert!(versions.starts_with("v3") && versions.contains("restore of v1") && versions.contains("autosnapshot"), "{versions}");
    let comment = json_ok(data, &["comment", "add", id, "好句", "--from", "0", "--to", "2"]);
    assert_eq!(comment["quote"], "今天");
    json_ok(data, &["comment", "resolve", id, comment["id"].as_str().unwrap()]);
    assert_eq!(json_ok(data, &["comment", "list", id, "--open"])["comments"], json!([]));
}

#[test]
fn call_reaches_every_method_and_methods_lists_them() {
    let dir = tempfile::tempdir().unwrap();
    let created = json_ok(dir.path(), &["call", "project.create", "--params", r#"{"title":"via call"}"#]);
    assert_eq!(created["title"], "via call");
    let methods = stdout(&run(dir.path(), &["methods"]));
    for method in inkstone_api::api::METHODS {
        assert!(methods.lines().any(|l| l == *method), "{method}");
    }
    let streamed = stdout(&run(dir.path(), &["call", "export.run", "--stream", "--params", &json!({"path": dir.path().join("out").display().to_string()}).to_string()]));
    let lines: Vec<Value> = streamed.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.first().unwrap()["type"], "progress");
    assert_eq!(lines.last().unwrap()["type"], "result");
    assert_eq!(lines.last().unwrap()["data"]["manifest"]["counts"]["projects"], 1);
}

#[test]
fn exit_codes_and_errors_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let unknown = run(dir.path(), &["call", "project.fly"]);
    assert_eq!(unknown.status.code(), Some(1));
    let error: Value = serde_json::from_slice(&unknown.stderr).unwrap();
    assert_eq!(error["code"], "NOT_FOUND");
    assert!(error["hints"].as_array().unwrap().len() == 1);
    let invalid = run(dir.path(), &["call", "project.create", "--params", r#"{"title": ""}"#]);
    assert_eq!(invalid.status.code(), Some(1));
    let error: Value = serde_json::from_slice(&invalid.stderr).unwrap();
    assert_eq!((error["code"].as_str(), error["details"]["field"].as_str()), (Some("VALIDATION"), Some("title")));
    // A worded problem keeps its wording id and values, for a caller that words it.
    let not_connected = run(dir.path(), &["call", "sync.retry"]);
    assert_eq!(not_connected.status.code(), Some(1));
    let error: Value = serde_json::from_slice(&not_connected.stderr).unwrap();
    assert_eq!(error["messageId"], "sync.not_connected", "{error}");
    let restore = run(dir.path(), &["version", "restore", "prj_nope", "3"]);
    assert_eq!(restore.status.code(), Some(1));
    assert_eq!(run(dir.path(), &["call", "project.create", "--params", "{not json"]).status.code(), Some(2));
    assert_eq!(run(dir.path(), &["project", "frobnicate"]).status.code(), Some(2));
    assert_eq!(run(dir.path(), &["version", "restore", "prj_x", "not-a-number"]).status.code(), Some(2));
    assert_eq!(json_ok(dir.path(), &["project", "list"])["projects"], json!([]), "nothing was written");
}

#[test]
fn export_import_and_markdown_import_through_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let md = dir.path().join("notes");
    std::fs::create_dir(&md).unwrap();
    std::fs::write(md.join("one.md"), "# 第一篇\n\n内容\n").unwrap();
    std::fs::write(md.join("two.md"), "two\n").unwrap();
    let imported = stdout(&run(&a, &["import-md", md.to_str().unwrap()]));
    assert!(imported.contains("第一篇") && imported.contains("two"), "{imported}");
    let again = stdout(&run(&a, &["import-md", md.to_str().unwrap()]));
    assert_eq!(again.matches("already imported as").count(), 2, "the same files again make no duplicates: {again}");
    let out = dir.path().join("export");
    assert!(stdout(&run(&a, &["export", out.to_str().unwrap()])).starts_with("Exported 2 projects"));
    assert!(stdout(&run(&b, &["import", out.to_str().unwrap()])).starts_with("Imported 2 projects"));
    assert_eq!(json_ok(&a, &["project", "list"]), json_ok(&b, &["project", "list"]));
}

#[test]
fn a_data_dir_held_by_another_process_is_named_plainly() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = crate::serve::Server::start(dir.path());
    let output = run(dir.path(), &["project", "list"]);
    assert_eq!(output.status.code(), Some(1));
    let error: Value = serde_json::from_slice(&output.stderr).unwrap();
    assert_eq!(error["code"], "STORE_LOCKED");
    assert!(error["message"].as_str().unwrap().contains("in use by inkstone-cli serve"), "{error}");
    server.stop();
    assert!(run(dir.path(), &["project", "list"]).status.success(), "the lock is released when serve stops");
}

#[test]
fn drafts_checks_and_measures_from_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("a.md");
    std::fs::write(&source, "这是最佳方法，保证涨粉。\n\n阅读[原文](https://example.com)。\n").unwrap();
    let project = json_ok(dir.path(), &["project", "create", "方法论", "--source-file", source.to_str().unwrap()]);
    let id = project["id"].as_str().unwrap();
    let compiled = json_ok(dir.path(), &["draft", "compile", id, "--platform", "wechat"]);
    let html = compiled["drafts"][0]["draft"]["content"]["html"].as_str().unwrap();
    assert!(html.starts_with("<section style=") && html.contains("参考链接"), "{html}");
    let checks = json_ok(dir.path(), &["check", id]);
    let growth = checks["findings"].as_array().unwrap().iter().find(|f| f["check"] == "growth_promise").unwrap();
    assert_eq!((growth["matched"].as_str(), growth["severity"].as_str()), (Some("保证涨粉"), Some("block")));
    assert_eq!(growth["span"], json!({"from": 7, "to": 11}));
    let measured = json_ok(dir.path(), &["draft", "measure", "--platform", "x", "Hi http://test.co"]);
    assert_eq!((measured["weightedLength"].as_u64(), measured["limit"].as_u64(), measured["valid"].as_bool()), (Some(26), Some(280), Some(true)));
    let text = stdout(&run(dir.path(), &["draft", "measure", "--platform", "xiaohongshu", &"字".repeat(21)]));
    assert!(text.contains("21") && text.contains("too long"), "{text}");
    assert_eq!(run(dir.path(), &["draft", "measure", "--platform", "myspace", "x"]).status.code(), Some(1));
}

#[test]
fn saved_drafts_from_the_cli_keep_hand_edits_until_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let project = json_ok(dir.path(), &["project", "create", "春天", "--platform", "x"]);
    let id = project["id"].as_str().unwrap();
    let source = dir.path().join("a.md");
    std::fs::write(&source, "第一句话写给早起的人。\n\nThe second sentence.\n").unwrap();
    json_ok(dir.path(), &["project", "update", id, "--source-file", source.to_str().unwrap()]);
    let saved = json_ok(dir.path(), &["draft", "save", id, "--platform", "x"]);
    assert_eq!((saved["outcome"].as_str(), saved["draft"]["revision"].as_u64()), (Some("created"), Some(1)));

    let thread = dir.path().join("thread.txt");
    std::fs::write(&thread, "我改过的第一条。\n---\nSecond post.\n").unwrap();
    let edited = json_ok(dir.path(), &["draft", "edit", id, "--platform", "x", "--base-revision", "1", "--file", thread.to_str().unwrap()]);
    assert_eq!(edited["draft"]["content"]["posts"].as_array().unwrap().len(), 2);
    assert_eq!(edited["draft"]["handEdited"], true);

    // A recompile prints the difference and the command that takes it; nothing is saved.
    let text = stdout(&run(dir.path(), &["draft", "save", id, "--platform", "x"]));
    assert!(text.contains("edited by hand") && text.contains("- 我改过的第一条。") && text.contains("--replace 2"), "{text}");
    assert_eq!(json_ok(dir.path(), &["draft", "show", id, "--platform", "x"])["revision"], 2);
    let stale = run(dir.path(), &["draft", "save", id, "--platform", "x", "--replace", "1"]);
    assert_eq!(stale.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&stale.stderr).contains("CONFLICT"));
    let replaced = json_ok(dir.path(), &["draft", "save", id, "--platform", "x", "--replace", "2"]);
    assert_eq!((replaced["outcome"].as_str(), replaced["draft"]["handEdited"].as_bool()), (Some("updated"), Some(false)));

    json_ok(dir.path(), &["draft", "status", id, "--platform", "x", "publishing"]);
    let refused = run(dir.path(), &["draft", "edit", id, "--platform", "x", "--base-revision", "4", "--title", "新标题"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("READ_ONLY"));
    let list = stdout(&run(dir.path(), &["draft", "list", id]));
    assert!(list.contains("rev 4") && list.contains("publishing"), "{list}");
}

#[test]
fn search_finds_content_from_the_cli_with_its_place_and_marks() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let source = data.join("in.md");
    std::fs::write(&source, "# 夜航\n\n灯塔的光每十秒转一圈。\n").unwrap();
    let project = json_ok(data, &["project", "create", "夜航", "--source-file", source.to_str().unwrap()]);
    let id = project["id"].as_str().unwrap();
    // A fresh process reads the index the last one left.
    let output = run(data, &["search", "灯塔"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let text = stdout(&output);
    assert!(text.contains(&format!("{id}:6-8  [summary]  夜航")), "{text}");
    assert!(text.contains("[灯塔]的光"), "{text}");
    let found = json_ok(data, &["search", "灯", "--project", id, "--kind", "working"]);
    assert_eq!(found["hits"][0]["span"], serde_json::json!({"from": 6, "to": 7}));
    let rebuilt = run(data, &["search", "--reindex", "十秒"]);
    assert!(stdout(&rebuilt).contains(id), "{}", stdout(&rebuilt));
    assert!(stdout(&run(data, &["search", "海鸥"])).contains("No matches."));
}

#[test]
fn ask_answers_with_citations_and_the_footer_from_the_cli() {
    use inkstone_test_support::model_server::{ModelServer, Reply};
    let server = ModelServer::start(vec![Reply::text("光每十秒转一圈「灯塔的光每十秒转一圈」[1]，还有「不存在的话」[1]。")]);
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    json_ok(data, &["profile", "add", "--name", "local", "--base-url", &server.base_url(), "--model", "chat", "--no-key"]);
    let source = data.join("in.md");
    std::fs::write(&source, "# 夜航\n\n灯塔的光每十秒转一圈。\n").unwrap();
    let id = json_ok(data, &["project", "create", "夜航", "--source-file", source.to_str().unwrap()])["id"].as_str().unwrap().to_owned();
    let output = run(data, &["ask", "灯塔的光多久转一圈"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let text = stdout(&output);
    assert!(text.contains(&format!("[1] 夜航  {id}:6-16")), "{text}");
    assert!(text.contains("! not in the sources: 「不存在的话」"), "{text}");
    assert!(text.trim_end().ends_with("检索 1 篇，引用 1 篇 / retrieved 1, cited 1"), "{text}");
    server.assert_calls(1);
}
