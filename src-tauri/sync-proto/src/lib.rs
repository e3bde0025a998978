//! The wire types between an Inkstone client (core's `sync` module) and
//! `inkstone-server`. Serde only: no IO, no framework. JSON, camelCase.
//!
//! A client pushes a project's accepted versions with the base it last saw (the
//! server's head for that project); the server numbers them after its head. A stale
//! base is `409` with the versions the client has not seen. Each push carries a dedupe
//! key (`Idempotency-Key`): the same key with the same payload returns the original
//! result; with another payload it is `422`; while the first is still in flight, `409`.

use serde::{Deserialize, Serialize};

/// The header that carries a push's dedupe key.
pub const IDEMPOTENCY_HEADER: &str = "Idempotency-Key";
/// The most versions one push may carry.
pub const MAX_VERSIONS_PER_PUSH: usize = 100;
/// The largest request body, in bytes.
pub const MAX_BODY_BYTES: usize = 8 * 1024 * 1024;

/// A member's role in a workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Viewer,
    Editor,
    Owner,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Viewer => "viewer",
            Role::Editor => "editor",
            Role::Owner => "owner",
        }
    }
}

/// One version as a client pushes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PushVersion {
    /// The client's id of the version (kept, so a client recognises its own versions).
    pub client_id: String,
    pub title: String,
    pub source: String,
    pub author: String,
    #[serde(default)]
    pub message: Option<String>,
    /// `sha256:` + hex of the title, a NUL and the source (as the app computes it).
    pub content_hash: String,
    /// RFC 3339.
    pub created_at: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PushRequest {
    /// The server's head of this project that the client last saw (0: none).
    pub base: u32,
    pub versions: Vec<PushVersion>,
}

/// A version as the server holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerVersion {
    pub project_id: String,
    /// 1, 2, 3, ... per project on the server, without gaps.
    pub number: u32,
    pub client_id: String,
    pub title: String,
    pub source: String,
    pub author: String,
    pub message: Option<String>,
    pub content_hash: String,
    pub created_at: String,
    /// The member who pushed it.
    pub pushed_by: String,
    /// The workspace's change cursor of this version.
    pub cursor: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PushResponse {
    pub project_id: String,
    /// The project's head after the push.
    pub head: u32,
    /// The numbers the server gave the pushed versions, in order.
    pub versions: Vec<PushedVersion>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PushedVersion {
    pub client_id: String,
    pub number: u32,
    pub cursor: u64,
}

/// The body of a `409` for a stale base: what the client has not seen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StaleBase {
    pub project_id: String,
    pub base: u32,
    pub head: u32,
    /// The server's versions after `base`, oldest first.
    pub newer: Vec<ServerVersion>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChangesResponse {
    /// Versions with a cursor above the one asked for, oldest first.
    pub versions: Vec<ServerVersion>,
    /// Ask again from here.
    pub cursor: u64,
    /// True when more changes wait beyond `cursor`.
    pub more: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProjectHead {
    pub project_id: String,
    pub head: u32,
    /// The title of the head version.
    pub title: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Member {
    pub id: String,
    pub name: String,
    pub role: Role,
}

/// A member as the membership list shows it: with their tokens' ids (never a token or
/// its hash), so an owner can revoke one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemberEntry {
    pub id: String,
    pub name: String,
    pub role: Role,
    /// Oldest first.
    #[serde(default)]
    pub tokens: Vec<TokenEntry>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenEntry {
    pub token_id: String,
    pub revoked: bool,
    /// Unix milliseconds of the invite (none for a token issued before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issued_at: Option<u64>,
}

/// `GET /v1/members`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MembersResponse {
    pub members: Vec<MemberEntry>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceInfo {
    pub id: String,
    pub name: String,
    /// The member the token belongs to.
    pub me: Member,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InviteRequest {
    pub name: String,
    pub role: Role,
}

/// A new token: shown once; the server keeps only its hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IssuedToken {
    pub token_id: String,
    pub member: Member,
    pub token: String,
}

/// Every error body: a stable code, a message and hints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorBody {
    pub code: String,
    pub message: String,
    #[serde(default)]
    pub hints: Vec<String>,
    /// For a stale base, what the client has not seen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stale: Option<StaleBase>,
}
