//! The index's thread: it applies the store's committed changes to the index,
//! rebuilds it, and loads the documents' vectors.

use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use tantivy::{IndexWriter, Term};

use crate::model::{Comment, Project, Version};
use crate::store::{Change, Kind, Record, Store};

use super::doc::{comment_id, version_id};
use super::embed::DocVector;
use super::lifecycle::write_state;
use super::*;

/// How long the thread gathers more work before committing, so a burst of writes
/// (a save writes the version and the project) commits once.
const GATHER: Duration = Duration::from_millis(20);
/// A committed batch with more changes than this (an import, a restore) rebuilds
/// the index instead of updating it document by document.
const REBUILD_OVER: usize = 2000;

/// The index's thread: it owns the writer.
pub(super) struct Worker {
    pub(super) shared: Arc<Shared>,
    pub(super) writer: IndexWriter,
    pub(super) receiver: Receiver<Work>,
    /// The index folder (`None` for an index in memory).
    pub(super) dir: Option<PathBuf>,
    /// Documents whose embedding failed, to try again at `retry_at`.
    pub(super) retry_embeddings: Vec<IndexDoc>,
    pub(super) retry_at: Option<Instant>,
}

impl Worker {
    pub(super) fn run(mut self) {
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
            | Kind::OpenProposals
            | Kind::ProposalAudit
            | Kind::AuditIndex
            | Kind::UsageIndex
            | Kind::AccountSnapshots
            | Kind::UsageTotals
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
            | Kind::MetricPoints
            | Kind::SnapshotMetrics
            | Kind::PerfImports
            | Kind::PerfOutbox => return Ok(None),
        };
        self.delete_doc(&doc.doc_id);
        self.writer.add_document(index::document(&fields, &doc))?;
        Ok(Some(doc))
    }

    pub(super) fn delete_doc(&mut self, doc_id: &str) {
        self.writer.delete_term(Term::from_field_text(self.shared.fields.doc_id, doc_id));
        self.retry_embeddings.retain(|d| d.doc_id != doc_id);
        let mut vectors = self.shared.vectors.write().unwrap_or_else(|poisoned| poisoned.into_inner());
        vectors.by_doc.remove(doc_id);
        vectors.missing = self.retry_embeddings.len();
    }

    pub(super) fn forget_vectors(&self, which: impl Fn(&DocVector) -> bool) {
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
    pub(super) fn rebuild(&mut self) -> Result<(), IndexError> {
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
