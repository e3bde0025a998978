//! The wire form of model profiles, their presets, and the context window a server
//! reports (see [`super`]). A profile's API key lives in the OS keychain and is no
//! field of any record here: the wire carries its fingerprint only. The provider, the
//! schema form and the tool loading are also parameters (`llmProfile.create`,
//! `llmProfile.update`), so they convert both ways.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::ErrorCode;
use crate::model::Timestamp;

/// A local model server family, for reading its window and for saying how to enlarge it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum ServerKind {
    LlamaCpp,
    Ollama,
    LmStudio,
    Vllm,
}

/// Where a window figure was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum WindowSource {
    /// llama.cpp `/props`: `default_generation_settings.n_ctx`.
    LlamaCppProps,
    /// Ollama `/api/ps`: the running model's `context_length`.
    OllamaRunning,
    /// Ollama `/api/show`: the model's `num_ctx` parameter.
    OllamaNumCtx,
    /// Ollama `/api/show`: the trained `<arch>.context_length` (an upper bound).
    OllamaModelMax,
    /// LM Studio `/api/v0/models`: `loaded_context_length`.
    LmStudioLoaded,
    /// LM Studio `/api/v0/models`: `max_context_length` (an upper bound).
    LmStudioModelMax,
    /// vLLM `/v1/models`: `max_model_len`.
    VllmMaxModelLen,
}

/// A server's tokenizer endpoint, which counts text as the model does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum TokenizerEndpoint {
    /// llama.cpp's server: `POST /tokenize {"content": ...}`.
    LlamaCpp,
    /// llama-cpp-python's server: `POST /extras/tokenize {"input": ...}`.
    LlamaCppPython,
}

/// A window the server reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ServerWindow {
    pub tokens: u32,
    pub source: WindowSource,
    pub server: ServerKind,
    pub detected_at: Timestamp,
}

/// Where a profile's effective context window comes from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum WindowOrigin {
    /// The person set it; it wins over what the server says. (Profiles stored before
    /// the origin was kept count as set.)
    #[default]
    Person,
    /// Read from the server ([`ServerWindow`]).
    Server,
    /// Nobody said: a cautious default until the server is asked.
    Assumed,
}

/// Whether a profile may be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum Provider {
    /// Kept but never called.
    Disabled,
    OpenaiCompatible,
}

/// The last "test connection" result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum Health {
    Unknown,
    Ok,
    Failed,
}

/// What the last failed test said: the error code and message (never a key).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ProfileError {
    pub code: ErrorCode,
    pub message: String,
}

/// One model endpoint. The API key is in the OS keychain; `key_fingerprint` only says
/// which key is set (`…WXYZ`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct LlmProfile {
    pub id: String,
    pub name: String,
    pub provider: Provider,
    /// Normalised: no trailing slash, ends where `/chat/completions` would follow.
    pub base_url: String,
    pub model: String,
    /// The model the server's `/embeddings` answers with, for semantic search. Absent:
    /// search is lexical only (and says so).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub embedding_model: Option<String>,
    pub timeout_s: u32,
    /// The window every budget uses: the person's figure when they set one, else the
    /// one the server reported, else a cautious default ([`LlmProfile::context_window_origin`]).
    pub context_window: u32,
    /// Where `context_window` comes from.
    #[serde(default)]
    pub context_window_origin: WindowOrigin,
    /// The window the server reported when the profile was last tested (absent: not
    /// asked yet, or the server does not say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub server_window: Option<ServerWindow>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub max_output_tokens: Option<u32>,
    /// The sampling temperature of every request to this model: the person's figure
    /// for their model wins over the one a step would choose (a summary's 0, Ask's 0.2).
    /// Absent: each step's own, else the server's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub temperature: Option<f32>,
    /// A seed sent with every request, so a server that samples reproducibly with one
    /// (llama.cpp, vLLM, OpenAI) answers the same request the same way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub seed: Option<u32>,
    /// Price per million input tokens, for cost in usage records (any currency, the
    /// same for every profile of a workspace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub input_price_per_mtok: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub output_price_per_mtok: Option<f64>,
    /// False for local servers that take no key.
    pub key_required: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub key_fingerprint: Option<String>,
    /// Before the profile is tested: whether its server can be asked to constrain a reply
    /// to a JSON schema, and how ([`LlmProfile::schema_form`]; a preset's or the
    /// person's assumption). Testing the profile asks the server itself
    /// ([`LlmProfile::structured_form`]), and what it found wins.
    pub supports_json_schema: bool,
    #[serde(default)]
    pub schema_form: SchemaForm,
    /// The structured-output form the server was found to take (by the profile's test,
    /// or from a refusal at work), with the forms it refused. Absent: not tested yet,
    /// so the settings above are used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub structured_form: Option<StructuredForm>,
    /// Which tool definitions a drafting session sends with each request.
    #[serde(default)]
    pub tool_loading: ToolLoading,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub proxy_url: Option<String>,
    /// A PEM file with an extra CA certificate (a company proxy).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub ca_cert_path: Option<String>,
    pub is_default: bool,
    pub health: Health,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub last_tested_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub last_latency_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub last_error: Option<ProfileError>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// How a server is asked to shape a reply by a JSON schema.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum SchemaForm {
    /// `response_format: {type: "json_schema", json_schema: {name, schema}}`: OpenAI,
    /// vLLM, Ollama, LM Studio.
    #[default]
    ResponseFormat,
    /// `response_format: {type: "json_object", schema}`: llama.cpp's server and
    /// llama-cpp-python (which refuses the other form).
    JsonObject,
    /// No `response_format` at all: the schema is stated in the prompt, and the JSON is
    /// found in whatever the model writes around it (a code fence, a sentence before it;
    /// see [`crate::llm::structured::extract_json`]). For servers that take neither form.
    Instructions,
}

/// Where the structured-output form in use comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum FormSource {
    /// The profile's settings (a preset's or the person's): the server was not asked.
    Settings,
    /// Testing the profile: the first form the server took.
    Test,
    /// A model call at work was refused in the form before; the form after it is used
    /// from then on.
    Refusal,
}

/// A form the server refused, as it said so.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct FormRefusal {
    pub form: SchemaForm,
    pub status: u16,
    pub message: String,
}

/// The structured-output form a profile's server takes, and how that was learnt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct StructuredForm {
    pub form: SchemaForm,
    pub source: FormSource,
    /// The forms the server refused, in the order they were tried; none of them is
    /// sent to it again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<FormRefusal>>", optional)]
    pub refused: Vec<FormRefusal>,
    pub at: Timestamp,
}

/// Which tool definitions a drafting session sends the model with each request: the
/// most it sends. A window too small for that set's definitions (more than a quarter
/// of it) gets the next smaller one, down to the compact set
/// (`harness::tools::Registry::offered_within`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum ToolLoading {
    /// Every tool's definition, every time (about 2,800 estimated tokens for the
    /// built-in tools).
    #[default]
    All,
    /// The core drafting tools, plus `load_tools`: it lists the others by name, and a
    /// tool the model loads is sent from its next step on (about 1,400 tokens). For
    /// models with small context windows, such as local servers' defaults.
    OnDemand,
}

/// A starting point for a profile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct LlmPreset {
    pub id: String,
    pub label: String,
    pub base_url: String,
    /// A typical model id to start from (the user picks from the server's list).
    pub example_model: String,
    pub key_required: bool,
    /// Runs on this machine.
    pub local: bool,
    pub supports_json_schema: bool,
    pub schema_form: SchemaForm,
    /// Local servers start with tools on demand: their default windows are small.
    pub tool_loading: ToolLoading,
}

impl From<crate::llm::window::ServerKind> for ServerKind {
    fn from(record: crate::llm::window::ServerKind) -> Self {
        use crate::llm::window::ServerKind as V;
        match record {
            V::LlamaCpp => Self::LlamaCpp,
            V::Ollama => Self::Ollama,
            V::LmStudio => Self::LmStudio,
            V::Vllm => Self::Vllm,
        }
    }
}

impl From<crate::llm::window::WindowSource> for WindowSource {
    fn from(record: crate::llm::window::WindowSource) -> Self {
        use crate::llm::window::WindowSource as V;
        match record {
            V::LlamaCppProps => Self::LlamaCppProps,
            V::OllamaRunning => Self::OllamaRunning,
            V::OllamaNumCtx => Self::OllamaNumCtx,
            V::OllamaModelMax => Self::OllamaModelMax,
            V::LmStudioLoaded => Self::LmStudioLoaded,
            V::LmStudioModelMax => Self::LmStudioModelMax,
            V::VllmMaxModelLen => Self::VllmMaxModelLen,
        }
    }
}

impl From<crate::llm::window::TokenizerEndpoint> for TokenizerEndpoint {
    fn from(record: crate::llm::window::TokenizerEndpoint) -> Self {
        use crate::llm::window::TokenizerEndpoint as V;
        match record {
            V::LlamaCpp => Self::LlamaCpp,
            V::LlamaCppPython => Self::LlamaCppPython,
        }
    }
}

impl From<crate::llm::window::WindowOrigin> for WindowOrigin {
    fn from(record: crate::llm::window::WindowOrigin) -> Self {
        use crate::llm::window::WindowOrigin as V;
        match record {
            V::Person => Self::Person,
            V::Server => Self::Server,
            V::Assumed => Self::Assumed,
        }
    }
}

impl From<crate::llm::window::ServerWindow> for ServerWindow {
    fn from(record: crate::llm::window::ServerWindow) -> Self {
        ServerWindow { tokens: record.tokens, source: record.source.into(), server: record.server.into(), detected_at: record.detected_at }
    }
}

impl From<crate::llm::profile::Provider> for Provider {
    fn from(record: crate::llm::profile::Provider) -> Self {
        use crate::llm::profile::Provider as V;
        match record {
            V::Disabled => Self::Disabled,
            V::OpenaiCompatible => Self::OpenaiCompatible,
        }
    }
}

impl From<Provider> for crate::llm::profile::Provider {
    fn from(wire: Provider) -> Self {
        use crate::llm::profile::Provider as V;
        match wire {
            Provider::Disabled => V::Disabled,
            Provider::OpenaiCompatible => V::OpenaiCompatible,
        }
    }
}

impl From<crate::llm::profile::Health> for Health {
    fn from(record: crate::llm::profile::Health) -> Self {
        use crate::llm::profile::Health as V;
        match record {
            V::Unknown => Self::Unknown,
            V::Ok => Self::Ok,
            V::Failed => Self::Failed,
        }
    }
}

impl From<crate::llm::profile::SchemaForm> for SchemaForm {
    fn from(record: crate::llm::profile::SchemaForm) -> Self {
        use crate::llm::profile::SchemaForm as V;
        match record {
            V::ResponseFormat => Self::ResponseFormat,
            V::JsonObject => Self::JsonObject,
            V::Instructions => Self::Instructions,
        }
    }
}

impl From<SchemaForm> for crate::llm::profile::SchemaForm {
    fn from(wire: SchemaForm) -> Self {
        use crate::llm::profile::SchemaForm as V;
        match wire {
            SchemaForm::ResponseFormat => V::ResponseFormat,
            SchemaForm::JsonObject => V::JsonObject,
            SchemaForm::Instructions => V::Instructions,
        }
    }
}

impl From<crate::llm::profile::FormSource> for FormSource {
    fn from(record: crate::llm::profile::FormSource) -> Self {
        use crate::llm::profile::FormSource as V;
        match record {
            V::Settings => Self::Settings,
            V::Test => Self::Test,
            V::Refusal => Self::Refusal,
        }
    }
}

impl From<crate::llm::profile::ToolLoading> for ToolLoading {
    fn from(record: crate::llm::profile::ToolLoading) -> Self {
        use crate::llm::profile::ToolLoading as V;
        match record {
            V::All => Self::All,
            V::OnDemand => Self::OnDemand,
        }
    }
}

impl From<ToolLoading> for crate::llm::profile::ToolLoading {
    fn from(wire: ToolLoading) -> Self {
        use crate::llm::profile::ToolLoading as V;
        match wire {
            ToolLoading::All => V::All,
            ToolLoading::OnDemand => V::OnDemand,
        }
    }
}

impl From<&crate::llm::profile::ProfileError> for ProfileError {
    fn from(record: &crate::llm::profile::ProfileError) -> Self {
        ProfileError { code: record.code.into(), message: record.message.clone() }
    }
}

impl From<&crate::llm::profile::FormRefusal> for FormRefusal {
    fn from(record: &crate::llm::profile::FormRefusal) -> Self {
        FormRefusal { form: record.form.into(), status: record.status, message: record.message.clone() }
    }
}

impl From<&crate::llm::profile::StructuredForm> for StructuredForm {
    fn from(record: &crate::llm::profile::StructuredForm) -> Self {
        StructuredForm { form: record.form.into(), source: record.source.into(), refused: record.refused.iter().map(FormRefusal::from).collect(), at: record.at }
    }
}

impl From<&crate::llm::profile::LlmProfile> for LlmProfile {
    fn from(record: &crate::llm::profile::LlmProfile) -> Self {
        LlmProfile {
            id: record.id.clone(),
            name: record.name.clone(),
            provider: record.provider.into(),
            base_url: record.base_url.clone(),
            model: record.model.clone(),
            embedding_model: record.embedding_model.clone(),
            timeout_s: record.timeout_s,
            context_window: record.context_window,
            context_window_origin: record.context_window_origin.into(),
            server_window: record.server_window.map(ServerWindow::from),
            max_output_tokens: record.max_output_tokens,
            temperature: record.temperature,
            seed: record.seed,
            input_price_per_mtok: record.input_price_per_mtok,
            output_price_per_mtok: record.output_price_per_mtok,
            key_required: record.key_required,
            key_fingerprint: record.key_fingerprint.clone(),
            supports_json_schema: record.supports_json_schema,
            schema_form: record.schema_form.into(),
            structured_form: record.structured_form.as_ref().map(StructuredForm::from),
            tool_loading: record.tool_loading.into(),
            proxy_url: record.proxy_url.clone(),
            ca_cert_path: record.ca_cert_path.clone(),
            is_default: record.is_default,
            health: record.health.into(),
            last_tested_at: record.last_tested_at,
            last_latency_ms: record.last_latency_ms,
            last_error: record.last_error.as_ref().map(ProfileError::from),
            created_at: record.created_at,
            updated_at: record.updated_at,
        }
    }
}

impl From<crate::llm::profile::LlmProfile> for LlmProfile {
    fn from(record: crate::llm::profile::LlmProfile) -> Self {
        LlmProfile::from(&record)
    }
}

impl From<&crate::llm::profile::LlmPreset> for LlmPreset {
    fn from(record: &crate::llm::profile::LlmPreset) -> Self {
        LlmPreset {
            id: record.id.clone(),
            label: record.label.clone(),
            base_url: record.base_url.clone(),
            example_model: record.example_model.clone(),
            key_required: record.key_required,
            local: record.local,
            supports_json_schema: record.supports_json_schema,
            schema_form: record.schema_form.into(),
            tool_loading: record.tool_loading.into(),
        }
    }
}

impl From<crate::llm::profile::LlmPreset> for LlmPreset {
    fn from(record: crate::llm::profile::LlmPreset) -> Self {
        LlmPreset::from(&record)
    }
}

/// An API key as a parameter carries it (`llmProfile.create`, `llmProfile.setKey`,
/// `sync.connect`): read, never written. It has no `Serialize`, and Debug prints only
/// its fingerprint, so no result, log line or stored record can hold it.
#[derive(Clone, PartialEq, Eq, Deserialize, TS)]
#[serde(transparent)]
#[ts(type = "string")]
pub struct ApiKey(crate::llm::ApiKey);

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::ops::Deref for ApiKey {
    type Target = crate::llm::ApiKey;
    fn deref(&self) -> &crate::llm::ApiKey {
        &self.0
    }
}

impl From<ApiKey> for crate::llm::ApiKey {
    fn from(wire: ApiKey) -> Self {
        wire.0
    }
}

/// A complete tool call as the model asked for it. `arguments` is the raw JSON text;
/// the harness validates it against the tool's schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

impl From<&crate::llm::ToolCall> for ToolCall {
    fn from(record: &crate::llm::ToolCall) -> Self {
        ToolCall { id: record.id.clone(), name: record.name.clone(), arguments: record.arguments.clone() }
    }
}
