//! Search: the index follows every write, real sled and real tantivy; tiers; spans in
//! UTF-16; comments; rebuilds; semantic search against the scripted model server and
//! its failure; the functions the tools will call.

use std::time::{Duration, Instant};

use inkstone_api::retrieval::{self, DocKind};
use inkstone_api::ErrorCode;
use inkstone_test_support::embedder::concept_embedder;
use inkstone_test_support::model_server::{ModelServer, Reply};
use inkstone_test_support::TestEngine;
use serde_json::{json, Value};

fn wait(t: &TestEngine) {
    assert!(t.engine.search_index().wait_idle(Duration::from_secs(20)), "the index caught up");
}

fn create(t: &TestEngine, title: &str, source: &str) -> String {
    t.ok("project.create", json!({"title": title, "source": source}))["id"].as_str().unwrap().to_owned()
}

fn search(t: &TestEngine, params: Value) -> Value {
    t.ok("search.query", params)
}

fn hit_projects(result: &Value) -> Vec<String> {
    result["hits"].as_array().unwrap().iter().map(|h| h["projectId"].as_str().unwrap().to_owned()).collect()
}

/// The UTF-16 slice of `text` a span names.
fn slice(text: &str, span: &Value) -> String {
    let units: Vec<u16> = text.encode_utf16().collect();
    String::from_utf16(&units[span["from"].as_u64().unwrap() as usize..span["to"].as_u64().unwrap() as usize]).unwrap()
}

fn corpus(t: &TestEngine) -> (String, String, String) {
    let coffee = create(t, "手冲咖啡入门", "---\ntags: [咖啡, 手冲]\ncategory: 生活\n---\n\n😀 第一次做手冲咖啡，水温九十度左右最好。\n\n研磨度要均匀，萃取时间两分半。");
    let running = create(t, "周末跑步计划", "# 计划\n\n每周跑三次，每次五公里。跑完喝一杯咖啡犒劳自己。\n\n鲸鱼形状的水壶很可爱。");
    let english = create(t, "Remote work notes", "Working from home needs a routine. Coffee helps, but sleep matters more.");
    wait(t);
    (coffee, running, english)
}

#[test]
fn one_two_and_three_character_queries_and_pasted_titles_hit() {
    let t = TestEngine::new();
    let (coffee, running, english) = corpus(&t);
    // One character, found inside a word jieba keeps whole.
    assert_eq!(hit_projects(&search(&t, json!({"q": "鲸"}))), vec![running.clone()]);
    // Two characters: the title match first, the body mention after it.
    assert_eq!(hit_projects(&search(&t, json!({"q": "咖啡"})))[..2], [coffee.clone(), running.clone()]);
    assert_eq!(hit_projects(&search(&t, json!({"q": "水温九"}))), vec![coffee.clone()]);
    // A pasted title, exactly and with other spacing and width.
    let pasted = search(&t, json!({"q": "周末跑步计划"}));
    assert_eq!(pasted["hits"][0]["projectId"], json!(running));
    assert_eq!(pasted["hits"][0]["tier"], "title");
    assert_eq!(hit_projects(&search(&t, json!({"q": "REMOTE  work notes"})))[0], english);
    // English words, any case.
    assert_eq!(hit_projects(&search(&t, json!({"q": "coffee"}))), vec![english.clone()]);
    // Nothing to search for.
    assert_eq!(search(&t, json!({"q": "，。"}))["hits"], json!([]));
}

#[test]
fn spans_are_utf16_offsets_into_the_source_and_snippets_mark_the_match() {
    let t = TestEngine::new();
    let (coffee, _, _) = corpus(&t);
    let source = t.ok("project.get", json!({"projectId": coffee}))["source"].as_str().unwrap().to_owned();
    let result = search(&t, json!({"q": "水温", "projectId": coffee}));
    let hit = &result["hits"][0];
    assert_eq!(hit["kind"], "working");
    assert_eq!(slice(&source, &hit["span"]), "水温", "the emoji before the match counts two units");
    let snippet = hit["snippet"]["text"].as_str().unwrap();
    assert_eq!(slice(snippet, &hit["snippet"]["highlights"][0]), "水温");
}

#[test]
fn tags_category_and_summary_make_their_tiers() {
    let t = TestEngine::new();
    let (coffee, _, _) = corpus(&t);
    let tagged = search(&t, json!({"q": "生活"}));
    assert_eq!(tagged["hits"][0]["projectId"], json!(coffee));
    assert_eq!(tagged["hits"][0]["tier"], "tags");
    let summary = search(&t, json!({"q": "九十度"}));
    assert_eq!(summary["hits"][0]["tier"], "summary");
    let body = search(&t, json!({"q": "萃取"}));
    assert_eq!(body["hits"][0]["tier"], "body");
}

#[test]
fn a_saved_version_is_searchable_within_a_second_and_history_is_kept() {
    let t = TestEngine::new();
    let id = create(&t, "草稿", "旧的开头：灯塔守护者的故事。");
    wait(&t);
    t.ok("version.create", json!({"projectId": id}));
    let project = t.ok("project.get", json!({"projectId": id}));
    t.ok("project.update", json!({"projectId": id, "baseRevision": project["revision"], "source": "新的开头：海边的图书馆。"}));
    let saved_at = Instant::now();
    t.ok("version.create", json!({"projectId": id}));
    // Poll the API as the UI would, without waiting on the index.
    loop {
        let hits = search(&t, json!({"q": "图书馆", "projectId": id, "kinds": ["version"]}));
        if hits["hits"].as_array().unwrap().iter().any(|h| h["version"] == 2) {
            break;
        }
        assert!(saved_at.elapsed() < Duration::from_secs(1), "a saved version is searchable within a second");
        std::thread::sleep(Duration::from_millis(10));
    }
    // The old text is in version 1 only; the working copy no longer has it.
    let old = search(&t, json!({"q": "灯塔", "projectId": id}));
    let kinds: Vec<(String, Value)> = old["hits"].as_array().unwrap().iter().map(|h| (h["kind"].as_str().unwrap().to_owned(), h["version"].clone())).collect();
    assert_eq!(kinds, vec![("version".to_owned(), json!(1))]);
    // Equal contents (version 2 and the working copy) are one hit, the working copy.
    let now = search(&t, json!({"q": "图书馆", "projectId": id}));
    assert_eq!(now["hits"].as_array().unwrap().len(), 1);
    assert_eq!(now["hits"][0]["kind"], "working");
    // The workspace gives one hit per project.
    assert_eq!(search(&t, json!({"q": "开头"}))["hits"].as_array().unwrap().len(), 1);
}

#[test]
fn an_accepted_proposal_is_indexed_through_the_store() {
    use inkstone_api::proposals::{self, NewProposal, Origin, Payload, ProposalKind, Target};
    let t = TestEngine::new();
    let id = create(&t, "提案", "原来的句子。");
    let project = inkstone_api::project::load(t.engine.store(), &id).unwrap();
    let proposal = proposals::create(
        t.engine.kernel(),
        NewProposal {
            project_id: id.clone(),
            kind: ProposalKind::SourceRewrite,
            target: Target::Source,
            summary: "改写".into(),
            payload: Payload::Text { base_text: project.source.clone(), proposed_text: "改写后的句子提到了萤火虫。".into() },
            origin: Origin { session_id: Some("ses_x".into()), model: "m".into(), profile_id: "llm_x".into(), ..Origin::default() },
        },
    )
    .unwrap();
    t.ok("proposal.accept", json!({"proposalId": proposal.id, "expectedBase": project.revision}));
    wait(&t);
    let hits = search(&t, json!({"q": "萤火虫", "projectId": id, "kinds": ["version"]}));
    assert_eq!(hits["hits"][0]["version"], 1);
}

#[test]
fn comments_are_found_and_point_at_their_anchor() {
    let t = TestEngine::new();
    let (coffee, _, _) = corpus(&t);
    let comment = t.ok("comment.add", json!({"projectId": coffee, "body": "这里应该写清楚磨豆机的型号", "anchor": {"from": 3, "to": 5}}));
    wait(&t);
    let result = search(&t, json!({"q": "磨豆机"}));
    let hit = &result["hits"][0];
    assert_eq!(hit["kind"], "comment");
    assert_eq!(hit["commentId"], comment["id"]);
    assert_eq!(hit["span"], json!({"from": 3, "to": 5}));
    assert_eq!(hit["projectTitle"], "手冲咖啡入门");
    t.ok("comment.delete", json!({"commentId": comment["id"], "projectId": coffee}));
    wait(&t);
    assert_eq!(search(&t, json!({"q": "磨豆机"}))["hits"], json!([]));
}

#[test]
fn the_index_is_rebuilt_when_deleted_damaged_or_not_closed_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let open = || inkstone_api::Engine::open(inkstone_api::EngineConfig::for_tests(dir.path())).unwrap();
    let id = {
        let engine = open();
        let id = engine.call("project.create", json!({"title": "灯塔", "source": "守夜人的日记。"})).unwrap()["id"].as_str().unwrap().to_owned();
        assert!(engine.search_index().wait_idle(Duration::from_secs(20)));
        id
    };
    let find = |engine: &inkstone_api::Engine| {
        assert!(engine.search_index().wait_idle(Duration::from_secs(20)));
        hit_projects(&engine.call("search.query", json!({"q": "守夜人"})).unwrap())
    };
    let index_dir = retrieval::index_dir(dir.path());
    std::fs::remove_dir_all(&index_dir).unwrap();
    assert_eq!(find(&open()), vec![id.clone()], "deleted: rebuilt from the store");
    // Damaged: every file of the index overwritten.
    for entry in std::fs::read_dir(&index_dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() && !path.ends_with("inkstone-index.json") {
            std::fs::write(&path, b"garbage").unwrap();
        }
    }
    assert_eq!(find(&open()), vec![id.clone()], "damaged: rebuilt");
    // Not closed cleanly (a crash): rebuilt, so changes it missed come back.
    std::fs::write(index_dir.join("inkstone-index.json"), br#"{"schema": 1, "clean": false}"#).unwrap();
    let engine = open();
    assert_eq!(find(&engine), vec![id]);
    assert!(engine.search_index().status().documents >= 1);
}

#[test]
fn a_restore_from_backup_replaces_the_index() {
    let t = TestEngine::new();
    let id = create(&t, "备份前", "备份里的内容：红树林。");
    let backup = t.ok("backup.create", json!({}));
    let later = create(&t, "备份后", "后来的内容：沙丘。");
    wait(&t);
    assert_eq!(hit_projects(&search(&t, json!({"q": "沙丘"}))), vec![later]);
    t.ok("backup.restore", json!({"name": backup["name"]}));
    wait(&t);
    assert_eq!(search(&t, json!({"q": "沙丘"}))["hits"], json!([]));
    assert_eq!(hit_projects(&search(&t, json!({"q": "红树林"}))), vec![id]);
}

#[test]
fn search_parameters_are_checked() {
    let t = TestEngine::new();
    let err = |params: Value| t.engine.call("search.query", params).unwrap_err();
    let field = |e: inkstone_api::ApiError| e.details.unwrap_or_default()["field"].as_str().unwrap_or_default().to_owned();
    let e = err(json!({"q": "x", "scope": "project"}));
    assert_eq!(e.code, ErrorCode::Validation);
    assert_eq!(field(e), "projectId");
    assert_eq!(err(json!({"q": "x", "projectId": "prj_missing"})).code, ErrorCode::NotFound);
    assert_eq!(field(err(json!({"q": "x", "limit": 0}))), "limit");
    assert_eq!(field(err(json!({"q": "  "}))), "q");
    assert_eq!(field(err(json!({"q": "x", "kinds": ["draft"]}))), "kinds[0]");
}

#[test]
fn without_an_embedding_model_search_is_lexical_and_says_so() {
    let t = TestEngine::new();
    corpus(&t);
    let result = search(&t, json!({"q": "咖啡"}));
    assert_eq!(result["semantic"], false);
    assert_eq!(result["notice"]["code"], "semanticOff");
}

fn lexicon() -> Vec<Vec<String>> {
    [vec!["单车", "自行车", "骑行", "bicycle", "cycling"], vec!["咖啡", "coffee", "拿铁"], vec!["跑步", "慢跑", "running"]]
        .into_iter()
        .map(|forms| forms.into_iter().map(str::to_owned).collect())
        .collect()
}

#[test]
fn with_an_embedding_model_meaning_finds_what_words_miss() {
    let server = ModelServer::start(vec![]);
    server.set_fallback(Reply::EmbeddingsBy(concept_embedder(lexicon())));
    let t = TestEngine::new();
    t.ok("llmProfile.create", json!({"name": "local", "baseUrl": server.base_url(), "model": "chat", "embeddingModel": "embed"}));
    let bike = create(&t, "周末骑行路线", "从城东出发，沿着河骑单车到湖边，全程二十公里。");
    create(&t, "咖啡馆地图", "城里值得去的咖啡馆，拿铁都不错。");
    wait(&t);
    let status = t.engine.search_index().status();
    assert_eq!((status.vectors, status.vectors_missing, status.embedding_model.as_deref()), (2, 0, Some("embed")));
    // No word of the query is in the text: only the meaning matches.
    let result = search(&t, json!({"q": "bicycle"}));
    assert_eq!(result["semantic"], true);
    assert_eq!(result["notice"], Value::Null);
    assert_eq!(hit_projects(&result), vec![bike]);
    // Vectors are cached by content: a rebuild embeds nothing again.
    let before = server.requests().iter().filter(|r| r.path.ends_with("/embeddings")).count();
    t.ok("search.reindex", json!({}));
    wait(&t);
    let after = server.requests().iter().filter(|r| r.path.ends_with("/embeddings")).count();
    assert_eq!(before, after, "documents come from the cache, the query vector from memory");
    assert_eq!(t.engine.search_index().status().vectors, 2);
}

#[test]
fn a_failing_embedding_server_degrades_to_lexical_with_a_notice() {
    let server = ModelServer::start(vec![]);
    server.set_fallback(Reply::error(503, json!({"error": {"message": "overloaded"}})));
    let t = TestEngine::new();
    t.ok("llmProfile.create", json!({"name": "local", "baseUrl": server.base_url(), "model": "chat", "embeddingModel": "embed"}));
    let (coffee, _, _) = corpus(&t);
    let status = t.engine.search_index().status();
    assert_eq!((status.vectors, status.vectors_missing), (0, 3));
    let result = search(&t, json!({"q": "手冲"}));
    assert_eq!(result["semantic"], false);
    assert_eq!(result["notice"]["code"], "semanticFailed");
    assert_eq!(hit_projects(&result), vec![coffee]);
    // The next searches do not wait for the failing server again (for a while).
    let calls = || server.requests().iter().filter(|r| r.path.ends_with("/embeddings")).count();
    let before = calls();
    let again = search(&t, json!({"q": "水温"}));
    assert_eq!(again["notice"]["code"], "semanticFailed");
    assert_eq!(calls(), before);
}

#[test]
fn the_functions_for_the_tools_return_compact_references() {
    let t = TestEngine::new();
    let id = t.ok("project.create", json!({"title": "小红书：春季穿搭", "source": "春天的风衣搭配白色球鞋。", "platforms": ["xiaohongshu"]}))["id"].as_str().unwrap().to_owned();
    let other = t.ok("project.create", json!({"title": "风衣保养", "source": "风衣要干洗。", "platforms": ["xiaohongshu"]}))["id"].as_str().unwrap().to_owned();
    t.ok("project.create", json!({"title": "公众号：风衣的历史", "source": "风衣起源于战壕。", "platforms": ["wechat"]}));
    t.ok("version.create", json!({"projectId": id}));
    wait(&t);
    let index = t.engine.search_index();
    let history = retrieval::search_project_history(index, &id, "风衣", 5).unwrap().hits;
    assert_eq!(history.len(), 1, "the working copy and version 1 are equal: one hit");
    assert_eq!(history[0].kind, DocKind::Working);
    assert!(history[0].reference.starts_with(&format!("{id}:")), "{:?}", history[0]);
    assert!(history[0].snippet.chars().count() <= 100);
    let workspace = retrieval::search_workspace(index, "风衣", None, Vec::new(), 10).unwrap().hits;
    assert_eq!(workspace.len(), 3);
    let others = retrieval::search_workspace(index, "风衣", Some(&id), Vec::new(), 10).unwrap().hits;
    assert_eq!(others.len(), 2, "the excluded project is left out");
    assert!(others.iter().all(|h| h.project_id != id));
    let examples = retrieval::find_relevant_examples(index, inkstone_api::model::Platform::Xiaohongshu, "风衣", Some(&id), 5).unwrap().hits;
    let projects: Vec<&str> = examples.iter().map(|h| h.project_id.as_str()).collect();
    assert_eq!(projects, vec![other.as_str()], "the platform's other projects only");
}

/// The evaluation's floor: on the fixture corpus, fused search is at least
/// as good as the better of lexical and semantic alone, and short Chinese queries and
/// pasted titles never miss lexically. `cargo xtask eval-search` prints the table.
#[test]
fn fused_search_is_at_least_as_good_as_either_retriever_on_the_fixture_corpus() {
    let started = Instant::now();
    let scores = inkstone_test_support::search_eval::evaluate();
    eprintln!("{}(evaluated in {:.1} s)", inkstone_test_support::search_eval::table(&scores), started.elapsed().as_secs_f64());
    let all = scores.iter().find(|s| s.class == "all").unwrap();
    assert!(all.n_queries >= 100, "{all:?}");
    let [lexical, semantic, fused] = all.ndcg10;
    assert!(fused >= lexical.max(semantic), "nDCG@10: fused {fused:.3} < best single ({lexical:.3} lexical, {semantic:.3} semantic)");
    let [lexical, semantic, fused] = all.recall20;
    assert!(fused >= lexical.max(semantic), "recall@20: fused {fused:.3} < best single ({lexical:.3} lexical, {semantic:.3} semantic)");
    for class in ["zh1", "zh2", "zh3", "title"] {
        let row = scores.iter().find(|s| s.class == class).unwrap();
        assert_eq!(row.recall20[0], 1.0, "{class}: every literal match is found lexically: {row:?}");
        assert!(row.ndcg10[2] >= 0.95, "{class}: fused keeps literal matches on top: {row:?}");
    }
}

/// Ask can be stopped: `search.askCancel` ends the running model call at once, the
/// ask fails with CANCELLED, and nothing is cached for the question.
#[test]
fn a_running_ask_is_stopped_by_its_request_id() {
    let server = ModelServer::start(vec![Reply::Stall { content: "水温".to_owned() }, Reply::text("九十度。")]);
    let t = TestEngine::new();
    t.ok("llmProfile.create", json!({"name": "local", "baseUrl": server.base_url(), "model": "chat"}));
    corpus(&t);
    assert_eq!(t.ok("search.askCancel", json!({"requestId": "ask_1"}))["cancelled"], false, "nothing runs under that id yet");
    let started = Instant::now();
    let stopped = std::thread::scope(|scope| {
        let asking = scope.spawn(|| t.engine.call("search.ask", json!({"q": "手冲咖啡的水温", "requestId": "ask_1"})));
        while server.chat_requests().is_empty() {
            assert!(started.elapsed() < Duration::from_secs(20), "the model was never asked");
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(t.ok("search.askCancel", json!({"requestId": "ask_1"}))["cancelled"], true);
        asking.join().unwrap()
    });
    assert_eq!(stopped.unwrap_err().code, ErrorCode::Cancelled);
    assert!(started.elapsed() < Duration::from_secs(15), "the stalled stream was not waited out");
    assert_eq!(t.ok("search.askCancel", json!({"requestId": "ask_1"}))["cancelled"], false, "the id is released when the ask ends");
    let answer = t.ok("search.ask", json!({"q": "手冲咖啡的水温"}));
    assert_eq!((answer["cached"].as_bool(), answer["answer"].as_str()), (Some(false), Some("九十度。")), "a stopped ask caches nothing");
}

#[test]
fn ask_answers_from_sources_with_resolved_citations_checked_quotes_and_a_cache() {
    let server = ModelServer::start(vec![Reply::text("水温九十度左右最好「水温九十度左右最好」[1]，书里还说「每天喝五杯」[1][9]。"), Reply::text("现在说的是「研磨要细」[1]。")]);
    let t = TestEngine::new();
    t.ok("llmProfile.create", json!({"name": "local", "baseUrl": server.base_url(), "model": "chat"}));
    let (coffee, _, _) = corpus(&t);
    let answer = t.ok("search.ask", json!({"q": "手冲咖啡的水温"}));
    assert_eq!(answer["cached"], false);
    let sources = answer["sources"].as_array().unwrap();
    assert_eq!(sources[0]["projectId"], json!(coffee));
    assert_eq!(sources[0]["n"], 1);
    // The citation resolves to the document and, through the checked quote, its span.
    let source = t.ok("project.get", json!({"projectId": coffee}))["source"].as_str().unwrap().to_owned();
    let citation = &answer["citations"][0];
    assert_eq!((citation["projectId"].clone(), citation["kind"].clone(), citation["version"].clone()), (json!(coffee), json!("working"), Value::Null));
    assert_eq!(slice(&source, &citation["span"]), "水温九十度左右最好");
    let quotes: Vec<(String, bool)> = answer["quotes"].as_array().unwrap().iter().map(|q| (q["text"].as_str().unwrap().to_owned(), q["found"].as_bool().unwrap())).collect();
    assert_eq!(quotes, vec![("水温九十度左右最好".to_owned(), true), ("每天喝五杯".to_owned(), false)]);
    assert_eq!(answer["unknownCitations"], json!([9]));
    let retrieved = sources.len();
    assert_eq!(answer["footer"], format!("检索 {retrieved} 篇，引用 1 篇 / retrieved {retrieved}, cited 1"));
    // The sources and the question were sent; the model saw numbered sources.
    let sent = server.chat_requests()[0].body["messages"][1]["content"].as_str().unwrap().to_owned();
    assert!(sent.contains("[1] 《手冲咖啡入门》") && sent.contains("水温九十度"), "{sent}");

    // The same question again: from the cache, no model call.
    let again = t.ok("search.ask", json!({"q": "手冲咖啡的水温"}));
    assert_eq!(again["cached"], true);
    assert_eq!(again["answer"], answer["answer"]);
    server.assert_calls(1);
    // A change to the writing makes the cached answer stale.
    let project = t.ok("project.get", json!({"projectId": coffee}));
    t.ok("project.update", json!({"projectId": coffee, "baseRevision": project["revision"], "source": "手冲咖啡的水温：研磨要细，水温九十二度。"}));
    wait(&t);
    let fresh = t.ok("search.ask", json!({"q": "手冲咖啡的水温"}));
    assert_eq!(fresh["cached"], false);
    assert_eq!(fresh["quotes"][0]["found"], true);
    server.assert_calls(2);

    assert_eq!((fresh["route"].as_str(), fresh["routeChosen"].as_bool()), (Some("material"), Some(false)), "the engine routed it: a title matched");

    // Asked again fresh: a model call even though the cache holds the answer.
    server.push(Reply::text("再答一次「研磨要细」¹。"));
    let again_fresh = t.ok("search.ask", json!({"q": "手冲咖啡的水温", "fresh": true}));
    assert_eq!(again_fresh["cached"], false);
    assert_eq!(again_fresh["citations"][0]["n"], 1, "a superscript cites too");
    server.assert_calls(3);

    // The person's own material, but nothing matches: no model call, an empty answer
    // and a zero footer.
    let nothing = t.ok("search.ask", json!({"q": "量子纠缠", "route": "material"}));
    assert_eq!((nothing["answer"].as_str(), nothing["footer"].as_str()), (Some(""), Some("检索 0 篇，引用 0 篇 / retrieved 0, cited 0")));
    assert_eq!((nothing["route"].as_str(), nothing["routeChosen"].as_bool()), (Some("material"), Some(true)));
    server.assert_calls(3);
    // Routed by the engine: a general question is answered directly, no sources.
    server.push(Reply::text("量子纠缠是一种量子关联。"));
    let general = t.ok("search.ask", json!({"q": "什么是量子纠缠"}));
    assert_eq!((general["route"].as_str(), general["routeChosen"].as_bool()), (Some("general"), Some(false)));
    assert_eq!((general["retrieved"].as_u64(), general["sources"].as_array().unwrap().len()), (Some(0), 0));
    assert_eq!(general["answer"], "量子纠缠是一种量子关联。");
    let sent = &server.chat_requests()[3].body["messages"];
    assert!(!sent.to_string().contains("Sources:"), "no sources were sent: {sent}");
    // The person overrides the route the other way: a general-sounding question
    // answered from their writing.
    server.push(Reply::text("你写过：水温九十度左右最好[1]。"));
    let overridden = t.ok("search.ask", json!({"q": "什么是合适的水温", "route": "material"}));
    assert_eq!((overridden["route"].as_str(), overridden["routeChosen"].as_bool()), (Some("material"), Some(true)));
    assert_eq!(overridden["citations"][0]["projectId"], json!(coffee));
    server.assert_calls(5);
}

#[test]
fn ask_cache_expires_after_ten_minutes() {
    let server = ModelServer::start(vec![Reply::text("答[1]"), Reply::text("又答[1]")]);
    let clock = std::sync::Arc::new(inkstone_api::config::FakeClock::new(0));
    let dir = tempfile::tempdir().unwrap();
    let mut config = inkstone_api::EngineConfig::for_tests(dir.path());
    config.clock = clock.clone();
    let engine = inkstone_api::Engine::open(config).unwrap();
    engine.call("llmProfile.create", json!({"name": "local", "baseUrl": server.base_url(), "model": "chat"})).unwrap();
    engine.call("project.create", json!({"title": "灯塔", "source": "守夜人的日记。"})).unwrap();
    assert!(engine.search_index().wait_idle(Duration::from_secs(20)));
    assert_eq!(engine.call("search.ask", json!({"q": "守夜人"})).unwrap()["cached"], false);
    clock.advance_millis(599_000);
    assert_eq!(engine.call("search.ask", json!({"q": "守夜人"})).unwrap()["cached"], true);
    clock.advance_millis(2_000);
    assert_eq!(engine.call("search.ask", json!({"q": "守夜人"})).unwrap()["cached"], false);
    server.assert_calls(2);
}

/// More documents match than the answer takes: the model reranks the retrieved ones
/// (up to 50) down to `limit`, in its order and renumbered; the footer counts what
/// was retrieved. A rerank reply without a list keeps the retrieval order.
#[test]
fn ask_reranks_the_retrieved_documents_down_to_the_sources() {
    let server =
        ModelServer::start(vec![Reply::text("{\"keep\": [5, 99, 1]}"), Reply::text("灯塔守夜[1]，也见[2]。"), Reply::text("I cannot rank these."), Reply::text("答[1]。")]);
    let t = TestEngine::new();
    t.ok("llmProfile.create", json!({"name": "local", "baseUrl": server.base_url(), "model": "chat"}));
    for i in 0..8 {
        create(&t, &format!("灯塔故事{i}"), &format!("第{i}个守夜人在灯塔上写日记。"));
    }
    wait(&t);
    let answer = t.ok("search.ask", json!({"q": "我写过的灯塔守夜人", "limit": 2}));
    assert_eq!((answer["reranked"].as_bool(), answer["retrieved"].as_u64()), (Some(true), Some(8)), "{answer}");
    let rerank = server.chat_requests()[0].body["messages"][1]["content"].as_str().unwrap().to_owned();
    let title_of = |n: u32| -> String {
        let at = rerank.find(&format!("[{n}] 《")).unwrap() + format!("[{n}] 《").len();
        rerank[at..].split('》').next().unwrap().to_owned()
    };
    let sources = answer["sources"].as_array().unwrap();
    let picked: Vec<(u64, String)> = sources.iter().map(|s| (s["n"].as_u64().unwrap(), s["projectTitle"].as_str().unwrap().to_owned())).collect();
    assert_eq!(picked, vec![(1, title_of(5)), (2, title_of(1))], "the model's order, renumbered; [99] names nothing");
    let sent = server.chat_requests()[1].body["messages"][1]["content"].as_str().unwrap().to_owned();
    assert!(sent.contains(&format!("[1] 《{}》", title_of(5))) && !sent.contains("[3] 《"), "only the kept sources are sent: {sent}");
    assert_eq!(answer["footer"], "检索 8 篇，引用 2 篇 / retrieved 8, cited 2");

    let fallback = t.ok("search.ask", json!({"q": "我写过的守夜人日记", "limit": 3}));
    assert_eq!((fallback["reranked"].as_bool(), fallback["sources"].as_array().unwrap().len()), (Some(false), 3), "{fallback}");
    server.assert_calls(4);
}

/// With embeddings on, a question worded differently but meaning the same (similarity
/// ≥ 0.98) is answered from the cache; one about something else is not.
#[test]
fn ask_answers_a_question_of_the_same_meaning_from_the_cache() {
    // Embeddings and chat share the script: one responder answers both kinds.
    let embed = Reply::EmbeddingsBy(concept_embedder(lexicon()));
    let server = ModelServer::start(vec![]);
    server.set_fallback(Reply::Computed(inkstone_test_support::model_server::Responder(std::sync::Arc::new(move |body: &Value| match body.get("messages") {
        Some(messages) if messages.to_string().contains("咖啡") => Reply::text("拿铁不错[1]。"),
        Some(_) => Reply::text("沿河骑行[1]。"),
        None => embed.clone(),
    }))));
    let t = TestEngine::new();
    t.ok("llmProfile.create", json!({"name": "local", "baseUrl": server.base_url(), "model": "chat", "embeddingModel": "embed"}));
    create(&t, "周末骑行路线", "从城东出发，沿着河骑单车到湖边，全程二十公里。");
    create(&t, "咖啡馆地图", "城里值得去的咖啡馆，拿铁都不错。");
    wait(&t);
    let chats = || server.chat_requests().len();
    let first = t.ok("search.ask", json!({"q": "我写的单车路线"}));
    assert_eq!((first["cached"].as_bool(), chats()), (Some(false), 1));
    let same_meaning = t.ok("search.ask", json!({"q": "我写的自行车路线"}));
    assert_eq!((same_meaning["cached"].as_bool(), chats()), (Some(true), 1), "the same meaning in other words");
    assert_eq!(same_meaning["answer"], first["answer"]);
    let other = t.ok("search.ask", json!({"q": "我写的咖啡馆"}));
    assert_eq!((other["cached"].as_bool(), chats()), (Some(false), 2));
}

/// Saves the project's text as a version, then makes `next` its working text.
fn save_then_edit(t: &TestEngine, id: &str, next: &str) {
    t.ok("version.create", json!({"projectId": id}));
    let project = t.ok("project.get", json!({"projectId": id}));
    t.ok("project.update", json!({"projectId": id, "baseRevision": project["revision"], "source": next}));
}

/// A project whose working text and two older versions (shorter, so BM25 scores them
/// higher) all hold the query: its hit is the working copy, at the match in the
/// working text, with the versions named under it; a version speaks for the project
/// only when the working copy does not match.
#[test]
fn the_working_copy_is_a_projects_hit_when_it_matches_and_versions_are_named_under_it() {
    let t = TestEngine::new();
    let id = create(&t, "春天的茶", "茶园。");
    save_then_edit(&t, &id, "清明前后，茶园里。");
    save_then_edit(&t, &id, "清明前后，龙井新茶上市。我在杭州西湖边的茶园里看采茶，山坡上一行一行的茶树，空气里都是清香。回来以后写下这篇。");
    let en = create(&t, "Remote work habits", "Fewer meetings.");
    save_then_edit(&t, &en, "Written updates replace most meetings.");
    save_then_edit(
        &t,
        &en,
        "After four years of working remotely, three habits matter. A short written update at the end of each day replaces most meetings. A walk after lunch clears the head.",
    );
    create(&t, "别的文章", "这里没有那个词。");
    wait(&t);
    for (q, project) in [("茶园", &id), ("meetings", &en)] {
        let source = t.ok("project.get", json!({"projectId": project}))["source"].as_str().unwrap().to_owned();
        let result = search(&t, json!({"q": q}));
        let hit = result["hits"].as_array().unwrap().iter().find(|h| h["projectId"] == json!(project)).unwrap();
        assert_eq!((hit["kind"].as_str(), &hit["version"]), (Some("working"), &Value::Null), "{q}: {result}");
        assert_eq!(slice(&source, &hit["span"]), q, "{q}: the span is in the working text");
        assert_eq!(hit["alsoIn"], json!([1, 2]), "{q}: {result}");
        assert_eq!(result["hits"].as_array().unwrap().len(), 1, "{q}: one hit per project");
    }
    // Within the project, each text is a hit, and the working copy leads though the
    // older, shorter versions score higher.
    for (q, project) in [("茶园", &id), ("meetings", &en)] {
        let result = search(&t, json!({"q": q, "projectId": project}));
        let order: Vec<(String, Value)> = result["hits"].as_array().unwrap().iter().map(|h| (h["kind"].as_str().unwrap().to_owned(), h["version"].clone())).collect();
        assert_eq!(order.len(), 3, "{q}: {result}");
        assert_eq!(order[0], ("working".to_owned(), Value::Null), "{q}: {result}");
    }
    // The working copy no longer has the word: the newest version holding it speaks
    // for the project, and the older one is named under it.
    let project = t.ok("project.get", json!({"projectId": id}));
    t.ok("project.update", json!({"projectId": id, "baseRevision": project["revision"], "source": "改写了，只剩龙井。"}));
    wait(&t);
    let result = search(&t, json!({"q": "茶园"}));
    assert_eq!((result["hits"][0]["kind"].as_str(), &result["hits"][0]["version"]), (Some("version"), &json!(2)), "{result}");
    assert_eq!(result["hits"][0]["alsoIn"], json!([1]), "{result}");
}

/// English words are found in their other forms (the plural, the third person), in
/// the body, the title and the summary, with the span on the word as written;
/// Chinese words are cut as before.
#[test]
fn english_words_match_their_other_forms() {
    let t = TestEngine::new();
    let habits = create(
        &t,
        "Remote work habits",
        "# Remote work habits\n\nAfter four years of working remotely, three habits matter.\n\nA short written update at the end of each day replaces most meetings.",
    );
    let stories = create(&t, "Bedtime story", "Every night one story.");
    let tea = create(&t, "茶园笔记", "清明前后，龙井新茶上市。");
    wait(&t);
    let source = t.ok("project.get", json!({"projectId": habits}))["source"].as_str().unwrap().to_owned();
    let result = search(&t, json!({"q": "meeting"}));
    assert_eq!(hit_projects(&result), vec![habits.clone()], "{result}");
    assert_eq!(slice(&source, &result["hits"][0]["span"]), "meeting", "{result}");
    assert_eq!(hit_projects(&search(&t, json!({"q": "Meetings"}))), vec![habits.clone()]);
    assert_eq!(hit_projects(&search(&t, json!({"q": "habit"}))), vec![habits.clone()]);
    assert_eq!(search(&t, json!({"q": "habit"}))["hits"][0]["tier"], "titleKeywords");
    let result = search(&t, json!({"q": "stories"}));
    assert_eq!(hit_projects(&result), vec![stories.clone()], "{result}");
    assert_eq!(result["hits"][0]["tier"], "titleKeywords");
    // The word's other forms too (Snowball's English stems), but not another word.
    assert_eq!(hit_projects(&search(&t, json!({"q": "meet"}))), vec![habits.clone()]);
    assert_eq!(search(&t, json!({"q": "meat"}))["hits"], json!([]));
    assert_eq!(hit_projects(&search(&t, json!({"q": "新茶"}))), vec![tea.clone()]);
    assert_eq!(hit_projects(&search(&t, json!({"q": "茶"}))), vec![tea]);
}

/// Characters the generated corpora are written with: common ones, among them many
/// that are Chinese stop words on their own (的, 大, 时, 点, 看, ...), which is where a
/// two-character query used to lose its literal match.
const CORPUS_CHARS: &str = "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处府研";

/// One generated document: its title, and its body of short paragraphs, one of which
/// holds its two-character term.
#[derive(Debug, Clone)]
struct GeneratedDoc {
    title: String,
    body: String,
    term: String,
}

fn generated_corpus(docs: usize) -> impl proptest::strategy::Strategy<Value = Vec<GeneratedDoc>> {
    use proptest::prelude::*;
    let chars: Vec<char> = CORPUS_CHARS.chars().collect();
    let n = chars.len();
    let text = move |range: std::ops::Range<usize>| proptest::collection::vec(0..n, range);
    let doc = (text(3..8), proptest::collection::vec(text(12..30), 1..4), (0..n, 0..n), any::<proptest::sample::Index>(), any::<proptest::sample::Index>()).prop_map(
        move |(title, paragraphs, (a, b), paragraph_at, at)| {
            let word = |ix: &[usize]| ix.iter().map(|i| chars[*i]).collect::<String>();
            let term: String = [chars[a], chars[b]].iter().collect();
            let mut paragraphs: Vec<String> = paragraphs.iter().map(|p| word(p)).collect();
            let p = paragraph_at.index(paragraphs.len());
            let mut letters: Vec<char> = paragraphs[p].chars().collect();
            let cut = at.index(letters.len() + 1);
            letters.splice(cut..cut, term.chars());
            paragraphs[p] = letters.into_iter().collect();
            let body = paragraphs.iter().map(|p| format!("{p}。")).collect::<Vec<_>>().join("\n\n");
            GeneratedDoc { title: word(&title), body, term }
        },
    );
    proptest::collection::vec(doc, docs)
}

/// `text` with only its CJK characters: a literal match ignores punctuation, spaces
/// and line breaks between the characters.
fn letters(text: &str) -> String {
    text.chars().filter(|c| c.is_alphabetic()).collect()
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 3, max_shrink_iters: 0, failure_persistence: None, ..proptest::prelude::ProptestConfig::default() })]

    /// The tiers put the literal match first: over a few hundred generated
    /// Chinese documents, a two-character query whose text occurs in exactly one
    /// document (in its title or its body) ranks that document first, above documents
    /// holding only one of its characters, or both apart.
    #[test]
    fn a_query_whose_text_occurs_in_exactly_one_document_ranks_it_first(docs in generated_corpus(300)) {
        let t = TestEngine::new();
        let ids: Vec<String> = docs.iter().map(|d| create(&t, &d.title, &d.body)).collect();
        wait(&t);
        let texts: Vec<(String, String)> = docs.iter().map(|d| (letters(&d.title), letters(&d.body))).collect();
        let mut asked = 0;
        let mut wrong = Vec::new();
        for (i, doc) in docs.iter().enumerate() {
            let holders: Vec<usize> = texts.iter().enumerate().filter(|(_, (title, body))| title.contains(&doc.term) || body.contains(&doc.term)).map(|(j, _)| j).collect();
            if holders != [i] {
                continue;
            }
            asked += 1;
            let result = search(&t, json!({"q": doc.term}));
            let first = &result["hits"][0];
            if first["projectId"] != json!(ids[i]) {
                let holder = result["hits"].as_array().unwrap().iter().position(|h| h["projectId"] == json!(ids[i]));
                wrong.push(format!("{}: first {} ({}, tier {}), the holder at {holder:?}", doc.term, first["title"], first["snippet"]["text"], first["tier"]));
            }
            if asked == 80 {
                break;
            }
        }
        proptest::prop_assert!(asked >= 40, "only {asked} terms occur once");
        proptest::prop_assert!(wrong.is_empty(), "{} of {asked} queries rank another document first:\n{}", wrong.len(), wrong.join("\n"));
    }
}
