//! The names a message gives: the brand, the product and the topic, by their
//! markers ("品牌", "产品", "关于", "brand", "about") or, for a request that names
//! none, by jieba's keywords of the message.

use std::sync::OnceLock;

use regex::Regex;

use super::patterns::{may_hold, regex, ABOUT_EN_PATTERN, ABOUT_ZH_PATTERN, BRAND_AFTER_PATTERN, BRAND_BEFORE_PATTERN, PRODUCT_EN_PATTERN};

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
