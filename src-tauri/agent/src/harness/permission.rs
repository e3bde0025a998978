//! The permission engine: a pure function of (tool definition, normalized input hash,
//! mode, rules, recorded approvals, target version, idempotency key) → allow | ask |
//! deny. Deny beats ask beats allow; a rule can only make a decision stricter, and an
//! approval only turns an `ask` into an `allow` when it was asked in the same workspace,
//! project and owner (session or run), matches the exact tool, input hash, target
//! version and idempotency key, and has not been used by an execution yet. A person's
//! "always allow" rule ([`super::allow_rule`]) turns only the tool's own ask into an
//! allow, for a tool that offers it and a call its scope and pattern match; a workspace
//! rule that asks, a deny and plan mode still win. Nothing turns a deny into an allow.

use serde::{Deserialize, Serialize};

use super::allow_rule::{self, AllowRule, CallPlace};
use super::event::Mode;
use super::log::ApprovalRecord;
use super::tools::ToolDefinition;
use super::Owner;

/// A decision, ordered from the most to the least permissive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum PermissionPolicy {
    Allow,
    Ask,
    Deny,
}

/// A workspace rule: `tool` is a tool name or `*`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PermissionRule {
    pub tool: String,
    pub decision: PermissionPolicy,
}

/// What the engine decided and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// `approval`: the request id of the approval that allowed it, which running the
    /// call uses up; `rule`: the id of the "always allow" rule that allowed it, whose
    /// count the call's decision event updates.
    Allow { reason: String, approval: Option<String>, rule: Option<String> },
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
    /// The normalized input (what "always allow" patterns match).
    pub input: &'a serde_json::Value,
    pub input_hash: &'a str,
    pub target_version: Option<u64>,
    pub idempotency_key: &'a str,
    pub workspace_id: &'a str,
    pub project_id: &'a str,
    pub owner: &'a Owner,
}

/// Decides one tool call.
pub fn decide(tool: &ToolDefinition, call: CallFacts<'_>, mode: Mode, rules: &[PermissionRule], approvals: &[ApprovalRecord], allow_rules: &[AllowRule]) -> Decision {
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
        PermissionPolicy::Allow => Decision::Allow { reason: format!("`{}` is allowed by {source}.", tool.name), approval: None, rule: None },
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
            let place = CallPlace { workspace_id: call.workspace_id, project_id: call.project_id, owner_id: call.owner.id() };
            // A workspace rule that asks (or denies) is never loosened by a person's
            // standing rule, even where the tool's own policy asks as well.
            let rule_asks = rules.iter().any(|r| (r.tool == tool.name || r.tool == "*") && r.decision >= PermissionPolicy::Ask);
            let standing = if rule_asks { None } else { allow_rules.iter().find(|rule| allow_rule::matches(rule, tool, call.input, place)) };
            if let Some(approval) = approved {
                Decision::Allow { reason: "approved by the user for exactly this input and target version".to_owned(), approval: Some(approval.request_id.clone()), rule: None }
            } else if let Some(rule) = standing {
                Decision::Allow {
                    reason: format!("allowed by the user's rule {} (always allow `{}` in {})", rule.id, rule.tool, rule.scope.as_str()),
                    approval: None,
                    rule: Some(rule.id.clone()),
                }
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
    use crate::harness::allow_rule::AllowScope;
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

    static INPUT: std::sync::LazyLock<serde_json::Value> = std::sync::LazyLock::new(|| serde_json::json!({}));

    fn facts() -> CallFacts<'static> {
        CallFacts { input: &INPUT, input_hash: "h1", target_version: Some(3), idempotency_key: "k1", workspace_id: "wsp_1", project_id: "prj_1", owner: &SESSION }
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
        assert_eq!(decide(&def("read_versions"), facts(), Mode::Default, &[], &[], &[]).name(), "allow");
        assert_eq!(decide(&write_tool(), facts(), Mode::Default, &[], &[], &[]).name(), "ask");
    }

    #[test]
    fn plan_mode_denies_writes_whatever_the_rules_and_approvals() {
        let allow_all = [PermissionRule { tool: "*".into(), decision: PermissionPolicy::Allow }];
        let approvals = [approval("h1", Some(3), "k1", true)];
        assert_eq!(decide(&write_tool(), facts(), Mode::Plan, &allow_all, &approvals, &[]).name(), "deny");
        assert_eq!(decide(&def("read_versions"), facts(), Mode::Plan, &[], &[], &[]).name(), "allow");
        assert_eq!(decide(&def("exit_plan_mode"), facts(), Mode::Plan, &[], &[], &[]).name(), "ask");
    }

    #[test]
    fn deny_beats_ask_beats_allow_and_rules_never_loosen() {
        let rules = [PermissionRule { tool: "write_x".into(), decision: PermissionPolicy::Allow }, PermissionRule { tool: "*".into(), decision: PermissionPolicy::Ask }];
        assert_eq!(decide(&write_tool(), facts(), Mode::Default, &rules, &[], &[]).name(), "ask", "allow rule cannot loosen ask");
        assert_eq!(decide(&def("read_versions"), facts(), Mode::Default, &rules, &[], &[]).name(), "ask", "ask beats allow");
        let deny = [PermissionRule { tool: "read_versions".into(), decision: PermissionPolicy::Deny }, rules[0].clone()];
        let approvals = [approval("h1", Some(3), "k1", true)];
        assert_eq!(decide(&def("read_versions"), facts(), Mode::Default, &deny, &approvals, &[]).name(), "deny");
    }

    #[test]
    fn an_ask_says_why_by_an_id_the_ui_words() {
        let why = |d: Decision| match d {
            Decision::Ask { reason_id, .. } => reason_id,
            other => panic!("{other:?}"),
        };
        // The tool's own policy, a workspace rule, a write whose policy allowed it.
        assert_eq!(why(decide(&write_tool(), facts(), Mode::Default, &[], &[], &[])), "policy");
        let ask_reads = [PermissionRule { tool: "read_versions".into(), decision: PermissionPolicy::Ask }];
        assert_eq!(why(decide(&def("read_versions"), facts(), Mode::Default, &ask_reads, &[], &[])), "rule");
        let mut allowed_write = write_tool();
        allowed_write.permission = PermissionPolicy::Allow;
        assert_eq!(why(decide(&allowed_write, facts(), Mode::Default, &[], &[], &[])), "write");
    }

    #[test]
    fn approvals_bind_to_input_version_and_key() {
        let exact = [approval("h1", Some(3), "k1", true)];
        assert_eq!(decide(&write_tool(), facts(), Mode::Default, &[], &exact, &[]).name(), "allow");
        for other in [approval("h2", Some(3), "k1", true), approval("h1", Some(4), "k1", true), approval("h1", Some(3), "k2", true), approval("h1", Some(3), "k1", false)] {
            assert_eq!(decide(&write_tool(), facts(), Mode::Default, &[], &[other], &[]).name(), "ask");
        }
    }

    #[test]
    fn approvals_bind_to_workspace_project_and_owner_and_are_used_once() {
        let exact = approval("h1", Some(3), "k1", true);
        assert_eq!(
            decide(&write_tool(), facts(), Mode::Default, &[], std::slice::from_ref(&exact), &[]),
            Decision::Allow { reason: "approved by the user for exactly this input and target version".into(), approval: Some("apr_1".into()), rule: None }
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
            assert_eq!(decide(&write_tool(), facts(), Mode::Default, &[], std::slice::from_ref(&other), &[]).name(), "ask", "{other:?}");
        }
    }

    fn rule(tool: &str, scope: AllowScope, pattern: &[(&str, &str)]) -> AllowRule {
        AllowRule {
            id: "rul_1".into(),
            workspace_id: "wsp_1".into(),
            tool: tool.into(),
            scope,
            pattern: pattern.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect(),
            project_id: "prj_1".into(),
            owner_id: "ses_1".into(),
            request_id: "apr_1".into(),
            created_by: "me".into(),
            created_at: chrono::DateTime::from_timestamp_millis(0).unwrap(),
            allowed_count: 0,
            last_allowed_at: None,
        }
    }

    #[test]
    fn an_always_allow_rule_turns_only_the_tools_own_ask_into_allow() {
        let input = serde_json::json!({"proposalId": "prp_1", "itemId": "i1"});
        let call = CallFacts { input: &input, ..facts() };
        let resolve = def("resolve_checklist_item");
        let allow = [rule("resolve_checklist_item", AllowScope::Project, &[("proposalId", "prp_1")])];
        assert_eq!(
            decide(&resolve, call, Mode::Default, &[], &[], &allow),
            Decision::Allow { reason: "allowed by the user's rule rul_1 (always allow `resolve_checklist_item` in project)".into(), approval: None, rule: Some("rul_1".into()) }
        );
        // Another proposal, plan mode, a workspace rule that asks or denies: no.
        let other = serde_json::json!({"proposalId": "prp_2", "itemId": "i1"});
        assert_eq!(decide(&resolve, CallFacts { input: &other, ..facts() }, Mode::Default, &[], &[], &allow).name(), "ask");
        assert_eq!(decide(&resolve, call, Mode::Plan, &[], &[], &allow).name(), "deny");
        for decision in [PermissionPolicy::Ask, PermissionPolicy::Deny] {
            let rules = [PermissionRule { tool: "resolve_checklist_item".into(), decision }];
            assert_ne!(decide(&resolve, call, Mode::Default, &rules, &[], &allow).name(), "allow", "{decision:?}");
        }
    }

    #[test]
    fn always_ask_tools_never_offer_and_a_stored_rule_for_one_allows_nothing() {
        for name in ["apply_proposal", "update_project_metadata", "exit_plan_mode", "request_permission"] {
            let tool = def(name);
            assert!(!tool.offers_always_allow(), "{name}");
            assert_eq!(crate::harness::allow_rule::AllowOffer::for_call(&tool, &INPUT), None);
            let allow = [rule(name, AllowScope::Workspace, &[])];
            assert_ne!(decide(&tool, facts(), Mode::Default, &[], &[], &allow).name(), "allow", "{name}");
        }
        let mut destructive = write_tool();
        destructive.destructive = true;
        assert!(!destructive.offers_always_allow());
        let mut high = write_tool();
        high.risk = crate::harness::tools::RiskLevel::High;
        assert!(!high.offers_always_allow());
        for name in ["create_checkpoint", "create_project_comment", "resolve_checklist_item"] {
            assert!(def(name).offers_always_allow(), "{name}");
        }
        // A read allowed by its policy offers nothing: there is nothing to allow.
        assert!(!def("read_versions").offers_always_allow());
    }

    mod preview_equals_engine {
        use super::*;
        use crate::harness::allow_rule::{would_have_matched, PastCall};
        use proptest::prelude::*;

        const TOOLS: &[&str] = &["resolve_checklist_item", "create_checkpoint", "create_project_comment", "apply_proposal", "exit_plan_mode", "read_versions"];
        const IDS: &[&str] = &["1", "2", "3"];
        const VALUES: &[&str] = &["prp_1", "prp_2", "prp_12", "a*b", "x"];
        const GLOBS: &[&str] = &["prp_1", "prp_*", "*", "*2", "a\\*b", "a*b", "x"];

        fn past_call() -> impl Strategy<Value = PastCall> {
            (0..TOOLS.len(), 0..IDS.len(), 0..IDS.len(), 0..IDS.len(), proptest::option::of(0..VALUES.len()), proptest::option::of(0..VALUES.len())).prop_map(
                |(tool, ws, prj, ses, proposal, label)| {
                    let mut input = serde_json::Map::new();
                    if let Some(v) = proposal {
                        input.insert("proposalId".into(), serde_json::Value::String(VALUES[v].into()));
                    }
                    if let Some(v) = label {
                        input.insert("label".into(), serde_json::Value::String(VALUES[v].into()));
                    }
                    PastCall {
                        tool: TOOLS[tool].into(),
                        input: serde_json::Value::Object(input),
                        workspace_id: format!("wsp_{}", IDS[ws]),
                        project_id: format!("prj_{}", IDS[prj]),
                        owner_id: format!("ses_{}", IDS[ses]),
                        at: chrono::DateTime::from_timestamp_millis(0).unwrap(),
                    }
                },
            )
        }

        fn allow_rule() -> impl Strategy<Value = AllowRule> {
            (0..TOOLS.len(), 0..3usize, proptest::option::of(0..GLOBS.len()), proptest::option::of(0..GLOBS.len()), 0..IDS.len(), 0..IDS.len()).prop_map(
                |(tool, scope, proposal, label, prj, ses)| {
                    let mut pattern: Vec<(&str, &str)> = Vec::new();
                    if let Some(g) = proposal {
                        pattern.push(("proposalId", GLOBS[g]));
                    }
                    if let Some(g) = label {
                        pattern.push(("label", GLOBS[g]));
                    }
                    AllowRule { project_id: format!("prj_{}", IDS[prj]), owner_id: format!("ses_{}", IDS[ses]), ..rule(TOOLS[tool], AllowScope::ALL[scope], &pattern) }
                },
            )
        }

        proptest! {
            /// The calls a prompt lists as "would have matched" are exactly the calls
            /// the permission engine allows with only that rule stored: each past call
            /// goes through `decide` in its own place (workspace, project, owner), and
            /// is allowed by that rule iff the preview listed it.
            #[test]
            fn would_have_matched_is_exactly_what_the_engine_allows(rule in allow_rule(), calls in proptest::collection::vec(past_call(), 0..40)) {
                let tools: Vec<ToolDefinition> = TOOLS.iter().map(|n| def(n)).collect();
                let tool_of = |name: &str| tools.iter().find(|t| t.name == name);
                let listed: Vec<*const PastCall> = would_have_matched(&rule, tool_of, &calls).into_iter().map(|c| c as *const PastCall).collect();
                let allowed: Vec<*const PastCall> = calls.iter().filter(|call| {
                    let owner = Owner::Session(call.owner_id.clone());
                    let hash = crate::harness::tools::input_hash(&call.input);
                    let facts = CallFacts { input: &call.input, input_hash: &hash, target_version: None, idempotency_key: "k", workspace_id: &call.workspace_id, project_id: &call.project_id, owner: &owner };
                    let decision = decide(tool_of(&call.tool).unwrap(), facts, Mode::Default, &[], &[], std::slice::from_ref(&rule));
                    matches!(decision, Decision::Allow { rule: Some(ref id), .. } if *id == rule.id)
                }).map(|c| c as *const PastCall).collect();
                prop_assert_eq!(listed, allowed);
            }
        }
    }
}
