//! The routes. Every one but `/v1/health` needs `Authorization: Bearer <token>`; the
//! token names the workspace, so ids of another workspace are simply not found.
//! Errors are `{code, message, hints}` with a 4xx or 5xx status; bad input writes
//! nothing.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use axum::{Json, Router};
use inkstone_sync_proto::{ErrorBody, InviteRequest, MembersResponse, PushRequest, Role, IDEMPOTENCY_HEADER, MAX_BODY_BYTES, MAX_VERSIONS_PER_PUSH};
use serde::Deserialize;

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

pub struct AppState {
    pub storage: Arc<dyn Storage>,
    pub rate: RateLimit,
    buckets: Mutex<HashMap<String, (f64, Instant)>>,
}

impl AppState {
    pub fn new(storage: Arc<dyn Storage>, rate: RateLimit) -> Arc<AppState> {
        Arc::new(AppState { storage, rate, buckets: Mutex::new(HashMap::new()) })
    }

    /// A token bucket per token. Returns the seconds to wait when empty.
    fn take(&self, token_id: &str) -> Option<u64> {
        let Ok(mut buckets) = self.buckets.lock() else { return None };
        let now = Instant::now();
        let (tokens, at) = buckets.entry(token_id.to_owned()).or_insert((self.rate.burst, now));
        *tokens = (*tokens + now.duration_since(*at).as_secs_f64() * self.rate.per_second).min(self.rate.burst);
        *at = now;
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            None
        } else {
            Some(((1.0 - *tokens) / self.rate.per_second).ceil().max(1.0) as u64)
        }
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

/// The caller of a request, rate-limited, with at least `role`.
fn caller(state: &AppState, headers: &HeaderMap, role: Role) -> Result<Caller, HttpError> {
    let unauthorized = || HttpError::new(StatusCode::UNAUTHORIZED, "UNAUTHORIZED", "A valid bearer token is required.").hint("Ask a workspace owner for an invite token.");
    let token = bearer(headers).ok_or_else(unauthorized)?;
    let caller = state.storage.authenticate(token)?.ok_or_else(unauthorized)?;
    if let Some(seconds) = state.take(&caller.token_id) {
        let mut e = HttpError::new(StatusCode::TOO_MANY_REQUESTS, "RATE_LIMITED", "Too many requests for this token.").hint("Wait as long as Retry-After says.");
        e.retry_after = Some(seconds);
        return Err(e);
    }
    if caller.member.role < role {
        return Err(HttpError::new(StatusCode::FORBIDDEN, "FORBIDDEN", format!("This needs the {} role; you are {}.", role.as_str(), caller.member.role.as_str())));
    }
    Ok(caller)
}

/// The body, or a 413/400 with a code when it is too large or unreadable.
fn body_bytes(body: Result<Bytes, BytesRejection>) -> Result<Bytes, HttpError> {
    body.map_err(|rejection| {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            HttpError::new(StatusCode::PAYLOAD_TOO_LARGE, "TOO_LARGE", format!("A request body holds at most {MAX_BODY_BYTES} bytes.")).hint("Push fewer versions at once.")
        } else {
            HttpError::new(StatusCode::BAD_REQUEST, "VALIDATION", format!("The request body could not be read: {rejection}."))
        }
    })
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

async fn workspace(State(state): State<Arc<AppState>>, headers: HeaderMap) -> Result<Response, HttpError> {
    blocking(move || {
        let caller = caller(&state, &headers, Role::Viewer)?;
        Ok(Json(state.storage.workspace(&caller)?).into_response())
    })
    .await
}

async fn members(State(state): State<Arc<AppState>>, headers: HeaderMap) -> Result<Response, HttpError> {
    blocking(move || {
        let caller = caller(&state, &headers, Role::Viewer)?;
        Ok(Json(MembersResponse { members: state.storage.members(&caller.workspace_id)? }).into_response())
    })
    .await
}

async fn invite(State(state): State<Arc<AppState>>, headers: HeaderMap, body: Result<Bytes, BytesRejection>) -> Result<Response, HttpError> {
    let body = body_bytes(body);
    blocking(move || {
        let caller = caller(&state, &headers, Role::Owner)?;
        let body = body?;
        let request: InviteRequest = serde_json::from_slice(&body).map_err(|e| HttpError::new(StatusCode::BAD_REQUEST, "VALIDATION", format!("The invite is not valid: {e}.")))?;
        let name = request.name.trim();
        if name.is_empty() || name.chars().count() > 100 {
            return Err(HttpError::new(StatusCode::BAD_REQUEST, "VALIDATION", "A member's name is 1–100 characters."));
        }
        let issued = state.storage.invite(&caller.workspace_id, name, request.role)?;
        Ok((StatusCode::CREATED, Json(issued)).into_response())
    })
    .await
}

async fn revoke(State(state): State<Arc<AppState>>, headers: HeaderMap, Path(token_id): Path<String>) -> Result<Response, HttpError> {
    blocking(move || {
        let caller = caller(&state, &headers, Role::Owner)?;
        valid_id("tokenId", &token_id)?;
        state.storage.revoke(&caller.workspace_id, &token_id)?;
        Ok(StatusCode::NO_CONTENT.into_response())
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

/// Authenticates and validates a push; nothing is written.
fn check_push(state: &AppState, headers: &HeaderMap, project_id: &str, body: Result<Bytes, HttpError>) -> Result<CheckedPush, HttpError> {
    let caller = caller(state, headers, Role::Editor)?;
    let body = body?;
    valid_id("projectId", project_id)?;
    let key = headers
        .get(IDEMPOTENCY_HEADER)
        .and_then(|v| v.to_str().ok())
        .filter(|k| !k.is_empty() && k.len() <= 200)
        .ok_or_else(|| HttpError::new(StatusCode::BAD_REQUEST, "VALIDATION", format!("A push needs an `{IDEMPOTENCY_HEADER}` header of 1–200 characters.")))?;
    let request: PushRequest =
        serde_json::from_slice(&body).map_err(|e| HttpError::new(StatusCode::BAD_REQUEST, "VALIDATION", format!("The push is not valid JSON of the right shape: {e}.")))?;
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
        if request.versions[..i].iter().any(|earlier| earlier.client_id == v.client_id) {
            return Err(HttpError::new(StatusCode::BAD_REQUEST, "VALIDATION", format!("versions[{i}]: the client id is in this push twice.")));
        }
    }
    Ok(CheckedPush { caller, key: key.to_owned(), request, payload_hash: sha256_hex(&body) })
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

async fn push(State(state): State<Arc<AppState>>, headers: HeaderMap, Path(project_id): Path<String>, body: Result<Bytes, BytesRejection>) -> Result<Response, HttpError> {
    let body = body_bytes(body);
    // A local store checks the token without waiting on a network, and the embedded one
    // commits pushes in groups on its own thread: the request awaits its answer without
    // holding a thread.
    if state.storage.local() {
        let push = check_push(&state, &headers, &project_id, body)?;
        let Some(pending) = state.storage.submit_push(&push.caller, &project_id, &push.request, &push.key, &push.payload_hash) else {
            return blocking(move || Ok(push_response(state.storage.push(&push.caller, &project_id, &push.request, &push.key, &push.payload_hash)?))).await;
        };
        let outcome = pending?.await.map_err(|_| HttpError::from(StorageError::Io("the store stopped before answering".into())))??;
        return Ok(push_response(outcome));
    }
    blocking(move || {
        let push = check_push(&state, &headers, &project_id, body)?;
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

async fn changes(State(state): State<Arc<AppState>>, headers: HeaderMap, Query(query): Query<ChangesQuery>) -> Result<Response, HttpError> {
    blocking(move || {
        let caller = caller(&state, &headers, Role::Viewer)?;
        let limit = query.limit.unwrap_or(100).clamp(1, 500);
        Ok(Json(state.storage.changes(&caller.workspace_id, query.since, limit)?).into_response())
    })
    .await
}

async fn project(State(state): State<Arc<AppState>>, headers: HeaderMap, Path(project_id): Path<String>) -> Result<Response, HttpError> {
    blocking(move || {
        let caller = caller(&state, &headers, Role::Viewer)?;
        valid_id("projectId", &project_id)?;
        Ok(Json(state.storage.project(&caller.workspace_id, &project_id)?).into_response())
    })
    .await
}

async fn not_found() -> HttpError {
    HttpError::new(StatusCode::NOT_FOUND, "NOT_FOUND", "There is no such endpoint.")
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
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(state)
}
