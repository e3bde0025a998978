//! The wire form of proposals and what is done with them: the stored proposal, its
//! view, audit records, constraints, rejects, rebases and a session's staged set (see
//! [`super`]), with what kind of change a proposal makes and what it changes.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::Finding;
use super::{Hunk, TextDiffResult};
use super::{Platform, ProvenanceSource};
use crate::model::Timestamp;

/// What kind of change a proposal makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ProposalKind {
    SourcePatch,
    SourceRewrite,
    TitleCandidates,
    DraftPatch,
    TagCandidates,
    Outline,
    CommentReply,
    Checklist,
    Metadata,
}

/// What a proposal changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Target {
    /// The project's Markdown source (or, for title candidates, its title).
    Source,
    /// A saved platform draft.
    Draft { platform: Platform },
    /// A comment (a reply to it).
    #[serde(rename_all = "camelCase")]
    Comment { comment_id: String },
    /// The project's title, platforms, brand profile and template.
    Metadata,
    /// Nothing official: an artifact of the session (an outline, a checklist).
    Session,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ProposalStatus {
    Proposed,
    Accepted,
    PartiallyAccepted,
    Rejected,
    Superseded,
}

/// What a proposal was computed against.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Base {
    /// The project's latest version number then.
    pub head: u32,
    /// The project's working-copy revision then.
    pub revision: u64,
    /// `sha256:` of the exact text the proposal changes (the source, the title, the
    /// draft's patch text, the settings), when it changes one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub text_hash: Option<String>,
    /// The draft's revision, for a draft target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub draft_revision: Option<u32>,
}

/// One change of a text proposal: a run of changed lines, without context.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ProposalHunk {
    /// Stable: derived from the change itself.
    pub id: String,
    /// `sha256:` of the position and the exact old and new lines.
    pub content_hash: String,
    /// 0-based line index in the base text, and the number of lines replaced.
    pub old_start: u32,
    pub old_len: u32,
    /// 0-based line index in the proposed text, and the number of lines it has there.
    pub new_start: u32,
    pub new_len: u32,
    pub old_text: String,
    pub new_text: String,
    /// For display: the change with context and word-level emphasis.
    pub display: Hunk,
}

/// A candidate (a title, a tag) with why the model suggests it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Candidate {
    pub text: String,
    #[serde(default)]
    pub rationale: String,
}

/// One item of a publish-readiness checklist.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ChecklistItem {
    pub id: String,
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub platform: Option<Platform>,
    pub blocking: bool,
    pub resolved: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub note: Option<String>,
}

/// Project settings a metadata proposal sets; `None` leaves a field as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct MetadataChange {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub platforms: Option<Vec<Platform>>,
    /// `Some(None)` clears the brand profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "string | null")]
    pub brand_profile_id: Option<Option<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "string | null")]
    pub template_id: Option<Option<String>>,
}

/// What a proposal holds besides its hunks, by kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Payload {
    /// Source patch, source rewrite, draft patch: the base text and the full proposed
    /// text (the hunks are the difference).
    #[serde(rename_all = "camelCase")]
    Text {
        base_text: String,
        proposed_text: String,
    },
    /// Title or tag candidates; the person picks.
    Candidates {
        candidates: Vec<Candidate>,
    },
    Outline {
        outline: String,
    },
    #[serde(rename_all = "camelCase")]
    CommentReply {
        comment_id: String,
        body: String,
    },
    Checklist {
        items: Vec<ChecklistItem>,
    },
    Metadata {
        change: MetadataChange,
    },
}

/// Where a proposal came from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Origin {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub run_id: Option<String>,
    /// The log sequence of the turn's start, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub turn: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tool_use_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub context_snapshot_id: Option<String>,
    pub model: String,
    pub profile_id: String,
    pub prompt_version: String,
    /// The id of every prompt layer of the model call that made it, in order
    /// (`core-identity@v1`, …, `context:<snapshot>`, `apply-policy.optimize@v1`).
    #[serde(default)]
    pub prompt_layers: Vec<String>,
    /// The proposal this one was rebased from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub rebased_from: Option<String>,
    /// What the model had read before it proposed this (`harness::provenance`): the
    /// sources of every hunk, each once; [`Proposal::hunk_sources`] says which hunk
    /// came with which. Empty in proposals made before provenance was recorded, and in
    /// those no model read anything for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<ProvenanceSource>>", optional)]
    pub sources: Vec<ProvenanceSource>,
}

/// Why a proposal was superseded; the successor is `superseded_by`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum SupersededReason {
    /// Its edits did not overlap a newer proposal's on the same base: the successor
    /// carries them too (see [`Proposal::carries`]), so nothing was lost.
    Merged,
    /// A newer proposal changes some of the same lines of the same base: its edits
    /// replace these there; the hunks it does not touch it carries.
    Overlapped,
    /// A newer proposal for the same target that cannot carry these edits (not a text
    /// proposal, or written over another base).
    Replaced,
    /// The person rebased it onto the current text; the successor carries the hunks
    /// that did not conflict.
    Rebased,
}

/// The edits of an earlier proposal a newer one carries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CarriedEdits {
    /// The earlier proposal (now superseded: `merged` when all its hunks are carried,
    /// `overlapped` when the newer one replaced some).
    pub proposal_id: String,
    /// Its summary, for the person.
    pub summary: String,
    /// Its hunks, by their ids in the carrying proposal.
    pub hunk_ids: Vec<String>,
}

/// The sources one hunk came with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct HunkSources {
    pub hunk_id: String,
    /// Indices into the proposal's `origin.sources`.
    pub sources: Vec<u32>,
}

/// What accepting a proposal made.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Applied {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub version: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub draft_revision: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub comment_id: Option<String>,
    /// The candidates taken (titles, tags).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<String>,
    pub by: String,
    pub at: Timestamp,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Proposal {
    pub id: String,
    pub project_id: String,
    pub kind: ProposalKind,
    pub target: Target,
    pub base: Base,
    /// For the person: what changes and why.
    pub summary: String,
    pub hunks: Vec<ProposalHunk>,
    pub payload: Payload,
    /// The quality findings of what the proposal would produce.
    pub findings: Vec<Finding>,
    /// Those of `findings` the base does not have ("this proposal introduces 最佳").
    pub new_findings: Vec<Finding>,
    pub origin: Origin,
    pub status: ProposalStatus,
    /// Hunk ids taken by an accept, and rejected by a reject.
    #[serde(default)]
    pub accepted_hunks: Vec<String>,
    #[serde(default)]
    pub rejected_hunks: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub rejection_reason: Option<String>,
    /// The proposal that superseded this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub superseded_by: Option<String>,
    /// Why it was superseded (absent in proposals superseded before the reason was
    /// recorded: read it as `replaced`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub superseded_reason: Option<SupersededReason>,
    /// Edits of earlier open proposals of the same session and base that this one also
    /// carries (hunks that touch none of its own); those proposals are superseded by
    /// this one, and the carried hunks stay separately acceptable here.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub carries: Vec<CarriedEdits>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub applied: Option<Applied>,
    /// Per hunk, which of `origin.sources` it came with (their indices): a hunk carried
    /// from an earlier proposal keeps the sources of the call that proposed it. A hunk
    /// not listed came with all of them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<HunkSources>>", optional)]
    pub hunk_sources: Vec<HunkSources>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// Whether a proposal can still be applied as it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Staleness {
    pub stale: bool,
    /// Why, for the person, when stale.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub reason: Option<String>,
    /// Not stale, but written over the changes staged in its session (the session's
    /// effective source), not over the official working copy: it can be staged on top
    /// of them, or accepted once they are applied, but not accepted on its own.
    #[serde(default)]
    pub based_on_staged: bool,
}

/// A proposal with what is computed about it now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ProposalView {
    #[serde(flatten)]
    pub proposal: Proposal,
    pub stale: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub stale_reason: Option<String>,
    /// See [`Staleness::based_on_staged`].
    #[serde(default)]
    pub based_on_staged: bool,
}

/// One edit of a text, anchored by quoted text: `find` must occur exactly once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Edit {
    pub find: String,
    pub replace: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
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
    #[ts(optional)]
    pub approval_request_id: Option<String>,
    pub origin: Origin,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub version: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub draft_revision: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub reason: Option<String>,
    pub at: Timestamp,
}

/// A durable constraint of a session or run: the person's reason for a rejection,
/// shown to the model verbatim in every later turn until the person removes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
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

/// What a reject did.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Rejected {
    pub proposal: Proposal,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub constraint: Option<Constraint>,
}

/// A hunk of a stale proposal that overlaps an edit made since.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
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
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
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

/// One staged proposal and the hunks of it that were staged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct StagedEntry {
    pub proposal_id: String,
    pub hunks: Vec<String>,
}

/// The staged set of one session (at most one record per session).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
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

/// A session's staged set as the person reviews it.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
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

impl From<&crate::proposals::ProposalStatus> for ProposalStatus {
    fn from(record: &crate::proposals::ProposalStatus) -> Self {
        match record {
            crate::proposals::ProposalStatus::Proposed => Self::Proposed,
            crate::proposals::ProposalStatus::Accepted => Self::Accepted,
            crate::proposals::ProposalStatus::PartiallyAccepted => Self::PartiallyAccepted,
            crate::proposals::ProposalStatus::Rejected => Self::Rejected,
            crate::proposals::ProposalStatus::Superseded => Self::Superseded,
        }
    }
}

impl From<&crate::proposals::Base> for Base {
    fn from(record: &crate::proposals::Base) -> Self {
        Base { head: record.head, revision: record.revision, text_hash: record.text_hash.clone(), draft_revision: record.draft_revision }
    }
}

impl From<&crate::proposals::ProposalHunk> for ProposalHunk {
    fn from(record: &crate::proposals::ProposalHunk) -> Self {
        ProposalHunk {
            id: record.id.clone(),
            content_hash: record.content_hash.clone(),
            old_start: record.old_start,
            old_len: record.old_len,
            new_start: record.new_start,
            new_len: record.new_len,
            old_text: record.old_text.clone(),
            new_text: record.new_text.clone(),
            display: (&record.display).into(),
        }
    }
}

impl From<&crate::proposals::Candidate> for Candidate {
    fn from(record: &crate::proposals::Candidate) -> Self {
        Candidate { text: record.text.clone(), rationale: record.rationale.clone() }
    }
}

impl From<&crate::proposals::ChecklistItem> for ChecklistItem {
    fn from(record: &crate::proposals::ChecklistItem) -> Self {
        ChecklistItem {
            id: record.id.clone(),
            text: record.text.clone(),
            platform: record.platform.map(Into::into),
            blocking: record.blocking,
            resolved: record.resolved,
            note: record.note.clone(),
        }
    }
}

impl From<&crate::proposals::MetadataChange> for MetadataChange {
    fn from(record: &crate::proposals::MetadataChange) -> Self {
        MetadataChange {
            title: record.title.clone(),
            platforms: record.platforms.as_ref().map(|platforms| platforms.iter().map(Into::into).collect()),
            brand_profile_id: record.brand_profile_id.clone(),
            template_id: record.template_id.clone(),
        }
    }
}

impl From<&crate::proposals::Payload> for Payload {
    fn from(record: &crate::proposals::Payload) -> Self {
        match record {
            crate::proposals::Payload::Text { base_text, proposed_text } => Self::Text { base_text: base_text.clone(), proposed_text: proposed_text.clone() },
            crate::proposals::Payload::Candidates { candidates } => Self::Candidates { candidates: candidates.iter().map(Into::into).collect() },
            crate::proposals::Payload::Outline { outline } => Self::Outline { outline: outline.clone() },
            crate::proposals::Payload::CommentReply { comment_id, body } => Self::CommentReply { comment_id: comment_id.clone(), body: body.clone() },
            crate::proposals::Payload::Checklist { items } => Self::Checklist { items: items.iter().map(Into::into).collect() },
            crate::proposals::Payload::Metadata { change } => Self::Metadata { change: change.into() },
        }
    }
}

impl From<&crate::proposals::Origin> for Origin {
    fn from(record: &crate::proposals::Origin) -> Self {
        Origin {
            session_id: record.session_id.clone(),
            run_id: record.run_id.clone(),
            turn: record.turn,
            tool_use_id: record.tool_use_id.clone(),
            context_snapshot_id: record.context_snapshot_id.clone(),
            model: record.model.clone(),
            profile_id: record.profile_id.clone(),
            prompt_version: record.prompt_version.clone(),
            prompt_layers: record.prompt_layers.clone(),
            rebased_from: record.rebased_from.clone(),
            sources: record.sources.iter().map(Into::into).collect(),
        }
    }
}

impl From<&crate::proposals::SupersededReason> for SupersededReason {
    fn from(record: &crate::proposals::SupersededReason) -> Self {
        match record {
            crate::proposals::SupersededReason::Merged => Self::Merged,
            crate::proposals::SupersededReason::Overlapped => Self::Overlapped,
            crate::proposals::SupersededReason::Replaced => Self::Replaced,
            crate::proposals::SupersededReason::Rebased => Self::Rebased,
        }
    }
}

impl From<&crate::proposals::CarriedEdits> for CarriedEdits {
    fn from(record: &crate::proposals::CarriedEdits) -> Self {
        CarriedEdits { proposal_id: record.proposal_id.clone(), summary: record.summary.clone(), hunk_ids: record.hunk_ids.clone() }
    }
}

impl From<&crate::proposals::HunkSources> for HunkSources {
    fn from(record: &crate::proposals::HunkSources) -> Self {
        HunkSources { hunk_id: record.hunk_id.clone(), sources: record.sources.clone() }
    }
}

impl From<&crate::proposals::Applied> for Applied {
    fn from(record: &crate::proposals::Applied) -> Self {
        Applied {
            version: record.version,
            draft_revision: record.draft_revision,
            comment_id: record.comment_id.clone(),
            choices: record.choices.clone(),
            by: record.by.clone(),
            at: record.at,
        }
    }
}

impl From<&crate::proposals::Proposal> for Proposal {
    fn from(record: &crate::proposals::Proposal) -> Self {
        Proposal {
            id: record.id.clone(),
            project_id: record.project_id.clone(),
            kind: record.kind.into(),
            target: (&record.target).into(),
            base: (&record.base).into(),
            summary: record.summary.clone(),
            hunks: record.hunks.iter().map(Into::into).collect(),
            payload: (&record.payload).into(),
            findings: record.findings.iter().map(Into::into).collect(),
            new_findings: record.new_findings.iter().map(Into::into).collect(),
            origin: (&record.origin).into(),
            status: (&record.status).into(),
            accepted_hunks: record.accepted_hunks.clone(),
            rejected_hunks: record.rejected_hunks.clone(),
            rejection_reason: record.rejection_reason.clone(),
            superseded_by: record.superseded_by.clone(),
            superseded_reason: record.superseded_reason.as_ref().map(Into::into),
            carries: record.carries.iter().map(Into::into).collect(),
            applied: record.applied.as_ref().map(Into::into),
            hunk_sources: record.hunk_sources.iter().map(Into::into).collect(),
            created_at: record.created_at,
            updated_at: record.updated_at,
        }
    }
}

impl From<&crate::proposals::Staleness> for Staleness {
    fn from(record: &crate::proposals::Staleness) -> Self {
        Staleness { stale: record.stale, reason: record.reason.clone(), based_on_staged: record.based_on_staged }
    }
}

impl From<&crate::proposals::ProposalView> for ProposalView {
    fn from(record: &crate::proposals::ProposalView) -> Self {
        ProposalView { proposal: (&record.proposal).into(), stale: record.stale, stale_reason: record.stale_reason.clone(), based_on_staged: record.based_on_staged }
    }
}

impl From<crate::proposals::ProposalView> for ProposalView {
    fn from(record: crate::proposals::ProposalView) -> Self {
        Self::from(&record)
    }
}

impl From<&crate::proposals::Edit> for Edit {
    fn from(record: &crate::proposals::Edit) -> Self {
        Edit { find: record.find.clone(), replace: record.replace.clone() }
    }
}

impl From<&crate::proposals::apply::AuditAction> for AuditAction {
    fn from(record: &crate::proposals::apply::AuditAction) -> Self {
        match record {
            crate::proposals::apply::AuditAction::Accepted => Self::Accepted,
            crate::proposals::apply::AuditAction::PartiallyAccepted => Self::PartiallyAccepted,
            crate::proposals::apply::AuditAction::Rejected => Self::Rejected,
            crate::proposals::apply::AuditAction::HunksRejected => Self::HunksRejected,
            crate::proposals::apply::AuditAction::Rebased => Self::Rebased,
        }
    }
}

impl From<&crate::proposals::apply::AuditRecord> for AuditRecord {
    fn from(record: &crate::proposals::apply::AuditRecord) -> Self {
        AuditRecord {
            id: record.id.clone(),
            project_id: record.project_id.clone(),
            proposal_id: record.proposal_id.clone(),
            kind: record.kind.into(),
            action: (&record.action).into(),
            hunks: record.hunks.clone(),
            hunk_hashes: record.hunk_hashes.clone(),
            choices: record.choices.clone(),
            actor: record.actor.clone(),
            via: record.via.clone(),
            approval_request_id: record.approval_request_id.clone(),
            origin: (&record.origin).into(),
            version: record.version,
            draft_revision: record.draft_revision,
            reason: record.reason.clone(),
            at: record.at,
        }
    }
}

impl From<&crate::proposals::apply::Constraint> for Constraint {
    fn from(record: &crate::proposals::apply::Constraint) -> Self {
        Constraint {
            id: record.id.clone(),
            owner_id: record.owner_id.clone(),
            project_id: record.project_id.clone(),
            text: record.text.clone(),
            proposal_id: record.proposal_id.clone(),
            hunks: record.hunks.clone(),
            created_by: record.created_by.clone(),
            created_at: record.created_at,
        }
    }
}

impl From<&crate::proposals::apply::Rejected> for Rejected {
    fn from(record: &crate::proposals::apply::Rejected) -> Self {
        Rejected { proposal: (&record.proposal).into(), constraint: record.constraint.as_ref().map(Into::into) }
    }
}

impl From<crate::proposals::apply::Rejected> for Rejected {
    fn from(record: crate::proposals::apply::Rejected) -> Self {
        Self::from(&record)
    }
}

impl From<&crate::proposals::apply::RebaseConflict> for RebaseConflict {
    fn from(record: &crate::proposals::apply::RebaseConflict) -> Self {
        RebaseConflict {
            hunk_id: record.hunk_id.clone(),
            old_start: record.old_start,
            old_len: record.old_len,
            their_start: record.their_start,
            their_len: record.their_len,
            their_text: record.their_text.clone(),
        }
    }
}

impl From<&crate::proposals::apply::Rebased> for Rebased {
    fn from(record: &crate::proposals::apply::Rebased) -> Self {
        Rebased {
            previous: (&record.previous).into(),
            proposal: (&record.proposal).into(),
            conflicts: record.conflicts.iter().map(Into::into).collect(),
            carried: record.carried.clone(),
        }
    }
}

impl From<crate::proposals::apply::Rebased> for Rebased {
    fn from(record: crate::proposals::apply::Rebased) -> Self {
        Self::from(&record)
    }
}

impl From<&crate::proposals::staging::StagedEntry> for StagedEntry {
    fn from(record: &crate::proposals::staging::StagedEntry) -> Self {
        StagedEntry { proposal_id: record.proposal_id.clone(), hunks: record.hunks.clone() }
    }
}

impl From<&crate::proposals::staging::Staging> for Staging {
    fn from(record: &crate::proposals::staging::Staging) -> Self {
        Staging {
            session_id: record.session_id.clone(),
            project_id: record.project_id.clone(),
            base_revision: record.base_revision,
            base_hash: record.base_hash.clone(),
            entries: record.entries.iter().map(Into::into).collect(),
            effective_source: record.effective_source.clone(),
            updated_at: record.updated_at,
        }
    }
}

impl From<&crate::proposals::staging::StagingView> for StagingView {
    fn from(record: &crate::proposals::staging::StagingView) -> Self {
        StagingView {
            staging: record.staging.as_ref().map(Into::into),
            proposals: record.proposals.iter().map(Into::into).collect(),
            base_source: record.base_source.clone(),
            effective_source: record.effective_source.clone(),
            diff: (&record.diff).into(),
            baseline_moved: record.baseline_moved,
        }
    }
}

impl From<crate::proposals::staging::StagingView> for StagingView {
    fn from(record: crate::proposals::staging::StagingView) -> Self {
        Self::from(&record)
    }
}

impl From<ProposalStatus> for crate::proposals::ProposalStatus {
    fn from(status: ProposalStatus) -> Self {
        match status {
            ProposalStatus::Proposed => Self::Proposed,
            ProposalStatus::Accepted => Self::Accepted,
            ProposalStatus::PartiallyAccepted => Self::PartiallyAccepted,
            ProposalStatus::Rejected => Self::Rejected,
            ProposalStatus::Superseded => Self::Superseded,
        }
    }
}

impl From<crate::proposals::ProposalKind> for ProposalKind {
    fn from(record: crate::proposals::ProposalKind) -> Self {
        use crate::proposals::ProposalKind as K;
        match record {
            K::SourcePatch => Self::SourcePatch,
            K::SourceRewrite => Self::SourceRewrite,
            K::TitleCandidates => Self::TitleCandidates,
            K::DraftPatch => Self::DraftPatch,
            K::TagCandidates => Self::TagCandidates,
            K::Outline => Self::Outline,
            K::CommentReply => Self::CommentReply,
            K::Checklist => Self::Checklist,
            K::Metadata => Self::Metadata,
        }
    }
}

impl From<ProposalKind> for crate::proposals::ProposalKind {
    fn from(kind: ProposalKind) -> Self {
        match kind {
            ProposalKind::SourcePatch => Self::SourcePatch,
            ProposalKind::SourceRewrite => Self::SourceRewrite,
            ProposalKind::TitleCandidates => Self::TitleCandidates,
            ProposalKind::DraftPatch => Self::DraftPatch,
            ProposalKind::TagCandidates => Self::TagCandidates,
            ProposalKind::Outline => Self::Outline,
            ProposalKind::CommentReply => Self::CommentReply,
            ProposalKind::Checklist => Self::Checklist,
            ProposalKind::Metadata => Self::Metadata,
        }
    }
}

impl From<&crate::proposals::Target> for Target {
    fn from(record: &crate::proposals::Target) -> Self {
        use crate::proposals::Target as T;
        match record {
            T::Source => Self::Source,
            T::Draft { platform } => Self::Draft { platform: (*platform).into() },
            T::Comment { comment_id } => Self::Comment { comment_id: comment_id.clone() },
            T::Metadata => Self::Metadata,
            T::Session => Self::Session,
        }
    }
}
