//! Proposals: the person's side of AI changes. The model creates proposals through its
//! tools; these methods list and show them (with staleness computed now), and accept,
//! reject or rebase them. Accept and reject are the person's alone: no tool reaches
//! them.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::projects::load as load_project;
use super::{ApiError, Engine};
use crate::proposals::apply::{self, Accept, Accepted, Actor, AuditRecord, Rebased, Reject, Rejected};
use crate::proposals::{self, ProposalKind, ProposalStatus, ProposalView};

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProposalListParams {
    pub project_id: String,
    /// Only this session's (or run's) proposals.
    #[serde(default)]
    #[ts(optional)]
    pub owner_id: Option<String>,
    /// Only proposals in this status.
    #[serde(default)]
    #[ts(optional)]
    pub status: Option<ProposalStatus>,
    #[serde(default)]
    #[ts(optional)]
    pub kind: Option<ProposalKind>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ProposalListResult {
    /// Newest first, with staleness computed now.
    pub proposals: Vec<ProposalView>,
}

pub(super) fn list(engine: &Engine, params: ProposalListParams) -> Result<ProposalListResult, ApiError> {
    load_project(engine, &params.project_id)?;
    let store = engine.store();
    let mut out = Vec::new();
    for proposal in proposals::list(store, &params.project_id)?.into_iter().rev() {
        if params.owner_id.as_deref().is_some_and(|owner| proposal.origin.owner_id() != Some(owner))
            || params.status.is_some_and(|s| s != proposal.status)
            || params.kind.is_some_and(|k| k != proposal.kind)
        {
            continue;
        }
        out.push(proposals::view(store, proposal)?);
    }
    Ok(ProposalListResult { proposals: out })
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProposalRef {
    pub proposal_id: String,
}

pub(super) fn get(engine: &Engine, params: ProposalRef) -> Result<ProposalView, ApiError> {
    let proposal = proposals::load(engine.store(), &params.proposal_id)?;
    proposals::view(engine.store(), proposal)
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProposalAcceptParams {
    pub proposal_id: String,
    /// The hunks to take; all (not rejected) when absent.
    #[serde(default)]
    #[ts(optional)]
    pub hunks: Option<Vec<String>>,
    /// The target's revision the person reviewed against: the project's working-copy
    /// revision, or the draft's revision for a draft proposal. A different current
    /// revision is a CONFLICT.
    pub expected_base: u64,
    /// The candidates taken: one title, or one or more tags.
    #[serde(default)]
    #[ts(optional)]
    pub choices: Option<Vec<String>>,
    /// Confirms changing a ready or published draft.
    #[serde(default)]
    #[ts(optional)]
    pub confirm_final: Option<bool>,
}

pub(super) fn accept(engine: &Engine, params: ProposalAcceptParams) -> Result<Accepted, ApiError> {
    apply::accept(
        engine,
        &Accept {
            proposal_id: params.proposal_id,
            hunks: params.hunks,
            expected_base: params.expected_base,
            choices: params.choices,
            confirm_final: params.confirm_final.unwrap_or(false),
            actor: Actor::Person,
        },
    )
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProposalRejectParams {
    pub proposal_id: String,
    /// The hunks to reject; the whole proposal when absent.
    #[serde(default)]
    #[ts(optional)]
    pub hunks: Option<Vec<String>>,
    /// Why. Kept as a constraint of the session, shown to the model in every later turn.
    #[serde(default)]
    #[ts(optional)]
    pub reason: Option<String>,
}

pub(super) fn reject(engine: &Engine, params: ProposalRejectParams) -> Result<Rejected, ApiError> {
    apply::reject(engine, &Reject { proposal_id: params.proposal_id, hunks: params.hunks, reason: params.reason })
}

pub(super) fn rebase(engine: &Engine, params: ProposalRef) -> Result<Rebased, ApiError> {
    apply::rebase(engine, &params.proposal_id)
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProposalAuditParams {
    pub project_id: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ProposalAuditResult {
    /// Oldest first.
    pub records: Vec<AuditRecord>,
}

pub(super) fn audit(engine: &Engine, params: ProposalAuditParams) -> Result<ProposalAuditResult, ApiError> {
    load_project(engine, &params.project_id)?;
    Ok(ProposalAuditResult { records: apply::audit(engine.store(), &params.project_id)? })
}
