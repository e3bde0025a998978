//! Talking to language models: the OpenAI-compatible client (streaming chat with tool
//! calls, structured output, embeddings, model lists), its error taxonomy and retry
//! policy, LLM profiles and the keychain that holds their API keys.
//!
//! Layers, from pure to IO:
//! - [`sse`] splits a byte stream into Server-Sent Events (pure; any chunking gives the
//!   same events).
//! - [`stream`] turns chat-completion chunks into text, reasoning, tool calls, a finish
//!   reason and usage (pure; copes with the ways real servers differ from OpenAI).
//! - [`error`] classifies HTTP statuses and provider error bodies; [`retry`] decides
//!   whether and when to try again (pure).
//! - [`transport`] is the only module that imports reqwest.
//! - [`client`] puts them together: retries, cancellation, timeouts, structured output,
//!   embeddings.
//! - [`profile`] and [`keychain`]: what the user configured, and where keys live.
//!
//! Invariant: an API key is held in an [`ApiKey`], which never prints, never serializes
//! and is scrubbed from every provider message before that message goes anywhere.

pub mod client;
pub mod error;
pub mod keychain;
pub mod profile;
pub mod repetition;
pub mod retry;
pub mod sse;
pub mod stream;
pub mod structured;
pub mod transport;
pub mod window;

use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use client::{Cancel, LlmClient};
pub use error::LlmError;

/// An API key. Debug and Display print only a fingerprint; it has no `Serialize`, so
/// it cannot end up in a stored record, a log line written with `?` or an API result.
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn new(key: impl Into<String>) -> Self {
        ApiKey(key.into())
    }

    /// The key itself, for the `Authorization` header and the keychain only.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// What may be shown: `…` and the last four characters (fewer for short keys).
    pub fn fingerprint(&self) -> String {
        let chars: Vec<char> = self.0.trim().chars().collect();
        let shown = if chars.len() >= 12 { 4 } else { chars.len() / 4 };
        let tail: String = chars[chars.len() - shown..].iter().collect();
        format!("…{tail}")
    }

    pub fn is_blank(&self) -> bool {
        self.0.trim().is_empty()
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ApiKey({})", self.fingerprint())
    }
}

/// Who speaks a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

/// One message of a conversation, in the provider-neutral shape the harness keeps.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    pub role: Role,
    pub content: std::sync::Arc<str>,
    /// Tool calls the assistant asked for (assistant messages only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// The call this message answers (tool messages only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl Message {
    pub fn system(content: impl Into<std::sync::Arc<str>>) -> Self {
        Message { role: Role::System, content: content.into(), tool_calls: Vec::new(), tool_call_id: None }
    }
    pub fn user(content: impl Into<std::sync::Arc<str>>) -> Self {
        Message { role: Role::User, content: content.into(), tool_calls: Vec::new(), tool_call_id: None }
    }
    pub fn assistant(content: impl Into<std::sync::Arc<str>>, tool_calls: Vec<ToolCall>) -> Self {
        Message { role: Role::Assistant, content: content.into(), tool_calls, tool_call_id: None }
    }
    pub fn tool_result(tool_call_id: impl Into<String>, content: impl Into<std::sync::Arc<str>>) -> Self {
        Message { role: Role::Tool, content: content.into(), tool_calls: Vec::new(), tool_call_id: Some(tool_call_id.into()) }
    }
}

/// A tool the model may call: a name, what it does, and a JSON schema of its input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub parameters: Schema,
}

/// A tool's input schema as a request carries it: shared, so a request clones it
/// without copying the JSON, and estimated once, since every model call estimates its
/// tool definitions. On the wire and in storage it is the plain JSON schema.
#[derive(Clone)]
pub struct Schema {
    value: std::sync::Arc<serde_json::Value>,
    tokens: u64,
}

impl Schema {
    pub fn new(value: serde_json::Value) -> Schema {
        let tokens = estimate_json_tokens(&value);
        Schema { value: std::sync::Arc::new(value), tokens }
    }

    pub fn value(&self) -> &serde_json::Value {
        &self.value
    }

    /// [`estimate_json_tokens`] of the schema.
    pub fn tokens(&self) -> u64 {
        self.tokens
    }
}

impl From<serde_json::Value> for Schema {
    fn from(value: serde_json::Value) -> Schema {
        Schema::new(value)
    }
}

impl PartialEq for Schema {
    fn eq(&self, other: &Schema) -> bool {
        self.value == other.value
    }
}

impl std::fmt::Debug for Schema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.value.fmt(f)
    }
}

impl Serialize for Schema {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.value.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Schema {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Schema, D::Error> {
        serde_json::Value::deserialize(deserializer).map(Schema::new)
    }
}

/// A complete tool call as the model asked for it. `arguments` is the raw JSON text;
/// the harness validates it against the tool's schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    Stop,
    Length,
    ToolCalls,
    ContentFilter,
    /// A reason this client does not know, kept verbatim.
    Other(String),
}

impl FinishReason {
    pub fn parse(text: &str) -> FinishReason {
        match text {
            "stop" | "eos" | "end_turn" => FinishReason::Stop,
            "length" | "max_tokens" => FinishReason::Length,
            "tool_calls" | "function_call" => FinishReason::ToolCalls,
            "content_filter" => FinishReason::ContentFilter,
            other => FinishReason::Other(other.to_owned()),
        }
    }
}

/// Tokens a call used. `estimated` is true when the server did not report usage and
/// the numbers come from [`estimate_tokens`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub estimated: bool,
}

/// How the reply should be shaped.
#[derive(Debug, Clone, PartialEq)]
pub enum ResponseFormat {
    Text,
    /// `response_format: {type: json_schema}` (OpenAI, vLLM, Ollama, LM Studio); only for
    /// servers that support it.
    JsonSchema {
        name: String,
        schema: serde_json::Value,
    },
    /// `response_format: {type: json_object, schema}`: how llama.cpp's server and
    /// llama-cpp-python constrain a reply to a schema (a grammar).
    JsonObjectSchema {
        schema: serde_json::Value,
    },
}

/// The copy of `schema` a server is given to shape a reply: without upper length and
/// count bounds (`maxLength`, `maxItems`) and large lower ones. llama.cpp turns a bound
/// into that many nested grammar rules (a `maxLength` of 2,000 makes a grammar it refuses
/// to parse, and llama-cpp-python's server dies on it); small lower bounds stay, so a
/// constrained model cannot answer with an empty list or string. The engine validates
/// every reply against the full schema itself and asks for a repair, so every bound
/// still holds.
pub fn server_schema(schema: &serde_json::Value) -> serde_json::Value {
    let heavy = |key: &str, value: &serde_json::Value| match key {
        "maxLength" | "maxItems" => true,
        "minLength" | "minItems" => value.as_u64().is_none_or(|n| n > 16),
        _ => false,
    };
    match schema {
        serde_json::Value::Object(map) => map
            .iter()
            .filter(|(k, v)| !heavy(k, v))
            .map(|(k, v)| (k.clone(), if k == "enum" || k == "const" { v.clone() } else { server_schema(v) }))
            .collect::<serde_json::Map<_, _>>()
            .into(),
        serde_json::Value::Array(items) => items.iter().map(server_schema).collect::<Vec<_>>().into(),
        other => other.clone(),
    }
}

/// A chat request, provider-neutral. The model comes from the endpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    pub messages: Vec<Message>,
    /// Shared: a session sends the same definitions call after call.
    pub tools: std::sync::Arc<[ToolSpec]>,
    pub max_output_tokens: Option<u32>,
    pub temperature: Option<f32>,
    /// Sent as `seed`: servers that sample reproducibly with one (llama.cpp, vLLM,
    /// OpenAI) give the same reply to the same request.
    pub seed: Option<u32>,
    pub response_format: ResponseFormat,
}

impl ChatRequest {
    pub fn new(messages: Vec<Message>) -> Self {
        ChatRequest { messages, tools: Vec::new().into(), max_output_tokens: None, temperature: None, seed: None, response_format: ResponseFormat::Text }
    }
}

/// What the caller sees while a reply streams in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChatEvent {
    /// A piece of the answer.
    TextDelta(String),
    /// A piece of the model's reasoning (`reasoning_content` or a `<think>` block);
    /// shown collapsed, never part of a draft or proposal.
    ReasoningDelta(String),
    /// The model started a tool call; its arguments arrive with the response.
    ToolCallStarted { id: String, name: String },
}

/// A finished reply.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatResponse {
    /// The model id the server reported (or the requested one when it reported none).
    pub model: String,
    pub text: String,
    pub reasoning: String,
    pub tool_calls: Vec<ToolCall>,
    pub finish_reason: FinishReason,
    pub usage: Usage,
    /// HTTP attempts made, including retries.
    pub attempts: u32,
    pub latency: Duration,
}

/// Where requests go: a normalised base URL (ending before `/chat/completions`), the
/// model, the key, and the network settings of the profile.
#[derive(Debug, Clone)]
pub struct Endpoint {
    pub base_url: String,
    pub model: String,
    pub api_key: Option<ApiKey>,
    /// Bounds the wait for a response to start and every gap between stream chunks.
    pub timeout: Duration,
    pub proxy_url: Option<String>,
    /// A PEM file with an extra root certificate (a company proxy's CA).
    pub ca_cert_pem: Option<Vec<u8>>,
}

/// A rough token count: one per CJK character, one per four other characters. Used
/// when a server reports no usage, and for quota checks before a call.
pub fn estimate_tokens(text: &str) -> u64 {
    let mut cjk = 0u64;
    let mut other = 0u64;
    for c in text.chars() {
        if is_wide(c) {
            cjk += 1;
        } else {
            other += 1;
        }
    }
    cjk + other.div_ceil(4)
}

fn is_wide(c: char) -> bool {
    matches!(c as u32,
        0x1100..=0x115F | 0x2E80..=0x303E | 0x3041..=0x33FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF
        | 0xA000..=0xA4CF | 0xAC00..=0xD7A3 | 0xF900..=0xFAFF | 0xFE30..=0xFE4F | 0xFF00..=0xFF60
        | 0xFFE0..=0xFFE6 | 0x20000..=0x2FFFD | 0x30000..=0x3FFFD)
}

/// The estimated input tokens of a request (messages and tool schemas).
pub fn estimate_request_tokens(request: &ChatRequest) -> u64 {
    estimate_messages_tokens(&request.messages) + estimate_tools_tokens(&request.tools)
}

/// The estimated tokens of messages in a request (their part of
/// [`estimate_request_tokens`]): so a caller need not build a request to count them.
pub fn estimate_messages_tokens(messages: &[Message]) -> u64 {
    messages.iter().map(estimate_message_tokens).sum()
}

/// The estimated tokens of one message in a request: its text, its tool calls and a
/// few for the framing.
pub fn estimate_message_tokens(message: &Message) -> u64 {
    4 + estimate_tokens(&message.content) + message.tool_calls.iter().map(|c| estimate_tokens(&c.name) + estimate_tokens(&c.arguments)).sum::<u64>()
}

/// The estimated tokens of tool definitions in a request (their part of
/// [`estimate_request_tokens`]).
pub fn estimate_tools_tokens(tools: &[ToolSpec]) -> u64 {
    tools.iter().map(|t| estimate_tokens(&t.description) + t.parameters.tokens()).sum()
}

/// [`estimate_tokens`] of `value`'s compact JSON (`value.to_string()`), counted
/// without writing it out: every model call estimates the tool schemas several times.
pub fn estimate_json_tokens(value: &serde_json::Value) -> u64 {
    let mut counts = JsonChars::default();
    counts.value(value);
    counts.wide + counts.other.div_ceil(4)
}

/// The wide and other characters of a value's compact JSON.
#[derive(Default)]
struct JsonChars {
    wide: u64,
    other: u64,
}

impl JsonChars {
    fn value(&mut self, value: &serde_json::Value) {
        use serde_json::Value;
        match value {
            Value::Null => self.other += 4,
            Value::Bool(true) => self.other += 4,
            Value::Bool(false) => self.other += 5,
            // ASCII digits, sign, point and exponent, as serde_json writes them.
            Value::Number(n) => self.other += serde_json::to_string(n).map_or(0, |s| s.len() as u64),
            Value::String(s) => self.string(s),
            Value::Array(items) => {
                // Brackets and the commas between items.
                self.other += 2 + items.len().saturating_sub(1) as u64;
                items.iter().for_each(|item| self.value(item));
            }
            Value::Object(map) => {
                // Braces, the commas between entries and each entry's colon.
                self.other += 2 + map.len().saturating_sub(1) as u64 + map.len() as u64;
                for (key, item) in map {
                    self.string(key);
                    self.value(item);
                }
            }
        }
    }

    /// A JSON string: its quotes, and each character as serde_json escapes it.
    fn string(&mut self, text: &str) {
        self.other += 2;
        for c in text.chars() {
            match c {
                '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => self.other += 2,
                c if (c as u32) < 0x20 => self.other += 6,
                c if is_wide(c) => self.wide += 1,
                _ => self.other += 1,
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn key_prints_only_its_fingerprint() {
        let key = ApiKey::new("sk-secret-abcdefghijkl-WXYZ");
        assert_eq!(key.fingerprint(), "…WXYZ");
        assert_eq!(format!("{key:?}"), "ApiKey(…WXYZ)");
        assert_eq!(ApiKey::new("short").fingerprint(), "…t");
        assert_eq!(ApiKey::new("").fingerprint(), "…");
    }

    fn json_value() -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
        use proptest::prelude::*;
        use serde_json::{json, Value};
        // Quotes, backslashes, every kind of control character, wide and narrow text.
        let text = proptest::collection::vec(
            prop::sample::select(vec![
                'a',
                'Z',
                ' ',
                '"',
                '\\',
                '/',
                '\n',
                '\r',
                '\t',
                '\u{8}',
                '\u{c}',
                '\u{1}',
                '\u{1f}',
                '\u{7f}',
                '中',
                '，',
                'ア',
                '한',
                'é',
                '😀',
                '\u{20001}',
            ]),
            0..12,
        )
        .prop_map(|chars| chars.into_iter().collect::<String>());
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            any::<u64>().prop_map(|n| json!(n)),
            any::<f64>().prop_map(|n| json!(n)),
            text.clone().prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 64, 6, move |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                proptest::collection::vec((text.clone(), inner), 0..6).prop_map(|entries| Value::Object(entries.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        #[test]
        fn json_is_estimated_as_its_compact_text(value in json_value()) {
            proptest::prop_assert_eq!(estimate_json_tokens(&value), estimate_tokens(&value.to_string()), "{}", value);
        }
    }

    #[test]
    fn tool_schemas_are_estimated_as_before() {
        let schema = serde_json::json!({"type": "object", "required": ["quote"], "properties": {"quote": {"type": "string", "description": "原文 \"exact\"\n", "maxLength": 2000, "minimum": -1.5}}, "additionalProperties": false});
        let tools = vec![ToolSpec { name: "edit".to_owned(), description: "Propose an edit: 修改".to_owned(), parameters: Schema::new(schema.clone()) }];
        let expected = estimate_tokens("Propose an edit: 修改") + estimate_tokens(&schema.to_string());
        assert_eq!(estimate_tools_tokens(&tools), expected);
        let mut request = ChatRequest::new(vec![Message::user("你好")]);
        request.tools = tools.into();
        assert_eq!(estimate_request_tokens(&request), 4 + 2 + expected);
    }

    #[test]
    fn a_schema_is_its_plain_json_on_the_wire_and_counted_once() {
        let value = serde_json::json!({"type": "object", "properties": {"text": {"type": "string", "description": "正文"}}});
        let schema = Schema::new(value.clone());
        assert_eq!(serde_json::to_value(&schema).unwrap(), value);
        let back: Schema = serde_json::from_value(value.clone()).unwrap();
        assert_eq!(back, schema);
        assert_eq!(back.tokens(), estimate_tokens(&value.to_string()));
        let message = Message::assistant("好的", vec![ToolCall { id: "c1".to_owned(), name: "edit".to_owned(), arguments: "{}".to_owned() }]);
        let messages = vec![Message::user("你好"), message];
        assert_eq!(estimate_messages_tokens(&messages), estimate_request_tokens(&ChatRequest::new(messages.clone())));
    }

    #[test]
    fn estimates_cjk_per_character() {
        assert_eq!(estimate_tokens("你好世界"), 4);
        assert_eq!(estimate_tokens("abcdefgh"), 2);
        assert_eq!(estimate_tokens(""), 0);
    }
}
