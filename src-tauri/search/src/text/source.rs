//! What a source declares and opens with, pure: the tags and category of its front
//! matter and the first paragraph of its body as a summary.

/// Tags and category declared in a source's front matter (a leading block between
/// `---` lines, as Hugo, Hexo and Jekyll write it), and where the text after it starts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FrontMatter {
    pub tags: Vec<String>,
    pub category: Option<String>,
    /// Byte offset of the text after the front matter (0 without one).
    pub body_start: usize,
}

/// Reads `tags`, `keywords`, `category` and `categories` from a source's front
/// matter: `key: a, b`, `key: [a, "b"]` or a `- item` list under the key. Only these
/// keys and these shapes are read, so no YAML library is needed for them (and
/// nothing else in the block can fail the index); other keys are ignored.
pub fn front_matter(source: &str) -> FrontMatter {
    let mut lines = source.split_inclusive('\n');
    let Some(first) = lines.next() else { return FrontMatter::default() };
    if first.trim_end() != "---" {
        return FrontMatter::default();
    }
    let mut offset = first.len();
    let mut out = FrontMatter::default();
    let mut current_list: Option<&'static str> = None;
    let mut closed = false;
    for line in lines {
        offset += line.len();
        let trimmed = line.trim_end();
        if trimmed == "---" || trimmed == "..." {
            closed = true;
            break;
        }
        if let Some(item) = trimmed.trim_start().strip_prefix("- ") {
            if let Some(key) = current_list {
                add_front_matter_values(&mut out, key, &[item]);
            }
            continue;
        }
        current_list = None;
        let Some((key, value)) = trimmed.split_once(':') else { continue };
        let key = match key.trim().to_lowercase().as_str() {
            "tags" | "keywords" => "tags",
            "category" | "categories" => "category",
            _ => continue,
        };
        let value = value.trim();
        if value.is_empty() {
            current_list = Some(key);
            continue;
        }
        let value = value.strip_prefix('[').and_then(|v| v.strip_suffix(']')).unwrap_or(value);
        let items: Vec<&str> = value.split([',', '，', '、']).collect();
        add_front_matter_values(&mut out, key, &items);
    }
    if !closed {
        return FrontMatter::default();
    }
    out.body_start = offset;
    out
}

fn add_front_matter_values(out: &mut FrontMatter, key: &str, items: &[&str]) {
    for item in items {
        let value = item.trim().trim_matches(|c| c == '"' || c == '\'').trim().trim_start_matches('#').to_owned();
        if value.is_empty() {
            continue;
        }
        if key == "category" && out.category.is_none() {
            out.category = Some(value);
        } else if key == "category" || !out.tags.contains(&value) {
            // A second category is kept as a tag, so it is still found.
            if !out.tags.contains(&value) {
                out.tags.push(value);
            }
        }
    }
}

/// Longest summary, in characters.
pub const SUMMARY_CHARS: usize = 300;

/// The first paragraph of a Markdown body: the first block of text that is not a
/// heading, an image, a rule, HTML or code, with inline marks (`*`, `_`, `` ` ``,
/// link targets) taken out; at most [`SUMMARY_CHARS`] characters.
pub fn summary(body: &str) -> String {
    let mut in_fence = false;
    let mut paragraph: Vec<&str> = Vec::new();
    for line in body.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
            if !paragraph.is_empty() {
                break;
            }
            continue;
        }
        if in_fence {
            continue;
        }
        if trimmed.is_empty() {
            if !paragraph.is_empty() {
                break;
            }
            continue;
        }
        let skip = trimmed.starts_with('#') || trimmed.starts_with("![") || trimmed.starts_with('<') || trimmed.chars().all(|c| matches!(c, '-' | '*' | '_' | '=' | ' '));
        if skip {
            if !paragraph.is_empty() {
                break;
            }
            continue;
        }
        paragraph.push(trimmed.trim_start_matches(['>', ' ']));
    }
    let joined = paragraph.join(" ");
    strip_inline_marks(&joined).chars().take(SUMMARY_CHARS).collect()
}

/// `[text](url)` becomes `text`; `*`, `_` and `` ` `` go.
fn strip_inline_marks(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find("](").and_then(|close| after[close + 2..].find(')').map(|end| (close, close + 2 + end))) {
            Some((close, end)) => {
                out.push_str(&after[..close]);
                rest = &after[end + 1..];
            }
            None => {
                out.push('[');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out.chars().filter(|c| !matches!(c, '*' | '_' | '`')).collect()
}
