//! Embeddings for semantic search: which profile and model embed, the text of a
//! document that is embedded, the vector cache in the store (by model and content
//! hash, so an unchanged text is never embedded twice), and cosine similarity.

use serde::{Deserialize, Serialize};

use super::IndexDoc;
use crate::llm::profile::{LlmProfile, Provider};
use crate::store::{Kind, Record, Store, StoreError};

/// Characters of a document's body that go into its embedding (after its title, tags
/// and summary): enough for what it is about, well inside any model's input limit.
const EMBEDDED_BODY_CHARS: usize = 1500;

/// The profile whose embedding model semantic search uses: the default profile, when
/// it is enabled and names one. `None`: search is lexical only.
pub fn profile(store: &Store) -> Result<Option<LlmProfile>, StoreError> {
    Ok(store.scan::<LlmProfile>(b"")?.into_iter().find(|p| p.is_default && p.provider != Provider::Disabled && p.embedding_model.is_some()))
}

/// The text of `doc` that is embedded.
pub fn embedding_text(doc: &IndexDoc) -> String {
    let mut out = doc.title.clone();
    for label in doc.tags.iter().chain(doc.category.iter()) {
        out.push_str(" #");
        out.push_str(label);
    }
    out.push('\n');
    out.push_str(&doc.summary);
    out.push('\n');
    out.extend(doc.body.chars().take(EMBEDDED_BODY_CHARS));
    out
}

/// A cached embedding: the vector `model` gave for the text whose hash is `text_hash`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CachedEmbedding {
    pub model: String,
    pub text_hash: String,
    pub vector: Vec<f32>,
}

impl Record for CachedEmbedding {
    const KIND: Kind = Kind::Embeddings;
    fn key(&self) -> Vec<u8> {
        cache_key(&self.model, &self.text_hash)
    }
}

/// `model 0x00 text_hash`.
pub fn cache_key(model: &str, text_hash: &str) -> Vec<u8> {
    let mut key = model.as_bytes().to_vec();
    key.push(0);
    key.extend_from_slice(text_hash.as_bytes());
    key
}

/// `vector` scaled to length 1 (a zero vector stays zero), so a dot product is the
/// cosine.
pub fn unit(mut vector: Vec<f32>) -> Vec<f32> {
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        for x in &mut vector {
            *x /= norm;
        }
    }
    vector
}

/// The dot product of two unit vectors (0 when their dimensions differ).
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() {
        return 0.0;
    }
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn cosine_of_unit_vectors() {
        let a = unit(vec![3.0, 4.0]);
        assert!((a[0] - 0.6).abs() < 1e-6);
        assert!((cosine(&a, &a) - 1.0).abs() < 1e-6);
        assert_eq!(cosine(&a, &unit(vec![-4.0, 3.0])), 0.0);
        assert_eq!(cosine(&a, &[1.0]), 0.0, "another dimension is no match");
        assert_eq!(unit(vec![0.0, 0.0]), vec![0.0, 0.0]);
    }

    #[test]
    fn the_cache_key_names_model_and_text() {
        let cached = CachedEmbedding { model: "m".into(), text_hash: "sha256:ab".into(), vector: vec![1.0] };
        assert_eq!(cached.key(), b"m\0sha256:ab".to_vec());
    }
}
