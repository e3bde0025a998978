//! The wire types between an Inkstone client (core's `sync` module) and
//! `inkstone-server`. Serde only: no IO, no framework. JSON, camelCase.
//!
//! A client pushes a project's accepted versions with the base it last saw (the
//! server's head for that project); the server numbers them after its head. A stale
//! base is `409` with the versions the client has not seen. Each push carries a dedupe
//! key (`Idempotency-Key`): the same key with the same payload returns the original
//! result; with another payload it is `422`; while the first is still in flight, `409`.

use serde::{Deserialize, Serialize};

/// The header that carries a push's dedupe key.
pub const IDEMPOTENCY_HEADER: &str = "Idempotency-Key";
/// The most versions one push may carry.
pub const MAX_VERSIONS_PER_PUSH: usize = 100;
/// The largest request body, in bytes.
pub const MAX_BODY_BYTES: usize = 8 * 1024 * 1024;
/// The most bytes of versions a server puts in one answer (a page of changes, the
/// newer versions of a 409): it stops before the version that would pass this, and
/// sends a single version larger than this alone. Servers before it paged by count
/// only.
pub const MAX_PAGE_BYTES: usize = 4 * 1024 * 1024;
/// The longest answer a client reads; it stops reading there. One version fits: a
/// push body is at most [`MAX_BODY_BYTES`], and a version as the server answers it
/// adds its numbers and names (well under [`ANSWER_ENVELOPE_BYTES`]).
pub const MAX_ANSWER_BYTES: usize = 16 * 1024 * 1024;
/// Room for what an answer holds around its versions.
pub const ANSWER_ENVELOPE_BYTES: usize = 64 * 1024;
const _: () = assert!(MAX_BODY_BYTES + ANSWER_ENVELOPE_BYTES <= MAX_ANSWER_BYTES && MAX_PAGE_BYTES + ANSWER_ENVELOPE_BYTES <= MAX_ANSWER_BYTES);

/// A server that lists this in `features` ([`WorkspaceInfo`], [`ChangesResponse`])
/// keeps a version's [`PushVersion::origin`] and returns it on pull. A client sends an
/// origin only to such a server: an older one refuses fields it does not know.
pub const FEATURE_VERSION_ORIGIN: &str = "versionOrigin";

/// A server that lists this in `features` keeps a workspace policy that owners set
/// (`GET /v1/policy` for every member, `PUT /v1/policy` for owners). An app talking to
/// a server without it has no policy; an older app never asks and still syncs.
pub const FEATURE_WORKSPACE_POLICY: &str = "workspacePolicy";

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

/// A server that lists this in `features` keeps each version's AI origin detail
/// ([`PushVersion::ai`]) apart from the version (it never goes out with a pull) and
/// answers `GET /v1/ai-activity` (owners: the workspace; editors: their own rows). An
/// app sends the detail only to such a server, and only while the workspace policy's
/// `shareActivity` is on; an older server refuses fields it does not know, and an
/// older app never sends one.
pub const FEATURE_AI_ACTIVITY: &str = "aiActivity";

/// Through what an AI change was accepted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum AiThrough {
    /// A person accepted it in a drafting session's review.
    #[serde(rename_all = "camelCase")]
    DraftingSession { session_id: String },
    /// A person applied an optimize run's package.
    #[serde(rename_all = "camelCase")]
    OptimizeRun { run_id: String },
    /// The assistant applied it with `apply_proposal` after the person approved.
    #[serde(rename_all = "camelCase")]
    ApplyProposal {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session_id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        approval_request_id: Option<String>,
    },
    /// Outside a session or run (through the API).
    Other,
}

/// How an accepted version came from AI, as it travels with the version when the
/// workspace shares AI activity: who accepted it, which model and provider host, which
/// prompt layers (their names and versions), which proposal and how many hunks, and
/// through what. Never a prompt, a transcript, a context, a key or a profile's URL.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AiOrigin {
    /// The person who accepted (for `apply_proposal`, who approved), as their app names them.
    pub accepted_by: String,
    /// Unix milliseconds of the accept.
    pub accepted_at: u64,
    /// The model id.
    pub model: String,
    /// The provider's host (no scheme, port or path); absent when unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_host: Option<String>,
    /// The prompt version of the call that proposed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_version: Option<String>,
    /// Every prompt layer of that call (name and version), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prompt_layers: Vec<String>,
    pub proposal_id: String,
    /// The hunks accepted.
    pub n_hunks: u32,
    /// The hunks the proposal had, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n_hunks_total: Option<u32>,
    pub through: AiThrough,
}

/// The most prompt layers an [`AiOrigin`] names, and the longest text of any of its fields.
pub const MAX_AI_LAYERS: usize = 50;
pub const MAX_AI_TEXT: usize = 200;

impl AiOrigin {
    /// Why a server refuses the detail (the field and the words), or None.
    pub fn invalid(&self) -> Option<(&'static str, String)> {
        let through_ids: Vec<&String> = match &self.through {
            AiThrough::DraftingSession { session_id } => vec![session_id],
            AiThrough::OptimizeRun { run_id } => vec![run_id],
            AiThrough::ApplyProposal { session_id, approval_request_id } => session_id.iter().chain(approval_request_id).collect(),
            AiThrough::Other => Vec::new(),
        };
        let texts = [("acceptedBy", Some(&self.accepted_by)), ("model", Some(&self.model)), ("proposalId", Some(&self.proposal_id))];
        for (field, text) in texts.into_iter().chain([("providerHost", self.provider_host.as_ref()), ("promptVersion", self.prompt_version.as_ref())]) {
            let Some(text) = text else { continue };
            let required = matches!(field, "acceptedBy" | "model" | "proposalId");
            if (required && text.trim().is_empty()) || text.chars().count() > MAX_AI_TEXT || control_character(text).is_some() {
                return Some((field, format!("{field} is 1–{MAX_AI_TEXT} characters without control characters.")));
            }
        }
        if self.prompt_layers.len() > MAX_AI_LAYERS || self.prompt_layers.iter().chain(through_ids).any(|t| t.chars().count() > MAX_AI_TEXT || control_character(t).is_some()) {
            return Some(("promptLayers", format!("At most {MAX_AI_LAYERS} prompt layers and ids of at most {MAX_AI_TEXT} characters without control characters.")));
        }
        None
    }
}

/// One row of `GET /v1/ai-activity`: an accepted AI version as the server keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AiActivityEntry {
    pub project_id: String,
    /// The project's head title on the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_title: Option<String>,
    /// The version's number on the server.
    pub number: u32,
    pub client_id: String,
    pub cursor: u64,
    /// The member who pushed it, as the server knows them.
    pub member_id: String,
    pub pushed_by: String,
    pub ai: AiOrigin,
}

/// `GET /v1/ai-activity?project=&person=&model=&since=&until=&limit=`: newest first
/// (by the accept's time). `person` is a member's name; `since`/`until` Unix
/// milliseconds, `[since, until)`; `limit` 1–1000 (200 unless asked).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AiActivityResponse {
    pub entries: Vec<AiActivityEntry>,
    /// More rows matched than the limit let through.
    pub truncated: bool,
}

/// The filters of `GET /v1/ai-activity`, as both storages apply them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AiActivityQuery {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub person: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
}

/// Default and largest page of `GET /v1/ai-activity`.
pub const AI_ACTIVITY_DEFAULT_LIMIT: usize = 200;
pub const AI_ACTIVITY_MAX_LIMIT: usize = 1_000;

impl AiActivityQuery {
    /// Whether `entry` passes the filters (the member filter of an editor apart).
    pub fn matches(&self, entry: &AiActivityEntry) -> bool {
        self.project.as_ref().is_none_or(|p| &entry.project_id == p)
            && self.person.as_ref().is_none_or(|p| &entry.pushed_by == p)
            && self.model.as_ref().is_none_or(|m| &entry.ai.model == m)
            && self.since.is_none_or(|s| entry.ai.accepted_at >= s)
            && self.until.is_none_or(|u| entry.ai.accepted_at < u)
    }

    /// The page size asked for, within bounds.
    pub fn page(&self) -> usize {
        self.limit.unwrap_or(AI_ACTIVITY_DEFAULT_LIMIT).clamp(1, AI_ACTIVITY_MAX_LIMIT)
    }
}

/// Which model providers the projects of a workspace may use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum ProviderRule {
    /// Any provider.
    Any,
    /// Only a server on the member's own computer (a loopback host).
    Local,
    /// Only these hosts (lower case, without scheme or port).
    Hosts { hosts: Vec<String> },
}

/// What owners decide for every app of the workspace. A new field must be optional
/// (`#[serde(default)]`): an older server or app reads the record without it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorkspacePolicy {
    pub providers: ProviderRule,
    /// Whether performance history (metric snapshots) may enter AI context.
    pub performance_context: bool,
    /// Each member's AI cost per UTC calendar month, in US dollars (the profiles'
    /// prices); None: no cap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub monthly_cap_usd: Option<f64>,
    /// Each member's AI tokens (input + output) per UTC calendar month; None: no cap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub monthly_cap_tokens: Option<u64>,
    /// Whether members' AI activity travels with their versions for owners to see.
    pub share_activity: bool,
}

impl Default for WorkspacePolicy {
    /// What a workspace whose owners set nothing allows: everything, nothing shared.
    fn default() -> Self {
        WorkspacePolicy { providers: ProviderRule::Any, performance_context: true, monthly_cap_usd: None, monthly_cap_tokens: None, share_activity: false }
    }
}

/// The most hosts a policy lists.
pub const MAX_POLICY_HOSTS: usize = 50;

impl WorkspacePolicy {
    /// Why the policy cannot be stored (the field and the words), or None.
    pub fn invalid(&self) -> Option<(&'static str, String)> {
        if let ProviderRule::Hosts { hosts } = &self.providers {
            if hosts.is_empty() || hosts.len() > MAX_POLICY_HOSTS {
                return Some(("providers", format!("A list of allowed hosts names 1–{MAX_POLICY_HOSTS} hosts.")));
            }
            if let Some(bad) = hosts.iter().find(|h| !host_well_formed(h)) {
                return Some(("providers", format!("\"{bad}\" is not a host name (lower-case letters, digits, dots, dashes; no scheme or port).")));
            }
        }
        if self.monthly_cap_usd.is_some_and(|cap| !(0.0..=1_000_000.0).contains(&cap)) {
            return Some(("monthlyCapUsd", "A monthly cap is 0–1,000,000 US dollars.".to_owned()));
        }
        None
    }
}

/// A host as a policy lists it: 1–253 characters of lower-case ASCII letters, digits,
/// dots, dashes (or an IPv6 address's hex digits and colons in brackets).
pub fn host_well_formed(host: &str) -> bool {
    let inner = host.strip_prefix('[').and_then(|h| h.strip_suffix(']'));
    match inner {
        Some(v6) => (1..=45).contains(&v6.len()) && v6.bytes().all(|b| (b.is_ascii_hexdigit() && !b.is_ascii_uppercase()) || b == b':' || b == b'.'),
        None => (1..=253).contains(&host.len()) && host.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.' || b == b'-'),
    }
}

/// `GET /v1/policy`: the workspace's policy and who set it (the default, with no
/// setter, until an owner sets one). `PUT /v1/policy` takes a [`WorkspacePolicy`] and
/// answers this.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyRecord {
    pub policy: WorkspacePolicy,
    /// The owner who set it last (None: never set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set_by: Option<Member>,
    /// Unix milliseconds of the last change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set_at: Option<u64>,
}

/// How the client made a version, as [`PushVersion::origin`] says it: only the kind,
/// never ids, model or profile names (nothing secret or private travels in it).
pub mod origin {
    pub const MANUAL: &str = "manual";
    pub const RESTORE: &str = "restore";
    pub const AI_PROPOSAL: &str = "aiProposal";
    pub const CHECKPOINT: &str = "checkpoint";
    pub const SYNC_RESOLUTION: &str = "syncResolution";

    /// True for an origin of the wire's form: 1–32 ASCII letters (a later client may
    /// send a kind this build does not know; it is kept as it is).
    pub fn well_formed(origin: &str) -> bool {
        (1..=32).contains(&origin.len()) && origin.bytes().all(|b| b.is_ascii_alphabetic())
    }
}

/// The error code of a push refused for text the protocol does not carry: a C0 control
/// character other than tab, line feed and carriage return (U+0000 among them, which
/// PostgreSQL cannot store in text). Both storages refuse it with `400`, so a client
/// marks the version as needing attention instead of retrying it.
pub const CODE_CONTROL_CHARACTER: &str = "CONTROL_CHARACTER";
/// The error code of a push that reuses a version id (`clientId`) the workspace holds
/// already: `422`, never a silent skip (a client recognises its own versions by id).
pub const CODE_VERSION_ID_TAKEN: &str = "VERSION_ID_TAKEN";

/// The first character of `text` that the protocol refuses (a C0 control other than
/// tab, LF and CR), with its index in characters; None when there is none. The app's
/// API and the server apply the same rule.
pub fn control_character(text: &str) -> Option<(usize, char)> {
    text.chars().enumerate().find(|(_, c)| (*c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r'))
}

/// A member's role in a workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Viewer,
    Editor,
    Owner,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Viewer => "viewer",
            Role::Editor => "editor",
            Role::Owner => "owner",
        }
    }
}

/// One version as a client pushes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PushVersion {
    /// The client's id of the version (kept, so a client recognises its own versions).
    pub client_id: String,
    pub title: String,
    pub source: String,
    pub author: String,
    #[serde(default)]
    pub message: Option<String>,
    /// `sha256:` + hex of the title, a NUL and the source (as the app computes it).
    pub content_hash: String,
    /// RFC 3339.
    pub created_at: String,
    /// How the version was made (see [`origin`]), sent only to a server that lists
    /// [`FEATURE_VERSION_ORIGIN`]; absent from older clients.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// The AI origin detail of an accepted AI change, sent only to a server that lists
    /// [`FEATURE_AI_ACTIVITY`] while the workspace shares AI activity; absent otherwise
    /// (and from older clients).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ai: Option<AiOrigin>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PushRequest {
    /// The server's head of this project that the client last saw (0: none).
    pub base: u32,
    pub versions: Vec<PushVersion>,
}

/// A version as the server holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerVersion {
    pub project_id: String,
    /// 1, 2, 3, ... per project on the server, without gaps.
    pub number: u32,
    pub client_id: String,
    pub title: String,
    pub source: String,
    pub author: String,
    pub message: Option<String>,
    pub content_hash: String,
    pub created_at: String,
    /// The member who pushed it.
    pub pushed_by: String,
    /// The workspace's change cursor of this version.
    pub cursor: u64,
    /// How the pushing client made it (see [`origin`]); absent when it did not say
    /// (an older client or server).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PushResponse {
    pub project_id: String,
    /// The project's head after the push.
    pub head: u32,
    /// The numbers the server gave the pushed versions, in order.
    pub versions: Vec<PushedVersion>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PushedVersion {
    pub client_id: String,
    pub number: u32,
    pub cursor: u64,
}

/// The body of a `409` for a stale base: what the client has not seen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StaleBase {
    pub project_id: String,
    pub base: u32,
    pub head: u32,
    /// The server's versions after `base`, oldest first: at most one page of them
    /// ([`MAX_PAGE_BYTES`]; older servers sent all).
    pub newer: Vec<ServerVersion>,
    /// True when versions up to `head` were left out of `newer`: the client pulls them
    /// (`/v1/changes`) before it decides. Absent from older servers (they sent all).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub more: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChangesResponse {
    /// Versions with a cursor above the one asked for, oldest first.
    pub versions: Vec<ServerVersion>,
    /// Ask again from here.
    pub cursor: u64,
    /// True when more changes wait beyond `cursor`.
    pub more: bool,
    /// What this server supports beyond the first protocol ([`FEATURE_VERSION_ORIGIN`]);
    /// empty from an older server.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub features: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProjectHead {
    pub project_id: String,
    pub head: u32,
    /// The title of the head version.
    pub title: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Member {
    pub id: String,
    pub name: String,
    pub role: Role,
}

/// A member as the membership list shows it: with their tokens' ids (never a token or
/// its hash), so an owner can revoke one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemberEntry {
    pub id: String,
    pub name: String,
    pub role: Role,
    /// Oldest first.
    #[serde(default)]
    pub tokens: Vec<TokenEntry>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenEntry {
    pub token_id: String,
    pub revoked: bool,
    /// Unix milliseconds of the invite (none for a token issued before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issued_at: Option<u64>,
}

/// `GET /v1/members`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MembersResponse {
    pub members: Vec<MemberEntry>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceInfo {
    pub id: String,
    pub name: String,
    /// The member the token belongs to.
    pub me: Member,
    /// What this server supports beyond the first protocol ([`FEATURE_VERSION_ORIGIN`]);
    /// empty from an older server.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub features: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InviteRequest {
    pub name: String,
    pub role: Role,
}

/// A new token: shown once; the server keeps only its hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IssuedToken {
    pub token_id: String,
    pub member: Member,
    pub token: String,
}

/// Every error body: a stable code, a message and hints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorBody {
    pub code: String,
    pub message: String,
    #[serde(default)]
    pub hints: Vec<String>,
    /// For a stale base, what the client has not seen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stale: Option<StaleBase>,
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    //! Old and new builds talk to each other: the origin and the features are optional
    //! both ways. The `Old*` types are the shapes before them, as older builds parse.
    use super::*;
    use serde_json::json;

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    #[allow(dead_code)]
    struct OldPushVersion {
        client_id: String,
        title: String,
        source: String,
        author: String,
        #[serde(default)]
        message: Option<String>,
        content_hash: String,
        created_at: String,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase")]
    #[allow(dead_code)]
    struct OldServerVersion {
        project_id: String,
        number: u32,
        client_id: String,
        title: String,
        source: String,
        author: String,
        message: Option<String>,
        content_hash: String,
        created_at: String,
        pushed_by: String,
        cursor: u64,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase")]
    #[allow(dead_code)]
    struct OldChanges {
        versions: Vec<OldServerVersion>,
        cursor: u64,
        more: bool,
    }

    fn old_push_json() -> serde_json::Value {
        json!({"clientId": "ver_1", "title": "题", "source": "文", "author": "amy", "message": null, "contentHash": format!("sha256:{}", "a".repeat(64)), "createdAt": "2026-11-23T00:00:00Z"})
    }

    fn server_json(origin: Option<&str>) -> serde_json::Value {
        let mut v = json!({"projectId": "prj_1", "number": 2, "clientId": "ver_1", "title": "题", "source": "文", "author": "amy", "message": null,
            "contentHash": format!("sha256:{}", "a".repeat(64)), "createdAt": "2026-11-23T00:00:00Z", "pushedBy": "amy", "cursor": 7});
        if let Some(origin) = origin {
            v["origin"] = json!(origin);
        }
        v
    }

    #[test]
    fn an_old_clients_push_reads_without_an_origin_and_a_new_one_without_an_origin_is_the_old_bytes() {
        let new: PushVersion = serde_json::from_value(old_push_json()).unwrap();
        assert_eq!(new.origin, None);
        // Without an origin a new client writes exactly what an old one did: an old
        // server (which refuses unknown fields) takes it.
        assert_eq!(serde_json::to_value(&new).unwrap(), old_push_json());
        let _: OldPushVersion = serde_json::from_value(serde_json::to_value(&new).unwrap()).unwrap();
        // With one, an old server would refuse it: hence FEATURE_VERSION_ORIGIN.
        let with = PushVersion { origin: Some(origin::SYNC_RESOLUTION.into()), ..new };
        let sent = serde_json::to_value(&with).unwrap();
        assert_eq!(sent["origin"], "syncResolution");
        assert!(serde_json::from_value::<OldPushVersion>(sent.clone()).is_err());
        assert_eq!(serde_json::from_value::<PushVersion>(sent).unwrap(), with);
    }

    #[test]
    fn pulled_versions_and_features_read_both_ways() {
        // An old server's version and answers: no origin, no features.
        let old: ServerVersion = serde_json::from_value(server_json(None)).unwrap();
        assert_eq!(old.origin, None);
        let changes: ChangesResponse = serde_json::from_value(json!({"versions": [server_json(None)], "cursor": 7, "more": false})).unwrap();
        assert!(changes.features.is_empty());
        let info: WorkspaceInfo = serde_json::from_value(json!({"id": "w", "name": "团队", "me": {"id": "m", "name": "amy", "role": "editor"}})).unwrap();
        assert!(info.features.is_empty());
        // A new server's: an old client reads them, ignoring what it does not know.
        let new = ChangesResponse {
            versions: vec![serde_json::from_value(server_json(Some("syncResolution"))).unwrap()],
            cursor: 7,
            more: false,
            features: vec![FEATURE_VERSION_ORIGIN.into()],
        };
        assert_eq!(new.versions[0].origin.as_deref(), Some("syncResolution"));
        let old_client: OldChanges = serde_json::from_value(serde_json::to_value(&new).unwrap()).unwrap();
        assert_eq!(old_client.versions[0].number, 2);
        // A version without an origin is written as before.
        assert_eq!(serde_json::to_value(&old).unwrap(), server_json(None));
    }

    fn ai_origin() -> AiOrigin {
        AiOrigin {
            accepted_by: "贝拉".into(),
            accepted_at: 1_795_000_000_000,
            model: "scripted-1".into(),
            provider_host: Some("127.0.0.1".into()),
            prompt_version: Some("drafting@3".into()),
            prompt_layers: vec!["system@3".into(), "brand@1".into()],
            proposal_id: "prp_1".into(),
            n_hunks: 2,
            n_hunks_total: Some(3),
            through: AiThrough::DraftingSession { session_id: "ses_1".into() },
        }
    }

    #[test]
    fn the_ai_detail_travels_only_when_sent_and_an_old_server_refuses_it() {
        // Without the detail a new client's push is the old bytes (an old server takes it).
        let new: PushVersion = serde_json::from_value(old_push_json()).unwrap();
        assert_eq!(new.ai, None);
        assert_eq!(serde_json::to_value(&new).unwrap(), old_push_json());
        // With it, an old server (unknown fields refused) would refuse the push: hence
        // FEATURE_AI_ACTIVITY; a new one reads it back whole.
        let with = PushVersion { ai: Some(ai_origin()), ..new };
        let sent = serde_json::to_value(&with).unwrap();
        assert_eq!(sent["ai"]["through"], json!({"type": "draftingSession", "sessionId": "ses_1"}));
        assert!(serde_json::from_value::<OldPushVersion>(sent.clone()).is_err());
        assert_eq!(serde_json::from_value::<PushVersion>(sent.clone()).unwrap(), with);
        // Nothing but the listed fields: no prompt, transcript or key has a place in it.
        let fields: Vec<&String> = sent["ai"].as_object().unwrap().keys().collect();
        assert_eq!(
            fields,
            ["acceptedAt", "acceptedBy", "model", "nHunks", "nHunksTotal", "promptLayers", "promptVersion", "proposalId", "providerHost", "through"].iter().collect::<Vec<_>>()
        );
        // A later client's extra field is ignored rather than refused.
        let mut later = sent["ai"].clone();
        later["laterField"] = json!(1);
        assert_eq!(serde_json::from_value::<AiOrigin>(later).unwrap(), ai_origin());
    }

    #[test]
    fn an_ai_detail_is_bounded_and_the_query_filters_it() {
        assert_eq!(ai_origin().invalid(), None);
        for (bad, field) in [
            (AiOrigin { model: " ".into(), ..ai_origin() }, "model"),
            (AiOrigin { accepted_by: "a\u{0}b".into(), ..ai_origin() }, "acceptedBy"),
            (AiOrigin { provider_host: Some("h".repeat(MAX_AI_TEXT + 1)), ..ai_origin() }, "providerHost"),
            (AiOrigin { prompt_layers: vec!["l".into(); MAX_AI_LAYERS + 1], ..ai_origin() }, "promptLayers"),
            (AiOrigin { through: AiThrough::OptimizeRun { run_id: "r\u{1b}".into() }, ..ai_origin() }, "promptLayers"),
        ] {
            assert_eq!(bad.invalid().map(|(f, _)| f), Some(field), "{bad:?}");
        }
        let entry = AiActivityEntry {
            project_id: "prj_1".into(),
            project_title: None,
            number: 1,
            client_id: "ver_1".into(),
            cursor: 1,
            member_id: "mem_b".into(),
            pushed_by: "贝拉".into(),
            ai: ai_origin(),
        };
        let at = entry.ai.accepted_at;
        assert!(AiActivityQuery::default().matches(&entry));
        assert!(AiActivityQuery {
            project: Some("prj_1".into()),
            person: Some("贝拉".into()),
            model: Some("scripted-1".into()),
            since: Some(at),
            until: Some(at + 1),
            limit: None
        }
        .matches(&entry));
        for miss in [
            AiActivityQuery { project: Some("prj_2".into()), ..Default::default() },
            AiActivityQuery { person: Some("amy".into()), ..Default::default() },
            AiActivityQuery { model: Some("other".into()), ..Default::default() },
            AiActivityQuery { since: Some(at + 1), ..Default::default() },
            AiActivityQuery { until: Some(at), ..Default::default() },
        ] {
            assert!(!miss.matches(&entry), "{miss:?}");
        }
        assert_eq!(
            (AiActivityQuery { limit: Some(0), ..Default::default() }.page(), AiActivityQuery { limit: Some(5000), ..Default::default() }.page()),
            (1, AI_ACTIVITY_MAX_LIMIT)
        );
    }

    #[test]
    fn control_characters_but_tab_and_line_breaks_are_refused() {
        assert_eq!(control_character("标题\t正文\r\n"), None);
        assert_eq!(control_character("ab\u{0}c"), Some((2, '\u{0}')));
        assert_eq!(control_character("文\u{1b}[0m"), Some((1, '\u{1b}')));
        assert_eq!(control_character("\u{7f}\u{85}"), None, "only C0 controls");
    }

    #[test]
    fn a_policy_reads_in_its_three_provider_forms_and_refuses_bad_hosts() {
        for (wire, rule) in [
            (json!({"kind": "any"}), ProviderRule::Any),
            (json!({"kind": "local"}), ProviderRule::Local),
            (json!({"kind": "hosts", "hosts": ["api.example.com"]}), ProviderRule::Hosts { hosts: vec!["api.example.com".into()] }),
        ] {
            let policy: WorkspacePolicy = serde_json::from_value(json!({"providers": wire, "performanceContext": false, "shareActivity": true})).unwrap();
            assert_eq!(policy.providers, rule);
            assert_eq!(policy.invalid(), None);
        }
        let hosts = |h: &[&str]| WorkspacePolicy { providers: ProviderRule::Hosts { hosts: h.iter().map(|s| s.to_string()).collect() }, ..WorkspacePolicy::default() };
        for bad in [&[][..], &["https://x.com"], &["X.com"], &["x.com:443"], &["a b"]] {
            assert!(hosts(bad).invalid().is_some(), "{bad:?}");
        }
        assert_eq!(hosts(&["127.0.0.1", "[::1]", "llm.corp"]).invalid(), None);
        let capped = WorkspacePolicy { monthly_cap_usd: Some(-1.0), ..WorkspacePolicy::default() };
        assert_eq!(capped.invalid().map(|(f, _)| f), Some("monthlyCapUsd"));
        // The default record is written without setter or time.
        let record = PolicyRecord { policy: WorkspacePolicy::default(), set_by: None, set_at: None };
        assert_eq!(serde_json::to_value(&record).unwrap(), json!({"policy": {"providers": {"kind": "any"}, "performanceContext": true, "shareActivity": false}}));
    }

    #[test]
    fn a_409_that_left_versions_out_says_so_and_old_and_new_builds_read_each_other() {
        #[derive(Debug, Deserialize)]
        #[serde(rename_all = "camelCase")]
        #[allow(dead_code)]
        struct OldStaleBase {
            project_id: String,
            base: u32,
            head: u32,
            newer: Vec<OldServerVersion>,
        }
        let partial = StaleBase { project_id: "prj_1".into(), base: 1, head: 9, newer: vec![serde_json::from_value(server_json(None)).unwrap()], more: true };
        let sent = serde_json::to_value(&partial).unwrap();
        assert_eq!(sent["more"], true);
        // An older client reads it (and takes the page it got; its next pull brings the rest).
        let old: OldStaleBase = serde_json::from_value(sent).unwrap();
        assert_eq!((old.head, old.newer.len()), (9, 1));
        // An older server's 409 (all of them, no `more`) reads as complete.
        let from_old: StaleBase = serde_json::from_value(json!({"projectId": "prj_1", "base": 1, "head": 2, "newer": [server_json(None)]})).unwrap();
        assert!(!from_old.more);
        // A complete one is written as before.
        assert!(serde_json::to_value(StaleBase { more: false, ..partial }).unwrap().get("more").is_none());
    }

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

    #[test]
    fn an_origin_is_a_short_word() {
        for ok in [origin::MANUAL, origin::RESTORE, origin::AI_PROPOSAL, origin::CHECKPOINT, origin::SYNC_RESOLUTION, "laterKind"] {
            assert!(origin::well_formed(ok), "{ok}");
        }
        for bad in ["", "sk-secret-123", "has space", &"a".repeat(33), "名"] {
            assert!(!origin::well_formed(bad), "{bad}");
        }
    }
}
