//! `inkstone-server`: `serve --data-dir DIR [--addr 127.0.0.1:8787]` runs the workspace
//! server on the embedded store; `workspace create`, `member invite` and
//! `token revoke` are the operator's commands (run them while the server is stopped:
//! the data folder is held by one process). Tokens are printed once.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand};
use inkstone_server::http::{router, AppState, RateLimit};
use inkstone_server::proto::Role;
use inkstone_server::storage::{SledStorage, Storage};

#[derive(Debug, Parser)]
#[command(name = "inkstone-server", version, about = "The Inkstone workspace server: teams push accepted versions and pull colleagues' work.")]
struct Cli {
    /// The data folder of the embedded store.
    #[arg(long, global = true, env = "INKSTONE_SERVER_DATA_DIR", value_name = "DIR")]
    data_dir: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the API.
    Serve {
        /// The address to listen on (port 0 picks a free port; the chosen address is printed).
        #[arg(long, default_value = "127.0.0.1:8787")]
        addr: SocketAddr,
        /// Requests per second per token, on average.
        #[arg(long, default_value_t = 50.0)]
        rate: f64,
        /// Requests per token in a burst.
        #[arg(long, default_value_t = 200.0)]
        burst: f64,
    },
    /// Workspaces.
    #[command(subcommand)]
    Workspace(WorkspaceCommand),
    /// Members.
    #[command(subcommand)]
    Member(MemberCommand),
    /// Tokens.
    #[command(subcommand)]
    Token(TokenCommand),
}

#[derive(Debug, Subcommand)]
enum WorkspaceCommand {
    /// Create a workspace and its owner; prints the owner's token once.
    Create {
        name: String,
        #[arg(long, default_value = "owner")]
        owner: String,
    },
}

#[derive(Debug, Subcommand)]
enum MemberCommand {
    /// Invite a member; prints their token once.
    Invite {
        workspace: String,
        name: String,
        #[arg(long, value_parser = ["owner", "editor", "viewer"], default_value = "editor")]
        role: String,
    },
}

#[derive(Debug, Subcommand)]
enum TokenCommand {
    /// Revoke a token (by its id, `tok_…`).
    Revoke { workspace: String, token_id: String },
}

fn run(cli: Cli) -> anyhow::Result<()> {
    let Some(dir) = cli.data_dir else { anyhow::bail!("pass --data-dir DIR (or set INKSTONE_SERVER_DATA_DIR)") };
    let storage = SledStorage::open(&dir).map_err(|e| anyhow::anyhow!("cannot open the store in {}: {e}", dir.display()))?;
    match cli.command {
        Command::Serve { addr, rate, burst } => {
            let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
            runtime.block_on(async move {
                let state = AppState::new(Arc::new(storage), RateLimit { per_second: rate, burst });
                let listener = tokio::net::TcpListener::bind(addr).await?;
                println!("INKSTONE_SERVER_URL=http://{}", listener.local_addr()?);
                axum::serve(listener, router(state))
                    .with_graceful_shutdown(async {
                        let _ = tokio::signal::ctrl_c().await;
                    })
                    .await?;
                anyhow::Ok(())
            })?;
        }
        Command::Workspace(WorkspaceCommand::Create { name, owner }) => {
            let (id, token) = storage.create_workspace(&name, &owner).map_err(|e| anyhow::anyhow!("{e}"))?;
            println!("workspace {id}\nowner {} ({})\ntoken {} (id {}; shown once: keep it safe)", token.member.name, token.member.id, token.token, token.token_id);
        }
        Command::Member(MemberCommand::Invite { workspace, name, role }) => {
            let role = match role.as_str() {
                "owner" => Role::Owner,
                "viewer" => Role::Viewer,
                _ => Role::Editor,
            };
            let token = storage.invite(&workspace, &name, role).map_err(|e| anyhow::anyhow!("{e}"))?;
            println!("member {} ({}, {})\ntoken {} (id {}; shown once)", token.member.name, token.member.id, role.as_str(), token.token, token.token_id);
        }
        Command::Token(TokenCommand::Revoke { workspace, token_id }) => {
            storage.revoke(&workspace, &token_id).map_err(|e| anyhow::anyhow!("{e}"))?;
            println!("revoked {token_id}");
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    tracing_subscriber::fmt().with_env_filter(tracing_subscriber::EnvFilter::try_from_env("INKSTONE_LOG").unwrap_or_else(|_| "warn".into())).with_writer(std::io::stderr).init();
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("inkstone-server: {e:#}");
            ExitCode::FAILURE
        }
    }
}
