//! Where a query matches in a text, pure: a UTF-16 span and a one-line snippet with
//! the matched words marked.

use unicode_normalization::UnicodeNormalization;

use super::{english_stem, is_word_char, QueryTerms};
use crate::model::Anchor;

/// Where a query matched in a text, and a snippet around it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// The match in the text, in UTF-16 code units.
    pub span: Anchor,
    pub snippet: Snippet,
}

/// A short piece of a text around a match, on one line, with the matched words
/// marked (UTF-16 ranges within `text`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Snippet {
    pub text: String,
    pub highlights: Vec<Anchor>,
}

/// Characters of context kept before a match in a snippet.
const SNIPPET_BEFORE: usize = 24;
/// Longest snippet, in characters.
pub const SNIPPET_CHARS: usize = 96;

/// A text's characters, each lowercased to one character (so character indexes of
/// the folded text are those of the text), with full-width forms folded like the
/// index folds them where that keeps one character.
fn folded_chars(text: &str) -> Vec<char> {
    text.chars()
        .map(|c| {
            let mut nfkc = std::iter::once(c).nfkc();
            let single = match (nfkc.next(), nfkc.next()) {
                (Some(n), None) => n,
                _ => c,
            };
            let mut lower = single.to_lowercase();
            match (lower.next(), lower.next()) {
                (Some(l), None) => l,
                _ => single,
            }
        })
        .collect()
}

/// Every start index of `needle` in `haystack` (characters), overlapping allowed.
fn occurrences(haystack: &[char], needle: &[char]) -> Vec<usize> {
    if needle.is_empty() || needle.len() > haystack.len() {
        return Vec::new();
    }
    (0..=haystack.len() - needle.len()).filter(|&i| haystack[i..i + needle.len()] == *needle).collect()
}

/// The runs of ASCII letters in `folded` (characters) that are `stem` or stem to it.
fn words_with_stem(folded: &[char], stem: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for at in 0..=folded.len() {
        let letter = folded.get(at).is_some_and(|c| c.is_ascii_lowercase());
        match (letter, start) {
            (true, None) => start = Some(at),
            (false, Some(from)) => {
                start = None;
                // A letter run inside a longer word of other letters or digits is no word.
                let bounded = from.checked_sub(1).and_then(|i| folded.get(i)).is_none_or(|c| !is_word_char(*c)) && folded.get(at).is_none_or(|c| !is_word_char(*c));
                let word: String = folded[from..at].iter().collect();
                if bounded && (word == stem || english_stem(&word).as_deref() == Some(stem)) {
                    out.push((from, at));
                }
            }
            _ => {}
        }
    }
    out
}

/// Finds the query in `text`: the whole query where it occurs literally (ignoring
/// case and width), else the window holding the most distinct keywords; `None` when
/// nothing of the query occurs. The snippet shows the text around that place.
pub fn locate(text: &str, terms: &QueryTerms) -> Option<Located> {
    let chars: Vec<char> = text.chars().collect();
    let folded = folded_chars(text);
    let phrase: Vec<char> = terms.normalized.chars().collect();
    let mut marks: Vec<(usize, usize)> = Vec::new();
    let span = match occurrences(&folded, &phrase).first() {
        Some(&start) if !phrase.is_empty() => (start, start + phrase.len()),
        _ => {
            let mut found: Vec<(usize, usize, usize)> = Vec::new();
            for (idx, keyword) in terms.keywords.iter().enumerate() {
                // An English keyword is a stem: the words of the text with that stem
                // ("stories" for "story"), else the stem inside a longer word.
                let words = if keyword.bytes().all(|b| b.is_ascii_lowercase()) { words_with_stem(&folded, keyword) } else { Vec::new() };
                if words.is_empty() {
                    let needle: Vec<char> = keyword.chars().collect();
                    found.extend(occurrences(&folded, &needle).into_iter().map(|s| (s, s + needle.len(), idx)));
                } else {
                    found.extend(words.into_iter().map(|(s, e)| (s, e, idx)));
                }
            }
            if found.is_empty() {
                return None;
            }
            found.sort();
            // The window starting at each match: count its distinct keywords.
            let best = found
                .iter()
                .enumerate()
                .map(|(i, (start, end, _))| {
                    let mut seen: Vec<usize> = found[i..].iter().take_while(|(s, _, _)| *s < start + SNIPPET_CHARS / 2).map(|(_, _, k)| *k).collect();
                    seen.sort_unstable();
                    seen.dedup();
                    (seen.len(), std::cmp::Reverse(*start), *end)
                })
                .max()
                .map(|(_, std::cmp::Reverse(start), end)| (start, end));
            let (start, end) = best?;
            marks.extend(found.iter().map(|(s, e, _)| (*s, *e)));
            (start, end)
        }
    };
    marks.push(span);
    let from = span.0.saturating_sub(SNIPPET_BEFORE);
    let to = (from + SNIPPET_CHARS).min(chars.len()).max(span.1.min(chars.len()));
    let mut snippet_text = String::new();
    let mut highlights = Vec::new();
    let mut utf16 = 0u32;
    let prefix = if from > 0 { "…" } else { "" };
    snippet_text.push_str(prefix);
    utf16 += prefix.encode_utf16().count() as u32;
    let mut index_utf16 = Vec::with_capacity(to - from + 1);
    for c in &chars[from..to] {
        index_utf16.push(utf16);
        let shown = if c.is_whitespace() { ' ' } else { *c };
        snippet_text.push(shown);
        utf16 += shown.len_utf16() as u32;
    }
    index_utf16.push(utf16);
    if to < chars.len() {
        snippet_text.push('…');
    }
    marks.sort();
    marks.dedup();
    for (start, end) in marks {
        if start >= from && end <= to && start < end {
            let mark = Anchor { from: index_utf16[start - from], to: index_utf16[end - from] };
            if !highlights.iter().any(|h: &Anchor| h.from < mark.to && mark.from < h.to) {
                highlights.push(mark);
            }
        }
    }
    let utf16_of = |idx: usize| -> u32 { chars[..idx].iter().map(|c| c.len_utf16() as u32).sum() };
    Some(Located { span: Anchor { from: utf16_of(span.0), to: utf16_of(span.1) }, snippet: Snippet { text: snippet_text, highlights } })
}

/// The start of a text as a snippet without highlights (for a hit on its title or
/// tags only).
pub fn opening(text: &str) -> Snippet {
    let mut shown: String = text.chars().take(SNIPPET_CHARS).map(|c| if c.is_whitespace() { ' ' } else { c }).collect();
    if text.chars().count() > SNIPPET_CHARS {
        shown.push('…');
    }
    Snippet { text: shown, highlights: Vec::new() }
}
