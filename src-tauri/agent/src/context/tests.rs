//! Unit tests of context assembly: layer order, the pinned layer, the selection and
//! the trimming steps from the whole article down to its smallest form.

use super::*;

fn project(source: &str) -> Project {
    let at = chrono::DateTime::from_timestamp_millis(0).unwrap();
    Project {
        id: "prj_1".into(),
        title: "春日".into(),
        source: source.into(),
        revision: 3,
        head: 2,
        platforms: Vec::new(),
        brand_profile_id: None,
        template_id: None,
        archived: false,
        created_at: at,
        updated_at: at,
    }
}

fn input(p: &Project) -> ContextInput<'_> {
    ContextInput {
        project: p,
        brand: None,
        template: None,
        versions: &[],
        comments: &[],
        media: &[],
        mode: Mode::Default,
        session_summary: "",
        constraints: &[],
        pins: &[],
        intent: "",
        memory: &[],
        memory_left_out: 0,
        selection: None,
        task: "",
        prompt: None,
        performance: "",
    }
}

#[test]
fn the_performance_summary_is_a_layer_of_its_own_only_when_given_and_a_note_in_the_smallest_form() {
    let p = project("春眠不觉晓。");
    let none = assemble(&input(&p), 100_000).unwrap();
    assert!(none.layers.iter().all(|l| l.name != PERFORMANCE_LAYER), "no layer without a summary");
    let summary = "# Performance history\n## performance: x\n- 2.00× \"春\"\nevidence: snp_1\n";
    let with = ContextInput { performance: summary, ..input(&p) };
    let snapshot = assemble(&with, 100_000).unwrap();
    let names: Vec<&str> = snapshot.layers.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["pinned", "working_set", "session_summary", "cold_refs", PERFORMANCE_LAYER, "apply_policy"]);
    assert!(snapshot.system.contains(summary) && snapshot.id != none.id);
    // A long source in a small window: the smallest form leaves a note for the tool.
    let long = project(&"长".repeat(20_000));
    let small = assemble(&ContextInput { performance: &summary.repeat(40), ..input(&long) }, 900).unwrap();
    let layer = small.layers.iter().find(|l| l.name == PERFORMANCE_LAYER).unwrap();
    assert!(layer.trimmed && layer.text.contains("read_performance"), "{}", layer.text);
}

#[test]
fn the_persons_constraints_are_pinned_verbatim_and_never_trimmed() {
    let p = project(&"长".repeat(20_000));
    let without = assemble(&input(&p), 100_000).unwrap();
    assert!(!without.system.contains("constraints"), "no heading without constraints");
    let constraints = ["不要用“最佳”这类绝对化用语".to_owned(), "Keep the second paragraph as it is.\nIt is a quote.".to_owned()];
    let with = ContextInput { constraints: &constraints, ..input(&p) };
    let full = assemble(&with, 100_000).unwrap();
    let pinned = &full.layers[0].text;
    assert!(
        pinned.contains("# The person's constraints (verbatim; follow them)\n- 不要用“最佳”这类绝对化用语\n- Keep the second paragraph as it is.\nIt is a quote.\n"),
        "{pinned}"
    );
    assert_ne!(full.id, without.id, "another context, another snapshot");
    let trimmed = assemble(&with, 3_000).unwrap();
    assert!(trimmed.layers[1].trimmed, "the source is cut");
    assert_eq!(&trimmed.layers[0].text, pinned, "the constraints are not");
}

#[test]
fn layers_are_in_order_and_the_summary_layer_is_an_empty_seam() {
    let p = project("春眠不觉晓。");
    let snapshot = assemble(&input(&p), 100_000).unwrap();
    let names: Vec<&str> = snapshot.layers.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["pinned", "working_set", "session_summary", "cold_refs", "apply_policy"]);
    assert_eq!(snapshot.prompt_layers.len(), 8, "every prompt layer is named: {:?}", snapshot.prompt_layers);
    assert_eq!(snapshot.prompt_layers[6], format!("context:{}", snapshot.id));
    assert!(snapshot.layers[0].text.contains("Mode: default"));
    assert!(snapshot.layers[4].text.contains("# Apply policy"));
    assert_eq!(snapshot.layers[2].text, "");
    assert!(snapshot.system.contains("春眠不觉晓"));
    assert!(snapshot.layers.iter().all(|l| !l.trimmed));
    // Same input, same snapshot id.
    assert_eq!(assemble(&input(&p), 100_000).unwrap().id, snapshot.id);
}

#[test]
fn a_long_chinese_source_is_trimmed_to_an_excerpt_and_pinned_never_is() {
    let p = project(&"长".repeat(20_000));
    let full = assemble(&input(&p), 100_000).unwrap();
    assert!(full.layers[1].tokens >= 20_000, "one token per CJK character");
    let trimmed = assemble(&input(&p), 3_000).unwrap();
    assert!(trimmed.layers[1].trimmed);
    assert!(trimmed.layers[1].text.contains("read_project_context has all of it"));
    assert_eq!(trimmed.layers[0].text, full.layers[0].text);
    assert!(trimmed.layers[1].text.contains("first 1500 of 20000 characters"));
    let small = assemble(&input(&p), 800).unwrap();
    assert!(small.layers[1].text.contains("first 300 of 20000 characters"), "a small window keeps a few lines");
    let pinned = full.layers[0].tokens;
    let error = assemble(&input(&p), pinned / 2).unwrap_err();
    assert!(error.needed > pinned / 2);
}

fn selection(from: u32, to: u32, text: &str) -> Selection {
    Selection { from, to, text: text.to_owned() }
}

#[test]
fn a_selection_is_checked_in_utf16_units_against_the_source() {
    // "𠀀" is one character and two UTF-16 units; "春" one of each.
    let source = "春𠀀眠不觉晓。";
    assert_eq!(selection(0, 1, "春").check(source), Ok(()));
    assert_eq!(selection(1, 3, "𠀀").check(source), Ok(()));
    assert_eq!(selection(3, 8, "眠不觉晓。").check(source), Ok(()));
    let field = |e: ApiError| (e.code, e.details.and_then(|d| d["field"].as_str().map(str::to_owned)).unwrap_or_default(), e.hints.into_iter().map(|h| h.id).collect::<Vec<_>>());
    let validation = crate::error::ErrorCode::Validation;
    let reselect = vec!["reselect_text".to_owned()];
    assert_eq!(field(selection(2, 3, "𠀀").check(source).unwrap_err()), (validation, "selection.from".to_owned(), reselect.clone()), "inside a surrogate pair");
    assert_eq!(field(selection(3, 9, "眠不觉晓。").check(source).unwrap_err()), (validation, "selection.to".to_owned(), reselect.clone()), "past the end");
    assert_eq!(field(selection(3, 3, "").check(source).unwrap_err()), (validation, "selection.to".to_owned(), reselect.clone()), "empty");
    assert_eq!(field(selection(3, 5, "不觉").check(source).unwrap_err()), (validation, "selection.text".to_owned(), reselect), "another text");
    let long = "长".repeat(MAX_SELECTION_CHARS + 1);
    assert_eq!(field(selection(0, long.len() as u32 / 3, &long).check(&long).unwrap_err()).1, "selection.text");
}

#[test]
fn the_selection_is_in_the_working_set_and_survives_trimming_as_an_excerpt() {
    let p = project(&format!("{}第二段要改。", "长".repeat(20_000)));
    let scope = selection(20_000, 20_006, "第二段要改。");
    let with = ContextInput { selection: Some(&scope), ..input(&p) };
    let full = assemble(&with, 100_000).unwrap();
    assert!(
        full.layers[1].text.contains("selection (the person's latest message is about this part of the source; UTF-16 offsets 20000–20006 when it was sent):\n第二段要改。\n"),
        "{}",
        full.layers[1].text
    );
    assert_ne!(full.id, assemble(&input(&p), 100_000).unwrap().id);
    let trimmed = assemble(&with, 3_000).unwrap();
    assert!(trimmed.layers[1].trimmed && trimmed.layers[1].text.contains("offsets 20000–20006 when it was sent):\n第二段要改。"), "the selection stays when the source is cut");
}

/// An article of `n` sections of about 700 characters each, every paragraph named.
fn sectioned(n: usize) -> String {
    let mut source = String::from("开篇的一段话，说明这篇文章写什么。\n\n");
    for i in 1..=n {
        source.push_str(&format!("## 第{i}节\n\n"));
        for p in 1..=5 {
            source.push_str(&format!("第{i}节第{p}段：{}\n\n", "山里的茶农清晨上山采茶，".repeat(10)));
        }
    }
    source
}

#[test]
fn an_article_too_long_for_the_window_goes_by_section_with_the_selection_s_in_full() {
    let source = sectioned(8);
    let p = project(&source);
    let text = format!("第5节第3段：{}", "山里的茶农清晨上山采茶，".repeat(10));
    let from = source[..source.find(&text).unwrap()].encode_utf16().count() as u32;
    let scope = selection(from, from + text.encode_utf16().count() as u32, &text);
    let with = ContextInput { selection: Some(&scope), ..input(&p) };
    let whole = assemble(&with, 100_000).unwrap();
    assert!(!whole.layers[1].trimmed);
    let budget = whole.layers.iter().map(|l| l.tokens).sum::<u64>() / 2;
    let by_section = assemble(&with, budget).unwrap();
    let ws = &by_section.layers[1].text;
    assert!(by_section.layers[1].trimmed);
    assert!(ws.contains("by section, as it does not fit whole; read_section {sections: [numbers]} reads any section in full; revision 3."), "{ws}");
    assert!(ws.contains("§6 第5节 — given in full below"), "the selection's section is numbered in the outline: {ws}");
    assert!(ws.contains("§3 第2节 — 653 characters: 第2节第1段："), "the others are outlined with their size and lead: {ws}");
    for paragraph in 1..=5 {
        assert!(ws.contains(&format!("第5节第{paragraph}段")), "the selection's section is there in full: {ws}");
    }
    assert!(!ws.contains("第4节第2段") && !ws.contains("第6节第2段"), "other sections are not: {ws}");
    assert!(ws.contains(&format!("offsets {from}–")) && ws.matches(&text).count() == 2, "the selection is quoted as well");

    // Less room: the paragraphs around the selection, then the outline alone.
    let tight = by_section.layers.iter().map(|l| l.tokens).sum::<u64>() - 200;
    let around = assemble(&with, tight).unwrap();
    let ws = &around.layers[1].text;
    assert!(
        ws.contains("the paragraphs around the selection")
            && ws.contains("第5节第2段")
            && ws.contains("第5节第4段")
            && !ws.contains("第5节第1段：山里的茶农清晨上山采茶，山里的茶农清晨"),
        "{ws}"
    );
    assert!(ws.contains("§9 第8节 — 653 characters"), "with the outline: {ws}");
}

#[test]
fn without_a_selection_the_sections_the_task_names_are_given_in_full() {
    let source = sectioned(8);
    let p = project(&source);
    let task = "请把“第7节”改得更口语一些";
    let with = ContextInput { task, ..input(&p) };
    let whole: u64 = assemble(&with, 100_000).unwrap().layers.iter().map(|l| l.tokens).sum();
    let ws = assemble(&with, whole / 2).unwrap().layers[1].text.clone();
    assert!(ws.contains("§8 第7节 — given in full below") && ws.contains("第7节第5段"), "{ws}");
    // Naming nothing: the outline alone, before a head excerpt.
    let ws = assemble(&input(&p), whole / 2).unwrap().layers[1].text.clone();
    assert!(ws.contains("as an outline") && !ws.contains("given in full"), "{ws}");
    assert!(ws.lines().filter(|l| l.starts_with('§')).count() == 9, "{ws}");
}
