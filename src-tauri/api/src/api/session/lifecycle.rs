//! A session's life: created, listed, read, archived or restored, and renamed (see
//! [`super`]).

use super::{view, LimitsInput, SessionArchiveParams, SessionCreateParams, SessionGetParams, SessionListParams, SessionListResult, SessionRenameParams, SessionView};
use crate::api::{required_text, ApiError, Engine};
use crate::harness::{self, EventBody, Limits, Session};
use crate::llm::profile::LlmProfile;
use crate::model::Project;
use crate::store::{Batch, Durability};

fn limits(input: Option<LimitsInput>) -> Result<Limits, ApiError> {
    let mut limits = Limits::default();
    let Some(input) = input else { return Ok(limits) };
    if let Some(n) = input.max_model_turns {
        if !(1..=1000).contains(&n) {
            return Err(ApiError::validation("limits.maxModelTurns", "`maxModelTurns` must be between 1 and 1000."));
        }
        limits.max_model_turns = n;
    }
    if let Some(ms) = input.tool_timeout_ms {
        if !(10..=3_600_000).contains(&ms) {
            return Err(ApiError::validation("limits.toolTimeoutMs", "`toolTimeoutMs` must be between 10 ms and one hour."));
        }
        limits.tool_timeout_ms = ms;
    }
    limits.token_budget = input.token_budget;
    if let Some(cost) = input.cost_budget {
        if !cost.is_finite() || cost < 0.0 {
            return Err(ApiError::validation("limits.costBudget", "`costBudget` must be a number ≥ 0."));
        }
        limits.cost_budget = Some(cost);
    }
    if let Some(n) = input.breaker_threshold {
        limits.breaker_threshold = n.max(1);
    }
    if let Some(n) = input.loop_threshold {
        limits.loop_threshold = n.max(2);
    }
    if let Some(n) = input.max_output_tokens {
        limits.max_output_tokens = n.max(1);
    }
    Ok(limits)
}

pub(in crate::api) fn create(engine: &Engine, params: SessionCreateParams) -> Result<SessionView, ApiError> {
    let project = engine.store().get::<Project>(params.project_id.as_bytes())?.ok_or_else(|| ApiError::not_found("project", &params.project_id))?;
    let profile: LlmProfile = match &params.profile {
        Some(name) => engine.llm_profile(name)?,
        None => engine
            .store()
            .scan::<LlmProfile>(b"")?
            .into_iter()
            .find(|p| p.is_default)
            .ok_or_else(|| ApiError::validation("profile", "There is no LLM profile to talk to.").action("add_profile", &[]))?,
    };
    let title = match &params.title {
        Some(title) => required_text("title", title, crate::api::MAX_TITLE_CHARS)?,
        None => project.title.clone(),
    };
    let limits = limits(params.limits)?;
    let now = engine.now();
    let session =
        Session { id: engine.new_id("ses"), project_id: project.id.clone(), title, profile_id: profile.id.clone(), limits, archived: false, created_at: now, updated_at: now };
    // The session record and its first event are one transaction: no session without
    // a log, no log without its session.
    engine.harness().start_session(&session, params.mode.map(Into::into).unwrap_or_default())?;
    view(engine, &session.id, false)
}

pub(in crate::api) fn list(engine: &Engine, params: SessionListParams) -> Result<SessionListResult, ApiError> {
    let include_archived = params.include_archived.unwrap_or(false);
    let mut sessions: Vec<Session> = engine
        .store()
        .scan::<Session>(b"")?
        .into_iter()
        .filter(|s| include_archived || !s.archived)
        .filter(|s| params.project_id.as_ref().is_none_or(|p| &s.project_id == p))
        .collect();
    sessions.sort_by(|a, b| b.created_at.cmp(&a.created_at).then_with(|| b.id.cmp(&a.id)));
    Ok(SessionListResult { sessions: sessions.iter().map(Into::into).collect() })
}

pub(in crate::api) fn get(engine: &Engine, params: SessionGetParams) -> Result<SessionView, ApiError> {
    view(engine, &params.session_id, params.timeline.unwrap_or(false))
}

/// Archives a session (`archived`, default true) or brings an archived one back
/// (`archived: false`). Already so: nothing changes. Errors: NOT_FOUND; CONFLICT
/// (`session.running`) archiving while a turn runs; VALIDATION
/// (`session.project_archived`) restoring a session whose project is archived.
pub(in crate::api) fn archive(engine: &Engine, params: SessionArchiveParams) -> Result<SessionView, ApiError> {
    let archived = params.archived.unwrap_or(true);
    let mut session = engine.harness().load_session(&params.session_id)?;
    if session.archived == archived {
        return view(engine, &session.id, false);
    }
    let live = engine.harness().live_session(&session.id)?;
    if archived && live.is_running() {
        return Err(ApiError::new(crate::api::ErrorCode::Conflict, "A turn of this session is running.").problem("session.running", &[]).hint("interrupt", "Interrupt it first."));
    }
    if !archived {
        let project = crate::project::load(engine.store(), &session.project_id)?;
        if project.archived {
            return Err(crate::project::archived_for_session(&project));
        }
    }
    session.archived = archived;
    session.updated_at = engine.now();
    let mut extra = Batch::new();
    extra.put(&session)?;
    let body = if archived { EventBody::SessionArchived {} } else { EventBody::SessionUnarchived {} };
    engine.harness().append_event(&live, harness::Meta::default(), body, extra, Durability::Durable)?;
    view(engine, &session.id, false)
}

/// Renames a session. The title lives on the session record only (the log and what the
/// model sees do not carry it), so a rename is a record update, allowed while a turn
/// runs and on an archived session.
pub(in crate::api) fn rename(engine: &Engine, params: SessionRenameParams) -> Result<SessionView, ApiError> {
    let title = required_text("title", &params.title, crate::api::MAX_TITLE_CHARS)?;
    {
        let _guard = engine.write_lock();
        let mut session = engine.harness().load_session(&params.session_id)?;
        if session.title != title {
            session.title = title;
            session.updated_at = engine.now();
            let mut batch = Batch::new();
            batch.put(&session)?;
            engine.store().apply(batch, Durability::Durable)?;
        }
    }
    view(engine, &params.session_id, false)
}
