//! Performance data: where a project's versions were published and how each
//! publication did, recorded by hand or (later) imported from a platform's own export.
//!
//! - [`Account`]: a publishing account of the workspace (platform, name, handle).
//! - [`Publication`]: version N of a project went out on platform P, account A, at time
//!   T (kept in UTC with the IANA time zone it was given in), with its URL, post id,
//!   format, distribution and visibility. Each publication carries the accepted AI
//!   changes of its version since the previous publication of the same project on the
//!   same platform (`ai_changes`), derived from the versions' origins, never typed by a
//!   person, and re-derived for the whole (project, platform) group whenever one of its
//!   publications is added, edited, removed or restored. Removing a publication only
//!   marks it removed; its snapshots stay until the removal is confirmed (`purge`).
//! - [`metrics::MetricSnapshot`]: append-only observations. A metric that was not
//!   reported is absent, never 0; each metric key keeps its basis (WeChat 阅读人数 is
//!   `readers`, 阅读次数 `views`); anything else is a platform extra.
//!
//! Writes add records to a [`Batch`]; the API holds the write lock and commits once.

pub mod account_days;
pub mod cache;
pub mod context;
pub mod dashboard;
pub mod export;
pub mod import;
pub mod metrics;
pub mod numbers;
pub mod publications;
pub mod report;
pub mod sync;

use serde::{Deserialize, Serialize};

use crate::error::ApiError;
use crate::model::{Platform, Timestamp};
use crate::store::{keys, Kind, Record, Store};

/// A publishing account of the workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Account {
    pub id: String,
    pub platform: Platform,
    /// What the person calls it ("Inkstone 官方号").
    pub name: String,
    /// The platform's handle or id for it (`@inkstone`, a WeChat 原始 ID), when given.
    #[serde(default)]
    pub handle: Option<String>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

impl Record for Account {
    const KIND: Kind = Kind::PerfAccounts;
    fn key(&self) -> Vec<u8> {
        self.id.as_bytes().to_vec()
    }
}

/// What kind of piece was published.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum PublicationFormat {
    /// A long-form article (WeChat, Zhihu 文章).
    Article,
    /// A Zhihu answer.
    Answer,
    /// 图文: an image-text note or post (Xiaohongshu, Douyin).
    ImageText,
    Video,
    /// An X thread.
    Thread,
    /// A single short post.
    Post,
    Other,
}

impl PublicationFormat {
    /// The usual format of what Inkstone compiles for `platform`.
    pub fn default_for(platform: Platform) -> PublicationFormat {
        match platform {
            Platform::Wechat | Platform::Zhihu => PublicationFormat::Article,
            Platform::X => PublicationFormat::Post,
            Platform::Douyin | Platform::Xiaohongshu => PublicationFormat::ImageText,
        }
    }
}

/// How a publication reached its readers. The before/after report leaves out boosted
/// and unknown traffic by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Distribution {
    Organic,
    /// Paid or promoted (DOU+, 薯条, X ads).
    Boosted,
    /// WeChat: sent to followers as a notified 群发.
    Notified,
    /// WeChat: published without notifying followers (发表, not 群发).
    Unnotified,
    Unknown,
}

impl Distribution {
    pub fn default_for(platform: Platform) -> Distribution {
        match platform {
            Platform::Wechat => Distribution::Notified,
            _ => Distribution::Organic,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Visibility {
    Public,
    /// Only the author sees it (Douyin 自见).
    Private,
}

/// One accepted AI change a publication's version carries (see [`Publication::ai_changes`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AiChange {
    /// The version the change made.
    pub version_number: u32,
    /// The accepted proposal; absent for a colleague's AI change pulled from the
    /// workspace server (their proposal stays on their machine).
    #[serde(default)]
    pub proposal_id: Option<String>,
    /// The proposal's kind (`source_patch`, `title_candidates`, ...) when it is here.
    #[serde(default)]
    pub proposal_kind: Option<String>,
    /// The drafting session it came from.
    #[serde(default)]
    pub session_id: Option<String>,
    /// The optimize run it came from.
    #[serde(default)]
    pub run_id: Option<String>,
    /// The model that proposed it, when known.
    #[serde(default)]
    pub model: Option<String>,
    /// The member who pushed it, for a pulled change.
    #[serde(default)]
    pub pulled_from: Option<String>,
}

/// A project's version published on a platform.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Publication {
    pub id: String,
    pub project_id: String,
    pub platform: Platform,
    /// The version that went out.
    pub version_number: u32,
    pub version_id: String,
    #[serde(default)]
    pub account_id: Option<String>,
    #[serde(default)]
    pub url: Option<String>,
    /// The platform's id of the post (a WeChat msgid, a note id, an X Post id, ...).
    #[serde(default)]
    pub platform_post_id: Option<String>,
    /// The title as published (rows of an export are matched on it).
    pub title: String,
    /// When it went out, in UTC.
    pub published_at: Timestamp,
    /// The IANA time zone it was published in (`Asia/Shanghai`), for showing and for
    /// reading the platform's local times.
    pub time_zone: String,
    pub format: PublicationFormat,
    pub distribution: Distribution,
    pub visibility: Visibility,
    /// The accepted AI changes in versions after the previous publication of this
    /// project on this platform, up to and including `version_number` (all of them up
    /// to it for the first publication). Derived, never typed.
    pub ai_changes: Vec<AiChange>,
    /// The number of the version the previous publication on this platform carried, the
    /// base `ai_changes` counts from (absent for the first publication).
    #[serde(default)]
    pub previous_version_number: Option<u32>,
    /// Set while removed: hidden from lists and reports, its snapshots kept, until the
    /// removal is confirmed (`publication.purge`) or undone (`publication.restore`).
    #[serde(default)]
    pub removed_at: Option<Timestamp>,
    pub created_by: String,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

impl Record for Publication {
    const KIND: Kind = Kind::Publications;
    fn key(&self) -> Vec<u8> {
        self.id.as_bytes().to_vec()
    }
}

/// The account `id`. Errors: NOT_FOUND.
pub fn load_account(store: &Store, id: &str) -> Result<Account, ApiError> {
    store.get::<Account>(id.as_bytes())?.ok_or_else(|| ApiError::not_found("account", id).action("list_accounts", &[]))
}

/// Every account, oldest first.
pub fn accounts(store: &Store) -> Result<Vec<Account>, ApiError> {
    Ok(store.scan::<Account>(b"")?)
}

/// The publication `id` (removed ones too). Errors: NOT_FOUND.
pub fn load_publication(store: &Store, id: &str) -> Result<Publication, ApiError> {
    store.get::<Publication>(id.as_bytes())?.ok_or_else(|| ApiError::not_found("publication", id).action("list_publications", &[]))
}

/// Every publication, in creation order (removed ones too).
pub fn all_publications(store: &Store) -> Result<Vec<Publication>, ApiError> {
    Ok(store.scan::<Publication>(b"")?)
}

/// The key prefix of a publication's snapshots.
pub fn snapshot_prefix(publication_id: &str) -> Vec<u8> {
    keys::project_prefix(publication_id)
}
