//! A scripted OpenAI-compatible model server for tests: real HTTP on 127.0.0.1, chat
//! completions (streaming and not), embeddings and `/v1/models`. Each chat or
//! embeddings request takes the next [`Reply`] of the script, in order; every request
//! is recorded, and the server can assert how many calls were made and that every
//! tool call the model made got exactly one tool result in a later request.
//!
//! It is never a model: it answers what the test scripted (or, standalone, a fixed
//! fallback reply).

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::http::{HeaderMap, Method, Uri};
use serde_json::{json, Value};

mod answers;
mod routes;

pub use answers::{posed_prompt_tokens, posed_prompt_tokens_with};

/// One scripted answer.
#[derive(Debug, Clone)]
pub enum Reply {
    /// An answer: `content` in pieces of `chunk_chars` characters when streamed.
    Text { content: String, reasoning: Option<String>, chunk_chars: usize, usage: Usage, finish: String },
    /// Tool calls, streamed with the arguments split every `split_args` characters
    /// (0: whole). `without_index` leaves out `index` in the deltas (older Ollama).
    ToolCalls { calls: Vec<(String, String, String)>, content: String, without_index: bool, split_args: usize },
    /// An HTTP error with a body and headers (such as `retry-after`).
    Error { status: u16, body: Value, headers: Vec<(String, String)> },
    /// A 200 stream that sends `content` and then an `{"error": ...}` chunk.
    StreamError { content: String, error: Value },
    /// Any body, as is.
    Raw { status: u16, content_type: String, body: String },
    /// A stream that sends `content` and closes without a finish reason or `[DONE]`.
    Cut { content: String },
    /// A stream that sends `content` and then nothing, holding the connection open.
    Stall { content: String },
    /// Waits, then answers `then`.
    Delay { delay: Duration, then: Box<Reply> },
    /// Streams `then` with a pause between its events, as a model writing at a pace.
    Paced { interval: Duration, then: Box<Reply> },
    /// An embeddings answer: `dims`-long vectors, `count` of them (default: one per
    /// input), listed in reverse order when `reversed` (clients must map by index).
    Embeddings { dims: usize, count: Option<usize>, reversed: bool },
    /// The reply a function picks from the request body (a fallback that answers
    /// different kinds of requests differently, such as compaction requests).
    Computed(Responder),
    /// An embeddings answer computed by a function of each input (a scripted
    /// "meaning", for search tests and the search evaluation); use it as the
    /// fallback to answer any number of requests.
    EmbeddingsBy(EmbedFn),
}

/// A function from a request body to the reply it gets.
#[derive(Clone)]
pub struct Responder(pub Arc<dyn Fn(&Value) -> Reply + Send + Sync>);

impl std::fmt::Debug for Responder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Responder")
    }
}

/// A function from an input text to its embedding.
pub type Embed = dyn Fn(&str) -> Vec<f32> + Send + Sync;

/// An [`Embed`] a reply can carry.
#[derive(Clone)]
pub struct EmbedFn(pub Arc<Embed>);

impl std::fmt::Debug for EmbedFn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EmbedFn")
    }
}

/// Whether and how a reply reports usage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Usage {
    /// Counted from the request and reply (about four characters a token).
    Counted,
    Fixed {
        input: u64,
        output: u64,
    },
    /// No usage at all (older local servers).
    Omitted,
}

impl Reply {
    pub fn text(content: &str) -> Reply {
        Reply::Text { content: content.to_owned(), reasoning: None, chunk_chars: 3, usage: Usage::Counted, finish: "stop".to_owned() }
    }

    pub fn text_with(content: &str, chunk_chars: usize, usage: Usage) -> Reply {
        Reply::Text { content: content.to_owned(), reasoning: None, chunk_chars, usage, finish: "stop".to_owned() }
    }

    pub fn reasoning(reasoning: &str, content: &str) -> Reply {
        Reply::Text { content: content.to_owned(), reasoning: Some(reasoning.to_owned()), chunk_chars: 4, usage: Usage::Counted, finish: "stop".to_owned() }
    }

    /// Parallel tool calls `(id, name, arguments)`, arguments split every 5 characters.
    pub fn tool_calls(calls: &[(&str, &str, &str)]) -> Reply {
        Reply::ToolCalls {
            calls: calls.iter().map(|(i, n, a)| ((*i).to_owned(), (*n).to_owned(), (*a).to_owned())).collect(),
            content: String::new(),
            without_index: false,
            split_args: 5,
        }
    }

    pub fn error(status: u16, body: Value) -> Reply {
        Reply::Error { status, body, headers: Vec::new() }
    }

    pub fn error_with_headers(status: u16, body: Value, headers: &[(&str, &str)]) -> Reply {
        Reply::Error { status, body, headers: headers.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect() }
    }

    pub fn delayed(delay: Duration, then: Reply) -> Reply {
        Reply::Delay { delay, then: Box::new(then) }
    }

    pub fn paced(interval: Duration, then: Reply) -> Reply {
        Reply::Paced { interval, then: Box::new(then) }
    }

    pub fn embeddings(dims: usize) -> Reply {
        Reply::Embeddings { dims, count: None, reversed: true }
    }
}

/// A request the server received.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    pub method: String,
    pub path: String,
    /// The `Authorization` header, if any.
    pub authorization: Option<String>,
    pub body: Value,
}

impl RecordedRequest {
    pub fn is_chat(&self) -> bool {
        self.path.ends_with("/chat/completions")
    }
}

#[derive(Debug, Default)]
struct State {
    script: VecDeque<Reply>,
    fallback: Option<Reply>,
    requests: Vec<RecordedRequest>,
    models: Vec<String>,
    /// Fixed answers for other routes, by method and path (a llama.cpp `/props`, an
    /// Ollama `/api/show`): `(status, JSON body)`.
    routes: std::collections::HashMap<(String, String), (u16, Value)>,
    required_key: Option<String>,
    /// Streams whose client went away before the stream ended.
    disconnects: u64,
    /// Requests that found the script empty.
    unscripted: u64,
    /// Posing as llama.cpp's server with this `n_ctx` (see `pose_as_llama_cpp`).
    llama_ctx: Option<u64>,
    /// Response formats the posed server refuses, each as its server words it.
    refusals: Vec<Refusal>,
    /// The window of a posed llama.cpp server: a longer prompt is refused.
    llama_cpp_window: Option<u64>,
    /// A tokenizer route (`/tokenize` or `/extras/tokenize`) counting each wide (CJK)
    /// character as this many tokens (see `offer_tokenizer`).
    tokenizer: Option<(String, u64)>,
}

/// How a real server refuses a `response_format` type it does not take: the type, the
/// HTTP status and the body it answers with (each from the server's own source or its
/// users' reports, cited at the constructor).
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    pub format_type: String,
    pub status: u16,
    pub body: Value,
}

impl Refusal {
    /// llama.cpp's server before it took `json_schema` (and ik_llama.cpp's until 2025):
    /// `oaicompat_completion_params_parse` throws a `std::runtime_error`, which the
    /// server answers as a 500 `server_error`.
    pub fn llama_cpp_json_schema() -> Refusal {
        Refusal {
            format_type: "json_schema".to_owned(),
            status: 500,
            body: json!({"error": {"code": 500, "message": "response_format type must be one of \"text\" or \"json_object\", but got: json_schema", "type": "server_error"}}),
        }
    }

    /// DeepSeek's chat API, which takes `json_object` only.
    pub fn deepseek_json_schema() -> Refusal {
        Refusal {
            format_type: "json_schema".to_owned(),
            status: 400,
            body: json!({"error": {"message": "This response_format type is unavailable now", "type": "invalid_request_error", "param": null, "code": "invalid_request_error"}}),
        }
    }

    /// LM Studio's server, which takes `json_schema` and `text` only.
    pub fn lm_studio_json_object() -> Refusal {
        Refusal { format_type: "json_object".to_owned(), status: 400, body: json!({"error": "'response_format.type' must be 'json_schema' or 'text'"}) }
    }
}

type Shared = Arc<Mutex<State>>;

fn lock(state: &Shared) -> std::sync::MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|p| p.into_inner())
}

/// The running server; stops on drop.
pub struct ModelServer {
    addr: SocketAddr,
    state: Shared,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ModelServer {
    /// Starts on a free port of 127.0.0.1 with `script`.
    pub fn start(script: Vec<Reply>) -> ModelServer {
        ModelServer::start_on("127.0.0.1:0", script).unwrap_or_else(|e| panic!("model server: {e}"))
    }

    /// Starts on `addr` (for the standalone binary).
    pub fn start_on(addr: &str, script: Vec<Reply>) -> std::io::Result<ModelServer> {
        let state: Shared = Arc::new(Mutex::new(State { script: script.into(), models: vec!["fake-model".to_owned(), "fake-embed".to_owned()], ..State::default() }));
        let listener = std::net::TcpListener::bind(addr)?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let (shutdown, stop) = tokio::sync::oneshot::channel::<()>();
        let thread_state = Arc::clone(&state);
        let thread = std::thread::Builder::new().name("fake-model-server".to_owned()).spawn(move || {
            let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build() {
                Ok(runtime) => runtime,
                Err(e) => return eprintln!("model server runtime: {e}"),
            };
            runtime.block_on(async move {
                let Ok(listener) = tokio::net::TcpListener::from_std(listener) else { return };
                let app = axum::Router::new().fallback(move |method: Method, uri: Uri, headers: HeaderMap, body: Bytes| {
                    let state = Arc::clone(&thread_state);
                    async move { routes::handle(state, method, uri, headers, body).await }
                });
                let _ = axum::serve(listener, app)
                    .with_graceful_shutdown(async move {
                        let _ = stop.await;
                    })
                    .await;
            });
        })?;
        Ok(ModelServer { addr, state, shutdown: Some(shutdown), thread: Some(thread) })
    }

    /// `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Appends replies to the script.
    pub fn push(&self, reply: Reply) {
        lock(&self.state).script.push_back(reply);
    }

    /// What to answer when the script is empty (default: a 500 saying so).
    pub fn set_fallback(&self, reply: Reply) {
        lock(&self.state).fallback = Some(reply);
    }

    /// Answers 401 (echoing the wrong key, as some servers do) unless the request
    /// carries `Bearer <key>`.
    pub fn require_key(&self, key: Option<&str>) {
        lock(&self.state).required_key = key.map(str::to_owned);
    }

    /// Answers `method path` (such as `GET /props`) with `status` and `body` from now
    /// on, as the server that answer was recorded from would; it replaces the built-in
    /// `/v1/models` answer too.
    pub fn set_route(&self, method: &str, path: &str, status: u16, body: Value) {
        lock(&self.state).routes.insert((method.to_ascii_uppercase(), path.to_owned()), (status, body));
    }

    /// Poses as llama.cpp's server started with `-c n_ctx`: `GET /props` answers its
    /// `default_generation_settings.n_ctx`, and a chat request whose prompt with its
    /// `max_tokens` is over `n_ctx` is refused, as llama.cpp refuses an over-long
    /// prompt (400, `exceed_context_size_error`, its words and counts), without using
    /// up a scripted reply. Prompt tokens are counted as a tokenizer that gives each
    /// Chinese character a token and other text a token per four characters would
    /// ([`posed_prompt_tokens`]), and usage is reported in the same count. Stricter
    /// than llama.cpp, which checks the prompt alone: a request must also leave its
    /// reply the room it asks for.
    pub fn pose_as_llama_cpp(&self, n_ctx: u64) {
        let mut state = lock(&self.state);
        state.llama_ctx = Some(n_ctx);
        let props = json!({
            "default_generation_settings": {"n_ctx": n_ctx, "params": {"n_predict": -1, "temperature": 0.8}},
            "total_slots": 1,
            "model_path": "/models/fake-model.gguf",
            "chat_template": "{{ messages }}",
            "build_info": "b0-inkstone-fake",
        });
        state.routes.insert(("GET".to_owned(), "/props".to_owned()), (200, props));
    }

    /// Offers a tokenizer at `path` (from the root): llama.cpp's `/tokenize`
    /// (`{"content"}`) or llama-cpp-python's `/extras/tokenize` (`{"input"}`), answering
    /// `{"tokens": [...]}` with `per_wide` tokens for each wide (CJK) character and one
    /// per four other characters, as a small model's tokenizer counts Chinese. A
    /// server posing as llama.cpp ([`ModelServer::pose_as_llama_cpp`]) then counts
    /// prompts the same way.
    pub fn offer_tokenizer(&self, path: &str, per_wide: u64) {
        lock(&self.state).tokenizer = Some((path.to_owned(), per_wide));
    }

    /// Refuses requests whose `response_format` is of the refusal's type, as that
    /// server does (before anything is generated; the script is not consumed).
    pub fn refuse(&self, refusal: Refusal) {
        lock(&self.state).refusals.push(refusal);
    }

    /// Poses as a llama.cpp server started with `-c n_ctx` (one slot): a chat request
    /// whose prompt has `n_ctx` tokens or more is refused with llama.cpp's 400
    /// `exceed_context_size_error`, before anything is generated (the script is not
    /// consumed), and `GET /props` says the window.
    pub fn pose_llama_cpp_window(&self, n_ctx: u64) {
        let mut state = lock(&self.state);
        state.llama_cpp_window = Some(n_ctx);
        state.routes.insert(("GET".to_owned(), "/props".to_owned()), (200, json!({"default_generation_settings": {"n_ctx": n_ctx}, "total_slots": 1})));
    }

    pub fn set_models(&self, models: &[&str]) {
        lock(&self.state).models = models.iter().map(|m| (*m).to_owned()).collect();
    }

    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.state).requests.clone()
    }

    pub fn chat_requests(&self) -> Vec<RecordedRequest> {
        self.requests().into_iter().filter(RecordedRequest::is_chat).collect()
    }

    /// Streams the client closed before their end.
    pub fn disconnects(&self) -> u64 {
        lock(&self.state).disconnects
    }

    pub fn remaining_script(&self) -> usize {
        lock(&self.state).script.len()
    }

    /// Panics unless exactly `n` chat and embeddings calls were made and none found
    /// the script empty.
    pub fn assert_calls(&self, n: usize) {
        let state = lock(&self.state);
        let calls = state.requests.iter().filter(|r| r.is_chat() || r.path.ends_with("/embeddings")).count();
        assert_eq!(calls, n, "model calls made");
        assert_eq!(state.unscripted, 0, "requests that found the script empty");
    }

    /// Panics unless, in every chat request, each tool call of an assistant message
    /// has exactly one tool message answering it, after it, and no tool message
    /// answers a call that was not made.
    pub fn assert_tool_results_paired(&self) {
        for (idx, request) in self.chat_requests().iter().enumerate() {
            if let Err(problem) = tool_results_paired(&request.body) {
                panic!("chat request {idx}: {problem}");
            }
        }
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        // Graceful shutdown waits for open streams; a stalled one would hang here, so
        // the thread is detached rather than joined.
        drop(self.thread.take());
    }
}

/// Checks the tool call / tool result pairing of one chat request body.
pub fn tool_results_paired(body: &Value) -> Result<(), String> {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let mut open: Vec<String> = Vec::new();
    let mut answered: Vec<String> = Vec::new();
    for message in &messages {
        match message["role"].as_str() {
            Some("assistant") => {
                if let Some(id) = open.first() {
                    return Err(format!("tool call {id} has no result before the next assistant message"));
                }
                for call in message["tool_calls"].as_array().into_iter().flatten() {
                    let id = call["id"].as_str().unwrap_or("").to_owned();
                    if open.contains(&id) || answered.contains(&id) {
                        return Err(format!("tool call id {id} is used twice"));
                    }
                    open.push(id);
                }
            }
            Some("tool") => {
                let id = message["tool_call_id"].as_str().unwrap_or("").to_owned();
                match open.iter().position(|o| *o == id) {
                    Some(pos) => {
                        open.remove(pos);
                        answered.push(id);
                    }
                    None if answered.contains(&id) => return Err(format!("tool call {id} has more than one result")),
                    None => return Err(format!("a tool result answers {id}, which no assistant message called")),
                }
            }
            _ => {
                if let Some(id) = open.first() {
                    return Err(format!("tool call {id} has no result before the next message"));
                }
            }
        }
    }
    match open.first() {
        Some(id) => Err(format!("tool call {id} has no result")),
        None => Ok(()),
    }
}

/// A reply from its JSON form, as scripts for the standalone server write it:
/// `{"type": "text", "content", "chunkChars"?}`, `{"type": "reasoning", "reasoning",
/// "content"}`, `{"type": "toolCalls", "calls": [{"id", "name", "arguments"}]}`,
/// `{"type": "stall", "content"}`, `{"type": "error", "status", "body"}`,
/// `{"type": "embeddings", "dims"}`; any of them with `"delayMs"` (wait before
/// answering) and `"paceMs"` (pause between streamed events).
pub fn reply_from_json(value: &Value) -> Result<Reply, String> {
    let text = |key: &str| value[key].as_str().unwrap_or("").to_owned();
    let reply = match value["type"].as_str() {
        Some("text") => match value["chunkChars"].as_u64() {
            Some(size) => Reply::text_with(&text("content"), size as usize, Usage::Counted),
            None => Reply::text(&text("content")),
        },
        Some("reasoning") => Reply::reasoning(&text("reasoning"), &text("content")),
        Some("toolCalls") => {
            let calls: Vec<(String, String, String)> = value["calls"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|c| (c["id"].as_str().unwrap_or("").to_owned(), c["name"].as_str().unwrap_or("").to_owned(), c["arguments"].as_str().unwrap_or("{}").to_owned()))
                .collect();
            Reply::ToolCalls { calls, content: text("content"), without_index: false, split_args: 5 }
        }
        Some("stall") => Reply::Stall { content: text("content") },
        Some("error") => Reply::error(value["status"].as_u64().unwrap_or(500) as u16, value["body"].clone()),
        Some("embeddings") => Reply::embeddings(value["dims"].as_u64().unwrap_or(8) as usize),
        other => return Err(format!("unknown reply type {other:?}; use text, reasoning, toolCalls, stall, error or embeddings")),
    };
    let reply = match value["paceMs"].as_u64() {
        Some(ms) => Reply::paced(Duration::from_millis(ms), reply),
        None => reply,
    };
    Ok(match value["delayMs"].as_u64() {
        Some(ms) => Reply::delayed(Duration::from_millis(ms), reply),
        None => reply,
    })
}

#[cfg(test)]
mod tests;
