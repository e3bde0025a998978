//! The one metered door to a model. Everything that calls a model (drafting sessions,
//! connection tests, and later optimize runs, retrieval embeddings and model-assisted
//! checks) goes through [`Runtime::chat`], which:
//!
//! - uses exactly the profile it names (never another one, never a fallback);
//! - resolves the key (the process's `INKSTONE_LLM_API_KEY`, else the OS keychain);
//! - checks the workspace policy (POLICY_REFUSED) and the quotas (QUOTA_EXCEEDED)
//!   before anything is sent: a refused call sends nothing;
//! - leaves exactly one usage record, whatever the outcome.
//!
//! It sits in `llm` so that callers need no `api`: it takes the store, the clock and
//! the ids as parameters.

use std::future::Future;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use super::client::Embeddings;
use super::keychain::{account_for_profile, SecretStore};
use super::profile::{FormSource, LlmProfile, Provider, SchemaForm, StructuredForm};
use super::retry::{Jitter, RetryPolicy};
use super::transport::HttpCache;
use super::window::ServerWindow;
use super::{estimate_request_tokens, ApiKey, Cancel, ChatEvent, ChatRequest, ChatResponse, Endpoint, LlmClient, Usage};
use crate::clock::{Clock, IdSource};
use crate::error::{ApiError, ErrorCode};
use crate::store::{Batch, Durability, Store};
use crate::usage::{self, Quotas, UsageOutcome, UsageRecord, META_QUOTAS};

/// Which call this is, for the usage record.
#[derive(Debug, Clone, Copy)]
pub struct ModelCall<'a> {
    /// A profile id or name.
    pub profile: &'a str,
    /// `drafting`, `optimize`, `test_connection`, ...
    pub purpose: &'a str,
    pub session_id: Option<&'a str>,
    pub run_id: Option<&'a str>,
}

/// The async runtime model calls run on (started on first use), and what every call
/// needs from the engine's configuration: the secret store, the process's key, the
/// retry policy and the jitter seed.
pub struct Runtime {
    // The failure that stopped the runtime from starting (the OS refused the worker
    // thread or the I/O driver) is kept to answer every later call with the same
    // INTERNAL error.
    runtime: OnceLock<Result<tokio::runtime::Runtime, std::io::Error>>,
    jitter: OnceLock<Arc<Jitter>>,
    jitter_seed: u64,
    retry: RetryPolicy,
    secrets: Arc<dyn SecretStore>,
    env_api_key: Option<ApiKey>,
    /// One HTTP client per network settings, kept across calls.
    http: HttpCache,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime").field("env_api_key", &self.env_api_key).finish_non_exhaustive()
    }
}

impl Runtime {
    pub fn new(secrets: Arc<dyn SecretStore>, env_api_key: Option<ApiKey>, retry: RetryPolicy, jitter_seed: u64) -> Self {
        Runtime { runtime: OnceLock::new(), jitter: OnceLock::new(), jitter_seed, retry, secrets, env_api_key, http: HttpCache::default() }
    }

    /// Runs `future` to completion from synchronous code. From inside another async
    /// runtime (where blocking on this one would panic) it runs on a scoped thread.
    pub fn run<F>(&self, future: F) -> Result<F::Output, ApiError>
    where
        F: Future + Send,
        F::Output: Send,
    {
        let runtime = self
            .runtime
            .get_or_init(|| tokio::runtime::Builder::new_multi_thread().worker_threads(1).thread_name("inkstone-llm").enable_all().build())
            .as_ref()
            .map_err(|e| ApiError::internal(format!("the model runtime did not start: {e}")))?;
        if tokio::runtime::Handle::try_current().is_ok() {
            return std::thread::scope(|scope| scope.spawn(|| runtime.block_on(future)).join().map_err(|_| ApiError::internal("the model call stopped unexpectedly")));
        }
        Ok(runtime.block_on(future))
    }

    /// A client for `endpoint` with the engine's retry policy and shared jitter. Its
    /// HTTP client is the one kept for the endpoint's network settings (timeout, proxy,
    /// CA certificate), built on first use: a profile whose settings changed gets a new
    /// one.
    pub fn client(&self, endpoint: Endpoint) -> Result<LlmClient, ApiError> {
        let jitter = self.jitter.get_or_init(|| Arc::new(Jitter::new(self.jitter_seed)));
        let http = self.http.get(&endpoint)?;
        Ok(LlmClient::with_http(endpoint, http, self.retry, Arc::clone(jitter)))
    }

    /// How many HTTP clients this runtime built (one per network settings in use).
    pub fn http_clients_built(&self) -> u64 {
        self.http.built()
    }

    /// The key for a profile: the process's `INKSTONE_LLM_API_KEY` first, then the OS
    /// keychain. `None` when the profile takes no key.
    pub fn resolve_key(&self, profile: &LlmProfile) -> Result<Option<ApiKey>, ApiError> {
        if let Some(key) = &self.env_api_key {
            return Ok(Some(key.clone()));
        }
        let Some(fingerprint) = &profile.key_fingerprint else {
            if !profile.key_required {
                return Ok(None);
            }
            // No key was ever saved: say that, not what the keychain might say.
            return Err(ApiError::new(ErrorCode::ProviderAuth, format!("The profile \"{}\" has no API key; nothing was sent.", profile.name))
                .problem("profile.key_missing", &[("name", &profile.name)])
                .action("set_api_key", &[("profile", &profile.name)])
                .hint("use_env_key", "For headless use, set INKSTONE_LLM_API_KEY for the process.")
                .details(serde_json::json!({ "profileId": profile.id, "keyMissing": true })));
        };
        match self.secrets.get(&account_for_profile(&profile.id))? {
            Some(key) => Ok(Some(key)),
            // A key was saved but is no longer in the keychain (deleted outside the app,
            // or the data came from another machine): sending without it would only earn
            // a 401, so nothing is sent.
            None => Err(ApiError::new(
                ErrorCode::ProviderAuth,
                format!("The API key of the profile \"{}\" (ending {fingerprint}) is no longer in the system keychain; nothing was sent.", profile.name),
            )
            .problem("profile.key_gone", &[("name", &profile.name), ("fp", fingerprint)])
            .action("set_api_key_again", &[("profile", &profile.name)])
            .hint("use_env_key", "For headless use, set INKSTONE_LLM_API_KEY for the process.")
            .details(serde_json::json!({ "profileId": profile.id, "keyMissing": true }))),
        }
    }

    /// Calls the model of exactly the profile named in `call` (never another), after
    /// checking the quotas, and records the call's usage whatever its outcome.
    ///
    /// Errors: NOT_FOUND, VALIDATION (a disabled profile), PROVIDER_AUTH (no key),
    /// KEYCHAIN_UNAVAILABLE, QUOTA_EXCEEDED (nothing sent), and every provider error.
    #[allow(clippy::too_many_arguments)]
    pub fn chat(
        &self,
        store: &Store,
        clock: &dyn Clock,
        ids: &dyn IdSource,
        call: ModelCall<'_>,
        request: &ChatRequest,
        on_event: &mut (dyn FnMut(ChatEvent) + Send),
        cancel: &Cancel,
    ) -> Result<ChatResponse, ApiError> {
        let profile = load_profile(store, call.profile)?;
        if profile.provider == Provider::Disabled {
            return Err(
                ApiError::validation("profile", format!("The profile \"{}\" is disabled.", profile.name)).hint("enable_profile", "Enable the profile in Settings → AI models.")
            );
        }
        let api_key = self.resolve_key(&profile)?;
        // Never a form the server refused: a caller holding an older copy of the
        // profile gets the form the server takes.
        let refused = |form: SchemaForm| profile.structured_form.as_ref().is_some_and(|f| f.refused.iter().any(|r| r.form == form));
        let mut adapted: Option<ChatRequest> = match form_of(&request.response_format) {
            Some(form) if refused(form) && call.purpose != TEST_PURPOSE => Some(in_form(request, profile.schema_form_in_use().0)),
            _ => None,
        };
        loop {
            let sent = adapted.as_ref().unwrap_or(request);
            let outcome = self.chat_with(store, clock, ids, call, &profile, api_key.clone(), sent, on_event, cancel);
            // A server that refuses the structured-output form at work (a profile not
            // tested since its server changed): the form is recorded as refused, never
            // sent to it again, and the call goes again in the next form. A test of the
            // forms themselves takes the refusal as its answer.
            let Err(error) = &outcome else { return outcome };
            let Some(form) = form_of(&sent.response_format) else { return outcome };
            if !is_form_refusal(error) || call.purpose == TEST_PURPOSE {
                return outcome;
            }
            let status = error.details.as_ref().and_then(|d| d.get("status")).and_then(serde_json::Value::as_u64).unwrap_or(0) as u16;
            let refusal = super::profile::FormRefusal { form, status, message: error.message.clone() };
            let next = {
                let _guard = store.write_lock();
                let mut stored = load_profile(store, &profile.id)?;
                let next = stored.record_refusal(refusal, clock.now());
                let mut batch = Batch::new();
                batch.put(&stored)?;
                store.apply(batch, Durability::Durable)?;
                next
            };
            tracing::info!(profile = %profile.id, ?form, ?next, "the server refused the structured-output form; using the next one");
            adapted = Some(in_form(sent, next));
        }
    }

    /// One metered call of `request` with `profile` (loaded and checked by the caller).
    #[allow(clippy::too_many_arguments)]
    fn chat_with(
        &self,
        store: &Store,
        clock: &dyn Clock,
        ids: &dyn IdSource,
        call: ModelCall<'_>,
        profile: &LlmProfile,
        api_key: Option<ApiKey>,
        request: &ChatRequest,
        on_event: &mut (dyn FnMut(ChatEvent) + Send),
        cancel: &Cancel,
    ) -> Result<ChatResponse, ApiError> {
        let limited = with_output_limit(request, call.purpose, profile);
        let request = limited.as_ref().unwrap_or(request);
        let sampled = with_profile_sampling(request, profile);
        let request = sampled.as_ref().unwrap_or(request);
        let needed = estimate_request_tokens(request) + u64::from(request.max_output_tokens.unwrap_or(0));
        check_policy(store, clock, profile, needed)?;
        check_quota(store, clock, needed)?;
        let client = self.client(endpoint(profile, api_key)?)?;
        let started = std::time::Instant::now();
        let mut sent = 0;
        let result = self.run(client.chat_counting(request, on_event, cancel, &mut sent))?.map_err(|error| with_profile_server(error, profile));
        let latency_ms = started.elapsed().as_millis() as u64;
        let (model, usage, attempts, outcome) = match &result {
            Ok(reply) => (reply.model.clone(), reply.usage, reply.attempts, UsageOutcome::Ok),
            Err(error) => (profile.model.clone(), Usage::default(), sent.max(1), UsageOutcome::Error { code: ApiError::from(error.clone()).code }),
        };
        let metered = Metered { profile, call, model, usage, attempts, outcome, latency_ms };
        record_usage(store, clock, ids, metered)?;
        Ok(result?)
    }

    /// Tests `profile`'s connection and finds the structured-output form its server
    /// takes, in the same call: the test asks for a tiny JSON value in each form worth
    /// trying ([`LlmProfile::forms_to_try`]) until one is taken (one call for a server
    /// that takes its settings' form); when every form is refused, the test goes as a
    /// plain request and the schema will go in the prompt
    /// ([`SchemaForm::Instructions`]). Taken means answered: whether the model's JSON
    /// matches is the engine's to check (and repair) on every call. Returns the test's
    /// outcome and, when the server answered, the form (`None` when it failed for
    /// another reason). Each ask is a metered call of purpose `test_connection`.
    pub fn test_connection(
        &self,
        store: &Store,
        clock: &dyn Clock,
        ids: &dyn IdSource,
        profile: &LlmProfile,
        now: crate::model::Timestamp,
    ) -> (Result<ChatResponse, ApiError>, Option<StructuredForm>) {
        let schema = serde_json::json!({"type": "object", "required": ["ok"], "properties": {"ok": {"type": "boolean"}}});
        let call = ModelCall { profile: &profile.id, purpose: TEST_PURPOSE, session_id: None, run_id: None };
        // Forms the server refused before are asked again: the test is where a server
        // that changed shows it.
        let fresh = LlmProfile { structured_form: None, ..profile.clone() };
        let mut refused = Vec::new();
        for form in fresh.forms_to_try().into_iter().chain([SchemaForm::Instructions]) {
            let mut request = ChatRequest::new(vec![super::Message::user("Reply with the JSON object {\"ok\": true} and nothing else.")]);
            request.max_output_tokens = Some(16);
            request.response_format = super::profile::form_request(form, "connection_test", &schema);
            match self.chat(store, clock, ids, call, &request, &mut |_| {}, &Cancel::new()) {
                Ok(reply) => return (Ok(reply), Some(StructuredForm { form, source: FormSource::Test, refused, at: now })),
                Err(error) if is_form_refusal(&error) => {
                    let status = error.details.as_ref().and_then(|d| d.get("status")).and_then(serde_json::Value::as_u64).unwrap_or(0) as u16;
                    refused.push(super::profile::FormRefusal { form, status, message: error.message });
                }
                Err(error) => return (Err(error), None),
            }
        }
        // A plain request is never refused for its form.
        (Err(ApiError::internal("the connection test ran out of forms")), None)
    }

    /// The window `profile`'s server states for its model (see
    /// [`LlmClient::detect_window`]), asked with at most `timeout` per request. Nothing
    /// is metered: no model is called.
    pub fn detect_window(&self, profile: &LlmProfile, api_key: Option<ApiKey>, timeout: Duration, now: crate::model::Timestamp) -> Result<Option<ServerWindow>, ApiError> {
        let mut endpoint = endpoint(profile, api_key)?;
        endpoint.timeout = endpoint.timeout.min(timeout);
        let client = self.client(endpoint)?;
        let found = self.run(client.detect_window(&Cancel::new()))?;
        Ok(found.map(|(tokens, source)| ServerWindow { tokens, source, server: source.server(), detected_at: now }))
    }

    /// `text`'s tokens as `profile`'s server counts them with its own tokenizer (see
    /// [`LlmClient::count_tokens`]), asked with at most `timeout` per request; `None`
    /// when the server offers no tokenizer. Nothing is metered: no model is called.
    pub fn count_tokens(&self, profile: &LlmProfile, api_key: Option<ApiKey>, timeout: Duration, text: &str) -> Result<Option<(u64, super::window::TokenizerEndpoint)>, ApiError> {
        let mut endpoint = endpoint(profile, api_key)?;
        endpoint.timeout = endpoint.timeout.min(timeout);
        let client = self.client(endpoint)?;
        self.run(client.count_tokens(text, &Cancel::new()))
    }

    /// Embeds `inputs` with the embedding model of exactly the profile named in `call`,
    /// after checking the quotas, and records the call's usage whatever its outcome
    /// (one record for the whole call, however many batches it took). `timeout`, when
    /// given and shorter, replaces the profile's per-request timeout (a search cannot
    /// wait a minute for a query vector).
    ///
    /// Errors: NOT_FOUND, VALIDATION (a disabled profile, or one without an embedding
    /// model), PROVIDER_AUTH, KEYCHAIN_UNAVAILABLE, QUOTA_EXCEEDED (nothing sent), and
    /// every provider error.
    #[allow(clippy::too_many_arguments)]
    pub fn embed(
        &self,
        store: &Store,
        clock: &dyn Clock,
        ids: &dyn IdSource,
        call: ModelCall<'_>,
        inputs: &[String],
        timeout: Option<Duration>,
        cancel: &Cancel,
    ) -> Result<Embeddings, ApiError> {
        let profile = load_profile(store, call.profile)?;
        if profile.provider == Provider::Disabled {
            return Err(
                ApiError::validation("profile", format!("The profile \"{}\" is disabled.", profile.name)).hint("enable_profile", "Enable the profile in Settings → AI models.")
            );
        }
        let Some(embedding_model) = profile.embedding_model.clone() else {
            return Err(ApiError::validation("embeddingModel", format!("The profile \"{}\" names no embedding model.", profile.name))
                .hint("set_embedding_model", "Set an embedding model for the profile in Settings → AI models."));
        };
        let api_key = self.resolve_key(&profile)?;
        let needed = inputs.iter().map(|i| super::estimate_tokens(i)).sum();
        check_policy(store, clock, &profile, needed)?;
        check_quota(store, clock, needed)?;
        let mut endpoint = endpoint(&profile, api_key)?;
        endpoint.model = embedding_model.clone();
        if let Some(timeout) = timeout {
            endpoint.timeout = endpoint.timeout.min(timeout);
        }
        let client = self.client(endpoint)?;
        let started = std::time::Instant::now();
        let result = self.run(client.embed(inputs, super::client::MAX_EMBEDDING_BATCH, cancel))?;
        let latency_ms = started.elapsed().as_millis() as u64;
        let (model, usage, attempts, outcome) = match &result {
            Ok(embeddings) => {
                (embeddings.model.clone(), Usage { input_tokens: embeddings.input_tokens, output_tokens: 0, estimated: false }, embeddings.attempts, UsageOutcome::Ok)
            }
            Err(error) => (embedding_model, Usage::default(), 1, UsageOutcome::Error { code: ApiError::from(error.clone()).code }),
        };
        record_usage(store, clock, ids, Metered { profile: &profile, call, model, usage, attempts, outcome, latency_ms })?;
        Ok(result?)
    }
}

/// The purpose of a connection test's calls, which also find the structured-output
/// form the server takes ([`Runtime::test_connection`]).
pub const TEST_PURPOSE: &str = "test_connection";

/// Whether a call failed because the server does not take its structured-output form.
fn is_form_refusal(error: &ApiError) -> bool {
    error.details.as_ref().is_some_and(|d| d.get("formRejected").and_then(serde_json::Value::as_bool) == Some(true))
}

/// The form a request's response format is in (`None`: plain text).
fn form_of(format: &super::ResponseFormat) -> Option<SchemaForm> {
    match format {
        super::ResponseFormat::Text => None,
        super::ResponseFormat::JsonSchema { .. } => Some(SchemaForm::ResponseFormat),
        super::ResponseFormat::JsonObjectSchema { .. } => Some(SchemaForm::JsonObject),
    }
}

/// `request` asking for its schema in `form` instead. In
/// [`SchemaForm::Instructions`] the schema is stated in the prompt unless a message
/// already states it (every structured step of the engine does).
fn in_form(request: &ChatRequest, form: SchemaForm) -> ChatRequest {
    let (name, schema) = match &request.response_format {
        super::ResponseFormat::JsonSchema { name, schema } => (name.clone(), schema.clone()),
        super::ResponseFormat::JsonObjectSchema { schema } => ("reply".to_owned(), schema.clone()),
        super::ResponseFormat::Text => return request.clone(),
    };
    let mut adapted = request.clone();
    adapted.response_format = super::profile::form_request(form, &name, &schema);
    if form == SchemaForm::Instructions {
        let text = schema.to_string();
        if !adapted.messages.iter().any(|m| m.content.contains(&text)) {
            adapted.messages.push(super::Message::system(super::structured::instructions(&schema)));
        }
    }
    adapted
}

/// The output limit a call's purpose needs, when the caller set none: a connection
/// test a few tokens, a reranking a short list, an answer a few paragraphs. A local
/// model writes a few tokens a second, so an unbounded step can run for many minutes.
/// (Drafting, optimize and compaction set their own limits.)
pub fn purpose_output_limit(purpose: &str) -> Option<u32> {
    match purpose {
        TEST_PURPOSE => Some(16),
        "ask_rerank" => Some(256),
        "ask" => Some(1024),
        "title" => Some(64),
        _ => None,
    }
}

/// `request` with an output limit fitted to its purpose and to the profile: the
/// purpose's limit when none was set, never above the profile's `max_output_tokens`,
/// and, when the window is known, never more than the window leaves after the prompt
/// (vLLM refuses a request whose prompt plus `max_tokens` exceeds its window). `None`
/// when the request stays as it is.
fn with_output_limit(request: &ChatRequest, purpose: &str, profile: &LlmProfile) -> Option<ChatRequest> {
    let mut limit = request.max_output_tokens.or_else(|| purpose_output_limit(purpose));
    if let Some(max) = profile.max_output_tokens {
        limit = Some(limit.map_or(max, |l| l.min(max)));
    }
    if let Some(wanted) = limit {
        // Room the window leaves (estimates run low for some scripts: a tenth spare).
        let prompt = estimate_request_tokens(request);
        let room = u64::from(profile.context_window).saturating_sub(prompt + prompt / 10);
        if room >= 256 && u64::from(wanted) > room {
            limit = Some(room as u32);
        }
    }
    (limit != request.max_output_tokens).then(|| ChatRequest { max_output_tokens: limit, ..request.clone() })
}

/// `request` with the profile's sampling settings: its temperature over the step's own
/// (the person chose it for their model), its seed. `None` when the profile sets neither.
fn with_profile_sampling(request: &ChatRequest, profile: &LlmProfile) -> Option<ChatRequest> {
    if profile.temperature.is_none() && profile.seed.is_none() {
        return None;
    }
    Some(ChatRequest { temperature: profile.temperature.or(request.temperature), seed: profile.seed.or(request.seed), ..request.clone() })
}

/// A context overflow said for the profile's server when its window was read from
/// the server (Ollama words its runner's llama.cpp error; the profile knows better).
fn with_profile_server(error: super::LlmError, profile: &LlmProfile) -> super::LlmError {
    match (error, profile.server_window) {
        (super::LlmError::ContextTooLong { message, prompt_tokens, window, server }, known) => {
            super::LlmError::ContextTooLong { message, prompt_tokens, window, server: known.map(|w| w.server).or(server) }
        }
        (other, _) => other,
    }
}

/// What one metered call leaves in its usage record.
struct Metered<'a> {
    profile: &'a LlmProfile,
    call: ModelCall<'a>,
    model: String,
    usage: Usage,
    attempts: u32,
    outcome: UsageOutcome,
    latency_ms: u64,
}

fn record_usage(store: &Store, clock: &dyn Clock, ids: &dyn IdSource, metered: Metered<'_>) -> Result<(), ApiError> {
    let Metered { profile, call, model, usage, attempts, outcome, latency_ms } = metered;
    let record = UsageRecord {
        id: ids.next_id("usg"),
        at: clock.now(),
        profile_id: profile.id.clone(),
        profile_name: profile.name.clone(),
        model,
        purpose: call.purpose.to_owned(),
        session_id: call.session_id.map(str::to_owned),
        run_id: call.run_id.map(str::to_owned),
        input_tokens: usage.input_tokens,
        output_tokens: usage.output_tokens,
        tokens_estimated: usage.estimated,
        cost: usage::cost(profile.input_price_per_mtok, profile.output_price_per_mtok, usage.input_tokens, usage.output_tokens),
        latency_ms,
        attempts,
        outcome,
    };
    let _guard = store.write_lock();
    let mut batch = Batch::new();
    // The record and the month's and day's running totals, in one transaction.
    usage::stage_call(store, &mut batch, &record)?;
    // Metering is not worth a disk sync per call; the group commit covers it.
    store.apply(batch, Durability::Grouped)?;
    Ok(())
}

impl Drop for Runtime {
    fn drop(&mut self) {
        // Dropping a runtime inside another one (an engine dropped in `serve`) would
        // panic; shutting down in the background is allowed anywhere.
        if let Some(Ok(runtime)) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// The endpoint of a profile: its base URL, model, timeout, proxy and CA file (read
/// here, so a missing file is a VALIDATION error naming the field).
pub fn endpoint(profile: &LlmProfile, api_key: Option<ApiKey>) -> Result<Endpoint, ApiError> {
    let ca_cert_pem = match &profile.ca_cert_path {
        Some(path) => Some(std::fs::read(path).map_err(|e| {
            ApiError::validation("caCertPath", format!("The CA certificate {path} cannot be read: {e}.")).hint("check_profile", "Check the profile's CA certificate path.")
        })?),
        None => None,
    };
    Ok(Endpoint {
        base_url: profile.base_url.clone(),
        model: profile.model.clone(),
        api_key,
        timeout: Duration::from_secs(u64::from(profile.timeout_s)),
        proxy_url: profile.proxy_url.clone(),
        ca_cert_pem,
    })
}

/// The LLM profile named by id or (case-insensitive) name.
pub fn load_profile(store: &Store, name_or_id: &str) -> Result<LlmProfile, ApiError> {
    if let Some(profile) = store.get::<LlmProfile>(name_or_id.as_bytes())? {
        return Ok(profile);
    }
    let wanted = name_or_id.trim().to_lowercase();
    store.scan::<LlmProfile>(b"")?.into_iter().find(|p| p.name.to_lowercase() == wanted).ok_or_else(|| ApiError::not_found("LLM profile", name_or_id).action("list_profiles", &[]))
}

/// The stored quotas (none set: both `None`).
pub fn quotas(store: &Store) -> Result<Quotas, ApiError> {
    Ok(store.get::<Quotas>(META_QUOTAS)?.unwrap_or_default())
}

/// Refuses a call to `profile`'s server needing about `needed_tokens` when the
/// workspace policy this app last saw forbids it (the provider's host, the member's
/// monthly cap). Nothing is read but one meta record unless the policy caps spending.
pub fn check_policy(store: &Store, clock: &dyn Clock, profile: &LlmProfile, needed_tokens: u64) -> Result<(), ApiError> {
    let Some(cached) = store.get::<crate::policy::CachedPolicy>(crate::policy::META_POLICY)? else { return Ok(()) };
    let host = super::profile::host_of(&profile.base_url);
    let to = crate::policy::Destination { host: &host, loopback: super::profile::is_loopback(&profile.base_url) };
    // The month's running total: one read, however many calls this month made.
    let spent = if crate::policy::caps_spending(&cached.policy) { crate::policy::month_spent_stored(store, clock.now())? } else { crate::policy::MonthSpent::default() };
    crate::policy::check(&cached.policy, to, spent, needed_tokens).map_err(|refused| crate::policy::refused(refused, &cached))
}

/// Refuses a call needing about `needed_tokens` when it would break a quota.
fn check_quota(store: &Store, clock: &dyn Clock, needed_tokens: u64) -> Result<(), ApiError> {
    let quotas = quotas(store)?;
    if quotas.daily_tokens.is_none() && quotas.monthly_cost.is_none() {
        return Ok(());
    }
    let now = clock.now();
    let today = if quotas.daily_tokens.is_some() { usage::total(store, &usage::day_of(now))?.tokens } else { 0 };
    let month = if quotas.monthly_cost.is_some() { usage::total(store, &usage::month_of(now))?.cost } else { 0.0 };
    usage::check_quota_spent(&quotas, today, month, needed_tokens)?;
    Ok(())
}
