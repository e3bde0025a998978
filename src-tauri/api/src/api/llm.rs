//! LLM profiles over the API (`llmProfile.*`) and [`Engine::model_chat`], the one way
//! the engine calls a model: it resolves exactly the profile it was given (no silent
//! fallback), takes the key from the process environment or the OS keychain, checks
//! the workspace quotas before anything is sent, and records every call's usage.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::{required_text, ApiError, Deleted, Empty, Engine, ErrorCode, Hint};
use crate::llm::keychain::account_for_profile;
use crate::llm::profile::{check_proxy_url, key_would_travel_in_clear, normalize_base_url, presets, BadUrl, Health, LlmProfile, ProfileError, Provider};
use crate::llm::{ApiKey, Cancel, Endpoint};
use crate::store::{Batch, Durability};

/// The editable fields of a profile. Absent optional fields take their defaults.
#[derive(Debug, Clone, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LlmProfileInput {
    pub name: String,
    /// Default: `openai-compatible`.
    #[serde(default)]
    #[ts(optional)]
    pub provider: Option<super::dto::Provider>,
    /// With or without `/v1`; normalised.
    pub base_url: String,
    pub model: String,
    /// The embedding model for semantic search; absent: search is lexical only.
    #[serde(default)]
    #[ts(optional)]
    pub embedding_model: Option<String>,
    /// Default 60.
    #[serde(default)]
    #[ts(optional)]
    pub timeout_s: Option<u32>,
    /// The person's figure, which wins over the server's. Absent: the window the
    /// server states (read when the profile is tested, and when a server on this
    /// computer is saved), else 8192 until it is asked.
    #[serde(default)]
    #[ts(optional)]
    pub context_window: Option<u32>,
    #[serde(default)]
    #[ts(optional)]
    pub max_output_tokens: Option<u32>,
    /// Every request's temperature (0–2), over the one a step would choose; absent:
    /// each step's own.
    #[serde(default)]
    #[ts(optional)]
    pub temperature: Option<f32>,
    /// A seed sent with every request (for reproducible sampling).
    #[serde(default)]
    #[ts(optional)]
    pub seed: Option<u32>,
    #[serde(default)]
    #[ts(optional)]
    pub input_price_per_mtok: Option<f64>,
    #[serde(default)]
    #[ts(optional)]
    pub output_price_per_mtok: Option<f64>,
    /// Default: true unless the server is on this machine.
    #[serde(default)]
    #[ts(optional)]
    pub key_required: Option<bool>,
    #[serde(default)]
    #[ts(optional)]
    pub supports_json_schema: Option<bool>,
    /// How the server is asked for a schema (default `responseFormat`).
    #[serde(default)]
    #[ts(optional)]
    pub schema_form: Option<super::dto::SchemaForm>,
    /// Which tool definitions a session sends (default `all`).
    #[serde(default)]
    #[ts(optional)]
    pub tool_loading: Option<super::dto::ToolLoading>,
    #[serde(default)]
    #[ts(optional)]
    pub proxy_url: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub ca_cert_path: Option<String>,
    /// The profile's API key, saved with it in one step: to the OS keychain first, then
    /// the profile, and if either fails neither is kept. Absent or blank: the stored key
    /// (if any) is kept; removing one is `llmProfile.setKey` without a key. The key is
    /// never serialized, logged or echoed.
    #[serde(default, skip_serializing)]
    #[ts(optional)]
    pub api_key: Option<super::dto::ApiKey>,
    /// Confirms sending `apiKey` over plain HTTP to a host that is not this machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub allow_plain_http: Option<bool>,
}

/// A profile named by id or name.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LlmProfileSetCompactionParams {
    pub profile: String,
    /// `{mode: "auto", percent}` (40–95) or `{mode: "manual"}`; absent: the default (80%).
    #[serde(default)]
    #[ts(optional)]
    pub threshold: Option<super::dto::CompactThreshold>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LlmProfileRef {
    pub profile: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LlmProfileUpdateParams {
    pub profile: String,
    /// The new values; absent optional fields take their defaults.
    pub changes: LlmProfileInput,
}

/// Sets or clears a profile's key. The key travels in these params only (IPC or the
/// loopback API), goes straight to the OS keychain, and is never logged or echoed.
#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LlmProfileSetKeyParams {
    pub profile: String,
    /// `null` removes the key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub api_key: Option<super::dto::ApiKey>,
    /// Confirms sending the key over plain HTTP to a host that is not this machine.
    #[serde(default)]
    #[ts(optional)]
    pub allow_plain_http: Option<bool>,
}

// The params hold a key; they are deserialized only, but the API table needs the
// trait. Serializing shows the fingerprint, never the key.
impl Serialize for LlmProfileSetKeyParams {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut state = serializer.serialize_struct("LlmProfileSetKeyParams", 2)?;
        state.serialize_field("profile", &self.profile)?;
        state.serialize_field("apiKey", &self.api_key.as_ref().map(|key| key.fingerprint()))?;
        state.end()
    }
}

/// A saved profile and anything the user should know about it.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct LlmProfileSaved {
    pub profile: super::dto::LlmProfile,
    pub warnings: Vec<super::dto::Hint>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct LlmProfileListResult {
    /// Sorted by name.
    pub profiles: Vec<super::dto::LlmProfile>,
    /// True when `INKSTONE_LLM_API_KEY` supplies a key to every profile in this process.
    pub env_key_active: bool,
    /// Ids of profiles whose saved key is no longer in the system keychain (deleted
    /// outside the app, or the data came from another machine): a call with one fails
    /// before anything is sent until the key is set again. Empty while `envKeyActive`,
    /// and when the keychain cannot be read (test connection then says why). Absent
    /// when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<String>>", optional)]
    pub missing_keys: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct LlmPresetListResult {
    pub presets: Vec<super::dto::LlmPreset>,
}

/// The result of "test connection". A failed test is a result (`ok: false` with the
/// error's code and hints), not an API error: the profile's health was updated.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct LlmTestResult {
    pub ok: bool,
    pub profile: super::dto::LlmProfile,
    /// The model id the server reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub model_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub latency_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub error: Option<super::dto::ApiError>,
    /// What the person should know: the profile's window disagrees with the server's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<super::dto::Hint>>", optional)]
    pub warnings: Vec<super::dto::Hint>,
    /// The token-estimate calibration, when this test seeded it from the server's own
    /// tokenizer (its `seed` says the counts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub calibration: Option<super::dto::ProfileContext>,
}

/// Lists a server's models: of a saved profile, or of a base URL being typed in
/// (then without a key).
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LlmModelsParams {
    #[serde(default)]
    #[ts(optional)]
    pub profile: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub base_url: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct LlmModelsResult {
    pub models: Vec<String>,
}

/// A local server found on its usual port.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct LocalServer {
    pub preset: super::dto::LlmPreset,
    pub models: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct LlmDetectLocalResult {
    pub found: Vec<LocalServer>,
}

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

/// A base URL that cannot be used, for saving a profile and for listing a server's
/// models alike: the UI words it in the person's language and shows the example.
fn bad_base_url(bad: BadUrl) -> ApiError {
    ApiError::validation("baseUrl", format!("The base URL is not usable: {}.", bad.0))
        .problem("profile.bad_base_url", &[])
        .hint("base_url_example", "For example http://127.0.0.1:11434/v1 or https://api.openai.com/v1.")
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

/// How long one question about the window may take: a server that answers at all
/// answers these at once.
const WINDOW_PROBE_TIMEOUT: Duration = Duration::from_secs(3);

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

/// A server on this computer that nobody answers for (no HTTP status at all) is not
/// "down or overloaded, try later": nothing listens at its address. Worded so, with
/// "check it is running" as the only hint. Any other error is returned as it is.
fn local_server_down(error: ApiError, base_url: &str) -> ApiError {
    let no_answer = error.code == ErrorCode::ProviderUnavailable && error.details.as_ref().is_some_and(|d| d.get("status").is_some_and(serde_json::Value::is_null));
    if !no_answer || !crate::llm::profile::is_loopback(base_url) {
        return error;
    }
    let mut error = error.problem("profile.local_server_down", &[("url", base_url)]);
    error.hints.retain(|h| h.id != "retry_later");
    error
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

pub(super) fn create(engine: &Engine, mut input: LlmProfileInput) -> Result<LlmProfileSaved, ApiError> {
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

pub(super) fn update(engine: &Engine, params: LlmProfileUpdateParams) -> Result<LlmProfileSaved, ApiError> {
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

pub(super) fn list(engine: &Engine, _: Empty) -> Result<LlmProfileListResult, ApiError> {
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

pub(super) fn get(engine: &Engine, params: LlmProfileRef) -> Result<super::dto::LlmProfile, ApiError> {
    engine.llm_profile(&params.profile).map(Into::into)
}

pub(super) fn list_presets(_: &Engine, _: Empty) -> Result<LlmPresetListResult, ApiError> {
    Ok(LlmPresetListResult { presets: presets().into_iter().map(Into::into).collect() })
}

pub(super) fn delete(engine: &Engine, params: LlmProfileRef) -> Result<Deleted, ApiError> {
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

pub(super) fn set_default(engine: &Engine, params: LlmProfileRef) -> Result<super::dto::LlmProfile, ApiError> {
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

pub(super) fn set_key(engine: &Engine, params: LlmProfileSetKeyParams) -> Result<super::dto::LlmProfile, ApiError> {
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

pub(super) fn test(engine: &Engine, params: LlmProfileRef) -> Result<LlmTestResult, ApiError> {
    let profile = engine.llm_profile(&params.profile)?;
    // The test call also finds the structured-output form the server takes.
    let (outcome, form) = engine.llm().test_connection(engine.store(), engine.config().clock.as_ref(), engine.config().ids.as_ref(), &profile, engine.now());
    // After the test call, which makes Ollama and LM Studio load the model: a loaded
    // model's window is the one requests get. Not when no key could be had (nothing is
    // sent without one) or nothing listens.
    let unreachable = outcome.as_ref().err().is_some_and(|e| {
        matches!(
            e.code,
            ErrorCode::ProviderAuth | ErrorCode::KeychainUnavailable | ErrorCode::Offline | ErrorCode::Validation | ErrorCode::QuotaExceeded | ErrorCode::PolicyRefused
        ) || (e.code == ErrorCode::ProviderUnavailable && e.details.as_ref().is_some_and(|d| d.get("status").is_some_and(serde_json::Value::is_null)))
    });
    let (detected, counted) = if unreachable {
        (None, None)
    } else {
        let key = engine.llm().resolve_key(&profile).ok().flatten();
        let detected = engine.llm().detect_window(&profile, key.clone(), WINDOW_PROBE_TIMEOUT, engine.now()).ok().flatten();
        // The server's tokenizer, where it offers one, says how it counts against the
        // estimate (a small model's tokenizer may give a Chinese character two tokens).
        // Each sample on its own, and the one the estimate undercounts most seeds the
        // ratio: a budget may waste a little room on English, never overflow on Chinese.
        let mut counted: Option<(u64, crate::llm::window::TokenizerEndpoint, u64)> = None;
        for sample in crate::llm::window::TOKENIZER_SAMPLES {
            let Some((tokens, endpoint)) = engine.llm().count_tokens(&profile, key.clone(), WINDOW_PROBE_TIMEOUT, sample).ok().flatten() else { break };
            let estimated = crate::llm::estimate_tokens(sample);
            if counted.is_none_or(|(t, _, e)| tokens * e > t * estimated) {
                counted = Some((tokens, endpoint, estimated));
            }
        }
        (detected, counted)
    };
    let _guard = engine.write_lock();
    let calibration = match counted {
        Some((server_tokens, endpoint, estimated_tokens)) => {
            let mut calibration = crate::harness::compaction::profile_context(engine.store(), &profile.id)?;
            let seed = crate::harness::compaction::CalibrationSeed { endpoint, server_tokens, estimated_tokens, at: engine.now() };
            calibration.seed_from_tokenizer(seed).then_some(calibration)
        }
        None => None,
    };
    // Reload: the profile may have changed while the request was out.
    let mut profile = engine.llm_profile(&profile.id)?;
    profile.last_tested_at = Some(engine.now());
    if form.is_some() {
        profile.structured_form = form;
    }
    if detected.is_some() {
        let person = (profile.context_window_origin == crate::llm::window::WindowOrigin::Person).then_some(profile.context_window);
        profile.server_window = detected;
        profile.settle_window(person);
    }
    let mut warnings: Vec<Hint> = profile.window_disagreement().into_iter().collect();
    // The server answered but states no window anywhere Inkstone can read it
    // (llama-cpp-python's server has no /props): every budget would run on a guess, so
    // say so and how to end it, rather than show the guess as if it were known.
    if !unreachable && profile.server_window.is_none() && profile.context_window_origin == crate::llm::window::WindowOrigin::Assumed {
        let assumed = profile.context_window.to_string();
        warnings.push(Hint::with(
            "window_unknown",
            format!(
                "The server does not state its context window, so Inkstone assumes {assumed} tokens. Set the profile's context window to the size the server runs with (llama.cpp: -c; llama-cpp-python: --n_ctx; Ollama: num_ctx)."
            ),
            &[("assumed", &assumed)],
        ));
    }
    let result = match outcome {
        Ok(reply) => {
            let latency_ms = reply.latency.as_millis() as u64;
            profile.health = Health::Ok;
            profile.last_error = None;
            profile.last_latency_ms = Some(latency_ms);
            LlmTestResult {
                ok: true,
                profile: (&profile).into(),
                model_id: Some(reply.model),
                latency_ms: Some(latency_ms),
                error: None,
                warnings: warnings.iter().map(Into::into).collect(),
                calibration: calibration.as_ref().map(Into::into),
            }
        }
        Err(error) => {
            if matches!(error.code, ErrorCode::NotFound | ErrorCode::Internal | ErrorCode::Io | ErrorCode::StoreCorrupt) {
                return Err(error);
            }
            let error = local_server_down(error, &profile.base_url);
            profile.health = Health::Failed;
            profile.last_error = Some(ProfileError { code: error.code, message: error.message.clone() });
            profile.last_latency_ms = None;
            LlmTestResult {
                ok: false,
                profile: (&profile).into(),
                model_id: None,
                latency_ms: None,
                error: Some(error.into()),
                warnings: warnings.iter().map(Into::into).collect(),
                calibration: calibration.as_ref().map(Into::into),
            }
        }
    };
    let mut batch = Batch::new();
    batch.put(&profile)?;
    if let Some(calibration) = &calibration {
        batch.put(calibration)?;
    }
    engine.store().apply(batch, Durability::Durable)?;
    Ok(result)
}

pub(super) fn models(engine: &Engine, params: LlmModelsParams) -> Result<LlmModelsResult, ApiError> {
    let endpoint = match (&params.profile, &params.base_url) {
        (Some(name), None) => {
            let profile = engine.llm_profile(name)?;
            let key = engine.llm().resolve_key(&profile)?;
            crate::llm::endpoint(&profile, key)?
        }
        (None, Some(base_url)) => {
            let base_url = normalize_base_url(base_url).map_err(bad_base_url)?;
            Endpoint { base_url, model: String::new(), api_key: None, timeout: Duration::from_secs(10), proxy_url: None, ca_cert_pem: None }
        }
        _ => return Err(ApiError::validation("profile", "Give either `profile` or `baseUrl`.")),
    };
    let base_url = endpoint.base_url.clone();
    let client = engine.llm().client(endpoint)?;
    let models = engine.llm().run(client.models(&Cancel::new()))?.map_err(|e| local_server_down(e.into(), &base_url))?;
    Ok(LlmModelsResult { models })
}

pub(super) fn detect_local(engine: &Engine, _: Empty) -> Result<LlmDetectLocalResult, ApiError> {
    let mut found = Vec::new();
    for preset in presets().into_iter().filter(|p| p.local) {
        let endpoint = Endpoint { base_url: preset.base_url.clone(), model: String::new(), api_key: None, timeout: Duration::from_millis(400), proxy_url: None, ca_cert_pem: None };
        let client = engine.llm().client(endpoint)?;
        if let Ok(models) = engine.llm().run(client.models(&Cancel::new()))? {
            found.push(LocalServer { preset: preset.into(), models });
        }
    }
    Ok(LlmDetectLocalResult { found })
}

/// A profile's context settings: its token-estimate calibration and compaction threshold.
pub(super) fn context(engine: &Engine, params: LlmProfileRef) -> Result<crate::harness::compaction::ProfileContext, ApiError> {
    let profile = engine.llm_profile(&params.profile)?;
    crate::harness::compaction::profile_context(engine.store(), &profile.id)
}

pub(super) fn set_compaction(engine: &Engine, params: LlmProfileSetCompactionParams) -> Result<crate::harness::compaction::ProfileContext, ApiError> {
    crate::harness::compaction::set_profile_threshold(engine, &params.profile, params.threshold.map(Into::into))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn set_key_params_never_print_or_serialize_the_key() {
        let params: LlmProfileSetKeyParams = serde_json::from_value(serde_json::json!({"profile": "p", "apiKey": "sk-never-shown-0123456789"})).unwrap();
        assert!(!format!("{params:?}").contains("sk-never-shown"));
        let json = serde_json::to_string(&params).unwrap();
        assert_eq!(json, r#"{"profile":"p","apiKey":"…6789"}"#);
    }
}
