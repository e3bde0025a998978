//! Updates: a feed that cannot be reached or read, an install that is refused.

use crate::error::{ApiError, ErrorCode};
use crate::update::{signature::SignatureError, UpdateError};

pub fn update(error: UpdateError) -> ApiError {
    let message = error.to_string();
    let (code, problem, params): (ErrorCode, &str, Vec<(&str, String)>) = match error {
        UpdateError::Unreachable { .. } => (ErrorCode::Offline, "update.unreachable", vec![]),
        UpdateError::TimedOut { seconds, .. } => (ErrorCode::Timeout, "update.timeout", vec![("seconds", seconds.to_string())]),
        UpdateError::Status { status, .. } => (ErrorCode::Offline, "update.status", vec![("status", status.to_string())]),
        UpdateError::TooLarge { .. } | UpdateError::BadFeed(_) => (ErrorCode::ProviderBadResponse, "update.bad_feed", vec![]),
        UpdateError::Write { .. } => (ErrorCode::Io, "update.write_failed", vec![]),
        UpdateError::NotAppImage => (ErrorCode::Validation, "update.not_appimage", vec![]),
        UpdateError::Off => (ErrorCode::Validation, "update.off", vec![]),
        UpdateError::NoArtifact { version, .. } => (ErrorCode::NotFound, "update.no_artifact", vec![("version", version.to_string())]),
        UpdateError::OfferChanged { expected, offered } => (ErrorCode::Conflict, "update.offer_changed", vec![("version", expected.to_string()), ("offered", offered)]),
        UpdateError::Signature(refused) => {
            let (problem, params) = signature(refused);
            (ErrorCode::SignatureInvalid, problem, params)
        }
        UpdateError::NotAnAppImage => (ErrorCode::ProviderBadResponse, "update.not_an_appimage", vec![]),
    };
    let params: Vec<(&str, &str)> = params.iter().map(|(k, v)| (*k, v.as_str())).collect();
    ApiError::new(code, message).problem(problem, &params)
}

fn signature(error: SignatureError) -> (&'static str, Vec<(&'static str, String)>) {
    match error {
        SignatureError::NoKey => ("update.no_key", vec![]),
        SignatureError::BadKey(_) => ("update.bad_key", vec![]),
        SignatureError::Unreadable(_) | SignatureError::Mismatch => ("update.bad_signature", vec![]),
        SignatureError::OtherKey => ("update.other_key", vec![]),
        SignatureError::VersionMismatch { signed, announced } => ("update.version_mismatch", vec![("signed", signed), ("announced", announced)]),
    }
}
