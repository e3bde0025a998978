//! A scripted embedding model for tests and the search evaluation: no weights, no
//! downloads, deterministic. A text's vector counts how often it mentions each
//! concept of a lexicon (a concept is a group of words that mean the same thing, in
//! any language: 单车, 自行车, bicycle), plus a faint trace of its character bigrams,
//! so texts about the same thing come out near each other whatever words they use.
//! It stands in for a real embedding model; it is not one.

use std::sync::Arc;

use crate::model_server::EmbedFn;

/// Dimensions given to character bigrams (hashed).
const BIGRAM_DIMS: usize = 64;
/// How much one bigram weighs against one mention of a concept.
const BIGRAM_WEIGHT: f32 = 0.04;

/// The embedding of `text` under `lexicon` (concepts, each a list of words).
pub fn concept_vector(lexicon: &[Vec<String>], text: &str) -> Vec<f32> {
    let lower = text.to_lowercase();
    let mut vector = vec![0.0f32; lexicon.len() + BIGRAM_DIMS];
    for (idx, forms) in lexicon.iter().enumerate() {
        let count: usize = forms.iter().filter(|f| !f.is_empty()).map(|f| lower.matches(f.to_lowercase().as_str()).count()).sum();
        // Diminishing returns, as real models saturate on repetition.
        vector[idx] = (count as f32).sqrt();
    }
    let chars: Vec<char> = lower.chars().filter(|c| c.is_alphanumeric()).collect();
    for pair in chars.windows(2) {
        let hash = (pair[0] as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (pair[1] as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
        vector[lexicon.len() + (hash % BIGRAM_DIMS as u64) as usize] += BIGRAM_WEIGHT;
    }
    vector
}

/// [`concept_vector`] as the function a [`crate::model_server::Reply::EmbeddingsBy`]
/// answers with.
pub fn concept_embedder(lexicon: Vec<Vec<String>>) -> EmbedFn {
    let lexicon = Arc::new(lexicon);
    EmbedFn(Arc::new(move |text: &str| concept_vector(&lexicon, text)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cosine(a: &[f32], b: &[f32]) -> f32 {
        let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
        let norm = |v: &[f32]| v.iter().map(|x| x * x).sum::<f32>().sqrt();
        dot / (norm(a) * norm(b))
    }

    #[test]
    fn texts_about_one_concept_are_near_whatever_words_they_use() {
        let lexicon = vec![vec!["单车".to_owned(), "自行车".to_owned(), "bicycle".to_owned()], vec!["咖啡".to_owned(), "coffee".to_owned()]];
        let a = concept_vector(&lexicon, "周末骑单车去郊外");
        let b = concept_vector(&lexicon, "How to choose a bicycle");
        let c = concept_vector(&lexicon, "一杯咖啡的时间");
        assert!(cosine(&a, &b) > 0.8, "{}", cosine(&a, &b));
        assert!(cosine(&a, &c) < 0.3, "{}", cosine(&a, &c));
    }
}
