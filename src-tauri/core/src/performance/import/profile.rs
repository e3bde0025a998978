//! The export profiles: one versioned file per platform export under
//! `profiles/metrics/`, embedded at build time, and the header row that tells which
//! export a table is.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::super::metrics;
use super::{not_an_export, Table, HEADER_SEARCH_ROWS};
use crate::error::{ApiError, ErrorCode};
use crate::model::Platform;

const BUILTIN: &[(&str, &str)] = &[
    ("x-content@v1.toml", include_str!("../../../../../profiles/metrics/x-content@v1.toml")),
    ("x-tweet-activity@v1.toml", include_str!("../../../../../profiles/metrics/x-tweet-activity@v1.toml")),
    ("x-account-overview@v1.toml", include_str!("../../../../../profiles/metrics/x-account-overview@v1.toml")),
    ("x-account-by-day-legacy@v1.toml", include_str!("../../../../../profiles/metrics/x-account-by-day-legacy@v1.toml")),
    ("douyin-works@v1.toml", include_str!("../../../../../profiles/metrics/douyin-works@v1.toml")),
    ("xiaohongshu-notes@v1.toml", include_str!("../../../../../profiles/metrics/xiaohongshu-notes@v1.toml")),
    ("wechat-notified@v1.toml", include_str!("../../../../../profiles/metrics/wechat-notified@v1.toml")),
    ("wechat-user-analysis@v1.toml", include_str!("../../../../../profiles/metrics/wechat-user-analysis@v1.toml")),
];

/// How an export's rows say which post they are.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RowColumns {
    pub post_id: Option<String>,
    pub url: Option<String>,
    pub title: Option<String>,
    pub text: Option<String>,
    pub published: Option<String>,
    #[serde(default)]
    pub published_formats: Vec<String>,
    pub time_zone: Option<String>,
    pub format: Option<String>,
    pub private_when: Option<PrivateWhen>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrivateWhen {
    pub column: String,
    pub values: Vec<String>,
}

/// One export's profile, as `profiles/metrics/<id>@v<version>.toml` holds it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExportProfile {
    pub id: String,
    pub version: u32,
    pub platform: Platform,
    pub name: String,
    /// Headers that must all be in the header row.
    pub signature: Vec<String>,
    /// Set for a file that is recognised but cannot be imported per post: why.
    pub refuse: Option<String>,
    pub window: Option<String>,
    #[serde(default)]
    pub row: RowColumns,
    /// Header → metric key; `key:percent` when the column counts in percent.
    #[serde(default)]
    pub columns: BTreeMap<String, String>,
    /// What one row is: a post (the default) or one day of an account.
    #[serde(default)]
    pub target: ExportTarget,
}

/// What one row of an export describes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ExportTarget {
    /// A post: the row becomes a metric snapshot of its publication.
    #[default]
    Posts,
    /// A day of one account (WeChat 用户分析): the row becomes an account snapshot;
    /// the `published` column is the day.
    Account,
}

/// The built-in export profiles, checked. Errors: INTERNAL for a broken built-in file
/// (a test loads them all).
pub fn profiles() -> Result<Vec<ExportProfile>, ApiError> {
    BUILTIN
        .iter()
        .map(|(file, text)| {
            let profile: ExportProfile = toml::from_str(text).map_err(|e| ApiError::internal(format!("export profile {file}: {e}")))?;
            if format!("{}@v{}.toml", profile.id, profile.version) != *file {
                return Err(ApiError::internal(format!("export profile {file} names itself {}@v{}", profile.id, profile.version)));
            }
            for key in profile.columns.values() {
                let key = key.split(':').next().unwrap_or("");
                if metrics::metric_key(key).is_none() {
                    return Err(ApiError::internal(format!("export profile {file} maps to {key:?}, which is not a metric key")));
                }
            }
            Ok(profile)
        })
        .collect()
}

/// The profile whose signature a header row in the first rows carries, and that row's
/// index. Errors: VALIDATION naming what was expected, or the profile's refusal.
pub fn recognise<'a>(table: &Table, profiles: &'a [ExportProfile], platform: Option<Platform>) -> Result<(&'a ExportProfile, usize), ApiError> {
    for (index, row) in table.rows.iter().take(HEADER_SEARCH_ROWS).enumerate() {
        for profile in profiles.iter().filter(|p| platform.is_none_or(|want| p.platform == want)) {
            if profile.signature.iter().all(|h| row.iter().any(|cell| cell == h)) {
                if let Some(reason) = &profile.refuse {
                    return Err(ApiError::new(ErrorCode::Validation, reason.clone())
                        .details(serde_json::json!({ "field": "file", "importer": profile.id }))
                        .problem("perf.export_refused", &[("name", &profile.name)])
                        .hint("export_per_post", "Export the per-post (content) file instead."));
                }
                return Ok((profile, index));
            }
        }
    }
    let expected: Vec<&str> = profiles.iter().filter(|p| p.refuse.is_none() && platform.is_none_or(|want| p.platform == want)).map(|p| p.name.as_str()).collect();
    Err(not_an_export(format!("No known export header was found in the first {HEADER_SEARCH_ROWS} rows. Expected one of: {}.", expected.join("; "))))
}
