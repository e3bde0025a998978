//! Updates: the feed a distributor configured is checked after the first screen; what it
//! offers is shown; an AppImage replaces itself only with a file whose minisign
//! signature verifies against the key built into this app. A `.deb` or `.rpm`
//! installation is told where the new version is and installs nothing.
//!
//! Built on `minisign-verify` rather than `tauri-plugin-updater`, keeping the plugin's
//! feed format and signature rules: the check must serve the CLI (`inkstone-cli update
//! check`) and `serve`, which have no Tauri app handle, and the decisions belong in the
//! engine with the other API methods. The plugin would also install `.deb`/`.rpm`
//! updates through `pkexec`, which Inkstone must not do.
//!
//! Invariants: with no feed URL nothing is contacted; a feed that is down or slow
//! costs at most [`UpdateSettings::check_timeout`] on a background call; nothing is
//! written beside the AppImage but one temporary file, removed unless it verified and
//! replaced the AppImage in one rename.

pub mod feed;
pub mod signature;
pub mod transport;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use feed::{Installation, Release};

use crate::error::{ApiError, ErrorCode};

/// The feed URL built into this app (`packaging/update/feed-url`; comments only = off).
const BUILT_IN_FEED: &str = include_str!("../../../packaging/update/feed-url");
/// The update key built into this app (`packaging/update/public-key.pub`).
const BUILT_IN_KEY: &str = include_str!("../../../packaging/update/public-key.pub");

/// Where updates come from and what this installation may do with them.
#[derive(Debug, Clone)]
pub struct UpdateSettings {
    /// The feed; `None`: updates are off and nothing is contacted.
    pub feed_url: Option<String>,
    /// The minisign public key's file text (see [`signature::public_key`]).
    pub public_key: String,
    /// This build's version.
    pub current_version: semver::Version,
    pub installation: Installation,
    /// The feed's whole exchange ends within this.
    pub check_timeout: Duration,
    /// A download's whole exchange ends within this.
    pub download_timeout: Duration,
}

impl UpdateSettings {
    /// What this build carries: the built-in feed and key, updates told only.
    pub fn built_in() -> Self {
        UpdateSettings {
            feed_url: configured_url(BUILT_IN_FEED),
            public_key: BUILT_IN_KEY.to_owned(),
            current_version: feed::parse_version(env!("CARGO_PKG_VERSION")).unwrap_or_else(|| semver::Version::new(0, 0, 0)),
            installation: Installation::Other,
            check_timeout: Duration::from_secs(4),
            download_timeout: Duration::from_secs(15 * 60),
        }
    }

    /// Off: for tests, which never contact a feed they did not start.
    pub fn off() -> Self {
        UpdateSettings { feed_url: None, ..UpdateSettings::built_in() }
    }
}

/// The first line of `text` that is not a comment, if any.
pub fn configured_url(text: &str) -> Option<String> {
    text.lines().map(str::trim).find(|l| !l.is_empty() && !l.starts_with('#')).map(str::to_owned)
}

/// Whether this program came from the `inkstone` `.deb`: dpkg's list of the package's
/// files (`/var/lib/dpkg/info/inkstone.list`) names `exe`. The desktop app reads the
/// mark Tauri's bundler leaves in its binary first; `inkstone-cli` has only this.
pub fn installation_from_packages(exe: &Path) -> Option<Installation> {
    let listed = std::fs::read_to_string("/var/lib/dpkg/info/inkstone.list").ok()?;
    let exe = exe.to_string_lossy();
    listed.lines().any(|line| line == exe).then_some(Installation::Deb)
}

/// What the feed offers this installation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Offer {
    /// No feed is configured.
    Off,
    /// The feed's version is not newer.
    UpToDate { latest: semver::Version },
    /// A newer version.
    Newer { release: Release, artifact: Option<feed::Artifact> },
}

/// Asks the feed. Errors are `OFFLINE` (no answer, an error status), `TIMEOUT` and
/// `PROVIDER_BAD_RESPONSE` (not a feed), each with a `problem` the UI words.
pub fn check(settings: &UpdateSettings) -> Result<Offer, ApiError> {
    let Some(url) = &settings.feed_url else { return Ok(Offer::Off) };
    let url = feed::endpoint(url, &settings.current_version, &settings.installation);
    let target = feed::target();
    let body = match transport::feed(&url, settings.check_timeout) {
        Ok(Some(body)) => body,
        Ok(None) => return Ok(Offer::UpToDate { latest: settings.current_version.clone() }),
        Err(failure) => return Err(fetch_error(&failure, "feed")),
    };
    let release = feed::parse(&body, &target)
        .map_err(|e| ApiError::new(ErrorCode::ProviderBadResponse, format!("The update feed's answer cannot be used: {e}.")).problem("update.bad_feed", &[]))?;
    if release.version <= settings.current_version {
        return Ok(Offer::UpToDate { latest: release.version });
    }
    let artifact = feed::artifact_for(&release, &target, &settings.installation).cloned();
    Ok(Offer::Newer { release, artifact })
}

fn fetch_error(failure: &transport::Failure, what: &str) -> ApiError {
    use transport::Failure;
    match failure {
        Failure::Unreachable(detail) => ApiError::new(ErrorCode::Offline, format!("The update {what} cannot be reached ({detail}).")).problem("update.unreachable", &[]),
        Failure::TimedOut(after) => {
            let seconds = after.as_secs().max(1).to_string();
            ApiError::new(ErrorCode::Timeout, format!("The update {what} did not answer within {seconds} s.")).problem("update.timeout", &[("seconds", &seconds)])
        }
        Failure::Status(status) => {
            let status = status.to_string();
            ApiError::new(ErrorCode::Offline, format!("The update {what} answered with HTTP status {status}.")).problem("update.status", &[("status", &status)])
        }
        Failure::TooLarge(bytes) => {
            ApiError::new(ErrorCode::ProviderBadResponse, format!("The update {what} is larger than allowed ({bytes} bytes).")).problem("update.bad_feed", &[])
        }
        Failure::Write(detail) => {
            ApiError::new(ErrorCode::Io, format!("The update could not be written beside the app ({detail}); nothing was changed.")).problem("update.write_failed", &[])
        }
    }
}

/// A verified update, in place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    pub version: semver::Version,
    pub path: PathBuf,
    pub bytes: u64,
}

/// Downloads the AppImage the feed offers as `expected`, checks its signature against
/// the built-in key while it arrives, and only then moves it over the running
/// AppImage in one rename (the running process keeps its old file open; the new one
/// starts at the next launch). Anything else changes nothing:
/// - not an AppImage installation → `VALIDATION` (`update.not_appimage`);
/// - no feed → `VALIDATION` (`update.off`); the feed's version is not `expected` →
///   `CONFLICT` (`update.offer_changed`);
/// - no key, another key, a signature that does not match the file or names another
///   version → `SIGNATURE_INVALID`;
/// - a verified file that is not an executable (ELF) → `PROVIDER_BAD_RESPONSE`.
pub fn install(settings: &UpdateSettings, expected: &semver::Version) -> Result<Installed, ApiError> {
    let Installation::AppImage { path } = &settings.installation else {
        return Err(ApiError::new(ErrorCode::Validation, "Only an AppImage installs its own updates; a .deb or .rpm is updated by the system's package manager.")
            .problem("update.not_appimage", &[]));
    };
    if settings.feed_url.is_none() {
        return Err(ApiError::new(ErrorCode::Validation, "Updates are off in this build: no update feed is configured.").problem("update.off", &[]));
    }
    let key = signature::public_key(&settings.public_key).map_err(signature_error)?;
    let (release, artifact) = match check(settings)? {
        Offer::Newer { release, artifact: Some(artifact) } if &release.version == expected => (release, artifact),
        Offer::Newer { release, artifact: None } if &release.version == expected => {
            return Err(ApiError::new(ErrorCode::NotFound, format!("The feed offers {} but no AppImage for {}.", release.version, feed::target()))
                .problem("update.no_artifact", &[("version", &release.version.to_string())]));
        }
        offer => {
            let offered = match offer {
                Offer::Newer { release, .. } => release.version.to_string(),
                Offer::UpToDate { latest } => latest.to_string(),
                Offer::Off => String::new(),
            };
            return Err(ApiError::new(ErrorCode::Conflict, format!("The feed no longer offers {expected} (it offers {offered}); nothing was installed."))
                .problem("update.offer_changed", &[("version", &expected.to_string()), ("offered", &offered)]));
        }
    };
    let signature = signature::signature(&artifact.signature).map_err(signature_error)?;
    let verifier = signature::verifier(&key, &signature).map_err(signature_error)?;
    let partial = partial_path(path);
    let result = download_verified(settings, &artifact.url, &partial, verifier, &signature, &release.version).and_then(|bytes| {
        replace(&partial, path)?;
        Ok(Installed { version: release.version.clone(), path: path.clone(), bytes })
    });
    if result.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    result
}

/// The temporary file beside the AppImage: the same folder, so the final move is one
/// rename on one file system.
fn partial_path(appimage: &Path) -> PathBuf {
    let name = appimage.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "Inkstone.AppImage".to_owned());
    appimage.with_file_name(format!(".{name}.update"))
}

fn download_verified(
    settings: &UpdateSettings,
    url: &str,
    partial: &Path,
    mut verifier: minisign_verify::StreamVerifier<'_>,
    signature: &minisign_verify::Signature,
    announced: &semver::Version,
) -> Result<u64, ApiError> {
    let io = |e: std::io::Error| transport::Failure::Write(e.to_string());
    let mut file = std::fs::File::create(partial).map_err(|e| fetch_error(&io(e), "download"))?;
    let mut head: Vec<u8> = Vec::with_capacity(4);
    let bytes = transport::download(url, settings.check_timeout, settings.download_timeout, &mut |chunk| {
        if head.len() < 4 {
            head.extend(chunk.iter().take(4 - head.len()).copied());
        }
        verifier.update(chunk);
        file.write_all(chunk).map_err(|e| e.to_string())
    })
    .map_err(|failure| fetch_error(&failure, "download"))?;
    signature::finish(verifier, signature, announced).map_err(signature_error)?;
    if head.as_slice() != b"\x7fELF" {
        return Err(ApiError::new(ErrorCode::ProviderBadResponse, "The signed file is not an AppImage (a compressed .AppImage.tar.gz is not installed); nothing was changed.")
            .problem("update.not_an_appimage", &[]));
    }
    file.sync_all().map_err(|e| fetch_error(&io(e), "download"))?;
    Ok(bytes)
}

/// Moves the verified file over the AppImage, with the AppImage's permissions, and
/// makes the rename durable.
fn replace(partial: &Path, appimage: &Path) -> Result<(), ApiError> {
    let write = |e: std::io::Error| fetch_error(&transport::Failure::Write(e.to_string()), "download");
    let permissions = std::fs::metadata(appimage).map_err(write)?.permissions();
    std::fs::set_permissions(partial, permissions).map_err(write)?;
    std::fs::rename(partial, appimage).map_err(write)?;
    if let Some(dir) = appimage.parent() {
        if let Ok(dir) = std::fs::File::open(dir) {
            let _ = dir.sync_all();
        }
    }
    Ok(())
}

fn signature_error(error: signature::SignatureError) -> ApiError {
    use signature::SignatureError as E;
    let (problem, params): (&str, Vec<(&str, String)>) = match &error {
        E::NoKey => ("update.no_key", vec![]),
        E::BadKey(_) => ("update.bad_key", vec![]),
        E::Unreadable(_) | E::Mismatch => ("update.bad_signature", vec![]),
        E::OtherKey => ("update.other_key", vec![]),
        E::VersionMismatch { signed, announced } => ("update.version_mismatch", vec![("signed", signed.clone()), ("announced", announced.clone())]),
    };
    let params: Vec<(&str, &str)> = params.iter().map(|(k, v)| (*k, v.as_str())).collect();
    ApiError::new(ErrorCode::SignatureInvalid, format!("The update was refused: {error}; nothing was changed.")).problem(problem, &params)
}
