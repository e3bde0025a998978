//! LLM profiles over the API (`llmProfile.*`) and [`Engine::model_chat`](crate::Engine::model_chat), the one way
//! the engine calls a model: it resolves exactly the profile it was given (no silent
//! fallback), takes the key from the process environment or the OS keychain, checks
//! the workspace quotas before anything is sent, and records every call's usage.
//!
//! The wire types and what both families share are here; in the folder beside this
//! file the methods: a profile's records and key, and the questions put to its server
//! (test connection, its models, local servers).

mod profiles;
mod server;

pub(super) use profiles::{context, create, delete, get, list, list_presets, set_compaction, set_default, set_key, update};
pub(super) use server::{detect_local, models, test};

use std::time::Duration;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::ApiError;
use crate::llm::profile::BadUrl;

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
/// A base URL that cannot be used, for saving a profile and for listing a server's
/// models alike: the UI words it in the person's language and shows the example.
fn bad_base_url(bad: BadUrl) -> ApiError {
    ApiError::validation("baseUrl", format!("The base URL is not usable: {}.", bad.0))
        .problem("profile.bad_base_url", &[])
        .hint("base_url_example", "For example http://127.0.0.1:11434/v1 or https://api.openai.com/v1.")
}
/// How long one question about the window may take: a server that answers at all
/// answers these at once.
const WINDOW_PROBE_TIMEOUT: Duration = Duration::from_secs(3);
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
