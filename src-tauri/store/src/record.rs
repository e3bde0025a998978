//! Records: what the store keeps, each of one kind under its key, and the keys of
//! per-project records.

use serde::de::DeserializeOwned;
use serde::Serialize;

use inkstone_model::{Activity, BrandProfile, Comment, ContentTemplate, MediaAsset, PlatformDraft, Project, ProjectSummary, Version, Workspace};

use super::*;

/// A record kept in its own tree under a key it computes.
pub trait Record: Serialize + DeserializeOwned {
    const KIND: Kind;
    fn key(&self) -> Vec<u8>;

    /// Index records derived from this one, written in the same transaction.
    fn derived(&self, _batch: &mut Batch) -> Result<(), StoreError> {
        Ok(())
    }
}

/// Key encodings.
pub mod keys {
    /// `project_id 0x00`: the prefix of every per-project record.
    pub fn project_prefix(project_id: &str) -> Vec<u8> {
        let mut key = project_id.as_bytes().to_vec();
        key.push(0);
        key
    }

    /// `project_id 0x00 number(u32 BE)`: versions sort by number.
    pub fn version(project_id: &str, number: u32) -> Vec<u8> {
        let mut key = project_prefix(project_id);
        key.extend_from_slice(&number.to_be_bytes());
        key
    }

    /// `project_id 0x00 platform`: one draft per platform.
    pub fn platform_draft(project_id: &str, platform: inkstone_model::Platform) -> Vec<u8> {
        let mut key = project_prefix(project_id);
        key.extend_from_slice(platform.as_str().as_bytes());
        key
    }

    /// `session_id 0x00 sequence(u64 BE)`: a session's events sort by sequence.
    pub fn session_event(session_id: &str, sequence: u64) -> Vec<u8> {
        let mut key = project_prefix(session_id);
        key.extend_from_slice(&sequence.to_be_bytes());
        key
    }

    /// `parent_id 0x00 id`: a record kept under its project, session or run, in id
    /// order (ids sort by creation).
    pub fn child(parent_id: &str, id: &str) -> Vec<u8> {
        let mut key = project_prefix(parent_id);
        key.extend_from_slice(id.as_bytes());
        key
    }

    pub fn comment(project_id: &str, comment_id: &str) -> Vec<u8> {
        child(project_id, comment_id)
    }
}

impl Record for Project {
    const KIND: Kind = Kind::Projects;
    fn key(&self) -> Vec<u8> {
        self.id.as_bytes().to_vec()
    }

    /// Every project write also writes its summary, so the two never disagree.
    fn derived(&self, batch: &mut Batch) -> Result<(), StoreError> {
        batch.put(&ProjectSummary::from(self))?;
        Ok(())
    }
}
impl Record for ProjectSummary {
    const KIND: Kind = Kind::ProjectSummaries;
    fn key(&self) -> Vec<u8> {
        self.id.as_bytes().to_vec()
    }
}
impl Record for Version {
    const KIND: Kind = Kind::Versions;
    fn key(&self) -> Vec<u8> {
        keys::version(&self.project_id, self.number)
    }
}
impl Record for PlatformDraft {
    const KIND: Kind = Kind::PlatformDrafts;
    fn key(&self) -> Vec<u8> {
        keys::platform_draft(&self.project_id, self.platform)
    }
}
impl Record for Comment {
    const KIND: Kind = Kind::Comments;
    fn key(&self) -> Vec<u8> {
        keys::comment(&self.project_id, &self.id)
    }
}
impl Record for Activity {
    const KIND: Kind = Kind::Activities;
    fn key(&self) -> Vec<u8> {
        // Activity ids are sortable, so the tree is in creation order.
        self.id.as_bytes().to_vec()
    }
}
impl Record for BrandProfile {
    const KIND: Kind = Kind::BrandProfiles;
    fn key(&self) -> Vec<u8> {
        self.id.as_bytes().to_vec()
    }
}
impl Record for ContentTemplate {
    const KIND: Kind = Kind::Templates;
    fn key(&self) -> Vec<u8> {
        self.id.as_bytes().to_vec()
    }
}
impl Record for MediaAsset {
    const KIND: Kind = Kind::Media;
    fn key(&self) -> Vec<u8> {
        self.id.as_bytes().to_vec()
    }
}
impl Record for Workspace {
    const KIND: Kind = Kind::Meta;
    fn key(&self) -> Vec<u8> {
        META_WORKSPACE.to_vec()
    }
}

pub(super) const META_SCHEMA_VERSION: &[u8] = b"schema_version";
pub(super) const META_WORKSPACE: &[u8] = b"workspace";

/// The schema version, stored in the meta tree.
#[derive(Debug, Serialize, serde::Deserialize)]
pub(super) struct SchemaVersion(pub(super) u32);

impl Record for SchemaVersion {
    const KIND: Kind = Kind::Meta;
    fn key(&self) -> Vec<u8> {
        META_SCHEMA_VERSION.to_vec()
    }
}
