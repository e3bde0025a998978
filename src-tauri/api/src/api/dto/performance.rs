//! The wire form of performance data (see [`super`]): accounts and publications here,
//! and in the folder beside this file metric snapshots and account days, the
//! dashboard, the before/after report with the summary the AI reads, and an import's
//! preview. The records the store keeps (`crate::performance`) derive serde only.

mod dashboard;
mod import;
mod metrics;
mod report;
#[cfg(test)]
mod tests;

pub use dashboard::*;
pub use import::*;
pub use metrics::*;
pub use report::*;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::Platform;
use crate::model::Timestamp;

/// A publishing account of the workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
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

/// What kind of piece was published.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
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

/// How a publication reached its readers. The before/after report leaves out boosted
/// and unknown traffic by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum Visibility {
    Public,
    /// Only the author sees it (Douyin 自见).
    Private,
}

/// One accepted AI change a publication's version carries (see [`Publication::ai_changes`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
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

impl From<&crate::performance::Account> for Account {
    fn from(record: &crate::performance::Account) -> Self {
        Account {
            id: record.id.clone(),
            platform: record.platform.into(),
            name: record.name.clone(),
            handle: record.handle.clone(),
            created_at: record.created_at,
            updated_at: record.updated_at,
        }
    }
}

impl From<crate::performance::Account> for Account {
    fn from(record: crate::performance::Account) -> Self {
        Self::from(&record)
    }
}

impl From<crate::performance::PublicationFormat> for PublicationFormat {
    fn from(record: crate::performance::PublicationFormat) -> Self {
        use crate::performance::PublicationFormat as F;
        match record {
            F::Article => Self::Article,
            F::Answer => Self::Answer,
            F::ImageText => Self::ImageText,
            F::Video => Self::Video,
            F::Thread => Self::Thread,
            F::Post => Self::Post,
            F::Other => Self::Other,
        }
    }
}

impl From<PublicationFormat> for crate::performance::PublicationFormat {
    fn from(format: PublicationFormat) -> Self {
        match format {
            PublicationFormat::Article => Self::Article,
            PublicationFormat::Answer => Self::Answer,
            PublicationFormat::ImageText => Self::ImageText,
            PublicationFormat::Video => Self::Video,
            PublicationFormat::Thread => Self::Thread,
            PublicationFormat::Post => Self::Post,
            PublicationFormat::Other => Self::Other,
        }
    }
}

impl From<crate::performance::Distribution> for Distribution {
    fn from(record: crate::performance::Distribution) -> Self {
        use crate::performance::Distribution as D;
        match record {
            D::Organic => Self::Organic,
            D::Boosted => Self::Boosted,
            D::Notified => Self::Notified,
            D::Unnotified => Self::Unnotified,
            D::Unknown => Self::Unknown,
        }
    }
}

impl From<Distribution> for crate::performance::Distribution {
    fn from(distribution: Distribution) -> Self {
        match distribution {
            Distribution::Organic => Self::Organic,
            Distribution::Boosted => Self::Boosted,
            Distribution::Notified => Self::Notified,
            Distribution::Unnotified => Self::Unnotified,
            Distribution::Unknown => Self::Unknown,
        }
    }
}

impl From<crate::performance::Visibility> for Visibility {
    fn from(record: crate::performance::Visibility) -> Self {
        use crate::performance::Visibility as V;
        match record {
            V::Public => Self::Public,
            V::Private => Self::Private,
        }
    }
}

impl From<Visibility> for crate::performance::Visibility {
    fn from(visibility: Visibility) -> Self {
        match visibility {
            Visibility::Public => Self::Public,
            Visibility::Private => Self::Private,
        }
    }
}

impl From<&crate::performance::AiChange> for AiChange {
    fn from(record: &crate::performance::AiChange) -> Self {
        AiChange {
            version_number: record.version_number,
            proposal_id: record.proposal_id.clone(),
            proposal_kind: record.proposal_kind.clone(),
            session_id: record.session_id.clone(),
            run_id: record.run_id.clone(),
            model: record.model.clone(),
            pulled_from: record.pulled_from.clone(),
        }
    }
}

impl From<&crate::performance::Publication> for Publication {
    fn from(record: &crate::performance::Publication) -> Self {
        Publication {
            id: record.id.clone(),
            project_id: record.project_id.clone(),
            platform: record.platform.into(),
            version_number: record.version_number,
            version_id: record.version_id.clone(),
            account_id: record.account_id.clone(),
            url: record.url.clone(),
            platform_post_id: record.platform_post_id.clone(),
            title: record.title.clone(),
            published_at: record.published_at,
            time_zone: record.time_zone.clone(),
            format: record.format.into(),
            distribution: record.distribution.into(),
            visibility: record.visibility.into(),
            ai_changes: record.ai_changes.iter().map(Into::into).collect(),
            previous_version_number: record.previous_version_number,
            removed_at: record.removed_at,
            created_by: record.created_by.clone(),
            created_at: record.created_at,
            updated_at: record.updated_at,
        }
    }
}

impl From<crate::performance::Publication> for Publication {
    fn from(record: crate::performance::Publication) -> Self {
        Self::from(&record)
    }
}
