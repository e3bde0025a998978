//! X's weighted length against X's own library: thousands of generated strings are
//! counted by the `twitter-text` npm package (`tests/conformance/twitter-text.mjs`)
//! and by `x_weighted_length`, and every count must agree.
//!
//! Runs when `INKSTONE_TEST_TWITTER_TEXT=1` (`scripts/test` sets it); then a missing
//! `node` or package is a failure, not a skip.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use inkstone_text::pipeline::measure::x_weighted_length;

/// A seeded SplitMix64 stream: the strings only need to be varied and the same on
/// every run, which twelve lines give without a dependency on a random-number crate.
struct Seeded(u64);

impl Seeded {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const CJK: &[&str] = &["你好", "世界", "见", "看", "写作", "测试一下", "中文", "日本語の", "한국어", "上海周末徒步路线", "例子"];
const LATIN: &[&str] = &["hello", "world", "Inkstone", "test", "café", "naïve", "über", "x", "A", "e\u{301}", "v2", "1.5", "3.14", "co", "com"];
const PROTOCOL_URLS: &[&str] = &[
    "https://example.com",
    "http://example.org/path",
    "https://sub.example.co.uk/a/b?x=1&y=2#frag",
    "https://t.co/abc123",
    "https://t.co/abc123?s=09",
    "https://en.wikipedia.org/wiki/Primer_(film)",
    "http://例子.中国",
    "https://example.com:8080/p",
    "HTTPS://EXAMPLE.COM/A",
    "https://github.com/twitter/twitter-text/",
    "http://a.b",
    "https://xn--fiqs8s.com/x",
    "https://example.com/path.",
    "https://example.com/a,b",
    "https://user@example.com",
    "https://example.com/@user/",
];
const LABELS: &[&str] = &["example", "www.example", "a", "my-site", "my_site", "sub.domain", "例子", "x1", "ex"];
const TLDS: &[&str] = &["com", "org", "net", "io", "cn", "co", "jp", "xyz", "community", "app", "dev", "中国", "xn--fiqs8s", "comx", "abc", "a", "co.uk", "com.cn"];
const PATHS: &[&str] = &["", "", "", "/a", "/a.b", "/x?y=1", "/path/", "/路径", ":443", "?q=1", "/(x)", "#top"];
const EMOJI: &[&str] = &["😀", "👍🏽", "👨\u{200D}👩\u{200D}👧\u{200D}👦", "🇨🇳", "🇺🇸", "1️⃣", "#️⃣", "❤️", "©️", "👩🏽\u{200D}💻", "🏳️\u{200D}🌈", "⭐", "✨", "🤷\u{200D}♀️", "👋🏿"];
/// Sequences X does not take as one emoji (twemoji-parser 11 has no such sequence),
/// though a grapheme segmenter keeps each together: skin tones on emoji that take
/// none, joins that name nothing, flags of no country, text presentation selectors,
/// stray selectors and keycaps, newer emoji and sequences than the list knows.
const UNRECOGNISED_EMOJI: &[&str] = &[
    "😀🏽",
    "🐶🏻",
    "❤🏿",
    "🏽",
    "😀\u{200D}😀",
    "🐶\u{200D}🔥",
    "a\u{200D}😀",
    "👨\u{200D}",
    "\u{200D}",
    "👨\u{200D}👨",
    "👨🏽\u{200D}🐶",
    "🧑\u{200D}💻",
    "❤️\u{200D}🔥",
    "🇦🇦",
    "🇿🇿",
    "🇺",
    "🇺🇸🇦",
    "\u{FE0F}",
    "\u{FE0E}",
    "中\u{FE0F}",
    "a\u{FE0F}",
    "☀\u{FE0E}",
    "❤\u{FE0E}",
    "©",
    "©\u{FE0E}",
    "™\u{FE0F}",
    "a\u{20E3}",
    "1\u{FE0E}\u{20E3}",
    "\u{20E3}",
    "#\u{20E3}",
    "*\u{FE0F}\u{20E3}",
    "10\u{20E3}",
    "🏴\u{E0067}\u{E007F}",
    "🏴\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F}",
    "🥲",
    "🫠",
    "👍\u{FE0F}🏽",
    "👨\u{200D}👩\u{200D}👧\u{200D}👦\u{200D}👦",
];
/// Parts that `piece` strings together at random into sequences valid or not.
const EMOJI_PARTS: &[&str] = &[
    "😀",
    "👍",
    "👨",
    "👩",
    "🐶",
    "❤",
    "☀",
    "©",
    "™",
    "#",
    "1",
    "*",
    "🇦",
    "🇨",
    "🇳",
    "🏴",
    "🏳",
    "🏽",
    "🏻",
    "\u{200D}",
    "\u{200D}",
    "\u{FE0F}",
    "\u{FE0F}",
    "\u{FE0E}",
    "\u{20E3}",
    "\u{E0067}",
    "\u{E007F}",
    "💻",
    "🔥",
    "♀",
    "🌈",
    "🧑",
    "🥲",
    "中",
    "a",
];
const WIDE_PUNCTUATION: &[&str] = &["。", "，", "！", "？", "：", "；", "（", "）", "【", "】", "「", "」", "、", "…", "—", "～", "．"];
const ASCII_PUNCTUATION: &[&str] = &[".", ",", "!", "?", ":", ";", "(", ")", "-", "_", "/", "@", "#", "$", "\"", "'", "...", "&"];
const SPACES: &[&str] = &[" ", " ", "\n", "  ", "\u{3000}", "\n\n", "\t"];

fn piece(rng: &mut Seeded) -> String {
    match rng.below(11) {
        0 => rng.pick(CJK).to_owned(),
        1 => rng.pick(LATIN).to_owned(),
        2 => rng.pick(PROTOCOL_URLS).to_owned(),
        3 => format!("{}.{}{}", rng.pick(LABELS), rng.pick(TLDS), rng.pick(PATHS)),
        4 => rng.pick(EMOJI).to_owned(),
        5 => rng.pick(WIDE_PUNCTUATION).to_owned(),
        6 => rng.pick(ASCII_PUNCTUATION).to_owned(),
        7 => rng.pick(SPACES).to_owned(),
        8 => rng.pick(UNRECOGNISED_EMOJI).to_owned(),
        9 => (0..1 + rng.below(5)).map(|_| rng.pick(EMOJI_PARTS)).collect(),
        _ => format!("{}{}", rng.pick(PROTOCOL_URLS), rng.pick(PATHS)),
    }
}

fn generated(n: usize, seed: u64) -> Vec<String> {
    let mut rng = Seeded(seed);
    let mut out = vec!["见 https://example.com。".to_owned(), "你好https://example.com/a世界".to_owned(), "看example.org".to_owned()];
    while out.len() < n {
        let n_pieces = 1 + rng.below(24);
        out.push((0..n_pieces).map(|_| piece(&mut rng)).collect());
    }
    out
}

/// twitter-text's weighted length of each text, from one run of node.
fn twitter_text_lengths(texts: &[String]) -> Vec<usize> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let script = root.join("tests/conformance/twitter-text.mjs");
    let mut child =
        Command::new("node").arg(&script).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("INKSTONE_TEST_TWITTER_TEXT=1 needs `node` on PATH");
    let input: String = texts.iter().map(|t| serde_json::to_string(t).unwrap() + "\n").collect();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(output.status.success(), "{} failed (is `npm --prefix ui ci` done?): {}", script.display(), String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap().lines().map(|l| l.parse().unwrap()).collect()
}

#[test]
fn x_weighted_length_equals_twitter_text() {
    if std::env::var("INKSTONE_TEST_TWITTER_TEXT").as_deref() != Ok("1") {
        eprintln!("skipped: set INKSTONE_TEST_TWITTER_TEXT=1 to compare with the twitter-text npm package");
        return;
    }
    let texts = generated(5000, 0x1D_2026_0010);
    let expected = twitter_text_lengths(&texts);
    assert_eq!(expected.len(), texts.len(), "node printed one length per text");
    let mismatches: Vec<String> = texts
        .iter()
        .zip(&expected)
        .filter_map(|(text, &theirs)| {
            let ours = x_weighted_length(text);
            (ours != theirs).then(|| format!("{text:?}: inkstone {ours}, twitter-text {theirs}"))
        })
        .collect();
    let n_with_url = texts.iter().filter(|t| t.contains('.')).count();
    assert!(n_with_url > texts.len() / 2, "the generator should mostly produce URL candidates");
    assert!(mismatches.is_empty(), "{} of {} differ; first ones:\n{}", mismatches.len(), texts.len(), mismatches.iter().take(15).cloned().collect::<Vec<_>>().join("\n"));
}
