//! The harness through the API, against the scripted model server over real HTTP, on a
//! real sled store: the shared setup of the harness tests (test tools, a session on a
//! scripted model, replay checked against what the model was sent). The tests are in
//! `harness_tools`, `harness_approvals`, `harness_turns`, `harness_sessions` and
//! `harness_crash`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use inkstone_api::api::{dto, StreamEvent};
use inkstone_api::harness::tools::{BaseVersionPolicy, Capability, Concurrency, InterruptBehavior, RiskLevel};
use inkstone_api::harness::{replay, Event, EventBody, PermissionPolicy, ToolDefinition, ToolFailure, ToolHandler};
use inkstone_api::llm::{Message, Role, ToolCall};
use inkstone_api::Engine;
use inkstone_test_support::model_server::{ModelServer, Reply};
use inkstone_test_support::TestEngine;
use serde_json::{json, Value};

pub(crate) type Finished = Arc<Mutex<Vec<String>>>;

pub(crate) fn definition(name: &str, capability: Capability, permission: PermissionPolicy) -> ToolDefinition {
    ToolDefinition {
        name: name.to_owned(),
        version: 1,
        description: format!("test tool {name}"),
        prompt: format!("test tool {name}"),
        input_schema: json!({"type": "object"}),
        output_schema: json!({"type": "object"}),
        capability,
        risk: RiskLevel::Low,
        permission,
        read_only: capability == Capability::Read,
        destructive: false,
        concurrency: Concurrency::ParallelSafe,
        interrupt: InterruptBehavior::Cancel,
        idempotency_key_fields: Vec::new(),
        base_version: BaseVersionPolicy::None,
        max_result_chars: 2_000,
        result_summary: "test".to_owned(),
    }
}

/// `slow_read {label, ms}`: a parallel-safe read that sleeps (cancellable) and records
/// when it finished; `test_write_note {note}`: a write that adds a comment.
pub(crate) fn register_test_tools(engine: &Engine) -> Finished {
    let finished: Finished = Arc::default();
    let mut slow = definition("slow_read", Capability::Read, PermissionPolicy::Allow);
    slow.input_schema =
        json!({"type": "object", "properties": {"label": {"type": "string"}, "ms": {"type": "integer", "minimum": 0}}, "required": ["label", "ms"], "additionalProperties": false});
    let order = Arc::clone(&finished);
    let handler: ToolHandler = Arc::new(move |ctx, input| {
        let ms = input["ms"].as_u64().unwrap_or(0);
        let started = std::time::Instant::now();
        while started.elapsed() < Duration::from_millis(ms) {
            if ctx.cancelled() {
                return Err(ToolFailure { message: "cancelled".into(), interrupted: true });
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        order.lock().unwrap().push(input["label"].as_str().unwrap_or("").to_owned());
        Ok(json!({"label": input["label"], "ms": ms}))
    });
    engine.register_tool(slow, handler).unwrap();

    let mut write = definition("test_write_note", Capability::Write, PermissionPolicy::Ask);
    write.input_schema = json!({"type": "object", "properties": {"note": {"type": "string", "minLength": 1}}, "required": ["note"], "additionalProperties": false});
    write.risk = RiskLevel::Medium;
    write.concurrency = Concurrency::Exclusive;
    write.interrupt = InterruptBehavior::Block;
    write.idempotency_key_fields = vec!["note".to_owned()];
    write.base_version = BaseVersionPolicy::ProjectRevision;
    let handler: ToolHandler = Arc::new(|ctx, input| {
        let comment = inkstone_api::project::comments::add(ctx.writer()?, ctx.project_id, input["note"].as_str().unwrap_or(""), None)?;
        Ok(json!({"commentId": comment.id}))
    });
    engine.register_tool(write.clone(), handler).unwrap();

    // `slow_write_note {note, ms}`: a write that ignores cancellation and takes `ms`.
    let mut slow_write = write;
    slow_write.name = "slow_write_note".to_owned();
    slow_write.input_schema =
        json!({"type": "object", "properties": {"note": {"type": "string"}, "ms": {"type": "integer"}}, "required": ["note", "ms"], "additionalProperties": false});
    let handler: ToolHandler = Arc::new(|ctx, input| {
        std::thread::sleep(Duration::from_millis(input["ms"].as_u64().unwrap_or(0)));
        let comment = inkstone_api::project::comments::add(ctx.writer()?, ctx.project_id, input["note"].as_str().unwrap_or(""), None)?;
        Ok(json!({"commentId": comment.id}))
    });
    engine.register_tool(slow_write, handler).unwrap();

    // `exclusive_probe {n}`: an exclusive read that notes how many probes overlap.
    let mut probe = definition("exclusive_probe", Capability::Read, PermissionPolicy::Allow);
    probe.concurrency = Concurrency::Exclusive;
    let active = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = Arc::clone(&finished);
    let handler: ToolHandler = Arc::new(move |_, input| {
        let now = active.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        std::thread::sleep(Duration::from_millis(30));
        active.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
        seen.lock().unwrap().push(format!("probe{} overlap {now}", input["n"]));
        Ok(json!({"n": input["n"]}))
    });
    engine.register_tool(probe, handler).unwrap();

    // `panicking_tool`: a bug in a tool.
    let handler: ToolHandler = Arc::new(|_, _| panic!("tool bug"));
    engine.register_tool(definition("panicking_tool", Capability::Read, PermissionPolicy::Allow), handler).unwrap();
    finished
}

pub(crate) struct H {
    pub(crate) t: TestEngine,
    pub(crate) server: ModelServer,
    pub(crate) project: String,
    pub(crate) session: String,
    pub(crate) finished: Finished,
}

pub(crate) fn setup(script: Vec<Reply>, limits: Value) -> H {
    setup_with(script, limits, "# 春日\n\n春眠不觉晓，处处闻啼鸟。A short draft.")
}

pub(crate) fn setup_with(script: Vec<Reply>, limits: Value, source: &str) -> H {
    let server = ModelServer::start(script);
    let t = TestEngine::new();
    let finished = register_test_tools(&t.engine);
    t.ok("llmProfile.create", json!({"name": "fake", "baseUrl": server.base_url(), "model": "fake-model"}));
    let project = t.ok("project.create", json!({"title": "春日", "source": source}))["id"].as_str().unwrap().to_owned();
    let session = t.ok("session.create", json!({"projectId": project, "limits": limits}))["session"]["id"].as_str().unwrap().to_owned();
    H { t, server, project, session, finished }
}

impl H {
    pub(crate) fn engine(&self) -> &Engine {
        &self.t.engine
    }

    /// Calls a streaming session method; returns its result and the events it sent.
    pub(crate) fn stream(&self, method: &str, params: Value) -> (Result<Value, inkstone_api::ApiError>, Vec<dto::Event>) {
        stream(self.engine(), method, params)
    }

    pub(crate) fn send(&self, text: &str) -> (Value, Vec<dto::Event>) {
        let (result, events) = self.stream("session.submit", json!({"sessionId": self.session, "text": text}));
        (result.unwrap_or_else(|e| panic!("submit failed: {e:?}")), events)
    }

    pub(crate) fn approve(&self, request_id: &str, approved: bool) -> (Value, Vec<dto::Event>) {
        let (result, events) = self.stream("session.resolveApproval", json!({"sessionId": self.session, "requestId": request_id, "approved": approved}));
        (result.unwrap_or_else(|e| panic!("resolveApproval failed: {e:?}")), events)
    }

    pub(crate) fn log(&self) -> Vec<Event> {
        self.engine().session_events(&self.session).unwrap()
    }

    /// The message and hints of the last turn end in the log.
    pub(crate) fn last_turn_end(&self) -> (String, Vec<inkstone_api::error::Hint>) {
        self.log()
            .into_iter()
            .rev()
            .find_map(|e| match e.body {
                EventBody::TurnEnded { message, hints, .. } => Some((message, hints)),
                _ => None,
            })
            .unwrap()
    }

    pub(crate) fn results(&self) -> Vec<(String, String, String)> {
        self.log()
            .into_iter()
            .filter_map(|e| match e.body {
                EventBody::ToolResult { status, content, .. } => {
                    Some((e.tool_use_id.unwrap_or_default(), serde_json::to_value(status).unwrap().as_str().unwrap().to_owned(), content))
                }
                _ => None,
            })
            .collect()
    }

    pub(crate) fn comments(&self) -> usize {
        self.t.ok("comment.list", json!({"projectId": self.project}))["comments"].as_array().unwrap().len()
    }

    /// Replay of the log equals what the model was sent, call by call: the messages
    /// after the system message, their hash, and the system message is the stored
    /// snapshot.
    pub(crate) fn assert_replay_matches_live(&self) {
        assert_replay_matches_live(&self.t, &self.server, &self.session, &self.project);
    }
}

/// Replay of a session's log equals what its model server was sent, call by call: the
/// messages after the system message, their hash, and the system message is the
/// stored snapshot. Every event names the session's project and workspace.
pub(crate) fn assert_replay_matches_live(t: &TestEngine, server: &ModelServer, session: &str, project: &str) {
    let log = t.engine.session_events(session).unwrap();
    let sequences: Vec<u64> = log.iter().map(|e| e.sequence).collect();
    assert_eq!(sequences, (1..=log.len() as u64).collect::<Vec<_>>(), "the log has no gaps");
    let workspace = t.ok("workspace.get", json!({}))["id"].as_str().map(str::to_owned);
    for event in &log {
        assert_eq!(event.project_id.as_deref(), Some(project), "every event names its project");
        assert_eq!(event.workspace_id.as_deref(), workspace.as_deref(), "every event names its workspace");
    }
    let requests = server.chat_requests();
    let calls: Vec<(usize, &Event)> = log.iter().enumerate().filter(|(_, e)| matches!(e.body, EventBody::ModelCallStarted { .. })).collect();
    assert_eq!(calls.len(), requests.len(), "one ModelCallStarted per model request");
    for ((index, event), request) in calls.iter().zip(&requests) {
        let EventBody::ModelCallStarted { messages_hash, message_count, .. } = &event.body else { unreachable!() };
        let replayed = replay(log[..*index].iter());
        assert_eq!(&replayed.messages_hash(), messages_hash, "hash of the replayed prefix");
        assert_eq!(replayed.messages().len(), *message_count as usize);
        let sent = wire_messages(&request.body);
        assert_eq!(sent[0].role, Role::System);
        let snapshot = t.engine.context_snapshot(event.context_snapshot_id.as_deref().unwrap()).unwrap().unwrap();
        assert_eq!(*sent[0].content, snapshot.system, "the system message is the stored snapshot");
        assert_eq!(&sent[1..], replayed.messages(), "replayed messages equal the sent ones");
        assert_eq!(inkstone_api::harness::messages_hash(&sent[1..]), *messages_hash, "byte-identical");
    }
    server.assert_tool_results_paired();
    let view = t.ok("session.get", json!({"sessionId": session}));
    assert_eq!(view["messagesHash"], json!(replay(log.iter()).messages_hash()));
}

pub(crate) fn stream(engine: &Engine, method: &str, params: Value) -> (Result<Value, inkstone_api::ApiError>, Vec<dto::Event>) {
    let mut events = Vec::new();
    let result = engine.call_stream(method, params, &mut |event| {
        if let StreamEvent::Harness(event) = event {
            events.push(*event);
        }
    });
    (result, events)
}

/// The OpenAI wire messages of a request body, back in the harness's shape.
pub(crate) fn wire_messages(body: &Value) -> Vec<Message> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let role = match m["role"].as_str().unwrap() {
                "system" => Role::System,
                "user" => Role::User,
                "assistant" => Role::Assistant,
                _ => Role::Tool,
            };
            let tool_calls = m["tool_calls"]
                .as_array()
                .map(|calls| {
                    calls
                        .iter()
                        .map(|c| ToolCall {
                            id: c["id"].as_str().unwrap().to_owned(),
                            name: c["function"]["name"].as_str().unwrap().to_owned(),
                            arguments: c["function"]["arguments"].as_str().unwrap().to_owned(),
                        })
                        .collect()
                })
                .unwrap_or_default();
            Message { role, content: m["content"].as_str().unwrap_or("").into(), tool_calls, tool_call_id: m["tool_call_id"].as_str().map(str::to_owned) }
        })
        .collect()
}

pub(crate) fn kinds(events: &[dto::Event]) -> Vec<&'static str> {
    events.iter().filter(|e| e.sequence > 0).map(|e| e.kind_name()).collect()
}

pub(crate) fn pending_request(result: &Value) -> String {
    result["session"]["pendingApproval"]["requestId"].as_str().unwrap_or_else(|| panic!("no pending approval in {result}")).to_owned()
}
