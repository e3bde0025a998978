//! Projects and their autosaved working copy.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::dto::Platform;
use super::{bounded_text, required_text, ApiError, Engine, MAX_SOURCE_CHARS, MAX_TITLE_CHARS};
use crate::model::{BrandProfile, ContentTemplate, Project, ProjectSummary, Timestamp};
use crate::project::{self as domain, NewProject, ProjectChanges};
use crate::store::{Batch, Durability};

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProjectRef {
    pub project_id: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProjectCreateParams {
    /// Required unless `templateId` gives one.
    #[serde(default)]
    #[ts(optional)]
    pub title: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub source: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub platforms: Option<Vec<Platform>>,
    /// Start from this template: its title, source and platforms fill what is absent.
    #[serde(default)]
    #[ts(optional)]
    pub template_id: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub brand_profile_id: Option<String>,
}

pub(super) fn load(engine: &Engine, project_id: &str) -> Result<Project, ApiError> {
    crate::project::load(engine.store(), project_id)
}

fn check_brand_profile(engine: &Engine, field: &str, id: &str) -> Result<(), ApiError> {
    match engine.store().get::<BrandProfile>(id.as_bytes())? {
        Some(_) => Ok(()),
        None => Err(ApiError::validation(field, format!("Brand profile {id} does not exist.")).action("list_brand_profiles", &[])),
    }
}

/// Fills `{date}` in a template's title.
fn fill_title_template(template: &str, now: Timestamp) -> String {
    template.replace("{date}", &now.format("%Y-%m-%d").to_string())
}

pub(super) fn create(engine: &Engine, params: ProjectCreateParams) -> Result<Project, ApiError> {
    let _guard = engine.write_lock();
    let now = engine.now();
    let template = match &params.template_id {
        Some(id) => Some(
            engine
                .store()
                .get::<ContentTemplate>(id.as_bytes())?
                .ok_or_else(|| ApiError::validation("templateId", format!("Template {id} does not exist.")).action("list_templates", &[]))?,
        ),
        None => None,
    };
    let title = match (&params.title, &template) {
        (Some(title), _) => required_text("title", title, MAX_TITLE_CHARS)?,
        (None, Some(template)) => {
            let filled = fill_title_template(&template.title_template, now);
            if filled.trim().is_empty() {
                template.name.clone()
            } else {
                bounded_text("title", filled.trim(), MAX_TITLE_CHARS)?
            }
        }
        (None, None) => return Err(ApiError::validation("title", "`title` is required.")),
    };
    let source = match (&params.source, &template) {
        (Some(source), _) => bounded_text("source", source, MAX_SOURCE_CHARS)?,
        (None, Some(template)) => template.source_template.clone(),
        (None, None) => String::new(),
    };
    let platforms = match (params.platforms, &template) {
        (Some(platforms), _) => crate::project::sorted_platforms(platforms.into_iter().map(Into::into).collect()),
        (None, Some(template)) => crate::project::sorted_platforms(template.default_platforms.clone()),
        (None, None) => Vec::new(),
    };
    if let Some(id) = &params.brand_profile_id {
        check_brand_profile(engine, "brandProfileId", id)?;
    }
    let new = NewProject { title, source, platforms, brand_profile_id: params.brand_profile_id, template_id: template.map(|t| t.id) };
    let mut batch = Batch::new();
    let project = domain::stage_create(engine, &mut batch, new, now)?;
    engine.store().apply(batch, Durability::Durable)?;
    Ok(project)
}

pub(super) fn get(engine: &Engine, params: ProjectRef) -> Result<Project, ApiError> {
    load(engine, &params.project_id)
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProjectListParams {
    #[serde(default)]
    #[ts(optional)]
    pub include_archived: Option<bool>,
    /// Only projects whose title contains this text (case-insensitive).
    #[serde(default)]
    #[ts(optional)]
    pub query: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ProjectListResult {
    /// Most recently updated first.
    pub projects: Vec<super::dto::ProjectSummary>,
}

pub(super) fn list(engine: &Engine, params: ProjectListParams) -> Result<ProjectListResult, ApiError> {
    let include_archived = params.include_archived.unwrap_or(false);
    let query = params.query.map(|q| q.trim().to_lowercase()).filter(|q| !q.is_empty());
    let mut projects: Vec<ProjectSummary> = engine
        .store()
        .scan::<ProjectSummary>(b"")?
        .into_iter()
        .filter(|p| include_archived || !p.archived)
        .filter(|p| query.as_ref().is_none_or(|q| p.title.to_lowercase().contains(q)))
        .collect();
    projects.sort_by(|a, b| b.updated_at.cmp(&a.updated_at).then_with(|| b.id.cmp(&a.id)));
    Ok(ProjectListResult { projects: projects.iter().map(Into::into).collect() })
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProjectUpdateParams {
    pub project_id: String,
    /// The working-copy revision this change was based on. When given and the project
    /// has moved on since, the update is refused with CONFLICT and changes nothing.
    #[serde(default)]
    #[ts(optional)]
    pub base_revision: Option<u64>,
    #[serde(default)]
    #[ts(optional)]
    pub title: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub source: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub platforms: Option<Vec<Platform>>,
    /// A brand profile id; an empty string clears it.
    #[serde(default)]
    #[ts(optional)]
    pub brand_profile_id: Option<String>,
}

pub(super) fn update(engine: &Engine, params: ProjectUpdateParams) -> Result<Project, ApiError> {
    let _guard = engine.write_lock();
    let mut project = load(engine, &params.project_id)?;
    if let Some(base_revision) = params.base_revision {
        if base_revision != project.revision {
            return Err(crate::project::conflict(&project, base_revision));
        }
    }
    let title = match &params.title {
        Some(title) => Some(required_text("title", title, MAX_TITLE_CHARS)?),
        None => None,
    };
    if let Some(source) = &params.source {
        bounded_text("source", source, MAX_SOURCE_CHARS)?;
    }
    let brand_profile_id = match params.brand_profile_id {
        Some(id) if id.is_empty() => Some(None),
        Some(id) => {
            check_brand_profile(engine, "brandProfileId", &id)?;
            Some(Some(id))
        }
        None => None,
    };
    let changes = ProjectChanges { title, source: params.source, platforms: params.platforms.map(|platforms| platforms.into_iter().map(Into::into).collect()), brand_profile_id };
    let mut batch = Batch::new();
    if domain::stage_update(engine, &mut batch, &mut project, changes)? {
        // Autosave: group-committed, so typing never waits on a disk sync. A crash loses
        // at most `group_commit_millis` of typing, never a version.
        engine.store().apply(batch, Durability::Grouped)?;
    }
    Ok(project)
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProjectArchiveParams {
    pub project_id: String,
    /// `false` brings an archived project back.
    pub archived: bool,
}

pub(super) fn archive(engine: &Engine, params: ProjectArchiveParams) -> Result<Project, ApiError> {
    let _guard = engine.write_lock();
    let mut project = load(engine, &params.project_id)?;
    if params.archived && !project.archived && engine.harness().project_has_running_turn(&project.id) {
        return Err(ApiError::new(super::ErrorCode::Conflict, format!("A session of \"{}\" is running a turn.", project.title))
            .problem("project.session_running", &[("project", &project.title)])
            .hint("interrupt", "Interrupt it first."));
    }
    let mut batch = Batch::new();
    if domain::stage_archive(engine, &mut batch, &mut project, params.archived)? {
        engine.store().apply(batch, Durability::Durable)?;
    }
    Ok(project)
}
