//! `inkstone-cli`: every API method from the command line, readable commands for the
//! common ones, and `serve`, the same API over loopback HTTP for the browser UI.
//!
//! Exit codes: 0 success, 1 an API error (printed as JSON `{code, message, hints, details?, messageId?, params?}` on
//! stderr), 2 bad usage, 3 the operation ran but failed (a session's turn ended with an
//! error such as `context_too_long`, a sync push or pull that could not finish; its
//! output is printed, then `{code, message}` on stderr).

mod activity;
mod checkpoints;
mod commands;
mod drafts;
mod optimize;
mod performance;
mod profile;
mod project;
mod proposal;
mod rules;
mod search;
mod serve;
mod session;
mod sync;
mod update;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use inkstone_api::{ApiError, Engine, EngineConfig};

#[derive(Debug, Parser)]
#[command(name = "inkstone-cli", version, about = "Inkstone from the command line: projects, versions, comments, export, and `serve` for the browser UI.")]
struct Cli {
    /// The data folder (default: the OS data folder, e.g. ~/.local/share/Inkstone).
    #[arg(long, global = true, env = "INKSTONE_DATA_DIR", value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// Print results as JSON instead of text.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: commands::Command,
}

/// The default data folder, shared with the desktop app: `<OS data dir>/Inkstone`.
fn default_data_dir() -> Option<PathBuf> {
    dirs::data_dir().map(|d| d.join("Inkstone"))
}

/// What went wrong, for the exit code.
enum Failure {
    Api(ApiError),
    Usage(String),
    /// The call went through and said the operation failed (exit 3).
    Failed {
        code: String,
        message: String,
    },
}

impl From<ApiError> for Failure {
    fn from(error: ApiError) -> Self {
        Failure::Api(error)
    }
}

fn open_engine(data_dir: Option<PathBuf>, holder: &str) -> Result<Engine, Failure> {
    let Some(data_dir) = data_dir.or_else(default_data_dir) else {
        return Err(Failure::Usage("cannot tell the OS data folder; pass --data-dir DIR or set INKSTONE_DATA_DIR".to_owned()));
    };
    let config = EngineConfig::new(data_dir, holder).with_env(|key| std::env::var(key).ok());
    Ok(Engine::open(config)?)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_env("INKSTONE_LOG").unwrap_or_else(|_| "warn".into()))
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    if matches!(cli.command, commands::Command::Methods) {
        // Needs no data folder, so it works while the app holds it.
        inkstone_api::api::METHODS.iter().for_each(|m| println!("{m}"));
        return ExitCode::SUCCESS;
    }
    let cli = match cli.command {
        // Asks the feed without the data folder, so it works while the app holds it.
        commands::Command::Update(command) => return exit(update::run(command, cli.json)),
        _ => cli,
    };
    let holder = match &cli.command {
        commands::Command::Serve(_) => "inkstone-cli serve",
        _ => "inkstone-cli",
    };
    let result = open_engine(cli.data_dir.clone(), holder).and_then(|engine| match cli.command {
        commands::Command::Serve(args) => serve::run(engine, args).map_err(|e| Failure::Api(ApiError::new(inkstone_api::ErrorCode::Io, format!("serve failed: {e:#}")))),
        command => commands::run(&engine, command, cli.json),
    });
    exit(result)
}

fn exit(result: Result<(), Failure>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Api(mut error)) => {
            // The whole error as the API sends it: with its wording id and values
            // (`messageId`, `params`) for a caller that words it; its hints worded for
            // the command line.
            for hint in &mut error.hints {
                word_for_cli(hint);
            }
            eprintln!("{}", serde_json::to_string_pretty(&inkstone_api::api::dto::ApiError::from(&error)).unwrap_or_else(|_| error.message.clone()));
            ExitCode::from(1)
        }
        Err(Failure::Usage(message)) => {
            eprintln!("error: {message}\n\nFor more information, try '--help'.");
            ExitCode::from(2)
        }
        Err(Failure::Failed { code, message }) => {
            eprintln!("{}", serde_json::json!({"code": code, "message": message}));
            ExitCode::from(3)
        }
    }
}

/// A hint as the command line says it: the engine names an action (its id and values);
/// where the CLI has a command for it (`cli.hint.<id>` in messages/en/cli.json), the
/// hint says that command instead of the window's wording.
pub(crate) fn word_for_cli(hint: &mut inkstone_api::error::Hint) {
    if let Some(text) = inkstone_messages::english_with(&format!("cli.hint.{}", hint.id), &hint.params) {
        hint.message = text;
    }
}
