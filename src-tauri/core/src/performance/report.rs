//! The before/after report: publications whose version carries accepted AI changes next
//! to the same account's comparable publications without them. An association, never a
//! cause: the report says what went together and how many posts it rests on.
//!
//! Each eligible publication is measured at one age bucket (24 h, 72 h or 7 d) by the
//! first observed snapshot in `[bucket, bucket × 1.5)` that reports the chosen metric key
//! (observed values only: nothing is interpolated, a missing metric is not 0, and keys of
//! different bases are never mixed). Its outcome is a multiple of the median of the same
//! account's previous comparable posts (same platform and format, measured at the same
//! age; the last [`BASELINE_POSTS`], at least [`MIN_BASELINE`]). Boosted, unknown-traffic
//! and private posts, posts younger than the bucket and posts under the floor are left
//! out and counted. A side with fewer than [`MIN_PER_SIDE`] posts gets no number ("not
//! enough data"). Pure: the API loads the records and calls [`before_after_observed`].
//!
//! What a publication's snapshots are to the report is [`Observation`]s of one key: a
//! snapshot's id, its age and the key's value when it reports it. The store's reads
//! ([`load_observations`]) take them from the `MetricPoint` index (the key's points and
//! the snapshots' stamps), never decoding a snapshot with its raw row; [`before_after`]
//! takes them from whole snapshots (tests), with the same result. The stamps are read
//! only for publications without a point of the key in the bucket's window.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::metrics::{MetricPoint, MetricSnapshot, MetricUnit, STAMP};
use super::{Distribution, Publication, PublicationFormat, Visibility};
use crate::model::{Platform, Timestamp};

/// The previous comparable posts a baseline takes, at most.
pub const BASELINE_POSTS: usize = 10;
/// The previous comparable posts a baseline needs, at least.
pub const MIN_BASELINE: usize = 3;
/// A side with fewer posts than this says "not enough data".
pub const MIN_PER_SIDE: usize = 3;
/// A count under this is too small to compare (the research's "100 views" floor).
pub const COUNT_FLOOR: f64 = 100.0;
/// A multiple under this, just before an AI change, is an unusually weak post.
pub const WEAK_MULTIPLE: f64 = 0.5;

/// The age a publication is compared at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum AgeBucket {
    #[serde(rename = "24h")]
    H24,
    #[serde(rename = "72h")]
    H72,
    #[serde(rename = "7d")]
    D7,
}

impl AgeBucket {
    pub fn hours(self) -> f64 {
        match self {
            AgeBucket::H24 => 24.0,
            AgeBucket::H72 => 72.0,
            AgeBucket::D7 => 168.0,
        }
    }
}

/// The metric a platform's report compares by default: its reach count.
pub fn default_metric(platform: Platform) -> &'static str {
    match platform {
        Platform::Wechat => "readers",
        Platform::X | Platform::Xiaohongshu => "impressions",
        Platform::Zhihu | Platform::Douyin => "views",
    }
}

/// What the report is asked.
#[derive(Debug, Clone)]
pub struct ReportQuery {
    pub platform: Platform,
    /// One project's publications only are reported (the baselines still come from the
    /// whole account, so a project's posts are compared with the account's usual).
    pub project_id: Option<String>,
    pub metric: String,
    pub bucket: AgeBucket,
    /// Also boosted and unknown-traffic posts (left out by default).
    pub include_boosted: bool,
}

/// Why a publication is not in the comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Exclusion {
    /// Boosted or unknown traffic.
    Boosted,
    Private,
    /// No snapshot in the bucket's window yet (too young, or not observed then).
    NoSnapshotAtAge,
    /// The snapshot at that age does not report the metric.
    MetricNotReported,
    /// Under the floor (a count under 100).
    UnderFloor,
    /// Fewer than three earlier comparable posts of the account to compare with.
    NoBaseline,
}

/// One publication measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReportPoint {
    pub publication_id: String,
    pub project_id: String,
    pub title: String,
    pub published_at: Timestamp,
    pub account_id: Option<String>,
    pub format: PublicationFormat,
    /// Its version carries accepted AI changes.
    pub ai: bool,
    /// The snapshot measured (evidence) and its age in hours.
    pub snapshot_id: String,
    pub age_hours: f64,
    pub value: f64,
    /// The median of the account's previous comparable posts at the same age.
    pub baseline: Option<f64>,
    /// `value / baseline`.
    pub multiple: Option<f64>,
    /// Excluded, and why (a point with a baseline can still be excluded for the floor).
    pub excluded: Option<Exclusion>,
}

/// One side of the comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReportSide {
    pub n: u32,
    /// Absent when `n` is under [`MIN_PER_SIDE`]: not enough data.
    pub median_multiple: Option<f64>,
    pub p30: Option<f64>,
    pub p70: Option<f64>,
}

/// The report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BeforeAfterReport {
    pub platform: Platform,
    pub project_id: Option<String>,
    pub metric: String,
    pub unit: Option<MetricUnit>,
    pub bucket: AgeBucket,
    pub with_ai: ReportSide,
    pub without_ai: ReportSide,
    /// True when both sides have enough posts to show a number.
    pub enough_data: bool,
    /// Publications left out, by reason.
    pub excluded: BTreeMap<Exclusion, u32>,
    /// Posts with AI changes that came right after an unusually weak post of the same
    /// account (multiple under 0.5): their rise may be regression to the mean.
    pub after_weak_post: u32,
    /// Every measured publication, oldest first: the account's level over time (each
    /// point's baseline) is visible from them.
    pub points: Vec<ReportPoint>,
}

/// A measured post of a comparable group: its value and its multiple (when it had a
/// baseline).
type Measured = (f64, Option<f64>);

/// The value at `q` (0–1) of sorted `values`, by linear interpolation between ranks
/// (of the observed multiples; nothing is interpolated in time).
pub fn quantile(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = q * (sorted.len() - 1) as f64;
    let (lo, hi) = (rank.floor() as usize, rank.ceil() as usize);
    Some(sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo as f64))
}

fn side(mut multiples: Vec<f64>) -> ReportSide {
    multiples.sort_by(f64::total_cmp);
    let n = u32::try_from(multiples.len()).unwrap_or(u32::MAX);
    if multiples.len() < MIN_PER_SIDE {
        return ReportSide { n, median_multiple: None, p30: None, p70: None };
    }
    ReportSide { n, median_multiple: quantile(&multiples, 0.5), p30: quantile(&multiples, 0.3), p70: quantile(&multiples, 0.7) }
}

/// One snapshot of a publication as the report reads it: which one, at what age, and
/// the asked key's value when the snapshot reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct Observation {
    pub snapshot_id: String,
    pub age_hours: f64,
    pub value: Option<f64>,
}

/// Observations of one key, by publication id.
pub type Observations = std::collections::HashMap<String, Vec<Observation>>;

/// The observations of `metric` in whole snapshots, by publication id.
pub fn observations_of(snapshots: &BTreeMap<String, Vec<MetricSnapshot>>, metric: &str) -> Observations {
    snapshots
        .iter()
        .map(|(id, list)| {
            let seen = list.iter().map(|s| Observation { snapshot_id: s.id.clone(), age_hours: s.age_hours, value: s.metrics.get(metric).map(|m| m.value) }).collect();
            (id.clone(), seen)
        })
        .collect()
}

/// The observations of `metric` on `platform` that the report at `buckets` needs, from
/// the `MetricPoint` index: the key's points, and for a live publication of
/// `publications` without a point in a bucket's window its snapshots' stamps (was it
/// observed then at all?). Where a point is in the window the stamps change nothing:
/// the first observation reporting the key is a point.
///
/// Errors: store errors.
pub fn load_observations(
    store: &crate::store::Store,
    platform: Platform,
    metric: &str,
    publications: &[Publication],
    buckets: &[AgeBucket],
) -> Result<Observations, crate::store::StoreError> {
    let mut observed: Observations = std::collections::HashMap::new();
    for point in store.scan::<MetricPoint>(&MetricPoint::prefix(platform, metric))? {
        observed.entry(point.publication_id).or_default().push(Observation { snapshot_id: point.snapshot_id, age_hours: point.age_hours, value: Some(point.value) });
    }
    let stamps = MetricPoint::prefix(platform, STAMP);
    for p in publications.iter().filter(|p| p.platform == platform && p.removed_at.is_none()) {
        let seen = observed.get(&p.id);
        let unmeasured = buckets.iter().any(|b| !seen.is_some_and(|list| list.iter().any(|o| o.age_hours >= b.hours() && o.age_hours < b.hours() * 1.5)));
        if !unmeasured {
            continue;
        }
        let mut range = stamps.clone();
        range.extend_from_slice(&crate::store::keys::project_prefix(&p.id));
        let list = observed.entry(p.id.clone()).or_default();
        for stamp in store.scan::<MetricPoint>(&range)? {
            if !list.iter().any(|o| o.snapshot_id == stamp.snapshot_id) {
                list.push(Observation { snapshot_id: stamp.snapshot_id, age_hours: stamp.age_hours, value: None });
            }
        }
    }
    Ok(observed)
}

/// The first observation in the bucket's window reporting the key (by age, then id),
/// its value; or why there is none: nothing observed in the window, or not reported.
fn at_age(observed: &[Observation], bucket: AgeBucket) -> Result<(&Observation, f64), Exclusion> {
    let (from, to) = (bucket.hours(), bucket.hours() * 1.5);
    let mut in_window: Vec<&Observation> = observed.iter().filter(|s| s.age_hours >= from && s.age_hours < to).collect();
    in_window.sort_by(|a, b| a.age_hours.total_cmp(&b.age_hours).then_with(|| a.snapshot_id.cmp(&b.snapshot_id)));
    if in_window.is_empty() {
        return Err(Exclusion::NoSnapshotAtAge);
    }
    in_window.into_iter().find_map(|s| s.value.map(|v| (s, v))).ok_or(Exclusion::MetricNotReported)
}

/// The before/after report over `publications` (live ones of the platform are used) and
/// their snapshots by publication id.
pub fn before_after(query: &ReportQuery, publications: &[Publication], snapshots: &BTreeMap<String, Vec<MetricSnapshot>>) -> BeforeAfterReport {
    before_after_observed(query, publications, &observations_of(snapshots, &query.metric))
}

/// The before/after report over `publications` (live ones of the platform are used) and
/// their observations of the query's key by publication id.
pub fn before_after_observed(query: &ReportQuery, publications: &[Publication], observed: &Observations) -> BeforeAfterReport {
    let unit = super::metrics::metric_key(&query.metric).map(|k| k.unit);
    let mut live: Vec<&Publication> = publications.iter().filter(|p| p.platform == query.platform && p.removed_at.is_none()).collect();
    live.sort_by(|a, b| a.published_at.cmp(&b.published_at).then_with(|| a.id.cmp(&b.id)));
    let mut excluded: BTreeMap<Exclusion, u32> = BTreeMap::new();
    // Measured posts of each comparable group (account, format), oldest first, with
    // their values: the baselines of later posts.
    let mut history: std::collections::HashMap<(Option<String>, PublicationFormat), Vec<Measured>> = std::collections::HashMap::new();
    let mut points = Vec::new();
    let mut after_weak_post = 0;
    let empty = Vec::new();
    for p in live {
        let reported = query.project_id.as_deref().is_none_or(|id| p.project_id == id);
        let gate = if !query.include_boosted && matches!(p.distribution, Distribution::Boosted | Distribution::Unknown) {
            Some(Exclusion::Boosted)
        } else if p.visibility == Visibility::Private {
            Some(Exclusion::Private)
        } else {
            None
        };
        let measured = at_age(observed.get(&p.id).unwrap_or(&empty), query.bucket);
        let exclusion = gate.or(measured.as_ref().err().copied());
        let Ok((snapshot, value)) = measured else {
            if reported {
                *excluded.entry(exclusion.unwrap_or(Exclusion::NoSnapshotAtAge)).or_default() += 1;
            }
            continue;
        };
        let under_floor = unit == Some(MetricUnit::Count) && value < COUNT_FLOOR;
        let group = history.entry((p.account_id.clone(), p.format)).or_default();
        let mut previous: Vec<f64> = group.iter().rev().take(BASELINE_POSTS).map(|(v, _)| *v).collect();
        previous.sort_by(f64::total_cmp);
        let baseline = (previous.len() >= MIN_BASELINE).then(|| quantile(&previous, 0.5)).flatten().filter(|b| *b > 0.0);
        let multiple = baseline.map(|b| value / b);
        let exclusion = gate.or(under_floor.then_some(Exclusion::UnderFloor)).or(baseline.is_none().then_some(Exclusion::NoBaseline));
        let ai = !p.ai_changes.is_empty();
        if reported && ai && exclusion.is_none() && group.last().and_then(|(_, m)| *m).is_some_and(|m| m < WEAK_MULTIPLE) {
            after_weak_post += 1;
        }
        // Gated posts (boosted, private, tiny) do not set the account's usual level.
        if gate.is_none() && !under_floor {
            group.push((value, multiple));
        }
        if !reported {
            continue;
        }
        if let Some(reason) = exclusion {
            *excluded.entry(reason).or_default() += 1;
        }
        points.push(ReportPoint {
            publication_id: p.id.clone(),
            project_id: p.project_id.clone(),
            title: p.title.clone(),
            published_at: p.published_at,
            account_id: p.account_id.clone(),
            format: p.format,
            ai,
            snapshot_id: snapshot.snapshot_id.clone(),
            age_hours: snapshot.age_hours,
            value,
            baseline,
            multiple,
            excluded: exclusion,
        });
    }
    let compared = |ai: bool| points.iter().filter(|x| x.ai == ai && x.excluded.is_none()).filter_map(|x| x.multiple).collect::<Vec<f64>>();
    let with_ai = side(compared(true));
    let without_ai = side(compared(false));
    let enough_data = with_ai.median_multiple.is_some() && without_ai.median_multiple.is_some();
    BeforeAfterReport {
        platform: query.platform,
        project_id: query.project_id.clone(),
        metric: query.metric.clone(),
        unit,
        bucket: query.bucket,
        with_ai,
        without_ai,
        enough_data,
        excluded,
        after_weak_post,
        points,
    }
}
