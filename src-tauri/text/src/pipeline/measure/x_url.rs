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

mod chars;
mod punycode;

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use chars::{canon, is_ascii_domain_char, is_domain_char, is_label_char, is_path_char, is_path_ending_char, is_preceding_char, is_query_char, is_query_ending_char};
use punycode::punycode_label_len;

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
}
