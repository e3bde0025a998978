//! `inkstone-cli ai-activity …`: every AI change accepted or rejected, with who, why,
//! through what and which model (`aiActivity.list`), and the same rows as a CSV file
//! (`aiActivity.export`; the engine makes the CSV, this writes it). `--workspace` reads
//! the workspace server's shared activity instead (owners: every member's; editors:
//! their own).

use std::path::PathBuf;

use clap::{Args, Subcommand};
use inkstone_api::api::{ApiError, ErrorCode};
use inkstone_api::Engine;
use serde_json::{json, Value};

use crate::commands::{call, s, short_time, Rendered};
use crate::Failure;

#[derive(Debug, Subcommand)]
pub enum AiActivityCommand {
    /// List AI changes, newest first.
    List {
        #[command(flatten)]
        filter: Filter,
        /// Most rows (default 200, at most 1000).
        #[arg(long)]
        limit: Option<u32>,
    },
    /// Write every matching AI change to a CSV file (UTF-8 with a BOM, for Excel).
    Export {
        file: PathBuf,
        #[command(flatten)]
        filter: Filter,
    },
}

#[derive(Debug, Args)]
pub struct Filter {
    /// One project's changes.
    #[arg(long)]
    project: Option<String>,
    /// Changes this person accepted or rejected.
    #[arg(long)]
    person: Option<String>,
    /// Changes made by this model id.
    #[arg(long)]
    model: Option<String>,
    /// From this date (YYYY-MM-DD, UTC) or time (RFC 3339).
    #[arg(long)]
    since: Option<String>,
    /// Before this date (YYYY-MM-DD, UTC) or time (RFC 3339).
    #[arg(long)]
    until: Option<String>,
    /// accepted or rejected.
    #[arg(long)]
    decision: Option<String>,
    /// The workspace's shared AI activity, from the workspace server (owners see every
    /// member's, editors their own) instead of this data folder's.
    #[arg(long)]
    workspace: bool,
}

/// A date is its midnight UTC; anything else goes to the engine as written, which
/// refuses what is not a time.
fn time(text: String) -> String {
    let is_date = text.len() == 10 && text.bytes().enumerate().all(|(i, b)| if i == 4 || i == 7 { b == b'-' } else { b.is_ascii_digit() });
    if is_date {
        format!("{text}T00:00:00Z")
    } else {
        text
    }
}

impl Filter {
    /// The call's parameters: the filter and the scope.
    fn call_params(self) -> Value {
        let scope = if self.workspace { "workspace" } else { "local" };
        json!({"filter": self.params(), "scope": scope})
    }

    fn params(self) -> Value {
        let mut filter = json!({});
        let fields = [
            ("projectId", self.project),
            ("person", self.person),
            ("model", self.model),
            ("from", self.since.map(time)),
            ("to", self.until.map(time)),
            ("decision", self.decision),
        ];
        for (key, value) in fields {
            if let Some(value) = value {
                filter[key] = json!(value);
            }
        }
        filter
    }
}

fn through(row: &Value) -> String {
    let through = &row["through"];
    match through["type"].as_str() {
        Some("draftingSession") => format!("session {}", s(through, "sessionId")),
        Some("optimizeRun") => format!("optimize run {}", s(through, "runId")),
        Some("applyProposal") => format!("apply_proposal, approved ({})", s(through, "approvalRequestId")),
        _ => "the API".to_owned(),
    }
}

fn print_rows(page: &Value) {
    let rows = page["rows"].as_array().cloned().unwrap_or_default();
    if rows.is_empty() {
        println!("No AI changes match.");
    }
    for row in &rows {
        let decision = match (s(row, "decision"), row["partial"] == true) {
            ("accepted", true) => "accepted (some hunks)",
            ("rejected", true) => "rejected (some hunks)",
            (decision, _) => decision,
        };
        let made = match (row["version"].as_u64(), row["draftRevision"].as_u64(), row["source"]["serverNumber"].as_u64()) {
            (Some(version), _, _) => format!("v{version}"),
            (None, Some(revision), _) => format!("draft r{revision}"),
            (None, None, Some(number)) => format!("server v{number}"),
            (None, None, None) => "-".to_owned(),
        };
        let model = &row["model"];
        let host = model["providerHost"].as_str().map(|h| format!("@{h}")).unwrap_or_default();
        let profile = model["profileName"].as_str().map(|p| format!(" ({p})")).unwrap_or_default();
        let title = row["projectTitle"].as_str().unwrap_or_else(|| s(row, "projectId"));
        println!("{}  {decision}  {made}  {title}  {}  {} hunks  by {}", short_time(&row["at"]), s(row, "proposalId"), row["nHunks"], s(row, "actor"));
        println!("    via {}; model {}{host}{profile}", through(row), s(model, "model"));
        let tokens = &row["tokens"];
        if tokens.is_object() {
            let cost = tokens["cost"].as_f64().map(|c| format!(", cost {c:.4}")).unwrap_or_default();
            let scope = if tokens["scope"] == "run" { " (the whole run)" } else { "" };
            println!("    tokens {} in / {} out{scope}{cost}", tokens["inputTokens"], tokens["outputTokens"]);
        }
        if let Some(layers) = row["promptLayers"].as_array().filter(|l| !l.is_empty()) {
            println!("    prompts {}", layers.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(", "));
        }
        if let Some(reason) = row["reason"].as_str() {
            println!("    reason: {reason}");
        }
    }
    if page["truncated"] == true {
        println!("More changes match; narrow the filters or raise --limit.");
    }
}

pub fn run(engine: &Engine, command: AiActivityCommand) -> Result<Rendered, Failure> {
    Ok(match command {
        AiActivityCommand::List { filter, limit } => {
            let mut params = filter.call_params();
            if let Some(limit) = limit {
                params["limit"] = json!(limit);
            }
            (call(engine, "aiActivity.list", params)?, Box::new(print_rows))
        }
        AiActivityCommand::Export { file, filter } => {
            let result = call(engine, "aiActivity.export", filter.call_params())?;
            let csv = result["csv"].as_str().unwrap_or_default();
            // Written beside the target and renamed, so a failed write leaves no half file.
            let partial = file.with_extension("csv.partial");
            std::fs::write(&partial, csv.as_bytes())
                .and_then(|()| std::fs::rename(&partial, &file))
                .map_err(|e| Failure::Api(ApiError::new(ErrorCode::Io, format!("Cannot write {}: {e}", file.display()))))?;
            let summary = json!({"path": file.display().to_string(), "nRows": result["nRows"]});
            (summary, Box::new(|r: &Value| println!("Wrote {} AI changes to {}", r["nRows"], s(r, "path"))))
        }
    })
}
