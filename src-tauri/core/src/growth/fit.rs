//! The platform-fit report: for one platform draft, a score from 0 to 100 over the
//! points its profiles define (title length, the opening hook, paragraph length,
//! headings, topic tags, a call to action, the link policy, the draft profile's
//! limits), each point passed or not, with why. Pure: the caller passes the draft and
//! the profiles. Computed before and after an optimization, it shows what changed in
//! how the draft fits the platform's written rules — not how it will perform.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::model::{DraftContent, Platform};
use crate::pipeline;
use crate::profiles::{DraftProfile, GrowthProfile, LinkPolicy, Severity};

/// What every report says about itself.
pub const DISCLAIMER: &str =
    "This score measures how the draft fits the platform's written rules (lengths, opening, structure, tags, call to action, links, limits). It does not predict reach or growth.";

/// One point of the report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
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
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
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
        points.push(FitPoint {
            check: "title_length".into(),
            passed: (min..=max).contains(&n),
            weight: 2,
            measured: format!("title {n} characters; the rule is {min}–{max}"),
            rule: first_rule(&growth.title_rules, "Title length"),
        });
    }
    let body = body_text(content);
    if let Some(max) = rules.hook_chars {
        let n = first_sentence(&body);
        points.push(FitPoint {
            check: "hook".into(),
            passed: n > 0 && n <= max,
            weight: 2,
            measured: format!("the first sentence is {n} characters; the hook should land within {max}"),
            rule: first_rule(&growth.opening_rules, "A short opening hook"),
        });
    }
    let paras = paragraphs(content);
    if let Some(max) = rules.max_paragraph_chars {
        let longest = paras.iter().map(|p| chars(p)).max().unwrap_or(0);
        points.push(FitPoint {
            check: "paragraphs".into(),
            passed: longest <= max,
            weight: 1,
            measured: format!("the longest paragraph is {longest} characters; at most {max}"),
            rule: first_rule(&growth.structure_rules, "Short paragraphs"),
        });
    }
    if let Some(every) = rules.heading_every_chars {
        let length = chars(&body);
        let needed = (length / every.max(1)) as usize;
        let have = headings(content);
        points.push(FitPoint {
            check: "headings".into(),
            passed: have >= needed,
            weight: 1,
            measured: format!("{have} headings for {length} characters; about one every {every} wanted ({needed})"),
            rule: first_rule(&growth.structure_rules, "Headings in long texts"),
        });
    }
    if let Some([min, max]) = rules.tags {
        let n = u32::try_from(tags(content)).unwrap_or(u32::MAX);
        points.push(FitPoint {
            check: "tags".into(),
            passed: (min..=max).contains(&n),
            weight: 1,
            measured: format!("{n} topic tags; the rule is {min}–{max}"),
            rule: first_rule(&growth.tag_rules, "Topic tags"),
        });
    }
    if !rules.cta_markers.is_empty() {
        // The last fifth of the body (at least its last 200 characters).
        let all: Vec<char> = body.chars().collect();
        let tail_len = (all.len() / 5).max(200).min(all.len());
        let tail: String = all[all.len() - tail_len..].iter().collect::<String>().to_lowercase();
        let found = rules.cta_markers.iter().find(|m| tail.contains(&m.to_lowercase()));
        points.push(FitPoint {
            check: "cta".into(),
            passed: found.is_some(),
            weight: 1,
            measured: match found {
                Some(marker) => format!("a call to action near the end (“{marker}”)"),
                None => "no call to action near the end".to_owned(),
            },
            rule: first_rule(&growth.cta_rules, "A call to action at the end"),
        });
    }
    let n_links = links(content);
    let (passed, measured) = match rules.links {
        LinkPolicy::Allowed => (true, format!("{n_links} links; links are fine here")),
        LinkPolicy::None => (n_links == 0, format!("{n_links} links; this platform takes none in the body")),
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
            (inline == 0, format!("{inline} links in the text outside a reference list"))
        }
    };
    points.push(FitPoint { check: "links".into(), passed, weight: 1, measured, rule: "The platform's link policy".to_owned() });
    let blocking = pipeline::check_draft(draft, title, content).into_iter().filter(|f| f.severity == Severity::Block).collect::<Vec<_>>();
    points.push(FitPoint {
        check: "limits".into(),
        passed: blocking.is_empty(),
        weight: 3,
        measured: if blocking.is_empty() { "within every limit".to_owned() } else { blocking.iter().map(|f| f.message.clone()).collect::<Vec<_>>().join("; ") },
        rule: format!("The limits of {}", draft.id),
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
