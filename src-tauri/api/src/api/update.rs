//! `update.check` and `update.install`: the engine's [`crate::update`] in the API's
//! terms. The window checks after its first screen and shows a newer version; the CLI
//! prints it (`update check`).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::{ApiError, Empty, Engine};
use crate::update::{self, Installation, Offer};

/// What the update feed offers this installation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum UpdateCheck {
    /// No feed is configured in this build: nothing was contacted.
    Off,
    /// The feed's newest version is not newer than this one.
    #[serde(rename_all = "camelCase")]
    UpToDate { current_version: String, latest_version: String },
    /// A newer version; `how` says how this installation gets it.
    #[serde(rename_all = "camelCase")]
    Available {
        current_version: String,
        version: String,
        /// What changed, as the feed says it.
        #[ts(optional)]
        notes: Option<String>,
        #[ts(optional)]
        pub_date: Option<String>,
        how: UpdateHow,
    },
}

/// How an installation takes a newer version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum UpdateHow {
    /// This AppImage downloads it, checks its signature and replaces itself
    /// (`update.install`); a restart starts the new version.
    Install,
    /// The system's package manager installs it (this came from a `.deb` or `.rpm`);
    /// `url` is the package the feed names, when it names one.
    #[serde(rename_all = "camelCase")]
    PackageManager {
        package: String,
        #[ts(optional)]
        url: Option<String>,
    },
    /// Downloaded by the person (a build from source, or an AppImage built without an
    /// update key); `url` is the feed's file for this system, when it names one.
    #[serde(rename_all = "camelCase")]
    Download {
        #[ts(optional)]
        url: Option<String>,
    },
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateInstallParams {
    /// The version the person was shown: anything else the feed offers now is refused
    /// (`CONFLICT`).
    pub version: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct UpdateInstalled {
    pub version: String,
    /// The AppImage that now holds the new version.
    pub path: String,
    #[ts(type = "number")]
    pub bytes: u64,
    /// Always true: the running program is still the old one until it starts again.
    pub restart_needed: bool,
}

pub(super) fn check(engine: &Engine, _: Empty) -> Result<UpdateCheck, ApiError> {
    update_check(&engine.config().update)
}

/// `update.check` without an engine: `inkstone-cli update check` asks the feed without
/// opening the data folder, so it works while the app holds it.
pub fn update_check(settings: &update::UpdateSettings) -> Result<UpdateCheck, ApiError> {
    let current_version = settings.current_version.to_string();
    Ok(match update::check(settings).map_err(crate::problems::update)? {
        Offer::Off => UpdateCheck::Off,
        Offer::UpToDate { latest } => UpdateCheck::UpToDate { current_version, latest_version: latest.to_string() },
        Offer::Newer { release, artifact } => {
            let url = artifact.map(|a| a.url);
            let how = match &settings.installation {
                Installation::AppImage { .. } if url.is_some() && update::signature::public_key(&settings.public_key).is_ok() => UpdateHow::Install,
                Installation::Deb => UpdateHow::PackageManager { package: "deb".to_owned(), url },
                Installation::Rpm => UpdateHow::PackageManager { package: "rpm".to_owned(), url },
                Installation::AppImage { .. } | Installation::Other => UpdateHow::Download { url },
            };
            UpdateCheck::Available { current_version, version: release.version.to_string(), notes: release.notes, pub_date: release.pub_date, how }
        }
    })
}

pub(super) fn install(engine: &Engine, params: UpdateInstallParams) -> Result<UpdateInstalled, ApiError> {
    let expected = update::feed::parse_version(&params.version)
        .ok_or_else(|| ApiError::validation("version", format!("`version`: “{}” is not a version such as 1.2.0.", params.version.chars().take(64).collect::<String>())))?;
    let installed = update::install(&engine.config().update, &expected).map_err(crate::problems::update)?;
    tracing::info!(version = %installed.version, path = %installed.path.display(), bytes = installed.bytes, "update installed; it starts at the next launch");
    Ok(UpdateInstalled { version: installed.version.to_string(), path: installed.path.display().to_string(), bytes: installed.bytes, restart_needed: true })
}
