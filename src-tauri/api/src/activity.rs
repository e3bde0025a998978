//! The AI activity view: every accept or reject of an AI proposal, one row each — when,
//! which project and version, which hunks, who decided and why, through what (a
//! drafting session, an optimize run, `apply_proposal` after an approval), which model
//! (profile, provider host, model id), the prompt layers, the context snapshot, and the
//! tokens and cost of the calls that made it.
//!
//! Nothing here is recorded: a row is read from the audit record of the decision
//! (`proposals::apply::AuditRecord`), the proposal, the LLM profile, the session log
//! (the turn's start) and the usage records. Two derived indexes make it fast, each
//! written in the same transaction as its record: `proposals::audit_index` (decisions
//! by time under four scopes) and `usage::UsageByOwner` (calls by session or run).
//!
//! A row can also come from elsewhere than this data folder: [`RowSource::Synced`] is
//! for a teammate's version whose AI origin detail arrived through sync; such a row has
//! no tokens, context snapshot or reason, which is why those fields are optional.

mod export;

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

pub use export::{csv_bytes, CSV_HEADER};

use crate::error::ApiError;
use crate::harness::Event;
use crate::llm::profile::{host_of, LlmProfile};
use crate::model::{ProjectSummary, Timestamp};
use crate::proposals::apply::{AuditAction, AuditRecord};
use crate::proposals::audit_index::{time_key, AuditIndexEntry, Scope};
use crate::proposals::{ProposalKind, Target};
use crate::store::{keys, Store, StoreError};
use crate::usage::UsageRecord;

/// Most rows one page returns.
pub const MAX_LIMIT: usize = 1_000;
/// Rows of a page when the caller names no limit.
pub const DEFAULT_LIMIT: usize = 200;

/// Accepted (all or some hunks) or rejected (all or some hunks).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    Accepted,
    Rejected,
}

impl Decision {
    /// Its word in the index's decision scopes.
    pub fn name(self) -> &'static str {
        match self {
            Decision::Accepted => "accepted",
            Decision::Rejected => "rejected",
        }
    }

    fn of(action: AuditAction) -> Option<Decision> {
        match action {
            AuditAction::Accepted | AuditAction::PartiallyAccepted => Some(Decision::Accepted),
            AuditAction::Rejected | AuditAction::HunksRejected => Some(Decision::Rejected),
            AuditAction::Rebased => None,
        }
    }
}

/// Which rows to list. Every filter is exact; absent is any.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Query {
    pub project_id: Option<String>,
    /// The person who accepted or rejected (for `apply_proposal`, who approved).
    pub person: Option<String>,
    /// The model id.
    pub model: Option<String>,
    /// `[from, to)`.
    pub from: Option<Timestamp>,
    pub to: Option<Timestamp>,
    pub decision: Option<Decision>,
    /// Most rows; `None` lists every row (the export).
    pub limit: Option<usize>,
}

/// Through what a change came.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Through {
    #[serde(rename_all = "camelCase")]
    DraftingSession { session_id: String },
    #[serde(rename_all = "camelCase")]
    OptimizeRun { run_id: String },
    /// The assistant applied it with `apply_proposal` after the person approved.
    #[serde(rename_all = "camelCase")]
    ApplyProposal {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        session_id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        approval_request_id: Option<String>,
    },
    /// A proposal made outside a session or run (through the API).
    Other,
}

impl Through {
    pub fn as_str(&self) -> &'static str {
        match self {
            Through::DraftingSession { .. } => "drafting_session",
            Through::OptimizeRun { .. } => "optimize_run",
            Through::ApplyProposal { .. } => "apply_proposal",
            Through::Other => "other",
        }
    }
}

/// The model that made the proposal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ModelUsed {
    pub profile_id: String,
    /// Absent when the profile was deleted and no call recorded its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub profile_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub provider_host: Option<String>,
    pub model: String,
}

/// What the model calls behind a change used.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TokensUsed {
    pub calls: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Some call had no usage from the server; its counts are estimates.
    pub estimated: bool,
    /// Absent when no call had a price.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub cost: Option<f64>,
    /// `turn`: the calls of the session turn that proposed it; `run`: every call of the
    /// optimize run, which proposes all its targets together.
    pub scope: TokensScope,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum TokensScope {
    Turn,
    Run,
}

/// Where a row was read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum RowSource {
    /// This data folder's audit trail.
    Local,
    /// A teammate's version pulled from the workspace server, from its AI origin detail.
    #[serde(rename_all = "camelCase")]
    Synced { pushed_by: String, server_number: u32 },
}

/// One AI-originated change, accepted or rejected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ActivityRow {
    /// The audit record's id (for a synced row, the server version's id).
    pub id: String,
    pub at: Timestamp,
    pub source: RowSource,
    pub project_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_title: Option<String>,
    /// The version an accept made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u32>,
    /// The draft revision an accept of a draft proposal made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draft_revision: Option<u32>,
    pub proposal_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposal_kind: Option<ProposalKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<Target>,
    pub decision: Decision,
    /// Only some hunks were accepted or rejected.
    pub partial: bool,
    /// The hunks accepted or rejected (empty when a whole proposal was rejected at
    /// once; see `n_hunks`). Open the diff with `proposal.get` and these ids.
    pub hunks: Vec<String>,
    /// How many hunks the decision covered.
    pub n_hunks: u32,
    /// How many hunks the proposal had, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n_hunks_total: Option<u32>,
    /// The person who accepted or rejected (for `apply_proposal`, who approved).
    pub actor: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub through: Through,
    pub model: ModelUsed,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_version: Option<String>,
    /// Every prompt layer of the call that made it, in order.
    pub prompt_layers: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_snapshot_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<TokensUsed>,
}

/// A page of rows, newest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ActivityPage {
    pub rows: Vec<ActivityRow>,
    /// More rows match than the limit let through: narrow the filters or the dates.
    pub truncated: bool,
}

/// The index entries that match `query`, newest first: one scope's keys between the
/// dates, the other filters checked on the entries, stopping after the limit.
fn matching_entries(store: &Store, query: &Query) -> Result<(Vec<AuditIndexEntry>, bool), StoreError> {
    let scope = match (query.decision.map(Decision::name), &query.project_id, &query.person, &query.model) {
        (None, Some(project_id), _, _) => Scope::Project(project_id),
        (None, None, Some(person), _) => Scope::Person(person),
        (None, None, None, Some(model)) => Scope::Model(model),
        (None, None, None, None) => Scope::All,
        (Some(decision), Some(project_id), _, _) => Scope::DecisionProject(decision, project_id),
        (Some(decision), None, Some(person), _) => Scope::DecisionPerson(decision, person),
        (Some(decision), None, None, Some(model)) => Scope::DecisionModel(decision, model),
        (Some(decision), None, None, None) => Scope::Decision(decision),
    };
    let prefix = scope.prefix();
    let mut from = prefix.clone();
    if let Some(at) = query.from {
        from.extend_from_slice(&time_key(at));
    }
    let mut to = prefix.clone();
    match query.to {
        Some(at) => to.extend_from_slice(&time_key(at)),
        // The prefix ends in 0x00; 0x01 is past every key of the scope.
        None => {
            if let Some(last) = to.last_mut() {
                *last = 1;
            }
        }
    }
    let limit = query.limit.unwrap_or(usize::MAX);
    let (mut entries, mut truncated) = (Vec::new(), false);
    store.visit_range_rev::<AuditIndexEntry>(&from, &to, |entry| {
        let keep = query.project_id.as_ref().is_none_or(|p| &entry.project_id == p)
            && query.person.as_ref().is_none_or(|p| &entry.actor == p)
            && query.model.as_ref().is_none_or(|m| &entry.model == m)
            && query.decision.is_none_or(|d| Decision::of(entry.action) == Some(d));
        if !keep {
            return true;
        }
        if entries.len() == limit {
            truncated = true;
            return false;
        }
        entries.push(entry);
        true
    })?;
    Ok((entries, truncated))
}

/// What rows are read from besides the audit record, each read once per page.
#[derive(Default)]
struct Lookups {
    titles: HashMap<String, Option<String>>,
    profiles: HashMap<String, Option<LlmProfile>>,
    usage: HashMap<String, Vec<UsageRecord>>,
}

impl Lookups {
    fn title(&mut self, store: &Store, project_id: &str) -> Result<Option<String>, StoreError> {
        if let Some(title) = self.titles.get(project_id) {
            return Ok(title.clone());
        }
        let title = store.get::<ProjectSummary>(project_id.as_bytes())?.map(|p| p.title);
        self.titles.insert(project_id.to_owned(), title.clone());
        Ok(title)
    }

    fn profile(&mut self, store: &Store, profile_id: &str) -> Result<Option<LlmProfile>, StoreError> {
        if let Some(profile) = self.profiles.get(profile_id) {
            return Ok(profile.clone());
        }
        let profile = store.get::<LlmProfile>(profile_id.as_bytes())?;
        self.profiles.insert(profile_id.to_owned(), profile.clone());
        Ok(profile)
    }

    fn usage(&mut self, store: &Store, owner_id: &str) -> Result<&[UsageRecord], StoreError> {
        if !self.usage.contains_key(owner_id) {
            let records = crate::usage::by_owner(store, owner_id)?;
            self.usage.insert(owner_id.to_owned(), records);
        }
        Ok(self.usage.get(owner_id).map(Vec::as_slice).unwrap_or(&[]))
    }
}

/// Sums calls into what a row shows; `None` when there were none.
fn tokens_of<'a>(calls: impl Iterator<Item = &'a UsageRecord>, scope: TokensScope) -> Option<TokensUsed> {
    let mut used = TokensUsed { calls: 0, input_tokens: 0, output_tokens: 0, estimated: false, cost: None, scope };
    for call in calls {
        used.calls += 1;
        used.input_tokens += call.input_tokens;
        used.output_tokens += call.output_tokens;
        used.estimated |= call.tokens_estimated;
        if let Some(cost) = call.cost {
            used.cost = Some(used.cost.unwrap_or(0.0) + cost);
        }
    }
    (used.calls > 0).then_some(used)
}

/// Through what the audited decision came: the assistant's `apply_proposal`, else the
/// proposal's run or session.
pub fn through(record: &AuditRecord) -> Through {
    if record.via == "assistant" {
        return Through::ApplyProposal { session_id: record.origin.session_id.clone(), approval_request_id: record.approval_request_id.clone() };
    }
    match (&record.origin.run_id, &record.origin.session_id) {
        (Some(run_id), _) => Through::OptimizeRun { run_id: run_id.clone() },
        (None, Some(session_id)) => Through::DraftingSession { session_id: session_id.clone() },
        (None, None) => Through::Other,
    }
}

fn row(store: &Store, lookups: &mut Lookups, record: AuditRecord) -> Result<Option<ActivityRow>, ApiError> {
    let Some(decision) = Decision::of(record.action) else { return Ok(None) };
    let proposal = match crate::proposals::load(store, &record.proposal_id) {
        Ok(proposal) => Some(proposal),
        Err(error) if error.code == crate::error::ErrorCode::NotFound => None,
        Err(error) => return Err(error),
    };
    let origin = &record.origin;
    // The calls behind it: a run's every call; a session turn's calls from the turn's
    // start to the proposal (later turns are not its cost).
    let tokens = match (&origin.run_id, &origin.session_id, origin.turn, &proposal) {
        (Some(run_id), _, _, _) => tokens_of(lookups.usage(store, run_id)?.iter(), TokensScope::Run),
        (None, Some(session_id), Some(turn), Some(proposal)) => match store.get::<Event>(&keys::session_event(session_id, turn))? {
            Some(start) => {
                let (from, to) = (start.created_at, proposal.created_at);
                tokens_of(lookups.usage(store, session_id)?.iter().filter(|c| c.at >= from && c.at <= to), TokensScope::Turn)
            }
            None => None,
        },
        _ => None,
    };
    let profile = lookups.profile(store, &origin.profile_id)?;
    let profile_name = match &profile {
        Some(profile) => Some(profile.name.clone()),
        None => {
            origin.owner_id().and_then(|owner| lookups.usage.get(owner)).and_then(|calls| calls.iter().find(|c| c.profile_id == origin.profile_id)).map(|c| c.profile_name.clone())
        }
    };
    let model = ModelUsed { profile_id: origin.profile_id.clone(), profile_name, provider_host: profile.as_ref().map(|p| host_of(&p.base_url)), model: origin.model.clone() };
    let partial = matches!(record.action, AuditAction::PartiallyAccepted | AuditAction::HunksRejected);
    let n_hunks_total = proposal.as_ref().map(|p| u32::try_from(p.hunks.len()).unwrap_or(u32::MAX));
    let n_hunks = match (record.action, n_hunks_total) {
        // A whole rejection names no hunks: it covers every hunk.
        (AuditAction::Rejected, Some(total)) if record.hunks.is_empty() => total,
        _ => u32::try_from(record.hunks.len()).unwrap_or(u32::MAX),
    };
    Ok(Some(ActivityRow {
        project_title: lookups.title(store, &record.project_id)?,
        through: through(&record),
        id: record.id,
        at: record.at,
        source: RowSource::Local,
        project_id: record.project_id,
        version: record.version,
        draft_revision: record.draft_revision,
        proposal_kind: Some(record.kind),
        target: proposal.as_ref().map(|p| p.target.clone()),
        proposal_id: record.proposal_id,
        decision,
        partial,
        hunks: record.hunks,
        n_hunks,
        n_hunks_total,
        actor: record.actor,
        reason: record.reason,
        model,
        prompt_version: Some(record.origin.prompt_version.clone()).filter(|v| !v.is_empty()),
        prompt_layers: record.origin.prompt_layers.clone(),
        context_snapshot_id: record.origin.context_snapshot_id.clone(),
        tokens,
    }))
}

/// The rows that match `query`, newest first.
///
/// Errors: STORE_CORRUPT when a record does not decode.
pub fn list(store: &Store, query: &Query) -> Result<ActivityPage, ApiError> {
    let (entries, truncated) = matching_entries(store, query)?;
    let mut lookups = Lookups::default();
    let mut rows = Vec::with_capacity(entries.len());
    for entry in entries {
        let Some(record) = store.get::<AuditRecord>(&keys::child(&entry.project_id, &entry.audit_id))? else { continue };
        if let Some(row) = row(store, &mut lookups, record)? {
            rows.push(row);
        }
    }
    Ok(ActivityPage { rows, truncated })
}

/// Meta key: the activity indexes (v2: with the decision scopes) and the usage totals
/// were built over the records written before them.
const META_INDEXED: &[u8] = b"activity_indexed_v2";

/// Where the rows come from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ActivityScope {
    /// This data folder's audit trail.
    #[default]
    Local,
    /// The workspace server's: accepted AI versions whose origin detail members shared
    /// (an owner sees every member's, an editor their own).
    Workspace,
}

/// A server's entry as a row of the view: accepted, with the detail that travelled and
/// nothing else (no tokens, context snapshot or reason; no local version number).
fn synced_row(entry: inkstone_sync_proto::AiActivityEntry, local_title: Option<String>) -> ActivityRow {
    use inkstone_sync_proto::AiThrough;
    let ai = entry.ai;
    let through = match ai.through {
        AiThrough::DraftingSession { session_id } => Through::DraftingSession { session_id },
        AiThrough::OptimizeRun { run_id } => Through::OptimizeRun { run_id },
        AiThrough::ApplyProposal { session_id, approval_request_id } => Through::ApplyProposal { session_id, approval_request_id },
        AiThrough::Other => Through::Other,
    };
    let at = i64::try_from(ai.accepted_at).ok().and_then(chrono::DateTime::from_timestamp_millis).unwrap_or_default();
    ActivityRow {
        id: entry.client_id,
        at,
        source: RowSource::Synced { pushed_by: entry.pushed_by.clone(), server_number: entry.number },
        project_id: entry.project_id,
        project_title: local_title.or(entry.project_title),
        version: None,
        draft_revision: None,
        proposal_id: ai.proposal_id,
        proposal_kind: None,
        target: None,
        decision: Decision::Accepted,
        partial: ai.n_hunks_total.is_some_and(|total| ai.n_hunks < total),
        hunks: Vec::new(),
        n_hunks: ai.n_hunks,
        n_hunks_total: ai.n_hunks_total,
        // The member as the server knows them (who pushed the accept).
        actor: entry.pushed_by,
        reason: None,
        through,
        model: ModelUsed { profile_id: String::new(), profile_name: None, provider_host: ai.provider_host, model: ai.model },
        prompt_version: ai.prompt_version,
        prompt_layers: ai.prompt_layers,
        context_snapshot_id: None,
        tokens: None,
    }
}

/// The most pages an export asks the server for.
const MAX_EXPORT_PAGES: usize = 200;

/// The workspace's rows that match `query`, newest first, from the workspace server
/// (see [`ActivityScope::Workspace`]). Only accepts travel, so asking for rejections lists
/// none. Without a limit (the export) it reads page after page.
///
/// Errors: those of `sync::ai_activity::list` (not connected, offline, a viewer).
pub fn workspace(kernel: &crate::kernel::Kernel, runtime: &crate::sync::Runtime, query: &Query) -> Result<ActivityPage, ApiError> {
    let millis = |at: Timestamp| u64::try_from(at.timestamp_millis()).unwrap_or(0);
    let mut wire = inkstone_sync_proto::AiActivityQuery {
        project: query.project_id.clone(),
        person: query.person.clone(),
        model: query.model.clone(),
        since: query.from.map(millis),
        until: query.to.map(millis),
        limit: Some(query.limit.unwrap_or(inkstone_sync_proto::AI_ACTIVITY_MAX_LIMIT).min(inkstone_sync_proto::AI_ACTIVITY_MAX_LIMIT)),
    };
    let mut entries: Vec<inkstone_sync_proto::AiActivityEntry> = Vec::new();
    let mut truncated = false;
    for _ in 0..MAX_EXPORT_PAGES {
        let page = crate::sync::ai_activity::list(kernel, runtime, &wire)?;
        if query.decision == Some(Decision::Rejected) {
            break;
        }
        let oldest = page.entries.last().map(|e| e.ai.accepted_at);
        let before = entries.len();
        for entry in page.entries {
            if !entries.iter().any(|seen| seen.cursor == entry.cursor) {
                entries.push(entry);
            }
        }
        truncated = page.truncated;
        // A page: done. The export: the next page ends after the oldest accept seen
        // (rows of that same millisecond come again and are skipped).
        let (Some(oldest), true, None) = (oldest, page.truncated, query.limit) else { break };
        if entries.len() == before {
            break;
        }
        wire.until = Some(oldest.saturating_add(1));
    }
    let mut titles = HashMap::new();
    let mut rows = Vec::with_capacity(entries.len());
    for entry in entries {
        let title = match titles.get(&entry.project_id) {
            Some(title) => Clone::clone(title),
            None => {
                let title = kernel.store().get::<ProjectSummary>(entry.project_id.as_bytes())?.map(|p| p.title);
                titles.insert(entry.project_id.clone(), title.clone());
                title
            }
        };
        rows.push(synced_row(entry, title));
    }
    Ok(ActivityPage { rows, truncated })
}

/// Writes the index entries of audit and usage records stored before the indexes
/// existed, and the usage records' monthly and daily totals, once per data folder and
/// index version (rewriting a record writes its derived entries; the records themselves
/// are unchanged). Called when the engine opens.
pub fn index_existing(store: &Store, now: Timestamp) -> Result<(), StoreError> {
    store.derive_once(META_INDEXED, now, |batch| {
        for record in store.scan::<AuditRecord>(b"")? {
            batch.put(&record)?;
        }
        let usage = store.scan::<UsageRecord>(b"")?;
        for record in &usage {
            batch.put(record)?;
        }
        crate::usage::stage_totals(store, batch, &usage)
    })
}
