//! The third step: title candidates and the optimized source (skipped when the run
//! optimizes one draft). A candidate over a target platform's title limit is flagged
//! for that platform (never cut); a candidate the engine would refuse as a proposal (a
//! line break, over 200 characters; rules the schema the model sees states too) is
//! dropped and named (`dropped_titles`), never the run's failure. A reply that
//! introduces a banned word, an absolute term or a growth promise gets one more round.

use serde_json::{json, Value};

use super::checks::{risky, term_list, term_spans};
use super::strategy::strategy_digest;
use super::{request_tokens, reserve_of, Cut, Found, Pipeline, REWRITE_EXTRA};
use crate::error::ApiError;
use crate::growth::run::{RunTarget, TargetOutcome};
use crate::harness::script::Stop;
use crate::model::{DraftContent, Project};
use crate::pipeline::Finding;
use crate::profiles::Severity;
use crate::proposals::{self, Candidate, Target};

pub(super) fn run(p: &mut Pipeline<'_, '_>) -> Result<(), Stop> {
    let found = p.found.take().ok_or_else(|| ApiError::internal("an optimization step ran before the snapshot"))?;
    let result = rewrite(p, &found);
    p.found = Some(found);
    result
}

/// Titles and the optimized source (the project's own source, unchanged, when the run
/// optimizes one draft).
fn rewrite(p: &mut Pipeline<'_, '_>, found: &Found) -> Result<(), Stop> {
    let set = &found.set;
    let project = &found.project;
    let all = p.run.input.platforms.clone();
    let strategy = p.run.strategy.clone().unwrap_or_default();
    let mut source = project.source.clone();
    if p.run.input.draft.is_none() {
        p.stage("source", "started", "Writing the title candidates and the optimized source")?;
        let keep_title = p.run.input.constraints.keep_title;
        let instruction = format!(
            "Step 2: the optimized source. Follow your strategy. `source` is the whole optimized Markdown source; `titles` {}; `summary` says in one or two sentences what changed and why.\n\nYour strategy: {}",
            if keep_title {
                "is an empty list (the title is kept)".to_owned()
            } else {
                format!("holds up to {MAX_TITLE_CANDIDATES} title candidates, each one line (no line break) of at most {} characters", proposals::MAX_TITLE_CANDIDATE_CHARS)
            },
            strategy_digest(&strategy, None)
        );
        // The reply is the whole source again, with its titles and summary.
        let source_tokens = crate::llm::estimate_tokens(&project.source);
        let written = p.counted(source_tokens);
        let reserve = reserve_of(&p.profile, written + written / 4 + u64::from(REWRITE_EXTRA));
        let ask = crate::llm::estimate_tokens(&instruction) + crate::llm::estimate_tokens(&source_schema().to_string()) + 40;
        if p.parts.source_trimmed {
            // Rewriting an excerpt would propose deleting the rest.
            p.max_output = reserve;
            let needed = p.counted(request_tokens(&p.system, &[]) + source_tokens + ask);
            return Err(p.too_long("source", needed));
        }
        p.begin_step("source", &[Cut::Whole, Cut::RulesOnly, Cut::Context], &all, ask, reserve)?;
        let value = p.json_step_checked("source", instruction, &source_schema(), &source_reply_schema())?;
        // The profiles and the brand profile the snapshot loaded, for every text.
        let findings_of = |project: &Project| -> Result<Vec<Finding>, ApiError> { Ok(crate::project::drafts::source_findings_with(set, found.brand.as_ref(), project)) };
        let before = findings_of(project)?;
        let title_before = findings_of(&Project { source: String::new(), ..project.clone() })?;
        // What a reply proposes, and the terms it introduces: into the source (spans into
        // the optimized text) and into each title candidate. A candidate the engine
        // would refuse (a line break, too long) is dropped, with a finding naming it.
        let read = |value: &Value| -> Result<SourceReply, ApiError> {
            let source = value["source"].as_str().unwrap_or_default().to_owned();
            let mut titles: Vec<String> = Vec::new();
            let mut dropped: Vec<Finding> = Vec::new();
            let offered = if keep_title { Vec::new() } else { value["titles"].as_array().cloned().unwrap_or_default() };
            for title in offered.iter().filter_map(|t| t.as_str()).map(str::trim).filter(|t| !t.is_empty() && *t != project.title) {
                if titles.iter().any(|t| t == title) {
                    continue;
                }
                let problem = match title_problem(title) {
                    Some(problem) => Some(problem),
                    None if titles.len() >= MAX_TITLE_CANDIDATES => {
                        Some((format!("a run offers at most {MAX_TITLE_CANDIDATES} title candidates."), Some("title_candidate.dropped_count")))
                    }
                    None => None,
                };
                match problem {
                    Some((problem, id)) => {
                        let shown = shown_title(title);
                        let mut finding = Finding::new("title_candidate", Severity::Warn, None, format!("Title candidate “{shown}” was dropped: {problem}"));
                        if let Some(id) = id {
                            finding = finding.worded(id, &[]);
                        }
                        finding.location = Some(format!("title candidate “{shown}”"));
                        dropped.push(finding);
                    }
                    None => titles.push(title.to_owned()),
                }
            }
            let after = findings_of(&Project { source: source.clone(), ..project.clone() })?;
            let risks = proposals::new_findings(&before, &after);
            let mut title_risks = Vec::new();
            for title in &titles {
                let after = findings_of(&Project { title: title.clone(), source: String::new(), ..project.clone() })?;
                for mut finding in proposals::new_findings(&title_before, &after) {
                    if finding.location.as_deref() == Some("title") {
                        finding.location = Some(format!("title candidate “{title}”"));
                        title_risks.push(finding);
                    }
                }
            }
            Ok((source, titles, risks, title_risks, dropped))
        };
        let (mut new_source, mut titles, mut risks, mut title_risks, mut dropped) = read(&value)?;
        let mut summary = value["summary"].as_str().unwrap_or_default().to_owned();
        let mut flags = Vec::new();
        if !risky(&risks).is_empty() || !risky(&title_risks).is_empty() {
            let named = term_list(risky(&risks).into_iter().chain(risky(&title_risks)));
            p.stage("source", "repair", format!("risky terms: {named}"))?;
            let again = p.json_step_checked(
                "source",
                format!(
                    "Your reply introduces terms the original does not have that are restricted (absolute or superlative claims, banned words) or promise outcomes: {named}. Rewrite those sentences and titles without them (state what is true with its scope, or describe instead; each title still one line of at most {} characters) and reply with the corrected JSON.",
                    proposals::MAX_TITLE_CANDIDATE_CHARS
                ),
                &source_schema(),
                &source_reply_schema(),
            )?;
            (new_source, titles, risks, title_risks, dropped) = read(&again)?;
            summary = again["summary"].as_str().unwrap_or_default().to_owned();
            let still: Vec<Finding> = risky(&risks).into_iter().chain(risky(&title_risks)).cloned().collect();
            if !still.is_empty() {
                flags.push(format!("risky_terms: {}", term_spans(&still)));
                p.stage("source", "flagged", format!("still introduces risky terms: {}", term_list(still.iter())))?;
            }
        }
        source = new_source;
        // Each title candidate against each target platform's title limit: one title
        // serves every platform, so a candidate too long for one is flagged for it (the
        // person picks), never cut.
        let mut title_over = Vec::new();
        for title in &titles {
            for platform in &p.run.input.platforms {
                let profile = crate::project::drafts::draft_profile(set, *platform)?;
                let empty = DraftContent::Markdown { markdown: String::new() };
                for mut finding in crate::pipeline::check_draft(profile, title, &empty) {
                    if finding.severity == Severity::Block && finding.location.as_deref() == Some("title") {
                        title_over.push(format!("title candidate “{title}” on {}: {}", platform.as_str(), finding.message));
                        finding.location = Some(format!("title candidate “{title}” ({})", platform.as_str()));
                        title_risks.push(finding);
                    }
                }
            }
        }
        if !title_over.is_empty() {
            flags.insert(0, format!("over_limit: {}", title_over.join("; ")));
            p.stage("source", "flagged", format!("title candidates over a platform's limit: {}", title_over.join("; ")))?;
        }
        if !dropped.is_empty() {
            let named: Vec<String> = dropped.iter().map(|f| f.message.clone()).collect();
            flags.push("dropped_titles".to_owned());
            p.stage("source", "flagged", format!("{} title candidates dropped: {}", dropped.len(), named.join(" ")))?;
        }
        p.run.titles = titles;
        let summary = p.clean_summary(set, "source", summary, &mut flags)?;
        risks.extend(title_risks);
        risks.extend(dropped);
        p.run.targets.push(RunTarget {
            target: Target::Source,
            proposal_id: None,
            title_proposal_id: None,
            summary,
            risks,
            fit_before: None,
            fit_after: None,
            flags,
            outcome: TargetOutcome::Pending,
            outcome_message: None,
        });
        p.stage("source", "done", format!("{} title candidates", p.run.titles.len()))?;
    }
    p.made.source = source;
    Ok(())
}

/// A source step's reply as read: the optimized source, the title candidates, the
/// findings each introduces (the source's, the titles'), and one finding per title
/// candidate dropped because the engine would refuse it.
type SourceReply = (String, Vec<String>, Vec<Finding>, Vec<Finding>, Vec<Finding>);

/// Most title candidates a run offers.
pub const MAX_TITLE_CANDIDATES: usize = 5;

/// A title candidate is one line: no line break (what the proposals module enforces
/// for every candidate). Anchored and plain, so a llama.cpp server can turn it into
/// its grammar.
pub const ONE_LINE_PATTERN: &str = "^[^\\n\\r]*$";

/// The JSON schema of the source step, as the model sees it: every rule the engine
/// enforces on what it proposes from the reply is here (a title candidate is one line
/// of at most [`proposals::MAX_TITLE_CANDIDATE_CHARS`] characters; a text at most
/// [`proposals::MAX_TEXT_CHARS`]; a summary at most [`proposals::MAX_SUMMARY_CHARS`]).
pub fn source_schema() -> Value {
    json!({
        "type": "object",
        "required": ["source", "titles", "summary"],
        "properties": {
            "source": {"type": "string", "minLength": 1, "maxLength": proposals::MAX_TEXT_CHARS},
            "titles": {"type": "array", "maxItems": MAX_TITLE_CANDIDATES, "items": {"type": "string", "minLength": 1, "maxLength": proposals::MAX_TITLE_CANDIDATE_CHARS, "pattern": ONE_LINE_PATTERN}},
            "summary": {"type": "string", "minLength": 1, "maxLength": proposals::MAX_SUMMARY_CHARS}
        }
    })
}

/// What the engine requires of a source reply before reading it: [`source_schema`]
/// without the rules on single title candidates. A candidate that breaks one is
/// dropped and named (`dropped_titles`), never a repair round for the whole reply nor
/// the run's failure.
fn source_reply_schema() -> Value {
    let mut schema = source_schema();
    schema["properties"]["titles"] = json!({"type": "array", "items": {"type": "string"}});
    schema
}

/// Why the engine would refuse `title` as a title candidate (the proposals module's
/// rules: one line, not empty, at most [`proposals::MAX_TITLE_CANDIDATE_CHARS`] characters):
/// the reason in English, and the id of its wording when it has one.
fn title_problem(title: &str) -> Option<(String, Option<&'static str>)> {
    let error = proposals::check_candidates(&[Candidate { text: title.to_owned(), rationale: String::new() }], proposals::MAX_TITLE_CANDIDATE_CHARS).err()?;
    Some(if title.contains(['\n', '\r']) {
        ("a title is one line, and this one has a line break.".to_owned(), Some("title_candidate.dropped_line"))
    } else if title.chars().count() > proposals::MAX_TITLE_CANDIDATE_CHARS {
        (format!("a title has at most {} characters, and this one has {}.", proposals::MAX_TITLE_CANDIDATE_CHARS, title.chars().count()), Some("title_candidate.dropped_length"))
    } else {
        (error.message, None)
    })
}

/// A title candidate as a place to name: its line breaks shown as ↵.
fn shown_title(title: &str) -> String {
    title.replace("\r\n", "↵").replace(['\n', '\r'], "↵")
}
