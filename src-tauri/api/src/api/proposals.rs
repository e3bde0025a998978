//! Proposals: the person's side of AI changes. The model creates proposals through its
//! tools; these methods list and show them (with staleness computed now), and accept,
//! reject or rebase them. Accept and reject are the person's alone: no tool reaches
//! them.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::projects::load as load_project;
use super::{ApiError, Engine};
use crate::proposals::apply::{self, Accept, Accepted, Actor, Rebased, Reject, Rejected};
use crate::proposals::{self, ProposalStatus, ProposalView};

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
    pub status: Option<super::dto::ProposalStatus>,
    #[serde(default)]
    #[ts(optional)]
    pub kind: Option<super::dto::ProposalKind>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ProposalListResult {
    /// Newest first, with staleness computed now.
    pub proposals: Vec<super::dto::ProposalView>,
}

pub(super) fn list(engine: &Engine, params: ProposalListParams) -> Result<ProposalListResult, ApiError> {
    load_project(engine, &params.project_id)?;
    let store = engine.store();
    let status = params.status.map(ProposalStatus::from);
    let kind = params.kind.map(proposals::ProposalKind::from);
    let mut out = Vec::new();
    for proposal in proposals::list(store, &params.project_id)?.into_iter().rev() {
        if params.owner_id.as_deref().is_some_and(|owner| proposal.origin.owner_id() != Some(owner))
            || status.is_some_and(|s| s != proposal.status)
            || kind.is_some_and(|k| k != proposal.kind)
        {
            continue;
        }
        out.push(super::dto::ProposalView::from(&proposals::view(store, proposal)?));
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
    pub records: Vec<super::dto::AuditRecord>,
}

pub(super) fn audit(engine: &Engine, params: ProposalAuditParams) -> Result<ProposalAuditResult, ApiError> {
    load_project(engine, &params.project_id)?;
    Ok(ProposalAuditResult { records: apply::audit(engine.store(), &params.project_id)?.iter().map(Into::into).collect() })
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProposalWhyParams {
    pub proposal_id: String,
    /// Only the sources this hunk came with.
    #[serde(default)]
    #[ts(optional)]
    pub hunk_id: Option<String>,
}

/// One source of a proposal, with the hunks that came with it.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct WhySource {
    pub source: super::dto::ProvenanceSource,
    /// The hunks that came with it (empty for a proposal without hunks).
    pub hunk_ids: Vec<String>,
    /// For a tool result: the text the model was sent, as its log holds it (a large
    /// result's preview and reference), when the log still has it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub content: Option<String>,
}

/// "Why this change?": what the model had read before it proposed the change.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ProposalWhyResult {
    pub proposal_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub hunk_id: Option<String>,
    /// Oldest read first.
    pub sources: Vec<WhySource>,
}

pub(super) fn why(engine: &Engine, params: ProposalWhyParams) -> Result<ProposalWhyResult, ApiError> {
    let proposal = proposals::load(engine.store(), &params.proposal_id)?;
    if let Some(hunk_id) = &params.hunk_id {
        if !proposal.hunks.iter().any(|h| &h.id == hunk_id) {
            let ids = proposal.hunks.iter().map(|h| h.id.as_str()).collect::<Vec<_>>().join(", ");
            return Err(ApiError::not_found("hunk", hunk_id).hint_with("hunk_ids", format!("The proposal's hunks are: {ids}."), &[("ids", &ids)]));
        }
    }
    let mut sources = Vec::new();
    for source in &proposal.origin.sources {
        let hunk_ids: Vec<String> = proposal.hunks.iter().filter(|h| proposal.sources_of_hunk(&h.id).contains(&source)).map(|h| h.id.clone()).collect();
        if params.hunk_id.as_ref().is_some_and(|wanted| !hunk_ids.contains(wanted)) {
            continue;
        }
        let content = match source {
            crate::model::ProvenanceSource::ToolResult { owner_id, sequence, .. } => {
                engine.store().get::<crate::harness::Event>(&crate::store::keys::session_event(owner_id, *sequence))?.and_then(|event| match event.body {
                    crate::harness::EventBody::ToolResult { content, .. } => Some(content),
                    _ => None,
                })
            }
            _ => None,
        };
        sources.push(WhySource { source: source.into(), hunk_ids, content });
    }
    Ok(ProposalWhyResult { proposal_id: proposal.id, hunk_id: params.hunk_id, sources })
}
