//! Lengths as each platform counts them.

use unicode_normalization::UnicodeNormalization;

mod x_emoji;
mod x_url;

use x_url::{may_follow_dot, may_hold_url, XUrl};

/// X counts every URL as this many.
pub const X_URL_WEIGHT: usize = 23;

/// Code points weighing 1 on X (twitter-text config v3); everything else weighs 2.
fn x_weight(c: char) -> usize {
    let cp = c as u32;
    let light = (0x0000..=0x10FF).contains(&cp) || (0x2000..=0x200D).contains(&cp) || (0x2010..=0x201F).contains(&cp) || (0x2032..=0x2037).contains(&cp);
    if light {
        1
    } else {
        2
    }
}

/// URLs in `text` as byte ranges (http(s) links and bare domains with a known shape),
/// as linkify finds them: what WeChat links and where sentences may not split. X
/// counts its own way, [`x_url_ranges`].
pub fn url_ranges(text: &str) -> Vec<(usize, usize)> {
    if !may_hold_link(text) {
        return Vec::new();
    }
    let mut finder = linkify::LinkFinder::new();
    finder.kinds(&[linkify::LinkKind::Url]);
    finder.url_must_have_scheme(false);
    finder.links(text).map(|l| (l.start(), l.end())).collect()
}

/// True when linkify may find a link in `text`: a domain needs a `.` before its TLD
/// ([`may_hold_url`]), and a link with a scheme has `://` (linkify takes `a://a`,
/// which has no dot).
fn may_hold_link(text: &str) -> bool {
    may_hold_url(text) || text.contains("://")
}

/// True when every character is one that NFC leaves alone and that nothing after it
/// can combine with (so the text is NFC without table lookups): ASCII and Latin below
/// the combining marks, CJK ideographs, CJK and general punctuation without combining
/// marks or singletons, fullwidth ASCII. Anything else takes the full check.
fn surely_nfc(text: &str) -> bool {
    text.chars().all(surely_nfc_char)
}

#[inline]
fn surely_nfc_char(c: char) -> bool {
    let cp = c as u32;
    cp < 0x300
        || (0x4E00..=0x9FFF).contains(&cp)
        || (0x3000..=0x3029).contains(&cp)
        || (0x2010..=0x2027).contains(&cp)
        || (0x2030..=0x205E).contains(&cp)
        || (0xFF01..=0xFF5E).contains(&cp)
}

/// X's weighted length of `text` in one pass when it is plain: every character surely
/// NFC, no `.` followed by what may start a TLD (so no URL, [`may_hold_url`]) and
/// nothing that may start an emoji; `None` when it is not, and the full count must run.
/// Exactly what [`x_weighted_length`] counts for such a text.
pub fn x_plain_weight(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut total = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b < 0x80 {
            // ASCII: weight 1, NFC, never an emoji's start (keycaps start at U+20E3).
            if b == b'.' && text[i + 1..].chars().next().is_some_and(may_follow_dot) {
                return None;
            }
            total += 1;
            i += 1;
            continue;
        }
        // A three-byte character: decode it here; CJK ideographs (most of a Chinese
        // text) are NFC, start no emoji and weigh 2, with no table to look at.
        if (0xE0..0xF0).contains(&b) && i + 2 < bytes.len() {
            let cp = (u32::from(b & 0x0F) << 12) | (u32::from(bytes[i + 1] & 0x3F) << 6) | u32::from(bytes[i + 2] & 0x3F);
            if (0x4E00..=0x9FFF).contains(&cp) {
                total += 2;
                i += 3;
                continue;
            }
        }
        let c = text[i..].chars().next()?;
        if !surely_nfc_char(c) || x_emoji::may_start_emoji(c) {
            return None;
        }
        total += x_weight(c);
        i += c.len_utf8();
    }
    Some(total)
}

/// X's weighted length of `text` when every character is one [`x_plain_weight`]
/// accepts (surely NFC, none may start an emoji), as text joined from plain pieces
/// with ASCII separators is, and `plain_sum` is the sum of the characters' weights:
/// only a URL the joins made can change it, so find the URLs and count each as X
/// does instead of its characters. Exactly what [`x_weighted_length`] counts for
/// such a text, without its NFC and emoji passes.
pub fn x_weight_of_plain_chars(text: &str, plain_sum: usize) -> usize {
    x_url::x_urls(text).into_iter().fold(plain_sum, |total, url| total - text[url.start..url.end].chars().map(x_weight).sum::<usize>() + X_URL_WEIGHT + url.tail_weight)
}

/// X counts every emoji (a sequence twitter-text recognises, see `x_emoji`) as this many.
const X_EMOJI_WEIGHT: usize = 2;

/// X's weighted length as twitter-text 3.1 (config v3) computes it: NFC, URLs 23
/// each (found by X's own rules, see `x_url`), emoji 2 each (the sequences X
/// recognises, see `x_emoji`), other code points 1 or 2.
pub fn x_weighted_length(text: &str) -> usize {
    // Most text is plain: NFC, no URL, no emoji. One pass weighs it.
    x_plain_weight(text).unwrap_or_else(|| x_full_weight(text))
}

/// [`x_weighted_length`] without the one-pass shortcut for plain text.
fn x_full_weight(text: &str) -> usize {
    // Most text is already NFC and has no URL: skip the copy and the link scan then.
    let normalized;
    let text = if surely_nfc(text) || unicode_normalization::is_nfc_quick(text.chars()) == unicode_normalization::IsNormalized::Yes {
        text
    } else {
        normalized = text.nfc().collect::<String>();
        normalized.as_str()
    };
    let urls = if may_hold_url(text) { x_url::x_urls(text) } else { Vec::new() };
    if urls.is_empty() {
        // One pass: weigh character by character until something may start an emoji.
        let mut total = 0;
        for c in text.chars() {
            if x_emoji::may_start_emoji(c) {
                return weigh_with_entities(text, urls);
            }
            total += x_weight(c);
        }
        return total;
    }
    weigh_with_entities(text, urls)
}

/// `parseTweet`'s loop: at each position a URL that starts there counts 23, else an
/// emoji that starts there counts 2, else the character its weight. URLs and emoji
/// are found over the whole text first, each independently, so one the count jumps
/// over (an emoji reaching into a URL, a URL starting inside an emoji) is never seen,
/// and the rest of it is weighed character by character.
fn weigh_with_entities(text: &str, urls: Vec<XUrl>) -> usize {
    let mut urls = urls.into_iter().peekable();
    let mut emoji = x_emoji::Emoji::new(text);
    // No emoji without a character that may start one (as `x_full_weight` counts).
    let mut next_emoji = if text.chars().any(x_emoji::may_start_emoji) { emoji.next() } else { None };
    let mut total = 0;
    let mut pos = 0;
    while pos < text.len() {
        while urls.next_if(|url| url.start < pos).is_some() {}
        while next_emoji.is_some_and(|(start, _)| start < pos) {
            next_emoji = emoji.next();
        }
        if let Some(url) = urls.next_if(|url| url.start == pos) {
            total += X_URL_WEIGHT + url.tail_weight;
            pos = url.end;
            continue;
        }
        if let Some((_, end)) = next_emoji.filter(|(start, _)| *start == pos) {
            total += X_EMOJI_WEIGHT;
            pos = end;
            next_emoji = emoji.next();
            continue;
        }
        let stop = [urls.peek().map(|url| url.start), next_emoji.map(|(start, _)| start)].into_iter().flatten().fold(text.len(), usize::min);
        total += text[pos..stop].chars().map(x_weight).sum::<usize>();
        pos = stop;
    }
    total
}

/// The URLs X counts as 23 each in `text`, as byte ranges: twitter-text's extraction,
/// which stops a URL at CJK text and full-width punctuation and finds bare domains
/// only with a known TLD. `text` should be NFC, as [`x_weighted_length`] measures.
pub fn x_url_ranges(text: &str) -> Vec<(usize, usize)> {
    x_url::x_urls(text).into_iter().map(|u| (u.start, u.end)).collect()
}

/// Xiaohongshu's title count: ceil(units / 2) with ASCII 1 unit and everything else 2.
pub fn xhs_units(text: &str) -> usize {
    let units: usize = text.chars().map(|c| if c.is_ascii() { 1 } else { 2 }).sum();
    units.div_ceil(2)
}

pub fn chars(text: &str) -> usize {
    text.chars().count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The one-pass count of plain text is the full count, and it declines every
        /// text it cannot count exactly (URLs, emoji, text to normalise).
        #[test]
        fn the_plain_count_is_the_full_count(text in "[a-z .。，中国公司例子😀\u{301}e#0-9:/\u{20E3}\u{FE0F}©]{0,40}") {
            let full = x_full_weight(&text);
            prop_assert!(x_plain_weight(&text).is_none_or(|plain| plain == full), "{text:?}");
            prop_assert_eq!(x_weighted_length(&text), full);
        }
    }

    proptest! {
        /// For text of plain characters, adding up the characters and replacing each
        /// URL's is the full count (plain pieces joined, a `.` meeting a TLD).
        #[test]
        fn plain_characters_with_urls_count_as_the_full_count(text in "[a-z .。，中国公司例子0-9:/]{0,40}") {
            prop_assume!(text.chars().all(|c| surely_nfc_char(c) && !x_emoji::may_start_emoji(c)));
            let sum = text.chars().map(x_weight).sum::<usize>();
            prop_assert_eq!(x_weight_of_plain_chars(&text, sum), x_full_weight(&text), "{:?}", text);
        }
    }

    /// A `.` that ends one plain sentence before a TLD starting the next makes a URL.
    #[test]
    fn a_dot_joined_to_a_tld_counts_as_a_url() {
        for text in ["concrete.公司很好", "see example.com now", "a.中国", "没有网址。"] {
            let sum = text.chars().map(x_weight).sum::<usize>();
            assert_eq!(x_weight_of_plain_chars(text, sum), x_weighted_length(text), "{text:?}");
        }
    }

    proptest! {
        /// The NFC shortcut only ever says yes to text that is NFC.
        #[test]
        fn the_nfc_shortcut_agrees_with_the_tables(cps in proptest::collection::vec(prop_oneof![0u32..0x400, 0x2000u32..0x2070, 0x3000u32..0x3040, 0x4E00u32..0x4E10, 0xFF00u32..0xFF70], 0..12)) {
            let text: String = cps.into_iter().filter_map(char::from_u32).collect();
            if surely_nfc(&text) {
                prop_assert_eq!(text.nfc().collect::<String>(), text.clone());
            }
        }

        /// The prefilter never hides a link linkify would find.
        #[test]
        fn the_url_prefilter_never_hides_a_link(text in "[a-z0-9./:#?= 中。\\-]{0,40}") {
            let mut finder = linkify::LinkFinder::new();
            finder.kinds(&[linkify::LinkKind::Url]);
            finder.url_must_have_scheme(false);
            if !may_hold_link(&text) {
                prop_assert_eq!(finder.links(&text).count(), 0, "{:?}", text);
            }
        }
    }

    /// Found by the property above: a scheme link without a dot.
    #[test]
    fn a_scheme_link_without_a_dot_is_still_a_link() {
        assert_eq!(url_ranges("a://a"), [(0, 5)]);
        assert_eq!(url_ranges("见 ftp://files 。"), [(4, 15)]);
    }

    /// Cases from X's counting rules (docs.x.com "Counting characters" and the
    /// twitter-text v3 conformance descriptions).
    #[test]
    fn x_counts_as_x_does() {
        let cases: &[(&str, usize)] = &[
            ("", 0),
            ("Hello world", 11),
            ("Hi http://test.co", 26),
            ("https://example.com/a/very/long/path?with=query&and=more#fragment", 23),
            ("example.com is a domain", 23 + 12),
            ("你好", 4),
            ("日本語のテキスト", 16),
            ("café", 4),
            ("cafe\u{0301}", 4), // NFC folds e + combining acute into one code point
            ("😀", 2),
            ("👍🏽", 2),                // skin tone modifier
            ("👨‍👩‍👧‍👦", 2),                // ZWJ family
            ("🇨🇳", 2),                // flag
            ("1️⃣", 2),                // keycap
            ("“quoted” — dash…", 17), // U+201C/D and U+2014 weigh 1; U+2026 is outside the ranges: 2
            ("中文 and English 混合", 4 + 13 + 4),
        ];
        for (text, expected) in cases {
            assert_eq!(x_weighted_length(text), *expected, "{text:?}");
        }
        assert_eq!(x_weighted_length(&"中".repeat(140)), 280);
        assert_eq!(x_weighted_length(&"中".repeat(160)), 320);
    }

    /// A URL next to CJK text or full-width punctuation ends where X ends
    /// it (figures from twitter-text 3.1.0 `parseTweet`).
    #[test]
    fn x_urls_do_not_swallow_neighbouring_cjk() {
        assert_eq!(x_weighted_length("见 https://example.com。"), 28);
        assert_eq!(x_weighted_length("你好https://example.com/a世界"), 31);
        assert_eq!(x_weighted_length("看example.org"), 25);
    }

    /// Selectors and keycaps make an emoji only of characters that can be one.
    #[test]
    fn x_weighs_text_default_emoji_as_twitter_text() {
        let cases: &[(&str, usize)] = &[("©", 1), ("©\u{FE0F}", 2), ("1\u{20E3}", 2), ("#\u{FE0F}\u{20E3}", 2), ("中\u{FE0F}", 4), ("a\u{20E3}", 3)];
        for (text, expected) in cases {
            assert_eq!(x_weighted_length(text), *expected, "{text:?}");
        }
    }

    /// Only the sequences twitter-text recognises count as one emoji; the parts of any
    /// other cluster are weighed apart (figures from twitter-text 3.1.0 `parseTweet`).
    #[test]
    fn x_weighs_unrecognised_emoji_sequences_by_their_parts() {
        let cases: &[(&str, usize)] = &[
            ("😀🏽", 4),                 // no skin tone on this face: two emoji
            ("😀\u{200D}😀", 5),         // a join that is no sequence: emoji, ZWJ, emoji
            ("🇦🇦", 4),                   // no such country: two regional indicators
            ("🧑\u{200D}💻", 5),         // newer than twemoji-parser 11
            ("☀\u{FE0E}", 4),            // text presentation: no emoji
            ("1\u{FE0E}\u{20E3}", 5),    // no keycap with a text selector
            ("🏴\u{E0067}\u{E007F}", 6), // a tag sequence of no region
        ];
        for (text, expected) in cases {
            assert_eq!(x_weighted_length(text), *expected, "{text:?}");
        }
    }

    #[test]
    fn xiaohongshu_titles_count_half_for_ascii() {
        assert_eq!(xhs_units("上海周末徒步路线"), 8);
        assert_eq!(xhs_units("abc"), 2);
        assert_eq!(xhs_units("3条不累的路线ab"), 8);
        assert_eq!(xhs_units(&"字".repeat(20)), 20);
        assert_eq!(xhs_units(&"字".repeat(21)), 21);
    }
}
