//! What comes into the data folder from outside — a backup being restored, an export
//! being imported, a workspace server's versions, files named by a person — never
//! deletes the only copy of something, never writes outside the data folder, and
//! never leaves media files changed when the import fails.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use inkstone_api::model::Project;
use inkstone_api::store::{Batch, Durability};
use inkstone_api::ErrorCode;
use inkstone_test_support::TestEngine;
use serde_json::{json, Value};

fn backups(t: &TestEngine) -> Vec<Value> {
    t.ok("backup.list", json!({}))["backups"].as_array().unwrap().clone()
}

fn path_of(value: &Value) -> PathBuf {
    PathBuf::from(value.as_str().unwrap())
}

/// Every file and folder below `dir`, relative, sorted.
fn listing(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries {
            let path = entry.unwrap().path();
            out.push(path.strip_prefix(root).unwrap().display().to_string());
            if path.is_dir() && !path.is_symlink() {
                walk(root, &path, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

// ---- restoring a backup -------------------------------------------------------------

/// With five backups, restoring the oldest used to write the safety backup, whose
/// rotation deleted the oldest — the one being restored — and the restore failed with
/// `manifest.json: No such file`, its only copy gone.
#[test]
fn restoring_the_oldest_of_five_backups_restores_it_and_keeps_it() {
    let t = TestEngine::new();
    let id = t.ok("project.create", json!({"title": "T", "source": "round 0"}))["id"].clone();
    let oldest = t.ok("backup.create", json!({}));
    for round in 1..5 {
        t.ok("project.update", json!({"projectId": id, "source": format!("round {round}")}));
        t.ok("backup.create", json!({}));
    }
    assert_eq!(backups(&t).len(), 5);
    let result = t.ok("backup.restore", json!({"name": oldest["name"]}));
    assert_eq!(t.ok("project.get", json!({"projectId": id}))["source"], "round 0");
    assert!(path_of(&oldest["path"]).join("manifest.json").exists(), "the restored backup is still there");
    let safety = &result["safetyBackup"];
    assert!(safety["name"].as_str().unwrap().ends_with("-before-restore"), "{safety}");
    assert_eq!(safety["beforeRestore"], true);
    let listed = backups(&t);
    assert_eq!(listed.len(), 6, "five kept, and the one being restored was not deleted");
    assert!(listed.iter().any(|b| b["name"] == oldest["name"]));
}

/// The backup made before a restore holds the state the restore replaced; later
/// generations hold the restored line only, so the rotation never deletes it.
#[test]
fn the_backup_made_before_a_restore_outlives_later_generations() {
    let t = TestEngine::new();
    let id = t.ok("project.create", json!({"title": "T", "source": "old"}))["id"].clone();
    let old = t.ok("backup.create", json!({}));
    t.ok("project.update", json!({"projectId": id, "source": "the only copy of this text"}));
    let safety = t.ok("backup.restore", json!({"name": old["name"]}))["safetyBackup"].clone();
    for round in 0..8 {
        t.ok("project.update", json!({"projectId": id, "source": format!("after the restore {round}")}));
        t.ok("backup.create", json!({}));
    }
    let listed = backups(&t);
    assert_eq!(listed.len(), 6, "five generations and the one made before the restore");
    let kept = listed.iter().find(|b| b["name"] == safety["name"]).expect("the backup made before the restore is kept");
    assert_eq!(kept["beforeRestore"], true);
    assert_eq!(listed.iter().filter(|b| b["beforeRestore"] == true).count(), 1);
    // It still undoes the restore.
    t.ok("backup.restore", json!({"name": safety["name"]}));
    assert_eq!(t.ok("project.get", json!({"projectId": id}))["source"], "the only copy of this text");
}

// ---- ids from an export -----------------------------------------------------------

/// An export of a store with one project and one image.
fn exported(with_media: bool) -> (TestEngine, tempfile::TempDir, PathBuf) {
    let t = TestEngine::new();
    let id = t.ok("project.create", json!({"title": "春天", "source": "正文\n"}))["id"].clone();
    t.ok("version.create", json!({"projectId": id}));
    if with_media {
        t.ok("media.addBytes", json!({"projectId": id, "fileName": "dot.png", "dataBase64": inkstone_test_support::tiny_png_base64()}));
        t.ok("brandProfile.create", json!({"name": "墨石"}));
        t.ok("comment.add", json!({"projectId": id, "body": "具体些", "anchor": {"from": 0, "to": 2}}));
    }
    let out = tempfile::tempdir().unwrap();
    let path = out.path().join("export");
    t.ok("export.run", json!({"path": path.display().to_string()}));
    (t, out, path)
}

fn edit_json(path: &Path, edit: impl FnOnce(&mut Value)) {
    let mut value: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    edit(&mut value);
    std::fs::write(path, serde_json::to_vec_pretty(&value).unwrap()).unwrap();
}

fn only_dir(dir: &Path) -> PathBuf {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    dirs.remove(0)
}

/// An export edited so a project id is a relative or an absolute path is refused
/// before anything is written; before, the import took it, and the next backup wrote
/// the project's folder outside the data folder.
#[test]
fn an_export_whose_project_id_is_a_path_is_refused_and_writes_nothing() {
    let outside = tempfile::tempdir().unwrap();
    let absolute = outside.path().join("absolute-escape").display().to_string();
    for bad in ["../../../escape", absolute.as_str(), "prj_a/../../b"] {
        let (_source, _out, export) = exported(false);
        let project_dir = only_dir(&export.join("projects"));
        edit_json(&project_dir.join("project.json"), |p| p["id"] = json!(bad));
        for version in std::fs::read_dir(project_dir.join("versions")).unwrap() {
            let path = version.unwrap().path();
            if path.extension().is_some_and(|e| e == "json") {
                edit_json(&path, |v| v["projectId"] = json!(bad));
            }
        }
        let target = TestEngine::new();
        let before = listing(target.data_dir());
        let error = target.engine.call("import.run", json!({"path": export.display().to_string()})).unwrap_err();
        assert_eq!(error.code, ErrorCode::Validation, "{bad}: {error:?}");
        assert!(error.message.contains("is not an Inkstone id"), "{}", error.message);
        assert!(error.message.contains("project.json"), "names the file: {}", error.message);
        assert!(target.engine.store().is_empty(), "{bad}: nothing imported");
        // A backup now has nothing to write outside; nothing appeared anywhere.
        target.ok("backup.create", json!({}));
        assert!(!outside.path().join("absolute-escape").exists() && !target.data_dir().join("escape").exists());
        // (The search index's own files come and go on its thread.)
        let ours = |p: &String| !p.starts_with("backups") && !p.starts_with("index");
        let after: Vec<String> = listing(target.data_dir()).into_iter().filter(ours).collect();
        let before: Vec<String> = before.into_iter().filter(ours).collect();
        assert_eq!(after, before, "{bad}: no file written in the data folder but the backup");
    }
}

fn file_in(dir: &Path, extension: &str) -> PathBuf {
    std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).find(|p| p.extension().is_some_and(|e| e == extension)).unwrap()
}

/// Media ids, media file names and bytes, and per-file record ids of an export are
/// checked too.
#[test]
fn an_export_with_a_bad_media_name_or_record_id_is_refused() {
    type Edit = fn(&Path);
    let edits: Vec<(&str, Edit, &str)> = vec![
        ("media id", |export| edit_json(&file_in(&export.join("media"), "json"), |m| m["id"] = json!("/tmp/med")), "is not an Inkstone id"),
        ("media file name", |export| edit_json(&file_in(&export.join("media"), "json"), |m| m["fileName"] = json!("../../outside.png")), "unsafe media file name"),
        ("media bytes", |export| std::fs::write(file_in(&export.join("media").join("files"), "png"), b"not the image the hash names").unwrap(), "do not match"),
        ("brand profile id", |export| edit_json(&file_in(&export.join("brand-profiles"), "json"), |b| b["id"] = json!("../../brd")), "is not an Inkstone id"),
        ("comment's project", |export| edit_json(&only_dir(&export.join("projects")).join("comments.json"), |c| c[0]["projectId"] = json!("prj_other")), "another project"),
    ];
    for (what, edit, expected) in edits {
        let (_source, _out, export) = exported(true);
        edit(&export);
        let target = TestEngine::new();
        let error = target.engine.call("import.run", json!({"path": export.display().to_string()})).unwrap_err();
        assert_eq!(error.code, ErrorCode::Validation, "{what}: {error:?}");
        assert!(error.message.contains(expected), "{what}: {}", error.message);
        assert!(target.engine.store().is_empty(), "{what}");
        let media = target.data_dir().join("media");
        assert!(listing(&media).is_empty(), "{what}: no media file written: {:?}", listing(&media));
    }
}

/// A store that already holds a project whose id is a path (an older build took it
/// from a server or an import) is not exported into that path: the backup stops and
/// names the project. Before, its folder was written outside the backups folder.
#[test]
fn a_stored_id_that_is_a_path_stops_the_backup_instead_of_writing_outside() {
    let t = TestEngine::new();
    // backups/.<name>.partial-<pid>/projects/../../../escaped is the data folder's
    // `escaped`.
    let escape = t.data_dir().join("escaped");
    let bad_id = "../../../escaped".to_owned();
    let mut project: Project = serde_json::from_value(t.ok("project.create", json!({"title": "T"}))).unwrap();
    project.id = bad_id;
    let kernel = t.engine.kernel();
    let mut batch = Batch::new();
    batch.put(&project).unwrap();
    kernel.store().apply(batch, Durability::Durable).unwrap();
    let error = t.engine.call("backup.create", json!({})).unwrap_err();
    assert_eq!(error.code, ErrorCode::StoreCorrupt, "{error:?}");
    assert!(error.message.contains("../../../escaped"), "{}", error.message);
    assert!(!escape.exists(), "nothing written outside the backup's folder");
    assert!(listing(&t.data_dir().join("backups")).is_empty(), "no partial backup left: {:?}", listing(&t.data_dir().join("backups")));
}

// ---- ids in API parameters ----------------------------------------------------------

#[test]
fn an_api_parameter_that_is_not_an_id_of_its_kind_is_refused() {
    let t = TestEngine::new();
    let project = t.ok("project.create", json!({"title": "T"}))["id"].clone();
    for (method, params, field) in [
        ("project.get", json!({"projectId": "../../etc"}), "projectId"),
        ("version.list", json!({"projectId": "/abs/path"}), "projectId"),
        ("media.get", json!({"id": "../med_1"}), "id"),
        ("media.read", json!({"id": "med_1/../../x"}), "id"),
        ("session.get", json!({"sessionId": "prj_1"}), "sessionId"),
    ] {
        let error = t.engine.call(method, params.clone()).unwrap_err();
        assert_eq!(error.code, ErrorCode::Validation, "{method} {params}: {error:?}");
        assert_eq!(error.details.as_ref().unwrap()["field"], field, "{method}: {error:?}");
        assert_eq!(error.message_id.as_deref(), Some("ids.not_an_id"), "{method}");
    }
    // A well-formed id that names nothing is still NOT_FOUND, and an empty brand
    // profile id still clears it.
    assert_eq!(t.engine.call("project.get", json!({"projectId": "prj_nope"})).unwrap_err().code, ErrorCode::NotFound);
    t.ok("project.update", json!({"projectId": project, "brandProfileId": ""}));
}

// ---- ids from a workspace server --------------------------------------------------

/// A scripted workspace server on loopback that answers `/v1/workspace` and
/// `/v1/changes` with a version of the project `project_id`.
fn hostile_server(project_id: &'static str) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request_line = String::new();
            if reader.read_line(&mut request_line).is_err() {
                continue;
            }
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
            }
            let path = request_line.split_whitespace().nth(1).unwrap_or("");
            let (status, body) = if path.starts_with("/v1/workspace") {
                ("200 OK", json!({"id": "wsp_hostile", "name": "Hostile", "me": {"id": "mem_1", "name": "Eve", "role": "owner"}, "features": ["versionOrigin"]}))
            } else if path.starts_with("/v1/changes") {
                let version = json!({
                    "projectId": project_id, "number": 1, "clientId": "ver_x", "title": "pulled", "source": "text\n", "author": "Eve",
                    "message": null, "contentHash": "sha256:00", "createdAt": "2026-01-01T00:00:00Z", "pushedBy": "mem_1", "cursor": 1
                });
                ("200 OK", json!({"versions": [version], "cursor": 1, "more": false, "features": ["versionOrigin"]}))
            } else {
                ("404 Not Found", json!({"code": "NOT_FOUND", "message": "no such route", "hints": []}))
            };
            let body = serde_json::to_vec(&body).unwrap();
            let head = format!("HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n", body.len());
            let _ = stream.write_all(head.as_bytes()).and_then(|()| stream.write_all(&body));
        }
    });
    url
}

/// A pulled version whose project id is a path is refused before anything is
/// written; before, the project was created under that id and the next backup wrote
/// its folder outside the data folder.
#[test]
fn a_pulled_version_with_a_bad_project_id_is_refused_and_writes_nothing() {
    let t = TestEngine::new();
    let url = hostile_server("../../../pulled-escape");
    match t.engine.call("sync.connect", json!({"serverUrl": url, "token": "isk_test"})) {
        Ok(_) => {}
        // A connect that pulls at once meets the same refusal.
        Err(error) => assert_eq!(error.message_id.as_deref(), Some("sync.bad_id"), "{error:?}"),
    }
    let error = t.engine.call("sync.pull", json!({})).unwrap_err();
    assert_eq!(error.code, ErrorCode::Validation, "{error:?}");
    assert_eq!(error.message_id.as_deref(), Some("sync.bad_id"));
    assert!(error.message.contains("nothing was pulled"), "{}", error.message);
    assert!(t.ok("project.list", json!({"includeArchived": true}))["projects"].as_array().unwrap().is_empty());
    t.ok("backup.create", json!({}));
    assert!(!t.data_dir().join("pulled-escape").exists() && !t.data_dir().parent().unwrap().join("pulled-escape").exists());
}

// ---- files named by a person --------------------------------------------------------

/// `media.add` of `/dev/zero` used to read forever; it is refused at once.
#[cfg(unix)]
#[test]
fn adding_dev_zero_as_an_image_is_refused_quickly() {
    let t = TestEngine::new();
    let project = t.ok("project.create", json!({"title": "T"}))["id"].clone();
    let (tx, rx) = std::sync::mpsc::channel();
    let started = Instant::now();
    // On its own thread, so a read that never ends fails the test instead of hanging it.
    std::thread::spawn(move || {
        let _ = tx.send(t.engine.call("media.add", json!({"projectId": project, "path": "/dev/zero"})));
        drop(t);
    });
    let error = rx.recv_timeout(Duration::from_secs(20)).expect("media.add of /dev/zero did not finish within 20 s").unwrap_err();
    assert_eq!(error.code, ErrorCode::Validation, "{error:?}");
    assert!(error.message.contains("/dev/zero is not a regular file"), "{}", error.message);
    assert!(started.elapsed() < Duration::from_secs(5));
}

/// An image larger than the limit is refused from its size, before it is read.
#[test]
fn an_image_over_the_limit_is_refused_by_its_size() {
    let t = TestEngine::new();
    let project = t.ok("project.create", json!({"title": "T"}))["id"].clone();
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.png");
    let file = std::fs::File::create(&big).unwrap();
    file.set_len(inkstone_api::api::MAX_MEDIA_BYTES as u64 + 1).unwrap();
    let error = t.engine.call("media.add", json!({"projectId": project, "path": big.display().to_string()})).unwrap_err();
    assert_eq!(error.code, ErrorCode::Validation);
    assert!(error.message.contains(&format!("at most {} are allowed", inkstone_api::api::MAX_MEDIA_BYTES)), "{}", error.message);
}

/// A symbolic link in a folder of Markdown files is skipped and reported, not
/// followed; before, the file it pointed to (anywhere) became a project.
#[cfg(unix)]
#[test]
fn markdown_import_skips_symbolic_links_and_reports_them() {
    let t = TestEngine::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.md"), "# Secret\n\nnot part of the folder\n").unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.md"), "# Kept\n\nbody\n").unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.md"), dir.path().join("link.md")).unwrap();
    let result = t.ok("import.markdown", json!({"path": dir.path().display().to_string()}));
    let titles: Vec<&str> = result["projects"].as_array().unwrap().iter().map(|p| p["title"].as_str().unwrap()).collect();
    assert_eq!(titles, vec!["Kept"]);
    assert_eq!(result["skippedLinks"], json!([dir.path().join("link.md").display().to_string()]));
    // A folder of nothing but links says so.
    let links_only = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.md"), links_only.path().join("only.md")).unwrap();
    let error = t.engine.call("import.markdown", json!({"path": links_only.path().display().to_string()})).unwrap_err();
    assert_eq!(error.code, ErrorCode::Validation);
    assert!(error.message.contains("symbolic links"), "{}", error.message);
}

// ---- media of a failed import -------------------------------------------------------

/// The tiny PNG with bytes after its end: another image file under the same name.
fn other_png() -> Vec<u8> {
    let mut bytes = inkstone_test_support::tiny_png();
    bytes.extend_from_slice(b"other bytes");
    bytes
}

fn sha256_ref(bytes: &[u8]) -> String {
    inkstone_api::store::sha256_ref(bytes)
}

/// A restore whose backup holds other bytes for an image the data folder has, and
/// that fails after its media were read (here: its activity log is damaged), leaves
/// the image as it was; before, the backup's bytes were already written over it.
/// Without the damage, the same restore puts the backup's bytes in place.
#[test]
fn a_failed_restore_leaves_the_media_files_as_they_were() {
    let t = TestEngine::new();
    let project = t.ok("project.create", json!({"title": "T"}))["id"].clone();
    let asset = t.ok("media.addBytes", json!({"projectId": project, "fileName": "dot.png", "dataBase64": inkstone_test_support::tiny_png_base64()}));
    let file = t.data_dir().join("media").join(asset["fileName"].as_str().unwrap());
    let backup = t.ok("backup.create", json!({}));
    let backup_dir = path_of(&backup["path"]);
    // The backup's copy of the image now has other bytes (and the hash naming them).
    std::fs::write(backup_dir.join("media").join("files").join(asset["fileName"].as_str().unwrap()), other_png()).unwrap();
    edit_json(&backup_dir.join("media").join(format!("{}.json", asset["id"].as_str().unwrap())), |m| {
        m["contentHash"] = json!(sha256_ref(&other_png()));
        m["byteSize"] = json!(other_png().len());
    });
    let activities = backup_dir.join("activities.jsonl");
    let good = std::fs::read(&activities).unwrap();
    std::fs::write(&activities, [good.as_slice(), b"{not json\n"].concat()).unwrap();

    let error = t.engine.call("backup.restore", json!({"name": backup["name"]})).unwrap_err();
    assert_eq!(error.code, ErrorCode::Validation, "{error:?}");
    assert_eq!(std::fs::read(&file).unwrap(), inkstone_test_support::tiny_png(), "the image the store refers to is unchanged");
    assert!(!listing(&t.data_dir().join("media")).iter().any(|p| p.starts_with(".staged")), "{:?}", listing(&t.data_dir().join("media")));

    std::fs::write(&activities, good).unwrap();
    t.ok("backup.restore", json!({"name": backup["name"]}));
    assert_eq!(std::fs::read(&file).unwrap(), other_png(), "a restore that commits puts the backup's bytes in place");
    let read = t.ok("media.read", json!({"id": asset["id"]}));
    assert_eq!(read["asset"]["contentHash"], sha256_ref(&other_png()));
    assert_eq!(listing(&t.data_dir().join("media")), vec![asset["fileName"].as_str().unwrap().to_owned()], "the staging folder is gone");
}
