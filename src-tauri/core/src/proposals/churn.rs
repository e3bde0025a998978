//! Churn: a model that keeps rewriting the same passage with small differences in one
//! turn. Three proposals of a turn whose changes cover a common span of the same
//! target, and whose new texts there differ only a little, are churn: the turn stops
//! and the person is asked how to go on. Pure.

use similar::TextDiff;

use super::{Proposal, Target};

/// Proposals of one turn on one span before the turn stops.
pub const CHURN_PROPOSALS: usize = 3;
/// Two rewrites at least this similar (0–1, by characters) differ "only a little".
pub const CHURN_SIMILARITY: f32 = 0.7;

/// What churned: the target, the proposals, and the lines of the span (0-based, in the
/// base text).
#[derive(Debug, Clone, PartialEq)]
pub struct Churn {
    pub target: Target,
    pub proposal_ids: Vec<String>,
    pub line: u32,
}

/// What churn looks at in a proposal: its target and, per hunk, the old lines it
/// replaces and the new text.
#[derive(Debug, Clone, PartialEq)]
pub struct Rewrite {
    pub id: String,
    pub target: Target,
    /// (old_start, old_len, new_text) per hunk.
    pub hunks: Vec<(u32, u32, String)>,
}

impl From<&Proposal> for Rewrite {
    /// Only the proposal's own hunks: those it carries from earlier proposals
    /// (`Proposal::carries`) were not rewritten again.
    fn from(p: &Proposal) -> Rewrite {
        let carried = |id: &String| p.carries.iter().any(|c| c.hunk_ids.contains(id));
        let hunks = p.hunks.iter().filter(|h| !carried(&h.id)).map(|h| (h.old_start, h.old_len, h.new_text.clone())).collect();
        Rewrite { id: p.id.clone(), target: p.target.clone(), hunks }
    }
}

/// The span a rewrite changes: its hunks' old lines, first to last (a pure insertion
/// counts as the line it is inserted at), and the new text there.
fn span(rewrite: &Rewrite) -> Option<(u32, u32, String)> {
    let first = rewrite.hunks.first()?;
    let last = rewrite.hunks.last()?;
    let start = first.0;
    let end = (last.0 + last.1.max(1)).max(start + 1);
    let text = rewrite.hunks.iter().map(|h| h.2.as_str()).collect::<Vec<_>>().join("\n");
    Some((start, end, text))
}

fn similar_enough(a: &str, b: &str) -> bool {
    a != b && TextDiff::from_chars(a, b).ratio() >= CHURN_SIMILARITY
}

/// The churn among `proposals` (the proposals one turn made, oldest first), if any:
/// [`CHURN_PROPOSALS`] on the same target with a common changed line whose new texts
/// are pairwise similar (and not identical: the loop detector handles repeats).
pub fn detect(proposals: &[Rewrite]) -> Option<Churn> {
    let spans: Vec<(&Rewrite, u32, u32, String)> = proposals.iter().filter_map(|p| span(p).map(|(s, e, t)| (p, s, e, t))).collect();
    for (index, (first, start, end, text)) in spans.iter().enumerate() {
        for line in *start..*end {
            let group: Vec<&(&Rewrite, u32, u32, String)> = spans[index..].iter().filter(|(p, s, e, _)| p.target == first.target && *s <= line && line < *e).collect();
            if group.len() < CHURN_PROPOSALS {
                continue;
            }
            let close = group.iter().all(|(_, _, _, t)| t == text || similar_enough(text, t)) && group.windows(2).all(|w| similar_enough(&w[0].3, &w[1].3));
            if close {
                return Some(Churn { target: first.target.clone(), proposal_ids: group.iter().map(|(p, _, _, _)| p.id.clone()).collect(), line });
            }
        }
    }
    None
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn proposal(id: &str, target: Target, old_start: u32, new_text: &str) -> Rewrite {
        Rewrite { id: id.to_owned(), target, hunks: vec![(old_start, 1, new_text.to_owned())] }
    }

    #[test]
    fn three_close_rewrites_of_one_span_are_churn_and_other_patterns_are_not() {
        let rewrites = [
            proposal("p1", Target::Source, 4, "春茶上市，山间清香扑面而来。"),
            proposal("p2", Target::Source, 4, "春茶上市，山间的清香扑面而来。"),
            proposal("p3", Target::Source, 4, "春茶上市了，山间清香扑面而来！"),
        ];
        let churn = detect(&rewrites).unwrap();
        assert_eq!(churn.proposal_ids, ["p1", "p2", "p3"]);
        assert_eq!(churn.line, 4);
        assert_eq!(detect(&rewrites[..2]), None, "two are not churn");
        let spread = [rewrites[0].clone(), proposal("p2", Target::Source, 9, "春茶上市，山间的清香扑面而来。"), rewrites[2].clone()];
        assert_eq!(detect(&spread), None, "different spans");
        let different = [rewrites[0].clone(), proposal("p2", Target::Source, 4, "Completely different words here."), rewrites[2].clone()];
        assert_eq!(detect(&different), None, "a real alternative is not churn");
        let other_target = [rewrites[0].clone(), rewrites[1].clone(), proposal("p3", Target::Draft { platform: crate::model::Platform::X }, 4, "春茶上市了，山间清香扑面而来！")];
        assert_eq!(detect(&other_target), None);
    }
}
