//! URLs as X finds them when it counts a post: twitter-text 3.1.0's
//! `extractUrlsWithIndices` (the `extractUrl` regex and the checks after it),
//! written out by hand.
//!
//! Why by hand: the regex needs backtracking with a look-ahead after every TLD, which
//! the `regex` crate does not offer, and the one Rust port on crates.io
//! (`twitter-text` 0.3) builds a C++ bridge (`cxx = "=1.0.205"`, pinned exactly) and a
//! pest grammar that tries ~1,500 TLDs one by one. The grammar is small once its
//! backtracking is worked out, and every step below names the part of the regex it
//! follows. `tests/it/x_count.rs` compares the result with the npm package itself.
//!
//! The JS regex runs over UTF-16 code units, so it can take the first half of an
//! astral character (an emoji) as the character before a URL and start the domain
//! at the second half; [`UrlMatch::starts_mid_char`] keeps that case, because the
//! lone half then counts towards the domain label's 63-unit limit.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

/// twitter-text's TLDs in the order its regex tries them; see the file's header.
const TLD_LIST: &str = include_str!("x_tlds.txt");

/// `MAX_URL_LENGTH` of `extractUrlsWithIndices`, in UTF-16 code units.
const MAX_URL_LENGTH: usize = 4096;
/// `MAX_TCO_SLUG_LENGTH`: a longer t.co slug is not a URL at all.
const MAX_TCO_SLUG_LENGTH: usize = 40;
/// A DNS label, punycode-encoded, is at most this long (`lib/idna.js`).
const MAX_DOMAIN_LABEL_LENGTH: usize = 63;

/// One URL of a text as X counts it: X weighs 23 from `start` and resumes at `end`
/// (byte offsets). `end` is where twitter-text's count resumes, which for a bare
/// domain with a path is computed from lengths, not from the match; when that
/// lands inside an astral character, the count resumes after it and `tail_weight`
/// (the weight X gives the character's second half) is added.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct XUrl {
    pub start: usize,
    pub end: usize,
    pub tail_weight: usize,
}

struct Tlds {
    /// Case-folded TLD → its place in the regex's alternation.
    rank: HashMap<String, usize>,
    /// The distinct lengths of the TLDs, in characters.
    lengths: Vec<usize>,
    /// Every case-folded character that occurs in a TLD: a TLD can only start where a
    /// run of these does, and cannot be longer than the run.
    letters: HashSet<char>,
}

fn tlds() -> &'static Tlds {
    static TLDS: OnceLock<Tlds> = OnceLock::new();
    TLDS.get_or_init(|| {
        let mut rank = HashMap::new();
        let mut lengths = Vec::new();
        let mut letters = HashSet::new();
        for (idx, tld) in TLD_LIST.lines().filter(|l| !l.is_empty() && !l.starts_with('#')).enumerate() {
            let folded: String = tld.chars().map(canon).collect();
            letters.extend(folded.chars());
            let n_chars = folded.chars().count();
            if !lengths.contains(&n_chars) {
                lengths.push(n_chars);
            }
            rank.entry(folded).or_insert(idx);
        }
        Tlds { rank, lengths, letters }
    })
}

/// The case folding of a JavaScript regex with the `i` flag and without `u`
/// (ECMAScript `Canonicalize`): the simple uppercase of a UTF-16 unit, but never from
/// non-ASCII to ASCII and never to more than one unit.
fn canon(c: char) -> char {
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
fn is_path_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!*';:=+,.$/%#[]-_~@|&".contains(c) || c == '\u{2013}' || latin_ci(c) || cyrillic_ci(c)
}

/// `validUrlPathEndingChars` (its single characters; balanced parentheses apart).
fn is_path_ending_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "+-=_#/".contains(c) || latin_ci(c) || cyrillic_ci(c)
}

/// `validUrlQueryChars`.
fn is_query_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!?*'@();:&=+$/%#[]-_.,~|".contains(c)
}

/// `validUrlQueryEndingChars`.
fn is_query_ending_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "-_&=#/".contains(c)
}

/// `validDomainChars`: anything but `punct` (ASCII punctuation without `"` and
/// `` ` ``), spaces, invalid characters and directional marks. CJK text and
/// full-width punctuation are domain characters, which is why a bare domain needs the
/// ASCII pass in [`ascii_domain_at`].
#[inline]
fn is_domain_char(c: char) -> bool {
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
fn is_label_char(c: char) -> bool {
    is_domain_char(c) || c == '-' || c == '_'
}

/// `validUrlPrecedingChars`: what may stand right before a URL.
fn is_preceding_char(c: char) -> bool {
    !(c.is_ascii_alphanumeric() || matches!(c, '@' | '＠' | '$' | '#' | '＃' | '\u{FFFE}' | '\u{FEFF}' | '\u{FFFF}'))
}

/// `[\-a-z0-9#{latinAccentChars}]` of `validAsciiDomain`.
fn is_ascii_domain_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-' || latin_ci(c)
}

/// True when `text` may hold a URL: every URL has a `.` followed by its TLD, so by a
/// character that occurs in some TLD. Ordinary prose (sentence-ending periods
/// followed by a space, a line end or the end) skips the scan.
pub fn may_hold_url(text: &str) -> bool {
    text.match_indices('.').any(|(at, _)| text[at + 1..].chars().next().is_some_and(may_follow_dot))
}

/// True when `c`, after a `.`, may start a TLD: the test [`may_hold_url`] makes at
/// each `.`.
pub fn may_follow_dot(c: char) -> bool {
    tlds().letters.contains(&canon(c))
}

/// The URLs X would count in `text` (already NFC), in order, not overlapping.
pub fn x_urls(text: &str) -> Vec<XUrl> {
    if !may_hold_url(text) {
        return Vec::new();
    }
    Scan::new(text).urls()
}

/// The space characters that `validDomainChars` excludes.
fn is_space(c: char) -> bool {
    matches!(c as u32, 0x09..=0x0D | 0x20 | 0x85 | 0xA0 | 0x1680 | 0x180E | 0x2000..=0x200A | 0x2028 | 0x2029 | 0x202F | 0x205F | 0x3000)
}

/// One regex match: the URL (with its protocol) and its parts, as char indices.
struct UrlMatch {
    before: Option<char>,
    /// The match starts at the second UTF-16 half of the astral character at `start`.
    starts_mid_char: bool,
    start: usize,
    protocol_len: usize,
    domain: (usize, usize),
    has_path: bool,
    end: usize,
}

struct Scan {
    chars: Vec<char>,
    /// Byte offset and UTF-16 offset of each char index (and of the end).
    byte_at: Vec<usize>,
    utf16_at: Vec<usize>,
    /// End of the run of label characters at each index (the index itself when the
    /// character there is none).
    run_end: Vec<usize>,
    /// The first `_` at or after each index.
    next_underscore: Vec<usize>,
    tail_cache: HashMap<usize, Option<usize>>,
}

impl Scan {
    fn new(text: &str) -> Self {
        let chars: Vec<char> = text.chars().collect();
        let n = chars.len();
        let mut byte_at = Vec::with_capacity(n + 1);
        let mut utf16_at = Vec::with_capacity(n + 1);
        let (mut byte, mut unit) = (0, 0);
        for c in &chars {
            byte_at.push(byte);
            utf16_at.push(unit);
            byte += c.len_utf8();
            unit += c.len_utf16();
        }
        byte_at.push(byte);
        utf16_at.push(unit);
        let mut run_end = vec![n; n + 1];
        let mut next_underscore = vec![n; n + 1];
        for idx in (0..n).rev() {
            run_end[idx] = if is_label_char(chars[idx]) { run_end[idx + 1] } else { idx };
            next_underscore[idx] = if chars[idx] == '_' { idx } else { next_underscore[idx + 1] };
        }
        Scan { chars, byte_at, utf16_at, run_end, next_underscore, tail_cache: HashMap::new() }
    }

    fn at(&self, idx: usize) -> Option<char> {
        self.chars.get(idx).copied()
    }

    /// `validSubdomain` at `start`: a run of label characters that begins and ends
    /// with a domain character and is followed by `.`; returns the index of the dot.
    fn subdomain_at(&self, start: usize) -> Option<usize> {
        let end = *self.run_end.get(start)?;
        let valid = end > start && is_domain_char(self.chars[start]) && is_domain_char(self.chars[end - 1]) && self.at(end) == Some('.');
        valid.then_some(end)
    }

    /// `validDomainName` is `validSubdomain` without `_`.
    fn has_underscore(&self, start: usize, end: usize) -> bool {
        self.next_underscore[start] < end
    }

    /// `(?:validGTLD|validCCTLD|validPunycode)` at `start`, the text ending at `bound`:
    /// the first TLD in the regex's order that matches and is not followed by
    /// `[0-9a-zA-Z@+-]`; else `xn--` and its run.
    fn tld_at(&self, start: usize, bound: usize) -> Option<usize> {
        let tlds = tlds();
        let mut best: Option<(usize, usize)> = None;
        // Fold the run of TLD letters at `start` once; each candidate length is then a
        // prefix of it (canon maps one character to one character).
        let run_end = (start..bound).find(|&idx| !tlds.letters.contains(&canon(self.chars[idx]))).unwrap_or(bound);
        let mut folded = String::new();
        let mut prefix_end = Vec::with_capacity(run_end - start);
        for &c in &self.chars[start..run_end] {
            folded.push(canon(c));
            prefix_end.push(folded.len());
        }
        for &len in &tlds.lengths {
            let end = start + len;
            if len == 0 || end > run_end {
                continue;
            }
            let Some(&rank) = tlds.rank.get(&folded[..prefix_end[len - 1]]) else { continue };
            let followed_ok = end == bound || !(self.chars[end].is_ascii_alphanumeric() || matches!(self.chars[end], '@' | '+' | '-'));
            if followed_ok && best.is_none_or(|(r, _)| rank < r) {
                best = Some((rank, end));
            }
        }
        if let Some((_, end)) = best {
            return Some(end);
        }
        let prefix: String = self.chars.get(start..(start + 4).min(bound))?.iter().copied().map(canon).collect();
        if prefix != "XN--" {
            return None;
        }
        let run = |c: char| c.is_ascii_alphanumeric() || c == '-';
        let end = (start + 4..bound).find(|&idx| !run(self.chars[idx])).unwrap_or(bound);
        (end > start + 4).then_some(end)
    }

    /// The labels after the first one (`start` is just past its dot): with `m` of them
    /// valid subdomains, the regex tries each as the domain name from the last back,
    /// followed by a TLD. The same for every start inside the first label, so cached.
    fn tail(&mut self, start: usize) -> Option<usize> {
        if let Some(cached) = self.tail_cache.get(&start) {
            return *cached;
        }
        let mut labels = Vec::new();
        let mut label_start = start;
        while let Some(dot) = self.subdomain_at(label_start) {
            labels.push((label_start, dot));
            label_start = dot + 1;
        }
        let n = self.chars.len();
        let found = labels.iter().rev().filter(|(s, e)| !self.has_underscore(*s, *e)).find_map(|&(_, dot)| self.tld_at(dot + 1, n));
        self.tail_cache.insert(start, found);
        found
    }

    /// `validDomain` at `start`: `validSubdomain* validDomainName TLD`, greedy with
    /// backtracking.
    fn domain_at(&mut self, start: usize) -> Option<usize> {
        let dot = self.subdomain_at(start)?;
        if let Some(end) = self.tail(dot + 1) {
            return Some(end);
        }
        if self.has_underscore(start, dot) {
            return None;
        }
        self.tld_at(dot + 1, self.chars.len())
    }

    fn starts_with_ci(&self, start: usize, word: &str) -> bool {
        (start..).zip(word.chars()).all(|(idx, w)| {
            let Some(c) = self.at(idx) else { return false };
            // `canon` never maps a non-ASCII character to ASCII, so against an ASCII
            // letter only ASCII can match, and ASCII folding is all it takes.
            if w.is_ascii() {
                c.is_ascii() && c.eq_ignore_ascii_case(&w)
            } else {
                canon(c) == canon(w)
            }
        })
    }

    /// `validUrlBalancedParens` at an opening parenthesis.
    fn balanced_at(&self, start: usize) -> Option<usize> {
        let path_run = |from: usize| (from..self.chars.len()).find(|&idx| !is_path_char(self.chars[idx])).unwrap_or(self.chars.len());
        let inner = path_run(start + 1);
        if inner > start + 1 && self.at(inner) == Some(')') {
            return Some(inner + 1);
        }
        if self.at(inner) != Some('(') {
            return None;
        }
        let nested = path_run(inner + 1);
        if nested == inner + 1 || self.at(nested) != Some(')') {
            return None;
        }
        let rest = path_run(nested + 1);
        (self.at(rest) == Some(')')).then_some(rest + 1)
    }

    /// `validUrlPath*` after the path's `/`: the longest run of path characters and
    /// balanced parentheses that ends in an ending character or a parenthesis group.
    fn path_end(&self, start: usize) -> usize {
        let mut idx = start;
        let mut last_good = start;
        while let Some(c) = self.at(idx) {
            if is_path_char(c) {
                idx += 1;
                if is_path_ending_char(c) {
                    last_good = idx;
                }
            } else if let Some(end) = (c == '(').then(|| self.balanced_at(idx)).flatten() {
                idx = end;
                last_good = end;
            } else {
                break;
            }
        }
        last_good
    }

    /// `\?validUrlQueryChars*validUrlQueryEndingChars` at `start`, within `bound`.
    fn query_end(&self, start: usize, bound: usize) -> Option<usize> {
        if self.at(start) != Some('?') {
            return None;
        }
        let run_end = (start + 1..bound).find(|&idx| !is_query_char(self.chars[idx])).unwrap_or(bound);
        (start + 1..run_end).rev().find(|&idx| is_query_ending_char(self.chars[idx])).map(|idx| idx + 1)
    }

    /// `(https?:\/\/)? validDomain (?::port)? (\/path)? (\?query)?` at `start`.
    fn url_at(&mut self, start: usize, before: Option<char>) -> Option<UrlMatch> {
        let protocol_len = if self.starts_with_ci(start, "https://") {
            8
        } else if self.starts_with_ci(start, "http://") {
            7
        } else {
            0
        };
        let (protocol_len, domain_start, domain_end) = match (protocol_len > 0).then(|| self.domain_at(start + protocol_len)).flatten() {
            Some(end) => (protocol_len, start + protocol_len, end),
            None => (0, start, self.domain_at(start)?),
        };
        Some(self.url_tail(start, protocol_len, (domain_start, domain_end), before))
    }

    /// The optional port, path and query after a domain.
    fn url_tail(&self, start: usize, protocol_len: usize, (domain_start, domain_end): (usize, usize), before: Option<char>) -> UrlMatch {
        let mut end = domain_end;
        if self.at(end) == Some(':') && self.at(end + 1).is_some_and(|c| c.is_ascii_digit()) {
            end = (end + 1..self.chars.len()).find(|&idx| !self.chars[idx].is_ascii_digit()).unwrap_or(self.chars.len());
        }
        let has_path = self.at(end) == Some('/');
        if has_path {
            end = self.path_end(end + 1);
        }
        if let Some(query_end) = self.query_end(end, self.chars.len()) {
            end = query_end;
        }
        UrlMatch { before, starts_mid_char: false, start, protocol_len, domain: (domain_start, domain_end), has_path, end }
    }

    /// The next match of `extractUrl` from `from` (the regex's `lastIndex`): a
    /// preceding character and a URL after it, or a URL at the very start.
    fn next_match(&mut self, from: usize) -> Option<UrlMatch> {
        for idx in from..self.chars.len() {
            let c = self.chars[idx];
            // The first half of an astral character as the preceding unit: a domain
            // (no protocol can start with a surrogate) from its second half.
            if c.len_utf16() == 2 {
                if let Some(domain_end) = self.domain_at(idx) {
                    let mut found = self.url_tail(idx, 0, (idx, domain_end), None);
                    found.starts_mid_char = true;
                    return Some(found);
                }
            }
            if is_preceding_char(c) && idx + 1 < self.chars.len() {
                if let Some(found) = self.url_at(idx + 1, Some(c)) {
                    return Some(found);
                }
            }
            if idx == 0 {
                if let Some(found) = self.url_at(0, None) {
                    return Some(found);
                }
            }
        }
        None
    }

    /// `validAsciiDomain` at `start`, within a domain ending at `bound`.
    fn ascii_domain_at(&self, start: usize, bound: usize) -> Option<usize> {
        let mut dots = Vec::new();
        let mut label_start = start;
        loop {
            let end = (label_start..bound).find(|&idx| !is_ascii_domain_char(self.chars[idx])).unwrap_or(bound);
            if end == label_start || end >= bound || self.chars[end] != '.' {
                break;
            }
            dots.push(end);
            label_start = end + 1;
        }
        dots.iter().rev().find_map(|&dot| self.tld_at(dot + 1, bound))
    }

    /// `idna.toAscii(domain)` of twitter-text succeeds: a domain written `xn--…` must
    /// hold an ASCII domain, and every label, punycode-encoded, is 1 to 63 long.
    fn domain_is_valid(&self, (start, end): (usize, usize), starts_mid_char: bool) -> bool {
        let mut domain: Vec<u32> = self.chars[start..end].iter().map(|c| *c as u32).collect();
        if starts_mid_char {
            // The lone second half (low surrogate) of the astral character.
            domain[0] = 0xDC00 + ((domain[0] - 0x10000) & 0x3FF);
        }
        if domain.starts_with(&['x' as u32, 'n' as u32, '-' as u32, '-' as u32]) && !(start..end).any(|idx| self.ascii_domain_at(idx, end).is_some()) {
            return false;
        }
        domain.split(|c| *c == '.' as u32).all(|label| (1..=MAX_DOMAIN_LABEL_LENGTH).contains(&punycode_label_len(label)))
    }

    fn utf16_len(&self, start: usize, end: usize) -> usize {
        self.utf16_at[end] - self.utf16_at[start]
    }

    /// The char index where twitter-text's count resumes, `units` UTF-16 units after
    /// `start`, and the extra weight when that falls inside an astral character.
    fn resume_after(&self, start: usize, units: usize) -> (usize, usize) {
        let target = self.utf16_at[start] + units;
        match self.utf16_at.binary_search(&target) {
            Ok(idx) => (idx, 0),
            Err(idx) => (idx.min(self.chars.len()), 2),
        }
    }

    fn push(&self, out: &mut Vec<XUrl>, start: usize, end: usize, tail_weight: usize) {
        out.push(XUrl { start: self.byte_at[start], end: self.byte_at[end], tail_weight });
    }

    fn urls(mut self) -> Vec<XUrl> {
        let mut out = Vec::new();
        let mut from = 0;
        while let Some(found) = self.next_match(from) {
            from = found.end;
            let protocol_units = if found.protocol_len > 0 { self.utf16_len(found.start, found.start + found.protocol_len) } else { "https://".len() };
            let url_units = self.utf16_len(found.start, found.end) - usize::from(found.starts_mid_char);
            if !self.domain_is_valid(found.domain, found.starts_mid_char) || protocol_units + url_units > MAX_URL_LENGTH {
                continue;
            }
            if found.protocol_len == 0 {
                self.push_bare_domains(&mut out, &found);
                continue;
            }
            // A t.co link ends after its slug (and query); a slug over 40 is no link.
            let tco = ["https://t.co/", "http://t.co/"].into_iter().find(|p| self.starts_with_ci(found.start, p)).map(|p| found.start + p.len());
            let mut end = found.end;
            if let Some(slug_start) = tco {
                let slug_end = (slug_start..found.end).find(|&idx| !self.chars[idx].is_ascii_alphanumeric()).unwrap_or(found.end);
                if slug_end > slug_start {
                    if slug_end - slug_start > MAX_TCO_SLUG_LENGTH {
                        continue;
                    }
                    end = self.query_end(slug_end, found.end).unwrap_or(slug_end);
                }
            }
            self.push(&mut out, found.start, end, 0);
        }
        out
    }

    /// A match without a protocol counts only the ASCII domains inside its domain
    /// (so `看example.org` is `看` and a URL), none when the character before it is
    /// one of `-_./`; the last one takes the port, path and query when there is a path.
    fn push_bare_domains(&self, out: &mut Vec<XUrl>, found: &UrlMatch) {
        if found.before.is_some_and(|c| matches!(c, '-' | '_' | '.' | '/')) {
            return;
        }
        let (domain_start, domain_end) = found.domain;
        let mut found_domains: Vec<(usize, usize)> = Vec::new();
        let mut search = domain_start;
        let mut ascii_end = domain_start;
        while search < domain_end {
            let Some(end) = self.ascii_domain_at(search, domain_end) else {
                search += 1;
                continue;
            };
            // `domain.indexOf(asciiDomain, asciiEndPosition)`.
            let needle = &self.chars[search..end];
            let at = (ascii_end..=domain_end - needle.len()).find(|&idx| &self.chars[idx..idx + needle.len()] == needle).unwrap_or(search);
            found_domains.push((at, at + needle.len()));
            ascii_end = at + needle.len();
            search = end;
        }
        let Some(&(last_start, last_end)) = found_domains.last() else { return };
        for &(start, end) in &found_domains[..found_domains.len() - 1] {
            self.push(out, start, end, 0);
        }
        if found.has_path {
            let units = self.utf16_len(last_start, last_end) + self.utf16_len(found.start, found.end) - self.utf16_len(domain_start, domain_end);
            let (resume, tail_weight) = self.resume_after(last_start, units);
            self.push(out, last_start, resume, tail_weight);
        } else {
            self.push(out, last_start, last_end, 0);
        }
    }
}

/// The length of `punycode.toASCII(label)` (Node's punycode 2.1): the label is split
/// again at the ideographic and full-width full stops, and each part with a code point
/// above U+007F becomes `xn--` and its RFC 3492 encoding.
fn punycode_label_len(label: &[u32]) -> usize {
    let parts = label.split(|c| matches!(c, 0x3002 | 0xFF0E | 0xFF61));
    let mut total = 0;
    let mut n_parts = 0usize;
    for part in parts {
        n_parts += 1;
        total += if part.iter().any(|c| *c > 0x7F) { 4 + punycode_encoded_len(part) } else { part.len() };
    }
    total + n_parts.saturating_sub(1)
}

/// The length of the RFC 3492 encoding of `input` (basic code points, delimiter, and
/// one base-36 digit string per inserted code point).
fn punycode_encoded_len(points: &[u32]) -> usize {
    const BASE: u32 = 36;
    const T_MIN: u32 = 1;
    const T_MAX: u32 = 26;
    const SKEW: u32 = 38;
    const DAMP: u32 = 700;
    fn adapt(mut delta: u32, n_points: u32, first: bool) -> u32 {
        delta = if first { delta / DAMP } else { delta / 2 };
        delta += delta / n_points;
        let mut k = 0;
        while delta > ((BASE - T_MIN) * T_MAX) / 2 {
            delta /= BASE - T_MIN;
            k += BASE;
        }
        k + (BASE - T_MIN + 1) * delta / (delta + SKEW)
    }
    let n_basic = points.iter().filter(|p| **p < 0x80).count() as u32;
    let mut len = n_basic as usize + usize::from(n_basic > 0);
    let (mut n, mut delta, mut bias) = (0x80u32, 0u32, 72u32);
    let mut handled = n_basic;
    while (handled as usize) < points.len() {
        let Some(&m) = points.iter().filter(|p| **p >= n).min() else { break };
        delta = delta.saturating_add((m - n).saturating_mul(handled + 1));
        n = m;
        for &p in points {
            if p < n {
                delta = delta.saturating_add(1);
            }
            if p == n {
                let mut q = delta;
                let mut k = BASE;
                loop {
                    let t = if k <= bias {
                        T_MIN
                    } else if k >= bias + T_MAX {
                        T_MAX
                    } else {
                        k - bias
                    };
                    if q < t {
                        break;
                    }
                    len += 1;
                    q = (q - t) / (BASE - t);
                    k += BASE;
                }
                len += 1;
                bias = adapt(delta, handled + 1, handled == n_basic);
                delta = 0;
                handled += 1;
            }
        }
        delta = delta.saturating_add(1);
        n += 1;
    }
    len
}

#[cfg(test)]
mod tests {
    use super::*;

    fn urls(text: &str) -> Vec<&str> {
        x_urls(text).into_iter().map(|u| &text[u.start..u.end]).collect()
    }

    #[test]
    fn every_tld_starts_with_a_letter_or_digit() {
        // `may_hold_url` relies on it.
        for tld in TLD_LIST.lines().filter(|l| !l.starts_with('#')) {
            assert!(tld.chars().next().is_some_and(char::is_alphanumeric), "{tld:?}");
        }
        assert!(tlds().rank.len() > 1500);
    }

    #[test]
    fn urls_stop_where_twitter_text_stops_them() {
        let cases: &[(&str, &[&str])] = &[
            ("见 https://example.com。", &["https://example.com"]),
            ("你好https://example.com/a世界", &["https://example.com/a"]),
            ("看example.org", &["example.org"]),
            ("www.example.com.cn/path.", &["www.example.com.cn/path"]),
            ("see example.community now", &["example.community"]),
            ("example.comx", &[]),
            ("a_b.com", &[]),
            ("x.a_b.com", &[]),
            ("foo@example.com", &[]),
            ("-example.com", &[]),
            ("https://t.co/abc123?x=1 tail", &["https://t.co/abc123?x=1"]),
            ("https://en.wikipedia.org/wiki/Primer_(film)).", &["https://en.wikipedia.org/wiki/Primer_(film)"]),
            ("example.com:8080 and example.com:8080/x", &["example.com", "example.com:8080/x"]),
            ("HTTPS://EXAMPLE.COM", &["HTTPS://EXAMPLE.COM"]),
            ("http://例子.中国", &["http://例子.中国"]),
            ("1.5 and 3.14", &[]),
        ];
        for (text, expected) in cases {
            assert_eq!(urls(text), *expected, "{text:?}");
        }
    }

    #[test]
    fn punycode_lengths_follow_rfc_3492() {
        // RFC 3492 7.1 (A) Arabic (Egyptian) and (L) "3年B組金八先生".
        let code_points = |text: &str| text.chars().map(|c| c as u32).collect::<Vec<u32>>();
        let arabic = code_points("\u{0644}\u{064A}\u{0647}\u{0645}\u{0627}\u{0628}\u{062A}\u{0643}\u{0644}\u{0645}\u{0648}\u{0634}\u{0639}\u{0631}\u{0628}\u{064A}\u{061F}");
        assert_eq!(punycode_encoded_len(&arabic), "egbpdaj6bu4bxfgehfvwxn".len());
        let mixed = code_points("3年B組金八先生");
        assert_eq!(punycode_encoded_len(&mixed), "3B-ww4c5e180e575a65lsy2b".len());
        assert_eq!(punycode_label_len(&code_points("看。example")), "xn--c1y.example".len());
    }
}
