//! The wire form of what accepting, staging and checkpoints make (see [`super`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::Platform;
use super::{AuditRecord, Comment, PlatformDraft, Project, Proposal, Version, VersionSummary};
use crate::model::Timestamp;
/// What an accept made.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Accepted {
    pub proposal: Proposal,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub version: Option<Version>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub draft: Option<PlatformDraft>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub comment: Option<Comment>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub project: Option<Project>,
}

/// What applying a staged set made.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
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

/// Why a checkpoint exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum CheckpointReason {
    /// The person made it.
    Manual,
    /// The assistant made it with `create_checkpoint` (approved by the person).
    Assistant,
    /// The harness, before a turn (kept when the turn produced more than one proposal).
    BeforeTurn,
    /// The harness, after a turn that produced more than one proposal.
    AfterTurn,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Checkpoint {
    pub id: String,
    /// The session or run.
    pub owner_id: String,
    pub project_id: String,
    /// The person's or the assistant's words; for the harness's own checkpoints, the
    /// English wording of `label_id` (kept for the CLI and for checkpoints stored
    /// before `label_id` existed).
    pub label: String,
    /// For a checkpoint the harness named: what the label says, for the UI to word
    /// in the person's language (`turn_before`, `turn_after`, with `labelParams`
    /// `proposals`). Absent for a person's or the assistant's label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub label_id: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[ts(as = "Option<BTreeMap<String, String>>", optional)]
    pub label_params: BTreeMap<String, String>,
    pub reason: CheckpointReason,
    /// The project's latest version number then (0: none yet).
    pub head: u32,
    /// The working-copy revision then.
    pub revision: u64,
    /// The working copy, when it differed from the head version (unsaved changes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub working_title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub working_source: Option<String>,
    /// Every saved draft as it stood (each carries its revision).
    pub drafts: Vec<PlatformDraft>,
    /// The owner's log sequence number when it was made.
    pub sequence: u64,
    pub created_at: Timestamp,
}

/// A draft of the checkpoint that a restore did not put back, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SkippedDraft {
    pub platform: Platform,
    pub reason: String,
}

/// What a checkpoint restore staged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CheckpointRestored {
    pub checkpoint_id: String,
    /// The project after the restore.
    pub project: Project,
    /// The version that keeps unsaved working-copy changes, when there were any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub autosnapshot: Option<VersionSummary>,
    /// The new version whose content is the checkpoint's (origin `checkpoint`).
    pub version: VersionSummary,
    /// Drafts that differed and now hold the checkpoint's content (a new revision each).
    pub drafts_restored: Vec<PlatformDraft>,
    /// Drafts that already held the checkpoint's content.
    pub drafts_unchanged: Vec<Platform>,
    /// Drafts of the checkpoint left as they are (a draft being published).
    pub drafts_skipped: Vec<SkippedDraft>,
    /// Drafts saved after the checkpoint was made: left as they are.
    pub drafts_newer: Vec<Platform>,
    /// True when the owner's staged set was dropped (it sat on the replaced working copy).
    pub staging_discarded: bool,
}

impl From<&crate::proposals::apply::Accepted> for Accepted {
    fn from(record: &crate::proposals::apply::Accepted) -> Self {
        Accepted {
            proposal: (&record.proposal).into(),
            version: record.version.as_ref().map(Into::into),
            draft: record.draft.as_ref().map(Into::into),
            comment: record.comment.as_ref().map(Into::into),
            project: record.project.as_ref().map(Into::into),
        }
    }
}

impl From<crate::proposals::apply::Accepted> for Accepted {
    fn from(record: crate::proposals::apply::Accepted) -> Self {
        Self::from(&record)
    }
}

impl From<&crate::proposals::staging::StagingApplied> for StagingApplied {
    fn from(record: &crate::proposals::staging::StagingApplied) -> Self {
        StagingApplied {
            version: (&record.version).into(),
            project: (&record.project).into(),
            proposals: record.proposals.iter().map(Into::into).collect(),
            audit: record.audit.iter().map(Into::into).collect(),
        }
    }
}

impl From<crate::proposals::staging::StagingApplied> for StagingApplied {
    fn from(record: crate::proposals::staging::StagingApplied) -> Self {
        Self::from(&record)
    }
}

impl From<&crate::proposals::checkpoints::CheckpointReason> for CheckpointReason {
    fn from(record: &crate::proposals::checkpoints::CheckpointReason) -> Self {
        match record {
            crate::proposals::checkpoints::CheckpointReason::Manual => Self::Manual,
            crate::proposals::checkpoints::CheckpointReason::Assistant => Self::Assistant,
            crate::proposals::checkpoints::CheckpointReason::BeforeTurn => Self::BeforeTurn,
            crate::proposals::checkpoints::CheckpointReason::AfterTurn => Self::AfterTurn,
        }
    }
}

impl From<&crate::proposals::checkpoints::Checkpoint> for Checkpoint {
    fn from(record: &crate::proposals::checkpoints::Checkpoint) -> Self {
        Checkpoint {
            id: record.id.clone(),
            owner_id: record.owner_id.clone(),
            project_id: record.project_id.clone(),
            label: record.label.clone(),
            label_id: record.label_id.clone(),
            label_params: record.label_params.clone(),
            reason: (&record.reason).into(),
            head: record.head,
            revision: record.revision,
            working_title: record.working_title.clone(),
            working_source: record.working_source.clone(),
            drafts: record.drafts.iter().map(Into::into).collect(),
            sequence: record.sequence,
            created_at: record.created_at,
        }
    }
}

impl From<crate::proposals::checkpoints::Checkpoint> for Checkpoint {
    fn from(record: crate::proposals::checkpoints::Checkpoint) -> Self {
        Self::from(&record)
    }
}

impl From<&crate::proposals::checkpoints::SkippedDraft> for SkippedDraft {
    fn from(record: &crate::proposals::checkpoints::SkippedDraft) -> Self {
        SkippedDraft { platform: record.platform.into(), reason: record.reason.clone() }
    }
}

impl From<&crate::proposals::checkpoints::CheckpointRestored> for CheckpointRestored {
    fn from(record: &crate::proposals::checkpoints::CheckpointRestored) -> Self {
        CheckpointRestored {
            checkpoint_id: record.checkpoint_id.clone(),
            project: (&record.project).into(),
            autosnapshot: record.autosnapshot.as_ref().map(Into::into),
            version: (&record.version).into(),
            drafts_restored: record.drafts_restored.iter().map(Into::into).collect(),
            drafts_unchanged: record.drafts_unchanged.iter().map(Into::into).collect(),
            drafts_skipped: record.drafts_skipped.iter().map(Into::into).collect(),
            drafts_newer: record.drafts_newer.iter().map(Into::into).collect(),
            staging_discarded: record.staging_discarded,
        }
    }
}

impl From<crate::proposals::checkpoints::CheckpointRestored> for CheckpointRestored {
    fn from(record: crate::proposals::checkpoints::CheckpointRestored) -> Self {
        Self::from(&record)
    }
}
