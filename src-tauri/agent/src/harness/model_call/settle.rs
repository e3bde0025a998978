//! What a model call's reply makes of the turn: the answer appended and the
//! calibration taught, an interrupted or broken-off answer kept with what arrived, one
//! reactive compaction and retry when the server says the request is too long, or the
//! end of the turn saying what went wrong and what to do.

use crate::error::{ApiError, ErrorCode};
use crate::harness::event::{EventBody, TurnEndReason};
use crate::harness::turn::{hint, Flow, Turn};
use crate::llm::profile::LlmProfile;
use crate::llm::{estimate_request_tokens, ChatRequest};
use crate::store::Durability;

impl Turn<'_, '_> {
    /// What the reply (or its failure) makes of the turn: the reply appended and the
    /// calibration taught, an interrupt or a broken-off answer kept, one reactive
    /// compaction and retry on a refusal as too long, or the end with what to do.
    pub(super) fn settle(
        &mut self,
        result: Result<crate::llm::ChatResponse, ApiError>,
        partial: String,
        (request, request_tokens): (&ChatRequest, u64),
        profile: &LlmProfile,
        calibration: &crate::harness::compaction::ProfileContext,
        shares: crate::harness::compaction::Room,
    ) -> Result<Flow, ApiError> {
        let window = u64::from(profile.context_window);
        // A stream cut before a word arrived on a request near the window is most
        // likely an overflow the server only logged (llama-cpp-python): said as one,
        // so the turn compacts and retries, or ends saying the real cause.
        let result = result.map_err(|error| likely_overflow(error, request, calibration, window, profile.server_window.map(|w| w.server)));
        // A server that refuses a request as too long and says how many tokens it
        // counted (llama.cpp, vLLM, OpenAI) calibrates the estimate as usage does: its
        // tokenizer may count far more than the estimate (Chinese on a small model),
        // and without this the next request would be sized as wrongly again.
        if let Err(error) = &result {
            if let Some(reported) = error.details.as_ref().and_then(|d| d["promptTokens"].as_u64()).filter(|_| error.code == ErrorCode::ContextTooLong) {
                self.learn(&profile.id, request_tokens, reported)?;
            }
        }
        match result {
            Ok(reply) => {
                if !reply.usage.estimated && reply.usage.input_tokens > 0 {
                    self.learn(&profile.id, request_tokens, reply.usage.input_tokens)?;
                }
                let finished = reply.tool_calls.is_empty();
                self.append_simple(answered(reply), Durability::Grouped)?;
                if finished {
                    return Ok(Flow::End(TurnEndReason::Completed, String::new(), Vec::new()));
                }
                Ok(Flow::Continue)
            }
            Err(error) if error.code == ErrorCode::Cancelled || self.live.interrupted() => {
                self.append_simple(broken_off(partial, INTERRUPTED), Durability::Grouped)?;
                Ok(Flow::End(TurnEndReason::Interrupted, "Stopped by the user while the model was answering.".to_owned(), Vec::new()))
            }
            Err(error) if matches!(error.code, ErrorCode::Internal | ErrorCode::StoreCorrupt | ErrorCode::Io) => Err(error),
            // The server says the request is too long although the estimate said it
            // fits: one reactive compaction, then exactly one retry.
            Err(error) if error.code == ErrorCode::ContextTooLong && !self.reactive_used => {
                self.reactive_used = true;
                self.compact(crate::harness::compaction::CompactionTrigger::Reactive, crate::harness::compaction::Keep::LatestTurn, shares)?;
                self.model_call()
            }
            // The answer broke off after some of it arrived (the server died, the
            // connection dropped): what arrived is kept, as an interrupt keeps it, marked
            // as cut off by the failure (`finish_reason` "error"), and the turn ends
            // saying what cut it off: mostly the lost connection.
            Err(error) if !partial.trim().is_empty() => {
                self.append_simple(broken_off(partial, CUT_OFF_BY_ERROR), Durability::Grouped)?;
                if connection_lost(&error) {
                    return Ok(Flow::End(
                        TurnEndReason::ModelError,
                        format!("The connection to the model was lost during the answer; the text that arrived is kept. {:?}: {}", error.code, error.message),
                        cut_off_hints(&error),
                    ));
                }
                // The provider stopped it with an error of its own (a rate limit, the
                // quota): its hints say what to do.
                Ok(Flow::End(
                    TurnEndReason::ModelError,
                    format!("The model's answer broke off; the text that arrived is kept. {:?}: {}", error.code, error.message),
                    error.hints.clone(),
                ))
            }
            Err(error) => {
                let reason = if error.code == ErrorCode::ContextTooLong { TurnEndReason::ContextTooLong } else { TurnEndReason::ModelError };
                let mut hints = error.hints.clone();
                if reason == TurnEndReason::ContextTooLong {
                    hints.push(hint("new_session", "Start a new session; the project and its versions are kept."));
                }
                Ok(Flow::End(reason, format!("{:?}: {}", error.code, error.message), hints))
            }
        }
    }
}

/// The `finish_reason` of an assistant message the person (or a cancel) stopped.
pub(crate) const INTERRUPTED: &str = "interrupted";

/// The log's record of a model call's reply.
pub(crate) fn answered(reply: crate::llm::ChatResponse) -> EventBody {
    EventBody::AssistantMessage {
        text: reply.text,
        tool_calls: reply.tool_calls,
        finish_reason: format!("{:?}", reply.finish_reason).to_lowercase(),
        interrupted: false,
        input_tokens: reply.usage.input_tokens,
        output_tokens: reply.usage.output_tokens,
    }
}

/// The log's record of a reply that broke off (`finish_reason` [`INTERRUPTED`] or
/// [`CUT_OFF_BY_ERROR`]): the text that had arrived.
pub(crate) fn broken_off(partial: String, finish_reason: &str) -> EventBody {
    EventBody::AssistantMessage { text: partial, tool_calls: Vec::new(), finish_reason: finish_reason.to_owned(), interrupted: true, input_tokens: 0, output_tokens: 0 }
}

/// `error` said as a likely CONTEXT_TOO_LONG ([`crate::llm::error::likely_overflow`]),
/// the request counted with the profile's calibration.
pub(crate) fn likely_overflow(
    error: ApiError,
    request: &ChatRequest,
    calibration: &crate::harness::compaction::ProfileContext,
    window: u64,
    server: Option<crate::llm::window::ServerKind>,
) -> ApiError {
    let prompt = calibration.calibrated(estimate_request_tokens(request));
    crate::llm::error::likely_overflow(error, prompt, u64::from(request.max_output_tokens.unwrap_or(0)), window, server)
}

/// The `finish_reason` of an assistant message that a failed model call cut off (the
/// text that had arrived, kept; `interrupted` is true, as for a stop by the person).
pub const CUT_OFF_BY_ERROR: &str = "error";

/// Whether a model call that failed after part of its answer arrived lost its
/// connection (the stream broke or stopped, the server went away), rather than being
/// stopped by an error the provider sent.
fn connection_lost(error: &ApiError) -> bool {
    // A reply stopped because the model repeated itself did not lose its connection.
    matches!(error.code, ErrorCode::ProviderBadResponse | ErrorCode::ProviderUnavailable | ErrorCode::Offline | ErrorCode::Timeout)
        && error.message_id.as_deref() != Some("model.repetition")
}

/// The hints of a turn whose answer broke off midway: the connection was lost (so
/// "check that the server is OpenAI-compatible" no longer applies: it was answering),
/// then the error's own advice that still does (a timeout's, an overloaded server's).
fn cut_off_hints(error: &ApiError) -> Vec<crate::error::Hint> {
    let mut hints = vec![hint("connection_lost", "The text that arrived is kept; try again for the whole answer.")];
    hints.extend(error.hints.iter().filter(|h| !matches!(h.id.as_str(), "check_compatible" | "retry_connection")).cloned());
    if !hints.iter().any(|h| h.id == "check_server_running") && matches!(error.code, ErrorCode::ProviderBadResponse | ErrorCode::ProviderUnavailable | ErrorCode::Offline) {
        hints.push(hint("check_server_running", "For a local server (Ollama, LM Studio, llama.cpp, vLLM), check that it is running and listening on the profile's address."));
    }
    hints
}
