//! Applying a ready run: each selected target through the proposals module's own
//! accept (or reject), in its own transaction, so a target that moved since the run is
//! a CONFLICT for that target alone and writes nothing for it.

use serde::{Deserialize, Serialize};

use super::run::{load, Run, RunStatus, TargetOutcome};
use crate::error::{ApiError, ErrorCode};
use crate::harness::{EventBody, Harness, Meta};
use crate::model::Platform;
use crate::proposals::apply::{Accept, Actor, Reject};
use crate::proposals::{self, Target};
use crate::store::{Batch, Durability};

/// What to apply of a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApplySelection {
    /// Every target (the source and every platform).
    pub all: bool,
    /// The source proposal.
    pub source: bool,
    /// These platforms' draft proposals.
    pub platforms: Vec<Platform>,
    /// Reject every open proposal of the run instead.
    pub reject_all: bool,
    /// The title to take from the candidates (with the source).
    pub title: Option<String>,
    /// Per proposal, the hunks to take (the rest stay open); absent: every hunk.
    pub hunks: std::collections::BTreeMap<String, Vec<String>>,
    /// The person confirmed changing ready or published drafts.
    pub confirm_final: bool,
}

/// What applying did for one target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AppliedTarget {
    pub target: Target,
    pub outcome: TargetOutcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draft_revision: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ApiError>,
}

/// Applies the selected targets of a ready run, each in its own transaction (a moved
/// target is a CONFLICT for that target alone and writes nothing for it), and records
/// the outcomes on the run.
///
/// Errors: NOT_FOUND; VALIDATION for an empty selection or a platform not in the run;
/// CONFLICT when the run is not ready (running, failed, cancelled).
pub fn apply(h: Harness<'_>, run_id: &str, selection: &ApplySelection) -> Result<(Run, Vec<AppliedTarget>), ApiError> {
    let mut run = load(h, run_id)?;
    if !matches!(run.status, RunStatus::Ready | RunStatus::PartlyApplied) {
        return Err(ApiError::new(ErrorCode::Conflict, format!("Run {} is {}; only a ready run can be applied.", run.id, run.status.as_str()))
            .hint("start_again", "Start a new optimization."));
    }
    for (i, platform) in selection.platforms.iter().enumerate() {
        if !run.targets.iter().any(|t| t.target == Target::Draft { platform: *platform }) {
            return Err(ApiError::validation(&format!("platforms[{i}]"), format!("Run {} has no {} target.", run.id, platform.as_str())));
        }
    }
    if !selection.all && !selection.source && selection.platforms.is_empty() && !selection.reject_all {
        return Err(ApiError::validation("platforms", "Choose what to apply: all, the source, platforms, or reject all."));
    }
    let mut results = Vec::new();
    for target in &mut run.targets {
        let chosen = selection.reject_all
            || selection.all
            || match &target.target {
                Target::Source => selection.source,
                Target::Draft { platform } => selection.platforms.contains(platform),
                _ => false,
            };
        if !chosen || target.outcome != TargetOutcome::Pending {
            continue;
        }
        if selection.reject_all {
            for id in [&target.proposal_id, &target.title_proposal_id].into_iter().flatten() {
                let request = Reject { proposal_id: id.clone(), hunks: None, reason: None };
                if let Err(error) = proposals::apply::reject(h.kernel, &request) {
                    if error.code != ErrorCode::Conflict {
                        return Err(error);
                    }
                }
            }
            target.outcome = TargetOutcome::Rejected;
            results.push(AppliedTarget { target: target.target.clone(), outcome: TargetOutcome::Rejected, version: None, draft_revision: None, error: None });
            continue;
        }
        let mut applied = AppliedTarget { target: target.target.clone(), outcome: TargetOutcome::Applied, version: None, draft_revision: None, error: None };
        let mut accept_one = |proposal_id: &str, expected_base: u64, choices: Option<Vec<String>>| -> Result<Option<ApiError>, ApiError> {
            let request = Accept {
                proposal_id: proposal_id.to_owned(),
                hunks: selection.hunks.get(proposal_id).cloned(),
                expected_base,
                choices,
                confirm_final: selection.confirm_final,
                actor: Actor::Person,
            };
            match proposals::apply::accept(h.kernel, &request) {
                Ok(accepted) => {
                    applied.version = accepted.version.as_ref().map(|v| v.number).or(applied.version);
                    applied.draft_revision = accepted.draft.as_ref().map(|d| d.revision).or(applied.draft_revision);
                    Ok(None)
                }
                Err(error) if matches!(error.code, ErrorCode::Conflict | ErrorCode::ReadOnly | ErrorCode::Validation) => Ok(Some(error)),
                Err(error) => Err(error),
            }
        };
        let mut failure = None;
        if let Some(id) = &target.proposal_id {
            let proposal = proposals::load(h.store(), id)?;
            let expected = match &proposal.target {
                Target::Draft { .. } => u64::from(proposal.base.draft_revision.unwrap_or(0)),
                _ => proposal.base.revision,
            };
            failure = accept_one(id, expected, None)?;
        }
        if failure.is_none() {
            if let (Some(id), Some(title)) = (&target.title_proposal_id, &selection.title) {
                // The title is taken on top of what this action just applied.
                let proposal = proposals::load(h.store(), id)?;
                let current = crate::project::load(h.store(), &proposal.project_id)?;
                let expected = if target.proposal_id.is_some() { current.revision } else { proposal.base.revision };
                failure = accept_one(id, expected, Some(vec![title.clone()]))?;
            }
        }
        if target.proposal_id.is_none() && selection.title.is_none() {
            continue;
        }
        if let Some(error) = failure {
            applied.outcome = if error.code == ErrorCode::Conflict { TargetOutcome::Conflict } else { TargetOutcome::Pending };
            target.outcome_message = Some(error.message.clone());
            applied.error = Some(error);
        } else {
            target.outcome_message = None;
        }
        target.outcome = applied.outcome;
        results.push(applied);
    }
    let open = run.targets.iter().filter(|t| t.outcome == TargetOutcome::Pending).count();
    let adopted = run.targets.iter().filter(|t| t.outcome == TargetOutcome::Applied).count();
    run.status = match (adopted, open) {
        (0, _) if run.targets.iter().all(|t| matches!(t.outcome, TargetOutcome::Rejected | TargetOutcome::Unavailable)) => RunStatus::Rejected,
        (0, _) => run.status,
        (_, 0) if run.targets.iter().all(|t| matches!(t.outcome, TargetOutcome::Applied | TargetOutcome::Unavailable)) => RunStatus::Applied,
        _ => RunStatus::PartlyApplied,
    };
    run.updated_at = h.now();
    let live = h.live_run(&run.id, &run.project_id)?;
    let mut extra = Batch::new();
    extra.put(&run)?;
    let message = results.iter().map(|r| format!("{}: {:?}", target_name(&r.target), r.outcome).to_lowercase()).collect::<Vec<_>>().join(", ");
    h.append_event(&live, Meta::default(), EventBody::RunStage { stage: "apply".to_owned(), state: "done".to_owned(), message }, extra, Durability::Durable)?;
    Ok((run, results))
}

/// `source` or the platform's name.
pub fn target_name(target: &Target) -> String {
    match target {
        Target::Draft { platform } => platform.as_str().to_owned(),
        _ => "source".to_owned(),
    }
}
