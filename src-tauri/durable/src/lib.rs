//! Making a sled database durable, once, for the app's store and the workspace server's.
//!
//! sled's own flush is not power-loss durable on Linux: it writes its log with
//! `sync_file_range`, which neither flushes the disk's cache nor commits a grown file's
//! length. [`GroupSync::sync`] flushes sled, then fdatasyncs sled's log file and every
//! other file of the database folder that changed since the last sync, and fsyncs each
//! folder whose entries changed (a new file, a rename, a removal).
//!
//! Other files are written whole and never rewritten in place (`conf` at open,
//! snapshots and blobs as new files), so an unchanged stamp (inode, length, change
//! times) means nothing new; the first sync after open covers everything.
//!
//! Concurrent callers share one sync (group commit): each call takes a ticket after
//! its write, and a sync that began after the ticket was taken covers it, so a caller
//! whose write another sync already covered returns at once.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Why a sync failed.
#[derive(Debug)]
pub enum SyncError {
    /// sled's flush failed.
    Sled(sled::Error),
    /// Reading the folder or syncing a file failed.
    Io(std::io::Error),
    /// A thread panicked while holding the sync.
    Poisoned,
}

impl std::fmt::Display for SyncError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SyncError::Sled(e) => write!(f, "{e}"),
            SyncError::Io(e) => write!(f, "{e}"),
            SyncError::Poisoned => f.write_str("sync lock poisoned"),
        }
    }
}

impl std::error::Error for SyncError {}

impl From<std::io::Error> for SyncError {
    fn from(e: std::io::Error) -> Self {
        SyncError::Io(e)
    }
}

/// The syncs of one sled database folder: what the last one covered, shared by every
/// caller.
pub struct GroupSync {
    /// The database folder (sled's `path`); its log is the file `db` in it.
    dir: PathBuf,
    /// Tickets of writes waiting to be durable (taken after the write).
    written: AtomicU64,
    /// The highest ticket known durable and what the folder held at that sync; its lock
    /// serialises the syncs.
    synced: Mutex<Synced>,
}

impl GroupSync {
    /// The syncs of the sled database at `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> GroupSync {
        GroupSync { dir: dir.into(), written: AtomicU64::new(0), synced: Mutex::new(Synced::default()) }
    }

    /// Makes everything written to `db` before this call durable (see the module docs).
    /// Call it after a write; concurrent callers share one sync.
    pub fn sync(&self, db: &sled::Db) -> Result<(), SyncError> {
        let ticket = self.written.fetch_add(1, Ordering::SeqCst) + 1;
        let mut synced = self.synced.lock().map_err(|_| SyncError::Poisoned)?;
        if synced.ticket >= ticket {
            return Ok(());
        }
        let covers = self.written.load(Ordering::SeqCst);
        db.flush().map_err(SyncError::Sled)?;
        let now = Synced::read(&self.dir, covers)?;
        let (files, folders) = synced.to_sync(&now, &self.dir.join("db"));
        for path in files {
            match std::fs::File::open(path) {
                Ok(file) => file.sync_data()?,
                // sled may remove a snapshot file between listing and opening it.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e.into()),
            }
        }
        for path in folders {
            std::fs::File::open(path)?.sync_all()?;
        }
        *synced = now;
        Ok(())
    }

    /// Test seam: holds every sync until the guard drops, so a test can show that
    /// nothing is answered before it is durable.
    #[doc(hidden)]
    pub fn hold_for_tests(&self) -> Option<MutexGuard<'_, impl Sized>> {
        self.synced.lock().ok()
    }
}

/// What the last sync covered: the highest ticket, each file's stamp and each folder's
/// entries as they were just before it.
#[derive(Default)]
struct Synced {
    ticket: u64,
    files: HashMap<PathBuf, FileStamp>,
    folders: HashMap<PathBuf, Vec<std::ffi::OsString>>,
}

/// Identity, length and change times of a file: a file whose stamp is unchanged since
/// the last sync has nothing new to sync.
#[derive(PartialEq, Eq, Clone, Copy)]
struct FileStamp {
    inode: u64,
    len: u64,
    modified: i128,
    changed: i128,
}

impl Synced {
    /// The folder as it is now, to be synced under `ticket`. Stamps are read before
    /// the sync: a change after the read is in the next one.
    fn read(dir: &Path, ticket: u64) -> std::io::Result<Synced> {
        fn walk(dir: &Path, into: &mut Synced) -> std::io::Result<()> {
            let mut names = Vec::new();
            for entry in std::fs::read_dir(dir)? {
                let entry = entry?;
                let meta = match entry.metadata() {
                    Ok(meta) => meta,
                    // sled may remove a snapshot file between listing and reading it.
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                    Err(e) => return Err(e),
                };
                names.push(entry.file_name());
                if meta.is_dir() {
                    walk(&entry.path(), into)?;
                } else if meta.is_file() {
                    into.files.insert(entry.path(), FileStamp::of(&meta));
                }
            }
            names.sort();
            into.folders.insert(dir.to_path_buf(), names);
            Ok(())
        }
        let mut now = Synced { ticket, ..Synced::default() };
        walk(dir, &mut now)?;
        Ok(now)
    }

    /// What a sync from `self` to `now` must cover: the log and every new or changed
    /// file (fdatasync), then every folder whose entries changed (fsync).
    fn to_sync<'a>(&self, now: &'a Synced, log: &Path) -> (Vec<&'a Path>, Vec<&'a Path>) {
        let mut files: Vec<&Path> =
            now.files.iter().filter(|(path, stamp)| path.as_path() == log || self.files.get(*path) != Some(*stamp)).map(|(path, _)| path.as_path()).collect();
        let mut folders: Vec<&Path> = now.folders.iter().filter(|(path, names)| self.folders.get(*path) != Some(*names)).map(|(path, _)| path.as_path()).collect();
        files.sort();
        folders.sort();
        (files, folders)
    }
}

impl FileStamp {
    fn of(meta: &std::fs::Metadata) -> FileStamp {
        use std::os::unix::fs::MetadataExt;
        FileStamp {
            inode: meta.ino(),
            len: meta.len(),
            modified: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
            changed: i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn names(paths: &[&Path], root: &Path) -> Vec<String> {
        paths.iter().map(|p| p.strip_prefix(root).unwrap().to_string_lossy().into_owned()).collect()
    }

    #[test]
    fn a_sync_covers_the_log_and_whatever_changed_since_the_last_one() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("blobs")).unwrap();
        std::fs::write(root.join("db"), b"log").unwrap();
        std::fs::write(root.join("conf"), b"conf").unwrap();
        let first = Synced::read(root, 1).unwrap();
        let (files, folders) = Synced::default().to_sync(&first, &root.join("db"));
        assert_eq!(names(&files, root), ["conf", "db"], "the first sync after open covers every file");
        assert_eq!(names(&folders, root), ["", "blobs"]);

        let same = Synced::read(root, 2).unwrap();
        let (files, folders) = first.to_sync(&same, &root.join("db"));
        assert_eq!(names(&files, root), ["db"], "the log is always synced; unchanged files are not");
        assert!(folders.is_empty());

        std::fs::write(root.join("snap.0001"), b"snapshot").unwrap();
        std::fs::write(root.join("blobs/7"), b"blob").unwrap();
        std::fs::write(root.join("conf"), b"conf, longer").unwrap();
        let changed = Synced::read(root, 3).unwrap();
        let (files, folders) = same.to_sync(&changed, &root.join("db"));
        assert_eq!(names(&files, root), ["blobs/7", "conf", "db", "snap.0001"], "new and changed files are synced");
        assert_eq!(names(&folders, root), ["", "blobs"], "folders that gained entries are synced");

        std::fs::rename(root.join("snap.0001"), root.join("snap.0002")).unwrap();
        let renamed = Synced::read(root, 4).unwrap();
        let (files, folders) = changed.to_sync(&renamed, &root.join("db"));
        assert_eq!(names(&files, root), ["db", "snap.0002"]);
        assert_eq!(names(&folders, root), [""], "a rename changes the folder's entries");

        std::fs::remove_file(root.join("snap.0002")).unwrap();
        let removed = Synced::read(root, 5).unwrap();
        let (files, folders) = renamed.to_sync(&removed, &root.join("db"));
        assert_eq!(names(&files, root), ["db"]);
        assert_eq!(names(&folders, root), [""], "a removal changes the folder's entries");
    }
}
