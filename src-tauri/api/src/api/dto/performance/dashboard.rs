//! The wire form of the workspace dashboard (see [`super`]).

use std::collections::BTreeMap;

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::{AgeBucket, MetricUnit, MetricValue, Publication};
use crate::api::dto::Platform;
use crate::model::Timestamp;

/// The periods the medians are taken over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum Interval {
    Week,
    Month,
}

/// A metric's latest value and where it was read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct LatestMetric {
    #[serde(flatten)]
    pub value: MetricValue,
    pub snapshot_id: String,
    pub observed_at: Timestamp,
    pub age_hours: f64,
}

/// One publication of the table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DashboardRow {
    pub publication: Publication,
    /// The account's name, when the publication names an account.
    pub account_name: Option<String>,
    /// Each canonical metric's newest observed value; a key never reported is absent.
    #[ts(as = "BTreeMap<String, LatestMetric>")]
    pub latest: BTreeMap<String, LatestMetric>,
    pub snapshot_count: u32,
}

/// One period of a platform's medians.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct MedianPoint {
    /// The period's first day (a Monday, or the 1st), in the publications' time zones.
    pub period: NaiveDate,
    /// Publications published in the period that have a value.
    pub n: u32,
    pub median: f64,
}

/// A platform's median of one metric over time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PlatformMedians {
    pub platform: Platform,
    pub metric: String,
    pub unit: Option<MetricUnit>,
    /// Periods with at least one value, oldest first.
    pub points: Vec<MedianPoint>,
    /// Publications of the platform (matching the filters) without a value of the
    /// metric (not reported, or no snapshot at the age asked).
    pub without_value: u32,
}

/// Publications posted on one day of the week at one hour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PostingCell {
    /// 0 is Monday, 6 Sunday.
    pub weekday: u8,
    /// 0–23, in the publication's own time zone.
    pub hour: u8,
    pub count: u32,
}

/// The dashboard.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Dashboard {
    /// The page of the table.
    pub rows: Vec<DashboardRow>,
    /// Publications matching the filters.
    pub total: u32,
    /// Canonical metric keys any row of this page reports, in canonical order: the
    /// table's columns (every row's, for an export).
    pub metric_keys: Vec<String>,
    /// The rows are ordered by a metric within each platform (platforms are not
    /// compared).
    pub grouped_by_platform: bool,
    pub interval: Interval,
    pub age: Option<AgeBucket>,
    /// One per platform among the matching publications, in [`PLATFORM_ORDER`].
    pub medians: Vec<PlatformMedians>,
    /// Cells with at least one publication.
    pub posting_times: Vec<PostingCell>,
}

impl From<crate::performance::dashboard::Interval> for Interval {
    fn from(record: crate::performance::dashboard::Interval) -> Self {
        use crate::performance::dashboard::Interval as I;
        match record {
            I::Week => Self::Week,
            I::Month => Self::Month,
        }
    }
}

impl From<Interval> for crate::performance::dashboard::Interval {
    fn from(interval: Interval) -> Self {
        match interval {
            Interval::Week => Self::Week,
            Interval::Month => Self::Month,
        }
    }
}

impl From<&crate::performance::dashboard::LatestMetric> for LatestMetric {
    fn from(record: &crate::performance::dashboard::LatestMetric) -> Self {
        LatestMetric { value: (&record.value).into(), snapshot_id: record.snapshot_id.clone(), observed_at: record.observed_at, age_hours: record.age_hours }
    }
}

impl From<&crate::performance::dashboard::DashboardRow> for DashboardRow {
    fn from(record: &crate::performance::dashboard::DashboardRow) -> Self {
        DashboardRow {
            publication: (&record.publication).into(),
            account_name: record.account_name.clone(),
            latest: record.latest.iter().map(|(key, latest)| (key.clone(), latest.into())).collect(),
            snapshot_count: record.snapshot_count,
        }
    }
}

impl From<&crate::performance::dashboard::MedianPoint> for MedianPoint {
    fn from(record: &crate::performance::dashboard::MedianPoint) -> Self {
        MedianPoint { period: record.period, n: record.n, median: record.median }
    }
}

impl From<&crate::performance::dashboard::PlatformMedians> for PlatformMedians {
    fn from(record: &crate::performance::dashboard::PlatformMedians) -> Self {
        PlatformMedians {
            platform: record.platform.into(),
            metric: record.metric.clone(),
            unit: record.unit.map(Into::into),
            points: record.points.iter().map(Into::into).collect(),
            without_value: record.without_value,
        }
    }
}

impl From<&crate::performance::dashboard::PostingCell> for PostingCell {
    fn from(record: &crate::performance::dashboard::PostingCell) -> Self {
        PostingCell { weekday: record.weekday, hour: record.hour, count: record.count }
    }
}

impl From<&crate::performance::dashboard::Dashboard> for Dashboard {
    fn from(record: &crate::performance::dashboard::Dashboard) -> Self {
        Dashboard {
            rows: record.rows.iter().map(Into::into).collect(),
            total: record.total,
            metric_keys: record.metric_keys.clone(),
            grouped_by_platform: record.grouped_by_platform,
            interval: record.interval.into(),
            age: record.age.map(Into::into),
            medians: record.medians.iter().map(Into::into).collect(),
            posting_times: record.posting_times.iter().map(Into::into).collect(),
        }
    }
}

impl From<crate::performance::dashboard::Dashboard> for Dashboard {
    fn from(record: crate::performance::dashboard::Dashboard) -> Self {
        Self::from(&record)
    }
}
