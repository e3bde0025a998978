//! The pull: the workspace's changes since the cursor, page by page, and each
//! project's server versions brought in (a colleague's as local versions, the client's
//! own completing their jobs), opening a conflict when they move the head under
//! unsynced work.

use std::collections::{BTreeMap, BTreeSet};

use inkstone_sync_proto::{ServerVersion, FEATURE_VERSION_ORIGIN};

use super::super::transport::{Failure, Transport};
use super::super::{ConflictKind, ConflictSide, ConflictState, Connection, ProjectLink, SyncConflict};
use super::{advance, not_connected, CycleReport};
use crate::error::ApiError;
use crate::kernel::Kernel;
use crate::llm::ApiKey;
use crate::model::{ActivityKind, Project, Timestamp, Version, VersionOrigin};
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
    check_project_id(project_id)?;
    let mut importing = Importing::read(kernel, project_id)?;
    let mut ordered: Vec<&ServerVersion> = server_versions.to_vec();
    ordered.sort_by_key(|v| v.number);
    for server_version in ordered {
        if server_version.number <= importing.link.server_head {
            continue;
        }
        match importing.local_versions.iter().position(|v| v.id == server_version.client_id) {
            Some(mine) => importing.complete_own(mine, server_version.number)?,
            None => importing.bring_in(batch, project_id, server_version, report)?,
        }
    }
    if importing.theirs.is_none() && push_conflict.is_some() {
        // The newer versions were already here: the head this client holds is theirs.
        if let Some(version) = importing.local_versions.iter().find(|v| v.number == importing.link.base_local) {
            importing.theirs = Some((version.clone(), importing.link.server_head));
            importing.base_before_theirs.get_or_insert(importing.link.base_local);
        }
    }
    // Versions came in, or a push met newer ones: the projects (or a conflict) change.
    let changed = importing.theirs.is_some();
    importing.follow_or_conflict(batch, project_id, push_conflict, report)?;
    importing.stage(batch, changed)
}

/// The server's project id becomes a record id here and a folder name in every export
/// and backup: one that is not an Inkstone id is refused before anything is written
/// (the caller drops the batch).
fn check_project_id(project_id: &str) -> Result<(), ApiError> {
    if let Err(error) = crate::model::ids::check(project_id, Some("prj")) {
        return Err(ApiError::validation("projectId", format!("The workspace server sent a version with a bad project id, so nothing was pulled: {error}."))
            .problem("sync.bad_id", &[("id", &project_id.chars().take(100).collect::<String>())]));
    }
    Ok(())
}

/// One project's import under way: what was here before it, and what the server's
/// versions did so far.
struct Importing<'k> {
    kernel: &'k Kernel,
    policy: outbox::RetryPolicy,
    now: Timestamp,
    link: ProjectLink,
    project: Option<Project>,
    created_here: bool,
    head_before: u32,
    local_versions: Vec<Version>,
    jobs: Vec<DeliveryJob>,
    changed_jobs: BTreeSet<usize>,
    /// The client's base before the first of their versions came in.
    base_before_theirs: Option<u32>,
    /// Their newest version here, with the server's number.
    theirs: Option<(Version, u32)>,
}

impl<'k> Importing<'k> {
    fn read(kernel: &'k Kernel, project_id: &str) -> Result<Importing<'k>, ApiError> {
        let store = kernel.store();
        let policy = kernel.config().sync.retry;
        let link = store.get::<ProjectLink>(project_id.as_bytes())?.unwrap_or_else(|| ProjectLink { project_id: project_id.to_owned(), server_head: 0, base_local: 0 });
        let project: Option<Project> = store.get::<Project>(project_id.as_bytes())?;
        let created_here = project.is_none();
        let head_before = project.as_ref().map_or(0, |p| p.head);
        let local_versions = if created_here { Vec::new() } else { versions::list(store, project_id)? };
        let jobs: Vec<DeliveryJob> = super::super::jobs(kernel)?.into_iter().filter(|j| j.project_id == project_id).collect();
        Ok(Importing {
            kernel,
            policy,
            now: kernel.now(),
            link,
            project,
            created_here,
            head_before,
            local_versions,
            jobs,
            changed_jobs: BTreeSet::new(),
            base_before_theirs: None,
            theirs: None,
        })
    }

    /// Ours (`local_versions[mine]`): the server holds it (its ack may never have
    /// arrived), so its job completes.
    fn complete_own(&mut self, mine: usize, number: u32) -> Result<(), ApiError> {
        let mine = &self.local_versions[mine];
        self.link.server_head = number;
        self.link.base_local = mine.number;
        if let Some(at) = self.jobs.iter().position(|j| j.version_id == mine.id) {
            let mut job = self.jobs[at].clone();
            if job.state == JobState::Dispatched {
                job = advance(&job, &Event::Restarted, self.kernel, &self.policy, 0.0)?;
            }
            if let Ok(acked) = outbox::advance(&job, &Event::Acked { number }, self.now, &self.policy, 0.0) {
                job = advance(&acked, &Event::Finalize, self.kernel, &self.policy, 0.0)?;
                self.jobs[at] = job;
                self.changed_jobs.insert(at);
            }
        }
        Ok(())
    }

    /// A colleague's version becomes a local version (of a project created here when
    /// this folder does not hold it yet).
    fn bring_in(&mut self, batch: &mut Batch, project_id: &str, server_version: &ServerVersion, report: &mut CycleReport) -> Result<(), ApiError> {
        let kernel = self.kernel;
        self.base_before_theirs.get_or_insert(self.link.base_local);
        // Who wrote it is who pushed it, as the server records them (the token's
        // member), never the name the pushing client claimed.
        let author = if server_version.pushed_by.trim().is_empty() { server_version.author.as_str() } else { server_version.pushed_by.as_str() };
        let target = match &mut self.project {
            Some(target) => target,
            None => {
                let mut created = crate::project::new_project(kernel, crate::project::NewProject { title: server_version.title.clone(), ..Default::default() }, self.now);
                created.id = project_id.to_owned();
                let activity = kernel.activity(Some(project_id), ActivityKind::ProjectCreated, format!("Pulled project \"{}\" by {author}", created.title))?;
                batch.put(&activity)?;
                self.project.insert(created)
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
        self.link.server_head = server_version.number;
        self.link.base_local = version.number;
        report.pulled += 1;
        self.theirs = Some((version, server_version.number));
        Ok(())
    }

    /// With their version in: the working copy follows it when nothing here is
    /// unsynced; otherwise the unsynced jobs wait on a conflict (the open one, moved to
    /// their newest head, or a new one).
    fn follow_or_conflict(&mut self, batch: &mut Batch, project_id: &str, push_conflict: Option<ConflictKind>, report: &mut CycleReport) -> Result<(), ApiError> {
        let Some((their_version, their_number)) = self.theirs.take() else { return Ok(()) };
        let Some(mut project) = self.project.take() else { return Ok(()) };
        let kernel = self.kernel;
        let head_before = self.head_before;
        let head_version = self.local_versions.iter().find(|v| v.number == head_before);
        let working_copy_hash = content_hash(&project.title, &project.source);
        let edited = !self.created_here && head_version.is_none_or(|h| h.content_hash != working_copy_hash);
        let unsynced: Vec<usize> =
            self.jobs.iter().enumerate().filter(|(_, j)| matches!(j.state, JobState::Pending | JobState::Dispatched | JobState::RetryWait { .. })).map(|(i, _)| i).collect();
        let held_back = self.jobs.iter().any(|j| matches!(j.state, JobState::Conflict { .. } | JobState::Failed));
        let mut open = super::super::conflicts(kernel)?.into_iter().find(|c| c.project_id == project_id && c.state == ConflictState::Open);
        let clean = self.created_here || (!edited && unsynced.is_empty() && !held_back && open.is_none() && push_conflict.is_none());
        if clean {
            // Nothing here is unsynced: the working copy follows the server's head.
            project.title = their_version.title.clone();
            project.source = their_version.source.clone();
            project.revision += 1;
        } else {
            let their_side = side(&their_version, Some(their_number));
            let mut job_ids = Vec::new();
            for at in unsynced {
                self.jobs[at] = advance(&self.jobs[at], &Event::StaleBase { server_head: their_number }, kernel, &self.policy, 0.0)?;
                self.changed_jobs.insert(at);
                job_ids.push(self.jobs[at].id.clone());
            }
            let conflict = match open.take() {
                Some(mut conflict) => {
                    conflict.theirs = their_side;
                    conflict.job_ids.extend(job_ids);
                    conflict.updated_at = self.now;
                    conflict.remerge();
                    conflict
                }
                None => {
                    let mine = match head_version {
                        Some(head) if !edited => side(head, None),
                        _ => ConflictSide { title: project.title.clone(), source: project.source.clone(), author: kernel.author()?, local_number: None, server_number: None },
                    };
                    let conflict = self.new_conflict(project_id, mine, their_side, job_ids, push_conflict.unwrap_or(ConflictKind::Pull));
                    report.new_conflicts += 1;
                    let activity =
                        kernel.activity(Some(project_id), ActivityKind::VersionCreated, format!("Sync conflict on \"{}\": the server has newer versions", project.title))?;
                    batch.put(&activity)?;
                    conflict
                }
            };
            batch.put(&conflict)?;
        }
        project.updated_at = self.now;
        self.project = Some(project);
        Ok(())
    }

    /// A new open conflict: the base is the version before their first one came in.
    fn new_conflict(&self, project_id: &str, mine: ConflictSide, theirs: ConflictSide, job_ids: Vec<String>, kind: ConflictKind) -> SyncConflict {
        let base_number = self.base_before_theirs.unwrap_or(0);
        let base = match self.local_versions.iter().find(|v| v.number == base_number && base_number > 0) {
            Some(v) => side(v, None),
            None => ConflictSide { title: String::new(), source: String::new(), author: String::new(), local_number: None, server_number: None },
        };
        let mut conflict = SyncConflict {
            id: self.kernel.new_id("cnf"),
            project_id: project_id.to_owned(),
            kind,
            state: ConflictState::Open,
            base,
            mine,
            theirs,
            merged: None,
            overlaps: Vec::new(),
            job_ids,
            resolution: None,
            created_at: self.now,
            updated_at: self.now,
        };
        conflict.remerge();
        conflict
    }

    /// Stages what the import changed: the project (when its head moved or it was
    /// created here), the change marker, the link and the jobs.
    fn stage(self, batch: &mut Batch, changed: bool) -> Result<(), ApiError> {
        if let Some(project) = &self.project {
            if project.head != self.head_before || self.created_here {
                batch.put(project)?;
            }
        }
        if changed {
            super::super::stage_change_marker(self.kernel, batch)?;
        }
        batch.put(&self.link)?;
        for at in self.changed_jobs {
            batch.put(&self.jobs[at])?;
        }
        Ok(())
    }
}
