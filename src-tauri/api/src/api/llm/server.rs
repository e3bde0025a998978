//! The questions put to a profile's server: the connection test (which also reads the
//! server's window and tokenizer), its models, and the servers found on this computer
//! (see [`super`]).

use std::time::Duration;

use super::{bad_base_url, LlmDetectLocalResult, LlmModelsParams, LlmModelsResult, LlmProfileRef, LlmTestResult, LocalServer, WINDOW_PROBE_TIMEOUT};
use crate::api::{ApiError, Empty, Engine, ErrorCode, Hint};
use crate::llm::profile::{normalize_base_url, presets, Health, ProfileError};
use crate::llm::{Cancel, Endpoint};
use crate::store::{Batch, Durability};

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
pub(in crate::api) fn test(engine: &Engine, params: LlmProfileRef) -> Result<LlmTestResult, ApiError> {
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

pub(in crate::api) fn models(engine: &Engine, params: LlmModelsParams) -> Result<LlmModelsResult, ApiError> {
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

pub(in crate::api) fn detect_local(engine: &Engine, _: Empty) -> Result<LlmDetectLocalResult, ApiError> {
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
