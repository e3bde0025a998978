//! Resolving a conflict: a new version from the person's choice, after an
//! autosnapshot of unsaved work; the held-back jobs are superseded.

use crate::error::{ApiError, ErrorCode};
use crate::kernel::Kernel;
use crate::outbox::{DeliveryJob, JobState};
use crate::store::{Batch, Durability};

use super::*;

/// How the person resolves a conflict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    Mine,
    Theirs,
    /// The clean three-way merge (only when the edits do not overlap).
    Merged,
    /// What the person wrote in the merge view.
    Edited {
        title: String,
        source: String,
    },
}

/// What resolving made.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub conflict: SyncConflict,
    /// Unsaved working-copy changes kept first, when there were any.
    pub autosnapshot: Option<crate::model::Version>,
    /// The resolution: the new head, delivered on the new base.
    pub version: crate::model::Version,
}

/// Resolves an open conflict with a new version (origin `syncResolution`, after an
/// autosnapshot of unsaved work that is neither side nor the resolution, origin
/// `autosnapshot` with the conflict's id, which stays local); the working copy becomes
/// the resolution and the conflict's held-back jobs are superseded. Nothing is
/// overwritten: every side stays a version.
///
/// Errors: NOT_FOUND; CONFLICT when the conflict is resolved already, or `Merged` is
/// asked while the edits overlap.
pub fn resolve(kernel: &Kernel, conflict_id: &str, choice: Choice) -> Result<Resolved, ApiError> {
    let _guard = kernel.write_lock();
    let store = kernel.store();
    let mut conflict = store.get::<SyncConflict>(conflict_id.as_bytes())?.ok_or_else(|| ApiError::not_found("sync conflict", conflict_id))?;
    if conflict.state != ConflictState::Open {
        return Err(ApiError::new(ErrorCode::Conflict, format!("Conflict {conflict_id} is resolved already (version {}).", conflict.resolution.unwrap_or(0))));
    }
    let (title, source) = match &choice {
        Choice::Mine => (conflict.mine.title.clone(), conflict.mine.source.clone()),
        Choice::Theirs => (conflict.theirs.title.clone(), conflict.theirs.source.clone()),
        Choice::Merged => match &conflict.merged {
            Some(merged) => (merged.title.clone(), merged.source.clone()),
            None => {
                return Err(ApiError::new(ErrorCode::Conflict, "The two sides edit the same lines, so there is no automatic merge.")
                    .hint("merge_view", "Open the merge view and choose or edit the text of each overlapping place.")
                    .details(serde_json::json!({"conflictId": conflict.id, "overlaps": conflict.overlaps})))
            }
        },
        Choice::Edited { title, source } => (crate::error::required_text("title", title, 500)?, source.clone()),
    };
    let mut project = crate::project::load(store, &conflict.project_id)?;
    let mut batch = Batch::new();
    let working = crate::project::versions::content_hash(&project.title, &project.source);
    // Is the working copy already a version (either side, or the head)? Otherwise it
    // is unsaved work, kept as an autosnapshot before the resolution replaces it.
    // (The resolution itself keeps it when the person chose the working copy as it is.)
    let known = [&conflict.mine, &conflict.theirs].iter().any(|s| s.local_number.is_some() && crate::project::versions::content_hash(&s.title, &s.source) == working)
        || (project.head > 0 && crate::project::versions::load(store, &project.id, project.head)?.content_hash == working)
        || crate::project::versions::content_hash(&title, &source) == working;
    // The versions carry no English message: their origins say what they are (the
    // conflict they belong to), and the UI words that in the person's language. The
    // autosnapshot is private (never delivered); the resolution is delivered.
    let mut autosnapshot = None;
    if !known {
        let (t, s) = (project.title.clone(), project.source.clone());
        let origin = crate::model::VersionOrigin::Autosnapshot { conflict_id: Some(conflict.id.clone()) };
        autosnapshot = Some(crate::project::versions::stage_next(
            kernel,
            &mut batch,
            &mut project,
            crate::project::versions::NewVersion { title: &t, source: &s, origin: &origin, message: None, message_id: None, message_params: None },
        )?);
    }
    let origin = crate::model::VersionOrigin::SyncResolution { conflict_id: conflict.id.clone() };
    let version = crate::project::versions::stage_next(
        kernel,
        &mut batch,
        &mut project,
        crate::project::versions::NewVersion { title: &title, source: &source, origin: &origin, message: None, message_id: None, message_params: None },
    )?;
    project.title = title;
    project.source = source;
    project.revision += 1;
    let policy = kernel.config().sync.retry;
    for job_id in &conflict.job_ids {
        if let Some(job) = store.get::<DeliveryJob>(job_id.as_bytes())? {
            if matches!(job.state, JobState::Conflict { .. }) {
                let next = crate::outbox::advance(&job, &crate::outbox::Event::Superseded { by_version: version.number }, kernel.now(), &policy, 0.0)
                    .map_err(|e| ApiError::internal(format!("delivery job {}: {e}", job.id)))?;
                batch.put(&next)?;
            }
        }
    }
    conflict.state = ConflictState::Resolved;
    conflict.resolution = Some(version.number);
    conflict.updated_at = kernel.now();
    let activity = kernel.activity(
        Some(&project.id),
        crate::model::ActivityKind::VersionCreated,
        format!("Resolved a sync conflict of \"{}\" as version {}", project.title, version.number),
    )?;
    batch.put(&project)?.put(&conflict)?.put(&activity)?;
    stage_change_marker(kernel, &mut batch)?;
    store.apply(batch, Durability::Durable)?;
    Ok(Resolved { conflict, autosnapshot, version })
}
