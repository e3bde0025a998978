//! The sessions and runs this process holds: each log's live state (its owner and
//! scope, the fold of its log, whether a turn runs, the interrupt), the claim that lets
//! one turn run at a time on a log, and the registry that loads a log on first use
//! (repairing a session's after a crash) and answers what the panel reads from it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use super::{replay, session_events, timeline, turn, Event, Harness, Owner, QueuedMessage, SessionState};
use crate::error::{ApiError, ErrorCode};
use crate::llm::Cancel;

/// One log as this process holds it: its owner and scope ids (which every appended
/// event carries), its state (the fold of its log), whether a turn is running, and the
/// interrupt signal.
pub struct Live {
    pub owner: Owner,
    /// Shared by every event this process appends (events hold a reference, not a copy).
    pub workspace_id: Arc<str>,
    pub project_id: Arc<str>,
    pub state: Mutex<SessionState>,
    /// Held while deciding to start a turn or queue a message; true while a turn runs
    /// (owned by a [`TurnClaim`]).
    running: Mutex<bool>,
    pub interrupt: AtomicBool,
    pub cancel: Mutex<Cancel>,
}

impl Live {
    pub(super) fn new(owner: Owner, workspace_id: String, project_id: String, state: SessionState) -> Live {
        Live {
            owner,
            workspace_id: workspace_id.into(),
            project_id: project_id.into(),
            state: Mutex::new(state),
            running: Mutex::new(false),
            interrupt: AtomicBool::new(false),
            cancel: Mutex::new(Cancel::new()),
        }
    }
    pub(super) fn lock_state(&self) -> MutexGuard<'_, SessionState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
    fn lock_running(&self) -> MutexGuard<'_, bool> {
        self.running.lock().unwrap_or_else(|p| p.into_inner())
    }
    pub fn interrupted(&self) -> bool {
        self.interrupt.load(Ordering::SeqCst)
    }
    /// True while a turn runs.
    pub fn is_running(&self) -> bool {
        *self.lock_running()
    }
}

/// The right to run turns on one log: taken when a turn starts, released when it is
/// dropped, so every path out of a turn (an answer, an error, a panic unwinding)
/// releases it.
pub struct TurnClaim<'a> {
    live: &'a Live,
    held: bool,
}

impl<'a> TurnClaim<'a> {
    /// Takes the claim. Errors: CONFLICT when a turn runs.
    pub fn take(live: &'a Live) -> Result<TurnClaim<'a>, ApiError> {
        let mut running = live.lock_running();
        if *running {
            return Err(ApiError::new(ErrorCode::Conflict, "A turn of this session is running.")
                .problem("session.running", &[])
                .hint("wait", "Wait for the turn to end or interrupt it."));
        }
        *running = true;
        Ok(TurnClaim { live, held: true })
    }

    /// Takes the claim, or, when a turn runs, calls `busy` while still holding the
    /// running lock (so a message queued there cannot miss the running turn's end).
    pub(crate) fn take_or<T>(live: &'a Live, busy: impl FnOnce() -> T) -> Result<TurnClaim<'a>, T> {
        let mut running = live.lock_running();
        if *running {
            return Err(busy());
        }
        *running = true;
        Ok(TurnClaim { live, held: true })
    }

    /// The next queued message, or, when none waits, the claim released. Checked and
    /// released under the running lock: a submit either queued before the check (and
    /// is delivered) or finds no turn running.
    pub(crate) fn next_or_release(&mut self) -> Option<QueuedMessage> {
        let mut running = self.live.lock_running();
        let next = self.live.lock_state().queued.first().cloned();
        if next.is_none() {
            *running = false;
            self.held = false;
        }
        next
    }
}

impl Drop for TurnClaim<'_> {
    fn drop(&mut self) {
        if self.held {
            *self.live.lock_running() = false;
        }
    }
}

impl<'a> Harness<'a> {
    /// True while a turn of one of the project's sessions runs in this process.
    pub fn project_has_running_turn(&self, project_id: &str) -> bool {
        let logs = self.harness().logs.lock().unwrap_or_else(|p| p.into_inner());
        logs.values().any(|live| matches!(live.owner, Owner::Session(_)) && &*live.project_id == project_id && live.is_running())
    }

    /// The live session, loading and (after a crash) repairing its log on first use.
    pub fn live_session(&self, session_id: &str) -> Result<Arc<Live>, ApiError> {
        let session = self.load_session(session_id)?;
        let mut logs = self.harness().logs.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(live) = logs.get(session_id) {
            return Ok(Arc::clone(live));
        }
        let events = self.session_events(session_id)?;
        let state = replay(events.iter()).state;
        let live = Arc::new(Live::new(Owner::Session(session.id.clone()), self.workspace()?.id, session.project_id.clone(), state));
        logs.insert(session_id.to_owned(), Arc::clone(&live));
        drop(logs);
        turn::recover(*self, &live)?;
        Ok(live)
    }

    /// Asks the running turn of a session to stop. `false` when none runs here.
    pub fn interrupt_session(&self, session_id: &str) -> Result<bool, ApiError> {
        let live = self.live_session(session_id)?;
        let running = live.is_running();
        if running {
            live.interrupt.store(true, Ordering::SeqCst);
            live.cancel.lock().unwrap_or_else(|p| p.into_inner()).cancel();
        }
        Ok(running)
    }

    /// The live log of optimization run `run_id` on `project_id`: loaded (its state
    /// the fold of its log) on first use in this process.
    pub(crate) fn live_run(&self, run_id: &str, project_id: &str) -> Result<Arc<Live>, ApiError> {
        let mut logs = self.harness().logs.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(live) = logs.get(run_id) {
            return Ok(Arc::clone(live));
        }
        let events = session_events(self.kernel, run_id)?;
        let state = replay(events.iter()).state;
        let live = Arc::new(Live::new(Owner::Run(run_id.to_owned()), self.workspace()?.id, project_id.to_owned(), state));
        logs.insert(run_id.to_owned(), Arc::clone(&live));
        Ok(live)
    }

    /// The live log of `owner_id` if this process holds it.
    pub(crate) fn live_if_loaded(&self, owner_id: &str) -> Option<Arc<Live>> {
        self.harness().logs.lock().unwrap_or_else(|p| p.into_inner()).get(owner_id).cloned()
    }

    /// True while a turn of the session runs in this process (its claim is held: from
    /// before its start is logged until after its end is).
    pub fn turn_running(&self, session_id: &str) -> Result<bool, ApiError> {
        Ok(self.live_session(session_id)?.is_running())
    }

    /// Reads a session's timeline (the panel's fold, kept in its live state) under its
    /// lock, copying only what `read` picks.
    pub fn with_timeline<T>(&self, session_id: &str, read: impl FnOnce(&timeline::Timeline) -> T) -> Result<T, ApiError> {
        let live = self.live_session(session_id)?;
        let state = live.lock_state();
        Ok(read(&state.timeline))
    }

    /// The timeline patch `event` (just logged, or live) makes for the reader of one
    /// stream, if this process holds the session.
    pub fn timeline_patch(&self, session_id: &str, feed: &mut timeline::LiveFeed, event: &Event) -> Option<timeline::TimelinePatch> {
        let live = self.live_if_loaded(session_id)?;
        let state = live.lock_state();
        feed.patch(&state.timeline, event)
    }

    pub fn session_state(&self, session_id: &str) -> Result<(SessionState, bool), ApiError> {
        let live = self.live_session(session_id)?;
        let running = live.is_running();
        let state = live.lock_state().clone();
        Ok((state, running))
    }

    /// Reads the session's state in place, with whether a turn is running: for a view
    /// of a few of its fields, without copying its conversation and panel.
    pub fn with_session_state<T>(&self, session_id: &str, read: impl FnOnce(&SessionState, bool) -> T) -> Result<T, ApiError> {
        let live = self.live_session(session_id)?;
        let running = live.is_running();
        let state = live.lock_state();
        Ok(read(&state, running))
    }
}
