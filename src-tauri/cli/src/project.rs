//! `project`, `version` and `comment`: the project's working copy, its versions and its
//! comments.

use std::path::PathBuf;

use clap::Subcommand;
use inkstone_api::Engine;
use serde_json::{json, Value};

use crate::commands::{call, print_diff, read_input, s, short_time, Rendered};
use crate::Failure;

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

fn print_project_line(p: &Value) {
    let archived = if p["archived"] == true { "  [archived]" } else { "" };
    println!("{}  v{:<3} {}  {}{archived}", s(p, "id"), p["head"], short_time(&p["updatedAt"]), s(p, "title"));
}

pub(crate) fn project(engine: &Engine, command: ProjectCommand) -> Result<Rendered, Failure> {
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

pub(crate) fn version(engine: &Engine, command: VersionCommand) -> Result<Rendered, Failure> {
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

pub(crate) fn comment(engine: &Engine, command: CommentCommand) -> Result<Rendered, Failure> {
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
