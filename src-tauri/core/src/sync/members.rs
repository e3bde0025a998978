//! Membership of the connected workspace, and leaving it.
//!
//! - [`members`] lists the server's members with their tokens' ids; [`invite`] makes a
//!   member and returns their token to the caller once (it is never written to the
//!   store, the keychain or a log: the person shares it); [`revoke`] revokes a token.
//!   Inviting and revoking are the owner's: the server decides, and its 403 becomes
//!   PERMISSION_DENIED with the `owner_only` hint.
//! - [`disconnect`] removes the token from the keychain and the connection from the
//!   store. The delivery jobs stay, paused, and so does everything local; the old
//!   connection is kept (without a token) so that connecting to the same workspace
//!   again continues where it stopped, and so that unsynced jobs are never sent to
//!   another workspace.

use serde::{Deserialize, Serialize};

use inkstone_sync_proto::{InviteRequest, MemberEntry, Role};

use super::transport::Failure;
use super::{connection, lock, owed, token, token_account, Connection, Runtime};
use crate::error::{ApiError, ErrorCode};
use crate::kernel::Kernel;
use crate::model::Timestamp;
use crate::outbox::Paused;
use crate::store::{Batch, Durability, Kind, Record};

/// A member's role, as the API takes and gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum MemberRole {
    Owner,
    Editor,
    Viewer,
}

impl MemberRole {
    fn wire(self) -> Role {
        match self {
            MemberRole::Owner => Role::Owner,
            MemberRole::Editor => Role::Editor,
            MemberRole::Viewer => Role::Viewer,
        }
    }

    fn of(role: Role) -> MemberRole {
        match role {
            Role::Owner => MemberRole::Owner,
            Role::Editor => MemberRole::Editor,
            Role::Viewer => MemberRole::Viewer,
        }
    }
}

/// One token of a member: its id, never the token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemberToken {
    pub token_id: String,
    pub revoked: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issued_at: Option<Timestamp>,
}

/// A member of the connected workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncMember {
    pub member_id: String,
    pub name: String,
    pub role: MemberRole,
    /// The newest token that still works, else the newest one: what `revoke` takes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_id: Option<String>,
    /// Every token of the member, oldest first.
    pub tokens: Vec<MemberToken>,
    /// When the member's first token was issued (unknown for older servers' records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub joined_at: Option<Timestamp>,
    /// Every token of the member is revoked.
    pub revoked: bool,
    /// The member this data folder is connected as.
    pub me: bool,
    /// For `me`: `…` and the last characters of this folder's token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_fingerprint: Option<String>,
}

fn member_view(entry: MemberEntry, connection: &Connection) -> SyncMember {
    let tokens: Vec<MemberToken> = entry
        .tokens
        .into_iter()
        .map(|t| MemberToken { token_id: t.token_id, revoked: t.revoked, issued_at: t.issued_at.and_then(|ms| chrono::DateTime::from_timestamp_millis(ms as i64)) })
        .collect();
    let active = tokens.iter().rev().find(|t| !t.revoked).or(tokens.last()).map(|t| t.token_id.clone());
    let me = entry.id == connection.member_id;
    SyncMember {
        member_id: entry.id,
        name: entry.name,
        role: MemberRole::of(entry.role),
        token_id: active,
        joined_at: tokens.iter().filter_map(|t| t.issued_at).min(),
        revoked: !tokens.is_empty() && tokens.iter().all(|t| t.revoked),
        tokens,
        me,
        token_fingerprint: me.then(|| connection.token_fingerprint.clone()),
    }
}

/// The connection, or CONFLICT with the `connect` hint.
fn connected(kernel: &Kernel) -> Result<Connection, ApiError> {
    connection(kernel)?
        .ok_or_else(|| ApiError::new(ErrorCode::Conflict, "This data folder is not connected to a workspace server.").problem("sync.not_connected", &[]).action("connect", &[]))
}

/// A membership request's failure in the API's terms.
fn refused(failure: Failure, connection: &Connection, what: &str) -> ApiError {
    match failure {
        Failure::Network(detail) => ApiError::new(ErrorCode::Offline, format!("The workspace server could not be reached ({detail})."))
            .problem("sync.unreachable", &[])
            .hint("check_server", "Check the connection and that the server is running, then try again."),
        Failure::Status { status: 401, .. } => ApiError::new(ErrorCode::PermissionDenied, "The server no longer accepts this data folder's token (it may have been revoked).")
            .problem("sync.token_refused", &[])
            .hint("reconnect", "Ask a workspace owner for a new invite token and connect again."),
        Failure::Status { status: 403, .. } => ApiError::new(
            ErrorCode::PermissionDenied,
            format!("Only a workspace owner can {what}; you are connected to \"{}\" as {}.", connection.remote_workspace_name, connection.role),
        )
        .problem("sync.owner_only", &[])
        .hint("owner_only", "Ask an owner of the workspace to do it.")
        .details(serde_json::json!({"reason": "forbidden", "needs": "owner", "role": connection.role})),
        Failure::Status { status: 404, message, .. } => ApiError::new(ErrorCode::NotFound, message),
        Failure::Status { status: 400, message, .. } => ApiError::new(ErrorCode::Validation, message),
        other => super::server_failed(other),
    }
}

/// The connected workspace's members, as the server has them.
///
/// Errors: CONFLICT when not connected; OFFLINE; PERMISSION_DENIED when the token is
/// no longer accepted.
pub fn members(kernel: &Kernel, runtime: &Runtime) -> Result<(Connection, Vec<SyncMember>), ApiError> {
    let connection = connected(kernel)?;
    let token = token(kernel)?;
    let listed = runtime.transport(kernel)?.members(&connection.server_url, &token).map_err(|f| refused(f, &connection, "list members"))?;
    let members = listed.members.into_iter().map(|m| member_view(m, &connection)).collect();
    Ok((connection, members))
}

/// A new member and their token. The token goes to the caller only.
#[derive(Debug, Clone)]
pub struct Invited {
    pub member: SyncMember,
    pub token: String,
}

/// Invites `name` with `role` (owners only).
///
/// Errors: VALIDATION on `name` (1–100 characters); CONFLICT when not connected;
/// OFFLINE; PERMISSION_DENIED (`owner_only`) for an editor or a viewer.
pub fn invite(kernel: &Kernel, runtime: &Runtime, name: &str, role: MemberRole) -> Result<Invited, ApiError> {
    let name = crate::error::required_text("name", name, 100)?;
    let connection = connected(kernel)?;
    let token = token(kernel)?;
    let issued =
        runtime.transport(kernel)?.invite(&connection.server_url, &token, &InviteRequest { name, role: role.wire() }).map_err(|f| refused(f, &connection, "invite members"))?;
    let entry = MemberEntry {
        id: issued.member.id,
        name: issued.member.name,
        role: issued.member.role,
        tokens: vec![inkstone_sync_proto::TokenEntry { token_id: issued.token_id, revoked: false, issued_at: Some(kernel.now().timestamp_millis().max(0) as u64) }],
    };
    Ok(Invited { member: member_view(entry, &connection), token: issued.token })
}

/// Revokes the token `token_id` of a member of the connected workspace (owners only).
/// The person's own tokens are refused: leaving is `disconnect`.
///
/// Errors: VALIDATION on `tokenId` (its form, or the person's own token); NOT_FOUND
/// when no member holds it; CONFLICT when not connected; OFFLINE; PERMISSION_DENIED
/// (`owner_only`).
pub fn revoke(kernel: &Kernel, runtime: &Runtime, token_id: &str) -> Result<(), ApiError> {
    let token_id = token_id.trim();
    if token_id.is_empty() || token_id.len() > 100 || !token_id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        return Err(ApiError::validation("tokenId", "A token id is 1–100 letters, digits, `_` or `-` (as `sync members` lists it)."));
    }
    let (connection, listed) = members(kernel, runtime)?;
    let Some(holder) = listed.iter().find(|m| m.tokens.iter().any(|t| t.token_id == token_id)) else {
        return Err(ApiError::not_found("member token", token_id).action("list_members", &[]));
    };
    if holder.me {
        return Err(ApiError::validation("tokenId", "That is a token of your own membership; revoking it would lock this data folder out.")
            .hint("disconnect", "To leave the workspace on this device, disconnect instead."));
    }
    let token = token(kernel)?;
    runtime.transport(kernel)?.revoke(&connection.server_url, &token, token_id).map_err(|f| refused(f, &connection, "revoke members' tokens"))
}

/// The connection this data folder had before `disconnect` (no token).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PreviousConnection {
    pub connection: Connection,
    pub disconnected_at: Timestamp,
}

pub const META_PREVIOUS: &[u8] = b"sync_connection_previous";

impl Record for PreviousConnection {
    const KIND: Kind = Kind::Meta;
    fn key(&self) -> Vec<u8> {
        META_PREVIOUS.to_vec()
    }
}

/// The connection before the last `disconnect`, if any.
pub fn previous(kernel: &Kernel) -> Result<Option<PreviousConnection>, ApiError> {
    Ok(kernel.store().get::<PreviousConnection>(META_PREVIOUS)?)
}

/// What `disconnect` did.
#[derive(Debug, Clone)]
pub struct Disconnected {
    pub workspace_name: String,
    /// Jobs that had not reached the server: kept, paused.
    pub kept_jobs: u32,
}

/// Disconnects this data folder: the token leaves the keychain, the connection the
/// store, and no new delivery jobs are made. Unsynced jobs stay, paused (they go when
/// the person connects to the same workspace again and resumes). Projects, versions
/// and conflicts are untouched.
///
/// Errors: CONFLICT when not connected; KEYCHAIN_UNAVAILABLE (then nothing changed).
pub fn disconnect(kernel: &Kernel, runtime: &Runtime) -> Result<Disconnected, ApiError> {
    // No cycle runs while the connection goes.
    let _cycle = lock(&runtime.cycle);
    let _guard = kernel.write_lock();
    let connection = connected(kernel)?;
    let mut workspace = kernel.workspace()?;
    match kernel.config().secrets.delete(&token_account(&workspace.id)) {
        Ok(()) => {}
        // No keychain at all, and the token came from the process: nothing was kept.
        Err(crate::llm::keychain::KeychainError::Unavailable { .. }) if kernel.config().env_workspace_token.is_some() => {}
        Err(error) => return Err(crate::llm::keychain::workspace_token_error(error)),
    }
    let kept_jobs = super::jobs(kernel)?.iter().filter(|j| owed(&j.state)).count() as u32;
    let mut paused = kernel.store().get::<Paused>(crate::outbox::META_PAUSED)?.unwrap_or_default();
    if !paused.workspaces.contains(&workspace.id) {
        paused.workspaces.push(workspace.id.clone());
    }
    workspace.server_url = None;
    let previous = PreviousConnection { connection: connection.clone(), disconnected_at: kernel.now() };
    let mut batch = Batch::new();
    batch.delete::<Connection>(super::META_CONNECTION.to_vec());
    batch.delete::<super::LastFailure>(super::META_LAST_FAILURE.to_vec());
    batch.put(&workspace)?.put(&previous)?.put(&paused)?;
    kernel.store().apply(batch, Durability::Durable)?;
    runtime.set_health(|health| *health = super::Health::default());
    Ok(Disconnected { workspace_name: connection.remote_workspace_name, kept_jobs })
}
