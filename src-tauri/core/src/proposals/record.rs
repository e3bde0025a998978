//! The proposal record and its parts: kind, status, target, base, hunks, payloads,
//! origin, and what accepting it made.

use serde::{Deserialize, Serialize};

use crate::diff::{self, Hunk, Splice};
use crate::model::{Platform, ProvenanceSource, Timestamp};
use crate::pipeline::Finding;
use crate::store::{keys, sha256_ref, Batch, Kind, Record};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
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

impl ProposalKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ProposalKind::SourcePatch => "source_patch",
            ProposalKind::SourceRewrite => "source_rewrite",
            ProposalKind::TitleCandidates => "title_candidates",
            ProposalKind::DraftPatch => "draft_patch",
            ProposalKind::TagCandidates => "tag_candidates",
            ProposalKind::Outline => "outline",
            ProposalKind::CommentReply => "comment_reply",
            ProposalKind::Checklist => "checklist",
            ProposalKind::Metadata => "metadata",
        }
    }

    /// Which proposals replace each other: a source patch and a source rewrite change
    /// the same text; every other kind only replaces its own kind.
    pub(super) fn family(self) -> &'static str {
        match self {
            ProposalKind::SourcePatch | ProposalKind::SourceRewrite => "source",
            other => other.as_str(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProposalStatus {
    Proposed,
    Accepted,
    PartiallyAccepted,
    Rejected,
    Superseded,
}

/// What a proposal changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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

impl Target {
    pub(super) fn key(&self) -> String {
        match self {
            Target::Source => "source".to_owned(),
            Target::Draft { platform } => format!("draft:{}", platform.as_str()),
            Target::Comment { comment_id } => format!("comment:{comment_id}"),
            Target::Metadata => "metadata".to_owned(),
            Target::Session => "session".to_owned(),
        }
    }
}

/// What a proposal was computed against.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Base {
    /// The project's latest version number then.
    pub head: u32,
    /// The project's working-copy revision then.
    pub revision: u64,
    /// `sha256:` of the exact text the proposal changes (the source, the title, the
    /// draft's patch text, the settings), when it changes one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_hash: Option<String>,
    /// The draft's revision, for a draft target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draft_revision: Option<u32>,
}

/// One change of a text proposal: a run of changed lines, without context.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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

impl ProposalHunk {
    fn from_change(change: diff::Change) -> ProposalHunk {
        let content_hash = sha256_ref(format!("{}\u{0}{}\u{0}{}\u{0}{}", change.old_start, change.old_len, change.old_text, change.new_text).as_bytes());
        let id = format!("hk_{}", &content_hash["sha256:".len().."sha256:".len() + 12]);
        ProposalHunk {
            id,
            content_hash,
            old_start: to_u32(change.old_start),
            old_len: to_u32(change.old_len),
            new_start: to_u32(change.new_start),
            new_len: to_u32(change.new_len),
            old_text: change.old_text,
            new_text: change.new_text,
            display: change.hunk,
        }
    }

    pub fn splice(&self) -> Splice<'_> {
        Splice { old_start: self.old_start as usize, old_len: self.old_len as usize, old_text: &self.old_text, new_text: &self.new_text }
    }
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The hunks of `base` → `proposed`.
pub fn hunks(base: &str, proposed: &str) -> Vec<ProposalHunk> {
    diff::changes(base, proposed).into_iter().map(ProposalHunk::from_change).collect()
}

/// A candidate (a title, a tag) with why the model suggests it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Candidate {
    pub text: String,
    #[serde(default)]
    pub rationale: String,
}

/// One item of a publish-readiness checklist.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChecklistItem {
    pub id: String,
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platform: Option<Platform>,
    pub blocking: bool,
    pub resolved: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Project settings a metadata proposal sets; `None` leaves a field as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MetadataChange {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platforms: Option<Vec<Platform>>,
    /// `Some(None)` clears the brand profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub brand_profile_id: Option<Option<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template_id: Option<Option<String>>,
}

/// What a proposal holds besides its hunks, by kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Origin {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// The log sequence of the turn's start, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
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
    pub rebased_from: Option<String>,
    /// What the model had read before it proposed this (`harness::provenance`): the
    /// sources of every hunk, each once; [`Proposal::hunk_sources`] says which hunk
    /// came with which. Empty in proposals made before provenance was recorded, and in
    /// those no model read anything for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<ProvenanceSource>,
}

impl Origin {
    /// The session or run id.
    pub fn owner_id(&self) -> Option<&str> {
        self.session_id.as_deref().or(self.run_id.as_deref())
    }
}

/// Why a proposal was superseded; the successor is `superseded_by`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HunkSources {
    pub hunk_id: String,
    /// Indices into the proposal's `origin.sources`.
    pub sources: Vec<u32>,
}

/// What accepting a proposal made.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Applied {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draft_revision: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment_id: Option<String>,
    /// The candidates taken (titles, tags).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<String>,
    pub by: String,
    pub at: Timestamp,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
    pub rejection_reason: Option<String>,
    /// The proposal that superseded this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub superseded_by: Option<String>,
    /// Why it was superseded (absent in proposals superseded before the reason was
    /// recorded: read it as `replaced`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub superseded_reason: Option<SupersededReason>,
    /// Edits of earlier open proposals of the same session and base that this one also
    /// carries (hunks that touch none of its own); those proposals are superseded by
    /// this one, and the carried hunks stay separately acceptable here.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub carries: Vec<CarriedEdits>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applied: Option<Applied>,
    /// Per hunk, which of `origin.sources` it came with (their indices): a hunk carried
    /// from an earlier proposal keeps the sources of the call that proposed it. A hunk
    /// not listed came with all of them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hunk_sources: Vec<HunkSources>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

impl Record for Proposal {
    const KIND: Kind = Kind::Proposals;
    fn key(&self) -> Vec<u8> {
        keys::child(&self.project_id, &self.id)
    }

    fn derived(&self, batch: &mut Batch) -> Result<(), crate::store::StoreError> {
        batch.put(&ProposalLocation { proposal_id: self.id.clone(), project_id: self.project_id.clone() })?;
        super::open_index::stage(self, batch)
    }
}

/// Proposal id → project, so a proposal can be read by its id alone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProposalLocation {
    pub proposal_id: String,
    pub project_id: String,
}

impl Record for ProposalLocation {
    const KIND: Kind = Kind::ProposalIndex;
    fn key(&self) -> Vec<u8> {
        self.proposal_id.as_bytes().to_vec()
    }
}

/// Whether a proposal can still be applied as it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Staleness {
    pub stale: bool,
    /// Why, for the person, when stale.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Not stale, but written over the changes staged in its session (the session's
    /// effective source), not over the official working copy: it can be staged on top
    /// of them, or accepted once they are applied, but not accepted on its own.
    #[serde(default)]
    pub based_on_staged: bool,
}

impl Staleness {
    pub(super) fn stale(reason: impl Into<String>) -> Staleness {
        Staleness { stale: true, reason: Some(reason.into()), based_on_staged: false }
    }
}

/// A proposal with what is computed about it now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProposalView {
    #[serde(flatten)]
    pub proposal: Proposal,
    pub stale: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stale_reason: Option<String>,
    /// See [`Staleness::based_on_staged`].
    #[serde(default)]
    pub based_on_staged: bool,
}

impl Proposal {
    /// The sources hunk `hunk_id` came with (all of the proposal's when it is not
    /// listed in `hunk_sources`).
    pub fn sources_of_hunk(&self, hunk_id: &str) -> Vec<&ProvenanceSource> {
        match self.hunk_sources.iter().find(|h| h.hunk_id == hunk_id) {
            Some(listed) => listed.sources.iter().filter_map(|&i| self.origin.sources.get(i as usize)).collect(),
            None => self.origin.sources.iter().collect(),
        }
    }

    /// The sources of the hunks `hunk_ids`, each once, in the proposal's order (all of
    /// them for a proposal without hunks).
    pub fn sources_of_hunks(&self, hunk_ids: &[String]) -> Vec<ProvenanceSource> {
        if self.hunks.is_empty() {
            return self.origin.sources.clone();
        }
        let mut out: Vec<ProvenanceSource> = Vec::new();
        for source in self.origin.sources.iter() {
            if hunk_ids.iter().any(|id| self.sources_of_hunk(id).contains(&source)) && !out.contains(source) {
                out.push(source.clone());
            }
        }
        out
    }

    /// The status as its wire name (`proposed`, `superseded`, ...).
    pub fn status_name(&self) -> &'static str {
        match self.status {
            ProposalStatus::Proposed => "proposed",
            ProposalStatus::Accepted => "accepted",
            ProposalStatus::PartiallyAccepted => "partially_accepted",
            ProposalStatus::Rejected => "rejected",
            ProposalStatus::Superseded => "superseded",
        }
    }
}
