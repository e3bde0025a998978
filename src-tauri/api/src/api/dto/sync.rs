//! The wire form of sync's records: delivery jobs (the outbox), conflicts, members, the
//! overall state, merge regions and the policy's standing (see [`super`]).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::{CachedPolicy, MonthSpent};
use crate::model::Timestamp;
/// Where a job stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "state", rename_all = "camelCase")]
pub enum JobState {
    /// Waiting to be sent.
    Pending,
    /// Sent; no answer yet.
    Dispatched,
    /// A transient failure; sent again at `until`.
    RetryWait { until: Timestamp },
    /// The server numbered the version.
    Acked { number: u32 },
    /// The client recorded the server's number; nothing left to do.
    Finalized,
    /// The server refused the base: the person resolves it (sync's conflict view).
    Conflict { server_head: u32 },
    /// Given up: after the maximum attempts, or a permanent refusal.
    Failed,
    /// A conflict's resolution replaced this job's version: the resolution version
    /// (local number `by_version`) carries its content on the new base. The version
    /// itself stays in the local history.
    #[serde(rename_all = "camelCase")]
    Superseded { by_version: u32 },
}

/// One version to deliver to one workspace server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryJob {
    pub id: String,
    pub workspace_id: String,
    pub project_id: String,
    pub version_id: String,
    pub version_number: u32,
    /// Sent as the push's `Idempotency-Key`: a resend can never duplicate.
    pub dedupe_key: String,
    pub state: JobState,
    /// Sends so far.
    pub attempts: u32,
    /// The server head the first send was based on; every resend carries the same
    /// base, so a resend is byte-for-byte the same push under the same dedupe key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub base: Option<u32>,
    /// The jobs (ids, in order) that the first send carried after this one: a backlog
    /// goes up to [`DeliverySettings::max_batch`] versions per push. Fixed with the
    /// base, so every resend is the same push under the same key ([`push_key`]). Only
    /// on the first job of a push; the others move through the states with it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(optional, as = "Option<Vec<String>>")]
    pub batch: Vec<String>,
    /// The first send carried the versions' origins (the server said it keeps them);
    /// every resend does the same, so it stays the same push. Only on the first job of
    /// a push, as `batch`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[ts(skip)]
    pub with_origin: bool,
    /// The first send carried the versions' AI origin detail (the server keeps it and
    /// the workspace policy shared activity then); resends do the same. As `batch`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[ts(skip)]
    pub with_ai: bool,
    /// The number the server gave the version, once acknowledged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub server_number: Option<u32>,
    /// Why the last attempt failed, for the person (English).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub last_error: Option<String>,
    /// Its stable code, for the UI to word it (`UNREACHABLE`, `UNAUTHORIZED`, ...: the
    /// codes of `SyncStatus::last_error_code`). Absent on jobs of older builds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub last_error_code: Option<String>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// What started a conflict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum ConflictKind {
    /// The server refused a push: its head had moved.
    Push,
    /// A pulled head arrived while the working copy or local versions were unsynced.
    Pull,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum ConflictState {
    Open,
    Resolved,
}

/// One side of a conflict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ConflictSide {
    pub title: String,
    pub source: String,
    pub author: String,
    /// The local version holding it (none for an unsaved working copy or an empty base).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub local_number: Option<u32>,
    /// The server's number, when the server holds it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub server_number: Option<u32>,
}

/// A conflict for the person to resolve.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SyncConflict {
    pub id: String,
    pub project_id: String,
    pub kind: ConflictKind,
    pub state: ConflictState,
    /// The common base: the last content both sides shared.
    pub base: ConflictSide,
    /// The person's side.
    pub mine: ConflictSide,
    /// The server's side.
    pub theirs: ConflictSide,
    /// The three-way merge, when the edits do not overlap (title and source).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub merged: Option<MergedContent>,
    /// Where the edits overlap, for the merge view.
    pub overlaps: Vec<Overlap>,
    /// The delivery jobs the conflict holds back (superseded on resolving).
    pub job_ids: Vec<String>,
    /// The local version that resolved it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub resolution: Option<u32>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct MergedContent {
    pub title: String,
    pub source: String,
}

/// A member's role, as the API takes and gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum MemberRole {
    Owner,
    Editor,
    Viewer,
}

/// One token of a member: its id, never the token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct MemberToken {
    pub token_id: String,
    pub revoked: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub issued_at: Option<Timestamp>,
}

/// A member of the connected workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SyncMember {
    pub member_id: String,
    pub name: String,
    pub role: MemberRole,
    /// The newest token that still works, else the newest one: what `revoke` takes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub token_id: Option<String>,
    /// Every token of the member, oldest first.
    pub tokens: Vec<MemberToken>,
    /// When the member's first token was issued (unknown for older servers' records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub joined_at: Option<Timestamp>,
    /// Every token of the member is revoked.
    pub revoked: bool,
    /// The member this data folder is connected as.
    pub me: bool,
    /// For `me`: `…` and the last characters of this folder's token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub token_fingerprint: Option<String>,
}

/// The state the sidebar shows, most pressing first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum SyncState {
    NotConnected,
    Paused,
    Conflict,
    Offline,
    Failed,
    Pending,
    Synced,
}

/// Two edits of the same lines of the base.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Overlap {
    /// 0-based lines of the base both sides changed (the whole conflict region).
    pub base_start: u32,
    pub base_len: u32,
    /// What the person put there.
    pub mine: String,
    /// What the server's side put there.
    pub theirs: String,
}

/// Which side a region of the merge takes its text from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum RegionKind {
    /// Lines neither side changed.
    Same,
    /// Only the person changed these lines.
    Mine,
    /// Only the server's side changed these lines.
    Theirs,
    /// Both sides made the same edit: taken once.
    Both,
    /// Both sides changed these lines differently: the person decides.
    Conflict,
}

/// One region of a three-way merge, in base order. Regions cover the base without gaps,
/// and the text each non-conflict region takes ([`MergeRegion::merged`]), joined, is the
/// clean merge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct MergeRegion {
    pub kind: RegionKind,
    /// 0-based lines `baseStart..baseEnd` of the base the region covers (equal for an
    /// insertion).
    pub base_start: u32,
    pub base_end: u32,
    /// The 0-based line of the person's text where the region starts.
    pub mine_line: u32,
    /// The region's text in the base, in the person's text and in the server's.
    pub base: String,
    pub mine: String,
    pub theirs: String,
}

/// The policy as the person sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PolicyStanding {
    /// The policy this app enforces; None: none (not connected, or an older server).
    #[ts(optional)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<CachedPolicy>,
    /// Whether the person may change it (an owner, connected to a server that has it).
    pub can_set: bool,
    /// Whether the server was asked just now and answered; false: the policy shown is
    /// the last one seen (offline).
    pub fresh: bool,
    /// What the person spent this calendar month (for the caps).
    pub spent: MonthSpent,
}

impl From<&crate::outbox::JobState> for JobState {
    fn from(record: &crate::outbox::JobState) -> Self {
        match record {
            crate::outbox::JobState::Pending => Self::Pending,
            crate::outbox::JobState::Dispatched => Self::Dispatched,
            crate::outbox::JobState::RetryWait { until } => Self::RetryWait { until: *until },
            crate::outbox::JobState::Acked { number } => Self::Acked { number: *number },
            crate::outbox::JobState::Finalized => Self::Finalized,
            crate::outbox::JobState::Conflict { server_head } => Self::Conflict { server_head: *server_head },
            crate::outbox::JobState::Failed => Self::Failed,
            crate::outbox::JobState::Superseded { by_version } => Self::Superseded { by_version: *by_version },
        }
    }
}

impl From<&crate::outbox::DeliveryJob> for DeliveryJob {
    fn from(record: &crate::outbox::DeliveryJob) -> Self {
        DeliveryJob {
            id: record.id.clone(),
            workspace_id: record.workspace_id.clone(),
            project_id: record.project_id.clone(),
            version_id: record.version_id.clone(),
            version_number: record.version_number,
            dedupe_key: record.dedupe_key.clone(),
            state: (&record.state).into(),
            attempts: record.attempts,
            base: record.base,
            batch: record.batch.clone(),
            with_origin: record.with_origin,
            with_ai: record.with_ai,
            server_number: record.server_number,
            last_error: record.last_error.clone(),
            last_error_code: record.last_error_code.clone(),
            created_at: record.created_at,
            updated_at: record.updated_at,
        }
    }
}

impl From<&crate::sync::ConflictKind> for ConflictKind {
    fn from(record: &crate::sync::ConflictKind) -> Self {
        match record {
            crate::sync::ConflictKind::Push => Self::Push,
            crate::sync::ConflictKind::Pull => Self::Pull,
        }
    }
}

impl From<&crate::sync::ConflictState> for ConflictState {
    fn from(record: &crate::sync::ConflictState) -> Self {
        match record {
            crate::sync::ConflictState::Open => Self::Open,
            crate::sync::ConflictState::Resolved => Self::Resolved,
        }
    }
}

impl From<&crate::sync::ConflictSide> for ConflictSide {
    fn from(record: &crate::sync::ConflictSide) -> Self {
        ConflictSide {
            title: record.title.clone(),
            source: record.source.clone(),
            author: record.author.clone(),
            local_number: record.local_number,
            server_number: record.server_number,
        }
    }
}

impl From<&crate::sync::SyncConflict> for SyncConflict {
    fn from(record: &crate::sync::SyncConflict) -> Self {
        SyncConflict {
            id: record.id.clone(),
            project_id: record.project_id.clone(),
            kind: (&record.kind).into(),
            state: (&record.state).into(),
            base: (&record.base).into(),
            mine: (&record.mine).into(),
            theirs: (&record.theirs).into(),
            merged: record.merged.as_ref().map(Into::into),
            overlaps: record.overlaps.iter().map(Into::into).collect(),
            job_ids: record.job_ids.clone(),
            resolution: record.resolution,
            created_at: record.created_at,
            updated_at: record.updated_at,
        }
    }
}

impl From<&crate::sync::MergedContent> for MergedContent {
    fn from(record: &crate::sync::MergedContent) -> Self {
        MergedContent { title: record.title.clone(), source: record.source.clone() }
    }
}

impl From<&crate::sync::members::MemberRole> for MemberRole {
    fn from(record: &crate::sync::members::MemberRole) -> Self {
        match record {
            crate::sync::members::MemberRole::Owner => Self::Owner,
            crate::sync::members::MemberRole::Editor => Self::Editor,
            crate::sync::members::MemberRole::Viewer => Self::Viewer,
        }
    }
}

impl From<&crate::sync::members::MemberToken> for MemberToken {
    fn from(record: &crate::sync::members::MemberToken) -> Self {
        MemberToken { token_id: record.token_id.clone(), revoked: record.revoked, issued_at: record.issued_at }
    }
}

impl From<&crate::sync::members::SyncMember> for SyncMember {
    fn from(record: &crate::sync::members::SyncMember) -> Self {
        SyncMember {
            member_id: record.member_id.clone(),
            name: record.name.clone(),
            role: (&record.role).into(),
            token_id: record.token_id.clone(),
            tokens: record.tokens.iter().map(Into::into).collect(),
            joined_at: record.joined_at,
            revoked: record.revoked,
            me: record.me,
            token_fingerprint: record.token_fingerprint.clone(),
        }
    }
}

impl From<&crate::sync::SyncState> for SyncState {
    fn from(record: &crate::sync::SyncState) -> Self {
        match record {
            crate::sync::SyncState::NotConnected => Self::NotConnected,
            crate::sync::SyncState::Paused => Self::Paused,
            crate::sync::SyncState::Conflict => Self::Conflict,
            crate::sync::SyncState::Offline => Self::Offline,
            crate::sync::SyncState::Failed => Self::Failed,
            crate::sync::SyncState::Pending => Self::Pending,
            crate::sync::SyncState::Synced => Self::Synced,
        }
    }
}

impl From<&crate::sync::merge::Overlap> for Overlap {
    fn from(record: &crate::sync::merge::Overlap) -> Self {
        Overlap { base_start: record.base_start, base_len: record.base_len, mine: record.mine.clone(), theirs: record.theirs.clone() }
    }
}

impl From<&crate::sync::merge::RegionKind> for RegionKind {
    fn from(record: &crate::sync::merge::RegionKind) -> Self {
        match record {
            crate::sync::merge::RegionKind::Same => Self::Same,
            crate::sync::merge::RegionKind::Mine => Self::Mine,
            crate::sync::merge::RegionKind::Theirs => Self::Theirs,
            crate::sync::merge::RegionKind::Both => Self::Both,
            crate::sync::merge::RegionKind::Conflict => Self::Conflict,
        }
    }
}

impl From<&crate::sync::merge::MergeRegion> for MergeRegion {
    fn from(record: &crate::sync::merge::MergeRegion) -> Self {
        MergeRegion {
            kind: (&record.kind).into(),
            base_start: record.base_start,
            base_end: record.base_end,
            mine_line: record.mine_line,
            base: record.base.clone(),
            mine: record.mine.clone(),
            theirs: record.theirs.clone(),
        }
    }
}

impl From<&crate::sync::policy::PolicyStanding> for PolicyStanding {
    fn from(record: &crate::sync::policy::PolicyStanding) -> Self {
        PolicyStanding { policy: record.policy.as_ref().map(Into::into), can_set: record.can_set, fresh: record.fresh, spent: record.spent.into() }
    }
}

impl From<crate::sync::policy::PolicyStanding> for PolicyStanding {
    fn from(record: crate::sync::policy::PolicyStanding) -> Self {
        Self::from(&record)
    }
}

impl From<MemberRole> for crate::sync::members::MemberRole {
    fn from(role: MemberRole) -> Self {
        match role {
            MemberRole::Owner => Self::Owner,
            MemberRole::Editor => Self::Editor,
            MemberRole::Viewer => Self::Viewer,
        }
    }
}
