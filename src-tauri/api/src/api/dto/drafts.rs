//! The wire form of a compile and of a draft save's outcome (see [`super`]).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::{Draft, Finding};
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CompiledDraft {
    pub draft: Draft,
    pub findings: Vec<Finding>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PipelineCompileResult {
    pub project_id: String,
    /// The working-copy revision compiled.
    pub revision: u64,
    pub drafts: Vec<CompiledDraft>,
    pub tags: Vec<String>,
    /// Source-level findings (banned words, advertising law, personal data, ...).
    pub findings: Vec<Finding>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum DraftSaveOutcome {
    /// The first draft for this platform was saved.
    Created,
    /// The saved draft now holds the fresh compile.
    Updated,
    /// The saved draft already equals the fresh compile of the same source.
    Unchanged,
    /// Nothing was written: the saved draft was edited by hand. `diff` shows what the
    /// compile would change; save again with `replaceRevision` to take it.
    NeedsChoice,
}

impl From<&crate::project::drafts::CompiledDraft> for CompiledDraft {
    fn from(record: &crate::project::drafts::CompiledDraft) -> Self {
        CompiledDraft { draft: (&record.draft).into(), findings: record.findings.iter().map(Into::into).collect() }
    }
}

impl From<&crate::project::drafts::PipelineCompileResult> for PipelineCompileResult {
    fn from(record: &crate::project::drafts::PipelineCompileResult) -> Self {
        PipelineCompileResult {
            project_id: record.project_id.clone(),
            revision: record.revision,
            drafts: record.drafts.iter().map(Into::into).collect(),
            tags: record.tags.clone(),
            findings: record.findings.iter().map(Into::into).collect(),
        }
    }
}

impl From<crate::project::drafts::PipelineCompileResult> for PipelineCompileResult {
    fn from(record: crate::project::drafts::PipelineCompileResult) -> Self {
        Self::from(&record)
    }
}

impl From<&crate::project::drafts::DraftSaveOutcome> for DraftSaveOutcome {
    fn from(record: &crate::project::drafts::DraftSaveOutcome) -> Self {
        match record {
            crate::project::drafts::DraftSaveOutcome::Created => Self::Created,
            crate::project::drafts::DraftSaveOutcome::Updated => Self::Updated,
            crate::project::drafts::DraftSaveOutcome::Unchanged => Self::Unchanged,
            crate::project::drafts::DraftSaveOutcome::NeedsChoice => Self::NeedsChoice,
        }
    }
}
