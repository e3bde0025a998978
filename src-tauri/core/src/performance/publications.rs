//! Adding, editing, removing and restoring publications, and deriving the AI changes
//! each one carries. Every write re-derives the `ai_changes` of the whole (project,
//! platform) group in the same batch, so a publication added between two others, or a
//! removed one, never leaves a neighbour counting from the wrong base.

use chrono::{NaiveDate, NaiveDateTime, TimeZone};

use super::{Account, AiChange, Distribution, Publication, PublicationFormat, Visibility};
use crate::error::{bounded_text, ApiError};
use crate::kernel::Kernel;
use crate::model::{Platform, Project, Timestamp, Version, VersionOrigin};
use crate::project::versions;
use crate::store::{Batch, Store};

/// Longest URL, in characters.
pub const MAX_URL_CHARS: usize = 2000;
/// Longest platform post id, in characters.
pub const MAX_POST_ID_CHARS: usize = 200;
/// Longest publication title, in characters.
pub const MAX_TITLE_CHARS: usize = 200;

/// The time zone a platform's own times are in when nothing else is said: Beijing time
/// for the Chinese platforms, UTC for X (its exports carry `+0000`).
pub fn default_time_zone(platform: Platform) -> &'static str {
    match platform {
        Platform::X => "UTC",
        _ => "Asia/Shanghai",
    }
}

/// Checks an IANA time zone name. Errors: VALIDATION naming `field`.
pub fn time_zone(field: &str, name: &str) -> Result<chrono_tz::Tz, ApiError> {
    name.parse::<chrono_tz::Tz>().map_err(|_| {
        ApiError::validation(field, format!("`{field}`: {name:?} is not a time zone name such as Asia/Shanghai or UTC."))
            .problem("perf.bad_time_zone", &[("value", name)])
            .hint("use_iana_zone", "Use an IANA time zone name: Asia/Shanghai, UTC, America/New_York.")
    })
}

/// Reads a time as a person or an export writes it: RFC 3339 with an offset
/// (`2026-03-04T12:30:00+08:00`, kept as given), or a local time in `zone`
/// (`2026-03-04 12:30`, `2026-03-04T12:30:05`, `2026/03/04 12:30`, `2026-03-04`).
/// Errors: VALIDATION naming `field`.
pub fn parse_time(field: &str, text: &str, zone: chrono_tz::Tz) -> Result<Timestamp, ApiError> {
    let text = text.trim();
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(text) {
        return Ok(t.with_timezone(&chrono::Utc));
    }
    let normalized = text.replace('/', "-").replace('T', " ");
    let naive = ["%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M"]
        .iter()
        .find_map(|f| NaiveDateTime::parse_from_str(&normalized, f).ok())
        .or_else(|| NaiveDate::parse_from_str(&normalized, "%Y-%m-%d").ok().and_then(|d| d.and_hms_opt(0, 0, 0)));
    let bad = || {
        ApiError::validation(field, format!("`{field}`: {text:?} is not a time (write 2026-03-04 12:30 or 2026-03-04T12:30:00+08:00)."))
            .problem("perf.bad_time", &[("value", text)])
            .hint("time_forms", "Write the date and time as 2026-03-04 12:30 (in the publication's time zone) or with an offset, 2026-03-04T12:30:00+08:00.")
    };
    let naive = naive.ok_or_else(bad)?;
    // A local time skipped by a daylight-saving change does not exist; an ambiguous one
    // takes the earlier instant.
    zone.from_local_datetime(&naive).earliest().map(|t| t.with_timezone(&chrono::Utc)).ok_or_else(bad)
}

/// A URL as given, checked: http(s), at most [`MAX_URL_CHARS`].
fn url(field: &str, text: &str) -> Result<Option<String>, ApiError> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    let text = bounded_text(field, text, MAX_URL_CHARS)?;
    if !(text.starts_with("https://") || text.starts_with("http://")) || text.contains(char::is_whitespace) {
        return Err(ApiError::validation(field, format!("`{field}` must be a web address starting with https:// or http://."))
            .problem("perf.bad_url", &[])
            .hint("paste_post_url", "Paste the address of the published post, as the browser shows it."));
    }
    Ok(Some(text))
}

fn optional_text(field: &str, text: Option<&str>, max: usize) -> Result<Option<String>, ApiError> {
    match text.map(str::trim) {
        None | Some("") => Ok(None),
        Some(t) => Ok(Some(bounded_text(field, t, max)?)),
    }
}

/// What a person says about a publication; `None` takes the default (new) or keeps
/// the value (edit). Text is checked here.
#[derive(Debug, Clone, Default)]
pub struct PublicationFields {
    pub version_number: Option<u32>,
    /// `Some(None)` clears the account.
    pub account_id: Option<Option<String>>,
    pub url: Option<String>,
    pub platform_post_id: Option<String>,
    pub title: Option<String>,
    pub published_at: Option<String>,
    pub time_zone: Option<String>,
    pub format: Option<PublicationFormat>,
    pub distribution: Option<Distribution>,
    pub visibility: Option<Visibility>,
}

fn version_of(store: &Store, project: &Project, number: u32) -> Result<Version, ApiError> {
    if number == 0 || number > project.head {
        let head = project.head.to_string();
        let mut error = ApiError::validation("versionNumber", format!("Project {} has no version {number} (its latest is {}).", project.id, project.head))
            .problem("perf.no_such_version", &[("number", &number.to_string()), ("head", &head)]);
        if project.head == 0 {
            error = error.action("save_version_first", &[("project", &project.id)]);
        }
        return Err(error);
    }
    versions::load(store, &project.id, number)
}

pub(crate) fn account_for(store: &Store, id: &str, platform: Platform) -> Result<Account, ApiError> {
    let account = super::load_account(store, id).map_err(|e| ApiError { details: Some(serde_json::json!({ "field": "accountId", "id": id })), ..e })?;
    if account.platform != platform {
        return Err(ApiError::validation("accountId", format!("Account {} is a {} account, not {}.", account.name, account.platform.as_str(), platform.as_str()))
            .problem("perf.account_platform", &[("account", &account.name), ("accountPlatform", account.platform.as_str()), ("platform", platform.as_str())])
            .action("pick_platform_account", &[]));
    }
    Ok(account)
}

/// Applies `fields` to `publication` (checked), loading the version when it changes.
fn apply_fields(kernel: &Kernel, project: &Project, publication: &mut Publication, fields: PublicationFields) -> Result<(), ApiError> {
    let store = kernel.store();
    if let Some(number) = fields.version_number {
        let version = version_of(store, project, number)?;
        publication.version_number = version.number;
        publication.version_id = version.id;
    }
    if let Some(account) = fields.account_id {
        publication.account_id = match account.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(id) => Some(account_for(store, id, publication.platform)?.id),
        };
    }
    if let Some(text) = fields.url {
        publication.url = url("url", &text)?;
    }
    if let Some(text) = fields.platform_post_id {
        publication.platform_post_id = optional_text("platformPostId", Some(&text), MAX_POST_ID_CHARS)?;
    }
    if let Some(text) = fields.title {
        let text = text.trim();
        if !text.is_empty() {
            publication.title = bounded_text("title", text, MAX_TITLE_CHARS)?;
        }
    }
    if let Some(name) = fields.time_zone {
        time_zone("timeZone", &name)?;
        publication.time_zone = name.trim().to_owned();
    }
    if let Some(text) = fields.published_at {
        let zone = time_zone("timeZone", &publication.time_zone)?;
        publication.published_at = parse_time("publishedAt", &text, zone)?;
    }
    if let Some(format) = fields.format {
        publication.format = format;
    }
    if let Some(distribution) = fields.distribution {
        publication.distribution = distribution;
    }
    if let Some(visibility) = fields.visibility {
        publication.visibility = visibility;
    }
    Ok(())
}

/// A new publication of `project` on `platform`, with `fields` over the defaults
/// (`default_version`, or the head; the version's title; now; the platform's time zone,
/// format and distribution; public), added to `batch` with the group's AI changes
/// re-derived.
pub fn stage_create(
    kernel: &Kernel,
    batch: &mut Batch,
    project: &Project,
    platform: Platform,
    default_version: Option<u32>,
    fields: PublicationFields,
) -> Result<Publication, ApiError> {
    let store = kernel.store();
    let number = fields.version_number.or(default_version.filter(|n| *n > 0)).unwrap_or(project.head);
    let version = version_of(store, project, number)?;
    let now = kernel.now();
    let mut publication = Publication {
        id: kernel.new_id("pub"),
        project_id: project.id.clone(),
        platform,
        version_number: version.number,
        version_id: version.id.clone(),
        account_id: None,
        url: None,
        platform_post_id: None,
        title: version.title.chars().take(MAX_TITLE_CHARS).collect(),
        published_at: now,
        time_zone: default_time_zone(platform).to_owned(),
        format: PublicationFormat::default_for(platform),
        distribution: Distribution::default_for(platform),
        visibility: Visibility::Public,
        ai_changes: Vec::new(),
        previous_version_number: None,
        removed_at: None,
        created_by: kernel.author()?,
        created_at: now,
        updated_at: now,
    };
    apply_fields(kernel, project, &mut publication, PublicationFields { version_number: None, ..fields })?;
    stage_written(kernel, batch, project, publication)
}

/// `publication` with `fields` applied, added to `batch` with its group re-derived.
pub fn stage_edit(kernel: &Kernel, batch: &mut Batch, project: &Project, mut publication: Publication, fields: PublicationFields) -> Result<Publication, ApiError> {
    apply_fields(kernel, project, &mut publication, fields)?;
    publication.updated_at = kernel.now();
    stage_written(kernel, batch, project, publication)
}

/// Marks `publication` removed (or, with `removed = false`, restores it), its group
/// re-derived. Its snapshots stay.
pub fn stage_set_removed(kernel: &Kernel, batch: &mut Batch, project: &Project, mut publication: Publication, removed: bool) -> Result<Publication, ApiError> {
    let now = kernel.now();
    publication.removed_at = removed.then_some(now);
    publication.updated_at = now;
    stage_written(kernel, batch, project, publication)
}

/// A person's write of `publication`: its group re-derived, and its delivery to the
/// workspace server staged in the same batch.
fn stage_written(kernel: &Kernel, batch: &mut Batch, project: &Project, publication: Publication) -> Result<Publication, ApiError> {
    super::sync::stage_delivery(kernel, batch, inkstone_sync_proto::PerfKind::Publication, &publication.id, Some((&publication.project_id, None)), None)?;
    stage_group(kernel, batch, project, std::slice::from_ref(&publication)).map(|mut written| written.remove(0))
}

/// Publications pulled from the workspace server (their groups re-derived here), staged
/// without a delivery: they are never sent back.
pub(crate) fn stage_pulled(kernel: &Kernel, batch: &mut Batch, project: &Project, pulled: &[Publication]) -> Result<Vec<Publication>, ApiError> {
    let mut written = Vec::new();
    let mut by_platform: std::collections::BTreeMap<Platform, Vec<Publication>> = std::collections::BTreeMap::new();
    for publication in pulled {
        by_platform.entry(publication.platform).or_default().push(publication.clone());
    }
    for group in by_platform.values() {
        written.extend(stage_group(kernel, batch, project, group)?);
    }
    Ok(written)
}

/// Deletes a removed publication and every snapshot of it; returns how many snapshots.
/// The workspace server is told (in the same batch), and drops them too.
pub fn stage_purge(kernel: &Kernel, batch: &mut Batch, publication: &Publication) -> Result<usize, ApiError> {
    let store = kernel.store();
    if publication.removed_at.is_none() {
        return Err(ApiError::validation("publicationId", format!("Publication {} is not removed; remove it first, then confirm.", publication.id))
            .problem("perf.purge_not_removed", &[])
            .action("remove_first", &[("publication", &publication.id)]));
    }
    let prefix = super::snapshot_prefix(&publication.id);
    let snapshots = store.scan::<super::metrics::MetricSnapshot>(&prefix)?;
    for snapshot in &snapshots {
        super::metrics::delete_snapshot(batch, snapshot);
        // A snapshot not yet sent need not go: the deletion takes it on the server.
        batch.delete::<crate::outbox::PerfDelivery>(crate::outbox::perf_delivery_key(inkstone_sync_proto::PerfKind::Snapshot, &snapshot.id));
    }
    batch.delete::<Publication>(publication.id.as_bytes().to_vec());
    // Deleted after its last write, whatever the clock says, so the deletion wins.
    let deleted_at = kernel.now().max(publication.updated_at + chrono::Duration::milliseconds(1));
    super::sync::stage_delivery(kernel, batch, inkstone_sync_proto::PerfKind::Publication, &publication.id, Some((&publication.project_id, None)), Some(deleted_at))?;
    Ok(snapshots.len())
}

/// Re-derives `ai_changes` for every live publication of the group `changed` belongs to
/// (with `changed` replacing what is stored), puts each one that changed and every one
/// of `changed`, and returns `changed` as written.
fn stage_group(kernel: &Kernel, batch: &mut Batch, project: &Project, changed: &[Publication]) -> Result<Vec<Publication>, ApiError> {
    let store = kernel.store();
    let Some(platform) = changed.first().map(|p| p.platform) else { return Ok(Vec::new()) };
    let mut group: Vec<Publication> =
        super::all_publications(store)?.into_iter().filter(|p| p.project_id == project.id && p.platform == platform && !changed.iter().any(|c| c.id == p.id)).collect();
    group.extend(changed.iter().cloned());
    let versions = versions::list(store, &project.id)?;
    let before: Vec<Publication> = group.clone();
    derive_ai_changes(&mut group, &versions, store)?;
    let mut written = Vec::new();
    for publication in &group {
        let was = before.iter().find(|b| b.id == publication.id);
        let is_changed = changed.iter().any(|c| c.id == publication.id);
        if is_changed || was != Some(publication) {
            batch.put(publication)?;
        }
        if is_changed {
            written.push(publication.clone());
        }
    }
    Ok(written)
}

/// Fills `ai_changes` and `previous_version_number` of every live publication in
/// `group` (one project, one platform): ordered by publishing time, each counts the AI
/// versions after the previous live one's version up to its own. A removed publication
/// keeps what it had and is no one's base.
pub fn derive_ai_changes(group: &mut [Publication], versions: &[Version], store: &Store) -> Result<(), ApiError> {
    let mut order: Vec<usize> = (0..group.len()).filter(|i| group[*i].removed_at.is_none()).collect();
    order.sort_by(|a, b| group[*a].published_at.cmp(&group[*b].published_at).then_with(|| group[*a].id.cmp(&group[*b].id)));
    let mut previous: Option<u32> = None;
    for i in order {
        let upto = group[i].version_number;
        let from = previous.unwrap_or(0);
        let mut changes = Vec::new();
        for version in versions.iter().filter(|v| v.number > from && v.number <= upto) {
            if let Some(change) = ai_change(version, store)? {
                changes.push(change);
            }
        }
        group[i].ai_changes = changes;
        group[i].previous_version_number = previous;
        previous = Some(upto);
    }
    Ok(())
}

/// The AI change `version` records, if it is one: an accepted proposal here, or a
/// colleague's pulled version their client says came from one.
fn ai_change(version: &Version, store: &Store) -> Result<Option<AiChange>, ApiError> {
    Ok(match &version.origin {
        VersionOrigin::AiProposal { proposal_id, session_id, run_id, model, .. } => {
            let kind = match crate::proposals::load(store, proposal_id) {
                Ok(proposal) => Some(proposal.kind.as_str().to_owned()),
                Err(e) if e.code == crate::error::ErrorCode::NotFound => None,
                Err(e) => return Err(e),
            };
            Some(AiChange {
                version_number: version.number,
                proposal_id: Some(proposal_id.clone()),
                proposal_kind: kind,
                session_id: session_id.clone(),
                run_id: run_id.clone(),
                model: Some(model.clone()),
                pulled_from: None,
            })
        }
        VersionOrigin::Pulled { pushed_by, remote_origin: Some(origin), .. } if origin == inkstone_sync_proto::origin::AI_PROPOSAL => Some(AiChange {
            version_number: version.number,
            proposal_id: None,
            proposal_kind: None,
            session_id: None,
            run_id: None,
            model: None,
            pulled_from: Some(pushed_by.clone()),
        }),
        _ => None,
    })
}
