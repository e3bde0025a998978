//! The desktop shell's IPC through Tauri's mock runtime: no display needed. The real
//! window is tested end to end by tests/e2e/desktop.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{json, Value};
use tauri::ipc::{CallbackFn, InvokeBody};
use tauri::test::{get_ipc_response, mock_builder, mock_context, noop_assets, INVOKE_KEY};
use tauri::webview::InvokeRequest;

fn app(data_dir: &std::path::Path) -> tauri::App<tauri::test::MockRuntime> {
    inkstone_app::app_builder(mock_builder(), inkstone_app::open_engine(Some(data_dir.to_path_buf()))).build(mock_context(noop_assets())).unwrap()
}

fn invoke(webview: &tauri::WebviewWindow<tauri::test::MockRuntime>, cmd: &str, body: Value) -> Result<Value, Value> {
    get_ipc_response(
        webview,
        InvokeRequest {
            cmd: cmd.into(),
            callback: CallbackFn(0),
            error: CallbackFn(1),
            url: "tauri://localhost".parse().unwrap(),
            body: InvokeBody::Json(body),
            headers: Default::default(),
            invoke_key: INVOKE_KEY.to_string(),
        },
    )
    .map(|body| body.deserialize::<Value>().unwrap())
}

#[test]
fn api_call_forwards_to_the_engine() {
    let dir = tempfile::tempdir().unwrap();
    let app = app(dir.path());
    let webview = tauri::WebviewWindowBuilder::new(&app, "main", Default::default()).build().unwrap();
    let created = invoke(&webview, "api_call", json!({"method": "project.create", "params": {"title": "桌面"}})).unwrap();
    assert_eq!(created["title"], "桌面");
    let listed = invoke(&webview, "api_call", json!({"method": "project.list", "params": {}})).unwrap();
    assert_eq!(listed["projects"][0]["id"], created["id"]);
}

#[test]
fn errors_cross_the_bridge_as_api_errors() {
    let dir = tempfile::tempdir().unwrap();
    let app = app(dir.path());
    let webview = tauri::WebviewWindowBuilder::new(&app, "main", Default::default()).build().unwrap();
    let error = invoke(&webview, "api_call", json!({"method": "project.get", "params": {"projectId": "prj_nope"}})).unwrap_err();
    assert_eq!(error["code"], "NOT_FOUND");
    assert!(error["hints"].is_array());
}

#[test]
fn a_second_instance_on_the_same_data_dir_gets_a_clear_error_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let _first = app(dir.path());
    let second = app(dir.path());
    let webview = tauri::WebviewWindowBuilder::new(&second, "main", Default::default()).build().unwrap();
    let error = invoke(&webview, "api_call", json!({"method": "project.list", "params": {}})).unwrap_err();
    assert_eq!(error["code"], "STORE_LOCKED");
    assert_eq!(error["hints"][0]["id"], "close_other_instance");
}

#[test]
fn a_folder_locked_at_launch_opens_on_the_next_call_once_the_other_process_lets_go() {
    let dir = tempfile::tempdir().unwrap();
    let holder = inkstone_api::Engine::open(inkstone_api::EngineConfig::new(dir.path(), "inkstone-cli serve")).unwrap();
    let app = app(dir.path());
    let webview = tauri::WebviewWindowBuilder::new(&app, "main", Default::default()).build().unwrap();
    let error = invoke(&webview, "api_call", json!({"method": "project.list", "params": {}})).unwrap_err();
    assert_eq!(error["code"], "STORE_LOCKED");
    assert!(error["message"].as_str().unwrap().contains("inkstone-cli serve"), "{error}");
    // Still held: the retry gives the same clear error.
    let again = invoke(&webview, "api_call", json!({"method": "project.list", "params": {}})).unwrap_err();
    assert_eq!(again["code"], "STORE_LOCKED");
    drop(holder);
    let listed = invoke(&webview, "api_call", json!({"method": "project.list", "params": {}})).unwrap();
    assert!(listed["projects"].as_array().unwrap().is_empty());
    let created = invoke(&webview, "api_call", json!({"method": "project.create", "params": {"title": "后来"}})).unwrap();
    assert_eq!(created["title"], "后来");
}

#[test]
fn reveal_folder_opens_only_the_data_and_log_folders() {
    let dir = tempfile::tempdir().unwrap();
    let app = app(dir.path());
    let webview = tauri::WebviewWindowBuilder::new(&app, "main", Default::default()).build().unwrap();
    for which in ["/etc", "../", "media", ""] {
        let error = invoke(&webview, "reveal_folder", json!({"which": which})).unwrap_err();
        assert_eq!(error["code"], "VALIDATION", "{which}: {error}");
    }
    // No logging was started in this process, so there is no log folder to open.
    let error = invoke(&webview, "reveal_folder", json!({"which": "logs"})).unwrap_err();
    assert_eq!(error["code"], "VALIDATION");
}

/// The window starts while the store and the search index open on a thread of their own:
/// a call that arrives before the engine is open waits for it and succeeds, not fails.
#[test]
fn a_call_that_arrives_before_the_engine_is_open_waits_for_it_and_succeeds() {
    let dir = tempfile::tempdir().unwrap();
    let state = inkstone_app::EngineState::pending();
    let app = inkstone_app::app_builder(mock_builder(), state.clone()).build(mock_context(noop_assets())).unwrap();
    let webview = tauri::WebviewWindowBuilder::new(&app, "main", Default::default()).build().unwrap();
    let early = std::thread::spawn(move || invoke(&webview, "api_call", json!({"method": "project.create", "params": {"title": "早到"}})));
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(!early.is_finished(), "the call returned before the engine was open");
    assert!(state.opened().is_none());
    state.settle(inkstone_app::open_engine(Some(dir.path().to_path_buf())));
    let created = early.join().unwrap().expect("the early call succeeds once the engine is open");
    assert_eq!(created["title"], "早到");
    assert_eq!(state.opened().unwrap().call("project.list", json!({})).unwrap()["projects"][0]["id"], created["id"]);
}

/// Opening in the background ends the same way as opening in place: a folder another
/// process holds gives its clear error to the waiting call.
#[test]
fn a_locked_folder_opened_in_the_background_still_gives_its_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let _holder = inkstone_api::Engine::open(inkstone_api::EngineConfig::new(dir.path(), "inkstone-cli serve")).unwrap();
    let path = dir.path().to_path_buf();
    let state = inkstone_app::EngineState::open_in_background(move || inkstone_app::open_engine(Some(path)));
    let app = inkstone_app::app_builder(mock_builder(), state).build(mock_context(noop_assets())).unwrap();
    let webview = tauri::WebviewWindowBuilder::new(&app, "main", Default::default()).build().unwrap();
    let error = invoke(&webview, "api_call", json!({"method": "project.list", "params": {}})).unwrap_err();
    assert_eq!(error["code"], "STORE_LOCKED");
    assert_eq!(error["hints"][0]["id"], "close_other_instance");
}

/// A reload leaves the old page's subscriptions without a listener, yet the webview's
/// channel still takes their events: each stream ends at its next event once a newer
/// page loaded in its webview, instead of holding its thread until the window closes.
#[test]
fn a_stream_begun_by_a_page_that_has_since_reloaded_ends_at_its_next_event() {
    use tauri::Manager;
    let dir = tempfile::tempdir().unwrap();
    let app = app(dir.path());
    let webview = tauri::WebviewWindowBuilder::new(&app, "main", Default::default()).build().unwrap();
    app.state::<inkstone_app::PageLoads>().started("main");
    let watching = webview.clone();
    let (done, ended) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(invoke(&watching, "api_stream", json!({"method": "sync.watch", "params": {}, "onEvent": "__CHANNEL__:7"})));
    });
    // The watch is open: a save pushes its status, and the page still listens.
    std::thread::sleep(std::time::Duration::from_millis(300));
    invoke(&webview, "api_call", json!({"method": "project.create", "params": {"title": "重载前"}})).unwrap();
    assert!(ended.recv_timeout(std::time::Duration::from_millis(700)).is_err(), "the watch of the shown page goes on");
    // The page reloads; the next push finds the page that began the watch gone.
    app.state::<inkstone_app::PageLoads>().started("main");
    invoke(&webview, "api_call", json!({"method": "project.create", "params": {"title": "重载后"}})).unwrap();
    let answer = ended.recv_timeout(std::time::Duration::from_secs(10)).expect("the old page's watch ended with the next event").unwrap();
    assert!(answer["localChanges"].is_u64(), "it answers the last status it read: {answer}");
}
