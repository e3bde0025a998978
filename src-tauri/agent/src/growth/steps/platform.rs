//! The fifth step, once per platform (one platform per request): the adaptation of
//! its draft to the platform's audience profile (a model call; none for a platform
//! without a saved draft, which has nothing to apply it to: flagged `no_saved_draft`),
//! the draft profile's validator (over a limit: one more round, then flagged, never
//! cut; a draft title over its limit is flagged at once), the word checks against what
//! the person has now (a banned word, absolute term or growth promise introduced gets
//! one more round, then a `risky_terms` flag with each term and span), the summary's
//! growth-promise check, and the fit report before and after.

use serde_json::{json, Value};

use super::checks::{risky, term_list, term_spans};
use super::strategy::strategy_digest;
use super::{reserve_of, Cut, Found, Pipeline, NO_SAVED_DRAFT, REWRITE_EXTRA};
use crate::error::ApiError;
use crate::growth::fit::{self, FitReport};
use crate::growth::run::{RunTarget, TargetOutcome};
use crate::harness::script::Stop;
use crate::model::{DraftContent, Platform};
use crate::pipeline::Finding;
use crate::profiles::{DraftProfile, GrowthProfile, Severity};
use crate::project::drafts::CompiledDraft;
use crate::proposals::{self, Target};

pub(super) fn run(p: &mut Pipeline<'_, '_>) -> Result<(), Stop> {
    let found = p.found.take().ok_or_else(|| ApiError::internal("an optimization step ran before the snapshot"))?;
    let result = adapt_all(p, &found);
    p.found = Some(found);
    result
}

fn adapt_all(p: &mut Pipeline<'_, '_>, found: &Found) -> Result<(), Stop> {
    let strategy = p.run.strategy.clone().unwrap_or_default();
    let compiled_all = std::mem::take(&mut p.made.compiled);
    let current_all = std::mem::take(&mut p.made.current);
    for platform in p.run.input.platforms.clone() {
        adapt(p, found, &strategy, platform, &compiled_all, &current_all)?;
    }
    Ok(())
}

/// One platform's draft as its adaptation starts: its profiles, the title and content
/// the candidate is written against, and the fit and text of what the person has now.
struct Basis {
    profile: DraftProfile,
    growth: GrowthProfile,
    saved: bool,
    title: String,
    base_content: DraftContent,
    fit_before: FitReport,
    before_text: String,
}

/// One platform's adaptation: its request, one repair round when the reply breaks a
/// limit or introduces a risky term, and its target.
fn adapt(p: &mut Pipeline<'_, '_>, found: &Found, strategy: &Value, platform: Platform, compiled_all: &[CompiledDraft], current_all: &[CompiledDraft]) -> Result<(), Stop> {
    let set = &found.set;
    let stage = format!("platform:{}", platform.as_str());
    p.stage(&stage, "started", format!("Adapting the {} draft", platform.as_str()))?;
    let basis = basis_of(p, found, platform, compiled_all, current_all)?;
    if !basis.saved {
        return skip_unsaved(p, &stage, platform, basis.fit_before);
    }
    let value = request(p, &stage, platform, &basis, strategy)?;
    let Basis { profile, growth, title, base_content, fit_before, before_text, .. } = basis;
    let check = |text: &str| {
        let content = crate::pipeline::normalize_content(proposals::with_patch_text(&base_content, text));
        let findings = crate::pipeline::check_draft(&profile, &title, &content);
        (content, findings)
    };
    // The terms the candidate introduces, against the draft the person has now (the
    // saved draft, or the compile of the current source).
    let html = matches!(base_content, DraftContent::Html { .. });
    let words = |text: &str| crate::quality::draft_findings(text, html, found.brand.as_ref(), set.risk_list("ad-law-zh@v2"), set.risk_list("growth-promise@v1"));
    let words_before = words(&before_text);
    let introduced = |text: &str| proposals::new_findings(&words_before, &words(text));
    let text = value["text"].as_str().unwrap_or_default().to_owned();
    let summary = value["summary"].as_str().unwrap_or_default().to_owned();
    let (content, mut findings, new_words, summary, mut flags) = repair(p, &stage, platform, text, summary, &check, &introduced)?;
    findings.extend(new_words);
    let summary = p.clean_summary(set, &stage, summary, &mut flags)?;
    let fit_after = fit::report(&growth, &profile, &title, &content);
    p.run.targets.push(RunTarget {
        target: Target::Draft { platform },
        proposal_id: None,
        title_proposal_id: None,
        summary,
        risks: findings,
        fit_before: Some(fit_before),
        fit_after: Some(fit_after),
        flags,
        outcome: TargetOutcome::Pending,
        outcome_message: None,
    });
    p.made.candidates.push((platform, proposals::draft_patch_text(&content)));
    p.stage(&stage, "done", format!("{} draft adapted", platform.as_str()))?;
    Ok(())
}

/// What the candidate is written against (the saved draft's title, and its content or
/// the compile's), and the fit report of what the person has now.
fn basis_of(p: &Pipeline<'_, '_>, found: &Found, platform: Platform, compiled_all: &[CompiledDraft], current_all: &[CompiledDraft]) -> Result<Basis, Stop> {
    let set = &found.set;
    let profile = crate::project::drafts::draft_profile(set, platform)?.clone();
    let growth = set.growth.get(&platform).cloned().ok_or_else(|| ApiError::internal("no growth profile"))?;
    let saved = found.saved.iter().find(|d| d.platform == platform).cloned();
    let compiled = compiled_all.iter().find(|c| c.draft.platform == platform).cloned().ok_or_else(|| ApiError::internal("nothing compiled"))?;
    let (title, base_content) = match (&saved, p.run.input.draft) {
        (Some(saved), Some(_)) => (saved.title.clone(), saved.content.clone()),
        (Some(saved), None) => (saved.title.clone(), compiled.draft.content.clone()),
        (None, _) => (compiled.draft.title.clone(), compiled.draft.content.clone()),
    };
    let (fit_before, before_text) = match &saved {
        Some(saved) => (fit::report(&growth, &profile, &saved.title, &saved.content), proposals::draft_patch_text(&saved.content)),
        None => {
            let current = current_all.iter().find(|c| c.draft.platform == platform).ok_or_else(|| ApiError::internal("nothing compiled"))?;
            (fit::report(&growth, &profile, &current.draft.title, &current.draft.content), proposals::draft_patch_text(&current.draft.content))
        }
    };
    Ok(Basis { profile, growth, saved: saved.is_some(), title, base_content, fit_before, before_text })
}

/// A platform without a saved draft: nothing to apply a candidate to, so no model call
/// is spent on it (the dialog says so before the run, and offers to save the compiled
/// draft first).
fn skip_unsaved(p: &mut Pipeline<'_, '_>, stage: &str, platform: Platform, fit_before: FitReport) -> Result<(), Stop> {
    p.stage(stage, "flagged", format!("no saved {} draft: not adapted (save the compiled draft in the Drafts tab, then optimize again)", platform.as_str()))?;
    p.run.targets.push(RunTarget {
        target: Target::Draft { platform },
        proposal_id: None,
        title_proposal_id: None,
        summary: format!("Not adapted: there is no saved {} draft to change.", platform.as_str()),
        risks: Vec::new(),
        fit_before: Some(fit_before),
        fit_after: None,
        flags: vec!["no_saved_draft".to_owned()],
        outcome: TargetOutcome::Unavailable,
        outcome_message: Some(NO_SAVED_DRAFT.to_owned()),
    });
    p.stage(stage, "done", format!("{} skipped: no saved draft", platform.as_str()))?;
    Ok(())
}

/// The adaptation's request: one platform per request, its rules, its draft, and room
/// for a reply about as long.
fn request(p: &mut Pipeline<'_, '_>, stage: &str, platform: Platform, basis: &Basis, strategy: &Value) -> Result<Value, Stop> {
    let base_text = proposals::draft_patch_text(&basis.base_content);
    let instruction = format!(
        "Step 3 ({}): adapt this draft to the platform's audience profile and rules (see \"{}\" in the context), following your strategy. {} Keep every limit; if something must go, rewrite rather than cut mid-sentence. `summary` says what changed and why.\n\nYour strategy: {}\n\nThe draft:\n{base_text}",
        platform.as_str(),
        basis.growth.platform.as_str(),
        format_note(&basis.base_content),
        strategy_digest(strategy, Some(platform))
    );
    let draft_tokens = p.counted(crate::llm::estimate_tokens(&base_text));
    let reserve = reserve_of(&p.profile, draft_tokens + draft_tokens / 4 + u64::from(REWRITE_EXTRA));
    let ask = crate::llm::estimate_tokens(&instruction) + crate::llm::estimate_tokens(&platform_schema().to_string()) + 40;
    p.begin_step(stage, &[Cut::Whole, Cut::RulesOnly, Cut::Least], &[platform], ask, reserve)?;
    p.json_step(stage, instruction, &platform_schema())
}

/// A platform reply as checked: its content, the limits it breaks, the terms it
/// introduces, its summary and its flags.
type Checked = (DraftContent, Vec<Finding>, Vec<Finding>, String, Vec<String>);

/// The reply's checks and, when it breaks a limit the text can fix or introduces a
/// risky term, one more round; what is still wrong after it is flagged, never cut.
fn repair(
    p: &mut Pipeline<'_, '_>,
    stage: &str,
    platform: Platform,
    mut text: String,
    mut summary: String,
    check: &dyn Fn(&str) -> (DraftContent, Vec<Finding>),
    introduced: &dyn Fn(&str) -> Vec<Finding>,
) -> Result<Checked, Stop> {
    let mut flags = Vec::new();
    let (mut content, mut findings) = check(&text);
    let mut new_words = introduced(&text);
    let over = over_limit(&findings, false);
    if !over.is_empty() || !risky(&new_words).is_empty() {
        let mut asks = Vec::new();
        if !over.is_empty() {
            p.stage(stage, "repair", format!("over a limit: {}", over.join("; ")))?;
            asks.push(format!("The {} draft breaks these limits: {}. Fix it by rewriting (never by cutting text off mid-sentence).", platform.as_str(), over.join("; ")));
        }
        if !risky(&new_words).is_empty() {
            let named = term_list(risky(&new_words));
            p.stage(stage, "repair", format!("risky terms: {named}"))?;
            asks.push(format!(
                "The {} draft introduces terms the original does not have that are restricted (absolute or superlative claims, banned words) or promise outcomes: {named}. Rewrite those sentences without them (state what is true with its scope, or describe instead).",
                platform.as_str()
            ));
        }
        asks.push("Reply with the corrected JSON.".to_owned());
        let again = p.json_step(stage, asks.join(" "), &platform_schema())?;
        text = again["text"].as_str().unwrap_or_default().to_owned();
        summary = again["summary"].as_str().unwrap_or_default().to_owned();
        (content, findings) = check(&text);
        new_words = introduced(&text);
        let still: Vec<Finding> = risky(&new_words).into_iter().cloned().collect();
        if !still.is_empty() {
            flags.push(format!("risky_terms: {}", term_spans(&still)));
            p.stage(stage, "flagged", format!("still introduces risky terms: {}", term_list(still.iter())))?;
        }
    }
    let still = over_limit(&findings, true);
    if !still.is_empty() {
        flags.insert(0, format!("over_limit: {}", still.join("; ")));
        p.stage(stage, "flagged", format!("still over a limit: {}", still.join("; ")))?;
    }
    Ok((content, findings, new_words, summary, flags))
}

/// The limits the candidate's text can fix. The draft's title is not the candidate's
/// (it is the project's title, whose candidates the source step proposes): a title over
/// its limit is flagged without a round that cannot fix it.
fn over_limit(findings: &[Finding], title_too: bool) -> Vec<String> {
    findings.iter().filter(|f| f.severity == Severity::Block && (title_too || f.location.as_deref() != Some("title"))).map(|f| f.message.clone()).collect()
}

/// The JSON schema of a platform step (the same bounds as the source's).
pub fn platform_schema() -> Value {
    json!({
        "type": "object",
        "required": ["text", "summary"],
        "properties": {
            "text": {"type": "string", "minLength": 1, "maxLength": proposals::MAX_TEXT_CHARS},
            "summary": {"type": "string", "minLength": 1, "maxLength": proposals::MAX_SUMMARY_CHARS}
        }
    })
}

/// How the model writes a platform's text.
fn format_note(content: &DraftContent) -> &'static str {
    match content {
        DraftContent::Html { .. } => "The text is the draft's HTML (keep its inline styles and tags).",
        DraftContent::Markdown { .. } => "The text is the draft's Markdown.",
        DraftContent::Thread { .. } => "The text is the thread's posts, separated by a line holding only --- with a blank line on each side.",
        DraftContent::Card { .. } => "The text is the card's body text.",
    }
}
