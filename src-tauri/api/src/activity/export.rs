//! The activity as CSV: one line per row, written by [`crate::spreadsheet`] (UTF-8 with
//! a byte-order mark so Excel reads Chinese titles and reasons, quoted, formulas defused).

use super::{ActivityRow, Decision};

/// The header line, in column order.
pub const CSV_HEADER: [&str; 22] = [
    "at",
    "project_id",
    "project_title",
    "version",
    "draft_revision",
    "proposal_id",
    "proposal_kind",
    "decision",
    "partial",
    "hunks",
    "n_hunks",
    "actor",
    "reason",
    "through",
    "session_or_run",
    "profile",
    "provider_host",
    "model",
    "prompt_layers",
    "context_snapshot",
    "tokens_in_out",
    "cost",
];

/// The rows as CSV bytes (BOM, header, one record per row).
///
/// Errors: an `Internal` error only if the CSV writer fails on memory.
pub fn csv_bytes(rows: &[ActivityRow]) -> Result<Vec<u8>, crate::error::ApiError> {
    let mut lines = Vec::with_capacity(rows.len());
    for row in rows {
        let owner = match &row.through {
            super::Through::DraftingSession { session_id } => session_id.clone(),
            super::Through::OptimizeRun { run_id } => run_id.clone(),
            super::Through::ApplyProposal { session_id, .. } => session_id.clone().unwrap_or_default(),
            super::Through::Other => String::new(),
        };
        let opt = |n: Option<u32>| n.map(|n| n.to_string()).unwrap_or_default();
        let record = [
            row.at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            row.project_id.clone(),
            row.project_title.clone().unwrap_or_default(),
            opt(row.version),
            opt(row.draft_revision),
            row.proposal_id.clone(),
            row.proposal_kind.map(|k| k.as_str().to_owned()).unwrap_or_default(),
            match row.decision {
                Decision::Accepted => "accepted".to_owned(),
                Decision::Rejected => "rejected".to_owned(),
            },
            row.partial.to_string(),
            row.hunks.join(" "),
            row.n_hunks.to_string(),
            row.actor.clone(),
            row.reason.clone().unwrap_or_default(),
            row.through.as_str().to_owned(),
            owner,
            row.model.profile_name.clone().unwrap_or_else(|| row.model.profile_id.clone()),
            row.model.provider_host.clone().unwrap_or_default(),
            row.model.model.clone(),
            row.prompt_layers.join(" "),
            row.context_snapshot_id.clone().unwrap_or_default(),
            row.tokens.as_ref().map(|t| format!("{}/{}", t.input_tokens, t.output_tokens)).unwrap_or_default(),
            row.tokens.as_ref().and_then(|t| t.cost).map(|c| format!("{c:.6}")).unwrap_or_default(),
        ];
        lines.push(record.into_iter().map(crate::spreadsheet::Cell::Text).collect());
    }
    crate::spreadsheet::csv_bytes(&CSV_HEADER, lines).map_err(crate::problems::csv)
}
