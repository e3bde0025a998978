//! The desktop shell: one window over the UI, two generic commands that forward to
//! `inkstone_core::api`, logging, and the automatic backups. No decisions live here.

mod ipc;
mod logging;

use std::path::PathBuf;
use std::sync::Arc;

use inkstone_core::{Engine, EngineConfig};
use serde_json::json;
use tauri::{Manager, Runtime};

pub use ipc::EngineState;

/// The data folder: `INKSTONE_DATA_DIR`, else `<OS data dir>/Inkstone` (shared with
/// `inkstone-cli`).
pub fn data_dir() -> Option<PathBuf> {
    std::env::var_os("INKSTONE_DATA_DIR").map(PathBuf::from).filter(|p| !p.as_os_str().is_empty()).or_else(|| dirs::data_dir().map(|d| d.join("Inkstone")))
}

/// Opens the engine for the desktop app. A failure (another instance holds the folder,
/// damaged store, ...) is kept and returned by every call, so the window can explain it.
pub fn open_engine(data_dir: Option<PathBuf>) -> EngineState {
    let Some(data_dir) = data_dir else {
        return EngineState(Err(inkstone_core::ApiError::new(inkstone_core::ErrorCode::Io, "Cannot tell the OS data folder.")
            .hint("set_data_dir", "Set INKSTONE_DATA_DIR to a folder Inkstone may use.")));
    };
    let config = EngineConfig::new(&data_dir, "Inkstone desktop").with_env(|key| std::env::var(key).ok());
    match Engine::open(config) {
        Ok(engine) => {
            tracing::info!(data_dir = %data_dir.display(), "store opened");
            let engine = Arc::new(engine);
            // Accepted versions reach the team's workspace server in the background.
            engine.start_sync();
            EngineState(Ok(engine))
        }
        Err(error) => {
            tracing::error!(code = ?error.code, message = %error.message, "store did not open");
            EngineState(Err(error))
        }
    }
}

/// Registers the state and the two commands; generic over the runtime so tests can
/// drive it with Tauri's mock runtime and no display.
pub fn app_builder<R: Runtime>(builder: tauri::Builder<R>, state: EngineState) -> tauri::Builder<R> {
    builder.manage(state).invoke_handler(tauri::generate_handler![ipc::api_call, ipc::api_stream])
}

fn auto_backup(engine: &Engine, reason: &str) {
    match engine.call("backup.auto", json!({ "reason": reason })) {
        Ok(result) if !result["backup"].is_null() => tracing::info!(reason, path = %result["backup"]["path"], "backup written"),
        Ok(_) => tracing::debug!(reason, "no backup needed"),
        Err(error) => tracing::warn!(reason, code = ?error.code, message = %error.message, "backup failed"),
    }
}

pub fn run() {
    let state = open_engine(data_dir());
    let engine_for_exit = state.0.clone().ok();
    let builder = app_builder(tauri::Builder::default(), state).setup(|app| {
        let log_dir = app.path().app_log_dir().unwrap_or_else(|_| std::env::temp_dir().join("inkstone-logs"));
        if let Some(guard) = logging::init(&log_dir) {
            app.manage(guard);
        }
        tracing::info!(log_dir = %log_dir.display(), version = env!("CARGO_PKG_VERSION"), "Inkstone started");
        if let Ok(engine) = app.state::<EngineState>().0.clone() {
            // The daily backup generation, off the UI's path.
            std::thread::spawn(move || auto_backup(&engine, "daily"));
        }
        Ok(())
    });
    let app = match builder.build(tauri::generate_context!()) {
        Ok(app) => app,
        Err(error) => {
            eprintln!("Inkstone could not start its window: {error}");
            std::process::exit(1);
        }
    };
    app.run(move |_, event| {
        if let tauri::RunEvent::Exit = event {
            if let Some(engine) = &engine_for_exit {
                auto_backup(engine, "exit");
            }
        }
    });
}
