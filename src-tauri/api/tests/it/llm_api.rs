//! LLM profiles, test connection, usage and quotas through the API, against the
//! scripted model server; and the proof that a key's bytes go nowhere but the keychain.

use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};

use inkstone_api::llm::keychain::{account_for_profile, MemoryKeychain, SecretStore};
use inkstone_api::llm::ModelCall;
use inkstone_api::llm::{ApiKey, Cancel, ChatRequest, Message};
use inkstone_api::{Engine, EngineConfig, ErrorCode};
use inkstone_test_support::model_server::{ModelServer, Reply, Usage};
use inkstone_test_support::TestEngine;
use serde_json::{json, Value};

fn create(t: &TestEngine, name: &str, base_url: &str, extra: Value) -> Value {
    let mut params = json!({"name": name, "baseUrl": base_url, "model": "fake-model"});
    if let (Value::Object(params), Value::Object(extra)) = (&mut params, extra) {
        params.extend(extra);
    }
    t.ok("llmProfile.create", params)["profile"].clone()
}

#[test]
fn profiles_are_created_normalised_listed_and_defaulted() {
    let t = TestEngine::new();
    let local = create(&t, "Local", "http://127.0.0.1:11434", json!({}));
    assert_eq!(local["baseUrl"], "http://127.0.0.1:11434/v1");
    assert_eq!(local["keyRequired"], false);
    assert_eq!(local["isDefault"], true);
    assert_eq!(local["health"], "unknown");
    let hosted = create(&t, "OpenAI", "https://api.openai.com/v1/", json!({"inputPricePerMtok": 0.15, "outputPricePerMtok": 0.6}));
    assert_eq!(hosted["keyRequired"], true);
    assert_eq!(hosted["isDefault"], false);

    let duplicate = t.engine.call("llmProfile.create", json!({"name": "local", "baseUrl": "http://x.test", "model": "m"})).unwrap_err();
    assert_eq!(duplicate.code, ErrorCode::Conflict);
    let bad = t.engine.call("llmProfile.create", json!({"name": "x", "baseUrl": "localhost:1234", "model": "m"})).unwrap_err();
    assert_eq!((bad.code, bad.details.unwrap()["field"].clone()), (ErrorCode::Validation, json!("baseUrl")));
    let unknown = t.engine.call("llmProfile.create", json!({"name": "x", "baseUrl": "http://a.test", "model": "m", "apiKeys": "sk-no"})).unwrap_err();
    assert_eq!(unknown.code, ErrorCode::Validation, "unknown fields are refused");

    t.ok("llmProfile.setDefault", json!({"profile": "OpenAI"}));
    let list = t.ok("llmProfile.list", json!({}));
    let defaults: Vec<(&str, bool)> = list["profiles"].as_array().unwrap().iter().map(|p| (p["name"].as_str().unwrap(), p["isDefault"].as_bool().unwrap())).collect();
    assert_eq!(defaults, vec![("Local", false), ("OpenAI", true)]);
    assert_eq!(t.ok("llmProfile.get", json!({"profile": hosted["id"]}))["name"], "OpenAI");

    let updated = t.ok("llmProfile.update", json!({"profile": "Local", "changes": {"name": "Local", "baseUrl": "http://192.168.1.5:11434", "model": "qwen", "keyRequired": true}}));
    assert_eq!(updated["warnings"][0]["id"], "plain_http_key");
    t.ok("llmProfile.delete", json!({"profile": "OpenAI"}));
    assert_eq!(t.ok("llmProfile.get", json!({"profile": "Local"}))["isDefault"], true, "the default moves on");
    assert_eq!(t.ok("llmProfile.presets", json!({}))["presets"].as_array().unwrap().len(), 10);
}

#[test]
fn test_connection_updates_health_and_records_usage() {
    let server = ModelServer::start(vec![Reply::text("OK"), Reply::error(404, json!({"error": {"message": "model not found"}}))]);
    let t = TestEngine::new();
    create(&t, "fake", &server.base_url(), json!({"inputPricePerMtok": 1.0, "outputPricePerMtok": 2.0}));
    let result = t.ok("llmProfile.test", json!({"profile": "fake"}));
    assert_eq!(result["ok"], true);
    assert_eq!(result["modelId"], "fake-model");
    assert!(result["latencyMs"].is_u64());
    assert_eq!(result["profile"]["health"], "ok");

    let result = t.ok("llmProfile.test", json!({"profile": "fake"}));
    assert_eq!(result["ok"], false);
    assert_eq!(result["error"]["code"], "PROVIDER_NOT_FOUND");
    assert!(result["error"]["hints"].as_array().unwrap().iter().any(|h| h["id"] == "check_model"));
    let profile = t.ok("llmProfile.get", json!({"profile": "fake"}));
    assert_eq!((profile["health"].as_str(), profile["lastError"]["code"].as_str()), (Some("failed"), Some("PROVIDER_NOT_FOUND")));
    server.assert_calls(2);

    let usage = t.ok("usage.list", json!({}));
    let records = usage["records"].as_array().unwrap();
    assert_eq!(records.len(), 2);
    assert_eq!(records[0]["outcome"], json!({"type": "error", "code": "PROVIDER_NOT_FOUND"}));
    assert_eq!(records[1]["outcome"], json!({"type": "ok"}));
    assert_eq!(records[1]["purpose"], "test_connection");
    assert_eq!(records[1]["profileName"], "fake");
    assert!(records[1]["cost"].as_f64().unwrap() > 0.0);
    let report = t.ok("usage.report", json!({}));
    assert_eq!(report["byPurpose"][0]["key"], "test_connection");
    assert_eq!(report["totals"]["calls"], 2);
    assert_eq!(report["totals"]["failedCalls"], 1);
    assert_eq!(t.ok("llmProfile.models", json!({"profile": "fake"}))["models"], json!(["fake-embed", "fake-model"]));
    assert_eq!(t.ok("llmProfile.models", json!({"baseUrl": server.base_url()}))["models"][1], "fake-model");
}

#[test]
fn a_missing_or_wrong_key_is_a_failed_test_with_hints() {
    let server = ModelServer::start(vec![]);
    server.set_fallback(Reply::text("OK"));
    server.require_key(Some("sk-right-0123456789"));
    let t = TestEngine::new();
    create(&t, "fake", &server.base_url(), json!({"keyRequired": true}));
    let result = t.ok("llmProfile.test", json!({"profile": "fake"}));
    assert_eq!(result["error"]["code"], "PROVIDER_AUTH");
    assert_eq!(result["error"]["details"]["keyMissing"], true);
    assert!(server.requests().is_empty(), "nothing is sent without a key");

    let profile = t.ok("llmProfile.setKey", json!({"profile": "fake", "apiKey": "sk-wrong-0000000000"}));
    assert_eq!(profile["keyFingerprint"], "…0000");
    let result = t.ok("llmProfile.test", json!({"profile": "fake"}));
    assert_eq!(result["error"]["code"], "PROVIDER_AUTH");
    assert!(result["error"]["hints"].as_array().unwrap().iter().any(|h| h["id"] == "check_api_key"));
    assert!(!result.to_string().contains("sk-wrong-0000000000"), "the echoed key is scrubbed");

    t.ok("llmProfile.setKey", json!({"profile": "fake", "apiKey": "sk-right-0123456789"}));
    assert_eq!(t.ok("llmProfile.test", json!({"profile": "fake"}))["ok"], true);
    let cleared = t.ok("llmProfile.setKey", json!({"profile": "fake", "apiKey": null}));
    assert!(cleared.get("keyFingerprint").is_none());
}

#[test]
fn a_key_is_not_sent_in_clear_to_another_machine_without_confirmation() {
    let t = TestEngine::new();
    create(&t, "lan", "http://192.168.7.7:8000/v1", json!({"keyRequired": true}));
    let error = t.engine.call("llmProfile.setKey", json!({"profile": "lan", "apiKey": "sk-lan-000000000000"})).unwrap_err();
    assert_eq!(error.code, ErrorCode::Validation);
    assert!(error.hints.iter().any(|h| h.id == "plain_http_key"));
    assert!(t.ok("llmProfile.get", json!({"profile": "lan"})).get("keyFingerprint").is_none(), "a refused call writes nothing");
    let profile = t.ok("llmProfile.setKey", json!({"profile": "lan", "apiKey": "sk-lan-000000000000", "allowPlainHttp": true}));
    assert_eq!(profile["keyFingerprint"], "…0000");
}

fn engine_with(secrets: Arc<dyn SecretStore>, env_key: Option<&str>) -> (Engine, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let mut config = EngineConfig::for_tests(dir.path()).with_secrets(secrets);
    config.env_api_key = env_key.map(ApiKey::new);
    (Engine::open(config).unwrap(), dir)
}

#[test]
fn an_unavailable_keychain_is_reported_with_hints() {
    let (engine, _dir) = engine_with(Arc::new(MemoryKeychain::unavailable()), None);
    engine.call("llmProfile.create", json!({"name": "p", "baseUrl": "https://api.example.com", "model": "m"})).unwrap();
    let error = engine.call("llmProfile.setKey", json!({"profile": "p", "apiKey": "sk-0123456789abcdef"})).unwrap_err();
    assert_eq!(error.code, ErrorCode::KeychainUnavailable);
    let hints: Vec<&str> = error.hints.iter().map(|h| h.id.as_str()).collect();
    assert_eq!(hints, vec!["start_keyring", "use_kernel_keyring", "use_env_key"]);
}

/// A profile without a key (made before a key could be set) is deleted without touching
/// the keychain, so a refusing keychain never traps it.
#[test]
fn a_profile_whose_key_was_refused_can_be_taken_back_without_the_keychain() {
    let (engine, _dir) = engine_with(Arc::new(MemoryKeychain::unavailable()), None);
    let created = engine.call("llmProfile.create", json!({"name": "p", "baseUrl": "https://api.example.com", "model": "m"})).unwrap();
    let id = created["profile"]["id"].as_str().unwrap().to_owned();
    let error = engine.call("llmProfile.setKey", json!({"profile": id, "apiKey": "sk-0123456789abcdef"})).unwrap_err();
    assert_eq!(error.code, ErrorCode::KeychainUnavailable);
    assert!(engine.call("llmProfile.get", json!({"profile": id})).unwrap().get("keyFingerprint").is_none(), "a refused key writes nothing");
    engine.call("llmProfile.delete", json!({"profile": id})).unwrap();
    assert_eq!(engine.call("llmProfile.list", json!({})).unwrap()["profiles"], json!([]));
}

/// "Load models" says what is wrong, in words the UI can give in either language: a URL
/// that cannot be used (the same wording as when saving it), or a server not running.
#[test]
fn listing_models_says_why_it_failed() {
    let t = TestEngine::new();
    let bad = t.engine.call("llmProfile.models", json!({"baseUrl": "not-a-url"})).unwrap_err();
    assert_eq!(bad.code, ErrorCode::Validation);
    assert_eq!(bad.message_id.as_deref(), Some("profile.bad_base_url"));
    assert_eq!(bad.details.as_ref().unwrap()["field"], "baseUrl");
    assert!(bad.hints.iter().any(|h| h.id == "base_url_example"), "{bad:?}");
    let refused = t.engine.call("llmProfile.create", json!({"name": "x", "baseUrl": "not-a-url", "model": "m"})).unwrap_err();
    assert_eq!((refused.code, refused.message_id.as_deref()), (ErrorCode::Validation, Some("profile.bad_base_url")));
    assert!(refused.hints.iter().any(|h| h.id == "base_url_example"));

    // A port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let down = t.engine.call("llmProfile.models", json!({"baseUrl": format!("http://127.0.0.1:{port}/v1")})).unwrap_err();
    assert_eq!(down.code, ErrorCode::ProviderUnavailable);
    assert!(down.hints.iter().any(|h| h.id == "check_server_running"), "{down:?}");
}

#[test]
fn the_environment_key_is_used_for_the_process_only() {
    let server = ModelServer::start(vec![Reply::text("OK")]);
    let secrets = Arc::new(MemoryKeychain::unavailable());
    let (engine, dir) = engine_with(secrets, Some("sk-env-key-55555555"));
    engine.call("llmProfile.create", json!({"name": "p", "baseUrl": server.base_url(), "model": "m", "keyRequired": true})).unwrap();
    let result = engine.call("llmProfile.test", json!({"profile": "p"})).unwrap();
    assert_eq!(result["ok"], true, "{result}");
    assert_eq!(server.requests()[0].authorization.as_deref(), Some("Bearer sk-env-key-55555555"));
    assert_eq!(engine.call("llmProfile.list", json!({})).unwrap()["envKeyActive"], true);
    drop(engine);
    assert_eq!(bytes_found(dir.path(), b"sk-env-key-55555555"), Vec::<String>::new());
}

#[test]
fn quotas_refuse_calls_before_anything_is_sent() {
    let server = ModelServer::start(vec![Reply::text_with("OK", 2, Usage::Fixed { input: 40, output: 10 })]);
    let t = TestEngine::new();
    create(&t, "fake", &server.base_url(), json!({"inputPricePerMtok": 1000000.0}));
    assert_eq!(t.ok("llmProfile.test", json!({"profile": "fake"}))["ok"], true);
    t.ok("usage.setQuotas", json!({"dailyTokens": 55}));
    let call = ModelCall { profile: "fake", purpose: "drafting", session_id: Some("ses_1"), run_id: None };
    let request = ChatRequest::new(vec![Message::user("a long prompt ".repeat(10))]);
    let error = t.engine.model_chat(call, &request, &mut |_| {}, &Cancel::new()).unwrap_err();
    assert_eq!(error.code, ErrorCode::QuotaExceeded);
    assert_eq!(error.details.as_ref().unwrap()["quota"], "dailyTokens");
    t.ok("usage.setQuotas", json!({"monthlyCost": 10.0}));
    let error = t.engine.model_chat(call, &request, &mut |_| {}, &Cancel::new()).unwrap_err();
    assert_eq!(error.details.as_ref().unwrap()["quota"], "monthlyCost");
    server.assert_calls(1);
    assert_eq!(t.ok("usage.getQuotas", json!({})), json!({"monthlyCost": 10.0}));
}

#[test]
fn a_call_uses_exactly_its_profile_and_records_it() {
    let first = ModelServer::start(vec![Reply::error(503, json!({"error": {"message": "down"}})); 3]);
    let second = ModelServer::start(vec![Reply::text("from second")]);
    let t = TestEngine::new();
    create(&t, "first", &first.base_url(), json!({}));
    create(&t, "second", &second.base_url(), json!({}));
    let call = ModelCall { profile: "first", purpose: "optimize", session_id: None, run_id: Some("run_7") };
    let error = t.engine.model_chat(call, &ChatRequest::new(vec![Message::user("x")]), &mut |_| {}, &Cancel::new()).unwrap_err();
    assert_eq!(error.code, ErrorCode::ProviderUnavailable);
    assert!(second.chat_requests().is_empty(), "no silent fallback to another profile (its window was read when it was saved, no more)");
    let record = &t.ok("usage.list", json!({}))["records"][0];
    assert_eq!((record["profileName"].as_str(), record["runId"].as_str(), record["purpose"].as_str()), (Some("first"), Some("run_7"), Some("optimize")));
    first.assert_calls(3);
    assert_eq!(record["attempts"], 3, "a call that failed after retries records every request it sent");
}

/// Every file below `dir` whose bytes contain `needle`.
fn bytes_found(dir: &std::path::Path, needle: &[u8]) -> Vec<String> {
    inkstone_test_support::read_tree(dir).into_iter().filter(|(_, bytes)| bytes.windows(needle.len()).any(|w| w == needle)).map(|(path, _)| path).collect()
}

/// Everything logged by the test binary, at every level.
fn captured_logs() -> Arc<Mutex<Vec<u8>>> {
    static LOGS: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    LOGS.get_or_init(|| {
        let logs = Arc::new(Mutex::new(Vec::new()));
        let writer = Arc::clone(&logs);
        let subscriber = tracing_subscriber::fmt().with_max_level(tracing::Level::TRACE).with_ansi(false).with_writer(move || LogWriter(Arc::clone(&writer))).finish();
        let _ = tracing::subscriber::set_global_default(subscriber);
        logs
    })
    .clone()
}

struct LogWriter(Arc<Mutex<Vec<u8>>>);

impl Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn the_key_appears_nowhere_but_the_keychain() {
    const KEY: &str = "sk-SECRET-7f3a9c1e5b2d8f4a6c0e";
    let logs = captured_logs();
    let server = ModelServer::start(vec![
        Reply::text("OK"),
        Reply::error(429, json!({"error": {"message": format!("Rate limit for key {KEY}"), "code": "rate_limit_exceeded"}})),
        Reply::error(429, json!({"error": {"message": format!("Rate limit for key {KEY}")}})),
        Reply::error(429, json!({"error": {"message": format!("Rate limit for key {KEY}")}})),
        Reply::StreamError { content: "x".into(), error: json!({"message": format!("bad key {KEY}")}) },
    ]);
    server.require_key(Some(KEY));
    let keychain = Arc::new(MemoryKeychain::default());
    let (engine, dir) = engine_with(keychain.clone(), None);
    let mut errors: Vec<String> = Vec::new();
    let mut results: Vec<String> = Vec::new();
    let mut call = |method: &str, params: Value| match engine.call(method, params) {
        Ok(value) => results.push(value.to_string()),
        Err(error) => errors.push(serde_json::to_string(&error).unwrap()),
    };
    call("llmProfile.create", json!({"name": "p", "baseUrl": server.base_url(), "model": "m", "keyRequired": true}));
    call("llmProfile.setKey", json!({"profile": "p", "apiKey": KEY}));
    call("llmProfile.create", json!({"name": "q", "baseUrl": server.base_url(), "model": "m", "keyRequired": true, "apiKey": KEY}));
    call("llmProfile.create", json!({"name": "q", "baseUrl": server.base_url(), "model": "m", "apiKey": KEY}));
    call("llmProfile.create", json!({"name": "r", "baseUrl": "http://10.1.1.1/v1", "model": "m", "apiKey": KEY}));
    call("llmProfile.test", json!({"profile": "p"}));
    call("llmProfile.test", json!({"profile": "p"}));
    call("llmProfile.models", json!({"profile": "p"}));
    call("llmProfile.setKey", json!({"profile": "p", "apiKey": KEY, "bogus": 1}));
    call("llmProfile.setKey", json!({"profile": "p", "apiKey": 12}));
    call("llmProfile.update", json!({"profile": "p", "changes": {"name": "p", "baseUrl": server.base_url(), "model": "m2", "keyRequired": true}}));
    call("usage.report", json!({}));
    let export = dir.path().join("export-out");
    call("export.run", json!({"path": export.display().to_string()}));
    call("backup.create", json!({}));
    let profile_id = engine.call("llmProfile.get", json!({"profile": "p"})).unwrap()["id"].as_str().unwrap().to_owned();
    assert_eq!(keychain.get(&account_for_profile(&profile_id)).unwrap(), Some(ApiKey::new(KEY)), "the key is in the keychain");
    assert!(results.iter().any(|r| r.contains("\"ok\":true")), "one test passed: {results:?}");
    assert!(results.iter().any(|r| r.contains("PROVIDER_RATE_LIMITED")), "one test failed: {results:?}");
    drop(engine);

    let needle = KEY.as_bytes();
    assert_eq!(bytes_found(dir.path(), needle), Vec::<String>::new(), "the data dir, the export and the backup");
    for text in errors.iter().chain(results.iter()) {
        assert!(!text.contains(KEY), "leaked in {text}");
    }
    let logs = String::from_utf8_lossy(&logs.lock().unwrap()).into_owned();
    let leaking: Vec<&str> = logs.lines().filter(|l| l.contains(KEY)).collect();
    assert!(leaking.is_empty(), "the key is in the logs: {leaking:#?}");
    // The fingerprint, and only that, may be shown.
    assert!(results.iter().any(|r| r.contains("…6c0e")));
}

#[test]
fn export_and_import_keep_profiles_and_usage_but_no_key() {
    let server = ModelServer::start(vec![Reply::text("OK")]);
    let t = TestEngine::new();
    create(&t, "fake", &server.base_url(), json!({"keyRequired": true}));
    t.ok("llmProfile.setKey", json!({"profile": "fake", "apiKey": "sk-export-1234567890"}));
    t.ok("llmProfile.test", json!({"profile": "fake"}));
    t.ok("usage.setQuotas", json!({"dailyTokens": 100000}));
    let out = t.data_dir().join("exp");
    let manifest = t.ok("export.run", json!({"path": out.display().to_string()}))["manifest"].clone();
    assert_eq!((manifest["counts"]["llmProfiles"].as_u64(), manifest["counts"]["usageRecords"].as_u64()), (Some(1), Some(1)));
    assert!(bytes_found(&out, b"sk-export-1234567890").is_empty());

    let other = TestEngine::new();
    other.ok("import.run", json!({"path": out.display().to_string()}));
    assert_eq!(other.ok("llmProfile.get", json!({"profile": "fake"}))["keyFingerprint"], "…7890");
    assert_eq!(other.ok("usage.report", json!({}))["totals"]["calls"], 1);
    assert_eq!(other.ok("usage.getQuotas", json!({}))["dailyTokens"], 100000);
    // The key stayed in the first machine's keychain; here the test says so.
    let result = other.ok("llmProfile.test", json!({"profile": "fake"}));
    assert_eq!(result["error"]["details"]["keyMissing"], true);
}

/// A proxy URL with credentials is refused, on create and on update, and its password
/// reaches neither the store, an export, the API's answers nor the error.
#[test]
fn a_proxy_password_is_refused_and_stored_nowhere() {
    const PASSWORD: &str = "pr0xy-S3CRET-91c4";
    let t = TestEngine::new();
    let proxy = format!("http://alice:{PASSWORD}@proxy.corp:3128");
    let refused = t.engine.call("llmProfile.create", json!({"name": "p", "baseUrl": "http://127.0.0.1:9/v1", "model": "m", "proxyUrl": proxy})).unwrap_err();
    assert_eq!(refused.code, ErrorCode::Validation);
    assert_eq!(refused.details.as_ref().unwrap()["field"], "proxyUrl");
    assert!(!serde_json::to_string(&refused).unwrap().contains(PASSWORD));
    assert!(t.ok("llmProfile.list", json!({}))["profiles"].as_array().unwrap().is_empty(), "nothing was written");

    let created = create(&t, "p", "http://127.0.0.1:9/v1", json!({"proxyUrl": "http://proxy.corp:3128"}));
    let id = created["id"].as_str().unwrap();
    assert_eq!(created["proxyUrl"], "http://proxy.corp:3128");
    let update = t.engine.call("llmProfile.update", json!({"profile": id, "changes": {"name": "p", "baseUrl": "http://127.0.0.1:9/v1", "model": "m", "proxyUrl": proxy}}));
    let update = update.unwrap_err();
    assert_eq!(update.code, ErrorCode::Validation);
    assert_eq!(t.ok("llmProfile.get", json!({"profile": id}))["proxyUrl"], "http://proxy.corp:3128", "the update changed nothing");

    let export = t.dir.path().join("export");
    t.ok("export.run", json!({"path": export.display().to_string()}));
    t.engine.store().sync().unwrap();
    assert!(bytes_found(t.dir.path(), PASSWORD.as_bytes()).is_empty(), "the password is in the data folder or the export");
}

/// Creating a profile with its key is one call: the key lands in the keychain, the
/// profile shows its fingerprint, and the key is nowhere in the answer.
#[test]
fn a_profile_is_created_with_its_key_in_one_call() {
    const KEY: &str = "sk-one-call-0123456789abcd";
    let server = ModelServer::start(vec![Reply::text("OK")]);
    server.require_key(Some(KEY));
    let keychain = Arc::new(MemoryKeychain::default());
    let (engine, dir) = engine_with(keychain.clone(), None);
    let saved = engine.call("llmProfile.create", json!({"name": "p", "baseUrl": server.base_url(), "model": "m", "keyRequired": true, "apiKey": format!("  {KEY}\n")})).unwrap();
    assert!(!saved.to_string().contains(KEY), "the key is echoed: {saved}");
    let id = saved["profile"]["id"].as_str().unwrap().to_owned();
    assert_eq!(saved["profile"]["keyFingerprint"], "…abcd");
    assert_eq!(keychain.get(&account_for_profile(&id)).unwrap(), Some(ApiKey::new(KEY)), "stored trimmed");
    assert_eq!(engine.call("llmProfile.test", json!({"profile": "p"})).unwrap()["ok"], true);
    assert!(engine.call("llmProfile.list", json!({})).unwrap().get("missingKeys").is_none());

    // An edit can carry a new key the same way; blank keeps the stored one.
    const NEXT: &str = "sk-one-call-next-99999999wxyz";
    let edited = engine
        .call("llmProfile.update", json!({"profile": "p", "changes": {"name": "p", "baseUrl": server.base_url(), "model": "m", "keyRequired": true, "apiKey": NEXT}}))
        .unwrap();
    assert_eq!(edited["profile"]["keyFingerprint"], "…wxyz");
    let kept = engine
        .call("llmProfile.update", json!({"profile": "p", "changes": {"name": "p2", "baseUrl": server.base_url(), "model": "m", "keyRequired": true, "apiKey": "  "}}))
        .unwrap();
    assert_eq!(kept["profile"]["keyFingerprint"], "…wxyz");
    assert_eq!(keychain.get(&account_for_profile(&id)).unwrap(), Some(ApiKey::new(NEXT)));
    drop(engine);
    assert_eq!(bytes_found(dir.path(), KEY.as_bytes()), Vec::<String>::new());
    assert_eq!(bytes_found(dir.path(), NEXT.as_bytes()), Vec::<String>::new());
}

/// A key the keychain refuses, or that would travel in clear, writes no profile: the
/// error is the keychain's own (worded, with its hints), and nothing is left to undo.
#[test]
fn a_refused_key_creates_no_profile() {
    const KEY: &str = "sk-refused-0123456789abcd";
    let (engine, dir) = engine_with(Arc::new(MemoryKeychain::unavailable()), None);
    let error = engine.call("llmProfile.create", json!({"name": "p", "baseUrl": "https://api.example.com", "model": "m", "apiKey": KEY})).unwrap_err();
    assert_eq!(error.code, ErrorCode::KeychainUnavailable);
    assert_eq!(error.message_id.as_deref(), Some("keychain.unavailable"));
    assert!(error.hints.iter().any(|h| h.id == "use_env_key"), "{error:?}");
    assert!(!serde_json::to_string(&error).unwrap().contains(KEY));
    assert_eq!(engine.call("llmProfile.list", json!({})).unwrap()["profiles"], json!([]), "no profile without its key");

    let keychain = Arc::new(MemoryKeychain::default());
    let (engine, _dir2) = engine_with(keychain.clone(), None);
    let clear = engine.call("llmProfile.create", json!({"name": "lan", "baseUrl": "http://192.168.7.7:8000/v1", "model": "m", "apiKey": KEY})).unwrap_err();
    assert_eq!((clear.code, clear.details.as_ref().unwrap()["field"].as_str()), (ErrorCode::Validation, Some("apiKey")));
    assert!(clear.hints.iter().any(|h| h.id == "plain_http_key"));
    assert!(!serde_json::to_string(&clear).unwrap().contains(KEY));
    assert_eq!((engine.call("llmProfile.list", json!({})).unwrap()["profiles"].clone(), keychain.accounts()), (json!([]), Vec::<String>::new()));
    let allowed = engine.call("llmProfile.create", json!({"name": "lan", "baseUrl": "http://192.168.7.7:8000/v1", "model": "m", "apiKey": KEY, "allowPlainHttp": true})).unwrap();
    assert_eq!(allowed["profile"]["keyFingerprint"], "…abcd");
    drop(engine);
    assert_eq!(bytes_found(dir.path(), KEY.as_bytes()), Vec::<String>::new());
}

/// The store failing after the key was written takes the key back (a new profile) or
/// puts the previous key back (an edit). The failure is real: the database folder is
/// moved away, so the durable sync after the commit cannot list it.
#[test]
fn a_store_failure_after_the_key_leaves_nothing_half_made() {
    let keychain = Arc::new(MemoryKeychain::default());
    let (engine, dir) = engine_with(keychain.clone(), None);
    let db = dir.path().join("db");
    let moved = dir.path().join("db-away");
    std::fs::rename(&db, &moved).unwrap();
    let error = engine.call("llmProfile.create", json!({"name": "p", "baseUrl": "https://api.example.com", "model": "m", "apiKey": "sk-store-fails-0123456789"})).unwrap_err();
    std::fs::rename(&moved, &db).unwrap();
    assert_eq!(error.code, ErrorCode::Io, "{error:?}");
    assert_eq!(keychain.accounts(), Vec::<String>::new(), "the key was taken back");
    assert_eq!(engine.call("llmProfile.list", json!({})).unwrap()["profiles"], json!([]), "and the profile too");

    let saved = engine.call("llmProfile.create", json!({"name": "p", "baseUrl": "https://api.example.com", "model": "m", "apiKey": "sk-first-key-000000001111"})).unwrap();
    let id = saved["profile"]["id"].as_str().unwrap().to_owned();
    std::fs::rename(&db, &moved).unwrap();
    let error = engine
        .call(
            "llmProfile.update",
            json!({"profile": id, "changes": {"name": "renamed", "baseUrl": "https://api.example.com", "model": "m", "apiKey": "sk-second-key-00000002222"}}),
        )
        .unwrap_err();
    std::fs::rename(&moved, &db).unwrap();
    assert_eq!(error.code, ErrorCode::Io);
    assert_eq!(keychain.get(&account_for_profile(&id)).unwrap(), Some(ApiKey::new("sk-first-key-000000001111")), "the previous key is back");
    let profile = engine.call("llmProfile.get", json!({"profile": id})).unwrap();
    assert_eq!((profile["name"].as_str(), profile["keyFingerprint"].as_str()), (Some("p"), Some("…1111")), "and the previous profile");
}

/// A key deleted outside the app (or left on another machine) is listed as missing, and
/// a call with it fails before anything is sent, with a worded error and a hint, even
/// for a profile that does not insist on a key.
#[test]
fn a_key_gone_from_the_keychain_is_listed_and_stops_calls_before_sending() {
    let server = ModelServer::start(vec![]);
    server.set_fallback(Reply::text("OK"));
    let keychain = Arc::new(MemoryKeychain::default());
    let (engine, _dir) = engine_with(keychain.clone(), None);
    let hosted = engine
        .call("llmProfile.create", json!({"name": "hosted", "baseUrl": server.base_url(), "model": "m", "keyRequired": true, "apiKey": "sk-gone-00000000000000aaaa"}))
        .unwrap();
    let local = engine
        .call("llmProfile.create", json!({"name": "local", "baseUrl": server.base_url(), "model": "m", "keyRequired": false, "apiKey": "sk-gone-00000000000000bbbb"}))
        .unwrap();
    let ids: Vec<String> = [&hosted, &local].iter().map(|s| s["profile"]["id"].as_str().unwrap().to_owned()).collect();
    assert!(engine.call("llmProfile.list", json!({})).unwrap().get("missingKeys").is_none());
    for id in &ids {
        keychain.delete(&account_for_profile(id)).unwrap();
    }
    assert_eq!(engine.call("llmProfile.list", json!({})).unwrap()["missingKeys"], json!(ids));
    for name in ["hosted", "local"] {
        let result = engine.call("llmProfile.test", json!({"profile": name})).unwrap();
        assert_eq!(result["ok"], false);
        let error = &result["error"];
        assert_eq!((error["code"].as_str(), error["messageId"].as_str()), (Some("PROVIDER_AUTH"), Some("profile.key_gone")), "{error}");
        assert_eq!(error["details"]["keyMissing"], true);
        // Its own hint, so a turn's end can say "set it again", not "none is set".
        assert!(error["hints"].as_array().unwrap().iter().any(|h| h["id"] == "set_api_key_again"), "{error}");
    }
    assert!(server.requests().is_empty(), "nothing was sent without the key");
    engine.call("llmProfile.setKey", json!({"profile": "hosted", "apiKey": "sk-back-again-000000cccc"})).unwrap();
    assert_eq!(engine.call("llmProfile.list", json!({})).unwrap()["missingKeys"], json!([ids[1]]));
    assert_eq!(engine.call("llmProfile.test", json!({"profile": "hosted"})).unwrap()["ok"], true);
}

/// A profile that needs a key and never had one says so, without asking the keychain:
/// with no keychain at all the person reads "no API key", not "keychain not available".
#[test]
fn a_profile_without_a_key_says_so_without_asking_the_keychain() {
    let server = ModelServer::start(vec![]);
    server.set_fallback(Reply::text("OK"));
    let (engine, _dir) = engine_with(Arc::new(MemoryKeychain::unavailable()), None);
    engine.call("llmProfile.create", json!({"name": "local", "baseUrl": server.base_url(), "model": "m", "keyRequired": true})).unwrap();
    let result = engine.call("llmProfile.test", json!({"profile": "local"})).unwrap();
    let error = &result["error"];
    assert_eq!((error["code"].as_str(), error["messageId"].as_str()), (Some("PROVIDER_AUTH"), Some("profile.key_missing")), "{error}");
    assert_eq!(error["params"]["name"], "local");
    assert!(error["hints"].as_array().unwrap().iter().any(|h| h["id"] == "set_api_key"));
    assert!(server.requests().is_empty());
}

/// A server on this computer that is not running is worded as such ("nothing answers
/// at …"), not as a provider that may be down or overloaded: in "load models" and in
/// "test connection". A hosted URL keeps the general wording.
#[test]
fn a_local_server_that_is_not_running_says_so() {
    let t = TestEngine::new();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}/v1");
    let listed = t.engine.call("llmProfile.models", json!({"baseUrl": url})).unwrap_err();
    assert_eq!((listed.code, listed.message_id.as_deref()), (ErrorCode::ProviderUnavailable, Some("profile.local_server_down")), "{listed:?}");
    assert_eq!(listed.params.as_deref().and_then(|p| p.get("url")), Some(&url));
    let hints: Vec<&str> = listed.hints.iter().map(|h| h.id.as_str()).collect();
    assert_eq!(hints, vec!["check_server_running"]);
    create(&t, "local", &url, json!({}));
    let tested = t.ok("llmProfile.test", json!({"profile": "local"}));
    assert_eq!(tested["error"]["messageId"], "profile.local_server_down", "{tested}");
    assert_eq!(tested["error"]["params"]["url"], url.as_str());
}

/// A recorded server answer from `tests/fixtures/llm-servers/`: its status and body.
fn recorded(name: &str) -> (u16, Value) {
    let path = inkstone_test_support::fixtures_dir().join("llm-servers").join(name);
    let value: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))).unwrap();
    (value["status"].as_u64().unwrap() as u16, value["body"].clone())
}

/// A fake server that answers `routes` (method, path, fixture) as the real one did.
fn server_answering(routes: &[(&str, &str, &str)]) -> ModelServer {
    let server = ModelServer::start(vec![]);
    server.set_fallback(Reply::text("OK"));
    for (method, path, fixture) in routes {
        let (status, body) = recorded(fixture);
        server.set_route(method, path, status, body);
    }
    server
}

#[test]
fn the_window_is_read_from_each_server_family_at_save_and_test() {
    // (server, its recorded answers, the model, the window, its source, origin)
    type Routes<'a> = Vec<(&'a str, &'a str, &'a str)>;
    let cases: Vec<(&str, Routes<'_>, &str, u64, &str, &str)> = vec![
        ("llama.cpp", vec![("GET", "/props", "llama-cpp-props.json")], "default", 4096, "llamaCppProps", "server"),
        ("Ollama, running", vec![("GET", "/api/ps", "ollama-ps.json"), ("POST", "/api/show", "ollama-show.json")], "qwen2.5:7b", 4096, "ollamaRunning", "server"),
        ("Ollama, num_ctx", vec![("POST", "/api/show", "ollama-show-num-ctx.json")], "qwen2.5:7b", 16384, "ollamaNumCtx", "server"),
        // The trained maximum only bounds the window: the cautious default stays.
        ("Ollama, the model's maximum", vec![("POST", "/api/show", "ollama-show.json")], "qwen2.5:7b", 8192, "ollamaModelMax", "assumed"),
        ("LM Studio", vec![("GET", "/api/v0/models", "lm-studio-models.json")], "qwen2.5-7b-instruct", 4096, "lmStudioLoaded", "server"),
        ("vLLM", vec![("GET", "/v1/models", "vllm-models.json")], "Qwen/Qwen2.5-7B-Instruct", 32768, "vllmMaxModelLen", "server"),
    ];
    for (label, routes, model, window, source, origin) in cases {
        let server = server_answering(&routes);
        let t = TestEngine::new();
        // Saved without a figure: the server on this computer is asked at once.
        let saved = t.ok("llmProfile.create", json!({"name": "local", "baseUrl": server.base_url(), "model": model}));
        let profile = &saved["profile"];
        assert_eq!(profile["contextWindow"], window, "{label}: {profile}");
        assert_eq!((profile["contextWindowOrigin"].as_str(), profile["serverWindow"]["source"].as_str()), (Some(origin), Some(source)), "{label}");
        assert_eq!(saved["warnings"], json!([]), "{label}");
        // The test asks again, after the model answered.
        let tested = t.ok("llmProfile.test", json!({"profile": "local"}));
        assert_eq!(tested["ok"], true, "{label}");
        assert_eq!((tested["profile"]["contextWindow"].as_u64(), tested["profile"]["serverWindow"]["source"].as_str()), (Some(window), Some(source)), "{label}");
        assert!(tested.get("warnings").is_none(), "{label}: {tested}");
        server.assert_calls(1);
    }
    // A server that says nothing (a hosted API): the assumed figure, and no warning.
    let server = server_answering(&[]);
    let t = TestEngine::new();
    let saved = t.ok("llmProfile.create", json!({"name": "plain", "baseUrl": server.base_url(), "model": "fake-model"}));
    assert_eq!((saved["profile"]["contextWindow"].as_u64(), saved["profile"]["contextWindowOrigin"].as_str()), (Some(8192), Some("assumed")));
    assert!(saved["profile"].get("serverWindow").is_none());
}

#[test]
fn the_persons_window_wins_and_a_disagreement_is_warned() {
    let server = server_answering(&[("GET", "/props", "llama-cpp-props.json")]);
    let t = TestEngine::new();
    let saved = t.ok("llmProfile.create", json!({"name": "llama", "baseUrl": server.base_url(), "model": "default", "contextWindow": 8192}));
    assert_eq!((saved["profile"]["contextWindow"].as_u64(), saved["profile"]["contextWindowOrigin"].as_str()), (Some(8192), Some("person")));
    let tested = t.ok("llmProfile.test", json!({"profile": "llama"}));
    assert_eq!(tested["profile"]["contextWindow"], 8192, "the person's figure wins");
    assert_eq!(tested["profile"]["serverWindow"]["tokens"], 4096);
    let warning = &tested["warnings"][0];
    assert_eq!(warning["id"], "window_disagrees");
    assert_eq!((warning["params"]["configured"].as_str(), warning["params"]["server"].as_str()), (Some("8192"), Some("4096")));
    assert!(warning["message"].as_str().unwrap().contains("llama.cpp /props n_ctx"), "{warning}");
    // Saving again keeps warning while the figures differ; clearing the figure takes the server's.
    let again = t.ok("llmProfile.update", json!({"profile": "llama", "changes": {"name": "llama", "baseUrl": server.base_url(), "model": "default", "contextWindow": 8192}}));
    assert_eq!(again["warnings"][0]["id"], "window_disagrees");
    let cleared = t.ok("llmProfile.update", json!({"profile": "llama", "changes": {"name": "llama", "baseUrl": server.base_url(), "model": "default"}}));
    assert_eq!((cleared["profile"]["contextWindow"].as_u64(), cleared["profile"]["contextWindowOrigin"].as_str()), (Some(4096), Some("server")));
    assert_eq!(cleared["warnings"], json!([]));
    // A figure that agrees is no warning.
    let agreed = t.ok("llmProfile.update", json!({"profile": "llama", "changes": {"name": "llama", "baseUrl": server.base_url(), "model": "default", "contextWindow": 4096}}));
    assert_eq!(agreed["warnings"], json!([]));
}

#[test]
fn an_overflow_names_the_numbers_and_how_to_enlarge_the_profiles_server() {
    let server = server_answering(&[("GET", "/api/ps", "ollama-ps.json")]);
    let t = TestEngine::new();
    t.ok("llmProfile.create", json!({"name": "ollama", "baseUrl": server.base_url(), "model": "qwen2.5:7b"}));
    let (status, body) = recorded("ollama-overflow.json");
    server.push(Reply::error(status, body));
    let call = ModelCall { profile: "ollama", purpose: "optimize", session_id: None, run_id: Some("run_1") };
    let error = t.engine.model_chat(call, &ChatRequest::new(vec![Message::user("a long article")]), &mut |_| {}, &Cancel::new()).unwrap_err();
    assert_eq!(error.code, ErrorCode::ContextTooLong);
    let details = error.details.clone().unwrap();
    assert_eq!((details["promptTokens"].as_u64(), details["contextWindow"].as_u64(), details["server"].as_str()), (Some(8889), Some(4096), Some("ollama")));
    let ids: Vec<&str> = error.hints.iter().map(|h| h.id.as_str()).collect();
    assert_eq!(ids, ["fewer_platforms", "smaller_selection", "larger_window_ollama"], "Ollama's wrapped llama.cpp wording is said for Ollama");
    let larger = error.hints.last().unwrap();
    assert!(larger.message.contains("OLLAMA_CONTEXT_LENGTH=16384") && larger.message.contains("num_ctx 16384"), "{}", larger.message);
    assert!(!error.message.contains("OpenAI-compatible"), "{}", error.message);
}

#[test]
fn a_profiles_temperature_and_seed_go_with_every_request() {
    let server = ModelServer::start(vec![Reply::text("one"), Reply::text("two")]);
    let t = TestEngine::new();
    create(&t, "seeded", &server.base_url(), json!({"temperature": 0.0, "seed": 4242}));
    create(&t, "plain", &server.base_url(), json!({}));
    // A step that chooses its own temperature (Ask's 0.2) gets the person's instead.
    let mut request = ChatRequest::new(vec![Message::user("x")]);
    request.temperature = Some(0.2);
    for profile in ["seeded", "plain"] {
        let call = ModelCall { profile, purpose: "ask", session_id: None, run_id: None };
        t.engine.model_chat(call, &request, &mut |_| {}, &Cancel::new()).unwrap();
    }
    let bodies: Vec<Value> = server.chat_requests().into_iter().map(|r| r.body).collect();
    assert_eq!((bodies[0]["temperature"].as_f64(), bodies[0]["seed"].as_u64()), (Some(0.0), Some(4242)));
    assert_eq!((bodies[1]["temperature"].as_f64().map(|t| (t * 10.0).round()), bodies[1].get("seed")), (Some(2.0), None), "without them the step's own, and no seed");
    let profile = t.ok("llmProfile.get", json!({"profile": "seeded"}));
    assert_eq!((profile["temperature"].as_f64(), profile["seed"].as_u64()), (Some(0.0), Some(4242)));

    let refused = t.engine.call("llmProfile.create", json!({"name": "hot", "baseUrl": server.base_url(), "model": "m", "temperature": 3.5})).unwrap_err();
    assert_eq!((refused.code, refused.details.unwrap()["field"].clone()), (ErrorCode::Validation, json!("temperature")));
}

#[test]
fn a_server_that_states_no_window_is_said_so_at_test_not_guessed_silently() {
    // The scripted server answers chat but has no /props, /api/show or model list with
    // a window (as llama-cpp-python's server).
    let server = ModelServer::start(vec![Reply::text("OK"), Reply::text("OK")]);
    let t = TestEngine::new();
    create(&t, "unknown", &server.base_url(), json!({}));
    create(&t, "mine", &server.base_url(), json!({"contextWindow": 4096}));
    let result = t.ok("llmProfile.test", json!({"profile": "unknown"}));
    assert_eq!((result["ok"].as_bool(), result["profile"]["contextWindowOrigin"].as_str()), (Some(true), Some("assumed")));
    let warning = result["warnings"].as_array().unwrap().iter().find(|w| w["id"] == "window_unknown").cloned().unwrap_or_default();
    assert_eq!(warning["params"]["assumed"], result["profile"]["contextWindow"].to_string(), "the assumed figure is named: {result}");
    let result = t.ok("llmProfile.test", json!({"profile": "mine"}));
    assert!(result["warnings"].as_array().is_none_or(Vec::is_empty), "the person's figure is no guess: {result}");
}

/// A proxy on loopback that refuses every request (403, so nothing is retried) and
/// records each request's first line. Stops when dropped.
struct RefusingProxy {
    url: String,
    lines: Arc<Mutex<Vec<String>>>,
    stop: Arc<std::sync::atomic::AtomicBool>,
}

impl RefusingProxy {
    fn start() -> RefusingProxy {
        use std::io::{BufRead, BufReader};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let lines = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (seen, stopped) = (Arc::clone(&lines), Arc::clone(&stop));
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stopped.load(std::sync::atomic::Ordering::SeqCst) {
                    return;
                }
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut head = Vec::new();
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    head.push(line.trim_end().to_owned());
                }
                seen.lock().unwrap().extend(head.into_iter().take(1));
                let _ = stream.write_all(b"HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
            }
        });
        RefusingProxy { url, lines, stop }
    }

    fn lines(&self) -> Vec<String> {
        self.lines.lock().unwrap().clone()
    }
}

impl Drop for RefusingProxy {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        let _ = std::net::TcpStream::connect(self.url.trim_start_matches("http://"));
    }
}

/// Model calls share one HTTP client per network settings (built once: it loads the
/// system's root certificates), and a profile whose proxy changed sends through the
/// new proxy from its next call, never on the client of its old settings.
#[test]
fn a_changed_profile_gets_a_new_http_client() {
    let server = ModelServer::start(vec![]);
    server.set_fallback(Reply::text("OK"));
    let t = TestEngine::new();
    create(&t, "p", &server.base_url(), json!({"contextWindow": 8192}));
    let call = ModelCall { profile: "p", purpose: "ask", session_id: None, run_id: None };
    let chat = || t.engine.model_chat(call, &ChatRequest::new(vec![Message::user("x")]), &mut |_| {}, &Cancel::new());
    chat().unwrap();
    let built = t.engine.llm().http_clients_built();
    chat().unwrap();
    chat().unwrap();
    assert_eq!(t.engine.llm().http_clients_built(), built, "the same settings use the kept client");
    assert_eq!(server.chat_requests().len(), 3);

    let proxy = RefusingProxy::start();
    let changes = |proxy: Option<&str>| {
        let mut changes = json!({"name": "p", "baseUrl": server.base_url(), "model": "fake-model", "contextWindow": 8192});
        if let Some(proxy) = proxy {
            changes["proxyUrl"] = json!(proxy);
        }
        json!({"profile": "p", "changes": changes})
    };
    t.ok("llmProfile.update", changes(Some(&proxy.url)));
    let refused = chat().unwrap_err();
    assert_eq!(refused.code, ErrorCode::ProviderAuth, "the proxy's 403: {refused:?}");
    let chat_url = format!("{}/chat/completions", server.base_url());
    assert!(proxy.lines().iter().any(|l| l.starts_with("POST ") && l.contains(&chat_url)), "the call went through the new proxy: {:?}", proxy.lines());
    assert_eq!(server.chat_requests().len(), 3, "nothing went straight to the server");
    assert!(t.engine.llm().http_clients_built() > built);

    // Back without the proxy: straight to the server again, on the client kept for it.
    t.ok("llmProfile.update", changes(None));
    let built = t.engine.llm().http_clients_built();
    assert_eq!(chat().unwrap().text, "OK");
    assert_eq!(server.chat_requests().len(), 4);
    assert_eq!(t.engine.llm().http_clients_built(), built);
}
