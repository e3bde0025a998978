//! The search evaluation: loads the fixture corpus of `tests/fixtures/search/` into a
//! real engine (sled and tantivy), with the scripted embedding model of
//! [`crate::embedder`] behind the scripted server, and scores every query lexical
//! only, semantic only and fused: nDCG@10 and recall@20 per query class. Used by
//! `cargo xtask eval-search` and by the test that holds the floor.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use inkstone_api::retrieval::eval::{mean, ndcg_at, recall_at, Judgements};
use inkstone_api::retrieval::{DocKind, Filter, SearchMode, SearchRequest, SearchScope};
use serde_json::{json, Value};

use crate::model_server::{ModelServer, Reply};
use crate::TestEngine;

pub struct Query {
    pub id: String,
    pub class: String,
    pub q: String,
}

pub struct Fixture {
    /// (id, title, source)
    pub docs: Vec<(String, String, String)>,
    pub queries: Vec<Query>,
    pub judgements: HashMap<String, Judgements>,
    pub lexicon: Vec<Vec<String>>,
}

fn lines(name: &str) -> Vec<Value> {
    let path = crate::fixtures_dir().join("search").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).expect("a JSON line")).collect()
}

pub fn load_fixture() -> Fixture {
    let docs = lines("corpus.jsonl")
        .into_iter()
        .map(|d| (d["id"].as_str().unwrap().to_owned(), d["title"].as_str().unwrap().to_owned(), d["source"].as_str().unwrap().to_owned()))
        .collect();
    let queries = lines("queries.jsonl")
        .into_iter()
        .map(|q| Query { id: q["id"].as_str().unwrap().to_owned(), class: q["class"].as_str().unwrap().to_owned(), q: q["q"].as_str().unwrap().to_owned() })
        .collect();
    let mut judgements: HashMap<String, Judgements> = HashMap::new();
    let qrels = std::fs::read_to_string(crate::fixtures_dir().join("search/qrels.txt")).expect("qrels");
    for line in qrels.lines() {
        let parts: Vec<&str> = line.split_whitespace().collect();
        if let [query, _, doc, grade] = parts[..] {
            judgements.entry(query.to_owned()).or_default().insert(doc.to_owned(), grade.parse().expect("a grade"));
        }
    }
    let lexicon = serde_json::from_str(&std::fs::read_to_string(crate::fixtures_dir().join("search/lexicon.json")).expect("lexicon")).expect("lexicon JSON");
    Fixture { docs, queries, judgements, lexicon }
}

/// Scores of one query class (or `all`) for the three modes: lexical, semantic, fused.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassScores {
    pub class: String,
    pub n_queries: usize,
    pub ndcg10: [f64; 3],
    pub recall20: [f64; 3],
}

/// nDCG@10 and recall@20 of one query in each mode (lexical, semantic, fused); `None`
/// when nothing is relevant.
type QueryScores = [(Option<f64>, Option<f64>); 3];

pub const MODES: [(SearchMode, &str); 3] = [(SearchMode::Lexical, "lexical"), (SearchMode::Semantic, "semantic"), (SearchMode::Fused, "fused")];

/// Runs the whole evaluation; the last row is `all`.
pub fn evaluate() -> Vec<ClassScores> {
    let fixture = load_fixture();
    let server = ModelServer::start(vec![]);
    server.set_fallback(Reply::EmbeddingsBy(crate::embedder::concept_embedder(fixture.lexicon.clone())));
    let t = TestEngine::new();
    t.ok("llmProfile.create", json!({"name": "eval", "baseUrl": server.base_url(), "model": "chat", "embeddingModel": "concepts"}));
    let mut doc_of_project: HashMap<String, String> = HashMap::new();
    for (id, title, source) in &fixture.docs {
        let project = t.ok("project.create", json!({"title": title, "source": source}));
        doc_of_project.insert(project["id"].as_str().unwrap().to_owned(), id.clone());
    }
    let index = t.engine.search_index();
    assert!(index.wait_idle(Duration::from_secs(300)), "the index caught up");
    let status = index.status();
    assert_eq!(status.vectors_missing, 0, "every document has its vector: {status:?}");
    // per class, per mode: (ndcg, recall) per query
    let mut per_class: BTreeMap<String, Vec<QueryScores>> = BTreeMap::new();
    for query in &fixture.queries {
        let judgements = fixture.judgements.get(&query.id).cloned().unwrap_or_default();
        let mut row: QueryScores = [(None, None); 3];
        for (slot, (mode, _)) in MODES.iter().enumerate() {
            let request = SearchRequest {
                query: query.q.clone(),
                scope: SearchScope::Workspace,
                filter: Filter { kinds: vec![DocKind::Working], ..Filter::default() },
                limit: 20,
                mode: *mode,
            };
            let results = index.search(&request).expect("search");
            let ranked: Vec<String> = results.hits.iter().filter_map(|h| doc_of_project.get(&h.project_id).cloned()).collect();
            row[slot] = (ndcg_at(&ranked, &judgements, 10), recall_at(&ranked, &judgements, 20));
        }
        per_class.entry(query.class.clone()).or_default().push(row);
    }
    let score = |class: String, rows: Vec<&QueryScores>| {
        let mut ndcg10 = [0.0; 3];
        let mut recall20 = [0.0; 3];
        for slot in 0..3 {
            ndcg10[slot] = mean(rows.iter().map(|r| r[slot].0));
            recall20[slot] = mean(rows.iter().map(|r| r[slot].1));
        }
        ClassScores { class, n_queries: rows.len(), ndcg10, recall20 }
    };
    let mut out: Vec<ClassScores> = per_class.iter().map(|(class, rows)| score(class.clone(), rows.iter().collect())).collect();
    out.push(score("all".to_owned(), per_class.values().flatten().collect()));
    out
}

/// The scores as a table.
pub fn table(scores: &[ClassScores]) -> String {
    let mut out = String::from("class        n   nDCG@10 lex  sem   fused   recall@20 lex  sem   fused\n");
    for row in scores {
        out.push_str(&format!(
            "{:<10} {:>3}   {:.3} {:.3} {:.3}     {:.3} {:.3} {:.3}\n",
            row.class, row.n_queries, row.ndcg10[0], row.ndcg10[1], row.ndcg10[2], row.recall20[0], row.recall20[1], row.recall20[2]
        ));
    }
    out
}
