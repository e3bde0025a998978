//! Opening and closing the index: the folder and its state file, the state the
//! index shares with its thread, and the progress that searches and tests wait on.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Condvar, Mutex, MutexGuard, RwLock};
use std::time::{Duration, Instant};

use tantivy::{IndexReader, IndexWriter, ReloadPolicy};

use crate::store::{Committed, Kind, Store};

use super::answers::AnswerByMeaning;
use super::embed::Vectors;
use super::worker::Worker;
use super::*;

/// Work for the index's thread.
pub(super) enum Work {
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
pub(super) struct Progress {
    pub(super) state: Mutex<ProgressState>,
    pub(super) changed: Condvar,
}

#[derive(Default)]
pub(super) struct ProgressState {
    pub(super) sent: u64,
    pub(super) done: u64,
    pub(super) building: bool,
    pub(super) documents: u64,
    /// Commits of the index so far: what an answer was given from.
    pub(super) commits: u64,
}

impl Progress {
    pub(super) fn lock(&self) -> MutexGuard<'_, ProgressState> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

pub(super) struct Shared {
    pub(super) store: Arc<Store>,
    pub(super) services: Services,
    pub(super) reader: IndexReader,
    pub(super) fields: index::Fields,
    pub(super) progress: Arc<Progress>,
    pub(super) vectors: RwLock<Vectors>,
    /// Query vectors by (model, query), so repeating a search costs no model call.
    pub(super) query_vectors: Mutex<HashMap<(String, String), Vec<f32>>>,
    /// Set when the index closes: long work (loading vectors) stops early.
    pub(super) stopping: AtomicBool,
    /// After a query vector failed, searches skip semantic retrieval until then, so a
    /// hung embedding server costs one search its timeout, not every keystroke.
    pub(super) semantic_down_until: Mutex<Option<Instant>>,
    /// Answers of `search.ask` by question, scope, profile and index generation.
    pub(super) answers: Mutex<HashMap<String, (crate::model::Timestamp, ask::Answer)>>,
    /// Answers by the meaning of their question (when embeddings are on).
    pub(super) answers_by_meaning: Mutex<Vec<AnswerByMeaning>>,
    /// A `LoadVectors` is queued or running.
    pub(super) loading_vectors: AtomicBool,
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

pub(super) fn write_state(dir: &Path, clean: bool) -> std::io::Result<()> {
    let bytes = serde_json::to_vec(&StateFile { schema: index::SCHEMA, clean }).map_err(std::io::Error::other)?;
    crate::store::write_file_durably(&dir.join(STATE_FILE), &bytes)
}

/// Bytes of the writer's memory arena (tantivy's minimum is 15 MB).
const WRITER_MEMORY: usize = 24_000_000;

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

    /// How many times the index has committed: it changes whenever what a search can
    /// find changes.
    pub fn generation(&self) -> u64 {
        self.shared.progress.lock().commits
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
