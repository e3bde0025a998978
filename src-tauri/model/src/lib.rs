//! Domain types, and where time and ids come from ([`clock`]). Plain data: no IO, no
//! storage framing, no transport concerns. The bottom layer: every other crate may use
//! it, and it uses none of them.
//!
//! Records serialize in camelCase, the shape the export folder holds; the storage codec
//! frames them separately (see `store::codec`). What the API sends is decided in
//! `inkstone-api` (`api::dto`): wire copies of these records, so a stored field can change
//! without the UI noticing.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

pub mod clock;
pub mod ids;

/// A UTC timestamp; on the wire an RFC 3339 string.
pub type Timestamp = DateTime<Utc>;

/// The one local workspace. Later it can be linked to a workspace server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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

impl From<&Project> for ProjectSummary {
    fn from(project: &Project) -> Self {
        ProjectSummary {
            id: project.id.clone(),
            title: project.title.clone(),
            revision: project.revision,
            head: project.head,
            platforms: project.platforms.clone(),
            brand_profile_id: project.brand_profile_id.clone(),
            template_id: project.template_id.clone(),
            archived: project.archived,
            excerpt: project.source.chars().take(120).collect(),
            n_chars: u32::try_from(project.source.chars().count()).unwrap_or(u32::MAX),
            created_at: project.created_at,
            updated_at: project.updated_at,
        }
    }
}

/// A publishing target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Platform {
    Wechat,
    Zhihu,
    X,
    Douyin,
    Xiaohongshu,
}

impl Platform {
    pub const ALL: [Platform; 5] = [Platform::Wechat, Platform::Zhihu, Platform::X, Platform::Douyin, Platform::Xiaohongshu];

    /// The wire name (`wechat`, `x`, ...), also used in store keys and file names.
    pub fn as_str(self) -> &'static str {
        match self {
            Platform::Wechat => "wechat",
            Platform::Zhihu => "zhihu",
            Platform::X => "x",
            Platform::Douyin => "douyin",
            Platform::Xiaohongshu => "xiaohongshu",
        }
    }
}

/// Where a platform draft stands. The person sets it until a publishing integration
/// exists; a `publishing` draft is read-only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum DraftStatus {
    Draft,
    Ready,
    Publishing,
    Published,
}

/// A project's saved draft for one platform: a compile of the source, possibly edited
/// by hand on top. Kept per (project, platform); every change bumps `revision`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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

/// What a saved or compiled platform draft holds, by the platform's kind of content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum DraftContent {
    /// WeChat: inline-styled HTML and the digest shown in share cards.
    Html { html: String, digest: String },
    /// Zhihu: Markdown in the subset its importer accepts.
    Markdown { markdown: String },
    /// X: one post, or a numbered thread.
    Thread { posts: Vec<Post> },
    /// Douyin and Xiaohongshu: a caption or note body, and topic tags.
    Card { body: String, tags: Vec<String> },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Post {
    pub text: String,
    pub weighted_length: u32,
}

/// An immutable snapshot of a project's title and source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
    pub message_id: Option<String>,
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub message_params: std::collections::BTreeMap<String, String>,
    pub origin: VersionOrigin,
    /// `sha256:` + hex of the title and source; equal content gives an equal hash.
    pub content_hash: String,
    pub created_at: Timestamp,
}

/// Why a version exists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
        conflict_id: Option<String>,
    },
    /// A person accepted (all or some hunks of) an AI proposal.
    #[serde(rename_all = "camelCase")]
    AiProposal {
        proposal_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session_id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        run_id: Option<String>,
        model: String,
        profile_id: String,
        /// What the model had read before it proposed the accepted hunks (see
        /// [`ProvenanceSource`]); empty in versions made before provenance was recorded.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
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
        remote_origin: Option<String>,
    },
    /// The person resolved a sync conflict (`conflict_id`) with this content.
    #[serde(rename_all = "camelCase")]
    SyncResolution { conflict_id: String },
}

/// Something the model had read (in the turn that proposed a change, or in an earlier
/// turn still in its context, summarised or not) before it proposed the change:
/// the answer to "Why this change?". Each names where it can be opened again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ProvenanceSource {
    /// A tool's result: event `sequence` of the log of `owner_id` (a session or a run)
    /// holds what the model was sent; a large result is in the result store under
    /// `result_ref`.
    #[serde(rename_all = "camelCase")]
    ToolResult {
        tool: String,
        tool_use_id: String,
        owner_id: String,
        sequence: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        result_ref: Option<String>,
    },
    /// A search hit a search tool returned: the document (`project_id`, the version or
    /// comment), the span, and the snippet the model read.
    #[serde(rename_all = "camelCase")]
    SearchHit {
        tool: String,
        tool_use_id: String,
        /// As the tool gave it (`prj_…@v3:10-20`).
        reference: String,
        project_id: String,
        title: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        version: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        comment_id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        span: Option<Anchor>,
        snippet: String,
    },
    /// A confirmed memory item in the call's context.
    #[serde(rename_all = "camelCase")]
    Memory { memory_id: String, text: String },
    /// A text pinned in the session (by the person, or an instruction of theirs
    /// carried out of compacted conversation).
    #[serde(rename_all = "camelCase")]
    Pin { pin_id: String, text: String },
    /// The part of the source the person's message was scoped to.
    Selection { span: Anchor, text: String },
    /// A link the person pasted into a message.
    Link { url: String },
    /// The summary of a platform's strongest and weakest posts the model read: in its
    /// call's context, or as the result of the `read_performance` tool call
    /// `tool_use_id`. `snapshot_ids` are the metric snapshots it rests on (evidence).
    #[serde(rename_all = "camelCase")]
    PerformanceSummary {
        platform: Platform,
        snapshot_ids: Vec<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool_use_id: Option<String>,
    },
}

/// A version without its source, for lists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VersionSummary {
    pub id: String,
    pub number: u32,
    pub title: String,
    pub author: String,
    pub message: Option<String>,
    /// See [`Version::message_id`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub message_params: std::collections::BTreeMap<String, String>,
    pub origin: VersionOrigin,
    pub content_hash: String,
    pub created_at: Timestamp,
    /// Characters in the source (Unicode scalar values).
    pub n_chars: u32,
}

impl From<&Version> for VersionSummary {
    fn from(version: &Version) -> Self {
        VersionSummary {
            id: version.id.clone(),
            number: version.number,
            title: version.title.clone(),
            author: version.author.clone(),
            message: version.message.clone(),
            message_id: version.message_id.clone(),
            message_params: version.message_params.clone(),
            origin: version.origin.clone(),
            content_hash: version.content_hash.clone(),
            created_at: version.created_at,
            n_chars: u32::try_from(version.source.chars().count()).unwrap_or(u32::MAX),
        }
    }
}

/// A range in a project's source, in UTF-16 code units (what editors in a web view
/// count), `from <= to`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Anchor {
    pub from: u32,
    pub to: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
    pub reply_to: Option<String>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// One state change, for the activity feed and the audit trail.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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

/// How a brand speaks; used by checks and, later, by the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BrandProfile {
    pub id: String,
    pub name: String,
    pub voice: String,
    pub target_audience: String,
    pub banned_words: Vec<String>,
    pub cta: String,
    pub link_strategy: String,
    pub default_tags: Vec<String>,
    pub industry: String,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// A starting point for new projects.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContentTemplate {
    pub id: String,
    pub name: String,
    pub title_template: String,
    pub source_template: String,
    pub default_platforms: Vec<Platform>,
    pub tags: Vec<String>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// An image kept under the data dir (`media/<id>.<ext>`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MediaAsset {
    pub id: String,
    pub original_name: String,
    /// File name under the data dir's `media/` folder.
    pub file_name: String,
    pub mime_type: String,
    pub byte_size: u64,
    pub width: u32,
    pub height: u32,
    pub alt_text: String,
    /// `sha256:` + hex of the bytes.
    pub content_hash: String,
    pub project_ids: Vec<String>,
    pub created_at: Timestamp,
}
