//! The two generic commands. They forward to `inkstone_api::api` and decide nothing:
//! every decision lives in core, so the desktop, the CLI and `serve` behave alike.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use inkstone_api::api::StreamEvent;
use inkstone_api::{ApiError, Engine, ErrorCode};
use serde_json::Value;
use tauri::ipc::Channel;

type Reopen = Box<dyn Fn() -> Result<Arc<Engine>, ApiError> + Send + Sync>;

enum Slot {
    /// Being opened on a thread of its own: calls wait for it.
    Opening,
    Done(Result<Arc<Engine>, ApiError>),
}

struct Shared {
    slot: Mutex<Slot>,
    settled: Condvar,
    reopen: Mutex<Option<Reopen>>,
}

/// The engine, or why it could not open (another instance holds the data folder, a
/// damaged store, ...). Every call then returns that error, so the UI can explain it.
/// A folder that was only locked (the CLI serving it) is tried again on the next call,
/// so the window's Retry works once the other process has let go.
///
/// At launch the engine opens off the main thread ([`EngineState::open_in_background`])
/// while the window is made and the page starts: a call that arrives before it is open
/// waits for it (and then gets the engine or the error it met), it never fails for
/// being early. Clones share one engine.
#[derive(Clone)]
pub struct EngineState(Arc<Shared>);

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl EngineState {
    fn with(slot: Slot, reopen: Option<Reopen>) -> Self {
        Self(Arc::new(Shared { slot: Mutex::new(slot), settled: Condvar::new(), reopen: Mutex::new(reopen) }))
    }

    /// A fixed outcome (no second try).
    pub fn new(result: Result<Arc<Engine>, ApiError>) -> Self {
        Self::with(Slot::Done(result), None)
    }

    /// An outcome that `reopen` replaces on the next call while it is `STORE_LOCKED`.
    pub fn reopening(result: Result<Arc<Engine>, ApiError>, reopen: impl Fn() -> Result<Arc<Engine>, ApiError> + Send + Sync + 'static) -> Self {
        Self::with(Slot::Done(result), Some(Box::new(reopen)))
    }

    /// Not open yet: calls wait until [`EngineState::settle`] gives the outcome.
    pub fn pending() -> Self {
        Self::with(Slot::Opening, None)
    }

    /// A pending state, settled by `open` (an [`crate::open_engine`] and the like) run on
    /// a thread of its own. An opening that panics settles as an internal error, so no
    /// call waits for ever.
    pub fn open_in_background(open: impl FnOnce() -> EngineState + Send + 'static) -> Self {
        let state = Self::pending();
        let settling = state.clone();
        let spawned = std::thread::Builder::new().name("engine-open".into()).spawn(move || {
            let opened = std::panic::catch_unwind(std::panic::AssertUnwindSafe(open))
                .unwrap_or_else(|_| EngineState::new(Err(ApiError::internal("opening the data folder stopped unexpectedly"))));
            settling.settle(opened);
        });
        if let Err(error) = spawned {
            state.settle(EngineState::new(Err(ApiError::internal(format!("could not start opening the data folder: {error}")))));
        }
        state
    }

    /// Gives a pending state the outcome (and the second try) of `opened`, and wakes the
    /// calls waiting for it.
    pub fn settle(&self, opened: EngineState) {
        let outcome = std::mem::replace(&mut *lock(&opened.0.slot), Slot::Opening);
        let reopen = lock(&opened.0.reopen).take();
        *lock(&self.0.reopen) = reopen;
        *lock(&self.0.slot) = outcome;
        self.0.settled.notify_all();
    }

    fn settled(&self) -> MutexGuard<'_, Slot> {
        let mut slot = lock(&self.0.slot);
        while matches!(*slot, Slot::Opening) {
            slot = self.0.settled.wait(slot).unwrap_or_else(|poisoned| poisoned.into_inner());
        }
        slot
    }

    /// The engine now: waits while it is being opened, and tries a locked folder again
    /// first.
    pub fn engine(&self) -> Result<Arc<Engine>, ApiError> {
        let mut slot = self.settled();
        if let Slot::Done(Err(error)) = &*slot {
            if error.code == ErrorCode::StoreLocked {
                if let Some(reopen) = &*lock(&self.0.reopen) {
                    *slot = Slot::Done(reopen());
                }
            }
        }
        match &*slot {
            Slot::Done(result) => result.clone(),
            Slot::Opening => Err(ApiError::internal("the data folder is still being opened")),
        }
    }

    /// The engine if it is open, without waiting or trying again.
    pub fn opened(&self) -> Option<Arc<Engine>> {
        match &*lock(&self.0.slot) {
            Slot::Done(Ok(engine)) => Some(engine.clone()),
            _ => None,
        }
    }

    /// The engine once the opening is over (None if it failed), without trying again.
    pub fn wait_opened(&self) -> Option<Arc<Engine>> {
        match &*self.settled() {
            Slot::Done(Ok(engine)) => Some(engine.clone()),
            _ => None,
        }
    }
}

async fn blocking<T: Send + 'static>(work: impl FnOnce() -> Result<T, ApiError> + Send + 'static) -> Result<T, ApiError> {
    tauri::async_runtime::spawn_blocking(work).await.unwrap_or_else(|_| Err(ApiError::internal("the call stopped unexpectedly")))
}

// The wait for the engine happens on the blocking pool, not on the async runtime's own
// threads.
#[tauri::command]
pub async fn api_call(state: tauri::State<'_, EngineState>, method: String, params: Value) -> Result<Value, ApiError> {
    let state = state.inner().clone();
    blocking(move || state.engine()?.call(&method, params)).await
}

#[tauri::command]
pub async fn api_stream(state: tauri::State<'_, EngineState>, method: String, params: Value, on_event: Channel<StreamEvent>) -> Result<Value, ApiError> {
    let state = state.inner().clone();
    blocking(move || {
        // A send fails once the window is gone: a subscription (`sync.watch`) ends then.
        state.engine()?.call_stream_while(&method, params, &mut |event| match on_event.send(event) {
            Ok(()) => true,
            Err(error) => {
                tracing::debug!(%error, "the window stopped listening to a stream");
                false
            }
        })
    })
    .await
}
