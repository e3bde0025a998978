//! Metric snapshots: append-only observations of a publication's numbers.
//!
//! Each metric keeps its value, its unit, how exact it is and the text it was read
//! from. A metric the source did not report is absent from the map: never 0. Metric
//! keys keep their basis: WeChat 阅读人数 is `readers` and 阅读次数 `views`, Zhihu 赞同 is
//! `upvotes` and 喜欢 `zhihu_likes`; numbers of different keys are never added or
//! compared. Anything without a canonical key is kept under `extra.<platform>.<name>`.

use std::collections::BTreeMap;

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};

use super::numbers::{self, Qualifier};
use super::Publication;
use crate::error::ApiError;
use crate::kernel::Kernel;
use crate::model::Timestamp;
use crate::store::{keys, Batch, Kind, Record};

/// What a metric's value counts in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum MetricUnit {
    Count,
    /// A share between 0 and 1 (12.3% is 0.123).
    Ratio,
    Seconds,
    /// Money in fen (1/100 yuan), as WeChat reports 赞赏.
    Fen,
}

/// One reported number.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MetricValue {
    pub value: f64,
    pub unit: MetricUnit,
    pub qualifier: Qualifier,
    /// The text it was read from, as written.
    pub raw: String,
}

/// A canonical metric: its key, unit and what it counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MetricKeyInfo {
    pub key: &'static str,
    pub unit: MetricUnit,
    /// What it counts, in English (the UI words it by key).
    pub basis: &'static str,
}

const fn key(key: &'static str, unit: MetricUnit, basis: &'static str) -> MetricKeyInfo {
    MetricKeyInfo { key, unit, basis }
}

/// The canonical metric keys (research §5). Different keys are different bases.
pub const METRIC_KEYS: &[MetricKeyInfo] = &[
    key("impressions", MetricUnit::Count, "times shown in feeds (曝光, 展现, X Impressions)"),
    key("views", MetricUnit::Count, "times opened or played (观看量, 播放量, Zhihu 阅读, WeChat 阅读次数)"),
    key("readers", MetricUnit::Count, "people who read (WeChat 阅读人数)"),
    key("likes", MetricUnit::Count, "likes (点赞, X Likes)"),
    key("upvotes", MetricUnit::Count, "Zhihu 赞同"),
    key("zhihu_likes", MetricUnit::Count, "Zhihu 喜欢 (not 赞同)"),
    key("wow", MetricUnit::Count, "WeChat 在看"),
    key("saves", MetricUnit::Count, "saves (收藏, X Bookmarks)"),
    key("comments", MetricUnit::Count, "comments (评论, 留言, X Replies)"),
    key("shares", MetricUnit::Count, "times shared (分享次数, X Shares)"),
    key("sharers", MetricUnit::Count, "people who shared (WeChat 分享人数)"),
    key("reposts", MetricUnit::Count, "reposts (X Reposts, Zhihu 转发)"),
    key("quotes", MetricUnit::Count, "X quote posts"),
    key("engagements", MetricUnit::Count, "X Engagements (the platform's own sum)"),
    key("follows", MetricUnit::Count, "followers gained (涨粉, 阅读后关注人数, X New follows)"),
    key("unfollows", MetricUnit::Count, "followers lost (脱粉)"),
    key("profile_visits", MetricUnit::Count, "profile visits (主页访问量)"),
    key("link_clicks", MetricUnit::Count, "link clicks (X URL Clicks, 跳转阅读原文人数)"),
    key("delivered", MetricUnit::Count, "WeChat 送达人数"),
    key("danmaku", MetricUnit::Count, "弹幕"),
    key("delivery_read_rate", MetricUnit::Ratio, "WeChat 送达阅读率"),
    key("read_completion", MetricUnit::Ratio, "share who read to the end (阅读完成率, 完读率)"),
    key("play_completion", MetricUnit::Ratio, "完播率"),
    key("play_5s", MetricUnit::Ratio, "5s完播率"),
    key("bounce_2s", MetricUnit::Ratio, "2s跳出率, 划走率"),
    key("cover_ctr", MetricUnit::Ratio, "封面点击率"),
    key("platform_engagement_rate", MetricUnit::Ratio, "the platform's own engagement rate, as reported"),
    key("avg_watch_s", MetricUnit::Seconds, "average watch time (人均观看时长, 平均播放时长)"),
    key("avg_read_s", MetricUnit::Seconds, "average read time (平均停留时长)"),
    key("tips_fen", MetricUnit::Fen, "WeChat 赞赏, in fen"),
    // An account's day (account snapshots, never a post's): followers.
    key("followers_total", MetricUnit::Count, "an account's followers at the end of the day (累积关注人数)"),
    key("followers_new", MetricUnit::Count, "an account's new followers that day (新关注人数)"),
    key("followers_lost", MetricUnit::Count, "an account's followers lost that day (取消关注人数)"),
    key("followers_net", MetricUnit::Count, "an account's net follower change that day (净增关注人数)"),
];

/// The canonical key `name`, if it is one.
pub fn metric_key(name: &str) -> Option<&'static MetricKeyInfo> {
    METRIC_KEYS.iter().find(|k| k.key == name)
}

/// What a snapshot's numbers cover.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum SnapshotWindow {
    /// Everything since publishing, as of `observed_at`.
    Cumulative,
    /// From `start` to `end`, both days included.
    Period { start: NaiveDate, end: NaiveDate },
    /// One day.
    Day { date: NaiveDate },
}

/// Where a snapshot came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum SnapshotSource {
    /// Typed by `author`.
    Manual { author: String },
    /// A row of an imported platform export: the file's SHA-256, the importer's id and
    /// version, the sheet and the row (1-based), and the row as it was.
    #[serde(rename_all = "camelCase")]
    Import { import_id: String, file_sha256: String, importer: String, importer_version: u32, sheet: Option<String>, row: u32, raw_row: Vec<(String, String)> },
    /// A platform API (not yet used).
    Api { name: String },
}

/// An observation of a publication's numbers; never changed once written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MetricSnapshot {
    pub id: String,
    pub publication_id: String,
    pub project_id: String,
    pub platform: crate::model::Platform,
    pub observed_at: Timestamp,
    /// Hours from publishing to `observed_at`.
    pub age_hours: f64,
    pub window: SnapshotWindow,
    pub source: SnapshotSource,
    /// Canonical metrics; a key that was not reported is absent, never 0.
    pub metrics: BTreeMap<String, MetricValue>,
    /// Numbers without a canonical key: `extra.<platform>.<name>`.
    pub extras: BTreeMap<String, MetricValue>,
    pub created_at: Timestamp,
}

impl Record for MetricSnapshot {
    const KIND: Kind = Kind::MetricSnapshots;
    fn key(&self) -> Vec<u8> {
        keys::child(&self.publication_id, &self.id)
    }

    /// Each canonical metric is indexed as a [`MetricPoint`], and the snapshot itself as
    /// a stamp ([`MetricPoint::stamp`]), in the same transaction.
    fn derived(&self, batch: &mut Batch) -> Result<(), crate::store::StoreError> {
        for (key, value) in &self.metrics {
            batch.put(&MetricPoint::of(self, key, value))?;
        }
        batch.put(&MetricPoint::stamp(self))?;
        batch.put(&SnapshotMetrics::of(self))?;
        Ok(())
    }
}

/// A snapshot's canonical metrics and when they were observed, without its source (an
/// import's raw row is most of a snapshot's bytes), derived from [`MetricSnapshot`] in
/// the same batch (never written alone) under the snapshot's own key. The dashboard's
/// rows read these instead of the snapshots. Short field names: a page reads thousands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SnapshotMetrics {
    #[serde(rename = "p")]
    pub publication_id: String,
    #[serde(rename = "s")]
    pub snapshot_id: String,
    #[serde(rename = "o")]
    pub observed_at: Timestamp,
    #[serde(rename = "a")]
    pub age_hours: f64,
    /// A one-day window (not a total).
    #[serde(rename = "d", default, skip_serializing_if = "std::ops::Not::not")]
    pub day_window: bool,
    /// As in the snapshot: a key that was not reported is absent.
    #[serde(rename = "m")]
    pub metrics: BTreeMap<String, MetricValue>,
}

impl SnapshotMetrics {
    /// The compact record of `snapshot`.
    pub fn of(snapshot: &MetricSnapshot) -> SnapshotMetrics {
        SnapshotMetrics {
            publication_id: snapshot.publication_id.clone(),
            snapshot_id: snapshot.id.clone(),
            observed_at: snapshot.observed_at,
            age_hours: snapshot.age_hours,
            day_window: matches!(snapshot.window, SnapshotWindow::Day { .. }),
            metrics: snapshot.metrics.clone(),
        }
    }
}

impl Record for SnapshotMetrics {
    const KIND: Kind = Kind::SnapshotMetrics;
    fn key(&self) -> Vec<u8> {
        keys::child(&self.publication_id, &self.snapshot_id)
    }
}

/// Adds to `batch` the deletion of `snapshot` with everything derived from it (its
/// points, its stamp, its compact metrics).
pub fn delete_snapshot(batch: &mut Batch, snapshot: &MetricSnapshot) {
    batch.delete::<MetricSnapshot>(snapshot.key());
    batch.delete::<SnapshotMetrics>(snapshot.key());
    for key in point_keys(snapshot) {
        batch.delete::<MetricPoint>(key);
    }
}

/// A publication's compact snapshot metrics (see [`SnapshotMetrics`]).
pub fn snapshot_metrics(store: &crate::store::Store, publication_id: &str) -> Result<Vec<SnapshotMetrics>, ApiError> {
    Ok(store.scan::<SnapshotMetrics>(&super::snapshot_prefix(publication_id))?)
}

/// One canonical metric of one snapshot, derived from [`MetricSnapshot`] (never written
/// alone): `platform 0x00 metric 0x00 publication_id 0x00 snapshot_id`, so the
/// dashboard reads one platform's values of one key (for its medians and its sort)
/// without decoding whole snapshots and their raw rows. Short field names: tens of
/// thousands are read per query. A backup carries the snapshots; importing them writes
/// the points again.
///
/// Each snapshot also has a stamp: a point under the empty key ([`STAMP`], never a
/// metric key) with value 0, whatever the snapshot reports, so the before/after report
/// tells "not observed at that age" from "observed, but the metric not reported"
/// without decoding snapshots.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricPoint {
    #[serde(rename = "l")]
    pub platform: crate::model::Platform,
    #[serde(rename = "k")]
    pub metric: String,
    #[serde(rename = "p")]
    pub publication_id: String,
    #[serde(rename = "s")]
    pub snapshot_id: String,
    #[serde(rename = "o")]
    pub observed_at: Timestamp,
    #[serde(rename = "a")]
    pub age_hours: f64,
    #[serde(rename = "v")]
    pub value: f64,
    /// A one-day window (not a total).
    #[serde(rename = "d", default, skip_serializing_if = "std::ops::Not::not")]
    pub day_window: bool,
}

/// The key of snapshot stamps in the point index (see [`MetricPoint`]).
pub const STAMP: &str = "";

impl MetricPoint {
    /// The stamp of `snapshot`: its publication, id, time and age, under [`STAMP`].
    fn stamp(snapshot: &MetricSnapshot) -> MetricPoint {
        MetricPoint {
            platform: snapshot.platform,
            metric: STAMP.to_owned(),
            publication_id: snapshot.publication_id.clone(),
            snapshot_id: snapshot.id.clone(),
            observed_at: snapshot.observed_at,
            age_hours: snapshot.age_hours,
            value: 0.0,
            day_window: matches!(snapshot.window, SnapshotWindow::Day { .. }),
        }
    }

    fn of(snapshot: &MetricSnapshot, metric: &str, value: &MetricValue) -> MetricPoint {
        MetricPoint {
            platform: snapshot.platform,
            metric: metric.to_owned(),
            publication_id: snapshot.publication_id.clone(),
            snapshot_id: snapshot.id.clone(),
            observed_at: snapshot.observed_at,
            age_hours: snapshot.age_hours,
            value: value.value,
            day_window: matches!(snapshot.window, SnapshotWindow::Day { .. }),
        }
    }

    /// `platform 0x00 metric 0x00`: the prefix of one platform's points of one key.
    pub fn prefix(platform: crate::model::Platform, metric: &str) -> Vec<u8> {
        let mut key = keys::project_prefix(platform.as_str());
        key.extend(metric.bytes().filter(|b| *b != 0));
        key.push(0);
        key
    }
}

impl Record for MetricPoint {
    const KIND: Kind = Kind::MetricPoints;
    fn key(&self) -> Vec<u8> {
        let mut key = MetricPoint::prefix(self.platform, &self.metric);
        key.extend_from_slice(&keys::child(&self.publication_id, &self.snapshot_id));
        key
    }
}

/// The keys of `snapshot`'s points and its stamp (to delete them with it).
pub fn point_keys(snapshot: &MetricSnapshot) -> Vec<Vec<u8>> {
    snapshot.metrics.iter().map(|(key, value)| MetricPoint::of(snapshot, key, value).key()).chain([MetricPoint::stamp(snapshot).key()]).collect()
}

/// Meta key: the metric points (v2: with the snapshots' stamps; v3: with the snapshots'
/// compact metrics, [`SnapshotMetrics`]) were built over the snapshots written before
/// them.
const META_POINTS: &[u8] = b"metric_points_v3";

/// Writes the points of snapshots stored before the index existed, once per data folder
/// (rewriting a snapshot writes its points; the snapshot is unchanged). Called when the
/// engine opens.
pub fn index_existing(store: &crate::store::Store, now: Timestamp) -> Result<(), crate::store::StoreError> {
    store.derive_once(META_POINTS, now, |batch| {
        for snapshot in store.scan::<MetricSnapshot>(b"")? {
            batch.put(&snapshot)?;
        }
        Ok(())
    })
}

/// Longest extra name, in characters.
pub const MAX_EXTRA_NAME_CHARS: usize = 100;
/// Most metrics in one snapshot.
pub const MAX_METRICS: usize = 200;

/// Reads `raw` as a value of `unit`. `percent_scale`: a number without `%` already
/// counts in percent (the XHS `(%)` sheets, Zhihu's positive-interaction percent).
/// `Ok(None)`: not reported. Errors: VALIDATION naming `field`.
pub fn read_value(field: &str, raw: &str, unit: MetricUnit, percent_scale: bool) -> Result<Option<MetricValue>, ApiError> {
    let parsed = numbers::parse(raw).map_err(|e| {
        ApiError::validation(field, format!("`{field}`: {e}.")).problem("perf.not_a_number", &[("field", field), ("value", &e.text)]).hint(
            "number_forms",
            "Write the number as the platform shows it: 1234, 1,234, 1.2万, 3.4w, 2.5k, 10w+ (at least), or 12.3% for a rate; leave it empty when it was not reported.",
        )
    })?;
    let Some(parsed) = parsed else { return Ok(None) };
    let value = match unit {
        MetricUnit::Ratio if parsed.percent || percent_scale => parsed.value / 100.0,
        MetricUnit::Ratio if (0.0..=1.0).contains(&parsed.value) => parsed.value,
        MetricUnit::Ratio => {
            return Err(ApiError::validation(field, format!("`{field}` is a rate: write it as 12.3% or 0.123, not {raw:?}."))
                .problem("perf.rate_form", &[("field", field), ("value", raw.trim())]))
        }
        _ if parsed.percent => {
            return Err(
                ApiError::validation(field, format!("`{field}` is not a rate; {raw:?} has a % sign.")).problem("perf.not_a_rate", &[("field", field), ("value", raw.trim())])
            )
        }
        _ => parsed.value,
    };
    Ok(Some(MetricValue { value, unit, qualifier: parsed.qualifier, raw: raw.trim().to_owned() }))
}

/// Canonical metrics and platform extras, by key.
pub type MetricMaps = (BTreeMap<String, MetricValue>, BTreeMap<String, MetricValue>);

/// Metrics typed by a person: canonical keys, or `extra.<name>` (kept as a count of the
/// publication's platform). Not-reported values are left out. Errors: VALIDATION for an
/// unknown key or a value that is not a number of the key's unit.
pub fn read_manual(publication: &Publication, typed: &BTreeMap<String, String>) -> Result<MetricMaps, ApiError> {
    if typed.len() > MAX_METRICS {
        return Err(ApiError::validation("metrics", format!("At most {MAX_METRICS} metrics in one snapshot.")));
    }
    let mut metrics = BTreeMap::new();
    let mut extras = BTreeMap::new();
    for (name, raw) in typed {
        let field = format!("metrics.{name}");
        if let Some(info) = metric_key(name) {
            if let Some(value) = read_value(&field, raw, info.unit, false)? {
                metrics.insert(name.clone(), value);
            }
        } else if let Some(extra) = name.strip_prefix("extra.").map(str::trim).filter(|n| !n.is_empty() && n.chars().count() <= MAX_EXTRA_NAME_CHARS) {
            if let Some(value) = read_value(&field, raw, MetricUnit::Count, false)? {
                let extra = extra.strip_prefix(&format!("{}.", publication.platform.as_str())).unwrap_or(extra);
                extras.insert(format!("extra.{}.{extra}", publication.platform.as_str()), value);
            }
        } else {
            let known: Vec<&str> = METRIC_KEYS.iter().map(|k| k.key).collect();
            let shown: String = name.chars().take(60).collect();
            return Err(ApiError::validation(&field, format!("{shown:?} is not a metric key. Known keys: {}; or write extra.<name> for another number.", known.join(", ")))
                .problem("perf.unknown_metric", &[("key", &shown)])
                .action("list_metric_keys", &[]));
        }
    }
    Ok((metrics, extras))
}

/// A new snapshot of `publication`, added to `batch`. Errors: VALIDATION when it is
/// observed before the publication went out, or holds no number at all.
#[allow(clippy::too_many_arguments)]
pub fn stage_snapshot(
    kernel: &Kernel,
    batch: &mut Batch,
    publication: &Publication,
    observed_at: Timestamp,
    window: SnapshotWindow,
    source: SnapshotSource,
    metrics: BTreeMap<String, MetricValue>,
    extras: BTreeMap<String, MetricValue>,
) -> Result<MetricSnapshot, ApiError> {
    if metrics.is_empty() && extras.is_empty() {
        return Err(ApiError::validation("metrics", "The snapshot holds no number: every value was empty or missing.")
            .problem("perf.empty_snapshot", &[])
            .hint("enter_a_metric", "Enter at least one number the platform shows."));
    }
    let age = observed_at - publication.published_at;
    if age < chrono::Duration::zero() {
        let published = publication.published_at.to_rfc3339();
        return Err(ApiError::validation("observedAt", format!("Observed at {} is before the publication went out ({published}).", observed_at.to_rfc3339()))
            .problem("perf.observed_before_published", &[("published", &published)]));
    }
    let snapshot = MetricSnapshot {
        id: kernel.new_id("snp"),
        publication_id: publication.id.clone(),
        project_id: publication.project_id.clone(),
        platform: publication.platform,
        observed_at,
        age_hours: age.num_seconds() as f64 / 3600.0,
        window,
        source,
        metrics,
        extras,
        created_at: kernel.now(),
    };
    batch.put(&snapshot)?;
    super::sync::stage_delivery(kernel, batch, inkstone_sync_proto::PerfKind::Snapshot, &snapshot.id, Some((&snapshot.project_id, Some(&snapshot.publication_id))), None)?;
    Ok(snapshot)
}

/// A publication's snapshots, oldest first (ids sort by creation).
pub fn snapshots(store: &crate::store::Store, publication_id: &str) -> Result<Vec<MetricSnapshot>, ApiError> {
    let mut all = store.scan::<MetricSnapshot>(&super::snapshot_prefix(publication_id))?;
    all.sort_by(|a, b| a.observed_at.cmp(&b.observed_at).then_with(|| a.id.cmp(&b.id)));
    Ok(all)
}
