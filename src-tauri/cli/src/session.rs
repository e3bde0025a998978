//! `inkstone-cli session …`: harness sessions. `send`, `approve`, `deny` and `answer`
//! print every event as one NDJSON line while the turn runs, then the result line,
//! and exit when the turn ends or blocks on an approval or a question.

use std::io::Write;

use clap::Subcommand;
use inkstone_api::api::StreamEvent;
use inkstone_api::harness::TurnEndReason;
use inkstone_api::{ApiError, Engine};
use serde_json::{json, Value};

use crate::commands::{call, print_diff, print_json, s};
use crate::Failure;

#[derive(Debug, Subcommand)]
pub enum SessionCommand {
    /// Start a session on a project.
    New {
        project: String,
        /// An LLM profile id or name (default: the default profile).
        #[arg(long)]
        profile: Option<String>,
        #[arg(long, value_parser = ["default", "plan"])]
        mode: Option<String>,
    },
    /// List sessions.
    List {
        #[arg(long)]
        project: Option<String>,
        #[arg(long)]
        all: bool,
    },
    /// Send a message; prints events as NDJSON until the turn ends or blocks.
    Send {
        session: String,
        text: String,
        #[arg(long, value_parser = ["default", "plan"])]
        mode: Option<String>,
        /// Scope the task to this passage of the project's source (as the editor's
        /// selection does); it must occur exactly once.
        #[arg(long)]
        select: Option<String>,
    },
    /// Approve a pending request; the turn continues.
    Approve {
        session: String,
        request: String,
        /// Also allow such calls from now on, in this scope: session, project or
        /// workspace (refused for tools that always ask).
        #[arg(long)]
        always: Option<String>,
    },
    /// Deny a pending request; the turn continues.
    Deny {
        session: String,
        request: String,
        #[arg(long)]
        note: Option<String>,
    },
    /// Answer a pending question; the turn continues.
    Answer { session: String, question: String, answer: String },
    /// Print the logged events as NDJSON, from a sequence number.
    Events {
        session: String,
        #[arg(long, default_value_t = 1)]
        from: u64,
    },
    /// The session's state and timeline.
    Show { session: String },
    /// Stop the running turn of a session (from another process this has no effect:
    /// the data folder is held by the sender).
    Interrupt { session: String },
    /// Archive a session (it can be read, not continued, until it is unarchived).
    Archive { session: String },
    /// Bring an archived session back, so it can be continued.
    Unarchive { session: String },
    /// Stage a proposal (all its hunks, or those named) in the session's working copy;
    /// nothing official changes until `apply-staging`.
    Stage {
        session: String,
        proposal: String,
        /// A hunk id to stage; repeatable (default: every hunk not rejected).
        #[arg(long = "hunk")]
        hunks: Vec<String>,
    },
    /// Show the staged proposals and what they change (baseline → effective source).
    Staging { session: String },
    /// Drop the staged set; the proposals stay open.
    DiscardStaging { session: String },
    /// Apply the staged set as one version.
    ApplyStaging {
        session: String,
        /// The project revision you reviewed against (default: the one the set was
        /// staged on, so the apply is refused if the project moved since).
        #[arg(long)]
        expected_revision: Option<u64>,
    },
}

fn print_staging(view: &Value) {
    let Some(staging) = view["staging"].as_object() else {
        println!("Nothing is staged.");
        return;
    };
    println!("Staged on revision {} of project {}", staging["baseRevision"], staging["projectId"].as_str().unwrap_or(""));
    for (entry, proposal) in staging["entries"].as_array().into_iter().flatten().zip(view["proposals"].as_array().into_iter().flatten()) {
        let hunks = entry["hunks"].as_array().map_or(0, Vec::len);
        let of = proposal["hunks"].as_array().map_or(0, Vec::len);
        println!("  {}  {hunks}/{of} hunks  {}", s(entry, "proposalId"), s(proposal, "summary"));
    }
    if view["baselineMoved"] == true {
        println!("The working copy changed since: applying is refused; discard and stage again.");
    }
    print_diff(&view["diff"]);
}

/// Calls a streaming method, printing each harness event as an NDJSON line, then the
/// result (or the error) as the last line.
/// The `{from, to, text}` of `passage` in the session's project source, in UTF-16
/// units as the editor counts them. A passage that is missing or occurs more than once
/// is a validation error naming both ways out.
fn selection(engine: &Engine, session: &str, passage: &str) -> Result<Value, Failure> {
    let view = call(engine, "session.get", json!({"sessionId": session}))?;
    let project = call(engine, "project.get", json!({"projectId": view["session"]["projectId"]}))?;
    let source = project["source"].as_str().unwrap_or_default();
    let found: Vec<usize> = if passage.is_empty() { Vec::new() } else { source.match_indices(passage).map(|(at, _)| at).collect() };
    let refine = |e: ApiError| e.hint("longer_selection", "Quote a longer passage that occurs once in the source, or send the task without --select.");
    match found.as_slice() {
        [at] => {
            let from = source[..*at].encode_utf16().count();
            let to = from + passage.encode_utf16().count();
            Ok(json!({"from": from, "to": to, "text": passage}))
        }
        [] => Err(refine(ApiError::validation("select", "The passage given with --select is not in the project's source."))
            .hint("check_source", "Print the source with `inkstone-cli project show` and copy the passage exactly.")
            .into()),
        many => Err(refine(ApiError::validation("select", format!("The passage given with --select occurs {} times in the project's source.", many.len()))).into()),
    }
}

fn streamed(engine: &Engine, method: &str, params: Value) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    let result = engine.call_stream(method, params, &mut |event| {
        if let StreamEvent::Harness(event) = event {
            let _ = writeln!(out, "{}", serde_json::to_string(&event).unwrap_or_default());
            let _ = out.flush();
        }
    });
    let result = result?;
    let _ = writeln!(out, "{}", json!({"type": "result", "data": result}));
    // A turn that ended with an error (the context too long, the model failing, a
    // budget spent, ...) is a failed command, whatever it printed.
    let reason = serde_json::from_value::<TurnEndReason>(result["reason"].clone()).ok();
    if let Some(reason) = reason.filter(|r| r.failed()) {
        return Err(Failure::Failed {
            code: result["reason"].as_str().unwrap_or_default().to_owned(),
            message: format!("The turn ended without finishing: {}.", reason.describe()),
        });
    }
    Ok(())
}

pub fn run(engine: &Engine, command: SessionCommand, as_json: bool) -> Result<(), Failure> {
    match command {
        SessionCommand::New { project, profile, mode } => new(engine, project, profile, mode, as_json),
        SessionCommand::List { project, all } => list(engine, project, all, as_json),
        SessionCommand::Send { session, text, mode, select } => send(engine, session, text, mode, select),
        SessionCommand::Approve { session, request, always } => {
            let mut params = json!({"sessionId": session, "requestId": request, "approved": true});
            if let Some(scope) = always {
                params["always"] = json!(scope);
            }
            streamed(engine, "session.resolveApproval", params)
        }
        SessionCommand::Deny { session, request, note } => {
            streamed(engine, "session.resolveApproval", json!({"sessionId": session, "requestId": request, "approved": false, "note": note.unwrap_or_default()}))
        }
        SessionCommand::Answer { session, question, answer } => streamed(engine, "session.answerQuestion", json!({"sessionId": session, "questionId": question, "answer": answer})),
        SessionCommand::Events { session, from } => events(engine, &session, from),
        SessionCommand::Show { session } => show(engine, &session, as_json),
        SessionCommand::Interrupt { session } => {
            let result = call(engine, "session.interrupt", json!({"sessionId": session}))?;
            if as_json {
                print_json(&result);
            } else {
                println!("{}", if result["interrupted"] == true { "Interrupted." } else { "No turn was running." });
            }
            Ok(())
        }
        SessionCommand::Stage { session, proposal, hunks } => stage(engine, &session, &proposal, hunks, as_json),
        SessionCommand::Staging { session } => {
            let view = call(engine, "session.staging", json!({"sessionId": session}))?;
            if as_json {
                print_json(&view);
            } else {
                print_staging(&view);
            }
            Ok(())
        }
        SessionCommand::DiscardStaging { session } => discard_staging(engine, &session, as_json),
        SessionCommand::ApplyStaging { session, expected_revision } => apply_staging(engine, &session, expected_revision, as_json),
        SessionCommand::Archive { session } => archive(engine, &session, true, as_json),
        SessionCommand::Unarchive { session } => archive(engine, &session, false, as_json),
    }
}

/// `session new`: creates a session and prints its id.
fn new(engine: &Engine, project: String, profile: Option<String>, mode: Option<String>, as_json: bool) -> Result<(), Failure> {
    let mut params = json!({"projectId": project});
    if let Some(profile) = profile {
        params["profile"] = json!(profile);
    }
    if let Some(mode) = mode {
        params["mode"] = json!(mode);
    }
    let view = call(engine, "session.create", params)?;
    if as_json {
        print_json(&view);
    } else {
        println!("{}", s(&view["session"], "id"));
    }
    Ok(())
}

/// `session list`: one line per session, archived ones marked.
fn list(engine: &Engine, project: Option<String>, all: bool, as_json: bool) -> Result<(), Failure> {
    let mut params = json!({"includeArchived": all});
    if let Some(project) = project {
        params["projectId"] = json!(project);
    }
    let list = call(engine, "session.list", params)?;
    if as_json {
        print_json(&list);
    } else {
        for session in list["sessions"].as_array().into_iter().flatten() {
            println!("{}  {}  {}{}", s(session, "id"), s(session, "projectId"), s(session, "title"), if session["archived"] == true { "  (archived)" } else { "" });
        }
    }
    Ok(())
}

/// `session send`: submits a message (with a selected passage, when given) and streams
/// the turn.
fn send(engine: &Engine, session: String, text: String, mode: Option<String>, select: Option<String>) -> Result<(), Failure> {
    let mut params = json!({"sessionId": session, "text": text});
    if let Some(mode) = mode {
        params["mode"] = json!(mode);
    }
    if let Some(passage) = select {
        params["selection"] = selection(engine, &session, &passage)?;
    }
    streamed(engine, "session.submit", params)
}

/// `session events`: every event from `from` on, one NDJSON line each, page by page.
fn events(engine: &Engine, session: &str, from: u64) -> Result<(), Failure> {
    let mut from = from;
    let mut out = std::io::stdout().lock();
    loop {
        let page = call(engine, "session.events", json!({"sessionId": session, "from": from, "limit": 1000}))?;
        let events = page["events"].as_array().cloned().unwrap_or_default();
        for event in &events {
            let _ = writeln!(out, "{}", serde_json::to_string(event).unwrap_or_default());
        }
        match events.last().and_then(|e| e["sequence"].as_u64()) {
            Some(last) if events.len() == 1000 => from = last + 1,
            _ => break,
        }
    }
    Ok(())
}

/// `session show`: the session's state, what it waits for, and its timeline.
fn show(engine: &Engine, session: &str, as_json: bool) -> Result<(), Failure> {
    let view = call(engine, "session.get", json!({"sessionId": session, "timeline": true}))?;
    if as_json {
        print_json(&view);
        return Ok(());
    }
    println!("{}  {}  mode {}  status {}", s(&view["session"], "id"), s(&view["session"], "title"), s(&view, "mode"), s(&view, "status"));
    if let Some(pending) = view["pendingApproval"].as_object() {
        println!("waiting for approval {}: {} ({})", pending["requestId"].as_str().unwrap_or(""), pending["tool"].as_str().unwrap_or(""), pending["reason"].as_str().unwrap_or(""));
    }
    if let Some(pending) = view["pendingQuestion"].as_object() {
        println!("waiting for an answer to {}: {}", pending["questionId"].as_str().unwrap_or(""), pending["question"].as_str().unwrap_or(""));
    }
    for item in view["timeline"].as_array().into_iter().flatten() {
        println!("{:>5}  {:<20} {}", item["sequence"], s(item, "kind"), s(item, "text"));
    }
    Ok(())
}

/// `session stage`: stages a proposal (or some of its hunks) and prints the staging.
fn stage(engine: &Engine, session: &str, proposal: &str, hunks: Vec<String>, as_json: bool) -> Result<(), Failure> {
    let hunks = if hunks.is_empty() { Value::Null } else { json!(hunks) };
    let view = call(engine, "session.stage", json!({"sessionId": session, "proposalId": proposal, "hunks": hunks}))?;
    if as_json {
        print_json(&view);
    } else {
        println!("Staged {proposal}");
        print_staging(&view);
    }
    Ok(())
}

/// `session discard-staging`: unstages everything; the proposals stay open.
fn discard_staging(engine: &Engine, session: &str, as_json: bool) -> Result<(), Failure> {
    let result = call(engine, "session.discardStaging", json!({"sessionId": session}))?;
    if as_json {
        print_json(&result);
    } else if result["discarded"] == true {
        println!("Discarded {} staged proposals; they stay open.", result["proposalIds"].as_array().map_or(0, Vec::len));
    } else {
        println!("Nothing was staged.");
    }
    Ok(())
}

/// `session apply-staging`: applies the staged proposals as one version, against the
/// given revision or the staging's own base.
fn apply_staging(engine: &Engine, session: &str, expected_revision: Option<u64>, as_json: bool) -> Result<(), Failure> {
    let expected = match expected_revision {
        Some(revision) => json!(revision),
        // With nothing staged there is no base revision; the call then says
        // that nothing is staged.
        None => json!(call(engine, "session.staging", json!({"sessionId": session}))?["staging"]["baseRevision"].as_u64().unwrap_or(0)),
    };
    let result = call(engine, "session.applyStaging", json!({"sessionId": session, "expectedRevision": expected}))?;
    if as_json {
        print_json(&result);
    } else {
        println!("Applied {} staged proposals as version {}", result["proposals"].as_array().map_or(0, Vec::len), result["version"]["number"]);
    }
    Ok(())
}

/// `session archive` and `session unarchive`.
fn archive(engine: &Engine, session: &str, archived: bool, as_json: bool) -> Result<(), Failure> {
    let params = if archived { json!({"sessionId": session}) } else { json!({"sessionId": session, "archived": false}) };
    let view = call(engine, "session.archive", params)?;
    if as_json {
        print_json(&view);
    } else {
        println!("{} {}", if archived { "Archived" } else { "Unarchived" }, s(&view["session"], "id"));
    }
    Ok(())
}
