//! Proposals: the reviewable change model. The model only ever proposes; a person
//! accepts all or some hunks of a proposal, which is one transaction ([`apply`]).
//!
//! - A proposal names its target (the source, a platform draft, a comment, the
//!   project's settings, or the session for artifacts such as an outline), its base
//!   (what it was computed against), its hunks (line changes without context, each
//!   with a stable id and the hash of its exact change), the findings of the text it
//!   would produce and which of them are new, and where it came from.
//! - Staleness is computed ([`staleness`]) from the base, never stored.
//! - A newer proposal for the same target from the same session or run supersedes the
//!   older one ([`stage_create`]).
//! - Edits from the model are anchored by quoted text ([`apply_edits`]), never by line
//!   numbers.
//! - [`apply`]: accept, reject (a reason becomes a durable constraint of the session),
//!   rebase (a three-way merge onto the current text).
//! - [`checkpoints`]: the project's state at a point of a session, and restoring it.
//! - [`staging`]: a session's working copy of staged proposals: stage, discard, and
//!   apply the staged set as one version.

pub mod apply;
pub mod audit_index;
pub mod checkpoints;
pub mod churn;
mod create;
mod edits;
pub mod open_index;
mod record;
pub mod staging;
mod view;

/// The version of the drafting prompt (rules and tool prompts) proposals record.
pub const PROMPT_VERSION: &str = "drafting@1";
/// Longest summary of a proposal, in characters.
pub const MAX_SUMMARY_CHARS: usize = 2_000;
/// Longest text a proposal may produce, in characters.
pub const MAX_TEXT_CHARS: usize = 1_000_000;
/// Most characters of a title candidate (a project title's bound).
pub const MAX_TITLE_CANDIDATE_CHARS: usize = 200;
pub use crate::pipeline::{draft_patch_text, POST_SEPARATOR};

pub use create::check_candidates;
pub use create::{create, new_findings, resolve_checklist_item, stage_create, NewProposal};
pub use edits::{apply_edits, Edit, EditError};
pub use record::{
    hunks, Applied, Base, Candidate, CarriedEdits, ChecklistItem, HunkSources, MetadataChange, Origin, Payload, Proposal, ProposalHunk, ProposalKind, ProposalLocation,
    ProposalStatus, ProposalView, Staleness, SupersededReason, Target,
};
pub(crate) use view::current_text;
pub use view::{list, load, staleness, text_hash, view, with_patch_text};
