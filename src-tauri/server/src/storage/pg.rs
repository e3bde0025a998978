//! The PostgreSQL storage: the same [`Storage`] contract as the embedded store, for a
//! team that runs several stateless server processes on one database.
//!
//! - Migrations are numbered and run at start, under an advisory lock (so processes
//!   starting together do not race) and recorded in `schema_migrations`; a database
//!   migrated by a newer server is refused.
//! - A push runs in one transaction: an advisory transaction lock on its dedupe key (a
//!   second request with the key while the first runs is `InFlight`; a crashed
//!   process's lock dies with its connection, so nothing is left in flight), the
//!   key's stored result (replayed), then the workspace row locked `FOR UPDATE`, which
//!   orders every push of the workspace: numbers and change cursors are taken under it
//!   and committed before the next push reads them, so they have no gaps or duplicates
//!   across processes. Primary keys on (project, number), (workspace, cursor) and
//!   (workspace, dedupe key) back that up; a transaction that hits one, a deadlock or a
//!   serialization failure is retried from the start.
//! - Dedupe keys are kept [`DEDUPE_KEEP_MILLIS`](super::DEDUPE_KEEP_MILLIS) (30 days) and then pruned.

mod activity;
mod migrations;
mod perf;
mod push;
mod workspace;

use std::time::Duration;

use inkstone_sync_proto::{
    AiActivityQuery, AiActivityResponse, ChangesResponse, IssuedToken, MemberEntry, PerfChangesResponse, PerfPushResponse, PerfRecord, PolicyRecord, ProjectHead, PushRequest,
    Role, WorkspaceInfo,
};
use postgres::error::SqlState;
use postgres::{NoTls, Transaction};
use r2d2_postgres::PostgresConnectionManager;

pub use migrations::MIGRATIONS;

use super::{Caller, PushOutcome, Storage, StorageError};

/// The advisory lock id that serialises migrations (any constant; "inks" in ASCII).
const MIGRATION_LOCK: i64 = 0x696e_6b73;
/// How often a transaction that hit a conflict is retried.
const RETRIES: usize = 8;

/// What a transaction body returns besides its value.
enum Fail {
    Db(postgres::Error),
    Domain(StorageError),
}

impl From<postgres::Error> for Fail {
    fn from(e: postgres::Error) -> Self {
        Fail::Db(e)
    }
}

impl From<StorageError> for Fail {
    fn from(e: StorageError) -> Self {
        Fail::Domain(e)
    }
}

pub(super) fn db_error(e: postgres::Error) -> StorageError {
    // postgres::Error's text names the failure, never the connection string.
    StorageError::Io(format!("database: {e}"))
}

fn retryable(e: &postgres::Error) -> bool {
    matches!(e.code(), Some(code) if *code == SqlState::T_R_SERIALIZATION_FAILURE || *code == SqlState::T_R_DEADLOCK_DETECTED || *code == SqlState::UNIQUE_VIOLATION)
}

/// The PostgreSQL storage over a connection pool.
///
/// The `postgres` client drives its socket with a runtime of its own, which tokio
/// refuses to start on a thread of another runtime (the server's handlers run storage
/// calls on tokio's blocking pool). So a call made on such a thread runs on a scoped
/// thread of its own; elsewhere (the operator's commands, tests) it runs in place.
pub struct PgStorage {
    /// Always Some until dropped (the pool closes its connections off the runtime too).
    db: Option<Db>,
}

impl Drop for PgStorage {
    fn drop(&mut self) {
        if let Some(db) = self.db.take() {
            off_runtime(move || drop(db));
        }
    }
}

/// Runs `work` where the `postgres` client may block: not on a tokio thread.
fn off_runtime<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    if tokio::runtime::Handle::try_current().is_err() {
        return work();
    }
    std::thread::scope(|scope| match scope.spawn(work).join() {
        Ok(value) => value,
        Err(panic) => std::panic::resume_unwind(panic),
    })
}

impl PgStorage {
    /// Connects (`postgres://user:password@host:port/database`), with at most
    /// `pool_size` connections, and runs the migrations this server knows.
    pub fn connect(url: &str, pool_size: u32) -> Result<PgStorage, StorageError> {
        off_runtime(|| Db::connect(url, pool_size)).map(|db| PgStorage { db: Some(db) })
    }

    /// The schema versions applied, oldest first.
    pub fn applied_migrations(&self) -> Result<Vec<i32>, StorageError> {
        off_runtime(|| self.db()?.applied_migrations())
    }
}

impl PgStorage {
    fn db(&self) -> Result<&Db, StorageError> {
        self.db.as_ref().ok_or_else(|| StorageError::Io("the database storage was closed".into()))
    }
}

impl Storage for PgStorage {
    fn create_workspace(&self, name: &str, owner_name: &str) -> Result<(String, IssuedToken), StorageError> {
        off_runtime(|| self.db()?.create_workspace(name, owner_name))
    }
    fn invite(&self, workspace_id: &str, name: &str, role: Role) -> Result<IssuedToken, StorageError> {
        off_runtime(|| self.db()?.invite(workspace_id, name, role))
    }
    fn revoke(&self, workspace_id: &str, token_id: &str) -> Result<(), StorageError> {
        off_runtime(|| self.db()?.revoke(workspace_id, token_id))
    }
    fn authenticate(&self, token: &str) -> Result<Option<Caller>, StorageError> {
        off_runtime(|| self.db()?.authenticate(token))
    }
    fn workspace(&self, caller: &Caller) -> Result<WorkspaceInfo, StorageError> {
        off_runtime(|| self.db()?.workspace(caller))
    }
    fn members(&self, workspace_id: &str) -> Result<Vec<MemberEntry>, StorageError> {
        off_runtime(|| self.db()?.members(workspace_id))
    }
    fn push(&self, caller: &Caller, project_id: &str, request: &PushRequest, key: &str, payload_hash: &str) -> Result<PushOutcome, StorageError> {
        off_runtime(|| self.db()?.push(caller, project_id, request, key, payload_hash))
    }
    fn changes_page(&self, workspace_id: &str, cursor: u64, limit: usize, max_bytes: usize) -> Result<ChangesResponse, StorageError> {
        off_runtime(|| self.db()?.changes_page(workspace_id, cursor, limit, max_bytes))
    }
    fn ai_activity(&self, workspace_id: &str, only_member: Option<&str>, query: &AiActivityQuery) -> Result<AiActivityResponse, StorageError> {
        off_runtime(|| self.db()?.ai_activity(workspace_id, only_member, query))
    }
    fn project(&self, workspace_id: &str, project_id: &str) -> Result<ProjectHead, StorageError> {
        off_runtime(|| self.db()?.project(workspace_id, project_id))
    }
    fn policy(&self, workspace_id: &str) -> Result<Option<PolicyRecord>, StorageError> {
        off_runtime(|| self.db()?.policy(workspace_id))
    }
    fn set_policy(&self, workspace_id: &str, record: &PolicyRecord) -> Result<(), StorageError> {
        off_runtime(|| self.db()?.set_policy(workspace_id, record))
    }
    fn perf_push(&self, caller: &Caller, records: &[PerfRecord]) -> Result<PerfPushResponse, StorageError> {
        off_runtime(|| self.db()?.perf_push(caller, records))
    }
    fn perf_changes(&self, workspace_id: &str, cursor: u64, limit: usize) -> Result<PerfChangesResponse, StorageError> {
        off_runtime(|| self.db()?.perf_changes(workspace_id, cursor, limit))
    }
    fn prune_dedupe(&self, now: u64) -> Result<usize, StorageError> {
        off_runtime(|| self.db()?.prune_dedupe(now))
    }
}

/// The pool and the queries (called off any tokio thread).
struct Db {
    pool: r2d2::Pool<PostgresConnectionManager<NoTls>>,
}

impl Db {
    fn connect(url: &str, pool_size: u32) -> Result<Db, StorageError> {
        let config: postgres::Config = url.parse().map_err(|_| StorageError::Io("the database URL is not valid (postgres://user:password@host:port/database)".into()))?;
        let manager = PostgresConnectionManager::new(config, NoTls);
        let pool = r2d2::Pool::builder()
            .max_size(pool_size.max(1))
            .min_idle(Some(1))
            .connection_timeout(Duration::from_secs(15))
            .build(manager)
            .map_err(|e| StorageError::Io(format!("cannot connect to the database: {e}")))?;
        let db = Db { pool };
        db.migrate()?;
        Ok(db)
    }

    fn applied_migrations(&self) -> Result<Vec<i32>, StorageError> {
        let mut client = self.client()?;
        let rows = client.query("SELECT version FROM schema_migrations ORDER BY version", &[]).map_err(db_error)?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    fn client(&self) -> Result<r2d2::PooledConnection<PostgresConnectionManager<NoTls>>, StorageError> {
        self.pool.get().map_err(|e| StorageError::Io(format!("no database connection: {e}")))
    }

    fn migrate(&self) -> Result<(), StorageError> {
        let mut client = self.client()?;
        let mut tx = client.transaction().map_err(db_error)?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK]).map_err(db_error)?;
        tx.batch_execute("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())").map_err(db_error)?;
        let newest: Option<i32> = tx.query_one("SELECT max(version) FROM schema_migrations", &[]).map_err(db_error)?.get(0);
        let known = MIGRATIONS.last().map_or(0, |(v, _)| *v);
        if newest.unwrap_or(0) > known {
            return Err(StorageError::Io(format!("the database has schema version {} but this server knows only up to {known}: run a newer server", newest.unwrap_or(0))));
        }
        for (version, sql) in MIGRATIONS {
            if *version <= newest.unwrap_or(0) {
                continue;
            }
            tx.batch_execute(sql).map_err(db_error)?;
            tx.execute("INSERT INTO schema_migrations (version) VALUES ($1)", &[version]).map_err(db_error)?;
        }
        tx.commit().map_err(db_error)
    }

    /// Runs `body` in a transaction, again from the start when it hit a conflict.
    fn transaction<T>(&self, mut body: impl FnMut(&mut Transaction<'_>) -> Result<T, Fail>) -> Result<T, StorageError> {
        let mut client = self.client()?;
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut tx = client.transaction().map_err(db_error)?;
            let result = body(&mut tx);
            let result = match result {
                Ok(value) => tx.commit().map(|()| value).map_err(Fail::Db),
                Err(fail) => {
                    // Dropping the transaction rolls it back.
                    drop(tx);
                    Err(fail)
                }
            };
            match result {
                Ok(value) => return Ok(value),
                Err(Fail::Domain(e)) => return Err(e),
                Err(Fail::Db(e)) if retryable(&e) && attempt < RETRIES => {
                    std::thread::sleep(Duration::from_millis(2 * attempt as u64));
                }
                Err(Fail::Db(e)) => return Err(db_error(e)),
            }
        }
    }
}
