//! Workspaces, their members and their tokens: created, invited, revoked, and a token
//! told to its caller. A token is kept as its SHA-256 only.

use inkstone_sync_proto::{IssuedToken, Member, MemberEntry, Role, TokenEntry, WorkspaceInfo};
use serde::{Deserialize, Serialize};
use sled::transaction::Transactional;

use super::{abort, key, tx_error, Sled};
use crate::storage::{features, new_token, now_millis, random_hex, sha256_hex, Caller, StorageError};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WorkspaceRecord {
    id: String,
    name: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct TokenRecord {
    token_id: String,
    workspace_id: String,
    member_id: String,
    revoked: bool,
    /// Unix milliseconds of the invite (absent in records written before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    issued_at: Option<u64>,
}

impl Sled {
    pub(super) fn create_workspace(&self, name: &str, owner_name: &str) -> Result<(String, IssuedToken), StorageError> {
        let id = format!("wsp_{}", random_hex(8)?);
        self.workspaces.insert(id.as_bytes(), serde_json::to_vec(&WorkspaceRecord { id: id.clone(), name: name.to_owned() })?)?;
        let token = self.issue(&id, owner_name, Role::Owner)?;
        Ok((id, token))
    }

    pub(super) fn invite(&self, workspace_id: &str, name: &str, role: Role) -> Result<IssuedToken, StorageError> {
        if self.workspaces.get(workspace_id.as_bytes())?.is_none() {
            return Err(StorageError::NotFound(format!("workspace {workspace_id}")));
        }
        self.issue(workspace_id, name, role)
    }

    pub(super) fn revoke(&self, workspace_id: &str, token_id: &str) -> Result<(), StorageError> {
        let missing = || StorageError::NotFound(format!("token {token_id}"));
        let hash = self.token_ids.get(token_id.as_bytes())?.ok_or_else(missing)?;
        let mut record: TokenRecord = Sled::get(&self.tokens, &hash)?.ok_or_else(missing)?;
        if record.workspace_id != workspace_id {
            return Err(missing());
        }
        record.revoked = true;
        self.tokens.insert(hash, serde_json::to_vec(&record)?)?;
        self.durable()
    }

    pub(super) fn authenticate(&self, token: &str) -> Result<Option<Caller>, StorageError> {
        let Some(record) = Sled::get::<TokenRecord>(&self.tokens, sha256_hex(token.as_bytes()).as_bytes())? else { return Ok(None) };
        if record.revoked {
            return Ok(None);
        }
        let Some(member) = self.member(&record.workspace_id, &record.member_id)? else { return Ok(None) };
        Ok(Some(Caller { token_id: record.token_id, workspace_id: record.workspace_id, member }))
    }

    pub(super) fn workspace_info(&self, caller: &Caller) -> Result<WorkspaceInfo, StorageError> {
        let record: WorkspaceRecord = Sled::get(&self.workspaces, caller.workspace_id.as_bytes())?.ok_or_else(|| StorageError::NotFound("workspace".into()))?;
        Ok(WorkspaceInfo { id: record.id, name: record.name, me: caller.member.clone(), features: features() })
    }

    pub(super) fn member_entries(&self, workspace_id: &str) -> Result<Vec<MemberEntry>, StorageError> {
        let mut prefix = workspace_id.as_bytes().to_vec();
        prefix.push(0);
        let mut members: Vec<MemberEntry> = self
            .members
            .scan_prefix(prefix)
            .values()
            .map(|v| {
                let member: Member = serde_json::from_slice(&v?)?;
                Ok(MemberEntry { id: member.id, name: member.name, role: member.role, tokens: Vec::new() })
            })
            .collect::<Result<_, StorageError>>()?;
        // token_ids maps id → hash; tokens maps hash → record. A workspace has few tokens.
        for entry in self.token_ids.iter() {
            let (_, hash) = entry?;
            let Some(record) = Sled::get::<TokenRecord>(&self.tokens, &hash)? else { continue };
            if record.workspace_id != workspace_id {
                continue;
            }
            if let Some(member) = members.iter_mut().find(|m| m.id == record.member_id) {
                member.tokens.push(TokenEntry { token_id: record.token_id, revoked: record.revoked, issued_at: record.issued_at });
            }
        }
        for member in &mut members {
            member.tokens.sort_by(|a, b| (a.issued_at, &a.token_id).cmp(&(b.issued_at, &b.token_id)));
        }
        Ok(members)
    }

    fn member(&self, workspace_id: &str, member_id: &str) -> Result<Option<Member>, StorageError> {
        Self::get(&self.members, &key(&[workspace_id.as_bytes(), member_id.as_bytes()]))
    }

    fn issue(&self, workspace_id: &str, name: &str, role: Role) -> Result<IssuedToken, StorageError> {
        let member = Member { id: format!("mem_{}", random_hex(8)?), name: name.to_owned(), role };
        let token = new_token()?;
        let token_id = format!("tok_{}", random_hex(8)?);
        let record = TokenRecord { token_id: token_id.clone(), workspace_id: workspace_id.to_owned(), member_id: member.id.clone(), revoked: false, issued_at: Some(now_millis()) };
        let hash = sha256_hex(token.as_bytes());
        (&self.members, &self.tokens, &self.token_ids)
            .transaction(|(members, tokens, token_ids)| {
                members.insert(key(&[workspace_id.as_bytes(), member.id.as_bytes()]), serde_json::to_vec(&member).map_err(abort)?)?;
                tokens.insert(hash.as_bytes(), serde_json::to_vec(&record).map_err(abort)?)?;
                token_ids.insert(token_id.as_bytes(), hash.as_bytes())?;
                Ok(())
            })
            .map_err(tx_error)?;
        self.durable()?;
        Ok(IssuedToken { token_id, member, token })
    }
}
