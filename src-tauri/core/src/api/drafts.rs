//! Saved platform drafts: one per (project, platform), compiled from the working copy
//! or edited by hand on top of a compile.
//!
//! A recompile never overwrites a hand-edited draft on its own: it answers with the
//! fresh compile and the difference, and writes only when called again with
//! `replaceRevision` equal to the draft's revision (the person chose "use the new
//! compile"). A `publishing` draft refuses every change but a status change.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::project::drafts::{self as domain, draft_profile, profiles, CompiledDraft};
use super::projects::{load as load_project, ProjectRef};
use super::{ApiError, Engine, ErrorCode};
use crate::diff::{diff_texts, TextDiffResult};
use crate::model::{ActivityKind, DraftStatus, Platform, PlatformDraft};
use crate::pipeline::{self, DraftContent, Finding};
use crate::store::{Batch, Durability};

const MAX_DRAFT_CHARS: usize = 400_000;

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PlatformDraftRef {
    pub project_id: String,
    pub platform: Platform,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PlatformDraftListResult {
    pub project_id: String,
    /// The project's working-copy revision now; a draft whose `sourceRevision` is older
    /// was compiled from an earlier text.
    pub source_revision: u64,
    pub drafts: Vec<PlatformDraft>,
}

fn load_draft(engine: &Engine, project_id: &str, platform: Platform) -> Result<Option<PlatformDraft>, ApiError> {
    domain::load(engine.store(), project_id, platform)
}

fn require_draft(engine: &Engine, project_id: &str, platform: Platform) -> Result<PlatformDraft, ApiError> {
    load_draft(engine, project_id, platform)?.ok_or_else(|| {
        ApiError::not_found("platform draft", format!("{project_id}/{}", platform.as_str()))
            .hint("compile_first", "Save a draft for this platform first (Drafts panel → Save draft, or `inkstone-cli draft save`).")
    })
}

fn draft_conflict(draft: &PlatformDraft, base_revision: u32) -> ApiError {
    ApiError::new(
        ErrorCode::Conflict,
        format!("The {} draft changed elsewhere (revision {} is newer than {base_revision}).", draft.platform.as_str(), draft.revision),
    )
    .hint("reload", "Reload the draft, look at the difference, and make your change again.")
    .details(serde_json::json!({ "revision": draft.revision, "baseRevision": base_revision }))
}

fn read_only(draft: &PlatformDraft) -> ApiError {
    ApiError::new(ErrorCode::ReadOnly, format!("The {} draft is being published, so it is read-only.", draft.platform.as_str()))
        .hint("set_status", "Set its status back to ready (or draft) to change it.")
        .details(serde_json::json!({ "status": draft.status }))
}

pub(super) fn list(engine: &Engine, params: ProjectRef) -> Result<PlatformDraftListResult, ApiError> {
    let project = load_project(engine, &params.project_id)?;
    let drafts = domain::list(engine.store(), &project.id)?;
    Ok(PlatformDraftListResult { project_id: project.id, source_revision: project.revision, drafts })
}

pub(super) fn get(engine: &Engine, params: PlatformDraftRef) -> Result<PlatformDraft, ApiError> {
    load_project(engine, &params.project_id)?;
    require_draft(engine, &params.project_id, params.platform)
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PlatformDraftSaveParams {
    pub project_id: String,
    pub platform: Platform,
    /// Replace a hand-edited draft with the fresh compile; must equal its revision.
    #[serde(default)]
    #[ts(optional)]
    pub replace_revision: Option<u32>,
    /// Topic tags for the compile; suggested from the text when absent.
    #[serde(default)]
    #[ts(optional)]
    pub tags: Option<Vec<String>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum DraftSaveOutcome {
    /// The first draft for this platform was saved.
    Created,
    /// The saved draft now holds the fresh compile.
    Updated,
    /// The saved draft already equals the fresh compile of the same source.
    Unchanged,
    /// Nothing was written: the saved draft was edited by hand. `diff` shows what the
    /// compile would change; save again with `replaceRevision` to take it.
    NeedsChoice,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PlatformDraftSaveResult {
    pub outcome: DraftSaveOutcome,
    /// The saved draft after the call.
    pub draft: PlatformDraft,
    /// The fresh compile and its findings.
    pub compiled: CompiledDraft,
    /// Saved draft → fresh compile, when the outcome is `needsChoice`.
    #[ts(optional)]
    pub diff: Option<TextDiffResult>,
}

/// Compiles the working copy for one platform and saves it as that platform's draft,
/// unless the saved draft carries hand edits (then: the difference, and nothing saved).
pub(super) fn save(engine: &Engine, params: PlatformDraftSaveParams) -> Result<PlatformDraftSaveResult, ApiError> {
    let _guard = engine.write_lock();
    let project = load_project(engine, &params.project_id)?;
    let result = domain::compile(engine, &project, Some(vec![params.platform]), params.tags)?;
    let compiled = result.drafts.into_iter().next().ok_or_else(|| ApiError::internal("the compile returned no draft"))?;
    let existing = load_draft(engine, &project.id, params.platform)?;
    let author = engine.author()?;
    let fresh = |revision: u32, status: DraftStatus| PlatformDraft {
        project_id: project.id.clone(),
        platform: params.platform,
        revision,
        status,
        profile_id: compiled.draft.profile_id.clone(),
        source_revision: project.revision,
        source_version: project.head,
        title: compiled.draft.title.clone(),
        content: compiled.draft.content.clone(),
        hand_edited: false,
        updated_at: engine.now(),
        updated_by: author.clone(),
    };
    let (outcome, draft) = match existing {
        None => (DraftSaveOutcome::Created, fresh(1, DraftStatus::Draft)),
        Some(saved) => {
            if saved.status == DraftStatus::Publishing {
                return Err(read_only(&saved));
            }
            if let Some(base) = params.replace_revision {
                if base != saved.revision {
                    return Err(draft_conflict(&saved, base));
                }
            }
            if saved.hand_edited && params.replace_revision.is_none() {
                let diff = diff_texts(&pipeline::draft_text(&saved.title, &saved.content), &pipeline::draft_text(&compiled.draft.title, &compiled.draft.content));
                return Ok(PlatformDraftSaveResult { outcome: DraftSaveOutcome::NeedsChoice, draft: saved, compiled, diff: Some(diff) });
            }
            let same = !saved.hand_edited
                && saved.title == compiled.draft.title
                && saved.content == compiled.draft.content
                && saved.profile_id == compiled.draft.profile_id
                && saved.source_revision == project.revision;
            if same {
                return Ok(PlatformDraftSaveResult { outcome: DraftSaveOutcome::Unchanged, draft: saved, compiled, diff: None });
            }
            (DraftSaveOutcome::Updated, fresh(saved.revision + 1, saved.status))
        }
    };
    let activity = engine.activity(
        Some(&project.id),
        ActivityKind::DraftSaved,
        format!("Saved the {} draft of \"{}\" (revision {})", draft.platform.as_str(), project.title, draft.revision),
    )?;
    let mut batch = Batch::new();
    batch.put(&draft)?.put(&activity)?;
    engine.store().apply(batch, Durability::Durable)?;
    Ok(PlatformDraftSaveResult { outcome, draft, compiled, diff: None })
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PlatformDraftEditParams {
    pub project_id: String,
    pub platform: Platform,
    pub base_revision: u32,
    #[serde(default)]
    #[ts(optional)]
    pub title: Option<String>,
    /// The whole edited content, of the platform's kind (`html` for WeChat, `markdown`
    /// for Zhihu, `thread` for X, `card` for Douyin and Xiaohongshu). Post lengths are
    /// recomputed, whatever is sent.
    #[serde(default)]
    #[ts(optional)]
    pub content: Option<DraftContent>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PlatformDraftEditResult {
    pub draft: PlatformDraft,
    /// The platform limits the edited draft breaks.
    pub findings: Vec<Finding>,
}

fn content_chars(content: &DraftContent) -> usize {
    match content {
        DraftContent::Html { html, digest } => html.chars().count() + digest.chars().count(),
        DraftContent::Markdown { markdown } => markdown.chars().count(),
        DraftContent::Thread { posts } => posts.iter().map(|p| p.text.chars().count()).sum(),
        DraftContent::Card { body, tags } => body.chars().count() + tags.iter().map(|t| t.chars().count()).sum::<usize>(),
    }
}

/// A hand edit of a saved draft.
pub(super) fn edit(engine: &Engine, params: PlatformDraftEditParams) -> Result<PlatformDraftEditResult, ApiError> {
    let _guard = engine.write_lock();
    load_project(engine, &params.project_id)?;
    let mut draft = require_draft(engine, &params.project_id, params.platform)?;
    if draft.status == DraftStatus::Publishing {
        return Err(read_only(&draft));
    }
    if params.base_revision != draft.revision {
        return Err(draft_conflict(&draft, params.base_revision));
    }
    let set = profiles(engine)?;
    let profile = draft_profile(&set, params.platform)?;
    let before = draft.clone();
    if let Some(title) = params.title {
        if title.chars().count() > 1_000 || title.contains(['\n', '\r']) {
            return Err(ApiError::validation("title", "A draft title is one line of at most 1,000 characters."));
        }
        draft.title = title;
    }
    if let Some(content) = params.content {
        if !pipeline::content_fits_platform(params.platform, &content) {
            return Err(ApiError::validation("content.type", format!("{} drafts hold another kind of content.", params.platform.as_str()))
                .hint("content_kind", "Send html for wechat, markdown for zhihu, thread for x, card for douyin and xiaohongshu."));
        }
        if content_chars(&content) > MAX_DRAFT_CHARS {
            return Err(ApiError::validation("content", format!("A draft holds at most {MAX_DRAFT_CHARS} characters.")));
        }
        draft.content = pipeline::normalize_content(content);
    }
    let findings = pipeline::check_draft(profile, &draft.title, &draft.content);
    if draft.title == before.title && draft.content == before.content {
        return Ok(PlatformDraftEditResult { draft, findings });
    }
    draft.hand_edited = true;
    draft.revision += 1;
    draft.updated_at = engine.now();
    draft.updated_by = engine.author()?;
    // Typing in a draft autosaves like the source does: group-committed.
    let mut batch = Batch::new();
    batch.put(&draft)?;
    engine.store().apply(batch, Durability::Grouped)?;
    Ok(PlatformDraftEditResult { draft, findings })
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PlatformDraftSetStatusParams {
    pub project_id: String,
    pub platform: Platform,
    pub status: DraftStatus,
    #[serde(default)]
    #[ts(optional)]
    pub base_revision: Option<u32>,
}

fn status_name(status: DraftStatus) -> &'static str {
    match status {
        DraftStatus::Draft => "draft",
        DraftStatus::Ready => "ready",
        DraftStatus::Publishing => "publishing",
        DraftStatus::Published => "published",
    }
}

pub(super) fn set_status(engine: &Engine, params: PlatformDraftSetStatusParams) -> Result<PlatformDraft, ApiError> {
    let _guard = engine.write_lock();
    let project = load_project(engine, &params.project_id)?;
    let mut draft = require_draft(engine, &params.project_id, params.platform)?;
    if let Some(base) = params.base_revision {
        if base != draft.revision {
            return Err(draft_conflict(&draft, base));
        }
    }
    if draft.status == params.status {
        return Ok(draft);
    }
    let from = draft.status;
    draft.status = params.status;
    draft.revision += 1;
    draft.updated_at = engine.now();
    draft.updated_by = engine.author()?;
    let activity = engine.activity(
        Some(&project.id),
        ActivityKind::DraftStatusChanged,
        format!("Marked the {} draft of \"{}\" {} (was {})", draft.platform.as_str(), project.title, status_name(draft.status), status_name(from)),
    )?;
    let mut batch = Batch::new();
    batch.put(&draft)?.put(&activity)?;
    engine.store().apply(batch, Durability::Durable)?;
    Ok(draft)
}
