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

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use ts_rs::TS;

use super::event::EventBody;
use super::turn::TurnStats;
use super::{Harness, Live, Scope};
use crate::error::{ApiError, ErrorCode};
use crate::llm::profile::LlmProfile;
use crate::llm::structured::{extract_json, Validator};
use crate::llm::{estimate_request_tokens, estimate_tokens, ChatRequest, Message, ModelCall, Role};
use crate::store::{Durability, Kind, Record};

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
/// The heading of every summary layer (the panel strips it when it shows the text).
const SUMMARY_HEADING: &str = "# Earlier conversation (summarised; the full log is kept)";

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
    pub(crate) fn pins_over(self, pins: &[String]) -> Option<PinsTooLong> {
        let needed = pins_tokens(pins);
        let budget = self.pin_budget();
        (needed > budget).then_some(PinsTooLong { needed, budget, free: self.free_tokens })
    }
}

/// Pins that take more than their share of the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PinsTooLong {
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

/// The first line of every summarising request's system message (tests tell these
/// requests apart by it).
pub const COMPACTION_PROMPT_HEAD: &str = "You compact a drafting session's conversation.";

const COMPACTION_PROMPT: &str = "You compact a drafting session's conversation. \
Read the earlier summary (if any) and the conversation below, and answer with one JSON object only, no prose, with these fields: \
summary (what happened, in the conversation's language), user_intent (what the person wants now), \
accepted_changes (list of {proposal_id, version}: proposals the person accepted and the version each made), \
rejected_directions (list of {direction, reason}: what the person turned down and why, in their words), \
open_tasks (list of strings), active_artifacts (list of strings: drafts, platforms, sections being worked on), \
source_refs (list of strings: stored result refs, version ids, sources quoted), next_step_hint (string). \
Keep names, numbers, dates and quotes exact. Do not invent anything.";

/// The prompt for a server that cannot constrain its reply to a schema: prose is asked
/// for (small local models write it far more reliably than JSON).
const COMPACTION_PROMPT_TEXT: &str = "You compact a drafting session's conversation. \
Read the earlier summary (if any) and the conversation below, and write a short summary in plain text, in the conversation's language, no JSON: \
what happened, what the person wants now, the changes they accepted and the directions they turned down (with their reasons), \
open tasks, and the next step. Keep names, numbers, dates and quotes exact. Do not invent anything. Be brief.";

/// When a session compacts by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "mode", rename_all = "camelCase")]
pub enum CompactThreshold {
    /// At `percent` of the context window (40–95).
    Auto { percent: u8 },
    /// Only when the person asks (or when a request would not fit at all).
    Manual,
}

impl CompactThreshold {
    /// The automatic share, if any.
    pub fn percent(self) -> Option<u32> {
        match self {
            CompactThreshold::Auto { percent } => Some(u32::from(percent)),
            CompactThreshold::Manual => None,
        }
    }

    /// Refuses a share outside 40–95%.
    pub fn check(self, field: &str) -> Result<CompactThreshold, ApiError> {
        match self {
            CompactThreshold::Auto { percent } if !(MIN_COMPACT_PERCENT..=MAX_COMPACT_PERCENT).contains(&percent) => {
                Err(ApiError::validation(field, format!("The compaction threshold must be between {MIN_COMPACT_PERCENT}% and {MAX_COMPACT_PERCENT}% (or manual).")))
            }
            other => Ok(other),
        }
    }
}

impl Default for CompactThreshold {
    fn default() -> Self {
        CompactThreshold::Auto { percent: DEFAULT_COMPACT_PERCENT }
    }
}

/// What started a compaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum CompactionMode {
    /// By a validated summary.
    Summarized,
    /// By a truncation note (summarising failed three times, or the cooldown).
    Truncated,
}

/// Where a pin came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum PinSource {
    /// `session.pin`.
    Person,
    /// An explicit instruction of the person, carried out of compacted conversation.
    Instruction,
}

/// A text in the pinned layer of every call, verbatim.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Pin {
    pub id: String,
    pub text: String,
    pub source: PinSource,
}

/// An accepted proposal and the version it made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct AcceptedChange {
    pub proposal_id: String,
    #[serde(default)]
    #[ts(optional)]
    pub version: Option<u64>,
}

/// A direction the person turned down, with their reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct RejectedDirection {
    pub direction: String,
    #[serde(default)]
    pub reason: String,
}

/// The validated output of a summarising call (field names as the model writes them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct CompactionSummary {
    pub summary: String,
    #[serde(default)]
    pub user_intent: String,
    #[serde(default)]
    pub accepted_changes: Vec<AcceptedChange>,
    #[serde(default)]
    pub rejected_directions: Vec<RejectedDirection>,
    #[serde(default)]
    pub open_tasks: Vec<String>,
    #[serde(default)]
    pub active_artifacts: Vec<String>,
    #[serde(default)]
    pub source_refs: Vec<String>,
    #[serde(default)]
    pub next_step_hint: String,
}

/// The JSON schema a summary must satisfy.
pub fn summary_schema() -> Value {
    let strings = json!({"type": "array", "items": {"type": "string"}});
    json!({
        "type": "object",
        "required": ["summary", "user_intent", "accepted_changes", "rejected_directions", "open_tasks", "active_artifacts", "source_refs", "next_step_hint"],
        "properties": {
            "summary": {"type": "string", "minLength": 1},
            "user_intent": {"type": "string"},
            "accepted_changes": {"type": "array", "items": {"type": "object", "required": ["proposal_id"], "properties": {"proposal_id": {"type": "string"}, "version": {"type": ["integer", "null"], "minimum": 0}}}},
            "rejected_directions": {"type": "array", "items": {"type": "object", "required": ["direction"], "properties": {"direction": {"type": "string"}, "reason": {"type": "string"}}}},
            "open_tasks": strings,
            "active_artifacts": strings,
            "source_refs": strings,
            "next_step_hint": {"type": "string"}
        }
    })
}

/// A profile's context settings: the calibration of the token estimate against the
/// usage its server reports, and its compaction threshold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ProfileContext {
    pub profile_id: String,
    /// Reported input tokens ÷ estimated input tokens (1.0 until calibrated).
    pub ratio: f64,
    /// Calls the ratio was learnt from.
    pub samples: u32,
    /// `None`: the default (80%).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub threshold: Option<CompactThreshold>,
    /// The server's tokenizer count the ratio was seeded from at profile test (`None`:
    /// learnt from usage alone, or not calibrated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub seed: Option<CalibrationSeed>,
}

/// A calibration read from the server's own tokenizer: it counted a fixed sample
/// (the one of [`crate::llm::window::TOKENIZER_SAMPLES`] it undercounts most) as
/// `server_tokens` where the estimate
/// says `estimated_tokens`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CalibrationSeed {
    pub endpoint: crate::llm::window::TokenizerEndpoint,
    pub server_tokens: u64,
    pub estimated_tokens: u64,
    pub at: crate::model::Timestamp,
}

const META_PROFILE_CONTEXT: &str = "profile_context/";
/// The key prefix of every profile's context settings in the meta tree (the export
/// carries them).
pub const META_PROFILE_CONTEXT_PREFIX: &[u8] = META_PROFILE_CONTEXT.as_bytes();

impl Record for ProfileContext {
    const KIND: Kind = Kind::Meta;
    fn key(&self) -> Vec<u8> {
        profile_context_key(&self.profile_id)
    }
}

fn profile_context_key(profile_id: &str) -> Vec<u8> {
    format!("{META_PROFILE_CONTEXT}{profile_id}").into_bytes()
}

impl ProfileContext {
    fn new(profile_id: &str) -> ProfileContext {
        ProfileContext { profile_id: profile_id.to_owned(), ratio: 1.0, samples: 0, threshold: None, seed: None }
    }

    /// An estimate corrected by the calibration.
    pub fn calibrated(&self, estimate: u64) -> u64 {
        (estimate as f64 * self.ratio).ceil() as u64
    }

    /// Folds one observation in (a running mean over the last ten or so calls; one
    /// odd answer moves it little). Samples outside ¼–4× are ignored as noise.
    pub fn learn(&mut self, estimated: u64, reported: u64) {
        if estimated == 0 || reported == 0 {
            return;
        }
        let sample = reported as f64 / estimated as f64;
        if !(0.25..=4.0).contains(&sample) {
            return;
        }
        let weight = f64::from(self.samples.min(9));
        self.ratio = (self.ratio * weight + sample) / (weight + 1.0);
        self.samples = self.samples.saturating_add(1);
    }
}

impl ProfileContext {
    /// Seeds the ratio from the server's tokenizer count of the sample: before any
    /// usage was learnt the count sets the ratio (as one sample, so the usage of real
    /// calls refines it); after, it is folded in as one more observation. A count
    /// outside ¼–4× of the estimate is ignored, as in [`ProfileContext::learn`].
    /// Returns whether it was taken.
    pub fn seed_from_tokenizer(&mut self, seed: CalibrationSeed) -> bool {
        let (estimated, counted) = (seed.estimated_tokens, seed.server_tokens);
        if estimated == 0 || !(0.25..=4.0).contains(&(counted as f64 / estimated as f64)) {
            return false;
        }
        if self.samples == 0 || (self.seed.is_some() && self.samples == 1) {
            // Untouched, or only the last test's seed: the new count replaces it.
            self.ratio = counted as f64 / estimated as f64;
            self.samples = 1;
        } else {
            self.learn(estimated, counted);
        }
        self.seed = Some(seed);
        true
    }
}

/// The profile's context settings (the defaults when none are stored).
pub fn profile_context(store: &crate::store::Store, profile_id: &str) -> Result<ProfileContext, ApiError> {
    Ok(store.get::<ProfileContext>(&profile_context_key(profile_id))?.unwrap_or_else(|| ProfileContext::new(profile_id)))
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

/// The text the summarising model reads for `messages`: tool results as a preview and
/// their stored reference.
fn transcript_lines(messages: &[Message]) -> Vec<String> {
    messages
        .iter()
        .map(|m| match m.role {
            Role::User => format!("[person] {}", m.content),
            Role::Assistant => {
                let calls: Vec<String> = m.tool_calls.iter().map(|c| format!("{}({})", c.name, c.arguments.chars().take(300).collect::<String>())).collect();
                if calls.is_empty() {
                    format!("[assistant] {}", m.content)
                } else {
                    format!("[assistant] {} [tool calls: {}]", m.content, calls.join("; "))
                }
            }
            Role::Tool => {
                let chars = m.content.chars().count();
                let preview: String = m.content.chars().take(TOOL_PREVIEW_CHARS).collect();
                let id = m.tool_call_id.as_deref().unwrap_or("");
                if chars > TOOL_PREVIEW_CHARS {
                    format!("[tool result {id}] {preview}… ({chars} characters; the full result is kept in the log)")
                } else {
                    format!("[tool result {id}] {preview}")
                }
            }
            Role::System => format!("[note] {}", m.content),
        })
        .collect()
}

/// The session summary layer's text for a summary.
pub fn render_summary(summary: &CompactionSummary) -> String {
    let mut out = format!("{SUMMARY_HEADING}\n{}\n", summary.summary.trim());
    if !summary.user_intent.trim().is_empty() {
        out.push_str(&format!("\nThe person wants: {}\n", summary.user_intent.trim()));
    }
    if !summary.accepted_changes.is_empty() {
        let changes: Vec<String> =
            summary.accepted_changes.iter().map(|c| c.version.map_or_else(|| c.proposal_id.clone(), |v| format!("{} → version {v}", c.proposal_id))).collect();
        out.push_str(&format!("Accepted changes: {}\n", changes.join("; ")));
    }
    if !summary.rejected_directions.is_empty() {
        out.push_str("Rejected directions:\n");
        for r in &summary.rejected_directions {
            out.push_str(&format!("- {} (reason: {})\n", r.direction, r.reason));
        }
    }
    let lists = [("Open tasks", &summary.open_tasks), ("Active artifacts", &summary.active_artifacts), ("Sources", &summary.source_refs)];
    for (title, items) in lists {
        if !items.is_empty() {
            out.push_str(&format!("{title}: {}\n", items.join("; ")));
        }
    }
    if !summary.next_step_hint.trim().is_empty() {
        out.push_str(&format!("Next step: {}\n", summary.next_step_hint.trim()));
    }
    out
}

/// The summary layer of a plain-text summary, within `budget` estimated tokens.
fn render_plain(text: &str, budget: u64) -> String {
    bound_text(&format!("{SUMMARY_HEADING}\n{}\n", text.trim()), budget)
}

/// The truncation note: what was dropped, with the earlier summary's head and a digest
/// of the person's latest dropped messages, all within `budget` estimated tokens (the
/// note itself is always there): a truncation after a truncation does not grow.
fn truncation_text(previous: &str, dropped: &[Message], budget: u64) -> (String, String) {
    let note = format!(
        "{} earlier messages were removed without a summary (summarising failed); the full log is kept and the person can read it. The person's instructions among them are pinned as far as the pins' budget allows.",
        dropped.len()
    );
    let heading = format!("# Truncated conversation\n{note}\n");
    let mut left = budget.saturating_sub(estimate_tokens(&heading));
    let mut text = String::new();
    if !previous.trim().is_empty() && left / 2 > 8 {
        text.push_str(&bound_text(previous.trim_end(), left / 2));
        text.push('\n');
        left = left.saturating_sub(estimate_tokens(&text));
    }
    text.push_str(&heading);
    const DIGEST_HEADING: &str = "The person's latest earlier messages began:\n";
    left = left.saturating_sub(estimate_tokens(DIGEST_HEADING));
    let mut digest: Vec<String> = Vec::new();
    for m in dropped.iter().rev().filter(|m| m.role == Role::User) {
        let line = format!("- {}\n", m.content.chars().take(DIGEST_CHARS).collect::<String>().trim_end());
        let tokens = estimate_tokens(&line);
        if tokens > left {
            break;
        }
        left -= tokens;
        digest.push(line);
    }
    if !digest.is_empty() {
        text.push_str(DIGEST_HEADING);
        digest.reverse();
        text.push_str(&digest.concat());
    }
    (text, note)
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
pub(crate) enum Outcome {
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
    if cut == 0 {
        // Nothing older than the latest turn; but a summary layer over its budget is
        // what takes the room, and shortening it needs no model.
        if estimate_tokens(&previous) <= budget {
            return Ok(Outcome::Nothing);
        }
        let summary_text = bound_text(&previous, budget);
        let tokens_after = conversation_tokens(&messages, &summary_text);
        append(EventBody::CompactionStarted { trigger, estimated_tokens: tokens_before, context_window: window }, Durability::Durable)?;
        append(
            EventBody::CompactBoundary {
                trigger,
                mode: CompactionMode::Truncated,
                summary: None,
                summary_text,
                kept_messages: messages.len() as u32,
                compacted_messages: 0,
                pinned_instructions: Vec::new(),
                tokens_before,
                tokens_after,
                note: "The summary of earlier conversation was shortened to fit the model's context window.".to_owned(),
                input_tokens: 0,
                output_tokens: 0,
                sources: Some(sources.clone()),
            },
            Durability::Durable,
        )?;
        return Ok(Outcome::Compacted { mode: CompactionMode::Truncated, tokens_before, tokens_after });
    }
    let (compacted, kept) = messages.split_at(cut);
    // A compaction never grows the conversation. Messages shorter than the truncation
    // note, with no earlier summary a new one could condense, gain nothing: no summary
    // is asked for.
    if previous.is_empty() && conversation_tokens(kept, &truncation_text(&previous, compacted, budget).0) >= tokens_before {
        return Ok(Outcome::Nothing);
    }
    // The person's instructions go into the pins verbatim while the pins' budget has
    // room; the others are in the summary (or the truncation's digest) like the rest.
    let mut instructions: Vec<String> = Vec::new();
    let mut pins_after = pinned_texts.clone();
    for m in compacted.iter().filter(|m| m.role == Role::User && is_instruction(&m.content)) {
        if pins_after.contains(&m.content) {
            continue;
        }
        pins_after.push(m.content.clone());
        if pins_tokens(&pins_after) > room.pin_budget() {
            pins_after.pop();
            continue;
        }
        instructions.push(m.content.clone());
    }
    append(EventBody::CompactionStarted { trigger, estimated_tokens: tokens_before, context_window: window }, Durability::Durable)?;
    let summarise = !(cooldown && trigger != CompactionTrigger::Manual);
    if summarise {
        let mut used = (0u64, 0u64);
        let summarised = summarise_messages(engine, scope, live, &profile, &previous, compacted, budget, stats, &mut used)?;
        let failed = match summarised {
            Ok(summary) if conversation_tokens(kept, &summary.text) >= tokens_before => {
                (failures + 1, "The summary was not shorter than the messages it would replace; nothing was replaced.".to_owned())
            }
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
                        pinned_instructions: instructions,
                        tokens_before,
                        tokens_after,
                        note: note.to_owned(),
                        input_tokens: used.0,
                        output_tokens: used.1,
                        sources: Some(sources.clone()),
                    },
                    Durability::Durable,
                )?;
                return Ok(Outcome::Compacted { mode: CompactionMode::Summarized, tokens_before, tokens_after });
            }
            Err(message) => (if message == STOPPED { failures } else { failures + 1 }, message),
        };
        let (consecutive, message) = failed;
        append(EventBody::CompactionFailed { trigger, consecutive, message, input_tokens: used.0, output_tokens: used.1 }, Durability::Durable)?;
        if consecutive < MAX_FAILURES {
            return Ok(Outcome::Failed { consecutive });
        }
    }
    let (summary_text, note) = truncation_text(&previous, compacted, budget);
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
            sources: Some(sources),
        },
        Durability::Durable,
    )?;
    Ok(Outcome::Compacted { mode: CompactionMode::Truncated, tokens_before, tokens_after })
}

/// A summary the model gave: the summary layer's text (within its budget) and the
/// structured fields when the reply had them.
struct Summarised {
    text: String,
    structured: Option<CompactionSummary>,
}

/// Reads a summarising reply: a JSON summary that validates (or, leniently, one whose
/// fields have the right types and a summary) is structured; prose is a plain-text
/// summary. `Err`: nothing usable (empty, or JSON that broke off or has no summary).
fn read_summary(reply: &str, validator: &Validator, budget: u64) -> Result<Summarised, String> {
    let trimmed = reply.trim();
    if trimmed.is_empty() {
        return Err("The summary was empty.".to_owned());
    }
    if let Some(value) = extract_json(trimmed) {
        let valid = validator.check(&value).is_ok();
        if let Ok(summary) = serde_json::from_value::<CompactionSummary>(value.clone()) {
            if valid || !summary.summary.trim().is_empty() {
                return Ok(Summarised { text: bound_text(&render_summary(&summary), budget), structured: Some(summary) });
            }
        }
        return match value.get("summary").and_then(Value::as_str).filter(|t| !t.trim().is_empty()) {
            Some(text) => Ok(Summarised { text: render_plain(text, budget), structured: None }),
            None => Err("The summary broke its schema: it has no summary text.".to_owned()),
        };
    }
    // JSON that broke off (the output limit, a grammar that gave up) is not prose.
    if trimmed.starts_with('{') || trimmed.starts_with('[') || trimmed.starts_with("```json") {
        return Err("The summary was JSON that broke off.".to_owned());
    }
    Ok(Summarised { text: render_plain(trimmed, budget), structured: None })
}

/// The summarising calls: the compacted messages in chunks that fit the window with
/// the prompt, the summary so far and the output reserve; each chunk's summary feeds
/// the next. A server that can constrain its reply to a schema is asked for the
/// structured summary, any other for prose; either answer is taken. `Ok(Err(message))`:
/// the model failed or its answer was unusable. `spent` adds up the tokens of every
/// answered call, a rejected answer included.
#[allow(clippy::too_many_arguments)]
fn summarise_messages(
    engine: Harness<'_>,
    scope: &Scope,
    live: &Live,
    profile: &LlmProfile,
    previous: &str,
    messages: &[Message],
    budget: u64,
    stats: &mut TurnStats,
    spent: &mut (u64, u64),
) -> Result<Result<Summarised, String>, ApiError> {
    let window = u64::from(profile.context_window);
    // Room for the summary the layer can take, and for a JSON object's field names.
    let wanted = (budget + 128).min(u64::from(SUMMARY_OUTPUT_TOKENS)) as u32;
    let output = wanted.min(profile.max_output_tokens.unwrap_or(u32::MAX)).min(profile.context_window / 4).max(1);
    let validator = Validator::new(&summary_schema()).map_err(|e| ApiError::internal(e.to_string()))?;
    let mut response_format = profile.response_format("compaction", &summary_schema());
    let mut prompt = if matches!(response_format, crate::llm::ResponseFormat::Text) { COMPACTION_PROMPT_TEXT } else { COMPACTION_PROMPT };
    let lines = transcript_lines(messages);
    let mut summary_so_far = previous.to_owned();
    let mut result: Option<Summarised> = None;
    let mut index = 0;
    while index < lines.len() {
        let chunk_start = index;
        let fixed = estimate_tokens(prompt) + estimate_tokens(&summary_so_far) + u64::from(output) + 64;
        let room = window.saturating_sub(fixed);
        if room < 64 {
            return Ok(Err(format!("The context window ({window} tokens) is too small to summarise in.")));
        }
        let mut chunk = String::new();
        let mut used = 0;
        while index < lines.len() {
            let line = &lines[index];
            let tokens = estimate_tokens(line) + 1;
            if used + tokens > room {
                if chunk.is_empty() {
                    // One message larger than the room: its head.
                    chunk.push_str(&bound_text(line, room.saturating_sub(2)));
                    chunk.push('\n');
                    index += 1;
                }
                break;
            }
            chunk.push_str(line);
            chunk.push('\n');
            used += tokens;
            index += 1;
        }
        let mut user = String::new();
        if !summary_so_far.is_empty() {
            user.push_str(&format!("# Earlier summary\n{summary_so_far}\n\n"));
        }
        user.push_str(&format!("# Conversation to summarise\n{chunk}"));
        let mut request = ChatRequest::new(vec![Message::system(prompt), Message::user(user)]);
        request.max_output_tokens = Some(output);
        request.temperature = Some(0.0);
        request.response_format = response_format.clone();
        let cancel = live.cancel.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let call = ModelCall { profile: &scope.profile_id, purpose: "compaction", session_id: scope.owner.session_id(), run_id: scope.owner.run_id() };
        let started = std::time::Instant::now();
        let reply = engine.model_chat(call, &request, &mut |_| {}, &cancel);
        stats.model_calls += 1;
        stats.model_time += started.elapsed();
        let reply = match reply {
            Ok(reply) => reply,
            Err(error) if matches!(error.code, ErrorCode::Internal | ErrorCode::StoreCorrupt | ErrorCode::Io) => return Err(error),
            // The person stopped it: closed as failed, not counted against the breaker.
            Err(error) if error.code == ErrorCode::Cancelled => return Ok(Err(STOPPED.to_owned())),
            Err(error) => return Ok(Err(format!("{:?}: {}", error.code, error.message))),
        };
        spent.0 += reply.usage.input_tokens;
        spent.1 += reply.usage.output_tokens;
        let summarised = match read_summary(&reply.text, &validator, budget) {
            Ok(summarised) => summarised,
            // A server that accepts a schema but whose model answers JSON without the
            // summary (small local models do): the same chunk once more, asking for
            // prose, before the attempt counts as failed.
            Err(_) if !matches!(response_format, crate::llm::ResponseFormat::Text) => {
                response_format = crate::llm::ResponseFormat::Text;
                prompt = COMPACTION_PROMPT_TEXT;
                index = chunk_start;
                continue;
            }
            Err(message) => return Ok(Err(message)),
        };
        summary_so_far = summarised.text.clone();
        result = Some(summarised);
    }
    Ok(result.ok_or_else(|| "Nothing to summarise.".to_owned()))
}

/// The room of `session`'s next request (see [`Room`]), worked out as its model call
/// would, without its pins and summary. Errors: the profile cannot be read, store
/// errors.
pub(crate) fn session_room(engine: Harness<'_>, session: &super::Session, state: &super::SessionState) -> Result<Room, ApiError> {
    let mut bare = state.clone();
    bare.pins.clear();
    bare.summary.clear();
    let overhead = super::model_call::session_overhead(engine, session, &bare)?;
    let profile = engine.llm_profile(&session.profile_id)?;
    let calibration = profile_context(engine.store(), &profile.id)?;
    Ok(Room::new(u64::from(profile.context_window), overhead.fixed_total(), calibration.ratio))
}

/// The failure message of a compaction the person interrupted.
const STOPPED: &str = "Stopped by the user; nothing was replaced.";

/// The longest pin, in characters.
pub const MAX_PIN_CHARS: usize = 4_000;

impl Harness<'_> {
    /// Pins a text for the rest of the session (verbatim in the pinned layer of every
    /// call; never summarised). Errors: NOT_FOUND, VALIDATION (empty, too long).
    /// Errors also CONTEXT_TOO_LONG when the pins with this one would take more than
    /// their share of the model's window ([`Room::pin_budget`]), with what to unpin.
    pub(crate) fn pin(&self, session_id: &str, text: &str) -> Result<super::Event, ApiError> {
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
        self.append_event(&live, super::Meta::default(), EventBody::PinAdded { pin_id, text, source: PinSource::Person }, crate::store::Batch::new(), Durability::Durable)
    }

    /// Removes a pin (the person's, or a carried instruction). Errors: NOT_FOUND.
    pub(crate) fn unpin(&self, session_id: &str, pin_id: &str) -> Result<super::Event, ApiError> {
        let live = self.live_session(session_id)?;
        if !live.lock_state().pins.iter().any(|p| p.id == pin_id) {
            return Err(ApiError::not_found("pin", pin_id));
        }
        self.append_event(&live, super::Meta::default(), EventBody::PinRemoved { pin_id: pin_id.to_owned() }, crate::store::Batch::new(), Durability::Durable)
    }

    /// Sets the session's own threshold (`None`: the profile's).
    pub(crate) fn set_compaction_threshold(&self, session_id: &str, threshold: Option<CompactThreshold>) -> Result<(), ApiError> {
        let threshold = threshold.map(|t| t.check("threshold")).transpose()?;
        let live = self.live_session(session_id)?;
        if live.lock_state().compaction.threshold == threshold {
            return Ok(());
        }
        self.append_event(&live, super::Meta::default(), EventBody::CompactionSettingChanged { threshold }, crate::store::Batch::new(), Durability::Durable)?;
        Ok(())
    }
}

/// Sets a profile's compaction threshold (`None`: the default). Errors: NOT_FOUND
/// for an unknown profile; VALIDATION outside 40–95%.
pub fn set_profile_threshold(kernel: &crate::kernel::Kernel, profile: &str, threshold: Option<CompactThreshold>) -> Result<ProfileContext, ApiError> {
    let threshold = threshold.map(|t| t.check("threshold")).transpose()?;
    let profile = kernel.llm_profile(profile)?;
    let _guard = kernel.write_lock();
    let mut context = profile_context(kernel.store(), &profile.id)?;
    context.threshold = threshold;
    let mut batch = crate::store::Batch::new();
    batch.put(&context)?;
    kernel.store().apply(batch, Durability::Durable)?;
    Ok(context)
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

    #[test]
    fn thresholds_are_checked_and_the_calibration_moves_slowly() {
        assert!(CompactThreshold::Auto { percent: 39 }.check("t").is_err());
        assert!(CompactThreshold::Auto { percent: 95 }.check("t").is_ok());
        assert_eq!(CompactThreshold::default().percent(), Some(80));
        assert_eq!(serde_json::to_value(CompactThreshold::Manual).unwrap(), json!({"mode": "manual"}));
        let mut c = ProfileContext::new("p");
        c.learn(100, 150);
        assert!((c.ratio - 1.5).abs() < 1e-9, "the first sample is taken as is");
        c.learn(100, 100);
        assert!(c.ratio > 1.2 && c.ratio < 1.5);
        c.learn(100, 10_000);
        assert_eq!(c.samples, 2, "noise is ignored");
        assert_eq!(c.calibrated(100), (100.0 * c.ratio).ceil() as u64);
    }

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
    fn a_truncation_after_truncations_stays_within_its_budget_and_quotes_the_latest_messages() {
        let dropped: Vec<Message> = (0..40).flat_map(|i| [Message::user(format!("第{i}段：{}", "茶".repeat(600))), Message::assistant("好", Vec::new())]).collect();
        let mut summary = String::new();
        for budget in [300u64, 300, 300, 300, 120] {
            let (text, note) = truncation_text(&summary, &dropped, budget);
            assert!(estimate_tokens(&text) <= budget.max(estimate_tokens(&note) + 8), "{} > {budget}: {text}", estimate_tokens(&text));
            assert!(text.contains("removed without a summary"));
            summary = text;
        }
        let (text, _) = truncation_text("", &dropped, 400);
        assert!(text.contains("- 第39段") && !text.contains("- 第0段"), "the latest dropped messages are quoted: {text}");
        let (tiny, note) = truncation_text(&"x".repeat(10_000), &dropped, 10);
        assert!(tiny.contains(&note) && !tiny.contains("xxx"), "a budget smaller than the note keeps the note alone: {tiny}");
    }

    #[test]
    fn a_summary_may_be_json_lenient_json_or_prose_and_nothing_else() {
        let validator = Validator::new(&summary_schema()).unwrap();
        let full = json!({"summary": "Drafted.", "user_intent": "", "accepted_changes": [], "rejected_directions": [], "open_tasks": [], "active_artifacts": [], "source_refs": [], "next_step_hint": ""});
        let read = read_summary(&full.to_string(), &validator, 500).unwrap();
        assert!(read.structured.is_some() && read.text.contains("Drafted."));
        let partial = read_summary(r#"{"summary": "Only a summary."}"#, &validator, 500).unwrap();
        assert_eq!(partial.structured.map(|s| s.summary), Some("Only a summary.".to_owned()), "missing fields default");
        let typed_wrong = read_summary(r#"{"summary": "Kept.", "open_tasks": "one task"}"#, &validator, 500).unwrap();
        assert!(typed_wrong.structured.is_none() && typed_wrong.text.contains("Kept."), "the summary text of a JSON with wrong types");
        let prose = read_summary("作者贴了三段春茶的文字。下一步：写第三节。", &validator, 500).unwrap();
        assert!(prose.structured.is_none() && prose.text.starts_with(SUMMARY_HEADING) && prose.text.contains("写第三节"));
        let long = read_summary(&"很长的摘要。".repeat(1_000), &validator, 200).unwrap();
        assert!(estimate_tokens(&long.text) <= 200, "prose is bounded");
        assert!(read_summary("  ", &validator, 500).is_err());
        assert!(read_summary(r#"{"summary": "The person pas"#, &validator, 500).is_err(), "JSON that broke off is not prose");
        assert!(read_summary(r#"{"open_tasks": []}"#, &validator, 500).is_err());
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

    #[test]
    fn a_summary_validates_and_renders_every_field() {
        let value = json!({"summary": "Drafted the intro.", "user_intent": "A launch post", "accepted_changes": [{"proposal_id": "prp_1", "version": 3}],
            "rejected_directions": [{"direction": "clickbait title", "reason": "不要标题党"}], "open_tasks": ["outline"], "active_artifacts": ["wechat"],
            "source_refs": ["sha256:ab"], "next_step_hint": "write section 2"});
        Validator::new(&summary_schema()).unwrap().check(&value).unwrap();
        let summary: CompactionSummary = serde_json::from_value(value).unwrap();
        let text = render_summary(&summary);
        for part in ["Drafted the intro.", "prp_1 → version 3", "clickbait title (reason: 不要标题党)", "outline", "wechat", "sha256:ab", "write section 2"] {
            assert!(text.contains(part), "{part} in {text}");
        }
        assert!(Validator::new(&summary_schema()).unwrap().check(&json!({"summary": "x"})).is_err());
    }
}
