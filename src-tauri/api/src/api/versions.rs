//! Versions: immutable, numbered snapshots of a project's working copy.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::dto::TextDiffResult;
use super::projects::{load as load_project, ProjectRef};
use super::{bounded_text, ApiError, Engine};
use crate::diff::diff_texts;
use crate::model::{Version, VersionSummary};
use crate::project::versions;
use crate::store::{Batch, Durability};

pub use crate::project::versions::content_hash;

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VersionCreateParams {
    pub project_id: String,
    #[serde(default)]
    #[ts(optional)]
    pub message: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VersionRef {
    pub project_id: String,
    pub number: u32,
}

fn load_version(engine: &Engine, project_id: &str, number: u32) -> Result<Version, ApiError> {
    versions::load(engine.store(), project_id, number)
}

/// Snapshots the working copy as the next version. Durable before it returns.
pub(super) fn create(engine: &Engine, params: VersionCreateParams) -> Result<Version, ApiError> {
    let message = match params.message.as_deref().map(str::trim) {
        Some("") | None => None,
        Some(message) => Some(bounded_text("message", message, 500)?),
    };
    let _guard = engine.write_lock();
    let mut project = load_project(engine, &params.project_id)?;
    let mut batch = Batch::new();
    let version = versions::stage_save(engine, &mut batch, &mut project, message.as_deref())?;
    engine.store().apply(batch, Durability::Durable)?;
    Ok(version)
}

pub(super) fn get(engine: &Engine, params: VersionRef) -> Result<Version, ApiError> {
    load_project(engine, &params.project_id)?;
    load_version(engine, &params.project_id, params.number)
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct VersionListResult {
    /// Newest first.
    pub versions: Vec<super::dto::VersionSummary>,
}

pub(super) fn list(engine: &Engine, params: ProjectRef) -> Result<VersionListResult, ApiError> {
    load_project(engine, &params.project_id)?;
    Ok(VersionListResult { versions: versions::summaries(engine.store(), &params.project_id)?.iter().map(Into::into).collect() })
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct VersionRestoreResult {
    pub project: super::dto::Project,
    /// The version that kept unsaved working-copy changes, when there were any.
    pub autosnapshot: Option<super::dto::VersionSummary>,
    /// The new version whose content is the restored one's.
    pub restored: super::dto::VersionSummary,
}

/// Restores version N as a new version. Unsaved working-copy changes (a working copy
/// that differs from the head version) are first kept as an autosnapshot version, so a
/// restore never loses work. One transaction, durable before it returns.
pub(super) fn restore(engine: &Engine, params: VersionRef) -> Result<VersionRestoreResult, ApiError> {
    let _guard = engine.write_lock();
    let mut project = load_project(engine, &params.project_id)?;
    let target = load_version(engine, &params.project_id, params.number)?;
    let mut batch = Batch::new();
    let staged = versions::stage_restore(engine, &mut batch, &mut project, &target)?;
    engine.store().apply(batch, Durability::Durable)?;
    let autosnapshot = staged.autosnapshot.as_ref().map(VersionSummary::from);
    let restored = VersionSummary::from(&staged.restored);
    Ok(VersionRestoreResult { project: (&project).into(), autosnapshot: autosnapshot.as_ref().map(Into::into), restored: (&restored).into() })
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VersionDiffParams {
    pub project_id: String,
    /// The old side: a version number.
    pub from: u32,
    /// The new side: a version number, or the working copy when absent.
    #[serde(default)]
    #[ts(optional)]
    pub to: Option<u32>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct VersionDiffResult {
    pub from: u32,
    /// `null` for the working copy.
    pub to: Option<u32>,
    pub title_changed: bool,
    pub old_title: String,
    pub new_title: String,
    pub diff: TextDiffResult,
}

pub(super) fn diff(engine: &Engine, params: VersionDiffParams) -> Result<VersionDiffResult, ApiError> {
    let project = load_project(engine, &params.project_id)?;
    let old = load_version(engine, &project.id, params.from)?;
    let (new_title, new_source) = match params.to {
        Some(number) => {
            let new = load_version(engine, &project.id, number)?;
            (new.title, new.source)
        }
        None => (project.title, project.source),
    };
    Ok(VersionDiffResult {
        from: params.from,
        to: params.to,
        title_changed: old.title != new_title,
        diff: diff_texts(&old.source, &new_source).into(),
        old_title: old.title,
        new_title,
    })
}
