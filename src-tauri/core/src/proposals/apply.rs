//! Accepting, rejecting and rebasing proposals. Accepting all or some hunks is one
//! transaction: the base check (a moved base is a CONFLICT and nothing is written),
//! the new version or draft revision, the proposal's status and the hunks taken, an
//! activity entry and an audit record. The version's sync delivery job joins the same
//! batch in [`stage_accept`], staged with the version.

use serde::{Deserialize, Serialize};

use super::{current_text, load, staleness, text_hash, with_patch_text, Origin, Payload, Proposal, ProposalKind, ProposalStatus, Target};
use crate::diff::{self, Splice};
use crate::error::{ApiError, ErrorCode};
use crate::kernel::Kernel;
use crate::model::{ActivityKind, Comment, DraftContent, DraftStatus, PlatformDraft, Project, Timestamp, Version, VersionOrigin};
use crate::project::versions::NewVersion;
use crate::store::{keys, Batch, Durability, Kind, Record, Store};

/// Longest rejection reason, in characters.
pub const MAX_REASON_CHARS: usize = 2_000;

/// Who accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Actor {
    /// The person, in the review screen, the CLI or the API.
    Person,
    /// The model through `apply_proposal`, after the person approved exactly this.
    Model { tool_use_id: String, approval: Option<String> },
}

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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AuditAction {
    Accepted,
    PartiallyAccepted,
    Rejected,
    HunksRejected,
    Rebased,
}

/// Who accepted or rejected which hunks of what, from which model, profile, prompt
/// version and context snapshot. Kept per project in creation order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditRecord {
    pub id: String,
    pub project_id: String,
    pub proposal_id: String,
    pub kind: ProposalKind,
    pub action: AuditAction,
    pub hunks: Vec<String>,
    /// The hash of each hunk in `hunks`, in the same order.
    pub hunk_hashes: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<String>,
    /// The person (for an accept through `apply_proposal`, the person who approved).
    pub actor: String,
    /// `person` or `assistant` (an approved `apply_proposal`).
    pub via: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_request_id: Option<String>,
    pub origin: Origin,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draft_revision: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub at: Timestamp,
}

impl Record for AuditRecord {
    const KIND: Kind = Kind::ProposalAudit;
    fn key(&self) -> Vec<u8> {
        keys::child(&self.project_id, &self.id)
    }

    /// Accepts and rejects are indexed for the activity view in the same transaction.
    fn derived(&self, batch: &mut Batch) -> Result<(), crate::store::StoreError> {
        super::audit_index::stage(self, batch)
    }
}

/// The audit trail of a project, oldest first.
pub fn audit(store: &Store, project_id: &str) -> Result<Vec<AuditRecord>, ApiError> {
    Ok(store.scan::<AuditRecord>(&keys::project_prefix(project_id))?)
}

/// A durable constraint of a session or run: the person's reason for a rejection,
/// shown to the model verbatim in every later turn until the person removes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Constraint {
    pub id: String,
    /// The session or run.
    pub owner_id: String,
    pub project_id: String,
    pub text: String,
    pub proposal_id: String,
    /// The rejected hunks (empty: the whole proposal).
    pub hunks: Vec<String>,
    pub created_by: String,
    pub created_at: Timestamp,
}

impl Record for Constraint {
    const KIND: Kind = Kind::Constraints;
    fn key(&self) -> Vec<u8> {
        keys::child(&self.owner_id, &self.id)
    }
}

/// The constraints of a session or run, oldest first.
pub fn constraints(store: &Store, owner_id: &str) -> Result<Vec<Constraint>, ApiError> {
    Ok(store.scan::<Constraint>(&keys::project_prefix(owner_id))?)
}

/// Removes a constraint of `owner_id`. Errors: NOT_FOUND.
pub fn remove_constraint(kernel: &Kernel, owner_id: &str, constraint_id: &str) -> Result<Constraint, ApiError> {
    let _guard = kernel.write_lock();
    let key = keys::child(owner_id, constraint_id);
    let constraint = kernel.store().get::<Constraint>(&key)?.ok_or_else(|| ApiError::not_found("constraint", constraint_id))?;
    let mut batch = Batch::new();
    batch.delete::<Constraint>(key);
    kernel.store().apply(batch, Durability::Durable)?;
    Ok(constraint)
}

pub(super) fn not_open(proposal: &Proposal) -> ApiError {
    let status = serde_json::to_value(proposal.status).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
    let mut error = ApiError::new(ErrorCode::Conflict, format!("Proposal {} is {status}; only an open proposal can be accepted or rejected.", proposal.id))
        .problem("proposal.not_open", &[("status", &status)])
        .details(serde_json::json!({"proposalId": proposal.id, "status": proposal.status, "supersededBy": proposal.superseded_by}));
    if let Some(newer) = &proposal.superseded_by {
        error = error.hint_with("open_newer", format!("Review the newer proposal {newer} instead."), &[("newer", newer)]);
    }
    error
}

/// The CONFLICT of a proposal whose base moved: both sides and what changed between.
fn stale_conflict(store: &Store, proposal: &Proposal, reason: &str) -> Result<ApiError, ApiError> {
    let current = current_text(store, proposal)?;
    let base_text = match &proposal.payload {
        Payload::Text { base_text, .. } => Some(base_text.as_str()),
        _ => None,
    };
    let changed_since = match (base_text, current.as_deref()) {
        (Some(base), Some(now)) => serde_json::to_value(diff::diff_texts(base, now)).ok(),
        _ => None,
    };
    let project = crate::project::load(store, &proposal.project_id)?;
    Ok(ApiError::new(ErrorCode::Conflict, format!("Proposal {} is stale: {reason}", proposal.id))
        .problem("proposal.stale", &[])
        .action("rebase", &[("proposal", &proposal.id)])
        .hint("compare", "Compare the proposal with the current text before deciding.")
        .details(serde_json::json!({
            "proposalId": proposal.id,
            "base": proposal.base,
            "current": {"revision": project.revision, "head": project.head, "text": current, "textHash": current.as_deref().map(text_hash)},
            "changedSince": changed_since,
        })))
}

/// The CONFLICT of accepting, on its own, a proposal written over its session's staged
/// changes: its hunks only apply on top of them.
fn based_on_staged(proposal: &Proposal) -> ApiError {
    let session = proposal.origin.session_id.clone().unwrap_or_default();
    ApiError::new(
        ErrorCode::Conflict,
        format!("Proposal {} is based on changes staged in session {session} that are not applied yet; it cannot be accepted on its own.", proposal.id),
    )
    .action("stage_it", &[("session", &session), ("proposal", &proposal.id)])
    .action("apply_staged", &[("session", &session)])
    .details(serde_json::json!({"proposalId": proposal.id, "sessionId": session, "basedOnStaged": true}))
}

/// Which hunks an accept takes. Errors: VALIDATION for unknown, repeated or rejected
/// hunk ids, or an empty selection.
pub(super) fn selected_hunks<'a>(proposal: &'a Proposal, wanted: Option<&[String]>) -> Result<Vec<&'a super::ProposalHunk>, ApiError> {
    let open: Vec<&super::ProposalHunk> = proposal.hunks.iter().filter(|h| !proposal.rejected_hunks.contains(&h.id)).collect();
    let Some(wanted) = wanted else {
        if open.is_empty() {
            return Err(ApiError::validation("hunks", "Every hunk of this proposal was rejected; there is nothing left to accept."));
        }
        return Ok(open);
    };
    if wanted.is_empty() {
        return Err(ApiError::validation("hunks", "Name at least one hunk, or leave `hunks` out to accept every hunk."));
    }
    let mut out = Vec::new();
    for (i, id) in wanted.iter().enumerate() {
        let Some(hunk) = proposal.hunks.iter().find(|h| &h.id == id) else {
            let ids: Vec<&str> = proposal.hunks.iter().map(|h| h.id.as_str()).collect();
            return Err(ApiError::validation(&format!("hunks[{i}]"), format!("Proposal {} has no hunk {id}; its hunks are {}.", proposal.id, ids.join(", "))));
        };
        if proposal.rejected_hunks.contains(id) {
            return Err(ApiError::validation(&format!("hunks[{i}]"), format!("Hunk {id} was rejected.")));
        }
        if out.iter().any(|h: &&super::ProposalHunk| &h.id == id) {
            return Err(ApiError::validation(&format!("hunks[{i}]"), format!("Hunk {id} is named twice.")));
        }
        out.push(hunk);
    }
    Ok(out)
}

pub(super) fn apply_hunks(base_text: &str, selected: &[super::ProposalHunk]) -> Result<String, ApiError> {
    let splices: Vec<Splice<'_>> = selected.iter().map(|h| h.splice()).collect();
    diff::apply_changes(base_text, &splices).ok_or_else(|| ApiError::internal("The proposal's hunks do not apply to its own base text."))
}

fn actor_names(kernel: &Kernel, actor: &Actor) -> Result<(String, String, Option<String>), ApiError> {
    let person = kernel.author()?;
    Ok(match actor {
        Actor::Person => (person, "person".to_owned(), None),
        Actor::Model { approval, .. } => (person, "assistant".to_owned(), approval.clone()),
    })
}

/// The origin of a version made by accepting `taken` of `proposal`'s hunks (none: a
/// proposal without hunks, or all of them): with the sources those hunks came with.
pub(super) fn version_origin(proposal: &Proposal, taken: &[super::ProposalHunk]) -> VersionOrigin {
    let sources = if taken.is_empty() { proposal.origin.sources.clone() } else { proposal.sources_of_hunks(&taken.iter().map(|h| h.id.clone()).collect::<Vec<_>>()) };
    VersionOrigin::AiProposal {
        proposal_id: proposal.id.clone(),
        session_id: proposal.origin.session_id.clone(),
        run_id: proposal.origin.run_id.clone(),
        model: proposal.origin.model.clone(),
        profile_id: proposal.origin.profile_id.clone(),
        sources,
    }
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
) -> Result<(Vec<super::ProposalHunk>, Vec<String>), ApiError> {
    let store = kernel.store();
    // The proposal's summary only: its id is in the version's origin (`aiProposal`),
    // never in human text.
    let message = proposal.summary.chars().take(120).collect::<String>();
    let mut taken: Vec<super::ProposalHunk> = Vec::new();
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
    proposal.applied = Some(super::Applied {
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

fn pick(candidates: &[super::Candidate], wanted: Option<&[String]>, exactly_one: bool) -> Result<Vec<String>, ApiError> {
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

/// A reject request.
#[derive(Debug, Clone, Default)]
pub struct Reject {
    pub proposal_id: String,
    /// Hunks to reject; `None` rejects the whole proposal.
    pub hunks: Option<Vec<String>>,
    /// Why: becomes a durable constraint of the session or run.
    pub reason: Option<String>,
}

/// What a reject did.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rejected {
    pub proposal: Proposal,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constraint: Option<Constraint>,
}

/// Rejects a proposal, or some of its hunks, in one durable transaction. A reason
/// becomes a constraint of the proposal's session or run.
///
/// Errors: NOT_FOUND; CONFLICT when the proposal is not open; VALIDATION for bad hunk
/// ids or a reason over [`MAX_REASON_CHARS`].
pub fn reject(kernel: &Kernel, request: &Reject) -> Result<Rejected, ApiError> {
    let reason = match request.reason.as_deref().map(str::trim) {
        Some("") | None => None,
        Some(reason) => Some(crate::error::bounded_text("reason", reason, MAX_REASON_CHARS)?),
    };
    let _guard = kernel.write_lock();
    let store = kernel.store();
    let mut proposal = load(store, &request.proposal_id)?;
    if proposal.status != ProposalStatus::Proposed {
        return Err(not_open(&proposal));
    }
    let named: Vec<String> = match &request.hunks {
        None => Vec::new(),
        Some(ids) => selected_hunks(&proposal, Some(ids))?.iter().map(|h| h.id.clone()).collect(),
    };
    let mut batch = Batch::new();
    let now = kernel.now();
    proposal.rejected_hunks.extend(named.iter().cloned());
    let whole = request.hunks.is_none() || proposal.hunks.iter().all(|h| proposal.rejected_hunks.contains(&h.id));
    if whole {
        proposal.status = ProposalStatus::Rejected;
        if request.hunks.is_none() {
            proposal.rejected_hunks = proposal.hunks.iter().map(|h| h.id.clone()).collect();
        }
        batch.put(&kernel.activity(Some(&proposal.project_id), ActivityKind::ProposalRejected, format!("Rejected AI proposal {} ({})", proposal.id, proposal.kind.as_str()))?)?;
    }
    if let Some(reason) = &reason {
        proposal.rejection_reason = Some(reason.clone());
    }
    proposal.updated_at = now;
    let person = kernel.author()?;
    let constraint = match (&reason, proposal.origin.owner_id()) {
        (Some(text), Some(owner)) => {
            let constraint = Constraint {
                id: kernel.new_id("cns"),
                owner_id: owner.to_owned(),
                project_id: proposal.project_id.clone(),
                text: text.clone(),
                proposal_id: proposal.id.clone(),
                hunks: named.clone(),
                created_by: person.clone(),
                created_at: now,
            };
            batch.put(&constraint)?;
            Some(constraint)
        }
        _ => None,
    };
    let hunk_hashes = proposal.hunks.iter().filter(|h| named.contains(&h.id)).map(|h| h.content_hash.clone()).collect();
    batch.put(&AuditRecord {
        id: kernel.new_id("aud"),
        project_id: proposal.project_id.clone(),
        proposal_id: proposal.id.clone(),
        kind: proposal.kind,
        action: if whole { AuditAction::Rejected } else { AuditAction::HunksRejected },
        hunks: named,
        hunk_hashes,
        choices: Vec::new(),
        actor: person,
        via: "person".to_owned(),
        approval_request_id: None,
        origin: proposal.origin.clone(),
        version: None,
        draft_revision: None,
        reason,
        at: now,
    })?;
    batch.put(&proposal)?;
    store.apply(batch, Durability::Durable)?;
    Ok(Rejected { proposal, constraint })
}

/// A hunk of a stale proposal that overlaps an edit made since.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RebaseConflict {
    pub hunk_id: String,
    /// 0-based lines of the base text the hunk changes.
    pub old_start: u32,
    pub old_len: u32,
    /// The edit made since that it overlaps: its lines in the base text and the text
    /// it put there.
    pub their_start: u32,
    pub their_len: u32,
    pub their_text: String,
}

/// What a rebase made.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rebased {
    /// The old proposal, now superseded.
    pub previous: Proposal,
    /// The new proposal over the current text, with every hunk that did not overlap.
    pub proposal: Proposal,
    /// Hunks left out because they overlap edits made since.
    pub conflicts: Vec<RebaseConflict>,
    /// Hunk id in the old proposal → hunk id in the new one.
    pub carried: Vec<(String, String)>,
}

/// Does the proposal's change `a` (lines `[s, e)` of the base; an insertion when
/// empty) touch the edit `b`? Touching counts: adjacent edits are not guessed apart.
pub(super) fn touches(a_start: usize, a_len: usize, b_start: usize, b_len: usize) -> bool {
    a_start <= b_start + b_len && b_start <= a_start + a_len
}

/// Carries a stale text proposal onto the current text by a three-way merge (base →
/// proposal, base → current). Hunks that do not touch the edits made since are
/// carried into a new proposal that supersedes this one; the others are reported.
///
/// Errors: NOT_FOUND; CONFLICT when the proposal is not open, is not a text proposal,
/// is not stale, or every hunk overlaps an edit (then nothing is written).
pub fn rebase(kernel: &Kernel, proposal_id: &str) -> Result<Rebased, ApiError> {
    let _guard = kernel.write_lock();
    let store = kernel.store();
    let mut previous = load(store, proposal_id)?;
    if previous.status != ProposalStatus::Proposed {
        return Err(not_open(&previous));
    }
    let Payload::Text { base_text, .. } = &previous.payload else {
        return Err(ApiError::new(ErrorCode::Conflict, format!("A {} proposal cannot be rebased; ask for a new one.", previous.kind.as_str())));
    };
    let stale = staleness(store, &previous)?;
    if stale.based_on_staged {
        return Err(based_on_staged(&previous));
    }
    if !stale.stale {
        return Err(ApiError::new(ErrorCode::Conflict, format!("Proposal {} is not stale: accept or reject it as it is.", previous.id)));
    }
    let Some(current) = current_text(store, &previous)? else {
        return Err(ApiError::new(ErrorCode::Conflict, "The proposal's target no longer exists.".to_owned()));
    };
    let theirs = diff::changes(base_text, &current);
    let mut carried_splices = Vec::new();
    let mut carried_ids = Vec::new();
    let mut conflicts = Vec::new();
    for hunk in previous.hunks.iter().filter(|h| !previous.rejected_hunks.contains(&h.id)) {
        let (start, len) = (hunk.old_start as usize, hunk.old_len as usize);
        if let Some(edit) = theirs.iter().find(|t| touches(start, len, t.old_start, t.old_len)) {
            conflicts.push(RebaseConflict {
                hunk_id: hunk.id.clone(),
                old_start: hunk.old_start,
                old_len: hunk.old_len,
                their_start: u32::try_from(edit.old_start).unwrap_or(u32::MAX),
                their_len: u32::try_from(edit.old_len).unwrap_or(u32::MAX),
                their_text: edit.new_text.clone(),
            });
            continue;
        }
        // Shift by the edits wholly before this hunk.
        let shift: isize = theirs.iter().filter(|t| t.old_start + t.old_len < start).map(|t| t.new_len as isize - t.old_len as isize).sum();
        let Some(mapped) = start.checked_add_signed(shift) else { return Err(ApiError::internal("A rebased hunk moved before the start of the text.")) };
        carried_splices.push((mapped, hunk));
        carried_ids.push(hunk.id.clone());
    }
    if carried_splices.is_empty() {
        return Err(ApiError::new(ErrorCode::Conflict, format!("Every hunk of proposal {} overlaps edits made since; nothing was rebased.", previous.id))
            .hint("regenerate", "Ask the assistant for a new proposal on the current text.")
            .details(serde_json::json!({"proposalId": previous.id, "conflicts": conflicts})));
    }
    let splices: Vec<Splice<'_>> =
        carried_splices.iter().map(|(at, h)| Splice { old_start: *at, old_len: h.old_len as usize, old_text: &h.old_text, new_text: &h.new_text }).collect();
    let merged = diff::apply_changes(&current, &splices).ok_or_else(|| ApiError::internal("A rebased hunk did not apply to the current text."))?;
    let mut batch = Batch::new();
    let mut origin = previous.origin.clone();
    origin.rebased_from = Some(previous.id.clone());
    // The new proposal is built against the current state; its own supersede pass
    // marks the old one when both share an owner, and the old one is marked here in
    // any case.
    let mut proposal = super::stage_create(
        kernel,
        &mut batch,
        super::NewProposal {
            project_id: previous.project_id.clone(),
            kind: previous.kind,
            target: previous.target.clone(),
            summary: previous.summary.clone(),
            payload: Payload::Text { base_text: current.clone(), proposed_text: merged },
            origin,
        },
    )?;
    let now = kernel.now();
    previous.status = ProposalStatus::Superseded;
    previous.superseded_by = Some(proposal.id.clone());
    previous.superseded_reason = Some(super::SupersededReason::Rebased);
    previous.updated_at = now;
    batch.put(&previous)?;
    // Carried hunks keep their order; pair them with the new hunks by their text.
    let carried: Vec<(String, String)> = carried_ids
        .iter()
        .filter_map(|old| {
            let old_hunk = previous.hunks.iter().find(|h| &h.id == old)?;
            let new_hunk = proposal.hunks.iter().find(|h| h.old_text == old_hunk.old_text && h.new_text == old_hunk.new_text)?;
            Some((old.clone(), new_hunk.id.clone()))
        })
        .collect();
    batch.put(&AuditRecord {
        id: kernel.new_id("aud"),
        project_id: previous.project_id.clone(),
        proposal_id: previous.id.clone(),
        kind: previous.kind,
        action: AuditAction::Rebased,
        hunks: carried_ids,
        hunk_hashes: Vec::new(),
        choices: Vec::new(),
        actor: kernel.author()?,
        via: "person".to_owned(),
        approval_request_id: None,
        origin: proposal.origin.clone(),
        version: None,
        draft_revision: None,
        reason: Some(format!("rebased as {}", proposal.id)),
        at: now,
    })?;
    store.apply(batch, Durability::Durable)?;
    proposal.status = ProposalStatus::Proposed;
    Ok(Rebased { previous, proposal, conflicts, carried })
}
