//! `inkstone-cli serve`: the API over loopback HTTP, for the UI in a browser.
//!
//! - `POST /api/<method>`: JSON params in, JSON result out; errors are `ApiError` JSON
//!   with the code's HTTP status.
//! - `POST /api/stream/<method>`: Server-Sent Events: each event named by its
//!   `StreamEvent` type (`progress`, `harness`, `syncStatus`, ...), then one `result` or
//!   `error` event. A subscription (`sync.watch`) ends when the page closes its stream
//!   (the next send finds no receiver) or the server shuts down.
//! - `GET /media/<file>`: the data folder's images (with the token, like the API; the
//!   UI itself reads images through `media.read`).
//! - everything else: the built UI (`ui/dist`), with `index.html` as the fallback.
//!
//! Security: binds 127.0.0.1 only; every request must name this server in `Host` (no
//! DNS rebinding) and, when it carries an `Origin`, come from this server's origin; every
//! API and media request must carry the per-launch token as `Authorization: Bearer`.
//! The token is printed once in the launch URL's fragment (never sent to the server in
//! a URL, so it never reaches a log) and never logged. Every response carries the
//! desktop window's Content-Security-Policy (`tauri.conf.json`, `app.security.csp`),
//! so a page in the browser may load and connect to nothing but this server.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result};
use axum::body::Bytes;
use axum::extract::{Path, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use inkstone_api::api::dto;
use inkstone_api::api::StreamEvent;
use inkstone_api::{ApiError, Engine, ErrorCode};
use serde_json::Value;
use tower_http::services::{ServeDir, ServeFile};

#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// The port on 127.0.0.1; 0 picks a free one.
    #[arg(long, default_value_t = 5417)]
    port: u16,
    /// The built UI (default: ./ui/dist, or ui/dist next to the executable's repo).
    #[arg(long, env = "INKSTONE_UI_DIR")]
    ui_dir: Option<PathBuf>,
}

struct AppState {
    engine: Arc<Engine>,
    token: String,
    allowed_hosts: Vec<String>,
    allowed_origins: Vec<String>,
}

fn error_response(error: &ApiError) -> Response {
    let status = StatusCode::from_u16(error.code.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (status, Json(dto::ApiError::from(error))).into_response()
}

fn refuse(status: StatusCode, code: ErrorCode, message: &str, hint: (&str, &str)) -> Response {
    let error = ApiError::new(code, message).hint(hint.0, hint.1);
    (status, Json(dto::ApiError::from(error))).into_response()
}

/// The desktop window's Content-Security-Policy, read from `tauri.conf.json` (built in),
/// so browser mode sends exactly the policy the desktop window has.
fn desktop_csp() -> Result<HeaderValue> {
    let config: Value = serde_json::from_str(include_str!("../../../tauri.conf.json")).context("reading the built-in tauri.conf.json")?;
    let csp = config["app"]["security"]["csp"].as_str().context("tauri.conf.json has no app.security.csp")?;
    HeaderValue::from_str(csp).context("the Content-Security-Policy is not a valid header value")
}

/// Constant-time comparison, so the token cannot be guessed byte by byte from timing.
fn same_token(given: &[u8], expected: &[u8]) -> bool {
    given.len() == expected.len() && given.iter().zip(expected).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
}

/// Host and Origin checks for every request; the token check for `/api/`.
async fn guard(State(state): State<Arc<AppState>>, request: Request, next: Next) -> Response {
    let headers = request.headers();
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
    if !state.allowed_hosts.iter().any(|allowed| allowed == host) {
        return refuse(
            StatusCode::FORBIDDEN,
            ErrorCode::PermissionDenied,
            "This server only answers requests addressed to 127.0.0.1 or localhost.",
            ("use_launch_url", "Open the URL that `inkstone-cli serve` printed."),
        );
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        if !state.allowed_origins.iter().any(|allowed| allowed == origin) {
            return refuse(
                StatusCode::FORBIDDEN,
                ErrorCode::PermissionDenied,
                "Requests from other web pages are refused.",
                ("use_launch_url", "Open the URL that `inkstone-cli serve` printed."),
            );
        }
    }
    let path = request.uri().path();
    if path.starts_with("/api/") || path == "/media" || path.starts_with("/media/") {
        let token = headers.get(header::AUTHORIZATION).and_then(|h| h.to_str().ok()).and_then(|h| h.strip_prefix("Bearer ")).unwrap_or("");
        if !same_token(token.as_bytes(), state.token.as_bytes()) {
            return refuse(
                StatusCode::UNAUTHORIZED,
                ErrorCode::PermissionDenied,
                "Missing or wrong access token.",
                ("use_launch_url", "Open the URL that `inkstone-cli serve` printed; it carries this launch's token."),
            );
        }
    }
    next.run(request).await
}

/// The body as JSON, or the VALIDATION response to send (boxed: a response is large
/// next to a value).
fn parse_body(body: &Bytes) -> Result<Value, Box<Response>> {
    if body.is_empty() {
        return Ok(Value::Null);
    }
    serde_json::from_slice(body).map_err(|e| Box::new(error_response(&ApiError::validation("", format!("The request body is not JSON: {e}")))))
}

async fn api_call(State(state): State<Arc<AppState>>, Path(method): Path<String>, body: Bytes) -> Response {
    let params = match parse_body(&body) {
        Ok(params) => params,
        Err(response) => return *response,
    };
    let engine = Arc::clone(&state.engine);
    let result = tokio::task::spawn_blocking(move || engine.call(&method, params)).await;
    match result {
        Ok(Ok(value)) => Json(value).into_response(),
        Ok(Err(error)) => error_response(&error),
        Err(_) => error_response(&ApiError::internal("the call stopped unexpectedly")),
    }
}

async fn api_stream(State(state): State<Arc<AppState>>, Path(method): Path<String>, body: Bytes) -> Response {
    let params = match parse_body(&body) {
        Ok(params) => params,
        Err(response) => return *response,
    };
    let (sender, receiver) = tokio::sync::mpsc::unbounded_channel::<Event>();
    let engine = Arc::clone(&state.engine);
    tokio::task::spawn_blocking(move || {
        let progress_sender = sender.clone();
        let result = engine.call_stream_while(&method, params, &mut |event| {
            let sse = match event {
                StreamEvent::Progress(progress) => Event::default().event("progress").json_data(progress),
                StreamEvent::Harness(harness_event) => Event::default().event("harness").json_data(harness_event),
                StreamEvent::Timeline(patch) => Event::default().event("timeline").json_data(patch),
                StreamEvent::SyncStatus(status) => Event::default().event("syncStatus").json_data(status),
            };
            // The page still listens while the response's body is open.
            match sse {
                Ok(event) => progress_sender.send(event).is_ok(),
                Err(_) => !progress_sender.is_closed(),
            }
        });
        let last = match result {
            Ok(value) => Event::default().event("result").json_data(value),
            Err(error) => Event::default().event("error").json_data(dto::ApiError::from(error)),
        };
        if let Ok(event) = last {
            let _ = sender.send(event);
        }
    });
    let stream = tokio_stream::wrappers::UnboundedReceiverStream::new(receiver);
    let stream = tokio_stream::StreamExt::map(stream, Ok::<Event, Infallible>);
    Sse::new(stream).into_response()
}

/// The UI folder: the flag, else `ui/dist` below the current folder or above the
/// executable (a cargo build lives in `<repo>/target/<profile>/`).
fn find_ui_dir(flag: Option<PathBuf>) -> Option<PathBuf> {
    if flag.is_some() {
        return flag;
    }
    let mut candidates = vec![PathBuf::from("ui/dist")];
    if let Ok(exe) = std::env::current_exe() {
        candidates.extend(exe.ancestors().skip(1).take(4).map(|dir| dir.join("ui/dist")));
    }
    candidates.into_iter().find(|dir| dir.join("index.html").is_file())
}

fn new_token() -> Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| anyhow::anyhow!("no randomness for the access token: {e}"))?;
    Ok(hex::encode(bytes))
}

/// Ctrl+C, or SIGTERM on Unix: stop accepting, finish running calls, close the store.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        let mut terminate = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(signal) => signal,
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
                return;
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = terminate.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

pub fn run(engine: Engine, args: ServeArgs) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the async runtime")?;
    runtime.block_on(serve(engine, args))
}

async fn serve(engine: Engine, args: ServeArgs) -> Result<()> {
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], args.port)))
        .await
        .with_context(|| format!("cannot listen on 127.0.0.1:{}; is another server using it? Try --port 0", args.port))?;
    let port = listener.local_addr()?.port();
    let token = new_token()?;
    let csp = desktop_csp()?;
    let data_dir = engine.config().data_dir.clone();
    let engine = Arc::new(engine);
    // serve is long-lived: it delivers versions to the workspace server in the
    // background, as the desktop app does.
    engine.start_sync();
    let state = Arc::new(AppState {
        engine,
        token: token.clone(),
        allowed_hosts: vec![format!("127.0.0.1:{port}"), format!("localhost:{port}")],
        allowed_origins: vec![format!("http://127.0.0.1:{port}"), format!("http://localhost:{port}")],
    });
    let mut app = Router::new()
        .route("/api/stream/{method}", post(api_stream))
        .route("/api/{method}", post(api_call))
        .nest_service("/media", ServeDir::new(inkstone_api::store::media_dir(&data_dir)));
    let ui_dir = find_ui_dir(args.ui_dir);
    match &ui_dir {
        Some(dir) => {
            app = app.fallback_service(ServeDir::new(dir).fallback(ServeFile::new(dir.join("index.html"))));
        }
        None => {
            app = app.fallback(|| async { (StatusCode::NOT_FOUND, "The UI is not built. Run `npm --prefix ui ci && npm --prefix ui run build`, or pass --ui-dir.") });
        }
    }
    let app = app
        .layer(middleware::from_fn_with_state(Arc::clone(&state), guard))
        .layer(axum::middleware::map_response(move |mut response: Response| {
            let csp = csp.clone();
            async move {
                let headers: &mut HeaderMap = response.headers_mut();
                headers.insert(header::CONTENT_SECURITY_POLICY, csp);
                headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
                headers.insert("x-content-type-options", HeaderValue::from_static("nosniff"));
                headers.insert("referrer-policy", HeaderValue::from_static("no-referrer"));
                response
            }
        }))
        .with_state(Arc::clone(&state));
    let url = format!("http://127.0.0.1:{port}/#token={token}");
    let mut banner =
        format!("Inkstone is running in browser mode. Open this address (it carries this launch's access token):\nINKSTONE_URL={url}\nData folder: {}\n", data_dir.display());
    if ui_dir.is_none() {
        banner.push_str("Note: the UI is not built; only the API is served.\n");
    }
    banner.push_str("Press Ctrl+C to stop.\n");
    // One write, and a closed stdout (a launcher that stopped reading) must not stop
    // the server: println! would panic on a broken pipe.
    {
        use std::io::Write;
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(banner.as_bytes());
        let _ = stdout.flush();
    }
    let closing = Arc::clone(&state.engine);
    let shutdown = async move {
        shutdown_signal().await;
        // Open subscriptions (`sync.watch`, `session.watch`) would keep their responses,
        // and so the graceful shutdown, open for ever: they end now.
        closing.close_watches();
    };
    axum::serve(listener, app).with_graceful_shutdown(shutdown).await.context("serving")?;
    // Dropping the engine syncs pending autosaves.
    drop(state);
    Ok(())
}
