//! An article by section, for requests whose window cannot hold it whole: the
//! Markdown source split at its ATX headings (outside code fences), each section
//! numbered from 1 as the model sees it in the outline and asks for it with
//! `read_section`. Pure.

use std::ops::Range;

/// One section of a source: its heading line (empty for the text before the first
/// heading) and its byte range, heading included.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// 1-based, as the outline and `read_section` number it.
    pub number: usize,
    /// The heading's text without its `#`s; empty for the opening before any heading.
    pub heading: String,
    pub range: Range<usize>,
}

/// The heading text of an ATX heading line (`## 采摘`), or `None`.
fn heading(line: &str) -> Option<&str> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let hashes = rest.len() - rest.trim_start_matches('#').len();
    if !(1..=6).contains(&hashes) {
        return None;
    }
    let after = &rest[hashes..];
    if !(after.is_empty() || after.starts_with([' ', '\t'])) {
        return None;
    }
    Some(after.trim().trim_end_matches('#').trim())
}

/// The sections of `source`, in order; an opening without a heading is section 1
/// when it holds more than whitespace. A source without headings is one section.
pub fn split(source: &str) -> Vec<Section> {
    let mut starts: Vec<(usize, String)> = Vec::new();
    let mut fence: Option<&str> = None;
    let mut offset = 0;
    for line in source.split_inclusive('\n') {
        let text = line.trim_end_matches(['\n', '\r']);
        let trimmed = text.trim_start();
        match fence {
            Some(marker) if trimmed.starts_with(marker) => fence = None,
            Some(_) => {}
            None if trimmed.starts_with("```") => fence = Some("```"),
            None if trimmed.starts_with("~~~") => fence = Some("~~~"),
            None => {
                if let Some(h) = heading(text) {
                    starts.push((offset, h.to_owned()));
                }
            }
        }
        offset += line.len();
    }
    let mut out = Vec::new();
    let first = starts.first().map_or(source.len(), |(at, _)| *at);
    if !source[..first].trim().is_empty() || starts.is_empty() {
        out.push((0..first, String::new()));
    }
    for (i, (at, h)) in starts.iter().enumerate() {
        let end = starts.get(i + 1).map_or(source.len(), |(next, _)| *next);
        out.push((*at..end, h.clone()));
    }
    out.into_iter().enumerate().map(|(i, (range, heading))| Section { number: i + 1, heading, range }).collect()
}

/// The sections that hold any of `range` (bytes).
pub fn holding(sections: &[Section], range: &Range<usize>) -> Vec<usize> {
    sections.iter().filter(|s| s.range.start < range.end.max(range.start + 1) && range.start < s.range.end).map(|s| s.number).collect()
}

/// The sections whose heading the task names (a heading of two characters or more
/// quoted anywhere in it).
pub fn named(sections: &[Section], task: &str) -> Vec<usize> {
    sections.iter().filter(|s| s.heading.chars().count() >= 2 && task.contains(s.heading.as_str())).map(|s| s.number).collect()
}

/// The body of a section without its heading line, whitespace collapsed.
fn lead(source: &str, section: &Section, chars: usize) -> String {
    let text = &source[section.range.clone()];
    let body = if section.heading.is_empty() { text } else { text.split_once('\n').map_or("", |(_, rest)| rest) };
    let flat: String = body.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(chars) {
        Some((cut, _)) => format!("{}…", &flat[..cut]),
        None => flat,
    }
}

/// The characters of a section's text.
pub fn chars(source: &str, section: &Section) -> usize {
    source[section.range.clone()].chars().count()
}

/// The number and name of a section, for the outline and tool results.
pub fn title(section: &Section) -> String {
    if section.heading.is_empty() {
        format!("§{} (the opening, before the first heading)", section.number)
    } else {
        format!("§{} {}", section.number, section.heading)
    }
}

/// How many characters of each section's lead the outline quotes.
pub const LEAD_CHARS: usize = 24;

/// One outline line per section not in `full`: its number, heading, size and lead.
pub fn outline(source: &str, sections: &[Section], full: &[usize]) -> String {
    let mut out = String::new();
    for section in sections {
        if full.contains(&section.number) {
            out.push_str(&format!("{} — given in full below\n", title(section)));
        } else {
            out.push_str(&format!("{} — {} characters: {}\n", title(section), chars(source, section), lead(source, section, LEAD_CHARS)));
        }
    }
    out
}

/// The paragraphs around `range` (bytes) of `source`: the ones it touches and one on
/// either side, as a byte range (paragraphs are separated by blank lines).
pub fn around(source: &str, range: &Range<usize>) -> Range<usize> {
    // Paragraph boundaries: the starts of text after a blank line.
    let mut bounds = vec![0];
    let mut offset = 0;
    let mut blank_before = false;
    for line in source.split_inclusive('\n') {
        let blank = line.trim().is_empty();
        if !blank && blank_before {
            bounds.push(offset);
        }
        blank_before = blank;
        offset += line.len();
    }
    bounds.push(source.len());
    let first = bounds.iter().rposition(|b| *b <= range.start).unwrap_or(0);
    let last = bounds.iter().position(|b| *b >= range.end.max(range.start + 1)).unwrap_or(bounds.len() - 1);
    let start = bounds[first.saturating_sub(1)];
    let end = bounds[(last + 1).min(bounds.len() - 1)];
    start..end
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const ARTICLE: &str = "开头一段。\n\n# 春茶\n\n采茶。\n\n```\n# not a heading\n```\n\n## 制茶 ##\n\n杀青，揉捻。\n\n#not-a-heading\n";

    #[test]
    fn a_source_splits_at_its_headings_outside_code_fences() {
        let sections = split(ARTICLE);
        let named: Vec<(usize, &str)> = sections.iter().map(|s| (s.number, s.heading.as_str())).collect();
        assert_eq!(named, [(1, ""), (2, "春茶"), (3, "制茶")]);
        assert_eq!(sections.iter().map(|s| &ARTICLE[s.range.clone()]).collect::<String>(), ARTICLE, "the sections cover the source");
        assert!(ARTICLE[sections[1].range.clone()].contains("# not a heading"));
        assert_eq!(split("no headings at all").len(), 1);
        assert_eq!(split("# 只有标题\n正文").len(), 1, "no empty opening");
    }

    #[test]
    fn the_outline_names_every_section_and_the_focus_is_found() {
        let sections = split(ARTICLE);
        let outline = outline(ARTICLE, &sections, &[3]);
        assert_eq!(
            outline,
            "§1 (the opening, before the first heading) — 7 characters: 开头一段。\n§2 春茶 — 36 characters: 采茶。 ``` # not a heading …\n§3 制茶 — given in full below\n"
        );
        assert_eq!(named(&sections, "请改写“制茶”这一节"), [3]);
        let at = ARTICLE.find("采茶").unwrap();
        assert_eq!(holding(&sections, &(at..at + 3)), [2]);
        assert_eq!(holding(&sections, &(0..ARTICLE.len())), [1, 2, 3]);
    }

    #[test]
    fn around_a_selection_are_its_paragraphs_and_one_either_side() {
        let source = "一。\n\n二。\n\n三。\n\n四。\n\n五。\n";
        let at = source.find("三").unwrap();
        assert_eq!(&source[around(source, &(at..at + 6))], "二。\n\n三。\n\n四。\n\n");
        assert_eq!(&source[around(source, &(0..3))], "一。\n\n二。\n\n");
        let five = source.find("五").unwrap();
        assert_eq!(&source[around(source, &(five..five + 3))], "四。\n\n五。\n");
    }
}
