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
//! - Dedupe keys are kept [`DEDUPE_KEEP_MILLIS`] (30 days) and then pruned.

use std::time::Duration;

use inkstone_sync_proto::{
    AiActivityEntry, AiActivityQuery, AiActivityResponse, ChangesResponse, IssuedToken, Member, MemberEntry, PerfAck, PerfChangesResponse, PerfKind, PerfPushResponse, PerfRecord,
    PolicyRecord, ProjectHead, PushRequest, PushResponse, PushedVersion, Role, ServerPerfRecord, ServerVersion, StaleBase, TokenEntry, WorkspaceInfo, MAX_PAGE_BYTES,
};
use postgres::error::SqlState;
use postgres::{NoTls, Row, Transaction};
use r2d2_postgres::PostgresConnectionManager;

use super::{features, new_token, now_millis, perf_decision, perf_unapplied, random_hex, sha256_hex, Caller, PerfDecision, PushOutcome, Storage, StorageError, DEDUPE_KEEP_MILLIS};

/// The schema, one step per version. Never edit a step that has shipped: add one.
pub const MIGRATIONS: &[(i32, &str)] = &[
    (
        1,
        r#"
CREATE TABLE workspaces (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    -- The last change cursor given out in this workspace.
    cursor BIGINT NOT NULL DEFAULT 0
);
CREATE TABLE members (
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    id TEXT NOT NULL,
    name TEXT NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('owner', 'editor', 'viewer')),
    PRIMARY KEY (workspace_id, id)
);
CREATE TABLE tokens (
    -- sha256 hex of the token; the token itself is never stored.
    hash TEXT PRIMARY KEY,
    token_id TEXT NOT NULL UNIQUE,
    workspace_id TEXT NOT NULL,
    member_id TEXT NOT NULL,
    revoked BOOLEAN NOT NULL DEFAULT FALSE,
    FOREIGN KEY (workspace_id, member_id) REFERENCES members (workspace_id, id)
);
CREATE TABLE projects (
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    project_id TEXT NOT NULL,
    head INTEGER NOT NULL,
    title TEXT NOT NULL,
    PRIMARY KEY (workspace_id, project_id)
);
CREATE TABLE versions (
    workspace_id TEXT NOT NULL,
    project_id TEXT NOT NULL,
    number INTEGER NOT NULL CHECK (number > 0),
    cursor BIGINT NOT NULL CHECK (cursor > 0),
    client_id TEXT NOT NULL,
    title TEXT NOT NULL,
    source TEXT NOT NULL,
    author TEXT NOT NULL,
    message TEXT,
    content_hash TEXT NOT NULL,
    created_at TEXT NOT NULL,
    pushed_by TEXT NOT NULL,
    PRIMARY KEY (workspace_id, project_id, number),
    UNIQUE (workspace_id, cursor),
    FOREIGN KEY (workspace_id, project_id) REFERENCES projects (workspace_id, project_id)
);
CREATE TABLE dedupe (
    workspace_id TEXT NOT NULL,
    key TEXT NOT NULL,
    payload_hash TEXT NOT NULL,
    -- Unix milliseconds of the push.
    at BIGINT NOT NULL,
    -- The push's result (JSON of PushResponse).
    response TEXT NOT NULL,
    PRIMARY KEY (workspace_id, key)
);
CREATE INDEX dedupe_at ON dedupe (at);
"#,
    ),
    (
        2,
        r#"
-- Unix milliseconds of the invite, for the membership list (NULL for older tokens).
ALTER TABLE tokens ADD COLUMN issued_at BIGINT;
"#,
    ),
    (
        3,
        r#"
-- How the pushing client made the version (manual, syncResolution, ...): a kind, never
-- ids or names. NULL for versions of older clients.
ALTER TABLE versions ADD COLUMN origin TEXT;
"#,
    ),
    (
        4,
        r#"
-- A push that reuses a version id the workspace holds is refused: found by this index.
-- (Not UNIQUE: a database of an older server may hold an id twice already.)
CREATE INDEX versions_client_id ON versions (workspace_id, client_id);
"#,
    ),
    (
        5,
        r#"
-- The workspace's policy as its owners last set it (JSON of PolicyRecord: the policy,
-- who set it and when). No row: never set.
CREATE TABLE policies (
    workspace_id TEXT PRIMARY KEY REFERENCES workspaces (id),
    record TEXT NOT NULL
);
"#,
    ),
    (
        6,
        r#"
-- The workspace's performance data (accounts, publications, metric snapshots): one
-- row per record, its latest write, at its own cursor (taken under the workspace row's
-- lock, like the versions' cursors). `body` is the app's record as JSON text, NULL for
-- a deleted account or publication (kept, so an older write cannot bring it back).
ALTER TABLE workspaces ADD COLUMN perf_cursor BIGINT NOT NULL DEFAULT 0;
CREATE TABLE perf_records (
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    kind TEXT NOT NULL CHECK (kind IN ('account', 'publication', 'snapshot')),
    id TEXT NOT NULL,
    project_id TEXT,
    publication_id TEXT,
    updated_at BIGINT NOT NULL,
    edit_id TEXT NOT NULL,
    deleted BOOLEAN NOT NULL,
    body TEXT,
    created_by TEXT NOT NULL,
    pushed_by TEXT NOT NULL,
    cursor BIGINT NOT NULL CHECK (cursor > 0),
    PRIMARY KEY (workspace_id, kind, id),
    UNIQUE (workspace_id, cursor)
);
CREATE INDEX perf_records_snapshots ON perf_records (workspace_id, publication_id) WHERE kind = 'snapshot';
"#,
    ),
    (
        7,
        r#"
-- The AI origin detail of an accepted AI version, pushed while the workspace shares AI
-- activity (JSON of AiOrigin: who accepted, model, provider host, prompt layers,
-- proposal, hunks, through what; never prompts or transcripts). Kept apart from the
-- version: a pull never carries it.
CREATE TABLE ai_activity (
    workspace_id TEXT NOT NULL,
    cursor BIGINT NOT NULL,
    project_id TEXT NOT NULL,
    number INTEGER NOT NULL,
    client_id TEXT NOT NULL,
    member_id TEXT NOT NULL,
    pushed_by TEXT NOT NULL,
    model TEXT NOT NULL,
    -- Unix milliseconds of the accept.
    accepted_at BIGINT NOT NULL,
    detail TEXT NOT NULL,
    PRIMARY KEY (workspace_id, cursor),
    FOREIGN KEY (workspace_id, project_id, number) REFERENCES versions (workspace_id, project_id, number)
);
CREATE INDEX ai_activity_at ON ai_activity (workspace_id, accepted_at DESC, cursor DESC);
"#,
    ),
    (
        8,
        r#"
-- Accounts' days (`accountSnapshots`): a fourth kind of performance record, append-only
-- like a metric snapshot, naming its account (NULL for the other kinds). Rows of the
-- first three kinds are unchanged.
ALTER TABLE perf_records DROP CONSTRAINT perf_records_kind_check;
ALTER TABLE perf_records ADD CONSTRAINT perf_records_kind_check CHECK (kind IN ('account', 'publication', 'snapshot', 'accountSnapshot'));
ALTER TABLE perf_records ADD COLUMN account_id TEXT;
"#,
    ),
];

fn perf_kind(text: &str) -> PerfKind {
    match text {
        "account" => PerfKind::Account,
        "publication" => PerfKind::Publication,
        "accountSnapshot" => PerfKind::AccountSnapshot,
        _ => PerfKind::Snapshot,
    }
}

const PERF_COLUMNS: &str = "kind, id, project_id, publication_id, updated_at, edit_id, deleted, body, created_by, pushed_by, cursor, account_id";

fn perf_from(row: &Row) -> ServerPerfRecord {
    ServerPerfRecord {
        record: PerfRecord {
            kind: perf_kind(row.get(0)),
            id: row.get(1),
            project_id: row.get(2),
            publication_id: row.get(3),
            account_id: row.get(11),
            updated_at: row.get::<_, i64>(4) as u64,
            edit_id: row.get(5),
            deleted: row.get(6),
            body: row.get(7),
        },
        created_by: row.get(8),
        pushed_by: row.get(9),
        cursor: row.get::<_, i64>(10) as u64,
    }
}

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

fn db_error(e: postgres::Error) -> StorageError {
    // postgres::Error's text names the failure, never the connection string.
    StorageError::Io(format!("database: {e}"))
}

fn retryable(e: &postgres::Error) -> bool {
    matches!(e.code(), Some(code) if *code == SqlState::T_R_SERIALIZATION_FAILURE || *code == SqlState::T_R_DEADLOCK_DETECTED || *code == SqlState::UNIQUE_VIOLATION)
}

fn role_from(text: &str) -> Role {
    match text {
        "owner" => Role::Owner,
        "editor" => Role::Editor,
        _ => Role::Viewer,
    }
}

fn version_from(row: &Row) -> ServerVersion {
    ServerVersion {
        project_id: row.get("project_id"),
        number: row.get::<_, i32>("number") as u32,
        client_id: row.get("client_id"),
        title: row.get("title"),
        source: row.get("source"),
        author: row.get("author"),
        message: row.get("message"),
        content_hash: row.get("content_hash"),
        created_at: row.get("created_at"),
        pushed_by: row.get("pushed_by"),
        cursor: row.get::<_, i64>("cursor") as u64,
        origin: row.get("origin"),
    }
}

const VERSION_COLUMNS: &str = "project_id, number, cursor, client_id, title, source, author, message, content_hash, created_at, pushed_by, origin";

/// A version's size as the database knows it without reading its text (the lengths
/// of its texts, plus room for its numbers and field names). JSON escapes can make the
/// answer longer: [`exact_page`] measures that.
const VERSION_BYTES: &str = "(octet_length(title) + octet_length(source) + coalesce(octet_length(message), 0) + octet_length(client_id) + octet_length(author) \
     + octet_length(content_hash) + octet_length(created_at) + octet_length(pushed_by) + coalesce(octet_length(origin), 0) + 200)::BIGINT";

/// The last key (cursor or number, column 0) of rows `(key, size)` that fill a page,
/// and whether rows were left out; None for no rows.
fn page_end(sizes: &[Row], limit: usize, max_bytes: usize) -> (Option<i64>, bool) {
    let mut page = super::Page::new(limit, max_bytes);
    let mut end = None;
    for row in sizes {
        let bytes: i64 = row.get(1);
        if !page.admit(usize::try_from(bytes).unwrap_or(usize::MAX)) {
            return (end, true);
        }
        end = Some(row.get::<_, i64>(0));
    }
    (end, false)
}

/// The versions that fit `max_bytes` as JSON (the first always); true when some were
/// cut.
fn exact_page(versions: impl Iterator<Item = ServerVersion>, max_bytes: usize) -> (Vec<ServerVersion>, bool) {
    let mut page = super::Page::new(usize::MAX, max_bytes);
    let mut out = Vec::new();
    for version in versions {
        if !page.admit(super::json_len(&version)) {
            return (out, true);
        }
        out.push(version);
    }
    (out, false)
}

/// The 64-bit advisory lock id of a workspace's dedupe key.
fn key_lock(workspace_id: &str, key: &str) -> i64 {
    let hash = sha256_hex(format!("{workspace_id}\0{key}").as_bytes());
    let mut bytes = [0u8; 8];
    for (i, b) in bytes.iter_mut().enumerate() {
        *b = u8::from_str_radix(&hash[i * 2..i * 2 + 2], 16).unwrap_or(0);
    }
    i64::from_be_bytes(bytes)
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

    fn issue(tx: &mut Transaction<'_>, workspace_id: &str, name: &str, role: Role) -> Result<IssuedToken, Fail> {
        let member = Member { id: format!("mem_{}", random_hex(8)?), name: name.to_owned(), role };
        let token = new_token()?;
        let token_id = format!("tok_{}", random_hex(8)?);
        tx.execute("INSERT INTO members (workspace_id, id, name, role) VALUES ($1, $2, $3, $4)", &[&workspace_id, &member.id, &member.name, &role.as_str()])?;
        let issued_at = now_millis() as i64;
        tx.execute(
            "INSERT INTO tokens (hash, token_id, workspace_id, member_id, issued_at) VALUES ($1, $2, $3, $4, $5)",
            &[&sha256_hex(token.as_bytes()), &token_id, &workspace_id, &member.id, &issued_at],
        )?;
        Ok(IssuedToken { token_id, member, token })
    }
}

impl Storage for Db {
    fn create_workspace(&self, name: &str, owner_name: &str) -> Result<(String, IssuedToken), StorageError> {
        let id = format!("wsp_{}", random_hex(8)?);
        let token = self.transaction(|tx| {
            tx.execute("INSERT INTO workspaces (id, name) VALUES ($1, $2)", &[&id, &name])?;
            Self::issue(tx, &id, owner_name, Role::Owner)
        })?;
        Ok((id, token))
    }

    fn invite(&self, workspace_id: &str, name: &str, role: Role) -> Result<IssuedToken, StorageError> {
        self.transaction(|tx| {
            if tx.query_opt("SELECT 1 FROM workspaces WHERE id = $1", &[&workspace_id])?.is_none() {
                return Err(Fail::Domain(StorageError::NotFound(format!("workspace {workspace_id}"))));
            }
            Self::issue(tx, workspace_id, name, role)
        })
    }

    fn revoke(&self, workspace_id: &str, token_id: &str) -> Result<(), StorageError> {
        let mut client = self.client()?;
        let changed = client.execute("UPDATE tokens SET revoked = TRUE WHERE token_id = $1 AND workspace_id = $2", &[&token_id, &workspace_id]).map_err(db_error)?;
        if changed == 0 {
            return Err(StorageError::NotFound(format!("token {token_id}")));
        }
        Ok(())
    }

    fn authenticate(&self, token: &str) -> Result<Option<Caller>, StorageError> {
        let mut client = self.client()?;
        let row = client
            .query_opt(
                "SELECT t.token_id, t.workspace_id, m.id, m.name, m.role FROM tokens t JOIN members m ON m.workspace_id = t.workspace_id AND m.id = t.member_id \
                 WHERE t.hash = $1 AND NOT t.revoked",
                &[&sha256_hex(token.as_bytes())],
            )
            .map_err(db_error)?;
        Ok(row.map(|r| Caller { token_id: r.get(0), workspace_id: r.get(1), member: Member { id: r.get(2), name: r.get(3), role: role_from(r.get(4)) } }))
    }

    fn workspace(&self, caller: &Caller) -> Result<WorkspaceInfo, StorageError> {
        let mut client = self.client()?;
        let row = client.query_opt("SELECT id, name FROM workspaces WHERE id = $1", &[&caller.workspace_id]).map_err(db_error)?;
        let row = row.ok_or_else(|| StorageError::NotFound("workspace".into()))?;
        Ok(WorkspaceInfo { id: row.get(0), name: row.get(1), me: caller.member.clone(), features: features() })
    }

    fn members(&self, workspace_id: &str) -> Result<Vec<MemberEntry>, StorageError> {
        let mut client = self.client()?;
        let rows = client.query("SELECT id, name, role FROM members WHERE workspace_id = $1 ORDER BY id", &[&workspace_id]).map_err(db_error)?;
        let mut members: Vec<MemberEntry> = rows.iter().map(|r| MemberEntry { id: r.get(0), name: r.get(1), role: role_from(r.get(2)), tokens: Vec::new() }).collect();
        let tokens = client
            .query("SELECT member_id, token_id, revoked, issued_at FROM tokens WHERE workspace_id = $1 ORDER BY issued_at NULLS FIRST, token_id", &[&workspace_id])
            .map_err(db_error)?;
        for r in &tokens {
            let member_id: String = r.get(0);
            if let Some(member) = members.iter_mut().find(|m| m.id == member_id) {
                member.tokens.push(TokenEntry { token_id: r.get(1), revoked: r.get(2), issued_at: r.get::<_, Option<i64>>(3).map(|v| v as u64) });
            }
        }
        Ok(members)
    }

    fn push(&self, caller: &Caller, project_id: &str, request: &PushRequest, dedupe_key: &str, payload_hash: &str) -> Result<PushOutcome, StorageError> {
        let ws = caller.workspace_id.as_str();
        let lock = key_lock(ws, dedupe_key);
        self.transaction(|tx| {
            // 1. The key: held by a running push, answered before, or ours.
            let free: bool = tx.query_one("SELECT pg_try_advisory_xact_lock($1)", &[&lock])?.get(0);
            if !free {
                return Err(Fail::Domain(StorageError::InFlight));
            }
            if let Some(row) = tx.query_opt("SELECT payload_hash, response FROM dedupe WHERE workspace_id = $1 AND key = $2", &[&ws, &dedupe_key])? {
                let stored: String = row.get(0);
                if stored != payload_hash {
                    return Err(Fail::Domain(StorageError::KeyReused));
                }
                let response: PushResponse = serde_json::from_str(row.get(1)).map_err(StorageError::from)?;
                return Ok(PushOutcome::Replayed(response));
            }
            // 2. The workspace's order: its row stays locked until this commits.
            let Some(row) = tx.query_opt("SELECT cursor FROM workspaces WHERE id = $1 FOR UPDATE", &[&ws])? else {
                return Err(Fail::Domain(StorageError::NotFound("workspace".into())));
            };
            let mut cursor: i64 = row.get(0);
            let head = tx.query_opt("SELECT head, title FROM projects WHERE workspace_id = $1 AND project_id = $2", &[&ws, &project_id])?;
            let current = head.as_ref().map_or(0, |r| r.get::<_, i32>(0) as u32);
            if request.base != current {
                // At most a page of the newer versions (their sizes first, so the rest
                // is never read): the client pulls the rest.
                let base = request.base.min(i32::MAX as u32) as i32;
                let sizes = tx.query(
                    &format!("SELECT number::BIGINT, {VERSION_BYTES} FROM versions WHERE workspace_id = $1 AND project_id = $2 AND number > $3 ORDER BY number"),
                    &[&ws, &project_id, &base],
                )?;
                let (upto, _) = page_end(&sizes, usize::MAX, MAX_PAGE_BYTES);
                let rows = match upto {
                    Some(upto) => tx.query(
                        &format!("SELECT {VERSION_COLUMNS} FROM versions WHERE workspace_id = $1 AND project_id = $2 AND number > $3 AND number <= $4 ORDER BY number"),
                        &[&ws, &project_id, &base, &(upto as i32)],
                    )?,
                    None => Vec::new(),
                };
                let (newer, trimmed) = exact_page(rows.iter().map(version_from), MAX_PAGE_BYTES);
                let more = trimmed || newer.len() < sizes.len();
                return Err(Fail::Domain(StorageError::Stale(StaleBase { project_id: project_id.to_owned(), base: request.base, head: current, newer, more })));
            }
            // A version id the workspace holds already is refused, whoever pushed it: a
            // client recognises its own versions by id. (Under the workspace's lock.)
            let ids: Vec<&str> = request.versions.iter().map(|v| v.client_id.as_str()).collect();
            if let Some(row) = tx.query_opt("SELECT client_id FROM versions WHERE workspace_id = $1 AND client_id = ANY($2) LIMIT 1", &[&ws, &ids])? {
                return Err(Fail::Domain(StorageError::VersionIdTaken(row.get(0))));
            }
            let title = request.versions.last().map(|v| v.title.clone()).unwrap_or_default();
            let new_head = current + request.versions.len() as u32;
            if head.is_some() {
                tx.execute("UPDATE projects SET head = $3, title = $4 WHERE workspace_id = $1 AND project_id = $2", &[&ws, &project_id, &(new_head as i32), &title])?;
            } else {
                tx.execute("INSERT INTO projects (workspace_id, project_id, head, title) VALUES ($1, $2, $3, $4)", &[&ws, &project_id, &(new_head as i32), &title])?;
            }
            let insert = tx.prepare(
                "INSERT INTO versions (workspace_id, project_id, number, cursor, client_id, title, source, author, message, content_hash, created_at, pushed_by, origin) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
            )?;
            let insert_ai = tx.prepare(
                "INSERT INTO ai_activity (workspace_id, cursor, project_id, number, client_id, member_id, pushed_by, model, accepted_at, detail) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
            )?;
            let mut number = current;
            let mut out = Vec::with_capacity(request.versions.len());
            for v in &request.versions {
                number += 1;
                cursor += 1;
                tx.execute(
                    &insert,
                    &[
                        &ws,
                        &project_id,
                        &(number as i32),
                        &cursor,
                        &v.client_id,
                        &v.title,
                        &v.source,
                        // Who pushed it, as the server knows them: never a claimed name.
                        &caller.member.name,
                        &v.message,
                        &v.content_hash,
                        &v.created_at,
                        &caller.member.name,
                        &v.origin,
                    ],
                )?;
                if let Some(ai) = &v.ai {
                    let detail = serde_json::to_string(ai).map_err(StorageError::from)?;
                    let at = ai.accepted_at.min(i64::MAX as u64) as i64;
                    tx.execute(&insert_ai, &[&ws, &cursor, &project_id, &(number as i32), &v.client_id, &caller.member.id, &caller.member.name, &ai.model, &at, &detail])?;
                }
                out.push(PushedVersion { client_id: v.client_id.clone(), number, cursor: cursor as u64 });
            }
            tx.execute("UPDATE workspaces SET cursor = $2 WHERE id = $1", &[&ws, &cursor])?;
            let response = PushResponse { project_id: project_id.to_owned(), head: number, versions: out };
            let json = serde_json::to_string(&response).map_err(StorageError::from)?;
            tx.execute(
                "INSERT INTO dedupe (workspace_id, key, payload_hash, at, response) VALUES ($1, $2, $3, $4, $5)",
                &[&ws, &dedupe_key, &payload_hash, &(now_millis() as i64), &json],
            )?;
            Ok(PushOutcome::Done(response))
        })
    }

    fn changes_page(&self, workspace_id: &str, cursor: u64, limit: usize, max_bytes: usize) -> Result<ChangesResponse, StorageError> {
        let mut client = self.client()?;
        let after = cursor.min(i64::MAX as u64) as i64;
        let limit = limit.clamp(1, i64::MAX as usize - 1);
        // The sizes first (from the column headers: no text is read), then the rows
        // that fit. Cursors are given in commit order (the workspace row is locked
        // while a push numbers its versions), so the second read sees the same rows.
        let sizes = client
            .query(
                &format!("SELECT cursor, {VERSION_BYTES} FROM versions WHERE workspace_id = $1 AND cursor > $2 ORDER BY cursor LIMIT $3"),
                &[&workspace_id, &after, &(limit as i64 + 1)],
            )
            .map_err(db_error)?;
        let (upto, mut more) = page_end(&sizes, limit, max_bytes);
        let rows = match upto {
            Some(upto) => client
                .query(&format!("SELECT {VERSION_COLUMNS} FROM versions WHERE workspace_id = $1 AND cursor > $2 AND cursor <= $3 ORDER BY cursor"), &[&workspace_id, &after, &upto])
                .map_err(db_error)?,
            None => Vec::new(),
        };
        let (versions, trimmed) = exact_page(rows.iter().map(version_from), max_bytes);
        drop(rows);
        more |= trimmed;
        let last = versions.last().map_or(cursor, |v| v.cursor);
        Ok(ChangesResponse { versions, cursor: last, more, features: features() })
    }

    fn project(&self, workspace_id: &str, project_id: &str) -> Result<ProjectHead, StorageError> {
        let mut client = self.client()?;
        let row = client.query_opt("SELECT head, title FROM projects WHERE workspace_id = $1 AND project_id = $2", &[&workspace_id, &project_id]).map_err(db_error)?;
        let row = row.ok_or_else(|| StorageError::NotFound(format!("project {project_id}")))?;
        Ok(ProjectHead { project_id: project_id.to_owned(), head: row.get::<_, i32>(0) as u32, title: row.get(1) })
    }

    fn policy(&self, workspace_id: &str) -> Result<Option<PolicyRecord>, StorageError> {
        let mut client = self.client()?;
        let row = client.query_opt("SELECT record FROM policies WHERE workspace_id = $1", &[&workspace_id]).map_err(db_error)?;
        row.map(|r| serde_json::from_str::<PolicyRecord>(r.get(0)).map_err(StorageError::from)).transpose()
    }

    fn set_policy(&self, workspace_id: &str, record: &PolicyRecord) -> Result<(), StorageError> {
        let text = serde_json::to_string(record)?;
        self.transaction(|tx| {
            if tx.query_opt("SELECT 1 FROM workspaces WHERE id = $1", &[&workspace_id])?.is_none() {
                return Err(Fail::Domain(StorageError::NotFound(format!("workspace {workspace_id}"))));
            }
            tx.execute("INSERT INTO policies (workspace_id, record) VALUES ($1, $2) ON CONFLICT (workspace_id) DO UPDATE SET record = EXCLUDED.record", &[&workspace_id, &text])?;
            Ok(())
        })
    }

    fn perf_push(&self, caller: &Caller, records: &[PerfRecord]) -> Result<PerfPushResponse, StorageError> {
        let ws = caller.workspace_id.as_str();
        let by = caller.member.name.as_str();
        self.transaction(|tx| {
            // The workspace's order: its row stays locked until this commits, so cursors
            // are committed in the order they are given.
            let Some(row) = tx.query_opt("SELECT perf_cursor FROM workspaces WHERE id = $1 FOR UPDATE", &[&ws])? else {
                return Err(Fail::Domain(StorageError::NotFound("workspace".into())));
            };
            let mut cursor: i64 = row.get(0);
            let mut acks = Vec::with_capacity(records.len());
            for record in records {
                let kind = record.kind.as_str();
                let held = tx.query_opt("SELECT updated_at, edit_id, deleted, created_by FROM perf_records WHERE workspace_id = $1 AND kind = $2 AND id = $3", &[&ws, &kind, &record.id])?;
                let held_stamp = held.as_ref().map(|r| ((r.get::<_, i64>(0) as u64), r.get::<_, String>(1), r.get::<_, bool>(2)));
                let parent = match (record.kind, &record.publication_id, &record.account_id) {
                    (PerfKind::Snapshot, Some(publication), _) => Some(("publication", publication)),
                    (PerfKind::AccountSnapshot, _, Some(account)) => Some(("account", account)),
                    _ => None,
                };
                let parent_deleted = match parent {
                    Some((parent_kind, parent_id)) => tx
                        .query_opt("SELECT deleted FROM perf_records WHERE workspace_id = $1 AND kind = $2 AND id = $3", &[&ws, &parent_kind, parent_id])?
                        .is_some_and(|r| r.get::<_, bool>(0)),
                    None => false,
                };
                let decision = perf_decision(record, held_stamp.as_ref().map(|(at, edit, deleted)| ((*at, edit.as_str()), *deleted)), parent_deleted);
                if matches!(decision, PerfDecision::Keep | PerfDecision::Conflict) {
                    acks.push(perf_unapplied(record, decision));
                    continue;
                }
                match (decision, record.kind) {
                    (PerfDecision::WriteAndDropSnapshots, PerfKind::Account) => {
                        tx.execute("DELETE FROM perf_records WHERE workspace_id = $1 AND kind = 'accountSnapshot' AND account_id = $2", &[&ws, &record.id])?;
                    }
                    (PerfDecision::WriteAndDropSnapshots, _) => {
                        tx.execute("DELETE FROM perf_records WHERE workspace_id = $1 AND kind = 'snapshot' AND publication_id = $2", &[&ws, &record.id])?;
                    }
                    _ => {}
                }
                cursor += 1;
                let created_by: String = held.as_ref().map_or_else(|| by.to_owned(), |r| r.get(3));
                let updated_at = record.updated_at.min(i64::MAX as u64) as i64;
                tx.execute(
                    "INSERT INTO perf_records (workspace_id, kind, id, project_id, publication_id, updated_at, edit_id, deleted, body, created_by, pushed_by, cursor, account_id) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) \
                     ON CONFLICT (workspace_id, kind, id) DO UPDATE SET project_id = EXCLUDED.project_id, publication_id = EXCLUDED.publication_id, account_id = EXCLUDED.account_id, \
                     updated_at = EXCLUDED.updated_at, edit_id = EXCLUDED.edit_id, deleted = EXCLUDED.deleted, body = EXCLUDED.body, pushed_by = EXCLUDED.pushed_by, cursor = EXCLUDED.cursor",
                    &[&ws, &kind, &record.id, &record.project_id, &record.publication_id, &updated_at, &record.edit_id, &record.deleted, &record.body, &created_by, &by, &cursor, &record.account_id],
                )?;
                acks.push(PerfAck { kind: record.kind, id: record.id.clone(), edit_id: record.edit_id.clone(), applied: true, conflict: false });
            }
            tx.execute("UPDATE workspaces SET perf_cursor = $2 WHERE id = $1", &[&ws, &cursor])?;
            Ok(PerfPushResponse { acks })
        })
    }

    fn perf_changes(&self, workspace_id: &str, cursor: u64, limit: usize) -> Result<PerfChangesResponse, StorageError> {
        let mut client = self.client()?;
        let after = cursor.min(i64::MAX as u64) as i64;
        let limit = limit.clamp(1, i64::MAX as usize - 1);
        let rows = client
            .query(
                &format!("SELECT {PERF_COLUMNS} FROM perf_records WHERE workspace_id = $1 AND cursor > $2 ORDER BY cursor LIMIT $3"),
                &[&workspace_id, &after, &(limit as i64 + 1)],
            )
            .map_err(db_error)?;
        let more = rows.len() > limit;
        let records: Vec<ServerPerfRecord> = rows.iter().take(limit).map(perf_from).collect();
        let last = records.last().map_or(cursor, |r| r.cursor);
        Ok(PerfChangesResponse { records, cursor: last, more })
    }

    fn ai_activity(&self, workspace_id: &str, only_member: Option<&str>, query: &AiActivityQuery) -> Result<AiActivityResponse, StorageError> {
        let mut client = self.client()?;
        let limit = query.page();
        let since = query.since.map(|s| s.min(i64::MAX as u64) as i64);
        let until = query.until.map(|u| u.min(i64::MAX as u64) as i64);
        let rows = client
            .query(
                "SELECT a.project_id, p.title, a.number, a.client_id, a.cursor, a.member_id, a.pushed_by, a.detail \
                 FROM ai_activity a LEFT JOIN projects p ON p.workspace_id = a.workspace_id AND p.project_id = a.project_id \
                 WHERE a.workspace_id = $1 AND ($2::TEXT IS NULL OR a.member_id = $2) AND ($3::TEXT IS NULL OR a.project_id = $3) \
                 AND ($4::TEXT IS NULL OR a.pushed_by = $4) AND ($5::TEXT IS NULL OR a.model = $5) \
                 AND ($6::BIGINT IS NULL OR a.accepted_at >= $6) AND ($7::BIGINT IS NULL OR a.accepted_at < $7) \
                 ORDER BY a.accepted_at DESC, a.cursor DESC LIMIT $8",
                &[&workspace_id, &only_member, &query.project, &query.person, &query.model, &since, &until, &(limit as i64 + 1)],
            )
            .map_err(db_error)?;
        let mut entries = Vec::with_capacity(rows.len());
        for row in &rows {
            entries.push(AiActivityEntry {
                project_id: row.get(0),
                project_title: row.get(1),
                number: row.get::<_, i32>(2) as u32,
                client_id: row.get(3),
                cursor: row.get::<_, i64>(4) as u64,
                member_id: row.get(5),
                pushed_by: row.get(6),
                ai: serde_json::from_str(row.get(7))?,
            });
        }
        Ok(super::ai_page(entries, limit))
    }

    fn prune_dedupe(&self, now: u64) -> Result<usize, StorageError> {
        let mut client = self.client()?;
        let before = now.saturating_sub(DEDUPE_KEEP_MILLIS) as i64;
        let n = client.execute("DELETE FROM dedupe WHERE at < $1", &[&before]).map_err(db_error)?;
        Ok(n as usize)
    }
}
