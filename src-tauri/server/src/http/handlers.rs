//! The route handlers: each checks its caller's role and its input, then asks the
//! storage off the async threads.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use inkstone_sync_proto::{
    AiActivityQuery, InviteRequest, MembersResponse, PolicyRecord, PushRequest, Role, WorkspacePolicy, IDEMPOTENCY_HEADER, MAX_PAGE_BYTES, MAX_VERSIONS_PER_PUSH,
};
use serde::Deserialize;
use tokio::sync::OwnedSemaphorePermit;

use crate::storage::{sha256_hex, Caller, PushOutcome, Storage, StorageError};

use super::*;

pub(super) async fn health() -> &'static str {
    "ok"
}

/// Runs the storage work of a request on the blocking pool: storage calls wait on disk
/// syncs (sled) or the database, which must not stall the async workers.
pub(super) async fn blocking<T: Send + 'static>(work: impl FnOnce() -> Result<T, HttpError> + Send + 'static) -> Result<T, HttpError> {
    tokio::task::spawn_blocking(work).await.map_err(|_| {
        HttpError::new(StatusCode::INTERNAL_SERVER_ERROR, "INTERNAL", "The server failed while handling the request.").hint("Retry; tell the operator if it persists.")
    })?
}

pub(super) async fn workspace(State(state): State<Arc<AppState>>, Extension(who): Extension<Caller>) -> Result<Response, HttpError> {
    blocking(move || {
        let caller = caller(who, Role::Viewer)?;
        Ok(Json(state.storage.workspace(&caller)?).into_response())
    })
    .await
}

pub(super) async fn members(State(state): State<Arc<AppState>>, Extension(who): Extension<Caller>) -> Result<Response, HttpError> {
    blocking(move || {
        let caller = caller(who, Role::Viewer)?;
        Ok(Json(MembersResponse { members: state.storage.members(&caller.workspace_id)? }).into_response())
    })
    .await
}

pub(super) async fn invite(State(state): State<Arc<AppState>>, Extension(who): Extension<Caller>, headers: HeaderMap, body: Body) -> Result<Response, HttpError> {
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

pub(super) async fn revoke(State(state): State<Arc<AppState>>, Extension(who): Extension<Caller>, token_id: Result<Path<String>, PathRejection>) -> Result<Response, HttpError> {
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
pub(super) async fn policy(State(state): State<Arc<AppState>>, Extension(who): Extension<Caller>) -> Result<Response, HttpError> {
    let caller = caller(who, Role::Viewer)?;
    blocking(move || {
        let record = state.storage.policy(&caller.workspace_id)?.unwrap_or(PolicyRecord { policy: WorkspacePolicy::default(), set_by: None, set_at: None });
        Ok(Json(record).into_response())
    })
    .await
}

/// Replaces the workspace's policy (owners only; an editor or viewer is refused before
/// the body is read). Answers the stored record, with the owner and the time.
pub(super) async fn set_policy(State(state): State<Arc<AppState>>, Extension(who): Extension<Caller>, headers: HeaderMap, body: Body) -> Result<Response, HttpError> {
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
pub(super) struct CheckedPush {
    caller: Caller,
    key: String,
    request: PushRequest,
    payload_hash: String,
}

/// Validates a push of an authenticated editor; nothing is written.
pub(super) fn check_push(caller: Caller, headers: &HeaderMap, project_id: &str, body: &Bytes) -> Result<CheckedPush, HttpError> {
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
pub(super) fn refuse_control_characters(i: usize, v: &inkstone_sync_proto::PushVersion) -> Result<(), HttpError> {
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
pub(super) fn keep_ai_only_when_shared(storage: &dyn Storage, push: &mut CheckedPush) -> Result<(), HttpError> {
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

pub(super) fn push_response(outcome: PushOutcome) -> Response {
    match outcome {
        PushOutcome::Done(response) => (StatusCode::CREATED, Json(response)).into_response(),
        PushOutcome::Replayed(response) => {
            let mut r = (StatusCode::OK, Json(response)).into_response();
            r.headers_mut().insert("idempotent-replayed", HeaderValue::from_static("true"));
            r
        }
    }
}

pub(super) async fn push(
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
pub(super) struct ChangesQuery {
    #[serde(default)]
    since: u64,
    #[serde(default)]
    limit: Option<usize>,
}

/// Stores a push of performance records (editors and owners; a viewer is refused before
/// the body is read). Each record is checked before anything is written; the answer
/// acks each in order (`applied: false` for a resend or a beaten write).
pub(super) async fn perf_push(State(state): State<Arc<AppState>>, Extension(who): Extension<Caller>, headers: HeaderMap, body: Body) -> Result<Response, HttpError> {
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
pub(super) struct PerfChangesQuery {
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
pub(super) async fn perf_changes(
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
pub(super) struct Held {
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
pub(super) async fn changes(
    State(state): State<Arc<AppState>>,
    Extension(who): Extension<Caller>,
    query: Result<Query<ChangesQuery>, QueryRejection>,
) -> Result<Response, HttpError> {
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
pub(super) async fn ai_activity(
    State(state): State<Arc<AppState>>,
    Extension(who): Extension<Caller>,
    query: Result<Query<AiActivityQuery>, QueryRejection>,
) -> Result<Response, HttpError> {
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

pub(super) async fn project(State(state): State<Arc<AppState>>, Extension(who): Extension<Caller>, project_id: Result<Path<String>, PathRejection>) -> Result<Response, HttpError> {
    let caller = caller(who, Role::Viewer)?;
    let project_id = path_id("projectId", project_id)?;
    blocking(move || Ok(Json(state.storage.project(&caller.workspace_id, &project_id)?).into_response())).await
}

pub(super) async fn not_found() -> HttpError {
    HttpError::new(StatusCode::NOT_FOUND, "NOT_FOUND", "There is no such endpoint.")
}

pub(super) async fn method_not_allowed() -> HttpError {
    HttpError::new(StatusCode::METHOD_NOT_ALLOWED, "METHOD_NOT_ALLOWED", "This endpoint does not take that method.")
}
