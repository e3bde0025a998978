//! Rebasing a stale text proposal: a three-way merge carries the hunks the edits made
//! since do not touch into a new proposal over the current text, and reports the rest.

use serde::{Deserialize, Serialize};

use super::{based_on_staged, not_open, AuditAction, AuditRecord};
use crate::diff::{self, Splice};
use crate::error::{ApiError, ErrorCode};
use crate::kernel::Kernel;
use crate::proposals::{current_text, load, staleness, Payload, Proposal, ProposalStatus};
use crate::store::{Batch, Durability};

/// A hunk of a stale proposal that overlaps an edit made since.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RebaseConflict {
    pub hunk_id: String,
    /// 0-based lines of the base text the hunk changes.
    pub old_start: u32,
    pub old_len: u32,
    /// The edit made since that it overlaps: its lines in the base text and the text
    /// it put there.
    pub their_start: u32,
    pub their_len: u32,
    pub their_text: String,
}

/// What a rebase made.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rebased {
    /// The old proposal, now superseded.
    pub previous: Proposal,
    /// The new proposal over the current text, with every hunk that did not overlap.
    pub proposal: Proposal,
    /// Hunks left out because they overlap edits made since.
    pub conflicts: Vec<RebaseConflict>,
    /// Hunk id in the old proposal → hunk id in the new one.
    pub carried: Vec<(String, String)>,
}

/// Does the proposal's change `a` (lines `[s, e)` of the base; an insertion when
/// empty) touch the edit `b`? Touching counts: adjacent edits are not guessed apart.
pub(in crate::proposals) fn touches(a_start: usize, a_len: usize, b_start: usize, b_len: usize) -> bool {
    a_start <= b_start + b_len && b_start <= a_start + a_len
}

/// Carries a stale text proposal onto the current text by a three-way merge (base →
/// proposal, base → current). Hunks that do not touch the edits made since are
/// carried into a new proposal that supersedes this one; the others are reported.
///
/// Errors: NOT_FOUND; CONFLICT when the proposal is not open, is not a text proposal,
/// is not stale, or every hunk overlaps an edit (then nothing is written).
pub fn rebase(kernel: &Kernel, proposal_id: &str) -> Result<Rebased, ApiError> {
    let _guard = kernel.write_lock();
    let store = kernel.store();
    let mut previous = load(store, proposal_id)?;
    if previous.status != ProposalStatus::Proposed {
        return Err(not_open(&previous));
    }
    let Payload::Text { base_text, .. } = &previous.payload else {
        return Err(ApiError::new(ErrorCode::Conflict, format!("A {} proposal cannot be rebased; ask for a new one.", previous.kind.as_str())));
    };
    let stale = staleness(store, &previous)?;
    if stale.based_on_staged {
        return Err(based_on_staged(&previous));
    }
    if !stale.stale {
        return Err(ApiError::new(ErrorCode::Conflict, format!("Proposal {} is not stale: accept or reject it as it is.", previous.id)));
    }
    let Some(current) = current_text(store, &previous)? else {
        return Err(ApiError::new(ErrorCode::Conflict, "The proposal's target no longer exists.".to_owned()));
    };
    let theirs = diff::changes(base_text, &current);
    let mut carried_splices = Vec::new();
    let mut carried_ids = Vec::new();
    let mut conflicts = Vec::new();
    for hunk in previous.hunks.iter().filter(|h| !previous.rejected_hunks.contains(&h.id)) {
        let (start, len) = (hunk.old_start as usize, hunk.old_len as usize);
        if let Some(edit) = theirs.iter().find(|t| touches(start, len, t.old_start, t.old_len)) {
            conflicts.push(RebaseConflict {
                hunk_id: hunk.id.clone(),
                old_start: hunk.old_start,
                old_len: hunk.old_len,
                their_start: u32::try_from(edit.old_start).unwrap_or(u32::MAX),
                their_len: u32::try_from(edit.old_len).unwrap_or(u32::MAX),
                their_text: edit.new_text.clone(),
            });
            continue;
        }
        // Shift by the edits wholly before this hunk.
        let shift: isize = theirs.iter().filter(|t| t.old_start + t.old_len < start).map(|t| t.new_len as isize - t.old_len as isize).sum();
        let Some(mapped) = start.checked_add_signed(shift) else { return Err(ApiError::internal("A rebased hunk moved before the start of the text.")) };
        carried_splices.push((mapped, hunk));
        carried_ids.push(hunk.id.clone());
    }
    if carried_splices.is_empty() {
        return Err(ApiError::new(ErrorCode::Conflict, format!("Every hunk of proposal {} overlaps edits made since; nothing was rebased.", previous.id))
            .hint("regenerate", "Ask the assistant for a new proposal on the current text.")
            .details(serde_json::json!({"proposalId": previous.id, "conflicts": conflicts})));
    }
    let splices: Vec<Splice<'_>> =
        carried_splices.iter().map(|(at, h)| Splice { old_start: *at, old_len: h.old_len as usize, old_text: &h.old_text, new_text: &h.new_text }).collect();
    let merged = diff::apply_changes(&current, &splices).ok_or_else(|| ApiError::internal("A rebased hunk did not apply to the current text."))?;
    let mut batch = Batch::new();
    let mut origin = previous.origin.clone();
    origin.rebased_from = Some(previous.id.clone());
    // The new proposal is built against the current state; its own supersede pass
    // marks the old one when both share an owner, and the old one is marked here in
    // any case.
    let mut proposal = crate::proposals::stage_create(
        kernel,
        &mut batch,
        crate::proposals::NewProposal {
            project_id: previous.project_id.clone(),
            kind: previous.kind,
            target: previous.target.clone(),
            summary: previous.summary.clone(),
            payload: Payload::Text { base_text: current.clone(), proposed_text: merged },
            origin,
        },
    )?;
    let now = kernel.now();
    previous.status = ProposalStatus::Superseded;
    previous.superseded_by = Some(proposal.id.clone());
    previous.superseded_reason = Some(crate::proposals::SupersededReason::Rebased);
    previous.updated_at = now;
    batch.put(&previous)?;
    // Carried hunks keep their order; pair them with the new hunks by their text.
    let carried: Vec<(String, String)> = carried_ids
        .iter()
        .filter_map(|old| {
            let old_hunk = previous.hunks.iter().find(|h| &h.id == old)?;
            let new_hunk = proposal.hunks.iter().find(|h| h.old_text == old_hunk.old_text && h.new_text == old_hunk.new_text)?;
            Some((old.clone(), new_hunk.id.clone()))
        })
        .collect();
    batch.put(&AuditRecord {
        id: kernel.new_id("aud"),
        project_id: previous.project_id.clone(),
        proposal_id: previous.id.clone(),
        kind: previous.kind,
        action: AuditAction::Rebased,
        hunks: carried_ids,
        hunk_hashes: Vec::new(),
        choices: Vec::new(),
        actor: kernel.author()?,
        via: "person".to_owned(),
        approval_request_id: None,
        origin: proposal.origin.clone(),
        version: None,
        draft_revision: None,
        reason: Some(format!("rebased as {}", proposal.id)),
        at: now,
    })?;
    store.apply(batch, Durability::Durable)?;
    proposal.status = ProposalStatus::Proposed;
    Ok(Rebased { previous, proposal, conflicts, carried })
}
