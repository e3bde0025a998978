//! Markdown to plain text, for the short-form platforms (X, Douyin, Xiaohongshu), and
//! sentence splitting that knows Chinese and English punctuation.

use comrak::nodes::{AstNode, ListType, NodeValue};
use comrak::Arena;

use super::markdown::{inline_text, parse};

/// What the plain text of a source holds besides its paragraphs.
#[derive(Debug, Default)]
pub struct PlainText {
    /// Block texts (paragraphs, headings, list items, ...), in order.
    pub blocks: Vec<String>,
    pub n_images: u32,
    pub n_links: u32,
}

/// The source as plain paragraphs: headings and paragraphs as lines, list items with
/// `•` or `1.`, links as `text url`, images dropped (counted), code kept as is.
pub fn plain_text(source: &str) -> PlainText {
    let arena = Arena::new();
    plain_text_of(parse(&arena, source))
}

/// [`plain_text`] of an already parsed tree.
pub fn plain_text_of<'a>(root: &'a AstNode<'a>) -> PlainText {
    let mut out = PlainText::default();
    blocks(root, &mut out);
    out
}

fn inline_with_urls<'a>(node: &'a AstNode<'a>, out: &mut PlainText) -> String {
    let mut text = String::new();
    push_inline_with_urls(node, out, &mut text);
    text
}

/// Appends [`inline_with_urls`] of `node` to `text` (nested inlines write into the
/// same buffer).
fn push_inline_with_urls<'a>(node: &'a AstNode<'a>, out: &mut PlainText, text: &mut String) {
    for child in node.children() {
        let data = child.data.borrow();
        let value = &data.value;
        match value {
            NodeValue::Text(t) => text.push_str(t),
            NodeValue::Code(code) => text.push_str(&code.literal),
            NodeValue::Math(math) => text.push_str(&math.literal),
            NodeValue::SoftBreak => text.push(' '),
            NodeValue::LineBreak => text.push('\n'),
            NodeValue::Link(link) => {
                out.n_links += 1;
                let label = inline_text(child);
                if label.trim().is_empty() {
                    text.push_str(&link.url);
                } else if label == link.url || link.url.ends_with(&label) {
                    // An autolink (`www.x.com`, `me@x.com`): the text is what readers see.
                    text.push_str(&label);
                } else {
                    text.push_str(&label);
                    text.push(' ');
                    text.push_str(&link.url);
                }
            }
            NodeValue::Image(_) => out.n_images += 1,
            NodeValue::HtmlInline(_) | NodeValue::FootnoteReference(_) => {}
            _ => push_inline_with_urls(child, out, text),
        }
    }
}

fn blocks<'a>(node: &'a AstNode<'a>, out: &mut PlainText) {
    for child in node.children() {
        let data = child.data.borrow();
        let value = &data.value;
        match value {
            NodeValue::Paragraph | NodeValue::Heading(_) | NodeValue::TableCell => {
                let text = inline_with_urls(child, out);
                let trimmed = text.trim();
                if trimmed.len() == text.len() {
                    // Nothing to trim (the usual case): keep the String as it is.
                    if !text.is_empty() {
                        out.blocks.push(text);
                    }
                } else if !trimmed.is_empty() {
                    out.blocks.push(trimmed.to_owned());
                }
            }
            NodeValue::List(list) => {
                for (number, item) in (list.start.max(1)..).zip(child.children()) {
                    let marker = match list.list_type {
                        ListType::Bullet => "• ".to_owned(),
                        ListType::Ordered => format!("{number}. "),
                    };
                    let mut inner = PlainText::default();
                    blocks(item, &mut inner);
                    out.n_images += inner.n_images;
                    out.n_links += inner.n_links;
                    let mut first = true;
                    for block in inner.blocks {
                        out.blocks.push(if first { format!("{marker}{block}") } else { block });
                        first = false;
                    }
                }
            }
            NodeValue::TableRow(_) => {
                let cells: Vec<String> = child.children().map(|cell| inline_with_urls(cell, out).trim().to_owned()).collect();
                out.blocks.push(cells.join(" | "));
            }
            NodeValue::CodeBlock(code) => out.blocks.push(code.literal.trim_end().to_owned()),
            NodeValue::Math(math) => out.blocks.push(math.literal.trim().to_owned()),
            NodeValue::HtmlBlock(_) | NodeValue::FootnoteDefinition(_) | NodeValue::ThematicBreak | NodeValue::FrontMatter(_) => {}
            _ => blocks(child, out),
        }
    }
}

/// True for characters that end a sentence.
fn is_terminator(c: char) -> bool {
    matches!(c, '。' | '！' | '？' | '；' | '…' | '!' | '?' | ';')
}

/// Splits a paragraph into sentences, keeping each terminator (and closing quotes or
/// brackets after it) with its sentence. `.` ends a sentence only before whitespace,
/// so URLs, decimals and abbreviations inside words stay whole.
///
/// The compilers read [`sentence_ranges`] (through `Parsed`), without copies.
#[cfg(test)]
pub fn sentences(paragraph: &str) -> Vec<String> {
    sentence_ranges(paragraph).map(|(start, end)| paragraph[start..end].to_owned()).collect()
}

/// The byte ranges of the sentences of `paragraph` (see `sentences`), each trimmed and
/// not empty.
pub fn sentence_ranges(paragraph: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    // URLs (in order, apart), where nothing ends a sentence.
    let urls = super::measure::url_ranges(paragraph);
    let bytes = paragraph.as_bytes();
    let mut next_url = 0;
    // The next byte to look at, and where the current sentence starts.
    let mut pos = 0;
    let mut start = 0;
    let mut done = false;
    std::iter::from_fn(move || loop {
        // Skip to the next byte that may start a character ending a sentence: the ASCII
        // ones, or the lead byte of `…` (E2), `。` (E3) and the full-width `！？；` (EF).
        // Those are never inside another character, so `at` is a character boundary.
        let Some(at) = bytes[pos..].iter().position(|b| matches!(b, b'!' | b'?' | b';' | b'.' | b'\n' | 0xE2 | 0xE3 | 0xEF)).map(|skip| pos + skip) else {
            if done {
                return None;
            }
            done = true;
            pos = bytes.len();
            return trimmed(paragraph, start, paragraph.len());
        };
        let c = paragraph[at..].chars().next()?;
        pos = at + c.len_utf8();
        while urls.get(next_url).is_some_and(|(_, end)| *end <= at) {
            next_url += 1;
        }
        let in_url = urls.get(next_url).is_some_and(|(url_start, _)| *url_start <= at);
        let ends = !in_url && (is_terminator(c) || (c == '.' && paragraph[pos..].chars().next().is_none_or(char::is_whitespace)) || c == '\n');
        if !ends {
            continue;
        }
        // Keep closing punctuation and repeated terminators with the sentence.
        let mut end = pos;
        for next in paragraph[pos..].chars() {
            if is_terminator(next) || matches!(next, '”' | '’' | '"' | '\'' | '）' | ')' | '」' | '』' | '】' | '.') {
                end += next.len_utf8();
            } else {
                break;
            }
        }
        pos = end;
        let sentence = trimmed(paragraph, start, end);
        start = end;
        if sentence.is_some() {
            return sentence;
        }
    })
}

/// `text[start..end]` without the white space around it, unless nothing is left.
fn trimmed(text: &str, start: usize, end: usize) -> Option<(usize, usize)> {
    let piece = &text[start..end];
    let trimmed = piece.trim_start();
    let from = start + (piece.len() - trimmed.len());
    let to = from + trimmed.trim_end().len();
    (to > from).then_some((from, to))
}

/// True for CJK ideographs, kana, Hangul and full-width punctuation: text that needs no
/// space between sentences or words.
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x2E80..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF | 0xFF00..=0xFFEF | 0x20000..=0x2FA1F)
}

/// True when [`join`] puts a space between `left` and `right`: neither is empty
/// and neither side is CJK (nor `left` ends in white space).
pub fn join_needs_space(left: &str, right: &str) -> bool {
    !left.is_empty() && !left.ends_with(|c: char| is_cjk(c) || c.is_whitespace()) && !right.starts_with(|c: char| is_cjk(c))
}

/// Joins two pieces of text with a space unless either side is CJK.
pub fn join(left: &str, right: &str) -> String {
    if left.is_empty() {
        return right.to_owned();
    }
    if join_needs_space(left, right) {
        format!("{left} {right}")
    } else {
        format!("{left}{right}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The splitter as first written, a character at a time: the reference the
    /// one-pass splitter must agree with.
    fn sentences_char_by_char(paragraph: &str) -> Vec<String> {
        // Character indices covered by URLs, where nothing ends a sentence.
        let mut in_url = Vec::new();
        let urls = crate::pipeline::measure::url_ranges(paragraph);
        for (byte, _) in paragraph.char_indices() {
            in_url.push(urls.iter().any(|(start, end)| *start <= byte && byte < *end));
        }
        let chars: Vec<char> = paragraph.chars().collect();
        let mut out = Vec::new();
        let mut current = String::new();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            current.push(c);
            let ends = !in_url[i] && (is_terminator(c) || (c == '.' && chars.get(i + 1).is_none_or(|n| n.is_whitespace())) || c == '\n');
            if ends {
                // Keep closing punctuation and repeated terminators with the sentence.
                while let Some(&next) = chars.get(i + 1) {
                    if is_terminator(next) || matches!(next, '”' | '’' | '"' | '\'' | '）' | ')' | '」' | '』' | '】' | '.') {
                        current.push(next);
                        i += 1;
                    } else {
                        break;
                    }
                }
                if !current.trim().is_empty() {
                    out.push(current.trim().to_owned());
                }
                current.clear();
            }
            i += 1;
        }
        if !current.trim().is_empty() {
            out.push(current.trim().to_owned());
        }
        out
    }

    proptest! {
        #[test]
        fn sentences_agree_with_the_char_by_char_splitter(text in r#"[a-z .。！？；…!?;”’)）」』】\n"'中文]{0,40}|[a-z .。]{0,10}https://a\.example/x\.y[a-z .。]{0,10}"#) {
            prop_assert_eq!(sentences(&text), sentences_char_by_char(&text));
        }
    }

    #[test]
    fn sentences_split_at_chinese_and_english_punctuation_but_not_inside_urls() {
        assert_eq!(
            sentences("今天天气很好。我们去散步吧！Visit https://a.example/x.y?z=1 today. Done"),
            vec!["今天天气很好。", "我们去散步吧！", "Visit https://a.example/x.y?z=1 today.", "Done"]
        );
        assert_eq!(sentences("他说：“好的。”然后走了。"), vec!["他说：“好的。”", "然后走了。"]);
        assert_eq!(sentences("Version 1.5 is out... really?!"), vec!["Version 1.5 is out...", "really?!"]);
    }

    #[test]
    fn plain_text_keeps_lists_links_and_counts_images() {
        let text = plain_text("# 标题\n\n一段[链接](https://example.com)。\n\n- 第一\n- 第二\n\n![图](a.png)\n");
        assert_eq!(text.blocks, vec!["标题", "一段链接 https://example.com。", "• 第一", "• 第二"]);
        assert_eq!((text.n_images, text.n_links), (1, 1));
    }
}
