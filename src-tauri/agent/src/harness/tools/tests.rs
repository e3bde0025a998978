//! The registry's checks and offers, and the tool contract.

#![allow(clippy::unwrap_used, clippy::expect_used)]
use super::*;

#[test]
fn builtins_compile_and_validate_with_pointers() {
    let mut registry = Registry::default();
    for (definition, handler) in builtins() {
        registry.register(definition, handler).unwrap();
    }
    assert_eq!(registry.names().len(), 36, "10 read, 2 stored results, 3 search, 7 propose, 5 check, 5 workflow, 5 write");
    let ask = registry.get("ask_user_question").unwrap();
    assert!(ask.validate(&json!({"question": "Which title?"})).is_ok());
    let problems = ask.validate(&json!({"question": 3})).unwrap_err();
    assert_eq!(problems[0].0, "/question");
    let problems = ask.validate(&json!({})).unwrap_err();
    assert_eq!(problems[0].0, "");
}

#[test]
fn tools_on_demand_send_the_core_and_list_the_rest_in_far_fewer_tokens() {
    let mut registry = Registry::default();
    for (definition, handler) in builtins() {
        registry.register(definition, handler).unwrap();
    }
    let tokens = |tools: &[ToolSpec]| {
        let mut request = crate::llm::ChatRequest::new(Vec::new());
        request.tools = tools.into();
        crate::llm::estimate_request_tokens(&request)
    };
    let all = registry.offered(ToolSet::All, &[]);
    assert_eq!(all.len(), 35, "every tool but load_tools");
    let core = registry.offered(ToolSet::Core, &[]);
    assert_eq!(core.len(), CORE_TOOLS.len() + 1);
    assert!(CORE_TOOLS.iter().all(|name| registry.get(name).is_some()), "every core tool exists");
    let listing = &core.iter().find(|t| t.name == LOAD_TOOLS).unwrap().description;
    assert_eq!(listing.lines().filter(|l| l.starts_with("- ")).count(), 35 - CORE_TOOLS.len(), "{listing}");
    let (all_tokens, core_tokens) = (tokens(&all), tokens(&core));
    println!("tool definitions: all {all_tokens} tokens, on demand {core_tokens} tokens\n{listing}");
    assert!(core_tokens * 2 < all_tokens, "on demand {core_tokens} tokens, all {all_tokens}");

    // A loaded tool is sent in full and leaves the listing; an unknown name is ignored.
    let call = crate::llm::ToolCall { id: "l1".into(), name: LOAD_TOOLS.into(), arguments: r#"{"names":["propose_tags"," read_comments ","nope"]}"#.into() };
    let messages = vec![Message { role: crate::llm::Role::Assistant, content: "".into(), tool_calls: vec![call], tool_call_id: None }];
    let loaded = registry.offered(ToolSet::Core, &messages);
    assert_eq!(loaded.len(), core.len() + 2);
    let listing = &loaded.iter().find(|t| t.name == LOAD_TOOLS).unwrap().description;
    assert!(!listing.contains("- propose_tags:") && !listing.contains("- read_comments:") && listing.contains("- propose_outline:"));
}

/// The compact set is what a 2k or 4k window carries: its size is stated
/// ([`COMPACT_TOOLS_MAX_TOKENS`]) and this fails when it grows past it.
#[test]
fn the_compact_set_reads_searches_and_proposes_within_its_stated_size() {
    let mut registry = Registry::default();
    for (definition, handler) in builtins() {
        registry.register(definition, handler).unwrap();
    }
    let compact = registry.offered(ToolSet::Compact, &[]);
    let names: Vec<&str> = compact.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["propose_source_patch", "read_section", "search_project_history", LOAD_TOOLS]);
    let listing = &compact.last().unwrap().description;
    for d in registry.definitions().filter(|d| !COMPACT_TOOLS.contains(&d.name.as_str()) && d.name != LOAD_TOOLS) {
        assert!(listing.contains(&d.name), "{} can be loaded: {listing}", d.name);
    }
    let tokens = tool_tokens(&compact);
    println!("compact tool set: {tokens} estimated tokens (cap {COMPACT_TOOLS_MAX_TOKENS})");
    assert!(tokens <= COMPACT_TOOLS_MAX_TOKENS, "the compact set takes {tokens} tokens, over its cap of {COMPACT_TOOLS_MAX_TOKENS}");

    // The set follows the window: every tool in 32k, the core set in 8k, the
    // compact one in 4k and 2k; a profile loading on demand never gets all.
    let set = |loading, window| registry.offered_within(loading, window, &[]).0;
    assert_eq!([32_768, 8_192, 4_096, 2_048].map(|w| set(ToolLoading::All, w)), [ToolSet::All, ToolSet::Core, ToolSet::Compact, ToolSet::Compact]);
    assert_eq!(set(ToolLoading::OnDemand, 128_000), ToolSet::Core);
    for window in [2_048u64, 4_096, 8_192, 32_768] {
        let (set, tools) = registry.offered_within(ToolLoading::All, window, &[]);
        assert!(set == ToolSet::Compact || tool_tokens(&tools) * 100 <= window * TOOL_SHARE_PERCENT, "{window}: {set:?}");
    }

    // A tool loaded in a small window is sent in full from then on.
    let call = crate::llm::ToolCall { id: "l1".into(), name: LOAD_TOOLS.into(), arguments: r#"{"names":["propose_title_candidates"]}"#.into() };
    let messages = vec![Message { role: crate::llm::Role::Assistant, content: "".into(), tool_calls: vec![call], tool_call_id: None }];
    let loaded = registry.offered(ToolSet::Compact, &messages);
    assert!(loaded.iter().any(|t| t.name == "propose_title_candidates"));
}

#[test]
fn a_tool_that_may_change_anything_must_ask() {
    let handler: ToolHandler = Arc::new(|_, _| Ok(json!({})));
    let read = builtins().into_iter().map(|(d, _)| d).find(|d| d.name == "read_versions").unwrap();
    let mut registry = Registry::default();
    let refused = |d: ToolDefinition| Registry::default().register(d, Arc::clone(&handler)).unwrap_err();

    let write_allowed = ToolDefinition { name: "w".into(), capability: Capability::Write, read_only: false, ..read.clone() };
    assert_eq!(refused(write_allowed.clone()), RefusedTool::WriteMustAsk { tool: "w".into() });
    // Not declared a write, but not read-only: the same rule.
    let sneaky = ToolDefinition { name: "s".into(), read_only: false, ..read.clone() };
    assert_eq!(refused(sneaky.clone()), RefusedTool::WriteMustAsk { tool: "s".into() });
    assert!(sneaky.is_write(), "a non-read-only tool is treated as a write");
    let destructive = ToolDefinition { name: "d".into(), destructive: true, read_only: false, ..read.clone() };
    assert_eq!(refused(destructive).field(), "permission");
    let contradiction = ToolDefinition { name: "c".into(), capability: Capability::Write, read_only: true, permission: PermissionPolicy::Ask, ..read.clone() };
    assert_eq!(refused(contradiction).field(), "readOnly");

    let reserved = ToolDefinition { name: "accept_proposal".into(), ..read.clone() };
    assert_eq!(refused(reserved).field(), "name", "the person's actions are no tool's name");

    registry.register(ToolDefinition { permission: PermissionPolicy::Ask, ..write_allowed }, Arc::clone(&handler)).unwrap();
    registry.register(ToolDefinition { permission: PermissionPolicy::Deny, ..sneaky }, Arc::clone(&handler)).unwrap();
    assert_eq!(registry.names(), ["s", "w"]);
}

#[test]
fn every_builtin_is_fully_described_and_declared_as_its_group_requires() {
    for (d, _) in builtins() {
        let name = d.name.as_str();
        assert!(!d.description.is_empty() && !d.prompt.is_empty() && !d.result_summary.is_empty(), "{name}: description, prompt, result summary");
        assert!((1_000..=200_000).contains(&d.max_result_chars), "{name}: max_result_chars {}", d.max_result_chars);
        assert_eq!(d.input_schema["type"], "object", "{name}");
        match d.capability {
            Capability::Propose | Capability::Validate | Capability::Read => {
                assert!(d.read_only && !d.destructive && !d.is_write(), "{name} is read-only");
                assert_eq!((d.permission, d.concurrency, d.interrupt), (PermissionPolicy::Allow, Concurrency::ParallelSafe, InterruptBehavior::Cancel), "{name}");
            }
            Capability::Write => {
                assert!(d.is_write() && !d.read_only, "{name} is a write");
                assert_eq!((d.permission, d.concurrency, d.interrupt), (PermissionPolicy::Ask, Concurrency::Exclusive, InterruptBehavior::Block), "{name}");
            }
            Capability::Workflow => {}
        }
    }
    let apply = builtins().into_iter().map(|(d, _)| d).find(|d| d.name == "apply_proposal").unwrap();
    assert_eq!(apply.base_version, BaseVersionPolicy::ProposalTarget);
}

/// The schemas and prompts go with every model call: together they stay small
/// enough that a default 8k window (half of it kept for the answer) has room left
/// for the project and the conversation.
#[test]
fn the_tool_specs_sent_with_every_call_stay_small() {
    let cost = |d: &ToolSpec| crate::llm::estimate_tokens(&d.description) + crate::llm::estimate_tokens(&d.parameters.value().to_string());
    let mut registry = Registry::default();
    for (definition, handler) in builtins() {
        registry.register(definition, handler).unwrap();
    }
    let definitions = registry.offered(ToolSet::All, &[]);
    for d in &definitions {
        assert!(cost(d) <= 200, "{}: {} estimated tokens", d.name, cost(d));
    }
    let total: u64 = definitions.iter().map(cost).sum();
    // 35 tools; raised from 2,800 when search, memory and optimize landed, and from
    // 2,900 when read_performance (with its platform enum) did (prompts trimmed first).
    assert!(total <= 3_000, "{total} estimated tokens");
}

#[test]
fn normalized_inputs_hash_equally() {
    let a = normalize(&json!({"b": " x ", "a": [1, {"d": 1, "c": 2}]}));
    let b = normalize(&json!({"a": [1, {"c": 2, "d": 1}], "b": "x"}));
    assert_eq!(input_hash(&a), input_hash(&b));
}
