//! A draft as it stands after hand edits: its text for patches and comparisons, its
//! limit findings, the content it must hold for its platform, and the local images
//! its source names.

use super::limits::{length_in, limit_findings, to_u32};
use super::text::plain_text;
use super::{markdown, measure, DraftContent, Finding, Post};
use crate::profiles::{DraftProfile, LimitField, Severity};
use inkstone_model::Platform;

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
