//! The wire form of an import's preview: what each row of a platform's export would
//! do (see [`super`]).

use std::collections::BTreeMap;

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::metrics::metric_map;
use super::MetricValue;
use crate::api::dto::Platform;
use crate::model::Timestamp;

/// What one row of an export describes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum ExportTarget {
    /// A post: the row becomes a metric snapshot of its publication.
    #[default]
    Posts,
    /// A day of one account (WeChat 用户分析): the row becomes an account snapshot;
    /// the `published` column is the day.
    Account,
}

/// What happens to one row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "status", rename_all = "camelCase")]
pub enum RowOutcome {
    /// A snapshot of this publication would be (or was) written.
    #[serde(rename_all = "camelCase")]
    Matched { publication_id: String, by: String },
    /// Several publications fit; the person picks one (`assign`).
    #[serde(rename_all = "camelCase")]
    Ambiguous { candidates: Vec<String> },
    /// No publication fits; the person picks one, adds one, or skips the row.
    Unmatched,
    /// The person chose to skip it.
    Skipped,
    /// A value or the time could not be read; `problem` says which.
    NotUnderstood { problem: String },
    /// An account export's day: an account snapshot of `account_id` would be (or was)
    /// written for `date`.
    #[serde(rename_all = "camelCase")]
    AccountDay {
        account_id: String,
        #[ts(type = "string")]
        date: NaiveDate,
    },
}

/// One row of the preview.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RowPreview {
    /// 1-based, as a spreadsheet numbers it.
    pub row: u32,
    pub title: String,
    pub post_id: Option<String>,
    pub published_at: Option<Timestamp>,
    pub outcome: RowOutcome,
    #[ts(as = "BTreeMap<String, MetricValue>")]
    pub metrics: BTreeMap<String, MetricValue>,
    /// Marked private by the export (Douyin 自见).
    pub private: bool,
}

/// The result of reading a file: what each row would do.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ImportPreview {
    /// `sha256:<hex>` of the file's bytes.
    pub file_sha256: String,
    /// `x-content@v1`: the export profile that read it.
    pub importer: String,
    pub importer_name: String,
    pub platform: Platform,
    /// Posts (each row a publication's snapshot) or one account's days.
    pub target: ExportTarget,
    /// For an account export: the account its days are written to (the one given, or the
    /// platform's only account); `None` until the person says which.
    pub account_id: Option<String>,
    pub encoding: String,
    /// Set when this exact file was imported before: nothing more would be written.
    pub already_imported: Option<String>,
    pub rows: Vec<RowPreview>,
    pub matched: u32,
    pub unmatched: u32,
    pub ambiguous: u32,
    pub skipped: u32,
    pub not_understood: u32,
}

impl From<crate::performance::import::ExportTarget> for ExportTarget {
    fn from(record: crate::performance::import::ExportTarget) -> Self {
        use crate::performance::import::ExportTarget as T;
        match record {
            T::Posts => Self::Posts,
            T::Account => Self::Account,
        }
    }
}

impl From<&crate::performance::import::RowOutcome> for RowOutcome {
    fn from(record: &crate::performance::import::RowOutcome) -> Self {
        use crate::performance::import::RowOutcome as O;
        match record {
            O::Matched { publication_id, by } => Self::Matched { publication_id: publication_id.clone(), by: by.clone() },
            O::Ambiguous { candidates } => Self::Ambiguous { candidates: candidates.clone() },
            O::Unmatched => Self::Unmatched,
            O::Skipped => Self::Skipped,
            O::NotUnderstood { problem } => Self::NotUnderstood { problem: problem.clone() },
            O::AccountDay { account_id, date } => Self::AccountDay { account_id: account_id.clone(), date: *date },
        }
    }
}

impl From<&crate::performance::import::RowPreview> for RowPreview {
    fn from(record: &crate::performance::import::RowPreview) -> Self {
        RowPreview {
            row: record.row,
            title: record.title.clone(),
            post_id: record.post_id.clone(),
            published_at: record.published_at,
            outcome: (&record.outcome).into(),
            metrics: metric_map(&record.metrics),
            private: record.private,
        }
    }
}

impl From<&crate::performance::import::ImportPreview> for ImportPreview {
    fn from(record: &crate::performance::import::ImportPreview) -> Self {
        ImportPreview {
            file_sha256: record.file_sha256.clone(),
            importer: record.importer.clone(),
            importer_name: record.importer_name.clone(),
            platform: record.platform.into(),
            target: record.target.into(),
            account_id: record.account_id.clone(),
            encoding: record.encoding.clone(),
            already_imported: record.already_imported.clone(),
            rows: record.rows.iter().map(Into::into).collect(),
            matched: record.matched,
            unmatched: record.unmatched,
            ambiguous: record.ambiguous,
            skipped: record.skipped,
            not_understood: record.not_understood,
        }
    }
}
