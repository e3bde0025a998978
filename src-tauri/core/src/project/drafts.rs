//! Saved platform drafts (one per project and platform) and the compile of a
//! project's working copy that they are saved from.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::error::ApiError;
use crate::kernel::Kernel;
use crate::model::{BrandProfile, Platform, PlatformDraft, Project};
use crate::pipeline::{self, CompileInput, Draft, Finding};
use crate::profiles::{DraftProfile, ProfileError, ProfileSet};
use crate::quality::{self, CheckInput};
use crate::store::{keys, Store};

impl From<ProfileError> for ApiError {
    fn from(error: ProfileError) -> Self {
        ApiError::validation("profiles", error.to_string()).hint("fix_profile_override", "Fix or remove the file in the data folder's profiles/ folder; the built-in profiles apply without it.")
    }
}

/// The platform profiles: the built-in ones with the data folder's overrides.
pub fn profiles(kernel: &Kernel) -> Result<ProfileSet, ApiError> {
    Ok(ProfileSet::load(&kernel.config().data_dir.join("profiles"))?)
}

/// The draft profile of `platform`.
pub fn draft_profile(set: &ProfileSet, platform: Platform) -> Result<&DraftProfile, ApiError> {
    set.draft(platform).ok_or_else(|| ApiError::internal(format!("no draft profile for {platform:?}")))
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CompiledDraft {
    pub draft: Draft,
    pub findings: Vec<Finding>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PipelineCompileResult {
    pub project_id: String,
    /// The working-copy revision compiled.
    pub revision: u64,
    pub drafts: Vec<CompiledDraft>,
    pub tags: Vec<String>,
    /// Source-level findings (banned words, advertising law, personal data, ...).
    pub findings: Vec<Finding>,
}

fn target_platforms(project: &Project, requested: Option<Vec<Platform>>) -> Vec<Platform> {
    let mut platforms = requested.unwrap_or_else(|| if project.platforms.is_empty() { Platform::ALL.to_vec() } else { project.platforms.clone() });
    platforms.sort();
    platforms.dedup();
    platforms
}

fn source_findings(set: &ProfileSet, project: &Project, brand: Option<&BrandProfile>, platforms: &[Platform]) -> Vec<Finding> {
    quality::check(&CheckInput {
        title: &project.title,
        source: &project.source,
        brand,
        platforms,
        ad_law: set.risk_list("ad-law-zh@v2"),
        growth_promise: set.risk_list("growth-promise@v1"),
    })
}

/// Compiles the working copy of `project` for `platforms` (the project's, or all),
/// with `tags` (suggested from the text and the brand profile when absent).
pub fn compile(kernel: &Kernel, project: &Project, platforms: Option<Vec<Platform>>, tags: Option<Vec<String>>) -> Result<PipelineCompileResult, ApiError> {
    let set = profiles(kernel)?;
    let brand = crate::project::brand(kernel.store(), project)?;
    let platforms = target_platforms(project, platforms);
    let tags = match tags {
        Some(tags) => tags,
        None => crate::suggest::tags(&project.title, &project.source, brand.as_ref().map(|b| b.default_tags.as_slice()).unwrap_or(&[]), 5),
    };
    let selected = platforms.iter().map(|p| draft_profile(&set, *p)).collect::<Result<Vec<_>, _>>()?;
    let drafts = pipeline::compile_all(&selected, CompileInput { title: &project.title, source: &project.source, tags: &tags })
        .into_iter()
        .map(|(draft, findings)| CompiledDraft { draft, findings })
        .collect();
    let findings = source_findings(&set, project, brand.as_ref(), &platforms);
    Ok(PipelineCompileResult { project_id: project.id.clone(), revision: project.revision, drafts, tags, findings })
}

/// The saved draft of one platform, if any.
pub fn load(store: &Store, project_id: &str, platform: Platform) -> Result<Option<PlatformDraft>, ApiError> {
    Ok(store.get::<PlatformDraft>(&keys::platform_draft(project_id, platform))?)
}

/// Every saved draft of a project.
pub fn list(store: &Store, project_id: &str) -> Result<Vec<PlatformDraft>, ApiError> {
    Ok(store.scan::<PlatformDraft>(&keys::project_prefix(project_id))?)
}
