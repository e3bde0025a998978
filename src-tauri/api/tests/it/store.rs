//! The store's contract: locking, damage reports, durability.

use inkstone_api::store::{Kind, SCHEMA_VERSION};
use inkstone_api::{Engine, EngineConfig, ErrorCode};
use inkstone_test_support::TestEngine;
use serde_json::json;

#[test]
fn a_second_opener_of_the_data_dir_is_told_who_holds_it() {
    let t = TestEngine::new();
    let mut config = EngineConfig::for_tests(t.data_dir());
    config.holder = "inkstone-cli".to_owned();
    let error = Engine::open(config).unwrap_err();
    assert_eq!(error.code, ErrorCode::StoreLocked);
    assert!(error.message.contains("test (pid"), "{}", error.message);
    assert_eq!(error.hints[0].id, "close_other_instance");
}

#[test]
fn the_lock_is_released_when_the_engine_closes() {
    let dir = tempfile::tempdir().unwrap();
    drop(Engine::open(EngineConfig::for_tests(dir.path())).unwrap());
    Engine::open(EngineConfig::for_tests(dir.path())).unwrap();
}

#[test]
fn a_damaged_record_is_reported_with_a_recovery_path_not_returned() {
    let t = TestEngine::new();
    let id = t.ok("project.create", json!({"title": "T"}))["id"].as_str().unwrap().to_owned();
    t.engine.store().damage_record_for_tests(Kind::Projects, id.as_bytes()).unwrap();
    t.engine.store().damage_record_for_tests(Kind::ProjectSummaries, id.as_bytes()).unwrap();
    for (method, params) in [("project.get", json!({"projectId": id})), ("project.list", json!({}))] {
        let error = t.engine.call(method, params).unwrap_err();
        assert_eq!(error.code, ErrorCode::StoreCorrupt, "{method}");
        assert!(error.message.contains("checksum"), "{}", error.message);
        assert_eq!(error.hints[0].id, "restore_backup");
        assert!(error.hints[0].params["folder"].ends_with("backups"), "the UI can name the backups folder: {:?}", error.hints[0]);
    }
}

#[test]
fn damaged_database_files_are_an_error_never_a_panic() {
    // Overwrite the middle of sled's data file with garbage: opening must either fail
    // with STORE_CORRUPT, or every read must be intact or STORE_CORRUPT.
    for seed in 0..8u64 {
        let dir = tempfile::tempdir().unwrap();
        {
            let engine = Engine::open(EngineConfig::for_tests(dir.path())).unwrap();
            for i in 0..20 {
                let p = engine.call("project.create", json!({"title": format!("p{i}"), "source": "正文".repeat(200)})).unwrap();
                engine.call("version.create", json!({"projectId": p["id"]})).unwrap();
            }
        }
        let db_file = dir.path().join("db").join("db");
        let mut bytes = std::fs::read(&db_file).unwrap();
        let start = (bytes.len() as u64 * (seed + 1) / 10) as usize;
        for (i, b) in bytes.iter_mut().skip(start).take(64).enumerate() {
            *b ^= 0xa5u8.wrapping_add(i as u8);
        }
        std::fs::write(&db_file, &bytes).unwrap();
        let outcome = std::panic::catch_unwind(|| match Engine::open(EngineConfig::for_tests(dir.path())) {
            Err(error) => assert!(matches!(error.code, ErrorCode::StoreCorrupt | ErrorCode::Internal), "{error:?}"),
            Ok(engine) => match engine.call("project.list", json!({})) {
                Ok(list) => {
                    for p in list["projects"].as_array().unwrap() {
                        if let Ok(project) = engine.call("project.get", json!({"projectId": p["id"]})) {
                            assert_eq!(project["source"], "正文".repeat(200));
                        }
                    }
                }
                Err(error) => assert_eq!(error.code, ErrorCode::StoreCorrupt, "{error:?}"),
            },
        });
        assert!(outcome.is_ok(), "seed {seed}: the engine panicked on a damaged file");
    }
}

#[test]
fn a_store_from_a_newer_build_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    {
        let engine = Engine::open(EngineConfig::for_tests(dir.path())).unwrap();
        engine.store().set_schema_version_for_tests(SCHEMA_VERSION + 1).unwrap();
    }
    let error = Engine::open(EngineConfig::for_tests(dir.path())).unwrap_err();
    assert_eq!(error.code, ErrorCode::StoreTooNew);
}

#[test]
fn versions_are_synced_before_the_call_returns_and_autosaves_are_grouped() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = EngineConfig::for_tests(dir.path());
    config.group_commit_millis = 60_000; // the group-commit thread stays asleep
    let engine = Engine::open(config).unwrap();
    let store = engine.store();
    let project = engine.call("project.create", json!({"title": "T"})).unwrap();
    let before = store.durable_sync_count();
    engine.call("project.update", json!({"projectId": project["id"], "source": "typing"})).unwrap();
    assert_eq!(store.durable_sync_count(), before, "an autosave does not wait for a sync");
    assert!(store.has_unsynced_writes());
    engine.call("version.create", json!({"projectId": project["id"]})).unwrap();
    assert_eq!(store.durable_sync_count(), before + 1, "a version is synced before version.create returns");
    assert!(!store.has_unsynced_writes(), "the sync also covered the earlier autosave");
    engine.call("version.restore", json!({"projectId": project["id"], "number": 1})).unwrap();
    assert_eq!(store.durable_sync_count(), before + 2);
}

#[test]
fn the_group_commit_thread_syncs_autosaves_within_its_interval() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = EngineConfig::for_tests(dir.path());
    config.group_commit_millis = 20;
    let engine = Engine::open(config).unwrap();
    let project = engine.call("project.create", json!({"title": "T"})).unwrap();
    let before = engine.store().durable_sync_count();
    engine.call("project.update", json!({"projectId": project["id"], "source": "typing"})).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while engine.store().durable_sync_count() == before && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert!(engine.store().durable_sync_count() > before);
}
