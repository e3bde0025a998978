//! The tantivy side: the schema, the two tokenizers, documents built from the
//! store's records, and the candidate lists of a query. Everything tantivy-specific
//! stays in this file.

use tantivy::query::{BooleanQuery, Occur, PhraseQuery, Query, TermQuery};
use tantivy::schema::{Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, Value, FAST, STORED, STRING};
use tantivy::tokenizer::{Token as TantivyToken, TokenStream, Tokenizer};
use tantivy::{DocAddress, Searcher, TantivyDocument, Term};

use super::text::{self, QueryTerms};
use super::{DocKind, IndexDoc};
use crate::model::Anchor;

/// Bump when the schema or the tokenizers change: an index of another schema is
/// rebuilt from the store on open.
pub const SCHEMA: u32 = 2;

const WORDS: &str = "inkstone_words";
const GRAMS: &str = "inkstone_grams";

/// A token stream over tokens made up front by one of `text`'s functions.
pub struct Tokens {
    tokens: Vec<TantivyToken>,
    next: usize,
}

impl TokenStream for Tokens {
    fn advance(&mut self) -> bool {
        self.next += 1;
        self.next <= self.tokens.len()
    }
    fn token(&self) -> &TantivyToken {
        &self.tokens[self.next - 1]
    }
    fn token_mut(&mut self) -> &mut TantivyToken {
        &mut self.tokens[self.next - 1]
    }
}

fn stream(tokens: Vec<text::Token>) -> Tokens {
    Tokens { tokens: tokens.into_iter().map(|t| TantivyToken { offset_from: t.from, offset_to: t.to, position: t.position, text: t.text, position_length: 1 }).collect(), next: 0 }
}

/// jieba search-mode words of the normalised text. Written here rather than taken
/// from `tantivy-jieba` so the index shares the process's one jieba dictionary with
/// `suggest` and normalises exactly as queries do.
#[derive(Clone)]
struct WordTokenizer;

impl Tokenizer for WordTokenizer {
    type TokenStream<'a> = Tokens;
    fn token_stream<'a>(&'a mut self, text: &'a str) -> Tokens {
        stream(text::word_tokens(&text::normalize(text)))
    }
}

/// Character unigrams and bigrams (whole words for Latin script) with positions, for
/// literal matches of any length, including one- and two-character Chinese queries.
#[derive(Clone)]
struct GramTokenizer;

impl Tokenizer for GramTokenizer {
    type TokenStream<'a> = Tokens;
    fn token_stream<'a>(&'a mut self, text: &'a str) -> Tokens {
        stream(text::gram_tokens(&text::normalize(text)))
    }
}

/// The fields of the schema.
#[derive(Debug, Clone, Copy)]
pub struct Fields {
    pub doc_id: Field,
    pub project_id: Field,
    pub kind: Field,
    pub platform: Field,
    pub version: Field,
    pub comment_id: Field,
    pub anchor_from: Field,
    pub anchor_to: Field,
    pub title: Field,
    pub title_words: Field,
    pub title_grams: Field,
    pub title_exact: Field,
    pub tag_exact: Field,
    pub tag_words: Field,
    pub summary: Field,
    pub body_words: Field,
    pub body_grams: Field,
    pub body: Field,
    pub text_hash: Field,
}

pub fn schema() -> (Schema, Fields) {
    let mut builder = Schema::builder();
    let words = TextOptions::default().set_indexing_options(TextFieldIndexing::default().set_tokenizer(WORDS).set_index_option(IndexRecordOption::WithFreqs));
    let grams = TextOptions::default().set_indexing_options(TextFieldIndexing::default().set_tokenizer(GRAMS).set_index_option(IndexRecordOption::WithFreqsAndPositions));
    let fields = Fields {
        doc_id: builder.add_text_field("doc_id", STRING | STORED),
        project_id: builder.add_text_field("project_id", STRING | STORED),
        kind: builder.add_text_field("kind", STRING | STORED),
        platform: builder.add_text_field("platform", STRING),
        version: builder.add_u64_field("version", STORED | FAST),
        comment_id: builder.add_text_field("comment_id", STORED),
        anchor_from: builder.add_u64_field("anchor_from", STORED),
        anchor_to: builder.add_u64_field("anchor_to", STORED),
        title: builder.add_text_field("title", STORED),
        title_words: builder.add_text_field("title_words", words.clone()),
        title_grams: builder.add_text_field("title_grams", grams.clone()),
        title_exact: builder.add_text_field("title_exact", STRING),
        tag_exact: builder.add_text_field("tag_exact", STRING),
        tag_words: builder.add_text_field("tag_words", words.clone()),
        summary: builder.add_text_field("summary", words.clone().set_stored()),
        body_words: builder.add_text_field("body_words", words),
        body_grams: builder.add_text_field("body_grams", grams),
        body: builder.add_text_field("body", STORED),
        text_hash: builder.add_text_field("text_hash", STORED),
    };
    (builder.build(), fields)
}

/// Registers the tokenizers the schema names.
pub fn register_tokenizers(index: &tantivy::Index) {
    index.tokenizers().register(WORDS, WordTokenizer);
    index.tokenizers().register(GRAMS, GramTokenizer);
}

impl DocKind {
    pub fn as_str(self) -> &'static str {
        match self {
            DocKind::Working => "working",
            DocKind::Version => "version",
            DocKind::Comment => "comment",
        }
    }

    fn parse(value: &str) -> Option<DocKind> {
        match value {
            "working" => Some(DocKind::Working),
            "version" => Some(DocKind::Version),
            "comment" => Some(DocKind::Comment),
            _ => None,
        }
    }
}

/// The tantivy document of `doc`.
pub fn document(fields: &Fields, doc: &IndexDoc) -> TantivyDocument {
    let mut out = TantivyDocument::new();
    out.add_text(fields.doc_id, &doc.doc_id);
    out.add_text(fields.project_id, &doc.project_id);
    out.add_text(fields.kind, doc.kind.as_str());
    for platform in &doc.platforms {
        out.add_text(fields.platform, platform.as_str());
    }
    out.add_u64(fields.version, u64::from(doc.version.unwrap_or(0)));
    if let Some(comment_id) = &doc.comment_id {
        out.add_text(fields.comment_id, comment_id);
    }
    if let Some(anchor) = doc.anchor {
        out.add_u64(fields.anchor_from, u64::from(anchor.from));
        out.add_u64(fields.anchor_to, u64::from(anchor.to));
    }
    out.add_text(fields.title, &doc.title);
    out.add_text(fields.title_words, &doc.title);
    out.add_text(fields.title_grams, &doc.title);
    out.add_text(fields.title_exact, text::normalize_label(&doc.title));
    for label in doc.tags.iter().chain(doc.category.iter()) {
        out.add_text(fields.tag_exact, text::normalize_label(label));
        out.add_text(fields.tag_words, label);
    }
    out.add_text(fields.summary, &doc.summary);
    out.add_text(fields.body_words, &doc.body);
    out.add_text(fields.body_grams, &doc.body);
    out.add_text(fields.body, &doc.body);
    out.add_text(fields.text_hash, &doc.text_hash);
    out
}

/// What a hit needs of a stored document.
#[derive(Debug, Clone)]
pub struct StoredDoc {
    pub doc_id: String,
    pub project_id: String,
    pub kind: DocKind,
    pub version: Option<u32>,
    pub comment_id: Option<String>,
    pub anchor: Option<Anchor>,
    pub title: String,
    pub summary: String,
    pub body: String,
    pub text_hash: String,
}

pub fn stored(searcher: &Searcher, fields: &Fields, address: DocAddress) -> tantivy::Result<StoredDoc> {
    let doc: TantivyDocument = searcher.doc(address)?;
    let text_of = |field: Field| doc.get_first(field).and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
    let number_of = |field: Field| doc.get_first(field).and_then(|v| v.as_u64());
    let anchor = match (number_of(fields.anchor_from), number_of(fields.anchor_to)) {
        (Some(from), Some(to)) => Some(Anchor { from: u32::try_from(from).unwrap_or(u32::MAX), to: u32::try_from(to).unwrap_or(u32::MAX) }),
        _ => None,
    };
    let comment_id = Some(text_of(fields.comment_id)).filter(|c| !c.is_empty());
    Ok(StoredDoc {
        doc_id: text_of(fields.doc_id),
        project_id: text_of(fields.project_id),
        kind: DocKind::parse(&text_of(fields.kind)).unwrap_or(DocKind::Working),
        version: number_of(fields.version).and_then(|v| u32::try_from(v).ok()).filter(|v| *v > 0),
        comment_id,
        anchor,
        title: text_of(fields.title),
        summary: text_of(fields.summary),
        body: text_of(fields.body),
        text_hash: text_of(fields.text_hash),
    })
}

/// The address of the document `doc_id`, if indexed.
pub fn address_of(searcher: &Searcher, fields: &Fields, doc_id: &str) -> tantivy::Result<Option<DocAddress>> {
    let query = TermQuery::new(Term::from_field_text(fields.doc_id, doc_id), IndexRecordOption::Basic);
    Ok(searcher.search(&query, &tantivy::collector::TopDocs::with_limit(1).order_by_score())?.first().map(|(_, address)| *address))
}

/// The working copy and versions of `project_id` in the index: each address with its
/// version number (`None` for the working copy), read from the fast field so no
/// stored document is loaded.
pub fn project_texts(searcher: &Searcher, fields: &Fields, project_id: &str) -> tantivy::Result<Vec<(DocAddress, Option<u32>)>> {
    let kinds: Vec<(Occur, Box<dyn Query>)> = [DocKind::Working, DocKind::Version].iter().map(|k| (Occur::Should, term(fields.kind, k.as_str()))).collect();
    let query = BooleanQuery::new(vec![(Occur::Must, term(fields.project_id, project_id)), (Occur::Must, Box::new(BooleanQuery::new(kinds)))]);
    let mut out = Vec::new();
    for address in searcher.search(&query, &tantivy::collector::DocSetCollector)? {
        let column = searcher.segment_reader(address.segment_ord).fast_fields().u64("version")?;
        let version = column.first(address.doc_id).and_then(|v| u32::try_from(v).ok()).filter(|v| *v > 0);
        out.push((address, version));
    }
    Ok(out)
}

/// Which documents a query may return.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub project_id: Option<String>,
    /// A project left out (a tool searching everything but its own session's project).
    pub exclude_project: Option<String>,
    pub kinds: Vec<DocKind>,
    pub platform: Option<crate::model::Platform>,
}

impl Filter {
    fn clauses(&self, fields: &Fields) -> Vec<(Occur, Box<dyn Query>)> {
        let mut out: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        if let Some(project_id) = &self.project_id {
            out.push((Occur::Must, term(fields.project_id, project_id)));
        }
        if let Some(project_id) = &self.exclude_project {
            out.push((Occur::MustNot, term(fields.project_id, project_id)));
        }
        if !self.kinds.is_empty() && self.kinds.len() < 3 {
            let kinds: Vec<(Occur, Box<dyn Query>)> = self.kinds.iter().map(|k| (Occur::Should, term(fields.kind, k.as_str()))).collect();
            out.push((Occur::Must, Box::new(BooleanQuery::new(kinds))));
        }
        if let Some(platform) = self.platform {
            out.push((Occur::Must, term(fields.platform, platform.as_str())));
        }
        out
    }

    /// True when `kind` in `project_id` passes (for the semantic list, which is not a
    /// tantivy query).
    pub fn admits(&self, project_id: &str, kind: DocKind, platforms: &[crate::model::Platform]) -> bool {
        self.project_id.as_deref().is_none_or(|p| p == project_id)
            && self.exclude_project.as_deref() != Some(project_id)
            && (self.kinds.is_empty() || self.kinds.contains(&kind))
            && self.platform.is_none_or(|p| platforms.contains(&p))
    }
}

fn term(field: Field, value: &str) -> Box<dyn Query> {
    Box::new(TermQuery::new(Term::from_field_text(field, value), IndexRecordOption::WithFreqs))
}

/// Every keyword in `field`.
fn all_of(field: Field, keywords: &[String]) -> Option<Box<dyn Query>> {
    if keywords.is_empty() {
        return None;
    }
    Some(Box::new(BooleanQuery::new(keywords.iter().map(|k| (Occur::Must, term(field, k))).collect())))
}

/// Any keyword in `field` (BM25 sums what matches).
fn any_of(field: Field, keywords: &[String]) -> Option<Box<dyn Query>> {
    if keywords.is_empty() {
        return None;
    }
    Some(Box::new(BooleanQuery::new(keywords.iter().map(|k| (Occur::Should, term(field, k))).collect())))
}

/// The literal query over an n-gram field: one term, or a phrase of terms at their
/// offsets.
fn literal(field: Field, terms: &[(usize, String)]) -> Option<Box<dyn Query>> {
    match terms {
        [] => None,
        [(_, only)] => Some(term(field, only)),
        _ => Some(Box::new(PhraseQuery::new_with_offset(terms.iter().map(|(offset, t)| (*offset, Term::from_field_text(field, t))).collect()))),
    }
}

/// The lexical candidate lists of a query, each with its retriever, in the order of
/// [`super::rank::Retriever`].
pub fn lexical_queries(fields: &Fields, terms: &QueryTerms) -> Vec<(super::rank::Retriever, Option<Box<dyn Query>>)> {
    use super::rank::Retriever;
    let tags = {
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = vec![(Occur::Should, term(fields.tag_exact, &terms.label))];
        if let Some(all) = all_of(fields.tag_words, &terms.keywords) {
            clauses.push((Occur::Should, all));
        }
        Some(Box::new(BooleanQuery::new(clauses)) as Box<dyn Query>)
    };
    vec![
        (Retriever::TitleExact, Some(term(fields.title_exact, &terms.label))),
        (Retriever::TitleLiteral, literal(fields.title_grams, &terms.literal)),
        (Retriever::TitleKeywords, all_of(fields.title_words, &terms.keywords)),
        (Retriever::Tags, tags),
        (Retriever::Summary, all_of(fields.summary, &terms.keywords)),
        (Retriever::BodyWords, any_of(fields.body_words, &terms.keywords)),
        (Retriever::BodyLiteral, literal(fields.body_grams, &terms.literal)),
    ]
}

/// `query` restricted by `filter`.
pub fn filtered(fields: &Fields, query: Box<dyn Query>, filter: &Filter) -> Box<dyn Query> {
    let mut clauses = filter.clauses(fields);
    if clauses.is_empty() {
        return query;
    }
    clauses.insert(0, (Occur::Must, query));
    Box::new(BooleanQuery::new(clauses))
}

/// A plain BM25 query over title and body words (any keyword): the baseline the
/// benchmark compares the tiered search with.
pub fn plain_bm25(fields: &Fields, terms: &QueryTerms) -> Option<Box<dyn Query>> {
    let clauses: Vec<(Occur, Box<dyn Query>)> =
        terms.keywords.iter().flat_map(|k| [(Occur::Should, term(fields.title_words, k)), (Occur::Should, term(fields.body_words, k))]).collect();
    if clauses.is_empty() {
        None
    } else {
        Some(Box::new(BooleanQuery::new(clauses)))
    }
}
