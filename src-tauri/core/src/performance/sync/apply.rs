//! Applying a pulled page of performance records here, record family by record
//! family: accounts and publications last-writer-wins, snapshots and accounts' days
//! written once. Pulled records stage no delivery: they are never sent back.

use std::collections::BTreeMap;

use inkstone_sync_proto::{PerfKind, ServerPerfRecord};
use serde::Deserialize;

use super::wire::{edit_id, millis, to_json, wire_publication, ServerNumbers, WirePublication};
use crate::error::ApiError;
use crate::kernel::Kernel;
use crate::model::{Platform, Project, Version};
use crate::outbox::{perf_delivery_key, PerfDelivery};
use crate::performance::account_days::{self, AccountSnapshot};
use crate::performance::metrics::{self, MetricSnapshot};
use crate::performance::{publications, Account, Publication};
use crate::project::versions;
use crate::store::{Batch, Record, Store};

fn decode<T: for<'de> Deserialize<'de>>(record: &ServerPerfRecord) -> Option<T> {
    serde_json::from_str(record.record.body.as_deref()?).ok()
}

/// The local version a pulled publication names: this folder's own (by id), or the
/// pulled one with the server's number.
fn local_version(store: &Store, project_id: &str, wire: &WirePublication, numbers: &ServerNumbers) -> Result<Option<Version>, ApiError> {
    let all = versions::list(store, project_id)?;
    if let Some(own) = all.iter().find(|v| !wire.version_client_id.is_empty() && v.id == wire.version_client_id) {
        return Ok(Some(own.clone()));
    }
    Ok(all.into_iter().find(|v| numbers.of(v).is_some_and(|(_, n)| n == wire.version_server_number)))
}

/// Applies a page of the server's records to `batch`; returns how many changed here.
/// Records that cannot be placed (a project or version this folder does not hold, a
/// body it cannot read) are skipped and logged: a later page cannot fix them.
pub(super) fn apply_page(kernel: &Kernel, batch: &mut Batch, records: &[ServerPerfRecord]) -> Result<u32, ApiError> {
    let store = kernel.store();
    let numbers = ServerNumbers::read(store)?;
    let mut changed = 0;
    let mut groups = PulledByProject::new();
    for server in records {
        let applied = match server.record.kind {
            PerfKind::Account => apply_account(store, batch, server)?,
            PerfKind::Publication => apply_publication(store, batch, &numbers, server, &mut groups)?,
            PerfKind::Snapshot => apply_snapshot(store, batch, server)?,
            PerfKind::AccountSnapshot => apply_account_day(store, batch, server)?,
        };
        changed += u32::from(applied);
    }
    // A project's pulled publications are staged together (their AI changes are
    // derived here, from the local versions).
    for ((project_id, _), pulled) in groups {
        let project = crate::project::load(store, &project_id)?;
        publications::stage_pulled(kernel, batch, &project, &pulled)?;
    }
    Ok(changed)
}

/// A pulled account (or its deletion, which takes its days along, as on the server)
/// when it is newer than the one here; whether anything changed.
fn apply_account(store: &Store, batch: &mut Batch, server: &ServerPerfRecord) -> Result<bool, ApiError> {
    let record = &server.record;
    let local = store.get::<Account>(record.id.as_bytes())?;
    let local_stamp = match &local {
        Some(a) => Some((millis(a.updated_at), edit_id(&to_json(a)?))),
        None => None,
    };
    if local_stamp.as_ref().is_some_and(|(at, edit)| (*at, edit.as_str()) >= record.stamp()) {
        return Ok(false);
    }
    if record.deleted {
        // Its days go with it, as on the server.
        let days = account_days::stage_delete_all(batch, store, &record.id)?;
        if local.is_some() || days > 0 {
            batch.delete::<Account>(record.id.as_bytes().to_vec());
            return Ok(true);
        }
    } else if let Some(account) = decode::<Account>(server) {
        batch.put(&account)?;
        return Ok(true);
    } else {
        tracing::warn!(id = %record.id, "a pulled account could not be read; skipped");
    }
    Ok(false)
}

/// Pulled publications to stage, by project and platform.
type PulledByProject = BTreeMap<(String, Platform), Vec<Publication>>;

/// A pulled publication (or its deletion) when it is newer than the one here, mapped
/// to this folder's own version and added to `groups` (staged with its project's
/// other pulled publications); whether anything changed.
fn apply_publication(store: &Store, batch: &mut Batch, numbers: &ServerNumbers, server: &ServerPerfRecord, groups: &mut PulledByProject) -> Result<bool, ApiError> {
    let record = &server.record;
    let local = store.get::<Publication>(record.id.as_bytes())?;
    let local_stamp = match &local {
        Some(p) => Some((millis(p.updated_at), wire_publication(store, numbers, p)?.map(|w| to_json(&w)).transpose()?.map(|b| edit_id(&b)).unwrap_or_default())),
        None => None,
    };
    if local_stamp.as_ref().is_some_and(|(at, edit)| (*at, edit.as_str()) >= record.stamp()) {
        return Ok(false);
    }
    if record.deleted {
        let Some(publication) = local else { return Ok(false) };
        for snapshot in metrics::snapshots(store, &publication.id)? {
            metrics::delete_snapshot(batch, &snapshot);
            batch.delete::<PerfDelivery>(perf_delivery_key(PerfKind::Snapshot, &snapshot.id));
        }
        batch.delete::<Publication>(publication.id.as_bytes().to_vec());
        batch.delete::<PerfDelivery>(perf_delivery_key(PerfKind::Publication, &publication.id));
        return Ok(true);
    }
    let Some(wire) = decode::<WirePublication>(server) else {
        tracing::warn!(id = %record.id, "a pulled publication could not be read; skipped");
        return Ok(false);
    };
    if store.get::<Project>(wire.project_id.as_bytes())?.is_none() {
        tracing::warn!(id = %record.id, project = %wire.project_id, "a pulled publication's project is not here; skipped");
        return Ok(false);
    }
    let Some(version) = local_version(store, &wire.project_id, &wire, numbers)? else {
        tracing::warn!(id = %record.id, number = wire.version_server_number, "a pulled publication's version is not here; skipped");
        return Ok(false);
    };
    let publication = Publication {
        id: wire.id,
        project_id: wire.project_id,
        platform: wire.platform,
        version_number: version.number,
        version_id: version.id,
        account_id: wire.account_id,
        url: wire.url,
        platform_post_id: wire.platform_post_id,
        title: wire.title,
        published_at: wire.published_at,
        time_zone: wire.time_zone,
        format: wire.format,
        distribution: wire.distribution,
        visibility: wire.visibility,
        ai_changes: Vec::new(),
        previous_version_number: None,
        removed_at: wire.removed_at,
        // Who added it, as the server knows them (never a claimed name).
        created_by: server.created_by.clone(),
        created_at: wire.created_at,
        updated_at: wire.updated_at,
    };
    groups.entry((publication.project_id.clone(), publication.platform)).or_default().push(publication);
    Ok(true)
}

/// A pulled snapshot of a publication: append-only, one held here already is never
/// replaced.
fn apply_snapshot(store: &Store, batch: &mut Batch, server: &ServerPerfRecord) -> Result<bool, ApiError> {
    let Some(snapshot) = decode::<MetricSnapshot>(server) else {
        tracing::warn!(id = %server.record.id, "a pulled snapshot could not be read; skipped");
        return Ok(false);
    };
    if store.get::<MetricSnapshot>(&snapshot.key())?.is_some() {
        return Ok(false);
    }
    batch.put(&snapshot)?;
    Ok(true)
}

/// A pulled account's day: append-only too; kept even before its account arrives (it
/// shows once the account is here), but not once the account was deleted here and the
/// deletion is still on its way to the server.
fn apply_account_day(store: &Store, batch: &mut Batch, server: &ServerPerfRecord) -> Result<bool, ApiError> {
    let Some(day) = decode::<AccountSnapshot>(server) else {
        tracing::warn!(id = %server.record.id, "a pulled account day could not be read; skipped");
        return Ok(false);
    };
    let account_deleted_here = store.get::<PerfDelivery>(&perf_delivery_key(PerfKind::Account, &day.account_id))?.is_some_and(|d| d.deleted_at.is_some());
    if account_deleted_here || store.get::<AccountSnapshot>(&day.key())?.is_some() {
        return Ok(false);
    }
    batch.put(&day)?;
    Ok(true)
}
