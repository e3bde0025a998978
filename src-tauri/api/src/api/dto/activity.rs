//! The wire form of the AI activity view's rows (see [`super`]): a row names the
//! proposal's kind and target by their twins. The rest of a row (its source, how it
//! came about, the model and tokens) is the activity module's own wire form.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::activity::{Decision, ModelUsed, RowSource, Through, TokensUsed};
use crate::model::Timestamp;

/// One AI-originated change, accepted or rejected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ActivityRow {
    /// The audit record's id (for a synced row, the server version's id).
    pub id: String,
    pub at: Timestamp,
    pub source: RowSource,
    pub project_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub project_title: Option<String>,
    /// The version an accept made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub version: Option<u32>,
    /// The draft revision an accept of a draft proposal made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub draft_revision: Option<u32>,
    pub proposal_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub proposal_kind: Option<super::ProposalKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub target: Option<super::Target>,
    pub decision: Decision,
    /// Only some hunks were accepted or rejected.
    pub partial: bool,
    /// The hunks accepted or rejected (empty when a whole proposal was rejected at
    /// once; see `n_hunks`). Open the diff with `proposal.get` and these ids.
    pub hunks: Vec<String>,
    /// How many hunks the decision covered.
    pub n_hunks: u32,
    /// How many hunks the proposal had, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub n_hunks_total: Option<u32>,
    /// The person who accepted or rejected (for `apply_proposal`, who approved).
    pub actor: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub reason: Option<String>,
    pub through: Through,
    pub model: ModelUsed,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub prompt_version: Option<String>,
    /// Every prompt layer of the call that made it, in order.
    pub prompt_layers: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub context_snapshot_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tokens: Option<TokensUsed>,
}

/// A page of rows, newest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ActivityPage {
    pub rows: Vec<ActivityRow>,
    /// More rows match than the limit let through: narrow the filters or the dates.
    pub truncated: bool,
}

impl From<&crate::activity::ActivityRow> for ActivityRow {
    fn from(record: &crate::activity::ActivityRow) -> Self {
        ActivityRow {
            id: record.id.clone(),
            at: record.at,
            source: record.source.clone(),
            project_id: record.project_id.clone(),
            project_title: record.project_title.clone(),
            version: record.version,
            draft_revision: record.draft_revision,
            proposal_id: record.proposal_id.clone(),
            proposal_kind: record.proposal_kind.map(Into::into),
            target: record.target.as_ref().map(Into::into),
            decision: record.decision,
            partial: record.partial,
            hunks: record.hunks.clone(),
            n_hunks: record.n_hunks,
            n_hunks_total: record.n_hunks_total,
            actor: record.actor.clone(),
            reason: record.reason.clone(),
            through: record.through.clone(),
            model: record.model.clone(),
            prompt_version: record.prompt_version.clone(),
            prompt_layers: record.prompt_layers.clone(),
            context_snapshot_id: record.context_snapshot_id.clone(),
            tokens: record.tokens.clone(),
        }
    }
}

impl From<crate::activity::ActivityPage> for ActivityPage {
    fn from(record: crate::activity::ActivityPage) -> Self {
        ActivityPage { rows: record.rows.iter().map(Into::into).collect(), truncated: record.truncated }
    }
}
