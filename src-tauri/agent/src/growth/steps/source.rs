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
use crate::profiles::{ProfileSet, Severity};
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
    let source = if p.run.input.draft.is_none() { write_source(p, found)? } else { found.project.source.clone() };
    p.made.source = source;
    Ok(())
}

/// The source step proper: its request, one repair round for risky terms, the title
/// candidates' checks, and the source's target.
fn write_source(p: &mut Pipeline<'_, '_>, found: &Found) -> Result<String, Stop> {
    let set = &found.set;
    p.stage("source", "started", "Writing the title candidates and the optimized source")?;
    let keep_title = p.run.input.constraints.keep_title;
    let value = request(p, found, keep_title)?;
    let reader = Reader::new(found, keep_title);
    let (source, titles, mut risks, mut title_risks, dropped, summary, mut flags) = repair(p, &reader, value)?;
    flag_titles(p, set, &titles, &dropped, &mut title_risks, &mut flags)?;
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
    Ok(source)
}

/// The source step's request: the reply is the whole source again, with its titles
/// and summary. A trimmed source is refused as too long: rewriting an excerpt would
/// propose deleting the rest.
fn request(p: &mut Pipeline<'_, '_>, found: &Found, keep_title: bool) -> Result<Value, Stop> {
    let project = &found.project;
    let all = p.run.input.platforms.clone();
    let strategy = p.run.strategy.clone().unwrap_or_default();
    let instruction = format!(
        "Step 2: the optimized source. Follow your strategy. `source` is the whole optimized Markdown source; `titles` {}; `summary` says in one or two sentences what changed and why.\n\nYour strategy: {}",
        if keep_title {
            "is an empty list (the title is kept)".to_owned()
        } else {
            format!("holds up to {MAX_TITLE_CANDIDATES} title candidates, each one line (no line break) of at most {} characters", proposals::MAX_TITLE_CANDIDATE_CHARS)
        },
        strategy_digest(&strategy, None)
    );
    let source_tokens = crate::llm::estimate_tokens(&project.source);
    let written = p.counted(source_tokens);
    let reserve = reserve_of(&p.profile, written + written / 4 + u64::from(REWRITE_EXTRA));
    let ask = crate::llm::estimate_tokens(&instruction) + crate::llm::estimate_tokens(&source_schema().to_string()) + 40;
    if p.parts.source_trimmed {
        p.max_output = reserve;
        let needed = p.counted(request_tokens(&p.system, &[]) + source_tokens + ask);
        return Err(p.too_long("source", needed));
    }
    p.begin_step("source", &[Cut::Whole, Cut::RulesOnly, Cut::Context], &all, ask, reserve)?;
    p.json_step_checked("source", instruction, &source_schema(), &source_reply_schema())
}

/// Reads a source reply against the project as it is, with the profiles and the brand
/// profile the snapshot loaded.
struct Reader<'a> {
    found: &'a Found,
    keep_title: bool,
    /// The project's own findings, and its title's alone.
    before: Vec<Finding>,
    title_before: Vec<Finding>,
}

impl<'a> Reader<'a> {
    fn new(found: &'a Found, keep_title: bool) -> Self {
        let mut reader = Reader { found, keep_title, before: Vec::new(), title_before: Vec::new() };
        reader.before = reader.findings_of(&found.project);
        reader.title_before = reader.findings_of(&Project { source: String::new(), ..found.project.clone() });
        reader
    }

    fn findings_of(&self, project: &Project) -> Vec<Finding> {
        crate::project::drafts::source_findings_with(&self.found.set, self.found.brand.as_ref(), project)
    }

    /// What a reply proposes, and the terms it introduces: into the source (spans into
    /// the optimized text) and into each title candidate. A candidate the engine
    /// would refuse (a line break, too long) is dropped, with a finding naming it.
    fn read(&self, value: &Value) -> SourceReply {
        let project = &self.found.project;
        let source = value["source"].as_str().unwrap_or_default().to_owned();
        let mut titles: Vec<String> = Vec::new();
        let mut dropped: Vec<Finding> = Vec::new();
        let offered = if self.keep_title { Vec::new() } else { value["titles"].as_array().cloned().unwrap_or_default() };
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
                Some((problem, id)) => dropped.push(dropped_title(title, &problem, id)),
                None => titles.push(title.to_owned()),
            }
        }
        let after = self.findings_of(&Project { source: source.clone(), ..project.clone() });
        let risks = proposals::new_findings(&self.before, &after);
        let mut title_risks = Vec::new();
        for title in &titles {
            let after = self.findings_of(&Project { title: title.clone(), source: String::new(), ..project.clone() });
            for mut finding in proposals::new_findings(&self.title_before, &after) {
                if finding.location.as_deref() == Some("title") {
                    finding.location = Some(format!("title candidate “{title}”"));
                    title_risks.push(finding);
                }
            }
        }
        (source, titles, risks, title_risks, dropped)
    }
}

/// The finding that names a dropped title candidate and why.
fn dropped_title(title: &str, problem: &str, id: Option<&'static str>) -> Finding {
    let shown = shown_title(title);
    let mut finding = Finding::new("title_candidate", Severity::Warn, None, format!("Title candidate “{shown}” was dropped: {problem}"));
    if let Some(id) = id {
        finding = finding.worded(id, &[]);
    }
    finding.location = Some(format!("title candidate “{shown}”"));
    finding
}

/// A source reply as checked: [`SourceReply`], then its summary and its flags.
type Checked = (String, Vec<String>, Vec<Finding>, Vec<Finding>, Vec<Finding>, String, Vec<String>);

/// The reply as read and, when it introduces a risky term, one more round; terms still
/// introduced after it are flagged.
fn repair(p: &mut Pipeline<'_, '_>, reader: &Reader<'_>, value: Value) -> Result<Checked, Stop> {
    let (mut new_source, mut titles, mut risks, mut title_risks, mut dropped) = reader.read(&value);
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
        (new_source, titles, risks, title_risks, dropped) = reader.read(&again);
        summary = again["summary"].as_str().unwrap_or_default().to_owned();
        let still: Vec<Finding> = risky(&risks).into_iter().chain(risky(&title_risks)).cloned().collect();
        if !still.is_empty() {
            flags.push(format!("risky_terms: {}", term_spans(&still)));
            p.stage("source", "flagged", format!("still introduces risky terms: {}", term_list(still.iter())))?;
        }
    }
    Ok((new_source, titles, risks, title_risks, dropped, summary, flags))
}

/// Each title candidate against each target platform's title limit: one title serves
/// every platform, so a candidate too long for one is flagged for it (the person
/// picks), never cut. Dropped candidates are flagged too.
fn flag_titles(p: &mut Pipeline<'_, '_>, set: &ProfileSet, titles: &[String], dropped: &[Finding], title_risks: &mut Vec<Finding>, flags: &mut Vec<String>) -> Result<(), Stop> {
    let mut title_over = Vec::new();
    for title in titles {
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
