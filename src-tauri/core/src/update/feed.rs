//! The update feed in Tauri's updater format, so the Tauri signer and the feeds people
//! already publish for Tauri apps work unchanged. Pure: bytes in, an offer out.
//!
//! Two shapes are read. The static file (what `latest.json` holds):
//! `{"version": "1.2.0", "notes": "...", "pub_date": "2026-11-01T10:00:00Z",
//!   "platforms": {"linux-x86_64-appimage": {"url": "...", "signature": "..."}, ...}}`;
//! and a dynamic server's answer for one platform:
//! `{"version": ..., "notes": ..., "pub_date": ..., "url": ..., "signature": ...}`.

use std::collections::BTreeMap;

use serde::Deserialize;

/// Where a build came from, as far as updating goes. The shell tells (Tauri's bundler
/// marks the binary it packs; an AppImage's runtime names its file in `APPIMAGE`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Installation {
    /// A self-contained AppImage at this path: the one kind the app replaces itself.
    AppImage { path: std::path::PathBuf },
    /// Installed from a `.deb`: the package manager updates it.
    Deb,
    /// Installed from an `.rpm`: the package manager updates it.
    Rpm,
    /// Anything else (a build from source, the CLI, another system): told only.
    Other,
}

impl Installation {
    /// The `{installer}` part of a platform key, and `{{bundle_type}}` in a feed URL.
    pub fn bundle_name(&self) -> Option<&'static str> {
        match self {
            Installation::AppImage { .. } => Some("appimage"),
            Installation::Deb => Some("deb"),
            Installation::Rpm => Some("rpm"),
            Installation::Other => None,
        }
    }
}

/// One platform's artifact: where to get it and its minisign signature (the `.sig`
/// file's text, base64-encoded, as `tauri signer sign` writes it).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Artifact {
    pub url: String,
    pub signature: String,
}

/// A feed's release, as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Release {
    pub version: semver::Version,
    pub notes: Option<String>,
    pub pub_date: Option<String>,
    pub platforms: BTreeMap<String, Artifact>,
}

#[derive(Deserialize)]
struct Wire {
    version: String,
    #[serde(default)]
    notes: Option<String>,
    #[serde(default)]
    pub_date: Option<String>,
    #[serde(default)]
    platforms: Option<BTreeMap<String, Artifact>>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    signature: Option<String>,
}

/// Why a feed's answer could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FeedError {
    #[error("the feed is not Tauri updater JSON: {0}")]
    NotJson(String),
    #[error("the feed's version “{0}” is not a semantic version")]
    BadVersion(String),
}

/// Reads a feed's answer. A dynamic answer's single artifact is filed under `target`.
pub fn parse(body: &[u8], target: &str) -> Result<Release, FeedError> {
    let wire: Wire = serde_json::from_slice(body).map_err(|e| FeedError::NotJson(e.to_string()))?;
    let version = parse_version(&wire.version).ok_or_else(|| FeedError::BadVersion(wire.version.chars().take(64).collect()))?;
    let mut platforms = wire.platforms.unwrap_or_default();
    if let (Some(url), Some(signature)) = (wire.url, wire.signature) {
        platforms.entry(target.to_owned()).or_insert(Artifact { url, signature });
    }
    Ok(Release { version, notes: wire.notes.filter(|n| !n.trim().is_empty()), pub_date: wire.pub_date, platforms })
}

/// `1.2.3` or `v1.2.3`.
pub fn parse_version(text: &str) -> Option<semver::Version> {
    semver::Version::parse(text.trim().trim_start_matches('v')).ok()
}

/// The `{os}-{arch}` of this build in the feed's terms (`linux-x86_64`, `darwin-aarch64`,
/// `windows-x86_64`).
pub fn target() -> String {
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        other => other,
    };
    format!("{os}-{}", std::env::consts::ARCH)
}

/// The artifact for this installation: `{target}-{installer}` first, then `{target}`,
/// as Tauri's updater looks them up.
pub fn artifact_for<'a>(release: &'a Release, target: &str, installation: &Installation) -> Option<&'a Artifact> {
    installation.bundle_name().and_then(|name| release.platforms.get(&format!("{target}-{name}"))).or_else(|| release.platforms.get(target))
}

/// The feed URL with Tauri's placeholders filled in: `{{current_version}}`,
/// `{{target}}` (the OS), `{{arch}}` and `{{bundle_type}}`.
pub fn endpoint(url: &str, current: &semver::Version, installation: &Installation) -> String {
    let os = target();
    let (os, arch) = os.split_once('-').unwrap_or((os.as_str(), ""));
    url.replace("{{current_version}}", &current.to_string())
        .replace("{{target}}", os)
        .replace("{{arch}}", arch)
        .replace("{{bundle_type}}", installation.bundle_name().unwrap_or("unknown"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_static_file_and_a_dynamic_answer_and_picks_the_installer_first() {
        let body = br#"{"version":"v1.4.0","notes":"Faster start","pub_date":"2026-11-01T10:00:00Z",
            "platforms":{"linux-x86_64":{"url":"https://x/any","signature":"c2ln"},
                         "linux-x86_64-appimage":{"url":"https://x/a.AppImage","signature":"c2ln"}}}"#;
        let release = parse(body, "linux-x86_64").unwrap();
        assert_eq!(release.version, semver::Version::new(1, 4, 0));
        assert_eq!(release.notes.as_deref(), Some("Faster start"));
        let appimage = Installation::AppImage { path: "/a".into() };
        assert_eq!(artifact_for(&release, "linux-x86_64", &appimage).unwrap().url, "https://x/a.AppImage");
        assert_eq!(artifact_for(&release, "linux-x86_64", &Installation::Deb).unwrap().url, "https://x/any");
        assert!(artifact_for(&release, "darwin-aarch64", &Installation::Deb).is_none());

        let dynamic = parse(br#"{"version":"2.0.0","url":"https://x/b","signature":"s"}"#, "linux-x86_64").unwrap();
        assert_eq!(dynamic.platforms["linux-x86_64"].url, "https://x/b");
        assert_eq!(dynamic.notes, None);
    }

    #[test]
    fn refuses_what_is_not_a_feed() {
        assert!(matches!(parse(b"<html>", "linux-x86_64"), Err(FeedError::NotJson(_))));
        assert!(matches!(parse(br#"{"version":"soon"}"#, "linux-x86_64"), Err(FeedError::BadVersion(_))));
    }

    #[test]
    fn fills_the_placeholders_of_a_feed_url() {
        let url = endpoint("https://u/{{target}}/{{arch}}/{{bundle_type}}/{{current_version}}", &semver::Version::new(0, 1, 0), &Installation::Deb);
        assert_eq!(url, format!("https://u/{}/{}/deb/0.1.0", target().split('-').next().unwrap(), std::env::consts::ARCH));
    }
}
