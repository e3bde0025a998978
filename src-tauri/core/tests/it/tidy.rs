//! Rules about the code itself that a reviewer would otherwise have to remember.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The HTTP library stays behind `llm::transport`, so timeouts, size limits, proxy and
/// CA settings and error mapping cannot be bypassed by a second HTTP path.
#[test]
fn only_llm_transport_uses_reqwest() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(files.len() > 20, "the walk found the sources");
    let offenders: Vec<String> = files
        .iter()
        .filter(|p| !p.ends_with("llm/transport.rs"))
        .filter(|p| {
            std::fs::read_to_string(p).unwrap().lines().any(|line| {
                let code = line.split("//").next().unwrap_or("");
                code.contains("reqwest::") || code.contains("use reqwest")
            })
        })
        .map(|p| p.strip_prefix(&src).unwrap().display().to_string())
        .collect();
    assert!(offenders.is_empty(), "reqwest used outside llm/transport.rs: {offenders:?}");
}
