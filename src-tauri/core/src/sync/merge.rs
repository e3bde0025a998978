//! The three-way merge of a sync conflict: the common base, the person's side and the
//! server's side. Pure. Edits that do not touch each other merge; edits that touch (or
//! are adjacent: they are never guessed apart) are reported, never resolved by a guess.
//! The same rule as a proposal's rebase (`proposals::apply::rebase`), over the same
//! line changes (`diff::changes`).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::diff::{self, Splice};

/// Two edits of the same lines of the base.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Overlap {
    /// 0-based lines of the base the person's edit changes.
    pub base_start: u32,
    pub base_len: u32,
    /// What the person put there.
    pub mine: String,
    /// What the server's side put over the lines it changed.
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

fn touches(a_start: usize, a_len: usize, b_start: usize, b_len: usize) -> bool {
    a_start <= b_start + b_len && b_start <= a_start + a_len
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Merges `base → mine` into `theirs` (= `base → theirs`). An edit both sides made
/// identically is taken once.
pub fn merge3(base: &str, mine: &str, theirs: &str) -> Merged {
    if mine == theirs || base == mine {
        return Merged::Clean(theirs.to_owned());
    }
    if base == theirs {
        return Merged::Clean(mine.to_owned());
    }
    let my_changes = diff::changes(base, mine);
    let their_changes = diff::changes(base, theirs);
    let mut splices = Vec::new();
    let mut overlaps = Vec::new();
    for change in &my_changes {
        let (start, len) = (change.old_start, change.old_len);
        if let Some(edit) = their_changes.iter().find(|t| touches(start, len, t.old_start, t.old_len)) {
            let same = edit.old_start == start && edit.old_len == len && edit.new_text == change.new_text;
            if !same {
                overlaps.push(Overlap { base_start: to_u32(start), base_len: to_u32(len), mine: change.new_text.clone(), theirs: edit.new_text.clone() });
            }
            continue;
        }
        // Shift by their edits wholly before this one (touching ones were overlaps).
        let shift: isize = their_changes.iter().filter(|t| t.old_start + t.old_len < start).map(|t| t.new_len as isize - t.old_len as isize).sum();
        let Some(at) = start.checked_add_signed(shift) else {
            overlaps.push(Overlap { base_start: to_u32(start), base_len: to_u32(len), mine: change.new_text.clone(), theirs: String::new() });
            continue;
        };
        splices.push(Splice { old_start: at, old_len: len, old_text: &change.old_text, new_text: &change.new_text });
    }
    if !overlaps.is_empty() {
        return Merged::Overlapping(overlaps);
    }
    match diff::apply_changes(theirs, &splices) {
        Some(text) => Merged::Clean(text),
        // The shifted lines were not what the base said: report rather than guess.
        None => Merged::Overlapping(vec![Overlap { base_start: 0, base_len: 0, mine: mine.to_owned(), theirs: theirs.to_owned() }]),
    }
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
        assert_eq!(merge_title("T", "T", "U"), Some("U".into()));
        assert_eq!(merge_title("T", "M", "U"), None);
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
