//! Publications: added, read, listed, edited, removed, restored and purged (see
//! [`super`]).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::api::dto;
use crate::api::dto::Platform;
use crate::api::projects::load as load_project;
use crate::api::{ApiError, Engine};
use crate::performance::metrics;
use crate::performance::publications::{self, PublicationFields};
use crate::performance::{self as domain, Publication};
use crate::store::{Batch, Durability};

/// What a person says about a publication. Absent fields take the defaults on add
/// (the project's head version, its title, now, the platform's time zone, format and
/// distribution, public) and stay as they are on edit.
#[derive(Debug, Clone, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PublicationDetails {
    #[serde(default)]
    #[ts(optional)]
    pub version_number: Option<u32>,
    /// An empty id clears the account (on edit).
    #[serde(default)]
    #[ts(optional)]
    pub account_id: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub url: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub platform_post_id: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub title: Option<String>,
    /// `2026-03-04 12:30` in `timeZone`, or RFC 3339 with an offset.
    #[serde(default)]
    #[ts(optional)]
    pub published_at: Option<String>,
    /// An IANA name (`Asia/Shanghai`, `UTC`).
    #[serde(default)]
    #[ts(optional)]
    pub time_zone: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub format: Option<dto::PublicationFormat>,
    #[serde(default)]
    #[ts(optional)]
    pub distribution: Option<dto::Distribution>,
    #[serde(default)]
    #[ts(optional)]
    pub visibility: Option<dto::Visibility>,
}

impl From<PublicationDetails> for PublicationFields {
    fn from(d: PublicationDetails) -> Self {
        PublicationFields {
            version_number: d.version_number,
            account_id: d.account_id.map(Some),
            url: d.url,
            platform_post_id: d.platform_post_id,
            title: d.title,
            published_at: d.published_at,
            time_zone: d.time_zone,
            format: d.format.map(Into::into),
            distribution: d.distribution.map(Into::into),
            visibility: d.visibility.map(Into::into),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PublicationAddParams {
    pub project_id: String,
    pub platform: Platform,
    #[serde(default)]
    #[ts(optional)]
    pub details: Option<PublicationDetails>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PublicationEditParams {
    pub publication_id: String,
    pub details: PublicationDetails,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PublicationRef {
    pub publication_id: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PublicationListParams {
    #[serde(default)]
    #[ts(optional)]
    pub project_id: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub platform: Option<Platform>,
    /// Removed publications too (they are left out otherwise).
    #[serde(default)]
    #[ts(optional)]
    pub include_removed: Option<bool>,
}

/// A publication and its newest snapshot.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PublicationView {
    pub publication: dto::Publication,
    pub latest: Option<dto::MetricSnapshot>,
    pub snapshot_count: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PublicationListResult {
    /// Newest publishing time first.
    pub publications: Vec<PublicationView>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PublicationPurgeParams {
    pub publication_id: String,
    /// Must be `true`: the publication and its snapshots are deleted for good.
    pub confirm: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PublicationPurgeResult {
    pub id: String,
    pub deleted: bool,
    pub snapshots_deleted: u32,
}

pub(in crate::api) fn add_publication(engine: &Engine, params: PublicationAddParams) -> Result<Publication, ApiError> {
    let _guard = engine.write_lock();
    let project = load_project(engine, &params.project_id)?;
    let mut batch = Batch::new();
    let publication = publications::stage_create(engine, &mut batch, &project, params.platform.into(), None, params.details.unwrap_or_default().into())?;
    engine.store().apply(batch, Durability::Durable)?;
    Ok(publication)
}

fn view(engine: &Engine, publication: Publication) -> Result<PublicationView, ApiError> {
    let snapshots = metrics::snapshots(engine.store(), &publication.id)?;
    let snapshot_count = u32::try_from(snapshots.len()).unwrap_or(u32::MAX);
    Ok(PublicationView { publication: publication.into(), latest: snapshots.last().map(Into::into), snapshot_count })
}

pub(in crate::api) fn get_publication(engine: &Engine, params: PublicationRef) -> Result<PublicationView, ApiError> {
    let publication = domain::load_publication(engine.store(), &params.publication_id)?;
    view(engine, publication)
}

pub(in crate::api) fn list_publications(engine: &Engine, params: PublicationListParams) -> Result<PublicationListResult, ApiError> {
    if let Some(project_id) = &params.project_id {
        load_project(engine, project_id)?;
    }
    let include_removed = params.include_removed.unwrap_or(false);
    let mut found: Vec<Publication> = domain::all_publications(engine.store())?
        .into_iter()
        .filter(|p| params.project_id.as_deref().is_none_or(|id| p.project_id == id))
        .filter(|p| params.platform.is_none_or(|platform| p.platform == platform.into()))
        .filter(|p| include_removed || p.removed_at.is_none())
        .collect();
    found.sort_by(|a, b| b.published_at.cmp(&a.published_at).then_with(|| b.id.cmp(&a.id)));
    Ok(PublicationListResult { publications: found.into_iter().map(|p| view(engine, p)).collect::<Result<_, _>>()? })
}

pub(in crate::api) fn edit_publication(engine: &Engine, params: PublicationEditParams) -> Result<Publication, ApiError> {
    let _guard = engine.write_lock();
    let publication = domain::load_publication(engine.store(), &params.publication_id)?;
    let project = load_project(engine, &publication.project_id)?;
    let mut batch = Batch::new();
    let edited = publications::stage_edit(engine, &mut batch, &project, publication, params.details.into())?;
    engine.store().apply(batch, Durability::Durable)?;
    Ok(edited)
}

fn set_removed(engine: &Engine, id: &str, removed: bool) -> Result<Publication, ApiError> {
    let _guard = engine.write_lock();
    let publication = domain::load_publication(engine.store(), id)?;
    if publication.removed_at.is_some() == removed {
        return Ok(publication);
    }
    let project = load_project(engine, &publication.project_id)?;
    let mut batch = Batch::new();
    let written = publications::stage_set_removed(engine, &mut batch, &project, publication, removed)?;
    engine.store().apply(batch, Durability::Durable)?;
    Ok(written)
}

/// Marks a publication removed: hidden from lists and reports, its snapshots kept until
/// `publication.purge` confirms it, or `publication.restore` undoes it.
pub(in crate::api) fn remove_publication(engine: &Engine, params: PublicationRef) -> Result<Publication, ApiError> {
    set_removed(engine, &params.publication_id, true)
}

pub(in crate::api) fn restore_publication(engine: &Engine, params: PublicationRef) -> Result<Publication, ApiError> {
    set_removed(engine, &params.publication_id, false)
}

/// Deletes a removed publication and its snapshots for good.
pub(in crate::api) fn purge_publication(engine: &Engine, params: PublicationPurgeParams) -> Result<PublicationPurgeResult, ApiError> {
    if !params.confirm {
        return Err(ApiError::validation("confirm", "Deleting a publication and its metrics for good needs `confirm: true`.").problem("perf.purge_unconfirmed", &[]));
    }
    let _guard = engine.write_lock();
    let publication = domain::load_publication(engine.store(), &params.publication_id)?;
    let mut batch = Batch::new();
    let n = publications::stage_purge(engine, &mut batch, &publication)?;
    engine.store().apply(batch, Durability::Durable)?;
    Ok(PublicationPurgeResult { id: publication.id, deleted: true, snapshots_deleted: u32::try_from(n).unwrap_or(u32::MAX) })
}
