//! The AI activity rows a push carries, paged by accept time for the workspace's
//! activity view (one member's own, or everyone's for an owner).

use inkstone_sync_proto::{AiActivityEntry, AiActivityQuery, AiActivityResponse};

use super::{db_error, Db};
use crate::storage::StorageError;

impl Db {
    pub(super) fn ai_activity(&self, workspace_id: &str, only_member: Option<&str>, query: &AiActivityQuery) -> Result<AiActivityResponse, StorageError> {
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
        Ok(crate::storage::ai_page(entries, limit))
    }
}
