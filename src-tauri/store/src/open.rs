//! The open store: its lock on the data dir, sled's database and trees, and the
//! thread that syncs grouped writes.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use inkstone_durable::{GroupSync, SyncError};

use super::batch::Subscribers;
use super::*;

/// State shared with the group-commit thread.
pub(super) struct Shared {
    pub(super) db: sled::Db,
    /// The syncs of the database folder (shared with the workspace server's store).
    pub(super) disk: GroupSync,
    pub(super) dirty: AtomicBool,
    pub(super) syncs: AtomicU64,
    pub(super) stop: Mutex<bool>,
    pub(super) wake: Condvar,
}

impl Shared {
    pub(super) fn sync_to_disk(&self) -> Result<(), StoreError> {
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
    pub(super) shared: Arc<Shared>,
    pub(super) writes: Mutex<()>,
    pub(super) subscribers: Subscribers,
    /// Per kind (by [`Kind::index`]): how many committed batches touched it, so a
    /// reader can keep what it derived from a kind until the kind changes.
    pub(super) generations: Vec<AtomicU64>,
    pub(super) trees: Vec<sled::Tree>,
    pub(super) data_dir: PathBuf,
    pub(super) flusher: Option<JoinHandle<()>>,
    pub(super) _lock: File,
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
        let store = Store {
            shared,
            writes: Mutex::new(()),
            subscribers: Mutex::new(Vec::new()),
            generations: Kind::ALL.iter().map(|_| AtomicU64::new(0)).collect(),
            trees,
            data_dir: data_dir.to_path_buf(),
            flusher: Some(flusher),
            _lock: lock,
        };
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
}

pub(super) fn spawn_flusher(shared: Arc<Shared>, every_millis: u64) -> Result<JoinHandle<()>, StoreError> {
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
