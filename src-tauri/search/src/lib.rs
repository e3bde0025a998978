//! Local search: a tantivy index of every project's working copy, its versions and
//! its comments, kept in `<data dir>/index/` beside the store and never the source of
//! truth (deleted or damaged, it is rebuilt from the store on open).
//!
//! - Text is analysed twice: jieba search-mode words (BM25 over title, tags,
//!   summary and body) and character unigrams and bigrams with positions (literal
//!   matches, so one- and two-character Chinese queries and pasted titles always
//!   hit). See `text` and `index`.
//! - A query runs several retrievers; a candidate holding the query's text literally
//!   comes first, then each takes the best tier any of them gives it, and reciprocal
//!   rank fusion orders it within the tier (`rank`).
//! - Semantic search is optional: the default LLM profile's embedding model embeds
//!   each document once per content (vectors cached in the store's `embeddings`
//!   tree). Without one, or when the server fails, search is lexical and says so in
//!   a notice.
//! - The index follows the store: `Store::subscribe` hands each committed batch of
//!   projects, versions and comments to a worker thread, which applies and commits
//!   it (well within a second); the writer never waits for the index.
//! - The index calls no model itself: the engine passes in an [`Embedder`] (its
//!   metered runtime), so every embedding is checked against the workspace policy and
//!   the quotas and leaves a usage record like any other model call.
//! - This is the one crate that names tantivy and jieba; [`suggest`] (keywords and tags)
//!   shares the segmenter with the index's analysis.

use inkstone_model::Anchor;

mod answers;
pub mod ask;
mod doc;
mod embed;
pub mod eval;
mod index;
mod lifecycle;
mod query;
pub mod rank;
mod semantic;
pub mod suggest;
pub mod text;
mod tools;
mod worker;

use std::path::{Path, PathBuf};
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use inkstone_error::{ApiError, ErrorCode};
use inkstone_llm::client::Embeddings;
use inkstone_store::{Store, StoreError};

pub use doc::IndexDoc;
pub use index::Filter;
use lifecycle::{Shared, Work};
pub use rank::Tier;
pub use semantic::CachedEmbedding;
pub use text::Snippet;
pub use tools::{find_relevant_examples, search_project_history, search_workspace, CompactHit, CompactResults};

// The layers below, under the names the modules here use for them.
use inkstone_llm as llm;
use inkstone_model as model;
use inkstone_store as store;

/// What a search document is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum DocKind {
    /// A project's working copy.
    Working,
    /// A saved version.
    Version,
    /// A comment on a project.
    Comment,
}

/// Which retrievers a search uses. The API always fuses; the evaluation compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchMode {
    Lexical,
    Semantic,
    Fused,
}

/// Where to search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum SearchScope {
    /// One project: its working copy, versions and comments; equal contents are one
    /// hit.
    Project,
    /// Every project; the best hit of each project (and each matching comment).
    Workspace,
}

/// A search, already checked.
#[derive(Debug, Clone)]
pub struct SearchRequest {
    pub query: String,
    pub scope: SearchScope,
    pub filter: Filter,
    pub limit: usize,
    pub mode: SearchMode,
}

/// Most hits one search returns.
pub const MAX_LIMIT: usize = 100;

/// Characters of a document around its match that make one source of an answer.
pub const SOURCE_CHARS: usize = 600;

/// How long an answer is reused for the same question (ten minutes).
pub const ANSWER_TTL_SECONDS: i64 = 600;

/// Questions whose embeddings are at least this similar are the same question.
pub const SAME_QUESTION: f32 = 0.98;

/// One hit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum NoticeCode {
    /// No embedding model is configured: the results are lexical only.
    SemanticOff,
    /// The embedding server failed: the results are lexical only.
    SemanticFailed,
    /// The index is being built: some documents may be missing.
    IndexBuilding,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchNotice {
    pub code: NoticeCode,
    /// English; the UI shows its own text for `code`.
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchResults {
    pub hits: Vec<SearchHit>,
    /// True when semantic retrieval took part.
    pub semantic: bool,
    pub notice: Option<SearchNotice>,
}

/// Why the index failed. Never the store's fault: the store is the truth and the
/// index is rebuilt from it.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error("the search index failed: {0}")]
    Index(#[from] tantivy::TantivyError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the search index folder failed: {0}")]
    Io(#[from] std::io::Error),
}

impl From<IndexError> for ApiError {
    fn from(error: IndexError) -> Self {
        match error {
            IndexError::Index(e) => ApiError::new(ErrorCode::Internal, format!("The search index failed: {e}")).action("reindex", &[]),
            IndexError::Store(e) => e.into(),
            IndexError::Io(e) => {
                ApiError::new(ErrorCode::Io, format!("The search index folder failed: {e}")).hint("check_disk", "Check that the disk is not full and the folder is writable.")
            }
        }
    }
}

/// The door to an embedding model that the engine passes in. The index never calls a
/// model itself: the engine's metered runtime does, so the workspace policy, the quotas
/// and the one usage record per call stay where every other model call has them.
pub trait Embedder: Send + Sync {
    /// Embeds `inputs` with the embedding model of exactly the profile `profile` (an id
    /// or name), recorded under `purpose` (`search`, `search_index`). `timeout`, when
    /// given and shorter, replaces the profile's per-request timeout.
    fn embed(&self, store: &Store, profile: &str, purpose: &str, inputs: &[String], timeout: Option<Duration>) -> Result<Embeddings, ApiError>;
}

/// What the index needs besides the store: the embedding model, through the engine.
#[derive(Clone)]
pub struct Services {
    pub embedder: Arc<dyn Embedder>,
}

/// The index status, for tests and the UI.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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

/// The search index of one data dir, with the thread that keeps it current.
pub struct SearchIndex {
    shared: Arc<Shared>,
    work: Sender<Work>,
    worker: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for SearchIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchIndex").finish_non_exhaustive()
    }
}

/// The index folder of a data dir.
pub fn index_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("index")
}
