//! Ask sized to a small window: against a scripted server posing as a llama.cpp
//! server started with `-c 4096` (it says so at `/props`, and refuses a prompt that
//! does not fit with llama.cpp's own 400), a question over five projects with long
//! matching passages is answered from the sources that fit, its request within the
//! window, its citations naming only sources that were sent; a question that cannot
//! fit even with one short source ends with CONTEXT_TOO_LONG, its numbers and its
//! choices, and nothing is sent.

use std::sync::Arc;
use std::time::Duration;

use inkstone_api::ErrorCode;
use inkstone_test_support::model_server::{posed_prompt_tokens, ModelServer, Reply, Responder};
use inkstone_test_support::TestEngine;
use serde_json::{json, Value};

/// A passage of about 900 characters about the lighthouse keeper, every sentence
/// matching the question.
fn passage(i: usize) -> String {
    let lines = [
        "灯塔守夜人每天傍晚爬上一百二十级台阶，把灯罩擦得一尘不染，然后在日记里写下海面的颜色。",
        "他说灯塔的光要在天黑前十分钟点亮，因为渔船最怕的是暮色里看不清礁石的那一刻。",
        "风大的夜里，灯塔守夜人会把收音机开到最小声，听远处的船只互相报平安。",
        "补给船每两周来一次，带来淡水、煤油和家里寄来的信，他总是先读信再搬东西。",
        "守夜人的日记本已经写满了十七本，每一本的封面上都画着同一座灯塔。",
    ];
    let mut out = format!("# 灯塔守夜人笔记之{i}\n\n");
    for idx in 0..20 {
        out.push_str(lines[(idx + i) % lines.len()]);
        if idx % 3 == 2 {
            out.push_str("\n\n");
        }
    }
    out
}

fn user_text(body: &Value) -> String {
    body["messages"].as_array().unwrap().iter().rev().find(|m| m["role"] == "user").and_then(|m| m["content"].as_str()).unwrap_or_default().to_owned()
}

/// The source numbers a prompt sends (`[N] 《`).
fn sent_numbers(body: &Value) -> Vec<u64> {
    let user = user_text(body);
    (1..=20).filter(|n| user.contains(&format!("\n[{n}] 《"))).collect()
}

/// A model that cites every source it was sent, and one more it was not.
fn model() -> Reply {
    Reply::Computed(Responder(Arc::new(|body: &Value| {
        let sent = sent_numbers(body);
        let mut answer = String::from("灯塔守夜人天黑前点灯");
        for n in &sent {
            answer.push_str(&format!("[{n}]"));
        }
        answer.push_str(&format!("，也见[{}]。", sent.len() + 1));
        Reply::text(&answer)
    })))
}

fn engine(window: u64) -> (TestEngine, ModelServer) {
    let server = ModelServer::start(Vec::new());
    server.pose_as_llama_cpp(window);
    server.set_fallback(model());
    let t = TestEngine::new();
    let saved = t.ok("llmProfile.create", json!({"name": "llama", "baseUrl": server.base_url(), "model": "default"}));
    assert_eq!(saved["profile"]["contextWindow"], window, "{saved:#}");
    (t, server)
}

fn wait(t: &TestEngine) {
    assert!(t.engine.search_index().wait_idle(Duration::from_secs(20)), "the index caught up");
}

#[test]
fn ask_over_five_long_projects_fits_a_4096_window_and_cites_only_what_it_sent() {
    const WINDOW: u64 = 4096;
    let (t, server) = engine(WINDOW);
    let mut titles = Vec::new();
    for i in 0..5 {
        let title = format!("灯塔守夜人的第{i}本日记：海面、暮色、补给船和家里寄来的信");
        t.ok("project.create", json!({"title": title, "source": passage(i)}));
        titles.push(title);
    }
    wait(&t);
    let answer = t.ok("search.ask", json!({"q": "我写的灯塔守夜人什么时候点灯"}));
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 1, "five documents, six sources allowed: no rerank, one answer");
    let body = &requests[0].body;
    let prompt = posed_prompt_tokens(body);
    let reply = body["max_tokens"].as_u64().unwrap_or(0);
    assert!(prompt + reply <= WINDOW, "{prompt} prompt tokens + {reply} for the reply > {WINDOW}");
    assert!(reply >= 256, "the answer is left room: {reply}");
    assert_eq!(answer["retrieved"], 5, "{answer:#}");
    // The sources sent are the answer's sources, best first, fewer than retrieved.
    let sent = sent_numbers(body);
    let sources = answer["sources"].as_array().unwrap();
    assert_eq!(sources.iter().map(|s| s["n"].as_u64().unwrap()).collect::<Vec<_>>(), sent, "{answer:#}");
    assert!(!sent.is_empty() && sent.len() < 5, "{sent:?}");
    for source in sources {
        let text = source["text"].as_str().unwrap();
        assert!(user_text(body).contains(text), "source {} was sent as given", source["n"]);
    }
    // Every citation names a sent source; the one past them is reported, not resolved.
    let cited: Vec<u64> = answer["citations"].as_array().unwrap().iter().map(|c| c["n"].as_u64().unwrap()).collect();
    assert_eq!(cited, sent, "{answer:#}");
    for citation in answer["citations"].as_array().unwrap() {
        let source = sources.iter().find(|s| s["n"] == citation["n"]).unwrap();
        assert_eq!(citation["projectId"], source["projectId"]);
    }
    assert_eq!(answer["unknownCitations"], json!([sent.len() + 1]), "{answer:#}");
    assert_eq!(answer["footer"], format!("检索 5 篇，引用 {0} 篇 / retrieved 5, cited {0}", sent.len()));
}

#[test]
fn a_question_that_cannot_fit_with_one_short_source_is_context_too_long_and_sends_nothing() {
    const WINDOW: u64 = 640;
    let (t, server) = engine(WINDOW);
    t.ok("project.create", json!({"title": "灯塔", "source": passage(0)}));
    wait(&t);
    let question = format!("我写的灯塔守夜人{}", "在风大的夜里听远处船只互相报平安的时候想些什么".repeat(20));
    let question: String = question.chars().take(500).collect();
    let error = t.engine.call("search.ask", json!({"q": question})).unwrap_err();
    assert_eq!(error.code, ErrorCode::ContextTooLong, "{error:?}");
    let details = error.details.clone().unwrap();
    assert_eq!(details["contextWindow"], WINDOW, "{details}");
    assert_eq!(details["server"], "llamaCpp", "{details}");
    assert!(details["promptTokens"].as_u64().unwrap() > WINDOW, "{details}");
    let hints: Vec<&str> = error.hints.iter().map(|h| h.id.as_str()).collect();
    assert!(hints.contains(&"shorter_question") && hints.contains(&"larger_window_llamaCpp"), "{hints:?}");
    let larger = error.hints.iter().find(|h| h.id == "larger_window_llamaCpp").unwrap();
    assert!(larger.message.contains("-c 4096"), "the least window suggested is 4,096: {}", larger.message);
    assert!(server.chat_requests().is_empty(), "nothing was sent");
}

/// llama-cpp-python answers a request longer than its window with HTTP 200 and a
/// stream that ends before a word (the overflow is only in its log): an answer whose
/// request fills the window is then said as a likely CONTEXT_TOO_LONG with the
/// numbers, not as a broken answer that blames the server.
#[test]
fn an_answer_cut_before_a_word_near_the_window_is_a_likely_overflow() {
    const WINDOW: u64 = 4096;
    let (t, server) = engine(WINDOW);
    for i in 0..5 {
        t.ok("project.create", json!({"title": format!("灯塔守夜人的第{i}本日记"), "source": passage(i)}));
    }
    wait(&t);
    server.set_fallback(Reply::Cut { content: String::new() });
    let error = t.engine.call("search.ask", json!({"q": "我写的灯塔守夜人什么时候点灯"})).unwrap_err();
    assert_eq!(error.code, ErrorCode::ContextTooLong, "{error:?}");
    let details = error.details.clone().unwrap();
    assert_eq!(details["likely"], true, "{details}");
    assert_eq!(details["contextWindow"], WINDOW, "{details}");
    assert!(error.message.contains("most likely because the request does not fit"), "{}", error.message);
}
