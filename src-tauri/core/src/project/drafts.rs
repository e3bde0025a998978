//! Saved platform drafts (one per project and platform) and the compile of a
//! project's working copy that they are saved from.

use serde::{Deserialize, Serialize};

use crate::diff::{diff_texts, TextDiffResult};
use crate::error::{ApiError, ErrorCode};
use crate::kernel::Kernel;
use crate::model::{ActivityKind, BrandProfile, DraftContent, DraftStatus, MediaAsset, Platform, PlatformDraft, Project};
use crate::pipeline::{self, CompileInput, Draft, Finding};
use crate::profiles::{DraftProfile, ProfileError, ProfileSet};
use crate::quality::{self, CheckInput};
use crate::store::{keys, Batch, Store};

/// A data folder's profile override that does not load. (A function, not `From`: both
/// `ProfileError` and `ApiError` are other crates' types.)
fn profile_error(error: ProfileError) -> ApiError {
    ApiError::validation("profiles", error.to_string())
        .hint("fix_profile_override", "Fix or remove the file in the data folder's profiles/ folder; the built-in profiles apply without it.")
}

/// The platform profiles: the built-in ones with the data folder's overrides.
pub fn profiles(kernel: &Kernel) -> Result<ProfileSet, ApiError> {
    ProfileSet::load(&kernel.config().data_dir.join("profiles")).map_err(profile_error)
}

/// The draft profile of `platform`.
pub fn draft_profile(set: &ProfileSet, platform: Platform) -> Result<&DraftProfile, ApiError> {
    set.draft(platform).ok_or_else(|| ApiError::internal(format!("no draft profile for {platform:?}")))
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompiledDraft {
    pub draft: Draft,
    pub findings: Vec<Finding>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
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

/// The source-level findings of `project` as it is (title and source) for its
/// platforms and brand profile.
pub fn source_findings_of(kernel: &Kernel, project: &Project) -> Result<Vec<Finding>, ApiError> {
    let set = profiles(kernel)?;
    let brand = crate::project::brand(kernel.store(), project)?;
    Ok(source_findings_with(&set, brand.as_ref(), project))
}

/// [`source_findings_of`] with the profiles and the brand profile already loaded (a
/// caller that checks many texts loads them once).
pub fn source_findings_with(set: &ProfileSet, brand: Option<&BrandProfile>, project: &Project) -> Vec<Finding> {
    source_findings(set, project, brand, &target_platforms(project, None))
}

/// What a saved draft's own text breaks, as it stands: the platform's limits (and an
/// empty body) and the word checks (banned words, advertising law, growth promises,
/// personal data). A hand-edited or older draft is not the compile of the source, so
/// these, not the source's findings, are the ones it is published with. Spans would
/// point into the draft's text, not the source's, so none are given. One list per
/// draft of `drafts`, in their order.
pub fn own_findings(kernel: &Kernel, project: &Project, drafts: &[PlatformDraft]) -> Result<Vec<Vec<Finding>>, ApiError> {
    // The profiles and the brand once for every draft of the project.
    let set = profiles(kernel)?;
    let brand = crate::project::brand(kernel.store(), project)?;
    drafts
        .iter()
        .map(|draft| {
            let profile = draft_profile(&set, draft.platform)?;
            let html = matches!(draft.content, DraftContent::Html { .. });
            let mut findings = pipeline::check_draft(profile, &draft.title, &draft.content);
            findings.extend(quality::draft_findings(
                &pipeline::draft_patch_text(&draft.content),
                html,
                brand.as_ref(),
                set.risk_list("ad-law-zh@v2"),
                set.risk_list("growth-promise@v1"),
            ));
            for finding in &mut findings {
                finding.span = None;
            }
            Ok(findings)
        })
        .collect()
}

/// Compiles the working copy of `project` for `platforms` (the project's, or all),
/// with `tags` (suggested from the text and the brand profile when absent).
pub fn compile(kernel: &Kernel, project: &Project, platforms: Option<Vec<Platform>>, tags: Option<Vec<String>>) -> Result<PipelineCompileResult, ApiError> {
    let set = profiles(kernel)?;
    let brand = crate::project::brand(kernel.store(), project)?;
    let platforms = target_platforms(project, platforms);
    let (drafts, tags) = compile_drafts(kernel, &set, brand.as_ref(), project, &platforms, tags)?;
    let findings = source_findings(&set, project, brand.as_ref(), &platforms);
    Ok(PipelineCompileResult { project_id: project.id.clone(), revision: project.revision, drafts, tags, findings })
}

/// The drafts of [`compile`] alone (no source findings), with the profiles and the
/// brand profile already loaded, and the tags used.
pub fn compile_drafts(
    kernel: &Kernel,
    set: &ProfileSet,
    brand: Option<&BrandProfile>,
    project: &Project,
    platforms: &[Platform],
    tags: Option<Vec<String>>,
) -> Result<(Vec<CompiledDraft>, Vec<String>), ApiError> {
    let tags = match tags {
        Some(tags) => tags,
        None => crate::suggest::tags(&project.title, &project.source, brand.map(|b| b.default_tags.as_slice()).unwrap_or(&[]), 5),
    };
    let selected = platforms.iter().map(|p| draft_profile(set, *p)).collect::<Result<Vec<_>, _>>()?;
    let missing = missing_images(kernel, project)?;
    let drafts = pipeline::compile_all(&selected, CompileInput { title: &project.title, source: &project.source, tags: &tags })
        .into_iter()
        .map(|(draft, mut findings)| {
            findings.extend(missing.iter().map(|image| pipeline::missing_image_finding(draft.platform, image)));
            CompiledDraft { draft, findings }
        })
        .collect();
    Ok((drafts, tags))
}

/// The local images of the project's source that no draft can show: a `media/<file>`
/// with no asset of this project or no file on disk, or any other local path (a pasted
/// file's `images/a.png`, which only `media/` can hold).
fn missing_images(kernel: &Kernel, project: &Project) -> Result<Vec<String>, ApiError> {
    let local = pipeline::local_images(&project.source);
    if local.is_empty() {
        return Ok(local);
    }
    let media_dir = crate::store::media_dir(&kernel.config().data_dir);
    let assets: Vec<MediaAsset> = kernel.store().scan::<MediaAsset>(b"")?.into_iter().filter(|m| m.project_ids.contains(&project.id)).collect();
    Ok(local
        .into_iter()
        .filter(|url| {
            let Some(name) = url.strip_prefix("media/") else { return true };
            let name = percent_encoding::percent_decode_str(name).decode_utf8_lossy();
            !assets.iter().any(|asset| *asset.file_name == *name && media_dir.join(&asset.file_name).is_file())
        })
        .collect())
}

/// The saved draft of one platform, if any.
pub fn load(store: &Store, project_id: &str, platform: Platform) -> Result<Option<PlatformDraft>, ApiError> {
    Ok(store.get::<PlatformDraft>(&keys::platform_draft(project_id, platform))?)
}

/// Every saved draft of a project.
pub fn list(store: &Store, project_id: &str) -> Result<Vec<PlatformDraft>, ApiError> {
    Ok(store.scan::<PlatformDraft>(&keys::project_prefix(project_id))?)
}

/// Longest draft content, in characters.
pub const MAX_DRAFT_CHARS: usize = 400_000;

/// The saved draft of one platform. Errors: NOT_FOUND, with a hint to save one first.
pub fn require(store: &Store, project_id: &str, platform: Platform) -> Result<PlatformDraft, ApiError> {
    load(store, project_id, platform)?.ok_or_else(|| ApiError::not_found("platform draft", format!("{project_id}/{}", platform.as_str())).action("compile_first", &[]))
}

/// The CONFLICT of a draft write based on a stale revision.
pub fn conflict(draft: &PlatformDraft, base_revision: u32) -> ApiError {
    ApiError::new(ErrorCode::Conflict, format!("The {} draft changed elsewhere (revision {} is newer than {base_revision}).", draft.platform.as_str(), draft.revision))
        .problem("draft.changed", &[("current", &draft.revision.to_string()), ("base", &base_revision.to_string())])
        .hint("reload", "Reload the draft, look at the difference, and make your change again.")
        .details(serde_json::json!({ "revision": draft.revision, "baseRevision": base_revision }))
}

/// READ_ONLY: a `publishing` draft refuses every change but a status change.
pub fn read_only(draft: &PlatformDraft) -> ApiError {
    ApiError::new(ErrorCode::ReadOnly, format!("The {} draft is being published, so it is read-only.", draft.platform.as_str()))
        .hint("set_status", "Set its status back to ready (or draft) to change it.")
        .details(serde_json::json!({ "status": draft.status }))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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

/// What [`stage_save`] decided.
#[derive(Debug, Clone)]
pub struct Saved {
    pub outcome: DraftSaveOutcome,
    /// The saved draft after the call (the new one when staged, else the old one).
    pub draft: PlatformDraft,
    /// Saved draft → fresh compile, when the outcome is `NeedsChoice`.
    pub diff: Option<TextDiffResult>,
}

/// Saves `compiled` (a compile of `project`'s working copy) as its platform's draft,
/// adding the draft and the activity entry to `batch`, unless the saved draft carries
/// hand edits: then nothing is staged and the outcome is `NeedsChoice` with the
/// difference, until `replace_revision` equals the saved draft's revision.
///
/// Errors: READ_ONLY for a publishing draft; CONFLICT for a stale `replace_revision`.
pub fn stage_save(kernel: &Kernel, batch: &mut Batch, project: &Project, compiled: &CompiledDraft, replace_revision: Option<u32>) -> Result<Saved, ApiError> {
    let platform = compiled.draft.platform;
    let existing = load(kernel.store(), &project.id, platform)?;
    let author = kernel.author()?;
    let fresh = |revision: u32, status: DraftStatus| PlatformDraft {
        project_id: project.id.clone(),
        platform,
        revision,
        status,
        profile_id: compiled.draft.profile_id.clone(),
        source_revision: project.revision,
        source_version: project.head,
        title: compiled.draft.title.clone(),
        content: compiled.draft.content.clone(),
        hand_edited: false,
        updated_at: kernel.now(),
        updated_by: author.clone(),
    };
    let (outcome, draft) = match existing {
        None => (DraftSaveOutcome::Created, fresh(1, DraftStatus::Draft)),
        Some(saved) => {
            if saved.status == DraftStatus::Publishing {
                return Err(read_only(&saved));
            }
            if let Some(base) = replace_revision {
                if base != saved.revision {
                    return Err(conflict(&saved, base));
                }
            }
            if saved.hand_edited && replace_revision.is_none() {
                let diff = diff_texts(&pipeline::draft_text(&saved.title, &saved.content), &pipeline::draft_text(&compiled.draft.title, &compiled.draft.content));
                return Ok(Saved { outcome: DraftSaveOutcome::NeedsChoice, draft: saved, diff: Some(diff) });
            }
            let same = !saved.hand_edited
                && saved.title == compiled.draft.title
                && saved.content == compiled.draft.content
                && saved.profile_id == compiled.draft.profile_id
                && saved.source_revision == project.revision;
            if same {
                return Ok(Saved { outcome: DraftSaveOutcome::Unchanged, draft: saved, diff: None });
            }
            (DraftSaveOutcome::Updated, fresh(saved.revision + 1, saved.status))
        }
    };
    let activity = kernel.activity(
        Some(&project.id),
        ActivityKind::DraftSaved,
        format!("Saved the {} draft of \"{}\" (revision {})", draft.platform.as_str(), project.title, draft.revision),
    )?;
    batch.put(&draft)?.put(&activity)?;
    Ok(Saved { outcome, draft, diff: None })
}

fn content_chars(content: &DraftContent) -> usize {
    match content {
        DraftContent::Html { html, digest } => html.chars().count() + digest.chars().count(),
        DraftContent::Markdown { markdown } => markdown.chars().count(),
        DraftContent::Thread { posts } => posts.iter().map(|p| p.text.chars().count()).sum(),
        DraftContent::Card { body, tags } => body.chars().count() + tags.iter().map(|t| t.chars().count()).sum::<usize>(),
    }
}

/// A hand edit of a saved draft, based on `base_revision`: the new title and content
/// are checked, post lengths recomputed, and when anything changed the draft (marked
/// hand-edited, next revision) is added to `batch`. What the edited draft breaks is
/// [`own_findings`]'s to say.
///
/// Errors: READ_ONLY for a publishing draft; CONFLICT for a stale base; VALIDATION for
/// a title over one line or 1,000 characters, content of another platform's kind, or
/// content over [`MAX_DRAFT_CHARS`].
pub fn stage_edit(kernel: &Kernel, batch: &mut Batch, draft: &mut PlatformDraft, base_revision: u32, title: Option<String>, content: Option<DraftContent>) -> Result<(), ApiError> {
    if draft.status == DraftStatus::Publishing {
        return Err(read_only(draft));
    }
    if base_revision != draft.revision {
        return Err(conflict(draft, base_revision));
    }
    let before = draft.clone();
    if let Some(title) = title {
        if title.chars().count() > 1_000 || title.contains(['\n', '\r']) {
            return Err(ApiError::validation("title", "A draft title is one line of at most 1,000 characters."));
        }
        draft.title = title;
    }
    if let Some(content) = content {
        if !pipeline::content_fits_platform(draft.platform, &content) {
            return Err(ApiError::validation("content.type", format!("{} drafts hold another kind of content.", draft.platform.as_str()))
                .hint("content_kind", "Send html for wechat, markdown for zhihu, thread for x, card for douyin and xiaohongshu."));
        }
        if content_chars(&content) > MAX_DRAFT_CHARS {
            return Err(ApiError::validation("content", format!("A draft holds at most {MAX_DRAFT_CHARS} characters.")));
        }
        draft.content = pipeline::normalize_content(content);
    }
    if draft.title == before.title && draft.content == before.content {
        return Ok(());
    }
    draft.hand_edited = true;
    draft.revision += 1;
    draft.updated_at = kernel.now();
    draft.updated_by = kernel.author()?;
    batch.put(&*draft)?;
    Ok(())
}

fn status_name(status: DraftStatus) -> &'static str {
    match status {
        DraftStatus::Draft => "draft",
        DraftStatus::Ready => "ready",
        DraftStatus::Publishing => "publishing",
        DraftStatus::Published => "published",
    }
}

/// Sets a draft's status (the person's call), adding the draft (next revision) and the
/// activity entry to `batch`. Returns whether anything changed. Errors: CONFLICT for a
/// stale `base_revision`.
pub fn stage_set_status(
    kernel: &Kernel,
    batch: &mut Batch,
    project: &Project,
    draft: &mut PlatformDraft,
    status: DraftStatus,
    base_revision: Option<u32>,
) -> Result<bool, ApiError> {
    if let Some(base) = base_revision {
        if base != draft.revision {
            return Err(conflict(draft, base));
        }
    }
    if draft.status == status {
        return Ok(false);
    }
    let from = draft.status;
    draft.status = status;
    draft.revision += 1;
    draft.updated_at = kernel.now();
    draft.updated_by = kernel.author()?;
    let activity = kernel.activity(
        Some(&project.id),
        ActivityKind::DraftStatusChanged,
        format!("Marked the {} draft of \"{}\" {} (was {})", draft.platform.as_str(), project.title, status_name(draft.status), status_name(from)),
    )?;
    batch.put(&*draft)?.put(&activity)?;
    Ok(true)
}

/// Puts `saved` (a draft as it stood earlier, e.g. in a checkpoint) back as the next
/// revision of the platform's draft (`current`, or a new draft when there is none now)
/// and returns it. The title, content, hand-edit flag, profile and source it was
/// compiled from are `saved`'s; the status stays the current one, because it records
/// where publishing stands, not what the draft says. The caller refuses a publishing
/// draft (this does not check) and adds the activity entry.
pub fn stage_restore(kernel: &Kernel, batch: &mut Batch, current: Option<&PlatformDraft>, saved: &PlatformDraft) -> Result<PlatformDraft, ApiError> {
    let mut draft = saved.clone();
    draft.revision = current.map_or(saved.revision, |c| c.revision) + 1;
    draft.status = current.map_or(DraftStatus::Draft, |c| c.status);
    draft.updated_at = kernel.now();
    draft.updated_by = kernel.author()?;
    batch.put(&draft)?;
    Ok(draft)
}
