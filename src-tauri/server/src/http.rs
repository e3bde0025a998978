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
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::connect_info::Connected;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{ConnectInfo, Path, Query, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use axum::serve::{IncomingStream, Listener};
use axum::{Extension, Json, Router};
use http_body_util::BodyExt;
use inkstone_sync_proto::{
    AiActivityQuery, ErrorBody, InviteRequest, MembersResponse, PolicyRecord, PushRequest, Role, WorkspacePolicy, IDEMPOTENCY_HEADER, MAX_BODY_BYTES, MAX_PAGE_BYTES,
    MAX_VERSIONS_PER_PUSH,
};
use serde::Deserialize;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::storage::{sha256_hex, Caller, PushOutcome, Storage, StorageError};

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

async fn health() -> &'static str {
    "ok"
}

/// Runs the storage work of a request on the blocking pool: storage calls wait on disk
/// syncs (sled) or the database, which must not stall the async workers.
async fn blocking<T: Send + 'static>(work: impl FnOnce() -> Result<T, HttpError> + Send + 'static) -> Result<T, HttpError> {
    tokio::task::spawn_blocking(work).await.map_err(|_| {
        HttpError::new(StatusCode::INTERNAL_SERVER_ERROR, "INTERNAL", "The server failed while handling the request.").hint("Retry; tell the operator if it persists.")
    })?
}

async fn workspace(State(state): State<Arc<AppState>>, Extension(who): Extension<Caller>) -> Result<Response, HttpError> {
    blocking(move || {
        let caller = caller(who, Role::Viewer)?;
        Ok(Json(state.storage.workspace(&caller)?).into_response())
    })
    .await
}

async fn members(State(state): State<Arc<AppState>>, Extension(who): Extension<Caller>) -> Result<Response, HttpError> {
    blocking(move || {
        let caller = caller(who, Role::Viewer)?;
        Ok(Json(MembersResponse { members: state.storage.members(&caller.workspace_id)? }).into_response())
    })
    .await
}

async fn invite(State(state): State<Arc<AppState>>, Extension(who): Extension<Caller>, headers: HeaderMap, body: Body) -> Result<Response, HttpError> {
    let caller = caller(who, Role::Owner)?;
    let body = read_body(&state, &headers, body).await?;
    blocking(move || {
        let request: InviteRequest =
            serde_json::from_slice(&body.bytes).map_err(|e| HttpError::new(StatusCode::BAD_REQUEST, "VALIDATION", format!("The invite is not valid: {e}.")))?;
        let name = request.name.trim();
        if name.is_empty() || name.chars().count() > 100 {
            return Err(HttpError::new(StatusCode::BAD_REQUEST, "VALIDATION", "A member's name is 1–100 characters."));
        }
        let issued = state.storage.invite(&caller.workspace_id, name, request.role)?;
        Ok((StatusCode::CREATED, Json(issued)).into_response())
    })
    .await
}

async fn revoke(State(state): State<Arc<AppState>>, Extension(who): Extension<Caller>, token_id: Result<Path<String>, PathRejection>) -> Result<Response, HttpError> {
    let caller = caller(who, Role::Owner)?;
    let token_id = path_id("tokenId", token_id)?;
    blocking(move || {
        state.storage.revoke(&caller.workspace_id, &token_id)?;
        Ok(StatusCode::NO_CONTENT.into_response())
    })
    .await
}

/// The workspace's policy, for every member (apps enforce it): the default, with no
/// setter, until an owner sets one.
async fn policy(State(state): State<Arc<AppState>>, Extension(who): Extension<Caller>) -> Result<Response, HttpError> {
    let caller = caller(who, Role::Viewer)?;
    blocking(move || {
        let record = state.storage.policy(&caller.workspace_id)?.unwrap_or(PolicyRecord { policy: WorkspacePolicy::default(), set_by: None, set_at: None });
        Ok(Json(record).into_response())
    })
    .await
}

/// Replaces the workspace's policy (owners only; an editor or viewer is refused before
/// the body is read). Answers the stored record, with the owner and the time.
async fn set_policy(State(state): State<Arc<AppState>>, Extension(who): Extension<Caller>, headers: HeaderMap, body: Body) -> Result<Response, HttpError> {
    let caller = caller(who, Role::Owner)?;
    let body = read_body(&state, &headers, body).await?;
    blocking(move || {
        let policy: WorkspacePolicy = serde_json::from_slice(&body.bytes)
            .map_err(|e| HttpError::new(StatusCode::BAD_REQUEST, "VALIDATION", format!("The policy is not valid JSON of the right shape: {e}.")))?;
        if let Some((field, message)) = policy.invalid() {
            return Err(HttpError::new(StatusCode::BAD_REQUEST, "VALIDATION", format!("{field}: {message}")));
        }
        let record = PolicyRecord { policy, set_by: Some(caller.member.clone()), set_at: Some(crate::storage::now_millis()) };
        state.storage.set_policy(&caller.workspace_id, &record)?;
        Ok(Json(record).into_response())
    })
    .await
}

/// A push checked and ready for the store: its caller, dedupe key, request and the
/// hash of its body.
struct CheckedPush {
    caller: Caller,
    key: String,
    request: PushRequest,
    payload_hash: String,
}

/// Validates a push of an authenticated editor; nothing is written.
fn check_push(caller: Caller, headers: &HeaderMap, project_id: &str, body: &Bytes) -> Result<CheckedPush, HttpError> {
    valid_id("projectId", project_id)?;
    let key = headers
        .get(IDEMPOTENCY_HEADER)
        .and_then(|v| v.to_str().ok())
        .filter(|k| !k.is_empty() && k.len() <= 200)
        .ok_or_else(|| HttpError::new(StatusCode::BAD_REQUEST, "VALIDATION", format!("A push needs an `{IDEMPOTENCY_HEADER}` header of 1–200 characters.")))?;
    let request: PushRequest =
        serde_json::from_slice(body).map_err(|e| HttpError::new(StatusCode::BAD_REQUEST, "VALIDATION", format!("The push is not valid JSON of the right shape: {e}.")))?;
    if request.versions.is_empty() || request.versions.len() > MAX_VERSIONS_PER_PUSH {
        return Err(
            HttpError::new(StatusCode::BAD_REQUEST, "VALIDATION", format!("A push carries 1–{MAX_VERSIONS_PER_PUSH} versions.")).hint("Split the versions into several pushes.")
        );
    }
    for (i, v) in request.versions.iter().enumerate() {
        if v.client_id.is_empty() || !v.content_hash.starts_with("sha256:") || v.content_hash.len() != 71 {
            return Err(HttpError::new(StatusCode::BAD_REQUEST, "VALIDATION", format!("versions[{i}]: a client id and a `sha256:` content hash are required.")));
        }
        if v.origin.as_deref().is_some_and(|o| !inkstone_sync_proto::origin::well_formed(o)) {
            return Err(HttpError::new(StatusCode::BAD_REQUEST, "VALIDATION", format!("versions[{i}]: an origin is 1–32 ASCII letters (manual, syncResolution, ...).")));
        }
        refuse_control_characters(i, v)?;
        if let Some((field, message)) = v.ai.as_ref().and_then(|ai| ai.invalid()) {
            return Err(HttpError::new(StatusCode::BAD_REQUEST, "VALIDATION", format!("versions[{i}].ai.{field}: {message}")));
        }
        if request.versions[..i].iter().any(|earlier| earlier.client_id == v.client_id) {
            return Err(HttpError::new(StatusCode::BAD_REQUEST, "VALIDATION", format!("versions[{i}]: the client id is in this push twice.")));
        }
    }
    Ok(CheckedPush { caller, key: key.to_owned(), request, payload_hash: sha256_hex(body) })
}

/// One rule on both storages: text with a C0 control character other than tab, LF and
/// CR is refused (PostgreSQL cannot store U+0000 in text; the embedded store could, and
/// the two must agree), with a code that tells the client not to send it again.
fn refuse_control_characters(i: usize, v: &inkstone_sync_proto::PushVersion) -> Result<(), HttpError> {
    let fields = [
        ("clientId", Some(&v.client_id)),
        ("title", Some(&v.title)),
        ("source", Some(&v.source)),
        ("author", Some(&v.author)),
        ("message", v.message.as_ref()),
        ("createdAt", Some(&v.created_at)),
    ];
    for (field, text) in fields {
        if let Some((at, c)) = text.and_then(|t| inkstone_sync_proto::control_character(t)) {
            return Err(HttpError::new(
                StatusCode::BAD_REQUEST,
                inkstone_sync_proto::CODE_CONTROL_CHARACTER,
                format!(
                    "versions[{i}].{field} holds the control character U+{:04X} at character {at}; text may hold tab and line breaks but no other control characters.",
                    c as u32
                ),
            )
            .hint("Remove the character from the version and save a new one; this version cannot be sent."));
        }
    }
    Ok(())
}

/// A version's AI origin detail is kept only while the workspace's policy shares AI
/// activity (an app sends it only then; one whose policy is stale may still): otherwise
/// it is dropped and the versions are kept as they are. The payload hash stays the
/// body's, so a retry of the same push is still the same push.
fn keep_ai_only_when_shared(storage: &dyn Storage, push: &mut CheckedPush) -> Result<(), HttpError> {
    if push.request.versions.iter().all(|v| v.ai.is_none()) {
        return Ok(());
    }
    let shared = storage.policy(&push.caller.workspace_id)?.is_some_and(|record| record.policy.share_activity);
    if !shared {
        for v in &mut push.request.versions {
            v.ai = None;
        }
    }
    Ok(())
}

fn push_response(outcome: PushOutcome) -> Response {
    match outcome {
        PushOutcome::Done(response) => (StatusCode::CREATED, Json(response)).into_response(),
        PushOutcome::Replayed(response) => {
            let mut r = (StatusCode::OK, Json(response)).into_response();
            r.headers_mut().insert("idempotent-replayed", HeaderValue::from_static("true"));
            r
        }
    }
}

async fn push(
    State(state): State<Arc<AppState>>,
    Extension(who): Extension<Caller>,
    headers: HeaderMap,
    project_id: Result<Path<String>, PathRejection>,
    body: Body,
) -> Result<Response, HttpError> {
    // Who and where before the body: a refused push is not read.
    let caller = caller(who, Role::Editor)?;
    let project_id = path_id("projectId", project_id)?;
    let body = read_body(&state, &headers, body).await?;
    // The embedded store commits pushes in groups on its own thread: the request
    // awaits its answer without holding a thread.
    if state.storage.local() {
        let mut push = check_push(caller, &headers, &project_id, &body.bytes)?;
        keep_ai_only_when_shared(state.storage.as_ref(), &mut push)?;
        let Some(pending) = state.storage.submit_push(&push.caller, &project_id, &push.request, &push.key, &push.payload_hash) else {
            return blocking(move || Ok(push_response(state.storage.push(&push.caller, &project_id, &push.request, &push.key, &push.payload_hash)?))).await;
        };
        drop(body);
        let outcome = pending?.await.map_err(|_| HttpError::from(StorageError::Io("the store stopped before answering".into())))??;
        return Ok(push_response(outcome));
    }
    blocking(move || {
        let mut push = check_push(caller, &headers, &project_id, &body.bytes)?;
        keep_ai_only_when_shared(state.storage.as_ref(), &mut push)?;
        Ok(push_response(state.storage.push(&push.caller, &project_id, &push.request, &push.key, &push.payload_hash)?))
    })
    .await
}

#[derive(Debug, Deserialize)]
struct ChangesQuery {
    #[serde(default)]
    since: u64,
    #[serde(default)]
    limit: Option<usize>,
}

/// Stores a push of performance records (editors and owners; a viewer is refused before
/// the body is read). Each record is checked before anything is written; the answer
/// acks each in order (`applied: false` for a resend or a beaten write).
async fn perf_push(State(state): State<Arc<AppState>>, Extension(who): Extension<Caller>, headers: HeaderMap, body: Body) -> Result<Response, HttpError> {
    let caller = caller(who, Role::Editor)?;
    let body = read_body(&state, &headers, body).await?;
    blocking(move || {
        let request: inkstone_sync_proto::PerfPushRequest = serde_json::from_slice(&body.bytes)
            .map_err(|e| HttpError::new(StatusCode::BAD_REQUEST, "VALIDATION", format!("The push is not valid JSON of the right shape: {e}.")))?;
        if request.records.is_empty() || request.records.len() > inkstone_sync_proto::MAX_PERF_RECORDS_PER_PUSH {
            return Err(HttpError::new(StatusCode::BAD_REQUEST, "VALIDATION", format!("A push carries 1–{} records.", inkstone_sync_proto::MAX_PERF_RECORDS_PER_PUSH))
                .hint("Split the records into several pushes."));
        }
        for (i, record) in request.records.iter().enumerate() {
            if let Some(why) = record.invalid() {
                return Err(HttpError::new(StatusCode::BAD_REQUEST, "VALIDATION", format!("records[{i}]: {why}")));
            }
            // PostgreSQL cannot store U+0000; both storages refuse what the protocol does.
            if let Some((at, c)) = record.body.as_deref().and_then(inkstone_sync_proto::control_character) {
                return Err(HttpError::new(
                    StatusCode::BAD_REQUEST,
                    inkstone_sync_proto::CODE_CONTROL_CHARACTER,
                    format!("records[{i}].body holds the control character U+{:04X} at character {at}.", c as u32),
                ));
            }
        }
        Ok(Json(state.storage.perf_push(&caller, &request.records)?).into_response())
    })
    .await
}

#[derive(Debug, Deserialize)]
struct PerfChangesQuery {
    #[serde(default)]
    since: u64,
    #[serde(default)]
    limit: Option<usize>,
    /// Kinds beyond the first three the reader knows, comma-separated
    /// (`accountSnapshot`).
    #[serde(default)]
    include: Option<String>,
}

/// The workspace's performance records written after `since` (every member). Account
/// snapshots only for a reader that asks for them (`include=accountSnapshot`): an
/// older app would refuse a page with a kind it does not know. The page's cursor and
/// `more` are the storage's, so a reader that does not ask still moves past them.
async fn perf_changes(
    State(state): State<Arc<AppState>>,
    Extension(who): Extension<Caller>,
    query: Result<Query<PerfChangesQuery>, QueryRejection>,
) -> Result<Response, HttpError> {
    let caller = caller(who, Role::Viewer)?;
    let Query(query) = query.map_err(|e| {
        HttpError::new(StatusCode::BAD_REQUEST, "VALIDATION", format!("The query is not valid: {}.", e.body_text()))
            .hint("`since` is a cursor from an earlier answer (0 or more); `limit` is 1–500.")
    })?;
    let with_days = query.include.as_deref().is_some_and(|kinds| kinds.split(',').any(|k| k.trim() == inkstone_sync_proto::PERF_INCLUDE_ACCOUNT_SNAPSHOTS));
    blocking(move || {
        let limit = query.limit.unwrap_or(200).clamp(1, 500);
        let mut page = state.storage.perf_changes(&caller.workspace_id, query.since, limit)?;
        if !with_days {
            page.records.retain(|r| r.record.kind != inkstone_sync_proto::PerfKind::AccountSnapshot);
        }
        Ok(Json(page).into_response())
    })
    .await
}

/// A response body that holds a permit until it is sent (or dropped).
struct Held {
    body: Body,
    _permit: OwnedSemaphorePermit,
}

impl http_body::Body for Held {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// A page of changes: at most `limit` versions (100 unless asked, at most 500) and at
/// most [`MAX_PAGE_BYTES`] of them (a larger version alone), built and sent a few at a
/// time ([`Limits::pulls`]).
async fn changes(State(state): State<Arc<AppState>>, Extension(who): Extension<Caller>, query: Result<Query<ChangesQuery>, QueryRejection>) -> Result<Response, HttpError> {
    let caller = caller(who, Role::Viewer)?;
    let Query(query) = query.map_err(|e| {
        HttpError::new(StatusCode::BAD_REQUEST, "VALIDATION", format!("The query is not valid: {}.", e.body_text()))
            .hint("`since` is a cursor from an earlier answer (0 or more); `limit` is 1–500.")
    })?;
    let permit = match tokio::time::timeout(state.limits.busy_wait, state.pulls.clone().acquire_owned()).await {
        Ok(Ok(permit)) => permit,
        _ => return Err(HttpError::busy("pulls")),
    };
    let response = blocking(move || {
        let limit = query.limit.unwrap_or(100).clamp(1, 500);
        let page = state.storage.changes_json(&caller.workspace_id, query.since, limit, MAX_PAGE_BYTES)?;
        Ok(([(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))], page).into_response())
    })
    .await?;
    Ok(response.map(|body| Body::new(Held { body, _permit: permit })))
}

/// The workspace's AI activity: owners see every member's rows, editors their own;
/// viewers are refused (before anything is read).
async fn ai_activity(State(state): State<Arc<AppState>>, Extension(who): Extension<Caller>, query: Result<Query<AiActivityQuery>, QueryRejection>) -> Result<Response, HttpError> {
    let caller = caller(who, Role::Editor)?;
    let Query(query) = query.map_err(|e| {
        HttpError::new(StatusCode::BAD_REQUEST, "VALIDATION", format!("The query is not valid: {}.", e.body_text()))
            .hint("Filters: project, person, model (text), since and until (Unix milliseconds), limit (1–1000).")
    })?;
    if let Some(project) = &query.project {
        valid_id("project", project)?;
    }
    if let (Some(since), Some(until)) = (query.since, query.until) {
        if since >= until {
            return Err(HttpError::new(StatusCode::BAD_REQUEST, "VALIDATION", "`until` must be later than `since`."));
        }
    }
    blocking(move || {
        let only = (caller.member.role < Role::Owner).then_some(caller.member.id.as_str());
        Ok(Json(state.storage.ai_activity(&caller.workspace_id, only, &query)?).into_response())
    })
    .await
}

async fn project(State(state): State<Arc<AppState>>, Extension(who): Extension<Caller>, project_id: Result<Path<String>, PathRejection>) -> Result<Response, HttpError> {
    let caller = caller(who, Role::Viewer)?;
    let project_id = path_id("projectId", project_id)?;
    blocking(move || Ok(Json(state.storage.project(&caller.workspace_id, &project_id)?).into_response())).await
}

async fn not_found() -> HttpError {
    HttpError::new(StatusCode::NOT_FOUND, "NOT_FOUND", "There is no such endpoint.")
}

async fn method_not_allowed() -> HttpError {
    HttpError::new(StatusCode::METHOD_NOT_ALLOWED, "METHOD_NOT_ALLOWED", "This endpoint does not take that method.")
}

/// The client address a connection came from (set by [`serve`]).
#[derive(Debug, Clone, Copy)]
pub struct Peer(pub IpAddr);

impl Connected<IncomingStream<'_, Capped>> for Peer {
    fn connect_info(stream: IncomingStream<'_, Capped>) -> Self {
        Peer(stream.remote_addr().ip())
    }
}

/// What every request passes first, before its body is read: the rate of requests
/// without a valid token from its address, its token (from the headers alone) and the
/// token's rate, and the cap on requests handled at once. The caller goes to the
/// handler as an extension. Afterwards, an error that is not the JSON error shape (the
/// router's own refusals) is rewritten into it.
async fn guard(State(state): State<Arc<AppState>>, mut request: Request, next: Next) -> Response {
    let peer = request.extensions().get::<ConnectInfo<Peer>>().map(|c| c.0 .0);
    let answer = match admit(&state, peer, &mut request).await {
        Ok(_slot) => next.run(request).await,
        Err(error) => error.into_response(),
    };
    json_errors(answer).await
}

/// Lets a request in (see [`guard`]); the slot it holds among the requests handled at
/// once.
async fn admit(state: &Arc<AppState>, peer: Option<IpAddr>, request: &mut Request) -> Result<OwnedSemaphorePermit, HttpError> {
    let stranger = |state: &AppState, take: bool| state.strangers.check(peer, take);
    let over = |seconds: u64| {
        HttpError::new(StatusCode::TOO_MANY_REQUESTS, "RATE_LIMITED", "Too many requests without a valid token from this address.")
            .hint("Wait as long as Retry-After says.")
            .retry_after(seconds)
    };
    if let Some(seconds) = stranger(state, false) {
        return Err(over(seconds));
    }
    let slot = match tokio::time::timeout(state.limits.busy_wait, state.requests.clone().acquire_owned()).await {
        Ok(Ok(slot)) => slot,
        _ => return Err(HttpError::busy("requests")),
    };
    if request.uri().path() == "/v1/health" {
        stranger(state, true);
        return Ok(slot);
    }
    let Some(token) = bearer(request.headers()).map(str::to_owned) else {
        stranger(state, true);
        return Err(unauthorized());
    };
    let found = if state.storage.local() {
        state.storage.authenticate(&token)?
    } else {
        let storage = state.storage.clone();
        blocking(move || Ok(storage.authenticate(&token)?)).await?
    };
    let Some(caller) = found else {
        stranger(state, true);
        return Err(unauthorized());
    };
    if let Some(seconds) = state.take(&caller.token_id) {
        return Err(HttpError::new(StatusCode::TOO_MANY_REQUESTS, "RATE_LIMITED", "Too many requests for this token.")
            .hint("Wait as long as Retry-After says.")
            .retry_after(seconds));
    }
    request.extensions_mut().insert(caller);
    Ok(slot)
}

/// An error answer in the JSON error shape: one already in it stays; another (a
/// refusal of the router or of hyper's extractors, in plain text or empty) is
/// rewritten with a code for its status and its words as the message.
async fn json_errors(answer: Response) -> Response {
    let status = answer.status();
    let is_json = answer.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(|v| v.starts_with("application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return answer;
    }
    let (parts, body) = answer.into_parts();
    let text = match http_body_util::Limited::new(body, 4096).collect().await {
        Ok(collected) => String::from_utf8_lossy(&collected.to_bytes()).trim().chars().take(300).collect::<String>(),
        Err(_) => String::new(),
    };
    let code = match status {
        StatusCode::BAD_REQUEST | StatusCode::UNPROCESSABLE_ENTITY | StatusCode::UNSUPPORTED_MEDIA_TYPE | StatusCode::LENGTH_REQUIRED => "VALIDATION",
        StatusCode::UNAUTHORIZED => "UNAUTHORIZED",
        StatusCode::FORBIDDEN => "FORBIDDEN",
        StatusCode::NOT_FOUND => "NOT_FOUND",
        StatusCode::METHOD_NOT_ALLOWED => "METHOD_NOT_ALLOWED",
        StatusCode::REQUEST_TIMEOUT => "TIMEOUT",
        StatusCode::PAYLOAD_TOO_LARGE => "TOO_LARGE",
        StatusCode::TOO_MANY_REQUESTS => "RATE_LIMITED",
        StatusCode::SERVICE_UNAVAILABLE => "BUSY",
        s if s.is_server_error() => "INTERNAL",
        _ => "HTTP",
    };
    let message = if text.is_empty() { status.canonical_reason().unwrap_or("The request failed.").to_owned() } else { text };
    let mut error = HttpError::new(status, code, message);
    if let Some(seconds) = parts.headers.get("retry-after").and_then(|v| v.to_str().ok()).and_then(|v| v.parse().ok()) {
        error = error.retry_after(seconds);
    }
    let mut rewritten = error.into_response();
    if let Some(allow) = parts.headers.get(header::ALLOW) {
        rewritten.headers_mut().insert(header::ALLOW, allow.clone());
    }
    rewritten
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

/// A listener that serves at most a number of connections at once: it accepts the
/// next one only when one of them has closed (the rest wait in the listen queue).
pub struct Capped {
    listener: tokio::net::TcpListener,
    slots: Arc<Semaphore>,
}

impl Capped {
    pub fn new(listener: tokio::net::TcpListener, max_connections: usize) -> Capped {
        Capped { listener, slots: Arc::new(Semaphore::new(max_connections.max(1))) }
    }
}

/// A connection holding its slot until it closes.
pub struct Counted {
    stream: tokio::net::TcpStream,
    _slot: OwnedSemaphorePermit,
}

impl tokio::io::AsyncRead for Counted {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut tokio::io::ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_read(cx, buf)
    }
}

impl tokio::io::AsyncWrite for Counted {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write(cx, buf)
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
    fn poll_write_vectored(self: Pin<&mut Self>, cx: &mut Context<'_>, bufs: &[std::io::IoSlice<'_>]) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write_vectored(cx, bufs)
    }
    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}

impl Listener for Capped {
    type Io = Counted;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Counted, SocketAddr) {
        // Never closed: a permit always comes.
        let slot = loop {
            if let Ok(slot) = self.slots.clone().acquire_owned().await {
                break slot;
            }
        };
        loop {
            match self.listener.accept().await {
                Ok((stream, addr)) => {
                    let _ = stream.set_nodelay(true);
                    return (Counted { stream, _slot: slot }, addr);
                }
                // Out of file descriptors and the like: wait a little, as axum does.
                Err(e) => {
                    tracing::warn!("accepting a connection failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }
}

/// Serves `state` on `listener` with its limits (connections, client addresses) until
/// `shutdown` completes.
pub async fn serve(listener: tokio::net::TcpListener, state: Arc<AppState>, shutdown: impl std::future::Future<Output = ()> + Send + 'static) -> std::io::Result<()> {
    let capped = Capped::new(listener, state.limits.max_connections);
    axum::serve(capped, router(state).into_make_service_with_connect_info::<Peer>()).with_graceful_shutdown(shutdown).await
}
