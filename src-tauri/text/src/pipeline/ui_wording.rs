//! Test support: the English message catalog (messages/en/*.json, the wordings the UI
//! shows), to check that what the core says in English is exactly what the UI says
//! with the same values. The UI words findings and fit points from their wording id and
//! values in the person's language; the catalog test in core's tidy suite checks that
//! messages/zh has every id messages/en has, so a wording that matches here is also one
//! the Chinese UI can say.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use crate::pipeline::Finding;

/// Every id of the English catalog with its text.
pub fn en() -> &'static BTreeMap<String, String> {
    static TABLE: OnceLock<BTreeMap<String, String>> = OnceLock::new();
    TABLE.get_or_init(|| inkstone_messages::IDS.iter().filter_map(|(id, _)| inkstone_messages::english(id).map(|text| ((*id).to_owned(), text.to_owned()))).collect())
}

/// `template` with its values filled, every count in its `other` form: the fit report's
/// English (`measured`, written in growth/fit.rs) says "1 links" as the UI's plain
/// wording did before the catalogs had plurals. FIXME: word `measured` from the catalog
/// (as `Finding::worded` does) once the optimize engine's move is done, and compare
/// with `inkstone_messages::format`.
pub fn fill(template: &str, vars: &BTreeMap<String, String>) -> String {
    inkstone_messages::format_other_form(template, vars)
}

/// What the UI shows for `f` in English (as `describeFinding` in ui/src/shared/i18n builds it):
/// its message and suggestion. Panics when a wording is missing.
pub fn finding_in_english(f: &Finding) -> (String, Option<String>) {
    let id = f.message_id.as_deref().unwrap_or_else(|| panic!("{} has no wording: {}", f.check, f.message));
    let message = super::finding::english_wording(&format!("finding.{id}"), &f.params).unwrap_or_else(|| panic!("no finding.{id} in messages/en"));
    let suggestion = f.suggestion.as_ref().map(|_| {
        let id = f.suggestion_id.as_deref().unwrap_or_else(|| panic!("{}'s suggestion has no wording: {:?}", f.check, f.suggestion));
        super::finding::english_wording(&format!("finding.fix.{id}"), &f.params).unwrap_or_else(|| panic!("no finding.fix.{id} in messages/en"))
    });
    (message, suggestion)
}

/// `f` is worded, and its wording in English is exactly its English text.
pub fn assert_worded(f: &Finding) {
    let (message, suggestion) = finding_in_english(f);
    assert_eq!(message, f.message, "{}: the UI's English wording differs", f.check);
    assert_eq!(suggestion, f.suggestion, "{}: the UI's English suggestion differs", f.check);
}
