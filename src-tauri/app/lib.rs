//! The desktop shell: one window over the UI, two generic commands that forward to
//! `inkstone_api::api`, logging, and the automatic backups. No decisions live here.
//!
//! Around the window: one running app per data folder (a second launch brings the window
//! to the front and exits), the window's size, position and maximised state kept between
//! launches, and a close that first lets the UI save what was typed in the last moment.

mod ipc;
mod logging;
mod render;
mod startup;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use inkstone_api::{Engine, EngineConfig};
use serde_json::json;
use tauri::{Emitter, Manager, Runtime, WindowEvent};
use tauri_plugin_window_state::{AppHandleExt, StateFlags};

pub use ipc::{EngineState, Page, PageLoads};

/// The data folder: `INKSTONE_DATA_DIR`, else `<OS data dir>/Inkstone` (shared with
/// `inkstone-cli`).
pub fn data_dir() -> Option<PathBuf> {
    std::env::var_os("INKSTONE_DATA_DIR").map(PathBuf::from).filter(|p| !p.as_os_str().is_empty()).or_else(|| dirs::data_dir().map(|d| d.join("Inkstone")))
}

/// Opens the engine for the desktop app. A failure (another instance holds the folder,
/// damaged store, ...) is kept and returned by every call, so the window can explain it;
/// a locked folder is tried again on the next call (see [`EngineState`]).
pub fn open_engine(data_dir: Option<PathBuf>) -> EngineState {
    let Some(data_dir) = data_dir else {
        return EngineState::new(Err(
            inkstone_api::ApiError::new(inkstone_api::ErrorCode::Io, "Cannot tell the OS data folder.").hint("set_data_dir", "Set INKSTONE_DATA_DIR to a folder Inkstone may use.")
        ));
    };
    let first = logged(try_open(&data_dir));
    EngineState::reopening(first, move || logged(try_open(&data_dir)))
}

fn logged(result: Result<Arc<Engine>, inkstone_api::ApiError>) -> Result<Arc<Engine>, inkstone_api::ApiError> {
    if let Err(error) = &result {
        tracing::error!(code = ?error.code, message = %error.message, "store did not open");
    }
    result
}

/// The folder the log files go to, once logging started; Help shows it.
static LOG_DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// How this copy was installed, for updates: the mark Tauri's bundler writes into the
/// binary it packs (`.deb`, `.rpm`, AppImage), and for an AppImage the file its runtime
/// names in `APPIMAGE` (the one an update replaces). A build from source is `Other`.
fn installation() -> inkstone_api::update::Installation {
    use inkstone_api::update::Installation;
    use tauri::utils::{config::BundleType, platform::bundle_type};
    match bundle_type() {
        Some(BundleType::AppImage) => match std::env::var_os("APPIMAGE").filter(|p| !p.is_empty()) {
            Some(path) => Installation::AppImage { path: PathBuf::from(path) },
            None => Installation::Other,
        },
        Some(BundleType::Deb) => Installation::Deb,
        Some(BundleType::Rpm) => Installation::Rpm,
        _ => std::env::current_exe().ok().and_then(|exe| inkstone_api::update::installation_from_packages(&exe)).unwrap_or(Installation::Other),
    }
}

/// How long index.html may wait for the store to open before it goes out without the list.
const FIRST_LIST_WAIT: Duration = Duration::from_millis(300);

/// Puts the first project list into index.html as a JSON island
/// (`<script type="application/json" id="first-projects">`, the result of `project.list`),
/// so the page paints the list in the document's first frame. WebKitGTK's first composited
/// frame takes a few hundred milliseconds to complete, and content that arrives after that
/// frame began (the list over IPC) shows only in the frame after it. Not executed, so the CSP
/// allows it; `<` is escaped, so no text in it can close the element. Without an open store
/// in time the page asks over IPC as before.
fn inline_first_projects(state: &EngineState, request: &tauri::http::Request<Vec<u8>>, response: &mut tauri::http::Response<std::borrow::Cow<'static, [u8]>>) {
    let path = request.uri().path();
    if path != "/" && path != "/index.html" {
        return;
    }
    let Some(engine) = state.engine_within(FIRST_LIST_WAIT) else { return };
    let Ok(list) = engine.call("project.list", serde_json::json!({ "includeArchived": true })) else { return };
    let Ok(html) = std::str::from_utf8(response.body()) else { return };
    let Some(at) = html.find("</head>") else { return };
    let json = list.to_string().replace('<', "\\u003c");
    let page = format!("{}<script type=\"application/json\" id=\"first-projects\">{json}</script>{}", &html[..at], &html[at..]);
    *response.body_mut() = std::borrow::Cow::Owned(page.into_bytes());
}

fn try_open(data_dir: &Path) -> Result<Arc<Engine>, inkstone_api::ApiError> {
    let mut config = EngineConfig::new(data_dir, "Inkstone desktop").with_env(|key| std::env::var(key).ok());
    config.update.installation = installation();
    if let Some(dir) = LOG_DIR.get() {
        config = config.with_log_dir(dir);
    }
    match Engine::open(config) {
        Ok(engine) => {
            tracing::info!(data_dir = %data_dir.display(), "store opened");
            let engine = Arc::new(engine);
            // Accepted versions reach the team's workspace server in the background.
            engine.start_sync();
            Ok(engine)
        }
        Err(error) => Err(error),
    }
}

/// Registers the state and the commands; generic over the runtime so tests can
/// drive it with Tauri's mock runtime and no display.
pub fn app_builder<R: Runtime>(builder: tauri::Builder<R>, state: EngineState) -> tauri::Builder<R> {
    commands(builder).manage(state)
}

fn commands<R: Runtime>(builder: tauri::Builder<R>) -> tauri::Builder<R> {
    builder.manage(PageLoads::default()).invoke_handler(tauri::generate_handler![ipc::api_call, ipc::api_stream, window_flushed, reveal_folder, startup::startup_done, restart_app])
}

/// After `update.install` put a verified AppImage in place: start again, into it. The
/// window saves what is pending before it asks; the exit backup and the store's sync
/// run as on any exit.
#[tauri::command]
fn restart_app<R: Runtime>(app: tauri::AppHandle<R>) {
    tracing::info!("restarting into the updated AppImage");
    app.request_restart();
}

/// Help → About's "Open": shows the data folder or the log folder in the system's file
/// manager. Only those two folders, named by the engine, can be opened this way.
#[tauri::command]
fn reveal_folder(state: tauri::State<'_, EngineState>, which: String) -> Result<(), inkstone_api::api::dto::ApiError> {
    let bad = |message: &str| inkstone_api::ApiError::new(inkstone_api::ErrorCode::Validation, message);
    let folder = match which.as_str() {
        "data" => state.opened().map(|e| e.config().data_dir.clone()).or_else(data_dir),
        "logs" => LOG_DIR.get().cloned(),
        _ => return Err(bad("Only the data folder and the log folder can be opened.").into()),
    };
    let Some(folder) = folder.filter(|f| f.is_dir()) else { return Err(bad("That folder does not exist yet.").into()) };
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        "xdg-open"
    };
    std::process::Command::new(opener).arg(&folder).spawn().map(drop).map_err(|error| {
        tracing::warn!(%error, opener, "opening a folder");
        inkstone_api::ApiError::new(inkstone_api::ErrorCode::Io, format!("The system could not open the folder ({opener} failed); its path is shown to copy.")).into()
    })
}

/// Sent to the UI when a file given to a second launch became a project: the UI reads
/// the project list again and opens it.
pub const OPENED_PROJECT: &str = "inkstone://opened-project";

/// Sent to the UI when the window is asked to close: save what is pending, then call
/// `window_flushed`.
pub const FLUSH_BEFORE_CLOSE: &str = "inkstone://flush-before-close";
/// How long a close waits for the UI before the window goes anyway, so a stuck page can
/// never keep the window open.
const CLOSE_GRACE: Duration = Duration::from_secs(3);

/// Set once a close was asked for; a second click on the close button waits with the first.
#[derive(Default)]
struct Closing(AtomicBool);

/// The UI has saved what was pending: the window closes now.
#[tauri::command]
fn window_flushed<R: Runtime>(window: tauri::Window<R>) {
    tracing::info!("the UI saved what was pending; closing the window");
    close_now(&window);
}

fn close_now<R: Runtime>(window: &tauri::Window<R>) {
    // The state file is written here too, not only at exit, so a crash later in the
    // shutdown does not lose the window's place.
    let _ = window.app_handle().save_window_state(StateFlags::all());
    // Give up the single-instance name now, not after the exit backup: a launch in the
    // meantime then opens a window of its own (waiting for the store lock) instead of
    // handing over to a window that is gone.
    tauri_plugin_single_instance::destroy(window.app_handle());
    if let Err(error) = window.destroy() {
        tracing::warn!(%error, "closing the window");
    }
}

/// The single-instance identity: the canonical data folder, hashed (FNV-1a) into a D-Bus
/// name element. Two launches on one folder meet; launches on different folders (each
/// holding its own store lock) may run side by side.
pub fn instance_id(data_dir: &Path) -> String {
    let canonical = std::fs::create_dir_all(data_dir).and_then(|()| data_dir.canonicalize()).unwrap_or_else(|_| data_dir.to_path_buf());
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in canonical.as_os_str().as_encoded_bytes() {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("studio.inkstone.desktop.folder_{hash:016x}")
}

/// How long a launch waits for the store lock of an instance that is still exiting.
const LOCK_WAIT: Duration = Duration::from_secs(5);
const RELAUNCH_ENV: &str = "INKSTONE_SINGLE_INSTANCE_RETRY";

/// [`open_engine`], waiting up to `wait` while the folder is locked. This launch owns the
/// folder's single-instance name, so the holder is an instance on its way out (its exit
/// backup and final sync) or the CLI; the CLI's error is shown once the wait is over.
fn open_engine_waiting(data_dir: Option<PathBuf>, wait: Duration) -> EngineState {
    let Some(data_dir) = data_dir else { return open_engine(None) };
    let deadline = std::time::Instant::now() + wait;
    let first = loop {
        match try_open(&data_dir) {
            Err(error) if error.code == inkstone_api::ErrorCode::StoreLocked && std::time::Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(200));
            }
            result => break logged(result),
        }
    };
    EngineState::reopening(first, move || logged(try_open(&data_dir)))
}

/// Starts this program again (at most three times), for a launch that met an instance in
/// the middle of exiting. Returns only when it may not.
fn relaunch_after_race() {
    let tries: u32 = std::env::var(RELAUNCH_ENV).ok().and_then(|v| v.parse().ok()).unwrap_or(0);
    if tries >= 3 {
        return;
    }
    std::thread::sleep(Duration::from_millis(300));
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        if let Ok(exe) = std::env::current_exe() {
            let error = std::process::Command::new(exe).args(std::env::args_os().skip(1)).env(RELAUNCH_ENV, (tries + 1).to_string()).exec();
            eprintln!("Inkstone could not start again: {error}");
        }
    }
}

/// A second launch on the same data folder: bring the running window to the front.
fn show_main_window<R: Runtime>(app: &tauri::AppHandle<R>) {
    let Some(window) = app.get_webview_window("main") else { return };
    let _ = window.unminimize();
    let _ = window.show();
    let _ = window.set_focus();
    tracing::info!("second launch: brought the running window to the front");
}

fn auto_backup(engine: &Engine, reason: &str) {
    match engine.call("backup.auto", json!({ "reason": reason })) {
        Ok(result) if !result["backup"].is_null() => tracing::info!(reason, path = %result["backup"]["path"], "backup written"),
        Ok(_) => tracing::debug!(reason, "no backup needed"),
        Err(error) => tracing::warn!(reason, code = ?error.code, message = %error.message, "backup failed"),
    }
}

/// The Markdown files among a launch's arguments: what a file manager's "Open with
/// Inkstone" passes (the desktop entry's `Exec=inkstone %F`). Relative paths are taken
/// from the launch's working folder.
fn markdown_arguments(argv: &[String], cwd: &Path) -> Vec<PathBuf> {
    argv.iter().skip(1).map(|arg| cwd.join(arg)).filter(|path| path.extension().is_some_and(|e| e.eq_ignore_ascii_case("md") || e.eq_ignore_ascii_case("markdown"))).collect()
}

/// Opens those files the way Settings → Data's import does (`import.markdown`, which
/// makes no second project of a file it imported before), once the engine is open (so
/// not on the main thread).
fn open_markdown_files<R: Runtime>(app: &tauri::AppHandle<R>, files: Vec<PathBuf>) {
    if files.is_empty() {
        return;
    }
    let Some(engine) = app.try_state::<EngineState>().and_then(|s| s.wait_opened()) else { return };
    for path in files {
        match engine.call("import.markdown", json!({ "path": path })) {
            Ok(result) => {
                tracing::info!(path = %path.display(), "opened a Markdown file as a project");
                let id = result.pointer("/projects/0/id").cloned().unwrap_or(serde_json::Value::Null);
                if let Err(error) = app.emit(OPENED_PROJECT, json!({ "projectId": id })) {
                    tracing::warn!(%error, "telling the window about an opened file");
                }
            }
            Err(error) => tracing::warn!(path = %path.display(), code = ?error.code, message = %error.message, "opening a Markdown file"),
        }
    }
}

pub fn run() {
    startup::mark("main");
    let compositing = render::apply();
    let data_dir = data_dir();
    let mut single_instance = tauri_plugin_single_instance::Builder::new().callback(|app, argv, cwd| {
        let files = markdown_arguments(&argv, Path::new(&cwd));
        if !files.is_empty() {
            let app = app.clone();
            std::thread::spawn(move || open_markdown_files(&app, files));
        }
        show_main_window(app);
    });
    if let Some(dir) = &data_dir {
        single_instance = single_instance.dbus_id(instance_id(dir));
    }
    // The single-instance plugin comes first: a second launch exits in its setup, before
    // the store is touched or a window is made.
    let builder = commands(tauri::Builder::default())
        .plugin(single_instance.build())
        .plugin(tauri_plugin_window_state::Builder::new().with_state_flags(StateFlags::SIZE | StateFlags::POSITION | StateFlags::MAXIMIZED).build())
        .manage(Closing::default())
        .on_page_load(|webview, payload| match payload.event() {
            tauri::webview::PageLoadEvent::Started => {
                // The streams of the page it replaces end (see `PageLoads`).
                webview.state::<PageLoads>().started(webview.label());
                startup::mark("page_load_started");
            }
            tauri::webview::PageLoadEvent::Finished => startup::mark("page_load_finished"),
        })
        .on_window_event(|window, event| {
            if let WindowEvent::CloseRequested { api, .. } = event {
                api.prevent_close();
                close_requested(window);
            }
        })
        .setup(move |app| setup(app, compositing, data_dir));
    let app = match builder.build(tauri::generate_context!()) {
        Ok(app) => app,
        Err(error) => {
            // The running instance may have been exiting while this launch called it
            // (D-Bus "NoReply"): start over a few times; then its name is free.
            if error.to_string().contains("single-instance") {
                relaunch_after_race();
            }
            eprintln!("Inkstone could not start its window: {error}");
            std::process::exit(1);
        }
    };
    app.run(move |app, event| {
        if let tauri::RunEvent::Ready = event {
            startup::mark("event_loop");
        }
        if let tauri::RunEvent::Exit = event {
            on_exit(app);
        }
    });
}

/// A close of the window: the UI is asked to save its pending text first (once), and
/// the window closes when it confirms or after the grace period.
fn close_requested<R: Runtime>(window: &tauri::Window<R>) {
    if window.state::<Closing>().0.swap(true, Ordering::SeqCst) {
        return;
    }
    tracing::info!("close requested: asking the UI to save first");
    // The UI saves its pending text, then calls `window_flushed`; after the grace
    // period the window closes regardless.
    if let Err(error) = window.emit(FLUSH_BEFORE_CLOSE, ()) {
        tracing::warn!(%error, "asking the UI to save before closing");
        close_now(window);
        return;
    }
    let window = window.clone();
    std::thread::spawn(move || {
        std::thread::sleep(CLOSE_GRACE);
        tracing::warn!("the UI did not confirm its save in time; closing anyway");
        close_now(&window);
    });
}

/// The app's setup: logging, the engine opening in the background, the main window
/// with the first project list, the Markdown files it was opened with, and the daily
/// backup after the first screen.
fn setup<R: Runtime>(app: &mut tauri::App<R>, compositing: render::Compositing, data_dir: Option<PathBuf>) -> Result<(), Box<dyn std::error::Error>> {
    startup::mark("setup");
    let log_dir = app.path().app_log_dir().unwrap_or_else(|_| std::env::temp_dir().join("inkstone-logs"));
    if let Some(guard) = logging::init(&log_dir) {
        app.manage(guard);
        let _ = LOG_DIR.set(log_dir.clone());
    }
    tracing::info!(log_dir = %log_dir.display(), version = env!("CARGO_PKG_VERSION"), "Inkstone started");
    tracing::info!(compositing = compositing.describe(), "web view compositing");
    // The store and the search index open on a thread of their own while the
    // window is made and the page starts; the page's first calls wait for them.
    let argv: Vec<String> = std::env::args().collect();
    let cwd = std::env::current_dir().unwrap_or_default();
    let state = EngineState::open_in_background(move || {
        startup::mark("engine_open_start");
        let state = open_engine_waiting(data_dir, LOCK_WAIT);
        startup::mark("engine");
        state
    });
    app.manage(state.clone());
    // The main window is made here rather than from the configuration, so that its
    // index.html carries the first project list (see `inline_first_projects`).
    if let Some(config) = app.config().app.windows.iter().find(|w| w.label == "main").cloned() {
        let listing = state.clone();
        tauri::WebviewWindowBuilder::from_config(app.handle(), &config)?
            .on_web_resource_request(move |request, response| inline_first_projects(&listing, &request, response))
            .build()?;
    }
    let handle = app.handle().clone();
    std::thread::spawn(move || {
        open_markdown_files(&handle, markdown_arguments(&argv, &cwd));
        if let Some(engine) = state.wait_opened() {
            // The daily backup generation, off the UI's path and after the first
            // screen: it reads the whole store and would compete with the window's
            // start for the disk and the CPU.
            startup::wait_for_first_screen(Duration::from_secs(10));
            auto_backup(&engine, "daily");
        }
    });
    startup::mark("setup_done");
    Ok(())
}

/// The app's exit: an exit while the engine is still opening waits for it, so the
/// backup and the sync below still run.
fn on_exit<R: Runtime>(app: &tauri::AppHandle<R>) {
    if let Some(engine) = app.try_state::<EngineState>().and_then(|s| s.wait_opened()) {
        auto_backup(&engine, "exit");
        // Tauri ends the process without dropping the engine, so the store's group
        // commit would never sync the last second of autosaves: sync it here.
        match engine.kernel().store().sync() {
            Ok(()) => tracing::info!("store synced to disk on exit"),
            Err(error) => tracing::error!(%error, "syncing the store on exit failed"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_with_passes_markdown_files_only_relative_to_the_launch_folder() {
        let argv: Vec<String> = ["inkstone", "notes/a.md", "/abs/B.Markdown", "picture.png", "--flag", "c.txt"].iter().map(|s| s.to_string()).collect();
        assert_eq!(markdown_arguments(&argv, Path::new("/home/lin")), vec![PathBuf::from("/home/lin/notes/a.md"), PathBuf::from("/abs/B.Markdown")]);
        assert!(markdown_arguments(&["inkstone".to_owned()], Path::new("/")).is_empty());
    }
}
