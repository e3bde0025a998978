//! Memory, session intent and budgets over the API: `memory.*` (workspace and project
//! items, the model's proposals waiting for the person, habits), `session.intent` /
//! `session.setIntent`, `session.setBudget`, `project.budget` / `project.setBudget`.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::dto::{Clarification, Habit, SessionIntent};
use super::{ApiError, Deleted, Engine};
use crate::memory::{HabitDismissal, MemoryItem, MemoryOrigin, MemoryScope, MemoryStatus};
use crate::store::{Batch, Durability};
use crate::usage::{ProjectBudget, Spent};

/// Where a new item applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum MemoryScopeInput {
    Workspace,
    Project,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemoryListParams {
    /// Include this project's items (the workspace's are always listed).
    #[serde(default)]
    #[ts(optional)]
    pub project_id: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct MemoryListResult {
    /// The workspace's items, then the project's; oldest first. Proposed items wait
    /// for the person and are not model-visible.
    pub items: Vec<super::dto::MemoryItem>,
    /// Habits learnt from accepted work, with where they came from.
    pub habits: Vec<Habit>,
    /// The tokens memory may take in a model call's context.
    pub budget_tokens: u64,
    /// What the confirmed items and habits take now (estimated).
    pub used_tokens: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemoryAddParams {
    pub scope: MemoryScopeInput,
    /// Required for a project item.
    #[serde(default)]
    #[ts(optional)]
    pub project_id: Option<String>,
    pub text: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemoryUpdateParams {
    pub memory_id: String,
    pub text: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemoryRef {
    pub memory_id: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HabitRef {
    pub habit_id: String,
}

pub(super) fn list(engine: &Engine, params: MemoryListParams) -> Result<MemoryListResult, ApiError> {
    let workspace = engine.workspace()?;
    let mut items = crate::memory::list(engine.store(), &workspace.id)?;
    if let Some(project_id) = &params.project_id {
        crate::project::load(engine.store(), project_id)?;
        items.extend(crate::memory::list(engine.store(), project_id)?);
    }
    let habits = crate::memory::habits(engine.store())?;
    let (lines, _) = crate::memory::for_context(engine.store(), &workspace.id, params.project_id.as_deref().unwrap_or(""), u64::MAX)?;
    let used = lines.iter().map(|l| crate::llm::estimate_tokens(l) + 2).sum::<u64>().min(crate::memory::CONTEXT_BUDGET_TOKENS);
    Ok(MemoryListResult {
        items: items.iter().map(Into::into).collect(),
        habits: habits.iter().map(Into::into).collect(),
        budget_tokens: crate::memory::CONTEXT_BUDGET_TOKENS,
        used_tokens: used,
    })
}

pub(super) fn add(engine: &Engine, params: MemoryAddParams) -> Result<super::dto::MemoryItem, ApiError> {
    let text = crate::memory::check_text(&params.text)?;
    let (scope, scope_id) = match params.scope {
        MemoryScopeInput::Workspace => (MemoryScope::Workspace, engine.workspace()?.id),
        MemoryScopeInput::Project => {
            let Some(project_id) = params.project_id else {
                return Err(ApiError::validation("projectId", "A project item names its project."));
            };
            let project = crate::project::load(engine.store(), &project_id)?;
            (MemoryScope::Project { project_id: project.id.clone() }, project.id)
        }
    };
    let now = engine.now();
    let item = MemoryItem { id: engine.new_id("mem"), scope, scope_id, text, status: MemoryStatus::Confirmed, origin: MemoryOrigin::Person, created_at: now, updated_at: now };
    let _guard = engine.write_lock();
    let mut batch = Batch::new();
    crate::memory::stage_add(&mut batch, &item)?;
    engine.store().apply(batch, Durability::Durable)?;
    Ok(item.into())
}

fn save(engine: &Engine, memory_id: &str, change: impl FnOnce(&mut MemoryItem)) -> Result<MemoryItem, ApiError> {
    let _guard = engine.write_lock();
    let mut item = crate::memory::find(engine.store(), memory_id)?;
    change(&mut item);
    item.updated_at = engine.now();
    let mut batch = Batch::new();
    batch.put(&item)?;
    engine.store().apply(batch, Durability::Durable)?;
    Ok(item)
}

/// Edits an item's text (a proposed item stays proposed).
pub(super) fn update(engine: &Engine, params: MemoryUpdateParams) -> Result<super::dto::MemoryItem, ApiError> {
    let text = crate::memory::check_text(&params.text)?;
    save(engine, &params.memory_id, |item| item.text = text).map(Into::into)
}

/// The person confirms an item the model proposed: from now on it is in the context.
pub(super) fn confirm(engine: &Engine, params: MemoryRef) -> Result<super::dto::MemoryItem, ApiError> {
    save(engine, &params.memory_id, |item| item.status = MemoryStatus::Confirmed).map(Into::into)
}

pub(super) fn delete(engine: &Engine, params: MemoryRef) -> Result<Deleted, ApiError> {
    let _guard = engine.write_lock();
    let item = crate::memory::find(engine.store(), &params.memory_id)?;
    let mut batch = Batch::new();
    batch.delete::<MemoryItem>(crate::store::Record::key(&item));
    engine.store().apply(batch, Durability::Durable)?;
    Ok(Deleted { id: item.id, deleted: true })
}

/// Removes a habit (it stays removed). Errors: NOT_FOUND for a habit not shown now.
pub(super) fn dismiss_habit(engine: &Engine, params: HabitRef) -> Result<Deleted, ApiError> {
    let _guard = engine.write_lock();
    if !crate::memory::habits(engine.store())?.iter().any(|h| h.id == params.habit_id) {
        return Err(ApiError::not_found("habit", &params.habit_id));
    }
    let mut batch = Batch::new();
    batch.put(&HabitDismissal { habit_id: params.habit_id.clone(), dismissed_at: engine.now() })?;
    engine.store().apply(batch, Durability::Durable)?;
    Ok(Deleted { id: params.habit_id, deleted: true })
}

/// A session's intent and, when generating needs it, the question to ask first.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SessionIntentView {
    pub intent: SessionIntent,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub clarification: Option<Clarification>,
    /// The text the model reads (in the pinned layer); empty when nothing is known.
    pub model_text: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionSetIntentParams {
    pub session_id: String,
    /// The whole intent as the person edited it (empty fields are cleared).
    pub intent: SessionIntent,
}

/// The longest brand, product or topic, in characters.
const MAX_INTENT_FIELD_CHARS: usize = 200;

pub(super) fn intent(engine: &Engine, params: super::SessionRef) -> Result<SessionIntentView, ApiError> {
    let session = engine.harness().load_session(&params.session_id)?;
    let (state, _) = engine.harness().session_state(&params.session_id)?;
    let records = crate::context::gather(engine.store(), &session.project_id)?;
    let workspace = engine.workspace()?;
    let extras = crate::harness::context_extras(engine.store(), &workspace.id, &records, &state.intent)?;
    Ok(SessionIntentView { intent: (&state.intent).into(), clarification: extras.clarification.as_ref().map(Into::into), model_text: extras.intent })
}

pub(super) fn set_intent(engine: &Engine, params: SessionSetIntentParams) -> Result<SessionIntentView, ApiError> {
    let session = engine.harness().load_session(&params.session_id)?;
    if session.archived {
        return Err(ApiError::validation("sessionId", "The session is archived."));
    }
    engine.harness().check_project_open(&session)?;
    let mut intent = crate::intent::SessionIntent::from(params.intent);
    for (field, value) in [("intent.brand", &mut intent.brand), ("intent.product", &mut intent.product), ("intent.topic", &mut intent.topic)] {
        *value = match value.take() {
            Some(text) if text.trim().is_empty() => None,
            Some(text) => Some(crate::error::required_text(field, &text, MAX_INTENT_FIELD_CHARS)?),
            None => None,
        };
    }
    if intent.length.is_some_and(|l| l.value == 0) {
        return Err(ApiError::validation("intent.length.value", "A length is at least 1."));
    }
    let mut platforms = Vec::new();
    for platform in intent.platforms.drain(..) {
        if !platforms.contains(&platform) {
            platforms.push(platform);
        }
    }
    intent.platforms = platforms;
    engine.harness().set_intent(&params.session_id, intent)?;
    self::intent(engine, super::SessionRef { session_id: params.session_id })
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BudgetInput {
    /// Input plus output tokens; absent: no limit.
    #[serde(default)]
    #[ts(optional)]
    pub token_budget: Option<u64>,
    /// In the profile's currency; absent: no limit.
    #[serde(default)]
    #[ts(optional)]
    pub cost_budget: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionSetBudgetParams {
    pub session_id: String,
    pub budget: BudgetInput,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProjectSetBudgetParams {
    pub project_id: String,
    pub budget: BudgetInput,
}

/// A budget and what was spent against it.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct BudgetView {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub token_budget: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub cost_budget: Option<f64>,
    pub spent: super::dto::Spent,
    /// True when a limit is reached: the next model call is not sent.
    pub exceeded: bool,
}

fn check_budget(input: &BudgetInput) -> Result<(), ApiError> {
    if input.token_budget == Some(0) {
        return Err(ApiError::validation("budget.tokenBudget", "A token budget is at least 1 (or absent: no limit)."));
    }
    if input.cost_budget.is_some_and(|c| !c.is_finite() || c <= 0.0) {
        return Err(ApiError::validation("budget.costBudget", "A cost budget is a number above 0 (or absent: no limit)."));
    }
    Ok(())
}

fn project_sessions(engine: &Engine, project_id: &str) -> Result<Vec<String>, ApiError> {
    Ok(engine.store().scan::<crate::harness::Session>(b"")?.into_iter().filter(|s| s.project_id == project_id).map(|s| s.id).collect())
}

fn spent(engine: &Engine, sessions: &[String]) -> Result<Spent, ApiError> {
    let records = engine.store().scan::<crate::usage::UsageRecord>(b"")?;
    Ok(crate::usage::spent_by(&records, sessions))
}

/// A session's budget and spend (what the turn loop counts: the session's drafting
/// calls).
pub(super) fn session_budget(engine: &Engine, params: super::SessionRef) -> Result<BudgetView, ApiError> {
    let session = engine.harness().load_session(&params.session_id)?;
    let (state, _) = engine.harness().session_state(&params.session_id)?;
    let tokens = state.input_tokens + state.output_tokens;
    let profile = engine.llm_profile(&session.profile_id).ok();
    let cost = profile.and_then(|p| crate::usage::cost(p.input_price_per_mtok, p.output_price_per_mtok, state.input_tokens, state.output_tokens)).unwrap_or(0.0);
    let spent = Spent { tokens, cost };
    let exceeded = crate::usage::budget_exceeded("session", session.limits.token_budget, session.limits.cost_budget, spent).is_some();
    Ok(BudgetView { token_budget: session.limits.token_budget, cost_budget: session.limits.cost_budget, spent: (&spent).into(), exceeded })
}

/// Sets (raises, lowers or removes) a session's budgets.
pub(super) fn set_session_budget(engine: &Engine, params: SessionSetBudgetParams) -> Result<BudgetView, ApiError> {
    check_budget(&params.budget)?;
    {
        let _guard = engine.write_lock();
        let mut session = engine.harness().load_session(&params.session_id)?;
        session.limits.token_budget = params.budget.token_budget;
        session.limits.cost_budget = params.budget.cost_budget;
        session.updated_at = engine.now();
        let mut batch = Batch::new();
        batch.put(&session)?;
        engine.store().apply(batch, Durability::Durable)?;
    }
    session_budget(engine, super::SessionRef { session_id: params.session_id })
}

pub(super) fn project_budget(engine: &Engine, params: super::ProjectRef) -> Result<BudgetView, ApiError> {
    let project = crate::project::load(engine.store(), &params.project_id)?;
    let budget = engine.store().get::<ProjectBudget>(project.id.as_bytes())?.unwrap_or_default();
    let spent = spent(engine, &project_sessions(engine, &project.id)?)?;
    let exceeded = crate::usage::budget_exceeded("project", budget.token_budget, budget.cost_budget, spent).is_some();
    Ok(BudgetView { token_budget: budget.token_budget, cost_budget: budget.cost_budget, spent: (&spent).into(), exceeded })
}

/// Sets (raises, lowers or removes) a project's budgets.
pub(super) fn set_project_budget(engine: &Engine, params: ProjectSetBudgetParams) -> Result<BudgetView, ApiError> {
    check_budget(&params.budget)?;
    let project = crate::project::load(engine.store(), &params.project_id)?;
    {
        let _guard = engine.write_lock();
        let record = ProjectBudget { project_id: project.id.clone(), token_budget: params.budget.token_budget, cost_budget: params.budget.cost_budget };
        let mut batch = Batch::new();
        batch.put(&record)?;
        engine.store().apply(batch, Durability::Durable)?;
    }
    project_budget(engine, super::ProjectRef { project_id: project.id })
}
