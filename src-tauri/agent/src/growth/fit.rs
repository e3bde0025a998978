//! The platform-fit report: for one platform draft, a score from 0 to 100 over the
//! points its profiles define (title length, the opening hook, paragraph length,
//! headings, topic tags, a call to action, the link policy, the draft profile's
//! limits), each point passed or not, with why. Pure: the caller passes the draft and
//! the profiles. Computed before and after an optimization, it shows what changed in
//! how the draft fits the platform's written rules — not how it will perform.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::model::{DraftContent, Platform};
use crate::pipeline::{self, Finding};
use crate::profiles::{DraftProfile, GrowthProfile, LinkPolicy, Severity};

/// What every report says about itself.
pub const DISCLAIMER: &str =
    "This score measures how the draft fits the platform's written rules (lengths, opening, structure, tags, call to action, links, limits). It does not predict reach or growth.";

/// One point of the report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FitPoint {
    /// Stable: `title_length`, `hook`, `paragraphs`, `headings`, `tags`, `cta`, `links`, `limits`.
    pub check: String,
    pub passed: bool,
    /// How much the point weighs in the score.
    pub weight: u32,
    /// What was measured, for the person: "title 12 characters; the rule is 14–26".
    pub measured: String,
    /// The rule, in the profile's words where it has them.
    pub rule: String,
    /// The stable id of `measured`'s wording (`title_length`, `cta.missing`,
    /// `links.footnotes`, `limits.over`, ...) and the values it names, so the UI can
    /// say it in the person's language; `measured` is the English. Absent in reports
    /// recorded before wordings existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<String, String>,
    /// For `limits`: the blocking findings `measured` lists, each with its own wording.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<Finding>,
}

impl FitPoint {
    fn new(check: &str, passed: bool, weight: u32, measured: String, rule: String, message_id: &str, params: &[(&str, String)]) -> FitPoint {
        FitPoint {
            check: check.to_owned(),
            passed,
            weight,
            measured,
            rule,
            message_id: Some(message_id.to_owned()),
            params: params.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect(),
            findings: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FitReport {
    pub platform: Platform,
    /// The growth and draft profile versions used.
    pub profile_ids: Vec<String>,
    /// 0–100: the weighted share of points passed.
    pub score: u32,
    pub points: Vec<FitPoint>,
    pub disclaimer: String,
}

fn chars(text: &str) -> u32 {
    u32::try_from(text.chars().count()).unwrap_or(u32::MAX)
}

/// The draft's readable body: visible text of HTML, plain text of Markdown, the posts
/// of a thread one per paragraph, a card's body.
fn body_text(content: &DraftContent) -> String {
    match content {
        DraftContent::Html { html, .. } => pipeline::html_visible_text(html),
        DraftContent::Markdown { markdown } => pipeline::plain_text(markdown).blocks.join("\n\n"),
        DraftContent::Thread { posts } => posts.iter().map(|p| p.text.as_str()).collect::<Vec<_>>().join("\n\n"),
        DraftContent::Card { body, .. } => body.clone(),
    }
}

/// Paragraphs of the body (blank-line or line separated, trimmed, non-empty).
fn paragraphs(content: &DraftContent) -> Vec<String> {
    let text = match content {
        DraftContent::Html { html, .. } => html.replace("</p>", "\n").replace("<br/>", "\n").replace("<br>", "\n"),
        _ => String::new(),
    };
    let text = match content {
        DraftContent::Html { .. } => pipeline::html_visible_text(&text),
        DraftContent::Markdown { markdown } => pipeline::plain_text(markdown).blocks.join("\n"),
        other => body_text(other),
    };
    text.lines().map(str::trim).filter(|l| !l.is_empty()).map(str::to_owned).collect()
}

fn headings(content: &DraftContent) -> usize {
    match content {
        DraftContent::Html { html, .. } => ["<h1", "<h2", "<h3", "<h4"].iter().map(|h| html.matches(h).count()).sum(),
        DraftContent::Markdown { markdown } => markdown.lines().filter(|l| l.trim_start().starts_with('#') && l.trim_start().trim_start_matches('#').starts_with(' ')).count(),
        _ => 0,
    }
}

fn tags(content: &DraftContent) -> usize {
    match content {
        DraftContent::Card { tags, .. } => tags.len(),
        DraftContent::Thread { posts } => posts.iter().map(|p| p.text.split_whitespace().filter(|w| w.starts_with('#') && w.chars().count() > 1).count()).sum(),
        DraftContent::Html { html, .. } => pipeline::html_visible_text(html).split_whitespace().filter(|w| w.starts_with('#') && w.chars().count() > 1).count(),
        DraftContent::Markdown { markdown } => markdown.split_whitespace().filter(|w| w.starts_with('#') && w.chars().count() > 1 && !w.trim_start_matches('#').is_empty()).count(),
    }
}

fn links(content: &DraftContent) -> usize {
    let raw = match content {
        DraftContent::Html { html, .. } => html.clone(),
        DraftContent::Markdown { markdown } => markdown.clone(),
        other => body_text(other),
    };
    raw.matches("http://").count() + raw.matches("https://").count()
}

/// The length of the first sentence of the body, in characters.
fn first_sentence(body: &str) -> u32 {
    let trimmed = body.trim_start();
    let end = trimmed.find(['。', '！', '？', '!', '?', '\n']).map(|i| i + trimmed[i..].chars().next().map_or(0, char::len_utf8)).unwrap_or(trimmed.len());
    // "." ends a sentence only before a space (not in 3.5 or a URL).
    let dot = trimmed.match_indices(". ").next().map(|(i, _)| i + 1);
    let end = dot.map_or(end, |d| d.min(end));
    chars(&trimmed[..end])
}

/// The report of one draft (`title` and `content`) against its growth and draft
/// profiles.
pub fn report(growth: &GrowthProfile, draft: &DraftProfile, title: &str, content: &DraftContent) -> FitReport {
    let rules = &growth.fit;
    let mut points = Vec::new();
    let first_rule = |rules: &[String], fallback: &str| rules.first().cloned().unwrap_or_else(|| fallback.to_owned());
    if let Some([min, max]) = rules.title_chars {
        let n = chars(title.trim());
        points.push(FitPoint::new(
            "title_length",
            (min..=max).contains(&n),
            2,
            format!("title {n} characters; the rule is {min}–{max}"),
            first_rule(&growth.title_rules, "Title length"),
            "title_length",
            &[("n", n.to_string()), ("min", min.to_string()), ("max", max.to_string())],
        ));
    }
    let body = body_text(content);
    if let Some(max) = rules.hook_chars {
        let n = first_sentence(&body);
        points.push(FitPoint::new(
            "hook",
            n > 0 && n <= max,
            2,
            format!("the first sentence is {n} characters; the hook should land within {max}"),
            first_rule(&growth.opening_rules, "A short opening hook"),
            "hook",
            &[("n", n.to_string()), ("max", max.to_string())],
        ));
    }
    let paras = paragraphs(content);
    if let Some(max) = rules.max_paragraph_chars {
        let longest = paras.iter().map(|p| chars(p)).max().unwrap_or(0);
        points.push(FitPoint::new(
            "paragraphs",
            longest <= max,
            1,
            format!("the longest paragraph is {longest} characters; at most {max}"),
            first_rule(&growth.structure_rules, "Short paragraphs"),
            "paragraphs",
            &[("n", longest.to_string()), ("max", max.to_string())],
        ));
    }
    if let Some(every) = rules.heading_every_chars {
        let length = chars(&body);
        let needed = (length / every.max(1)) as usize;
        let have = headings(content);
        points.push(FitPoint::new(
            "headings",
            have >= needed,
            1,
            format!("{have} headings for {length} characters; about one every {every} wanted ({needed})"),
            first_rule(&growth.structure_rules, "Headings in long texts"),
            "headings",
            &[("n", have.to_string()), ("length", length.to_string()), ("every", every.to_string()), ("needed", needed.to_string())],
        ));
    }
    if let Some([min, max]) = rules.tags {
        let n = u32::try_from(tags(content)).unwrap_or(u32::MAX);
        points.push(FitPoint::new(
            "tags",
            (min..=max).contains(&n),
            1,
            format!("{n} topic tags; the rule is {min}–{max}"),
            first_rule(&growth.tag_rules, "Topic tags"),
            "tags",
            &[("n", n.to_string()), ("min", min.to_string()), ("max", max.to_string())],
        ));
    }
    if !rules.cta_markers.is_empty() {
        // The last fifth of the body (at least its last 200 characters).
        let all: Vec<char> = body.chars().collect();
        let tail_len = (all.len() / 5).max(200).min(all.len());
        let tail: String = all[all.len() - tail_len..].iter().collect::<String>().to_lowercase();
        let found = rules.cta_markers.iter().find(|m| tail.contains(&m.to_lowercase()));
        let rule = first_rule(&growth.cta_rules, "A call to action at the end");
        points.push(match found {
            Some(marker) => FitPoint::new("cta", true, 1, format!("a call to action near the end (“{marker}”)"), rule, "cta.found", &[("marker", marker.clone())]),
            None => FitPoint::new("cta", false, 1, "no call to action near the end".to_owned(), rule, "cta.missing", &[]),
        });
    }
    let n_links = links(content);
    let (passed, measured, wording, n) = match rules.links {
        LinkPolicy::Allowed => (true, format!("{n_links} links; links are fine here"), "links.allowed", n_links),
        LinkPolicy::None => (n_links == 0, format!("{n_links} links; this platform takes none in the body"), "links.none", n_links),
        LinkPolicy::Footnotes => {
            // Links only in a reference list: after the last heading-like "参考"/"References" line, or none at all.
            let raw = match content {
                DraftContent::Html { html, .. } => pipeline::html_visible_text(html),
                DraftContent::Markdown { markdown } => markdown.clone(),
                other => body_text(other),
            };
            let cut = ["参考", "References", "Sources", "引用"].iter().filter_map(|h| raw.rfind(h)).max();
            let before = cut.map_or(raw.as_str(), |c| &raw[..c]);
            let inline = before.matches("http://").count() + before.matches("https://").count();
            (inline == 0, format!("{inline} links in the text outside a reference list"), "links.footnotes", inline)
        }
    };
    points.push(FitPoint::new("links", passed, 1, measured, "The platform's link policy".to_owned(), wording, &[("n", n.to_string())]));
    let blocking = pipeline::check_draft(draft, title, content).into_iter().filter(|f| f.severity == Severity::Block).collect::<Vec<_>>();
    let rule = format!("The limits of {}", draft.id);
    let profile = [("profile", draft.id.clone())];
    points.push(if blocking.is_empty() {
        FitPoint::new("limits", true, 3, "within every limit".to_owned(), rule, "limits.ok", &profile)
    } else {
        let measured = blocking.iter().map(|f| f.message.clone()).collect::<Vec<_>>().join("; ");
        FitPoint { findings: blocking, ..FitPoint::new("limits", false, 3, measured, rule, "limits.over", &profile) }
    });
    let total: u32 = points.iter().map(|p| p.weight).sum();
    let passed: u32 = points.iter().filter(|p| p.passed).map(|p| p.weight).sum();
    let score = (passed * 100 + total / 2).checked_div(total).unwrap_or(100);
    FitReport { platform: growth.platform, profile_ids: vec![growth.id.clone(), draft.id.clone()], score, points, disclaimer: DISCLAIMER.to_owned() }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::model::Post;
    use crate::profiles::ProfileSet;

    fn set() -> ProfileSet {
        ProfileSet::builtin().unwrap()
    }

    /// The UI words `measured` from `message_id` and `params` with its `fit.measured.*`
    /// templates (ui/src/shared/i18n/en.ts; zh.ts must have the same ids, which its type
    /// enforces). Filled with each point's values, the English template must give
    /// exactly the English `measured`, for every wording the report makes.
    #[test]
    fn every_point_is_worded_as_the_ui_words_it() {
        let template = |id: &str| crate::pipeline::ui_wording::en().get(&format!("fit.measured.{id}")).cloned();
        let set = set();
        let mut seen = std::collections::BTreeSet::new();
        let long = "这是一段正文，没有小标题。".repeat(200);
        for platform in Platform::ALL {
            let (growth, draft) = (&set.growth[&platform], &set.drafts[&platform]);
            let contents = [
                DraftContent::Html { html: format!("<p>开头一句话。</p><p>{long}</p><p>见 https://example.com 。欢迎关注。</p>"), digest: "d".into() },
                DraftContent::Html { html: "<p>开头。</p><h2>一</h2><p>短。欢迎关注。</p><p>参考</p><p>https://example.com</p>".into(), digest: "d".into() },
                DraftContent::Markdown { markdown: format!("开头一句。\n\n{long}\n\nhttps://example.com #标签 欢迎留言") },
                DraftContent::Markdown { markdown: "## 小标题\n\n短短的开头。\n\n你怎么看？欢迎评论。".into() },
                DraftContent::Thread {
                    posts: vec![Post { text: "长".repeat(400), weighted_length: 0 }, Post { text: "Follow for more https://example.com #tag".into(), weighted_length: 0 }],
                },
                DraftContent::Card { body: "午休放松法。\n\n一、闭眼。\n\n你用哪一条？欢迎收藏。".into(), tags: vec!["午休".into(), "放松".into()] },
                DraftContent::Card { body: long.clone(), tags: vec![] },
            ];
            for content in &contents {
                for title in ["", "午休", "三个月把周报写短一半的方法", &"很长的标题".repeat(30)] {
                    for p in report(growth, draft, title, content).points {
                        let id = p.message_id.clone().unwrap_or_else(|| panic!("{} has no wording", p.check));
                        seen.insert(id.clone());
                        if id == "limits.over" {
                            assert!(!p.findings.is_empty(), "{p:?}");
                            p.findings.iter().for_each(crate::pipeline::ui_wording::assert_worded);
                            assert_eq!(p.measured, p.findings.iter().map(|f| f.message.as_str()).collect::<Vec<_>>().join("; "));
                            continue;
                        }
                        let text = template(&id).unwrap_or_else(|| panic!("no fit.measured.{id} in en.ts"));
                        assert_eq!(crate::pipeline::ui_wording::fill(&text, &p.params), p.measured, "{platform:?} {id}");
                    }
                }
            }
        }
        let all =
            ["title_length", "hook", "paragraphs", "headings", "tags", "cta.found", "cta.missing", "links.allowed", "links.none", "links.footnotes", "limits.ok", "limits.over"];
        assert_eq!(seen, all.iter().map(|s| (*s).to_owned()).collect(), "every wording is exercised");
    }

    fn point<'a>(report: &'a FitReport, check: &str) -> &'a FitPoint {
        report.points.iter().find(|p| p.check == check).unwrap_or_else(|| panic!("no {check} point in {report:?}"))
    }

    #[test]
    fn every_builtin_growth_profile_has_fit_rules() {
        let set = set();
        for platform in Platform::ALL {
            let growth = &set.growth[&platform];
            assert!(growth.fit.hook_chars.is_some(), "{}", growth.id);
            assert!(!growth.fit.cta_markers.is_empty(), "{}", growth.id);
        }
    }

    #[test]
    fn a_card_that_follows_the_rules_scores_full_and_one_that_does_not_loses_points() {
        let set = set();
        let platform = Platform::Xiaohongshu;
        let (growth, draft) = (&set.growth[&platform], &set.drafts[&platform]);
        let good = DraftContent::Card {
            body: "上班族的三条午休放松法。\n\n一、闭眼五分钟。\n\n二、走到窗边。\n\n你最常用哪一条？欢迎收藏。".into(),
            tags: vec!["午休".into(), "放松".into()],
        };
        let report = report(growth, draft, "午休放松的三个小方法", &good);
        assert_eq!(report.score, 100, "{report:#?}");
        assert!(report.disclaimer.contains("does not predict"));

        let bad = DraftContent::Card { body: format!("{}https://example.com", "很长的开头没有句号".repeat(20)), tags: vec![] };
        let report = super::report(growth, draft, "午休", &bad);
        assert!(!point(&report, "title_length").passed);
        assert!(!point(&report, "hook").passed);
        assert!(!point(&report, "tags").passed);
        assert!(!point(&report, "cta").passed);
        assert!(!point(&report, "links").passed);
        assert!(point(&report, "title_length").measured.contains("2 characters"));
        assert!(report.score < 40, "{}", report.score);
    }

    #[test]
    fn wechat_links_belong_in_a_reference_list_and_long_texts_need_headings() {
        let set = set();
        let platform = Platform::Wechat;
        let (growth, draft) = (&set.growth[&platform], &set.drafts[&platform]);
        let long: String = "这是一段正文。".repeat(300);
        let inline = DraftContent::Html { html: format!("<p>开头一句话。</p><p>{long}</p><p>见 https://example.com 。欢迎关注。</p>"), digest: "d".into() };
        let report1 = report(growth, draft, "三个月把周报写短一半的方法", &inline);
        assert!(!point(&report1, "links").passed);
        assert!(!point(&report1, "headings").passed);
        assert!(!point(&report1, "paragraphs").passed);
        let fixed = DraftContent::Html {
            html: "<p>开头一句话。</p><h2>一</h2><p>短段落。</p><h2>二</h2><p>短段落。欢迎关注。</p><p>参考</p><p>[1] https://example.com</p>".into(),
            digest: "d".into(),
        };
        let report2 = report(growth, draft, "三个月把周报写短一半的方法", &fixed);
        assert!(point(&report2, "links").passed, "{report2:#?}");
        assert!(point(&report2, "headings").passed);
        assert!(report2.score > report1.score);
    }

    #[test]
    fn an_x_thread_is_scored_on_its_first_post_tags_and_limits() {
        let set = set();
        let platform = Platform::X;
        let (growth, draft) = (&set.growth[&platform], &set.drafts[&platform]);
        let thread = DraftContent::Thread {
            posts: vec![
                Post { text: "What I learned shipping a desktop app in 6 posts:".into(), weighted_length: 0 },
                Post { text: "Read the full article: https://example.com".into(), weighted_length: 0 },
            ],
        };
        let report = report(growth, draft, "", &thread);
        assert!(report.points.iter().all(|p| p.check != "title_length"), "X has no title rule");
        assert!(point(&report, "hook").passed);
        assert!(point(&report, "cta").passed);
        assert!(point(&report, "limits").passed);
        let over = DraftContent::Thread { posts: vec![Post { text: "长".repeat(400), weighted_length: 0 }] };
        assert!(!point(&super::report(growth, draft, "", &over), "limits").passed);
    }
}
