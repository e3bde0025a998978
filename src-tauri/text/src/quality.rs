//! Checks that return structured findings: brand banned words, advertising-law absolute
//! terms (with an allow-list), growth promises, CTA presence and position, personal data,
//! and the AI-content declaration reminder. Pure: the caller passes the text, the brand
//! profile and the risk lists; platform limits come from the compilers' findings.

use std::sync::OnceLock;

use crate::pipeline::Finding;
use crate::profiles::{ContextAllow, RiskList, Severity};
use inkstone_model::{Anchor, BrandProfile, Platform};

/// What the checks read.
pub struct CheckInput<'a> {
    pub title: &'a str,
    pub source: &'a str,
    pub brand: Option<&'a BrandProfile>,
    pub platforms: &'a [Platform],
    pub ad_law: Option<&'a RiskList>,
    pub growth_promise: Option<&'a RiskList>,
}

fn utf16(source: &str, byte: usize) -> u32 {
    crate::pipeline::utf16_offset(source, byte)
}

/// Byte ranges of `term` in `text`, case-insensitive for ASCII letters.
fn occurrences(text: &str, term: &str) -> Vec<(usize, usize)> {
    if term.is_empty() {
        return Vec::new();
    }
    if term.is_ascii() {
        let lower = text.to_ascii_lowercase();
        let term = term.to_ascii_lowercase();
        return lower.match_indices(&term).map(|(i, m)| (i, i + m.len())).collect();
    }
    text.match_indices(term).map(|(i, m)| (i, i + m.len())).collect()
}

/// Per term, what [`occurrences`] finds of it in `text`, in one pass over `text` for all
/// of them: a word check runs tens of terms over an article, and searching for each
/// term separately read the article once per term. aho-corasick finds every match of
/// every term; keeping, per term, each match that starts at or after the end of the last
/// one kept gives `match_indices`' leftmost non-overlapping matches. ASCII terms match
/// ASCII letters of either case (as `occurrences` lowercases both sides), others exactly.
fn occurrences_of_all(text: &str, terms: &[String]) -> Vec<Vec<(usize, usize)>> {
    let mut found = vec![Vec::new(); terms.len()];
    for ascii in [true, false] {
        let ids: Vec<usize> = (0..terms.len()).filter(|i| !terms[*i].is_empty() && terms[*i].is_ascii() == ascii).collect();
        if ids.is_empty() {
            continue;
        }
        let Some(automaton) = automaton(ascii, ids.iter().map(|i| terms[*i].as_str()).collect()) else {
            // Too large to build (not with word lists of this size): one term at a time.
            for i in ids {
                found[i] = occurrences(text, &terms[i]);
            }
            continue;
        };
        for hit in automaton.find_overlapping_iter(text) {
            let kept = &mut found[ids[hit.pattern().as_usize()]];
            if kept.last().is_none_or(|(_, end)| *end <= hit.start()) {
                kept.push((hit.start(), hit.end()));
            }
        }
    }
    found
}

/// The automaton of `terms` (ASCII letters of either case when `ascii`), built once per
/// word list: building one costs more than searching an article with it, and the checks
/// run the same few lists (the risk lists, a brand's banned words) over and over. The
/// most recent lists are kept.
fn automaton(ascii: bool, terms: Vec<&str>) -> Option<std::sync::Arc<aho_corasick::AhoCorasick>> {
    type Built = (bool, Vec<String>, std::sync::Arc<aho_corasick::AhoCorasick>);
    const KEPT: usize = 16;
    static BUILT: std::sync::Mutex<Vec<Built>> = std::sync::Mutex::new(Vec::new());
    let mut built = BUILT.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((_, _, automaton)) = built.iter().find(|(a, t, _)| *a == ascii && t.iter().map(String::as_str).eq(terms.iter().copied())) {
        return Some(automaton.clone());
    }
    let automaton = std::sync::Arc::new(aho_corasick::AhoCorasick::builder().ascii_case_insensitive(ascii).build(&terms).ok()?);
    if built.len() == KEPT {
        built.remove(0);
    }
    built.push((ascii, terms.into_iter().map(str::to_owned).collect(), automaton.clone()));
    Some(automaton)
}

/// True when the match at `start..end` lies inside an occurrence of an allowed word.
fn allowed(text: &str, start: usize, end: usize, allow: &[String]) -> bool {
    allow.iter().any(|word| occurrences(text, word).iter().any(|(s, e)| *s <= start && end <= *e))
}

/// True when `c` ends a clause or starts a line or list item, so a term after it opens
/// a sentence ("原因有三：第一，…", "- 第一，…", a masked HTML tag).
fn opens_clause(c: char) -> bool {
    c.is_whitespace() || "。！？；：，、!?;:,（(「『“\"‘'-*+>#.)）".contains(c)
}

/// True when the match at `start..end` is an ordinary word by its context (a rule of
/// the list's `allow_context` for this term).
fn allowed_by_context(text: &str, start: usize, end: usize, rules: &[ContextAllow]) -> bool {
    let before = &text[..start];
    let after = &text[end..];
    rules.iter().filter(|rule| text[start..end].eq_ignore_ascii_case(&rule.term)).any(|rule| {
        if rule.not_preceded_by.iter().any(|scope| !scope.is_empty() && before.ends_with(scope.as_str())) {
            return false;
        }
        let opens = before.chars().next_back().is_none_or(opens_clause);
        rule.followed_by.iter().any(|next| !next.is_empty() && after.starts_with(next.as_str()))
            || (opens && rule.opening_followed_by.iter().any(|next| !next.is_empty() && after.starts_with(next.as_str())))
    })
}

/// How a word check words its findings: the English message for a term, the value
/// its wording names besides the term (`brand` or `list`), and the suggestion (with its
/// wording id when it is the built-in one).
struct Wording<'a> {
    message: &'a dyn Fn(&str) -> String,
    named: (&'a str, &'a str),
    suggestion: &'a str,
    suggestion_id: Option<&'a str>,
}

impl Wording<'_> {
    fn finding(&self, check: &str, severity: Severity, term: &str) -> Finding {
        let finding = Finding::new(check, severity, None, (self.message)(term)).worded(check, &[("term", term), self.named]);
        match self.suggestion_id {
            Some(id) => finding.suggest_worded(id, self.suggestion),
            None => finding.suggest(self.suggestion),
        }
    }
}

/// The suggestion id of a risk list's suggestion: only the built-in lists' wording is
/// translated (an override may say anything).
fn list_suggestion_id<'a>(list: &RiskList, id: &'a str) -> Option<&'a str> {
    (!list.id.contains('+')).then_some(id)
}

fn word_findings(check: &str, severity: Severity, input: &CheckInput<'_>, terms: &[String], allow: (&[String], &[ContextAllow]), wording: &Wording<'_>) -> Vec<Finding> {
    let (allow, context) = allow;
    let allowed = |text: &str, start: usize, end: usize| allowed(text, start, end, allow) || allowed_by_context(text, start, end, context);
    let mut findings = Vec::new();
    let (in_title, in_source) = (occurrences_of_all(input.title, terms), occurrences_of_all(input.source, terms));
    for ((term, in_title), in_source) in terms.iter().zip(in_title).zip(in_source) {
        for (start, end) in in_title {
            if !allowed(input.title, start, end) {
                let mut finding = wording.finding(check, severity, term).at("title");
                finding.matched = Some(input.title[start..end].to_owned());
                findings.push(finding);
            }
        }
        for (start, end) in in_source {
            if !allowed(input.source, start, end) {
                let mut finding = wording.finding(check, severity, term);
                finding.span = Some(Anchor { from: utf16(input.source, start), to: utf16(input.source, end) });
                finding.matched = Some(input.source[start..end].to_owned());
                findings.push(finding);
            }
        }
    }
    // Where matches overlap, keep the longest (销量第一 over 第一, 最低价 over 最低).
    let contained = |inner: &Finding, outer: &Finding| match (inner.span, outer.span) {
        (Some(i), Some(o)) => o.from <= i.from && i.to <= o.to && (o.to - o.from) > (i.to - i.from),
        _ => false,
    };
    let kept: Vec<Finding> = findings.iter().filter(|f| !findings.iter().any(|other| contained(f, other))).cloned().collect();
    let mut kept = kept;
    kept.sort_by(|a, b| (a.span.map(|s| s.from), a.location.clone()).cmp(&(b.span.map(|s| s.from), b.location.clone())));
    kept.dedup_by(|later, earlier| later.span.is_some() && later.span == earlier.span);
    kept
}

fn strict(industry: &str, list: &RiskList) -> bool {
    let industry = industry.trim().to_lowercase();
    !industry.is_empty() && list.strict_industries.iter().any(|i| industry.contains(&i.to_lowercase()))
}

struct PersonalData {
    phone: regex::Regex,
    email: regex::Regex,
    id_number: regex::Regex,
}

fn personal_data() -> Option<&'static PersonalData> {
    static PATTERNS: OnceLock<Option<PersonalData>> = OnceLock::new();
    PATTERNS
        .get_or_init(|| {
            Some(PersonalData {
                phone: regex::Regex::new(r"(?:^|[^0-9])(1[3-9][0-9]{9})(?:[^0-9]|$)").ok()?,
                email: regex::Regex::new(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}").ok()?,
                id_number: regex::Regex::new(r"(?:^|[^0-9])([1-9][0-9]{5}(?:19|20)[0-9]{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12][0-9]|3[01])[0-9]{3}[0-9Xx])(?:[^0-9]|$)").ok()?,
            })
        })
        .as_ref()
}

fn personal_data_findings(source: &str) -> Vec<Finding> {
    let Some(patterns) = personal_data() else { return Vec::new() };
    let mut findings = Vec::new();
    let mut add = |kind: &str, start: usize, end: usize| {
        let id = match kind {
            "mobile phone number" => "personal_data.phone",
            "email address" => "personal_data.email",
            _ => "personal_data.id_number",
        };
        let mut finding = Finding::new("personal_data", Severity::Warn, None, format!("This looks like a {kind}; publishing personal data needs the person's consent."))
            .worded(id, &[])
            .suggest_worded("personal_data", "Remove it or replace it with a placeholder unless it is meant to be public.");
        finding.span = Some(Anchor { from: utf16(source, start), to: utf16(source, end) });
        finding.matched = Some(source[start..end].to_owned());
        findings.push(finding);
    };
    for captures in patterns.phone.captures_iter(source) {
        if let Some(m) = captures.get(1) {
            add("mobile phone number", m.start(), m.end());
        }
    }
    for m in patterns.email.find_iter(source) {
        add("email address", m.start(), m.end());
    }
    for captures in patterns.id_number.captures_iter(source) {
        if let Some(m) = captures.get(1) {
            add("resident ID number", m.start(), m.end());
        }
    }
    findings
}

/// Runs every check over the title and source.
pub fn check(input: &CheckInput<'_>) -> Vec<Finding> {
    let mut findings = Vec::new();
    if let Some(brand) = input.brand {
        findings.extend(word_findings(
            "brand_banned_word",
            Severity::Block,
            input,
            &brand.banned_words,
            (&[], &[]),
            &Wording {
                message: &|term| format!("“{term}” is on the banned-word list of brand profile “{}”.", brand.name),
                named: ("brand", &brand.name),
                suggestion: "Rephrase without this word.",
                suggestion_id: Some("brand_banned_word"),
            },
        ));
    }
    if let Some(list) = input.ad_law {
        let severity = if input.brand.is_some_and(|b| strict(&b.industry, list)) { Severity::Block } else { Severity::Warn };
        findings.extend(word_findings(
            "ad_law",
            severity,
            input,
            &list.terms,
            (&list.allow, &list.allow_context),
            &Wording {
                message: &|term| format!("“{term}” is an absolute term restricted in advertising (China's Advertising Law, Art. 9; list {}).", list.id),
                named: ("list", &list.id),
                suggestion: &list.suggestion,
                suggestion_id: list_suggestion_id(list, "ad_law"),
            },
        ));
    }
    if let Some(list) = input.growth_promise {
        findings.extend(word_findings(
            "growth_promise",
            Severity::Block,
            input,
            &list.terms,
            (&list.allow, &list.allow_context),
            &Wording {
                message: &|term| format!("“{term}” promises an outcome no one can guarantee (list {}).", list.id),
                named: ("list", &list.id),
                suggestion: &list.suggestion,
                suggestion_id: list_suggestion_id(list, "growth_promise"),
            },
        ));
    }
    if let Some(brand) = input.brand.filter(|b| !b.cta.trim().is_empty()) {
        let cta = brand.cta.trim();
        match input.source.rfind(cta) {
            None => findings.push(
                Finding::new("cta", Severity::Warn, None, format!("The call to action of brand profile “{}” is missing: “{cta}”.", brand.name))
                    .worded("cta.missing", &[("brand", &brand.name), ("cta", cta)])
                    .suggest_worded("cta.missing", "Add it near the end of the article."),
            ),
            Some(position) if (position as f64) < input.source.len() as f64 * 0.6 => {
                let mut finding = Finding::new("cta", Severity::Info, None, "The call to action appears early; readers act on it most at the end.")
                    .worded("cta.early", &[])
                    .suggest_worded("cta.early", "Move or repeat it near the end.");
                finding.span = Some(Anchor { from: utf16(input.source, position), to: utf16(input.source, position + cta.len()) });
                findings.push(finding);
            }
            Some(_) => {}
        }
    }
    findings.extend(personal_data_findings(input.source));
    for platform in input.platforms.iter().filter(|p| matches!(p, Platform::Wechat | Platform::Douyin | Platform::Xiaohongshu)) {
        findings.push(
            Finding::new(
                "ai_declaration",
                Severity::Info,
                Some(*platform),
                "If AI generated or substantially wrote this content, declare it when publishing (AI content labelling rules in force since 2025-09-01).",
            )
            .worded("ai_declaration", &[])
            .suggest_worded("ai_declaration", "Tick the platform's AI-content declaration when you publish."),
        );
    }
    findings
}

/// The checks that find words a text should not carry: brand banned words,
/// advertising-law absolute terms, growth promises. A generated candidate that
/// introduces one of these gets another round, then is flagged.
pub const TERM_CHECKS: [&str; 3] = ["brand_banned_word", "ad_law", "growth_promise"];

/// `text` with HTML markup (tags and their attributes) blanked out, keeping every
/// character's UTF-16 length, so spans found in it point into `text` and word checks
/// see only what a reader sees (`width: 100%` in a style is not a claim).
fn without_markup(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_tag = false;
    for c in text.chars() {
        if c == '<' {
            in_tag = true;
        }
        if in_tag {
            out.extend(std::iter::repeat_n(' ', c.len_utf16()));
            if c == '>' {
                in_tag = false;
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The word checks and the personal-data check of a platform draft's text (the text a
/// draft patch proposes: HTML, Markdown, a thread's posts, a card's body), with spans
/// into `text`. `html`: the text is markup, matched only outside its tags. No CTA or
/// AI-declaration reminders: those are about the source.
pub fn draft_findings(text: &str, html: bool, brand: Option<&BrandProfile>, ad_law: Option<&RiskList>, growth_promise: Option<&RiskList>) -> Vec<Finding> {
    let masked;
    let source = if html {
        masked = without_markup(text);
        masked.as_str()
    } else {
        text
    };
    let input = CheckInput { title: "", source, brand, platforms: &[], ad_law, growth_promise };
    check(&input).into_iter().filter(|f| f.check != "cta").collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profiles::ProfileSet;

    fn run(title: &str, source: &str, brand: Option<&BrandProfile>) -> Vec<(String, Option<String>, Severity)> {
        let set = ProfileSet::builtin().unwrap();
        let input = CheckInput { title, source, brand, platforms: &[], ad_law: set.risk_list("ad-law-zh@v2"), growth_promise: set.risk_list("growth-promise@v1") };
        check(&input).into_iter().map(|f| (f.check, f.matched, f.severity)).collect()
    }

    #[test]
    fn every_finding_names_its_wording_and_values_for_the_ui_to_translate() {
        let set = ProfileSet::builtin().unwrap();
        let brand = BrandProfile {
            id: "brd_1".into(),
            name: "山行".into(),
            voice: String::new(),
            target_audience: String::new(),
            banned_words: vec!["爆款".into()],
            cta: "关注我们".into(),
            link_strategy: String::new(),
            default_tags: vec![],
            industry: String::new(),
            created_at: chrono::DateTime::from_timestamp(0, 0).unwrap(),
            updated_at: chrono::DateTime::from_timestamp(0, 0).unwrap(),
        };
        let input = CheckInput {
            title: "",
            source: "这是最佳爆款，保证涨粉。电话 13812345678。",
            brand: Some(&brand),
            platforms: &[Platform::Wechat],
            ad_law: set.risk_list("ad-law-zh@v2"),
            growth_promise: set.risk_list("growth-promise@v1"),
        };
        type Worded = (Option<String>, Vec<(String, String)>, Option<String>);
        let findings = check(&input);
        // The UI's English wording with these values is exactly the English text.
        findings.iter().for_each(crate::pipeline::ui_wording::assert_worded);
        let cta_early = CheckInput { source: &format!("关注我们。{}", "正文。".repeat(200)), ..input };
        let early: Vec<Finding> = check(&cta_early).into_iter().filter(|f| f.message_id.as_deref() == Some("cta.early")).collect();
        assert_eq!(early.len(), 1);
        early.iter().for_each(crate::pipeline::ui_wording::assert_worded);
        let worded: Vec<Worded> = findings.into_iter().map(|f| (f.message_id, f.params.into_iter().collect(), f.suggestion_id)).collect();
        let p = |pairs: &[(&str, &str)]| pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect::<Vec<_>>();
        let s = |x: &str| Some(x.to_owned());
        assert_eq!(
            worded,
            vec![
                (s("brand_banned_word"), p(&[("brand", "山行"), ("term", "爆款")]), s("brand_banned_word")),
                (s("ad_law"), p(&[("list", "ad-law-zh@v2"), ("term", "最佳")]), s("ad_law")),
                (s("growth_promise"), p(&[("list", "growth-promise@v1"), ("term", "保证涨粉")]), s("growth_promise")),
                (s("cta.missing"), p(&[("brand", "山行"), ("cta", "关注我们")]), s("cta.missing")),
                (s("personal_data.phone"), p(&[]), s("personal_data")),
                (s("ai_declaration"), p(&[]), s("ai_declaration")),
            ]
        );
    }

    #[test]
    fn absolute_terms_are_flagged_but_ordinary_words_are_not() {
        let found = run(
            "最近的第一次尝试",
            "第一句话写给早起的人。这是最佳方案，销量第一。最后，我们第一次做到了，第一段就说清楚。\n\n- 第一项：早起\n- 第二项：散步\n\n第一张图是封面。",
            None,
        );
        let matched: Vec<&str> = found.iter().filter(|f| f.0 == "ad_law").filter_map(|f| f.1.as_deref()).collect();
        assert_eq!(matched, vec!["最佳", "销量第一"]);
    }

    #[test]
    fn ordinal_di_yi_is_not_a_claim_but_rankings_stay_flagged() {
        let ad = |title: &str, source: &str| -> Vec<String> { run(title, source, None).into_iter().filter(|f| f.0 == "ad_law").filter_map(|f| f.1).collect() };
        // Ordinals from real drafts: an enumeration opening a sentence, line or list
        // item, and 第一 before a measure word.
        let ordinals = [
            "第一，散步让人慢下来。第二，散步让人看见街道。",
            "走到第一个路口，向左转就是公园。",
            "我的理由有三：第一，便宜；第二，近；第三，安静。",
            "- 第一，早起十分钟\n- 第二，出门走一走",
            "1. 第一、准备一双舒服的鞋",
            "他是第一位走完全程的志愿者，也是创业第一年就来的同事。",
            "看到题目，我的第一反应是先散步。",
        ];
        for source in ordinals {
            assert_eq!(ad("", source), Vec::<String>::new(), "{source}");
        }
        assert_eq!(ad("第一，先学会散步", ""), Vec::<String>::new(), "a title opens a sentence too");
        // True absolutes keep their finding.
        assert_eq!(ad("", "全网第一的散步鞋，第一品牌，销量第一，值得信赖。"), vec!["全网第一", "第一品牌", "销量第一"]);
        assert_eq!(ad("", "我们是行业第一，也是第一。"), vec!["第一", "第一"], "a ranking, not an ordinal");
        assert_eq!(ad("", "国内第一个获批的同类产品。"), vec!["第一"], "a scope makes 第一个 a claim");
        assert_eq!(ad("", "全网第一，不服来比。"), vec!["全网第一"]);
        // A draft's HTML: the tag before it opens the paragraph.
        let set = ProfileSet::builtin().unwrap();
        let found = draft_findings("<p>第一，散步让人慢下来。</p><p>行业第一，就选我们。</p>", true, None, set.risk_list("ad-law-zh@v2"), None);
        assert_eq!(found.iter().filter_map(|f| f.matched.as_deref()).collect::<Vec<_>>(), vec!["第一"]);
    }

    #[test]
    fn growth_promises_block_in_both_languages() {
        let found = run("", "跟着做，保证涨粉！Guaranteed views for everyone.", None);
        let promises: Vec<(&str, Severity)> = found.iter().filter(|f| f.0 == "growth_promise").map(|f| (f.1.as_deref().unwrap_or(""), f.2)).collect();
        assert_eq!(promises, vec![("保证涨粉", Severity::Block), ("Guaranteed views", Severity::Block)]);
    }

    #[test]
    fn strict_industries_block_and_spans_are_utf16() {
        let brand = BrandProfile {
            id: "brd_1".into(),
            name: "诊所".into(),
            voice: String::new(),
            target_audience: String::new(),
            banned_words: vec!["根治".into()],
            cta: "预约咨询".into(),
            link_strategy: String::new(),
            default_tags: vec![],
            industry: "医疗".into(),
            created_at: chrono::DateTime::from_timestamp(0, 0).unwrap(),
            updated_at: chrono::DateTime::from_timestamp(0, 0).unwrap(),
        };
        let set = ProfileSet::builtin().unwrap();
        let source = "😀 国家级专家，根治失眠。";
        let input = CheckInput { title: "", source, brand: Some(&brand), platforms: &[Platform::Wechat], ad_law: set.risk_list("ad-law-zh@v2"), growth_promise: None };
        let findings = check(&input);
        let ad = findings.iter().find(|f| f.check == "ad_law").unwrap();
        assert_eq!(ad.severity, Severity::Block);
        assert_eq!(ad.span, Some(Anchor { from: 3, to: 6 }), "the emoji is two UTF-16 units");
        assert!(findings.iter().any(|f| f.check == "brand_banned_word" && f.matched.as_deref() == Some("根治")));
        assert!(findings.iter().any(|f| f.check == "cta" && f.severity == Severity::Warn));
        assert!(findings.iter().any(|f| f.check == "ai_declaration"));
    }

    #[test]
    fn draft_findings_skip_markup_and_keep_spans_into_the_text() {
        let set = ProfileSet::builtin().unwrap();
        let html = "<p style=\"width: 100%\">这是最佳的办法。</p>";
        let found = draft_findings(html, true, None, set.risk_list("ad-law-zh@v2"), set.risk_list("growth-promise@v1"));
        let terms: Vec<&str> = found.iter().filter_map(|f| f.matched.as_deref()).collect();
        assert_eq!(terms, vec!["最佳"], "the style's 100% is markup, not a claim");
        let span = found[0].span.unwrap();
        let units: Vec<u16> = html.encode_utf16().collect();
        assert_eq!(String::from_utf16(&units[span.from as usize..span.to as usize]).unwrap(), "最佳");
        // Markdown is matched as written.
        let found = draft_findings("100% 有效", false, None, set.risk_list("ad-law-zh@v2"), None);
        assert_eq!(found.iter().filter_map(|f| f.matched.as_deref()).collect::<Vec<_>>(), vec!["100%"]);
    }

    #[test]
    fn personal_data_is_found() {
        let found = run("", "联系我 13812345678 或 me@example.com，身份证 110101199003074514。订单号 2138123456789 不是手机号。", None);
        let data: Vec<&str> = found.iter().filter(|f| f.0 == "personal_data").filter_map(|f| f.1.as_deref()).collect();
        assert_eq!(data, vec!["13812345678", "me@example.com", "110101199003074514"]);
    }

    proptest::proptest! {
        /// One pass for every term finds, per term, exactly what searching for it alone
        /// finds: the same leftmost non-overlapping matches, ASCII terms in either case.
        #[test]
        fn all_terms_in_one_pass_find_what_each_term_alone_finds(
            text in "[aAb最佳第一 ]{0,40}",
            terms in proptest::collection::vec("[aAb最佳第一]{0,3}", 0..8),
        ) {
            let together = occurrences_of_all(&text, &terms);
            let alone: Vec<Vec<(usize, usize)>> = terms.iter().map(|term| occurrences(&text, term)).collect();
            proptest::prop_assert_eq!(together, alone);
        }
    }
}
