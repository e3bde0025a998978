//! `cargo xtask context-cost`: the fixed token cost of a drafting request per window.
//!
//! For each window (2k, 4k, 8k, 32k) and each tool loading (`all`, `onDemand`) it
//! creates a profile against the scripted model server on loopback, a project with a
//! short article (99 characters, so the article is not what takes the room), a
//! session with the default limits, and sends one message. It reads what was really
//! sent from the server's record of the first request: the system message's
//! estimated tokens (prompt layers, project digest and that short article), the tool
//! definitions' estimated tokens, and the `max_tokens` it carried; the reply reserve
//! is the one `session.context` reports (the room kept for the step's reply: before
//! requests were budgeted to the window the same figure as `max_tokens`, at most half the window;
//! since, sized to the step, while `max_tokens` is what the window then leaves, up to
//! the session's limit). A window whose request was refused before sending prints the
//! turn's end reason and the fixed part `session.context` reports.

use anyhow::{Context, Result};
use inkstone_api::api::StreamEvent;
use inkstone_api::llm::estimate_tokens;
use inkstone_test_support::model_server::{ModelServer, Reply};
use inkstone_test_support::TestEngine;
use serde_json::{json, Value};

const WINDOWS: [u32; 4] = [2_048, 4_096, 8_192, 32_768];
const ARTICLE: &str = "# 春茶\n\n清明前后，山里的茶农开始采摘今年的第一批春茶。A short draft about spring tea: the hills, the harvest, the first cup.";

struct Row {
    window: u32,
    loading: &'static str,
    system: u64,
    tools: u64,
    reserve: u64,
    max_tokens: Option<u64>,
    outcome: String,
}

fn measure(window: u32, loading: &'static str) -> Result<Row> {
    let server = ModelServer::start(vec![]);
    server.set_fallback(Reply::text("好的。"));
    let t = TestEngine::new();
    let call = |method: &str, params: Value| t.engine.call(method, params).map_err(|e| anyhow::anyhow!("{method}: {e:?}"));
    call("llmProfile.create", json!({"name": "fake", "baseUrl": server.base_url(), "model": "fake-model", "contextWindow": window, "toolLoading": loading}))?;
    let project = call("project.create", json!({"title": "春茶", "source": ARTICLE}))?["id"].as_str().context("project id")?.to_owned();
    let session = call("session.create", json!({"projectId": project}))?["session"]["id"].as_str().context("session id")?.to_owned();
    // The fixed part as the meter shows it before anything was sent (no calibration yet).
    let context = call("session.context", json!({"sessionId": session}))?;
    let n = |k: &str| context[k].as_u64().unwrap_or(0);
    let result = t.engine.call_stream("session.submit", json!({"sessionId": session, "text": "把开头改得更吸引人一些。"}), &mut |_: StreamEvent| {});
    let reason = match &result {
        Ok(value) => value["reason"].as_str().unwrap_or("?").to_owned(),
        Err(error) => format!("{:?}", error.code),
    };
    let Some(first) = server.chat_requests().into_iter().next() else {
        return Ok(Row {
            window,
            loading,
            system: n("systemPromptTokens"),
            tools: n("toolTokens"),
            reserve: n("replyReserveTokens"),
            max_tokens: None,
            outcome: format!("refused before sending ({reason})"),
        });
    };
    let system = first.body["messages"][0]["content"].as_str().map_or(0, estimate_tokens);
    let tools: u64 = first.body["tools"]
        .as_array()
        .map(|tools| tools.iter().map(|t| estimate_tokens(t["function"]["description"].as_str().unwrap_or("")) + estimate_tokens(&t["function"]["parameters"].to_string())).sum())
        .unwrap_or(0);
    let max_tokens = first.body["max_tokens"].as_u64().or_else(|| first.body["max_completion_tokens"].as_u64());
    let n_tools = first.body["tools"].as_array().map_or(0, Vec::len);
    Ok(Row { window, loading, system, tools, reserve: n("replyReserveTokens"), max_tokens, outcome: format!("sent ({n_tools} tools; {reason})") })
}

pub fn run() -> Result<()> {
    println!("Fixed token cost of a drafting request (estimated tokens; a {}-character article)", ARTICLE.chars().count());
    println!("{:>7}  {:<9} {:>7} {:>6} {:>8} {:>6} {:>6} {:>10}  outcome", "window", "loading", "system", "tools", "reserve", "fixed", "left", "max_tokens");
    for window in WINDOWS {
        for loading in ["all", "onDemand"] {
            let row = measure(window, loading)?;
            let fixed = row.system + row.tools + row.reserve;
            let left = i64::from(row.window) - fixed as i64;
            let max_tokens = row.max_tokens.map_or_else(|| "-".to_owned(), |n| n.to_string());
            println!("{:>7}  {:<9} {:>7} {:>6} {:>8} {:>6} {:>6} {:>10}  {}", row.window, row.loading, row.system, row.tools, row.reserve, fixed, left, max_tokens, row.outcome);
        }
    }
    Ok(())
}
