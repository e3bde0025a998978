//! The compaction coordinator: keeps a long session inside its model's context window.
//!
//! - Estimates: every model call's context is estimated per layer
//!   ([`crate::llm::estimate_tokens`]) and the estimate is calibrated against the usage
//!   the server reports, per profile ([`ProfileContext`], a small meta record).
//! - Thresholds: a warning at [`WARN_PERCENT`] of the window (`context_warning`), an
//!   automatic compaction at the session's or the profile's threshold (default
//!   [`DEFAULT_COMPACT_PERCENT`], settable 40–95%, or manual only). A request that would
//!   not fit at all is compacted whatever the setting, and a CONTEXT_TOO_LONG from the
//!   server triggers one reactive compaction and exactly one retry.
//! - Compaction can always run: the summarising call sees only the part of the
//!   conversation being compacted (tool results as their preview and reference), in
//!   chunks that fit the window with its own output reserve, never the pinned context.
//!   Pinned context (rules, project, brand, the person's constraints, pins and their
//!   explicit instructions) is carried verbatim by construction.
//! - Partial: the latest turns stay raw (up to [`KEEP_RECENT_PERCENT`] of the window,
//!   cut at a user message so no tool call is separated from its result).
//! - Failure: [`MAX_FAILURES`] failed attempts in a row fall back to a deterministic
//!   truncation (the oldest messages go, a truncation note with a digest of the
//!   person's latest dropped messages stays), and automatic compaction stays
//!   truncation-only for [`COOLDOWN_USER_TURNS`] messages, then re-arms.
//! - A summary may be plain text: a server that cannot constrain its reply to a schema
//!   is asked for prose, and prose is accepted from any server (the structured fields
//!   are used when the reply has them).
//! - Nothing that every later request carries can outgrow the window ([`Room`]): the
//!   room a window leaves beside the fixed part of a request (the smallest system
//!   prompt without pins or summary, the tool definitions, the reply's reserve) is
//!   shared out. Pins take at most [`PIN_SHARE_PERCENT`] of it: a pin over that is
//!   refused, instructions are carried out of compacted conversation only while they
//!   fit, and a turn whose pins no longer fit (a smaller window) ends `pins_too_long`
//!   saying which pins to remove. The summary layer, whether summarised, plain text or
//!   a truncation note with its digest, takes at most [`SUMMARY_SHARE_PERCENT`] of it.
//!   The rest is the conversation's: a message that fits it always gets an answer once
//!   the earlier conversation is compacted, so no state refuses every later turn.
//!
//! Everything is an event (`compaction_started`, `compaction_failed`,
//! `compact_boundary`), and replay folds a boundary exactly as the live loop does, so
//! what the model is sent after a compaction is what a replay rebuilds.

mod room;
mod settings;
mod summary;

pub use room::*;
pub use settings::*;
pub use summary::*;

use serde::{Deserialize, Serialize};

use super::event::EventBody;
use super::turn::TurnStats;
use super::{Harness, Live, Scope};
use crate::error::ApiError;
use crate::llm::{estimate_request_tokens, estimate_tokens, ChatRequest, Message, Role};
use crate::store::Durability;

/// The share of the window at which the panel is warned.
pub const WARN_PERCENT: u32 = 70;
/// The default share of the window at which a session compacts by itself.
pub const DEFAULT_COMPACT_PERCENT: u8 = 80;
/// The settable range of the automatic threshold.
pub const MIN_COMPACT_PERCENT: u8 = 40;
pub const MAX_COMPACT_PERCENT: u8 = 95;
/// Failed summarising attempts in a row before the deterministic truncation.
pub const MAX_FAILURES: u32 = 3;
/// User messages after a truncation during which automatic compaction only truncates.
pub const COOLDOWN_USER_TURNS: u64 = 3;
/// The share of the window the latest turns may keep raw.
pub const KEEP_RECENT_PERCENT: u64 = 20;
/// The most output tokens a summary may take.
pub const SUMMARY_OUTPUT_TOKENS: u32 = 1_500;
/// A tool result's preview in the text the summarising model reads.
const TOOL_PREVIEW_CHARS: usize = 600;
/// A message longer than this is material, not an instruction.
const INSTRUCTION_MAX_CHARS: usize = 1_000;
/// The digest of dropped messages a truncation keeps, in characters per message.
const DIGEST_CHARS: usize = 160;
/// The share of a window's free room (see [`Room`]) pins may take.
pub const PIN_SHARE_PERCENT: u64 = 30;
/// The share of a window's free room the session summary layer may take (and never
/// more than [`SUMMARY_OUTPUT_TOKENS`]).
pub const SUMMARY_SHARE_PERCENT: u64 = 20;
/// The least room a window must leave beside the fixed part of a request for pins, a
/// summary and a short message; a window that leaves less cannot hold a conversation
/// at all (the turn ends `fixed_context_too_long`, nothing compacted).
pub const MIN_FREE_TOKENS: u64 = 128;
/// The estimated tokens of the pinned layer's heading over the pins.
const PINS_HEADING_TOKENS: u64 = 20;
/// What started a compaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactionTrigger {
    /// The person asked (`session.compact`).
    Manual,
    /// The threshold, or a request that would not fit.
    Auto,
    /// The server answered CONTEXT_TOO_LONG.
    Reactive,
}

/// How the earlier conversation was replaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactionMode {
    /// By a validated summary.
    Summarized,
    /// By a truncation note (summarising failed three times, or the cooldown).
    Truncated,
}

/// The compaction state a log folds to.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CompactionState {
    /// Failed summarising attempts since the last boundary.
    pub consecutive_failures: u32,
    /// A compaction started and neither finished nor failed (a crash in between).
    pub open: Option<CompactionTrigger>,
    pub compactions: u32,
    /// The user message count at the last truncation.
    pub truncated_at_user_turn: Option<u64>,
    pub user_turns: u64,
    /// The session's own threshold (`None`: the profile's).
    pub threshold: Option<CompactThreshold>,
    /// A warning was shown since the last boundary.
    pub warned: bool,
    /// The estimated tokens of the last model call's request.
    pub last_estimated_tokens: u64,
    /// The user message count at the last boundary.
    pub boundary_at_user_turn: Option<u64>,
}

impl CompactionState {
    /// True while automatic compaction only truncates (after a fallback).
    pub fn in_cooldown(&self) -> bool {
        self.truncated_at_user_turn.is_some_and(|at| self.user_turns < at + COOLDOWN_USER_TURNS)
    }

    /// True when the threshold compacted during the latest user message already: the
    /// threshold does not compact two messages in a row (no thrashing when the pinned
    /// context alone is near the threshold); a request that does not fit still does.
    pub fn just_compacted(&self) -> bool {
        self.boundary_at_user_turn.is_some_and(|at| self.user_turns <= at)
    }
}

/// True for a message of the person's that reads as an explicit instruction or a fact
/// to keep (short, with an imperative or "remember" marker): carried verbatim into the
/// pinned layer when the conversation around it is compacted. Pasted material (long
/// text) is summarised instead.
pub fn is_instruction(text: &str) -> bool {
    const MARKERS: &[&str] = &[
        "remember",
        "always",
        "never",
        "don't",
        "do not",
        "must",
        "make sure",
        "keep ",
        "avoid",
        "use ",
        "instruction",
        "note:",
        "fact:",
        "rule:",
        "请",
        "不要",
        "别",
        "必须",
        "记住",
        "一定",
        "保持",
        "避免",
        "务必",
        "始终",
        "禁止",
    ];
    if text.chars().count() > INSTRUCTION_MAX_CHARS {
        return false;
    }
    let lower = text.to_lowercase();
    MARKERS.iter().any(|m| lower.contains(m))
}

/// Where to cut: the index of the first message kept raw. The cut is at a user
/// message; the latest turns are kept while they take at most `keep_tokens` (the last
/// user message and what follows it are always kept). 0: nothing to compact.
pub fn cut_index(messages: &[Message], keep_tokens: u64) -> usize {
    let starts: Vec<usize> = messages.iter().enumerate().filter(|(_, m)| m.role == Role::User).map(|(i, _)| i).collect();
    let Some(&last) = starts.last() else { return 0 };
    let mut cut = last;
    for &start in starts.iter().rev().skip(1) {
        let kept = estimate_request_tokens(&ChatRequest::new(messages[start..].to_vec()));
        if kept > keep_tokens {
            break;
        }
        cut = start;
    }
    cut
}

/// What a compaction keeps raw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Keep {
    /// The latest turn only: the person asked, the server refused the request, or the
    /// request would not fit at all.
    LatestTurn,
    /// The latest turns up to this many tokens (at most [`KEEP_RECENT_PERCENT`] of the
    /// window): the threshold, which sizes it so the next call lands well below it.
    Recent(u64),
}

/// How a compaction ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Nothing older than the latest turn to compact.
    Nothing,
    Compacted {
        mode: CompactionMode,
        tokens_before: u64,
        tokens_after: u64,
    },
    /// The attempt failed; this many in a row.
    Failed {
        consecutive: u32,
    },
}

/// Appends one event of the compaction (with the caller's turn id and emitter).
pub(crate) type Append<'a> = &'a mut dyn FnMut(EventBody, Durability) -> Result<super::Event, ApiError>;

fn conversation_tokens(messages: &[Message], summary: &str) -> u64 {
    estimate_request_tokens(&ChatRequest::new(messages.to_vec())) + estimate_tokens(summary)
}

/// Compacts the conversation of `live`: summarises the messages before the cut with
/// the scope's profile (or truncates, after [`MAX_FAILURES`] failures or during the
/// cooldown), and appends the events. The new summary layer, whatever its form, takes
/// at most `room`'s summary budget, and the person's instructions are carried into
/// the pins only while they fit its pin budget. With nothing to cut, a summary layer
/// over its budget (the window shrank, pins grew) is shortened in place. Errors:
/// engine faults only; a failed model call or an invalid summary is an
/// `Outcome::Failed`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn compact(
    engine: Harness<'_>,
    scope: &Scope,
    live: &Live,
    trigger: CompactionTrigger,
    keep: Keep,
    room: Room,
    append: Append<'_>,
    stats: &mut TurnStats,
) -> Result<Outcome, ApiError> {
    let profile = engine.llm_profile(&scope.profile_id)?;
    let window = u64::from(profile.context_window);
    let budget = room.summary_budget();
    let (messages, previous, failures, cooldown, pinned_texts, sources) = {
        let state = live.lock_state();
        let pinned: Vec<String> = state.pins.iter().map(|p| p.text.clone()).collect();
        (state.messages.clone(), state.summary.clone(), state.compaction.consecutive_failures, state.compaction.in_cooldown(), pinned, state.sources.clone())
    };
    let keep_tokens = match keep {
        Keep::LatestTurn => 0,
        Keep::Recent(tokens) => tokens.min(window * KEEP_RECENT_PERCENT / 100),
    };
    let cut = cut_index(&messages, keep_tokens);
    let tokens_before = conversation_tokens(&messages, &previous);
    let (compacted, kept) = messages.split_at(cut);
    let at = Compaction { trigger, window, budget, tokens_before, previous: &previous, compacted, kept, failures, sources };
    if cut == 0 {
        return at.shorten_summary(append);
    }
    // A compaction never grows the conversation. Messages shorter than the truncation
    // note, with no earlier summary a new one could condense, gain nothing: no summary
    // is asked for.
    if previous.is_empty() && conversation_tokens(kept, &truncation_text(&previous, compacted, budget).0) >= tokens_before {
        return Ok(Outcome::Nothing);
    }
    let instructions = carried_instructions(compacted, pinned_texts, room);
    append(EventBody::CompactionStarted { trigger, estimated_tokens: tokens_before, context_window: window }, Durability::Durable)?;
    let summarise = !(cooldown && trigger != CompactionTrigger::Manual);
    if summarise {
        if let Some(outcome) = at.summarise(engine, scope, live, &profile, &instructions, append, stats)? {
            return Ok(outcome);
        }
    }
    at.truncate(instructions, append)
}

/// One compaction's conversation as it stood at its start, and where it is cut.
struct Compaction<'a> {
    trigger: CompactionTrigger,
    window: u64,
    /// The summary layer's budget.
    budget: u64,
    tokens_before: u64,
    /// The summary layer before the compaction.
    previous: &'a str,
    compacted: &'a [Message],
    kept: &'a [Message],
    /// Failed summarising attempts in a row before this one.
    failures: u32,
    sources: Vec<crate::model::ProvenanceSource>,
}

impl Compaction<'_> {
    /// Nothing older than the latest turn; but a summary layer over its budget is what
    /// takes the room, and shortening it needs no model.
    fn shorten_summary(&self, append: Append<'_>) -> Result<Outcome, ApiError> {
        let Compaction { trigger, window, budget, tokens_before, previous, .. } = *self;
        if estimate_tokens(previous) <= budget {
            return Ok(Outcome::Nothing);
        }
        let summary_text = bound_text(previous, budget);
        let tokens_after = conversation_tokens(self.kept, &summary_text);
        append(EventBody::CompactionStarted { trigger, estimated_tokens: tokens_before, context_window: window }, Durability::Durable)?;
        append(
            EventBody::CompactBoundary {
                trigger,
                mode: CompactionMode::Truncated,
                summary: None,
                summary_text,
                kept_messages: self.kept.len() as u32,
                compacted_messages: 0,
                pinned_instructions: Vec::new(),
                tokens_before,
                tokens_after,
                note: "The summary of earlier conversation was shortened to fit the model's context window.".to_owned(),
                input_tokens: 0,
                output_tokens: 0,
                sources: Some(self.sources.clone()),
            },
            Durability::Durable,
        )?;
        Ok(Outcome::Compacted { mode: CompactionMode::Truncated, tokens_before, tokens_after })
    }

    /// The summarising attempt: a boundary when the summary is valid and shorter, else
    /// a `compaction_failed`; after [`MAX_FAILURES`] in a row, `None` (truncate).
    #[allow(clippy::too_many_arguments)]
    fn summarise(
        &self,
        engine: Harness<'_>,
        scope: &Scope,
        live: &Live,
        profile: &crate::llm::profile::LlmProfile,
        instructions: &[String],
        append: Append<'_>,
        stats: &mut TurnStats,
    ) -> Result<Option<Outcome>, ApiError> {
        let Compaction { trigger, tokens_before, failures, kept, compacted, .. } = *self;
        let mut used = (0u64, 0u64);
        let summarised = summarise_messages(engine, scope, live, profile, self.previous, compacted, self.budget, stats, &mut used)?;
        let failed = match summarised {
            Ok(summary) if conversation_tokens(kept, &summary.text) >= tokens_before => (failures + 1, SummaryError::NotShorter),
            Ok(summary) => {
                let tokens_after = conversation_tokens(kept, &summary.text);
                let note = if summary.structured.is_some() { "Earlier conversation summarised" } else { "Earlier conversation summarised (plain text)" };
                append(
                    EventBody::CompactBoundary {
                        trigger,
                        mode: CompactionMode::Summarized,
                        summary: summary.structured.map(Box::new),
                        summary_text: summary.text,
                        kept_messages: kept.len() as u32,
                        compacted_messages: compacted.len() as u32,
                        pinned_instructions: instructions.to_vec(),
                        tokens_before,
                        tokens_after,
                        note: note.to_owned(),
                        input_tokens: used.0,
                        output_tokens: used.1,
                        sources: Some(self.sources.clone()),
                    },
                    Durability::Durable,
                )?;
                return Ok(Some(Outcome::Compacted { mode: CompactionMode::Summarized, tokens_before, tokens_after }));
            }
            Err(why) => (if why == SummaryError::Stopped { failures } else { failures + 1 }, why),
        };
        let (consecutive, why) = failed;
        let message = why.to_string();
        append(EventBody::CompactionFailed { trigger, consecutive, message, input_tokens: used.0, output_tokens: used.1 }, Durability::Durable)?;
        if consecutive < MAX_FAILURES {
            return Ok(Some(Outcome::Failed { consecutive }));
        }
        Ok(None)
    }

    /// The deterministic truncation: the compacted messages go, a truncation note with
    /// a digest of the person's latest dropped messages stays.
    fn truncate(self, instructions: Vec<String>, append: Append<'_>) -> Result<Outcome, ApiError> {
        let Compaction { trigger, tokens_before, failures, kept, compacted, .. } = self;
        let (summary_text, note) = truncation_text(self.previous, compacted, self.budget);
        let tokens_after = conversation_tokens(kept, &summary_text);
        if tokens_after >= tokens_before {
            let message = "Truncating would not make the conversation shorter; nothing was replaced.".to_owned();
            append(EventBody::CompactionFailed { trigger, consecutive: failures, message, input_tokens: 0, output_tokens: 0 }, Durability::Durable)?;
            return Ok(Outcome::Nothing);
        }
        append(
            EventBody::CompactBoundary {
                trigger,
                mode: CompactionMode::Truncated,
                summary: None,
                summary_text,
                kept_messages: kept.len() as u32,
                compacted_messages: compacted.len() as u32,
                pinned_instructions: instructions,
                tokens_before,
                tokens_after,
                note,
                input_tokens: 0,
                output_tokens: 0,
                sources: Some(self.sources),
            },
            Durability::Durable,
        )?;
        Ok(Outcome::Compacted { mode: CompactionMode::Truncated, tokens_before, tokens_after })
    }
}

/// The person's instructions in the compacted messages that go into the pins verbatim
/// while the pins' budget has room; the others are in the summary (or the
/// truncation's digest) like the rest.
fn carried_instructions(compacted: &[Message], mut pins_after: Vec<String>, room: Room) -> Vec<String> {
    let mut instructions: Vec<String> = Vec::new();
    for m in compacted.iter().filter(|m| m.role == Role::User && is_instruction(&m.content)) {
        if pins_after.iter().any(|p| **p == *m.content) {
            continue;
        }
        pins_after.push(m.content.to_string());
        if pins_tokens(&pins_after) > room.pin_budget() {
            pins_after.pop();
            continue;
        }
        instructions.push(m.content.to_string());
    }
    instructions
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn instructions_are_short_and_marked_material_is_not() {
        assert!(is_instruction("Remember: the launch date is 12 March."));
        assert!(is_instruction("不要用“最佳”"));
        assert!(is_instruction("Always sign off as Lin."));
        assert!(!is_instruction("Here is the interview transcript."));
        assert!(!is_instruction(&format!("Remember this: {}", "x".repeat(2_000))));
    }

    #[test]
    fn the_cut_is_at_a_user_message_and_keeps_the_last_turn() {
        let m = vec![
            Message::user("a"),
            Message::assistant("b", vec![crate::llm::ToolCall { id: "c1".into(), name: "t".into(), arguments: "{}".into() }]),
            Message::tool_result("c1", "r".repeat(400)),
            Message::user("d"),
            Message::assistant("e", Vec::new()),
        ];
        assert_eq!(cut_index(&m, 0), 3, "the last turn always stays");
        assert_eq!(cut_index(&m, 1_000_000), 0, "all of it fits the kept share: nothing to compact");
        assert_eq!(cut_index(&m, 30), 3, "the earlier turn (with its tool result) does not fit the share");
        assert_eq!(cut_index(&m[..1], 0), 0);
    }
}
