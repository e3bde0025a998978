//! Writing an export: the whole store and its media files, under a temporary name
//! renamed at the end.

use std::fs;
use std::path::Path;

use super::files::*;
use super::sections::*;
use super::{ExportCounts, ExportError, Manifest, EXPORT_FORMAT, EXPORT_FORMAT_VERSION};
use crate::harness::log::Session;
use crate::harness::Event;
use crate::model::{Activity, Comment, MediaAsset, PlatformDraft, Project, Timestamp, Version};
use crate::store::{keys, media_dir, Store, StoreError, SCHEMA_VERSION};

/// A marker that changes whenever the store's content does: the newest activity id
/// and the newest working-copy change (autosaves make no activity).
pub fn change_marker(store: &Store) -> Result<String, StoreError> {
    let last_activity = store.last::<Activity>(b"")?.map(|a| a.id).unwrap_or_default();
    let last_update = store.scan::<Project>(b"")?.iter().map(|p| p.updated_at).max().map(|t| t.to_rfc3339()).unwrap_or_default();
    Ok(format!("{last_activity}|{last_update}"))
}

/// Writes the whole store, and the media files under `data_dir/media`, to `dest`, which
/// must not exist. The folder is written under a temporary name and renamed at the
/// end, so `dest` is either complete or absent.
pub fn export_to(store: &Store, dest: &Path, exported_at: Timestamp, progress: &mut dyn FnMut(&str, u64, u64)) -> Result<Manifest, ExportError> {
    if dest.exists() {
        return Err(ExportError::DestinationExists(dest.to_path_buf()));
    }
    let file_name = dest.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "export".to_owned());
    let tmp = dest.with_file_name(format!(".{file_name}.partial-{}", std::process::id()));
    if tmp.exists() {
        fs::remove_dir_all(&tmp).map_err(io(&tmp))?;
    }
    let result = write_export(store, &tmp, exported_at, progress);
    match result {
        Ok(manifest) => {
            fs::rename(&tmp, dest).map_err(io(dest))?;
            Ok(manifest)
        }
        Err(error) => {
            let _ = fs::remove_dir_all(&tmp);
            Err(error)
        }
    }
}

pub(super) fn write_export(store: &Store, root: &Path, exported_at: Timestamp, progress: &mut dyn FnMut(&str, u64, u64)) -> Result<Manifest, ExportError> {
    fs::create_dir_all(root).map_err(io(root))?;
    let mut counts = ExportCounts::default();
    let workspace = store.workspace()?;
    if let Some(workspace) = &workspace {
        write(&root.join("workspace.json"), &json_bytes(workspace)?)?;
    }

    let projects = store.scan::<Project>(b"")?;
    let n_projects = projects.len() as u64;
    for (idx, project) in projects.iter().enumerate() {
        let dir = root.join("projects").join(id_component("A project", &project.id, Some("prj"))?);
        write(&dir.join("project.json"), &json_bytes(&without_source(project)?)?)?;
        write(&dir.join("source.md"), project.source.as_bytes())?;
        for version in store.scan::<Version>(&keys::project_prefix(&project.id))? {
            let stem = version_stem(version.number);
            let versions_dir = dir.join("versions");
            write(&versions_dir.join(format!("{stem}.json")), &json_bytes(&without_source(&version)?)?)?;
            write(&versions_dir.join(format!("{stem}.md")), version.source.as_bytes())?;
            counts.versions += 1;
        }
        for draft in store.scan::<PlatformDraft>(&keys::project_prefix(&project.id))? {
            write(&dir.join("drafts").join(format!("{}.json", draft.platform.as_str())), &json_bytes(&draft)?)?;
            counts.platform_drafts += 1;
        }
        let comments = store.scan::<Comment>(&keys::project_prefix(&project.id))?;
        if !comments.is_empty() {
            counts.comments += comments.len() as u64;
            write(&dir.join("comments.json"), &json_bytes(&comments)?)?;
        }
        counts.projects += 1;
        progress("export.projects", idx as u64 + 1, n_projects);
    }

    let media_src = media_dir(store.data_dir());
    let media = store.scan::<MediaAsset>(b"")?;
    let n_media = media.len() as u64;
    for (idx, asset) in media.iter().enumerate() {
        let id = id_component("An image", &asset.id, Some("med"))?;
        if !media_file_name_ok(&asset.file_name) {
            return Err(ExportError::UnsafeId { what: format!("The image {id}"), message: format!("its file name {:?} is not `<id>.<image extension>`", asset.file_name) });
        }
        write(&root.join("media").join(format!("{id}.json")), &json_bytes(asset)?)?;
        let from = media_src.join(&asset.file_name);
        let to = root.join("media").join("files").join(&asset.file_name);
        if let Some(dir) = to.parent() {
            fs::create_dir_all(dir).map_err(io(dir))?;
        }
        fs::copy(&from, &to).map_err(io(&from))?;
        counts.media += 1;
        progress("export.media", idx as u64 + 1, n_media);
    }

    for session in store.scan::<Session>(b"")? {
        let dir = root.join("sessions").join(id_component("A session", &session.id, Some("ses"))?);
        write(&dir.join("session.json"), &json_bytes(&session)?)?;
        let events = store.scan::<Event>(&keys::project_prefix(&session.id))?;
        counts.session_events += events.len() as u64;
        let path = dir.join("events.jsonl");
        write(&path, &jsonl(&events, &path)?)?;
        counts.sessions += 1;
    }
    for section in sections() {
        let n = (section.export)(store, root, section.layout)?;
        if let Some(count) = section.count {
            *count(&mut counts) += n;
        }
    }

    let manifest = Manifest {
        format: EXPORT_FORMAT.to_owned(),
        format_version: EXPORT_FORMAT_VERSION,
        schema_version: store.schema_version()?.unwrap_or(SCHEMA_VERSION),
        exported_at,
        change_marker: change_marker(store)?,
        counts,
    };
    write(&root.join("manifest.json"), &json_bytes(&manifest)?)?;
    sync_dir_tree(root)?;
    Ok(manifest)
}
