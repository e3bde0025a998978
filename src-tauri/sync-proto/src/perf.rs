//! Performance data on the wire: accounts, publications, metric snapshots and accounts'
//! days, pushed as records that the later stamp wins ([`PerfRecord::stamp`]).

use serde::{Deserialize, Serialize};

/// A server that lists this in `features` keeps the workspace's performance data —
/// publishing accounts, publications and metric snapshots — (`POST /v1/perf` for
/// editors and owners, `GET /v1/perf` for every member). An app talking to a server
/// without it keeps its performance data to itself and says so; an older app never
/// asks and still syncs versions.
pub const FEATURE_PERFORMANCE_DATA: &str = "performanceData";

/// A server that lists this in `features` (beside [`FEATURE_PERFORMANCE_DATA`]) also
/// keeps accounts' days ([`PerfKind::AccountSnapshot`]: followers per day, as an
/// account-level export reports them). An app sends them only to such a server, and
/// asks for them on `GET /v1/perf` with `include=accountSnapshot`
/// ([`PERF_INCLUDE_ACCOUNT_SNAPSHOTS`]); without it the server leaves them out of the
/// page (an older app's `PerfKind` has no such kind and would refuse the page).
pub const FEATURE_ACCOUNT_SNAPSHOTS: &str = "accountSnapshots";

/// The `include` value of `GET /v1/perf` that asks for account snapshots too.
pub const PERF_INCLUDE_ACCOUNT_SNAPSHOTS: &str = "accountSnapshot";

/// The most records one performance push may carry.
pub const MAX_PERF_RECORDS_PER_PUSH: usize = 200;
/// The largest body of one performance record, in bytes.
pub const MAX_PERF_BODY_BYTES: usize = 256 * 1024;

/// What a performance record is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum PerfKind {
    /// A publishing account of the workspace: last writer wins.
    Account,
    /// A publication: last writer wins.
    Publication,
    /// A metric snapshot: append-only, never replaced once the server holds its id.
    Snapshot,
    /// An account's day (an account snapshot): append-only like a metric snapshot.
    /// Only for a server with [`FEATURE_ACCOUNT_SNAPSHOTS`].
    AccountSnapshot,
}

impl PerfKind {
    pub fn as_str(self) -> &'static str {
        match self {
            PerfKind::Account => "account",
            PerfKind::Publication => "publication",
            PerfKind::Snapshot => "snapshot",
            PerfKind::AccountSnapshot => "accountSnapshot",
        }
    }

    /// Append-only: written once, never replaced or deleted on its own. The same id
    /// again with the same content is a resend; with other content, a conflict.
    pub fn append_only(self) -> bool {
        matches!(self, PerfKind::Snapshot | PerfKind::AccountSnapshot)
    }
}

/// One performance record as a client pushes it. The server keeps one row per
/// (`kind`, `id`); the app's record travels as `body`, JSON text the server stores
/// as it came and does not read.
///
/// Which write wins: for accounts and publications the one with the later
/// `(updatedAt, editId)` — the same rule on the server and in every app, so all of
/// them end on the same record whatever order the writes arrive in, and a resend of
/// a write the server holds (or has seen beaten) changes nothing. A snapshot is
/// written once: a resend is a no-op, and nothing ever replaces it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PerfRecord {
    pub kind: PerfKind,
    /// The app's id of the record (`acc_…`, `pub_…`, `snp_…`).
    pub id: String,
    /// The project of a publication or snapshot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_id: Option<String>,
    /// The publication of a snapshot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub publication_id: Option<String>,
    /// The account of an account snapshot (absent otherwise, so an older server, which
    /// never receives an account snapshot, never meets the field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account_id: Option<String>,
    /// Unix milliseconds of the write (the record's own `updatedAt`).
    pub updated_at: u64,
    /// `sha256:` + hex of `body` (of the id for a deletion): breaks a tie of
    /// `updatedAt` the same way everywhere.
    pub edit_id: String,
    /// True: the record was deleted for good (a confirmed removal); `body` is absent.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deleted: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
}

impl PerfRecord {
    /// The order of writes to one record: the later one wins.
    pub fn stamp(&self) -> (u64, &str) {
        (self.updated_at, self.edit_id.as_str())
    }

    /// Why the record cannot be stored (the words), or None.
    pub fn invalid(&self) -> Option<String> {
        let id_ok = |id: &str| (1..=100).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if !id_ok(&self.id) {
            return Some("`id` must be 1–100 letters, digits, `_` or `-`.".into());
        }
        if [&self.project_id, &self.publication_id, &self.account_id].into_iter().any(|p| p.as_deref().is_some_and(|p| !id_ok(p))) {
            return Some("`projectId`, `publicationId` and `accountId` must be 1–100 letters, digits, `_` or `-`.".into());
        }
        if !self.edit_id.starts_with("sha256:") || self.edit_id.len() != 71 {
            return Some("`editId` must be sha256: and 64 hex digits.".into());
        }
        match (self.kind, &self.project_id, &self.publication_id, &self.account_id) {
            (PerfKind::Account, None, None, None)
            | (PerfKind::Publication, Some(_), None, None)
            | (PerfKind::Snapshot, Some(_), Some(_), None)
            | (PerfKind::AccountSnapshot, None, None, Some(_)) => {}
            _ => return Some("An account names no project, a publication names its project, a snapshot its project and publication, an account snapshot only its account.".into()),
        }
        match (&self.body, self.deleted) {
            (Some(body), false) if body.len() <= MAX_PERF_BODY_BYTES => None,
            (Some(_), false) => Some(format!("A record's body is at most {MAX_PERF_BODY_BYTES} bytes.")),
            (None, true) if !self.kind.append_only() => None,
            (None, true) => Some("A snapshot is never deleted on its own (it goes with its publication or account).".into()),
            _ => Some("A record has a body, or is deleted and has none.".into()),
        }
    }
}

/// `POST /v1/perf`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PerfPushRequest {
    pub records: Vec<PerfRecord>,
}

/// What the server did with one pushed record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PerfAck {
    pub kind: PerfKind,
    pub id: String,
    pub edit_id: String,
    /// True when this write is now the server's record; false when the server holds
    /// it already (a resend), a later write, or the record was deleted.
    pub applied: bool,
    /// True when the server holds other content under this append-only id (a snapshot
    /// is written once): this write was not kept, and resending it never will be.
    /// Absent from older servers' acks (they kept the first silently).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub conflict: bool,
}

/// The answer to `POST /v1/perf`, one ack per record in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PerfPushResponse {
    pub acks: Vec<PerfAck>,
}

/// A performance record as the server holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerPerfRecord {
    pub record: PerfRecord,
    /// The member whose push first stored this id (who added it).
    pub created_by: String,
    /// The member whose push wrote it last.
    pub pushed_by: String,
    /// The workspace's performance cursor of this write.
    pub cursor: u64,
}

/// `GET /v1/perf?since=&limit=`: the latest write of each record changed after
/// `since`, oldest first (a record written again moves to its new cursor).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PerfChangesResponse {
    pub records: Vec<ServerPerfRecord>,
    pub cursor: u64,
    pub more: bool,
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_perf_record_is_checked_and_the_later_stamp_wins_the_same_way_everywhere() {
        let hash = |c: char| format!("sha256:{}", c.to_string().repeat(64));
        let publication = PerfRecord {
            kind: PerfKind::Publication,
            id: "pub_1".into(),
            project_id: Some("prj_1".into()),
            publication_id: None,
            account_id: None,
            updated_at: 5,
            edit_id: hash('a'),
            deleted: false,
            body: Some("{}".into()),
        };
        assert_eq!(publication.invalid(), None);
        let wire = serde_json::to_value(&publication).unwrap();
        assert_eq!(wire, json!({"kind": "publication", "id": "pub_1", "projectId": "prj_1", "updatedAt": 5, "editId": hash('a'), "body": "{}"}));
        assert_eq!(serde_json::from_value::<PerfRecord>(wire).unwrap(), publication);
        // Ties on time go to the larger edit id; a later time wins whatever the id.
        let tie = PerfRecord { edit_id: hash('b'), ..publication.clone() };
        assert!(tie.stamp() > publication.stamp());
        let later = PerfRecord { updated_at: 6, edit_id: hash('0'), ..publication.clone() };
        assert!(later.stamp() > tie.stamp());
        for bad in [
            PerfRecord { id: "a b".into(), ..publication.clone() },
            PerfRecord { project_id: None, ..publication.clone() },
            PerfRecord { kind: PerfKind::Snapshot, ..publication.clone() },
            PerfRecord { kind: PerfKind::Account, ..publication.clone() },
            PerfRecord { edit_id: "x".into(), ..publication.clone() },
            PerfRecord { body: None, ..publication.clone() },
            PerfRecord { deleted: true, ..publication.clone() },
            PerfRecord { body: Some("x".repeat(MAX_PERF_BODY_BYTES + 1)), ..publication.clone() },
            PerfRecord { kind: PerfKind::Snapshot, publication_id: Some("pub_1".into()), body: None, deleted: true, ..publication.clone() },
            PerfRecord { account_id: Some("acc_1".into()), ..publication.clone() },
            PerfRecord { kind: PerfKind::AccountSnapshot, ..publication.clone() },
            PerfRecord { kind: PerfKind::AccountSnapshot, project_id: None, ..publication.clone() },
            PerfRecord { kind: PerfKind::AccountSnapshot, project_id: None, account_id: Some("acc 1".into()), ..publication.clone() },
            PerfRecord { kind: PerfKind::AccountSnapshot, project_id: None, account_id: Some("acc_1".into()), body: None, deleted: true, ..publication.clone() },
        ] {
            assert!(bad.invalid().is_some(), "{bad:?}");
        }
        assert_eq!(PerfRecord { body: None, deleted: true, ..publication.clone() }.invalid(), None, "a publication may be deleted");
        // An account snapshot names its account only; on the wire as `accountSnapshot`.
        let day = PerfRecord { kind: PerfKind::AccountSnapshot, project_id: None, account_id: Some("acc_1".into()), ..publication.clone() };
        assert_eq!(day.invalid(), None);
        let wire = serde_json::to_value(&day).unwrap();
        assert_eq!((wire["kind"].as_str(), wire["accountId"].as_str(), wire.get("projectId")), (Some(PERF_INCLUDE_ACCOUNT_SNAPSHOTS), Some("acc_1"), None));
        assert!(PerfKind::AccountSnapshot.append_only() && PerfKind::Snapshot.append_only() && !PerfKind::Account.append_only());
        // An ack's conflict is absent unless set, and an older server's ack reads without it.
        let ack = PerfAck { kind: PerfKind::Snapshot, id: "snp_1".into(), edit_id: hash('a'), applied: false, conflict: false };
        assert!(serde_json::to_value(&ack).unwrap().get("conflict").is_none());
        let old: PerfAck = serde_json::from_value(json!({"kind": "snapshot", "id": "snp_1", "editId": hash('a'), "applied": false})).unwrap();
        assert_eq!(old, ack);
        // An unknown field is refused, as every push's is.
        assert!(serde_json::from_value::<PerfPushRequest>(json!({"records": [], "more": 1})).is_err());
    }
}
