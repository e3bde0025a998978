//! What can go wrong talking to a model, classified from HTTP statuses and the error
//! bodies real providers send (pure), and mapped onto API error codes with hints.
//!
//! Provider messages are kept for the user (they often say exactly what is wrong) but
//! shortened, and the caller scrubs the API key out of them ([`LlmError::scrub`]):
//! some servers echo the key they were given.

use std::time::Duration;

use crate::window::ServerKind;

mod classify;
mod hints;
#[cfg(test)]
mod tests;

pub use classify::{classify_status, classify_stream_error, overflow_counts, parse_retry_after, ProviderError};
pub use hints::{larger_window_hint, likely_context_too_long, likely_overflow};

/// Longest provider message kept, in characters.
const MAX_MESSAGE_CHARS: usize = 500;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LlmError {
    /// 401/403: the key is wrong, missing or not allowed to use the model.
    #[error("the provider refused the key (HTTP {status}): {message}")]
    Auth { status: u16, message: String },
    /// 429 that may succeed later.
    #[error("the provider is rate limiting requests: {message}")]
    RateLimited { retry_after: Option<Duration>, message: String },
    /// 429 `insufficient_quota`: the account is out of credit. Never retried.
    #[error("the provider account has no quota left: {message}")]
    InsufficientQuota { message: String },
    /// 5xx, or the connection was refused or reset.
    #[error("the provider is unavailable{}: {message}", status.map(|s| format!(" (HTTP {s})")).unwrap_or_default())]
    Unavailable { status: Option<u16>, message: String },
    /// 404: wrong base URL or model name.
    #[error("the provider does not know this URL or model: {message}")]
    NotFound { message: String },
    /// Another 4xx: the provider refused the request as it was.
    #[error("the provider refused the request (HTTP {status}): {message}")]
    Rejected { status: u16, message: String },
    /// The server does not take the `response_format` the request asked for (llama.cpp's
    /// server before `json_schema`, DeepSeek, LM Studio for `json_object`): the form is
    /// not sent to it again. Never retried: the same request gets the same answer.
    #[error("the server does not take this structured-output form (HTTP {status}): {message}")]
    FormRejected { status: u16, message: String },
    /// The prompt does not fit the model's context window. The numbers are the
    /// server's, when its answer says them; `server` is the family whose wording it was
    /// (or, set by the runtime, the profile's detected server).
    #[error("the request is longer than the model's context window{}: {message}", overflow_figures(*prompt_tokens, *window))]
    ContextTooLong { message: String, prompt_tokens: Option<u64>, window: Option<u64>, server: Option<ServerKind> },
    /// A stream that ended before the reply was finished, with no error in it: the
    /// server stopped without saying why (its own log does).
    /// `nothing_arrived`: not a word of it (no text, reasoning or tool call) had come.
    #[error("the server ended the answer before it was finished: {detail}")]
    Incomplete { detail: String, nothing_arrived: bool },
    /// The server finished a reply that holds nothing: no text, no reasoning, no tool
    /// call.
    #[error("the model sent an empty reply (finish reason: {finish})")]
    EmptyReply { finish: String },
    /// The model kept writing the same sentence; generation was stopped.
    #[error("the model repeated itself ({times} times: \"{excerpt}\"), so its answer was stopped")]
    Repetition { excerpt: String, times: u32 },
    /// The answer is not what an OpenAI-compatible server sends: malformed JSON, a
    /// broken stream, a stream without a finish, an embedding count that does not match.
    #[error("the provider's answer is not usable: {detail}")]
    BadResponse { detail: String },
    /// The structured output still did not match its schema after the repairs.
    #[error("the model's output did not match the expected shape after {attempts} attempts: {detail}")]
    InvalidOutput { attempts: u32, detail: String },
    #[error("no answer within {} s", after.as_secs_f64())]
    Timeout { after: Duration },
    /// DNS failed or the network is down.
    #[error("cannot reach the provider: {detail}")]
    Offline { detail: String },
    /// TLS failed: a certificate problem, or an HTTPS URL pointing at a plain HTTP port.
    #[error("a secure connection to the provider failed: {detail}")]
    Tls { detail: String },
    /// The caller cancelled.
    #[error("cancelled")]
    Cancelled,
    /// The endpoint settings are unusable (an invalid URL, proxy or certificate).
    #[error("the connection settings are invalid: {detail}")]
    Config { detail: String },
}

impl LlmError {
    /// Whether trying again may help: 429 (but not `insufficient_quota`) and 5xx only.
    pub fn is_retryable(&self) -> bool {
        match self {
            LlmError::RateLimited { .. } => true,
            LlmError::Unavailable { status, .. } => status.is_some_and(|s| s >= 500),
            LlmError::Auth { .. }
            | LlmError::InsufficientQuota { .. }
            | LlmError::NotFound { .. }
            | LlmError::Rejected { .. }
            | LlmError::FormRejected { .. }
            | LlmError::ContextTooLong { .. }
            | LlmError::Incomplete { .. }
            | LlmError::EmptyReply { .. }
            | LlmError::Repetition { .. }
            | LlmError::BadResponse { .. }
            | LlmError::InvalidOutput { .. }
            | LlmError::Timeout { .. }
            | LlmError::Offline { .. }
            | LlmError::Tls { .. }
            | LlmError::Cancelled
            | LlmError::Config { .. } => false,
        }
    }

    /// The server's hint of when to retry.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            LlmError::RateLimited { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// Replaces every occurrence of `secret` in the messages with `[redacted]`.
    pub fn scrub(self, secret: Option<&str>) -> LlmError {
        let Some(secret) = secret.filter(|s| s.len() >= 4) else { return self };
        let clean = |text: String| text.replace(secret, "[redacted]");
        match self {
            LlmError::Auth { status, message } => LlmError::Auth { status, message: clean(message) },
            LlmError::RateLimited { retry_after, message } => LlmError::RateLimited { retry_after, message: clean(message) },
            LlmError::InsufficientQuota { message } => LlmError::InsufficientQuota { message: clean(message) },
            LlmError::Unavailable { status, message } => LlmError::Unavailable { status, message: clean(message) },
            LlmError::NotFound { message } => LlmError::NotFound { message: clean(message) },
            LlmError::Rejected { status, message } => LlmError::Rejected { status, message: clean(message) },
            LlmError::FormRejected { status, message } => LlmError::FormRejected { status, message: clean(message) },
            LlmError::ContextTooLong { message, prompt_tokens, window, server } => LlmError::ContextTooLong { message: clean(message), prompt_tokens, window, server },
            LlmError::Incomplete { detail, nothing_arrived } => LlmError::Incomplete { detail: clean(detail), nothing_arrived },
            LlmError::EmptyReply { finish } => LlmError::EmptyReply { finish },
            LlmError::Repetition { excerpt, times } => LlmError::Repetition { excerpt: clean(excerpt), times },
            LlmError::BadResponse { detail } => LlmError::BadResponse { detail: clean(detail) },
            LlmError::InvalidOutput { attempts, detail } => LlmError::InvalidOutput { attempts, detail: clean(detail) },
            LlmError::Timeout { after } => LlmError::Timeout { after },
            LlmError::Offline { detail } => LlmError::Offline { detail: clean(detail) },
            LlmError::Tls { detail } => LlmError::Tls { detail: clean(detail) },
            LlmError::Cancelled => LlmError::Cancelled,
            LlmError::Config { detail } => LlmError::Config { detail: clean(detail) },
        }
    }
}

/// Shortens a provider message to something fit for an error.
pub fn shorten(text: &str) -> String {
    let text = text.trim();
    if text.chars().count() <= MAX_MESSAGE_CHARS {
        return text.to_owned();
    }
    let mut short: String = text.chars().take(MAX_MESSAGE_CHARS).collect();
    short.push('…');
    short
}

fn overflow_figures(prompt_tokens: Option<u64>, window: Option<u64>) -> String {
    match (prompt_tokens, window) {
        (Some(prompt), Some(window)) => format!(" ({prompt} prompt tokens, a window of {window})"),
        (None, Some(window)) => format!(" (a window of {window})"),
        (Some(prompt), None) => format!(" ({prompt} prompt tokens)"),
        (None, None) => String::new(),
    }
}
