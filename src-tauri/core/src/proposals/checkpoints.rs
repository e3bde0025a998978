//! Checkpoints: the project's state at a point of a session or run — its head version,
//! working-copy revision (and the working copy itself when it differs from the head
//! version), each saved draft as it stood, and the log's sequence number. Restoring
//! one ([`stage_restore`]) makes new versions and draft revisions; history is never
//! rewritten or deleted.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::ApiError;
use crate::kernel::Kernel;
use crate::model::{ActivityKind, DraftStatus, Platform, PlatformDraft, Project, Timestamp, VersionOrigin, VersionSummary};
use crate::project::versions::RestoreContent;
use crate::store::{keys, Batch, Durability, Kind, Record, Store};

/// Why a checkpoint exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckpointReason {
    /// The person made it.
    Manual,
    /// The assistant made it with `create_checkpoint` (approved by the person).
    Assistant,
    /// The harness, before a turn (kept when the turn produced more than one proposal).
    BeforeTurn,
    /// The harness, after a turn that produced more than one proposal.
    AfterTurn,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Checkpoint {
    pub id: String,
    /// The session or run.
    pub owner_id: String,
    pub project_id: String,
    /// The person's or the assistant's words; for the harness's own checkpoints, the
    /// English wording of `label_id` (kept for the CLI and for checkpoints stored
    /// before `label_id` existed).
    pub label: String,
    /// For a checkpoint the harness named: what the label says, for the UI to word
    /// in the person's language (`turn_before`, `turn_after`, with `labelParams`
    /// `proposals`). Absent for a person's or the assistant's label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_id: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub label_params: BTreeMap<String, String>,
    pub reason: CheckpointReason,
    /// The project's latest version number then (0: none yet).
    pub head: u32,
    /// The working-copy revision then.
    pub revision: u64,
    /// The working copy, when it differed from the head version (unsaved changes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_source: Option<String>,
    /// Every saved draft as it stood (each carries its revision).
    pub drafts: Vec<PlatformDraft>,
    /// The owner's log sequence number when it was made.
    pub sequence: u64,
    pub created_at: Timestamp,
}

impl Record for Checkpoint {
    const KIND: Kind = Kind::Checkpoints;
    fn key(&self) -> Vec<u8> {
        keys::child(&self.owner_id, &self.id)
    }
}

/// The checkpoints of a session or run, oldest first.
pub fn list(store: &Store, owner_id: &str) -> Result<Vec<Checkpoint>, ApiError> {
    Ok(store.scan::<Checkpoint>(&keys::project_prefix(owner_id))?)
}

/// The checkpoint `id` of `owner_id`. Errors: NOT_FOUND.
pub fn load(store: &Store, owner_id: &str, id: &str) -> Result<Checkpoint, ApiError> {
    let key = keys::child(owner_id, id);
    store.get::<Checkpoint>(&key)?.ok_or_else(|| ApiError::not_found("checkpoint", id).action("list_checkpoints", &[]))
}

/// A checkpoint of `project_id` for `owner_id` as the project stands now (reads only).
pub fn capture(kernel: &Kernel, owner_id: &str, project_id: &str, label: &str, reason: CheckpointReason, sequence: u64) -> Result<Checkpoint, ApiError> {
    let project = crate::project::load(kernel.store(), project_id)?;
    capture_of(kernel, owner_id, &project, label, reason, sequence)
}

/// [`capture`] of a project already read (a turn reads it once for its checkpoint and
/// its intent).
pub fn capture_of(kernel: &Kernel, owner_id: &str, project: &crate::model::Project, label: &str, reason: CheckpointReason, sequence: u64) -> Result<Checkpoint, ApiError> {
    let store = kernel.store();
    let head_hash = match project.head {
        0 => None,
        head => Some(crate::project::versions::load(store, &project.id, head)?.content_hash),
    };
    let unsaved = head_hash.as_deref() != Some(crate::project::versions::content_hash(&project.title, &project.source).as_str());
    Ok(Checkpoint {
        id: kernel.new_id("chk"),
        owner_id: owner_id.to_owned(),
        project_id: project.id.clone(),
        label: label.to_owned(),
        label_id: None,
        label_params: BTreeMap::new(),
        reason,
        head: project.head,
        revision: project.revision,
        working_title: unsaved.then(|| project.title.clone()),
        working_source: unsaved.then(|| project.source.clone()),
        drafts: crate::project::drafts::list(store, &project.id)?,
        sequence,
        created_at: kernel.now(),
    })
}

impl Checkpoint {
    /// Names a checkpoint by a wording id with its values (`label` is the English).
    pub fn worded(mut self, id: &str, english: String, params: &[(&str, String)]) -> Self {
        self.label = english;
        self.label_id = Some(id.to_owned());
        self.label_params = params.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect();
        self
    }
}

/// Makes a checkpoint in its own durable transaction.
pub fn create(kernel: &Kernel, owner_id: &str, project_id: &str, label: &str, reason: CheckpointReason, sequence: u64) -> Result<Checkpoint, ApiError> {
    let label = crate::error::bounded_text("label", label, 200)?;
    let _guard = kernel.write_lock();
    let checkpoint = capture(kernel, owner_id, project_id, &label, reason, sequence)?;
    let mut batch = Batch::new();
    batch.put(&checkpoint)?;
    kernel.store().apply(batch, Durability::Durable)?;
    Ok(checkpoint)
}

/// A draft of the checkpoint that a restore did not put back, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SkippedDraft {
    pub platform: Platform,
    pub reason: String,
}

/// What a checkpoint restore staged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckpointRestored {
    pub checkpoint_id: String,
    /// The project after the restore.
    pub project: Project,
    /// The version that keeps unsaved working-copy changes, when there were any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autosnapshot: Option<VersionSummary>,
    /// The new version whose content is the checkpoint's (origin `checkpoint`).
    pub version: VersionSummary,
    /// Drafts that differed and now hold the checkpoint's content (a new revision each).
    pub drafts_restored: Vec<PlatformDraft>,
    /// Drafts that already held the checkpoint's content.
    pub drafts_unchanged: Vec<Platform>,
    /// Drafts of the checkpoint left as they are (a draft being published).
    pub drafts_skipped: Vec<SkippedDraft>,
    /// Drafts saved after the checkpoint was made: left as they are.
    pub drafts_newer: Vec<Platform>,
    /// True when the owner's staged set was dropped (it sat on the replaced working copy).
    pub staging_discarded: bool,
}

/// Adds a restore of `checkpoint` to `batch` (the caller holds the write lock and
/// commits once):
///
/// - unsaved working-copy changes are first kept as an autosnapshot version;
/// - a new version (origin `checkpoint`) holds the checkpoint's content: its recorded
///   working copy, else its head version's content; a checkpoint made before the
///   first version with no recorded working copy (which [`capture`] never makes)
///   restores an empty source under the project's current title, since there is no
///   earlier title to go back to;
/// - the working copy becomes that content, next revision;
/// - each draft of the checkpoint that differs now gets a new revision with the
///   checkpoint's title and content (its status stays: it records publishing); a
///   `publishing` draft is never changed and is reported; drafts saved after the
///   checkpoint are left as they are and reported;
/// - the owner's staged set is dropped, since it was staged on the replaced working copy;
/// - one activity entry (`checkpoint_restored`).
///
/// Nothing is deleted: every earlier version and draft revision stays in history.
/// Errors: NOT_FOUND (project, head version).
pub fn stage_restore(kernel: &Kernel, batch: &mut Batch, checkpoint: &Checkpoint) -> Result<CheckpointRestored, ApiError> {
    let store = kernel.store();
    let mut project = crate::project::load(store, &checkpoint.project_id)?;
    let (title, source) = match (&checkpoint.working_title, &checkpoint.working_source) {
        (Some(title), Some(source)) => (title.clone(), source.clone()),
        _ if checkpoint.head > 0 => {
            let version = crate::project::versions::load(store, &project.id, checkpoint.head)?;
            (version.title, version.source)
        }
        _ => (project.title.clone(), String::new()),
    };
    // Ids stay in the version's origin (`checkpoint`), out of human text.
    let named = if checkpoint.label.is_empty() { "checkpoint".to_owned() } else { format!("checkpoint \"{}\"", checkpoint.label) };
    let restored = crate::project::versions::stage_restore_content(
        kernel,
        batch,
        &mut project,
        RestoreContent {
            title: &title,
            source: &source,
            origin: &VersionOrigin::Checkpoint { checkpoint_id: checkpoint.id.clone() },
            message: &format!("Restored {named}"),
            autosnapshot_message: &format!("Unsaved changes kept before restoring {named}"),
            message_id: if checkpoint.label.is_empty() { "restored_checkpoint_unnamed" } else { "restored_checkpoint" },
            autosnapshot_message_id: if checkpoint.label.is_empty() { "autosnapshot_before_checkpoint_unnamed" } else { "autosnapshot_before_checkpoint" },
            message_params: &checkpoint_message_params(checkpoint),
        },
    )?;
    let now_drafts = crate::project::drafts::list(store, &project.id)?;
    let (mut drafts_restored, mut drafts_unchanged, mut drafts_skipped) = (Vec::new(), Vec::new(), Vec::new());
    for saved in &checkpoint.drafts {
        let current = now_drafts.iter().find(|d| d.platform == saved.platform);
        match current {
            Some(current) if current.status == DraftStatus::Publishing => drafts_skipped
                .push(SkippedDraft { platform: saved.platform, reason: format!("The {} draft is being published, so it was left as it is.", saved.platform.as_str()) }),
            Some(current) if current.title == saved.title && current.content == saved.content => drafts_unchanged.push(saved.platform),
            _ => drafts_restored.push(crate::project::drafts::stage_restore(kernel, batch, current, saved)?),
        }
    }
    let drafts_newer: Vec<Platform> = now_drafts.iter().map(|d| d.platform).filter(|p| !checkpoint.drafts.iter().any(|saved| saved.platform == *p)).collect();
    let staging_discarded = super::staging::load(store, &checkpoint.owner_id)?.is_some();
    if staging_discarded {
        batch.delete::<super::staging::Staging>(checkpoint.owner_id.as_bytes().to_vec());
    }
    let mut summary = format!("Restored {named} of \"{}\" as version {}", project.title, restored.restored.number);
    let names = |platforms: &mut dyn Iterator<Item = Platform>| platforms.map(|p| p.as_str()).collect::<Vec<_>>().join(", ");
    if !drafts_restored.is_empty() {
        summary.push_str(&format!("; drafts restored: {}", names(&mut drafts_restored.iter().map(|d| d.platform))));
    }
    if !drafts_skipped.is_empty() {
        summary.push_str(&format!("; left while publishing: {}", names(&mut drafts_skipped.iter().map(|d| d.platform))));
    }
    batch.put(&kernel.activity(Some(&project.id), ActivityKind::CheckpointRestored, summary)?)?;
    Ok(CheckpointRestored {
        checkpoint_id: checkpoint.id.clone(),
        project,
        autosnapshot: restored.autosnapshot.as_ref().map(VersionSummary::from),
        version: VersionSummary::from(&restored.restored),
        drafts_restored,
        drafts_unchanged,
        drafts_skipped,
        drafts_newer,
        staging_discarded,
    })
}

/// The values of a checkpoint restore's version messages: the label, and, for a label
/// the harness named, its id (`labelId`) and values, so the UI words the name too.
fn checkpoint_message_params(checkpoint: &Checkpoint) -> std::collections::BTreeMap<String, String> {
    let mut params = std::collections::BTreeMap::new();
    if !checkpoint.label.is_empty() {
        params.insert("label".to_owned(), checkpoint.label.clone());
    }
    if let Some(id) = &checkpoint.label_id {
        params.insert("labelId".to_owned(), id.clone());
        params.extend(checkpoint.label_params.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    params
}
