//! Writes: a batch of puts and deletes applied atomically, how durable it is, and
//! the changes a committed batch hands its subscribers.

use std::sync::{Arc, Mutex};

use super::*;

/// When a write must be on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// Synced to disk (flush, then the log and what changed, see [`GroupSync`]) before
    /// `apply` returns.
    Durable,
    /// Synced by the group-commit thread within `group_commit_millis`.
    Grouped,
}

/// Writes to apply atomically, across trees, in one sled transaction.
#[derive(Debug, Default)]
pub struct Batch {
    pub(super) ops: Vec<Change>,
}

impl Batch {
    pub fn new() -> Self {
        Batch::default()
    }

    pub fn put<R: Record>(&mut self, record: &R) -> Result<&mut Self, StoreError> {
        let bytes = codec::encode(record).map_err(|e| StoreError::Database(e.to_string()))?;
        self.ops.push(Change { kind: R::KIND, key: record.key(), value: Some(bytes) });
        record.derived(self)?;
        Ok(self)
    }

    /// [`Batch::put`], answering the size of the record's JSON (what a size limit
    /// is checked against), so a caller that limits records needs no second
    /// serialization to measure one.
    pub fn put_measured<R: Record>(&mut self, record: &R) -> Result<usize, StoreError> {
        let bytes = codec::encode(record).map_err(|e| StoreError::Database(e.to_string()))?;
        let size = codec::payload_len(&bytes);
        self.ops.push(Change { kind: R::KIND, key: record.key(), value: Some(bytes) });
        record.derived(self)?;
        Ok(size)
    }

    pub fn delete<R: Record>(&mut self, key: Vec<u8>) -> &mut Self {
        self.ops.push(Change { kind: R::KIND, key, value: None });
        self
    }

    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    pub fn len(&self) -> usize {
        self.ops.len()
    }
}

/// One write of a committed batch: a record put under `key`, or a delete.
#[derive(Debug, Clone)]
pub struct Change {
    pub kind: Kind,
    pub key: Vec<u8>,
    pub(super) value: Option<Vec<u8>>,
}

impl Change {
    /// The record written, decoded and checked; `None` for a delete or a change of
    /// another kind than `R`'s.
    pub fn record<R: Record>(&self) -> Option<Result<R, CodecError>> {
        match &self.value {
            Some(bytes) if self.kind == R::KIND => Some(codec::decode(bytes)),
            _ => None,
        }
    }

    pub fn is_delete(&self) -> bool {
        self.value.is_none()
    }
}

/// The writes of one committed batch, in order, shared by every subscriber.
pub type Committed = Arc<Vec<Change>>;

/// What a subscriber does with a committed batch; `false` unsubscribes it.
pub type OnCommit = Box<dyn Fn(Committed) -> bool + Send>;

/// Who hears of committed batches: the kinds each subscriber asked for, and what it
/// does with a batch touching any of them.
pub(super) type Subscribers = Mutex<Vec<(Vec<Kind>, OnCommit)>>;
