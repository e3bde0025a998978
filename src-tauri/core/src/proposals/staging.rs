//! A session's working copy: proposals the person staged without applying them. Read
//! tools see the effective view (the staged changes over the baseline), so multi-step
//! edits compose; nothing official changes until the staged set is applied, as one
//! transaction and one version.
//!
//! - [`stage`] adds an open source text proposal (all or some of its hunks) whose base
//!   is the session's current effective source; the first entry records the baseline
//!   (the official working copy's revision and source hash).
//! - [`discard`] drops the set; nothing official changes.
//! - [`apply`] checks the official working copy is still the baseline (else CONFLICT,
//!   nothing written) and writes, in one transaction, one version with the effective
//!   source, every staged proposal accepted (or partially accepted) with its hunks, an
//!   activity entry, one audit record per proposal, and drops the set.

use serde::{Deserialize, Serialize};

use super::apply::{AuditAction, AuditRecord};
use super::{text_hash, Applied, Payload, Proposal, ProposalHunk, ProposalKind, ProposalStatus, Target};
use crate::diff::TextDiffResult;
use crate::error::{ApiError, ErrorCode};
use crate::kernel::Kernel;
use crate::model::{ActivityKind, Project, Timestamp, Version};
use crate::project::versions::NewVersion;
use crate::store::{Batch, Durability, Kind, Record, Store};

/// One staged proposal and the hunks of it that were staged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StagedEntry {
    pub proposal_id: String,
    pub hunks: Vec<String>,
}

/// The staged set of one session (at most one record per session).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Staging {
    pub session_id: String,
    pub project_id: String,
    /// The official working copy the staged changes sit on: its revision and the hash
    /// of its source.
    pub base_revision: u64,
    pub base_hash: String,
    pub entries: Vec<StagedEntry>,
    /// The source with every staged change applied.
    pub effective_source: String,
    pub updated_at: Timestamp,
}

impl Record for Staging {
    const KIND: Kind = Kind::Staging;
    fn key(&self) -> Vec<u8> {
        self.session_id.as_bytes().to_vec()
    }
}

/// The staged set of `session_id`, if it has one.
pub fn load(store: &Store, session_id: &str) -> Result<Option<Staging>, ApiError> {
    Ok(store.get::<Staging>(session_id.as_bytes())?)
}

/// The source as the session's tools see it: the staged changes over the official
/// working copy, or the working copy itself when nothing is staged.
pub fn effective_source(store: &Store, session_id: &str, project: &Project) -> Result<String, ApiError> {
    Ok(match load(store, session_id)? {
        Some(staging) if staging.project_id == project.id && !staging.entries.is_empty() => staging.effective_source,
        _ => project.source.clone(),
    })
}

/// True while the official working copy is still the one the set was staged on.
pub fn baseline_holds(staging: &Staging, project: &Project) -> bool {
    project.revision == staging.base_revision && text_hash(&project.source) == staging.base_hash
}

/// The source the set was staged on: the base text of its first proposal (whose hash
/// is the baseline's, checked when it was staged).
pub fn baseline_source(store: &Store, staging: &Staging) -> Result<Option<String>, ApiError> {
    let Some(first) = staging.entries.first() else { return Ok(None) };
    Ok(match super::load(store, &first.proposal_id)?.payload {
        Payload::Text { base_text, .. } if text_hash(&base_text) == staging.base_hash => Some(base_text),
        _ => None,
    })
}

/// The CONFLICT of a staged set whose baseline moved: the official working copy was
/// changed (by hand, by an accept, by a restore) after the set was staged.
fn baseline_moved(store: &Store, staging: &Staging, project: &Project) -> Result<ApiError, ApiError> {
    let changed_since = baseline_source(store, staging)?.map(|base| crate::diff::diff_texts(&base, &project.source));
    Ok(ApiError::new(
        ErrorCode::Conflict,
        format!("The working copy of project {} changed since the proposals of session {} were staged; the staged set no longer applies.", project.id, staging.session_id),
    )
    .problem("staging.moved", &[])
    .action("discard_staging", &[("session", &staging.session_id)])
    .hint("compare", "Compare the staged changes with the edits made since before deciding.")
    .details(serde_json::json!({
        "sessionId": staging.session_id,
        "baseline": {"revision": staging.base_revision, "sourceHash": staging.base_hash},
        "current": {"revision": project.revision, "sourceHash": text_hash(&project.source), "head": project.head},
        "changedSince": changed_since,
    })))
}

fn nothing_staged(session_id: &str) -> ApiError {
    ApiError::new(ErrorCode::Conflict, format!("Nothing is staged in session {session_id}."))
        .problem("staging.empty", &[])
        .action("stage", &[("session", session_id)])
        .details(serde_json::json!({"sessionId": session_id}))
}

/// Stages all (`hunks: None`) or some hunks of proposal `proposal_id` in the working
/// copy of `session_id`, in its own durable transaction. The proposal must be an open
/// source patch or rewrite of that session whose base is the session's effective
/// source (the official working copy when nothing is staged), so staged proposals
/// compose in order. Nothing official changes.
///
/// Errors: NOT_FOUND; VALIDATION for another session's proposal, a kind that is not a
/// source text proposal, or bad hunk ids; CONFLICT when the proposal is not open, is
/// staged already, was written over another text than the effective source, or the
/// official working copy moved since the set was staged. A refused call writes nothing.
pub fn stage(kernel: &Kernel, session_id: &str, proposal_id: &str, hunks: Option<Vec<String>>) -> Result<Staging, ApiError> {
    let _guard = kernel.write_lock();
    let store = kernel.store();
    let proposal = super::load(store, proposal_id)?;
    if proposal.origin.session_id.as_deref() != Some(session_id) {
        return Err(ApiError::validation("proposalId", format!("Proposal {} was not made in session {session_id}; a session stages only its own proposals.", proposal.id)));
    }
    let source_text = matches!(proposal.target, Target::Source) && matches!(proposal.kind, ProposalKind::SourcePatch | ProposalKind::SourceRewrite);
    let (true, Payload::Text { base_text, .. }) = (source_text, &proposal.payload) else {
        return Err(ApiError::validation(
            "proposalId",
            format!("Proposal {} is a {} proposal; only source patches and rewrites can be staged.", proposal.id, proposal.kind.as_str()),
        )
        .hint("accept_instead", "Accept or reject it on its own."));
    };
    if proposal.status != ProposalStatus::Proposed {
        return Err(super::apply::not_open(&proposal));
    }
    let project = crate::project::load(store, &proposal.project_id)?;
    let existing = load(store, session_id)?.filter(|s| !s.entries.is_empty());
    if let Some(staging) = &existing {
        if staging.project_id != project.id {
            return Err(ApiError::internal("the session's staged set belongs to another project"));
        }
        if !baseline_holds(staging, &project) {
            return Err(baseline_moved(store, staging, &project)?);
        }
        if staging.entries.iter().any(|e| e.proposal_id == proposal.id) {
            return Err(ApiError::new(ErrorCode::Conflict, format!("Proposal {} is staged already.", proposal.id))
                .action("discard_staging", &[("session", session_id)])
                .details(serde_json::json!({"proposalId": proposal.id, "sessionId": session_id})));
        }
    }
    let effective = existing.as_ref().map_or(project.source.as_str(), |s| s.effective_source.as_str());
    let effective_hash = text_hash(effective);
    if proposal.base.text_hash.as_deref() != Some(effective_hash.as_str()) {
        let official = text_hash(&project.source) == proposal.base.text_hash.as_deref().unwrap_or_default();
        let message = if official {
            format!("Proposal {} was written over the official working copy, not over the changes staged since; staging it would undo them.", proposal.id)
        } else {
            format!("Proposal {} was written over another text than the session's working copy (the staged changes over the official source).", proposal.id)
        };
        return Err(ApiError::new(ErrorCode::Conflict, message)
            .hint("regenerate", "Ask the assistant for a new proposal over the session's working copy.")
            .action("discard_staging", &[("session", session_id)])
            .details(serde_json::json!({
                "proposalId": proposal.id,
                "sessionId": session_id,
                "baseHash": proposal.base.text_hash,
                "effectiveHash": effective_hash,
                "changedSince": crate::diff::diff_texts(base_text, effective),
            })));
    }
    let taken: Vec<ProposalHunk> = super::apply::selected_hunks(&proposal, hunks.as_deref())?.into_iter().cloned().collect();
    let effective_source = super::apply::apply_hunks(base_text, &taken)?;
    let now = kernel.now();
    let mut staging = existing.unwrap_or_else(|| Staging {
        session_id: session_id.to_owned(),
        project_id: project.id.clone(),
        base_revision: project.revision,
        base_hash: text_hash(&project.source),
        entries: Vec::new(),
        effective_source: project.source.clone(),
        updated_at: now,
    });
    staging.entries.push(StagedEntry { proposal_id: proposal.id.clone(), hunks: taken.iter().map(|h| h.id.clone()).collect() });
    staging.effective_source = effective_source;
    staging.updated_at = now;
    let mut batch = Batch::new();
    batch.put(&staging)?;
    store.apply(batch, Durability::Durable)?;
    Ok(staging)
}

/// Drops the staged set of `session_id` in its own durable transaction and returns it
/// (`None` when nothing was staged). Nothing official changes; the proposals stay open.
pub fn discard(kernel: &Kernel, session_id: &str) -> Result<Option<Staging>, ApiError> {
    let _guard = kernel.write_lock();
    let existing = load(kernel.store(), session_id)?;
    if existing.is_some() {
        let mut batch = Batch::new();
        batch.delete::<Staging>(session_id.as_bytes().to_vec());
        kernel.store().apply(batch, Durability::Durable)?;
    }
    Ok(existing)
}

/// What applying a staged set made.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StagingApplied {
    /// The one new version (origin `aiProposal`, naming the first staged proposal).
    pub version: Version,
    pub project: Project,
    /// The staged proposals, now accepted or partially accepted, in staging order.
    pub proposals: Vec<Proposal>,
    /// One audit record per proposal, in the same order.
    pub audit: Vec<AuditRecord>,
}

/// Adds the apply of the staged set of `session_id` to `batch` (the caller holds the
/// write lock and commits once): see the module documentation.
///
/// Errors: CONFLICT when nothing is staged, the official working copy is no longer the
/// baseline (with the baseline, the current state and what changed since), its
/// revision is not `expected_revision`, or a staged proposal is no longer open; then
/// nothing is staged.
pub fn stage_apply(kernel: &Kernel, batch: &mut Batch, session_id: &str, expected_revision: u64) -> Result<StagingApplied, ApiError> {
    let store = kernel.store();
    let staging = load(store, session_id)?.filter(|s| !s.entries.is_empty()).ok_or_else(|| nothing_staged(session_id))?;
    let mut project = crate::project::load(store, &staging.project_id)?;
    if !baseline_holds(&staging, &project) {
        return Err(baseline_moved(store, &staging, &project)?);
    }
    if project.revision != expected_revision {
        return Err(crate::project::conflict(&project, expected_revision));
    }
    // Replay the entries over the baseline: each proposal must still be open and
    // apply to exactly the text the ones before it produced.
    let mut text = project.source.clone();
    let mut staged: Vec<(Proposal, Vec<ProposalHunk>)> = Vec::with_capacity(staging.entries.len());
    for entry in &staging.entries {
        let proposal = super::load(store, &entry.proposal_id)?;
        if proposal.status != ProposalStatus::Proposed {
            return Err(super::apply::not_open(&proposal).action("discard_staging", &[("session", session_id)]));
        }
        let Payload::Text { base_text, .. } = &proposal.payload else {
            return Err(ApiError::internal("a staged proposal holds no text"));
        };
        if *base_text != text {
            return Err(ApiError::internal("a staged proposal does not follow the one staged before it"));
        }
        let taken: Vec<ProposalHunk> = entry
            .hunks
            .iter()
            .map(|id| proposal.hunks.iter().find(|h| &h.id == id).cloned())
            .collect::<Option<_>>()
            .ok_or_else(|| ApiError::internal("a staged hunk is not in its proposal"))?;
        text = super::apply::apply_hunks(base_text, &taken)?;
        staged.push((proposal, taken));
    }
    if text != staging.effective_source {
        return Err(ApiError::internal("the staged set's effective source does not match its proposals"));
    }
    let first = &staged[0].0;
    // Summaries only: the ids are in the version's origin, never in human text.
    let listed: Vec<String> = staged.iter().map(|(p, _)| p.summary.chars().take(80).collect::<String>()).collect();
    let message = format!("Applied {} staged AI proposals: {}", staged.len(), listed.join("; "));
    let message_params = std::collections::BTreeMap::from([("count".to_owned(), staged.len().to_string()), ("summaries".to_owned(), listed.join("; "))]);
    project.source = text;
    project.revision += 1;
    let (title, source) = (project.title.clone(), project.source.clone());
    let version = crate::project::versions::stage_next(
        kernel,
        batch,
        &mut project,
        NewVersion {
            title: &title,
            source: &source,
            origin: &super::apply::version_origin(first, &[]),
            message: Some(&message),
            message_id: Some("applied_staged"),
            message_params: Some(&message_params),
        },
    )?;
    // `versions::stage_next` staged the version's sync delivery job in this batch too.
    batch.put(&project)?;
    let person = kernel.author()?;
    let now = kernel.now();
    let (mut proposals, mut audit) = (Vec::with_capacity(staged.len()), Vec::with_capacity(staged.len()));
    for (mut proposal, taken) in staged {
        let partial = taken.len() < proposal.hunks.len();
        proposal.status = if partial { ProposalStatus::PartiallyAccepted } else { ProposalStatus::Accepted };
        proposal.accepted_hunks = taken.iter().map(|h| h.id.clone()).collect();
        proposal.updated_at = now;
        proposal.applied = Some(Applied { version: Some(version.number), draft_revision: None, comment_id: None, choices: Vec::new(), by: person.clone(), at: now });
        let record = AuditRecord {
            id: kernel.new_id("aud"),
            project_id: project.id.clone(),
            proposal_id: proposal.id.clone(),
            kind: proposal.kind,
            action: if partial { AuditAction::PartiallyAccepted } else { AuditAction::Accepted },
            hunks: proposal.accepted_hunks.clone(),
            hunk_hashes: taken.iter().map(|h| h.content_hash.clone()).collect(),
            choices: Vec::new(),
            actor: person.clone(),
            via: "person".to_owned(),
            approval_request_id: None,
            origin: proposal.origin.clone(),
            version: Some(version.number),
            draft_revision: None,
            reason: Some(format!("applied with the staged set of session {session_id}")),
            at: now,
        };
        batch.put(&record)?.put(&proposal)?;
        audit.push(record);
        proposals.push(proposal);
    }
    let ids: Vec<&str> = proposals.iter().map(|p| p.id.as_str()).collect();
    batch.put(&kernel.activity(
        Some(&project.id),
        ActivityKind::ProposalAccepted,
        format!("Applied {} staged AI proposals ({}) as version {} of \"{}\"", proposals.len(), ids.join(", "), version.number, project.title),
    )?)?;
    batch.delete::<Staging>(session_id.as_bytes().to_vec());
    Ok(StagingApplied { version, project, proposals, audit })
}

/// Applies the staged set of `session_id` in one durable transaction under the write
/// lock (see [`stage_apply`]).
pub fn apply(kernel: &Kernel, session_id: &str, expected_revision: u64) -> Result<StagingApplied, ApiError> {
    let _guard = kernel.write_lock();
    let mut batch = Batch::new();
    let applied = stage_apply(kernel, &mut batch, session_id, expected_revision)?;
    kernel.store().apply(batch, Durability::Durable)?;
    Ok(applied)
}

/// A session's staged set as the person reviews it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StagingView {
    /// The staged set (`null` when nothing is staged).
    pub staging: Option<Staging>,
    /// The staged proposals, in staging order.
    pub proposals: Vec<Proposal>,
    /// The source the set was staged on (the official working copy when nothing is staged).
    pub base_source: String,
    /// The source with every staged change applied.
    pub effective_source: String,
    /// `base_source` → `effective_source`.
    pub diff: TextDiffResult,
    /// True when the official working copy moved since the set was staged: applying
    /// it is a CONFLICT; discard it and stage again.
    pub baseline_moved: bool,
}

/// The staged set of `session_id` over `project` (the session's project), for review.
pub fn view(store: &Store, session_id: &str, project: &Project) -> Result<StagingView, ApiError> {
    let staging = load(store, session_id)?.filter(|s| s.project_id == project.id && !s.entries.is_empty());
    let Some(staging) = staging else {
        let diff = crate::diff::diff_texts(&project.source, &project.source);
        return Ok(StagingView {
            staging: None,
            proposals: Vec::new(),
            base_source: project.source.clone(),
            effective_source: project.source.clone(),
            diff,
            baseline_moved: false,
        });
    };
    let proposals = staging.entries.iter().map(|e| super::load(store, &e.proposal_id)).collect::<Result<Vec<_>, _>>()?;
    let base_source = baseline_source(store, &staging)?.ok_or_else(|| ApiError::internal("the staged set's first proposal is not over its baseline"))?;
    Ok(StagingView {
        diff: crate::diff::diff_texts(&base_source, &staging.effective_source),
        baseline_moved: !baseline_holds(&staging, project),
        effective_source: staging.effective_source.clone(),
        base_source,
        proposals,
        staging: Some(staging),
    })
}
