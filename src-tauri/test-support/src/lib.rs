//! Test helpers shared by the crates' tests: temporary data dirs with an engine on a
//! fake clock and sequential ids, loaders for the fixtures in `tests/fixtures`, and
//! the scripted OpenAI-compatible model server ([`model_server`]), and the seeded
//! [`Rng`] of the randomized tests and benchmarks.
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub mod embedder;
pub mod model_server;
mod rng;
pub mod search_eval;

pub use rng::Rng;

use std::path::{Path, PathBuf};

use inkstone_api::{Engine, EngineConfig};
use serde_json::Value;

/// A temporary data dir with an open engine; both go away on drop.
pub struct TestEngine {
    pub engine: Engine,
    pub dir: tempfile::TempDir,
}

impl TestEngine {
    /// A fresh data dir with a fake clock and sequential ids.
    pub fn new() -> TestEngine {
        let dir = tempfile::tempdir().expect("temp dir");
        let engine = Engine::open(EngineConfig::for_tests(dir.path())).expect("open engine");
        TestEngine { engine, dir }
    }

    /// Calls a method and panics with the error when it fails.
    pub fn ok(&self, method: &str, params: Value) -> Value {
        match self.engine.call(method, params) {
            Ok(value) => value,
            Err(error) => panic!("{method} failed: {error:?}"),
        }
    }

    pub fn data_dir(&self) -> &Path {
        self.dir.path()
    }
}

impl Default for TestEngine {
    fn default() -> Self {
        TestEngine::new()
    }
}

/// The repository's `tests/fixtures` folder.
pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures")
}

/// Unpacks `tests/fixtures/<name>` (a .tar.gz) into `dest`.
pub fn unpack_fixture(name: &str, dest: &Path) {
    let file = std::fs::File::open(fixtures_dir().join(name)).unwrap_or_else(|e| panic!("fixture {name}: {e}"));
    tar::Archive::new(flate2::read::GzDecoder::new(file)).unpack(dest).expect("unpack fixture");
}

/// Every file below `dir` with its bytes, by relative path, for comparing folders.
pub fn read_tree(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut std::collections::BTreeMap<String, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).expect("read dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let rel = path.strip_prefix(root).expect("prefix").to_string_lossy().replace('\\', "/");
                out.insert(rel, std::fs::read(&path).expect("read"));
            }
        }
    }
    let mut out = std::collections::BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// A 1x1 transparent PNG, base64-encoded.
pub fn tiny_png_base64() -> &'static str {
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
}

/// A 1x1 transparent PNG.
pub fn tiny_png() -> Vec<u8> {
    // Decoded by hand from `tiny_png_base64` to keep this crate free of a base64 dependency.
    vec![
        0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00,
        0x00, 0x1f, 0x15, 0xc4, 0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0xda, 0x63, 0x64, 0x60, 0xf8, 0x5f, 0x0f, 0x00, 0x02, 0x87, 0x01, 0x80, 0xeb, 0x47,
        0xba, 0x92, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
    ]
}
