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
