//! Read tools: the session's project, its drafts and checks, comments, versions,
//! brand profile, templates and images. Typed reads of the store through `project`.

use std::sync::Arc;

use serde_json::{json, Value};

use super::read_tool;
use crate::harness::{ToolContext, ToolDefinition, ToolFailure, ToolHandler};
use crate::model::{BrandProfile, ContentTemplate, DraftStatus, Platform};
use crate::pipeline::Finding;
use crate::profiles::Severity;

fn read_project_context(ctx: &ToolContext<'_>, input: &Value) -> Result<Value, ToolFailure> {
    let reads = ctx.reads();
    let project = reads.project(ctx.project_id)?;
    let mut out = json!({
        "id": project.id, "title": project.title, "revision": project.revision, "head": project.head,
        "platforms": project.platforms, "brandProfileId": project.brand_profile_id, "templateId": project.template_id,
    });
    // The session's staged proposals compose: its tools see the source with them.
    let staging = match ctx.owner.session_id() {
        Some(session) => reads.staging(session)?.filter(|s| s.project_id == project.id && !s.entries.is_empty()),
        None => None,
    };
    let source = match &staging {
        Some(staging) => {
            let ids: Vec<&str> = staging.entries.iter().map(|e| e.proposal_id.as_str()).collect();
            out["staged"] = json!({
                "proposals": ids,
                "baseRevision": staging.base_revision,
                "note": format!(
                    "The source shown is the effective source: it includes {} staged proposal(s) that are not applied yet, so it differs from the official working copy (revision {}). Proposals you make are based on this text.",
                    ids.len(), project.revision
                ),
            });
            staging.effective_source.clone()
        }
        None => project.source,
    };
    if input["includeSource"].as_bool() != Some(false) {
        out["source"] = Value::String(source);
    }
    Ok(out)
}

/// The most sections one `read_section` call returns.
const MAX_SECTIONS_READ: usize = 5;

/// Sections of the source in full, numbered as the working set's outline numbers them
/// (with the session's staged proposals, as `read_project_context` reads it): how a
/// model with a small window reads the article it was given by section.
fn read_section(ctx: &ToolContext<'_>, input: &Value) -> Result<Value, ToolFailure> {
    let (project, staged) = super::effective_project(ctx)?;
    let sections = crate::context::sections::split(&project.source);
    let wanted: Vec<usize> = input["sections"].as_array().map(|a| a.iter().filter_map(|n| n.as_u64()).map(|n| n as usize).collect()).unwrap_or_default();
    if let Some(missing) = wanted.iter().find(|n| **n == 0 || **n > sections.len()) {
        return Err(ToolFailure::new(format!("There is no section {missing}: the source has sections 1 to {}.", sections.len())));
    }
    let out: Vec<Value> = sections
        .iter()
        .filter(|s| wanted.contains(&s.number))
        .map(|s| json!({"section": s.number, "title": crate::context::sections::title(s), "text": &project.source[s.range.clone()]}))
        .collect();
    let mut result = json!({"revision": project.revision, "sectionCount": sections.len(), "sections": out});
    if staged {
        result["basedOn"] = json!("the source with this session's staged changes");
    }
    Ok(result)
}

fn read_publications(ctx: &ToolContext<'_>, input: &Value) -> Result<Value, ToolFailure> {
    let reads = ctx.reads();
    let project = reads.project(ctx.project_id)?;
    let platforms: Option<Vec<Platform>> = match &input["platforms"] {
        Value::Array(_) => Some(serde_json::from_value(input["platforms"].clone()).map_err(|e| ToolFailure::new(format!("`platforms`: {e}")))?),
        _ => None,
    };
    let compiled = reads.compile(&project, platforms)?;
    let saved = reads.saved_drafts(&project.id)?;
    let count = |findings: &[Finding], severity: Severity| findings.iter().filter(|f| f.severity == severity).count();
    let out: Vec<Value> = compiled
        .drafts
        .iter()
        .map(|d| {
            let blocking = count(&d.findings, Severity::Block);
            let warnings = count(&d.findings, Severity::Warn);
            // The person's saved draft for this platform, if any: its status is theirs
            // to set, and a publishing draft must not be proposed over.
            let saved = saved.iter().find(|s| s.platform == d.draft.platform).map(|s| {
                json!({
                    "revision": s.revision, "status": s.status, "handEdited": s.hand_edited,
                    "profileId": s.profile_id, "sourceRevision": s.source_revision, "sourceVersion": s.source_version,
                    "sourceChangedSince": s.source_revision < compiled.revision,
                    "readOnly": s.status == DraftStatus::Publishing,
                })
            });
            let findings: Vec<Value> = d.findings.iter().take(10).map(|x| json!({"check": x.check, "severity": x.severity, "message": x.message})).collect();
            json!({
                "platform": d.draft.platform, "profileId": d.draft.profile_id, "title": d.draft.title,
                "saved": saved,
                "checks": if blocking > 0 { "blocked" } else if warnings > 0 { "needs_review" } else { "clear" },
                "blocking": blocking, "warnings": warnings,
                "findings": findings,
            })
        })
        .collect();
    Ok(json!({"revision": compiled.revision, "tags": compiled.tags, "drafts": out, "sourceFindings": compiled.findings.len()}))
}

fn read_comments(ctx: &ToolContext<'_>, input: &Value) -> Result<Value, ToolFailure> {
    let include_resolved = input["includeResolved"].as_bool().unwrap_or(false);
    let reads = ctx.reads();
    reads.project(ctx.project_id)?;
    let comments: Vec<Value> = reads
        .comments(ctx.project_id, include_resolved)?
        .into_iter()
        .map(|c| json!({"id": c.id, "body": c.body, "quote": c.quote, "resolved": c.resolved, "author": c.author}))
        .collect();
    Ok(json!({"comments": comments}))
}

fn read_versions(ctx: &ToolContext<'_>, _: &Value) -> Result<Value, ToolFailure> {
    let reads = ctx.reads();
    reads.project(ctx.project_id)?;
    Ok(json!({"versions": reads.version_summaries(ctx.project_id)?}))
}

fn read_brand_profile(ctx: &ToolContext<'_>, _: &Value) -> Result<Value, ToolFailure> {
    let reads = ctx.reads();
    let project = reads.project(ctx.project_id)?;
    match &project.brand_profile_id {
        Some(id) => {
            let brand = reads.get::<BrandProfile>(id.as_bytes())?;
            let brand = brand.ok_or_else(|| crate::error::ApiError::not_found("brand profile", id))?;
            Ok(serde_json::to_value(brand).map_err(|e| ToolFailure::new(e.to_string()))?)
        }
        None => Ok(json!({"brandProfile": null, "note": "The project has no brand profile."})),
    }
}

fn read_templates(ctx: &ToolContext<'_>, _: &Value) -> Result<Value, ToolFailure> {
    let mut templates = ctx.reads().scan::<ContentTemplate>(b"")?;
    templates.sort_by(|a, b| a.name.cmp(&b.name).then_with(|| a.id.cmp(&b.id)));
    let templates: Vec<Value> =
        templates.into_iter().map(|t| json!({"id": t.id, "name": t.name, "titleTemplate": t.title_template, "defaultPlatforms": t.default_platforms, "tags": t.tags})).collect();
    Ok(json!({"templates": templates}))
}

fn read_media_summary(ctx: &ToolContext<'_>, _: &Value) -> Result<Value, ToolFailure> {
    let media: Vec<Value> = ctx
        .reads()
        .media(ctx.project_id)?
        .into_iter()
        .map(|m| json!({"id": m.id, "name": m.original_name, "mimeType": m.mime_type, "bytes": m.byte_size, "width": m.width, "height": m.height, "altText": m.alt_text}))
        .collect();
    Ok(json!({"media": media}))
}

/// The most characters `read_stored_result` returns at once.
pub const STORED_SLICE_CHARS: usize = 16_000;
/// The most bytes (JSON-escaped) of one slice, so its result always fits the log line
/// and is seen inline.
const STORED_SLICE_BYTES: usize = 40 * 1024;

/// A slice of a stored large result, so nothing a tool returned is out of the model's
/// reach. References are content hashes (`sha256:…`): knowing one means having seen
/// the result it names.
fn read_stored_result(ctx: &ToolContext<'_>, input: &Value) -> Result<Value, ToolFailure> {
    let reference = input["ref"].as_str().unwrap_or_default();
    let Some(content) = ctx.reads().stored_result(reference)? else {
        return Err(ToolFailure::new(format!("There is no stored result `{reference}`.")));
    };
    let total = content.chars().count();
    let offset = usize::try_from(input["offset"].as_u64().unwrap_or(0)).unwrap_or(usize::MAX).min(total);
    let wanted = input["maxChars"].as_u64().and_then(|n| usize::try_from(n).ok()).unwrap_or(STORED_SLICE_CHARS).clamp(1, STORED_SLICE_CHARS);
    let mut take = wanted.min(total - offset);
    let mut text: String = content.chars().skip(offset).take(take).collect();
    // Characters that escape to several bytes: shrink until the slice fits.
    loop {
        let bytes = serde_json::to_string(&text).map(|e| e.len()).unwrap_or(usize::MAX);
        if bytes <= STORED_SLICE_BYTES || take <= 1 {
            break;
        }
        take = (take * STORED_SLICE_BYTES / bytes).max(1).min(take - 1);
        text = text.chars().take(take).collect();
    }
    let next = offset + take;
    Ok(json!({
        "ref": reference, "offset": offset, "chars": take, "totalChars": total,
        "nextOffset": if next < total { json!(next) } else { Value::Null },
        "text": text,
    }))
}

fn read_performance(ctx: &ToolContext<'_>, input: &Value) -> Result<Value, ToolFailure> {
    let platform: Platform = serde_json::from_value(input["platform"].clone()).map_err(|e| ToolFailure::new(format!("`platform`: {e}")))?;
    let summary = ctx.reads().performance_summary(platform)?;
    let mut out = json!({
        "platform": platform, "metric": summary.metric, "basis": summary.basis, "bucket": summary.bucket,
        "eligible": summary.eligible, "summary": summary.text, "snapshotIds": summary.snapshot_ids(),
    });
    if summary.text.is_empty() {
        out["note"] = json!(format!(
            "Not enough eligible posts on {} to compare ({} eligible; boosted, private, unknown-traffic and tiny posts, and posts without three earlier comparable ones, are left out).",
            platform.as_str(),
            summary.eligible
        ));
    }
    Ok(out)
}

pub(super) fn tools() -> Vec<(ToolDefinition, ToolHandler)> {
    let stored = |name: &str, description: &str| ToolDefinition {
        input_schema: super::schema(
            json!({
                "ref": {"type": "string", "pattern": "^sha256:[0-9a-f]{64}$"},
                "offset": {"type": "integer", "minimum": 0},
                "maxChars": {"type": "integer", "minimum": 1, "maximum": STORED_SLICE_CHARS},
            }),
            &["ref"],
        ),
        max_result_chars: STORED_SLICE_CHARS + 1_000,
        ..read_tool(name, description, json!({}), "a slice of a stored result")
    };
    vec![
        (
            ToolDefinition {
                prompt: "Read the project: title, revision, latest version, platforms, brand and template ids, and the Markdown source \
(with the session's staged proposals, when `staged` says so)."
                    .to_owned(),
                // The article itself: seen whole up to the context's room (and the log
                // line); beyond that a preview and read_stored_result.
                max_result_chars: 200_000,
                ..read_tool(
                    "read_project_context",
                    "Read the session's project: title, revision, latest version number, target platforms, brand profile and template ids, and the Markdown source.",
                    json!({"includeSource": {"type": "boolean", "description": "Include the Markdown source (default true)."}}),
                    "project fields and its source",
                )
            },
            Arc::new(read_project_context),
        ),
        (
            ToolDefinition {
                input_schema: super::schema(json!({"sections": {"type": "array", "items": {"type": "integer", "minimum": 1}, "minItems": 1, "maxItems": MAX_SECTIONS_READ}}), &["sections"]),
                max_result_chars: 200_000,
                ..read_tool(
                    "read_section",
                    "Read sections of the article in full, by the numbers of the outline (§1, §2, …).",
                    json!({}),
                    "the sections' text",
                )
            },
            Arc::new(read_section),
        ),
        (
            stored(
                "read_stored_result",
                "Read more of a result that was too large to show: give its `ref` and the `nextOffset` it reported; returns the next slice of text and the offset after it.",
            ),
            Arc::new(read_stored_result),
        ),
        (
            stored("read_tool_result", "The same as read_stored_result: read on in a large result by its `ref` and `nextOffset`."),
            Arc::new(read_stored_result),
        ),
        (
            read_tool(
                "read_publications",
                "Report each platform draft of the project: the saved draft (revision, status draft/ready/publishing/published, hand-edited or not, whether the source changed since) and a fresh compile's check results (blocking, warnings).",
                json!({"platforms": {"type": "array", "items": {"type": "string", "enum": ["wechat", "zhihu", "x", "douyin", "xiaohongshu"]}}}),
                "one status per platform draft",
            ),
            Arc::new(read_publications),
        ),
        (
            read_tool("read_comments", "Read the comments on the project, with the quoted text they anchor to.", json!({"includeResolved": {"type": "boolean"}}), "comments, oldest first"),
            Arc::new(read_comments),
        ),
        (
            read_tool("read_versions", "List the project's saved versions (number, title, author, message, size), newest last.", json!({}), "version summaries"),
            Arc::new(read_versions),
        ),
        (
            read_tool("read_brand_profile", "Read the brand profile of the project: voice, audience, banned words, CTA, link strategy, default tags.", json!({}), "the brand profile or null"),
            Arc::new(read_brand_profile),
        ),
        (
            ToolDefinition {
                input_schema: super::schema(json!({"platform": super::platform_schema()}), &["platform"]),
                max_result_chars: 6_000,
                ..read_tool(
                    "read_performance",
                    "How the person's posts did on a platform: the strongest and weakest, each as a multiple of the account's usual, with snapshot ids. An association, never a cause. Refused while performance history is kept out of AI context.",
                    json!({}),
                    "a platform's performance summary",
                )
            },
            Arc::new(read_performance),
        ),
        (read_tool("read_templates", "List the content templates of the workspace.", json!({}), "templates"), Arc::new(read_templates)),
        (
            read_tool("read_media_summary", "List the images used by the project: name, type, size, dimensions and alt text.", json!({}), "media summaries"),
            Arc::new(read_media_summary),
        ),
    ]
}
