//! Offline suggestions, no model needed: keywords and topic tags extracted from the
//! source (TF-IDF over jieba segmentation for Chinese; term frequency without stop
//! words for English), and how the title fits each platform.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use jieba_rs::{Jieba, KeywordExtract, TfIdf};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::pipeline::plain_text;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Keyword {
    pub keyword: String,
    pub weight: f64,
}

fn jieba() -> &'static (Jieba, TfIdf) {
    static JIEBA: OnceLock<(Jieba, TfIdf)> = OnceLock::new();
    JIEBA.get_or_init(|| (Jieba::new(), TfIdf::default()))
}

const ENGLISH_STOP_WORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "an", "and", "any", "are", "as", "at", "be", "because", "been", "but", "by", "can", "could", "do", "does", "for", "from",
    "get", "had", "has", "have", "how", "i", "if", "in", "into", "is", "it", "its", "just", "like", "more", "most", "my", "no", "not", "of", "on", "one", "only",
    "or", "our", "out", "so", "some", "than", "that", "the", "their", "them", "then", "there", "these", "they", "this", "to", "up", "us", "was", "we", "what",
    "when", "which", "who", "will", "with", "would", "you", "your", "http", "https", "www", "com",
];

/// The top `top_k` keywords of a text, Chinese and English together, strongest first.
pub fn keywords(text: &str, top_k: usize) -> Vec<Keyword> {
    let (jieba, tfidf) = jieba();
    let mut out: Vec<Keyword> = tfidf
        .extract_keywords(jieba, text, top_k * 2, vec![])
        .into_iter()
        .filter(|k| !k.keyword.is_ascii())
        .map(|k| Keyword { keyword: k.keyword, weight: k.weight })
        .collect();
    // English words: frequency over words of 3+ letters that are not stop words,
    // scaled to sit beside the Chinese TF-IDF weights.
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut n_words = 0usize;
    for word in text.split(|c: char| !c.is_ascii_alphanumeric() && c != '-').filter(|w| w.len() >= 3 && w.chars().any(|c| c.is_ascii_alphabetic())) {
        n_words += 1;
        let lower = word.to_lowercase();
        if !ENGLISH_STOP_WORDS.contains(&lower.as_str()) {
            *counts.entry(lower).or_default() += 1;
        }
    }
    for (word, count) in counts {
        if count >= 2 || n_words < 40 {
            out.push(Keyword { keyword: word, weight: count as f64 / n_words.max(1) as f64 * 10.0 });
        }
    }
    out.sort_by(|a, b| b.weight.partial_cmp(&a.weight).unwrap_or(std::cmp::Ordering::Equal).then_with(|| a.keyword.cmp(&b.keyword)));
    out.truncate(top_k);
    out
}

/// Topic tags for a source: its keywords, plus the brand's default tags first.
pub fn tags(title: &str, source: &str, brand_tags: &[String], n: usize) -> Vec<String> {
    let plain = plain_text(source).blocks.join("\n");
    let text = format!("{title}\n{plain}");
    let mut out: Vec<String> = brand_tags.iter().map(|t| t.trim().trim_start_matches('#').to_owned()).filter(|t| !t.is_empty()).collect();
    for keyword in keywords(&text, n * 2) {
        if out.len() >= n {
            break;
        }
        if !out.iter().any(|t| t.eq_ignore_ascii_case(&keyword.keyword)) {
            out.push(keyword.keyword);
        }
    }
    out.truncate(n);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chinese_and_english_keywords_come_from_the_text() {
        let text = "写作是一门手艺。每天写作，写作让思考更清楚。Inkstone helps writing: drafts, drafts and more drafts.";
        let words: Vec<String> = keywords(text, 5).into_iter().map(|k| k.keyword).collect();
        assert!(words.contains(&"写作".to_owned()), "{words:?}");
        assert!(words.contains(&"drafts".to_owned()), "{words:?}");
        assert!(!words.iter().any(|w| w == "and" || w == "more"), "{words:?}");
    }

    #[test]
    fn brand_tags_come_first() {
        let tags = tags("周末徒步", "上海周末徒步路线推荐，徒步装备清单。", &["#户外".to_owned()], 3);
        assert_eq!(tags[0], "户外");
        assert!(tags.contains(&"徒步".to_owned()), "{tags:?}");
    }
}
