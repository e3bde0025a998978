//! Compiles the English catalog (messages/en/*.json at the repository root) into a
//! `match`: a catalog that is not a flat JSON object of strings, or an id given twice,
//! fails the build, so the lookup cannot fail at run time.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../messages/en");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap_or_else(|e| panic!("{}: {e}", dir.display())).path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    let mut catalog: BTreeMap<String, (String, String)> = BTreeMap::new();
    for path in &files {
        println!("cargo:rerun-if-changed={}", path.display());
        let feature = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_owned();
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let table: BTreeMap<String, String> = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: not a flat object of strings: {e}", path.display()));
        for (id, message) in table {
            if let Some((other, _)) = catalog.insert(id.clone(), (feature.clone(), message)) {
                panic!("{id} is in both messages/en/{other}.json and messages/en/{feature}.json");
            }
        }
    }
    // A sorted table searched by halves: a `match` of a thousand strings compares them
    // one after another.
    let mut out = String::from("/// The English text of `id`.\npub fn english(id: &str) -> Option<&'static str> {\n    TEXTS.binary_search_by(|(key, _)| (*key).cmp(id)).ok().map(|at| TEXTS[at].1)\n}\n\n/// Every id of the English catalog with its text, in order.\nconst TEXTS: &[(&str, &str)] = &[\n");
    for (id, (_, message)) in &catalog {
        let _ = writeln!(out, "    ({id:?}, {message:?}),");
    }
    out.push_str("];\n\n/// Every id of the English catalog, in order, with the feature file it is in.\npub const IDS: &[(&str, &str)] = &[\n");
    for (id, (feature, _)) in &catalog {
        let _ = writeln!(out, "    ({id:?}, {feature:?}),");
    }
    out.push_str("];\n");
    let target = Path::new(&std::env::var("OUT_DIR").unwrap_or_else(|e| panic!("OUT_DIR: {e}"))).join("catalog.rs");
    std::fs::write(&target, out).unwrap_or_else(|e| panic!("{}: {e}", target.display()));
}
