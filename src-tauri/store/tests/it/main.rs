//! inkstone-store on its own: open, lock, durable batches, damage and newer schemas,
//! with no engine above it. (Core's `tests/it/store.rs` checks the same cases through
//! `Engine::call`, where they become error codes and hints.)
#![allow(clippy::unwrap_used, clippy::expect_used)]

use inkstone_model::Workspace;
use inkstone_store::{Batch, Durability, Kind, Store, StoreError, StoreOptions, SCHEMA_VERSION};

fn options(holder: &str) -> StoreOptions {
    StoreOptions { holder: holder.to_owned(), cache_capacity_bytes: 8 * 1024 * 1024, group_commit_millis: 1_000 }
}

fn workspace() -> Workspace {
    let created_at = "2026-03-01T08:00:00Z".parse().unwrap();
    Workspace { id: "ws_1".to_owned(), name: "书房".to_owned(), display_name: "林".to_owned(), server_url: None, created_at }
}

/// A durable batch is synced before `apply` returns and is there after a reopen.
#[test]
fn a_durable_batch_is_synced_before_apply_returns_and_survives_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = Store::open(dir.path(), &options("first")).unwrap();
        assert_eq!(store.workspace().unwrap(), None);
        let syncs = store.durable_sync_count();
        let mut batch = Batch::new();
        batch.put(&workspace()).unwrap();
        store.apply(batch, Durability::Durable).unwrap();
        assert!(store.durable_sync_count() > syncs, "a durable write syncs before it returns");
        assert!(!store.has_unsynced_writes());
    }
    let store = Store::open(dir.path(), &options("second")).unwrap();
    assert_eq!(store.workspace().unwrap(), Some(workspace()));
    assert_eq!(store.schema_version().unwrap(), Some(SCHEMA_VERSION));
}

/// A grouped write (an autosave) marks the store dirty and does not wait for the disk.
#[test]
fn a_grouped_write_does_not_sync_before_it_returns() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), &options("first")).unwrap();
    let syncs = store.durable_sync_count();
    let mut batch = Batch::new();
    batch.put(&workspace()).unwrap();
    store.apply(batch, Durability::Grouped).unwrap();
    assert_eq!(store.durable_sync_count(), syncs);
    assert_eq!(store.workspace().unwrap(), Some(workspace()), "readers see it at once");
}

/// A second opener of the same folder is refused and told who holds it.
#[test]
fn a_second_opener_is_told_who_holds_the_folder() {
    let dir = tempfile::tempdir().unwrap();
    let _first = Store::open(dir.path(), &options("the desktop window")).unwrap();
    match Store::open(dir.path(), &options("a command")) {
        Err(StoreError::Locked { path, holder }) => {
            assert_eq!(path, dir.path());
            assert!(holder.starts_with("the desktop window (pid "), "{holder}");
        }
        other => panic!("expected Locked, got {other:?}"),
    }
}

/// A damaged value is `Corrupt`, never a panic and never returned as data.
#[test]
fn a_damaged_record_is_corrupt_not_data() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), &options("first")).unwrap();
    let mut batch = Batch::new();
    batch.put(&workspace()).unwrap();
    store.apply(batch, Durability::Durable).unwrap();
    store.damage_record_for_tests(Kind::Meta, b"workspace").unwrap();
    assert!(matches!(store.workspace(), Err(StoreError::Corrupt { .. })), "{:?}", store.workspace());
}

/// A store written by a newer build is refused, not read or migrated down.
#[test]
fn a_store_from_a_newer_build_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    Store::open(dir.path(), &options("first")).unwrap().set_schema_version_for_tests(SCHEMA_VERSION + 1).unwrap();
    // sled lets go of its file lock when its flusher thread ends, a moment after the
    // store is dropped: on a loaded machine the next open can still find it held.
    let mut opened = Store::open(dir.path(), &options("second"));
    for _ in 0..50 {
        if !matches!(&opened, Err(StoreError::Io(e)) if e.kind() == std::io::ErrorKind::Other && e.to_string().contains("could not acquire lock")) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
        opened = Store::open(dir.path(), &options("second"));
    }
    match opened {
        Err(StoreError::TooNew { found, supported, .. }) => assert_eq!((found, supported), (SCHEMA_VERSION + 1, SCHEMA_VERSION)),
        other => panic!("expected TooNew, got {other:?}"),
    }
}

/// `scan_where` tests a small view of each record and returns whole records only for
/// those it keeps; a damaged record is `Corrupt` there too.
#[test]
fn a_filtered_scan_keeps_what_its_view_passes() {
    #[derive(serde::Deserialize)]
    struct Named {
        name: String,
    }
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), &options("first")).unwrap();
    let mut batch = Batch::new();
    batch.put(&workspace()).unwrap();
    store.apply(batch, Durability::Durable).unwrap();
    let kept: Vec<Workspace> = store.scan_where::<Workspace, Named>(b"workspace", |w| w.name == "书房").unwrap();
    assert_eq!(kept, vec![workspace()]);
    let none: Vec<Workspace> = store.scan_where::<Workspace, Named>(b"workspace", |w| w.name == "别处").unwrap();
    assert!(none.is_empty());
    store.damage_record_for_tests(Kind::Meta, b"workspace").unwrap();
    let damaged = store.scan_where::<Workspace, Named>(b"workspace", |_| true);
    assert!(matches!(damaged, Err(StoreError::Corrupt { .. })), "{damaged:?}");
}
