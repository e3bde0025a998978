//! The wire form of the before/after report on accepted AI changes, of the performance
//! summary the AI reads, and of the setting that lets it (see [`super`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::{MetricUnit, PublicationFormat};
use crate::api::dto::Platform;
use crate::model::Timestamp;

/// The age a publication is compared at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum AgeBucket {
    #[serde(rename = "24h")]
    H24,
    #[serde(rename = "72h")]
    H72,
    #[serde(rename = "7d")]
    D7,
}

/// Why a publication is not in the comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum Exclusion {
    /// Boosted or unknown traffic.
    Boosted,
    Private,
    /// No snapshot in the bucket's window yet (too young, or not observed then).
    NoSnapshotAtAge,
    /// The snapshot at that age does not report the metric.
    MetricNotReported,
    /// Under the floor (a count under 100).
    UnderFloor,
    /// Fewer than three earlier comparable posts of the account to compare with.
    NoBaseline,
}

/// One publication measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ReportPoint {
    pub publication_id: String,
    pub project_id: String,
    pub title: String,
    pub published_at: Timestamp,
    pub account_id: Option<String>,
    pub format: PublicationFormat,
    /// Its version carries accepted AI changes.
    pub ai: bool,
    /// The snapshot measured (evidence) and its age in hours.
    pub snapshot_id: String,
    pub age_hours: f64,
    pub value: f64,
    /// The median of the account's previous comparable posts at the same age.
    pub baseline: Option<f64>,
    /// `value / baseline`.
    pub multiple: Option<f64>,
    /// Excluded, and why (a point with a baseline can still be excluded for the floor).
    pub excluded: Option<Exclusion>,
}

/// One side of the comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ReportSide {
    pub n: u32,
    /// Absent when `n` is under [`MIN_PER_SIDE`]: not enough data.
    pub median_multiple: Option<f64>,
    pub p30: Option<f64>,
    pub p70: Option<f64>,
}

/// The report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct BeforeAfterReport {
    pub platform: Platform,
    pub project_id: Option<String>,
    pub metric: String,
    pub unit: Option<MetricUnit>,
    pub bucket: AgeBucket,
    pub with_ai: ReportSide,
    pub without_ai: ReportSide,
    /// True when both sides have enough posts to show a number.
    pub enough_data: bool,
    /// Publications left out, by reason.
    #[ts(as = "BTreeMap<String, u32>")]
    pub excluded: BTreeMap<Exclusion, u32>,
    /// Posts with AI changes that came right after an unusually weak post of the same
    /// account (multiple under 0.5): their rise may be regression to the mean.
    pub after_weak_post: u32,
    /// Every measured publication, oldest first: the account's level over time (each
    /// point's baseline) is visible from them.
    pub points: Vec<ReportPoint>,
}

/// How a post's number was observed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum Evidence {
    /// Read from the platform's own export (or its API).
    Measured,
    /// Typed by a person: anecdotal.
    Manual,
}

/// One post of a summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SummaryPost {
    pub publication_id: String,
    /// The title as published, clipped.
    pub title: String,
    /// Characters of the published version's source, when that version is here.
    pub length: Option<u32>,
    /// When it went out, in its own time zone (`2026-03-04 Wed 20:30 Asia/Shanghai`).
    pub posted: String,
    pub format: PublicationFormat,
    /// Its value over the account's usual (see [`report`]).
    pub multiple: f64,
    pub value: f64,
    pub baseline: f64,
    pub age_hours: f64,
    /// The snapshot it was measured by.
    pub snapshot_ids: Vec<String>,
    pub evidence: Evidence,
}

/// The summary of one platform.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PerformanceSummary {
    pub platform: Platform,
    /// The metric key compared (the platform's reach count) and what it counts.
    pub metric: String,
    pub basis: String,
    pub bucket: AgeBucket,
    /// Eligible posts (the report's gates passed, with a multiple).
    pub eligible: u32,
    pub strongest: Vec<SummaryPost>,
    pub weakest: Vec<SummaryPost>,
    /// The text the model reads (empty when there is nothing to say).
    pub text: String,
}

/// Whether performance history may enter AI context, and who decides.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ContextState {
    /// What applies: the setting, unless the workspace policy turns it off.
    pub enabled: bool,
    /// The person's own setting (on when never set).
    pub setting: bool,
    /// True when the workspace policy turns it off (the setting is then read-only).
    pub decided_by_policy: bool,
    /// The workspace whose policy decides, and the owner who set it, when it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub policy_workspace: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub policy_set_by: Option<String>,
}

impl From<crate::performance::report::AgeBucket> for AgeBucket {
    fn from(record: crate::performance::report::AgeBucket) -> Self {
        use crate::performance::report::AgeBucket as B;
        match record {
            B::H24 => Self::H24,
            B::H72 => Self::H72,
            B::D7 => Self::D7,
        }
    }
}

impl From<AgeBucket> for crate::performance::report::AgeBucket {
    fn from(bucket: AgeBucket) -> Self {
        match bucket {
            AgeBucket::H24 => Self::H24,
            AgeBucket::H72 => Self::H72,
            AgeBucket::D7 => Self::D7,
        }
    }
}

impl From<crate::performance::report::Exclusion> for Exclusion {
    fn from(record: crate::performance::report::Exclusion) -> Self {
        use crate::performance::report::Exclusion as E;
        match record {
            E::Boosted => Self::Boosted,
            E::Private => Self::Private,
            E::NoSnapshotAtAge => Self::NoSnapshotAtAge,
            E::MetricNotReported => Self::MetricNotReported,
            E::UnderFloor => Self::UnderFloor,
            E::NoBaseline => Self::NoBaseline,
        }
    }
}

impl From<&crate::performance::report::ReportPoint> for ReportPoint {
    fn from(record: &crate::performance::report::ReportPoint) -> Self {
        ReportPoint {
            publication_id: record.publication_id.clone(),
            project_id: record.project_id.clone(),
            title: record.title.clone(),
            published_at: record.published_at,
            account_id: record.account_id.clone(),
            format: record.format.into(),
            ai: record.ai,
            snapshot_id: record.snapshot_id.clone(),
            age_hours: record.age_hours,
            value: record.value,
            baseline: record.baseline,
            multiple: record.multiple,
            excluded: record.excluded.map(Into::into),
        }
    }
}

impl From<&crate::performance::report::ReportSide> for ReportSide {
    fn from(record: &crate::performance::report::ReportSide) -> Self {
        ReportSide { n: record.n, median_multiple: record.median_multiple, p30: record.p30, p70: record.p70 }
    }
}

impl From<&crate::performance::report::BeforeAfterReport> for BeforeAfterReport {
    fn from(record: &crate::performance::report::BeforeAfterReport) -> Self {
        BeforeAfterReport {
            platform: record.platform.into(),
            project_id: record.project_id.clone(),
            metric: record.metric.clone(),
            unit: record.unit.map(Into::into),
            bucket: record.bucket.into(),
            with_ai: (&record.with_ai).into(),
            without_ai: (&record.without_ai).into(),
            enough_data: record.enough_data,
            excluded: record.excluded.iter().map(|(reason, n)| ((*reason).into(), *n)).collect(),
            after_weak_post: record.after_weak_post,
            points: record.points.iter().map(Into::into).collect(),
        }
    }
}

impl From<crate::performance::report::BeforeAfterReport> for BeforeAfterReport {
    fn from(record: crate::performance::report::BeforeAfterReport) -> Self {
        Self::from(&record)
    }
}

impl From<crate::performance::context::Evidence> for Evidence {
    fn from(record: crate::performance::context::Evidence) -> Self {
        use crate::performance::context::Evidence as E;
        match record {
            E::Measured => Self::Measured,
            E::Manual => Self::Manual,
        }
    }
}

impl From<&crate::performance::context::SummaryPost> for SummaryPost {
    fn from(record: &crate::performance::context::SummaryPost) -> Self {
        SummaryPost {
            publication_id: record.publication_id.clone(),
            title: record.title.clone(),
            length: record.length,
            posted: record.posted.clone(),
            format: record.format.into(),
            multiple: record.multiple,
            value: record.value,
            baseline: record.baseline,
            age_hours: record.age_hours,
            snapshot_ids: record.snapshot_ids.clone(),
            evidence: record.evidence.into(),
        }
    }
}

impl From<&crate::performance::context::PerformanceSummary> for PerformanceSummary {
    fn from(record: &crate::performance::context::PerformanceSummary) -> Self {
        PerformanceSummary {
            platform: record.platform.into(),
            metric: record.metric.clone(),
            basis: record.basis.clone(),
            bucket: record.bucket.into(),
            eligible: record.eligible,
            strongest: record.strongest.iter().map(Into::into).collect(),
            weakest: record.weakest.iter().map(Into::into).collect(),
            text: record.text.clone(),
        }
    }
}

impl From<crate::performance::context::PerformanceSummary> for PerformanceSummary {
    fn from(record: crate::performance::context::PerformanceSummary) -> Self {
        Self::from(&record)
    }
}

impl From<crate::performance::context::ContextState> for ContextState {
    fn from(record: crate::performance::context::ContextState) -> Self {
        ContextState {
            enabled: record.enabled,
            setting: record.setting,
            decided_by_policy: record.decided_by_policy,
            policy_workspace: record.policy_workspace,
            policy_set_by: record.policy_set_by,
        }
    }
}
