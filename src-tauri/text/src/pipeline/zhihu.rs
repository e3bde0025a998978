//! Zhihu: Markdown in the subset Zhihu's importer accepts. Math becomes Zhihu equation
//! images, links and footnotes become a numbered reference list, table cells hold plain
//! text. Emitted by hand from the tree so every construct is one Zhihu keeps.

use comrak::nodes::{AstNode, ListType, NodeValue, TableAlignment};

use super::markdown::{collect_footnotes, inline_text};
use super::{limit_findings, CompileInput, Draft, DraftContent, Finding, Parsed};
use crate::profiles::{DraftProfile, LimitField, Severity};

struct Ctx {
    equation_url: String,
    references: Vec<(String, String)>,
    footnotes: std::collections::BTreeMap<String, String>,
    footnote_numbers: std::collections::BTreeMap<String, usize>,
    n_images: u32,
    n_links: u32,
    n_local_images: u32,
    n_raw_html: u32,
}

/// Escapes the characters that would change meaning in Markdown text.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    push_escape(&mut out, text);
    out
}

/// Appends [`escape`] of `text` to `out`.
fn push_escape(out: &mut String, text: &str) {
    let mut copied = 0;
    // The marks are ASCII, never a byte inside a multi-byte character.
    for (at, byte) in text.bytes().enumerate() {
        if matches!(byte, b'\\' | b'*' | b'_' | b'`' | b'[' | b']' | b'<' | b'>' | b'|') {
            out.push_str(&text[copied..at]);
            out.push('\\');
            copied = at;
        }
    }
    out.push_str(&text[copied..]);
}

fn percent_encode(text: &str) -> String {
    let mut out = String::new();
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

fn equation(ctx: &Ctx, tex: &str) -> String {
    format!("![{}]({}{})", escape(tex.trim()), ctx.equation_url, percent_encode(tex.trim()))
}

fn inline<'a>(node: &'a AstNode<'a>, ctx: &mut Ctx, out: &mut String) {
    for child in node.children() {
        let data = child.data.borrow();
        let value = &data.value;
        match value {
            NodeValue::Text(text) => push_escape(out, text),
            NodeValue::SoftBreak => out.push('\n'),
            NodeValue::LineBreak => out.push_str("  \n"),
            NodeValue::Code(code) => {
                let fence = if code.literal.contains('`') { "``" } else { "`" };
                out.push_str(&format!("{fence}{}{fence}", code.literal));
            }
            NodeValue::Math(math) => out.push_str(&equation(ctx, &math.literal)),
            NodeValue::Emph => {
                out.push('*');
                inline(child, ctx, out);
                out.push('*');
            }
            NodeValue::Strong => {
                out.push_str("**");
                inline(child, ctx, out);
                out.push_str("**");
            }
            NodeValue::Strikethrough => {
                out.push_str("~~");
                inline(child, ctx, out);
                out.push_str("~~");
            }
            NodeValue::Link(link) => {
                ctx.n_links += 1;
                let label = inline_text(child);
                inline(child, ctx, out);
                let n = match ctx.references.iter().position(|(_, u)| *u == link.url) {
                    Some(idx) => idx + 1,
                    None => {
                        ctx.references.push((label, link.url.clone()));
                        ctx.references.len()
                    }
                };
                out.push_str(&format!("\\[{n}\\]"));
            }
            NodeValue::Image(link) => {
                ctx.n_images += 1;
                if !link.url.starts_with("http://") && !link.url.starts_with("https://") {
                    ctx.n_local_images += 1;
                }
                out.push_str(&format!("![{}]({})", escape(&inline_text(child)), link.url));
            }
            NodeValue::FootnoteReference(reference) => {
                let n = match ctx.footnote_numbers.get(&reference.name) {
                    Some(n) => *n,
                    None => {
                        let text = ctx.footnotes.get(&reference.name).cloned().unwrap_or_default();
                        ctx.references.push((text, String::new()));
                        ctx.footnote_numbers.insert(reference.name.clone(), ctx.references.len());
                        ctx.references.len()
                    }
                };
                out.push_str(&format!("\\[{n}\\]"));
            }
            NodeValue::HtmlInline(_) => ctx.n_raw_html += 1,
            _ => inline(child, ctx, out),
        }
    }
}

/// Prefixes every line of `text`: `first` on the first line, `rest` on the others.
fn prefixed(text: &str, first: &str, rest: &str) -> String {
    let mut out = String::new();
    for (idx, line) in text.lines().enumerate() {
        let prefix = if idx == 0 { first } else { rest };
        if line.is_empty() {
            out.push_str(prefix.trim_end());
        } else {
            out.push_str(prefix);
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

fn blocks<'a>(node: &'a AstNode<'a>, ctx: &mut Ctx) -> String {
    let mut parts: Vec<String> = Vec::new();
    for child in node.children() {
        if let Some(part) = block(child, ctx) {
            parts.push(part);
        }
    }
    parts.join("\n")
}

fn block<'a>(node: &'a AstNode<'a>, ctx: &mut Ctx) -> Option<String> {
    let data = node.data.borrow();
    let value = &data.value;
    let text = match value {
        NodeValue::Paragraph => {
            let mut out = String::new();
            inline(node, ctx, &mut out);
            out.push('\n');
            out
        }
        NodeValue::Heading(heading) => {
            let mut out = String::new();
            inline(node, ctx, &mut out);
            format!("{} {}\n", "#".repeat(heading.level.clamp(1, 6) as usize), out.replace('\n', " "))
        }
        NodeValue::BlockQuote | NodeValue::MultilineBlockQuote(_) | NodeValue::Alert(_) => prefixed(&blocks(node, ctx), "> ", "> "),
        NodeValue::List(list) => {
            let mut out = String::new();
            for (number, item) in (list.start.max(1)..).zip(node.children()) {
                let task = match &item.data.borrow().value {
                    NodeValue::TaskItem(task) => Some(if task.symbol.is_some() { "☑ " } else { "☐ " }),
                    _ => None,
                };
                let marker = match list.list_type {
                    ListType::Bullet => "- ".to_owned(),
                    ListType::Ordered => format!("{number}. "),
                };
                let mut body = blocks(item, ctx);
                if let Some(task) = task {
                    body = format!("{task}{body}");
                }
                if list.tight {
                    body = body.replace("\n\n", "\n");
                }
                let indent = " ".repeat(marker.chars().count());
                out.push_str(&prefixed(&body, &marker, &indent));
            }
            out
        }
        NodeValue::CodeBlock(code) => {
            let fence = if code.literal.contains("```") { "~~~~" } else { "```" };
            let lang = code.info.split_whitespace().next().unwrap_or("");
            format!("{fence}{lang}\n{}{fence}\n", code.literal)
        }
        NodeValue::Math(math) => format!("{}\n", equation(ctx, &math.literal)),
        NodeValue::Table(table) => {
            let mut out = String::new();
            for (row_idx, row) in node.children().enumerate() {
                let cells: Vec<String> = row.children().map(|cell| escape(inline_text(cell).trim())).collect();
                out.push_str(&format!("| {} |\n", cells.join(" | ")));
                if row_idx == 0 {
                    let aligns: Vec<&str> = table
                        .alignments
                        .iter()
                        .map(|a| match a {
                            TableAlignment::Left => ":---",
                            TableAlignment::Center => ":---:",
                            TableAlignment::Right => "---:",
                            TableAlignment::None => "---",
                        })
                        .collect();
                    out.push_str(&format!("| {} |\n", aligns.join(" | ")));
                }
            }
            out
        }
        NodeValue::ThematicBreak => "---\n".to_owned(),
        NodeValue::HtmlBlock(_) => {
            ctx.n_raw_html += 1;
            return None;
        }
        NodeValue::FootnoteDefinition(_) | NodeValue::FrontMatter(_) => return None,
        _ => blocks(node, ctx),
    };
    Some(text)
}

pub fn compile<'a>(profile: &DraftProfile, input: CompileInput<'_>, parsed: &Parsed<'a>) -> (Draft, Vec<Finding>) {
    let root = parsed.root;
    let mut ctx = Ctx {
        equation_url: profile.setting_str("equation_url").unwrap_or("https://www.zhihu.com/equation?tex=").to_owned(),
        references: Vec::new(),
        footnotes: Default::default(),
        footnote_numbers: Default::default(),
        n_images: 0,
        n_links: 0,
        n_local_images: 0,
        n_raw_html: 0,
    };
    collect_footnotes(root, &mut ctx.footnotes);
    let mut markdown = blocks(root, &mut ctx);
    if !ctx.references.is_empty() {
        markdown.push_str(&format!("\n## {}\n\n", profile.setting_str("references_heading").unwrap_or("References")));
        for (idx, (label, url)) in ctx.references.iter().enumerate() {
            let entry = match (label.trim().is_empty() || label == url, url.is_empty()) {
                (_, true) => format!("{}. {}", idx + 1, escape(label)),
                (true, false) => format!("{}. <{url}>", idx + 1),
                (false, false) => format!("{}. {}: <{url}>", idx + 1, escape(label)),
            };
            markdown.push_str(&entry);
            markdown.push('\n');
        }
    }
    let mut findings = limit_findings(profile, LimitField::Title, |unit| super::length_in(unit, input.title), "title");
    findings.extend(limit_findings(profile, LimitField::Body, |unit| parsed.body_length(unit), "body"));
    if ctx.n_local_images > 0 {
        findings.push(
            Finding::new(
                "zhihu.images",
                Severity::Warn,
                Some(profile.platform),
                format!("{} image(s) are local files: Zhihu's importer needs images reachable on the web from mainland China.", ctx.n_local_images),
            )
            .worded("zhihu.images", &[("n", &ctx.n_local_images.to_string())])
            .suggest_worded("zhihu.images", "Upload the images in Zhihu's editor after importing, or host them where Zhihu can fetch them."),
        );
    }
    if ctx.n_raw_html > 0 {
        findings.push(
            Finding::new("format.raw_html", Severity::Warn, Some(profile.platform), format!("{} piece(s) of raw HTML were left out.", ctx.n_raw_html))
                .worded("format.raw_html", &[("n", &ctx.n_raw_html.to_string())])
                .suggest_worded("format.raw_html", "Use Markdown formatting instead of HTML."),
        );
    }
    let draft = Draft::new(profile, input.title, DraftContent::Markdown { markdown }, ctx.n_images, ctx.n_links);
    (draft, findings)
}
