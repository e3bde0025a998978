//! `inkstone-cli optimize …`: one-click optimize. `optimize PROJECT` runs an
//! optimization, printing the run's events as NDJSON while it runs and then the run;
//! `show` prints a run (per target: summary, flags, risks, fit before → after);
//! `resume` carries on a run the app's closing interrupted, printing as `optimize` does;
//! `apply` takes all of it, the source, or some platforms (or `--reject-all`).

use std::io::Write;

use clap::{Args, Subcommand};
use inkstone_api::api::StreamEvent;
use inkstone_api::Engine;
use serde_json::{json, Value};

use crate::commands::{call, print_json, s};
use crate::Failure;

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct OptimizeArgs {
    #[command(subcommand)]
    pub command: Option<OptimizeCommand>,
    /// The project to optimize.
    pub project: Option<String>,
    /// A target platform (wechat, zhihu, x, douyin, xiaohongshu); repeatable. Default: the project's.
    #[arg(long = "platform")]
    pub platforms: Vec<String>,
    /// recommendation, views, ctr, completion, engagement or conversion.
    #[arg(long)]
    pub goal: Option<String>,
    /// conservative, balanced or aggressive.
    #[arg(long)]
    pub intensity: Option<String>,
    /// Keep the title (no title candidates).
    #[arg(long)]
    pub keep_title: bool,
    /// Keep the writer's voice.
    #[arg(long)]
    pub keep_voice: bool,
    /// Keep the structure (sections and their order).
    #[arg(long)]
    pub keep_structure: bool,
    /// Avoid clickbait.
    #[arg(long)]
    pub avoid_clickbait: bool,
    /// Optimize only this platform's saved draft.
    #[arg(long)]
    pub draft: Option<String>,
    /// The LLM profile (default: the default profile).
    #[arg(long)]
    pub profile: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum OptimizeCommand {
    /// Show a run: per target its summary, flags, risks and fit score before → after.
    Show { run: String },
    /// A project's runs, newest first.
    List { project: String },
    /// Stop a running run, or discard an interrupted one (nothing is proposed or applied).
    Cancel { run: String },
    /// Carry on a run the app's closing interrupted (NDJSON progress, then the run); the
    /// model's replies already received are reused.
    Resume { run: String },
    /// Apply a ready run: everything (default), the source (--source), some platforms (--platform), or reject it all.
    Apply {
        run: String,
        #[arg(long = "platform")]
        platforms: Vec<String>,
        #[arg(long)]
        source: bool,
        /// The title to take from the candidates (with --source or alone).
        #[arg(long)]
        title: Option<String>,
        #[arg(long)]
        reject_all: bool,
        /// Confirm changing ready or published drafts.
        #[arg(long)]
        confirm_final: bool,
    },
}

fn target_name(target: &Value) -> String {
    if s(target, "type") == "draft" {
        s(target, "platform").to_owned()
    } else {
        "source".to_owned()
    }
}

fn print_run(run: &Value) {
    println!(
        "{}  {}  stage {}  model {}  goal {}  intensity {}",
        s(run, "id"),
        s(run, "status"),
        s(run, "stage"),
        s(run, "model"),
        s(&run["input"], "goal"),
        s(&run["input"], "intensity")
    );
    if let Some(error) = run.get("error").filter(|e| !e.is_null()) {
        println!("error: {} {}", s(error, "code"), s(error, "message"));
        for hint in error["hints"].as_array().into_iter().flatten() {
            match serde_json::from_value::<inkstone_api::error::Hint>(hint.clone()) {
                Ok(mut hint) => {
                    crate::word_for_cli(&mut hint);
                    println!("  hint: {}", hint.message);
                }
                Err(_) => println!("  hint: {}", s(hint, "message")),
            }
        }
    }
    let titles: Vec<&str> = run["titles"].as_array().into_iter().flatten().filter_map(|t| t.as_str()).collect();
    if !titles.is_empty() {
        println!("title candidates: {}", titles.join(" | "));
    }
    for target in run["targets"].as_array().into_iter().flatten() {
        let fit = match (target["fitBefore"]["score"].as_u64(), target["fitAfter"]["score"].as_u64()) {
            (Some(before), Some(after)) => format!("  fit {before} → {after}"),
            _ => String::new(),
        };
        println!("\n[{}] {}  proposal {}{fit}", target_name(&target["target"]), s(target, "outcome"), s(target, "proposalId"));
        println!("  {}", s(target, "summary"));
        for flag in target["flags"].as_array().into_iter().flatten() {
            println!("  flag: {}", flag.as_str().unwrap_or(""));
        }
        for risk in target["risks"].as_array().into_iter().flatten() {
            println!("  risk ({}): {}", s(risk, "severity"), s(risk, "message"));
        }
        if let Some(message) = target["outcomeMessage"].as_str() {
            println!("  {message}");
        }
    }
    println!("\n{}", s(run, "disclaimer"));
}

pub fn run(engine: &Engine, args: OptimizeArgs, as_json: bool) -> Result<(), Failure> {
    let show = |value: &Value| if as_json { print_json(value) } else { print_run(value) };
    match args.command {
        Some(OptimizeCommand::Show { run }) => show(&call(engine, "optimize.get", json!({"runId": run}))?),
        Some(OptimizeCommand::List { project }) => {
            let result = call(engine, "optimize.list", json!({"projectId": project}))?;
            if as_json {
                print_json(&result);
            } else {
                for run in result["runs"].as_array().into_iter().flatten() {
                    println!("{}  {:<14} {}  {}", s(run, "id"), s(run, "status"), s(&run["input"], "goal"), s(run, "createdAt"));
                }
            }
        }
        Some(OptimizeCommand::Cancel { run }) => {
            let result = call(engine, "optimize.cancel", json!({"runId": run}))?;
            println!("{}", if result["cancelled"] == true { "Cancelled." } else { "The run is neither running here nor interrupted." });
        }
        Some(OptimizeCommand::Resume { run }) => stream_run(engine, "optimize.resume", json!({"runId": run}))?,
        Some(OptimizeCommand::Apply { run, platforms, source, title, reject_all, confirm_final }) => {
            let all = platforms.is_empty() && !source && title.is_none() && !reject_all;
            let mut params = json!({"runId": run, "all": all, "source": source || title.is_some(), "platforms": platforms, "rejectAll": reject_all, "confirmFinal": confirm_final});
            if let Some(title) = title {
                params["title"] = json!(title);
            }
            let result = call(engine, "optimize.apply", params)?;
            if as_json {
                print_json(&result);
            } else {
                for r in result["results"].as_array().into_iter().flatten() {
                    let made = match (r["version"].as_u64(), r["draftRevision"].as_u64()) {
                        (Some(v), _) => format!("version {v}"),
                        (None, Some(d)) => format!("draft revision {d}"),
                        _ => String::new(),
                    };
                    let error = r["error"].get("message").and_then(Value::as_str).map(|m| format!(" — {m}")).unwrap_or_default();
                    println!("{}: {} {made}{error}", target_name(&r["target"]), s(r, "outcome"));
                }
                println!("Run {} is {}.", s(&result["run"], "id"), s(&result["run"], "status"));
            }
        }
        None => {
            let Some(project) = args.project else { return Err(Failure::Usage("name a project: `inkstone-cli optimize PROJECT`".to_owned())) };
            let mut params = json!({
                "projectId": project,
                "constraints": {"keepTitle": args.keep_title, "keepVoice": args.keep_voice, "keepStructure": args.keep_structure, "avoidClickbait": args.avoid_clickbait},
            });
            if !args.platforms.is_empty() {
                params["platforms"] = json!(args.platforms);
            }
            for (key, value) in [("goal", args.goal), ("intensity", args.intensity), ("draft", args.draft), ("profile", args.profile)] {
                if let Some(value) = value {
                    params[key] = json!(value);
                }
            }
            stream_run(engine, "optimize.start", params)?;
        }
    }
    Ok(())
}

/// Runs a streaming run method, printing NDJSON: one line per event of the run's log,
/// then the run.
fn stream_run(engine: &Engine, method: &str, params: Value) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    let result = engine.call_stream(method, params, &mut |event| {
        if let StreamEvent::Harness(event) = event {
            if event.sequence > 0 {
                let _ = writeln!(out, "{}", serde_json::to_string(&event).unwrap_or_default());
                let _ = out.flush();
            }
        }
    })?;
    let _ = writeln!(out, "{}", json!({"type": "result", "data": result}));
    Ok(())
}
