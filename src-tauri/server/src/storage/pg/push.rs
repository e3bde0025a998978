//! Pushes and pulls of versions: one push in one transaction under its dedupe key's
//! lock and the workspace row's, the change pages it is pulled from (cut to a byte
//! budget), a project's head, and the pruning of old dedupe keys.

use inkstone_sync_proto::{ChangesResponse, ProjectHead, PushRequest, PushResponse, PushedVersion, ServerVersion, StaleBase, MAX_PAGE_BYTES};
use postgres::Row;

use super::{db_error, Db, Fail};
use crate::storage::{features, now_millis, sha256_hex, Caller, PushOutcome, StorageError, DEDUPE_KEEP_MILLIS};

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
    let mut page = crate::storage::Page::new(limit, max_bytes);
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
    let mut page = crate::storage::Page::new(usize::MAX, max_bytes);
    let mut out = Vec::new();
    for version in versions {
        if !page.admit(crate::storage::json_len(&version)) {
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

impl Db {
    pub(super) fn push(&self, caller: &Caller, project_id: &str, request: &PushRequest, dedupe_key: &str, payload_hash: &str) -> Result<PushOutcome, StorageError> {
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

    pub(super) fn changes_page(&self, workspace_id: &str, cursor: u64, limit: usize, max_bytes: usize) -> Result<ChangesResponse, StorageError> {
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

    pub(super) fn project(&self, workspace_id: &str, project_id: &str) -> Result<ProjectHead, StorageError> {
        let mut client = self.client()?;
        let row = client.query_opt("SELECT head, title FROM projects WHERE workspace_id = $1 AND project_id = $2", &[&workspace_id, &project_id]).map_err(db_error)?;
        let row = row.ok_or_else(|| StorageError::NotFound(format!("project {project_id}")))?;
        Ok(ProjectHead { project_id: project_id.to_owned(), head: row.get::<_, i32>(0) as u32, title: row.get(1) })
    }

    pub(super) fn prune_dedupe(&self, now: u64) -> Result<usize, StorageError> {
        let mut client = self.client()?;
        let before = now.saturating_sub(DEDUPE_KEEP_MILLIS) as i64;
        let n = client.execute("DELETE FROM dedupe WHERE at < $1", &[&before]).map_err(db_error)?;
        Ok(n as usize)
    }
}
