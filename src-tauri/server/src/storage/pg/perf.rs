//! Performance records (publications, snapshots, account days): pushed and decided
//! against what is held (see `perf_decision`), and pulled from a log of each record's
//! latest write.

use inkstone_sync_proto::{PerfAck, PerfChangesResponse, PerfKind, PerfPushResponse, PerfRecord, ServerPerfRecord};
use postgres::Row;

use super::{db_error, Db, Fail};
use crate::storage::{perf_decision, perf_unapplied, Caller, PerfDecision, StorageError};

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

impl Db {
    pub(super) fn perf_push(&self, caller: &Caller, records: &[PerfRecord]) -> Result<PerfPushResponse, StorageError> {
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

    pub(super) fn perf_changes(&self, workspace_id: &str, cursor: u64, limit: usize) -> Result<PerfChangesResponse, StorageError> {
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
}
