//! One-click optimize sized to a small window: against a scripted server posing as a
//! llama.cpp server started with `-c 4096` (it says so at `/props`, and refuses a
//! prompt that does not fit with llama.cpp's own 400), a five-platform run completes
//! with every request within the window, one platform per step; an article that
//! cannot fit ends with CONTEXT_TOO_LONG, its numbers and its choices.

use std::sync::Arc;

use inkstone_test_support::model_server::{posed_prompt_tokens, posed_prompt_tokens_with, ModelServer, Refusal, Reply, Responder};
use inkstone_test_support::TestEngine;
use serde_json::{json, Value};

use crate::harness::stream;

const WINDOW: u64 = 4096;

/// An article of `paragraphs` lines of about 33 characters (26: about 870).
fn article(paragraphs: usize) -> String {
    let mut out = String::from("# 周报写短的办法\n\n");
    let lines = [
        "很多人的周报写得很长，读的人却越来越少，因为重要的事被埋在流水账里。",
        "第一，先写结论：这周最重要的一件事是什么，它对团队意味着什么。",
        "第二，只写变化：和上周相比，哪些数字变了，哪些计划改了，为什么。",
        "第三，附上下周计划：写清楚谁在什么时候交付什么，遇到的阻碍是什么。",
        "最后，删掉所有不需要别人行动的句子，周报就短了一半，也更有用。",
    ];
    for idx in 0..paragraphs {
        out.push_str(lines[idx % lines.len()]);
        out.push_str("\n\n");
    }
    out
}

fn last_user(body: &Value) -> String {
    body["messages"].as_array().unwrap().iter().rev().find(|m| m["role"] == "user").and_then(|m| m["content"].as_str()).unwrap_or_default().to_owned()
}

/// The draft a platform step asked about, as it was sent.
fn draft_in(body: &Value) -> String {
    let ask = body["messages"].as_array().unwrap().iter().filter_map(|m| m["content"].as_str()).find(|c| c.contains("The draft:\n")).unwrap_or_default();
    let after = ask.split_once("The draft:\n").map(|(_, d)| d).unwrap_or_default();
    after.rsplit_once("\n\nReply with only a JSON value").map(|(d, _)| d).unwrap_or(after).to_owned()
}

/// A model that answers each step as asked: plans for every platform, the source with
/// a sharper first line, each draft as it was (so no limit breaks).
fn model(source: String) -> Reply {
    Reply::Computed(Responder(Arc::new(move |body: &Value| {
        let ask = last_user(body);
        let plans = json!([
            {"platform": "wechat", "plan": "a warm opening"}, {"platform": "zhihu", "plan": "headings"}, {"platform": "x", "plan": "a short thread"},
            {"platform": "douyin", "plan": "a spoken hook"}, {"platform": "xiaohongshu", "plan": "a list"}
        ]);
        let reply = if ask.starts_with("Step 1 of the optimization, continued") {
            json!({"platforms": plans})
        } else if ask.starts_with("Step 1") {
            json!({"summary": "Lead with the conclusion.", "changes": ["a sharper first line"], "platforms": plans})
        } else if ask.starts_with("Step 2") {
            json!({"source": source.replacen("很多人的周报写得很长", "周报越长，越没人读", 1), "titles": ["周报写短的三个办法"], "summary": "A sharper first line."})
        } else if ask.contains("summary promises") {
            json!({"summary": "Rewrote the opening."})
        } else {
            json!({"text": draft_in(body), "summary": "Kept the draft as it is."})
        };
        Reply::text(&reply.to_string())
    })))
}

struct Small {
    t: TestEngine,
    server: ModelServer,
    project: String,
}

fn small_window(source: &str) -> Small {
    let server = ModelServer::start(Vec::new());
    server.pose_llama_cpp_window(WINDOW);
    server.refuse(Refusal::llama_cpp_json_schema());
    server.set_fallback(model(source.to_owned()));
    let t = TestEngine::new();
    // The llama.cpp preset, no window of the person's: the server's is read on save.
    let saved = t.ok(
        "llmProfile.create",
        json!({"name": "llama", "baseUrl": server.base_url(), "model": "default", "supportsJsonSchema": true, "schemaForm": "jsonObject", "toolLoading": "onDemand"}),
    );
    assert_eq!(saved["profile"]["contextWindow"], WINDOW, "{saved:#}");
    let platforms = ["wechat", "zhihu", "x", "douyin", "xiaohongshu"];
    let project = t.ok("project.create", json!({"title": "周报", "source": source, "platforms": platforms}))["id"].as_str().unwrap().to_owned();
    for platform in platforms {
        t.ok("platformDraft.save", json!({"projectId": project, "platform": platform}));
    }
    Small { t, server, project }
}

impl Small {
    fn optimize(&self) -> Value {
        let (result, _) = stream(&self.t.engine, "optimize.start", json!({"projectId": self.project, "goal": "completion", "intensity": "balanced"}));
        result.unwrap_or_else(|e| panic!("optimize.start failed: {e:?}"))
    }

    /// Every chat request fits the window: its prompt as the server counts it, and
    /// that prompt with the reply it allows.
    fn assert_within_window(&self) {
        for (idx, request) in self.server.chat_requests().iter().enumerate() {
            let prompt = posed_prompt_tokens(&request.body);
            let reply = request.body["max_tokens"].as_u64().unwrap_or(0);
            assert!(
                prompt + reply <= WINDOW,
                "request {idx}: {prompt} prompt tokens + {reply} for the reply > {WINDOW}: {}",
                last_user(&request.body).chars().take(80).collect::<String>()
            );
        }
    }
}

#[test]
fn five_platforms_in_a_4096_window_go_one_platform_per_request_and_every_request_fits() {
    let source = article(26);
    assert!(source.chars().count() > 550, "{}", source.chars().count());
    let small = small_window(&source);
    let run = small.optimize();
    assert_eq!(run["status"], "ready", "{run:#}");
    small.assert_within_window();
    let requests = small.server.chat_requests();
    // One request per platform step, each with that platform's rules only.
    let steps: Vec<&Value> = requests.iter().map(|r| &r.body).filter(|b| last_user(b).starts_with("Step 3")).collect();
    assert_eq!(steps.len(), 5, "{}", requests.len());
    for body in &steps {
        let system = body["messages"][0]["content"].as_str().unwrap();
        let named = ["## wechat (", "## zhihu (", "## x (", "## douyin (", "## xiaohongshu ("].iter().filter(|p| system.contains(*p)).count();
        assert_eq!(named, 1, "one platform's rules in a platform step: {system}");
    }
    // What one prompt for five platforms would have been does not fit this window.
    let together: u64 = steps.iter().map(|b| posed_prompt_tokens(b)).sum();
    assert!(together > WINDOW, "{together}");
    // The strategy was asked in batches that fit, and holds every platform's plan.
    let strategy_asks = requests.iter().filter(|r| last_user(&r.body).starts_with("Step 1")).count();
    assert!(strategy_asks >= 2, "{strategy_asks} strategy requests");
    let plans = run["strategy"]["platforms"].as_array().unwrap();
    for platform in ["wechat", "zhihu", "x", "douyin", "xiaohongshu"] {
        assert!(plans.iter().any(|p| p["platform"] == platform), "{platform} in {plans:?}");
    }
    // llama.cpp's json_object form throughout, as the server takes it.
    assert!(requests.iter().all(|r| r.body["response_format"]["type"] == "json_object"));
}

#[test]
fn an_article_too_long_for_the_window_ends_with_the_numbers_and_the_choices() {
    let source = article(60);
    let small = small_window(&source);
    let run = small.optimize();
    assert_eq!(run["status"], "failed", "{run:#}");
    let error = &run["error"];
    assert_eq!(error["code"], "CONTEXT_TOO_LONG", "{error:#}");
    assert!(error["message"].as_str().unwrap().contains("window is 4096 tokens"), "{error:#}");
    let hints: Vec<&str> = error["hints"].as_array().unwrap().iter().filter_map(|h| h["id"].as_str()).collect();
    for id in ["fewer_platforms", "smaller_selection", "larger_window_llamaCpp"] {
        assert!(hints.contains(&id), "{id} in {hints:?}");
    }
    let larger = error["hints"].as_array().unwrap().iter().find(|h| h["id"] == "larger_window_llamaCpp").unwrap();
    assert!(larger["message"].as_str().unwrap().contains("-c "), "{larger:#}");
    // Nothing the server would refuse was sent.
    small.assert_within_window();
}

/// A small model's tokenizer gives a Chinese character two tokens where the estimate
/// counts one: once profile test has read that from the server's tokenizer, every
/// optimize step is sized as the server counts, so no request it sends is longer than
/// the window (before, the steps were sized by the raw estimate and the server refused
/// them, or llama-cpp-python cut them off without a word).
#[test]
fn optimize_sizes_its_steps_as_the_servers_tokenizer_counts() {
    let source = article(26);
    let small = small_window(&source);
    small.server.offer_tokenizer("/tokenize", 2);
    let tested = small.t.ok("llmProfile.test", json!({"profile": "llama"}));
    assert!(tested["calibration"]["ratio"].as_f64().unwrap() > 1.9, "{tested:#}");
    let base = small.server.chat_requests().len();
    let run = small.optimize();
    let requests = small.server.chat_requests().split_off(base);
    assert!(!requests.is_empty() || run["status"] == "failed", "{run:#}");
    for (idx, request) in requests.iter().enumerate() {
        let prompt = posed_prompt_tokens_with(&request.body, 2);
        let reply = request.body["max_tokens"].as_u64().unwrap_or(0);
        assert!(prompt + reply <= WINDOW, "request {idx}: {prompt} prompt tokens (as the server counts) + {reply} for the reply > {WINDOW}");
    }
    // It ends ready, or with CONTEXT_TOO_LONG said before sending: never a refusal.
    if run["status"] != "ready" {
        assert_eq!(run["error"]["code"], "CONTEXT_TOO_LONG", "{run:#}");
        assert!(run["error"]["message"].as_str().unwrap().contains("nothing was sent"), "{run:#}");
    }
}
