//! One push inside a group commit's transaction: the dedupe check, the stale-base and
//! reused-id refusals, then the versions, changes, client ids and AI activity rows.

use inkstone_sync_proto::{AiActivityEntry, PushResponse, PushedVersion, ServerVersion, StaleBase, MAX_PAGE_BYTES};
use sled::transaction::{ConflictableTransactionError, Transactional};

use super::activity::{activity_index_key, activity_index_value};
use super::{abort, key, tx_error, DedupeRecord, HeadRecord, PushJob, Sled};
use crate::storage::{Page, PushOutcome, StorageError};

impl Sled {
    /// Applies `group` in one transaction, in order; each push sees the ones before it.
    /// A push refused (stale base, reused key) writes nothing and gets its error; an
    /// error of the store fails the whole group and writes nothing.
    pub(super) fn apply(&self, group: &[PushJob]) -> Result<Vec<Result<PushOutcome, StorageError>>, StorageError> {
        (&self.heads, &self.versions, &self.changes, &self.cursors, &self.dedupe, &self.client_ids, &self.ai_activity, &self.ai_activity_by_time)
            .transaction(|(heads, versions, changes, cursors, dedupe, client_ids, ai_activity, ai_activity_by_time)| {
                let mut answers = Vec::with_capacity(group.len());
                for job in group {
                    answers.push(match apply_push((heads, versions, changes, cursors, dedupe, client_ids, ai_activity, ai_activity_by_time), job) {
                        Ok(outcome) => Ok(outcome),
                        Err(ConflictableTransactionError::Abort(refused)) => Err(refused),
                        Err(other) => return Err(other),
                    });
                }
                Ok(answers)
            })
            .map_err(tx_error)
    }
}

type Trees<'a> = (
    &'a sled::transaction::TransactionalTree,
    &'a sled::transaction::TransactionalTree,
    &'a sled::transaction::TransactionalTree,
    &'a sled::transaction::TransactionalTree,
    &'a sled::transaction::TransactionalTree,
    &'a sled::transaction::TransactionalTree,
    &'a sled::transaction::TransactionalTree,
    &'a sled::transaction::TransactionalTree,
);

/// One push inside a group's transaction: the key's earlier result, or the push and its
/// result. Every refusal and every encoding happens before the first write, so an
/// `Abort` leaves nothing of this push in the transaction.
fn apply_push(
    (heads, versions, changes, cursors, dedupe, client_ids, ai_activity, ai_activity_by_time): Trees<'_>,
    job: &PushJob,
) -> Result<PushOutcome, ConflictableTransactionError<StorageError>> {
    let (ws, project_id, request) = (job.workspace_id.as_str(), job.project_id.as_str(), &job.request);
    if let Some(bytes) = dedupe.get(&job.claim.key)? {
        let record: DedupeRecord = serde_json::from_slice(&bytes).map_err(abort)?;
        if record.payload_hash != job.payload_hash {
            return Err(ConflictableTransactionError::Abort(StorageError::KeyReused));
        }
        if let Some(response) = record.response {
            return Ok(PushOutcome::Replayed(response));
        }
    }
    let head_at = key(&[ws.as_bytes(), project_id.as_bytes()]);
    let head: Option<HeadRecord> = match heads.get(&head_at)? {
        Some(bytes) => Some(serde_json::from_slice(&bytes).map_err(abort)?),
        None => None,
    };
    let current = head.as_ref().map_or(0, |h| h.head);
    if request.base != current {
        // At most a page of the newer versions: the client pulls the rest.
        let mut newer = Vec::new();
        let mut page = Page::new(usize::MAX, MAX_PAGE_BYTES);
        let mut more = false;
        for number in request.base.saturating_add(1)..=current {
            if let Some(bytes) = versions.get(key(&[ws.as_bytes(), project_id.as_bytes(), &number.to_be_bytes()]))? {
                if !page.admit(bytes.len()) {
                    more = true;
                    break;
                }
                newer.push(serde_json::from_slice::<ServerVersion>(&bytes).map_err(abort)?);
            }
        }
        return Err(ConflictableTransactionError::Abort(StorageError::Stale(StaleBase { project_id: project_id.to_owned(), base: request.base, head: current, newer, more })));
    }
    // A version id the workspace holds already is refused, whoever pushed it: a client
    // recognises its own versions by id, so a reused one would pass for theirs.
    for v in &request.versions {
        if client_ids.get(key(&[ws.as_bytes(), v.client_id.as_bytes()]))?.is_some() {
            return Err(ConflictableTransactionError::Abort(StorageError::VersionIdTaken(v.client_id.clone())));
        }
    }
    let mut cursor = match cursors.get(ws.as_bytes())? {
        Some(bytes) => u64::from_be_bytes(bytes.as_ref().try_into().map_err(abort)?),
        None => 0,
    };
    let mut number = current;
    let mut writes = Vec::with_capacity(request.versions.len());
    let mut out = Vec::with_capacity(request.versions.len());
    let mut title = head.map(|h| h.title).unwrap_or_default();
    let mut details = Vec::new();
    for v in &request.versions {
        number += 1;
        cursor += 1;
        let version = ServerVersion {
            project_id: project_id.to_owned(),
            number,
            client_id: v.client_id.clone(),
            title: v.title.clone(),
            source: v.source.clone(),
            // Who pushed it, as the server knows them: never the name a client claims.
            author: job.pushed_by.clone(),
            message: v.message.clone(),
            content_hash: v.content_hash.clone(),
            created_at: v.created_at.clone(),
            pushed_by: job.pushed_by.clone(),
            cursor,
            origin: v.origin.clone(),
        };
        let number_key = key(&[ws.as_bytes(), project_id.as_bytes(), &number.to_be_bytes()]);
        let change = (key(&[ws.as_bytes(), &cursor.to_be_bytes()]), change_value(project_id, number));
        if let Some(ai) = &v.ai {
            let entry = AiActivityEntry {
                project_id: project_id.to_owned(),
                project_title: None,
                number,
                client_id: v.client_id.clone(),
                cursor,
                member_id: job.member_id.clone(),
                pushed_by: job.pushed_by.clone(),
                ai: ai.clone(),
            };
            let index = (activity_index_key(ws.as_bytes(), entry.ai.accepted_at, cursor), activity_index_value(&entry));
            details.push((change.0.clone(), serde_json::to_vec(&entry).map_err(abort)?, index));
        }
        writes.push((number_key, serde_json::to_vec(&version).map_err(abort)?, change, (key(&[ws.as_bytes(), v.client_id.as_bytes()]), change_value(project_id, number))));
        title.clone_from(&v.title);
        out.push(PushedVersion { client_id: v.client_id.clone(), number, cursor });
    }
    let response = PushResponse { project_id: project_id.to_owned(), head: number, versions: out };
    let head_record = serde_json::to_vec(&HeadRecord { head: number, title }).map_err(abort)?;
    let done = serde_json::to_vec(&DedupeRecord { payload_hash: job.payload_hash.clone(), at: job.at, response: Some(response.clone()) }).map_err(abort)?;
    for (number_key, version, (change_key, change), (id_key, id_value)) in writes {
        versions.insert(number_key, version)?;
        changes.insert(change_key, change)?;
        client_ids.insert(id_key, id_value)?;
    }
    for (at, entry, (index_key, index_value)) in details {
        ai_activity.insert(at, entry)?;
        ai_activity_by_time.insert(index_key, index_value)?;
    }
    heads.insert(head_at, head_record)?;
    cursors.insert(ws.as_bytes(), &cursor.to_be_bytes())?;
    dedupe.insert(job.claim.key.as_slice(), done)?;
    Ok(PushOutcome::Done(response))
}

/// `project \0 number`: where a change or a client id points.
pub(super) fn change_value(project_id: &str, number: u32) -> Vec<u8> {
    key(&[project_id.as_bytes(), &number.to_be_bytes()])
}
