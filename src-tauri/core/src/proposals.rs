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
pub mod checkpoints;
pub mod churn;
pub mod staging;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::diff::{self, Hunk, Splice};
use crate::error::{ApiError, ErrorCode};
use crate::kernel::Kernel;
use crate::model::{Comment, DraftContent, Platform, PlatformDraft, Post, Project, Timestamp};
use crate::pipeline::Finding;
use crate::store::{keys, sha256_ref, Batch, Kind, Record, Store};

/// The version of the drafting prompt (rules and tool prompts) proposals record.
pub const PROMPT_VERSION: &str = "drafting@1";
/// Longest summary of a proposal, in characters.
pub const MAX_SUMMARY_CHARS: usize = 2_000;
/// Longest text a proposal may produce, in characters.
pub const MAX_TEXT_CHARS: usize = 1_000_000;
/// Most characters of a title candidate (a project title's bound).
pub const MAX_TITLE_CANDIDATE_CHARS: usize = 200;
pub use crate::pipeline::{draft_patch_text, POST_SEPARATOR};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ProposalKind {
    SourcePatch,
    SourceRewrite,
    TitleCandidates,
    DraftPatch,
    TagCandidates,
    Outline,
    CommentReply,
    Checklist,
    Metadata,
}

impl ProposalKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ProposalKind::SourcePatch => "source_patch",
            ProposalKind::SourceRewrite => "source_rewrite",
            ProposalKind::TitleCandidates => "title_candidates",
            ProposalKind::DraftPatch => "draft_patch",
            ProposalKind::TagCandidates => "tag_candidates",
            ProposalKind::Outline => "outline",
            ProposalKind::CommentReply => "comment_reply",
            ProposalKind::Checklist => "checklist",
            ProposalKind::Metadata => "metadata",
        }
    }

    /// Which proposals replace each other: a source patch and a source rewrite change
    /// the same text; every other kind only replaces its own kind.
    fn family(self) -> &'static str {
        match self {
            ProposalKind::SourcePatch | ProposalKind::SourceRewrite => "source",
            other => other.as_str(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ProposalStatus {
    Proposed,
    Accepted,
    PartiallyAccepted,
    Rejected,
    Superseded,
}

/// What a proposal changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Target {
    /// The project's Markdown source (or, for title candidates, its title).
    Source,
    /// A saved platform draft.
    Draft { platform: Platform },
    /// A comment (a reply to it).
    #[serde(rename_all = "camelCase")]
    Comment { comment_id: String },
    /// The project's title, platforms, brand profile and template.
    Metadata,
    /// Nothing official: an artifact of the session (an outline, a checklist).
    Session,
}

impl Target {
    fn key(&self) -> String {
        match self {
            Target::Source => "source".to_owned(),
            Target::Draft { platform } => format!("draft:{}", platform.as_str()),
            Target::Comment { comment_id } => format!("comment:{comment_id}"),
            Target::Metadata => "metadata".to_owned(),
            Target::Session => "session".to_owned(),
        }
    }
}

/// What a proposal was computed against.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Base {
    /// The project's latest version number then.
    pub head: u32,
    /// The project's working-copy revision then.
    pub revision: u64,
    /// `sha256:` of the exact text the proposal changes (the source, the title, the
    /// draft's patch text, the settings), when it changes one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub text_hash: Option<String>,
    /// The draft's revision, for a draft target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub draft_revision: Option<u32>,
}

/// One change of a text proposal: a run of changed lines, without context.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ProposalHunk {
    /// Stable: derived from the change itself.
    pub id: String,
    /// `sha256:` of the position and the exact old and new lines.
    pub content_hash: String,
    /// 0-based line index in the base text, and the number of lines replaced.
    pub old_start: u32,
    pub old_len: u32,
    /// 0-based line index in the proposed text, and the number of lines it has there.
    pub new_start: u32,
    pub new_len: u32,
    pub old_text: String,
    pub new_text: String,
    /// For display: the change with context and word-level emphasis.
    pub display: Hunk,
}

impl ProposalHunk {
    fn from_change(change: diff::Change) -> ProposalHunk {
        let content_hash = sha256_ref(format!("{}\u{0}{}\u{0}{}\u{0}{}", change.old_start, change.old_len, change.old_text, change.new_text).as_bytes());
        let id = format!("hk_{}", &content_hash["sha256:".len().."sha256:".len() + 12]);
        ProposalHunk {
            id,
            content_hash,
            old_start: to_u32(change.old_start),
            old_len: to_u32(change.old_len),
            new_start: to_u32(change.new_start),
            new_len: to_u32(change.new_len),
            old_text: change.old_text,
            new_text: change.new_text,
            display: change.hunk,
        }
    }

    pub fn splice(&self) -> Splice<'_> {
        Splice { old_start: self.old_start as usize, old_len: self.old_len as usize, old_text: &self.old_text, new_text: &self.new_text }
    }
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The hunks of `base` → `proposed`.
pub fn hunks(base: &str, proposed: &str) -> Vec<ProposalHunk> {
    diff::changes(base, proposed).into_iter().map(ProposalHunk::from_change).collect()
}

/// A candidate (a title, a tag) with why the model suggests it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Candidate {
    pub text: String,
    #[serde(default)]
    pub rationale: String,
}

/// One item of a publish-readiness checklist.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ChecklistItem {
    pub id: String,
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub platform: Option<Platform>,
    pub blocking: bool,
    pub resolved: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub note: Option<String>,
}

/// Project settings a metadata proposal sets; `None` leaves a field as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct MetadataChange {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub platforms: Option<Vec<Platform>>,
    /// `Some(None)` clears the brand profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "string | null")]
    pub brand_profile_id: Option<Option<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "string | null")]
    pub template_id: Option<Option<String>>,
}

/// What a proposal holds besides its hunks, by kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Payload {
    /// Source patch, source rewrite, draft patch: the base text and the full proposed
    /// text (the hunks are the difference).
    #[serde(rename_all = "camelCase")]
    Text {
        base_text: String,
        proposed_text: String,
    },
    /// Title or tag candidates; the person picks.
    Candidates {
        candidates: Vec<Candidate>,
    },
    Outline {
        outline: String,
    },
    #[serde(rename_all = "camelCase")]
    CommentReply {
        comment_id: String,
        body: String,
    },
    Checklist {
        items: Vec<ChecklistItem>,
    },
    Metadata {
        change: MetadataChange,
    },
}

/// Where a proposal came from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Origin {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub run_id: Option<String>,
    /// The log sequence of the turn's start, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub turn: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tool_use_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub context_snapshot_id: Option<String>,
    pub model: String,
    pub profile_id: String,
    pub prompt_version: String,
    /// The id of every prompt layer of the model call that made it, in order
    /// (`core-identity@v1`, …, `context:<snapshot>`, `apply-policy.optimize@v1`).
    #[serde(default)]
    pub prompt_layers: Vec<String>,
    /// The proposal this one was rebased from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub rebased_from: Option<String>,
}

impl Origin {
    /// The session or run id.
    pub fn owner_id(&self) -> Option<&str> {
        self.session_id.as_deref().or(self.run_id.as_deref())
    }
}

/// Why a proposal was superseded; the successor is `superseded_by`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum SupersededReason {
    /// Its edits did not overlap a newer proposal's on the same base: the successor
    /// carries them too (see [`Proposal::carries`]), so nothing was lost.
    Merged,
    /// A newer proposal changes some of the same lines of the same base: its edits
    /// replace these there; the hunks it does not touch it carries.
    Overlapped,
    /// A newer proposal for the same target that cannot carry these edits (not a text
    /// proposal, or written over another base).
    Replaced,
    /// The person rebased it onto the current text; the successor carries the hunks
    /// that did not conflict.
    Rebased,
}

/// The edits of an earlier proposal a newer one carries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CarriedEdits {
    /// The earlier proposal (now superseded: `merged` when all its hunks are carried,
    /// `overlapped` when the newer one replaced some).
    pub proposal_id: String,
    /// Its summary, for the person.
    pub summary: String,
    /// Its hunks, by their ids in the carrying proposal.
    pub hunk_ids: Vec<String>,
}

/// What accepting a proposal made.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Applied {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub version: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub draft_revision: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub comment_id: Option<String>,
    /// The candidates taken (titles, tags).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<String>,
    pub by: String,
    pub at: Timestamp,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Proposal {
    pub id: String,
    pub project_id: String,
    pub kind: ProposalKind,
    pub target: Target,
    pub base: Base,
    /// For the person: what changes and why.
    pub summary: String,
    pub hunks: Vec<ProposalHunk>,
    pub payload: Payload,
    /// The quality findings of what the proposal would produce.
    pub findings: Vec<Finding>,
    /// Those of `findings` the base does not have ("this proposal introduces 最佳").
    pub new_findings: Vec<Finding>,
    pub origin: Origin,
    pub status: ProposalStatus,
    /// Hunk ids taken by an accept, and rejected by a reject.
    #[serde(default)]
    pub accepted_hunks: Vec<String>,
    #[serde(default)]
    pub rejected_hunks: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub rejection_reason: Option<String>,
    /// The proposal that superseded this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub superseded_by: Option<String>,
    /// Why it was superseded (absent in proposals superseded before the reason was
    /// recorded: read it as `replaced`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub superseded_reason: Option<SupersededReason>,
    /// Edits of earlier open proposals of the same session and base that this one also
    /// carries (hunks that touch none of its own); those proposals are superseded by
    /// this one, and the carried hunks stay separately acceptable here.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub carries: Vec<CarriedEdits>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub applied: Option<Applied>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

impl Record for Proposal {
    const KIND: Kind = Kind::Proposals;
    fn key(&self) -> Vec<u8> {
        keys::child(&self.project_id, &self.id)
    }

    fn derived(&self, batch: &mut Batch) -> Result<(), crate::store::StoreError> {
        batch.put(&ProposalLocation { proposal_id: self.id.clone(), project_id: self.project_id.clone() })?;
        Ok(())
    }
}

/// Proposal id → project, so a proposal can be read by its id alone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProposalLocation {
    pub proposal_id: String,
    pub project_id: String,
}

impl Record for ProposalLocation {
    const KIND: Kind = Kind::ProposalIndex;
    fn key(&self) -> Vec<u8> {
        self.proposal_id.as_bytes().to_vec()
    }
}

/// Whether a proposal can still be applied as it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Staleness {
    pub stale: bool,
    /// Why, for the person, when stale.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub reason: Option<String>,
    /// Not stale, but written over the changes staged in its session (the session's
    /// effective source), not over the official working copy: it can be staged on top
    /// of them, or accepted once they are applied, but not accepted on its own.
    #[serde(default)]
    pub based_on_staged: bool,
}

impl Staleness {
    fn stale(reason: impl Into<String>) -> Staleness {
        Staleness { stale: true, reason: Some(reason.into()), based_on_staged: false }
    }
}

/// A proposal with what is computed about it now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ProposalView {
    #[serde(flatten)]
    pub proposal: Proposal,
    pub stale: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub stale_reason: Option<String>,
    /// See [`Staleness::based_on_staged`].
    #[serde(default)]
    pub based_on_staged: bool,
}

/// The proposal `id`. Errors: NOT_FOUND.
pub fn load(store: &Store, id: &str) -> Result<Proposal, ApiError> {
    let missing = || ApiError::not_found("proposal", id).action("list_proposals", &[]);
    let location = store.get::<ProposalLocation>(id.as_bytes())?.ok_or_else(missing)?;
    store.get::<Proposal>(&keys::child(&location.project_id, id))?.ok_or_else(missing)
}

/// Every proposal of a project, oldest first.
pub fn list(store: &Store, project_id: &str) -> Result<Vec<Proposal>, ApiError> {
    Ok(store.scan::<Proposal>(&keys::project_prefix(project_id))?)
}

/// The view of a proposal now.
pub fn view(store: &Store, proposal: Proposal) -> Result<ProposalView, ApiError> {
    let staleness = staleness(store, &proposal)?;
    Ok(ProposalView { proposal, stale: staleness.stale, stale_reason: staleness.reason, based_on_staged: staleness.based_on_staged })
}

/// The hash of a text a proposal changes.
pub fn text_hash(text: &str) -> String {
    sha256_ref(text.as_bytes())
}

fn metadata_text(project: &Project) -> String {
    serde_json::json!({"title": project.title, "platforms": project.platforms, "brandProfileId": project.brand_profile_id, "templateId": project.template_id}).to_string()
}

/// `content` with its patch text replaced by `text`.
pub fn with_patch_text(content: &DraftContent, text: &str) -> DraftContent {
    match content {
        DraftContent::Html { digest, .. } => DraftContent::Html { html: text.to_owned(), digest: digest.clone() },
        DraftContent::Markdown { .. } => DraftContent::Markdown { markdown: text.to_owned() },
        DraftContent::Thread { .. } => {
            DraftContent::Thread { posts: text.split(POST_SEPARATOR).filter(|p| !p.trim().is_empty()).map(|p| Post { text: p.to_owned(), weighted_length: 0 }).collect() }
        }
        DraftContent::Card { tags, .. } => DraftContent::Card { body: text.to_owned(), tags: tags.clone() },
    }
}

/// The current text a proposal's base hash is about, and its revision, for its target.
pub(crate) fn current_text(store: &Store, proposal: &Proposal) -> Result<Option<String>, ApiError> {
    let project = crate::project::load(store, &proposal.project_id)?;
    Ok(match (&proposal.target, proposal.kind) {
        (Target::Source, ProposalKind::TitleCandidates) => Some(project.title),
        (Target::Source, _) => Some(project.source),
        (Target::Metadata, _) => Some(metadata_text(&project)),
        (Target::Draft { platform }, _) => crate::project::drafts::load(store, &project.id, *platform)?.map(|d| match proposal.kind {
            ProposalKind::TagCandidates => tags_text(&d),
            _ => draft_patch_text(&d.content),
        }),
        (Target::Comment { .. }, _) | (Target::Session, _) => None,
    })
}

fn tags_text(draft: &PlatformDraft) -> String {
    match &draft.content {
        DraftContent::Card { tags, .. } => tags.join("\n"),
        _ => String::new(),
    }
}

/// Whether `proposal`'s base still matches its target. Only an open proposal can be
/// stale; an artifact (outline, checklist) never is. A source text proposal whose base
/// is its session's staged effective source (not the official working copy) is not
/// stale but [`Staleness::based_on_staged`].
pub fn staleness(store: &Store, proposal: &Proposal) -> Result<Staleness, ApiError> {
    let fresh = Staleness { stale: false, reason: None, based_on_staged: false };
    if proposal.status != ProposalStatus::Proposed {
        return Ok(fresh);
    }
    if let Target::Comment { comment_id } = &proposal.target {
        let exists = store.get::<Comment>(&keys::comment(&proposal.project_id, comment_id))?.is_some();
        return Ok(if exists { fresh } else { Staleness::stale("The comment was deleted since this was written.") });
    }
    let Some(base_hash) = &proposal.base.text_hash else { return Ok(fresh) };
    // A draft's status change bumps its revision but not its text: staleness is about
    // the text the proposal changes.
    if let Target::Draft { platform } = &proposal.target {
        if crate::project::drafts::load(store, &proposal.project_id, *platform)?.is_none() {
            return Ok(Staleness::stale(format!("The {} draft no longer exists.", platform.as_str())));
        }
    }
    let current = current_text(store, proposal)?;
    Ok(match current {
        Some(text) if &text_hash(&text) == base_hash => fresh,
        Some(_) if on_staged_changes(store, proposal, base_hash)? => Staleness { based_on_staged: true, ..fresh },
        Some(_) => Staleness::stale(match proposal.target {
            Target::Metadata => "The project's settings changed since this was written.".to_owned(),
            _ if proposal.kind == ProposalKind::TitleCandidates => "The title changed since this was written.".to_owned(),
            Target::Draft { platform } => format!("The {} draft changed since this was written.", platform.as_str()),
            _ => "The source changed since this was written.".to_owned(),
        }),
        None => Staleness::stale("The target no longer exists."),
    })
}

/// True for a source text proposal whose base hash is the effective source of the
/// changes staged in its session.
fn on_staged_changes(store: &Store, proposal: &Proposal, base_hash: &str) -> Result<bool, ApiError> {
    let source_text = matches!(proposal.target, Target::Source) && matches!(proposal.kind, ProposalKind::SourcePatch | ProposalKind::SourceRewrite);
    let Some(session_id) = proposal.origin.session_id.as_deref().filter(|_| source_text) else { return Ok(false) };
    Ok(match staging::load(store, session_id)? {
        Some(staged) => staged.project_id == proposal.project_id && !staged.entries.is_empty() && text_hash(&staged.effective_source) == base_hash,
        None => false,
    })
}

/// One edit of a text, anchored by quoted text: `find` must occur exactly once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Edit {
    pub find: String,
    pub replace: String,
}

/// Why an anchored edit could not be placed; told to the model so it can retry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    #[error("edit {index}: `find` is empty; quote the text to replace")]
    Empty { index: usize },
    #[error("edit {index}: the quoted text was not found in the current text{near}")]
    Missing { index: usize, near: String },
    #[error("edit {index}: the quoted text occurs {count} times; quote more of the surrounding text so it occurs once")]
    Ambiguous { index: usize, count: usize },
    #[error("edits {first} and {second} overlap; merge them into one edit")]
    Overlap { first: usize, second: usize },
    #[error("edit {index} changes nothing (`find` equals `replace`)")]
    NoChange { index: usize },
}

/// `text` with every edit applied. Edits are numbered from 1 in errors; each `find`
/// must occur exactly once in `text` (the original, not the partly edited text) and
/// edits must not overlap.
pub fn apply_edits(text: &str, edits: &[Edit]) -> Result<String, EditError> {
    let mut placed: Vec<(usize, usize, usize)> = Vec::with_capacity(edits.len());
    for (i, edit) in edits.iter().enumerate() {
        let index = i + 1;
        if edit.find.is_empty() {
            return Err(EditError::Empty { index });
        }
        if edit.find == edit.replace {
            return Err(EditError::NoChange { index });
        }
        let found: Vec<usize> = text.match_indices(edit.find.as_str()).map(|(at, _)| at).collect();
        match found.len() {
            0 => return Err(EditError::Missing { index, near: near_miss(text, &edit.find) }),
            1 => placed.push((found[0], found[0] + edit.find.len(), i)),
            count => return Err(EditError::Ambiguous { index, count }),
        }
    }
    placed.sort();
    for pair in placed.windows(2) {
        if pair[1].0 < pair[0].1 {
            let (a, b) = (pair[0].2.min(pair[1].2) + 1, pair[0].2.max(pair[1].2) + 1);
            return Err(EditError::Overlap { first: a, second: b });
        }
    }
    let mut out = String::with_capacity(text.len());
    let mut cursor = 0;
    for (start, end, i) in placed {
        out.push_str(&text[cursor..start]);
        out.push_str(&edits[i].replace);
        cursor = end;
    }
    out.push_str(&text[cursor..]);
    Ok(out)
}

/// A hint when the quote differs only in whitespace or punctuation width.
fn near_miss(text: &str, find: &str) -> String {
    let squash = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
    let target = squash(find);
    if !target.is_empty() && squash(text).contains(&target) {
        return " (it occurs with different spacing or line breaks: quote the text exactly as it is, for example from read_project_context)".to_owned();
    }
    String::new()
}

/// What a new proposal holds, before the engine fills in base, hunks and findings.
#[derive(Debug, Clone)]
pub struct NewProposal {
    pub project_id: String,
    pub kind: ProposalKind,
    pub target: Target,
    pub summary: String,
    pub payload: Payload,
    pub origin: Origin,
}

/// Findings of `title` + `source` for `project`'s platforms and brand.
fn source_findings(kernel: &Kernel, project: &Project, title: &str, source: &str) -> Result<Vec<Finding>, ApiError> {
    let candidate = Project { title: title.to_owned(), source: source.to_owned(), ..project.clone() };
    crate::project::drafts::source_findings_of(kernel, &candidate)
}

/// Findings in `after` that `before` does not have (by check, matched text and
/// severity, counting repeats).
pub fn new_findings(before: &[Finding], after: &[Finding]) -> Vec<Finding> {
    let mut remaining: Vec<(&str, Option<&str>, crate::profiles::Severity)> = before.iter().map(|f| (f.check.as_str(), f.matched.as_deref(), f.severity)).collect();
    let mut out = Vec::new();
    for finding in after {
        let key = (finding.check.as_str(), finding.matched.as_deref(), finding.severity);
        if let Some(position) = remaining.iter().position(|k| *k == key) {
            remaining.swap_remove(position);
        } else {
            out.push(finding.clone());
        }
    }
    out
}

/// Builds a proposal from `new` against the current state of its target, and adds it
/// to `batch`, marking the open proposals of the same target from the same session or
/// run superseded. The caller holds the write lock and commits.
///
/// Errors: NOT_FOUND (project, draft, comment); VALIDATION when the proposal changes
/// nothing, a text is too long, or a payload does not fit its kind; READ_ONLY for a
/// publishing draft.
pub fn stage_create(kernel: &Kernel, batch: &mut Batch, new: NewProposal) -> Result<Proposal, ApiError> {
    let store = kernel.store();
    let project = crate::project::load(store, &new.project_id)?;
    crate::error::required_text("summary", &new.summary, MAX_SUMMARY_CHARS)?;
    let alternatives = open_alternatives(store, &project.id, &new)?;
    let (new, carried) = carry_edits(new, &alternatives);
    let summary = new.summary.clone();
    let mut base = Base { head: project.head, revision: project.revision, text_hash: None, draft_revision: None };
    let mut hunks_out = Vec::new();
    let (mut findings, mut introduced) = (Vec::new(), Vec::new());
    match (&new.target, new.kind, &new.payload) {
        (Target::Source, ProposalKind::SourcePatch | ProposalKind::SourceRewrite, Payload::Text { base_text, proposed_text }) => {
            check_text(proposed_text)?;
            if base_text == proposed_text {
                return Err(nothing_changes());
            }
            base.text_hash = Some(text_hash(base_text));
            hunks_out = hunks(base_text, proposed_text);
            let before = source_findings(kernel, &project, &project.title, base_text)?;
            findings = source_findings(kernel, &project, &project.title, proposed_text)?;
            introduced = new_findings(&before, &findings);
        }
        (Target::Source, ProposalKind::TitleCandidates, Payload::Candidates { candidates }) => {
            check_candidates(candidates, MAX_TITLE_CANDIDATE_CHARS)?;
            base.text_hash = Some(text_hash(&project.title));
            let before = source_findings(kernel, &project, &project.title, "")?;
            for candidate in candidates {
                let after = source_findings(kernel, &project, &candidate.text, "")?;
                introduced.extend(new_findings(&before, &after));
                findings.extend(after);
            }
        }
        (Target::Draft { platform }, ProposalKind::DraftPatch, Payload::Text { base_text, proposed_text }) => {
            let draft = crate::project::drafts::require(store, &project.id, *platform)?;
            if draft.status == crate::model::DraftStatus::Publishing {
                return Err(crate::project::drafts::read_only(&draft));
            }
            check_text(proposed_text)?;
            if base_text == proposed_text {
                return Err(nothing_changes());
            }
            base.draft_revision = Some(draft.revision);
            base.text_hash = Some(text_hash(base_text));
            hunks_out = hunks(base_text, proposed_text);
            let set = crate::project::drafts::profiles(kernel)?;
            let profile = crate::project::drafts::draft_profile(&set, *platform)?;
            let mut before = crate::pipeline::check_draft(profile, &draft.title, &crate::pipeline::normalize_content(with_patch_text(&draft.content, base_text)));
            findings = crate::pipeline::check_draft(profile, &draft.title, &crate::pipeline::normalize_content(with_patch_text(&draft.content, proposed_text)));
            // The word checks on the draft's text too (spans into the proposed text), so a
            // draft patch carries the banned or absolute terms it introduces.
            let brand = crate::project::brand(store, &project)?;
            let html = matches!(draft.content, DraftContent::Html { .. });
            let words = |text: &str| crate::quality::draft_findings(text, html, brand.as_ref(), set.risk_list("ad-law-zh@v2"), set.risk_list("growth-promise@v1"));
            before.extend(words(base_text));
            findings.extend(words(proposed_text));
            introduced = new_findings(&before, &findings);
        }
        (Target::Draft { platform }, ProposalKind::TagCandidates, Payload::Candidates { candidates }) => {
            check_candidates(candidates, 100)?;
            let draft = crate::project::drafts::require(store, &project.id, *platform)?;
            if !matches!(draft.content, DraftContent::Card { .. }) {
                return Err(ApiError::validation("target.platform", format!("{} drafts have no topic tags; tags belong to douyin and xiaohongshu drafts.", platform.as_str())));
            }
            base.draft_revision = Some(draft.revision);
            base.text_hash = Some(text_hash(&tags_text(&draft)));
        }
        (Target::Comment { comment_id }, ProposalKind::CommentReply, Payload::CommentReply { comment_id: payload_comment, body }) => {
            if comment_id != payload_comment {
                return Err(ApiError::validation("payload.commentId", "The reply's comment is not the proposal's target."));
            }
            crate::project::comments::load(store, &project.id, comment_id)?;
            crate::error::required_text("body", body, crate::project::comments::MAX_BODY_CHARS)?;
        }
        (Target::Metadata, ProposalKind::Metadata, Payload::Metadata { change }) => {
            base.text_hash = Some(text_hash(&metadata_text(&project)));
            if let Some(title) = &change.title {
                crate::error::required_text("title", title, 200)?;
            }
            if change == &MetadataChange::default() {
                return Err(nothing_changes());
            }
        }
        (Target::Session, ProposalKind::Outline, Payload::Outline { outline }) => {
            crate::error::required_text("outline", outline, 20_000)?;
        }
        (Target::Session, ProposalKind::Checklist, Payload::Checklist { items }) => {
            if items.is_empty() {
                return Err(ApiError::validation("payload.items", "A checklist has at least one item."));
            }
        }
        (target, kind, _) => {
            return Err(ApiError::validation("kind", format!("A {} proposal cannot target {} with this payload.", kind.as_str(), target.key())));
        }
    }
    let now = kernel.now();
    let proposal = Proposal {
        id: kernel.new_id("prp"),
        project_id: project.id.clone(),
        kind: new.kind,
        target: new.target,
        base,
        summary,
        hunks: hunks_out,
        payload: new.payload,
        findings,
        new_findings: introduced,
        origin: new.origin,
        status: ProposalStatus::Proposed,
        accepted_hunks: Vec::new(),
        rejected_hunks: Vec::new(),
        rejection_reason: None,
        superseded_by: None,
        superseded_reason: None,
        carries: Vec::new(),
        applied: None,
        created_at: now,
        updated_at: now,
    };
    let mut proposal = proposal;
    // Hunk ids are the same in the new proposal: same base, same position and lines.
    let here = |id: &String| proposal.hunks.iter().any(|h| &h.id == id);
    let mut carries: Vec<CarriedEdits> = Vec::new();
    for older in &alternatives {
        let Some((_, ids)) = carried.iter().find(|(id, _)| id == &older.id) else { continue };
        // Flattened: what the older one carried is attributed to where it came from.
        for earlier in &older.carries {
            let hunk_ids: Vec<String> = earlier.hunk_ids.iter().filter(|h| ids.contains(h) && here(h)).cloned().collect();
            if !hunk_ids.is_empty() {
                carries.push(CarriedEdits { hunk_ids, ..earlier.clone() });
            }
        }
        let from_earlier = |h: &String| older.carries.iter().any(|c| c.hunk_ids.contains(h));
        let hunk_ids: Vec<String> = ids.iter().filter(|h| !from_earlier(h) && here(h)).cloned().collect();
        if !hunk_ids.is_empty() {
            carries.push(CarriedEdits { proposal_id: older.id.clone(), summary: older.summary.clone(), hunk_ids });
        }
    }
    proposal.carries = carries;
    for mut older in alternatives {
        let live = older.hunks.iter().filter(|h| !older.rejected_hunks.contains(&h.id)).count();
        older.superseded_reason = Some(match carried.iter().find(|(id, _)| id == &older.id) {
            Some((_, ids)) if ids.len() == live => SupersededReason::Merged,
            _ if same_base_text(&older.payload, &proposal.payload) => SupersededReason::Overlapped,
            _ => SupersededReason::Replaced,
        });
        older.status = ProposalStatus::Superseded;
        older.superseded_by = Some(proposal.id.clone());
        older.updated_at = now;
        batch.put(&older)?;
    }
    batch.put(&proposal)?;
    Ok(proposal)
}

/// The open proposals a new one supersedes: same target and kind family, from the same
/// session or run, not staged in that session (staged proposals are part of its
/// working copy, not alternatives to the new one, which may be written on top of
/// them). Oldest first.
fn open_alternatives(store: &Store, project_id: &str, new: &NewProposal) -> Result<Vec<Proposal>, ApiError> {
    let Some(owner) = new.origin.owner_id() else { return Ok(Vec::new()) };
    let staged: Vec<String> = match staging::load(store, owner)? {
        Some(staged) => staged.entries.into_iter().map(|e| e.proposal_id).collect(),
        None => Vec::new(),
    };
    Ok(list(store, project_id)?
        .into_iter()
        .filter(|older| {
            older.status == ProposalStatus::Proposed
                && older.target.key() == new.target.key()
                && older.kind.family() == new.kind.family()
                && older.origin.owner_id() == Some(owner)
                && !staged.contains(&older.id)
        })
        .collect())
}

fn same_base_text(a: &Payload, b: &Payload) -> bool {
    matches!((a, b), (Payload::Text { base_text: a, .. }, Payload::Text { base_text: b, .. }) if a == b)
}

/// `new` with the edits it can carry from `alternatives`, and per alternative the ids
/// of the hunks it carries: from text proposals on the same base text, every live hunk
/// that touches none of the new edits (nor one carried before). A model that proposes
/// the opening and then the ending in one turn thus leaves one proposal with both, each
/// hunk separately acceptable. Touching hunks are never guessed apart: the newer edit
/// replaces the older there.
fn carry_edits(mut new: NewProposal, alternatives: &[Proposal]) -> (NewProposal, Vec<(String, Vec<String>)>) {
    let mut carried: Vec<(String, Vec<String>)> = Vec::new();
    let Payload::Text { base_text, proposed_text } = &mut new.payload else { return (new, carried) };
    if base_text == proposed_text {
        // Refused as changing nothing, whatever could be carried.
        return (new, carried);
    }
    for older in alternatives {
        if !matches!(&older.payload, Payload::Text { base_text: older_base, .. } if older_base == base_text) {
            continue;
        }
        let ours = diff::changes(base_text, proposed_text);
        let theirs: Vec<&ProposalHunk> = older
            .hunks
            .iter()
            .filter(|h| !older.rejected_hunks.contains(&h.id))
            .filter(|h| !ours.iter().any(|c| apply::touches(h.old_start as usize, h.old_len as usize, c.old_start, c.old_len)))
            .collect();
        if theirs.is_empty() {
            continue;
        }
        let mut splices: Vec<Splice<'_>> = ours.iter().map(|c| Splice { old_start: c.old_start, old_len: c.old_len, old_text: &c.old_text, new_text: &c.new_text }).collect();
        splices.extend(theirs.iter().map(|h| h.splice()));
        let Some(text) = diff::apply_changes(base_text, &splices) else { continue };
        *proposed_text = text;
        carried.push((older.id.clone(), theirs.iter().map(|h| h.id.clone()).collect()));
    }
    if !carried.is_empty() {
        let summaries: Vec<&str> = alternatives.iter().filter(|p| carried.iter().any(|(id, _)| id == &p.id)).map(|p| p.summary.as_str()).chain([new.summary.as_str()]).collect();
        new.summary = summaries.join("; ").chars().take(MAX_SUMMARY_CHARS).collect();
    }
    (new, carried)
}

/// Creates a proposal in its own durable transaction (see [`stage_create`]).
pub fn create(kernel: &Kernel, new: NewProposal) -> Result<Proposal, ApiError> {
    let _guard = kernel.write_lock();
    let mut batch = Batch::new();
    let proposal = stage_create(kernel, &mut batch, new)?;
    kernel.store().apply(batch, crate::store::Durability::Durable)?;
    Ok(proposal)
}

fn check_text(text: &str) -> Result<(), ApiError> {
    if text.chars().count() > MAX_TEXT_CHARS {
        return Err(ApiError::validation("text", format!("A proposed text holds at most {MAX_TEXT_CHARS} characters.")));
    }
    Ok(())
}

pub(crate) fn check_candidates(candidates: &[Candidate], max_chars: usize) -> Result<(), ApiError> {
    if candidates.is_empty() || candidates.len() > 20 {
        return Err(ApiError::validation("candidates", "Give between 1 and 20 candidates."));
    }
    for (i, c) in candidates.iter().enumerate() {
        crate::error::required_text(&format!("candidates[{i}].text"), &c.text, max_chars)?;
        if c.text.contains(['\n', '\r']) {
            return Err(ApiError::validation(&format!("candidates[{i}].text"), "A candidate is one line."));
        }
    }
    Ok(())
}

fn nothing_changes() -> ApiError {
    ApiError::new(ErrorCode::Validation, "The proposal changes nothing: the proposed text equals the current one.")
        .hint("change_something", "Propose a change that differs from the text.")
}

/// Marks item `item_id` of checklist proposal `proposal_id` resolved (with an optional
/// note), in its own durable transaction. Resolving an item changes nothing official:
/// the checklist is the session's artifact.
///
/// Errors: NOT_FOUND (proposal, item); VALIDATION when the proposal is not a checklist
/// or the note is too long; CONFLICT when the checklist was superseded or rejected.
pub fn resolve_checklist_item(kernel: &Kernel, proposal_id: &str, item_id: &str, note: Option<&str>) -> Result<(Proposal, ChecklistItem), ApiError> {
    let note = match note.map(str::trim) {
        None | Some("") => None,
        Some(note) => Some(crate::error::bounded_text("note", note, MAX_SUMMARY_CHARS)?),
    };
    let _guard = kernel.write_lock();
    let mut proposal = load(kernel.store(), proposal_id)?;
    if matches!(proposal.status, ProposalStatus::Superseded | ProposalStatus::Rejected) {
        let mut error = ApiError::new(ErrorCode::Conflict, format!("Checklist {proposal_id} was {}; its items can no longer be resolved.", proposal.status_name()));
        if let Some(newer) = &proposal.superseded_by {
            error = error.hint_with("open_newer_checklist", format!("Resolve the item on the newer checklist {newer}."), &[("newer", newer)]);
        }
        return Err(error);
    }
    let Payload::Checklist { items } = &mut proposal.payload else {
        return Err(ApiError::validation("proposalId", format!("Proposal {proposal_id} is a {} proposal, not a checklist.", proposal.kind.as_str())));
    };
    let Some(item) = items.iter_mut().find(|i| i.id == item_id) else {
        let ids: Vec<&str> = items.iter().map(|i| i.id.as_str()).collect();
        let ids = ids.join(", ");
        return Err(ApiError::not_found("checklist item", item_id).hint_with("item_ids", format!("The checklist's items are: {ids}."), &[("ids", &ids)]));
    };
    item.resolved = true;
    if note.is_some() {
        item.note = note;
    }
    let item = item.clone();
    proposal.updated_at = kernel.now();
    let mut batch = Batch::new();
    batch.put(&proposal)?;
    kernel.store().apply(batch, crate::store::Durability::Durable)?;
    Ok((proposal, item))
}

impl Proposal {
    /// The status as its wire name (`proposed`, `superseded`, ...).
    pub fn status_name(&self) -> &'static str {
        match self.status {
            ProposalStatus::Proposed => "proposed",
            ProposalStatus::Accepted => "accepted",
            ProposalStatus::PartiallyAccepted => "partially_accepted",
            ProposalStatus::Rejected => "rejected",
            ProposalStatus::Superseded => "superseded",
        }
    }
}
