//! The before/after report on accepted AI changes, the performance summary the AI
//! reads, and the setting that lets it (see [`super`]).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::api::dto;
use crate::api::dto::Platform;
use crate::api::projects::load as load_project;
use crate::api::{ApiError, Empty, Engine};
use crate::performance::metrics;
use crate::performance::{self as domain, Publication};
use crate::store::{Batch, Durability};

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
pub(in crate::api) fn report(engine: &Engine, params: PerfReportParams) -> Result<crate::performance::report::BeforeAfterReport, ApiError> {
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
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PerfSummaryParams {
    pub platform: Platform,
}

/// The performance summary of a platform, as the AI reads it (`read_performance`, the
/// context's `performance` layer): shown to the person whatever the setting says.
pub(in crate::api) fn summary(engine: &Engine, params: PerfSummaryParams) -> Result<crate::performance::context::PerformanceSummary, ApiError> {
    crate::performance::context::summary(engine.store(), params.platform.into())
}

/// Whether performance history may enter AI context, and who decides.
pub(in crate::api) fn context_setting(engine: &Engine, _: Empty) -> Result<crate::performance::context::ContextState, ApiError> {
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
pub(in crate::api) fn set_context_setting(engine: &Engine, params: PerfSetContextParams) -> Result<crate::performance::context::ContextState, ApiError> {
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
