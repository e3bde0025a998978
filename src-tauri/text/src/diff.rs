//! Text diffs a UI can render: line hunks with context, and inside each changed line
//! the word-level segments that changed. Words follow Unicode word boundaries (UAX #29),
//! under which every CJK ideograph is its own word, so Chinese text diffs by character
//! and English by word. Pure: no IO. Emphasis is for reading only (a change's identity
//! and what applies are its whole lines), so on a pair of lines too costly to compare
//! word by word it is coarser: see [`inline_segments`].

use serde::{Deserialize, Serialize};
use similar::{ChangeTag, DiffTag, DiffableStr, TextDiff};

/// Lines of unchanged context around each hunk.
pub const CONTEXT_LINES: usize = 3;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextDiffResult {
    pub hunks: Vec<Hunk>,
    pub n_insertions: u32,
    pub n_deletions: u32,
    /// True when both texts are equal (then `hunks` is empty).
    pub identical: bool,
}

/// A run of changed lines with context. Line numbers are 1-based.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Hunk {
    pub old_start: u32,
    pub old_len: u32,
    pub new_start: u32,
    pub new_len: u32,
    pub lines: Vec<DiffLine>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiffLine {
    pub kind: LineKind,
    pub old_line: Option<u32>,
    pub new_line: Option<u32>,
    /// The line's text without its line ending, split into segments; `emphasized`
    /// segments are the words that changed within a changed line.
    pub segments: Vec<Segment>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LineKind {
    Equal,
    Delete,
    Insert,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Segment {
    pub text: String,
    pub emphasized: bool,
}

fn line_text(value: &str) -> &str {
    value.strip_suffix('\n').map(|v| v.strip_suffix('\r').unwrap_or(v)).unwrap_or(value)
}

fn plain(text: &str) -> Vec<Segment> {
    vec![Segment { text: line_text(text).to_owned(), emphasized: false }]
}

/// Past this estimate of the word diff's work, `(N + M) · |N − M|` characters (a lower
/// bound of Myers' `(N + M) · D`), a replaced line pair is shown wholly replaced rather
/// than compared word by word: a 40,000-character HTML line against a short rewrite
/// would otherwise take seconds.
const INLINE_WORK_LIMIT: usize = 4_000_000;

/// The time a line pair's word diff may take before similar settles for a coarser
/// (still correct) result: lines of similar length but different content, whose cost
/// the bound above cannot see.
const INLINE_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(50);

/// Word-level segments for a replaced line pair: (old line's segments, new line's).
fn inline_segments(old: &str, new: &str) -> (Vec<Segment>, Vec<Segment>) {
    let (old, new) = (line_text(old), line_text(new));
    let (n, m) = (old.chars().count(), new.chars().count());
    if (n + m).saturating_mul(n.abs_diff(m)) > INLINE_WORK_LIMIT {
        return (emphasized_whole(old), emphasized_whole(new));
    }
    let diff = TextDiff::configure().timeout(INLINE_TIMEOUT).diff_unicode_words(old, new);
    let mut old_segments: Vec<Segment> = Vec::new();
    let mut new_segments: Vec<Segment> = Vec::new();
    fn push(segments: &mut Vec<Segment>, text: &str, emphasized: bool) {
        match segments.last_mut() {
            Some(last) if last.emphasized == emphasized => last.text.push_str(text),
            _ => segments.push(Segment { text: text.to_owned(), emphasized }),
        }
    }
    for change in diff.iter_all_changes() {
        let text = change.value();
        match change.tag() {
            ChangeTag::Equal => {
                push(&mut old_segments, text, false);
                push(&mut new_segments, text, false);
            }
            ChangeTag::Delete => push(&mut old_segments, text, true),
            ChangeTag::Insert => push(&mut new_segments, text, true),
        }
    }
    (old_segments, new_segments)
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Diffs `old` against `new` by line, with word-level emphasis inside replaced lines.
pub fn diff_texts(old: &str, new: &str) -> TextDiffResult {
    let diff = TextDiff::configure().diff_lines(old, new);
    let old_lines: Vec<&str> = diff.old_slices().to_vec();
    let new_lines: Vec<&str> = diff.new_slices().to_vec();
    let mut hunks = Vec::new();
    let (mut n_insertions, mut n_deletions) = (0u32, 0u32);
    for group in diff.grouped_ops(CONTEXT_LINES) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else { continue };
        let old_range = first.old_range().start..last.old_range().end;
        let new_range = first.new_range().start..last.new_range().end;
        let mut lines = Vec::new();
        for op in &group {
            let (old_r, new_r) = (op.old_range(), op.new_range());
            match op.tag() {
                DiffTag::Equal => {
                    for (offset, old_idx) in old_r.clone().enumerate() {
                        lines.push(DiffLine {
                            kind: LineKind::Equal,
                            old_line: Some(to_u32(old_idx + 1)),
                            new_line: Some(to_u32(new_r.start + offset + 1)),
                            segments: plain(old_lines[old_idx]),
                        });
                    }
                }
                DiffTag::Delete | DiffTag::Insert | DiffTag::Replace => {
                    n_deletions += to_u32(old_r.len());
                    n_insertions += to_u32(new_r.len());
                    // Pair replaced lines one to one for word-level emphasis; extra
                    // lines on either side are wholly deleted or inserted.
                    let n_pairs = old_r.len().min(new_r.len());
                    let mut deleted = Vec::new();
                    let mut inserted = Vec::new();
                    for pair_idx in 0..n_pairs {
                        let (old_segments, new_segments) = inline_segments(old_lines[old_r.start + pair_idx], new_lines[new_r.start + pair_idx]);
                        deleted.push((old_r.start + pair_idx, old_segments));
                        inserted.push((new_r.start + pair_idx, new_segments));
                    }
                    for (old_idx, line) in old_lines.iter().enumerate().take(old_r.end).skip(old_r.start + n_pairs) {
                        deleted.push((old_idx, emphasized_whole(line)));
                    }
                    for (new_idx, line) in new_lines.iter().enumerate().take(new_r.end).skip(new_r.start + n_pairs) {
                        inserted.push((new_idx, emphasized_whole(line)));
                    }
                    for (old_idx, segments) in deleted {
                        lines.push(DiffLine { kind: LineKind::Delete, old_line: Some(to_u32(old_idx + 1)), new_line: None, segments });
                    }
                    for (new_idx, segments) in inserted {
                        lines.push(DiffLine { kind: LineKind::Insert, old_line: None, new_line: Some(to_u32(new_idx + 1)), segments });
                    }
                }
            }
        }
        hunks.push(Hunk {
            old_start: to_u32(old_range.start + 1),
            old_len: to_u32(old_range.len()),
            new_start: to_u32(new_range.start + 1),
            new_len: to_u32(new_range.len()),
            lines,
        });
    }
    TextDiffResult { identical: hunks.is_empty(), hunks, n_insertions, n_deletions }
}

/// One run of changed lines, without context: the unit a person accepts or rejects.
/// Line indexes are 0-based; `old_text`/`new_text` are the exact lines with their
/// endings, so applying a change is a splice of whole lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub old_start: usize,
    pub old_len: usize,
    pub new_start: usize,
    pub new_len: usize,
    pub old_text: String,
    pub new_text: String,
    /// For display: up to [`CONTEXT_LINES`] unchanged lines around the change, and the
    /// changed lines with word-level emphasis (per character for Chinese).
    pub hunk: Hunk,
}

/// The lines of `text` as the line diff sees them: each with its ending.
pub fn split_lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// `old` → `new` as a list of changes without context, in order. Applying every
/// change to `old` (see [`apply_changes`]) gives `new`.
pub fn changes(old: &str, new: &str) -> Vec<Change> {
    // The lines as `TextDiff::diff_lines` splits them; the diff itself is run once, below.
    let old_lines: Vec<&str> = old.tokenize_lines();
    let new_lines: Vec<&str> = new.tokenize_lines();
    let ops = &ordered_line_ops(&old_lines, &new_lines);
    let mut out = Vec::new();
    let mut index = 0;
    // Where the previous change ended in the old text: context never reaches back into it.
    let mut previous_end = 0;
    while index < ops.len() {
        if ops[index].tag() == DiffTag::Equal {
            index += 1;
            continue;
        }
        let first = index;
        while index < ops.len() && ops[index].tag() != DiffTag::Equal {
            index += 1;
        }
        let old_range = ops[first].old_range().start..ops[index - 1].old_range().end;
        let new_range = ops[first].new_range().start..ops[index - 1].new_range().end;
        let mut lines = Vec::new();
        // Context is the equal lines around the change, and only those: the run between
        // two changes may be shorter than CONTEXT_LINES.
        let before = old_range.start.saturating_sub(CONTEXT_LINES).max(previous_end);
        let next_change = if index < ops.len() { ops[index].old_range().end } else { old_lines.len() };
        for (offset, old_idx) in (before..old_range.start).enumerate() {
            let new_idx = new_range.start - (old_range.start - before) + offset;
            lines.push(DiffLine { kind: LineKind::Equal, old_line: Some(to_u32(old_idx + 1)), new_line: Some(to_u32(new_idx + 1)), segments: plain(old_lines[old_idx]) });
        }
        let n_pairs = old_range.len().min(new_range.len());
        let mut deleted = Vec::new();
        let mut inserted = Vec::new();
        for pair in 0..n_pairs {
            let (o, n) = inline_segments(old_lines[old_range.start + pair], new_lines[new_range.start + pair]);
            deleted.push(DiffLine { kind: LineKind::Delete, old_line: Some(to_u32(old_range.start + pair + 1)), new_line: None, segments: o });
            inserted.push(DiffLine { kind: LineKind::Insert, old_line: None, new_line: Some(to_u32(new_range.start + pair + 1)), segments: n });
        }
        let unpaired_old = old_range.start + n_pairs..old_range.end;
        for (old_idx, line) in unpaired_old.clone().zip(&old_lines[unpaired_old]) {
            deleted.push(DiffLine { kind: LineKind::Delete, old_line: Some(to_u32(old_idx + 1)), new_line: None, segments: emphasized_whole(line) });
        }
        let unpaired_new = new_range.start + n_pairs..new_range.end;
        for (new_idx, line) in unpaired_new.clone().zip(&new_lines[unpaired_new]) {
            inserted.push(DiffLine { kind: LineKind::Insert, old_line: None, new_line: Some(to_u32(new_idx + 1)), segments: emphasized_whole(line) });
        }
        lines.extend(deleted);
        lines.extend(inserted);
        let after_end = (old_range.end + CONTEXT_LINES).min(next_change);
        previous_end = old_range.end;
        for (offset, old_idx) in (old_range.end..after_end).enumerate() {
            lines.push(DiffLine {
                kind: LineKind::Equal,
                old_line: Some(to_u32(old_idx + 1)),
                new_line: Some(to_u32(new_range.end + offset + 1)),
                segments: plain(old_lines[old_idx]),
            });
        }
        let context_before = old_range.start - before;
        let context_after = after_end - old_range.end;
        let hunk = Hunk {
            old_start: to_u32(before + 1),
            old_len: to_u32(old_range.len() + context_before + context_after),
            new_start: to_u32(new_range.start - context_before + 1),
            new_len: to_u32(new_range.len() + context_before + context_after),
            lines,
        };
        out.push(Change {
            old_start: old_range.start,
            old_len: old_range.len(),
            new_start: new_range.start,
            new_len: new_range.len(),
            old_text: old_lines[old_range.clone()].concat(),
            new_text: new_lines[new_range.clone()].concat(),
            hunk,
        });
    }
    out
}

/// The line operations of `old` → `new` in text order. `TextDiff` compacts its
/// operations, and similar 2.7's compaction can give an insertion an old position
/// before the equal lines it follows (`"天\n\n"` → `"\n\n春"` inserts at old line 1, not 2),
/// which applying would put in the wrong place; so the changes are computed from the
/// algorithm's own, uncompacted operations.
fn ordered_line_ops(old_lines: &[&str], new_lines: &[&str]) -> Vec<similar::DiffOp> {
    use similar::algorithms::{Capture, IdentifyDistinct, Replace};
    let ids = IdentifyDistinct::<u32>::new(old_lines, 0..old_lines.len(), new_lines, 0..new_lines.len());
    let mut hook = Replace::new(Capture::new());
    similar::algorithms::diff(similar::Algorithm::Myers, &mut hook, ids.old_lookup(), ids.old_range(), ids.new_lookup(), ids.new_range()).unwrap_or_else(|never| match never {});
    hook.into_inner().into_ops()
}

/// A change as applying needs it: where (0-based line index and count in the text it
/// applies to) and the exact old and new lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Splice<'a> {
    pub old_start: usize,
    pub old_len: usize,
    pub old_text: &'a str,
    pub new_text: &'a str,
}

/// Applies non-overlapping splices to `text`. Returns `None` when a splice does not
/// match the text it claims to replace, or splices overlap: nothing is guessed.
pub fn apply_changes(text: &str, splices: &[Splice<'_>]) -> Option<String> {
    let lines = split_lines(text);
    let mut sorted: Vec<&Splice<'_>> = splices.iter().collect();
    sorted.sort_by_key(|s| (s.old_start, s.old_len));
    let mut out = String::with_capacity(text.len());
    let mut cursor = 0;
    for splice in sorted {
        let end = splice.old_start.checked_add(splice.old_len)?;
        if splice.old_start < cursor || end > lines.len() {
            return None;
        }
        if lines[splice.old_start..end].concat() != splice.old_text {
            return None;
        }
        out.push_str(&lines[cursor..splice.old_start].concat());
        out.push_str(splice.new_text);
        cursor = end;
    }
    out.push_str(&lines[cursor..].concat());
    Some(out)
}

fn emphasized_whole(text: &str) -> Vec<Segment> {
    vec![Segment { text: line_text(text).to_owned(), emphasized: true }]
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn render(result: &TextDiffResult) -> String {
        let mut out = String::new();
        for hunk in &result.hunks {
            out.push_str(&format!("@@ -{},{} +{},{} @@\n", hunk.old_start, hunk.old_len, hunk.new_start, hunk.new_len));
            for line in &hunk.lines {
                let sign = match line.kind {
                    LineKind::Equal => ' ',
                    LineKind::Delete => '-',
                    LineKind::Insert => '+',
                };
                out.push(sign);
                for segment in &line.segments {
                    if segment.emphasized {
                        out.push_str(&format!("[{}]", segment.text));
                    } else {
                        out.push_str(&segment.text);
                    }
                }
                out.push('\n');
            }
        }
        out
    }

    fn check(old: &str, new: &str, expected: &str) {
        assert_eq!(render(&diff_texts(old, new)), expected);
    }

    #[test]
    fn chinese_changes_are_marked_per_character() {
        check(
            "# 春天\n\n今天天气很好，我们去公园散步。\n",
            "# 春天\n\n今天天气不错，我们去湖边散步。\n",
            "@@ -1,3 +1,3 @@\n # 春天\n \n-今天天气[很好]，我们去[公园]散步。\n+今天天气[不错]，我们去[湖边]散步。\n",
        );
    }

    #[test]
    fn english_changes_are_marked_per_word() {
        check("The quick brown fox\n", "The slow brown fox\n", "@@ -1,1 +1,1 @@\n-The [quick] brown fox\n+The [slow] brown fox\n");
    }

    #[test]
    fn mixed_text_and_pure_insertions() {
        check("第一段\n第二段\n", "第一段\nInkstone 让写作更专注\n第二段\n", "@@ -1,2 +1,3 @@\n 第一段\n+[Inkstone 让写作更专注]\n 第二段\n");
    }

    #[test]
    fn a_long_line_against_a_short_rewrite_is_shown_wholly_replaced() {
        let long = "周报越长越没人读。".repeat(4_000);
        let result = diff_texts(&format!("{long}\n"), "先写结论。\n");
        let lines = &result.hunks[0].lines;
        assert_eq!(lines[0].segments, vec![Segment { text: long.clone(), emphasized: true }]);
        assert_eq!(lines[1].segments, vec![Segment { text: "先写结论。".to_owned(), emphasized: true }]);
    }

    #[test]
    fn identical_texts_have_no_hunks() {
        let result = diff_texts("同样的文字\n", "同样的文字\n");
        assert!(result.identical);
        assert_eq!((result.n_insertions, result.n_deletions), (0, 0));
    }

    #[test]
    fn far_apart_changes_make_separate_hunks() {
        let old: String = (1..=20).map(|i| format!("第{i}行\n")).collect();
        let new = old.replace("第2行", "第二行").replace("第19行", "第十九行");
        assert_eq!(diff_texts(&old, &new).hunks.len(), 2);
    }

    #[test]
    fn changes_have_no_context_and_rebuild_the_new_text() {
        let old: String = (1..=20).map(|i| format!("第{i}行\n")).collect();
        let new = old.replace("第2行", "第二行").replace("第4行\n", "").replace("第19行", "第十九行");
        let changes = changes(&old, &new);
        assert_eq!(changes.len(), 3);
        assert_eq!((changes[0].old_start, changes[0].old_len, changes[0].old_text.as_str(), changes[0].new_text.as_str()), (1, 1, "第2行\n", "第二行\n"));
        assert_eq!((changes[1].old_start, changes[1].old_len, changes[1].new_len), (3, 1, 0));
        let splices: Vec<Splice<'_>> = changes.iter().map(|c| Splice { old_start: c.old_start, old_len: c.old_len, old_text: &c.old_text, new_text: &c.new_text }).collect();
        assert_eq!(apply_changes(&old, &splices).unwrap(), new);
        // A subset applies alone.
        assert_eq!(apply_changes(&old, &splices[2..]).unwrap(), old.replace("第19行", "第十九行"));
        // A splice whose old text does not match is refused.
        let wrong = Splice { old_text: "别的\n", ..splices[0] };
        assert_eq!(apply_changes(&old, &[wrong]), None);
    }

    #[test]
    fn an_insertion_after_equal_lines_stays_after_them() {
        let changes = changes("天\n\n", "\n\n春");
        let splices: Vec<Splice<'_>> = changes.iter().map(|c| Splice { old_start: c.old_start, old_len: c.old_len, old_text: &c.old_text, new_text: &c.new_text }).collect();
        assert_eq!(apply_changes("天\n\n", &splices).as_deref(), Some("\n\n春"));
        assert_eq!(changes.last().map(|c| (c.old_start, c.old_len, c.new_text.as_str())), Some((2, 0, "春")));
    }

    proptest! {
        /// Every change applied to the old text gives the new text; the changes'
        /// display hunks hold exactly their changed lines.
        #[test]
        fn changes_apply_to_the_new_text(
            old_lines in proptest::collection::vec("[a-c春天 ]{0,4}\n?", 0..12),
            new_lines in proptest::collection::vec("[a-c春天 ]{0,4}\n?", 0..12),
        ) {
            let old: String = old_lines.concat();
            let new: String = new_lines.concat();
            let changes = changes(&old, &new);
            let splices: Vec<Splice<'_>> = changes.iter().map(|c| Splice { old_start: c.old_start, old_len: c.old_len, old_text: &c.old_text, new_text: &c.new_text }).collect();
            prop_assert_eq!(apply_changes(&old, &splices), Some(new.clone()));
            prop_assert_eq!(changes.is_empty(), old == new);
            let (old_split, new_split) = (split_lines(&old), split_lines(&new));
            for change in &changes {
                for line in &change.hunk.lines {
                    let text: String = line.segments.iter().map(|s| s.text.as_str()).collect();
                    if let Some(n) = line.old_line { prop_assert_eq!(&text, line_text(old_split[n as usize - 1])); }
                    if let Some(n) = line.new_line { prop_assert_eq!(&text, line_text(new_split[n as usize - 1])); }
                }
            }
        }
    }

    proptest! {
        /// Applying the hunks' lines rebuilds both texts: the old side from equal and
        /// deleted lines, the new side from equal and inserted lines.
        #[test]
        fn hunks_rebuild_both_sides(
            old_lines in proptest::collection::vec("[a-c春天 ]{0,6}", 0..12),
            new_lines in proptest::collection::vec("[a-c春天 ]{0,6}", 0..12),
        ) {
            let old = old_lines.iter().map(|l| format!("{l}\n")).collect::<String>();
            let new = new_lines.iter().map(|l| format!("{l}\n")).collect::<String>();
            let result = diff_texts(&old, &new);
            let full = TextDiff::configure().diff_lines(&old, &new);
            prop_assert_eq!(result.identical, full.ops().iter().all(|op| op.tag() == DiffTag::Equal));
            let mut rebuilt_old = old_lines.clone();
            let mut rebuilt_new = new_lines.clone();
            for hunk in &result.hunks {
                for line in &hunk.lines {
                    let text: String = line.segments.iter().map(|s| s.text.as_str()).collect();
                    if let Some(n) = line.old_line { prop_assert_eq!(&text, &old_lines[n as usize - 1]); rebuilt_old[n as usize - 1] = text.clone(); }
                    if let Some(n) = line.new_line { prop_assert_eq!(&text, &new_lines[n as usize - 1]); rebuilt_new[n as usize - 1] = text.clone(); }
                }
            }
            prop_assert_eq!(rebuilt_old, old_lines);
            prop_assert_eq!(rebuilt_new, new_lines);
        }
    }
}
