//! The wire JSON of the subsystems' records (memory, the policy, search, model
//! profiles, the text pipeline), written out against their twins.

use std::collections::BTreeMap;

use serde_json::json;

use crate::model::{Anchor, DraftContent, Platform};

use super::tests::at;

/// Memory items and habits, held to their twins' wire JSON the same way.
#[test]
fn the_wire_json_of_memory_records_is_their_twins() {
    let item = crate::memory::MemoryItem {
        id: "mem_1".into(),
        scope: crate::memory::MemoryScope::Project { project_id: "prj_1".into() },
        scope_id: "prj_1".into(),
        text: "Short titles".into(),
        status: crate::memory::MemoryStatus::Proposed,
        origin: crate::memory::MemoryOrigin::Model { session_id: "ses_1".into(), tool_use_id: "call_1".into() },
        created_at: at(),
        updated_at: at(),
    };
    assert_eq!(
        serde_json::to_value(super::MemoryItem::from(&item)).unwrap(),
        json!({
            "id": "mem_1", "scope": {"type": "project", "projectId": "prj_1"}, "scopeId": "prj_1", "text": "Short titles", "status": "proposed",
            "origin": {"type": "model", "sessionId": "ses_1", "toolUseId": "call_1"}, "createdAt": "2026-01-02T03:04:05Z", "updatedAt": "2026-01-02T03:04:05Z"
        })
    );
    let mine = crate::memory::MemoryItem {
        scope: crate::memory::MemoryScope::Workspace,
        status: crate::memory::MemoryStatus::Confirmed,
        origin: crate::memory::MemoryOrigin::Person,
        ..item.clone()
    };
    let wire = serde_json::to_value(super::MemoryItem::from(&mine)).unwrap();
    assert_eq!((&wire["scope"], &wire["status"], &wire["origin"]), (&json!({"type": "workspace"}), &json!("confirmed"), &json!({"type": "person"})));
    let habit = crate::memory::Habit { id: "platform:wechat".into(), kind: crate::memory::HabitKind::PreferredPlatform, text: "Often WeChat".into(), sources: vec!["v1".into()] };
    assert_eq!(
        serde_json::to_value(super::Habit::from(&habit)).unwrap(),
        json!({"id": "platform:wechat", "kind": "preferred_platform", "text": "Often WeChat", "sources": ["v1"]})
    );
}

/// The workspace policy as the app last saw it, with the month's spend; a provider
/// rule as a parameter.
#[test]
fn the_wire_json_of_the_policy_is_its_twins() {
    let cached = crate::policy::CachedPolicy {
        workspace_id: "wsp_1".into(),
        workspace_name: "Team".into(),
        policy: crate::policy::Policy {
            providers: crate::policy::ProviderRule::Hosts { hosts: vec!["api.example.com".into()] },
            performance_context: false,
            monthly_cap_usd: Some(2.5),
            monthly_cap_tokens: None,
            share_activity: true,
        },
        set_by: Some("Olga".into()),
        set_at: None,
        fetched_at: at(),
    };
    let standing = crate::sync::policy::PolicyStanding { policy: Some(cached), can_set: true, fresh: false, spent: crate::policy::MonthSpent { tokens: 1200, cost_usd: 0.5 } };
    assert_eq!(
        serde_json::to_value(super::PolicyStanding::from(&standing)).unwrap(),
        json!({
            "policy": {
                "workspaceId": "wsp_1", "workspaceName": "Team", "setBy": "Olga", "fetchedAt": "2026-01-02T03:04:05Z",
                "policy": {
                    "providers": {"kind": "hosts", "hosts": ["api.example.com"]}, "performanceContext": false, "monthlyCapUsd": 2.5,
                    "shareActivity": true
                }
            },
            "canSet": true, "fresh": false, "spent": {"tokens": 1200, "costUsd": 0.5}
        })
    );
    let rules: Vec<super::ProviderRule> = serde_json::from_value(json!([{"kind": "any"}, {"kind": "local"}, {"kind": "hosts", "hosts": ["h"]}])).unwrap();
    assert_eq!(
        rules.into_iter().map(crate::policy::ProviderRule::from).collect::<Vec<_>>(),
        [crate::policy::ProviderRule::Any, crate::policy::ProviderRule::Local, crate::policy::ProviderRule::Hosts { hosts: vec!["h".into()] }]
    );
}

/// Search's hits, the index status, Ask's answers and suggested keywords, and what
/// search takes as parameters.
#[test]
fn the_wire_json_of_search_records_is_their_twins() {
    use crate::retrieval::{self as search, ask};
    let span = Anchor { from: 0, to: 3 };
    let results = search::SearchResults {
        hits: vec![search::SearchHit {
            project_id: "prj_1".into(),
            project_title: "Tea".into(),
            archived: false,
            kind: search::DocKind::Version,
            version: Some(2),
            comment_id: None,
            title: "Tea".into(),
            span: Some(span),
            snippet: search::Snippet { text: "Tea time".into(), highlights: vec![span] },
            tier: search::Tier::TitleKeywords,
            score: 0.5,
            also_in: vec![1],
        }],
        semantic: false,
        notice: Some(search::SearchNotice { code: search::NoticeCode::SemanticOff, message: "Lexical only.".into() }),
    };
    assert_eq!(
        serde_json::to_value(super::SearchResults::from(&results)).unwrap(),
        json!({
            "hits": [{
                "projectId": "prj_1", "projectTitle": "Tea", "archived": false, "kind": "version", "version": 2, "commentId": null, "title": "Tea",
                "span": {"from": 0, "to": 3}, "snippet": {"text": "Tea time", "highlights": [{"from": 0, "to": 3}]}, "tier": "titleKeywords",
                "score": 0.5, "alsoIn": [1]
            }],
            "semantic": false, "notice": {"code": "semanticOff", "message": "Lexical only."}
        })
    );
    let status = search::IndexStatus { documents: 4, building: true, pending: 1, embedding_model: None, vectors: 0, vectors_missing: 4 };
    assert_eq!(
        serde_json::to_value(super::IndexStatus::from(status)).unwrap(),
        json!({"documents": 4, "building": true, "pending": 1, "embeddingModel": null, "vectors": 0, "vectorsMissing": 4})
    );
    let answer = ask::Answer {
        answer: "Tea [1].".into(),
        model: Some("m".into()),
        sources: vec![ask::Source {
            n: 1,
            project_id: "prj_1".into(),
            project_title: "Tea".into(),
            kind: search::DocKind::Working,
            version: None,
            comment_id: None,
            span,
            text: "Tea".into(),
            tier: search::Tier::Body,
        }],
        citations: vec![ask::Citation { n: 1, project_id: "prj_1".into(), kind: search::DocKind::Comment, version: None, comment_id: Some("cmt_1".into()), span }],
        quotes: vec![ask::Quote { text: "Tea time".into(), found: false, source: None, span: None }],
        unknown_citations: vec![7],
        retrieved: 3,
        cited: 1,
        footer: "retrieved 3, cited 1".into(),
        notice: None,
        cached: false,
        reranked: true,
        route: ask::AskRoute::Material,
        route_chosen: false,
    };
    assert_eq!(
        serde_json::to_value(super::Answer::from(&answer)).unwrap(),
        json!({
            "answer": "Tea [1].", "model": "m",
            "sources": [{
                "n": 1, "projectId": "prj_1", "projectTitle": "Tea", "kind": "working", "version": null, "commentId": null,
                "span": {"from": 0, "to": 3}, "text": "Tea", "tier": "body"
            }],
            "citations": [{"n": 1, "projectId": "prj_1", "kind": "comment", "version": null, "commentId": "cmt_1", "span": {"from": 0, "to": 3}}],
            "quotes": [{"text": "Tea time", "found": false, "source": null, "span": null}],
            "unknownCitations": [7], "retrieved": 3, "cited": 1, "footer": "retrieved 3, cited 1", "notice": null, "cached": false,
            "reranked": true, "route": "material", "routeChosen": false
        })
    );
    let keyword = search::suggest::Keyword { keyword: "tea".into(), weight: 0.25 };
    assert_eq!(serde_json::to_value(super::Keyword::from(&keyword)).unwrap(), json!({"keyword": "tea", "weight": 0.25}));
    let (kinds, scope, route): (Vec<super::DocKind>, super::SearchScope, super::AskRoute) =
        serde_json::from_value(json!([["working", "version", "comment"], "project", "general"])).unwrap();
    assert_eq!(kinds.into_iter().map(search::DocKind::from).collect::<Vec<_>>(), [search::DocKind::Working, search::DocKind::Version, search::DocKind::Comment]);
    assert_eq!((search::SearchScope::from(scope), ask::AskRoute::from(route)), (search::SearchScope::Project, ask::AskRoute::General));
}

/// A model profile (its server's window, the structured-output form it takes, the
/// last test's error) and a preset; the parameters that convert back; and a key
/// parameter, which is read but never written.
#[test]
fn the_wire_json_of_model_profiles_is_their_twins() {
    use crate::llm::{profile, window};
    let server_window = window::ServerWindow { tokens: 4096, source: window::WindowSource::LlamaCppProps, server: window::ServerKind::LlamaCpp, detected_at: at() };
    let llm_profile = profile::LlmProfile {
        id: "llm_1".into(),
        name: "Local".into(),
        provider: profile::Provider::OpenaiCompatible,
        base_url: "http://127.0.0.1:8080/v1".into(),
        model: "qwen".into(),
        embedding_model: None,
        timeout_s: 60,
        context_window: 4096,
        context_window_origin: window::WindowOrigin::Server,
        server_window: Some(server_window),
        max_output_tokens: Some(512),
        temperature: None,
        seed: Some(7),
        input_price_per_mtok: None,
        output_price_per_mtok: Some(0.5),
        key_required: false,
        key_fingerprint: Some("…WXYZ".into()),
        supports_json_schema: true,
        schema_form: profile::SchemaForm::JsonObject,
        structured_form: Some(profile::StructuredForm {
            form: profile::SchemaForm::JsonObject,
            source: profile::FormSource::Test,
            refused: vec![profile::FormRefusal { form: profile::SchemaForm::ResponseFormat, status: 400, message: "no".into() }],
            at: at(),
        }),
        tool_loading: profile::ToolLoading::OnDemand,
        proxy_url: None,
        ca_cert_path: None,
        is_default: true,
        health: profile::Health::Failed,
        last_tested_at: Some(at()),
        last_latency_ms: None,
        last_error: Some(profile::ProfileError { code: crate::error::ErrorCode::Timeout, message: "Slow".into() }),
        created_at: at(),
        updated_at: at(),
    };
    assert_eq!(
        serde_json::to_value(super::LlmProfile::from(&llm_profile)).unwrap(),
        json!({
            "id": "llm_1", "name": "Local", "provider": "openai-compatible", "baseUrl": "http://127.0.0.1:8080/v1", "model": "qwen", "timeoutS": 60,
            "contextWindow": 4096, "contextWindowOrigin": "server",
            "serverWindow": {"tokens": 4096, "source": "llamaCppProps", "server": "llamaCpp", "detectedAt": "2026-01-02T03:04:05Z"},
            "maxOutputTokens": 512, "seed": 7, "outputPricePerMtok": 0.5, "keyRequired": false, "keyFingerprint": "…WXYZ",
            "supportsJsonSchema": true, "schemaForm": "jsonObject",
            "structuredForm": {
                "form": "jsonObject", "source": "test", "refused": [{"form": "responseFormat", "status": 400, "message": "no"}],
                "at": "2026-01-02T03:04:05Z"
            },
            "toolLoading": "onDemand", "isDefault": true, "health": "failed", "lastTestedAt": "2026-01-02T03:04:05Z",
            "lastError": {"code": "TIMEOUT", "message": "Slow"}, "createdAt": "2026-01-02T03:04:05Z", "updatedAt": "2026-01-02T03:04:05Z"
        })
    );
    let preset = profile::presets().into_iter().find(|p| p.id == "ollama").unwrap();
    assert_eq!(
        serde_json::to_value(super::LlmPreset::from(&preset)).unwrap(),
        json!({
            "id": "ollama", "label": "Ollama", "baseUrl": "http://127.0.0.1:11434/v1", "exampleModel": "qwen2.5:7b", "keyRequired": false,
            "local": true, "supportsJsonSchema": true, "schemaForm": "responseFormat", "toolLoading": "onDemand"
        })
    );
    assert_eq!(serde_json::to_value(super::WindowSource::from(window::WindowSource::OllamaModelMax)).unwrap(), json!("ollamaModelMax"));
    assert_eq!(serde_json::to_value(super::TokenizerEndpoint::from(window::TokenizerEndpoint::LlamaCppPython)).unwrap(), json!("llamaCppPython"));
    assert_eq!(serde_json::to_value(super::WindowOrigin::from(window::WindowOrigin::Assumed)).unwrap(), json!("assumed"));
    let (provider, form, loading): (super::Provider, super::SchemaForm, super::ToolLoading) = serde_json::from_value(json!(["disabled", "instructions", "all"])).unwrap();
    assert_eq!(
        (profile::Provider::from(provider), profile::SchemaForm::from(form), profile::ToolLoading::from(loading)),
        (profile::Provider::Disabled, profile::SchemaForm::Instructions, profile::ToolLoading::All)
    );
    let key: super::ApiKey = serde_json::from_value(json!("sk-secret-ABCD")).unwrap();
    assert_eq!(format!("{key:?}"), "ApiKey(…ABCD)");
    assert_eq!(crate::llm::ApiKey::from(key).expose(), "sk-secret-ABCD");
    let call = crate::llm::ToolCall { id: "call_1".into(), name: "read_project".into(), arguments: "{}".into() };
    assert_eq!(serde_json::to_value(super::ToolCall::from(&call)).unwrap(), json!({"id": "call_1", "name": "read_project", "arguments": "{}"}));
}

/// The text pipeline's records: a diff, a compiled draft with a finding, a
/// measurement, the platform profiles, and a field as a parameter.
#[test]
fn the_wire_json_of_text_records_is_their_twins() {
    use crate::diff::{DiffLine, Hunk, LineKind, Segment, TextDiffResult};
    use crate::profiles::{self, LimitField, Severity, Unit};
    let line = DiffLine { kind: LineKind::Delete, old_line: Some(1), new_line: None, segments: vec![Segment { text: "Tea".into(), emphasized: true }] };
    let diff = TextDiffResult { hunks: vec![Hunk { old_start: 1, old_len: 1, new_start: 1, new_len: 0, lines: vec![line] }], n_insertions: 0, n_deletions: 1, identical: false };
    assert_eq!(
        serde_json::to_value(super::TextDiffResult::from(&diff)).unwrap(),
        json!({
            "hunks": [{
                "oldStart": 1, "oldLen": 1, "newStart": 1, "newLen": 0,
                "lines": [{"kind": "delete", "oldLine": 1, "newLine": null, "segments": [{"text": "Tea", "emphasized": true}]}]
            }],
            "nInsertions": 0, "nDeletions": 1, "identical": false
        })
    );
    let draft = crate::pipeline::Draft {
        platform: Platform::Zhihu,
        profile_id: "zhihu@draft-v1".into(),
        title: "Tea".into(),
        content: DraftContent::Markdown { markdown: "Tea".into() },
        n_images: 0,
        n_links: 1,
    };
    assert_eq!(
        serde_json::to_value(super::Draft::from(&draft)).unwrap(),
        json!({"platform": "zhihu", "profileId": "zhihu@draft-v1", "title": "Tea", "content": {"type": "markdown", "markdown": "Tea"}, "nImages": 0, "nLinks": 1})
    );
    let mut finding = crate::pipeline::Finding::new("limit.title", Severity::Warn, Some(Platform::X), "Too long");
    finding.span = Some(Anchor { from: 0, to: 3 });
    finding.message_id = Some("limit.title".into());
    finding.params = BTreeMap::from([("max".to_owned(), "30".to_owned())]);
    assert_eq!(
        serde_json::to_value(super::Finding::from(&finding)).unwrap(),
        json!({
            "check": "limit.title", "severity": "warn", "platform": "x", "span": {"from": 0, "to": 3}, "location": null, "matched": null,
            "message": "Too long", "suggestion": null, "route": null, "messageId": "limit.title", "params": {"max": "30"}
        })
    );
    let limit = profiles::Limit { field: LimitField::Title, min: None, max: 280, unit: Unit::XWeighted, route: None, severity: Severity::Block, source: "x.com".into() };
    let measurement = crate::pipeline::Measurement {
        platform: Platform::X,
        field: LimitField::Title,
        unit: Unit::XWeighted,
        weighted_length: 5,
        limit: Some(280),
        valid: true,
        checks: vec![crate::pipeline::LimitCheck { limit: limit.clone(), length: 5, fits: true }],
    };
    assert_eq!(
        serde_json::to_value(super::Measurement::from(&measurement)).unwrap(),
        json!({
            "platform": "x", "field": "title", "unit": "x_weighted", "weightedLength": 5, "limit": 280, "valid": true,
            "checks": [{
                "limit": {"field": "title", "min": null, "max": 280, "unit": "x_weighted", "route": null, "severity": "block", "source": "x.com"},
                "length": 5, "fits": true
            }]
        })
    );
    let profile = profiles::DraftProfile {
        id: "x@draft-v1".into(),
        platform: Platform::X,
        format: "thread".into(),
        description: "X".into(),
        limits: vec![limit],
        settings: BTreeMap::from([("numbering".to_owned(), toml::Value::String("1/".into())), ("width".to_owned(), toml::Value::Integer(60))]),
        theme: BTreeMap::new(),
    };
    let wire = serde_json::to_value(super::DraftProfile::from(&profile)).unwrap();
    assert_eq!((&wire["settings"], &wire["theme"], &wire["limits"][0]["unit"]), (&json!({"numbering": "1/", "width": 60}), &json!({}), &json!("x_weighted")));
    let fit = profiles::FitRules { title_chars: Some([10, 30]), links: profiles::LinkPolicy::Footnotes, ..Default::default() };
    assert_eq!(
        serde_json::to_value(super::FitRules::from(&fit)).unwrap(),
        json!({"titleChars": [10, 30], "hookChars": null, "tags": null, "ctaMarkers": [], "links": "footnotes", "maxParagraphChars": null, "headingEveryChars": null})
    );
    let risk = profiles::RiskList {
        id: "ad-law-zh@v2".into(),
        description: "Ad law".into(),
        source: "law".into(),
        suggestion: "Say it plainly".into(),
        strict_industries: vec!["health".into()],
        terms: vec!["第一".into()],
        allow: vec!["第一次".into()],
        allow_context: vec![profiles::ContextAllow {
            term: "第一".into(), followed_by: vec!["个".into()], opening_followed_by: Vec::new(), not_preceded_by: vec!["行业".into()]
        }],
    };
    assert_eq!(
        serde_json::to_value(super::RiskList::from(&risk)).unwrap(),
        json!({
            "id": "ad-law-zh@v2", "description": "Ad law", "source": "law", "suggestion": "Say it plainly", "strictIndustries": ["health"],
            "terms": ["第一"], "allow": ["第一次"],
            "allowContext": [{"term": "第一", "followedBy": ["个"], "openingFollowedBy": [], "notPrecededBy": ["行业"]}]
        })
    );
    let fields: Vec<super::LimitField> = serde_json::from_value(json!(["title", "posts"])).unwrap();
    assert_eq!(fields.into_iter().map(LimitField::from).collect::<Vec<_>>(), [LimitField::Title, LimitField::Posts]);
}
