//! `inkstone-cli profile …` through the real binary against the scripted model server.

use std::io::Write;
use std::process::Stdio;

use inkstone_test_support::model_server::{ModelServer, Reply};
use serde_json::{json, Value};

use crate::{cli, json_ok, run, stdout};

#[test]
fn add_list_test_default_remove() {
    let server = ModelServer::start(vec![]);
    server.set_fallback(Reply::text("OK"));
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let base_url = server.base_url().trim_end_matches("/v1").to_owned();
    let added = json_ok(data, &["profile", "add", "--name", "local", "--base-url", &base_url, "--model", "fake-model", "--no-key"]);
    assert_eq!(added["profile"]["baseUrl"], server.base_url());
    assert_eq!(added["profile"]["keyRequired"], false);
    assert_eq!(added["profile"]["supportsJsonSchema"], false);
    assert_eq!(added["profile"]["toolLoading"], "all");
    let second = json_ok(
        data,
        &["profile", "add", "--name", "second", "--base-url", &server.base_url(), "--model", "fake-model", "--no-key", "--json-schema", "json-object", "--tools", "on-demand"],
    );
    assert_eq!((&second["profile"]["supportsJsonSchema"], &second["profile"]["schemaForm"]), (&json!(true), &json!("jsonObject")));
    assert_eq!(second["profile"]["toolLoading"], "onDemand");

    let tested = run(data, &["profile", "test", "local"]);
    assert!(tested.status.success(), "{}", String::from_utf8_lossy(&tested.stderr));
    assert!(stdout(&tested).starts_with("ok: local answered as fake-model in "), "{}", stdout(&tested));
    let list = stdout(&run(data, &["profile", "list"]));
    assert!(list.contains("* local") && list.contains(" ok ") && list.contains("no key needed"), "{list}");

    assert_eq!(json_ok(data, &["profile", "default", "second"])["isDefault"], true);
    assert_eq!(json_ok(data, &["profile", "list"])["profiles"][0]["isDefault"], false);
    json_ok(data, &["profile", "remove", "local"]);
    assert_eq!(json_ok(data, &["profile", "list"])["profiles"].as_array().unwrap().len(), 1);
    let missing = run(data, &["profile", "test", "local"]);
    assert_eq!(missing.status.code(), Some(1));
    assert_eq!(serde_json::from_slice::<Value>(&missing.stderr).unwrap()["code"], "NOT_FOUND");
}

#[test]
fn a_failed_test_exits_1_with_code_and_hints() {
    let server = ModelServer::start(vec![]);
    server.set_fallback(Reply::text("OK"));
    server.require_key(Some("sk-right-000000000000"));
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    json_ok(data, &["profile", "add", "--name", "hosted", "--base-url", &server.base_url(), "--model", "fake-model"]);
    let failed = cli(data).args(["profile", "test", "hosted"]).env("INKSTONE_LLM_API_KEY", "sk-wrong-111111111111").output().unwrap();
    assert_eq!(failed.status.code(), Some(1));
    let error: Value = serde_json::from_slice(&failed.stderr).unwrap();
    assert_eq!(error["code"], "PROVIDER_AUTH");
    assert!(error["hints"].as_array().unwrap().iter().any(|h| h["id"] == "check_api_key"));
    assert!(!String::from_utf8_lossy(&failed.stderr).contains("sk-wrong-111111111111"));
    let json = cli(data).args(["--json", "profile", "test", "hosted"]).env("INKSTONE_LLM_API_KEY", "sk-wrong-111111111111").output().unwrap();
    assert_eq!(json.status.code(), Some(1));
    assert_eq!(serde_json::from_slice::<Value>(&json.stdout).unwrap()["ok"], false);
    let passed = cli(data).args(["profile", "test", "hosted"]).env("INKSTONE_LLM_API_KEY", "sk-right-000000000000").output().unwrap();
    assert!(passed.status.success(), "{}", String::from_utf8_lossy(&passed.stderr));
    assert_eq!(json_ok(data, &["profile", "list"])["profiles"][0]["health"], "ok");
}

fn add_with_stdin_key(data: &std::path::Path, base_url: &str, key: &str) -> std::process::Output {
    let mut child = cli(data)
        .args(["--json", "profile", "add", "--name", "keyed", "--base-url", base_url, "--model", "fake-model", "--api-key-stdin"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(format!("{key}\n").as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

/// With a keychain (the test command runs one: gnome-keyring in dbus-run-session), the
/// key goes there; without one, KEYCHAIN_UNAVAILABLE and no half-made profile.
#[test]
fn a_key_only_from_stdin_into_the_keychain() {
    let server = ModelServer::start(vec![]);
    server.set_fallback(Reply::text("OK"));
    const KEY: &str = "sk-stdin-abcdef0123456789";
    server.require_key(Some(KEY));
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let output = add_with_stdin_key(&data, &server.base_url(), KEY);
    if std::env::var("INKSTONE_TEST_SECRET_SERVICE").as_deref() == Ok("1") {
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        let added: Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(added["profile"]["keyFingerprint"], "…6789");
        let tested = run(&data, &["profile", "test", "keyed"]);
        assert!(tested.status.success(), "{}", String::from_utf8_lossy(&tested.stderr));
        json_ok(&data, &["profile", "remove", "keyed"]);
    } else {
        assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stderr));
        let error: Value = serde_json::from_slice(&output.stderr).unwrap();
        assert_eq!(error["code"], "KEYCHAIN_UNAVAILABLE");
        assert!(error["hints"].as_array().unwrap().iter().any(|h| h["id"] == "use_env_key"));
        assert_eq!(json_ok(&data, &["profile", "list"])["profiles"], serde_json::json!([]));
    }
    let found: Vec<String> = inkstone_test_support::read_tree(&data).into_iter().filter(|(_, b)| b.windows(KEY.len()).any(|w| w == KEY.as_bytes())).map(|(p, _)| p).collect();
    assert!(found.is_empty(), "the key is in {found:?}");
    assert!(!String::from_utf8_lossy(&output.stderr).contains(KEY));
}

#[test]
fn list_and_test_show_the_window_the_server_states_and_warn_when_mine_differs() {
    let server = ModelServer::start(vec![]);
    server.set_fallback(Reply::text("OK"));
    // llama.cpp's /props as a server started with -c 4096 answers it.
    let props = std::fs::read_to_string(inkstone_test_support::fixtures_dir().join("llm-servers/llama-cpp-props.json")).unwrap();
    let props: Value = serde_json::from_str(&props).unwrap();
    server.set_route("GET", "/props", 200, props["body"].clone());
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    json_ok(data, &["profile", "add", "--name", "llama", "--base-url", &server.base_url(), "--model", "default", "--no-key"]);
    json_ok(data, &["profile", "add", "--name", "mine", "--base-url", &server.base_url(), "--model", "default", "--no-key", "--context-window", "8192"]);
    let list = stdout(&run(data, &["profile", "list"]));
    assert!(list.contains("context window 4096 tokens (from llama.cpp /props n_ctx)"), "{list}");
    assert!(list.contains("context window 8192 tokens (set by you)"), "{list}");

    let tested = run(data, &["profile", "test", "mine"]);
    assert!(tested.status.success(), "{}", String::from_utf8_lossy(&tested.stderr));
    assert!(stdout(&tested).contains("context window: 8192 tokens (set by you; the server says 4096, from llama.cpp /props n_ctx)"), "{}", stdout(&tested));
    let warning = String::from_utf8_lossy(&tested.stderr).into_owned();
    assert!(warning.starts_with("warning: The profile's context window is 8192 tokens, but the server (llama.cpp /props n_ctx) says 4096"), "{warning}");
}

#[test]
fn test_shows_the_structured_output_form_the_server_took_and_what_it_refused() {
    let server = ModelServer::start(vec![]);
    server.set_fallback(Reply::text("{\"ok\": true}"));
    // A llama.cpp server from before json_schema, refusing it as it does.
    server.refuse(inkstone_test_support::model_server::Refusal::llama_cpp_json_schema());
    // Its tokenizer gives a Chinese character two tokens.
    server.offer_tokenizer("/tokenize", 2);
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    json_ok(data, &["profile", "add", "--name", "llama", "--base-url", &server.base_url(), "--model", "default", "--no-key"]);
    let tested = run(data, &["profile", "test", "llama"]);
    assert!(tested.status.success(), "{}", String::from_utf8_lossy(&tested.stderr));
    let out = stdout(&tested);
    assert!(
        out.contains("structured output: response_format json_object with a schema (the server took it at the test; it refused response_format json_schema (HTTP 500: "),
        "{out}"
    );
    assert!(out.contains("must be one of \"text\" or \"json_object\""), "{out}");
    assert!(out.contains("token calibration: x1.") && out.contains("(the server's tokenizer, llama.cpp /tokenize, counted "), "{out}");
}
