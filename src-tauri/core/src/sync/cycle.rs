//! One sync cycle: pull the workspace's changes, then push the due delivery jobs.
//! The network calls run without the store's write lock; every state change is one
//! durable batch under it. A job is marked dispatched (durably) before it is sent, so
//! a crash mid-send resumes it as pending and resends the same push. A project's
//! backlog goes in batches: the first send of a job takes the project's next unsent
//! jobs along (up to `DeliverySettings::max_batch`), and records them on the job with
//! the base, so a resend is the same push under the same key.

use std::collections::BTreeMap;

use inkstone_sync_proto::{PushRequest, PushVersion, ServerVersion, CODE_CONTROL_CHARACTER, FEATURE_VERSION_ORIGIN, MAX_BODY_BYTES, MAX_VERSIONS_PER_PUSH};

use super::transport::{Failure, PushAnswer, Transport};
use super::{connection, token, ConflictKind, ConflictSide, ConflictState, Connection, Jitter, ProjectLink, SyncConflict};
use crate::error::{ApiError, ErrorCode};
use crate::kernel::Kernel;
use crate::llm::ApiKey;
use crate::model::{ActivityKind, Project, Version, VersionOrigin};
use crate::outbox::{self, DeliveryJob, Event, JobState};
use crate::project::versions::{self, content_hash, NewVersion};
use crate::store::{Batch, Durability};

/// Which halves of a cycle to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum What {
    Pull,
    Push,
    Both,
}

/// What a cycle did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CycleReport {
    /// Colleagues' versions brought in.
    pub pulled: u32,
    /// Versions the server acknowledged.
    pub pushed: u32,
    /// Performance records (accounts, publications, snapshots) the server took, and
    /// those a pull changed here.
    pub perf_pushed: u32,
    pub perf_pulled: u32,
    /// Conflicts opened.
    pub new_conflicts: u32,
    /// Jobs waiting out a backoff.
    pub waiting: u32,
    /// The server could not be reached.
    pub offline: bool,
    /// The server answered at least once.
    pub contacted: bool,
    /// The last failure, for the person (English), and its code for the UI to word.
    pub error: Option<String>,
    pub error_code: Option<String>,
}

impl CycleReport {
    fn failed(&mut self, failure: &Failure) {
        self.offline |= matches!(failure, Failure::Network(_));
        self.contacted |= matches!(failure, Failure::Status { .. });
        self.noted(failure);
    }

    /// Keeps the failure as the last error; returns its reason.
    fn noted(&mut self, failure: &Failure) -> String {
        let reason = failure.reason();
        self.error = Some(reason.clone());
        self.error_code = Some(failure.code().to_owned());
        reason
    }
}

pub(crate) fn not_connected() -> ApiError {
    ApiError::new(ErrorCode::Conflict, "This workspace is not connected to a workspace server.").problem("sync.not_connected", &[]).action("connect", &[])
}

/// After a restart: what was in the air goes back to pending (same dedupe key).
pub fn resume_after_restart(kernel: &Kernel) -> Result<(), ApiError> {
    let _guard = kernel.write_lock();
    let policy = kernel.config().sync.retry;
    let mut batch = Batch::new();
    for job in super::jobs(kernel)? {
        if job.state == JobState::Dispatched {
            batch.put(&advance(&job, &Event::Restarted, kernel, &policy, 0.0)?)?;
        }
    }
    kernel.store().apply(batch, Durability::Durable)?;
    Ok(())
}

fn advance(job: &DeliveryJob, event: &Event, kernel: &Kernel, policy: &outbox::RetryPolicy, unit: f64) -> Result<DeliveryJob, ApiError> {
    advance_at(job, event, kernel.now(), policy, unit)
}

/// [`advance`] at a given time: the jobs of one push move at one instant, so they
/// wait out the same backoff and come due together.
fn advance_at(job: &DeliveryJob, event: &Event, now: crate::model::Timestamp, policy: &outbox::RetryPolicy, unit: f64) -> Result<DeliveryJob, ApiError> {
    outbox::advance(job, event, now, policy, unit).map_err(|e| ApiError::internal(format!("delivery job {}: {e}", job.id)))
}

/// Runs `what`. Errors: CONFLICT when not connected or the token is missing; store
/// errors. A server that cannot be reached is not an error: the report says offline.
pub fn run(kernel: &Kernel, transport: &Transport, jitter: &mut Jitter, what: What) -> Result<CycleReport, ApiError> {
    let connection = connection(kernel)?.ok_or_else(not_connected)?;
    let token = token(kernel)?;
    let mut report = CycleReport::default();
    if matches!(what, What::Pull | What::Both) {
        pull(kernel, transport, &connection, &token, &mut report, None)?;
    }
    if matches!(what, What::Push | What::Both) {
        // A failed pull does not hold the pushes back: they go on the bases this client
        // has (a stale one meets a 409). Whether the server is unreachable, they find
        // out for themselves.
        let pull_offline = std::mem::take(&mut report.offline);
        // As the pull left it (what the server said it supports).
        let connection = super::connection(kernel)?.ok_or_else(not_connected)?;
        push(kernel, transport, &connection, &token, jitter, &mut report)?;
        report.offline |= pull_offline;
    }
    Ok(report)
}

/// The most versions a page of changes is asked for.
const PAGE_VERSIONS: usize = 200;

/// Pulls the workspace's changes since the connection's cursor, page by page. A page
/// too long to read (an older server pages by count only) is asked for again with
/// fewer versions, down to one. `stale_project`: a 409 without all the newer versions
/// of this project sent this pull; they come in as that push's conflict (see
/// [`import`]). True when it pulled everything; a failure is in the report.
fn pull(kernel: &Kernel, transport: &Transport, connection: &Connection, token: &ApiKey, report: &mut CycleReport, stale_project: Option<&str>) -> Result<bool, ApiError> {
    let mut cursor = connection.cursor;
    let mut limit = PAGE_VERSIONS;
    loop {
        let changes = match transport.changes(&connection.server_url, token, cursor, limit) {
            Ok(changes) => changes,
            Err(Failure::Status { code, .. }) if code == super::transport::ANSWER_TOO_LARGE && limit > 1 => {
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
        let mut stored = super::connection(kernel)?.ok_or_else(not_connected)?;
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
            super::policy::refresh(kernel, transport, connection, token, super::policy::keeps_policy(&changes.features))?;
            return Ok(true);
        }
    }
}

fn side(version: &Version, server_number: Option<u32>) -> ConflictSide {
    ConflictSide { title: version.title.clone(), source: version.source.clone(), author: version.author.clone(), local_number: Some(version.number), server_number }
}

/// Brings a project's server versions in (oldest first). The client's own versions
/// complete their jobs; a colleague's become local versions. When they move the head
/// under unsynced work — an edited working copy, versions not yet on the server, an
/// open conflict — the work stays as it is and a conflict opens (or the open one
/// moves to the newest head). `push_conflict`: a 409 brought these; the sending job
/// is in conflict whatever they hold.
fn import(
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
    let mut jobs: Vec<DeliveryJob> = super::jobs(kernel)?.into_iter().filter(|j| j.project_id == project_id).collect();
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
        let mut open = super::conflicts(kernel)?.into_iter().find(|c| c.project_id == project_id && c.state == ConflictState::Open);
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
        super::stage_change_marker(kernel, batch)?;
    }
    batch.put(&link)?;
    for at in changed_jobs {
        batch.put(&jobs[at])?;
    }
    Ok(())
}

fn push(kernel: &Kernel, transport: &Transport, connection: &Connection, token: &ApiKey, jitter: &mut Jitter, report: &mut CycleReport) -> Result<(), ApiError> {
    let workspace_id = kernel.workspace()?.id;
    // One read of the outbox per cycle: its finished jobs stay in it for good, so a
    // read per push would grow with the whole history. Jobs made meanwhile wake the
    // next cycle.
    let all = super::jobs(kernel)?;
    let mut project_ids: Vec<&str> = Vec::new();
    for job in &all {
        if job.workspace_id == workspace_id && !project_ids.contains(&job.project_id.as_str()) {
            project_ids.push(&job.project_id);
        }
    }
    for project_id in project_ids {
        // While a conflict is open, later versions of the project wait with it: the
        // person resolves them together, and none goes on a base it was not made on.
        if hold_with_open_conflict(kernel, project_id)? {
            continue;
        }
        // One push of a project at a time, in order: each is based on the one before.
        let queue: Vec<DeliveryJob> = all.iter().filter(|j| j.project_id == project_id && !matches!(j.state, JobState::Finalized | JobState::Superseded { .. })).cloned().collect();
        for (at, listed) in queue.iter().enumerate() {
            // As it is now: a push before may have carried it along.
            let Some(job) = kernel.store().get::<DeliveryJob>(listed.id.as_bytes())? else { continue };
            if matches!(job.state, JobState::Finalized | JobState::Superseded { .. }) {
                continue;
            }
            // A pause takes effect between two sends, even within a cycle.
            if super::is_paused(kernel)? {
                return Ok(());
            }
            // A version that cannot travel waits for the person, not the ones after it.
            if super::unsendable(&job) {
                continue;
            }
            if !outbox::due(&job, kernel.now()) {
                if matches!(job.state, JobState::RetryWait { .. }) {
                    report.waiting += 1;
                }
                break;
            }
            if !send(kernel, transport, connection, token, &job, &queue[at + 1..], jitter, report)? {
                break;
            }
        }
        if report.offline {
            return Ok(());
        }
    }
    Ok(())
}

/// Attaches the project's waiting jobs to its open conflict (their newest version
/// becomes the person's side); true when there is an open conflict.
fn hold_with_open_conflict(kernel: &Kernel, project_id: &str) -> Result<bool, ApiError> {
    let Some(mut conflict) = super::conflicts(kernel)?.into_iter().find(|c| c.project_id == project_id && c.state == ConflictState::Open) else {
        return Ok(false);
    };
    let _guard = kernel.write_lock();
    let policy = kernel.config().sync.retry;
    let waiting: Vec<DeliveryJob> =
        super::jobs(kernel)?.into_iter().filter(|j| j.project_id == project_id && matches!(j.state, JobState::Pending | JobState::RetryWait { .. })).collect();
    let Some(newest) = waiting.last() else { return Ok(true) };
    let mut batch = Batch::new();
    let server_head = conflict.theirs.server_number.unwrap_or(0);
    for job in &waiting {
        batch.put(&advance(job, &Event::StaleBase { server_head }, kernel, &policy, 0.0)?)?;
        conflict.job_ids.push(job.id.clone());
    }
    let version = versions::load(kernel.store(), project_id, newest.version_number)?;
    conflict.mine = side(&version, None);
    conflict.updated_at = kernel.now();
    conflict.remerge();
    batch.put(&conflict)?;
    super::stage_change_marker(kernel, &mut batch)?;
    kernel.store().apply(batch, Durability::Durable)?;
    Ok(true)
}

/// The jobs a first send carries after its first, with their versions as sent: from
/// `later` (the project's next unfinished jobs as the cycle began, in order, read
/// again here), those never sent, up to `max_batch` versions and within the server's
/// body limit.
fn gather_batch(kernel: &Kernel, later: &[DeliveryJob], leader_bytes: usize, with_origin: bool, with_ai: bool) -> Result<Vec<(DeliveryJob, PushVersion)>, ApiError> {
    let max_batch = kernel.config().sync.max_batch.clamp(1, MAX_VERSIONS_PER_PUSH);
    // Room for the JSON around the versions and the headers.
    let mut room = MAX_BODY_BYTES.saturating_sub(4 * 1024).saturating_sub(leader_bytes);
    let mut members = Vec::new();
    for listed in later {
        if members.len() + 1 >= max_batch {
            break;
        }
        let Some(job) = kernel.store().get::<DeliveryJob>(listed.id.as_bytes())? else { break };
        if job.state != JobState::Pending || job.base.is_some() || job.attempts > 0 {
            break;
        }
        let wire = wire_version(kernel.store(), &versions::load(kernel.store(), &job.project_id, job.version_number)?, with_origin, with_ai)?;
        // It fails on its own when its turn comes, holding nothing back.
        if refused_text(&wire).is_some() {
            break;
        }
        let bytes = wire_bytes(&wire);
        if bytes > room {
            break;
        }
        room -= bytes;
        members.push((job, wire));
    }
    Ok(members)
}

/// How a delivered version was made, as the wire says it: the kind only (no ids, no
/// model or profile). None for what is never delivered.
fn wire_origin(origin: &VersionOrigin) -> Option<&'static str> {
    use inkstone_sync_proto::origin;
    match origin {
        VersionOrigin::Manual => Some(origin::MANUAL),
        VersionOrigin::Restore { .. } => Some(origin::RESTORE),
        VersionOrigin::AiProposal { .. } => Some(origin::AI_PROPOSAL),
        VersionOrigin::Checkpoint { .. } => Some(origin::CHECKPOINT),
        VersionOrigin::SyncResolution { .. } => Some(origin::SYNC_RESOLUTION),
        VersionOrigin::Autosnapshot { .. } | VersionOrigin::Pulled { .. } => None,
    }
}

/// The version as a push carries it; its origin only when `with_origin` (the server
/// keeps origins and the push's first send carried them), its AI origin detail only
/// when `with_ai` (the server keeps it and the first send shared it).
fn wire_version(store: &crate::store::Store, version: &Version, with_origin: bool, with_ai: bool) -> Result<PushVersion, ApiError> {
    Ok(PushVersion {
        ai: if with_ai { super::ai_activity::of(store, version)? } else { None },
        origin: if with_origin { wire_origin(&version.origin).map(str::to_owned) } else { None },
        client_id: version.id.clone(),
        title: version.title.clone(),
        source: version.source.clone(),
        author: version.author.clone(),
        message: version.message.clone(),
        content_hash: version.content_hash.clone(),
        created_at: version.created_at.to_rfc3339(),
    })
}

/// Why the protocol refuses `version`'s text (a C0 control character other than tab and
/// line breaks, as every server checks since; PostgreSQL cannot store U+0000), naming
/// the field; None when it may travel. The app's API refuses such text at input, but a
/// version saved by an older build may hold it.
fn refused_text(version: &PushVersion) -> Option<String> {
    let fields = [
        ("clientId", Some(&version.client_id)),
        ("title", Some(&version.title)),
        ("source", Some(&version.source)),
        ("author", Some(&version.author)),
        ("message", version.message.as_ref()),
        ("createdAt", Some(&version.created_at)),
    ];
    fields.into_iter().find_map(|(field, text)| {
        let (at, c) = inkstone_sync_proto::control_character(text?)?;
        Some(format!("the version's {field} holds the control character U+{:04X} at character {at}, which cannot be sent; remove it and save a new version", c as u32))
    })
}

fn wire_bytes(version: &PushVersion) -> usize {
    serde_json::to_vec(version).map_or(usize::MAX, |bytes| bytes.len() + 1)
}

/// Sends the push that `job` leads: it alone, or with the batch its first send fixed
/// (a first send picks it from `later`, the project's next jobs). True when it was
/// acknowledged (the project's next may go).
#[allow(clippy::too_many_arguments)]
fn send(
    kernel: &Kernel,
    transport: &Transport,
    connection: &Connection,
    token: &ApiKey,
    job: &DeliveryJob,
    later: &[DeliveryJob],
    jitter: &mut Jitter,
    report: &mut CycleReport,
) -> Result<bool, ApiError> {
    let store = kernel.store();
    let policy = kernel.config().sync.retry;
    let first_send = job.base.is_none();
    // The first send decides whether the push carries origins; a resend does the same.
    let with_origin = if first_send { connection.server_takes_origin } else { job.with_origin };
    // And whether it carries AI origin detail: the server keeps it and the policy shares.
    let with_ai = if first_send { super::ai_activity::sharing(store, connection.server_takes_ai)? } else { job.with_ai };
    let leader_version = wire_version(store, &versions::load(store, &job.project_id, job.version_number)?, with_origin, with_ai)?;
    if let Some(reason) = refused_text(&leader_version) {
        // Never sent (again): it fails here, and the project's next versions go on.
        let _guard = kernel.write_lock();
        let mut batch = Batch::new();
        let unsendable = Event::Unsendable { reason, code: CODE_CONTROL_CHARACTER.to_owned() };
        let mut current = store.get::<DeliveryJob>(job.id.as_bytes())?.unwrap_or_else(|| job.clone());
        if current.state == JobState::Dispatched {
            current = advance(&current, &Event::Restarted, kernel, &policy, 0.0)?;
        }
        batch.put(&advance(&current, &unsendable, kernel, &policy, 0.0)?)?;
        store.apply(batch, Durability::Durable)?;
        return Ok(true);
    }
    let mut wire = vec![leader_version];
    let carried: Vec<(DeliveryJob, PushVersion)> = if first_send {
        gather_batch(kernel, later, wire_bytes(&wire[0]), with_origin, with_ai)?
    } else {
        // A resend carries what the first send carried, whatever state it is in now.
        let mut carried = Vec::with_capacity(job.batch.len());
        for id in &job.batch {
            let member = store.get::<DeliveryJob>(id.as_bytes())?.ok_or_else(|| ApiError::internal(format!("delivery job {}: its batch lost job {id}", job.id)))?;
            let version = wire_version(store, &versions::load(store, &member.project_id, member.version_number)?, with_origin, with_ai)?;
            carried.push((member, version));
        }
        carried
    };
    let (members, versions_carried): (Vec<DeliveryJob>, Vec<PushVersion>) = carried.into_iter().unzip();
    wire.extend(versions_carried);
    let link = store.get::<ProjectLink>(job.project_id.as_bytes())?.unwrap_or_default();
    let base = job.base.unwrap_or(link.server_head);
    // Every job of the push moves together, in one durable batch per change.
    let dispatched: Vec<DeliveryJob> = {
        let _guard = kernel.write_lock();
        let mut batch = Batch::new();
        let mut moved = Vec::new();
        let now = kernel.now();
        for (i, one) in std::iter::once(job).chain(&members).enumerate() {
            // A member waits with its push, whose first job decides when it goes (its
            // own wait can look longer after a clock step back).
            let mut one = one.clone();
            if i > 0 && matches!(one.state, JobState::RetryWait { .. }) {
                one.state = JobState::Pending;
            }
            let Ok(mut next) = outbox::advance(&one, &Event::Dispatch, now, &policy, 0.0) else {
                continue;
            };
            next.base = Some(base);
            if i == 0 {
                next.batch = members.iter().map(|m| m.id.clone()).collect();
                next.with_origin = with_origin;
                next.with_ai = with_ai;
            }
            batch.put(&next)?;
            moved.push(next);
        }
        store.apply(batch, Durability::Durable)?;
        moved
    };
    let Some(leader) = dispatched.first().filter(|d| d.id == job.id) else {
        return Err(ApiError::internal(format!("delivery job {}: a {} job cannot be sent", job.id, job.state.name())));
    };
    let request = PushRequest { base, versions: wire };
    let answer = transport.push(&connection.server_url, token, &job.project_id, &outbox::push_key(leader), &request);
    let _guard = kernel.write_lock();
    let mut batch = Batch::new();
    let now = kernel.now();
    let acked = match answer {
        PushAnswer::Accepted(response) => {
            report.contacted = true;
            let mut link = store.get::<ProjectLink>(job.project_id.as_bytes())?.unwrap_or_else(|| ProjectLink { project_id: job.project_id.clone(), ..Default::default() });
            for one in &dispatched {
                let number = response.versions.iter().find(|v| v.client_id == one.version_id).map_or(response.head, |v| v.number);
                let acked = advance_at(one, &Event::Acked { number }, now, &policy, 0.0)?;
                batch.put(&advance_at(&acked, &Event::Finalize, now, &policy, 0.0)?)?;
                if number > link.server_head {
                    link.server_head = number;
                    link.base_local = one.version_number;
                }
                report.pushed += 1;
            }
            batch.put(&link)?;
            true
        }
        PushAnswer::Stale(stale) if stale.more => {
            // Not every newer version came with the 409: pull them (in pages), and
            // they come in as this push's conflict; its jobs stay dispatched until then.
            report.contacted = true;
            drop(batch);
            drop(_guard);
            return follow_stale(kernel, transport, connection, token, &job.project_id, &dispatched, jitter, report);
        }
        PushAnswer::Stale(stale) => {
            report.contacted = true;
            // `import` reads the jobs (dispatched, committed above) from the store.
            let newer: Vec<&ServerVersion> = stale.newer.iter().collect();
            import(kernel, &mut batch, &job.project_id, &newer, report, Some(ConflictKind::Push))?;
            false
        }
        PushAnswer::Retry { failure, retry_after_millis, unreachable } => {
            report.offline |= unreachable;
            report.contacted |= !unreachable;
            let reason = report.noted(&failure);
            let code = failure.code().to_owned();
            // One draw for the whole push: its jobs wait out the same backoff.
            let unit = jitter.unit();
            for one in &dispatched {
                batch.put(&advance_at(one, &Event::Transient { reason: reason.clone(), code: code.clone(), retry_after_millis }, now, &policy, unit)?)?;
            }
            false
        }
        PushAnswer::Refused { failure } => {
            report.contacted = true;
            let reason = report.noted(&failure);
            let code = failure.code().to_owned();
            // Refused for a control character in one of the versions (a push fixed
            // before this build checked): that one fails; the others go again in new
            // pushes, since the refused one stored nothing.
            let offending: Vec<bool> = if code == CODE_CONTROL_CHARACTER {
                dispatched
                    .iter()
                    .map(|one| versions::load(store, &one.project_id, one.version_number).and_then(|v| Ok(refused_text(&wire_version(store, &v, false, false)?).is_some())))
                    .collect::<Result<_, _>>()?
            } else {
                Vec::new()
            };
            let split = offending.iter().any(|o| *o);
            for (i, one) in dispatched.iter().enumerate() {
                let event = if split && !offending[i] { Event::Unbatched } else { Event::Permanent { reason: reason.clone(), code: code.clone() } };
                batch.put(&advance_at(one, &event, now, &policy, 0.0)?)?;
            }
            false
        }
    };
    store.apply(batch, Durability::Durable)?;
    Ok(acked)
}

/// After a 409 that left newer versions out: pulls, so they come in as the push's
/// conflict. When the pull brought none of the project's (they were here already), the
/// conflict opens on the head this client holds, as after a complete 409. A failed
/// pull sends the push's jobs to wait and retry as the same push. False: the project's
/// next push waits.
#[allow(clippy::too_many_arguments)]
fn follow_stale(
    kernel: &Kernel,
    transport: &Transport,
    connection: &Connection,
    token: &ApiKey,
    project_id: &str,
    dispatched: &[DeliveryJob],
    jitter: &mut Jitter,
    report: &mut CycleReport,
) -> Result<bool, ApiError> {
    let connection = super::connection(kernel)?.unwrap_or_else(|| connection.clone());
    let pulled = pull(kernel, transport, &connection, token, report, Some(project_id))?;
    let store = kernel.store();
    let _guard = kernel.write_lock();
    let mut batch = Batch::new();
    if pulled {
        // The pull settled the push's jobs when it brought the project's newer versions.
        let mut still_sent = false;
        for one in dispatched {
            still_sent |= store.get::<DeliveryJob>(one.id.as_bytes())?.is_some_and(|j| j.state == JobState::Dispatched);
        }
        if still_sent {
            import(kernel, &mut batch, project_id, &[], report, Some(ConflictKind::Push))?;
        }
    } else {
        let policy = kernel.config().sync.retry;
        let now = kernel.now();
        let unit = jitter.unit();
        let (reason, code) = (report.error.clone().unwrap_or_default(), report.error_code.clone().unwrap_or_default());
        for one in dispatched {
            let Some(current) = store.get::<DeliveryJob>(one.id.as_bytes())? else { continue };
            if current.state == JobState::Dispatched {
                batch.put(&advance_at(&current, &Event::Transient { reason: reason.clone(), code: code.clone(), retry_after_millis: None }, now, &policy, unit)?)?;
            }
        }
    }
    store.apply(batch, Durability::Durable)?;
    Ok(false)
}
