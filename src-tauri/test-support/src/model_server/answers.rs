//! How the scripted server answers: a chat reply as server-sent events or one whole
//! completion (with usage counted as a llama.cpp-like server would), embeddings, and
//! the JSON and text responses around them.

use std::convert::Infallible;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{json, Value};

use super::{lock, Reply, Shared, Usage};

pub(super) async fn resolve_delays(mut reply: Reply) -> Reply {
    while let Reply::Delay { delay, then } = reply {
        tokio::time::sleep(delay).await;
        reply = *then;
    }
    reply
}

pub(super) fn json_response(status: u16, body: &Value, headers: &[(String, String)]) -> Response {
    let mut builder = Response::builder().status(StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)).header("content-type", "application/json");
    for (name, value) in headers {
        builder = builder.header(name.as_str(), value.as_str());
    }
    builder.body(Body::from(body.to_string())).unwrap_or_else(|_| Response::new(Body::empty()))
}

pub(super) fn raw_response(status: u16, content_type: &str, body: String) -> Response {
    Response::builder()
        .status(StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR))
        .header("content-type", content_type)
        .body(Body::from(body))
        .unwrap_or_else(|_| Response::new(Body::empty()))
}

pub(super) fn count_tokens(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(4)
}

/// Where a posing server puts its own count of a request's prompt for the usage it
/// reports (in its copy of the body, never the recorded one).
pub(super) const POSED_PROMPT_TOKENS: &str = "__posedPromptTokens";

/// A wide (CJK) character, as the posed tokenizers single them out.
pub(super) fn is_wide(c: char) -> bool {
    matches!(c as u32, 0x1100..=0x115F | 0x2E80..=0x303E | 0x3041..=0x33FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7A3 | 0xF900..=0xFAFF | 0xFE30..=0xFE4F | 0xFF00..=0xFF60 | 0xFFE0..=0xFFE6 | 0x20000..=0x3FFFD)
}

/// A prompt's tokens as a server posing as llama.cpp counts them: each Chinese
/// (wide) character a token, other text a token per four characters, four a message,
/// and the tool definitions' JSON.
pub fn posed_prompt_tokens(body: &Value) -> u64 {
    posed_prompt_tokens_with(body, 1)
}

/// [`posed_prompt_tokens`] with `per_wide` tokens for each wide character (a server
/// that offers a tokenizer counts prompts as its tokenizer does).
pub fn posed_prompt_tokens_with(body: &Value, per_wide: u64) -> u64 {
    let count = |text: &str| {
        let wide = text.chars().filter(|c| is_wide(*c)).count() as u64;
        wide * per_wide + (text.chars().count() as u64 - wide).div_ceil(4)
    };
    let messages: u64 = body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| 4 + count(m["content"].as_str().unwrap_or("")) + m["tool_calls"].as_array().map_or(0, |calls| count(&Value::Array(calls.clone()).to_string())))
        .sum();
    messages + body["tools"].as_array().map_or(0, |tools| count(&Value::Array(tools.clone()).to_string()))
}

pub(super) fn input_tokens(body: &Value) -> u64 {
    if let Some(posed) = body[POSED_PROMPT_TOKENS].as_u64() {
        return posed;
    }
    body["messages"].as_array().into_iter().flatten().map(|m| 4 + count_tokens(m["content"].as_str().unwrap_or(""))).sum()
}

pub(super) fn chunk(model: &str, delta: Value, finish: Option<&str>) -> String {
    let value = json!({"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1_767_225_600, "model": model, "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}], "usage": null});
    format!("data: {value}\n\n")
}

pub(super) fn split_chars(text: &str, size: usize) -> Vec<String> {
    if size == 0 || text.is_empty() {
        return if text.is_empty() { Vec::new() } else { vec![text.to_owned()] };
    }
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

/// The SSE events of a reply, and whether the stream should then stall.
pub(super) fn stream_events(reply: &Reply, request: &Value, model: &str, include_usage: bool) -> (Vec<String>, bool) {
    let mut events = vec![chunk(model, json!({"role": "assistant", "content": ""}), None)];
    let usage_event = |usage: Usage, output: u64| -> Option<String> {
        let (input, output) = match usage {
            Usage::Counted => (input_tokens(request), output),
            Usage::Fixed { input, output } => (input, output),
            Usage::Omitted => return None,
        };
        include_usage.then(|| format!("data: {}\n\n", json!({"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": model, "choices": [], "usage": {"prompt_tokens": input, "completion_tokens": output, "total_tokens": input + output}})))
    };
    match reply {
        Reply::Text { content, reasoning, chunk_chars, usage, finish } => {
            if let Some(reasoning) = reasoning {
                for piece in split_chars(reasoning, *chunk_chars) {
                    events.push(chunk(model, json!({"reasoning_content": piece}), None));
                }
            }
            for piece in split_chars(content, *chunk_chars) {
                events.push(chunk(model, json!({"content": piece}), None));
            }
            events.push(chunk(model, json!({}), Some(finish)));
            events.extend(usage_event(*usage, count_tokens(content) + reasoning.as_deref().map(count_tokens).unwrap_or(0)));
            events.push("data: [DONE]\n\n".to_owned());
            (events, false)
        }
        Reply::ToolCalls { calls, content, without_index, split_args } => {
            for piece in split_chars(content, 4) {
                events.push(chunk(model, json!({"content": piece}), None));
            }
            let mut output = 0;
            for (idx, (id, name, arguments)) in calls.iter().enumerate() {
                output += count_tokens(arguments) + 2;
                let pieces = split_chars(arguments, *split_args);
                let first = pieces.first().cloned().unwrap_or_default();
                let mut head = json!({"id": id, "type": "function", "function": {"name": name, "arguments": first}});
                if !without_index {
                    head["index"] = json!(idx);
                }
                events.push(chunk(model, json!({"tool_calls": [head]}), None));
                for piece in pieces.iter().skip(1) {
                    let mut delta = json!({"function": {"arguments": piece}});
                    if !without_index {
                        delta["index"] = json!(idx);
                    }
                    events.push(chunk(model, json!({"tool_calls": [delta]}), None));
                }
            }
            events.push(chunk(model, json!({}), Some("tool_calls")));
            events.extend(usage_event(Usage::Counted, output));
            events.push("data: [DONE]\n\n".to_owned());
            (events, false)
        }
        Reply::StreamError { content, error } => {
            for piece in split_chars(content, 4) {
                events.push(chunk(model, json!({"content": piece}), None));
            }
            events.push(format!("data: {}\n\n", json!({"error": error})));
            (events, false)
        }
        Reply::Cut { content } => {
            for piece in split_chars(content, 4) {
                events.push(chunk(model, json!({"content": piece}), None));
            }
            (events, false)
        }
        Reply::Stall { content } => {
            for piece in split_chars(content, 4) {
                events.push(chunk(model, json!({"content": piece}), None));
            }
            (events, true)
        }
        Reply::Error { .. } | Reply::Raw { .. } | Reply::Delay { .. } | Reply::Paced { .. } | Reply::Computed(_) | Reply::Embeddings { .. } | Reply::EmbeddingsBy(_) => {
            (Vec::new(), false)
        }
    }
}

pub(super) fn chat_response(state: Shared, reply: Reply, request: &Value, model: &str, stream: bool, include_usage: bool, pace: Option<Duration>) -> Response {
    match &reply {
        Reply::Error { status, body, headers } => return json_response(*status, body, headers),
        Reply::Raw { status, content_type, body } => return raw_response(*status, content_type, body.clone()),
        Reply::Embeddings { .. } | Reply::EmbeddingsBy(_) => {
            return json_response(400, &json!({"error": {"message": "the script has an embeddings reply for a chat request"}}), &[])
        }
        Reply::Text { .. }
        | Reply::ToolCalls { .. }
        | Reply::StreamError { .. }
        | Reply::Cut { .. }
        | Reply::Stall { .. }
        | Reply::Delay { .. }
        | Reply::Paced { .. }
        | Reply::Computed(_) => {}
    }
    if !stream {
        if let Some(body) = whole_completion(&reply, request, model) {
            return json_response(200, &body, &[]);
        }
    }
    let (events, stall) = stream_events(&reply, request, model, include_usage);
    let (sender, receiver) = tokio::sync::mpsc::channel::<Result<Bytes, Infallible>>(16);
    tokio::spawn(async move {
        for event in events {
            if sender.send(Ok(Bytes::from(event))).await.is_err() {
                lock(&state).disconnects += 1;
                return;
            }
            if let Some(interval) = pace {
                tokio::time::sleep(interval).await;
            }
        }
        if stall {
            tokio::select! {
                _ = sender.closed() => lock(&state).disconnects += 1,
                _ = tokio::time::sleep(Duration::from_secs(600)) => {}
            }
        }
    });
    let body = futures_util::stream::unfold(receiver, |mut receiver| async move { receiver.recv().await.map(|item| (item, receiver)) });
    Response::builder()
        .status(StatusCode::OK)
        .header("content-type", "text/event-stream")
        .header("cache-control", "no-cache")
        .body(Body::from_stream(body))
        .unwrap_or_else(|_| Response::new(Body::empty()))
}

pub(super) fn whole_completion(reply: &Reply, request: &Value, model: &str) -> Option<Value> {
    let (message, finish, output) = match reply {
        Reply::Text { content, reasoning, finish, .. } => {
            let mut message = json!({"role": "assistant", "content": content});
            if let Some(reasoning) = reasoning {
                message["reasoning_content"] = json!(reasoning);
            }
            (message, finish.clone(), count_tokens(content))
        }
        Reply::ToolCalls { calls, content, .. } => {
            let calls: Vec<Value> = calls.iter().map(|(id, name, arguments)| json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})).collect();
            (json!({"role": "assistant", "content": if content.is_empty() { Value::Null } else { json!(content) }, "tool_calls": calls}), "tool_calls".to_owned(), 10)
        }
        Reply::StreamError { error, .. } => return Some(json!({"error": error})),
        Reply::Cut { .. }
        | Reply::Stall { .. }
        | Reply::Error { .. }
        | Reply::Raw { .. }
        | Reply::Delay { .. }
        | Reply::Paced { .. }
        | Reply::Computed(_)
        | Reply::Embeddings { .. }
        | Reply::EmbeddingsBy(_) => return None,
    };
    let input = input_tokens(request);
    Some(
        json!({"id": "chatcmpl-fake", "object": "chat.completion", "created": 1_767_225_600, "model": model, "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": {"prompt_tokens": input, "completion_tokens": output, "total_tokens": input + output}}),
    )
}

pub(super) fn embeddings_response(reply: &Reply, request: &Value) -> Response {
    match reply {
        Reply::Embeddings { dims, count, reversed } => {
            let inputs: Vec<String> = match &request["input"] {
                Value::String(s) => vec![s.clone()],
                Value::Array(items) => items.iter().map(|i| i.as_str().unwrap_or("").to_owned()).collect(),
                _ => Vec::new(),
            };
            let n = count.unwrap_or(inputs.len());
            let mut data: Vec<Value> = (0..n)
                .map(|idx| {
                    // A vector that identifies its input: its first value is the index.
                    let text = inputs.get(idx).cloned().unwrap_or_default();
                    let mut vector = vec![0.0f64; (*dims).max(1)];
                    vector[0] = idx as f64;
                    if *dims > 1 {
                        vector[1] = text.chars().count() as f64;
                    }
                    json!({"object": "embedding", "index": idx, "embedding": vector})
                })
                .collect();
            if *reversed {
                data.reverse();
            }
            let tokens: u64 = inputs.iter().map(|i| count_tokens(i)).sum();
            json_response(200, &json!({"object": "list", "data": data, "model": request["model"], "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}), &[])
        }
        Reply::EmbeddingsBy(embed) => {
            let inputs: Vec<String> = match &request["input"] {
                Value::String(s) => vec![s.clone()],
                Value::Array(items) => items.iter().map(|i| i.as_str().unwrap_or("").to_owned()).collect(),
                _ => Vec::new(),
            };
            let data: Vec<Value> = inputs.iter().enumerate().map(|(idx, text)| json!({"object": "embedding", "index": idx, "embedding": (embed.0)(text)})).collect();
            let tokens: u64 = inputs.iter().map(|i| count_tokens(i)).sum();
            json_response(200, &json!({"object": "list", "data": data, "model": request["model"], "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}), &[])
        }
        Reply::Error { status, body, headers } => json_response(*status, body, headers),
        Reply::Raw { status, content_type, body } => raw_response(*status, content_type, body.clone()),
        Reply::Text { .. }
        | Reply::ToolCalls { .. }
        | Reply::StreamError { .. }
        | Reply::Cut { .. }
        | Reply::Stall { .. }
        | Reply::Delay { .. }
        | Reply::Paced { .. }
        | Reply::Computed(_) => json_response(400, &json!({"error": {"message": "the script has a chat reply for an embeddings request"}}), &[]),
    }
}
