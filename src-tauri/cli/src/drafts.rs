//! Platform drafts from the command line: compile, check, measure, and the platform
//! profiles they use.

use clap::Subcommand;
use inkstone_core::Engine;
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
    /// Show one profile (`wechat@draft-v1`, `x@growth-v1`, `ad-law-zh@v1`).
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

pub fn draft(engine: &Engine, command: DraftCommand) -> Result<Rendered, Failure> {
    Ok(match command {
        DraftCommand::Compile { project, platforms } => (
            call(engine, "pipeline.compile", json!({"projectId": project, "platforms": platforms_param(&platforms)}))?,
            Box::new(|r: &Value| {
                for compiled in r["drafts"].as_array().into_iter().flatten() {
                    let draft = &compiled["draft"];
                    println!("== {} ({}) ==", s(draft, "platform"), s(draft, "profileId"));
                    let content = &draft["content"];
                    match s(content, "type") {
                        "html" => println!("{}", s(content, "html")),
                        "markdown" => println!("{}", s(content, "markdown")),
                        "thread" => {
                            for (idx, post) in content["posts"].as_array().into_iter().flatten().enumerate() {
                                println!("[{}] ({}/280) {}", idx + 1, post["weightedLength"], s(post, "text"));
                            }
                        }
                        _ => println!("{}\n{}", s(draft, "title"), s(content, "body")),
                    }
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
