//! Files beside the database: media, content hashes and durable file writes.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// `sha256:<hex>` of some bytes: the reference of content-addressed records.
pub fn sha256_ref(bytes: &[u8]) -> String {
    use sha2::Digest;
    format!("sha256:{}", hex::encode(sha2::Sha256::digest(bytes)))
}

/// The folder holding media files: `<data dir>/media`.
pub fn media_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("media")
}

/// Writes `bytes` to `path` through a temporary file, synced, then renamed, so a crash
/// never leaves a half-written file under the final name.
pub fn write_file_durably(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().ok_or_else(|| std::io::Error::other("no parent folder"))?;
    std::fs::create_dir_all(dir)?;
    let tmp = path.with_extension("tmp-write");
    {
        let mut file = File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
    }
    std::fs::rename(&tmp, path)?;
    File::open(dir)?.sync_all()
}
