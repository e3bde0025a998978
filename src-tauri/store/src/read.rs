//! Reads: typed records by key, prefix and range, each checked as it is decoded.

use inkstone_model::Workspace;

use super::record::{SchemaVersion, META_SCHEMA_VERSION, META_WORKSPACE};
use super::*;

impl Store {
    pub(super) fn tree(&self, kind: Kind) -> &sled::Tree {
        &self.trees[kind.index()]
    }

    pub(super) fn corrupt(&self, kind: Kind, key: &[u8], error: CodecError) -> StoreError {
        StoreError::Corrupt { path: self.data_dir.clone(), detail: format!("{} record {:?}: {error}", kind.tree_name(), String::from_utf8_lossy(key)) }
    }

    pub(super) fn decode<R: Record>(&self, key: &[u8], bytes: &[u8]) -> Result<R, StoreError> {
        codec::decode(bytes).map_err(|e| self.corrupt(R::KIND, key, e))
    }

    /// The record under `key`, checked.
    pub fn get<R: Record>(&self, key: &[u8]) -> Result<Option<R>, StoreError> {
        match self.tree(R::KIND).get(key)? {
            Some(bytes) => Ok(Some(self.decode(key, &bytes)?)),
            None => Ok(None),
        }
    }

    /// All records whose key starts with `prefix`, in key order.
    pub fn scan<R: Record>(&self, prefix: &[u8]) -> Result<Vec<R>, StoreError> {
        let mut out = Vec::new();
        for item in self.tree(R::KIND).scan_prefix(prefix) {
            let (key, bytes) = item?;
            out.push(self.decode(&key, &bytes)?);
        }
        Ok(out)
    }

    /// The records whose key starts with `prefix` and whose view `H` passes `keep`, in key
    /// order. `H` names a few of the record's fields and is decoded first (the others are
    /// skipped over, not built); the whole record is decoded only when kept. A filter over
    /// large records (a proposal's texts) thus costs little more than what it tests.
    pub fn scan_where<R: Record, H: serde::de::DeserializeOwned>(&self, prefix: &[u8], keep: impl Fn(&H) -> bool) -> Result<Vec<R>, StoreError> {
        let mut out = Vec::new();
        for item in self.tree(R::KIND).scan_prefix(prefix) {
            let (key, bytes) = item?;
            let view: H = codec::decode(&bytes).map_err(|e| self.corrupt(R::KIND, &key, e))?;
            if keep(&view) {
                out.push(self.decode(&key, &bytes)?);
            }
        }
        Ok(out)
    }

    /// The records whose key starts with `prefix` and is at least `from`, in key order.
    pub fn scan_from<R: Record>(&self, prefix: &[u8], from: &[u8]) -> Result<Vec<R>, StoreError> {
        self.scan_from_limit(prefix, from, usize::MAX)
    }

    /// [`Store::scan_from`], stopping after `limit` records.
    pub fn scan_from_limit<R: Record>(&self, prefix: &[u8], from: &[u8], limit: usize) -> Result<Vec<R>, StoreError> {
        let mut out = Vec::new();
        for item in self.tree(R::KIND).range(from..) {
            if out.len() >= limit {
                break;
            }
            let (key, bytes) = item?;
            if !key.starts_with(prefix) {
                break;
            }
            out.push(self.decode(&key, &bytes)?);
        }
        Ok(out)
    }

    /// The records with keys in `[from, to)`, newest key first, handed to `visit` until it
    /// returns `false`: a page of an ordered index reads only what it shows.
    pub fn visit_range_rev<R: Record>(&self, from: &[u8], to: &[u8], mut visit: impl FnMut(R) -> bool) -> Result<(), StoreError> {
        for item in self.tree(R::KIND).range(from..to).rev() {
            let (key, bytes) = item?;
            if !visit(self.decode(&key, &bytes)?) {
                break;
            }
        }
        Ok(())
    }

    /// True when a record is stored under `key`.
    pub fn contains(&self, kind: Kind, key: &[u8]) -> Result<bool, StoreError> {
        Ok(self.tree(kind).contains_key(key)?)
    }

    /// The last record whose key starts with `prefix`.
    pub fn last<R: Record>(&self, prefix: &[u8]) -> Result<Option<R>, StoreError> {
        match self.tree(R::KIND).scan_prefix(prefix).next_back() {
            Some(item) => {
                let (key, bytes) = item?;
                Ok(Some(self.decode(&key, &bytes)?))
            }
            None => Ok(None),
        }
    }

    /// Number of records of a kind (a full scan; for export progress and tests).
    pub fn count(&self, kind: Kind) -> usize {
        self.tree(kind).len()
    }

    /// True when no user data is stored (only the meta tree and caches may hold
    /// records).
    pub fn is_empty(&self) -> bool {
        Kind::ALL.iter().filter(|k| !matches!(k, Kind::Meta | Kind::Embeddings)).all(|k| self.tree(*k).is_empty())
    }

    /// Adds a delete of every user record (all trees but meta) to `batch`.
    pub fn delete_all_user_records(&self, batch: &mut Batch) -> Result<(), StoreError> {
        for kind in Kind::ALL.iter().filter(|k| **k != Kind::Meta) {
            for key in self.tree(*kind).iter().keys() {
                batch.ops.push(Change { kind: *kind, key: key?.to_vec(), value: None });
            }
        }
        Ok(())
    }

    pub fn workspace(&self) -> Result<Option<Workspace>, StoreError> {
        self.get(META_WORKSPACE)
    }

    /// The schema version recorded in the store; `None` for a new store.
    pub fn schema_version(&self) -> Result<Option<u32>, StoreError> {
        self.get::<SchemaVersion>(META_SCHEMA_VERSION).map(|v| v.map(|v| v.0))
    }

    pub(super) fn set_schema_version(&self, version: u32) -> Result<(), StoreError> {
        let mut batch = Batch::new();
        batch.put(&SchemaVersion(version))?;
        self.apply(batch, Durability::Durable)
    }
}
