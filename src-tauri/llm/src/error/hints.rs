//! An [`LlmError`] said as an [`ApiError`]: its code, the hints that say what to do
//! about it, and the context overflow's advice sized to the server that has the window.

use inkstone_error::{ApiError, ErrorCode};

use super::LlmError;
use crate::window::{suggested_window, ServerKind};

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
