//! Comments on a project, optionally anchored to a range of its source.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::projects::load as load_project;
use super::{required_text, ApiError, Deleted, Engine};
use crate::model::{ActivityKind, Anchor, Comment};
use crate::store::{keys, Batch, Durability};

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

/// The text of `source` between UTF-16 offsets, or `None` when the range is outside
/// the text or splits a surrogate pair.
fn utf16_slice(source: &str, anchor: Anchor) -> Option<String> {
    let units: Vec<u16> = source.encode_utf16().collect();
    let (from, to) = (anchor.from as usize, anchor.to as usize);
    if from > to || to > units.len() {
        return None;
    }
    String::from_utf16(&units[from..to]).ok()
}

pub(super) fn add(engine: &Engine, params: CommentAddParams) -> Result<Comment, ApiError> {
    let body = required_text("body", &params.body, 10_000)?;
    let _guard = engine.write_lock();
    let project = load_project(engine, &params.project_id)?;
    let quote = match params.anchor {
        Some(anchor) => Some(utf16_slice(&project.source, anchor).ok_or_else(|| {
            ApiError::validation(
                "anchor",
                format!("The anchor {}..{} is not a range of the source (its length is {}).", anchor.from, anchor.to, project.source.encode_utf16().count()),
            )
        })?),
        None => None,
    };
    let now = engine.now();
    let comment = Comment {
        id: engine.new_id("cmt"),
        project_id: project.id.clone(),
        body,
        anchor: params.anchor,
        quote,
        resolved: false,
        author: super::workspace::author(engine)?,
        created_at: now,
        updated_at: now,
    };
    let activity = engine.activity(Some(&project.id), ActivityKind::CommentAdded, format!("Commented on \"{}\"", project.title))?;
    let mut batch = Batch::new();
    batch.put(&comment)?.put(&activity)?;
    engine.store.apply(batch, Durability::Durable)?;
    Ok(comment)
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
    pub comments: Vec<Comment>,
}

pub(super) fn list(engine: &Engine, params: CommentListParams) -> Result<CommentListResult, ApiError> {
    load_project(engine, &params.project_id)?;
    let include_resolved = params.include_resolved.unwrap_or(true);
    let mut comments: Vec<Comment> =
        engine.store.scan::<Comment>(&keys::project_prefix(&params.project_id))?.into_iter().filter(|c| include_resolved || !c.resolved).collect();
    comments.sort_by(|a, b| a.created_at.cmp(&b.created_at).then_with(|| a.id.cmp(&b.id)));
    Ok(CommentListResult { comments })
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
    engine.store.get::<Comment>(&keys::comment(project_id, comment_id))?.ok_or_else(|| ApiError::not_found("comment", comment_id))
}

pub(super) fn resolve(engine: &Engine, params: CommentResolveParams) -> Result<Comment, ApiError> {
    let _guard = engine.write_lock();
    let project = load_project(engine, &params.project_id)?;
    let mut comment = load(engine, &params.project_id, &params.comment_id)?;
    if comment.resolved == params.resolved {
        return Ok(comment);
    }
    comment.resolved = params.resolved;
    comment.updated_at = engine.now();
    let (kind, verb) = if params.resolved { (ActivityKind::CommentResolved, "Resolved") } else { (ActivityKind::CommentReopened, "Reopened") };
    let activity = engine.activity(Some(&project.id), kind, format!("{verb} a comment on \"{}\"", project.title))?;
    let mut batch = Batch::new();
    batch.put(&comment)?.put(&activity)?;
    engine.store.apply(batch, Durability::Durable)?;
    Ok(comment)
}

pub(super) fn delete(engine: &Engine, params: CommentRef) -> Result<Deleted, ApiError> {
    let _guard = engine.write_lock();
    let project = load_project(engine, &params.project_id)?;
    let comment = load(engine, &params.project_id, &params.comment_id)?;
    let activity = engine.activity(Some(&project.id), ActivityKind::CommentDeleted, format!("Deleted a comment on \"{}\"", project.title))?;
    let mut batch = Batch::new();
    batch.delete::<Comment>(keys::comment(&comment.project_id, &comment.id)).put(&activity)?;
    engine.store.apply(batch, Durability::Durable)?;
    Ok(Deleted { id: comment.id, deleted: true })
}
