//! The engine's sync machinery: the delivery thread, the cycle lock, the last
//! cycle's health, and [`Changes`], which wakes whoever watches the status.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::Duration;

use crate::error::ApiError;
use crate::kernel::Kernel;
use crate::model::Timestamp;
use crate::store::{Batch, Durability, Kind};

use super::*;

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
    /// The ticket ([`Runtime::ticket`]) of what set this health: a cycle that took an
    /// older ticket (it began before a reconnect, a retry or a newer cycle) does not
    /// overwrite it.
    pub as_of: u64,
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

/// What a watcher of the sync status learns when it waits (see [`Changes::wait`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waited {
    /// What the status shows may have changed: the count it reached.
    Moved(u64),
    /// Nothing moved for the whole wait.
    Quiet,
    /// The engine is closing: every watcher ends.
    Closed,
}

/// A count moved whenever what the sync status shows may have changed: a commit that
/// touched a kind the status reads (the outboxes, the sync records, versions, the
/// connection and pause in `Meta`), or a cycle that changed the in-memory health. A
/// watcher waits on it instead of reading the status again and again; the count only
/// says "read again", the status itself is read by the watcher.
#[derive(Debug, Default)]
pub struct Changes {
    state: Mutex<(u64, bool)>,
    moved: Condvar,
    /// Moved by every commit of a project or a version record, whoever made it (see
    /// [`Runtime::local_changes`]).
    local: AtomicU64,
    /// The project record the last such commit wrote: its id and revision (see
    /// [`Runtime::last_local_change`]).
    last_local: Mutex<Option<(String, u64)>>,
}

/// The kinds whose commits may change the status (`api::sync::status_of` reads them;
/// projects for its local-change marker).
const STATUS_KINDS: &[Kind] = &[Kind::Meta, Kind::Outbox, Kind::PerfOutbox, Kind::SyncProjects, Kind::SyncConflicts, Kind::Versions, Kind::Projects];

impl Changes {
    /// The count now.
    pub fn count(&self) -> u64 {
        lock(&self.state).0
    }

    /// Moves the count and wakes every waiter.
    pub fn bump(&self) {
        lock(&self.state).0 += 1;
        self.moved.notify_all();
    }

    /// Ends every wait, now and later (the engine is closing).
    pub fn close(&self) {
        lock(&self.state).1 = true;
        self.moved.notify_all();
    }

    /// Waits until the count passes `seen`, or `at_most` passes, or the engine closes.
    pub fn wait(&self, seen: u64, at_most: Duration) -> Waited {
        let guard = lock(&self.state);
        let (guard, _) = self.moved.wait_timeout_while(guard, at_most, |(count, closed)| *count == seen && !*closed).unwrap_or_else(|poisoned| poisoned.into_inner());
        match *guard {
            (_, true) => Waited::Closed,
            (count, false) if count != seen => Waited::Moved(count),
            _ => Waited::Quiet,
        }
    }
}

/// A part of every cycle that lives above `sync` (the performance data's push and
/// pull), run after the versions' halves under the cycle lock. The engine hands it over.
pub type CyclePart = fn(&Kernel, &transport::Transport, cycle::What, &mut CycleReport) -> Result<(), ApiError>;

/// The engine's sync machinery: the transport, the cycle lock, the last cycle's
/// health and the delivery thread.
pub struct Runtime {
    part: Option<CyclePart>,
    transport: Mutex<Option<Arc<transport::Transport>>>,
    /// Held for a whole cycle; holds the jitter source.
    pub(crate) cycle: Mutex<Jitter>,
    pub(crate) health: Mutex<Health>,
    wake: Arc<(Mutex<bool>, Condvar)>,
    stop: AtomicBool,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
    /// Dispatched jobs of a previous process are turned back to pending once.
    resumed: AtomicBool,
    changes: Arc<Changes>,
    /// The store tells `changes` of its commits (subscribed on the first watch).
    changes_hooked: AtomicBool,
    /// The last ticket given out (see [`Runtime::ticket`]).
    tickets: AtomicU64,
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
            part: None,
            transport: Mutex::new(None),
            cycle: Mutex::new(Jitter::new(seed)),
            health: Mutex::new(Health::default()),
            wake: Arc::new((Mutex::new(false), Condvar::new())),
            stop: AtomicBool::new(false),
            thread: Mutex::new(None),
            resumed: AtomicBool::new(false),
            changes: Arc::new(Changes::default()),
            changes_hooked: AtomicBool::new(false),
            tickets: AtomicU64::new(0),
        }
    }

    /// What wakes a watcher of the status. The first call subscribes it to the store's
    /// commits of the kinds the status reads (held weakly: the subscription ends with
    /// the runtime), so an engine nobody watches pays nothing.
    pub fn changes(&self, kernel: &Kernel) -> Arc<Changes> {
        if !self.changes_hooked.swap(true, Ordering::SeqCst) {
            let weak = Arc::downgrade(&self.changes);
            kernel.store().subscribe(
                STATUS_KINDS,
                Box::new(move |committed| match weak.upgrade() {
                    Some(changes) => {
                        if committed.iter().any(|change| matches!(change.kind, Kind::Projects | Kind::Versions)) {
                            // The summary, not the project: it has no text to decode on
                            // the writer's thread, and every project write writes it.
                            let project = committed.iter().rev().find_map(|change| change.record::<crate::model::ProjectSummary>().and_then(Result::ok));
                            if let Some(project) = project {
                                *lock(&changes.last_local) = Some((project.id, project.revision));
                            }
                            changes.local.fetch_add(1, Ordering::SeqCst);
                        }
                        changes.bump();
                        true
                    }
                    None => false,
                }),
            );
        }
        Arc::clone(&self.changes)
    }

    /// The count of [`Changes`] now, without subscribing it to the store (a status
    /// read takes it as how far it is).
    pub fn change_count(&self) -> u64 {
        self.changes.count()
    }

    /// The local-change marker: moved by every commit of a project or a version record
    /// in this process (a working copy saved, a version made, a project created or
    /// archived, by any window, the API or sync), counted from the first watch on. A
    /// window that sees it move in a pushed status reads its projects again: another
    /// window's save reaches it as a push, not at a timer.
    pub fn local_changes(&self) -> u64 {
        self.changes.local.load(Ordering::SeqCst)
    }

    /// The project record the last local change wrote, as its id and working-copy
    /// revision (None before one). A window that just saved that project at that
    /// revision knows the pushed change is its own, and reads nothing; any other value
    /// may hide another window's save, and is read.
    pub fn last_local_change(&self) -> Option<(String, u64)> {
        lock(&self.changes.last_local).clone()
    }

    /// Ends every watch of the status (a server shutting down lets its streams go).
    pub fn close_watches(&self) {
        self.changes.close();
    }

    /// This runtime with `part` run at the end of every cycle.
    pub fn with_part(mut self, part: CyclePart) -> Runtime {
        self.part = Some(part);
        self
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

    /// A number larger than every one given before: what changes the health takes
    /// one when it begins, so an update is applied only over an older one.
    pub(crate) fn ticket(&self) -> u64 {
        self.tickets.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// Sets the health outside a cycle (a connect, a retry, a disconnect): `change`
    /// runs on it under a new ticket, so no cycle begun before overwrites it; the
    /// watchers hear of it.
    pub(crate) fn set_health(&self, change: impl FnOnce(&mut Health)) {
        let mut health = lock(&self.health);
        change(&mut health);
        health.as_of = self.ticket();
        drop(health);
        self.changes.bump();
    }

    pub fn health(&self) -> Health {
        lock(&self.health).clone()
    }

    /// Runs one cycle (pull, then push) under the cycle lock. Its health replaces the
    /// shown one only if nothing newer set that since the cycle began: a cycle begun
    /// against the old connection or before a retry does not undo them.
    pub fn run(&self, kernel: &Kernel, what: cycle::What) -> Result<CycleReport, ApiError> {
        let mut jitter = lock(&self.cycle);
        let started = self.ticket();
        if !self.resumed.swap(true, Ordering::SeqCst) {
            cycle::resume_after_restart(kernel)?;
        }
        let transport = self.transport(kernel)?;
        let mut report = cycle::run(kernel, &transport, &mut jitter, what)?;
        if let Some(part) = self.part {
            part(kernel, &transport, what, &mut report)?;
        }
        self.apply_health(kernel, started, &report)?;
        Ok(report)
    }

    /// The health a cycle that began at ticket `started` reports, unless something
    /// newer was applied meanwhile (then the cycle's report is stale and ignored, its
    /// failure not stored either).
    fn apply_health(&self, kernel: &Kernel, started: u64, report: &CycleReport) -> Result<(), ApiError> {
        if lock(&self.health).as_of > started {
            return Ok(());
        }
        remember_failure(kernel, report)?;
        let mut health = lock(&self.health);
        if health.as_of > started {
            return Ok(());
        }
        let before = health.clone();
        health.cycled = true;
        health.offline = report.offline;
        health.last_error.clone_from(&report.error);
        health.last_error_code.clone_from(&report.error_code);
        if !report.offline && report.contacted {
            health.last_contact_at = Some(kernel.now());
        }
        health.as_of = started;
        let moved = (before.cycled, before.offline, &before.last_error, &before.last_error_code, before.last_contact_at)
            != (health.cycled, health.offline, &health.last_error, &health.last_error_code, health.last_contact_at);
        drop(health);
        // Going offline, coming back and reaching the server change the status without
        // a commit: the watchers hear of it here.
        if moved {
            self.changes.bump();
        }
        Ok(())
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
            &[Kind::Outbox, Kind::PerfOutbox],
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
        self.changes.close();
        self.wake();
        if let Some(handle) = lock(&self.thread).take() {
            // The thread may hold the last reference to its engine and drop it itself.
            if handle.thread().id() != std::thread::current().id() {
                let _ = handle.join();
            }
        }
    }
}
