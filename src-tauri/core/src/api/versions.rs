//! Versions: immutable, numbered snapshots of a project's working copy.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use ts_rs::TS;

use super::projects::{load as load_project, ProjectRef};
use super::{bounded_text, ApiError, Engine};
use crate::diff::{diff_texts, TextDiffResult};
use crate::model::{ActivityKind, Project, Version, VersionOrigin, VersionSummary};
use crate::store::{keys, Batch, Durability};

/// `sha256:` + hex over the title, a NUL, and the source.
pub fn content_hash(title: &str, source: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(title.as_bytes());
    hasher.update([0u8]);
    hasher.update(source.as_bytes());
    format!("sha256:{}", hex::encode(hasher.finalize()))
}

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
    engine
        .store
        .get::<Version>(&keys::version(project_id, number))?
        .ok_or_else(|| ApiError::not_found("version", format!("{number} of project {project_id}")).hint("list_versions", "List the project's versions with `inkstone-cli version list <project>`."))
}

fn new_version(engine: &Engine, project: &Project, number: u32, message: Option<String>, origin: VersionOrigin, title: &str, source: &str) -> Result<Version, ApiError> {
    Ok(Version {
        id: engine.new_id("ver"),
        project_id: project.id.clone(),
        number,
        title: title.to_owned(),
        source: source.to_owned(),
        author: super::workspace::author(engine)?,
        message,
        origin,
        content_hash: content_hash(title, source),
        created_at: engine.now(),
    })
}

/// Snapshots the working copy as the next version. Durable before it returns.
pub(super) fn create(engine: &Engine, params: VersionCreateParams) -> Result<Version, ApiError> {
    let message = match params.message.as_deref().map(str::trim) {
        Some("") | None => None,
        Some(message) => Some(bounded_text("message", message, 500)?),
    };
    let _guard = engine.write_lock();
    let mut project = load_project(engine, &params.project_id)?;
    let number = project.head + 1;
    let version = new_version(engine, &project, number, message, VersionOrigin::Manual, &project.title, &project.source)?;
    project.head = number;
    project.updated_at = version.created_at;
    let activity = engine.activity(Some(&project.id), ActivityKind::VersionCreated, format!("Saved version {number} of \"{}\"", project.title))?;
    let mut batch = Batch::new();
    batch.put(&version)?.put(&project)?.put(&activity)?;
    engine.store.apply(batch, Durability::Durable)?;
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
    pub versions: Vec<VersionSummary>,
}

pub(super) fn list(engine: &Engine, params: ProjectRef) -> Result<VersionListResult, ApiError> {
    load_project(engine, &params.project_id)?;
    let versions = engine.store.scan::<Version>(&keys::project_prefix(&params.project_id))?;
    Ok(VersionListResult { versions: versions.iter().rev().map(VersionSummary::from).collect() })
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct VersionRestoreResult {
    pub project: Project,
    /// The version that kept unsaved working-copy changes, when there were any.
    pub autosnapshot: Option<VersionSummary>,
    /// The new version whose content is the restored one's.
    pub restored: VersionSummary,
}

/// Restores version N as a new version. Unsaved working-copy changes (a working copy
/// that differs from the head version) are first kept as an autosnapshot version, so a
/// restore never loses work. One transaction, durable before it returns.
pub(super) fn restore(engine: &Engine, params: VersionRef) -> Result<VersionRestoreResult, ApiError> {
    let _guard = engine.write_lock();
    let mut project = load_project(engine, &params.project_id)?;
    let target = load_version(engine, &params.project_id, params.number)?;
    let head_hash = match project.head {
        0 => None,
        head => Some(load_version(engine, &project.id, head)?.content_hash),
    };
    let unsaved = head_hash.as_deref() != Some(content_hash(&project.title, &project.source).as_str());
    let mut batch = Batch::new();
    let mut autosnapshot = None;
    if unsaved {
        let number = project.head + 1;
        let snapshot = new_version(
            engine,
            &project,
            number,
            Some(format!("Unsaved changes kept before restoring version {}", target.number)),
            VersionOrigin::Autosnapshot,
            &project.title,
            &project.source,
        )?;
        project.head = number;
        batch.put(&snapshot)?;
        autosnapshot = Some(VersionSummary::from(&snapshot));
    }
    let number = project.head + 1;
    let restored = new_version(
        engine,
        &project,
        number,
        Some(format!("Restored version {}", target.number)),
        VersionOrigin::Restore { from: target.number },
        &target.title,
        &target.source,
    )?;
    project.head = number;
    project.title = restored.title.clone();
    project.source = restored.source.clone();
    project.revision += 1;
    project.updated_at = restored.created_at;
    let activity = engine.activity(
        Some(&project.id),
        ActivityKind::VersionRestored,
        format!("Restored version {} of \"{}\" as version {number}", target.number, project.title),
    )?;
    batch.put(&restored)?.put(&project)?.put(&activity)?;
    engine.store.apply(batch, Durability::Durable)?;
    Ok(VersionRestoreResult { project, autosnapshot, restored: VersionSummary::from(&restored) })
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
        diff: diff_texts(&old.source, &new_source),
        old_title: old.title,
        new_title,
    })
}
