//! The workspace dashboard: every live publication with its latest metrics, filtered and
//! sorted; each platform's median of one metric over time; and when the person posts
//! (day of week × hour, counted in each publication's own time zone).
//!
//! What keeps it honest:
//! - A metric that was not reported is absent (the UI shows "—"), never 0.
//! - Nothing is summed, and numbers of different bases are never compared: a median is
//!   taken over one platform's publications of one metric key; sorting by a metric
//!   orders publications within each platform (platforms stay apart, in a fixed order),
//!   because the same key counts a different thing on each platform.
//! - A publication's latest value of a key is the newest observation reporting it in a
//!   cumulative or period snapshot (a one-day window is not a total). For the medians
//!   over time the person may instead ask for the value at an age (24 h, 72 h, 7 d:
//!   the first snapshot in `[age, age × 1.5)`, as the before/after report measures), so
//!   young and old posts are not mixed.
//!
//! Pure: the API loads the records and calls [`dashboard`].

use std::collections::{BTreeMap, HashMap};

use chrono::{Datelike, NaiveDate, Timelike};
use serde::{Deserialize, Serialize};

use super::metrics::{metric_key, MetricPoint, MetricSnapshot, MetricUnit, MetricValue, SnapshotMetrics, SnapshotWindow, METRIC_KEYS};
use super::report::{default_metric, quantile, AgeBucket};
use super::{Account, Publication, PublicationFormat};
use crate::model::{Platform, Timestamp};

/// The platforms in the order the dashboard keeps them apart.
pub const PLATFORM_ORDER: [Platform; 5] = [Platform::Wechat, Platform::Zhihu, Platform::X, Platform::Douyin, Platform::Xiaohongshu];

/// Rows of a page when the caller names no limit.
pub const DEFAULT_LIMIT: usize = 200;
/// Most rows one page returns.
pub const MAX_LIMIT: usize = 1_000;
/// Publications spanning at most this many days are charted by week, longer by month.
pub const WEEKLY_SPAN_DAYS: i64 = 26 * 7;

/// What the table is ordered by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SortKey {
    PublishedAt,
    Title,
    Platform,
    Account,
    Format,
    /// A metric key: within each platform, absent values last.
    Metric(String),
}

/// The periods the medians are taken over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Interval {
    Week,
    Month,
}

/// What the dashboard is asked. Every filter is exact; absent is any.
#[derive(Debug, Clone)]
pub struct DashboardQuery {
    pub project_id: Option<String>,
    pub platform: Option<Platform>,
    pub account_id: Option<String>,
    pub format: Option<PublicationFormat>,
    /// Published in `[from, to)`.
    pub from: Option<Timestamp>,
    pub to: Option<Timestamp>,
    pub sort: SortKey,
    pub descending: bool,
    pub offset: usize,
    /// Most rows; `None`: every row (the export).
    pub limit: Option<usize>,
    /// The medians' metric; absent: each platform's reach count.
    pub metric: Option<String>,
    /// The medians at this age; absent: each publication's latest value.
    pub age: Option<AgeBucket>,
    /// Absent: by week when the publications span at most [`WEEKLY_SPAN_DAYS`].
    pub interval: Option<Interval>,
}

/// A metric's latest value and where it was read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LatestMetric {
    #[serde(flatten)]
    pub value: MetricValue,
    pub snapshot_id: String,
    pub observed_at: Timestamp,
    pub age_hours: f64,
}

/// One publication of the table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DashboardRow {
    pub publication: Publication,
    /// The account's name, when the publication names an account.
    pub account_name: Option<String>,
    /// Each canonical metric's newest observed value; a key never reported is absent.
    pub latest: BTreeMap<String, LatestMetric>,
    pub snapshot_count: u32,
}

/// One period of a platform's medians.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MedianPoint {
    /// The period's first day (a Monday, or the 1st), in the publications' time zones.
    pub period: NaiveDate,
    /// Publications published in the period that have a value.
    pub n: u32,
    pub median: f64,
}

/// A platform's median of one metric over time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlatformMedians {
    pub platform: Platform,
    pub metric: String,
    pub unit: Option<MetricUnit>,
    /// Periods with at least one value, oldest first.
    pub points: Vec<MedianPoint>,
    /// Publications of the platform (matching the filters) without a value of the
    /// metric (not reported, or no snapshot at the age asked).
    pub without_value: u32,
}

/// Publications posted on one day of the week at one hour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PostingCell {
    /// 0 is Monday, 6 Sunday.
    pub weekday: u8,
    /// 0–23, in the publication's own time zone.
    pub hour: u8,
    pub count: u32,
}

/// The dashboard.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Dashboard {
    /// The page of the table.
    pub rows: Vec<DashboardRow>,
    /// Publications matching the filters.
    pub total: u32,
    /// Canonical metric keys any row of this page reports, in canonical order: the
    /// table's columns (every row's, for an export).
    pub metric_keys: Vec<String>,
    /// The rows are ordered by a metric within each platform (platforms are not
    /// compared).
    pub grouped_by_platform: bool,
    pub interval: Interval,
    pub age: Option<AgeBucket>,
    /// One per platform among the matching publications, in [`PLATFORM_ORDER`].
    pub medians: Vec<PlatformMedians>,
    /// Cells with at least one publication.
    pub posting_times: Vec<PostingCell>,
}

/// A publication's local time, in its own time zone (UTC when the zone is unknown).
fn local(publication: &Publication) -> chrono::NaiveDateTime {
    match publication.time_zone.parse::<chrono_tz::Tz>() {
        Ok(zone) => publication.published_at.with_timezone(&zone).naive_local(),
        Err(_) => publication.published_at.naive_utc(),
    }
}

/// Each canonical key's newest value among `snapshots` (one-day windows left out).
pub fn latest_metrics(snapshots: &[MetricSnapshot]) -> BTreeMap<String, LatestMetric> {
    let mut latest: BTreeMap<String, LatestMetric> = BTreeMap::new();
    for snapshot in snapshots {
        if matches!(snapshot.window, SnapshotWindow::Day { .. }) {
            continue;
        }
        for (key, value) in &snapshot.metrics {
            let newer = latest.get(key).is_none_or(|l| (snapshot.observed_at, &snapshot.id) >= (l.observed_at, &l.snapshot_id));
            if newer {
                latest
                    .insert(key.clone(), LatestMetric { value: value.clone(), snapshot_id: snapshot.id.clone(), observed_at: snapshot.observed_at, age_hours: snapshot.age_hours });
            }
        }
    }
    latest
}

/// What [`latest_metrics`] says of the snapshots `records` were derived from (their
/// compact metrics: see [`SnapshotMetrics`]): each canonical key's newest value.
pub fn latest_of(records: &[SnapshotMetrics]) -> BTreeMap<String, LatestMetric> {
    let mut latest: BTreeMap<String, LatestMetric> = BTreeMap::new();
    for record in records.iter().filter(|r| !r.day_window) {
        for (key, value) in &record.metrics {
            let newer = latest.get(key).is_none_or(|l| (record.observed_at, &record.snapshot_id) >= (l.observed_at, &l.snapshot_id));
            if newer {
                latest.insert(
                    key.clone(),
                    LatestMetric { value: value.clone(), snapshot_id: record.snapshot_id.clone(), observed_at: record.observed_at, age_hours: record.age_hours },
                );
            }
        }
    }
    latest
}

/// A publication's value of one key from its points: the newest observation (one-day
/// windows left out), or with `age` the first in `[age, age × 1.5)`, as the before/after
/// report measures.
fn point_value(points: &[&MetricPoint], age: Option<AgeBucket>) -> Option<f64> {
    let totals = points.iter().filter(|p| !p.day_window);
    match age {
        None => totals.max_by(|a, b| (a.observed_at, &a.snapshot_id).cmp(&(b.observed_at, &b.snapshot_id))).map(|p| p.value),
        Some(age) => {
            let (from, to) = (age.hours(), age.hours() * 1.5);
            totals
                .filter(|p| p.age_hours >= from && p.age_hours < to)
                .min_by(|a, b| a.age_hours.total_cmp(&b.age_hours).then_with(|| a.snapshot_id.cmp(&b.snapshot_id)))
                .map(|p| p.value)
        }
    }
}

/// The (platform, metric key) pairs whose points [`dashboard`] reads for `query` over
/// the platforms of `matching`: each platform's medians' key, and the sort's key.
pub fn needed_points(query: &DashboardQuery, matching: &[&Publication]) -> Vec<(Platform, String)> {
    let mut pairs = Vec::new();
    for platform in PLATFORM_ORDER.into_iter().filter(|p| matching.iter().any(|m| m.platform == *p)) {
        pairs.push((platform, query.metric.clone().unwrap_or_else(|| default_metric(platform).to_owned())));
        if let SortKey::Metric(key) = &query.sort {
            pairs.push((platform, key.clone()));
        }
    }
    pairs.sort_by(|a, b| (platform_rank(a.0), &a.1).cmp(&(platform_rank(b.0), &b.1)));
    pairs.dedup();
    pairs
}

/// The live publications `query`'s filters let through.
pub fn matching<'a>(query: &DashboardQuery, publications: &'a [Publication]) -> Vec<&'a Publication> {
    publications
        .iter()
        .filter(|p| p.removed_at.is_none())
        .filter(|p| query.project_id.as_deref().is_none_or(|id| p.project_id == id))
        .filter(|p| query.platform.is_none_or(|platform| p.platform == platform))
        .filter(|p| query.account_id.as_deref().is_none_or(|id| p.account_id.as_deref() == Some(id)))
        .filter(|p| query.format.is_none_or(|format| p.format == format))
        .filter(|p| query.from.is_none_or(|from| p.published_at >= from) && query.to.is_none_or(|to| p.published_at < to))
        .collect()
}

fn period_of(date: NaiveDate, interval: Interval) -> NaiveDate {
    match interval {
        Interval::Week => date - chrono::Duration::days(i64::from(date.weekday().num_days_from_monday())),
        Interval::Month => date.with_day(1).unwrap_or(date),
    }
}

/// A format's wire name, the order the table sorts formats in.
fn format_name(format: PublicationFormat) -> &'static str {
    match format {
        PublicationFormat::Article => "article",
        PublicationFormat::Answer => "answer",
        PublicationFormat::ImageText => "imageText",
        PublicationFormat::Video => "video",
        PublicationFormat::Thread => "thread",
        PublicationFormat::Post => "post",
        PublicationFormat::Other => "other",
    }
}

fn platform_rank(platform: Platform) -> usize {
    PLATFORM_ORDER.iter().position(|p| *p == platform).unwrap_or(PLATFORM_ORDER.len())
}

/// The dashboard over `matching` (from [`matching`]), the points of the pairs
/// [`needed_points`] names (by pair; a list may hold other publications' points too),
/// and the workspace's accounts. The rows of the page read their snapshots' compact
/// metrics through `metrics_of` (a publication id → its [`SnapshotMetrics`]), so only
/// the page's are decoded. Errors: what `metrics_of` returns.
pub fn dashboard(
    query: &DashboardQuery,
    matching: &[&Publication],
    points: &HashMap<(Platform, String), std::sync::Arc<Vec<MetricPoint>>>,
    accounts: &[Account],
    metrics_of: &mut dyn FnMut(&str) -> Result<Vec<SnapshotMetrics>, crate::error::ApiError>,
) -> Result<Dashboard, crate::error::ApiError> {
    let values = Values::index(points, matching);
    let interval = interval_for(query, matching);
    let medians = platform_medians(query, matching, &values, interval);
    let posting_times = posting_times(matching);
    let names = AccountNames(accounts.iter().map(|a| (a.id.as_str(), a.name.as_str())).collect());
    let grouped_by_platform = matches!(query.sort, SortKey::Metric(_));
    let ordered = table_order(query, matching, &values, &names);
    let total = u32::try_from(ordered.len()).unwrap_or(u32::MAX);
    let rows = page_rows(query, ordered, &names, metrics_of)?;
    let metric_keys = reported_keys(&rows);
    Ok(Dashboard { rows, total, metric_keys, grouped_by_platform, interval, age: query.age, medians, posting_times })
}

/// Each (platform, metric key) pair's points by publication, for the matching
/// publications only.
struct Values<'a>(HashMap<(Platform, &'a str), HashMap<&'a str, Vec<&'a MetricPoint>>>);

impl<'a> Values<'a> {
    fn index(points: &'a HashMap<(Platform, String), std::sync::Arc<Vec<MetricPoint>>>, matching: &[&Publication]) -> Values<'a> {
        let wanted: std::collections::HashSet<&str> = matching.iter().map(|p| p.id.as_str()).collect();
        let mut by_publication: HashMap<(Platform, &str), HashMap<&str, Vec<&MetricPoint>>> = HashMap::new();
        for ((platform, key), list) in points {
            let entry = by_publication.entry((*platform, key.as_str())).or_default();
            // The store returns a publication's points together (its id leads their keys):
            // one lookup per publication, not per point. Correct in any order.
            for run in list.chunk_by(|a, b| a.publication_id == b.publication_id) {
                let id = run[0].publication_id.as_str();
                if wanted.contains(id) {
                    entry.entry(id).or_default().extend(run.iter());
                }
            }
        }
        Values(by_publication)
    }

    /// A publication's value of `key` (see [`point_value`]); absent when not reported.
    fn of(&self, platform: Platform, key: &str, publication_id: &str, age: Option<AgeBucket>) -> Option<f64> {
        let list = self.0.get(&(platform, key)).and_then(|m| m.get(publication_id)).map_or(&[][..], Vec::as_slice);
        point_value(list, age)
    }
}

/// The workspace's account names by id.
struct AccountNames<'a>(HashMap<&'a str, &'a str>);

impl<'a> AccountNames<'a> {
    fn of(&self, p: &Publication) -> Option<&'a str> {
        p.account_id.as_deref().and_then(|id| self.0.get(id)).copied()
    }
}

/// The periods of the medians: the query's, or weeks for a short span, months for a
/// longer one.
fn interval_for(query: &DashboardQuery, matching: &[&Publication]) -> Interval {
    let span_days = match (matching.iter().map(|p| p.published_at).min(), matching.iter().map(|p| p.published_at).max()) {
        (Some(first), Some(last)) => (last - first).num_days(),
        _ => 0,
    };
    query.interval.unwrap_or(if span_days <= WEEKLY_SPAN_DAYS { Interval::Week } else { Interval::Month })
}

/// The medians over time, per platform, of one key.
fn platform_medians(query: &DashboardQuery, matching: &[&Publication], values: &Values<'_>, interval: Interval) -> Vec<PlatformMedians> {
    let mut medians = Vec::new();
    for platform in PLATFORM_ORDER {
        let of_platform: Vec<&&Publication> = matching.iter().filter(|p| p.platform == platform).collect();
        if of_platform.is_empty() {
            continue;
        }
        let metric = query.metric.clone().unwrap_or_else(|| default_metric(platform).to_owned());
        let mut by_period: BTreeMap<NaiveDate, Vec<f64>> = BTreeMap::new();
        let mut without_value = 0u32;
        for p in of_platform {
            match values.of(platform, &metric, &p.id, query.age) {
                Some(v) => by_period.entry(period_of(local(p).date(), interval)).or_default().push(v),
                None => without_value += 1,
            }
        }
        let points = by_period
            .into_iter()
            .filter_map(|(period, mut of_period)| {
                of_period.sort_by(f64::total_cmp);
                quantile(&of_period, 0.5).map(|median| MedianPoint { period, n: u32::try_from(of_period.len()).unwrap_or(u32::MAX), median })
            })
            .collect();
        medians.push(PlatformMedians { platform, unit: metric_key(&metric).map(|k| k.unit), metric, points, without_value });
    }
    medians
}

/// When the person posts, in each publication's own zone.
fn posting_times(matching: &[&Publication]) -> Vec<PostingCell> {
    let mut grid = [[0u32; 24]; 7];
    for p in matching {
        let at = local(p);
        grid[at.weekday().num_days_from_monday() as usize][at.hour() as usize] += 1;
    }
    (0..7u8)
        .flat_map(|weekday| (0..24u8).map(move |hour| (weekday, hour)))
        .filter_map(|(weekday, hour)| {
            let count = grid[weekday as usize][hour as usize];
            (count > 0).then_some(PostingCell { weekday, hour, count })
        })
        .collect()
}

/// The table's order; ties by publishing time (newest first), then id.
fn table_order<'p>(query: &DashboardQuery, matching: &[&'p Publication], values: &Values<'_>, names: &AccountNames<'_>) -> Vec<&'p Publication> {
    let mut ordered: Vec<&Publication> = matching.to_vec();
    let tie = |a: &Publication, b: &Publication| b.published_at.cmp(&a.published_at).then_with(|| a.id.cmp(&b.id));
    let directed = |o: std::cmp::Ordering| if query.descending { o.reverse() } else { o };
    match &query.sort {
        SortKey::PublishedAt => ordered.sort_by(|a, b| directed(a.published_at.cmp(&b.published_at)).then_with(|| a.id.cmp(&b.id))),
        SortKey::Title => ordered.sort_by(|a, b| directed(a.title.cmp(&b.title)).then_with(|| tie(a, b))),
        SortKey::Platform => ordered.sort_by(|a, b| directed(platform_rank(a.platform).cmp(&platform_rank(b.platform))).then_with(|| tie(a, b))),
        SortKey::Account => ordered.sort_by(|a, b| {
            // Publications without an account come last either way.
            match (names.of(a), names.of(b)) {
                (Some(x), Some(y)) => directed(x.cmp(y)),
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (None, None) => std::cmp::Ordering::Equal,
            }
            .then_with(|| tie(a, b))
        }),
        SortKey::Format => ordered.sort_by(|a, b| directed(format_name(a.format).cmp(format_name(b.format))).then_with(|| tie(a, b))),
        SortKey::Metric(key) => {
            // Each value read once, beside its publication (no lookup per comparison).
            let mut keyed: Vec<(Option<f64>, &Publication)> = ordered.iter().map(|p| (values.of(p.platform, key, &p.id, None), *p)).collect();
            keyed.sort_by(|(value_a, a), (value_b, b)| {
                platform_rank(a.platform)
                    .cmp(&platform_rank(b.platform))
                    .then_with(|| match (*value_a, *value_b) {
                        (Some(x), Some(y)) => directed(x.total_cmp(&y)),
                        // Absent is not 0: it sorts after every value, in either direction.
                        (Some(_), None) => std::cmp::Ordering::Less,
                        (None, Some(_)) => std::cmp::Ordering::Greater,
                        (None, None) => std::cmp::Ordering::Equal,
                    })
                    .then_with(|| tie(a, b))
            });
            ordered = keyed.into_iter().map(|(_, p)| p).collect();
        }
    }
    ordered
}

/// The page's rows, each with its latest metrics (read through `metrics_of`).
fn page_rows(
    query: &DashboardQuery,
    ordered: Vec<&Publication>,
    names: &AccountNames<'_>,
    metrics_of: &mut dyn FnMut(&str) -> Result<Vec<SnapshotMetrics>, crate::error::ApiError>,
) -> Result<Vec<DashboardRow>, crate::error::ApiError> {
    let mut rows = Vec::new();
    for p in ordered.into_iter().skip(query.offset).take(query.limit.unwrap_or(usize::MAX)) {
        let own = metrics_of(&p.id)?;
        rows.push(DashboardRow {
            publication: p.clone(),
            account_name: names.of(p).map(str::to_owned),
            latest: latest_of(&own),
            snapshot_count: u32::try_from(own.len()).unwrap_or(u32::MAX),
        });
    }
    Ok(rows)
}

/// The metric keys the page's rows report, in the catalogue's order (the table's columns).
fn reported_keys(rows: &[DashboardRow]) -> Vec<String> {
    let reported: std::collections::HashSet<&str> = rows.iter().flat_map(|r| r.latest.keys().map(String::as_str)).collect();
    METRIC_KEYS.iter().filter(|k| reported.contains(k.key)).map(|k| k.key.to_owned()).collect()
}
