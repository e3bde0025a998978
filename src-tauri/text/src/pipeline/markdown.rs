//! Markdown parsing shared by the compilers: one comrak configuration (CommonMark +
//! GFM + footnotes + math + CJK-friendly emphasis), inline text extraction, and source
//! positions as UTF-16 offsets.

use comrak::nodes::{AstNode, NodeValue};
use comrak::{Arena, Options};

/// The one parser configuration every compiler and check uses.
pub fn options() -> Options<'static> {
    let mut options = Options::default();
    options.extension.strikethrough = true;
    options.extension.table = true;
    options.extension.autolink = true;
    options.extension.tasklist = true;
    options.extension.footnotes = true;
    options.extension.math_dollars = true;
    options.extension.cjk_friendly_emphasis = true;
    options
}

pub fn parse<'a>(arena: &'a Arena<'a>, source: &str) -> &'a AstNode<'a> {
    comrak::parse_document(arena, source, &options())
}

/// The text of a node's inline content, without markup (links keep their text, images
/// their alt text, code its literal).
pub fn inline_text<'a>(node: &'a AstNode<'a>) -> String {
    let mut out = String::new();
    collect_text(node, &mut out);
    out
}

fn collect_text<'a>(node: &'a AstNode<'a>, out: &mut String) {
    for child in node.children() {
        let data = child.data.borrow();
        let value = &data.value;
        match value {
            NodeValue::Text(text) => out.push_str(text),
            NodeValue::Code(code) => out.push_str(&code.literal),
            NodeValue::Math(math) => out.push_str(&math.literal),
            NodeValue::SoftBreak => out.push(' '),
            NodeValue::LineBreak => out.push('\n'),
            NodeValue::HtmlInline(_) | NodeValue::FootnoteReference(_) => {}
            _ => collect_text(child, out),
        }
    }
}

/// A byte offset as UTF-16 units (what editors in a web view count).
pub fn utf16_offset(source: &str, byte: usize) -> u32 {
    let mut byte = byte.min(source.len());
    while !source.is_char_boundary(byte) {
        byte -= 1;
    }
    u32::try_from(source[..byte].encode_utf16().count()).unwrap_or(u32::MAX)
}

pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    push_escaped(&mut out, text);
    out
}

/// [`escape_html`] of `text`, borrowed when there is nothing to escape.
pub fn escaped(text: &str) -> std::borrow::Cow<'_, str> {
    if text.bytes().any(|b| matches!(b, b'&' | b'<' | b'>' | b'"' | b'\'')) {
        std::borrow::Cow::Owned(escape_html(text))
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// Appends [`escape_html`] of `text` to `out`.
pub fn push_escaped(out: &mut String, text: &str) {
    let mut copied = 0;
    // The five are ASCII, so never a byte inside a multi-byte character: copy the runs
    // between them whole.
    for (at, byte) in text.bytes().enumerate() {
        let entity = match byte {
            b'&' => "&amp;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'"' => "&quot;",
            b'\'' => "&#39;",
            _ => continue,
        };
        out.push_str(&text[copied..at]);
        out.push_str(entity);
        copied = at + 1;
    }
    out.push_str(&text[copied..]);
}

/// The host of an http(s) URL, lower-cased.
pub fn url_host(url: &str) -> Option<String> {
    let rest = url.strip_prefix("https://").or_else(|| url.strip_prefix("http://"))?;
    let host = rest.split(['/', '?', '#']).next()?.rsplit('@').next()?;
    Some(host.split(':').next()?.to_lowercase())
}

/// Footnote definitions (label -> text), collected before rendering so a reference can
/// be numbered where it first appears.
pub fn collect_footnotes<'a>(node: &'a AstNode<'a>, out: &mut std::collections::BTreeMap<String, String>) {
    for child in node.children() {
        let data = child.data.borrow();
        let value = &data.value;
        match value {
            NodeValue::FootnoteDefinition(definition) => {
                let text: Vec<String> = child.children().map(|c| inline_text(c).trim().to_owned()).filter(|t| !t.is_empty()).collect();
                out.insert(definition.name.clone(), text.join(" "));
            }
            _ => collect_footnotes(child, out),
        }
    }
}
