//! `inkstone-cli sync …`: connect this data folder to a workspace server and steer
//! delivery. The invite token is only ever read from standard input (or, for this
//! process only and never stored, from `INKSTONE_WORKSPACE_TOKEN`), never from an
//! argument, so it stays out of shell history and process lists. Each command is one
//! API call. An invite's token is printed once and kept nowhere. A push or pull that
//! could not finish prints what it did and exits 3.

use std::io::Read;

use clap::Subcommand;
use inkstone_api::Engine;
use serde_json::{json, Value};

use crate::commands::{call, s, Rendered};
use crate::Failure;

#[derive(Debug, Subcommand)]
pub enum SyncCommand {
    /// Connect to a workspace server; the invite token is read from standard input
    /// (unless INKSTONE_WORKSPACE_TOKEN is set: then that one is used and not stored).
    Connect {
        /// The server's URL, https://host[:port].
        server_url: String,
        /// Send the token over plain http:// to another machine anyway.
        #[arg(long)]
        allow_plain_http: bool,
        /// Also send the versions of the projects made before connecting (without it
        /// only versions saved from now on are sent; `sync status` counts the others).
        #[arg(long)]
        upload_existing: bool,
        /// Your name on your versions, as colleagues see it (default: a name you chose
        /// before, else your member name on the server).
        #[arg(long)]
        name: Option<String>,
    },
    /// Where sync stands, with the delivery jobs.
    Status,
    /// Send the versions waiting for the server now.
    Push,
    /// Bring in colleagues' versions now.
    Pull,
    /// Stop sending and pulling until `sync resume`.
    Pause,
    /// Send and pull again.
    Resume,
    /// Send failed versions again: JOB (with the failed jobs of its project before it),
    /// or every failed one. Each goes as the same push as before, so nothing is stored
    /// twice.
    Retry {
        /// The job id, `job_…`, as `sync status` lists it.
        job_id: Option<String>,
    },
    /// The workspace's members, their roles and token ids.
    Members,
    /// Invite a member (owners only); prints their invite token once.
    Invite {
        /// The member's name as colleagues see it.
        name: String,
        /// What the member may do.
        #[arg(long, value_parser = ["owner", "editor", "viewer"], default_value = "editor")]
        role: String,
    },
    /// Revoke a member's token (owners only); `sync members` lists the token ids.
    Revoke {
        /// The token id, `tok_…`.
        token_id: String,
    },
    /// Disconnect this data folder: the token leaves the keychain; unsynced versions
    /// stay, paused; nothing local is lost.
    Disconnect,
    /// The workspace policy that owners set and every app enforces.
    Policy {
        #[command(subcommand)]
        command: PolicyCommand,
    },
}

#[derive(Debug, Subcommand)]
pub enum PolicyCommand {
    /// The policy this app enforces (asked of the server when it can be; else the one
    /// last seen), who set it, and your spending this month.
    Show,
    /// Set the whole policy (owners only); what is left out takes its default.
    Set {
        /// Which model providers projects may use: `any`, `local` (a server on this
        /// computer) or hosts separated by commas.
        #[arg(long, default_value = "any")]
        providers: String,
        /// Whether performance history may enter AI context.
        #[arg(long, value_parser = ["on", "off"], default_value = "on")]
        performance_context: String,
        /// Each member's AI cost per calendar month, in US dollars.
        #[arg(long)]
        monthly_cap_usd: Option<f64>,
        /// Each member's AI tokens per calendar month.
        #[arg(long)]
        monthly_cap_tokens: Option<u64>,
        /// Whether members' AI activity is shared with owners.
        #[arg(long, value_parser = ["on", "off"], default_value = "off")]
        share_activity: String,
    },
}

fn read_token() -> Result<String, Failure> {
    let mut text = String::new();
    std::io::stdin().read_to_string(&mut text).map_err(|e| Failure::Usage(format!("cannot read the token from standard input: {e}")))?;
    let token = text.trim().to_owned();
    if token.is_empty() {
        return Err(Failure::Usage("standard input held no token (pipe the invite token in: `echo $TOKEN | inkstone-cli sync connect URL`)".to_owned()));
    }
    Ok(token)
}

fn print_status(status: &Value) {
    let state = s(status, "state");
    if status["connected"] != true {
        println!("Not connected. Connect with `inkstone-cli sync connect <server-url>` (the invite token on standard input).");
        if let (Some(projects @ 1..), Some(versions)) = (status["localOnlyProjects"].as_u64(), status["localOnlyVersions"].as_u64()) {
            println!("{versions} versions of {projects} projects are local-only; `--upload-existing` sends them when you connect.");
        }
        return;
    }
    println!(
        "{state}: {} at {} as {} ({}), token {}",
        s(status, "workspaceName"),
        s(status, "serverUrl"),
        s(status, "memberName"),
        s(status, "role"),
        s(status, "tokenFingerprint")
    );
    println!("{} pending, {} failed, {} conflicts{}", status["pending"], status["failed"], status["conflicts"], if status["paused"] == true { ", paused" } else { "" });
    if let (Some(projects @ 1..), Some(versions)) = (status["localOnlyProjects"].as_u64(), status["localOnlyVersions"].as_u64()) {
        println!("{versions} versions of {projects} projects were made before connecting and stay local-only (reconnect with `--upload-existing` to send them)");
    }
    if let Some(error) = status["lastError"].as_str() {
        println!("last error: {error}");
    }
    if status["perfUnavailable"] == true {
        println!("performance data: this server keeps none (it is older); publications and metrics stay here");
    } else if let Some(n @ 1..) = status["perfPending"].as_u64() {
        println!("performance data: {n} records still to send");
    }
    if let Some(n @ 1..) = status["perfAccountDaysLocal"].as_u64() {
        println!("performance data: {n} account days stay here (this server is older and keeps no account days)");
    }
    if let Some(n @ 1..) = status["perfConflicts"].as_u64() {
        println!("performance data: {n} snapshots differ from the server's copy under the same id (each side keeps its own; not sent again)");
    }
    for job in status["jobs"].as_array().into_iter().flatten().take(30) {
        let server = job["serverNumber"].as_u64().map(|n| format!(" → server v{n}")).unwrap_or_default();
        let why = match (s(&job["state"], "state"), job["heldBy"].as_str()) {
            ("failed", _) => format!("  ({}; `inkstone-cli sync retry {}`)", job["lastError"].as_str().unwrap_or("no reason recorded"), s(job, "id")),
            (_, Some(blocker)) => format!("  (waits behind {blocker})"),
            _ => String::new(),
        };
        println!("  {}  {} v{}{server}  {}  attempts {}{why}", s(job, "id"), s(job, "projectId"), job["versionNumber"], s(&job["state"], "state"), job["attempts"]);
    }
}

fn print_run(result: &Value) {
    println!("pushed {}, pulled {}, new conflicts {}", result["pushed"], result["pulled"], result["newConflicts"]);
    print_status(&result["status"]);
}

fn print_members(result: &Value) {
    println!("{} ({} as {})", s(result, "workspaceName"), if result["canManage"] == true { "you manage it" } else { "you are a member" }, s(result, "role"));
    for member in result["members"].as_array().into_iter().flatten() {
        let joined = member["joinedAt"].as_str().map(|t| format!("  joined {}", &t[..t.len().min(10)])).unwrap_or_default();
        let mut notes = Vec::new();
        if member["me"] == true {
            notes.push(format!("you, token {}", s(member, "tokenFingerprint")));
        }
        if member["revoked"] == true {
            notes.push("revoked".to_owned());
        }
        let notes = if notes.is_empty() { String::new() } else { format!("  ({})", notes.join(", ")) };
        println!("  {:<24} {:<7} {}{joined}{notes}", s(member, "name"), s(member, "role"), member["tokenId"].as_str().unwrap_or("-"));
    }
}

fn print_invite(result: &Value) {
    let member = &result["member"];
    println!("Invited {} as {} (token id {}).", s(member, "name"), s(member, "role"), s(member, "tokenId"));
    println!("Their invite token, shown this once (Inkstone keeps no copy):");
    println!();
    println!("  {}", s(result, "token"));
    println!();
    println!(
        "Share it only over a private channel: whoever holds it joins the workspace as {}. Revoke it with `inkstone-cli sync revoke {}`.",
        s(member, "role"),
        s(member, "tokenId")
    );
}

fn print_policy(result: &Value) {
    let Some(cached) = result.get("policy").filter(|p| p.is_object()) else {
        println!("No workspace policy: not connected, or the workspace server is older and keeps none. Nothing limits AI calls but your own quotas.");
        return;
    };
    let policy = &cached["policy"];
    let providers = match s(&policy["providers"], "kind") {
        "local" => "local only (a server on this computer)".to_owned(),
        "hosts" => format!("only {}", policy["providers"]["hosts"].as_array().into_iter().flatten().filter_map(Value::as_str).collect::<Vec<_>>().join(", ")),
        _ => "any".to_owned(),
    };
    let on_off = |v: &Value| if v == true { "on" } else { "off" };
    println!("Workspace policy of {}", s(cached, "workspaceName"));
    match (cached["setBy"].as_str(), cached["setAt"].as_str()) {
        (Some(by), Some(at)) => println!("  set by {by} on {}", &at[..at.len().min(10)]),
        _ => println!("  never set: the defaults"),
    }
    println!("  providers:            {providers}");
    println!("  performance context:  {}", on_off(&policy["performanceContext"]));
    let spent = &result["spent"];
    match policy["monthlyCapUsd"].as_f64() {
        Some(cap) => println!("  monthly cap (USD):    {cap:.2} per member; you spent {:.4} this month", spent["costUsd"].as_f64().unwrap_or(0.0)),
        None => println!("  monthly cap (USD):    none"),
    }
    if let Some(cap) = policy["monthlyCapTokens"].as_u64() {
        println!("  monthly cap (tokens): {cap} per member; you used {} this month", spent["tokens"]);
    }
    println!("  share AI activity:    {}", on_off(&policy["shareActivity"]));
    if result["fresh"] != true {
        println!("The server could not be reached: this is the policy last seen (read {}), which this app keeps to.", s(cached, "fetchedAt"));
    }
}

fn print_disconnect(result: &Value) {
    println!("Disconnected from {}. The token was removed from the keychain; your projects and versions are untouched.", s(result, "workspaceName"));
    match result["keptJobs"].as_u64() {
        Some(0) | None => println!("Nothing was waiting to be sent."),
        Some(n) => println!("{n} versions not yet on the server (waiting or failed) are kept, paused: connect to the same workspace again and `sync resume` to send them."),
    }
}

/// Runs `command`, prints its result (`--json`: as JSON), and fails (exit 3) when a
/// push or pull could not finish, after printing what it did.
pub fn run(engine: &Engine, command: SyncCommand, as_json: bool) -> Result<(), Failure> {
    let runs_a_cycle = matches!(command, SyncCommand::Push | SyncCommand::Pull);
    let (result, render) = rendered(engine, command)?;
    if as_json {
        crate::commands::print_json(&result);
    } else {
        render(&result);
    }
    if runs_a_cycle {
        if let Some(message) = result["error"].as_str() {
            return Err(Failure::Failed { code: result["errorCode"].as_str().unwrap_or("SYNC_FAILED").to_owned(), message: format!("Sync did not finish: {message}.") });
        }
    }
    Ok(())
}

fn rendered(engine: &Engine, command: SyncCommand) -> Result<Rendered, Failure> {
    Ok(match command {
        SyncCommand::Connect { server_url, allow_plain_http, upload_existing, name } => {
            let mut params = json!({"serverUrl": server_url, "allowPlainHttp": allow_plain_http, "uploadExisting": upload_existing});
            // The process's own token is used as it is (never stored); else stdin's.
            if std::env::var("INKSTONE_WORKSPACE_TOKEN").map_or(true, |t| t.trim().is_empty()) {
                params["token"] = json!(read_token()?);
            }
            if let Some(name) = name {
                params["displayName"] = json!(name);
            }
            (call(engine, "sync.connect", params)?, Box::new(print_status))
        }
        SyncCommand::Status => (call(engine, "sync.status", json!({}))?, Box::new(print_status)),
        SyncCommand::Push => (call(engine, "sync.push", json!({}))?, Box::new(print_run)),
        SyncCommand::Pull => (call(engine, "sync.pull", json!({}))?, Box::new(print_run)),
        SyncCommand::Pause => (call(engine, "sync.pause", json!({}))?, Box::new(print_status)),
        SyncCommand::Resume => (call(engine, "sync.resume", json!({}))?, Box::new(print_status)),
        SyncCommand::Retry { job_id } => {
            let params = match job_id {
                Some(job_id) => json!({"jobId": job_id}),
                None => json!({}),
            };
            (call(engine, "sync.retry", params)?, Box::new(print_status))
        }
        SyncCommand::Members => (call(engine, "sync.members", json!({}))?, Box::new(print_members)),
        SyncCommand::Invite { name, role } => (call(engine, "sync.invite", json!({"name": name, "role": role}))?, Box::new(print_invite)),
        SyncCommand::Revoke { token_id } => (call(engine, "sync.revokeMember", json!({"tokenId": token_id}))?, Box::new(print_members)),
        SyncCommand::Disconnect => (call(engine, "sync.disconnect", json!({}))?, Box::new(print_disconnect)),
        SyncCommand::Policy { command: PolicyCommand::Show } => (call(engine, "sync.policy", json!({}))?, Box::new(print_policy)),
        SyncCommand::Policy { command: PolicyCommand::Set { providers, performance_context, monthly_cap_usd, monthly_cap_tokens, share_activity } } => {
            let providers = match providers.trim() {
                "any" => json!({"kind": "any"}),
                "local" => json!({"kind": "local"}),
                hosts => json!({"kind": "hosts", "hosts": hosts.split(',').map(str::trim).filter(|h| !h.is_empty()).collect::<Vec<_>>()}),
            };
            let mut params = json!({"providers": providers, "performanceContext": performance_context == "on", "shareActivity": share_activity == "on"});
            if let Some(cap) = monthly_cap_usd {
                params["monthlyCapUsd"] = json!(cap);
            }
            if let Some(cap) = monthly_cap_tokens {
                params["monthlyCapTokens"] = json!(cap);
            }
            (call(engine, "sync.setPolicy", params)?, Box::new(print_policy))
        }
    })
}
