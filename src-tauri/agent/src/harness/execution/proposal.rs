//! Binding a call that applies a proposal to the proposal's exact change: the
//! checks that it can apply at all (it exists, belongs to the project, is open and not
//! stale, its named hunks are open), the target's revision, the hunk-set hash an
//! approval covers, and the change the person is shown with the approval request.

use serde_json::{json, Value};

use super::super::event::{ApprovalChange, ApprovalHunk};
use super::super::log::sha256_ref;
use super::super::tools::normalize;
use crate::error::{ApiError, ErrorCode};
use crate::model::DraftStatus;
use crate::proposals::{Payload, Proposal, ProposalHunk, ProposalStatus, Target};
use crate::store::Store;

/// What the approval of a call that applies a proposal is bound to.
pub(super) struct ProposalBinding {
    /// The current revision of the proposal's target.
    pub(super) target_version: u64,
    /// The proposal id and the sorted content hashes of the selected hunks (or, for a
    /// proposal without hunks, the hash of its payload).
    pub(super) material: Value,
    /// What the person is shown.
    pub(super) change: ApprovalChange,
}

/// Why a call that applies a proposal cannot apply: answered as a tool error without
/// asking the person. Its text is what the model reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum BindError {
    #[error("Name the proposal to apply (`proposalId`).")]
    NoProposalId,
    #[error("There is no proposal `{id}`.")]
    NoSuchProposal { id: String },
    #[error("Proposal {id} belongs to another project; this session can only apply proposals of its own project.")]
    OtherProject { id: String },
    #[error("Proposal {id} is {status}; only an open proposal can be applied.{}", .newer.as_ref().map(|n| format!(" Apply the newer proposal {n} instead.")).unwrap_or_default())]
    NotOpen { id: String, status: String, newer: Option<String> },
    #[error("Proposal {id} is stale: {reason} Read the current text and make a new proposal.")]
    Stale { id: String, reason: String },
    #[error("Proposal {id} ({kind}) has no hunks; leave `hunks` out.")]
    NoHunks { id: String, kind: &'static str },
    #[error("hunks[{index}]: proposal {id} has no hunk {hunk}; its hunks are {}.", .known.join(", "))]
    UnknownHunk { index: usize, id: String, hunk: String, known: Vec<String> },
    #[error("hunks[{index}]: hunk {hunk} was rejected by the person.")]
    RejectedHunk { index: usize, hunk: String },
    #[error("hunks[{index}]: hunk {hunk} is named twice.")]
    NamedTwice { index: usize, hunk: String },
    #[error("No hunk of proposal {id} is selected: name at least one open hunk, or leave `hunks` out.")]
    NoHunkSelected { id: String },
    #[error("The {platform} draft is {status}: only the person can change it (they can accept proposal {id} in the review panel).")]
    DraftClosed { platform: &'static str, status: String, id: String },
    #[error("The {platform} draft of proposal {id} no longer exists.")]
    DraftGone { platform: &'static str, id: String },
    /// Even the bare list of the selected hunks does not fit an approval prompt.
    #[error(
        "Proposal {id} is too large to put to the person in an approval prompt: its {hunks} selected hunks ({kib} KiB of changed text) cannot all be shown there, and a person only approves what they are shown. Nothing was applied. Tell the person to review proposal {id} in the review panel, where they see every hunk and accept what they choose; or apply it in parts by naming at most {fit} hunks in `hunks` per call."
    )]
    TooLarge { id: String, hunks: usize, kib: u64, fit: usize },
}

/// The most bytes the change shown with an approval request takes in its log line.
const CHANGE_BYTES: usize = 36 * 1024;

/// Binds a call naming `proposalId` (and optionally `hunks`) to the proposal's exact
/// change and its target's revision. `Ok(Err(why))`: the call cannot apply (no
/// such proposal, another project, not open, stale, bad hunk ids), answered as a tool
/// error without asking the person.
pub(super) fn bind_proposal(store: &Store, project_id: &str, input: &Value) -> Result<Result<ProposalBinding, BindError>, ApiError> {
    let Some(id) = input["proposalId"].as_str() else { return Ok(Err(BindError::NoProposalId)) };
    let proposal = match crate::proposals::load(store, id) {
        Ok(proposal) => proposal,
        Err(error) if error.code == ErrorCode::NotFound => return Ok(Err(BindError::NoSuchProposal { id: id.to_owned() })),
        Err(error) => return Err(error),
    };
    if proposal.project_id != project_id {
        return Ok(Err(BindError::OtherProject { id: id.to_owned() }));
    }
    if proposal.status != ProposalStatus::Proposed {
        let status = serde_json::to_value(proposal.status).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
        return Ok(Err(BindError::NotOpen { id: id.to_owned(), status, newer: proposal.superseded_by.clone() }));
    }
    let stale = crate::proposals::staleness(store, &proposal)?;
    if stale.stale {
        let reason = stale.reason.unwrap_or_default();
        return Ok(Err(BindError::Stale { id: id.to_owned(), reason }));
    }
    let wanted: Option<Vec<String>> = input["hunks"].as_array().map(|ids| ids.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect());
    let open = |h: &&ProposalHunk| !proposal.rejected_hunks.contains(&h.id);
    let selected: Vec<&ProposalHunk> = match &wanted {
        None => proposal.hunks.iter().filter(open).collect(),
        Some(ids) => {
            if proposal.hunks.is_empty() && !ids.is_empty() {
                return Ok(Err(BindError::NoHunks { id: id.to_owned(), kind: proposal.kind.as_str() }));
            }
            for (i, wanted_id) in ids.iter().enumerate() {
                match proposal.hunks.iter().find(|h| &h.id == wanted_id) {
                    None => {
                        let known = proposal.hunks.iter().map(|h| h.id.clone()).collect();
                        return Ok(Err(BindError::UnknownHunk { index: i, id: id.to_owned(), hunk: wanted_id.clone(), known }));
                    }
                    Some(h) if proposal.rejected_hunks.contains(&h.id) => return Ok(Err(BindError::RejectedHunk { index: i, hunk: wanted_id.clone() })),
                    Some(_) if ids[..i].contains(wanted_id) => return Ok(Err(BindError::NamedTwice { index: i, hunk: wanted_id.clone() })),
                    Some(_) => {}
                }
            }
            proposal.hunks.iter().filter(|h| ids.contains(&h.id)).collect()
        }
    };
    if !proposal.hunks.is_empty() && selected.is_empty() {
        return Ok(Err(BindError::NoHunkSelected { id: id.to_owned() }));
    }
    let project = crate::project::load(store, project_id)?;
    // The version an accept would save (see `ApprovalChange::creates_version`).
    let creates_version = match (&proposal.target, &proposal.payload) {
        (Target::Source, Payload::Text { .. } | Payload::Candidates { .. }) => Some(project.head + 1),
        (Target::Metadata, Payload::Metadata { change }) if change.title.as_ref().is_some_and(|t| *t != project.title) => Some(project.head + 1),
        _ => None,
    };
    let target_version = match &proposal.target {
        Target::Draft { platform } => match crate::project::drafts::load(store, project_id, *platform)? {
            // Not worth asking the person for what the accept refuses the assistant.
            Some(draft) if draft.status != DraftStatus::Draft => {
                let status = serde_json::to_value(draft.status).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
                return Ok(Err(BindError::DraftClosed { platform: platform.as_str(), status, id: id.to_owned() }));
            }
            Some(draft) => u64::from(draft.revision),
            None => return Ok(Err(BindError::DraftGone { platform: platform.as_str(), id: id.to_owned() })),
        },
        _ => project.revision,
    };
    let mut hashes: Vec<&str> = selected.iter().map(|h| h.content_hash.as_str()).collect();
    hashes.sort_unstable();
    let payload = if proposal.hunks.is_empty() { Some(sha256_ref(&serde_json::to_vec(&proposal.payload).unwrap_or_default())) } else { None };
    let material = json!({"proposal": id, "hunkHashes": hashes, "payload": payload});
    let change = match approval_change(&proposal, &selected, input, creates_version, hunk_set_hash(&material)) {
        Ok(change) => change,
        Err(why) => return Ok(Err(why)),
    };
    Ok(Ok(ProposalBinding { target_version, material, change }))
}

/// The hash of everything an approval of `material` (see [`bind_proposal`]) applies.
fn hunk_set_hash(material: &Value) -> String {
    sha256_ref(material.to_string().as_bytes())
}

/// The hunk-set hash a pending `apply_proposal` call (its raw arguments) would apply
/// now: `Ok(None)` when it cannot apply any more (the turn answers it when it goes on).
pub(crate) fn current_hunk_set_hash(store: &Store, project_id: &str, arguments: &str) -> Result<Option<String>, ApiError> {
    let raw = if arguments.trim().is_empty() { "{}" } else { arguments };
    let Ok(input) = serde_json::from_str::<Value>(raw) else { return Ok(None) };
    Ok(match bind_proposal(store, project_id, &normalize(&input))? {
        Ok(binding) => binding.change.hunk_set_hash,
        Err(_) => None,
    })
}

fn short(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        let mut out: String = text.chars().take(max).collect();
        out.push('…');
        out
    }
}

/// What the person is shown with the approval request: the proposal, its target and
/// every selected hunk, within [`CHANGE_BYTES`] (the diffs of the first hunks that
/// fit; the UI reads the others from the proposal by id). When even the bare list of
/// the selected hunks does not fit, the change is not put to the person in a prompt:
/// `Err` is the tool error that says so and sends them to the review panel, so a
/// prompt never shows fewer hunks than the approval applies.
fn approval_change(proposal: &Proposal, selected: &[&ProposalHunk], input: &Value, creates_version: Option<u32>, hunk_set_hash: String) -> Result<ApprovalChange, BindError> {
    let choices: Vec<&str> = input["choices"].as_array().map(|c| c.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
    let detail = match &proposal.payload {
        Payload::Text { .. } => None,
        Payload::Candidates { candidates } if choices.is_empty() => Some(format!("Candidates: {}", candidates.iter().map(|c| c.text.as_str()).collect::<Vec<_>>().join(" | "))),
        Payload::Candidates { .. } => Some(format!("Take: {}", choices.join(" | "))),
        Payload::CommentReply { comment_id, body } => Some(format!("Reply to comment {comment_id}: {body}")),
        Payload::Metadata { change } => Some(format!("Project settings: {}", serde_json::to_string(change).unwrap_or_default())),
        Payload::Outline { outline } => Some(format!("Record the outline as accepted (nothing official changes): {outline}")),
        Payload::Checklist { items } => Some(format!("Record the checklist of {} items as accepted (nothing official changes).", items.len())),
    };
    let total_bytes: u64 = selected.iter().map(|h| (h.old_text.len() + h.new_text.len()) as u64).sum();
    let mut change = ApprovalChange {
        proposal_id: proposal.id.clone(),
        kind: proposal.kind,
        summary: short(&proposal.summary, 1_000),
        target: proposal.target.clone(),
        hunks: Vec::new(),
        omitted_hunks: 0,
        detail: detail.map(|d| short(&d, 4_000)),
        creates_version,
        hunk_set_hash: Some(hunk_set_hash),
        total_hunks: Some(u32::try_from(selected.len()).unwrap_or(u32::MAX)),
        total_bytes: Some(total_bytes),
    };
    let bare: Vec<ApprovalHunk> = selected.iter().map(|h| ApprovalHunk { id: h.id.clone(), content_hash: h.content_hash.clone(), display: None }).collect();
    let bare_bytes: Vec<usize> = bare.iter().map(|h| serde_json::to_vec(h).map(|v| v.len()).unwrap_or(CHANGE_BYTES) + 1).collect();
    let base = serde_json::to_vec(&change).map(|v| v.len()).unwrap_or(CHANGE_BYTES);
    let listed: usize = base + bare_bytes.iter().sum::<usize>();
    if listed > CHANGE_BYTES {
        // How many hunks one prompt can list, for the model to apply in parts.
        let mut room = CHANGE_BYTES.saturating_sub(base);
        let fit = bare_bytes.iter().take_while(|b| room.checked_sub(**b).map(|left| room = left).is_some()).count();
        let kib = total_bytes.div_ceil(1024);
        return Err(BindError::TooLarge { id: proposal.id.clone(), hunks: selected.len(), kib, fit });
    }
    // The diffs of the first hunks that fit; once one does not, the rest are listed
    // without theirs, so the shown diffs are a prefix of the selection.
    let mut used = listed;
    let mut showing = true;
    for ((hunk, bare), bare_bytes) in selected.iter().zip(bare).zip(bare_bytes) {
        if showing {
            let shown = ApprovalHunk { display: Some(hunk.display.clone()), ..bare.clone() };
            let bytes = serde_json::to_vec(&shown).map(|v| v.len()).unwrap_or(CHANGE_BYTES) + 1;
            if used - bare_bytes + bytes <= CHANGE_BYTES {
                used = used - bare_bytes + bytes;
                change.hunks.push(shown);
                continue;
            }
            showing = false;
        }
        change.hunks.push(bare);
    }
    Ok(change)
}
