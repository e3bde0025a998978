//! The wire form of proposals and what is done with them (see [`super`]): the stored
//! proposal, its view, what kind of change it makes and what it changes are here; in the
//! folder beside this file what a proposal holds besides its hunks, where it came from and
//! what accepting it made, audit records, constraints, rejects and rebases, and a
//! session's staged set.

mod apply;
mod origin;
mod payload;
mod staging;

pub use apply::*;
pub use origin::*;
pub use payload::*;
pub use staging::*;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::Finding;
use super::Hunk;
use super::Platform;
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
