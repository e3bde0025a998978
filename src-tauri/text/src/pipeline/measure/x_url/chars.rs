//! The character classes of twitter-text's URL regex (what may precede a URL, stand in
//! a domain, a path or a query, or end them), with the case folding of a JavaScript
//! regex's `i` flag, so a post's URLs are found where X finds them.

use std::collections::HashSet;
use std::sync::OnceLock;

/// The case folding of a JavaScript regex with the `i` flag and without `u`
/// (ECMAScript `Canonicalize`): the simple uppercase of a UTF-16 unit, but never from
/// non-ASCII to ASCII and never to more than one unit.
pub(super) fn canon(c: char) -> char {
    if c.is_ascii() {
        return c.to_ascii_uppercase();
    }
    if c as u32 > 0xFFFF {
        return c;
    }
    let mut upper = c.to_uppercase();
    match (upper.next(), upper.next()) {
        (Some(u), None) if !u.is_ascii() && (u as u32) <= 0xFFFF => u,
        _ => c,
    }
}

/// twitter-text's `latinAccentChars`.
fn is_latin_accent(c: char) -> bool {
    matches!(c as u32, 0xC0..=0xD6 | 0xD8..=0xF6 | 0xF8..=0xFF | 0x100..=0x24F | 0x253 | 0x254 | 0x256 | 0x257 | 0x259 | 0x25B | 0x263 | 0x268 | 0x26F | 0x272 | 0x289 | 0x28B | 0x2BB | 0x300..=0x36F | 0x1E00..=0x1EFF)
}

/// Membership in a non-ASCII part of a case-insensitive class: a character matches
/// when its folding equals the folding of a member (so `Ȿ` matches through `ȿ`).
fn folds_into(c: char, set: &'static OnceLock<HashSet<char>>, member: fn(char) -> bool) -> bool {
    if c.is_ascii() {
        return false;
    }
    if member(c) {
        return true;
    }
    set.get_or_init(|| (0x80u32..0x2000).filter_map(char::from_u32).filter(|c| member(*c)).map(canon).collect()).contains(&canon(c))
}

fn latin_ci(c: char) -> bool {
    static SET: OnceLock<HashSet<char>> = OnceLock::new();
    folds_into(c, &SET, is_latin_accent)
}

/// twitter-text's `cyrillicLettersAndMarks`, case-insensitive.
fn cyrillic_ci(c: char) -> bool {
    static SET: OnceLock<HashSet<char>> = OnceLock::new();
    folds_into(c, &SET, |c| (0x400..=0x4FF).contains(&(c as u32)))
}

/// `validGeneralUrlPathChars`.
pub(super) fn is_path_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!*';:=+,.$/%#[]-_~@|&".contains(c) || c == '\u{2013}' || latin_ci(c) || cyrillic_ci(c)
}

/// `validUrlPathEndingChars` (its single characters; balanced parentheses apart).
pub(super) fn is_path_ending_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "+-=_#/".contains(c) || latin_ci(c) || cyrillic_ci(c)
}

/// `validUrlQueryChars`.
pub(super) fn is_query_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!?*'@();:&=+$/%#[]-_.,~|".contains(c)
}

/// `validUrlQueryEndingChars`.
pub(super) fn is_query_ending_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "-_&=#/".contains(c)
}

/// `validDomainChars`: anything but `punct` (ASCII punctuation without `"` and
/// `` ` ``), spaces, invalid characters and directional marks. CJK text and
/// full-width punctuation are domain characters, which is why a bare domain needs the
/// ASCII pass in [`ascii_domain_at`].
#[inline]
pub(super) fn is_domain_char(c: char) -> bool {
    if c.is_ascii() {
        return !((c.is_ascii_punctuation() && c != '"' && c != '`') || matches!(c, '\t'..='\r' | ' '));
    }
    let punct = c.is_ascii_punctuation() && c != '"' && c != '`';
    let space = is_space(c);
    let invalid = matches!(c as u32, 0xFFFE | 0xFEFF | 0xFFFF);
    let directional = matches!(c as u32, 0x202A..=0x202E | 0x061C | 0x200E | 0x200F | 0x2066..=0x2069);
    !(punct || space || invalid || directional)
}

/// A character of a domain label: a domain character or `-`/`_` inside.
#[inline]
pub(super) fn is_label_char(c: char) -> bool {
    is_domain_char(c) || c == '-' || c == '_'
}

/// `validUrlPrecedingChars`: what may stand right before a URL.
pub(super) fn is_preceding_char(c: char) -> bool {
    !(c.is_ascii_alphanumeric() || matches!(c, '@' | '＠' | '$' | '#' | '＃' | '\u{FFFE}' | '\u{FEFF}' | '\u{FFFF}'))
}

/// `[\-a-z0-9#{latinAccentChars}]` of `validAsciiDomain`.
pub(super) fn is_ascii_domain_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-' || latin_ci(c)
}

/// The space characters that `validDomainChars` excludes.
fn is_space(c: char) -> bool {
    matches!(c as u32, 0x09..=0x0D | 0x20 | 0x85 | 0xA0 | 0x1680 | 0x180E | 0x2000..=0x200A | 0x2028 | 0x2029 | 0x202F | 0x205F | 0x3000)
}
