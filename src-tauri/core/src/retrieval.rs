//! Local search is the `inkstone-search` crate (the tantivy index, ranking, embeddings,
//! Ask's sources), re-exported here under its old path. What stays in the engine is
//! the door the index reaches an embedding model through: [`MeteredEmbedder`], the
//! metered runtime, so the workspace policy, the quotas and the usage record of every
//! embedding are the same as for any other model call.

use std::sync::Arc;
use std::time::Duration;

pub use inkstone_search::*;

use crate::clock::{Clock, IdSource};
use crate::error::ApiError;
use crate::llm::client::Embeddings;
use crate::llm::{Cancel, ModelCall, Runtime};
use crate::store::Store;

/// The engine's model runtime as the index's [`Embedder`], with the clock and ids its
/// usage records take.
pub struct MeteredEmbedder {
    pub llm: Arc<Runtime>,
    pub clock: Arc<dyn Clock>,
    pub ids: Arc<dyn IdSource>,
}

impl Embedder for MeteredEmbedder {
    fn embed(&self, store: &Store, profile: &str, purpose: &str, inputs: &[String], timeout: Option<Duration>) -> Result<Embeddings, ApiError> {
        let call = ModelCall { profile, purpose, session_id: None, run_id: None };
        self.llm.embed(store, self.clock.as_ref(), self.ids.as_ref(), call, inputs, timeout, &Cancel::new())
    }
}
