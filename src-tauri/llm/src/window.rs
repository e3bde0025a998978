//! The model's context window as its server says it, and the server families that say
//! it each in their own way (pure: the answers are parsed here, fetched by
//! [`super::client::LlmClient::detect_window`]):
//!
//! - llama.cpp's server: `GET /props` → `default_generation_settings.n_ctx` (the window
//!   of one slot, which is what one request gets);
//! - Ollama: `GET /api/ps` → the running model's `context_length`; `POST /api/show` →
//!   the `num_ctx` of its parameters, else its trained `<arch>.context_length` (only an
//!   upper bound: Ollama runs a model with its own default unless told otherwise);
//! - LM Studio: `GET /api/v0/models` → the model's `loaded_context_length` once it is
//!   loaded, else its `max_context_length` (an upper bound);
//! - vLLM: `GET /v1/models` → `max_model_len`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use inkstone_model::Timestamp;

/// A local model server family, for reading its window and for saying how to enlarge it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ServerKind {
    LlamaCpp,
    Ollama,
    LmStudio,
    Vllm,
}

impl ServerKind {
    /// The id used in hint values (`llamaCpp`, `ollama`, `lmStudio`, `vllm`).
    pub fn id(self) -> &'static str {
        match self {
            ServerKind::LlamaCpp => "llamaCpp",
            ServerKind::Ollama => "ollama",
            ServerKind::LmStudio => "lmStudio",
            ServerKind::Vllm => "vllm",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            ServerKind::LlamaCpp => "llama.cpp",
            ServerKind::Ollama => "Ollama",
            ServerKind::LmStudio => "LM Studio",
            ServerKind::Vllm => "vLLM",
        }
    }

    /// How to give this server a window of `tokens`, in English (the UI words the
    /// hint `larger_window_<id>` itself).
    pub fn larger_window_advice(self, tokens: u64) -> String {
        match self {
            ServerKind::LlamaCpp => format!(
                "Start llama-server with a larger window, for example -c {tokens} (--ctx-size {tokens}); with several slots (-np) each gets its share, and an older server that names the physical batch size also needs -ub as large."
            ),
            ServerKind::Ollama => format!(
                "Give Ollama a larger window: start it with OLLAMA_CONTEXT_LENGTH={tokens}, or set PARAMETER num_ctx {tokens} in the model's Modelfile (ollama create)."
            ),
            ServerKind::LmStudio => format!("In LM Studio, load the model with a larger Context Length ({tokens} or more) in its load settings, or `lms load <model> --context-length {tokens}`."),
            ServerKind::Vllm => format!("Start vLLM with a larger --max-model-len (for example --max-model-len {tokens}), up to what the model supports."),
        }
    }
}

/// Where a window figure was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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

impl WindowSource {
    pub fn server(self) -> ServerKind {
        match self {
            WindowSource::LlamaCppProps => ServerKind::LlamaCpp,
            WindowSource::OllamaRunning | WindowSource::OllamaNumCtx | WindowSource::OllamaModelMax => ServerKind::Ollama,
            WindowSource::LmStudioLoaded | WindowSource::LmStudioModelMax => ServerKind::LmStudio,
            WindowSource::VllmMaxModelLen => ServerKind::Vllm,
        }
    }

    /// True when the figure is the window requests get; false for a model's trained
    /// maximum, which the server may run below.
    pub fn is_exact(self) -> bool {
        !matches!(self, WindowSource::OllamaModelMax | WindowSource::LmStudioModelMax)
    }

    /// Where it was read, for people (`llama.cpp /props n_ctx`).
    pub fn describe(self) -> &'static str {
        match self {
            WindowSource::LlamaCppProps => "llama.cpp /props n_ctx",
            WindowSource::OllamaRunning => "Ollama /api/ps context_length",
            WindowSource::OllamaNumCtx => "Ollama /api/show num_ctx",
            WindowSource::OllamaModelMax => "Ollama /api/show model maximum",
            WindowSource::LmStudioLoaded => "LM Studio loaded_context_length",
            WindowSource::LmStudioModelMax => "LM Studio max_context_length",
            WindowSource::VllmMaxModelLen => "vLLM max_model_len",
        }
    }
}

/// A server's tokenizer endpoint, which counts text as the model does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum TokenizerEndpoint {
    /// llama.cpp's server: `POST /tokenize {"content": ...}`.
    LlamaCpp,
    /// llama-cpp-python's server: `POST /extras/tokenize {"input": ...}`.
    LlamaCppPython,
}

impl TokenizerEndpoint {
    /// The path (from the server root) and the request's text field.
    pub fn route(self) -> (&'static str, &'static str) {
        match self {
            TokenizerEndpoint::LlamaCpp => ("/tokenize", "content"),
            TokenizerEndpoint::LlamaCppPython => ("/extras/tokenize", "input"),
        }
    }

    /// For people: `llama-cpp-python /extras/tokenize`.
    pub fn describe(self) -> &'static str {
        match self {
            TokenizerEndpoint::LlamaCpp => "llama.cpp /tokenize",
            TokenizerEndpoint::LlamaCppPython => "llama-cpp-python /extras/tokenize",
        }
    }
}

/// The texts a server's tokenizer counts at profile test to calibrate the estimate:
/// prose as an article has it, one Chinese and one English, with punctuation and
/// figures. Each is counted on its own: a small model's tokenizer may give a Chinese
/// character two or three tokens and an English word one, and one ratio over a mixed
/// sample would undercount a Chinese article.
pub const TOKENIZER_SAMPLES: [&str; 2] = [
    "春天的早晨，城市还没有完全醒来。街角的早餐店已经亮起了灯，蒸笼里冒出白色的热气，\
老板一边招呼客人，一边把刚出锅的包子装进纸袋。对很多写作者来说，这样的场景是灵感的来源：\
普通人的生活里藏着最真实的故事。我们在写文章的时候，常常想要表达宏大的主题，却忘了细节才是打动读者的关键。\
一篇好的文章，需要清晰的结构、准确的用词，以及真诚的态度。2024年的一项调查显示，超过六成的读者会在前三段决定是否继续阅读。",
    "Writing for several platforms at once is harder than it looks. A long essay that reads well on a blog \
may need a shorter title, a sharper opening and fewer headings before it works as a newsletter or a \
social post. Good editors keep the voice of the piece while they cut: they remove repetition, move the \
strongest example to the top, and check every figure against its source. The goal is not to write more, \
but to make each paragraph earn its place.",
];

/// A window the server reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerWindow {
    pub tokens: u32,
    pub source: WindowSource,
    pub server: ServerKind,
    pub detected_at: Timestamp,
}

/// Where a profile's effective context window comes from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
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

fn as_tokens(value: Option<&Value>) -> Option<u32> {
    let n = value?.as_u64().or_else(|| value?.as_str()?.trim().parse().ok())?;
    u32::try_from(n).ok().filter(|n| *n > 0)
}

/// llama.cpp `/props`.
pub fn from_llama_props(value: &Value) -> Option<(u32, WindowSource)> {
    let settings = value.get("default_generation_settings")?;
    let tokens = as_tokens(settings.get("n_ctx")).or_else(|| as_tokens(value.get("n_ctx")))?;
    Some((tokens, WindowSource::LlamaCppProps))
}

/// Whether an Ollama model name means `model` (`qwen2.5:7b`; `llama3` is `llama3:latest`).
fn same_ollama_model(name: &str, model: &str) -> bool {
    let full = |m: &str| if m.contains(':') { m.to_owned() } else { format!("{m}:latest") };
    full(name) == full(model)
}

/// Ollama `/api/ps`: the running `model`'s window.
pub fn from_ollama_ps(value: &Value, model: &str) -> Option<(u32, WindowSource)> {
    let models = value.get("models")?.as_array()?;
    let entry = models.iter().find(|m| ["model", "name"].iter().any(|k| m.get(*k).and_then(Value::as_str).is_some_and(|n| same_ollama_model(n, model))))?;
    Some((as_tokens(entry.get("context_length"))?, WindowSource::OllamaRunning))
}

/// Ollama `/api/show`: `num_ctx` among its parameters, else the trained maximum.
pub fn from_ollama_show(value: &Value) -> Option<(u32, WindowSource)> {
    if let Some(parameters) = value.get("parameters").and_then(Value::as_str) {
        let num_ctx = parameters.lines().find_map(|line| {
            let mut words = line.split_whitespace();
            (words.next() == Some("num_ctx")).then(|| words.next()).flatten().and_then(|n| n.parse::<u32>().ok())
        });
        if let Some(tokens) = num_ctx.filter(|n| *n > 0) {
            return Some((tokens, WindowSource::OllamaNumCtx));
        }
    }
    let info = value.get("model_info")?.as_object()?;
    let arch = info.get("general.architecture").and_then(Value::as_str);
    let tokens = match arch {
        Some(arch) => as_tokens(info.get(&format!("{arch}.context_length"))),
        None => None,
    }
    .or_else(|| info.iter().find(|(k, _)| k.ends_with(".context_length")).and_then(|(_, v)| as_tokens(Some(v))))?;
    Some((tokens, WindowSource::OllamaModelMax))
}

/// LM Studio `/api/v0/models`: the loaded window of `model`, else its maximum.
pub fn from_lm_studio(value: &Value, model: &str) -> Option<(u32, WindowSource)> {
    let data = value.get("data")?.as_array()?;
    let entry = data.iter().find(|m| m.get("id").and_then(Value::as_str) == Some(model))?;
    if let Some(tokens) = as_tokens(entry.get("loaded_context_length")) {
        return Some((tokens, WindowSource::LmStudioLoaded));
    }
    Some((as_tokens(entry.get("max_context_length"))?, WindowSource::LmStudioModelMax))
}

/// vLLM `/v1/models`: `max_model_len` of `model` (or of the only model served).
pub fn from_vllm_models(value: &Value, model: &str) -> Option<(u32, WindowSource)> {
    let data = value.get("data")?.as_array()?;
    let entry = data.iter().find(|m| m.get("id").and_then(Value::as_str) == Some(model)).or_else(|| (data.len() == 1).then(|| &data[0]))?;
    Some((as_tokens(entry.get("max_model_len"))?, WindowSource::VllmMaxModelLen))
}

/// `scheme://host:port` of a base URL: where llama.cpp's `/props` and Ollama's and LM
/// Studio's own APIs live, whatever path the OpenAI-compatible one has.
pub fn server_root(base_url: &str) -> String {
    match base_url.split_once("://") {
        Some((scheme, rest)) => format!("{scheme}://{}", rest.split('/').next().unwrap_or("")),
        None => base_url.trim_end_matches('/').to_owned(),
    }
}

/// A window that leaves room: the next power of two at or above `needed` (at least
/// 4,096), for "start the server with a window of N".
pub fn suggested_window(needed: u64) -> u64 {
    needed.max(4096).next_power_of_two()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_each_servers_answer() {
        assert_eq!(from_llama_props(&json!({"default_generation_settings": {"n_ctx": 4096}, "total_slots": 1})), Some((4096, WindowSource::LlamaCppProps)));
        assert_eq!(from_llama_props(&json!({"total_slots": 1})), None);
        let ps = json!({"models": [{"name": "qwen2.5:7b", "model": "qwen2.5:7b", "context_length": 8192}, {"name": "llama3:latest", "context_length": 2048}]});
        assert_eq!(from_ollama_ps(&ps, "qwen2.5:7b"), Some((8192, WindowSource::OllamaRunning)));
        assert_eq!(from_ollama_ps(&ps, "llama3"), Some((2048, WindowSource::OllamaRunning)));
        assert_eq!(from_ollama_ps(&ps, "mistral"), None);
        let show = json!({"parameters": "num_keep 24\nnum_ctx                        16384\nstop \"<|eot_id|>\"", "model_info": {"general.architecture": "llama", "llama.context_length": 131072}});
        assert_eq!(from_ollama_show(&show), Some((16384, WindowSource::OllamaNumCtx)));
        let show = json!({"parameters": "stop \"<|eot_id|>\"", "model_info": {"general.architecture": "qwen2", "qwen2.context_length": 32768}});
        assert_eq!(from_ollama_show(&show), Some((32768, WindowSource::OllamaModelMax)));
        let lms = json!({"data": [{"id": "a", "state": "loaded", "max_context_length": 32768, "loaded_context_length": 4096}, {"id": "b", "state": "not-loaded", "max_context_length": 131072}]});
        assert_eq!(from_lm_studio(&lms, "a"), Some((4096, WindowSource::LmStudioLoaded)));
        assert_eq!(from_lm_studio(&lms, "b"), Some((131072, WindowSource::LmStudioModelMax)));
        assert_eq!(from_vllm_models(&json!({"data": [{"id": "Qwen/Qwen2.5-7B-Instruct", "max_model_len": 32768}]}), "other"), Some((32768, WindowSource::VllmMaxModelLen)));
        assert_eq!(from_vllm_models(&json!({"data": [{"id": "gpt-4o"}]}), "gpt-4o"), None);
    }

    #[test]
    fn roots_and_suggestions() {
        assert_eq!(server_root("http://127.0.0.1:8080/v1"), "http://127.0.0.1:8080");
        assert_eq!(server_root("https://open.bigmodel.cn/api/paas/v4"), "https://open.bigmodel.cn");
        assert_eq!(suggested_window(4519), 8192);
        assert_eq!(suggested_window(100), 4096);
    }
}
