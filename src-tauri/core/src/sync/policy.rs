//! The workspace policy, the client half: fetched from a server that lists the
//! `workspacePolicy` feature (at connect, after every complete pull, and when the
//! person looks at it), kept as [`CachedPolicy`] and enforced from there by
//! `llm::Runtime` whether the server can be reached or not.
//!
//! - A server without the feature (older) has no policy: the cached one is removed
//!   when such a server answers, so nothing an older server cannot show is enforced.
//! - An unreachable server changes nothing: the last policy seen holds (offline).
//! - Setting is the owner's: the server decides, and its 403 becomes PERMISSION_DENIED
//!   with the `owner_only` hint; the stored answer replaces the cached policy at once.

use inkstone_sync_proto::{PolicyRecord, FEATURE_WORKSPACE_POLICY};
use serde::{Deserialize, Serialize};

use super::transport::{Failure, Transport};
use super::{connection, token, Connection, Runtime};
use crate::error::{ApiError, ErrorCode};
use crate::kernel::Kernel;
use crate::llm::ApiKey;
use crate::policy::{CachedPolicy, Policy, META_POLICY};
use crate::store::{Batch, Durability};

/// The cached form of a server's record.
pub(crate) fn cached(record: PolicyRecord, connection: &Connection, now: crate::model::Timestamp) -> CachedPolicy {
    CachedPolicy {
        workspace_id: connection.remote_workspace_id.clone(),
        workspace_name: connection.remote_workspace_name.clone(),
        policy: Policy::from(record.policy),
        set_by: record.set_by.map(|m| m.name),
        set_at: record.set_at.and_then(|ms| chrono::DateTime::from_timestamp_millis(i64::try_from(ms).ok()?)),
        fetched_at: now,
    }
}

/// Whether a server's features include the policy.
pub(crate) fn keeps_policy(features: &[String]) -> bool {
    features.iter().any(|f| f == FEATURE_WORKSPACE_POLICY)
}

/// Stages what a server's answer says of the policy: `fetched` when it has one, its
/// absence when the server lacks the feature. A failed fetch from a server with the
/// feature changes nothing (the last policy holds).
pub(crate) fn stage(batch: &mut Batch, has_feature: bool, fetched: Option<CachedPolicy>) -> Result<(), ApiError> {
    match (has_feature, fetched) {
        (true, Some(policy)) => {
            batch.put(&policy)?;
        }
        (true, None) => {}
        (false, _) => {
            batch.delete::<CachedPolicy>(META_POLICY.to_vec());
        }
    }
    Ok(())
}

/// Fetches and stores the policy after a pull (best effort: a failure keeps the last).
pub(crate) fn refresh(kernel: &Kernel, transport: &Transport, connection: &Connection, token: &ApiKey, has_feature: bool) -> Result<(), ApiError> {
    let fetched = if has_feature { transport.policy(&connection.server_url, token).ok().map(|r| cached(r, connection, kernel.now())) } else { None };
    let _guard = kernel.write_lock();
    let mut batch = Batch::new();
    stage(&mut batch, has_feature, fetched)?;
    kernel.store().apply(batch, Durability::Durable)?;
    Ok(())
}

/// The policy as the person sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyStanding {
    /// The policy this app enforces; None: none (not connected, or an older server).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<CachedPolicy>,
    /// Whether the person may change it (an owner, connected to a server that has it).
    pub can_set: bool,
    /// Whether the server was asked just now and answered; false: the policy shown is
    /// the last one seen (offline).
    pub fresh: bool,
    /// What the person spent this calendar month (for the caps).
    pub spent: crate::policy::MonthSpent,
}

/// The policy, asked of the server when it can be (else the one last seen).
///
/// Errors: store errors only; an unreachable server is `fresh: false`.
pub fn show(kernel: &Kernel, runtime: &Runtime) -> Result<PolicyStanding, ApiError> {
    let mut fresh = false;
    let mut can_set = false;
    if let Some(connection) = connection(kernel)? {
        let token = token(kernel)?;
        let transport = runtime.transport(kernel)?;
        // The workspace's features first: an older server has no policy route.
        if let Ok(info) = transport.workspace(&connection.server_url, &token) {
            let has_feature = keeps_policy(&info.features);
            let fetched = if has_feature { transport.policy(&connection.server_url, &token).ok().map(|r| cached(r, &connection, kernel.now())) } else { None };
            fresh = !has_feature || fetched.is_some();
            can_set = has_feature && info.me.role == inkstone_sync_proto::Role::Owner;
            let _guard = kernel.write_lock();
            let mut batch = Batch::new();
            stage(&mut batch, has_feature, fetched)?;
            kernel.store().apply(batch, Durability::Durable)?;
        }
    }
    standing(kernel, fresh, can_set)
}

fn standing(kernel: &Kernel, fresh: bool, can_set: bool) -> Result<PolicyStanding, ApiError> {
    let policy = kernel.store().get::<CachedPolicy>(META_POLICY)?;
    Ok(PolicyStanding { policy, can_set, fresh, spent: crate::policy::month_spent_stored(kernel.store(), kernel.now())? })
}

/// Sets the workspace's policy (owners only) and keeps the server's answer.
///
/// Errors: VALIDATION (the policy: hosts, cap); CONFLICT when not connected or the
/// server has no policy (`match_versions`); OFFLINE; PERMISSION_DENIED (`owner_only`)
/// for an editor or a viewer — nothing changes then.
pub fn set(kernel: &Kernel, runtime: &Runtime, policy: Policy) -> Result<PolicyStanding, ApiError> {
    let wire = inkstone_sync_proto::WorkspacePolicy::from(policy);
    if let Some((field, message)) = wire.invalid() {
        return Err(ApiError::validation(field, message));
    }
    let connection = connection(kernel)?
        .ok_or_else(|| ApiError::new(ErrorCode::Conflict, "This data folder is not connected to a workspace server.").problem("sync.not_connected", &[]).action("connect", &[]))?;
    let token = token(kernel)?;
    let transport = runtime.transport(kernel)?;
    let refused = |failure: Failure| match failure {
        Failure::Status { status: 403, .. } => ApiError::new(
            ErrorCode::PermissionDenied,
            format!("Only a workspace owner can change the policy; you are connected to \"{}\" as {}.", connection.remote_workspace_name, connection.role),
        )
        .problem("sync.owner_only", &[])
        .hint("owner_only", "Ask an owner of the workspace to do it.")
        .details(serde_json::json!({"reason": "forbidden", "needs": "owner", "role": connection.role})),
        Failure::Status { status: 404 | 405, .. } => ApiError::new(ErrorCode::Conflict, "This workspace server keeps no policy (it is older than this app).")
            .hint("match_versions", "If it is the workspace server, update Inkstone and the server to matching versions."),
        Failure::Status { status: 400, message, .. } => ApiError::new(ErrorCode::Validation, message),
        other => super::server_failed(other),
    };
    let record = transport.set_policy(&connection.server_url, &token, &wire).map_err(refused)?;
    let guard = kernel.write_lock();
    let mut batch = Batch::new();
    batch.put(&cached(record, &connection, kernel.now()))?;
    kernel.store().apply(batch, Durability::Durable)?;
    drop(guard);
    standing(kernel, true, connection.role == "owner")
}
