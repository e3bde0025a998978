//! What reaches a handler: connections capped at the listener, [`guard`] checking the
//! token and the rates before a body is read, and every error body rewritten as
//! `{code, message, hints}`.

use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::extract::connect_info::Connected;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::serve::{IncomingStream, Listener};
use http_body_util::BodyExt;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::*;

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
pub(super) async fn guard(State(state): State<Arc<AppState>>, mut request: Request, next: Next) -> Response {
    let peer = request.extensions().get::<ConnectInfo<Peer>>().map(|c| c.0 .0);
    let answer = match admit(&state, peer, &mut request).await {
        Ok(_slot) => next.run(request).await,
        Err(error) => error.into_response(),
    };
    json_errors(answer).await
}

/// Lets a request in (see [`guard`]); the slot it holds among the requests handled at
/// once.
pub(super) async fn admit(state: &Arc<AppState>, peer: Option<IpAddr>, request: &mut Request) -> Result<OwnedSemaphorePermit, HttpError> {
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
pub(super) async fn json_errors(answer: Response) -> Response {
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
