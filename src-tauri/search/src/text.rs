//! The text side of search, pure: normalisation, the two token streams the index
//! holds (jieba words and character n-grams), query analysis, the front matter and
//! summary of a source, and where a query matches in a text (a UTF-16 span and a
//! snippet with highlights).

use std::sync::OnceLock;

use unicode_normalization::UnicodeNormalization;

use crate::model::Anchor;

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

/// Tags and category declared in a source's front matter (a leading block between
/// `---` lines, as Hugo, Hexo and Jekyll write it), and where the text after it starts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FrontMatter {
    pub tags: Vec<String>,
    pub category: Option<String>,
    /// Byte offset of the text after the front matter (0 without one).
    pub body_start: usize,
}

/// Reads `tags`, `keywords`, `category` and `categories` from a source's front
/// matter: `key: a, b`, `key: [a, "b"]` or a `- item` list under the key. Only these
/// keys and these shapes are read, so no YAML library is needed for them (and
/// nothing else in the block can fail the index); other keys are ignored.
pub fn front_matter(source: &str) -> FrontMatter {
    let mut lines = source.split_inclusive('\n');
    let Some(first) = lines.next() else { return FrontMatter::default() };
    if first.trim_end() != "---" {
        return FrontMatter::default();
    }
    let mut offset = first.len();
    let mut out = FrontMatter::default();
    let mut current_list: Option<&'static str> = None;
    let mut closed = false;
    for line in lines {
        offset += line.len();
        let trimmed = line.trim_end();
        if trimmed == "---" || trimmed == "..." {
            closed = true;
            break;
        }
        if let Some(item) = trimmed.trim_start().strip_prefix("- ") {
            if let Some(key) = current_list {
                add_front_matter_values(&mut out, key, &[item]);
            }
            continue;
        }
        current_list = None;
        let Some((key, value)) = trimmed.split_once(':') else { continue };
        let key = match key.trim().to_lowercase().as_str() {
            "tags" | "keywords" => "tags",
            "category" | "categories" => "category",
            _ => continue,
        };
        let value = value.trim();
        if value.is_empty() {
            current_list = Some(key);
            continue;
        }
        let value = value.strip_prefix('[').and_then(|v| v.strip_suffix(']')).unwrap_or(value);
        let items: Vec<&str> = value.split([',', '，', '、']).collect();
        add_front_matter_values(&mut out, key, &items);
    }
    if !closed {
        return FrontMatter::default();
    }
    out.body_start = offset;
    out
}

fn add_front_matter_values(out: &mut FrontMatter, key: &str, items: &[&str]) {
    for item in items {
        let value = item.trim().trim_matches(|c| c == '"' || c == '\'').trim().trim_start_matches('#').to_owned();
        if value.is_empty() {
            continue;
        }
        if key == "category" && out.category.is_none() {
            out.category = Some(value);
        } else if key == "category" || !out.tags.contains(&value) {
            // A second category is kept as a tag, so it is still found.
            if !out.tags.contains(&value) {
                out.tags.push(value);
            }
        }
    }
}

/// Longest summary, in characters.
pub const SUMMARY_CHARS: usize = 300;

/// The first paragraph of a Markdown body: the first block of text that is not a
/// heading, an image, a rule, HTML or code, with inline marks (`*`, `_`, `` ` ``,
/// link targets) taken out; at most [`SUMMARY_CHARS`] characters.
pub fn summary(body: &str) -> String {
    let mut in_fence = false;
    let mut paragraph: Vec<&str> = Vec::new();
    for line in body.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
            if !paragraph.is_empty() {
                break;
            }
            continue;
        }
        if in_fence {
            continue;
        }
        if trimmed.is_empty() {
            if !paragraph.is_empty() {
                break;
            }
            continue;
        }
        let skip = trimmed.starts_with('#') || trimmed.starts_with("![") || trimmed.starts_with('<') || trimmed.chars().all(|c| matches!(c, '-' | '*' | '_' | '=' | ' '));
        if skip {
            if !paragraph.is_empty() {
                break;
            }
            continue;
        }
        paragraph.push(trimmed.trim_start_matches(['>', ' ']));
    }
    let joined = paragraph.join(" ");
    strip_inline_marks(&joined).chars().take(SUMMARY_CHARS).collect()
}

/// `[text](url)` becomes `text`; `*`, `_` and `` ` `` go.
fn strip_inline_marks(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find("](").and_then(|close| after[close + 2..].find(')').map(|end| (close, close + 2 + end))) {
            Some((close, end)) => {
                out.push_str(&after[..close]);
                rest = &after[end + 1..];
            }
            None => {
                out.push('[');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out.chars().filter(|c| !matches!(c, '*' | '_' | '`')).collect()
}

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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn texts(tokens: &[Token]) -> Vec<(usize, &str)> {
        tokens.iter().map(|t| (t.position, t.text.as_str())).collect()
    }

    #[test]
    fn normalisation_folds_width_and_case() {
        assert_eq!(normalize("ＧＰＴ－４ Hello"), "gpt-4 hello");
        assert_eq!(normalize_label("  手冲  咖啡\t入门 "), "手冲 咖啡 入门");
    }

    #[test]
    fn grams_are_unigrams_and_bigrams_of_joined_cjk_and_whole_latin_words() {
        let tokens = gram_tokens(&normalize("你好，世界 GPT4o!"));
        assert_eq!(texts(&tokens), vec![(0, "你"), (0, "你好"), (1, "好"), (2, "世"), (2, "世界"), (3, "界"), (4, "gpt4o")]);
    }

    #[test]
    fn literal_terms_cover_every_unit_once_in_order() {
        assert_eq!(literal_terms("咖啡"), vec![(0, "咖啡".to_owned())]);
        assert_eq!(literal_terms("猫"), vec![(0, "猫".to_owned())]);
        assert_eq!(literal_terms("手冲咖啡"), vec![(0, "手冲".to_owned()), (1, "冲咖".to_owned()), (2, "咖啡".to_owned())]);
        assert_eq!(literal_terms("你好，世界"), vec![(0, "你好".to_owned()), (2, "世界".to_owned())]);
        assert_eq!(literal_terms("用gpt写"), vec![(0, "用".to_owned()), (1, "gpt".to_owned()), (2, "写".to_owned())]);
        assert_eq!(literal_terms("的了"), vec![(0, "的了".to_owned())]);
        assert!(literal_terms("，。 ").is_empty());
    }

    #[test]
    fn query_keywords_drop_stop_words_unless_nothing_else_is_left() {
        let terms = QueryTerms::new("我的 咖啡");
        assert!(terms.keywords.contains(&"咖啡".to_owned()), "{terms:?}");
        assert!(!terms.keywords.contains(&"的".to_owned()), "{terms:?}");
        assert_eq!(QueryTerms::new("的").keywords, vec!["的".to_owned()]);
        assert!(QueryTerms::new("  ").is_empty());
    }

    #[test]
    fn front_matter_gives_tags_and_category() {
        let source = "---\ntitle: 你好\ntags: [咖啡, \"手冲\"]\ncategories:\n  - 生活\n  - 饮品\n---\n正文";
        let front = front_matter(source);
        assert_eq!(front.tags, vec!["咖啡", "手冲", "饮品"]);
        assert_eq!(front.category.as_deref(), Some("生活"));
        assert_eq!(&source[front.body_start..], "正文");
        assert_eq!(front_matter("---\ntags: a\nno end"), FrontMatter::default());
        assert_eq!(front_matter("# Title\n---\n"), FrontMatter::default());
    }

    #[test]
    fn the_summary_is_the_first_paragraph_without_marks() {
        let body = "# 标题\n\n![图](a.png)\n\n这是**第一段**，见[链接](https://x.com)。\n第二行。\n\n第二段。";
        assert_eq!(summary(body), "这是第一段，见链接。 第二行。");
        assert_eq!(summary("```\ncode\n```\n\n> 引用段落"), "引用段落");
    }

    #[test]
    fn a_literal_match_gives_its_utf16_span_and_a_marked_snippet() {
        let text = "# 标题\n\n前面 😀 的文字，然后是手冲咖啡的做法。";
        let located = locate(text, &QueryTerms::new("手冲咖啡")).unwrap();
        let utf16: Vec<u16> = text.encode_utf16().collect();
        assert_eq!(String::from_utf16(&utf16[located.span.from as usize..located.span.to as usize]).unwrap(), "手冲咖啡");
        let snippet_utf16: Vec<u16> = located.snippet.text.encode_utf16().collect();
        let marked: Vec<String> = located.snippet.highlights.iter().map(|h| String::from_utf16(&snippet_utf16[h.from as usize..h.to as usize]).unwrap()).collect();
        assert_eq!(marked, vec!["手冲咖啡"]);
        assert!(!located.snippet.text.contains('\n'));
    }

    #[test]
    fn without_a_literal_match_the_window_with_most_keywords_wins() {
        let text = "咖啡在开头。中间很多无关的文字，无关的文字，无关的文字，无关的文字，无关的文字，无关的文字，无关的文字，无关的文字。后来手冲和咖啡一起出现。";
        let located = locate(text, &QueryTerms::new("咖啡 手冲")).unwrap();
        let utf16: Vec<u16> = text.encode_utf16().collect();
        assert_eq!(String::from_utf16(&utf16[located.span.from as usize..located.span.to as usize]).unwrap(), "手冲");
        assert!(located.snippet.highlights.len() >= 2, "{located:?}");
        assert!(locate(text, &QueryTerms::new("马拉松")).is_none());
    }

    #[test]
    fn english_words_are_stemmed_and_chinese_words_are_not() {
        let stem = |w: &str| english_stem(w).unwrap_or_else(|| w.to_owned());
        // The forms of one word share a stem; different words keep theirs.
        for forms in [["meet", "meeting", "meetings"], ["story", "stories", "story"], ["note", "notes", "noted"]] {
            assert!(forms.iter().all(|f| stem(f) == stem(forms[0])), "{forms:?}: {:?}", forms.map(stem));
        }
        assert_ne!(stem("meeting"), stem("meat"));
        for word in ["this", "focus", "glass", "was", "café", "gpt4s", "茶园", "ab"] {
            assert_eq!(english_stem(word), None, "{word}");
        }
        let tokens = word_tokens(&normalize("Fewer Meetings 在茶园里"));
        let texts: Vec<&str> = tokens.iter().map(|t| t.text.as_str()).collect();
        assert!(texts.contains(&"meet") && texts.contains(&"茶园") && !texts.contains(&"meetings"), "{texts:?}");
        // The query stems as the index does; stop words are told by their surface form.
        assert_eq!(QueryTerms::new("Meetings").keywords, vec!["meet".to_owned()]);
        assert_eq!(QueryTerms::new("this meeting").keywords, vec!["meet".to_owned()]);
    }

    #[test]
    fn a_stemmed_keyword_is_located_at_the_words_with_its_stem() {
        let text = "Two stories about a meeting.";
        let located = locate(text, &QueryTerms::new("story")).unwrap();
        assert_eq!((located.span.from, located.span.to), (4, 11));
        let located = locate(text, &QueryTerms::new("meetings")).unwrap();
        assert_eq!((located.span.from, located.span.to), (20, 27));
        assert!(locate("storytelling", &QueryTerms::new("story")).is_some(), "the query as written, inside a word");
    }

    #[test]
    fn case_and_width_are_ignored_when_locating() {
        let text = "Using ＧＰＴ for Drafts";
        let located = locate(text, &QueryTerms::new("gpt for drafts")).unwrap();
        assert_eq!((located.span.from, located.span.to), (6, 20));
    }
}
