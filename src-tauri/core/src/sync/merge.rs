//! The three-way merge of a sync conflict: the common base, the person's side and the
//! server's side. Pure. Edits that do not touch each other merge; edits that touch (or
//! are adjacent: they are never guessed apart) are reported, never resolved by a guess.
//! The same rule as a proposal's rebase (`proposals::apply::rebase`), over the same
//! line changes (`diff::changes`). [`regions`] is the one fold: the merge view draws its
//! regions and [`merge3`]'s verdict is read off them, so the two never disagree.

use serde::{Deserialize, Serialize};

use crate::diff;

/// Two edits of the same lines of the base.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Overlap {
    /// 0-based lines of the base both sides changed (the whole conflict region).
    pub base_start: u32,
    pub base_len: u32,
    /// What the person put there.
    pub mine: String,
    /// What the server's side put there.
    pub theirs: String,
}

/// What a merge gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Merged {
    /// Every edit applied, in order.
    Clean(String),
    /// Some edits overlap: nothing is merged.
    Overlapping(Vec<Overlap>),
}

/// Which side a region of the merge takes its text from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RegionKind {
    /// Lines neither side changed.
    Same,
    /// Only the person changed these lines.
    Mine,
    /// Only the server's side changed these lines.
    Theirs,
    /// Both sides made the same edit: taken once.
    Both,
    /// Both sides changed these lines differently: the person decides.
    Conflict,
}

/// One region of a three-way merge, in base order. Regions cover the base without gaps,
/// and the text each non-conflict region takes ([`MergeRegion::merged`]), joined, is the
/// clean merge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MergeRegion {
    pub kind: RegionKind,
    /// 0-based lines `baseStart..baseEnd` of the base the region covers (equal for an
    /// insertion).
    pub base_start: u32,
    pub base_end: u32,
    /// The 0-based line of the person's text where the region starts.
    pub mine_line: u32,
    /// The region's text in the base, in the person's text and in the server's.
    pub base: String,
    pub mine: String,
    pub theirs: String,
}

impl MergeRegion {
    /// The text the merge takes here; `None` for a conflict, which is never guessed.
    pub fn merged(&self) -> Option<&str> {
        match self.kind {
            RegionKind::Same => Some(&self.base),
            RegionKind::Mine | RegionKind::Both => Some(&self.mine),
            RegionKind::Theirs => Some(&self.theirs),
            RegionKind::Conflict => None,
        }
    }
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Mine,
    Theirs,
}

/// A line change of the base with the side that made it.
type Tagged = (Side, diff::Change);

/// Lines `start..end` of the base with the given edits (all inside the range, in order).
fn apply_within(base_lines: &[&str], start: usize, end: usize, edits: &[&Tagged]) -> String {
    let mut out = String::new();
    let mut at = start;
    for (_, edit) in edits {
        out.push_str(&base_lines[at..edit.old_start].concat());
        out.push_str(&edit.new_text);
        at = edit.old_start + edit.old_len;
    }
    out.push_str(&base_lines[at..end].concat());
    out
}

/// The three-way merge of `base → mine` and `base → theirs` as regions in base order.
/// Edits that touch (overlapping or adjacent lines of the base: they are never guessed
/// apart) fall into one region, transitively. A region only one side edited takes that
/// side; one where both sides wrote the same text takes it once; any other is a
/// conflict, however much of it the two sides share. [`merge3`] is this fold's verdict.
pub fn regions(base: &str, mine: &str, theirs: &str) -> Vec<MergeRegion> {
    let base_lines = diff::split_lines(base);
    let mut edits: Vec<Tagged> = diff::changes(base, mine).into_iter().map(|c| (Side::Mine, c)).chain(diff::changes(base, theirs).into_iter().map(|c| (Side::Theirs, c))).collect();
    edits.sort_by_key(|(_, c)| (c.old_start, c.old_start + c.old_len));
    // Groups of edits that touch, in base order: (start, end, edits).
    let mut groups: Vec<(usize, usize, Vec<&Tagged>)> = Vec::new();
    for edit in &edits {
        let (start, end) = (edit.1.old_start, edit.1.old_start + edit.1.old_len);
        match groups.last_mut() {
            Some(group) if start <= group.1 => {
                group.1 = group.1.max(end);
                group.2.push(edit);
            }
            _ => groups.push((start, end, vec![edit])),
        }
    }
    let mut out = Vec::new();
    let mut at = 0;
    let mut mine_line = 0;
    let same = |out: &mut Vec<MergeRegion>, from: usize, to: usize, mine_line: &mut usize| {
        if to > from {
            let text = base_lines[from..to].concat();
            out.push(MergeRegion {
                kind: RegionKind::Same,
                base_start: to_u32(from),
                base_end: to_u32(to),
                mine_line: to_u32(*mine_line),
                base: text.clone(),
                mine: text.clone(),
                theirs: text,
            });
            *mine_line += to - from;
        }
    };
    for (start, end, group) in &groups {
        same(&mut out, at, *start, &mut mine_line);
        let my_edits: Vec<_> = group.iter().copied().filter(|e| e.0 == Side::Mine).collect();
        let their_edits: Vec<_> = group.iter().copied().filter(|e| e.0 == Side::Theirs).collect();
        let mine_text = apply_within(&base_lines, *start, *end, &my_edits);
        let theirs_text = apply_within(&base_lines, *start, *end, &their_edits);
        let kind = if their_edits.is_empty() {
            RegionKind::Mine
        } else if my_edits.is_empty() {
            RegionKind::Theirs
        } else if mine_text == theirs_text {
            RegionKind::Both
        } else {
            RegionKind::Conflict
        };
        let mine_lines = diff::split_lines(&mine_text).len();
        out.push(MergeRegion {
            kind,
            base_start: to_u32(*start),
            base_end: to_u32(*end),
            mine_line: to_u32(mine_line),
            base: base_lines[*start..*end].concat(),
            mine: mine_text,
            theirs: theirs_text,
        });
        mine_line += mine_lines;
        at = *end;
    }
    same(&mut out, at, base_lines.len(), &mut mine_line);
    out
}

/// Merges `base → mine` into `theirs` (= `base → theirs`): the verdict of [`regions`].
/// Clean when no region conflicts; otherwise each conflict region is an overlap and
/// nothing is merged.
pub fn merge3(base: &str, mine: &str, theirs: &str) -> Merged {
    if mine == theirs || base == mine {
        return Merged::Clean(theirs.to_owned());
    }
    if base == theirs {
        return Merged::Clean(mine.to_owned());
    }
    let regions = regions(base, mine, theirs);
    let overlaps: Vec<Overlap> = regions
        .iter()
        .filter(|r| r.kind == RegionKind::Conflict)
        .map(|r| Overlap { base_start: r.base_start, base_len: r.base_end - r.base_start, mine: r.mine.clone(), theirs: r.theirs.clone() })
        .collect();
    if !overlaps.is_empty() {
        return Merged::Overlapping(overlaps);
    }
    Merged::Clean(regions.iter().filter_map(MergeRegion::merged).collect())
}

/// A title is one line: it merges when only one side changed it.
pub fn merge_title(base: &str, mine: &str, theirs: &str) -> Option<String> {
    if mine == theirs || base == mine {
        Some(theirs.to_owned())
    } else if base == theirs {
        Some(mine.to_owned())
    } else {
        None
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn check(base: &str, mine: &str, theirs: &str, expected: Option<&str>) {
        match (merge3(base, mine, theirs), expected) {
            (Merged::Clean(text), Some(want)) => assert_eq!(text, want),
            (Merged::Overlapping(_), None) => {}
            (got, want) => panic!("merge3({base:?}, {mine:?}, {theirs:?}) = {got:?}, expected {want:?}"),
        }
    }

    #[test]
    fn edits_apart_merge_and_edits_together_do_not() {
        let base = "一\n二\n三\n四\n五\n";
        check(base, "一改\n二\n三\n四\n五\n", "一\n二\n三\n四\n五改\n", Some("一改\n二\n三\n四\n五改\n"));
        // Theirs inserted lines before mine: mine shifts.
        check(base, "一\n二\n三\n四改\n五\n", "前\n前\n一\n二\n三\n四\n五\n", Some("前\n前\n一\n二\n三\n四改\n五\n"));
        // The same line changed differently: an overlap.
        check(base, "一\n二甲\n三\n四\n五\n", "一\n二乙\n三\n四\n五\n", None);
        // Adjacent lines touch: not guessed apart.
        check(base, "一\n二甲\n三\n四\n五\n", "一\n二\n三乙\n四\n五\n", None);
        // The same edit on both sides is taken once.
        check(base, "一\n二甲\n三\n四\n五改\n", "一\n二甲\n三\n四\n五\n", Some("一\n二甲\n三\n四\n五改\n"));
        // One side only: that side.
        check(base, base, "x\n", Some("x\n"));
        assert_eq!(merge_title("T", "T", "U"), Some("U".into()));
        assert_eq!(merge_title("T", "M", "U"), None);
    }

    fn region(kind: RegionKind, base_start: u32, base_end: u32, mine_line: u32, base: &str, mine: &str, theirs: &str) -> MergeRegion {
        MergeRegion { kind, base_start, base_end, mine_line, base: base.into(), mine: mine.into(), theirs: theirs.into() }
    }

    fn same(base_start: u32, base_end: u32, mine_line: u32, text: &str) -> MergeRegion {
        region(RegionKind::Same, base_start, base_end, mine_line, text, text, text)
    }

    #[test]
    fn lines_split_keeping_their_ends() {
        assert_eq!(diff::split_lines("a\nb"), ["a\n", "b"]);
        assert_eq!(diff::split_lines("a\n\n"), ["a\n", "\n"]);
        assert!(diff::split_lines("").is_empty());
    }

    #[test]
    fn an_overlapping_merge_is_cut_into_regions_with_both_sides_and_the_base() {
        use RegionKind::*;
        // Mine rewrote lines 1-2 as one edit; theirs changed line 2 and, apart, line 5.
        assert_eq!(
            regions("一\n二\n三\n四\n五\n", "一改\n二甲\n三\n四\n五\n", "一\n二乙\n三\n四\n五改\n"),
            vec![region(Conflict, 0, 2, 0, "一\n二\n", "一改\n二甲\n", "一\n二乙\n"), same(2, 4, 2, "三\n四\n"), region(Theirs, 4, 5, 4, "五\n", "五\n", "五改\n")]
        );
        // One side's edit inside a larger one of the other's: a conflict, never guessed.
        assert_eq!(regions("一\n二\n三\n", "一\n二甲\n三\n", "一\n二甲\n三乙\n"), vec![same(0, 1, 0, "一\n"), region(Conflict, 1, 3, 1, "二\n三\n", "二甲\n三\n", "二甲\n三乙\n")]);
        // The same edit on both sides: taken once.
        assert_eq!(regions("一\n二\n", "一\n二甲\n", "一\n二甲\n"), vec![same(0, 1, 0, "一\n"), region(Both, 1, 2, 1, "二\n", "二甲\n", "二甲\n")]);
        // Mine inserted two lines before the end: mine_line counts the person's lines.
        assert_eq!(
            regions("一\n二\n三\n", "新\n新\n一\n二\n三\n", "一\n二\n三改\n"),
            vec![region(Mine, 0, 0, 0, "", "新\n新\n", ""), same(0, 2, 2, "一\n二\n"), region(Theirs, 2, 3, 4, "三\n", "三\n", "三改\n")]
        );
    }

    /// The sync conflict view's fixture (ConflictView.test.tsx): Bob changes lines 2 and 8
    /// and, apart, line 5; Alice changes 2 and 8 differently and, apart, line 10.
    #[test]
    fn the_conflict_views_fixture_is_what_the_core_reports() {
        use RegionKind::*;
        let base = "第一段。\n第二段，未保存的尾巴。\n第三段。\n第四段。\n第五段。\n第六段。\n第七段。\n第八段。\n第九段。\n第十段。\n";
        let mine = "第一段。\n第二段，未保存的尾巴——我的版本。\n第三段。\n第四段。\n第五段（我改）。\n第六段。\n第七段。\n第八段甲。\n第九段。\n第十段。\n";
        let theirs = "第一段。\n第二段，Alice 的版本。\n第三段。\n第四段。\n第五段。\n第六段。\n第七段。\n第八段乙。\n第九段。\n第十段（Alice 改）。\n";
        let got = regions(base, mine, theirs);
        let kinds: Vec<(RegionKind, u32, u32)> = got.iter().map(|r| (r.kind, r.base_start, r.base_end)).collect();
        assert_eq!(kinds, [(Same, 0, 1), (Conflict, 1, 2), (Same, 2, 4), (Mine, 4, 5), (Same, 5, 7), (Conflict, 7, 8), (Same, 8, 9), (Theirs, 9, 10)]);
        assert_eq!(
            merge3(base, mine, theirs),
            Merged::Overlapping(vec![
                Overlap { base_start: 1, base_len: 1, mine: "第二段，未保存的尾巴——我的版本。\n".into(), theirs: "第二段，Alice 的版本。\n".into() },
                Overlap { base_start: 7, base_len: 1, mine: "第八段甲。\n".into(), theirs: "第八段乙。\n".into() },
            ])
        );
    }

    proptest! {
        /// Regions cover the three texts exactly: each side's texts, joined in order, are
        /// that side, and each region starts where the one before it ended.
        #[test]
        fn regions_tile_base_mine_and_theirs(base in proptest::collection::vec("[a-c]{0,2}", 0..10), mine in proptest::collection::vec("[a-c]{0,2}", 0..10), theirs in proptest::collection::vec("[a-c]{0,2}", 0..10)) {
            let [base, mine, theirs] = [base, mine, theirs].map(|lines| lines.iter().map(|l| format!("{l}\n")).collect::<String>());
            let got = regions(&base, &mine, &theirs);
            prop_assert_eq!(got.iter().map(|r| r.base.as_str()).collect::<String>(), base.clone());
            prop_assert_eq!(got.iter().map(|r| r.mine.as_str()).collect::<String>(), mine.clone());
            prop_assert_eq!(got.iter().map(|r| r.theirs.as_str()).collect::<String>(), theirs.clone());
            let mut base_at = 0;
            let mut mine_at = 0;
            for r in &got {
                prop_assert_eq!(r.base_start, base_at);
                prop_assert_eq!(r.mine_line, mine_at);
                prop_assert!(r.kind != RegionKind::Same || (r.base == r.mine && r.mine == r.theirs));
                base_at = r.base_end;
                mine_at += diff::split_lines(&r.mine).len() as u32;
            }
            // A clean merge is exactly the regions' merged texts.
            if !got.iter().any(|r| r.kind == RegionKind::Conflict) && base != mine && base != theirs && mine != theirs {
                prop_assert_eq!(merge3(&base, &mine, &theirs), Merged::Clean(got.iter().filter_map(MergeRegion::merged).collect()));
            }
        }
    }

    proptest! {
        /// Merging never loses a side: when only one side changed, the result is that
        /// side; when both edit disjoint halves, the result holds both edits.
        #[test]
        fn one_sided_changes_are_taken_whole(lines in proptest::collection::vec("[a-c]{0,2}", 0..12), edit in proptest::collection::vec("[a-c]{0,2}", 0..12)) {
            let base: String = lines.iter().map(|l| format!("{l}\n")).collect();
            let other: String = edit.iter().map(|l| format!("{l}\n")).collect();
            prop_assert_eq!(merge3(&base, &other, &base), Merged::Clean(other.clone()));
            prop_assert_eq!(merge3(&base, &base, &other), Merged::Clean(other.clone()));
            let head: String = lines.iter().map(|l| format!("{l}\n")).collect();
            let base2 = format!("{head}x\nx\nx\nx\n{head}");
            let mine = format!("{other}x\nx\nx\nx\n{head}");
            let theirs = format!("{head}x\nx\nx\nx\n{other}");
            if let Merged::Clean(text) = merge3(&base2, &mine, &theirs) {
                prop_assert_eq!(text, format!("{other}x\nx\nx\nx\n{other}"));
            }
        }
    }
}
