//! LLM profiles: what the user configured for one model endpoint (stored in sled, key
//! excluded), base URL normalisation, the plain-HTTP check, and the presets.

use serde::{Deserialize, Serialize};

use super::window::{ServerWindow, WindowOrigin};
use inkstone_model::Timestamp;
use inkstone_store::{Kind, Record};

/// Whether a profile may be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Provider {
    /// Kept but never called.
    Disabled,
    OpenaiCompatible,
}

/// The last "test connection" result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Health {
    Unknown,
    Ok,
    Failed,
}

/// What the last failed test said: the error code and message (never a key).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProfileError {
    pub code: inkstone_error::ErrorCode,
    pub message: String,
}

/// One model endpoint. The API key is in the OS keychain; `key_fingerprint` only says
/// which key is set (`…WXYZ`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    pub server_window: Option<ServerWindow>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
    /// The sampling temperature of every request to this model: the person's figure
    /// for their model wins over the one a step would choose (a summary's 0, Ask's 0.2).
    /// Absent: each step's own, else the server's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// A seed sent with every request, so a server that samples reproducibly with one
    /// (llama.cpp, vLLM, OpenAI) answers the same request the same way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u32>,
    /// Price per million input tokens, for cost in usage records (any currency, the
    /// same for every profile of a workspace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_price_per_mtok: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_price_per_mtok: Option<f64>,
    /// False for local servers that take no key.
    pub key_required: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
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
    pub structured_form: Option<StructuredForm>,
    /// Which tool definitions a drafting session sends with each request.
    #[serde(default)]
    pub tool_loading: ToolLoading,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy_url: Option<String>,
    /// A PEM file with an extra CA certificate (a company proxy).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_cert_path: Option<String>,
    pub is_default: bool,
    pub health: Health,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_tested_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_latency_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<ProfileError>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

impl Record for LlmProfile {
    const KIND: Kind = Kind::LlmProfiles;
    fn key(&self) -> Vec<u8> {
        self.id.as_bytes().to_vec()
    }
}

/// How a server is asked to shape a reply by a JSON schema.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
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
    /// see [`super::structured::extract_json`]). For servers that take neither form.
    Instructions,
}

impl SchemaForm {
    /// The `response_format.type` this form sends (`None`: none is sent).
    pub fn wire_type(self) -> Option<&'static str> {
        match self {
            SchemaForm::ResponseFormat => Some("json_schema"),
            SchemaForm::JsonObject => Some("json_object"),
            SchemaForm::Instructions => None,
        }
    }
}

/// Where the structured-output form in use comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FormRefusal {
    pub form: SchemaForm,
    pub status: u16,
    pub message: String,
}

/// The structured-output form a profile's server takes, and how that was learnt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StructuredForm {
    pub form: SchemaForm,
    pub source: FormSource,
    /// The forms the server refused, in the order they were tried; none of them is
    /// sent to it again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refused: Vec<FormRefusal>,
    pub at: Timestamp,
}

/// Which tool definitions a drafting session sends the model with each request: the
/// most it sends. A window too small for that set's definitions (more than a quarter
/// of it) gets the next smaller one, down to the compact set
/// (`harness::tools::Registry::offered_within`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
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

/// The window a profile assumes when nobody set one and its server has not said (a
/// hosted model, or a server not tested yet). Testing the profile replaces it with the
/// server's figure where the server says one.
pub const ASSUMED_CONTEXT_WINDOW: u32 = 8192;

impl LlmProfile {
    /// Sets `context_window` from the person's figure (`Some`) or, without one, from the
    /// server's report (an upper bound such as a model's trained maximum is not taken
    /// above the assumed window).
    pub fn settle_window(&mut self, person: Option<u32>) {
        (self.context_window, self.context_window_origin) = match (person, self.server_window) {
            (Some(tokens), _) => (tokens, WindowOrigin::Person),
            (None, Some(server)) if server.source.is_exact() => (server.tokens, WindowOrigin::Server),
            (None, Some(server)) => (server.tokens.min(ASSUMED_CONTEXT_WINDOW), WindowOrigin::Assumed),
            (None, None) => (ASSUMED_CONTEXT_WINDOW, WindowOrigin::Assumed),
        };
    }

    /// When the person's window and the server's differ: a warning naming both.
    pub fn window_disagreement(&self) -> Option<inkstone_error::Hint> {
        let server = self.server_window?;
        if self.context_window_origin != WindowOrigin::Person || !server.source.is_exact() || server.tokens == self.context_window {
            return None;
        }
        let (mine, theirs) = (self.context_window.to_string(), server.tokens.to_string());
        let consequence = if self.context_window > server.tokens {
            "requests that fit the profile's figure will be refused by the server"
        } else {
            "the profile uses less of the window than the server has"
        };
        Some(inkstone_error::Hint::with(
            "window_disagrees",
            format!(
                "The profile's context window is {mine} tokens, but the server ({}) says {theirs}: {consequence}. Clear the figure to use the server's, or change the server.",
                server.source.describe()
            ),
            &[("configured", &mine), ("server", &theirs), ("source", server.source.describe())],
        ))
    }

    /// The structured-output form this profile's calls use, and where it comes from:
    /// the one its server was found to take, else the settings' assumption.
    pub fn schema_form_in_use(&self) -> (SchemaForm, FormSource) {
        match (&self.structured_form, self.supports_json_schema) {
            (Some(found), _) => (found.form, found.source),
            (None, true) => (self.schema_form, FormSource::Settings),
            (None, false) => (SchemaForm::Instructions, FormSource::Settings),
        }
    }

    /// The forms worth asking this profile's server, in order: the settings' form
    /// first (most servers take what their preset says), then the others; never one the
    /// server already refused. [`SchemaForm::Instructions`] is not asked: every server
    /// takes a plain request.
    pub fn forms_to_try(&self) -> Vec<SchemaForm> {
        let refused: Vec<SchemaForm> = self.structured_form.iter().flat_map(|f| f.refused.iter().map(|r| r.form)).collect();
        let first = if self.supports_json_schema { self.schema_form } else { SchemaForm::ResponseFormat };
        let mut forms = vec![first];
        for form in [SchemaForm::ResponseFormat, SchemaForm::JsonObject] {
            if !forms.contains(&form) {
                forms.push(form);
            }
        }
        forms.retain(|f| *f != SchemaForm::Instructions && !refused.contains(f));
        forms
    }

    /// Records that the server refused `form` at work: the next form worth trying is
    /// used from now on (instructions in the prompt when none is left). Returns it.
    pub fn record_refusal(&mut self, refusal: FormRefusal, now: Timestamp) -> SchemaForm {
        let mut refused = self.structured_form.take().map(|f| f.refused).unwrap_or_default();
        if !refused.iter().any(|r| r.form == refusal.form) {
            refused.push(refusal);
        }
        self.structured_form = Some(StructuredForm { form: SchemaForm::Instructions, source: FormSource::Refusal, refused, at: now });
        let next = self.forms_to_try().first().copied().unwrap_or(SchemaForm::Instructions);
        if let Some(found) = &mut self.structured_form {
            found.form = next;
        }
        next
    }

    /// The response format asking this profile's server for JSON matching `schema` in
    /// the form it takes, or plain text when it takes none (the schema then goes in the
    /// prompt, which every structured step writes anyway).
    pub fn response_format(&self, name: &str, schema: &serde_json::Value) -> crate::ResponseFormat {
        form_request(self.schema_form_in_use().0, name, schema)
    }
}

/// The response format of `form` for a schema.
pub fn form_request(form: SchemaForm, name: &str, schema: &serde_json::Value) -> crate::ResponseFormat {
    use crate::ResponseFormat;
    match form {
        SchemaForm::ResponseFormat => ResponseFormat::JsonSchema { name: name.to_owned(), schema: schema.clone() },
        SchemaForm::JsonObject => ResponseFormat::JsonObjectSchema { schema: schema.clone() },
        SchemaForm::Instructions => ResponseFormat::Text,
    }
}

/// A starting point for a profile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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

/// The presets: local servers first, then hosted providers creators use.
pub fn presets() -> Vec<LlmPreset> {
    let preset = |id: &str, label: &str, base_url: &str, example_model: &str, key_required: bool, local: bool, supports_json_schema: bool| LlmPreset {
        id: id.to_owned(),
        label: label.to_owned(),
        base_url: base_url.to_owned(),
        example_model: example_model.to_owned(),
        key_required,
        local,
        supports_json_schema,
        schema_form: SchemaForm::ResponseFormat,
        tool_loading: if local { ToolLoading::OnDemand } else { ToolLoading::All },
    };
    vec![
        preset("ollama", "Ollama", "http://127.0.0.1:11434/v1", "qwen2.5:7b", false, true, true),
        preset("lm-studio", "LM Studio", "http://127.0.0.1:1234/v1", "qwen2.5-7b-instruct", false, true, true),
        // llama.cpp's server (and llama-cpp-python) constrain by the json_object form.
        LlmPreset { schema_form: SchemaForm::JsonObject, ..preset("llama-cpp", "llama.cpp server", "http://127.0.0.1:8080/v1", "default", false, true, true) },
        preset("vllm", "vLLM", "http://127.0.0.1:8000/v1", "Qwen/Qwen2.5-7B-Instruct", false, true, true),
        preset("openai", "OpenAI", "https://api.openai.com/v1", "gpt-4o-mini", true, false, true),
        preset("deepseek", "DeepSeek", "https://api.deepseek.com/v1", "deepseek-chat", true, false, false),
        preset("qwen-dashscope", "Qwen (DashScope compatible mode)", "https://dashscope.aliyuncs.com/compatible-mode/v1", "qwen-plus", true, false, false),
        preset("moonshot", "Moonshot (Kimi)", "https://api.moonshot.cn/v1", "moonshot-v1-8k", true, false, false),
        preset("zhipu", "Zhipu GLM", "https://open.bigmodel.cn/api/paas/v4", "glm-4-flash", true, false, false),
        preset("volcengine-ark", "Volcengine Ark (Doubao)", "https://ark.cn-beijing.volces.com/api/v3", "your endpoint id (ep-...)", true, false, false),
    ]
}

/// Why a base URL is unusable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadUrl(pub String);

/// Checks a proxy URL: http, https or socks5 (socks5h), and no credentials. A proxy
/// user name and password would be a secret kept in sled, exports and API answers, so
/// they are refused as they are in base URLs; an authenticating company proxy is
/// reached through the system's proxy settings or a local forwarder instead.
pub fn check_proxy_url(input: &str) -> Result<String, BadUrl> {
    let url = input.trim();
    let lower = url.to_ascii_lowercase();
    let Some(rest) = ["http://", "https://", "socks5://", "socks5h://"].iter().find_map(|scheme| lower.starts_with(scheme).then(|| &url[scheme.len()..])) else {
        return Err(BadUrl("the proxy URL must start with http://, https:// or socks5://".to_owned()));
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if authority.contains('@') {
        return Err(BadUrl("the proxy URL must not hold a user name or password".to_owned()));
    }
    if authority.is_empty() || rest.contains(' ') {
        return Err(BadUrl("the proxy URL needs a host, and no spaces".to_owned()));
    }
    Ok(url.to_owned())
}

/// Normalises a base URL the way users type it: scheme required (http or https), no
/// trailing slash, a pasted `/chat/completions` removed, and `/v1` added when the URL
/// has no path at all (`http://localhost:11434` → `http://localhost:11434/v1`). A URL
/// with a path is kept (Zhipu's `/api/paas/v4`, Ark's `/api/v3`).
pub fn normalize_base_url(input: &str) -> Result<String, BadUrl> {
    let mut url = input.trim().to_owned();
    if url.is_empty() {
        return Err(BadUrl("the base URL is empty".to_owned()));
    }
    let Some((scheme, rest)) = url.split_once("://") else {
        return Err(BadUrl("the base URL needs a scheme: http:// or https://".to_owned()));
    };
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return Err(BadUrl(format!("the base URL's scheme must be http or https, not {scheme}")));
    }
    if rest.contains(['?', '#', ' ']) || rest.contains('@') {
        return Err(BadUrl("the base URL must not hold a query, a fragment, spaces or credentials".to_owned()));
    }
    url = format!("{scheme}://{rest}");
    while url.ends_with('/') {
        url.pop();
    }
    for suffix in ["/chat/completions", "/completions", "/embeddings", "/models"] {
        if let Some(stripped) = url.strip_suffix(suffix) {
            url = stripped.to_owned();
        }
    }
    let host_and_path = &url[scheme.len() + 3..];
    let (host, path) = match host_and_path.find('/') {
        Some(slash) => (&host_and_path[..slash], &host_and_path[slash..]),
        None => (host_and_path, ""),
    };
    if host.is_empty() || host.starts_with(':') {
        return Err(BadUrl("the base URL has no host".to_owned()));
    }
    if path.is_empty() {
        url.push_str("/v1");
    }
    Ok(url)
}

/// The host of a normalised URL, without port or brackets.
pub fn host_of(base_url: &str) -> String {
    let rest = base_url.split_once("://").map(|(_, r)| r).unwrap_or(base_url);
    let authority = rest.split('/').next().unwrap_or("");
    if let Some(v6) = authority.strip_prefix('[') {
        return v6.split(']').next().unwrap_or("").to_ascii_lowercase();
    }
    authority.split(':').next().unwrap_or("").to_ascii_lowercase()
}

/// True when the host is this machine.
pub fn is_loopback(base_url: &str) -> bool {
    let host = host_of(base_url);
    // An address, not a name that starts like one: `127.example.com` is another machine.
    host == "localhost" || host.ends_with(".localhost") || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// True when a key sent to this URL would cross the network in clear text.
pub fn key_would_travel_in_clear(base_url: &str) -> bool {
    base_url.to_ascii_lowercase().starts_with("http://") && !is_loopback(base_url)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn normalises_base_urls_as_users_type_them() {
        let check = |input: &str, expected: &str| assert_eq!(normalize_base_url(input), Ok(expected.to_owned()), "{input}");
        check("http://localhost:11434", "http://localhost:11434/v1");
        check("http://localhost:11434/", "http://localhost:11434/v1");
        check("http://localhost:11434/v1/", "http://localhost:11434/v1");
        check(" HTTPS://api.openai.com/v1/chat/completions ", "https://api.openai.com/v1");
        check("https://open.bigmodel.cn/api/paas/v4/", "https://open.bigmodel.cn/api/paas/v4");
        check("https://api.deepseek.com", "https://api.deepseek.com/v1");
        assert!(normalize_base_url("localhost:11434").is_err());
        assert!(normalize_base_url("ftp://x").is_err());
        assert!(normalize_base_url("http://user:pw@host/v1").is_err());
        assert!(check_proxy_url("http://user:pw@proxy:8080").is_err());
        assert!(check_proxy_url("socks5://u@proxy").is_err());
        assert_eq!(check_proxy_url(" http://proxy.corp:3128 ").unwrap(), "http://proxy.corp:3128");
        assert!(check_proxy_url("ftp://proxy").is_err());
        assert!(normalize_base_url("http:///v1").is_err());
    }

    #[test]
    fn plain_http_is_fine_only_on_this_machine() {
        assert!(!key_would_travel_in_clear("http://127.0.0.1:8080/v1"));
        assert!(!key_would_travel_in_clear("http://localhost:1234/v1"));
        assert!(!key_would_travel_in_clear("http://[::1]:8000/v1"));
        assert!(!key_would_travel_in_clear("https://api.openai.com/v1"));
        assert!(key_would_travel_in_clear("http://192.168.1.20:11434/v1"));
        assert!(key_would_travel_in_clear("http://localhost.evil.com/v1"));
        assert!(key_would_travel_in_clear("http://127.example.com/v1"), "a name, not the loopback address");
        assert!(key_would_travel_in_clear("http://127.0.0.1.nip.io/v1"));
        assert!(!key_would_travel_in_clear("http://127.1.2.3:9000/v1"));
        assert!(!is_loopback("http://127.example.com") && is_loopback("http://[0:0:0:0:0:0:0:1]:80"));
    }

    #[test]
    fn presets_are_normalised() {
        for preset in presets() {
            assert_eq!(normalize_base_url(&preset.base_url), Ok(preset.base_url.clone()));
        }
    }
}
