//! The two generic commands. They forward to `inkstone_core::api` and decide nothing:
//! every decision lives in core, so the desktop, the CLI and `serve` behave alike.

use std::sync::{Arc, Mutex};

use inkstone_core::api::StreamEvent;
use inkstone_core::{ApiError, Engine, ErrorCode};
use serde_json::Value;
use tauri::ipc::Channel;

type Reopen = Box<dyn Fn() -> Result<Arc<Engine>, ApiError> + Send + Sync>;

/// The engine, or why it could not open (another instance holds the data folder, a
/// damaged store, ...). Every call then returns that error, so the UI can explain it.
/// A folder that was only locked (the CLI serving it) is tried again on the next call,
/// so the window's Retry works once the other process has let go.
pub struct EngineState {
    current: Mutex<Result<Arc<Engine>, ApiError>>,
    reopen: Option<Reopen>,
}

impl EngineState {
    /// A fixed outcome (no second try).
    pub fn new(result: Result<Arc<Engine>, ApiError>) -> Self {
        Self { current: Mutex::new(result), reopen: None }
    }

    /// An outcome that `reopen` replaces on the next call while it is `STORE_LOCKED`.
    pub fn reopening(result: Result<Arc<Engine>, ApiError>, reopen: impl Fn() -> Result<Arc<Engine>, ApiError> + Send + Sync + 'static) -> Self {
        Self { current: Mutex::new(result), reopen: Some(Box::new(reopen)) }
    }

    /// The engine now (trying a locked folder again first).
    pub fn engine(&self) -> Result<Arc<Engine>, ApiError> {
        let mut current = self.current.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let (Err(error), Some(reopen)) = (&*current, &self.reopen) {
            if error.code == ErrorCode::StoreLocked {
                *current = reopen();
            }
        }
        current.clone()
    }

    /// The engine if it is open, without trying again.
    pub fn opened(&self) -> Option<Arc<Engine>> {
        self.current.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).as_ref().ok().cloned()
    }
}

async fn blocking<T: Send + 'static>(work: impl FnOnce() -> Result<T, ApiError> + Send + 'static) -> Result<T, ApiError> {
    tauri::async_runtime::spawn_blocking(work).await.unwrap_or_else(|_| Err(ApiError::internal("the call stopped unexpectedly")))
}

#[tauri::command]
pub async fn api_call(state: tauri::State<'_, EngineState>, method: String, params: Value) -> Result<Value, ApiError> {
    let engine = state.engine()?;
    blocking(move || engine.call(&method, params)).await
}

#[tauri::command]
pub async fn api_stream(state: tauri::State<'_, EngineState>, method: String, params: Value, on_event: Channel<StreamEvent>) -> Result<Value, ApiError> {
    let engine = state.engine()?;
    blocking(move || {
        engine.call_stream(&method, params, &mut |event| {
            if let Err(error) = on_event.send(event) {
                tracing::debug!(%error, "the window stopped listening to a stream");
            }
        })
    })
    .await
}
