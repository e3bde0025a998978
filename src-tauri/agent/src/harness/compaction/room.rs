//! The room a window leaves beside every request's fixed part and how it is shared:
//! pins (added, removed, refused when over their share), the summary layer, the
//! conversation; and cutting text to a token budget.

use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::error::{ApiError, ErrorCode};
use crate::harness::event::EventBody;
use crate::harness::Harness;
use crate::llm::estimate_tokens;
use crate::store::Durability;

use super::*;

/// The room a context window leaves beside the fixed part of every request (the
/// smallest system prompt without pins or summary, the tool definitions, the reply's
/// reserve), and how it is shared: pins at most [`PIN_SHARE_PERCENT`], the summary
/// layer at most [`SUMMARY_SHARE_PERCENT`], the conversation the rest (at least half).
/// Pure: the caller works out the fixed part as the next request would.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Room {
    /// Estimated tokens (as [`estimate_tokens`] counts, before calibration) free
    /// beside the fixed part.
    pub free_tokens: u64,
}

impl Room {
    /// The room of `window` beside `fixed` (both calibrated tokens), in estimated
    /// tokens for a profile whose calibration ratio is `ratio`.
    pub fn new(window: u64, fixed: u64, ratio: f64) -> Room {
        let free = window.saturating_sub(fixed);
        Room { free_tokens: (free as f64 / ratio.max(0.1)).floor() as u64 }
    }

    /// The most estimated tokens the pins may take ([`pins_tokens`]).
    pub fn pin_budget(self) -> u64 {
        self.free_tokens * PIN_SHARE_PERCENT / 100
    }

    /// The most estimated tokens the session summary layer may take.
    pub fn summary_budget(self) -> u64 {
        (self.free_tokens * SUMMARY_SHARE_PERCENT / 100).min(u64::from(SUMMARY_OUTPUT_TOKENS))
    }

    /// The end of a turn (or the refusal of a pin) when `pins` are over the budget:
    /// the message and what the person can do. `None` while they fit.
    pub fn pins_over(self, pins: &[String]) -> Option<PinsTooLong> {
        let needed = pins_tokens(pins);
        let budget = self.pin_budget();
        (needed > budget).then_some(PinsTooLong { needed, budget, free: self.free_tokens })
    }
}

/// Pins that take more than their share of the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PinsTooLong {
    pub needed: u64,
    pub budget: u64,
    pub free: u64,
}

impl PinsTooLong {
    pub(crate) fn message(self) -> String {
        format!(
            "The pinned items take about {} tokens, more than the {} this model's context window leaves for pins (of {} beside the system prompt, the tools and the reply's reserve); nothing was sent.",
            self.needed, self.budget, self.free
        )
    }

    pub(crate) fn hints(self) -> Vec<crate::error::Hint> {
        let (needed, budget) = (self.needed.to_string(), self.budget.to_string());
        vec![
            crate::error::Hint::with(
                "unpin",
                format!("Unpin something in the AI panel (Pinned), or pin a shorter text: the pins take about {needed} tokens and {budget} fit."),
                &[("tokens", &needed), ("budget", &budget)],
            ),
            crate::error::Hint::new("larger_context", "Or choose a model with a larger context window."),
        ]
    }

    /// The refusal of a pin that would not fit.
    pub(crate) fn error(self) -> ApiError {
        let mut error = ApiError::new(ErrorCode::ContextTooLong, self.message().replace("; nothing was sent.", "; the pin was not added."))
            .details(json!({"pinsTokens": self.needed, "pinBudgetTokens": self.budget}));
        error.hints = self.hints();
        error
    }
}

/// The estimated tokens `pins` take in the pinned layer (their heading, one line each).
pub fn pins_tokens(pins: &[String]) -> u64 {
    if pins.is_empty() {
        return 0;
    }
    PINS_HEADING_TOKENS + pins.iter().map(|p| estimate_tokens(p) + 1).sum::<u64>()
}

/// `text` cut to at most `max_tokens` estimated tokens at a character boundary, with
/// "…" when it was cut.
pub fn bound_text(text: &str, max_tokens: u64) -> String {
    if estimate_tokens(text) <= max_tokens {
        return text.to_owned();
    }
    let ends: Vec<usize> = text.char_indices().map(|(i, _)| i).chain(std::iter::once(text.len())).collect();
    // The longest prefix that fits with the ellipsis (a token of its own).
    let (mut low, mut high) = (0usize, ends.len() - 1);
    while low < high {
        let middle = (low + high).div_ceil(2);
        if estimate_tokens(&text[..ends[middle]]) < max_tokens {
            low = middle;
        } else {
            high = middle - 1;
        }
    }
    format!("{}…", text[..ends[low]].trim_end())
}

/// Where a pin came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PinSource {
    /// `session.pin`.
    Person,
    /// An explicit instruction of the person, carried out of compacted conversation.
    Instruction,
}

/// A text in the pinned layer of every call, verbatim.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Pin {
    pub id: String,
    pub text: String,
    pub source: PinSource,
}

/// The room of `session`'s next request (see [`Room`]), worked out as its model call
/// would, without its pins and summary. Errors: the profile cannot be read, store
/// errors.
pub fn session_room(engine: Harness<'_>, session: &crate::harness::Session, state: &crate::harness::SessionState) -> Result<Room, ApiError> {
    let mut bare = state.clone();
    bare.pins.clear();
    bare.summary.clear();
    let overhead = crate::harness::model_call::session_overhead(engine, session, &bare)?;
    let profile = engine.llm_profile(&session.profile_id)?;
    let calibration = profile_context(engine.store(), &profile.id)?;
    Ok(Room::new(u64::from(profile.context_window), overhead.fixed_total(), calibration.ratio))
}

/// The longest pin, in characters.
pub const MAX_PIN_CHARS: usize = 4_000;

impl Harness<'_> {
    /// Pins a text for the rest of the session (verbatim in the pinned layer of every
    /// call; never summarised). Errors: NOT_FOUND, VALIDATION (empty, too long).
    /// Errors also CONTEXT_TOO_LONG when the pins with this one would take more than
    /// their share of the model's window ([`Room::pin_budget`]), with what to unpin.
    pub fn pin(&self, session_id: &str, text: &str) -> Result<crate::harness::Event, ApiError> {
        let text = crate::error::required_text("text", text, MAX_PIN_CHARS)?;
        let session = self.load_session(session_id)?;
        let live = self.live_session(session_id)?;
        let state = live.lock_state().clone();
        // Without a readable profile there is no window to measure against; the next
        // turn says what is wrong with the profile.
        if let Ok(room) = session_room(*self, &session, &state) {
            let mut pins: Vec<String> = state.pins.iter().map(|p| p.text.clone()).collect();
            pins.push(text.clone());
            if let Some(over) = room.pins_over(&pins) {
                return Err(over.error());
            }
        }
        let pin_id = self.new_id("pin");
        self.append_event(&live, crate::harness::Meta::default(), EventBody::PinAdded { pin_id, text, source: PinSource::Person }, crate::store::Batch::new(), Durability::Durable)
    }

    /// Removes a pin (the person's, or a carried instruction). Errors: NOT_FOUND.
    pub fn unpin(&self, session_id: &str, pin_id: &str) -> Result<crate::harness::Event, ApiError> {
        let live = self.live_session(session_id)?;
        if !live.lock_state().pins.iter().any(|p| p.id == pin_id) {
            return Err(ApiError::not_found("pin", pin_id));
        }
        self.append_event(&live, crate::harness::Meta::default(), EventBody::PinRemoved { pin_id: pin_id.to_owned() }, crate::store::Batch::new(), Durability::Durable)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn bound_text_cuts_at_a_character_within_the_budget() {
        assert_eq!(bound_text("short", 10), "short");
        let chinese = "春".repeat(500);
        let cut = bound_text(&chinese, 100);
        assert!(estimate_tokens(&cut) <= 100 && cut.ends_with('…') && cut.starts_with("春春"), "{cut}");
        let english = "tea leaves ".repeat(400);
        let cut = bound_text(&english, 50);
        assert!(estimate_tokens(&cut) <= 50 && estimate_tokens(&cut) >= 45, "{}", estimate_tokens(&cut));
        assert_eq!(bound_text("春眠不觉晓", 0), "…");
    }

    #[test]
    fn the_room_is_shared_out_and_pins_over_their_share_are_said_with_what_to_do() {
        let room = Room::new(6_000, 4_740, 1.0);
        assert_eq!((room.free_tokens, room.pin_budget(), room.summary_budget()), (1_260, 378, 252));
        assert_eq!(Room::new(131_072, 4_000, 1.0).summary_budget(), u64::from(SUMMARY_OUTPUT_TOKENS), "capped");
        assert_eq!(Room::new(4_000, 5_000, 1.0).free_tokens, 0);
        assert_eq!(Room::new(6_000, 4_000, 2.0).free_tokens, 1_000, "in estimated tokens");
        assert!(room.pins_over(&["记住：发布日期是三月十二日。".to_owned()]).is_none());
        let over = room.pins_over(&["长".repeat(400)]).unwrap();
        assert_eq!((over.needed, over.budget), (421, 378));
        let hints: Vec<String> = over.hints().into_iter().map(|h| h.id).collect();
        assert_eq!(hints, ["unpin", "larger_context"]);
        assert_eq!(over.error().code, ErrorCode::ContextTooLong);
        assert_eq!(pins_tokens(&[]), 0);
    }
}
