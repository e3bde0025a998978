//! The AI activity rows' index by accept time (`ai_activity_by_time`): its keys and
//! values, the one-time fill for a folder written before it, and the page it answers.

use inkstone_sync_proto::{AiActivityEntry, AiActivityQuery, AiActivityResponse};

use super::{key, HeadRecord, Sled};
use crate::storage::StorageError;

impl Sled {
    /// Fills `ai_activity_by_time` from `ai_activity` once (a folder written before the
    /// index existed); idempotent: an entry is its row's key and fields, so writing it
    /// again changes nothing, and the marker is set only after every row is indexed.
    pub(super) fn index_ai_activity(&self) -> Result<(), StorageError> {
        if self.db.get(AI_ACTIVITY_INDEXED)?.is_some() {
            return Ok(());
        }
        for item in self.ai_activity.iter() {
            let (k, v) = item?;
            let entry: AiActivityEntry = serde_json::from_slice(&v)?;
            let ws = &k[..k.iter().position(|b| *b == 0).ok_or_else(|| StorageError::Io("damaged ai activity key".into()))?];
            self.ai_activity_by_time.insert(activity_index_key(ws, entry.ai.accepted_at, entry.cursor), activity_index_value(&entry))?;
        }
        self.db.insert(AI_ACTIVITY_INDEXED, &[1u8][..])?;
        self.durable()
    }

    pub(super) fn ai_activity_page(&self, workspace_id: &str, only_member: Option<&str>, query: &AiActivityQuery) -> Result<AiActivityResponse, StorageError> {
        // Only what is durable, as a pull shows it.
        let durable = self.durable_cursors.lock().map_err(|_| StorageError::Io("cursor lock poisoned".into()))?.get(workspace_id).copied().unwrap_or(0);
        let limit = query.page();
        let ws = workspace_id.as_bytes();
        // `[since, until)` in accept time is a range of the index: the newest allowed
        // accept (until - 1) first, the oldest (since) last.
        let newest = match query.until {
            Some(0) => return Ok(AiActivityResponse { entries: Vec::new(), truncated: false }),
            Some(until) => until - 1,
            None => u64::MAX,
        };
        let oldest = query.since.unwrap_or(0);
        if oldest > newest {
            return Ok(AiActivityResponse { entries: Vec::new(), truncated: false });
        }
        let start = activity_index_key(ws, newest, u64::MAX);
        let end = activity_index_key(ws, oldest, 0);
        let mut entries = Vec::new();
        for item in self.ai_activity_by_time.range(start..=end) {
            let (k, v) = item?;
            let damaged = || StorageError::Io("damaged ai activity index key".into());
            let cursor = !u64::from_be_bytes(k.get(k.len().saturating_sub(8)..).ok_or_else(damaged)?.try_into().map_err(|_| damaged())?);
            if cursor > durable || !ActivityIndexValue::read(&v)?.passes(only_member, query) {
                continue;
            }
            let row = self.ai_activity.get(key(&[ws, &cursor.to_be_bytes()]))?.ok_or_else(|| StorageError::Io("the ai activity index names a missing row".into()))?;
            entries.push(serde_json::from_slice::<AiActivityEntry>(&row)?);
            // One more than the page tells whether more matched.
            if entries.len() > limit {
                break;
            }
        }
        let mut page = crate::storage::ai_page(entries, limit);
        for entry in &mut page.entries {
            entry.project_title = Sled::get::<HeadRecord>(&self.heads, &key(&[workspace_id.as_bytes(), entry.project_id.as_bytes()]))?.map(|h| h.title);
        }
        Ok(page)
    }
}

/// The default tree's key saying `ai_activity_by_time` holds every `ai_activity` row.
pub(super) const AI_ACTIVITY_INDEXED: &[u8] = b"ai_activity_by_time indexed v1";

/// `workspace \0 !acceptedAt !cursor`: ascending key order is newest accept first, then
/// newest cursor, the order of a page.
pub(super) fn activity_index_key(ws: &[u8], accepted_at: u64, cursor: u64) -> Vec<u8> {
    key(&[ws, &[(!accepted_at).to_be_bytes(), (!cursor).to_be_bytes()].concat()])
}

/// What a page's filters test, length-prefixed (u32 BE) so any text survives:
/// project, member id, pusher's name, model.
pub(super) fn activity_index_value(entry: &AiActivityEntry) -> Vec<u8> {
    let mut out = Vec::new();
    for field in [&entry.project_id, &entry.member_id, &entry.pushed_by, &entry.ai.model] {
        out.extend_from_slice(&(field.len() as u32).to_be_bytes());
        out.extend_from_slice(field.as_bytes());
    }
    out
}

/// [`activity_index_value`] read back.
struct ActivityIndexValue<'a> {
    project_id: &'a [u8],
    member_id: &'a [u8],
    pushed_by: &'a [u8],
    model: &'a [u8],
}

impl<'a> ActivityIndexValue<'a> {
    fn read(bytes: &'a [u8]) -> Result<ActivityIndexValue<'a>, StorageError> {
        let damaged = || StorageError::Io("damaged ai activity index entry".into());
        let mut rest = bytes;
        let mut fields: [&'a [u8]; 4] = [&[]; 4];
        for field in &mut fields {
            let len = u32::from_be_bytes(rest.get(..4).ok_or_else(damaged)?.try_into().map_err(|_| damaged())?) as usize;
            *field = rest.get(4..4 + len).ok_or_else(damaged)?;
            rest = &rest[4 + len..];
        }
        let [project_id, member_id, pushed_by, model] = fields;
        Ok(ActivityIndexValue { project_id, member_id, pushed_by, model })
    }

    /// Whether the row passes `query`'s filters other than its dates (the walk's bounds)
    /// and, for an editor, is theirs.
    fn passes(&self, only_member: Option<&str>, query: &AiActivityQuery) -> bool {
        only_member.is_none_or(|m| self.member_id == m.as_bytes())
            && query.project.as_ref().is_none_or(|p| self.project_id == p.as_bytes())
            && query.person.as_ref().is_none_or(|p| self.pushed_by == p.as_bytes())
            && query.model.as_ref().is_none_or(|m| self.model == m.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use inkstone_sync_proto::{AiOrigin, AiThrough, PushRequest, PushVersion, Role};

    use super::super::SledStorage;
    use crate::storage::{Caller, PushOutcome, Storage};

    /// The query as it was before the index: every row of the workspace read, filtered,
    /// sorted. Kept for tests, which compare the two.
    fn ai_activity_full_scan(storage: &SledStorage, workspace_id: &str, only_member: Option<&str>, query: &AiActivityQuery) -> Result<AiActivityResponse, StorageError> {
        let durable = storage.inner.durable_cursors.lock().map_err(|_| StorageError::Io("cursor lock poisoned".into()))?.get(workspace_id).copied().unwrap_or(0);
        let mut prefix = workspace_id.as_bytes().to_vec();
        prefix.push(0);
        let mut entries = Vec::new();
        for item in storage.inner.ai_activity.scan_prefix(&prefix) {
            let (_, value) = item?;
            let entry: AiActivityEntry = serde_json::from_slice(&value)?;
            if entry.cursor <= durable && only_member.is_none_or(|m| entry.member_id == m) && query.matches(&entry) {
                entries.push(entry);
            }
        }
        let mut page = crate::storage::ai_page(entries, query.page());
        for entry in &mut page.entries {
            entry.project_title = Sled::get::<HeadRecord>(&storage.inner.heads, &key(&[workspace_id.as_bytes(), entry.project_id.as_bytes()]))?.map(|h| h.title);
        }
        Ok(page)
    }

    /// A small generator, so the rows differ from run to run only by the seed.
    struct Lcg(u64);

    impl Lcg {
        fn below(&mut self, n: u64) -> u64 {
            self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (self.0 >> 33) % n
        }
    }

    fn ai_version(id: &str, name: &str, at: u64, model: &str) -> PushVersion {
        PushVersion {
            client_id: id.to_owned(),
            title: format!("标题 {id}"),
            source: format!("正文 {id}"),
            author: name.to_owned(),
            message: None,
            content_hash: format!("sha256:{}", "a".repeat(64)),
            created_at: "2026-11-26T00:00:00Z".into(),
            origin: Some("aiProposal".into()),
            ai: Some(AiOrigin {
                accepted_by: name.to_owned(),
                accepted_at: at,
                model: model.to_owned(),
                provider_host: None,
                prompt_version: None,
                prompt_layers: Vec::new(),
                proposal_id: format!("prp_{id}"),
                n_hunks: 1,
                n_hunks_total: None,
                through: AiThrough::DraftingSession { session_id: "ses_1".into() },
            }),
        }
    }

    /// Pushes generated AI versions (three members, three projects, three models, accept
    /// times out of cursor order and often equal, a few versions without AI origin)
    /// into a new workspace; the callers, owner first.
    fn seeded(storage: &SledStorage, seed: u64, n: usize) -> Vec<Caller> {
        let (workspace, issued) = storage.create_workspace("团队", "olive").unwrap();
        let mut callers = vec![storage.authenticate(&issued.token).unwrap().unwrap()];
        for name in ["ed", "rare"] {
            let token = storage.invite(&workspace, name, Role::Editor).unwrap().token;
            callers.push(storage.authenticate(&token).unwrap().unwrap());
        }
        let mut rng = Lcg(seed);
        let mut heads = [0u32; 3];
        let mut made = 0;
        let mut push = 0;
        while made < n {
            let who = match rng.below(10) {
                0 => 2,
                1..=4 => 1,
                _ => 0,
            };
            let project = rng.below(3) as usize;
            let count = 1 + rng.below(8) as usize;
            let versions: Vec<PushVersion> = (0..count)
                .map(|i| {
                    let id = format!("v{seed}_{}", made + i);
                    let mut v = ai_version(&id, &callers[who].member.name, 1_000 + rng.below(200) * 10, &format!("model-{}", rng.below(3)));
                    if rng.below(20) == 0 {
                        v.ai = None;
                    }
                    v
                })
                .collect();
            made += count;
            push += 1;
            let request = PushRequest { base: heads[project], versions };
            let key = format!("k{push}");
            match storage.push(&callers[who], &format!("prj_{project}"), &request, &key, &key).unwrap() {
                PushOutcome::Done(response) => heads[project] = response.head,
                other => panic!("push: {other:?}"),
            }
        }
        callers
    }

    /// Every filter alone and a few together, each at a page that truncates and one that
    /// does not.
    fn queries() -> Vec<AiActivityQuery> {
        let none = AiActivityQuery { project: None, person: None, model: None, since: None, until: None, limit: None };
        let mut out = vec![
            none.clone(),
            AiActivityQuery { person: Some("ed".into()), ..none.clone() },
            AiActivityQuery { person: Some("rare".into()), ..none.clone() },
            AiActivityQuery { person: Some("nobody".into()), ..none.clone() },
            AiActivityQuery { model: Some("model-1".into()), ..none.clone() },
            AiActivityQuery { project: Some("prj_2".into()), ..none.clone() },
            AiActivityQuery { since: Some(1_500), ..none.clone() },
            AiActivityQuery { until: Some(1_500), ..none.clone() },
            AiActivityQuery { since: Some(1_300), until: Some(1_700), ..none.clone() },
            AiActivityQuery { since: Some(1_500), until: Some(1_510), ..none.clone() },
            AiActivityQuery { since: Some(1_700), until: Some(1_300), ..none.clone() },
            AiActivityQuery { until: Some(0), ..none.clone() },
            AiActivityQuery { since: Some(0), until: Some(u64::MAX), ..none.clone() },
            AiActivityQuery { person: Some("ed".into()), model: Some("model-2".into()), project: Some("prj_0".into()), since: Some(1_200), ..none.clone() },
        ];
        for q in out.clone() {
            for limit in [1, 7, 1_000] {
                out.push(AiActivityQuery { limit: Some(limit), ..q.clone() });
            }
        }
        out
    }

    fn assert_index_matches_full_scan(storage: &SledStorage, callers: &[Caller]) {
        let ws = &callers[0].workspace_id;
        let mut compared = 0;
        for query in queries() {
            // An owner's view, then each editor's own rows.
            for only in [None, Some(callers[1].member.id.as_str()), Some(callers[2].member.id.as_str())] {
                let indexed = storage.ai_activity(ws, only, &query).unwrap();
                let scanned = ai_activity_full_scan(storage, ws, only, &query).unwrap();
                assert_eq!(indexed, scanned, "query {query:?} for {only:?}");
                compared += usize::from(!scanned.entries.is_empty());
            }
        }
        // The comparison is not vacuous.
        assert!(compared > 50, "only {compared} non-empty pages");
    }

    #[test]
    fn the_indexed_ai_activity_query_answers_as_the_full_scan_did() {
        for seed in [1, 7, 42] {
            let dir = tempfile::tempdir().unwrap();
            let storage = SledStorage::open(dir.path()).unwrap();
            let callers = seeded(&storage, seed, 600);
            // Another workspace's rows stay out of this one's pages.
            seeded(&storage, seed + 100, 50);
            assert_index_matches_full_scan(&storage, &callers);
        }
    }

    #[test]
    fn a_store_from_before_the_ai_activity_index_gets_it_at_open() {
        let dir = tempfile::tempdir().unwrap();
        let storage = SledStorage::open(dir.path()).unwrap();
        let callers = seeded(&storage, 3, 300);
        let rows = storage.inner.ai_activity.len();
        assert_eq!(storage.inner.ai_activity_by_time.len(), rows);
        // As a build before the index left it.
        storage.inner.ai_activity_by_time.clear().unwrap();
        storage.inner.db.remove(AI_ACTIVITY_INDEXED).unwrap();
        storage.inner.durable().unwrap();
        drop(storage);
        let reopened = SledStorage::open(dir.path()).unwrap();
        assert_eq!(reopened.inner.ai_activity_by_time.len(), rows);
        assert_index_matches_full_scan(&reopened, &callers);
        // Opening again indexes nothing twice.
        drop(reopened);
        let again = SledStorage::open(dir.path()).unwrap();
        assert_eq!(again.inner.ai_activity_by_time.len(), rows);
        assert_index_matches_full_scan(&again, &callers);
    }
}
