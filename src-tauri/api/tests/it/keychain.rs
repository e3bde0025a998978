//! The real OS keychain. These need a keychain service, so they run when asked:
//! `INKSTONE_TEST_SECRET_SERVICE=1` (scripts/test sets it inside `dbus-run-session`
//! with an unlocked gnome-keyring and a temporary XDG_DATA_HOME) and
//! `INKSTONE_TEST_KEYUTILS=1` (inside `keyctl session -`).

use std::sync::Arc;

use inkstone_api::llm::keychain::{account_for_profile, KeychainBackend, OsKeychain, SecretStore};
use inkstone_api::llm::ApiKey;
use inkstone_api::{Engine, EngineConfig};
use inkstone_test_support::model_server::{ModelServer, Reply};
use serde_json::json;

fn enabled(var: &str) -> bool {
    let on = std::env::var(var).as_deref() == Ok("1");
    if !on {
        eprintln!("skipped: set {var}=1 to test the real keychain (scripts/test does)");
    }
    on
}

fn roundtrip(backend: KeychainBackend) {
    let account = format!("inkstone-test:{}", std::process::id());
    let key = ApiKey::new("sk-keychain-roundtrip-0123456789");
    OsKeychain::new(backend).set(&account, &key).unwrap();
    // A fresh instance reads it back: it is in the OS store, not in this process.
    assert_eq!(OsKeychain::new(backend).get(&account).unwrap(), Some(key.clone()));
    let replaced = ApiKey::new("sk-keychain-replaced-9876543210");
    OsKeychain::new(backend).set(&account, &replaced).unwrap();
    assert_eq!(OsKeychain::new(backend).get(&account).unwrap(), Some(replaced));
    OsKeychain::new(backend).delete(&account).unwrap();
    assert_eq!(OsKeychain::new(backend).get(&account).unwrap(), None);
    OsKeychain::new(backend).delete(&account).unwrap();
}

#[test]
fn secret_service_stores_reads_and_deletes() {
    if enabled("INKSTONE_TEST_SECRET_SERVICE") {
        roundtrip(KeychainBackend::Platform);
    }
}

#[test]
fn kernel_keyring_stores_reads_and_deletes() {
    if enabled("INKSTONE_TEST_KEYUTILS") {
        roundtrip(KeychainBackend::KernelKeyring);
    }
}

#[test]
fn a_profile_key_lives_in_the_secret_service_only() {
    if !enabled("INKSTONE_TEST_SECRET_SERVICE") {
        return;
    }
    const KEY: &str = "sk-real-keychain-5e5e5e5e5e5e";
    let server = ModelServer::start(vec![Reply::text("OK")]);
    server.require_key(Some(KEY));
    let dir = tempfile::tempdir().unwrap();
    let config = EngineConfig::for_tests(dir.path()).with_secrets(Arc::new(OsKeychain::new(KeychainBackend::Platform)));
    let engine = Engine::open(config).unwrap();
    // One call stores the key in the OS keychain and the profile in the store.
    let profile = engine.call("llmProfile.create", json!({"name": "p", "baseUrl": server.base_url(), "model": "m", "keyRequired": true, "apiKey": KEY})).unwrap();
    let id = profile["profile"]["id"].as_str().unwrap().to_owned();
    assert_eq!(OsKeychain::new(KeychainBackend::Platform).get(&account_for_profile(&id)).unwrap(), Some(ApiKey::new(KEY)));
    assert_eq!(engine.call("llmProfile.test", json!({"profile": "p"})).unwrap()["ok"], true);
    // Removed outside the app (`secret-tool clear`, say): listed as missing, and a test
    // fails before sending anything rather than with the server's 401.
    OsKeychain::new(KeychainBackend::Platform).delete(&account_for_profile(&id)).unwrap();
    assert_eq!(engine.call("llmProfile.list", json!({})).unwrap()["missingKeys"], json!([id]));
    let failed = engine.call("llmProfile.test", json!({"profile": "p"})).unwrap();
    assert_eq!(failed["error"]["messageId"], "profile.key_gone");
    server.assert_calls(1);
    engine.call("llmProfile.setKey", json!({"profile": "p", "apiKey": KEY})).unwrap();
    engine.call("llmProfile.delete", json!({"profile": "p"})).unwrap();
    assert_eq!(OsKeychain::new(KeychainBackend::Platform).get(&account_for_profile(&id)).unwrap(), None, "deleting the profile deletes its key");
    drop(engine);
    let found: Vec<String> = inkstone_test_support::read_tree(dir.path()).into_iter().filter(|(_, b)| b.windows(KEY.len()).any(|w| w == KEY.as_bytes())).map(|(p, _)| p).collect();
    assert!(found.is_empty(), "the key is in {found:?}");
}
