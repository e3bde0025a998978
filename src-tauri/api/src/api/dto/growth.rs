//! The wire form of one-click optimize: a run with its targets and outcomes, what
//! applying did per target, and the platform-fit report (see [`super`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

use super::Finding;
use super::{ApiError, ErrorCode, Hint, Platform};
use super::{Goal, Intensity, Target};
use crate::model::Timestamp;

/// What the person wants kept or avoided.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RunConstraints {
    #[serde(default)]
    pub keep_voice: bool,
    #[serde(default)]
    pub keep_title: bool,
    #[serde(default)]
    pub keep_structure: bool,
    #[serde(default)]
    pub avoid_clickbait: bool,
}

/// A run's input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RunInput {
    pub platforms: Vec<Platform>,
    pub goal: Goal,
    pub intensity: Intensity,
    pub constraints: RunConstraints,
    /// "Optimize this draft": only this platform's draft, the source unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub draft: Option<Platform>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Running,
    /// Stopped mid-run when the app closed; `optimize.resume` carries on where it stopped.
    Interrupted,
    Ready,
    Failed,
    Cancelled,
    Applied,
    PartlyApplied,
    Rejected,
}

/// What became of one target of the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum TargetOutcome {
    /// Waiting for the person.
    Pending,
    /// Accepted (all or some hunks).
    Applied,
    /// The target moved since the run; nothing was written for it.
    Conflict,
    Rejected,
    /// Nothing to apply: no change, or no saved draft to change.
    Unavailable,
}

/// One target of a run: the source or a platform draft.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RunTarget {
    pub target: Target,
    /// The proposal to review (a source patch, or a draft patch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub proposal_id: Option<String>,
    /// The title candidates (source only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub title_proposal_id: Option<String>,
    /// What changed and why, in a sentence or two; never a promise.
    pub summary: String,
    /// Findings of the candidate: risky terms (with spans into the source), limits.
    pub risks: Vec<Finding>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub fit_before: Option<FitReport>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub fit_after: Option<FitReport>,
    /// Why the candidate needs the person's eye: `over_limit: …`, `risky_terms: …`
    /// (each banned, absolute or promising term the candidate still introduces after
    /// another round, with its UTF-16 span into the candidate text or its title
    /// candidate), `dropped_titles` (title candidates the engine would refuse, each
    /// named by a `title_candidate` finding in `risks`), `no_saved_draft`,
    /// `summary_withheld`.
    pub flags: Vec<String>,
    pub outcome: TargetOutcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub outcome_message: Option<String>,
}

/// Why a run failed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RunError {
    pub code: ErrorCode,
    pub message: String,
    pub hints: Vec<Hint>,
}

/// Where a run's time went: all of it, and the model calls' share (the rest is the
/// engine's overhead: snapshot, compiles, checks, fit reports, proposals, the log).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RunTimings {
    pub total_micros: u64,
    pub model_micros: u64,
    pub model_calls: u32,
}

/// An optimization run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Run {
    pub id: String,
    pub project_id: String,
    pub profile_id: String,
    /// The model the server reported.
    pub model: String,
    pub input: RunInput,
    pub status: RunStatus,
    /// The stage running or reached last.
    pub stage: String,
    /// The project's revision and latest version the run read.
    pub base_revision: u64,
    pub base_head: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub snapshot_id: Option<String>,
    /// The id of every prompt layer the run's model calls used.
    pub prompt_layers: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "unknown")]
    pub strategy: Option<Value>,
    pub titles: Vec<String>,
    pub targets: Vec<RunTarget>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub error: Option<RunError>,
    /// Whether `optimize.resume` can take it up again, reusing the model's replies
    /// already recorded: a run the app's closing interrupted, or one that failed
    /// because a model call failed (not because the model kept answering wrongly,
    /// which a replay would only repeat).
    #[serde(default)]
    pub resumable: bool,
    /// What the fit report measures, and what it does not.
    pub disclaimer: String,
    #[serde(default)]
    pub timings: RunTimings,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// What applying did for one target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AppliedTarget {
    pub target: Target,
    pub outcome: TargetOutcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub version: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub draft_revision: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub error: Option<ApiError>,
}

/// One point of the report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct FitPoint {
    /// Stable: `title_length`, `hook`, `paragraphs`, `headings`, `tags`, `cta`, `links`, `limits`.
    pub check: String,
    pub passed: bool,
    /// How much the point weighs in the score.
    pub weight: u32,
    /// What was measured, for the person: "title 12 characters; the rule is 14–26".
    pub measured: String,
    /// The rule, in the profile's words where it has them.
    pub rule: String,
    /// The stable id of `measured`'s wording (`title_length`, `cta.missing`,
    /// `links.footnotes`, `limits.over`, ...) and the values it names, so the UI can
    /// say it in the person's language; `measured` is the English. Absent in reports
    /// recorded before wordings existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub message_id: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[ts(as = "Option<BTreeMap<String, String>>", optional)]
    pub params: BTreeMap<String, String>,
    /// For `limits`: the blocking findings `measured` lists, each with its own wording.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<Finding>>", optional)]
    pub findings: Vec<Finding>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct FitReport {
    pub platform: Platform,
    /// The growth and draft profile versions used.
    pub profile_ids: Vec<String>,
    /// 0–100: the weighted share of points passed.
    pub score: u32,
    pub points: Vec<FitPoint>,
    pub disclaimer: String,
}

/// The fit report of each platform's draft: the fresh compile of the working copy, and
/// the saved draft when there is one.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PlatformFit {
    pub platform: Platform,
    pub compiled: FitReport,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub saved: Option<FitReport>,
}

impl From<&crate::growth::run::RunConstraints> for RunConstraints {
    fn from(record: &crate::growth::run::RunConstraints) -> Self {
        RunConstraints { keep_voice: record.keep_voice, keep_title: record.keep_title, keep_structure: record.keep_structure, avoid_clickbait: record.avoid_clickbait }
    }
}

impl From<RunConstraints> for crate::growth::run::RunConstraints {
    fn from(constraints: RunConstraints) -> Self {
        Self { keep_voice: constraints.keep_voice, keep_title: constraints.keep_title, keep_structure: constraints.keep_structure, avoid_clickbait: constraints.avoid_clickbait }
    }
}

impl From<&crate::growth::run::RunInput> for RunInput {
    fn from(record: &crate::growth::run::RunInput) -> Self {
        RunInput {
            platforms: record.platforms.iter().map(Into::into).collect(),
            goal: record.goal.into(),
            intensity: record.intensity.into(),
            constraints: (&record.constraints).into(),
            draft: record.draft.map(Into::into),
        }
    }
}

impl From<&crate::growth::run::RunStatus> for RunStatus {
    fn from(record: &crate::growth::run::RunStatus) -> Self {
        use crate::growth::run::RunStatus as S;
        match record {
            S::Running => Self::Running,
            S::Interrupted => Self::Interrupted,
            S::Ready => Self::Ready,
            S::Failed => Self::Failed,
            S::Cancelled => Self::Cancelled,
            S::Applied => Self::Applied,
            S::PartlyApplied => Self::PartlyApplied,
            S::Rejected => Self::Rejected,
        }
    }
}

impl From<&crate::growth::run::TargetOutcome> for TargetOutcome {
    fn from(record: &crate::growth::run::TargetOutcome) -> Self {
        use crate::growth::run::TargetOutcome as O;
        match record {
            O::Pending => Self::Pending,
            O::Applied => Self::Applied,
            O::Conflict => Self::Conflict,
            O::Rejected => Self::Rejected,
            O::Unavailable => Self::Unavailable,
        }
    }
}

impl From<&crate::growth::run::RunTarget> for RunTarget {
    fn from(record: &crate::growth::run::RunTarget) -> Self {
        RunTarget {
            target: (&record.target).into(),
            proposal_id: record.proposal_id.clone(),
            title_proposal_id: record.title_proposal_id.clone(),
            summary: record.summary.clone(),
            risks: record.risks.iter().map(Into::into).collect(),
            fit_before: record.fit_before.as_ref().map(Into::into),
            fit_after: record.fit_after.as_ref().map(Into::into),
            flags: record.flags.clone(),
            outcome: (&record.outcome).into(),
            outcome_message: record.outcome_message.clone(),
        }
    }
}

impl From<&crate::growth::run::RunError> for RunError {
    fn from(record: &crate::growth::run::RunError) -> Self {
        RunError { code: record.code.into(), message: record.message.clone(), hints: record.hints.iter().map(Into::into).collect() }
    }
}

impl From<&crate::growth::run::RunTimings> for RunTimings {
    fn from(record: &crate::growth::run::RunTimings) -> Self {
        RunTimings { total_micros: record.total_micros, model_micros: record.model_micros, model_calls: record.model_calls }
    }
}

impl From<&crate::growth::run::Run> for Run {
    fn from(record: &crate::growth::run::Run) -> Self {
        Run {
            id: record.id.clone(),
            project_id: record.project_id.clone(),
            profile_id: record.profile_id.clone(),
            model: record.model.clone(),
            input: (&record.input).into(),
            status: (&record.status).into(),
            stage: record.stage.clone(),
            base_revision: record.base_revision,
            base_head: record.base_head,
            snapshot_id: record.snapshot_id.clone(),
            prompt_layers: record.prompt_layers.clone(),
            strategy: record.strategy.clone(),
            titles: record.titles.clone(),
            targets: record.targets.iter().map(Into::into).collect(),
            error: record.error.as_ref().map(Into::into),
            resumable: record.resumable,
            disclaimer: record.disclaimer.clone(),
            timings: (&record.timings).into(),
            created_at: record.created_at,
            updated_at: record.updated_at,
        }
    }
}

impl From<crate::growth::run::Run> for Run {
    fn from(record: crate::growth::run::Run) -> Self {
        (&record).into()
    }
}

impl From<&crate::growth::run::AppliedTarget> for AppliedTarget {
    fn from(record: &crate::growth::run::AppliedTarget) -> Self {
        AppliedTarget {
            target: (&record.target).into(),
            outcome: (&record.outcome).into(),
            version: record.version,
            draft_revision: record.draft_revision,
            error: record.error.as_ref().map(Into::into),
        }
    }
}

impl From<&crate::growth::fit::FitPoint> for FitPoint {
    fn from(record: &crate::growth::fit::FitPoint) -> Self {
        FitPoint {
            check: record.check.clone(),
            passed: record.passed,
            weight: record.weight,
            measured: record.measured.clone(),
            rule: record.rule.clone(),
            message_id: record.message_id.clone(),
            params: record.params.clone(),
            findings: record.findings.iter().map(Into::into).collect(),
        }
    }
}

impl From<&crate::growth::fit::FitReport> for FitReport {
    fn from(record: &crate::growth::fit::FitReport) -> Self {
        FitReport {
            platform: record.platform.into(),
            profile_ids: record.profile_ids.clone(),
            score: record.score,
            points: record.points.iter().map(Into::into).collect(),
            disclaimer: record.disclaimer.clone(),
        }
    }
}

impl From<&crate::growth::PlatformFit> for PlatformFit {
    fn from(record: &crate::growth::PlatformFit) -> Self {
        PlatformFit { platform: record.platform.into(), compiled: (&record.compiled).into(), saved: record.saved.as_ref().map(Into::into) }
    }
}
