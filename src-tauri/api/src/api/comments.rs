//! Comments on a project, optionally anchored to a range of its source.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::dto::Anchor;
use super::projects::load as load_project;
use super::{ApiError, Deleted, Engine};
use crate::model::Comment;
use crate::project::comments as domain;
use crate::store::{Batch, Durability};

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CommentAddParams {
    pub project_id: String,
    pub body: String,
    /// A range of the working copy's source, in UTF-16 code units.
    #[serde(default)]
    #[ts(optional)]
    pub anchor: Option<Anchor>,
}

pub(super) fn add(engine: &Engine, params: CommentAddParams) -> Result<Comment, ApiError> {
    domain::add(engine, &params.project_id, &params.body, params.anchor.map(Into::into))
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CommentListParams {
    pub project_id: String,
    /// Include resolved comments (default true).
    #[serde(default)]
    #[ts(optional)]
    pub include_resolved: Option<bool>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CommentListResult {
    /// Oldest first.
    pub comments: Vec<super::dto::Comment>,
}

pub(super) fn list(engine: &Engine, params: CommentListParams) -> Result<CommentListResult, ApiError> {
    load_project(engine, &params.project_id)?;
    let include_resolved = params.include_resolved.unwrap_or(true);
    Ok(CommentListResult { comments: domain::list(engine.store(), &params.project_id, include_resolved)?.iter().map(Into::into).collect() })
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CommentRef {
    pub project_id: String,
    pub comment_id: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CommentResolveParams {
    pub project_id: String,
    pub comment_id: String,
    /// `false` reopens it.
    pub resolved: bool,
}

fn load(engine: &Engine, project_id: &str, comment_id: &str) -> Result<Comment, ApiError> {
    domain::load(engine.store(), project_id, comment_id)
}

pub(super) fn resolve(engine: &Engine, params: CommentResolveParams) -> Result<Comment, ApiError> {
    let _guard = engine.write_lock();
    let project = load_project(engine, &params.project_id)?;
    let mut comment = load(engine, &params.project_id, &params.comment_id)?;
    let mut batch = Batch::new();
    if domain::stage_resolve(engine, &mut batch, &project, &mut comment, params.resolved)? {
        engine.store().apply(batch, Durability::Durable)?;
    }
    Ok(comment)
}

pub(super) fn delete(engine: &Engine, params: CommentRef) -> Result<Deleted, ApiError> {
    let _guard = engine.write_lock();
    let project = load_project(engine, &params.project_id)?;
    let comment = load(engine, &params.project_id, &params.comment_id)?;
    let mut batch = Batch::new();
    domain::stage_delete(engine, &mut batch, &project, &comment)?;
    engine.store().apply(batch, Durability::Durable)?;
    Ok(Deleted { id: comment.id, deleted: true })
}
