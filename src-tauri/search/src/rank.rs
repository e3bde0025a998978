//! Tiers, then reciprocal rank fusion within a tier. Pure.
//!
//! RRF alone rewards agreement and ignores how strong a match is, so a literal title
//! match could sink below a document many retrievers half-agree on. Each document
//! therefore first takes the best tier any retriever puts it in (a literal title
//! match above title keywords or a strong semantic match, above tags and category,
//! above the summary, above the body and the semantic floor); only within a tier do
//! the RRF scores (k = 60, Cormack, Clarke and Büttcher, SIGIR 2009) order it.
//!
//! Above the tiers, a document that holds the query's text literally (in its title or
//! its body, as the character n-gram phrase finds it) comes before every document
//! that does not (the literal match first). The keyword tiers are met by
//! words, and a query's words are not its text: jieba may cut an unknown
//! two-character query into its two characters, and the stop-word list drops one of
//! them (大, 时, 点, ...), so "every keyword in the title" could hold for a title with
//! one of the two characters and sink the only document that holds the term.

use std::collections::HashMap;
use std::hash::Hash;

use serde::{Deserialize, Serialize};

/// The RRF constant k of the paper (and the default of Elasticsearch and OpenSearch).
pub const RRF_K: f64 = 60.0;

/// A cosine similarity at or above this is a strong semantic match (the tier of
/// title keywords).
pub const STRONG_SIMILARITY: f32 = 0.80;
/// Below this a semantic match is no match at all.
pub const SIMILARITY_FLOOR: f32 = 0.35;

/// How a hit matched, best first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Tier {
    /// The query is the title, or occurs in it literally.
    Title,
    /// Every keyword of the query is in the title, or the meaning matches strongly.
    TitleKeywords,
    /// A tag or the category is the query, or holds every keyword.
    Tags,
    /// Every keyword is in the summary (the first paragraph).
    Summary,
    /// Keywords or the literal query in the body, or a semantic match above the floor.
    Body,
}

/// One ranked list of candidates and what it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Retriever {
    /// The normalised title equals the query.
    TitleExact,
    /// The query occurs literally in the title (character n-grams).
    TitleLiteral,
    /// Every keyword in the title (jieba words).
    TitleKeywords,
    /// A tag or category equals the query or holds every keyword.
    Tags,
    /// Every keyword in the summary.
    Summary,
    /// BM25 over the body's words (any keyword).
    BodyWords,
    /// The query occurs literally in the body (character n-grams).
    BodyLiteral,
    /// Cosine similarity of embeddings; the score is the similarity.
    Semantic,
}

impl Retriever {
    /// Whether a document in this list holds the query's text itself.
    fn is_literal(self) -> bool {
        matches!(self, Retriever::TitleExact | Retriever::TitleLiteral | Retriever::BodyLiteral)
    }

    /// The tier a document in this list reaches at `score`; `None` below the semantic
    /// floor.
    fn tier(self, score: f32) -> Option<Tier> {
        match self {
            Retriever::TitleExact | Retriever::TitleLiteral => Some(Tier::Title),
            Retriever::TitleKeywords => Some(Tier::TitleKeywords),
            Retriever::Tags => Some(Tier::Tags),
            Retriever::Summary => Some(Tier::Summary),
            Retriever::BodyWords | Retriever::BodyLiteral => Some(Tier::Body),
            Retriever::Semantic if score >= STRONG_SIMILARITY => Some(Tier::TitleKeywords),
            Retriever::Semantic if score >= SIMILARITY_FLOOR => Some(Tier::Body),
            Retriever::Semantic => None,
        }
    }
}

/// A retriever's candidates, best first, with its scores.
#[derive(Debug, Clone, PartialEq)]
pub struct RankedList<K> {
    pub retriever: Retriever,
    pub docs: Vec<(K, f32)>,
}

/// A fused candidate.
#[derive(Debug, Clone, PartialEq)]
pub struct Fused<K> {
    pub key: K,
    pub tier: Tier,
    /// The title equals the query: first within its tier.
    pub exact_title: bool,
    /// The query's text occurs in the title or the body (a literal retriever found
    /// it): before every candidate where it does not.
    pub literal: bool,
    pub rrf: f64,
}

/// Every candidate of `lists` in final order: the literal matches first, then by
/// tier, an exact title first within it, then by RRF score (each list contributing `1 / (k + rank)`, rank from 1),
/// then by key so equal scores come out the same every time. A semantic candidate
/// below the floor neither reaches a tier nor adds to a score.
pub fn fuse<K: Clone + Eq + Hash + Ord>(lists: &[RankedList<K>]) -> Vec<Fused<K>> {
    let mut by_key: HashMap<K, Fused<K>> = HashMap::new();
    for list in lists {
        let mut rank = 0usize;
        for (key, score) in &list.docs {
            let Some(tier) = list.retriever.tier(*score) else { continue };
            rank += 1;
            let entry = by_key.entry(key.clone()).or_insert_with(|| Fused { key: key.clone(), tier, exact_title: false, literal: false, rrf: 0.0 });
            entry.tier = entry.tier.min(tier);
            entry.exact_title |= list.retriever == Retriever::TitleExact;
            entry.literal |= list.retriever.is_literal();
            entry.rrf += 1.0 / (RRF_K + rank as f64);
        }
    }
    let mut out: Vec<Fused<K>> = by_key.into_values().collect();
    out.sort_by(|a, b| {
        b.literal
            .cmp(&a.literal)
            .then(a.tier.cmp(&b.tier))
            .then(b.exact_title.cmp(&a.exact_title))
            .then(b.rrf.partial_cmp(&a.rrf).unwrap_or(std::cmp::Ordering::Equal))
            .then_with(|| a.key.cmp(&b.key))
    });
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn list(retriever: Retriever, keys: &[&'static str]) -> RankedList<&'static str> {
        RankedList { retriever, docs: keys.iter().map(|k| (*k, 1.0)).collect() }
    }

    fn order(fused: &[Fused<&'static str>]) -> Vec<&'static str> {
        fused.iter().map(|f| f.key).collect()
    }

    #[test]
    fn a_title_match_outranks_agreement_below_it() {
        let lists = [
            list(Retriever::TitleLiteral, &["t"]),
            list(Retriever::BodyWords, &["b", "t"]),
            list(Retriever::BodyLiteral, &["b"]),
            RankedList { retriever: Retriever::Semantic, docs: vec![("b", 0.7), ("t", 0.5)] },
        ];
        let fused = fuse(&lists);
        assert_eq!(order(&fused), vec!["t", "b"]);
        assert_eq!(fused[0].tier, Tier::Title);
        assert_eq!(fused[1].tier, Tier::Body);
    }

    #[test]
    fn within_a_tier_rrf_decides_and_k_is_60() {
        let lists = [list(Retriever::BodyWords, &["a", "b", "c"]), list(Retriever::BodyLiteral, &["b", "c"])];
        let fused = fuse(&lists);
        assert_eq!(order(&fused), vec!["b", "c", "a"]);
        let b = fused.iter().find(|f| f.key == "b").unwrap();
        assert!((b.rrf - (1.0 / 62.0 + 1.0 / 61.0)).abs() < 1e-12);
        // Agreement beats one first place: 1/62 + 1/63 > 1/61.
        assert!(fused[1].rrf > fused[2].rrf);
    }

    #[test]
    fn the_exact_title_comes_first_in_the_title_tier() {
        let lists = [list(Retriever::TitleLiteral, &["contains", "exact"]), list(Retriever::TitleExact, &["exact"]), list(Retriever::BodyWords, &["contains"])];
        assert_eq!(order(&fuse(&lists)), vec!["exact", "contains"]);
    }

    #[test]
    fn semantic_scores_pick_the_tier_and_the_floor_drops() {
        let lists = [RankedList { retriever: Retriever::Semantic, docs: vec![("strong", 0.9), ("weak", 0.5), ("noise", 0.1)] }, list(Retriever::Tags, &["tagged"])];
        let fused = fuse(&lists);
        assert_eq!(order(&fused), vec!["strong", "tagged", "weak"]);
        assert_eq!(fused[0].tier, Tier::TitleKeywords);
        // The dropped candidate did not take a rank: "weak" is rank 2 of its list.
        assert!((fused[2].rrf - 1.0 / 62.0).abs() < 1e-12);
    }

    #[test]
    fn a_literal_match_in_the_body_outranks_keywords_and_meaning_without_it() {
        // "时雨" cut into 时 (a stop word) and 雨: "every keyword in the title" holds
        // for a title with 雨 alone; only one document holds the text.
        let lists = [
            list(Retriever::TitleKeywords, &["rain_in_title"]),
            list(Retriever::Summary, &["rain_in_summary"]),
            RankedList { retriever: Retriever::Semantic, docs: vec![("similar", 0.9)] },
            list(Retriever::BodyWords, &["rain_in_title", "rain_in_summary", "holder"]),
            list(Retriever::BodyLiteral, &["holder"]),
        ];
        let fused = fuse(&lists);
        assert_eq!(order(&fused)[0], "holder");
        assert!(fused[0].literal && !fused[1].literal);
        assert_eq!(fused[0].tier, Tier::Body, "the tier still says where it matched");
        assert_eq!(order(&fused)[1..], ["rain_in_title", "similar", "rain_in_summary"]);
    }

    #[test]
    fn ties_break_by_key() {
        let lists = [list(Retriever::BodyWords, &["b"]), list(Retriever::BodyLiteral, &["a"])];
        assert_eq!(order(&fuse(&lists)), vec!["a", "b"]);
    }
}
