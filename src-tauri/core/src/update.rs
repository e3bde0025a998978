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

/// Which exchange with the feed's server failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exchange {
    Feed,
    Download,
}

impl std::fmt::Display for Exchange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Exchange::Feed => "feed",
            Exchange::Download => "download",
        })
    }
}

/// Why a check or an install did not happen; in every case nothing was installed.
/// The display is the English message; `inkstone-api` gives each its code, the UI's
/// problem and its values.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UpdateError {
    #[error("The update {exchange} cannot be reached ({detail}).")]
    Unreachable { exchange: Exchange, detail: String },
    /// `seconds`: the deadline, in whole seconds (at least 1).
    #[error("The update {exchange} did not answer within {seconds} s.")]
    TimedOut { exchange: Exchange, seconds: u64 },
    #[error("The update {exchange} answered with HTTP status {status}.")]
    Status { exchange: Exchange, status: u16 },
    #[error("The update {exchange} is larger than allowed ({bytes} bytes).")]
    TooLarge { exchange: Exchange, bytes: u64 },
    #[error("The update could not be written beside the app ({detail}); nothing was changed.")]
    Write { detail: String },
    #[error("The update feed's answer cannot be used: {0}.")]
    BadFeed(feed::FeedError),
    #[error("Only an AppImage installs its own updates; a .deb or .rpm is updated by the system's package manager.")]
    NotAppImage,
    #[error("Updates are off in this build: no update feed is configured.")]
    Off,
    #[error("The feed offers {version} but no AppImage for {target}.")]
    NoArtifact { version: semver::Version, target: String },
    /// `offered` is empty when the feed offers nothing any more.
    #[error("The feed no longer offers {expected} (it offers {offered}); nothing was installed.")]
    OfferChanged { expected: semver::Version, offered: String },
    #[error("The update was refused: {0}; nothing was changed.")]
    Signature(#[from] signature::SignatureError),
    #[error("The signed file is not an AppImage (a compressed .AppImage.tar.gz is not installed); nothing was changed.")]
    NotAnAppImage,
}

impl UpdateError {
    fn fetch(failure: transport::Failure, exchange: Exchange) -> Self {
        use transport::Failure;
        match failure {
            Failure::Unreachable(detail) => UpdateError::Unreachable { exchange, detail },
            Failure::TimedOut(after) => UpdateError::TimedOut { exchange, seconds: after.as_secs().max(1) },
            Failure::Status(status) => UpdateError::Status { exchange, status },
            Failure::TooLarge(bytes) => UpdateError::TooLarge { exchange, bytes },
            Failure::Write(detail) => UpdateError::Write { detail },
        }
    }

    fn write(error: std::io::Error) -> Self {
        UpdateError::Write { detail: error.to_string() }
    }
}

/// Asks the feed: no answer, an error status, no answer in time, or an answer that is
/// not a feed are errors.
pub fn check(settings: &UpdateSettings) -> Result<Offer, UpdateError> {
    let Some(url) = &settings.feed_url else { return Ok(Offer::Off) };
    let url = feed::endpoint(url, &settings.current_version, &settings.installation);
    let target = feed::target();
    let body = match transport::feed(&url, settings.check_timeout) {
        Ok(Some(body)) => body,
        Ok(None) => return Ok(Offer::UpToDate { latest: settings.current_version.clone() }),
        Err(failure) => return Err(UpdateError::fetch(failure, Exchange::Feed)),
    };
    let release = feed::parse(&body, &target).map_err(UpdateError::BadFeed)?;
    if release.version <= settings.current_version {
        return Ok(Offer::UpToDate { latest: release.version });
    }
    let artifact = feed::artifact_for(&release, &target, &settings.installation).cloned();
    Ok(Offer::Newer { release, artifact })
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
/// starts at the next launch). Anything else changes nothing: an installation that is
/// not an AppImage, no feed, a feed that no longer offers `expected`, no key or
/// another key, a signature that does not match the file or names another version,
/// a verified file that is not an executable (ELF).
pub fn install(settings: &UpdateSettings, expected: &semver::Version) -> Result<Installed, UpdateError> {
    let Installation::AppImage { path } = &settings.installation else {
        return Err(UpdateError::NotAppImage);
    };
    if settings.feed_url.is_none() {
        return Err(UpdateError::Off);
    }
    let key = signature::public_key(&settings.public_key)?;
    let (release, artifact) = match check(settings)? {
        Offer::Newer { release, artifact: Some(artifact) } if &release.version == expected => (release, artifact),
        Offer::Newer { release, artifact: None } if &release.version == expected => {
            return Err(UpdateError::NoArtifact { version: release.version, target: feed::target() });
        }
        offer => {
            let offered = match offer {
                Offer::Newer { release, .. } => release.version.to_string(),
                Offer::UpToDate { latest } => latest.to_string(),
                Offer::Off => String::new(),
            };
            return Err(UpdateError::OfferChanged { expected: expected.clone(), offered });
        }
    };
    let signature = signature::signature(&artifact.signature)?;
    let verifier = signature::verifier(&key, &signature)?;
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
) -> Result<u64, UpdateError> {
    let mut file = std::fs::File::create(partial).map_err(UpdateError::write)?;
    let mut head: Vec<u8> = Vec::with_capacity(4);
    let bytes = transport::download(url, settings.check_timeout, settings.download_timeout, &mut |chunk| {
        if head.len() < 4 {
            head.extend(chunk.iter().take(4 - head.len()).copied());
        }
        verifier.update(chunk);
        file.write_all(chunk)
    })
    .map_err(|failure| UpdateError::fetch(failure, Exchange::Download))?;
    signature::finish(verifier, signature, announced)?;
    if head.as_slice() != b"\x7fELF" {
        return Err(UpdateError::NotAnAppImage);
    }
    file.sync_all().map_err(UpdateError::write)?;
    Ok(bytes)
}

/// Moves the verified file over the AppImage, with the AppImage's permissions, and
/// makes the rename durable.
fn replace(partial: &Path, appimage: &Path) -> Result<(), UpdateError> {
    let permissions = std::fs::metadata(appimage).map_err(UpdateError::write)?.permissions();
    std::fs::set_permissions(partial, permissions).map_err(UpdateError::write)?;
    std::fs::rename(partial, appimage).map_err(UpdateError::write)?;
    if let Some(dir) = appimage.parent() {
        if let Ok(dir) = std::fs::File::open(dir) {
            let _ = dir.sync_all();
        }
    }
    Ok(())
}
