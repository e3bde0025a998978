//! The one-click optimize evaluation set (`tests/fixtures/optimize-eval/<case>/`):
//! articles in Chinese and English for the five platforms, risky claims among them,
//! each with the model replies of its run recorded in call order (`replies.toml`).
//!
//! Replayed (always): every case runs through the real API against the scripted model
//! server (real HTTP on loopback, a real sled store). Each recorded reply names the
//! step it answers; a request for another step (the engine asked something else, or in
//! another order) fails the case. For every case: the run is ready with one proposal
//! per target and summaries; every candidate is within its platform's limits or
//! flagged `over_limit` and never cut; no banned word, absolute term or growth promise
//! is introduced relative to the base (computed here with `quality`) unless the target
//! is flagged `risky_terms` naming it; no growth promise in any summary; the fit report
//! before and after; and the flags are exactly the case's `expect.flags`. A scorecard
//! per platform is printed.
//!
//! Live (`INKSTONE_EVAL_PROFILE='BASE_URL|MODEL'`, optionally `|INPUT_PRICE|OUTPUT_PRICE`
//! per million tokens; a key from `INKSTONE_LLM_API_KEY`): the same articles against
//! that OpenAI-compatible server, checking the same rules and printing the scorecard.
//! `INKSTONE_EVAL_CONTEXT_WINDOW` (32768) and `INKSTONE_EVAL_MAX_OUTPUT` (4096) fit the
//! profile to a small local server; `INKSTONE_EVAL_SCHEMA_FORM=responseFormat|jsonObject`
//! asks the server for each step's schema in that form (`jsonObject` for llama.cpp and
//! llama-cpp-python); `INKSTONE_EVAL_CASES=a,b` runs some cases only.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use inkstone_api::api::dto::{Event, EventBody};
use inkstone_api::pipeline::Finding;
use inkstone_api::profiles::ProfileSet;
use inkstone_test_support::model_server::{ModelServer, Reply, Responder};
use inkstone_test_support::{fixtures_dir, TestEngine};
use serde_json::{json, Value};

use crate::harness::stream;

const SEPARATOR: &str = "\n\n---\n\n";

/// One case of the set.
struct Case {
    name: String,
    article: String,
    meta: toml::Table,
    replies: Vec<toml::Table>,
}

fn cases() -> Vec<Case> {
    let root = fixtures_dir().join("optimize-eval");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_dir()).collect();
    dirs.sort();
    dirs.iter().map(|dir| load_case(dir)).collect()
}

fn load_case(dir: &Path) -> Case {
    let name = dir.file_name().unwrap().to_string_lossy().into_owned();
    let read = |file: &str| std::fs::read_to_string(dir.join(file)).unwrap_or_else(|e| panic!("{name}/{file}: {e}"));
    let meta: toml::Table = read("case.toml").parse().unwrap_or_else(|e| panic!("{name}/case.toml: {e}"));
    let replies: toml::Table = read("replies.toml").parse().unwrap_or_else(|e| panic!("{name}/replies.toml: {e}"));
    let replies = replies.get("reply").and_then(|r| r.as_array()).map(|a| a.iter().map(|r| r.as_table().unwrap().clone()).collect()).unwrap_or_default();
    let article = read("article.md");
    Case { name, article, meta, replies }
}

fn s<'a>(table: &'a toml::Table, key: &str) -> Option<&'a str> {
    table.get(key).and_then(|v| v.as_str())
}

fn strings(table: &toml::Table, key: &str) -> Vec<String> {
    table.get(key).and_then(|v| v.as_array()).map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect()).unwrap_or_default()
}

fn platforms(case: &Case) -> Vec<String> {
    strings(&case.meta, "platforms")
}

/// The last user message of a chat request.
fn last_user(body: &Value) -> String {
    body["messages"].as_array().unwrap().iter().rev().find(|m| m["role"] == "user").and_then(|m| m["content"].as_str()).unwrap_or_default().to_owned()
}

/// `text` with each `{find, replace}` applied; each `find` must occur.
fn apply_edits(text: &str, edits: Option<&toml::Value>) -> Result<String, String> {
    let mut out = text.to_owned();
    for edit in edits.and_then(|e| e.as_array()).into_iter().flatten() {
        let edit = edit.as_table().ok_or("an edit is a table")?;
        let (find, replace) = (s(edit, "find").unwrap_or_default(), s(edit, "replace").unwrap_or_default());
        if find.is_empty() || !out.contains(find) {
            return Err(format!("edit: “{find}” is not in the text"));
        }
        out = out.replacen(find, replace, 1);
    }
    Ok(out)
}

/// The replayed script of one case: each request takes the next recorded reply, which
/// must be for the step the request asks.
struct Script {
    replies: Vec<toml::Table>,
    article: String,
    next: usize,
    /// The latest candidate text per platform (fix rounds edit it).
    candidates: BTreeMap<String, String>,
    /// What did not match, in order.
    errors: Vec<String>,
}

impl Script {
    fn answer(&mut self, body: &Value) -> Result<String, String> {
        let ask = last_user(body);
        let Some(reply) = self.replies.get(self.next).cloned() else {
            return Err(format!("no recorded reply left for request {}: {}", self.next + 1, head(&ask)));
        };
        self.next += 1;
        let step = s(&reply, "step").unwrap_or_default().to_owned();
        let (kind, platform) = step.split_once(':').map_or((step.as_str(), ""), |(k, p)| (k, p));
        let marker = match kind {
            "strategy" => "Step 1".to_owned(),
            "source" => "Step 2".to_owned(),
            "source-fix" => "Your reply introduces terms".to_owned(),
            "platform" => format!("Step 3 ({platform})"),
            "fix" => format!("The {platform} draft"),
            "summary" => "Your summary promises".to_owned(),
            "json-repair" => "That reply is not valid".to_owned(),
            other => return Err(format!("reply {}: unknown step {other}", self.next)),
        };
        if !ask.contains(&marker) {
            return Err(format!("reply {} is for step {step}, but the engine asked: {}", self.next, head(&ask)));
        }
        for needed in strings(&reply, "asks") {
            if !ask.contains(&needed) {
                return Err(format!("reply {} ({step}): the request does not say “{needed}”: {}", self.next, head(&ask)));
            }
        }
        if let Some(raw) = s(&reply, "raw") {
            return Ok(raw.to_owned());
        }
        if let Some(value) = reply.get("json") {
            return Ok(serde_json::to_value(value).unwrap().to_string());
        }
        let summary = s(&reply, "summary").unwrap_or_default();
        match kind {
            "source" | "source-fix" => {
                let source = match s(&reply, "source") {
                    Some(source) => source.to_owned(),
                    None => apply_edits(&self.article, reply.get("edits"))?,
                };
                Ok(json!({"source": source, "titles": strings(&reply, "titles"), "summary": summary}).to_string())
            }
            "platform" | "fix" => {
                let base = if kind == "platform" {
                    ask.split_once("The draft:\n").map(|(_, d)| d.to_owned()).ok_or("no draft in the request")?
                } else {
                    self.candidates.get(platform).cloned().ok_or("a fix before any candidate")?
                };
                let text = match (s(&reply, "text"), reply.get("posts")) {
                    (Some(text), _) => text.to_owned(),
                    (None, Some(_)) => strings(&reply, "posts").join(SEPARATOR),
                    (None, None) => apply_edits(&base, reply.get("edits"))?,
                };
                self.candidates.insert(platform.to_owned(), text.clone());
                Ok(json!({"text": text, "summary": summary}).to_string())
            }
            _ => Ok(json!({"summary": summary}).to_string()),
        }
    }
}

fn head(text: &str) -> String {
    text.chars().take(160).collect()
}

fn responder(script: Arc<Mutex<Script>>) -> Reply {
    Reply::Computed(Responder(Arc::new(move |body: &Value| {
        let mut script = script.lock().unwrap();
        match script.answer(body) {
            Ok(text) => Reply::text(&text),
            Err(error) => {
                script.errors.push(error.clone());
                Reply::error(400, json!({"error": {"message": format!("eval script: {error}"), "type": "invalid_request_error"}}))
            }
        }
    })))
}

/// A project for the case, its platforms' drafts saved (so draft patches can be made).
fn project(t: &TestEngine, case: &Case) -> String {
    let title = s(&case.meta, "title").unwrap();
    let id = t.ok("project.create", json!({"title": title, "source": case.article, "platforms": platforms(case)}))["id"].as_str().unwrap().to_owned();
    for platform in platforms(case) {
        t.ok("platformDraft.save", json!({"projectId": id, "platform": platform}));
    }
    id
}

fn start_params(case: &Case, project: &str) -> Value {
    let mut params = json!({
        "projectId": project,
        "goal": s(&case.meta, "goal").unwrap_or("engagement"),
        "intensity": s(&case.meta, "intensity").unwrap_or("balanced"),
    });
    if let Some(draft) = s(&case.meta, "draft") {
        params["draft"] = json!(draft);
    } else {
        params["platforms"] = json!(platforms(case));
    }
    if let Some(constraints) = case.meta.get("constraints").and_then(|c| c.as_table()) {
        let mut out = serde_json::Map::new();
        for (key, value) in constraints {
            let camel: String = key.split('_').enumerate().map(|(i, w)| if i == 0 { w.to_owned() } else { w[..1].to_uppercase() + &w[1..] }).collect();
            out.insert(camel, json!(value.as_bool().unwrap_or(false)));
        }
        params["constraints"] = Value::Object(out);
    }
    params
}

/// The word findings (banned words, absolute terms, growth promises) `candidate`
/// introduces relative to `base`, computed with the quality checks.
fn introduced(set: &ProfileSet, base: &str, candidate: &str, html: bool) -> Vec<Finding> {
    let words = |text: &str| inkstone_api::quality::draft_findings(text, html, None, set.risk_list("ad-law-zh@v2"), set.risk_list("growth-promise@v1"));
    inkstone_api::proposals::new_findings(&words(base), &words(candidate)).into_iter().filter(|f| inkstone_api::quality::TERM_CHECKS.contains(&f.check.as_str())).collect()
}

/// The terms `candidate` introduces that the target's `risky_terms` flag does not name
/// (each a broken rule), how many it introduces, and how many are flagged.
fn check_terms(set: &ProfileSet, name: &str, risky_flag: &str, base: &str, candidate: &str, html: bool) -> (Vec<String>, u32, u32) {
    let new = introduced(set, base, candidate, html);
    let mut broken = Vec::new();
    let mut flagged = 0;
    for finding in &new {
        let term = finding.matched.clone().unwrap_or_default();
        if risky_flag.contains(&format!("“{term}”")) {
            flagged += 1;
        } else {
            broken.push(format!("{name}: “{term}” ({}) introduced and not flagged", finding.check));
        }
    }
    (broken, u32::try_from(new.len()).unwrap(), flagged)
}

fn promises(set: &ProfileSet, text: &str) -> Vec<String> {
    inkstone_api::quality::draft_findings(text, false, None, None, set.risk_list("growth-promise@v1")).into_iter().filter_map(|f| f.matched).collect()
}

fn target_name(target: &Value) -> String {
    if target["target"]["type"] == "source" {
        "source".to_owned()
    } else {
        target["target"]["platform"].as_str().unwrap().to_owned()
    }
}

fn flags(target: &Value) -> Vec<String> {
    target["flags"].as_array().unwrap().iter().map(|f| f.as_str().unwrap().to_owned()).collect()
}

/// What one platform target measured, for the scorecard.
#[derive(Default, Clone)]
struct Row {
    runs: u32,
    limits_met: u32,
    terms_introduced: u32,
    terms_flagged: u32,
    /// Rounds the engine asked to remove a term (its check at work).
    term_rounds: u32,
    fit_delta: i64,
    changed: f64,
    in_band: u32,
    input_tokens: u64,
    output_tokens: u64,
    cost: f64,
}

/// The share of `base` a candidate changed (0: same, 1: all new), by characters.
fn changed_ratio(base: &str, candidate: &str) -> f64 {
    1.0 - f64::from(similar::TextDiff::from_chars(base, candidate).ratio())
}

/// The changed share each intensity is expected to stay within.
fn band(intensity: &str) -> (f64, f64) {
    match intensity {
        "conservative" => (0.0, 0.35),
        "aggressive" => (0.2, 1.0),
        _ => (0.05, 0.7),
    }
}

/// Checks the rules on one finished run and returns what failed (empty: all kept),
/// adding the run's measurements to `card`.
fn judge(t: &TestEngine, case: &Case, project: &str, run: &Value, events: &[Event], strict: bool, card: &mut BTreeMap<String, Row>) -> Vec<String> {
    let set = ProfileSet::builtin().unwrap();
    let mut failures = Vec::new();
    macro_rules! fail {
        ($($arg:tt)*) => { failures.push(format!("{}: {}", case.name, format!($($arg)*))) };
    }
    if run["status"] != "ready" {
        fail!("status {} ({})", run["status"], run["error"]["message"]);
        return failures;
    }
    let original = t.ok("project.get", json!({"projectId": project}));
    let targets = run["targets"].as_array().unwrap();
    let draft_only = s(&case.meta, "draft").is_some();
    let expected_targets = platforms(case).len() + usize::from(!draft_only);
    if targets.len() != expected_targets {
        fail!("{} targets, expected {expected_targets}", targets.len());
    }
    let keep_title = case.meta.get("constraints").and_then(|c| c.get("keep_title")).and_then(|k| k.as_bool()).unwrap_or(false);
    if keep_title && (!run["titles"].as_array().unwrap().is_empty() || targets.iter().any(|t| t["titleProposalId"].is_string())) {
        fail!("keep_title, yet title candidates were proposed");
    }
    let mut seen = Vec::new();
    let mut all_flags = Vec::new();
    // Tokens and cost per stage: the model calls in order, matched with their usage records.
    let mut stage_of_call = Vec::new();
    let mut current = String::new();
    for event in events {
        match &event.body {
            EventBody::RunStage { stage, state, message } => {
                if state == "repair" && message.starts_with("risky terms") {
                    if let Some(platform) = stage.strip_prefix("platform:") {
                        card.entry(platform.to_owned()).or_default().term_rounds += 1;
                    }
                }
                current = stage.clone();
            }
            EventBody::AssistantMessage { input_tokens, output_tokens, .. } => stage_of_call.push((current.clone(), *input_tokens, *output_tokens)),
            _ => {}
        }
    }
    let usage = t.ok("usage.list", json!({"limit": 1000}))["records"].as_array().unwrap().clone();
    let mut costs: Vec<f64> = usage.iter().rev().filter(|r| r["runId"] == run["id"]).map(|r| r["cost"].as_f64().unwrap_or(0.0)).collect();
    costs.resize(stage_of_call.len(), 0.0);
    for target in targets {
        let name = target_name(target);
        if seen.contains(&name) {
            fail!("two {name} targets");
        }
        seen.push(name.clone());
        let target_flags = flags(target);
        for flag in &target_flags {
            all_flags.push(format!("{name}:{}", flag.split(':').next().unwrap()));
        }
        let summary = target["summary"].as_str().unwrap_or_default();
        if summary.trim().is_empty() {
            fail!("{name}: no summary");
        }
        let found = promises(&set, summary);
        if !found.is_empty() {
            fail!("{name}: the summary promises growth: {found:?}");
        }
        let risky_flag = target_flags.iter().find(|f| f.starts_with("risky_terms")).cloned().unwrap_or_default();
        if name == "source" {
            if let Some(id) = target["proposalId"].as_str() {
                let proposal = t.ok("proposal.get", json!({"proposalId": id}));
                let (broken, _, _) =
                    check_terms(&set, &name, &risky_flag, proposal["payload"]["baseText"].as_str().unwrap(), proposal["payload"]["proposedText"].as_str().unwrap(), false);
                failures.extend(broken.into_iter().map(|b| format!("{}: {b}", case.name)));
            } else if !draft_only && strict {
                failures.push(format!("{}: source: no proposal", case.name));
            }
            for title in run["titles"].as_array().unwrap() {
                let (broken, _, _) = check_terms(&set, &name, &risky_flag, original["title"].as_str().unwrap(), title.as_str().unwrap(), false);
                failures.extend(broken.into_iter().map(|b| format!("{}: {b}", case.name)));
            }
            continue;
        }
        // A platform target.
        let row = card.entry(name.clone()).or_default();
        row.runs += 1;
        for (i, (stage, input, output)) in stage_of_call.iter().enumerate() {
            if stage == &format!("platform:{name}") {
                row.input_tokens += input;
                row.output_tokens += output;
                row.cost += costs[i];
            }
        }
        let (Some(before), Some(after)) = (target["fitBefore"]["score"].as_i64(), target["fitAfter"]["score"].as_i64()) else {
            failures.push(format!("{}: {name}: no fit report before and after", case.name));
            continue;
        };
        for report in [&target["fitBefore"], &target["fitAfter"]] {
            if !report["disclaimer"].as_str().unwrap_or_default().contains("does not predict") || report["points"].as_array().is_none_or(Vec::is_empty) {
                failures.push(format!("{}: {name}: a fit report without its points or disclaimer", case.name));
            }
        }
        row.fit_delta += after - before;
        let limits_ok = target["fitAfter"]["points"].as_array().unwrap().iter().any(|p| p["check"] == "limits" && p["passed"] == true);
        if limits_ok {
            row.limits_met += 1;
        } else if !target_flags.iter().any(|f| f.starts_with("over_limit")) {
            failures.push(format!("{}: {name}: over a limit and not flagged", case.name));
        }
        let Some(id) = target["proposalId"].as_str() else {
            if strict {
                failures.push(format!("{}: {name}: no proposal ({:?})", case.name, target["outcomeMessage"]));
            }
            continue;
        };
        let proposal = t.ok("proposal.get", json!({"proposalId": id}));
        let (base, proposed) = (proposal["payload"]["baseText"].as_str().unwrap(), proposal["payload"]["proposedText"].as_str().unwrap());
        let (broken, new, flagged) = check_terms(&set, &name, &risky_flag, base, proposed, name == "wechat");
        failures.extend(broken.into_iter().map(|b| format!("{}: {b}", case.name)));
        row.terms_introduced += new;
        row.terms_flagged += flagged;
        // The proposal carries what it introduces (draft patches carry word findings too).
        let carried: Vec<String> = proposal["newFindings"].as_array().unwrap().iter().filter_map(|f| f["matched"].as_str().map(str::to_owned)).collect();
        for finding in introduced(&set, base, proposed, name == "wechat") {
            let term = finding.matched.unwrap_or_default();
            if !carried.contains(&term) {
                failures.push(format!("{}: {name}: the draft patch does not carry its new finding “{term}”", case.name));
            }
        }
        let ratio = changed_ratio(base, proposed);
        row.changed += ratio;
        let (low, high) = band(s(&case.meta, "intensity").unwrap_or("balanced"));
        if (low..=high).contains(&ratio) {
            row.in_band += 1;
        }
    }
    if strict {
        let mut expected = case.meta.get("expect").and_then(|e| e.as_table()).map(|e| strings(e, "flags")).unwrap_or_default();
        expected.sort();
        all_flags.sort();
        if expected != all_flags {
            failures.push(format!("{}: flags {all_flags:?}, expected {expected:?}", case.name));
        }
    }
    failures
}

/// The recorded replies' last text per platform must be what the proposal holds
/// (never cut): every line of it is in the proposed text.
fn never_cut(t: &TestEngine, case: &Case, run: &Value, script: &Script) -> Vec<String> {
    let mut failures = Vec::new();
    for target in run["targets"].as_array().unwrap() {
        let name = target_name(target);
        let (Some(id), Some(text)) = (target["proposalId"].as_str(), script.candidates.get(&name)) else { continue };
        let proposed = t.ok("proposal.get", json!({"proposalId": id}))["payload"]["proposedText"].as_str().unwrap().to_owned();
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty() && *l != "---") {
            if !proposed.contains(line) {
                failures.push(format!("{}: {name}: the proposal lost “{}”", case.name, head(line)));
            }
        }
    }
    failures
}

fn print_card(title: &str, card: &BTreeMap<String, Row>, intensities: &str) {
    println!("\n{title}");
    println!(
        "{:<12} {:>4} {:>11} {:>12} {:>16} {:>10} {:>14} {:>9} {:>10} {:>10}",
        "platform", "runs", "limits met", "term rounds", "terms new/flag", "fit Δ mean", "changed mean", "in band", "tokens", "cost"
    );
    let mut total = Row::default();
    for (platform, row) in card {
        let n = f64::from(row.runs.max(1));
        println!(
            "{:<12} {:>4} {:>11} {:>12} {:>16} {:>+10.1} {:>14.2} {:>9} {:>10} {:>10.4}",
            platform,
            row.runs,
            format!("{}/{}", row.limits_met, row.runs),
            row.term_rounds,
            format!("{}/{}", row.terms_introduced, row.terms_flagged),
            row.fit_delta as f64 / n,
            row.changed / n,
            format!("{}/{}", row.in_band, row.runs),
            row.input_tokens + row.output_tokens,
            row.cost
        );
        total.input_tokens += row.input_tokens;
        total.output_tokens += row.output_tokens;
        total.cost += row.cost;
    }
    println!(
        "platform steps: {} input + {} output tokens, cost {:.4} (profile prices); intensity bands: {intensities}; fit measures the platforms' written rules, not reach",
        total.input_tokens, total.output_tokens, total.cost
    );
}

const BANDS: &str = "conservative ≤0.35, balanced 0.05–0.70, aggressive ≥0.20 of characters changed";

#[test]
fn optimize_eval_replayed_every_case_keeps_the_rules() {
    let all = cases();
    assert!(all.len() >= 16, "the set holds {} cases", all.len());
    let mut languages = BTreeMap::new();
    let mut coverage: BTreeMap<String, u32> = BTreeMap::new();
    let mut card = BTreeMap::new();
    let mut failures = Vec::new();
    let mut repaired_terms = 0;
    for case in &all {
        *languages.entry(s(&case.meta, "language").unwrap_or("?").to_owned()).or_insert(0) += 1;
        for platform in platforms(case) {
            *coverage.entry(platform).or_insert(0) += 1;
        }
        let chars = case.article.chars().count();
        assert!((600..=3_000).contains(&chars), "{}: the article has {chars} characters", case.name);
        let server = ModelServer::start(Vec::new());
        let script = Arc::new(Mutex::new(Script { replies: case.replies.clone(), article: case.article.clone(), next: 0, candidates: BTreeMap::new(), errors: Vec::new() }));
        server.set_fallback(responder(script.clone()));
        let t = TestEngine::new();
        t.ok(
            "llmProfile.create",
            json!({"name": "eval", "baseUrl": server.base_url(), "model": "recorded", "contextWindow": 65_536, "inputPricePerMtok": 0.5, "outputPricePerMtok": 1.5}),
        );
        let project = project(&t, case);
        let (result, events) = stream(&t.engine, "optimize.start", start_params(case, &project));
        let run = result.unwrap_or_else(|e| panic!("{}: optimize.start failed: {e:?}", case.name));
        let script = script.lock().unwrap();
        failures.extend(script.errors.iter().map(|e| format!("{}: {e}", case.name)));
        if script.next != script.replies.len() {
            failures.push(format!("{}: {} of {} recorded replies were asked for", case.name, script.next, script.replies.len()));
        }
        failures.extend(judge(&t, case, &project, &run, &events, true, &mut card));
        failures.extend(never_cut(&t, case, &run, &script));
        repaired_terms +=
            events.iter().filter(|e| matches!(&e.body, EventBody::RunStage { state, message, .. } if state == "repair" && message.starts_with("risky terms"))).count();
    }
    print_card(&format!("optimize eval, replayed ({} cases, recorded replies)", all.len()), &card, BANDS);
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
    assert!(languages.get("zh").copied().unwrap_or(0) >= 5 && languages.get("en").copied().unwrap_or(0) >= 5, "{languages:?}");
    for platform in ["wechat", "zhihu", "x", "douyin", "xiaohongshu"] {
        assert!(coverage.get(platform).copied().unwrap_or(0) >= 3, "{platform} in {coverage:?}");
    }
    assert!(repaired_terms >= 3, "the set exercises the risky-term round: {repaired_terms}");
}

#[test]
fn optimize_eval_live_scorecard() {
    let Ok(spec) = std::env::var("INKSTONE_EVAL_PROFILE") else {
        println!("optimize eval, live: set INKSTONE_EVAL_PROFILE='BASE_URL|MODEL[|INPUT_PRICE|OUTPUT_PRICE]' to run the set against that server; skipped");
        return;
    };
    let parts: Vec<&str> = spec.split('|').map(str::trim).collect();
    assert!(parts.len() >= 2, "INKSTONE_EVAL_PROFILE is 'BASE_URL|MODEL[|INPUT_PRICE|OUTPUT_PRICE]'");
    let price = |i: usize| parts.get(i).and_then(|p| p.parse::<f64>().ok());
    let only = std::env::var("INKSTONE_EVAL_CASES").ok();
    let mut card = BTreeMap::new();
    let mut failures = Vec::new();
    let mut ran = 0;
    for case in cases() {
        if only.as_deref().is_some_and(|o| !o.split(',').any(|c| c.trim() == case.name)) {
            continue;
        }
        let t = TestEngine::new();
        let number = |name: &str, default: u64| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok()).unwrap_or(default);
        let window = number("INKSTONE_EVAL_CONTEXT_WINDOW", 32_768);
        let output = number("INKSTONE_EVAL_MAX_OUTPUT", 4_096);
        let mut profile = json!({"name": "live", "baseUrl": parts[0], "model": parts[1], "contextWindow": window, "maxOutputTokens": output, "timeoutS": 600});
        if let Ok(form) = std::env::var("INKSTONE_EVAL_SCHEMA_FORM") {
            profile["supportsJsonSchema"] = json!(true);
            profile["schemaForm"] = json!(form);
        }
        if let (Some(input), Some(output)) = (price(2), price(3)) {
            profile["inputPricePerMtok"] = json!(input);
            profile["outputPricePerMtok"] = json!(output);
        }
        t.ok("llmProfile.create", profile);
        let project = project(&t, &case);
        let started = std::time::Instant::now();
        let (result, events) = stream(&t.engine, "optimize.start", start_params(&case, &project));
        ran += 1;
        match result {
            Ok(run) => {
                let found = judge(&t, &case, &project, &run, &events, false, &mut card);
                println!("{}: {} in {:.1}s, {} rule failures", case.name, run["status"], started.elapsed().as_secs_f64(), found.len());
                failures.extend(found);
            }
            Err(error) => failures.push(format!("{}: optimize.start failed: {error:?}", case.name)),
        }
    }
    print_card(&format!("optimize eval, live against {} ({ran} cases)", parts[1]), &card, BANDS);
    for failure in &failures {
        println!("rule broken: {failure}");
    }
    assert!(failures.is_empty(), "{} rules broken live", failures.len());
}
