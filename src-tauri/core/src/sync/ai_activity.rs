//! The team's AI activity, the client half (the server's `aiActivity` feature).
//!
//! - [`of`]: the AI origin detail a pushed version carries while the workspace shares
//!   AI activity, read from the accept's audit record, the proposal and the LLM
//!   profile — who accepted, the model and provider host, the prompt layers, the
//!   proposal and its hunks, through what. Never a prompt, transcript, context, key or
//!   URL. A detail the protocol would refuse (too long, a control character) is left
//!   out rather than failing the push.
//! - [`list`]: the workspace's rows as the server shows them to this member (owners
//!   the workspace, editors their own); `activity::workspace` turns them into the
//!   view's rows.

use inkstone_sync_proto::{AiActivityQuery, AiActivityResponse, AiOrigin, AiThrough};

use super::transport::Failure;
use super::{connection, token, Runtime};
use crate::error::{ApiError, ErrorCode};
use crate::kernel::Kernel;
use crate::llm::profile::{host_of, LlmProfile};
use crate::model::{Version, VersionOrigin};
use crate::proposals::apply::{AuditAction, AuditRecord};
use crate::store::Store;

/// Whether pushes made now carry the detail: the server keeps it and the policy this
/// app last saw shares activity.
pub(crate) fn sharing(store: &Store, server_takes_ai: bool) -> Result<bool, ApiError> {
    if !server_takes_ai {
        return Ok(false);
    }
    Ok(store.get::<crate::policy::CachedPolicy>(crate::policy::META_POLICY)?.is_some_and(|cached| cached.policy.share_activity))
}

/// The provider's host of a profile's base URL, without any user part.
fn provider_host(base_url: &str) -> String {
    let (scheme, rest) = base_url.split_once("://").unwrap_or(("", base_url));
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    let authority = authority.rsplit('@').next().unwrap_or(authority);
    host_of(&format!("{scheme}://{authority}/{path}"))
}

fn through(record: &AuditRecord) -> AiThrough {
    if record.via == "assistant" {
        return AiThrough::ApplyProposal { session_id: record.origin.session_id.clone(), approval_request_id: record.approval_request_id.clone() };
    }
    match (&record.origin.run_id, &record.origin.session_id) {
        (Some(run_id), _) => AiThrough::OptimizeRun { run_id: run_id.clone() },
        (None, Some(session_id)) => AiThrough::DraftingSession { session_id: session_id.clone() },
        (None, None) => AiThrough::Other,
    }
}

/// The detail of `version` when an accepted AI proposal made it; None otherwise, or
/// when the protocol would refuse it.
pub(crate) fn of(store: &Store, version: &Version) -> Result<Option<AiOrigin>, ApiError> {
    let VersionOrigin::AiProposal { proposal_id, session_id, run_id, model, profile_id, .. } = &version.origin else { return Ok(None) };
    let accept = crate::proposals::apply::audit(store, &version.project_id)?
        .into_iter()
        .rev()
        .find(|r| r.version == Some(version.number) && &r.proposal_id == proposal_id && matches!(r.action, AuditAction::Accepted | AuditAction::PartiallyAccepted));
    let provider_host = store.get::<LlmProfile>(profile_id.as_bytes())?.map(|p| provider_host(&p.base_url)).filter(|h| !h.is_empty());
    let n_hunks_total = match crate::proposals::load(store, proposal_id) {
        Ok(proposal) => Some(u32::try_from(proposal.hunks.len()).unwrap_or(u32::MAX)),
        Err(_) => None,
    };
    let millis = |at: crate::model::Timestamp| u64::try_from(at.timestamp_millis()).unwrap_or(0);
    let detail = match accept {
        Some(record) => AiOrigin {
            accepted_by: record.actor.clone(),
            accepted_at: millis(record.at),
            model: model.clone(),
            provider_host,
            prompt_version: Some(record.origin.prompt_version.clone()).filter(|v| !v.is_empty()),
            prompt_layers: record.origin.prompt_layers.clone(),
            proposal_id: proposal_id.clone(),
            n_hunks: u32::try_from(record.hunks.len()).unwrap_or(u32::MAX),
            n_hunks_total,
            through: through(&record),
        },
        // A version whose audit record is gone (an import): what the version says.
        None => AiOrigin {
            accepted_by: version.author.clone(),
            accepted_at: millis(version.created_at),
            model: model.clone(),
            provider_host,
            prompt_version: None,
            prompt_layers: Vec::new(),
            proposal_id: proposal_id.clone(),
            n_hunks: n_hunks_total.unwrap_or(0),
            n_hunks_total,
            through: match (run_id, session_id) {
                (Some(run_id), _) => AiThrough::OptimizeRun { run_id: run_id.clone() },
                (None, Some(session_id)) => AiThrough::DraftingSession { session_id: session_id.clone() },
                (None, None) => AiThrough::Other,
            },
        },
    };
    Ok(detail.invalid().is_none().then_some(detail))
}

/// The server's rows that match `query`, as it shows them to this member.
///
/// Errors: CONFLICT when not connected (`connect`) or the server keeps no AI activity
/// (`match_versions`); OFFLINE (`check_server`) when it cannot be reached;
/// PERMISSION_DENIED for a viewer or a refused token.
pub fn list(kernel: &Kernel, runtime: &Runtime, query: &AiActivityQuery) -> Result<AiActivityResponse, ApiError> {
    let connection = connection(kernel)?.ok_or_else(|| {
        ApiError::new(ErrorCode::Conflict, "This data folder is not connected to a workspace server, so there is no workspace AI activity to show.")
            .problem("sync.not_connected", &[])
            .action("connect", &[])
    })?;
    let token = token(kernel)?;
    let older = || {
        ApiError::new(ErrorCode::Conflict, "This workspace server keeps no AI activity (it is older than this app).")
            .hint("match_versions", "If it is the workspace server, update Inkstone and the server to matching versions.")
    };
    runtime.transport(kernel)?.ai_activity(&connection.server_url, &token, query).map_err(|failure| match failure {
        Failure::Status { status: 403, .. } => ApiError::new(
            ErrorCode::PermissionDenied,
            format!("Viewers do not see AI activity; you are connected to \"{}\" as {}.", connection.remote_workspace_name, connection.role),
        )
        .problem("sync.owner_only", &[])
        .hint("owner_only", "Ask an owner of the workspace.")
        .details(serde_json::json!({"reason": "forbidden", "needs": "editor", "role": connection.role})),
        Failure::Status { status: 404 | 405, .. } => older(),
        Failure::Status { status: 400, message, .. } => ApiError::new(ErrorCode::Validation, message),
        other => super::server_failed(other),
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_provider_host_never_carries_a_user_part() {
        assert_eq!(super::provider_host("https://user:sk-secret@api.example.com:8443/v1"), "api.example.com");
        assert_eq!(super::provider_host("http://127.0.0.1:8080/v1"), "127.0.0.1");
        assert_eq!(super::provider_host("http://[::1]:9/v1"), "::1");
    }
}
