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

pub mod ask;
pub mod eval;
mod index;
pub mod rank;
mod semantic;
pub mod text;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tantivy::collector::TopDocs;
use tantivy::{DocAddress, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term};
use ts_rs::TS;

use crate::clock::{Clock, IdSource};
use crate::error::{ApiError, ErrorCode};
use crate::llm::{Cancel, ModelCall, Runtime};
use crate::model::{Anchor, Comment, Platform, Project, ProjectSummary, Version};
use crate::store::{Batch, Change, Committed, Durability, Kind, Record, Store, StoreError};
pub use index::Filter;
pub use rank::Tier;
pub use semantic::CachedEmbedding;
pub use text::Snippet;

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

/// Which retrievers a search uses. The API always fuses; the evaluation compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchMode {
    Lexical,
    Semantic,
    Fused,
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

/// `chars` characters of `text` around the UTF-16 offset `around.from` (a third
/// before it), or its start; with their UTF-16 span in `text`.
fn window(text: &str, around: Option<Anchor>, chars: usize) -> (String, Anchor) {
    let all: Vec<char> = text.chars().collect();
    let center = match around {
        Some(span) => {
            let mut units = 0u32;
            all.iter()
                .take_while(|c| {
                    units += c.len_utf16() as u32;
                    units <= span.from
                })
                .count()
        }
        None => 0,
    };
    let start = center.saturating_sub(chars / 3);
    let end = (start + chars).min(all.len());
    let start = end.saturating_sub(chars).min(start);
    let units = |range: &[char]| range.iter().map(|c| c.len_utf16() as u32).sum::<u32>();
    let from = units(&all[..start]);
    (all[start..end].iter().collect(), Anchor { from, to: from + units(&all[start..end]) })
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

/// A document of the index, built from a record.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexDoc {
    pub doc_id: String,
    pub project_id: String,
    pub kind: DocKind,
    pub version: Option<u32>,
    pub comment_id: Option<String>,
    pub anchor: Option<Anchor>,
    pub platforms: Vec<Platform>,
    pub title: String,
    pub tags: Vec<String>,
    pub category: Option<String>,
    pub summary: String,
    /// The text spans point into: the Markdown source, or the comment's body.
    pub body: String,
    /// `sha256:` of title and body: equal contents are one hit within a project.
    pub text_hash: String,
}

impl IndexDoc {
    fn of_source(doc_id: String, project_id: &str, kind: DocKind, version: Option<u32>, title: &str, source: &str) -> IndexDoc {
        let front = text::front_matter(source);
        IndexDoc {
            doc_id,
            project_id: project_id.to_owned(),
            kind,
            version,
            comment_id: None,
            anchor: None,
            platforms: Vec::new(),
            title: title.to_owned(),
            tags: front.tags,
            category: front.category,
            summary: text::summary(&source[front.body_start..]),
            body: source.to_owned(),
            text_hash: text_hash(title, source),
        }
    }

    /// A project's working copy.
    pub fn working(project: &Project) -> IndexDoc {
        let mut doc = IndexDoc::of_source(working_id(&project.id), &project.id, DocKind::Working, None, &project.title, &project.source);
        doc.platforms = project.platforms.clone();
        doc
    }

    pub fn version(version: &Version) -> IndexDoc {
        IndexDoc::of_source(version_id(&version.project_id, version.number), &version.project_id, DocKind::Version, Some(version.number), &version.title, &version.source)
    }

    pub fn comment(comment: &Comment) -> IndexDoc {
        IndexDoc {
            doc_id: comment_id(&comment.project_id, &comment.id),
            project_id: comment.project_id.clone(),
            kind: DocKind::Comment,
            version: None,
            comment_id: Some(comment.id.clone()),
            anchor: comment.anchor,
            platforms: Vec::new(),
            title: String::new(),
            tags: Vec::new(),
            category: None,
            summary: String::new(),
            body: comment.body.clone(),
            text_hash: text_hash("", &comment.body),
        }
    }
}

fn text_hash(title: &str, body: &str) -> String {
    crate::store::sha256_ref(format!("{title}\0{body}").as_bytes())
}

fn working_id(project_id: &str) -> String {
    format!("w/{project_id}")
}

fn version_id(project_id: &str, number: u32) -> String {
    format!("v/{project_id}/{number}")
}

fn comment_id(project_id: &str, comment_id: &str) -> String {
    format!("c/{project_id}/{comment_id}")
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
            IndexError::Index(e) => ApiError::new(ErrorCode::Internal, format!("The search index failed: {e}"))
                .hint("reindex", "Rebuild the search index with `inkstone-cli search --reindex` or Settings; your writing is not affected."),
            IndexError::Store(e) => e.into(),
            IndexError::Io(e) => {
                ApiError::new(ErrorCode::Io, format!("The search index folder failed: {e}")).hint("check_disk", "Check that the disk is not full and the folder is writable.")
            }
        }
    }
}

/// What the index needs besides the store: the model runtime and the clock and ids
/// its usage records take.
#[derive(Clone)]
pub struct Services {
    pub llm: Arc<Runtime>,
    pub clock: Arc<dyn Clock>,
    pub ids: Arc<dyn IdSource>,
}

/// Work for the index's thread.
enum Work {
    Committed(Committed),
    Rebuild,
    /// Give every document its vector (from the cache, else the model) without
    /// touching the index: at open, and when the embedding model changed.
    LoadVectors,
    Stop,
}

/// How far the index's thread is: work sent, work done, a rebuild running. Kept
/// apart from the index so the store's subscription can hold it without holding the
/// store.
#[derive(Default)]
struct Progress {
    state: Mutex<ProgressState>,
    changed: Condvar,
}

#[derive(Default)]
struct ProgressState {
    sent: u64,
    done: u64,
    building: bool,
    documents: u64,
    /// Commits of the index so far: what an answer was given from.
    commits: u64,
}

impl Progress {
    fn lock(&self) -> MutexGuard<'_, ProgressState> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// A document's vector and what the filters need of it.
struct DocVector {
    project_id: String,
    kind: DocKind,
    platforms: Vec<Platform>,
    vector: Vec<f32>,
}

#[derive(Default)]
struct Vectors {
    /// The embedding model of every vector held; `None` before the first embedding.
    model: Option<String>,
    by_doc: HashMap<String, DocVector>,
    /// Documents still without a vector (the server failed, or it is under way).
    missing: usize,
    last_error: Option<ErrorCode>,
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

struct Shared {
    store: Arc<Store>,
    services: Services,
    reader: IndexReader,
    fields: index::Fields,
    progress: Arc<Progress>,
    vectors: RwLock<Vectors>,
    /// Query vectors by (model, query), so repeating a search costs no model call.
    query_vectors: Mutex<HashMap<(String, String), Vec<f32>>>,
    /// Set when the index closes: long work (loading vectors) stops early.
    stopping: AtomicBool,
    /// After a query vector failed, searches skip semantic retrieval until then, so a
    /// hung embedding server costs one search its timeout, not every keystroke.
    semantic_down_until: Mutex<Option<Instant>>,
    /// Answers of `search.ask` by question, scope, profile and index generation.
    answers: Mutex<HashMap<String, (crate::model::Timestamp, ask::Answer)>>,
    /// Answers by the meaning of their question (when embeddings are on).
    answers_by_meaning: Mutex<Vec<AnswerByMeaning>>,
    /// A `LoadVectors` is queued or running.
    loading_vectors: AtomicBool,
}

/// A cached answer found by the meaning of its question.
struct AnswerByMeaning {
    /// Everything of the cache key but the question (scope, route, profile, index).
    context: String,
    /// The question's unit vector.
    vector: Vec<f32>,
    at: crate::model::Timestamp,
    answer: ask::Answer,
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

/// The file beside the index that says which schema it has and whether it was
/// closed cleanly (`clean: false` after a crash: rebuild, changes may be missing).
const STATE_FILE: &str = "inkstone-index.json";

#[derive(Debug, Serialize, Deserialize)]
struct StateFile {
    schema: u32,
    clean: bool,
}

fn read_state(dir: &Path) -> Option<StateFile> {
    serde_json::from_slice(&std::fs::read(dir.join(STATE_FILE)).ok()?).ok()
}

fn write_state(dir: &Path, clean: bool) -> std::io::Result<()> {
    let bytes = serde_json::to_vec(&StateFile { schema: index::SCHEMA, clean }).map_err(std::io::Error::other)?;
    crate::store::write_file_durably(&dir.join(STATE_FILE), &bytes)
}

/// Bytes of the writer's memory arena (tantivy's minimum is 15 MB).
const WRITER_MEMORY: usize = 24_000_000;
/// How long the thread gathers more work before committing, so a burst of writes
/// (a save writes the version and the project) commits once.
const GATHER: Duration = Duration::from_millis(20);
/// A committed batch with more changes than this (an import, a restore) rebuilds
/// the index instead of updating it document by document.
const REBUILD_OVER: usize = 2000;
/// Inputs per embeddings request.
const EMBED_BATCH: usize = 64;
/// How long after a failed embedding the thread tries again.
const EMBED_RETRY: Duration = Duration::from_secs(30);
/// The longest a search waits for its query vector.
const QUERY_EMBED_TIMEOUT: Duration = Duration::from_secs(5);
/// How long searches stay lexical after a query vector failed.
const SEMANTIC_PAUSE: Duration = Duration::from_secs(30);

/// An open index: tantivy's index, its one writer and a reader.
struct Opened {
    writer: IndexWriter,
    reader: IndexReader,
    needs_rebuild: bool,
    /// The folder, for an index on disk.
    dir: Option<PathBuf>,
}

fn open_on_disk(dir: &Path) -> Result<Opened, IndexError> {
    let (schema, _) = index::schema();
    let state = read_state(dir);
    let usable = state.as_ref().is_some_and(|s| s.schema == index::SCHEMA);
    if !usable && dir.exists() {
        std::fs::remove_dir_all(dir)?;
    }
    std::fs::create_dir_all(dir)?;
    let directory = tantivy::directory::MmapDirectory::open(dir).map_err(|e| IndexError::Index(e.into()))?;
    let index = tantivy::Index::open_or_create(directory, schema)?;
    index::register_tokenizers(&index);
    let writer = index.writer_with_num_threads(1, WRITER_MEMORY)?;
    let reader = index.reader_builder().reload_policy(ReloadPolicy::Manual).try_into()?;
    let needs_rebuild = !state.is_some_and(|s| s.schema == index::SCHEMA && s.clean);
    // From now on the index may change until it is closed cleanly.
    write_state(dir, false)?;
    Ok(Opened { writer, reader, needs_rebuild, dir: Some(dir.to_path_buf()) })
}

fn open_in_memory() -> Result<Opened, IndexError> {
    let index = tantivy::Index::create_in_ram(index::schema().0);
    index::register_tokenizers(&index);
    let writer = index.writer_with_num_threads(1, WRITER_MEMORY)?;
    let reader = index.reader_builder().reload_policy(ReloadPolicy::Manual).try_into()?;
    Ok(Opened { writer, reader, needs_rebuild: true, dir: None })
}

impl SearchIndex {
    /// Opens the index in `<data dir>/index/`, or builds it from the store (in the
    /// background) when it is missing, of another schema, or was not closed cleanly.
    /// An index that cannot be opened on disk (or a damaged one) is deleted and
    /// rebuilt, and failing that built in memory (and logged): search must not keep
    /// the store from opening.
    ///
    /// Errors: only when not even an index in memory can be made.
    pub fn open(store: Arc<Store>, services: Services) -> Result<SearchIndex, IndexError> {
        let dir = index_dir(store.data_dir());
        let opened = open_on_disk(&dir)
            .or_else(|error| {
                tracing::warn!(%error, "the search index cannot be opened; deleting and rebuilding it");
                let _ = std::fs::remove_dir_all(&dir);
                open_on_disk(&dir)
            })
            .or_else(|error| {
                tracing::error!(%error, "the search index cannot be kept on disk; building it in memory");
                open_in_memory()
            })?;
        let Opened { writer, reader, needs_rebuild, dir } = opened;
        let (_, fields) = index::schema();
        let progress = Arc::new(Progress::default());
        let (work, receiver) = mpsc::channel();
        let shared = Arc::new(Shared {
            store: Arc::clone(&store),
            services,
            reader,
            fields,
            progress: Arc::clone(&progress),
            vectors: RwLock::default(),
            query_vectors: Mutex::default(),
            stopping: AtomicBool::new(false),
            semantic_down_until: Mutex::default(),
            answers: Mutex::default(),
            answers_by_meaning: Mutex::default(),
            loading_vectors: AtomicBool::new(false),
        });
        let documents = shared.reader.searcher().num_docs();
        progress.lock().documents = documents;
        if needs_rebuild {
            progress.lock().sent += 1;
            let _ = work.send(Work::Rebuild);
        } else if semantic::profile(&store).ok().flatten().is_some() {
            // The vectors live in memory: load them (from the cache).
            shared.loading_vectors.store(true, Ordering::SeqCst);
            progress.lock().sent += 1;
            let _ = work.send(Work::LoadVectors);
        }
        let subscription = work.clone();
        let subscription_progress = Arc::clone(&progress);
        store.subscribe(
            &[Kind::Projects, Kind::Versions, Kind::Comments],
            Box::new(move |committed| {
                subscription_progress.lock().sent += 1;
                subscription.send(Work::Committed(committed)).is_ok()
            }),
        );
        let worker = Worker { shared: Arc::clone(&shared), writer, receiver, dir, retry_embeddings: Vec::new(), retry_at: None };
        let worker = std::thread::Builder::new().name("inkstone-search-index".to_owned()).spawn(move || worker.run())?;
        Ok(SearchIndex { shared, work, worker: Some(worker) })
    }

    /// Rebuilds the index from the store (in the background; searches keep answering
    /// from the current index until the new one is committed).
    pub fn reindex(&self) {
        self.shared.progress.lock().sent += 1;
        let _ = self.work.send(Work::Rebuild);
    }

    /// Waits until the index has applied everything handed to it so far (and embedded
    /// what it could); false when `timeout` passed first.
    pub fn wait_idle(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let progress = &self.shared.progress;
        let mut state = progress.lock();
        while state.done < state.sent {
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            state = match progress.changed.wait_timeout(state, deadline - now) {
                Ok((state, _)) => state,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
        true
    }

    pub fn status(&self) -> IndexStatus {
        let (documents, building, pending) = {
            let state = self.shared.progress.lock();
            (state.documents, state.building, state.sent.saturating_sub(state.done))
        };
        let vectors = self.shared.vectors.read().unwrap_or_else(|poisoned| poisoned.into_inner());
        IndexStatus { documents, building, pending, embedding_model: vectors.model.clone(), vectors: vectors.by_doc.len() as u64, vectors_missing: vectors.missing as u64 }
    }

    /// Searches. An empty query (nothing but spaces and punctuation) finds nothing.
    ///
    /// Errors: INTERNAL when the index cannot be read (rebuild it); semantic failures
    /// are a notice, never an error.
    pub fn search(&self, request: &SearchRequest) -> Result<SearchResults, ApiError> {
        let terms = text::QueryTerms::new(&request.query);
        let mut notice = None;
        if self.shared.progress.lock().building {
            notice = Some(SearchNotice { code: NoticeCode::IndexBuilding, message: "The search index is being built; some documents may be missing.".to_owned() });
        }
        if terms.is_empty() {
            return Ok(SearchResults { hits: Vec::new(), semantic: false, notice });
        }
        let limit = request.limit.clamp(1, MAX_LIMIT);
        let depth = (limit * 10).max(200);
        let searcher = self.shared.reader.searcher();
        let fields = &self.shared.fields;
        let mut lists: Vec<rank::RankedList<DocAddress>> = Vec::new();
        if request.mode != SearchMode::Semantic {
            for (retriever, query) in index::lexical_queries(fields, &terms) {
                let Some(query) = query else { continue };
                let query = index::filtered(fields, query, &request.filter);
                let top = searcher.search(&query, &TopDocs::with_limit(depth).order_by_score()).map_err(IndexError::from)?;
                lists.push(rank::RankedList { retriever, docs: top.into_iter().map(|(score, address)| (address, score)).collect() });
            }
        }
        let mut semantic_used = false;
        if request.mode != SearchMode::Lexical {
            match self.semantic_list(&request.query, &request.filter, depth) {
                Ok(docs) => {
                    semantic_used = true;
                    let mut addressed = Vec::with_capacity(docs.len());
                    for (doc_id, similarity) in docs {
                        if let Some(address) = index::address_of(&searcher, fields, &doc_id).map_err(IndexError::from)? {
                            addressed.push((address, similarity));
                        }
                    }
                    lists.push(rank::RankedList { retriever: rank::Retriever::Semantic, docs: addressed });
                }
                Err(semantic_notice) => {
                    if notice.is_none() {
                        notice = Some(semantic_notice);
                    }
                }
            }
        }
        let fused = rank::fuse(&lists);
        let hits = self.hits(&searcher, &terms, &fused, request.scope, limit)?;
        Ok(SearchResults { hits, semantic: semantic_used, notice })
    }

    /// The documents nearest the query's meaning, best first, with their similarity;
    /// a notice when semantic search is off or failed.
    fn semantic_list(&self, query: &str, filter: &Filter, depth: usize) -> Result<Vec<(String, f32)>, SearchNotice> {
        let store = &self.shared.store;
        let off = |message: &str| SearchNotice { code: NoticeCode::SemanticOff, message: message.to_owned() };
        let profile = match semantic::profile(store) {
            Ok(Some(profile)) => profile,
            Ok(None) => return Err(off("No embedding model is configured; the results are lexical only.")),
            Err(error) => {
                return Err(SearchNotice { code: NoticeCode::SemanticFailed, message: format!("Semantic search is unavailable ({error}); the results are lexical only.") })
            }
        };
        let model = profile.embedding_model.clone().unwrap_or_default();
        {
            let vectors = self.shared.vectors.read().unwrap_or_else(|poisoned| poisoned.into_inner());
            if vectors.model.as_deref() != Some(model.as_str()) && vectors.last_error.is_none() && !self.shared.loading_vectors.swap(true, Ordering::SeqCst) {
                drop(vectors);
                // The model changed (or was just configured): embed again.
                self.shared.progress.lock().sent += 1;
                let _ = self.work.send(Work::LoadVectors);
            }
        }
        let paused = self.shared.semantic_down_until.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).is_some_and(|until| Instant::now() < until);
        if paused {
            return Err(SearchNotice { code: NoticeCode::SemanticFailed, message: "The embedding server failed recently; the results are lexical only.".to_owned() });
        }
        let query_vector = self.query_vector(&profile.id, &model, query).map_err(|error| {
            *self.shared.semantic_down_until.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(Instant::now() + SEMANTIC_PAUSE);
            SearchNotice { code: NoticeCode::SemanticFailed, message: format!("The embedding server failed ({:?}: {}); the results are lexical only.", error.code, error.message) }
        })?;
        let vectors = self.shared.vectors.read().unwrap_or_else(|poisoned| poisoned.into_inner());
        if vectors.model.as_deref() != Some(model.as_str()) {
            return Ok(Vec::new());
        }
        let mut scored: Vec<(String, f32)> = vectors
            .by_doc
            .iter()
            .filter(|(_, doc)| filter.admits(&doc.project_id, doc.kind, &doc.platforms))
            .map(|(doc_id, doc)| (doc_id.clone(), semantic::cosine(&query_vector, &doc.vector)))
            .filter(|(_, similarity)| *similarity >= rank::SIMILARITY_FLOOR)
            .collect();
        scored.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap_or(std::cmp::Ordering::Equal).then_with(|| a.0.cmp(&b.0)));
        scored.truncate(depth);
        Ok(scored)
    }

    fn query_vector(&self, profile_id: &str, model: &str, query: &str) -> Result<Vec<f32>, ApiError> {
        let key = (model.to_owned(), query.trim().to_owned());
        if let Some(vector) = self.shared.query_vectors.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).get(&key) {
            return Ok(vector.clone());
        }
        let services = &self.shared.services;
        let call = ModelCall { profile: profile_id, purpose: "search", session_id: None, run_id: None };
        let embeddings = services.llm.embed(
            &self.shared.store,
            services.clock.as_ref(),
            services.ids.as_ref(),
            call,
            std::slice::from_ref(&key.1),
            Some(QUERY_EMBED_TIMEOUT),
            &Cancel::new(),
        )?;
        let vector = semantic::unit(embeddings.vectors.into_iter().next().unwrap_or_default());
        let mut cache = self.shared.query_vectors.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if cache.len() >= 512 {
            cache.clear();
        }
        cache.insert(key, vector.clone());
        Ok(vector)
    }

    /// The hits of the fused candidates: one per project (workspace) or per content
    /// (project), each with its span and snippet.
    fn hits(
        &self,
        searcher: &tantivy::Searcher,
        terms: &text::QueryTerms,
        fused: &[rank::Fused<DocAddress>],
        scope: SearchScope,
        limit: usize,
    ) -> Result<Vec<SearchHit>, ApiError> {
        let fields = &self.shared.fields;
        // Within one project the text as it is now comes first when it matches: a
        // person searching their project looks for where the words are, and an older,
        // shorter version would otherwise rank above it (BM25 favours short texts).
        let mut order: Vec<&rank::Fused<DocAddress>> = fused.iter().collect();
        if scope == SearchScope::Project {
            if let Some(first) = fused.first() {
                let project_id = index::stored(searcher, fields, first.key).map_err(IndexError::from)?.project_id;
                let texts = index::project_texts(searcher, fields, &project_id).map_err(IndexError::from)?;
                if let Some((working, _)) = texts.iter().find(|(_, version)| version.is_none()) {
                    if let Some(at) = order.iter().position(|c| c.key == *working) {
                        let candidate = order.remove(at);
                        order.insert(0, candidate);
                    }
                }
            }
        }
        let mut groups: Vec<(String, index::StoredDoc, &rank::Fused<DocAddress>)> = Vec::new();
        for candidate in order {
            let doc = index::stored(searcher, fields, candidate.key).map_err(IndexError::from)?;
            let group = match (doc.kind, scope) {
                (DocKind::Comment, _) => format!("c/{}", doc.doc_id),
                (_, SearchScope::Workspace) => format!("p/{}", doc.project_id),
                (_, SearchScope::Project) => format!("h/{}", doc.text_hash),
            };
            let n_groups = groups.len();
            match groups.iter_mut().find(|(g, _, _)| *g == group) {
                Some((_, kept, _)) => {
                    // The same content in the working copy and versions: the working
                    // copy, else the newest version, speaks for it (at the best rank).
                    let newer = |d: &index::StoredDoc| (d.kind == DocKind::Working, d.version.unwrap_or(0));
                    if doc.text_hash == kept.text_hash && newer(&doc) > newer(kept) {
                        *kept = doc;
                    }
                }
                None if n_groups < limit => groups.push((group, doc, candidate)),
                None => break,
            }
        }
        let mut also_in: Vec<Vec<u32>> = vec![Vec::new(); groups.len()];
        if scope == SearchScope::Workspace {
            // A project's best-ranked text is often an old version (shorter texts score
            // higher under BM25), but a person looks for the text as it is now: the
            // working copy speaks for the project whenever it matches, else the newest
            // matching version; the other matching versions are named under it.
            let matched: std::collections::HashSet<DocAddress> = fused.iter().map(|f| f.key).collect();
            for ((_, kept, _), also) in groups.iter_mut().zip(also_in.iter_mut()) {
                if kept.kind == DocKind::Comment {
                    continue;
                }
                let mut texts: Vec<(DocAddress, Option<u32>)> =
                    index::project_texts(searcher, fields, &kept.project_id).map_err(IndexError::from)?.into_iter().filter(|(address, _)| matched.contains(address)).collect();
                // The working copy (no number) first, then the newest version.
                texts.sort_by_key(|(_, version)| std::cmp::Reverse(version.map_or(u64::MAX, u64::from)));
                let Some((speaker, number)) = texts.first().copied() else { continue };
                if kept.version != number {
                    *kept = index::stored(searcher, fields, speaker).map_err(IndexError::from)?;
                }
                *also = texts.iter().filter_map(|(_, version)| *version).filter(|v| Some(*v) != number).collect();
                also.sort_unstable();
            }
        }
        let mut hits = Vec::with_capacity(groups.len());
        for ((_, doc, candidate), also_in) in groups.into_iter().zip(also_in) {
            let summary = self.shared.store.get::<ProjectSummary>(doc.project_id.as_bytes())?;
            let located = text::locate(&doc.body, terms);
            let (span, snippet) = match (doc.kind, located) {
                (DocKind::Comment, Some(located)) => (doc.anchor, located.snippet),
                (DocKind::Comment, None) => (doc.anchor, text::opening(&doc.body)),
                (_, Some(located)) => (Some(located.span), located.snippet),
                (_, None) => (None, text::opening(if doc.summary.is_empty() { &doc.body } else { &doc.summary })),
            };
            hits.push(SearchHit {
                project_title: summary.as_ref().map(|s| s.title.clone()).unwrap_or_else(|| doc.title.clone()),
                archived: summary.as_ref().is_some_and(|s| s.archived),
                project_id: doc.project_id,
                kind: doc.kind,
                version: doc.version,
                comment_id: doc.comment_id,
                title: doc.title,
                span,
                snippet,
                tier: candidate.tier,
                score: candidate.rrf,
                also_in,
            });
        }
        Ok(hits)
    }

    /// The numbered sources of an answer: for each hit of `request`, a window of
    /// [`SOURCE_CHARS`] characters of its document around the match.
    ///
    /// Errors: INTERNAL when the index cannot be read.
    pub fn sources(&self, request: &SearchRequest) -> Result<(Vec<ask::Source>, Option<SearchNotice>), ApiError> {
        let results = self.search(request)?;
        let searcher = self.shared.reader.searcher();
        let fields = &self.shared.fields;
        let mut sources = Vec::new();
        for hit in results.hits {
            let doc_id = match (hit.kind, hit.version, &hit.comment_id) {
                (DocKind::Version, Some(number), _) => version_id(&hit.project_id, number),
                (DocKind::Comment, _, Some(comment)) => comment_id(&hit.project_id, comment),
                _ => working_id(&hit.project_id),
            };
            let Some(address) = index::address_of(&searcher, fields, &doc_id).map_err(IndexError::from)? else { continue };
            let doc = index::stored(&searcher, fields, address).map_err(IndexError::from)?;
            // A comment's span is its anchor in the project; its source is its body.
            let around = if hit.kind == DocKind::Comment { None } else { hit.span };
            let (text, span) = window(&doc.body, around, SOURCE_CHARS);
            sources.push(ask::Source {
                n: sources.len() as u32 + 1,
                project_id: hit.project_id,
                project_title: hit.project_title,
                kind: hit.kind,
                version: hit.version,
                comment_id: hit.comment_id,
                span,
                text,
                tier: hit.tier,
            });
        }
        Ok((sources, results.notice))
    }

    /// How many times the index has committed: it changes whenever what a search can
    /// find changes.
    pub fn generation(&self) -> u64 {
        self.shared.progress.lock().commits
    }

    /// A cached answer for `key` given at most [`ANSWER_TTL_SECONDS`] before `now`.
    pub fn cached_answer(&self, key: &str, now: crate::model::Timestamp) -> Option<ask::Answer> {
        let mut answers = self.shared.answers.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        answers.retain(|_, (at, _)| (now - *at).num_seconds() < ANSWER_TTL_SECONDS);
        answers.get(key).map(|(_, answer)| answer.clone())
    }

    pub fn cache_answer(&self, key: String, now: crate::model::Timestamp, answer: ask::Answer) {
        let mut answers = self.shared.answers.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if answers.len() >= 256 {
            answers.clear();
        }
        answers.insert(key, (now, answer));
    }

    /// The unit vector of a question, for the answer cache: `None` without an
    /// embedding model, or while (or when) the embedding server fails. The same
    /// question's retrieval reuses it (query vectors are kept in memory).
    pub fn question_vector(&self, question: &str) -> Option<Vec<f32>> {
        let profile = semantic::profile(&self.shared.store).ok().flatten()?;
        let model = profile.embedding_model.clone()?;
        let paused = self.shared.semantic_down_until.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).is_some_and(|until| Instant::now() < until);
        if paused {
            return None;
        }
        match self.query_vector(&profile.id, &model, question) {
            Ok(vector) => Some(vector),
            Err(_) => {
                // The search that follows would wait for the same failing server again.
                *self.shared.semantic_down_until.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(Instant::now() + SEMANTIC_PAUSE);
                None
            }
        }
    }

    /// A cached answer, given at most [`ANSWER_TTL_SECONDS`] before `now` in the same
    /// `context`, to a question whose meaning is at least [`SAME_QUESTION`] similar to
    /// `vector`.
    pub fn cached_answer_by_meaning(&self, context: &str, vector: &[f32], now: crate::model::Timestamp) -> Option<ask::Answer> {
        let mut answers = self.shared.answers_by_meaning.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        answers.retain(|a| (now - a.at).num_seconds() < ANSWER_TTL_SECONDS);
        answers
            .iter()
            .filter(|a| a.context == context)
            .map(|a| (semantic::cosine(&a.vector, vector), a))
            .filter(|(similarity, _)| *similarity >= SAME_QUESTION)
            .max_by(|a, b| a.0.partial_cmp(&b.0).unwrap_or(std::cmp::Ordering::Equal))
            .map(|(_, a)| a.answer.clone())
    }

    pub fn cache_answer_by_meaning(&self, context: String, vector: Vec<f32>, now: crate::model::Timestamp, answer: ask::Answer) {
        let mut answers = self.shared.answers_by_meaning.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if answers.len() >= 256 {
            answers.clear();
        }
        answers.push(AnswerByMeaning { context, vector, at: now, answer });
    }

    /// The BM25 baseline (one query over title and body words, no tiers, no literal
    /// field, no snippets): the top `limit` document ids. For the benchmark.
    pub fn plain_bm25(&self, query: &str, limit: usize) -> Result<Vec<String>, ApiError> {
        let terms = text::QueryTerms::new(query);
        let Some(query) = index::plain_bm25(&self.shared.fields, &terms) else { return Ok(Vec::new()) };
        let searcher = self.shared.reader.searcher();
        let top = searcher.search(&query, &TopDocs::with_limit(limit).order_by_score()).map_err(IndexError::from)?;
        let mut out = Vec::with_capacity(top.len());
        for (_, address) in top {
            let doc: TantivyDocument = searcher.doc(address).map_err(IndexError::from)?;
            use tantivy::schema::Value;
            out.push(doc.get_first(self.shared.fields.doc_id).and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default());
        }
        Ok(out)
    }
}

impl Drop for SearchIndex {
    fn drop(&mut self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        let _ = self.work.send(Work::Stop);
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}

/// The index's thread: it owns the writer.
struct Worker {
    shared: Arc<Shared>,
    writer: IndexWriter,
    receiver: Receiver<Work>,
    /// The index folder (`None` for an index in memory).
    dir: Option<PathBuf>,
    /// Documents whose embedding failed, to try again at `retry_at`.
    retry_embeddings: Vec<IndexDoc>,
    retry_at: Option<Instant>,
}

impl Worker {
    fn run(mut self) {
        loop {
            let first = match self.retry_at {
                Some(at) => match self.receiver.recv_timeout(at.saturating_duration_since(Instant::now())) {
                    Ok(work) => Some(work),
                    Err(RecvTimeoutError::Timeout) => None,
                    Err(RecvTimeoutError::Disconnected) => break,
                },
                None => match self.receiver.recv() {
                    Ok(work) => Some(work),
                    Err(_) => break,
                },
            };
            let Some(first) = first else {
                let retry = std::mem::take(&mut self.retry_embeddings);
                self.retry_at = None;
                self.embed(retry);
                continue;
            };
            let mut batch = vec![first];
            let deadline = Instant::now() + GATHER;
            while let Ok(work) = self.receiver.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                batch.push(work);
            }
            let n = batch.len() as u64;
            let stop = batch.iter().any(|w| matches!(w, Work::Stop));
            if let Err(error) = self.handle(batch) {
                tracing::error!(%error, "the search index could not apply changes; rebuilding it");
                if let Err(error) = self.rebuild() {
                    tracing::error!(%error, "the search index rebuild failed");
                }
            }
            {
                let mut state = self.shared.progress.lock();
                state.done += n;
                state.documents = self.shared.reader.searcher().num_docs();
            }
            self.shared.progress.changed.notify_all();
            if stop {
                break;
            }
        }
        if let Some(dir) = &self.dir {
            if let Err(error) = write_state(dir, true) {
                tracing::warn!(%error, "the search index state could not be written; it will be rebuilt on open");
            }
        }
    }

    fn handle(&mut self, batch: Vec<Work>) -> Result<(), IndexError> {
        let rebuild = batch.iter().any(|w| matches!(w, Work::Rebuild)) || batch.iter().map(|w| if let Work::Committed(c) = w { c.len() } else { 0 }).sum::<usize>() > REBUILD_OVER;
        if rebuild {
            return self.rebuild();
        }
        if batch.iter().any(|w| matches!(w, Work::LoadVectors)) {
            self.load_vectors()?;
        }
        let mut changed: Vec<IndexDoc> = Vec::new();
        for work in &batch {
            if let Work::Committed(committed) = work {
                for change in committed.iter() {
                    if let Some(doc) = self.apply(change)? {
                        changed.retain(|d| d.doc_id != doc.doc_id);
                        changed.push(doc);
                    }
                }
            }
        }
        if batch.iter().any(|w| matches!(w, Work::Committed(_))) {
            self.writer.commit()?;
            self.shared.reader.reload()?;
            self.shared.progress.lock().commits += 1;
        }
        self.embed(changed);
        Ok(())
    }

    /// Applies one change of the store; returns the document it (re)indexed.
    fn apply(&mut self, change: &Change) -> Result<Option<IndexDoc>, IndexError> {
        let fields = self.shared.fields;
        let decode_failed = |error: crate::store::CodecError| IndexError::Store(StoreError::Database(error.to_string()));
        let doc = match change.kind {
            Kind::Projects => match change.record::<Project>() {
                Some(project) => IndexDoc::working(&project.map_err(decode_failed)?),
                None => {
                    let project_id = String::from_utf8_lossy(&change.key).into_owned();
                    self.writer.delete_term(Term::from_field_text(fields.project_id, &project_id));
                    self.forget_vectors(|v| v.project_id == project_id);
                    return Ok(None);
                }
            },
            Kind::Versions => match change.record::<Version>() {
                Some(version) => IndexDoc::version(&version.map_err(decode_failed)?),
                None => {
                    if let Some((project_id, rest)) = split_key(&change.key) {
                        if let Ok(number) = <[u8; 4]>::try_from(rest) {
                            self.delete_doc(&version_id(&project_id, u32::from_be_bytes(number)));
                        }
                    }
                    return Ok(None);
                }
            },
            Kind::Comments => match change.record::<Comment>() {
                Some(comment) => IndexDoc::comment(&comment.map_err(decode_failed)?),
                None => {
                    if let Some((project_id, rest)) = split_key(&change.key) {
                        self.delete_doc(&comment_id(&project_id, &String::from_utf8_lossy(rest)));
                    }
                    return Ok(None);
                }
            },
            // Not searchable (the subscription does not even ask for them); a new kind
            // must be decided on here.
            Kind::Meta
            | Kind::ProjectSummaries
            | Kind::Outbox
            | Kind::SyncProjects
            | Kind::SyncConflicts
            | Kind::Activities
            | Kind::BrandProfiles
            | Kind::Templates
            | Kind::Media
            | Kind::LlmProfiles
            | Kind::UsageRecords
            | Kind::PlatformDrafts
            | Kind::Sessions
            | Kind::SessionEvents
            | Kind::ToolResults
            | Kind::ContextSnapshots
            | Kind::Approvals
            | Kind::ToolExecutions
            | Kind::Proposals
            | Kind::ProposalIndex
            | Kind::ProposalAudit
            | Kind::Constraints
            | Kind::Checkpoints
            | Kind::Staging
            | Kind::Embeddings
            | Kind::Memory
            | Kind::ProjectBudgets
            | Kind::OptimizeRuns
            | Kind::PerfAccounts
            | Kind::Publications
            | Kind::MetricSnapshots
            | Kind::PerfImports => return Ok(None),
        };
        self.delete_doc(&doc.doc_id);
        self.writer.add_document(index::document(&fields, &doc))?;
        Ok(Some(doc))
    }

    fn delete_doc(&mut self, doc_id: &str) {
        self.writer.delete_term(Term::from_field_text(self.shared.fields.doc_id, doc_id));
        self.retry_embeddings.retain(|d| d.doc_id != doc_id);
        let mut vectors = self.shared.vectors.write().unwrap_or_else(|poisoned| poisoned.into_inner());
        vectors.by_doc.remove(doc_id);
        vectors.missing = self.retry_embeddings.len();
    }

    fn forget_vectors(&self, which: impl Fn(&DocVector) -> bool) {
        let mut vectors = self.shared.vectors.write().unwrap_or_else(|poisoned| poisoned.into_inner());
        vectors.by_doc.retain(|_, v| !which(v));
    }

    /// Gives every document of the store its vector (nothing without an embedding
    /// profile). Stops early when the index closes.
    fn load_vectors(&mut self) -> Result<(), IndexError> {
        let result = self.load_vectors_inner();
        self.shared.loading_vectors.store(false, Ordering::SeqCst);
        result
    }

    fn load_vectors_inner(&mut self) -> Result<(), IndexError> {
        if semantic::profile(&self.shared.store)?.is_none() {
            return Ok(());
        }
        let store = Arc::clone(&self.shared.store);
        let mut docs = Vec::new();
        let mut keep = |doc: IndexDoc| -> Result<(), IndexError> {
            docs.push(doc);
            Ok(())
        };
        for_each_record::<Project>(&store, |p| keep(IndexDoc::working(&p)))?;
        for_each_record::<Version>(&store, |v| keep(IndexDoc::version(&v)))?;
        for_each_record::<Comment>(&store, |c| keep(IndexDoc::comment(&c)))?;
        if !self.shared.stopping.load(Ordering::SeqCst) {
            self.embed(docs);
        }
        Ok(())
    }

    /// Replaces the whole index with the store's records, committed at once.
    fn rebuild(&mut self) -> Result<(), IndexError> {
        self.shared.progress.lock().building = true;
        self.shared.progress.changed.notify_all();
        let result = self.rebuild_inner();
        self.shared.progress.lock().building = false;
        result
    }

    fn rebuild_inner(&mut self) -> Result<(), IndexError> {
        let started = Instant::now();
        self.writer.delete_all_documents()?;
        let fields = self.shared.fields;
        let embedding = semantic::profile(&self.shared.store)?.is_some();
        let mut docs_for_vectors: Vec<IndexDoc> = Vec::new();
        let mut n = 0usize;
        let store = Arc::clone(&self.shared.store);
        let mut add = |writer: &mut IndexWriter, doc: IndexDoc| -> Result<(), IndexError> {
            writer.add_document(index::document(&fields, &doc))?;
            n += 1;
            if embedding {
                docs_for_vectors.push(doc);
            }
            Ok(())
        };
        for_each_record::<Project>(&store, |p| add(&mut self.writer, IndexDoc::working(&p)))?;
        for_each_record::<Version>(&store, |v| add(&mut self.writer, IndexDoc::version(&v)))?;
        for_each_record::<Comment>(&store, |c| add(&mut self.writer, IndexDoc::comment(&c)))?;
        self.writer.commit()?;
        self.shared.reader.reload()?;
        self.shared.progress.lock().commits += 1;
        tracing::info!(documents = n, elapsed = ?started.elapsed(), "search index rebuilt");
        {
            let mut vectors = self.shared.vectors.write().unwrap_or_else(|poisoned| poisoned.into_inner());
            vectors.by_doc.clear();
            vectors.model = None;
            vectors.missing = 0;
            vectors.last_error = None;
        }
        self.retry_embeddings.clear();
        self.retry_at = None;
        self.embed(docs_for_vectors);
        Ok(())
    }

    /// Gives `docs` their vectors: from the cache, else from the embedding model (in
    /// batches; cached). Nothing when no embedding model is configured. A failure is
    /// kept (searches say so) and tried again later.
    fn embed(&mut self, docs: Vec<IndexDoc>) {
        if docs.is_empty() {
            return;
        }
        let store = Arc::clone(&self.shared.store);
        let profile = match semantic::profile(&store) {
            Ok(Some(profile)) => profile,
            Ok(None) => return,
            Err(error) => {
                tracing::warn!(%error, "the embedding profile cannot be read");
                return;
            }
        };
        let model = profile.embedding_model.clone().unwrap_or_default();
        {
            let mut vectors = self.shared.vectors.write().unwrap_or_else(|poisoned| poisoned.into_inner());
            if vectors.model.as_deref() != Some(model.as_str()) {
                vectors.by_doc.clear();
                vectors.model = Some(model.clone());
            }
        }
        // These are tried now: a failure puts them back on the retry list.
        let attempted: std::collections::HashSet<&str> = docs.iter().map(|d| d.doc_id.as_str()).collect();
        self.retry_embeddings.retain(|d| !attempted.contains(d.doc_id.as_str()));
        let mut missing: Vec<(IndexDoc, String, String)> = Vec::new();
        for doc in docs {
            let embedded_text = semantic::embedding_text(&doc);
            let hash = crate::store::sha256_ref(embedded_text.as_bytes());
            match store.get::<CachedEmbedding>(&semantic::cache_key(&model, &hash)) {
                Ok(Some(cached)) => self.keep_vector(&doc, cached.vector),
                _ => missing.push((doc, embedded_text, hash)),
            }
        }
        let services = self.shared.services.clone();
        let mut failed: Vec<IndexDoc> = Vec::new();
        let mut chunks = missing.chunks(EMBED_BATCH);
        for chunk in chunks.by_ref() {
            if self.shared.stopping.load(Ordering::SeqCst) {
                failed.extend(chunk.iter().map(|(d, _, _)| d.clone()));
                continue;
            }
            let texts: Vec<String> = chunk.iter().map(|(_, t, _)| t.clone()).collect();
            let call = ModelCall { profile: &profile.id, purpose: "search_index", session_id: None, run_id: None };
            match services.llm.embed(&store, services.clock.as_ref(), services.ids.as_ref(), call, &texts, None, &Cancel::new()) {
                Ok(embeddings) => {
                    let mut batch = Batch::new();
                    for ((doc, _, hash), vector) in chunk.iter().zip(embeddings.vectors) {
                        let cached = CachedEmbedding { model: model.clone(), text_hash: hash.clone(), vector };
                        let _ = batch.put(&cached);
                        self.keep_vector(doc, cached.vector);
                    }
                    let _guard = store.write_lock();
                    if let Err(error) = store.apply(batch, Durability::Grouped) {
                        tracing::warn!(%error, "embeddings could not be cached");
                    }
                }
                Err(error) => {
                    tracing::warn!(code = ?error.code, message = %error.message, "embedding documents failed; semantic search waits for the server");
                    self.shared.vectors.write().unwrap_or_else(|poisoned| poisoned.into_inner()).last_error = Some(error.code);
                    failed.extend(chunk.iter().map(|(d, _, _)| d.clone()));
                    break;
                }
            }
        }
        for rest in chunks {
            failed.extend(rest.iter().map(|(d, _, _)| d.clone()));
        }
        if !failed.is_empty() {
            self.retry_embeddings.extend(failed);
            self.retry_at = Some(Instant::now() + EMBED_RETRY);
        }
        // Documents that failed earlier and still wait for their retry are missing too.
        let mut vectors = self.shared.vectors.write().unwrap_or_else(|poisoned| poisoned.into_inner());
        vectors.missing = self.retry_embeddings.len();
        if self.retry_embeddings.is_empty() {
            vectors.last_error = None;
        }
    }

    fn keep_vector(&self, doc: &IndexDoc, vector: Vec<f32>) {
        let mut vectors = self.shared.vectors.write().unwrap_or_else(|poisoned| poisoned.into_inner());
        vectors
            .by_doc
            .insert(doc.doc_id.clone(), DocVector { project_id: doc.project_id.clone(), kind: doc.kind, platforms: doc.platforms.clone(), vector: semantic::unit(vector) });
    }
}

/// `project_id 0x00 rest` of a per-project key.
fn split_key(key: &[u8]) -> Option<(String, &[u8])> {
    let at = key.iter().position(|b| *b == 0)?;
    Some((String::from_utf8_lossy(&key[..at]).into_owned(), &key[at + 1..]))
}

/// Calls `each` for every record of a kind, reading the store a page at a time.
fn for_each_record<R: Record>(store: &Store, mut each: impl FnMut(R) -> Result<(), IndexError>) -> Result<(), IndexError> {
    const PAGE: usize = 256;
    let mut from: Vec<u8> = Vec::new();
    loop {
        let page = store.scan_from_limit::<R>(b"", &from, PAGE)?;
        let n = page.len();
        for record in page {
            from = record.key();
            from.push(0);
            each(record)?;
        }
        if n < PAGE {
            return Ok(());
        }
    }
}

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
