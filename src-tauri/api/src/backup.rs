//! Logical export and import: the whole store as a folder of plain files (Markdown and
//! JSON) that a person can read, a backup can keep, and another storage engine can
//! import. Export then import into an empty data dir gives identical content, and a
//! second export of that is byte-identical to the first but for `manifest.json`'s time.
//!
//! ```text
//! manifest.json                     format, schema, time, counts
//! workspace.json
//! activities.jsonl                  one activity per line, oldest first
//! projects/<id>/project.json        the project without its source
//! projects/<id>/source.md           the working copy
//! projects/<id>/versions/0001.json  each version without its source ...
//! projects/<id>/versions/0001.md    ... and its source
//! projects/<id>/comments.json
//! brand-profiles/<id>.json
//! templates/<id>.json
//! media/<id>.json                   metadata; the file itself in media/files/
//! llm-profiles/<id>.json            LLM profiles: settings and key fingerprint, never a key
//! usage/records.jsonl               one model call per line, oldest first
//! usage/quotas.json
//! sessions/<id>/session.json        harness sessions ...
//! sessions/<id>/events.jsonl        ... and their event logs, one event per line
//! harness/approvals.jsonl           approval decisions
//! harness/executions.jsonl          writes that ran, by idempotency key
//! harness/context-snapshots.jsonl   immutable context snapshots
//! harness/results.jsonl             large tool results, by content hash
//! harness/permission-rules.json
//! harness/allow-rules.jsonl         "always allow" rules, with their counts
//! performance/*.jsonl               accounts, publications, metric snapshots, imports
//! ```
//!
//! Record ids become folder and file names here, so every id is checked against the
//! id grammar ([`crate::model::ids`]) before a path is built from it: on export (a
//! store written before ids were checked could hold a bad one; the export stops and
//! names it) and on import, where an id that is not an Inkstone id, a record that
//! claims another project, or a media file that is not `<id>.<image extension>` or
//! whose bytes do not match its hash makes the whole export invalid, before anything
//! is written.
//!
//! Media files on import: each is checked first; after every record is read and the
//! counts match, a file whose name is not in the data folder yet is written (a file
//! no record refers to while the commit has not happened); one that is there with the
//! same bytes is left; one that is there with other bytes is written beside it under
//! `media/.staged-…/` and moved over the old one only after the store commits. A failed
//! import or restore therefore leaves every media file the store refers to as it was.
//! (A crash between the commit and the move leaves the previous bytes under that name
//! and the new ones in the staging folder, never a half-written file.)//!
//! The parts: `sections` (the record kinds outside a project's folder), `export`,
//! `import`, and `files` (ids as names, JSON and JSON Lines, fsync).

mod export;
mod files;
mod import;
mod sections;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::error::{ApiError, ErrorCode};
use crate::model::Timestamp;
use crate::store::StoreError;

pub use export::{change_marker, export_to};
pub use import::{import_from, read_manifest, replace_from};

/// The format name every manifest carries.
pub const EXPORT_FORMAT: &str = "inkstone-export";
pub const EXPORT_FORMAT_VERSION: u32 = 1;

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path} is not a valid Inkstone export: {message}")]
    Format { path: PathBuf, message: String },
    #[error("{0} already exists")]
    DestinationExists(PathBuf),
    #[error("the data folder already holds projects or settings; import only into an empty data folder")]
    NotEmpty,
    /// A record in the store has an id that cannot be a file name.
    #[error("{what} in the store: {message}")]
    UnsafeId { what: String, message: String },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// How many records of each kind an export holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ExportCounts {
    pub projects: u64,
    pub versions: u64,
    pub comments: u64,
    pub activities: u64,
    pub brand_profiles: u64,
    pub templates: u64,
    pub media: u64,
    #[serde(default)]
    pub llm_profiles: u64,
    #[serde(default)]
    pub usage_records: u64,
    #[serde(default)]
    pub platform_drafts: u64,
    #[serde(default)]
    pub sessions: u64,
    #[serde(default)]
    pub session_events: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    pub format: String,
    pub format_version: u32,
    pub schema_version: u32,
    pub exported_at: Timestamp,
    /// Marks the store's state at export time (newest activity and newest project
    /// change); an automatic backup is skipped while it is unchanged.
    pub change_marker: String,
    pub counts: ExportCounts,
}

impl From<ExportError> for ApiError {
    fn from(error: ExportError) -> Self {
        match error {
            ExportError::Io { path, source } => ApiError::new(ErrorCode::Io, format!("{}: {source}", path.display()))
                .hint("check_path", "Check that the folder exists, is readable, and the disk is not full.")
                .details(serde_json::json!({ "path": path })),
            ExportError::Format { path, message } => ApiError::validation("path", format!("{} is not a valid Inkstone export: {message}", path.display()))
                .hint("choose_export_folder", "Choose a folder written by Inkstone's export or backup (it holds manifest.json)."),
            ExportError::DestinationExists(path) => ApiError::validation("path", format!("{} already exists.", path.display()))
                .hint("choose_new_folder", "Choose a folder name that does not exist yet; Inkstone creates it."),
            ExportError::NotEmpty => ApiError::new(ErrorCode::Conflict, "This data folder already holds projects; an export is imported only into an empty data folder.")
                .problem("import.not_empty", &[])
                .action("use_empty_data_dir", &[])
                .action("import_markdown_instead", &[]),
            ExportError::UnsafeId { what, message } => {
                ApiError::new(ErrorCode::StoreCorrupt, format!("{what} has an id that cannot be a file name, so nothing was written: {message}."))
            }
            ExportError::Store(error) => error.into(),
        }
    }
}
