//! The keyword tables that say what a message asks for: the output type, the
//! platforms it names, and whether it is a task or only material (a link, a paste).

use std::sync::OnceLock;

use regex::Regex;

use super::patterns::{is_title_edit, regex, url_regex};
use super::{MessageKind, OutputType};
use crate::model::Platform;

/// A message longer than this with no request in its head or tail is pasted material.
const MATERIAL_CHARS: usize = 600;
/// How much of a long message's head and tail is read for a request.
const REQUEST_WINDOW_CHARS: usize = 200;

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
