//! The word checks every step's candidates go through: the terms a candidate
//! introduces (banned words, absolute terms, growth promises), as the model is told
//! and as the `risky_terms` flag names them, and the growth-promise check on every
//! summary (a promising summary is regenerated once, then withheld).

use serde_json::{json, Value};

use super::{Pipeline, MIN_RESERVE, SUMMARY_RESERVE};
use crate::harness::script::Stop;
use crate::pipeline::Finding;
use crate::profiles::ProfileSet;

fn summary_schema() -> Value {
    json!({"type": "object", "required": ["summary"], "properties": {"summary": {"type": "string", "minLength": 1, "maxLength": 2000}}})
}

/// The growth promises in `text` (the growth-promise list's terms).
fn promises(set: &ProfileSet, text: &str) -> Vec<String> {
    let input = crate::quality::CheckInput { title: "", source: text, brand: None, platforms: &[], ad_law: None, growth_promise: set.risk_list("growth-promise@v1") };
    crate::quality::check(&input).into_iter().filter(|f| f.check == "growth_promise").filter_map(|f| f.matched).collect()
}

impl Pipeline<'_, '_> {
    /// `summary`, or its regeneration when it promises growth; a second promise
    /// withholds it (flagged).
    pub(super) fn clean_summary(&mut self, set: &ProfileSet, stage: &str, summary: String, flags: &mut Vec<String>) -> Result<String, Stop> {
        if summary.trim().is_empty() {
            // Blank passes the schema's minLength but not the proposal's summary rule.
            return Ok("The model gave no summary; review the changes themselves.".to_owned());
        }
        let found = promises(set, &summary);
        if found.is_empty() {
            return Ok(summary);
        }
        self.stage(stage, "repair", format!("the summary promises an outcome ({}); asking for another", found.join(", ")))?;
        let smaller = SUMMARY_RESERVE.min(self.max_output).max(MIN_RESERVE);
        let reserve = std::mem::replace(&mut self.max_output, smaller);
        let value = self.json_step(
            stage,
            format!(
                "Your summary promises an outcome ({}). Nothing may promise growth, reach or results. Write the summary again: what changed and why, nothing about what it will achieve.",
                found.join(", ")
            ),
            &summary_schema(),
        );
        self.max_output = reserve;
        let value = value?;
        let again = value["summary"].as_str().unwrap_or_default().to_owned();
        if promises(set, &again).is_empty() {
            return Ok(again);
        }
        flags.push("summary_withheld".to_owned());
        Ok("The model's summary was withheld because it promised an outcome; review the changes themselves.".to_owned())
    }
}

/// The findings of the word checks ([`crate::quality::TERM_CHECKS`]): banned words,
/// absolute terms, growth promises.
pub(super) fn risky(findings: &[Finding]) -> Vec<&Finding> {
    findings.iter().filter(|f| crate::quality::TERM_CHECKS.contains(&f.check.as_str())).collect()
}

/// `“最佳” (ad_law), “保证涨粉” (growth_promise)`, for the model and the log.
pub(super) fn term_list<'f>(findings: impl IntoIterator<Item = &'f Finding>) -> String {
    let mut parts: Vec<String> = Vec::new();
    for part in findings.into_iter().map(|f| format!("“{}” ({})", f.matched.as_deref().unwrap_or_default(), f.check)) {
        if !parts.contains(&part) {
            parts.push(part);
        }
    }
    parts.join(", ")
}

/// The `risky_terms` flag's detail: each term and where it is (UTF-16 span into the
/// candidate text, or the title candidate).
pub(super) fn term_spans(findings: &[Finding]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let each = findings.iter().map(|f| {
        let term = f.matched.as_deref().unwrap_or_default();
        match (f.span, &f.location) {
            (Some(span), _) => format!("“{term}” at {}–{}", span.from, span.to),
            (None, Some(location)) => format!("“{term}” in {location}"),
            (None, None) => format!("“{term}”"),
        }
    });
    // One entry per term and place (a list may hold a term twice in different cases).
    for part in each {
        if !parts.contains(&part) {
            parts.push(part);
        }
    }
    parts.join("; ")
}
