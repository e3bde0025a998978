//! Import of a platform's own export. Which file it is, and how its headers map to
//! metric keys, is data: one versioned file per export under `profiles/metrics/`
//! (`x-content@v1.toml`, ...), embedded at build time, so a platform changing its
//! export is a data change with a test, not new code.
//!
//! The file's kind is sniffed from its bytes, never its name: OLE/BIFF `.xls`
//! (`D0 CF 11 E0`), `.xlsx` (`PK 03 04`), HTML (a leading `<`), otherwise text. The
//! spreadsheets are read with `calamine` (its first sheet holding a cell; date cells
//! become `2026-03-05 20:00:00` text, so a profile's time formats read them). Text
//! is decoded by its BOM, then as strict UTF-8, then as GB18030 (what Excel on a Chinese
//! Windows writes when a sheet is saved as CSV). The header row is found by a profile's
//! signature in the first 20 rows, so a title row above it is fine.
//!
//! Rows are matched to publications of the profile's platform by post id (also the one
//! in a post's URL), then by URL, then by title and publishing time (within 5 minutes,
//! or the same day for an export that gives only the date). Each row of the preview
//! says what would happen; nothing is written until the import is committed, in one
//! batch, and a file already imported (by SHA-256) changes nothing.
//!
//! The parts: `file` (what the bytes are, and text read as CSV), `workbook` (`.xlsx`
//! and `.xls`), `html` (an HTML table with an `.xls` name), `profile` (the export
//! profiles and the header that picks one), `rows` (the rows read through a profile),
//! `matcher` (the publications a row fits), `preview` and `commit`.

mod commit;
mod file;
mod html;
mod matcher;
mod preview;
mod profile;
mod rows;
mod workbook;

pub use commit::{stage_account_commit, stage_commit, ImportRecord};
pub use file::{decode, read_table, sniff, FileKind, Table};
pub use preview::{preview, preview_for, Assignments, ImportPreview, Prepared, PreparedRow, RowOutcome, RowPreview};
pub use profile::{profiles, recognise, ExportProfile, ExportTarget, PrivateWhen, RowColumns};
pub use rows::post_id_in_url;

use crate::error::{ApiError, ErrorCode};

/// Largest file accepted, in bytes.
pub const MAX_FILE_BYTES: usize = 20 * 1024 * 1024;
/// Rows searched for the header.
const HEADER_SEARCH_ROWS: usize = 20;
/// Most rows one import reads.
pub const MAX_ROWS: usize = 100_000;

fn not_an_export(message: String) -> ApiError {
    ApiError::new(ErrorCode::Validation, message.clone())
        .details(serde_json::json!({ "field": "file" }))
        .problem("perf.not_an_export", &[("reason", &message)])
        .hint("export_from_platform", "Download the export from the platform's data centre (数据中心 / Analytics) and import that file as it is.")
}
