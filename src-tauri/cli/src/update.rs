//! `inkstone-cli update check`: what the update feed offers, or that updates are off.
//! It asks the feed without opening the data folder, so it works while the app runs.
//! Installing is the desktop app's (an AppImage replaces itself after checking the
//! signature); a `.deb` or `.rpm` is updated by the package manager.

use clap::Subcommand;
use inkstone_api::api::{UpdateCheck, UpdateHow};
use inkstone_api::update::UpdateSettings;
use inkstone_api::EngineConfig;

use crate::Failure;

#[derive(Debug, Subcommand)]
pub enum UpdateCommand {
    /// Ask the update feed this build was configured with (or INKSTONE_UPDATE_FEED)
    /// what it offers; installs nothing.
    Check,
}

/// The update settings this program runs with: the built-in feed and key, the
/// environment's override, and how it was installed.
fn settings() -> UpdateSettings {
    let config = EngineConfig::new(std::env::temp_dir(), "inkstone-cli").with_env(|key| std::env::var(key).ok());
    let mut settings = config.update;
    if let Some(installation) = std::env::current_exe().ok().and_then(|exe| inkstone_api::update::installation_from_packages(&exe)) {
        settings.installation = installation;
    }
    settings
}

pub fn run(command: UpdateCommand, as_json: bool) -> Result<(), Failure> {
    match command {
        UpdateCommand::Check => {
            let settings = settings();
            let answer = inkstone_api::api::update_check(&settings)?;
            if as_json {
                println!("{}", serde_json::to_string_pretty(&answer).unwrap_or_default());
                return Ok(());
            }
            print!("{}", describe(&answer));
            Ok(())
        }
    }
}

fn describe(answer: &UpdateCheck) -> String {
    match answer {
        UpdateCheck::Off => "Updates are off: this build has no update feed (INKSTONE_UPDATE_FEED names one).\n".to_owned(),
        UpdateCheck::UpToDate { current_version, latest_version } => format!("Inkstone {current_version} is up to date (the feed's newest is {latest_version}).\n"),
        UpdateCheck::Available { current_version, version, notes, pub_date, how } => {
            let mut text = format!("Inkstone {version} is available (this is {current_version})");
            if let Some(date) = pub_date {
                text.push_str(&format!(", published {date}"));
            }
            text.push_str(".\n");
            if let Some(notes) = notes {
                text.push_str(&format!("\n{}\n\n", notes.trim_end()));
            }
            let file = |url: &Option<String>| url.as_deref().and_then(|u| u.rsplit('/').next()).unwrap_or("the package").to_owned();
            text.push_str(&match how {
                UpdateHow::Install => "The Inkstone AppImage installs it (Help → About), after checking its signature.\n".to_owned(),
                UpdateHow::PackageManager { package, url } => {
                    let get = url.as_deref().map(|u| format!("Download {u}, then install it")).unwrap_or_else(|| "Install it".to_owned());
                    let command = if package == "rpm" { "sudo dnf install" } else { "sudo apt install" };
                    format!("{get} with your package manager: {command} ./{}\n", file(url))
                }
                UpdateHow::Download { url: Some(url) } => format!("Download it from {url}.\n"),
                UpdateHow::Download { url: None } => "The feed names no download for this system.\n".to_owned(),
            });
            text
        }
    }
}
