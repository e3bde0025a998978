//! Usage reports and workspace quotas over the API (`usage.*`).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::{ApiError, Empty, Engine};
use crate::model::Timestamp;
use crate::store::{Batch, Durability};
use crate::usage::{Quotas, UsageRecord, UsageReport};

/// A period, `[from, to)`; either bound may be left out.
#[derive(Debug, Clone, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UsageReportParams {
    #[serde(default)]
    #[ts(optional)]
    pub from: Option<Timestamp>,
    #[serde(default)]
    #[ts(optional)]
    pub to: Option<Timestamp>,
}

/// The newest calls, newest first.
#[derive(Debug, Clone, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UsageListParams {
    /// Default 100, at most 1000.
    #[serde(default)]
    #[ts(optional)]
    pub limit: Option<u32>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct UsageListResult {
    pub records: Vec<super::dto::UsageRecord>,
}

/// New quotas; an absent or null limit removes it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct QuotasSetParams {
    #[serde(default)]
    #[ts(optional)]
    pub daily_tokens: Option<u64>,
    #[serde(default)]
    #[ts(optional)]
    pub monthly_cost: Option<f64>,
}

fn quotas(engine: &Engine) -> Result<Quotas, ApiError> {
    crate::llm::quotas(engine.store())
}

pub(super) fn report(engine: &Engine, params: UsageReportParams) -> Result<UsageReport, ApiError> {
    let records = engine.store().scan::<UsageRecord>(b"")?;
    Ok(crate::usage::report(&records, params.from, params.to, quotas(engine)?))
}

pub(super) fn list(engine: &Engine, params: UsageListParams) -> Result<UsageListResult, ApiError> {
    let limit = params.limit.unwrap_or(100).clamp(1, 1000) as usize;
    let mut records = engine.store().scan::<UsageRecord>(b"")?;
    records.reverse();
    records.truncate(limit);
    Ok(UsageListResult { records: records.iter().map(Into::into).collect() })
}

/// The member's standing against the workspace's monthly cap (no network: the policy
/// last seen and this month's running total).
pub(super) fn standing(engine: &Engine, _: Empty) -> Result<crate::policy::CapStanding, ApiError> {
    Ok(crate::policy::standing_stored(engine.store(), engine.now())?)
}

pub(super) fn get_quotas(engine: &Engine, _: Empty) -> Result<Quotas, ApiError> {
    quotas(engine)
}

pub(super) fn set_quotas(engine: &Engine, params: QuotasSetParams) -> Result<Quotas, ApiError> {
    if let Some(cost) = params.monthly_cost {
        if !cost.is_finite() || cost < 0.0 {
            return Err(ApiError::validation("monthlyCost", "`monthlyCost` must be a number ≥ 0."));
        }
    }
    let _guard = engine.write_lock();
    let quotas = Quotas { daily_tokens: params.daily_tokens, monthly_cost: params.monthly_cost };
    let mut batch = Batch::new();
    batch.put(&quotas)?;
    engine.store().apply(batch, Durability::Durable)?;
    Ok(quotas)
}
