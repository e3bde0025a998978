//! Accepting, rejecting and rebasing proposals. Accepting all or some hunks is one
//! transaction: the base check (a moved base is a CONFLICT and nothing is written),
//! the new version or draft revision, the proposal's status and the hunks taken, an
//! activity entry and an audit record. The version's sync delivery job joins the same
//! batch in [`stage_accept`], staged with the version.

mod accept;
mod rebase;
mod reject;

pub use accept::{accept, stage_accept, Accept, Accepted};
pub(super) use rebase::touches;
pub use rebase::{rebase, RebaseConflict, Rebased};
pub use reject::{reject, Reject, Rejected};

use serde::{Deserialize, Serialize};

use super::{current_text, text_hash, Origin, Payload, Proposal, ProposalKind};
use crate::diff::{self, Splice};
use crate::error::{ApiError, ErrorCode};
use crate::kernel::Kernel;
use crate::model::{Timestamp, VersionOrigin};
use crate::store::{keys, Batch, Durability, Kind, Record, Store};

/// Longest rejection reason, in characters.
pub const MAX_REASON_CHARS: usize = 2_000;

/// Who accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Actor {
    /// The person, in the review screen, the CLI or the API.
    Person,
    /// The model through `apply_proposal`, after the person approved exactly this.
    Model { tool_use_id: String, approval: Option<String> },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AuditAction {
    Accepted,
    PartiallyAccepted,
    Rejected,
    HunksRejected,
    Rebased,
}

/// Who accepted or rejected which hunks of what, from which model, profile, prompt
/// version and context snapshot. Kept per project in creation order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditRecord {
    pub id: String,
    pub project_id: String,
    pub proposal_id: String,
    pub kind: ProposalKind,
    pub action: AuditAction,
    pub hunks: Vec<String>,
    /// The hash of each hunk in `hunks`, in the same order.
    pub hunk_hashes: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<String>,
    /// The person (for an accept through `apply_proposal`, the person who approved).
    pub actor: String,
    /// `person` or `assistant` (an approved `apply_proposal`).
    pub via: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_request_id: Option<String>,
    pub origin: Origin,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draft_revision: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub at: Timestamp,
}

impl Record for AuditRecord {
    const KIND: Kind = Kind::ProposalAudit;
    fn key(&self) -> Vec<u8> {
        keys::child(&self.project_id, &self.id)
    }

    /// Accepts and rejects are indexed for the activity view in the same transaction.
    fn derived(&self, batch: &mut Batch) -> Result<(), crate::store::StoreError> {
        super::audit_index::stage(self, batch)
    }
}

/// The audit trail of a project, oldest first.
pub fn audit(store: &Store, project_id: &str) -> Result<Vec<AuditRecord>, ApiError> {
    Ok(store.scan::<AuditRecord>(&keys::project_prefix(project_id))?)
}

/// A durable constraint of a session or run: the person's reason for a rejection,
/// shown to the model verbatim in every later turn until the person removes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Constraint {
    pub id: String,
    /// The session or run.
    pub owner_id: String,
    pub project_id: String,
    pub text: String,
    pub proposal_id: String,
    /// The rejected hunks (empty: the whole proposal).
    pub hunks: Vec<String>,
    pub created_by: String,
    pub created_at: Timestamp,
}

impl Record for Constraint {
    const KIND: Kind = Kind::Constraints;
    fn key(&self) -> Vec<u8> {
        keys::child(&self.owner_id, &self.id)
    }
}

/// The constraints of a session or run, oldest first.
pub fn constraints(store: &Store, owner_id: &str) -> Result<Vec<Constraint>, ApiError> {
    Ok(store.scan::<Constraint>(&keys::project_prefix(owner_id))?)
}

/// Removes a constraint of `owner_id`. Errors: NOT_FOUND.
pub fn remove_constraint(kernel: &Kernel, owner_id: &str, constraint_id: &str) -> Result<Constraint, ApiError> {
    let _guard = kernel.write_lock();
    let key = keys::child(owner_id, constraint_id);
    let constraint = kernel.store().get::<Constraint>(&key)?.ok_or_else(|| ApiError::not_found("constraint", constraint_id))?;
    let mut batch = Batch::new();
    batch.delete::<Constraint>(key);
    kernel.store().apply(batch, Durability::Durable)?;
    Ok(constraint)
}

pub(super) fn not_open(proposal: &Proposal) -> ApiError {
    let status = serde_json::to_value(proposal.status).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
    let mut error = ApiError::new(ErrorCode::Conflict, format!("Proposal {} is {status}; only an open proposal can be accepted or rejected.", proposal.id))
        .problem("proposal.not_open", &[("status", &status)])
        .details(serde_json::json!({"proposalId": proposal.id, "status": proposal.status, "supersededBy": proposal.superseded_by}));
    if let Some(newer) = &proposal.superseded_by {
        error = error.hint_with("open_newer", format!("Review the newer proposal {newer} instead."), &[("newer", newer)]);
    }
    error
}

/// The CONFLICT of a proposal whose base moved: both sides and what changed between.
fn stale_conflict(store: &Store, proposal: &Proposal, reason: &str) -> Result<ApiError, ApiError> {
    let current = current_text(store, proposal)?;
    let base_text = match &proposal.payload {
        Payload::Text { base_text, .. } => Some(base_text.as_str()),
        _ => None,
    };
    let changed_since = match (base_text, current.as_deref()) {
        (Some(base), Some(now)) => serde_json::to_value(diff::diff_texts(base, now)).ok(),
        _ => None,
    };
    let project = crate::project::load(store, &proposal.project_id)?;
    Ok(ApiError::new(ErrorCode::Conflict, format!("Proposal {} is stale: {reason}", proposal.id))
        .problem("proposal.stale", &[])
        .action("rebase", &[("proposal", &proposal.id)])
        .hint("compare", "Compare the proposal with the current text before deciding.")
        .details(serde_json::json!({
            "proposalId": proposal.id,
            "base": proposal.base,
            "current": {"revision": project.revision, "head": project.head, "text": current, "textHash": current.as_deref().map(text_hash)},
            "changedSince": changed_since,
        })))
}

/// The CONFLICT of accepting, on its own, a proposal written over its session's staged
/// changes: its hunks only apply on top of them.
fn based_on_staged(proposal: &Proposal) -> ApiError {
    let session = proposal.origin.session_id.clone().unwrap_or_default();
    ApiError::new(
        ErrorCode::Conflict,
        format!("Proposal {} is based on changes staged in session {session} that are not applied yet; it cannot be accepted on its own.", proposal.id),
    )
    .action("stage_it", &[("session", &session), ("proposal", &proposal.id)])
    .action("apply_staged", &[("session", &session)])
    .details(serde_json::json!({"proposalId": proposal.id, "sessionId": session, "basedOnStaged": true}))
}

/// Which hunks an accept takes. Errors: VALIDATION for unknown, repeated or rejected
/// hunk ids, or an empty selection.
pub(super) fn selected_hunks<'a>(proposal: &'a Proposal, wanted: Option<&[String]>) -> Result<Vec<&'a super::ProposalHunk>, ApiError> {
    let open: Vec<&super::ProposalHunk> = proposal.hunks.iter().filter(|h| !proposal.rejected_hunks.contains(&h.id)).collect();
    let Some(wanted) = wanted else {
        if open.is_empty() {
            return Err(ApiError::validation("hunks", "Every hunk of this proposal was rejected; there is nothing left to accept."));
        }
        return Ok(open);
    };
    if wanted.is_empty() {
        return Err(ApiError::validation("hunks", "Name at least one hunk, or leave `hunks` out to accept every hunk."));
    }
    let mut out = Vec::new();
    for (i, id) in wanted.iter().enumerate() {
        let Some(hunk) = proposal.hunks.iter().find(|h| &h.id == id) else {
            let ids: Vec<&str> = proposal.hunks.iter().map(|h| h.id.as_str()).collect();
            return Err(ApiError::validation(&format!("hunks[{i}]"), format!("Proposal {} has no hunk {id}; its hunks are {}.", proposal.id, ids.join(", "))));
        };
        if proposal.rejected_hunks.contains(id) {
            return Err(ApiError::validation(&format!("hunks[{i}]"), format!("Hunk {id} was rejected.")));
        }
        if out.iter().any(|h: &&super::ProposalHunk| &h.id == id) {
            return Err(ApiError::validation(&format!("hunks[{i}]"), format!("Hunk {id} is named twice.")));
        }
        out.push(hunk);
    }
    Ok(out)
}

pub(super) fn apply_hunks(base_text: &str, selected: &[super::ProposalHunk]) -> Result<String, ApiError> {
    let splices: Vec<Splice<'_>> = selected.iter().map(|h| h.splice()).collect();
    diff::apply_changes(base_text, &splices).ok_or_else(|| ApiError::internal("The proposal's hunks do not apply to its own base text."))
}

fn actor_names(kernel: &Kernel, actor: &Actor) -> Result<(String, String, Option<String>), ApiError> {
    let person = kernel.author()?;
    Ok(match actor {
        Actor::Person => (person, "person".to_owned(), None),
        Actor::Model { approval, .. } => (person, "assistant".to_owned(), approval.clone()),
    })
}

/// The origin of a version made by accepting `taken` of `proposal`'s hunks (none: a
/// proposal without hunks, or all of them): with the sources those hunks came with.
pub(super) fn version_origin(proposal: &Proposal, taken: &[super::ProposalHunk]) -> VersionOrigin {
    let sources = if taken.is_empty() { proposal.origin.sources.clone() } else { proposal.sources_of_hunks(&taken.iter().map(|h| h.id.clone()).collect::<Vec<_>>()) };
    VersionOrigin::AiProposal {
        proposal_id: proposal.id.clone(),
        session_id: proposal.origin.session_id.clone(),
        run_id: proposal.origin.run_id.clone(),
        model: proposal.origin.model.clone(),
        profile_id: proposal.origin.profile_id.clone(),
        sources,
    }
}
