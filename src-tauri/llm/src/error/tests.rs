#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use serde_json::{json, Value};

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
