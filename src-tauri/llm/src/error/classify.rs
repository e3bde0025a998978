//! A provider's failure classified, pure: the HTTP status and the error bodies real
//! servers send (OpenAI's, vLLM's, llama.cpp's, Ollama's, LM Studio's, LiteLLM's), or
//! an error inside a stream, to an [`LlmError`]; the retry hint of a response.

use std::time::Duration;

use serde_json::Value;

use super::{shorten, LlmError};
use crate::window::ServerKind;

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
