//! Performance records (publications, snapshots, account days): pushed one push at a
//! time, decided against what is held (see `perf_decision`), written in one transaction
//! and synced once; pulled from a log of each record's latest write.

use std::collections::{HashMap, HashSet};

use inkstone_sync_proto::{PerfAck, PerfChangesResponse, PerfKind, PerfPushResponse, PerfRecord, ServerPerfRecord};
use sled::transaction::Transactional;

use super::{key, tx_error, Sled};
use crate::storage::{perf_decision, perf_unapplied, Caller, PerfDecision, StorageError};

impl Sled {
    pub(super) fn perf_push(&self, caller: &Caller, records: &[PerfRecord]) -> Result<PerfPushResponse, StorageError> {
        let inner = self;
        let _one_at_a_time = inner.perf_lock.lock().map_err(|_| StorageError::Io("perf lock poisoned".into()))?;
        let ws = caller.workspace_id.as_bytes();
        if inner.workspaces.get(ws)?.is_none() {
            return Err(StorageError::NotFound(format!("workspace {}", caller.workspace_id)));
        }
        // Decide every record against what is held (and what this push wrote before
        // it) first; then write it all in one transaction and sync once.
        let mut cursor = match inner.perf_cursors.get(ws)? {
            Some(v) => u64::from_be_bytes(v.as_ref().try_into().map_err(|_| StorageError::Io("damaged perf cursor".into()))?),
            None => 0,
        };
        let mut written: HashMap<Vec<u8>, ServerPerfRecord> = HashMap::new();
        let mut dropped_log: Vec<Vec<u8>> = Vec::new();
        let mut dropped: HashSet<Vec<u8>> = HashSet::new();
        let mut dropped_index: Vec<Vec<u8>> = Vec::new();
        let mut acks = Vec::with_capacity(records.len());
        for record in records {
            let record_key = key(&[ws, record.kind.as_str().as_bytes(), record.id.as_bytes()]);
            let held: Option<ServerPerfRecord> = match written.get(&record_key) {
                Some(r) => Some(r.clone()),
                None if dropped.contains(&record_key) => None,
                None => Sled::get(&inner.perf, &record_key)?,
            };
            let parent_deleted = inner.parent_deleted(ws, record, &written)?;
            let decision = perf_decision(record, held.as_ref().map(|h| (h.record.stamp(), h.record.deleted)), parent_deleted);
            if matches!(decision, PerfDecision::Keep | PerfDecision::Conflict) {
                acks.push(perf_unapplied(record, decision));
                continue;
            }
            if let Some(held) = &held {
                dropped_log.push(key(&[ws, &held.cursor.to_be_bytes()]));
            }
            if decision == PerfDecision::WriteAndDropSnapshots && record.kind == PerfKind::Account {
                // An account's days have no index of their own (an account is deleted
                // rarely): the workspace's days are read and those of the account go,
                // the ones this push wrote too.
                let prefix = key(&[ws, PerfKind::AccountSnapshot.as_str().as_bytes(), b""]);
                for entry in inner.perf.scan_prefix(&prefix) {
                    let (day_key, _) = entry?;
                    let Some(day) = Sled::get::<ServerPerfRecord>(&inner.perf, &day_key)? else { continue };
                    if day.record.account_id.as_deref() == Some(record.id.as_str()) {
                        dropped_log.push(key(&[ws, &day.cursor.to_be_bytes()]));
                        dropped.insert(day_key.to_vec());
                    }
                }
                let written_days: Vec<Vec<u8>> = written
                    .iter()
                    .filter(|(_, r)| r.record.kind == PerfKind::AccountSnapshot && r.record.account_id.as_deref() == Some(record.id.as_str()))
                    .map(|(k, _)| k.clone())
                    .collect();
                for day_key in written_days {
                    written.remove(&day_key);
                    dropped.insert(day_key);
                }
            } else if decision == PerfDecision::WriteAndDropSnapshots {
                let prefix = key(&[ws, record.id.as_bytes(), b""]);
                for entry in inner.perf_snapshots.scan_prefix(&prefix) {
                    let (k, _) = entry?;
                    dropped_index.push(k.to_vec());
                    let snapshot_id = &k[prefix.len()..];
                    let snapshot_key = key(&[ws, PerfKind::Snapshot.as_str().as_bytes(), snapshot_id]);
                    let held_snapshot = match written.remove(&snapshot_key) {
                        Some(r) => Some(r),
                        None => Sled::get::<ServerPerfRecord>(&inner.perf, &snapshot_key)?,
                    };
                    if let Some(snapshot) = held_snapshot {
                        dropped_log.push(key(&[ws, &snapshot.cursor.to_be_bytes()]));
                    }
                    dropped.insert(snapshot_key);
                }
            }
            cursor += 1;
            let created_by = held.as_ref().map_or_else(|| caller.member.name.clone(), |h| h.created_by.clone());
            written.insert(record_key, ServerPerfRecord { record: record.clone(), created_by, pushed_by: caller.member.name.clone(), cursor });
            acks.push(PerfAck { kind: record.kind, id: record.id.clone(), edit_id: record.edit_id.clone(), applied: true, conflict: false });
        }
        if written.is_empty() && dropped.is_empty() {
            return Ok(PerfPushResponse { acks });
        }
        let mut encoded = Vec::with_capacity(written.len());
        for (record_key, record) in &written {
            encoded.push((record_key.clone(), serde_json::to_vec(record)?, record));
        }
        (&inner.perf, &inner.perf_log, &inner.perf_cursors, &inner.perf_snapshots)
            .transaction(|(perf, perf_log, perf_cursors, perf_snapshots)| {
                for old in &dropped_log {
                    perf_log.remove(old.as_slice())?;
                }
                for snapshot_key in &dropped {
                    perf.remove(snapshot_key.as_slice())?;
                }
                for (record_key, bytes, record) in &encoded {
                    // A snapshot whose publication was dropped in this push is not kept.
                    if dropped.contains(record_key) {
                        continue;
                    }
                    perf.insert(record_key.as_slice(), bytes.as_slice())?;
                    perf_log.insert(key(&[ws, &record.cursor.to_be_bytes()]), key(&[record.record.kind.as_str().as_bytes(), record.record.id.as_bytes()]))?;
                    if let (PerfKind::Snapshot, Some(publication)) = (record.record.kind, &record.record.publication_id) {
                        perf_snapshots.insert(key(&[ws, publication.as_bytes(), record.record.id.as_bytes()]), &[][..])?;
                    }
                }
                for index_key in &dropped_index {
                    perf_snapshots.remove(index_key.as_slice())?;
                }
                perf_cursors.insert(ws, &cursor.to_be_bytes())?;
                Ok(())
            })
            .map_err(tx_error)?;
        inner.durable()?;
        Ok(PerfPushResponse { acks })
    }

    /// Whether the record's parent (a snapshot's publication, an account day's account)
    /// is deleted, as this push wrote it or else as it is held.
    fn parent_deleted(&self, ws: &[u8], record: &PerfRecord, written: &HashMap<Vec<u8>, ServerPerfRecord>) -> Result<bool, StorageError> {
        let parent_key = match (&record.kind, &record.publication_id, &record.account_id) {
            (PerfKind::Snapshot, Some(publication), _) => key(&[ws, PerfKind::Publication.as_str().as_bytes(), publication.as_bytes()]),
            (PerfKind::AccountSnapshot, _, Some(account)) => key(&[ws, PerfKind::Account.as_str().as_bytes(), account.as_bytes()]),
            _ => return Ok(false),
        };
        let parent: Option<ServerPerfRecord> = match written.get(&parent_key) {
            Some(r) => Some(r.clone()),
            None => Sled::get(&self.perf, &parent_key)?,
        };
        Ok(parent.is_some_and(|p| p.record.deleted))
    }

    pub(super) fn perf_changes(&self, workspace_id: &str, cursor: u64, limit: usize) -> Result<PerfChangesResponse, StorageError> {
        let inner = self;
        let _not_mid_write = inner.perf_lock.lock().map_err(|_| StorageError::Io("perf lock poisoned".into()))?;
        let ws = workspace_id.as_bytes();
        let start = key(&[ws, &cursor.saturating_add(1).to_be_bytes()]);
        let end = key(&[ws, &u64::MAX.to_be_bytes()]);
        let mut records = Vec::new();
        let mut last = cursor;
        for entry in inner.perf_log.range(start..=end) {
            if records.len() >= limit.max(1) {
                return Ok(PerfChangesResponse { records, cursor: last, more: true });
            }
            let (k, v) = entry?;
            let at = v.iter().position(|b| *b == 0).ok_or_else(|| StorageError::Io("damaged perf log record".into()))?;
            let record: ServerPerfRecord =
                Sled::get(&inner.perf, &key(&[ws, &v[..at], &v[at + 1..]]))?.ok_or_else(|| StorageError::Io("the perf log names a missing record".into()))?;
            last = u64::from_be_bytes(k[k.len() - 8..].try_into().map_err(|_| StorageError::Io("damaged perf log key".into()))?);
            records.push(record);
        }
        Ok(PerfChangesResponse { records, cursor: last, more: false })
    }
}
