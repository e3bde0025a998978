//! Performance data travels with the workspace: the client half of the server's
//! `performanceData` feature. Accounts, publications, metric snapshots and accounts'
//! days (account snapshots, with `accountSnapshots`) go to the workspace server like
//! versions and come back into every data folder of the workspace, so a team sees one
//! dashboard.
//!
//! - Every write of a record stages its [`PerfDelivery`] in the same batch
//!   ([`stage_delivery`]), so a crash loses none. One entry per record: it is sent as
//!   the record is when it goes. An ack removes the entry only if no write came since.
//! - Which write wins: accounts and publications are last-writer-wins by
//!   `(updatedAt, editId)` (`editId` the SHA-256 of the record as the wire carries it),
//!   the rule the server applies too (`inkstone_server::storage::perf_decision`), so
//!   every copy ends on the same record; a confirmed removal is a write that deletes.
//!   A snapshot (of a publication or of an account) is append-only: written once,
//!   never replaced on either side. The server acks the same content again as a
//!   resend; other content under the same id as a conflict: the entry stays, marked,
//!   is never sent again, and the status counts it.
//! - A publication names its version as the server knows it (the pushing client's
//!   version id and the server's number), so it goes only once its version is on the
//!   server (it waits otherwise), and a receiving data folder maps it to its own
//!   local version (its own by id, a pulled one by the server's number). Its AI
//!   changes are derived again there from the local versions, never carried.
//! - Pulled records are written without a delivery (never sent back) and move the
//!   sync change marker.
//! - A server without the feature (older) is never asked: the data stays here, and
//!   the status says sync of performance data is unavailable. A server with it but
//!   without `accountSnapshots` gets everything but accounts' days, which wait here
//!   (the status counts them) until it has it; they are never asked for on a pull.
//! - This runs as the last part of a sync cycle ([`cycle_part`], handed to
//!   `sync::Runtime` by the engine: `sync` sits below `performance`).

use std::collections::{BTreeMap, HashMap};

use inkstone_sync_proto::{PerfKind, PerfPushRequest, PerfRecord, ServerPerfRecord, MAX_PERF_RECORDS_PER_PUSH};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::account_days::AccountSnapshot;
use super::metrics::MetricSnapshot;
use super::{Account, Distribution, Publication, PublicationFormat, Visibility};
use crate::error::ApiError;
use crate::kernel::Kernel;
use crate::llm::ApiKey;
use crate::model::{Platform, Project, Timestamp, Version, VersionOrigin};
use crate::outbox::{perf_delivery_key, stage_perf_delivery, DeliveryJob, PerfDelivery};
use crate::project::versions;
use crate::store::{keys, Batch, Durability, Kind, Record, Store};
use crate::sync::cycle::{CycleReport, What};
use crate::sync::transport::{Failure, Transport};
use crate::sync::Connection;

/// Where this data folder stands with the server's performance data (a meta record).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PerfSyncState {
    /// The workspace this state is of: another one starts again from 0.
    pub remote_workspace_id: String,
    /// The workspace's performance cursor read up to.
    pub cursor: u64,
    /// The records written before the connection were queued once.
    pub queued_existing: bool,
    /// The accounts' days written before this was kept (or before the connection)
    /// were queued once: builds before account days travelled staged none.
    #[serde(default)]
    pub queued_account_days: bool,
}

pub const META_PERF_SYNC: &[u8] = b"perf_sync";

impl Record for PerfSyncState {
    const KIND: Kind = Kind::Meta;
    fn key(&self) -> Vec<u8> {
        META_PERF_SYNC.to_vec()
    }
}

/// Stages the delivery of a record written in `batch` (nothing when the workspace is
/// not linked to a server). `deleted`: the record was deleted for good at that time.
pub fn stage_delivery(kernel: &Kernel, batch: &mut Batch, kind: PerfKind, id: &str, parent: Option<(&str, Option<&str>)>, deleted: Option<Timestamp>) -> Result<(), ApiError> {
    let workspace = kernel.workspace()?;
    let now = kernel.now();
    let delivery = PerfDelivery {
        kind,
        id: id.to_owned(),
        project_id: parent.map(|(project, _)| project.to_owned()),
        publication_id: parent.and_then(|(_, publication)| publication.map(str::to_owned)),
        account_id: None,
        deleted_at: deleted,
        edit: kernel.new_id("pde"),
        attempts: 0,
        last_error: None,
        conflict: false,
        queued_at: now,
    };
    stage_perf_delivery(batch, &workspace, delivery)?;
    Ok(())
}

/// Stages the delivery of an account's day written in `batch` (nothing when the
/// workspace is not linked to a server).
pub fn stage_day_delivery(kernel: &Kernel, batch: &mut Batch, day: &AccountSnapshot) -> Result<(), ApiError> {
    let workspace = kernel.workspace()?;
    let delivery = PerfDelivery {
        kind: PerfKind::AccountSnapshot,
        id: day.id.clone(),
        project_id: None,
        publication_id: None,
        account_id: Some(day.account_id.clone()),
        deleted_at: None,
        edit: kernel.new_id("pde"),
        attempts: 0,
        last_error: None,
        conflict: false,
        queued_at: kernel.now(),
    };
    stage_perf_delivery(batch, &workspace, delivery)?;
    Ok(())
}

/// Accounts' days read once per account during a push (an account's days sit under
/// its id, by date: one scan serves all of them).
#[derive(Default)]
struct Days(HashMap<String, HashMap<String, AccountSnapshot>>);

impl Days {
    fn get(&mut self, store: &Store, account_id: &str, id: &str) -> Result<Option<AccountSnapshot>, ApiError> {
        if !self.0.contains_key(account_id) {
            let all = super::account_days::snapshots(store, account_id)?.into_iter().map(|d| (d.id.clone(), d)).collect();
            self.0.insert(account_id.to_owned(), all);
        }
        Ok(self.0.get(account_id).and_then(|days| days.get(id)).cloned())
    }
}

/// A publication as the wire carries it: without what each data folder derives
/// (`aiChanges`, the previous version) and with its version as the server knows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WirePublication {
    id: String,
    project_id: String,
    platform: Platform,
    /// The id the version was pushed under (the pushing client's version id).
    version_client_id: String,
    /// The server's number of the version.
    version_server_number: u32,
    #[serde(default)]
    account_id: Option<String>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    platform_post_id: Option<String>,
    title: String,
    published_at: Timestamp,
    time_zone: String,
    format: PublicationFormat,
    distribution: Distribution,
    visibility: Visibility,
    #[serde(default)]
    removed_at: Option<Timestamp>,
    created_at: Timestamp,
    updated_at: Timestamp,
}

fn edit_id(body: &str) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(body.as_bytes())))
}

fn millis(at: Timestamp) -> u64 {
    u64::try_from(at.timestamp_millis()).unwrap_or(0)
}

/// The server's number of each local version that is on the server: pulled ones, and
/// this folder's own acknowledged ones (by version id).
struct ServerNumbers(HashMap<String, (String, u32)>);

impl ServerNumbers {
    fn read(store: &Store) -> Result<ServerNumbers, ApiError> {
        let mut by_id = HashMap::new();
        for job in store.scan::<DeliveryJob>(b"")? {
            if let Some(number) = job.server_number {
                by_id.insert(job.version_id.clone(), (job.version_id, number));
            }
        }
        Ok(ServerNumbers(by_id))
    }

    /// The version's (client id, server number), if the server holds it.
    fn of(&self, version: &Version) -> Option<(String, u32)> {
        match &version.origin {
            // A pulled version's client id is not kept; the server's number is enough.
            VersionOrigin::Pulled { server_number, .. } => Some((String::new(), *server_number)),
            _ => self.0.get(&version.id).cloned(),
        }
    }
}

fn wire_publication(store: &Store, numbers: &ServerNumbers, publication: &Publication) -> Result<Option<WirePublication>, ApiError> {
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

fn to_json<T: Serialize>(value: &T) -> Result<String, ApiError> {
    serde_json::to_string(value).map_err(|e| ApiError::internal(format!("a performance record could not be encoded: {e}")))
}

/// What an entry sends now.
enum Outgoing {
    Send(PerfRecord),
    /// Not yet: its version (or its publication) is not on the server.
    Wait,
    /// The record is gone without a deletion to tell (nothing to send).
    Gone,
}

/// What a push may send.
struct Sending<'a> {
    numbers: &'a ServerNumbers,
    /// Publications whose entries wait: their snapshots wait too.
    waiting_publications: Vec<String>,
    /// The server keeps accounts' days.
    days_travel: bool,
    days: Days,
}

fn outgoing(store: &Store, sending: &mut Sending<'_>, entry: &PerfDelivery) -> Result<Outgoing, ApiError> {
    if entry.conflict || (entry.kind == PerfKind::AccountSnapshot && !sending.days_travel) {
        return Ok(Outgoing::Wait);
    }
    if let Some(at) = entry.deleted_at {
        return Ok(Outgoing::Send(PerfRecord {
            kind: entry.kind,
            id: entry.id.clone(),
            project_id: entry.project_id.clone(),
            publication_id: None,
            account_id: None,
            updated_at: millis(at),
            edit_id: edit_id(&format!("deleted {}", entry.id)),
            deleted: true,
            body: None,
        }));
    }
    let (body, updated_at, project_id, publication_id, account_id) = match entry.kind {
        PerfKind::Account => {
            let Some(account) = store.get::<Account>(entry.id.as_bytes())? else { return Ok(Outgoing::Gone) };
            (to_json(&account)?, account.updated_at, None, None, None)
        }
        PerfKind::Publication => {
            let Some(publication) = store.get::<Publication>(entry.id.as_bytes())? else { return Ok(Outgoing::Gone) };
            let Some(wire) = wire_publication(store, sending.numbers, &publication)? else { return Ok(Outgoing::Wait) };
            (to_json(&wire)?, publication.updated_at, Some(publication.project_id), None, None)
        }
        PerfKind::Snapshot => {
            let Some(publication_id) = entry.publication_id.as_deref() else { return Ok(Outgoing::Gone) };
            if sending.waiting_publications.iter().any(|p| p == publication_id) {
                return Ok(Outgoing::Wait);
            }
            let Some(snapshot) = store.get::<MetricSnapshot>(&keys::child(publication_id, &entry.id))? else { return Ok(Outgoing::Gone) };
            (to_json(&snapshot)?, snapshot.created_at, Some(snapshot.project_id), Some(snapshot.publication_id), None)
        }
        PerfKind::AccountSnapshot => {
            let Some(account_id) = entry.account_id.as_deref() else { return Ok(Outgoing::Gone) };
            let Some(day) = sending.days.get(store, account_id, &entry.id)? else { return Ok(Outgoing::Gone) };
            (to_json(&day)?, day.created_at, None, None, Some(day.account_id))
        }
    };
    Ok(Outgoing::Send(PerfRecord {
        kind: entry.kind,
        id: entry.id.clone(),
        project_id,
        publication_id,
        account_id,
        updated_at: millis(updated_at),
        edit_id: edit_id(&body),
        deleted: false,
        body: Some(body),
    }))
}

/// Every owed record's entry, accounts first, then accounts' days, publications,
/// snapshots (the keys sort so).
pub fn deliveries(store: &Store) -> Result<Vec<PerfDelivery>, ApiError> {
    Ok(store.scan::<PerfDelivery>(b"")?)
}

/// What the status says of performance data.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PerfStanding {
    /// Records still to reach the server (those that can go to it).
    pub pending: u32,
    /// Connected to a server that keeps no performance data (older).
    pub unavailable: bool,
    /// Accounts' days that stay here: the server keeps performance data but not them
    /// (older than `accountSnapshots`).
    pub days_local: u32,
    /// Records the server holds with other content under the same id (never sent again).
    pub conflicts: u32,
}

pub fn standing(kernel: &Kernel) -> Result<PerfStanding, ApiError> {
    let connection = crate::sync::connection(kernel)?;
    let unavailable = connection.as_ref().is_some_and(|c| !c.server_keeps_performance);
    let days_held = connection.as_ref().is_some_and(|c| c.server_keeps_performance && !c.server_keeps_account_days);
    let mut standing = PerfStanding { unavailable, ..PerfStanding::default() };
    for entry in deliveries(kernel.store())? {
        if entry.conflict {
            standing.conflicts += 1;
        } else if days_held && entry.kind == PerfKind::AccountSnapshot {
            standing.days_local += 1;
        } else {
            standing.pending += 1;
        }
    }
    Ok(standing)
}

/// Queues every record written before this data folder was connected (once per
/// workspace): they belong to the workspace too. A resend of what the server holds
/// changes nothing there. `days_only`: the rest was queued by a build before accounts'
/// days travelled; only the days are.
fn queue_existing(kernel: &Kernel, days_only: bool) -> Result<(), ApiError> {
    let store = kernel.store();
    let _guard = kernel.write_lock();
    let mut batch = Batch::new();
    for account in super::accounts(store)? {
        if !days_only {
            stage_delivery(kernel, &mut batch, PerfKind::Account, &account.id, None, None)?;
        }
        for day in super::account_days::snapshots(store, &account.id)? {
            stage_day_delivery(kernel, &mut batch, &day)?;
        }
    }
    if !days_only {
        for publication in super::all_publications(store)? {
            stage_delivery(kernel, &mut batch, PerfKind::Publication, &publication.id, Some((&publication.project_id, None)), None)?;
            for snapshot in super::metrics::snapshots(store, &publication.id)? {
                stage_delivery(kernel, &mut batch, PerfKind::Snapshot, &snapshot.id, Some((&snapshot.project_id, Some(&snapshot.publication_id))), None)?;
            }
        }
    }
    if let Some(mut state) = store.get::<PerfSyncState>(META_PERF_SYNC)? {
        state.queued_existing = true;
        state.queued_account_days = true;
        batch.put(&state)?;
    }
    store.apply(batch, Durability::Durable)?;
    Ok(())
}

/// The performance part of a sync cycle: push what is owed, then pull what changed.
/// Nothing when the server lacks the feature or the cycle could not reach it.
pub fn cycle_part(kernel: &Kernel, transport: &Transport, what: What, report: &mut CycleReport) -> Result<(), ApiError> {
    let Some(connection) = crate::sync::connection(kernel)? else { return Ok(()) };
    if !connection.server_keeps_performance || report.offline {
        return Ok(());
    }
    let token = crate::sync::token(kernel)?;
    let state = {
        let _guard = kernel.write_lock();
        let stored = kernel.store().get::<PerfSyncState>(META_PERF_SYNC)?;
        match stored {
            Some(state) if state.remote_workspace_id == connection.remote_workspace_id => state,
            _ => {
                let fresh = PerfSyncState { remote_workspace_id: connection.remote_workspace_id.clone(), cursor: 0, queued_existing: false, queued_account_days: false };
                let mut batch = Batch::new();
                batch.put(&fresh)?;
                kernel.store().apply(batch, Durability::Durable)?;
                fresh
            }
        }
    };
    if !state.queued_existing || !state.queued_account_days {
        queue_existing(kernel, state.queued_existing)?;
    }
    if matches!(what, What::Push | What::Both) {
        push(kernel, transport, &connection, &token, report)?;
    }
    if matches!(what, What::Pull | What::Both) {
        pull(kernel, transport, &connection, &token, report)?;
    }
    Ok(())
}

/// The most bytes of records one push carries (the server takes 8 MiB).
const PUSH_BYTES: usize = 6 * 1024 * 1024;

fn push(kernel: &Kernel, transport: &Transport, connection: &Connection, token: &ApiKey, report: &mut CycleReport) -> Result<(), ApiError> {
    let store = kernel.store();
    let numbers = ServerNumbers::read(store)?;
    let mut may = Sending { numbers: &numbers, waiting_publications: Vec::new(), days_travel: connection.server_keeps_account_days, days: Days::default() };
    let mut gone = Vec::new();
    let mut sending: Vec<(PerfDelivery, PerfRecord)> = Vec::new();
    for entry in deliveries(store)? {
        match outgoing(store, &mut may, &entry)? {
            Outgoing::Send(record) => sending.push((entry, record)),
            Outgoing::Wait => {
                if entry.kind == PerfKind::Publication {
                    may.waiting_publications.push(entry.id.clone());
                }
            }
            Outgoing::Gone => gone.push(entry),
        }
    }
    if !gone.is_empty() {
        let _guard = kernel.write_lock();
        let mut batch = Batch::new();
        for entry in &gone {
            if store.get::<PerfDelivery>(&entry.key())?.is_some_and(|e| e.edit == entry.edit) {
                batch.delete::<PerfDelivery>(entry.key());
            }
        }
        store.apply(batch, Durability::Durable)?;
    }
    let mut rest = sending.as_slice();
    while !rest.is_empty() {
        let mut bytes = 0;
        let mut n = 0;
        for (_, record) in rest.iter().take(MAX_PERF_RECORDS_PER_PUSH) {
            let size = record.body.as_ref().map_or(0, String::len) + 256;
            if n > 0 && bytes + size > PUSH_BYTES {
                break;
            }
            bytes += size;
            n += 1;
        }
        let (chunk, later) = rest.split_at(n);
        rest = later;
        let request = PerfPushRequest { records: chunk.iter().map(|(_, r)| r.clone()).collect() };
        let answer = transport.perf_push(&connection.server_url, token, &request);
        let _guard = kernel.write_lock();
        let mut batch = Batch::new();
        match answer {
            Ok(response) => {
                report.contacted = true;
                for (entry, record) in chunk {
                    let acked = response.acks.iter().find(|a| a.kind == record.kind && a.id == record.id && a.edit_id == record.edit_id);
                    if let Some(ack) = acked {
                        report.perf_pushed += u32::from(ack.applied);
                        // A write that came during the send stays owed.
                        let Some(mut current) = store.get::<PerfDelivery>(&entry.key())?.filter(|e| e.edit == entry.edit) else { continue };
                        if ack.conflict {
                            // Kept, marked, never sent again: the status counts it.
                            tracing::warn!(kind = record.kind.as_str(), id = %record.id, "the server holds other content under this id; not sent again");
                            current.conflict = true;
                            current.last_error = Some("the server holds other content under this id (written once, never replaced)".to_owned());
                            batch.put(&current)?;
                        } else {
                            batch.delete::<PerfDelivery>(entry.key());
                        }
                    }
                }
                store.apply(batch, Durability::Durable)?;
            }
            Err(failure) => {
                report.offline |= matches!(failure, Failure::Network(_));
                report.contacted |= matches!(failure, Failure::Status { .. });
                report.error = Some(format!("performance data: {}", failure.reason()));
                report.error_code = Some(failure.code().to_owned());
                for (entry, _) in chunk {
                    if let Some(mut current) = store.get::<PerfDelivery>(&entry.key())? {
                        current.attempts = current.attempts.saturating_add(1);
                        current.last_error = Some(failure.reason());
                        batch.put(&current)?;
                    }
                }
                store.apply(batch, Durability::Durable)?;
                // The rest waits for the next cycle (same records, harmless to resend).
                return Ok(());
            }
        }
    }
    Ok(())
}

/// The most records a page of performance changes is asked for.
const PAGE_RECORDS: usize = 200;

fn pull(kernel: &Kernel, transport: &Transport, connection: &Connection, token: &ApiKey, report: &mut CycleReport) -> Result<(), ApiError> {
    loop {
        let Some(mut state) = kernel.store().get::<PerfSyncState>(META_PERF_SYNC)? else { return Ok(()) };
        let page = match transport.perf_changes(&connection.server_url, token, state.cursor, PAGE_RECORDS, connection.server_keeps_account_days) {
            Ok(page) => page,
            Err(failure) => {
                report.offline |= matches!(failure, Failure::Network(_));
                report.error = Some(format!("performance data: {}", failure.reason()));
                report.error_code = Some(failure.code().to_owned());
                return Ok(());
            }
        };
        report.contacted = true;
        let _guard = kernel.write_lock();
        let mut batch = Batch::new();
        let changed = apply_page(kernel, &mut batch, &page.records)?;
        report.perf_pulled += changed;
        state.cursor = state.cursor.max(page.cursor);
        batch.put(&state)?;
        if changed > 0 {
            crate::sync::stage_change_marker(kernel, &mut batch)?;
        }
        kernel.store().apply(batch, Durability::Durable)?;
        if !page.more {
            return Ok(());
        }
    }
}

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
fn apply_page(kernel: &Kernel, batch: &mut Batch, records: &[ServerPerfRecord]) -> Result<u32, ApiError> {
    let store = kernel.store();
    let numbers = ServerNumbers::read(store)?;
    let mut changed = 0;
    let mut groups: BTreeMap<(String, Platform), Vec<Publication>> = BTreeMap::new();
    for server in records {
        let record = &server.record;
        match record.kind {
            PerfKind::Account => {
                let local = store.get::<Account>(record.id.as_bytes())?;
                let local_stamp = match &local {
                    Some(a) => Some((millis(a.updated_at), edit_id(&to_json(a)?))),
                    None => None,
                };
                if local_stamp.as_ref().is_some_and(|(at, edit)| (*at, edit.as_str()) >= record.stamp()) {
                    continue;
                }
                if record.deleted {
                    // Its days go with it, as on the server.
                    let days = super::account_days::stage_delete_all(batch, store, &record.id)?;
                    if local.is_some() || days > 0 {
                        batch.delete::<Account>(record.id.as_bytes().to_vec());
                        changed += 1;
                    }
                } else if let Some(account) = decode::<Account>(server) {
                    batch.put(&account)?;
                    changed += 1;
                } else {
                    tracing::warn!(id = %record.id, "a pulled account could not be read; skipped");
                }
            }
            PerfKind::Publication => {
                let local = store.get::<Publication>(record.id.as_bytes())?;
                let local_stamp = match &local {
                    Some(p) => Some((millis(p.updated_at), wire_publication(store, &numbers, p)?.map(|w| to_json(&w)).transpose()?.map(|b| edit_id(&b)).unwrap_or_default())),
                    None => None,
                };
                if local_stamp.as_ref().is_some_and(|(at, edit)| (*at, edit.as_str()) >= record.stamp()) {
                    continue;
                }
                if record.deleted {
                    if let Some(publication) = local {
                        for snapshot in super::metrics::snapshots(store, &publication.id)? {
                            super::metrics::delete_snapshot(batch, &snapshot);
                            batch.delete::<PerfDelivery>(perf_delivery_key(PerfKind::Snapshot, &snapshot.id));
                        }
                        batch.delete::<Publication>(publication.id.as_bytes().to_vec());
                        batch.delete::<PerfDelivery>(perf_delivery_key(PerfKind::Publication, &publication.id));
                        changed += 1;
                    }
                    continue;
                }
                let Some(wire) = decode::<WirePublication>(server) else {
                    tracing::warn!(id = %record.id, "a pulled publication could not be read; skipped");
                    continue;
                };
                if store.get::<Project>(wire.project_id.as_bytes())?.is_none() {
                    tracing::warn!(id = %record.id, project = %wire.project_id, "a pulled publication's project is not here; skipped");
                    continue;
                }
                let Some(version) = local_version(store, &wire.project_id, &wire, &numbers)? else {
                    tracing::warn!(id = %record.id, number = wire.version_server_number, "a pulled publication's version is not here; skipped");
                    continue;
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
                changed += 1;
            }
            PerfKind::Snapshot => {
                let Some(snapshot) = decode::<MetricSnapshot>(server) else {
                    tracing::warn!(id = %record.id, "a pulled snapshot could not be read; skipped");
                    continue;
                };
                // Append-only: one held here already is never replaced.
                if store.get::<MetricSnapshot>(&snapshot.key())?.is_none() {
                    batch.put(&snapshot)?;
                    changed += 1;
                }
            }
            PerfKind::AccountSnapshot => {
                let Some(day) = decode::<AccountSnapshot>(server) else {
                    tracing::warn!(id = %record.id, "a pulled account day could not be read; skipped");
                    continue;
                };
                // Append-only too; kept even before its account arrives (it shows once
                // the account is here), but not once the account was deleted here and
                // the deletion is still on its way to the server.
                let account_deleted_here = store.get::<PerfDelivery>(&perf_delivery_key(PerfKind::Account, &day.account_id))?.is_some_and(|d| d.deleted_at.is_some());
                if !account_deleted_here && store.get::<AccountSnapshot>(&day.key())?.is_none() {
                    batch.put(&day)?;
                    changed += 1;
                }
            }
        }
    }
    for ((project_id, _), publications) in groups {
        let project = crate::project::load(store, &project_id)?;
        super::publications::stage_pulled(kernel, batch, &project, &publications)?;
    }
    Ok(changed)
}
