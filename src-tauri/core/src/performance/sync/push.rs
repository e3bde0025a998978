//! Sending owed performance records to the workspace server: which entries go now
//! (a publication once its version is there, accounts' days once the server keeps
//! them), in pushes the server takes, and what each ack or failure leaves owed.

use std::collections::HashMap;

use inkstone_sync_proto::{PerfKind, PerfPushRequest, PerfPushResponse, PerfRecord, MAX_PERF_RECORDS_PER_PUSH};

use super::deliveries;
use super::wire::{edit_id, millis, to_json, wire_publication, ServerNumbers};
use crate::error::ApiError;
use crate::kernel::Kernel;
use crate::llm::ApiKey;
use crate::outbox::PerfDelivery;
use crate::performance::account_days::AccountSnapshot;
use crate::performance::metrics::MetricSnapshot;
use crate::performance::{Account, Publication};
use crate::store::{keys, Batch, Durability, Record, Store};
use crate::sync::cycle::CycleReport;
use crate::sync::transport::{Failure, Transport};
use crate::sync::Connection;

/// The most bytes of records one push carries (the server takes 8 MiB).
const PUSH_BYTES: usize = 6 * 1024 * 1024;

/// Pushes every entry that can go now, a chunk at a time; a failed push leaves the
/// rest for the next cycle.
pub(super) fn push(kernel: &Kernel, transport: &Transport, connection: &Connection, token: &ApiKey, report: &mut CycleReport) -> Result<(), ApiError> {
    let store = kernel.store();
    let Owed { sending, gone } = owed(store, connection)?;
    forget_gone(kernel, &gone)?;
    let mut rest = sending.as_slice();
    while !rest.is_empty() {
        let (chunk, later) = rest.split_at(chunk_len(rest));
        rest = later;
        let request = PerfPushRequest { records: chunk.iter().map(|(_, r)| r.clone()).collect() };
        let answer = transport.perf_push(&connection.server_url, token, &request);
        let _guard = kernel.write_lock();
        match answer {
            Ok(response) => settle_acks(store, chunk, &response, report)?,
            Err(failure) => {
                note_failure(store, chunk, &failure, report)?;
                // The rest waits for the next cycle (same records, harmless to resend).
                return Ok(());
            }
        }
    }
    Ok(())
}

/// The entries that go now with their records, and those whose record is gone.
struct Owed {
    sending: Vec<(PerfDelivery, PerfRecord)>,
    gone: Vec<PerfDelivery>,
}

fn owed(store: &Store, connection: &Connection) -> Result<Owed, ApiError> {
    let numbers = ServerNumbers::read(store)?;
    let mut may = Sending { numbers: &numbers, waiting_publications: Vec::new(), days_travel: connection.server_keeps_account_days, days: Days::default() };
    let mut owed = Owed { sending: Vec::new(), gone: Vec::new() };
    for entry in deliveries(store)? {
        match outgoing(store, &mut may, &entry)? {
            Outgoing::Send(record) => owed.sending.push((entry, record)),
            Outgoing::Wait => {
                if entry.kind == PerfKind::Publication {
                    may.waiting_publications.push(entry.id.clone());
                }
            }
            Outgoing::Gone => owed.gone.push(entry),
        }
    }
    Ok(owed)
}

/// Drops the entries of records gone without a deletion to tell (unless a write came
/// since).
fn forget_gone(kernel: &Kernel, gone: &[PerfDelivery]) -> Result<(), ApiError> {
    if gone.is_empty() {
        return Ok(());
    }
    let store = kernel.store();
    let _guard = kernel.write_lock();
    let mut batch = Batch::new();
    for entry in gone {
        if store.get::<PerfDelivery>(&entry.key())?.is_some_and(|e| e.edit == entry.edit) {
            batch.delete::<PerfDelivery>(entry.key());
        }
    }
    store.apply(batch, Durability::Durable)?;
    Ok(())
}

/// How many of `rest` the next push carries: at most the server's count, and within
/// [`PUSH_BYTES`] (at least one).
fn chunk_len(rest: &[(PerfDelivery, PerfRecord)]) -> usize {
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
    n
}

/// The server answered: an acked entry is done, or kept and marked when the server
/// holds other content under its id.
fn settle_acks(store: &Store, chunk: &[(PerfDelivery, PerfRecord)], response: &PerfPushResponse, report: &mut CycleReport) -> Result<(), ApiError> {
    report.contacted = true;
    let mut batch = Batch::new();
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
    Ok(())
}

/// The push failed: the report says why, and each entry of the chunk counts an attempt.
fn note_failure(store: &Store, chunk: &[(PerfDelivery, PerfRecord)], failure: &Failure, report: &mut CycleReport) -> Result<(), ApiError> {
    report.offline |= matches!(failure, Failure::Network(_));
    report.contacted |= matches!(failure, Failure::Status { .. });
    report.error = Some(format!("performance data: {}", failure.reason()));
    report.error_code = Some(failure.code().to_owned());
    let mut batch = Batch::new();
    for (entry, _) in chunk {
        if let Some(mut current) = store.get::<PerfDelivery>(&entry.key())? {
            current.attempts = current.attempts.saturating_add(1);
            current.last_error = Some(failure.reason());
            batch.put(&current)?;
        }
    }
    store.apply(batch, Durability::Durable)?;
    Ok(())
}

/// Accounts' days read once per account during a push (an account's days sit under
/// its id, by date: one scan serves all of them).
#[derive(Default)]
struct Days(HashMap<String, HashMap<String, AccountSnapshot>>);

impl Days {
    fn get(&mut self, store: &Store, account_id: &str, id: &str) -> Result<Option<AccountSnapshot>, ApiError> {
        if !self.0.contains_key(account_id) {
            let all = crate::performance::account_days::snapshots(store, account_id)?.into_iter().map(|d| (d.id.clone(), d)).collect();
            self.0.insert(account_id.to_owned(), all);
        }
        Ok(self.0.get(account_id).and_then(|days| days.get(id)).cloned())
    }
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
