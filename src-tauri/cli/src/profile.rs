//! `inkstone-cli profile …`: LLM profiles from the command line. A key is only ever
//! read from standard input (`--api-key-stdin`), never from an argument, so it stays
//! out of shell history and process lists; it goes to the OS keychain.

use std::io::Read;

use clap::{Args, Subcommand};
use inkstone_api::{ApiError, Engine};
use serde_json::{json, Value};

use crate::Failure;

#[derive(Debug, Subcommand)]
pub enum ProfileCommand {
    /// Add a profile; the key, if any, comes from standard input.
    Add(AddArgs),
    /// List profiles with their health.
    List,
    /// Make a real minimal request; exits 1 with the error code and hints on failure.
    Test { name: String },
    /// Use this profile by default.
    Default { name: String },
    /// Remove a profile and its key.
    Remove { name: String },
    /// Replace (or with --clear, remove) a profile's key, read from standard input.
    SetKey {
        name: String,
        #[arg(long)]
        clear: bool,
        /// Send the key over plain HTTP to another machine anyway.
        #[arg(long)]
        allow_plain_http: bool,
    },
    /// List the models the server offers.
    Models { name: String },
    /// List the presets (usual base URLs of local servers and hosted providers).
    Presets,
}

#[derive(Debug, Args)]
pub struct AddArgs {
    #[arg(long)]
    name: String,
    /// With or without /v1, e.g. http://127.0.0.1:11434 or https://api.openai.com/v1.
    #[arg(long)]
    base_url: String,
    #[arg(long)]
    model: String,
    /// The server's embedding model, for semantic search (without one search is lexical).
    #[arg(long)]
    embedding_model: Option<String>,
    /// Read the API key from standard input (one line).
    #[arg(long, conflicts_with = "no_key")]
    api_key_stdin: bool,
    /// The server takes no key (local servers).
    #[arg(long)]
    no_key: bool,
    /// Seconds to wait for the answer to start and between chunks (default 60).
    #[arg(long)]
    timeout: Option<u32>,
    /// Your figure for the model's context window (tokens); it wins over the server's.
    /// Without it, the server's own figure is read (llama.cpp /props, Ollama, LM Studio,
    /// vLLM) when the profile is added or tested.
    #[arg(long)]
    context_window: Option<u32>,
    #[arg(long)]
    max_output_tokens: Option<u32>,
    /// The temperature of every request (0–2), over the one each step would choose
    /// (for example 0 with --seed for reproducible answers from a local model).
    #[arg(long)]
    temperature: Option<f32>,
    /// A seed sent with every request (llama.cpp, vLLM and OpenAI sample reproducibly with one).
    #[arg(long)]
    seed: Option<u32>,
    /// Price per million input tokens (for cost in usage).
    #[arg(long)]
    input_price: Option<f64>,
    #[arg(long)]
    output_price: Option<f64>,
    /// Send the key over plain HTTP to another machine anyway.
    #[arg(long)]
    allow_plain_http: bool,
    /// The server can shape replies by a JSON schema, asked as OpenAI's
    /// `response-format` (json_schema) or llama.cpp's `json-object` (+ schema).
    #[arg(long, value_parser = ["response-format", "json-object"])]
    json_schema: Option<String>,
    /// Which tool definitions a drafting session sends: `all` every time (the
    /// default), or `on-demand`: the core tools, and the model loads the others by
    /// name (about half the tokens; for small context windows).
    #[arg(long, value_parser = ["all", "on-demand"])]
    tools: Option<String>,
}

fn read_key() -> Result<String, Failure> {
    let mut text = String::new();
    std::io::stdin().read_to_string(&mut text).map_err(|e| Failure::Usage(format!("cannot read the key from standard input: {e}")))?;
    let key = text.trim().to_owned();
    if key.is_empty() {
        return Err(Failure::Usage("standard input held no key".to_owned()));
    }
    Ok(key)
}

fn print(value: &Value, as_json: bool, text: impl FnOnce(&Value)) {
    if as_json {
        println!("{}", serde_json::to_string_pretty(value).unwrap_or_default());
    } else {
        text(value);
    }
}

fn s<'a>(value: &'a Value, key: &str) -> &'a str {
    value[key].as_str().unwrap_or("")
}

/// A profile's context window and where it comes from: "4096 tokens (from llama.cpp
/// /props n_ctx)", "8192 tokens (set by you; the server says 4096, from …)".
fn window_text(p: &Value) -> String {
    let tokens = p["contextWindow"].as_u64().unwrap_or(0);
    let server = &p["serverWindow"];
    let source = serde_json::from_value::<inkstone_api::llm::window::WindowSource>(server["source"].clone()).ok();
    let said = match (server["tokens"].as_u64(), source) {
        (Some(n), Some(source)) => Some((n, source.describe(), source.is_exact())),
        _ => None,
    };
    match (p["contextWindowOrigin"].as_str(), said) {
        (Some("server"), Some((_, from, _))) => format!("{tokens} tokens (from {from})"),
        (Some("assumed"), Some((n, from, _))) => format!("{tokens} tokens (assumed; the model's maximum is {n}, from {from})"),
        (Some("assumed"), None) => format!("{tokens} tokens (assumed; `profile test` asks the server)"),
        (_, Some((n, from, true))) if n != tokens => format!("{tokens} tokens (set by you; the server says {n}, from {from})"),
        (_, Some((_, from, _))) => format!("{tokens} tokens (set by you; the server agrees, from {from})"),
        (_, None) => format!("{tokens} tokens (set by you)"),
    }
}

/// The structured-output form a profile uses and how it was learnt: "json_object with
/// a schema (the server took it at the test; it refused json_schema: HTTP 500 …)".
fn form_text(p: &Value) -> String {
    let name = |form: &str| match form {
        "responseFormat" => "response_format json_schema",
        "jsonObject" => "response_format json_object with a schema",
        _ => "JSON instructions in the prompt",
    };
    let found = &p["structuredForm"];
    let Some(form) = found["form"].as_str() else {
        let assumed = if p["supportsJsonSchema"] == true { name(s(p, "schemaForm")) } else { name("instructions") };
        return format!("{assumed} (from the profile's settings; `profile test` asks the server)");
    };
    let how = match s(found, "source") {
        "test" => "the server took it at the test",
        "refusal" => "used since the server refused the form before it",
        _ => "from the profile's settings",
    };
    let refused: Vec<String> = found["refused"].as_array().into_iter().flatten().map(|r| format!("{} (HTTP {}: {})", name(s(r, "form")), r["status"], s(r, "message"))).collect();
    if refused.is_empty() {
        format!("{} ({how})", name(form))
    } else {
        format!("{} ({how}; it refused {})", name(form), refused.join("; "))
    }
}

fn print_warnings(saved: &Value) {
    for warning in saved["warnings"].as_array().into_iter().flatten() {
        eprintln!("warning: {}", s(warning, "message"));
    }
}

pub fn run(engine: &Engine, command: ProfileCommand, as_json: bool) -> Result<(), Failure> {
    match command {
        ProfileCommand::Add(args) => {
            // Read the key first: a failed read creates nothing.
            let key = if args.api_key_stdin { Some(read_key()?) } else { None };
            let key_required = if args.no_key {
                Some(false)
            } else if key.is_some() {
                Some(true)
            } else {
                None
            };
            let mut params = json!({
                "name": args.name, "baseUrl": args.base_url, "model": args.model, "embeddingModel": args.embedding_model, "timeoutS": args.timeout,
                "contextWindow": args.context_window, "maxOutputTokens": args.max_output_tokens, "temperature": args.temperature, "seed": args.seed,
                "inputPricePerMtok": args.input_price, "outputPricePerMtok": args.output_price, "keyRequired": key_required,
                "supportsJsonSchema": args.json_schema.is_some(),
                "schemaForm": if args.json_schema.as_deref() == Some("json-object") { "jsonObject" } else { "responseFormat" },
                "toolLoading": if args.tools.as_deref() == Some("on-demand") { "onDemand" } else { "all" },
            });
            if let Some(key) = key {
                // One call: the core stores the key and the profile together or neither.
                params["apiKey"] = json!(key);
                params["allowPlainHttp"] = json!(args.allow_plain_http);
            }
            let saved = engine.call("llmProfile.create", params)?;
            print_warnings(&saved);
            print(&saved, as_json, |saved| {
                let p = &saved["profile"];
                let key = p["keyFingerprint"].as_str().map(|f| format!(", key {f} in the keychain")).unwrap_or_default();
                println!("Added {} ({} at {}{key})", s(p, "name"), s(p, "model"), s(p, "baseUrl"));
            });
        }
        ProfileCommand::List => {
            let list = engine.call("llmProfile.list", json!({}))?;
            print(&list, as_json, |list| {
                let profiles = list["profiles"].as_array().cloned().unwrap_or_default();
                if profiles.is_empty() {
                    println!("No LLM profiles yet. Add one with `inkstone-cli profile add --name N --base-url URL --model M`.");
                }
                let missing = list["missingKeys"].as_array().cloned().unwrap_or_default();
                for p in &profiles {
                    let default = if p["isDefault"] == true { "*" } else { " " };
                    let gone = missing.contains(&p["id"]);
                    let key = p["keyFingerprint"]
                        .as_str()
                        .map(|f| if gone { format!("key {f} not in the keychain: set it with `profile set-key`") } else { format!("key {f}") })
                        .unwrap_or_else(|| if p["keyRequired"] == true { "no key".to_owned() } else { "no key needed".to_owned() });
                    println!("{default} {:<20} {:<8} {:<30} {}  ({key})", s(p, "name"), s(p, "health"), s(p, "model"), s(p, "baseUrl"));
                    println!("  {:<20} context window {}", "", window_text(p));
                }
                if list["envKeyActive"] == true {
                    println!("INKSTONE_LLM_API_KEY is set: every profile uses it in this process.");
                }
            });
        }
        ProfileCommand::Test { name } => {
            let result = engine.call("llmProfile.test", json!({"profile": name}))?;
            if as_json {
                println!("{}", serde_json::to_string_pretty(&result).unwrap_or_default());
            }
            if result["ok"] != true {
                let error: ApiError = serde_json::from_value(result["error"].clone()).unwrap_or_else(|_| ApiError::internal("the test failed without saying why"));
                return Err(error.into());
            }
            if !as_json {
                println!("ok: {} answered as {} in {} ms", s(&result["profile"], "name"), s(&result, "modelId"), result["latencyMs"]);
                println!("context window: {}", window_text(&result["profile"]));
                println!("structured output: {}", form_text(&result["profile"]));
                if let Some(seed) = result["calibration"]["seed"].as_object() {
                    let endpoint = match seed.get("endpoint").and_then(Value::as_str) {
                        Some("llamaCppPython") => "llama-cpp-python /extras/tokenize",
                        _ => "llama.cpp /tokenize",
                    };
                    println!(
                        "token calibration: x{:.2} (the server's tokenizer, {endpoint}, counted {} tokens in a sample Inkstone estimates at {})",
                        result["calibration"]["ratio"].as_f64().unwrap_or(1.0),
                        seed.get("serverTokens").cloned().unwrap_or_default(),
                        seed.get("estimatedTokens").cloned().unwrap_or_default()
                    );
                }
            }
            print_warnings(&result);
        }
        ProfileCommand::Default { name } => {
            let profile = engine.call("llmProfile.setDefault", json!({"profile": name}))?;
            print(&profile, as_json, |p| println!("{} is the default profile", s(p, "name")));
        }
        ProfileCommand::Remove { name } => {
            let deleted = engine.call("llmProfile.delete", json!({"profile": name}))?;
            print(&deleted, as_json, |d| println!("Removed {} and its key", s(d, "id")));
        }
        ProfileCommand::SetKey { name, clear, allow_plain_http } => {
            let key = if clear { Value::Null } else { Value::String(read_key()?) };
            let profile = engine.call("llmProfile.setKey", json!({"profile": name, "apiKey": key, "allowPlainHttp": allow_plain_http}))?;
            print(&profile, as_json, |p| match p["keyFingerprint"].as_str() {
                Some(fingerprint) => println!("Key {fingerprint} saved in the keychain for {}", s(p, "name")),
                None => println!("Key removed from {}", s(p, "name")),
            });
        }
        ProfileCommand::Models { name } => {
            let models = engine.call("llmProfile.models", json!({"profile": name}))?;
            print(&models, as_json, |m| m["models"].as_array().into_iter().flatten().for_each(|id| println!("{}", id.as_str().unwrap_or(""))));
        }
        ProfileCommand::Presets => {
            let presets = engine.call("llmProfile.presets", json!({}))?;
            print(&presets, as_json, |p| {
                for preset in p["presets"].as_array().into_iter().flatten() {
                    println!("{:<16} {:<34} {}", s(preset, "id"), s(preset, "label"), s(preset, "baseUrl"));
                }
            });
        }
    }
    Ok(())
}
