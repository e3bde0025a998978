//! `session.timeline`: the drafting panel's timeline, the one fold of the session's log
//! (`harness::timeline`, kept in the session's live state as the harness logs and
//! replays), so the UI draws items instead of folding the log a second time.
//!
//! Incremental: a reader holding the fold up to sequence `since` gets the items changed
//! after it (to replace by key or append) with the whole state around them. Paged: at
//! most `limit` items, the latest ones; `before` (an item key) asks for the page before
//! it. While a turn streams, the same items reach the caller of `session.submit` (and of
//! the other turn-driving methods) that asks for them (`timeline: true`) as
//! `StreamEvent::Timeline` patches, instead of the log's events.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::{ApiError, Engine};
use crate::harness::timeline::{Timeline, TimelineItem, TimelineState};

/// The most items one page holds (and the default).
pub const MAX_TIMELINE_PAGE: u32 = 1000;

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionTimelineParams {
    pub session_id: String,
    /// Only the items changed after this sequence (default: every item).
    #[serde(default)]
    #[ts(optional)]
    pub since: Option<u64>,
    /// Only the items before the item with this key (the page before one held).
    #[serde(default)]
    #[ts(optional)]
    pub before: Option<String>,
    /// At most this many items, the latest (1 to 1000; default 1000).
    #[serde(default)]
    #[ts(optional)]
    pub limit: Option<u32>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SessionTimelineResult {
    /// The `since` of the request (0 without one): `items` are the items changed after
    /// it, in timeline order; `state` is the whole state.
    pub since: u64,
    pub items: Vec<TimelineItem>,
    /// Items that match and are before this page (ask again with `before` = the key of
    /// the first item here).
    pub earlier: u32,
    #[serde(flatten)]
    #[ts(flatten)]
    pub state: TimelineState,
}

pub(super) fn get(engine: &Engine, params: SessionTimelineParams) -> Result<SessionTimelineResult, ApiError> {
    // Refused before the session is read: reading it may close a turn a restart left open.
    limit_of(&params)?;
    engine.harness().load_session(&params.session_id)?;
    // Read from the session's live state (its first read after a restart closes the turn
    // the old process left open, `turn_ended: restarted`, which the fold then includes).
    engine.harness().with_timeline(&params.session_id, |timeline| page(timeline, &params))?
}

/// The page of `timeline` that `params` asks for (its `sessionId` is not read): pure, so
/// the UI's tests can be held to the same paging (`tests/it/timeline_golden.rs`).
///
/// # Errors
/// `VALIDATION` for a `limit` outside 1 to 1000, or a `before` that names no item.
pub fn page(timeline: &Timeline, params: &SessionTimelineParams) -> Result<SessionTimelineResult, ApiError> {
    let limit = limit_of(params)?;
    let since = params.since.unwrap_or(0);
    let end = match &params.before {
        Some(key) => timeline.items.iter().position(|item| item.key() == key),
        None => Some(timeline.items.len()),
    };
    let Some(end) = end else {
        return Err(ApiError::validation("before", "No item of this session's timeline has this key."));
    };
    let matching: Vec<&TimelineItem> = timeline.items[..end].iter().filter(|item| item.changed_at() > since).collect();
    let first = matching.len().saturating_sub(limit as usize);
    let items = matching[first..].iter().map(|item| (*item).clone()).collect();
    Ok(SessionTimelineResult { since, items, earlier: u32::try_from(first).unwrap_or(u32::MAX), state: timeline.state.clone() })
}

fn limit_of(params: &SessionTimelineParams) -> Result<u32, ApiError> {
    let limit = params.limit.unwrap_or(MAX_TIMELINE_PAGE);
    if !(1..=MAX_TIMELINE_PAGE).contains(&limit) {
        return Err(ApiError::validation("limit", format!("A page holds 1 to {MAX_TIMELINE_PAGE} items.")));
    }
    Ok(limit)
}
