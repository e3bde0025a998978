//! The wire form of the records in `inkstone-model`: projects, versions, drafts,
//! comments, the activity feed and the library. Each is today's JSON shape of its
//! record, built by a plain field-by-field copy, so a stored record's encoding can change
//! without the UI seeing it.

mod library;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::{Anchor, DraftContent, Platform, ProvenanceSource};
use crate::model::Timestamp;
pub use library::*;

/// The one local workspace. Later it can be linked to a workspace server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Workspace {
    pub id: String,
    pub name: String,
    /// The display name of the local user; the author of everything made here.
    pub display_name: String,
    /// Set while the workspace is linked to a server (`sync.connect`); `null` for local.
    pub server_url: Option<String>,
    pub created_at: Timestamp,
}

/// A piece of writing: a Markdown working copy plus its numbered versions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Project {
    pub id: String,
    pub title: String,
    /// The working copy. Autosaved; not a version until `version.create`.
    pub source: String,
    /// Working-copy revision, bumped by every change to title, source or platforms.
    /// `project.update` with a stale `baseRevision` is a CONFLICT.
    pub revision: u64,
    /// The latest version number; 0 while the project has no version yet.
    pub head: u32,
    pub platforms: Vec<Platform>,
    pub brand_profile_id: Option<String>,
    pub template_id: Option<String>,
    pub archived: bool,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// A project without its source: what lists show. Kept in its own tree, written with
/// every project write, so listing 10,000 projects reads no article text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ProjectSummary {
    pub id: String,
    pub title: String,
    pub revision: u64,
    pub head: u32,
    pub platforms: Vec<Platform>,
    pub brand_profile_id: Option<String>,
    pub template_id: Option<String>,
    pub archived: bool,
    /// The start of the source, at most 120 characters, for previews.
    pub excerpt: String,
    pub n_chars: u32,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// Where a platform draft stands. The person sets it until a publishing integration
/// exists; a `publishing` draft is read-only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum DraftStatus {
    Draft,
    Ready,
    Publishing,
    Published,
}

/// A project's saved draft for one platform: a compile of the source, possibly edited
/// by hand on top. Kept per (project, platform); every change bumps `revision`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PlatformDraft {
    pub project_id: String,
    pub platform: Platform,
    /// 1, 2, 3, ...; a write with a stale `baseRevision` is a CONFLICT.
    pub revision: u32,
    pub status: DraftStatus,
    /// The exact draft profile version of the compile this draft came from.
    pub profile_id: String,
    /// The project working-copy revision that was compiled.
    pub source_revision: u64,
    /// The latest project version when it was compiled; 0 before the first version.
    pub source_version: u32,
    pub title: String,
    pub content: DraftContent,
    /// True once a person edited the compiled text; a recompile then asks first.
    pub hand_edited: bool,
    pub updated_at: Timestamp,
    pub updated_by: String,
}

/// An immutable snapshot of a project's title and source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Version {
    pub id: String,
    pub project_id: String,
    /// 1, 2, 3, ... per project, without gaps.
    pub number: u32,
    pub title: String,
    pub source: String,
    pub author: String,
    pub message: Option<String>,
    /// The language-neutral form of a `message` the core wrote itself (`restored_version`,
    /// `autosnapshot_before_restore`, `restored_checkpoint`, `restored_checkpoint_unnamed`, `autosnapshot_before_checkpoint_unnamed`,
    /// `autosnapshot_before_checkpoint`, `applied_staged`), with its values in
    /// `message_params`; the UI words it in the person's language (the English `message`
    /// stays for the CLI). Absent for a person's message, a proposal's summary, and
    /// versions written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub message_id: Option<String>,
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    #[ts(optional, type = "Record<string, string>")]
    pub message_params: std::collections::BTreeMap<String, String>,
    pub origin: VersionOrigin,
    /// `sha256:` + hex of the title and source; equal content gives an equal hash.
    pub content_hash: String,
    pub created_at: Timestamp,
}

/// Why a version exists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum VersionOrigin {
    /// A person saved it.
    Manual,
    /// A restore of an earlier version made it; `from` is that version's number.
    Restore { from: u32 },
    /// Unsaved working-copy changes kept automatically: before a restore (of a version
    /// or a checkpoint), or, with `conflict_id`, before resolving that sync conflict.
    /// Not an accepted version: it stays in this data folder and is never delivered
    /// to the workspace server.
    #[serde(rename_all = "camelCase")]
    Autosnapshot {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        conflict_id: Option<String>,
    },
    /// A person accepted (all or some hunks of) an AI proposal.
    #[serde(rename_all = "camelCase")]
    AiProposal {
        proposal_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        session_id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        run_id: Option<String>,
        model: String,
        profile_id: String,
        /// What the model had read before it proposed the accepted hunks (see
        /// [`ProvenanceSource`]); empty in versions made before provenance was recorded.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        #[ts(as = "Option<Vec<ProvenanceSource>>", optional)]
        sources: Vec<ProvenanceSource>,
    },
    /// A checkpoint of a session was restored; `checkpoint_id` names it.
    #[serde(rename_all = "camelCase")]
    Checkpoint { checkpoint_id: String },
    /// A colleague's version, pulled from the workspace server, where it is number
    /// `server_number`, pushed by the member `pushed_by`. Never delivered back.
    /// `remote_origin`: how their client made it (`manual`, `restore`, `aiProposal`,
    /// `checkpoint`, `syncResolution`: `inkstone_sync_proto::origin`), when their client
    /// and the server said so (absent from older ones).
    #[serde(rename_all = "camelCase")]
    Pulled {
        server_number: u32,
        pushed_by: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        remote_origin: Option<String>,
    },
    /// The person resolved a sync conflict (`conflict_id`) with this content.
    #[serde(rename_all = "camelCase")]
    SyncResolution { conflict_id: String },
}

/// A version without its source, for lists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct VersionSummary {
    pub id: String,
    pub number: u32,
    pub title: String,
    pub author: String,
    pub message: Option<String>,
    /// See [`Version::message_id`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub message_id: Option<String>,
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    #[ts(optional, type = "Record<string, string>")]
    pub message_params: std::collections::BTreeMap<String, String>,
    pub origin: VersionOrigin,
    pub content_hash: String,
    pub created_at: Timestamp,
    /// Characters in the source (Unicode scalar values).
    pub n_chars: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Comment {
    pub id: String,
    pub project_id: String,
    pub body: String,
    pub anchor: Option<Anchor>,
    /// The text the anchor covered when the comment was made.
    pub quote: Option<String>,
    pub resolved: bool,
    pub author: String,
    /// The comment this one answers, for a reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub reply_to: Option<String>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// One state change, for the activity feed and the audit trail.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Activity {
    pub id: String,
    pub project_id: Option<String>,
    pub actor: String,
    pub kind: ActivityKind,
    /// A short English description; the UI renders `kind` in the user's language.
    pub summary: String,
    pub created_at: Timestamp,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ActivityKind {
    ProjectCreated,
    ProjectRenamed,
    ProjectArchived,
    ProjectUnarchived,
    ProjectSettingsChanged,
    VersionCreated,
    VersionRestored,
    CommentAdded,
    CommentResolved,
    CommentReopened,
    CommentDeleted,
    BrandProfileCreated,
    BrandProfileUpdated,
    BrandProfileDeleted,
    TemplateCreated,
    TemplateUpdated,
    TemplateDeleted,
    MediaAdded,
    WorkspaceRenamed,
    Imported,
    DraftSaved,
    DraftStatusChanged,
    ProposalAccepted,
    ProposalRejected,
    CheckpointRestored,
}

impl From<&crate::model::Workspace> for Workspace {
    fn from(record: &crate::model::Workspace) -> Self {
        Workspace {
            id: record.id.clone(),
            name: record.name.clone(),
            display_name: record.display_name.clone(),
            server_url: record.server_url.clone(),
            created_at: record.created_at,
        }
    }
}

impl From<crate::model::Workspace> for Workspace {
    fn from(record: crate::model::Workspace) -> Self {
        Self::from(&record)
    }
}

impl From<&crate::model::Project> for Project {
    fn from(record: &crate::model::Project) -> Self {
        Project {
            id: record.id.clone(),
            title: record.title.clone(),
            source: record.source.clone(),
            revision: record.revision,
            head: record.head,
            platforms: record.platforms.iter().map(Into::into).collect(),
            brand_profile_id: record.brand_profile_id.clone(),
            template_id: record.template_id.clone(),
            archived: record.archived,
            created_at: record.created_at,
            updated_at: record.updated_at,
        }
    }
}

impl From<crate::model::Project> for Project {
    fn from(record: crate::model::Project) -> Self {
        Self::from(&record)
    }
}

impl From<&crate::model::ProjectSummary> for ProjectSummary {
    fn from(record: &crate::model::ProjectSummary) -> Self {
        ProjectSummary {
            id: record.id.clone(),
            title: record.title.clone(),
            revision: record.revision,
            head: record.head,
            platforms: record.platforms.iter().map(Into::into).collect(),
            brand_profile_id: record.brand_profile_id.clone(),
            template_id: record.template_id.clone(),
            archived: record.archived,
            excerpt: record.excerpt.clone(),
            n_chars: record.n_chars,
            created_at: record.created_at,
            updated_at: record.updated_at,
        }
    }
}

impl From<&crate::model::DraftStatus> for DraftStatus {
    fn from(record: &crate::model::DraftStatus) -> Self {
        match record {
            crate::model::DraftStatus::Draft => Self::Draft,
            crate::model::DraftStatus::Ready => Self::Ready,
            crate::model::DraftStatus::Publishing => Self::Publishing,
            crate::model::DraftStatus::Published => Self::Published,
        }
    }
}

impl From<&crate::model::PlatformDraft> for PlatformDraft {
    fn from(record: &crate::model::PlatformDraft) -> Self {
        PlatformDraft {
            project_id: record.project_id.clone(),
            platform: record.platform.into(),
            revision: record.revision,
            status: (&record.status).into(),
            profile_id: record.profile_id.clone(),
            source_revision: record.source_revision,
            source_version: record.source_version,
            title: record.title.clone(),
            content: (&record.content).into(),
            hand_edited: record.hand_edited,
            updated_at: record.updated_at,
            updated_by: record.updated_by.clone(),
        }
    }
}

impl From<crate::model::PlatformDraft> for PlatformDraft {
    fn from(record: crate::model::PlatformDraft) -> Self {
        Self::from(&record)
    }
}

impl From<&crate::model::Version> for Version {
    fn from(record: &crate::model::Version) -> Self {
        Version {
            id: record.id.clone(),
            project_id: record.project_id.clone(),
            number: record.number,
            title: record.title.clone(),
            source: record.source.clone(),
            author: record.author.clone(),
            message: record.message.clone(),
            message_id: record.message_id.clone(),
            message_params: record.message_params.clone(),
            origin: (&record.origin).into(),
            content_hash: record.content_hash.clone(),
            created_at: record.created_at,
        }
    }
}

impl From<crate::model::Version> for Version {
    fn from(record: crate::model::Version) -> Self {
        Self::from(&record)
    }
}

impl From<&crate::model::VersionOrigin> for VersionOrigin {
    fn from(record: &crate::model::VersionOrigin) -> Self {
        match record {
            crate::model::VersionOrigin::Manual => Self::Manual,
            crate::model::VersionOrigin::Restore { from } => Self::Restore { from: *from },
            crate::model::VersionOrigin::Autosnapshot { conflict_id } => Self::Autosnapshot { conflict_id: conflict_id.clone() },
            crate::model::VersionOrigin::AiProposal { proposal_id, session_id, run_id, model, profile_id, sources } => Self::AiProposal {
                proposal_id: proposal_id.clone(),
                session_id: session_id.clone(),
                run_id: run_id.clone(),
                model: model.clone(),
                profile_id: profile_id.clone(),
                sources: sources.iter().map(Into::into).collect(),
            },
            crate::model::VersionOrigin::Checkpoint { checkpoint_id } => Self::Checkpoint { checkpoint_id: checkpoint_id.clone() },
            crate::model::VersionOrigin::Pulled { server_number, pushed_by, remote_origin } => {
                Self::Pulled { server_number: *server_number, pushed_by: pushed_by.clone(), remote_origin: remote_origin.clone() }
            }
            crate::model::VersionOrigin::SyncResolution { conflict_id } => Self::SyncResolution { conflict_id: conflict_id.clone() },
        }
    }
}

impl From<&crate::model::VersionSummary> for VersionSummary {
    fn from(record: &crate::model::VersionSummary) -> Self {
        VersionSummary {
            id: record.id.clone(),
            number: record.number,
            title: record.title.clone(),
            author: record.author.clone(),
            message: record.message.clone(),
            message_id: record.message_id.clone(),
            message_params: record.message_params.clone(),
            origin: (&record.origin).into(),
            content_hash: record.content_hash.clone(),
            created_at: record.created_at,
            n_chars: record.n_chars,
        }
    }
}

impl From<&crate::model::Comment> for Comment {
    fn from(record: &crate::model::Comment) -> Self {
        Comment {
            id: record.id.clone(),
            project_id: record.project_id.clone(),
            body: record.body.clone(),
            anchor: record.anchor.map(Into::into),
            quote: record.quote.clone(),
            resolved: record.resolved,
            author: record.author.clone(),
            reply_to: record.reply_to.clone(),
            created_at: record.created_at,
            updated_at: record.updated_at,
        }
    }
}

impl From<crate::model::Comment> for Comment {
    fn from(record: crate::model::Comment) -> Self {
        Self::from(&record)
    }
}

impl From<&crate::model::Activity> for Activity {
    fn from(record: &crate::model::Activity) -> Self {
        Activity {
            id: record.id.clone(),
            project_id: record.project_id.clone(),
            actor: record.actor.clone(),
            kind: (&record.kind).into(),
            summary: record.summary.clone(),
            created_at: record.created_at,
        }
    }
}

impl From<&crate::model::ActivityKind> for ActivityKind {
    fn from(record: &crate::model::ActivityKind) -> Self {
        match record {
            crate::model::ActivityKind::ProjectCreated => Self::ProjectCreated,
            crate::model::ActivityKind::ProjectRenamed => Self::ProjectRenamed,
            crate::model::ActivityKind::ProjectArchived => Self::ProjectArchived,
            crate::model::ActivityKind::ProjectUnarchived => Self::ProjectUnarchived,
            crate::model::ActivityKind::ProjectSettingsChanged => Self::ProjectSettingsChanged,
            crate::model::ActivityKind::VersionCreated => Self::VersionCreated,
            crate::model::ActivityKind::VersionRestored => Self::VersionRestored,
            crate::model::ActivityKind::CommentAdded => Self::CommentAdded,
            crate::model::ActivityKind::CommentResolved => Self::CommentResolved,
            crate::model::ActivityKind::CommentReopened => Self::CommentReopened,
            crate::model::ActivityKind::CommentDeleted => Self::CommentDeleted,
            crate::model::ActivityKind::BrandProfileCreated => Self::BrandProfileCreated,
            crate::model::ActivityKind::BrandProfileUpdated => Self::BrandProfileUpdated,
            crate::model::ActivityKind::BrandProfileDeleted => Self::BrandProfileDeleted,
            crate::model::ActivityKind::TemplateCreated => Self::TemplateCreated,
            crate::model::ActivityKind::TemplateUpdated => Self::TemplateUpdated,
            crate::model::ActivityKind::TemplateDeleted => Self::TemplateDeleted,
            crate::model::ActivityKind::MediaAdded => Self::MediaAdded,
            crate::model::ActivityKind::WorkspaceRenamed => Self::WorkspaceRenamed,
            crate::model::ActivityKind::Imported => Self::Imported,
            crate::model::ActivityKind::DraftSaved => Self::DraftSaved,
            crate::model::ActivityKind::DraftStatusChanged => Self::DraftStatusChanged,
            crate::model::ActivityKind::ProposalAccepted => Self::ProposalAccepted,
            crate::model::ActivityKind::ProposalRejected => Self::ProposalRejected,
            crate::model::ActivityKind::CheckpointRestored => Self::CheckpointRestored,
        }
    }
}

impl From<DraftStatus> for crate::model::DraftStatus {
    fn from(status: DraftStatus) -> Self {
        match status {
            DraftStatus::Draft => Self::Draft,
            DraftStatus::Ready => Self::Ready,
            DraftStatus::Publishing => Self::Publishing,
            DraftStatus::Published => Self::Published,
        }
    }
}
