//! `sync.*`: connect this data dir to a workspace server, see and steer delivery, and
//! resolve conflicts. The decisions are `crate::sync`'s; this parses, calls and maps.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::dto;
use super::{ApiError, Empty, Engine};
use crate::outbox::{DeliveryJob, JobState};
use crate::sync::{self, Choice, SyncConflict};

#[derive(Debug, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SyncConnectParams {
    /// `https://host[:port]` of the workspace server.
    pub server_url: String,
    /// The invite token (kept in the OS keychain; only its fingerprint is stored).
    /// Absent: the process's `INKSTONE_WORKSPACE_TOKEN`, which is never stored.
    #[serde(default)]
    #[ts(optional)]
    pub token: Option<super::dto::ApiKey>,
    /// Confirms sending the token over plain http:// to another machine.
    #[serde(default)]
    #[ts(optional)]
    pub allow_plain_http: Option<bool>,
    /// Also send the versions of the projects made before connecting (the status's
    /// `localOnlyVersions`); without it only versions saved from now on are sent.
    #[serde(default)]
    #[ts(optional)]
    pub upload_existing: Option<bool>,
    /// The person's name as colleagues see it on their versions. Absent: a name they
    /// chose stays; one never chosen becomes their member name on the server.
    #[serde(default)]
    #[ts(optional)]
    pub display_name: Option<String>,
}

/// Where sync stands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SyncStatus {
    pub state: dto::SyncState,
    pub connected: bool,
    pub paused: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub server_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub workspace_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub member_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub role: Option<String>,
    /// `…` and the token's last characters: never the token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub token_fingerprint: Option<String>,
    /// Jobs still to reach the server (pending, sent, waiting to retry).
    pub pending: u32,
    /// Performance records (accounts, publications, metric snapshots, accounts' days)
    /// still to reach the server.
    pub perf_pending: u32,
    /// Connected to a server that keeps no performance data (older than this app):
    /// publications and metrics stay in this data folder.
    pub perf_unavailable: bool,
    /// Accounts' days (followers per day) that stay in this data folder: the server
    /// keeps performance data but not them (it is older than this app).
    pub perf_account_days_local: u32,
    /// Snapshots the server holds with other content under the same id: each copy
    /// keeps its own, and they are not sent again.
    pub perf_conflicts: u32,
    /// Projects never sent to a server (no job, no server history), and their
    /// versions: connecting with `uploadExisting` sends them, else they stay here.
    pub local_only_projects: u32,
    pub local_only_versions: u32,
    pub failed: u32,
    /// Open conflicts.
    pub conflicts: u32,
    /// The last cycle could not reach the server.
    pub offline: bool,
    /// The last cycle's failure, in English; when the last cycle had none but a job
    /// failed, the newest failed job's reason (so a failure stays explained until it
    /// is retried).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub last_error: Option<String>,
    /// Its code, for the UI to say it in the person's language: `UNREACHABLE`, the
    /// server's error code (`UNAUTHORIZED`, `FORBIDDEN`, `RATE_LIMITED`, `TOO_LARGE`,
    /// `STORAGE`, ...), `HTTP` for an answer that is not the protocol's (another web
    /// server), or `BAD_ANSWER` for JSON of another shape.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub last_error_code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub last_contact_at: Option<crate::model::Timestamp>,
    /// The sync change marker: moves (only ever up) whenever sync changed this data
    /// folder's projects — a colleague's version pulled in, a conflict opened, moved
    /// on or resolved. Cheap to poll: the UI reads projects again only when it moves.
    pub changes: u64,
    /// The local-change marker: moves whenever a project or version record of this data
    /// folder was committed in this process since the first `sync.watch` (another
    /// window's save, a version the API made). The windows read their projects again
    /// when it moves; its value means nothing across processes.
    pub local_changes: u64,
    /// The session-activity marker: moves whenever a turn or a compaction starts in a
    /// session of this data folder in this process (in any window, by the API). A window
    /// showing an idle session reads it again when it moves, and follows a turn that now
    /// runs; its value means nothing across processes.
    pub session_activity: u64,
    /// The project the last local change wrote, at the revision it wrote (absent before
    /// one). An editor that holds that project at that revision (its own save) reads
    /// nothing when `localChanges` moves; otherwise it reads the project again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub last_local_change: Option<LocalChange>,
    /// Unfinished jobs, then the 20 most recently finished, newest first.
    pub jobs: Vec<dto::DeliveryJob>,
    /// How far this status is: the engine's count of status changes (see
    /// `sync.watch`) when its read began. Answers and pushed statuses can reach a
    /// window out of order; one with a lower count than the status it shows is older,
    /// and is not shown over it. Its value means nothing across processes.
    pub as_of: u64,
    /// The jobs that cannot go yet, by id, each with the id of the earlier job of its
    /// project that it waits behind (failed, or held in a conflict): a project's
    /// versions go in order, so `sync.retry` or resolving the conflict lets them go.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[ts(as = "Option<BTreeMap<String, String>>", optional)]
    pub held_by: BTreeMap<String, String>,
}

/// A project record a local change wrote (see `SyncStatus::last_local_change`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct LocalChange {
    pub project_id: String,
    /// Its working-copy revision after the change.
    pub revision: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SyncRetryParams {
    /// The failed job to send again (with the failed jobs of its project before it);
    /// none: every failed job.
    #[serde(default)]
    #[ts(optional)]
    pub job_id: Option<String>,
}

/// What a push or pull did, and where sync stands after it.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SyncRunResult {
    pub pushed: u32,
    pub pulled: u32,
    pub new_conflicts: u32,
    /// This run's failure (the server unreachable, a refusal), in English; absent when
    /// it went through. The CLI exits non-zero on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub error: Option<String>,
    /// Its code (the codes of `SyncStatus::last_error_code`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub error_code: Option<String>,
    pub status: SyncStatus,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SyncConflictsParams {
    #[serde(default)]
    #[ts(optional)]
    pub project_id: Option<String>,
    /// Resolved conflicts too (default: open ones only).
    #[serde(default)]
    #[ts(optional)]
    pub include_resolved: Option<bool>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SyncConflictListResult {
    pub conflicts: Vec<SyncConflictView>,
}

/// A conflict with its merge as the merge view draws it: the source's regions and the
/// title's merge, from the same fold the core resolves with (`sync::merge::regions`).
/// Computed when read, never stored.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SyncConflictView {
    #[serde(flatten)]
    #[ts(flatten)]
    pub conflict: dto::SyncConflict,
    /// The source's three-way merge in base order.
    pub regions: Vec<dto::MergeRegion>,
    /// The title when only one side changed it; absent when both did (a place to decide).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub merged_title: Option<String>,
}

impl From<SyncConflict> for SyncConflictView {
    fn from(conflict: SyncConflict) -> Self {
        let regions = sync::merge::regions(&conflict.base.source, &conflict.mine.source, &conflict.theirs.source);
        let merged_title = sync::merge::merge_title(&conflict.base.title, &conflict.mine.title, &conflict.theirs.title);
        SyncConflictView { conflict: (&conflict).into(), regions: regions.iter().map(Into::into).collect(), merged_title }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum SyncResolveChoice {
    Mine,
    Theirs,
    Merged,
    Edited,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SyncResolveParams {
    pub conflict_id: String,
    pub choice: SyncResolveChoice,
    /// For `edited`: the text the person wrote in the merge view.
    #[serde(default)]
    #[ts(optional)]
    pub title: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub source: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SyncResolveResult {
    pub conflict: dto::SyncConflict,
    /// The resolution: the project's new head, delivered on the new base.
    pub version: super::dto::Version,
    /// Unsaved working-copy changes kept first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub autosnapshot: Option<super::dto::Version>,
}

/// The status as the UI shows it.
pub fn status_of(engine: &Engine) -> Result<SyncStatus, ApiError> {
    // Taken before the read: a change during the read moves it past this.
    let as_of = engine.sync_runtime().change_count();
    let connection = sync::connection(engine)?;
    let paused = sync::is_paused(engine)?;
    let health = sync::health(engine, engine.sync_runtime())?;
    let cycle_failed = health.last_error.is_some();
    let all = sync::jobs(engine)?;
    let pending = all.iter().filter(|j| sync::unsynced(&j.state)).count() as u32;
    let failed = all.iter().filter(|j| j.state == JobState::Failed).count() as u32;
    let open = sync::conflicts(engine)?.into_iter().filter(|c| c.state == sync::ConflictState::Open).count();
    let mut jobs: Vec<DeliveryJob> = all.iter().rev().filter(|j| !matches!(j.state, JobState::Finalized | JobState::Superseded { .. })).cloned().collect();
    jobs.extend(all.iter().rev().filter(|j| matches!(j.state, JobState::Finalized | JobState::Superseded { .. })).take(20).cloned());
    // The last cycle's failure; else the newest failed job's, which stays until retried.
    let (last_error, last_error_code) = match (health.last_error, health.last_error_code) {
        (None, None) => all.iter().rev().find(|j| j.state == JobState::Failed).map_or((None, None), |j| (j.last_error.clone(), j.last_error_code.clone())),
        cycle => cycle,
    };
    let connected = connection.is_some();
    let local_only = sync::local_only(engine)?;
    let perf = crate::performance::sync::standing(engine)?;
    Ok(SyncStatus {
        perf_pending: perf.pending,
        perf_unavailable: perf.unavailable,
        perf_account_days_local: perf.days_local,
        perf_conflicts: perf.conflicts,
        local_only_projects: local_only.len() as u32,
        local_only_versions: local_only.iter().map(|(_, versions)| versions.len() as u32).sum(),
        // A cycle that failed with nothing waiting to explain it (a pull refused) is a
        // failure too, until a cycle succeeds: never "synced".
        state: dto::SyncState::from(&match sync::overall(connected, paused, open, failed, pending, health.offline) {
            sync::SyncState::Synced if cycle_failed => sync::SyncState::Failed,
            state => state,
        }),
        connected,
        paused,
        server_url: connection.as_ref().map(|c| c.server_url.clone()),
        workspace_name: connection.as_ref().map(|c| c.remote_workspace_name.clone()),
        member_name: connection.as_ref().map(|c| c.member_name.clone()),
        role: connection.as_ref().map(|c| c.role.clone()),
        token_fingerprint: connection.as_ref().map(|c| c.token_fingerprint.clone()),
        pending,
        failed,
        conflicts: open as u32,
        offline: health.offline,
        last_error,
        last_error_code,
        last_contact_at: health.last_contact_at,
        changes: sync::change_marker(engine)?,
        local_changes: engine.sync_runtime().local_changes(),
        session_activity: engine.session_activity(),
        last_local_change: engine.sync_runtime().last_local_change().map(|(project_id, revision)| LocalChange { project_id, revision }),
        held_by: sync::held_behind(&all),
        jobs: jobs.iter().map(Into::into).collect(),
        as_of,
    })
}

pub(super) fn connect(engine: &Engine, params: SyncConnectParams) -> Result<SyncStatus, ApiError> {
    sync::connect(
        engine,
        engine.sync_runtime(),
        sync::Connect {
            server_url: &params.server_url,
            token: params.token.as_deref(),
            allow_plain_http: params.allow_plain_http == Some(true),
            upload_existing: params.upload_existing == Some(true),
            display_name: params.display_name.as_deref(),
        },
    )?;
    status_of(engine)
}

pub(super) fn status(engine: &Engine, _: Empty) -> Result<SyncStatus, ApiError> {
    status_of(engine)
}

/// How long a watch stays silent before it sends its last status again. Nothing is
/// read then: the resend is how a watch learns that its listener left (the transport
/// answers that nobody listens), so a closed window or tab does not hold a thread for
/// longer than this. It also keeps an idle stream open through proxies.
pub const WATCH_KEEPALIVE: std::time::Duration = std::time::Duration::from_secs(25);

/// `sync.watch`: sends the status at once, then again each time it changed (a commit
/// of what it reads, a cycle that went offline, came back or reached the server), read
/// once per change and sent only when it differs from the last one sent. It never
/// reads on a timer: it waits on [`sync::Changes`]. Ends when the listener is gone or
/// the engine closes, answering the last status it read.
pub(super) fn watch(engine: &Engine, _: Empty, on_event: &mut dyn FnMut(super::StreamEvent) -> bool) -> Result<SyncStatus, ApiError> {
    let changes = engine.sync_runtime().changes(engine);
    // The count is taken before the read (`status_of` takes the same as its `as_of`):
    // a change during the read wakes the next wait.
    let mut seen = changes.count();
    let mut last = status_of(engine)?;
    if !on_event(super::StreamEvent::SyncStatus(Box::new(last.clone()))) {
        return Ok(last);
    }
    loop {
        match changes.wait(seen, WATCH_KEEPALIVE) {
            sync::Waited::Closed => return Ok(last),
            sync::Waited::Quiet => {
                if !on_event(super::StreamEvent::SyncStatus(Box::new(last.clone()))) {
                    return Ok(last);
                }
            }
            sync::Waited::Moved(count) => {
                seen = count;
                let mut status = status_of(engine)?;
                // The count alone moving is no news (a keystroke's save moves it).
                let as_of = std::mem::replace(&mut status.as_of, last.as_of);
                if status != last {
                    status.as_of = as_of;
                    last = status;
                    if !on_event(super::StreamEvent::SyncStatus(Box::new(last.clone()))) {
                        return Ok(last);
                    }
                }
            }
        }
    }
}

fn run(engine: &Engine, what: sync::cycle::What) -> Result<SyncRunResult, ApiError> {
    if sync::is_paused(engine)? {
        return Err(ApiError::new(crate::error::ErrorCode::Conflict, "Sync is paused for this workspace.").problem("sync.paused", &[]).action("resume_sync", &[]));
    }
    let report = engine.sync_runtime().run(engine, what)?;
    Ok(SyncRunResult {
        pushed: report.pushed,
        pulled: report.pulled,
        new_conflicts: report.new_conflicts,
        error: report.error.clone().or_else(|| report.offline.then(|| "the server could not be reached".to_owned())),
        error_code: report.error_code.clone().or_else(|| report.offline.then(|| "UNREACHABLE".to_owned())),
        status: status_of(engine)?,
    })
}

pub(super) fn push(engine: &Engine, _: Empty) -> Result<SyncRunResult, ApiError> {
    run(engine, sync::cycle::What::Push)
}

pub(super) fn pull(engine: &Engine, _: Empty) -> Result<SyncRunResult, ApiError> {
    run(engine, sync::cycle::What::Pull)
}

pub(super) fn pause(engine: &Engine, _: Empty) -> Result<SyncStatus, ApiError> {
    sync::set_paused(engine, true)?;
    status_of(engine)
}

pub(super) fn resume(engine: &Engine, _: Empty) -> Result<SyncStatus, ApiError> {
    sync::set_paused(engine, false)?;
    engine.sync_runtime().wake();
    status_of(engine)
}

/// Sends failed jobs again (see `sync::retry`) and wakes the delivery thread.
pub(super) fn retry(engine: &Engine, params: SyncRetryParams) -> Result<SyncStatus, ApiError> {
    sync::retry(engine, engine.sync_runtime(), params.job_id.as_deref())?;
    status_of(engine)
}

pub(super) fn conflicts(engine: &Engine, params: SyncConflictsParams) -> Result<SyncConflictListResult, ApiError> {
    let all = params.include_resolved == Some(true);
    let conflicts = sync::conflicts(engine)?
        .into_iter()
        .filter(|c| all || c.state == sync::ConflictState::Open)
        .filter(|c| params.project_id.as_deref().is_none_or(|p| p == c.project_id))
        .map(SyncConflictView::from)
        .collect();
    Ok(SyncConflictListResult { conflicts })
}

pub(super) fn resolve(engine: &Engine, params: SyncResolveParams) -> Result<SyncResolveResult, ApiError> {
    let choice = match params.choice {
        SyncResolveChoice::Mine => Choice::Mine,
        SyncResolveChoice::Theirs => Choice::Theirs,
        SyncResolveChoice::Merged => Choice::Merged,
        SyncResolveChoice::Edited => Choice::Edited {
            title: params.title.ok_or_else(|| ApiError::validation("title", "An edited resolution needs the title."))?,
            source: params.source.ok_or_else(|| ApiError::validation("source", "An edited resolution needs the source."))?,
        },
    };
    let resolved = sync::resolve(engine, &params.conflict_id, choice)?;
    engine.sync_runtime().wake();
    Ok(SyncResolveResult { conflict: (&resolved.conflict).into(), version: (&resolved.version).into(), autosnapshot: resolved.autosnapshot.as_ref().map(Into::into) })
}

/// The connected workspace's members.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SyncMembersResult {
    pub workspace_name: String,
    /// This data folder's role: only an owner invites and revokes.
    pub role: String,
    pub can_manage: bool,
    pub members: Vec<dto::SyncMember>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SyncInviteParams {
    pub name: String,
    pub role: dto::MemberRole,
}

/// A new member and their invite token: shown this once, stored nowhere.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SyncInviteResult {
    pub member: dto::SyncMember,
    /// The invite token. Inkstone keeps no copy: share it over a safe channel.
    pub token: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SyncRevokeMemberParams {
    pub token_id: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SyncDisconnectResult {
    pub workspace_name: String,
    /// Versions owed to the server (waiting, on their way, or failed): their jobs
    /// are kept, paused.
    pub kept_jobs: u32,
    pub status: SyncStatus,
}

fn members_result(engine: &Engine) -> Result<SyncMembersResult, ApiError> {
    let (connection, members) = sync::members::members(engine, engine.sync_runtime())?;
    Ok(SyncMembersResult {
        workspace_name: connection.remote_workspace_name,
        can_manage: connection.role == "owner",
        role: connection.role,
        members: members.iter().map(Into::into).collect(),
    })
}

pub(super) fn members(engine: &Engine, _: Empty) -> Result<SyncMembersResult, ApiError> {
    members_result(engine)
}

pub(super) fn invite(engine: &Engine, params: SyncInviteParams) -> Result<SyncInviteResult, ApiError> {
    let invited = sync::members::invite(engine, engine.sync_runtime(), &params.name, params.role.into())?;
    Ok(SyncInviteResult { member: (&invited.member).into(), token: invited.token })
}

pub(super) fn revoke_member(engine: &Engine, params: SyncRevokeMemberParams) -> Result<SyncMembersResult, ApiError> {
    sync::members::revoke(engine, engine.sync_runtime(), &params.token_id)?;
    members_result(engine)
}

pub(super) fn disconnect(engine: &Engine, _: Empty) -> Result<SyncDisconnectResult, ApiError> {
    let done = sync::members::disconnect(engine, engine.sync_runtime())?;
    Ok(SyncDisconnectResult { workspace_name: done.workspace_name, kept_jobs: done.kept_jobs, status: status_of(engine)? })
}

/// The workspace policy to set (owners only), whole: what is left out takes its
/// default (any provider, performance history allowed, no cap, activity not shared).
#[derive(Debug, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SyncSetPolicyParams {
    #[serde(default)]
    #[ts(optional)]
    pub providers: Option<super::dto::ProviderRule>,
    #[serde(default)]
    #[ts(optional)]
    pub performance_context: Option<bool>,
    #[serde(default)]
    #[ts(optional)]
    pub monthly_cap_usd: Option<f64>,
    #[serde(default)]
    #[ts(optional)]
    pub monthly_cap_tokens: Option<u64>,
    #[serde(default)]
    #[ts(optional)]
    pub share_activity: Option<bool>,
}

pub(super) fn policy(engine: &Engine, _: Empty) -> Result<sync::policy::PolicyStanding, ApiError> {
    sync::policy::show(engine, engine.sync_runtime())
}

pub(super) fn set_policy(engine: &Engine, params: SyncSetPolicyParams) -> Result<sync::policy::PolicyStanding, ApiError> {
    let defaults = crate::policy::Policy::default();
    let providers = match params.providers.map(Into::into).unwrap_or(defaults.providers) {
        crate::policy::ProviderRule::Hosts { hosts } => crate::policy::ProviderRule::Hosts { hosts: hosts.iter().map(|h| h.trim().to_ascii_lowercase()).collect() },
        other => other,
    };
    let policy = crate::policy::Policy {
        providers,
        performance_context: params.performance_context.unwrap_or(defaults.performance_context),
        monthly_cap_usd: params.monthly_cap_usd,
        monthly_cap_tokens: params.monthly_cap_tokens,
        share_activity: params.share_activity.unwrap_or(defaults.share_activity),
    };
    sync::policy::set(engine, engine.sync_runtime(), policy)
}
