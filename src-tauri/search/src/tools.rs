//! The model's search tools: compact hits that name where a match is, never a whole
//! document.

use std::time::Duration;

use crate::model::{Anchor, Platform};

use super::*;

/// A compact hit for the model: where it is and a short snippet, never a document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactHit {
    /// `prj_…` for a working copy, `prj_…@v3` for a version, `prj_…#cmt_…` for a
    /// comment; with `:from-to` (UTF-16) when there is a span.
    pub reference: String,
    pub project_id: String,
    pub title: String,
    pub kind: DocKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comment_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub span: Option<Anchor>,
    /// At most [`text::SNIPPET_CHARS`] characters around the match.
    pub snippet: String,
    pub tier: Tier,
}

impl From<SearchHit> for CompactHit {
    fn from(hit: SearchHit) -> Self {
        let mut reference = match (&hit.kind, hit.version, &hit.comment_id) {
            (DocKind::Version, Some(number), _) => format!("{}@v{number}", hit.project_id),
            (DocKind::Comment, _, Some(comment)) => format!("{}#{comment}", hit.project_id),
            _ => hit.project_id.clone(),
        };
        if let Some(span) = hit.span {
            reference.push_str(&format!(":{}-{}", span.from, span.to));
        }
        let title = if hit.title.is_empty() { hit.project_title } else { hit.title };
        CompactHit {
            reference,
            project_id: hit.project_id,
            title,
            kind: hit.kind,
            version: hit.version,
            comment_id: hit.comment_id,
            span: hit.span,
            snippet: hit.snippet.text,
            tier: hit.tier,
        }
    }
}

/// What a search tool returns: compact hits, and why the search was not all it could
/// be (the index still building; semantic search off or failed).
#[derive(Debug, Clone, PartialEq)]
pub struct CompactResults {
    pub hits: Vec<CompactHit>,
    pub notice: Option<SearchNotice>,
}

/// How long a tool's search waits for the index to apply what was just written (a
/// version saved a moment ago), so the model finds it; past that it searches what is
/// indexed.
const TOOL_INDEX_WAIT: Duration = Duration::from_millis(1500);

fn compact(index: &SearchIndex, request: SearchRequest) -> Result<CompactResults, ApiError> {
    let caught_up = index.wait_idle(TOOL_INDEX_WAIT);
    let results = index.search(&request)?;
    // The model needs no notice that semantic search is simply not configured.
    let mut notice = results.notice.filter(|n| n.code != NoticeCode::SemanticOff);
    if !caught_up && notice.is_none() {
        notice = Some(SearchNotice { code: NoticeCode::IndexBuilding, message: "The search index is still applying recent changes; the newest edits may be missing.".to_owned() });
    }
    Ok(CompactResults { hits: results.hits.into_iter().map(CompactHit::from).collect(), notice })
}

/// For the `search_project_history` tool: the project's working copy, versions and
/// comments matching `query`, equal contents once, best first.
///
/// Errors: INTERNAL when the index cannot be read.
pub fn search_project_history(index: &SearchIndex, project_id: &str, query: &str, limit: usize) -> Result<CompactResults, ApiError> {
    let filter = Filter { project_id: Some(project_id.to_owned()), ..Filter::default() };
    compact(index, SearchRequest { query: query.to_owned(), scope: SearchScope::Project, filter, limit, mode: SearchMode::Fused })
}

/// For the `search_workspace` tool: the best hit of each project (and each matching
/// comment) across the workspace, imported articles included (an import is a
/// project); `exclude_project` (the session's own, which `search_project_history`
/// covers) left out, and `kinds` when given.
///
/// Errors: INTERNAL when the index cannot be read.
pub fn search_workspace(index: &SearchIndex, query: &str, exclude_project: Option<&str>, kinds: Vec<DocKind>, limit: usize) -> Result<CompactResults, ApiError> {
    let filter = Filter { exclude_project: exclude_project.map(str::to_owned), kinds, ..Filter::default() };
    compact(index, SearchRequest { query: query.to_owned(), scope: SearchScope::Workspace, filter, limit, mode: SearchMode::Fused })
}

/// For the `find_relevant_examples` tool: other projects written for `platform` whose
/// working copy matches `query`, one hit per project, `exclude_project` (the
/// session's own) left out, most relevant first. (Performance data, once recorded,
/// is to order equally relevant examples by how they performed; there is none yet.)
///
/// Errors: INTERNAL when the index cannot be read.
pub fn find_relevant_examples(index: &SearchIndex, platform: Platform, query: &str, exclude_project: Option<&str>, limit: usize) -> Result<CompactResults, ApiError> {
    let filter = Filter { project_id: None, exclude_project: exclude_project.map(str::to_owned), kinds: vec![DocKind::Working], platform: Some(platform) };
    compact(index, SearchRequest { query: query.to_owned(), scope: SearchScope::Workspace, filter, limit, mode: SearchMode::Fused })
}
