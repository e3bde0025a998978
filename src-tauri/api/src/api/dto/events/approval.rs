//! What waits for the person: an approval, with the exact change it would apply, and a
//! question (see [`super`]).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::api::dto::{AllowOffer, Hunk, ProposalKind, Target};

/// One hunk of a proposal an approval covers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalHunk {
    pub id: String,
    /// The hash the approval is bound to.
    pub content_hash: String,
    /// The change with context and word-level emphasis; absent when the diffs of the
    /// selection are too large for one log line (then the review panel shows them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub display: Option<Hunk>,
}

/// What approving a call that applies a proposal would change: shown with the
/// approval request, so the person approves the exact change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalChange {
    pub proposal_id: String,
    pub kind: ProposalKind,
    pub summary: String,
    pub target: Target,
    /// The selected hunks, in the proposal's order.
    pub hunks: Vec<ApprovalHunk>,
    /// Selected hunks left out of `hunks` because the list would not fit the log line.
    /// Only logs written before every hunk had to be listed carry a non-zero count
    /// (kept so they replay): a change whose hunks cannot all be listed is no longer
    /// put to the person in a prompt (the call is answered with a tool error that
    /// sends them to the review panel).
    #[serde(default)]
    pub omitted_hunks: u32,
    /// `sha256:` of everything the approval applies: the proposal id with the sorted
    /// content hashes of every selected hunk (or, without hunks, its payload's hash),
    /// the material of the call's bound input hash. Deciding checks it against the
    /// proposal as it is then: a different hash refuses the approval as stale.
    /// Absent in logs written before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub hunk_set_hash: Option<String>,
    /// How many hunks the approval applies (all listed in `hunks`). Absent before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub total_hunks: Option<u32>,
    /// The size of the change: UTF-8 bytes of the selected hunks' old and new lines.
    /// Absent before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub total_bytes: Option<u64>,
    /// For a proposal without hunks: what would be made (the reply, the chosen
    /// candidates, the settings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub detail: Option<String>,
    /// The version number accepting would save, when accepting saves a version (a
    /// source change or a new title), as of the request (a version the person saves
    /// meanwhile moves it up by one); absent for a draft, a comment reply, settings
    /// that leave the title, or an artifact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub creates_version: Option<u32>,
}

/// An approval waiting for the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PendingApproval {
    pub request_id: String,
    pub tool_use_id: String,
    pub tool: String,
    pub input_hash: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub target_version: Option<u64>,
    pub idempotency_key: String,
    pub reason: String,
    /// Why it asks, for the UI to word (see `EventBody::ApprovalRequested`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub reason_id: Option<String>,
    /// For a call that applies a proposal: exactly what would change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub change: Option<Box<ApprovalChange>>,
    /// What "always allow" would store, when the tool offers it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub offer: Option<AllowOffer>,
}

/// A question waiting for the user's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PendingQuestion {
    pub question_id: String,
    pub tool_use_id: String,
    pub question: String,
    pub options: Vec<String>,
}

impl From<&crate::harness::event::ApprovalHunk> for ApprovalHunk {
    fn from(record: &crate::harness::event::ApprovalHunk) -> Self {
        ApprovalHunk { id: record.id.clone(), content_hash: record.content_hash.clone(), display: record.display.as_ref().map(Into::into) }
    }
}

impl From<&crate::harness::event::ApprovalChange> for ApprovalChange {
    fn from(record: &crate::harness::event::ApprovalChange) -> Self {
        ApprovalChange {
            proposal_id: record.proposal_id.clone(),
            kind: record.kind.into(),
            summary: record.summary.clone(),
            target: (&record.target).into(),
            hunks: record.hunks.iter().map(Into::into).collect(),
            omitted_hunks: record.omitted_hunks,
            hunk_set_hash: record.hunk_set_hash.clone(),
            total_hunks: record.total_hunks,
            total_bytes: record.total_bytes,
            detail: record.detail.clone(),
            creates_version: record.creates_version,
        }
    }
}

impl From<&crate::harness::replay::PendingApproval> for PendingApproval {
    fn from(record: &crate::harness::replay::PendingApproval) -> Self {
        PendingApproval {
            request_id: record.request_id.clone(),
            tool_use_id: record.tool_use_id.clone(),
            tool: record.tool.clone(),
            input_hash: record.input_hash.clone(),
            target_version: record.target_version,
            idempotency_key: record.idempotency_key.clone(),
            reason: record.reason.clone(),
            reason_id: record.reason_id.clone(),
            change: record.change.as_ref().map(|x| Box::new(x.as_ref().into())),
            offer: record.offer.as_ref().map(Into::into),
        }
    }
}

impl From<&crate::harness::replay::PendingQuestion> for PendingQuestion {
    fn from(record: &crate::harness::replay::PendingQuestion) -> Self {
        PendingQuestion { question_id: record.question_id.clone(), tool_use_id: record.tool_use_id.clone(), question: record.question.clone(), options: record.options.clone() }
    }
}
