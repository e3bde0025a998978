//! The summarising calls and what they produce: the prompts, the summary's schema,
//! the transcript the model reads, reading a reply (JSON, lenient JSON or prose), the
//! summary layer's text, and the truncation note of the fallback.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::error::{ApiError, ErrorCode};
use crate::harness::turn::TurnStats;
use crate::harness::{Harness, Live, Scope};
use crate::llm::profile::LlmProfile;
use crate::llm::structured::{extract_json, Validator};
use crate::llm::{estimate_tokens, ChatRequest, Message, ModelCall, Role};

use super::*;

/// The heading of every summary layer (the panel strips it when it shows the text).
pub(super) const SUMMARY_HEADING: &str = "# Earlier conversation (summarised; the full log is kept)";

/// The first line of every summarising request's system message (tests tell these
/// requests apart by it).
pub const COMPACTION_PROMPT_HEAD: &str = "You compact a drafting session's conversation.";

pub(super) const COMPACTION_PROMPT: &str = "You compact a drafting session's conversation. \
Read the earlier summary (if any) and the conversation below, and answer with one JSON object only, no prose, with these fields: \
summary (what happened, in the conversation's language), user_intent (what the person wants now), \
accepted_changes (list of {proposal_id, version}: proposals the person accepted and the version each made), \
rejected_directions (list of {direction, reason}: what the person turned down and why, in their words), \
open_tasks (list of strings), active_artifacts (list of strings: drafts, platforms, sections being worked on), \
source_refs (list of strings: stored result refs, version ids, sources quoted), next_step_hint (string). \
Keep names, numbers, dates and quotes exact. Do not invent anything.";

/// The prompt for a server that cannot constrain its reply to a schema: prose is asked
/// for (small local models write it far more reliably than JSON).
pub(super) const COMPACTION_PROMPT_TEXT: &str = "You compact a drafting session's conversation. \
Read the earlier summary (if any) and the conversation below, and write a short summary in plain text, in the conversation's language, no JSON: \
what happened, what the person wants now, the changes they accepted and the directions they turned down (with their reasons), \
open tasks, and the next step. Keep names, numbers, dates and quotes exact. Do not invent anything. Be brief.";

/// An accepted proposal and the version it made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AcceptedChange {
    pub proposal_id: String,
    #[serde(default)]
    pub version: Option<u64>,
}

/// A direction the person turned down, with their reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RejectedDirection {
    pub direction: String,
    #[serde(default)]
    pub reason: String,
}

/// The validated output of a summarising call (field names as the model writes them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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

/// The text the summarising model reads for `messages`: tool results as a preview and
/// their stored reference.
pub(super) fn transcript_lines(messages: &[Message]) -> Vec<String> {
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
pub(super) fn render_plain(text: &str, budget: u64) -> String {
    bound_text(&format!("{SUMMARY_HEADING}\n{}\n", text.trim()), budget)
}

/// The truncation note: what was dropped, with the earlier summary's head and a digest
/// of the person's latest dropped messages, all within `budget` estimated tokens (the
/// note itself is always there): a truncation after a truncation does not grow.
pub(super) fn truncation_text(previous: &str, dropped: &[Message], budget: u64) -> (String, String) {
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

/// A summary the model gave: the summary layer's text (within its budget) and the
/// structured fields when the reply had them.
pub(super) struct Summarised {
    pub(super) text: String,
    pub(super) structured: Option<CompactionSummary>,
}

/// Why a summarising attempt gave no summary. Its text is the message of the
/// `compaction_failed` event.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SummaryError {
    #[error("The summary was empty.")]
    Empty,
    #[error("The summary broke its schema: it has no summary text.")]
    NoSummaryText,
    #[error("The summary was JSON that broke off.")]
    BrokenJson,
    #[error("The context window ({window} tokens) is too small to summarise in.")]
    WindowTooSmall { window: u64 },
    /// The person interrupted it: not counted against the breaker.
    #[error("Stopped by the user; nothing was replaced.")]
    Stopped,
    /// The model call failed.
    #[error("{code:?}: {message}")]
    Model { code: ErrorCode, message: String },
    #[error("Nothing to summarise.")]
    NothingToSummarise,
    /// The summary would not have made the conversation shorter.
    #[error("The summary was not shorter than the messages it would replace; nothing was replaced.")]
    NotShorter,
}

/// Reads a summarising reply: a JSON summary that validates (or, leniently, one whose
/// fields have the right types and a summary) is structured; prose is a plain-text
/// summary. `Err`: nothing usable (empty, or JSON that broke off or has no summary).
pub(super) fn read_summary(reply: &str, validator: &Validator, budget: u64) -> Result<Summarised, SummaryError> {
    let trimmed = reply.trim();
    if trimmed.is_empty() {
        return Err(SummaryError::Empty);
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
            None => Err(SummaryError::NoSummaryText),
        };
    }
    // JSON that broke off (the output limit, a grammar that gave up) is not prose.
    if trimmed.starts_with('{') || trimmed.starts_with('[') || trimmed.starts_with("```json") {
        return Err(SummaryError::BrokenJson);
    }
    Ok(Summarised { text: render_plain(trimmed, budget), structured: None })
}

/// The summarising calls: the compacted messages in chunks that fit the window with
/// the prompt, the summary so far and the output reserve; each chunk's summary feeds
/// the next. A server that can constrain its reply to a schema is asked for the
/// structured summary, any other for prose; either answer is taken. `Ok(Err(why))`:
/// the model failed or its answer was unusable. `spent` adds up the tokens of every
/// answered call, a rejected answer included.
#[allow(clippy::too_many_arguments)]
pub(super) fn summarise_messages(
    engine: Harness<'_>,
    scope: &Scope,
    live: &Live,
    profile: &LlmProfile,
    previous: &str,
    messages: &[Message],
    budget: u64,
    stats: &mut TurnStats,
    spent: &mut (u64, u64),
) -> Result<Result<Summarised, SummaryError>, ApiError> {
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
            return Ok(Err(SummaryError::WindowTooSmall { window }));
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
            Err(error) if error.code == ErrorCode::Cancelled => return Ok(Err(SummaryError::Stopped)),
            Err(error) => return Ok(Err(SummaryError::Model { code: error.code, message: error.message })),
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
            Err(why) => return Ok(Err(why)),
        };
        summary_so_far = summarised.text.clone();
        result = Some(summarised);
    }
    Ok(result.ok_or(SummaryError::NothingToSummarise))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

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
