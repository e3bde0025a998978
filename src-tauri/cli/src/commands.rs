//! Readable commands. Each one is a thin wrapper over one API call: it builds the
//! params, calls the engine, and prints the result as text (or JSON with --json).

use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;

use clap::Subcommand;
use inkstone_api::api::StreamEvent;
use inkstone_api::Engine;
use serde_json::{json, Value};

use crate::project::{comment, project, version, CommentCommand, ProjectCommand, VersionCommand};
use crate::search::{print_answer, search};
use crate::Failure;

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Call any API method: `call project.create --params '{"title":"春天"}'`.
    Call {
        method: String,
        /// JSON params; `@file` reads a file, `-` reads standard input.
        #[arg(long, default_value = "{}")]
        params: String,
        /// Print progress events as NDJSON before the result.
        #[arg(long)]
        stream: bool,
    },
    /// List every API method.
    Methods,
    /// Updates: `update check` asks the update feed what it offers.
    #[command(subcommand)]
    Update(crate::update::UpdateCommand),
    /// Projects.
    #[command(subcommand)]
    Project(ProjectCommand),
    /// Versions of a project.
    #[command(subcommand)]
    Version(VersionCommand),
    /// Comments on a project.
    #[command(subcommand)]
    Comment(CommentCommand),
    /// Brand profiles.
    #[command(subcommand)]
    Brand(BrandCommand),
    /// Content templates.
    #[command(subcommand)]
    Template(TemplateCommand),
    /// Images.
    #[command(subcommand)]
    Media(MediaCommand),
    /// Write everything to a new folder of Markdown and JSON files.
    Export { dir: PathBuf },
    /// Read an export folder into this (empty) data folder.
    Import { dir: PathBuf },
    /// Import a Markdown file, or a folder of them, as new projects.
    ImportMd { path: PathBuf },
    /// Backups (automatic export generations).
    #[command(subcommand)]
    Backup(BackupCommand),
    /// Platform drafts: compile and measure.
    #[command(subcommand)]
    Draft(crate::drafts::DraftCommand),
    /// Quality checks of a project: banned words, advertising law, limits, ...
    Check {
        project: String,
        #[arg(long = "platform")]
        platforms: Vec<String>,
    },
    /// Platform, audience and risk-list profiles.
    #[command(subcommand)]
    PlatformProfile(crate::drafts::PlatformProfileCommand),
    /// LLM profiles: model endpoints, with keys in the OS keychain.
    #[command(subcommand)]
    Profile(crate::profile::ProfileCommand),
    /// Drafting sessions with the assistant (the harness).
    #[command(subcommand)]
    Session(crate::session::SessionCommand),
    /// AI proposals: list, show, accept, reject, rebase.
    #[command(subcommand)]
    Proposal(crate::proposal::ProposalCommand),
    /// Team sync with a workspace server: connect, status, push, pull, pause, resume,
    /// members, invite, revoke, disconnect.
    #[command(subcommand)]
    Sync(crate::sync::SyncCommand),
    /// One-click optimize: `optimize PROJECT` (NDJSON progress, then the run),
    /// `optimize show RUN`, `optimize apply RUN [--platform P …] [--source]`,
    /// `optimize resume RUN`.
    Optimize(crate::optimize::OptimizeArgs),
    /// Publishing accounts (platform, name, handle).
    #[command(subcommand)]
    Account(crate::performance::AccountCommand),
    /// Publications: where and when a project's version went out.
    #[command(subcommand)]
    Publication(crate::performance::PublicationCommand),
    /// Performance metrics of publications: add by hand, list, keys.
    #[command(subcommand)]
    Perf(crate::performance::PerfCommand),
    /// AI changes accepted or rejected: who, why, through what, which model; CSV export.
    #[command(subcommand)]
    AiActivity(crate::activity::AiActivityCommand),
    /// Checkpoints of a session: the project's state at a point, to go back to.
    #[command(subcommand)]
    Checkpoint(crate::checkpoints::CheckpointCommand),
    /// Constraints of a session: your rejection reasons the assistant keeps to.
    #[command(subcommand)]
    Constraint(crate::checkpoints::ConstraintCommand),
    /// "Always allow" rules: list, narrow, remove.
    #[command(subcommand)]
    Rules(crate::rules::RulesCommand),
    /// Search the content of projects, versions and comments (not only titles).
    Search {
        /// Words, a phrase or a pasted title; omit with --reindex.
        #[arg(required_unless_present = "reindex")]
        query: Option<String>,
        /// Search one project (its working copy, versions and comments).
        #[arg(long)]
        project: Option<String>,
        /// working, version or comment; repeatable (default: all).
        #[arg(long = "kind")]
        kinds: Vec<String>,
        #[arg(long)]
        limit: Option<u32>,
        /// Rebuild the search index from the store (before searching, if a query is given).
        #[arg(long)]
        reindex: bool,
    },
    /// Ask a question of your own writing: an answer from the model with [N] citations,
    /// each resolved to its document and place, and every quote checked.
    Ask {
        question: String,
        /// Ask about one project only.
        #[arg(long)]
        project: Option<String>,
        /// The LLM profile to answer with (default: the default profile).
        #[arg(long)]
        profile: Option<String>,
        /// How many sources to answer from (1-12, default 6).
        #[arg(long)]
        limit: Option<u32>,
        /// `material` (search your writing, answer with citations) or `general`
        /// (answer directly); default: decided from the question.
        #[arg(long, value_parser = ["material", "general"])]
        route: Option<String>,
        /// Ask again instead of answering from the ten-minute cache.
        #[arg(long)]
        fresh: bool,
    },
    /// Serve the API and the UI on 127.0.0.1 for a browser.
    Serve(crate::serve::ServeArgs),
}

#[derive(Debug, Subcommand)]
pub enum BrandCommand {
    List,
    Create {
        name: String,
        #[arg(long)]
        voice: Option<String>,
        #[arg(long)]
        audience: Option<String>,
        /// A banned word; repeatable.
        #[arg(long = "banned")]
        banned_words: Vec<String>,
        #[arg(long)]
        cta: Option<String>,
        #[arg(long)]
        industry: Option<String>,
    },
    Show {
        id: String,
    },
    Delete {
        id: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum TemplateCommand {
    List,
    Create {
        name: String,
        /// May contain {date}.
        #[arg(long)]
        title_template: Option<String>,
        #[arg(long)]
        source_file: Option<PathBuf>,
        #[arg(long = "platform")]
        platforms: Vec<String>,
    },
    Show {
        id: String,
    },
    Delete {
        id: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum MediaCommand {
    /// Copy an image into the data folder for a project.
    Add {
        project: String,
        path: PathBuf,
        #[arg(long)]
        alt: Option<String>,
    },
    List {
        #[arg(long)]
        project: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum BackupCommand {
    List,
    Create,
}

pub(crate) fn read_input(path: &PathBuf) -> Result<String, Failure> {
    if path.as_os_str() == "-" {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text).map_err(|e| Failure::Usage(format!("cannot read standard input: {e}")))?;
        return Ok(text);
    }
    std::fs::read_to_string(path).map_err(|e| Failure::Usage(format!("cannot read {}: {e}", path.display())))
}

fn parse_params(text: &str) -> Result<Value, Failure> {
    let text = if text == "-" {
        read_input(&PathBuf::from("-"))?
    } else if let Some(path) = text.strip_prefix('@') {
        read_input(&PathBuf::from(path))?
    } else {
        text.to_owned()
    };
    serde_json::from_str(&text).map_err(|e| Failure::Usage(format!("--params is not valid JSON: {e}")))
}

fn path_string(path: &std::path::Path) -> String {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf()).display().to_string()
}

/// Runs a call, showing progress on a terminal.
pub(crate) fn call(engine: &Engine, method: &str, params: Value) -> Result<Value, Failure> {
    let show_progress = std::io::stderr().is_terminal();
    let result = engine.call_stream(method, params, &mut |event| {
        let StreamEvent::Progress(progress) = event else { return };
        if show_progress {
            eprint!("\r{} {}/{}   ", progress.phase, progress.done, progress.total);
        }
    });
    if show_progress {
        eprint!("\r\x1b[K");
    }
    Ok(result?)
}

pub(crate) fn print_json(value: &Value) {
    println!("{}", serde_json::to_string_pretty(value).unwrap_or_default());
}

pub(crate) fn s<'a>(value: &'a Value, key: &str) -> &'a str {
    value[key].as_str().unwrap_or("")
}

/// `2026-11-22T03:04:05.678Z` → `2026-11-22 03:04`.
pub(crate) fn short_time(value: &Value) -> String {
    let text = value.as_str().unwrap_or("");
    text.get(..16).map(|t| t.replace('T', " ")).unwrap_or_else(|| text.to_owned())
}

/// Prints the hunks of a text diff (`TextDiffResult`), changed words in brackets.
pub(crate) fn print_diff(diff: &Value) {
    for hunk in diff["hunks"].as_array().into_iter().flatten() {
        println!("@@ -{},{} +{},{} @@", hunk["oldStart"], hunk["oldLen"], hunk["newStart"], hunk["newLen"]);
        for line in hunk["lines"].as_array().into_iter().flatten() {
            let sign = match s(line, "kind") {
                "delete" => '-',
                "insert" => '+',
                _ => ' ',
            };
            let text: String = line["segments"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|seg| {
                    let t = s(seg, "text");
                    if seg["emphasized"] == true && sign != ' ' {
                        format!("[{t}]")
                    } else {
                        t.to_owned()
                    }
                })
                .collect();
            println!("{sign}{text}");
        }
    }
}

/// How a command's result is printed for people (`--json` prints the value itself).
type Render = Box<dyn Fn(&Value)>;

pub fn run(engine: &Engine, command: Command, as_json: bool) -> Result<(), Failure> {
    let (result, render): (Value, Render) = match command {
        Command::Call { method, params, stream } => {
            let params = parse_params(&params)?;
            if stream {
                let mut out = std::io::stdout().lock();
                // A closed stdout (a reader that stopped) ends a subscription.
                let result = engine
                    .call_stream_while(&method, params, &mut |event| writeln!(out, "{}", serde_json::to_string(&event).unwrap_or_default()).and_then(|()| out.flush()).is_ok());
                let _ = writeln!(out, "{}", json!({"type": "result", "data": result?}));
                return Ok(());
            }
            let result = engine.call(&method, params)?;
            print_json(&result);
            return Ok(());
        }
        Command::Methods => {
            for method in inkstone_api::api::METHODS {
                println!("{method}");
            }
            return Ok(());
        }
        Command::Serve(_) => return Err(Failure::Usage("serve is handled by main".to_owned())),
        Command::Update(_) => return Err(Failure::Usage("update is handled by main".to_owned())),
        Command::Profile(command) => return crate::profile::run(engine, command, as_json),
        Command::Session(command) => return crate::session::run(engine, command, as_json),
        Command::Proposal(command) => return crate::proposal::run(engine, command, as_json),
        Command::Sync(command) => return crate::sync::run(engine, command, as_json),
        Command::Optimize(args) => return crate::optimize::run(engine, args, as_json),
        Command::Account(command) => return crate::performance::account(engine, command, as_json),
        Command::Publication(command) => return crate::performance::publication(engine, command, as_json),
        Command::Perf(command) => return crate::performance::perf(engine, command, as_json),
        Command::AiActivity(command) => crate::activity::run(engine, command)?,
        Command::Checkpoint(command) => crate::checkpoints::checkpoint(engine, command)?,
        Command::Constraint(command) => crate::checkpoints::constraint(engine, command)?,
        Command::Rules(command) => crate::rules::rules(engine, command)?,
        Command::Project(command) => project(engine, command)?,
        Command::Draft(command) => crate::drafts::draft(engine, command)?,
        Command::Check { project, platforms } => crate::drafts::check(engine, project, platforms)?,
        Command::PlatformProfile(command) => crate::drafts::platform_profile(engine, command)?,
        Command::Version(command) => version(engine, command)?,
        Command::Comment(command) => comment(engine, command)?,
        Command::Brand(command) => brand(engine, command)?,
        Command::Template(command) => template(engine, command)?,
        Command::Media(command) => media(engine, command)?,
        Command::Export { dir } => (
            call(engine, "export.run", json!({"path": path_string(&dir)}))?,
            Box::new(|r: &Value| println!("Exported {} projects and {} versions to {}", r["manifest"]["counts"]["projects"], r["manifest"]["counts"]["versions"], s(r, "path"))),
        ),
        Command::Import { dir } => (
            call(engine, "import.run", json!({"path": path_string(&dir)}))?,
            Box::new(|r: &Value| println!("Imported {} projects and {} versions", r["counts"]["projects"], r["counts"]["versions"])),
        ),
        Command::ImportMd { path } => (
            call(engine, "import.markdown", json!({"path": path_string(&path)}))?,
            Box::new(|r: &Value| {
                for p in r["projects"].as_array().into_iter().flatten() {
                    println!("{}  {}", s(p, "id"), s(p, "title"));
                }
                for link in r["skippedLinks"].as_array().into_iter().flatten() {
                    println!("Skipped {} (a symbolic link; import what it points to by its own path)", link.as_str().unwrap_or_default());
                }
                for skipped in r["skipped"].as_array().into_iter().flatten() {
                    let existing = &skipped["existing"];
                    println!("Skipped {}: already imported as {}  {}", s(skipped, "path"), s(existing, "id"), s(existing, "title"));
                }
            }),
        ),
        Command::Backup(BackupCommand::List) => (
            call(engine, "backup.list", json!({}))?,
            Box::new(|r: &Value| {
                println!("Backups in {}", s(r, "folder"));
                for b in r["backups"].as_array().into_iter().flatten() {
                    let kept = if b["beforeRestore"] == true { "  (made before a restore; kept until you delete it)" } else { "" };
                    println!("{}  {} projects  {}{kept}", short_time(&b["manifest"]["exportedAt"]), b["manifest"]["counts"]["projects"], s(b, "path"));
                }
            }),
        ),
        Command::Backup(BackupCommand::Create) => (call(engine, "backup.create", json!({}))?, Box::new(|r: &Value| println!("Backup written to {}", s(r, "path")))),
        Command::Search { query, project, kinds, limit, reindex } => search(engine, query, project, kinds, limit, reindex)?,
        Command::Ask { question, project, profile, limit, route, fresh } => {
            let mut params = json!({"q": question});
            if let Some(project) = project {
                params["projectId"] = json!(project);
            }
            if let Some(profile) = profile {
                params["profile"] = json!(profile);
            }
            if let Some(limit) = limit {
                params["limit"] = json!(limit);
            }
            if let Some(route) = route {
                params["route"] = json!(route);
            }
            if fresh {
                params["fresh"] = json!(true);
            }
            (call(engine, "search.ask", params)?, Box::new(print_answer))
        }
    };
    if as_json {
        print_json(&result);
    } else {
        render(&result);
    }
    Ok(())
}

pub(crate) type Rendered = (Value, Box<dyn Fn(&Value)>);

fn brand(engine: &Engine, command: BrandCommand) -> Result<Rendered, Failure> {
    Ok(match command {
        BrandCommand::List => (
            call(engine, "brandProfile.list", json!({}))?,
            Box::new(|r: &Value| r["brandProfiles"].as_array().into_iter().flatten().for_each(|b| println!("{}  {}", s(b, "id"), s(b, "name")))),
        ),
        BrandCommand::Create { name, voice, audience, banned_words, cta, industry } => {
            let params = json!({"name": name, "voice": voice, "targetAudience": audience, "bannedWords": banned_words, "cta": cta, "industry": industry});
            (call(engine, "brandProfile.create", params)?, Box::new(|b: &Value| println!("Created {}  {}", s(b, "id"), s(b, "name"))))
        }
        BrandCommand::Show { id } => (call(engine, "brandProfile.get", json!({"id": id}))?, Box::new(print_json)),
        BrandCommand::Delete { id } => (call(engine, "brandProfile.delete", json!({"id": id}))?, Box::new(|r: &Value| println!("Deleted {}", s(r, "id")))),
    })
}

fn template(engine: &Engine, command: TemplateCommand) -> Result<Rendered, Failure> {
    Ok(match command {
        TemplateCommand::List => (
            call(engine, "template.list", json!({}))?,
            Box::new(|r: &Value| r["templates"].as_array().into_iter().flatten().for_each(|t| println!("{}  {}", s(t, "id"), s(t, "name")))),
        ),
        TemplateCommand::Create { name, title_template, source_file, platforms } => {
            let source = source_file.as_ref().map(read_input).transpose()?;
            let params = json!({"name": name, "titleTemplate": title_template, "sourceTemplate": source, "defaultPlatforms": platforms});
            (call(engine, "template.create", params)?, Box::new(|t: &Value| println!("Created {}  {}", s(t, "id"), s(t, "name"))))
        }
        TemplateCommand::Show { id } => (call(engine, "template.get", json!({"id": id}))?, Box::new(print_json)),
        TemplateCommand::Delete { id } => (call(engine, "template.delete", json!({"id": id}))?, Box::new(|r: &Value| println!("Deleted {}", s(r, "id")))),
    })
}

fn media(engine: &Engine, command: MediaCommand) -> Result<Rendered, Failure> {
    Ok(match command {
        MediaCommand::Add { project, path, alt } => (
            call(engine, "media.add", json!({"projectId": project, "path": path_string(&path), "altText": alt}))?,
            Box::new(|m: &Value| {
                println!("Added {} ({}×{}, {} bytes); reference it as ![{}](media/{})", s(m, "id"), m["width"], m["height"], m["byteSize"], s(m, "altText"), s(m, "fileName"))
            }),
        ),
        MediaCommand::List { project } => (
            call(engine, "media.list", json!({"projectId": project}))?,
            Box::new(|r: &Value| r["media"].as_array().into_iter().flatten().for_each(|m| println!("{}  {}×{}  {}", s(m, "id"), m["width"], m["height"], s(m, "originalName")))),
        ),
    })
}
