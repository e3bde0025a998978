//! Session intent: what the person is working on — brand, product, topic,
//! output type, platforms, length — updated from each of their messages by rules
//! (keyword tables, patterns, and jieba's segmentation for Chinese), never by a model
//! call, so the same message always gives the same intent. Pure.
//!
//! - A message that only adds material (a link, a pasted document) keeps the subject:
//!   [`update`] returns the intent unchanged.
//! - A field the message names replaces the old one; the others stay.
//! - [`clarification`]: ask only when needed. A request to generate (copy, a title set,
//!   a video script) without any subject (brand, product, topic, or a project with
//!   content) asks for the subject; a request for copy or a script asks for the
//!   platform (and length) only when neither the message, the intent so far nor the
//!   project's platforms say it. Strategy, analysis and critique requests never ask.

use std::sync::OnceLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

use crate::model::Platform;

/// What the person wants made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputType {
    Copy,
    TitleSet,
    VideoScript,
    StrategyNotes,
    Analysis,
    Critique,
}

impl OutputType {
    /// True for the kinds that generate publishable text.
    pub fn generates(self) -> bool {
        matches!(self, OutputType::Copy | OutputType::TitleSet | OutputType::VideoScript)
    }

    fn label(self) -> &'static str {
        match self {
            OutputType::Copy => "copy",
            OutputType::TitleSet => "a set of titles",
            OutputType::VideoScript => "a video script",
            OutputType::StrategyNotes => "strategy notes",
            OutputType::Analysis => "an analysis",
            OutputType::Critique => "a critique",
        }
    }
}

/// The unit of a requested length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LengthUnit {
    Characters,
    Words,
    Seconds,
}

/// A requested length ("800 字", "300 words", "60 秒").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Length {
    pub value: u32,
    pub unit: LengthUnit,
}

/// What is missing before generating.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Missing {
    Subject,
    Platform,
    Length,
}

/// The question to ask before generating, when something cannot be inferred.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Clarification {
    pub missing: Vec<Missing>,
    /// The question, in English (the panel shows its own text by `missing`).
    pub question: String,
}

/// The session's intent. Every field is optional: a session starts knowing nothing.
/// Unknown fields are refused (it is also the `session.setIntent` parameter).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionIntent {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub brand: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub product: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topic: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_type: Option<OutputType>,
    #[serde(default)]
    pub platforms: Vec<Platform>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub length: Option<Length>,
}

impl SessionIntent {
    /// True when nothing is known.
    pub fn is_empty(&self) -> bool {
        *self == SessionIntent::default()
    }

    /// True when a subject is named (brand, product or topic).
    pub fn has_subject(&self) -> bool {
        self.brand.is_some() || self.product.is_some() || self.topic.is_some()
    }
}

/// What the project says that the rules may use.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProjectHints<'a> {
    /// The project's chosen platforms (empty: none chosen).
    pub platforms: &'a [Platform],
    /// The project's brand profile name, recognised when a message names it.
    pub brand_name: Option<&'a str>,
    /// True when the project has content (then "this article" is a subject).
    pub has_content: bool,
}

/// How a message reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageKind {
    /// It asks for something (or says something about the work).
    Task,
    /// It only adds material: a link, a pasted document.
    Material,
}

const URL: &str = r"(?i)\b(?:https?://|www\.)[^\s<>\u3000，。]+";
/// A message longer than this with no request in its head or tail is pasted material.
const MATERIAL_CHARS: usize = 600;
/// How much of a long message's head and tail is read for a request.
const REQUEST_WINDOW_CHARS: usize = 200;

fn regex(cell: &'static OnceLock<Option<Regex>>, pattern: &str) -> Option<&'static Regex> {
    cell.get_or_init(|| Regex::new(pattern).ok()).as_ref()
}

/// The patterns that [`may_hold`] (or a plain `contains`) guards: their matches all
/// hold the guarding words (see the test `each_guard_is_necessary_for_its_pattern`).
const TITLE_EDIT_ZH_PATTERN: &str = r"(?:改|修改|换|缩短|精简|润色|优化|调整|删掉|去掉|重写)[^，。！？,.!?]{0,6}标题|标题[^，。！？,.!?]{0,6}(?:改|修改|换|控制|缩短|精简|润色|优化|调整|删|去掉|重写|太长|太短|短一|长一|简洁)";
const TITLE_EDIT_EN_PATTERN: &str = r"(?i)\b(?:change|edit|shorten|lengthen|rewrite|reword|rephrase|rename|tweak|fix|improve|polish|adjust|trim|update|cut|simplify)\b[^.!?\n]{0,20}\b(?:title|headline|heading)s?\b|\b(?:title|headline|heading)\b[^.!?\n]{0,12}\b(?:is too|shorter|longer|punchier)\b";
const LENGTH_PATTERN: &str = r"(?i)(\d{1,6})\s*(?:个|-)?\s*(字|词|汉字|words?\b|characters?\b|chars?\b|秒|seconds?\b|secs?\b|s\b|分钟|minutes?\b|mins?\b)";
const BRAND_AFTER_PATTERN: &str = r"(?i)\bbrand(?:\s+is|\s+called|\s+named|:)?\s+([A-Z0-9][\w&'\-]*(?:\s+[A-Z0-9][\w&'\-]*)*)";
const BRAND_BEFORE_PATTERN: &str = r"\b([A-Z][\w&'\-]*(?:\s+[A-Z][\w&'\-]*)*)\s+brand\b";
const PRODUCT_EN_PATTERN: &str = r#"(?i)\bproduct(?:\s+is|\s+called|\s+named|:)?\s+["“]?([A-Za-z0-9][\w'\-]*(?:\s+[A-Z0-9][\w'\-]*)*)"#;
const ABOUT_ZH_PATTERN: &str = r"(?:关于|主题[是为：:]?|围绕|介绍)\s*「?“?([^，。,.!！?？」”的]{1,30}?)(?:的|」|”|，|。|,|\.|!|！|\?|？|$)";
const ABOUT_EN_PATTERN: &str = r"(?i)\b(?:about|on the topic of|topic:|covering|introducing)\s+([^.,;!?\n]{2,60}?)(?:\s+(?:for|on|in|with|to|and)\s|[.,;!?\n]|$)";

/// True when `text` holds one of `words` (ASCII, lowercase) in any case. The patterns
/// below that need such a word ask this first: it is a necessary condition of their
/// match (none of these words has a letter with a non-ASCII case variant, such as k or s),
/// and far cheaper than a Unicode-aware pattern on Chinese text, which runs on the
/// regex crate's slower engines. The answers are the same.
fn may_hold(text: &str, words: &[&str]) -> bool {
    let lower = text.to_lowercase();
    words.iter().any(|w| lower.contains(w))
}

fn url_regex() -> Option<&'static Regex> {
    static CELL: OnceLock<Option<Regex>> = OnceLock::new();
    regex(&CELL, URL)
}

/// Words that only introduce material ("see this", "参考一下").
const MATERIAL_LEADS: &[&str] =
    &["看看", "参考", "链接", "附件", "资料", "素材", "原文", "这个", "这是", "这篇", "see", "here", "link", "fyi", "source", "reference", "attached", "this", "is", "the"];

/// Classifies a message: material (a link with at most a few introducing words, or a
/// long paste with no request in its head or tail) or a task.
pub fn classify(message: &str) -> MessageKind {
    let without_urls = url_regex().map_or_else(|| message.to_owned(), |r| r.replace_all(message, " ").into_owned());
    let has_url = without_urls.len() != message.len();
    if has_url {
        let rest: Vec<String> = without_urls
            .split(|c: char| c.is_whitespace() || c.is_ascii_punctuation() || "，。：；！？、「」“”".contains(c))
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect();
        let only_leads = rest.iter().all(|w| MATERIAL_LEADS.iter().any(|lead| w == lead || (w.chars().count() <= 6 && MATERIAL_LEADS.iter().any(|l| w.contains(l)))));
        if rest.is_empty() || (only_leads && output_type(&without_urls).is_none()) {
            return MessageKind::Material;
        }
    }
    let chars = message.chars().count();
    if chars > MATERIAL_CHARS {
        let head: String = message.chars().take(REQUEST_WINDOW_CHARS).collect();
        let tail: String = message.chars().skip(chars - REQUEST_WINDOW_CHARS).collect();
        if output_type(&head).is_none() && output_type(&tail).is_none() && platforms(&head).is_empty() && platforms(&tail).is_empty() {
            return MessageKind::Material;
        }
    }
    MessageKind::Task
}

/// True when a text asks to change the title the work already has ("改标题", "把标题改短一点",
/// "change the title", "shorten the headline"): an edit request, not a request to
/// generate a set of titles. A count or a word for options ("来几个标题", "5 个标题",
/// "give me 5 headline ideas") makes it a title set again.
pub fn is_title_edit(text: &str) -> bool {
    static EDIT_ZH: OnceLock<Option<Regex>> = OnceLock::new();
    static EDIT_EN: OnceLock<Option<Regex>> = OnceLock::new();
    static SET_ZH: OnceLock<Option<Regex>> = OnceLock::new();
    static SET_EN: OnceLock<Option<Regex>> = OnceLock::new();
    // An edit verb before the title ("改标题", "把标题…", "修改一下标题") or after it
    // ("标题改短一点", "标题太长了，缩短").
    let zh = regex(&EDIT_ZH, TITLE_EDIT_ZH_PATTERN);
    let en = regex(&EDIT_EN, TITLE_EDIT_EN_PATTERN);
    let zh_set = regex(&SET_ZH, r"几个|一组|一些|多个|备选|选项|候选|[0-9０-９一二两三四五六七八九十]+\s*个(?:新的?)?(?:标题|题目)");
    let en_set = regex(
        &SET_EN,
        r"(?i)\b(?:ideas?|options?|alternatives?|candidates?|suggestions?|some|several|a few)\b|\b\d+\s+(?:new\s+|more\s+|different\s+)?(?:titles?|headlines?|headings?)\b",
    );
    let is = |r: Option<&Regex>| r.is_some_and(|r| r.is_match(text));
    let edit = (text.contains("标题") && is(zh)) || (may_hold(text, &["title", "headline", "heading"]) && is(en));
    edit && !is(zh_set) && !is(en_set)
}

/// The output type a text asks for, by a keyword table in priority order (a
/// critique of an article is a critique, a Douyin script is a script). A change to the
/// existing title ([`is_title_edit`]) is an edit, which generates nothing: no output type.
pub fn output_type(text: &str) -> Option<OutputType> {
    if is_title_edit(text) {
        return None;
    }
    const TABLE: &[(OutputType, &[&str])] = &[
        (OutputType::Critique, &["点评", "评价一下", "挑毛病", "批评", "审阅", "critique", "feedback on", "review my", "review this", "review the"]),
        (OutputType::Analysis, &["分析", "复盘", "analyze", "analyse", "analysis", "why did", "why does"]),
        (OutputType::StrategyNotes, &["策略", "方案", "规划", "选题", "strategy", "content plan", "content calendar", "plan for"]),
        (OutputType::VideoScript, &["脚本", "分镜", "口播", "video script", "script"]),
        (OutputType::TitleSet, &["标题", "titles", "headlines", "title ideas", "headline"]),
        (OutputType::Copy, &["文案", "写一篇", "写篇", "写一段", "写个", "帖子", "笔记", "推文", "软文", "copy", "caption", "write a", "write an", "write the", "draft a", "post"]),
    ];
    let lower = text.to_lowercase();
    TABLE.iter().find(|(_, words)| words.iter().any(|w| lower.contains(w))).map(|(kind, _)| *kind)
}

/// The platforms a text names, in the fixed platform order.
pub fn platforms(text: &str) -> Vec<Platform> {
    static X: OnceLock<Option<Regex>> = OnceLock::new();
    let lower = text.to_lowercase();
    let named = |words: &[&str]| words.iter().any(|w| lower.contains(w));
    let x = named(&["推特", "twitter", "tweet", "x thread", "x 帖"]) || regex(&X, r"(?:^|[^A-Za-z0-9_\-])X(?:$|[^A-Za-z0-9_\-])").is_some_and(|r| r.is_match(text));
    Platform::ALL
        .into_iter()
        .filter(|p| match p {
            Platform::Wechat => named(&["公众号", "微信", "wechat", "weixin"]),
            Platform::Zhihu => named(&["知乎", "zhihu"]),
            Platform::X => x,
            Platform::Douyin => named(&["抖音", "douyin"]),
            Platform::Xiaohongshu => named(&["小红书", "xiaohongshu", "rednote", "red note"]),
        })
        .collect()
}

/// The length a text asks for (the last one named).
pub fn length(text: &str) -> Option<Length> {
    static CELL: OnceLock<Option<Regex>> = OnceLock::new();
    // `\d` is any Unicode decimal digit: a text with no numeric character has none.
    if !text.chars().any(char::is_numeric) {
        return None;
    }
    let r = regex(&CELL, LENGTH_PATTERN)?;
    let captures = r.captures_iter(text).last()?;
    let value: u32 = captures.get(1)?.as_str().parse().ok()?;
    let unit = captures.get(2)?.as_str().to_lowercase();
    let (value, unit) = match unit.as_str() {
        "字" | "汉字" | "character" | "characters" | "char" | "chars" => (value, LengthUnit::Characters),
        "词" | "word" | "words" => (value, LengthUnit::Words),
        "分钟" | "minute" | "minutes" | "min" | "mins" => (value.saturating_mul(60), LengthUnit::Seconds),
        _ => (value, LengthUnit::Seconds),
    };
    (value > 0).then_some(Length { value, unit })
}

/// Characters that end a name when walking back from "品牌" or forward from a marker.
const NAME_STOPS: &str = "为给帮替的是和与跟对把在、，,。.：:；;！!？?「」“”\"'《》()（）[]【】 \t\n";

fn clean_name(name: &str) -> Option<String> {
    let name = name.trim().trim_matches(|c: char| NAME_STOPS.contains(c) || c.is_whitespace());
    let name = name.strip_prefix("我们的").or_else(|| name.strip_prefix("我们")).or_else(|| name.strip_prefix("our ")).unwrap_or(name).trim();
    let count = name.chars().count();
    (1..=40).contains(&count).then(|| name.to_owned())
}

/// The name just before `marker` (Chinese: "山茶社品牌"), walking back to a stop
/// character; or the name after a marker ("品牌：山茶社").
fn name_around(text: &str, marker: &str) -> Option<String> {
    let at = text.find(marker)?;
    let before: Vec<char> = text[..at].chars().collect();
    let start = before.iter().rposition(|c| NAME_STOPS.contains(*c)).map_or(0, |i| i + 1);
    let behind: String = before[start..].iter().collect();
    if let Some(name) = clean_name(&behind).filter(|n| n.chars().count() <= 12) {
        return Some(name);
    }
    let after = &text[at + marker.len()..];
    let after = after.trim_start_matches(|c: char| "：:是为叫 「“\"《".contains(c));
    let end = after.char_indices().find(|(_, c)| NAME_STOPS.contains(*c)).map_or(after.len(), |(i, _)| i);
    clean_name(&after[..end]).filter(|n| n.chars().count() <= 16)
}

/// An English name after a marker word ("brand Lumi", "product called Tea Duo").
fn english_after(text: &str, cell: &'static OnceLock<Option<Regex>>, pattern: &str) -> Option<String> {
    let r = regex(cell, pattern)?;
    let captures = r.captures(text)?;
    clean_name(captures.get(1)?.as_str())
}

/// The brand a text names: the project's brand profile by name, "X 品牌" / "品牌：X",
/// "brand X" / "X brand".
pub fn brand(text: &str, known: Option<&str>) -> Option<String> {
    static AFTER: OnceLock<Option<Regex>> = OnceLock::new();
    static BEFORE: OnceLock<Option<Regex>> = OnceLock::new();
    if let Some(known) = known.filter(|k| !k.trim().is_empty() && text.to_lowercase().contains(&k.to_lowercase())) {
        return Some(known.trim().to_owned());
    }
    if text.contains("品牌") {
        if let Some(name) = name_around(text, "品牌") {
            return Some(name);
        }
    }
    if !may_hold(text, &["brand"]) {
        return None;
    }
    english_after(text, &AFTER, BRAND_AFTER_PATTERN).or_else(|| english_after(text, &BEFORE, BRAND_BEFORE_PATTERN))
}

/// The product a text names: "产品：X", "新品X", "product X", "product called X".
pub fn product(text: &str) -> Option<String> {
    static EN: OnceLock<Option<Regex>> = OnceLock::new();
    for marker in ["产品", "新品", "单品"] {
        if let Some(at) = text.find(marker) {
            let after = text[at + marker.len()..].trim_start_matches(|c: char| "：:是为叫 「“\"《".contains(c));
            let end = after.char_indices().find(|(_, c)| NAME_STOPS.contains(*c)).map_or(after.len(), |(i, _)| i);
            if let Some(name) = clean_name(&after[..end]).filter(|n| n.chars().count() <= 16) {
                return Some(name);
            }
        }
    }
    if !may_hold(text, &["product"]) {
        return None;
    }
    english_after(text, &EN, PRODUCT_EN_PATTERN)
}

/// The topic a text names: "关于X的", "主题：X", "about X", "on the topic of X"; else,
/// for a request, its strongest jieba / term-frequency keywords that can name a subject
/// (nouns, not "慢慢" or "一段") and are not request or platform words.
pub fn topic(text: &str, is_request: bool) -> Option<String> {
    static ABOUT_ZH: OnceLock<Option<Regex>> = OnceLock::new();
    static ABOUT_EN: OnceLock<Option<Regex>> = OnceLock::new();
    let zh = if ["关于", "主题", "围绕", "介绍"].iter().any(|w| text.contains(w)) { regex(&ABOUT_ZH, ABOUT_ZH_PATTERN) } else { None };
    if let Some(name) = zh.and_then(|r| r.captures(text)).and_then(|c| c.get(1)).and_then(|m| clean_name(m.as_str())) {
        return Some(name);
    }
    let en = if may_hold(text, &["about", "topic", "covering", "introducing"]) { regex(&ABOUT_EN, ABOUT_EN_PATTERN) } else { None };
    if let Some(name) = en.and_then(|r| r.captures(text)).and_then(|c| c.get(1)).and_then(|m| clean_name(m.as_str())) {
        return Some(name);
    }
    if !is_request {
        return None;
    }
    const REQUEST_WORDS: &[&str] = &[
        "文案",
        "文章",
        "帖子",
        "笔记",
        "推文",
        "软文",
        "脚本",
        "分镜",
        "口播",
        "标题",
        "策略",
        "方案",
        "规划",
        "分析",
        "点评",
        "评价",
        "写",
        "一篇",
        "帮",
        "帮我",
        "生成",
        "公众号",
        "微信",
        "知乎",
        "抖音",
        "小红书",
        "推特",
        "视频",
        "write",
        "copy",
        "post",
        "caption",
        "script",
        "titles",
        "title",
        "headline",
        "headlines",
        "strategy",
        "analysis",
        "analyze",
        "critique",
        "review",
        "draft",
        "wechat",
        "zhihu",
        "douyin",
        "xiaohongshu",
        "twitter",
        "video",
        "please",
        "words",
        "characters",
        "seconds",
    ];
    let words: Vec<String> = crate::suggest::subject_keywords(text, 8)
        .into_iter()
        .map(|k| k.keyword)
        .filter(|k| {
            let lower = k.to_lowercase();
            !REQUEST_WORDS.iter().any(|w| lower == *w)
                && !crate::suggest::is_stop_word(k)
                && !lower.chars().all(|c| c.is_ascii_digit() || "几个一些来点".contains(c))
                && k.chars().count() > 1
        })
        .take(3)
        .collect();
    (!words.is_empty()).then(|| words.join(" "))
}

/// The intent after the person's `message`: unchanged for material; otherwise each
/// field the message names replaces the old one. A new request (an output type) with a
/// new subject replaces the topic even when only keywords name it.
pub fn update(current: &SessionIntent, message: &str, project: &ProjectHints<'_>) -> SessionIntent {
    if classify(message) == MessageKind::Material {
        return current.clone();
    }
    let mut next = current.clone();
    let kind = output_type(message);
    if let Some(kind) = kind {
        next.output_type = Some(kind);
    }
    let named = platforms(message);
    if !named.is_empty() {
        next.platforms = named;
    }
    if let Some(length) = length(message) {
        next.length = Some(length);
    }
    let brand = brand(message, project.brand_name);
    let product = product(message);
    if let Some(brand) = &brand {
        next.brand = Some(brand.clone());
    }
    if let Some(product) = &product {
        next.product = Some(product.clone());
    }
    // Keywords name a topic only for a request that names no brand or product (those
    // are the subject then), and never replace a subject the person named before
    // unless the message is a new request.
    let explicit = topic(message, false);
    let topic = match explicit {
        Some(topic) => Some(topic),
        None if kind.is_some() && brand.is_none() && product.is_none() && (current.topic.is_none() || kind != current.output_type) => topic(message, true),
        None => None,
    };
    if let Some(topic) = topic {
        next.topic = Some(topic);
    }
    next
}

/// The question to ask before generating, or `None` when nothing is missing or the
/// request does not generate (strategy, analysis, critique, or no request at all).
pub fn clarification(intent: &SessionIntent, project: &ProjectHints<'_>) -> Option<Clarification> {
    let kind = intent.output_type.filter(|k| k.generates())?;
    let mut missing = Vec::new();
    if !intent.has_subject() && !project.has_content {
        missing.push(Missing::Subject);
    }
    let platform_known = !intent.platforms.is_empty() || !project.platforms.is_empty();
    if matches!(kind, OutputType::Copy | OutputType::VideoScript) && !platform_known {
        missing.push(Missing::Platform);
        if intent.length.is_none() {
            missing.push(Missing::Length);
        }
    }
    if missing.is_empty() {
        return None;
    }
    let parts: Vec<&str> = missing
        .iter()
        .map(|m| match m {
            Missing::Subject => "what it is about (the brand, product or topic)",
            Missing::Platform => "which platform it is for",
            Missing::Length => "how long it should be",
        })
        .collect();
    Some(Clarification { missing, question: format!("Before writing {}, ask the person {}.", kind.label(), parts.join(", and ")) })
}

/// The intent as the model reads it (in the pinned layer), or "" when nothing is known.
pub fn render(intent: &SessionIntent, clarify: Option<&Clarification>) -> String {
    if intent.is_empty() && clarify.is_none() {
        return String::new();
    }
    let mut out = String::from("# Session intent (kept from the person's messages; the person can edit it)\n");
    let fields =
        [("brand", intent.brand.clone()), ("product", intent.product.clone()), ("topic", intent.topic.clone()), ("output", intent.output_type.map(|k| k.label().to_owned()))];
    for (name, value) in fields {
        if let Some(value) = value {
            out.push_str(&format!("{name}: {value}\n"));
        }
    }
    if !intent.platforms.is_empty() {
        out.push_str(&format!("platforms: {}\n", intent.platforms.iter().map(|p| p.as_str()).collect::<Vec<_>>().join(", ")));
    }
    if let Some(length) = intent.length {
        let unit = match length.unit {
            LengthUnit::Characters => "characters",
            LengthUnit::Words => "words",
            LengthUnit::Seconds => "seconds",
        };
        out.push_str(&format!("length: {} {unit}\n", length.value));
    }
    if let Some(clarify) = clarify {
        out.push_str(&format!("Clarify first: {} Use ask_user_question, then wait for the answer.\n", clarify.question));
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    /// Each pattern that a cheap check guards (see [`may_hold`]) never matches a text
    /// the check turns away, so the guard changes no answer: texts built of the patterns'
    /// own words (in any case), Chinese, digits of several scripts and punctuation.
    #[test]
    fn each_guard_is_necessary_for_its_pattern() {
        use proptest::prelude::*;
        type Guard = fn(&str) -> bool;
        let guarded: &[(&str, Guard)] = &[
            (TITLE_EDIT_ZH_PATTERN, |t| t.contains("标题")),
            (TITLE_EDIT_EN_PATTERN, |t| may_hold(t, &["title", "headline", "heading"])),
            (LENGTH_PATTERN, |t| t.chars().any(char::is_numeric)),
            (BRAND_AFTER_PATTERN, |t| may_hold(t, &["brand"])),
            (BRAND_BEFORE_PATTERN, |t| may_hold(t, &["brand"])),
            (PRODUCT_EN_PATTERN, |t| may_hold(t, &["product"])),
            (ABOUT_ZH_PATTERN, |t| ["关于", "主题", "围绕", "介绍"].iter().any(|w| t.contains(w))),
            (ABOUT_EN_PATTERN, |t| may_hold(t, &["about", "topic", "covering", "introducing"])),
        ];
        let compiled: Vec<(Regex, Guard)> = guarded.iter().map(|(p, g)| (Regex::new(p).unwrap(), *g)).collect();
        let pieces = prop::sample::select(vec![
            "标题",
            "标",
            "题",
            "改",
            "缩短",
            "关于",
            "主题",
            "围绕",
            "介绍",
            "春茶",
            "的",
            "，",
            "。",
            " ",
            "\n",
            ".",
            ":",
            "字",
            "秒",
            "分钟",
            "个",
            "Title",
            "TITLE",
            "titl",
            "headline",
            "HeadLine",
            "heading",
            "shorten",
            "is too",
            "brand",
            "Brand",
            "BRAN",
            "product",
            "Product",
            "prod",
            "about",
            "About",
            "abou",
            "topic:",
            "Topic",
            "covering",
            "introducing",
            "Acme",
            "X",
            "3",
            "300",
            "３",
            "٣",
            "words",
            "chars",
            "s",
            "min",
        ]);
        let texts = prop::collection::vec(pieces, 0..12).prop_map(|parts| parts.concat());
        proptest!(ProptestConfig::with_cases(2_000), |(text in texts)| {
            for (pattern, guard) in &compiled {
                prop_assert!(guard(&text) || !pattern.is_match(&text), "{} matches {:?}, which its guard turns away", pattern.as_str(), text);
            }
        });
    }

    fn hints() -> ProjectHints<'static> {
        ProjectHints { platforms: &[], brand_name: Some("山茶社"), has_content: false }
    }

    #[test]
    fn a_chinese_copy_request_fills_every_field() {
        let intent = update(&SessionIntent::default(), "帮我为山茶社品牌写一篇关于春茶上市的小红书文案，300字左右", &hints());
        assert_eq!(intent.brand.as_deref(), Some("山茶社"));
        assert_eq!(intent.topic.as_deref(), Some("春茶上市"));
        assert_eq!(intent.output_type, Some(OutputType::Copy));
        assert_eq!(intent.platforms, [Platform::Xiaohongshu]);
        assert_eq!(intent.length, Some(Length { value: 300, unit: LengthUnit::Characters }));
        assert_eq!(clarification(&intent, &hints()), None);
    }

    #[test]
    fn only_words_that_name_a_subject_make_a_topic() {
        // An adverb, a measure and an adjective name no subject.
        assert_eq!(topic("慢慢写一段很长的", true), None);
        assert_eq!(update(&SessionIntent::default(), "慢慢写一段很长的", &hints()).topic, None);
        // Nouns do, without the request's words.
        let tea = topic("帮我写小红书的咖啡探店文案", true).unwrap_or_default();
        assert!(tea.contains("咖啡"), "{tea}");
        assert!(!tea.contains("小红书") && !tea.contains("文案"), "{tea}");
    }

    #[test]
    fn english_requests_and_the_priority_of_output_types() {
        let intent = update(&SessionIntent::default(), "Write a 60 second Douyin video script about our spring tea launch for the brand Lumi", &ProjectHints::default());
        assert_eq!(intent.output_type, Some(OutputType::VideoScript));
        assert_eq!(intent.platforms, [Platform::Douyin]);
        assert_eq!(intent.length, Some(Length { value: 60, unit: LengthUnit::Seconds }));
        assert_eq!(intent.topic.as_deref(), Some("spring tea launch"));
        assert_eq!(intent.brand.as_deref(), Some("Lumi"));
        // A later message's length replaces the earlier one, however it is written.
        let longer = update(&intent, "Now write a detailed 600-word introduction", &ProjectHints::default());
        assert_eq!(longer.length, Some(Length { value: 600, unit: LengthUnit::Words }));
        assert_eq!(output_type("分析一下这篇文章为什么阅读量低"), Some(OutputType::Analysis));
        assert_eq!(output_type("给这篇文章起 5 个标题"), Some(OutputType::TitleSet));
        assert_eq!(output_type("帮我做一个小红书的内容策略"), Some(OutputType::StrategyNotes));
        assert_eq!(output_type("Please critique my intro"), Some(OutputType::Critique));
        assert_eq!(platforms("post it on X and 知乎"), [Platform::Zhihu, Platform::X]);
        assert_eq!(platforms("an X-ray of the market"), []);
        assert_eq!(length("两分钟口播，大约 2 分钟"), Some(Length { value: 120, unit: LengthUnit::Seconds }));
        // A compound adjective ("a 600-word introduction") names a length too.
        assert_eq!(length("Write a detailed 600-word introduction"), Some(Length { value: 600, unit: LengthUnit::Words }));
        assert_eq!(length("a 30-second video script"), Some(Length { value: 30, unit: LengthUnit::Seconds }));
        assert_eq!(product("新品：山茶花冷泡茶，主打清爽"), Some("山茶花冷泡茶".to_owned()));
    }

    #[test]
    fn a_link_or_a_paste_keeps_the_subject() {
        let intent = update(&SessionIntent::default(), "帮我写一篇关于春茶上市的公众号文章", &hints());
        assert_eq!(classify("https://example.com/tea-report"), MessageKind::Material);
        assert_eq!(classify("参考这个 https://example.com/tea-report"), MessageKind::Material);
        assert_eq!(classify("see this: https://example.com/a?b=c"), MessageKind::Material);
        assert_eq!(update(&intent, "参考这个 https://example.com/tea-report", &hints()), intent);
        let paste = "二零二六年春茶采摘报告。".repeat(80);
        assert_eq!(classify(&paste), MessageKind::Material);
        assert_eq!(update(&intent, &paste, &hints()), intent);
        // A link with a request is a task.
        assert_eq!(classify("把 https://example.com/a 改写成抖音脚本"), MessageKind::Task);
    }

    #[test]
    fn clarification_only_when_needed() {
        let none = ProjectHints::default();
        let copy = update(&SessionIntent::default(), "写一篇文案", &none);
        let asked = clarification(&copy, &none).unwrap();
        assert_eq!(asked.missing, [Missing::Subject, Missing::Platform, Missing::Length]);
        // The project's platforms and content answer the platform and the subject.
        let project = ProjectHints { platforms: &[Platform::Wechat], brand_name: None, has_content: true };
        assert_eq!(clarification(&copy, &project), None);
        // A platform named: no length asked (the platform's profile has its limits).
        let on_x = update(&copy, "for X, about the tea harvest", &none);
        assert_eq!(clarification(&on_x, &none), None);
        for request in ["分析一下我们上个月的数据", "Give me a content strategy for spring", "Please critique this", "帮我点评一下"] {
            let intent = update(&SessionIntent::default(), request, &none);
            assert!(intent.output_type.is_some_and(|k| !k.generates()), "{request}");
            assert_eq!(clarification(&intent, &none), None, "{request}");
        }
        // Titles need a subject, never a platform.
        let titles = update(&SessionIntent::default(), "来几个标题", &none);
        assert_eq!(clarification(&titles, &none).unwrap().missing, [Missing::Subject]);
    }

    #[test]
    fn an_edit_of_the_title_is_not_a_title_set() {
        // Chinese: a change to the title the work has.
        for edit in ["改标题", "把标题改短一点", "标题太长了，缩短一下", "修改一下标题", "帮我润色标题", "标题控制在 10 个字以内"] {
            assert!(is_title_edit(edit), "{edit}");
            assert_eq!(output_type(edit), None, "{edit}");
        }
        // English.
        for edit in ["change the title", "Shorten the headline", "Can you rewrite the title so it is punchier?", "the title is too long", "shorten the title to 10 words"] {
            assert!(is_title_edit(edit), "{edit}");
            assert_eq!(output_type(edit), None, "{edit}");
        }
        // Asking for titles to choose from is still a title set, in both languages.
        for set in [
            "来几个标题",
            "给这篇文章起 5 个标题",
            "给我一组标题",
            "换几个标题备选",
            "give me 5 headline ideas",
            "Suggest some titles",
            "write 3 new headlines",
            "title ideas for the spring launch",
        ] {
            assert!(!is_title_edit(set), "{set}");
            assert_eq!(output_type(set), Some(OutputType::TitleSet), "{set}");
        }
        // The session's intent: an edit keeps what the person is working on and asks
        // nothing; a title-set request still asks for its subject.
        let none = ProjectHints::default();
        let copy = update(&SessionIntent::default(), "帮我为山茶社品牌写一篇关于春茶上市的小红书文案", &hints());
        for edit in ["把标题改短一点", "change the title"] {
            let after = update(&copy, edit, &hints());
            assert_eq!(after, copy, "{edit}");
            let fresh = update(&SessionIntent::default(), edit, &none);
            assert_eq!(fresh.output_type, None, "{edit}");
            assert_eq!(fresh.topic, None, "{edit}");
            assert_eq!(clarification(&fresh, &none), None, "{edit}");
        }
        let titles = update(&copy, "来几个标题", &hints());
        assert_eq!(titles.output_type, Some(OutputType::TitleSet));
    }

    #[test]
    fn the_rendered_intent_names_every_field_and_the_question() {
        let intent = update(&SessionIntent::default(), "写一篇文案", &ProjectHints::default());
        let clarify = clarification(&intent, &ProjectHints::default());
        let text = render(&intent, clarify.as_ref());
        assert!(text.contains("output: copy") && text.contains("Clarify first: Before writing copy, ask the person what it is about"), "{text}");
        assert_eq!(render(&SessionIntent::default(), None), "");
    }
}
