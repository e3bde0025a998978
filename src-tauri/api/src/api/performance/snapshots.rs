//! Metric snapshots typed by hand: added, listed, and the metric keys there are (see
//! [`super`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::PublicationRef;
use crate::api::dto;
use crate::api::{ApiError, Empty, Engine};
use crate::performance as domain;
use crate::performance::metrics::{self, MetricSnapshot, SnapshotSource, SnapshotWindow};
use crate::performance::publications;
use crate::store::{Batch, Durability};

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PerfAddParams {
    pub publication_id: String,
    /// Metric key → the number as the platform shows it (`1.2万`, `10w+`, `12.3%`); an
    /// empty or `-` value means "not reported" and is left out. `extra.<name>` keeps a
    /// number without a canonical key.
    #[ts(type = "Record<string, string>")]
    pub metrics: BTreeMap<String, String>,
    /// When the numbers were read: `2026-03-04 12:30` in the publication's time zone,
    /// or RFC 3339; now when absent.
    #[serde(default)]
    #[ts(optional)]
    pub observed_at: Option<String>,
    /// Cumulative when absent.
    #[serde(default)]
    #[ts(optional)]
    pub window: Option<dto::SnapshotWindow>,
}

pub(in crate::api) fn add_snapshot(engine: &Engine, params: PerfAddParams) -> Result<MetricSnapshot, ApiError> {
    let _guard = engine.write_lock();
    let publication = domain::load_publication(engine.store(), &params.publication_id)?;
    if publication.removed_at.is_some() {
        return Err(ApiError::validation("publicationId", format!("Publication {} is removed; restore it to add metrics.", publication.id))
            .problem("perf.publication_removed", &[])
            .action("restore_publication", &[("publication", &publication.id)]));
    }
    let (values, extras) = metrics::read_manual(&publication, &params.metrics)?;
    let observed_at = match params.observed_at.as_deref().map(str::trim) {
        None | Some("") => engine.now(),
        Some(text) => publications::parse_time("observedAt", text, publications::time_zone("timeZone", &publication.time_zone)?)?,
    };
    let window = params.window.map(SnapshotWindow::from).unwrap_or(SnapshotWindow::Cumulative);
    if let SnapshotWindow::Period { start, end } = &window {
        if start > end {
            return Err(ApiError::validation("window", "The period ends before it starts."));
        }
    }
    let source = SnapshotSource::Manual { author: engine.author()? };
    let mut batch = Batch::new();
    let snapshot = metrics::stage_snapshot(engine, &mut batch, &publication, observed_at, window, source, values, extras)?;
    engine.store().apply(batch, Durability::Durable)?;
    Ok(snapshot)
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PerfListResult {
    pub publication_id: String,
    /// Oldest observation first.
    pub snapshots: Vec<dto::MetricSnapshot>,
}

pub(in crate::api) fn list_snapshots(engine: &Engine, params: PublicationRef) -> Result<PerfListResult, ApiError> {
    let publication = domain::load_publication(engine.store(), &params.publication_id)?;
    Ok(PerfListResult { snapshots: metrics::snapshots(engine.store(), &publication.id)?.iter().map(Into::into).collect(), publication_id: publication.id })
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PerfKeysResult {
    pub keys: Vec<dto::MetricKeyInfo>,
}

pub(in crate::api) fn metric_keys(_engine: &Engine, _params: Empty) -> Result<PerfKeysResult, ApiError> {
    Ok(PerfKeysResult { keys: metrics::METRIC_KEYS.iter().map(Into::into).collect() })
}
