//! The OpenAI-compatible client: streaming chat with tool calls, structured output,
//! embeddings and the model list, with retries (429/5xx only, see [`RetryPolicy`]),
//! cancellation that drops the connection at once, and per-request timeouts.
//!
//! A chat is retried only while nothing has been shown to the caller: once a delta has
//! gone out, a failure is the caller's to handle (a retry would repeat text).

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::error::{classify_status, LlmError};
use super::repetition::RepetitionGuard;
use super::retry::{Jitter, RetryPolicy};
use super::sse::SseParser;
use super::stream::{Assembled, StreamAssembler};
use super::transport::{Http, HttpResponse};
use super::{estimate_request_tokens, estimate_tokens, ChatEvent, ChatRequest, ChatResponse, Endpoint, Message, ResponseFormat, Role, Usage};

/// Cancels a request from another thread or task. Cloning shares the signal.
#[derive(Debug, Clone)]
pub struct Cancel {
    sender: Arc<tokio::sync::watch::Sender<bool>>,
}

impl Default for Cancel {
    fn default() -> Self {
        Cancel::new()
    }
}

impl Cancel {
    pub fn new() -> Self {
        Cancel { sender: Arc::new(tokio::sync::watch::channel(false).0) }
    }

    pub fn cancel(&self) {
        self.sender.send_replace(true);
    }

    pub fn is_cancelled(&self) -> bool {
        *self.sender.borrow()
    }

    /// Resolves once [`Cancel::cancel`] was called (at once if it already was).
    pub async fn cancelled(&self) {
        let mut receiver = self.sender.subscribe();
        // The sender lives as long as `self`, so this only returns on cancel.
        let _ = receiver.wait_for(|cancelled| *cancelled).await;
    }
}

/// Embedding vectors in input order.
#[derive(Debug, Clone, PartialEq)]
pub struct Embeddings {
    pub vectors: Vec<Vec<f32>>,
    pub model: String,
    pub input_tokens: u64,
    pub attempts: u32,
}

/// A structured reply: the validated JSON and the reply it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct StructuredResponse {
    pub value: Value,
    pub response: ChatResponse,
    /// Chat calls made (1 + repairs).
    pub calls: u32,
}

/// Most repair round trips for structured output.
pub const MAX_REPAIRS: u32 = 2;

/// Largest embedding batch (the OpenAI limit is 2,048 inputs and 300,000 tokens).
pub const MAX_EMBEDDING_BATCH: usize = 2048;
const MAX_EMBEDDING_BATCH_TOKENS: u64 = 250_000;

#[derive(Debug, Clone)]
pub struct LlmClient {
    http: Http,
    endpoint: Endpoint,
    policy: RetryPolicy,
    jitter: Arc<Jitter>,
}

impl LlmClient {
    pub fn new(endpoint: Endpoint, policy: RetryPolicy, jitter: Arc<Jitter>) -> Result<LlmClient, LlmError> {
        Ok(LlmClient { http: Http::new(&endpoint)?, endpoint, policy, jitter })
    }

    /// A client for `endpoint` that sends with `http`, which must have been built for
    /// the endpoint's settings ([`super::transport::HttpCache::get`]).
    pub fn with_http(endpoint: Endpoint, http: Http, policy: RetryPolicy, jitter: Arc<Jitter>) -> LlmClient {
        LlmClient { http, endpoint, policy, jitter }
    }

    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    fn url(&self, path: &str) -> String {
        format!("{}/{path}", self.endpoint.base_url.trim_end_matches('/'))
    }

    fn secret(&self) -> Option<&str> {
        self.endpoint.api_key.as_ref().map(|k| k.expose())
    }

    /// The JSON body of a chat request in the OpenAI wire format.
    pub fn request_body(&self, request: &ChatRequest, stream: bool) -> Value {
        let messages: Vec<Value> = request.messages.iter().map(wire_message).collect();
        let mut body = json!({ "model": self.endpoint.model, "messages": messages, "stream": stream });
        if stream {
            body["stream_options"] = json!({ "include_usage": true });
        }
        if !request.tools.is_empty() {
            body["tools"] = request
                .tools
                .iter()
                .map(|t| json!({ "type": "function", "function": { "name": t.name, "description": t.description, "parameters": t.parameters.value() } }))
                .collect();
        }
        if let Some(max) = request.max_output_tokens {
            body["max_tokens"] = json!(max);
        }
        if let Some(temperature) = request.temperature {
            body["temperature"] = json!(temperature);
        }
        if let Some(seed) = request.seed {
            body["seed"] = json!(seed);
        }
        match &request.response_format {
            ResponseFormat::Text => {}
            // Not `strict`: OpenAI's strict mode accepts only a subset of JSON Schema (every
            // property required, no additional properties, few keywords) and refuses the
            // request otherwise; the engine validates every reply against the full schema
            // itself and asks for a repair, so the server's adherence is a help, not the
            // guarantee.
            ResponseFormat::JsonSchema { name, schema } => {
                body["response_format"] = json!({ "type": "json_schema", "json_schema": { "name": name, "schema": super::server_schema(schema), "strict": false } });
            }
            ResponseFormat::JsonObjectSchema { schema } => {
                body["response_format"] = json!({ "type": "json_object", "schema": super::server_schema(schema) });
            }
        }
        body
    }

    /// Waits before retry number `retry`, or says to give up (`Ok(false)`).
    async fn backoff(&self, retry: u32, error: &LlmError, cancel: &Cancel) -> Result<bool, LlmError> {
        let Some(delay) = self.policy.next_delay(retry, error, self.jitter.next()) else { return Ok(false) };
        tracing::debug!(retry, delay_ms = delay.as_millis() as u64, error = %error, "retrying the model request");
        tokio::select! {
            _ = tokio::time::sleep(delay) => Ok(true),
            _ = cancel.cancelled() => Err(LlmError::Cancelled),
        }
    }

    /// Streams a chat completion, sending deltas to `on_event` as they arrive.
    pub async fn chat(&self, request: &ChatRequest, on_event: &mut (dyn FnMut(ChatEvent) + Send), cancel: &Cancel) -> Result<ChatResponse, LlmError> {
        let mut attempts = 0;
        self.chat_counting(request, on_event, cancel, &mut attempts).await
    }

    /// [`LlmClient::chat`] that also counts the requests it sent in `attempts`, failed
    /// ones included (a call that fails after retries still used them).
    pub async fn chat_counting(&self, request: &ChatRequest, on_event: &mut (dyn FnMut(ChatEvent) + Send), cancel: &Cancel, attempts: &mut u32) -> Result<ChatResponse, LlmError> {
        let started = Instant::now();
        let body = serde_json::to_vec(&self.request_body(request, true)).map_err(|e| LlmError::Config { detail: e.to_string() })?;
        *attempts = 0;
        loop {
            *attempts += 1;
            let mut emitted = false;
            // Scrubbed at once, so not even the retry log below can show the key.
            let result = self.chat_attempt(&body, on_event, cancel, &mut emitted).await.map_err(|e| e.scrub(self.secret()));
            match result {
                // A finished reply with nothing in it is said as such, not shown as silence.
                Ok(assembled) if assembled.text.trim().is_empty() && assembled.reasoning.trim().is_empty() && assembled.tool_calls.is_empty() => {
                    return Err(LlmError::EmptyReply { finish: finish_text(&assembled.finish_reason) });
                }
                Ok(assembled) => return Ok(self.response(request, assembled, *attempts, started.elapsed())),
                Err(error) => {
                    if emitted || matches!(error, LlmError::Cancelled) || !self.backoff(*attempts, &error, cancel).await? {
                        return Err(error);
                    }
                }
            }
        }
    }

    fn response(&self, request: &ChatRequest, assembled: Assembled, attempts: u32, latency: Duration) -> ChatResponse {
        let usage = assembled.usage.unwrap_or_else(|| Usage {
            input_tokens: estimate_request_tokens(request),
            output_tokens: estimate_tokens(&assembled.text)
                + estimate_tokens(&assembled.reasoning)
                + assembled.tool_calls.iter().map(|c| estimate_tokens(&c.name) + estimate_tokens(&c.arguments)).sum::<u64>(),
            estimated: true,
        });
        ChatResponse {
            model: assembled.model.unwrap_or_else(|| self.endpoint.model.clone()),
            text: assembled.text,
            reasoning: assembled.reasoning,
            tool_calls: assembled.tool_calls,
            finish_reason: assembled.finish_reason,
            usage,
            attempts,
            latency,
        }
    }

    async fn send(&self, path: &str, body: Option<&[u8]>, cancel: &Cancel) -> Result<HttpResponse, LlmError> {
        let url = self.url(path);
        let key = self.endpoint.api_key.as_ref();
        let response = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(LlmError::Cancelled),
            response = async {
                match body {
                    Some(body) => self.http.post_json(&url, key, body.to_vec()).await,
                    None => self.http.get(&url, key).await,
                }
            } => response?,
        };
        if (200..300).contains(&response.status) {
            return Ok(response);
        }
        let status = response.status;
        let retry_after = response.retry_after;
        let body = read_all(response, cancel).await.unwrap_or_default();
        Err(classify_status(status, &body, retry_after))
    }

    async fn chat_attempt(&self, body: &[u8], on_event: &mut (dyn FnMut(ChatEvent) + Send), cancel: &Cancel, emitted: &mut bool) -> Result<Assembled, LlmError> {
        let mut response = self.send("chat/completions", Some(body), cancel).await?;
        let mut assembler = StreamAssembler::new();
        let mut events = Vec::new();
        if !response.content_type.contains("text/event-stream") {
            // Not a stream: a server that ignored `stream: true` and sent a whole
            // completion, or something that is not an OpenAI-compatible API at all.
            let content_type = response.content_type.clone();
            let whole = read_all(response, cancel).await?;
            let trimmed = whole.trim_ascii_start();
            if trimmed.starts_with(b"data:") {
                for event in super::sse::parse_all(&whole) {
                    if event.event.as_deref() == Some("error") {
                        return Err(assembler.push_error_event(&event.data));
                    }
                    assembler.push_data(&event.data, &mut events)?;
                }
            } else {
                let value: Value = serde_json::from_slice(&whole).map_err(|_| LlmError::BadResponse {
                    detail: format!("the server answered with {} instead of a chat completion", if content_type.is_empty() { "no content type".to_owned() } else { content_type }),
                })?;
                assembler.push_chunk(&value, &mut events)?;
            }
            let assembled = assembler.finish(&mut events)?;
            for event in events {
                *emitted = true;
                on_event(event);
            }
            return Ok(assembled);
        }
        let mut parser = SseParser::new();
        let mut failed: Option<LlmError> = None;
        let (mut answer_guard, mut reasoning_guard) = (RepetitionGuard::new(), RepetitionGuard::new());
        // One cancel future for the whole stream, not one per chunk.
        let cancelled = cancel.cancelled();
        tokio::pin!(cancelled);
        loop {
            let chunk = tokio::select! {
                biased;
                _ = &mut cancelled => return Err(LlmError::Cancelled),
                chunk = response.next_chunk() => chunk?,
            };
            // Each event goes to the assembler as borrowed text, straight from the
            // parser's buffer; the first bad one stops the stream.
            let mut sink = |event: Option<&str>, data: &str| {
                if failed.is_none() {
                    if event == Some("error") {
                        failed = Some(assembler.push_error_event(data));
                    } else if let Err(error) = assembler.push_data(data, &mut events) {
                        failed = Some(error);
                    }
                }
            };
            let ended = match chunk {
                Some(bytes) => {
                    parser.push_with(&bytes, &mut sink);
                    false
                }
                None => {
                    parser.finish_with(&mut sink);
                    true
                }
            };
            if let Some(error) = failed.take() {
                return Err(error);
            }
            for event in events.drain(..) {
                let repeated = match &event {
                    ChatEvent::TextDelta(text) => answer_guard.push(text),
                    ChatEvent::ReasoningDelta(text) => reasoning_guard.push(text),
                    ChatEvent::ToolCallStarted { .. } => None,
                };
                *emitted = true;
                on_event(event);
                if let Some(repeated) = repeated {
                    // Dropping the response closes the connection: the server stops.
                    tracing::info!(times = repeated.times, "the model repeated itself; its answer was stopped");
                    return Err(LlmError::Repetition { excerpt: repeated.excerpt, times: repeated.times });
                }
            }
            if ended || assembler.is_done() {
                break;
            }
        }
        // Dropping the response here closes the connection even if the server would
        // have sent more after [DONE].
        drop(response);
        let assembled = assembler.finish(&mut events)?;
        for event in events {
            *emitted = true;
            on_event(event);
        }
        Ok(assembled)
    }

    /// A chat whose answer must be JSON matching `schema`. With `native_schema` the
    /// server is asked for it (`response_format: json_schema`); either way the JSON is
    /// extracted from the answer and validated, and a failure is sent back for repair
    /// at most [`MAX_REPAIRS`] times.
    pub async fn chat_json(&self, request: &ChatRequest, schema_name: &str, schema: &Value, native_schema: bool, cancel: &Cancel) -> Result<StructuredResponse, LlmError> {
        let validator = super::structured::Validator::new(schema).map_err(|e| LlmError::Config { detail: e.to_string() })?;
        let mut request = request.clone();
        if native_schema {
            if request.response_format == ResponseFormat::Text {
                request.response_format = ResponseFormat::JsonSchema { name: schema_name.to_owned(), schema: schema.clone() };
            }
        } else {
            request.messages.push(Message::system(super::structured::instructions(schema)));
        }
        let mut calls = 0u32;
        loop {
            calls += 1;
            let response = self.chat(&request, &mut |_| {}, cancel).await?;
            let problem = match super::structured::extract_json(&response.text) {
                Some(value) => match validator.check(&value) {
                    Ok(()) => return Ok(StructuredResponse { value, response, calls }),
                    Err(violations) => violations.to_string(),
                },
                None => "the reply holds no JSON value".to_owned(),
            };
            if calls > MAX_REPAIRS {
                return Err(LlmError::InvalidOutput { attempts: calls, detail: problem });
            }
            request.messages.push(Message { role: Role::Assistant, content: response.text.into(), tool_calls: Vec::new(), tool_call_id: None });
            request.messages.push(Message::user(format!("That reply is not valid: {problem}. Reply again with only the corrected JSON, matching the schema.")));
        }
    }

    /// Embeds `inputs` in batches of at most `batch_size` (and about 250,000 estimated
    /// tokens). Results are mapped by their `index`; a count or index that does not
    /// match the inputs is an error, never a silent mismatch.
    pub async fn embed(&self, inputs: &[String], batch_size: usize, cancel: &Cancel) -> Result<Embeddings, LlmError> {
        if let Some(idx) = inputs.iter().position(|i| i.trim().is_empty()) {
            return Err(LlmError::Config { detail: format!("input {idx} is empty; providers refuse empty inputs") });
        }
        let batch_size = batch_size.clamp(1, MAX_EMBEDDING_BATCH);
        let mut batches: Vec<std::ops::Range<usize>> = Vec::new();
        let mut start = 0;
        let mut tokens = 0u64;
        for (idx, input) in inputs.iter().enumerate() {
            let input_tokens = estimate_tokens(input);
            if idx > start && (idx - start >= batch_size || tokens + input_tokens > MAX_EMBEDDING_BATCH_TOKENS) {
                batches.push(start..idx);
                start = idx;
                tokens = 0;
            }
            tokens += input_tokens;
        }
        if start < inputs.len() {
            batches.push(start..inputs.len());
        }
        let mut out = Embeddings { vectors: Vec::with_capacity(inputs.len()), model: self.endpoint.model.clone(), input_tokens: 0, attempts: 0 };
        for range in batches {
            let batch = &inputs[range];
            let body =
                serde_json::to_vec(&json!({ "model": self.endpoint.model, "input": batch, "encoding_format": "float" })).map_err(|e| LlmError::Config { detail: e.to_string() })?;
            let mut retry = 0;
            let value = loop {
                out.attempts += 1;
                let result = async {
                    let response = self.send("embeddings", Some(&body), cancel).await?;
                    let whole = read_all(response, cancel).await?;
                    serde_json::from_slice::<Value>(&whole).map_err(|e| LlmError::BadResponse { detail: format!("the embeddings answer is not JSON ({e})") })
                }
                .await
                .map_err(|e| e.scrub(self.secret()));
                match result {
                    Ok(value) => break value,
                    Err(error) => {
                        retry += 1;
                        if matches!(error, LlmError::Cancelled) || !self.backoff(retry, &error, cancel).await? {
                            return Err(error);
                        }
                    }
                }
            };
            let (vectors, model, tokens) = parse_embeddings(&value, batch.len())?;
            out.vectors.extend(vectors);
            if let Some(model) = model {
                out.model = model;
            }
            out.input_tokens += tokens.unwrap_or_else(|| batch.iter().map(|i| estimate_tokens(i)).sum());
        }
        Ok(out)
    }

    /// The model's context window as the server states it, asking each server family
    /// where it says it (see [`super::window`]): llama.cpp's `/props`, vLLM's
    /// `max_model_len` in `/models`, LM Studio's `/api/v0/models`, Ollama's `/api/ps`
    /// (a running model) and `/api/show`. `None` when no answer says it (a hosted API);
    /// failures are not errors here, only an unknown window.
    pub async fn detect_window(&self, cancel: &Cancel) -> Option<(u32, super::window::WindowSource)> {
        use super::window;
        let root = window::server_root(&self.endpoint.base_url);
        let model = self.endpoint.model.as_str();
        if let Some(found) = self.json_at(&format!("{root}/props"), None, cancel).await.as_ref().and_then(window::from_llama_props) {
            return Some(found);
        }
        if let Some(found) = self.json_at(&self.url("models"), None, cancel).await.and_then(|v| window::from_vllm_models(&v, model)) {
            return Some(found);
        }
        if let Some(found) = self.json_at(&format!("{root}/api/v0/models"), None, cancel).await.and_then(|v| window::from_lm_studio(&v, model)) {
            return Some(found);
        }
        if let Some(found) = self.json_at(&format!("{root}/api/ps"), None, cancel).await.and_then(|v| window::from_ollama_ps(&v, model)) {
            return Some(found);
        }
        let show = serde_json::to_vec(&json!({ "model": model })).ok()?;
        self.json_at(&format!("{root}/api/show"), Some(show), cancel).await.as_ref().and_then(window::from_ollama_show)
    }

    /// `text`'s tokens as the server's own tokenizer counts them, where the server
    /// offers one (relative to its root, not to `/v1`): llama.cpp's server
    /// `POST /tokenize {"content"}`, llama-cpp-python's `POST /extras/tokenize
    /// {"input"}`, each answering `{"tokens": [...]}`. `None` when neither answers.
    pub async fn count_tokens(&self, text: &str, cancel: &Cancel) -> Option<(u64, super::window::TokenizerEndpoint)> {
        use super::window::TokenizerEndpoint;
        let root = super::window::server_root(&self.endpoint.base_url);
        for endpoint in [TokenizerEndpoint::LlamaCpp, TokenizerEndpoint::LlamaCppPython] {
            let (path, field) = endpoint.route();
            let mut request = serde_json::Map::new();
            request.insert(field.to_owned(), Value::from(text));
            let Ok(body) = serde_json::to_vec(&request) else { continue };
            let counted = self.json_at(&format!("{root}{path}"), Some(body), cancel).await.and_then(|v| v.get("tokens").and_then(Value::as_array).map(|t| t.len() as u64));
            if let Some(tokens) = counted.filter(|n| *n > 0) {
                return Some((tokens, endpoint));
            }
        }
        None
    }

    /// The JSON a URL answers with (a GET, or a POST of `body`), or `None` for any
    /// failure.
    async fn json_at(&self, url: &str, body: Option<Vec<u8>>, cancel: &Cancel) -> Option<Value> {
        let key = self.endpoint.api_key.as_ref();
        let response = tokio::select! {
            biased;
            _ = cancel.cancelled() => return None,
            response = async {
                match body {
                    Some(body) => self.http.post_json(url, key, body).await,
                    None => self.http.get(url, key).await,
                }
            } => response.ok()?,
        };
        if !(200..300).contains(&response.status) {
            return None;
        }
        let whole = read_all(response, cancel).await.ok()?;
        serde_json::from_slice(&whole).ok()
    }

    /// The model ids the server offers (`GET /models`), sorted.
    pub async fn models(&self, cancel: &Cancel) -> Result<Vec<String>, LlmError> {
        let response = self.send("models", None, cancel).await.map_err(|e| e.scrub(self.secret()))?;
        let whole = read_all(response, cancel).await?;
        let value: Value = serde_json::from_slice(&whole).map_err(|_| LlmError::BadResponse { detail: "the model list is not JSON".to_owned() })?;
        let list = value
            .get("data")
            .or_else(|| value.get("models"))
            .and_then(Value::as_array)
            .ok_or_else(|| LlmError::BadResponse { detail: "the model list has no `data`".to_owned() })?;
        let mut ids: Vec<String> = list.iter().filter_map(|m| m.get("id").or_else(|| m.get("name")).and_then(Value::as_str).map(str::to_owned)).collect();
        ids.sort();
        ids.dedup();
        Ok(ids)
    }
}

/// A finish reason as servers write it.
fn finish_text(reason: &super::FinishReason) -> String {
    use super::FinishReason;
    match reason {
        FinishReason::Stop => "stop".to_owned(),
        FinishReason::Length => "length".to_owned(),
        FinishReason::ToolCalls => "tool_calls".to_owned(),
        FinishReason::ContentFilter => "content_filter".to_owned(),
        FinishReason::Other(other) => other.clone(),
    }
}

async fn read_all(response: HttpResponse, cancel: &Cancel) -> Result<Vec<u8>, LlmError> {
    tokio::select! {
        biased;
        _ = cancel.cancelled() => Err(LlmError::Cancelled),
        body = response.read_all() => body,
    }
}

fn wire_message(message: &Message) -> Value {
    let role = match message.role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    };
    let mut value = json!({ "role": role, "content": message.content });
    if !message.tool_calls.is_empty() {
        if message.content.is_empty() {
            value["content"] = Value::Null;
        }
        value["tool_calls"] = message.tool_calls.iter().map(|c| json!({ "id": c.id, "type": "function", "function": { "name": c.name, "arguments": c.arguments } })).collect();
    }
    if let Some(id) = &message.tool_call_id {
        value["tool_call_id"] = json!(id);
    }
    value
}

/// An embeddings answer: vectors in input order, the model, the input tokens.
pub type ParsedEmbeddings = (Vec<Vec<f32>>, Option<String>, Option<u64>);

/// Vectors in input order from an embeddings answer, checked against `expected`.
pub fn parse_embeddings(value: &Value, expected: usize) -> Result<ParsedEmbeddings, LlmError> {
    let bad = |detail: String| LlmError::BadResponse { detail };
    let data = value.get("data").and_then(Value::as_array).ok_or_else(|| bad("the embeddings answer has no `data` list".to_owned()))?;
    if data.len() != expected {
        return Err(bad(format!("the server returned {} embeddings for {expected} inputs", data.len())));
    }
    let mut slots: Vec<Option<Vec<f32>>> = vec![None; expected];
    for (position, item) in data.iter().enumerate() {
        let index = item.get("index").and_then(Value::as_u64).map(|i| i as usize).unwrap_or(position);
        let vector: Vec<f32> = item
            .get("embedding")
            .and_then(Value::as_array)
            .ok_or_else(|| bad(format!("embedding {index} is not a list of numbers (base64 is not requested)")))?
            .iter()
            .map(|n| n.as_f64().map(|f| f as f32))
            .collect::<Option<_>>()
            .ok_or_else(|| bad(format!("embedding {index} holds a value that is not a number")))?;
        match slots.get_mut(index) {
            Some(slot @ None) => *slot = Some(vector),
            Some(Some(_)) => return Err(bad(format!("the server returned embedding {index} twice"))),
            None => return Err(bad(format!("the server returned embedding {index} for {expected} inputs"))),
        }
    }
    let vectors: Vec<Vec<f32>> = slots.into_iter().collect::<Option<_>>().ok_or_else(|| bad("an embedding is missing".to_owned()))?;
    if let Some(first) = vectors.first() {
        if vectors.iter().any(|v| v.len() != first.len()) {
            return Err(bad("the embeddings have different dimensions".to_owned()));
        }
    }
    let model = value.get("model").and_then(Value::as_str).map(str::to_owned);
    let tokens = value.get("usage").and_then(|u| u.get("prompt_tokens")).and_then(Value::as_u64);
    Ok((vectors, model, tokens))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn embeddings_are_mapped_by_index_and_checked() {
        let value = json!({"data": [{"index": 1, "embedding": [0.5, 0.5]}, {"index": 0, "embedding": [1.0, 0.0]}], "usage": {"prompt_tokens": 4}});
        let (vectors, _, tokens) = parse_embeddings(&value, 2).unwrap();
        assert_eq!(vectors, vec![vec![1.0, 0.0], vec![0.5, 0.5]]);
        assert_eq!(tokens, Some(4));
        assert!(matches!(parse_embeddings(&value, 3), Err(LlmError::BadResponse { .. })));
        let twice = json!({"data": [{"index": 0, "embedding": [1.0]}, {"index": 0, "embedding": [1.0]}]});
        assert!(matches!(parse_embeddings(&twice, 2), Err(LlmError::BadResponse { .. })));
    }
}
