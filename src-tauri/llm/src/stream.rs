//! Chat-completion chunks to a reply, as a pure state machine. It copes with the ways
//! real servers differ from the OpenAI reference:
//! - tool-call deltas without `index` (older Ollama): a delta with a new `id` starts a
//!   call, one without continues the last; a delta whose `index` is taken by a call
//!   with another `id` starts a new call too;
//! - arguments split at any byte or sent whole;
//! - the usage chunk with `choices: []` or with a choice and an empty delta;
//! - reasoning as `reasoning_content` / `reasoning` fields or inside `<think>` blocks,
//!   kept apart from the answer;
//! - an `{"error": ...}` object inside a 200 stream;
//! - a stream that ends without a finish reason (an error, not a silent success).

use serde_json::Value;

use super::error::{classify_stream_error, LlmError};
use super::{ChatEvent, FinishReason, ToolCall, Usage};

#[derive(Debug, Default)]
struct PartialCall {
    index: Option<u64>,
    id: String,
    name: String,
    arguments: String,
    announced: bool,
}

/// Splits `<think>…</think>` out of streamed content. A tag may be split across
/// deltas, so a possible tag prefix at the end of a delta waits for the next one.
#[derive(Debug, Default)]
struct ThinkSplitter {
    pending: String,
    in_think: bool,
}

const THINK_OPEN: &str = "<think>";
const THINK_CLOSE: &str = "</think>";

impl ThinkSplitter {
    /// Returns (answer, reasoning) pieces of `delta`, in order.
    fn push(&mut self, delta: &str, out: &mut Vec<ChatEvent>) {
        // Every tag and tag prefix starts with '<': without one, and with nothing held
        // back, the whole delta is ready as it is.
        if self.pending.is_empty() && !delta.contains('<') {
            self.emit(delta.to_owned(), out);
            return;
        }
        self.pending.push_str(delta);
        loop {
            let tag = if self.in_think { THINK_CLOSE } else { THINK_OPEN };
            match self.pending.find(tag) {
                Some(at) => {
                    let before: String = self.pending[..at].to_owned();
                    self.emit(before, out);
                    self.pending.drain(..at + tag.len());
                    self.in_think = !self.in_think;
                }
                None => {
                    let keep = partial_suffix(&self.pending, tag);
                    let ready = self.pending.len() - keep;
                    let text: String = self.pending[..ready].to_owned();
                    self.pending.drain(..ready);
                    self.emit(text, out);
                    return;
                }
            }
        }
    }

    fn finish(&mut self, out: &mut Vec<ChatEvent>) {
        let rest = std::mem::take(&mut self.pending);
        self.emit(rest, out);
    }

    fn emit(&self, text: String, out: &mut Vec<ChatEvent>) {
        if text.is_empty() {
            return;
        }
        out.push(if self.in_think { ChatEvent::ReasoningDelta(text) } else { ChatEvent::TextDelta(text) });
    }
}

/// The length of the longest suffix of `text` that is a proper prefix of `tag`.
fn partial_suffix(text: &str, tag: &str) -> usize {
    (1..tag.len()).rev().find(|n| text.len() >= *n && text.is_char_boundary(text.len() - n) && tag.starts_with(&text[text.len() - n..])).unwrap_or(0)
}

/// The common chunk shape, borrowed from the event's text where possible. Fields it
/// does not name are ignored; `tool_calls` and `error` are only noticed, so such
/// chunks go to the general path.
#[derive(Debug, serde::Deserialize)]
struct FastChunk<'a> {
    #[serde(borrow, default)]
    model: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "null_as_empty")]
    choices: Vec<FastChoice<'a>>,
    #[serde(default)]
    usage: Option<FastUsage>,
    #[serde(default)]
    error: Option<serde::de::IgnoredAny>,
}

#[derive(Debug, serde::Deserialize)]
struct FastChoice<'a> {
    #[serde(default)]
    index: Option<u64>,
    #[serde(borrow, default)]
    delta: Option<FastDelta<'a>>,
    #[serde(borrow, default)]
    finish_reason: Option<std::borrow::Cow<'a, str>>,
}

#[derive(Debug, serde::Deserialize)]
struct FastDelta<'a> {
    #[serde(borrow, default)]
    content: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    reasoning_content: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    reasoning: Option<std::borrow::Cow<'a, str>>,
    #[serde(default)]
    tool_calls: Option<serde::de::IgnoredAny>,
}

#[derive(Debug, serde::Deserialize)]
struct FastUsage {
    #[serde(default)]
    prompt_tokens: Option<u64>,
    #[serde(default)]
    completion_tokens: Option<u64>,
}

fn null_as_empty<'de, D: serde::Deserializer<'de>, T: serde::Deserialize<'de>>(deserializer: D) -> Result<Vec<T>, D::Error> {
    Ok(<Option<Vec<T>> as serde::Deserialize>::deserialize(deserializer)?.unwrap_or_default())
}

/// The reply as assembled so far.
#[derive(Debug, Default)]
pub struct StreamAssembler {
    model: Option<String>,
    text: String,
    reasoning: String,
    think: ThinkSplitter,
    calls: Vec<PartialCall>,
    finish: Option<FinishReason>,
    usage: Option<Usage>,
    done: bool,
}

/// What a finished stream produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Assembled {
    pub model: Option<String>,
    pub text: String,
    pub reasoning: String,
    pub tool_calls: Vec<ToolCall>,
    pub finish_reason: FinishReason,
    /// `None` when the server sent no usage.
    pub usage: Option<Usage>,
}

impl StreamAssembler {
    pub fn new() -> Self {
        StreamAssembler::default()
    }

    /// True once `[DONE]` arrived.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Takes the `data` of one SSE event, appending what the user should see to `out`.
    pub fn push_data(&mut self, data: &str, out: &mut Vec<ChatEvent>) -> Result<(), LlmError> {
        let data = data.trim();
        if data.is_empty() {
            return Ok(());
        }
        if data == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        // The fast path: the usual chunk, parsed into borrowed typed fields. Anything
        // it does not cover (errors, tool calls, odd shapes) takes the general path.
        if let Ok(chunk) = serde_json::from_str::<FastChunk<'_>>(data) {
            if self.push_fast(&chunk, out) {
                return Ok(());
            }
        }
        let chunk: Value = serde_json::from_str(data).map_err(|e| LlmError::BadResponse { detail: format!("a stream chunk is not JSON ({e})") })?;
        self.push_chunk(&chunk, out)
    }

    /// Applies a chunk with no error, no tool calls and at most one choice; `false`
    /// (having changed nothing) for anything else.
    fn push_fast(&mut self, chunk: &FastChunk<'_>, out: &mut Vec<ChatEvent>) -> bool {
        if chunk.error.is_some() || chunk.choices.len() > 1 {
            return false;
        }
        let choice = chunk.choices.first();
        if let Some(choice) = choice {
            if choice.index.unwrap_or(0) != 0 || choice.delta.as_ref().is_some_and(|d| d.tool_calls.is_some()) {
                return false;
            }
        }
        if let Some(model) = chunk.model.as_deref().filter(|m| !m.is_empty()) {
            if self.model.as_deref() != Some(model) {
                self.model = Some(model.to_owned());
            }
        }
        if let Some(usage) = &chunk.usage {
            self.usage = Some(Usage { input_tokens: usage.prompt_tokens.unwrap_or(0), output_tokens: usage.completion_tokens.unwrap_or(0), estimated: false });
        }
        let Some(choice) = choice else { return true };
        if let Some(delta) = &choice.delta {
            for piece in [&delta.reasoning_content, &delta.reasoning].into_iter().flatten().filter(|p| !p.is_empty()) {
                self.reasoning.push_str(piece);
                out.push(ChatEvent::ReasoningDelta(piece.to_string()));
            }
            if let Some(piece) = delta.content.as_deref().filter(|p| !p.is_empty()) {
                let start = out.len();
                self.think.push(piece, out);
                self.collect(&out[start..]);
            }
        }
        if let Some(reason) = choice.finish_reason.as_deref().filter(|r| !r.is_empty()) {
            self.finish = Some(FinishReason::parse(reason));
        }
        true
    }

    /// Takes the data of an SSE `error` event or field: llama.cpp's server sends an error
    /// that happens once the stream is open (a prompt longer than the window) as
    /// `error: {"code": 400, "message": ..., "type": ...}`, a line other SSE readers skip.
    pub fn push_error_event(&mut self, data: &str) -> LlmError {
        let value: Value = serde_json::from_str(data.trim()).unwrap_or_else(|_| Value::String(data.trim().to_owned()));
        let wrapped = if value.get("error").is_some() { value } else { serde_json::json!({ "error": value }) };
        classify_stream_error(&wrapped)
    }

    /// Takes one parsed chunk (also used for a whole non-streamed completion, whose
    /// choices carry `message` instead of `delta`).
    pub fn push_chunk(&mut self, chunk: &Value, out: &mut Vec<ChatEvent>) -> Result<(), LlmError> {
        if chunk.get("error").is_some_and(|e| !e.is_null()) {
            return Err(classify_stream_error(chunk));
        }
        if !chunk.is_object() {
            return Err(LlmError::BadResponse { detail: "a stream chunk is not a JSON object".to_owned() });
        }
        if let Some(model) = chunk.get("model").and_then(Value::as_str).filter(|m| !m.is_empty()) {
            self.model = Some(model.to_owned());
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            let tokens = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
            self.usage = Some(Usage { input_tokens: tokens("prompt_tokens"), output_tokens: tokens("completion_tokens"), estimated: false });
        }
        let choices = match chunk.get("choices") {
            Some(Value::Array(choices)) => choices.as_slice(),
            None | Some(Value::Null) => &[],
            Some(_) => return Err(LlmError::BadResponse { detail: "`choices` is not a list".to_owned() }),
        };
        // Only the first choice is used; n > 1 is never requested.
        let Some(choice) = choices.iter().find(|c| c.get("index").and_then(Value::as_u64).unwrap_or(0) == 0) else { return Ok(()) };
        let delta = choice.get("delta").or_else(|| choice.get("message"));
        if let Some(delta) = delta.filter(|d| d.is_object()) {
            for key in ["reasoning_content", "reasoning"] {
                if let Some(piece) = delta.get(key).and_then(Value::as_str).filter(|s| !s.is_empty()) {
                    self.reasoning.push_str(piece);
                    out.push(ChatEvent::ReasoningDelta(piece.to_owned()));
                }
            }
            if let Some(piece) = delta.get("content").and_then(Value::as_str).filter(|s| !s.is_empty()) {
                let start = out.len();
                self.think.push(piece, out);
                self.collect(&out[start..]);
            }
            match delta.get("tool_calls") {
                Some(Value::Array(calls)) => {
                    for call in calls {
                        self.push_tool_delta(call, out)?;
                    }
                }
                None | Some(Value::Null) => {}
                Some(_) => return Err(LlmError::BadResponse { detail: "`tool_calls` is not a list".to_owned() }),
            }
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str).filter(|r| !r.is_empty()) {
            self.finish = Some(FinishReason::parse(reason));
        }
        Ok(())
    }

    /// Keeps the text and reasoning the think splitter emitted.
    fn collect(&mut self, events: &[ChatEvent]) {
        for event in events {
            match event {
                ChatEvent::TextDelta(text) => self.text.push_str(text),
                ChatEvent::ReasoningDelta(text) => self.reasoning.push_str(text),
                ChatEvent::ToolCallStarted { .. } => {}
            }
        }
    }

    fn push_tool_delta(&mut self, delta: &Value, out: &mut Vec<ChatEvent>) -> Result<(), LlmError> {
        if !delta.is_object() {
            return Err(LlmError::BadResponse { detail: "a tool call delta is not an object".to_owned() });
        }
        let index = delta.get("index").and_then(Value::as_u64);
        let id = delta.get("id").and_then(Value::as_str).filter(|s| !s.is_empty());
        let function = delta.get("function");
        let name = function.and_then(|f| f.get("name")).and_then(Value::as_str).filter(|s| !s.is_empty());
        let arguments = match function.and_then(|f| f.get("arguments")) {
            Some(Value::String(text)) => text.clone(),
            // Some servers send the arguments as an object instead of JSON text.
            Some(value @ Value::Object(_)) => value.to_string(),
            _ => String::new(),
        };
        let starts_new = |call: &PartialCall| id.is_some_and(|id| !call.id.is_empty() && call.id != id);
        let slot = match index {
            Some(index) => match self.calls.iter().rposition(|c| c.index == Some(index)) {
                Some(pos) if !starts_new(&self.calls[pos]) => Some(pos),
                _ => None,
            },
            None => match self.calls.last() {
                Some(last) if id.is_none() || !starts_new(last) => Some(self.calls.len() - 1),
                _ => None,
            },
        };
        let pos = match slot {
            Some(pos) => pos,
            None => {
                self.calls.push(PartialCall { index, ..PartialCall::default() });
                self.calls.len() - 1
            }
        };
        let call = &mut self.calls[pos];
        if let Some(id) = id {
            call.id = id.to_owned();
        }
        if let Some(name) = name {
            // Names arrive whole; a repeated name is the same name, not a continuation.
            if call.name.is_empty() {
                call.name = name.to_owned();
            }
        }
        call.arguments.push_str(&arguments);
        if !call.announced && !call.name.is_empty() {
            call.announced = true;
            out.push(ChatEvent::ToolCallStarted { id: call.id.clone(), name: call.name.clone() });
        }
        Ok(())
    }

    /// The stream ended. Flushes a held-back partial `<think>` tag and checks that
    /// the reply is complete.
    pub fn finish(mut self, out: &mut Vec<ChatEvent>) -> Result<Assembled, LlmError> {
        let start = out.len();
        self.think.finish(out);
        let flushed: Vec<ChatEvent> = out[start..].to_vec();
        self.collect(&flushed);
        let finish_reason = match self.finish {
            Some(reason) => reason,
            None if self.done && !self.calls.is_empty() => FinishReason::ToolCalls,
            None if self.done => FinishReason::Stop,
            None => {
                let nothing_arrived = self.text.is_empty() && self.reasoning.is_empty() && self.calls.is_empty();
                return Err(LlmError::Incomplete { detail: "the stream stopped without a finish reason or [DONE]".to_owned(), nothing_arrived });
            }
        };
        let mut tool_calls = Vec::with_capacity(self.calls.len());
        for (idx, call) in self.calls.into_iter().enumerate() {
            if call.name.is_empty() {
                return Err(LlmError::BadResponse { detail: format!("tool call {idx} has no name") });
            }
            let id = if call.id.is_empty() { format!("call_{idx}") } else { call.id };
            let arguments = if call.arguments.trim().is_empty() { "{}".to_owned() } else { call.arguments };
            tool_calls.push(ToolCall { id, name: call.name, arguments });
        }
        Ok(Assembled { model: self.model, text: self.text, reasoning: self.reasoning, tool_calls, finish_reason, usage: self.usage })
    }
}

/// Assembles a whole SSE body at once (for tests and benchmarks).
pub fn assemble_body(body: &[u8]) -> Result<(Assembled, Vec<ChatEvent>), LlmError> {
    let mut assembler = StreamAssembler::new();
    let mut events = Vec::new();
    for sse in super::sse::parse_all(body) {
        assembler.push_data(&sse.data, &mut events)?;
    }
    let assembled = assembler.finish(&mut events)?;
    Ok((assembled, events))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn body(chunks: &[Value]) -> Vec<u8> {
        let mut out = String::new();
        for chunk in chunks {
            out.push_str(&format!("data: {chunk}\n\n"));
        }
        out.push_str("data: [DONE]\n\n");
        out.into_bytes()
    }

    fn delta(d: Value) -> Value {
        json!({"id": "c1", "model": "m", "choices": [{"index": 0, "delta": d, "finish_reason": null}]})
    }

    fn finish(reason: &str) -> Value {
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]})
    }

    #[test]
    fn text_reasoning_usage_with_empty_choices() {
        let body = body(&[
            delta(json!({"role": "assistant", "content": ""})),
            delta(json!({"reasoning_content": "想一想"})),
            delta(json!({"content": "你好"})),
            delta(json!({"content": "，世界"})),
            finish("stop"),
            json!({"choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}}),
        ]);
        let (reply, events) = assemble_body(&body).unwrap();
        assert_eq!(reply.text, "你好，世界");
        assert_eq!(reply.reasoning, "想一想");
        assert_eq!(reply.finish_reason, FinishReason::Stop);
        assert_eq!(reply.usage, Some(Usage { input_tokens: 12, output_tokens: 5, estimated: false }));
        assert_eq!(reply.model.as_deref(), Some("m"));
        assert_eq!(events.len(), 3);
    }

    #[test]
    fn usage_chunk_with_a_choice_litellm() {
        let body = body(&[delta(json!({"content": "hi"})), finish("stop"), json!({"choices": [{"index": 0, "delta": {}}], "usage": {"prompt_tokens": 3, "completion_tokens": 1}})]);
        assert_eq!(assemble_body(&body).unwrap().0.usage, Some(Usage { input_tokens: 3, output_tokens: 1, estimated: false }));
    }

    #[test]
    fn think_blocks_are_reasoning() {
        let body = body(&[delta(json!({"content": "<thi"})), delta(json!({"content": "nk>plan</th"})), delta(json!({"content": "ink>answer <b>"})), finish("stop")]);
        let (reply, _) = assemble_body(&body).unwrap();
        assert_eq!(reply.reasoning, "plan");
        assert_eq!(reply.text, "answer <b>");
    }

    #[test]
    fn parallel_tool_calls_with_index() {
        let body = body(&[
            delta(json!({"tool_calls": [{"index": 0, "id": "call_a", "type": "function", "function": {"name": "search", "arguments": ""}}]})),
            delta(json!({"tool_calls": [{"index": 1, "id": "call_b", "type": "function", "function": {"name": "read", "arguments": "{\"id\":"}}]})),
            delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"q\":\"季"}}]})),
            delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": "度\"}"}}]})),
            delta(json!({"tool_calls": [{"index": 1, "function": {"arguments": "7}"}}]})),
            finish("tool_calls"),
        ]);
        let (reply, events) = assemble_body(&body).unwrap();
        assert_eq!(
            reply.tool_calls,
            vec![
                ToolCall { id: "call_a".into(), name: "search".into(), arguments: "{\"q\":\"季度\"}".into() },
                ToolCall { id: "call_b".into(), name: "read".into(), arguments: "{\"id\":7}".into() },
            ]
        );
        assert_eq!(reply.finish_reason, FinishReason::ToolCalls);
        assert_eq!(
            events,
            vec![ChatEvent::ToolCallStarted { id: "call_a".into(), name: "search".into() }, ChatEvent::ToolCallStarted { id: "call_b".into(), name: "read".into() }]
        );
    }

    #[test]
    fn tool_calls_without_index_older_ollama() {
        let body = body(&[
            delta(json!({"tool_calls": [{"id": "call_1", "function": {"name": "a", "arguments": "{\"x\":1}"}}]})),
            delta(json!({"tool_calls": [{"id": "call_2", "function": {"name": "b", "arguments": "{\"y\""}}]})),
            delta(json!({"tool_calls": [{"function": {"arguments": ":2}"}}]})),
            finish("tool_calls"),
        ]);
        let calls = assemble_body(&body).unwrap().0.tool_calls;
        assert_eq!(
            calls.iter().map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str())).collect::<Vec<_>>(),
            vec![("call_1", "a", "{\"x\":1}"), ("call_2", "b", "{\"y\":2}")]
        );
    }

    #[test]
    fn same_index_with_new_id_is_a_new_call() {
        let body = body(&[
            delta(json!({"tool_calls": [{"index": 0, "id": "c1", "function": {"name": "a", "arguments": "{}"}}]})),
            delta(json!({"tool_calls": [{"index": 0, "id": "c2", "function": {"name": "b", "arguments": "{}"}}]})),
            finish("tool_calls"),
        ]);
        assert_eq!(assemble_body(&body).unwrap().0.tool_calls.len(), 2);
    }

    #[test]
    fn errors_and_incomplete_streams() {
        let error = body(&[delta(json!({"content": "a"})), json!({"error": {"message": "upstream failed", "type": "server_error"}})]);
        assert_eq!(assemble_body(&error).unwrap_err(), LlmError::Unavailable { status: Some(500), message: "upstream failed".into() });
        let cut = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n";
        assert!(matches!(assemble_body(cut).unwrap_err(), LlmError::Incomplete { .. }), "a stream that stops without a finish is incomplete, not incompatible");
        assert!(matches!(assemble_body(b"data: {not json\n\n").unwrap_err(), LlmError::BadResponse { .. }));
        // A finish reason without [DONE] is complete (many servers close right away).
        let no_done = format!("data: {}\n\ndata: {}\n\n", delta(json!({"content": "a"})), finish("length"));
        assert_eq!(assemble_body(no_done.as_bytes()).unwrap().0.finish_reason, FinishReason::Length);
    }

    #[test]
    fn a_whole_completion_as_one_chunk() {
        let completion = json!({"model": "m2", "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok", "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": {"a": 1}}}]}, "finish_reason": "tool_calls"}], "usage": {"prompt_tokens": 1, "completion_tokens": 2}});
        let mut assembler = StreamAssembler::new();
        let mut events = Vec::new();
        assembler.push_chunk(&completion, &mut events).unwrap();
        let reply = assembler.finish(&mut events).unwrap();
        assert_eq!(reply.text, "ok");
        assert_eq!(reply.tool_calls[0].arguments, "{\"a\":1}");
    }

    proptest! {
        /// However the content and arguments are split into deltas, the reply is the same.
        #[test]
        fn any_delta_split_gives_the_same_reply(
            text in "[a-z<>/ 你好]{0,40}",
            args in "[a-z0-9:,\"{}]{0,30}",
            text_cuts in proptest::collection::vec(0usize..60, 0..6),
            arg_cuts in proptest::collection::vec(0usize..40, 0..6),
        ) {
            fn split(s: &str, cuts: &[usize]) -> Vec<String> {
                let chars: Vec<char> = s.chars().collect();
                let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (chars.len() + 1)).collect();
                cuts.sort_unstable();
                cuts.dedup();
                let mut out = Vec::new();
                let mut start = 0;
                for cut in cuts.into_iter().chain([chars.len()]) {
                    out.push(chars[start..cut].iter().collect());
                    start = cut;
                }
                out
            }
            let whole = body(&[
                delta(json!({"content": text})),
                delta(json!({"tool_calls": [{"index": 0, "id": "c", "function": {"name": "f", "arguments": args}}]})),
                finish("tool_calls"),
            ]);
            let mut chunks: Vec<Value> = split(&text, &text_cuts).into_iter().map(|p| delta(json!({"content": p}))).collect();
            let arg_parts = split(&args, &arg_cuts);
            chunks.push(delta(json!({"tool_calls": [{"index": 0, "id": "c", "function": {"name": "f", "arguments": arg_parts[0]}}]})));
            for part in &arg_parts[1..] {
                chunks.push(delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": part}}]})));
            }
            chunks.push(finish("tool_calls"));
            let (a, _) = assemble_body(&whole).unwrap();
            let (b, _) = assemble_body(&body(&chunks)).unwrap();
            prop_assert_eq!(a, b);
        }
    }
}
