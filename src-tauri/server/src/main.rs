//! `inkstone-server`: `serve --data-dir DIR [--addr 127.0.0.1:8787]` runs the workspace
//! server on the embedded store; `--database-url postgres://…` instead runs it on
//! PostgreSQL (several processes may serve one database). `workspace create`,
//! `member invite` and `token revoke` are the operator's commands (with `--data-dir`,
//! run them while the server is stopped: the data folder is held by one process; with
//! a database, any time). Tokens are printed once.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand};
use inkstone_server::http::{serve, AppState, Limits, RateLimit};
use inkstone_server::proto::Role;
use inkstone_server::storage::pg::PgStorage;
use inkstone_server::storage::{SledStorage, Storage};

#[derive(Debug, Parser)]
#[command(name = "inkstone-server", version, about = "The Inkstone workspace server: teams push accepted versions and pull colleagues' work.")]
struct Cli {
    /// The data folder of the embedded store.
    #[arg(long, global = true, env = "INKSTONE_SERVER_DATA_DIR", value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// A PostgreSQL database instead of the embedded store: postgres://user:password@host:port/database.
    #[arg(long, global = true, env = "INKSTONE_SERVER_DATABASE_URL", value_name = "URL", conflicts_with = "data_dir", hide_env_values = true)]
    database_url: Option<String>,
    /// The most database connections this process opens.
    #[arg(long, global = true, default_value_t = 16)]
    pool_size: u32,
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
        /// Connections served at once (more wait to be accepted).
        #[arg(long, default_value_t = Limits::default().max_connections)]
        max_connections: usize,
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
    let storage: Arc<dyn Storage> = match (&cli.data_dir, &cli.database_url) {
        (_, Some(url)) => Arc::new(PgStorage::connect(url, cli.pool_size).map_err(|e| anyhow::anyhow!("cannot use the database: {e}"))?),
        (Some(dir), None) => Arc::new(SledStorage::open(dir).map_err(|e| anyhow::anyhow!("cannot open the store in {}: {e}", dir.display()))?),
        (None, None) => {
            anyhow::bail!("pass --data-dir DIR for the embedded store, or --database-url postgres://… (or set INKSTONE_SERVER_DATA_DIR / INKSTONE_SERVER_DATABASE_URL)")
        }
    };
    match cli.command {
        Command::Serve { addr, rate, burst, max_connections } => {
            let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
            runtime.block_on(async move {
                // Dedupe keys older than 30 days are forgotten, hourly.
                let pruning = storage.clone();
                tokio::spawn(async move {
                    let mut every = tokio::time::interval(std::time::Duration::from_secs(3600));
                    loop {
                        every.tick().await;
                        let storage = pruning.clone();
                        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0);
                        match tokio::task::spawn_blocking(move || storage.prune_dedupe(now)).await {
                            Ok(Ok(n)) if n > 0 => tracing::info!("forgot {n} dedupe keys older than 30 days"),
                            Ok(Err(e)) => tracing::warn!("pruning dedupe keys failed: {e}"),
                            _ => {}
                        }
                    }
                });
                let state = AppState::with_limits(storage, RateLimit { per_second: rate, burst }, Limits { max_connections, ..Limits::default() });
                let listener = tokio::net::TcpListener::bind(addr).await?;
                println!("INKSTONE_SERVER_URL=http://{}", listener.local_addr()?);
                serve(listener, state, async {
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
