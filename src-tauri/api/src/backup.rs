//! Logical export and import: the whole store as a folder of plain files (Markdown and
//! JSON) that a person can read, a backup can keep, and another storage engine can
//! import. Export then import into an empty data dir gives identical content, and a
//! second export of that is byte-identical to the first but for `manifest.json`'s time.
//!
//! ```text
//! manifest.json                     format, schema, time, counts
//! workspace.json
//! activities.jsonl                  one activity per line, oldest first
//! projects/<id>/project.json        the project without its source
//! projects/<id>/source.md           the working copy
//! projects/<id>/versions/0001.json  each version without its source ...
//! projects/<id>/versions/0001.md    ... and its source
//! projects/<id>/comments.json
//! brand-profiles/<id>.json
//! templates/<id>.json
//! media/<id>.json                   metadata; the file itself in media/files/
//! llm-profiles/<id>.json            LLM profiles: settings and key fingerprint, never a key
//! usage/records.jsonl               one model call per line, oldest first
//! usage/quotas.json
//! sessions/<id>/session.json        harness sessions ...
//! sessions/<id>/events.jsonl        ... and their event logs, one event per line
//! harness/approvals.jsonl           approval decisions
//! harness/executions.jsonl          writes that ran, by idempotency key
//! harness/context-snapshots.jsonl   immutable context snapshots
//! harness/results.jsonl             large tool results, by content hash
//! harness/permission-rules.json
//! harness/allow-rules.jsonl         "always allow" rules, with their counts
//! performance/*.jsonl               accounts, publications, metric snapshots, imports
//! ```
//!
//! Record ids become folder and file names here, so every id is checked against the
//! id grammar ([`crate::model::ids`]) before a path is built from it: on export (a
//! store written before ids were checked could hold a bad one; the export stops and
//! names it) and on import, where an id that is not an Inkstone id, a record that
//! claims another project, or a media file that is not `<id>.<image extension>` or
//! whose bytes do not match its hash makes the whole export invalid, before anything
//! is written.
//!
//! Media files on import: each is checked first; after every record is read and the
//! counts match, a file whose name is not in the data folder yet is written (a file
//! no record refers to while the commit has not happened); one that is there with the
//! same bytes is left; one that is there with other bytes is written beside it under
//! `media/.staged-…/` and moved over the old one only after the store commits. A failed
//! import or restore therefore leaves every media file the store refers to as it was.
//! (A crash between the commit and the move leaves the previous bytes under that name
//! and the new ones in the staging folder, never a half-written file.)

use std::fs;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

use crate::error::{ApiError, ErrorCode};
use crate::harness::log::{ApprovalRecord, ContextSnapshot, Session, StoredResult, ToolExecution};
use crate::harness::{Event, StoredRules};
use crate::llm::profile::LlmProfile;
use crate::model::{ids, Activity, BrandProfile, Comment, ContentTemplate, MediaAsset, PlatformDraft, Project, Timestamp, Version, Workspace};
use crate::store::{keys, media_dir, write_file_durably, Batch, Durability, Record, Store, StoreError, SCHEMA_VERSION};
use crate::usage::{Quotas, UsageRecord};

/// The format name every manifest carries.
pub const EXPORT_FORMAT: &str = "inkstone-export";
pub const EXPORT_FORMAT_VERSION: u32 = 1;

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path} is not a valid Inkstone export: {message}")]
    Format { path: PathBuf, message: String },
    #[error("{0} already exists")]
    DestinationExists(PathBuf),
    #[error("the data folder already holds projects or settings; import only into an empty data folder")]
    NotEmpty,
    /// A record in the store has an id that cannot be a file name.
    #[error("{what} in the store: {message}")]
    UnsafeId { what: String, message: String },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// `id` as a path component, after checking it against the id grammar.
fn id_component<'a>(what: &str, id: &'a str, prefix: Option<&'static str>) -> Result<&'a str, ExportError> {
    ids::check(id, prefix).map_err(|e| ExportError::UnsafeId { what: what.to_owned(), message: e.to_string() })?;
    Ok(id)
}

/// Checks an id read from an export.
fn imported_id(path: &Path, id: &str, prefix: Option<&'static str>) -> Result<(), ExportError> {
    ids::check(id, prefix).map_err(|e| ExportError::Format { path: path.to_path_buf(), message: e.to_string() })
}

/// The image extensions media files are written with (`media.add`).
const MEDIA_EXTENSIONS: &[&str] = &["png", "jpg", "gif", "webp"];

/// Checks a media file name: `<id>.<image extension>`, so it is one plain file name.
fn media_file_name_ok(file_name: &str) -> bool {
    file_name.split_once('.').is_some_and(|(stem, ext)| ids::is_well_formed(stem) && MEDIA_EXTENSIONS.contains(&ext))
}

/// How many records of each kind an export holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ExportCounts {
    pub projects: u64,
    pub versions: u64,
    pub comments: u64,
    pub activities: u64,
    pub brand_profiles: u64,
    pub templates: u64,
    pub media: u64,
    #[serde(default)]
    pub llm_profiles: u64,
    #[serde(default)]
    pub usage_records: u64,
    #[serde(default)]
    pub platform_drafts: u64,
    #[serde(default)]
    pub sessions: u64,
    #[serde(default)]
    pub session_events: u64,
}

/// Where a record kind that is not part of a project's folder travels in an export.
#[derive(Debug, Clone, Copy)]
enum Layout {
    /// One JSON file per record in this folder, named by the record's key (its id).
    FilePerRecord(&'static str),
    /// One record per line in this file; written only when there are records, unless
    /// `always`.
    Lines { file: &'static str, always: bool },
    /// The one record stored under `key` (a settings record), as this file.
    Single { file: &'static str, key: &'static [u8] },
    /// The records under a key prefix of a shared tree (the meta tree), one per line.
    Prefixed { file: &'static str, prefix: &'static [u8] },
}

/// A record kind's part of the export: its layout, and which count of the manifest it
/// adds to. Each subsystem whose records are not kept in a project's folder registers
/// one here, in [`sections`]; neither `store` nor the export code changes.
struct Section {
    layout: Layout,
    count: Option<fn(&mut ExportCounts) -> &mut u64>,
    export: fn(&Store, &Path, Layout) -> Result<u64, ExportError>,
    import: fn(&Path, Layout, &mut Batch) -> Result<u64, ExportError>,
}

fn section<R: Record>(layout: Layout, count: Option<fn(&mut ExportCounts) -> &mut u64>) -> Section {
    Section { layout, count, export: export_section::<R>, import: import_section::<R> }
}

/// The registered sections, in export order.
fn sections() -> Vec<Section> {
    vec![
        section::<Activity>(Layout::Lines { file: "activities.jsonl", always: true }, Some(|c| &mut c.activities)),
        section::<BrandProfile>(Layout::FilePerRecord("brand-profiles"), Some(|c| &mut c.brand_profiles)),
        section::<ContentTemplate>(Layout::FilePerRecord("templates"), Some(|c| &mut c.templates)),
        section::<LlmProfile>(Layout::FilePerRecord("llm-profiles"), Some(|c| &mut c.llm_profiles)),
        Section {
            layout: Layout::Lines { file: "usage/records.jsonl", always: false },
            count: Some(|c| &mut c.usage_records),
            export: export_section::<UsageRecord>,
            import: import_usage,
        },
        section::<Quotas>(Layout::Single { file: "usage/quotas.json", key: crate::usage::META_QUOTAS }, None),
        section::<ApprovalRecord>(Layout::Lines { file: "harness/approvals.jsonl", always: false }, None),
        section::<ToolExecution>(Layout::Lines { file: "harness/executions.jsonl", always: false }, None),
        section::<ContextSnapshot>(Layout::Lines { file: "harness/context-snapshots.jsonl", always: false }, None),
        section::<StoredResult>(Layout::Lines { file: "harness/results.jsonl", always: false }, None),
        section::<crate::proposals::Proposal>(Layout::Lines { file: "proposals/proposals.jsonl", always: false }, None),
        section::<crate::proposals::ProposalLocation>(Layout::Lines { file: "proposals/index.jsonl", always: false }, None),
        section::<crate::proposals::apply::AuditRecord>(Layout::Lines { file: "proposals/audit.jsonl", always: false }, None),
        section::<crate::proposals::apply::Constraint>(Layout::Lines { file: "proposals/constraints.jsonl", always: false }, None),
        section::<crate::proposals::checkpoints::Checkpoint>(Layout::Lines { file: "proposals/checkpoints.jsonl", always: false }, None),
        section::<crate::proposals::staging::Staging>(Layout::Lines { file: "proposals/staging.jsonl", always: false }, None),
        section::<crate::outbox::DeliveryJob>(Layout::Lines { file: "sync/outbox.jsonl", always: false }, None),
        // The workspace policy last seen: a restored data folder keeps to it offline.
        section::<crate::policy::CachedPolicy>(Layout::Single { file: "sync/policy.json", key: crate::policy::META_POLICY }, None),
        section::<crate::performance::context::ContextSetting>(
            Layout::Single { file: "performance/context-setting.json", key: crate::performance::context::META_CONTEXT_SETTING },
            None,
        ),
        section::<StoredRules>(Layout::Single { file: "harness/permission-rules.json", key: crate::harness::META_PERMISSION_RULES }, None),
        section::<crate::harness::AllowRule>(Layout::Prefixed { file: "harness/allow-rules.jsonl", prefix: crate::harness::allow_rule::META_ALLOW_RULES }, None),
        section::<crate::harness::compaction::ProfileContext>(
            Layout::Prefixed { file: "harness/profile-context.jsonl", prefix: crate::harness::compaction::META_PROFILE_CONTEXT_PREFIX },
            None,
        ),
        section::<crate::memory::MemoryItem>(Layout::Lines { file: "memory/items.jsonl", always: false }, None),
        section::<crate::memory::HabitDismissal>(Layout::Prefixed { file: "memory/dismissed-habits.jsonl", prefix: crate::memory::META_DISMISSED_HABITS }, None),
        section::<crate::usage::ProjectBudget>(Layout::Lines { file: "usage/project-budgets.jsonl", always: false }, None),
        section::<crate::performance::Account>(Layout::Lines { file: "performance/accounts.jsonl", always: false }, None),
        section::<crate::performance::Publication>(Layout::Lines { file: "performance/publications.jsonl", always: false }, None),
        section::<crate::performance::metrics::MetricSnapshot>(Layout::Lines { file: "performance/snapshots.jsonl", always: false }, None),
        section::<crate::performance::import::ImportRecord>(Layout::Lines { file: "performance/imports.jsonl", always: false }, None),
    ]
}

fn export_section<R: Record>(store: &Store, root: &Path, layout: Layout) -> Result<u64, ExportError> {
    match layout {
        Layout::FilePerRecord(dir) => {
            let records = store.scan::<R>(b"")?;
            for record in &records {
                let name = String::from_utf8_lossy(&record.key()).into_owned();
                let name = id_component(&format!("A record of {dir}"), &name, None)?;
                write(&root.join(dir).join(format!("{name}.json")), &json_bytes(record)?)?;
            }
            Ok(records.len() as u64)
        }
        Layout::Lines { file, always } => {
            let path = root.join(file);
            let records = store.scan::<R>(b"")?;
            let bytes = jsonl(&records, &path)?;
            if always || !bytes.is_empty() {
                write(&path, &bytes)?;
            }
            Ok(records.len() as u64)
        }
        Layout::Prefixed { file, prefix } => {
            let path = root.join(file);
            let records = store.scan::<R>(prefix)?;
            let bytes = jsonl(&records, &path)?;
            if !bytes.is_empty() {
                write(&path, &bytes)?;
            }
            Ok(records.len() as u64)
        }
        Layout::Single { file, key } => match store.get::<R>(key)? {
            Some(record) => {
                write(&root.join(file), &json_bytes(&record)?)?;
                Ok(1)
            }
            None => Ok(0),
        },
    }
}

/// The usage records and, in the same batch, their monthly and daily running totals
/// (derived data: an export does not carry them).
fn import_usage(src: &Path, layout: Layout, batch: &mut Batch) -> Result<u64, ExportError> {
    let Layout::Lines { file, .. } = layout else { return import_section::<UsageRecord>(src, layout, batch) };
    let records: Vec<UsageRecord> = read_jsonl(&src.join(file))?;
    for record in &records {
        batch.put(record)?;
    }
    crate::usage::stage_totals_of(batch, &records)?;
    Ok(records.len() as u64)
}

fn import_section<R: Record>(src: &Path, layout: Layout, batch: &mut Batch) -> Result<u64, ExportError> {
    let records: Vec<R> = match layout {
        Layout::FilePerRecord(dir) => {
            let mut records = Vec::new();
            for path in json_files(&src.join(dir))? {
                let record = read_json::<R>(&path)?;
                // Its key (its id) names its file at the next export.
                imported_id(&path, &String::from_utf8_lossy(&record.key()), None)?;
                records.push(record);
            }
            records
        }
        Layout::Lines { file, .. } | Layout::Prefixed { file, .. } => read_jsonl(&src.join(file))?,
        Layout::Single { file, .. } => {
            let path = src.join(file);
            if path.exists() {
                vec![read_json::<R>(&path)?]
            } else {
                Vec::new()
            }
        }
    };
    for record in &records {
        batch.put(record)?;
    }
    Ok(records.len() as u64)
}

/// One record per line.
fn jsonl<T: Serialize>(records: &[T], path: &Path) -> Result<Vec<u8>, ExportError> {
    let mut out = Vec::new();
    for record in records {
        out.extend(serde_json::to_vec(record).map_err(|e| ExportError::Format { path: path.to_path_buf(), message: e.to_string() })?);
        out.push(b'\n');
    }
    Ok(out)
}

/// Reads a `.jsonl` file written by [`jsonl`]; an absent file is no records.
fn read_jsonl<T: DeserializeOwned>(path: &Path) -> Result<Vec<T>, ExportError> {
    if !path.exists() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for (line_idx, line) in read_text(path)?.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        out.push(serde_json::from_str(line).map_err(|e| ExportError::Format { path: path.to_path_buf(), message: format!("line {}: {e}", line_idx + 1) })?);
    }
    Ok(out)
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    pub format: String,
    pub format_version: u32,
    pub schema_version: u32,
    pub exported_at: Timestamp,
    /// Marks the store's state at export time (newest activity and newest project
    /// change); an automatic backup is skipped while it is unchanged.
    pub change_marker: String,
    pub counts: ExportCounts,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ExportError + '_ {
    move |source| ExportError::Io { path: path.to_path_buf(), source }
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), ExportError> {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(io(dir))?;
    }
    fs::write(path, bytes).map_err(io(path))
}

/// Pretty JSON with sorted keys (serde_json's map is ordered), so exports are stable.
fn json_bytes<T: Serialize>(value: &T) -> Result<Vec<u8>, ExportError> {
    let value = serde_json::to_value(value).map_err(|e| ExportError::Format { path: PathBuf::new(), message: e.to_string() })?;
    let mut bytes = serde_json::to_vec_pretty(&value).map_err(|e| ExportError::Format { path: PathBuf::new(), message: e.to_string() })?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// The record as JSON without its `source`, which goes to a Markdown file beside it.
fn without_source<T: Serialize>(record: &T) -> Result<Value, ExportError> {
    let mut value = serde_json::to_value(record).map_err(|e| ExportError::Format { path: PathBuf::new(), message: e.to_string() })?;
    if let Value::Object(map) = &mut value {
        map.remove("source");
    }
    Ok(value)
}

fn version_stem(number: u32) -> String {
    format!("{number:04}")
}

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

fn write_export(store: &Store, root: &Path, exported_at: Timestamp, progress: &mut dyn FnMut(&str, u64, u64)) -> Result<Manifest, ExportError> {
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

/// fsyncs every file and folder of a finished export, so a backup survives a crash.
fn sync_dir_tree(dir: &Path) -> Result<(), ExportError> {
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

fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T, ExportError> {
    let bytes = fs::read(path).map_err(io(path))?;
    serde_json::from_slice(&bytes).map_err(|e| ExportError::Format { path: path.to_path_buf(), message: e.to_string() })
}

fn read_text(path: &Path) -> Result<String, ExportError> {
    let bytes = fs::read(path).map_err(io(path))?;
    String::from_utf8(bytes).map_err(|e| ExportError::Format { path: path.to_path_buf(), message: e.to_string() })
}

fn with_source<T: DeserializeOwned>(json_path: &Path, md_path: &Path) -> Result<T, ExportError> {
    let mut value: Value = read_json(json_path)?;
    let source = read_text(md_path)?;
    if let Value::Object(map) = &mut value {
        map.insert("source".to_owned(), Value::String(source));
    }
    serde_json::from_value(value).map_err(|e| ExportError::Format { path: json_path.to_path_buf(), message: e.to_string() })
}

/// Sorted entries of a folder; empty when the folder does not exist.
fn entries(dir: &Path) -> Result<Vec<PathBuf>, ExportError> {
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

fn json_files(dir: &Path) -> Result<Vec<PathBuf>, ExportError> {
    Ok(entries(dir)?.into_iter().filter(|p| p.extension().is_some_and(|e| e == "json")).collect())
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

fn import_with(store: &Store, src: &Path, mut batch: Batch, progress: &mut dyn FnMut(&str, u64, u64)) -> Result<ExportCounts, ExportError> {
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
fn media_bytes(from: &Path, asset: &MediaAsset) -> Result<Vec<u8>, ExportError> {
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
struct MediaStaging {
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

impl From<ExportError> for ApiError {
    fn from(error: ExportError) -> Self {
        match error {
            ExportError::Io { path, source } => ApiError::new(ErrorCode::Io, format!("{}: {source}", path.display()))
                .hint("check_path", "Check that the folder exists, is readable, and the disk is not full.")
                .details(serde_json::json!({ "path": path })),
            ExportError::Format { path, message } => ApiError::validation("path", format!("{} is not a valid Inkstone export: {message}", path.display()))
                .hint("choose_export_folder", "Choose a folder written by Inkstone's export or backup (it holds manifest.json)."),
            ExportError::DestinationExists(path) => ApiError::validation("path", format!("{} already exists.", path.display()))
                .hint("choose_new_folder", "Choose a folder name that does not exist yet; Inkstone creates it."),
            ExportError::NotEmpty => ApiError::new(ErrorCode::Conflict, "This data folder already holds projects; an export is imported only into an empty data folder.")
                .problem("import.not_empty", &[])
                .action("use_empty_data_dir", &[])
                .action("import_markdown_instead", &[]),
            ExportError::UnsafeId { what, message } => {
                ApiError::new(ErrorCode::StoreCorrupt, format!("{what} has an id that cannot be a file name, so nothing was written: {message}."))
            }
            ExportError::Store(error) => error.into(),
        }
    }
}
