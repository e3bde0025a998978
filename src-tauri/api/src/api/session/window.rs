//! What fills a session's context window: compaction, the person's pins, and the
//! context meter with its threshold (see [`super`]).

use super::{session_stream, timings, view, Feed};
use super::{SessionCompactParams, SessionCompactResult, SessionContextView, SessionPinParams, SessionPins, SessionRef, SessionSetCompactionParams, SessionUnpinParams};
use crate::api::{ApiError, Engine, StreamEvent};
use crate::harness::compaction::{self, Outcome};
use crate::harness::{self, Session};

pub(in crate::api) fn compact(engine: &Engine, params: SessionCompactParams, on_event: &mut dyn FnMut(StreamEvent)) -> Result<SessionCompactResult, ApiError> {
    let mut emit = session_stream(engine, &params.session_id, Feed::of(params.timeline), on_event);
    let (outcome, stats) = harness::compact_session(engine.harness(), &params.session_id, &mut emit)?;
    let session = view(engine, &params.session_id, false)?;
    let (compacted, mode, tokens_before, tokens_after) = match outcome {
        Outcome::Nothing | Outcome::Failed { .. } => (false, None, None, None),
        Outcome::Compacted { mode, tokens_before, tokens_after } => (true, Some((&mode).into()), Some(tokens_before), Some(tokens_after)),
    };
    let (state, _) = engine.harness().session_state(&params.session_id)?;
    Ok(SessionCompactResult { compacted, mode, tokens_before, tokens_after, consecutive_failures: state.compaction.consecutive_failures, session, timings: timings(&stats) })
}

/// The whole pinned layer's estimate for a session now.
fn pinned_layer_tokens(engine: &Engine, session: &Session, state: &harness::SessionState) -> Result<u64, ApiError> {
    let records = crate::context::gather(engine.store(), &session.project_id)?;
    let constraints: Vec<String> = crate::proposals::apply::constraints(engine.store(), &session.id)?.into_iter().map(|c| c.text).collect();
    let pins: Vec<String> = state.pins.iter().map(|p| p.text.clone()).collect();
    // The intent and memory ride in the pinned layer too, as in a model call.
    let extras = harness::context_extras(engine.store(), &engine.workspace()?.id, &records, &state.intent)?;
    let input = crate::context::ContextInput {
        intent: &extras.intent,
        memory: &extras.memory,
        memory_left_out: extras.memory_left_out,
        ..records.input(state.mode, &state.summary, &constraints, &pins, state.selection.as_ref())
    };
    Ok(crate::context::pinned_tokens(&input))
}

pub(in crate::api) fn pins(engine: &Engine, params: SessionRef) -> Result<SessionPins, ApiError> {
    let session = engine.harness().load_session(&params.session_id)?;
    let (state, _) = engine.harness().session_state(&params.session_id)?;
    let window = u64::from(engine.llm_profile(&session.profile_id).map(|p| p.context_window).unwrap_or(0));
    let pinned_tokens = pinned_layer_tokens(engine, &session, &state)?;
    let texts: Vec<String> = state.pins.iter().map(|p| p.text.clone()).collect();
    let pins_tokens = compaction::pins_tokens(&texts);
    let pinned_percent = (pinned_tokens * 100).checked_div(window).unwrap_or(0) as u32;
    // Without a readable profile there is no window to hold the pins against.
    let room = compaction::session_room(engine.harness(), &session, &state).ok();
    let pin_budget_tokens = room.map_or(0, |r| r.pin_budget());
    let pins_fit = room.is_none_or(|r| r.pins_over(&texts).is_none());
    Ok(SessionPins { pins: state.pins.iter().map(Into::into).collect(), pins_tokens, pinned_tokens, context_window: window, pinned_percent, pin_budget_tokens, pins_fit })
}

pub(in crate::api) fn pin(engine: &Engine, params: SessionPinParams) -> Result<SessionPins, ApiError> {
    engine.harness().pin(&params.session_id, &params.text)?;
    pins(engine, SessionRef { session_id: params.session_id })
}

pub(in crate::api) fn unpin(engine: &Engine, params: SessionUnpinParams) -> Result<SessionPins, ApiError> {
    engine.harness().load_session(&params.session_id)?;
    engine.harness().unpin(&params.session_id, &params.pin_id)?;
    pins(engine, SessionRef { session_id: params.session_id })
}

pub(in crate::api) fn context(engine: &Engine, params: SessionRef) -> Result<SessionContextView, ApiError> {
    let session = engine.harness().load_session(&params.session_id)?;
    let (state, _) = engine.harness().session_state(&params.session_id)?;
    let profile = engine.llm_profile(&session.profile_id).ok();
    let window = u64::from(profile.as_ref().map_or(0, |p| p.context_window));
    let calibration = compaction::profile_context(engine.store(), &session.profile_id)?;
    // Without a readable profile there is no request to size: zeros (the next turn
    // reports the profile's problem).
    let overhead = match &profile {
        Some(_) => Some(harness::session_overhead(engine.harness(), &session, &state)?),
        None => None,
    };
    let (system_prompt_tokens, tool_tokens, reply_reserve_tokens) = overhead.map_or((0, 0, 0), |o| (o.system_prompt_tokens, o.tool_tokens, o.reply_reserve_tokens));
    let fixed_tokens = system_prompt_tokens + tool_tokens;
    let input_budget = window.saturating_sub(reply_reserve_tokens);
    let estimated = calibration.calibrated(state.compaction.last_estimated_tokens).max(fixed_tokens);
    Ok(SessionContextView {
        context_window: window,
        estimated_tokens: estimated,
        percent: (estimated * 100).checked_div(window).unwrap_or(0) as u32,
        input_budget_tokens: input_budget,
        reply_reserve_tokens,
        fixed_tokens,
        system_prompt_tokens,
        tool_tokens,
        fixed_fits: fixed_tokens + reply_reserve_tokens <= window,
        warn_percent: compaction::WARN_PERCENT,
        threshold: (&state.compaction.threshold.or(calibration.threshold).unwrap_or_default()).into(),
        session_threshold: state.compaction.threshold.as_ref().map(Into::into),
        profile_threshold: calibration.threshold.as_ref().map(Into::into),
        calibration_ratio: calibration.ratio,
        calibration_samples: calibration.samples,
        compactions: state.compaction.compactions,
        consecutive_failures: state.compaction.consecutive_failures,
        in_cooldown: state.compaction.in_cooldown(),
        summary_tokens: crate::llm::estimate_tokens(&state.summary),
        pinned_tokens: pinned_layer_tokens(engine, &session, &state)?,
    })
}

pub(in crate::api) fn set_compaction(engine: &Engine, params: SessionSetCompactionParams) -> Result<SessionContextView, ApiError> {
    engine.harness().load_session(&params.session_id)?;
    engine.harness().set_compaction_threshold(&params.session_id, params.threshold.map(Into::into))?;
    context(engine, SessionRef { session_id: params.session_id })
}
