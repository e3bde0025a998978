//! The wire form of usage records, quotas, budgets, the usage report and the cap's
//! standing (see [`super`]).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::ErrorCode;
use super::MonthSpent;
use crate::model::Timestamp;
/// How a model call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum UsageOutcome {
    Ok,
    Error { code: ErrorCode },
}

/// One model call. Never holds a prompt, a reply or a key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct UsageRecord {
    pub id: String,
    pub at: Timestamp,
    pub profile_id: String,
    pub profile_name: String,
    /// The model that answered (as the server reported it) or was asked.
    pub model: String,
    /// What the call was for: `test_connection`, `drafting`, `optimize`, ...
    pub purpose: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub run_id: Option<String>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// The server reported no usage; the counts are estimates.
    pub tokens_estimated: bool,
    /// In the currency of the profile's prices; absent when it has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub cost: Option<f64>,
    pub latency_ms: u64,
    pub attempts: u32,
    pub outcome: UsageOutcome,
}

/// A project's limits on model use, across all its sessions (and their compactions).
/// `None` is no limit. A model call of a session whose project's budget is spent is
/// not sent; the person raises the budget to go on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ProjectBudget {
    pub project_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub token_budget: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub cost_budget: Option<f64>,
}

/// What a set of sessions spent: tokens (input + output) and cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Spent {
    pub tokens: u64,
    pub cost: f64,
}

/// Workspace limits on model use. `None` is no limit.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Quotas {
    /// Input plus output tokens per UTC day.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub daily_tokens: Option<u64>,
    /// Cost per UTC calendar month, in the profiles' currency.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub monthly_cost: Option<f64>,
}

/// Totals of a group of calls.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct UsageTotals {
    pub calls: u64,
    pub failed_calls: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost: f64,
    /// Calls whose profile had prices; with none, `cost` means "unknown", not free.
    #[serde(default)]
    pub priced_calls: u64,
    /// Some calls' tokens are estimates.
    pub estimated: bool,
    pub latency_ms_total: u64,
}

/// One row of a report: a key (a day `2026-01-31`, a profile name, a purpose) and
/// its totals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct UsageRow {
    pub key: String,
    pub totals: UsageTotals,
}

/// Usage grouped three ways.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct UsageReport {
    /// Oldest day first.
    pub by_day: Vec<UsageRow>,
    pub by_profile: Vec<UsageRow>,
    pub by_purpose: Vec<UsageRow>,
    pub totals: UsageTotals,
    pub quotas: Quotas,
}

/// How near the member is to the workspace's monthly cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum CapLevel {
    /// No cap applies (no policy, or one without a cap).
    None,
    Under,
    /// At least [`NEAR_CAP`] of a cap is spent.
    Near,
    /// A cap is spent: the next model call is refused.
    Reached,
}

/// The member's standing against the workspace's monthly cap, for the AI panel's meter
/// (`usage.standing`): read from this app's cached policy and the month's running
/// total, without asking the server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CapStanding {
    /// The UTC calendar month, `2026-11`.
    pub month: String,
    pub spent: MonthSpent,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub cap_usd: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub cap_tokens: Option<u64>,
    pub level: CapLevel,
    /// The workspace whose policy sets the cap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub workspace_name: Option<String>,
    /// The owner who set the policy, and when.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub set_by: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub set_at: Option<Timestamp>,
}

impl From<&crate::usage::UsageOutcome> for UsageOutcome {
    fn from(record: &crate::usage::UsageOutcome) -> Self {
        match record {
            crate::usage::UsageOutcome::Ok => Self::Ok,
            crate::usage::UsageOutcome::Error { code } => Self::Error { code: (*code).into() },
        }
    }
}

impl From<&crate::usage::UsageRecord> for UsageRecord {
    fn from(record: &crate::usage::UsageRecord) -> Self {
        UsageRecord {
            id: record.id.clone(),
            at: record.at,
            profile_id: record.profile_id.clone(),
            profile_name: record.profile_name.clone(),
            model: record.model.clone(),
            purpose: record.purpose.clone(),
            session_id: record.session_id.clone(),
            run_id: record.run_id.clone(),
            input_tokens: record.input_tokens,
            output_tokens: record.output_tokens,
            tokens_estimated: record.tokens_estimated,
            cost: record.cost,
            latency_ms: record.latency_ms,
            attempts: record.attempts,
            outcome: (&record.outcome).into(),
        }
    }
}

impl From<&crate::usage::ProjectBudget> for ProjectBudget {
    fn from(record: &crate::usage::ProjectBudget) -> Self {
        ProjectBudget { project_id: record.project_id.clone(), token_budget: record.token_budget, cost_budget: record.cost_budget }
    }
}

impl From<&crate::usage::Spent> for Spent {
    fn from(record: &crate::usage::Spent) -> Self {
        Spent { tokens: record.tokens, cost: record.cost }
    }
}

impl From<&crate::usage::Quotas> for Quotas {
    fn from(record: &crate::usage::Quotas) -> Self {
        Quotas { daily_tokens: record.daily_tokens, monthly_cost: record.monthly_cost }
    }
}

impl From<crate::usage::Quotas> for Quotas {
    fn from(record: crate::usage::Quotas) -> Self {
        Self::from(&record)
    }
}

impl From<&crate::usage::UsageTotals> for UsageTotals {
    fn from(record: &crate::usage::UsageTotals) -> Self {
        UsageTotals {
            calls: record.calls,
            failed_calls: record.failed_calls,
            input_tokens: record.input_tokens,
            output_tokens: record.output_tokens,
            cost: record.cost,
            priced_calls: record.priced_calls,
            estimated: record.estimated,
            latency_ms_total: record.latency_ms_total,
        }
    }
}

impl From<&crate::usage::UsageRow> for UsageRow {
    fn from(record: &crate::usage::UsageRow) -> Self {
        UsageRow { key: record.key.clone(), totals: (&record.totals).into() }
    }
}

impl From<&crate::usage::UsageReport> for UsageReport {
    fn from(record: &crate::usage::UsageReport) -> Self {
        UsageReport {
            by_day: record.by_day.iter().map(Into::into).collect(),
            by_profile: record.by_profile.iter().map(Into::into).collect(),
            by_purpose: record.by_purpose.iter().map(Into::into).collect(),
            totals: (&record.totals).into(),
            quotas: (&record.quotas).into(),
        }
    }
}

impl From<crate::usage::UsageReport> for UsageReport {
    fn from(record: crate::usage::UsageReport) -> Self {
        Self::from(&record)
    }
}

impl From<&crate::policy::CapLevel> for CapLevel {
    fn from(record: &crate::policy::CapLevel) -> Self {
        match record {
            crate::policy::CapLevel::None => Self::None,
            crate::policy::CapLevel::Under => Self::Under,
            crate::policy::CapLevel::Near => Self::Near,
            crate::policy::CapLevel::Reached => Self::Reached,
        }
    }
}

impl From<&crate::policy::CapStanding> for CapStanding {
    fn from(record: &crate::policy::CapStanding) -> Self {
        CapStanding {
            month: record.month.clone(),
            spent: record.spent.into(),
            cap_usd: record.cap_usd,
            cap_tokens: record.cap_tokens,
            level: (&record.level).into(),
            workspace_name: record.workspace_name.clone(),
            set_by: record.set_by.clone(),
            set_at: record.set_at,
        }
    }
}

impl From<crate::policy::CapStanding> for CapStanding {
    fn from(record: crate::policy::CapStanding) -> Self {
        Self::from(&record)
    }
}
