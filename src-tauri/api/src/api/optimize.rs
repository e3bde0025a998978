//! One-click optimize: start a run (streaming its log's events), read, list, cancel
//! and apply runs. The pipeline and the apply rules are `growth::run`'s.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::dto::Platform;
use super::dto::{AppliedTarget, Event, Goal, Intensity, Run, RunConstraints};
use super::{ApiError, Engine, StreamEvent};
use crate::growth::run::{self, ApplySelection, RunInput};

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OptimizeStartParams {
    pub project_id: String,
    /// The target platforms; the project's (or all) when absent or empty.
    #[serde(default)]
    #[ts(optional)]
    pub platforms: Option<Vec<Platform>>,
    #[serde(default)]
    #[ts(optional)]
    pub goal: Option<Goal>,
    #[serde(default)]
    #[ts(optional)]
    pub intensity: Option<Intensity>,
    #[serde(default)]
    #[ts(optional)]
    pub constraints: Option<RunConstraints>,
    /// "Optimize this draft": only this platform's saved draft.
    #[serde(default)]
    #[ts(optional)]
    pub draft: Option<Platform>,
    /// An LLM profile id or name; the default profile when absent.
    #[serde(default)]
    #[ts(optional)]
    pub profile: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OptimizeRunRef {
    pub run_id: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OptimizeListParams {
    pub project_id: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct OptimizeListResult {
    /// Newest first.
    pub runs: Vec<Run>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct OptimizeCancelResult {
    /// False when the run was not running here.
    pub cancelled: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OptimizeApplyParams {
    pub run_id: String,
    /// Every target (the source and every platform).
    #[serde(default)]
    #[ts(optional)]
    pub all: Option<bool>,
    /// The source proposal.
    #[serde(default)]
    #[ts(optional)]
    pub source: Option<bool>,
    /// These platforms' draft proposals.
    #[serde(default)]
    #[ts(optional)]
    pub platforms: Option<Vec<Platform>>,
    /// Reject every open proposal of the run instead.
    #[serde(default)]
    #[ts(optional)]
    pub reject_all: Option<bool>,
    /// The title to take from the candidates (with the source).
    #[serde(default)]
    #[ts(optional)]
    pub title: Option<String>,
    /// Per proposal id, the hunks to take; absent: every hunk.
    #[serde(default)]
    #[ts(optional)]
    pub hunks: Option<std::collections::BTreeMap<String, Vec<String>>>,
    /// The person confirmed changing ready or published drafts.
    #[serde(default)]
    #[ts(optional)]
    pub confirm_final: Option<bool>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct OptimizeApplyResult {
    pub run: Run,
    /// One entry per target acted on, in the run's order.
    pub results: Vec<AppliedTarget>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct OptimizeEventsResult {
    pub events: Vec<Event>,
}

pub(super) fn start(engine: &Engine, params: OptimizeStartParams, on_event: &mut dyn FnMut(StreamEvent)) -> Result<Run, ApiError> {
    let input = RunInput {
        platforms: params.platforms.unwrap_or_default().into_iter().map(Into::into).collect(),
        goal: params.goal.map(Into::into).unwrap_or_default(),
        intensity: params.intensity.map(Into::into).unwrap_or_default(),
        constraints: params.constraints.map(Into::into).unwrap_or_default(),
        draft: params.draft.map(Into::into),
    };
    let mut emit = |event: &crate::harness::Event| on_event(StreamEvent::Harness(Box::new(event.into())));
    run::start(engine.harness(), &params.project_id, params.profile.as_deref(), input, &mut emit).map(Into::into)
}

pub(super) fn resume(engine: &Engine, params: OptimizeRunRef, on_event: &mut dyn FnMut(StreamEvent)) -> Result<Run, ApiError> {
    let mut emit = |event: &crate::harness::Event| on_event(StreamEvent::Harness(Box::new(event.into())));
    run::resume(engine.harness(), &params.run_id, &mut emit).map(Into::into)
}

pub(super) fn get(engine: &Engine, params: OptimizeRunRef) -> Result<Run, ApiError> {
    run::load(engine.harness(), &params.run_id).map(Into::into)
}

pub(super) fn list(engine: &Engine, params: OptimizeListParams) -> Result<OptimizeListResult, ApiError> {
    Ok(OptimizeListResult { runs: run::list(engine.harness(), &params.project_id)?.iter().map(Into::into).collect() })
}

pub(super) fn cancel(engine: &Engine, params: OptimizeRunRef) -> Result<OptimizeCancelResult, ApiError> {
    Ok(OptimizeCancelResult { cancelled: run::cancel(engine.harness(), &params.run_id)? })
}

pub(super) fn apply(engine: &Engine, params: OptimizeApplyParams) -> Result<OptimizeApplyResult, ApiError> {
    let selection = ApplySelection {
        all: params.all.unwrap_or(false),
        source: params.source.unwrap_or(false),
        platforms: params.platforms.unwrap_or_default().into_iter().map(Into::into).collect(),
        reject_all: params.reject_all.unwrap_or(false),
        title: params.title,
        hunks: params.hunks.unwrap_or_default(),
        confirm_final: params.confirm_final.unwrap_or(false),
    };
    let (run, results) = run::apply(engine.harness(), &params.run_id, &selection)?;
    Ok(OptimizeApplyResult { run: run.into(), results: results.iter().map(Into::into).collect() })
}

pub(super) fn events(engine: &Engine, params: OptimizeRunRef) -> Result<OptimizeEventsResult, ApiError> {
    run::load(engine.harness(), &params.run_id)?;
    Ok(OptimizeEventsResult { events: engine.session_events(&params.run_id)?.iter().map(Into::into).collect() })
}
