//! The wire form of metric snapshots, their numbers and the canonical keys, and of an
//! account's days (see [`super`]).

use std::collections::BTreeMap;

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::api::dto::Platform;
use crate::model::Timestamp;

/// How exact a value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum Qualifier {
    Exact,
    /// `10w+`, `10万+`: at least this much.
    LowerBound,
    /// `1.2万`, `2.5k`: the platform rounded it.
    Rounded,
}

/// What a metric's value counts in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum MetricUnit {
    Count,
    /// A share between 0 and 1 (12.3% is 0.123).
    Ratio,
    Seconds,
    /// Money in fen (1/100 yuan), as WeChat reports 赞赏.
    Fen,
}

/// One reported number.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct MetricValue {
    pub value: f64,
    pub unit: MetricUnit,
    pub qualifier: Qualifier,
    /// The text it was read from, as written.
    pub raw: String,
}

/// A canonical metric: its key, unit and what it counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct MetricKeyInfo {
    pub key: &'static str,
    pub unit: MetricUnit,
    /// What it counts, in English (the UI words it by key).
    pub basis: &'static str,
}

/// What a snapshot's numbers cover.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum SnapshotWindow {
    /// Everything since publishing, as of `observed_at`.
    Cumulative,
    /// From `start` to `end`, both days included.
    Period { start: NaiveDate, end: NaiveDate },
    /// One day.
    Day { date: NaiveDate },
}

/// Where a snapshot came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum SnapshotSource {
    /// Typed by `author`.
    Manual { author: String },
    /// A row of an imported platform export: the file's SHA-256, the importer's id and
    /// version, the sheet and the row (1-based), and the row as it was.
    #[serde(rename_all = "camelCase")]
    Import { import_id: String, file_sha256: String, importer: String, importer_version: u32, sheet: Option<String>, row: u32, raw_row: Vec<(String, String)> },
    /// A platform API (not yet used).
    Api { name: String },
}

/// An observation of a publication's numbers; never changed once written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct MetricSnapshot {
    pub id: String,
    pub publication_id: String,
    pub project_id: String,
    pub platform: Platform,
    pub observed_at: Timestamp,
    /// Hours from publishing to `observed_at`.
    pub age_hours: f64,
    pub window: SnapshotWindow,
    pub source: SnapshotSource,
    /// Canonical metrics; a key that was not reported is absent, never 0.
    #[ts(as = "BTreeMap<String, MetricValue>")]
    pub metrics: BTreeMap<String, MetricValue>,
    /// Numbers without a canonical key: `extra.<platform>.<name>`.
    #[ts(as = "BTreeMap<String, MetricValue>")]
    pub extras: BTreeMap<String, MetricValue>,
    pub created_at: Timestamp,
}

/// One day of an account, as one source reported it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AccountSnapshot {
    pub id: String,
    pub account_id: String,
    pub platform: Platform,
    /// The day it covers, in the export's time zone (Beijing for WeChat).
    #[ts(type = "string")]
    pub date: NaiveDate,
    pub source: SnapshotSource,
    /// `followers_total`, `followers_new`, `followers_lost`, `followers_net`: those the
    /// export reported (absent, never 0, when it did not).
    #[ts(as = "BTreeMap<String, MetricValue>")]
    pub metrics: BTreeMap<String, MetricValue>,
    pub created_at: Timestamp,
}

/// Each value of a stored metric map, as its twin.
pub(super) fn metric_map(record: &BTreeMap<String, crate::performance::metrics::MetricValue>) -> BTreeMap<String, MetricValue> {
    record.iter().map(|(key, value)| (key.clone(), value.into())).collect()
}

impl From<crate::performance::numbers::Qualifier> for Qualifier {
    fn from(record: crate::performance::numbers::Qualifier) -> Self {
        use crate::performance::numbers::Qualifier as Q;
        match record {
            Q::Exact => Self::Exact,
            Q::LowerBound => Self::LowerBound,
            Q::Rounded => Self::Rounded,
        }
    }
}

impl From<crate::performance::metrics::MetricUnit> for MetricUnit {
    fn from(record: crate::performance::metrics::MetricUnit) -> Self {
        use crate::performance::metrics::MetricUnit as U;
        match record {
            U::Count => Self::Count,
            U::Ratio => Self::Ratio,
            U::Seconds => Self::Seconds,
            U::Fen => Self::Fen,
        }
    }
}

impl From<&crate::performance::metrics::MetricValue> for MetricValue {
    fn from(record: &crate::performance::metrics::MetricValue) -> Self {
        MetricValue { value: record.value, unit: record.unit.into(), qualifier: record.qualifier.into(), raw: record.raw.clone() }
    }
}

impl From<&crate::performance::metrics::MetricKeyInfo> for MetricKeyInfo {
    fn from(record: &crate::performance::metrics::MetricKeyInfo) -> Self {
        MetricKeyInfo { key: record.key, unit: record.unit.into(), basis: record.basis }
    }
}

impl From<&crate::performance::metrics::SnapshotWindow> for SnapshotWindow {
    fn from(record: &crate::performance::metrics::SnapshotWindow) -> Self {
        use crate::performance::metrics::SnapshotWindow as W;
        match record {
            W::Cumulative => Self::Cumulative,
            W::Period { start, end } => Self::Period { start: *start, end: *end },
            W::Day { date } => Self::Day { date: *date },
        }
    }
}

impl From<SnapshotWindow> for crate::performance::metrics::SnapshotWindow {
    fn from(window: SnapshotWindow) -> Self {
        match window {
            SnapshotWindow::Cumulative => Self::Cumulative,
            SnapshotWindow::Period { start, end } => Self::Period { start, end },
            SnapshotWindow::Day { date } => Self::Day { date },
        }
    }
}

impl From<&crate::performance::metrics::SnapshotSource> for SnapshotSource {
    fn from(record: &crate::performance::metrics::SnapshotSource) -> Self {
        use crate::performance::metrics::SnapshotSource as S;
        match record {
            S::Manual { author } => Self::Manual { author: author.clone() },
            S::Import { import_id, file_sha256, importer, importer_version, sheet, row, raw_row } => Self::Import {
                import_id: import_id.clone(),
                file_sha256: file_sha256.clone(),
                importer: importer.clone(),
                importer_version: *importer_version,
                sheet: sheet.clone(),
                row: *row,
                raw_row: raw_row.clone(),
            },
            S::Api { name } => Self::Api { name: name.clone() },
        }
    }
}

impl From<&crate::performance::metrics::MetricSnapshot> for MetricSnapshot {
    fn from(record: &crate::performance::metrics::MetricSnapshot) -> Self {
        MetricSnapshot {
            id: record.id.clone(),
            publication_id: record.publication_id.clone(),
            project_id: record.project_id.clone(),
            platform: record.platform.into(),
            observed_at: record.observed_at,
            age_hours: record.age_hours,
            window: (&record.window).into(),
            source: (&record.source).into(),
            metrics: metric_map(&record.metrics),
            extras: metric_map(&record.extras),
            created_at: record.created_at,
        }
    }
}

impl From<crate::performance::metrics::MetricSnapshot> for MetricSnapshot {
    fn from(record: crate::performance::metrics::MetricSnapshot) -> Self {
        Self::from(&record)
    }
}

impl From<&crate::performance::account_days::AccountSnapshot> for AccountSnapshot {
    fn from(record: &crate::performance::account_days::AccountSnapshot) -> Self {
        AccountSnapshot {
            id: record.id.clone(),
            account_id: record.account_id.clone(),
            platform: record.platform.into(),
            date: record.date,
            source: (&record.source).into(),
            metrics: metric_map(&record.metrics),
            created_at: record.created_at,
        }
    }
}
