//! Document vectors: from the store's cache, else from the embedding model in
//! batches, kept in memory for semantic search and retried after a failure.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::model::Platform;
use crate::store::{Batch, Durability};

use super::worker::Worker;
use super::*;

/// A document's vector and what the filters need of it.
pub(super) struct DocVector {
    pub(super) project_id: String,
    pub(super) kind: DocKind,
    pub(super) platforms: Vec<Platform>,
    pub(super) vector: Vec<f32>,
}

#[derive(Default)]
pub(super) struct Vectors {
    /// The embedding model of every vector held; `None` before the first embedding.
    pub(super) model: Option<String>,
    pub(super) by_doc: HashMap<String, DocVector>,
    /// Documents still without a vector (the server failed, or it is under way).
    pub(super) missing: usize,
    pub(super) last_error: Option<ErrorCode>,
}

/// Inputs per embeddings request.
const EMBED_BATCH: usize = 64;
/// How long after a failed embedding the thread tries again.
const EMBED_RETRY: Duration = Duration::from_secs(30);
impl Worker {
    /// Gives `docs` their vectors: from the cache, else from the embedding model (in
    /// batches; cached). Nothing when no embedding model is configured. A failure is
    /// kept (searches say so) and tried again later.
    pub(super) fn embed(&mut self, docs: Vec<IndexDoc>) {
        if docs.is_empty() {
            return;
        }
        let store = Arc::clone(&self.shared.store);
        let profile = match semantic::profile(&store) {
            Ok(Some(profile)) => profile,
            Ok(None) => return,
            Err(error) => {
                tracing::warn!(%error, "the embedding profile cannot be read");
                return;
            }
        };
        let model = profile.embedding_model.clone().unwrap_or_default();
        {
            let mut vectors = self.shared.vectors.write().unwrap_or_else(|poisoned| poisoned.into_inner());
            if vectors.model.as_deref() != Some(model.as_str()) {
                vectors.by_doc.clear();
                vectors.model = Some(model.clone());
            }
        }
        // These are tried now: a failure puts them back on the retry list.
        let attempted: std::collections::HashSet<&str> = docs.iter().map(|d| d.doc_id.as_str()).collect();
        self.retry_embeddings.retain(|d| !attempted.contains(d.doc_id.as_str()));
        let mut missing: Vec<(IndexDoc, String, String)> = Vec::new();
        for doc in docs {
            let embedded_text = semantic::embedding_text(&doc);
            let hash = crate::store::sha256_ref(embedded_text.as_bytes());
            match store.get::<CachedEmbedding>(&semantic::cache_key(&model, &hash)) {
                Ok(Some(cached)) => self.keep_vector(&doc, cached.vector),
                _ => missing.push((doc, embedded_text, hash)),
            }
        }
        let services = self.shared.services.clone();
        let mut failed: Vec<IndexDoc> = Vec::new();
        let mut chunks = missing.chunks(EMBED_BATCH);
        for chunk in chunks.by_ref() {
            if self.shared.stopping.load(Ordering::SeqCst) {
                failed.extend(chunk.iter().map(|(d, _, _)| d.clone()));
                continue;
            }
            let texts: Vec<String> = chunk.iter().map(|(_, t, _)| t.clone()).collect();
            match services.embedder.embed(&store, &profile.id, "search_index", &texts, None) {
                Ok(embeddings) => {
                    let mut batch = Batch::new();
                    for ((doc, _, hash), vector) in chunk.iter().zip(embeddings.vectors) {
                        let cached = CachedEmbedding { model: model.clone(), text_hash: hash.clone(), vector };
                        let _ = batch.put(&cached);
                        self.keep_vector(doc, cached.vector);
                    }
                    let _guard = store.write_lock();
                    if let Err(error) = store.apply(batch, Durability::Grouped) {
                        tracing::warn!(%error, "embeddings could not be cached");
                    }
                }
                Err(error) => {
                    tracing::warn!(code = ?error.code, message = %error.message, "embedding documents failed; semantic search waits for the server");
                    self.shared.vectors.write().unwrap_or_else(|poisoned| poisoned.into_inner()).last_error = Some(error.code);
                    failed.extend(chunk.iter().map(|(d, _, _)| d.clone()));
                    break;
                }
            }
        }
        for rest in chunks {
            failed.extend(rest.iter().map(|(d, _, _)| d.clone()));
        }
        if !failed.is_empty() {
            self.retry_embeddings.extend(failed);
            self.retry_at = Some(Instant::now() + EMBED_RETRY);
        }
        // Documents that failed earlier and still wait for their retry are missing too.
        let mut vectors = self.shared.vectors.write().unwrap_or_else(|poisoned| poisoned.into_inner());
        vectors.missing = self.retry_embeddings.len();
        if self.retry_embeddings.is_empty() {
            vectors.last_error = None;
        }
    }

    pub(super) fn keep_vector(&self, doc: &IndexDoc, vector: Vec<f32>) {
        let mut vectors = self.shared.vectors.write().unwrap_or_else(|poisoned| poisoned.into_inner());
        vectors
            .by_doc
            .insert(doc.doc_id.clone(), DocVector { project_id: doc.project_id.clone(), kind: doc.kind, platforms: doc.platforms.clone(), vector: semantic::unit(vector) });
    }
}
