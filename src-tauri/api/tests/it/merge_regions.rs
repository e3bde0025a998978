//! The sync conflicts the UI's tests draw carry the merge the core computes for them:
//! `ui/src/shared/testing/merge-regions.json` holds each case's three sides with the
//! regions and title merge the API sends (`sync.conflicts`), and this test holds the file
//! to the core's fold, so a Vitest fixture can never show a merge the core would not.
//! `INKSTONE_UPDATE_FIXTURES=1` rewrites the file's regions from the core.

use std::path::PathBuf;

use inkstone_api::sync::merge::{merge_title, regions};
use serde_json::{json, Value};

fn fixture_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../ui/src/shared/testing/merge-regions.json")
}

fn side<'a>(case: &'a Value, name: &str, field: &str) -> &'a str {
    case[name][field].as_str().unwrap()
}

/// What the core sends for one case: its regions and, when one side alone renamed it, the title.
fn computed(case: &Value) -> (Value, Value) {
    let got = regions(side(case, "base", "source"), side(case, "mine", "source"), side(case, "theirs", "source"));
    let title = merge_title(side(case, "base", "title"), side(case, "mine", "title"), side(case, "theirs", "title"));
    (serde_json::to_value(got).unwrap(), title.map_or(Value::Null, Value::String))
}

#[test]
fn the_ui_tests_merge_fixtures_are_the_cores_merge() {
    let path = fixture_path();
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let update = std::env::var_os("INKSTONE_UPDATE_FIXTURES").is_some();
    for case in doc["cases"].as_array_mut().unwrap() {
        let (regions, merged_title) = computed(case);
        if update {
            case["regions"] = regions;
            match merged_title {
                Value::Null => drop(case.as_object_mut().unwrap().remove("mergedTitle")),
                title => case["mergedTitle"] = title,
            }
            continue;
        }
        assert_eq!(case["regions"], regions, "{}: the fixture's regions are not the core's", case["name"]);
        assert_eq!(case.get("mergedTitle").cloned().unwrap_or(Value::Null), merged_title, "{}: the title's merge", case["name"]);
    }
    if update {
        std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap() + "\n").unwrap();
    }
}

/// The regions of any case, joined per side, give back that side: the view can draw every
/// line of the base, the person's text and the server's from them alone.
#[test]
fn a_conflicts_regions_cover_its_three_sides() {
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(fixture_path()).unwrap()).unwrap();
    for case in doc["cases"].as_array().unwrap() {
        let (regions, _) = computed(case);
        for field in ["base", "mine", "theirs"] {
            let joined: String = regions.as_array().unwrap().iter().map(|r| r[field].as_str().unwrap()).collect();
            assert_eq!(json!(joined), case[field]["source"], "{}: {field}", case["name"]);
        }
    }
}
