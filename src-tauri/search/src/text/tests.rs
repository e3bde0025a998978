#![allow(clippy::unwrap_used)]

use super::*;

fn texts(tokens: &[Token]) -> Vec<(usize, &str)> {
    tokens.iter().map(|t| (t.position, t.text.as_str())).collect()
}

#[test]
fn normalisation_folds_width_and_case() {
    assert_eq!(normalize("ＧＰＴ－４ Hello"), "gpt-4 hello");
    assert_eq!(normalize_label("  手冲  咖啡\t入门 "), "手冲 咖啡 入门");
}

#[test]
fn grams_are_unigrams_and_bigrams_of_joined_cjk_and_whole_latin_words() {
    let tokens = gram_tokens(&normalize("你好，世界 GPT4o!"));
    assert_eq!(texts(&tokens), vec![(0, "你"), (0, "你好"), (1, "好"), (2, "世"), (2, "世界"), (3, "界"), (4, "gpt4o")]);
}

#[test]
fn literal_terms_cover_every_unit_once_in_order() {
    assert_eq!(literal_terms("咖啡"), vec![(0, "咖啡".to_owned())]);
    assert_eq!(literal_terms("猫"), vec![(0, "猫".to_owned())]);
    assert_eq!(literal_terms("手冲咖啡"), vec![(0, "手冲".to_owned()), (1, "冲咖".to_owned()), (2, "咖啡".to_owned())]);
    assert_eq!(literal_terms("你好，世界"), vec![(0, "你好".to_owned()), (2, "世界".to_owned())]);
    assert_eq!(literal_terms("用gpt写"), vec![(0, "用".to_owned()), (1, "gpt".to_owned()), (2, "写".to_owned())]);
    assert_eq!(literal_terms("的了"), vec![(0, "的了".to_owned())]);
    assert!(literal_terms("，。 ").is_empty());
}

#[test]
fn query_keywords_drop_stop_words_unless_nothing_else_is_left() {
    let terms = QueryTerms::new("我的 咖啡");
    assert!(terms.keywords.contains(&"咖啡".to_owned()), "{terms:?}");
    assert!(!terms.keywords.contains(&"的".to_owned()), "{terms:?}");
    assert_eq!(QueryTerms::new("的").keywords, vec!["的".to_owned()]);
    assert!(QueryTerms::new("  ").is_empty());
}

#[test]
fn front_matter_gives_tags_and_category() {
    let source = "---\ntitle: 你好\ntags: [咖啡, \"手冲\"]\ncategories:\n  - 生活\n  - 饮品\n---\n正文";
    let front = front_matter(source);
    assert_eq!(front.tags, vec!["咖啡", "手冲", "饮品"]);
    assert_eq!(front.category.as_deref(), Some("生活"));
    assert_eq!(&source[front.body_start..], "正文");
    assert_eq!(front_matter("---\ntags: a\nno end"), FrontMatter::default());
    assert_eq!(front_matter("# Title\n---\n"), FrontMatter::default());
}

#[test]
fn the_summary_is_the_first_paragraph_without_marks() {
    let body = "# 标题\n\n![图](a.png)\n\n这是**第一段**，见[链接](https://x.com)。\n第二行。\n\n第二段。";
    assert_eq!(summary(body), "这是第一段，见链接。 第二行。");
    assert_eq!(summary("```\ncode\n```\n\n> 引用段落"), "引用段落");
}

#[test]
fn a_literal_match_gives_its_utf16_span_and_a_marked_snippet() {
    let text = "# 标题\n\n前面 😀 的文字，然后是手冲咖啡的做法。";
    let located = locate(text, &QueryTerms::new("手冲咖啡")).unwrap();
    let utf16: Vec<u16> = text.encode_utf16().collect();
    assert_eq!(String::from_utf16(&utf16[located.span.from as usize..located.span.to as usize]).unwrap(), "手冲咖啡");
    let snippet_utf16: Vec<u16> = located.snippet.text.encode_utf16().collect();
    let marked: Vec<String> = located.snippet.highlights.iter().map(|h| String::from_utf16(&snippet_utf16[h.from as usize..h.to as usize]).unwrap()).collect();
    assert_eq!(marked, vec!["手冲咖啡"]);
    assert!(!located.snippet.text.contains('\n'));
}

#[test]
fn without_a_literal_match_the_window_with_most_keywords_wins() {
    let text = "咖啡在开头。中间很多无关的文字，无关的文字，无关的文字，无关的文字，无关的文字，无关的文字，无关的文字，无关的文字。后来手冲和咖啡一起出现。";
    let located = locate(text, &QueryTerms::new("咖啡 手冲")).unwrap();
    let utf16: Vec<u16> = text.encode_utf16().collect();
    assert_eq!(String::from_utf16(&utf16[located.span.from as usize..located.span.to as usize]).unwrap(), "手冲");
    assert!(located.snippet.highlights.len() >= 2, "{located:?}");
    assert!(locate(text, &QueryTerms::new("马拉松")).is_none());
}

#[test]
fn english_words_are_stemmed_and_chinese_words_are_not() {
    let stem = |w: &str| english_stem(w).unwrap_or_else(|| w.to_owned());
    // The forms of one word share a stem; different words keep theirs.
    for forms in [["meet", "meeting", "meetings"], ["story", "stories", "story"], ["note", "notes", "noted"]] {
        assert!(forms.iter().all(|f| stem(f) == stem(forms[0])), "{forms:?}: {:?}", forms.map(stem));
    }
    assert_ne!(stem("meeting"), stem("meat"));
    for word in ["this", "focus", "glass", "was", "café", "gpt4s", "茶园", "ab"] {
        assert_eq!(english_stem(word), None, "{word}");
    }
    let tokens = word_tokens(&normalize("Fewer Meetings 在茶园里"));
    let texts: Vec<&str> = tokens.iter().map(|t| t.text.as_str()).collect();
    assert!(texts.contains(&"meet") && texts.contains(&"茶园") && !texts.contains(&"meetings"), "{texts:?}");
    // The query stems as the index does; stop words are told by their surface form.
    assert_eq!(QueryTerms::new("Meetings").keywords, vec!["meet".to_owned()]);
    assert_eq!(QueryTerms::new("this meeting").keywords, vec!["meet".to_owned()]);
}

#[test]
fn a_stemmed_keyword_is_located_at_the_words_with_its_stem() {
    let text = "Two stories about a meeting.";
    let located = locate(text, &QueryTerms::new("story")).unwrap();
    assert_eq!((located.span.from, located.span.to), (4, 11));
    let located = locate(text, &QueryTerms::new("meetings")).unwrap();
    assert_eq!((located.span.from, located.span.to), (20, 27));
    assert!(locate("storytelling", &QueryTerms::new("story")).is_some(), "the query as written, inside a word");
}

#[test]
fn case_and_width_are_ignored_when_locating() {
    let text = "Using ＧＰＴ for Drafts";
    let located = locate(text, &QueryTerms::new("gpt for drafts")).unwrap();
    assert_eq!((located.span.from, located.span.to), (6, 20));
}
