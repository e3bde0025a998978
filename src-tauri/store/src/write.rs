//! Writes: applying a batch durably or grouped, notifying subscribers, and the
//! tests' ways to age or damage a store.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::batch::OnCommit;
use super::*;

impl Store {
    /// Applies all writes of `batch` atomically.
    pub fn apply(&self, batch: Batch, durability: Durability) -> Result<(), StoreError> {
        if batch.is_empty() {
            return Ok(());
        }
        let mut kinds: Vec<Kind> = Vec::new();
        for change in &batch.ops {
            if !kinds.contains(&change.kind) {
                kinds.push(change.kind);
            }
        }
        if let [change] = batch.ops.as_slice() {
            // One key: sled writes it atomically by itself. A transaction would also
            // seal and hand sled's log buffer to its writer threads (waking them all),
            // which for the one-event appends of a turn cost more than the write.
            let tree = self.tree(change.kind);
            match &change.value {
                Some(bytes) => tree.insert(change.key.as_slice(), bytes.as_slice())?,
                None => tree.remove(change.key.as_slice())?,
            };
        } else {
            self.commit(&kinds, &batch)?;
        }
        // Bumped after the commit: a reader that took a kind's generation before reading
        // it can only have read data as new as that generation or newer, so what it
        // keeps under that generation is never staler than the number says.
        for kind in &kinds {
            self.generations[kind.index()].fetch_add(1, Ordering::SeqCst);
        }
        self.notify(&kinds, batch.ops);
        match durability {
            Durability::Durable => self.shared.sync_to_disk(),
            Durability::Grouped => {
                self.shared.dirty.store(true, Ordering::SeqCst);
                Ok(())
            }
        }
    }

    /// Commits a batch of several keys as one sled transaction over the trees of `kinds`.
    fn commit(&self, kinds: &[Kind], batch: &Batch) -> Result<(), StoreError> {
        let trees: Vec<&sled::Tree> = kinds.iter().map(|k| self.tree(*k)).collect();
        let result: sled::transaction::TransactionResult<(), ()> = sled::Transactional::transaction(trees.as_slice(), |views| {
            for change in &batch.ops {
                let position = kinds.iter().position(|k| *k == change.kind).unwrap_or(0);
                let view = &views[position];
                match &change.value {
                    Some(bytes) => {
                        view.insert(change.key.as_slice(), bytes.as_slice())?;
                    }
                    None => {
                        view.remove(change.key.as_slice())?;
                    }
                }
            }
            Ok(())
        });
        match result {
            Ok(()) => Ok(()),
            Err(sled::transaction::TransactionError::Abort(())) => Err(StoreError::Database("transaction aborted".to_owned())),
            Err(sled::transaction::TransactionError::Storage(e)) => Err(e.into()),
        }
    }

    /// Hands every batch committed from now on that touches one of `kinds` to
    /// `on_commit`, right after its transaction commits (before its disk sync), on the
    /// writer's thread: it must only hand the batch on (a send on an unbounded
    /// channel), so a writer never waits for a subscriber. The search index follows
    /// the store this way. `on_commit` returning `false` unsubscribes it; it must not
    /// hold the store (that would keep the store, and its lock, alive).
    pub fn subscribe(&self, kinds: &[Kind], on_commit: OnCommit) {
        self.subscribers.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push((kinds.to_vec(), on_commit));
    }

    fn notify(&self, kinds: &[Kind], ops: Vec<Change>) {
        let mut subscribers = self.subscribers.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if !subscribers.iter().any(|(wanted, _)| wanted.iter().any(|k| kinds.contains(k))) {
            return;
        }
        let committed: Committed = Arc::new(ops);
        subscribers.retain(|(wanted, on_commit)| !wanted.iter().any(|k| kinds.contains(k)) || on_commit(Arc::clone(&committed)));
    }

    /// How many committed batches touched `kind` since the store opened. Take it before
    /// reading the kind: equal numbers later mean nothing of the kind changed since.
    pub fn generation(&self, kind: Kind) -> u64 {
        self.generations[kind.index()].load(Ordering::SeqCst)
    }

    /// Syncs everything written so far to disk now.
    pub fn sync(&self) -> Result<(), StoreError> {
        self.shared.sync_to_disk()
    }

    /// How many full disk syncs (flush + fsync of every file and folder) completed.
    /// The seam through which tests prove an acknowledged write reached the disk.
    pub fn durable_sync_count(&self) -> u64 {
        self.shared.syncs.load(Ordering::SeqCst)
    }

    /// True while grouped writes wait for their sync.
    pub fn has_unsynced_writes(&self) -> bool {
        self.shared.dirty.load(Ordering::SeqCst)
    }

    /// Test seam: records another schema version, to prove newer stores are refused.
    #[doc(hidden)]
    pub fn set_schema_version_for_tests(&self, version: u32) -> Result<(), StoreError> {
        self.set_schema_version(version)
    }

    /// Test seam: overwrites the stored bytes of a record with garbage, to prove that
    /// damage is reported. Not reachable from the API.
    #[doc(hidden)]
    pub fn damage_record_for_tests(&self, kind: Kind, key: &[u8]) -> Result<(), StoreError> {
        let tree = self.tree(kind);
        if let Some(bytes) = tree.get(key)? {
            let mut damaged = bytes.to_vec();
            let last = damaged.len() - 1;
            damaged[last] ^= 0x5a;
            tree.insert(key, damaged)?;
        }
        Ok(())
    }
}
