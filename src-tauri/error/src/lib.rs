//! The one error type every transport returns. A leaf crate: it depends only on the
//! English catalog, and each layer above maps its own errors into it (`impl
//! From<StoreError> for ApiError` lives in `inkstone-store`, provider errors in
//! `inkstone-llm`'s `error`). Core re-exports it as `inkstone_core::error`.
//!
//! Core writes `message` in English and
//! gives each hint a stable id; the UI renders code and hint ids in the user's language.
//! Never a stack trace, never a secret.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Stable error codes. The UI branches on these, never on message text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    NotFound,
    Validation,
    Conflict,
    PermissionDenied,
    ToolForbidden,
    ProviderAuth,
    ProviderRateLimited,
    ProviderUnavailable,
    ContextTooLong,
    QuotaExceeded,
    /// The workspace policy its owners set refuses the call (a provider it does not
    /// allow, a member's monthly cap); nothing was sent.
    PolicyRefused,
    KeychainUnavailable,
    Offline,
    Timeout,
    /// The provider's answer is not usable: malformed, cut off, or not OpenAI-compatible.
    ProviderBadResponse,
    /// The provider does not know the URL or the model (wrong base URL or model name).
    ProviderNotFound,
    /// The provider refused the request as sent (a 4xx other than auth, rate limit,
    /// not found or context length).
    ProviderRejected,
    /// The caller cancelled the call.
    Cancelled,
    /// A downloaded update does not verify against the key built into the app (or the
    /// app carries none); nothing was installed.
    SignatureInvalid,
    /// The target is read-only in its current state (a `publishing` platform draft).
    ReadOnly,
    /// The data folder is held by another Inkstone process.
    StoreLocked,
    /// The store's files or a stored value are damaged.
    StoreCorrupt,
    /// The store was written by a newer Inkstone.
    StoreTooNew,
    /// A file could not be read or written.
    Io,
    Internal,
}

impl ErrorCode {
    /// HTTP status for `serve`.
    pub fn http_status(self) -> u16 {
        match self {
            ErrorCode::NotFound => 404,
            ErrorCode::Validation => 400,
            ErrorCode::Conflict | ErrorCode::ReadOnly => 409,
            ErrorCode::PermissionDenied | ErrorCode::ToolForbidden | ErrorCode::PolicyRefused => 403,
            ErrorCode::ProviderAuth => 502,
            ErrorCode::ProviderRateLimited | ErrorCode::QuotaExceeded => 429,
            ErrorCode::ProviderUnavailable | ErrorCode::Offline => 503,
            ErrorCode::ContextTooLong => 413,
            ErrorCode::KeychainUnavailable => 503,
            ErrorCode::Timeout => 504,
            ErrorCode::ProviderBadResponse | ErrorCode::ProviderNotFound | ErrorCode::ProviderRejected => 502,
            ErrorCode::Cancelled => 499,
            ErrorCode::SignatureInvalid => 422,
            ErrorCode::StoreLocked => 423,
            ErrorCode::StoreCorrupt | ErrorCode::StoreTooNew | ErrorCode::Io | ErrorCode::Internal => 500,
        }
    }
}

/// A suggestion of what to do next. `id` is stable; `message` is English. A hint that
/// names something particular (a session, a proposal, a list of choices) carries those
/// values in `params`, so the UI can say it in the person's language (`hint.<id>` with
/// `{name}` places).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hint {
    pub id: String,
    pub message: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<String, String>,
}

impl Hint {
    pub fn new(id: &str, message: impl Into<String>) -> Self {
        Hint { id: id.to_owned(), message: message.into(), params: BTreeMap::new() }
    }

    /// A hint with values; `message` is the English with the values in it.
    pub fn with(id: &str, message: impl Into<String>, params: &[(&str, &str)]) -> Self {
        Hint { id: id.to_owned(), message: message.into(), params: values(params) }
    }

    /// What to do next as an action: its id and the values it needs (a session, a
    /// profile's name). The engine does not word it for a transport: `message` is the
    /// catalog's English `hint.<id>` (messages/en/errors.json, the window's wording),
    /// and the CLI words the same action as a command from `cli.hint.<id>`
    /// (messages/en/cli.json). The catalog test checks both exist and that the values
    /// each names are given here.
    pub fn action(id: &str, params: &[(&str, &str)]) -> Self {
        let params = values(params);
        let message = inkstone_messages::english_with(&format!("hint.{id}"), &params).unwrap_or_else(|| id.to_owned());
        Hint { id: id.to_owned(), message, params }
    }
}

/// A wording's values by name, as hints, errors and findings carry them.
pub fn values(params: &[(&str, &str)]) -> BTreeMap<String, String> {
    params.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[error("{code:?}: {message}")]
#[serde(rename_all = "camelCase")]
pub struct ApiError {
    pub code: ErrorCode,
    pub message: String,
    pub hints: Vec<Hint>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<serde_json::Value>,
    /// The UI's wording of this particular problem (`problem.<id>` filled with
    /// `params`), for errors whose code alone would say too little or the wrong thing
    /// (a CONFLICT can be a stale write, a running turn or a paused sync).
    /// (Boxed, as `params`, so that `Result<_, ApiError>` stays small.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<Box<str>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Box<BTreeMap<String, String>>>,
}

impl ApiError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ApiError { code, message: message.into(), hints: Vec::new(), details: None, message_id: None, params: None }
    }

    /// Names the UI's wording of this problem and the values it needs.
    pub fn problem(mut self, id: &str, params: &[(&str, &str)]) -> Self {
        self.message_id = Some(id.into());
        self.params = (!params.is_empty()).then(|| Box::new(values(params)));
        self
    }

    pub fn hint(mut self, id: &str, message: impl Into<String>) -> Self {
        self.hints.push(Hint::new(id, message));
        self
    }

    /// A hint that names particular values (see [`Hint::with`]).
    pub fn hint_with(mut self, id: &str, message: impl Into<String>, params: &[(&str, &str)]) -> Self {
        self.hints.push(Hint::with(id, message, params));
        self
    }

    /// A hint that is an action (see [`Hint::action`]).
    pub fn action(mut self, id: &str, params: &[(&str, &str)]) -> Self {
        self.hints.push(Hint::action(id, params));
        self
    }

    pub fn details(mut self, details: serde_json::Value) -> Self {
        self.details = Some(details);
        self
    }

    pub fn not_found(what: &str, id: impl std::fmt::Display) -> Self {
        ApiError::new(ErrorCode::NotFound, format!("{what} {id} does not exist")).details(serde_json::json!({ "resource": what, "id": id.to_string() }))
    }

    /// A bad value in the request; `field` is a JSON path such as `title` or `anchor.to`.
    pub fn validation(field: &str, message: impl Into<String>) -> Self {
        ApiError::new(ErrorCode::Validation, message).details(serde_json::json!({ "field": field }))
    }

    pub fn internal(message: impl Into<String>) -> Self {
        ApiError::new(ErrorCode::Internal, message).hint("report_bug", "This is a bug in Inkstone. Your data is unchanged; please report what you did.")
    }
}

/// Checks a required, bounded, non-blank text field and returns it trimmed.
pub fn required_text(field: &str, value: &str, max_chars: usize) -> Result<String, ApiError> {
    let trimmed = value.trim();
    if trimmed.is_empty() {
        return Err(ApiError::validation(field, format!("`{field}` must not be empty.")));
    }
    bounded_text(field, trimmed, max_chars)
}

/// Checks that a text field is at most `max_chars` characters long.
pub fn bounded_text(field: &str, value: &str, max_chars: usize) -> Result<String, ApiError> {
    let n_chars = value.chars().count();
    if n_chars > max_chars {
        return Err(ApiError::validation(field, format!("`{field}` is {n_chars} characters; at most {max_chars} are allowed.")));
    }
    Ok(value.to_owned())
}
