//! What every request of a session carries whatever its conversation (the smallest
//! system message, the tool definitions, the reply's reserve), and the room a drafting
//! step's reply is given: what the person sees in `session.context`, and what tells a
//! window too small for any request from a conversation grown too long.

use crate::context::{assemble, gather};
use crate::error::ApiError;
use crate::harness::event::TurnEndReason;
use crate::harness::turn::{hint, Flow};
use crate::llm::profile::LlmProfile;

/// What every request of a session carries whatever its conversation: the smallest
/// system message the context can be trimmed to, the tool definitions it sends, and
/// the room reserved for the reply (estimated tokens, calibrated for the profile).
/// `session.context` reports the same parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overhead {
    pub system_prompt_tokens: u64,
    pub tool_tokens: u64,
    /// The step's reserve as far as the window leaves it after the fixed part (never
    /// less than the floor).
    pub reply_reserve_tokens: u64,
    /// The least the reply may be left ([`ReplyReserve::floor`]).
    pub reply_floor_tokens: u64,
}

impl Overhead {
    pub(crate) fn of(
        input: &crate::context::ContextInput<'_>,
        estimated_tool_tokens: u64,
        reserve: ReplyReserve,
        window: u64,
        calibration: &crate::harness::compaction::ProfileContext,
    ) -> Overhead {
        // With no room at all, `assemble` reports what its smallest form needs.
        let system = match assemble(input, 0) {
            Ok(snapshot) => snapshot.layers.iter().map(|l| l.tokens).sum(),
            Err(too_long) => too_long.needed,
        };
        let system_prompt_tokens = calibration.calibrated(system);
        let tool_tokens = calibration.calibrated(estimated_tool_tokens);
        let floor = u64::from(reserve.floor);
        let left = window.saturating_sub(system_prompt_tokens + tool_tokens);
        Overhead { system_prompt_tokens, tool_tokens, reply_reserve_tokens: u64::from(reserve.wanted).min(left).max(floor), reply_floor_tokens: floor }
    }

    /// The fixed part with the least a reply may be left: over the window, nothing
    /// can be sent.
    pub(crate) fn fixed_total(&self) -> u64 {
        self.system_prompt_tokens + self.tool_tokens + self.reply_floor_tokens
    }

    /// The end of a turn whose fixed part alone does not fit the window: said as such
    /// (not as a long conversation), with what would make room.
    pub(super) fn too_long(&self, window: u64, tool_set: crate::harness::tools::ToolSet) -> Flow {
        let (system, tools, reserve) = (self.system_prompt_tokens.to_string(), self.tool_tokens.to_string(), self.reply_floor_tokens.to_string());
        let window_text = window.to_string();
        let mut hints = vec![crate::error::Hint::with(
            "context_overhead",
            format!("The system prompt takes about {system} tokens and the tool definitions about {tools}; {reserve} are reserved for the reply, of a window of {window_text}."),
            &[("system", &system), ("tools", &tools), ("reserve", &reserve), ("window", &window_text)],
        )];
        if tool_set == crate::harness::tools::ToolSet::All {
            hints.push(hint(
                "tools_on_demand",
                "Or let this model load tools on demand (Settings → AI models): each request then carries about 1,400 fewer tokens of tool definitions.",
            ));
        }
        hints.push(hint("larger_context", "Or choose a model with a larger context window."));
        Flow::End(
            TurnEndReason::FixedContextTooLong,
            format!(
                "The model's context window ({window} tokens) cannot hold the fixed part of a request: the system prompt (about {system} tokens) and the tool definitions (about {tools}) with the reply's reserve of {reserve}. Nothing was sent and nothing was compacted: the conversation is not what takes the room."
            ),
            hints,
        )
    }
}

/// The fixed part of the next request of `session` (see [`Overhead`]), worked out as
/// the next model call would: its context input, the tools its profile's loading
/// offers for the conversation, the reply reserve of its limits and profile.
pub fn session_overhead(engine: crate::harness::Harness<'_>, session: &crate::harness::Session, state: &crate::harness::SessionState) -> Result<Overhead, ApiError> {
    let store = engine.store();
    let profile = engine.llm_profile(&session.profile_id)?;
    let calibration = crate::harness::compaction::profile_context(store, &profile.id)?;
    let records = gather(store, &session.project_id)?;
    let constraints: Vec<String> = crate::proposals::apply::constraints(store, &session.id)?.into_iter().map(|c| c.text).collect();
    let pins: Vec<String> = state.pins.iter().map(|p| p.text.clone()).collect();
    let workspace_id = engine.session_scope(session)?.workspace_id;
    let extras = crate::harness::context_extras(store, &workspace_id, &records, &state.intent)?;
    let prompts = crate::prompts::PromptSet::load(&engine.config().data_dir.join("prompts"))?;
    let prompt = prompts.compose(&prompt_mode(state.mode), crate::prompts::Entry::Article);
    let input = crate::context::ContextInput {
        intent: &extras.intent,
        memory: &extras.memory,
        memory_left_out: extras.memory_left_out,
        prompt: Some(&prompt),
        performance: &extras.performance,
        ..records.input(state.mode, &state.summary, &constraints, &pins, state.selection.as_ref())
    };
    let window = u64::from(profile.context_window);
    let (_, offer) = engine.harness().registry()?.offer_within(profile.tool_loading, window, &state.messages);
    Ok(Overhead::of(&input, offer.tokens, ReplyReserve::for_step(session.limits.max_output_tokens, &profile, state.selection.as_ref()), window, &calibration))
}

/// The least a drafting step's reply may be left: a tool call with a short summary,
/// or a few sentences.
pub const REPLY_FLOOR_TOKENS: u32 = 256;
/// What a step's reply needs around the text it writes: its own words, a tool call's
/// name, summary and quotes.
pub const REPLY_BASE_TOKENS: u32 = 384;
/// The text a step without a selection is sized to write: a paragraph or a section
/// rewritten, or an answer. A longer rewrite goes in several steps (each proposal
/// carries the earlier ones' hunks), and a window with room sends more (see
/// [`ReplyReserve::cap`]).
pub const OPEN_STEP_TOKENS: u32 = 1_024;

/// The room kept for a drafting step's reply, sized to the step rather than to the
/// window: an edit of a selection needs its quote and its replacement (twice the
/// selection, a tenth spare) and the words around them; a step without one
/// [`OPEN_STEP_TOKENS`]. The article and the context are fitted to leave it; when
/// their smallest forms leave less, the reply gets what the window leaves, down to
/// `floor`. The request's output limit is what the window leaves, up to `cap`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReplyReserve {
    pub wanted: u32,
    pub floor: u32,
    /// The session's and the profile's output limit.
    pub cap: u32,
}

impl ReplyReserve {
    pub(crate) fn for_step(session_max_output: u32, profile: &LlmProfile, selection: Option<&crate::context::Selection>) -> ReplyReserve {
        let cap = session_max_output.min(profile.max_output_tokens.unwrap_or(u32::MAX)).max(1);
        let writes = match selection {
            Some(selection) => u32::try_from(crate::llm::estimate_tokens(&selection.text) * 22 / 10).unwrap_or(u32::MAX),
            None => OPEN_STEP_TOKENS,
        };
        let wanted = REPLY_BASE_TOKENS.saturating_add(writes).min(cap);
        ReplyReserve { wanted, floor: REPLY_FLOOR_TOKENS.min(wanted), cap }
    }
}

/// The prompt set's mode for a session mode: drafting, or plan.
pub(super) fn prompt_mode(mode: crate::context::Mode) -> crate::prompts::Mode {
    match mode {
        crate::context::Mode::Default => crate::prompts::Mode::Drafting,
        crate::context::Mode::Plan => crate::prompts::Mode::Plan,
    }
}
