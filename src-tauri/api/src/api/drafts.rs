//! Saved platform drafts: one per (project, platform), compiled from the working copy
//! or edited by hand on top of a compile.
//!
//! A recompile never overwrites a hand-edited draft on its own: it answers with the
//! fresh compile and the difference, and writes only when called again with
//! `replaceRevision` equal to the draft's revision (the person chose "use the new
//! compile"). A `publishing` draft refuses every change but a status change.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::dto::{DraftContent, Platform};
use super::dto::{Finding, TextDiffResult};
use super::projects::{load as load_project, ProjectRef};
use super::{ApiError, Engine};
use crate::model::{DraftStatus, PlatformDraft};
use crate::project::drafts as domain;
use crate::store::{Batch, Durability};

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
    pub drafts: Vec<super::dto::PlatformDraft>,
    /// Each saved draft's own findings: what its text breaks as it stands (limits, an
    /// empty body, banned and restricted words), in the order of `drafts`.
    pub findings: Vec<SavedDraftFindings>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SavedDraftFindings {
    pub platform: Platform,
    pub findings: Vec<Finding>,
}

fn require_draft(engine: &Engine, project_id: &str, platform: crate::model::Platform) -> Result<PlatformDraft, ApiError> {
    domain::require(engine.store(), project_id, platform)
}

pub(super) fn list(engine: &Engine, params: ProjectRef) -> Result<PlatformDraftListResult, ApiError> {
    let project = load_project(engine, &params.project_id)?;
    let drafts = domain::list(engine.store(), &project.id)?;
    let findings = drafts
        .iter()
        .zip(domain::own_findings(engine, &project, &drafts)?)
        .map(|(draft, findings)| SavedDraftFindings { platform: draft.platform.into(), findings: findings.into_iter().map(Into::into).collect() })
        .collect();
    Ok(PlatformDraftListResult { project_id: project.id, source_revision: project.revision, drafts: drafts.iter().map(Into::into).collect(), findings })
}

pub(super) fn get(engine: &Engine, params: PlatformDraftRef) -> Result<PlatformDraft, ApiError> {
    load_project(engine, &params.project_id)?;
    require_draft(engine, &params.project_id, params.platform.into())
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

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PlatformDraftSaveResult {
    pub outcome: super::dto::DraftSaveOutcome,
    /// The saved draft after the call.
    pub draft: super::dto::PlatformDraft,
    /// The fresh compile and its findings.
    pub compiled: super::dto::CompiledDraft,
    /// Saved draft → fresh compile, when the outcome is `needsChoice`.
    #[ts(optional)]
    pub diff: Option<TextDiffResult>,
}

/// Compiles the working copy for one platform and saves it as that platform's draft,
/// unless the saved draft carries hand edits (then: the difference, and nothing saved).
pub(super) fn save(engine: &Engine, params: PlatformDraftSaveParams) -> Result<PlatformDraftSaveResult, ApiError> {
    let _guard = engine.write_lock();
    let project = load_project(engine, &params.project_id)?;
    let result = domain::compile(engine, &project, Some(vec![params.platform.into()]), params.tags)?;
    let compiled = result.drafts.into_iter().next().ok_or_else(|| ApiError::internal("the compile returned no draft"))?;
    let mut batch = Batch::new();
    let saved = domain::stage_save(engine, &mut batch, &project, &compiled, params.replace_revision)?;
    engine.store().apply(batch, Durability::Durable)?;
    Ok(PlatformDraftSaveResult { outcome: (&saved.outcome).into(), draft: (&saved.draft).into(), compiled: (&compiled).into(), diff: saved.diff.map(Into::into) })
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
    pub draft: super::dto::PlatformDraft,
    /// What the edited draft breaks as it stands: the platform's limits, an empty body,
    /// banned and restricted words (see `platformDraft.list`).
    pub findings: Vec<Finding>,
}

/// A hand edit of a saved draft.
pub(super) fn edit(engine: &Engine, params: PlatformDraftEditParams) -> Result<PlatformDraftEditResult, ApiError> {
    let _guard = engine.write_lock();
    let project = load_project(engine, &params.project_id)?;
    let mut draft = require_draft(engine, &params.project_id, params.platform.into())?;
    let mut batch = Batch::new();
    domain::stage_edit(engine, &mut batch, &mut draft, params.base_revision, params.title, params.content.map(Into::into))?;
    // Typing in a draft autosaves like the source does: group-committed.
    engine.store().apply(batch, Durability::Grouped)?;
    let findings = domain::own_findings(engine, &project, std::slice::from_ref(&draft))?.pop().unwrap_or_default();
    Ok(PlatformDraftEditResult { draft: (&draft).into(), findings: findings.into_iter().map(Into::into).collect() })
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PlatformDraftSetStatusParams {
    pub project_id: String,
    pub platform: Platform,
    pub status: super::dto::DraftStatus,
    #[serde(default)]
    #[ts(optional)]
    pub base_revision: Option<u32>,
    /// With `status: published`: record the publication in the same write (its details
    /// over the defaults: the version the draft was compiled from, its title, now).
    #[serde(default)]
    #[ts(optional)]
    pub publication: Option<super::PublicationDetails>,
}

pub(super) fn set_status(engine: &Engine, params: PlatformDraftSetStatusParams) -> Result<PlatformDraft, ApiError> {
    let _guard = engine.write_lock();
    let project = load_project(engine, &params.project_id)?;
    let mut draft = require_draft(engine, &params.project_id, params.platform.into())?;
    let status = DraftStatus::from(params.status);
    let mut batch = Batch::new();
    domain::stage_set_status(engine, &mut batch, &project, &mut draft, status, params.base_revision)?;
    if let Some(details) = params.publication {
        if status != DraftStatus::Published {
            return Err(ApiError::validation("publication", "A publication is recorded only when the draft is set to published.").problem("perf.publication_needs_published", &[]));
        }
        let default_version = Some(draft.source_version).filter(|n| *n > 0);
        let details = super::PublicationDetails { title: details.title.or_else(|| Some(draft.title.clone()).filter(|t| !t.trim().is_empty())), ..details };
        crate::performance::publications::stage_create(engine, &mut batch, &project, draft.platform, default_version, details.into())?;
    }
    engine.store().apply(batch, Durability::Durable)?;
    Ok(draft)
}
