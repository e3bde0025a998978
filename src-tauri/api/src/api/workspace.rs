//! The local workspace, the local user's display name, app info and the activity feed.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::{bounded_text, required_text, ApiError, Empty, Engine, METHODS, STREAMING_METHODS};
use crate::model::{Activity, ActivityKind, Workspace};
use crate::store::{Batch, Durability};

pub(super) fn get(engine: &Engine, _: Empty) -> Result<Workspace, ApiError> {
    engine.workspace()
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorkspaceUpdateParams {
    #[serde(default)]
    #[ts(optional)]
    pub name: Option<String>,
    /// The local user's name, shown as the author of versions, comments and activity.
    #[serde(default)]
    #[ts(optional)]
    pub display_name: Option<String>,
}

pub(super) fn update(engine: &Engine, params: WorkspaceUpdateParams) -> Result<Workspace, ApiError> {
    let _guard = engine.write_lock();
    let mut workspace = engine.workspace()?;
    if let Some(name) = &params.name {
        workspace.name = required_text("name", name, 100)?;
    }
    if let Some(display_name) = &params.display_name {
        workspace.display_name = required_text("displayName", display_name, 100)?;
    }
    let activity = engine.activity(None, ActivityKind::WorkspaceRenamed, format!("Workspace settings changed: {}", workspace.name))?;
    let activity = Activity { actor: workspace.display_name.clone(), ..activity };
    let mut batch = Batch::new();
    batch.put(&workspace)?.put(&activity)?;
    engine.store().apply(batch, Durability::Durable)?;
    Ok(workspace)
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AppInfo {
    pub version: String,
    pub data_dir: String,
    /// Where this process writes its log files; absent when it writes none (the CLI and
    /// `serve` log to their terminal).
    #[ts(optional)]
    pub log_dir: Option<String>,
    /// The operating system, as it names itself.
    pub os: String,
    pub schema_version: u32,
    pub methods: Vec<String>,
    pub streaming_methods: Vec<String>,
}

pub(super) fn app_info(engine: &Engine, _: Empty) -> Result<AppInfo, ApiError> {
    Ok(AppInfo {
        version: env!("CARGO_PKG_VERSION").to_owned(),
        data_dir: engine.config().data_dir.display().to_string(),
        log_dir: engine.config().log_dir.as_ref().map(|d| d.display().to_string()),
        os: format!("{} ({}/{})", super::help::os_name(), std::env::consts::OS, std::env::consts::ARCH),
        schema_version: engine.store().schema_version()?.unwrap_or(crate::store::SCHEMA_VERSION),
        methods: METHODS.iter().map(|m| m.to_string()).collect(),
        streaming_methods: STREAMING_METHODS.iter().map(|m| m.to_string()).collect(),
    })
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ActivityListParams {
    /// Only this project's activity; all when absent.
    #[serde(default)]
    #[ts(optional)]
    pub project_id: Option<String>,
    /// Newest first, at most this many (default 100, at most 1000).
    #[serde(default)]
    #[ts(optional)]
    pub limit: Option<u32>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ActivityListResult {
    pub activities: Vec<super::dto::Activity>,
}

pub(super) fn activities(engine: &Engine, params: ActivityListParams) -> Result<ActivityListResult, ApiError> {
    let limit = params.limit.unwrap_or(100);
    if limit == 0 || limit > 1000 {
        return Err(ApiError::validation("limit", "`limit` must be between 1 and 1000."));
    }
    if let Some(project_id) = &params.project_id {
        bounded_text("projectId", project_id, 100)?;
    }
    let activities: Vec<Activity> =
        engine.store().scan::<Activity>(b"")?.into_iter().rev().filter(|a| params.project_id.is_none() || a.project_id == params.project_id).take(limit as usize).collect();
    Ok(ActivityListResult { activities: activities.iter().map(Into::into).collect() })
}
