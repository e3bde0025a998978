//! The project domain: a project's working copy, its numbered versions, its saved
//! platform drafts and its comments, as typed reads and as writes that add records to a
//! [`crate::store::Batch`]. Callers (the API, the tools, later the proposals' apply
//! transaction) hold the write lock and commit once, so one user action is one
//! transaction however many of these it combines.

pub mod comments;
pub mod drafts;
pub mod versions;

use crate::error::{ApiError, ErrorCode};
use crate::kernel::Kernel;
use crate::model::{ActivityKind, BrandProfile, ContentTemplate, MediaAsset, Platform, Project, Timestamp};
use crate::store::{Batch, Store};

/// The project `project_id`. Errors: NOT_FOUND.
pub fn load(store: &Store, project_id: &str) -> Result<Project, ApiError> {
    store.get::<Project>(project_id.as_bytes())?.ok_or_else(|| ApiError::not_found("project", project_id))
}

/// The refusal of an AI or session action in a session whose project is archived:
/// VALIDATION `session.project_archived`, with the hint to restore the project. An
/// archived project is read-only for its sessions until it is restored.
pub fn archived_for_session(project: &Project) -> ApiError {
    ApiError::validation("sessionId", format!("The session's project \"{}\" is archived; restore the project first.", project.title))
        .problem("session.project_archived", &[("project", &project.title)])
        .action("unarchive_project_first", &[("project", &project.id)])
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
    ApiError::new(ErrorCode::Conflict, format!("Project {} changed elsewhere (revision {} is newer than {base_revision}).", project.id, project.revision))
        .problem("project.changed", &[("current", &project.revision.to_string()), ("base", &base_revision.to_string())])
        .hint("reload_and_merge", "Reload the project, compare both versions, and choose what to keep.")
        .details(serde_json::json!({
            "projectId": project.id,
            "baseRevision": base_revision,
            "currentRevision": project.revision,
            "current": { "title": project.title, "source": project.source, "revision": project.revision },
        }))
}

/// What a new project starts with, already checked.
#[derive(Debug, Clone, Default)]
pub struct NewProject {
    pub title: String,
    pub source: String,
    pub platforms: Vec<Platform>,
    pub brand_profile_id: Option<String>,
    pub template_id: Option<String>,
}

/// A new project record: revision 1, no version yet, created and updated `now`. The
/// one place a `Project` is built.
pub fn new_project(kernel: &Kernel, new: NewProject, now: Timestamp) -> Project {
    Project {
        id: kernel.new_id("prj"),
        title: new.title,
        source: new.source,
        revision: 1,
        head: 0,
        platforms: sorted_platforms(new.platforms),
        brand_profile_id: new.brand_profile_id,
        template_id: new.template_id,
        archived: false,
        created_at: now,
        updated_at: now,
    }
}

/// Platforms sorted, without repeats.
pub fn sorted_platforms(mut platforms: Vec<Platform>) -> Vec<Platform> {
    platforms.sort();
    platforms.dedup();
    platforms
}

/// Adds a new project and its "created" activity to `batch`.
pub fn stage_create(kernel: &Kernel, batch: &mut Batch, new: NewProject, now: Timestamp) -> Result<Project, ApiError> {
    let project = new_project(kernel, new, now);
    let activity = kernel.activity(Some(&project.id), ActivityKind::ProjectCreated, format!("Created project \"{}\"", project.title))?;
    batch.put(&project)?.put(&activity)?;
    Ok(project)
}

/// Changes to a project's working copy and settings, already checked. `None` leaves a
/// field as it is; `brand_profile_id: Some(None)` clears the brand profile.
#[derive(Debug, Clone, Default)]
pub struct ProjectChanges {
    pub title: Option<String>,
    pub source: Option<String>,
    pub platforms: Option<Vec<Platform>>,
    pub brand_profile_id: Option<Option<String>>,
}

/// Applies `changes` to `project`; when anything changed, bumps the working-copy
/// revision and adds the project and its activity entries (renamed, settings changed)
/// to `batch`. Returns whether anything changed (nothing is staged otherwise).
pub fn stage_update(kernel: &Kernel, batch: &mut Batch, project: &mut Project, changes: ProjectChanges) -> Result<bool, ApiError> {
    let before = project.clone();
    let mut activities = Vec::new();
    if let Some(title) = changes.title {
        project.title = title;
        if project.title != before.title {
            activities.push((ActivityKind::ProjectRenamed, format!("Renamed \"{}\" to \"{}\"", before.title, project.title)));
        }
    }
    if let Some(source) = changes.source {
        project.source = source;
    }
    if let Some(platforms) = changes.platforms {
        project.platforms = sorted_platforms(platforms);
    }
    if let Some(brand_profile_id) = changes.brand_profile_id {
        project.brand_profile_id = brand_profile_id;
    }
    if project.platforms != before.platforms || project.brand_profile_id != before.brand_profile_id {
        activities.push((ActivityKind::ProjectSettingsChanged, format!("Changed settings of \"{}\"", project.title)));
    }
    if *project == before {
        return Ok(false);
    }
    project.revision += 1;
    project.updated_at = kernel.now();
    batch.put(&*project)?;
    for (kind, summary) in activities {
        batch.put(&kernel.activity(Some(&project.id), kind, summary)?)?;
    }
    Ok(true)
}

/// Archives (or brings back) `project`, adding it and the activity entry to `batch`.
/// Returns whether anything changed.
pub fn stage_archive(kernel: &Kernel, batch: &mut Batch, project: &mut Project, archived: bool) -> Result<bool, ApiError> {
    if project.archived == archived {
        return Ok(false);
    }
    project.archived = archived;
    project.revision += 1;
    project.updated_at = kernel.now();
    let (kind, verb) = if archived { (ActivityKind::ProjectArchived, "Archived") } else { (ActivityKind::ProjectUnarchived, "Unarchived") };
    let activity = kernel.activity(Some(&project.id), kind, format!("{verb} \"{}\"", project.title))?;
    batch.put(&*project)?.put(&activity)?;
    Ok(true)
}
