//! The workspace dashboard and the export of its table or the report's (see
//! [`super`]).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::{known_metric, report, PerfReportParams};
use crate::api::dto;
use crate::api::dto::Platform;
use crate::api::projects::load as load_project;
use crate::api::{ApiError, Engine};
use crate::performance as domain;
use crate::performance::metrics;

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
pub(in crate::api) fn dashboard(engine: &Engine, params: PerfDashboardParams) -> Result<crate::performance::dashboard::Dashboard, ApiError> {
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
pub(in crate::api) fn export(engine: &Engine, params: PerfExportParams) -> Result<PerfExportResult, ApiError> {
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
    Ok(PerfExportResult { csv: crate::spreadsheet::csv_string(&header, rows).map_err(crate::problems::csv)?, n_rows, table: table.to_owned() })
}
