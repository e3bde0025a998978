//! The preview: what each row of a file would do, with the person's assignments
//! applied. Nothing is written.

use std::collections::BTreeMap;

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};

use super::super::metrics::MetricValue;
use super::super::Publication;
use super::matcher::Matcher;
use super::rows::read_rows;
use super::{decode, profiles, read_table, recognise, sniff, ExportProfile, ExportTarget, FileKind, ImportRecord};
use crate::error::ApiError;
use crate::model::{Platform, Timestamp};

/// What happens to one row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
    AccountDay { account_id: String, date: NaiveDate },
}

/// One row of the preview.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RowPreview {
    /// 1-based, as a spreadsheet numbers it.
    pub row: u32,
    pub title: String,
    pub post_id: Option<String>,
    pub published_at: Option<Timestamp>,
    pub outcome: RowOutcome,
    pub metrics: BTreeMap<String, MetricValue>,
    /// Marked private by the export (Douyin 自见).
    pub private: bool,
}

/// The result of reading a file: what each row would do.
#[derive(Debug, Clone, Serialize, Deserialize)]
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

/// What a person decided for rows: a publication id, or `skip`.
pub type Assignments = BTreeMap<u32, String>;

/// Reads `bytes`, recognises the export and previews every row against `publications`
/// (live ones), with the person's `assign`ments applied. Writes nothing.
pub fn preview(store: &crate::store::Store, bytes: &[u8], platform: Option<Platform>, publications: &[Publication], assign: &Assignments) -> Result<Prepared, ApiError> {
    preview_for(store, bytes, platform, publications, assign, None)
}

/// [`preview`], with the account an account export's days go to (`account_id`; without
/// it, the platform's only account, if it has exactly one). Errors also VALIDATION for
/// an account that is not one of the export platform's.
pub fn preview_for(
    store: &crate::store::Store,
    bytes: &[u8],
    platform: Option<Platform>,
    publications: &[Publication],
    assign: &Assignments,
    account_id: Option<&str>,
) -> Result<Prepared, ApiError> {
    let table = read_table(bytes)?;
    let all = profiles()?;
    let (profile, header_index) = recognise(&table, &all, platform)?;
    let file_sha256 = crate::store::sha256_ref(bytes);
    let already = store.get::<ImportRecord>(file_sha256.as_bytes())?.map(|r| r.id);
    let live: Vec<Publication> = publications.iter().filter(|p| p.removed_at.is_none() && p.platform == profile.platform).cloned().collect();
    let encoding = match sniff(bytes) {
        FileKind::Text => decode(bytes).1,
        FileKind::Xlsx => "xlsx",
        FileKind::Xls => "xls",
        FileKind::Html => decode(bytes).1,
        FileKind::Binary => "binary",
    };
    let account = match (profile.target, account_id) {
        (ExportTarget::Posts, _) => None,
        (ExportTarget::Account, Some(id)) => Some(super::super::publications::account_for(store, id, profile.platform)?.id),
        (ExportTarget::Account, None) => {
            let mine: Vec<super::super::Account> = super::super::accounts(store)?.into_iter().filter(|a| a.platform == profile.platform).collect();
            (mine.len() == 1).then(|| mine[0].id.clone())
        }
    };
    let zone: chrono_tz::Tz = profile.row.time_zone.as_deref().and_then(|z| z.parse().ok()).unwrap_or(chrono_tz::UTC);
    let matcher = Matcher::new(&live);
    let mut rows = Vec::new();
    let mut counts = [0u32; 5];
    for read in read_rows(profile, &table, header_index) {
        let outcome = if assign.get(&read.row).is_some_and(|c| c == "skip") {
            RowOutcome::Skipped
        } else if let Some(problem) = &read.problem {
            RowOutcome::NotUnderstood { problem: problem.clone() }
        } else if profile.target == ExportTarget::Account {
            match (&account, read.published_at) {
                (Some(account_id), Some(at)) => RowOutcome::AccountDay { account_id: account_id.clone(), date: at.with_timezone(&zone).date_naive() },
                (None, Some(_)) => RowOutcome::Unmatched,
                (_, None) => RowOutcome::NotUnderstood { problem: "The row has no day.".to_owned() },
            }
        } else if let Some(choice) = assign.get(&read.row) {
            if matcher.publication(choice).is_some() {
                RowOutcome::Matched { publication_id: choice.clone(), by: "person".to_owned() }
            } else {
                return Err(ApiError::validation(
                    &format!("assign.{}", read.row),
                    format!("Row {}: {choice:?} is not a live {} publication.", read.row, profile.platform.as_str()),
                )
                .problem("perf.bad_assignment", &[("row", &read.row.to_string())]));
            }
        } else {
            let (found, by) = matcher.candidates(&read);
            match found.len() {
                0 => RowOutcome::Unmatched,
                1 => RowOutcome::Matched { publication_id: found[0].id.clone(), by: by.to_owned() },
                _ => RowOutcome::Ambiguous { candidates: found.iter().map(|p| p.id.clone()).collect() },
            }
        };
        let slot = match outcome {
            RowOutcome::Matched { .. } | RowOutcome::AccountDay { .. } => 0,
            RowOutcome::Unmatched => 1,
            RowOutcome::Ambiguous { .. } => 2,
            RowOutcome::Skipped => 3,
            RowOutcome::NotUnderstood { .. } => 4,
        };
        counts[slot] += 1;
        let preview =
            RowPreview { row: read.row, title: read.title, post_id: read.post_id, published_at: read.published_at, outcome, metrics: read.metrics, private: read.private };
        rows.push(PreparedRow { preview, extras: read.extras, raw: read.raw });
    }
    let summary = ImportPreview {
        file_sha256,
        importer: format!("{}@v{}", profile.id, profile.version),
        importer_name: profile.name.clone(),
        platform: profile.platform,
        target: profile.target,
        account_id: account.clone(),
        encoding: encoding.to_owned(),
        already_imported: already.clone(),
        rows: rows.iter().map(|r| r.preview.clone()).collect(),
        matched: counts[0],
        unmatched: counts[1],
        ambiguous: counts[2],
        skipped: counts[3],
        not_understood: counts[4],
    };
    Ok(Prepared { summary, rows, profile: profile.clone(), already_imported: already, sheet: table.sheet.clone() })
}

/// A row ready to write: its preview, and what the snapshot keeps beside the metrics.
pub struct PreparedRow {
    pub preview: RowPreview,
    pub extras: BTreeMap<String, MetricValue>,
    pub raw: Vec<(String, String)>,
}

/// A file read and previewed.
pub struct Prepared {
    pub summary: ImportPreview,
    pub rows: Vec<PreparedRow>,
    pub profile: ExportProfile,
    pub already_imported: Option<String>,
    /// The sheet the rows came from (a spreadsheet's).
    pub sheet: Option<String>,
}
