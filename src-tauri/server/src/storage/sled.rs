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
    AiActivityQuery, AiActivityResponse, ChangesResponse, IssuedToken, Member, MemberEntry, PerfChangesResponse, PerfPushResponse, PerfRecord, PolicyRecord, ProjectHead,
    PushRequest, PushResponse, Role, ServerVersion, TokenEntry, WorkspaceInfo,
};
use serde::{Deserialize, Serialize};
use sled::transaction::{ConflictableTransactionError, TransactionError, Transactional};
use tokio::sync::oneshot;

use super::{features, new_token, now_millis, random_hex, sha256_hex, Caller, Page, PendingPush, PushOutcome, Storage, StorageError, DEDUPE_KEEP_MILLIS};

mod activity;
mod perf;
mod push;

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
struct WorkspaceRecord {
    id: String,
    name: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct TokenRecord {
    token_id: String,
    workspace_id: String,
    member_id: String,
    revoked: bool,
    /// Unix milliseconds of the invite (absent in records written before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    issued_at: Option<u64>,
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

    fn member(&self, workspace_id: &str, member_id: &str) -> Result<Option<Member>, StorageError> {
        Self::get(&self.members, &key(&[workspace_id.as_bytes(), member_id.as_bytes()]))
    }

    fn issue(&self, workspace_id: &str, name: &str, role: Role) -> Result<IssuedToken, StorageError> {
        let member = Member { id: format!("mem_{}", random_hex(8)?), name: name.to_owned(), role };
        let token = new_token()?;
        let token_id = format!("tok_{}", random_hex(8)?);
        let record = TokenRecord { token_id: token_id.clone(), workspace_id: workspace_id.to_owned(), member_id: member.id.clone(), revoked: false, issued_at: Some(now_millis()) };
        let hash = sha256_hex(token.as_bytes());
        (&self.members, &self.tokens, &self.token_ids)
            .transaction(|(members, tokens, token_ids)| {
                members.insert(key(&[workspace_id.as_bytes(), member.id.as_bytes()]), serde_json::to_vec(&member).map_err(abort)?)?;
                tokens.insert(hash.as_bytes(), serde_json::to_vec(&record).map_err(abort)?)?;
                token_ids.insert(token_id.as_bytes(), hash.as_bytes())?;
                Ok(())
            })
            .map_err(tx_error)?;
        self.durable()?;
        Ok(IssuedToken { token_id, member, token })
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
        let id = format!("wsp_{}", random_hex(8)?);
        self.inner.workspaces.insert(id.as_bytes(), serde_json::to_vec(&WorkspaceRecord { id: id.clone(), name: name.to_owned() })?)?;
        let token = self.inner.issue(&id, owner_name, Role::Owner)?;
        Ok((id, token))
    }

    fn invite(&self, workspace_id: &str, name: &str, role: Role) -> Result<IssuedToken, StorageError> {
        if self.inner.workspaces.get(workspace_id.as_bytes())?.is_none() {
            return Err(StorageError::NotFound(format!("workspace {workspace_id}")));
        }
        self.inner.issue(workspace_id, name, role)
    }

    fn revoke(&self, workspace_id: &str, token_id: &str) -> Result<(), StorageError> {
        let missing = || StorageError::NotFound(format!("token {token_id}"));
        let hash = self.inner.token_ids.get(token_id.as_bytes())?.ok_or_else(missing)?;
        let mut record: TokenRecord = Sled::get(&self.inner.tokens, &hash)?.ok_or_else(missing)?;
        if record.workspace_id != workspace_id {
            return Err(missing());
        }
        record.revoked = true;
        self.inner.tokens.insert(hash, serde_json::to_vec(&record)?)?;
        self.inner.durable()
    }

    fn authenticate(&self, token: &str) -> Result<Option<Caller>, StorageError> {
        let Some(record) = Sled::get::<TokenRecord>(&self.inner.tokens, sha256_hex(token.as_bytes()).as_bytes())? else { return Ok(None) };
        if record.revoked {
            return Ok(None);
        }
        let Some(member) = self.inner.member(&record.workspace_id, &record.member_id)? else { return Ok(None) };
        Ok(Some(Caller { token_id: record.token_id, workspace_id: record.workspace_id, member }))
    }

    fn workspace(&self, caller: &Caller) -> Result<WorkspaceInfo, StorageError> {
        let record: WorkspaceRecord = Sled::get(&self.inner.workspaces, caller.workspace_id.as_bytes())?.ok_or_else(|| StorageError::NotFound("workspace".into()))?;
        Ok(WorkspaceInfo { id: record.id, name: record.name, me: caller.member.clone(), features: features() })
    }

    fn members(&self, workspace_id: &str) -> Result<Vec<MemberEntry>, StorageError> {
        let mut prefix = workspace_id.as_bytes().to_vec();
        prefix.push(0);
        let mut members: Vec<MemberEntry> = self
            .inner
            .members
            .scan_prefix(prefix)
            .values()
            .map(|v| {
                let member: Member = serde_json::from_slice(&v?)?;
                Ok(MemberEntry { id: member.id, name: member.name, role: member.role, tokens: Vec::new() })
            })
            .collect::<Result<_, StorageError>>()?;
        // token_ids maps id → hash; tokens maps hash → record. A workspace has few tokens.
        for entry in self.inner.token_ids.iter() {
            let (_, hash) = entry?;
            let Some(record) = Sled::get::<TokenRecord>(&self.inner.tokens, &hash)? else { continue };
            if record.workspace_id != workspace_id {
                continue;
            }
            if let Some(member) = members.iter_mut().find(|m| m.id == record.member_id) {
                member.tokens.push(TokenEntry { token_id: record.token_id, revoked: record.revoked, issued_at: record.issued_at });
            }
        }
        for member in &mut members {
            member.tokens.sort_by(|a, b| (a.issued_at, &a.token_id).cmp(&(b.issued_at, &b.token_id)));
        }
        Ok(members)
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
mod tests {
    use super::*;

    use inkstone_sync_proto::PushVersion;

    fn request(base: u32, ids: &[&str]) -> PushRequest {
        let versions = ids
            .iter()
            .map(|id| PushVersion {
                client_id: (*id).to_owned(),
                title: format!("标题 {id}"),
                source: format!("正文 {id}"),
                author: "amy".into(),
                message: None,
                content_hash: format!("sha256:{}", "a".repeat(64)),
                created_at: "2026-11-26T00:00:00Z".into(),
                origin: None,
                ai: None,
            })
            .collect();
        PushRequest { base, versions }
    }

    fn owner(storage: &SledStorage) -> Caller {
        let (_, issued) = storage.create_workspace("团队", "olive").unwrap();
        storage.authenticate(&issued.token).unwrap().unwrap()
    }

    fn job(storage: &SledStorage, caller: &Caller, key_name: &str, hash: &str, request: PushRequest) -> (PushJob, PendingPush) {
        let (reply, answer) = oneshot::channel();
        let claim = InFlightClaim { set: storage.inner.in_flight.clone(), key: key(&[caller.workspace_id.as_bytes(), key_name.as_bytes()]) };
        let job = PushJob {
            workspace_id: caller.workspace_id.clone(),
            pushed_by: caller.member.name.clone(),
            member_id: caller.member.id.clone(),
            project_id: "prj_a".into(),
            request,
            claim,
            payload_hash: hash.into(),
            at: now_millis(),
            reply,
        };
        (job, answer)
    }

    fn done(answer: &Result<PushOutcome, StorageError>) -> &PushResponse {
        match answer {
            Ok(PushOutcome::Done(response)) => response,
            other => panic!("expected a new push, got {other:?}"),
        }
    }

    #[test]
    fn a_page_as_json_is_the_page_encoded_and_stops_at_its_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let storage = SledStorage::open(dir.path()).unwrap();
        let caller = owner(&storage);
        storage.push(&caller, "prj_a", &request(0, &["a1", "a2", "a3"]), "k", "h").unwrap();
        let one = storage.changes_page(&caller.workspace_id, 0, 10, usize::MAX).unwrap().versions[0].clone();
        let size = serde_json::to_vec(&one).unwrap().len();
        for (limit, max_bytes, count, more) in [(10, usize::MAX, 3, false), (2, usize::MAX, 2, true), (10, 2 * size, 2, true), (10, 1, 1, true)] {
            let page = storage.changes_page(&caller.workspace_id, 0, limit, max_bytes).unwrap();
            assert_eq!((page.versions.len(), page.more), (count, more), "{limit} {max_bytes}");
            assert_eq!(storage.changes_json(&caller.workspace_id, 0, limit, max_bytes).unwrap(), serde_json::to_vec(&page).unwrap());
        }
    }

    #[test]
    fn a_group_applies_its_pushes_in_order_and_a_refused_one_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let storage = SledStorage::open(dir.path()).unwrap();
        let caller = owner(&storage);
        let group: Vec<PushJob> = [
            job(&storage, &caller, "ka", "h1", request(0, &["a1"])),
            // Same base as the push before it in the group: stale, and told of a1.
            job(&storage, &caller, "kb", "h2", request(0, &["b1"])),
            job(&storage, &caller, "kc", "h3", request(1, &["c1", "c2"])),
            // ka again with its payload: the original answer; with another: refused.
            job(&storage, &caller, "ka", "h1", request(0, &["a1"])),
            job(&storage, &caller, "ka", "other", request(3, &["x1"])),
        ]
        .into_iter()
        .map(|(job, _)| job)
        .collect();
        let answers = storage.inner.apply(&group).unwrap();
        assert_eq!(answers.len(), 5);
        let first = done(&answers[0]).clone();
        assert_eq!((first.head, first.versions[0].number, first.versions[0].cursor), (1, 1, 1));
        match &answers[1] {
            Err(StorageError::Stale(stale)) => {
                assert_eq!((stale.base, stale.head), (0, 1));
                assert_eq!(stale.newer.iter().map(|v| v.client_id.as_str()).collect::<Vec<_>>(), ["a1"]);
            }
            other => panic!("expected a stale base, got {other:?}"),
        }
        let third = done(&answers[2]);
        assert_eq!(third.head, 3);
        assert_eq!(third.versions.iter().map(|v| (v.number, v.cursor)).collect::<Vec<_>>(), [(2, 2), (3, 3)], "no number or cursor was taken by the stale push");
        assert!(matches!(&answers[3], Ok(PushOutcome::Replayed(r)) if *r == first));
        assert!(matches!(&answers[4], Err(StorageError::KeyReused)));

        // (Straight from the tree: `apply` alone is not durable, so a pull shows none yet.)
        let stored: Vec<(String, u32, u64)> =
            storage.inner.versions.iter().values().map(|v| serde_json::from_slice::<ServerVersion>(&v.unwrap()).unwrap()).map(|v| (v.client_id, v.number, v.cursor)).collect();
        assert_eq!(stored, [("a1".to_owned(), 1, 1), ("c1".to_owned(), 2, 2), ("c2".to_owned(), 3, 3)]);
        assert_eq!(storage.inner.changes.len(), 3);
        assert_eq!(storage.project(&caller.workspace_id, "prj_a").unwrap().head, 3);
    }

    #[test]
    fn a_store_from_before_the_client_id_index_gets_it_at_open() {
        let dir = tempfile::tempdir().unwrap();
        let storage = SledStorage::open(dir.path()).unwrap();
        let caller = owner(&storage);
        storage.push(&caller, "prj_a", &request(0, &["a1"]), "k1", "h1").unwrap();
        // As a build before the index left it.
        storage.inner.client_ids.clear().unwrap();
        storage.inner.durable().unwrap();
        drop(storage);
        let reopened = SledStorage::open(dir.path()).unwrap();
        assert_eq!(reopened.inner.client_ids.len(), 1);
        assert!(matches!(reopened.push(&caller, "prj_b", &request(0, &["a1"]), "k2", "h2"), Err(StorageError::VersionIdTaken(id)) if id == "a1"));
        assert!(reopened.push(&caller, "prj_b", &request(0, &["b1"]), "k3", "h3").is_ok());
    }

    /// Waits until `check` holds, at most 10 s.
    fn eventually(what: &str, check: impl Fn() -> bool) {
        let started = std::time::Instant::now();
        while !check() {
            assert!(started.elapsed() < std::time::Duration::from_secs(10), "timed out waiting: {what}");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }

    #[test]
    fn no_push_is_answered_before_its_group_is_durable_and_pushes_that_waited_share_one_group() {
        let dir = tempfile::tempdir().unwrap();
        let storage = SledStorage::open(dir.path()).unwrap();
        let caller = owner(&storage);
        let groups = || storage.inner.groups.load(Ordering::Relaxed);
        let before = groups();
        // Hold the sync: the committer applies the first push, then waits to sync it.
        let held = storage.inner.disk.hold_for_tests();
        let mut pending = vec![storage.queue_push(&caller, "prj_a", request(0, &["v1"]), "k1", "h1").unwrap()];
        eventually("the committer takes the first push", || groups() == before + 1);
        for i in 2..=9u32 {
            pending.push(storage.queue_push(&caller, "prj_a", request(i - 1, &[&format!("v{i}")]), &format!("k{i}"), "h").unwrap());
        }
        assert!(matches!(storage.queue_push(&caller, "prj_a", request(0, &["v1"]), "k1", "h1"), Err(StorageError::InFlight)), "a key is held until its push is answered");
        std::thread::sleep(std::time::Duration::from_millis(200));
        for answer in &mut pending {
            assert!(answer.try_recv().is_err(), "a push was answered before it was durable");
        }
        assert!(storage.changes(&caller.workspace_id, 0, 100).unwrap().versions.is_empty(), "a pull showed a version not yet durable");
        drop(held);
        let numbers: Vec<u32> = pending.into_iter().map(|answer| done(&answer.blocking_recv().unwrap()).head).collect();
        assert_eq!(numbers, (1..=9).collect::<Vec<_>>());
        assert_eq!(groups(), before + 2, "the eight pushes that waited for the first one's sync went in one group");
        assert_eq!(storage.changes(&caller.workspace_id, 0, 100).unwrap().versions.len(), 9);
        assert!(storage.queue_push(&caller, "prj_a", request(9, &["v10"]), "k1", "h10").is_ok(), "the key is free once answered");
    }

    #[test]
    fn closing_the_store_answers_every_queued_push_and_frees_the_folder() {
        let dir = tempfile::tempdir().unwrap();
        let storage = SledStorage::open(dir.path()).unwrap();
        let caller = owner(&storage);
        let pending: Vec<PendingPush> = (1..=20u32).map(|i| storage.queue_push(&caller, "prj_a", request(i - 1, &[&format!("v{i}")]), &format!("k{i}"), "h").unwrap()).collect();
        drop(storage);
        let heads: Vec<u32> = pending.into_iter().map(|answer| done(&answer.blocking_recv().unwrap()).head).collect();
        assert_eq!(heads, (1..=20).collect::<Vec<_>>());
        let reopened = SledStorage::open(dir.path()).unwrap();
        assert_eq!(reopened.project(&caller.workspace_id, "prj_a").unwrap().head, 20);
    }
}
