//! The wire form of the workspace policy as this app last saw it and of what the member
//! spent this month against its caps (see [`super`]). A provider rule is also a
//! parameter (`sync.setPolicy`), so it converts both ways.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::model::Timestamp;

/// Which model providers the projects of the workspace may use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum ProviderRule {
    Any,
    /// A server on this computer only (a loopback host).
    Local,
    /// These hosts only.
    Hosts {
        hosts: Vec<String>,
    },
}

/// What the workspace's owners decided.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Policy {
    pub providers: ProviderRule,
    /// Whether performance history may enter AI context.
    pub performance_context: bool,
    /// Each member's AI cost per UTC calendar month (US dollars, at the profiles' prices).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub monthly_cap_usd: Option<f64>,
    /// Each member's AI tokens (input + output) per UTC calendar month.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub monthly_cap_tokens: Option<u64>,
    /// Whether members' AI activity travels to the server for owners to see.
    pub share_activity: bool,
}

/// The policy as this app last fetched it (a meta record): what it enforces, online
/// or not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CachedPolicy {
    /// The server's id of the workspace it belongs to.
    pub workspace_id: String,
    pub workspace_name: String,
    pub policy: Policy,
    /// The owner who set it last (None: never set, the defaults).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub set_by: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub set_at: Option<Timestamp>,
    /// When this app last read it from the server.
    pub fetched_at: Timestamp,
}

/// What this member spent this calendar month, by the usage records of this data folder
/// (every call of this app is metered there, whatever its outcome).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct MonthSpent {
    pub tokens: u64,
    pub cost_usd: f64,
}

impl From<&crate::policy::ProviderRule> for ProviderRule {
    fn from(record: &crate::policy::ProviderRule) -> Self {
        use crate::policy::ProviderRule as R;
        match record {
            R::Any => Self::Any,
            R::Local => Self::Local,
            R::Hosts { hosts } => Self::Hosts { hosts: hosts.clone() },
        }
    }
}

impl From<ProviderRule> for crate::policy::ProviderRule {
    fn from(rule: ProviderRule) -> Self {
        match rule {
            ProviderRule::Any => Self::Any,
            ProviderRule::Local => Self::Local,
            ProviderRule::Hosts { hosts } => Self::Hosts { hosts },
        }
    }
}

impl From<&crate::policy::Policy> for Policy {
    fn from(record: &crate::policy::Policy) -> Self {
        Policy {
            providers: (&record.providers).into(),
            performance_context: record.performance_context,
            monthly_cap_usd: record.monthly_cap_usd,
            monthly_cap_tokens: record.monthly_cap_tokens,
            share_activity: record.share_activity,
        }
    }
}

impl From<&crate::policy::CachedPolicy> for CachedPolicy {
    fn from(record: &crate::policy::CachedPolicy) -> Self {
        CachedPolicy {
            workspace_id: record.workspace_id.clone(),
            workspace_name: record.workspace_name.clone(),
            policy: (&record.policy).into(),
            set_by: record.set_by.clone(),
            set_at: record.set_at,
            fetched_at: record.fetched_at,
        }
    }
}

impl From<crate::policy::MonthSpent> for MonthSpent {
    fn from(record: crate::policy::MonthSpent) -> Self {
        MonthSpent { tokens: record.tokens, cost_usd: record.cost_usd }
    }
}
