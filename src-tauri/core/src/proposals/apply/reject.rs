//! Rejecting a proposal or some of its hunks; the person's reason becomes a durable
//! constraint the assistant sees in every later turn of the session or run.

use serde::{Deserialize, Serialize};

use super::{not_open, selected_hunks, AuditAction, AuditRecord, Constraint, MAX_REASON_CHARS};
use crate::error::ApiError;
use crate::kernel::Kernel;
use crate::model::ActivityKind;
use crate::proposals::{load, Proposal, ProposalStatus};
use crate::store::{Batch, Durability};

/// A reject request.
#[derive(Debug, Clone, Default)]
pub struct Reject {
    pub proposal_id: String,
    /// Hunks to reject; `None` rejects the whole proposal.
    pub hunks: Option<Vec<String>>,
    /// Why: becomes a durable constraint of the session or run.
    pub reason: Option<String>,
}

/// What a reject did.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rejected {
    pub proposal: Proposal,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constraint: Option<Constraint>,
}

/// Rejects a proposal, or some of its hunks, in one durable transaction. A reason
/// becomes a constraint of the proposal's session or run.
///
/// Errors: NOT_FOUND; CONFLICT when the proposal is not open; VALIDATION for bad hunk
/// ids or a reason over [`MAX_REASON_CHARS`].
pub fn reject(kernel: &Kernel, request: &Reject) -> Result<Rejected, ApiError> {
    let reason = match request.reason.as_deref().map(str::trim) {
        Some("") | None => None,
        Some(reason) => Some(crate::error::bounded_text("reason", reason, MAX_REASON_CHARS)?),
    };
    let _guard = kernel.write_lock();
    let store = kernel.store();
    let mut proposal = load(store, &request.proposal_id)?;
    if proposal.status != ProposalStatus::Proposed {
        return Err(not_open(&proposal));
    }
    let named: Vec<String> = match &request.hunks {
        None => Vec::new(),
        Some(ids) => selected_hunks(&proposal, Some(ids))?.iter().map(|h| h.id.clone()).collect(),
    };
    let mut batch = Batch::new();
    let now = kernel.now();
    proposal.rejected_hunks.extend(named.iter().cloned());
    let whole = request.hunks.is_none() || proposal.hunks.iter().all(|h| proposal.rejected_hunks.contains(&h.id));
    if whole {
        proposal.status = ProposalStatus::Rejected;
        if request.hunks.is_none() {
            proposal.rejected_hunks = proposal.hunks.iter().map(|h| h.id.clone()).collect();
        }
        batch.put(&kernel.activity(Some(&proposal.project_id), ActivityKind::ProposalRejected, format!("Rejected AI proposal {} ({})", proposal.id, proposal.kind.as_str()))?)?;
    }
    if let Some(reason) = &reason {
        proposal.rejection_reason = Some(reason.clone());
    }
    proposal.updated_at = now;
    let person = kernel.author()?;
    let constraint = match (&reason, proposal.origin.owner_id()) {
        (Some(text), Some(owner)) => {
            let constraint = Constraint {
                id: kernel.new_id("cns"),
                owner_id: owner.to_owned(),
                project_id: proposal.project_id.clone(),
                text: text.clone(),
                proposal_id: proposal.id.clone(),
                hunks: named.clone(),
                created_by: person.clone(),
                created_at: now,
            };
            batch.put(&constraint)?;
            Some(constraint)
        }
        _ => None,
    };
    let hunk_hashes = proposal.hunks.iter().filter(|h| named.contains(&h.id)).map(|h| h.content_hash.clone()).collect();
    batch.put(&AuditRecord {
        id: kernel.new_id("aud"),
        project_id: proposal.project_id.clone(),
        proposal_id: proposal.id.clone(),
        kind: proposal.kind,
        action: if whole { AuditAction::Rejected } else { AuditAction::HunksRejected },
        hunks: named,
        hunk_hashes,
        choices: Vec::new(),
        actor: person,
        via: "person".to_owned(),
        approval_request_id: None,
        origin: proposal.origin.clone(),
        version: None,
        draft_revision: None,
        reason,
        at: now,
    })?;
    batch.put(&proposal)?;
    store.apply(batch, Durability::Durable)?;
    Ok(Rejected { proposal, constraint })
}
