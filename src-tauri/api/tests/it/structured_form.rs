//! Structured output that adapts to the server, over real HTTP on loopback: the
//! profile test finds the form the server takes (`json_schema`, llama.cpp's
//! `json_object` with a schema, or JSON instructions in the prompt) against scripted
//! servers that refuse forms with the real servers' statuses and wording; the form is
//! stored with where it came from, a refused form is never sent again, and a refusal
//! at work moves the profile to the next form without failing the call.

use inkstone_test_support::model_server::{ModelServer, Refusal, Reply};
use inkstone_test_support::TestEngine;
use serde_json::{json, Value};

use crate::harness::stream;

const SOURCE: &str = "# 周报写短的办法\n\n很多人的周报写得很长。\n\n第一，先写结论。\n";

fn profile(t: &TestEngine, server: &ModelServer, settings: Value) {
    let mut input = json!({"name": "local", "baseUrl": server.base_url(), "model": "fake-model", "contextWindow": 65_536});
    for (k, v) in settings.as_object().unwrap() {
        input[k] = v.clone();
    }
    t.ok("llmProfile.create", input);
}

fn format_types(server: &ModelServer) -> Vec<String> {
    server.chat_requests().iter().map(|r| r.body["response_format"]["type"].as_str().unwrap_or("none").to_owned()).collect()
}

/// A one-platform optimize whose replies are scripted: strategy, source, zhihu draft.
fn optimize(t: &TestEngine, server: &ModelServer, wrap: fn(&str) -> String) -> Value {
    let project = t.ok("project.create", json!({"title": "周报", "source": SOURCE, "platforms": ["zhihu"]}))["id"].as_str().unwrap().to_owned();
    t.ok("platformDraft.save", json!({"projectId": project, "platform": "zhihu"}));
    for reply in [
        json!({"summary": "Sharpen the opening.", "changes": ["a sharper first line"], "platforms": [{"platform": "zhihu", "plan": "a heading"}]}),
        json!({"source": "# 周报写短的办法\n\n周报越长，越没人读。\n\n第一，先写结论。\n", "titles": ["周报写短的办法"], "summary": "A sharper first line."}),
        json!({"text": "## 周报写短的办法\n\n周报越长，越没人读。\n\n第一，先写结论。\n", "summary": "Added a heading."}),
    ] {
        server.push(Reply::text(&wrap(&reply.to_string())));
    }
    let (result, _) = stream(&t.engine, "optimize.start", json!({"projectId": project, "goal": "completion", "intensity": "balanced"}));
    result.unwrap_or_else(|e| panic!("optimize.start failed: {e:?}"))
}

fn bare(json: &str) -> String {
    json.to_owned()
}

/// What a small model writes when nothing holds it to JSON: a sentence, then a fence.
fn chatty(json: &str) -> String {
    format!("好的，下面是结果：\n\n```json\n{json}\n```\n希望有帮助。")
}

#[test]
fn a_llama_cpp_server_that_refuses_json_schema_is_asked_in_json_object_form_from_the_test_on() {
    let server = ModelServer::start(vec![Reply::text("{\"ok\": true}")]);
    server.refuse(Refusal::llama_cpp_json_schema());
    let t = TestEngine::new();
    // Settings that assume the OpenAI form, as a custom profile starts.
    profile(&t, &server, json!({"supportsJsonSchema": true, "schemaForm": "responseFormat"}));
    let tested = t.ok("llmProfile.test", json!({"profile": "local"}));
    assert_eq!(tested["ok"], true, "{tested:#}");
    let found = &tested["profile"]["structuredForm"];
    assert_eq!(found["form"], "jsonObject", "{tested:#}");
    assert_eq!(found["source"], "test");
    assert_eq!(found["refused"][0]["form"], "responseFormat");
    assert_eq!(found["refused"][0]["status"], 500, "llama.cpp answers its refusal with a 500");
    assert!(found["refused"][0]["message"].as_str().unwrap().contains("must be one of \"text\" or \"json_object\""), "{found:#}");
    // The test call in the settings' form, refused (not retried: the same request gets
    // the same refusal), then in json_object, taken.
    assert_eq!(format_types(&server), ["json_schema", "json_object"]);

    // At work the refused form is never sent: every structured step asks in json_object.
    let before = server.chat_requests().len();
    let run = optimize(&t, &server, bare);
    assert_eq!(run["status"], "ready", "{run:#}");
    let types = format_types(&server)[before..].to_vec();
    assert_eq!(types, ["json_object", "json_object", "json_object"], "{types:?}");
    let listed = t.ok("llmProfile.get", json!({"profile": "local"}));
    assert_eq!(listed["structuredForm"]["form"], "jsonObject");
}

#[test]
fn a_server_that_takes_neither_form_gets_json_instructions_and_chatty_replies_are_read() {
    let server = ModelServer::start(vec![Reply::text("OK")]);
    // Each refusal as its server words it: DeepSeek's for json_schema, LM Studio's for
    // json_object.
    server.refuse(Refusal::deepseek_json_schema());
    server.refuse(Refusal::lm_studio_json_object());
    let t = TestEngine::new();
    profile(&t, &server, json!({"supportsJsonSchema": true, "schemaForm": "jsonObject"}));
    let tested = t.ok("llmProfile.test", json!({"profile": "local"}));
    assert_eq!(tested["ok"], true, "{tested:#}");
    let found = &tested["profile"]["structuredForm"];
    assert_eq!(found["form"], "instructions", "{tested:#}");
    let refused: Vec<(&str, u64)> = found["refused"].as_array().unwrap().iter().map(|r| (r["form"].as_str().unwrap(), r["status"].as_u64().unwrap())).collect();
    assert_eq!(refused, [("jsonObject", 400), ("responseFormat", 400)], "the settings' form is asked first");
    assert_eq!(format_types(&server), ["json_object", "json_schema", "none"], "the test goes plain at last");

    let before = server.chat_requests().len();
    let run = optimize(&t, &server, chatty);
    assert_eq!(run["status"], "ready", "the JSON is found after the prose and in the fence: {run:#}");
    let requests = server.chat_requests()[before..].to_vec();
    assert_eq!(requests.len(), 3, "no repair round was needed");
    for request in &requests {
        assert!(request.body.get("response_format").is_none(), "no form is sent: {:#}", request.body);
        let ask = request.body["messages"].as_array().unwrap().last().unwrap()["content"].as_str().unwrap().to_owned();
        assert!(ask.contains("Reply with only a JSON value matching this JSON schema"), "the schema is in the prompt: {ask}");
    }
}

#[test]
fn a_server_that_takes_its_settings_form_costs_the_test_call_alone() {
    let server = ModelServer::start(vec![Reply::text("{\"ok\": true}")]);
    let t = TestEngine::new();
    profile(&t, &server, json!({}));
    let tested = t.ok("llmProfile.test", json!({"profile": "local"}));
    let found = &tested["profile"]["structuredForm"];
    assert_eq!((found["form"].as_str(), found["source"].as_str()), (Some("responseFormat"), Some("test")), "{tested:#}");
    assert!(found.get("refused").is_none());
    server.assert_calls(1);
    assert_eq!(format_types(&server), ["json_schema"]);
}

#[test]
fn a_refusal_at_work_moves_the_profile_to_the_next_form_and_the_call_goes_on() {
    let server = ModelServer::start(Vec::new());
    server.refuse(Refusal::llama_cpp_json_schema());
    let t = TestEngine::new();
    // Not tested: the settings say json_schema, which this server refuses.
    profile(&t, &server, json!({"supportsJsonSchema": true}));
    let run = optimize(&t, &server, bare);
    assert_eq!(run["status"], "ready", "{run:#}");
    assert_eq!(format_types(&server), ["json_schema", "json_object", "json_object", "json_object"], "refused once, then never sent again");
    let stored = t.ok("llmProfile.get", json!({"profile": "local"}));
    assert_eq!(stored["structuredForm"]["form"], "jsonObject", "{stored:#}");
    assert_eq!(stored["structuredForm"]["source"], "refusal");
    assert_eq!(stored["structuredForm"]["refused"][0]["status"], 500);
    // The refused request is metered with its error, once.
    let usage = t.ok("usage.list", json!({}));
    let refused: Vec<&Value> = usage["records"].as_array().unwrap().iter().filter(|u| u["outcome"]["type"] == "error").collect();
    assert_eq!(refused.len(), 1, "{usage:#}");
    assert_eq!(refused[0]["outcome"]["code"], "PROVIDER_REJECTED");
}
