//! The AI activity view over the API (`aiActivity.*`): parses the filters, checks
//! them, and reads the rows from `crate::activity`.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::projects::load as load_project;
use super::{ApiError, Engine};
use crate::activity::{self, ActivityPage, ActivityScope, Decision, Query};
use crate::model::Timestamp;

/// Which rows to list; every filter is exact, an absent one is any.
#[derive(Debug, Clone, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AiActivityFilter {
    /// One project's rows; absent: the whole workspace.
    #[serde(default)]
    #[ts(optional)]
    pub project_id: Option<String>,
    /// The person who accepted or rejected.
    #[serde(default)]
    #[ts(optional)]
    pub person: Option<String>,
    /// The model id.
    #[serde(default)]
    #[ts(optional)]
    pub model: Option<String>,
    /// `[from, to)`.
    #[serde(default)]
    #[ts(optional)]
    pub from: Option<Timestamp>,
    #[serde(default)]
    #[ts(optional)]
    pub to: Option<Timestamp>,
    #[serde(default)]
    #[ts(optional)]
    pub decision: Option<Decision>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AiActivityListParams {
    #[serde(default)]
    #[ts(optional)]
    pub filter: Option<AiActivityFilter>,
    /// `local` (this data folder, the default) or `workspace` (the workspace server's
    /// shared activity: owners see every member's, editors their own).
    #[serde(default)]
    #[ts(optional)]
    pub scope: Option<ActivityScope>,
    /// Most rows, newest first: default 200, at most 1000.
    #[serde(default)]
    #[ts(optional)]
    pub limit: Option<u32>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AiActivityExportParams {
    #[serde(default)]
    #[ts(optional)]
    pub filter: Option<AiActivityFilter>,
    #[serde(default)]
    #[ts(optional)]
    pub scope: Option<ActivityScope>,
}

/// Every matching row as CSV: UTF-8 with a byte-order mark (so Excel reads Chinese),
/// properly quoted, newest first.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AiActivityExportResult {
    pub csv: String,
    pub n_rows: u32,
}

fn query(engine: &Engine, filter: AiActivityFilter, limit: Option<usize>, scope: ActivityScope) -> Result<Query, ApiError> {
    let blank = |field: &str, value: &Option<String>| match value {
        Some(text) if text.trim().is_empty() => Err(ApiError::validation(field, format!("`{field}` is empty; leave it out to list every {field}."))),
        _ => Ok(()),
    };
    blank("person", &filter.person)?;
    blank("model", &filter.model)?;
    if let (Some(from), Some(to)) = (filter.from, filter.to) {
        if from >= to {
            return Err(ApiError::validation("to", "`to` must be later than `from`."));
        }
    }
    match (&filter.project_id, scope) {
        (Some(project_id), ActivityScope::Local) => {
            load_project(engine, project_id)?;
        }
        // A workspace's project may not be in this data folder: its id's form only.
        (Some(project_id), ActivityScope::Workspace) => {
            if project_id.is_empty() || project_id.len() > 100 || !project_id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
                return Err(ApiError::validation("projectId", "`projectId` is 1–100 letters, digits, `_` or `-`."));
            }
        }
        (None, _) => {}
    }
    Ok(Query { project_id: filter.project_id, person: filter.person, model: filter.model, from: filter.from, to: filter.to, decision: filter.decision, limit })
}

pub(super) fn list(engine: &Engine, params: AiActivityListParams) -> Result<super::dto::ActivityPage, ApiError> {
    let limit = match params.limit {
        None => activity::DEFAULT_LIMIT,
        Some(n) if n >= 1 && n as usize <= activity::MAX_LIMIT => n as usize,
        Some(_) => return Err(ApiError::validation("limit", format!("`limit` must be between 1 and {}.", activity::MAX_LIMIT))),
    };
    let scope = params.scope.unwrap_or_default();
    let query = query(engine, params.filter.unwrap_or_default(), Some(limit), scope)?;
    read(engine, &query, scope).map(Into::into)
}

fn read(engine: &Engine, query: &Query, scope: ActivityScope) -> Result<ActivityPage, ApiError> {
    match scope {
        ActivityScope::Local => activity::list(engine.store(), query),
        ActivityScope::Workspace => activity::workspace(engine, engine.sync_runtime(), query),
    }
}

pub(super) fn export(engine: &Engine, params: AiActivityExportParams) -> Result<AiActivityExportResult, ApiError> {
    let scope = params.scope.unwrap_or_default();
    let query = query(engine, params.filter.unwrap_or_default(), None, scope)?;
    let page = read(engine, &query, scope)?;
    let bytes = activity::csv_bytes(&page.rows)?;
    let csv = String::from_utf8(bytes).map_err(|_| ApiError::internal("The CSV is not UTF-8."))?;
    Ok(AiActivityExportResult { csv, n_rows: u32::try_from(page.rows.len()).unwrap_or(u32::MAX) })
}
