//! Accepting a proposal, all of it or some hunks or candidates, as one transaction:
//! the base check, the change to its target (a version, a draft's revision, a
//! comment's reply, the metadata), the proposal's status, an activity entry and an
//! audit record.

use serde::{Deserialize, Serialize};

use super::{actor_names, apply_hunks, based_on_staged, not_open, selected_hunks, stale_conflict, version_origin, Actor, AuditAction, AuditRecord};
use crate::error::{ApiError, ErrorCode};
use crate::kernel::Kernel;
use crate::model::{ActivityKind, Comment, DraftContent, DraftStatus, PlatformDraft, Project, Version};
use crate::project::versions::NewVersion;
use crate::proposals::{load, staleness, with_patch_text, Payload, Proposal, ProposalStatus, Target};
use crate::store::{Batch, Durability, Store};

/// An accept request.
#[derive(Debug, Clone)]
pub struct Accept {
    pub proposal_id: String,
    /// Hunks to take; `None` takes every hunk not rejected.
    pub hunks: Option<Vec<String>>,
    /// The target's revision the person reviewed against: the project's working-copy
    /// revision, or the draft's revision for a draft target.
    pub expected_base: u64,
    /// The candidates taken (one title; one or more tags).
    pub choices: Option<Vec<String>>,
    /// The person confirmed changing a ready or published draft.
    pub confirm_final: bool,
    pub actor: Actor,
}

/// What an accept made.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Accepted {
    pub proposal: Proposal,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<Version>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draft: Option<PlatformDraft>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<Comment>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<Project>,
}

/// Refuses a proposal that cannot be accepted as it stands: not open, aimed at a
/// publishing draft, stale, or based on a change only staged.
fn refuse_unacceptable(store: &Store, proposal: &Proposal) -> Result<(), ApiError> {
    if proposal.status != ProposalStatus::Proposed {
        return Err(not_open(proposal));
    }
    // A publishing draft refuses before anything else is considered.
    if let Target::Draft { platform } = &proposal.target {
        if let Some(draft) = crate::project::drafts::load(store, &proposal.project_id, *platform)? {
            if draft.status == DraftStatus::Publishing {
                return Err(crate::project::drafts::read_only(&draft));
            }
        }
    }
    let stale = staleness(store, proposal)?;
    if stale.stale {
        return Err(stale_conflict(store, proposal, stale.reason.as_deref().unwrap_or("its base moved."))?);
    }
    if stale.based_on_staged {
        return Err(based_on_staged(proposal));
    }
    Ok(())
}

/// Stages what accepting `proposal` changes in its target (a version of the source or
/// the title, the metadata, a draft's revision, a comment's reply; nothing for a
/// session artifact) into `batch` and `accepted`. Returns the hunks taken and the
/// candidates chosen. Errors: those of [`stage_accept`] about the target.
fn stage_change(
    kernel: &Kernel,
    batch: &mut Batch,
    request: &Accept,
    proposal: &Proposal,
    project: &mut Project,
    accepted: &mut Accepted,
) -> Result<(Vec<crate::proposals::ProposalHunk>, Vec<String>), ApiError> {
    let store = kernel.store();
    // The proposal's summary only: its id is in the version's origin (`aiProposal`),
    // never in human text.
    let message = proposal.summary.chars().take(120).collect::<String>();
    let mut taken: Vec<crate::proposals::ProposalHunk> = Vec::new();
    let mut choices: Vec<String> = Vec::new();
    let check_project_base = |project: &Project| {
        if project.revision != request.expected_base {
            Err(crate::project::conflict(project, request.expected_base))
        } else {
            Ok(())
        }
    };
    match (&proposal.target, &proposal.payload) {
        (Target::Source, Payload::Text { base_text, .. }) => {
            check_project_base(project)?;
            taken = selected_hunks(proposal, request.hunks.as_deref())?.into_iter().cloned().collect();
            let new_source = apply_hunks(base_text, &taken)?;
            project.source = new_source;
            project.revision += 1;
            let (title, source) = (project.title.clone(), project.source.clone());
            let version = crate::project::versions::stage_next(
                kernel,
                batch,
                project,
                NewVersion { title: &title, source: &source, origin: &version_origin(proposal, &taken), message: Some(&message), message_id: None, message_params: None },
            )?;
            // `versions::stage_next` staged the version's sync delivery job in this batch too.
            batch.put(&*project)?;
            accepted.version = Some(version);
        }
        (Target::Source, Payload::Candidates { candidates }) => {
            check_project_base(project)?;
            choices = pick(candidates, request.choices.as_deref(), true)?;
            project.title = choices[0].clone();
            project.revision += 1;
            let (title, source) = (project.title.clone(), project.source.clone());
            let version = crate::project::versions::stage_next(
                kernel,
                batch,
                project,
                NewVersion { title: &title, source: &source, origin: &version_origin(proposal, &[]), message: Some(&message), message_id: None, message_params: None },
            )?;
            batch.put(&*project)?;
            accepted.version = Some(version);
        }
        (Target::Metadata, Payload::Metadata { change }) => {
            check_project_base(project)?;
            let title_changes = change.title.as_ref().is_some_and(|t| *t != project.title);
            let changes = crate::project::ProjectChanges {
                title: change.title.clone(),
                source: None,
                platforms: change.platforms.clone(),
                brand_profile_id: change.brand_profile_id.clone(),
            };
            crate::project::stage_update(kernel, batch, project, changes)?;
            if let Some(template_id) = &change.template_id {
                project.template_id = template_id.clone();
            }
            if title_changes {
                let (title, source) = (project.title.clone(), project.source.clone());
                let version = crate::project::versions::stage_next(
                    kernel,
                    batch,
                    project,
                    NewVersion { title: &title, source: &source, origin: &version_origin(proposal, &[]), message: Some(&message), message_id: None, message_params: None },
                )?;
                accepted.version = Some(version);
            }
            batch.put(&*project)?;
        }
        (Target::Draft { platform }, payload) => {
            let mut draft = crate::project::drafts::require(store, &project.id, *platform)?;
            if u64::from(draft.revision) != request.expected_base {
                return Err(crate::project::drafts::conflict(&draft, u32::try_from(request.expected_base).unwrap_or(u32::MAX)));
            }
            check_final(&draft, request)?;
            let content = match payload {
                Payload::Text { base_text, .. } => {
                    taken = selected_hunks(proposal, request.hunks.as_deref())?.into_iter().cloned().collect();
                    with_patch_text(&draft.content, &apply_hunks(base_text, &taken)?)
                }
                Payload::Candidates { candidates } => {
                    choices = pick(candidates, request.choices.as_deref(), false)?;
                    match &draft.content {
                        DraftContent::Card { body, .. } => DraftContent::Card { body: body.clone(), tags: choices.clone() },
                        _ => return Err(ApiError::validation("choices", "Only douyin and xiaohongshu drafts hold topic tags.")),
                    }
                }
                _ => return Err(ApiError::internal("A draft proposal holds neither a text nor candidates.")),
            };
            let base_revision = draft.revision;
            crate::project::drafts::stage_edit(kernel, batch, &mut draft, base_revision, None, Some(content))?;
            accepted.draft = Some(draft);
        }
        (Target::Comment { comment_id }, Payload::CommentReply { body, .. }) => {
            let parent = crate::project::comments::load(store, &project.id, comment_id)?;
            accepted.comment = Some(crate::project::comments::stage_reply(kernel, batch, project, &parent, body.clone())?);
        }
        // Artifacts: accepting records the person's decision; nothing official changes.
        (Target::Session, Payload::Outline { .. } | Payload::Checklist { .. }) => {}
        _ => return Err(ApiError::internal("The proposal's target and payload do not fit together.")),
    }
    Ok((taken, choices))
}

/// Stages an accept into `batch` (the caller holds the write lock and commits once).
///
/// Errors: NOT_FOUND; CONFLICT when the proposal is not open, its base moved, or
/// `expected_base` is not the target's revision (nothing is staged); READ_ONLY for a
/// publishing draft, or a ready/published draft without `confirm_final` (and always
/// for the model); VALIDATION for bad hunk ids or choices.
pub fn stage_accept(kernel: &Kernel, batch: &mut Batch, request: &Accept) -> Result<Accepted, ApiError> {
    let store = kernel.store();
    let mut proposal = load(store, &request.proposal_id)?;
    refuse_unacceptable(store, &proposal)?;
    let mut project = crate::project::load(store, &proposal.project_id)?;
    let (actor, via, approval) = actor_names(kernel, &request.actor)?;
    let mut accepted = Accepted { proposal: proposal.clone(), version: None, draft: None, comment: None, project: None };
    let (taken, choices) = stage_change(kernel, batch, request, &proposal, &mut project, &mut accepted)?;
    let partial = !proposal.hunks.is_empty() && taken.len() < proposal.hunks.len();
    let now = kernel.now();
    proposal.status = if partial { ProposalStatus::PartiallyAccepted } else { ProposalStatus::Accepted };
    proposal.accepted_hunks = taken.iter().map(|h| h.id.clone()).collect();
    proposal.updated_at = now;
    proposal.applied = Some(crate::proposals::Applied {
        version: accepted.version.as_ref().map(|v| v.number),
        draft_revision: accepted.draft.as_ref().map(|d| d.revision),
        comment_id: accepted.comment.as_ref().map(|c| c.id.clone()),
        choices: choices.clone(),
        by: actor.clone(),
        at: now,
    });
    let summary = match (&accepted.version, &accepted.draft) {
        (Some(v), _) => format!("Accepted AI proposal {} as version {} of \"{}\"", proposal.id, v.number, project.title),
        (None, Some(d)) => format!("Accepted AI proposal {} into the {} draft (revision {})", proposal.id, d.platform.as_str(), d.revision),
        _ => format!("Accepted AI proposal {} ({})", proposal.id, proposal.kind.as_str()),
    };
    batch.put(&kernel.activity(Some(&project.id), ActivityKind::ProposalAccepted, summary)?)?;
    batch.put(&AuditRecord {
        id: kernel.new_id("aud"),
        project_id: project.id.clone(),
        proposal_id: proposal.id.clone(),
        kind: proposal.kind,
        action: if partial { AuditAction::PartiallyAccepted } else { AuditAction::Accepted },
        hunks: proposal.accepted_hunks.clone(),
        hunk_hashes: taken.iter().map(|h| h.content_hash.clone()).collect(),
        choices,
        actor,
        via,
        approval_request_id: approval,
        origin: proposal.origin.clone(),
        version: accepted.version.as_ref().map(|v| v.number),
        draft_revision: accepted.draft.as_ref().map(|d| d.revision),
        reason: None,
        at: now,
    })?;
    batch.put(&proposal)?;
    if accepted.version.is_some() {
        accepted.project = Some(project);
    }
    accepted.proposal = proposal;
    Ok(accepted)
}

/// A ready, publishing or published draft: publishing never changes; the others only
/// with the person's fresh confirmation, never from the model alone.
fn check_final(draft: &PlatformDraft, request: &Accept) -> Result<(), ApiError> {
    let status = draft.status;
    if status == DraftStatus::Publishing {
        return Err(crate::project::drafts::read_only(draft));
    }
    if matches!(status, DraftStatus::Ready | DraftStatus::Published) {
        let name = if status == DraftStatus::Ready { "ready" } else { "published" };
        if matches!(request.actor, Actor::Model { .. }) {
            return Err(ApiError::new(
                ErrorCode::ReadOnly,
                format!("The {} draft is {name}; the assistant cannot change it. The person can accept the proposal in the review panel.", draft.platform.as_str()),
            )
            .hint("review", "Open the proposal and accept it yourself if you want this change."));
        }
        if !request.confirm_final {
            return Err(ApiError::new(ErrorCode::ReadOnly, format!("The {} draft is {name}. Confirm that you want to change it.", draft.platform.as_str()))
                .hint("confirm_final", "Accept again with `confirmFinal: true` (in the CLI, `--confirm-final`)."));
        }
    }
    Ok(())
}

fn pick(candidates: &[crate::proposals::Candidate], wanted: Option<&[String]>, exactly_one: bool) -> Result<Vec<String>, ApiError> {
    let Some(wanted) = wanted else {
        let choices = candidates.iter().map(|c| c.text.as_str()).collect::<Vec<_>>().join(" | ");
        return Err(ApiError::validation("choices", "Choose which candidate to take (`choices`).").hint_with(
            "choices",
            format!("The candidates are: {choices}."),
            &[("choices", &choices)],
        ));
    };
    if wanted.is_empty() || (exactly_one && wanted.len() != 1) {
        return Err(ApiError::validation("choices", if exactly_one { "Choose exactly one candidate." } else { "Choose at least one candidate." }));
    }
    for (i, choice) in wanted.iter().enumerate() {
        if !candidates.iter().any(|c| &c.text == choice) {
            return Err(ApiError::validation(&format!("choices[{i}]"), format!("\"{choice}\" is not one of the candidates.")));
        }
    }
    let mut out: Vec<String> = Vec::new();
    for choice in wanted {
        if !out.contains(choice) {
            out.push(choice.clone());
        }
    }
    Ok(out)
}

/// Accepts in one durable transaction under the write lock (see [`stage_accept`]).
pub fn accept(kernel: &Kernel, request: &Accept) -> Result<Accepted, ApiError> {
    let _guard = kernel.write_lock();
    let mut batch = Batch::new();
    let accepted = stage_accept(kernel, &mut batch, request)?;
    kernel.store().apply(batch, Durability::Durable)?;
    Ok(accepted)
}
