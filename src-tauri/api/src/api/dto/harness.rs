//! The wire form of the harness's stored sessions, "always allow" rules and
//! permission rules, with what a prompt offers to allow always (see [`super`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::model::Timestamp;
/// How far a rule reaches, from the narrowest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum AllowScope {
    /// The drafting session (or run) the rule was made in.
    Session,
    /// The project the rule was made in.
    Project,
    /// Every project of the workspace.
    Workspace,
}

/// A stored "always allow" rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AllowRule {
    /// `rul_…`.
    pub id: String,
    pub workspace_id: String,
    pub tool: String,
    pub scope: AllowScope,
    /// Input field → glob (`*` any run of characters, `\*` a star); empty: any input.
    pub pattern: BTreeMap<String, String>,
    /// Where it was made: the project and the session (or run) id.
    pub project_id: String,
    pub owner_id: String,
    /// The approval request it was made from.
    pub request_id: String,
    pub created_by: String,
    pub created_at: Timestamp,
    /// Calls it allowed, and when it last did; written with the call's decision event.
    #[serde(default)]
    pub allowed_count: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub last_allowed_at: Option<Timestamp>,
}

/// A workspace rule: `tool` is a tool name or `*`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PermissionRule {
    pub tool: String,
    pub decision: PermissionPolicy,
}

/// Limits of a session; every one can be changed per session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Limits {
    /// Model calls per user message.
    pub max_model_turns: u32,
    /// Per tool call, for tools that do not call a model.
    pub tool_timeout_ms: u64,
    /// Input plus output tokens over the whole session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub token_budget: Option<u64>,
    /// Cost over the whole session, in the profile's currency.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub cost_budget: Option<f64>,
    /// Consecutive failures of the same kind that block the turn.
    pub breaker_threshold: u32,
    /// Repeats of the same tool with the same normalized input in one turn that stop it.
    pub loop_threshold: u32,
    /// Most output tokens per model call.
    pub max_output_tokens: u32,
}

/// A drafting session on one project.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Session {
    pub id: String,
    pub project_id: String,
    pub title: String,
    /// The LLM profile id every model call of the session uses.
    pub profile_id: String,
    pub limits: Limits,
    pub archived: bool,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

impl From<&crate::harness::AllowScope> for AllowScope {
    fn from(record: &crate::harness::AllowScope) -> Self {
        match record {
            crate::harness::AllowScope::Session => Self::Session,
            crate::harness::AllowScope::Project => Self::Project,
            crate::harness::AllowScope::Workspace => Self::Workspace,
        }
    }
}

impl From<&crate::harness::AllowRule> for AllowRule {
    fn from(record: &crate::harness::AllowRule) -> Self {
        AllowRule {
            id: record.id.clone(),
            workspace_id: record.workspace_id.clone(),
            tool: record.tool.clone(),
            scope: (&record.scope).into(),
            pattern: record.pattern.clone(),
            project_id: record.project_id.clone(),
            owner_id: record.owner_id.clone(),
            request_id: record.request_id.clone(),
            created_by: record.created_by.clone(),
            created_at: record.created_at,
            allowed_count: record.allowed_count,
            last_allowed_at: record.last_allowed_at,
        }
    }
}

impl From<&crate::harness::PermissionRule> for PermissionRule {
    fn from(record: &crate::harness::PermissionRule) -> Self {
        PermissionRule { tool: record.tool.clone(), decision: (&record.decision).into() }
    }
}

impl From<&crate::harness::Limits> for Limits {
    fn from(record: &crate::harness::Limits) -> Self {
        Limits {
            max_model_turns: record.max_model_turns,
            tool_timeout_ms: record.tool_timeout_ms,
            token_budget: record.token_budget,
            cost_budget: record.cost_budget,
            breaker_threshold: record.breaker_threshold,
            loop_threshold: record.loop_threshold,
            max_output_tokens: record.max_output_tokens,
        }
    }
}

impl From<&crate::harness::Session> for Session {
    fn from(record: &crate::harness::Session) -> Self {
        Session {
            id: record.id.clone(),
            project_id: record.project_id.clone(),
            title: record.title.clone(),
            profile_id: record.profile_id.clone(),
            limits: (&record.limits).into(),
            archived: record.archived,
            created_at: record.created_at,
            updated_at: record.updated_at,
        }
    }
}

impl From<AllowScope> for crate::harness::AllowScope {
    fn from(scope: AllowScope) -> Self {
        match scope {
            AllowScope::Session => Self::Session,
            AllowScope::Project => Self::Project,
            AllowScope::Workspace => Self::Workspace,
        }
    }
}

impl From<&PermissionRule> for crate::harness::PermissionRule {
    fn from(rule: &PermissionRule) -> Self {
        Self { tool: rule.tool.clone(), decision: rule.decision.into() }
    }
}

/// What "always allow" would store for a prompt, carried by the prompt's event: the
/// tool and the pattern; the person picks the scope when answering.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AllowOffer {
    pub tool: String,
    pub pattern: BTreeMap<String, String>,
}

/// A decision, ordered from the most to the least permissive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum PermissionPolicy {
    Allow,
    Ask,
    Deny,
}

impl From<&crate::harness::allow_rule::AllowOffer> for AllowOffer {
    fn from(record: &crate::harness::allow_rule::AllowOffer) -> Self {
        AllowOffer { tool: record.tool.clone(), pattern: record.pattern.clone() }
    }
}

impl From<&crate::harness::permission::PermissionPolicy> for PermissionPolicy {
    fn from(record: &crate::harness::permission::PermissionPolicy) -> Self {
        match record {
            crate::harness::permission::PermissionPolicy::Allow => Self::Allow,
            crate::harness::permission::PermissionPolicy::Ask => Self::Ask,
            crate::harness::permission::PermissionPolicy::Deny => Self::Deny,
        }
    }
}

impl From<PermissionPolicy> for crate::harness::PermissionPolicy {
    fn from(policy: PermissionPolicy) -> Self {
        match policy {
            PermissionPolicy::Allow => Self::Allow,
            PermissionPolicy::Ask => Self::Ask,
            PermissionPolicy::Deny => Self::Deny,
        }
    }
}
