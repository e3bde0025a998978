//! The wire form of the text pipeline's records: diffs, compiled drafts with their
//! findings and measurements, and the platform profiles (see [`super`]).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TextDiffResult {
    pub hunks: Vec<Hunk>,
    pub n_insertions: u32,
    pub n_deletions: u32,
    /// True when both texts are equal (then `hunks` is empty).
    pub identical: bool,
}

/// A run of changed lines with context. Line numbers are 1-based.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Hunk {
    pub old_start: u32,
    pub old_len: u32,
    pub new_start: u32,
    pub new_len: u32,
    pub lines: Vec<DiffLine>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DiffLine {
    pub kind: LineKind,
    pub old_line: Option<u32>,
    pub new_line: Option<u32>,
    /// The line's text without its line ending, split into segments; `emphasized`
    /// segments are the words that changed within a changed line.
    pub segments: Vec<Segment>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum LineKind {
    Equal,
    Delete,
    Insert,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Segment {
    pub text: String,
    pub emphasized: bool,
}

impl From<&crate::diff::TextDiffResult> for TextDiffResult {
    fn from(record: &crate::diff::TextDiffResult) -> Self {
        TextDiffResult { hunks: record.hunks.iter().map(Into::into).collect(), n_insertions: record.n_insertions, n_deletions: record.n_deletions, identical: record.identical }
    }
}

impl From<crate::diff::TextDiffResult> for TextDiffResult {
    fn from(record: crate::diff::TextDiffResult) -> Self {
        TextDiffResult::from(&record)
    }
}

impl From<&crate::diff::Hunk> for Hunk {
    fn from(record: &crate::diff::Hunk) -> Self {
        Hunk { old_start: record.old_start, old_len: record.old_len, new_start: record.new_start, new_len: record.new_len, lines: record.lines.iter().map(Into::into).collect() }
    }
}

impl From<&crate::diff::DiffLine> for DiffLine {
    fn from(record: &crate::diff::DiffLine) -> Self {
        DiffLine { kind: record.kind.into(), old_line: record.old_line, new_line: record.new_line, segments: record.segments.iter().map(Into::into).collect() }
    }
}

impl From<crate::diff::LineKind> for LineKind {
    fn from(record: crate::diff::LineKind) -> Self {
        use crate::diff::LineKind as K;
        match record {
            K::Equal => Self::Equal,
            K::Delete => Self::Delete,
            K::Insert => Self::Insert,
        }
    }
}

impl From<&crate::diff::Segment> for Segment {
    fn from(record: &crate::diff::Segment) -> Self {
        Segment { text: record.text.clone(), emphasized: record.emphasized }
    }
}
