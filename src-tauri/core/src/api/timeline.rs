//! `session.timeline`: the drafting panel's timeline, folded by the core from the
//! session's log (`harness::timeline`), so the UI draws items instead of folding the log
//! a second time. Incremental: a reader holding the fold up to sequence `since` gets the
//! items changed after it (to replace by key or append) with the whole state around
//! them; while a turn streams it asks again after each logged event it is sent.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::{ApiError, Engine};
use crate::harness::timeline::{self, Timeline};
use crate::harness::Event;

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionTimelineParams {
    pub session_id: String,
    /// Only the items changed after this sequence (default: every item).
    #[serde(default)]
    #[ts(optional)]
    pub since: Option<u64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SessionTimelineResult {
    /// The `since` of the request (0 without one): `timeline.items` are the items
    /// changed after it, in timeline order; every other field is the whole state.
    pub since: u64,
    #[serde(flatten)]
    #[ts(flatten)]
    pub timeline: Timeline,
}

pub(super) fn get(engine: &Engine, params: SessionTimelineParams) -> Result<SessionTimelineResult, ApiError> {
    engine.harness().load_session(&params.session_id)?;
    // The state first: its first read after a restart closes the turn the old process
    // left open (`turn_ended: restarted`), which the fold must then include.
    engine.harness().session_state(&params.session_id)?;
    let prefix = crate::store::keys::project_prefix(&params.session_id);
    let start = crate::store::keys::session_event(&params.session_id, 1);
    let events = engine.store().scan_from::<Event>(&prefix, &start)?;
    let mut folded = timeline::fold_all(&events);
    let since = params.since.unwrap_or(0);
    folded.items.retain(|item| item.changed_at() > since);
    Ok(SessionTimelineResult { since, timeline: folded })
}
