//! The pull: the workspace's changes since the cursor, page by page, and each
//! project's server versions brought in (a colleague's as local versions, the client's
//! own completing their jobs), opening a conflict when they move the head under
//! unsynced work.

use std::collections::BTreeMap;

use inkstone_sync_proto::{ServerVersion, FEATURE_VERSION_ORIGIN};

use super::super::transport::{Failure, Transport};
use super::super::{ConflictKind, ConflictSide, ConflictState, Connection, ProjectLink, SyncConflict};
use super::{advance, not_connected, CycleReport};
use crate::error::ApiError;
use crate::kernel::Kernel;
use crate::llm::ApiKey;
use crate::model::{ActivityKind, Project, Version, VersionOrigin};
use crate::outbox::{self, DeliveryJob, Event, JobState};
use crate::project::versions::{self, content_hash, NewVersion};
use crate::store::{Batch, Durability};

/// The most versions a page of changes is asked for.
const PAGE_VERSIONS: usize = 200;

/// Pulls the workspace's changes since the connection's cursor, page by page. A page
/// too long to read (an older server pages by count only) is asked for again with
/// fewer versions, down to one. `stale_project`: a 409 without all the newer versions
/// of this project sent this pull; they come in as that push's conflict (see
/// [`import`]). True when it pulled everything; a failure is in the report.
pub(super) fn pull(
    kernel: &Kernel,
    transport: &Transport,
    connection: &Connection,
    token: &ApiKey,
    report: &mut CycleReport,
    stale_project: Option<&str>,
) -> Result<bool, ApiError> {
    let mut cursor = connection.cursor;
    let mut limit = PAGE_VERSIONS;
    loop {
        let changes = match transport.changes(&connection.server_url, token, cursor, limit) {
            Ok(changes) => changes,
            Err(Failure::Status { code, .. }) if code == super::super::transport::ANSWER_TOO_LARGE && limit > 1 => {
                limit = (limit / 2).max(1);
                continue;
            }
            Err(failure) => {
                report.failed(&failure);
                return Ok(false);
            }
        };
        report.contacted = true;
        let _guard = kernel.write_lock();
        let mut batch = Batch::new();
        let mut by_project: BTreeMap<&str, Vec<&ServerVersion>> = BTreeMap::new();
        for version in &changes.versions {
            by_project.entry(version.project_id.as_str()).or_default().push(version);
        }
        for (project_id, versions) in by_project {
            let push_conflict = (stale_project == Some(project_id)).then_some(ConflictKind::Push);
            import(kernel, &mut batch, project_id, &versions, report, push_conflict)?;
        }
        let mut stored = super::super::connection(kernel)?.ok_or_else(not_connected)?;
        stored.cursor = stored.cursor.max(changes.cursor);
        stored.server_takes_origin = changes.features.iter().any(|f| f == FEATURE_VERSION_ORIGIN);
        stored.server_keeps_performance = changes.features.iter().any(|f| f == inkstone_sync_proto::FEATURE_PERFORMANCE_DATA);
        stored.server_takes_ai = changes.features.iter().any(|f| f == inkstone_sync_proto::FEATURE_AI_ACTIVITY);
        stored.server_keeps_account_days = changes.features.iter().any(|f| f == inkstone_sync_proto::FEATURE_ACCOUNT_SNAPSHOTS);
        cursor = stored.cursor;
        batch.put(&stored)?;
        kernel.store().apply(batch, Durability::Durable)?;
        if !changes.more {
            drop(_guard);
            // The policy as the server has it now (kept when it cannot be read).
            super::super::policy::refresh(kernel, transport, connection, token, super::super::policy::keeps_policy(&changes.features))?;
            return Ok(true);
        }
    }
}

pub(super) fn side(version: &Version, server_number: Option<u32>) -> ConflictSide {
    ConflictSide { title: version.title.clone(), source: version.source.clone(), author: version.author.clone(), local_number: Some(version.number), server_number }
}

/// Brings a project's server versions in (oldest first). The client's own versions
/// complete their jobs; a colleague's become local versions. When they move the head
/// under unsynced work — an edited working copy, versions not yet on the server, an
/// open conflict — the work stays as it is and a conflict opens (or the open one
/// moves to the newest head). `push_conflict`: a 409 brought these; the sending job
/// is in conflict whatever they hold.
pub(super) fn import(
    kernel: &Kernel,
    batch: &mut Batch,
    project_id: &str,
    server_versions: &[&ServerVersion],
    report: &mut CycleReport,
    push_conflict: Option<ConflictKind>,
) -> Result<(), ApiError> {
    // The server's project id becomes a record id here and a folder name in every
    // export and backup: one that is not an Inkstone id is refused before anything is
    // written (the caller drops the batch).
    if let Err(error) = crate::model::ids::check(project_id, Some("prj")) {
        return Err(ApiError::validation("projectId", format!("The workspace server sent a version with a bad project id, so nothing was pulled: {error}."))
            .problem("sync.bad_id", &[("id", &project_id.chars().take(100).collect::<String>())]));
    }
    let store = kernel.store();
    let policy = kernel.config().sync.retry;
    let mut link = store.get::<ProjectLink>(project_id.as_bytes())?.unwrap_or_else(|| ProjectLink { project_id: project_id.to_owned(), server_head: 0, base_local: 0 });
    let mut project: Option<Project> = store.get::<Project>(project_id.as_bytes())?;
    let created_here = project.is_none();
    let head_before = project.as_ref().map_or(0, |p| p.head);
    let local_versions = if created_here { Vec::new() } else { versions::list(store, project_id)? };
    let mut jobs: Vec<DeliveryJob> = super::super::jobs(kernel)?.into_iter().filter(|j| j.project_id == project_id).collect();
    let mut changed_jobs = std::collections::BTreeSet::new();
    let mut base_before_theirs: Option<u32> = None;
    let mut theirs: Option<(Version, u32)> = None;
    let now = kernel.now();
    let mut ordered: Vec<&ServerVersion> = server_versions.to_vec();
    ordered.sort_by_key(|v| v.number);
    for server_version in ordered {
        if server_version.number <= link.server_head {
            continue;
        }
        if let Some(mine) = local_versions.iter().find(|v| v.id == server_version.client_id) {
            // Ours: the server holds it (its ack may never have arrived).
            link.server_head = server_version.number;
            link.base_local = mine.number;
            if let Some(at) = jobs.iter().position(|j| j.version_id == mine.id) {
                let mut job = jobs[at].clone();
                if job.state == JobState::Dispatched {
                    job = advance(&job, &Event::Restarted, kernel, &policy, 0.0)?;
                }
                if let Ok(acked) = outbox::advance(&job, &Event::Acked { number: server_version.number }, now, &policy, 0.0) {
                    job = advance(&acked, &Event::Finalize, kernel, &policy, 0.0)?;
                    jobs[at] = job;
                    changed_jobs.insert(at);
                }
            }
            continue;
        }
        base_before_theirs.get_or_insert(link.base_local);
        // Who wrote it is who pushed it, as the server records them (the token's
        // member), never the name the pushing client claimed.
        let author = if server_version.pushed_by.trim().is_empty() { server_version.author.as_str() } else { server_version.pushed_by.as_str() };
        let target = match &mut project {
            Some(target) => target,
            None => {
                let mut created = crate::project::new_project(kernel, crate::project::NewProject { title: server_version.title.clone(), ..Default::default() }, now);
                created.id = project_id.to_owned();
                let activity = kernel.activity(Some(project_id), ActivityKind::ProjectCreated, format!("Pulled project \"{}\" by {author}", created.title))?;
                batch.put(&activity)?;
                project.insert(created)
            }
        };
        // How their client made it, when it and the server said so (a resolution is
        // labelled one); an origin not of the wire's form is dropped.
        let remote_origin = server_version.origin.clone().filter(|o| inkstone_sync_proto::origin::well_formed(o));
        let origin = VersionOrigin::Pulled { server_number: server_version.number, pushed_by: server_version.pushed_by.clone(), remote_origin };
        let version = versions::stage_pulled(
            kernel,
            batch,
            target,
            NewVersion {
                title: &server_version.title,
                source: &server_version.source,
                origin: &origin,
                message: server_version.message.as_deref(),
                message_id: None,
                message_params: None,
            },
            author,
        )?;
        link.server_head = server_version.number;
        link.base_local = version.number;
        report.pulled += 1;
        theirs = Some((version, server_version.number));
    }
    if theirs.is_none() && push_conflict.is_some() {
        // The newer versions were already here: the head this client holds is theirs.
        if let Some(version) = local_versions.iter().find(|v| v.number == link.base_local) {
            theirs = Some((version.clone(), link.server_head));
            base_before_theirs.get_or_insert(link.base_local);
        }
    }
    // Versions came in, or a push met newer ones: the projects (or a conflict) change.
    let changed = theirs.is_some();
    if let (Some((their_version, their_number)), Some(project)) = (theirs, project.as_mut()) {
        let head_version = local_versions.iter().find(|v| v.number == head_before);
        let working_copy_hash = content_hash(&project.title, &project.source);
        let edited = !created_here && head_version.is_none_or(|h| h.content_hash != working_copy_hash);
        let unsynced: Vec<usize> =
            jobs.iter().enumerate().filter(|(_, j)| matches!(j.state, JobState::Pending | JobState::Dispatched | JobState::RetryWait { .. })).map(|(i, _)| i).collect();
        let held_back = jobs.iter().any(|j| matches!(j.state, JobState::Conflict { .. } | JobState::Failed));
        let mut open = super::super::conflicts(kernel)?.into_iter().find(|c| c.project_id == project_id && c.state == ConflictState::Open);
        let clean = created_here || (!edited && unsynced.is_empty() && !held_back && open.is_none() && push_conflict.is_none());
        if clean {
            // Nothing here is unsynced: the working copy follows the server's head.
            project.title = their_version.title.clone();
            project.source = their_version.source.clone();
            project.revision += 1;
        } else {
            let their_side = side(&their_version, Some(their_number));
            let mut job_ids = Vec::new();
            for at in unsynced {
                jobs[at] = advance(&jobs[at], &Event::StaleBase { server_head: their_number }, kernel, &policy, 0.0)?;
                changed_jobs.insert(at);
                job_ids.push(jobs[at].id.clone());
            }
            let conflict = match open.take() {
                Some(mut conflict) => {
                    conflict.theirs = their_side;
                    conflict.job_ids.extend(job_ids);
                    conflict.updated_at = now;
                    conflict.remerge();
                    conflict
                }
                None => {
                    let base_number = base_before_theirs.unwrap_or(0);
                    let base = match local_versions.iter().find(|v| v.number == base_number && base_number > 0) {
                        Some(v) => side(v, None),
                        None => ConflictSide { title: String::new(), source: String::new(), author: String::new(), local_number: None, server_number: None },
                    };
                    let mine = match head_version {
                        Some(head) if !edited => side(head, None),
                        _ => ConflictSide { title: project.title.clone(), source: project.source.clone(), author: kernel.author()?, local_number: None, server_number: None },
                    };
                    let mut conflict = SyncConflict {
                        id: kernel.new_id("cnf"),
                        project_id: project_id.to_owned(),
                        kind: push_conflict.unwrap_or(ConflictKind::Pull),
                        state: ConflictState::Open,
                        base,
                        mine,
                        theirs: their_side,
                        merged: None,
                        overlaps: Vec::new(),
                        job_ids,
                        resolution: None,
                        created_at: now,
                        updated_at: now,
                    };
                    conflict.remerge();
                    report.new_conflicts += 1;
                    let activity =
                        kernel.activity(Some(project_id), ActivityKind::VersionCreated, format!("Sync conflict on \"{}\": the server has newer versions", project.title))?;
                    batch.put(&activity)?;
                    conflict
                }
            };
            batch.put(&conflict)?;
        }
        project.updated_at = now;
    }
    if let Some(project) = &project {
        if project.head != head_before || created_here {
            batch.put(project)?;
        }
    }
    if changed {
        super::super::stage_change_marker(kernel, batch)?;
    }
    batch.put(&link)?;
    for at in changed_jobs {
        batch.put(&jobs[at])?;
    }
    Ok(())
}
