//! The second step: the strategy, a JSON value valid against [`strategy_schema`] (at
//! most [`super::MAX_REPAIRS`] repair round trips, then a clear failure). One request
//! for every platform when it fits the model's window; else the platforms in batches
//! that fit (one each at the least), the later ones asking only for their plans.

use serde_json::{json, Value};

use super::{reserve_of, Cut, Pipeline, STRATEGY_RESERVE, STRATEGY_RESERVE_PER_PLATFORM};
use crate::harness::script::Stop;
use crate::model::Platform;

pub(super) fn run(p: &mut Pipeline<'_, '_>) -> Result<(), Stop> {
    p.stage("strategy", "started", "Planning the changes")?;
    // One request for every platform when it fits the window; else the platforms in
    // batches that fit (one each at the least), the later ones asking only for their
    // plans.
    let all = p.run.input.platforms.clone();
    let schema_tokens = crate::llm::estimate_tokens(&strategy_schema().to_string()) + 80;
    let profile = p.profile.clone();
    let strategy_reserve = |n: usize| reserve_of(&profile, u64::from(STRATEGY_RESERVE + STRATEGY_RESERVE_PER_PLATFORM * n as u32));
    // The strategy needs the article: never cut to the least.
    let cuts = [Cut::Whole, Cut::Platforms, Cut::RulesOnly];
    let mut batches: Vec<Vec<Platform>> = Vec::new();
    let mut rest = all.clone();
    while !rest.is_empty() {
        let mut size = rest.len();
        while size > 1 && !p.fits(if batches.is_empty() && size == all.len() { &cuts } else { &cuts[1..] }, &rest[..size], schema_tokens, strategy_reserve(size)) {
            size -= 1;
        }
        batches.push(rest.drain(..size).collect());
    }
    let mut strategy = Value::Null;
    for (idx, batch) in batches.iter().enumerate() {
        let names: Vec<&str> = batch.iter().map(|x| x.as_str()).collect();
        let whole = batches.len() == 1;
        p.begin_step("strategy", if whole { &cuts } else { &cuts[1..] }, batch, schema_tokens, strategy_reserve(batch.len()))?;
        if idx == 0 {
            let instruction = format!(
                "Step 1 of the optimization: the strategy. For the goal and intensity above, list the changes you will make to the article and, for each target platform ({}), the plan for its draft.",
                names.join(", ")
            );
            strategy = p.json_step("strategy", instruction, &strategy_schema())?;
        } else {
            p.stage("strategy", "batch", format!("plans for {} (batch {} of {}, to fit the model's window)", names.join(", "), idx + 1, batches.len()))?;
            let instruction =
                format!("Step 1 of the optimization, continued: the plan for the drafts of {} only. The strategy so far: {}", names.join(", "), strategy_digest(&strategy, None));
            let more = p.json_step("strategy", instruction, &strategy_platforms_schema())?;
            if let (Some(plans), Some(more)) = (strategy["platforms"].as_array_mut(), more["platforms"].as_array()) {
                plans.extend(more.iter().cloned());
            }
        }
    }
    p.run.strategy = Some(strategy.clone());
    p.stage("strategy", "done", "strategy valid")?;
    Ok(())
}

/// The JSON schema of the strategy.
pub fn strategy_schema() -> Value {
    json!({
        "type": "object",
        "required": ["summary", "changes", "platforms"],
        "properties": {
            "summary": {"type": "string", "minLength": 1, "maxLength": 2000},
            "changes": {"type": "array", "minItems": 1, "maxItems": 12, "items": {"type": "string", "minLength": 1}},
            "platforms": {"type": "array", "items": {
                "type": "object",
                "required": ["platform", "plan"],
                "properties": {"platform": {"type": "string"}, "plan": {"type": "string"}}
            }}
        }
    })
}

/// The JSON schema of a later strategy batch: the plans of its platforms only.
fn strategy_platforms_schema() -> Value {
    let mut schema = strategy_schema();
    schema["required"] = json!(["platforms"]);
    schema["properties"] = json!({"platforms": schema["properties"]["platforms"].clone()});
    schema
}

/// The strategy as a step that comes after it is told it: the summary, the changes
/// and the plans (only `platform`'s, when given). A step sends only its own
/// conversation, so this is how the strategy reaches it.
pub(super) fn strategy_digest(strategy: &Value, platform: Option<Platform>) -> String {
    let changes: Vec<&str> = strategy["changes"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    let plans: Vec<String> = strategy["platforms"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|plan| platform.is_none_or(|p| plan["platform"].as_str().is_some_and(|name| name.eq_ignore_ascii_case(p.as_str()))))
        .map(|plan| format!("{}: {}", plan["platform"].as_str().unwrap_or_default(), plan["plan"].as_str().unwrap_or_default()))
        .collect();
    let mut out = strategy["summary"].as_str().unwrap_or_default().to_owned();
    if !changes.is_empty() {
        out.push_str(&format!(" Changes: {}.", changes.join("; ")));
    }
    if !plans.is_empty() {
        out.push_str(&format!(" Plans: {}.", plans.join("; ")));
    }
    out
}
