//! An import of a platform's own export, previewed or committed (see [`super`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::api::dto;
use crate::api::dto::Platform;
use crate::api::{ApiError, Engine};
use crate::error::bounded_text;
use crate::performance as domain;
use crate::store::{Batch, Durability};

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PerfImportParams {
    /// A local export file (CLI); or `dataBase64` with `fileName` (the UI's file picker).
    #[serde(default)]
    #[ts(optional)]
    pub path: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub data_base64: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub file_name: Option<String>,
    /// Only try this platform's exports.
    #[serde(default)]
    #[ts(optional)]
    pub platform: Option<Platform>,
    /// The person's decisions: row number → a publication id, or `skip`.
    #[serde(default)]
    #[ts(optional, type = "Record<string, string>")]
    pub assign: BTreeMap<u32, String>,
    /// The account an account export's days go to (WeChat 用户分析); without it, the
    /// platform's only account.
    #[serde(default)]
    #[ts(optional)]
    pub account_id: Option<String>,
    /// Write it. Without it (the default) the import is only previewed and nothing is
    /// written. A commit needs every row matched or skipped.
    #[serde(default)]
    #[ts(optional)]
    pub commit: Option<bool>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PerfImportResult {
    pub preview: dto::ImportPreview,
    /// True when this call wrote the snapshots.
    pub committed: bool,
    /// The snapshots written by this call.
    pub snapshots: Vec<String>,
}

/// Previews (default) or commits an import of a platform's own export.
pub(in crate::api) fn import(engine: &Engine, params: PerfImportParams) -> Result<PerfImportResult, ApiError> {
    use crate::performance::import as imports;
    let (bytes, file_name) = match (&params.path, &params.data_base64) {
        (Some(path), None) => {
            let path = std::path::Path::new(path);
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            (crate::api::media::read_bounded("path", path, imports::MAX_FILE_BYTES as u64)?, name)
        }
        (None, Some(data)) => {
            use base64::Engine as _;
            let bytes =
                base64::engine::general_purpose::STANDARD.decode(data.trim()).map_err(|e| ApiError::validation("dataBase64", format!("`dataBase64` is not valid base64: {e}")))?;
            (bytes, params.file_name.clone().unwrap_or_default())
        }
        _ => return Err(ApiError::validation("path", "Give the export as `path` or as `dataBase64`, one of the two.")),
    };
    let file_name = bounded_text("fileName", &file_name, 300)?;
    let _guard = engine.write_lock();
    let publications = domain::all_publications(engine.store())?;
    let prepared = imports::preview_for(engine.store(), &bytes, params.platform.map(Into::into), &publications, &params.assign, params.account_id.as_deref())?;
    let summary = prepared.summary.clone();
    if !params.commit.unwrap_or(false) || prepared.already_imported.is_some() {
        return Ok(PerfImportResult { preview: (&summary).into(), committed: false, snapshots: Vec::new() });
    }
    if summary.target == imports::ExportTarget::Account {
        if summary.account_id.is_none() {
            let platform = summary.platform.as_str();
            return Err(ApiError::validation(
                "accountId",
                format!("This file is an account's daily export ({}); say which {platform} account it belongs to.", summary.importer_name),
            )
            .problem("perf.account_export_needs_account", &[("name", &summary.importer_name), ("platform", platform)])
            .action("pick_platform_account", &[]));
        }
        let mut batch = Batch::new();
        let written = imports::stage_account_commit(engine, &mut batch, &file_name, prepared)?;
        engine.store().apply(batch, Durability::Durable)?;
        return Ok(PerfImportResult { preview: (&summary).into(), committed: true, snapshots: written.into_iter().map(|s| s.id).collect() });
    }
    let open: Vec<String> =
        summary.rows.iter().filter(|r| !matches!(r.outcome, imports::RowOutcome::Matched { .. } | imports::RowOutcome::Skipped)).map(|r| r.row.to_string()).collect();
    if !open.is_empty() {
        let rows = open.join(", ");
        return Err(ApiError::validation("assign", format!("Rows {rows} are not matched to a publication; match or skip each before importing."))
            .problem("perf.rows_unresolved", &[("rows", &rows)])
            .hint("match_or_skip_rows", "For each of those rows pick its publication, add the publication first, or skip the row; then import again."));
    }
    let mut batch = Batch::new();
    let written = imports::stage_commit(engine, &mut batch, &file_name, prepared, &publications)?;
    engine.store().apply(batch, Durability::Durable)?;
    Ok(PerfImportResult { preview: (&summary).into(), committed: true, snapshots: written.into_iter().map(|s| s.id).collect() })
}
