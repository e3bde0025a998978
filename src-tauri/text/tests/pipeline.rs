//! Platform compilers over the fixture corpus (snapshots), their laws (properties),
//! and the CommonMark spec examples. (Compiling through the engine's API is in
//! inkstone-core's `tests/it/pipeline.rs`.)
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use inkstone_model::Platform;
use inkstone_text::pipeline::{compile, tags_and_attributes, CompileInput, DraftContent, Finding, WECHAT_ALLOWED_TAGS};
use inkstone_text::profiles::ProfileSet;
use proptest::prelude::*;

fn corpus() -> Vec<(String, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/articles");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "md")).collect();
    files.sort();
    files.into_iter().map(|p| (p.file_stem().unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(p).unwrap())).collect()
}

fn title_of(source: &str) -> &str {
    source.lines().find_map(|l| l.strip_prefix("# ")).unwrap_or("无题")
}

fn render(content: &DraftContent, findings: &[Finding]) -> String {
    let mut out = String::new();
    match content {
        DraftContent::Html { html, digest } => out.push_str(&format!("digest: {digest}\n\n{}\n", html.replace("><", ">\n<"))),
        DraftContent::Markdown { markdown } => out.push_str(markdown),
        DraftContent::Thread { posts } => {
            for (idx, post) in posts.iter().enumerate() {
                out.push_str(&format!("--- post {} ({}) ---\n{}\n", idx + 1, post.weighted_length, post.text));
            }
        }
        DraftContent::Card { body, tags } => out.push_str(&format!("{body}\n\ntags: {tags:?}\n")),
    }
    out.push_str("\n=== findings ===\n");
    for f in findings {
        out.push_str(&format!("{:?} {} {:?} {:?} {:?}: {}\n", f.severity, f.check, f.location, f.span.map(|s| (s.from, s.to)), f.route, f.message));
    }
    out
}

#[test]
fn corpus_snapshots_per_platform() {
    let profiles = ProfileSet::builtin().unwrap();
    let tags = vec!["写作".to_owned(), "效率".to_owned()];
    let corpus = corpus();
    assert!(corpus.len() >= 20);
    for (name, source) in &corpus {
        for platform in Platform::ALL {
            let profile = profiles.draft(platform).unwrap();
            let (draft, findings) = compile(profile, CompileInput { title: title_of(source), source, tags: &tags });
            assert_eq!(draft.profile_id, profile.id);
            let mut settings = insta::Settings::clone_current();
            settings.set_snapshot_path("snapshots");
            settings.set_prepend_module_to_snapshot(false);
            settings.bind(|| insta::assert_snapshot!(format!("{name}@{platform:?}"), render(&draft.content, &findings)));
        }
    }
}

fn check_laws(source: &str) -> Result<(), TestCaseError> {
    let profiles = ProfileSet::builtin().unwrap();
    for platform in Platform::ALL {
        let profile = profiles.draft(platform).unwrap();
        let input = CompileInput { title: "标题", source, tags: &[] };
        let first = compile(profile, input);
        let second = compile(profile, input);
        prop_assert_eq!(&first, &second, "compiling twice is byte-identical ({:?})", platform);
        match &first.0.content {
            DraftContent::Thread { posts } => {
                for post in posts {
                    prop_assert!(post.weighted_length <= 280, "post over 280: {:?}", post.text);
                    prop_assert_eq!(post.weighted_length as usize, inkstone_text::pipeline::measure::x_weighted_length(&post.text));
                }
            }
            DraftContent::Html { html, .. } => {
                for (tag, attributes) in tags_and_attributes(html) {
                    let allowed = WECHAT_ALLOWED_TAGS.iter().find(|(name, _)| *name == tag);
                    prop_assert!(allowed.is_some(), "tag <{}> in {}", tag, html);
                    for attribute in attributes {
                        prop_assert!(allowed.is_some_and(|(_, a)| a.contains(&attribute.as_str())), "attribute {} on <{}>", attribute, tag);
                    }
                }
                for href in html.split("href=\"").skip(1) {
                    let url = href.split('"').next().unwrap_or("");
                    prop_assert!(url.starts_with("https://mp.weixin.qq.com") || url.starts_with("http://mp.weixin.qq.com"), "external link survived: {}", url);
                }
                prop_assert!(!html.contains("<div") && !html.contains("<style") && !html.contains("<script") && !html.contains(" id=") && !html.contains(" class="));
            }
            _ => {}
        }
    }
    Ok(())
}

fn markdownish() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        "[a-z ]{0,12}",
        "[春天写作清楚。！？，]{0,12}",
        Just("# ".to_owned()),
        Just("\n\n".to_owned()),
        Just("\n- ".to_owned()),
        Just("\n1. ".to_owned()),
        Just("**".to_owned()),
        Just("`".to_owned()),
        Just("\n```\n".to_owned()),
        Just("[link](https://example.com/x)".to_owned()),
        Just("[公众号](https://mp.weixin.qq.com/s/x)".to_owned()),
        Just("![img](a.png)".to_owned()),
        Just("https://example.org/path?q=1".to_owned()),
        Just("😀👨‍👩‍👧".to_owned()),
        Just("| a | b |\n|---|---|\n| 1 | 2 |\n".to_owned()),
        Just("[^1]\n\n[^1]: note".to_owned()),
        Just("$x^2$".to_owned()),
        Just("<div>html</div>".to_owned()),
        Just("> ".to_owned()),
        Just("#话题 ".to_owned()),
        Just("Supercalifragilisticexpialidocious".repeat(12)),
    ];
    proptest::collection::vec(piece, 0..40).prop_map(|pieces| pieces.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]
    #[test]
    fn compilers_are_deterministic_and_keep_their_laws(source in markdownish()) {
        check_laws(&source)?;
    }

    #[test]
    fn long_chinese_threads_stay_within_280(n in 1usize..2000) {
        let source = "春眠不觉晓，处处闻啼鸟。夜来风雨声，花落知多少。".repeat(n / 20 + 1);
        check_laws(&source)?;
    }
}

#[test]
fn every_commonmark_spec_example_compiles_on_every_platform() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/commonmark/examples.json");
    let examples: Vec<serde_json::Value> = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(examples.len(), 652);
    for example in &examples {
        let markdown = example["markdown"].as_str().unwrap();
        let outcome = std::panic::catch_unwind(|| check_laws(markdown));
        match outcome {
            Ok(Ok(())) => {}
            Ok(Err(error)) => panic!("example {}: {error}", example["example"]),
            Err(_) => panic!("example {} ({}) panicked", example["example"], example["section"]),
        }
    }
}
