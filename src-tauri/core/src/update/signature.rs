//! minisign signatures as Tauri's signer makes them (`tauri signer generate` /
//! `tauri signer sign`): the public key and the `.sig` file are each the minisign text,
//! base64-encoded once more. Plain minisign text (`minisign -G`, `minisign -S -H`) is
//! read too. Only prehashed signatures are accepted, and a signature whose trusted
//! comment names a version (`version:1.2.0`, as the Tauri CLI records it) must name the
//! version the feed announced: the feed itself is unsigned, so this is what stops it
//! from pairing a new version number with an older signed build.

use base64::Engine as _;
use minisign_verify::{PublicKey, Signature, StreamVerifier};

/// Why an artifact is not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    #[error("this build carries no update key")]
    NoKey,
    #[error("the update key built into this app cannot be read: {0}")]
    BadKey(String),
    #[error("the feed's signature cannot be read: {0}")]
    Unreadable(String),
    #[error("the file was signed with another key")]
    OtherKey,
    #[error("the signature does not match the file")]
    Mismatch,
    #[error("the file was signed as version {signed}, the feed announced {announced}")]
    VersionMismatch { signed: String, announced: String },
}

/// Text that is base64 of minisign text, or the minisign text itself.
fn minisign_text(text: &str) -> Option<String> {
    let trimmed = text.trim();
    if trimmed.starts_with("untrusted comment:") {
        return Some(trimmed.to_owned());
    }
    let compact: String = trimmed.split_whitespace().collect();
    base64::engine::general_purpose::STANDARD.decode(compact).ok().and_then(|bytes| String::from_utf8(bytes).ok())
}

/// Reads the key built into the app (see `packaging/update/`). Lines starting with `#`
/// are notes for the distributor; nothing else means no key.
pub fn public_key(file_text: &str) -> Result<PublicKey, SignatureError> {
    let text: String = file_text.lines().filter(|l| !l.trim_start().starts_with('#')).collect::<Vec<_>>().join("\n");
    if text.trim().is_empty() {
        return Err(SignatureError::NoKey);
    }
    let trimmed = text.trim();
    // A bare `RW…` key line is accepted as well as the full key file.
    if !trimmed.contains('\n') && trimmed.starts_with("RW") {
        return PublicKey::from_base64(trimmed).map_err(|e| SignatureError::BadKey(e.to_string()));
    }
    let decoded = minisign_text(trimmed).ok_or_else(|| SignatureError::BadKey("neither minisign text nor its base64".to_owned()))?;
    PublicKey::decode(&decoded).map_err(|e| SignatureError::BadKey(e.to_string()))
}

/// Reads the signature the feed gives for an artifact.
pub fn signature(feed_text: &str) -> Result<Signature, SignatureError> {
    let decoded = minisign_text(feed_text).ok_or_else(|| SignatureError::Unreadable("neither minisign text nor its base64".to_owned()))?;
    Signature::decode(&decoded).map_err(|e| SignatureError::Unreadable(e.to_string()))
}

/// Starts checking a file read in pieces against `key`.
pub fn verifier<'a>(key: &'a PublicKey, signature: &'a Signature) -> Result<StreamVerifier<'a>, SignatureError> {
    key.verify_stream(signature).map_err(|e| match e {
        minisign_verify::Error::UnexpectedKeyId => SignatureError::OtherKey,
        other => SignatureError::Unreadable(other.to_string()),
    })
}

/// Ends the check once every piece went through `verifier.update`, then compares the
/// signed version (if the signature names one) with the announced one.
pub fn finish(mut verifier: StreamVerifier<'_>, signature: &Signature, announced: &semver::Version) -> Result<(), SignatureError> {
    verifier.finalize().map_err(|_| SignatureError::Mismatch)?;
    // Only now is the trusted comment trustworthy: the global signature covers it.
    let signed = signature.trusted_comment().split('\t').find_map(|field| field.strip_prefix("version:"));
    match signed {
        None => Ok(()),
        Some(signed) if super::feed::parse_version(signed).as_ref() == Some(announced) => Ok(()),
        Some(signed) => Err(SignatureError::VersionMismatch { signed: signed.to_owned(), announced: announced.to_string() }),
    }
}
