//! `inkstone-cli rules …`: the "always allow" rules a person made by answering
//! permission prompts (`session approve … --always SCOPE`): list them with their
//! scope, pattern, when they were made, how often they allowed a call and when they
//! last did; narrow or remove one. Each is one API call.

use clap::Subcommand;
use inkstone_api::Engine;
use serde_json::{json, Value};

use crate::commands::{call, s, short_time, Rendered};
use crate::Failure;

#[derive(Debug, Subcommand)]
pub enum RulesCommand {
    /// List the stored "always allow" rules, newest first.
    List,
    /// Remove a rule: its tool asks again.
    Remove { rule: String },
    /// Narrow a rule: a smaller scope (session, project) and/or more pattern fields
    /// (`--pattern field=glob`, repeatable; the rule's own fields are kept).
    Narrow {
        rule: String,
        #[arg(long)]
        scope: Option<String>,
        #[arg(long = "pattern", value_name = "FIELD=GLOB")]
        patterns: Vec<String>,
    },
}

/// A pattern as `field=glob, …`, or "any input".
fn pattern(rule: &Value) -> String {
    let fields: Vec<String> = rule["pattern"].as_object().into_iter().flatten().map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default())).collect();
    if fields.is_empty() {
        "any input".to_owned()
    } else {
        fields.join(", ")
    }
}

fn scope(rule: &Value) -> String {
    match rule["scope"].as_str() {
        Some("session") => format!("session {}", s(rule, "ownerId")),
        Some("project") => format!("project {}", rule["projectTitle"].as_str().unwrap_or_else(|| rule["projectId"].as_str().unwrap_or_default())),
        Some("workspace") => "every project".to_owned(),
        _ => String::new(),
    }
}

pub fn rules(engine: &Engine, command: RulesCommand) -> Result<Rendered, Failure> {
    Ok(match command {
        RulesCommand::List => (
            call(engine, "allowRule.list", json!({}))?,
            Box::new(|r: &Value| {
                let rules = r["rules"].as_array().cloned().unwrap_or_default();
                if rules.is_empty() {
                    println!("No rules. A rule is made by answering a permission prompt with \"always allow\".");
                }
                for rule in &rules {
                    let last = if rule["lastAllowedAt"].is_string() { format!(", last {}", short_time(&rule["lastAllowedAt"])) } else { String::new() };
                    println!(
                        "{}  {}  {}  {}  made {}  allowed {}{last}",
                        s(rule, "id"),
                        s(rule, "tool"),
                        scope(rule),
                        pattern(rule),
                        short_time(&rule["createdAt"]),
                        rule["allowedCount"]
                    );
                }
            }),
        ),
        RulesCommand::Remove { rule } => (call(engine, "allowRule.remove", json!({"ruleId": rule}))?, Box::new(|r: &Value| println!("Removed {}", s(r, "id")))),
        RulesCommand::Narrow { rule, scope: new_scope, patterns } => {
            let mut params = json!({"ruleId": rule});
            if let Some(new_scope) = new_scope {
                params["scope"] = json!(new_scope);
            }
            if !patterns.is_empty() {
                let current = call(engine, "allowRule.list", json!({}))?;
                let mut merged = current["rules"].as_array().into_iter().flatten().find(|r| r["id"] == rule.as_str()).map(|r| r["pattern"].clone()).unwrap_or_else(|| json!({}));
                for entry in &patterns {
                    let Some((field, glob)) = entry.split_once('=') else {
                        return Err(Failure::Usage(format!("--pattern takes FIELD=GLOB, not `{entry}`")));
                    };
                    merged[field.trim()] = json!(glob);
                }
                params["pattern"] = merged;
            }
            (call(engine, "allowRule.narrow", params)?, Box::new(|r: &Value| println!("Narrowed {}: {} {}, {}", s(r, "id"), s(r, "tool"), scope(r), pattern(r))))
        }
    })
}
