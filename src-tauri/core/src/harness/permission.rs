//! The permission engine: a pure function of (tool definition, normalized input hash,
//! mode, rules, recorded approvals, target version, idempotency key) → allow | ask |
//! deny. Deny beats ask beats allow; a rule can only make a decision stricter, and an
//! approval only turns an `ask` into an `allow` when it was asked in the same workspace,
//! project and owner (session or run), matches the exact tool, input hash, target
//! version and idempotency key, and has not been used by an execution yet. Nothing
//! turns a deny into an allow.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::event::Mode;
use super::log::ApprovalRecord;
use super::tools::ToolDefinition;
use super::Owner;

/// A decision, ordered from the most to the least permissive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum PermissionPolicy {
    Allow,
    Ask,
    Deny,
}

/// A workspace rule: `tool` is a tool name or `*`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PermissionRule {
    pub tool: String,
    pub decision: PermissionPolicy,
}

/// What the engine decided and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// `approval`: the request id of the approval that allowed it, which running the
    /// call uses up.
    Allow { reason: String, approval: Option<String> },
    Ask {
        reason: String,
        /// Why it asks, for the UI to word: `rule` (a workspace rule), `policy` (the
        /// tool's own policy) or `write` (it changes content).
        reason_id: &'static str,
    },
    Deny {
        reason: String,
        /// Denied because the session is in plan mode (the call is blocked by the
        /// mode, not refused by a rule).
        plan_mode: bool,
    },
}

impl Decision {
    pub fn name(&self) -> &'static str {
        match self {
            Decision::Allow { .. } => "allow",
            Decision::Ask { .. } => "ask",
            Decision::Deny { .. } => "deny",
        }
    }
    pub fn reason(&self) -> &str {
        match self {
            Decision::Allow { reason, .. } | Decision::Ask { reason, .. } | Decision::Deny { reason, .. } => reason,
        }
    }
}

/// The call being decided.
#[derive(Debug, Clone, Copy)]
pub struct CallFacts<'a> {
    pub input_hash: &'a str,
    pub target_version: Option<u64>,
    pub idempotency_key: &'a str,
    pub workspace_id: &'a str,
    pub project_id: &'a str,
    pub owner: &'a Owner,
}

/// Decides one tool call.
pub fn decide(tool: &ToolDefinition, call: CallFacts<'_>, mode: Mode, rules: &[PermissionRule], approvals: &[ApprovalRecord]) -> Decision {
    // Plan mode: reads, proposals, validation and workflow only. Enforced here, not by
    // the prompt.
    if mode == Mode::Plan && tool.is_write() {
        return Decision::Deny { reason: format!("`{}` changes content, and the session is in plan mode (read and propose only).", tool.name), plan_mode: true };
    }
    let mut effective = tool.permission;
    let mut source = "the tool's policy".to_owned();
    let mut source_id = "policy";
    for rule in rules.iter().filter(|r| r.tool == tool.name || r.tool == "*") {
        // Rules only tighten: max over the order allow < ask < deny.
        if rule.decision > effective {
            effective = rule.decision;
            source = format!("the workspace rule for `{}`", rule.tool);
            source_id = "rule";
        }
    }
    // A tool that may change anything always asks at least (the registry refuses
    // one that would not; this keeps the decision safe on its own).
    if tool.is_write() && effective == PermissionPolicy::Allow {
        effective = PermissionPolicy::Ask;
        source = "its being a write".to_owned();
        source_id = "write";
    }
    match effective {
        PermissionPolicy::Deny => Decision::Deny { reason: format!("`{}` is denied by {source}.", tool.name), plan_mode: false },
        PermissionPolicy::Allow => Decision::Allow { reason: format!("`{}` is allowed by {source}.", tool.name), approval: None },
        PermissionPolicy::Ask => {
            let approved = approvals.iter().find(|a| {
                a.approved
                    && a.consumed_by.is_none()
                    && a.workspace_id == call.workspace_id
                    && a.project_id == call.project_id
                    && &a.owner() == call.owner
                    && a.tool == tool.name
                    && a.input_hash == call.input_hash
                    && a.target_version == call.target_version
                    && a.idempotency_key == call.idempotency_key
            });
            if let Some(approval) = approved {
                Decision::Allow { reason: "approved by the user for exactly this input and target version".to_owned(), approval: Some(approval.request_id.clone()) }
            } else {
                Decision::Ask { reason: format!("`{}` needs your approval ({source}).", tool.name), reason_id: source_id }
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::harness::tools::Capability;

    fn def(name: &str) -> ToolDefinition {
        crate::tools::builtins().into_iter().map(|(d, _)| d).find(|d| d.name == name).unwrap()
    }

    fn write_tool() -> ToolDefinition {
        let mut d = def("read_versions");
        d.name = "write_x".into();
        d.capability = Capability::Write;
        d.read_only = false;
        d.permission = PermissionPolicy::Ask;
        d
    }

    static SESSION: std::sync::LazyLock<Owner> = std::sync::LazyLock::new(|| Owner::Session("ses_1".into()));

    fn facts() -> CallFacts<'static> {
        CallFacts { input_hash: "h1", target_version: Some(3), idempotency_key: "k1", workspace_id: "wsp_1", project_id: "prj_1", owner: &SESSION }
    }

    fn approval(hash: &str, version: Option<u64>, key: &str, approved: bool) -> ApprovalRecord {
        ApprovalRecord {
            request_id: "apr_1".into(),
            session_id: "ses_1".into(),
            run_id: None,
            workspace_id: "wsp_1".into(),
            project_id: "prj_1".into(),
            consumed_by: None,
            tool: "write_x".into(),
            input_hash: hash.into(),
            target_version: version,
            idempotency_key: key.into(),
            approved,
            decided_by: "me".into(),
            decided_at: chrono::DateTime::from_timestamp_millis(0).unwrap(),
        }
    }

    #[test]
    fn reads_are_allowed_and_writes_ask() {
        assert_eq!(decide(&def("read_versions"), facts(), Mode::Default, &[], &[]).name(), "allow");
        assert_eq!(decide(&write_tool(), facts(), Mode::Default, &[], &[]).name(), "ask");
    }

    #[test]
    fn plan_mode_denies_writes_whatever_the_rules_and_approvals() {
        let allow_all = [PermissionRule { tool: "*".into(), decision: PermissionPolicy::Allow }];
        let approvals = [approval("h1", Some(3), "k1", true)];
        assert_eq!(decide(&write_tool(), facts(), Mode::Plan, &allow_all, &approvals).name(), "deny");
        assert_eq!(decide(&def("read_versions"), facts(), Mode::Plan, &[], &[]).name(), "allow");
        assert_eq!(decide(&def("exit_plan_mode"), facts(), Mode::Plan, &[], &[]).name(), "ask");
    }

    #[test]
    fn deny_beats_ask_beats_allow_and_rules_never_loosen() {
        let rules = [PermissionRule { tool: "write_x".into(), decision: PermissionPolicy::Allow }, PermissionRule { tool: "*".into(), decision: PermissionPolicy::Ask }];
        assert_eq!(decide(&write_tool(), facts(), Mode::Default, &rules, &[]).name(), "ask", "allow rule cannot loosen ask");
        assert_eq!(decide(&def("read_versions"), facts(), Mode::Default, &rules, &[]).name(), "ask", "ask beats allow");
        let deny = [PermissionRule { tool: "read_versions".into(), decision: PermissionPolicy::Deny }, rules[0].clone()];
        let approvals = [approval("h1", Some(3), "k1", true)];
        assert_eq!(decide(&def("read_versions"), facts(), Mode::Default, &deny, &approvals).name(), "deny");
    }

    #[test]
    fn an_ask_says_why_by_an_id_the_ui_words() {
        let why = |d: Decision| match d {
            Decision::Ask { reason_id, .. } => reason_id,
            other => panic!("{other:?}"),
        };
        // The tool's own policy, a workspace rule, a write whose policy allowed it.
        assert_eq!(why(decide(&write_tool(), facts(), Mode::Default, &[], &[])), "policy");
        let ask_reads = [PermissionRule { tool: "read_versions".into(), decision: PermissionPolicy::Ask }];
        assert_eq!(why(decide(&def("read_versions"), facts(), Mode::Default, &ask_reads, &[])), "rule");
        let mut allowed_write = write_tool();
        allowed_write.permission = PermissionPolicy::Allow;
        assert_eq!(why(decide(&allowed_write, facts(), Mode::Default, &[], &[])), "write");
    }

    #[test]
    fn approvals_bind_to_input_version_and_key() {
        let exact = [approval("h1", Some(3), "k1", true)];
        assert_eq!(decide(&write_tool(), facts(), Mode::Default, &[], &exact).name(), "allow");
        for other in [approval("h2", Some(3), "k1", true), approval("h1", Some(4), "k1", true), approval("h1", Some(3), "k2", true), approval("h1", Some(3), "k1", false)] {
            assert_eq!(decide(&write_tool(), facts(), Mode::Default, &[], &[other]).name(), "ask");
        }
    }

    #[test]
    fn approvals_bind_to_workspace_project_and_owner_and_are_used_once() {
        let exact = approval("h1", Some(3), "k1", true);
        assert_eq!(
            decide(&write_tool(), facts(), Mode::Default, &[], std::slice::from_ref(&exact)),
            Decision::Allow { reason: "approved by the user for exactly this input and target version".into(), approval: Some("apr_1".into()) }
        );
        let elsewhere = [
            ApprovalRecord { project_id: "prj_2".into(), ..exact.clone() },
            ApprovalRecord { workspace_id: "wsp_2".into(), ..exact.clone() },
            ApprovalRecord { session_id: "ses_2".into(), ..exact.clone() },
            ApprovalRecord { run_id: Some("ses_1".into()), session_id: String::new(), ..exact.clone() },
            ApprovalRecord { consumed_by: Some("call_1".into()), ..exact.clone() },
            // Written before approvals were scoped.
            ApprovalRecord { workspace_id: String::new(), project_id: String::new(), ..exact },
        ];
        for other in elsewhere {
            assert_eq!(decide(&write_tool(), facts(), Mode::Default, &[], std::slice::from_ref(&other)).name(), "ask", "{other:?}");
        }
    }
}
