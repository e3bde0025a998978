//! Platform drafts from the command line: compile, check, measure, and the platform
//! profiles they use.

use clap::Subcommand;
use inkstone_api::Engine;
use serde_json::{json, Value};

use crate::commands::{call, print_json, s, Rendered};
use crate::Failure;

#[derive(Debug, Subcommand)]
pub enum DraftCommand {
    /// Compile the project's working copy for its platforms (or --platform).
    Compile {
        project: String,
        /// wechat, zhihu, x, douyin or xiaohongshu; repeatable.
        #[arg(long = "platform")]
        platforms: Vec<String>,
    },
    /// List the project's saved platform drafts with their revisions and statuses.
    List { project: String },
    /// Show one saved platform draft.
    Show {
        project: String,
        #[arg(long)]
        platform: String,
    },
    /// Compile the working copy and save it as the platform's draft. A hand-edited
    /// draft is not overwritten: the difference is shown, and `--replace REVISION`
    /// takes the new compile.
    Save {
        project: String,
        #[arg(long)]
        platform: String,
        /// Replace the hand-edited draft at this revision with the fresh compile.
        #[arg(long = "replace", value_name = "REVISION")]
        replace_revision: Option<u32>,
    },
    /// Edit a saved draft by hand: the body from FILE (`-` for standard input). For x,
    /// posts are separated by lines holding only `---`.
    Edit {
        project: String,
        #[arg(long)]
        platform: String,
        /// The draft revision the edit is based on (see `draft show`).
        #[arg(long)]
        base_revision: u32,
        #[arg(long)]
        title: Option<String>,
        /// The new body: HTML for wechat, Markdown for zhihu, the thread for x, the caption or note for douyin and xiaohongshu.
        #[arg(long)]
        file: Option<std::path::PathBuf>,
        /// Topic tags for douyin and xiaohongshu, comma-separated.
        #[arg(long)]
        tags: Option<String>,
    },
    /// Set a draft's status: draft, ready, publishing (read-only) or published.
    Status {
        project: String,
        #[arg(long)]
        platform: String,
        status: String,
        #[arg(long)]
        base_revision: Option<u32>,
    },
    /// Measure a text as a platform counts it: `draft measure --platform x "text"`.
    Measure {
        #[arg(long)]
        platform: String,
        /// title, digest, body, tags, images, post or posts (default: post for x, else title).
        #[arg(long)]
        field: Option<String>,
        text: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum PlatformProfileCommand {
    /// List the platform, audience and risk-list profiles in force.
    List,
    /// Show one profile (`wechat@draft-v1`, `x@growth-v1`, `ad-law-zh@v2`).
    Show { id: String },
}

fn platforms_param(platforms: &[String]) -> Value {
    if platforms.is_empty() {
        Value::Null
    } else {
        json!(platforms)
    }
}

fn print_findings(findings: &[Value]) {
    for f in findings {
        let place = match (&f["span"], f["location"].as_str()) {
            (Value::Object(span), _) => format!("@{}..{}", span["from"], span["to"]),
            (_, Some(location)) => format!("@{location}"),
            _ => String::new(),
        };
        let platform = f["platform"].as_str().map(|p| format!("[{p}] ")).unwrap_or_default();
        println!("  {:<5} {platform}{} {place}: {}", s(f, "severity"), s(f, "check"), s(f, "message"));
    }
}

fn print_saved(d: &Value) {
    let edited = if d["handEdited"] == true { ", edited by hand" } else { "" };
    println!(
        "{:<12} rev {:<3} {:<10} from source rev {} (version {}), {}{edited}",
        s(d, "platform"),
        d["revision"],
        s(d, "status"),
        d["sourceRevision"],
        d["sourceVersion"],
        s(d, "profileId")
    );
}

fn print_content(draft: &Value) {
    let content = &draft["content"];
    match s(content, "type") {
        "html" => println!("{}", s(content, "html")),
        "markdown" => println!("{}", s(content, "markdown")),
        "thread" => {
            for (idx, post) in content["posts"].as_array().into_iter().flatten().enumerate() {
                println!("[{}] ({}/280) {}", idx + 1, post["weightedLength"], s(post, "text"));
            }
        }
        _ => {
            println!("{}\n{}", s(draft, "title"), s(content, "body"));
            let tags: Vec<&str> = content["tags"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
            if !tags.is_empty() {
                println!("tags: {}", tags.join(", "));
            }
        }
    }
}

/// The edited content of `saved`'s kind, with `body` (and `tags`) replaced.
fn edited_content(saved: &Value, body: Option<String>, tags: Option<String>) -> Value {
    let mut content = saved["content"].clone();
    match s(&content, "type") {
        "html" => {
            if let Some(body) = body {
                content["html"] = json!(body);
            }
        }
        "markdown" => {
            if let Some(body) = body {
                content["markdown"] = json!(body);
            }
        }
        "thread" => {
            if let Some(body) = body {
                let posts: Vec<Value> = body.split("\n---\n").map(str::trim).filter(|p| !p.is_empty()).map(|p| json!({"text": p, "weightedLength": 0})).collect();
                content["posts"] = json!(posts);
            }
        }
        _ => {
            if let Some(body) = body {
                content["body"] = json!(body.trim_end());
            }
            if let Some(tags) = tags {
                let tags: Vec<&str> = tags.split([',', '，']).map(str::trim).filter(|t| !t.is_empty()).collect();
                content["tags"] = json!(tags);
            }
        }
    }
    content
}

pub fn draft(engine: &Engine, command: DraftCommand) -> Result<Rendered, Failure> {
    Ok(match command {
        DraftCommand::List { project } => (
            call(engine, "platformDraft.list", json!({"projectId": project}))?,
            Box::new(|r: &Value| {
                let drafts = r["drafts"].as_array().cloned().unwrap_or_default();
                if drafts.is_empty() {
                    println!("No saved drafts. Save one with `inkstone-cli draft save PROJECT --platform P`.");
                }
                for d in &drafts {
                    print_saved(d);
                }
            }),
        ),
        DraftCommand::Show { project, platform } => (
            call(engine, "platformDraft.get", json!({"projectId": project, "platform": platform}))?,
            Box::new(|d: &Value| {
                print_saved(d);
                println!();
                print_content(d);
            }),
        ),
        DraftCommand::Save { project, platform, replace_revision } => (
            call(engine, "platformDraft.save", json!({"projectId": project, "platform": platform, "replaceRevision": replace_revision}))?,
            Box::new(|r: &Value| {
                let d = &r["draft"];
                match s(r, "outcome") {
                    "needsChoice" => {
                        println!("The saved {} draft was edited by hand (revision {}); nothing was saved.", s(d, "platform"), d["revision"]);
                        println!("What the new compile would change:");
                        for hunk in r["diff"]["hunks"].as_array().into_iter().flatten() {
                            for line in hunk["lines"].as_array().into_iter().flatten() {
                                let text: String = line["segments"].as_array().into_iter().flatten().filter_map(|seg| seg["text"].as_str()).collect();
                                let mark = match s(line, "kind") {
                                    "delete" => "-",
                                    "insert" => "+",
                                    _ => " ",
                                };
                                println!("{mark} {}", text.trim_end_matches('\n'));
                            }
                        }
                        println!("Take it with: inkstone-cli draft save {} --platform {} --replace {}", s(d, "projectId"), s(d, "platform"), d["revision"]);
                    }
                    outcome => {
                        println!("{outcome}:");
                        print_saved(d);
                        print_findings(r["compiled"]["findings"].as_array().map(Vec::as_slice).unwrap_or(&[]));
                    }
                }
            }),
        ),
        DraftCommand::Edit { project, platform, base_revision, title, file, tags } => {
            let saved = call(engine, "platformDraft.get", json!({"projectId": project, "platform": platform}))?;
            let body = file.as_ref().map(crate::commands::read_input).transpose()?;
            if body.is_none() && tags.is_none() && title.is_none() {
                return Err(Failure::Usage("nothing to change: give --file, --title or --tags".to_owned()));
            }
            let content = edited_content(&saved, body, tags);
            (
                call(engine, "platformDraft.edit", json!({"projectId": project, "platform": platform, "baseRevision": base_revision, "title": title, "content": content}))?,
                Box::new(|r: &Value| {
                    print_saved(&r["draft"]);
                    print_findings(r["findings"].as_array().map(Vec::as_slice).unwrap_or(&[]));
                }),
            )
        }
        DraftCommand::Status { project, platform, status, base_revision } => {
            (call(engine, "platformDraft.setStatus", json!({"projectId": project, "platform": platform, "status": status, "baseRevision": base_revision}))?, Box::new(print_saved))
        }
        DraftCommand::Compile { project, platforms } => (
            call(engine, "pipeline.compile", json!({"projectId": project, "platforms": platforms_param(&platforms)}))?,
            Box::new(|r: &Value| {
                for compiled in r["drafts"].as_array().into_iter().flatten() {
                    let draft = &compiled["draft"];
                    println!("== {} ({}) ==", s(draft, "platform"), s(draft, "profileId"));
                    print_content(draft);
                    print_findings(compiled["findings"].as_array().map(Vec::as_slice).unwrap_or(&[]));
                    println!();
                }
                print_findings(r["findings"].as_array().map(Vec::as_slice).unwrap_or(&[]));
            }),
        ),
        DraftCommand::Measure { platform, field, text } => {
            let field = field.unwrap_or_else(|| if platform == "x" { "post".to_owned() } else { "title".to_owned() });
            (
                call(engine, "pipeline.measure", json!({"platform": platform, "field": field, "text": text}))?,
                Box::new(|m: &Value| {
                    let verdict = if m["valid"] == true { "fits" } else { "too long" };
                    println!("{} {}: {} {} (limit {}): {verdict}", s(m, "platform"), s(m, "field"), m["weightedLength"], s(m, "unit"), m["limit"]);
                }),
            )
        }
    })
}

pub fn check(engine: &Engine, project: String, platforms: Vec<String>) -> Result<Rendered, Failure> {
    Ok((
        call(engine, "quality.check", json!({"projectId": project, "platforms": platforms_param(&platforms)}))?,
        Box::new(|r: &Value| {
            let findings = r["findings"].as_array().cloned().unwrap_or_default();
            if findings.is_empty() {
                println!("No findings.");
            }
            print_findings(&findings);
        }),
    ))
}

pub fn platform_profile(engine: &Engine, command: PlatformProfileCommand) -> Result<Rendered, Failure> {
    Ok(match command {
        PlatformProfileCommand::List => (
            call(engine, "platformProfile.list", json!({}))?,
            Box::new(|r: &Value| {
                for key in ["drafts", "growth", "riskLists"] {
                    for p in r[key].as_array().into_iter().flatten() {
                        println!("{}", s(p, "id"));
                    }
                }
            }),
        ),
        PlatformProfileCommand::Show { id } => (call(engine, "platformProfile.get", json!({"id": id}))?, Box::new(print_json)),
    })
}
