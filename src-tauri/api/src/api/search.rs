//! Search: `search.query` over the local index (working copies, versions, comments),
//! `search.reindex` and `search.status`.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::{required_text, ApiError, Empty, Engine};
use crate::llm::profile::LlmProfile;
use crate::llm::{ChatRequest, ModelCall};
use crate::retrieval::ask::{self, Answer, AskRoute};
use crate::retrieval::{DocKind, Filter, IndexStatus, SearchMode, SearchRequest, SearchResults, SearchScope};

/// Longest query, in characters.
pub const MAX_QUERY_CHARS: usize = 500;
/// Hits when `limit` is absent.
pub const DEFAULT_SEARCH_LIMIT: u32 = 20;

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SearchQueryParams {
    /// The query: words, a phrase, a pasted title; Chinese or English.
    pub q: String,
    /// Default: `project` when `projectId` is given, else `workspace`.
    #[serde(default)]
    #[ts(optional)]
    pub scope: Option<super::dto::SearchScope>,
    /// Required for the `project` scope.
    #[serde(default)]
    #[ts(optional)]
    pub project_id: Option<String>,
    /// Which documents; default all (working copies, versions, comments).
    #[serde(default)]
    #[ts(optional)]
    pub kinds: Option<Vec<super::dto::DocKind>>,
    /// 1–100; default 20.
    #[serde(default)]
    #[ts(optional)]
    pub limit: Option<u32>,
}

/// The request a `search.query` asks for, checked (the project must exist).
fn request(engine: &Engine, params: SearchQueryParams) -> Result<SearchRequest, ApiError> {
    let query = required_text("q", &params.q, MAX_QUERY_CHARS)?;
    let scope = params.scope.map(SearchScope::from).unwrap_or(if params.project_id.is_some() { SearchScope::Project } else { SearchScope::Workspace });
    let project_id = match (scope, params.project_id) {
        (SearchScope::Project, None) => {
            return Err(ApiError::validation("projectId", "A project search needs `projectId`.").hint("give_project", "Give `projectId`, or search the workspace."))
        }
        (_, Some(project_id)) => {
            crate::project::load(engine.store(), &project_id)?;
            Some(project_id)
        }
        (SearchScope::Workspace, None) => None,
    };
    let limit = params.limit.unwrap_or(DEFAULT_SEARCH_LIMIT);
    if !(1..=crate::retrieval::MAX_LIMIT as u32).contains(&limit) {
        return Err(ApiError::validation("limit", format!("`limit` must be between 1 and {}.", crate::retrieval::MAX_LIMIT)));
    }
    Ok(SearchRequest {
        query,
        scope,
        filter: Filter { project_id, exclude_project: None, kinds: params.kinds.unwrap_or_default().into_iter().map(Into::into).collect(), platform: None },
        limit: limit as usize,
        mode: SearchMode::Fused,
    })
}

pub(super) fn query(engine: &Engine, params: SearchQueryParams) -> Result<SearchResults, ApiError> {
    let request = request(engine, params)?;
    engine.search_index().search(&request)
}

/// Starts a rebuild of the index from the store; searches keep answering from the
/// current index until the new one is ready.
pub(super) fn reindex(engine: &Engine, _: Empty) -> Result<IndexStatus, ApiError> {
    engine.search_index().reindex();
    Ok(engine.search_index().status())
}

pub(super) fn status(engine: &Engine, _: Empty) -> Result<IndexStatus, ApiError> {
    Ok(engine.search_index().status())
}

/// Sources an answer is given from when `limit` is absent, and at most.
pub const DEFAULT_ASK_SOURCES: u32 = 6;
pub const MAX_ASK_SOURCES: u32 = 15;
/// Documents retrieved for a question; when more than `limit` are found, the model
/// reranks them down to `limit` sources.
pub const ASK_CANDIDATES: usize = 50;

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SearchAskParams {
    /// The question.
    pub q: String,
    /// Default: `project` when `projectId` is given, else `workspace`.
    #[serde(default)]
    #[ts(optional)]
    pub scope: Option<super::dto::SearchScope>,
    #[serde(default)]
    #[ts(optional)]
    pub project_id: Option<String>,
    /// The LLM profile to answer with (id or name); default: the default profile.
    #[serde(default)]
    #[ts(optional)]
    pub profile: Option<String>,
    /// How many sources to answer from, 1–15; default 6. When more documents match
    /// (up to 50 are retrieved), the model first reranks them down to this many.
    #[serde(default)]
    #[ts(optional)]
    pub limit: Option<u32>,
    /// `material` (retrieve, then answer with citations) or `general` (answer
    /// directly); absent: the engine decides and says which in the answer.
    #[serde(default)]
    #[ts(optional)]
    pub route: Option<super::dto::AskRoute>,
    /// Ask again rather than answer from the cache (the new answer replaces the
    /// cached one).
    #[serde(default)]
    #[ts(optional)]
    pub fresh: Option<bool>,
    /// An id the caller picks, so that `search.askCancel` can stop this question.
    #[serde(default)]
    #[ts(optional)]
    pub request_id: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SearchAskCancelParams {
    pub request_id: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SearchAskCancelResult {
    /// False when no question runs under that id (it had ended).
    pub cancelled: bool,
}

/// Stops a running `search.ask` by the request id it was given: its model call ends
/// at once and the ask fails with CANCELLED; nothing is cached.
pub(super) fn ask_cancel(engine: &Engine, params: SearchAskCancelParams) -> Result<SearchAskCancelResult, ApiError> {
    Ok(SearchAskCancelResult { cancelled: engine.cancel_request(&params.request_id) })
}

/// The profile a question is answered with: the one named (an id or a name), else the
/// default profile.
fn answering_profile(engine: &Engine, name: Option<&str>) -> Result<LlmProfile, ApiError> {
    match name {
        Some(name) => engine.llm_profile(name),
        None => engine
            .store()
            .scan::<LlmProfile>(b"")?
            .into_iter()
            .find(|p| p.is_default)
            .ok_or_else(|| ApiError::validation("profile", "There is no LLM profile to answer with.").action("add_profile", &[])),
    }
}

/// Answers a question. On the `material` route (the person's own writing): retrieves
/// sources, asks the model to answer from them with `[N]` citations, then resolves
/// every citation to its document, version and span and checks every quotation
/// against the sources. On the `general` route: asks the model directly, without
/// retrieval. Without a route given, the engine decides ([`ask::route`]). The same
/// question (the same normalised text, or with embeddings on a question of the same
/// meaning, similarity ≥ 0.98; the same route asked for, scope, profile and index
/// state) within ten minutes is answered from the cache without a model call, unless
/// `fresh`.
///
/// Errors: VALIDATION (no profile, a bad parameter), NOT_FOUND, and every error of
/// the model call (PROVIDER_*, QUOTA_EXCEEDED, ...).
pub(super) fn ask(engine: &Engine, params: SearchAskParams) -> Result<Answer, ApiError> {
    let request_guard = engine.begin_request(params.request_id.as_deref());
    let cancel = &request_guard.cancel;
    let limit = params.limit.unwrap_or(DEFAULT_ASK_SOURCES);
    if !(1..=MAX_ASK_SOURCES).contains(&limit) {
        return Err(ApiError::validation("limit", format!("`limit` must be between 1 and {MAX_ASK_SOURCES}.")));
    }
    let chosen_route = params.route.map(AskRoute::from);
    let request = request(engine, SearchQueryParams { q: params.q, scope: params.scope, project_id: params.project_id, kinds: None, limit: Some(limit) })?;
    let profile = answering_profile(engine, params.profile.as_deref())?;
    let index = engine.search_index();
    // Everything an answer depends on but the question's wording.
    let context = serde_json::json!([request.scope, request.filter.project_id, limit, profile.id, chosen_route, index.generation()]).to_string();
    let key = serde_json::json!([crate::retrieval::text::normalize_label(&request.query), context]).to_string();
    let now = engine.now();
    // With embeddings on, a question that means the same is the same question.
    let meaning = index.question_vector(&request.query);
    if params.fresh != Some(true) {
        let by_meaning = || meaning.as_ref().and_then(|vector| index.cached_answer_by_meaning(&context, vector, now));
        if let Some(mut cached) = index.cached_answer(&key, now).or_else(by_meaning) {
            cached.cached = true;
            return Ok(cached);
        }
    }
    let (candidates, notice) = match chosen_route {
        Some(AskRoute::General) => (Vec::new(), None),
        Some(AskRoute::Material) | None => index.sources(&SearchRequest { limit: ASK_CANDIDATES, ..request.clone() })?,
    };
    let route = chosen_route.unwrap_or_else(|| ask::route(&request.query, candidates.iter().map(|s| s.tier).min()));
    let candidates = if route == AskRoute::General { Vec::new() } else { candidates };
    let call = ModelCall { profile: &profile.id, purpose: "ask", session_id: None, run_id: None };
    let keep = limit as usize;
    // Every request is sized to the profile's window, counted as its server counts
    // (the estimate, calibrated by the usage it reported before).
    let window = u64::from(profile.context_window);
    let calibration = crate::harness::compaction::profile_context(engine.store(), &profile.id)?;
    let tokens = |messages: &[crate::llm::Message]| calibration.calibrated(crate::llm::estimate_request_tokens(&ChatRequest::new(messages.to_vec())));
    // A stream cut off before a word on a request that fills the window is said as the
    // likely overflow it is (llama-cpp-python reports one only in its log).
    let server = profile.server_window.map(|w| w.server);
    let likely_overflow = |error: ApiError, request: &ChatRequest| {
        let prompt = calibration.calibrated(crate::llm::estimate_request_tokens(request));
        crate::llm::error::likely_overflow(error, prompt, u64::from(request.max_output_tokens.unwrap_or(0)), window, server)
    };
    // The rerank shows as many candidates, best first, as leave its short reply room.
    let rerank_reply = u64::from(crate::llm::runtime::purpose_output_limit("ask_rerank").unwrap_or(256));
    let shown = (1..=candidates.len()).take_while(|k| tokens(&ask::rerank_prompt(&request.query, &candidates[..*k], keep)) + rerank_reply <= window).last().unwrap_or(0);
    // More documents than sources: the model picks the ones that answer the question;
    // a reply without a usable list keeps the retrieval order.
    let (sources, reranked) = if candidates.len() > keep && shown > keep {
        let candidates = &candidates[..shown];
        let mut rerank = ChatRequest::new(ask::rerank_prompt(&request.query, candidates, keep));
        rerank.temperature = Some(0.0);
        let reply = engine.model_chat(ModelCall { purpose: "ask_rerank", ..call }, &rerank, &mut |_| {}, cancel).map_err(|e| likely_overflow(e, &rerank))?;
        match ask::reranked(&reply.text, candidates, keep) {
            Some(picked) => (picked, true),
            None => (candidates.iter().take(keep).cloned().collect(), false),
        }
    } else {
        (candidates.iter().take(keep).cloned().collect(), false)
    };
    let mut answer = Answer {
        answer: String::new(),
        model: None,
        sources: Vec::new(),
        citations: Vec::new(),
        quotes: Vec::new(),
        unknown_citations: Vec::new(),
        retrieved: candidates.len() as u32,
        cited: 0,
        footer: ask::footer(candidates.len(), 0),
        notice: if route == AskRoute::General { None } else { notice },
        cached: false,
        reranked,
        route,
        route_chosen: chosen_route.is_some(),
    };
    // Nothing of the person's matches: say so without asking a model.
    if route == AskRoute::Material && sources.is_empty() {
        return Ok(answer);
    }
    // The sources that fit with the answer's reply, best first; only these are sent,
    // and only these can be cited.
    let wanted = crate::llm::runtime::purpose_output_limit("ask").unwrap_or(1024).min(profile.max_output_tokens.unwrap_or(u32::MAX)).max(1);
    let fitted = ask::fit(&request.query, &sources, window, wanted, &tokens).map_err(|too_long| ask_too_long(too_long, &profile))?;
    let sources = fitted.sources;
    let messages = match route {
        AskRoute::Material => ask::prompt(&request.query, &sources),
        AskRoute::General => ask::prompt_general(&request.query),
    };
    let mut chat = ChatRequest::new(messages);
    chat.temperature = Some(0.2);
    chat.max_output_tokens = Some(fitted.max_output);
    let response = engine.model_chat(call, &chat, &mut |_| {}, cancel).map_err(|e| likely_overflow(e, &chat))?;
    let checked = ask::check(&response.text, &sources);
    let mut cited: Vec<(&str, DocKind, Option<u32>, Option<&str>)> =
        checked.citations.iter().map(|c| (c.project_id.as_str(), c.kind, c.version, c.comment_id.as_deref())).collect();
    cited.sort();
    cited.dedup();
    answer.cited = cited.len() as u32;
    answer.footer = ask::footer(candidates.len(), cited.len());
    answer.answer = response.text;
    answer.model = Some(response.model);
    answer.citations = checked.citations;
    answer.quotes = checked.quotes;
    answer.unknown_citations = checked.unknown_citations;
    answer.sources = sources;
    index.cache_answer(key, now, answer.clone());
    if let Some(vector) = meaning {
        index.cache_answer_by_meaning(context, vector, now, answer.clone());
    }
    Ok(answer)
}

/// CONTEXT_TOO_LONG for a question that cannot fit the window even with one short
/// source: the numbers, and the choices (a shorter question, a larger window said for
/// the profile's server). Nothing was sent.
fn ask_too_long(too_long: ask::TooLong, profile: &LlmProfile) -> ApiError {
    let ask::TooLong { prompt_tokens, reply_floor, window } = too_long;
    let needed = prompt_tokens + u64::from(reply_floor);
    let server = profile.server_window.map(|w| w.server);
    let (needed_text, window_text) = (needed.to_string(), window.to_string());
    let error = ApiError::new(
        crate::error::ErrorCode::ContextTooLong,
        format!(
            "The question needs about {needed} tokens ({prompt_tokens} of prompt with the shortest source, {reply_floor} for the answer), and the model's context window is {window} tokens; nothing was sent."
        ),
    )
    .problem("model.context_too_long", &[("prompt", &needed_text), ("window", &window_text)])
    .hint("shorter_question", "Ask a shorter question.")
    .details(serde_json::json!({
        "promptTokens": needed,
        "replyReserve": reply_floor,
        "contextWindow": window,
        "server": server.map(crate::llm::window::ServerKind::id),
    }));
    crate::llm::error::larger_window_hint(error, needed + needed / 4, server)
}
