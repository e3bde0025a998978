//! The two generic commands. They forward to `inkstone_core::api` and decide nothing:
//! every decision lives in core, so the desktop, the CLI and `serve` behave alike.

use std::sync::Arc;

use inkstone_core::api::StreamEvent;
use inkstone_core::{ApiError, Engine};
use serde_json::Value;
use tauri::ipc::Channel;

/// The engine, or why it could not open (another instance holds the data folder, a
/// damaged store, ...). Every call then returns that error, so the UI can explain it.
pub struct EngineState(pub Result<Arc<Engine>, ApiError>);

impl EngineState {
    fn engine(&self) -> Result<Arc<Engine>, ApiError> {
        self.0.clone()
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
