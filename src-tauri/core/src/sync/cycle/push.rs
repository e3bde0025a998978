//! The push: the due delivery jobs, a project's backlog in batches, each job marked
//! dispatched before it is sent, and the server's answer (acknowledged, refused, or a
//! stale base followed by a pull).

use inkstone_sync_proto::{PushRequest, PushResponse, PushVersion, ServerVersion, StaleBase, CODE_CONTROL_CHARACTER, MAX_BODY_BYTES, MAX_VERSIONS_PER_PUSH};

use super::super::transport::{Failure, PushAnswer, Transport};
use super::super::{ConflictKind, ConflictState, Connection, Jitter, ProjectLink};
use super::{advance, advance_at, CycleReport};
use crate::error::ApiError;
use crate::kernel::Kernel;
use crate::llm::ApiKey;
use crate::model::{Timestamp, Version, VersionOrigin};
use crate::outbox::{self, DeliveryJob, Event, JobState};
use crate::project::versions;
use crate::store::{Batch, Durability};

use super::pull::{import, pull, side};

pub(super) fn push(kernel: &Kernel, transport: &Transport, connection: &Connection, token: &ApiKey, jitter: &mut Jitter, report: &mut CycleReport) -> Result<(), ApiError> {
    let workspace_id = kernel.workspace()?.id;
    // One read of the outbox per cycle: its finished jobs stay in it for good, so a
    // read per push would grow with the whole history. Jobs made meanwhile wake the
    // next cycle.
    let all = super::super::jobs(kernel)?;
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
            if super::super::is_paused(kernel)? {
                return Ok(());
            }
            // A version that cannot travel waits for the person, not the ones after it.
            if super::super::unsendable(&job) {
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
    let Some(mut conflict) = super::super::conflicts(kernel)?.into_iter().find(|c| c.project_id == project_id && c.state == ConflictState::Open) else {
        return Ok(false);
    };
    let _guard = kernel.write_lock();
    let policy = kernel.config().sync.retry;
    let waiting: Vec<DeliveryJob> =
        super::super::jobs(kernel)?.into_iter().filter(|j| j.project_id == project_id && matches!(j.state, JobState::Pending | JobState::RetryWait { .. })).collect();
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
    super::super::stage_change_marker(kernel, &mut batch)?;
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
        ai: if with_ai { super::super::ai_activity::of(store, version)? } else { None },
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
    let with_ai = if first_send { super::super::ai_activity::sharing(store, connection.server_takes_ai)? } else { job.with_ai };
    let leader_version = wire_version(store, &versions::load(store, &job.project_id, job.version_number)?, with_origin, with_ai)?;
    if let Some(reason) = refused_text(&leader_version) {
        // Never sent (again): it fails here, and the project's next versions go on.
        fail_unsendable(kernel, job, reason)?;
        return Ok(true);
    }
    let mut wire = vec![leader_version];
    let carried = carried_along(kernel, job, later, wire_bytes(&wire[0]), with_origin, with_ai)?;
    let (members, versions_carried): (Vec<DeliveryJob>, Vec<PushVersion>) = carried.into_iter().unzip();
    wire.extend(versions_carried);
    let link = store.get::<ProjectLink>(job.project_id.as_bytes())?.unwrap_or_default();
    let base = job.base.unwrap_or(link.server_head);
    let dispatched = dispatch(kernel, job, &members, base, with_origin, with_ai)?;
    let Some(leader) = dispatched.first().filter(|d| d.id == job.id) else {
        return Err(ApiError::internal(format!("delivery job {}: a {} job cannot be sent", job.id, job.state.name())));
    };
    let request = PushRequest { base, versions: wire };
    let answer = transport.push(&connection.server_url, token, &job.project_id, &outbox::push_key(leader), &request);
    let _guard = kernel.write_lock();
    let mut batch = Batch::new();
    let sent = Sent { kernel, job, dispatched: &dispatched, now: kernel.now(), policy };
    let acked = match answer {
        PushAnswer::Accepted(response) => {
            sent.accepted(&mut batch, &response, report)?;
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
            sent.stale(&mut batch, &stale, report)?;
            false
        }
        PushAnswer::Retry { failure, retry_after_millis, unreachable } => {
            report.offline |= unreachable;
            report.contacted |= !unreachable;
            // One draw for the whole push: its jobs wait out the same backoff.
            sent.retry(&mut batch, &failure, retry_after_millis, jitter.unit(), report)?;
            false
        }
        PushAnswer::Refused { failure } => {
            sent.refused(&mut batch, &failure, report)?;
            false
        }
    };
    store.apply(batch, Durability::Durable)?;
    Ok(acked)
}

/// A leader whose text the protocol refuses fails without being sent (again).
fn fail_unsendable(kernel: &Kernel, job: &DeliveryJob, reason: String) -> Result<(), ApiError> {
    let store = kernel.store();
    let policy = kernel.config().sync.retry;
    let _guard = kernel.write_lock();
    let mut batch = Batch::new();
    let unsendable = Event::Unsendable { reason, code: CODE_CONTROL_CHARACTER.to_owned() };
    let mut current = store.get::<DeliveryJob>(job.id.as_bytes())?.unwrap_or_else(|| job.clone());
    if current.state == JobState::Dispatched {
        current = advance(&current, &Event::Restarted, kernel, &policy, 0.0)?;
    }
    batch.put(&advance(&current, &unsendable, kernel, &policy, 0.0)?)?;
    store.apply(batch, Durability::Durable)?;
    Ok(())
}

/// The jobs the push carries after its leader, with their versions as sent: on a
/// first send those [`gather_batch`] picks from `later`; on a resend what the first
/// send carried, whatever state it is in now.
fn carried_along(
    kernel: &Kernel,
    job: &DeliveryJob,
    later: &[DeliveryJob],
    leader_bytes: usize,
    with_origin: bool,
    with_ai: bool,
) -> Result<Vec<(DeliveryJob, PushVersion)>, ApiError> {
    if job.base.is_none() {
        return gather_batch(kernel, later, leader_bytes, with_origin, with_ai);
    }
    let store = kernel.store();
    let mut carried = Vec::with_capacity(job.batch.len());
    for id in &job.batch {
        let member = store.get::<DeliveryJob>(id.as_bytes())?.ok_or_else(|| ApiError::internal(format!("delivery job {}: its batch lost job {id}", job.id)))?;
        let version = wire_version(store, &versions::load(store, &member.project_id, member.version_number)?, with_origin, with_ai)?;
        carried.push((member, version));
    }
    Ok(carried)
}

/// Marks every job of the push dispatched on `base`, together in one durable batch;
/// the leader keeps the batch and what it carries. Returns the jobs as dispatched.
fn dispatch(kernel: &Kernel, job: &DeliveryJob, members: &[DeliveryJob], base: u32, with_origin: bool, with_ai: bool) -> Result<Vec<DeliveryJob>, ApiError> {
    let store = kernel.store();
    let policy = kernel.config().sync.retry;
    let _guard = kernel.write_lock();
    let mut batch = Batch::new();
    let mut moved = Vec::new();
    let now = kernel.now();
    for (i, one) in std::iter::once(job).chain(members).enumerate() {
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
    Ok(moved)
}

/// A push the server answered, and what its answer does to the push's jobs (staged in
/// the caller's batch, under the write lock).
struct Sent<'a> {
    kernel: &'a Kernel,
    job: &'a DeliveryJob,
    dispatched: &'a [DeliveryJob],
    now: Timestamp,
    policy: outbox::RetryPolicy,
}

impl Sent<'_> {
    /// Numbered: every job is done, and the link follows the server's head.
    fn accepted(&self, batch: &mut Batch, response: &PushResponse, report: &mut CycleReport) -> Result<(), ApiError> {
        report.contacted = true;
        let store = self.kernel.store();
        let mut link = store.get::<ProjectLink>(self.job.project_id.as_bytes())?.unwrap_or_else(|| ProjectLink { project_id: self.job.project_id.clone(), ..Default::default() });
        for one in self.dispatched {
            let number = response.versions.iter().find(|v| v.client_id == one.version_id).map_or(response.head, |v| v.number);
            let acked = advance_at(one, &Event::Acked { number }, self.now, &self.policy, 0.0)?;
            batch.put(&advance_at(&acked, &Event::Finalize, self.now, &self.policy, 0.0)?)?;
            if number > link.server_head {
                link.server_head = number;
                link.base_local = one.version_number;
            }
            report.pushed += 1;
        }
        batch.put(&link)?;
        Ok(())
    }

    /// A 409 with every newer version: they come in as this push's conflict.
    fn stale(&self, batch: &mut Batch, stale: &StaleBase, report: &mut CycleReport) -> Result<(), ApiError> {
        report.contacted = true;
        // `import` reads the jobs (dispatched, committed above) from the store.
        let newer: Vec<&ServerVersion> = stale.newer.iter().collect();
        import(self.kernel, batch, &self.job.project_id, &newer, report, Some(ConflictKind::Push))
    }

    /// Try again later: every job waits out the same backoff (`unit`, one draw).
    fn retry(&self, batch: &mut Batch, failure: &Failure, retry_after_millis: Option<u64>, unit: f64, report: &mut CycleReport) -> Result<(), ApiError> {
        let reason = report.noted(failure);
        let code = failure.code().to_owned();
        for one in self.dispatched {
            batch.put(&advance_at(one, &Event::Transient { reason: reason.clone(), code: code.clone(), retry_after_millis }, self.now, &self.policy, unit)?)?;
        }
        Ok(())
    }

    /// Refused for good. Refused for a control character in one of the versions (a
    /// push fixed before this build checked): that one fails; the others go again in
    /// new pushes, since the refused one stored nothing.
    fn refused(&self, batch: &mut Batch, failure: &Failure, report: &mut CycleReport) -> Result<(), ApiError> {
        report.contacted = true;
        let store = self.kernel.store();
        let reason = report.noted(failure);
        let code = failure.code().to_owned();
        let offending: Vec<bool> = if code == CODE_CONTROL_CHARACTER {
            self.dispatched
                .iter()
                .map(|one| versions::load(store, &one.project_id, one.version_number).and_then(|v| Ok(refused_text(&wire_version(store, &v, false, false)?).is_some())))
                .collect::<Result<_, _>>()?
        } else {
            Vec::new()
        };
        let split = offending.iter().any(|o| *o);
        for (i, one) in self.dispatched.iter().enumerate() {
            let event = if split && !offending[i] { Event::Unbatched } else { Event::Permanent { reason: reason.clone(), code: code.clone() } };
            batch.put(&advance_at(one, &event, self.now, &self.policy, 0.0)?)?;
        }
        Ok(())
    }
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
    let connection = super::super::connection(kernel)?.unwrap_or_else(|| connection.clone());
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
