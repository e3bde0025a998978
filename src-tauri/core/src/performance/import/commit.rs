//! Committing a preview: the snapshots of its matched rows (or the days of an account
//! export) and the import's record, in the caller's batch.

use serde::{Deserialize, Serialize};

use super::super::metrics::{self, MetricSnapshot, SnapshotSource, SnapshotWindow};
use super::super::Publication;
use super::{Prepared, PreparedRow, RowOutcome};
use crate::error::ApiError;
use crate::model::Timestamp;
use crate::store::{Kind, Record};

/// A committed import, by the file's hash: re-importing the file finds it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportRecord {
    pub id: String,
    pub file_sha256: String,
    pub file_name: String,
    pub importer: String,
    pub snapshots: Vec<String>,
    pub created_at: Timestamp,
}

impl Record for ImportRecord {
    const KIND: Kind = Kind::PerfImports;
    fn key(&self) -> Vec<u8> {
        self.file_sha256.as_bytes().to_vec()
    }
}

/// Adds a snapshot for every matched row of `prepared`, and the import's record, to
/// `batch`.
pub fn stage_commit(
    kernel: &crate::kernel::Kernel,
    batch: &mut crate::store::Batch,
    file_name: &str,
    prepared: Prepared,
    publications: &[Publication],
) -> Result<Vec<MetricSnapshot>, ApiError> {
    let Prepared { summary, rows, profile, sheet, .. } = prepared;
    let import_id = kernel.new_id("imp");
    let observed_at = kernel.now();
    let mut written = Vec::new();
    let by_id: std::collections::HashMap<&str, &Publication> = publications.iter().rev().map(|p| (p.id.as_str(), p)).collect();
    for PreparedRow { preview: row, extras, raw } in rows {
        let RowOutcome::Matched { publication_id, .. } = &row.outcome else { continue };
        let Some(publication) = by_id.get(publication_id.as_str()).copied() else { continue };
        let source = SnapshotSource::Import {
            import_id: import_id.clone(),
            file_sha256: summary.file_sha256.clone(),
            importer: profile.id.clone(),
            importer_version: profile.version,
            sheet: sheet.clone(),
            row: row.row,
            raw_row: raw,
        };
        // An export read before the publication's recorded time (a wrong time typed by
        // hand) is still an observation now; its age is then 0.
        let observed = observed_at.max(publication.published_at);
        // Every per-post export profile so far is cumulative (`window = "cumulative"`).
        let window = SnapshotWindow::Cumulative;
        written.push(metrics::stage_snapshot(kernel, batch, publication, observed, window, source, row.metrics, extras)?);
    }
    let record = ImportRecord {
        id: import_id,
        file_sha256: summary.file_sha256.clone(),
        file_name: file_name.to_owned(),
        importer: summary.importer.clone(),
        snapshots: written.iter().map(|s| s.id.clone()).collect(),
        created_at: observed_at,
    };
    batch.put(&record)?;
    Ok(written)
}

/// Adds an account snapshot for every day of an account export, and the import's
/// record, to `batch`.
pub fn stage_account_commit(
    kernel: &crate::kernel::Kernel,
    batch: &mut crate::store::Batch,
    file_name: &str,
    prepared: Prepared,
) -> Result<Vec<super::super::account_days::AccountSnapshot>, ApiError> {
    let Prepared { summary, rows, profile, sheet, .. } = prepared;
    let import_id = kernel.new_id("imp");
    let now = kernel.now();
    let mut written = Vec::new();
    for PreparedRow { preview: row, raw, .. } in rows {
        let RowOutcome::AccountDay { account_id, date } = &row.outcome else { continue };
        let snapshot = super::super::account_days::AccountSnapshot {
            id: kernel.new_id("asn"),
            account_id: account_id.clone(),
            platform: profile.platform,
            date: *date,
            source: SnapshotSource::Import {
                import_id: import_id.clone(),
                file_sha256: summary.file_sha256.clone(),
                importer: profile.id.clone(),
                importer_version: profile.version,
                sheet: sheet.clone(),
                row: row.row,
                raw_row: raw,
            },
            metrics: row.metrics,
            created_at: now,
        };
        batch.put(&snapshot)?;
        super::super::sync::stage_day_delivery(kernel, batch, &snapshot)?;
        written.push(snapshot);
    }
    let record = ImportRecord {
        id: import_id,
        file_sha256: summary.file_sha256.clone(),
        file_name: file_name.to_owned(),
        importer: summary.importer.clone(),
        snapshots: written.iter().map(|s| s.id.clone()).collect(),
        created_at: now,
    };
    batch.put(&record)?;
    Ok(written)
}
