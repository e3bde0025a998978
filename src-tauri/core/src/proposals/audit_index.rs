//! The AI activity index over the audit trail: every accept or reject of an AI
//! proposal, newest first, under eight scopes (everything, its project, its person,
//! its model; its decision, alone and with each of the other three), so the activity
//! view reads one page of one scope and stops. The decision scopes exist because a
//! rare decision (rejections are few) filtered out of a common scope walked most of it. It is
//! derived from [`AuditRecord`] by [`Record::derived`], so it is written in the same
//! transaction as the record it indexes; a backup carries only the audit records and
//! importing them writes the index again.

use serde::{Deserialize, Serialize};

use super::apply::{AuditAction, AuditRecord};
use crate::model::Timestamp;
use crate::store::{Batch, Kind, Record, StoreError};

/// The scopes one audit record is indexed under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope<'a> {
    All,
    Project(&'a str),
    Person(&'a str),
    Model(&'a str),
    /// `accepted` or `rejected` ([`decision_name`]).
    Decision(&'a str),
    DecisionProject(&'a str, &'a str),
    DecisionPerson(&'a str, &'a str),
    DecisionModel(&'a str, &'a str),
}

impl Scope<'_> {
    /// `scope 0x00`: the prefix of the scope's keys. Names are escaped so a 0x00 in a
    /// name cannot reach into the time part.
    pub fn prefix(self) -> Vec<u8> {
        // A compound scope's decision comes first and is one of two fixed words, so
        // `dp:rejected:` + a name cannot be mistaken for another scope's key.
        let (tag, decision, name) = match self {
            Scope::All => ("*", None, ""),
            Scope::Project(id) => ("p", None, id),
            Scope::Person(name) => ("a", None, name),
            Scope::Model(model) => ("m", None, model),
            Scope::Decision(decision) => ("d", None, decision),
            Scope::DecisionProject(decision, id) => ("dp", Some(decision), id),
            Scope::DecisionPerson(decision, name) => ("da", Some(decision), name),
            Scope::DecisionModel(decision, model) => ("dm", Some(decision), model),
        };
        let mut key = Vec::with_capacity(4 + decision.map_or(0, |d| d.len() + 1) + name.len());
        key.extend_from_slice(tag.as_bytes());
        key.push(b':');
        if let Some(decision) = decision {
            key.extend_from_slice(decision.as_bytes());
            key.push(b':');
        }
        key.extend(name.bytes().filter(|b| *b != 0));
        key.push(0);
        key
    }
}

/// The decision scope's word for an action: `accepted` (all or some hunks) or
/// `rejected` (all or some hunks); `None` for a rebase, which is not listed.
pub fn decision_name(action: AuditAction) -> Option<&'static str> {
    match action {
        AuditAction::Accepted | AuditAction::PartiallyAccepted => Some("accepted"),
        AuditAction::Rejected | AuditAction::HunksRejected => Some("rejected"),
        AuditAction::Rebased => None,
    }
}

/// Milliseconds since the epoch as big-endian bytes that sort like the times (the sign
/// bit flipped).
pub fn time_key(at: Timestamp) -> [u8; 8] {
    ((at.timestamp_millis() as u64) ^ (1 << 63)).to_be_bytes()
}

/// One index entry: enough to filter without reading the audit record, and its key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditIndexEntry {
    /// The key prefix of the scope ([`Scope::prefix`]), as text.
    pub scope: String,
    pub at: Timestamp,
    pub audit_id: String,
    pub project_id: String,
    pub actor: String,
    pub model: String,
    pub action: AuditAction,
}

impl Record for AuditIndexEntry {
    const KIND: Kind = Kind::AuditIndex;
    fn key(&self) -> Vec<u8> {
        let mut key = self.scope.as_bytes().to_vec();
        key.extend_from_slice(&time_key(self.at));
        key.extend_from_slice(self.audit_id.as_bytes());
        key
    }
}

/// True for the actions the activity view lists (a rebase is neither an accept nor a
/// reject: it carries a proposal over, and the later decision is listed).
pub fn is_decision(action: AuditAction) -> bool {
    decision_name(action).is_some()
}

/// Stages the index entries of `record` (see [`AuditRecord`]'s `derived`).
pub(super) fn stage(record: &AuditRecord, batch: &mut Batch) -> Result<(), StoreError> {
    let Some(decision) = decision_name(record.action) else { return Ok(()) };
    let (project, person, model) = (record.project_id.as_str(), record.actor.as_str(), record.origin.model.as_str());
    for scope in [
        Scope::All,
        Scope::Project(project),
        Scope::Person(person),
        Scope::Model(model),
        Scope::Decision(decision),
        Scope::DecisionProject(decision, project),
        Scope::DecisionPerson(decision, person),
        Scope::DecisionModel(decision, model),
    ] {
        batch.put(&AuditIndexEntry {
            scope: String::from_utf8_lossy(&scope.prefix()).into_owned(),
            at: record.at,
            audit_id: record.id.clone(),
            project_id: record.project_id.clone(),
            actor: record.actor.clone(),
            model: record.origin.model.clone(),
            action: record.action,
        })?;
    }
    Ok(())
}
