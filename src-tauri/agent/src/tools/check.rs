//! Deterministic checks: compiles, adapted-content validation, brand checks, platform
//! checks, and the publish-readiness checklist. They read (the source with the
//! session's staged changes, when it has any) and run the pure pipeline and quality
//! checks; only the readiness check records something: its checklist, as a proposal
//! of the session (nothing official changes).

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{json, Value};

use super::{checked_text, compact_findings, effective_project, parse, platform_schema, read_tool, schema};
use crate::harness::tools::Capability;
use crate::harness::{ToolContext, ToolDefinition, ToolFailure, ToolHandler};
use crate::model::{BrandProfile, DraftContent, DraftStatus, Platform, PlatformDraft, Project};
use crate::pipeline::{check_draft, measure, normalize_content, Finding, Measurement};
use crate::profiles::{LimitField, Severity};
use crate::project::drafts::{draft_profile, CompiledDraft};
use crate::proposals::{draft_patch_text, with_patch_text, ChecklistItem, NewProposal, Origin, Payload, ProposalKind, Target};

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct PlatformsInput {
    #[serde(default)]
    platforms: Option<Vec<Platform>>,
}

fn count(findings: &[Finding], severity: Severity) -> usize {
    findings.iter().filter(|f| f.severity == severity).count()
}

fn status_of(findings: &[Finding]) -> &'static str {
    if count(findings, Severity::Block) > 0 {
        "blocked"
    } else if count(findings, Severity::Warn) > 0 {
        "needs_review"
    } else {
        "clear"
    }
}

fn compile_platform_drafts(ctx: &ToolContext<'_>, input: &Value) -> Result<Value, ToolFailure> {
    let input: PlatformsInput = parse(input)?;
    let (project, staged) = effective_project(ctx)?;
    let reads = ctx.reads();
    let compiled = reads.compile(&project, input.platforms)?;
    let mut drafts = Vec::with_capacity(compiled.drafts.len());
    for CompiledDraft { draft, findings } in &compiled.drafts {
        let text = draft_patch_text(&draft.content);
        let (shown, more) = compact_findings(findings, 15);
        let mut out = json!({
            "platform": draft.platform, "profileId": draft.profile_id, "title": draft.title,
            "text": text, "nImages": draft.n_images, "nLinks": draft.n_links,
            "status": status_of(findings), "findings": shown,
        });
        if more > 0 {
            out["moreFindings"] = json!(more);
        }
        match &draft.content {
            DraftContent::Html { digest, .. } => out["digest"] = json!(digest),
            DraftContent::Card { tags, .. } => out["tags"] = json!(tags),
            DraftContent::Thread { posts } => out["posts"] = json!(posts.len()),
            DraftContent::Markdown { .. } => {}
        }
        if let Some(saved) = reads.saved_draft(&project.id, draft.platform)? {
            let saved_text = draft_patch_text(&saved.content);
            let same = saved_text == text && saved.title == draft.title;
            let mut info = json!({"revision": saved.revision, "status": saved.status, "handEdited": saved.hand_edited, "sameAsCompile": same});
            if !same {
                info["title"] = json!(saved.title);
                info["text"] = json!(saved_text);
            }
            out["saved"] = info;
        }
        drafts.push(out);
    }
    Ok(json!({
        "checked": checked_text(&project, staged),
        "revision": compiled.revision,
        "tags": compiled.tags,
        "drafts": drafts,
        "sourceFindings": compiled.findings.len(),
        "note": "A fresh compile; nothing was saved. `saved` is the person's saved draft: propose_draft_patch edits its text (`saved.text`, or `text` when `sameAsCompile`).",
    }))
}

/// Empty content of the kind `platform`'s drafts hold.
fn empty_content(platform: Platform) -> DraftContent {
    match platform {
        Platform::Wechat => DraftContent::Html { html: String::new(), digest: String::new() },
        Platform::Zhihu => DraftContent::Markdown { markdown: String::new() },
        Platform::X => DraftContent::Thread { posts: Vec::new() },
        Platform::Douyin | Platform::Xiaohongshu => DraftContent::Card { body: String::new(), tags: Vec::new() },
    }
}

fn measured(m: &Measurement) -> Value {
    json!({"length": m.weighted_length, "unit": m.unit, "limit": m.limit, "fits": m.valid})
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct AdaptedInput {
    platform: Platform,
    #[serde(default)]
    title: Option<String>,
    content: String,
}

/// Word checks that apply to any text: they are run on adapted content too.
const WORD_CHECKS: &[&str] = &["brand_banned_word", "ad_law", "growth_promise", "personal_data"];

fn validate_adapted_content(ctx: &ToolContext<'_>, input: &Value) -> Result<Value, ToolFailure> {
    let input: AdaptedInput = parse(input)?;
    let reads = ctx.reads();
    let project = reads.project(ctx.project_id)?;
    let set = reads.profiles()?;
    let profile = draft_profile(&set, input.platform)?;
    let saved = reads.saved_draft(&project.id, input.platform)?;
    // The saved draft's other parts (a digest, tags) stay; the text is the candidate.
    let template = saved.as_ref().map(|d| d.content.clone()).unwrap_or_else(|| empty_content(input.platform));
    let content = normalize_content(with_patch_text(&template, &input.content));
    let title = input.title.or_else(|| saved.as_ref().map(|d| d.title.clone())).unwrap_or_else(|| project.title.clone());
    let findings = check_draft(profile, &title, &content);
    let candidate = Project { title: title.clone(), source: input.content.clone(), ..project };
    let words: Vec<Finding> = reads.source_findings(&candidate)?.into_iter().filter(|f| WORD_CHECKS.contains(&f.check.as_str())).collect();
    let mut lengths = json!({"title": measured(&measure(profile, LimitField::Title, &title))});
    match &content {
        DraftContent::Thread { posts } => {
            lengths["posts"] = json!(posts.iter().map(|p| measured(&measure(profile, LimitField::Post, &p.text))).collect::<Vec<_>>());
        }
        DraftContent::Card { body, .. } => lengths["body"] = json!(measured(&measure(profile, LimitField::Body, body))),
        DraftContent::Markdown { markdown } => lengths["bodyChars"] = json!(markdown.chars().count()),
        DraftContent::Html { .. } => {}
    }
    let blocking = count(&findings, Severity::Block) + count(&words, Severity::Block);
    let (shown, more) = compact_findings(&findings, 20);
    let (word_shown, word_more) = compact_findings(&words, 20);
    Ok(json!({
        "platform": input.platform, "profileId": profile.id, "valid": blocking == 0, "blocking": blocking,
        "findings": shown, "moreFindings": more, "wordFindings": word_shown, "moreWordFindings": word_more,
        "lengths": lengths,
        "note": "Checked only; nothing was saved or proposed. Propose it with propose_draft_patch when it is valid.",
    }))
}

fn run_brand_check(ctx: &ToolContext<'_>, _: &Value) -> Result<Value, ToolFailure> {
    let (project, staged) = effective_project(ctx)?;
    let reads = ctx.reads();
    let brand = reads.brand(&project)?;
    let findings = reads.source_findings(&project)?;
    let (shown, more) = compact_findings(&findings, 40);
    let mut out = json!({
        "checked": checked_text(&project, staged),
        "brandProfile": brand.as_ref().map(|b| json!({"id": b.id, "name": b.name, "cta": b.cta, "bannedWords": b.banned_words.len(), "industry": b.industry})),
        "blocking": count(&findings, Severity::Block), "warnings": count(&findings, Severity::Warn),
        "findings": shown, "moreFindings": more,
    });
    if brand.is_none() {
        out["note"] = json!("The project has no brand profile: only the general checks ran (advertising law, growth promises, personal data, AI-content declaration).");
    }
    Ok(out)
}

/// The findings of a saved draft edited by hand (its own text, not a compile).
fn saved_findings(ctx: &ToolContext<'_>, saved: &PlatformDraft) -> Result<Vec<Finding>, ToolFailure> {
    let set = ctx.reads().profiles()?;
    let profile = draft_profile(&set, saved.platform)?;
    Ok(check_draft(profile, &saved.title, &saved.content))
}

fn run_platform_check(ctx: &ToolContext<'_>, input: &Value) -> Result<Value, ToolFailure> {
    let input: PlatformsInput = parse(input)?;
    let (project, staged) = effective_project(ctx)?;
    let reads = ctx.reads();
    let compiled = reads.compile(&project, input.platforms)?;
    let mut platforms = Vec::new();
    for CompiledDraft { draft, findings } in &compiled.drafts {
        let (shown, more) = compact_findings(findings, 20);
        let mut out = json!({
            "platform": draft.platform, "profileId": draft.profile_id, "status": status_of(findings),
            "blocking": count(findings, Severity::Block), "warnings": count(findings, Severity::Warn),
            "findings": shown, "moreFindings": more,
        });
        if let Some(saved) = reads.saved_draft(&project.id, draft.platform)?.filter(|s| s.hand_edited) {
            let saved_findings = saved_findings(ctx, &saved)?;
            let (shown, more) = compact_findings(&saved_findings, 20);
            out["savedHandEdited"] = json!({"revision": saved.revision, "status": status_of(&saved_findings), "findings": shown, "moreFindings": more});
        }
        platforms.push(out);
    }
    Ok(json!({
        "checked": checked_text(&project, staged),
        "platforms": platforms,
        "sourceBlocking": count(&compiled.findings, Severity::Block),
        "note": "Platform limits and format checks of a fresh compile; run_brand_check has the source-level checks.",
    }))
}

fn item(id: String, text: String, platform: Option<Platform>, blocking: bool, resolved: bool) -> ChecklistItem {
    let note = resolved.then(|| "Checked: nothing to do.".to_owned());
    ChecklistItem { id, text, platform, blocking, resolved, note }
}

fn quoted(finding: &Finding) -> String {
    match &finding.matched {
        Some(matched) => format!("{} (“{matched}”)", finding.message),
        None => finding.message.clone(),
    }
}

/// Platforms whose rules ask for an AI-content declaration (as the quality checks
/// remind).
fn declares_ai(platform: Platform) -> bool {
    matches!(platform, Platform::Wechat | Platform::Douyin | Platform::Xiaohongshu)
}

/// The items of a publish-readiness checklist: staged changes, the source's blocking
/// findings, the brand's call to action, and per platform its saved draft, blocking
/// findings, limits, links, images and the AI-content declaration.
fn readiness_items(
    project: &Project,
    staged: bool,
    brand: Option<&BrandProfile>,
    source_findings: &[Finding],
    compiled: &[CompiledDraft],
    saved: &[(Platform, Option<PlatformDraft>, Vec<Finding>)],
) -> Vec<ChecklistItem> {
    let mut items = Vec::new();
    if staged {
        items.push(item("staged".to_owned(), "This session has staged changes that are not applied: apply or drop them before publishing.".to_owned(), None, true, false));
    }
    let source_blocking: Vec<&Finding> = source_findings.iter().filter(|f| f.severity == Severity::Block).collect();
    for (i, finding) in source_blocking.iter().take(10).enumerate() {
        items.push(item(format!("source.block.{}", i + 1), quoted(finding), None, true, false));
    }
    if source_blocking.len() > 10 {
        items.push(item("source.block.more".to_owned(), format!("{} more blocking findings in the source (run_brand_check).", source_blocking.len() - 10), None, true, false));
    }
    let personal = source_findings.iter().filter(|f| f.check == "personal_data").count();
    if personal > 0 {
        items.push(item(
            "source.personal_data".to_owned(),
            format!("{personal} piece(s) of what looks like personal data (phone, email, ID): remove them unless they are meant to be public."),
            None,
            false,
            false,
        ));
    }
    match brand.map(|b| b.cta.trim()).filter(|cta| !cta.is_empty()) {
        Some(cta) => match source_findings.iter().find(|f| f.check == "cta") {
            Some(finding) => items.push(item("cta".to_owned(), finding.message.clone(), None, false, false)),
            None => items.push(item("cta".to_owned(), format!("The brand's call to action “{cta}” is near the end."), None, false, true)),
        },
        None => items.push(item(
            "cta".to_owned(),
            "No call to action is set in a brand profile: decide whether the piece needs one (follow, subscribe, visit).".to_owned(),
            None,
            false,
            false,
        )),
    }
    for CompiledDraft { draft, findings } in compiled {
        let platform = draft.platform;
        let p = platform.as_str();
        let (saved_draft, saved_findings) = match saved.iter().find(|(q, ..)| *q == platform) {
            Some((_, draft, findings)) => (draft.as_ref(), findings.as_slice()),
            None => (None, &[][..]),
        };
        match saved_draft {
            None => items.push(item(
                format!("{p}.draft"),
                format!("There is no saved {p} draft: save one (Drafts panel) so what is published is what was checked."),
                Some(platform),
                true,
                false,
            )),
            Some(s) if s.status == DraftStatus::Publishing => {
                items.push(item(format!("{p}.draft"), format!("The {p} draft (revision {}) is being published.", s.revision), Some(platform), false, true))
            }
            Some(s) if s.source_revision < project.revision && !s.hand_edited => items.push(item(
                format!("{p}.draft"),
                format!("The saved {p} draft was made from revision {} of the source, which is now at revision {}: save it again.", s.source_revision, project.revision),
                Some(platform),
                false,
                false,
            )),
            Some(s) => items.push(item(format!("{p}.draft"), format!("The saved {p} draft (revision {}) is the one checked.", s.revision), Some(platform), false, true)),
        }
        // Limits: of the saved draft when there is one (what is published), else of
        // the compile.
        let limit_source: Vec<&Finding> = if saved_draft.is_some() { saved_findings.iter().collect() } else { findings.iter().filter(|f| f.check.starts_with("limit.")).collect() };
        let limits: Vec<&Finding> = limit_source.into_iter().filter(|f| f.check.starts_with("limit.") && f.severity != Severity::Info).collect();
        if limits.is_empty() {
            items.push(item(format!("{p}.limits"), format!("Every limit of {} holds.", draft.profile_id), Some(platform), false, true));
        } else {
            let text: Vec<String> = limits.iter().take(5).map(|f| f.message.clone()).collect();
            let blocking = limits.iter().any(|f| f.severity == Severity::Block);
            items.push(item(format!("{p}.limits"), format!("Limits of {}: {}", draft.profile_id, text.join(" ")), Some(platform), blocking, false));
        }
        let other_blocking: Vec<&Finding> = findings.iter().filter(|f| f.severity == Severity::Block && !f.check.starts_with("limit.")).collect();
        for (i, finding) in other_blocking.iter().take(5).enumerate() {
            items.push(item(format!("{p}.block.{}", i + 1), quoted(finding), Some(platform), true, false));
        }
        let link_notes: Vec<&str> = findings.iter().filter(|f| f.check.contains("link")).map(|f| f.message.as_str()).collect();
        if draft.n_links == 0 {
            items.push(item(format!("{p}.links"), "No links.".to_owned(), Some(platform), false, true));
        } else {
            let mut text = format!("{} link(s): check that each works and is allowed on {p}.", draft.n_links);
            for note in link_notes {
                text.push(' ');
                text.push_str(note);
            }
            items.push(item(format!("{p}.links"), text, Some(platform), false, false));
        }
        let image_notes: Vec<&str> = findings.iter().filter(|f| f.check.contains("images")).map(|f| f.message.as_str()).collect();
        if draft.n_images == 0 {
            items.push(item(format!("{p}.images"), "No images.".to_owned(), Some(platform), false, true));
        } else {
            let mut text = format!("{} image(s): upload or attach them on {p}, each with alt text.", draft.n_images);
            for note in image_notes {
                text.push(' ');
                text.push_str(note);
            }
            items.push(item(format!("{p}.images"), text, Some(platform), false, false));
        }
        if declares_ai(platform) {
            items.push(item(
                format!("{p}.ai_declaration"),
                format!("If AI generated or substantially wrote this content, tick {p}'s AI-content declaration when publishing (labelling rules in force since 2025-09-01)."),
                Some(platform),
                false,
                false,
            ));
        }
    }
    items
}

fn run_publish_readiness_check(ctx: &ToolContext<'_>, input: &Value) -> Result<Value, ToolFailure> {
    let input: PlatformsInput = parse(input)?;
    let (project, staged) = effective_project(ctx)?;
    let reads = ctx.reads();
    let compiled = reads.compile(&project, input.platforms)?;
    let brand = reads.brand(&project)?;
    let mut saved = Vec::new();
    for d in &compiled.drafts {
        let draft = reads.saved_draft(&project.id, d.draft.platform)?;
        let findings = match &draft {
            Some(s) => saved_findings(ctx, s)?,
            None => Vec::new(),
        };
        saved.push((d.draft.platform, draft, findings));
    }
    let items = readiness_items(&project, staged, brand.as_ref(), &compiled.findings, &compiled.drafts, &saved);
    let open_blocking = items.iter().filter(|i| i.blocking && !i.resolved).count();
    let open = items.iter().filter(|i| !i.resolved).count();
    let platforms: Vec<&str> = compiled.drafts.iter().map(|d| d.draft.platform.as_str()).collect();
    let summary = format!("Publish readiness for {}: {open_blocking} blocking and {} other open items.", platforms.join(", "), open - open_blocking);
    let proposal = ctx.propose(NewProposal {
        project_id: String::new(),
        kind: ProposalKind::Checklist,
        target: Target::Session,
        summary: summary.clone(),
        payload: Payload::Checklist { items: items.clone() },
        origin: Origin::default(),
    })?;
    let items: Vec<Value> = items
        .iter()
        .map(|i| {
            let mut v = json!({"id": i.id, "text": i.text, "blocking": i.blocking, "resolved": i.resolved});
            if let Some(p) = i.platform {
                v["platform"] = json!(p);
            }
            v
        })
        .collect();
    Ok(json!({
        "proposalId": proposal.id, "kind": proposal.kind, "checked": checked_text(&project, staged),
        "ready": open_blocking == 0, "openBlocking": open_blocking, "open": open, "summary": summary,
        "items": items,
        "note": "The checklist is kept with the session for the person. Fix what you can by proposals; mark an item done with resolve_checklist_item (it asks the person).",
    }))
}

/// A check tool: deterministic, allowed, read-only, parallel-safe.
fn check_tool(name: &str, description: &str, prompt: &str, input: Value, summary: &str, max_result_chars: usize) -> ToolDefinition {
    ToolDefinition { capability: Capability::Validate, prompt: prompt.to_owned(), input_schema: input, max_result_chars, ..read_tool(name, description, json!({}), summary) }
}

fn platforms_schema() -> Value {
    schema(json!({"platforms": {"type": "array", "items": platform_schema(), "maxItems": 5}}), &[])
}

pub(super) fn tools() -> Vec<(ToolDefinition, ToolHandler)> {
    vec![
        (
            check_tool(
                "compile_platform_drafts",
                "Compile the source for the platforms (without saving) and show each draft's text with its findings, beside the person's saved draft.",
                "Compile each platform's draft (nothing is saved): title, text, findings, and the person's saved draft (`saved`; its \
text when it differs).",
                platforms_schema(),
                "each platform's compiled draft with its findings and saved draft",
                100_000,
            ),
            Arc::new(compile_platform_drafts),
        ),
        (
            check_tool(
                "validate_adapted_content",
                "Check a candidate text for one platform against its draft profile (limits, word checks) without saving anything.",
                "Check a text adapted for one platform against its limits and the word checks before proposing it. For x separate posts \
with a `---` line.",
                schema(
                    json!({
                        "platform": platform_schema(),
                        "title": {"type": "string"},
                        "content": {"type": "string", "minLength": 1},
                    }),
                    &["platform", "content"],
                ),
                "whether the text is valid for the platform, its findings and lengths",
                6_000,
            ),
            Arc::new(validate_adapted_content),
        ),
        (
            check_tool(
                "run_brand_check",
                "Run the source-level checks: brand banned words, advertising-law terms, growth promises, call to action, personal data, AI-content declaration.",
                "Run the source checks: brand banned words and call to action, advertising-law terms, growth promises, personal data.",
                schema(json!({}), &[]),
                "the source-level findings, most severe first",
                8_000,
            ),
            Arc::new(run_brand_check),
        ),
        (
            check_tool(
                "run_platform_check",
                "Check each platform's compiled draft against its limits and format rules (and a hand-edited saved draft against its own text).",
                "Check each platform draft's limits and format (and a hand-edited saved draft's own text).",
                platforms_schema(),
                "one status and findings per platform",
                8_000,
            ),
            Arc::new(run_platform_check),
        ),
        (
            check_tool(
                "run_publish_readiness_check",
                "Build a publish-readiness checklist (saved drafts, blocking findings, limits, links, images, call to action, AI-content declaration) and keep it with the session.",
                "Check readiness to publish and keep it as a checklist for the person (blocking findings, limits, links, images, call to \
action, AI-content declaration).",
                platforms_schema(),
                "the checklist proposal id and its items",
                6_000,
            ),
            Arc::new(run_publish_readiness_check),
        ),
    ]
}
