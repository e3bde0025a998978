//! Search: `search.query` over the local index (working copies, versions, comments),
//! `search.reindex` and `search.status`.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::{required_text, ApiError, Empty, Engine};
use crate::retrieval::{DocKind, Filter, IndexStatus, SearchMode, SearchRequest, SearchResults, SearchScope};

/// Longest query, in characters.
pub const MAX_QUERY_CHARS: usize = 500;
/// Hits when `limit` is absent.
pub const DEFAULT_SEARCH_LIMIT: u32 = 20;

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SearchQueryParams {
    /// The query: words, a phrase, a pasted title; Chinese or English.
    pub q: String,
    /// Default: `project` when `projectId` is given, else `workspace`.
    #[serde(default)]
    #[ts(optional)]
    pub scope: Option<SearchScope>,
    /// Required for the `project` scope.
    #[serde(default)]
    #[ts(optional)]
    pub project_id: Option<String>,
    /// Which documents; default all (working copies, versions, comments).
    #[serde(default)]
    #[ts(optional)]
    pub kinds: Option<Vec<DocKind>>,
    /// 1–100; default 20.
    #[serde(default)]
    #[ts(optional)]
    pub limit: Option<u32>,
}

/// The request a `search.query` asks for, checked (the project must exist).
fn request(engine: &Engine, params: SearchQueryParams) -> Result<SearchRequest, ApiError> {
    let query = required_text("q", &params.q, MAX_QUERY_CHARS)?;
    let scope = params.scope.unwrap_or(if params.project_id.is_some() { SearchScope::Project } else { SearchScope::Workspace });
    let project_id = match (scope, params.project_id) {
        (SearchScope::Project, None) => {
            return Err(ApiError::validation("projectId", "A project search needs `projectId`.").hint("give_project", "Give `projectId`, or search the workspace."))
        }
        (_, Some(project_id)) => {
            crate::project::load(engine.store(), &project_id)?;
            Some(project_id)
        }
        (SearchScope::Workspace, None) => None,
    };
    let limit = params.limit.unwrap_or(DEFAULT_SEARCH_LIMIT);
    if !(1..=crate::retrieval::MAX_LIMIT as u32).contains(&limit) {
        return Err(ApiError::validation("limit", format!("`limit` must be between 1 and {}.", crate::retrieval::MAX_LIMIT)));
    }
    Ok(SearchRequest {
        query,
        scope,
        filter: Filter { project_id, kinds: params.kinds.unwrap_or_default(), platform: None },
        limit: limit as usize,
        mode: SearchMode::Fused,
    })
}

pub(super) fn query(engine: &Engine, params: SearchQueryParams) -> Result<SearchResults, ApiError> {
    let request = request(engine, params)?;
    engine.search_index().search(&request)
}

/// Starts a rebuild of the index from the store; searches keep answering from the
/// current index until the new one is ready.
pub(super) fn reindex(engine: &Engine, _: Empty) -> Result<IndexStatus, ApiError> {
    engine.search_index().reindex();
    Ok(engine.search_index().status())
}

pub(super) fn status(engine: &Engine, _: Empty) -> Result<IndexStatus, ApiError> {
    Ok(engine.search_index().status())
}
