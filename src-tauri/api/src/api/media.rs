//! Images kept under the data dir's `media/` folder, with their metadata in the store.

use std::path::Path;

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use ts_rs::TS;

use super::projects::load as load_project;
use super::{bounded_text, ApiError, Engine, ErrorCode, IdRef};
use crate::model::{ActivityKind, MediaAsset};
use crate::store::{Batch, Durability};

/// Largest image accepted, in bytes.
pub const MAX_MEDIA_BYTES: usize = 20 * 1024 * 1024;

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MediaAddParams {
    pub project_id: String,
    /// A local image file (PNG, JPEG, GIF or WebP); it is copied into the data dir.
    pub path: String,
    #[serde(default)]
    #[ts(optional)]
    pub alt_text: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MediaAddBytesParams {
    pub project_id: String,
    /// The original file name, such as `screenshot.png`.
    pub file_name: String,
    /// The image bytes, base64-encoded (standard alphabet).
    pub data_base64: String,
    #[serde(default)]
    #[ts(optional)]
    pub alt_text: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MediaListParams {
    /// Only media used by this project; all when absent.
    #[serde(default)]
    #[ts(optional)]
    pub project_id: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct MediaListResult {
    pub media: Vec<super::dto::MediaAsset>,
}

fn image_kind(bytes: &[u8]) -> Option<(&'static str, &'static str)> {
    match imagesize::image_type(bytes).ok()? {
        imagesize::ImageType::Png => Some(("png", "image/png")),
        imagesize::ImageType::Jpeg => Some(("jpg", "image/jpeg")),
        imagesize::ImageType::Gif => Some(("gif", "image/gif")),
        imagesize::ImageType::Webp => Some(("webp", "image/webp")),
        _ => None,
    }
}

fn store_bytes(engine: &Engine, project_id: &str, original_name: &str, bytes: &[u8], alt_text: Option<String>) -> Result<MediaAsset, ApiError> {
    let original_name = bounded_text("fileName", original_name.trim(), 255)?;
    let alt_text = bounded_text("altText", alt_text.unwrap_or_default().trim(), 1_000)?;
    if bytes.len() > MAX_MEDIA_BYTES {
        return Err(ApiError::validation("path", format!("The image is {} bytes; at most {MAX_MEDIA_BYTES} are allowed.", bytes.len())));
    }
    let Some((extension, mime_type)) = image_kind(bytes) else {
        return Err(ApiError::validation("path", format!("{original_name} is not a PNG, JPEG, GIF or WebP image.")));
    };
    let size = imagesize::blob_size(bytes).map_err(|e| ApiError::validation("path", format!("{original_name} is not a readable image: {e}")))?;
    let content_hash = format!("sha256:{}", hex::encode(Sha256::digest(bytes)));

    let _guard = engine.write_lock();
    let project = load_project(engine, project_id)?;
    // The same image added again is one asset used by more projects.
    let existing = engine.store().scan::<MediaAsset>(b"")?.into_iter().find(|m| m.content_hash == content_hash);
    let asset = match existing {
        Some(mut asset) => {
            if !asset.project_ids.contains(&project.id) {
                asset.project_ids.push(project.id.clone());
            }
            asset
        }
        None => {
            let id = engine.new_id("med");
            let file_name = format!("{id}.{extension}");
            crate::store::write_file_durably(&crate::store::media_dir(&engine.config().data_dir).join(&file_name), bytes).map_err(|e| {
                ApiError::new(ErrorCode::Io, format!("Could not store the image: {e}")).hint("check_disk", "Check that the disk is not full and the data folder is writable.")
            })?;
            MediaAsset {
                id,
                original_name,
                file_name,
                mime_type: mime_type.to_owned(),
                byte_size: bytes.len() as u64,
                width: u32::try_from(size.width).unwrap_or(u32::MAX),
                height: u32::try_from(size.height).unwrap_or(u32::MAX),
                alt_text,
                content_hash,
                project_ids: vec![project.id.clone()],
                created_at: engine.now(),
            }
        }
    };
    let activity = engine.activity(Some(&project.id), ActivityKind::MediaAdded, format!("Added image {} to \"{}\"", asset.original_name, project.title))?;
    let mut batch = Batch::new();
    batch.put(&asset)?.put(&activity)?;
    engine.store().apply(batch, Durability::Durable)?;
    Ok(asset)
}

/// Reads a file of at most `max_bytes` for a parameter (`field`) that names it. Only a
/// regular file is read (a device such as `/dev/zero` or a pipe never ends); its size is
/// checked from its metadata first, and at most `max_bytes + 1` bytes are read, so a
/// file that grows meanwhile is refused too.
pub(super) fn read_bounded(field: &str, path: &Path, max_bytes: u64) -> Result<Vec<u8>, ApiError> {
    use std::io::Read;
    let cannot_read =
        |e: std::io::Error| ApiError::validation(field, format!("Cannot read {}: {e}", path.display())).hint("check_path", "Check the file path and that the file is readable.");
    let too_large = |size: u64| ApiError::validation(field, format!("{} is {size} bytes; at most {max_bytes} are allowed.", path.display()));
    let meta = std::fs::metadata(path).map_err(cannot_read)?;
    if !meta.is_file() {
        return Err(ApiError::validation(field, format!("{} is not a regular file.", path.display())).hint("check_path", "Check the file path and that the file is readable."));
    }
    if meta.len() > max_bytes {
        return Err(too_large(meta.len()));
    }
    let file = std::fs::File::open(path).map_err(cannot_read)?;
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(max_bytes.saturating_add(1)).read_to_end(&mut bytes).map_err(cannot_read)?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

pub(super) fn add(engine: &Engine, params: MediaAddParams) -> Result<MediaAsset, ApiError> {
    let path = Path::new(&params.path);
    let bytes = read_bounded("path", path, MAX_MEDIA_BYTES as u64)?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| params.path.clone());
    store_bytes(engine, &params.project_id, &name, &bytes, params.alt_text)
}

pub(super) fn add_bytes(engine: &Engine, params: MediaAddBytesParams) -> Result<MediaAsset, ApiError> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(params.data_base64.trim())
        .map_err(|e| ApiError::validation("dataBase64", format!("`dataBase64` is not valid base64: {e}")))?;
    store_bytes(engine, &params.project_id, &params.file_name, &bytes, params.alt_text)
}

pub(super) fn get(engine: &Engine, params: IdRef) -> Result<MediaAsset, ApiError> {
    engine.store().get::<MediaAsset>(params.id.as_bytes())?.ok_or_else(|| ApiError::not_found("media", &params.id))
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct MediaReadResult {
    pub asset: super::dto::MediaAsset,
    /// The image bytes, base64-encoded, for previews where the file cannot be linked.
    pub data_base64: String,
}

pub(super) fn read(engine: &Engine, params: IdRef) -> Result<MediaReadResult, ApiError> {
    let asset = get(engine, params)?;
    let path = crate::store::media_dir(&engine.config().data_dir).join(&asset.file_name);
    let bytes = std::fs::read(&path).map_err(|e| {
        ApiError::new(ErrorCode::Io, format!("Cannot read the image file {}: {e}", path.display())).hint("restore_image", "Restore the image from a backup, or add it again.")
    })?;
    Ok(MediaReadResult { asset: (&asset).into(), data_base64: base64::engine::general_purpose::STANDARD.encode(bytes) })
}

pub(super) fn list(engine: &Engine, params: MediaListParams) -> Result<MediaListResult, ApiError> {
    let media = engine.store().scan::<MediaAsset>(b"")?.iter().filter(|m| params.project_id.as_ref().is_none_or(|p| m.project_ids.contains(p))).map(Into::into).collect();
    Ok(MediaListResult { media })
}
