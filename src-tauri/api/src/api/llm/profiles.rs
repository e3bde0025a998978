//! A profile's records: created, updated, listed, read, deleted, made the default,
//! its key set, and its context settings (see [`super`]).

use super::{bad_base_url, LlmPresetListResult, LlmProfileInput, LlmProfileListResult, LlmProfileRef, LlmProfileSaved, LlmProfileSetCompactionParams, LlmProfileSetKeyParams};
use super::{LlmProfileUpdateParams, WINDOW_PROBE_TIMEOUT};
use crate::api::{required_text, ApiError, Deleted, Empty, Engine, ErrorCode, Hint};
use crate::llm::keychain::account_for_profile;
use crate::llm::profile::{check_proxy_url, key_would_travel_in_clear, normalize_base_url, presets, Health, LlmProfile, Provider};
use crate::llm::ApiKey;
use crate::store::{Batch, Durability};

const DEFAULT_TIMEOUT_S: u32 = 60;

fn plain_http_warning() -> Hint {
    Hint::new("plain_http_key", "This URL uses plain HTTP to another machine: the API key would cross the network unencrypted. Use https:// if the server offers it.")
}

fn validate_price(field: &str, value: Option<f64>) -> Result<Option<f64>, ApiError> {
    match value {
        Some(price) if !price.is_finite() || price < 0.0 => Err(ApiError::validation(field, format!("`{field}` must be a number ≥ 0."))),
        other => Ok(other),
    }
}
/// Checks an input and fills `profile` from it.
fn fill(profile: &mut LlmProfile, input: LlmProfileInput) -> Result<(), ApiError> {
    profile.name = required_text("name", &input.name, 100)?;
    profile.provider = input.provider.map_or(Provider::OpenaiCompatible, Into::into);
    profile.base_url = normalize_base_url(&input.base_url).map_err(bad_base_url)?;
    profile.model = required_text("model", &input.model, 200)?;
    profile.embedding_model = match input.embedding_model.as_deref().map(str::trim).filter(|m| !m.is_empty()) {
        Some(model) => Some(required_text("embeddingModel", model, 200)?),
        None => None,
    };
    let timeout_s = input.timeout_s.unwrap_or(DEFAULT_TIMEOUT_S);
    if !(1..=3600).contains(&timeout_s) {
        return Err(ApiError::validation("timeoutS", "`timeoutS` must be between 1 and 3600 seconds."));
    }
    profile.timeout_s = timeout_s;
    if input.context_window.is_some_and(|w| w < 256) {
        return Err(ApiError::validation("contextWindow", "`contextWindow` must be at least 256 tokens."));
    }
    profile.settle_window(input.context_window);
    let context_window = profile.context_window;
    if let Some(max) = input.max_output_tokens {
        if max == 0 || max > context_window {
            return Err(ApiError::validation("maxOutputTokens", "`maxOutputTokens` must be between 1 and the context window."));
        }
    }
    profile.max_output_tokens = input.max_output_tokens;
    if input.temperature.is_some_and(|t| !(0.0..=2.0).contains(&t)) {
        return Err(ApiError::validation("temperature", "`temperature` must be between 0 and 2."));
    }
    profile.temperature = input.temperature;
    profile.seed = input.seed;
    profile.input_price_per_mtok = validate_price("inputPricePerMtok", input.input_price_per_mtok)?;
    profile.output_price_per_mtok = validate_price("outputPricePerMtok", input.output_price_per_mtok)?;
    profile.key_required = input.key_required.unwrap_or(!crate::llm::profile::is_loopback(&profile.base_url));
    profile.supports_json_schema = input.supports_json_schema.unwrap_or(false);
    profile.schema_form = input.schema_form.map(Into::into).unwrap_or_default();
    profile.tool_loading = input.tool_loading.map(Into::into).unwrap_or_default();
    profile.proxy_url = match input.proxy_url.as_deref().map(str::trim).filter(|p| !p.is_empty()) {
        // The message never repeats the URL: it may hold a password.
        Some(proxy) => Some(check_proxy_url(proxy).map_err(|bad| {
            ApiError::validation("proxyUrl", format!("The proxy URL is not usable: {}.", bad.0))
                .hint("proxy_without_credentials", "Give the proxy as http://host:port; for a proxy that needs a password, use the system proxy settings or a local forwarder.")
        })?),
        None => None,
    };
    profile.ca_cert_path = input.ca_cert_path.map(|p| p.trim().to_owned()).filter(|p| !p.is_empty());
    Ok(())
}

fn warnings(profile: &LlmProfile) -> Vec<Hint> {
    let mut warnings = Vec::new();
    if profile.key_required && key_would_travel_in_clear(&profile.base_url) {
        warnings.push(plain_http_warning());
    }
    warnings.extend(profile.window_disagreement());
    warnings
}
/// Asks a server on this computer for its window when a profile is saved without the
/// person's figure, so a budget never runs on a guess the server could have
/// corrected (a llama.cpp server started with `-c 4096`). Another machine is asked
/// when the profile is tested. Nothing is asked, and `None` returned, otherwise.
/// Only a server that takes no key is asked (nothing goes to a server that wants one
/// before its key is there).
fn window_on_save(engine: &Engine, input: &LlmProfileInput, has_key: bool) -> Option<crate::llm::window::ServerWindow> {
    let (base_url, model, person) = (&input.base_url, &input.model, input.context_window);
    let base_url = normalize_base_url(base_url).ok()?;
    let local = crate::llm::profile::is_loopback(&base_url);
    let keyless = !input.key_required.unwrap_or(!local) && !has_key && input.api_key.as_ref().is_none_or(|key| key.is_blank());
    if person.is_some() || !local || !keyless {
        return None;
    }
    let probe = LlmProfile { base_url, model: model.trim().to_owned(), ca_cert_path: None, proxy_url: None, ..blank_profile(engine.now()) };
    // Nothing goes to a server the workspace policy does not allow, not even a probe.
    crate::llm::check_policy(engine.store(), engine.config().clock.as_ref(), &probe, 0).ok()?;
    engine.llm().detect_window(&probe, None, WINDOW_PROBE_TIMEOUT, engine.now()).ok().flatten()
}

/// A profile with nothing set yet, as `create` starts one.
fn blank_profile(now: crate::model::Timestamp) -> LlmProfile {
    LlmProfile {
        id: String::new(),
        name: String::new(),
        provider: Provider::OpenaiCompatible,
        base_url: String::new(),
        model: String::new(),
        embedding_model: None,
        timeout_s: DEFAULT_TIMEOUT_S,
        context_window: crate::llm::profile::ASSUMED_CONTEXT_WINDOW,
        context_window_origin: crate::llm::window::WindowOrigin::Assumed,
        server_window: None,
        max_output_tokens: None,
        temperature: None,
        seed: None,
        input_price_per_mtok: None,
        output_price_per_mtok: None,
        key_required: true,
        key_fingerprint: None,
        supports_json_schema: false,
        schema_form: crate::llm::profile::SchemaForm::ResponseFormat,
        structured_form: None,
        tool_loading: crate::llm::profile::ToolLoading::All,
        proxy_url: None,
        ca_cert_path: None,
        is_default: false,
        health: Health::Unknown,
        last_tested_at: None,
        last_latency_ms: None,
        last_error: None,
        created_at: now,
        updated_at: now,
    }
}

/// A key given with a save, trimmed and checked before anything is written: at most
/// 4096 characters without control characters, and not sent unencrypted to another
/// machine unless `allow_plain_http` confirms it. Blank is `None`. The errors never
/// repeat the key.
fn checked_key(profile: &LlmProfile, key: Option<ApiKey>, allow_plain_http: Option<bool>) -> Result<Option<ApiKey>, ApiError> {
    let Some(key) = key.filter(|k| !k.is_blank()) else { return Ok(None) };
    // Surrounding white space (a pasted line break) is not part of a key.
    let key = ApiKey::new(key.expose().trim());
    if key.expose().chars().count() > 4096 || key.expose().chars().any(char::is_control) {
        return Err(ApiError::validation("apiKey", "The API key must be at most 4096 characters without line breaks or control characters."));
    }
    if key_would_travel_in_clear(&profile.base_url) && allow_plain_http != Some(true) {
        let hint = plain_http_warning();
        return Err(ApiError::validation("apiKey", "The key was not saved: this profile's URL would send it unencrypted to another machine.")
            .hint(&hint.id, hint.message)
            .hint("allow_plain_http", "To send it anyway (a trusted local network), confirm with allowPlainHttp."));
    }
    Ok(Some(key))
}

/// Saves a profile and, when given, its key as one operation: the key goes to the
/// keychain first (a refusal writes nothing), then the profile to the store; if the
/// store fails, the keychain entry is put back as it was (`previous`) and the record
/// too (`before`, or no record for a new profile), since a failed sync may follow a
/// commit. Nothing is left half made: no profile whose key was lost, no key without
/// its profile.
fn save_with_key(engine: &Engine, profile: &mut LlmProfile, key: Option<ApiKey>, before: Option<&LlmProfile>) -> Result<(), ApiError> {
    let secrets = &engine.config().secrets;
    let account = account_for_profile(&profile.id);
    let mut previous = None;
    if let Some(key) = &key {
        if before.is_some_and(|b| b.key_fingerprint.is_some()) {
            previous = secrets.get(&account)?;
        }
        secrets.set(&account, key)?;
        profile.key_fingerprint = Some(key.fingerprint());
        profile.health = Health::Unknown;
        profile.last_error = None;
    }
    let mut batch = Batch::new();
    batch.put(&*profile)?;
    let Err(error) = engine.store().apply(batch, Durability::Durable) else { return Ok(()) };
    if key.is_some() {
        let mut undo = Batch::new();
        let undone = match before {
            Some(record) => undo.put(record).map(|_| ()),
            None => {
                undo.delete::<LlmProfile>(profile.id.as_bytes().to_vec());
                Ok(())
            }
        };
        if let Err(undo_error) = undone.and_then(|()| engine.store().apply(undo, Durability::Durable)) {
            tracing::error!(profile = %profile.id, error = %undo_error, "the profile could not be put back after a failed save");
        }
        let restored = match &previous {
            Some(old) => secrets.set(&account, old),
            None => secrets.delete(&account),
        };
        if let Err(keychain_error) = restored {
            tracing::error!(profile = %profile.id, error = %keychain_error, "the keychain entry could not be put back after a failed save");
        }
    }
    Err(error.into())
}
fn check_name_free(engine: &Engine, name: &str, except_id: Option<&str>) -> Result<(), ApiError> {
    let taken = engine.store().scan::<LlmProfile>(b"")?.into_iter().any(|p| p.name.to_lowercase() == name.to_lowercase() && Some(p.id.as_str()) != except_id);
    if taken {
        return Err(ApiError::new(ErrorCode::Conflict, format!("An LLM profile named \"{name}\" already exists."))
            .problem("profile.name_taken", &[("name", name)])
            .details(serde_json::json!({ "field": "name" })));
    }
    Ok(())
}

pub(in crate::api) fn create(engine: &Engine, mut input: LlmProfileInput) -> Result<LlmProfileSaved, ApiError> {
    // Asked before the write lock: a slow server must not hold up other writes.
    let server_window = window_on_save(engine, &input, false);
    let _guard = engine.write_lock();
    let (key, allow_plain_http) = (input.api_key.take().map(Into::into), input.allow_plain_http.take());
    let mut profile = LlmProfile { id: engine.new_id("llm"), server_window, ..blank_profile(engine.now()) };
    fill(&mut profile, input)?;
    check_name_free(engine, &profile.name, None)?;
    let key = checked_key(&profile, key, allow_plain_http)?;
    profile.is_default = engine.store().scan::<LlmProfile>(b"")?.iter().all(|p| !p.is_default);
    save_with_key(engine, &mut profile, key, None)?;
    let warnings = warnings(&profile);
    Ok(LlmProfileSaved { profile: (&profile).into(), warnings: warnings.iter().map(Into::into).collect() })
}

pub(in crate::api) fn update(engine: &Engine, params: LlmProfileUpdateParams) -> Result<LlmProfileSaved, ApiError> {
    let before = engine.llm_profile(&params.profile)?;
    let moved = normalize_base_url(&params.changes.base_url).ok().as_deref() != Some(before.base_url.as_str()) || params.changes.model.trim() != before.model;
    // Another endpoint's window says nothing about this one: asked again (before the
    // write lock), or forgotten.
    let asked = if moved || before.server_window.is_none() { window_on_save(engine, &params.changes, before.key_fingerprint.is_some()) } else { None };
    let _guard = engine.write_lock();
    let mut changes = params.changes;
    let (key, allow_plain_http) = (changes.api_key.take().map(Into::into), changes.allow_plain_http.take());
    let mut profile = engine.llm_profile(&params.profile)?;
    let stored = profile.clone();
    if moved {
        // What another server took says nothing about this one.
        profile.server_window = None;
        profile.structured_form = None;
    }
    if asked.is_some() {
        profile.server_window = asked;
    }
    fill(&mut profile, changes)?;
    check_name_free(engine, &profile.name, Some(&profile.id))?;
    let key = checked_key(&profile, key, allow_plain_http)?;
    if (&stored.base_url, &stored.model) != (&profile.base_url, &profile.model) {
        // The last test was of another endpoint.
        profile.health = Health::Unknown;
        profile.last_error = None;
    }
    profile.updated_at = engine.now();
    save_with_key(engine, &mut profile, key, Some(&stored))?;
    let warnings = warnings(&profile);
    Ok(LlmProfileSaved { profile: (&profile).into(), warnings: warnings.iter().map(Into::into).collect() })
}

pub(in crate::api) fn list(engine: &Engine, _: Empty) -> Result<LlmProfileListResult, ApiError> {
    let mut profiles = engine.store().scan::<LlmProfile>(b"")?;
    profiles.sort_by(|a, b| a.name.to_lowercase().cmp(&b.name.to_lowercase()).then_with(|| a.id.cmp(&b.id)));
    let env_key_active = engine.config().env_api_key.is_some();
    let mut missing_keys = Vec::new();
    if !env_key_active {
        // Only profiles with a saved key touch the keychain.
        for profile in profiles.iter().filter(|p| p.key_fingerprint.is_some()) {
            match engine.config().secrets.get(&account_for_profile(&profile.id)) {
                Ok(Some(_)) => {}
                Ok(None) => missing_keys.push(profile.id.clone()),
                Err(error) => {
                    tracing::debug!(%error, "the keychain could not be read to list profiles");
                    break;
                }
            }
        }
    }
    Ok(LlmProfileListResult { profiles: profiles.iter().map(Into::into).collect(), env_key_active, missing_keys })
}

pub(in crate::api) fn get(engine: &Engine, params: LlmProfileRef) -> Result<crate::api::dto::LlmProfile, ApiError> {
    engine.llm_profile(&params.profile).map(Into::into)
}

pub(in crate::api) fn list_presets(_: &Engine, _: Empty) -> Result<LlmPresetListResult, ApiError> {
    Ok(LlmPresetListResult { presets: presets().into_iter().map(Into::into).collect() })
}

pub(in crate::api) fn delete(engine: &Engine, params: LlmProfileRef) -> Result<Deleted, ApiError> {
    let _guard = engine.write_lock();
    let profile = engine.llm_profile(&params.profile)?;
    if profile.key_fingerprint.is_some() {
        // Refuse rather than leave a key behind in the keychain.
        engine.config().secrets.delete(&account_for_profile(&profile.id))?;
    }
    let mut batch = Batch::new();
    batch.delete::<LlmProfile>(profile.id.as_bytes().to_vec());
    if profile.is_default {
        let mut others = engine.store().scan::<LlmProfile>(b"")?;
        others.retain(|p| p.id != profile.id);
        others.sort_by_key(|p| p.name.to_lowercase());
        if let Some(mut next) = others.into_iter().next() {
            next.is_default = true;
            batch.put(&next)?;
        }
    }
    engine.store().apply(batch, Durability::Durable)?;
    Ok(Deleted { id: profile.id, deleted: true })
}

pub(in crate::api) fn set_default(engine: &Engine, params: LlmProfileRef) -> Result<crate::api::dto::LlmProfile, ApiError> {
    let _guard = engine.write_lock();
    let chosen = engine.llm_profile(&params.profile)?;
    let mut batch = Batch::new();
    let mut result = chosen.clone();
    for mut profile in engine.store().scan::<LlmProfile>(b"")? {
        let is_default = profile.id == chosen.id;
        if profile.is_default != is_default {
            profile.is_default = is_default;
            batch.put(&profile)?;
        }
        if is_default {
            result = profile;
        }
    }
    engine.store().apply(batch, Durability::Durable)?;
    Ok(result.into())
}

pub(in crate::api) fn set_key(engine: &Engine, params: LlmProfileSetKeyParams) -> Result<crate::api::dto::LlmProfile, ApiError> {
    let _guard = engine.write_lock();
    let mut profile = engine.llm_profile(&params.profile)?;
    let stored = profile.clone();
    let key = checked_key(&profile, params.api_key.map(Into::into), params.allow_plain_http)?;
    if key.is_none() {
        // Refuse rather than say "no key" while one is still in the keychain.
        engine.config().secrets.delete(&account_for_profile(&profile.id))?;
        profile.key_fingerprint = None;
    }
    profile.health = Health::Unknown;
    profile.last_error = None;
    profile.updated_at = engine.now();
    save_with_key(engine, &mut profile, key, Some(&stored))?;
    Ok(profile.into())
}
/// A profile's context settings: its token-estimate calibration and compaction threshold.
pub(in crate::api) fn context(engine: &Engine, params: LlmProfileRef) -> Result<crate::harness::compaction::ProfileContext, ApiError> {
    let profile = engine.llm_profile(&params.profile)?;
    crate::harness::compaction::profile_context(engine.store(), &profile.id)
}

pub(in crate::api) fn set_compaction(engine: &Engine, params: LlmProfileSetCompactionParams) -> Result<crate::harness::compaction::ProfileContext, ApiError> {
    crate::harness::compaction::set_profile_threshold(engine, &params.profile, params.threshold.map(Into::into))
}
