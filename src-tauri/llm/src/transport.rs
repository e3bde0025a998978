//! HTTP for the model client. The only module in the workspace's core that imports
//! reqwest (rustls, no system OpenSSL). It sends, applies the timeouts and turns
//! transport failures into [`LlmError`]s; it knows nothing about chat completions.
//!
//! Timeouts: `timeout` bounds the connection, the wait for the response headers, and
//! every gap between two body chunks, but not a long answer that keeps streaming.

use std::time::Duration;

use bytes::Bytes;

use super::error::{parse_retry_after, LlmError};
use super::{ApiKey, Endpoint};

/// The longest body read in full (error bodies, completions, model lists, embeddings).
pub const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;

/// How long an unused connection is kept for the next request. Below the 5 seconds
/// after which uvicorn (vLLM, llama-cpp-python) closes an idle one, so a request is
/// not sent on a connection the server is closing at that moment.
pub const POOL_IDLE: Duration = Duration::from_secs(4);

/// A client for one endpoint's network settings.
#[derive(Debug, Clone)]
pub struct Http {
    client: reqwest::Client,
    timeout: Duration,
}

/// Everything of an [`Endpoint`] that [`Http::new`] builds its client from: two
/// endpoints with equal settings can share one client (its root certificates, loaded
/// from the system when it is built, and its open connections); the URL, model and
/// key travel with each request.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct HttpSettings {
    pub timeout: Duration,
    pub proxy_url: Option<String>,
    pub ca_cert_pem: Option<Vec<u8>>,
}

impl HttpSettings {
    pub fn of(endpoint: &Endpoint) -> HttpSettings {
        HttpSettings { timeout: endpoint.timeout, proxy_url: endpoint.proxy_url.clone(), ca_cert_pem: endpoint.ca_cert_pem.clone() }
    }
}

impl Http {
    pub fn new(endpoint: &Endpoint) -> Result<Http, LlmError> {
        Http::with_settings(&HttpSettings::of(endpoint))
    }

    pub fn with_settings(settings: &HttpSettings) -> Result<Http, LlmError> {
        let mut builder =
            reqwest::Client::builder().connect_timeout(settings.timeout).user_agent(concat!("Inkstone/", env!("CARGO_PKG_VERSION"))).tcp_nodelay(true).pool_idle_timeout(POOL_IDLE);
        if let Some(proxy) = settings.proxy_url.as_deref().filter(|p| !p.trim().is_empty()) {
            let proxy = reqwest::Proxy::all(proxy.trim()).map_err(|e| LlmError::Config { detail: format!("the proxy URL is invalid: {e}") })?;
            builder = builder.proxy(proxy);
        }
        if let Some(pem) = &settings.ca_cert_pem {
            let certificate = reqwest::Certificate::from_pem(pem).map_err(|e| LlmError::Config { detail: format!("the CA certificate is not valid PEM: {e}") })?;
            builder = builder.add_root_certificate(certificate);
        }
        let client = builder.build().map_err(|e| LlmError::Config { detail: e.to_string() })?;
        Ok(Http { client, timeout: settings.timeout })
    }

    /// POSTs a JSON body.
    pub async fn post_json(&self, url: &str, key: Option<&ApiKey>, body: Vec<u8>) -> Result<HttpResponse, LlmError> {
        let request = self.client.post(url).header("content-type", "application/json").header("accept", "application/json, text/event-stream").body(body);
        self.send(request, key).await
    }

    pub async fn get(&self, url: &str, key: Option<&ApiKey>) -> Result<HttpResponse, LlmError> {
        self.send(self.client.get(url), key).await
    }

    async fn send(&self, mut request: reqwest::RequestBuilder, key: Option<&ApiKey>) -> Result<HttpResponse, LlmError> {
        if let Some(key) = key.filter(|k| !k.is_blank()) {
            request = request.bearer_auth(key.expose());
        }
        let response = match tokio::time::timeout(self.timeout, request.send()).await {
            Ok(Ok(response)) => response,
            Ok(Err(error)) => return Err(map_error(&error, self.timeout)),
            Err(_) => return Err(LlmError::Timeout { after: self.timeout }),
        };
        let header = |name: &str| response.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
        let retry_after = parse_retry_after(header("retry-after-ms").as_deref(), header("retry-after").as_deref());
        let content_type = header("content-type").unwrap_or_default().to_ascii_lowercase();
        Ok(HttpResponse {
            status: response.status().as_u16(),
            content_type,
            retry_after,
            response,
            timeout: self.timeout,
            idle: Box::pin(tokio::time::sleep(self.timeout)),
            last_read: tokio::time::Instant::now(),
            read: 0,
        })
    }
}

/// The most settings [`HttpCache`] keeps a client for (the oldest used goes first).
const CACHED_CLIENTS: usize = 8;

/// Clients by their [`HttpSettings`], each built once: building one loads the
/// system's root certificates (milliseconds), and a kept client reuses its open
/// connections for the next call. A profile whose timeout, proxy or CA certificate
/// changed has other settings, so it gets a client of its own, never the old one.
#[derive(Debug, Default)]
pub struct HttpCache {
    clients: std::sync::Mutex<Vec<(HttpSettings, Http)>>,
    built: std::sync::atomic::AtomicU64,
}

impl HttpCache {
    /// The client for `endpoint`'s settings: the kept one, or a new one (kept unless
    /// building it failed, so a bad proxy URL or certificate fails every call alike).
    pub fn get(&self, endpoint: &Endpoint) -> Result<Http, LlmError> {
        let settings = HttpSettings::of(endpoint);
        let mut clients = self.clients.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(at) = clients.iter().position(|(kept, _)| *kept == settings) {
            let entry = clients.remove(at);
            let http = entry.1.clone();
            clients.push(entry);
            return Ok(http);
        }
        let http = Http::with_settings(&settings)?;
        self.built.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if clients.len() >= CACHED_CLIENTS {
            clients.remove(0);
        }
        clients.push((settings, http.clone()));
        Ok(http)
    }

    /// How many clients were built so far.
    pub fn built(&self) -> u64 {
        self.built.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// A response whose body has not been read yet.
#[derive(Debug)]
pub struct HttpResponse {
    pub status: u16,
    pub content_type: String,
    pub retry_after: Option<Duration>,
    response: reqwest::Response,
    timeout: Duration,
    idle: std::pin::Pin<Box<tokio::time::Sleep>>,
    last_read: tokio::time::Instant,
    read: usize,
}

impl HttpResponse {
    /// The next piece of the body, `None` at its end. Fails when no byte arrives
    /// within the timeout, when the connection breaks, or past [`MAX_BODY_BYTES`].
    pub async fn next_chunk(&mut self) -> Result<Option<Bytes>, LlmError> {
        // One timer for the whole body. It is not re-armed per chunk (a timer-wheel
        // update for every one of thousands of deltas): when it fires early, it moves to
        // the last chunk's time plus the timeout and waits on.
        let read = loop {
            tokio::select! {
                biased;
                chunk = self.response.chunk() => break Ok(chunk),
                _ = self.idle.as_mut() => {
                    let deadline = self.last_read + self.timeout;
                    if tokio::time::Instant::now() >= deadline {
                        break Err(());
                    }
                    self.idle.as_mut().reset(deadline);
                }
            }
        };
        self.last_read = tokio::time::Instant::now();
        match read {
            Ok(Ok(Some(chunk))) => {
                self.read += chunk.len();
                if self.read > MAX_BODY_BYTES {
                    return Err(LlmError::BadResponse { detail: format!("the answer is larger than {} MiB", MAX_BODY_BYTES / 1024 / 1024) });
                }
                Ok(Some(chunk))
            }
            Ok(Ok(None)) => Ok(None),
            Ok(Err(error)) => Err(map_error(&error, self.timeout)),
            Err(_) => Err(LlmError::Timeout { after: self.timeout }),
        }
    }

    /// The whole body.
    pub async fn read_all(mut self) -> Result<Vec<u8>, LlmError> {
        let mut body = Vec::new();
        while let Some(chunk) = self.next_chunk().await? {
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }
}

/// Classifies a transport failure by walking the error's causes.
fn map_error(error: &reqwest::Error, timeout: Duration) -> LlmError {
    if error.is_timeout() {
        return LlmError::Timeout { after: timeout };
    }
    let mut chain = Vec::new();
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    let mut refused = false;
    while let Some(cause) = source {
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            refused |= matches!(io.kind(), std::io::ErrorKind::ConnectionRefused);
        }
        chain.push(cause.to_string());
        source = cause.source();
    }
    // The URL never holds the key (it travels in a header), so the chain is safe to show.
    let detail = chain.last().cloned().unwrap_or_else(|| error.to_string());
    let text = chain.join(": ").to_ascii_lowercase();
    if refused {
        return LlmError::Unavailable { status: None, message: format!("the connection was refused ({detail})") };
    }
    if ["dns error", "failed to lookup", "name or service not known", "no such host", "nodename nor servname"].iter().any(|n| text.contains(n)) {
        return LlmError::Offline { detail: format!("the host name could not be resolved ({detail})") };
    }
    if ["certificate", "invalidcontenttype", "tls", "ssl", "handshake", "corrupt message"].iter().any(|n| text.contains(n)) {
        return LlmError::Tls { detail };
    }
    if error.is_connect() {
        return LlmError::Offline { detail };
    }
    if error.is_body() || error.is_decode() || error.is_request() {
        return LlmError::BadResponse { detail: format!("the connection broke during the answer ({detail})") };
    }
    LlmError::Unavailable { status: None, message: detail }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint(base_url: &str) -> Endpoint {
        Endpoint { base_url: base_url.to_owned(), model: "m".to_owned(), api_key: None, timeout: Duration::from_secs(60), proxy_url: None, ca_cert_pem: None }
    }

    #[test]
    fn a_client_is_built_once_per_network_settings() {
        let cache = HttpCache::default();
        let first = endpoint("http://127.0.0.1:9/v1");
        cache.get(&first).unwrap();
        cache.get(&first).unwrap();
        // The URL, the model and the key go with each request, not into the client.
        let other = Endpoint { model: "other".to_owned(), api_key: Some(ApiKey::new("sk-x")), ..endpoint("http://10.0.0.1:8000/v1") };
        cache.get(&other).unwrap();
        assert_eq!(cache.built(), 1);

        // A changed timeout, proxy or CA certificate gets a new client.
        let slower = Endpoint { timeout: Duration::from_secs(5), ..first.clone() };
        cache.get(&slower).unwrap();
        assert_eq!(cache.built(), 2);
        let proxied = Endpoint { proxy_url: Some("http://127.0.0.1:3128".to_owned()), ..first.clone() };
        cache.get(&proxied).unwrap();
        assert_eq!(cache.built(), 3);
        let with_ca = Endpoint { ca_cert_pem: Some(b"# no certificate yet".to_vec()), ..first.clone() };
        cache.get(&with_ca).unwrap();
        let other_ca = Endpoint { ca_cert_pem: Some(b"# another file".to_vec()), ..first.clone() };
        cache.get(&other_ca).unwrap();
        assert_eq!(cache.built(), 5);
        // Each kept client is found again.
        for endpoint in [&first, &slower, &proxied, &with_ca, &other_ca] {
            cache.get(endpoint).unwrap();
        }
        assert_eq!(cache.built(), 5);
    }

    #[test]
    fn a_bad_setting_fails_every_call_and_is_not_kept() {
        let cache = HttpCache::default();
        let bad = Endpoint { proxy_url: Some("http://[::1".to_owned()), ..endpoint("http://127.0.0.1:9/v1") };
        for _ in 0..2 {
            assert!(matches!(cache.get(&bad), Err(LlmError::Config { .. })));
        }
        assert_eq!(cache.built(), 0);
    }

    #[test]
    fn the_oldest_used_client_goes_first() {
        let cache = HttpCache::default();
        let timed = |s: u64| Endpoint { timeout: Duration::from_secs(s), ..endpoint("http://127.0.0.1:9/v1") };
        for s in 1..=CACHED_CLIENTS as u64 {
            cache.get(&timed(s)).unwrap();
        }
        cache.get(&timed(1)).unwrap();
        cache.get(&timed(100)).unwrap();
        assert_eq!(cache.built(), CACHED_CLIENTS as u64 + 1);
        cache.get(&timed(1)).unwrap();
        assert_eq!(cache.built(), CACHED_CLIENTS as u64 + 1, "the one used last is kept");
        cache.get(&timed(2)).unwrap();
        assert_eq!(cache.built(), CACHED_CLIENTS as u64 + 2, "the oldest used went");
    }
}
