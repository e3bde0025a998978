//! What both test binaries share: the two storages the suite runs against.
//!
//! PostgreSQL runs in a throwaway cluster (one per test binary, a fresh database per
//! test). When PostgreSQL is not installed the PostgreSQL tests FAIL; a developer
//! without it may set `INKSTONE_SKIP_POSTGRES=1` to skip them (CI never does).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};

use inkstone_server::pgtemp::TempCluster;
use inkstone_server::storage::pg::PgStorage;
use inkstone_server::storage::{SledStorage, Storage};

/// Where a test's data lives.
pub enum Store {
    Sled(tempfile::TempDir),
    Pg(String),
}

fn cluster() -> &'static TempCluster {
    static CLUSTER: OnceLock<Result<TempCluster, String>> = OnceLock::new();
    match CLUSTER.get_or_init(|| TempCluster::start(false)) {
        Ok(cluster) => cluster,
        Err(e) => panic!("the PostgreSQL tests need PostgreSQL (set INKSTONE_SKIP_POSTGRES=1 to skip them on a developer machine): {e}"),
    }
}

impl Store {
    pub fn sled() -> Store {
        Store::Sled(tempfile::tempdir().unwrap())
    }

    /// A fresh database on the throwaway cluster; None only when the developer asked to
    /// skip PostgreSQL.
    pub fn pg() -> Option<Store> {
        if std::env::var("INKSTONE_SKIP_POSTGRES").is_ok_and(|v| v == "1") {
            eprintln!("skipping a PostgreSQL test: INKSTONE_SKIP_POSTGRES=1");
            return None;
        }
        static COUNT: AtomicU32 = AtomicU32::new(0);
        let name = format!("t{}", COUNT.fetch_add(1, Ordering::SeqCst));
        Some(Store::Pg(cluster().create_database(&name).unwrap()))
    }

    /// A storage over this data (PostgreSQL: a new pool, as another process would have).
    pub fn open(&self) -> Arc<dyn Storage> {
        match self {
            Store::Sled(dir) => Arc::new(SledStorage::open(dir.path()).unwrap()),
            Store::Pg(url) => Arc::new(PgStorage::connect(url, 8).unwrap()),
        }
    }

    /// The arguments that point `inkstone-server` at this data.
    pub fn args(&self) -> Vec<String> {
        match self {
            Store::Sled(dir) => vec!["--data-dir".into(), dir.path().display().to_string()],
            Store::Pg(url) => vec!["--database-url".into(), url.clone()],
        }
    }

    pub fn is_pg(&self) -> bool {
        matches!(self, Store::Pg(_))
    }
}

/// `sled::name` and `pg::name` tests that run `name(store)`.
#[macro_export]
macro_rules! on_both_storages {
    ($($name:ident),* $(,)?) => {
        mod sled {
            $(#[test] fn $name() { super::$name(super::common::Store::sled()) })*
        }
        mod pg {
            $(#[test] fn $name() { if let Some(store) = super::common::Store::pg() { super::$name(store) } })*
        }
    };
}

/// The workspace's seeded generator (xorshift64*, so a failing seed replays): the file
/// of `inkstone-test-support`, included rather than depended on, since that crate
/// builds the whole engine and the server's tests need none of it.
#[path = "../../../test-support/src/rng.rs"]
mod rng;
#[allow(unused_imports)] // `pushers` draws no numbers
pub use rng::Rng;
