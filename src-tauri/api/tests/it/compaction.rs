//! Long sessions: compaction against the scripted model server over real HTTP. A
//! 200-turn session with 40 planted instructions compacts several times and keeps
//! them verbatim; replay equals what the model was sent after every compaction; a
//! session at 100% of its window compacts; three failed summaries fall back to a
//! truncation without a loop; CONTEXT_TOO_LONG compacts once and retries once; a
//! kill -9 during a compaction leaves a consistent, resumable log.

use std::sync::Arc;
use std::time::Duration;

use inkstone_api::api::{dto, StreamEvent};
use inkstone_api::harness::compaction::COMPACTION_PROMPT_HEAD;
use inkstone_api::harness::{replay, Event, EventBody};
use inkstone_api::llm::Role;
use inkstone_api::{Engine, EngineConfig, ErrorCode};
use inkstone_test_support::model_server::{ModelServer, RecordedRequest, Reply, Responder, Usage};
use inkstone_test_support::TestEngine;
use serde_json::{json, Value};

use super::harness::{stream, wire_messages};

fn is_compaction(request: &RecordedRequest) -> bool {
    request.body["messages"][0]["content"].as_str().is_some_and(|s| s.starts_with(COMPACTION_PROMPT_HEAD))
}

fn summary_json(n: usize) -> String {
    json!({"summary": format!("Summary {n}: the person and the assistant drafted a spring tea article."), "user_intent": "A spring tea article",
        "accepted_changes": [], "rejected_directions": [{"direction": "a clickbait title", "reason": "too loud"}], "open_tasks": ["finish section 3"],
        "active_artifacts": ["wechat draft"], "source_refs": [], "next_step_hint": "continue section 3"})
    .to_string()
}

/// The usage each summarising call reports.
const SUMMARY_INPUT: u64 = 900;
const SUMMARY_OUTPUT: u64 = 64;

/// A fallback that answers compaction requests with a valid summary (or `bad` text)
/// and everything else with a short reply.
fn responder(bad_summaries: bool) -> Reply {
    let counter = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    Reply::Computed(Responder(Arc::new(move |body: &Value| {
        let system = body["messages"][0]["content"].as_str().unwrap_or("");
        if system.starts_with(COMPACTION_PROMPT_HEAD) {
            if bad_summaries {
                // JSON that broke off: neither a structured summary nor prose.
                return Reply::text("{\"summary\": \"The person and the assistant drafted");
            }
            let n = counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            return Reply::text_with(&summary_json(n), 64, Usage::Fixed { input: SUMMARY_INPUT, output: SUMMARY_OUTPUT });
        }
        // Usage as a server that counts the tool schemas too (about four characters a
        // token of the JSON), so the calibration learns a ratio near 1.
        let input = (body["messages"].to_string().chars().count() + body["tools"].to_string().chars().count()) as u64 / 4;
        Reply::text_with("Noted; the draft continues with the tea harvest in the hills.", 16, Usage::Fixed { input, output: 12 })
    })))
}

struct C {
    t: TestEngine,
    server: ModelServer,
    session: String,
}

fn setup(window: u32) -> C {
    let server = ModelServer::start(vec![]);
    server.set_fallback(responder(false));
    let t = TestEngine::new();
    t.ok("llmProfile.create", json!({"name": "fake", "baseUrl": server.base_url(), "model": "fake-model", "contextWindow": window}));
    let project = t.ok("project.create", json!({"title": "春茶", "source": "# 春茶\n\nSpring tea from the hills."}))["id"].as_str().unwrap().to_owned();
    let session = t.ok("session.create", json!({"projectId": project, "limits": {"maxOutputTokens": 256}}))["session"]["id"].as_str().unwrap().to_owned();
    C { t, server, session }
}

impl C {
    fn send(&self, text: &str) -> Value {
        let (result, _) = stream(&self.t.engine, "session.submit", json!({"sessionId": self.session, "text": text}));
        result.unwrap_or_else(|e| panic!("submit failed: {e:?}"))
    }
    fn log(&self) -> Vec<Event> {
        self.t.engine.session_events(&self.session).unwrap()
    }
    fn set_window(&self, window: u32) {
        self.t.ok("llmProfile.update", json!({"profile": "fake", "changes": {"name": "fake", "baseUrl": self.server.base_url(), "model": "fake-model", "contextWindow": window}}));
    }
    /// The tokens of the fixed part of a drafting request (system message, context
    /// layers and tool specs) as the scripted server reports them, read from the
    /// first request: windows in these tests are set relative to it, so a new tool
    /// does not silently turn a roomy window into a full one. The windows set from it
    /// are small, so their requests carry the compact tool set (and `load_tools`
    /// listing the rest by name): that set is what is counted.
    fn fixed_tokens(&self) -> u32 {
        use inkstone_api::harness::tools::{COMPACT_TOOLS, LOAD_TOOLS};
        let first = self.server.chat_requests().into_iter().find(|r| !is_compaction(r)).expect("one drafting request was sent");
        let definitions = self.t.engine.tool_definitions().unwrap();
        let compact: Vec<Value> = definitions
            .iter()
            .filter(|d| COMPACT_TOOLS.contains(&d.name.as_str()) || d.name == LOAD_TOOLS)
            .map(|d| json!({"type": "function", "function": {"name": d.name, "description": d.prompt, "parameters": d.input_schema}}))
            .collect();
        let listing: usize = definitions.iter().map(|d| d.name.len() + 2).sum();
        ((first.body["messages"].to_string().chars().count() + Value::Array(compact).to_string().chars().count() + listing) / 4) as u32
    }
    /// The first drafting request's tokens with every tool it carried (a 32k window
    /// carries them all).
    fn first_request_tokens(&self) -> u32 {
        let first = self.server.chat_requests().into_iter().find(|r| !is_compaction(r)).expect("one drafting request was sent");
        ((first.body["messages"].to_string().chars().count() + first.body["tools"].to_string().chars().count()) / 4) as u32
    }
    fn boundaries(&self) -> Vec<Event> {
        self.log().into_iter().filter(|e| matches!(e.body, EventBody::CompactBoundary { .. })).collect()
    }
}

/// Replay equals what the model was sent, call by call (compaction requests aside):
/// the messages and their hash, the system message is the stored snapshot, its
/// summary layer is the replayed summary and its pinned layer holds every replayed
/// pin verbatim. Returns the number of drafting calls checked.
fn assert_replay_matches_sent(t: &TestEngine, server: &ModelServer, session: &str) -> usize {
    let log = t.engine.session_events(session).unwrap();
    let sequences: Vec<u64> = log.iter().map(|e| e.sequence).collect();
    assert_eq!(sequences, (1..=log.len() as u64).collect::<Vec<_>>(), "the log has no gaps");
    let requests: Vec<RecordedRequest> = server.chat_requests().into_iter().filter(|r| !is_compaction(r)).collect();
    let calls: Vec<(usize, &Event)> = log.iter().enumerate().filter(|(_, e)| matches!(e.body, EventBody::ModelCallStarted { .. })).collect();
    assert_eq!(calls.len(), requests.len(), "one ModelCallStarted per drafting request");
    // Fold once, checking at each call: the prefix's state is the fold so far.
    let mut state = inkstone_api::harness::SessionState::default();
    let mut next = 0;
    for ((index, event), request) in calls.iter().zip(&requests) {
        while next < *index {
            state.apply(&log[next]);
            next += 1;
        }
        let EventBody::ModelCallStarted { messages_hash, message_count, .. } = &event.body else { unreachable!() };
        assert_eq!(&state.messages_hash(), messages_hash, "hash of the replayed prefix");
        assert_eq!(state.messages.len(), *message_count as usize);
        let sent = wire_messages(&request.body);
        assert_eq!(sent[0].role, Role::System);
        let snapshot = t.engine.context_snapshot(event.context_snapshot_id.as_deref().unwrap()).unwrap().unwrap();
        assert_eq!(*sent[0].content, snapshot.system, "the system message is the stored snapshot");
        assert_eq!(&sent[1..], &state.messages[..], "replayed messages equal the sent ones");
        let summary_layer = snapshot.layers.iter().find(|l| l.name == "session_summary").unwrap();
        assert_eq!(summary_layer.text, state.summary, "the summary layer is the replayed summary");
        let pinned = &snapshot.layers[0].text;
        for pin in &state.pins {
            assert!(pinned.contains(&pin.text), "pin {} is in the pinned layer", pin.id);
        }
    }
    server.assert_tool_results_paired();
    let view = t.ok("session.get", json!({"sessionId": session}));
    assert_eq!(view["messagesHash"], json!(replay(log.iter()).messages_hash()));
    calls.len()
}

#[test]
fn a_200_turn_session_compacts_repeatedly_and_keeps_every_planted_instruction_verbatim() {
    let c = setup(32_000);
    let mut facts = Vec::new();
    for turn in 0..200 {
        if turn == 1 {
            // Room for about 4,500 tokens of conversation, summary and pins beside the
            // fixed part; the 40 pinned facts alone take about 1,000.
            c.set_window(c.fixed_tokens() + 4_500);
        }
        let text = if turn % 5 == 0 {
            let fact = format!("Remember: fact {} — the tasting note for batch {} is '{}'.", turn / 5, 1000 + turn, ["floral", "toasty", "grassy", "honeyed"][turn % 4]);
            facts.push(fact.clone());
            fact
        } else {
            format!(
                "Paragraph {turn}: the pickers climb at dawn, the leaves are withered in the shade, then rolled by hand and dried over charcoal. {}",
                "Mist sits on the terraces. ".repeat(4)
            )
        };
        let result = c.send(&text);
        assert_eq!(result["reason"], "completed", "turn {turn}: {result}");
    }
    assert_eq!(facts.len(), 40);
    let boundaries = c.boundaries();
    assert!((3..=40).contains(&boundaries.len()), "compacted {} times: more than three, and no thrashing", boundaries.len());
    assert!(boundaries.iter().all(|b| matches!(&b.body, EventBody::CompactBoundary { mode: inkstone_api::harness::CompactionMode::Summarized, .. })));
    // The last drafting request: its whole model-visible context.
    let last = c.server.chat_requests().into_iter().rev().find(|r| !is_compaction(r)).unwrap();
    let visible: String = wire_messages(&last.body).iter().map(|m| m.content.clone()).collect::<Vec<_>>().join("\n");
    let kept = facts.iter().filter(|f| visible.contains(f.as_str())).count();
    let share = kept as f64 * 100.0 / facts.len() as f64;
    println!("compactions: {}; planted facts verbatim in the last request: {kept}/{} ({share:.1}%)", boundaries.len(), facts.len());
    assert!(share >= 95.0, "{share}% of the planted facts survived");
    let calls = assert_replay_matches_sent(&c.t, &c.server, &c.session);
    assert_eq!(calls, 200);
    // No compaction summary ever carried a pinned fact: they never went through the model.
    let view = c.t.ok("session.context", json!({"sessionId": c.session}));
    assert_eq!(view["compactions"], json!(boundaries.len()));
    assert!(view["calibrationSamples"].as_u64().unwrap() > 0, "the estimate is calibrated against reported usage: {view}");
    let pins = c.t.ok("session.pins", json!({"sessionId": c.session}));
    assert!(pins["pins"].as_array().unwrap().iter().all(|p| p["source"] == "instruction"));
    assert!(pins["pinnedTokens"].as_u64().unwrap() >= pins["pinsTokens"].as_u64().unwrap());
    // The panel was warned before each automatic compaction.
    assert!(c.log().iter().any(|e| matches!(e.body, EventBody::ContextWarning { .. })));
}

#[test]
fn a_stored_session_at_100_percent_compacts_without_being_sent_first() {
    let c = setup(32_000);
    for turn in 0..20 {
        c.send(&format!("Section {turn}: {}", "The harvest begins when the buds open on the upper terraces. ".repeat(20)));
    }
    let before = c.server.chat_requests().len();
    let used_before = c.t.ok("session.get", json!({"sessionId": c.session}));
    // The window shrinks under the stored session: it is now well past 100%.
    let window = c.first_request_tokens() + 1_200;
    c.set_window(window);
    let estimate: u64 = c
        .log()
        .iter()
        .rev()
        .find_map(|e| match &e.body {
            EventBody::ContextAssembled { estimated_tokens, .. } => Some(*estimated_tokens),
            _ => None,
        })
        .unwrap();
    assert!(estimate > u64::from(window), "the session is over the new window: {estimate}");
    let (result, events) = stream(&c.t.engine, "session.compact", json!({"sessionId": c.session}));
    let result = result.unwrap();
    assert_eq!(result["compacted"], true, "{result}");
    assert_eq!(result["mode"], "summarized");
    assert!(events.iter().any(|e| e.kind_name() == "compact_boundary"), "the boundary streams to the panel");
    let compaction_requests: Vec<RecordedRequest> = c.server.chat_requests()[before..].to_vec();
    assert!(compaction_requests.len() > 1, "summarised in chunks that fit");
    // The summarising calls count against the session's budget like any other call.
    let used_after = c.t.ok("session.get", json!({"sessionId": c.session}));
    let calls = compaction_requests.len() as u64;
    let delta = |field: &str| used_after[field].as_u64().unwrap() - used_before[field].as_u64().unwrap();
    assert_eq!((delta("inputTokens"), delta("outputTokens")), (calls * SUMMARY_INPUT, calls * SUMMARY_OUTPUT), "the session's tokens include its compactions");
    for request in &compaction_requests {
        assert!(is_compaction(request));
        let chars: usize = request.body["messages"].as_array().unwrap().iter().map(|m| m["content"].as_str().unwrap().chars().count()).sum();
        let reserve = request.body["max_tokens"].as_u64().or(request.body["max_completion_tokens"].as_u64()).unwrap() as usize;
        assert!(chars / 4 + reserve < window as usize, "each summarising request fits the window with its reply ({chars} characters, {reserve} reserved)");
    }
    // And the session goes on within its window.
    assert_eq!(c.send("Go on with the next section.")["reason"], "completed");
    assert_replay_matches_sent(&c.t, &c.server, &c.session);
}

/// A server that takes a schema, with a model that answers it with JSON lacking the
/// summary (SmolLM2 on llama.cpp does): the same chunk is asked again for prose, and
/// that prose is the summary; the attempt does not count as failed.
#[test]
fn json_without_a_summary_is_asked_again_as_prose_before_it_counts_as_failed() {
    let c = setup(32_000);
    let schema_profile = |window: u32| {
        json!({"profile": "fake", "changes": {"name": "fake", "baseUrl": c.server.base_url(), "model": "fake-model", "contextWindow": window,
            "supportsJsonSchema": true, "schemaForm": "responseFormat"}})
    };
    c.t.ok("llmProfile.update", schema_profile(32_000));
    for turn in 0..8 {
        c.send(&format!("Section {turn}: {}", "The harvest begins when the buds open on the upper terraces. ".repeat(20)));
    }
    c.server.set_fallback(Reply::Computed(Responder(Arc::new(|body: &Value| {
        let system = body["messages"][0]["content"].as_str().unwrap_or("");
        if system.starts_with(COMPACTION_PROMPT_HEAD) {
            return match body.get("response_format") {
                Some(_) => Reply::text(r#"{"notes": "tea", "open_tasks": []}"#),
                None => Reply::text("The person drafted eight sections about the spring harvest on the upper terraces."),
            };
        }
        Reply::text("Noted; the draft continues.")
    }))));
    c.t.ok("llmProfile.update", schema_profile(c.fixed_tokens() + 700));
    let before = c.server.chat_requests().len();
    let result = c.send("Continue.");
    assert_eq!(result["reason"], "completed");
    let compactions: Vec<bool> = c.server.chat_requests()[before..].iter().filter(|r| is_compaction(r)).map(|r| r.body.get("response_format").is_some()).collect();
    assert!(compactions.len() >= 2 && compactions[0] && !compactions[1], "the schema first, then the same chunk as prose: {compactions:?}");
    assert!(!c.log().iter().any(|e| matches!(e.body, EventBody::CompactionFailed { .. })), "the prose retry is not a failure");
    let boundary = c.boundaries().pop().expect("the session compacted");
    let EventBody::CompactBoundary { mode, note, summary_text, .. } = &boundary.body else { unreachable!() };
    assert_eq!(*mode, inkstone_api::harness::CompactionMode::Summarized);
    assert!(note.contains("plain text"), "{note}");
    assert!(summary_text.contains("eight sections about the spring harvest"), "{summary_text}");
}

#[test]
fn three_failed_summaries_fall_back_to_truncation_once_and_the_cooldown_only_truncates() {
    let c = setup(32_000);
    c.t.ok("session.pin", json!({"sessionId": c.session, "text": "The brand name is always written 山茶社."}));
    for turn in 0..8 {
        c.send(&format!("Section {turn}: {}", "The harvest begins when the buds open on the upper terraces. ".repeat(20)));
        if turn == 1 {
            c.send("Remember: the launch date is 12 March.");
        }
    }
    c.send(&format!("Section 9: {}", "Pickers sing on the terraces. ".repeat(10)));
    c.server.set_fallback(responder(true));
    c.set_window(c.fixed_tokens() + 700);
    let before = c.server.chat_requests().len();
    let result = c.send("Continue.");
    let end = c.log().into_iter().rev().find(|e| e.kind_name() == "turn_ended").unwrap();
    assert_eq!(result["reason"], "completed", "{:?} {}", end.body, c.t.ok("session.context", json!({"sessionId": c.session})));
    let requests = &c.server.chat_requests()[before..];
    let summarising = requests.iter().filter(|r| is_compaction(r)).count();
    assert_eq!((summarising, requests.len() - summarising), (3, 1), "three attempts, then the truncation, then the one drafting call: no loop");
    let log = c.log();
    let failures: Vec<u32> = log
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::CompactionFailed { consecutive, .. } => Some(*consecutive),
            _ => None,
        })
        .collect();
    assert_eq!(failures, [1, 2, 3]);
    let boundary = c.boundaries().pop().unwrap();
    let EventBody::CompactBoundary { mode, note, summary_text, pinned_instructions, .. } = &boundary.body else { unreachable!() };
    assert_eq!(*mode, inkstone_api::harness::CompactionMode::Truncated);
    assert!(note.contains("removed without a summary"), "{note}");
    // The note is bounded by the summary layer's share of the room the window leaves
    // beside the fixed part (a fifth of it), and quotes the latest dropped messages.
    let view = c.t.ok("session.context", json!({"sessionId": c.session}));
    let summary_tokens = inkstone_api::llm::estimate_tokens(summary_text);
    let free = view["inputBudgetTokens"].as_u64().unwrap() - view["fixedTokens"].as_u64().unwrap() + summary_tokens;
    assert!(summary_tokens * 4 <= free, "{summary_tokens} of {free}: {summary_text}");
    assert!(summary_text.contains("- Section 9: Pickers sing"), "{summary_text}");
    assert_eq!(pinned_instructions, &["Remember: the launch date is 12 March.".to_owned()]);
    let last = c.server.chat_requests().into_iter().rev().find(|r| !is_compaction(r)).unwrap();
    let system = wire_messages(&last.body)[0].content.clone();
    assert!(system.contains("The brand name is always written 山茶社.") && system.contains("Remember: the launch date is 12 March."), "pins survive a truncation verbatim");
    // During the cooldown, going over again only truncates: no summarising request.
    let view = c.t.ok("session.context", json!({"sessionId": c.session}));
    assert_eq!(view["inCooldown"], true);
    let before = c.server.chat_requests().len();
    for turn in 0..2 {
        c.send(&format!("More {turn}: {}", "Charcoal glows under the bamboo trays. ".repeat(25)));
    }
    assert!(c.server.chat_requests()[before..].iter().all(|r| !is_compaction(r)), "the cooldown does not call the summariser");
    assert_replay_matches_sent(&c.t, &c.server, &c.session);
}

#[test]
fn context_too_long_from_the_server_compacts_once_and_retries_once() {
    let c = setup(32_000);
    for turn in 0..4 {
        c.send(&format!("Section {turn}: {}", "The harvest begins when the buds open. ".repeat(10)));
    }
    let too_long = json!({"error": {"message": "This model's maximum context length is 4096 tokens.", "type": "invalid_request_error", "code": "context_length_exceeded"}});
    c.server.push(Reply::error(400, too_long.clone()));
    let before = c.server.chat_requests().len();
    let result = c.send("Next section please.");
    assert_eq!(result["reason"], "completed", "{result}");
    let requests = &c.server.chat_requests()[before..];
    let kinds: Vec<bool> = requests.iter().map(is_compaction).collect();
    assert_eq!(kinds, [false, true, false], "the call, one compaction, one retry");
    let boundary = c.boundaries().pop().unwrap();
    assert!(matches!(boundary.body, EventBody::CompactBoundary { trigger: inkstone_api::harness::CompactionTrigger::Reactive, .. }));
    // A second refusal after the retry ends the turn: still one compaction, one retry.
    let refusal = too_long.clone();
    c.server.set_fallback(Reply::Computed(Responder(Arc::new(move |body: &Value| {
        if body["messages"][0]["content"].as_str().unwrap_or("").starts_with(COMPACTION_PROMPT_HEAD) {
            Reply::text(&summary_json(9))
        } else {
            Reply::error(400, refusal.clone())
        }
    }))));
    let before = c.server.chat_requests().len();
    let result = c.send("And the next.");
    assert_eq!(result["reason"], "context_too_long", "{result}");
    let kinds: Vec<bool> = c.server.chat_requests()[before..].iter().map(is_compaction).collect();
    assert_eq!(kinds, [false, true, false]);
    let _ = too_long;
    assert_replay_matches_sent(&c.t, &c.server, &c.session);
}

#[test]
fn pins_are_listed_counted_sent_verbatim_and_removable_and_thresholds_are_checked() {
    let c = setup(32_000);
    let pins = c.t.ok("session.pin", json!({"sessionId": c.session, "text": "Outline: 1. Dawn 2. Withering 3. Rolling"}));
    assert_eq!(pins["pins"][0]["source"], "person");
    assert!(pins["pinnedTokens"].as_u64().unwrap() > pins["pinsTokens"].as_u64().unwrap());
    assert_eq!(pins["contextWindow"], 32_000);
    c.send("Hello");
    let system = wire_messages(&c.server.chat_requests().last().unwrap().body)[0].content.clone();
    assert!(system.contains("- Outline: 1. Dawn 2. Withering 3. Rolling\n"));
    let id = pins["pins"][0]["id"].as_str().unwrap();
    let pins = c.t.ok("session.unpin", json!({"sessionId": c.session, "pinId": id}));
    assert_eq!(pins["pins"], json!([]));
    assert_eq!(c.t.engine.call("session.unpin", json!({"sessionId": c.session, "pinId": id})).unwrap_err().code, ErrorCode::NotFound);
    assert_eq!(c.t.engine.call("session.pin", json!({"sessionId": c.session, "text": " "})).unwrap_err().code, ErrorCode::Validation);
    // Thresholds: 40–95% or manual, per session and per profile.
    let error = c.t.engine.call("session.setCompaction", json!({"sessionId": c.session, "threshold": {"mode": "auto", "percent": 30}})).unwrap_err();
    assert_eq!(error.code, ErrorCode::Validation);
    let view = c.t.ok("llmProfile.setCompaction", json!({"profile": "fake", "threshold": {"mode": "auto", "percent": 60}}));
    assert_eq!(view["threshold"], json!({"mode": "auto", "percent": 60}));
    let view = c.t.ok("session.context", json!({"sessionId": c.session}));
    assert_eq!(view["threshold"], json!({"mode": "auto", "percent": 60}), "the profile's threshold applies");
    let view = c.t.ok("session.setCompaction", json!({"sessionId": c.session, "threshold": {"mode": "manual"}}));
    assert_eq!(view["threshold"], json!({"mode": "manual"}), "the session's overrides it");
    assert_eq!(view["warnPercent"], 70);
    // Manual only: past the threshold the panel is warned, nothing is compacted.
    c.set_window(c.fixed_tokens() + 500);
    for turn in 0..3 {
        c.send(&format!("Short {turn}: {}", "Tea. ".repeat(20)));
    }
    assert!(c.boundaries().is_empty(), "manual only never compacts by itself while the request fits");
    assert!(c.log().iter().any(|e| matches!(e.body, EventBody::ContextWarning { compact_at_percent: None, .. })));
    // A manual compaction with nothing older than the latest turn reports so.
    let c2 = setup(32_000);
    let (result, _) = stream(&c2.t.engine, "session.compact", json!({"sessionId": c2.session}));
    assert_eq!(result.unwrap()["compacted"], false);
    assert_replay_matches_sent(&c.t, &c.server, &c.session);
}

const CRASH_DIR: &str = "INKSTONE_COMPACTION_CRASH_DIR";
const CRASH_URL: &str = "INKSTONE_COMPACTION_CRASH_URL";

/// The child of the kill test: three turns, then a manual compaction whose summarising
/// call stalls; it prints `COMPACTING <session>` once the compaction started.
#[test]
fn compaction_crash_child() {
    let (Ok(dir), Ok(url)) = (std::env::var(CRASH_DIR), std::env::var(CRASH_URL)) else { return };
    let mut config = EngineConfig::new(&dir, "compaction crash child");
    config.group_commit_millis = 20;
    let engine = Engine::open(config).unwrap();
    engine.call("llmProfile.create", json!({"name": "fake", "baseUrl": url, "model": "fake-model", "contextWindow": 32000})).unwrap();
    let project = engine.call("project.create", json!({"title": "t", "source": "s"})).unwrap()["id"].as_str().unwrap().to_owned();
    let session = engine.call("session.create", json!({"projectId": project})).unwrap()["session"]["id"].as_str().unwrap().to_owned();
    for turn in 0..3 {
        // Long enough that compacting them makes the conversation shorter (a
        // compaction never grows it).
        engine.call("session.submit", json!({"sessionId": session, "text": format!("Section {turn}: {}", "The harvest begins when the buds open. ".repeat(10))})).unwrap();
    }
    let _ = engine.call_stream("session.compact", json!({"sessionId": session}), &mut |event| {
        if let StreamEvent::Harness(event) = event {
            if matches!(event.body, dto::EventBody::CompactionStarted { .. }) {
                println!("COMPACTING {session}");
            }
        }
    });
    std::thread::sleep(Duration::from_secs(60));
}

#[test]
fn kill_9_during_a_compaction_leaves_a_consistent_resumable_log() {
    use std::io::{BufRead, BufReader};
    let server = ModelServer::start(vec![Reply::text("one"), Reply::text("two"), Reply::text("three"), Reply::Stall { content: String::new() }]);
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let mut child = std::process::Command::new(exe)
        .args(["--exact", "compaction::compaction_crash_child", "--nocapture", "--test-threads=1"])
        .env(CRASH_DIR, dir.path())
        .env(CRASH_URL, server.base_url())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut session = String::new();
    for line in BufReader::new(stdout).lines() {
        let line = line.unwrap();
        if let Some(at) = line.find("COMPACTING ") {
            session = line[at + "COMPACTING ".len()..].trim().to_owned();
            break;
        }
    }
    // Wait until the summarising request reached the server, then SIGKILL.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while server.chat_requests().len() < 4 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(!session.is_empty(), "the child started compacting");
    assert!(is_compaction(&server.chat_requests()[3]));

    server.set_fallback(responder(false));
    let engine = Engine::open(EngineConfig::new(dir.path(), "test")).unwrap();
    let view = engine.call("session.get", json!({"sessionId": session})).unwrap();
    let log = engine.session_events(&session).unwrap();
    let sequences: Vec<u64> = log.iter().map(|e| e.sequence).collect();
    assert_eq!(sequences, (1..=log.len() as u64).collect::<Vec<_>>(), "no gaps");
    let tail: Vec<&str> = log.iter().rev().take(2).map(|e| e.kind_name()).collect();
    assert_eq!(tail, ["compaction_failed", "compaction_started"], "the open compaction is closed as failed on reopening");
    assert!(!log.iter().any(|e| matches!(e.body, EventBody::CompactBoundary { .. })), "nothing was replaced");
    assert_eq!(replay(log.iter()).messages_hash(), view["messagesHash"].as_str().unwrap());
    assert_eq!(view["messageCount"], 6, "the conversation is whole");
    // Resumable: compacting again works, and so does the next turn.
    let (result, _) = stream(&engine, "session.compact", json!({"sessionId": session}));
    assert_eq!(result.unwrap()["compacted"], true);
    let (result, _) = stream(&engine, "session.submit", json!({"sessionId": session, "text": "Go on."}));
    assert_eq!(result.unwrap()["reason"], "completed");
    let context = engine.call("session.context", json!({"sessionId": session})).unwrap();
    assert_eq!(context["consecutiveFailures"], 0, "a crash is not counted as a failed summary");
}
