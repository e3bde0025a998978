//! Team sync, the client half: the transport that delivers the outbox's jobs to the
//! workspace server, the pull that brings colleagues' versions in, and conflicts.
//!
//! - Which versions go where is decided below (`outbox`: a job per version, in the
//!   version's own transaction); how they travel is [`transport`] (endpoint, token).
//! - A push carries the server head this client last saw for the project
//!   ([`ProjectLink::server_head`]) and the job's dedupe key; the job's first send
//!   fixes that base, so every resend is the same push and can never make a second
//!   version. Pushes of one project go one at a time, in order; a first send carries
//!   the project's next never-sent versions along (up to `max_batch`), fixed with the
//!   base, so a backlog goes in a few pushes.
//! - A pull reads the workspace's changes since the stored cursor: the client's own
//!   versions are recognised by id (an ack that never arrived is completed there);
//!   a colleague's version becomes a local version with their name as author and
//!   origin `pulled`. The working copy is never overwritten: it follows a pulled head
//!   only when it holds nothing unsynced; otherwise the pull is a [`SyncConflict`].
//! - A stale base (409) imports the server's newer versions and opens a conflict:
//!   the person's side, the server's and the common base, with a three-way merge when
//!   the edits do not overlap ([`merge`]). The resolution is a new version (unsaved
//!   work is first kept as an autosnapshot), pushed on the new base; the conflicted
//!   jobs are superseded. Nothing is overwritten on either side.
//! - The server token lives in the keychain (`config.secrets`, account
//!   `sync:<workspace id>`); sled holds its fingerprint only.
//! - [`Runtime`] is the engine's delivery thread and the cycle lock: one cycle (pull,
//!   then push) at a time, whether the thread or an API call runs it.

pub mod cycle;
pub mod members;
pub mod merge;
pub mod transport;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::error::{ApiError, ErrorCode};
use crate::kernel::Kernel;
use crate::llm::ApiKey;
use crate::model::Timestamp;
use crate::outbox::{DeliveryJob, JobState, Paused};
use crate::store::{Batch, Durability, Kind, Record};

pub use cycle::CycleReport;
pub use merge::Overlap;

pub use crate::outbox::DeliverySettings;

/// The link of this data dir to a workspace server (a meta record). The token is in
/// the keychain; this holds its fingerprint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Connection {
    pub server_url: String,
    pub remote_workspace_id: String,
    pub remote_workspace_name: String,
    pub member_id: String,
    pub member_name: String,
    /// owner, editor or viewer.
    pub role: String,
    pub token_fingerprint: String,
    /// The workspace's change cursor this client has read up to.
    pub cursor: u64,
    pub connected_at: Timestamp,
    /// The server keeps versions' origins (it said so at connect or at the last pull):
    /// pushes carry them. An older server refuses fields it does not know.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[ts(skip)]
    pub server_takes_origin: bool,
}

pub const META_CONNECTION: &[u8] = b"sync_connection";

impl Record for Connection {
    const KIND: Kind = Kind::Meta;
    fn key(&self) -> Vec<u8> {
        META_CONNECTION.to_vec()
    }
}

/// The sync change marker (a meta record): moves, only ever up, whenever sync changes
/// this data folder's projects — a colleague's version pulled in (a project created
/// with it), a conflict opened, moved on or resolved. It is written in the same batch
/// as the change, so every window of the data folder (and a restart) sees it; the
/// status carries it, and the UI reads projects again only when it moves.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangeMarker {
    pub n: u64,
}

pub const META_CHANGES: &[u8] = b"sync_changes";

impl Record for ChangeMarker {
    const KIND: Kind = Kind::Meta;
    fn key(&self) -> Vec<u8> {
        META_CHANGES.to_vec()
    }
}

/// The change marker as stored (0 before sync changed anything).
pub fn change_marker(kernel: &Kernel) -> Result<u64, ApiError> {
    Ok(kernel.store().get::<ChangeMarker>(META_CHANGES)?.map_or(0, |m| m.n))
}

/// Moves the change marker in `batch` (the caller holds the write lock and applies the
/// batch with the change itself). Staged twice in one batch, it moves once.
pub(crate) fn stage_change_marker(kernel: &Kernel, batch: &mut Batch) -> Result<(), ApiError> {
    let n = change_marker(kernel)?.saturating_add(1);
    batch.put(&ChangeMarker { n })?;
    Ok(())
}

/// Per project: what this client knows of the server's history.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ProjectLink {
    pub project_id: String,
    /// The server's head this client has seen (0: none). The base of the next push.
    pub server_head: u32,
    /// The local version whose content is that head (0: none).
    pub base_local: u32,
}

impl Record for ProjectLink {
    const KIND: Kind = Kind::SyncProjects;
    fn key(&self) -> Vec<u8> {
        self.project_id.as_bytes().to_vec()
    }
}

/// What started a conflict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum ConflictKind {
    /// The server refused a push: its head had moved.
    Push,
    /// A pulled head arrived while the working copy or local versions were unsynced.
    Pull,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum ConflictState {
    Open,
    Resolved,
}

/// One side of a conflict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ConflictSide {
    pub title: String,
    pub source: String,
    pub author: String,
    /// The local version holding it (none for an unsaved working copy or an empty base).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub local_number: Option<u32>,
    /// The server's number, when the server holds it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub server_number: Option<u32>,
}

/// A conflict for the person to resolve.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SyncConflict {
    pub id: String,
    pub project_id: String,
    pub kind: ConflictKind,
    pub state: ConflictState,
    /// The common base: the last content both sides shared.
    pub base: ConflictSide,
    /// The person's side.
    pub mine: ConflictSide,
    /// The server's side.
    pub theirs: ConflictSide,
    /// The three-way merge, when the edits do not overlap (title and source).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub merged: Option<MergedContent>,
    /// Where the edits overlap, for the merge view.
    pub overlaps: Vec<Overlap>,
    /// The delivery jobs the conflict holds back (superseded on resolving).
    pub job_ids: Vec<String>,
    /// The local version that resolved it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub resolution: Option<u32>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct MergedContent {
    pub title: String,
    pub source: String,
}

impl Record for SyncConflict {
    const KIND: Kind = Kind::SyncConflicts;
    fn key(&self) -> Vec<u8> {
        self.id.as_bytes().to_vec()
    }
}

impl SyncConflict {
    /// Recomputes the merge of the three sides.
    pub fn remerge(&mut self) {
        let title = merge::merge_title(&self.base.title, &self.mine.title, &self.theirs.title);
        let source = merge::merge3(&self.base.source, &self.mine.source, &self.theirs.source);
        match (title, source) {
            (Some(title), merge::Merged::Clean(source)) => {
                self.merged = Some(MergedContent { title, source });
                self.overlaps = Vec::new();
            }
            (title, source) => {
                self.merged = None;
                self.overlaps = match source {
                    merge::Merged::Overlapping(overlaps) => overlaps,
                    merge::Merged::Clean(_) => Vec::new(),
                };
                if title.is_none() {
                    self.overlaps.insert(0, Overlap { base_start: 0, base_len: 0, mine: self.mine.title.clone(), theirs: self.theirs.title.clone() });
                }
            }
        }
    }
}

/// The keychain account of the server token of local workspace `workspace_id`.
pub fn token_account(workspace_id: &str) -> String {
    format!("sync:{workspace_id}")
}

/// The connection, if this data dir is linked to a server.
pub fn connection(kernel: &Kernel) -> Result<Option<Connection>, ApiError> {
    Ok(kernel.store().get::<Connection>(META_CONNECTION)?)
}

/// The server token: the process's `INKSTONE_WORKSPACE_TOKEN` first (never stored),
/// then the keychain's. Errors: CONFLICT when the keychain lost the token;
/// KEYCHAIN_UNAVAILABLE (its hints name `INKSTONE_WORKSPACE_TOKEN`).
pub fn token(kernel: &Kernel) -> Result<ApiKey, ApiError> {
    if let Some(token) = &kernel.config().env_workspace_token {
        return Ok(token.clone());
    }
    let workspace = kernel.workspace()?;
    kernel.config().secrets.get(&token_account(&workspace.id)).map_err(crate::llm::keychain::workspace_token_error)?.ok_or_else(|| {
        ApiError::new(ErrorCode::Conflict, "The workspace server's token is not in the keychain.")
            .hint("reconnect", "Connect again with the invite token (Settings → Workspace).")
            .hint("use_env_token", "Or set INKSTONE_WORKSPACE_TOKEN for the process (it is never saved).")
    })
}

/// Every delivery job, in creation order.
pub fn jobs(kernel: &Kernel) -> Result<Vec<DeliveryJob>, ApiError> {
    Ok(kernel.store().scan::<DeliveryJob>(b"")?)
}

/// Every conflict, oldest first.
pub fn conflicts(kernel: &Kernel) -> Result<Vec<SyncConflict>, ApiError> {
    Ok(kernel.store().scan::<SyncConflict>(b"")?)
}

/// True when the local workspace's deliveries are paused.
pub fn is_paused(kernel: &Kernel) -> Result<bool, ApiError> {
    let workspace = kernel.workspace()?;
    Ok(kernel.store().get::<Paused>(crate::outbox::META_PAUSED)?.is_some_and(|p| p.workspaces.contains(&workspace.id)))
}

/// Pauses or resumes the workspace's deliveries and pulls.
pub fn set_paused(kernel: &Kernel, paused: bool) -> Result<(), ApiError> {
    let _guard = kernel.write_lock();
    let workspace = kernel.workspace()?;
    let mut record = kernel.store().get::<Paused>(crate::outbox::META_PAUSED)?.unwrap_or_default();
    record.workspaces.retain(|w| w != &workspace.id);
    if paused {
        record.workspaces.push(workspace.id);
    }
    let mut batch = Batch::new();
    batch.put(&record)?;
    kernel.store().apply(batch, Durability::Durable)?;
    Ok(())
}

/// How the last cycle went, kept in memory for the status.
#[derive(Debug, Clone, Default)]
pub struct Health {
    /// A cycle ran in this process (else the status shows the stored [`LastFailure`]).
    pub cycled: bool,
    /// The server could not be reached in the last cycle.
    pub offline: bool,
    pub last_error: Option<String>,
    pub last_error_code: Option<String>,
    pub last_contact_at: Option<Timestamp>,
}

/// The last cycle's failure, kept (a meta record) until a cycle succeeds, so that
/// another process — `inkstone-cli sync status` after a failed `sync pull` — tells the
/// same story as the one that ran it. Written only when the failure changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LastFailure {
    pub offline: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    pub at: Timestamp,
}

pub const META_LAST_FAILURE: &[u8] = b"sync_last_failure";

impl Record for LastFailure {
    const KIND: Kind = Kind::Meta;
    fn key(&self) -> Vec<u8> {
        META_LAST_FAILURE.to_vec()
    }
}

/// The health to show: this process's last cycle, else the stored failure of the last
/// cycle any process ran (none: nothing failed since a cycle succeeded).
pub fn health(kernel: &Kernel, runtime: &Runtime) -> Result<Health, ApiError> {
    let health = runtime.health();
    if health.cycled {
        return Ok(health);
    }
    Ok(match kernel.store().get::<LastFailure>(META_LAST_FAILURE)? {
        Some(failure) => Health { offline: failure.offline, last_error: failure.error, last_error_code: failure.error_code, ..health },
        None => health,
    })
}

/// Keeps the cycle's failure (or forgets the last one once a cycle succeeded); writes
/// only when that changes.
fn remember_failure(kernel: &Kernel, report: &CycleReport) -> Result<(), ApiError> {
    let failed = report.offline || report.error.is_some();
    let _guard = kernel.write_lock();
    let stored = kernel.store().get::<LastFailure>(META_LAST_FAILURE)?;
    let mut batch = Batch::new();
    match (failed, stored) {
        (true, Some(s)) if (s.offline, &s.error, &s.error_code) == (report.offline, &report.error, &report.error_code) => return Ok(()),
        (true, _) => {
            batch.put(&LastFailure { offline: report.offline, error: report.error.clone(), error_code: report.error_code.clone(), at: kernel.now() })?;
        }
        (false, Some(_)) => {
            batch.delete::<LastFailure>(META_LAST_FAILURE.to_vec());
        }
        (false, None) => return Ok(()),
    }
    kernel.store().apply(batch, Durability::Durable)?;
    Ok(())
}

/// Counts of the jobs by what they mean to the person.
pub fn job_counts(jobs: &[DeliveryJob]) -> BTreeMap<&'static str, u32> {
    let mut counts = BTreeMap::new();
    for job in jobs {
        *counts.entry(job.state.name()).or_insert(0) += 1;
    }
    counts
}

/// True while a job still has to reach the server.
pub fn unsynced(state: &JobState) -> bool {
    match state {
        JobState::Pending | JobState::Dispatched | JobState::RetryWait { .. } | JobState::Acked { .. } => true,
        JobState::Finalized | JobState::Conflict { .. } | JobState::Failed | JobState::Superseded { .. } => false,
    }
}

/// True while a job's version is owed to the workspace server: not there yet, and
/// going there by itself — on its way, or failed and waiting for a retry. (A version
/// held in a conflict goes as part of the resolution; it is counted as a conflict.)
pub fn owed(state: &JobState) -> bool {
    match state {
        JobState::Pending | JobState::Dispatched | JobState::RetryWait { .. } | JobState::Acked { .. } | JobState::Failed => true,
        JobState::Finalized | JobState::Conflict { .. } | JobState::Superseded { .. } => false,
    }
}

/// True for a job that failed because its version cannot travel as it is (a control
/// character in its text, refused by the protocol on every server): it needs the
/// person's attention, but holds none of its project's later versions back, since
/// resending it would never succeed.
pub fn unsendable(job: &DeliveryJob) -> bool {
    job.state == JobState::Failed && job.last_error_code.as_deref() == Some(inkstone_sync_proto::CODE_CONTROL_CHARACTER)
}

/// For each unfinished job that cannot go yet, the earlier job of its project it waits
/// behind: one that failed or is held in a conflict. A project's pushes go in order,
/// each on the one before, so the later ones wait until the person retries or
/// resolves it; the status says so instead of showing them as merely pending.
pub fn held_behind(jobs: &[DeliveryJob]) -> BTreeMap<String, String> {
    let mut blocker_of_project: BTreeMap<&str, &str> = BTreeMap::new();
    let mut held = BTreeMap::new();
    for job in jobs {
        match job.state {
            JobState::Failed if unsendable(job) => {}
            JobState::Failed | JobState::Conflict { .. } => {
                blocker_of_project.entry(&job.project_id).or_insert(&job.id);
            }
            JobState::Pending | JobState::Dispatched | JobState::RetryWait { .. } => {
                if let Some(blocker) = blocker_of_project.get(job.project_id.as_str()) {
                    held.insert(job.id.clone(), (*blocker).to_owned());
                }
            }
            JobState::Acked { .. } | JobState::Finalized | JobState::Superseded { .. } => {}
        }
    }
    held
}

/// A draw in [0, 1) from a seeded xorshift: the backoff's jitter (core reads no
/// random source; the seed is the configuration's).
#[derive(Debug)]
pub struct Jitter(u64);

impl Jitter {
    pub fn new(seed: u64) -> Jitter {
        Jitter(seed | 1)
    }

    pub fn unit(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The engine's sync machinery: the transport, the cycle lock, the last cycle's
/// health and the delivery thread.
pub struct Runtime {
    transport: Mutex<Option<Arc<transport::Transport>>>,
    /// Held for a whole cycle; holds the jitter source.
    pub(crate) cycle: Mutex<Jitter>,
    pub(crate) health: Mutex<Health>,
    wake: Arc<(Mutex<bool>, Condvar)>,
    stop: AtomicBool,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
    /// Dispatched jobs of a previous process are turned back to pending once.
    resumed: AtomicBool,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("sync::Runtime").finish()
    }
}

const THREAD_NAME: &str = "inkstone-sync";

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Runtime {
    pub fn new(seed: u64) -> Runtime {
        Runtime {
            transport: Mutex::new(None),
            cycle: Mutex::new(Jitter::new(seed)),
            health: Mutex::new(Health::default()),
            wake: Arc::new((Mutex::new(false), Condvar::new())),
            stop: AtomicBool::new(false),
            thread: Mutex::new(None),
            resumed: AtomicBool::new(false),
        }
    }

    /// The transport, built on first use.
    pub fn transport(&self, kernel: &Kernel) -> Result<Arc<transport::Transport>, ApiError> {
        let mut slot = lock(&self.transport);
        if let Some(t) = slot.as_ref() {
            return Ok(Arc::clone(t));
        }
        let t = Arc::new(transport::Transport::new(kernel.config().sync.timeout).map_err(|e| ApiError::internal(format!("the sync client could not start: {e}")))?);
        *slot = Some(Arc::clone(&t));
        Ok(t)
    }

    pub fn health(&self) -> Health {
        lock(&self.health).clone()
    }

    /// Runs one cycle (pull, then push) under the cycle lock.
    pub fn run(&self, kernel: &Kernel, what: cycle::What) -> Result<CycleReport, ApiError> {
        let mut jitter = lock(&self.cycle);
        if !self.resumed.swap(true, Ordering::SeqCst) {
            cycle::resume_after_restart(kernel)?;
        }
        let transport = self.transport(kernel)?;
        let report = cycle::run(kernel, &transport, &mut jitter, what)?;
        remember_failure(kernel, &report)?;
        let mut health = lock(&self.health);
        health.cycled = true;
        health.offline = report.offline;
        health.last_error.clone_from(&report.error);
        health.last_error_code.clone_from(&report.error_code);
        if !report.offline && report.contacted {
            health.last_contact_at = Some(kernel.now());
        }
        Ok(report)
    }

    /// Wakes the delivery thread (a version was committed, the person resumed).
    pub fn wake(&self) {
        let (flag, condvar) = &*self.wake;
        *lock(flag) = true;
        condvar.notify_all();
    }

    /// Starts the delivery thread for `owner` (held weakly: the thread ends with the
    /// engine). `kernel_of` reaches the kernel and this runtime from the owner.
    pub fn start<T: Send + Sync + 'static>(owner: &Arc<T>, parts: fn(&T) -> (&Kernel, &Runtime)) {
        let (kernel, runtime) = parts(owner);
        let mut thread = lock(&runtime.thread);
        if thread.is_some() {
            return;
        }
        let wake = Arc::clone(&runtime.wake);
        // A committed version (its job) wakes the thread at once; the thread's own
        // job updates do not.
        kernel.store().subscribe(
            &[Kind::Outbox],
            Box::new(move |_| {
                if std::thread::current().name() == Some(THREAD_NAME) {
                    return true;
                }
                let (flag, condvar) = &*wake;
                *lock(flag) = true;
                condvar.notify_all();
                true
            }),
        );
        let weak: Weak<T> = Arc::downgrade(owner);
        let wake = Arc::clone(&runtime.wake);
        let poll = kernel.config().sync.poll;
        let spawned = std::thread::Builder::new().name(THREAD_NAME.to_owned()).spawn(move || loop {
            let wait = {
                let Some(owner) = weak.upgrade() else { return };
                let (kernel, runtime) = parts(&owner);
                if runtime.stop.load(Ordering::SeqCst) {
                    return;
                }
                let connected = matches!(connection(kernel), Ok(Some(_)));
                if connected && !matches!(is_paused(kernel), Ok(true)) {
                    let outcome = runtime.run(kernel, cycle::What::Both);
                    // The server acknowledged this client's versions: pull once more at
                    // once, so what colleagues pushed while they travelled arrives now,
                    // not at the next poll. (Idle cycles push nothing: no extra load.)
                    if matches!(&outcome, Ok(report) if report.pushed > 0 && !report.offline) {
                        if let Err(error) = runtime.run(kernel, cycle::What::Pull) {
                            tracing::warn!(code = ?error.code, "the pull after a push failed: {}", error.message);
                        }
                    }
                    match outcome {
                        Ok(report) if report.offline || report.waiting > 0 => poll.min(Duration::from_millis(500)),
                        Ok(_) => poll,
                        Err(error) => {
                            tracing::warn!(code = ?error.code, "sync cycle failed: {}", error.message);
                            poll
                        }
                    }
                } else {
                    poll
                }
            };
            let (flag, condvar) = &*wake;
            let mut woken = lock(flag);
            if !*woken {
                woken = condvar.wait_timeout(woken, wait).map(|(guard, _)| guard).unwrap_or_else(|poisoned| poisoned.into_inner().0);
            }
            *woken = false;
        });
        match spawned {
            Ok(handle) => *thread = Some(handle),
            Err(error) => tracing::error!("the sync thread could not start: {error}"),
        }
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        self.wake();
        if let Some(handle) = lock(&self.thread).take() {
            // The thread may hold the last reference to its engine and drop it itself.
            if handle.thread().id() != std::thread::current().id() {
                let _ = handle.join();
            }
        }
    }
}

/// Checks and normalises a server URL: http or https, a host, no credentials, query
/// or fragment; no trailing slash. Errors: VALIDATION on `serverUrl`.
pub fn normalize_server_url(input: &str) -> Result<String, ApiError> {
    let url = input.trim().trim_end_matches('/');
    let bad = |why: &str| {
        ApiError::validation("serverUrl", format!("The server URL is not usable: {why}."))
            .hint("server_url_form", "Give it as https://host[:port], as the server's operator printed it.")
    };
    let Some((scheme, rest)) = url.split_once("://") else { return Err(bad("it needs http:// or https://")) };
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return Err(bad("the scheme must be http or https"));
    }
    if rest.is_empty() || rest.starts_with('/') || rest.starts_with(':') || rest.contains(['@', '?', '#', ' ']) || rest.chars().any(char::is_control) || url.len() > 500 {
        return Err(bad("it must be a host (and port), without credentials, query or spaces"));
    }
    Ok(format!("{scheme}://{rest}"))
}

/// What `connect` needs.
#[derive(Debug)]
pub struct Connect<'a> {
    pub server_url: &'a str,
    /// None: the process's `INKSTONE_WORKSPACE_TOKEN`.
    pub token: Option<&'a ApiKey>,
    /// The person confirmed sending the token unencrypted to another machine.
    pub allow_plain_http: bool,
    /// Also send the versions of every project that never reached a server
    /// ([`local_only`]), as if each had been saved after connecting.
    pub upload_existing: bool,
    /// The person's name on their versions, comments and activity (the workspace's
    /// display name). None keeps a name the person chose; a name never chosen (the
    /// first-run default) becomes the member's name on the server.
    pub display_name: Option<&'a str>,
}

/// The projects that have never been on a workspace server — no link to a server's
/// history and no delivery job — with their versions that would be sent (accepted ones:
/// no autosnapshot, nothing pulled), oldest first. Connecting with `upload_existing`
/// sends them; the status counts them.
pub fn local_only(kernel: &Kernel) -> Result<Vec<(String, Vec<crate::model::Version>)>, ApiError> {
    let store = kernel.store();
    let linked: std::collections::BTreeSet<String> = store.scan::<ProjectLink>(b"")?.into_iter().map(|l| l.project_id).collect();
    let queued: std::collections::BTreeSet<String> = jobs(kernel)?.into_iter().map(|j| j.project_id).collect();
    let mut out = Vec::new();
    // Summaries, not projects: the status asks on every poll, and only ids and heads
    // are needed here, not every project's text.
    for project in store.scan::<crate::model::ProjectSummary>(b"")? {
        if project.head == 0 || linked.contains(&project.id) || queued.contains(&project.id) {
            continue;
        }
        let versions: Vec<crate::model::Version> = crate::project::versions::list(store, &project.id)?.into_iter().filter(|v| crate::outbox::delivered(&v.origin)).collect();
        if !versions.is_empty() {
            out.push((project.id, versions));
        }
    }
    Ok(out)
}

/// Links this data dir to a workspace server: checks the token with the server, keeps
/// it in the keychain (sled gets its fingerprint) and marks the workspace linked, so
/// every later version has a delivery job.
///
/// A reconnect to the same workspace (a new token after the old one was refused)
/// sends the failed jobs again.
///
/// Errors: VALIDATION (the URL; a plain http:// URL to another machine without
/// `allow_plain_http`; the token's form; `sync.not_a_server` when something other
/// than a workspace server answers); OFFLINE when the server cannot be reached or
/// answer (`sync.unreachable`, `sync.server_unavailable`); PERMISSION_DENIED when it
/// refuses the token (`sync.token_refused`); CONFLICT when already linked to another
/// workspace; KEYCHAIN_UNAVAILABLE.
pub fn connect(kernel: &Kernel, runtime: &Runtime, request: Connect<'_>) -> Result<Connection, ApiError> {
    let server_url = normalize_server_url(request.server_url)?;
    let env_token = kernel.config().env_workspace_token.as_ref();
    let Some(given) = request.token.or(env_token) else {
        return Err(ApiError::validation("token", "Connecting needs the invite token.")
            .hint("use_env_token", "Give the invite token, or set INKSTONE_WORKSPACE_TOKEN for the process (it is never saved)."));
    };
    let raw = given.expose().trim();
    let display_name = request.display_name.map(|name| crate::error::required_text("displayName", name, 100)).transpose()?;
    if raw.is_empty() || raw.chars().count() > 4096 || raw.chars().any(char::is_control) {
        return Err(ApiError::validation("token", "The invite token must be 1–4096 characters without line breaks."));
    }
    if crate::llm::profile::key_would_travel_in_clear(&server_url) && !request.allow_plain_http {
        return Err(ApiError::validation("serverUrl", "Not connected: this plain http:// URL would send your token unencrypted to another machine.")
            .hint("plain_http", "Use https:// for a server on another machine.")
            .hint("allow_plain_http", "To connect anyway (a trusted local network), confirm with allowPlainHttp."));
    }
    let token = ApiKey::new(raw);
    let transport = runtime.transport(kernel)?;
    let info = transport.workspace(&server_url, &token).map_err(server_failed)?;
    let _guard = kernel.write_lock();
    let mut workspace = kernel.workspace()?;
    let previous = members::previous(kernel)?;
    let mut existing = connection(kernel)?;
    let mut batch = Batch::new();
    if existing.is_none() {
        // Connected before and disconnected: the same workspace continues where it
        // stopped; another one starts afresh, but never with versions still owed to
        // the first.
        if let Some(previous) = previous {
            if previous.connection.remote_workspace_id == info.id {
                existing = Some(previous.connection);
            } else {
                let owed = jobs(kernel)?.iter().filter(|j| owed(&j.state)).count();
                if owed > 0 {
                    return Err(ApiError::new(
                        ErrorCode::Conflict,
                        format!(
                            "{owed} versions of this data folder have not reached the workspace \"{}\" yet; a token of another workspace cannot take them.",
                            previous.connection.remote_workspace_name
                        ),
                    )
                    .hint_with(
                        "reconnect_previous",
                        format!("Connect to {} again and resume sync to deliver them first.", previous.connection.server_url),
                        &[("url", &previous.connection.server_url)],
                    )
                    .hint("other_data_dir", "Use another data folder for another team workspace."));
                }
                for link in kernel.store().scan::<ProjectLink>(b"")? {
                    batch.delete::<ProjectLink>(link.key());
                }
            }
            batch.delete::<members::PreviousConnection>(members::META_PREVIOUS.to_vec());
        }
    }
    if let Some(existing) = &existing {
        if existing.remote_workspace_id != info.id {
            return Err(ApiError::new(
                ErrorCode::Conflict,
                format!("This data folder is linked to the workspace \"{}\"; a token of another workspace cannot replace it.", existing.remote_workspace_name),
            )
            .hint("other_data_dir", "Use another data folder for another team workspace."));
        }
    }
    // The process's own token stays in the process; any other goes to the keychain.
    if env_token.is_none_or(|env| env.expose().trim() != token.expose()) {
        kernel.config().secrets.set(&token_account(&workspace.id), &token).map_err(crate::llm::keychain::workspace_token_error)?;
    }
    let connection = Connection {
        server_url: server_url.clone(),
        remote_workspace_id: info.id,
        remote_workspace_name: info.name,
        member_id: info.me.id,
        member_name: info.me.name,
        role: info.me.role.as_str().to_owned(),
        token_fingerprint: token.fingerprint(),
        cursor: existing.as_ref().map_or(0, |c| c.cursor),
        connected_at: kernel.now(),
        server_takes_origin: info.features.iter().any(|f| f == inkstone_sync_proto::FEATURE_VERSION_ORIGIN),
    };
    // A reconnect (often with a new token, after the old one was refused) sends what
    // failed again: the same pushes, under the same keys.
    let policy = kernel.config().sync.retry;
    for job in jobs(kernel)? {
        if job.workspace_id == workspace.id && job.state == JobState::Failed {
            batch.put(&retried(&job, kernel, &policy)?)?;
        }
    }
    workspace.server_url = Some(server_url);
    // Who the person is to colleagues: the name they give, else (when they never
    // chose one) the name the workspace knows them by.
    match display_name {
        Some(name) => workspace.display_name = name,
        None if workspace.display_name == kernel.config().default_display_name => workspace.display_name.clone_from(&connection.member_name),
        None => {}
    }
    if request.upload_existing {
        for (_, versions) in local_only(kernel)? {
            for version in &versions {
                crate::outbox::stage_delivery(&mut batch, &workspace, version, kernel.new_id("job"))?;
            }
        }
    }
    batch.put(&workspace)?.put(&connection)?;
    batch.delete::<LastFailure>(META_LAST_FAILURE.to_vec());
    kernel.store().apply(batch, Durability::Durable)?;
    // The last cycle's failure was the old connection's; the server just answered.
    *lock(&runtime.health) = Health { cycled: true, last_contact_at: Some(kernel.now()), ..Health::default() };
    runtime.wake();
    Ok(connection)
}

fn retried(job: &DeliveryJob, kernel: &Kernel, policy: &crate::outbox::RetryPolicy) -> Result<DeliveryJob, ApiError> {
    crate::outbox::advance(job, &crate::outbox::Event::Retry, kernel.now(), policy, 0.0).map_err(|e| ApiError::internal(format!("delivery job {}: {e}", job.id)))
}

/// Sends failed jobs again: `job_id`'s, or (none) every failed job of this
/// workspace. A project's pushes go in order, so retrying one job also retries the
/// failed jobs of its project before it; and a push moves as a whole, so the jobs it
/// carries go with it. Each is the same push as before, under the same dedupe key.
/// Returns how many jobs were requeued (0 when nothing had failed).
///
/// Errors: CONFLICT when not connected (`sync.not_connected`), or when `job_id`'s job
/// has not failed (`sync.not_failed`); VALIDATION for a malformed id; NOT_FOUND for an
/// unknown job. A refusal changes nothing.
pub fn retry(kernel: &Kernel, runtime: &Runtime, job_id: Option<&str>) -> Result<u32, ApiError> {
    let _guard = kernel.write_lock();
    if connection(kernel)?.is_none() {
        return Err(cycle::not_connected());
    }
    let workspace_id = kernel.workspace()?.id;
    let all = jobs(kernel)?;
    let chosen: Vec<&DeliveryJob> = match job_id {
        None => all.iter().filter(|j| j.workspace_id == workspace_id && j.state == JobState::Failed).collect(),
        Some(job_id) => {
            if job_id.is_empty() || job_id.len() > 100 {
                return Err(ApiError::validation("jobId", "A job id is 1–100 characters, as the sync status lists it."));
            }
            let job = all.iter().find(|j| j.id == job_id).ok_or_else(|| ApiError::not_found("delivery job", job_id).action("list_jobs", &[]))?;
            if job.state != JobState::Failed {
                return Err(ApiError::new(ErrorCode::Conflict, format!("Delivery job {job_id} has not failed (it is {}); only a failed job is retried.", job.state.name()))
                    .problem("sync.not_failed", &[])
                    .details(serde_json::json!({"jobId": job_id, "state": job.state.name()})));
            }
            // Job ids sort by creation: the project's failed jobs up to this one.
            all.iter().filter(|j| j.project_id == job.project_id && j.state == JobState::Failed && j.id <= job.id).collect()
        }
    };
    let mut requeue: std::collections::BTreeSet<&str> = chosen.iter().map(|j| j.id.as_str()).collect();
    for job in &chosen {
        requeue.extend(job.batch.iter().map(String::as_str));
    }
    let policy = kernel.config().sync.retry;
    let mut batch = Batch::new();
    let mut n_requeued = 0;
    for job in all.iter().filter(|j| requeue.contains(j.id.as_str()) && j.state == JobState::Failed) {
        batch.put(&retried(job, kernel, &policy)?)?;
        n_requeued += 1;
    }
    if n_requeued > 0 {
        batch.delete::<LastFailure>(META_LAST_FAILURE.to_vec());
        kernel.store().apply(batch, Durability::Durable)?;
        let mut health = lock(&runtime.health);
        health.last_error = None;
        health.last_error_code = None;
    }
    runtime.wake();
    Ok(n_requeued)
}

/// Why the workspace server gave no usable answer (to `connect`, or to a membership
/// request), in the API's terms: each cause its own code and wording; what the server
/// or the parser said goes in `details`, never in the headline.
pub(crate) fn server_failed(failure: transport::Failure) -> ApiError {
    use transport::Failure;
    let details = |failure: &Failure| match failure {
        Failure::Network(detail) => serde_json::json!({"reason": detail}),
        Failure::Status { status, code, message, .. } => serde_json::json!({"status": status, "code": code, "reason": message}),
    };
    match &failure {
        Failure::Network(detail) => ApiError::new(ErrorCode::Offline, format!("The workspace server could not be reached ({detail})."))
            .problem("sync.unreachable", &[])
            .hint("check_server", "Check the URL and that the server is running, then try again.")
            .details(details(&failure)),
        Failure::Status { status: 401 | 403, .. } => ApiError::new(ErrorCode::PermissionDenied, "The workspace server refused this token.")
            .problem("sync.token_refused", &[])
            .hint("new_invite", "Ask a workspace owner for a new invite token.")
            .details(details(&failure)),
        // Busy or failing (also a proxy's error page in front of a server that is down).
        Failure::Status { status: 429 | 500..=599, .. } => ApiError::new(ErrorCode::Offline, "The workspace server cannot answer right now.")
            .problem("sync.server_unavailable", &[])
            .hint("server_retry_later", "Try again in a moment; if it keeps failing, tell the server's operator.")
            .details(details(&failure)),
        // Something answered, but not in the protocol: another web server on that
        // address, or (JSON of another shape) another service or version.
        Failure::Status { code, .. } if code == transport::NOT_THE_PROTOCOL || code == transport::BAD_ANSWER => {
            let mut error = ApiError::new(ErrorCode::Validation, "The address answers, but not as an Inkstone workspace server.")
                .problem("sync.not_a_server", &[])
                .hint("check_server_url", "Check the URL and the port: they should be the workspace server's, as its operator gave them.");
            if code == transport::BAD_ANSWER {
                error = error.hint("match_versions", "If it is the workspace server, update Inkstone and the server to matching versions.");
            }
            let mut details = details(&failure);
            details["field"] = "serverUrl".into();
            error.details(details)
        }
        Failure::Status { .. } => ApiError::new(ErrorCode::Conflict, "The workspace server refused the request; nothing was changed.")
            .problem("sync.server_refused", &[])
            .hint("match_versions", "If it is the workspace server, update Inkstone and the server to matching versions.")
            .details(details(&failure)),
    }
}

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

/// The state the sidebar shows, most pressing first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum SyncState {
    NotConnected,
    Paused,
    Conflict,
    Offline,
    Failed,
    Pending,
    Synced,
}

/// Decides the overall state. Pure.
pub fn overall(connected: bool, paused: bool, open_conflicts: usize, failed: u32, pending: u32, offline: bool) -> SyncState {
    if !connected {
        SyncState::NotConnected
    } else if paused {
        SyncState::Paused
    } else if open_conflicts > 0 {
        SyncState::Conflict
    } else if offline {
        SyncState::Offline
    } else if failed > 0 {
        SyncState::Failed
    } else if pending > 0 {
        SyncState::Pending
    } else {
        SyncState::Synced
    }
}
