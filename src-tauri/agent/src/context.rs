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

mod layers;
pub mod sections;

use layers::{applies, cold_refs, composed, layer, pinned, working_set, Article};

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
    // Made once: `assemble(input, 0)` (the smallest form, for the fixed part of every
    // request) walks every step. The first step always applies, so the full references
    // and history are always needed; the counts-only references only past it.
    let refs = layer("cold_refs", cold_refs(input, false), false);
    let mut counted: Option<ContextLayer> = None;
    let history = (!input.performance.is_empty()).then(|| layer(PERFORMANCE_LAYER, input.performance.to_owned(), false));
    let sections = sections::split(&input.project.source);
    let mut smallest = u64::MAX;
    for (article, comments, counts) in steps {
        if !applies(input, &sections, article) {
            continue;
        }
        let mut layers = vec![
            pinned.clone(),
            layer("working_set", working_set(input, &sections, article, comments), article != Article::Whole || !comments),
            summary.clone(),
            if counts { counted.get_or_insert_with(|| layer("cold_refs", cold_refs(input, true), true)).clone() } else { refs.clone() },
        ];
        if let Some(history) = &history {
            // The smallest form leaves the history to `read_performance`.
            if article == Article::Excerpt(SHORT_EXCERPT_CHARS) {
                layers.push(layer(PERFORMANCE_LAYER, PERFORMANCE_LEFT_OUT.to_owned(), true));
            } else {
                layers.push(history.clone());
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
mod tests;
