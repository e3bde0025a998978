//! The open proposals of each session or run, by project: one entry per proposal that a
//! session or run made and that is still `proposed`, with what decides whether a new
//! proposal supersedes it (its target and kind family). It is derived from
//! [`Proposal`] by [`Record::derived`] in the same transaction as every proposal write:
//! a put while proposed writes the entry, any other status deletes it. So finding the
//! alternatives of a new proposal reads a few entries instead of every proposal the
//! project ever had, each with its whole texts.
//!
//! A backup carries only the proposals; importing them writes the entries again. A data
//! folder written before the index existed is indexed once when the engine opens
//! ([`index_existing`]).

use serde::{Deserialize, Serialize};

use super::{Proposal, ProposalStatus};
use crate::model::Timestamp;
use crate::store::{keys, Batch, Kind, Record, Store, StoreError};

/// One open proposal of a session or run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenProposal {
    pub project_id: String,
    /// The session or run that made it.
    pub owner_id: String,
    pub proposal_id: String,
    /// Its target's key (`source`, `draft:x`, `comment:<id>`, …).
    pub target: String,
    /// Its kind's family: proposals of one family replace each other.
    pub family: String,
}

impl Record for OpenProposal {
    const KIND: Kind = Kind::OpenProposals;
    fn key(&self) -> Vec<u8> {
        let mut key = prefix(&self.project_id, &self.owner_id);
        key.extend_from_slice(self.proposal_id.as_bytes());
        key
    }
}

/// `project_id 0x00 owner_id 0x00`: the entries of one session or run in one project,
/// in proposal id order (ids sort by creation).
pub fn prefix(project_id: &str, owner_id: &str) -> Vec<u8> {
    let mut key = keys::child(project_id, owner_id);
    key.push(0);
    key
}

/// Stages `proposal`'s entry: written while it is proposed, deleted otherwise. A
/// proposal of no session or run (a person's, the API's) has none.
pub(super) fn stage(proposal: &Proposal, batch: &mut Batch) -> Result<(), StoreError> {
    let Some(owner_id) = proposal.origin.owner_id() else { return Ok(()) };
    let entry = OpenProposal {
        project_id: proposal.project_id.clone(),
        owner_id: owner_id.to_owned(),
        proposal_id: proposal.id.clone(),
        target: proposal.target.key(),
        family: proposal.kind.family().to_owned(),
    };
    if proposal.status == ProposalStatus::Proposed {
        batch.put(&entry)?;
    } else {
        batch.delete::<OpenProposal>(entry.key());
    }
    Ok(())
}

/// The open proposals `owner_id` made in `project_id`, oldest first.
pub fn of_owner(store: &Store, project_id: &str, owner_id: &str) -> Result<Vec<OpenProposal>, StoreError> {
    store.scan::<OpenProposal>(&prefix(project_id, owner_id))
}

/// Meta key: the proposals stored before the index existed were indexed.
const META_INDEXED: &[u8] = b"open_proposals_indexed_v1";

/// Writes the entries of the proposals stored before the index existed, once per data
/// folder (the proposals themselves are not rewritten). Called when the engine opens.
pub fn index_existing(store: &Store, now: Timestamp) -> Result<(), StoreError> {
    store.derive_once(META_INDEXED, now, |batch| {
        for proposal in store.scan::<Proposal>(b"")?.iter().filter(|p| p.status == ProposalStatus::Proposed) {
            stage(proposal, batch)?;
        }
        Ok(())
    })
}
