//! The routes. Every one but `/v1/health` needs `Authorization: Bearer <token>`; the
//! token names the workspace, so ids of another workspace are simply not found.
//! Errors are `{code, message, hints}` with a 4xx or 5xx status, every one of them
//! (the router's own refusals too: [`guard`] rewrites any other error body); bad
//! input writes nothing.
//!
//! Before a handler reads anything, [`guard`] checks the token from the headers alone
//! (a request without a valid one is refused before its body is read), the token's
//! rate and the rate of requests without a valid token per client address. Bodies are
//! read against a budget of bytes held at once across requests ([`Limits`]); requests
//! and connections served at once are capped ([`serve`]), and pages of changes are
//! built and sent a few at a time, so memory stays bounded however many clients pull.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::rejection::PathRejection;
use axum::extract::Path;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use axum::{Json, Router};
use http_body_util::BodyExt;
use inkstone_sync_proto::{ErrorBody, Role, MAX_BODY_BYTES};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::storage::{Caller, Storage, StorageError};

mod admission;
mod handlers;

use admission::guard;
pub use admission::{serve, Capped, Counted, Peer};
use handlers::*;

/// Requests a token may make per second on average, and in a burst.
#[derive(Debug, Clone, Copy)]
pub struct RateLimit {
    pub per_second: f64,
    pub burst: f64,
}

impl Default for RateLimit {
    fn default() -> Self {
        RateLimit { per_second: 50.0, burst: 200.0 }
    }
}

/// What the server takes on at once, and from whom.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Connections served at once; further ones wait in the listen queue.
    pub max_connections: usize,
    /// Requests handled at once; further ones wait.
    pub max_requests: usize,
    /// Bytes of request bodies held at once across all requests (at least one largest
    /// body); a body that finds no room within `busy_wait` is refused 503.
    pub body_budget: usize,
    /// How long a body may take to arrive (408 after).
    pub body_timeout: Duration,
    /// How long a request waits for room in the body budget or for a pull slot.
    pub busy_wait: Duration,
    /// Pages of changes built and sent at once; further pulls wait.
    pub pulls: usize,
    /// Requests without a valid token per client address (health checks, refused
    /// tokens, unknown routes): over it, every request from the address is 429.
    pub strangers: RateLimit,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_connections: 512,
            max_requests: 256,
            body_budget: 64 * 1024 * 1024,
            body_timeout: Duration::from_secs(60),
            busy_wait: Duration::from_secs(10),
            pulls: 8,
            strangers: RateLimit { per_second: 10.0, burst: 60.0 },
        }
    }
}

/// Token buckets by key: each holds up to `burst` and refills at `per_second`.
struct Buckets<K> {
    rate: RateLimit,
    buckets: Mutex<HashMap<K, (f64, Instant)>>,
}

impl<K: std::hash::Hash + Eq> Buckets<K> {
    fn new(rate: RateLimit) -> Buckets<K> {
        Buckets { rate, buckets: Mutex::new(HashMap::new()) }
    }

    /// Refills `key`'s bucket; takes one when `take`. The seconds to wait when it is
    /// empty (nothing taken then).
    fn check(&self, key: K, take: bool) -> Option<u64> {
        let Ok(mut buckets) = self.buckets.lock() else { return None };
        let now = Instant::now();
        if buckets.len() > 100_000 {
            // Forget full buckets (the same as a new one) rather than grow without end.
            let (rate, burst) = (self.rate.per_second, self.rate.burst);
            buckets.retain(|_, (tokens, at)| *tokens + now.duration_since(*at).as_secs_f64() * rate < burst);
        }
        let (tokens, at) = buckets.entry(key).or_insert((self.rate.burst, now));
        *tokens = (*tokens + now.duration_since(*at).as_secs_f64() * self.rate.per_second).min(self.rate.burst);
        *at = now;
        if *tokens >= 1.0 {
            if take {
                *tokens -= 1.0;
            }
            None
        } else {
            Some(((1.0 - *tokens) / self.rate.per_second.max(f64::MIN_POSITIVE)).ceil().clamp(1.0, 3600.0) as u64)
        }
    }
}

pub struct AppState {
    pub storage: Arc<dyn Storage>,
    pub rate: RateLimit,
    pub limits: Limits,
    buckets: Buckets<String>,
    /// Requests without a valid token, by client address (None: the address is not
    /// known, as when the router is served without [`serve`]).
    strangers: Buckets<Option<IpAddr>>,
    /// The body budget in KiB.
    body_budget: Arc<Semaphore>,
    pulls: Arc<Semaphore>,
    requests: Arc<Semaphore>,
}

impl AppState {
    pub fn new(storage: Arc<dyn Storage>, rate: RateLimit) -> Arc<AppState> {
        AppState::with_limits(storage, rate, Limits::default())
    }

    pub fn with_limits(storage: Arc<dyn Storage>, rate: RateLimit, limits: Limits) -> Arc<AppState> {
        let budget_kib = limits.body_budget.max(MAX_BODY_BYTES).div_ceil(1024).min(Semaphore::MAX_PERMITS);
        Arc::new(AppState {
            storage,
            rate,
            limits,
            buckets: Buckets::new(rate),
            strangers: Buckets::new(limits.strangers),
            body_budget: Arc::new(Semaphore::new(budget_kib)),
            pulls: Arc::new(Semaphore::new(limits.pulls.max(1))),
            requests: Arc::new(Semaphore::new(limits.max_requests.max(1))),
        })
    }

    /// A token bucket per token. Returns the seconds to wait when empty.
    fn take(&self, token_id: &str) -> Option<u64> {
        self.buckets.check(token_id.to_owned(), true)
    }
}

/// An error response.
pub struct HttpError {
    status: StatusCode,
    body: Box<ErrorBody>,
    retry_after: Option<u64>,
}

impl HttpError {
    fn new(status: StatusCode, code: &str, message: impl Into<String>) -> HttpError {
        HttpError { status, body: Box::new(ErrorBody { code: code.to_owned(), message: message.into(), hints: Vec::new(), stale: None }), retry_after: None }
    }

    fn hint(mut self, hint: &str) -> HttpError {
        self.body.hints.push(hint.to_owned());
        self
    }

    fn retry_after(mut self, seconds: u64) -> HttpError {
        self.retry_after = Some(seconds);
        self
    }

    fn busy(what: &str) -> HttpError {
        HttpError::new(StatusCode::SERVICE_UNAVAILABLE, "BUSY", format!("The server is handling too many {what} at once.")).hint("Retry shortly.").retry_after(1)
    }

    fn too_large() -> HttpError {
        HttpError::new(StatusCode::PAYLOAD_TOO_LARGE, "TOO_LARGE", format!("A request body holds at most {MAX_BODY_BYTES} bytes.")).hint("Push fewer versions at once.")
    }
}

impl IntoResponse for HttpError {
    fn into_response(self) -> Response {
        let mut response = (self.status, Json(*self.body)).into_response();
        if let Some(seconds) = self.retry_after {
            if let Ok(value) = HeaderValue::from_str(&seconds.to_string()) {
                response.headers_mut().insert("retry-after", value);
            }
        }
        response
    }
}

impl From<StorageError> for HttpError {
    fn from(error: StorageError) -> Self {
        match error {
            StorageError::NotFound(what) => HttpError::new(StatusCode::NOT_FOUND, "NOT_FOUND", format!("There is no {what} in this workspace.")),
            StorageError::Stale(stale) => {
                let mut e = HttpError::new(
                    StatusCode::CONFLICT,
                    "STALE_BASE",
                    format!("The project moved on the server: its head is {}, the push was based on {}.", stale.head, stale.base),
                )
                .hint("Pull the newer versions, resolve, and push on the new head.");
                e.body.stale = Some(stale);
                e
            }
            StorageError::KeyReused => HttpError::new(StatusCode::UNPROCESSABLE_ENTITY, "IDEMPOTENCY_KEY_REUSED", "This dedupe key was used for a different push.")
                .hint("Use a new dedupe key for a new push."),
            StorageError::VersionIdTaken(client_id) => HttpError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                inkstone_sync_proto::CODE_VERSION_ID_TAKEN,
                format!("The workspace holds a version with the id {client_id} already; a push cannot reuse it."),
            )
            .hint("Push new versions under new ids."),
            StorageError::InFlight => {
                HttpError::new(StatusCode::CONFLICT, "IN_FLIGHT", "A push with this dedupe key is still being processed.").hint("Retry the same request shortly.")
            }
            StorageError::Io(message) => {
                tracing::error!("storage failed: {message}");
                HttpError::new(StatusCode::INTERNAL_SERVER_ERROR, "STORAGE", "The server could not store or read the data.").hint("Retry later; tell the operator if it persists.")
            }
        }
    }
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers.get("authorization")?.to_str().ok()?.strip_prefix("Bearer ")
}

fn unauthorized() -> HttpError {
    HttpError::new(StatusCode::UNAUTHORIZED, "UNAUTHORIZED", "A valid bearer token is required.").hint("Ask a workspace owner for an invite token.")
}

/// The caller [`guard`] authenticated, if they have at least `role`.
fn caller(caller: Caller, role: Role) -> Result<Caller, HttpError> {
    if caller.member.role < role {
        return Err(HttpError::new(StatusCode::FORBIDDEN, "FORBIDDEN", format!("This needs the {} role; you are {}.", role.as_str(), caller.member.role.as_str())));
    }
    Ok(caller)
}

/// A body read whole, with its share of the body budget (held while it is in use).
struct ReadBody {
    bytes: Bytes,
    _budget: OwnedSemaphorePermit,
}

/// Reads a request body: at most [`MAX_BODY_BYTES`] (a larger declared length is
/// refused before a byte is read), within the body budget and the body timeout.
async fn read_body(state: &AppState, headers: &HeaderMap, body: Body) -> Result<ReadBody, HttpError> {
    let declared = match headers.get(header::CONTENT_LENGTH) {
        Some(value) => Some(
            value.to_str().ok().and_then(|v| v.parse::<u64>().ok()).ok_or_else(|| HttpError::new(StatusCode::BAD_REQUEST, "VALIDATION", "The Content-Length is not a number."))?,
        ),
        None => None,
    };
    if declared.is_some_and(|n| n > MAX_BODY_BYTES as u64) {
        return Err(HttpError::too_large());
    }
    // A body of unknown length may be as long as the longest.
    let room = declared.map_or(MAX_BODY_BYTES, |n| n as usize);
    let kib = u32::try_from(room.div_ceil(1024).max(1)).unwrap_or(u32::MAX);
    let budget = match tokio::time::timeout(state.limits.busy_wait, state.body_budget.clone().acquire_many_owned(kib)).await {
        Ok(Ok(permit)) => permit,
        _ => return Err(HttpError::busy("uploads")),
    };
    let read = async move {
        let mut body = body;
        let mut bytes = Vec::with_capacity(room.min(MAX_BODY_BYTES));
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| HttpError::new(StatusCode::BAD_REQUEST, "VALIDATION", format!("The request body could not be read: {e}.")))?;
            if let Some(data) = frame.data_ref() {
                if bytes.len() + data.len() > room {
                    return Err(HttpError::too_large());
                }
                bytes.extend_from_slice(data);
            }
        }
        Ok(Bytes::from(bytes))
    };
    match tokio::time::timeout(state.limits.body_timeout, read).await {
        Ok(bytes) => Ok(ReadBody { bytes: bytes?, _budget: budget }),
        Err(_) => Err(HttpError::new(StatusCode::REQUEST_TIMEOUT, "TIMEOUT", "The request body did not arrive in time.").hint("Retry on a steadier connection.")),
    }
}

fn path_id(what: &str, path: Result<Path<String>, PathRejection>) -> Result<String, HttpError> {
    let Path(id) = path.map_err(|e| HttpError::new(StatusCode::BAD_REQUEST, "VALIDATION", format!("`{what}` could not be read: {e}.")))?;
    valid_id(what, &id)?;
    Ok(id)
}

fn valid_id(what: &str, id: &str) -> Result<(), HttpError> {
    if id.is_empty() || id.len() > 100 || !id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        return Err(HttpError::new(StatusCode::BAD_REQUEST, "VALIDATION", format!("`{what}` must be 1–100 letters, digits, `_` or `-`.")));
    }
    Ok(())
}

/// The routes over `state`.
pub fn router(state: Arc<AppState>) -> Router {
    Router::new()
        .route("/v1/health", get(health))
        .route("/v1/workspace", get(workspace))
        .route("/v1/members", get(members).post(invite))
        .route("/v1/tokens/{token_id}", delete(revoke))
        .route("/v1/projects/{project_id}", get(project))
        .route("/v1/projects/{project_id}/push", post(push))
        .route("/v1/changes", get(changes))
        .route("/v1/policy", get(policy).put(set_policy))
        .route("/v1/perf", get(perf_changes).post(perf_push))
        .route("/v1/ai-activity", get(ai_activity))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(axum::middleware::from_fn_with_state(state.clone(), guard))
        .with_state(state)
}
