//! sled behind typed repositories. Nothing else in the engine imports sled (the disk
//! syncs are `inkstone-durable`'s, shared with the workspace server).
//!
//! Layout: one tree per record kind (never one per project). Keys are record ids, or
//! `project_id 0x00 big-endian number` for ordered per-project records. Every value is
//! framed and checksummed (`codec`).
//!
//! Durability contract (sled 0.34's `flush` on Linux is `sync_file_range`, which is not
//! power-loss durable): a [`Durability::Durable`] write is flushed, then sled's log and
//! every file of the database that changed since the last sync are `fdatasync`ed and
//! every folder whose entries changed is `fsync`ed, before `apply` returns
//! ([`GroupSync`]; concurrent syncs are shared). A
//! [`Durability::Grouped`] write (autosave) marks the store dirty; a background thread
//! syncs at most `group_commit_millis` later, so typing never waits on a disk sync.

mod batch;
pub mod codec;
mod files;
mod kind;
mod migrate;
mod open;
mod read;
mod record;
mod write;

use std::path::PathBuf;

pub use batch::{Batch, Change, Committed, Durability, OnCommit};
pub use codec::CodecError;
pub use files::{media_dir, sha256_ref, write_file_durably};
use inkstone_error::{ApiError, ErrorCode};
pub use kind::Kind;
pub use open::{Store, StoreOptions};
pub use record::{keys, Record};

/// The schema this build writes. Bump it together with a step in `migrate`.
pub const SCHEMA_VERSION: u32 = 2;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("the data folder {path} is in use by {holder}")]
    Locked { path: PathBuf, holder: String },
    #[error("the store at {path} is damaged: {detail}")]
    Corrupt { path: PathBuf, detail: String },
    #[error("the store at {path} has schema version {found}; this build understands up to {supported}")]
    TooNew { path: PathBuf, found: u32, supported: u32 },
    #[error("storage I/O failed: {0}")]
    Io(#[from] std::io::Error),
    #[error("the database failed: {0}")]
    Database(String),
}

impl From<sled::Error> for StoreError {
    fn from(error: sled::Error) -> Self {
        StoreError::Database(error.to_string())
    }
}

impl From<StoreError> for ApiError {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::Locked { path, holder } => ApiError::new(ErrorCode::StoreLocked, format!("The data folder {} is in use by {holder}.", path.display()))
                .hint("close_other_instance", "Close the other Inkstone window or command, then try again.")
                .hint("use_other_data_dir", "Or choose another data folder with --data-dir or INKSTONE_DATA_DIR.")
                .details(serde_json::json!({ "dataDir": path, "holder": holder })),
            StoreError::Corrupt { path, detail } => ApiError::new(ErrorCode::StoreCorrupt, format!("The store in {} is damaged: {detail}", path.display()))
                .action("restore_backup", &[("folder", &path.join("backups").display().to_string())])
                .details(serde_json::json!({ "dataDir": path, "backupsDir": path.join("backups") })),
            StoreError::TooNew { path, found, supported } => ApiError::new(
                ErrorCode::StoreTooNew,
                format!("The store in {} was written by a newer Inkstone (schema {found}; this one reads up to {supported}).", path.display()),
            )
            .hint("update_app", "Update Inkstone to the newest version."),
            StoreError::Io(e) => ApiError::new(ErrorCode::Io, format!("Reading or writing the data folder failed: {e}"))
                .hint("check_disk", "Check that the disk is not full and the folder is writable."),
            StoreError::Database(detail) => {
                ApiError::new(ErrorCode::Internal, format!("The database failed: {detail}")).hint("retry", "Try again; if it keeps failing, restart Inkstone.")
            }
        }
    }
}
