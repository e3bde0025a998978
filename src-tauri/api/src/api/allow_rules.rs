//! "Always allow" rules over the API: `allowRule.preview` (what a prompt's "always
//! allow" would store and the past calls of the workspace it would have matched),
//! `allowRule.list`, `allowRule.narrow`, `allowRule.remove`. The rules are made by
//! answering a prompt (`session.resolveApproval` with `always`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::{ApiError, Deleted, Engine};
use crate::error::ErrorCode;
use crate::harness::allow_rule::{self, AllowRule, AllowScope};
use crate::harness::{Event, Session};
use crate::model::Timestamp;
use crate::store::{Batch, Durability};

/// How many matching calls a preview lists (the most recent); `total` counts all.
pub const PREVIEW_LIMIT: usize = 20;

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AllowRulePreviewParams {
    pub session_id: String,
    /// The pending approval request whose "always allow" is previewed.
    pub request_id: String,
    pub scope: super::dto::AllowScope,
}

/// A past call a rule would have matched: where and when, and only its pinned ids
/// (never the text of its input).
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct MatchedCall {
    pub tool: String,
    pub at: Timestamp,
    pub project_id: String,
    /// The project's title, when the project is still there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub project_title: Option<String>,
    /// The session (or run) it was made in.
    pub owner_id: String,
    pub fields: BTreeMap<String, String>,
}

/// The exact rule "always allow" would store, and how wide it is.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AllowRulePreview {
    pub tool: String,
    pub scope: super::dto::AllowScope,
    pub pattern: BTreeMap<String, String>,
    pub project_id: String,
    pub owner_id: String,
    /// The most recent matching calls of the workspace, newest first (at most
    /// [`PREVIEW_LIMIT`]).
    pub matches: Vec<MatchedCall>,
    /// Every matching call.
    pub total: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AllowRuleView {
    #[serde(flatten)]
    pub rule: super::dto::AllowRule,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub project_title: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AllowRuleListResult {
    /// Newest first.
    pub rules: Vec<AllowRuleView>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AllowRuleRef {
    pub rule_id: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AllowRuleNarrowParams {
    pub rule_id: String,
    /// A scope no wider than the rule's.
    #[serde(default)]
    #[ts(optional)]
    pub scope: Option<super::dto::AllowScope>,
    /// A pattern no wider than the rule's: its fields kept (same glob, or a glob in
    /// place of `*`), more fields allowed.
    #[serde(default)]
    #[ts(optional)]
    pub pattern: Option<BTreeMap<String, String>>,
}

fn load(engine: &Engine, rule_id: &str) -> Result<AllowRule, ApiError> {
    engine.store().get::<AllowRule>(&AllowRule::key_for(rule_id))?.ok_or_else(|| ApiError::not_found("rule", rule_id).action("list_rules", &[]))
}

fn project_title(engine: &Engine, project_id: &str) -> Result<Option<String>, ApiError> {
    Ok(engine.store().get::<crate::model::Project>(project_id.as_bytes())?.map(|p| p.title))
}

/// Every tool call the workspace's logs hold (sessions and runs), placed.
fn workspace_calls(engine: &Engine) -> Result<Vec<allow_rule::PastCall>, ApiError> {
    let workspace_id = engine.workspace()?.id;
    let sessions: BTreeMap<String, String> = engine.store().scan::<Session>(b"")?.into_iter().map(|s| (s.id, s.project_id)).collect();
    let events = engine.store().scan::<Event>(b"")?;
    Ok(allow_rule::past_calls(events.iter(), &workspace_id, |owner| sessions.get(owner).cloned()))
}

/// What "always allow" on a pending prompt would store, in `scope`, and the past calls
/// of the workspace it would have matched. Errors: NOT_FOUND (session), CONFLICT (the
/// request is not pending), VALIDATION (the tool always asks: no rule is offered).
pub(super) fn preview(engine: &Engine, params: AllowRulePreviewParams) -> Result<AllowRulePreview, ApiError> {
    let harness = engine.harness();
    let session = harness.load_session(&params.session_id)?;
    let (state, _) = harness.session_state(&params.session_id)?;
    let Some(pending) = state.pending_approval.filter(|p| p.request_id == params.request_id) else {
        return Err(
            ApiError::new(ErrorCode::Conflict, format!("Approval request {} is not pending.", params.request_id)).action("show_session", &[("session", &params.session_id)])
        );
    };
    let Some(offer) = pending.offer else {
        return Err(ApiError::new(ErrorCode::Validation, format!("`{}` always asks: it cannot be allowed always.", pending.tool)));
    };
    let rule = AllowRule {
        id: String::new(),
        workspace_id: engine.workspace()?.id,
        tool: offer.tool,
        scope: params.scope.into(),
        pattern: offer.pattern,
        project_id: session.project_id.clone(),
        owner_id: session.id.clone(),
        request_id: pending.request_id,
        created_by: String::new(),
        created_at: engine.now(),
        allowed_count: 0,
        last_allowed_at: None,
    };
    let registry = harness.harness().registry()?;
    let calls = workspace_calls(engine)?;
    let mut matched = allow_rule::would_have_matched(&rule, |name| registry.get(name).map(|t| &t.definition), &calls);
    matched.sort_by_key(|call| std::cmp::Reverse(call.at));
    let total = matched.len() as u64;
    let mut titles: BTreeMap<String, Option<String>> = BTreeMap::new();
    let mut matches = Vec::new();
    for call in matched.into_iter().take(PREVIEW_LIMIT) {
        let title = match titles.get(&call.project_id) {
            Some(title) => title.clone(),
            None => {
                let title = project_title(engine, &call.project_id)?;
                titles.insert(call.project_id.clone(), title.clone());
                title
            }
        };
        matches.push(MatchedCall {
            tool: call.tool.clone(),
            at: call.at,
            project_id: call.project_id.clone(),
            project_title: title,
            owner_id: call.owner_id.clone(),
            fields: allow_rule::shown_fields(&call.input),
        });
    }
    Ok(AllowRulePreview { tool: rule.tool, scope: (&rule.scope).into(), pattern: rule.pattern, project_id: rule.project_id, owner_id: rule.owner_id, matches, total })
}

/// Every stored rule, newest first.
pub(super) fn list(engine: &Engine, _: super::Empty) -> Result<AllowRuleListResult, ApiError> {
    let mut rules = engine.harness().allow_rules()?;
    rules.sort_by(|a, b| b.created_at.cmp(&a.created_at).then_with(|| b.id.cmp(&a.id)));
    let mut out = Vec::with_capacity(rules.len());
    for rule in rules {
        let project_title = project_title(engine, &rule.project_id)?;
        out.push(AllowRuleView { rule: (&rule).into(), project_title });
    }
    Ok(AllowRuleListResult { rules: out })
}

/// Narrows a rule: a smaller scope or a tighter pattern (never wider). Errors:
/// NOT_FOUND; VALIDATION for a wider scope or pattern, or nothing given (nothing
/// changes).
pub(super) fn narrow(engine: &Engine, params: AllowRuleNarrowParams) -> Result<AllowRuleView, ApiError> {
    let _guard = engine.write_lock();
    let rule = load(engine, &params.rule_id)?;
    if params.scope.is_none() && params.pattern.is_none() {
        return Err(ApiError::validation("scope", "Give a narrower scope or pattern."));
    }
    let scope = params.scope.map(AllowScope::from).unwrap_or(rule.scope);
    let pattern = params.pattern.clone().unwrap_or_else(|| rule.pattern.clone());
    for (field, glob) in &pattern {
        if field.trim().is_empty() || field.len() > 64 || glob.len() > 500 {
            return Err(ApiError::validation("pattern", "A pattern names input fields (up to 64 characters) with globs of up to 500."));
        }
    }
    if !allow_rule::is_narrowing(&rule, scope, &pattern) {
        return Err(ApiError::validation(
            if scope > rule.scope { "scope" } else { "pattern" },
            "A rule can only be narrowed: a scope no wider than its own, and every field of its pattern kept, no wider.",
        ));
    }
    let narrowed = AllowRule { scope, pattern, ..rule };
    let mut batch = Batch::new();
    batch.put(&narrowed)?;
    engine.store().apply(batch, Durability::Durable)?;
    let project_title = project_title(engine, &narrowed.project_id)?;
    Ok(AllowRuleView { rule: (&narrowed).into(), project_title })
}

/// Removes a rule: its tool asks again. Errors: NOT_FOUND.
pub(super) fn remove(engine: &Engine, params: AllowRuleRef) -> Result<Deleted, ApiError> {
    let _guard = engine.write_lock();
    let rule = load(engine, &params.rule_id)?;
    let mut batch = Batch::new();
    batch.delete::<AllowRule>(AllowRule::key_for(&rule.id));
    engine.store().apply(batch, Durability::Durable)?;
    Ok(Deleted { id: rule.id, deleted: true })
}
