//! The model client against the scripted OpenAI-compatible server: streaming, tool
//! calls, usage, every error class, retries, cancellation, timeouts, broken streams,
//! structured output and embeddings.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use inkstone_api::llm::retry::{Jitter, RetryPolicy};
use inkstone_api::llm::{ApiKey, Cancel, ChatEvent, ChatRequest, ChatResponse, Endpoint, FinishReason, LlmClient, LlmError, Message, ResponseFormat, ToolCall, ToolSpec};
use inkstone_api::{ApiError, ErrorCode};
use inkstone_test_support::model_server::{ModelServer, Reply, Usage};
use serde_json::json;

fn policy() -> RetryPolicy {
    RetryPolicy { max_retries: 2, initial_backoff: Duration::from_millis(5), max_backoff: Duration::from_millis(20), max_retry_after: Duration::from_secs(2) }
}

fn endpoint(base_url: &str, key: Option<&str>, timeout: Duration) -> Endpoint {
    Endpoint { base_url: base_url.to_owned(), model: "fake-model".to_owned(), api_key: key.map(ApiKey::new), timeout, proxy_url: None, ca_cert_pem: None }
}

fn client(server: &ModelServer) -> LlmClient {
    LlmClient::new(endpoint(&server.base_url(), Some("sk-test-key-0001"), Duration::from_secs(5)), policy(), Arc::new(Jitter::new(7))).unwrap()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

fn ask(text: &str) -> ChatRequest {
    ChatRequest::new(vec![Message::system("You are a test."), Message::user(text)])
}

fn chat(client: &LlmClient, request: &ChatRequest) -> (Result<ChatResponse, LlmError>, Vec<ChatEvent>) {
    let mut events = Vec::new();
    let result = runtime().block_on(client.chat(request, &mut |e| events.push(e), &Cancel::new()));
    (result, events)
}

#[test]
fn streams_text_with_reported_usage() {
    let server = ModelServer::start(vec![Reply::text_with("你好，这是一个测试回复。Hello!", 2, Usage::Fixed { input: 21, output: 9 })]);
    let (result, events) = chat(&client(&server), &ask("hi"));
    let reply = result.unwrap();
    assert_eq!(reply.text, "你好，这是一个测试回复。Hello!");
    assert_eq!(reply.finish_reason, FinishReason::Stop);
    assert_eq!((reply.usage.input_tokens, reply.usage.output_tokens, reply.usage.estimated), (21, 9, false));
    assert_eq!(reply.model, "fake-model");
    assert_eq!(reply.attempts, 1);
    assert!(events.len() > 5, "deltas arrive piece by piece");
    let body = &server.chat_requests()[0];
    assert_eq!(body.body["stream"], true);
    assert_eq!(body.body["stream_options"]["include_usage"], true);
    assert_eq!(body.authorization.as_deref(), Some("Bearer sk-test-key-0001"));
    server.assert_calls(1);
}

#[test]
fn usage_is_estimated_when_the_server_sends_none() {
    let server = ModelServer::start(vec![Reply::text_with("四个汉字", 1, Usage::Omitted)]);
    let reply = chat(&client(&server), &ask("hi")).0.unwrap();
    assert!(reply.usage.estimated);
    assert_eq!(reply.usage.output_tokens, 4);
    assert!(reply.usage.input_tokens > 0);
}

#[test]
fn reasoning_is_kept_apart() {
    let server = ModelServer::start(vec![Reply::reasoning("先想一想。", "答案"), Reply::text("<think>plan</think>final")]);
    let client = client(&server);
    let reply = chat(&client, &ask("q")).0.unwrap();
    assert_eq!((reply.reasoning.as_str(), reply.text.as_str()), ("先想一想。", "答案"));
    let (reply, events) = chat(&client, &ask("q"));
    let reply = reply.unwrap();
    assert_eq!((reply.reasoning.as_str(), reply.text.as_str()), ("plan", "final"));
    assert!(events.iter().all(|e| !matches!(e, ChatEvent::TextDelta(t) if t.contains("plan"))));
}

#[test]
fn parallel_tool_calls_and_their_results() {
    let server = ModelServer::start(vec![
        Reply::tool_calls(&[("call_1", "search_projects", r#"{"query":"季度报告"}"#), ("call_2", "read_project", r#"{"id":"prj_1"}"#)]),
        Reply::ToolCalls {
            calls: vec![("call_3".into(), "a".into(), "{\"x\":1}".into()), ("call_4".into(), "b".into(), "{}".into())],
            content: String::new(),
            without_index: true,
            split_args: 0,
        },
        Reply::text("done"),
    ]);
    let client = client(&server);
    let mut request = ask("find it");
    request.tools = vec![ToolSpec { name: "search_projects".into(), description: "Search".into(), parameters: json!({"type": "object"}).into() }].into();
    let (reply, events) = chat(&client, &request);
    let reply = reply.unwrap();
    assert_eq!(reply.finish_reason, FinishReason::ToolCalls);
    assert_eq!(
        reply.tool_calls,
        vec![
            ToolCall { id: "call_1".into(), name: "search_projects".into(), arguments: r#"{"query":"季度报告"}"#.into() },
            ToolCall { id: "call_2".into(), name: "read_project".into(), arguments: r#"{"id":"prj_1"}"#.into() },
        ]
    );
    assert_eq!(events.iter().filter(|e| matches!(e, ChatEvent::ToolCallStarted { .. })).count(), 2);
    assert_eq!(server.chat_requests()[0].body["tools"][0]["function"]["name"], "search_projects");

    // The results go back, one per call; the next answer's calls have no index.
    request.messages.push(Message::assistant("", reply.tool_calls.clone()));
    request.messages.push(Message::tool_result("call_2", "{\"title\":\"x\"}"));
    request.messages.push(Message::tool_result("call_1", "[]"));
    let reply = chat(&client, &request).0.unwrap();
    assert_eq!(reply.tool_calls.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(), vec!["call_3", "call_4"]);
    request.messages.push(Message::assistant("", reply.tool_calls.clone()));
    request.messages.push(Message::tool_result("call_3", "ok"));
    request.messages.push(Message::tool_result("call_4", "ok"));
    assert_eq!(chat(&client, &request).0.unwrap().text, "done");
    server.assert_calls(3);
    server.assert_tool_results_paired();
}

fn error_of(reply: Reply) -> (LlmError, ModelServer) {
    let server = ModelServer::start(vec![reply]);
    let error = chat(&client(&server), &ask("x")).0.unwrap_err();
    (error, server)
}

#[test]
fn each_error_class_maps_to_its_code() {
    let cases: Vec<(Reply, ErrorCode, usize)> = vec![
        (
            Reply::error(401, json!({"error": {"message": "Incorrect API key provided: sk-test-key-0001", "type": "invalid_request_error", "code": "invalid_api_key"}})),
            ErrorCode::ProviderAuth,
            1,
        ),
        (Reply::error(403, json!({"error": {"message": "forbidden"}})), ErrorCode::ProviderAuth, 1),
        (Reply::error(404, json!({"error": {"message": "The model `gpt-9` does not exist"}})), ErrorCode::ProviderNotFound, 1),
        (Reply::error(400, json!({"error": {"message": "maximum context length is 8192 tokens", "code": "context_length_exceeded"}})), ErrorCode::ContextTooLong, 1),
        (Reply::error(400, json!({"error": {"message": "litellm.ContextWindowExceededError: prompt too long", "code": "400"}})), ErrorCode::ContextTooLong, 1),
        (Reply::error(400, json!({"error": {"message": "\"auto\" tool choice requires --enable-auto-tool-choice"}})), ErrorCode::ProviderRejected, 1),
        (
            Reply::error(429, json!({"error": {"message": "You exceeded your current quota", "type": "insufficient_quota", "code": "insufficient_quota"}})),
            ErrorCode::ProviderRateLimited,
            1,
        ),
        (Reply::Raw { status: 200, content_type: "text/html".into(), body: "<html>router login</html>".into() }, ErrorCode::ProviderBadResponse, 1),
        (Reply::Raw { status: 200, content_type: "text/event-stream".into(), body: "data: {\"choices\": [{\"delta\": \n\n".into() }, ErrorCode::ProviderBadResponse, 1),
        (Reply::Cut { content: "half an ans".into() }, ErrorCode::ProviderBadResponse, 1),
        (Reply::StreamError { content: "par".into(), error: json!({"message": "model crashed", "type": "invalid_request_error"}) }, ErrorCode::ProviderBadResponse, 1),
    ];
    for (reply, code, calls) in cases {
        let label = format!("{reply:?}");
        let (error, server) = error_of(reply);
        let api: ApiError = error.into();
        assert_eq!(api.code, code, "{label}");
        assert!(!api.hints.is_empty(), "{label}");
        assert!(!api.message.contains("sk-test-key-0001"), "the key leaked into {}", api.message);
        server.assert_calls(calls);
    }
}

#[test]
fn insufficient_quota_is_never_retried_and_says_so() {
    let (error, server) =
        error_of(Reply::error_with_headers(429, json!({"error": {"message": "You exceeded your current quota", "code": "insufficient_quota"}}), &[("retry-after", "1")]));
    assert!(matches!(error, LlmError::InsufficientQuota { .. }));
    let api: ApiError = error.into();
    assert_eq!(api.details.unwrap()["insufficientQuota"], true);
    assert!(api.hints.iter().any(|h| h.id == "check_billing"));
    server.assert_calls(1);
}

#[test]
fn retries_429_and_5xx_then_succeeds() {
    let server = ModelServer::start(vec![
        Reply::error_with_headers(429, json!({"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}}), &[("retry-after-ms", "30")]),
        Reply::error(503, json!({"error": {"message": "overloaded"}})),
        Reply::text("finally"),
    ]);
    let started = Instant::now();
    let reply = chat(&client(&server), &ask("x")).0.unwrap();
    assert_eq!(reply.text, "finally");
    assert_eq!(reply.attempts, 3);
    assert!(started.elapsed() >= Duration::from_millis(30), "honoured retry-after-ms");
    server.assert_calls(3);
}

#[test]
fn retries_are_bounded() {
    let server = ModelServer::start(vec![Reply::error(500, json!({"error": {"message": "boom"}})); 3]);
    let error = chat(&client(&server), &ask("x")).0.unwrap_err();
    assert_eq!(error, LlmError::Unavailable { status: Some(500), message: "boom".into() });
    server.assert_calls(3);
}

#[test]
fn a_retry_after_beyond_the_cap_gives_up_with_the_hint() {
    let (error, server) = error_of(Reply::error_with_headers(429, json!({"error": {"message": "slow down"}}), &[("retry-after", "90")]));
    assert_eq!(error.retry_after(), Some(Duration::from_secs(90)));
    let api: ApiError = error.into();
    assert_eq!(api.details.unwrap()["retryAfterMs"], 90_000);
    server.assert_calls(1);
}

#[test]
fn the_key_is_scrubbed_from_provider_messages() {
    let server = ModelServer::start(vec![]);
    server.require_key(Some("sk-right-key-9999"));
    let error = chat(&client(&server), &ask("x")).0.unwrap_err();
    let api: ApiError = error.into();
    assert_eq!(api.code, ErrorCode::ProviderAuth);
    assert!(api.message.contains("[redacted]"), "{}", api.message);
    assert!(!serde_json::to_string(&api).unwrap().contains("sk-test-key-0001"));
}

#[test]
fn cancellation_closes_the_stream_at_once() {
    let server = ModelServer::start(vec![Reply::Stall { content: "a long answer that never ends".into() }]);
    let client = client(&server);
    let cancel = Cancel::new();
    let cancelled_at = Arc::new(Mutex::new(None::<Instant>));
    let (trigger, marker) = (cancel.clone(), Arc::clone(&cancelled_at));
    let result = runtime().block_on(client.chat(
        &ask("x"),
        &mut move |event| {
            if matches!(event, ChatEvent::TextDelta(_)) && !trigger.is_cancelled() {
                *marker.lock().unwrap() = Some(Instant::now());
                trigger.cancel();
            }
        },
        &cancel,
    ));
    let elapsed = cancelled_at.lock().unwrap().unwrap().elapsed();
    assert_eq!(result.unwrap_err(), LlmError::Cancelled);
    assert!(elapsed < Duration::from_millis(100), "returned {elapsed:?} after cancel");
    let deadline = Instant::now() + Duration::from_secs(2);
    while server.disconnects() == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(server.disconnects(), 1, "the server saw the connection close");
    assert_eq!(ApiError::from(LlmError::Cancelled).code, ErrorCode::Cancelled);
}

#[test]
fn timeouts_before_and_during_the_stream() {
    let server = ModelServer::start(vec![Reply::delayed(Duration::from_secs(3), Reply::text("late")), Reply::Stall { content: "st".into() }]);
    let client = LlmClient::new(endpoint(&server.base_url(), None, Duration::from_millis(300)), policy(), Arc::new(Jitter::new(1))).unwrap();
    let started = Instant::now();
    let error = chat(&client, &ask("x")).0.unwrap_err();
    assert_eq!(error, LlmError::Timeout { after: Duration::from_millis(300) });
    assert!(started.elapsed() < Duration::from_secs(2));
    let error = chat(&client, &ask("x")).0.unwrap_err();
    assert_eq!(error, LlmError::Timeout { after: Duration::from_millis(300) });
    assert_eq!(ApiError::from(error).code, ErrorCode::Timeout);
}

#[test]
fn a_huge_response_streams_through() {
    let content: String = "长文本 long text. ".repeat(120_000);
    let server = ModelServer::start(vec![Reply::text_with(&content, 4000, Usage::Counted)]);
    let reply = chat(&client(&server), &ask("x")).0.unwrap();
    assert_eq!(reply.text.len(), content.len());
    assert_eq!(reply.text, content);
}

#[test]
fn a_whole_completion_is_accepted_when_the_server_ignores_stream() {
    let body = json!({"model": "m", "choices": [{"index": 0, "message": {"role": "assistant", "content": "whole"}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 2, "completion_tokens": 1}});
    let server = ModelServer::start(vec![Reply::Raw { status: 200, content_type: "application/json".into(), body: body.to_string() }]);
    let reply = chat(&client(&server), &ask("x")).0.unwrap();
    assert_eq!((reply.text.as_str(), reply.model.as_str(), reply.usage.output_tokens), ("whole", "m", 1));
}

#[test]
fn connection_refused_and_unknown_hosts() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let refused = LlmClient::new(endpoint(&format!("http://127.0.0.1:{port}/v1"), None, Duration::from_secs(2)), policy(), Arc::new(Jitter::new(1))).unwrap();
    let error = chat(&refused, &ask("x")).0.unwrap_err();
    assert!(matches!(error, LlmError::Unavailable { status: None, .. }), "{error:?}");
    let api: ApiError = error.into();
    assert!(api.hints.iter().any(|h| h.id == "check_server_running"));
    let unknown = LlmClient::new(endpoint("http://inkstone-no-such-host.invalid/v1", None, Duration::from_secs(5)), policy(), Arc::new(Jitter::new(1))).unwrap();
    let error = chat(&unknown, &ask("x")).0.unwrap_err();
    assert!(matches!(error, LlmError::Offline { .. } | LlmError::Timeout { .. }), "{error:?}");
}

#[test]
fn structured_output_with_repairs() {
    let schema = json!({"type": "object", "required": ["titles"], "properties": {"titles": {"type": "array", "items": {"type": "string"}, "minItems": 2}}});
    let server = ModelServer::start(vec![
        Reply::text("Here you go: {\"titles\": [\"only one\"]}"),
        Reply::text("no json, sorry"),
        Reply::text("```json\n{\"titles\": [\"春天\", \"秋天\"]}\n```"),
    ]);
    let client = client(&server);
    let result = runtime().block_on(client.chat_json(&ask("titles"), "titles", &schema, false, &Cancel::new())).unwrap();
    assert_eq!(result.value, json!({"titles": ["春天", "秋天"]}));
    assert_eq!(result.calls, 3);
    let last = &server.chat_requests()[2].body["messages"];
    assert!(last.as_array().unwrap().last().unwrap()["content"].as_str().unwrap().contains("not valid"));

    let server = ModelServer::start(vec![Reply::text("{}"), Reply::text("{}"), Reply::text("{}")]);
    let error = runtime().block_on(client_for(&server).chat_json(&ask("titles"), "titles", &schema, true, &Cancel::new())).unwrap_err();
    assert!(matches!(error, LlmError::InvalidOutput { attempts: 3, .. }), "{error:?}");
    let format = &server.chat_requests()[0].body["response_format"];
    assert_eq!(format["type"], "json_schema");
    assert_eq!(
        format["json_schema"]["schema"],
        json!({"type": "object", "required": ["titles"], "properties": {"titles": {"type": "array", "items": {"type": "string"}, "minItems": 2}}})
    );
    assert_eq!(format["json_schema"]["strict"], false, "strict mode refuses schemas outside its subset; the engine validates");
    server.assert_calls(3);

    // llama.cpp's form, chosen by the request: json_object with the schema beside it.
    let server = ModelServer::start(vec![Reply::text("{\"titles\": [\"春天\", \"秋天\"]}")]);
    let mut request = ask("titles");
    request.response_format = ResponseFormat::JsonObjectSchema { schema: schema.clone() };
    let result = runtime().block_on(client_for(&server).chat_json(&request, "titles", &schema, true, &Cancel::new())).unwrap();
    assert_eq!(result.calls, 1);
    assert_eq!(server.chat_requests()[0].body["response_format"], json!({"type": "json_object", "schema": inkstone_api::llm::server_schema(&schema)}));
}

fn client_for(server: &ModelServer) -> LlmClient {
    client(server)
}

#[test]
fn embeddings_are_batched_and_mapped_by_index() {
    let server = ModelServer::start(vec![Reply::embeddings(4), Reply::embeddings(4), Reply::embeddings(4)]);
    let inputs: Vec<String> = ["一", "二二", "三三三", "four", "five5"].iter().map(|s| s.to_string()).collect();
    let result = runtime().block_on(client(&server).embed(&inputs, 2, &Cancel::new())).unwrap();
    assert_eq!(result.vectors.len(), 5);
    // The fake server puts the in-batch index first and the input length second.
    let firsts: Vec<(f32, f32)> = result.vectors.iter().map(|v| (v[0], v[1])).collect();
    assert_eq!(firsts, vec![(0.0, 1.0), (1.0, 2.0), (0.0, 3.0), (1.0, 4.0), (0.0, 5.0)]);
    server.assert_calls(3);

    let server = ModelServer::start(vec![Reply::Embeddings { dims: 3, count: Some(1), reversed: false }]);
    let error = runtime().block_on(client(&server).embed(&inputs[..2], 10, &Cancel::new())).unwrap_err();
    assert!(matches!(&error, LlmError::BadResponse { detail } if detail.contains("1 embeddings for 2 inputs")), "{error:?}");
}

#[test]
fn lists_models() {
    let server = ModelServer::start(vec![]);
    server.set_models(&["qwen2.5:7b", "llama3.1:8b"]);
    let models = runtime().block_on(client(&server).models(&Cancel::new())).unwrap();
    assert_eq!(models, vec!["llama3.1:8b", "qwen2.5:7b"]);
}

/// A recorded server answer from `tests/fixtures/llm-servers/`: its status and body.
fn recorded(name: &str) -> (u16, serde_json::Value) {
    let path = inkstone_test_support::fixtures_dir().join("llm-servers").join(name);
    let value: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))).unwrap();
    (value["status"].as_u64().unwrap() as u16, value["body"].clone())
}

fn hint_ids(error: &ApiError) -> Vec<String> {
    error.hints.iter().map(|h| h.id.clone()).collect()
}

#[test]
fn each_server_familys_context_overflow_is_context_too_long_with_its_numbers() {
    let stream = std::fs::read_to_string(inkstone_test_support::fixtures_dir().join("llm-servers/llama-cpp-overflow-stream.txt")).unwrap();
    let reply = |name: &str| {
        let (status, body) = recorded(name);
        Reply::error(status, body)
    };
    // (the answer, prompt tokens, window, the larger-window hint for its server)
    type Case<'a> = (&'a str, Reply, Option<u64>, Option<u64>, &'a str);
    let cases: Vec<Case<'_>> = vec![
        ("llama.cpp 400", reply("llama-cpp-overflow.json"), Some(4519), Some(4096), "larger_window_llamaCpp"),
        ("llama.cpp error line in an open stream", Reply::Raw { status: 200, content_type: "text/event-stream".into(), body: stream }, None, None, "larger_window_llamaCpp"),
        ("llama.cpp batch, 500", reply("llama-cpp-batch.json"), None, None, "larger_window_llamaCpp"),
        ("Ollama, the runner's error wrapped", reply("ollama-overflow.json"), Some(8889), Some(4096), "larger_window_llamaCpp"),
        ("vLLM", reply("vllm-overflow.json"), Some(4519), Some(4096), "larger_window_vllm"),
        ("OpenAI", reply("openai-overflow.json"), Some(130412), Some(128000), "larger_window"),
    ];
    for (label, reply, prompt, window, larger) in cases {
        let (error, server) = error_of(reply);
        assert!(matches!(error, LlmError::ContextTooLong { .. }), "{label}: {error:?}");
        let api: ApiError = error.into();
        assert_eq!(api.code, ErrorCode::ContextTooLong, "{label}");
        let details = api.details.clone().unwrap();
        assert_eq!((details["promptTokens"].as_u64(), details["contextWindow"].as_u64()), (prompt, window), "{label}");
        let ids = hint_ids(&api);
        assert_eq!(ids, ["fewer_platforms", "smaller_selection", larger], "{label}");
        if let (Some(prompt), Some(window)) = (prompt, window) {
            assert!(api.message.contains(&format!("{prompt} prompt tokens, a window of {window}")), "{label}: {}", api.message);
            assert_eq!(api.params.as_ref().unwrap()["window"], window.to_string(), "{label}");
        }
        // A recognisable body is never "check the URL".
        assert!(!ids.iter().any(|id| id == "check_base_url" || id == "check_compatible"), "{label}: {ids:?}");
        server.assert_calls(1);
    }
    // The hint names a window that holds the prompt, for the server that needs it.
    let (error, _server) = error_of(reply("llama-cpp-overflow.json"));
    let api: ApiError = error.into();
    let larger = api.hints.last().unwrap();
    assert_eq!(larger.params["tokens"], "8192");
    assert!(larger.message.contains("-c 8192"), "{}", larger.message);
}

#[test]
fn check_the_url_only_when_the_url_is_the_problem() {
    let (not_found, _s) = error_of(Reply::error(404, json!({"error": {"message": "404 page not found"}})));
    assert!(hint_ids(&not_found.into()).contains(&"check_base_url".to_owned()));
    let (html, _s) = error_of(Reply::Raw { status: 200, content_type: "text/html".into(), body: "<html>router login</html>".into() });
    assert!(hint_ids(&html.into()).contains(&"check_compatible".to_owned()));
    for reply in [
        Reply::error(400, json!({"error": {"code": 400, "message": "tools param requires --jinja flag", "type": "invalid_request_error"}})),
        Reply::error(500, json!({"error": {"code": 500, "message": "llama_decode failed", "type": "server_error"}})),
        Reply::Cut { content: String::new() },
        Reply::StreamError { content: String::new(), error: json!({"message": "model crashed", "type": "invalid_request_error"}) },
    ] {
        let label = format!("{reply:?}");
        let (error, _s) = error_of(reply);
        let ids = hint_ids(&error.into());
        assert!(!ids.iter().any(|id| id == "check_base_url" || id == "check_compatible"), "{label}: {ids:?}");
    }
}

#[test]
fn an_empty_reply_is_said_as_such_with_a_retry_hint() {
    let (error, server) = error_of(Reply::text(""));
    assert_eq!(error, LlmError::EmptyReply { finish: "stop".into() });
    let api: ApiError = error.into();
    assert_eq!((api.code, api.message_id.as_deref()), (ErrorCode::ProviderBadResponse, Some("model.empty_reply")));
    assert_eq!(hint_ids(&api), ["retry_empty"]);
    server.assert_calls(1);
    let (error, _server) =
        error_of(Reply::Text { content: String::new(), reasoning: None, chunk_chars: 3, usage: Usage::Fixed { input: 900, output: 0 }, finish: "length".into() });
    assert_eq!(hint_ids(&error.into()), ["retry_empty", "raise_max_output"]);
    // Reasoning without an answer is not empty: the model said something.
    let server = ModelServer::start(vec![Reply::reasoning("想了很久", "")]);
    let reply = chat(&client(&server), &ask("q")).0.unwrap();
    assert_eq!(reply.reasoning, "想了很久");
}

#[test]
fn a_looping_reply_is_stopped_with_a_notice() {
    let sentence = "春天来了，花园里的花都开了，真是美丽的景色。";
    let looping = format!("好的。{}", sentence.repeat(40));
    let server = ModelServer::start(vec![Reply::paced(Duration::from_millis(1), Reply::text_with(&looping, 4, Usage::Counted))]);
    let (result, events) = chat(&client(&server), &ask("写一段"));
    let error = result.unwrap_err();
    assert!(matches!(&error, LlmError::Repetition { times: 8, excerpt } if excerpt.starts_with("春天来了")), "{error:?}");
    let shown: String = events.iter().filter_map(|e| if let ChatEvent::TextDelta(t) = e { Some(t.as_str()) } else { None }).collect();
    assert!(shown.chars().count() < looping.chars().count() / 3, "the stream was stopped early: {} of {} characters", shown.chars().count(), looping.chars().count());
    let api: ApiError = error.into();
    assert_eq!((api.code, api.message_id.as_deref()), (ErrorCode::ProviderBadResponse, Some("model.repetition")));
    assert_eq!(api.params.as_ref().unwrap()["times"], "8");
    assert_eq!(hint_ids(&api), ["retry_repetition"]);
    server.assert_calls(1);
}
