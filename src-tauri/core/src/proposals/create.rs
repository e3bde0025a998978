//! Making proposals: a new one is built against the current state of its target,
//! carries the compatible edits of the open alternatives it supersedes, and is
//! checked; and checklist items are resolved.

use crate::diff::{self, Splice};
use crate::error::{ApiError, ErrorCode};
use crate::kernel::Kernel;
use crate::model::{DraftContent, Project, Timestamp};
use crate::pipeline::Finding;
use crate::store::{keys, Batch, Store};

use super::view::{metadata_text, tags_text};
use super::*;

/// What a new proposal holds, before the engine fills in base, hunks and findings.
#[derive(Debug, Clone)]
pub struct NewProposal {
    pub project_id: String,
    pub kind: ProposalKind,
    pub target: Target,
    pub summary: String,
    pub payload: Payload,
    pub origin: Origin,
}

/// Findings of `title` + `source` for `project`'s platforms and brand.
fn source_findings(kernel: &Kernel, project: &Project, title: &str, source: &str) -> Result<Vec<Finding>, ApiError> {
    let candidate = Project { title: title.to_owned(), source: source.to_owned(), ..project.clone() };
    crate::project::drafts::source_findings_of(kernel, &candidate)
}

/// Findings in `after` that `before` does not have (by check, matched text and
/// severity, counting repeats).
pub fn new_findings(before: &[Finding], after: &[Finding]) -> Vec<Finding> {
    let mut remaining: Vec<(&str, Option<&str>, crate::profiles::Severity)> = before.iter().map(|f| (f.check.as_str(), f.matched.as_deref(), f.severity)).collect();
    let mut out = Vec::new();
    for finding in after {
        let key = (finding.check.as_str(), finding.matched.as_deref(), finding.severity);
        if let Some(position) = remaining.iter().position(|k| *k == key) {
            remaining.swap_remove(position);
        } else {
            out.push(finding.clone());
        }
    }
    out
}

/// Builds a proposal from `new` against the current state of its target, and adds it
/// to `batch`, marking the open proposals of the same target from the same session or
/// run superseded. The caller holds the write lock and commits.
///
/// Errors: NOT_FOUND (project, draft, comment); VALIDATION when the proposal changes
/// nothing, a text is too long, or a payload does not fit its kind; READ_ONLY for a
/// publishing draft.
pub fn stage_create(kernel: &Kernel, batch: &mut Batch, new: NewProposal) -> Result<Proposal, ApiError> {
    let store = kernel.store();
    let project = crate::project::load(store, &new.project_id)?;
    crate::error::required_text("summary", &new.summary, MAX_SUMMARY_CHARS)?;
    let alternatives = open_alternatives(store, &project.id, &new)?;
    let (new, carried) = carry_edits(new, &alternatives);
    let summary = new.summary.clone();
    let Checked { base, hunks: hunks_out, findings, introduced } = check_against_target(kernel, &project, &new)?;
    let now = kernel.now();
    let proposal = Proposal {
        id: kernel.new_id("prp"),
        project_id: project.id.clone(),
        kind: new.kind,
        target: new.target,
        base,
        summary,
        hunks: hunks_out,
        payload: new.payload,
        findings,
        new_findings: introduced,
        origin: new.origin,
        status: ProposalStatus::Proposed,
        accepted_hunks: Vec::new(),
        rejected_hunks: Vec::new(),
        rejection_reason: None,
        superseded_by: None,
        superseded_reason: None,
        carries: Vec::new(),
        applied: None,
        hunk_sources: Vec::new(),
        created_at: now,
        updated_at: now,
    };
    let mut proposal = proposal;
    proposal.carries = carried_attribution(&proposal, &alternatives, &carried);
    attribute_sources(&mut proposal, &alternatives, &carried);
    supersede(batch, alternatives, &carried, &proposal, now)?;
    batch.put(&proposal)?;
    Ok(proposal)
}

/// What a new proposal is computed against, with its hunks and the findings of the
/// text it would produce: checked against the current state of its target, by kind.
struct Checked {
    base: Base,
    hunks: Vec<ProposalHunk>,
    findings: Vec<Finding>,
    introduced: Vec<Finding>,
}

/// Checks `new` against its target in `project` (its payload fits its kind, a text
/// changes something and is not too long, a draft is not publishing) and computes its
/// base, hunks and findings.
fn check_against_target(kernel: &Kernel, project: &Project, new: &NewProposal) -> Result<Checked, ApiError> {
    let store = kernel.store();
    let mut base = Base { head: project.head, revision: project.revision, text_hash: None, draft_revision: None };
    let mut hunks_out = Vec::new();
    let (mut findings, mut introduced) = (Vec::new(), Vec::new());
    match (&new.target, new.kind, &new.payload) {
        (Target::Source, ProposalKind::SourcePatch | ProposalKind::SourceRewrite, Payload::Text { base_text, proposed_text }) => {
            check_text(proposed_text)?;
            if base_text == proposed_text {
                return Err(nothing_changes());
            }
            base.text_hash = Some(text_hash(base_text));
            hunks_out = hunks(base_text, proposed_text);
            let before = source_findings(kernel, project, &project.title, base_text)?;
            findings = source_findings(kernel, project, &project.title, proposed_text)?;
            introduced = new_findings(&before, &findings);
        }
        (Target::Source, ProposalKind::TitleCandidates, Payload::Candidates { candidates }) => {
            check_candidates(candidates, MAX_TITLE_CANDIDATE_CHARS)?;
            base.text_hash = Some(text_hash(&project.title));
            let before = source_findings(kernel, project, &project.title, "")?;
            for candidate in candidates {
                let after = source_findings(kernel, project, &candidate.text, "")?;
                introduced.extend(new_findings(&before, &after));
                findings.extend(after);
            }
        }
        (Target::Draft { platform }, ProposalKind::DraftPatch, Payload::Text { base_text, proposed_text }) => {
            let draft = crate::project::drafts::require(store, &project.id, *platform)?;
            if draft.status == crate::model::DraftStatus::Publishing {
                return Err(crate::project::drafts::read_only(&draft));
            }
            check_text(proposed_text)?;
            if base_text == proposed_text {
                return Err(nothing_changes());
            }
            base.draft_revision = Some(draft.revision);
            base.text_hash = Some(text_hash(base_text));
            hunks_out = hunks(base_text, proposed_text);
            let set = crate::project::drafts::profiles(kernel)?;
            let profile = crate::project::drafts::draft_profile(&set, *platform)?;
            let mut before = crate::pipeline::check_draft(profile, &draft.title, &crate::pipeline::normalize_content(with_patch_text(&draft.content, base_text)));
            findings = crate::pipeline::check_draft(profile, &draft.title, &crate::pipeline::normalize_content(with_patch_text(&draft.content, proposed_text)));
            // The word checks on the draft's text too (spans into the proposed text), so a
            // draft patch carries the banned or absolute terms it introduces.
            let brand = crate::project::brand(store, project)?;
            let html = matches!(draft.content, DraftContent::Html { .. });
            let words = |text: &str| crate::quality::draft_findings(text, html, brand.as_ref(), set.risk_list("ad-law-zh@v2"), set.risk_list("growth-promise@v1"));
            before.extend(words(base_text));
            findings.extend(words(proposed_text));
            introduced = new_findings(&before, &findings);
        }
        (Target::Draft { platform }, ProposalKind::TagCandidates, Payload::Candidates { candidates }) => {
            check_candidates(candidates, 100)?;
            let draft = crate::project::drafts::require(store, &project.id, *platform)?;
            if !matches!(draft.content, DraftContent::Card { .. }) {
                return Err(ApiError::validation("target.platform", format!("{} drafts have no topic tags; tags belong to douyin and xiaohongshu drafts.", platform.as_str())));
            }
            base.draft_revision = Some(draft.revision);
            base.text_hash = Some(text_hash(&tags_text(&draft)));
        }
        (Target::Comment { comment_id }, ProposalKind::CommentReply, Payload::CommentReply { comment_id: payload_comment, body }) => {
            if comment_id != payload_comment {
                return Err(ApiError::validation("payload.commentId", "The reply's comment is not the proposal's target."));
            }
            crate::project::comments::load(store, &project.id, comment_id)?;
            crate::error::required_text("body", body, crate::project::comments::MAX_BODY_CHARS)?;
        }
        (Target::Metadata, ProposalKind::Metadata, Payload::Metadata { change }) => {
            base.text_hash = Some(text_hash(&metadata_text(project)));
            if let Some(title) = &change.title {
                crate::error::required_text("title", title, 200)?;
            }
            if change == &MetadataChange::default() {
                return Err(nothing_changes());
            }
        }
        (Target::Session, ProposalKind::Outline, Payload::Outline { outline }) => {
            crate::error::required_text("outline", outline, 20_000)?;
        }
        (Target::Session, ProposalKind::Checklist, Payload::Checklist { items }) => {
            if items.is_empty() {
                return Err(ApiError::validation("payload.items", "A checklist has at least one item."));
            }
        }
        (target, kind, _) => {
            return Err(ApiError::validation("kind", format!("A {} proposal cannot target {} with this payload.", kind.as_str(), target.key())));
        }
    }
    Ok(Checked { base, hunks: hunks_out, findings, introduced })
}

/// Which sources each hunk of `proposal` came with: its own hunks with every source of
/// the call that proposed it, a hunk carried from an earlier proposal (the same id: the
/// same change of the same base text) with that proposal's sources for it, added to
/// the proposal's list. Nothing is listed when no hunk was carried: every hunk then
/// came with all of them.
fn attribute_sources(proposal: &mut Proposal, alternatives: &[Proposal], carried: &[(String, Vec<String>)]) {
    if carried.is_empty() {
        return;
    }
    let own: Vec<u32> = (0..proposal.origin.sources.len() as u32).collect();
    let mut listed = Vec::with_capacity(proposal.hunks.len());
    for hunk in &proposal.hunks {
        let from = carried.iter().find(|(_, ids)| ids.contains(&hunk.id)).and_then(|(id, _)| alternatives.iter().find(|p| &p.id == id));
        let indices = match from {
            None => own.clone(),
            Some(older) => older
                .sources_of_hunk(&hunk.id)
                .into_iter()
                .map(|source| match proposal.origin.sources.iter().position(|s| s == source) {
                    Some(i) => i as u32,
                    None => {
                        proposal.origin.sources.push(source.clone());
                        (proposal.origin.sources.len() - 1) as u32
                    }
                })
                .collect(),
        };
        listed.push(HunkSources { hunk_id: hunk.id.clone(), sources: indices });
    }
    proposal.hunk_sources = listed;
}

/// What `proposal` carries of the `alternatives` it supersedes (`carried`: per
/// alternative, the ids of the hunks it carries), attributed to where each edit came
/// from: what an alternative carried itself stays attributed to its own origin.
fn carried_attribution(proposal: &Proposal, alternatives: &[Proposal], carried: &[(String, Vec<String>)]) -> Vec<CarriedEdits> {
    // Hunk ids are the same in the new proposal: same base, same position and lines.
    let here = |id: &String| proposal.hunks.iter().any(|h| &h.id == id);
    let mut carries: Vec<CarriedEdits> = Vec::new();
    for older in alternatives {
        let Some((_, ids)) = carried.iter().find(|(id, _)| id == &older.id) else { continue };
        // Flattened: what the older one carried is attributed to where it came from.
        for earlier in &older.carries {
            let hunk_ids: Vec<String> = earlier.hunk_ids.iter().filter(|h| ids.contains(h) && here(h)).cloned().collect();
            if !hunk_ids.is_empty() {
                carries.push(CarriedEdits { hunk_ids, ..earlier.clone() });
            }
        }
        let from_earlier = |h: &String| older.carries.iter().any(|c| c.hunk_ids.contains(h));
        let hunk_ids: Vec<String> = ids.iter().filter(|h| !from_earlier(h) && here(h)).cloned().collect();
        if !hunk_ids.is_empty() {
            carries.push(CarriedEdits { proposal_id: older.id.clone(), summary: older.summary.clone(), hunk_ids });
        }
    }
    carries
}

/// Marks each of `alternatives` superseded by `proposal` in `batch`, with why: merged
/// (all its live hunks carried), overlapped (same base text) or replaced.
fn supersede(batch: &mut Batch, alternatives: Vec<Proposal>, carried: &[(String, Vec<String>)], proposal: &Proposal, now: Timestamp) -> Result<(), ApiError> {
    for mut older in alternatives {
        let live = older.hunks.iter().filter(|h| !older.rejected_hunks.contains(&h.id)).count();
        older.superseded_reason = Some(match carried.iter().find(|(id, _)| id == &older.id) {
            Some((_, ids)) if ids.len() == live => SupersededReason::Merged,
            _ if same_base_text(&older.payload, &proposal.payload) => SupersededReason::Overlapped,
            _ => SupersededReason::Replaced,
        });
        older.status = ProposalStatus::Superseded;
        older.superseded_by = Some(proposal.id.clone());
        older.updated_at = now;
        batch.put(&older)?;
    }
    Ok(())
}

/// The open proposals a new one supersedes: same target and kind family, from the same
/// session or run, not staged in that session (staged proposals are part of its
/// working copy, not alternatives to the new one, which may be written on top of
/// them). Oldest first.
fn open_alternatives(store: &Store, project_id: &str, new: &NewProposal) -> Result<Vec<Proposal>, ApiError> {
    let Some(owner) = new.origin.owner_id() else { return Ok(Vec::new()) };
    let staged: Vec<String> = match staging::load(store, owner)? {
        Some(staged) => staged.entries.into_iter().map(|e| e.proposal_id).collect(),
        None => Vec::new(),
    };
    // The owner's open proposals come from their index, and only the matching ones are
    // read whole: a project holds every proposal ever made, with whole texts.
    let (target, family) = (new.target.key(), new.kind.family());
    let mut alternatives = Vec::new();
    for entry in open_index::of_owner(store, project_id, owner)? {
        if entry.target != target || entry.family != family || staged.contains(&entry.proposal_id) {
            continue;
        }
        let older = store.get::<Proposal>(&keys::child(project_id, &entry.proposal_id))?.ok_or_else(|| missing_indexed(store, &entry.proposal_id))?;
        alternatives.push(older);
    }
    Ok(alternatives)
}

/// An index entry whose proposal is gone: the folder was changed outside Inkstone, and
/// is damaged like any record that does not decode.
fn missing_indexed(store: &Store, proposal_id: &str) -> ApiError {
    crate::store::StoreError::Corrupt { path: store.data_dir().to_path_buf(), detail: format!("the open-proposal index names proposal {proposal_id}, which is not stored") }.into()
}

fn same_base_text(a: &Payload, b: &Payload) -> bool {
    matches!((a, b), (Payload::Text { base_text: a, .. }, Payload::Text { base_text: b, .. }) if a == b)
}

/// `new` with the edits it can carry from `alternatives`, and per alternative the ids
/// of the hunks it carries: from text proposals on the same base text, every live hunk
/// that touches none of the new edits (nor one carried before). A model that proposes
/// the opening and then the ending in one turn thus leaves one proposal with both, each
/// hunk separately acceptable. Touching hunks are never guessed apart: the newer edit
/// replaces the older there.
fn carry_edits(mut new: NewProposal, alternatives: &[Proposal]) -> (NewProposal, Vec<(String, Vec<String>)>) {
    let mut carried: Vec<(String, Vec<String>)> = Vec::new();
    let Payload::Text { base_text, proposed_text } = &mut new.payload else { return (new, carried) };
    if base_text == proposed_text {
        // Refused as changing nothing, whatever could be carried.
        return (new, carried);
    }
    for older in alternatives {
        if !matches!(&older.payload, Payload::Text { base_text: older_base, .. } if older_base == base_text) {
            continue;
        }
        let ours = diff::changes(base_text, proposed_text);
        let theirs: Vec<&ProposalHunk> = older
            .hunks
            .iter()
            .filter(|h| !older.rejected_hunks.contains(&h.id))
            .filter(|h| !ours.iter().any(|c| apply::touches(h.old_start as usize, h.old_len as usize, c.old_start, c.old_len)))
            .collect();
        if theirs.is_empty() {
            continue;
        }
        let mut splices: Vec<Splice<'_>> = ours.iter().map(|c| Splice { old_start: c.old_start, old_len: c.old_len, old_text: &c.old_text, new_text: &c.new_text }).collect();
        splices.extend(theirs.iter().map(|h| h.splice()));
        let Some(text) = diff::apply_changes(base_text, &splices) else { continue };
        *proposed_text = text;
        carried.push((older.id.clone(), theirs.iter().map(|h| h.id.clone()).collect()));
    }
    if !carried.is_empty() {
        let summaries: Vec<&str> = alternatives.iter().filter(|p| carried.iter().any(|(id, _)| id == &p.id)).map(|p| p.summary.as_str()).chain([new.summary.as_str()]).collect();
        new.summary = summaries.join("; ").chars().take(MAX_SUMMARY_CHARS).collect();
    }
    (new, carried)
}

/// Creates a proposal in its own durable transaction (see [`stage_create`]).
pub fn create(kernel: &Kernel, new: NewProposal) -> Result<Proposal, ApiError> {
    let _guard = kernel.write_lock();
    let mut batch = Batch::new();
    let proposal = stage_create(kernel, &mut batch, new)?;
    kernel.store().apply(batch, crate::store::Durability::Durable)?;
    Ok(proposal)
}

fn check_text(text: &str) -> Result<(), ApiError> {
    if text.chars().count() > MAX_TEXT_CHARS {
        return Err(ApiError::validation("text", format!("A proposed text holds at most {MAX_TEXT_CHARS} characters.")));
    }
    Ok(())
}

pub fn check_candidates(candidates: &[Candidate], max_chars: usize) -> Result<(), ApiError> {
    if candidates.is_empty() || candidates.len() > 20 {
        return Err(ApiError::validation("candidates", "Give between 1 and 20 candidates."));
    }
    for (i, c) in candidates.iter().enumerate() {
        crate::error::required_text(&format!("candidates[{i}].text"), &c.text, max_chars)?;
        if c.text.contains(['\n', '\r']) {
            return Err(ApiError::validation(&format!("candidates[{i}].text"), "A candidate is one line."));
        }
    }
    Ok(())
}

fn nothing_changes() -> ApiError {
    ApiError::new(ErrorCode::Validation, "The proposal changes nothing: the proposed text equals the current one.")
        .hint("change_something", "Propose a change that differs from the text.")
}

/// Marks item `item_id` of checklist proposal `proposal_id` resolved (with an optional
/// note), in its own durable transaction. Resolving an item changes nothing official:
/// the checklist is the session's artifact.
///
/// Errors: NOT_FOUND (proposal, item); VALIDATION when the proposal is not a checklist
/// or the note is too long; CONFLICT when the checklist was superseded or rejected.
pub fn resolve_checklist_item(kernel: &Kernel, proposal_id: &str, item_id: &str, note: Option<&str>) -> Result<(Proposal, ChecklistItem), ApiError> {
    let note = match note.map(str::trim) {
        None | Some("") => None,
        Some(note) => Some(crate::error::bounded_text("note", note, MAX_SUMMARY_CHARS)?),
    };
    let _guard = kernel.write_lock();
    let mut proposal = load(kernel.store(), proposal_id)?;
    if matches!(proposal.status, ProposalStatus::Superseded | ProposalStatus::Rejected) {
        let mut error = ApiError::new(ErrorCode::Conflict, format!("Checklist {proposal_id} was {}; its items can no longer be resolved.", proposal.status_name()));
        if let Some(newer) = &proposal.superseded_by {
            error = error.hint_with("open_newer_checklist", format!("Resolve the item on the newer checklist {newer}."), &[("newer", newer)]);
        }
        return Err(error);
    }
    let Payload::Checklist { items } = &mut proposal.payload else {
        return Err(ApiError::validation("proposalId", format!("Proposal {proposal_id} is a {} proposal, not a checklist.", proposal.kind.as_str())));
    };
    let Some(item) = items.iter_mut().find(|i| i.id == item_id) else {
        let ids: Vec<&str> = items.iter().map(|i| i.id.as_str()).collect();
        let ids = ids.join(", ");
        return Err(ApiError::not_found("checklist item", item_id).hint_with("item_ids", format!("The checklist's items are: {ids}."), &[("ids", &ids)]));
    };
    item.resolved = true;
    if note.is_some() {
        item.note = note;
    }
    let item = item.clone();
    proposal.updated_at = kernel.now();
    let mut batch = Batch::new();
    batch.put(&proposal)?;
    kernel.store().apply(batch, crate::store::Durability::Durable)?;
    Ok((proposal, item))
}
