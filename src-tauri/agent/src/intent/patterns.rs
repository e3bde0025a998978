//! The patterns a message is read with (a title edit, a length, a link) and the cheap
//! guards in front of them: a pattern that needs a word is only run on a text that holds
//! it, which keeps reading a long Chinese message fast and changes no answer.

use std::sync::OnceLock;

use regex::Regex;

use super::{Length, LengthUnit};

const URL: &str = r"(?i)\b(?:https?://|www\.)[^\s<>\u3000，。]+";

pub(super) fn regex(cell: &'static OnceLock<Option<Regex>>, pattern: &str) -> Option<&'static Regex> {
    cell.get_or_init(|| Regex::new(pattern).ok()).as_ref()
}

/// The patterns that [`may_hold`] (or a plain `contains`) guards: their matches all
/// hold the guarding words (see the test `each_guard_is_necessary_for_its_pattern`).
pub(super) const TITLE_EDIT_ZH_PATTERN: &str = r"(?:改|修改|换|缩短|精简|润色|优化|调整|删掉|去掉|重写)[^，。！？,.!?]{0,6}标题|标题[^，。！？,.!?]{0,6}(?:改|修改|换|控制|缩短|精简|润色|优化|调整|删|去掉|重写|太长|太短|短一|长一|简洁)";
pub(super) const TITLE_EDIT_EN_PATTERN: &str = r"(?i)\b(?:change|edit|shorten|lengthen|rewrite|reword|rephrase|rename|tweak|fix|improve|polish|adjust|trim|update|cut|simplify)\b[^.!?\n]{0,20}\b(?:title|headline|heading)s?\b|\b(?:title|headline|heading)\b[^.!?\n]{0,12}\b(?:is too|shorter|longer|punchier)\b";
pub(super) const LENGTH_PATTERN: &str = r"(?i)(\d{1,6})\s*(?:个|-)?\s*(字|词|汉字|words?\b|characters?\b|chars?\b|秒|seconds?\b|secs?\b|s\b|分钟|minutes?\b|mins?\b)";
pub(super) const BRAND_AFTER_PATTERN: &str = r"(?i)\bbrand(?:\s+is|\s+called|\s+named|:)?\s+([A-Z0-9][\w&'\-]*(?:\s+[A-Z0-9][\w&'\-]*)*)";
pub(super) const BRAND_BEFORE_PATTERN: &str = r"\b([A-Z][\w&'\-]*(?:\s+[A-Z][\w&'\-]*)*)\s+brand\b";
pub(super) const PRODUCT_EN_PATTERN: &str = r#"(?i)\bproduct(?:\s+is|\s+called|\s+named|:)?\s+["“]?([A-Za-z0-9][\w'\-]*(?:\s+[A-Z0-9][\w'\-]*)*)"#;
pub(super) const ABOUT_ZH_PATTERN: &str = r"(?:关于|主题[是为：:]?|围绕|介绍)\s*「?“?([^，。,.!！?？」”的]{1,30}?)(?:的|」|”|，|。|,|\.|!|！|\?|？|$)";
pub(super) const ABOUT_EN_PATTERN: &str = r"(?i)\b(?:about|on the topic of|topic:|covering|introducing)\s+([^.,;!?\n]{2,60}?)(?:\s+(?:for|on|in|with|to|and)\s|[.,;!?\n]|$)";

/// True when `text` holds one of `words` (ASCII, lowercase) in any case. The patterns
/// below that need such a word ask this first: it is a necessary condition of their
/// match (none of these words has a letter with a non-ASCII case variant, such as k or s),
/// and far cheaper than a Unicode-aware pattern on Chinese text, which runs on the
/// regex crate's slower engines. The answers are the same.
pub(super) fn may_hold(text: &str, words: &[&str]) -> bool {
    let lower = text.to_lowercase();
    words.iter().any(|w| lower.contains(w))
}

pub(super) fn url_regex() -> Option<&'static Regex> {
    static CELL: OnceLock<Option<Regex>> = OnceLock::new();
    regex(&CELL, URL)
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
