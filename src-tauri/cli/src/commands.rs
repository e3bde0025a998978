//! Readable commands. Each one is a thin wrapper over one API call: it builds the
//! params, calls the engine, and prints the result as text (or JSON with --json).

use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;

use clap::Subcommand;
use inkstone_core::api::StreamEvent;
use inkstone_core::Engine;
use serde_json::{json, Value};

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
pub enum ProjectCommand {
    /// List projects, most recently changed first.
    List {
        /// Include archived projects.
        #[arg(long)]
        all: bool,
        #[arg(long)]
        query: Option<String>,
    },
    /// Create a project.
    Create {
        /// The title (optional with --template).
        title: Option<String>,
        /// Read the Markdown source from this file (`-` for standard input).
        #[arg(long)]
        source_file: Option<PathBuf>,
        /// A target platform (wechat, zhihu, x, douyin, xiaohongshu); repeatable.
        #[arg(long = "platform")]
        platforms: Vec<String>,
        #[arg(long)]
        template: Option<String>,
        #[arg(long)]
        brand: Option<String>,
    },
    /// Show a project with its working copy.
    Show {
        project: String,
    },
    /// Change the title or replace the working copy.
    Update {
        project: String,
        #[arg(long)]
        title: Option<String>,
        #[arg(long)]
        source_file: Option<PathBuf>,
        /// Refuse with CONFLICT when the project moved past this revision.
        #[arg(long)]
        base_revision: Option<u64>,
    },
    Archive {
        project: String,
    },
    Unarchive {
        project: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum VersionCommand {
    /// List versions, newest first.
    List { project: String },
    /// Save the working copy as the next version.
    Create {
        project: String,
        #[arg(short, long)]
        message: Option<String>,
    },
    /// Show one version's source.
    Show { project: String, number: u32 },
    /// Diff version FROM against TO (or the working copy).
    Diff { project: String, from: u32, to: Option<u32> },
    /// Restore a version as a new version (unsaved work is kept as an autosnapshot).
    Restore { project: String, number: u32 },
}

#[derive(Debug, Subcommand)]
pub enum CommentCommand {
    List {
        project: String,
        /// Hide resolved comments.
        #[arg(long)]
        open: bool,
    },
    Add {
        project: String,
        body: String,
        /// Anchor start (UTF-16 offset in the source).
        #[arg(long, requires = "to")]
        from: Option<u32>,
        #[arg(long, requires = "from")]
        to: Option<u32>,
    },
    Resolve {
        project: String,
        comment: String,
    },
    Reopen {
        project: String,
        comment: String,
    },
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

fn origin_text(origin: &Value) -> String {
    match origin["type"].as_str() {
        Some("restore") => format!("restore of v{}", origin["from"]),
        Some("aiProposal") => format!("AI proposal {} ({})", s(origin, "proposalId"), s(origin, "model")),
        Some("checkpoint") => format!("checkpoint {}", s(origin, "checkpointId")),
        // A colleague's version: the server's number, and how their client made it when
        // both sides carried that (a resolution of a sync conflict says so).
        Some("pulled") => match origin["remoteOrigin"].as_str() {
            Some("syncResolution") => format!("pulled resolution (server v{})", origin["serverNumber"]),
            Some(kind) => format!("pulled {kind} (server v{})", origin["serverNumber"]),
            None => format!("pulled (server v{})", origin["serverNumber"]),
        },
        Some("syncResolution") => "sync resolution".to_owned(),
        Some(other) => other.to_owned(),
        None => String::new(),
    }
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
                let result = engine.call_stream(&method, params, &mut |event| {
                    let _ = writeln!(out, "{}", serde_json::to_string(&event).unwrap_or_default());
                });
                let _ = writeln!(out, "{}", json!({"type": "result", "data": result?}));
                return Ok(());
            }
            let result = engine.call(&method, params)?;
            print_json(&result);
            return Ok(());
        }
        Command::Methods => {
            for method in inkstone_core::api::METHODS {
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

/// A snippet with its highlights in brackets.
fn marked_snippet(snippet: &Value) -> String {
    let units: Vec<u16> = s(snippet, "text").encode_utf16().collect();
    let mut out = String::new();
    let mut at = 0usize;
    for mark in snippet["highlights"].as_array().into_iter().flatten() {
        let (from, to) = (mark["from"].as_u64().unwrap_or(0) as usize, mark["to"].as_u64().unwrap_or(0) as usize);
        if from < at || to > units.len() || from > to {
            continue;
        }
        out.push_str(&String::from_utf16_lossy(&units[at..from]));
        out.push('[');
        out.push_str(&String::from_utf16_lossy(&units[from..to]));
        out.push(']');
        at = to;
    }
    out.push_str(&String::from_utf16_lossy(&units[at..]));
    out
}

fn search(engine: &Engine, query: Option<String>, project: Option<String>, kinds: Vec<String>, limit: Option<u32>, reindex: bool) -> Result<Rendered, Failure> {
    if reindex {
        let status = call(engine, "search.reindex", json!({}))?;
        if query.is_none() {
            return Ok((status, Box::new(|_: &Value| println!("The search index is being rebuilt from the store."))));
        }
        // The rebuild runs on the index's thread; wait for it before searching.
        engine.search_index().wait_idle(std::time::Duration::from_secs(600));
    }
    let mut params = json!({"q": query.unwrap_or_default(), "kinds": kinds});
    if kinds_empty(&params) {
        params.as_object_mut().map(|p| p.remove("kinds"));
    }
    if let Some(project) = project {
        params["projectId"] = json!(project);
    }
    if let Some(limit) = limit {
        params["limit"] = json!(limit);
    }
    let result = call(engine, "search.query", params)?;
    Ok((
        result,
        Box::new(|r: &Value| {
            if let Some(message) = r["notice"]["message"].as_str() {
                eprintln!("note: {message}");
            }
            let hits = r["hits"].as_array().cloned().unwrap_or_default();
            if hits.is_empty() {
                println!("No matches.");
            }
            for hit in hits {
                let mut place = s(&hit, "projectId").to_owned();
                if let Some(number) = hit["version"].as_u64() {
                    place.push_str(&format!("@v{number}"));
                }
                if let Some(comment) = hit["commentId"].as_str() {
                    place.push_str(&format!("#{comment}"));
                }
                if let (Some(from), Some(to)) = (hit["span"]["from"].as_u64(), hit["span"]["to"].as_u64()) {
                    place.push_str(&format!(":{from}-{to}"));
                }
                let title = if s(&hit, "title").is_empty() { s(&hit, "projectTitle") } else { s(&hit, "title") };
                println!("{place}  [{}]  {title}", s(&hit, "tier"));
                println!("    {}", marked_snippet(&hit["snippet"]));
            }
        }),
    ))
}

/// An answer, its cited sources with their places, the quotes the engine could not
/// find, and the footer.
fn print_answer(r: &Value) {
    if let Some(message) = r["notice"]["message"].as_str() {
        eprintln!("note: {message}");
    }
    let answer = s(r, "answer");
    if r["route"] == "general" {
        eprintln!("route: general (answered directly, without your writing; --route material to search it)");
    }
    if answer.is_empty() {
        println!("Nothing in your writing matches the question; no model was asked.");
    } else {
        println!("{answer}");
    }
    let citations = r["citations"].as_array().cloned().unwrap_or_default();
    if !citations.is_empty() {
        println!();
    }
    for c in &citations {
        let source = r["sources"].as_array().into_iter().flatten().find(|x| x["n"] == c["n"]).cloned().unwrap_or_default();
        let mut place = s(c, "projectId").to_owned();
        if let Some(number) = c["version"].as_u64() {
            place.push_str(&format!("@v{number}"));
        }
        if let Some(comment) = c["commentId"].as_str() {
            place.push_str(&format!("#{comment}"));
        }
        println!("[{}] {}  {place}:{}-{}", c["n"], s(&source, "projectTitle"), c["span"]["from"], c["span"]["to"]);
    }
    for q in r["quotes"].as_array().into_iter().flatten().filter(|q| q["found"] == false) {
        println!("! not in the sources: 「{}」", s(q, "text"));
    }
    for n in r["unknownCitations"].as_array().into_iter().flatten() {
        println!("! [{n}] names no source");
    }
    let cached = if r["cached"] == true { "  (cached)" } else { "" };
    println!("{}{cached}", s(r, "footer"));
}

fn kinds_empty(params: &Value) -> bool {
    params["kinds"].as_array().is_none_or(|k| k.is_empty())
}

fn print_project_line(p: &Value) {
    let archived = if p["archived"] == true { "  [archived]" } else { "" };
    println!("{}  v{:<3} {}  {}{archived}", s(p, "id"), p["head"], short_time(&p["updatedAt"]), s(p, "title"));
}

fn project(engine: &Engine, command: ProjectCommand) -> Result<Rendered, Failure> {
    Ok(match command {
        ProjectCommand::List { all, query } => (
            call(engine, "project.list", json!({"includeArchived": all, "query": query}))?,
            Box::new(|r: &Value| {
                let projects = r["projects"].as_array().cloned().unwrap_or_default();
                if projects.is_empty() {
                    println!("No projects yet. Create one with `inkstone-cli project create \"Title\"`.");
                }
                projects.iter().for_each(print_project_line);
            }),
        ),
        ProjectCommand::Create { title, source_file, platforms, template, brand } => {
            let source = source_file.as_ref().map(read_input).transpose()?;
            let params = json!({"title": title, "source": source, "platforms": if platforms.is_empty() { Value::Null } else { json!(platforms) }, "templateId": template, "brandProfileId": brand});
            (call(engine, "project.create", params)?, Box::new(|p: &Value| println!("Created {}  {}", s(p, "id"), s(p, "title"))))
        }
        ProjectCommand::Show { project } => (
            call(engine, "project.get", json!({"projectId": project}))?,
            Box::new(|p: &Value| {
                println!("# {}\n", s(p, "title"));
                println!("id {} · revision {} · head v{} · updated {}\n", s(p, "id"), p["revision"], p["head"], short_time(&p["updatedAt"]));
                print!("{}", s(p, "source"));
            }),
        ),
        ProjectCommand::Update { project, title, source_file, base_revision } => {
            let source = source_file.as_ref().map(read_input).transpose()?;
            let params = json!({"projectId": project, "title": title, "source": source, "baseRevision": base_revision});
            (call(engine, "project.update", params)?, Box::new(|p: &Value| println!("Saved {} (revision {})", s(p, "id"), p["revision"])))
        }
        ProjectCommand::Archive { project } => {
            (call(engine, "project.archive", json!({"projectId": project, "archived": true}))?, Box::new(|p: &Value| println!("Archived {}", s(p, "title"))))
        }
        ProjectCommand::Unarchive { project } => {
            (call(engine, "project.archive", json!({"projectId": project, "archived": false}))?, Box::new(|p: &Value| println!("Unarchived {}", s(p, "title"))))
        }
    })
}

fn version(engine: &Engine, command: VersionCommand) -> Result<Rendered, Failure> {
    Ok(match command {
        VersionCommand::List { project } => (
            call(engine, "version.list", json!({"projectId": project}))?,
            Box::new(|r: &Value| {
                for v in r["versions"].as_array().into_iter().flatten() {
                    let message = v["message"].as_str().map(|m| format!("  {m}")).unwrap_or_default();
                    println!("v{:<4} {}  {:<16} {}{message}", v["number"], short_time(&v["createdAt"]), origin_text(&v["origin"]), s(v, "author"));
                }
            }),
        ),
        VersionCommand::Create { project, message } => {
            (call(engine, "version.create", json!({"projectId": project, "message": message}))?, Box::new(|v: &Value| println!("Saved as version {}", v["number"])))
        }
        VersionCommand::Show { project, number } => {
            (call(engine, "version.get", json!({"projectId": project, "number": number}))?, Box::new(|v: &Value| print!("# {}\n\n{}", s(v, "title"), s(v, "source"))))
        }
        VersionCommand::Diff { project, from, to } => (
            call(engine, "version.diff", json!({"projectId": project, "from": from, "to": to}))?,
            Box::new(|r: &Value| {
                let to = if r["to"].is_null() { "working copy".to_owned() } else { format!("v{}", r["to"]) };
                println!("--- v{}\n+++ {to}", r["from"]);
                if r["titleChanged"] == true {
                    println!("title: {} → {}", s(r, "oldTitle"), s(r, "newTitle"));
                }
                print_diff(&r["diff"]);
            }),
        ),
        VersionCommand::Restore { project, number } => (
            call(engine, "version.restore", json!({"projectId": project, "number": number}))?,
            Box::new(|r: &Value| {
                if !r["autosnapshot"].is_null() {
                    println!("Unsaved changes kept as version {}", r["autosnapshot"]["number"]);
                }
                println!("Restored as version {}", r["restored"]["number"]);
            }),
        ),
    })
}

fn comment(engine: &Engine, command: CommentCommand) -> Result<Rendered, Failure> {
    Ok(match command {
        CommentCommand::List { project, open } => (
            call(engine, "comment.list", json!({"projectId": project, "includeResolved": !open}))?,
            Box::new(|r: &Value| {
                for c in r["comments"].as_array().into_iter().flatten() {
                    let state = if c["resolved"] == true { "resolved" } else { "open" };
                    let quote = c["quote"].as_str().map(|q| format!(" on “{q}”")).unwrap_or_default();
                    println!("{}  [{state}] {}{quote}: {}", s(c, "id"), s(c, "author"), s(c, "body"));
                }
            }),
        ),
        CommentCommand::Add { project, body, from, to } => {
            let anchor = match (from, to) {
                (Some(from), Some(to)) => json!({"from": from, "to": to}),
                _ => Value::Null,
            };
            (call(engine, "comment.add", json!({"projectId": project, "body": body, "anchor": anchor}))?, Box::new(|c: &Value| println!("Added comment {}", s(c, "id"))))
        }
        CommentCommand::Resolve { project, comment } => {
            (call(engine, "comment.resolve", json!({"projectId": project, "commentId": comment, "resolved": true}))?, Box::new(|c: &Value| println!("Resolved {}", s(c, "id"))))
        }
        CommentCommand::Reopen { project, comment } => {
            (call(engine, "comment.resolve", json!({"projectId": project, "commentId": comment, "resolved": false}))?, Box::new(|c: &Value| println!("Reopened {}", s(c, "id"))))
        }
    })
}

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

#[cfg(test)]
mod tests {
    use super::origin_text;
    use serde_json::json;

    #[test]
    fn a_pulled_version_names_its_server_number_and_a_resolution_says_so() {
        assert_eq!(origin_text(&json!({"type": "pulled", "serverNumber": 4, "pushedBy": "mem_a"})), "pulled (server v4)");
        assert_eq!(origin_text(&json!({"type": "pulled", "serverNumber": 5, "pushedBy": "mem_a", "remoteOrigin": "syncResolution"})), "pulled resolution (server v5)");
        assert_eq!(origin_text(&json!({"type": "pulled", "serverNumber": 6, "pushedBy": "mem_a", "remoteOrigin": "manual"})), "pulled manual (server v6)");
        assert_eq!(origin_text(&json!({"type": "syncResolution", "conflictId": "cnf_1"})), "sync resolution");
        assert_eq!(origin_text(&json!({"type": "restore", "from": 1})), "restore of v1");
    }
}
