//! Context assembly: the immutable snapshot a model call starts from, built in layers
//! from typed project records only.
//!
//! Layers, in the order they are sent: `pinned` (the composed prompt layers before the
//! context digest, see [`crate::prompts`]: identity, persona, guardrails, output
//! contract, entry, mode; then the digest's project, brand profile, active platforms, and the person's constraints: the
//! reasons they gave when rejecting proposals, verbatim, and what they pinned or instructed,
//! verbatim), `working_set` (title, source, open comments), `session_summary` (the
//! summary of compacted conversation, empty until the first compaction),
//! `cold_refs` (ids only), `performance` (the performance summaries of the project's
//! platforms, only when the setting and the workspace policy allow it and there is
//! something to say; a note in the smallest form), `apply_policy` (the prompt's last
//! layer). The recent turns are the conversation itself, sent after
//! the system message.
//!
//! Trimming, when the estimate (Chinese-aware, [`crate::llm::estimate_tokens`]) is over
//! the budget, in this order: (1) cold references shrink to counts; (2) the article
//! goes by section ([`sections`]): the sections holding the selection, or those the
//! person's message names, in full, with an outline (heading, size, a short lead) of
//! the rest, which the model reads with `read_section`; (3) the comments go; (4) only
//! the paragraphs around the selection with the outline; (5) the outline alone; (6)
//! the source becomes an excerpt of its head with a note, then a few lines (a small
//! window with many tool schemas). A form that says nothing more than a larger one
//! (sections of an article without headings, paragraphs around no selection) is
//! skipped. The selection itself is quoted in every form.
//! The pinned layer is never trimmed: if it alone does not fit, the call is
//! CONTEXT_TOO_LONG.
//!
//! Secrets cannot enter by construction: the input holds only project, brand
//! profile, template, version, comment and media records, none of which has a field
//! for a key, token or setting; LLM profiles, quotas and the keychain are not inputs.

use serde::{Deserialize, Serialize};

use crate::error::ApiError;
use crate::llm::estimate_tokens;
use crate::model::{BrandProfile, Comment, ContentTemplate, MediaAsset, Project, Version};
use crate::store::{keys, Kind, Record, Store};

pub mod sections;

/// The permission mode of a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub enum Mode {
    /// Reads and proposals run; writes ask.
    #[default]
    Default,
    /// Read and propose only: every write is denied by the permission engine.
    Plan,
}

/// The part of the source a person's message is scoped to: a UTF-16 range of the
/// project's working copy (what CodeMirror counts, like every span in Inkstone) and
/// the text that was there when the message was sent.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Selection {
    pub from: u32,
    pub to: u32,
    pub text: String,
}

/// The longest selection a message may be scoped to, in characters.
pub const MAX_SELECTION_CHARS: usize = 20_000;
/// The most of a selection the working set quotes once the source is trimmed.
const SELECTION_EXCERPT_CHARS: usize = 1_500;

/// The byte index of UTF-16 offset `offset` in `source`; `None` past the end or inside
/// a character (between the two halves of a surrogate pair).
fn byte_at_utf16(source: &str, offset: u32) -> Option<usize> {
    let mut units = 0u32;
    for (byte, ch) in source.char_indices() {
        if units == offset {
            return Some(byte);
        }
        units += ch.len_utf16() as u32;
        if units > offset {
            return None;
        }
    }
    (units == offset).then_some(source.len())
}

impl Selection {
    /// Checks the selection against `source` (the working copy it was made in): a
    /// non-empty range inside it, on character boundaries, whose text is `text`.
    ///
    /// Errors: VALIDATION naming the field (`selection.to`, `selection.text`, ...) with
    /// a hint to select the text again.
    pub fn check(&self, source: &str) -> Result<(), ApiError> {
        let reselect = |e: ApiError| e.hint("reselect_text", "Select the text in the editor again, then send the task.");
        if self.text.is_empty() || self.from >= self.to {
            return Err(reselect(ApiError::validation("selection.to", "A selection covers at least one character: `to` must be greater than `from`.")));
        }
        if self.text.chars().count() > MAX_SELECTION_CHARS {
            return Err(ApiError::validation("selection.text", format!("A selection is at most {MAX_SELECTION_CHARS} characters."))
                .hint("shorter_selection", "Select a shorter passage, or send the task without a selection."));
        }
        let length: u32 = source.encode_utf16().count() as u32;
        let (Some(start), Some(end)) = (byte_at_utf16(source, self.from), byte_at_utf16(source, self.to)) else {
            let field = if byte_at_utf16(source, self.from).is_none() { "selection.from" } else { "selection.to" };
            return Err(reselect(ApiError::validation(
                field,
                format!("The selection {}–{} is not a range of the source ({length} UTF-16 units) on character boundaries.", self.from, self.to),
            )));
        };
        if source.get(start..end) != Some(self.text.as_str()) {
            return Err(reselect(ApiError::validation(
                "selection.text",
                format!("The selected text is not what the source holds at {}–{}; the source changed since it was selected.", self.from, self.to),
            )));
        }
        Ok(())
    }
}

/// One layer of a context snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextLayer {
    /// `pinned`, `working_set`, `session_summary`, `cold_refs`.
    pub name: String,
    pub text: String,
    pub tokens: u64,
    pub trimmed: bool,
}

/// The immutable context of a model call: the system message and its layers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextSnapshot {
    /// `ctx_<first 32 hex of sha256(system)>`: identical contexts share one snapshot.
    pub id: String,
    pub layers: Vec<ContextLayer>,
    /// The system message sent to the model (the layers joined).
    pub system: String,
    /// The id of every prompt layer used, in order (`guardrails@v1`, …,
    /// `context:<this snapshot's id>`, `apply-policy.drafting@v1`). Empty in
    /// snapshots made before prompts were versioned.
    #[serde(default)]
    pub prompt_layers: Vec<String>,
}

impl Record for ContextSnapshot {
    const KIND: Kind = Kind::ContextSnapshots;
    fn key(&self) -> Vec<u8> {
        self.id.as_bytes().to_vec()
    }
}

/// What a snapshot is built from.
#[derive(Debug, Clone, Copy)]
pub struct ContextInput<'a> {
    pub project: &'a Project,
    pub brand: Option<&'a BrandProfile>,
    pub template: Option<&'a ContentTemplate>,
    pub versions: &'a [Version],
    pub comments: &'a [Comment],
    pub media: &'a [MediaAsset],
    pub mode: Mode,
    /// The session summary (empty until the first compaction).
    pub session_summary: &'a str,
    /// The person's constraints on the session (their rejection reasons), verbatim,
    /// oldest first. Plain texts: the caller reads them.
    pub constraints: &'a [String],
    /// What the person pinned and their explicit instructions carried out of compacted
    /// conversation, verbatim, oldest first.
    pub pins: &'a [String],
    /// The session's intent as the model reads it (`crate::intent::render`); "" when
    /// nothing is known.
    pub intent: &'a str,
    /// Confirmed memory and habits (`crate::memory::for_context`), within their budget.
    pub memory: &'a [String],
    /// Memory lines left out for the budget.
    pub memory_left_out: usize,
    /// The selection the person's latest message is scoped to, if any.
    pub selection: Option<&'a Selection>,
    /// The person's latest message: the sections whose headings it names are the ones
    /// given in full when the article goes by section.
    pub task: &'a str,
    /// The composed prompt layers around the digest; `None`: the built-in drafting
    /// prompt for `mode` on the whole article.
    pub prompt: Option<&'a crate::prompts::Composed>,
    /// The performance summaries of the project's platforms (`performance::context`),
    /// "" when the setting or the workspace policy is off or there is nothing to say.
    /// Its own layer, `performance`, before the apply policy.
    pub performance: &'a str,
}

/// The typed records a model call's context is built from, read in one place so the
/// turn loop (sessions and runs alike) does no reads of its own.
#[derive(Debug, Clone)]
pub struct ContextRecords {
    pub project: Project,
    pub brand: Option<BrandProfile>,
    pub template: Option<ContentTemplate>,
    /// In key order (by number).
    pub versions: Vec<Version>,
    /// Every comment, resolved or not, in key order.
    pub comments: Vec<Comment>,
    pub media: Vec<MediaAsset>,
}

impl ContextRecords {
    /// The assembly input over these records, with the session's summary and the
    /// person's constraints.
    pub fn input<'a>(&'a self, mode: Mode, session_summary: &'a str, constraints: &'a [String], pins: &'a [String], selection: Option<&'a Selection>) -> ContextInput<'a> {
        ContextInput {
            project: &self.project,
            brand: self.brand.as_ref(),
            template: self.template.as_ref(),
            versions: &self.versions,
            comments: &self.comments,
            media: &self.media,
            mode,
            session_summary,
            constraints,
            pins,
            intent: "",
            memory: &[],
            memory_left_out: 0,
            selection,
            task: "",
            prompt: None,
            performance: "",
        }
    }
}

/// Reads what [`assemble`] needs for `project_id`: the project, its brand profile and
/// template (when they exist), versions, comments and images. Reads only.
///
/// Errors: NOT_FOUND when the project does not exist; store errors.
pub fn gather(store: &Store, project_id: &str) -> Result<ContextRecords, ApiError> {
    let project = crate::project::load(store, project_id)?;
    let brand = crate::project::brand(store, &project)?;
    let template = crate::project::template(store, &project)?;
    let versions = crate::project::versions::list(store, &project.id)?;
    let comments = store.scan::<Comment>(&keys::project_prefix(&project.id))?;
    let media = crate::project::media(store, &project.id)?;
    Ok(ContextRecords { project, brand, template, versions, comments, media })
}

/// The context could not be made to fit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooLong {
    pub needed: u64,
    pub budget: u64,
}

const SOURCE_EXCERPT_CHARS: usize = 1_500;
/// The layer of the performance summaries.
pub const PERFORMANCE_LAYER: &str = "performance";
/// What the performance layer says when the window leaves no room for it.
const PERFORMANCE_LEFT_OUT: &str = "# Performance history\n(left out for room; read_performance {platform} reads a platform's summary)\n";
/// The excerpt of the last trimming step.
const SHORT_EXCERPT_CHARS: usize = 300;

/// The prompt of `input`: the caller's, or the built-in drafting prompt for its mode.
fn composed(input: &ContextInput<'_>) -> crate::prompts::Composed {
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
fn pinned(input: &ContextInput<'_>, prompt: &crate::prompts::Composed) -> String {
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
enum Article {
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
fn applies(input: &ContextInput<'_>, article: Article) -> bool {
    let sections = sections::split(&input.project.source);
    match article {
        Article::Whole | Article::Excerpt(_) => true,
        Article::Sections => sections.len() > 1 && !focus(input, &sections).is_empty(),
        Article::AroundSelection => selection_bytes(input).is_some(),
        Article::Outline => sections.len() > 1,
    }
}

/// The working set with the article given as `article`.
fn working_set(input: &ContextInput<'_>, article: Article, with_comments: bool) -> String {
    let p = input.project;
    let mut out = format!("# Working set\ntitle: {}\n", p.title);
    let chars = p.source.chars().count();
    let sections = sections::split(&p.source);
    let read_on = format!("read_section {{sections: [numbers]}} reads any section in full; revision {}", p.revision);
    match article {
        Article::Excerpt(excerpt) if chars > excerpt => {
            let head: String = p.source.chars().take(excerpt).collect();
            out.push_str(&format!("source (first {excerpt} of {chars} characters; read_project_context has all of it, revision {}):\n{head}\n…\n", p.revision));
        }
        Article::Whole | Article::Excerpt(_) => out.push_str(&format!("source ({chars} characters):\n{}\n", p.source)),
        Article::Sections => {
            let full = focus(input, &sections);
            out.push_str(&format!("source ({chars} characters) by section, as it does not fit whole; {read_on}.\noutline:\n{}", sections::outline(&p.source, &sections, &full)));
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
                    sections::outline(&p.source, &sections, &[])
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
            out.push_str(&format!("source ({chars} characters) as an outline, as it does not fit whole; {read_on}.\noutline:\n{}", sections::outline(&p.source, &sections, &[])));
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

fn cold_refs(input: &ContextInput<'_>, counts_only: bool) -> String {
    if counts_only {
        return format!("# References\n{} versions, {} comments, {} images.\n", input.versions.len(), input.comments.len(), input.media.len());
    }
    let versions: Vec<String> = input.versions.iter().map(|v| format!("v{} {}", v.number, v.id)).collect();
    let comments: Vec<&str> = input.comments.iter().map(|c| c.id.as_str()).collect();
    let media: Vec<&str> = input.media.iter().map(|m| m.id.as_str()).collect();
    format!("# References\nversions: {}\ncomments: {}\nimages: {}\n", versions.join(", "), comments.join(", "), media.join(", "))
}

fn layer(name: &str, text: String, trimmed: bool) -> ContextLayer {
    ContextLayer { name: name.to_owned(), tokens: estimate_tokens(&text), text, trimmed }
}

/// The estimated tokens of the pinned layer (never trimmed, never summarised).
pub fn pinned_tokens(input: &ContextInput<'_>) -> u64 {
    estimate_tokens(&pinned(input, &composed(input)))
}

/// Builds the snapshot within `budget_tokens`, trimming in the documented order.
pub fn assemble(input: &ContextInput<'_>, budget_tokens: u64) -> Result<ContextSnapshot, TooLong> {
    // (the article's form, keep comments, counts-only refs) from full to smallest.
    let steps = [
        (Article::Whole, true, false),
        (Article::Whole, true, true),
        (Article::Sections, true, true),
        (Article::Sections, false, true),
        (Article::AroundSelection, false, true),
        (Article::Outline, false, true),
        (Article::Excerpt(SOURCE_EXCERPT_CHARS), true, true),
        (Article::Excerpt(SOURCE_EXCERPT_CHARS), false, true),
        (Article::Excerpt(SHORT_EXCERPT_CHARS), false, true),
    ];
    let prompt = composed(input);
    let pinned = layer("pinned", pinned(input, &prompt), false);
    let summary = layer("session_summary", input.session_summary.to_owned(), false);
    let policy = layer("apply_policy", prompt.tail(), false);
    let mut smallest = u64::MAX;
    for (article, comments, counts) in steps {
        if !applies(input, article) {
            continue;
        }
        let mut layers = vec![
            pinned.clone(),
            layer("working_set", working_set(input, article, comments), article != Article::Whole || !comments),
            summary.clone(),
            layer("cold_refs", cold_refs(input, counts), counts),
        ];
        if !input.performance.is_empty() {
            // The smallest form leaves the history to `read_performance`.
            if article == Article::Excerpt(SHORT_EXCERPT_CHARS) {
                layers.push(layer(PERFORMANCE_LAYER, PERFORMANCE_LEFT_OUT.to_owned(), true));
            } else {
                layers.push(layer(PERFORMANCE_LAYER, input.performance.to_owned(), false));
            }
        }
        layers.push(policy.clone());
        let needed: u64 = layers.iter().map(|l| l.tokens).sum();
        smallest = smallest.min(needed);
        if needed <= budget_tokens {
            return Ok(snapshot(layers, &prompt));
        }
    }
    Err(TooLong { needed: smallest, budget: budget_tokens })
}

/// A snapshot of `layers` (the system message is their texts joined) made with
/// `prompt`.
pub fn snapshot(layers: Vec<ContextLayer>, prompt: &crate::prompts::Composed) -> ContextSnapshot {
    let system = layers.iter().filter(|l| !l.text.is_empty()).map(|l| l.text.as_str()).collect::<Vec<_>>().join("\n");
    let hash = crate::store::sha256_ref(system.as_bytes());
    let id = format!("ctx_{}", hash.get(7..39).unwrap_or(&hash));
    let prompt_layers = prompt.ids(&id);
    ContextSnapshot { id, layers, system, prompt_layers }
}

/// A layer of a snapshot, with its token estimate.
pub fn named_layer(name: &str, text: String) -> ContextLayer {
    layer(name, text, false)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
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
        let field =
            |e: ApiError| (e.code, e.details.and_then(|d| d["field"].as_str().map(str::to_owned)).unwrap_or_default(), e.hints.into_iter().map(|h| h.id).collect::<Vec<_>>());
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
}
