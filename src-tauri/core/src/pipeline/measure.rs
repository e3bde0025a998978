//! Lengths as each platform counts them.

use unicode_normalization::UnicodeNormalization;
use unicode_segmentation::UnicodeSegmentation;

mod x_url;

use x_url::may_hold_url;

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

/// Characters that are emoji only when a variation selector or keycap follows them
/// (text presentation by default): `©` alone weighs 1, `©️` is an emoji.
fn is_text_default_emoji(c: char) -> bool {
    matches!(c as u32, 0x23 | 0x2A | 0x30..=0x39 | 0xA9 | 0xAE | 0x203C | 0x2049 | 0x2122 | 0x2139 | 0x2194..=0x2199 | 0x21A9 | 0x21AA | 0x24C2 | 0x25AA | 0x25AB | 0x25B6 | 0x25C0 | 0x25FB..=0x25FE | 0x2934 | 0x2935 | 0x3030 | 0x303D | 0x3297 | 0x3299)
}

/// True for a grapheme cluster that X counts as one emoji (weight 2): pictographs,
/// flags, keycaps, and pictographs or text-default emoji joined by ZWJ or carrying a
/// presentation selector or a skin tone. A selector after any other character (`中️`)
/// is no emoji: twitter-text weighs the two characters apart.
fn is_emoji_cluster(cluster: &str) -> bool {
    let mut chars = cluster.chars();
    let Some(first) = chars.next() else { return false };
    let cp = first as u32;
    let pictographic = (0x1F000..=0x1FAFF).contains(&cp)
        || (0x2600..=0x27BF).contains(&cp)
        || (0x2B00..=0x2BFF).contains(&cp)
        || (0x2300..=0x23FF).contains(&cp)
        || (0x1F1E6..=0x1F1FF).contains(&cp);
    let decorated = cluster.chars().any(|c| c == '\u{FE0F}' || c == '\u{200D}' || c == '\u{20E3}' || ('\u{1F3FB}'..='\u{1F3FF}').contains(&c));
    pictographic || (decorated && is_text_default_emoji(first) && cluster.chars().count() > 1)
}

/// URLs in `text` as byte ranges (http(s) links and bare domains with a known shape),
/// as linkify finds them: what WeChat links and where sentences may not split. X
/// counts its own way, [`x_url_ranges`].
pub fn url_ranges(text: &str) -> Vec<(usize, usize)> {
    if !may_hold_url(text) {
        return Vec::new();
    }
    let mut finder = linkify::LinkFinder::new();
    finder.kinds(&[linkify::LinkKind::Url]);
    finder.url_must_have_scheme(false);
    finder.links(text).map(|l| (l.start(), l.end())).collect()
}

/// True when a character may start or join an emoji cluster, so grapheme segmentation
/// is needed; plain text (Latin, CJK, punctuation) is weighed per character.
fn may_cluster(c: char) -> bool {
    let cp = c as u32;
    cp >= 0x1F000
        || (0x2300..=0x23FF).contains(&cp)
        || (0x2600..=0x27BF).contains(&cp)
        || (0x2B00..=0x2BFF).contains(&cp)
        || (0xFE00..=0xFE0F).contains(&cp)
        || cp == 0x200D
        || cp == 0x20E3
}

fn weigh_plain(text: &str) -> usize {
    if !text.chars().any(may_cluster) {
        return text.chars().map(x_weight).sum();
    }
    text.graphemes(true).map(|g| if is_emoji_cluster(g) { 2 } else { g.chars().map(x_weight).sum() }).sum()
}

/// True when every character is one that NFC leaves alone and that nothing after it
/// can combine with (so the text is NFC without table lookups): ASCII and Latin below
/// the combining marks, CJK ideographs, CJK and general punctuation without combining
/// marks or singletons, fullwidth ASCII. Anything else takes the full check.
fn surely_nfc(text: &str) -> bool {
    text.chars().all(|c| {
        let cp = c as u32;
        cp < 0x300
            || (0x4E00..=0x9FFF).contains(&cp)
            || (0x3000..=0x3029).contains(&cp)
            || (0x2010..=0x2027).contains(&cp)
            || (0x2030..=0x205E).contains(&cp)
            || (0xFF01..=0xFF5E).contains(&cp)
    })
}

/// X's weighted length as twitter-text 3.1 (config v3) computes it: NFC, URLs 23
/// each (found by X's own rules, see `x_url`), emoji clusters 2, other code points 1
/// or 2.
pub fn x_weighted_length(text: &str) -> usize {
    // Most text is already NFC and has no URL: skip the copy and the link scan then.
    let normalized;
    let text = if surely_nfc(text) || unicode_normalization::is_nfc_quick(text.chars()) == unicode_normalization::IsNormalized::Yes {
        text
    } else {
        normalized = text.nfc().collect::<String>();
        normalized.as_str()
    };
    if !may_hold_url(text) {
        return weigh_plain(text);
    }
    let mut total = 0;
    let mut last = 0;
    for url in x_url::x_urls(text) {
        total += weigh_plain(&text[last..url.start]) + X_URL_WEIGHT + url.tail_weight;
        last = url.end;
    }
    total + weigh_plain(&text[last..])
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
            if !may_hold_url(&text) {
                prop_assert_eq!(finder.links(&text).count(), 0, "{:?}", text);
            }
        }
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
            ("👍🏽", 2),                        // skin tone modifier
            ("👨‍👩‍👧‍👦", 2),                        // ZWJ family
            ("🇨🇳", 2),                          // flag
            ("1️⃣", 2),                          // keycap
            ("“quoted” — dash…", 17),          // U+201C/D and U+2014 weigh 1; U+2026 is outside the ranges: 2
            ("中文 and English 混合", 4 + 13 + 4),
        ];
        for (text, expected) in cases {
            assert_eq!(x_weighted_length(text), *expected, "{text:?}");
        }
        assert_eq!(x_weighted_length(&"中".repeat(140)), 280);
        assert_eq!(x_weighted_length(&"中".repeat(160)), 320);
    }

    /// Issue 10: a URL next to CJK text or full-width punctuation ends where X ends
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

    #[test]
    fn xiaohongshu_titles_count_half_for_ascii() {
        assert_eq!(xhs_units("上海周末徒步路线"), 8);
        assert_eq!(xhs_units("abc"), 2);
        assert_eq!(xhs_units("3条不累的路线ab"), 8);
        assert_eq!(xhs_units(&"字".repeat(20)), 20);
        assert_eq!(xhs_units(&"字".repeat(21)), 21);
    }
}
