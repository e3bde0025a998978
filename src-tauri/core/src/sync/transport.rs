//! HTTP to the workspace server: how a delivery travels.
//! The one module besides `llm::transport` that imports reqwest. It is its own small
//! client rather than the model client's: the sync protocol needs its own headers
//! (the dedupe key), one request per connection (a lost answer is then unambiguous),
//! its own status classification (409 stale base and in-flight, 422, 429) and no
//! model profile's proxy or CA settings. It sends and classifies; it decides nothing.

use std::time::Duration;

use inkstone_sync_proto::{
    ChangesResponse, ErrorBody, InviteRequest, IssuedToken, MembersResponse, PolicyRecord, PushRequest, PushResponse, StaleBase, WorkspaceInfo, WorkspacePolicy,
    IDEMPOTENCY_HEADER, MAX_ANSWER_BYTES,
};
use serde::de::DeserializeOwned;

use crate::llm::ApiKey;

/// The code of an answer longer than [`MAX_ANSWER_BYTES`] (reading stopped there):
/// an older server's page of changes can be; a smaller page is asked for then.
pub const ANSWER_TOO_LARGE: &str = "ANSWER_TOO_LARGE";

/// The code of an answer that is not the protocol's at all (not JSON: an HTML page,
/// an empty body): something other than a workspace server answered.
pub const NOT_THE_PROTOCOL: &str = "HTTP";
/// The code of a JSON answer of another shape: another service, or another version.
pub const BAD_ANSWER: &str = "BAD_ANSWER";

/// Why a request did not get a usable answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// No answer: the server is unreachable, the connection was reset, the wait timed
    /// out. The person is offline or the server is down.
    Network(String),
    /// An answer with an error status.
    Status { status: u16, code: String, message: String, retry_after_millis: Option<u64> },
}

impl Failure {
    /// A reason for the person: never a token (none is ever in a URL or a body).
    pub fn reason(&self) -> String {
        match self {
            Failure::Network(detail) => format!("the server could not be reached ({detail})"),
            Failure::Status { status, code, message, .. } => format!("{status} {code}: {message}"),
        }
    }

    /// A stable code for the UI to word the failure in the person's language:
    /// `UNREACHABLE`, or the server's error code (`UNAUTHORIZED`, `RATE_LIMITED`, ...),
    /// or the client's own (`HTTP`, `BAD_ANSWER`, `ENCODE`).
    pub fn code(&self) -> &str {
        match self {
            Failure::Network(_) => "UNREACHABLE",
            Failure::Status { code, .. } => code,
        }
    }
}

/// Why the sync client could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The HTTP client could not be built (no TLS backend, a bad system setting).
    #[error("{0}")]
    Client(#[source] reqwest::Error),
    /// The client's own runtime did not start (the OS refused a thread or the I/O driver).
    #[error("{0}")]
    Runtime(#[source] std::io::Error),
}

/// What became of a push.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PushAnswer {
    /// Numbered (201), or the original result of the same dedupe key (200).
    Accepted(PushResponse),
    /// 409: the base is not the server's head; what the client has not seen (with
    /// `more`, only part of it or none: the client pulls the rest).
    Stale(StaleBase),
    /// Try again later: a network failure, 5xx, 429, or the same key still in flight.
    /// `unreachable`: no answer at all (the person is offline or the server is down).
    Retry { failure: Failure, retry_after_millis: Option<u64>, unreachable: bool },
    /// Will not change by retrying: 400, 401, 403, 404, 413, 422.
    Refused { failure: Failure },
}

/// The HTTP client of the sync module, with its own small runtime.
pub struct Transport {
    client: reqwest::Client,
    runtime: tokio::runtime::Runtime,
    timeout: Duration,
}

impl std::fmt::Debug for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transport").field("timeout", &self.timeout).finish()
    }
}

fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<u64> {
    let value = headers.get("retry-after")?.to_str().ok()?;
    value.trim().parse::<u64>().ok().map(|seconds| seconds.saturating_mul(1000))
}

impl Transport {
    /// A client whose every request (connect, answer and body) ends within `timeout`.
    pub fn new(timeout: Duration) -> Result<Transport, StartError> {
        let client = reqwest::Client::builder()
            .connect_timeout(timeout)
            .user_agent(concat!("Inkstone/", env!("CARGO_PKG_VERSION")))
            // One request per connection: an answer lost with its connection belongs
            // to exactly one request, which the dedupe key makes safe to send again.
            .pool_max_idle_per_host(0)
            .tcp_nodelay(true)
            .build()
            .map_err(StartError::Client)?;
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(StartError::Runtime)?;
        Ok(Transport { client, runtime, timeout })
    }

    fn url(server_url: &str, path: &str) -> String {
        format!("{}{path}", server_url.trim_end_matches('/'))
    }

    /// Sends `request` and reads the answer: `Ok((status, headers-derived retry, body))`.
    fn send(&self, request: reqwest::RequestBuilder, token: &ApiKey) -> Result<(u16, Option<u64>, Vec<u8>), Failure> {
        let request = request.bearer_auth(token.expose()).header("connection", "close").header("accept", "application/json");
        self.runtime.block_on(async {
            let exchange = async {
                let mut response = request.send().await.map_err(|e| Failure::Network(describe(&e)))?;
                let status = response.status().as_u16();
                let after = retry_after(response.headers());
                let too_large = || Failure::Status {
                    status,
                    code: ANSWER_TOO_LARGE.to_owned(),
                    message: format!("the server's answer was longer than {MAX_ANSWER_BYTES} bytes"),
                    retry_after_millis: None,
                };
                // Reading stops at the bound: a longer answer is never held whole.
                if response.content_length().is_some_and(|n| n > MAX_ANSWER_BYTES as u64) {
                    return Err(too_large());
                }
                let mut body = Vec::with_capacity(response.content_length().map_or(0, |n| n as usize));
                while let Some(chunk) = response.chunk().await.map_err(|e| Failure::Network(describe(&e)))? {
                    if body.len() + chunk.len() > MAX_ANSWER_BYTES {
                        return Err(too_large());
                    }
                    body.extend_from_slice(&chunk);
                }
                Ok((status, after, body))
            };
            match tokio::time::timeout(self.timeout, exchange).await {
                Ok(result) => result,
                Err(_) => Err(Failure::Network(format!("no answer within {} ms", self.timeout.as_millis()))),
            }
        })
    }

    fn error(status: u16, retry_after_millis: Option<u64>, body: &[u8]) -> Failure {
        match serde_json::from_slice::<ErrorBody>(body) {
            Ok(error) => Failure::Status { status, code: error.code, message: error.message, retry_after_millis },
            Err(_) => Failure::Status { status, code: NOT_THE_PROTOCOL.to_owned(), message: format!("the server answered {status}"), retry_after_millis },
        }
    }

    /// The answer as `T`. An answer that is not JSON is [`NOT_THE_PROTOCOL`]; JSON of
    /// another shape is [`BAD_ANSWER`]. The parser's words stay in the message (the
    /// details), for whoever debugs it.
    fn json<T: DeserializeOwned>(status: u16, body: &[u8]) -> Result<T, Failure> {
        serde_json::from_slice(body).map_err(|e| {
            let code = match e.classify() {
                serde_json::error::Category::Syntax | serde_json::error::Category::Eof => NOT_THE_PROTOCOL,
                serde_json::error::Category::Data | serde_json::error::Category::Io => BAD_ANSWER,
            };
            Failure::Status { status, code: code.to_owned(), message: format!("the server's answer was not understood: {e}"), retry_after_millis: None }
        })
    }

    fn get<T: DeserializeOwned>(&self, server_url: &str, path: &str, token: &ApiKey) -> Result<T, Failure> {
        let (status, after, body) = self.send(self.client.get(Transport::url(server_url, path)), token)?;
        if (200..300).contains(&status) {
            Transport::json(status, &body)
        } else {
            Err(Transport::error(status, after, &body))
        }
    }

    /// The workspace and member the token names.
    pub fn workspace(&self, server_url: &str, token: &ApiKey) -> Result<WorkspaceInfo, Failure> {
        self.get(server_url, "/v1/workspace", token)
    }

    /// The workspace's members with their tokens' ids.
    pub fn members(&self, server_url: &str, token: &ApiKey) -> Result<MembersResponse, Failure> {
        self.get(server_url, "/v1/members", token)
    }

    /// Invites a member (owners only); the answer holds the new token, shown once.
    pub fn invite(&self, server_url: &str, token: &ApiKey, request: &InviteRequest) -> Result<IssuedToken, Failure> {
        let body = serde_json::to_vec(request).map_err(|e| Failure::Network(format!("the invite could not be encoded: {e}")))?;
        let http = self.client.post(Transport::url(server_url, "/v1/members")).header("content-type", "application/json").body(body);
        let (status, after, body) = self.send(http, token)?;
        if (200..300).contains(&status) {
            Transport::json(status, &body)
        } else {
            Err(Transport::error(status, after, &body))
        }
    }

    /// Revokes a token of the workspace (owners only).
    pub fn revoke(&self, server_url: &str, token: &ApiKey, token_id: &str) -> Result<(), Failure> {
        let (status, after, body) = self.send(self.client.delete(Transport::url(server_url, &format!("/v1/tokens/{token_id}"))), token)?;
        if (200..300).contains(&status) {
            Ok(())
        } else {
            Err(Transport::error(status, after, &body))
        }
    }

    /// The workspace's policy (a server that lists `workspacePolicy`).
    pub fn policy(&self, server_url: &str, token: &ApiKey) -> Result<PolicyRecord, Failure> {
        self.get(server_url, "/v1/policy", token)
    }

    /// Replaces the workspace's policy (owners only); the answer is the stored record.
    pub fn set_policy(&self, server_url: &str, token: &ApiKey, policy: &WorkspacePolicy) -> Result<PolicyRecord, Failure> {
        let body = serde_json::to_vec(policy).map_err(|e| Failure::Network(format!("the policy could not be encoded: {e}")))?;
        let http = self.client.put(Transport::url(server_url, "/v1/policy")).header("content-type", "application/json").body(body);
        let (status, after, body) = self.send(http, token)?;
        if (200..300).contains(&status) {
            Transport::json(status, &body)
        } else {
            Err(Transport::error(status, after, &body))
        }
    }

    /// The workspace's performance records written after `since`, at most `limit`
    /// (a server that lists `performanceData`).
    /// `with_days`: ask for accounts' days too (a server with `accountSnapshots`).
    pub fn perf_changes(&self, server_url: &str, token: &ApiKey, since: u64, limit: usize, with_days: bool) -> Result<inkstone_sync_proto::PerfChangesResponse, Failure> {
        let include = if with_days { format!("&include={}", inkstone_sync_proto::PERF_INCLUDE_ACCOUNT_SNAPSHOTS) } else { String::new() };
        self.get(server_url, &format!("/v1/perf?since={since}&limit={limit}{include}"), token)
    }

    /// Pushes performance records; each is acked in order.
    pub fn perf_push(&self, server_url: &str, token: &ApiKey, request: &inkstone_sync_proto::PerfPushRequest) -> Result<inkstone_sync_proto::PerfPushResponse, Failure> {
        let body = serde_json::to_vec(request).map_err(|e| Failure::Status {
            status: 0,
            code: "ENCODE".to_owned(),
            message: format!("the push could not be encoded: {e}"),
            retry_after_millis: None,
        })?;
        let http = self.client.post(Transport::url(server_url, "/v1/perf")).header("content-type", "application/json").body(body);
        let (status, after, body) = self.send(http, token)?;
        if (200..300).contains(&status) {
            Transport::json(status, &body)
        } else {
            Err(Transport::error(status, after, &body))
        }
    }

    /// The workspace's AI activity as the server shows it to this token's member.
    pub fn ai_activity(&self, server_url: &str, token: &ApiKey, query: &inkstone_sync_proto::AiActivityQuery) -> Result<inkstone_sync_proto::AiActivityResponse, Failure> {
        let (status, after, body) = self.send(self.client.get(Transport::url(server_url, "/v1/ai-activity")).query(query), token)?;
        if (200..300).contains(&status) {
            Transport::json(status, &body)
        } else {
            Err(Transport::error(status, after, &body))
        }
    }

    /// The workspace's versions after `since`, at most `limit` (a server pages by
    /// bytes as well; an older one by count only).
    pub fn changes(&self, server_url: &str, token: &ApiKey, since: u64, limit: usize) -> Result<ChangesResponse, Failure> {
        self.get(server_url, &format!("/v1/changes?since={since}&limit={limit}"), token)
    }

    /// Pushes versions of a project under a dedupe key.
    pub fn push(&self, server_url: &str, token: &ApiKey, project_id: &str, dedupe_key: &str, request: &PushRequest) -> PushAnswer {
        let body = match serde_json::to_vec(request) {
            Ok(body) => body,
            Err(e) => {
                return PushAnswer::Refused {
                    failure: Failure::Status { status: 0, code: "ENCODE".to_owned(), message: format!("the push could not be encoded: {e}"), retry_after_millis: None },
                }
            }
        };
        let http = self
            .client
            .post(Transport::url(server_url, &format!("/v1/projects/{project_id}/push")))
            .header("content-type", "application/json")
            .header(IDEMPOTENCY_HEADER, dedupe_key)
            .body(body);
        let (status, after, body) = match self.send(http, token) {
            Ok(answer) => answer,
            // An older server's 409 carries every newer version, possibly more than is
            // read: stale all the same; the client pulls them in pages.
            Err(Failure::Status { status: 409, code, .. }) if code == ANSWER_TOO_LARGE => {
                return PushAnswer::Stale(StaleBase { project_id: project_id.to_owned(), base: request.base, head: 0, newer: Vec::new(), more: true })
            }
            Err(failure @ Failure::Status { .. }) => return PushAnswer::Retry { failure, retry_after_millis: None, unreachable: false },
            Err(failure) => return PushAnswer::Retry { failure, retry_after_millis: None, unreachable: true },
        };
        if status == 200 || status == 201 {
            return match Transport::json::<PushResponse>(status, &body) {
                Ok(response) => PushAnswer::Accepted(response),
                // A garbled answer to a push that may have been stored: send it again;
                // the dedupe key returns the original result.
                Err(failure) => PushAnswer::Retry { failure, retry_after_millis: None, unreachable: false },
            };
        }
        let error = serde_json::from_slice::<ErrorBody>(&body).ok();
        match (status, error) {
            (409, Some(ErrorBody { stale: Some(stale), .. })) => PushAnswer::Stale(stale),
            // The same key is still being processed (or a 409 without its body): soon.
            (409, _) => PushAnswer::Retry {
                failure: Failure::Status { status, code: "IN_FLIGHT".to_owned(), message: "the server is still processing this push".to_owned(), retry_after_millis: after },
                retry_after_millis: Some(after.unwrap_or(200)),
                unreachable: false,
            },
            (429 | 500..=599, _) => PushAnswer::Retry { failure: Transport::error(status, after, &body), retry_after_millis: after, unreachable: false },
            _ => PushAnswer::Refused { failure: Transport::error(status, after, &body) },
        }
    }
}

/// A transport error in words, without the URL's query (there is no secret in it, but
/// the words are for a person).
fn describe(error: &reqwest::Error) -> String {
    if error.is_timeout() {
        "timed out".to_owned()
    } else if error.is_connect() {
        "connection refused or unreachable".to_owned()
    } else if error.is_body() || error.is_decode() {
        "the answer broke off".to_owned()
    } else {
        "the connection failed".to_owned()
    }
}
