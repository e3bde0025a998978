//! Searching: the lexical and semantic candidate lists of a query, fused and
//! grouped into hits, and the windows of text an answer cites.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use tantivy::collector::TopDocs;
use tantivy::{DocAddress, TantivyDocument};

use crate::model::{Anchor, ProjectSummary};

use super::doc::{comment_id, version_id, working_id};
use super::*;

/// The longest a search waits for its query vector.
const QUERY_EMBED_TIMEOUT: Duration = Duration::from_secs(5);
/// How long searches stay lexical after a query vector failed.
pub(super) const SEMANTIC_PAUSE: Duration = Duration::from_secs(30);

/// `chars` characters of `text` around the UTF-16 offset `around.from` (a third
/// before it), or its start; with their UTF-16 span in `text`.
pub(super) fn window(text: &str, around: Option<Anchor>, chars: usize) -> (String, Anchor) {
    let all: Vec<char> = text.chars().collect();
    let center = match around {
        Some(span) => {
            let mut units = 0u32;
            all.iter()
                .take_while(|c| {
                    units += c.len_utf16() as u32;
                    units <= span.from
                })
                .count()
        }
        None => 0,
    };
    let start = center.saturating_sub(chars / 3);
    let end = (start + chars).min(all.len());
    let start = end.saturating_sub(chars).min(start);
    let units = |range: &[char]| range.iter().map(|c| c.len_utf16() as u32).sum::<u32>();
    let from = units(&all[..start]);
    (all[start..end].iter().collect(), Anchor { from, to: from + units(&all[start..end]) })
}
impl SearchIndex {
    /// Searches. An empty query (nothing but spaces and punctuation) finds nothing.
    ///
    /// Errors: INTERNAL when the index cannot be read (rebuild it); semantic failures
    /// are a notice, never an error.
    pub fn search(&self, request: &SearchRequest) -> Result<SearchResults, ApiError> {
        let terms = text::QueryTerms::new(&request.query);
        let mut notice = None;
        if self.shared.progress.lock().building {
            notice = Some(SearchNotice { code: NoticeCode::IndexBuilding, message: "The search index is being built; some documents may be missing.".to_owned() });
        }
        if terms.is_empty() {
            return Ok(SearchResults { hits: Vec::new(), semantic: false, notice });
        }
        let limit = request.limit.clamp(1, MAX_LIMIT);
        let depth = (limit * 10).max(200);
        let searcher = self.shared.reader.searcher();
        let fields = &self.shared.fields;
        let mut lists: Vec<rank::RankedList<DocAddress>> = Vec::new();
        if request.mode != SearchMode::Semantic {
            for (retriever, query) in index::lexical_queries(fields, &terms) {
                let Some(query) = query else { continue };
                let query = index::filtered(fields, query, &request.filter);
                let top = searcher.search(&query, &TopDocs::with_limit(depth).order_by_score()).map_err(IndexError::from)?;
                lists.push(rank::RankedList { retriever, docs: top.into_iter().map(|(score, address)| (address, score)).collect() });
            }
        }
        let mut semantic_used = false;
        if request.mode != SearchMode::Lexical {
            match self.semantic_list(&request.query, &request.filter, depth) {
                Ok(docs) => {
                    semantic_used = true;
                    let mut addressed = Vec::with_capacity(docs.len());
                    for (doc_id, similarity) in docs {
                        if let Some(address) = index::address_of(&searcher, fields, &doc_id).map_err(IndexError::from)? {
                            addressed.push((address, similarity));
                        }
                    }
                    lists.push(rank::RankedList { retriever: rank::Retriever::Semantic, docs: addressed });
                }
                Err(semantic_notice) => {
                    if notice.is_none() {
                        notice = Some(semantic_notice);
                    }
                }
            }
        }
        let fused = rank::fuse(&lists);
        let hits = self.hits(&searcher, &terms, &fused, request.scope, limit)?;
        Ok(SearchResults { hits, semantic: semantic_used, notice })
    }

    /// The documents nearest the query's meaning, best first, with their similarity;
    /// a notice when semantic search is off or failed.
    fn semantic_list(&self, query: &str, filter: &Filter, depth: usize) -> Result<Vec<(String, f32)>, SearchNotice> {
        let store = &self.shared.store;
        let off = |message: &str| SearchNotice { code: NoticeCode::SemanticOff, message: message.to_owned() };
        let profile = match semantic::profile(store) {
            Ok(Some(profile)) => profile,
            Ok(None) => return Err(off("No embedding model is configured; the results are lexical only.")),
            Err(error) => {
                return Err(SearchNotice { code: NoticeCode::SemanticFailed, message: format!("Semantic search is unavailable ({error}); the results are lexical only.") })
            }
        };
        let model = profile.embedding_model.clone().unwrap_or_default();
        {
            let vectors = self.shared.vectors.read().unwrap_or_else(|poisoned| poisoned.into_inner());
            if vectors.model.as_deref() != Some(model.as_str()) && vectors.last_error.is_none() && !self.shared.loading_vectors.swap(true, Ordering::SeqCst) {
                drop(vectors);
                // The model changed (or was just configured): embed again.
                self.shared.progress.lock().sent += 1;
                let _ = self.work.send(Work::LoadVectors);
            }
        }
        let paused = self.shared.semantic_down_until.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).is_some_and(|until| Instant::now() < until);
        if paused {
            return Err(SearchNotice { code: NoticeCode::SemanticFailed, message: "The embedding server failed recently; the results are lexical only.".to_owned() });
        }
        let query_vector = self.query_vector(&profile.id, &model, query).map_err(|error| {
            *self.shared.semantic_down_until.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(Instant::now() + SEMANTIC_PAUSE);
            SearchNotice { code: NoticeCode::SemanticFailed, message: format!("The embedding server failed ({:?}: {}); the results are lexical only.", error.code, error.message) }
        })?;
        let vectors = self.shared.vectors.read().unwrap_or_else(|poisoned| poisoned.into_inner());
        if vectors.model.as_deref() != Some(model.as_str()) {
            return Ok(Vec::new());
        }
        let mut scored: Vec<(String, f32)> = vectors
            .by_doc
            .iter()
            .filter(|(_, doc)| filter.admits(&doc.project_id, doc.kind, &doc.platforms))
            .map(|(doc_id, doc)| (doc_id.clone(), semantic::cosine(&query_vector, &doc.vector)))
            .filter(|(_, similarity)| *similarity >= rank::SIMILARITY_FLOOR)
            .collect();
        scored.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap_or(std::cmp::Ordering::Equal).then_with(|| a.0.cmp(&b.0)));
        scored.truncate(depth);
        Ok(scored)
    }

    pub(super) fn query_vector(&self, profile_id: &str, model: &str, query: &str) -> Result<Vec<f32>, ApiError> {
        let key = (model.to_owned(), query.trim().to_owned());
        if let Some(vector) = self.shared.query_vectors.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).get(&key) {
            return Ok(vector.clone());
        }
        let embeddings = self.shared.services.embedder.embed(&self.shared.store, profile_id, "search", std::slice::from_ref(&key.1), Some(QUERY_EMBED_TIMEOUT))?;
        let vector = semantic::unit(embeddings.vectors.into_iter().next().unwrap_or_default());
        let mut cache = self.shared.query_vectors.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if cache.len() >= 512 {
            cache.clear();
        }
        cache.insert(key, vector.clone());
        Ok(vector)
    }

    /// The hits of the fused candidates: one per project (workspace) or per content
    /// (project), each with its span and snippet.
    fn hits(
        &self,
        searcher: &tantivy::Searcher,
        terms: &text::QueryTerms,
        fused: &[rank::Fused<DocAddress>],
        scope: SearchScope,
        limit: usize,
    ) -> Result<Vec<SearchHit>, ApiError> {
        let fields = &self.shared.fields;
        // Within one project the text as it is now comes first when it matches: a
        // person searching their project looks for where the words are, and an older,
        // shorter version would otherwise rank above it (BM25 favours short texts).
        let mut order: Vec<&rank::Fused<DocAddress>> = fused.iter().collect();
        if scope == SearchScope::Project {
            if let Some(first) = fused.first() {
                let project_id = index::stored(searcher, fields, first.key).map_err(IndexError::from)?.project_id;
                let texts = index::project_texts(searcher, fields, &project_id).map_err(IndexError::from)?;
                if let Some((working, _)) = texts.iter().find(|(_, version)| version.is_none()) {
                    if let Some(at) = order.iter().position(|c| c.key == *working) {
                        let candidate = order.remove(at);
                        order.insert(0, candidate);
                    }
                }
            }
        }
        let mut groups: Vec<(String, index::StoredDoc, &rank::Fused<DocAddress>)> = Vec::new();
        for candidate in order {
            let doc = index::stored(searcher, fields, candidate.key).map_err(IndexError::from)?;
            let group = match (doc.kind, scope) {
                (DocKind::Comment, _) => format!("c/{}", doc.doc_id),
                (_, SearchScope::Workspace) => format!("p/{}", doc.project_id),
                (_, SearchScope::Project) => format!("h/{}", doc.text_hash),
            };
            let n_groups = groups.len();
            match groups.iter_mut().find(|(g, _, _)| *g == group) {
                Some((_, kept, _)) => {
                    // The same content in the working copy and versions: the working
                    // copy, else the newest version, speaks for it (at the best rank).
                    let newer = |d: &index::StoredDoc| (d.kind == DocKind::Working, d.version.unwrap_or(0));
                    if doc.text_hash == kept.text_hash && newer(&doc) > newer(kept) {
                        *kept = doc;
                    }
                }
                None if n_groups < limit => groups.push((group, doc, candidate)),
                None => break,
            }
        }
        let mut also_in: Vec<Vec<u32>> = vec![Vec::new(); groups.len()];
        if scope == SearchScope::Workspace {
            // A project's best-ranked text is often an old version (shorter texts score
            // higher under BM25), but a person looks for the text as it is now: the
            // working copy speaks for the project whenever it matches, else the newest
            // matching version; the other matching versions are named under it.
            let matched: std::collections::HashSet<DocAddress> = fused.iter().map(|f| f.key).collect();
            for ((_, kept, _), also) in groups.iter_mut().zip(also_in.iter_mut()) {
                if kept.kind == DocKind::Comment {
                    continue;
                }
                let mut texts: Vec<(DocAddress, Option<u32>)> =
                    index::project_texts(searcher, fields, &kept.project_id).map_err(IndexError::from)?.into_iter().filter(|(address, _)| matched.contains(address)).collect();
                // The working copy (no number) first, then the newest version.
                texts.sort_by_key(|(_, version)| std::cmp::Reverse(version.map_or(u64::MAX, u64::from)));
                let Some((speaker, number)) = texts.first().copied() else { continue };
                if kept.version != number {
                    *kept = index::stored(searcher, fields, speaker).map_err(IndexError::from)?;
                }
                *also = texts.iter().filter_map(|(_, version)| *version).filter(|v| Some(*v) != number).collect();
                also.sort_unstable();
            }
        }
        let mut hits = Vec::with_capacity(groups.len());
        for ((_, doc, candidate), also_in) in groups.into_iter().zip(also_in) {
            let summary = self.shared.store.get::<ProjectSummary>(doc.project_id.as_bytes())?;
            let located = text::locate(&doc.body, terms);
            let (span, snippet) = match (doc.kind, located) {
                (DocKind::Comment, Some(located)) => (doc.anchor, located.snippet),
                (DocKind::Comment, None) => (doc.anchor, text::opening(&doc.body)),
                (_, Some(located)) => (Some(located.span), located.snippet),
                (_, None) => (None, text::opening(if doc.summary.is_empty() { &doc.body } else { &doc.summary })),
            };
            hits.push(SearchHit {
                project_title: summary.as_ref().map(|s| s.title.clone()).unwrap_or_else(|| doc.title.clone()),
                archived: summary.as_ref().is_some_and(|s| s.archived),
                project_id: doc.project_id,
                kind: doc.kind,
                version: doc.version,
                comment_id: doc.comment_id,
                title: doc.title,
                span,
                snippet,
                tier: candidate.tier,
                score: candidate.rrf,
                also_in,
            });
        }
        Ok(hits)
    }

    /// The numbered sources of an answer: for each hit of `request`, a window of
    /// [`SOURCE_CHARS`] characters of its document around the match.
    ///
    /// Errors: INTERNAL when the index cannot be read.
    pub fn sources(&self, request: &SearchRequest) -> Result<(Vec<ask::Source>, Option<SearchNotice>), ApiError> {
        let results = self.search(request)?;
        let searcher = self.shared.reader.searcher();
        let fields = &self.shared.fields;
        let mut sources = Vec::new();
        for hit in results.hits {
            let doc_id = match (hit.kind, hit.version, &hit.comment_id) {
                (DocKind::Version, Some(number), _) => version_id(&hit.project_id, number),
                (DocKind::Comment, _, Some(comment)) => comment_id(&hit.project_id, comment),
                _ => working_id(&hit.project_id),
            };
            let Some(address) = index::address_of(&searcher, fields, &doc_id).map_err(IndexError::from)? else { continue };
            let doc = index::stored(&searcher, fields, address).map_err(IndexError::from)?;
            // A comment's span is its anchor in the project; its source is its body.
            let around = if hit.kind == DocKind::Comment { None } else { hit.span };
            let (text, span) = window(&doc.body, around, SOURCE_CHARS);
            sources.push(ask::Source {
                n: sources.len() as u32 + 1,
                project_id: hit.project_id,
                project_title: hit.project_title,
                kind: hit.kind,
                version: hit.version,
                comment_id: hit.comment_id,
                span,
                text,
                tier: hit.tier,
            });
        }
        Ok((sources, results.notice))
    }

    /// The BM25 baseline (one query over title and body words, no tiers, no literal
    /// field, no snippets): the top `limit` document ids. For the benchmark.
    pub fn plain_bm25(&self, query: &str, limit: usize) -> Result<Vec<String>, ApiError> {
        let terms = text::QueryTerms::new(query);
        let Some(query) = index::plain_bm25(&self.shared.fields, &terms) else { return Ok(Vec::new()) };
        let searcher = self.shared.reader.searcher();
        let top = searcher.search(&query, &TopDocs::with_limit(limit).order_by_score()).map_err(IndexError::from)?;
        let mut out = Vec::with_capacity(top.len());
        for (_, address) in top {
            let doc: TantivyDocument = searcher.doc(address).map_err(IndexError::from)?;
            use tantivy::schema::Value;
            out.push(doc.get_first(self.shared.fields.doc_id).and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default());
        }
        Ok(out)
    }
}
