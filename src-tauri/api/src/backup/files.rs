//! The export's files: record ids checked before they become names, JSON and JSON
//! Lines written and read, a source in Markdown beside its record's JSON, folder
//! listings, and the fsync of a finished export.

use std::fs;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use super::ExportError;
use crate::model::ids;

/// `id` as a path component, after checking it against the id grammar.
pub(super) fn id_component<'a>(what: &str, id: &'a str, prefix: Option<&'static str>) -> Result<&'a str, ExportError> {
    ids::check(id, prefix).map_err(|e| ExportError::UnsafeId { what: what.to_owned(), message: e.to_string() })?;
    Ok(id)
}

/// Checks an id read from an export.
pub(super) fn imported_id(path: &Path, id: &str, prefix: Option<&'static str>) -> Result<(), ExportError> {
    ids::check(id, prefix).map_err(|e| ExportError::Format { path: path.to_path_buf(), message: e.to_string() })
}

/// The image extensions media files are written with (`media.add`).
pub(super) const MEDIA_EXTENSIONS: &[&str] = &["png", "jpg", "gif", "webp"];

/// Checks a media file name: `<id>.<image extension>`, so it is one plain file name.
pub(super) fn media_file_name_ok(file_name: &str) -> bool {
    file_name.split_once('.').is_some_and(|(stem, ext)| ids::is_well_formed(stem) && MEDIA_EXTENSIONS.contains(&ext))
}

/// One record per line.
pub(super) fn jsonl<T: Serialize>(records: &[T], path: &Path) -> Result<Vec<u8>, ExportError> {
    let mut out = Vec::new();
    for record in records {
        out.extend(serde_json::to_vec(record).map_err(|e| ExportError::Format { path: path.to_path_buf(), message: e.to_string() })?);
        out.push(b'\n');
    }
    Ok(out)
}

/// Reads a `.jsonl` file written by [`jsonl`]; an absent file is no records.
pub(super) fn read_jsonl<T: DeserializeOwned>(path: &Path) -> Result<Vec<T>, ExportError> {
    if !path.exists() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for (line_idx, line) in read_text(path)?.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        out.push(serde_json::from_str(line).map_err(|e| ExportError::Format { path: path.to_path_buf(), message: format!("line {}: {e}", line_idx + 1) })?);
    }
    Ok(out)
}

pub(super) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ExportError + '_ {
    move |source| ExportError::Io { path: path.to_path_buf(), source }
}

pub(super) fn write(path: &Path, bytes: &[u8]) -> Result<(), ExportError> {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(io(dir))?;
    }
    fs::write(path, bytes).map_err(io(path))
}

/// Pretty JSON with sorted keys (serde_json's map is ordered), so exports are stable.
pub(super) fn json_bytes<T: Serialize>(value: &T) -> Result<Vec<u8>, ExportError> {
    let value = serde_json::to_value(value).map_err(|e| ExportError::Format { path: PathBuf::new(), message: e.to_string() })?;
    let mut bytes = serde_json::to_vec_pretty(&value).map_err(|e| ExportError::Format { path: PathBuf::new(), message: e.to_string() })?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// The record as JSON without its `source`, which goes to a Markdown file beside it.
pub(super) fn without_source<T: Serialize>(record: &T) -> Result<Value, ExportError> {
    let mut value = serde_json::to_value(record).map_err(|e| ExportError::Format { path: PathBuf::new(), message: e.to_string() })?;
    if let Value::Object(map) = &mut value {
        map.remove("source");
    }
    Ok(value)
}

pub(super) fn version_stem(number: u32) -> String {
    format!("{number:04}")
}

/// fsyncs every file and folder of a finished export, so a backup survives a crash.
pub(super) fn sync_dir_tree(dir: &Path) -> Result<(), ExportError> {
    for entry in fs::read_dir(dir).map_err(io(dir))? {
        let entry = entry.map_err(io(dir))?;
        let path = entry.path();
        if path.is_dir() {
            sync_dir_tree(&path)?;
        } else {
            fs::File::open(&path).and_then(|f| f.sync_all()).map_err(io(&path))?;
        }
    }
    fs::File::open(dir).and_then(|f| f.sync_all()).map_err(io(dir))
}

pub(super) fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T, ExportError> {
    let bytes = fs::read(path).map_err(io(path))?;
    serde_json::from_slice(&bytes).map_err(|e| ExportError::Format { path: path.to_path_buf(), message: e.to_string() })
}

pub(super) fn read_text(path: &Path) -> Result<String, ExportError> {
    let bytes = fs::read(path).map_err(io(path))?;
    String::from_utf8(bytes).map_err(|e| ExportError::Format { path: path.to_path_buf(), message: e.to_string() })
}

pub(super) fn with_source<T: DeserializeOwned>(json_path: &Path, md_path: &Path) -> Result<T, ExportError> {
    let mut value: Value = read_json(json_path)?;
    let source = read_text(md_path)?;
    if let Value::Object(map) = &mut value {
        map.insert("source".to_owned(), Value::String(source));
    }
    serde_json::from_value(value).map_err(|e| ExportError::Format { path: json_path.to_path_buf(), message: e.to_string() })
}

/// Sorted entries of a folder; empty when the folder does not exist.
pub(super) fn entries(dir: &Path) -> Result<Vec<PathBuf>, ExportError> {
    if !dir.exists() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).map_err(io(dir))? {
        out.push(entry.map_err(io(dir))?.path());
    }
    out.sort();
    Ok(out)
}

pub(super) fn json_files(dir: &Path) -> Result<Vec<PathBuf>, ExportError> {
    Ok(entries(dir)?.into_iter().filter(|p| p.extension().is_some_and(|e| e == "json")).collect())
}
