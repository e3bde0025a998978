//! What the person approves when the assistant asks to apply a proposal: the exact
//! change (the proposal, its target, every selected hunk and the hash binding them),
//! carried by the approval request.

use serde::{Deserialize, Serialize};

use crate::proposals::{ProposalKind, Target};

/// One hunk of a proposal an approval covers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalHunk {
    pub id: String,
    /// The hash the approval is bound to.
    pub content_hash: String,
    /// The change with context and word-level emphasis; absent when the diffs of the
    /// selection are too large for one log line (then the review panel shows them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display: Option<crate::diff::Hunk>,
}

/// What approving a call that applies a proposal would change: shown with the
/// approval request, so the person approves the exact change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
    pub hunk_set_hash: Option<String>,
    /// How many hunks the approval applies (all listed in `hunks`). Absent before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_hunks: Option<u32>,
    /// The size of the change: UTF-8 bytes of the selected hunks' old and new lines.
    /// Absent before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_bytes: Option<u64>,
    /// For a proposal without hunks: what would be made (the reply, the chosen
    /// candidates, the settings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The version number accepting would save, when accepting saves a version (a
    /// source change or a new title), as of the request (a version the person saves
    /// meanwhile moves it up by one); absent for a draft, a comment reply, settings
    /// that leave the title, or an artifact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub creates_version: Option<u32>,
}
