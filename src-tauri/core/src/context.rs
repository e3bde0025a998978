//! Context assembly: the immutable snapshot a model call starts from, built in layers
//! from typed project records only.
//!
//! Layers, in the order they are sent: `pinned` (the composed prompt layers before the
//! context digest, see [`crate::prompts`]: identity, persona, guardrails, output
//! contract, entry, mode; then the digest's project, brand profile, active platforms, and the person's constraints: the
//! reasons they gave when rejecting proposals, verbatim, and what they pinned or instructed,
//! verbatim), `working_set` (title, source, open comments), `session_summary` (the
//! summary of compacted conversation, empty until the first compaction),
//! `cold_refs` (ids only), `apply_policy` (the prompt's last layer). The recent turns are the conversation itself, sent after
//! the system message.
//!
//! Trimming, when the estimate (Chinese-aware, [`crate::llm::estimate_tokens`]) is over
//! the budget, in this order: (1) cold references shrink to counts; (2) the source in
//! the working set becomes an excerpt of its head with a note; (3) the comments go;
//! (4) the excerpt shortens to a few lines (a small window with many tool schemas).
//! The pinned layer is never trimmed: if it alone does not fit, the call is
//! CONTEXT_TOO_LONG.
//!
//! Secrets cannot enter by construction: the input holds only project, brand
//! profile, template, version, comment and media records, none of which has a field
//! for a key, token or setting; LLM profiles, quotas and the keychain are not inputs.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::error::ApiError;
use crate::llm::estimate_tokens;
use crate::model::{BrandProfile, Comment, ContentTemplate, MediaAsset, Project, Version};
use crate::store::{keys, Kind, Record, Store};

/// The permission mode of a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS, Default)]
#[serde(rename_all = "camelCase")]
pub enum Mode {
    /// Reads and proposals run; writes ask.
    #[default]
    Default,
    /// Read and propose only: every write is denied by the permission engine.
    Plan,
}

/// One layer of a context snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ContextLayer {
    /// `pinned`, `working_set`, `session_summary`, `cold_refs`.
    pub name: String,
    pub text: String,
    pub tokens: u64,
    pub trimmed: bool,
}

/// The immutable context of a model call: the system message and its layers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
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
    /// The composed prompt layers around the digest; `None`: the built-in drafting
    /// prompt for `mode` on the whole article.
    pub prompt: Option<&'a crate::prompts::Composed>,
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
    pub fn input<'a>(&'a self, mode: Mode, session_summary: &'a str, constraints: &'a [String], pins: &'a [String]) -> ContextInput<'a> {
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
            prompt: None,
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
    out
}

/// The working set; `excerpt`: at most this many characters of the source.
fn working_set(input: &ContextInput<'_>, excerpt: Option<usize>, with_comments: bool) -> String {
    let p = input.project;
    let mut out = format!("# Working set\ntitle: {}\n", p.title);
    let chars = p.source.chars().count();
    if let Some(excerpt) = excerpt.filter(|n| chars > *n) {
        let head: String = p.source.chars().take(excerpt).collect();
        out.push_str(&format!("source (first {excerpt} of {chars} characters; read_project_context has all of it, revision {}):\n{head}\n…\n", p.revision));
    } else {
        out.push_str(&format!("source ({chars} characters):\n{}\n", p.source));
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
    // (excerpt of the source, keep comments, counts-only refs) from full to smallest.
    let steps =
        [(None, true, false), (None, true, true), (Some(SOURCE_EXCERPT_CHARS), true, true), (Some(SOURCE_EXCERPT_CHARS), false, true), (Some(SHORT_EXCERPT_CHARS), false, true)];
    let prompt = composed(input);
    let pinned = layer("pinned", pinned(input, &prompt), false);
    let summary = layer("session_summary", input.session_summary.to_owned(), false);
    let policy = layer("apply_policy", prompt.tail(), false);
    let mut last_needed = 0;
    for (excerpt, comments, counts) in steps {
        let layers = vec![
            pinned.clone(),
            layer("working_set", working_set(input, excerpt, comments), excerpt.is_some() || !comments),
            summary.clone(),
            layer("cold_refs", cold_refs(input, counts), counts),
            policy.clone(),
        ];
        let needed: u64 = layers.iter().map(|l| l.tokens).sum();
        last_needed = needed;
        if needed <= budget_tokens {
            return Ok(snapshot(layers, &prompt));
        }
    }
    Err(TooLong { needed: last_needed, budget: budget_tokens })
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
            prompt: None,
        }
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
}
