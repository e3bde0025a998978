//! Where a proposal came from (its origin, the sources of its hunks, what it carries
//! of the proposal it superseded and why) and what accepting it made (see [`super`]).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::api::dto::ProvenanceSource;
use crate::model::Timestamp;

/// Where a proposal came from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Origin {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub run_id: Option<String>,
    /// The log sequence of the turn's start, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub turn: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tool_use_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub context_snapshot_id: Option<String>,
    pub model: String,
    pub profile_id: String,
    pub prompt_version: String,
    /// The id of every prompt layer of the model call that made it, in order
    /// (`core-identity@v1`, …, `context:<snapshot>`, `apply-policy.optimize@v1`).
    #[serde(default)]
    pub prompt_layers: Vec<String>,
    /// The proposal this one was rebased from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub rebased_from: Option<String>,
    /// What the model had read before it proposed this (`harness::provenance`): the
    /// sources of every hunk, each once; [`Proposal::hunk_sources`] says which hunk
    /// came with which. Empty in proposals made before provenance was recorded, and in
    /// those no model read anything for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<ProvenanceSource>>", optional)]
    pub sources: Vec<ProvenanceSource>,
}

/// Why a proposal was superseded; the successor is `superseded_by`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum SupersededReason {
    /// Its edits did not overlap a newer proposal's on the same base: the successor
    /// carries them too (see [`Proposal::carries`]), so nothing was lost.
    Merged,
    /// A newer proposal changes some of the same lines of the same base: its edits
    /// replace these there; the hunks it does not touch it carries.
    Overlapped,
    /// A newer proposal for the same target that cannot carry these edits (not a text
    /// proposal, or written over another base).
    Replaced,
    /// The person rebased it onto the current text; the successor carries the hunks
    /// that did not conflict.
    Rebased,
}

/// The edits of an earlier proposal a newer one carries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CarriedEdits {
    /// The earlier proposal (now superseded: `merged` when all its hunks are carried,
    /// `overlapped` when the newer one replaced some).
    pub proposal_id: String,
    /// Its summary, for the person.
    pub summary: String,
    /// Its hunks, by their ids in the carrying proposal.
    pub hunk_ids: Vec<String>,
}

/// The sources one hunk came with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct HunkSources {
    pub hunk_id: String,
    /// Indices into the proposal's `origin.sources`.
    pub sources: Vec<u32>,
}

/// What accepting a proposal made.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Applied {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub version: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub draft_revision: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub comment_id: Option<String>,
    /// The candidates taken (titles, tags).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<String>,
    pub by: String,
    pub at: Timestamp,
}
impl From<&crate::proposals::Origin> for Origin {
    fn from(record: &crate::proposals::Origin) -> Self {
        Origin {
            session_id: record.session_id.clone(),
            run_id: record.run_id.clone(),
            turn: record.turn,
            tool_use_id: record.tool_use_id.clone(),
            context_snapshot_id: record.context_snapshot_id.clone(),
            model: record.model.clone(),
            profile_id: record.profile_id.clone(),
            prompt_version: record.prompt_version.clone(),
            prompt_layers: record.prompt_layers.clone(),
            rebased_from: record.rebased_from.clone(),
            sources: record.sources.iter().map(Into::into).collect(),
        }
    }
}

impl From<&crate::proposals::SupersededReason> for SupersededReason {
    fn from(record: &crate::proposals::SupersededReason) -> Self {
        match record {
            crate::proposals::SupersededReason::Merged => Self::Merged,
            crate::proposals::SupersededReason::Overlapped => Self::Overlapped,
            crate::proposals::SupersededReason::Replaced => Self::Replaced,
            crate::proposals::SupersededReason::Rebased => Self::Rebased,
        }
    }
}

impl From<&crate::proposals::CarriedEdits> for CarriedEdits {
    fn from(record: &crate::proposals::CarriedEdits) -> Self {
        CarriedEdits { proposal_id: record.proposal_id.clone(), summary: record.summary.clone(), hunk_ids: record.hunk_ids.clone() }
    }
}

impl From<&crate::proposals::HunkSources> for HunkSources {
    fn from(record: &crate::proposals::HunkSources) -> Self {
        HunkSources { hunk_id: record.hunk_id.clone(), sources: record.sources.clone() }
    }
}

impl From<&crate::proposals::Applied> for Applied {
    fn from(record: &crate::proposals::Applied) -> Self {
        Applied {
            version: record.version,
            draft_revision: record.draft_revision,
            comment_id: record.comment_id.clone(),
            choices: record.choices.clone(),
            by: record.by.clone(),
            at: record.at,
        }
    }
}
