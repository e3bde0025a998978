//! The wire form of the library's records: brand profiles, content templates and
//! media assets, each copied field by field from its stored record.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::Platform;
use crate::model::Timestamp;

/// How a brand speaks; used by checks and, later, by the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
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

impl From<&crate::model::BrandProfile> for BrandProfile {
    fn from(record: &crate::model::BrandProfile) -> Self {
        BrandProfile {
            id: record.id.clone(),
            name: record.name.clone(),
            voice: record.voice.clone(),
            target_audience: record.target_audience.clone(),
            banned_words: record.banned_words.clone(),
            cta: record.cta.clone(),
            link_strategy: record.link_strategy.clone(),
            default_tags: record.default_tags.clone(),
            industry: record.industry.clone(),
            created_at: record.created_at,
            updated_at: record.updated_at,
        }
    }
}

impl From<crate::model::BrandProfile> for BrandProfile {
    fn from(record: crate::model::BrandProfile) -> Self {
        Self::from(&record)
    }
}

impl From<&crate::model::ContentTemplate> for ContentTemplate {
    fn from(record: &crate::model::ContentTemplate) -> Self {
        ContentTemplate {
            id: record.id.clone(),
            name: record.name.clone(),
            title_template: record.title_template.clone(),
            source_template: record.source_template.clone(),
            default_platforms: record.default_platforms.iter().map(Into::into).collect(),
            tags: record.tags.clone(),
            created_at: record.created_at,
            updated_at: record.updated_at,
        }
    }
}

impl From<crate::model::ContentTemplate> for ContentTemplate {
    fn from(record: crate::model::ContentTemplate) -> Self {
        Self::from(&record)
    }
}

impl From<&crate::model::MediaAsset> for MediaAsset {
    fn from(record: &crate::model::MediaAsset) -> Self {
        MediaAsset {
            id: record.id.clone(),
            original_name: record.original_name.clone(),
            file_name: record.file_name.clone(),
            mime_type: record.mime_type.clone(),
            byte_size: record.byte_size,
            width: record.width,
            height: record.height,
            alt_text: record.alt_text.clone(),
            content_hash: record.content_hash.clone(),
            project_ids: record.project_ids.clone(),
            created_at: record.created_at,
        }
    }
}

impl From<crate::model::MediaAsset> for MediaAsset {
    fn from(record: crate::model::MediaAsset) -> Self {
        Self::from(&record)
    }
}
