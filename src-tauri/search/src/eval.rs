//! Retrieval quality measures, pure: nDCG@k with graded gains (`2^grade - 1`, log2
//! discount, as in TREC and BEIR) and recall@k, for the search evaluation
//! (`cargo xtask eval-search`) and its floor test.

use std::collections::HashMap;

/// Graded judgements of one query: document id → grade (0 = not relevant).
pub type Judgements = HashMap<String, u32>;

fn gain(grade: u32) -> f64 {
    2f64.powi(grade.min(16) as i32) - 1.0
}

fn dcg(grades: impl Iterator<Item = u32>) -> f64 {
    grades.enumerate().map(|(i, g)| gain(g) / ((i + 2) as f64).log2()).sum()
}

/// nDCG of the first `k` of `ranked` (document ids, best first; repeats count once);
/// `None` when no document is relevant.
pub fn ndcg_at(ranked: &[String], judgements: &Judgements, k: usize) -> Option<f64> {
    let mut ideal: Vec<u32> = judgements.values().copied().filter(|g| *g > 0).collect();
    if ideal.is_empty() {
        return None;
    }
    ideal.sort_unstable_by(|a, b| b.cmp(a));
    let ideal_dcg = dcg(ideal.into_iter().take(k));
    let mut seen = std::collections::HashSet::new();
    let actual = dcg(ranked.iter().filter(|d| seen.insert(d.as_str())).take(k).map(|d| judgements.get(d).copied().unwrap_or(0)));
    Some(actual / ideal_dcg)
}

/// The share of relevant documents among the first `k` of `ranked`; `None` when no
/// document is relevant.
pub fn recall_at(ranked: &[String], judgements: &Judgements, k: usize) -> Option<f64> {
    let relevant = judgements.values().filter(|g| **g > 0).count();
    if relevant == 0 {
        return None;
    }
    let mut seen = std::collections::HashSet::new();
    let found = ranked.iter().filter(|d| seen.insert(d.as_str())).take(k).filter(|d| judgements.get(*d).copied().unwrap_or(0) > 0).count();
    Some(found as f64 / relevant as f64)
}

/// The mean of the values that exist (0 for none).
pub fn mean(values: impl Iterator<Item = Option<f64>>) -> f64 {
    let (sum, n) = values.flatten().fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    if n == 0 {
        0.0
    } else {
        sum / n as f64
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn judged(pairs: &[(&str, u32)]) -> Judgements {
        pairs.iter().map(|(d, g)| ((*d).to_owned(), *g)).collect()
    }

    fn ranked(ids: &[&str]) -> Vec<String> {
        ids.iter().map(|d| (*d).to_owned()).collect()
    }

    #[test]
    fn ideal_order_scores_one_and_worse_orders_less() {
        let j = judged(&[("a", 3), ("b", 1), ("c", 0)]);
        assert!((ndcg_at(&ranked(&["a", "b"]), &j, 10).unwrap() - 1.0).abs() < 1e-12);
        let swapped = ndcg_at(&ranked(&["b", "a"]), &j, 10).unwrap();
        // dcg = 1/1 + 7/log2(3); ideal = 7 + 1/log2(3).
        let expected = (1.0 + 7.0 / 3f64.log2()) / (7.0 + 1.0 / 3f64.log2());
        assert!((swapped - expected).abs() < 1e-12);
        assert_eq!(ndcg_at(&ranked(&["c"]), &j, 10), Some(0.0));
        assert_eq!(ndcg_at(&ranked(&["a"]), &judged(&[("x", 0)]), 10), None);
    }

    #[test]
    fn recall_counts_relevant_documents_within_k_once() {
        let j = judged(&[("a", 2), ("b", 1), ("c", 1), ("d", 0)]);
        assert_eq!(recall_at(&ranked(&["a", "a", "d", "b"]), &j, 20), Some(2.0 / 3.0));
        assert_eq!(recall_at(&ranked(&["d", "a"]), &j, 1), Some(0.0));
        assert_eq!(mean([Some(1.0), None, Some(0.0)].into_iter()), 0.5);
    }
}
