//! Compiling all five platforms for one 10,000-character mixed article, p50/p95,
//! beside `comrak::markdown_to_html` of the same text measured in the same run
//! (interleaved, so both see the same machine), and the ratio of the two; then each
//! platform compiled alone (its own parse included).
//!
//! `cargo bench -p inkstone-text --bench pipeline` prints the figures (target: all five
//! at most 5× one comrak render); `--samples N` sets the rounds. Under `cargo test` (no
//! `--bench` argument) it runs three rounds as a smoke test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use inkstone_model::Platform;
use inkstone_text::pipeline::{compile, compile_all, CompileInput};
use inkstone_text::profiles::ProfileSet;

/// The workspace's seeded generator, so runs are comparable (xtask's store benchmark
/// writes its articles from the same phrases): the file of `inkstone-test-support`,
/// included rather than depended on, since that crate sits above the engine and this
/// crate's benchmark must build without tokio, tantivy or sled. (Its unit test compiles
/// here without a harness to run it: hence `unused_imports`.)
#[allow(dead_code, unused_imports)]
#[path = "../../test-support/src/rng.rs"]
mod rng;
use rng::Rng;

const PHRASES: &[&str] = &[
    "今天我们聊聊如何把一篇文章写得更清楚。",
    "好的标题让读者愿意点开，好的开头让读者愿意读下去。",
    "Clear writing starts with a clear question. ",
    "每个平台的读者习惯不同，排版也要随之调整。",
    "We keep paragraphs short and concrete. ",
    "数据只能说明过去，写作要回答读者现在的问题。",
    "\n\n## 小结\n\n",
    "A draft is a conversation with a future reader. ",
];

fn phrases(rng: &mut Rng, n_chars: usize) -> String {
    let mut text = String::with_capacity(n_chars * 3);
    let mut count = 0;
    while count < n_chars {
        let phrase = PHRASES[(rng.next() % PHRASES.len() as u64) as usize];
        text.push_str(phrase);
        count += phrase.chars().count();
    }
    text
}

/// About 10,000 characters: paragraphs, headings, lists with links and bold, code.
fn article() -> String {
    let mut rng = Rng(0x5eed);
    let mut source = String::from("# 长文标题\n\n");
    let mut n_chars = 0;
    let mut paragraph = 0;
    while n_chars < 10_000 {
        paragraph += 1;
        let text = phrases(&mut rng, 180);
        n_chars += text.chars().count();
        match paragraph % 9 {
            0 => source.push_str(&format!("## 第 {paragraph} 节\n\n")),
            3 => source.push_str(&format!("- {}\n- **要点** 与 [链接](https://example.com/{paragraph})\n\n", &text)),
            6 => source.push_str("```rust\nfn main() {\n    println!(\"你好\");\n}\n```\n\n"),
            _ => {}
        }
        source.push_str(&text);
        source.push_str("\n\n");
    }
    source
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx.min(sorted.len() - 1)]
}

/// Prints p50/p95 of `samples` and returns them in milliseconds.
fn report(name: &str, mut samples: Vec<Duration>) -> (f64, f64) {
    samples.sort();
    let p50 = percentile(&samples, 0.50).as_secs_f64() * 1000.0;
    let p95 = percentile(&samples, 0.95).as_secs_f64() * 1000.0;
    println!("{name:<38} n={:<5} p50 {p50:>9.3} ms   p95 {p95:>9.3} ms", samples.len());
    (p50, p95)
}

fn time<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let start = Instant::now();
    let value = f();
    (value, start.elapsed())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let full = args.iter().any(|a| a == "--bench");
    let samples = args.iter().position(|a| a == "--samples").and_then(|i| args.get(i + 1)).and_then(|n| n.parse().ok()).unwrap_or(if full { 200 } else { 3 });
    if full && cfg!(debug_assertions) {
        println!("bench-pipeline: WARNING: a debug build; `cargo bench -p inkstone-text --bench pipeline` builds it optimised");
    }
    let source = article();
    let profiles = ProfileSet::builtin().unwrap();
    let tags = vec!["写作".to_owned(), "效率".to_owned()];
    let input = CompileInput { title: "长文标题", source: &source, tags: &tags };
    let options = comrak::Options::default();
    let all: Vec<_> = Platform::ALL.iter().filter_map(|p| profiles.draft(*p)).collect();
    assert_eq!(all.len(), 5);
    let mut baseline = Vec::new();
    let mut all_five = Vec::new();
    for _ in 0..samples {
        let (html, elapsed) = time(|| comrak::markdown_to_html(&source, &options));
        assert!(!html.is_empty());
        baseline.push(elapsed);
        let (drafts, elapsed) = time(|| compile_all(&all, input));
        assert_eq!(drafts.len(), 5);
        all_five.push(elapsed);
    }
    println!("bench-pipeline: article of {} characters", source.chars().count());
    let mut alone = Vec::new();
    for profile in &all {
        let samples = (0..samples.min(50)).map(|_| time(|| compile(profile, input)).1).collect();
        alone.push((format!("  compile {:?} alone", profile.platform), samples));
    }
    let (base50, base95) = report("comrak::markdown_to_html (baseline)", baseline);
    let (all50, all95) = report("compile all five platforms", all_five);
    for (name, samples) in alone {
        let (p50, _) = report(&name, samples);
        println!("{:<38} {:.2}× the baseline at p50", "", p50 / base50);
    }
    let ratio = all50 / base50;
    let verdict = if ratio <= 5.0 { "met" } else { "MISSED" };
    println!("bench-pipeline: all five / baseline: p50 {ratio:.2}×, p95 {:.2}× (target at most 5× at p50: {verdict})", all95 / base95);
}
