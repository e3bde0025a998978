//! Offline suggestions, no model needed: keywords and topic tags extracted from the
//! source (TF-IDF over jieba segmentation for Chinese; term frequency for English;
//! stop words removed for both), and how the title fits each platform.
//!
//! Tags come from the language the article is mostly written in: a Chinese article
//! with one English sentence gets Chinese tags, not that sentence's words.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use jieba_rs::{Jieba, KeywordExtract, KeywordExtractConfig, TfIdf};
use serde::{Deserialize, Serialize};

use inkstone_text::pipeline::plain_text;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Keyword {
    pub keyword: String,
    pub weight: f64,
}

/// English stop words (a published list and Inkstone's additions; see the file).
const ENGLISH_STOP_WORD_LIST: &str = include_str!("suggest/stop_words_en.txt");
/// Chinese stop words (a published list; see the file). jieba-rs has none.
const CHINESE_STOP_WORD_LIST: &str = include_str!("suggest/stop_words_zh.txt");

fn words_of(list: &'static str) -> impl Iterator<Item = &'static str> {
    list.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#'))
}

fn english_stop_words() -> &'static BTreeSet<&'static str> {
    static WORDS: OnceLock<BTreeSet<&'static str>> = OnceLock::new();
    WORDS.get_or_init(|| words_of(ENGLISH_STOP_WORD_LIST).collect())
}

/// jieba and a TF-IDF extractor that skips the stop words of both languages (its
/// default list is 31 English words).
fn jieba() -> &'static (Jieba, TfIdf) {
    static JIEBA: OnceLock<(Jieba, TfIdf)> = OnceLock::new();
    JIEBA.get_or_init(|| {
        let stop_words = words_of(CHINESE_STOP_WORD_LIST).chain(words_of(ENGLISH_STOP_WORD_LIST)).map(str::to_owned).collect();
        let mut tfidf = TfIdf::default();
        *tfidf.config_mut() = KeywordExtractConfig::builder().set_stop_words(stop_words).build();
        (Jieba::new(), tfidf)
    })
}

/// The one jieba segmenter of the process (its dictionary is large), for the search
/// index's tokenizer.
pub fn segmenter() -> &'static Jieba {
    &jieba().0
}

fn chinese_stop_words() -> &'static BTreeSet<&'static str> {
    static WORDS: OnceLock<BTreeSet<&'static str>> = OnceLock::new();
    WORDS.get_or_init(|| words_of(CHINESE_STOP_WORD_LIST).collect())
}

/// True for a word of either stop word list (compared as given: pass it lowercased).
pub fn is_stop_word(word: &str) -> bool {
    english_stop_words().contains(word) || chinese_stop_words().contains(word)
}

/// A CJK letter: a Han character, kana or Hangul (not CJK punctuation).
fn is_cjk_letter(c: char) -> bool {
    c.is_alphabetic() && matches!(c as u32, 0x2E80..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF | 0x20000..=0x2FA1F)
}

/// A Latin letter, plain or accented.
fn is_latin_letter(c: char) -> bool {
    c.is_alphabetic() && (c.is_ascii() || matches!(c as u32, 0xC0..=0x24F))
}

/// Chinese says in one character about what English needs this many letters for, so
/// that an article's CJK characters and Latin letters weigh alike.
const LATIN_LETTERS_PER_CJK_CHAR: usize = 3;

/// How much of a text is Chinese and how much English, as shares that add up to 1:
/// CJK letters against Latin letters, weighed by [`LATIN_LETTERS_PER_CJK_CHAR`].
#[derive(Debug, Clone, Copy, PartialEq)]
struct LanguageShares {
    chinese: f64,
    english: f64,
}

impl LanguageShares {
    fn of(text: &str) -> Self {
        let (mut n_cjk, mut n_latin) = (0usize, 0usize);
        for c in text.chars() {
            if is_cjk_letter(c) {
                n_cjk += 1;
            } else if is_latin_letter(c) {
                n_latin += 1;
            }
        }
        let chinese = (n_cjk * LATIN_LETTERS_PER_CJK_CHAR) as f64;
        let total = chinese + n_latin as f64;
        if total == 0.0 {
            return LanguageShares { chinese: 1.0, english: 0.0 };
        }
        LanguageShares { chinese: chinese / total, english: n_latin as f64 / total }
    }

    /// The language the text is mostly written in (Chinese on a tie).
    fn main_language(self) -> Language {
        if self.chinese >= self.english {
            Language::Chinese
        } else {
            Language::English
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Language {
    Chinese,
    English,
}

/// Chinese keywords by TF-IDF, strongest first.
fn chinese_keywords(text: &str, top_k: usize) -> Vec<Keyword> {
    chinese_keywords_of(text, top_k, &[])
}

/// Chinese keywords by TF-IDF whose part-of-speech tag is one of `allowed_pos` (any,
/// when empty), strongest first.
fn chinese_keywords_of(text: &str, top_k: usize, allowed_pos: &[&str]) -> Vec<Keyword> {
    let (jieba, tfidf) = jieba();
    tfidf
        .extract_keywords(jieba, text, top_k * 2, allowed_pos.iter().map(|p| (*p).to_owned()).collect())
        .into_iter()
        .filter(|k| k.keyword.chars().any(is_cjk_letter))
        .take(top_k)
        .map(|k| Keyword { keyword: k.keyword, weight: k.weight })
        .collect()
}

/// English words of a text, lowercased: runs of letters, digits and inner hyphens or
/// apostrophes. A possessive `'s` is dropped; any other word with an apostrophe is a
/// contraction (`don't`, `we're`), a function word, and is left out.
fn english_words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || is_latin_letter(c) || matches!(c, '-' | '\'' | '\u{2019}')))
        .map(|w| w.trim_matches(|c| matches!(c, '-' | '\'' | '\u{2019}')).to_lowercase().replace('\u{2019}', "'"))
        .filter_map(|w| match w.strip_suffix("'s") {
            Some(stem) => Some(stem.to_owned()),
            None if w.contains('\'') => None,
            None => Some(w),
        })
        .filter(|w| w.chars().count() >= 3 && w.chars().any(is_latin_letter))
}

/// English keywords by term frequency without stop words, strongest first: words of
/// 3+ letters, counted per 10 words (so they sit beside the Chinese TF-IDF weights);
/// in a longer text (40+ words) only words that occur twice or more.
fn english_keywords(text: &str) -> Vec<Keyword> {
    let stop_words = english_stop_words();
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut n_words = 0usize;
    for word in english_words(text) {
        n_words += 1;
        if !stop_words.contains(word.as_str()) {
            *counts.entry(word).or_default() += 1;
        }
    }
    let mut out: Vec<Keyword> = counts
        .into_iter()
        .filter(|(_, count)| *count >= 2 || n_words < 40)
        .map(|(word, count)| Keyword { keyword: word, weight: count as f64 / n_words.max(1) as f64 * 10.0 })
        .collect();
    sort_strongest_first(&mut out);
    out
}

fn sort_strongest_first(keywords: &mut [Keyword]) {
    keywords.sort_by(|a, b| b.weight.partial_cmp(&a.weight).unwrap_or(std::cmp::Ordering::Equal).then_with(|| a.keyword.cmp(&b.keyword)));
}

/// jieba's part-of-speech tags of the words that can name what a text is about:
/// nouns (common, personal, place, organisation, other proper), verbal nouns, idioms
/// and foreign words. Adverbs ("慢慢"), numerals and measure words ("一段"), verbs and
/// adjectives are left out.
const SUBJECT_POS: &[&str] = &["n", "nr", "nrt", "nrfg", "ns", "nt", "nz", "vn", "an", "i", "l", "eng"];

/// Like [`keywords`], but the Chinese ones are only words that can name a subject
/// (see [`SUBJECT_POS`]): for a session's topic, where "慢慢写一段很长的" names none.
pub fn subject_keywords(text: &str, top_k: usize) -> Vec<Keyword> {
    both_languages(text, chinese_keywords_of(text, top_k, SUBJECT_POS), top_k)
}

/// The top `top_k` keywords of a text, Chinese and English together, strongest first.
/// Each language's weights are scaled by its share of the text, so a lone English
/// sentence in a Chinese article ranks below the article's own words.
pub fn keywords(text: &str, top_k: usize) -> Vec<Keyword> {
    both_languages(text, chinese_keywords(text, top_k), top_k)
}

/// `chinese` (the text's Chinese keywords) and its English ones, each language's
/// weights scaled by its share of the text, the `top_k` strongest first.
fn both_languages(text: &str, chinese: Vec<Keyword>, top_k: usize) -> Vec<Keyword> {
    let shares = LanguageShares::of(text);
    let chinese = chinese.into_iter().map(|k| Keyword { weight: k.weight * shares.chinese, ..k });
    let english = english_keywords(text).into_iter().map(|k| Keyword { weight: k.weight * shares.english, ..k });
    let mut out: Vec<Keyword> = chinese.chain(english).collect();
    sort_strongest_first(&mut out);
    out.truncate(top_k);
    out
}

/// Topic tags for a source: the brand's default tags first, then keywords of the
/// language the title and text are mostly written in (stop words never).
pub fn tags(title: &str, source: &str, brand_tags: &[String], n: usize) -> Vec<String> {
    let plain = plain_text(source).blocks.join("\n");
    let text = format!("{title}\n{plain}");
    let mut out: Vec<String> = brand_tags.iter().map(|t| t.trim().trim_start_matches('#').to_owned()).filter(|t| !t.is_empty()).collect();
    let candidates = match LanguageShares::of(&text).main_language() {
        Language::Chinese => chinese_keywords(&text, n * 2),
        Language::English => english_keywords(&text),
    };
    for keyword in candidates {
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

    /// A mostly Chinese article with one English sentence once got
    /// `#every #example #compare` for X.
    #[test]
    fn a_chinese_article_gets_chinese_tags_only() {
        let source = "# 周末徒步装备清单\n\n周末去徒步，装备要轻。徒步鞋、背包和雨衣是徒步的基本装备。\n\n\
            路线选择也很重要：新手徒步先走平缓的路线，再慢慢增加距离。For example, compare every pair of boots before you buy.\n\n\
            徒步结束后记得拉伸，整理装备，为下一次徒步做准备。";
        let tags = tags("周末徒步装备清单", source, &[], 5);
        assert_eq!(tags.len(), 5, "{tags:?}");
        assert!(tags.iter().all(|t| t.chars().all(is_cjk_letter)), "{tags:?}");
        assert!(tags.contains(&"徒步".to_owned()) && tags.contains(&"装备".to_owned()), "{tags:?}");
        assert!(!tags.iter().any(|t| ["every", "example", "compare"].contains(&t.as_str())), "{tags:?}");
    }

    #[test]
    fn an_english_article_gets_english_content_words_without_stop_words() {
        let source = "# Baking sourdough at home\n\nA sourdough starter is flour and water that you feed every day. \
            When the starter is active, it doubles in a few hours and smells sour. Then you can mix the dough.\n\n\
            Shape the dough, let it rise overnight in the fridge, and bake the bread in a hot oven. \
            The bread should sound hollow when you tap it. Feed the starter again afterwards. 这是一句中文。";
        let tags = tags("Baking sourdough at home", source, &["#墨石".to_owned()], 5);
        assert_eq!(tags[0], "墨石", "brand default tags come first: {tags:?}");
        assert_eq!(&tags[1..3], ["sourdough", "starter"], "the most frequent words first: {tags:?}");
        assert!(tags[3..].iter().all(|t| ["baking", "bread", "dough"].contains(&t.as_str())), "{tags:?}");
        assert!(!tags.iter().any(|t| english_stop_words().contains(t.as_str())), "{tags:?}");
        let keywords: Vec<String> = keywords(source, 10).into_iter().map(|k| k.keyword).collect();
        assert!(!keywords.iter().any(|k| english_stop_words().contains(k.as_str())), "{keywords:?}");
    }

    #[test]
    fn the_main_language_weighs_cjk_characters_against_latin_letters() {
        assert_eq!(LanguageShares::of("徒步路线").main_language(), Language::Chinese);
        assert_eq!(LanguageShares::of("hiking").main_language(), Language::English);
        // Four characters say about what twelve letters do.
        assert_eq!(LanguageShares::of("徒步路线 hikingroutes").main_language(), Language::Chinese);
        assert_eq!(LanguageShares::of("徒步路线 hiking the routes!").main_language(), Language::English);
        assert_eq!(LanguageShares::of("123 。").main_language(), Language::Chinese);
    }

    #[test]
    fn brand_tags_come_first() {
        let tags = tags("周末徒步", "上海周末徒步路线推荐，徒步装备清单。", &["#户外".to_owned()], 3);
        assert_eq!(tags[0], "户外");
        assert!(tags.contains(&"徒步".to_owned()), "{tags:?}");
    }
}
