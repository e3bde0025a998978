//! Export, import and backups.
//!
//! Backups live in `<data>/backups/<time>/`, each a complete export. Which ones are
//! kept: the [`BACKUPS_KEPT`] newest; every backup made just before a restore (named
//! `<time>-before-restore`), since the state it holds was replaced and may be in no
//! other backup; and, while a restore runs, the backup being restored. Everything
//! else older is deleted after a new backup is written. Without restores the store
//! only moves forward, so a newer backup holds what an older one held; a restore is
//! the one step back, and the backup made before it is the one copy of what was
//! replaced, so it stays until the person deletes its folder.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::{required_text, ApiError, Empty, Engine, ErrorCode, ProgressEvent, StreamEvent, MAX_SOURCE_CHARS, MAX_TITLE_CHARS};
use crate::backup::{self as export, ExportCounts, Manifest};
use crate::model::{ActivityKind, ProjectSummary};
use crate::project::NewProject;
use crate::store::{Batch, Durability};

/// Backups kept; older ones are deleted after a new one is written, except those made
/// before a restore (see the module documentation).
pub const BACKUPS_KEPT: usize = 5;
/// The end of the name of a backup made just before a restore.
pub const BEFORE_RESTORE_SUFFIX: &str = "-before-restore";
/// An automatic daily backup is made when the newest is older than this.
pub const DAILY_BACKUP_HOURS: i64 = 24;

fn progress_sink(on_event: &mut dyn FnMut(StreamEvent)) -> impl FnMut(&str, u64, u64) + '_ {
    move |phase, done, total| on_event(StreamEvent::Progress(ProgressEvent { phase: phase.to_owned(), done, total }))
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExportParams {
    /// A folder that does not exist yet.
    pub path: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ExportResult {
    pub path: String,
    pub manifest: Manifest,
}

pub(super) fn export(engine: &Engine, params: ExportParams, on_event: &mut dyn FnMut(StreamEvent)) -> Result<ExportResult, ApiError> {
    let path = required_text("path", &params.path, 4096)?;
    // Reads only; the write lock keeps the snapshot consistent across trees.
    let _guard = engine.write_lock();
    let manifest = export::export_to(engine.store(), Path::new(&path), engine.now(), &mut progress_sink(on_event))?;
    Ok(ExportResult { path, manifest })
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ImportParams {
    pub path: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ImportResult {
    pub counts: ExportCounts,
}

pub(super) fn import(engine: &Engine, params: ImportParams, on_event: &mut dyn FnMut(StreamEvent)) -> Result<ImportResult, ApiError> {
    let path = required_text("path", &params.path, 4096)?;
    let _guard = engine.write_lock();
    let counts = export::import_from(engine.store(), Path::new(&path), &mut progress_sink(on_event))?;
    Ok(ImportResult { counts })
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ImportMarkdownResult {
    /// The new projects, one per file imported.
    pub projects: Vec<super::dto::ProjectSummary>,
    /// Symbolic links in the chosen folder, skipped: a link can point anywhere, and
    /// what it points to is not part of the folder. Import their targets by path.
    pub skipped_links: Vec<String>,
    /// Files not imported because a project with the same title and text is already
    /// there (imported before, or earlier in this import).
    pub skipped: Vec<SkippedImport>,
}

/// A Markdown file left out of an import: its project is already there.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SkippedImport {
    pub path: String,
    /// The project that already holds the file's title and text.
    pub existing: super::dto::ProjectSummary,
}

/// Largest Markdown file read, in bytes: [`MAX_SOURCE_CHARS`] characters of at most
/// four bytes each, a heading and a byte-order mark.
const MAX_MARKDOWN_BYTES: u64 = MAX_SOURCE_CHARS as u64 * 4 + 4096;

/// Title and body of a Markdown file: the first line's `# ` heading becomes the title
/// (and leaves the body); otherwise the file name does.
fn split_title(file_stem: &str, text: &str) -> (String, String) {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let first_line = text.lines().next().unwrap_or("");
    match first_line.strip_prefix("# ") {
        Some(heading) if !heading.trim().is_empty() => {
            let body = text[first_line.len()..].trim_start_matches(['\r', '\n']).to_owned();
            (heading.trim().to_owned(), body)
        }
        _ => (file_stem.to_owned(), text.to_owned()),
    }
}

/// Imports a Markdown file, or every `.md`/`.markdown` file of a folder, as new
/// projects, all in one transaction. In a folder only regular files are read:
/// symbolic links are skipped and listed in the result (the path the person chose is
/// used as given, link or not). A file whose title and text a project already holds
/// is skipped and named in `skipped`: importing the same file twice makes no
/// duplicate.
pub(super) fn import_markdown(engine: &Engine, params: ImportParams, on_event: &mut dyn FnMut(StreamEvent)) -> Result<ImportMarkdownResult, ApiError> {
    let path = PathBuf::from(required_text("path", &params.path, 4096)?);
    let mut skipped_links = Vec::new();
    let is_markdown = |p: &Path| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("md") || e.eq_ignore_ascii_case("markdown"));
    let files: Vec<PathBuf> = if path.is_dir() {
        let mut files = Vec::new();
        let entries = std::fs::read_dir(&path).map_err(|e| ApiError::validation("path", format!("Cannot read {}: {e}", path.display())))?;
        for entry in entries {
            let entry = entry.map_err(|e| ApiError::validation("path", format!("Cannot read {}: {e}", path.display())))?;
            let entry_path = entry.path();
            // The entry's own type: a link is not followed.
            let file_type = entry.file_type().map_err(|e| ApiError::validation("path", format!("Cannot read {}: {e}", entry_path.display())))?;
            if !is_markdown(&entry_path) {
                continue;
            }
            if file_type.is_symlink() {
                skipped_links.push(entry_path.display().to_string());
            } else if file_type.is_file() {
                files.push(entry_path);
            }
        }
        files.sort();
        skipped_links.sort();
        files
    } else if path.is_file() {
        vec![path.clone()]
    } else {
        return Err(ApiError::validation("path", format!("{} does not exist.", path.display())).hint("check_path", "Choose a Markdown file or a folder of them."));
    };
    if files.is_empty() {
        let message = if skipped_links.is_empty() {
            format!("{} holds no .md files.", path.display())
        } else {
            format!("{} holds no .md files but symbolic links, which are not followed: {}.", path.display(), skipped_links.join(", "))
        };
        return Err(ApiError::validation("path", message).hint("check_path", "Choose a Markdown file or a folder of them."));
    }
    let _guard = engine.write_lock();
    // What is already here, to find a file imported before: a project with the same
    // title and text (summaries first, so only same-titled projects' text is read).
    let summaries = engine.store().scan::<ProjectSummary>(b"")?;
    let mut batch = Batch::new();
    let mut projects: Vec<ProjectSummary> = Vec::new();
    let mut new_sources: Vec<String> = Vec::new();
    let mut skipped = Vec::new();
    let n_files = files.len() as u64;
    let mut progress = progress_sink(on_event);
    for (idx, file) in files.iter().enumerate() {
        let bytes = super::media::read_bounded("path", file, MAX_MARKDOWN_BYTES)?;
        let text = String::from_utf8(bytes)
            .map_err(|_| ApiError::validation("path", format!("{} is not UTF-8 text.", file.display())).hint("convert_to_utf8", "Save the file as UTF-8 and import it again."))?;
        let stem = file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let (title, source) = split_title(&stem, &text);
        // The API's rule for text (see `api::refuse_control_characters`), for a file.
        if let Some((at, c)) = inkstone_sync_proto::control_character(&text) {
            let codepoint = format!("U+{:04X}", c as u32);
            let field = file.display().to_string();
            return Err(ApiError::validation("path", format!("{field} holds the control character {codepoint} at character {at}; nothing was imported."))
                .problem("text.control_character", &[("field", &field), ("codepoint", &codepoint)]));
        }
        let title: String = title.chars().take(MAX_TITLE_CHARS).collect();
        if source.chars().count() > MAX_SOURCE_CHARS {
            return Err(ApiError::validation("path", format!("{} is longer than {MAX_SOURCE_CHARS} characters.", file.display())));
        }
        let now = engine.now();
        let title = if title.trim().is_empty() { "Untitled".to_owned() } else { title };
        let earlier = projects.iter().zip(&new_sources).find(|(p, text)| p.title == title && **text == source).map(|(p, _)| p.clone());
        let existing = match earlier {
            Some(summary) => Some(summary),
            None => same_project(engine, &summaries, &title, &source)?,
        };
        if let Some(existing) = existing {
            skipped.push(SkippedImport { path: file.display().to_string(), existing: (&existing).into() });
            progress("import.markdown", idx as u64 + 1, n_files);
            continue;
        }
        let project = crate::project::new_project(engine, NewProject { title, source, ..NewProject::default() }, now);
        let activity = engine.activity(Some(&project.id), ActivityKind::Imported, format!("Imported {} as \"{}\"", file.display(), project.title))?;
        batch.put(&project)?.put(&activity)?;
        projects.push(ProjectSummary::from(&project));
        new_sources.push(project.source.clone());
        progress("import.markdown", idx as u64 + 1, n_files);
    }
    if !projects.is_empty() {
        engine.store().apply(batch, Durability::Durable)?;
    }
    Ok(ImportMarkdownResult { projects: projects.iter().map(Into::into).collect(), skipped_links, skipped })
}

/// The project already holding `title` and `source`, if any.
fn same_project(engine: &Engine, summaries: &[ProjectSummary], title: &str, source: &str) -> Result<Option<ProjectSummary>, ApiError> {
    let n_chars = u32::try_from(source.chars().count()).unwrap_or(u32::MAX);
    for summary in summaries.iter().filter(|s| s.title == title && s.n_chars == n_chars) {
        if crate::project::load(engine.store(), &summary.id)?.source == source {
            return Ok(Some(summary.clone()));
        }
    }
    Ok(None)
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct BackupInfo {
    pub name: String,
    pub path: String,
    pub manifest: Manifest,
    /// Made just before a restore: it holds the state the restore replaced, and is
    /// kept until the person deletes its folder (never rotated away).
    pub before_restore: bool,
}

impl BackupInfo {
    fn new(name: String, path: &Path, manifest: Manifest) -> BackupInfo {
        let before_restore = name.ends_with(BEFORE_RESTORE_SUFFIX);
        BackupInfo { name, path: path.display().to_string(), manifest, before_restore }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct BackupListResult {
    /// Newest first.
    pub backups: Vec<BackupInfo>,
    pub folder: String,
}

fn backups_dir(engine: &Engine) -> PathBuf {
    engine.config().data_dir.join("backups")
}

/// Backups on disk, newest first. Folders that are not complete exports are skipped.
fn read_backups(engine: &Engine) -> Result<Vec<BackupInfo>, ApiError> {
    let dir = backups_dir(engine);
    let mut backups = Vec::new();
    if dir.exists() {
        let entries = std::fs::read_dir(&dir).map_err(|e| ApiError::new(ErrorCode::Io, format!("Cannot read {}: {e}", dir.display())))?;
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || !path.is_dir() {
                continue;
            }
            if let Ok(manifest) = export::read_manifest(&path) {
                backups.push(BackupInfo::new(name, &path, manifest));
            }
        }
    }
    backups.sort_by(|a, b| b.manifest.exported_at.cmp(&a.manifest.exported_at).then_with(|| b.name.cmp(&a.name)));
    Ok(backups)
}

pub(super) fn list_backups(engine: &Engine, _: Empty) -> Result<BackupListResult, ApiError> {
    Ok(BackupListResult { backups: read_backups(engine)?, folder: backups_dir(engine).display().to_string() })
}

/// Why a backup is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Occasion {
    /// On request, or an automatic generation.
    Generation,
    /// Just before a restore: named `…-before-restore`, never rotated away.
    BeforeRestore,
}

/// Writes a backup and deletes the ones no longer kept. The caller holds the write
/// lock, so the backup is one consistent state. `restoring`: the backup a restore is
/// about to read, which the rotation must not delete.
fn write_backup_locked(engine: &Engine, occasion: Occasion, restoring: Option<&str>, on_event: &mut dyn FnMut(StreamEvent)) -> Result<BackupInfo, ApiError> {
    let now = engine.now();
    let dir = backups_dir(engine);
    std::fs::create_dir_all(&dir).map_err(|e| ApiError::new(ErrorCode::Io, format!("Cannot create {}: {e}", dir.display())))?;
    let mut name = now.format("%Y%m%dT%H%M%S%.3fZ").to_string();
    if occasion == Occasion::BeforeRestore {
        name.push_str(BEFORE_RESTORE_SUFFIX);
    }
    let path = dir.join(&name);
    let manifest = export::export_to(engine.store(), &path, now, &mut progress_sink(on_event))?;
    for old in read_backups(engine)?.into_iter().skip(BACKUPS_KEPT) {
        if old.before_restore || Some(old.name.as_str()) == restoring {
            continue;
        }
        if let Err(error) = std::fs::remove_dir_all(&old.path) {
            tracing::warn!(path = %old.path, %error, "could not delete an old backup");
        }
    }
    Ok(BackupInfo::new(name, &path, manifest))
}

fn write_backup(engine: &Engine, on_event: &mut dyn FnMut(StreamEvent)) -> Result<BackupInfo, ApiError> {
    // Reads only; the write lock keeps the snapshot consistent across trees.
    let _guard = engine.write_lock();
    write_backup_locked(engine, Occasion::Generation, None, on_event)
}

pub(super) fn create_backup(engine: &Engine, _: Empty, on_event: &mut dyn FnMut(StreamEvent)) -> Result<BackupInfo, ApiError> {
    write_backup(engine, on_event)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum BackupReason {
    /// At start: a backup when the newest is older than a day.
    Daily,
    /// At exit: a backup when anything changed since the newest.
    Exit,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BackupAutoParams {
    pub reason: BackupReason,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct BackupAutoResult {
    /// The new backup, or `null` when none was needed.
    pub backup: Option<BackupInfo>,
}

/// The automatic backup generations: daily and at exit, [`BACKUPS_KEPT`] kept. Nothing
/// is written when nothing changed since the newest backup.
pub(super) fn auto_backup(engine: &Engine, params: BackupAutoParams, on_event: &mut dyn FnMut(StreamEvent)) -> Result<BackupAutoResult, ApiError> {
    let newest = read_backups(engine)?.into_iter().next();
    let marker = export::change_marker(engine.store())?;
    let needed = match &newest {
        None => !engine.store().is_empty(),
        Some(newest) => {
            let changed = newest.manifest.change_marker != marker;
            match params.reason {
                BackupReason::Exit => changed,
                BackupReason::Daily => changed && engine.now() - newest.manifest.exported_at >= chrono::Duration::hours(DAILY_BACKUP_HOURS),
            }
        }
    };
    let backup = if needed { Some(write_backup(engine, on_event)?) } else { None };
    Ok(BackupAutoResult { backup })
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BackupRestoreParams {
    /// A backup's `name` from `backup.list`.
    pub name: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct BackupRestoreResult {
    pub restored: BackupInfo,
    /// A backup of the state just before the restore, so the restore can be undone.
    pub safety_backup: BackupInfo,
    pub counts: ExportCounts,
}

/// Replaces everything in the store with a backup's content. The current state is
/// first written as a new backup (`…-before-restore`, kept until deleted by hand, so
/// the restore itself can be undone), then the store is cleared and the backup
/// imported, in one transaction. The rotation after the safety backup never deletes
/// the backup being restored. One write lock covers both steps, so nothing written
/// between them is missing from the safety backup.
pub(super) fn restore_backup(engine: &Engine, params: BackupRestoreParams, on_event: &mut dyn FnMut(StreamEvent)) -> Result<BackupRestoreResult, ApiError> {
    let _guard = engine.write_lock();
    let backups = read_backups(engine)?;
    let restored = backups.into_iter().find(|b| b.name == params.name).ok_or_else(|| ApiError::not_found("backup", &params.name).action("list_backups", &[]))?;
    // Check the backup reads before touching anything.
    export::read_manifest(Path::new(&restored.path))?;
    let safety_backup = write_backup_locked(engine, Occasion::BeforeRestore, Some(&restored.name), on_event)?;
    let counts = export::replace_from(engine.store(), Path::new(&restored.path), &mut progress_sink(on_event))?;
    Ok(BackupRestoreResult { restored, safety_backup, counts })
}
