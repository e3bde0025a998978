//! Reading proposals and what is computed about them now: the text their base is
//! about, and whether that base still holds (staleness is computed, never stored).

use crate::error::ApiError;
use crate::model::{Comment, DraftContent, PlatformDraft, Post, Project};
use crate::store::{keys, sha256_ref, Store};

use super::*;

/// The proposal `id`. Errors: NOT_FOUND.
pub fn load(store: &Store, id: &str) -> Result<Proposal, ApiError> {
    let missing = || ApiError::not_found("proposal", id).action("list_proposals", &[]);
    let location = store.get::<ProposalLocation>(id.as_bytes())?.ok_or_else(missing)?;
    store.get::<Proposal>(&keys::child(&location.project_id, id))?.ok_or_else(missing)
}

/// Every proposal of a project, oldest first.
pub fn list(store: &Store, project_id: &str) -> Result<Vec<Proposal>, ApiError> {
    Ok(store.scan::<Proposal>(&keys::project_prefix(project_id))?)
}

/// The view of a proposal now.
pub fn view(store: &Store, proposal: Proposal) -> Result<ProposalView, ApiError> {
    let staleness = staleness(store, &proposal)?;
    Ok(ProposalView { proposal, stale: staleness.stale, stale_reason: staleness.reason, based_on_staged: staleness.based_on_staged })
}

/// The hash of a text a proposal changes.
pub fn text_hash(text: &str) -> String {
    sha256_ref(text.as_bytes())
}

pub(super) fn metadata_text(project: &Project) -> String {
    serde_json::json!({"title": project.title, "platforms": project.platforms, "brandProfileId": project.brand_profile_id, "templateId": project.template_id}).to_string()
}

/// `content` with its patch text replaced by `text`.
pub fn with_patch_text(content: &DraftContent, text: &str) -> DraftContent {
    match content {
        DraftContent::Html { digest, .. } => DraftContent::Html { html: text.to_owned(), digest: digest.clone() },
        DraftContent::Markdown { .. } => DraftContent::Markdown { markdown: text.to_owned() },
        DraftContent::Thread { .. } => {
            DraftContent::Thread { posts: text.split(POST_SEPARATOR).filter(|p| !p.trim().is_empty()).map(|p| Post { text: p.to_owned(), weighted_length: 0 }).collect() }
        }
        DraftContent::Card { tags, .. } => DraftContent::Card { body: text.to_owned(), tags: tags.clone() },
    }
}

/// The current text a proposal's base hash is about, and its revision, for its target.
pub(crate) fn current_text(store: &Store, proposal: &Proposal) -> Result<Option<String>, ApiError> {
    let project = crate::project::load(store, &proposal.project_id)?;
    Ok(match (&proposal.target, proposal.kind) {
        (Target::Source, ProposalKind::TitleCandidates) => Some(project.title),
        (Target::Source, _) => Some(project.source),
        (Target::Metadata, _) => Some(metadata_text(&project)),
        (Target::Draft { platform }, _) => crate::project::drafts::load(store, &project.id, *platform)?.map(|d| match proposal.kind {
            ProposalKind::TagCandidates => tags_text(&d),
            _ => draft_patch_text(&d.content),
        }),
        (Target::Comment { .. }, _) | (Target::Session, _) => None,
    })
}

pub(super) fn tags_text(draft: &PlatformDraft) -> String {
    match &draft.content {
        DraftContent::Card { tags, .. } => tags.join("\n"),
        _ => String::new(),
    }
}

/// Whether `proposal`'s base still matches its target. Only an open proposal can be
/// stale; an artifact (outline, checklist) never is. A source text proposal whose base
/// is its session's staged effective source (not the official working copy) is not
/// stale but [`Staleness::based_on_staged`].
pub fn staleness(store: &Store, proposal: &Proposal) -> Result<Staleness, ApiError> {
    let fresh = Staleness { stale: false, reason: None, based_on_staged: false };
    if proposal.status != ProposalStatus::Proposed {
        return Ok(fresh);
    }
    if let Target::Comment { comment_id } = &proposal.target {
        let exists = store.get::<Comment>(&keys::comment(&proposal.project_id, comment_id))?.is_some();
        return Ok(if exists { fresh } else { Staleness::stale("The comment was deleted since this was written.") });
    }
    let Some(base_hash) = &proposal.base.text_hash else { return Ok(fresh) };
    // A draft's status change bumps its revision but not its text: staleness is about
    // the text the proposal changes.
    if let Target::Draft { platform } = &proposal.target {
        if crate::project::drafts::load(store, &proposal.project_id, *platform)?.is_none() {
            return Ok(Staleness::stale(format!("The {} draft no longer exists.", platform.as_str())));
        }
    }
    let current = current_text(store, proposal)?;
    Ok(match current {
        Some(text) if &text_hash(&text) == base_hash => fresh,
        Some(_) if on_staged_changes(store, proposal, base_hash)? => Staleness { based_on_staged: true, ..fresh },
        Some(_) => Staleness::stale(match proposal.target {
            Target::Metadata => "The project's settings changed since this was written.".to_owned(),
            _ if proposal.kind == ProposalKind::TitleCandidates => "The title changed since this was written.".to_owned(),
            Target::Draft { platform } => format!("The {} draft changed since this was written.", platform.as_str()),
            _ => "The source changed since this was written.".to_owned(),
        }),
        None => Staleness::stale("The target no longer exists."),
    })
}

/// True for a source text proposal whose base hash is the effective source of the
/// changes staged in its session.
fn on_staged_changes(store: &Store, proposal: &Proposal, base_hash: &str) -> Result<bool, ApiError> {
    let source_text = matches!(proposal.target, Target::Source) && matches!(proposal.kind, ProposalKind::SourcePatch | ProposalKind::SourceRewrite);
    let Some(session_id) = proposal.origin.session_id.as_deref().filter(|_| source_text) else { return Ok(false) };
    Ok(match staging::load(store, session_id)? {
        Some(staged) => staged.project_id == proposal.project_id && !staged.entries.is_empty() && text_hash(&staged.effective_source) == base_hash,
        None => false,
    })
}
