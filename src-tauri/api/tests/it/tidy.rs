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

/// The sources of the engine (inkstone-api), the agent (inkstone-agent), the domain
/// (inkstone-core) and the crates below them (inkstone-model, inkstone-text,
/// inkstone-error, inkstone-store, inkstone-llm, inkstone-search).
fn engine_sources() -> Vec<PathBuf> {
    let core = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for src in ["src", "../agent/src", "../core/src", "../model/src", "../text/src", "../error/src", "../store/src", "../llm/src", "../search/src"].map(|dir| core.join(dir)) {
        rust_files(&src, &mut files);
    }
    files
}

/// The HTTP library stays behind `llm::transport` (model calls), `sync::transport`
/// (the workspace server) and `update::transport` (the update feed), so timeouts, size limits, proxy and CA settings and error
/// mapping cannot be bypassed by a third HTTP path.
#[test]
fn only_llm_transport_uses_reqwest() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = engine_sources();
    assert!(files.len() > 20, "the walk found the sources");
    assert!(files.iter().any(|p| p.ends_with("llm/src/transport.rs")), "the walk sees inkstone-llm");
    let offenders: Vec<String> = files
        .iter()
        .filter(|p| !p.ends_with("llm/src/transport.rs") && !p.ends_with("core/src/sync/transport.rs") && !p.ends_with("core/src/update/transport.rs"))
        .filter(|p| {
            std::fs::read_to_string(p).unwrap().lines().any(|line| {
                let code = line.split("//").next().unwrap_or("");
                code.contains("reqwest::") || code.contains("use reqwest")
            })
        })
        .map(|p| p.strip_prefix(&src).unwrap_or(p).display().to_string())
        .collect();
    assert!(offenders.is_empty(), "reqwest used outside llm/transport.rs, sync/transport.rs and update/transport.rs: {offenders:?}");
}

/// The search engine and the Chinese segmenter stay inside inkstone-search (core's
/// `retrieval` and `suggest` re-export it): the index is rebuilt from the store, and
/// nothing else may come to depend on its files or on jieba's dictionary.
#[test]
fn only_the_search_crate_uses_tantivy_and_jieba() {
    let search = Path::new(env!("CARGO_MANIFEST_DIR")).join("../search/src");
    let files = engine_sources();
    assert!(files.iter().any(|p| p.ends_with("search/src/query.rs")), "the walk sees inkstone-search");
    let names = |p: &PathBuf, library: &str| std::fs::read_to_string(p).unwrap().lines().any(|line| line.split("//").next().unwrap_or("").contains(library));
    assert!(files.iter().any(|p| names(p, "tantivy::")) && files.iter().any(|p| names(p, "jieba_rs::")), "the walk sees tantivy and jieba");
    let offenders: Vec<String> =
        files.iter().filter(|p| !p.starts_with(&search)).filter(|p| names(p, "tantivy::") || names(p, "jieba_rs::")).map(|p| p.display().to_string()).collect();
    assert!(offenders.is_empty(), "tantivy or jieba used outside inkstone-search: {offenders:?}");
}

/// The layers of the engine, bottom first: the domain (inkstone-core), then the agent
/// (inkstone-agent) and the facade (inkstone-api), which name the modules below them
/// by the same `crate::` paths through their imports and re-exports. A module may
/// import only modules listed before it (ARCHITECTURE.md, "Modules of inkstone-core,
/// inkstone-agent and inkstone-api"); a new module must be placed here. `model` and `clock` are the inkstone-model crate, `diff`,
/// `profiles`, `pipeline` and `quality` the inkstone-text crate, `error` inkstone-error
/// and `store` inkstone-store, re-exported by core under these names (Cargo keeps those
/// crates from importing core; [`TEXT_LAYERS`] orders the modules inside inkstone-text).
/// `llm` is inkstone-llm's client with core's metered `llm::runtime` on top; `suggest`
/// is inkstone-search's, and `retrieval` is inkstone-search with core's metered
/// embedder on top.
const LAYERS: &[&str] = &[
    "error",
    "model",
    "clock",       // leaves (inkstone-model)
    "store",       // sled behind typed records
    "spreadsheet", // CSV for spreadsheets: BOM, quoting, formulas defused
    "diff",
    "profiles",
    "pipeline",
    "quality",
    "suggest", // keyword suggestions (inkstone-search, which shares jieba with the index)
    "usage",   // pure subsystems
    "policy",  // the workspace policy as last seen, and the check before a model call
    "outbox",  // sync delivery jobs and their state machine
    "update",  // the update feed, signatures, the AppImage's replacement
    "llm",
    "retrieval", // local search (inkstone-search) and the metered door it embeds through
    "config",
    "kernel",      // the model runtime, configuration, the kernel
    "project",     // the project domain's reads and writes
    "proposals",   // the reviewable change model and its apply transaction
    "memory",      // workspace and project memory, habits from accepted work
    "sync",        // team sync: transport, delivery, pull, conflicts
    "performance", // publications, metric snapshots, platform-export imports, the AI's summary
    // inkstone-agent from here on.
    "prompts", // versioned layered prompt files and their composer
    "intent",  // session intent from the person's messages (rules + jieba)
    "context", // context assembly
    "harness",
    "tools",  // the agent runtime and the tools it runs
    "growth", // one-click optimize: runs, the platform-fit report
    // inkstone-api from here on.
    "problems", // the domain's error enums as codes, problems and hints
    "activity", // the AI activity view over audit, usage and session records
    "backup",   // sits above every subsystem whose records it carries
    "engine",
    "api", // the engine; the facade
];

/// The top-level modules `code` names through `crate::` paths, including grouped
/// imports such as `use crate::{model, store::Batch}`.
fn crate_references(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let after = &rest[at + "crate::".len()..];
        if let Some(group) = after.strip_prefix('{') {
            // Split the group at its top level only: `store::{Batch, Kind}` is one item.
            let (mut depth, mut item_start, mut items) = (0usize, true, Vec::new());
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    c if item_start && (c.is_alphanumeric() || c == '_') => {
                        items.push(String::from(c));
                        item_start = false;
                    }
                    c if !item_start && depth == 0 && (c.is_alphanumeric() || c == '_') => {
                        if let Some(last) = items.last_mut() {
                            if !last.ends_with(':') {
                                last.push(c);
                            }
                        }
                    }
                    ':' if depth == 0 => {
                        if let Some(last) = items.last_mut() {
                            last.push(':');
                        }
                    }
                    _ => {}
                }
            }
            out.extend(items.into_iter().map(|item| item.trim_end_matches(':').to_owned()));
        } else {
            let name: String = after.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if !name.is_empty() {
                out.push(name);
            }
        }
        rest = after;
    }
    out
}

/// The code of a source file without comments and without its `#[cfg(test)]` part
/// (tests may reach up to build what they check).
fn code_of(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let text = text.split("#[cfg(test)]").next().unwrap_or("");
    text.lines().map(|line| line.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

/// The imports in `src` (a crate's sources) that go upwards or sideways against
/// `layers`, and the modules `layers` does not place.
fn layer_violations(src: &Path, layers: &[&str]) -> (Vec<String>, Vec<String>) {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    assert!(!files.is_empty(), "the walk found the sources of {}", src.display());
    let rank = |module: &str| layers.iter().position(|m| *m == module);
    let mut unplaced = Vec::new();
    let mut upward = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(src).unwrap();
        let first = relative.components().next().unwrap().as_os_str().to_string_lossy().into_owned();
        let module = first.trim_end_matches(".rs").to_owned();
        if module == "lib" {
            continue;
        }
        let Some(own) = rank(&module) else {
            unplaced.push(module);
            continue;
        };
        for target in crate_references(&code_of(file)) {
            if target == module {
                continue;
            }
            match rank(&target) {
                Some(other) if other < own => {}
                Some(_) => upward.push(format!("{} imports `{target}` (layer {} above {module})", relative.display(), rank(&target).unwrap())),
                None => upward.push(format!("{} names `crate::{target}`, which is not a module in the layers", relative.display())),
            }
        }
    }
    unplaced.sort();
    unplaced.dedup();
    (unplaced, upward)
}

/// Every import between core's modules goes downwards, so the module graph has no
/// cycle and a new subsystem cannot quietly depend on the facade above it.
#[test]
fn modules_import_only_downwards() {
    // The domain (inkstone-core), the agent above it and the engine above both
    // (inkstone-agent and inkstone-api, whose `crate::` paths reach the modules below
    // through their imports and re-exports) share one order.
    for src in ["../core/src", "../agent/src", "src"] {
        let (unplaced, upward) = layer_violations(&Path::new(env!("CARGO_MANIFEST_DIR")).join(src), LAYERS);
        assert!(unplaced.is_empty(), "modules of {src} without a layer (add them to LAYERS and ARCHITECTURE.md): {unplaced:?}");
        assert!(upward.is_empty(), "imports that go upwards or sideways in {src}:\n{}", upward.join("\n"));
    }
}

/// The modules of inkstone-text, bottom first: the profiles the compilers read, the
/// diffs, the compilers and measuring, the checks over compiled findings.
const TEXT_LAYERS: &[&str] = &["profiles", "diff", "pipeline", "quality"];

/// Inside inkstone-text, too, imports go downwards only.
#[test]
fn text_modules_import_only_downwards() {
    let (unplaced, upward) = layer_violations(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../text/src"), TEXT_LAYERS);
    assert!(unplaced.is_empty(), "inkstone-text modules without a layer (add them to TEXT_LAYERS): {unplaced:?}");
    assert!(upward.is_empty(), "imports that go upwards or sideways in inkstone-text:\n{}", upward.join("\n"));
}

/// Every package `package` depends on, directly or not, for any target, from
/// Cargo.lock (so no network and no `cargo metadata` run).
fn locked_dependencies(package: &str) -> std::collections::BTreeSet<String> {
    let lock = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.lock")).unwrap();
    let lock: toml::Table = toml::from_str(&lock).unwrap();
    let packages = lock["package"].as_array().unwrap();
    let deps_of = |name: &str| -> Vec<String> {
        // Two versions of one name are both followed: a superset is what the check needs.
        packages
            .iter()
            .filter(|p| p["name"].as_str() == Some(name))
            .flat_map(|p| p.get("dependencies").and_then(|d| d.as_array()).cloned().unwrap_or_default())
            .map(|d| d.as_str().unwrap().split(' ').next().unwrap().to_owned())
            .collect()
    };
    let mut seen = std::collections::BTreeSet::new();
    let mut todo = deps_of(package);
    while let Some(name) = todo.pop() {
        if seen.insert(name.clone()) {
            todo.extend(deps_of(&name));
        }
    }
    seen
}

/// The pure layers build without the IO runtime, HTTP, the search index, the Chinese
/// segmenter or the store: nothing inkstone-text or inkstone-model depends on, however
/// indirectly, is one of them, so the compilers build and test on their own, and a
/// change to them does not wait for those crates.
#[test]
fn the_text_and_model_crates_need_no_runtime_http_search_or_store() {
    let heavy = ["tokio", "reqwest", "hyper", "tantivy", "jieba-rs", "sled", "keyring-core"];
    let core = locked_dependencies("inkstone-core");
    assert!(heavy.iter().all(|h| core.contains(*h)), "the walk sees core's own dependencies: {heavy:?}");
    assert!(core.contains("inkstone-text") && core.contains("inkstone-model") && core.contains("comrak"));
    for package in ["inkstone-text", "inkstone-model"] {
        let deps = locked_dependencies(package);
        assert!(!deps.is_empty());
        let found: Vec<&str> = heavy.iter().copied().filter(|h| deps.contains(*h)).collect();
        assert!(found.is_empty(), "{package} depends on {found:?}");
        let inkstone: Vec<&String> = deps.iter().filter(|d| d.starts_with("inkstone-")).collect();
        let allowed: &[&str] = if package == "inkstone-text" { &["inkstone-model", "inkstone-messages"] } else { &[] };
        assert!(inkstone.iter().all(|d| allowed.contains(&d.as_str())), "{package} depends on {inkstone:?}: only crates below it may be");
    }
}

/// The layers under the engine stay light too: the store needs no async runtime, HTTP,
/// search index or segmenter, and the model client no search index, segmenter or
/// compilers, so a change to either rebuilds neither of those.
#[test]
fn the_store_and_llm_crates_need_only_what_they_are_for() {
    let store = locked_dependencies("inkstone-store");
    assert!(store.contains("sled") && store.contains("inkstone-durable"), "the walk sees the store's own dependencies");
    let found: Vec<&str> = ["tokio", "reqwest", "hyper", "tantivy", "jieba-rs", "keyring-core", "comrak"].into_iter().filter(|h| store.contains(*h)).collect();
    assert!(found.is_empty(), "inkstone-store depends on {found:?}");
    let llm = locked_dependencies("inkstone-llm");
    assert!(llm.contains("reqwest") && llm.contains("inkstone-store"), "the walk sees the client's own dependencies");
    let found: Vec<&str> = ["tantivy", "jieba-rs", "comrak", "inkstone-text"].into_iter().filter(|h| llm.contains(*h)).collect();
    assert!(found.is_empty(), "inkstone-llm depends on {found:?}");
}

/// The workspace's crates, bottom first. A crate may depend (outside its tests) only on
/// crates listed before it; a new crate must be placed here and in ARCHITECTURE.md.
/// Cargo refuses a cycle, so an upward import cannot compile once the lower crate is a
/// dependency of the upper one; this order also rules out the sideways ones Cargo
/// would accept (inkstone-store on inkstone-llm, inkstone-text on inkstone-store).
const CRATE_LAYERS: &[&str] = &[
    "inkstone-model",
    "inkstone-messages",
    "inkstone-error",
    "inkstone-text",
    "inkstone-durable",
    "inkstone-sync-proto",
    "inkstone-store",
    "inkstone-llm",
    "inkstone-search",
    "inkstone-core",
    "inkstone-agent",
    "inkstone-api",
    "inkstone-server",
    "inkstone-test-support",
    "inkstone-cli",
    "inkstone",
    "inkstone-appimage-runtime",
    "xtask",
];

/// Each workspace member's package name and the names of its dependencies outside its
/// tests (`[dependencies]`, for every target), from the manifests.
fn workspace_manifests() -> Vec<(String, Vec<String>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let read = |path: &Path| -> toml::Table { toml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap() };
    let workspace = read(&root.join("Cargo.toml"));
    let members = workspace["workspace"]["members"].as_array().unwrap();
    members
        .iter()
        .map(|member| {
            let manifest = read(&root.join(member.as_str().unwrap()).join("Cargo.toml"));
            let name = manifest["package"]["name"].as_str().unwrap().to_owned();
            let mut tables: Vec<&toml::Table> = manifest.get("dependencies").and_then(|d| d.as_table()).into_iter().collect();
            if let Some(targets) = manifest.get("target").and_then(|t| t.as_table()) {
                tables.extend(targets.values().filter_map(|t| t.get("dependencies").and_then(|d| d.as_table())));
            }
            (name, tables.iter().flat_map(|t| t.keys().cloned()).collect())
        })
        .collect()
}

/// Cargo holds the direction between crates: each depends only on crates below it.
#[test]
fn crates_depend_only_downwards() {
    let manifests = workspace_manifests();
    assert!(manifests.len() >= CRATE_LAYERS.len(), "the walk found the members");
    let rank = |name: &str| CRATE_LAYERS.iter().position(|c| *c == name);
    let mut problems = Vec::new();
    for (name, dependencies) in &manifests {
        let Some(own) = rank(name) else {
            problems.push(format!("{name} has no place in CRATE_LAYERS"));
            continue;
        };
        for dependency in dependencies.iter().filter(|d| d.starts_with("inkstone")) {
            match rank(dependency) {
                Some(other) if other < own => {}
                _ => problems.push(format!("{name} depends on {dependency}, which is not below it")),
            }
        }
    }
    assert!(problems.is_empty(), "crate dependencies against CRATE_LAYERS:\n{}", problems.join("\n"));
}

/// What the source scans above check per file, per crate: only these crates name the
/// HTTP client, the search index, the store's engine, the keychain and the TypeScript
/// derive (tests may use
/// them to drive the real thing; their `[dev-dependencies]` are not counted).
#[test]
fn only_their_crates_name_http_search_sled_and_the_keychain() {
    let allowed: &[(&str, &[&str])] = &[
        // Model calls; the workspace server's client (`sync::transport`); a benchmark client.
        ("reqwest", &["inkstone-llm", "inkstone-core", "xtask"]),
        // The search index and the Chinese segmenter (core re-exports them as `retrieval`
        // and `suggest`).
        ("tantivy", &["inkstone-search"]),
        ("jieba-rs", &["inkstone-search"]),
        // The client's store, the disk syncs it shares with the server, the server's store.
        ("sled", &["inkstone-store", "inkstone-durable", "inkstone-server"]),
        // The API keys of LLM profiles (the keychain itself is `inkstone-llm::keychain`).
        ("keyring-core", &["inkstone-llm"]),
        // The TypeScript of the wire types: they live in the api (`api::dto`), and only there.
        ("ts-rs", &["inkstone-api"]),
    ];
    let manifests = workspace_manifests();
    let mut problems = Vec::new();
    for (library, crates) in allowed {
        let naming: Vec<&str> = manifests.iter().filter(|(_, deps)| deps.iter().any(|d| d == library)).map(|(name, _)| name.as_str()).collect();
        assert!(!naming.is_empty(), "the walk sees {library}");
        problems.extend(naming.iter().filter(|name| !crates.contains(name)).map(|name| format!("{name} depends on {library}")));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The check above catches what it must: an upward import, a grouped one, and one
/// hidden after a sideways module; comments and tests do not count.
#[test]
fn the_layer_check_sees_upward_imports() {
    assert_eq!(crate_references("use crate::api::Engine;"), vec!["api"]);
    assert_eq!(crate_references("use crate::{model::Project, store::{Batch, Kind}};"), vec!["model", "store"]);
    assert_eq!(crate_references("let x = crate::harness::replay(y);"), vec!["harness"]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.rs");
    std::fs::write(&path, "// crate::api in a comment\nuse crate::store::Batch;\n#[cfg(test)]\nmod tests { use crate::api::Engine; }\n").unwrap();
    assert_eq!(crate_references(&code_of(&path)), vec!["store"]);
}

/// A hint call in core's source, or an error's wording (`.problem("id", …)`): its id,
/// whether it carries values, and their names.
struct HintCall {
    /// `hint` or `problem`: the family of its wording in the catalog (`hint.<id>`).
    kind: &'static str,
    id: String,
    params: Option<Vec<String>>,
    place: String,
}

/// The arguments of a call, from just after its `(`, split at top-level commas; string
/// literals are kept whole (with their quotes).
fn call_arguments(after_paren: &str) -> Vec<String> {
    let mut args = vec![String::new()];
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for c in after_paren.chars() {
        if in_string {
            args.last_mut().unwrap().push(c);
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' if depth == 0 => break,
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                args.push(String::new());
                continue;
            }
            _ => {}
        }
        args.last_mut().unwrap().push(c);
    }
    args.into_iter().map(|a| a.trim().to_owned()).filter(|a| !a.is_empty()).collect()
}

/// Every hint the core gives with a literal id: `.hint("id", …)`, the harness's
/// `hint("id", …)`, `Hint::new("id", …)`, and the ones with values, `hint_with`,
/// `Hint::with` and the actions (`.action("id", &[…])`), with the names of their values.
fn hint_calls() -> Vec<HintCall> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = engine_sources();
    let mut calls = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        let names = [
            ("hint(", false, "hint"),
            ("Hint::new(", false, "hint"),
            ("hint_with(", true, "hint"),
            ("Hint::with(", true, "hint"),
            ("action(", true, "hint"),
            ("problem(", true, "problem"),
        ];
        for (name, with_values, kind) in names {
            for (at, _) in code.match_indices(name) {
                let before = code[..at].chars().next_back().unwrap_or(' ');
                if matches!(name, "hint(" | "problem(" | "action(") && (before.is_alphanumeric() || before == '_') {
                    continue; // another function, such as `env_hint(`
                }
                let args = call_arguments(&code[at + name.len()..]);
                let Some(id) = args.first().and_then(|a| a.strip_prefix('"')).and_then(|a| a.strip_suffix('"')) else {
                    continue; // `fn hint(id: &str, …)` or an id in a variable
                };
                let params = with_values.then(|| {
                    let values = args.last().map(String::as_str).unwrap_or("");
                    values.match_indices("(\"").filter_map(|(i, _)| values[i + 2..].split_once('"').map(|(k, _)| k.to_owned())).collect()
                });
                let line = code[..at].lines().count();
                calls.push(HintCall { kind, id: id.to_owned(), params, place: format!("{}:{line}", path.strip_prefix(root).unwrap().display()) });
            }
        }
    }
    calls
}

/// Every hint the core gives has a wording in the message catalog (`hint.<id>` in
/// messages/en/ and messages/zh/), and so does every error that names its problem
/// (`problem.<id>`), so a Chinese error banner or AI panel says what went wrong and what
/// to do in Chinese. A wording that names values (`{session}`) is only used by calls
/// that give them (`hint_with`, `problem`), at every place the id is given.
#[test]
fn every_hint_has_a_ui_wording() {
    let calls = hint_calls();
    let mut missing = Vec::new();
    let mut unfilled = Vec::new();
    for call in &calls {
        let Some(text) = inkstone_messages::english(&format!("{}.{}", call.kind, call.id)) else {
            missing.push(format!("{}.{} ({})", call.kind, call.id, call.place));
            continue;
        };
        let given = call.params.clone().unwrap_or_default();
        // The CLI words the same hint from `cli.hint.<id>` when it has one.
        let cli = inkstone_messages::english(&format!("cli.{}.{}", call.kind, call.id)).unwrap_or_default();
        for name in inkstone_messages::placeholders(text).into_iter().chain(inkstone_messages::placeholders(cli)) {
            if !given.contains(&name) {
                unfilled.push(format!("{} ({}) gives no `{name}` for its wording", call.id, call.place));
            }
        }
    }
    assert!(calls.len() > 150, "the scan found the hints ({})", calls.len());
    assert!(calls.iter().filter(|c| c.params.as_ref().is_some_and(|p| !p.is_empty())).count() >= 9, "the scan found the hints with values");
    assert!(calls.iter().filter(|c| c.kind == "problem").count() >= 12, "the scan found the errors' wordings");
    missing.sort();
    missing.dedup();
    assert!(missing.is_empty(), "hints and errors without a `hint.<id>` or `problem.<id>` wording in messages/en and messages/zh: {missing:?}");
    assert!(unfilled.is_empty(), "wordings with places their hints do not fill:\n{}", unfilled.join("\n"));
}

/// The scan above reads ids and value names through nested calls and strings.
#[test]
fn the_hint_scan_reads_calls() {
    assert_eq!(
        call_arguments(r#""a", format!("x (`y`), {z}", z = f(1, 2)), &[("k", &v), ("m", "(n")]) tail"#),
        vec![r#""a""#.to_owned(), r#"format!("x (`y`), {z}", z = f(1, 2))"#.to_owned(), r#"&[("k", &v), ("m", "(n")]"#.to_owned(),]
    );
    assert_eq!(inkstone_messages::placeholders("Stage {proposal} in {session} (`{`)"), vec!["proposal", "session"]);
}

/// The longest ARCHITECTURE.md may grow: a map a newcomer reads in a minute. Behaviour
/// belongs in module docs and `docs/design/`.
const ARCHITECTURE_MAX_LINES: usize = 150;

/// The repository paths a map names: every backticked token and link target that looks
/// like a relative path (`dir/`, `dir/file.ext`). Code such as `//!` or `a::b` is not one.
fn named_paths(map: &str) -> Vec<String> {
    let path = regex::Regex::new(r"^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*/?$").unwrap();
    let quoted = regex::Regex::new(r"`([^`\n]+)`|\]\(([^)\s]+)\)").unwrap();
    let mut out: Vec<String> = quoted
        .captures_iter(map)
        .filter_map(|c| c.get(1).or_else(|| c.get(2)).map(|m| m.as_str().to_owned()))
        .filter(|token| token.contains('/') && path.is_match(token))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// ARCHITECTURE.md stays a map: within its cap, and every path it names exists, so it
/// cannot drift from the tree unnoticed.
#[test]
fn the_architecture_map_is_short_and_names_only_paths_that_exist() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let map = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let lines = map.lines().count();
    assert!(lines <= ARCHITECTURE_MAX_LINES, "ARCHITECTURE.md has {lines} lines, over its cap of {ARCHITECTURE_MAX_LINES}: move behaviour into module docs or docs/design/");
    let paths = named_paths(&map);
    assert!(paths.len() >= 10, "the scan found the map's paths ({paths:?})");
    let gone: Vec<&String> = paths.iter().filter(|p| !root.join(p.as_str()).exists()).collect();
    assert!(gone.is_empty(), "ARCHITECTURE.md names paths that do not exist: {gone:?}");
}

/// The path scan takes paths and links, and leaves code alone.
#[test]
fn the_map_scan_reads_paths() {
    let map = "`src-tauri/core/` and [sync](docs/design/sync.md), `//!`, `a::b`, `store`, `<data>/index/`";
    assert_eq!(named_paths(map), vec!["docs/design/sync.md".to_owned(), "src-tauri/core/".to_owned()]);
}

/// The most lines a Rust source file of the workspace may hold (files under `tests/`,
/// `benches/` and `examples/` aside; a file's own unit tests count). Past it a file
/// almost always carries more than one concern: make it a face with a file per part
/// (as `sync`, `proposals`, `server/src/storage/sled/` are) rather than raise the cap.
const SOURCE_MAX_LINES: usize = 600;

/// The files over the cap today, each with why it is still one file. An entry whose
/// file shrank under the cap must go.
const SOURCE_OVER_CAP: &[(&str, &str)] = &[];

/// Every Rust source file under `src-tauri/` that is not a test, bench or example,
/// relative to `src-tauri/`.
fn workspace_sources() -> Vec<(String, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let mut out: Vec<(String, PathBuf)> = files
        .into_iter()
        .filter_map(|path| {
            let relative = path.strip_prefix(&root).ok()?.to_string_lossy().replace('\\', "/");
            let skipped = relative.split('/').any(|part| matches!(part, "tests" | "benches" | "examples" | "target"));
            (!skipped).then_some((relative, path))
        })
        .collect();
    out.sort();
    out
}

/// No source file grows past [`SOURCE_MAX_LINES`] but the listed ones, and the list
/// holds only files still over it.
#[test]
fn no_source_file_grows_past_its_cap() {
    let sources = workspace_sources();
    assert!(sources.len() > 100 && sources.iter().any(|(name, _)| name == "core/src/lib.rs"), "the walk found the workspace's sources");
    let mut over = Vec::new();
    for (name, path) in &sources {
        let lines = std::fs::read_to_string(path).unwrap().lines().count();
        if lines > SOURCE_MAX_LINES && !SOURCE_OVER_CAP.iter().any(|(listed, _)| listed == name) {
            over.push(format!("{name}: {lines} lines"));
        }
    }
    assert!(over.is_empty(), "over the cap of {SOURCE_MAX_LINES} lines (split the file along its concerns): {over:?}");
    for (listed, why) in SOURCE_OVER_CAP {
        assert!(!why.is_empty());
        let path = sources.iter().find(|(name, _)| name == listed).map(|(_, path)| path).unwrap_or_else(|| panic!("{listed} is listed over the cap but does not exist"));
        let lines = std::fs::read_to_string(path).unwrap().lines().count();
        assert!(lines > SOURCE_MAX_LINES, "{listed} has {lines} lines, within the cap: take it off SOURCE_OVER_CAP");
    }
}

/// The most lines a function of the workspace's sources may span, its signature to its
/// closing brace (files under `tests/`, `benches/` and `examples/` aside; unit tests
/// count). Past it a reader wants names for the parts: split it into functions that
/// say what each part does rather than raise the cap.
const FUNCTION_MAX_LINES: usize = 120;

/// The functions over the cap today (file, function, why it is still one function).
/// An entry whose function shrank under the cap must go.
const FUNCTIONS_OVER_CAP: &[(&str, &str, &str)] = &[];

/// The functions `code` defines, as (name, first line, lines): a line that starts,
/// after its indentation, with `fn` (after any of `pub`, `pub(..)`, `const`, `async`,
/// `unsafe`), counted to the first line after it that is its indentation and `}`. A
/// declaration without a body (a trait's) is none; a function on one line is one line.
fn function_lengths(code: &str) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = code.lines().collect();
    let mut out = Vec::new();
    for (at, line) in lines.iter().enumerate() {
        let rest = line.trim_start();
        let indent = &line[..line.len() - rest.len()];
        let mut rest = rest;
        loop {
            if let Some(after) = rest.strip_prefix("pub(") {
                rest = after.split_once(')').map_or("", |(_, tail)| tail).trim_start();
            } else if let Some(after) = ["pub ", "const ", "async ", "unsafe "].iter().find_map(|word| rest.strip_prefix(word)) {
                rest = after.trim_start();
            } else {
                break;
            }
        }
        let Some(signature) = rest.strip_prefix("fn ") else { continue };
        let name: String = signature.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        if name.is_empty() {
            continue;
        }
        // The body opens before the signature ends with `;` (a declaration).
        let Some(open) = lines[at..].iter().position(|l| l.contains('{') || l.trim_end().ends_with(';')) else { continue };
        if !lines[at + open].contains('{') {
            continue;
        }
        if open == 0 && line.trim_end().ends_with('}') {
            out.push((name, at + 1, 1));
            continue;
        }
        let close = format!("{indent}}}");
        if let Some(end) = lines[at + 1..].iter().position(|l| *l == close) {
            out.push((name, at + 1, end + 2));
        }
    }
    out
}

/// The scan measures bodies, and leaves declarations and strings alone.
#[test]
fn the_function_scan_measures_bodies() {
    let code = "pub(crate) async fn a() {\n    one();\n}\n\ntrait T {\n    fn declared(&self);\n    fn given(&self) {}\n}\n    const fn c() -> u8 {\n        1\n    }\nfn w<T>()\nwhere\n    T: Copy,\n{\n    let s = \"fn not_one() {\";\n}\n";
    let lengths = function_lengths(code);
    let found: Vec<(&str, usize, usize)> = lengths.iter().map(|(name, line, lines)| (name.as_str(), *line, *lines)).collect();
    assert_eq!(found, [("a", 1, 3), ("given", 7, 1), ("c", 9, 3), ("w", 12, 6)]);
}

/// No function grows past [`FUNCTION_MAX_LINES`] but the listed ones, and the list
/// holds only functions still over it.
#[test]
fn no_function_grows_past_its_cap() {
    let sources = workspace_sources();
    let mut measured = 0;
    let mut over = Vec::new();
    let mut listed_over = std::collections::BTreeSet::new();
    for (name, path) in &sources {
        for (function, line, lines) in function_lengths(&std::fs::read_to_string(path).unwrap()) {
            measured += 1;
            if lines <= FUNCTION_MAX_LINES {
                continue;
            }
            if FUNCTIONS_OVER_CAP.iter().any(|(file, listed, _)| file == name && *listed == function) {
                listed_over.insert((name.clone(), function));
            } else {
                over.push(format!("{name}:{line} {function}: {lines} lines"));
            }
        }
    }
    assert!(measured > 1000, "the scan found the workspace's functions ({measured})");
    assert!(over.is_empty(), "functions over the cap of {FUNCTION_MAX_LINES} lines (give the parts names): {over:#?}");
    for (file, function, why) in FUNCTIONS_OVER_CAP {
        assert!(!why.is_empty());
        assert!(
            listed_over.contains(&((*file).to_owned(), (*function).to_owned())),
            "{file}: {function} is listed over the cap but is within it (or gone): take it off FUNCTIONS_OVER_CAP"
        );
    }
}

/// One catalog file: its feature name and its ids with their texts.
type CatalogFile = (String, std::collections::BTreeMap<String, String>);

/// The message catalog of one language: messages/<lang>/<feature>.json.
fn catalog(lang: &str) -> Vec<CatalogFile> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../messages").join(lang);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "json")).collect();
    files.sort();
    files
        .iter()
        .map(|path| {
            let table = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            (path.file_stem().unwrap().to_string_lossy().into_owned(), table)
        })
        .collect()
}

/// Every string literal in `code` (Rust or TypeScript, double-quoted), and the text of
/// every template literal before its first `${` (an id built from a prefix).
fn string_literals(code: &str) -> (Vec<String>, Vec<String>) {
    let literal = regex::Regex::new(r#""((?:[^"\\\n]|\\.)*)""#).unwrap();
    let template = regex::Regex::new(r"`([A-Za-z0-9_.]*)\$\{").unwrap();
    (literal.captures_iter(code).map(|c| c[1].to_owned()).collect(), template.captures_iter(code).map(|c| c[1].to_owned()).collect())
}

fn ui_sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            ui_sources(&path, out);
        } else if (name.ends_with(".ts") || name.ends_with(".tsx")) && !name.contains(".test.") && !path.ends_with("testing/fake.ts") {
            out.push(path);
        }
    }
}

/// The families of ids the core words (a hint, an error's problem, a finding, a fit
/// point): an entry of one is used when the core names its id, whatever prefix the UI
/// builds it from.
const CORE_FAMILIES: [&str; 7] = ["cli.hint.", "hint.", "problem.", "finding.fix.", "finding.", "fit.measured.", "fit.rule."];

/// The message catalog is one per language and complete: messages/zh has every file and
/// id messages/en has and no other; a Chinese text names exactly the values its English
/// does (a value the caller does not give would show as `{name}`); every id the core
/// words (hints, problems, findings, fit points) and every literal id the UI names is in
/// the catalog; and no entry is unused (by the UI, literally or through an id it builds
/// from a prefix, or by the core).
#[test]
fn the_catalog_is_complete_in_both_languages_and_has_no_unused_entry() {
    let (en, zh) = (catalog("en"), catalog("zh"));
    let names = |c: &[CatalogFile]| c.iter().map(|(f, _)| f.clone()).collect::<Vec<_>>();
    assert_eq!(names(&en), names(&zh), "messages/en and messages/zh hold the same feature files");
    let mut problems = Vec::new();
    let mut all = std::collections::BTreeMap::new();
    for ((feature, en_table), (_, zh_table)) in en.iter().zip(&zh) {
        for id in en_table.keys().filter(|id| !zh_table.contains_key(*id)) {
            problems.push(format!("{id} (messages/en/{feature}.json) has no Chinese in messages/zh/{feature}.json"));
        }
        for id in zh_table.keys().filter(|id| !en_table.contains_key(*id)) {
            problems.push(format!("{id} is in messages/zh/{feature}.json but not in messages/en/{feature}.json"));
        }
        for (id, text) in en_table {
            if let Some(chinese) = zh_table.get(id) {
                let (want, got) = (inkstone_messages::placeholders(text), inkstone_messages::placeholders(chinese));
                if want != got {
                    problems.push(format!("{id}: the Chinese names the values {got:?}, the English {want:?}"));
                }
            }
            if all.insert(id.clone(), feature.clone()).is_some() {
                problems.push(format!("{id} is in two feature files"));
            }
        }
    }
    assert_eq!(inkstone_messages::IDS.len(), all.len(), "the compiled English catalog is the one on disk");

    // What the Rust side names: every string literal of the engine, the CLI, the app
    // shell and the server (ids of hints, problems, findings and fit points are
    // literals, or built from a literal prefix such as `larger_window_{}`), and the hint
    // calls with their ids.
    let mut core_literals = std::collections::BTreeSet::new();
    let mut rust = Vec::new();
    rust_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join(".."), &mut rust);
    for path in rust.iter().filter(|p| !p.components().any(|c| matches!(c.as_os_str().to_str(), Some("tests" | "test-support" | "xtask" | "target")))) {
        let text = std::fs::read_to_string(path).unwrap();
        core_literals.extend(string_literals(text.split("#[cfg(test)]").next().unwrap_or("")).0);
    }
    let core_prefixes: Vec<String> =
        core_literals.iter().filter_map(|l| l.split_once('{').map(|(prefix, _)| prefix.to_owned())).filter(|p| p.len() >= 3 && !p.contains(' ')).collect();
    for call in hint_calls() {
        let id = format!("{}.{}", call.kind, call.id);
        if !all.contains_key(&id) {
            problems.push(format!("{id} ({}) is not in the catalog", call.place));
        }
    }
    // What the UI names: literal ids, and prefixes of ids it builds (`error.${code}`).
    let ui = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ui/src");
    let mut files = Vec::new();
    ui_sources(&ui, &mut files);
    assert!(files.len() > 50, "the walk found the UI's sources");
    let (mut ui_literals, mut ui_prefixes) = (std::collections::BTreeSet::new(), std::collections::BTreeSet::new());
    let id_shape = regex::Regex::new(r"^[a-z][A-Za-z0-9_]*(\.[A-Za-z0-9_@-]+)+$").unwrap();
    for path in &files {
        // Literal ids in `t("…")` are checked by tsc (MessageId); here they count as uses.
        let (literals, prefixes) = string_literals(&std::fs::read_to_string(path).unwrap());
        ui_literals.extend(literals.into_iter().filter(|l| id_shape.is_match(l) || !l.contains(' ')));
        ui_prefixes.extend(prefixes.into_iter().filter(|p| p.contains('.')));
    }
    // The product's name: the i18n tests take it as their sample id.
    let kept = ["app.name"];
    for id in all.keys() {
        let family = CORE_FAMILIES.iter().find(|f| id.starts_with(**f));
        // A value's wording the UI looks up by its parent (`wordValue(…, "finding.unit", "unit")`).
        let parent_named = id.rsplit_once('.').is_some_and(|(parent, _)| ui_literals.contains(parent));
        let used = kept.contains(&id.as_str())
            || ui_literals.contains(id)
            || parent_named
            || match family {
                Some(f) => {
                    let suffix = &id[f.len()..];
                    // The core names it, or the UI's own client gives it (`offline.check_running`),
                    // or it is a sub-wording the UI fills into a finding (`finding.field.${…}`).
                    core_literals.contains(suffix)
                        || core_prefixes.iter().any(|p| suffix.starts_with(p.as_str()))
                        || ui_literals.contains(suffix)
                        || ui_prefixes.iter().any(|p| p.len() > f.len() && id.starts_with(p.as_str()))
                }
                None => ui_prefixes.iter().any(|p| id.starts_with(p.as_str())),
            };
        if !used {
            problems.push(format!("{id} (messages/en/{}.json) is used by neither the UI nor the core", all[id]));
        }
    }
    assert!(problems.is_empty(), "the message catalog:\n{}", problems.join("\n"));
}

/// The engine says what to do as an action (a hint id and its values) and leaves the
/// command to the transport: no string of core, inkstone-text or inkstone-model names
/// `inkstone-cli`. The CLI words an action from `cli.hint.<id>` (messages/en/cli.json),
/// the window from `hint.<id>`.
#[test]
fn no_engine_module_names_the_cli() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut offenders = Vec::new();
    for path in engine_sources() {
        for literal in string_literals(&code_of(&path)).0.iter().filter(|l| l.contains("inkstone-cli")) {
            offenders.push(format!("{}: \"{literal}\"", path.strip_prefix(root).unwrap().display()));
        }
    }
    assert!(offenders.is_empty(), "the engine names CLI commands; give an action (`.action(id, &[values])`) and word it in messages/*/cli.json:\n{}", offenders.join("\n"));
    assert_eq!(string_literals(r#"x.hint("a", "Run `inkstone-cli methods`.")"#).0, vec!["a".to_owned(), "Run `inkstone-cli methods`.".to_owned()], "the scan reads literals");
}

/// The domain's folders and files whose records have their wire form in `inkstone-api`
/// (`api::dto`): none of them names `ts_rs`, so a record there cannot be handed to the
/// method table as its own wire type again, and a stored field can be renamed without
/// the UI noticing. Grows as more records move; `api::dto`'s `stored_only!` list checks
/// the same per type, at compile time.
const WIRE_IN_API: &[&str] = &[
    "../core/src/sync",
    "../core/src/outbox.rs",
    "../core/src/performance.rs",
    "../core/src/performance",
    "../core/src/project",
    "../core/src/proposals",
    "../agent/src/harness/log.rs",
    "../core/src/usage.rs",
    "../agent/src/harness/event.rs",
    "../agent/src/harness/event",
    "../agent/src/harness/timeline.rs",
    "../agent/src/harness/replay.rs",
    "../agent/src/harness/compaction",
    "../agent/src/harness/compaction.rs",
    "../agent/src/harness/allow_rule.rs",
    "../agent/src/harness/permission.rs",
    "../agent/src/harness/tools.rs",
    "../agent/src/growth.rs",
    "../agent/src/growth",
    "../agent/src/prompts.rs",
    "../agent/src/intent.rs",
    "../agent/src/context.rs",
    "../core/src/memory.rs",
    "../core/src/policy.rs",
    "../search/src",
    "../llm/src/window.rs",
    "../llm/src/profile.rs",
    "../llm/src",
    "../text/src/diff.rs",
    "../text/src/pipeline.rs",
    "../text/src/pipeline",
    "../text/src/profiles.rs",
    "../model/src",
    "../error/src",
];

/// Files under [`WIRE_IN_API`] that still derive `TS`, with why.
const WIRE_IN_API_EXCEPTIONS: &[(&str, &str)] = &[];

#[test]
fn records_whose_wire_form_moved_to_the_api_do_not_name_ts_rs() {
    let api = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for path in WIRE_IN_API.iter().map(|p| api.join(p)) {
        if path.is_dir() {
            rust_files(&path, &mut files);
        } else {
            files.push(path);
        }
    }
    assert!(files.len() >= 20, "the walk found the domain's files");
    let excepted: Vec<PathBuf> = WIRE_IN_API_EXCEPTIONS.iter().map(|(p, _)| api.join(p)).collect();
    let offenders: Vec<String> =
        files.iter().filter(|f| !excepted.contains(f)).filter(|f| code_of(f).contains("ts_rs")).map(|f| f.strip_prefix(api).unwrap_or(f).display().to_string()).collect();
    assert!(offenders.is_empty(), "these files name ts_rs, though their records' wire form lives in api::dto: {offenders:?}");
    for path in &excepted {
        assert!(code_of(path).contains("ts_rs"), "{} no longer names ts_rs: drop it from WIRE_IN_API_EXCEPTIONS", path.display());
    }
}

/// Code speaks of the product, not of where a requirement came from: no Rust file,
/// tests and benchmarks included, cites an issue's or a source design's number.
#[test]
fn code_cites_no_issue_numbers_or_seeds() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let mut cited = Vec::new();
    for path in files.iter().filter(|p| !p.components().any(|c| c.as_os_str() == "target")) {
        let text = std::fs::read_to_string(path).unwrap();
        for (n, line) in text.lines().enumerate() {
            if cites_provenance(line) {
                cited.push(format!("{}:{}: {}", path.strip_prefix(&root).unwrap_or(path).display(), n + 1, line.trim()));
            }
        }
    }
    assert!(files.len() > 100, "the walk found the workspace's files");
    assert!(cited.is_empty(), "say what the code does, not which issue or seed asked for it: {cited:#?}");
}

/// Whether a line cites an issue (the word, a space, a number, with or without `#`) or
/// a seed (the word, a space, a zero-padded number).
fn cites_provenance(line: &str) -> bool {
    let lower = line.to_lowercase();
    ["issue ", "seed 0"].iter().any(|word| {
        lower.match_indices(word).any(|(at, _)| {
            let rest = &lower[at + word.len()..];
            rest.strip_prefix('#').unwrap_or(rest).chars().next().is_some_and(|c| c.is_ascii_digit())
        })
    })
}

#[test]
fn the_provenance_scan_reads_citations() {
    // Built from pieces, so this file does not cite anything itself.
    assert!(cites_provenance(concat!("//! Compaction (issue", " 30, item 3), against")));
    assert!(cites_provenance(concat!("// see Issue", " #12")));
    assert!(cites_provenance(concat!("/// the shape of seed", " 004's plan")));
    assert!(!cites_provenance("/// an issue with the store; 30 seeds of randomness"));
    assert!(!cites_provenance("let seed = 0x5eed;"));
}

/// The domain (`inkstone-core`) and the agent (`inkstone-agent`) return error enums that
/// say what happened; only `inkstone-api` (`src/problems/`) turns them into codes,
/// problems and hints. The modules that still build an `ApiError` by hand, with how
/// many constructions each has. The counts only go down: a module converted to its own
/// error enum leaves the list, and a new hand-built error in the domain fails here.
const DOMAIN_ERRORS_LEFT: &[(&str, usize)] = &[
    ("agent/src/context", 5),
    ("agent/src/growth", 29),
    ("agent/src/harness", 47),
    ("agent/src/prompts", 4),
    ("agent/src/tools", 1),
    ("core/src/kernel", 1),
    ("core/src/llm", 12),
    ("core/src/memory", 1),
    ("core/src/performance", 30),
    ("core/src/policy", 2),
    ("core/src/project", 17),
    ("core/src/proposals", 64),
    ("core/src/sync", 70),
    ("core/src/usage", 3),
];

/// How many times `code` builds an `ApiError` or names an `ErrorCode`.
fn api_error_constructions(code: &str) -> usize {
    let built = ["ApiError::new(", "ApiError::validation(", "ApiError::not_found(", "ApiError::internal("].iter().map(|c| code.matches(c).count()).sum::<usize>();
    built + code.matches("ErrorCode::").count()
}

#[test]
fn the_domain_builds_no_new_api_errors() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut counts = std::collections::BTreeMap::<String, usize>::new();
    for krate in ["core", "agent"] {
        let mut files = Vec::new();
        rust_files(&root.join(krate).join("src"), &mut files);
        for path in files {
            let relative = path.strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/");
            // `core/src/sync/connect.rs` and `core/src/sync.rs` both count for `core/src/sync`.
            let module: String = relative.splitn(4, '/').take(3).collect::<Vec<_>>().join("/").trim_end_matches(".rs").to_owned();
            let n = api_error_constructions(&std::fs::read_to_string(&path).unwrap());
            if n > 0 {
                *counts.entry(module).or_default() += n;
            }
        }
    }
    let listed: std::collections::BTreeMap<String, usize> = DOMAIN_ERRORS_LEFT.iter().map(|(m, n)| ((*m).to_owned(), *n)).collect();
    let mut problems = Vec::new();
    for (module, n) in &counts {
        match listed.get(module) {
            None => problems.push(format!("{module} builds {n} ApiError(s): return an error enum and word it in api/src/problems/")),
            Some(left) if n > left => problems.push(format!("{module} builds {n} ApiError(s), more than the {left} listed: return an error enum instead")),
            Some(left) if n < left => problems.push(format!("{module} builds {n} ApiError(s) now: lower its entry in DOMAIN_ERRORS_LEFT from {left}")),
            Some(_) => {}
        }
    }
    for module in listed.keys().filter(|m| !counts.contains_key(*m)) {
        problems.push(format!("{module} builds no ApiError any more: remove it from DOMAIN_ERRORS_LEFT"));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_error_count_sees_constructions() {
    assert_eq!(api_error_constructions("Err(ApiError::new(ErrorCode::Conflict, m)); ApiError::validation(\"f\", m); e.code == ErrorCode::Io"), 4);
    assert_eq!(api_error_constructions("fn f() -> Result<(), ApiError> { Ok(()) }"), 0);
}

/// The production files that still have an error that is only a `String`. The list
/// only shrinks: a failure a caller or a test may need to tell apart is a typed error
/// (an enum with a variant per failure, its text in `#[error]`), never a bare string.
/// An entry whose file no longer has one must go.
const STRING_ERRORS_LEFT: &[&str] = &[];

/// The `Result<_, String>` types in `code`, as (line, the type): the error (the last
/// argument at the top level of `Result<...>`, over lines too) is exactly `String`.
fn string_errors(code: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (at, _) in code.match_indices("Result<") {
        if code[..at].chars().next_back().is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let open = at + "Result<".len();
        let (mut depth, mut start, mut arguments, mut end) = (1usize, open, Vec::new(), None);
        let mut chars = code[open..].char_indices().peekable();
        while let Some((offset, c)) = chars.next() {
            match c {
                // `->` in a function type is no closing bracket.
                '-' if chars.peek().is_some_and(|(_, next)| *next == '>') => {
                    chars.next();
                }
                '<' | '(' | '[' => depth += 1,
                '>' | ')' | ']' => {
                    depth -= 1;
                    if depth == 0 {
                        arguments.push(code[start..open + offset].trim());
                        end = Some(open + offset + 1);
                        break;
                    }
                }
                ',' if depth == 1 => {
                    arguments.push(code[start..open + offset].trim());
                    start = open + offset + 1;
                }
                ';' | '{' | '}' => break,
                _ => {}
            }
        }
        let Some(end) = end else { continue };
        if arguments.last() == Some(&"") {
            arguments.pop();
        }
        if arguments.len() == 2 && arguments[1] == "String" {
            let line = code[..at].matches('\n').count() + 1;
            out.push((line, code[at..end].split_whitespace().collect::<Vec<_>>().join(" ")));
        }
    }
    out
}

/// The scan finds a `String` error wherever the type is written, and nothing else.
#[test]
fn the_string_error_scan_reads_results() {
    let code = "fn a() -> Result<(), String> {}\nfn b(f: &mut dyn FnMut(&[u8]) -> Result<(), String>) -> Result<u64, Failure> {}\n\
        fn c() -> Result<\n    Vec<(String, u8)>,\n    String,\n> {}\nfn d() -> Result<HashMap<String, String>, E> {}\nfn e() -> Result<Option<String>, ApiError> {}\n\
        fn f() -> io::Result<String> {}\nfn g() -> MyResult<u8, String> {}\nfn h() -> Result<Result<u8, String>, ApiError> {}\n";
    let found: Vec<usize> = string_errors(code).into_iter().map(|(line, _)| line).collect();
    assert_eq!(found, [1, 2, 3, 11]);
    assert_eq!(string_errors("fn c() -> Result<\n    u8,\n    String,\n> {}")[0].1, "Result< u8, String, >");
}

/// No production source (tests, test tooling and `#[cfg(test)]` parts aside) has an
/// error that is only a `String` but the files of [`STRING_ERRORS_LEFT`], and each of
/// those still has one.
#[test]
fn production_errors_are_typed_not_strings() {
    let test_tooling = |name: &str| {
        let stem = name.rsplit('/').next().unwrap_or(name).trim_end_matches(".rs");
        name == "server/src/pgtemp.rs" || name.starts_with("test-support/") || name.starts_with("xtask/") || stem == "tests" || stem.ends_with("_tests")
    };
    let sources: Vec<(String, PathBuf)> = workspace_sources().into_iter().filter(|(name, _)| name.split('/').nth(1) == Some("src") && !test_tooling(name)).collect();
    assert!(sources.len() > 100 && sources.iter().any(|(name, _)| name == "llm/src/keychain.rs"), "the walk found the production sources");
    let mut found = Vec::new();
    let mut listed_found = std::collections::BTreeSet::new();
    for (name, path) in &sources {
        for (line, written) in string_errors(&code_of(path)) {
            if STRING_ERRORS_LEFT.contains(&name.as_str()) {
                listed_found.insert(name.clone());
            } else {
                found.push(format!("{name}:{line} {written}"));
            }
        }
    }
    assert!(found.is_empty(), "an error that is only a String (make it an enum with a variant per failure, its text in #[error]): {found:#?}");
    for listed in STRING_ERRORS_LEFT {
        assert!(listed_found.contains(*listed), "{listed} has no Result<_, String> any more: take it off STRING_ERRORS_LEFT");
    }
}
