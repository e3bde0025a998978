//! The layers of a context snapshot: the pinned rules and digest, the working set
//! in each of its forms (whole, by section, around the selection, outline, excerpt),
//! and the references, each as text the model reads.

use super::{byte_at_utf16, sections, ContextInput, ContextLayer, Mode};
use crate::llm::estimate_tokens;
use crate::model::Comment;

/// The most of a selection the working set quotes once the source is trimmed.
const SELECTION_EXCERPT_CHARS: usize = 1_500;

/// The prompt of `input`: the caller's, or the built-in drafting prompt for its mode.
pub(super) fn composed(input: &ContextInput<'_>) -> crate::prompts::Composed {
    match input.prompt {
        Some(prompt) => prompt.clone(),
        None => {
            let mode = match input.mode {
                Mode::Default => crate::prompts::Mode::Drafting,
                Mode::Plan => crate::prompts::Mode::Plan,
            };
            crate::prompts::PromptSet::builtin().compose(&mode, crate::prompts::Entry::Article)
        }
    }
}

/// The pinned layer: the prompt layers before the context digest, then the head of
/// the digest (project, brand, template, the person's constraints and pins).
pub(super) fn pinned(input: &ContextInput<'_>, prompt: &crate::prompts::Composed) -> String {
    let p = input.project;
    let mut out = format!("# Rules\n{}\n", prompt.head());
    let platforms: Vec<String> = p.platforms.iter().map(|x| format!("{x:?}").to_lowercase()).collect();
    out.push_str(&format!(
        "\n# Project\nid: {}\ntitle: {}\nrevision: {}\nlatest version: {}\nplatforms: {}\n",
        p.id,
        p.title,
        p.revision,
        p.head,
        if platforms.is_empty() { "all".to_owned() } else { platforms.join(", ") }
    ));
    if let Some(b) = input.brand {
        out.push_str(&format!(
            "\n# Brand profile: {}\nvoice: {}\naudience: {}\nbanned words: {}\nCTA: {}\nlink strategy: {}\ndefault tags: {}\nindustry: {}\n",
            b.name,
            b.voice,
            b.target_audience,
            b.banned_words.join(", "),
            b.cta,
            b.link_strategy,
            b.default_tags.join(", "),
            b.industry
        ));
    }
    if let Some(t) = input.template {
        out.push_str(&format!("\n# Template\n{} (title pattern: {})\n", t.name, t.title_template));
    }
    if !input.constraints.is_empty() {
        out.push_str("\n# The person's constraints (verbatim; follow them)\n");
        for constraint in input.constraints {
            out.push_str(&format!("- {constraint}\n"));
        }
    }
    if !input.pins.is_empty() {
        out.push_str("\n# Pinned by the person (verbatim; they hold for the whole session)\n");
        for pin in input.pins {
            out.push_str(&format!("- {pin}\n"));
        }
    }
    if !input.memory.is_empty() || input.memory_left_out > 0 {
        out.push_str("\n# Memory (kept by the person across sessions; follow it)\n");
        for line in input.memory {
            out.push_str(&format!("- {line}\n"));
        }
        if input.memory_left_out > 0 {
            out.push_str(&format!("({} more memory items did not fit; the person can see them in Settings → Memory.)\n", input.memory_left_out));
        }
    }
    if !input.intent.is_empty() {
        out.push('\n');
        out.push_str(input.intent);
    }
    out
}

/// How the working set gives the article, from whole to smallest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Article {
    /// The whole source.
    Whole,
    /// The sections that hold the selection (or that the task names) in full, an
    /// outline of the rest.
    Sections,
    /// The paragraphs around the selection, an outline of the sections.
    AroundSelection,
    /// The outline only (the selection still quoted).
    Outline,
    /// At most this many characters of the head of the source.
    Excerpt(usize),
}

/// The sections to give in full: those holding the selection, else those the task
/// names.
fn focus(input: &ContextInput<'_>, sections: &[sections::Section]) -> Vec<usize> {
    if let Some(range) = selection_bytes(input) {
        return sections::holding(sections, &range);
    }
    sections::named(sections, input.task)
}

/// The byte range of the selection in the source: at its offsets when the text is
/// still there, else where its text is found once; `None` when it is gone.
fn selection_bytes(input: &ContextInput<'_>) -> Option<std::ops::Range<usize>> {
    let selection = input.selection?;
    let source = &input.project.source;
    if let (Some(start), Some(end)) = (byte_at_utf16(source, selection.from), byte_at_utf16(source, selection.to)) {
        if source.get(start..end) == Some(selection.text.as_str()) {
            return Some(start..end);
        }
    }
    let at = source.find(&selection.text)?;
    Some(at..at + selection.text.len())
}

/// Whether `article` applies to `input` (a form that would say nothing more than a
/// larger one is skipped).
pub(super) fn applies(input: &ContextInput<'_>, sections: &[sections::Section], article: Article) -> bool {
    match article {
        Article::Whole | Article::Excerpt(_) => true,
        Article::Sections => sections.len() > 1 && !focus(input, sections).is_empty(),
        Article::AroundSelection => selection_bytes(input).is_some(),
        Article::Outline => sections.len() > 1,
    }
}

/// The working set with the article given as `article`; `sections` are the source's
/// (`sections::split`).
pub(super) fn working_set(input: &ContextInput<'_>, sections: &[sections::Section], article: Article, with_comments: bool) -> String {
    let p = input.project;
    let mut out = format!("# Working set\ntitle: {}\n", p.title);
    let chars = p.source.chars().count();
    let read_on = format!("read_section {{sections: [numbers]}} reads any section in full; revision {}", p.revision);
    match article {
        Article::Excerpt(excerpt) if chars > excerpt => {
            let head: String = p.source.chars().take(excerpt).collect();
            out.push_str(&format!("source (first {excerpt} of {chars} characters; read_project_context has all of it, revision {}):\n{head}\n…\n", p.revision));
        }
        Article::Whole | Article::Excerpt(_) => out.push_str(&format!("source ({chars} characters):\n{}\n", p.source)),
        Article::Sections => {
            let full = focus(input, sections);
            out.push_str(&format!("source ({chars} characters) by section, as it does not fit whole; {read_on}.\noutline:\n{}", sections::outline(&p.source, sections, &full)));
            for section in sections.iter().filter(|s| full.contains(&s.number)) {
                out.push_str(&format!("\n{}:\n{}\n", sections::title(section), p.source[section.range.clone()].trim_end()));
            }
        }
        Article::AroundSelection => {
            let range = selection_bytes(input).map(|r| sections::around(&p.source, &r)).unwrap_or(0..0);
            let (before, after) = (p.source[..range.start].chars().count(), p.source[range.end..].chars().count());
            if sections.len() > 1 {
                out.push_str(&format!(
                    "source ({chars} characters), as it does not fit whole: an outline and the paragraphs around the selection; {read_on}.\noutline:\n{}",
                    sections::outline(&p.source, sections, &[])
                ));
            } else {
                out.push_str(&format!(
                    "source ({chars} characters), as it does not fit whole: the paragraphs around the selection; read_project_context has all of it, revision {}.\n",
                    p.revision
                ));
            }
            out.push_str(&format!("\naround the selection ({before} characters before, {after} after):\n{}\n", p.source[range].trim_end()));
        }
        Article::Outline => {
            out.push_str(&format!("source ({chars} characters) as an outline, as it does not fit whole; {read_on}.\noutline:\n{}", sections::outline(&p.source, sections, &[])));
        }
    }
    if let Some(selection) = input.selection {
        let chars = selection.text.chars().count();
        out.push_str(&format!(
            "\nselection (the person's latest message is about this part of the source; UTF-16 offsets {}–{} when it was sent):\n",
            selection.from, selection.to
        ));
        match article {
            Article::Excerpt(_) if chars > SELECTION_EXCERPT_CHARS => {
                let head: String = selection.text.chars().take(SELECTION_EXCERPT_CHARS).collect();
                out.push_str(&format!("{head}\n… (first {SELECTION_EXCERPT_CHARS} of {chars} characters)\n"));
            }
            _ => out.push_str(&format!("{}\n", selection.text)),
        }
    }
    let open: Vec<&Comment> = input.comments.iter().filter(|c| !c.resolved).collect();
    if with_comments && !open.is_empty() {
        out.push_str("\nopen comments:\n");
        for c in open.iter().take(20) {
            let quote = c.quote.as_deref().map(|q| format!(" on \"{}\"", q.chars().take(80).collect::<String>())).unwrap_or_default();
            out.push_str(&format!("- {}{quote}: {}\n", c.author, c.body.chars().take(300).collect::<String>()));
        }
    } else if !open.is_empty() {
        out.push_str(&format!("\n{} open comments (read_comments).\n", open.len()));
    }
    out
}

pub(super) fn cold_refs(input: &ContextInput<'_>, counts_only: bool) -> String {
    if counts_only {
        return format!("# References\n{} versions, {} comments, {} images.\n", input.versions.len(), input.comments.len(), input.media.len());
    }
    let versions: Vec<String> = input.versions.iter().map(|v| format!("v{} {}", v.number, v.id)).collect();
    let comments: Vec<&str> = input.comments.iter().map(|c| c.id.as_str()).collect();
    let media: Vec<&str> = input.media.iter().map(|m| m.id.as_str()).collect();
    format!("# References\nversions: {}\ncomments: {}\nimages: {}\n", versions.join(", "), comments.join(", "), media.join(", "))
}

pub(super) fn layer(name: &str, text: String, trimmed: bool) -> ContextLayer {
    ContextLayer { name: name.to_owned(), tokens: estimate_tokens(&text), text, trimmed }
}
