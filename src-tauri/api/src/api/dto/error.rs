//! The wire form of the one error every transport returns, [`ApiError`], with its
//! code and hints (see [`super`]). The transports (the window's IPC, `serve`, the CLI's
//! JSON) send this twin, built from `inkstone_error::ApiError` by [`ApiError::from`], so
//! the error's shape on the wire is decided here like every other record's.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::error as domain;

/// Stable error codes. The UI branches on these, never on message text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
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

/// A suggestion of what to do next. `id` is stable; `message` is English. A hint that
/// names something particular (a session, a proposal, a list of choices) carries those
/// values in `params`, so the UI can say it in the person's language (`hint.<id>` with
/// `{name}` places).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct Hint {
    pub id: String,
    pub message: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[ts(as = "Option<BTreeMap<String, String>>", optional)]
    pub params: BTreeMap<String, String>,
}

/// What a call that failed answers: a code, the English `message`, hints as actions.
/// Never a stack trace, never a secret.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ApiError {
    pub code: ErrorCode,
    pub message: String,
    pub hints: Vec<Hint>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "unknown")]
    pub details: Option<serde_json::Value>,
    /// The UI's wording of this particular problem (`problem.<id>` filled with
    /// `params`), for errors whose code alone would say too little or the wrong thing
    /// (a CONFLICT can be a stale write, a running turn or a paused sync).
    /// (Boxed, as `params`, so that `Result<_, ApiError>` stays small.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(as = "Option<String>", optional)]
    pub message_id: Option<Box<str>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(as = "Option<BTreeMap<String, String>>", optional)]
    pub params: Option<Box<BTreeMap<String, String>>>,
}

impl From<domain::ErrorCode> for ErrorCode {
    fn from(record: domain::ErrorCode) -> Self {
        use domain::ErrorCode as E;
        match record {
            E::NotFound => Self::NotFound,
            E::Validation => Self::Validation,
            E::Conflict => Self::Conflict,
            E::PermissionDenied => Self::PermissionDenied,
            E::ToolForbidden => Self::ToolForbidden,
            E::ProviderAuth => Self::ProviderAuth,
            E::ProviderRateLimited => Self::ProviderRateLimited,
            E::ProviderUnavailable => Self::ProviderUnavailable,
            E::ContextTooLong => Self::ContextTooLong,
            E::QuotaExceeded => Self::QuotaExceeded,
            E::PolicyRefused => Self::PolicyRefused,
            E::KeychainUnavailable => Self::KeychainUnavailable,
            E::Offline => Self::Offline,
            E::Timeout => Self::Timeout,
            E::ProviderBadResponse => Self::ProviderBadResponse,
            E::ProviderNotFound => Self::ProviderNotFound,
            E::ProviderRejected => Self::ProviderRejected,
            E::Cancelled => Self::Cancelled,
            E::SignatureInvalid => Self::SignatureInvalid,
            E::ReadOnly => Self::ReadOnly,
            E::StoreLocked => Self::StoreLocked,
            E::StoreCorrupt => Self::StoreCorrupt,
            E::StoreTooNew => Self::StoreTooNew,
            E::Io => Self::Io,
            E::Internal => Self::Internal,
        }
    }
}

impl From<&domain::Hint> for Hint {
    fn from(record: &domain::Hint) -> Self {
        Hint { id: record.id.clone(), message: record.message.clone(), params: record.params.clone() }
    }
}

impl From<&domain::ApiError> for ApiError {
    fn from(record: &domain::ApiError) -> Self {
        ApiError {
            code: record.code.into(),
            message: record.message.clone(),
            hints: record.hints.iter().map(Into::into).collect(),
            details: record.details.clone(),
            message_id: record.message_id.clone(),
            params: record.params.clone(),
        }
    }
}

impl From<domain::ApiError> for ApiError {
    fn from(record: domain::ApiError) -> Self {
        ApiError::from(&record)
    }
}
