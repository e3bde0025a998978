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

mod apply;
mod pull;
mod push;
mod wire;

use inkstone_sync_proto::PerfKind;
use serde::{Deserialize, Serialize};

use super::account_days::AccountSnapshot;
use crate::error::ApiError;
use crate::kernel::Kernel;
use crate::model::Timestamp;
use crate::outbox::{stage_perf_delivery, PerfDelivery};
use crate::store::{Batch, Durability, Kind, Record, Store};
use crate::sync::cycle::{CycleReport, What};
use crate::sync::transport::Transport;

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
        push::push(kernel, transport, &connection, &token, report)?;
    }
    if matches!(what, What::Pull | What::Both) {
        pull::pull(kernel, transport, &connection, &token, report)?;
    }
    Ok(())
}
