//! A session's working copy, checkpoints and constraints over the API
//! (`session.stage`, `session.staging`, `session.discardStaging`,
//! `session.applyStaging`, `checkpoint.*`, `constraint.*`). The rules are in
//! `crate::proposals` (`staging`, `checkpoints`, `apply`); these methods check
//! parameters, find the session, and commit.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::{required_text, ApiError, Deleted, Engine, ErrorCode};
use crate::harness::{self, EventBody, Session, TurnClaim};

use crate::proposals::checkpoints::{self, Checkpoint, CheckpointReason};
use crate::proposals::staging::{self, StagingApplied, StagingView};
use crate::store::Durability;

/// Longest checkpoint label, in characters.
pub const MAX_CHECKPOINT_LABEL_CHARS: usize = 200;

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionStageParams {
    pub session_id: String,
    pub proposal_id: String,
    /// The hunks to stage; every hunk not rejected when absent.
    #[serde(default)]
    #[ts(optional)]
    pub hunks: Option<Vec<String>>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionApplyStagingParams {
    pub session_id: String,
    /// The project's working-copy revision the person reviewed the staged set against.
    pub expected_revision: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct StagingDiscardResult {
    /// False when nothing was staged.
    pub discarded: bool,
    /// The proposals that were staged (they stay open).
    pub proposal_ids: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CheckpointCreateParams {
    pub session_id: String,
    pub label: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CheckpointListResult {
    /// Oldest first.
    pub checkpoints: Vec<super::dto::Checkpoint>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CheckpointRestoreParams {
    pub session_id: String,
    pub checkpoint_id: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CheckpointRestoreResult {
    #[serde(flatten)]
    pub restored: super::dto::CheckpointRestored,
    /// The `rewound` event appended to the session's log.
    pub event: super::dto::Event,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ConstraintListResult {
    /// Oldest first.
    pub constraints: Vec<super::dto::Constraint>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConstraintRemoveParams {
    pub session_id: String,
    pub constraint_id: String,
}

/// The session `session_id`, refusing an archived one, or one whose project is
/// archived, for a call that changes its work.
fn open_session(engine: &Engine, session_id: &str) -> Result<Session, ApiError> {
    let session = engine.harness().load_session(session_id)?;
    if session.archived {
        return Err(ApiError::validation("sessionId", "The session is archived.").hint("new_session", "Start a new session."));
    }
    engine.harness().check_project_open(&session)?;
    Ok(session)
}

fn staging_view(engine: &Engine, session: &Session) -> Result<StagingView, ApiError> {
    let project = crate::project::load(engine.store(), &session.project_id)?;
    staging::view(engine.store(), &session.id, &project)
}

pub(super) fn stage(engine: &Engine, params: SessionStageParams) -> Result<StagingView, ApiError> {
    let session = open_session(engine, &params.session_id)?;
    staging::stage(engine, &session.id, &params.proposal_id, params.hunks)?;
    staging_view(engine, &session)
}

pub(super) fn get_staging(engine: &Engine, params: super::SessionRef) -> Result<StagingView, ApiError> {
    let session = engine.harness().load_session(&params.session_id)?;
    staging_view(engine, &session)
}

pub(super) fn discard_staging(engine: &Engine, params: super::SessionRef) -> Result<StagingDiscardResult, ApiError> {
    let session = engine.harness().load_session(&params.session_id)?;
    let dropped = staging::discard(engine, &session.id)?;
    Ok(StagingDiscardResult { discarded: dropped.is_some(), proposal_ids: dropped.map(|s| s.entries.into_iter().map(|e| e.proposal_id).collect()).unwrap_or_default() })
}

pub(super) fn apply_staging(engine: &Engine, params: SessionApplyStagingParams) -> Result<StagingApplied, ApiError> {
    let session = engine.harness().load_session(&params.session_id)?;
    staging::apply(engine, &session.id, params.expected_revision)
}

pub(super) fn create_checkpoint(engine: &Engine, params: CheckpointCreateParams) -> Result<Checkpoint, ApiError> {
    let session = open_session(engine, &params.session_id)?;
    let label = required_text("label", &params.label, MAX_CHECKPOINT_LABEL_CHARS)?;
    let (state, _) = engine.harness().session_state(&session.id)?;
    checkpoints::create(engine, &session.id, &session.project_id, &label, CheckpointReason::Manual, state.last_sequence)
}

pub(super) fn list_checkpoints(engine: &Engine, params: super::SessionRef) -> Result<CheckpointListResult, ApiError> {
    let session = engine.harness().load_session(&params.session_id)?;
    Ok(CheckpointListResult { checkpoints: checkpoints::list(engine.store(), &session.id)?.iter().map(Into::into).collect() })
}

/// Restores a checkpoint and tells the session: the restore's records and the
/// `rewound` event are one durable transaction. Refused (CONFLICT, nothing written)
/// while a turn runs, and while the session waits for an approval or an answer: the
/// note the model reads cannot come between a tool call and its result.
pub(super) fn restore_checkpoint(engine: &Engine, params: CheckpointRestoreParams) -> Result<CheckpointRestoreResult, ApiError> {
    let session = open_session(engine, &params.session_id)?;
    let checkpoint = checkpoints::load(engine.store(), &session.id, &params.checkpoint_id)?;
    let live = engine.harness().live_session(&session.id)?;
    // Held until the event is appended, so no turn starts in between.
    let _claim = TurnClaim::take(&live).map_err(|error| error.hint("interrupt", "Interrupt the running turn first, then restore."))?;
    let blocked = {
        let state = live.state.lock().unwrap_or_else(|p| p.into_inner());
        state.pending_approval.as_ref().map(|p| p.request_id.clone()).or_else(|| state.pending_question.as_ref().map(|q| q.question_id.clone()))
    };
    if let Some(waiting) = blocked {
        return Err(ApiError::new(ErrorCode::Conflict, format!("The session waits for your decision on {waiting}; restoring now would leave the assistant's call unanswered."))
            .hint("decide_first", "Approve, deny or answer what the session waits for (or send a message, which cancels it), then restore.")
            .details(serde_json::json!({"sessionId": session.id, "waitingFor": waiting})));
    }
    let (event, restored) = engine.harness().append_staged(&live, harness::Meta::default(), Durability::Durable, |batch| {
        let restored = checkpoints::stage_restore(engine, batch, &checkpoint)?;
        let body = EventBody::Rewound { checkpoint_id: checkpoint.id.clone(), to_sequence: checkpoint.sequence, version: restored.version.number };
        Ok((body, restored))
    })?;
    Ok(CheckpointRestoreResult { restored: (&restored).into(), event: (&event).into() })
}

pub(super) fn list_constraints(engine: &Engine, params: super::SessionRef) -> Result<ConstraintListResult, ApiError> {
    let session = engine.harness().load_session(&params.session_id)?;
    Ok(ConstraintListResult { constraints: crate::proposals::apply::constraints(engine.store(), &session.id)?.iter().map(Into::into).collect() })
}

pub(super) fn remove_constraint(engine: &Engine, params: ConstraintRemoveParams) -> Result<Deleted, ApiError> {
    let session = engine.harness().load_session(&params.session_id)?;
    let removed = crate::proposals::apply::remove_constraint(engine, &session.id, &params.constraint_id)?;
    Ok(Deleted { id: removed.id, deleted: true })
}
