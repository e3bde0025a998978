//! The steps of an optimization run, one file each, and what they share: the run's
//! working state ([`Pipeline`]) over the harness's [`Script`], and how a step's
//! conversation is sized to the model's window. The plan is fixed ([`PLAN`]); the
//! harness's script does the appends, the model calls (metered), and the replay of a
//! stopped run's record on resume.
//!
//! Each step sends only its own conversation (its instruction, the replies and the
//! repair asks) with the part of the snapshot it needs, so each request is sized to
//! what its step needs, not to the run so far.

mod checks;
mod compile;
mod platform;
mod proposals;
mod snapshot;
mod source;
mod strategy;

use serde_json::{json, Value};

pub use platform::platform_schema;
pub use source::{source_schema, MAX_TITLE_CANDIDATES, ONE_LINE_PATTERN};
pub use strategy::strategy_schema;

use super::run::Run;
use crate::error::{ApiError, ErrorCode};
use crate::harness::script::{Script, Stop};
use crate::harness::EventBody;
use crate::llm::structured::{extract_json, Validator};
use crate::llm::Message;
use crate::model::{Platform, PlatformDraft, Project};
use crate::profiles::ProfileSet;
use crate::project::drafts::CompiledDraft;

/// Repair round trips after a malformed structured reply.
pub const MAX_REPAIRS: u32 = 2;

/// One step of the plan.
type Step = fn(&mut Pipeline<'_, '_>) -> Result<(), Stop>;

/// The plan every run follows, in order: the snapshot, the strategy, the titles and
/// optimized source, the compile of every platform, each platform's candidate (with
/// its checks and fit report), the proposals.
pub(super) const PLAN: &[Step] = &[snapshot::run, strategy::run, source::run, compile::run, platform::run, proposals::run];

/// Why a platform without a saved draft has nothing to apply.
pub(super) const NO_SAVED_DRAFT: &str = "There is no saved draft for this platform to change, so it was not adapted; save the compiled draft in the Drafts tab, then run again.";

/// What the snapshot step found, for the steps after it.
pub(super) struct Found {
    pub project: Project,
    pub saved: Vec<PlatformDraft>,
    /// The platforms' profiles, loaded once for the run.
    pub set: ProfileSet,
    pub brand: Option<crate::model::BrandProfile>,
    /// The version of the composed prompt (the proposals name it).
    pub prompt_version: String,
}

/// What the steps hand on: the strategy is on the run record; these are the rest.
#[derive(Default)]
pub(super) struct Made {
    /// The optimized source (the project's, when the run optimizes one draft).
    pub source: String,
    /// The compile of the optimized source and, when some platform has no saved
    /// draft, of the current one.
    pub compiled: Vec<CompiledDraft>,
    pub current: Vec<CompiledDraft>,
    /// Each adapted platform's candidate text.
    pub candidates: Vec<(Platform, String)>,
}

/// A run's working state.
pub(super) struct Pipeline<'a, 'e> {
    pub s: Script<'a, 'e>,
    pub run: Run,
    /// The whole snapshot's system message.
    pub system: String,
    /// The current step's reply reserve: the room its requests leave in the window for
    /// the reply, sized to what the step writes.
    pub max_output: u32,
    /// The output limit of the latest request ([`Self::output_limit`]).
    pub limit: u32,
    /// The run's profile: its window, and how its server is asked for a JSON schema.
    pub profile: crate::llm::profile::LlmProfile,
    /// The pieces each step's system message is made of.
    pub parts: Parts,
    /// The current step's system message and its conversation.
    pub step_system: String,
    pub step: Vec<Message>,
    pub found: Option<Found>,
    pub made: Made,
    /// How the profile's server counts against the estimate (its calibration ratio,
    /// seeded from its tokenizer at profile test): every fit is checked as it counts.
    pub ratio: f64,
}

/// The snapshot's pieces, to give each step the part of it that step needs: the
/// context layers (pinned, working set, summary, references), the saved drafts and the
/// written rules per platform, and the apply policy.
#[derive(Default)]
pub(super) struct Parts {
    pub head: Vec<crate::context::ContextLayer>,
    pub drafts: Vec<(Platform, String)>,
    pub rules: Vec<(Platform, String)>,
    pub policy: Option<crate::context::ContextLayer>,
    /// The working set holds an excerpt of the source, not all of it.
    pub source_trimmed: bool,
}

/// How much of the snapshot a step's system message holds, from all of it to the least
/// the step can work with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Cut {
    /// The whole snapshot (every platform's draft and rules).
    Whole,
    /// The context layers, and only these platforms' drafts and rules.
    Platforms,
    /// The context layers and these platforms' rules, no drafts.
    RulesOnly,
    /// The context layers alone (the article, the project, the brand).
    Context,
    /// The pinned layer (rules, project, brand) and these platforms' rules only: for a
    /// step whose instruction holds the text it works on.
    Least,
}

impl Parts {
    fn system(&self, whole: &str, cut: Cut, platforms: &[Platform]) -> String {
        if cut == Cut::Whole {
            return whole.to_owned();
        }
        let mut texts: Vec<String> = self.head.iter().filter(|l| cut != Cut::Least || l.name == "pinned").map(|l| l.text.clone()).collect();
        if cut == Cut::Platforms {
            let drafts: Vec<&String> = self.drafts.iter().filter(|(p, _)| platforms.contains(p)).map(|(_, t)| t).collect();
            if !drafts.is_empty() {
                texts.push(format!("# Saved platform drafts\n{}", drafts.into_iter().map(String::as_str).collect::<String>()));
            }
        }
        let rules: Vec<&String> = self.rules.iter().filter(|(p, _)| cut != Cut::Context && platforms.contains(p)).map(|(_, t)| t).collect();
        if !rules.is_empty() {
            texts.push(format!("# The target platforms' written rules\n{}", rules.into_iter().map(String::as_str).collect::<String>()));
        }
        texts.extend(self.policy.iter().map(|l| l.text.clone()));
        texts.retain(|t| !t.is_empty());
        texts.join("\n")
    }
}

/// Reply reserves, in estimated tokens: each step's fits its purpose (a strategy of a
/// few lines per platform, a summary, a rewrite about as long as what it rewrites).
pub(super) const STRATEGY_RESERVE: u32 = 320;
pub(super) const STRATEGY_RESERVE_PER_PLATFORM: u32 = 160;
pub(super) const SUMMARY_RESERVE: u32 = 320;
/// Besides the rewritten text: the summary (and, for the source, the titles).
pub(super) const REWRITE_EXTRA: u32 = 320;
/// The least reserve any step gets.
pub(super) const MIN_RESERVE: u32 = 256;

impl<'a, 'e> Pipeline<'a, 'e> {
    pub(super) fn new(s: Script<'a, 'e>, run: Run, profile: &crate::llm::profile::LlmProfile) -> Pipeline<'a, 'e> {
        let max_output = reserve_of(profile, u64::from(STRATEGY_RESERVE));
        let ratio = crate::harness::compaction::profile_context(s.h.store(), &profile.id).map_or(1.0, |c| c.ratio).max(0.1);
        Pipeline {
            s,
            run,
            system: String::new(),
            max_output,
            limit: max_output,
            profile: profile.clone(),
            parts: Parts::default(),
            step_system: String::new(),
            step: Vec::new(),
            found: None,
            made: Made::default(),
            ratio,
        }
    }

    /// What the snapshot step found. Errors: INTERNAL before it ran.
    pub(super) fn found(&self) -> Result<&Found, ApiError> {
        self.found.as_ref().ok_or_else(|| ApiError::internal("an optimization step ran before the snapshot"))
    }

    pub(super) fn stage(&mut self, stage: &str, state: &str, message: impl Into<String>) -> Result<(), Stop> {
        self.s.check_interrupt()?;
        if state == "started" {
            self.run.stage = stage.to_owned();
        }
        self.s.append(EventBody::RunStage { stage: stage.to_owned(), state: state.to_owned(), message: message.into() })?;
        Ok(())
    }

    /// One model call of the step's conversation (fitted to the window); with
    /// `schema`, the server is asked for JSON matching it when the profile says it can
    /// be. Returns the text and whether the reply was cut off at the output limit.
    fn call(&mut self, schema: Option<(&str, &Value)>) -> Result<(String, bool), Stop> {
        self.s.check_interrupt()?;
        let messages = self.fitted_messages()?;
        self.limit = self.output_limit(&messages);
        let format = schema.map(|(name, schema)| self.profile.response_format(name, schema));
        let (micros, calls) = (self.s.model_micros, self.s.model_calls);
        let result = self.s.model_call(&self.step_system, messages, self.limit, format);
        self.run.timings.model_micros += self.s.model_micros - micros;
        self.run.timings.model_calls += self.s.model_calls - calls;
        if self.s.model_failed {
            self.run.resumable = true;
        }
        let reply = result?;
        if self.run.model.is_empty() {
            self.run.model.clone_from(&self.s.model);
        }
        self.step.push(Message::assistant(reply.text.as_str(), Vec::new()));
        Ok((reply.text, reply.cut_off))
    }

    /// Asks for one JSON value matching `schema`: the instruction, then at most
    /// [`MAX_REPAIRS`] repair round trips, then a clear failure.
    pub(super) fn json_step(&mut self, stage: &str, instruction: String, schema: &Value) -> Result<Value, Stop> {
        self.json_step_checked(stage, instruction, schema, schema)
    }

    /// [`Self::json_step`] that shows the model (and its server) `schema` and repairs
    /// only what breaks `checked`: a looser schema, when the caller deals with the
    /// rest itself (a bad title candidate is dropped, not worth a round trip).
    pub(super) fn json_step_checked(&mut self, stage: &str, instruction: String, schema: &Value, checked: &Value) -> Result<Value, Stop> {
        let validator = Validator::new(checked).map_err(|e| ApiError::internal(e.to_string()))?;
        let text = format!("{instruction}\n\nReply with only a JSON value matching this JSON schema:\n{schema}");
        self.s.append(EventBody::UserMessage { text: text.clone(), was_queued: false, selection: None })?;
        self.step.push(Message::user(text));
        let mut repairs = 0;
        let name = stage.split(':').next().unwrap_or(stage).to_owned();
        loop {
            let (text, cut_off) = self.call(Some((&name, schema)))?;
            let problem = match extract_json(&text) {
                Some(value) => match validator.check(&value) {
                    Ok(()) => return Ok(value),
                    // A cut-off reply's first complete value is a fragment; say why.
                    Err(_) if cut_off => self.cut_off_problem(),
                    Err(violations) => violations.to_string(),
                },
                None if cut_off => self.cut_off_problem(),
                None => "the reply holds no JSON value".to_owned(),
            };
            if repairs >= MAX_REPAIRS {
                let mut error = ApiError::new(
                    ErrorCode::ProviderBadResponse,
                    format!("The model's {stage} is not valid after {MAX_REPAIRS} repairs: {problem}. Nothing was proposed or applied."),
                );
                if cut_off {
                    error = error.hint("raise_output", "Raise the profile's maximum output tokens (Settings → AI models), or choose a model that answers more briefly.");
                }
                // What can help: another try, another model, or less to answer at once
                // (restarting Inkstone cannot, so not the generic `retry` hint).
                return Err(Stop::Failed(
                    error
                        .hint("retry_optimize", "Start the optimization again; models often answer correctly on another try.")
                        .hint("other_model", "Or choose a model that follows JSON instructions more reliably (Settings → AI models).")
                        .hint("smaller_input", "Or ask for less at once: fewer platforms per run, or a shorter article.")
                        .details(json!({"stage": stage, "problem": problem, "cutOff": cut_off})),
                ));
            }
            repairs += 1;
            self.stage(stage, "repair", format!("repair {repairs} of {MAX_REPAIRS}: {problem}"))?;
            let text = format!("That reply is not valid: {problem}. Reply again with only the corrected JSON, matching the schema.");
            self.s.append(EventBody::UserMessage { text: text.clone(), was_queued: false, selection: None })?;
            self.step.push(Message::user(text));
        }
    }

    /// Starts a step: the first of `cuts` whose system message leaves room for the
    /// step's instruction (about `ask_tokens`) and a reply of `reserve` tokens within
    /// the window, and a conversation of its own. CONTEXT_TOO_LONG, with the numbers
    /// of the least of them, when none does.
    pub(super) fn begin_step(&mut self, what: &str, cuts: &[Cut], platforms: &[Platform], ask_tokens: u64, reserve: u32) -> Result<(), Stop> {
        self.max_output = reserve;
        self.step.clear();
        let window = u64::from(self.profile.context_window);
        let mut needed = 0;
        for cut in cuts {
            let system = self.parts.system(&self.system, *cut, platforms);
            needed = self.counted(request_tokens(&system, &[]) + ask_tokens);
            if needed + u64::from(reserve) <= window {
                self.step_system = system;
                return Ok(());
            }
        }
        Err(self.too_long(what, needed))
    }

    /// Whether a step of `cuts` fits (see [`Self::begin_step`]), without starting it.
    pub(super) fn fits(&self, cuts: &[Cut], platforms: &[Platform], ask_tokens: u64, reserve: u32) -> bool {
        let window = u64::from(self.profile.context_window);
        cuts.iter().any(|cut| self.counted(request_tokens(&self.parts.system(&self.system, *cut, platforms), &[]) + ask_tokens) + u64::from(reserve) <= window)
    }

    /// The step's conversation as the next request sends it: all of it when it fits
    /// with the reply reserve, else the instruction and the latest ask only (earlier
    /// failed replies left out: the ask says what was wrong with them).
    fn fitted_messages(&self) -> Result<Vec<Message>, Stop> {
        let window = u64::from(self.profile.context_window);
        let reserve = u64::from(self.max_output);
        let needed = self.counted(request_tokens(&self.step_system, &self.step));
        if needed + reserve <= window || self.step.len() < 3 {
            return if needed + reserve <= window { Ok(self.step.clone()) } else { Err(self.too_long(&self.run.stage.clone(), needed)) };
        }
        let short: Vec<Message> = self.step.first().into_iter().chain(self.step.last()).cloned().collect();
        let needed = self.counted(request_tokens(&self.step_system, &short));
        if needed + reserve <= window {
            Ok(short)
        } else {
            Err(self.too_long(&self.run.stage.clone(), needed))
        }
    }

    /// CONTEXT_TOO_LONG for a step that cannot fit the window even cut down: the
    /// numbers, and the choices (fewer platforms, a smaller input, a larger window said
    /// for the profile's server).
    pub(super) fn too_long(&self, what: &str, prompt_tokens: u64) -> Stop {
        let window = u64::from(self.profile.context_window);
        let message = format!(
            "the optimization's {what} step needs about {} tokens ({prompt_tokens} of prompt, {} for its reply), and the window is {window} tokens; nothing was sent",
            prompt_tokens + u64::from(self.max_output),
            self.max_output
        );
        let error = crate::llm::LlmError::ContextTooLong {
            message,
            prompt_tokens: Some(prompt_tokens + u64::from(self.max_output)),
            window: Some(window),
            server: self.profile.server_window.map(|w| w.server),
        };
        Stop::Failed(ApiError::from(error).details(json!({
            "promptTokens": prompt_tokens + u64::from(self.max_output),
            "replyReserve": self.max_output,
            "contextWindow": window,
            "stage": what,
            "server": self.profile.server_window.map(|w| w.server.id()),
        })))
    }

    /// An estimate (as [`crate::llm::estimate_tokens`] counts) as the profile's server
    /// counts it.
    pub(super) fn counted(&self, estimate: u64) -> u64 {
        (estimate as f64 * self.ratio).ceil() as u64
    }

    fn cut_off_problem(&self) -> String {
        format!("the reply was cut off at the output limit ({} tokens) before its JSON ended; keep every value shorter", self.limit)
    }

    /// The output limit of a request of the step's system and `messages`: the room the
    /// window leaves, up to the profile's output limit (8,192 when it sets none), and
    /// never less than the step's reserve (which [`Self::begin_step`] made room for).
    /// A small window gets the reserve its step needs; a large one the usual limit.
    fn output_limit(&self, messages: &[Message]) -> u32 {
        let room = u64::from(self.profile.context_window).saturating_sub(self.counted(request_tokens(&self.step_system, messages)));
        let cap = u64::from(self.profile.max_output_tokens.unwrap_or(8_192));
        (room.min(cap) as u32).max(self.max_output)
    }
}

/// The estimated prompt tokens of a request of `system` and `messages`.
/// (What `estimate_request_tokens` says of that request, counted without building it:
/// the estimate is a sum over messages, and this request has no tools.)
pub(super) fn request_tokens(system: &str, messages: &[Message]) -> u64 {
    crate::llm::estimate_message_tokens(&Message::system(system)) + crate::llm::estimate_messages_tokens(messages)
}

/// A reply reserve of `tokens`, within the profile's output limit and at least
/// [`MIN_RESERVE`].
pub(super) fn reserve_of(profile: &crate::llm::profile::LlmProfile, tokens: u64) -> u32 {
    let cap = profile.max_output_tokens.unwrap_or(8_192);
    (tokens.min(u64::from(u32::MAX)) as u32).max(MIN_RESERVE).min(cap.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_tokens_are_what_the_built_request_is_estimated_at() {
        let messages = vec![Message::user("把周报写短。Keep it short."), Message::assistant("好的", Vec::new())];
        let system = "你是编辑。You edit.";
        let request = crate::llm::ChatRequest::new(std::iter::once(Message::system(system)).chain(messages.iter().cloned()).collect());
        assert_eq!(request_tokens(system, &messages), crate::llm::estimate_request_tokens(&request));
    }
}
