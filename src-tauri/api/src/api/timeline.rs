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

use super::dto::{TimelineItem, TimelinePatch, TimelineState};
use super::{ApiError, Engine, StreamEvent};
use crate::harness::timeline::Timeline;
use crate::sync::Waited;

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
    let matching: Vec<&crate::harness::timeline::TimelineItem> = timeline.items[..end].iter().filter(|item| item.changed_at() > since).collect();
    let first = matching.len().saturating_sub(limit as usize);
    let items = matching[first..].iter().map(|item| TimelineItem::from(*item)).collect();
    Ok(SessionTimelineResult { since, items, earlier: u32::try_from(first).unwrap_or(u32::MAX), state: (&timeline.state).into() })
}

fn limit_of(params: &SessionTimelineParams) -> Result<u32, ApiError> {
    let limit = params.limit.unwrap_or(MAX_TIMELINE_PAGE);
    if !(1..=MAX_TIMELINE_PAGE).contains(&limit) {
        return Err(ApiError::validation("limit", format!("A page holds 1 to {MAX_TIMELINE_PAGE} items.")));
    }
    Ok(limit)
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionWatchParams {
    pub session_id: String,
    /// The last sequence the caller holds: the first patch brings the items changed
    /// after it (default: every item). At most the log's last sequence.
    #[serde(default)]
    #[ts(optional)]
    pub since: Option<u64>,
}

/// How a `session.watch` ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum SessionWatchEnd {
    /// No turn or compaction runs any more (or none ran when it began).
    TurnEnded,
    /// Nobody listened to the last patch.
    ListenerGone,
    /// The engine is closing.
    Closed,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SessionWatchResult {
    /// The last sequence the patches sent reach.
    pub last_sequence: u64,
    pub ended: SessionWatchEnd,
}

/// A turn logs its end just before it lets go of the session (or takes the next queued
/// message): between the two the watch looks again this soon, not at the keepalive.
const TURN_RELEASE: std::time::Duration = std::time::Duration::from_millis(50);

/// `session.watch`: follows a turn this caller does not drive (another window's, the
/// API's, one still running after a reload). Sends one patch at once (the items changed
/// after `since` and the state), then one each time the log grew (whoever appended),
/// in order, with the logged items and the state after them. It reads on commits of
/// session events ([`Engine::log_changes`]), never on a timer; after 25 quiet seconds it
/// sends an empty patch to learn whether anyone still listens. Live deltas are not sent:
/// a follower shows an answer once it is logged, as its checkpoints reach the log.
///
/// Ends when no turn or compaction runs (so at once, after its first patch, for an idle
/// session), when nobody listens, or when the engine closes ([`Engine::close_watches`]).
///
/// # Errors
/// `VALIDATION` for a bad session id or a `since` past the log's end, `NOT_FOUND` for
/// an unknown session; nothing is sent then.
pub(super) fn watch(engine: &Engine, params: SessionWatchParams, on_event: &mut dyn FnMut(StreamEvent) -> bool) -> Result<SessionWatchResult, ApiError> {
    let session_id = params.session_id.as_str();
    let changes = engine.log_changes();
    // The count is taken before each read: an append during the read wakes the next wait.
    let mut seen = changes.count();
    let mut sent = params.since.unwrap_or(0);
    let last = engine.harness().with_timeline(session_id, |timeline| timeline.state.last_sequence)?;
    if sent > last {
        return Err(ApiError::validation("since", format!("The session's log ends at sequence {last}; `since` cannot be past it.")));
    }
    let mut first = true;
    loop {
        let (patch, logged_running) = engine.harness().with_timeline(session_id, |timeline| {
            let state = &timeline.state;
            let patch = (first || state.last_sequence > sent).then(|| TimelinePatch {
                sequence: state.last_sequence,
                items: timeline.items.iter().filter(|item| item.changed_at() > sent).map(Into::into).collect(),
                removed: Vec::new(),
                append: None,
                state: Some(state.into()),
            });
            (patch, state.turn_open || state.compacting.is_some())
        })?;
        first = false;
        if let Some(patch) = patch {
            let sequence = patch.sequence;
            if !on_event(StreamEvent::Timeline(Box::new(patch))) {
                return Ok(SessionWatchResult { last_sequence: sent, ended: SessionWatchEnd::ListenerGone });
            }
            sent = sequence;
        }
        let claimed = engine.harness().turn_running(session_id)?;
        if !logged_running && !claimed {
            return Ok(SessionWatchResult { last_sequence: sent, ended: SessionWatchEnd::TurnEnded });
        }
        let wait = if logged_running { super::sync::WATCH_KEEPALIVE } else { TURN_RELEASE };
        match changes.wait(seen, wait) {
            Waited::Closed => return Ok(SessionWatchResult { last_sequence: sent, ended: SessionWatchEnd::Closed }),
            Waited::Moved(count) => seen = count,
            Waited::Quiet if logged_running => {
                let keepalive = TimelinePatch { sequence: sent, items: Vec::new(), removed: Vec::new(), append: None, state: None };
                if !on_event(StreamEvent::Timeline(Box::new(keepalive))) {
                    return Ok(SessionWatchResult { last_sequence: sent, ended: SessionWatchEnd::ListenerGone });
                }
            }
            Waited::Quiet => {}
        }
    }
}
