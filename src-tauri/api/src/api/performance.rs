//! Performance data: publishing accounts, publications, and metric snapshots typed by
//! hand. See [`crate::performance`] for the rules (absent never 0, keys keep their
//! basis, removal keeps metrics until confirmed, AI changes derived from versions).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::dto;
use super::dto::Platform;
use super::projects::load as load_project;
use super::{required_text, ApiError, Deleted, Empty, Engine};
use crate::error::{bounded_text, ErrorCode};
use crate::performance::metrics::{self, MetricSnapshot, SnapshotSource, SnapshotWindow};
use crate::performance::publications::{self, PublicationFields};
use crate::performance::{self as domain, Account, Publication};
use crate::store::{Batch, Durability};

/// Longest account name or handle, in characters.
pub const MAX_ACCOUNT_CHARS: usize = 100;

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AccountCreateParams {
    pub platform: Platform,
    pub name: String,
    #[serde(default)]
    #[ts(optional)]
    pub handle: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AccountRef {
    pub account_id: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AccountUpdateParams {
    pub account_id: String,
    #[serde(default)]
    #[ts(optional)]
    pub name: Option<String>,
    /// An empty handle clears it.
    #[serde(default)]
    #[ts(optional)]
    pub handle: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AccountListResult {
    pub accounts: Vec<dto::Account>,
}

fn handle(text: Option<&str>) -> Result<Option<String>, ApiError> {
    match text.map(str::trim) {
        None | Some("") => Ok(None),
        Some(h) => Ok(Some(bounded_text("handle", h, MAX_ACCOUNT_CHARS)?)),
    }
}

fn refuse_duplicate_account(accounts: &[Account], platform: crate::model::Platform, name: &str, except: Option<&str>) -> Result<(), ApiError> {
    if accounts.iter().any(|a| a.platform == platform && a.name == name && Some(a.id.as_str()) != except) {
        return Err(ApiError::validation("name", format!("There is already a {} account named {name:?}.", platform.as_str()))
            .problem("perf.account_exists", &[("name", name), ("platform", platform.as_str())]));
    }
    Ok(())
}

pub(super) fn create_account(engine: &Engine, params: AccountCreateParams) -> Result<Account, ApiError> {
    let name = required_text("name", &params.name, MAX_ACCOUNT_CHARS)?;
    let handle = handle(params.handle.as_deref())?;
    let _guard = engine.write_lock();
    refuse_duplicate_account(&domain::accounts(engine.store())?, params.platform.into(), &name, None)?;
    let now = engine.now();
    let account = Account { id: engine.new_id("acc"), platform: params.platform.into(), name, handle, created_at: now, updated_at: now };
    let mut batch = Batch::new();
    batch.put(&account)?;
    domain::sync::stage_delivery(engine, &mut batch, inkstone_sync_proto::PerfKind::Account, &account.id, None, None)?;
    engine.store().apply(batch, Durability::Durable)?;
    Ok(account)
}

pub(super) fn list_accounts(engine: &Engine, _params: Empty) -> Result<AccountListResult, ApiError> {
    Ok(AccountListResult { accounts: domain::accounts(engine.store())?.iter().map(Into::into).collect() })
}

pub(super) fn update_account(engine: &Engine, params: AccountUpdateParams) -> Result<Account, ApiError> {
    let name = params.name.as_deref().map(|n| required_text("name", n, MAX_ACCOUNT_CHARS)).transpose()?;
    let new_handle = params.handle.as_deref().map(|h| handle(Some(h))).transpose()?;
    let _guard = engine.write_lock();
    let mut account = domain::load_account(engine.store(), &params.account_id)?;
    if let Some(name) = name {
        refuse_duplicate_account(&domain::accounts(engine.store())?, account.platform, &name, Some(&account.id))?;
        account.name = name;
    }
    if let Some(h) = new_handle {
        account.handle = h;
    }
    account.updated_at = engine.now();
    let mut batch = Batch::new();
    batch.put(&account)?;
    domain::sync::stage_delivery(engine, &mut batch, inkstone_sync_proto::PerfKind::Account, &account.id, None, None)?;
    engine.store().apply(batch, Durability::Durable)?;
    Ok(account)
}

/// Deletes an account no publication names, with its days. Errors: CONFLICT while one
/// does.
pub(super) fn delete_account(engine: &Engine, params: AccountRef) -> Result<Deleted, ApiError> {
    let _guard = engine.write_lock();
    let account = domain::load_account(engine.store(), &params.account_id)?;
    let used = domain::all_publications(engine.store())?.iter().filter(|p| p.account_id.as_deref() == Some(account.id.as_str())).count();
    if used > 0 {
        let n = used.to_string();
        return Err(ApiError::new(ErrorCode::Conflict, format!("Account {} is named by {used} publication(s); it cannot be deleted.", account.name))
            .problem("perf.account_in_use", &[("account", &account.name), ("n", &n)])
            .hint("reassign_publications", "Edit those publications to another account (or none) first.")
            .details(serde_json::json!({ "accountId": account.id, "publications": used })));
    }
    let mut batch = Batch::new();
    batch.delete::<Account>(account.id.as_bytes().to_vec());
    // Its days go with it, in the same batch; a day not yet sent need not go (the
    // deletion drops the account's days on the server too).
    domain::account_days::stage_delete_all(&mut batch, engine.store(), &account.id)?;
    let deleted_at = engine.now().max(account.updated_at + chrono::Duration::milliseconds(1));
    domain::sync::stage_delivery(engine, &mut batch, inkstone_sync_proto::PerfKind::Account, &account.id, None, Some(deleted_at))?;
    engine.store().apply(batch, Durability::Durable)?;
    Ok(Deleted { id: account.id, deleted: true })
}

/// What a person says about a publication. Absent fields take the defaults on add
/// (the project's head version, its title, now, the platform's time zone, format and
/// distribution, public) and stay as they are on edit.
#[derive(Debug, Clone, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PublicationDetails {
    #[serde(default)]
    #[ts(optional)]
    pub version_number: Option<u32>,
    /// An empty id clears the account (on edit).
    #[serde(default)]
    #[ts(optional)]
    pub account_id: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub url: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub platform_post_id: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub title: Option<String>,
    /// `2026-03-04 12:30` in `timeZone`, or RFC 3339 with an offset.
    #[serde(default)]
    #[ts(optional)]
    pub published_at: Option<String>,
    /// An IANA name (`Asia/Shanghai`, `UTC`).
    #[serde(default)]
    #[ts(optional)]
    pub time_zone: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub format: Option<dto::PublicationFormat>,
    #[serde(default)]
    #[ts(optional)]
    pub distribution: Option<dto::Distribution>,
    #[serde(default)]
    #[ts(optional)]
    pub visibility: Option<dto::Visibility>,
}

impl From<PublicationDetails> for PublicationFields {
    fn from(d: PublicationDetails) -> Self {
        PublicationFields {
            version_number: d.version_number,
            account_id: d.account_id.map(Some),
            url: d.url,
            platform_post_id: d.platform_post_id,
            title: d.title,
            published_at: d.published_at,
            time_zone: d.time_zone,
            format: d.format.map(Into::into),
            distribution: d.distribution.map(Into::into),
            visibility: d.visibility.map(Into::into),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PublicationAddParams {
    pub project_id: String,
    pub platform: Platform,
    #[serde(default)]
    #[ts(optional)]
    pub details: Option<PublicationDetails>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PublicationEditParams {
    pub publication_id: String,
    pub details: PublicationDetails,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PublicationRef {
    pub publication_id: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PublicationListParams {
    #[serde(default)]
    #[ts(optional)]
    pub project_id: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub platform: Option<Platform>,
    /// Removed publications too (they are left out otherwise).
    #[serde(default)]
    #[ts(optional)]
    pub include_removed: Option<bool>,
}

/// A publication and its newest snapshot.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PublicationView {
    pub publication: dto::Publication,
    pub latest: Option<dto::MetricSnapshot>,
    pub snapshot_count: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PublicationListResult {
    /// Newest publishing time first.
    pub publications: Vec<PublicationView>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PublicationPurgeParams {
    pub publication_id: String,
    /// Must be `true`: the publication and its snapshots are deleted for good.
    pub confirm: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PublicationPurgeResult {
    pub id: String,
    pub deleted: bool,
    pub snapshots_deleted: u32,
}

pub(super) fn add_publication(engine: &Engine, params: PublicationAddParams) -> Result<Publication, ApiError> {
    let _guard = engine.write_lock();
    let project = load_project(engine, &params.project_id)?;
    let mut batch = Batch::new();
    let publication = publications::stage_create(engine, &mut batch, &project, params.platform.into(), None, params.details.unwrap_or_default().into())?;
    engine.store().apply(batch, Durability::Durable)?;
    Ok(publication)
}

fn view(engine: &Engine, publication: Publication) -> Result<PublicationView, ApiError> {
    let snapshots = metrics::snapshots(engine.store(), &publication.id)?;
    let snapshot_count = u32::try_from(snapshots.len()).unwrap_or(u32::MAX);
    Ok(PublicationView { publication: publication.into(), latest: snapshots.last().map(Into::into), snapshot_count })
}

pub(super) fn get_publication(engine: &Engine, params: PublicationRef) -> Result<PublicationView, ApiError> {
    let publication = domain::load_publication(engine.store(), &params.publication_id)?;
    view(engine, publication)
}

pub(super) fn list_publications(engine: &Engine, params: PublicationListParams) -> Result<PublicationListResult, ApiError> {
    if let Some(project_id) = &params.project_id {
        load_project(engine, project_id)?;
    }
    let include_removed = params.include_removed.unwrap_or(false);
    let mut found: Vec<Publication> = domain::all_publications(engine.store())?
        .into_iter()
        .filter(|p| params.project_id.as_deref().is_none_or(|id| p.project_id == id))
        .filter(|p| params.platform.is_none_or(|platform| p.platform == platform.into()))
        .filter(|p| include_removed || p.removed_at.is_none())
        .collect();
    found.sort_by(|a, b| b.published_at.cmp(&a.published_at).then_with(|| b.id.cmp(&a.id)));
    Ok(PublicationListResult { publications: found.into_iter().map(|p| view(engine, p)).collect::<Result<_, _>>()? })
}

pub(super) fn edit_publication(engine: &Engine, params: PublicationEditParams) -> Result<Publication, ApiError> {
    let _guard = engine.write_lock();
    let publication = domain::load_publication(engine.store(), &params.publication_id)?;
    let project = load_project(engine, &publication.project_id)?;
    let mut batch = Batch::new();
    let edited = publications::stage_edit(engine, &mut batch, &project, publication, params.details.into())?;
    engine.store().apply(batch, Durability::Durable)?;
    Ok(edited)
}

fn set_removed(engine: &Engine, id: &str, removed: bool) -> Result<Publication, ApiError> {
    let _guard = engine.write_lock();
    let publication = domain::load_publication(engine.store(), id)?;
    if publication.removed_at.is_some() == removed {
        return Ok(publication);
    }
    let project = load_project(engine, &publication.project_id)?;
    let mut batch = Batch::new();
    let written = publications::stage_set_removed(engine, &mut batch, &project, publication, removed)?;
    engine.store().apply(batch, Durability::Durable)?;
    Ok(written)
}

/// Marks a publication removed: hidden from lists and reports, its snapshots kept until
/// `publication.purge` confirms it, or `publication.restore` undoes it.
pub(super) fn remove_publication(engine: &Engine, params: PublicationRef) -> Result<Publication, ApiError> {
    set_removed(engine, &params.publication_id, true)
}

pub(super) fn restore_publication(engine: &Engine, params: PublicationRef) -> Result<Publication, ApiError> {
    set_removed(engine, &params.publication_id, false)
}

/// Deletes a removed publication and its snapshots for good.
pub(super) fn purge_publication(engine: &Engine, params: PublicationPurgeParams) -> Result<PublicationPurgeResult, ApiError> {
    if !params.confirm {
        return Err(ApiError::validation("confirm", "Deleting a publication and its metrics for good needs `confirm: true`.").problem("perf.purge_unconfirmed", &[]));
    }
    let _guard = engine.write_lock();
    let publication = domain::load_publication(engine.store(), &params.publication_id)?;
    let mut batch = Batch::new();
    let n = publications::stage_purge(engine, &mut batch, &publication)?;
    engine.store().apply(batch, Durability::Durable)?;
    Ok(PublicationPurgeResult { id: publication.id, deleted: true, snapshots_deleted: u32::try_from(n).unwrap_or(u32::MAX) })
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PerfAddParams {
    pub publication_id: String,
    /// Metric key → the number as the platform shows it (`1.2万`, `10w+`, `12.3%`); an
    /// empty or `-` value means "not reported" and is left out. `extra.<name>` keeps a
    /// number without a canonical key.
    #[ts(type = "Record<string, string>")]
    pub metrics: BTreeMap<String, String>,
    /// When the numbers were read: `2026-03-04 12:30` in the publication's time zone,
    /// or RFC 3339; now when absent.
    #[serde(default)]
    #[ts(optional)]
    pub observed_at: Option<String>,
    /// Cumulative when absent.
    #[serde(default)]
    #[ts(optional)]
    pub window: Option<dto::SnapshotWindow>,
}

pub(super) fn add_snapshot(engine: &Engine, params: PerfAddParams) -> Result<MetricSnapshot, ApiError> {
    let _guard = engine.write_lock();
    let publication = domain::load_publication(engine.store(), &params.publication_id)?;
    if publication.removed_at.is_some() {
        return Err(ApiError::validation("publicationId", format!("Publication {} is removed; restore it to add metrics.", publication.id))
            .problem("perf.publication_removed", &[])
            .action("restore_publication", &[("publication", &publication.id)]));
    }
    let (values, extras) = metrics::read_manual(&publication, &params.metrics)?;
    let observed_at = match params.observed_at.as_deref().map(str::trim) {
        None | Some("") => engine.now(),
        Some(text) => publications::parse_time("observedAt", text, publications::time_zone("timeZone", &publication.time_zone)?)?,
    };
    let window = params.window.map(SnapshotWindow::from).unwrap_or(SnapshotWindow::Cumulative);
    if let SnapshotWindow::Period { start, end } = &window {
        if start > end {
            return Err(ApiError::validation("window", "The period ends before it starts."));
        }
    }
    let source = SnapshotSource::Manual { author: engine.author()? };
    let mut batch = Batch::new();
    let snapshot = metrics::stage_snapshot(engine, &mut batch, &publication, observed_at, window, source, values, extras)?;
    engine.store().apply(batch, Durability::Durable)?;
    Ok(snapshot)
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PerfListResult {
    pub publication_id: String,
    /// Oldest observation first.
    pub snapshots: Vec<dto::MetricSnapshot>,
}

pub(super) fn list_snapshots(engine: &Engine, params: PublicationRef) -> Result<PerfListResult, ApiError> {
    let publication = domain::load_publication(engine.store(), &params.publication_id)?;
    Ok(PerfListResult { snapshots: metrics::snapshots(engine.store(), &publication.id)?.iter().map(Into::into).collect(), publication_id: publication.id })
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PerfKeysResult {
    pub keys: Vec<dto::MetricKeyInfo>,
}

pub(super) fn metric_keys(_engine: &Engine, _params: Empty) -> Result<PerfKeysResult, ApiError> {
    Ok(PerfKeysResult { keys: metrics::METRIC_KEYS.iter().map(Into::into).collect() })
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PerfImportParams {
    /// A local export file (CLI); or `dataBase64` with `fileName` (the UI's file picker).
    #[serde(default)]
    #[ts(optional)]
    pub path: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub data_base64: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub file_name: Option<String>,
    /// Only try this platform's exports.
    #[serde(default)]
    #[ts(optional)]
    pub platform: Option<Platform>,
    /// The person's decisions: row number → a publication id, or `skip`.
    #[serde(default)]
    #[ts(optional, type = "Record<string, string>")]
    pub assign: BTreeMap<u32, String>,
    /// The account an account export's days go to (WeChat 用户分析); without it, the
    /// platform's only account.
    #[serde(default)]
    #[ts(optional)]
    pub account_id: Option<String>,
    /// Write it. Without it (the default) the import is only previewed and nothing is
    /// written. A commit needs every row matched or skipped.
    #[serde(default)]
    #[ts(optional)]
    pub commit: Option<bool>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PerfImportResult {
    pub preview: dto::ImportPreview,
    /// True when this call wrote the snapshots.
    pub committed: bool,
    /// The snapshots written by this call.
    pub snapshots: Vec<String>,
}

/// Previews (default) or commits an import of a platform's own export.
pub(super) fn import(engine: &Engine, params: PerfImportParams) -> Result<PerfImportResult, ApiError> {
    use crate::performance::import as imports;
    let (bytes, file_name) = match (&params.path, &params.data_base64) {
        (Some(path), None) => {
            let path = std::path::Path::new(path);
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            (super::media::read_bounded("path", path, imports::MAX_FILE_BYTES as u64)?, name)
        }
        (None, Some(data)) => {
            use base64::Engine as _;
            let bytes =
                base64::engine::general_purpose::STANDARD.decode(data.trim()).map_err(|e| ApiError::validation("dataBase64", format!("`dataBase64` is not valid base64: {e}")))?;
            (bytes, params.file_name.clone().unwrap_or_default())
        }
        _ => return Err(ApiError::validation("path", "Give the export as `path` or as `dataBase64`, one of the two.")),
    };
    let file_name = bounded_text("fileName", &file_name, 300)?;
    let _guard = engine.write_lock();
    let publications = domain::all_publications(engine.store())?;
    let prepared = imports::preview_for(engine.store(), &bytes, params.platform.map(Into::into), &publications, &params.assign, params.account_id.as_deref())?;
    let summary = prepared.summary.clone();
    if !params.commit.unwrap_or(false) || prepared.already_imported.is_some() {
        return Ok(PerfImportResult { preview: (&summary).into(), committed: false, snapshots: Vec::new() });
    }
    if summary.target == imports::ExportTarget::Account {
        if summary.account_id.is_none() {
            let platform = summary.platform.as_str();
            return Err(ApiError::validation(
                "accountId",
                format!("This file is an account's daily export ({}); say which {platform} account it belongs to.", summary.importer_name),
            )
            .problem("perf.account_export_needs_account", &[("name", &summary.importer_name), ("platform", platform)])
            .action("pick_platform_account", &[]));
        }
        let mut batch = Batch::new();
        let written = imports::stage_account_commit(engine, &mut batch, &file_name, prepared)?;
        engine.store().apply(batch, Durability::Durable)?;
        return Ok(PerfImportResult { preview: (&summary).into(), committed: true, snapshots: written.into_iter().map(|s| s.id).collect() });
    }
    let open: Vec<String> =
        summary.rows.iter().filter(|r| !matches!(r.outcome, imports::RowOutcome::Matched { .. } | imports::RowOutcome::Skipped)).map(|r| r.row.to_string()).collect();
    if !open.is_empty() {
        let rows = open.join(", ");
        return Err(ApiError::validation("assign", format!("Rows {rows} are not matched to a publication; match or skip each before importing."))
            .problem("perf.rows_unresolved", &[("rows", &rows)])
            .hint("match_or_skip_rows", "For each of those rows pick its publication, add the publication first, or skip the row; then import again."));
    }
    let mut batch = Batch::new();
    let written = imports::stage_commit(engine, &mut batch, &file_name, prepared, &publications)?;
    engine.store().apply(batch, Durability::Durable)?;
    Ok(PerfImportResult { preview: (&summary).into(), committed: true, snapshots: written.into_iter().map(|s| s.id).collect() })
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PerfReportParams {
    pub platform: Platform,
    /// Only this project's publications (the baselines still come from the account).
    #[serde(default)]
    #[ts(optional)]
    pub project_id: Option<String>,
    /// A canonical metric key; the platform's reach count (`readers`, `impressions`,
    /// `views`) when absent.
    #[serde(default)]
    #[ts(optional)]
    pub metric: Option<String>,
    /// `24h` when absent.
    #[serde(default)]
    #[ts(optional)]
    pub bucket: Option<dto::AgeBucket>,
    /// Also boosted and unknown-traffic posts (left out by default).
    #[serde(default)]
    #[ts(optional)]
    pub include_boosted: Option<bool>,
}

/// The before/after report on accepted AI changes: an association, never a cause.
pub(super) fn report(engine: &Engine, params: PerfReportParams) -> Result<crate::performance::report::BeforeAfterReport, ApiError> {
    use crate::performance::report::{self as reports, AgeBucket, ReportQuery};
    if let Some(project_id) = &params.project_id {
        load_project(engine, project_id)?;
    }
    let platform = crate::model::Platform::from(params.platform);
    let metric = params.metric.unwrap_or_else(|| reports::default_metric(platform).to_owned());
    if metrics::metric_key(&metric).is_none() {
        let shown: String = metric.chars().take(60).collect();
        return Err(ApiError::validation("metric", format!("{shown:?} is not a metric key.")).problem("perf.unknown_metric", &[("key", &shown)]).action("list_metric_keys", &[]));
    }
    let publications: Vec<Publication> = domain::all_publications(engine.store())?.into_iter().filter(|p| p.platform == platform && p.removed_at.is_none()).collect();
    // The key's points and the snapshots' stamps: no snapshot (with its raw row) is decoded.
    let query = ReportQuery {
        platform,
        project_id: params.project_id,
        metric,
        bucket: params.bucket.map_or(AgeBucket::H24, Into::into),
        include_boosted: params.include_boosted.unwrap_or(false),
    };
    let observed = reports::load_observations(engine.store(), platform, &query.metric, &publications, &[query.bucket])?;
    Ok(reports::before_after_observed(&query, &publications, &observed))
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PerfAccountDaysResult {
    pub account: dto::Account,
    /// The latest observation of each day, oldest first.
    pub days: Vec<dto::AccountSnapshot>,
}

/// An account's days (followers), as account exports reported them.
pub(super) fn account_days(engine: &Engine, params: AccountRef) -> Result<PerfAccountDaysResult, ApiError> {
    use crate::performance::account_days;
    let account = domain::load_account(engine.store(), &params.account_id)?;
    let all = account_days::snapshots(engine.store(), &account.id)?;
    let days = account_days::days(&all).into_iter().map(Into::into).collect();
    Ok(PerfAccountDaysResult { account: account.into(), days })
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PerfSummaryParams {
    pub platform: Platform,
}

/// The performance summary of a platform, as the AI reads it (`read_performance`, the
/// context's `performance` layer): shown to the person whatever the setting says.
pub(super) fn summary(engine: &Engine, params: PerfSummaryParams) -> Result<crate::performance::context::PerformanceSummary, ApiError> {
    crate::performance::context::summary(engine.store(), params.platform.into())
}

/// Whether performance history may enter AI context, and who decides.
pub(super) fn context_setting(engine: &Engine, _: Empty) -> Result<crate::performance::context::ContextState, ApiError> {
    crate::performance::context::state(engine.store())
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PerfSetContextParams {
    /// "Use performance history in AI context".
    pub enabled: bool,
}

/// Sets "use performance history in AI context". Errors: POLICY_REFUSED while the
/// workspace policy turns it off (the setting is then the policy's, read-only; nothing
/// is written).
pub(super) fn set_context_setting(engine: &Engine, params: PerfSetContextParams) -> Result<crate::performance::context::ContextState, ApiError> {
    use crate::performance::context::{self as perf_context, ContextSetting};
    let _guard = engine.write_lock();
    let state = perf_context::state(engine.store())?;
    if state.decided_by_policy {
        return Err(perf_context::refused(&state));
    }
    let mut batch = Batch::new();
    batch.put(&ContextSetting { enabled: params.enabled, updated_at: engine.now() })?;
    engine.store().apply(batch, Durability::Durable)?;
    perf_context::state(engine.store())
}

/// Which publications the dashboard shows, how they are ordered, and what its medians
/// are of. Every filter is exact; an absent one is any.
#[derive(Debug, Clone, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PerfDashboardParams {
    /// One project's publications (a project's table).
    #[serde(default)]
    #[ts(optional)]
    pub project_id: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub platform: Option<Platform>,
    #[serde(default)]
    #[ts(optional)]
    pub account_id: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub format: Option<dto::PublicationFormat>,
    /// Published at or after this time.
    #[serde(default)]
    #[ts(optional)]
    pub from: Option<crate::model::Timestamp>,
    /// Published before this time.
    #[serde(default)]
    #[ts(optional)]
    pub to: Option<crate::model::Timestamp>,
    /// `publishedAt` (default), `title`, `platform`, `account`, `format`, or
    /// `metric:<key>` (ordered within each platform: platforms are not compared).
    #[serde(default)]
    #[ts(optional)]
    pub sort: Option<String>,
    /// Newest or largest first; true when absent.
    #[serde(default)]
    #[ts(optional)]
    pub descending: Option<bool>,
    /// Rows skipped before the page.
    #[serde(default)]
    #[ts(optional)]
    pub offset: Option<u32>,
    /// Rows of the page: 200 when absent, at most 1000.
    #[serde(default)]
    #[ts(optional)]
    pub limit: Option<u32>,
    /// The metric key of the medians; each platform's reach count when absent.
    #[serde(default)]
    #[ts(optional)]
    pub metric: Option<String>,
    /// The medians at this age (`24h`, `72h`, `7d`); each publication's latest value
    /// when absent.
    #[serde(default)]
    #[ts(optional)]
    pub age: Option<dto::AgeBucket>,
    /// `week` or `month`; by week when the publications span at most 26 weeks.
    #[serde(default)]
    #[ts(optional)]
    pub interval: Option<dto::Interval>,
}

fn known_metric(field: &str, metric: &str) -> Result<(), ApiError> {
    if metrics::metric_key(metric).is_none() {
        let shown: String = metric.chars().take(60).collect();
        return Err(ApiError::validation(field, format!("{shown:?} is not a metric key.")).problem("perf.unknown_metric", &[("key", &shown)]).action("list_metric_keys", &[]));
    }
    Ok(())
}

/// The query `params` ask, checked; `limit: None` takes every row.
fn dashboard_query(engine: &Engine, params: PerfDashboardParams, paged: bool) -> Result<crate::performance::dashboard::DashboardQuery, ApiError> {
    use crate::performance::dashboard::{DashboardQuery, SortKey, DEFAULT_LIMIT, MAX_LIMIT};
    if let Some(project_id) = &params.project_id {
        load_project(engine, project_id)?;
    }
    if let Some(account_id) = &params.account_id {
        domain::load_account(engine.store(), account_id)?;
    }
    if let (Some(from), Some(to)) = (params.from, params.to) {
        if from >= to {
            return Err(ApiError::validation("to", "`to` must be later than `from`.").problem("perf.bad_range", &[]));
        }
    }
    if let Some(metric) = &params.metric {
        known_metric("metric", metric)?;
    }
    let sort = match params.sort.as_deref().map(str::trim) {
        None | Some("") | Some("publishedAt") => SortKey::PublishedAt,
        Some("title") => SortKey::Title,
        Some("platform") => SortKey::Platform,
        Some("account") => SortKey::Account,
        Some("format") => SortKey::Format,
        Some(other) => match other.strip_prefix("metric:") {
            Some(key) => {
                known_metric("sort", key)?;
                SortKey::Metric(key.to_owned())
            }
            None => {
                let shown: String = other.chars().take(60).collect();
                return Err(ApiError::validation("sort", format!("Cannot sort by {shown:?}: use publishedAt, title, platform, account, format or metric:<key>."))
                    .problem("perf.bad_sort", &[("value", &shown)]));
            }
        },
    };
    let limit = match params.limit {
        _ if !paged => None,
        None => Some(DEFAULT_LIMIT),
        Some(n) if n >= 1 && n as usize <= MAX_LIMIT => Some(n as usize),
        Some(_) => return Err(ApiError::validation("limit", format!("`limit` must be between 1 and {MAX_LIMIT}."))),
    };
    Ok(DashboardQuery {
        project_id: params.project_id,
        platform: params.platform.map(Into::into),
        account_id: params.account_id,
        format: params.format.map(Into::into),
        from: params.from,
        to: params.to,
        sort,
        descending: params.descending.unwrap_or(true),
        offset: if paged { params.offset.unwrap_or(0) as usize } else { 0 },
        limit,
        metric: params.metric,
        age: params.age.map(Into::into),
        interval: params.interval.map(Into::into),
    })
}

fn load_dashboard(engine: &Engine, query: &crate::performance::dashboard::DashboardQuery) -> Result<crate::performance::dashboard::Dashboard, ApiError> {
    use crate::performance::dashboard as board;
    use crate::performance::metrics::MetricPoint;
    let store = engine.store();
    let cache = engine.perf_cache();
    let publications = cache.publications(store)?;
    let matching = board::matching(query, &publications);
    // Only the points of the keys the medians and the sort use, one platform at a time,
    // and only the page's compact snapshot metrics: a dashboard query never decodes a
    // snapshot.
    let mut points = std::collections::HashMap::new();
    for (platform, key) in board::needed_points(query, &matching) {
        let mine: Vec<&str> = matching.iter().filter(|p| p.platform == platform).map(|p| p.id.as_str()).collect();
        let all = publications.iter().filter(|p| p.platform == platform).count();
        // A filter that keeps few of the platform's publications (a project, an account,
        // a quarter) reads their points only, a range each, unless the key's points of
        // the platform are already in memory; otherwise they are read in one pass and
        // kept until the points change.
        let list = match cache.cached_points(store, platform, &key) {
            Some(list) => list,
            None if mine.len() * 4 < all => {
                let prefix = MetricPoint::prefix(platform, &key);
                let mut list = Vec::new();
                for id in mine {
                    let mut range = prefix.clone();
                    range.extend_from_slice(&crate::store::keys::project_prefix(id));
                    list.extend(store.scan::<MetricPoint>(&range)?);
                }
                std::sync::Arc::new(list)
            }
            None => cache.points(store, platform, &key)?,
        };
        points.insert((platform, key), list);
    }
    let accounts = domain::accounts(store)?;
    board::dashboard(query, &matching, &points, &accounts, &mut |id| metrics::snapshot_metrics(store, id))
}

/// The workspace dashboard: publications with their latest metrics, each platform's
/// median over time, and the posting-time grid.
pub(super) fn dashboard(engine: &Engine, params: PerfDashboardParams) -> Result<crate::performance::dashboard::Dashboard, ApiError> {
    let query = dashboard_query(engine, params, true)?;
    load_dashboard(engine, &query)
}

/// Which table to export: the dashboard's (with its filters; a project's publications
/// are the dashboard filtered to the project) or the before/after report's points.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PerfExportParams {
    #[serde(default)]
    #[ts(optional)]
    pub dashboard: Option<PerfDashboardParams>,
    #[serde(default)]
    #[ts(optional)]
    pub report: Option<PerfReportParams>,
}

/// A performance table as CSV: UTF-8 with a byte-order mark, quoted, formula-like cells
/// defused; a value that was not reported is an empty cell.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PerfExportResult {
    pub csv: String,
    pub n_rows: u32,
    /// `dashboard` or `report`.
    pub table: String,
}

/// Exports the dashboard's table (every matching row, in its order) or the report's.
pub(super) fn export(engine: &Engine, params: PerfExportParams) -> Result<PerfExportResult, ApiError> {
    use crate::performance::export as tables;
    let (table, (header, rows)) = match (params.dashboard, params.report) {
        (Some(filter), None) => {
            let query = dashboard_query(engine, filter, false)?;
            ("dashboard", tables::dashboard_table(&load_dashboard(engine, &query)?))
        }
        (None, Some(report_params)) => ("report", tables::report_table(&report(engine, report_params)?)),
        _ => {
            return Err(ApiError::validation("dashboard", "Name one table to export: `dashboard` (with its filters) or `report` (with its parameters).")
                .problem("perf.export_one_table", &[]))
        }
    };
    let n_rows = u32::try_from(rows.len()).unwrap_or(u32::MAX);
    Ok(PerfExportResult { csv: crate::spreadsheet::csv_string(&header, rows)?, n_rows, table: table.to_owned() })
}
