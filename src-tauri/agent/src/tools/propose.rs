//! Propose tools: each records a proposal for the person to review (through
//! [`ToolContext::propose`], which fills in where it came from) and changes nothing
//! official. Text edits are anchored by quoted text; an anchor that is missing,
//! ambiguous or overlaps another is a tool error naming the edit, so the model can
//! retry. A newer proposal for the same target from the same session supersedes the
//! older one.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{json, Value};

use super::{compact_finding, effective_project, parse, platform_schema, schema};
use crate::harness::permission::PermissionPolicy;
use crate::harness::tools::{BaseVersionPolicy, Capability, Concurrency, InterruptBehavior, RiskLevel};
use crate::harness::{ToolContext, ToolDefinition, ToolFailure, ToolHandler};
use crate::model::{DraftContent, DraftStatus, Platform};
use crate::proposals::{apply_edits, draft_patch_text, Candidate, Edit, NewProposal, Origin, Payload, Proposal, ProposalKind, Target};

/// What the model is told after every proposal.
const REVIEW_NOTE: &str = "Nothing has changed yet: the person reviews this proposal (accepting all or some hunks, or rejecting it with a reason). \
To apply it yourself, call apply_proposal; it always asks the person first.";

/// A proposal as the model sees it: its id, kind, hunks, the findings it would
/// introduce, what it replaced, and that the person reviews it.
fn proposal_result(ctx: &ToolContext<'_>, proposal: &Proposal, staged: bool) -> Result<Value, ToolFailure> {
    let superseded: Vec<String> =
        ctx.reads().proposals(&proposal.project_id)?.into_iter().filter(|p| p.superseded_by.as_deref() == Some(proposal.id.as_str())).map(|p| p.id).collect();
    let mut out = json!({
        "proposalId": proposal.id,
        "kind": proposal.kind,
        "target": proposal.target,
        "status": "proposed",
        "hunks": proposal.hunks.len(),
        "hunkIds": proposal.hunks.iter().map(|h| h.id.as_str()).collect::<Vec<_>>(),
        "newFindings": proposal.new_findings.iter().take(10).map(compact_finding).collect::<Vec<_>>(),
        "note": REVIEW_NOTE,
    });
    if proposal.new_findings.len() > 10 {
        out["moreNewFindings"] = json!(proposal.new_findings.len() - 10);
    }
    if !superseded.is_empty() {
        out["supersedes"] = json!(superseded);
    }
    if !proposal.carries.is_empty() {
        // The model should know its earlier edits are still in review, here.
        out["carries"] = json!(proposal.carries.iter().map(|c| json!({"proposalId": c.proposal_id, "hunkIds": c.hunk_ids})).collect::<Vec<_>>());
        out["carriesNote"] = json!("Your earlier open proposals for this text had the same base; their edits that do not touch this one's are carried here as separate hunks, so the person reviews everything in this one proposal.");
    }
    if staged {
        out["basedOn"] = json!("the source with this session's staged changes");
    }
    Ok(out)
}

fn new_proposal(kind: ProposalKind, target: Target, summary: String, payload: Payload) -> NewProposal {
    // The project and the origin are filled in by `ToolContext::propose`.
    NewProposal { project_id: String::new(), kind, target, summary, payload, origin: Origin::default() }
}

/// `text` with `edits` applied, or the tool error that names the edit and why.
fn edited(text: &str, edits: &[Edit], tool: &str, source_of_quotes: &str) -> Result<String, ToolFailure> {
    if edits.is_empty() {
        return Err(ToolFailure::new("`edits` is empty: give at least one {find, replace}."));
    }
    apply_edits(text, edits)
        .map_err(|e| ToolFailure::new(format!("{e}. No proposal was made; quote the text exactly as {source_of_quotes} shows it, fix this edit, and call {tool} again.")))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SourcePatchInput {
    summary: String,
    #[serde(default)]
    edits: Option<Vec<Edit>>,
    #[serde(default)]
    rewrite: Option<String>,
}

fn propose_source_patch(ctx: &ToolContext<'_>, input: &Value) -> Result<Value, ToolFailure> {
    let input: SourcePatchInput = parse(input)?;
    let (project, staged) = effective_project(ctx)?;
    let base = project.source;
    let (kind, proposed) = match (input.edits, input.rewrite) {
        (Some(edits), None) => (ProposalKind::SourcePatch, edited(&base, &edits, "propose_source_patch", "read_project_context")?),
        (None, Some(rewrite)) => (ProposalKind::SourceRewrite, rewrite),
        _ => return Err(ToolFailure::new("Give either `edits` (anchored edits) or `rewrite` (the whole new source), not both and not neither.")),
    };
    let proposal = ctx.propose(new_proposal(kind, Target::Source, input.summary, Payload::Text { base_text: base, proposed_text: proposed }))?;
    proposal_result(ctx, &proposal, staged)
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CandidatesInput {
    summary: String,
    candidates: Vec<Candidate>,
}

fn propose_title_candidates(ctx: &ToolContext<'_>, input: &Value) -> Result<Value, ToolFailure> {
    let input: CandidatesInput = parse(input)?;
    let proposal = ctx.propose(new_proposal(ProposalKind::TitleCandidates, Target::Source, input.summary, Payload::Candidates { candidates: input.candidates }))?;
    let mut out = proposal_result(ctx, &proposal, false)?;
    out["candidates"] = json!(candidate_texts(&proposal));
    Ok(out)
}

fn candidate_texts(proposal: &Proposal) -> Vec<&str> {
    match &proposal.payload {
        Payload::Candidates { candidates } => candidates.iter().map(|c| c.text.as_str()).collect(),
        _ => Vec::new(),
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct DraftPatchInput {
    platform: Platform,
    summary: String,
    edits: Vec<Edit>,
}

fn propose_draft_patch(ctx: &ToolContext<'_>, input: &Value) -> Result<Value, ToolFailure> {
    let input: DraftPatchInput = parse(input)?;
    let platform = input.platform.as_str();
    let Some(draft) = ctx.reads().saved_draft(ctx.project_id, input.platform)? else {
        return Err(ToolFailure::new(format!(
            "There is no saved {platform} draft to patch. The person saves one first (Drafts panel); or propose a change of the source with propose_source_patch."
        )));
    };
    if draft.status == DraftStatus::Publishing {
        return Err(ToolFailure::new(format!("The {platform} draft is being published, so it is read-only: nothing can be proposed for it now.")));
    }
    let base = draft_patch_text(&draft.content);
    let proposed = edited(&base, &input.edits, "propose_draft_patch", &format!("compile_platform_drafts (the saved {platform} draft's text)"))?;
    let proposal =
        ctx.propose(new_proposal(ProposalKind::DraftPatch, Target::Draft { platform: input.platform }, input.summary, Payload::Text { base_text: base, proposed_text: proposed }))?;
    let mut out = proposal_result(ctx, &proposal, false)?;
    out["draftRevision"] = json!(draft.revision);
    if matches!(draft.status, DraftStatus::Ready | DraftStatus::Published) {
        let status = if draft.status == DraftStatus::Ready { "ready" } else { "published" };
        out["draftStatus"] = json!(draft.status);
        out["note"] = json!(format!("{REVIEW_NOTE} The draft is marked {status}: only the person can apply a change to it."));
    }
    Ok(out)
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct TagsInput {
    platform: Platform,
    summary: String,
    candidates: Vec<Candidate>,
}

fn propose_tags(ctx: &ToolContext<'_>, input: &Value) -> Result<Value, ToolFailure> {
    let input: TagsInput = parse(input)?;
    let platform = input.platform.as_str();
    if !matches!(input.platform, Platform::Douyin | Platform::Xiaohongshu) {
        return Err(ToolFailure::new(format!("{platform} drafts have no topic tags; tags belong to douyin and xiaohongshu drafts.")));
    }
    match ctx.reads().saved_draft(ctx.project_id, input.platform)? {
        Some(draft) if matches!(draft.content, DraftContent::Card { .. }) => {}
        _ => return Err(ToolFailure::new(format!("There is no saved {platform} draft to tag. The person saves one first (Drafts panel)."))),
    }
    let proposal =
        ctx.propose(new_proposal(ProposalKind::TagCandidates, Target::Draft { platform: input.platform }, input.summary, Payload::Candidates { candidates: input.candidates }))?;
    let mut out = proposal_result(ctx, &proposal, false)?;
    out["candidates"] = json!(candidate_texts(&proposal));
    Ok(out)
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct OutlineInput {
    summary: String,
    outline: String,
}

fn propose_outline(ctx: &ToolContext<'_>, input: &Value) -> Result<Value, ToolFailure> {
    let input: OutlineInput = parse(input)?;
    let proposal = ctx.propose(new_proposal(ProposalKind::Outline, Target::Session, input.summary, Payload::Outline { outline: input.outline }))?;
    proposal_result(ctx, &proposal, false)
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CommentReplyInput {
    comment_id: String,
    summary: String,
    body: String,
}

fn propose_comment_reply(ctx: &ToolContext<'_>, input: &Value) -> Result<Value, ToolFailure> {
    let input: CommentReplyInput = parse(input)?;
    let target = Target::Comment { comment_id: input.comment_id.clone() };
    let proposal = ctx.propose(new_proposal(ProposalKind::CommentReply, target, input.summary, Payload::CommentReply { comment_id: input.comment_id, body: input.body }))?;
    proposal_result(ctx, &proposal, false)
}

/// A propose tool: allowed without asking (it changes nothing official), read-only,
/// parallel-safe and cancellable.
fn propose_tool(name: &str, description: &str, prompt: &str, properties: Value, required: &[&str], summary: &str) -> ToolDefinition {
    ToolDefinition {
        name: name.to_owned(),
        version: 1,
        description: description.to_owned(),
        prompt: prompt.to_owned(),
        input_schema: schema(properties, required),
        output_schema: json!({
            "type": "object",
            "properties": {
                "proposalId": {"type": "string"}, "kind": {"type": "string"}, "hunks": {"type": "integer"},
                "hunkIds": {"type": "array", "items": {"type": "string"}}, "newFindings": {"type": "array"}, "note": {"type": "string"},
            },
        }),
        capability: Capability::Propose,
        risk: RiskLevel::Low,
        permission: PermissionPolicy::Allow,
        read_only: true,
        destructive: false,
        concurrency: Concurrency::ParallelSafe,
        interrupt: InterruptBehavior::Cancel,
        idempotency_key_fields: Vec::new(),
        base_version: BaseVersionPolicy::None,
        max_result_chars: 4_000,
        result_summary: summary.to_owned(),
    }
}

// The schemas are sent with every model call: they say what is checked, and the
// prompts say the rest, briefly.

/// For the person: what changes and why.
fn summary_schema() -> Value {
    json!({"type": "string", "minLength": 1, "maxLength": 2000})
}

fn edits_schema() -> Value {
    json!({
        "type": "array", "minItems": 1, "maxItems": 50,
        "items": {"type": "object", "properties": {"find": {"type": "string", "minLength": 1}, "replace": {"type": "string"}}, "required": ["find", "replace"], "additionalProperties": false},
    })
}

fn candidates_schema(max_chars: u32) -> Value {
    json!({
        "type": "array", "minItems": 1, "maxItems": 20,
        "items": {"type": "object", "properties": {"text": {"type": "string", "minLength": 1, "maxLength": max_chars}, "rationale": {"type": "string"}}, "required": ["text"], "additionalProperties": false},
    })
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct MemoryInput {
    text: String,
    #[serde(default)]
    scope: Option<String>,
}

/// Proposes a memory item: the person confirms it (or not) in the panel or Settings;
/// until then the model does not see it.
fn propose_memory(ctx: &ToolContext<'_>, input: &Value) -> Result<Value, ToolFailure> {
    let input: MemoryInput = parse(input)?;
    let workspace_wide = input.scope.as_deref() == Some("workspace");
    let item = ctx.propose_memory(&input.text, workspace_wide)?;
    Ok(json!({
        "memoryId": item.id,
        "status": "proposed",
        "scope": if workspace_wide { "workspace" } else { "project" },
        "note": "Nothing is remembered yet: the person confirms or discards this. Once confirmed, it is in your context in every session.",
    }))
}

pub(super) fn tools() -> Vec<(ToolDefinition, ToolHandler)> {
    vec![
        (
            propose_tool(
                "propose_memory",
                "Propose a durable memory item (a brand or account rule the person stated) for the person to confirm.",
                "Only when the person states a lasting rule of the brand or account (\"this brand avoids clickbait\"): \
`text`, one sentence in their words; `scope`: `project` (default) or `workspace`. They confirm it; skip what Memory has.",
                json!({"text": {"type": "string", "minLength": 1, "maxLength": 500}, "scope": {"type": "string", "enum": ["project", "workspace"]}}),
                &["text"],
                "the memory id, waiting for the person",
            ),
            Arc::new(propose_memory),
        ),
        (
            propose_tool(
                "propose_source_patch",
                "Propose a change of the project's Markdown source, as anchored edits or a full rewrite, for the person to review.",
                "Propose a change of the Markdown source; the person reviews it. `summary`: what and why, for them. `edits`: each `find` \
quotes the current text exactly, once (quote enough around it); no overlaps. Or `rewrite`: the whole new source. Replaces your previous \
open source proposal.",
                json!({"summary": summary_schema(), "edits": edits_schema(), "rewrite": {"type": "string", "minLength": 1}}),
                &["summary"],
                "the proposal id, kind, hunk ids and the findings it would introduce",
            ),
            Arc::new(propose_source_patch),
        ),
        (
            propose_tool(
                "propose_title_candidates",
                "Propose title candidates (with a rationale each); the person picks one.",
                "Propose one-line titles, each with a short rationale; the person picks one.",
                json!({"summary": summary_schema(), "candidates": candidates_schema(200)}),
                &["summary", "candidates"],
                "the proposal id and the candidates",
            ),
            Arc::new(propose_title_candidates),
        ),
        (
            propose_tool(
                "propose_draft_patch",
                "Propose anchored edits of a saved platform draft's text (HTML for wechat, Markdown for zhihu, posts for x, the caption for douyin/xiaohongshu).",
                "Propose anchored edits (as in propose_source_patch) of a saved platform draft's text, as compile_platform_drafts shows \
it (`saved.text`, or `text` when `saved.sameAsCompile`). Not for a draft being published.",
                json!({"platform": platform_schema(), "summary": summary_schema(), "edits": edits_schema()}),
                &["platform", "summary", "edits"],
                "the proposal id, hunk ids and the limit findings it would introduce",
            ),
            Arc::new(propose_draft_patch),
        ),
        (
            propose_tool(
                "propose_tags",
                "Propose topic tags for a saved douyin or xiaohongshu draft; the person picks which to use.",
                "Propose topic tags (without `#`) for the saved douyin or xiaohongshu draft; the person picks.",
                json!({"platform": {"type": "string", "enum": ["douyin", "xiaohongshu"]}, "summary": summary_schema(), "candidates": candidates_schema(100)}),
                &["platform", "summary", "candidates"],
                "the proposal id and the tag candidates",
            ),
            Arc::new(propose_tags),
        ),
        (
            propose_tool(
                "propose_outline",
                "Propose an outline for the article (a session artifact; nothing official changes).",
                "Propose an outline (Markdown) to agree on structure before editing; kept with the session.",
                json!({"summary": summary_schema(), "outline": {"type": "string", "minLength": 1, "maxLength": 20000}}),
                &["summary", "outline"],
                "the proposal id",
            ),
            Arc::new(propose_outline),
        ),
        (
            propose_tool(
                "propose_comment_reply",
                "Propose a reply to a comment on the project; the person posts it or not.",
                "Propose a reply to a comment (id from read_comments); the person decides whether it is posted.",
                json!({"commentId": {"type": "string", "minLength": 1}, "summary": summary_schema(), "body": {"type": "string", "minLength": 1, "maxLength": 10000}}),
                &["commentId", "summary", "body"],
                "the proposal id",
            ),
            Arc::new(propose_comment_reply),
        ),
    ]
}
