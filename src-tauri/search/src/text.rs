//! The text side of search, pure: normalisation, the two token streams the index
//! holds (jieba words and character n-grams), query analysis, the front matter and
//! summary of a source, and where a query matches in a text (a UTF-16 span and a
//! snippet with highlights).

use std::sync::OnceLock;

use unicode_normalization::UnicodeNormalization;

mod locate;
mod source;
#[cfg(test)]
mod tests;

pub use locate::{locate, opening, Located, Snippet, SNIPPET_CHARS};
pub use source::{front_matter, summary, FrontMatter, SUMMARY_CHARS};

/// NFKC and lowercase: full-width letters and digits become ASCII, case is ignored.
/// Every indexed text and every query goes through this first.
pub fn normalize(text: &str) -> String {
    text.nfkc().flat_map(char::to_lowercase).collect()
}

/// `text` normalised, whitespace runs collapsed to one space, trimmed: how titles,
/// tags and categories are compared for equality.
pub fn normalize_label(text: &str) -> String {
    normalize(text).split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A token with its byte range in the text it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    pub text: String,
    pub from: usize,
    pub to: usize,
    pub position: usize,
}

/// A CJK letter (Han, kana, Hangul; not CJK punctuation): one n-gram unit each.
fn is_cjk_letter(c: char) -> bool {
    c.is_alphabetic() && matches!(c as u32, 0x2E80..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF | 0x20000..=0x2FA1F)
}

/// True for a character that can be part of a word: a letter or digit of any script.
fn is_word_char(c: char) -> bool {
    c.is_alphanumeric()
}

/// Words of a normalised text by jieba's search mode (a long word also yields the
/// shorter words inside it, so "人工智能" is found by "智能"); tokens without a letter
/// or digit (punctuation, spaces) are dropped. Positions count the kept tokens. Each
/// token is the surface word: [`word_tokens`] gives what the index holds.
fn surface_tokens(normalized: &str) -> Vec<Token> {
    let jieba = crate::suggest::segmenter();
    let mut out = Vec::new();
    for token in jieba.cut_for_search(normalized, true) {
        if !token.word.chars().any(is_word_char) {
            continue;
        }
        let position = out.len();
        out.push(Token { text: token.word.to_owned(), from: token.byte_start, to: token.byte_end, position });
    }
    out
}

/// The word tokens the index holds: [`surface_tokens`] with English words reduced to
/// their stem ([`english_stem`]), so "meeting" finds "meetings". Chinese words and
/// other scripts are kept as jieba cut them.
pub fn word_tokens(normalized: &str) -> Vec<Token> {
    let mut tokens = surface_tokens(normalized);
    for token in &mut tokens {
        if let Some(stem) = english_stem(&token.text) {
            token.text = stem;
        }
    }
    tokens
}

/// The stem of a lowercase English word by the Snowball English stemmer (Porter2),
/// or `None` when it stays as it is (not all ASCII letters, shorter than three
/// letters, or already a stem): "meetings" and "meeting" are both "meet". Chinese
/// words and other scripts are never stemmed.
pub fn english_stem(word: &str) -> Option<String> {
    static STEMMER: OnceLock<rust_stemmers::Stemmer> = OnceLock::new();
    if word.len() < 3 || !word.bytes().all(|b| b.is_ascii_lowercase()) {
        return None;
    }
    let stem = STEMMER.get_or_init(|| rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English)).stem(word);
    (stem != word).then(|| stem.into_owned())
}

/// A unit of the n-gram stream: one CJK character, or one run of other letters and
/// digits (a Latin word, a number). `joined` says the next unit follows it directly
/// (both CJK, nothing between), so the two make a bigram.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Unit<'a> {
    text: &'a str,
    from: usize,
    to: usize,
    cjk: bool,
}

fn units(normalized: &str) -> Vec<(Unit<'_>, bool)> {
    let mut raw: Vec<Unit<'_>> = Vec::new();
    let mut word_start: Option<usize> = None;
    let mut previous_end = usize::MAX;
    let mut adjacency: Vec<bool> = Vec::new();
    for (at, c) in normalized.char_indices() {
        let end = at + c.len_utf8();
        if is_cjk_letter(c) {
            if let Some(start) = word_start.take() {
                raw.push(Unit { text: &normalized[start..at], from: start, to: at, cjk: false });
                adjacency.push(false);
            }
            adjacency.push(previous_end == at && raw.last().is_some_and(|u| u.cjk));
            raw.push(Unit { text: &normalized[at..end], from: at, to: end, cjk: true });
            previous_end = end;
        } else if is_word_char(c) {
            if word_start.is_none() {
                word_start = Some(at);
            }
        } else if let Some(start) = word_start.take() {
            raw.push(Unit { text: &normalized[start..at], from: start, to: at, cjk: false });
            adjacency.push(false);
        }
    }
    if let Some(start) = word_start {
        raw.push(Unit { text: &normalized[start..], from: start, to: normalized.len(), cjk: false });
        adjacency.push(false);
    }
    // adjacency[i] says unit i directly follows unit i-1 (both CJK); turn it into
    // "joins the next".
    let n = raw.len();
    raw.into_iter().enumerate().map(|(i, unit)| (unit, i + 1 < n && adjacency[i + 1])).collect()
}

/// The character n-gram stream of a normalised text: at each unit's position the
/// unit itself (a CJK character or a whole Latin word) and, where two CJK characters
/// follow each other directly, their bigram. Punctuation and spaces take no position,
/// so a literal query matches across them ("你好世界" finds "你好，世界").
pub fn gram_tokens(normalized: &str) -> Vec<Token> {
    let units = units(normalized);
    let mut out = Vec::with_capacity(units.len() * 2);
    for (position, (unit, joins_next)) in units.iter().enumerate() {
        out.push(Token { text: unit.text.to_owned(), from: unit.from, to: unit.to, position });
        if *joins_next {
            let next = &units[position + 1].0;
            out.push(Token { text: normalized[unit.from..next.to].to_owned(), from: unit.from, to: next.to, position });
        }
    }
    out
}

/// The terms of a literal (phrase) match of a normalised query over the n-gram
/// stream, each with its position offset: bigrams wherever two CJK characters join,
/// single units elsewhere, so the phrase holds exactly when the query's units occur
/// in order with nothing but punctuation between them. Empty for a query without a
/// letter or digit.
pub fn literal_terms(normalized_query: &str) -> Vec<(usize, String)> {
    let units = units(normalized_query);
    let mut out = Vec::new();
    let mut covered_by_previous = false;
    for (position, (unit, joins_next)) in units.iter().enumerate() {
        if *joins_next {
            let next = &units[position + 1].0;
            out.push((position, normalized_query[unit.from..next.to].to_owned()));
            covered_by_previous = true;
        } else {
            if !covered_by_previous {
                out.push((position, unit.text.to_owned()));
            }
            covered_by_previous = false;
        }
    }
    out
}

/// The distinct index terms of `words`, in order (English words stemmed).
fn distinct_stems<'a>(words: impl Iterator<Item = &'a String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in words {
        let term = english_stem(word).unwrap_or_else(|| word.clone());
        if !out.contains(&term) {
            out.push(term);
        }
    }
    out
}

/// What a query asks for, analysed once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryTerms {
    /// The query, normalised.
    pub normalized: String,
    /// `normalized` as a label (whitespace collapsed): compared with titles and tags.
    pub label: String,
    /// Distinct words of the query without stop words (all of them when every word is
    /// one), in query order, English words stemmed as the index holds them.
    pub keywords: Vec<String>,
    /// The phrase terms of a literal match (see [`literal_terms`]).
    pub literal: Vec<(usize, String)>,
}

impl QueryTerms {
    pub fn new(query: &str) -> QueryTerms {
        let normalized = normalize(query.trim());
        // Stop words are told by their surface form ("this" is one, its stem is not).
        let words: Vec<String> = surface_tokens(&normalized).into_iter().map(|t| t.text).collect();
        let mut keywords = distinct_stems(words.iter().filter(|w| !crate::suggest::is_stop_word(w)));
        if keywords.is_empty() {
            keywords = distinct_stems(words.iter());
        }
        let literal = literal_terms(&normalized);
        QueryTerms { label: normalize_label(&normalized), normalized, keywords, literal }
    }

    pub fn is_empty(&self) -> bool {
        self.keywords.is_empty() && self.literal.is_empty()
    }
}
