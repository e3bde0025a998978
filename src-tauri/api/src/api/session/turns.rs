//! A session's turns: a message submitted, a turn interrupted, an approval or a
//! question answered, the mode switched, and the log read back (see [`super`]).

use super::{session_stream, timings, view, Feed};
use super::{SessionAnswerParams, SessionEventsParams, SessionEventsResult, SessionInterruptResult, SessionRef, SessionResolveApprovalParams, SessionSetModeParams};
use super::{SessionSubmitParams, SessionSubmitResult, SessionView};
use crate::api::{ApiError, Engine, StreamEvent};
use crate::harness::{self, EventBody, SubmitOutcome};
use crate::store::{Batch, Durability};

fn submit_result(engine: &Engine, session_id: &str, outcome: SubmitOutcome) -> Result<SessionSubmitResult, ApiError> {
    let session = view(engine, session_id, false)?;
    Ok(match outcome {
        SubmitOutcome::Queued => SessionSubmitResult { queued: true, reason: None, session, timings: None },
        SubmitOutcome::Finished { reason, stats } => SessionSubmitResult { queued: false, reason: Some((&reason).into()), session, timings: Some(timings(&stats)) },
    })
}

pub(in crate::api) fn submit(engine: &Engine, params: SessionSubmitParams, on_event: &mut dyn FnMut(StreamEvent)) -> Result<SessionSubmitResult, ApiError> {
    // Checked before anything is written (a mode switch included).
    let selection = params.selection.map(crate::context::Selection::from);
    if let Some(selection) = &selection {
        let session = engine.harness().load_session(&params.session_id)?;
        let project = crate::project::load(engine.store(), &session.project_id)?;
        selection.check(&project.source)?;
    }
    let feed = Feed::of(params.timeline);
    if let Some(mode) = params.mode {
        set_mode_inner(engine, &params.session_id, mode.into(), feed, on_event)?;
    }
    let mut emit = session_stream(engine, &params.session_id, feed, on_event);
    let outcome = harness::submit_message(engine.harness(), &params.session_id, &params.text, selection, &mut emit)?;
    submit_result(engine, &params.session_id, outcome)
}

pub(in crate::api) fn interrupt(engine: &Engine, params: SessionRef) -> Result<SessionInterruptResult, ApiError> {
    engine.harness().load_session(&params.session_id)?;
    Ok(SessionInterruptResult { interrupted: engine.harness().interrupt_session(&params.session_id)? })
}

pub(in crate::api) fn resolve_approval(engine: &Engine, params: SessionResolveApprovalParams, on_event: &mut dyn FnMut(StreamEvent)) -> Result<SessionSubmitResult, ApiError> {
    let decided_by = engine.author()?;
    let note = params.note.unwrap_or_default();
    let mut emit = session_stream(engine, &params.session_id, Feed::of(params.timeline), on_event);
    let answer = match (params.approved, params.always) {
        (false, None) => harness::Answer::Deny,
        (true, None) => harness::Answer::AllowOnce,
        (true, Some(scope)) => harness::Answer::AllowAlways(scope.into()),
        (false, Some(_)) => return Err(ApiError::validation("always", "\"always\" goes with an approval; a denial makes no rule.")),
    };
    let outcome = harness::resolve_approval(engine.harness(), &params.session_id, &params.request_id, answer, &note, &decided_by, &mut emit)?;
    submit_result(engine, &params.session_id, outcome)
}

pub(in crate::api) fn answer_question(engine: &Engine, params: SessionAnswerParams, on_event: &mut dyn FnMut(StreamEvent)) -> Result<SessionSubmitResult, ApiError> {
    let mut emit = session_stream(engine, &params.session_id, Feed::of(params.timeline), on_event);
    let outcome = harness::answer_question(engine.harness(), &params.session_id, &params.question_id, &params.answer, &mut emit)?;
    submit_result(engine, &params.session_id, outcome)
}

fn set_mode_inner(engine: &Engine, session_id: &str, mode: harness::Mode, feed: Feed, on_event: &mut dyn FnMut(StreamEvent)) -> Result<(), ApiError> {
    let session = engine.harness().load_session(session_id)?;
    if session.archived {
        return Err(ApiError::validation("sessionId", "The session is archived."));
    }
    engine.harness().check_project_open(&session)?;
    let live = engine.harness().live_session(session_id)?;
    if live.state.lock().unwrap_or_else(|p| p.into_inner()).mode == mode {
        return Ok(());
    }
    let event = engine.harness().append_event(&live, harness::Meta::default(), EventBody::ModeChanged { mode, by: "user".to_owned() }, Batch::new(), Durability::Durable)?;
    session_stream(engine, session_id, feed, on_event)(&event);
    Ok(())
}

pub(in crate::api) fn set_mode(engine: &Engine, params: SessionSetModeParams) -> Result<SessionView, ApiError> {
    set_mode_inner(engine, &params.session_id, params.mode.into(), Feed::Events, &mut |_| {})?;
    view(engine, &params.session_id, false)
}

pub(in crate::api) fn events(engine: &Engine, params: SessionEventsParams) -> Result<SessionEventsResult, ApiError> {
    engine.harness().load_session(&params.session_id)?;
    let from = params.from.unwrap_or(1).max(1);
    let limit = params.limit.unwrap_or(1000).clamp(1, 10_000) as usize;
    let prefix = crate::store::keys::project_prefix(&params.session_id);
    let start = crate::store::keys::session_event(&params.session_id, from);
    // The state first: its first read after a restart closes the turn the old process
    // left open (`turn_ended: restarted`), which this read must then include.
    let (state, _) = engine.harness().session_state(&params.session_id)?;
    let events = engine.store().scan_from_limit::<harness::Event>(&prefix, &start, limit)?;
    Ok(SessionEventsResult { events: events.iter().map(Into::into).collect(), last_sequence: state.last_sequence })
}
