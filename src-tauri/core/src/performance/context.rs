//! Performance history for the model: a short summary of one platform's strongest and
//! weakest eligible posts, and the setting (with the workspace policy above it) that
//! decides whether any of it may enter AI context.
//!
//! The summary reuses the before/after report ([`super::report::before_after`]): its
//! gates (boosted, unknown-traffic and private posts, posts under the floor, posts
//! without an observed snapshot at the age, posts without three earlier comparable
//! posts) decide which posts are eligible, and its multiples (a post's value over the
//! median of the same account's previous comparable posts at the same age) rank them.
//! Nothing is re-derived here. Of the three ages the one with the most eligible posts is
//! used. Each post gives its title (clipped), the length of the published version, its
//! posting time in its own time zone, its format, the multiple with its basis, and the
//! snapshot it was measured by (evidence), labelled measured (an import) or manual.
//!
//! Raw export rows never enter it: a snapshot's `raw_row`, a metric's `raw` text and the
//! platform extras are not read. The text stays within [`SUMMARY_BUDGET_TOKENS`].
//!
//! What it reads: the publications once per call (for every platform of the layer), the
//! platform's reach key from the `MetricPoint` index once (the three ages are measured
//! over the same observations), and only for the posts it shows their snapshot (to
//! label it measured or manual) and their version (for its length).
//!
//! The setting "use performance history in AI context" is a meta record
//! ([`ContextSetting`], on when absent); a cached workspace policy whose
//! `performance_context` is off overrides it, offline as every policy check.

use chrono::{Datelike, Timelike};
use serde::{Deserialize, Serialize};

use super::metrics::{self, MetricSnapshot, SnapshotSource};
use super::report::{self, AgeBucket, Observations, ReportPoint, ReportQuery};
use super::{Publication, PublicationFormat};
use crate::error::{ApiError, ErrorCode};
use crate::model::{Platform, Timestamp};
use crate::policy::{CachedPolicy, META_POLICY};
use crate::store::{Kind, Record, Store};

/// The most posts on each side (strongest, weakest).
pub const POSTS_PER_SIDE: usize = 3;
/// The most tokens one platform's summary takes (estimated).
pub const SUMMARY_BUDGET_TOKENS: u64 = 450;
/// The most characters of a title the summary quotes.
const TITLE_CHARS: usize = 48;

/// The name of the context layer that carries the summaries.
pub const LAYER: &str = "performance";
/// The heading of one platform's summary in that layer (`## performance: wechat`);
/// provenance finds the platforms the model read by it.
pub const PLATFORM_HEADING: &str = "## performance: ";
/// The line of a summary that lists its evidence (`evidence: snp_1, snp_2`).
pub const EVIDENCE_PREFIX: &str = "evidence: ";

/// How a post's number was observed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Evidence {
    /// Read from the platform's own export (or its API).
    Measured,
    /// Typed by a person: anecdotal.
    Manual,
}

/// One post of a summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SummaryPost {
    pub publication_id: String,
    /// The title as published, clipped.
    pub title: String,
    /// Characters of the published version's source, when that version is here.
    pub length: Option<u32>,
    /// When it went out, in its own time zone (`2026-03-04 Wed 20:30 Asia/Shanghai`).
    pub posted: String,
    pub format: PublicationFormat,
    /// Its value over the account's usual (see [`report`]).
    pub multiple: f64,
    pub value: f64,
    pub baseline: f64,
    pub age_hours: f64,
    /// The snapshot it was measured by.
    pub snapshot_ids: Vec<String>,
    pub evidence: Evidence,
}

/// The summary of one platform.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PerformanceSummary {
    pub platform: Platform,
    /// The metric key compared (the platform's reach count) and what it counts.
    pub metric: String,
    pub basis: String,
    pub bucket: AgeBucket,
    /// Eligible posts (the report's gates passed, with a multiple).
    pub eligible: u32,
    pub strongest: Vec<SummaryPost>,
    pub weakest: Vec<SummaryPost>,
    /// The text the model reads (empty when there is nothing to say).
    pub text: String,
}

impl PerformanceSummary {
    /// Every snapshot id the summary rests on.
    pub fn snapshot_ids(&self) -> Vec<String> {
        self.strongest.iter().chain(&self.weakest).flat_map(|p| p.snapshot_ids.iter().cloned()).collect()
    }
}

/// What the summary is built from (loaded by [`summary`], or given by a test).
pub struct SummaryInput<'a> {
    pub platform: Platform,
    pub publications: &'a [Publication],
    /// Each publication's observations of the platform's reach key
    /// ([`report::default_metric`]), by publication id.
    pub observations: &'a Observations,
}

/// What the summary says of a shown post beyond the report: how its snapshot was
/// observed and the length of its version (`None`: the snapshot is not there, and the
/// post is left out).
pub type PostDetails<'a> = dyn FnMut(&Publication, &str) -> Result<Option<(Evidence, Option<u32>)>, ApiError> + 'a;

/// The evidence of `snapshot`.
pub fn evidence_of(snapshot: &MetricSnapshot) -> Evidence {
    match snapshot.source {
        SnapshotSource::Manual { .. } => Evidence::Manual,
        SnapshotSource::Import { .. } | SnapshotSource::Api { .. } => Evidence::Measured,
    }
}

fn clip(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        flat
    } else {
        format!("{}…", flat.chars().take(max).collect::<String>())
    }
}

/// The local posting time of `p`, with its weekday and zone.
fn posted(p: &Publication) -> String {
    let weekday = |w: chrono::Weekday| ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"][w.num_days_from_monday() as usize];
    match p.time_zone.parse::<chrono_tz::Tz>() {
        Ok(tz) => {
            let local = p.published_at.with_timezone(&tz);
            format!("{} {} {:02}:{:02} {}", local.format("%Y-%m-%d"), weekday(local.weekday()), local.hour(), local.minute(), p.time_zone)
        }
        Err(_) => format!("{} {} UTC", p.published_at.format("%Y-%m-%d"), p.published_at.format("%a %H:%M")),
    }
}

fn format_name(format: PublicationFormat) -> &'static str {
    match format {
        PublicationFormat::Article => "article",
        PublicationFormat::Answer => "answer",
        PublicationFormat::ImageText => "image-text",
        PublicationFormat::Video => "video",
        PublicationFormat::Thread => "thread",
        PublicationFormat::Post => "post",
        PublicationFormat::Other => "other",
    }
}

fn bucket_name(bucket: AgeBucket) -> &'static str {
    match bucket {
        AgeBucket::H24 => "24h",
        AgeBucket::H72 => "72h",
        AgeBucket::D7 => "7d",
    }
}

fn post(point: &ReportPoint, input: &SummaryInput<'_>, details: &mut PostDetails<'_>) -> Result<Option<SummaryPost>, ApiError> {
    let Some(p) = input.publications.iter().find(|p| p.id == point.publication_id) else { return Ok(None) };
    let Some((evidence, length)) = details(p, &point.snapshot_id)? else { return Ok(None) };
    let (Some(multiple), Some(baseline)) = (point.multiple, point.baseline) else { return Ok(None) };
    Ok(Some(SummaryPost {
        publication_id: p.id.clone(),
        title: clip(&p.title, TITLE_CHARS),
        length,
        posted: posted(p),
        format: p.format,
        multiple,
        value: point.value,
        baseline,
        age_hours: point.age_hours,
        snapshot_ids: vec![point.snapshot_id.clone()],
        evidence,
    }))
}

fn line(post: &SummaryPost, metric: &str) -> String {
    let length = post.length.map(|n| format!("{n} chars")).unwrap_or_else(|| "length unknown".to_owned());
    let evidence = match post.evidence {
        Evidence::Measured => "measured",
        Evidence::Manual => "manual, anecdotal",
    };
    format!(
        "- {:.2}× ({} {metric} vs usual {}) \"{}\" — {length}, {}, posted {}, at {:.0}h; {evidence}; snapshot {}\n",
        post.multiple,
        post.value.round(),
        post.baseline.round(),
        post.title,
        format_name(post.format),
        post.posted,
        post.age_hours,
        post.snapshot_ids.join(", ")
    )
}

fn text(summary: &PerformanceSummary, per_side: usize) -> String {
    if summary.strongest.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "{PLATFORM_HEADING}{}\nThe person's own posts on this platform, {} eligible. Each number is the post's {} ({}) at {} as a multiple of the median of the same account's previous comparable posts (same format, same age, up to {}). Boosted, private, unknown-traffic and tiny posts are left out. An association, never a cause; promise no growth.\n",
        summary.platform.as_str(),
        summary.eligible,
        summary.metric,
        summary.basis,
        bucket_name(summary.bucket),
        report::BASELINE_POSTS,
    );
    out.push_str("strongest:\n");
    for p in summary.strongest.iter().take(per_side) {
        out.push_str(&line(p, &summary.metric));
    }
    out.push_str("weakest:\n");
    for p in summary.weakest.iter().take(per_side) {
        out.push_str(&line(p, &summary.metric));
    }
    let ids: Vec<String> = summary.strongest.iter().take(per_side).chain(summary.weakest.iter().take(per_side)).flat_map(|p| p.snapshot_ids.clone()).collect();
    out.push_str(&format!("{EVIDENCE_PREFIX}{}\n", ids.join(", ")));
    out
}

/// The summary of `input.platform`: pure over the records given and what `details`
/// says of the posts shown.
///
/// Errors: what `details` returns.
pub fn summarize(input: &SummaryInput<'_>, details: &mut PostDetails<'_>) -> Result<PerformanceSummary, ApiError> {
    let metric = report::default_metric(input.platform).to_owned();
    let basis = metrics::metric_key(&metric).map(|k| k.basis.to_owned()).unwrap_or_default();
    // The age with the most eligible posts (the earliest on a tie).
    let mut best: Option<(AgeBucket, Vec<ReportPoint>)> = None;
    for bucket in [AgeBucket::H24, AgeBucket::H72, AgeBucket::D7] {
        let query = ReportQuery { platform: input.platform, project_id: None, metric: metric.clone(), bucket, include_boosted: false };
        let report = report::before_after_observed(&query, input.publications, input.observations);
        let eligible: Vec<ReportPoint> = report.points.into_iter().filter(|p| p.excluded.is_none() && p.multiple.is_some()).collect();
        if best.as_ref().is_none_or(|(_, b)| eligible.len() > b.len()) {
            best = Some((bucket, eligible));
        }
    }
    let (bucket, mut eligible) = best.unwrap_or((AgeBucket::H24, Vec::new()));
    eligible.sort_by(|a, b| b.multiple.unwrap_or(0.0).total_cmp(&a.multiple.unwrap_or(0.0)).then_with(|| a.publication_id.cmp(&b.publication_id)));
    // Two sides that do not overlap: a post is either strong or weak.
    let per_side = (eligible.len() / 2).min(POSTS_PER_SIDE);
    let mut strongest = Vec::new();
    for p in eligible.iter().take(per_side) {
        strongest.extend(post(p, input, details)?);
    }
    let mut weakest = Vec::new();
    for p in eligible.iter().rev().take(per_side) {
        weakest.extend(post(p, input, details)?);
    }
    let mut summary = PerformanceSummary {
        platform: input.platform,
        metric,
        basis,
        bucket,
        eligible: u32::try_from(eligible.len()).unwrap_or(u32::MAX),
        strongest,
        weakest,
        text: String::new(),
    };
    // Within the budget: fewer posts per side until it fits.
    let mut shown = per_side;
    loop {
        summary.text = text(&summary, shown);
        if shown <= 1 || crate::llm::estimate_tokens(&summary.text) <= SUMMARY_BUDGET_TOKENS {
            break;
        }
        shown -= 1;
    }
    summary.strongest.truncate(shown);
    summary.weakest.truncate(shown);
    Ok(summary)
}

/// The summary of `platform` over the workspace's live publications.
///
/// Errors: store errors.
pub fn summary(store: &Store, platform: Platform) -> Result<PerformanceSummary, ApiError> {
    summary_of(store, platform, &super::all_publications(store)?)
}

/// The summary of `platform` over `publications` (all of the workspace's; the live
/// ones of the platform are used): the reach key's observations from the point index,
/// and the snapshot and version of the posts shown only.
fn summary_of(store: &Store, platform: Platform, publications: &[Publication]) -> Result<PerformanceSummary, ApiError> {
    let publications: Vec<Publication> = publications.iter().filter(|p| p.platform == platform && p.removed_at.is_none()).cloned().collect();
    let observations = report::load_observations(store, platform, report::default_metric(platform), &publications, &[AgeBucket::H24, AgeBucket::H72, AgeBucket::D7])?;
    let mut details = |p: &Publication, snapshot_id: &str| -> Result<Option<(Evidence, Option<u32>)>, ApiError> {
        let Some(snapshot) = store.get::<MetricSnapshot>(&crate::store::keys::child(&p.id, snapshot_id))? else { return Ok(None) };
        let length = match crate::project::versions::load(store, &p.project_id, p.version_number) {
            Ok(version) => Some(u32::try_from(version.source.chars().count()).unwrap_or(u32::MAX)),
            Err(_) => None,
        };
        Ok(Some((evidence_of(&snapshot), length)))
    };
    summarize(&SummaryInput { platform, publications: &publications, observations: &observations }, &mut details)
}

/// The summaries of `platforms` joined for the context layer ("" when the setting or
/// the policy is off, or when no platform has eligible posts).
///
/// Errors: store errors.
pub fn layer_text(store: &Store, platforms: &[Platform]) -> Result<String, ApiError> {
    if !state(store)?.enabled {
        return Ok(String::new());
    }
    // The publications once for every platform of the layer.
    let publications = super::all_publications(store)?;
    let mut parts = Vec::new();
    for platform in platforms {
        // No live post on it: its summary shows none, so its observations are not read.
        if !publications.iter().any(|p| p.platform == *platform && p.removed_at.is_none()) {
            continue;
        }
        let s = summary_of(store, *platform, &publications)?;
        if !s.text.is_empty() {
            parts.push(s.text);
        }
    }
    if parts.is_empty() {
        return Ok(String::new());
    }
    Ok(format!("# Performance history (read_performance {{platform}} reads it again)\n{}", parts.join("\n")))
}

/// The person's setting "use performance history in AI context" (a meta record; on
/// when it was never set).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextSetting {
    pub enabled: bool,
    pub updated_at: Timestamp,
}

pub const META_CONTEXT_SETTING: &[u8] = b"performance_context";

impl Record for ContextSetting {
    const KIND: Kind = Kind::Meta;
    fn key(&self) -> Vec<u8> {
        META_CONTEXT_SETTING.to_vec()
    }
}

/// Whether performance history may enter AI context, and who decides.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextState {
    /// What applies: the setting, unless the workspace policy turns it off.
    pub enabled: bool,
    /// The person's own setting (on when never set).
    pub setting: bool,
    /// True when the workspace policy turns it off (the setting is then read-only).
    pub decided_by_policy: bool,
    /// The workspace whose policy decides, and the owner who set it, when it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_workspace: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_set_by: Option<String>,
}

/// The setting and the cached policy, read offline.
///
/// Errors: store errors.
pub fn state(store: &Store) -> Result<ContextState, ApiError> {
    let setting = store.get::<ContextSetting>(META_CONTEXT_SETTING)?.is_none_or(|s| s.enabled);
    let policy = store.get::<CachedPolicy>(META_POLICY)?.filter(|c| !c.policy.performance_context);
    Ok(ContextState {
        enabled: setting && policy.is_none(),
        setting,
        decided_by_policy: policy.is_some(),
        policy_workspace: policy.as_ref().map(|c| c.workspace_name.clone()),
        policy_set_by: policy.and_then(|c| c.set_by),
    })
}

/// The refusal of a performance read while it is off, naming who turned it off.
pub fn refused(state: &ContextState) -> ApiError {
    if state.decided_by_policy {
        let owner = state.policy_set_by.clone().unwrap_or_else(|| "an owner".to_owned());
        let workspace = state.policy_workspace.clone().unwrap_or_default();
        ApiError::new(
            ErrorCode::PolicyRefused,
            format!("Performance history is not used in AI context: the policy of the workspace \"{workspace}\", set by {owner}, turns it off."),
        )
        .action("policy_performance_context", &[("owner", &owner), ("workspace", &workspace)])
    } else {
        ApiError::new(ErrorCode::PermissionDenied, "Performance history is not used in AI context: the setting \"use performance history in AI context\" is off.")
            .action("enable_performance_context", &[])
    }
}
