//! Comments on a project, optionally anchored to a range of its source.

use crate::error::{required_text, ApiError};
use crate::kernel::Kernel;
use crate::model::{ActivityKind, Anchor, Comment, Project};
use crate::store::{keys, Batch, Durability, Store};

/// The comments of a project, oldest first.
pub fn list(store: &Store, project_id: &str, include_resolved: bool) -> Result<Vec<Comment>, ApiError> {
    let mut comments: Vec<Comment> = store.scan::<Comment>(&keys::project_prefix(project_id))?.into_iter().filter(|c| include_resolved || !c.resolved).collect();
    comments.sort_by(|a, b| a.created_at.cmp(&b.created_at).then_with(|| a.id.cmp(&b.id)));
    Ok(comments)
}

/// One comment. Errors: NOT_FOUND.
pub fn load(store: &Store, project_id: &str, comment_id: &str) -> Result<Comment, ApiError> {
    store.get::<Comment>(&keys::comment(project_id, comment_id))?.ok_or_else(|| ApiError::not_found("comment", comment_id))
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

/// Adds a comment on `project` (anchored to a UTF-16 range of its working copy, which
/// is quoted) and its activity entry to `batch`. `body` must already be checked.
/// Errors: VALIDATION when the anchor is not a range of the source.
pub fn stage_add(kernel: &Kernel, batch: &mut Batch, project: &Project, body: String, anchor: Option<Anchor>) -> Result<Comment, ApiError> {
    let quote = match anchor {
        Some(anchor) => Some(utf16_slice(&project.source, anchor).ok_or_else(|| {
            ApiError::validation(
                "anchor",
                format!("The anchor {}..{} is not a range of the source (its length is {}).", anchor.from, anchor.to, project.source.encode_utf16().count()),
            )
        })?),
        None => None,
    };
    let now = kernel.now();
    let comment = Comment {
        id: kernel.new_id("cmt"),
        project_id: project.id.clone(),
        body,
        anchor,
        quote,
        resolved: false,
        author: kernel.author()?,
        reply_to: None,
        created_at: now,
        updated_at: now,
    };
    let activity = kernel.activity(Some(&project.id), ActivityKind::CommentAdded, format!("Commented on \"{}\"", project.title))?;
    batch.put(&comment)?.put(&activity)?;
    Ok(comment)
}

/// Adds a reply to `parent` (same anchor and quote) and its activity entry to `batch`.
/// `body` must already be checked.
pub fn stage_reply(kernel: &Kernel, batch: &mut Batch, project: &Project, parent: &Comment, body: String) -> Result<Comment, ApiError> {
    let now = kernel.now();
    let comment = Comment {
        id: kernel.new_id("cmt"),
        project_id: project.id.clone(),
        body,
        anchor: parent.anchor,
        quote: parent.quote.clone(),
        resolved: false,
        author: kernel.author()?,
        reply_to: Some(parent.id.clone()),
        created_at: now,
        updated_at: now,
    };
    let activity = kernel.activity(Some(&project.id), ActivityKind::CommentAdded, format!("Replied to a comment on \"{}\"", project.title))?;
    batch.put(&comment)?.put(&activity)?;
    Ok(comment)
}

/// Adds a comment in its own transaction, durable before it returns: the write lock,
/// the project, [`stage_add`] and one commit. Errors: NOT_FOUND, VALIDATION.
pub fn add(kernel: &Kernel, project_id: &str, body: &str, anchor: Option<Anchor>) -> Result<Comment, ApiError> {
    let body = required_text("body", body, MAX_BODY_CHARS)?;
    let _guard = kernel.write_lock();
    let project = super::load(kernel.store(), project_id)?;
    let mut batch = Batch::new();
    let comment = stage_add(kernel, &mut batch, &project, body, anchor)?;
    kernel.store().apply(batch, Durability::Durable)?;
    Ok(comment)
}

/// Resolves (or reopens) `comment`, adding it and the activity entry to `batch`.
/// Returns whether anything changed.
pub fn stage_resolve(kernel: &Kernel, batch: &mut Batch, project: &Project, comment: &mut Comment, resolved: bool) -> Result<bool, ApiError> {
    if comment.resolved == resolved {
        return Ok(false);
    }
    comment.resolved = resolved;
    comment.updated_at = kernel.now();
    let (kind, verb) = if resolved { (ActivityKind::CommentResolved, "Resolved") } else { (ActivityKind::CommentReopened, "Reopened") };
    let activity = kernel.activity(Some(&project.id), kind, format!("{verb} a comment on \"{}\"", project.title))?;
    batch.put(&*comment)?.put(&activity)?;
    Ok(true)
}

/// Adds the deletion of `comment` and the activity entry to `batch`.
pub fn stage_delete(kernel: &Kernel, batch: &mut Batch, project: &Project, comment: &Comment) -> Result<(), ApiError> {
    let activity = kernel.activity(Some(&project.id), ActivityKind::CommentDeleted, format!("Deleted a comment on \"{}\"", project.title))?;
    batch.delete::<Comment>(keys::comment(&comment.project_id, &comment.id)).put(&activity)?;
    Ok(())
}

/// Longest comment, in characters.
pub const MAX_BODY_CHARS: usize = 10_000;
