//! Deterministic platform draft compilers. Pure functions: the same source and profile
//! version give byte-identical output. A compiler never fails; it returns the draft
//! and the findings (limits exceeded, content it could not carry over), and it never
//! shortens anything without a finding that says so.

mod cards;
mod markdown;
pub mod measure;
mod text;
mod thread;
#[cfg(any(test, feature = "ui-wording"))]
#[doc(hidden)]
pub mod ui_wording;
mod wechat;
mod zhihu;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::profiles::{DraftProfile, Limit, LimitField, Severity, Unit};
use inkstone_model::{Anchor, Platform};
pub use inkstone_model::{DraftContent, Post};

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

/// Something a person should know about a draft or its source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    /// A stable id: `limit.title`, `ad_law`, `link_policy`, ...
    pub check: String,
    pub severity: Severity,
    pub platform: Option<Platform>,
    /// Where in the source (UTF-16 units, as editors count), when it is about the source.
    pub span: Option<Anchor>,
    /// Where in the draft, when it is about the draft (`title`, `post 3`, ...).
    pub location: Option<String>,
    /// The text that matched, for word checks.
    pub matched: Option<String>,
    pub message: String,
    pub suggestion: Option<String>,
    /// The publishing route a limit applies to, when sources differ by route.
    pub route: Option<String>,
    /// The stable id of the message's wording (`cta.missing`, `ad_law`, ...) and the
    /// values it names, so the UI can say it in the person's language; `message` is
    /// the English. Absent for findings that have no translation yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<String, String>,
    /// The stable id of the suggestion's wording, when it is a fixed one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggestion_id: Option<String>,
}

impl Finding {
    pub fn new(check: &str, severity: Severity, platform: Option<Platform>, message: impl Into<String>) -> Finding {
        Finding {
            check: check.to_owned(),
            severity,
            platform,
            span: None,
            location: None,
            matched: None,
            message: message.into(),
            suggestion: None,
            route: None,
            message_id: None,
            params: BTreeMap::new(),
            suggestion_id: None,
        }
    }

    /// Names the message's wording (`id`) and the values it shows. The English
    /// `message` becomes the catalog's wording (`finding.<id>` in messages/en/findings.json),
    /// the text the UI shows in English, so a count reads "1 image" and "3 images".
    pub fn worded(mut self, id: &str, params: &[(&str, &str)]) -> Finding {
        self.message_id = Some(id.to_owned());
        self.params = params.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        if let Some(english) = english_wording(&format!("finding.{id}"), &self.params) {
            self.message = english;
        }
        self
    }

    /// A suggestion with a fixed wording `id`: the catalog's `finding.fix.<id>` filled with
    /// the finding's values (call it after `worded`); `suggestion` when the catalog has none.
    pub fn suggest_worded(mut self, id: &str, suggestion: impl Into<String>) -> Finding {
        self.suggestion = Some(english_wording(&format!("finding.fix.{id}"), &self.params).unwrap_or_else(|| suggestion.into()));
        self.suggestion_id = Some(id.to_owned());
        self
    }

    pub fn at(mut self, location: &str) -> Finding {
        self.location = Some(location.to_owned());
        self
    }

    pub fn suggest(mut self, suggestion: impl Into<String>) -> Finding {
        self.suggestion = Some(suggestion.into());
        self
    }
}

/// A finding's wording `id` in English, as the UI words it (`describeFinding` in
/// ui/src/shared/i18n): the values `field` and `unit` in their own words
/// (`finding.field.*`, `finding.unit.*`) and a `route` as "on the … route".
pub(crate) fn english_wording(id: &str, params: &BTreeMap<String, String>) -> Option<String> {
    let template = inkstone_messages::english(id)?;
    let mut values = params.clone();
    for (key, table) in [("field", "finding.field"), ("unit", "finding.unit")] {
        if let Some(value) = values.get(key).cloned() {
            if let Some(worded) = inkstone_messages::english_with(&format!("{table}.{value}"), &values) {
                values.insert(key.to_owned(), worded);
            }
        }
    }
    let route = match values.get("route") {
        Some(route) => inkstone_messages::english_with("finding.limit.route", &BTreeMap::from([("route".to_owned(), route.clone())])).unwrap_or_default(),
        None => String::new(),
    };
    values.insert("route".to_owned(), route);
    Some(inkstone_messages::format(template, &values))
}

/// A length as a platform counts it, against its limits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Measurement {
    pub platform: Platform,
    pub field: LimitField,
    pub unit: Unit,
    /// The length in `unit` (for X: the weighted length).
    pub weighted_length: u32,
    /// The strictest limit that applies (of any route), when there is one.
    pub limit: Option<u32>,
    pub valid: bool,
    /// Every limit of the field, with its verdict.
    pub checks: Vec<LimitCheck>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LimitCheck {
    pub limit: Limit,
    pub length: u32,
    pub fits: bool,
}

fn length_in(unit: Unit, text: &str) -> usize {
    match unit {
        Unit::Chars => measure::chars(text),
        Unit::XWeighted => measure::x_weighted_length(text),
        Unit::XhsUnits => measure::xhs_units(text),
        Unit::Count => text.split_whitespace().count(),
    }
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Measures `text` as `platform` counts `field`.
pub fn measure(profile: &DraftProfile, field: LimitField, text: &str) -> Measurement {
    let checks: Vec<LimitCheck> = profile
        .limits_for(field)
        .map(|limit| {
            let length = to_u32(length_in(limit.unit, text));
            let fits = length <= limit.max && limit.min.is_none_or(|min| length >= min);
            LimitCheck { limit: limit.clone(), length, fits }
        })
        .collect();
    let unit = checks.first().map(|c| c.limit.unit).unwrap_or(Unit::Chars);
    let weighted_length = to_u32(length_in(unit, text));
    Measurement {
        platform: profile.platform,
        field,
        unit,
        weighted_length,
        limit: checks.iter().map(|c| c.limit.max).min(),
        valid: checks.iter().filter(|c| c.limit.severity == Severity::Block || c.limit.route.is_none()).all(|c| c.fits),
        checks,
    }
}

/// Findings for every limit of `field` that `value` (a length or count) breaks.
fn limit_findings(profile: &DraftProfile, field: LimitField, length_of: impl Fn(Unit) -> usize, location: &str) -> Vec<Finding> {
    let mut findings = Vec::new();
    for limit in profile.limits_for(field) {
        let length = length_of(limit.unit);
        let unit = match limit.unit {
            Unit::Chars => "characters",
            Unit::XWeighted => "weighted characters",
            Unit::XhsUnits => "characters (two Latin letters or digits count as one)",
            Unit::Count => "items",
        };
        let unit_id = match limit.unit {
            Unit::Chars => "chars",
            Unit::XWeighted => "xWeighted",
            Unit::XhsUnits => "xhsUnits",
            Unit::Count => "count",
        };
        let route = limit.route.as_deref().map(|r| format!(" on the {r} route")).unwrap_or_default();
        // What breaks the limit, and the fix: the length to reach. Where the limit comes
        // from (a platform's documentation, a tool's schema) stays in `params.source`.
        let message = if length > limit.max as usize {
            let fix = (format!("Cut the {location} to at most {} {unit}.", limit.max), "limit.shorten");
            Some((format!("The {location} is {length} {unit}; the limit{route} is {}.", limit.max), "limit.over", limit.max, fix))
        } else {
            limit.min.filter(|min| length < *min as usize).map(|min| {
                let fix = (format!("Bring the {location} to at least {min} {unit}."), "limit.lengthen");
                (format!("The {location} is {length} {unit}; at least {min} are expected{route}."), "limit.under", min, fix)
            })
        };
        if let Some((message, wording, bound, (fix, fix_wording))) = message {
            // The post's number when the location is one post ("post 3").
            let post = location.strip_prefix("post ").unwrap_or("");
            let (length, bound) = (length.to_string(), bound.to_string());
            let mut params = vec![("field", field_name(field)), ("length", length.as_str()), ("bound", bound.as_str()), ("unit", unit_id)];
            if !post.is_empty() {
                params.push(("post", post));
            }
            if let Some(route) = limit.route.as_deref() {
                params.push(("route", route));
            }
            params.push(("source", limit.source.as_str()));
            let mut finding = Finding::new(&format!("limit.{}", field_name(field)), limit.severity, Some(profile.platform), message)
                .worded(wording, &params)
                .at(location)
                .suggest_worded(fix_wording, fix);
            finding.route = limit.route.clone();
            findings.push(finding);
        }
    }
    findings
}

fn field_name(field: LimitField) -> &'static str {
    match field {
        LimitField::Title => "title",
        LimitField::Digest => "digest",
        LimitField::Body => "body",
        LimitField::Tags => "tags",
        LimitField::Images => "images",
        LimitField::Post => "post",
        LimitField::Posts => "posts",
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

/// The visible text of compiled WeChat HTML (tags dropped, the usual entities decoded),
/// for counting a hand-edited body the way the compiler counts a compiled one.
pub fn html_visible_text(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(start) = rest.find('<') {
        out.push_str(&rest[..start]);
        match rest[start..].find('>') {
            Some(end) => rest = &rest[start + end + 1..],
            None => {
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&#39;", "'").replace("&nbsp;", " ").replace("&amp;", "&")
}

/// The images of `source` that live on this computer (every image URL that is not
/// `http(s)://` or `data:`), in order of appearance, each once: `media/<file>` for the
/// project's own media, or a path a pasted or imported file brought along.
pub fn local_images(source: &str) -> Vec<String> {
    fn walk<'a>(node: &'a comrak::nodes::AstNode<'a>, out: &mut Vec<String>) {
        for child in node.children() {
            if let comrak::nodes::NodeValue::Image(link) = &child.data.borrow().value {
                let url = link.url.trim();
                let lower = url.to_ascii_lowercase();
                let remote = ["http://", "https://", "data:"].iter().any(|scheme| lower.starts_with(scheme));
                if !url.is_empty() && !remote && !out.iter().any(|seen| seen == url) {
                    out.push(url.to_owned());
                }
            }
            walk(child, out);
        }
    }
    let arena = comrak::Arena::new();
    let mut out = Vec::new();
    walk(markdown::parse(&arena, source), &mut out);
    out
}

/// The finding for a local image the draft cannot show (not among the project's media,
/// or its file is gone), one per platform.
pub fn missing_image_finding(platform: Platform, image: &str) -> Finding {
    let mut finding =
        Finding::new("image.missing", Severity::Warn, Some(platform), format!("The image “{image}” is not among this project's media, so the draft has no image there."))
            .worded("image.missing", &[("image", image)])
            .at("body")
            .suggest_worded("image.missing", "Add the image again (paste or drop it into the editor), or remove its reference from the source.");
    finding.matched = Some(image.to_owned());
    finding
}

/// The separator between X posts in a thread draft's patch text.
pub const POST_SEPARATOR: &str = "\n\n---\n\n";

/// The text a draft patch edits: the HTML, the Markdown, the posts joined by
/// [`POST_SEPARATOR`], or the card's body.
pub fn draft_patch_text(content: &DraftContent) -> String {
    match content {
        DraftContent::Html { html, .. } => html.clone(),
        DraftContent::Markdown { markdown } => markdown.clone(),
        DraftContent::Thread { posts } => posts.iter().map(|p| p.text.as_str()).collect::<Vec<_>>().join(POST_SEPARATOR),
        DraftContent::Card { body, .. } => body.clone(),
    }
}

/// Every limit finding for a draft as it stands, for a draft edited by hand, and a
/// warning when its body has no text left (an emptied draft is kept, as any edit is:
/// rejecting it would refuse the autosave of someone retyping it).
pub fn check_draft(profile: &DraftProfile, title: &str, content: &DraftContent) -> Vec<Finding> {
    let mut findings = limit_findings(profile, LimitField::Title, |unit| length_in(unit, title), "title");
    let empty = match content {
        DraftContent::Html { html, digest } => {
            findings.extend(limit_findings(profile, LimitField::Digest, |unit| length_in(unit, digest), "digest"));
            let body = html_visible_text(html);
            findings.extend(limit_findings(profile, LimitField::Body, |unit| length_in(unit, &body), "body"));
            body.trim().is_empty() && !html.contains("<img")
        }
        DraftContent::Markdown { markdown } => {
            let body = plain_text(markdown).blocks.join("\n");
            findings.extend(limit_findings(profile, LimitField::Body, |unit| length_in(unit, &body), "body"));
            body.trim().is_empty() && !markdown.contains("![")
        }
        DraftContent::Thread { posts } => {
            for (idx, post) in posts.iter().enumerate() {
                findings.extend(limit_findings(profile, LimitField::Post, |unit| length_in(unit, &post.text), &format!("post {}", idx + 1)));
            }
            findings.extend(limit_findings(profile, LimitField::Posts, |_| posts.len(), "thread"));
            posts.iter().all(|p| p.text.trim().is_empty())
        }
        DraftContent::Card { body, tags } => {
            findings.extend(limit_findings(profile, LimitField::Body, |unit| length_in(unit, body), "body"));
            findings.extend(limit_findings(profile, LimitField::Tags, |_| tags.len(), "number of topics"));
            body.trim().is_empty()
        }
    };
    if empty {
        findings.push(
            Finding::new("draft.empty", Severity::Warn, Some(profile.platform), "The draft's body is empty.")
                .worded("draft.empty", &[])
                .at("body")
                .suggest_worded("draft.empty", "Write the body again, or replace the draft with a fresh compile of the source."),
        );
    }
    findings
}

/// The draft as one text, for showing the difference between two drafts.
pub fn draft_text(title: &str, content: &DraftContent) -> String {
    let body = match content {
        DraftContent::Html { html, digest } => format!("{digest}\n\n{}", html.replace("><", ">\n<")),
        DraftContent::Markdown { markdown } => markdown.clone(),
        DraftContent::Thread { posts } => posts.iter().map(|p| p.text.as_str()).collect::<Vec<_>>().join("\n\n---\n\n"),
        DraftContent::Card { body, tags } => {
            let tags: Vec<String> = tags.iter().map(|t| format!("#{t}")).collect();
            format!("{body}\n\n{}", tags.join(" "))
        }
    };
    format!("{title}\n\n{body}")
}

/// Recomputes what a hand edit cannot be trusted to state (post lengths).
pub fn normalize_content(content: DraftContent) -> DraftContent {
    match content {
        DraftContent::Thread { posts } => {
            DraftContent::Thread { posts: posts.into_iter().map(|p| Post { weighted_length: to_u32(measure::x_weighted_length(&p.text)), text: p.text }).collect() }
        }
        other => other,
    }
}

/// Whether `content` is the kind of content `platform` drafts hold.
pub fn content_fits_platform(platform: Platform, content: &DraftContent) -> bool {
    matches!(
        (platform, content),
        (Platform::Wechat, DraftContent::Html { .. })
            | (Platform::Zhihu, DraftContent::Markdown { .. })
            | (Platform::X, DraftContent::Thread { .. })
            | (Platform::Douyin | Platform::Xiaohongshu, DraftContent::Card { .. })
    )
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
