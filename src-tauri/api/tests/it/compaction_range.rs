//! Compaction that cannot deadlock, over the whole range of windows,
//! against a scripted server on loopback posing as a small-window local model: it
//! counts a request's tokens as the engine estimates them and refuses one over its
//! window with llama.cpp's own error, answers summarising requests as told (JSON,
//! plain text of any length, or a failure) and everything else with a short answer.
//!
//! - The story: a 6,000-token window, tools on demand, 600-character pasted
//!   passages and plain-text summaries; 30 turns, every one answered.
//! - The property: windows from 2,048 to 128k tokens, messages up to the window,
//!   pins, manual compactions and summarising that fails or succeeds. Every turn
//!   proceeds or ends with a specific reason and a next step; after any refusal the
//!   step the person was told (unpin, a shorter message) lets the next turn proceed.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use inkstone_api::harness::compaction::COMPACTION_PROMPT_HEAD;
use inkstone_api::harness::{CompactionMode, EventBody};
use inkstone_api::llm::estimate_tokens;
use inkstone_api::ErrorCode;
use inkstone_test_support::model_server::{ModelServer, Reply, Responder, Usage};
use inkstone_test_support::TestEngine;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::{json, Value};

use super::harness::stream;

/// How the scripted model answers a summarising request.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Summaries {
    /// A valid structured summary.
    Json,
    /// Prose of this many sentences (no JSON at all), as small local models write.
    Plain(usize),
    /// An empty answer, JSON that broke off, or a server error, in turn.
    Fail,
}

/// The tokens of a request as the scripted server counts them: as the engine
/// estimates them (four per message, its text; each tool's description and schema).
fn prompt_tokens(body: &Value) -> u64 {
    let messages: u64 = body["messages"]
        .as_array()
        .map(|ms| {
            ms.iter()
                .map(|m| {
                    let calls: u64 = m["tool_calls"]
                        .as_array()
                        .map(|cs| {
                            cs.iter()
                                .map(|c| estimate_tokens(c["function"]["name"].as_str().unwrap_or("")) + estimate_tokens(c["function"]["arguments"].as_str().unwrap_or("")))
                                .sum()
                        })
                        .unwrap_or(0);
                    4 + estimate_tokens(m["content"].as_str().unwrap_or("")) + calls
                })
                .sum()
        })
        .unwrap_or(0);
    let tools: u64 = body["tools"]
        .as_array()
        .map(|ts| ts.iter().map(|t| estimate_tokens(t["function"]["description"].as_str().unwrap_or("")) + estimate_tokens(&t["function"]["parameters"].to_string())).sum())
        .unwrap_or(0);
    messages + tools
}

fn is_compaction(body: &Value) -> bool {
    body["messages"][0]["content"].as_str().is_some_and(|s| s.starts_with(COMPACTION_PROMPT_HEAD))
}

/// A scripted llama.cpp-like server with a small window.
struct SmallModel {
    server: ModelServer,
    summaries: Arc<Mutex<Summaries>>,
    /// Requests the server refused as longer than its window.
    refused: Arc<AtomicUsize>,
    /// Summarising requests answered.
    summarising: Arc<AtomicUsize>,
    /// The longest prompt it was sent, in its tokens.
    longest: Arc<AtomicU64>,
}

impl SmallModel {
    /// `factor`: how many of its tokens the server counts for each the engine
    /// estimates (a tokenizer that splits Chinese finer, or coarser).
    fn start(window: u64, summaries: Summaries, factor: f64) -> SmallModel {
        let server = ModelServer::start(vec![]);
        let summaries = Arc::new(Mutex::new(summaries));
        let refused = Arc::new(AtomicUsize::new(0));
        let summarising = Arc::new(AtomicUsize::new(0));
        let longest = Arc::new(AtomicU64::new(0));
        let (s, r, n, l) = (summaries.clone(), refused.clone(), summarising.clone(), longest.clone());
        server.set_fallback(Reply::Computed(Responder(Arc::new(move |body: &Value| {
            let tokens = (prompt_tokens(body) as f64 * factor).ceil() as u64;
            l.fetch_max(tokens, Ordering::SeqCst);
            if tokens > window {
                r.fetch_add(1, Ordering::SeqCst);
                let message = format!("request ({tokens} tokens) exceeds the available context size ({window} tokens), try increasing it");
                return Reply::error(400, json!({"error": {"code": 400, "message": message, "type": "exceed_context_size_error", "n_prompt_tokens": tokens, "n_ctx": window}}));
            }
            if is_compaction(body) {
                let count = n.fetch_add(1, Ordering::SeqCst);
                let mode = *s.lock().unwrap();
                return match mode {
                    Summaries::Json => Reply::text_with(
                        &json!({"summary": format!("Summary {count}: the person pasted passages about the spring tea harvest; the assistant noted each."), "user_intent": "A spring tea article",
                            "accepted_changes": [], "rejected_directions": [], "open_tasks": ["finish the article"], "active_artifacts": [], "source_refs": [], "next_step_hint": "go on"})
                        .to_string(),
                        64,
                        Usage::Fixed { input: tokens, output: 60 },
                    ),
                    Summaries::Plain(sentences) => {
                        let prose = format!("摘要 {count}：作者贴了几段关于春茶采摘的文字，助手逐段确认。{}", "接下来继续写第三节，保留原有的语气。".repeat(sentences));
                        Reply::text_with(&prose, 64, Usage::Fixed { input: tokens, output: estimate_tokens(&prose) })
                    }
                    Summaries::Fail => match count % 3 {
                        0 => Reply::text_with("", 8, Usage::Fixed { input: tokens, output: 0 }),
                        1 => Reply::text_with("{\"summary\": \"The person pasted", 8, Usage::Fixed { input: tokens, output: 8 }),
                        _ => Reply::error(400, json!({"error": {"code": 400, "message": "failed to parse grammar", "type": "invalid_request_error"}})),
                    },
                };
            }
            Reply::text_with("好的，已记下这一段。", 16, Usage::Fixed { input: tokens, output: 8 })
        }))));
        SmallModel { server, summaries, refused, summarising, longest }
    }

    fn set_summaries(&self, summaries: Summaries) {
        *self.summaries.lock().unwrap() = summaries;
    }
}

/// A session on a project with a short source, its profile at `window` tokens.
struct Session {
    t: TestEngine,
    model: SmallModel,
    id: String,
    /// The window the server has.
    server_window: u32,
    on_demand: bool,
}

impl Session {
    fn new(window: u32, on_demand: bool, max_output: Option<u32>, summaries: Summaries) -> Session {
        Session::with_factor(window, on_demand, max_output, summaries, 1.0)
    }

    fn with_factor(window: u32, on_demand: bool, max_output: Option<u32>, summaries: Summaries, factor: f64) -> Session {
        let model = SmallModel::start(u64::from(window), summaries, factor);
        let t = TestEngine::new();
        let loading = if on_demand { "onDemand" } else { "all" };
        t.ok("llmProfile.create", json!({"name": "local", "baseUrl": model.server.base_url(), "model": "smol", "contextWindow": window, "toolLoading": loading}));
        let project = t.ok("project.create", json!({"title": "春茶", "source": "# 春茶\n\n山里的春茶在清明前采摘。"}))["id"].as_str().unwrap().to_owned();
        let mut params = json!({"projectId": project});
        if let Some(max_output) = max_output {
            params["limits"] = json!({"maxOutputTokens": max_output});
        }
        let id = t.ok("session.create", params)["session"]["id"].as_str().unwrap().to_owned();
        Session { t, model, id, server_window: window, on_demand }
    }

    /// Sets the profile's window (the server keeps its own).
    fn set_window(&self, window: u32) {
        let loading = if self.on_demand { "onDemand" } else { "all" };
        self.t.ok(
            "llmProfile.update",
            json!({"profile": "local", "changes": {"name": "local", "baseUrl": self.model.server.base_url(), "model": "smol", "contextWindow": window, "toolLoading": loading}}),
        );
    }

    /// Sends a message; the turn's end (reason, message, hint ids).
    fn send(&self, text: &str) -> (String, String, Vec<String>) {
        let (result, _) = stream(&self.t.engine, "session.submit", json!({"sessionId": self.id, "text": text}));
        let result = result.unwrap_or_else(|e| panic!("submit failed: {e:?}"));
        let reason = result["reason"].as_str().unwrap().to_owned();
        let log = self.t.engine.session_events(&self.id).unwrap();
        let Some(EventBody::TurnEnded { message, hints, .. }) = log.iter().rev().map(|e| &e.body).find(|b| matches!(b, EventBody::TurnEnded { .. })) else {
            panic!("no turn_ended")
        };
        (reason, message.clone(), hints.iter().map(|h| h.id.clone()).collect())
    }

    fn pin_ids(&self) -> Vec<String> {
        let pins = self.t.ok("session.pins", json!({"sessionId": self.id}));
        pins["pins"].as_array().unwrap().iter().map(|p| p["id"].as_str().unwrap().to_owned()).collect()
    }

    fn summary_text(&self) -> String {
        let log = self.t.engine.session_events(&self.id).unwrap();
        inkstone_api::harness::replay(log.iter()).state.summary
    }
}

/// A pasted passage of about `chars` characters (Chinese: one token each).
fn passage(turn: usize, chars: usize) -> String {
    const TEXT: &str = "清明前后，茶农天不亮就上山，露水未干时采下一芽一叶，摊在竹匾里晾青，再用炭火慢慢烘干。山雾在梯田上停留很久，茶香也就格外清冽。";
    let mut out = format!("第{turn}段：");
    while out.chars().count() < chars {
        out.push_str(TEXT);
    }
    out.chars().take(chars).collect()
}

#[test]
fn a_6000_token_window_with_plain_text_summaries_keeps_a_30_turn_pasted_session_going() {
    // The story: tools on demand, the default reply reserve (half the window,
    // 3,000 tokens), a model that summarises in prose.
    let s = Session::new(6_000, true, None, Summaries::Plain(2));
    for turn in 0..30 {
        let (reason, message, hints) = s.send(&passage(turn, 600));
        assert_eq!(reason, "completed", "turn {turn} ended {reason}: {message} {hints:?}");
    }
    let log = s.t.engine.session_events(&s.id).unwrap();
    let boundaries: Vec<&EventBody> = log.iter().map(|e| &e.body).filter(|b| matches!(b, EventBody::CompactBoundary { .. })).collect();
    assert!(boundaries.len() >= 5, "the session compacted as it went: {}", boundaries.len());
    assert!(
        boundaries.iter().all(|b| matches!(b, EventBody::CompactBoundary { mode: CompactionMode::Summarized, summary: None, .. })),
        "every compaction took the plain-text summary"
    );
    assert!(s.summary_text().contains("摘要"), "the prose is the summary layer: {}", s.summary_text());
    assert_eq!(s.model.refused.load(Ordering::SeqCst), 0, "nothing sent was longer than the window");
    assert!(s.model.longest.load(Ordering::SeqCst) <= 6_000);
    assert!(s.model.summarising.load(Ordering::SeqCst) >= boundaries.len());
}

#[test]
fn truncation_after_truncation_stays_within_its_budget() {
    // Summarising always fails: every compaction is a truncation over the previous
    // one. Its text must not grow with the session (it quoted the head of every
    // earlier message before).
    let s = Session::new(6_000, true, None, Summaries::Fail);
    let mut sizes = Vec::new();
    let truncations = |s: &Session| {
        let log = s.t.engine.session_events(&s.id).unwrap();
        log.iter().filter(|e| matches!(e.body, EventBody::CompactBoundary { mode: CompactionMode::Truncated, .. })).count()
    };
    // Until four truncations have followed each other (how many turns that takes
    // depends on how much of the window the rest of a request leaves).
    for turn in 0..48 {
        let (reason, message, _) = s.send(&passage(turn, 600));
        assert_eq!(reason, "completed", "turn {turn}: {message}");
        sizes.push(estimate_tokens(&s.summary_text()));
        if turn >= 15 && truncations(&s) >= 4 {
            break;
        }
    }
    let truncations = truncations(&s);
    assert!(truncations >= 4, "{truncations} truncations");
    let context = s.t.ok("session.context", json!({"sessionId": s.id}));
    // The room is what the fixed part leaves with the least a reply may be given (its
    // floor, 256 tokens): the reply's reserve shrinks toward it before anything else.
    let free = context["contextWindow"].as_u64().unwrap() - 256 - context["fixedTokens"].as_u64().unwrap() + context["summaryTokens"].as_u64().unwrap();
    let most = *sizes.iter().max().unwrap();
    assert!(most * 100 <= free * 25, "the truncation note stays within its share of the room: {sizes:?} of {free}");
    assert!(s.summary_text().contains("removed without a summary"));
}

#[test]
fn pins_have_a_budget_the_person_is_told_of_and_unpinning_lets_the_session_go_on() {
    let s = Session::new(8_192, true, Some(1_024), Summaries::Json);
    assert_eq!(s.send("开始吧。").0, "completed");
    // Pins up to their share of the room are taken; the one past it is refused with
    // what to do, and nothing changes.
    let fact = "记住：品牌名写作山茶社，发布日期是三月十二日。".repeat(10);
    let mut taken = 0;
    let error = loop {
        match s.t.engine.call("session.pin", json!({"sessionId": s.id, "text": fact})) {
            Ok(_) => taken += 1,
            Err(error) => break error,
        }
        assert!(taken < 50, "pins have a budget");
    };
    assert!(taken >= 1, "a pin within the budget is taken");
    assert_eq!(error.code, ErrorCode::ContextTooLong, "{error:?}");
    let hints: Vec<&str> = error.hints.iter().map(|h| h.id.as_str()).collect();
    assert_eq!(hints, ["unpin", "larger_context"]);
    assert_eq!(s.pin_ids().len(), taken, "the refused pin was not added");
    let pins = s.t.ok("session.pins", json!({"sessionId": s.id}));
    assert_eq!(pins["pinsFit"], true, "{pins}");
    assert!(pins["pinsTokens"].as_u64().unwrap() <= pins["pinBudgetTokens"].as_u64().unwrap());
    assert_eq!(s.send("继续。").0, "completed", "pins within their budget leave the session going");
    // The model changes to one with a smaller window: the pins no longer fit. The
    // turn says so, sends nothing and compacts nothing.
    let requests = s.model.server.chat_requests().len();
    s.t.ok(
        "llmProfile.update",
        json!({"profile": "local", "changes": {"name": "local", "baseUrl": s.model.server.base_url(), "model": "smol", "contextWindow": 4_096, "toolLoading": "onDemand"}}),
    );
    let (reason, message, hints) = s.send("继续写。");
    assert_eq!(reason, "pins_too_long", "{message}");
    assert_eq!(hints, ["unpin", "larger_context"]);
    assert!(message.contains("pinned items"), "{message}");
    assert_eq!(s.model.server.chat_requests().len(), requests, "nothing was sent");
    let pins = s.t.ok("session.pins", json!({"sessionId": s.id}));
    assert_eq!(pins["pinsFit"], false, "the panel shows it: {pins}");
    // Following the hint: unpin until the pins fit; the next message is answered.
    for id in s.pin_ids() {
        s.t.ok("session.unpin", json!({"sessionId": s.id, "pinId": id}));
        if s.t.ok("session.pins", json!({"sessionId": s.id}))["pinsFit"] == true {
            break;
        }
    }
    assert_eq!(s.send("继续写。").0, "completed");
}

// ---------------------------------------------------------------------------------
// The property over the whole range.

#[derive(Debug, Clone)]
enum Step {
    /// A message of `per_mille` of the window's tokens (at most the longest message);
    /// `recover`: after a refusal, do what the person is told at once.
    Send {
        per_mille: u32,
        cjk: bool,
        recover: bool,
    },
    Pin {
        chars: usize,
    },
    Unpin,
    Compact,
    Summaries(Summaries),
    /// The person sets the profile's window to `per_mille` of the server's (another
    /// model, a smaller `-c`): pins and a summary made for the larger window may no
    /// longer fit.
    Shrink {
        per_mille: u32,
    },
}

#[derive(Debug, Clone)]
struct Case {
    window: u32,
    /// The server's tokens per estimated token.
    factor: f64,
    on_demand: bool,
    max_output: u32,
    summaries: Summaries,
    steps: Vec<Step>,
}

fn summaries() -> impl Strategy<Value = Summaries> {
    prop_oneof![Just(Summaries::Json), (0usize..400).prop_map(Summaries::Plain), Just(Summaries::Fail)]
}

fn step() -> impl Strategy<Value = Step> {
    let share = prop_oneof![3 => 0u32..60, 2 => 60u32..400, 2 => 400u32..=1_000];
    prop_oneof![
        8 => (share, any::<bool>(), any::<bool>()).prop_map(|(per_mille, cjk, recover)| Step::Send { per_mille, cjk, recover }),
        3 => (10usize..=4_000).prop_map(|chars| Step::Pin { chars }),
        1 => Just(Step::Unpin),
        1 => Just(Step::Compact),
        2 => summaries().prop_map(Step::Summaries),
        2 => (300u32..1_000).prop_map(|per_mille| Step::Shrink { per_mille }),
    ]
}

fn case() -> impl Strategy<Value = Case> {
    let window = prop_oneof![2_048u32..4_096, 4_096u32..8_192, 8_192u32..32_768, 32_768u32..=131_072];
    let max_output = prop_oneof![Just(256u32), Just(1_024u32), Just(4_096u32)];
    let factor = prop_oneof![2 => Just(1.0), 1 => Just(0.8), 1 => Just(1.3)];
    (window, factor, any::<bool>(), max_output, summaries(), proptest::collection::vec(step(), 4..12)).prop_map(|(window, factor, on_demand, max_output, summaries, steps)| Case {
        window,
        factor,
        on_demand,
        max_output,
        summaries,
        steps,
    })
}

/// The longest message the engine takes, in characters.
const MAX_MESSAGE_CHARS: usize = 20_000;

fn message_of(window: u32, per_mille: u32, cjk: bool) -> String {
    let tokens = (u64::from(window) * u64::from(per_mille) / 1_000).max(1) as usize;
    if cjk {
        "茶".repeat(tokens.min(MAX_MESSAGE_CHARS))
    } else {
        "tea ".repeat(tokens).chars().take(MAX_MESSAGE_CHARS).collect()
    }
}

/// What a turn that did not proceed must say: a specific reason with a message and at
/// least one next step.
fn check_refusal(reason: &str, message: &str, hints: &[String], allowed: &[&str]) -> Result<(), TestCaseError> {
    prop_assert!(allowed.contains(&reason), "the turn ended {reason}: {message} {hints:?}");
    prop_assert!(!message.is_empty() && !hints.is_empty(), "{reason} says what happened and what to do: {message} {hints:?}");
    Ok(())
}

/// The person does what the last refusal told them (unpin when the pins are too long,
/// go back to the larger window when the fixed part does not fit), then sends a short
/// message: it must be answered. A short message refused for the pins or the window
/// (a state reached without a turn saying so yet) gets the same once more.
fn recover(s: &Session, reason: &str, tally: &Mutex<Tally>) -> Result<(), TestCaseError> {
    tally.lock().unwrap().recoveries += 1;
    let follow = |reason: &str| match reason {
        "pins_too_long" => {
            for id in s.pin_ids() {
                s.t.ok("session.unpin", json!({"sessionId": s.id, "pinId": id}));
            }
        }
        // The window was made too small for the fixed part: the person goes back to
        // the larger one (the hint `larger_context`).
        "fixed_context_too_long" => s.set_window(s.server_window),
        _ => {}
    };
    follow(reason);
    let (mut reason, mut message, mut hints) = s.send("继续。");
    note(tally, &reason);
    if reason == "pins_too_long" || reason == "fixed_context_too_long" {
        check_refusal(&reason, &message, &hints, &["pins_too_long", "fixed_context_too_long"])?;
        follow(&reason);
        (reason, message, hints) = s.send("继续。");
        note(tally, &reason);
    }
    prop_assert_eq!(reason.as_str(), "completed", "after following the hints, a short message proceeds: {} {:?}", message, hints);
    Ok(())
}

/// What the cases went through, printed so a run shows it covered the range.
#[derive(Debug, Default)]
struct Tally {
    cases: usize,
    fixed_too_small: usize,
    turns: usize,
    ends: std::collections::BTreeMap<String, usize>,
    pins_refused: usize,
    recoveries: usize,
    summarized: usize,
    truncated: usize,
}

fn run_case(case: &Case, tally: &Mutex<Tally>) -> Result<(), TestCaseError> {
    let result = run_steps(case, tally);
    let mut tally = tally.lock().unwrap();
    tally.cases += 1;
    result
}

fn note(tally: &Mutex<Tally>, reason: &str) {
    let mut tally = tally.lock().unwrap();
    tally.turns += 1;
    *tally.ends.entry(reason.to_owned()).or_default() += 1;
}

fn run_steps(case: &Case, tally: &Mutex<Tally>) -> Result<(), TestCaseError> {
    let s = Session::with_factor(case.window, case.on_demand, Some(case.max_output), case.summaries, case.factor);
    // A window that cannot hold the fixed part of a request refuses every turn, and
    // says so: nothing the session does changes that, only a larger window. A server
    // that counts more tokens than the estimate may refuse the first request; the
    // numbers in its refusal size the next one.
    let (mut reason, mut message, mut hints) = s.send("你好。");
    note(tally, &reason);
    if reason == "context_too_long" && case.factor > 1.0 {
        check_refusal(&reason, &message, &hints, &["context_too_long"])?;
        (reason, message, hints) = s.send("你好。");
        note(tally, &reason);
    }
    let fixed_fits = reason != "fixed_context_too_long";
    if !fixed_fits {
        tally.lock().unwrap().fixed_too_small += 1;
    }
    if !fixed_fits {
        prop_assert!(hints.iter().any(|h| h == "larger_context"), "{message} {hints:?}");
    } else {
        prop_assert_eq!(reason.as_str(), "completed", "a short first message proceeds: {}", message);
    }
    let mut last_refusal: Option<String> = None;
    let mut shrunk = false;
    for step in &case.steps {
        match step {
            Step::Send { per_mille, cjk, recover: now } => {
                let (reason, message, hints) = s.send(&message_of(case.window, *per_mille, *cjk));
                note(tally, &reason);
                if !fixed_fits {
                    check_refusal(&reason, &message, &hints, &["fixed_context_too_long"])?;
                    continue;
                }
                if reason == "completed" {
                    last_refusal = None;
                    continue;
                }
                let allowed: &[&str] = if shrunk { &["context_too_long", "pins_too_long", "fixed_context_too_long"] } else { &["context_too_long", "pins_too_long"] };
                check_refusal(&reason, &message, &hints, allowed)?;
                if reason == "context_too_long" {
                    prop_assert!(hints.iter().any(|h| h == "shorter_message" || h == "unpin"), "a next step the person can take: {hints:?}");
                }
                if *now {
                    recover(&s, &reason, tally)?;
                    shrunk &= reason != "fixed_context_too_long";
                    last_refusal = None;
                } else {
                    last_refusal = Some(reason);
                }
            }
            Step::Pin { chars } => {
                let before = s.pin_ids();
                let text = format!("记住：{}", "山茶社".repeat(chars / 3));
                match s.t.engine.call("session.pin", json!({"sessionId": s.id, "text": text})) {
                    Ok(_) => prop_assert_eq!(s.pin_ids().len(), before.len() + 1),
                    Err(error) => {
                        tally.lock().unwrap().pins_refused += 1;
                        prop_assert_eq!(error.code, ErrorCode::ContextTooLong, "{:?}", error);
                        prop_assert!(error.hints.iter().any(|h| h.id == "unpin"));
                        prop_assert_eq!(s.pin_ids(), before, "a refused pin changes nothing");
                    }
                }
            }
            Step::Unpin => {
                if let Some(id) = s.pin_ids().first() {
                    s.t.ok("session.unpin", json!({"sessionId": s.id, "pinId": id}));
                }
            }
            Step::Compact => {
                let (result, _) = stream(&s.t.engine, "session.compact", json!({"sessionId": s.id}));
                prop_assert!(result.is_ok(), "a manual compaction never fails the call: {:?}", result);
            }
            Step::Summaries(mode) => s.model.set_summaries(*mode),
            Step::Shrink { per_mille } => {
                if fixed_fits {
                    s.set_window((u64::from(case.window) * u64::from(*per_mille) / 1_000).max(2_048) as u32);
                    shrunk = true;
                }
            }
        }
    }
    if fixed_fits {
        // Whatever state the steps left, the person's next step lets a turn proceed.
        recover(&s, last_refusal.as_deref().unwrap_or(""), tally)?;
        // Nothing the engine sent was refused by the server as too long, except what
        // it then compacted and retried.
        let summary = s.summary_text();
        let context = s.t.ok("session.context", json!({"sessionId": s.id}));
        prop_assert!(estimate_tokens(&summary) <= context["contextWindow"].as_u64().unwrap() / 4, "the summary layer stays small: {} tokens", estimate_tokens(&summary));
    }
    let log = s.t.engine.session_events(&s.id).unwrap();
    let mut tally = tally.lock().unwrap();
    for event in &log {
        match event.body {
            EventBody::CompactBoundary { mode: CompactionMode::Summarized, .. } => tally.summarized += 1,
            EventBody::CompactBoundary { mode: CompactionMode::Truncated, .. } => tally.truncated += 1,
            _ => {}
        }
    }
    Ok(())
}

#[test]
fn every_turn_over_the_whole_range_proceeds_or_says_why_and_no_state_refuses_every_later_turn() {
    // A fixed seed: the same cases every run (the property's regressions are kept
    // here as tests, not in a file of seeds).
    let config = Config { cases: 32, max_shrink_iters: 64, failure_persistence: None, ..Config::default() };
    let mut runner = TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &[30; 32]));
    let started = std::time::Instant::now();
    let tally = Mutex::new(Tally::default());
    let result = runner.run(&case(), |case| run_case(&case, &tally));
    println!("{:?} in {:.1} s", tally.lock().unwrap(), started.elapsed().as_secs_f64());
    if let Err(error) = result {
        panic!("{error}");
    }
}
