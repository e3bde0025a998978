//! The workspace policy owners set: which model providers, whether performance data
//! reaches the model, whether AI activity is shared, a monthly cap.

use serde::{Deserialize, Serialize};

use crate::Member;

/// A server that lists this in `features` keeps a workspace policy that owners set
/// (`GET /v1/policy` for every member, `PUT /v1/policy` for owners). An app talking to
/// a server without it has no policy; an older app never asks and still syncs.
pub const FEATURE_WORKSPACE_POLICY: &str = "workspacePolicy";

/// Which model providers the projects of a workspace may use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum ProviderRule {
    /// Any provider.
    Any,
    /// Only a server on the member's own computer (a loopback host).
    Local,
    /// Only these hosts (lower case, without scheme or port).
    Hosts { hosts: Vec<String> },
}

/// What owners decide for every app of the workspace. A new field must be optional
/// (`#[serde(default)]`): an older server or app reads the record without it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorkspacePolicy {
    pub providers: ProviderRule,
    /// Whether performance history (metric snapshots) may enter AI context.
    pub performance_context: bool,
    /// Each member's AI cost per UTC calendar month, in US dollars (the profiles'
    /// prices); None: no cap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub monthly_cap_usd: Option<f64>,
    /// Each member's AI tokens (input + output) per UTC calendar month; None: no cap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub monthly_cap_tokens: Option<u64>,
    /// Whether members' AI activity travels with their versions for owners to see.
    pub share_activity: bool,
}

impl Default for WorkspacePolicy {
    /// What a workspace whose owners set nothing allows: everything, nothing shared.
    fn default() -> Self {
        WorkspacePolicy { providers: ProviderRule::Any, performance_context: true, monthly_cap_usd: None, monthly_cap_tokens: None, share_activity: false }
    }
}

/// The most hosts a policy lists.
pub const MAX_POLICY_HOSTS: usize = 50;

impl WorkspacePolicy {
    /// Why the policy cannot be stored (the field and the words), or None.
    pub fn invalid(&self) -> Option<(&'static str, String)> {
        if let ProviderRule::Hosts { hosts } = &self.providers {
            if hosts.is_empty() || hosts.len() > MAX_POLICY_HOSTS {
                return Some(("providers", format!("A list of allowed hosts names 1–{MAX_POLICY_HOSTS} hosts.")));
            }
            if let Some(bad) = hosts.iter().find(|h| !host_well_formed(h)) {
                return Some(("providers", format!("\"{bad}\" is not a host name (lower-case letters, digits, dots, dashes; no scheme or port).")));
            }
        }
        if self.monthly_cap_usd.is_some_and(|cap| !(0.0..=1_000_000.0).contains(&cap)) {
            return Some(("monthlyCapUsd", "A monthly cap is 0–1,000,000 US dollars.".to_owned()));
        }
        None
    }
}

/// A host as a policy lists it: 1–253 characters of lower-case ASCII letters, digits,
/// dots, dashes (or an IPv6 address's hex digits and colons in brackets).
pub fn host_well_formed(host: &str) -> bool {
    let inner = host.strip_prefix('[').and_then(|h| h.strip_suffix(']'));
    match inner {
        Some(v6) => (1..=45).contains(&v6.len()) && v6.bytes().all(|b| (b.is_ascii_hexdigit() && !b.is_ascii_uppercase()) || b == b':' || b == b'.'),
        None => (1..=253).contains(&host.len()) && host.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.' || b == b'-'),
    }
}

/// `GET /v1/policy`: the workspace's policy and who set it (the default, with no
/// setter, until an owner sets one). `PUT /v1/policy` takes a [`WorkspacePolicy`] and
/// answers this.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyRecord {
    pub policy: WorkspacePolicy,
    /// The owner who set it last (None: never set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set_by: Option<Member>,
    /// Unix milliseconds of the last change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set_at: Option<u64>,
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_policy_reads_in_its_three_provider_forms_and_refuses_bad_hosts() {
        for (wire, rule) in [
            (json!({"kind": "any"}), ProviderRule::Any),
            (json!({"kind": "local"}), ProviderRule::Local),
            (json!({"kind": "hosts", "hosts": ["api.example.com"]}), ProviderRule::Hosts { hosts: vec!["api.example.com".into()] }),
        ] {
            let policy: WorkspacePolicy = serde_json::from_value(json!({"providers": wire, "performanceContext": false, "shareActivity": true})).unwrap();
            assert_eq!(policy.providers, rule);
            assert_eq!(policy.invalid(), None);
        }
        let hosts = |h: &[&str]| WorkspacePolicy { providers: ProviderRule::Hosts { hosts: h.iter().map(|s| s.to_string()).collect() }, ..WorkspacePolicy::default() };
        for bad in [&[][..], &["https://x.com"], &["X.com"], &["x.com:443"], &["a b"]] {
            assert!(hosts(bad).invalid().is_some(), "{bad:?}");
        }
        assert_eq!(hosts(&["127.0.0.1", "[::1]", "llm.corp"]).invalid(), None);
        let capped = WorkspacePolicy { monthly_cap_usd: Some(-1.0), ..WorkspacePolicy::default() };
        assert_eq!(capped.invalid().map(|(f, _)| f), Some("monthlyCapUsd"));
        // The default record is written without setter or time.
        let record = PolicyRecord { policy: WorkspacePolicy::default(), set_by: None, set_at: None };
        assert_eq!(serde_json::to_value(&record).unwrap(), json!({"policy": {"providers": {"kind": "any"}, "performanceContext": true, "shareActivity": false}}));
    }
}
