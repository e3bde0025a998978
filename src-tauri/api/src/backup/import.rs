//! Reading an export into a store: every record in one transaction, the media files
//! staged so that a failed commit changes none the store refers to.

use std::fs;
use std::path::{Path, PathBuf};

use super::files::*;
use super::sections::*;
use super::{ExportCounts, ExportError, Manifest, EXPORT_FORMAT, EXPORT_FORMAT_VERSION};
use crate::harness::log::Session;
use crate::harness::Event;
use crate::model::{Comment, MediaAsset, PlatformDraft, Project, Version, Workspace};
use crate::store::{keys, media_dir, write_file_durably, Batch, Durability, Record, Store};

/// Reads an export's manifest.
pub fn read_manifest(src: &Path) -> Result<Manifest, ExportError> {
    let manifest: Manifest = read_json(&src.join("manifest.json"))?;
    if manifest.format != EXPORT_FORMAT {
        return Err(ExportError::Format { path: src.join("manifest.json"), message: format!("format is {:?}, not {EXPORT_FORMAT:?}", manifest.format) });
    }
    if manifest.format_version > EXPORT_FORMAT_VERSION {
        return Err(ExportError::Format {
            path: src.join("manifest.json"),
            message: format!("format version {} is newer than this build reads ({EXPORT_FORMAT_VERSION})", manifest.format_version),
        });
    }
    Ok(manifest)
}

/// Reads an export into `store`, which must hold no user data. Every record is
/// written in one transaction, durable before this returns; media files as the
/// module documentation says (none the store refers to is changed unless the commit
/// happens).
pub fn import_from(store: &Store, src: &Path, progress: &mut dyn FnMut(&str, u64, u64)) -> Result<ExportCounts, ExportError> {
    if !store.is_empty() {
        return Err(ExportError::NotEmpty);
    }
    import_with(store, src, Batch::new(), progress)
}

/// Replaces every record in `store` with an export's content, in one transaction: the
/// deletion of what is there and the import commit together or not at all. Media
/// files as the module documentation says.
pub fn replace_from(store: &Store, src: &Path, progress: &mut dyn FnMut(&str, u64, u64)) -> Result<ExportCounts, ExportError> {
    let mut batch = Batch::new();
    store.delete_all_user_records(&mut batch)?;
    import_with(store, src, batch, progress)
}

pub(super) fn import_with(store: &Store, src: &Path, mut batch: Batch, progress: &mut dyn FnMut(&str, u64, u64)) -> Result<ExportCounts, ExportError> {
    let manifest = read_manifest(src)?;
    let mut counts = ExportCounts::default();
    let workspace_path = src.join("workspace.json");
    if workspace_path.exists() {
        let workspace: Workspace = read_json(&workspace_path)?;
        imported_id(&workspace_path, &workspace.id, Some("wsp"))?;
        batch.put(&workspace)?;
    }
    let project_dirs = entries(&src.join("projects"))?;
    let n_projects = project_dirs.len() as u64;
    for (idx, dir) in project_dirs.iter().enumerate() {
        let project_path = dir.join("project.json");
        let project: Project = with_source(&project_path, &dir.join("source.md"))?;
        imported_id(&project_path, &project.id, Some("prj"))?;
        for json_path in json_files(&dir.join("versions"))? {
            let version: Version = with_source(&json_path, &json_path.with_extension("md"))?;
            imported_id(&json_path, &version.id, None)?;
            if version.project_id != project.id {
                return Err(ExportError::Format { path: json_path, message: "the version belongs to another project".to_owned() });
            }
            batch.put(&version)?;
            counts.versions += 1;
        }
        for json_path in json_files(&dir.join("drafts"))? {
            let draft: PlatformDraft = read_json(&json_path)?;
            if draft.project_id != project.id {
                return Err(ExportError::Format { path: json_path, message: "the draft belongs to another project".to_owned() });
            }
            batch.put(&draft)?;
            counts.platform_drafts += 1;
        }
        let comments_path = dir.join("comments.json");
        if comments_path.exists() {
            let comments: Vec<Comment> = read_json(&comments_path)?;
            for comment in &comments {
                imported_id(&comments_path, &comment.id, None)?;
                if comment.project_id != project.id {
                    return Err(ExportError::Format { path: comments_path, message: "a comment belongs to another project".to_owned() });
                }
                batch.put(comment)?;
            }
            counts.comments += comments.len() as u64;
        }
        batch.put(&project)?;
        counts.projects += 1;
        progress("import.projects", idx as u64 + 1, n_projects);
    }
    let mut media = Vec::new();
    for path in json_files(&src.join("media"))? {
        let asset: MediaAsset = read_json(&path)?;
        imported_id(&path, &asset.id, Some("med"))?;
        for project_id in &asset.project_ids {
            imported_id(&path, project_id, Some("prj"))?;
        }
        if !media_file_name_ok(&asset.file_name) {
            return Err(ExportError::Format { path, message: format!("unsafe media file name {:?} (not `<id>.<image extension>`)", asset.file_name) });
        }
        let from = src.join("media").join("files").join(&asset.file_name);
        media_bytes(&from, &asset)?;
        batch.put(&asset)?;
        media.push((from, asset));
        counts.media += 1;
    }
    let sessions_dir = src.join("sessions");
    if sessions_dir.exists() {
        for dir in entries(&sessions_dir)?.into_iter().filter(|p| p.is_dir()) {
            let session_path = dir.join("session.json");
            let session = read_json::<Session>(&session_path)?;
            imported_id(&session_path, &session.id, Some("ses"))?;
            imported_id(&session_path, &session.project_id, None)?;
            batch.put(&session)?;
            for event in read_jsonl::<Event>(&dir.join("events.jsonl"))? {
                if !event.key().starts_with(&keys::project_prefix(&session.id)) {
                    return Err(ExportError::Format { path: dir.join("events.jsonl"), message: format!("event {} belongs to another session", event.sequence) });
                }
                batch.put(&event)?;
                counts.session_events += 1;
            }
            counts.sessions += 1;
        }
    }
    for section in sections() {
        let n = (section.import)(src, section.layout, &mut batch)?;
        if let Some(count) = section.count {
            *count(&mut counts) += n;
        }
    }
    if counts != manifest.counts {
        return Err(ExportError::Format { path: src.join("manifest.json"), message: format!("the manifest counts {:?} but the folder holds {:?}", manifest.counts, counts) });
    }
    let staged = MediaStaging::prepare(store.data_dir(), &media)?;
    if let Err(error) = store.apply(batch, Durability::Durable) {
        staged.abandon();
        return Err(error.into());
    }
    staged.finish();
    Ok(counts)
}

/// A media file of an export, read and checked: a plain file (not a link), with the
/// bytes its asset's hash names.
pub(super) fn media_bytes(from: &Path, asset: &MediaAsset) -> Result<Vec<u8>, ExportError> {
    let meta = fs::symlink_metadata(from).map_err(io(from))?;
    if !meta.is_file() {
        return Err(ExportError::Format { path: from.to_path_buf(), message: "the media file is not a plain file".to_owned() });
    }
    let bytes = fs::read(from).map_err(io(from))?;
    if crate::store::sha256_ref(&bytes) != asset.content_hash {
        return Err(ExportError::Format { path: from.to_path_buf(), message: format!("the file's bytes do not match the image's hash {}", asset.content_hash) });
    }
    Ok(bytes)
}

/// The media files of an import, written so that a failed commit changes none the
/// store refers to (see the module documentation).
pub(super) struct MediaStaging {
    /// Files written under names that were free; removed when the commit fails.
    created: Vec<PathBuf>,
    /// The staging folder and the files in it, each with the name it replaces.
    staged: Option<(PathBuf, Vec<(PathBuf, PathBuf)>)>,
}

impl MediaStaging {
    fn prepare(data_dir: &Path, media: &[(PathBuf, MediaAsset)]) -> Result<MediaStaging, ExportError> {
        let media_dest = media_dir(data_dir);
        let mut staging = MediaStaging { created: Vec::new(), staged: None };
        for (from, asset) in media {
            let result = (|| {
                let bytes = media_bytes(from, asset)?;
                let to = media_dest.join(&asset.file_name);
                match fs::read(&to) {
                    Ok(existing) if existing == bytes => Ok(()),
                    Ok(_) => {
                        let (dir, files) = staging.staged.get_or_insert_with(|| (media_dest.join(format!(".staged-{}", std::process::id())), Vec::new()));
                        let staged = dir.join(&asset.file_name);
                        write_file_durably(&staged, &bytes).map_err(io(&staged))?;
                        files.push((staged, to));
                        Ok(())
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                        write_file_durably(&to, &bytes).map_err(io(&to))?;
                        staging.created.push(to);
                        Ok(())
                    }
                    Err(e) => Err(ExportError::Io { path: to, source: e }),
                }
            })();
            if let Err(error) = result {
                staging.abandon();
                return Err(error);
            }
        }
        Ok(staging)
    }

    /// The commit failed: removes what was written.
    fn abandon(self) {
        for path in &self.created {
            let _ = fs::remove_file(path);
        }
        if let Some((dir, _)) = &self.staged {
            let _ = fs::remove_dir_all(dir);
        }
    }

    /// The commit happened: moves the staged files over the ones they replace.
    fn finish(self) {
        let Some((dir, files)) = self.staged else { return };
        for (staged, to) in &files {
            if let Err(error) = fs::rename(staged, to) {
                tracing::warn!(path = %to.display(), %error, "could not move an imported image into place; it stays in the staging folder");
                return;
            }
        }
        if let Some(parent) = dir.parent() {
            let _ = fs::File::open(parent).and_then(|f| f.sync_all());
        }
        let _ = fs::remove_dir(&dir);
    }
}
