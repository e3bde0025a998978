//! The harness through the API, against the scripted model server over real HTTP, on a
//! real sled store: tool validation, permissions, approvals bound to input and target
//! version, plan mode, limits, interrupts, queued messages, restarts, and replay of
//! every session equal to what the model was sent.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use inkstone_core::api::StreamEvent;
use inkstone_core::harness::tools::{BaseVersionPolicy, Capability, Concurrency, InterruptBehavior, RiskLevel};
use inkstone_core::harness::{replay, Event, EventBody, PermissionPolicy, ToolDefinition, ToolFailure, ToolHandler};
use inkstone_core::llm::{Message, Role, ToolCall};
use inkstone_core::store::{Batch, Durability};
use inkstone_core::{Engine, EngineConfig, ErrorCode};
use inkstone_test_support::model_server::{ModelServer, Reply, Usage};
use inkstone_test_support::Rng;
use inkstone_test_support::TestEngine;
use serde_json::{json, Value};

type Finished = Arc<Mutex<Vec<String>>>;

fn definition(name: &str, capability: Capability, permission: PermissionPolicy) -> ToolDefinition {
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
fn register_test_tools(engine: &Engine) -> Finished {
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
        let comment = inkstone_core::project::comments::add(ctx.writer()?, ctx.project_id, input["note"].as_str().unwrap_or(""), None)?;
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
        let comment = inkstone_core::project::comments::add(ctx.writer()?, ctx.project_id, input["note"].as_str().unwrap_or(""), None)?;
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

struct H {
    t: TestEngine,
    server: ModelServer,
    project: String,
    session: String,
    finished: Finished,
}

fn setup(script: Vec<Reply>, limits: Value) -> H {
    setup_with(script, limits, "# 春日\n\n春眠不觉晓，处处闻啼鸟。A short draft.")
}

fn setup_with(script: Vec<Reply>, limits: Value, source: &str) -> H {
    let server = ModelServer::start(script);
    let t = TestEngine::new();
    let finished = register_test_tools(&t.engine);
    t.ok("llmProfile.create", json!({"name": "fake", "baseUrl": server.base_url(), "model": "fake-model"}));
    let project = t.ok("project.create", json!({"title": "春日", "source": source}))["id"].as_str().unwrap().to_owned();
    let session = t.ok("session.create", json!({"projectId": project, "limits": limits}))["session"]["id"].as_str().unwrap().to_owned();
    H { t, server, project, session, finished }
}

impl H {
    fn engine(&self) -> &Engine {
        &self.t.engine
    }

    /// Calls a streaming session method; returns its result and the events it sent.
    fn stream(&self, method: &str, params: Value) -> (Result<Value, inkstone_core::ApiError>, Vec<Event>) {
        stream(self.engine(), method, params)
    }

    fn send(&self, text: &str) -> (Value, Vec<Event>) {
        let (result, events) = self.stream("session.submit", json!({"sessionId": self.session, "text": text}));
        (result.unwrap_or_else(|e| panic!("submit failed: {e:?}")), events)
    }

    fn approve(&self, request_id: &str, approved: bool) -> (Value, Vec<Event>) {
        let (result, events) = self.stream("session.resolveApproval", json!({"sessionId": self.session, "requestId": request_id, "approved": approved}));
        (result.unwrap_or_else(|e| panic!("resolveApproval failed: {e:?}")), events)
    }

    fn log(&self) -> Vec<Event> {
        self.engine().session_events(&self.session).unwrap()
    }

    /// The message and hints of the last turn end in the log.
    fn last_turn_end(&self) -> (String, Vec<inkstone_core::error::Hint>) {
        self.log()
            .into_iter()
            .rev()
            .find_map(|e| match e.body {
                EventBody::TurnEnded { message, hints, .. } => Some((message, hints)),
                _ => None,
            })
            .unwrap()
    }

    fn results(&self) -> Vec<(String, String, String)> {
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

    fn comments(&self) -> usize {
        self.t.ok("comment.list", json!({"projectId": self.project}))["comments"].as_array().unwrap().len()
    }

    /// Replay of the log equals what the model was sent, call by call: the messages
    /// after the system message, their hash, and the system message is the stored
    /// snapshot.
    fn assert_replay_matches_live(&self) {
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
        assert_eq!(sent[0].content, snapshot.system, "the system message is the stored snapshot");
        assert_eq!(&sent[1..], replayed.messages(), "replayed messages equal the sent ones");
        assert_eq!(inkstone_core::harness::messages_hash(&sent[1..]), *messages_hash, "byte-identical");
    }
    server.assert_tool_results_paired();
    let view = t.ok("session.get", json!({"sessionId": session}));
    assert_eq!(view["messagesHash"], json!(replay(log.iter()).messages_hash()));
}

pub(crate) fn stream(engine: &Engine, method: &str, params: Value) -> (Result<Value, inkstone_core::ApiError>, Vec<Event>) {
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
            Message { role, content: m["content"].as_str().unwrap_or("").to_owned(), tool_calls, tool_call_id: m["tool_call_id"].as_str().map(str::to_owned) }
        })
        .collect()
}

fn kinds(events: &[Event]) -> Vec<&'static str> {
    events.iter().filter(|e| e.sequence > 0).map(|e| e.kind_name()).collect()
}

fn pending_request(result: &Value) -> String {
    result["session"]["pendingApproval"]["requestId"].as_str().unwrap_or_else(|| panic!("no pending approval in {result}")).to_owned()
}

#[test]
fn a_plain_answer_streams_deltas_and_logs_the_completed_message() {
    let h = setup(vec![Reply::text("你好，我读过了。")], json!({}));
    let (result, events) = h.send("读一下这篇稿子");
    assert_eq!(result["reason"], "completed");
    assert!(events.iter().any(|e| e.sequence == 0 && matches!(e.body, EventBody::AssistantDelta { .. })), "deltas are delivered live");
    assert_eq!(kinds(&events), ["turn_started", "user_message", "context_assembled", "model_call_started", "assistant_message", "turn_ended"]);
    assert!(h.log().iter().all(|e| !matches!(e.body, EventBody::AssistantDelta { .. })), "the log keeps only the completed message");
    let from = h.t.ok("session.events", json!({"sessionId": h.session, "from": 3}));
    assert_eq!(from["events"][0]["sequence"], 3);
    assert_eq!(from["events"][0]["kind"], "user_message");
    assert_eq!(from["events"][0]["payload"]["text"], "读一下这篇稿子");
    assert!(result["timings"]["harnessMicros"].is_u64());
    h.assert_replay_matches_live();
}

#[test]
fn parallel_reads_come_back_in_request_order_though_they_finish_out_of_order() {
    let h = setup(
        vec![
            Reply::tool_calls(&[
                ("c1", "slow_read", r#"{"label":"slow","ms":400}"#),
                ("c2", "slow_read", r#"{"label":"fast","ms":5}"#),
                ("c3", "read_project_context", "{}"),
                ("c4", "read_versions", "{}"),
            ]),
            Reply::text("done"),
        ],
        json!({}),
    );
    let (result, _) = h.send("look");
    assert_eq!(result["reason"], "completed");
    assert_eq!(*h.finished.lock().unwrap(), ["fast", "slow"], "they ran concurrently");
    let ids: Vec<String> = h.results().into_iter().map(|r| r.0).collect();
    assert_eq!(ids, ["c1", "c2", "c3", "c4"]);
    let last = &h.server.chat_requests()[1].body["messages"];
    let tool_ids: Vec<&str> = last.as_array().unwrap().iter().filter_map(|m| m["tool_call_id"].as_str()).collect();
    assert_eq!(tool_ids, ["c1", "c2", "c3", "c4"]);
    assert!(h.results()[2].2.contains("春眠不觉晓"));
    let log = h.log();
    let assistant = log.iter().find(|e| matches!(e.body, EventBody::AssistantMessage { .. })).unwrap().event_id.clone();
    assert!(
        log.iter().filter(|e| matches!(e.body, EventBody::ToolResult { .. })).all(|e| e.parent_event_id.as_deref() == Some(assistant.as_str())),
        "tool results point at the message that asked for them"
    );
    h.server.assert_calls(2);
    h.assert_replay_matches_live();
}

#[test]
fn exclusive_tools_run_one_at_a_time_in_request_order() {
    let h = setup(
        vec![
            Reply::tool_calls(&[
                ("e1", "exclusive_probe", r#"{"n":1}"#),
                ("e2", "exclusive_probe", r#"{"n":2}"#),
                ("s1", "slow_read", r#"{"label":"r","ms":5}"#),
                ("e3", "exclusive_probe", r#"{"n":3}"#),
                ("p1", "panicking_tool", "{}"),
            ]),
            Reply::text("ok"),
        ],
        json!({}),
    );
    let (result, _) = h.send("go");
    assert_eq!(result["reason"], "completed");
    let probes: Vec<String> = h.finished.lock().unwrap().iter().filter(|l| l.starts_with("probe")).cloned().collect();
    assert_eq!(probes, ["probe1 overlap 1", "probe2 overlap 1", "probe3 overlap 1"]);
    let ids: Vec<String> = h.results().into_iter().map(|r| r.0).collect();
    assert_eq!(ids, ["e1", "e2", "s1", "e3", "p1"]);
    assert_eq!(h.results()[4].1, "tool_error", "a panicking tool is a failed call");
    h.assert_replay_matches_live();
}

#[test]
fn a_write_whose_outcome_is_unknown_is_not_run_again() {
    let h = setup(
        vec![
            Reply::tool_calls(&[("w1", "slow_write_note", r#"{"note":"x","ms":600}"#)]),
            Reply::text("timed out"),
            Reply::tool_calls(&[("w2", "slow_write_note", r#"{"note":"x","ms":600}"#)]),
            Reply::text("ok"),
        ],
        json!({"toolTimeoutMs": 100}),
    );
    let (result, _) = h.send("write");
    let (result, _) = h.approve(&pending_request(&result), true);
    assert_eq!(result["reason"], "completed");
    assert_eq!(h.results()[0].1, "timeout");
    assert_eq!(h.comments(), 1, "the write finished after its timeout");
    let (result, _) = h.send("again");
    assert_eq!(result["reason"], "completed");
    assert_eq!(h.results()[1].1, "interrupted");
    assert!(h.results()[1].2.contains("outcome is unknown"));
    assert_eq!(h.comments(), 1, "at most once");
    h.assert_replay_matches_live();
}

#[test]
fn schema_violations_and_unknown_tools_are_results_the_model_sees() {
    let h = setup(
        vec![
            Reply::tool_calls(&[("c1", "read_comments", r#"{"includeResolved":"yes"}"#), ("c2", "delete_everything", "{}"), ("c3", "read_templates", "not json")]),
            Reply::text("ok"),
        ],
        json!({}),
    );
    let (result, _) = h.send("go");
    assert_eq!(result["reason"], "completed");
    let results = h.results();
    assert_eq!(results[0].1, "schema_violation");
    assert!(results[0].2.contains("/includeResolved"), "names the JSON pointer: {}", results[0].2);
    assert_eq!(results[1].1, "unknown_tool");
    assert!(results[1].2.contains("read_project_context"), "lists the tools");
    assert_eq!(results[2].1, "schema_violation");
    h.assert_replay_matches_live();
}

#[test]
fn a_write_waits_for_approval_runs_once_and_never_again_on_retry_or_restart() {
    let mut h = setup(
        vec![
            Reply::tool_calls(&[("w1", "test_write_note", r#"{"note":"hello"}"#)]),
            Reply::text("saved"),
            // After the restart the model asks for the same write again.
            Reply::tool_calls(&[("w2", "test_write_note", r#"{"note": " hello "}"#)]),
            Reply::text("already saved"),
        ],
        json!({}),
    );
    let (result, events) = h.send("add a note");
    assert_eq!(result["reason"], "blocked_on_approval");
    assert_eq!(result["session"]["status"], "waitingForApproval");
    assert!(kinds(&events).contains(&"approval_requested"));
    assert_eq!(h.comments(), 0, "nothing ran before approval");
    let request = pending_request(&result);

    let (result, _) = h.approve(&request, true);
    assert_eq!(result["reason"], "completed");
    assert_eq!(h.comments(), 1);
    // Retrying the decision is refused, and runs nothing.
    let (again, _) = h.stream("session.resolveApproval", json!({"sessionId": h.session, "requestId": request, "approved": true}));
    assert_eq!(again.unwrap_err().code, ErrorCode::Conflict);
    assert_eq!(h.comments(), 1);
    h.assert_replay_matches_live();

    // Restart: a new engine on the same data dir.
    let dir = std::mem::replace(&mut h.t.dir, tempfile::tempdir().unwrap());
    let old = std::mem::replace(&mut h.t.engine, Engine::open(EngineConfig::for_tests(h.t.dir.path())).unwrap());
    drop(old);
    let mut config = EngineConfig::for_tests(dir.path());
    config.ids = Arc::new(inkstone_core::config::UlidIds::default());
    h.t.engine = Engine::open(config).unwrap();
    h.t.dir = dir;
    register_test_tools(&h.t.engine);
    let (result, _) = h.send("save it again");
    assert_eq!(result["reason"], "completed", "the recorded approval matches the same normalized input and revision");
    assert_eq!(h.comments(), 1, "executing the approved write twice has the effect of once");
    let reused = h.log().into_iter().any(|e| matches!(e.body, EventBody::ToolResult { reused_execution: true, .. }));
    assert!(reused);
    h.assert_replay_matches_live();
}

#[test]
fn an_approval_does_not_cover_a_changed_input_or_a_moved_target() {
    let h = setup(
        vec![
            Reply::tool_calls(&[("w1", "test_write_note", r#"{"note":"hello"}"#)]),
            Reply::text("saved"),
            Reply::tool_calls(&[("w2", "test_write_note", r#"{"note":"hello, world"}"#)]),
            Reply::text("unused"),
        ],
        json!({}),
    );
    let (result, _) = h.send("add a note");
    let first = pending_request(&result);
    // The target moves while the request waits: the approval is for revision 1.
    h.t.ok("project.update", json!({"projectId": h.project, "source": "changed"}));
    let (result, _) = h.approve(&first, true);
    assert_eq!(result["reason"], "blocked_on_approval", "a moved target needs a new approval");
    let second = pending_request(&result);
    assert_ne!(second, first);
    assert_eq!(h.comments(), 0);
    let (result, _) = h.approve(&second, true);
    assert_eq!(result["reason"], "completed");
    assert_eq!(h.comments(), 1);
    // A changed input asks again.
    let (result, _) = h.send("another");
    assert_eq!(result["reason"], "blocked_on_approval");
    assert_eq!(h.comments(), 1);
    h.assert_replay_matches_live();
}

#[test]
fn denials_by_rule_and_by_the_user_are_results_and_the_turn_goes_on() {
    let h =
        setup(vec![Reply::tool_calls(&[("c1", "read_comments", "{}")]), Reply::tool_calls(&[("w1", "test_write_note", r#"{"note":"x"}"#)]), Reply::text("understood")], json!({}));
    h.t.ok("permissionRules.set", json!({"rules": [{"tool": "read_comments", "decision": "deny"}, {"tool": "test_write_note", "decision": "allow"}]}));
    let (result, _) = h.send("go");
    assert_eq!(result["reason"], "blocked_on_approval", "an allow rule does not loosen the tool's ask");
    assert_eq!(h.results()[0].1, "permission_denied");
    let (result, _) = h.approve(&pending_request(&result), false);
    assert_eq!(result["reason"], "completed");
    assert_eq!(h.results()[1].1, "denied", "the person's denial is its own status, not a rule's");
    assert_eq!(h.comments(), 0);
    h.assert_replay_matches_live();
}

#[test]
fn plan_mode_refuses_a_write_the_model_insists_on_and_the_breaker_trips() {
    let args: Vec<String> = (0..3).map(|i| format!(r#"{{"note":"n{i}"}}"#)).collect();
    let script: Vec<Reply> = ["w1", "w2", "w3"].iter().zip(&args).map(|(id, a)| Reply::tool_calls(&[(id, "test_write_note", a.as_str())])).collect();
    let h = setup(script, json!({}));
    let (result, _) = h.stream("session.submit", json!({"sessionId": h.session, "text": "write it", "mode": "plan"}));
    let result = result.unwrap();
    assert_eq!(result["session"]["mode"], "plan");
    assert_eq!(result["reason"], "circuit_breaker");
    let statuses: Vec<String> = h.results().into_iter().map(|r| r.1).collect();
    assert_eq!(statuses, ["blocked", "blocked", "blocked"], "plan mode blocks: not a failure, not a rule's denial");
    assert!(h.results()[0].2.contains("plan mode"));
    assert_eq!(h.comments(), 0);
    h.server.assert_calls(3);
    h.assert_replay_matches_live();
}

#[test]
fn the_loop_detector_stops_the_same_call_the_third_time() {
    let h = setup(
        vec![Reply::tool_calls(&[("c1", "read_versions", "{}")]), Reply::tool_calls(&[("c2", "read_versions", "{ }")]), Reply::tool_calls(&[("c3", "read_versions", "{}")])],
        json!({}),
    );
    let (result, _) = h.send("go");
    assert_eq!(result["reason"], "loop_detected");
    let statuses: Vec<String> = h.results().into_iter().map(|r| r.1).collect();
    assert_eq!(statuses, ["success", "success", "loop_detected"]);
    h.server.assert_calls(3);
    h.assert_replay_matches_live();
}

#[test]
fn the_session_budget_stops_a_turn_and_says_so() {
    let h = setup(
        vec![Reply::ToolCalls { calls: vec![("c1".into(), "read_versions".into(), "{}".into())], content: String::new(), without_index: false, split_args: 0 }],
        json!({"tokenBudget": 10}),
    );
    let (result, _) = h.send("go");
    assert_eq!(result["reason"], "budget_exceeded");
    let (message, hints) = h.last_turn_end();
    assert!(message.contains("budget"), "{message}");
    assert_eq!(hints[0].id, "raise_budget");
    h.server.assert_calls(1);
    h.assert_replay_matches_live();
}

#[test]
fn the_model_turn_limit_ends_the_turn() {
    let h = setup(vec![Reply::tool_calls(&[("c1", "read_versions", "{}")]), Reply::tool_calls(&[("c2", "read_templates", "{}")])], json!({"maxModelTurns": 2}));
    let (result, _) = h.send("go");
    assert_eq!(result["reason"], "max_model_turns");
    h.server.assert_calls(2);
    h.assert_replay_matches_live();
}

#[test]
fn interrupt_during_generation_closes_the_reply_as_interrupted() {
    let h = setup(vec![Reply::Stall { content: "我正在写".to_owned() }], json!({}));
    let (result, _) = std::thread::scope(|scope| {
        let sender = scope.spawn(|| h.stream("session.submit", json!({"sessionId": h.session, "text": "write"})));
        std::thread::sleep(Duration::from_millis(300));
        let interrupted = h.t.ok("session.interrupt", json!({"sessionId": h.session}));
        assert_eq!(interrupted["interrupted"], true);
        sender.join().unwrap()
    });
    assert_eq!(result.unwrap()["reason"], "interrupted");
    let message = h.log().into_iter().find_map(|e| match e.body {
        EventBody::AssistantMessage { text, interrupted, .. } => Some((text, interrupted)),
        _ => None,
    });
    assert_eq!(message, Some(("我正在写".to_owned(), true)));
    assert_eq!(h.t.ok("session.interrupt", json!({"sessionId": h.session}))["interrupted"], false);
}

#[test]
fn a_stream_that_breaks_off_keeps_the_text_so_far_marked_cut_off_by_the_failure() {
    let garbage = Reply::Raw { status: 200, content_type: "text/html".to_owned(), body: "<html>not an API</html>".to_owned() };
    let provider_stop = Reply::StreamError { content: "夜来".to_owned(), error: json!({"message": "slow down", "code": 429}) };
    let h = setup(vec![garbage, Reply::Cut { content: "春眠不觉晓，处处".to_owned() }, provider_stop, Reply::text("春眠不觉晓，处处闻啼鸟。")], json!({}));
    let assistant = |log: &[Event]| -> Vec<(String, bool, String)> {
        log.iter()
            .filter_map(|e| match &e.body {
                EventBody::AssistantMessage { text, interrupted, finish_reason, .. } => Some((text.clone(), *interrupted, finish_reason.clone())),
                _ => None,
            })
            .collect()
    };
    let ids = |hints: &[inkstone_core::error::Hint]| hints.iter().map(|h| h.id.clone()).collect::<Vec<_>>();

    // A failure before any text: nothing to keep; the hints are the provider error's,
    // the retry one with its own id (not the generic `retry` of a storage failure).
    let (result, _) = h.send("写一句");
    assert_eq!(result["reason"], "model_error");
    assert!(assistant(&h.log()).is_empty(), "no text arrived, no assistant message");
    let (_, hints) = h.last_turn_end();
    assert_eq!(ids(&hints), ["check_compatible", "retry_connection"]);

    // The connection drops after part of the answer: the part is logged as an
    // interrupt keeps it, marked as cut off by the failure.
    let (result, events) = h.send("写一句");
    assert_eq!(result["reason"], "model_error");
    assert!(events.iter().any(|e| e.sequence == 0 && matches!(e.body, EventBody::AssistantDelta { .. })), "the text streamed live first");
    assert_eq!(assistant(&h.log()), [("春眠不觉晓，处处".to_owned(), true, "error".to_owned())]);
    let (message, hints) = h.last_turn_end();
    assert!(message.starts_with("The connection to the model was lost during the answer"), "{message}");
    assert_eq!(ids(&hints), ["connection_lost", "check_server_running"], "an answering server is compatible: no hint to check that");
    // The log's order: the kept text comes before the turn's end (a reload shows both).
    let kinds: Vec<&str> = h.log().iter().rev().take(2).map(|e| e.kind_name()).collect();
    assert_eq!(kinds, ["turn_ended", "assistant_message"]);

    // The provider stops the answer with an error of its own: the text is kept too,
    // and the hints are that error's, not a lost connection's.
    let (result, _) = h.send("写一句");
    assert_eq!(result["reason"], "model_error");
    assert_eq!(assistant(&h.log()).last().unwrap(), &("夜来".to_owned(), true, "error".to_owned()));
    let (message, hints) = h.last_turn_end();
    assert!(message.starts_with("The model's answer broke off; the text that arrived is kept."), "{message}");
    assert_eq!(ids(&hints), ["wait_and_retry"]);

    // Trying again: the model sees its cut-off text, as after a stop.
    let (result, _) = h.send("写一句");
    assert_eq!(result["reason"], "completed");
    let sent = wire_messages(&h.server.chat_requests().last().unwrap().body);
    assert!(sent.iter().any(|m| m.role == Role::Assistant && m.content == "春眠不觉晓，处处"), "{sent:?}");
    h.assert_replay_matches_live();
}

#[test]
fn interrupt_during_a_tool_stops_it() {
    let h = setup(vec![Reply::tool_calls(&[("c1", "slow_read", r#"{"label":"long","ms":20000}"#)])], json!({}));
    let started = std::time::Instant::now();
    let (result, _) = std::thread::scope(|scope| {
        let sender = scope.spawn(|| h.stream("session.submit", json!({"sessionId": h.session, "text": "go"})));
        std::thread::sleep(Duration::from_millis(500));
        h.t.ok("session.interrupt", json!({"sessionId": h.session}));
        sender.join().unwrap()
    });
    assert_eq!(result.unwrap()["reason"], "interrupted");
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(h.results()[0].1, "interrupted");
    assert!(h.finished.lock().unwrap().is_empty());
    h.assert_replay_matches_live();
}

#[test]
fn a_tool_past_its_timeout_is_stopped_and_reported() {
    let h = setup(vec![Reply::tool_calls(&[("c1", "slow_read", r#"{"label":"long","ms":20000}"#)]), Reply::text("ok")], json!({"toolTimeoutMs": 200}));
    let (result, _) = h.send("go");
    assert_eq!(result["reason"], "completed");
    assert_eq!(h.results()[0].1, "timeout");
    h.assert_replay_matches_live();
}

#[test]
fn a_message_sent_while_a_turn_runs_is_queued_for_the_next_boundary() {
    let h = setup(vec![Reply::delayed(Duration::from_millis(600), Reply::text("first answer")), Reply::text("second answer")], json!({}));
    let (first, second) = std::thread::scope(|scope| {
        let first = scope.spawn(|| h.send("first"));
        std::thread::sleep(Duration::from_millis(250));
        let second = h.send("second");
        (first.join().unwrap(), second)
    });
    assert_eq!(second.0["queued"], true);
    assert_eq!(kinds(&second.1), ["message_queued"]);
    assert_eq!(first.0["reason"], "completed");
    let users: Vec<(String, bool)> = h
        .log()
        .into_iter()
        .filter_map(|e| match e.body {
            EventBody::UserMessage { text, was_queued, .. } => Some((text, was_queued)),
            _ => None,
        })
        .collect();
    assert_eq!(users, [("first".to_owned(), false), ("second".to_owned(), true)]);
    assert_eq!(first.0["session"]["queued"], json!([]));
    h.server.assert_calls(2);
    h.assert_replay_matches_live();
}

/// The UTF-16 range of `part` in `source` (its first occurrence).
fn utf16_range(source: &str, part: &str) -> (usize, usize) {
    let byte = source.find(part).unwrap();
    let from = source[..byte].encode_utf16().count();
    (from, from + part.encode_utf16().count())
}

#[test]
fn a_task_scoped_to_a_selection_is_checked_logged_and_in_the_working_set() {
    // "𠀀" takes two UTF-16 units: offsets after it differ from character counts.
    let source = "# 春日\n\n𠀀春眠不觉晓，处处闻啼鸟。A short draft.";
    let h = setup_with(vec![Reply::delayed(Duration::from_millis(600), Reply::text("改好了")), Reply::text("第二条"), Reply::text("第三条")], json!({}), source);
    let (from, to) = utf16_range(source, "处处闻啼鸟");
    assert_eq!(from, 14, "two units for 𠀀");
    let log_before = h.log().len();

    // Bad selections: a clear error naming the field, nothing written (not even the
    // mode switch that came with it), no model call.
    let refused = |selection: Value, field: &str| {
        let (result, events) = h.stream("session.submit", json!({"sessionId": h.session, "text": "改一下", "mode": "plan", "selection": selection}));
        let error = result.unwrap_err();
        assert_eq!(error.code, ErrorCode::Validation, "{error:?}");
        assert_eq!(error.details.as_ref().unwrap()["field"], field, "{error:?}");
        assert_eq!(error.hints.iter().map(|h| h.id.as_str()).collect::<Vec<_>>(), ["reselect_text"]);
        assert!(events.is_empty());
    };
    refused(json!({"from": from, "to": 400, "text": "处处闻啼鸟"}), "selection.to");
    refused(json!({"from": from - 1, "to": to - 1, "text": "处处闻啼鸟"}), "selection.text");
    refused(json!({"from": 6, "to": 7, "text": "𠀀"}), "selection.to");
    refused(json!({"from": to, "to": from, "text": "处处闻啼鸟"}), "selection.to");
    let (result, _) = h.stream("session.submit", json!({"sessionId": h.session, "text": "改一下", "selection": {"from": from, "to": to, "text": "处处闻啼鸟", "line": 1}}));
    assert_eq!(result.unwrap_err().code, ErrorCode::Validation, "unknown fields are refused");
    assert_eq!(h.log().len(), log_before, "a refused submit writes nothing");
    assert_eq!(h.t.ok("session.get", json!({"sessionId": h.session}))["mode"], "default");
    h.server.assert_calls(0);

    // A scoped task while another runs: queued with its selection, delivered with it.
    let selection = json!({"from": from, "to": to, "text": "处处闻啼鸟"});
    let (first, queued) = std::thread::scope(|scope| {
        let first = scope.spawn(|| h.send("先读一遍"));
        std::thread::sleep(Duration::from_millis(250));
        let queued = h.stream("session.submit", json!({"sessionId": h.session, "text": "把这句改得更短", "selection": selection}));
        (first.join().unwrap(), queued)
    });
    assert_eq!(queued.0.unwrap()["queued"], true);
    assert_eq!(first.0["reason"], "completed");
    let (_, third) = h.send("再看看全文");
    assert_eq!(third.iter().filter(|e| e.kind_name() == "user_message").count(), 1);

    let users: Vec<(String, bool, Option<Value>)> = h
        .log()
        .into_iter()
        .filter_map(|e| match e.body {
            EventBody::UserMessage { text, was_queued, selection } => Some((text, was_queued, selection.map(|s| serde_json::to_value(s).unwrap()))),
            _ => None,
        })
        .collect();
    assert_eq!(
        users,
        [("先读一遍".to_owned(), false, None), ("把这句改得更短".to_owned(), true, Some(selection.clone())), ("再看看全文".to_owned(), false, None)],
        "the selection is recorded in its user message"
    );
    let queued_event = h.log().into_iter().find(|e| e.kind_name() == "message_queued").unwrap();
    assert_eq!(serde_json::to_value(&queued_event.body).unwrap()["payload"]["selection"], selection);

    // The working set of the scoped message's call shows the selection; the next
    // message has none, and neither has its working set. The user message itself is
    // the task alone.
    let requests = h.server.chat_requests();
    assert_eq!(requests.len(), 3);
    let system = |i: usize| wire_messages(&requests[i].body)[0].content.clone();
    let heading = format!("selection (the person's latest message is about this part of the source; UTF-16 offsets {from}–{to} when it was sent):\n处处闻啼鸟\n");
    assert!(!system(0).contains("selection ("));
    assert!(system(1).contains(&heading), "{}", system(1));
    assert!(!system(2).contains("selection ("), "a later message without a selection drops it");
    let sent = wire_messages(&requests[1].body);
    assert_eq!(sent.last().unwrap().content, "把这句改得更短");
    h.assert_replay_matches_live();
}

#[test]
fn questions_and_plan_approval_are_answered_by_the_user() {
    let h = setup(
        vec![
            Reply::tool_calls(&[("q1", "ask_user_question", r#"{"question":"哪个标题？","options":["A","B"]}"#)]),
            Reply::tool_calls(&[("p0", "enter_plan_mode", "{}")]),
            Reply::tool_calls(&[("p1", "exit_plan_mode", r#"{"plan":"1. 改标题"}"#)]),
            Reply::text("done"),
        ],
        json!({}),
    );
    let (result, _) = h.send("改一下");
    assert_eq!(result["reason"], "blocked_on_question");
    let question = result["session"]["pendingQuestion"]["questionId"].as_str().unwrap().to_owned();
    let (result, _) = h.stream("session.answerQuestion", json!({"sessionId": h.session, "questionId": question, "answer": "B"}));
    let result = result.unwrap();
    assert_eq!(result["reason"], "blocked_on_approval", "leaving plan mode needs the user's approval");
    assert_eq!(result["session"]["mode"], "plan");
    let (result, _) = h.approve(&pending_request(&result), true);
    assert_eq!(result["reason"], "completed");
    assert_eq!(result["session"]["mode"], "default");
    assert!(h.results()[0].2.contains("\"B\""));
    h.assert_replay_matches_live();
}

#[test]
fn large_results_go_to_the_result_store_and_the_model_sees_a_preview() {
    // Over the log line (40,000 CJK characters are 120 KB); a few thousand are now
    // seen whole (see the next test).
    let source = "长文".repeat(20_000);
    let h = setup_with(vec![Reply::tool_calls(&[("c1", "read_project_context", "{}")]), Reply::text("ok")], json!({}), &source);
    h.send("read all");
    let content = h.results()[0].2.clone();
    let visible: Value = serde_json::from_str(&content).unwrap();
    assert_eq!(visible["truncated"], true);
    assert!(visible["preview"].as_str().unwrap().chars().count() <= 2_000);
    let stored = h.engine().stored_result(visible["ref"].as_str().unwrap()).unwrap().unwrap();
    assert!(stored.contains(&source));
    for event in h.log() {
        assert!(serde_json::to_vec(&event).unwrap().len() <= inkstone_core::harness::MAX_EVENT_BYTES);
    }
    h.assert_replay_matches_live();
}

#[test]
fn context_too_long_ends_the_turn_with_a_hint_to_start_a_new_session() {
    let h = setup(vec![], json!({}));
    let profile = |window: u64, loading: &str| {
        h.t.ok(
            "llmProfile.update",
            json!({"profile": "fake", "changes": {"name": "fake", "baseUrl": h.server.base_url(), "model": "fake-model", "contextWindow": window, "toolLoading": loading}}),
        );
    };
    // A 4K model sending every tool: the fixed part of a request (system prompt and
    // tool definitions) with the reply's reserve does not fit. The meter says so before
    // anything is sent, and the first message ends saying so, without a compaction.
    profile(4096, "all");
    let context = h.t.ok("session.context", json!({"sessionId": h.session}));
    let (fixed, reserve, tools, system) = (
        context["fixedTokens"].as_u64().unwrap(),
        context["replyReserveTokens"].as_u64().unwrap(),
        context["toolTokens"].as_u64().unwrap(),
        context["systemPromptTokens"].as_u64().unwrap(),
    );
    assert_eq!(reserve, 2048, "the reply's reserve is at most half the window: {context}");
    assert_eq!(fixed, tools + system);
    assert!(tools > 2_000, "every tool's definition: {context}");
    assert_eq!(context["fixedFits"], false, "{context}");
    assert_eq!(context["inputBudgetTokens"], 4096 - 2048);
    assert_eq!(context["estimatedTokens"], fixed, "a new session's meter shows what the first message carries: {context}");
    let (result, _) = h.send("改一下开头");
    assert_eq!(result["reason"], "fixed_context_too_long", "{result}");
    let (message, hints) = h.last_turn_end();
    assert!(message.contains("cannot hold the fixed part of a request"), "{message}");
    let ids: Vec<&str> = hints.iter().map(|h| h.id.as_str()).collect();
    assert_eq!(ids, ["context_overhead", "tools_on_demand", "larger_context"]);
    assert_eq!(hints[0].params.get("reserve").map(String::as_str), Some("2048"));
    h.server.assert_calls(0);
    assert!(!h.log().iter().any(|e| matches!(e.body, EventBody::CompactionStarted { .. })), "no summary calls for what no compaction can shrink");

    // On demand the fixed part fits a larger window; a first message too long for it
    // is then the request that does not fit, and nothing is compacted (there is
    // nothing older to compact).
    profile(4096, "onDemand");
    let context = h.t.ok("session.context", json!({"sessionId": h.session}));
    let needed = context["fixedTokens"].as_u64().unwrap() + context["replyReserveTokens"].as_u64().unwrap();
    let window = needed + 200;
    profile(window, "onDemand");
    let context = h.t.ok("session.context", json!({"sessionId": h.session}));
    assert_eq!(context["fixedFits"], true, "{context}");
    let (result, _) = h.send(&"很长的消息".repeat(100));
    assert_eq!(result["reason"], "context_too_long");
    let (message, hints) = h.last_turn_end();
    assert!(message.starts_with("This"), "{message}");
    assert!(message.contains("of them tool definitions"), "{message}");
    let ids: Vec<&str> = hints.iter().map(|h| h.id.as_str()).collect();
    assert_eq!(ids, ["new_session", "compact", "larger_context"], "on demand, the hint to load tools on demand is not given again");
    h.server.assert_calls(0);
}

#[test]
fn secrets_never_enter_a_context_snapshot_or_the_log() {
    let h = setup(vec![Reply::tool_calls(&[("c1", "read_brand_profile", "{}"), ("c2", "read_project_context", "{}")]), Reply::text("ok")], json!({}));
    let key = "sk-supersecret-0123456789abcdef";
    h.t.ok("llmProfile.setKey", json!({"profile": "fake", "apiKey": key}));
    let brand = h.t.ok("brandProfile.create", json!({"name": "B", "voice": "warm"}))["id"].clone();
    h.t.ok("project.update", json!({"projectId": h.project, "brandProfileId": brand}));
    h.send("go");
    for request in h.server.chat_requests() {
        assert!(!request.body.to_string().contains(key), "no key in a request body");
    }
    for event in h.log() {
        assert!(!serde_json::to_string(&event).unwrap().contains(key));
        if let Some(id) = &event.context_snapshot_id {
            let snapshot = h.engine().context_snapshot(id).unwrap().unwrap();
            assert!(!serde_json::to_string(&snapshot).unwrap().contains(key));
            assert!(!snapshot.system.contains("…cdef") && !snapshot.system.contains("fake-model"), "not even the fingerprint or the profile");
        }
    }
}

#[test]
fn session_api_lists_archives_and_refuses_bad_input() {
    let h = setup(vec![], json!({}));
    let list = h.t.ok("session.list", json!({"projectId": h.project}));
    assert_eq!(list["sessions"].as_array().unwrap().len(), 1);
    let error = h.t.engine.call("session.submit", json!({"sessionId": h.session, "text": "  "})).unwrap_err();
    assert_eq!(error.code, ErrorCode::Validation);
    let error = h.t.engine.call("session.get", json!({"sessionId": "ses_nope"})).unwrap_err();
    assert_eq!(error.code, ErrorCode::NotFound);
    let view = h.t.ok("session.setMode", json!({"sessionId": h.session, "mode": "plan"}));
    assert_eq!(view["mode"], "plan");
    let view = h.t.ok("session.rename", json!({"sessionId": h.session, "title": "  标题：改写开头  "}));
    assert_eq!(view["session"]["title"], "标题：改写开头");
    let error = h.t.engine.call("session.rename", json!({"sessionId": h.session, "title": " "})).unwrap_err();
    assert_eq!((error.code, error.details.as_ref().and_then(|d| d["field"].as_str())), (ErrorCode::Validation, Some("title")));
    let error = h.t.engine.call("session.rename", json!({"sessionId": "ses_nope", "title": "x"})).unwrap_err();
    assert_eq!(error.code, ErrorCode::NotFound);
    let view = h.t.ok("session.archive", json!({"sessionId": h.session}));
    assert_eq!(view["status"], "archived");
    assert_eq!(h.t.ok("session.list", json!({}))["sessions"].as_array().unwrap().len(), 0);
    let error = h.t.engine.call("session.submit", json!({"sessionId": h.session, "text": "hi"})).unwrap_err();
    assert_eq!(error.code, ErrorCode::Validation);
    let view = h.t.ok("session.get", json!({"sessionId": h.session, "timeline": true}));
    assert!(view["timeline"].as_array().unwrap().len() >= 3);
}

/// A session whose project is archived is read-only until the project is restored:
/// sending, approving a pending write, setting the mode or the intent and compacting
/// are refused (VALIDATION `session.project_archived`, with the way out), nothing is
/// written and no model is asked. Archiving a project while one of its sessions runs
/// a turn is refused (CONFLICT `project.session_running`). Restored, it continues.
#[test]
fn a_session_of_an_archived_project_is_refused_until_the_project_is_restored() {
    let h = setup(vec![Reply::tool_calls(&[("w1", "slow_write_note", r#"{"note":"x","ms":600}"#)]), Reply::text("saved"), Reply::text("继续")], json!({}));
    let (result, _) = h.send("write");
    let request = pending_request(&result);
    h.t.ok("project.archive", json!({"projectId": h.project, "archived": true}));
    let log_before = h.log();
    let requests_before = h.server.chat_requests().len();
    let refusals = [
        ("session.submit", json!({"sessionId": h.session, "text": "再来"})),
        ("session.resolveApproval", json!({"sessionId": h.session, "requestId": request, "approved": true})),
        ("session.setMode", json!({"sessionId": h.session, "mode": "plan"})),
        ("session.setIntent", json!({"sessionId": h.session, "intent": {"topic": "春天"}})),
        ("session.compact", json!({"sessionId": h.session})),
    ];
    for (method, params) in refusals {
        let error = h.stream(method, params).0.unwrap_err();
        assert_eq!((error.code, error.message_id.as_deref()), (ErrorCode::Validation, Some("session.project_archived")), "{method}: {error:?}");
        assert_eq!(error.params.as_ref().and_then(|p| p.get("project")).map(String::as_str), Some("春日"), "{method}");
        assert!(error.hints.iter().any(|hint| hint.id == "unarchive_project_first" && hint.params.get("project") == Some(&h.project)), "{method}: {error:?}");
    }
    assert_eq!(h.log(), log_before, "a refused call wrote to the log");
    assert_eq!(h.server.chat_requests().len(), requests_before, "a refused call asked the model");
    assert_eq!(h.comments(), 0, "the write ran in an archived project");
    assert_eq!(h.t.ok("session.get", json!({"sessionId": h.session}))["status"], "waitingForApproval");

    // Restored, the write is asked again (archiving moved the project on: the approval
    // was for the version before), and, approved, runs; while it runs, the project
    // cannot be archived.
    h.t.ok("project.archive", json!({"projectId": h.project, "archived": false}));
    let (result, _) = h.approve(&request, true);
    assert_eq!(result["reason"], "blocked_on_approval");
    let request = pending_request(&result);
    let (result, refused) = std::thread::scope(|scope| {
        let approving = scope.spawn(|| h.stream("session.resolveApproval", json!({"sessionId": h.session, "requestId": request, "approved": true})));
        std::thread::sleep(Duration::from_millis(250));
        let refused = h.t.engine.call("project.archive", json!({"projectId": h.project, "archived": true})).unwrap_err();
        (approving.join().unwrap(), refused)
    });
    assert_eq!((refused.code, refused.message_id.as_deref()), (ErrorCode::Conflict, Some("project.session_running")), "{refused:?}");
    assert_eq!(h.t.ok("project.get", json!({"projectId": h.project}))["archived"], false);
    assert_eq!(result.0.unwrap()["reason"], "completed");
    assert_eq!(h.comments(), 1);
    let (result, _) = h.send("再来");
    assert_eq!(result["reason"], "completed");
}

/// An archived session comes back with `session.archive {archived: false}`: it is
/// listed and can be continued again, its log says so, and the model sees the whole
/// conversation as before. Restoring one whose project is archived is refused with the
/// way out, and nothing changes.
#[test]
fn an_archived_session_can_be_brought_back_and_continued() {
    let h = setup(vec![Reply::text("第一次回答"), Reply::text("恢复后的回答")], json!({}));
    h.send("写个开头");
    h.t.ok("session.archive", json!({"sessionId": h.session}));
    let refused = h.t.engine.call("session.submit", json!({"sessionId": h.session, "text": "再来"})).unwrap_err();
    assert_eq!(refused.code, ErrorCode::Validation);
    assert!(refused.hints.iter().any(|hint| hint.id == "unarchive_session" && hint.params.get("session") == Some(&h.session)), "{refused:?}");

    // The project archived too: restoring the session is refused, with the way out.
    h.t.ok("project.archive", json!({"projectId": h.project, "archived": true}));
    let log_before = h.log().len();
    let error = h.t.engine.call("session.archive", json!({"sessionId": h.session, "archived": false})).unwrap_err();
    assert_eq!(error.code, ErrorCode::Validation);
    assert_eq!(error.message_id.as_deref(), Some("session.project_archived"));
    assert!(error.hints.iter().any(|hint| hint.id == "unarchive_project_first" && hint.params.get("project") == Some(&h.project)), "{error:?}");
    assert_eq!(h.log().len(), log_before, "a refused restore wrote to the log");
    assert_eq!(h.t.ok("session.get", json!({"sessionId": h.session}))["status"], "archived");
    let error = h.t.engine.call("session.archive", json!({"sessionId": "ses_nope", "archived": false})).unwrap_err();
    assert_eq!(error.code, ErrorCode::NotFound);
    let error = h.t.engine.call("session.archive", json!({"sessionId": h.session, "archived": "no"})).unwrap_err();
    assert_eq!(error.code, ErrorCode::Validation);

    h.t.ok("project.archive", json!({"projectId": h.project, "archived": false}));
    let view = h.t.ok("session.archive", json!({"sessionId": h.session, "archived": false}));
    assert_eq!(view["status"], "idle");
    assert_eq!(view["session"]["archived"], false);
    let last = h.log().pop().unwrap();
    assert_eq!(last.body.kind_name(), "session_unarchived");
    // Again: already restored, nothing written.
    let log_len = h.log().len();
    h.t.ok("session.archive", json!({"sessionId": h.session, "archived": false}));
    assert_eq!(h.log().len(), log_len);
    assert_eq!(h.t.ok("session.list", json!({"projectId": h.project}))["sessions"].as_array().unwrap().len(), 1);

    // It continues where it left off: the model sees the first exchange.
    let (result, _) = h.send("再来");
    assert_eq!(result["reason"], "completed");
    let request = h.server.chat_requests().pop().unwrap();
    let body = request.body.to_string();
    assert!(body.contains("写个开头") && body.contains("第一次回答") && body.contains("再来"), "{body}");
    // The same state after a replay of the log (a restart).
    let view = h.t.ok("session.get", json!({"sessionId": h.session}));
    assert_eq!(view["status"], "idle");
}

const CRASH_DIR: &str = "INKSTONE_HARNESS_CRASH_DIR";
const CRASH_URL: &str = "INKSTONE_HARNESS_CRASH_URL";

/// The child of the restart test: opens the data dir, sends one message and stays in
/// the turn (the model stalls, or the turn blocks) until it is killed.
#[test]
fn harness_crash_child() {
    let (Ok(dir), Ok(url)) = (std::env::var(CRASH_DIR), std::env::var(CRASH_URL)) else { return };
    let mut config = EngineConfig::new(&dir, "harness crash child");
    config.group_commit_millis = 20;
    let engine = Engine::open(config).unwrap();
    register_test_tools(&engine);
    let session = match engine.call("session.list", json!({})).unwrap()["sessions"][0]["id"].as_str() {
        Some(id) => id.to_owned(),
        None => {
            engine.call("llmProfile.create", json!({"name": "fake", "baseUrl": url, "model": "fake-model"})).unwrap();
            let project = engine.call("project.create", json!({"title": "t", "source": "s"})).unwrap()["id"].as_str().unwrap().to_owned();
            engine.call("session.create", json!({"projectId": project})).unwrap()["session"]["id"].as_str().unwrap().to_owned()
        }
    };
    let result = engine.call_stream("session.submit", json!({"sessionId": session, "text": "go"}), &mut |event| {
        if let StreamEvent::Harness(event) = event {
            if matches!(event.body, EventBody::AssistantDelta { .. }) {
                println!("STREAMING {session}");
            }
        }
    });
    match result {
        Ok(_) => println!("ENDED {session}"),
        Err(error) => println!("FAILED {error:?}"),
    }
    std::thread::sleep(Duration::from_secs(60));
}

/// Runs the child until it prints `marker`, waits `linger`, then kills it (SIGKILL).
fn run_child_until(dir: &std::path::Path, url: &str, marker: &str, linger: Duration) -> String {
    use std::io::{BufRead, BufReader};
    let exe = std::env::current_exe().unwrap();
    let mut child = std::process::Command::new(exe)
        .args(["--exact", "harness::harness_crash_child", "--nocapture", "--test-threads=1"])
        .env(CRASH_DIR, dir)
        .env(CRASH_URL, url)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut session = String::new();
    for line in BufReader::new(stdout).lines() {
        let line = line.unwrap();
        // libtest prints "test name ... " before the test's own output.
        if line.contains("FAILED ") {
            eprintln!("child: {line}");
            break;
        }
        if let Some(at) = line.find(marker) {
            session = line[at + marker.len()..].trim().to_owned();
            break;
        }
    }
    std::thread::sleep(linger);
    // SIGKILL: no destructors, no flush.
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(!session.is_empty(), "the child reached {marker}");
    session
}

#[test]
fn after_kill_9_the_log_is_consistent_and_pending_approvals_are_still_pending() {
    let server =
        ModelServer::start(vec![Reply::Stall { content: "半截回复".to_owned() }, Reply::tool_calls(&[("w1", "test_write_note", r#"{"note":"hi"}"#)]), Reply::text("saved")]);
    let dir = tempfile::tempdir().unwrap();
    // 1. Killed while a reply streams, after its text was checkpointed (at most
    // STREAM_CHECKPOINT_MILLIS; the checkpoint is synced to disk at once).
    let linger = Duration::from_millis(inkstone_core::harness::STREAM_CHECKPOINT_MILLIS + 700);
    let session = run_child_until(dir.path(), &server.base_url(), "STREAMING ", linger);
    {
        let engine = Engine::open(EngineConfig::new(dir.path(), "test")).unwrap();
        // The panel's first read after the restart (session.events before anything else)
        // already holds the turn the restart closed.
        let first_read = engine.call("session.events", json!({"sessionId": session})).unwrap();
        let kinds: Vec<&str> = first_read["events"].as_array().unwrap().iter().filter_map(|e| e["kind"].as_str()).collect();
        assert_eq!(kinds.last(), Some(&"turn_ended"), "{kinds:?}");
        assert_eq!(first_read["events"].as_array().unwrap().last().unwrap()["payload"]["reason"], "restarted");
        assert_eq!(first_read["lastSequence"].as_u64(), Some(kinds.len() as u64));
        let view = engine.call("session.get", json!({"sessionId": session})).unwrap();
        assert_eq!(view["lastTurnEnd"], "restarted");
        let log = engine.session_events(&session).unwrap();
        let sequences: Vec<u64> = log.iter().map(|e| e.sequence).collect();
        assert_eq!(sequences, (1..=log.len() as u64).collect::<Vec<_>>(), "no gaps");
        let closed = log.iter().find_map(|e| match &e.body {
            EventBody::AssistantMessage { interrupted: true, text, finish_reason, .. } => Some((text.as_str(), finish_reason.as_str())),
            _ => None,
        });
        assert_eq!(closed, Some(("半截回复", "interrupted")), "the half-streamed reply is closed as interrupted, with the text that streamed");
        assert_eq!(replay(log.iter()).messages_hash(), view["messagesHash"].as_str().unwrap());
    }
    // 2. Killed while a write waits for approval (the child sleeps after the turn blocks).
    let again = run_child_until(dir.path(), &server.base_url(), "ENDED ", Duration::ZERO);
    assert_eq!(again, session);
    let engine = Engine::open(EngineConfig::new(dir.path(), "test")).unwrap();
    register_test_tools(&engine);
    let view = engine.call("session.get", json!({"sessionId": session})).unwrap();
    assert_eq!(view["status"], "waitingForApproval", "a blocked approval is still pending after restart");
    let request = view["pendingApproval"]["requestId"].as_str().unwrap().to_owned();
    let (result, _) = stream(&engine, "session.resolveApproval", json!({"sessionId": session, "requestId": request, "approved": true}));
    assert_eq!(result.unwrap()["reason"], "completed");
    let comments = engine.call("comment.list", json!({"projectId": view["session"]["projectId"]})).unwrap();
    assert_eq!(comments["comments"].as_array().unwrap().len(), 1);
    server.assert_tool_results_paired();
}

#[test]
fn replaying_100_000_events_is_fast_and_deterministic() {
    // A real log: session.create writes event 1; 99,999 more are written through the
    // store in batches (one transaction per 2,000 events), folded as they are written,
    // then read back from sled after a restart and replayed.
    let mut h = setup(vec![], json!({}));
    let first = h.log();
    assert_eq!(first.len(), 1);
    let mut written = replay(first.iter()).state;
    let writing = std::time::Instant::now();
    // Batches are built (fold, serialize) here and committed on a second thread, so the
    // two overlap; the log is the same as one writer's.
    std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Batch>(2);
        let engine = h.engine();
        let writer = scope.spawn(move || {
            for batch in rx {
                let _guard = engine.write_lock();
                engine.store().apply(batch, Durability::Grouped).unwrap();
            }
            engine.store().sync().unwrap();
        });
        let mut batch = Batch::new();
        let mut turn = String::new();
        for sequence in 2..=100_000u64 {
            let call_id = format!("c{}", sequence - sequence % 5);
            let body = match sequence % 5 {
                1 => {
                    turn = format!("trn_{sequence}");
                    EventBody::TurnStarted {}
                }
                2 => EventBody::UserMessage { text: format!("第 {sequence} 条消息"), was_queued: false, selection: None },
                3 => EventBody::AssistantMessage {
                    text: "好的，我先读一下。".to_owned(),
                    tool_calls: vec![ToolCall { id: call_id.clone(), name: "read_versions".to_owned(), arguments: "{}".to_owned() }],
                    finish_reason: "tool_calls".to_owned(),
                    interrupted: false,
                    input_tokens: 20,
                    output_tokens: 5,
                },
                4 => EventBody::ToolResult {
                    tool: "read_versions".to_owned(),
                    status: inkstone_core::harness::ToolStatus::Success,
                    content: r#"{"versions":[]}"#.to_owned(),
                    result_ref: None,
                    reused_execution: false,
                },
                _ => EventBody::TurnEnded { reason: inkstone_core::harness::TurnEndReason::Completed, message: String::new(), hints: Vec::new() },
            };
            let tool_use_id = matches!(body, EventBody::ToolResult { .. }).then(|| call_id.clone());
            let model_visible = body.policy().1;
            let event = Event { event_id: format!("evt_{sequence}"), sequence, turn_id: Some(turn.clone()), tool_use_id, model_visible, body, ..first[0].clone() };
            written.apply(&event);
            batch.put(&event).unwrap();
            if batch.len() == 2_000 || sequence == 100_000 {
                tx.send(std::mem::replace(&mut batch, Batch::new())).unwrap();
            }
        }
        drop(tx);
        writer.join().unwrap();
    });
    let wrote = writing.elapsed();
    // Restart, so nothing is served from the running engine's memory.
    let dir = std::mem::replace(&mut h.t.dir, tempfile::tempdir().unwrap());
    let old = std::mem::replace(&mut h.t.engine, Engine::open(EngineConfig::for_tests(h.t.dir.path())).unwrap());
    drop(old);
    h.t.engine = Engine::open(EngineConfig::for_tests(dir.path())).unwrap();
    h.t.dir = dir;

    let started = std::time::Instant::now();
    let stored = h.log();
    let read = started.elapsed();
    let sequences: Vec<u64> = stored.iter().map(|e| e.sequence).collect();
    assert_eq!(sequences, (1..=100_000).collect::<Vec<_>>(), "gap-free, in order");
    let started = std::time::Instant::now();
    let replayed = replay(stored.iter());
    let elapsed = started.elapsed();
    assert_eq!(replayed.state, written, "replay of the stored log equals the fold done while writing");
    assert_eq!(replayed.messages_hash(), written.messages_hash());
    assert_eq!(replayed.messages().len(), written.messages.len());
    assert!(replayed.messages().len() > 59_000);
    assert_eq!(replayed.state.last_sequence, 100_000);
    assert!(replayed.state.open_turn.is_none() && replayed.state.open_calls.is_empty());
    // Debug build: sled and the codec dominate (the bench times the release build).
    eprintln!("100,000 events: written in {wrote:?}, read back in {read:?}, replayed in {elapsed:?}");
    assert!(elapsed < Duration::from_secs(5), "replay {elapsed:?} (debug build)");
    let _ = Usage::Counted;
}

const LOOP_DIR: &str = "INKSTONE_HARNESS_LOOP_DIR";

/// The child of the 50-kill test: sends messages forever on one session.
#[test]
fn harness_loop_child() {
    let (Ok(dir), Ok(url)) = (std::env::var(LOOP_DIR), std::env::var(CRASH_URL)) else { return };
    let mut config = EngineConfig::new(&dir, "harness loop child");
    config.group_commit_millis = 20;
    let engine = Engine::open(config).unwrap();
    register_test_tools(&engine);
    let session = match engine.call("session.list", json!({})).unwrap()["sessions"][0]["id"].as_str() {
        Some(id) => id.to_owned(),
        None => {
            engine.call("llmProfile.create", json!({"name": "fake", "baseUrl": url, "model": "fake-model", "contextWindow": 1000000})).unwrap();
            let project = engine.call("project.create", json!({"title": "t", "source": "s"})).unwrap()["id"].as_str().unwrap().to_owned();
            engine.call("session.create", json!({"projectId": project})).unwrap()["session"]["id"].as_str().unwrap().to_owned()
        }
    };
    println!("READY {session}");
    for i in 0.. {
        let _ = engine.call("session.submit", json!({"sessionId": session, "text": format!("m{i}")}));
    }
}

#[test]
fn kill_9_at_random_points_leaves_a_gapless_log_that_replays_and_keeps_approvals_pending() {
    use std::io::{BufRead, BufReader};
    let kills: u64 = std::env::var("INKSTONE_HARNESS_KILLS").ok().and_then(|s| s.parse().ok()).unwrap_or(50);
    let seed: u64 = std::env::var("INKSTONE_HARNESS_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x5eed);
    let mut rng = Rng(seed | 1);
    let server = ModelServer::start(vec![]);
    for n in 0..kills * 40 {
        let (a, b, w, note) = (format!("r{n}a"), format!("r{n}b"), format!("w{n}"), format!(r#"{{"note":"n{n}"}}"#));
        server.push(match rng.below(4) {
            0 => Reply::text("好的。"),
            1 => Reply::tool_calls(&[(a.as_str(), "read_versions", "{}"), (b.as_str(), "slow_read", r#"{"label":"x","ms":20}"#)]),
            2 => Reply::Stall { content: "写到一半".to_owned() },
            _ => Reply::tool_calls(&[(w.as_str(), "test_write_note", note.as_str())]),
        });
    }
    // A stalled reply holds its connection; the child is killed during it or earlier.
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    for kill in 0..kills {
        let mut child = std::process::Command::new(&exe)
            .args(["--exact", "harness::harness_loop_child", "--nocapture", "--test-threads=1"])
            .env(LOOP_DIR, dir.path())
            .env(CRASH_URL, server.base_url())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut session = String::new();
        for line in BufReader::new(child.stdout.take().unwrap()).lines() {
            let line = line.unwrap();
            if let Some(at) = line.find("READY ") {
                session = line[at + 6..].trim().to_owned();
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(20 + rng.below(300)));
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(!session.is_empty(), "kill {kill}: the child started");

        let engine = Engine::open(EngineConfig::new(dir.path(), "test")).unwrap();
        let before = engine.session_events(&session).unwrap();
        let view = engine.call("session.get", json!({"sessionId": session})).unwrap();
        let log = engine.session_events(&session).unwrap();
        let sequences: Vec<u64> = log.iter().map(|e| e.sequence).collect();
        assert_eq!(sequences, (1..=log.len() as u64).collect::<Vec<_>>(), "kill {kill} (seed {seed}): no gaps");
        let replayed = replay(log.iter());
        assert!(replayed.state.open_turn.is_none(), "kill {kill}: the open turn was closed");
        assert_eq!(view["messagesHash"].as_str().unwrap(), replayed.messages_hash(), "kill {kill}: replay matches");
        let before_state = replay(before.iter()).state;
        if let Some(pending) = before_state.pending_approval {
            assert_eq!(view["pendingApproval"]["requestId"].as_str(), Some(pending.request_id.as_str()), "kill {kill}: the approval is still pending");
        }
        // Every tool call has exactly one result, except those waiting on the pending block.
        let mut open: Vec<String> = Vec::new();
        for message in replayed.messages() {
            open.extend(message.tool_calls.iter().map(|c| c.id.clone()));
            if let Some(id) = &message.tool_call_id {
                let at = open.iter().position(|o| o == id).unwrap_or_else(|| panic!("kill {kill}: result for unknown call {id}"));
                open.remove(at);
            }
        }
        if replayed.state.pending_approval.is_none() && replayed.state.pending_question.is_none() {
            assert!(open.is_empty(), "kill {kill}: calls without results: {open:?}");
        }
    }
}

#[test]
fn a_session_survives_export_and_import() {
    let h = setup(vec![Reply::tool_calls(&[("w1", "test_write_note", r#"{"note":"hello"}"#)]), Reply::text("saved")], json!({}));
    h.t.ok("permissionRules.set", json!({"rules": [{"tool": "read_media_summary", "decision": "ask"}]}));
    let (result, _) = h.send("add a note");
    h.approve(&pending_request(&result), true);
    let before = h.t.ok("session.get", json!({"sessionId": h.session}));
    let out = h.t.data_dir().join("export-out");
    let manifest = h.t.ok("export.run", json!({"path": out}));
    assert_eq!(manifest["manifest"]["counts"]["sessions"], 1);
    assert_eq!(manifest["manifest"]["counts"]["sessionEvents"], json!(h.log().len()));

    let other = TestEngine::new();
    other.ok("import.run", json!({"path": out}));
    let after = other.ok("session.get", json!({"sessionId": h.session}));
    assert_eq!(after["messagesHash"], before["messagesHash"]);
    assert_eq!(other.engine.session_events(&h.session).unwrap(), h.log());
    assert_eq!(other.ok("permissionRules.get", json!({}))["rules"][0]["tool"], "read_media_summary");
    let snapshot = h.log().into_iter().find_map(|e| e.context_snapshot_id).unwrap();
    assert!(other.engine.context_snapshot(&snapshot).unwrap().is_some());
}

#[test]
fn an_interrupt_during_a_write_lets_it_finish_and_says_so() {
    let h = setup(vec![Reply::tool_calls(&[("w1", "slow_write_note", r#"{"note":"x","ms":700}"#)])], json!({}));
    let (result, _) = h.send("write");
    let request = pending_request(&result);
    let (result, _) = std::thread::scope(|scope| {
        let approving = scope.spawn(|| h.stream("session.resolveApproval", json!({"sessionId": h.session, "requestId": request, "approved": true})));
        std::thread::sleep(Duration::from_millis(300));
        h.t.ok("session.interrupt", json!({"sessionId": h.session}));
        approving.join().unwrap()
    });
    assert_eq!(result.unwrap()["reason"], "interrupted");
    assert_eq!(h.comments(), 1, "the write that had begun finished");
    let (_, status, content) = h.results()[0].clone();
    assert_eq!(status, "success");
    assert!(content.contains("it finished"), "{content}");
    h.assert_replay_matches_live();
}

#[test]
fn read_publications_reports_saved_drafts_with_their_status() {
    let h = setup(vec![Reply::tool_calls(&[("p1", "read_publications", r#"{"platforms":["x","wechat"]}"#)]), Reply::text("ok")], json!({}));
    h.t.ok("platformDraft.save", json!({"projectId": h.project, "platform": "x"}));
    h.t.ok("platformDraft.setStatus", json!({"projectId": h.project, "platform": "x", "status": "publishing"}));
    h.t.ok("project.update", json!({"projectId": h.project, "source": "# 春日\n\n改过的正文。"}));
    let (result, _) = h.send("where do the drafts stand?");
    assert_eq!(result["reason"], "completed");
    let (_, status, content) = h.results().into_iter().next().unwrap();
    assert_eq!(status, "success");
    let value: Value = serde_json::from_str(&content).unwrap_or_else(|_| panic!("not JSON: {content}"));
    let drafts = value["drafts"].as_array().unwrap();
    let x = drafts.iter().find(|d| d["platform"] == "x").unwrap();
    assert_eq!(x["saved"]["status"], "publishing");
    assert_eq!(x["saved"]["readOnly"], true);
    assert_eq!(x["saved"]["revision"], 2);
    assert_eq!(x["saved"]["sourceChangedSince"], true);
    let wechat = drafts.iter().find(|d| d["platform"] == "wechat").unwrap();
    assert!(wechat["saved"].is_null(), "no saved WeChat draft: {wechat}");
    h.assert_replay_matches_live();
}

#[test]
fn the_registry_refuses_a_write_that_would_not_ask_and_read_tools_cannot_write() {
    let h = setup(
        vec![
            Reply::tool_calls(&[("r1", "sneaky_read", "{}")]),
            Reply::text("ok"),
            Reply::tool_calls(&[("u1", "undeclared_write", r#"{"note":"x"}"#)]),
            Reply::tool_calls(&[("u2", "undeclared_write", r#"{"note":"x"}"#)]),
            Reply::text("done"),
        ],
        json!({}),
    );
    let handler: ToolHandler = Arc::new(|ctx, input| {
        let comment = inkstone_core::project::comments::add(ctx.writer()?, ctx.project_id, input["note"].as_str().unwrap_or("sneaky"), None)?;
        Ok(json!({"commentId": comment.id}))
    });
    // A write, or a tool that is not read-only, with `allow`: refused.
    let error = h.engine().register_tool(definition("bad_write", Capability::Write, PermissionPolicy::Allow), Arc::clone(&handler)).unwrap_err();
    assert_eq!(error.code, ErrorCode::Validation);
    assert_eq!(error.details.as_ref().unwrap()["field"], "permission", "{error:?}");
    let mut not_read_only = definition("bad_read", Capability::Read, PermissionPolicy::Allow);
    not_read_only.read_only = false;
    assert_eq!(h.engine().register_tool(not_read_only.clone(), Arc::clone(&handler)).unwrap_err().code, ErrorCode::Validation);
    assert!(h.engine().tool_definitions().unwrap().iter().all(|d| d.name != "bad_write" && d.name != "bad_read"));

    // A read tool's handler cannot reach a write.
    h.engine().register_tool(definition("sneaky_read", Capability::Read, PermissionPolicy::Allow), Arc::clone(&handler)).unwrap();
    let (result, _) = h.send("read");
    assert_eq!(result["reason"], "completed");
    assert_eq!(h.results()[0].1, "tool_error");
    assert!(h.results()[0].2.contains("read-only"), "{}", h.results()[0].2);
    assert_eq!(h.comments(), 0);

    // Not read-only but not declared a write: it asks, and runs at most once.
    let mut undeclared = not_read_only;
    undeclared.name = "undeclared_write".to_owned();
    undeclared.permission = PermissionPolicy::Ask;
    h.engine().register_tool(undeclared, handler).unwrap();
    let (result, _) = h.send("write");
    assert_eq!(result["reason"], "blocked_on_approval");
    let (result, _) = h.approve(&pending_request(&result), true);
    assert_eq!(result["reason"], "completed");
    assert_eq!(h.comments(), 1);
    let reused = h.log().into_iter().filter(|e| matches!(e.body, EventBody::ToolResult { reused_execution: true, .. })).count();
    assert_eq!(reused, 1, "the same call again returns the recorded result");
    assert_eq!(h.comments(), 1, "at most once");
    // And plan mode denies it.
    h.server.push(Reply::tool_calls(&[("u3", "undeclared_write", r#"{"note":"y"}"#)]));
    h.server.push(Reply::text("refused"));
    let (result, _) = h.stream("session.submit", json!({"sessionId": h.session, "text": "again", "mode": "plan"}));
    assert_eq!(result.unwrap()["reason"], "completed");
    assert_eq!(h.results().last().unwrap().1, "blocked");
    assert_eq!(h.comments(), 1);
    h.assert_replay_matches_live();
}

#[test]
fn an_approval_in_one_project_and_session_authorises_nothing_in_another() {
    // Session A on project A (this H); session B on project B, with its own model server.
    let h = setup(
        vec![
            Reply::tool_calls(&[("a1", "test_write_note", r#"{"note":"hello"}"#)]),
            Reply::text("saved in A"),
            Reply::tool_calls(&[("a2", "test_write_note", r#"{"note":"second"}"#)]),
            Reply::text("second saved in A"),
        ],
        json!({}),
    );
    let server_b = ModelServer::start(vec![
        Reply::tool_calls(&[("b1", "test_write_note", r#"{"note":"hello"}"#)]),
        Reply::text("saved in B"),
        Reply::tool_calls(&[("b2", "test_write_note", r#"{"note":"second"}"#)]),
        Reply::text("second saved in B"),
    ]);
    h.t.ok("llmProfile.create", json!({"name": "fake-b", "baseUrl": server_b.base_url(), "model": "fake-model"}));
    let project_b = h.t.ok("project.create", json!({"title": "秋日", "source": "另一篇稿子。"}))["id"].as_str().unwrap().to_owned();
    let session_b = h.t.ok("session.create", json!({"projectId": project_b, "profile": "fake-b"}))["session"]["id"].as_str().unwrap().to_owned();
    let revision = |project: &str| h.t.ok("project.get", json!({"projectId": project}))["revision"].clone();
    assert_eq!(revision(&h.project), revision(&project_b), "both targets are at the same revision");
    let comments = |project: &str| h.t.ok("comment.list", json!({"projectId": project}))["comments"].as_array().unwrap().len();
    let send_b = |text: &str| stream(h.engine(), "session.submit", json!({"sessionId": session_b, "text": text})).0.unwrap();
    let approve_b = |request: &str| stream(h.engine(), "session.resolveApproval", json!({"sessionId": session_b, "requestId": request, "approved": true})).0.unwrap();
    let results_b = || -> Vec<(String, bool)> {
        h.engine()
            .session_events(&session_b)
            .unwrap()
            .into_iter()
            .filter_map(|e| match e.body {
                EventBody::ToolResult { status, reused_execution, .. } => Some((serde_json::to_value(status).unwrap().as_str().unwrap().to_owned(), reused_execution)),
                _ => None,
            })
            .collect()
    };

    // A approves and runs the write.
    let (result, _) = h.send("write hello");
    let (result, _) = h.approve(&pending_request(&result), true);
    assert_eq!(result["reason"], "completed");
    assert_eq!((comments(&h.project), comments(&project_b)), (1, 0));

    // B asks for the same call at the same revision: A's approval does not cover it,
    // and A's execution is not B's.
    let result = send_b("write hello");
    assert_eq!(result["reason"], "blocked_on_approval", "A's approval is not B's");
    assert_eq!(comments(&project_b), 0);
    let result = approve_b(&pending_request(&result));
    assert_eq!(result["reason"], "completed");
    assert_eq!((comments(&h.project), comments(&project_b)), (1, 1), "B's write really ran, on B");
    assert_eq!(results_b(), [("success".to_owned(), false)], "not skipped as already executed");

    // The other way round: B approves first, then A asks for the same call.
    let result = send_b("write second");
    approve_b(&pending_request(&result));
    assert_eq!(comments(&project_b), 2);
    let (result, _) = h.send("write second");
    assert_eq!(result["reason"], "blocked_on_approval", "B's approval is not A's");
    let (result, _) = h.approve(&pending_request(&result), true);
    assert_eq!(result["reason"], "completed");
    assert_eq!((comments(&h.project), comments(&project_b)), (2, 2));

    h.assert_replay_matches_live();
    assert_replay_matches_live(&h.t, &server_b, &session_b, &project_b);
}

#[test]
fn an_approval_is_used_up_by_the_execution_it_allowed() {
    let h = setup(
        vec![
            Reply::tool_calls(&[("f1", "flaky_write", r#"{"note":"x"}"#)]),
            Reply::text("it failed"),
            Reply::tool_calls(&[("f2", "flaky_write", r#"{"note":"x"}"#)]),
            Reply::text("saved"),
        ],
        json!({}),
    );
    // `flaky_write`: fails (having written nothing) the first time, then writes.
    let mut flaky = definition("flaky_write", Capability::Write, PermissionPolicy::Ask);
    flaky.read_only = false;
    flaky.concurrency = Concurrency::Exclusive;
    flaky.base_version = BaseVersionPolicy::ProjectRevision;
    let failed_once = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let handler: ToolHandler = Arc::new(move |ctx, input| {
        if !failed_once.swap(true, std::sync::atomic::Ordering::SeqCst) {
            return Err(ToolFailure::new("the disk was full"));
        }
        let comment = inkstone_core::project::comments::add(ctx.writer()?, ctx.project_id, input["note"].as_str().unwrap_or(""), None)?;
        Ok(json!({"commentId": comment.id}))
    });
    h.engine().register_tool(flaky, handler).unwrap();
    let (result, _) = h.send("write");
    let (result, _) = h.approve(&pending_request(&result), true);
    assert_eq!(result["reason"], "completed");
    assert_eq!(h.results()[0].1, "tool_error");
    // The same call, same input, same revision: the approval was used by the failed
    // execution, so it asks again.
    let (result, _) = h.send("try again");
    assert_eq!(result["reason"], "blocked_on_approval", "a used approval allows nothing more");
    assert_eq!(h.comments(), 0);
    let (result, _) = h.approve(&pending_request(&result), true);
    assert_eq!(result["reason"], "completed");
    assert_eq!(h.comments(), 1);
    h.assert_replay_matches_live();
}

#[test]
fn after_a_write_fails_the_later_writes_of_the_turn_are_not_run() {
    let h = setup(
        vec![
            Reply::tool_calls(&[("f1", "failing_write", r#"{"note":"a"}"#), ("w1", "test_write_note", r#"{"note":"b"}"#), ("r1", "read_versions", "{}")]),
            Reply::tool_calls(&[("w2", "test_write_note", r#"{"note":"c"}"#)]),
            Reply::text("stopped"),
        ],
        json!({}),
    );
    let mut failing = definition("failing_write", Capability::Write, PermissionPolicy::Ask);
    failing.read_only = false;
    failing.concurrency = Concurrency::Exclusive;
    h.engine().register_tool(failing, Arc::new(|_, _| Err(ToolFailure::new("the disk was full")))).unwrap();
    let (result, _) = h.send("write both");
    assert_eq!(result["reason"], "blocked_on_approval");
    let (result, _) = h.approve(&pending_request(&result), true);
    assert_eq!(result["reason"], "completed", "the later writes were not asked for");
    let results = h.results();
    let statuses: Vec<(&str, &str)> = results.iter().map(|(id, status, _)| (id.as_str(), status.as_str())).collect();
    assert_eq!(statuses, [("f1", "tool_error"), ("w1", "cancelled"), ("r1", "success"), ("w2", "cancelled")], "reads still run; writes, in this reply and the next, do not");
    assert!(results[1].2.contains("earlier write of this turn (`failing_write`, call f1) failed"), "{}", results[1].2);
    assert_eq!(h.comments(), 0);
    h.assert_replay_matches_live();
}

#[test]
fn request_permission_reports_the_decision_and_grants_nothing() {
    let h = setup(
        vec![
            Reply::tool_calls(&[("p1", "request_permission", r#"{"permission":"write notes without asking","reason":"faster"}"#)]),
            Reply::tool_calls(&[("w1", "test_write_note", r#"{"note":"x"}"#)]),
            Reply::text("unused"),
        ],
        json!({}),
    );
    let (result, _) = h.send("go");
    assert_eq!(result["reason"], "blocked_on_approval");
    let (result, _) = h.approve(&pending_request(&result), true);
    let (_, status, content) = h.results()[0].clone();
    assert_eq!(status, "success");
    let value: Value = serde_json::from_str(&content).unwrap();
    assert_eq!(value["decision"], "approved");
    assert_eq!(value["changed"], "nothing");
    assert!(value.get("granted").is_none(), "{content}");
    assert!(value["message"].as_str().unwrap().contains("Nothing else changed"));
    assert_eq!(result["reason"], "blocked_on_approval", "the write still asks");
    assert_eq!(h.comments(), 0);
    h.assert_replay_matches_live();
}

#[test]
fn the_model_sees_a_long_article_whole_and_reads_the_rest_of_a_larger_one() {
    // A Chinese article of several thousand characters: read_project_context shows all
    // of it (it used to be cut to 2,000 characters).
    let article = "春眠不觉晓，处处闻啼鸟。夜来风雨声，花落知多少。".repeat(250);
    let h = setup_with(vec![Reply::tool_calls(&[("c1", "read_project_context", "{}"), ("c2", "read_versions", "{}")]), Reply::text("ok")], json!({}), &article);
    h.t.ok("llmProfile.update", json!({"profile": "fake", "changes": {"name": "fake", "baseUrl": h.server.base_url(), "model": "fake-model", "contextWindow": 200000}}));
    h.send("read it");
    let content = h.results()[0].2.clone();
    let visible: Value = serde_json::from_str(&content).unwrap();
    assert_eq!(visible["source"].as_str(), Some(article.as_str()), "the whole {}-character article", article.chars().count());
    h.assert_replay_matches_live();

    // Larger than the log line: preview and reference, and read_stored_result reads on.
    let long = "长文".repeat(20_000);
    h.t.ok("project.update", json!({"projectId": h.project, "source": long}));
    h.server.push(Reply::tool_calls(&[("c3", "read_project_context", "{}")]));
    h.server.push(Reply::text("too long"));
    h.send("read it again");
    let visible: Value = serde_json::from_str(&h.results()[2].2).unwrap();
    assert_eq!(visible["truncated"], true);
    let reference = visible["ref"].as_str().unwrap().to_owned();
    let offset = visible["nextOffset"].as_u64().unwrap();
    let stored = h.engine().stored_result(&reference).unwrap().unwrap();
    let args = json!({"ref": reference, "offset": offset}).to_string();
    h.server.push(Reply::tool_calls(&[("c4", "read_stored_result", args.as_str())]));
    h.server.push(Reply::text("read on"));
    h.send("go on");
    let (_, status, content) = h.results()[3].clone();
    assert_eq!(status, "success");
    let slice: Value = serde_json::from_str(&content).unwrap_or_else(|_| panic!("a slice is seen inline: {content}"));
    let taken = slice["chars"].as_u64().unwrap() as usize;
    let expected: String = stored.chars().skip(offset as usize).take(taken).collect();
    assert_eq!(slice["text"].as_str(), Some(expected.as_str()));
    assert!(taken >= 10_000, "a large slice: {taken}");
    assert_eq!(slice["nextOffset"], json!(offset as usize + taken));
    assert_eq!(slice["totalChars"], json!(stored.chars().count()));
    for event in h.log() {
        assert!(serde_json::to_vec(&event).unwrap().len() <= inkstone_core::harness::MAX_EVENT_BYTES);
    }
    h.assert_replay_matches_live();
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"].as_array().map(|tools| tools.iter().map(|t| t["function"]["name"].as_str().unwrap().to_owned()).collect()).unwrap_or_default()
}

#[test]
fn a_profile_that_loads_tools_on_demand_sends_the_core_and_what_the_model_loaded() {
    use inkstone_core::harness::tools::{loaded_tools, CORE_TOOLS, LOAD_TOOLS};
    let h = setup(
        vec![
            Reply::tool_calls(&[("l1", LOAD_TOOLS, r#"{"names":["propose_tags","no_such_tool"]}"#)]),
            Reply::tool_calls(&[("l2", LOAD_TOOLS, r#"{"names":["nothing_here"]}"#)]),
            Reply::text("loaded"),
            Reply::text("next turn"),
        ],
        json!({}),
    );
    let profile = h.t.ok("llmProfile.list", json!({}))["profiles"][0].clone();
    assert_eq!(profile["toolLoading"], "all", "the default sends every tool");
    h.t.ok("llmProfile.update", json!({"profile": "fake", "changes": {"name": "fake", "baseUrl": h.server.base_url(), "model": "fake-model", "toolLoading": "onDemand"}}));
    let (result, _) = h.send("给这篇加标签");
    assert_eq!(result["reason"], "completed");
    let (result, _) = h.send("再看看");
    assert_eq!(result["reason"], "completed");
    let requests = h.server.chat_requests();
    assert_eq!(requests.len(), 4);

    // First call: the core tools and load_tools, whose description lists the rest.
    let first = tool_names(&requests[0].body);
    let mut expected: Vec<String> = CORE_TOOLS.iter().map(|s| (*s).to_owned()).collect();
    expected.push(LOAD_TOOLS.to_owned());
    let mut sorted = first.clone();
    sorted.sort();
    expected.sort();
    assert_eq!(sorted, expected);
    let load =
        |body: &Value| body["tools"].as_array().unwrap().iter().find(|t| t["function"]["name"] == LOAD_TOOLS).map(|t| t["function"]["description"].as_str().unwrap().to_owned());
    let listed = load(&requests[0].body).unwrap();
    assert!(listed.contains("- propose_tags: ") && listed.contains("- update_project_metadata: "), "{listed}");
    assert!(!listed.contains("- propose_source_patch: "), "a core tool is not listed to load");
    let all: usize = h.engine().tool_definitions().unwrap().len();
    assert!(first.len() < all / 2, "{} of {all} tools sent", first.len());

    // The load: propose_tags is known, the other is reported unknown; a load of only
    // unknown names fails and changes nothing.
    let results = h.results();
    assert_eq!(results[0].1, "success");
    assert!(results[0].2.contains("propose_tags") && results[0].2.contains("no_such_tool"), "{}", results[0].2);
    assert_eq!(results[1].1, "tool_error", "{results:?}");
    assert!(results[1].2.contains("`nothing_here`"), "{}", results[1].2);

    // From the next call on, propose_tags is sent in full and no longer listed; it
    // stays loaded into the next turn (it is derived from the conversation).
    for request in &requests[1..] {
        let names = tool_names(&request.body);
        assert!(names.contains(&"propose_tags".to_owned()), "{names:?}");
        assert_eq!(names.len(), first.len() + 1);
        assert!(!load(&request.body).unwrap().contains("- propose_tags: "));
    }
    // Smaller: the first request's tool definitions against every tool's.
    let sent = requests[0].body["tools"].to_string().len();
    let full: usize = h
        .engine()
        .tool_definitions()
        .unwrap()
        .iter()
        .filter(|d| d.name != LOAD_TOOLS)
        .map(|d| json!({"type": "function", "function": {"name": d.name, "description": d.prompt, "parameters": d.input_schema}}).to_string().len() + 1)
        .sum();
    assert!(sent * 2 < full, "on demand sends {sent} bytes of tool definitions, all would be {full}");

    // A replay of the log gives the same messages, so the same tools.
    h.assert_replay_matches_live();
    let log = h.log();
    let replayed = replay(log.iter());
    assert!(loaded_tools(replayed.messages()).contains("propose_tags"));

    // Back to every tool: no load_tools in the request.
    h.t.ok("llmProfile.update", json!({"profile": "fake", "changes": {"name": "fake", "baseUrl": h.server.base_url(), "model": "fake-model"}}));
    h.server.push(Reply::text("all"));
    let (result, _) = h.send("全部");
    assert_eq!(result["reason"], "completed");
    let last = tool_names(&h.server.chat_requests()[4].body);
    assert!(!last.contains(&LOAD_TOOLS.to_owned()));
    assert_eq!(last.len(), all - 1);
}
