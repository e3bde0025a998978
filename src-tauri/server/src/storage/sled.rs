//! The embedded store: sled under the server's data folder, durable like the app's and
//! group-committed. Every acknowledged write is flushed and its folder synced before the
//! call returns (sled's own flush is not power-loss durable on Linux), by the same
//! [`GroupSync`] as the app's store: see `Sled::durable`.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};

use inkstone_durable::GroupSync;
use inkstone_sync_proto::{
    AiActivityQuery, AiActivityResponse, ChangesResponse, IssuedToken, MemberEntry, PerfChangesResponse, PerfPushResponse, PerfRecord, PolicyRecord, ProjectHead, PushRequest,
    PushResponse, Role, ServerVersion, WorkspaceInfo,
};
use serde::{Deserialize, Serialize};
use sled::transaction::{ConflictableTransactionError, TransactionError};
use tokio::sync::oneshot;

use super::{features, now_millis, Caller, Page, PendingPush, PushOutcome, Storage, StorageError, DEDUPE_KEEP_MILLIS};

mod activity;
mod perf;
mod push;
mod workspace;

fn key(parts: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            out.push(0);
        }
        out.extend_from_slice(part);
    }
    out
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct HeadRecord {
    head: u32,
    title: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct DedupeRecord {
    payload_hash: String,
    at: u64,
    /// None while in flight.
    response: Option<PushResponse>,
}

/// The embedded store: sled under `data_dir`.
///
/// Pushes go through a group commit: one committer thread takes every push waiting at
/// that moment, applies them in one sled transaction, in arrival order, each with its
/// own result (a stale base or a reused key refuses that push alone), makes them
/// durable with one sync and answers them; pushes arriving meanwhile wait for the next
/// group. sled writes each transaction's batch to its log at once (two log writes, each
/// waited for), so a transaction per push cost more than the rest of the push; one per
/// group shares it, as the disk sync is shared. A push's caller need not hold a thread
/// while it waits ([`Storage::submit_push`]).
pub struct SledStorage {
    inner: Arc<Sled>,
    /// Hands pushes to the committer; None once closing.
    pushes: Mutex<Option<mpsc::Sender<PushJob>>>,
    committer: Mutex<Option<std::thread::JoinHandle<()>>>,
}

/// The trees and the sync state, shared by the callers and the commit threads.
struct Sled {
    db: sled::Db,
    workspaces: sled::Tree,
    members: sled::Tree,
    tokens: sled::Tree,
    token_ids: sled::Tree,
    heads: sled::Tree,
    versions: sled::Tree,
    changes: sled::Tree,
    cursors: sled::Tree,
    dedupe: sled::Tree,
    /// `workspace \0 client id` → `project \0 number`: which version holds a client id,
    /// so a push that reuses one is refused (filled from `versions` at open when empty).
    client_ids: sled::Tree,
    /// `workspace` → its policy as JSON ([`PolicyRecord`]).
    policies: sled::Tree,
    /// `workspace \0 kind \0 id` → the performance record as JSON ([`ServerPerfRecord`]).
    perf: sled::Tree,
    /// `workspace \0 cursor(u64 BE)` → `kind \0 id`: each record's latest write; an
    /// earlier write's entry is removed when it is written again.
    perf_log: sled::Tree,
    /// `workspace` → its last performance cursor (u64 BE).
    perf_cursors: sled::Tree,
    /// `workspace \0 publication \0 snapshot` → nothing: a publication's snapshots, to
    /// drop them with it.
    perf_snapshots: sled::Tree,
    /// Performance pushes one at a time, and pulls never between a write and its sync
    /// (so nobody sees a record a crash could take back).
    perf_lock: Mutex<()>,
    /// `workspace \0 cursor` → an accepted AI version's origin detail as JSON
    /// ([`AiActivityEntry`], without the project's title), written with the version.
    ai_activity: sled::Tree,
    /// `workspace \0 !acceptedAt(u64 BE) !cursor(u64 BE)` → the row's filter fields
    /// ([`ActivityIndexValue`]): `ai_activity` newest first, written in the same
    /// transaction as the row, so a page walks it in order, tests the filters without
    /// decoding a row and stops after `limit` matches (`!` is bitwise not).
    ai_activity_by_time: sled::Tree,
    /// The database folder's syncs, shared by the callers and the committer.
    disk: GroupSync,
    /// Dedupe keys of pushes being processed.
    in_flight: Arc<Mutex<HashSet<Vec<u8>>>>,
    /// Group commits so far (each one transaction and one sync).
    groups: AtomicU64,
    /// Each workspace's highest cursor known durable: a pull shows no version before it
    /// is durable, so nobody sees a version that a crash could still take back.
    durable_cursors: Mutex<HashMap<String, u64>>,
}

/// The embedded store's cache.
const SLED_CACHE_BYTES: u64 = 64 * 1024 * 1024;

/// One group commit takes pushes until it holds this many versions or this many bytes
/// of text, so that a transaction stays small in memory (it holds every write until
/// it commits).
const GROUP_VERSIONS: usize = 1_000;
const GROUP_BYTES: usize = 8 * 1024 * 1024;

/// A push waiting for the committer. Its claim on the dedupe key is released just
/// before its answer is sent.
struct PushJob {
    workspace_id: String,
    pushed_by: String,
    member_id: String,
    project_id: String,
    request: PushRequest,
    claim: InFlightClaim,
    payload_hash: String,
    at: u64,
    reply: oneshot::Sender<Result<PushOutcome, StorageError>>,
}

/// A push's hold on its dedupe key; dropping it releases the key.
struct InFlightClaim {
    set: Arc<Mutex<HashSet<Vec<u8>>>>,
    key: Vec<u8>,
}

impl InFlightClaim {
    fn take(set: &Arc<Mutex<HashSet<Vec<u8>>>>, key: Vec<u8>) -> Result<InFlightClaim, StorageError> {
        let mut held = set.lock().map_err(|_| StorageError::Io("in-flight lock poisoned".into()))?;
        if !held.insert(key.clone()) {
            return Err(StorageError::InFlight);
        }
        Ok(InFlightClaim { set: set.clone(), key })
    }
}

impl Drop for InFlightClaim {
    fn drop(&mut self) {
        if let Ok(mut held) = self.set.lock() {
            held.remove(&self.key);
        }
    }
}

impl SledStorage {
    pub fn open(dir: &Path) -> Result<SledStorage, StorageError> {
        std::fs::create_dir_all(dir)?;
        // sled caches up to 1 GiB by default; versions are read once per pull, so a
        // small cache keeps the server's memory from growing with the data.
        let db = sled::Config::new().path(dir.join("db")).cache_capacity(SLED_CACHE_BYTES).open()?;
        let tree = |name: &str| db.open_tree(name);
        let inner = Arc::new(Sled {
            workspaces: tree("workspaces")?,
            members: tree("members")?,
            tokens: tree("tokens")?,
            token_ids: tree("token_ids")?,
            heads: tree("heads")?,
            versions: tree("versions")?,
            changes: tree("changes")?,
            cursors: tree("cursors")?,
            dedupe: tree("dedupe")?,
            client_ids: tree("client_ids")?,
            policies: tree("policies")?,
            perf: tree("perf")?,
            perf_log: tree("perf_log")?,
            perf_cursors: tree("perf_cursors")?,
            perf_snapshots: tree("perf_snapshots")?,
            perf_lock: Mutex::new(()),
            ai_activity: tree("ai_activity")?,
            ai_activity_by_time: tree("ai_activity_by_time")?,
            db,
            disk: GroupSync::new(dir.join("db")),
            in_flight: Arc::new(Mutex::new(HashSet::new())),
            groups: AtomicU64::new(0),
            durable_cursors: Mutex::new(HashMap::new()),
        });
        inner.forget_in_flight()?;
        inner.index_client_ids()?;
        inner.index_ai_activity()?;
        // What the folder holds at open is what survived; all of it may be shown.
        {
            let mut durable = inner.durable_cursors.lock().map_err(|_| StorageError::Io("cursor lock poisoned".into()))?;
            for entry in inner.cursors.iter() {
                let (ws, cursor) = entry?;
                let cursor = u64::from_be_bytes(cursor.as_ref().try_into().map_err(|_| StorageError::Io("damaged cursor record".into()))?);
                durable.insert(String::from_utf8_lossy(&ws).into_owned(), cursor);
            }
        }
        let (pushes, queued) = mpsc::channel::<PushJob>();
        let committer = {
            let inner = inner.clone();
            std::thread::Builder::new().name("push-commit".into()).spawn(move || inner.commit_loop(&queued))?
        };
        Ok(SledStorage { inner, pushes: Mutex::new(Some(pushes)), committer: Mutex::new(Some(committer)) })
    }

    /// Claims the dedupe key in memory (one process holds the folder, so a push still in
    /// flight is one of this process's) and hands the push to the committer.
    fn queue_push(&self, caller: &Caller, project_id: &str, request: PushRequest, dedupe_key: &str, payload_hash: &str) -> Result<PendingPush, StorageError> {
        let claim = InFlightClaim::take(&self.inner.in_flight, key(&[caller.workspace_id.as_bytes(), dedupe_key.as_bytes()]))?;
        let (reply, answer) = oneshot::channel();
        let job = PushJob {
            workspace_id: caller.workspace_id.clone(),
            pushed_by: caller.member.name.clone(),
            member_id: caller.member.id.clone(),
            project_id: project_id.to_owned(),
            request,
            claim,
            payload_hash: payload_hash.to_owned(),
            at: now_millis(),
            reply,
        };
        let closing = || StorageError::Io("the store is closing".into());
        self.pushes.lock().map_err(|_| StorageError::Io("push queue lock poisoned".into()))?.as_ref().ok_or_else(closing)?.send(job).map_err(|_| closing())?;
        Ok(answer)
    }
}

impl Drop for SledStorage {
    /// Ends the committer once every push handed to it is answered, so the folder is
    /// free when this returns.
    fn drop(&mut self) {
        if let Ok(mut pushes) = self.pushes.lock() {
            pushes.take();
        }
        if let Some(committer) = self.committer.lock().ok().and_then(|mut c| c.take()) {
            let _ = committer.join();
        }
    }
}

impl Sled {
    /// Builds before the in-memory claim wrote a dedupe marker before each push. One
    /// process holds the folder (sled locks it), so a marker still unfinished at open
    /// belongs to a push that died with its process and never committed: its key is
    /// free again at once.
    fn forget_in_flight(&self) -> Result<(), StorageError> {
        let mut stale = Vec::new();
        for entry in self.dedupe.iter() {
            let (k, v) = entry?;
            let record: DedupeRecord = serde_json::from_slice(&v)?;
            if record.response.is_none() {
                stale.push(k);
            }
        }
        for k in &stale {
            self.dedupe.remove(k)?;
        }
        if !stale.is_empty() {
            self.durable()?;
        }
        Ok(())
    }

    /// A store written before the client-id index gets it from its versions (the first
    /// holder of an id keeps it).
    fn index_client_ids(&self) -> Result<(), StorageError> {
        if !self.client_ids.is_empty() || self.versions.is_empty() {
            return Ok(());
        }
        for entry in self.versions.iter() {
            let (k, v) = entry?;
            let version: ServerVersion = serde_json::from_slice(&v)?;
            let ws = &k[..k.iter().position(|b| *b == 0).ok_or_else(|| StorageError::Io("damaged version key".into()))?];
            let at = key(&[ws, version.client_id.as_bytes()]);
            if self.client_ids.get(&at)?.is_none() {
                self.client_ids.insert(at, key(&[version.project_id.as_bytes(), &version.number.to_be_bytes()]))?;
            }
        }
        self.durable()
    }

    /// Makes every write so far durable: flushes sled, then syncs its log and whatever
    /// else changed in the folder; concurrent callers share one sync (group commit).
    /// See [`GroupSync::sync`].
    fn durable(&self) -> Result<(), StorageError> {
        self.disk.sync(&self.db).map_err(|e| StorageError::Io(e.to_string()))
    }

    /// The committer: each group of waiting pushes in one transaction and one sync,
    /// then their answers. Ends when the store closes and the queue is empty.
    fn commit_loop(&self, queued: &mpsc::Receiver<PushJob>) {
        while let Ok(first) = queued.recv() {
            let size = |job: &PushJob| (job.request.versions.len(), job.request.versions.iter().map(|v| v.source.len() + v.title.len()).sum::<usize>());
            let (mut versions, mut bytes) = size(&first);
            let mut group = vec![first];
            while versions < GROUP_VERSIONS && bytes < GROUP_BYTES {
                let Ok(job) = queued.try_recv() else { break };
                let (v, b) = size(&job);
                versions += v;
                bytes += b;
                group.push(job);
            }
            self.groups.fetch_add(1, Ordering::Relaxed);
            // A failed transaction wrote nothing; a failed sync fails the group too (the
            // clients send the pushes again, with the same keys).
            let answers = self.apply(&group).and_then(|answers| self.durable().map(|()| answers));
            let answers: Vec<Result<PushOutcome, StorageError>> = match answers {
                Ok(answers) => answers,
                Err(e) => group.iter().map(|_| Err(e.clone())).collect(),
            };
            if let Ok(mut durable) = self.durable_cursors.lock() {
                for (job, answer) in group.iter().zip(&answers) {
                    if let Ok(PushOutcome::Done(response)) = answer {
                        let cursor = response.versions.iter().map(|v| v.cursor).max().unwrap_or(0);
                        let known = durable.entry(job.workspace_id.clone()).or_insert(0);
                        *known = (*known).max(cursor);
                    }
                }
            }
            for (job, answer) in group.into_iter().zip(answers) {
                drop(job.claim);
                let _ = job.reply.send(answer);
            }
        }
    }

    fn get<T: for<'de> Deserialize<'de>>(tree: &sled::Tree, key: &[u8]) -> Result<Option<T>, StorageError> {
        Ok(match tree.get(key)? {
            Some(bytes) => Some(serde_json::from_slice(&bytes)?),
            None => None,
        })
    }

    /// A page of a workspace's version records after `cursor` (see
    /// [`Storage::changes_page`]), the last cursor in it and whether more wait. A record's
    /// length is known before it is decoded.
    fn page(&self, workspace_id: &str, cursor: u64, limit: usize, max_bytes: usize) -> Result<(Vec<sled::IVec>, u64, bool), StorageError> {
        let durable = self.durable_cursors.lock().map_err(|_| StorageError::Io("cursor lock poisoned".into()))?.get(workspace_id).copied().unwrap_or(0);
        let mut records = Vec::new();
        let mut last = cursor;
        if durable <= cursor {
            return Ok((records, last, false));
        }
        let start = key(&[workspace_id.as_bytes(), &cursor.saturating_add(1).to_be_bytes()]);
        let end = key(&[workspace_id.as_bytes(), &durable.to_be_bytes()]);
        let mut page = Page::new(limit, max_bytes);
        for entry in self.changes.range(start..=end) {
            let (k, v) = entry?;
            let at = v.iter().position(|b| *b == 0).ok_or_else(|| StorageError::Io("damaged change record".into()))?;
            let (project, number) = (&v[..at], &v[at + 1..]);
            let record = self.versions.get(key(&[workspace_id.as_bytes(), project, number]))?.ok_or_else(|| StorageError::Io("a change names a missing version".into()))?;
            if !page.admit(record.len()) {
                return Ok((records, last, true));
            }
            last = u64::from_be_bytes(k[k.len() - 8..].try_into().map_err(|_| StorageError::Io("damaged change key".into()))?);
            records.push(record);
        }
        Ok((records, last, false))
    }
}

fn abort<E: std::fmt::Display>(e: E) -> ConflictableTransactionError<StorageError> {
    ConflictableTransactionError::Abort(StorageError::Io(e.to_string()))
}

fn tx_error(e: TransactionError<StorageError>) -> StorageError {
    match e {
        TransactionError::Abort(e) => e,
        TransactionError::Storage(e) => StorageError::Io(e.to_string()),
    }
}

impl Storage for SledStorage {
    fn create_workspace(&self, name: &str, owner_name: &str) -> Result<(String, IssuedToken), StorageError> {
        self.inner.create_workspace(name, owner_name)
    }

    fn invite(&self, workspace_id: &str, name: &str, role: Role) -> Result<IssuedToken, StorageError> {
        self.inner.invite(workspace_id, name, role)
    }

    fn revoke(&self, workspace_id: &str, token_id: &str) -> Result<(), StorageError> {
        self.inner.revoke(workspace_id, token_id)
    }

    fn authenticate(&self, token: &str) -> Result<Option<Caller>, StorageError> {
        self.inner.authenticate(token)
    }

    fn workspace(&self, caller: &Caller) -> Result<WorkspaceInfo, StorageError> {
        self.inner.workspace_info(caller)
    }

    fn members(&self, workspace_id: &str) -> Result<Vec<MemberEntry>, StorageError> {
        self.inner.member_entries(workspace_id)
    }

    fn push(&self, caller: &Caller, project_id: &str, request: &PushRequest, dedupe_key: &str, payload_hash: &str) -> Result<PushOutcome, StorageError> {
        // Waits on this thread: not for an async task (use `submit_push` there).
        self.queue_push(caller, project_id, request.clone(), dedupe_key, payload_hash)?.blocking_recv().map_err(|_| StorageError::Io("the committer stopped".into()))?
    }

    fn submit_push(&self, caller: &Caller, project_id: &str, request: &PushRequest, dedupe_key: &str, payload_hash: &str) -> Option<Result<PendingPush, StorageError>> {
        Some(self.queue_push(caller, project_id, request.clone(), dedupe_key, payload_hash))
    }

    fn local(&self) -> bool {
        true
    }

    fn changes_page(&self, workspace_id: &str, cursor: u64, limit: usize, max_bytes: usize) -> Result<ChangesResponse, StorageError> {
        let (records, last, more) = self.inner.page(workspace_id, cursor, limit, max_bytes)?;
        let versions = records.iter().map(|record| serde_json::from_slice(record)).collect::<Result<Vec<ServerVersion>, _>>()?;
        Ok(ChangesResponse { versions, cursor: last, more, features: features() })
    }

    /// The stored records are the versions' JSON as the answer carries them: they go
    /// into it as they are, never decoded and encoded again.
    fn changes_json(&self, workspace_id: &str, cursor: u64, limit: usize, max_bytes: usize) -> Result<Vec<u8>, StorageError> {
        let (records, last, more) = self.inner.page(workspace_id, cursor, limit, max_bytes)?;
        let around = serde_json::to_vec(&ChangesResponse { versions: Vec::new(), cursor: last, more, features: features() })?;
        const HEAD: &[u8] = b"{\"versions\":[";
        let tail = around.strip_prefix(HEAD).ok_or_else(|| StorageError::Io("a page does not begin with its versions".into()))?;
        let mut out = Vec::with_capacity(HEAD.len() + records.iter().map(|r| r.len() + 1).sum::<usize>() + tail.len());
        out.extend_from_slice(HEAD);
        for (i, record) in records.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(record);
        }
        out.extend_from_slice(tail);
        Ok(out)
    }

    fn project(&self, workspace_id: &str, project_id: &str) -> Result<ProjectHead, StorageError> {
        let head: HeadRecord =
            Sled::get(&self.inner.heads, &key(&[workspace_id.as_bytes(), project_id.as_bytes()]))?.ok_or_else(|| StorageError::NotFound(format!("project {project_id}")))?;
        Ok(ProjectHead { project_id: project_id.to_owned(), head: head.head, title: head.title })
    }

    fn policy(&self, workspace_id: &str) -> Result<Option<PolicyRecord>, StorageError> {
        Sled::get(&self.inner.policies, workspace_id.as_bytes())
    }

    fn set_policy(&self, workspace_id: &str, record: &PolicyRecord) -> Result<(), StorageError> {
        if self.inner.workspaces.get(workspace_id.as_bytes())?.is_none() {
            return Err(StorageError::NotFound(format!("workspace {workspace_id}")));
        }
        self.inner.policies.insert(workspace_id.as_bytes(), serde_json::to_vec(record)?)?;
        self.inner.durable()
    }

    fn perf_push(&self, caller: &Caller, records: &[PerfRecord]) -> Result<PerfPushResponse, StorageError> {
        self.inner.perf_push(caller, records)
    }

    fn perf_changes(&self, workspace_id: &str, cursor: u64, limit: usize) -> Result<PerfChangesResponse, StorageError> {
        self.inner.perf_changes(workspace_id, cursor, limit)
    }

    fn ai_activity(&self, workspace_id: &str, only_member: Option<&str>, query: &AiActivityQuery) -> Result<AiActivityResponse, StorageError> {
        self.inner.ai_activity_page(workspace_id, only_member, query)
    }

    fn prune_dedupe(&self, now: u64) -> Result<usize, StorageError> {
        let before = now.saturating_sub(DEDUPE_KEEP_MILLIS);
        let mut old = Vec::new();
        for entry in self.inner.dedupe.iter() {
            let (k, v) = entry?;
            let record: DedupeRecord = serde_json::from_slice(&v)?;
            if record.at < before {
                old.push(k);
            }
        }
        for k in &old {
            self.inner.dedupe.remove(k)?;
        }
        if !old.is_empty() {
            self.inner.durable()?;
        }
        Ok(old.len())
    }
}

#[cfg(test)]
mod tests;
