//! The wire form of local search (see [`super`]): hits and their snippets, notices, the
//! index's status, Ask's answers with their sources, citations and quotes, and the
//! keywords suggested for a draft. What a search document is, where to search and how
//! a question is answered are also parameters, so they convert both ways.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::Anchor;
use crate::retrieval as search;

/// What a search document is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum DocKind {
    /// A project's working copy.
    Working,
    /// A saved version.
    Version,
    /// A comment on a project.
    Comment,
}

/// Where to search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum SearchScope {
    /// One project: its working copy, versions and comments; equal contents are one
    /// hit.
    Project,
    /// Every project; the best hit of each project (and each matching comment).
    Workspace,
}

/// How a hit matched, best first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum Tier {
    /// The query is the title, or occurs in it literally.
    Title,
    /// Every keyword of the query is in the title, or the meaning matches strongly.
    TitleKeywords,
    /// A tag or the category is the query, or holds every keyword.
    Tags,
    /// Every keyword is in the summary (the first paragraph).
    Summary,
    /// Keywords or the literal query in the body, or a semantic match above the floor.
    Body,
}

/// A short piece of a text around a match, on one line, with the matched words
/// marked (UTF-16 ranges within `text`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Snippet {
    pub text: String,
    pub highlights: Vec<Anchor>,
}

/// One hit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    pub project_id: String,
    /// The project's title now (a version's own title is `title`).
    pub project_title: String,
    pub archived: bool,
    pub kind: DocKind,
    /// The version number, for a version.
    pub version: Option<u32>,
    pub comment_id: Option<String>,
    /// The document's title (empty for a comment).
    pub title: String,
    /// Where the match is, in UTF-16 code units (what the editor counts): in the
    /// source of the working copy or version; for a comment, the comment's anchor in
    /// the project's source. `null` when only the title, tags or meaning matched.
    pub span: Option<Anchor>,
    pub snippet: Snippet,
    /// How the project matched: in the workspace, the best of its working copy and
    /// versions (the hit speaks for them all).
    pub tier: Tier,
    /// The fused score within the tier (higher is better).
    pub score: f64,
    /// In the workspace, the project's other versions that match too, oldest first
    /// (the hit is its working copy when that matches, else its newest matching
    /// version); empty for a comment and in one project's scope.
    pub also_in: Vec<u32>,
}

/// Why a search was not everything it could be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum NoticeCode {
    /// No embedding model is configured: the results are lexical only.
    SemanticOff,
    /// The embedding server failed: the results are lexical only.
    SemanticFailed,
    /// The index is being built: some documents may be missing.
    IndexBuilding,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SearchNotice {
    pub code: NoticeCode,
    /// English; the UI shows its own text for `code`.
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SearchResults {
    pub hits: Vec<SearchHit>,
    /// True when semantic retrieval took part.
    pub semantic: bool,
    pub notice: Option<SearchNotice>,
}

/// The index status, for tests and the UI.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct IndexStatus {
    pub documents: u64,
    pub building: bool,
    /// Changes handed to the index and not applied yet.
    pub pending: u64,
    pub embedding_model: Option<String>,
    pub vectors: u64,
    pub vectors_missing: u64,
}

/// One numbered source of an answer: a window of a document around its match.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Source {
    /// 1, 2, 3, … as the model cites it.
    pub n: u32,
    pub project_id: String,
    pub project_title: String,
    pub kind: DocKind,
    pub version: Option<u32>,
    pub comment_id: Option<String>,
    /// Where `text` is in the document's text (the source of the working copy or
    /// version, or the comment's body), in UTF-16 code units.
    pub span: Anchor,
    pub text: String,
    /// How well the document matched the question.
    pub tier: Tier,
}

/// How a question is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum AskRoute {
    /// About the person's own writing: retrieval, then an answer citing the sources.
    Material,
    /// A general question: answered directly, without retrieval or citations.
    General,
}

/// An `[N]` of the answer, resolved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Citation {
    pub n: u32,
    pub project_id: String,
    pub kind: DocKind,
    pub version: Option<u32>,
    pub comment_id: Option<String>,
    /// The cited source's place in its document; a checked quote citing it narrows
    /// this to the quote.
    pub span: Anchor,
}

/// A quotation in the answer and whether the engine found it in the sources.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Quote {
    pub text: String,
    /// True when the quoted text is, character for character, in a source.
    pub found: bool,
    /// The source it was found in, and where in that source's document.
    pub source: Option<u32>,
    pub span: Option<Anchor>,
}

/// An answer with its sources, resolved citations, checked quotes and footer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Answer {
    /// The model's answer as it wrote it (empty when nothing matched the question:
    /// then no model was called).
    pub answer: String,
    /// The model that answered.
    pub model: Option<String>,
    pub sources: Vec<Source>,
    pub citations: Vec<Citation>,
    pub quotes: Vec<Quote>,
    /// `[N]` in the answer that name no source.
    pub unknown_citations: Vec<u32>,
    /// Documents retrieved (before a rerank; the sources are what the answer was
    /// given) and documents cited.
    pub retrieved: u32,
    pub cited: u32,
    /// "检索 X 篇，引用 Y 篇 / retrieved X, cited Y".
    pub footer: String,
    /// Why retrieval was not all it could be (semantic search off or failed).
    pub notice: Option<SearchNotice>,
    /// True when this answer came from the cache (the same question, sources and
    /// profile within ten minutes, the index unchanged).
    pub cached: bool,
    /// True when the model reranked the retrieved documents down to the sources.
    pub reranked: bool,
    /// How the question was answered.
    pub route: AskRoute,
    /// True when the person chose the route; false when the engine did.
    pub route_chosen: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Keyword {
    pub keyword: String,
    pub weight: f64,
}

impl From<search::DocKind> for DocKind {
    fn from(record: search::DocKind) -> Self {
        match record {
            search::DocKind::Working => Self::Working,
            search::DocKind::Version => Self::Version,
            search::DocKind::Comment => Self::Comment,
        }
    }
}

impl From<DocKind> for search::DocKind {
    fn from(kind: DocKind) -> Self {
        match kind {
            DocKind::Working => Self::Working,
            DocKind::Version => Self::Version,
            DocKind::Comment => Self::Comment,
        }
    }
}

impl From<SearchScope> for search::SearchScope {
    fn from(scope: SearchScope) -> Self {
        match scope {
            SearchScope::Project => Self::Project,
            SearchScope::Workspace => Self::Workspace,
        }
    }
}

impl From<search::Tier> for Tier {
    fn from(record: search::Tier) -> Self {
        match record {
            search::Tier::Title => Self::Title,
            search::Tier::TitleKeywords => Self::TitleKeywords,
            search::Tier::Tags => Self::Tags,
            search::Tier::Summary => Self::Summary,
            search::Tier::Body => Self::Body,
        }
    }
}

impl From<&search::Snippet> for Snippet {
    fn from(record: &search::Snippet) -> Self {
        Snippet { text: record.text.clone(), highlights: record.highlights.iter().map(Into::into).collect() }
    }
}

impl From<&search::SearchHit> for SearchHit {
    fn from(record: &search::SearchHit) -> Self {
        SearchHit {
            project_id: record.project_id.clone(),
            project_title: record.project_title.clone(),
            archived: record.archived,
            kind: record.kind.into(),
            version: record.version,
            comment_id: record.comment_id.clone(),
            title: record.title.clone(),
            span: record.span.map(Into::into),
            snippet: (&record.snippet).into(),
            tier: record.tier.into(),
            score: record.score,
            also_in: record.also_in.clone(),
        }
    }
}

impl From<search::NoticeCode> for NoticeCode {
    fn from(record: search::NoticeCode) -> Self {
        match record {
            search::NoticeCode::SemanticOff => Self::SemanticOff,
            search::NoticeCode::SemanticFailed => Self::SemanticFailed,
            search::NoticeCode::IndexBuilding => Self::IndexBuilding,
        }
    }
}

impl From<&search::SearchNotice> for SearchNotice {
    fn from(record: &search::SearchNotice) -> Self {
        SearchNotice { code: record.code.into(), message: record.message.clone() }
    }
}

impl From<&search::SearchResults> for SearchResults {
    fn from(record: &search::SearchResults) -> Self {
        SearchResults { hits: record.hits.iter().map(Into::into).collect(), semantic: record.semantic, notice: record.notice.as_ref().map(Into::into) }
    }
}

impl From<search::SearchResults> for SearchResults {
    fn from(record: search::SearchResults) -> Self {
        Self::from(&record)
    }
}

impl From<search::IndexStatus> for IndexStatus {
    fn from(record: search::IndexStatus) -> Self {
        IndexStatus {
            documents: record.documents,
            building: record.building,
            pending: record.pending,
            embedding_model: record.embedding_model,
            vectors: record.vectors,
            vectors_missing: record.vectors_missing,
        }
    }
}

impl From<&search::ask::Source> for Source {
    fn from(record: &search::ask::Source) -> Self {
        Source {
            n: record.n,
            project_id: record.project_id.clone(),
            project_title: record.project_title.clone(),
            kind: record.kind.into(),
            version: record.version,
            comment_id: record.comment_id.clone(),
            span: record.span.into(),
            text: record.text.clone(),
            tier: record.tier.into(),
        }
    }
}

impl From<search::ask::AskRoute> for AskRoute {
    fn from(record: search::ask::AskRoute) -> Self {
        match record {
            search::ask::AskRoute::Material => Self::Material,
            search::ask::AskRoute::General => Self::General,
        }
    }
}

impl From<AskRoute> for search::ask::AskRoute {
    fn from(route: AskRoute) -> Self {
        match route {
            AskRoute::Material => Self::Material,
            AskRoute::General => Self::General,
        }
    }
}

impl From<&search::ask::Citation> for Citation {
    fn from(record: &search::ask::Citation) -> Self {
        Citation {
            n: record.n,
            project_id: record.project_id.clone(),
            kind: record.kind.into(),
            version: record.version,
            comment_id: record.comment_id.clone(),
            span: record.span.into(),
        }
    }
}

impl From<&search::ask::Quote> for Quote {
    fn from(record: &search::ask::Quote) -> Self {
        Quote { text: record.text.clone(), found: record.found, source: record.source, span: record.span.map(Into::into) }
    }
}

impl From<&search::ask::Answer> for Answer {
    fn from(record: &search::ask::Answer) -> Self {
        Answer {
            answer: record.answer.clone(),
            model: record.model.clone(),
            sources: record.sources.iter().map(Into::into).collect(),
            citations: record.citations.iter().map(Into::into).collect(),
            quotes: record.quotes.iter().map(Into::into).collect(),
            unknown_citations: record.unknown_citations.clone(),
            retrieved: record.retrieved,
            cited: record.cited,
            footer: record.footer.clone(),
            notice: record.notice.as_ref().map(Into::into),
            cached: record.cached,
            reranked: record.reranked,
            route: record.route.into(),
            route_chosen: record.route_chosen,
        }
    }
}

impl From<search::ask::Answer> for Answer {
    fn from(record: search::ask::Answer) -> Self {
        Self::from(&record)
    }
}

impl From<&search::suggest::Keyword> for Keyword {
    fn from(record: &search::suggest::Keyword) -> Self {
        Keyword { keyword: record.keyword.clone(), weight: record.weight }
    }
}
