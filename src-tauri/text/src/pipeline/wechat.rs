//! WeChat Official Account HTML: every style inline from the profile's theme; no
//! `<style>`, `<script>`, `<link>`, `id`, `class`, CSS variables or `div`; external links
//! become plain text with a numbered reference list at the end; images in `figure`;
//! code blocks as inline-styled lines; lists with literal markers; tables wrapped for
//! horizontal scroll.

use std::collections::BTreeMap;

use comrak::nodes::{AstNode, ListType, NodeList, NodeValue, TableAlignment};

use super::markdown::{collect_footnotes, escape_html, escaped, inline_text, push_escaped, url_host};
use super::{limit_findings, CompileInput, Draft, DraftContent, Finding, Parsed};
use crate::profiles::{DraftProfile, LimitField, Severity};

/// Tags the compiler may emit, with their allowed attributes. Tests hold every output
/// to this list.
pub const ALLOWED: &[(&str, &[&str])] = &[
    ("section", &["style"]),
    ("p", &["style"]),
    ("span", &["style"]),
    ("strong", &["style"]),
    ("em", &["style"]),
    ("del", &["style"]),
    ("code", &["style"]),
    ("a", &["href", "style"]),
    ("sup", &["style"]),
    ("figure", &["style"]),
    ("img", &["src", "alt", "style"]),
    ("figcaption", &["style"]),
    ("table", &["style"]),
    ("thead", &["style"]),
    ("tbody", &["style"]),
    ("tr", &["style"]),
    ("th", &["style"]),
    ("td", &["style"]),
    ("blockquote", &["style"]),
    ("h1", &["style"]),
    ("h2", &["style"]),
    ("h3", &["style"]),
    ("h4", &["style"]),
    ("hr", &["style"]),
    ("br", &[]),
];

struct Ctx<'p> {
    profile: &'p DraftProfile,
    allowed_hosts: Vec<String>,
    /// (label, url) in order of first mention; footnotes use an empty url.
    references: Vec<(String, String)>,
    footnotes: BTreeMap<String, String>,
    footnote_numbers: BTreeMap<String, usize>,
    n_images: u32,
    n_links: u32,
    n_external: u32,
    n_raw_html: u32,
    column_px: u32,
}

impl<'p> Ctx<'p> {
    fn style(&self, element: &str) -> std::borrow::Cow<'p, str> {
        escaped(self.profile.style(element))
    }

    fn open(&self, tag: &str, element: &str) -> String {
        let mut out = String::new();
        self.push_open(&mut out, tag, element);
        out
    }

    /// Appends [`Ctx::open`] of `tag` to `out`, without a String of its own.
    fn push_open(&self, out: &mut String, tag: &str, element: &str) {
        out.push('<');
        out.push_str(tag);
        out.push_str(" style=\"");
        push_escaped(out, self.profile.style(element));
        out.push_str("\">");
    }

    fn reference(&mut self, label: &str, url: &str) -> usize {
        if let Some(idx) = self.references.iter().position(|(_, u)| u == url) {
            return idx + 1;
        }
        self.references.push((label.to_owned(), url.to_owned()));
        self.references.len()
    }
}

fn spaces_to_nbsp(line: &str) -> String {
    escape_html(line).replace(' ', "&nbsp;").replace('\t', "&nbsp;&nbsp;&nbsp;&nbsp;")
}

fn inline<'a>(node: &'a AstNode<'a>, ctx: &mut Ctx<'_>, out: &mut String) {
    for child in node.children() {
        let data = child.data.borrow();
        let value = &data.value;
        match value {
            NodeValue::Text(text) => push_escaped(out, text),
            NodeValue::SoftBreak => out.push(' '),
            NodeValue::LineBreak => out.push_str("<br>"),
            NodeValue::Code(code) => {
                ctx.push_open(out, "code", "code_inline");
                push_escaped(out, &code.literal);
                out.push_str("</code>");
            }
            NodeValue::Math(math) => {
                ctx.push_open(out, "code", "code_inline");
                push_escaped(out, &math.literal);
                out.push_str("</code>");
            }
            NodeValue::Emph => {
                ctx.push_open(out, "em", "em");
                inline(child, ctx, out);
                out.push_str("</em>");
            }
            NodeValue::Strong => {
                ctx.push_open(out, "strong", "strong");
                inline(child, ctx, out);
                out.push_str("</strong>");
            }
            NodeValue::Strikethrough => {
                ctx.push_open(out, "del", "del");
                inline(child, ctx, out);
                out.push_str("</del>");
            }
            NodeValue::Link(link) => {
                ctx.n_links += 1;
                let allowed = url_host(&link.url).is_some_and(|host| ctx.allowed_hosts.contains(&host));
                if allowed {
                    out.push_str(&format!("<a href=\"{}\" style=\"{}\">", escape_html(&link.url), ctx.style("link")));
                    inline(child, ctx, out);
                    out.push_str("</a>");
                } else {
                    ctx.n_external += 1;
                    let label = inline_text(child);
                    inline(child, ctx, out);
                    let n = ctx.reference(&label, &link.url);
                    out.push_str(&format!("{}[{n}]</sup>", ctx.open("sup", "ref_mark")));
                }
            }
            NodeValue::Image(link) => {
                // An image inside a paragraph: emitted as a figure by the block pass;
                // inline images (in headings, tables) keep their alt text only.
                let alt = inline_text(child);
                push_escaped(out, &alt);
                let _ = link;
            }
            NodeValue::FootnoteReference(reference) => {
                let text = ctx.footnotes.get(&reference.name).cloned().unwrap_or_default();
                let n = match ctx.footnote_numbers.get(&reference.name) {
                    Some(n) => *n,
                    None => {
                        ctx.references.push((text, String::new()));
                        let n = ctx.references.len();
                        ctx.footnote_numbers.insert(reference.name.clone(), n);
                        n
                    }
                };
                out.push_str(&format!("{}[{n}]</sup>", ctx.open("sup", "ref_mark")));
            }
            NodeValue::HtmlInline(_) => ctx.n_raw_html += 1,
            _ => inline(child, ctx, out),
        }
    }
}

/// A paragraph that holds only images (and whitespace) becomes figures.
fn lone_images<'a>(node: &'a AstNode<'a>) -> Option<Vec<(String, String)>> {
    let mut images = Vec::new();
    for child in node.children() {
        let data = child.data.borrow();
        let value = &data.value;
        match value {
            NodeValue::Image(link) => images.push((link.url.clone(), inline_text(child))),
            NodeValue::SoftBreak | NodeValue::LineBreak => {}
            NodeValue::Text(text) if text.trim().is_empty() => {}
            _ => return None,
        }
    }
    if images.is_empty() {
        None
    } else {
        Some(images)
    }
}

fn figure(url: &str, alt: &str, ctx: &mut Ctx<'_>, out: &mut String) {
    ctx.n_images += 1;
    ctx.push_open(out, "figure", "figure");
    let img_style = format!("{} width: 100%; max-width: {}px;", ctx.profile.style("img"), ctx.column_px);
    out.push_str(&format!("<img src=\"{}\" alt=\"{}\" style=\"{}\">", escape_html(url), escape_html(alt), escape_html(img_style.trim())));
    if !alt.trim().is_empty() {
        ctx.push_open(out, "figcaption", "figcaption");
        out.push_str(&escape_html(alt));
        out.push_str("</figcaption>");
    }
    out.push_str("</figure>");
}

fn list_item_marker(list_type: ListType, number: usize, task: Option<Option<char>>) -> String {
    match (task, list_type) {
        (Some(Some(_)), _) => "☑ ".to_owned(),
        (Some(None), _) => "☐ ".to_owned(),
        (None, ListType::Bullet) => "• ".to_owned(),
        (None, ListType::Ordered) => format!("{number}. "),
    }
}

fn blocks<'a>(node: &'a AstNode<'a>, ctx: &mut Ctx<'_>, out: &mut String, depth: usize) {
    for child in node.children() {
        block(child, ctx, out, depth);
    }
}

/// Renders one block node.
fn block<'a>(child: &'a AstNode<'a>, ctx: &mut Ctx<'_>, out: &mut String, depth: usize) {
    let data = child.data.borrow();
    match &data.value {
        NodeValue::Paragraph => paragraph(child, ctx, out),
        NodeValue::Heading(heading) => {
            let tag = format!("h{}", heading.level.clamp(1, 4));
            ctx.push_open(out, &tag, &tag);
            inline(child, ctx, out);
            out.push_str(&format!("</{tag}>"));
        }
        NodeValue::BlockQuote | NodeValue::MultilineBlockQuote(_) | NodeValue::Alert(_) => {
            ctx.push_open(out, "blockquote", "blockquote");
            blocks(child, ctx, out, depth);
            out.push_str("</blockquote>");
        }
        NodeValue::List(list) => list_block(child, list, ctx, out, depth),
        NodeValue::CodeBlock(code) => code_block(&code.literal, ctx, out),
        NodeValue::Math(math) => {
            ctx.push_open(out, "p", "p");
            ctx.push_open(out, "code", "code_inline");
            push_escaped(out, &math.literal);
            out.push_str("</code></p>");
        }
        NodeValue::Table(table) => table_block(child, &table.alignments, ctx, out),
        NodeValue::ThematicBreak => out.push_str(&format!("<hr style=\"{}\">", ctx.style("hr"))),
        NodeValue::HtmlBlock(_) => ctx.n_raw_html += 1,
        NodeValue::FootnoteDefinition(_) | NodeValue::FrontMatter(_) => {}
        _ => blocks(child, ctx, out, depth),
    }
}

/// A paragraph: lone images become figures; images mixed with text follow the
/// paragraph's text as figures.
fn paragraph<'a>(child: &'a AstNode<'a>, ctx: &mut Ctx<'_>, out: &mut String) {
    if let Some(images) = lone_images(child) {
        for (url, alt) in images {
            figure(&url, &alt, ctx, out);
        }
        return;
    }
    // Images mixed with text: the text stays a paragraph, the images follow.
    let mut mixed = Vec::new();
    for grandchild in child.children() {
        if let NodeValue::Image(link) = &grandchild.data.borrow().value {
            mixed.push((link.url.clone(), inline_text(grandchild)));
        }
    }
    ctx.push_open(out, "p", "p");
    inline(child, ctx, out);
    out.push_str("</p>");
    for (url, alt) in mixed {
        figure(&url, &alt, ctx, out);
    }
}

/// A list as a section of indented paragraphs with literal markers; nested lists
/// follow their item one step further in.
fn list_block<'a>(child: &'a AstNode<'a>, list: &NodeList, ctx: &mut Ctx<'_>, out: &mut String, depth: usize) {
    ctx.push_open(out, "section", "list");
    for (number, item) in (list.start.max(1)..).zip(child.children()) {
        let task = match &item.data.borrow().value {
            NodeValue::TaskItem(task) => Some(task.symbol),
            _ => None,
        };
        let marker = list_item_marker(list.list_type, number, task);
        let indent = format!("{} padding-left: {}px;", ctx.profile.style("list_item"), 16 * (depth + 1));
        let mut first = true;
        for part in item.children() {
            let part_data = part.data.borrow();
            let part_value = &part_data.value;
            match part_value {
                NodeValue::Paragraph => {
                    out.push_str(&format!("<p style=\"{}\">", escape_html(indent.trim())));
                    if first {
                        push_escaped(out, &marker);
                    }
                    inline(part, ctx, out);
                    out.push_str("</p>");
                }
                NodeValue::List(_) => {
                    // Nested lists leave the item (WeChat does not keep
                    // nesting reliably) and are indented one step more.
                    block(part, ctx, out, depth + 1);
                }
                _ => {
                    if first {
                        out.push_str(&format!("<p style=\"{}\">{}</p>", escape_html(indent.trim()), escape_html(&marker)));
                    }
                    block(part, ctx, out, depth + 1);
                }
            }
            first = false;
        }
    }
    out.push_str("</section>");
}

/// A code block as a section of inline-styled lines, spaces kept as `&nbsp;`.
fn code_block(literal: &str, ctx: &mut Ctx<'_>, out: &mut String) {
    ctx.push_open(out, "section", "code_block");
    out.push_str("<code>");
    let literal = literal.strip_suffix('\n').unwrap_or(literal);
    for line in literal.split('\n') {
        ctx.push_open(out, "span", "code_line");
        if line.is_empty() {
            out.push_str("&nbsp;");
        } else {
            out.push_str(&spaces_to_nbsp(line));
        }
        out.push_str("</span>");
    }
    out.push_str("</code></section>");
}

/// A table wrapped in a section that scrolls sideways, each cell aligned as its column.
fn table_block<'a>(child: &'a AstNode<'a>, alignments: &[TableAlignment], ctx: &mut Ctx<'_>, out: &mut String) {
    ctx.push_open(out, "section", "table_wrap");
    ctx.push_open(out, "table", "table");
    let mut in_head = false;
    for (row_idx, row) in child.children().enumerate() {
        let is_header = matches!(row.data.borrow().value, NodeValue::TableRow(true));
        if is_header && !in_head {
            out.push_str("<thead>");
            in_head = true;
        }
        if !is_header && (row_idx == 0 || in_head) {
            if in_head {
                out.push_str("</thead>");
                in_head = false;
            }
            out.push_str("<tbody>");
        }
        out.push_str("<tr>");
        for (cell_idx, cell) in row.children().enumerate() {
            let (tag, element) = if is_header { ("th", "th") } else { ("td", "td") };
            let align = match alignments.get(cell_idx) {
                Some(TableAlignment::Left) => " text-align: left;",
                Some(TableAlignment::Center) => " text-align: center;",
                Some(TableAlignment::Right) => " text-align: right;",
                _ => "",
            };
            out.push_str(&format!("<{tag} style=\"{}{}\">", ctx.style(element), align));
            inline(cell, ctx, out);
            out.push_str(&format!("</{tag}>"));
        }
        out.push_str("</tr>");
    }
    if in_head {
        out.push_str("</thead>");
    } else if child.children().count() > 0 {
        out.push_str("</tbody>");
    }
    out.push_str("</table></section>");
}

pub fn compile<'a>(profile: &DraftProfile, input: CompileInput<'_>, parsed: &Parsed<'a>) -> (Draft, Vec<Finding>) {
    let root = parsed.root;
    let allowed_hosts = profile
        .settings
        .get("allowed_link_hosts")
        .and_then(|v| v.as_array())
        .map(|hosts| hosts.iter().filter_map(|h| h.as_str()).map(str::to_owned).collect())
        .unwrap_or_else(|| vec!["mp.weixin.qq.com".to_owned()]);
    let mut ctx = Ctx {
        profile,
        allowed_hosts,
        references: Vec::new(),
        footnotes: BTreeMap::new(),
        footnote_numbers: BTreeMap::new(),
        n_images: 0,
        n_links: 0,
        n_external: 0,
        n_raw_html: 0,
        column_px: profile.setting_u32("column_width_px").unwrap_or(677),
    };
    collect_footnotes(root, &mut ctx.footnotes);
    let mut body = String::new();
    blocks(root, &mut ctx, &mut body, 0);
    let mut html = ctx.open("section", "root");
    html.push_str(&body);
    if !ctx.references.is_empty() {
        ctx.push_open(&mut html, "section", "references");
        ctx.push_open(&mut html, "p", "references_heading");
        html.push_str(&escape_html(profile.setting_str("references_heading").unwrap_or("References")));
        html.push_str("</p>");
        for (idx, (label, url)) in ctx.references.iter().enumerate() {
            ctx.push_open(&mut html, "p", "reference_item");
            let entry = match (label.trim().is_empty() || label == url, url.is_empty()) {
                (_, true) => format!("[{}] {label}", idx + 1),
                (true, false) => format!("[{}] {url}", idx + 1),
                (false, false) => format!("[{}] {label}: {url}", idx + 1),
            };
            html.push_str(&escape_html(&entry));
            html.push_str("</p>");
        }
        html.push_str("</section>");
    }
    html.push_str("</section>");

    let plain = &parsed.plain;
    let digest_chars = profile.setting_u32("digest_default_chars").unwrap_or(54) as usize;
    // The digest is the opening text as a reader sees it: without URLs.
    let without_urls = |block: &str| -> String {
        let mut text = String::new();
        let mut last = 0;
        for (start, end) in super::measure::url_ranges(block) {
            text.push_str(&block[last..start]);
            last = end;
        }
        text.push_str(&block[last..]);
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    };
    let digest: String = plain
        .blocks
        .iter()
        .map(|b| without_urls(b))
        .find(|b| !b.trim().is_empty() && b.trim() != input.title.trim())
        .map(|b| b.chars().take(digest_chars).collect())
        .unwrap_or_default();

    let mut findings = limit_findings(profile, LimitField::Title, |unit| super::length_in(unit, input.title), "title");
    findings.extend(limit_findings(profile, LimitField::Digest, |unit| super::length_in(unit, &digest), "digest"));
    findings.extend(limit_findings(profile, LimitField::Body, |unit| parsed.body_length(unit), "body"));
    if ctx.n_external > 0 {
        findings.push(
            Finding::new(
                "link_policy",
                Severity::Info,
                Some(profile.platform),
                format!("{} external link(s) became numbered references at the end: WeChat only keeps mp.weixin.qq.com links clickable.", ctx.n_external),
            )
            .worded("link_policy", &[("n", &ctx.n_external.to_string())])
            .suggest_worded("link_policy", "Keep the link text meaningful without the link; readers see the URL in the reference list."),
        );
    }
    if ctx.n_raw_html > 0 {
        findings.push(
            Finding::new("format.raw_html", Severity::Warn, Some(profile.platform), format!("{} piece(s) of raw HTML were left out: WeChat strips most HTML.", ctx.n_raw_html))
                .worded("format.raw_html.wechat", &[("n", &ctx.n_raw_html.to_string())])
                .suggest_worded("format.raw_html", "Use Markdown formatting instead of HTML."),
        );
    }
    if ctx.n_images > 0 {
        findings.push(
            Finding::new(
                "wechat.images",
                Severity::Info,
                Some(profile.platform),
                format!("{} image(s): WeChat needs them uploaded to its own image host (external image URLs are filtered).", ctx.n_images),
            )
            .worded("wechat.images", &[("n", &ctx.n_images.to_string())])
            .suggest_worded("wechat.images", "Paste the article into the mp editor, which uploads images, or upload them before using the draft API."),
        );
    }
    findings.extend(format_findings(&html, profile));
    let draft = Draft::new(profile, input.title, DraftContent::Html { html, digest }, ctx.n_images, ctx.n_links);
    (draft, findings)
}

/// Every tag and attribute of `html`, as the checks and tests see them.
pub fn tags_and_attributes(html: &str) -> Vec<(String, Vec<String>)> {
    tags(html).map(|(name, attributes)| (name.to_owned(), attributes.map(str::to_owned).collect())).collect()
}

/// [`tags_and_attributes`] borrowed from `html`: each opening tag's name and its
/// attribute names, without copying them.
fn tags(html: &str) -> impl Iterator<Item = (&str, impl Iterator<Item = &str>)> {
    let mut rest = html;
    std::iter::from_fn(move || loop {
        let start = rest.find('<')?;
        rest = &rest[start + 1..];
        let end = rest.find('>')?;
        let inside = &rest[..end];
        rest = &rest[end + 1..];
        if inside.starts_with('/') {
            continue;
        }
        // ASCII letters and digits are one byte each, and no byte of a longer
        // character is one: the name's byte length is its character count.
        let name_len = inside.bytes().take_while(u8::is_ascii_alphanumeric).count();
        let mut attrs = &inside[name_len..];
        let attributes = std::iter::from_fn(move || {
            let eq = attrs.find("=\"")?;
            let attribute = attrs[..eq].trim();
            let after = &attrs[eq + 2..];
            let close = after.find('"').unwrap_or(after.len());
            attrs = &after[(close + 1).min(after.len())..];
            Some(attribute)
        });
        return Some((&inside[..name_len], attributes));
    })
}

/// Format validity: only allowed tags and attributes, no CSS variables.
pub(super) fn format_findings(html: &str, profile: &DraftProfile) -> Vec<Finding> {
    let mut findings = Vec::new();
    for (tag, attributes) in tags(html) {
        match ALLOWED.iter().find(|(name, _)| *name == tag) {
            None => findings.push(
                Finding::new("format.tag", Severity::Block, Some(profile.platform), format!("The output has a <{tag}> tag, which WeChat does not keep."))
                    .worded("format.tag", &[("tag", tag)]),
            ),
            Some((_, allowed)) => {
                for attribute in attributes.filter(|a| !allowed.contains(a)) {
                    findings.push(
                        Finding::new("format.attribute", Severity::Block, Some(profile.platform), format!("<{tag}> has a `{attribute}` attribute, which WeChat strips."))
                            .worded("format.attribute", &[("tag", tag), ("attribute", attribute)]),
                    );
                }
            }
        }
    }
    if html.contains("var(--") {
        findings.push(
            Finding::new("format.css_variable", Severity::Block, Some(profile.platform), "The output uses CSS variables, which WeChat strips.").worded("format.css_variable", &[]),
        );
    }
    findings
}
