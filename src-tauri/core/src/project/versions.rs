//! Versions: immutable, numbered snapshots of a project's working copy. [`stage_next`]
//! is the one place that numbers versions.

use std::collections::BTreeMap;

use sha2::{Digest, Sha256};

use crate::error::ApiError;
use crate::kernel::Kernel;
use crate::model::{ActivityKind, Project, Version, VersionOrigin, VersionSummary};
use crate::store::{keys, Batch, Store};

/// `sha256:` + hex over the title, a NUL, and the source.
pub fn content_hash(title: &str, source: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(title.as_bytes());
    hasher.update([0u8]);
    hasher.update(source.as_bytes());
    format!("sha256:{}", hex::encode(hasher.finalize()))
}

/// Version `number` of a project. Errors: NOT_FOUND.
pub fn load(store: &Store, project_id: &str, number: u32) -> Result<Version, ApiError> {
    store
        .get::<Version>(&keys::version(project_id, number))?
        .ok_or_else(|| ApiError::not_found("version", format!("{number} of project {project_id}")).action("list_versions", &[("project", project_id)]))
}

/// Every version of a project, oldest first.
pub fn list(store: &Store, project_id: &str) -> Result<Vec<Version>, ApiError> {
    Ok(store.scan::<Version>(&keys::project_prefix(project_id))?)
}

/// Summaries of every version of a project, newest first.
pub fn summaries(store: &Store, project_id: &str) -> Result<Vec<VersionSummary>, ApiError> {
    Ok(list(store, project_id)?.iter().rev().map(VersionSummary::from).collect())
}

/// What a new version holds and why it exists.
#[derive(Debug, Clone, Copy)]
pub struct NewVersion<'a> {
    pub title: &'a str,
    pub source: &'a str,
    pub origin: &'a VersionOrigin,
    pub message: Option<&'a str>,
    /// The language-neutral form of a message the core wrote (see [`Version::message_id`]).
    pub message_id: Option<&'a str>,
    pub message_params: Option<&'a BTreeMap<String, String>>,
}

/// Adds the next version of `project` to `batch`: number `head + 1`, and moves the
/// project's head (the caller puts the project). The one place that numbers versions.
pub fn stage_next(kernel: &Kernel, batch: &mut Batch, project: &mut Project, new: NewVersion<'_>) -> Result<Version, ApiError> {
    let author = kernel.author()?;
    stage_numbered(kernel, batch, project, new, &author)
}

/// Adds a colleague's version pulled from the workspace server (origin
/// [`VersionOrigin::Pulled`], their name as the author) as the next version of
/// `project`. It has no delivery job: it came from the server.
pub fn stage_pulled(kernel: &Kernel, batch: &mut Batch, project: &mut Project, new: NewVersion<'_>, author: &str) -> Result<Version, ApiError> {
    stage_numbered(kernel, batch, project, new, author)
}

fn stage_numbered(kernel: &Kernel, batch: &mut Batch, project: &mut Project, new: NewVersion<'_>, author: &str) -> Result<Version, ApiError> {
    let number = project.head + 1;
    let version = Version {
        id: kernel.new_id("ver"),
        project_id: project.id.clone(),
        number,
        title: new.title.to_owned(),
        source: new.source.to_owned(),
        author: author.to_owned(),
        message: new.message.map(str::to_owned),
        message_id: new.message_id.map(str::to_owned),
        message_params: new.message_params.cloned().unwrap_or_default(),
        origin: new.origin.clone(),
        content_hash: content_hash(new.title, new.source),
        created_at: kernel.now(),
    };
    project.head = number;
    project.updated_at = version.created_at;
    batch.put(&version)?;
    // A linked workspace delivers every version made here: its job is in this same
    // batch. A pulled version came from the server and goes nowhere.
    if !matches!(version.origin, VersionOrigin::Pulled { .. }) {
        crate::outbox::stage_delivery(batch, &kernel.workspace()?, &version, kernel.new_id("job"))?;
    }
    Ok(version)
}

/// Adds a version of the working copy as it is (a person saved it), the project and
/// the activity entry to `batch`.
pub fn stage_save(kernel: &Kernel, batch: &mut Batch, project: &mut Project, message: Option<&str>) -> Result<Version, ApiError> {
    let (title, source) = (project.title.clone(), project.source.clone());
    let version =
        stage_next(kernel, batch, project, NewVersion { title: &title, source: &source, origin: &VersionOrigin::Manual, message, message_id: None, message_params: None })?;
    let activity = kernel.activity(Some(&project.id), ActivityKind::VersionCreated, format!("Saved version {} of \"{}\"", version.number, project.title))?;
    batch.put(&*project)?.put(&activity)?;
    Ok(version)
}

/// What a restore staged.
#[derive(Debug, Clone)]
pub struct Restored {
    /// The version that keeps unsaved working-copy changes, when there were any.
    pub autosnapshot: Option<Version>,
    /// The new version whose content is the restored one's.
    pub restored: Version,
}

/// What a restore makes the working copy, and why.
#[derive(Debug, Clone, Copy)]
pub struct RestoreContent<'a> {
    pub title: &'a str,
    pub source: &'a str,
    /// The new version's origin (a restore of a version, a checkpoint).
    pub origin: &'a VersionOrigin,
    /// The new version's message.
    pub message: &'a str,
    /// The autosnapshot's message, when there are unsaved changes to keep.
    pub autosnapshot_message: &'a str,
    /// The language-neutral ids of `message` and `autosnapshot_message`, and the values
    /// both take (see [`Version::message_id`]).
    pub message_id: &'a str,
    pub autosnapshot_message_id: &'a str,
    pub message_params: &'a BTreeMap<String, String>,
}

/// Adds a restore of `content` as a new version to `batch`: unsaved working-copy
/// changes (a working copy that differs from the head version) are first kept as an
/// autosnapshot version, so a restore never loses work; then the working copy becomes
/// `content` (next revision) and the project is put. No activity entry: the caller
/// says what was restored.
pub fn stage_restore_content(kernel: &Kernel, batch: &mut Batch, project: &mut Project, content: RestoreContent<'_>) -> Result<Restored, ApiError> {
    let head_hash = match project.head {
        0 => None,
        head => Some(load(kernel.store(), &project.id, head)?.content_hash),
    };
    let unsaved = head_hash.as_deref() != Some(content_hash(&project.title, &project.source).as_str());
    let mut autosnapshot = None;
    if unsaved {
        let (title, source) = (project.title.clone(), project.source.clone());
        let snapshot = stage_next(
            kernel,
            batch,
            project,
            NewVersion {
                title: &title,
                source: &source,
                origin: &VersionOrigin::Autosnapshot { conflict_id: None },
                message: Some(content.autosnapshot_message),
                message_id: Some(content.autosnapshot_message_id),
                message_params: Some(content.message_params),
            },
        )?;
        autosnapshot = Some(snapshot);
    }
    let restored = stage_next(
        kernel,
        batch,
        project,
        NewVersion {
            title: content.title,
            source: content.source,
            origin: content.origin,
            message: Some(content.message),
            message_id: Some(content.message_id),
            message_params: Some(content.message_params),
        },
    )?;
    project.title = restored.title.clone();
    project.source = restored.source.clone();
    project.revision += 1;
    batch.put(&*project)?;
    Ok(Restored { autosnapshot, restored })
}

/// Adds a restore of `target` as a new version to `batch` (see
/// [`stage_restore_content`]), with the activity entry.
pub fn stage_restore(kernel: &Kernel, batch: &mut Batch, project: &mut Project, target: &Version) -> Result<Restored, ApiError> {
    let restored = stage_restore_content(
        kernel,
        batch,
        project,
        RestoreContent {
            title: &target.title,
            source: &target.source,
            origin: &VersionOrigin::Restore { from: target.number },
            message: &format!("Restored version {}", target.number),
            autosnapshot_message: &format!("Unsaved changes kept before restoring version {}", target.number),
            message_id: "restored_version",
            autosnapshot_message_id: "autosnapshot_before_restore",
            message_params: &BTreeMap::from([("n".to_owned(), target.number.to_string())]),
        },
    )?;
    let activity = kernel.activity(
        Some(&project.id),
        ActivityKind::VersionRestored,
        format!("Restored version {} of \"{}\" as version {}", target.number, project.title, restored.restored.number),
    )?;
    batch.put(&activity)?;
    Ok(restored)
}
