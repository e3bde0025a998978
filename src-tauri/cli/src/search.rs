//! `search` and `ask`: the project library's search and its sourced answers.

use inkstone_api::Engine;
use serde_json::{json, Value};

use crate::commands::{call, s, Rendered};
use crate::Failure;

/// A snippet with its highlights in brackets.
fn marked_snippet(snippet: &Value) -> String {
    let units: Vec<u16> = s(snippet, "text").encode_utf16().collect();
    let mut out = String::new();
    let mut at = 0usize;
    for mark in snippet["highlights"].as_array().into_iter().flatten() {
        let (from, to) = (mark["from"].as_u64().unwrap_or(0) as usize, mark["to"].as_u64().unwrap_or(0) as usize);
        if from < at || to > units.len() || from > to {
            continue;
        }
        out.push_str(&String::from_utf16_lossy(&units[at..from]));
        out.push('[');
        out.push_str(&String::from_utf16_lossy(&units[from..to]));
        out.push(']');
        at = to;
    }
    out.push_str(&String::from_utf16_lossy(&units[at..]));
    out
}

pub(crate) fn search(engine: &Engine, query: Option<String>, project: Option<String>, kinds: Vec<String>, limit: Option<u32>, reindex: bool) -> Result<Rendered, Failure> {
    if reindex {
        let status = call(engine, "search.reindex", json!({}))?;
        if query.is_none() {
            return Ok((status, Box::new(|_: &Value| println!("The search index is being rebuilt from the store."))));
        }
        // The rebuild runs on the index's thread; wait for it before searching.
        engine.search_index().wait_idle(std::time::Duration::from_secs(600));
    }
    let mut params = json!({"q": query.unwrap_or_default(), "kinds": kinds});
    if kinds_empty(&params) {
        params.as_object_mut().map(|p| p.remove("kinds"));
    }
    if let Some(project) = project {
        params["projectId"] = json!(project);
    }
    if let Some(limit) = limit {
        params["limit"] = json!(limit);
    }
    let result = call(engine, "search.query", params)?;
    Ok((
        result,
        Box::new(|r: &Value| {
            if let Some(message) = r["notice"]["message"].as_str() {
                eprintln!("note: {message}");
            }
            let hits = r["hits"].as_array().cloned().unwrap_or_default();
            if hits.is_empty() {
                println!("No matches.");
            }
            for hit in hits {
                let mut place = s(&hit, "projectId").to_owned();
                if let Some(number) = hit["version"].as_u64() {
                    place.push_str(&format!("@v{number}"));
                }
                if let Some(comment) = hit["commentId"].as_str() {
                    place.push_str(&format!("#{comment}"));
                }
                if let (Some(from), Some(to)) = (hit["span"]["from"].as_u64(), hit["span"]["to"].as_u64()) {
                    place.push_str(&format!(":{from}-{to}"));
                }
                let title = if s(&hit, "title").is_empty() { s(&hit, "projectTitle") } else { s(&hit, "title") };
                println!("{place}  [{}]  {title}", s(&hit, "tier"));
                println!("    {}", marked_snippet(&hit["snippet"]));
            }
        }),
    ))
}

/// An answer, its cited sources with their places, the quotes the engine could not
/// find, and the footer.
pub(crate) fn print_answer(r: &Value) {
    if let Some(message) = r["notice"]["message"].as_str() {
        eprintln!("note: {message}");
    }
    let answer = s(r, "answer");
    if r["route"] == "general" {
        eprintln!("route: general (answered directly, without your writing; --route material to search it)");
    }
    if answer.is_empty() {
        println!("Nothing in your writing matches the question; no model was asked.");
    } else {
        println!("{answer}");
    }
    let citations = r["citations"].as_array().cloned().unwrap_or_default();
    if !citations.is_empty() {
        println!();
    }
    for c in &citations {
        let source = r["sources"].as_array().into_iter().flatten().find(|x| x["n"] == c["n"]).cloned().unwrap_or_default();
        let mut place = s(c, "projectId").to_owned();
        if let Some(number) = c["version"].as_u64() {
            place.push_str(&format!("@v{number}"));
        }
        if let Some(comment) = c["commentId"].as_str() {
            place.push_str(&format!("#{comment}"));
        }
        println!("[{}] {}  {place}:{}-{}", c["n"], s(&source, "projectTitle"), c["span"]["from"], c["span"]["to"]);
    }
    for q in r["quotes"].as_array().into_iter().flatten().filter(|q| q["found"] == false) {
        println!("! not in the sources: 「{}」", s(q, "text"));
    }
    for n in r["unknownCitations"].as_array().into_iter().flatten() {
        println!("! [{n}] names no source");
    }
    let cached = if r["cached"] == true { "  (cached)" } else { "" };
    println!("{}{cached}", s(r, "footer"));
}

fn kinds_empty(params: &Value) -> bool {
    params["kinds"].as_array().is_none_or(|k| k.is_empty())
}
