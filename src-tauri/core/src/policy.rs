//! The workspace policy as this app last saw it, and the check every model call
//! passes first.
//!
//! Owners set the policy on the workspace server (`PUT /v1/policy`); `sync` fetches it
//! whenever it talks to a server that lists the `workspacePolicy` feature and keeps the
//! last one here (a meta record, carried by backups). Enforcement needs no network: an
//! app offline keeps to the policy it last saw; an app whose server lacks the feature
//! (or that was never connected) has no policy and is not limited by one.
//!
//! [`check`] is pure: `llm::Runtime` loads its inputs and calls it before a request is
//! built, so a refused call sends nothing (no byte reaches the provider) and leaves no
//! usage record. A refusal is `POLICY_REFUSED` with an action naming the policy and the
//! owner who set it.

use chrono::Datelike;
use serde::{Deserialize, Serialize};

use crate::error::{ApiError, ErrorCode};
use crate::model::Timestamp;
use crate::store::{Kind, Record};
use crate::usage::UsageRecord;

/// Which model providers the projects of the workspace may use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Policy {
    pub providers: ProviderRule,
    /// Whether performance history may enter AI context.
    pub performance_context: bool,
    /// Each member's AI cost per UTC calendar month (US dollars, at the profiles' prices).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub monthly_cap_usd: Option<f64>,
    /// Each member's AI tokens (input + output) per UTC calendar month.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub monthly_cap_tokens: Option<u64>,
    /// Whether members' AI activity travels to the server for owners to see.
    pub share_activity: bool,
}

impl Default for Policy {
    fn default() -> Self {
        Policy::from(inkstone_sync_proto::WorkspacePolicy::default())
    }
}

impl From<inkstone_sync_proto::WorkspacePolicy> for Policy {
    fn from(wire: inkstone_sync_proto::WorkspacePolicy) -> Self {
        let providers = match wire.providers {
            inkstone_sync_proto::ProviderRule::Any => ProviderRule::Any,
            inkstone_sync_proto::ProviderRule::Local => ProviderRule::Local,
            inkstone_sync_proto::ProviderRule::Hosts { hosts } => ProviderRule::Hosts { hosts },
        };
        Policy {
            providers,
            performance_context: wire.performance_context,
            monthly_cap_usd: wire.monthly_cap_usd,
            monthly_cap_tokens: wire.monthly_cap_tokens,
            share_activity: wire.share_activity,
        }
    }
}

impl From<Policy> for inkstone_sync_proto::WorkspacePolicy {
    fn from(policy: Policy) -> Self {
        let providers = match policy.providers {
            ProviderRule::Any => inkstone_sync_proto::ProviderRule::Any,
            ProviderRule::Local => inkstone_sync_proto::ProviderRule::Local,
            ProviderRule::Hosts { hosts } => inkstone_sync_proto::ProviderRule::Hosts { hosts },
        };
        inkstone_sync_proto::WorkspacePolicy {
            providers,
            performance_context: policy.performance_context,
            monthly_cap_usd: policy.monthly_cap_usd,
            monthly_cap_tokens: policy.monthly_cap_tokens,
            share_activity: policy.share_activity,
        }
    }
}

/// The policy as this app last fetched it (a meta record): what it enforces, online
/// or not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CachedPolicy {
    /// The server's id of the workspace it belongs to.
    pub workspace_id: String,
    pub workspace_name: String,
    pub policy: Policy,
    /// The owner who set it last (None: never set, the defaults).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set_by: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set_at: Option<Timestamp>,
    /// When this app last read it from the server.
    pub fetched_at: Timestamp,
}

pub const META_POLICY: &[u8] = b"workspace_policy";

impl Record for CachedPolicy {
    const KIND: Kind = Kind::Meta;
    fn key(&self) -> Vec<u8> {
        META_POLICY.to_vec()
    }
}

/// The provider a call would reach: its host (lower case, no port) and whether it is
/// this computer.
#[derive(Debug, Clone, Copy)]
pub struct Destination<'a> {
    pub host: &'a str,
    pub loopback: bool,
}

/// Why the policy refuses a call.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PolicyRefused {
    #[error("the workspace allows only model servers on this computer, and {host} is another machine")]
    LocalOnly { host: String },
    #[error("the workspace does not allow the model provider {host} (allowed: {allowed})")]
    HostNotAllowed { host: String, allowed: String },
    #[error("this month's AI cost cap of {cap:.2} USD per member is reached ({used:.4} used)")]
    CostCap { cap: f64, used: f64 },
    #[error("this month's AI token cap of {cap} per member is reached ({used} used; this call needs about {needed} more)")]
    TokenCap { cap: u64, used: u64, needed: u64 },
}

/// What this member spent this calendar month, by the usage records of this data folder
/// (every call of this app is metered there, whatever its outcome).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MonthSpent {
    pub tokens: u64,
    pub cost_usd: f64,
}

/// The member's spend in `now`'s UTC calendar month, summed over `records`.
pub fn month_spent(records: &[UsageRecord], now: Timestamp) -> MonthSpent {
    let mut spent = MonthSpent::default();
    for record in records.iter().filter(|r| r.at.year() == now.year() && r.at.month() == now.month()) {
        spent.tokens += record.input_tokens + record.output_tokens;
        spent.cost_usd += record.cost.unwrap_or(0.0);
    }
    spent
}

impl From<&crate::usage::UsageTotal> for MonthSpent {
    fn from(total: &crate::usage::UsageTotal) -> Self {
        MonthSpent { tokens: total.tokens, cost_usd: total.cost }
    }
}

/// The member's spend in `now`'s UTC calendar month, from the running total (one read;
/// equal to [`month_spent`] over every record, which tests compare it with).
pub fn month_spent_stored(store: &crate::store::Store, now: Timestamp) -> Result<MonthSpent, crate::store::StoreError> {
    Ok(MonthSpent::from(&crate::usage::total(store, &crate::usage::month_of(now))?))
}

/// Whether the policy lets a call of about `needed_tokens` go to `to`, given what the
/// member spent this month. Pure: the caller loads the inputs and sends nothing on Err.
pub fn check(policy: &Policy, to: Destination<'_>, spent: MonthSpent, needed_tokens: u64) -> Result<(), PolicyRefused> {
    match &policy.providers {
        ProviderRule::Any => {}
        ProviderRule::Local if to.loopback => {}
        ProviderRule::Local => return Err(PolicyRefused::LocalOnly { host: to.host.to_owned() }),
        ProviderRule::Hosts { hosts } if hosts.iter().any(|h| h.trim_start_matches('[').trim_end_matches(']').eq_ignore_ascii_case(to.host)) => {}
        ProviderRule::Hosts { hosts } => return Err(PolicyRefused::HostNotAllowed { host: to.host.to_owned(), allowed: hosts.join(", ") }),
    }
    if let Some(cap) = policy.monthly_cap_usd.filter(|cap| spent.cost_usd >= *cap) {
        return Err(PolicyRefused::CostCap { cap, used: spent.cost_usd });
    }
    if let Some(cap) = policy.monthly_cap_tokens.filter(|cap| spent.tokens + needed_tokens > *cap) {
        return Err(PolicyRefused::TokenCap { cap, used: spent.tokens, needed: needed_tokens });
    }
    Ok(())
}

/// Whether the policy caps spending at all (only then are usage records read).
pub fn caps_spending(policy: &Policy) -> bool {
    policy.monthly_cap_usd.is_some() || policy.monthly_cap_tokens.is_some()
}

/// How near the member is to the workspace's monthly cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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

/// The share of a cap from which the meter warns.
pub const NEAR_CAP: f64 = 0.8;

/// The member's standing against the workspace's monthly cap, for the AI panel's meter
/// (`usage.standing`): read from this app's cached policy and the month's running
/// total, without asking the server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CapStanding {
    /// The UTC calendar month, `2026-11`.
    pub month: String,
    pub spent: MonthSpent,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cap_usd: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cap_tokens: Option<u64>,
    pub level: CapLevel,
    /// The workspace whose policy sets the cap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_name: Option<String>,
    /// The owner who set the policy, and when.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set_by: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set_at: Option<Timestamp>,
}

/// The standing of a member who spent `spent` in `month` under `cached` (None: no
/// policy). `Reached` is exactly when [`check`] refuses a call for its cost, or any call
/// for its tokens.
pub fn standing(cached: Option<&CachedPolicy>, spent: MonthSpent, month: String) -> CapStanding {
    let (cap_usd, cap_tokens) = cached.map_or((None, None), |c| (c.policy.monthly_cap_usd, c.policy.monthly_cap_tokens));
    let reached = cap_usd.is_some_and(|cap| spent.cost_usd >= cap) || cap_tokens.is_some_and(|cap| spent.tokens >= cap);
    let near = cap_usd.is_some_and(|cap| spent.cost_usd >= cap * NEAR_CAP) || cap_tokens.is_some_and(|cap| spent.tokens as f64 >= cap as f64 * NEAR_CAP);
    let level = match (cap_usd.is_some() || cap_tokens.is_some(), reached, near) {
        (false, _, _) => CapLevel::None,
        (true, true, _) => CapLevel::Reached,
        (true, false, true) => CapLevel::Near,
        (true, false, false) => CapLevel::Under,
    };
    let capped = level != CapLevel::None;
    CapStanding {
        month,
        spent,
        cap_usd,
        cap_tokens,
        level,
        workspace_name: cached.filter(|_| capped).map(|c| c.workspace_name.clone()),
        set_by: cached.filter(|_| capped).and_then(|c| c.set_by.clone()),
        set_at: cached.filter(|_| capped).and_then(|c| c.set_at),
    }
}

/// [`standing`] read from the store: the cached policy and the month's running total.
pub fn standing_stored(store: &crate::store::Store, now: Timestamp) -> Result<CapStanding, crate::store::StoreError> {
    let cached = store.get::<CachedPolicy>(META_POLICY)?;
    Ok(standing(cached.as_ref(), month_spent_stored(store, now)?, crate::usage::month_of(now)))
}

/// A refusal in the API's terms: POLICY_REFUSED, with the action naming the policy and
/// the owner who set it.
pub fn refused(error: PolicyRefused, cached: &CachedPolicy) -> ApiError {
    let owner = cached.set_by.clone().unwrap_or_else(|| "an owner".to_owned());
    let message = format!("The call was not sent: {error}. The policy of the workspace \"{}\" was set by {owner}.", cached.workspace_name);
    let (action, mut details) = match &error {
        PolicyRefused::LocalOnly { host } => ("policy_providers", serde_json::json!({ "policy": "providers", "rule": "local", "host": host })),
        PolicyRefused::HostNotAllowed { host, allowed } => ("policy_providers", serde_json::json!({ "policy": "providers", "rule": "hosts", "host": host, "allowed": allowed })),
        PolicyRefused::CostCap { cap, used } => ("policy_monthly_cap", serde_json::json!({ "policy": "monthlyCapUsd", "cap": cap, "used": used })),
        PolicyRefused::TokenCap { cap, used, needed } => ("policy_monthly_cap", serde_json::json!({ "policy": "monthlyCapTokens", "cap": cap, "used": used, "needed": needed })),
    };
    details["owner"] = serde_json::json!(owner);
    ApiError::new(ErrorCode::PolicyRefused, message).action(action, &[("owner", &owner), ("workspace", &cached.workspace_name)]).details(details)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn policy(providers: ProviderRule) -> Policy {
        Policy { providers, ..Policy::default() }
    }

    const REMOTE: Destination<'static> = Destination { host: "api.example.com", loopback: false };
    const HERE: Destination<'static> = Destination { host: "127.0.0.1", loopback: true };

    #[test]
    fn any_allows_all_local_allows_this_computer_and_hosts_allow_what_they_list() {
        let none = MonthSpent::default();
        assert_eq!(check(&policy(ProviderRule::Any), REMOTE, none, 1), Ok(()));
        assert_eq!(check(&policy(ProviderRule::Local), HERE, none, 1), Ok(()));
        assert_eq!(check(&policy(ProviderRule::Local), REMOTE, none, 1), Err(PolicyRefused::LocalOnly { host: "api.example.com".into() }));
        let listed = policy(ProviderRule::Hosts { hosts: vec!["api.example.com".into(), "[::1]".into()] });
        assert_eq!(check(&listed, REMOTE, none, 1), Ok(()));
        assert_eq!(check(&listed, Destination { host: "::1", loopback: true }, none, 1), Ok(()));
        assert!(matches!(check(&listed, HERE, none, 1), Err(PolicyRefused::HostNotAllowed { .. })), "a list names this computer too when it allows it");
        assert!(matches!(check(&listed, Destination { host: "api.example.com.evil", loopback: false }, none, 1), Err(PolicyRefused::HostNotAllowed { .. })));
    }

    #[test]
    fn a_member_at_the_cap_is_refused_and_below_it_is_not() {
        let capped = Policy { monthly_cap_usd: Some(1.0), monthly_cap_tokens: Some(1000), ..Policy::default() };
        assert_eq!(check(&capped, REMOTE, MonthSpent { tokens: 10, cost_usd: 0.99 }, 10), Ok(()));
        assert_eq!(check(&capped, REMOTE, MonthSpent { tokens: 10, cost_usd: 1.0 }, 10), Err(PolicyRefused::CostCap { cap: 1.0, used: 1.0 }));
        assert_eq!(check(&capped, REMOTE, MonthSpent { tokens: 900, cost_usd: 0.0 }, 101), Err(PolicyRefused::TokenCap { cap: 1000, used: 900, needed: 101 }));
        assert!(!caps_spending(&Policy::default()) && caps_spending(&capped));
    }

    #[test]
    fn the_standing_warns_near_the_cap_and_is_reached_exactly_when_the_check_refuses() {
        let cached = |policy: Policy| CachedPolicy {
            workspace_id: "wsp_1".into(),
            workspace_name: "团队".into(),
            policy,
            set_by: Some("Olga".into()),
            set_at: None,
            fetched_at: "2026-11-01T00:00:00Z".parse().unwrap(),
        };
        let at = |cost_usd: f64, tokens: u64| MonthSpent { tokens, cost_usd };
        assert_eq!(standing(None, at(100.0, 10), "2026-11".into()).level, CapLevel::None);
        let uncapped = cached(Policy::default());
        let shown = standing(Some(&uncapped), at(100.0, 10), "2026-11".into());
        assert_eq!((shown.level, shown.set_by), (CapLevel::None, None), "no cap, no standing to show");
        let usd = cached(Policy { monthly_cap_usd: Some(10.0), ..Policy::default() });
        for (spent, level) in [(0.0, CapLevel::Under), (7.99, CapLevel::Under), (8.0, CapLevel::Near), (9.99, CapLevel::Near), (10.0, CapLevel::Reached), (12.0, CapLevel::Reached)]
        {
            let shown = standing(Some(&usd), at(spent, 0), "2026-11".into());
            assert_eq!(shown.level, level, "{spent}");
            assert_eq!(shown.level == CapLevel::Reached, check(&usd.policy, REMOTE, at(spent, 0), 0).is_err(), "{spent}");
            assert_eq!((shown.set_by.as_deref(), shown.cap_usd), (Some("Olga"), Some(10.0)));
        }
        let tokens = cached(Policy { monthly_cap_tokens: Some(1000), ..Policy::default() });
        for (used, level) in [(799, CapLevel::Under), (800, CapLevel::Near), (999, CapLevel::Near), (1000, CapLevel::Reached)] {
            let shown = standing(Some(&tokens), at(0.0, used), "2026-11".into());
            assert_eq!(shown.level, level, "{used}");
            assert_eq!(shown.level == CapLevel::Reached, check(&tokens.policy, REMOTE, at(0.0, used), 1).is_err(), "{used}");
        }
    }

    #[test]
    fn the_default_policy_refuses_nothing() {
        assert_eq!(check(&Policy::default(), REMOTE, MonthSpent { tokens: u64::MAX / 2, cost_usd: 1e12 }, 1_000_000), Ok(()));
    }
}
