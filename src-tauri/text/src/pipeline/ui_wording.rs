//! Test support: the UI's English wordings (`ui/src/shared/i18n/en.ts`), to check that what the
//! core says in English is exactly what the UI's wording says with the same values.
//! The UI words findings and fit points from their wording id and values in the
//! person's language; `zh.ts` has every id `en.ts` has (its type enforces that), so a
//! wording that matches here is also one the Chinese UI can say.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use crate::pipeline::Finding;

/// Every `"id": "text",` line of en.ts.
pub fn en() -> &'static BTreeMap<String, String> {
    static TABLE: OnceLock<BTreeMap<String, String>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../ui/src/shared/i18n/en.ts");
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let mut table = BTreeMap::new();
        for line in text.lines() {
            let Some(rest) = line.trim().strip_prefix('"') else { continue };
            let Some((id, value)) = rest.split_once("\": \"") else { continue };
            let Some(value) = value.strip_suffix("\",") else { continue };
            table.insert(id.to_owned(), value.to_owned());
        }
        table
    })
}

/// `template` with each `{name}` replaced by its value.
pub fn fill(template: &str, vars: &BTreeMap<String, String>) -> String {
    let mut out = template.to_owned();
    for (k, v) in vars {
        out = out.replace(&format!("{{{k}}}"), v);
    }
    out
}

/// What the UI shows for `f` in English (as `describeFinding` in ui/src/shared/i18n builds it):
/// its message and suggestion. Panics when a wording is missing.
pub fn finding_in_english(f: &Finding) -> (String, Option<String>) {
    let en = en();
    let mut vars = f.params.clone();
    for (key, table) in [("field", "finding.field"), ("unit", "finding.unit")] {
        if let Some(value) = vars.get(key).cloned() {
            if let Some(template) = en.get(&format!("{table}.{value}")) {
                let worded = fill(template, &vars);
                vars.insert(key.to_owned(), worded);
            }
        }
    }
    let route = vars.get("route").map(|r| fill(&en["finding.limit.route"], &BTreeMap::from([("route".to_owned(), r.clone())]))).unwrap_or_default();
    vars.insert("route".to_owned(), route);
    let id = f.message_id.as_deref().unwrap_or_else(|| panic!("{} has no wording: {}", f.check, f.message));
    let message = fill(en.get(&format!("finding.{id}")).unwrap_or_else(|| panic!("no finding.{id} in en.ts")), &vars);
    let suggestion = f.suggestion.as_ref().map(|_| {
        let id = f.suggestion_id.as_deref().unwrap_or_else(|| panic!("{}'s suggestion has no wording: {:?}", f.check, f.suggestion));
        fill(en.get(&format!("finding.fix.{id}")).unwrap_or_else(|| panic!("no finding.fix.{id} in en.ts")), &vars)
    });
    (message, suggestion)
}

/// `f` is worded, and its wording in English is exactly its English text.
pub fn assert_worded(f: &Finding) {
    let (message, suggestion) = finding_in_english(f);
    assert_eq!(message, f.message, "{}: the UI's English wording differs", f.check);
    assert_eq!(suggestion, f.suggestion, "{}: the UI's English suggestion differs", f.check);
}
