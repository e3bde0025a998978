#![allow(clippy::unwrap_used, clippy::expect_used)]

use regex::Regex;

use super::patterns::*;
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
