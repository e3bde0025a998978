//! What can go wrong talking to a model, classified from HTTP statuses and the error
//! bodies real providers send (pure), and mapped onto API error codes with hints.
//!
//! Provider messages are kept for the user (they often say exactly what is wrong) but
//! shortened, and the caller scrubs the API key out of them ([`LlmError::scrub`]):
//! some servers echo the key they were given.

use std::time::Duration;

use serde_json::Value;

use super::window::{suggested_window, ServerKind};
use inkstone_error::{ApiError, ErrorCode};

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

/// The `{message, type, code}` of an OpenAI-style error body, tolerating the variants
/// servers send (`{"error": "text"}`, `{"message": ...}`, `{"detail": ...}`, codes as
/// numbers, vLLM's `{"object": "error", ...}`, Ollama's message that holds its runner's
/// whole JSON error as text), with the token counts of a context overflow when the body
/// or its wording gives them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProviderError {
    pub message: String,
    pub kind: String,
    pub code: String,
    /// The prompt's tokens as the server counted them.
    pub prompt_tokens: Option<u64>,
    /// The window the server has for the request.
    pub window: Option<u64>,
}

impl ProviderError {
    pub fn from_value(value: &Value) -> ProviderError {
        let error = value.get("error").unwrap_or(value);
        let text = |v: Option<&Value>| match v {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Number(n)) => n.to_string(),
            _ => String::new(),
        };
        if let Value::String(message) = error {
            // Ollama wraps its runner's (llama.cpp's) JSON error in a string.
            if let Some(inner) = message.trim_start().starts_with('{').then(|| serde_json::from_str::<Value>(message).ok()).flatten() {
                let inner = ProviderError::from_value(&inner);
                if !inner.message.is_empty() {
                    return inner;
                }
            }
            return ProviderError { message: message.clone(), ..ProviderError::default() }.with_counts_from_message();
        }
        let mut message = text(error.get("message"));
        if message.is_empty() {
            message = text(error.get("detail"));
        }
        if message.is_empty() {
            message = text(value.get("detail"));
        }
        if message.trim_start().starts_with('{') {
            if let Ok(inner) = serde_json::from_str::<Value>(&message) {
                let inner = ProviderError::from_value(&inner);
                if !inner.message.is_empty() {
                    return inner;
                }
            }
        }
        let count = |key: &str| error.get(key).and_then(Value::as_u64);
        ProviderError { message, kind: text(error.get("type")), code: text(error.get("code")), prompt_tokens: count("n_prompt_tokens"), window: count("n_ctx") }
            .with_counts_from_message()
    }

    pub fn from_body(body: &[u8]) -> ProviderError {
        match serde_json::from_slice::<Value>(body) {
            Ok(value) => ProviderError::from_value(&value),
            Err(_) => ProviderError { message: String::from_utf8_lossy(body).into_owned(), ..ProviderError::default() }.with_counts_from_message(),
        }
    }

    /// Fills the counts the message states and the body's fields did not.
    fn with_counts_from_message(mut self) -> ProviderError {
        let (prompt, window) = overflow_counts(&self.message);
        self.prompt_tokens = self.prompt_tokens.or(prompt);
        self.window = self.window.or(window);
        self
    }

    fn mentions_context_overflow(&self) -> bool {
        let code = self.code.to_ascii_lowercase();
        let kind = self.kind.to_ascii_lowercase();
        let message = self.message.to_ascii_lowercase();
        code == "context_length_exceeded"
            || kind == "context_length_exceeded"
            || kind == "exceed_context_size_error"
            || code == "string_above_max_length"
            || [
                "maximum context length",
                "context length",
                "context window",
                "context size",
                "contextwindowexceeded",
                "too many tokens",
                "prompt is too long",
                "input is too long",
                "exceeds the context",
                "reduce the length",
                "range of input length",
                // llama.cpp before it named the context: a prompt longer than a batch.
                "input is too large to process",
            ]
            .iter()
            .any(|needle| message.contains(needle))
    }

    /// The server family whose wording this is, when it is recognisable.
    fn server(&self) -> Option<ServerKind> {
        let message = self.message.to_ascii_lowercase();
        if self.kind == "exceed_context_size_error" || message.contains("available context size") || message.contains("physical batch size") {
            Some(ServerKind::LlamaCpp)
        } else if message.contains("input length exceeds the context length") {
            Some(ServerKind::Ollama)
        } else if self.kind == "BadRequestError" || message.contains("however, you requested") || message.contains("in the messages,") {
            Some(ServerKind::Vllm)
        } else {
            None
        }
    }

    fn context_too_long(&self, message: String) -> LlmError {
        LlmError::ContextTooLong { message, prompt_tokens: self.prompt_tokens, window: self.window, server: self.server() }
    }

    /// Whether the server says it does not take the request's `response_format` type:
    /// llama.cpp ("response_format type must be one of \"text\" or \"json_object\", but
    /// got: json_schema"), DeepSeek ("This response_format type is unavailable now"),
    /// LM Studio ("'response_format.type' must be 'json_schema' or 'text'"), and the
    /// like. A message that names the field without refusing its type is not one.
    fn refuses_response_format(&self) -> bool {
        let message = self.message.to_ascii_lowercase();
        message.contains("response_format")
            && ["must be", "unavailable", "not supported", "unsupported", "is not allowed", "invalid value", "not available"].iter().any(|needle| message.contains(needle))
    }

    fn is_insufficient_quota(&self) -> bool {
        self.code == "insufficient_quota" || self.kind == "insufficient_quota" || self.message.contains("exceeded your current quota")
    }
}

/// The prompt tokens and the window an overflow message states, in the wordings of
/// llama.cpp ("request (4519 tokens) exceeds the available context size (4096
/// tokens)"), vLLM and OpenAI ("maximum context length is 4096 tokens. However, you
/// requested 5000 tokens (4519 in the messages, 481 in the completion)", "your messages
/// resulted in 5000 tokens", "your request has 4519 input tokens").
pub fn overflow_counts(message: &str) -> (Option<u64>, Option<u64>) {
    static PATTERNS: std::sync::OnceLock<[regex::Regex; 5]> = std::sync::OnceLock::new();
    let [llama, max_len, in_messages, resulted, request_has] = PATTERNS.get_or_init(|| {
        let re = |p: &str| regex::Regex::new(p).unwrap_or_else(|e| panic!("overflow pattern: {e}"));
        [
            re(r"(?i)request \(([\d,]+) tokens\) exceeds the available context size \(([\d,]+) tokens\)"),
            re(r"(?i)maximum (?:context|input|prompt) length is ([\d,]+)"),
            re(r"(?i)\(([\d,]+) in the messages"),
            re(r"(?i)(?:messages resulted in|you requested) ([\d,]+) tokens"),
            re(r"(?i)request has ([\d,]+) input tokens"),
        ]
    });
    let number = |m: Option<regex::Match<'_>>| m.and_then(|m| m.as_str().replace(',', "").parse::<u64>().ok());
    if let Some(c) = llama.captures(message) {
        return (number(c.get(1)), number(c.get(2)));
    }
    let window = max_len.captures(message).and_then(|c| number(c.get(1)));
    let prompt = in_messages.captures(message).or_else(|| request_has.captures(message)).or_else(|| resulted.captures(message)).and_then(|c| number(c.get(1)));
    (prompt, window)
}

fn overflow_figures(prompt_tokens: Option<u64>, window: Option<u64>) -> String {
    match (prompt_tokens, window) {
        (Some(prompt), Some(window)) => format!(" ({prompt} prompt tokens, a window of {window})"),
        (None, Some(window)) => format!(" (a window of {window})"),
        (Some(prompt), None) => format!(" ({prompt} prompt tokens)"),
        (None, None) => String::new(),
    }
}

/// Classifies a non-success HTTP answer. `retry_after` comes from the response's
/// `retry-after-ms` / `retry-after` headers (see [`parse_retry_after`]).
pub fn classify_status(status: u16, body: &[u8], retry_after: Option<Duration>) -> LlmError {
    let provider = ProviderError::from_body(body);
    let message = if provider.message.trim().is_empty() { format!("HTTP {status}") } else { shorten(&provider.message) };
    match status {
        401 | 403 => LlmError::Auth { status, message },
        429 if provider.is_insufficient_quota() => LlmError::InsufficientQuota { message },
        429 => LlmError::RateLimited { retry_after, message },
        404 => LlmError::NotFound { message },
        408 => LlmError::Timeout { after: Duration::ZERO },
        413 => provider.context_too_long(message),
        400..=499 if provider.mentions_context_overflow() => provider.context_too_long(message),
        // llama.cpp answers its refusal with a 500 (a thrown `runtime_error`).
        400..=599 if provider.refuses_response_format() => LlmError::FormRejected { status, message },
        400..=499 => LlmError::Rejected { status, message },
        500..=599 if provider.mentions_context_overflow() => provider.context_too_long(message),
        _ => LlmError::Unavailable { status: Some(status), message },
    }
}

/// Classifies an `{"error": ...}` object that arrived inside a 200 stream. Servers put
/// an HTTP-like status in `code` or `status` when they have one.
pub fn classify_stream_error(value: &Value) -> LlmError {
    let provider = ProviderError::from_value(value);
    let status = value
        .get("error")
        .and_then(|e| e.get("status").or_else(|| e.get("code")))
        .and_then(|v| v.as_u64().or_else(|| v.as_str().and_then(|s| s.parse().ok())))
        .and_then(|s| u16::try_from(s).ok())
        .filter(|s| (400..600).contains(s));
    let message = if provider.message.is_empty() { "an error arrived in the stream".to_owned() } else { shorten(&provider.message) };
    if provider.mentions_context_overflow() {
        return provider.context_too_long(message);
    }
    if provider.is_insufficient_quota() {
        return LlmError::InsufficientQuota { message };
    }
    match status {
        Some(status) => classify_status(status, value.to_string().as_bytes(), None),
        None if provider.kind.contains("rate_limit") || provider.code.contains("rate_limit") => LlmError::RateLimited { retry_after: None, message },
        None if provider.kind.contains("server_error") || provider.kind.contains("overloaded") => LlmError::Unavailable { status: Some(500), message },
        None => LlmError::Incomplete { detail: format!("the server reported an error in the stream: {message}"), nothing_arrived: false },
    }
}

/// The retry hint of a response: `retry-after-ms` (milliseconds, OpenAI) wins over
/// `retry-after` (seconds; an HTTP date is ignored).
pub fn parse_retry_after(retry_after_ms: Option<&str>, retry_after: Option<&str>) -> Option<Duration> {
    let from_ms = retry_after_ms.and_then(|v| v.trim().parse::<f64>().ok()).filter(|v| v.is_finite() && *v >= 0.0).map(|ms| Duration::from_secs_f64(ms / 1000.0));
    from_ms.or_else(|| retry_after.and_then(|v| v.trim().parse::<f64>().ok()).filter(|v| v.is_finite() && *v >= 0.0).map(Duration::from_secs_f64))
}

impl From<LlmError> for ApiError {
    fn from(error: LlmError) -> Self {
        let message = format!("{}{}", capitalize(&error.to_string()), ".");
        match error {
            LlmError::Auth { status, .. } => ApiError::new(ErrorCode::ProviderAuth, message)
                .hint("check_api_key", "Check the API key of this profile; set it again if it changed.")
                .hint("check_model_access", "Check that the key may use this model.")
                .details(serde_json::json!({ "status": status })),
            LlmError::RateLimited { retry_after, .. } => ApiError::new(ErrorCode::ProviderRateLimited, message)
                .hint("wait_and_retry", "Wait a moment and try again.")
                .details(serde_json::json!({ "retryAfterMs": retry_after.map(|d| d.as_millis() as u64), "insufficientQuota": false })),
            LlmError::InsufficientQuota { .. } => ApiError::new(ErrorCode::ProviderRateLimited, message)
                .hint("check_billing", "The provider account is out of credit or over its plan; add credit or use another profile.")
                .details(serde_json::json!({ "insufficientQuota": true })),
            LlmError::Unavailable { status, .. } => ApiError::new(ErrorCode::ProviderUnavailable, message)
                .hint("retry_later", "The provider may be down or overloaded; try again later.")
                .hint("check_server_running", "For a local server (Ollama, LM Studio, llama.cpp, vLLM), check that it is running and listening on the profile's address.")
                .details(serde_json::json!({ "status": status })),
            LlmError::NotFound { .. } => ApiError::new(ErrorCode::ProviderNotFound, message)
                .hint("check_base_url", "Check the base URL; most servers expect it to end in /v1.")
                .hint("check_model", "Check the model name; pick one from the server's model list."),
            LlmError::Rejected { status, .. } => ApiError::new(ErrorCode::ProviderRejected, message)
                .hint("check_model_options", "The server refused the request as sent; check the model name and that the server supports this kind of request (for example tools).")
                .details(serde_json::json!({ "status": status })),
            LlmError::FormRejected { status, .. } => {
                ApiError::new(ErrorCode::ProviderRejected, message).action("test_profile_form", &[]).details(serde_json::json!({ "status": status, "formRejected": true }))
            }
            LlmError::ContextTooLong { prompt_tokens, window, server, .. } => context_too_long(message, prompt_tokens, window, server),
            LlmError::Incomplete { nothing_arrived, .. } => ApiError::new(ErrorCode::ProviderBadResponse, message)
                .problem("model.incomplete", &[])
                .hint("retry_connection", "If it worked before, try again; the connection may have been cut.")
                .hint(
                    "check_server_running",
                    "For a local server (Ollama, LM Studio, llama.cpp, vLLM), check that it is running and listening on the profile's address; its log says why it stopped.",
                )
                .details(serde_json::json!({ "incomplete": true, "nothingArrived": nothing_arrived })),
            LlmError::EmptyReply { ref finish } => {
                let error = ApiError::new(ErrorCode::ProviderBadResponse, message)
                    .problem("model.empty_reply", &[("finish", finish)])
                    .hint("retry_empty", "Try again; a model sometimes ends at once. If it keeps answering nothing, check the server's log or try another model.")
                    .details(serde_json::json!({ "emptyReply": true, "finishReason": finish }));
                if finish == "length" {
                    error.hint("raise_max_output", "The reply stopped at the output limit before any text: raise the profile's output limit, or use a model that thinks less.")
                } else {
                    error
                }
            }
            LlmError::Repetition { ref excerpt, times } => ApiError::new(ErrorCode::ProviderBadResponse, message)
                .problem("model.repetition", &[("times", &times.to_string()), ("excerpt", excerpt)])
                .hint("retry_repetition", "Try again; if the model keeps repeating itself, lower its temperature, raise its repeat penalty, or use another model.")
                .details(serde_json::json!({ "repetition": true, "times": times })),
            LlmError::BadResponse { .. } => ApiError::new(ErrorCode::ProviderBadResponse, message)
                .hint("check_compatible", "Check that the base URL points at an OpenAI-compatible API (it usually ends in /v1).")
                .hint("retry_connection", "If it worked before, try again; the connection may have been cut."),
            LlmError::InvalidOutput { attempts, .. } => ApiError::new(ErrorCode::ProviderBadResponse, message)
                .hint("try_other_model", "This model did not produce the expected structure; try again or use a stronger model.")
                .details(serde_json::json!({ "attempts": attempts })),
            LlmError::Timeout { after } => ApiError::new(ErrorCode::Timeout, message)
                .hint("raise_timeout", "Raise the profile's timeout, or try again when the server is less busy.")
                .details(serde_json::json!({ "afterMs": after.as_millis() as u64 })),
            LlmError::Offline { .. } => {
                ApiError::new(ErrorCode::Offline, message).hint("check_network", "Check the network connection.").hint("check_base_url", "Check the host name in the base URL.")
            }
            LlmError::Tls { .. } => ApiError::new(ErrorCode::ProviderUnavailable, message)
                .hint("check_https", "Check whether the server speaks HTTPS or plain HTTP, and the URL's scheme.")
                .hint("custom_ca", "Behind a company proxy, add its CA certificate to the profile."),
            LlmError::Cancelled => ApiError::new(ErrorCode::Cancelled, message),
            LlmError::Config { .. } => ApiError::new(ErrorCode::Validation, message).hint("check_profile", "Check the profile's base URL, proxy and certificate settings."),
        }
    }
}

/// CONTEXT_TOO_LONG with the server's numbers and the choices: fewer platforms, a
/// smaller selection, or a larger window, said for the server that has it.
fn context_too_long(message: String, prompt_tokens: Option<u64>, window: Option<u64>, server: Option<ServerKind>) -> ApiError {
    let prompt = prompt_tokens.map(|n| n.to_string()).unwrap_or_default();
    let window_text = window.map(|n| n.to_string()).unwrap_or_default();
    let mut error = ApiError::new(ErrorCode::ContextTooLong, message);
    if prompt_tokens.is_some() && window.is_some() {
        error = error.problem("model.context_too_long", &[("prompt", &prompt), ("window", &window_text)]);
    }
    let error = error
        .hint("fewer_platforms", "Optimize for fewer platforms at once.")
        .hint("smaller_selection", "Select a smaller part of the text, or shorten the input or compact the session.")
        .details(serde_json::json!({ "promptTokens": prompt_tokens, "contextWindow": window, "server": server.map(ServerKind::id) }));
    larger_window_hint(error, prompt_tokens.map_or(window.unwrap_or(4096) * 2, |p| p + p / 4), server)
}

/// `error` with the hint of a larger window that holds `needed` tokens (rounded up to
/// a power of two), said for the server that has it (or for every server).
pub fn larger_window_hint(error: ApiError, needed: u64, server: Option<ServerKind>) -> ApiError {
    let tokens = suggested_window(needed);
    let wanted = tokens.to_string();
    match server {
        Some(server) => error.hint_with(&format!("larger_window_{}", server.id()), server.larger_window_advice(tokens), &[("tokens", &wanted)]),
        None => error.hint_with(
            "larger_window",
            format!(
                "Or use a larger window ({wanted} tokens or more): llama.cpp -c/--ctx-size, Ollama num_ctx or OLLAMA_CONTEXT_LENGTH, LM Studio's Context Length when loading the model, vLLM --max-model-len; for a hosted model, one with a larger context window."
            ),
            &[("tokens", &wanted)],
        ),
    }
}

/// CONTEXT_TOO_LONG, likely: the server cut its stream before a word arrived, with no
/// error, on a request whose calibrated estimate (`prompt_tokens`, with `reply_tokens`
/// asked for the reply) is within reach of the `window`. llama-cpp-python answers an
/// over-long request so (HTTP 200, then the stream ends; its log says "Requested tokens
/// (N) exceed context window of 4096"). The figures are Inkstone's estimate, not the
/// server's count, and say so (`details.estimated`, no `promptTokens` to learn from).
pub fn likely_context_too_long(prompt_tokens: u64, reply_tokens: u64, window: u64, server: Option<ServerKind>) -> ApiError {
    let message = format!(
        "The server ended the answer before any of it arrived, most likely because the request does not fit the model's context window: about {prompt_tokens} prompt tokens (estimated) and {reply_tokens} for the reply, a window of {window}. The server's log says for sure."
    );
    let wanted = suggested_window(prompt_tokens + reply_tokens + (prompt_tokens + reply_tokens) / 4);
    let mut error = context_too_long(message, None, Some(window), server);
    // The advice for a larger window is sized to this request, not to twice the window.
    if let Some(hint) = error.hints.iter_mut().find(|h| h.id.starts_with("larger_window")) {
        *hint = match server {
            Some(server) => inkstone_error::Hint::with(&format!("larger_window_{}", server.id()), server.larger_window_advice(wanted), &[("tokens", &wanted.to_string())]),
            None => hint.clone(),
        };
    }
    error.details(serde_json::json!({
        "promptTokens": null,
        "estimatedPromptTokens": prompt_tokens,
        "replyTokens": reply_tokens,
        "contextWindow": window,
        "server": server.map(ServerKind::id),
        "likely": true,
        "estimated": true,
    }))
}

/// `error` said as a likely CONTEXT_TOO_LONG ([`likely_context_too_long`]) when the
/// stream was cut off before any of the answer arrived (no text, no finish reason) and
/// the request's calibrated estimate (`prompt_tokens`) with its reply limit is at least
/// 80% of the window; otherwise as it is.
pub fn likely_overflow(error: ApiError, prompt_tokens: u64, reply_tokens: u64, window: u64, server: Option<ServerKind>) -> ApiError {
    let nothing_arrived = error.code == inkstone_error::ErrorCode::ProviderBadResponse && error.details.as_ref().is_some_and(|d| d["nothingArrived"] == true);
    if !nothing_arrived || window == 0 || (prompt_tokens + reply_tokens) * 5 < window * 4 {
        return error;
    }
    likely_context_too_long(prompt_tokens, reply_tokens, window, server)
}

fn capitalize(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().collect::<String>() + chars.as_str(),
        None => String::new(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(status: u16, body: Value, expected: LlmError) {
        assert_eq!(classify_status(status, body.to_string().as_bytes(), None), expected);
    }

    #[test]
    fn a_refused_response_format_is_its_own_error_whatever_the_status() {
        // llama.cpp's server before json_schema: a thrown runtime_error, so a 500.
        let llama = json!({"error": {"code": 500, "message": "response_format type must be one of \"text\" or \"json_object\", but got: json_schema", "type": "server_error"}});
        let refused = classify_status(500, llama.to_string().as_bytes(), None);
        assert!(matches!(refused, LlmError::FormRejected { status: 500, .. }), "{refused:?}");
        assert!(!refused.is_retryable(), "the same request gets the same refusal");
        check(
            400,
            json!({"error": {"message": "This response_format type is unavailable now", "type": "invalid_request_error", "param": null, "code": "invalid_request_error"}}),
            LlmError::FormRejected { status: 400, message: "This response_format type is unavailable now".into() },
        );
        check(
            400,
            json!({"error": "'response_format.type' must be 'json_schema' or 'text'"}),
            LlmError::FormRejected { status: 400, message: "'response_format.type' must be 'json_schema' or 'text'".into() },
        );
        // Naming the field is not refusing it.
        check(
            500,
            json!({"error": {"message": "failed to build a grammar for response_format"}}),
            LlmError::Unavailable { status: Some(500), message: "failed to build a grammar for response_format".into() },
        );
    }

    #[test]
    fn classifies_provider_error_shapes() {
        check(
            401,
            json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error", "code": "invalid_api_key"}}),
            LlmError::Auth { status: 401, message: "Incorrect API key provided".into() },
        );
        check(
            429,
            json!({"error": {"message": "You exceeded your current quota", "type": "insufficient_quota", "code": "insufficient_quota"}}),
            LlmError::InsufficientQuota { message: "You exceeded your current quota".into() },
        );
        check(
            429,
            json!({"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}}),
            LlmError::RateLimited { retry_after: None, message: "Rate limit reached".into() },
        );
        check(
            400,
            json!({"error": {"message": "This model's maximum context length is 8192 tokens", "code": "context_length_exceeded"}}),
            LlmError::ContextTooLong { message: "This model's maximum context length is 8192 tokens".into(), prompt_tokens: None, window: Some(8192), server: None },
        );
        // LiteLLM: no code, only the message says so.
        check(
            400,
            json!({"error": {"message": "litellm.ContextWindowExceededError: too long", "type": null, "code": "400"}}),
            LlmError::ContextTooLong { message: "litellm.ContextWindowExceededError: too long".into(), prompt_tokens: None, window: None, server: None },
        );
        check(
            400,
            json!({"error": {"message": "tool_choice auto needs --enable-auto-tool-choice"}}),
            LlmError::Rejected { status: 400, message: "tool_choice auto needs --enable-auto-tool-choice".into() },
        );
        check(404, json!({"error": "model 'llama9' not found"}), LlmError::NotFound { message: "model 'llama9' not found".into() });
        check(503, json!({"detail": "overloaded"}), LlmError::Unavailable { status: Some(503), message: "overloaded".into() });
        assert_eq!(classify_status(502, b"<html>Bad gateway</html>", None), LlmError::Unavailable { status: Some(502), message: "<html>Bad gateway</html>".into() });
        assert_eq!(classify_status(500, b"", None), LlmError::Unavailable { status: Some(500), message: "HTTP 500".into() });
    }

    #[test]
    fn overflow_counts_in_each_servers_words() {
        assert_eq!(overflow_counts("request (4519 tokens) exceeds the available context size (4096 tokens), try increasing it"), (Some(4519), Some(4096)));
        assert_eq!(
            overflow_counts("This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4519 in the messages, 481 in the completion)."),
            (Some(4519), Some(4096))
        );
        assert_eq!(
            overflow_counts("'max_tokens' or 'max_completion_tokens' is too large: 1000. This model's maximum context length is 4096 tokens and your request has 3500 input tokens (1000 > 4096 - 3500)."),
            (Some(3500), Some(4096))
        );
        assert_eq!(overflow_counts("This model's maximum context length is 128,000 tokens. However, your messages resulted in 130,412 tokens."), (Some(130412), Some(128000)));
        assert_eq!(overflow_counts("the input length exceeds the context length"), (None, None));
        // Ollama's own error for an over-long input is an overflow said for Ollama.
        let ollama = classify_status(400, br#"{"error":"the input length exceeds the context length"}"#, None);
        assert!(matches!(ollama, LlmError::ContextTooLong { server: Some(ServerKind::Ollama), .. }), "{ollama:?}");
        let batch = classify_status(500, br#"{"error":{"code":500,"message":"input is too large to process. increase the physical batch size","type":"server_error"}}"#, None);
        assert!(matches!(batch, LlmError::ContextTooLong { server: Some(ServerKind::LlamaCpp), .. }), "{batch:?}");
        assert!(!batch.is_retryable());
    }

    #[test]
    fn only_429_and_5xx_retry() {
        assert!(classify_status(429, b"{}", None).is_retryable());
        assert!(classify_status(503, b"{}", None).is_retryable());
        assert!(!classify_status(429, br#"{"error":{"code":"insufficient_quota"}}"#, None).is_retryable());
        for status in [400, 401, 403, 404, 422] {
            assert!(!classify_status(status, b"{}", None).is_retryable(), "{status}");
        }
        assert!(!LlmError::Unavailable { status: None, message: "refused".into() }.is_retryable());
    }

    #[test]
    fn parses_retry_hints() {
        assert_eq!(parse_retry_after(Some("644"), Some("2")), Some(Duration::from_millis(644)));
        assert_eq!(parse_retry_after(None, Some("2")), Some(Duration::from_secs(2)));
        assert_eq!(parse_retry_after(None, Some("Wed, 21 Oct 2015 07:28:00 GMT")), None);
        assert_eq!(parse_retry_after(Some("-1"), None), None);
    }

    #[test]
    fn stream_errors_are_classified() {
        assert_eq!(classify_stream_error(&json!({"error": {"message": "boom", "type": "server_error"}})), LlmError::Unavailable { status: Some(500), message: "boom".into() });
        assert_eq!(classify_stream_error(&json!({"error": {"message": "slow down", "code": 429}})), LlmError::RateLimited { retry_after: None, message: "slow down".into() });
        assert!(matches!(classify_stream_error(&json!({"error": {"message": "weird"}})), LlmError::Incomplete { .. }));
    }

    #[test]
    fn scrubs_the_key() {
        let error = LlmError::Auth { status: 401, message: "Incorrect API key provided: sk-live-123456".into() }.scrub(Some("sk-live-123456"));
        assert_eq!(error, LlmError::Auth { status: 401, message: "Incorrect API key provided: [redacted]".into() });
    }
}
