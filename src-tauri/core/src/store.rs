//! sled behind typed repositories. Nothing else in the engine imports sled (the disk
//! syncs are `inkstone-durable`'s, shared with the workspace server).
//!
//! Layout: one tree per record kind (never one per project). Keys are record ids, or
//! `project_id 0x00 big-endian number` for ordered per-project records. Every value is
//! framed and checksummed (`codec`).
//!
//! Durability contract (sled 0.34's `flush` on Linux is `sync_file_range`, which is not
//! power-loss durable): a [`Durability::Durable`] write is flushed, then sled's log and
//! every file of the database that changed since the last sync are `fdatasync`ed and
//! every folder whose entries changed is `fsync`ed, before `apply` returns
//! ([`GroupSync`]; concurrent syncs are shared). A
//! [`Durability::Grouped`] write (autosave) marks the store dirty; a background thread
//! syncs at most `group_commit_millis` later, so typing never waits on a disk sync.

pub mod codec;
mod migrate;

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use inkstone_durable::{GroupSync, SyncError};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::error::{ApiError, ErrorCode};
use crate::model::{Activity, BrandProfile, Comment, ContentTemplate, MediaAsset, PlatformDraft, Project, ProjectSummary, Version, Workspace};
pub use codec::CodecError;

/// The schema this build writes. Bump it together with a step in `migrate`.
pub const SCHEMA_VERSION: u32 = 2;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("the data folder {path} is in use by {holder}")]
    Locked { path: PathBuf, holder: String },
    #[error("the store at {path} is damaged: {detail}")]
    Corrupt { path: PathBuf, detail: String },
    #[error("the store at {path} has schema version {found}; this build understands up to {supported}")]
    TooNew { path: PathBuf, found: u32, supported: u32 },
    #[error("storage I/O failed: {0}")]
    Io(#[from] std::io::Error),
    #[error("the database failed: {0}")]
    Database(String),
}

impl From<sled::Error> for StoreError {
    fn from(error: sled::Error) -> Self {
        StoreError::Database(error.to_string())
    }
}

/// The record kinds, one sled tree each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    Meta,
    Projects,
    ProjectSummaries,
    Versions,
    Comments,
    Activities,
    BrandProfiles,
    Templates,
    Media,
    LlmProfiles,
    UsageRecords,
    PlatformDrafts,
    /// Harness sessions (one record each).
    Sessions,
    /// Harness event logs: `session_id 0x00 sequence(u64 BE)`.
    SessionEvents,
    /// Large tool results, content-addressed (`sha256:<hex>`), outside the logs.
    ToolResults,
    /// Immutable context snapshots, content-addressed.
    ContextSnapshots,
    /// Recorded approval decisions, bound to tool, input hash, target version and
    /// idempotency key.
    Approvals,
    /// Executed write tools by idempotency key, so a write runs at most once.
    ToolExecutions,
    /// Proposals: `project_id 0x00 proposal_id` (ids sort by creation).
    Proposals,
    /// Proposal id → its project, so a proposal can be found by id alone.
    ProposalIndex,
    /// Who accepted or rejected which hunks of which proposal, from which model.
    ProposalAudit,
    /// Durable constraints of a session or run (rejection reasons):
    /// `owner_id 0x00 constraint_id`.
    Constraints,
    /// Checkpoints: `owner_id 0x00 checkpoint_id`.
    Checkpoints,
    /// A session's staged proposals (its working copy), one record per session.
    Staging,
    /// Sync delivery jobs, one per accepted version of a linked workspace.
    Outbox,
    /// Per project: the workspace server's head this client has seen, and the local
    /// version that holds the same content (the base of the next push).
    SyncProjects,
    /// Sync conflicts: a push on a stale base or a pull onto edited work, for the
    /// person to resolve.
    SyncConflicts,
    /// Embedding vectors of search documents, by model and content hash: a cache the
    /// search index refills, so it is neither exported nor counted as user data.
    Embeddings,
    /// Memory items of a workspace or a project, and dismissed habits:
    /// `scope_id 0x00 memory_id`.
    Memory,
    /// Token and cost budgets of a project, one record each.
    ProjectBudgets,
    /// Optimization runs (one record each, by run id); their logs are in
    /// `SessionEvents` under the run id.
    OptimizeRuns,
    /// Publishing accounts of the workspace (`performance`), by id.
    PerfAccounts,
    /// Publications (`performance`): a project's version published somewhere, by id.
    Publications,
    /// Metric snapshots, append-only: `publication_id 0x00 snapshot_id`.
    MetricSnapshots,
    /// Imports of platform exports, by the file's SHA-256 (re-importing changes nothing).
    PerfImports,
}

impl Kind {
    const ALL: [Kind; 35] = [
        Kind::Meta,
        Kind::Projects,
        Kind::ProjectSummaries,
        Kind::Versions,
        Kind::Comments,
        Kind::Activities,
        Kind::BrandProfiles,
        Kind::Templates,
        Kind::Media,
        Kind::LlmProfiles,
        Kind::UsageRecords,
        Kind::PlatformDrafts,
        Kind::Sessions,
        Kind::SessionEvents,
        Kind::ToolResults,
        Kind::ContextSnapshots,
        Kind::Approvals,
        Kind::ToolExecutions,
        Kind::Proposals,
        Kind::ProposalIndex,
        Kind::ProposalAudit,
        Kind::Constraints,
        Kind::Checkpoints,
        Kind::Staging,
        Kind::Outbox,
        Kind::Embeddings,
        Kind::Memory,
        Kind::ProjectBudgets,
        Kind::SyncProjects,
        Kind::SyncConflicts,
        Kind::OptimizeRuns,
        Kind::PerfAccounts,
        Kind::Publications,
        Kind::MetricSnapshots,
        Kind::PerfImports,
    ];

    fn tree_name(self) -> &'static str {
        match self {
            Kind::Meta => "meta",
            Kind::Projects => "projects",
            Kind::ProjectSummaries => "project_summaries",
            Kind::Versions => "versions",
            Kind::Comments => "comments",
            Kind::Activities => "activities",
            Kind::BrandProfiles => "brand_profiles",
            Kind::Templates => "templates",
            Kind::Media => "media",
            Kind::LlmProfiles => "llm_profiles",
            Kind::UsageRecords => "usage_records",
            Kind::PlatformDrafts => "platform_drafts",
            Kind::Sessions => "sessions",
            Kind::SessionEvents => "session_events",
            Kind::ToolResults => "tool_results",
            Kind::ContextSnapshots => "context_snapshots",
            Kind::Approvals => "approvals",
            Kind::ToolExecutions => "tool_executions",
            Kind::Proposals => "proposals",
            Kind::ProposalIndex => "proposal_index",
            Kind::ProposalAudit => "proposal_audit",
            Kind::Constraints => "constraints",
            Kind::Checkpoints => "checkpoints",
            Kind::Staging => "staging",
            Kind::Outbox => "outbox",
            Kind::Embeddings => "embeddings",
            Kind::Memory => "memory",
            Kind::ProjectBudgets => "project_budgets",
            Kind::SyncProjects => "sync_projects",
            Kind::SyncConflicts => "sync_conflicts",
            Kind::OptimizeRuns => "optimize_runs",
            Kind::PerfAccounts => "perf_accounts",
            Kind::Publications => "publications",
            Kind::MetricSnapshots => "metric_snapshots",
            Kind::PerfImports => "perf_imports",
        }
    }

    fn index(self) -> usize {
        match self {
            Kind::Meta => 0,
            Kind::Projects => 1,
            Kind::ProjectSummaries => 2,
            Kind::Versions => 3,
            Kind::Comments => 4,
            Kind::Activities => 5,
            Kind::BrandProfiles => 6,
            Kind::Templates => 7,
            Kind::Media => 8,
            Kind::LlmProfiles => 9,
            Kind::UsageRecords => 10,
            Kind::PlatformDrafts => 11,
            Kind::Sessions => 12,
            Kind::SessionEvents => 13,
            Kind::ToolResults => 14,
            Kind::ContextSnapshots => 15,
            Kind::Approvals => 16,
            Kind::ToolExecutions => 17,
            Kind::Proposals => 18,
            Kind::ProposalIndex => 19,
            Kind::ProposalAudit => 20,
            Kind::Constraints => 21,
            Kind::Checkpoints => 22,
            Kind::Staging => 23,
            Kind::Outbox => 24,
            Kind::Embeddings => 25,
            Kind::Memory => 26,
            Kind::ProjectBudgets => 27,
            Kind::SyncProjects => 28,
            Kind::SyncConflicts => 29,
            Kind::OptimizeRuns => 30,
            Kind::PerfAccounts => 31,
            Kind::Publications => 32,
            Kind::MetricSnapshots => 33,
            Kind::PerfImports => 34,
        }
    }
}

/// A record kept in its own tree under a key it computes.
pub trait Record: Serialize + DeserializeOwned {
    const KIND: Kind;
    fn key(&self) -> Vec<u8>;

    /// Index records derived from this one, written in the same transaction.
    fn derived(&self, _batch: &mut Batch) -> Result<(), StoreError> {
        Ok(())
    }
}

/// Key encodings.
pub mod keys {
    /// `project_id 0x00`: the prefix of every per-project record.
    pub fn project_prefix(project_id: &str) -> Vec<u8> {
        let mut key = project_id.as_bytes().to_vec();
        key.push(0);
        key
    }

    /// `project_id 0x00 number(u32 BE)`: versions sort by number.
    pub fn version(project_id: &str, number: u32) -> Vec<u8> {
        let mut key = project_prefix(project_id);
        key.extend_from_slice(&number.to_be_bytes());
        key
    }

    /// `project_id 0x00 platform`: one draft per platform.
    pub fn platform_draft(project_id: &str, platform: crate::model::Platform) -> Vec<u8> {
        let mut key = project_prefix(project_id);
        key.extend_from_slice(platform.as_str().as_bytes());
        key
    }

    /// `session_id 0x00 sequence(u64 BE)`: a session's events sort by sequence.
    pub fn session_event(session_id: &str, sequence: u64) -> Vec<u8> {
        let mut key = project_prefix(session_id);
        key.extend_from_slice(&sequence.to_be_bytes());
        key
    }

    /// `parent_id 0x00 id`: a record kept under its project, session or run, in id
    /// order (ids sort by creation).
    pub fn child(parent_id: &str, id: &str) -> Vec<u8> {
        let mut key = project_prefix(parent_id);
        key.extend_from_slice(id.as_bytes());
        key
    }

    pub fn comment(project_id: &str, comment_id: &str) -> Vec<u8> {
        child(project_id, comment_id)
    }
}

impl Record for Project {
    const KIND: Kind = Kind::Projects;
    fn key(&self) -> Vec<u8> {
        self.id.as_bytes().to_vec()
    }

    /// Every project write also writes its summary, so the two never disagree.
    fn derived(&self, batch: &mut Batch) -> Result<(), StoreError> {
        batch.put(&ProjectSummary::from(self))?;
        Ok(())
    }
}
impl Record for ProjectSummary {
    const KIND: Kind = Kind::ProjectSummaries;
    fn key(&self) -> Vec<u8> {
        self.id.as_bytes().to_vec()
    }
}
impl Record for Version {
    const KIND: Kind = Kind::Versions;
    fn key(&self) -> Vec<u8> {
        keys::version(&self.project_id, self.number)
    }
}
impl Record for PlatformDraft {
    const KIND: Kind = Kind::PlatformDrafts;
    fn key(&self) -> Vec<u8> {
        keys::platform_draft(&self.project_id, self.platform)
    }
}
impl Record for Comment {
    const KIND: Kind = Kind::Comments;
    fn key(&self) -> Vec<u8> {
        keys::comment(&self.project_id, &self.id)
    }
}
impl Record for Activity {
    const KIND: Kind = Kind::Activities;
    fn key(&self) -> Vec<u8> {
        // Activity ids are sortable, so the tree is in creation order.
        self.id.as_bytes().to_vec()
    }
}
impl Record for BrandProfile {
    const KIND: Kind = Kind::BrandProfiles;
    fn key(&self) -> Vec<u8> {
        self.id.as_bytes().to_vec()
    }
}
impl Record for ContentTemplate {
    const KIND: Kind = Kind::Templates;
    fn key(&self) -> Vec<u8> {
        self.id.as_bytes().to_vec()
    }
}
impl Record for MediaAsset {
    const KIND: Kind = Kind::Media;
    fn key(&self) -> Vec<u8> {
        self.id.as_bytes().to_vec()
    }
}
impl Record for Workspace {
    const KIND: Kind = Kind::Meta;
    fn key(&self) -> Vec<u8> {
        META_WORKSPACE.to_vec()
    }
}

const META_SCHEMA_VERSION: &[u8] = b"schema_version";
const META_WORKSPACE: &[u8] = b"workspace";

/// When a write must be on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// Synced to disk (flush, then the log and what changed, see [`GroupSync`]) before
    /// `apply` returns.
    Durable,
    /// Synced by the group-commit thread within `group_commit_millis`.
    Grouped,
}

/// Writes to apply atomically, across trees, in one sled transaction.
#[derive(Debug, Default)]
pub struct Batch {
    ops: Vec<Change>,
}

impl Batch {
    pub fn new() -> Self {
        Batch::default()
    }

    pub fn put<R: Record>(&mut self, record: &R) -> Result<&mut Self, StoreError> {
        let bytes = codec::encode(record).map_err(|e| StoreError::Database(e.to_string()))?;
        self.ops.push(Change { kind: R::KIND, key: record.key(), value: Some(bytes) });
        record.derived(self)?;
        Ok(self)
    }

    pub fn delete<R: Record>(&mut self, key: Vec<u8>) -> &mut Self {
        self.ops.push(Change { kind: R::KIND, key, value: None });
        self
    }

    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    pub fn len(&self) -> usize {
        self.ops.len()
    }
}

/// One write of a committed batch: a record put under `key`, or a delete.
#[derive(Debug, Clone)]
pub struct Change {
    pub kind: Kind,
    pub key: Vec<u8>,
    value: Option<Vec<u8>>,
}

impl Change {
    /// The record written, decoded and checked; `None` for a delete or a change of
    /// another kind than `R`'s.
    pub fn record<R: Record>(&self) -> Option<Result<R, CodecError>> {
        match &self.value {
            Some(bytes) if self.kind == R::KIND => Some(codec::decode(bytes)),
            _ => None,
        }
    }

    pub fn is_delete(&self) -> bool {
        self.value.is_none()
    }
}

/// The writes of one committed batch, in order, shared by every subscriber.
pub type Committed = Arc<Vec<Change>>;

/// What a subscriber does with a committed batch; `false` unsubscribes it.
pub type OnCommit = Box<dyn Fn(Committed) -> bool + Send>;

/// Who hears of committed batches: the kinds each subscriber asked for, and what it
/// does with a batch touching any of them.
type Subscribers = Mutex<Vec<(Vec<Kind>, OnCommit)>>;

/// State shared with the group-commit thread.
struct Shared {
    db: sled::Db,
    /// The syncs of the database folder (shared with the workspace server's store).
    disk: GroupSync,
    dirty: AtomicBool,
    syncs: AtomicU64,
    stop: Mutex<bool>,
    wake: Condvar,
}

impl Shared {
    fn sync_to_disk(&self) -> Result<(), StoreError> {
        self.dirty.store(false, Ordering::SeqCst);
        let started = std::time::Instant::now();
        self.disk.sync(&self.db).map_err(|error| match error {
            SyncError::Sled(e) => StoreError::from(e),
            SyncError::Io(e) => StoreError::Io(e),
            SyncError::Poisoned => StoreError::Database("the sync lock is poisoned".to_owned()),
        })?;
        tracing::trace!(took = ?started.elapsed(), "durable sync");
        self.syncs.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

/// The open database of one data dir. Holds the data dir's lock for its lifetime.
pub struct Store {
    shared: Arc<Shared>,
    writes: Mutex<()>,
    subscribers: Subscribers,
    trees: Vec<sled::Tree>,
    data_dir: PathBuf,
    flusher: Option<JoinHandle<()>>,
    _lock: File,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("data_dir", &self.data_dir).finish()
    }
}

/// Options for [`Store::open`].
#[derive(Debug, Clone)]
pub struct StoreOptions {
    pub holder: String,
    pub cache_capacity_bytes: u64,
    pub group_commit_millis: u64,
}

/// sled segment size for new stores: 8 MiB. sled writes any page larger than a quarter
/// segment to its own file under `blobs/`; with the 512 KiB default, pages of a few
/// 15 KB Chinese articles became thousands of blob files, and the durable sync (which
/// must fsync every file) grew with them: 50 ms per version at 10,000 projects. sled
/// refuses to open a store with a segment size other than the one it was made with,
/// so existing stores keep theirs (read from sled's `conf` file).
const NEW_STORE_SEGMENT_SIZE: usize = 8 * 1024 * 1024;

fn segment_size(db_path: &Path) -> usize {
    // sled's conf is text lines followed by a binary checksum.
    let Ok(conf) = std::fs::read(db_path.join("conf")) else { return NEW_STORE_SEGMENT_SIZE };
    String::from_utf8_lossy(&conf).lines().find_map(|line| line.strip_prefix("segment_size: ").and_then(|v| v.trim().parse().ok())).unwrap_or(NEW_STORE_SEGMENT_SIZE)
}

/// What the lock file of a data dir says about its holder.
fn read_holder(lock_path: &Path) -> String {
    let mut text = String::new();
    let _ = File::open(lock_path).and_then(|mut f| f.read_to_string(&mut text));
    let text = text.trim();
    if text.is_empty() {
        "another Inkstone process".to_owned()
    } else {
        text.to_owned()
    }
}

fn acquire_lock(data_dir: &Path, holder: &str) -> Result<File, StoreError> {
    let lock_path = data_dir.join("inkstone.lock");
    let mut file = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(&lock_path)?;
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            return Err(StoreError::Locked { path: data_dir.to_path_buf(), holder: read_holder(&lock_path) });
        }
        Err(std::fs::TryLockError::Error(e)) => return Err(StoreError::Io(e)),
    }
    file.set_len(0)?;
    write!(file, "{holder} (pid {})", std::process::id())?;
    file.sync_all()?;
    Ok(file)
}

impl Store {
    /// Opens (creating if needed) the store in `data_dir`, takes its lock, and migrates
    /// it to [`SCHEMA_VERSION`].
    ///
    /// Errors: `Locked` when another process holds the data dir; `Corrupt` when the
    /// database cannot be read (sled's own panics on damaged files are caught);
    /// `TooNew` when a newer build wrote it.
    pub fn open(data_dir: &Path, options: &StoreOptions) -> Result<Store, StoreError> {
        std::fs::create_dir_all(data_dir)?;
        let lock = acquire_lock(data_dir, &options.holder)?;
        let db_path = data_dir.join("db");
        let sled_config = sled::Config::new().path(&db_path).segment_size(segment_size(&db_path)).cache_capacity(options.cache_capacity_bytes).flush_every_ms(None);
        // sled 0.34 panics on some damaged files instead of returning an error.
        let opened = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sled_config.open()));
        let db = match opened {
            Ok(Ok(db)) => db,
            Ok(Err(sled::Error::Io(e))) => return Err(StoreError::Io(e)),
            Ok(Err(e)) => return Err(StoreError::Corrupt { path: data_dir.to_path_buf(), detail: e.to_string() }),
            Err(_) => return Err(StoreError::Corrupt { path: data_dir.to_path_buf(), detail: "the database engine stopped while reading its files".to_owned() }),
        };
        let mut trees = Vec::with_capacity(Kind::ALL.len());
        for kind in Kind::ALL {
            trees.push(db.open_tree(kind.tree_name())?);
        }
        let shared =
            Arc::new(Shared { db, disk: GroupSync::new(&db_path), dirty: AtomicBool::new(false), syncs: AtomicU64::new(0), stop: Mutex::new(false), wake: Condvar::new() });
        let flusher = spawn_flusher(Arc::clone(&shared), options.group_commit_millis)?;
        let store = Store { shared, writes: Mutex::new(()), subscribers: Mutex::new(Vec::new()), trees, data_dir: data_dir.to_path_buf(), flusher: Some(flusher), _lock: lock };
        migrate::run(&store)?;
        Ok(store)
    }

    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// Serializes writers: whoever checks and then writes (a base-revision check, the
    /// next version number) holds this across both, and commits one [`Batch`]. A
    /// poisoned lock only means another call panicked while holding it; the store
    /// itself is transactional, so carry on.
    pub fn write_lock(&self) -> MutexGuard<'_, ()> {
        self.writes.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn tree(&self, kind: Kind) -> &sled::Tree {
        &self.trees[kind.index()]
    }

    fn corrupt(&self, kind: Kind, key: &[u8], error: CodecError) -> StoreError {
        StoreError::Corrupt { path: self.data_dir.clone(), detail: format!("{} record {:?}: {error}", kind.tree_name(), String::from_utf8_lossy(key)) }
    }

    fn decode<R: Record>(&self, key: &[u8], bytes: &[u8]) -> Result<R, StoreError> {
        codec::decode(bytes).map_err(|e| self.corrupt(R::KIND, key, e))
    }

    /// The record under `key`, checked.
    pub fn get<R: Record>(&self, key: &[u8]) -> Result<Option<R>, StoreError> {
        match self.tree(R::KIND).get(key)? {
            Some(bytes) => Ok(Some(self.decode(key, &bytes)?)),
            None => Ok(None),
        }
    }

    /// All records whose key starts with `prefix`, in key order.
    pub fn scan<R: Record>(&self, prefix: &[u8]) -> Result<Vec<R>, StoreError> {
        let mut out = Vec::new();
        for item in self.tree(R::KIND).scan_prefix(prefix) {
            let (key, bytes) = item?;
            out.push(self.decode(&key, &bytes)?);
        }
        Ok(out)
    }

    /// The records whose key starts with `prefix` and is at least `from`, in key order.
    pub fn scan_from<R: Record>(&self, prefix: &[u8], from: &[u8]) -> Result<Vec<R>, StoreError> {
        self.scan_from_limit(prefix, from, usize::MAX)
    }

    /// [`Store::scan_from`], stopping after `limit` records.
    pub fn scan_from_limit<R: Record>(&self, prefix: &[u8], from: &[u8], limit: usize) -> Result<Vec<R>, StoreError> {
        let mut out = Vec::new();
        for item in self.tree(R::KIND).range(from..) {
            if out.len() >= limit {
                break;
            }
            let (key, bytes) = item?;
            if !key.starts_with(prefix) {
                break;
            }
            out.push(self.decode(&key, &bytes)?);
        }
        Ok(out)
    }

    /// True when a record is stored under `key`.
    pub fn contains(&self, kind: Kind, key: &[u8]) -> Result<bool, StoreError> {
        Ok(self.tree(kind).contains_key(key)?)
    }

    /// The last record whose key starts with `prefix`.
    pub fn last<R: Record>(&self, prefix: &[u8]) -> Result<Option<R>, StoreError> {
        match self.tree(R::KIND).scan_prefix(prefix).next_back() {
            Some(item) => {
                let (key, bytes) = item?;
                Ok(Some(self.decode(&key, &bytes)?))
            }
            None => Ok(None),
        }
    }

    /// Number of records of a kind (a full scan; for export progress and tests).
    pub fn count(&self, kind: Kind) -> usize {
        self.tree(kind).len()
    }

    /// True when no user data is stored (only the meta tree and caches may hold
    /// records).
    pub fn is_empty(&self) -> bool {
        Kind::ALL.iter().filter(|k| !matches!(k, Kind::Meta | Kind::Embeddings)).all(|k| self.tree(*k).is_empty())
    }

    /// Adds a delete of every user record (all trees but meta) to `batch`.
    pub fn delete_all_user_records(&self, batch: &mut Batch) -> Result<(), StoreError> {
        for kind in Kind::ALL.iter().filter(|k| **k != Kind::Meta) {
            for key in self.tree(*kind).iter().keys() {
                batch.ops.push(Change { kind: *kind, key: key?.to_vec(), value: None });
            }
        }
        Ok(())
    }

    pub fn workspace(&self) -> Result<Option<Workspace>, StoreError> {
        self.get(META_WORKSPACE)
    }

    /// The schema version recorded in the store; `None` for a new store.
    pub fn schema_version(&self) -> Result<Option<u32>, StoreError> {
        self.get::<SchemaVersion>(META_SCHEMA_VERSION).map(|v| v.map(|v| v.0))
    }

    fn set_schema_version(&self, version: u32) -> Result<(), StoreError> {
        let mut batch = Batch::new();
        batch.put(&SchemaVersion(version))?;
        self.apply(batch, Durability::Durable)
    }

    /// Applies all writes of `batch` atomically.
    pub fn apply(&self, batch: Batch, durability: Durability) -> Result<(), StoreError> {
        if batch.is_empty() {
            return Ok(());
        }
        let mut kinds: Vec<Kind> = Vec::new();
        for change in &batch.ops {
            if !kinds.contains(&change.kind) {
                kinds.push(change.kind);
            }
        }
        let trees: Vec<&sled::Tree> = kinds.iter().map(|k| self.tree(*k)).collect();
        let result: sled::transaction::TransactionResult<(), ()> = sled::Transactional::transaction(trees.as_slice(), |views| {
            for change in &batch.ops {
                let position = kinds.iter().position(|k| *k == change.kind).unwrap_or(0);
                let view = &views[position];
                match &change.value {
                    Some(bytes) => {
                        view.insert(change.key.as_slice(), bytes.as_slice())?;
                    }
                    None => {
                        view.remove(change.key.as_slice())?;
                    }
                }
            }
            Ok(())
        });
        match result {
            Ok(()) => {}
            Err(sled::transaction::TransactionError::Abort(())) => return Err(StoreError::Database("transaction aborted".to_owned())),
            Err(sled::transaction::TransactionError::Storage(e)) => return Err(e.into()),
        }
        self.notify(&kinds, batch.ops);
        match durability {
            Durability::Durable => self.shared.sync_to_disk(),
            Durability::Grouped => {
                self.shared.dirty.store(true, Ordering::SeqCst);
                Ok(())
            }
        }
    }

    /// Hands every batch committed from now on that touches one of `kinds` to
    /// `on_commit`, right after its transaction commits (before its disk sync), on the
    /// writer's thread: it must only hand the batch on (a send on an unbounded
    /// channel), so a writer never waits for a subscriber. The search index follows
    /// the store this way. `on_commit` returning `false` unsubscribes it; it must not
    /// hold the store (that would keep the store, and its lock, alive).
    pub fn subscribe(&self, kinds: &[Kind], on_commit: OnCommit) {
        self.subscribers.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push((kinds.to_vec(), on_commit));
    }

    fn notify(&self, kinds: &[Kind], ops: Vec<Change>) {
        let mut subscribers = self.subscribers.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if !subscribers.iter().any(|(wanted, _)| wanted.iter().any(|k| kinds.contains(k))) {
            return;
        }
        let committed: Committed = Arc::new(ops);
        subscribers.retain(|(wanted, on_commit)| !wanted.iter().any(|k| kinds.contains(k)) || on_commit(Arc::clone(&committed)));
    }

    /// Syncs everything written so far to disk now.
    pub fn sync(&self) -> Result<(), StoreError> {
        self.shared.sync_to_disk()
    }

    /// How many full disk syncs (flush + fsync of every file and folder) completed.
    /// The seam through which tests prove an acknowledged write reached the disk.
    pub fn durable_sync_count(&self) -> u64 {
        self.shared.syncs.load(Ordering::SeqCst)
    }

    /// True while grouped writes wait for their sync.
    pub fn has_unsynced_writes(&self) -> bool {
        self.shared.dirty.load(Ordering::SeqCst)
    }

    /// Test seam: records another schema version, to prove newer stores are refused.
    #[doc(hidden)]
    pub fn set_schema_version_for_tests(&self, version: u32) -> Result<(), StoreError> {
        self.set_schema_version(version)
    }

    /// Test seam: overwrites the stored bytes of a record with garbage, to prove that
    /// damage is reported. Not reachable from the API.
    #[doc(hidden)]
    pub fn damage_record_for_tests(&self, kind: Kind, key: &[u8]) -> Result<(), StoreError> {
        let tree = self.tree(kind);
        if let Some(bytes) = tree.get(key)? {
            let mut damaged = bytes.to_vec();
            let last = damaged.len() - 1;
            damaged[last] ^= 0x5a;
            tree.insert(key, damaged)?;
        }
        Ok(())
    }
}

fn spawn_flusher(shared: Arc<Shared>, every_millis: u64) -> Result<JoinHandle<()>, StoreError> {
    let every = Duration::from_millis(every_millis.max(10));
    let handle = std::thread::Builder::new().name("inkstone-group-commit".to_owned()).spawn(move || loop {
        let stop = match shared.stop.lock() {
            Ok(guard) => match shared.wake.wait_timeout(guard, every) {
                Ok((guard, _)) => *guard,
                Err(_) => true,
            },
            Err(_) => true,
        };
        if shared.dirty.load(Ordering::SeqCst) {
            if let Err(error) = shared.sync_to_disk() {
                tracing::error!(%error, "group commit failed; will retry");
                shared.dirty.store(true, Ordering::SeqCst);
            }
        }
        if stop {
            return;
        }
    })?;
    Ok(handle)
}

impl Drop for Store {
    fn drop(&mut self) {
        if let Ok(mut stop) = self.shared.stop.lock() {
            *stop = true;
        }
        self.shared.wake.notify_all();
        if let Some(handle) = self.flusher.take() {
            let _ = handle.join();
        }
    }
}

/// `sha256:<hex>` of some bytes: the reference of content-addressed records.
pub fn sha256_ref(bytes: &[u8]) -> String {
    use sha2::Digest;
    format!("sha256:{}", hex::encode(sha2::Sha256::digest(bytes)))
}

/// The folder holding media files: `<data dir>/media`.
pub fn media_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("media")
}

/// Writes `bytes` to `path` through a temporary file, synced, then renamed, so a crash
/// never leaves a half-written file under the final name.
pub fn write_file_durably(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().ok_or_else(|| std::io::Error::other("no parent folder"))?;
    std::fs::create_dir_all(dir)?;
    let tmp = path.with_extension("tmp-write");
    {
        let mut file = File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
    }
    std::fs::rename(&tmp, path)?;
    File::open(dir)?.sync_all()
}

/// The schema version, stored in the meta tree.
#[derive(Debug, Serialize, serde::Deserialize)]
struct SchemaVersion(u32);

impl Record for SchemaVersion {
    const KIND: Kind = Kind::Meta;
    fn key(&self) -> Vec<u8> {
        META_SCHEMA_VERSION.to_vec()
    }
}

impl From<StoreError> for ApiError {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::Locked { path, holder } => ApiError::new(ErrorCode::StoreLocked, format!("The data folder {} is in use by {holder}.", path.display()))
                .hint("close_other_instance", "Close the other Inkstone window or command, then try again.")
                .hint("use_other_data_dir", "Or choose another data folder with --data-dir or INKSTONE_DATA_DIR.")
                .details(serde_json::json!({ "dataDir": path, "holder": holder })),
            StoreError::Corrupt { path, detail } => ApiError::new(ErrorCode::StoreCorrupt, format!("The store in {} is damaged: {detail}", path.display()))
                .hint_with(
                    "restore_backup",
                    format!(
                        "Restore the newest backup from {}: move the damaged folder away and run `inkstone-cli --data-dir <new folder> import <backup folder>`.",
                        path.join("backups").display()
                    ),
                    &[("folder", &path.join("backups").display().to_string())],
                )
                .details(serde_json::json!({ "dataDir": path, "backupsDir": path.join("backups") })),
            StoreError::TooNew { path, found, supported } => ApiError::new(
                ErrorCode::StoreTooNew,
                format!("The store in {} was written by a newer Inkstone (schema {found}; this one reads up to {supported}).", path.display()),
            )
            .hint("update_app", "Update Inkstone to the newest version."),
            StoreError::Io(e) => ApiError::new(ErrorCode::Io, format!("Reading or writing the data folder failed: {e}"))
                .hint("check_disk", "Check that the disk is not full and the folder is writable."),
            StoreError::Database(detail) => {
                ApiError::new(ErrorCode::Internal, format!("The database failed: {detail}")).hint("retry", "Try again; if it keeps failing, restart Inkstone.")
            }
        }
    }
}
