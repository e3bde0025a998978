//! The project domain: a project's working copy, its numbered versions, its saved
//! platform drafts and its comments, as typed reads and as writes that add records to a
//! [`crate::store::Batch`]. Callers (the API, the tools, later the proposals' apply
//! transaction) hold the write lock and commit once, so one user action is one
//! transaction however many of these it combines.

pub mod comments;
pub mod drafts;
pub mod versions;

use crate::error::{ApiError, ErrorCode};
use crate::model::{BrandProfile, ContentTemplate, MediaAsset, Project};
use crate::store::Store;

/// The project `project_id`. Errors: NOT_FOUND.
pub fn load(store: &Store, project_id: &str) -> Result<Project, ApiError> {
    store.get::<Project>(project_id.as_bytes())?.ok_or_else(|| ApiError::not_found("project", project_id))
}

/// The project's brand profile, when it names one that exists.
pub fn brand(store: &Store, project: &Project) -> Result<Option<BrandProfile>, ApiError> {
    match &project.brand_profile_id {
        Some(id) => Ok(store.get::<BrandProfile>(id.as_bytes())?),
        None => Ok(None),
    }
}

/// The project's template, when it names one that exists.
pub fn template(store: &Store, project: &Project) -> Result<Option<ContentTemplate>, ApiError> {
    match &project.template_id {
        Some(id) => Ok(store.get::<ContentTemplate>(id.as_bytes())?),
        None => Ok(None),
    }
}

/// The images used by the project.
pub fn media(store: &Store, project_id: &str) -> Result<Vec<MediaAsset>, ApiError> {
    Ok(store.scan::<MediaAsset>(b"")?.into_iter().filter(|m| m.project_ids.iter().any(|p| p == project_id)).collect())
}

/// The CONFLICT of a write based on a stale working-copy revision.
pub fn conflict(project: &Project, base_revision: u64) -> ApiError {
    ApiError::new(
        ErrorCode::Conflict,
        format!("Project {} changed elsewhere (revision {} is newer than {base_revision}).", project.id, project.revision),
    )
    .hint("reload_and_merge", "Reload the project, compare both versions, and choose what to keep.")
    .details(serde_json::json!({
        "projectId": project.id,
        "baseRevision": base_revision,
        "currentRevision": project.revision,
        "current": { "title": project.title, "source": project.source, "revision": project.revision },
    }))
}
