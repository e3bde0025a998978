//! Ask, the pure part: the numbered sources a question is answered from, the prompt,
//! and the engine's check of the answer: every `[N]` resolved to its source's
//! document, version and span, every quotation looked up in the sources (a quote that
//! is not there is reported, never passed off as found), and the footer
//! "检索 X 篇，引用 Y 篇 / retrieved X, cited Y"; and the route a question takes
//! (the person's material through retrieval, or a general question answered
//! directly).

use serde::{Deserialize, Serialize};

use super::{DocKind, Tier};
use crate::llm::Message;
use crate::model::Anchor;

/// One numbered source of an answer: a window of a document around its match.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Source {
    /// 1, 2, 3, … as the model cites it.
    pub n: u32,
    pub project_id: String,
    pub project_title: String,
    pub kind: DocKind,
    pub version: Option<u32>,
    pub comment_id: Option<String>,
    /// Where `text` is in the document's text (the source of the working copy or
    /// version, or the comment's body), in UTF-16 code units.
    pub span: Anchor,
    pub text: String,
    /// How well the document matched the question.
    pub tier: Tier,
}

/// How a question is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum AskRoute {
    /// About the person's own writing: retrieval, then an answer citing the sources.
    Material,
    /// A general question: answered directly, without retrieval or citations.
    General,
}

/// Words that say a question is about the person's own writing.
const MATERIAL_CUES: &[&str] = &[
    "我的",
    "我写",
    "我之前",
    "我以前",
    "我们的",
    "我有没有",
    "我是否",
    "写过",
    "草稿",
    "版本",
    "评论",
    "项目里",
    "哪篇",
    "哪一篇",
    "原文",
    "my ",
    "i wrote",
    "we wrote",
    "our ",
    "draft",
    "version",
    "comment",
];

/// Words that say a question asks for general knowledge.
const GENERAL_CUES: &[&str] = &["什么是", "是什么", "如何", "怎么", "怎样", "为什么", "解释", "what is", "what are", "how do", "how to", "how can", "why ", "explain", "define"];

/// The route of a question the person did not route: about their material when it
/// says so, or when retrieval matched a title, tags or a summary; a general question
/// when it asks for general knowledge and nothing matched that well, or when nothing
/// matched at all. `best` is the best tier any retrieved document has.
pub fn route(question: &str, best: Option<Tier>) -> AskRoute {
    let folded = format!("{} ", question.to_lowercase());
    if MATERIAL_CUES.iter().any(|cue| folded.contains(cue)) {
        return AskRoute::Material;
    }
    match best {
        None => AskRoute::General,
        Some(tier) if tier < Tier::Body => AskRoute::Material,
        Some(_) if GENERAL_CUES.iter().any(|cue| folded.contains(cue)) => AskRoute::General,
        Some(_) => AskRoute::Material,
    }
}

/// An `[N]` of the answer, resolved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Citation {
    pub n: u32,
    pub project_id: String,
    pub kind: DocKind,
    pub version: Option<u32>,
    pub comment_id: Option<String>,
    /// The cited source's place in its document; a checked quote citing it narrows
    /// this to the quote.
    pub span: Anchor,
}

/// A quotation in the answer and whether the engine found it in the sources.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Quote {
    pub text: String,
    /// True when the quoted text is, character for character, in a source.
    pub found: bool,
    /// The source it was found in, and where in that source's document.
    pub source: Option<u32>,
    pub span: Option<Anchor>,
}

/// What the engine made of an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    pub citations: Vec<Citation>,
    pub quotes: Vec<Quote>,
    /// `[N]` that name no source.
    pub unknown_citations: Vec<u32>,
}

/// An answer with its sources, resolved citations, checked quotes and footer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Answer {
    /// The model's answer as it wrote it (empty when nothing matched the question:
    /// then no model was called).
    pub answer: String,
    /// The model that answered.
    pub model: Option<String>,
    pub sources: Vec<Source>,
    pub citations: Vec<Citation>,
    pub quotes: Vec<Quote>,
    /// `[N]` in the answer that name no source.
    pub unknown_citations: Vec<u32>,
    /// Documents retrieved (before a rerank; the sources are what the answer was
    /// given) and documents cited.
    pub retrieved: u32,
    pub cited: u32,
    /// "检索 X 篇，引用 Y 篇 / retrieved X, cited Y".
    pub footer: String,
    /// Why retrieval was not all it could be (semantic search off or failed).
    pub notice: Option<super::SearchNotice>,
    /// True when this answer came from the cache (the same question, sources and
    /// profile within ten minutes, the index unchanged).
    pub cached: bool,
    /// True when the model reranked the retrieved documents down to the sources.
    pub reranked: bool,
    /// How the question was answered.
    pub route: AskRoute,
    /// True when the person chose the route; false when the engine did.
    pub route_chosen: bool,
}

/// Shortest quotation checked, in characters (shorter ones are words, not quotes).
const MIN_QUOTE_CHARS: usize = 4;

/// The messages that ask the model to answer `question` from `sources` only.
pub fn prompt(question: &str, sources: &[Source]) -> Vec<Message> {
    let system = "You answer questions about the user's own writing, using only the numbered sources below. \
        Cite every statement with the number of its source in square brackets, like [1] or [2][3]. \
        When you quote, copy the text exactly inside 「」 and cite it. \
        If the sources do not answer the question, say so plainly; never invent a source or a quote. \
        Answer in the language of the question.";
    let mut user = format!("Question: {question}\n\nSources:\n");
    for source in sources {
        let place = match (source.kind, source.version) {
            (DocKind::Version, Some(number)) => format!("version {number}"),
            (DocKind::Comment, _) => "comment".to_owned(),
            _ => "current text".to_owned(),
        };
        user.push_str(&format!("\n[{}] 《{}》 ({place})\n{}\n", source.n, source.project_title, source.text));
    }
    vec![Message::system(system), Message::user(user)]
}

/// The least an answer's reply is left when the window is small: a few sentences.
pub const ASK_REPLY_FLOOR_TOKENS: u32 = 256;

/// A request fitted to the profile's window: the sources sent (a prefix of those
/// given, best first; the first cut at a sentence end when it does not fit whole),
/// and the output limit left for the reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fitted {
    pub sources: Vec<Source>,
    pub max_output: u32,
    /// The prompt's tokens as the profile's server counts them (calibrated).
    pub prompt_tokens: u64,
}

/// What fitting could not do: the least prompt that still answers (the question and
/// one short source, or the question alone on the general route), in calibrated
/// tokens, with the reply's floor, over the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooLong {
    pub prompt_tokens: u64,
    pub reply_floor: u32,
    pub window: u64,
}

/// The shortest head of the best source sent when nothing longer fits, in characters
/// (a source without a sentence end this early is cut here).
const MIN_SOURCE_CHARS: usize = 120;

/// Fits an answer's request to a `window` of tokens: the system prompt, the question,
/// then `sources` best first while the prompt leaves the reply `wanted` tokens; the
/// first source is cut at its last sentence end that fits rather than dropped (and,
/// when not even its first sentence leaves `wanted`, the reply is given less, down to
/// [`ASK_REPLY_FLOOR_TOKENS`]). `tokens` counts a request's prompt as the server will
/// (the estimate, calibrated). With no sources (the general route), the question
/// alone. The reply's limit is `wanted`, never more than the window leaves.
pub fn fit(question: &str, sources: &[Source], window: u64, wanted: u32, tokens: &dyn Fn(&[Message]) -> u64) -> Result<Fitted, TooLong> {
    let floor = ASK_REPLY_FLOOR_TOKENS.min(wanted);
    let measure = |sent: &[Source]| {
        let messages = if sources.is_empty() { prompt_general(question) } else { prompt(question, sent) };
        tokens(&messages)
    };
    let fitted = |sent: Vec<Source>, prompt_tokens: u64| {
        let left = window.saturating_sub(prompt_tokens);
        Ok(Fitted { max_output: u64::from(wanted).min(left) as u32, sources: sent, prompt_tokens })
    };
    if sources.is_empty() {
        let prompt_tokens = measure(&[]);
        if prompt_tokens + u64::from(floor) > window {
            return Err(TooLong { prompt_tokens, reply_floor: floor, window });
        }
        return fitted(Vec::new(), prompt_tokens);
    }
    let mut sent: Vec<Source> = Vec::new();
    let mut prompt_tokens = 0;
    for source in sources {
        let mut trial = sent.clone();
        trial.push(source.clone());
        let needed = measure(&trial);
        if needed + u64::from(wanted) > window {
            break;
        }
        (sent, prompt_tokens) = (trial, needed);
    }
    if !sent.is_empty() {
        return fitted(sent, prompt_tokens);
    }
    // Not even the best source fits whole: its longest head ending a sentence that
    // leaves the reply what it wants, else what leaves the floor.
    let heads = heads(&sources[0]);
    for reserve in [wanted, floor] {
        let best = heads.iter().rev().map(|head| (head, measure(std::slice::from_ref(head)))).find(|(_, needed)| needed + u64::from(reserve) <= window);
        if let Some((head, needed)) = best {
            return fitted(vec![head.clone()], needed);
        }
    }
    let shortest = heads.first().map_or_else(|| measure(&sources[..1]), |head| measure(std::slice::from_ref(head)));
    Err(TooLong { prompt_tokens: shortest, reply_floor: floor, window })
}

/// The heads of `source` that end a sentence, shortest first, each with its span
/// narrowed to it (and a head of [`MIN_SOURCE_CHARS`] when no sentence ends that early).
fn heads(source: &Source) -> Vec<Source> {
    let mut ends: Vec<usize> = Vec::new();
    let mut chars = 0;
    for (at, c) in source.text.char_indices() {
        chars += 1;
        if chars == MIN_SOURCE_CHARS && ends.is_empty() {
            ends.push(at + c.len_utf8());
        }
        if matches!(c, '。' | '！' | '？' | '；' | '.' | '!' | '?' | ';' | '\n') {
            ends.push(at + c.len_utf8());
        }
    }
    ends.dedup();
    ends.into_iter()
        .filter(|end| *end < source.text.len() && !source.text[..*end].trim().is_empty())
        .map(|end| {
            let text = source.text[..end].trim_end().to_owned();
            Source { span: Anchor { from: source.span.from, to: source.span.from + utf16_len(&text) }, text, ..source.clone() }
        })
        .collect()
}

/// The messages that ask the model a general question, answered directly.
pub fn prompt_general(question: &str) -> Vec<Message> {
    let system = "Answer the user's question directly and concisely from general knowledge. \
        You have not been shown any of the user's own writing: do not cite sources or claim to quote it. \
        Answer in the language of the question.";
    vec![Message::system(system), Message::user(question.to_owned())]
}

/// Characters of each candidate the rerank prompt shows.
const RERANK_PREVIEW_CHARS: usize = 160;

/// The messages that ask the model to pick, from `candidates`, the at most `keep`
/// that best answer `question`, best first, as `{"keep": [n, …]}`.
pub fn rerank_prompt(question: &str, candidates: &[Source], keep: usize) -> Vec<Message> {
    let system = format!(
        "You rank passages of the user's own writing by how well they help answer a question. \
        Reply with only a JSON object {{\"keep\": [numbers]}}: the numbers of at most {keep} passages that help, best first. \
        Leave out passages that do not help; an empty list is allowed."
    );
    let mut user = format!("Question: {question}\n\nPassages:\n");
    for candidate in candidates {
        let preview: String = candidate.text.chars().take(RERANK_PREVIEW_CHARS).map(|c| if c.is_whitespace() { ' ' } else { c }).collect();
        user.push_str(&format!("\n[{}] 《{}》 {preview}\n", candidate.n, candidate.project_title));
    }
    vec![Message::system(system), Message::user(user)]
}

/// The candidates the model kept, in its order, renumbered 1, 2, 3, …: numbers that
/// name no candidate and repeats are dropped, at most `keep` are taken. `None` when
/// the reply holds no such list (the caller keeps the retrieval order).
pub fn reranked(reply: &str, candidates: &[Source], keep: usize) -> Option<Vec<Source>> {
    let value = crate::llm::structured::extract_json(reply)?;
    let numbers = value.get("keep").unwrap_or(&value).as_array()?;
    let mut picked: Vec<Source> = Vec::new();
    for n in numbers.iter().filter_map(serde_json::Value::as_u64) {
        if picked.len() >= keep {
            break;
        }
        if picked.iter().any(|p| u64::from(p.n) == n) {
            continue;
        }
        if let Some(candidate) = candidates.iter().find(|c| u64::from(c.n) == n) {
            picked.push(candidate.clone());
        }
    }
    for (i, source) in picked.iter_mut().enumerate() {
        source.n = i as u32 + 1;
    }
    Some(picked)
}

/// The digit a superscript character stands for.
fn superscript_digit(c: char) -> Option<u32> {
    match c {
        '⁰' => Some(0),
        '¹' => Some(1),
        '²' => Some(2),
        '³' => Some(3),
        '⁴'..='⁹' => Some(c as u32 - '⁴' as u32 + 4),
        _ => None,
    }
}

/// The numbers cited at each place of `answer`: `[1]`, `[ 1 ]`, `[1, 2]`, `[1][3]`,
/// `【2】`, `¹` and `¹²` (twelve), with the character index after each marker.
fn citation_marks(answer: &str) -> Vec<(usize, u32)> {
    let chars: Vec<char> = answer.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if superscript_digit(chars[i]).is_some() {
            let digits: Vec<u32> = chars[i..].iter().map_while(|c| superscript_digit(*c)).collect();
            let n = digits.iter().fold(0u32, |n, d| n.saturating_mul(10).saturating_add(*d));
            i += digits.len();
            if n > 0 {
                out.push((i, n));
            }
            continue;
        }
        let close = match chars[i] {
            '[' => ']',
            '【' => '】',
            _ => {
                i += 1;
                continue;
            }
        };
        let Some(len) = chars[i + 1..].iter().position(|c| *c == close) else { break };
        let inner: String = chars[i + 1..i + 1 + len].iter().collect();
        let numbers: Option<Vec<u32>> = inner.split([',', '，', '、', ' ']).filter(|p| !p.is_empty()).map(|p| p.trim().parse().ok()).collect();
        match numbers {
            Some(numbers) if !numbers.is_empty() => {
                out.extend(numbers.into_iter().map(|n| (i + len + 2, n)));
                i += len + 2;
            }
            _ => i += 1,
        }
    }
    out
}

/// Quotations of `answer` with the character index where each ends.
fn quotations(answer: &str) -> Vec<(String, usize)> {
    let chars: Vec<char> = answer.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let close = match chars[i] {
            '「' => '」',
            '『' => '』',
            '“' => '”',
            '"' => '"',
            _ => {
                i += 1;
                continue;
            }
        };
        match chars[i + 1..].iter().position(|c| *c == close) {
            Some(len) => {
                let text: String = chars[i + 1..i + 1 + len].iter().collect();
                if text.trim().chars().count() >= MIN_QUOTE_CHARS {
                    out.push((text.trim().to_owned(), i + len + 2));
                }
                i += len + 2;
            }
            None => i += 1,
        }
    }
    out
}

fn utf16_len(text: &str) -> u32 {
    text.encode_utf16().count() as u32
}

/// Where `quote` is in `source`'s document, if it is in its text.
fn find_in(source: &Source, quote: &str) -> Option<Anchor> {
    let at = source.text.find(quote)?;
    let from = source.span.from + utf16_len(&source.text[..at]);
    Some(Anchor { from, to: from + utf16_len(quote) })
}

/// Resolves the citations of `answer` and checks its quotations against `sources`. A
/// quote is looked up first in the sources cited right after it, then in all.
pub fn check(answer: &str, sources: &[Source]) -> Checked {
    let marks = citation_marks(answer);
    let mut quotes = Vec::new();
    let mut narrowed: Vec<(u32, Anchor)> = Vec::new();
    for (text, end) in quotations(answer) {
        // The citations that follow the quote directly (within a few characters).
        let cited_after: Vec<u32> = marks.iter().filter(|(at, _)| *at >= end && *at <= end + 8).map(|(_, n)| *n).collect();
        let ordered = sources.iter().filter(|s| cited_after.contains(&s.n)).chain(sources.iter().filter(|s| !cited_after.contains(&s.n)));
        let found = ordered.filter_map(|s| find_in(s, &text).map(|span| (s.n, span))).next();
        if let Some((n, span)) = found {
            if cited_after.contains(&n) {
                narrowed.push((n, span));
            }
        }
        quotes.push(Quote { text, found: found.is_some(), source: found.map(|(n, _)| n), span: found.map(|(_, span)| span) });
    }
    let mut citations: Vec<Citation> = Vec::new();
    let mut unknown = Vec::new();
    for (_, n) in &marks {
        if citations.iter().any(|c| c.n == *n) || unknown.contains(n) {
            continue;
        }
        match sources.iter().find(|s| s.n == *n) {
            Some(source) => citations.push(Citation {
                n: *n,
                project_id: source.project_id.clone(),
                kind: source.kind,
                version: source.version,
                comment_id: source.comment_id.clone(),
                span: narrowed.iter().find(|(m, _)| m == n).map(|(_, span)| *span).unwrap_or(source.span),
            }),
            None => unknown.push(*n),
        }
    }
    Checked { citations, quotes, unknown_citations: unknown }
}

/// The footer of an answer, both languages: documents retrieved and documents cited.
pub fn footer(retrieved: usize, cited: usize) -> String {
    format!("检索 {retrieved} 篇，引用 {cited} 篇 / retrieved {retrieved}, cited {cited}")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn source(n: u32, text: &str, from: u32) -> Source {
        Source {
            n,
            project_id: format!("prj_{n}"),
            project_title: format!("标题{n}"),
            kind: if n == 2 { DocKind::Version } else { DocKind::Working },
            version: (n == 2).then_some(4),
            comment_id: None,
            span: Anchor { from, to: from + utf16_len(text) },
            text: text.to_owned(),
            tier: Tier::Body,
        }
    }

    #[test]
    fn citations_resolve_to_document_version_and_span_and_quotes_are_checked() {
        let sources = vec![source(1, "水温九十度左右最好。研磨度要均匀。", 10), source(2, "😀 萃取时间两分半，不要太久。", 100)];
        let answer = "水温要高【1】。书里说「萃取时间两分半」[2]，还说「每天喝三杯最好」[1]。见 [1, 2] 和 [7]。";
        let checked = check(answer, &sources);
        assert_eq!(checked.citations.iter().map(|c| c.n).collect::<Vec<_>>(), vec![1, 2]);
        assert_eq!(checked.unknown_citations, vec![7]);
        let second = &checked.citations[1];
        assert_eq!((second.project_id.as_str(), second.kind, second.version), ("prj_2", DocKind::Version, Some(4)));
        // Narrowed to the quote: after the emoji (2 units) and a space.
        assert_eq!(second.span, Anchor { from: 103, to: 110 });
        assert_eq!(checked.citations[0].span, sources[0].span);
        assert_eq!(checked.quotes.len(), 2);
        assert!(checked.quotes[0].found && checked.quotes[0].source == Some(2));
        assert!(!checked.quotes[1].found, "an invented quote is reported as not found");
    }

    #[test]
    fn a_quote_is_found_in_any_source_when_its_citation_is_wrong() {
        let sources = vec![source(1, "只有第一篇有这句话。", 0), source(3, "第三篇。", 0)];
        let checked = check("他说“只有第一篇有这句话”[3]。", &sources);
        assert_eq!(checked.quotes[0].source, Some(1));
        assert_eq!(checked.citations[0].span, sources[1].span, "the citation keeps its own source's span");
    }

    #[test]
    fn short_quotes_and_unclosed_marks_are_left_alone() {
        let checked = check("这是「短」的 [abc] [1", &[source(1, "x", 0)]);
        assert!(checked.quotes.is_empty());
        assert!(checked.citations.is_empty() && checked.unknown_citations.is_empty());
    }

    #[test]
    fn spaced_and_superscript_citations_are_recognised() {
        let sources = vec![source(1, "一", 0), source(2, "二", 0), source(3, "三", 0)];
        let checked = check("甲[ 2 ]，乙¹，丙³⁰。", &sources);
        assert_eq!(checked.citations.iter().map(|c| c.n).collect::<Vec<_>>(), vec![2, 1]);
        assert_eq!(checked.unknown_citations, vec![30]);
    }

    #[test]
    fn questions_about_the_material_go_through_retrieval_and_general_ones_do_not() {
        assert_eq!(route("我之前写过关于水温的内容吗", None), AskRoute::Material, "it says it is about the person's writing");
        assert_eq!(route("What did my drafts say about coffee?", None), AskRoute::Material);
        assert_eq!(route("手冲咖啡", Some(Tier::Title)), AskRoute::Material, "a title matched");
        assert_eq!(route("什么是量子纠缠", Some(Tier::Body)), AskRoute::General, "general knowledge, only a word in some body");
        assert_eq!(route("量子纠缠", None), AskRoute::General, "nothing matched");
        assert_eq!(route("水温九十度", Some(Tier::Body)), AskRoute::Material);
    }

    #[test]
    fn a_rerank_keeps_the_models_order_renumbered_and_drops_what_names_nothing() {
        let candidates: Vec<Source> = (1..=5).map(|n| source(n, &format!("第{n}篇"), 0)).collect();
        let picked = reranked("好的：{\"keep\": [4, 9, 2, 4, 1]}", &candidates, 2).unwrap();
        assert_eq!(picked.iter().map(|s| (s.n, s.project_id.as_str())).collect::<Vec<_>>(), vec![(1, "prj_4"), (2, "prj_2")]);
        assert_eq!(reranked("[3]", &candidates, 5).unwrap()[0].project_id, "prj_3");
        assert_eq!(reranked("no idea", &candidates, 5), None);
        let prompt = rerank_prompt("水温", &candidates, 2);
        assert!(prompt[0].content.contains("at most 2") && prompt[1].content.contains("[5] 《标题5》 第5篇"));
    }

    fn count(messages: &[Message]) -> u64 {
        crate::llm::estimate_request_tokens(&crate::llm::ChatRequest::new(messages.to_vec()))
    }

    #[test]
    fn fitting_adds_sources_best_first_cuts_the_first_at_a_sentence_and_keeps_the_reply() {
        let long = "灯塔守夜人点灯。".repeat(60);
        let sources: Vec<Source> = (1..=3).map(|n| source(n, &long, 10)).collect();
        let base = count(&prompt("灯塔？", &[]));
        // Room for two sources and the reply: two are sent, the output limit is 1,024.
        let two = count(&prompt("灯塔？", &sources[..2]));
        let fitted = fit("灯塔？", &sources, two + 1_100, 1_024, &count).unwrap();
        assert_eq!((fitted.sources.len(), fitted.max_output), (2, 1_024));
        // Room for part of one: its head, ending a sentence, with the span narrowed.
        let fitted = fit("灯塔？", &sources, base + 200 + 1_024, 1_024, &count).unwrap();
        let head = &fitted.sources[0];
        assert!(head.text.ends_with('。') && long.starts_with(&head.text) && head.text.len() < long.len(), "{}", head.text);
        assert_eq!(head.span, Anchor { from: 10, to: 10 + utf16_len(&head.text) });
        assert!(fitted.prompt_tokens + u64::from(fitted.max_output) <= base + 200 + 1_024);
        // Less than the reply wants: the reply gets what is left, down to its floor.
        let fitted = fit("灯塔？", &sources, base + 300, 1_024, &count).unwrap();
        assert!(fitted.max_output >= ASK_REPLY_FLOOR_TOKENS && fitted.prompt_tokens + u64::from(fitted.max_output) <= base + 300, "{fitted:?}");
        // Not even a sentence with the floor: too long, nothing to send.
        let too_long = fit("灯塔？", &sources, base + 100, 1_024, &count).unwrap_err();
        assert!(too_long.prompt_tokens + u64::from(too_long.reply_floor) > too_long.window, "{too_long:?}");
        // The general route: the question alone.
        assert!(fit("什么是灯塔", &[], 4_096, 1_024, &count).unwrap().sources.is_empty());
    }

    #[test]
    fn the_footer_counts_in_both_languages() {
        assert_eq!(footer(5, 2), "检索 5 篇，引用 2 篇 / retrieved 5, cited 2");
    }

    #[test]
    fn the_prompt_numbers_the_sources_and_names_versions() {
        let messages = prompt("水温多少？", &[source(1, "水温九十度。", 0), source(2, "旧稿。", 0)]);
        assert_eq!(messages.len(), 2);
        assert!(messages[1].content.contains("[1] 《标题1》 (current text)\n水温九十度。"));
        assert!(messages[1].content.contains("[2] 《标题2》 (version 4)"));
    }
}
