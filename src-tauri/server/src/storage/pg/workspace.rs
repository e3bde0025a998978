//! Workspaces, their members and tokens, and the workspace policy: created, invited,
//! revoked, a token told to its caller (kept as its SHA-256 only), the policy set and read.

use inkstone_sync_proto::{IssuedToken, Member, MemberEntry, PolicyRecord, Role, TokenEntry, WorkspaceInfo};
use postgres::Transaction;

use super::{db_error, Db, Fail};
use crate::storage::{features, new_token, now_millis, random_hex, sha256_hex, Caller, StorageError};

fn role_from(text: &str) -> Role {
    match text {
        "owner" => Role::Owner,
        "editor" => Role::Editor,
        _ => Role::Viewer,
    }
}

impl Db {
    pub(super) fn issue(tx: &mut Transaction<'_>, workspace_id: &str, name: &str, role: Role) -> Result<IssuedToken, Fail> {
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

    pub(super) fn create_workspace(&self, name: &str, owner_name: &str) -> Result<(String, IssuedToken), StorageError> {
        let id = format!("wsp_{}", random_hex(8)?);
        let token = self.transaction(|tx| {
            tx.execute("INSERT INTO workspaces (id, name) VALUES ($1, $2)", &[&id, &name])?;
            Self::issue(tx, &id, owner_name, Role::Owner)
        })?;
        Ok((id, token))
    }

    pub(super) fn invite(&self, workspace_id: &str, name: &str, role: Role) -> Result<IssuedToken, StorageError> {
        self.transaction(|tx| {
            if tx.query_opt("SELECT 1 FROM workspaces WHERE id = $1", &[&workspace_id])?.is_none() {
                return Err(Fail::Domain(StorageError::NotFound(format!("workspace {workspace_id}"))));
            }
            Self::issue(tx, workspace_id, name, role)
        })
    }

    pub(super) fn revoke(&self, workspace_id: &str, token_id: &str) -> Result<(), StorageError> {
        let mut client = self.client()?;
        let changed = client.execute("UPDATE tokens SET revoked = TRUE WHERE token_id = $1 AND workspace_id = $2", &[&token_id, &workspace_id]).map_err(db_error)?;
        if changed == 0 {
            return Err(StorageError::NotFound(format!("token {token_id}")));
        }
        Ok(())
    }

    pub(super) fn authenticate(&self, token: &str) -> Result<Option<Caller>, StorageError> {
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

    pub(super) fn workspace(&self, caller: &Caller) -> Result<WorkspaceInfo, StorageError> {
        let mut client = self.client()?;
        let row = client.query_opt("SELECT id, name FROM workspaces WHERE id = $1", &[&caller.workspace_id]).map_err(db_error)?;
        let row = row.ok_or_else(|| StorageError::NotFound("workspace".into()))?;
        Ok(WorkspaceInfo { id: row.get(0), name: row.get(1), me: caller.member.clone(), features: features() })
    }

    pub(super) fn members(&self, workspace_id: &str) -> Result<Vec<MemberEntry>, StorageError> {
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

    pub(super) fn policy(&self, workspace_id: &str) -> Result<Option<PolicyRecord>, StorageError> {
        let mut client = self.client()?;
        let row = client.query_opt("SELECT record FROM policies WHERE workspace_id = $1", &[&workspace_id]).map_err(db_error)?;
        row.map(|r| serde_json::from_str::<PolicyRecord>(r.get(0)).map_err(StorageError::from)).transpose()
    }

    pub(super) fn set_policy(&self, workspace_id: &str, record: &PolicyRecord) -> Result<(), StorageError> {
        let text = serde_json::to_string(record)?;
        self.transaction(|tx| {
            if tx.query_opt("SELECT 1 FROM workspaces WHERE id = $1", &[&workspace_id])?.is_none() {
                return Err(Fail::Domain(StorageError::NotFound(format!("workspace {workspace_id}"))));
            }
            tx.execute("INSERT INTO policies (workspace_id, record) VALUES ($1, $2) ON CONFLICT (workspace_id) DO UPDATE SET record = EXCLUDED.record", &[&workspace_id, &text])?;
            Ok(())
        })
    }
}
