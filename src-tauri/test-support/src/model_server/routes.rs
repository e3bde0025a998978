//! The server's routes: the test-control routes of the standalone server, then every
//! other request recorded and answered, in order, by a posed context overflow or
//! format refusal, the key check, a set route, the model list, or the script's next
//! reply.

use axum::body::Bytes;
use axum::http::{HeaderMap, Method, Uri};
use axum::response::Response;
use serde_json::{json, Value};

use super::answers::{chat_response, embeddings_response, is_wide, json_response, resolve_delays, POSED_PROMPT_TOKENS};
use super::{lock, posed_prompt_tokens, posed_prompt_tokens_with, reply_from_json, RecordedRequest, Reply, Shared};

/// The test-control routes of the standalone server, so an end-to-end test can script
/// replies as it goes and read what the client sent: `POST /_test/script` appends a
/// JSON list of replies; `GET /_test/requests` lists the chat request bodies received.
/// They are neither recorded nor keyed.
fn control(state: &Shared, method: &Method, path: &str, body: &Bytes) -> Option<Response> {
    match (method.as_str(), path) {
        ("POST", "/_test/script") => {
            let values: Vec<Value> = match serde_json::from_slice(body) {
                Ok(values) => values,
                Err(e) => return Some(json_response(400, &json!({"error": format!("a JSON list of replies: {e}")}), &[])),
            };
            let mut replies = Vec::new();
            for value in &values {
                match reply_from_json(value) {
                    Ok(reply) => replies.push(reply),
                    Err(e) => return Some(json_response(400, &json!({"error": e}), &[])),
                }
            }
            let mut state = lock(state);
            state.script.extend(replies);
            Some(json_response(200, &json!({"queued": state.script.len()}), &[]))
        }
        ("GET", "/_test/requests") => {
            let bodies: Vec<Value> = lock(state).requests.iter().filter(|r| r.is_chat()).map(|r| r.body.clone()).collect();
            Some(json_response(200, &json!({"requests": bodies}), &[]))
        }
        _ => None,
    }
}

pub(super) async fn handle(state: Shared, method: Method, uri: Uri, headers: HeaderMap, body: Bytes) -> Response {
    let path = uri.path().to_owned();
    if let Some(response) = control(&state, &method, &path, &body) {
        return response;
    }
    let body_json: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let authorization = headers.get("authorization").and_then(|v| v.to_str().ok()).map(str::to_owned);
    let (reply, required_key, models, route) = {
        let mut state = lock(&state);
        state.requests.push(RecordedRequest { method: method.to_string(), path: path.clone(), authorization: authorization.clone(), body: body_json.clone() });
        let is_call = path.ends_with("/chat/completions") || path.ends_with("/embeddings");
        if let (Some(n_ctx), true) = (state.llama_ctx, path.ends_with("/chat/completions")) {
            let prompt = posed_prompt_tokens_with(&body_json, state.tokenizer.as_ref().map_or(1, |t| t.1));
            let wanted = body_json["max_tokens"].as_u64().or_else(|| body_json["max_completion_tokens"].as_u64()).unwrap_or(0);
            if prompt + wanted > n_ctx {
                return json_response(
                    400,
                    &json!({"error": {"code": 400, "message": "the request exceeds the available context size, try increasing it", "type": "exceed_context_size_error", "n_prompt_tokens": prompt, "n_ctx": n_ctx}}),
                    &[],
                );
            }
        }
        let format_type = body_json["response_format"]["type"].as_str().unwrap_or("");
        let refused = if path.ends_with("/chat/completions") {
            let refusal = state.refusals.iter().find(|r| r.format_type == format_type).map(|r| (r.status, r.body.clone()));
            let tokens = posed_prompt_tokens(&body_json);
            let overflow = state.llama_cpp_window.filter(|n_ctx| tokens >= *n_ctx).map(|n_ctx| {
                (
                    400,
                    json!({"error": {"code": 400, "message": format!("request ({tokens} tokens) exceeds the available context size ({n_ctx} tokens), try increasing it"), "type": "exceed_context_size_error", "n_prompt_tokens": tokens, "n_ctx": n_ctx}}),
                )
            });
            refusal.or(overflow)
        } else {
            None
        };
        if let Some((status, body)) = refused {
            return json_response(status, &body, &[]);
        }
        let reply = if is_call {
            let next = state.script.pop_front().or_else(|| state.fallback.clone());
            if next.is_none() {
                state.unscripted += 1;
            }
            next
        } else {
            None
        };
        let mut route = state.routes.get(&(method.as_str().to_owned(), path.clone())).cloned();
        if let Some((tokenize_path, per_wide)) = state.tokenizer.as_ref().filter(|(p, _)| *p == path && method == Method::POST) {
            let field = if tokenize_path == "/tokenize" { "content" } else { "input" };
            let text = body_json[field].as_str().unwrap_or("");
            let wide = text.chars().filter(|c| is_wide(*c)).count() as u64;
            let tokens = wide * per_wide + (text.chars().count() as u64 - wide).div_ceil(4);
            route = Some((200, json!({"tokens": (0..tokens).map(|i| i % 50_000).collect::<Vec<u64>>()})));
        }
        (reply, state.required_key.clone(), state.models.clone(), route)
    };
    if let Some(key) = required_key {
        let given = authorization.as_deref().and_then(|a| a.strip_prefix("Bearer ")).unwrap_or("");
        if given != key {
            return json_response(
                401,
                &json!({"error": {"message": format!("Incorrect API key provided: {given}"), "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}}),
                &[],
            );
        }
    }
    if let Some((status, body)) = route {
        return json_response(status, &body, &[]);
    }
    if path.ends_with("/models") && method == Method::GET {
        let data: Vec<Value> = models.iter().map(|m| json!({"id": m, "object": "model", "owned_by": "inkstone-test"})).collect();
        return json_response(200, &json!({"object": "list", "data": data}), &[]);
    }
    let Some(reply) = reply else {
        if path.ends_with("/chat/completions") || path.ends_with("/embeddings") {
            return json_response(500, &json!({"error": {"message": "the fake model server's script is exhausted", "type": "server_error"}}), &[]);
        }
        return json_response(404, &json!({"error": {"message": format!("no route {path}"), "type": "invalid_request_error"}}), &[]);
    };
    let mut reply = reply;
    while let Reply::Computed(responder) = reply {
        reply = (responder.0)(&body_json);
    }
    let reply = resolve_delays(reply).await;
    let (reply, pace) = match reply {
        Reply::Paced { interval, then } => (resolve_delays(*then).await, Some(interval)),
        other => (other, None),
    };
    if path.ends_with("/embeddings") {
        return embeddings_response(&reply, &body_json);
    }
    let mut body_json = body_json;
    let (posing, per_wide) = {
        let state = lock(&state);
        (state.llama_ctx.is_some(), state.tokenizer.as_ref().map_or(1, |t| t.1))
    };
    if posing {
        // Usage in the posed count (see `input_tokens`).
        body_json[POSED_PROMPT_TOKENS] = json!(posed_prompt_tokens_with(&body_json, per_wide));
    }
    let stream = body_json["stream"].as_bool().unwrap_or(false);
    let include_usage = body_json["stream_options"]["include_usage"].as_bool().unwrap_or(false);
    let model = body_json["model"].as_str().unwrap_or("fake-model").to_owned();
    chat_response(state, reply, &body_json, &model, stream, include_usage, pace)
}
