//! Write tools: the only official changes the model can ask for. Each always asks the
//! person (an approval bound to the exact input and the target's version), runs alone
//! and at most once, and finishes what it began when interrupted.
//!
//! `apply_proposal` is the model's only path to an accepted proposal: its approval is
//! bound to the proposal's selected hunks and its target's revision
//! (`BaseVersionPolicy::ProposalTarget`), and the accept is audited as the assistant's,
//! naming the approval. Accepting or rejecting as the person is not a tool at all.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{json, Value};

use super::{parse, platform_schema, schema};
use crate::harness::permission::PermissionPolicy;
use crate::harness::tools::{BaseVersionPolicy, Capability, Concurrency, InterruptBehavior, RiskLevel};
use crate::harness::{ToolContext, ToolDefinition, ToolFailure, ToolHandler};
use crate::model::{Anchor, BrandProfile, ContentTemplate, Platform};
use crate::proposals::apply::{self, Accept, Actor};
use crate::proposals::checkpoints::{self, CheckpointReason};
use crate::proposals::{MetadataChange, NewProposal, Payload, ProposalKind, Target};
use crate::store::{Batch, Durability};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ApplyInput {
    proposal_id: String,
    #[serde(default)]
    hunks: Option<Vec<String>>,
    #[serde(default)]
    choices: Option<Vec<String>>,
}

fn apply_proposal(ctx: &ToolContext<'_>, input: &Value) -> Result<Value, ToolFailure> {
    let input: ApplyInput = parse(input)?;
    let kernel = ctx.writer()?;
    let proposal = ctx.reads().proposal(&input.proposal_id)?;
    if proposal.project_id != ctx.project_id {
        return Err(ToolFailure::new(format!("Proposal {} belongs to another project.", proposal.id)));
    }
    // The revision the person's approval was bound to: if the target moved since, the
    // accept is a CONFLICT and nothing is written.
    let Some(expected_base) = ctx.target_version else {
        return Err(ToolFailure::new("The call has no target revision to apply against; nothing was applied."));
    };
    let accepted = apply::accept(
        kernel,
        &Accept {
            proposal_id: proposal.id.clone(),
            hunks: input.hunks,
            expected_base,
            choices: input.choices,
            confirm_final: false,
            actor: Actor::Model { tool_use_id: ctx.tool_use_id.to_owned(), approval: ctx.approval.map(str::to_owned) },
        },
    )?;
    let p = &accepted.proposal;
    let mut out = json!({
        "proposalId": p.id, "kind": p.kind, "status": p.status, "hunksApplied": p.accepted_hunks,
        "note": "Applied with the person's approval; the audit trail names the assistant and the approval.",
    });
    if let Some(version) = &accepted.version {
        out["version"] = json!(version.number);
    }
    if let Some(project) = &accepted.project {
        out["revision"] = json!(project.revision);
    }
    if let Some(draft) = &accepted.draft {
        out["draft"] = json!({"platform": draft.platform, "revision": draft.revision});
    }
    if let Some(comment) = &accepted.comment {
        out["commentId"] = json!(comment.id);
    }
    if let Some(applied) = p.applied.as_ref().filter(|a| !a.choices.is_empty()) {
        out["choices"] = json!(applied.choices);
    }
    Ok(out)
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct MetadataInput {
    summary: String,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    platforms: Option<Vec<Platform>>,
    // `brandProfileId` and `templateId` are read from the raw input: `null` clears.
}

/// `Some(None)` for an explicit `null`, `Some(Some(id))` for an id, `None` when absent.
fn clearable(input: &Value, field: &str) -> Option<Option<String>> {
    match input.get(field) {
        None => None,
        Some(Value::Null) => Some(None),
        Some(value) => Some(value.as_str().map(|s| s.trim().to_owned())),
    }
}

fn update_project_metadata(ctx: &ToolContext<'_>, input: &Value) -> Result<Value, ToolFailure> {
    let brand_profile_id = clearable(input, "brandProfileId");
    let template_id = clearable(input, "templateId");
    let mut fields = input.clone();
    if let Value::Object(map) = &mut fields {
        map.remove("brandProfileId");
        map.remove("templateId");
    }
    let parsed: MetadataInput = parse(&fields)?;
    let reads = ctx.reads();
    if let Some(Some(id)) = &brand_profile_id {
        if reads.get::<BrandProfile>(id.as_bytes())?.is_none() {
            return Err(ToolFailure::new(format!("There is no brand profile `{id}` (read_brand_profile shows the project's).")));
        }
    }
    if let Some(Some(id)) = &template_id {
        if reads.get::<ContentTemplate>(id.as_bytes())?.is_none() {
            return Err(ToolFailure::new(format!("There is no template `{id}` (read_templates lists them).")));
        }
    }
    let change = MetadataChange { title: parsed.title, platforms: parsed.platforms, brand_profile_id, template_id };
    if change == MetadataChange::default() {
        return Err(ToolFailure::new("Name at least one of `title`, `platforms`, `brandProfileId`, `templateId` to change."));
    }
    let kernel = ctx.writer()?;
    let Some(expected_base) = ctx.target_version else {
        return Err(ToolFailure::new("The call has no target revision to apply against; nothing was changed."));
    };
    // One proposal, accepted at once as the assistant's (so it is audited like any
    // other), under one hold of the write lock: the base is checked first, so the
    // accept that follows the proposal's commit cannot find it moved.
    let _guard = kernel.write_lock();
    let project = crate::project::load(kernel.store(), ctx.project_id)?;
    if project.revision != expected_base {
        return Err(crate::project::conflict(&project, expected_base).into());
    }
    let mut batch = Batch::new();
    let new = NewProposal {
        project_id: project.id.clone(),
        kind: ProposalKind::Metadata,
        target: Target::Metadata,
        summary: parsed.summary,
        payload: Payload::Metadata { change },
        origin: ctx.origin(),
    };
    let proposal = crate::proposals::stage_create(kernel, &mut batch, new)?;
    kernel.store().apply(batch, Durability::Durable).map_err(crate::error::ApiError::from)?;
    let mut batch = Batch::new();
    let request = Accept {
        proposal_id: proposal.id.clone(),
        hunks: None,
        expected_base,
        choices: None,
        confirm_final: false,
        actor: Actor::Model { tool_use_id: ctx.tool_use_id.to_owned(), approval: ctx.approval.map(str::to_owned) },
    };
    let accepted = apply::stage_accept(kernel, &mut batch, &request)
        .map_err(|e| ToolFailure::new(format!("{:?}: {} (proposal {} was recorded and waits for the person's review).", e.code, e.message, proposal.id)))?;
    kernel.store().apply(batch, Durability::Durable).map_err(crate::error::ApiError::from)?;
    let project = crate::project::load(kernel.store(), ctx.project_id)?;
    let mut out = json!({
        "proposalId": proposal.id, "status": accepted.proposal.status, "revision": project.revision,
        "title": project.title, "platforms": project.platforms, "brandProfileId": project.brand_profile_id, "templateId": project.template_id,
        "note": "Changed with the person's approval and recorded as an accepted metadata proposal.",
    });
    if let Some(version) = &accepted.version {
        out["version"] = json!(version.number);
    }
    Ok(out)
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CommentInput {
    body: String,
    #[serde(default)]
    quote: Option<String>,
}

fn create_project_comment(ctx: &ToolContext<'_>, input: &Value) -> Result<Value, ToolFailure> {
    let input: CommentInput = parse(input)?;
    let kernel = ctx.writer()?;
    let project = ctx.reads().project(ctx.project_id)?;
    let anchor = match input.quote.as_deref().filter(|q| !q.is_empty()) {
        None => None,
        Some(quote) => {
            let found: Vec<usize> = project.source.match_indices(quote).map(|(at, _)| at).collect();
            match found.as_slice() {
                [at] => Some(Anchor { from: crate::pipeline::utf16_offset(&project.source, *at), to: crate::pipeline::utf16_offset(&project.source, at + quote.len()) }),
                [] => return Err(ToolFailure::new("The quote is not in the working copy; quote its text exactly, or leave `quote` out for a comment on the whole piece.")),
                many => return Err(ToolFailure::new(format!("The quote occurs {} times; quote more of the surrounding text so it occurs once.", many.len()))),
            }
        }
    };
    let comment = crate::project::comments::add(kernel, &project.id, &input.body, anchor)?;
    Ok(json!({"commentId": comment.id, "anchored": comment.anchor.is_some(), "quote": comment.quote}))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ResolveInput {
    proposal_id: String,
    item_id: String,
    #[serde(default)]
    note: Option<String>,
}

fn resolve_checklist_item(ctx: &ToolContext<'_>, input: &Value) -> Result<Value, ToolFailure> {
    let input: ResolveInput = parse(input)?;
    let kernel = ctx.writer()?;
    let proposal = ctx.reads().proposal(&input.proposal_id)?;
    if proposal.project_id != ctx.project_id {
        return Err(ToolFailure::new(format!("Checklist {} belongs to another project.", proposal.id)));
    }
    let (proposal, item) = crate::proposals::resolve_checklist_item(kernel, &input.proposal_id, &input.item_id, input.note.as_deref())?;
    let (open, open_blocking) = match &proposal.payload {
        Payload::Checklist { items } => (items.iter().filter(|i| !i.resolved).count(), items.iter().filter(|i| !i.resolved && i.blocking).count()),
        _ => (0, 0),
    };
    Ok(json!({"proposalId": proposal.id, "itemId": item.id, "resolved": item.resolved, "note": item.note, "open": open, "openBlocking": open_blocking}))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CheckpointInput {
    label: String,
}

fn create_checkpoint(ctx: &ToolContext<'_>, input: &Value) -> Result<Value, ToolFailure> {
    let input: CheckpointInput = parse(input)?;
    let kernel = ctx.writer()?;
    let checkpoint = checkpoints::create(kernel, ctx.owner.id(), ctx.project_id, &input.label, CheckpointReason::Assistant, ctx.sequence)?;
    Ok(json!({
        "checkpointId": checkpoint.id, "label": checkpoint.label, "head": checkpoint.head, "revision": checkpoint.revision,
        "drafts": checkpoint.drafts.len(), "unsavedChangesKept": checkpoint.working_source.is_some(),
    }))
}

/// A write tool: asks, runs alone and at most once, finishes what it began.
fn write_tool(name: &str, description: &str, prompt: &str, input: Value, base_version: BaseVersionPolicy, summary: &str) -> ToolDefinition {
    ToolDefinition {
        name: name.to_owned(),
        version: 1,
        description: description.to_owned(),
        prompt: prompt.to_owned(),
        input_schema: input,
        output_schema: json!({"type": "object"}),
        capability: Capability::Write,
        risk: RiskLevel::Medium,
        permission: PermissionPolicy::Ask,
        read_only: false,
        destructive: false,
        concurrency: Concurrency::Exclusive,
        interrupt: InterruptBehavior::Block,
        idempotency_key_fields: Vec::new(),
        base_version,
        max_result_chars: 2_000,
        result_summary: summary.to_owned(),
    }
}

pub(super) fn tools() -> Vec<(ToolDefinition, ToolHandler)> {
    vec![
        (
            write_tool(
                "apply_proposal",
                "Apply a proposal (all or some of its hunks, or the chosen candidates) after the person approves exactly that change.",
                "Apply an open proposal once the person approves exactly this change: all hunks or those in `hunks`; for candidates the \
`choices` (one title, or tags). Not for ready, published or publishing drafts.",
                schema(
                    json!({
                        "proposalId": {"type": "string", "minLength": 1},
                        "hunks": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                        "choices": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                    }),
                    &["proposalId"],
                ),
                BaseVersionPolicy::ProposalTarget,
                "the proposal's new status and the version or draft revision made",
            ),
            Arc::new(apply_proposal),
        ),
        (
            write_tool(
                "update_project_metadata",
                "Change the project's title, platforms, brand profile or template (recorded as an accepted metadata proposal), after the person approves.",
                "Change the project's title, platforms, brandProfileId or templateId (null clears) once the person approves; give only what \
changes and a `summary` of why.",
                schema(
                    json!({
                        "summary": {"type": "string", "minLength": 1},
                        "title": {"type": "string", "minLength": 1, "maxLength": 200},
                        "platforms": {"type": "array", "items": platform_schema(), "maxItems": 5},
                        "brandProfileId": {"type": ["string", "null"]},
                        "templateId": {"type": ["string", "null"]},
                    }),
                    &["summary"],
                ),
                BaseVersionPolicy::ProjectRevision,
                "the project's settings after the change",
            ),
            Arc::new(update_project_metadata),
        ),
        (
            write_tool(
                "create_project_comment",
                "Add a comment to the project, optionally anchored to a quoted passage of the source, after the person approves.",
                "Add a comment once the person approves; `quote` anchors it to a passage of the working copy that occurs once.",
                schema(json!({"body": {"type": "string", "minLength": 1}, "quote": {"type": "string"}}), &["body"]),
                BaseVersionPolicy::ProjectRevision,
                "the new comment's id and anchor",
            ),
            Arc::new(create_project_comment),
        ),
        (
            write_tool(
                "resolve_checklist_item",
                "Mark an item of a publish-readiness checklist done, with an optional note, after the person approves.",
                "Mark a readiness checklist item done (with a `note` of what was done) once the person approves.",
                schema(json!({"proposalId": {"type": "string"}, "itemId": {"type": "string"}, "note": {"type": "string"}}), &["proposalId", "itemId"]),
                BaseVersionPolicy::None,
                "the item and how many items stay open",
            ),
            Arc::new(resolve_checklist_item),
        ),
        (
            write_tool(
                "create_checkpoint",
                "Keep a checkpoint of the project (versions, working copy, drafts) the person can return to, after they approve.",
                "Keep a checkpoint of the project (versions, working copy, drafts) before a larger change, once the person approves.",
                schema(json!({"label": {"type": "string", "minLength": 1, "maxLength": 200}}), &["label"]),
                BaseVersionPolicy::None,
                "the checkpoint's id",
            ),
            Arc::new(create_checkpoint),
        ),
    ]
}
