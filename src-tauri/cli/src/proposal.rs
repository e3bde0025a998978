//! `inkstone-cli proposal …`: the person's side of AI proposals. `show` prints the
//! hunks as a diff with their ids; `accept` takes all or some of them (`--hunk`), and
//! needs the revision the person reviewed (`--base`, shown by `show`); `why` lists what
//! the assistant had read before it proposed the change.

use clap::Subcommand;
use inkstone_api::Engine;
use serde_json::{json, Value};

use crate::commands::{call, print_json, s};
use crate::Failure;

#[derive(Debug, Subcommand)]
pub enum ProposalCommand {
    /// List a project's proposals, newest first.
    List {
        project: String,
        /// proposed, accepted, partially_accepted, rejected or superseded.
        #[arg(long)]
        status: Option<String>,
        /// Only this session's (or run's) proposals.
        #[arg(long)]
        session: Option<String>,
    },
    /// Show a proposal: its summary, staleness, findings and hunks as a diff.
    Show { proposal: String },
    /// Accept all hunks, or those given with --hunk, as one new version (or draft revision).
    Accept {
        proposal: String,
        /// The target revision you reviewed against (printed by `proposal show`).
        #[arg(long = "base")]
        expected_base: u64,
        /// A hunk id to take; repeatable. Default: every hunk not rejected.
        #[arg(long = "hunk")]
        hunks: Vec<String>,
        /// The candidate to take (a title, or a tag: repeatable).
        #[arg(long = "choice")]
        choices: Vec<String>,
        /// Confirm changing a ready or published draft.
        #[arg(long)]
        confirm_final: bool,
    },
    /// Reject the proposal, or the hunks given with --hunk; a reason becomes a
    /// constraint the assistant follows for the rest of the session.
    Reject {
        proposal: String,
        #[arg(long = "hunk")]
        hunks: Vec<String>,
        #[arg(long)]
        reason: Option<String>,
    },
    /// Carry a stale proposal onto the current text (hunks that overlap your edits are reported, never merged).
    Rebase { proposal: String },
    /// Why this change: what the assistant had read before it proposed it (search hits,
    /// memory, tool results, pins, the selection, links), for every hunk or one.
    Why {
        proposal: String,
        /// Only the sources this hunk came with.
        #[arg(long)]
        hunk: Option<String>,
    },
}

/// One source of `proposal why`, on one line: its kind, where it can be opened, and
/// what the assistant read there.
fn source_line(entry: &Value) -> String {
    let source = &entry["source"];
    let hunks: Vec<&str> = entry["hunkIds"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    let hunks = if hunks.is_empty() { String::new() } else { format!("  [{}]", hunks.join(", ")) };
    let line = match s(source, "type") {
        "searchHit" => format!("search hit   {}  {}: {}", s(source, "reference"), s(source, "title"), s(source, "snippet")),
        "memory" => format!("memory       {}  {}", s(source, "memoryId"), s(source, "text")),
        "toolResult" => {
            let stored = source["resultRef"].as_str().map(|r| format!(", stored as {r}")).unwrap_or_default();
            format!("tool result  {} ({} event {}{stored})", s(source, "tool"), s(source, "ownerId"), source["sequence"])
        }
        "pin" => format!("pin          {}  {}", s(source, "pinId"), s(source, "text")),
        "selection" => format!("selection    {}-{}  {}", source["span"]["from"], source["span"]["to"], s(source, "text")),
        "link" => format!("link         {}", s(source, "url")),
        other => other.to_owned(),
    };
    format!("{line}{hunks}")
}

fn non_empty(values: Vec<String>) -> Value {
    if values.is_empty() {
        Value::Null
    } else {
        json!(values)
    }
}

fn status_line(p: &Value) -> String {
    let stale = if p["stale"] == true { "  STALE" } else { "" };
    let target = match s(&p["target"], "type") {
        "draft" => format!("draft:{}", s(&p["target"], "platform")),
        "comment" => format!("comment:{}", s(&p["target"], "commentId")),
        other => other.to_owned(),
    };
    format!("{}  {:<16} {:<18} {:<20} {} hunks{stale}  {}", s(p, "id"), s(p, "kind"), s(p, "status"), target, p["hunks"].as_array().map_or(0, Vec::len), s(p, "summary"))
}

fn print_hunks(p: &Value) {
    for hunk in p["hunks"].as_array().into_iter().flatten() {
        let display = &hunk["display"];
        println!("@@ {} -{},{} +{},{} @@", s(hunk, "id"), display["oldStart"], display["oldLen"], display["newStart"], display["newLen"]);
        for line in display["lines"].as_array().into_iter().flatten() {
            let sign = match s(line, "kind") {
                "delete" => '-',
                "insert" => '+',
                _ => ' ',
            };
            let text: String = line["segments"].as_array().into_iter().flatten().map(|seg| s(seg, "text")).collect();
            println!("{sign}{text}");
        }
    }
}

pub fn run(engine: &Engine, command: ProposalCommand, as_json: bool) -> Result<(), Failure> {
    match command {
        ProposalCommand::List { project, status, session } => {
            let result = call(engine, "proposal.list", json!({"projectId": project, "status": status, "ownerId": session}))?;
            if as_json {
                print_json(&result);
            } else {
                let list = result["proposals"].as_array().cloned().unwrap_or_default();
                if list.is_empty() {
                    println!("No proposals.");
                }
                for p in &list {
                    println!("{}", status_line(p));
                }
            }
        }
        ProposalCommand::Show { proposal } => {
            let p = call(engine, "proposal.get", json!({"proposalId": proposal}))?;
            if as_json {
                print_json(&p);
                return Ok(());
            }
            println!("{}", status_line(&p));
            if let Some(reason) = p["staleReason"].as_str() {
                println!("stale: {reason} Rebase it with `inkstone-cli proposal rebase {}`.", s(&p, "id"));
            }
            let base = &p["base"];
            match base["draftRevision"].as_u64() {
                Some(revision) => println!("base: draft revision {revision} (accept with --base <the draft's current revision>)"),
                None => println!("base: project revision {}, version {} (accept with --base <the project's current revision>)", base["revision"], base["head"]),
            }
            let origin = &p["origin"];
            println!("from: {} {} via {} ({}), prompt {}", s(origin, "sessionId"), s(origin, "runId"), s(origin, "model"), s(origin, "profileId"), s(origin, "promptVersion"));
            for f in p["newFindings"].as_array().into_iter().flatten() {
                println!("introduces: [{}] {} {}", s(f, "severity"), s(f, "check"), s(f, "message"));
            }
            match s(&p["payload"], "type") {
                "candidates" => {
                    for c in p["payload"]["candidates"].as_array().into_iter().flatten() {
                        println!("candidate: {}  — {}", s(c, "text"), s(c, "rationale"));
                    }
                }
                "outline" => println!("{}", s(&p["payload"], "outline")),
                "commentReply" => println!("reply: {}", s(&p["payload"], "body")),
                "checklist" => {
                    for item in p["payload"]["items"].as_array().into_iter().flatten() {
                        let mark = if item["resolved"] == true { "x" } else { " " };
                        println!("[{mark}] {} {}", s(item, "id"), s(item, "text"));
                    }
                }
                "metadata" => println!("{}", serde_json::to_string(&p["payload"]["change"]).unwrap_or_default()),
                _ => print_hunks(&p),
            }
        }
        ProposalCommand::Accept { proposal, expected_base, hunks, choices, confirm_final } => {
            let params = json!({
                "proposalId": proposal, "expectedBase": expected_base, "hunks": non_empty(hunks), "choices": non_empty(choices), "confirmFinal": confirm_final,
            });
            let result = call(engine, "proposal.accept", params)?;
            if as_json {
                print_json(&result);
            } else {
                let p = &result["proposal"];
                match (result["version"].as_object(), result["draft"].as_object()) {
                    (Some(v), _) => println!("Accepted {} ({}) as version {}.", s(p, "id"), s(p, "status"), v["number"]),
                    (None, Some(d)) => {
                        println!("Accepted {} ({}) into the {} draft, revision {}.", s(p, "id"), s(p, "status"), d["platform"].as_str().unwrap_or(""), d["revision"])
                    }
                    _ => println!("Accepted {} ({}).", s(p, "id"), s(p, "status")),
                }
            }
        }
        ProposalCommand::Reject { proposal, hunks, reason } => {
            let result = call(engine, "proposal.reject", json!({"proposalId": proposal, "hunks": non_empty(hunks), "reason": reason}))?;
            if as_json {
                print_json(&result);
            } else {
                println!("{} is {}.", s(&result["proposal"], "id"), s(&result["proposal"], "status"));
                if let Some(c) = result["constraint"].as_object() {
                    println!("The assistant will follow this from now on: {}", c["text"].as_str().unwrap_or(""));
                }
            }
        }
        ProposalCommand::Why { proposal, hunk } => {
            let result = call(engine, "proposal.why", json!({"proposalId": proposal, "hunkId": hunk}))?;
            if as_json {
                print_json(&result);
                return Ok(());
            }
            let sources = result["sources"].as_array().cloned().unwrap_or_default();
            match (sources.is_empty(), hunk) {
                (true, _) => println!("No sources were recorded for this change."),
                (false, Some(hunk)) => println!("Hunk {hunk} of {} was proposed after reading:", s(&result, "proposalId")),
                (false, None) => println!("{} was proposed after reading:", s(&result, "proposalId")),
            }
            for entry in &sources {
                println!("  {}", source_line(entry));
            }
        }
        ProposalCommand::Rebase { proposal } => {
            let result = call(engine, "proposal.rebase", json!({"proposalId": proposal}))?;
            if as_json {
                print_json(&result);
            } else {
                println!("Rebased {} as {}.", s(&result["previous"], "id"), s(&result["proposal"], "id"));
                for c in result["conflicts"].as_array().into_iter().flatten() {
                    println!("left out {}: it overlaps your edit of lines {}..", s(c, "hunkId"), c["theirStart"].as_u64().unwrap_or(0) + 1);
                }
            }
        }
    }
    Ok(())
}
