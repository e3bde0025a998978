//! The two generic commands. They forward to `inkstone_api::api` and decide nothing:
//! every decision lives in core, so the desktop, the CLI and `serve` behave alike.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use inkstone_api::api::{dto, StreamEvent};
use inkstone_api::{ApiError, Engine, ErrorCode};
use serde_json::Value;
use tauri::ipc::Channel;
use tauri::Runtime;

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

    /// The engine once it is open, waiting at most `wait` for the opening (None if it
    /// failed or is still going on), without trying again.
    pub fn engine_within(&self, wait: std::time::Duration) -> Option<Arc<Engine>> {
        let slot = lock(&self.0.slot);
        let (slot, _) = self.0.settled.wait_timeout_while(slot, wait, |slot| matches!(slot, Slot::Opening)).unwrap_or_else(|poisoned| poisoned.into_inner());
        match &*slot {
            Slot::Done(Ok(engine)) => Some(engine.clone()),
            _ => None,
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
pub async fn api_call(state: tauri::State<'_, EngineState>, method: String, params: Value) -> Result<Value, dto::ApiError> {
    let state = state.inner().clone();
    blocking(move || state.engine()?.call(&method, params)).await.map_err(Into::into)
}

/// The pages each webview loaded, counted by label. A stream remembers the load it
/// began under and ends at its next event once a newer page loaded in its webview: a
/// reload leaves the old page's subscriptions (`sync.watch`, `session.watch`) without a
/// listener, yet Tauri's channel to the webview still takes their events, so without
/// this their threads would stay until the window closed. A subscription sends at least
/// every 25 seconds (its keepalive), so it ends within that of the reload.
#[derive(Clone, Debug, Default)]
pub struct PageLoads(Arc<Mutex<HashMap<String, u64>>>);

impl PageLoads {
    /// A page began loading in the webview `label` (the first, a reload, a navigation).
    pub fn started(&self, label: &str) {
        *lock(&self.0).entry(label.to_owned()).or_default() += 1;
    }

    /// The page now shown in the webview `label`, as a stream begun now holds it.
    pub fn page(&self, label: &str) -> Page {
        Page { loads: self.clone(), label: label.to_owned(), load: self.load(label) }
    }

    fn load(&self, label: &str) -> u64 {
        lock(&self.0).get(label).copied().unwrap_or(0)
    }
}

/// One page load of one webview (see [`PageLoads`]).
#[derive(Debug)]
pub struct Page {
    loads: PageLoads,
    label: String,
    load: u64,
}

impl Page {
    /// Whether this page is still the one its webview shows (no newer page loaded there).
    pub fn shown(&self) -> bool {
        self.loads.load(&self.label) == self.load
    }
}

#[tauri::command]
pub async fn api_stream<R: Runtime>(
    webview: tauri::Webview<R>,
    state: tauri::State<'_, EngineState>,
    pages: tauri::State<'_, PageLoads>,
    method: String,
    params: Value,
    on_event: Channel<StreamEvent>,
) -> Result<Value, dto::ApiError> {
    let state = state.inner().clone();
    let page = pages.page(webview.label());
    blocking(move || {
        // A send fails once the window is gone, and a page that reloaded since the stream
        // began no longer listens: a subscription (`sync.watch`) ends then.
        state.engine()?.call_stream_while(&method, params, &mut |event| {
            if !page.shown() {
                tracing::debug!("a stream of a page that has since reloaded ends");
                return false;
            }
            match on_event.send(event) {
                Ok(()) => true,
                Err(error) => {
                    tracing::debug!(%error, "the window stopped listening to a stream");
                    false
                }
            }
        })
    })
    .await
    .map_err(Into::into)
}

#[cfg(test)]
mod tests {
    use super::PageLoads;

    #[test]
    fn engine_within_gives_up_after_its_wait_and_wakes_when_the_opening_settles() {
        use std::time::{Duration, Instant};
        let pending = super::EngineState::pending();
        let started = Instant::now();
        assert!(pending.engine_within(Duration::from_millis(30)).is_none());
        assert!(started.elapsed() >= Duration::from_millis(30), "it waited the whole time for an opening still going on");

        let settling = pending.clone();
        let opener = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            settling.settle(super::EngineState::new(Err(inkstone_api::ApiError::internal("no store"))));
        });
        let started = Instant::now();
        assert!(pending.engine_within(Duration::from_secs(20)).is_none(), "a failed opening has no engine");
        assert!(started.elapsed() < Duration::from_secs(10), "the settle woke the waiting call");
        assert!(opener.join().is_ok(), "the opener thread panicked");
    }

    #[test]
    fn a_stream_ends_once_a_newer_page_loaded_in_its_own_webview_only() {
        let loads = PageLoads::default();
        // Streams may begin before the first load is counted (none is seen yet).
        let early = loads.page("main");
        loads.started("main");
        let first = loads.page("main");
        let other = loads.page("settings");
        assert!(!early.shown(), "the first load is newer than a stream begun before it");
        assert!(first.shown());
        // The main window reloads: its old page's streams end; another webview's do not.
        loads.started("main");
        assert!(!first.shown());
        assert!(other.shown());
        let second = loads.page("main");
        assert!(second.shown());
        loads.started("settings");
        assert!(second.shown());
        assert!(!other.shown());
    }
}
