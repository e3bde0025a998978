//! `inkstone-cli checkpoint …` and `inkstone-cli constraint …`: a session's
//! checkpoints (make one, list them, restore one) and the constraints its rejections
//! left (list, remove). Each is one API call.

use clap::Subcommand;
use inkstone_api::Engine;
use serde_json::{json, Value};

use crate::commands::{call, s, short_time, Rendered};
use crate::Failure;

#[derive(Debug, Subcommand)]
pub enum CheckpointCommand {
    /// List a session's checkpoints, oldest first.
    List { session: String },
    /// Make a checkpoint of the session's project as it is now.
    Create { session: String, label: String },
    /// Restore a checkpoint: new versions and draft revisions with its content (unsaved
    /// changes are kept as a version first); nothing is deleted.
    Restore { session: String, checkpoint: String },
}

#[derive(Debug, Subcommand)]
pub enum ConstraintCommand {
    /// List the constraints of a session, oldest first.
    List { session: String },
    /// Remove a constraint: the assistant no longer keeps to it.
    Remove { session: String, constraint: String },
}

fn platforms(value: &Value) -> String {
    value.as_array().into_iter().flatten().filter_map(|p| p.as_str().or_else(|| p["platform"].as_str())).collect::<Vec<_>>().join(", ")
}

pub fn checkpoint(engine: &Engine, command: CheckpointCommand) -> Result<Rendered, Failure> {
    Ok(match command {
        CheckpointCommand::List { session } => (
            call(engine, "checkpoint.list", json!({"sessionId": session}))?,
            Box::new(|r: &Value| {
                let checkpoints = r["checkpoints"].as_array().cloned().unwrap_or_default();
                if checkpoints.is_empty() {
                    println!("No checkpoints yet. Make one with `inkstone-cli checkpoint create <session> <label>`.");
                }
                for c in &checkpoints {
                    let unsaved = if c["workingSource"].is_string() { " +unsaved" } else { "" };
                    println!("{}  {}  v{}{unsaved}  event {:<5} {}", s(c, "id"), short_time(&c["createdAt"]), c["head"], c["sequence"], s(c, "label"));
                }
            }),
        ),
        CheckpointCommand::Create { session, label } => (
            call(engine, "checkpoint.create", json!({"sessionId": session, "label": label}))?,
            Box::new(|c: &Value| println!("Created checkpoint {} (v{}, event {})", s(c, "id"), c["head"], c["sequence"])),
        ),
        CheckpointCommand::Restore { session, checkpoint } => (
            call(engine, "checkpoint.restore", json!({"sessionId": session, "checkpointId": checkpoint}))?,
            Box::new(|r: &Value| {
                if !r["autosnapshot"].is_null() {
                    println!("Unsaved changes kept as version {}", r["autosnapshot"]["number"]);
                }
                println!("Restored checkpoint {} as version {}", s(r, "checkpointId"), r["version"]["number"]);
                let lines = [
                    ("Drafts restored", &r["draftsRestored"]),
                    ("Left while publishing", &r["draftsSkipped"]),
                    ("Saved after the checkpoint, left as they are", &r["draftsNewer"]),
                ];
                for (label, list) in lines {
                    if list.as_array().is_some_and(|l| !l.is_empty()) {
                        println!("{label}: {}", platforms(list));
                    }
                }
                if r["stagingDiscarded"] == true {
                    println!("The session's staged changes were discarded.");
                }
            }),
        ),
    })
}

pub fn constraint(engine: &Engine, command: ConstraintCommand) -> Result<Rendered, Failure> {
    Ok(match command {
        ConstraintCommand::List { session } => (
            call(engine, "constraint.list", json!({"sessionId": session}))?,
            Box::new(|r: &Value| {
                let constraints = r["constraints"].as_array().cloned().unwrap_or_default();
                if constraints.is_empty() {
                    println!("No constraints.");
                }
                for c in &constraints {
                    println!("{}  {}  {}", s(c, "id"), short_time(&c["createdAt"]), s(c, "text"));
                }
            }),
        ),
        ConstraintCommand::Remove { session, constraint } => {
            (call(engine, "constraint.remove", json!({"sessionId": session, "constraintId": constraint}))?, Box::new(|r: &Value| println!("Removed {}", s(r, "id"))))
        }
    })
}
