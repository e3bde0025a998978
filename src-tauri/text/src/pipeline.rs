//! Deterministic platform draft compilers. Pure functions: the same source and profile
//! version give byte-identical output. A compiler never fails; it returns the draft
//! and the findings (limits exceeded, content it could not carry over), and it never
//! shortens anything without a finding that says so.

mod cards;
mod drafts;
mod finding;
mod limits;
mod markdown;
pub mod measure;
mod text;
mod thread;
#[cfg(any(test, feature = "ui-wording"))]
#[doc(hidden)]
pub mod ui_wording;
mod wechat;
mod zhihu;

use serde::{Deserialize, Serialize};

use crate::profiles::{DraftProfile, LimitField, Severity, Unit};
pub use drafts::{check_draft, content_fits_platform, draft_patch_text, draft_text, html_visible_text, local_images, missing_image_finding, normalize_content, POST_SEPARATOR};
pub use finding::Finding;
use inkstone_model::Platform;
pub use inkstone_model::{DraftContent, Post};
use limits::{length_in, limit_findings, to_u32};
pub use limits::{measure, LimitCheck, Measurement};

/// What a compiler reads.
#[derive(Debug, Clone, Copy)]
pub struct CompileInput<'a> {
    pub title: &'a str,
    pub source: &'a str,
    /// Topic tags for platforms that carry them (Douyin, Xiaohongshu, Zhihu).
    pub tags: &'a [String],
}

/// A compiled platform draft.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Draft {
    pub platform: Platform,
    /// The exact draft profile version used.
    pub profile_id: String,
    pub title: String,
    pub content: DraftContent,
    pub n_images: u32,
    pub n_links: u32,
}

impl Draft {
    /// A draft compiled with `profile` (its platform and exact profile id recorded).
    pub fn new(profile: &DraftProfile, title: &str, content: DraftContent, n_images: u32, n_links: u32) -> Draft {
        Draft { platform: profile.platform, profile_id: profile.id.clone(), title: title.to_owned(), content, n_images, n_links }
    }
}

/// A source parsed once, shared by every compiler of one run.
pub struct Parsed<'a> {
    root: &'a comrak::nodes::AstNode<'a>,
    plain: text::PlainText,
    /// The sentences of each plain block, split once (when first read) for the
    /// compilers that read them.
    /// They are byte ranges of the block, not copies.
    sentences: Vec<std::cell::OnceCell<Vec<(usize, usize)>>>,
    /// The source opened with a `# ` heading repeating the title, left out of the drafts.
    title_heading: Option<String>,
    /// The characters of the plain blocks joined by line ends, counted once.
    body_chars: std::cell::OnceCell<usize>,
}

impl<'a> Parsed<'a> {
    /// Parses `source`; a first heading of level 1 that says the `title` again (a pasted
    /// Markdown file's `# Title`) is left out, as `import.markdown` leaves it out, so no
    /// platform shows the title twice.
    pub fn new(arena: &'a comrak::Arena<'a>, source: &str, title: &str) -> Parsed<'a> {
        let root = markdown::parse(arena, source);
        let title_heading = root.first_child().and_then(|first| {
            let heading = matches!(&first.data.borrow().value, comrak::nodes::NodeValue::Heading(h) if h.level == 1);
            let text = markdown::inline_text(first);
            (heading && !title.trim().is_empty() && same_words(&text, title)).then(|| {
                first.detach();
                text.trim().to_owned()
            })
        });
        let plain = text::plain_text_of(root);
        let sentences = plain.blocks.iter().map(|_| std::cell::OnceCell::new()).collect();
        Parsed { root, plain, sentences, title_heading, body_chars: std::cell::OnceCell::new() }
    }

    /// The length in `unit` of the plain blocks joined by line ends (the body as the
    /// long-form platforms count it); in characters without joining them, once per run.
    fn body_length(&self, unit: Unit) -> usize {
        match unit {
            Unit::Chars => *self.body_chars.get_or_init(|| self.plain.blocks.iter().map(|b| measure::chars(b)).sum::<usize>() + self.plain.blocks.len().saturating_sub(1)),
            _ => length_in(unit, &self.plain.blocks.join("\n")),
        }
    }

    /// [`text::sentences`] of each block of the plain text, in order.
    fn sentences(&self) -> impl Iterator<Item = impl Iterator<Item = &str>> {
        self.plain
            .blocks
            .iter()
            .zip(&self.sentences)
            .map(|(block, split)| split.get_or_init(|| text::sentence_ranges(block).collect()).iter().map(|&(start, end)| &block[start..end]))
    }
}

/// Equal but for case and white space (CJK titles are often spaced differently).
fn same_words(a: &str, b: &str) -> bool {
    let letters = |s: &str| s.chars().filter(|c| !c.is_whitespace()).flat_map(char::to_lowercase).collect::<String>();
    letters(a) == letters(b)
}

/// Compiles the source for `profile.platform`.
pub fn compile(profile: &DraftProfile, input: CompileInput<'_>) -> (Draft, Vec<Finding>) {
    let arena = comrak::Arena::new();
    let parsed = Parsed::new(&arena, input.source, input.title);
    compile_parsed(profile, input, &parsed)
}

/// Compiles several platforms from one parse of the source.
pub fn compile_all(profiles: &[&DraftProfile], input: CompileInput<'_>) -> Vec<(Draft, Vec<Finding>)> {
    let arena = comrak::Arena::new();
    let parsed = Parsed::new(&arena, input.source, input.title);
    profiles.iter().map(|profile| compile_parsed(profile, input, &parsed)).collect()
}

fn compile_parsed(profile: &DraftProfile, input: CompileInput<'_>, parsed: &Parsed<'_>) -> (Draft, Vec<Finding>) {
    let (draft, mut findings) = match profile.platform {
        Platform::Wechat => wechat::compile(profile, input, parsed),
        Platform::Zhihu => zhihu::compile(profile, input, parsed),
        Platform::X => thread::compile(profile, input, parsed),
        Platform::Douyin => cards::compile_douyin(profile, input, parsed),
        Platform::Xiaohongshu => cards::compile_xiaohongshu(profile, input, parsed),
    };
    findings.extend(limit_findings(profile, LimitField::Images, |_| draft.n_images as usize, "number of images"));
    if let Some(heading) = &parsed.title_heading {
        findings.push(
            Finding::new(
                "title_heading",
                Severity::Info,
                Some(profile.platform),
                format!("The source opens with the heading “{heading}”, which repeats the title; the draft shows the title once."),
            )
            .worded("title_heading", &[("heading", heading)])
            .at("body")
            .suggest_worded("title_heading", "Delete the heading from the source if you do not need it there."),
        );
    }
    (draft, findings)
}

pub use markdown::utf16_offset;
pub use text::plain_text;
pub use wechat::{tags_and_attributes, ALLOWED as WECHAT_ALLOWED_TAGS};

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::profiles::ProfileSet;

    /// Every finding a compile or a draft check makes names its wording and values, and
    /// the UI's English wording with those values is exactly its English text; so the
    /// Chinese UI can say each of them (messages/zh has every id messages/en has).
    #[test]
    fn every_compile_finding_is_worded_as_the_ui_words_it() {
        let set = ProfileSet::builtin().unwrap();
        let long_word = "a".repeat(400);
        let sources = [
            format!(
                "# 标题\n\n开头一句。<span>原始</span>见 [说明](https://example.com/guide)。\n\n![图](media/a.png)\n\n{long_word}\n\n<div>块</div>\n\n{}",
                "很长的正文。".repeat(600)
            ),
            "# 短\n\n短文。".to_owned(),
        ];
        let tags: Vec<String> = (0..30).map(|i| format!("话题{i}")).collect();
        let mut seen = std::collections::BTreeSet::new();
        for profile in set.drafts.values() {
            for source in &sources {
                for title in ["", "标题", &"很长的标题".repeat(40)] {
                    let (draft, findings) = compile(profile, CompileInput { title, source, tags: &tags });
                    let checked = check_draft(profile, &draft.title, &draft.content);
                    for f in findings.iter().chain(&checked) {
                        ui_wording::assert_worded(f);
                        seen.insert(f.message_id.clone().unwrap_or_default());
                    }
                }
            }
        }
        let wechat = &set.drafts[&Platform::Wechat];
        for f in wechat::format_findings(r#"<script>x</script><p class="c" style="color: var(--x)">t</p>"#, wechat) {
            ui_wording::assert_worded(&f);
            seen.insert(f.message_id.clone().unwrap_or_default());
        }
        let all = [
            "limit.over",
            "limit.under",
            "x.word_cut",
            "x.images",
            "tags.dropped",
            "douyin.caption_shortened",
            "xiaohongshu.links",
            "zhihu.images",
            "format.raw_html",
            "format.raw_html.wechat",
            "link_policy",
            "wechat.images",
            "format.tag",
            "format.attribute",
            "format.css_variable",
            "title_heading",
        ];
        let missing: Vec<_> = all.iter().filter(|id| !seen.contains(**id)).collect();
        assert!(missing.is_empty(), "not exercised: {missing:?}; seen {seen:?}");
        // The compile of a project adds this one (it needs the project's media).
        ui_wording::assert_worded(&missing_image_finding(Platform::Wechat, "images/a.png"));
    }

    /// A pasted Markdown file's `# Title` is not shown twice: every platform's draft
    /// leaves the heading that repeats the title out and says so; a different first
    /// heading, or one further down, stays.
    #[test]
    fn a_first_heading_repeating_the_title_is_left_out_of_every_draft() {
        let set = ProfileSet::builtin().unwrap();
        let source = "# 散步的 三个 好处\n\n第一段正文。\n\n# 散步的 三个 好处\n\n结尾。";
        for profile in set.drafts.values() {
            let (draft, findings) = compile(profile, CompileInput { title: "散步的三个好处", source, tags: &[] });
            let text = draft_patch_text(&draft.content);
            assert_eq!(text.matches("散步的 三个 好处").count(), 1, "{:?}: only the later heading stays: {text}", profile.platform);
            assert!(text.find("散步的 三个 好处") > text.find("第一段正文"), "{:?}: the body starts after the heading: {text}", profile.platform);
            let noted: Vec<&Finding> = findings.iter().filter(|f| f.check == "title_heading").collect();
            assert_eq!(noted.len(), 1, "{:?}", profile.platform);
            assert_eq!(noted[0].platform, Some(profile.platform));
            ui_wording::assert_worded(noted[0]);
            // Another title: the heading is the article's own and stays.
            let (draft, findings) = compile(profile, CompileInput { title: "散步", source, tags: &[] });
            assert_eq!(draft_patch_text(&draft.content).matches("散步的 三个 好处").count(), 2, "{:?}", profile.platform);
            assert!(findings.iter().all(|f| f.check != "title_heading"));
        }
        // English titles compare without case.
        let wechat = &set.drafts[&Platform::Wechat];
        let (draft, _) = compile(wechat, CompileInput { title: "Writing Short", source: "# Writing short\n\nShort sentences.", tags: &[] });
        assert!(!draft_patch_text(&draft.content).contains("Writing short"));
        let (draft, findings) = compile(wechat, CompileInput { title: "Writing", source: "# Writing short\n\nShort sentences.", tags: &[] });
        assert!(draft_patch_text(&draft.content).contains("Writing short"), "a different heading stays");
        assert!(findings.iter().all(|f| f.check != "title_heading"));
    }
}
