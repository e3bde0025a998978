//! Schema migrations. The store records its schema version in the meta tree; opening
//! runs every step from the recorded version up to [`SCHEMA_VERSION`], each step in
//! order, and refuses a store written by a newer build.
//!
//! A store of the first schema is kept as a test fixture
//! (`tests/fixtures/store-v1.tar.gz`), so every future step is tested against real
//! old data (see the `migration` tests).

use super::{Batch, Durability, Store, StoreError, SCHEMA_VERSION};
use inkstone_model::Project;

/// A step migrates a store from version `n` to `n + 1`; `STEPS[0]` goes from 1 to 2.
type Step = fn(&Store) -> Result<(), StoreError>;
const STEPS: &[Step] = &[add_project_summaries];

/// 1 → 2: project lists read a `project_summaries` tree instead of whole projects.
fn add_project_summaries(store: &Store) -> Result<(), StoreError> {
    let mut batch = Batch::new();
    for project in store.scan::<Project>(b"")? {
        batch.put(&project)?; // writes the summary as its derived record
    }
    store.apply(batch, Durability::Durable)
}

/// The meta record saying a folder's derived records were built: when, under the
/// builder's marker key.
#[derive(serde::Serialize, serde::Deserialize)]
struct DerivedBuilt {
    #[serde(skip)]
    marker: &'static [u8],
    at: inkstone_model::Timestamp,
}

impl super::Record for DerivedBuilt {
    const KIND: super::Kind = super::Kind::Meta;
    fn key(&self) -> Vec<u8> {
        self.marker.to_vec()
    }
}

impl Store {
    /// Builds derived records (an index, running totals) over what a data folder stored
    /// before they existed, once per folder and `marker`: unless the meta record
    /// `marker` is there, `fill` adds them to a batch under the write lock, and the batch
    /// commits durably with the marker. Records written later derive their own (see
    /// [`super::Record::derived`]); a new version of what is derived takes a new marker.
    pub fn derive_once(&self, marker: &'static [u8], now: inkstone_model::Timestamp, fill: impl FnOnce(&mut Batch) -> Result<(), StoreError>) -> Result<(), StoreError> {
        if self.get::<DerivedBuilt>(marker)?.is_some() {
            return Ok(());
        }
        let _guard = self.write_lock();
        let mut batch = Batch::new();
        fill(&mut batch)?;
        batch.put(&DerivedBuilt { marker, at: now })?;
        self.apply(batch, Durability::Durable)
    }
}

pub(super) fn run(store: &Store) -> Result<(), StoreError> {
    let Some(mut version) = store.schema_version()? else {
        // A new store starts at the current schema.
        return store.set_schema_version(SCHEMA_VERSION);
    };
    if version > SCHEMA_VERSION {
        return Err(StoreError::TooNew { path: store.data_dir().to_path_buf(), found: version, supported: SCHEMA_VERSION });
    }
    while version < SCHEMA_VERSION {
        let step = STEPS.get((version - 1) as usize).ok_or_else(|| StoreError::Database(format!("no migration step from schema {version}")))?;
        step(store)?;
        version += 1;
        store.set_schema_version(version)?;
        tracing::info!(version, "migrated store");
    }
    Ok(())
}
