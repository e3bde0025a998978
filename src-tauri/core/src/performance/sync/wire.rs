//! How performance records look on the wire and which versions the server holds:
//! a publication names its version as the server knows it, and every record's
//! `editId` is the hash of its body, so every copy of the workspace decides alike.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::ApiError;
use crate::model::{Platform, Timestamp, Version, VersionOrigin};
use crate::outbox::DeliveryJob;
use crate::performance::{Distribution, Publication, PublicationFormat, Visibility};
use crate::project::versions;
use crate::store::Store;

/// A publication as the wire carries it: without what each data folder derives
/// (`aiChanges`, the previous version) and with its version as the server knows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct WirePublication {
    pub(super) id: String,
    pub(super) project_id: String,
    pub(super) platform: Platform,
    /// The id the version was pushed under (the pushing client's version id).
    pub(super) version_client_id: String,
    /// The server's number of the version.
    pub(super) version_server_number: u32,
    #[serde(default)]
    pub(super) account_id: Option<String>,
    #[serde(default)]
    pub(super) url: Option<String>,
    #[serde(default)]
    pub(super) platform_post_id: Option<String>,
    pub(super) title: String,
    pub(super) published_at: Timestamp,
    pub(super) time_zone: String,
    pub(super) format: PublicationFormat,
    pub(super) distribution: Distribution,
    pub(super) visibility: Visibility,
    #[serde(default)]
    pub(super) removed_at: Option<Timestamp>,
    pub(super) created_at: Timestamp,
    pub(super) updated_at: Timestamp,
}

pub(super) fn edit_id(body: &str) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(body.as_bytes())))
}

pub(super) fn millis(at: Timestamp) -> u64 {
    u64::try_from(at.timestamp_millis()).unwrap_or(0)
}

/// The server's number of each local version that is on the server: pulled ones, and
/// this folder's own acknowledged ones (by version id).
pub(super) struct ServerNumbers(HashMap<String, (String, u32)>);

impl ServerNumbers {
    pub(super) fn read(store: &Store) -> Result<ServerNumbers, ApiError> {
        let mut by_id = HashMap::new();
        for job in store.scan::<DeliveryJob>(b"")? {
            if let Some(number) = job.server_number {
                by_id.insert(job.version_id.clone(), (job.version_id, number));
            }
        }
        Ok(ServerNumbers(by_id))
    }

    /// The version's (client id, server number), if the server holds it.
    pub(super) fn of(&self, version: &Version) -> Option<(String, u32)> {
        match &version.origin {
            // A pulled version's client id is not kept; the server's number is enough.
            VersionOrigin::Pulled { server_number, .. } => Some((String::new(), *server_number)),
            _ => self.0.get(&version.id).cloned(),
        }
    }
}

pub(super) fn wire_publication(store: &Store, numbers: &ServerNumbers, publication: &Publication) -> Result<Option<WirePublication>, ApiError> {
    let version = match versions::load(store, &publication.project_id, publication.version_number) {
        Ok(v) => v,
        Err(e) if e.code == crate::error::ErrorCode::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let Some((client_id, number)) = numbers.of(&version) else { return Ok(None) };
    Ok(Some(WirePublication {
        id: publication.id.clone(),
        project_id: publication.project_id.clone(),
        platform: publication.platform,
        version_client_id: client_id,
        version_server_number: number,
        account_id: publication.account_id.clone(),
        url: publication.url.clone(),
        platform_post_id: publication.platform_post_id.clone(),
        title: publication.title.clone(),
        published_at: publication.published_at,
        time_zone: publication.time_zone.clone(),
        format: publication.format,
        distribution: publication.distribution,
        visibility: publication.visibility,
        removed_at: publication.removed_at,
        created_at: publication.created_at,
        updated_at: publication.updated_at,
    }))
}

pub(super) fn to_json<T: Serialize>(value: &T) -> Result<String, ApiError> {
    serde_json::to_string(value).map_err(|e| ApiError::internal(format!("a performance record could not be encoded: {e}")))
}
