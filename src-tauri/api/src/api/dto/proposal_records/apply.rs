//! What is done with a proposal: the audit record of each accept and reject, the
//! constraint a rejection leaves, and what a reject and a rebase made (see [`super`]).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::{Origin, Proposal, ProposalKind};
use crate::model::Timestamp;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
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
    #[ts(optional)]
    pub approval_request_id: Option<String>,
    pub origin: Origin,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub version: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub draft_revision: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub reason: Option<String>,
    pub at: Timestamp,
}

/// A durable constraint of a session or run: the person's reason for a rejection,
/// shown to the model verbatim in every later turn until the person removes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
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

/// What a reject did.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Rejected {
    pub proposal: Proposal,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub constraint: Option<Constraint>,
}

/// A hunk of a stale proposal that overlaps an edit made since.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
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
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
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
impl From<&crate::proposals::apply::AuditAction> for AuditAction {
    fn from(record: &crate::proposals::apply::AuditAction) -> Self {
        match record {
            crate::proposals::apply::AuditAction::Accepted => Self::Accepted,
            crate::proposals::apply::AuditAction::PartiallyAccepted => Self::PartiallyAccepted,
            crate::proposals::apply::AuditAction::Rejected => Self::Rejected,
            crate::proposals::apply::AuditAction::HunksRejected => Self::HunksRejected,
            crate::proposals::apply::AuditAction::Rebased => Self::Rebased,
        }
    }
}

impl From<&crate::proposals::apply::AuditRecord> for AuditRecord {
    fn from(record: &crate::proposals::apply::AuditRecord) -> Self {
        AuditRecord {
            id: record.id.clone(),
            project_id: record.project_id.clone(),
            proposal_id: record.proposal_id.clone(),
            kind: record.kind.into(),
            action: (&record.action).into(),
            hunks: record.hunks.clone(),
            hunk_hashes: record.hunk_hashes.clone(),
            choices: record.choices.clone(),
            actor: record.actor.clone(),
            via: record.via.clone(),
            approval_request_id: record.approval_request_id.clone(),
            origin: (&record.origin).into(),
            version: record.version,
            draft_revision: record.draft_revision,
            reason: record.reason.clone(),
            at: record.at,
        }
    }
}

impl From<&crate::proposals::apply::Constraint> for Constraint {
    fn from(record: &crate::proposals::apply::Constraint) -> Self {
        Constraint {
            id: record.id.clone(),
            owner_id: record.owner_id.clone(),
            project_id: record.project_id.clone(),
            text: record.text.clone(),
            proposal_id: record.proposal_id.clone(),
            hunks: record.hunks.clone(),
            created_by: record.created_by.clone(),
            created_at: record.created_at,
        }
    }
}

impl From<&crate::proposals::apply::Rejected> for Rejected {
    fn from(record: &crate::proposals::apply::Rejected) -> Self {
        Rejected { proposal: (&record.proposal).into(), constraint: record.constraint.as_ref().map(Into::into) }
    }
}

impl From<crate::proposals::apply::Rejected> for Rejected {
    fn from(record: crate::proposals::apply::Rejected) -> Self {
        Self::from(&record)
    }
}

impl From<&crate::proposals::apply::RebaseConflict> for RebaseConflict {
    fn from(record: &crate::proposals::apply::RebaseConflict) -> Self {
        RebaseConflict {
            hunk_id: record.hunk_id.clone(),
            old_start: record.old_start,
            old_len: record.old_len,
            their_start: record.their_start,
            their_len: record.their_len,
            their_text: record.their_text.clone(),
        }
    }
}

impl From<&crate::proposals::apply::Rebased> for Rebased {
    fn from(record: &crate::proposals::apply::Rebased) -> Self {
        Rebased {
            previous: (&record.previous).into(),
            proposal: (&record.proposal).into(),
            conflicts: record.conflicts.iter().map(Into::into).collect(),
            carried: record.carried.clone(),
        }
    }
}

impl From<crate::proposals::apply::Rebased> for Rebased {
    fn from(record: crate::proposals::apply::Rebased) -> Self {
        Self::from(&record)
    }
}
