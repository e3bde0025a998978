//! Findings: what a person should know about a draft or its source (a limit broken,
//! content a platform cannot carry), each with a stable id and the values its wording
//! names, so the UI says it in the person's language.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::profiles::Severity;
use inkstone_model::{Anchor, Platform};

/// Something a person should know about a draft or its source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    /// A stable id: `limit.title`, `ad_law`, `link_policy`, ...
    pub check: String,
    pub severity: Severity,
    pub platform: Option<Platform>,
    /// Where in the source (UTF-16 units, as editors count), when it is about the source.
    pub span: Option<Anchor>,
    /// Where in the draft, when it is about the draft (`title`, `post 3`, ...).
    pub location: Option<String>,
    /// The text that matched, for word checks.
    pub matched: Option<String>,
    pub message: String,
    pub suggestion: Option<String>,
    /// The publishing route a limit applies to, when sources differ by route.
    pub route: Option<String>,
    /// The stable id of the message's wording (`cta.missing`, `ad_law`, ...) and the
    /// values it names, so the UI can say it in the person's language; `message` is
    /// the English. Absent for findings that have no translation yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<String, String>,
    /// The stable id of the suggestion's wording, when it is a fixed one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggestion_id: Option<String>,
}

impl Finding {
    pub fn new(check: &str, severity: Severity, platform: Option<Platform>, message: impl Into<String>) -> Finding {
        Finding {
            check: check.to_owned(),
            severity,
            platform,
            span: None,
            location: None,
            matched: None,
            message: message.into(),
            suggestion: None,
            route: None,
            message_id: None,
            params: BTreeMap::new(),
            suggestion_id: None,
        }
    }

    /// Names the message's wording (`id`) and the values it shows. The English
    /// `message` becomes the catalog's wording (`finding.<id>` in messages/en/findings.json),
    /// the text the UI shows in English, so a count reads "1 image" and "3 images".
    pub fn worded(mut self, id: &str, params: &[(&str, &str)]) -> Finding {
        self.message_id = Some(id.to_owned());
        self.params = params.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        if let Some(english) = english_wording(&format!("finding.{id}"), &self.params) {
            self.message = english;
        }
        self
    }

    /// A suggestion with a fixed wording `id`: the catalog's `finding.fix.<id>` filled with
    /// the finding's values (call it after `worded`); `suggestion` when the catalog has none.
    pub fn suggest_worded(mut self, id: &str, suggestion: impl Into<String>) -> Finding {
        self.suggestion = Some(english_wording(&format!("finding.fix.{id}"), &self.params).unwrap_or_else(|| suggestion.into()));
        self.suggestion_id = Some(id.to_owned());
        self
    }

    pub fn at(mut self, location: &str) -> Finding {
        self.location = Some(location.to_owned());
        self
    }

    pub fn suggest(mut self, suggestion: impl Into<String>) -> Finding {
        self.suggestion = Some(suggestion.into());
        self
    }
}

/// A finding's wording `id` in English, as the UI words it (`describeFinding` in
/// ui/src/shared/i18n): the values `field` and `unit` in their own words
/// (`finding.field.*`, `finding.unit.*`) and a `route` as "on the … route".
pub(crate) fn english_wording(id: &str, params: &BTreeMap<String, String>) -> Option<String> {
    let template = inkstone_messages::english(id)?;
    let mut values = params.clone();
    for (key, table) in [("field", "finding.field"), ("unit", "finding.unit")] {
        if let Some(value) = values.get(key).cloned() {
            if let Some(worded) = inkstone_messages::english_with(&format!("{table}.{value}"), &values) {
                values.insert(key.to_owned(), worded);
            }
        }
    }
    let route = match values.get("route") {
        Some(route) => inkstone_messages::english_with("finding.limit.route", &BTreeMap::from([("route".to_owned(), route.clone())])).unwrap_or_default(),
        None => String::new(),
    };
    values.insert("route".to_owned(), route);
    Some(inkstone_messages::format(template, &values))
}
