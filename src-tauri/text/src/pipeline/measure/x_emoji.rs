//! Emoji as X finds them when it counts a post: the matches of twemoji-parser 11's
//! regex, which twitter-text 3.1's `parseTweet` weighs 2 each, whatever their length.
//!
//! Only those sequences count as one emoji. A grapheme cluster is not the unit: X
//! weighs `😀🏽` (a skin tone on a face that takes none) as two emoji (4), `😀‍😀` (a
//! ZWJ join that is no sequence) as emoji, joiner, emoji (5), and `🇦🇦` (no country)
//! as two regional indicators (4). A variation selector U+FE0F on its own is itself a
//! match (weight 2).
//!
//! Why a list instead of the regex: the regex is written over UTF-16 code units and
//! has a look-ahead, so it cannot go to the `regex` crate as it is. It has no
//! repetition, so it matches a finite set of strings; `x_emoji.txt` lists them in the
//! order the regex tries them (generated from the npm package by
//! `tests/conformance/twemoji-sequences.mjs`, which checks the listing against the
//! regex), and the first listed sequence that fits at a position is the regex's match
//! there. `tests/it/x_count.rs` compares the counts with the npm package itself.

use std::sync::OnceLock;

/// twemoji-parser's sequences in the order its regex tries them; see the file's header.
const SEQUENCE_LIST: &str = include_str!("x_emoji.txt");

/// One sequence after its first character.
struct Sequence {
    rest: Box<[char]>,
    /// The regex's `(?!\ufe0e)`: the sequence matches only when this does not follow.
    not_before: Option<char>,
}

struct Sequences {
    /// The sequences grouped by first character (sorted), each group in regex order.
    by_first: Vec<(char, Vec<Sequence>)>,
}

fn sequences() -> &'static Sequences {
    static SEQUENCES: OnceLock<Sequences> = OnceLock::new();
    SEQUENCES.get_or_init(|| {
        let mut by_first: Vec<(char, Vec<Sequence>)> = Vec::new();
        for line in SEQUENCE_LIST.lines().filter(|l| !l.is_empty() && !l.starts_with('#')) {
            let mut chars = Vec::new();
            let mut not_before = None;
            for field in line.split(' ') {
                // The generator writes only valid hex code points; a malformed line
                // would be dropped rather than abort a count.
                let (field, is_condition) = match field.strip_prefix('!') {
                    Some(hex) => (hex, true),
                    None => (field, false),
                };
                let Some(c) = u32::from_str_radix(field, 16).ok().and_then(char::from_u32) else { continue };
                if is_condition {
                    not_before = Some(c);
                } else {
                    chars.push(c);
                }
            }
            let Some((&first, rest)) = chars.split_first() else { continue };
            let sequence = Sequence { rest: rest.into(), not_before };
            match by_first.iter_mut().find(|(c, _)| *c == first) {
                Some((_, group)) => group.push(sequence),
                None => by_first.push((first, vec![sequence])),
            }
        }
        // A stable sort keeps each group's regex order.
        by_first.sort_by_key(|(c, _)| *c);
        Sequences { by_first }
    })
}

fn group(c: char) -> Option<&'static [Sequence]> {
    let by_first = &sequences().by_first;
    by_first.binary_search_by_key(&c, |(first, _)| *first).ok().map(|idx| by_first[idx].1.as_slice())
}

/// True when an emoji as X counts them may start at `c` (for U+20E3, just before it). Keycaps start with an ASCII
/// `#`, `*` or digit, so U+20E3 stands in for them; every other sequence starts with a
/// non-ASCII character that [`group`] knows, looked up in a bitmap.
#[inline]
pub fn may_start_emoji(c: char) -> bool {
    c as u32 == 0x20E3 || (c as u32 >= 0xA9 && starts_a_sequence(c))
}

/// True when some sequence starts with `c`: a bitmap of the first characters in the
/// Basic Multilingual Plane (8 KiB, built once from the list), the list itself above it.
fn starts_a_sequence(c: char) -> bool {
    static BMP_FIRSTS: OnceLock<Vec<u64>> = OnceLock::new();
    let cp = c as u32;
    if cp > 0xFFFF {
        return group(c).is_some();
    }
    let bits = BMP_FIRSTS.get_or_init(|| {
        let mut bits = vec![0u64; 0x10000 / 64];
        for (first, _) in &sequences().by_first {
            let cp = *first as u32;
            if cp <= 0xFFFF {
                bits[(cp / 64) as usize] |= 1 << (cp % 64);
            }
        }
        bits
    });
    bits[(cp / 64) as usize] & (1 << (cp % 64)) != 0
}

/// The end (byte offset) of the emoji that the regex matches at `pos`, if any.
fn match_at(text: &str, pos: usize) -> Option<usize> {
    let first = text[pos..].chars().next()?;
    let after_first = pos + first.len_utf8();
    group(first)?.iter().find_map(|sequence| {
        let mut end = after_first;
        let mut rest = text[after_first..].chars();
        for &expected in sequence.rest.iter() {
            if rest.next() != Some(expected) {
                return None;
            }
            end += expected.len_utf8();
        }
        match sequence.not_before {
            Some(excluded) if text[end..].starts_with(excluded) => None,
            _ => Some(end),
        }
    })
}

/// The emoji of a text in order, as byte ranges: the successive matches of the global
/// regex, each search starting where the last match ended.
pub struct Emoji<'a> {
    text: &'a str,
    from: usize,
}

impl<'a> Emoji<'a> {
    pub fn new(text: &'a str) -> Self {
        Emoji { text, from: 0 }
    }
}

impl Iterator for Emoji<'_> {
    type Item = (usize, usize);

    fn next(&mut self) -> Option<(usize, usize)> {
        let text = self.text;
        // Only a character that is some sequence's first can start a match (the bitmap
        // says so for the BMP without searching the table).
        let found = text[self.from..].char_indices().filter(|(_, c)| starts_a_sequence(*c)).find_map(|(offset, _)| {
            let start = self.from + offset;
            match_at(text, start).map(|end| (start, end))
        });
        self.from = found.map_or(text.len(), |(_, end)| end);
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn emoji(text: &str) -> Vec<&str> {
        Emoji::new(text).map(|(start, end)| &text[start..end]).collect()
    }

    /// Matches as twemoji-parser 11.0.2's `parse` gives them.
    #[test]
    fn emoji_are_the_regex_matches() {
        assert_eq!(emoji("😀🏽"), ["😀", "🏽"]);
        assert_eq!(emoji("👍🏽"), ["👍🏽"]);
        assert_eq!(emoji("😀\u{200D}😀"), ["😀", "😀"]);
        // Indicators pair from the left, as the regex scans: 🇦🇨 is Ascension Island.
        assert_eq!(emoji("🇦🇦🇨🇳"), ["🇦", "🇦🇨", "🇳"]);
        assert_eq!(emoji("中\u{FE0F}"), ["\u{FE0F}"]);
        assert_eq!(emoji("#\u{FE0F}\u{20E3}a\u{20E3}"), ["#\u{FE0F}\u{20E3}"]);
        assert_eq!(emoji("\u{2600}\u{FE0E}\u{2600}x"), ["\u{2600}"]);
        assert_eq!(emoji("©©\u{FE0F}"), ["©\u{FE0F}"]);
    }

    #[test]
    fn the_prefilter_sees_every_first_character() {
        for (first, group) in &sequences().by_first {
            if first.is_ascii() {
                assert!(group.iter().all(|s| s.rest.contains(&'\u{20E3}')), "{first:?}");
            } else {
                assert!(may_start_emoji(*first), "{first:?}");
            }
        }
        assert!(!"中文 and English, 1 2 3 # *".chars().any(may_start_emoji));
    }
}
