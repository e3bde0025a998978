//! Versioned platform profiles: what each platform's readers want (`<platform>@growth-v1`),
//! every machine-checkable limit of its drafts (`<platform>@draft-v1`), and risk word
//! lists (`ad-law-zh@v2`, `growth-promise@v1`). The built-in files in `profiles/` are
//! embedded at build time; a file in `<data dir>/profiles/` with the same `id` and an
//! `override = N` replaces the built-in and is known as `<id>+local.N`, so anything made
//! with it says so. Pure data and parsing: the data dir is read by [`ProfileSet::load`].

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use inkstone_model::Platform;

const BUILTIN: &[(&str, &str)] = &[
    ("draft/wechat@draft-v1.toml", include_str!("../../../profiles/draft/wechat@draft-v1.toml")),
    ("draft/zhihu@draft-v1.toml", include_str!("../../../profiles/draft/zhihu@draft-v1.toml")),
    ("draft/x@draft-v1.toml", include_str!("../../../profiles/draft/x@draft-v1.toml")),
    ("draft/douyin@draft-v1.toml", include_str!("../../../profiles/draft/douyin@draft-v1.toml")),
    ("draft/xiaohongshu@draft-v1.toml", include_str!("../../../profiles/draft/xiaohongshu@draft-v1.toml")),
    ("growth/wechat@growth-v1.toml", include_str!("../../../profiles/growth/wechat@growth-v1.toml")),
    ("growth/zhihu@growth-v1.toml", include_str!("../../../profiles/growth/zhihu@growth-v1.toml")),
    ("growth/x@growth-v1.toml", include_str!("../../../profiles/growth/x@growth-v1.toml")),
    ("growth/douyin@growth-v1.toml", include_str!("../../../profiles/growth/douyin@growth-v1.toml")),
    ("growth/xiaohongshu@growth-v1.toml", include_str!("../../../profiles/growth/xiaohongshu@growth-v1.toml")),
    ("risk/ad-law-zh@v2.toml", include_str!("../../../profiles/risk/ad-law-zh@v2.toml")),
    ("risk/growth-promise@v1.toml", include_str!("../../../profiles/risk/growth-promise@v1.toml")),
];

#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error("profile {file}: {message}")]
    Invalid { file: String, message: String },
    #[error("reading {file}: {source}")]
    Io { file: String, source: std::io::Error },
    /// A built-in profile did not load (a broken build): kept for every later call.
    #[error("profile built-in profiles: {0}")]
    Builtin(#[source] std::sync::Arc<ProfileError>),
}

/// Which field of a draft a limit applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LimitField {
    Title,
    Digest,
    Body,
    Tags,
    Images,
    /// One post of a thread.
    Post,
    /// Posts in a thread.
    Posts,
}

/// How a length is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// Unicode scalar values.
    Chars,
    /// X's weighted length (CJK 2, URL 23, emoji 2).
    XWeighted,
    /// Xiaohongshu's title count: ceil(units / 2), ASCII 1 unit, others 2.
    XhsUnits,
    /// A number of items.
    Count,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warn,
    Block,
}

/// One machine-checkable limit, with where it comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Limit {
    pub field: LimitField,
    #[serde(default)]
    pub min: Option<u32>,
    pub max: u32,
    pub unit: Unit,
    /// The publishing route this limit applies to, where sources disagree by route
    /// (`editor` vs `api` for WeChat titles, say); `null` for every route.
    #[serde(default)]
    pub route: Option<String>,
    pub severity: Severity,
    pub source: String,
}

/// The format and limits of one platform's drafts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DraftProfile {
    /// `wechat@draft-v1`, or `wechat@draft-v1+local.2` for a user override.
    pub id: String,
    pub platform: Platform,
    pub format: String,
    pub description: String,
    pub limits: Vec<Limit>,
    /// Platform-specific settings (column width, numbering format, ...).
    pub settings: BTreeMap<String, toml::Value>,
    /// Per-element inline styles (WeChat).
    pub theme: BTreeMap<String, String>,
}

impl DraftProfile {
    pub fn limits_for(&self, field: LimitField) -> impl Iterator<Item = &Limit> {
        self.limits.iter().filter(move |l| l.field == field)
    }

    pub fn setting_str(&self, key: &str) -> Option<&str> {
        self.settings.get(key).and_then(|v| v.as_str())
    }

    pub fn setting_u32(&self, key: &str) -> Option<u32> {
        self.settings.get(key).and_then(|v| v.as_integer()).and_then(|v| u32::try_from(v).ok())
    }

    pub fn style(&self, element: &str) -> &str {
        self.theme.get(element).map(String::as_str).unwrap_or("")
    }
}

/// What a platform's readers want: for people to read and for a model to follow.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GrowthProfile {
    pub id: String,
    pub platform: Platform,
    pub audience: String,
    pub content_preferences: Vec<String>,
    pub title_rules: Vec<String>,
    pub opening_rules: Vec<String>,
    pub structure_rules: Vec<String>,
    pub tag_rules: Vec<String>,
    pub cta_rules: Vec<String>,
    pub risk_rules: Vec<String>,
    pub metrics_focus: Vec<String>,
    /// The machine-checkable subset of the rules, for the platform-fit report.
    #[serde(default)]
    pub fit: FitRules,
}

/// How a platform treats links in the body.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum LinkPolicy {
    /// Links are fine.
    #[default]
    Allowed,
    /// Links are not clickable: sources go in a reference list at the end.
    Footnotes,
    /// No links in the body at all.
    None,
}

/// Rules of a growth profile that a program can check; each absent rule is not scored.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FitRules {
    /// The title's length range in characters, inclusive.
    #[serde(default, alias = "title_chars")]
    pub title_chars: Option<[u32; 2]>,
    /// The first sentence ends within this many characters.
    #[serde(default, alias = "hook_chars")]
    pub hook_chars: Option<u32>,
    /// The number of topic tags, inclusive range.
    #[serde(default)]
    pub tags: Option<[u32; 2]>,
    /// Words of a call to action; one of them near the end counts as a CTA.
    #[serde(default, alias = "cta_markers")]
    pub cta_markers: Vec<String>,
    #[serde(default)]
    pub links: LinkPolicy,
    /// No paragraph longer than this many characters.
    #[serde(default, alias = "max_paragraph_chars")]
    pub max_paragraph_chars: Option<u32>,
    /// A long text has a heading at least every this many characters.
    #[serde(default, alias = "heading_every_chars")]
    pub heading_every_chars: Option<u32>,
}

/// A versioned list of risky terms with an allow-list of ordinary words containing them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RiskList {
    pub id: String,
    pub description: String,
    pub source: String,
    pub suggestion: String,
    /// Industries (from a brand profile) in which a match blocks instead of warning.
    pub strict_industries: Vec<String>,
    pub terms: Vec<String>,
    pub allow: Vec<String>,
    /// Terms allowed by their context rather than by a longer word (an ordinal 第一).
    #[serde(default)]
    pub allow_context: Vec<ContextAllow>,
}

/// When a term is an ordinary word by what stands around it: "第一，散步让…" (it opens a
/// sentence, a line or a list item and a pause follows), "第一个路口" (a measure word
/// follows) — unless a scope before it makes it a claim again ("行业第一个", "全网第一").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContextAllow {
    pub term: String,
    /// Allowed when one of these follows it directly.
    #[serde(default, alias = "followed_by")]
    pub followed_by: Vec<String>,
    /// Allowed when it opens a sentence, line or list item and one of these follows it.
    #[serde(default, alias = "opening_followed_by")]
    pub opening_followed_by: Vec<String>,
    /// Never allowed when one of these stands directly before it.
    #[serde(default, alias = "not_preceded_by")]
    pub not_preceded_by: Vec<String>,
}

/// Every profile in force: built-ins with user overrides applied.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfileSet {
    pub drafts: BTreeMap<Platform, DraftProfile>,
    pub growth: BTreeMap<Platform, GrowthProfile>,
    pub risk_lists: Vec<RiskList>,
}

/// The raw file shapes: like the profiles, plus `override` for user files.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DraftFile {
    id: String,
    platform: Platform,
    format: String,
    description: String,
    #[serde(default, rename = "override")]
    override_version: Option<u32>,
    #[serde(default)]
    limits: Vec<Limit>,
    #[serde(default)]
    settings: BTreeMap<String, toml::Value>,
    #[serde(default)]
    theme: BTreeMap<String, String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GrowthFile {
    id: String,
    platform: Platform,
    #[serde(default, rename = "override")]
    override_version: Option<u32>,
    audience: String,
    content_preferences: Vec<String>,
    title_rules: Vec<String>,
    opening_rules: Vec<String>,
    structure_rules: Vec<String>,
    tag_rules: Vec<String>,
    cta_rules: Vec<String>,
    risk_rules: Vec<String>,
    metrics_focus: Vec<String>,
    #[serde(default)]
    fit: FitRules,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RiskFile {
    id: String,
    #[serde(default, rename = "override")]
    override_version: Option<u32>,
    description: String,
    source: String,
    suggestion: String,
    #[serde(default)]
    strict_industries: Vec<String>,
    terms: Vec<String>,
    #[serde(default)]
    allow: Vec<String>,
    #[serde(default)]
    allow_context: Vec<ContextAllow>,
}

fn versioned_id(id: &str, override_version: Option<u32>) -> String {
    match override_version {
        Some(n) => format!("{id}+local.{n}"),
        None => id.to_owned(),
    }
}

fn parse<T: serde::de::DeserializeOwned>(file: &str, text: &str) -> Result<T, ProfileError> {
    toml::from_str(text).map_err(|e| ProfileError::Invalid { file: file.to_owned(), message: e.to_string() })
}

/// What kind of profile a file holds, from its folder or its `id`.
enum FileKind {
    Draft,
    Growth,
    Risk,
}

fn kind_of(name: &str) -> Option<FileKind> {
    if name.contains("@draft-") {
        Some(FileKind::Draft)
    } else if name.contains("@growth-") {
        Some(FileKind::Growth)
    } else if name.ends_with(".toml") {
        Some(FileKind::Risk)
    } else {
        None
    }
}

impl ProfileSet {
    fn empty() -> ProfileSet {
        ProfileSet { drafts: BTreeMap::new(), growth: BTreeMap::new(), risk_lists: Vec::new() }
    }

    fn add(&mut self, file: &str, text: &str, is_override: bool) -> Result<(), ProfileError> {
        let name = file.rsplit('/').next().unwrap_or(file);
        let require_override = |v: Option<u32>| -> Result<(), ProfileError> {
            if is_override && v.is_none() {
                return Err(ProfileError::Invalid { file: file.to_owned(), message: "a user profile needs `override = N` (its local version)".to_owned() });
            }
            Ok(())
        };
        match kind_of(name) {
            Some(FileKind::Draft) => {
                let f: DraftFile = parse(file, text)?;
                require_override(f.override_version)?;
                let profile = DraftProfile {
                    id: versioned_id(&f.id, f.override_version),
                    platform: f.platform,
                    format: f.format,
                    description: f.description,
                    limits: f.limits,
                    settings: f.settings,
                    theme: f.theme,
                };
                self.drafts.insert(f.platform, profile);
            }
            Some(FileKind::Growth) => {
                let f: GrowthFile = parse(file, text)?;
                require_override(f.override_version)?;
                let profile = GrowthProfile {
                    id: versioned_id(&f.id, f.override_version),
                    platform: f.platform,
                    audience: f.audience,
                    content_preferences: f.content_preferences,
                    title_rules: f.title_rules,
                    opening_rules: f.opening_rules,
                    structure_rules: f.structure_rules,
                    tag_rules: f.tag_rules,
                    cta_rules: f.cta_rules,
                    risk_rules: f.risk_rules,
                    metrics_focus: f.metrics_focus,
                    fit: f.fit,
                };
                self.growth.insert(f.platform, profile);
            }
            Some(FileKind::Risk) => {
                let f: RiskFile = parse(file, text)?;
                require_override(f.override_version)?;
                let list = RiskList {
                    id: versioned_id(&f.id, f.override_version),
                    description: f.description,
                    source: f.source,
                    suggestion: f.suggestion,
                    strict_industries: f.strict_industries,
                    terms: f.terms,
                    allow: f.allow,
                    allow_context: f.allow_context,
                };
                let base = f.id.clone();
                self.risk_lists.retain(|l| l.id.split('+').next() != Some(base.as_str()));
                self.risk_lists.push(list);
            }
            None => {}
        }
        Ok(())
    }

    /// The built-in profiles only (parsed once per process).
    pub fn builtin() -> Result<ProfileSet, ProfileError> {
        static BUILTIN_SET: std::sync::OnceLock<Result<ProfileSet, std::sync::Arc<ProfileError>>> = std::sync::OnceLock::new();
        let parsed = BUILTIN_SET.get_or_init(|| {
            let mut set = ProfileSet::empty();
            for (file, text) in BUILTIN {
                set.add(file, text, false).map_err(std::sync::Arc::new)?;
            }
            Ok(set)
        });
        parsed.clone().map_err(ProfileError::Builtin)
    }

    /// Built-ins with the overrides in `override_dir` (`*.toml`, if the folder exists).
    pub fn load(override_dir: &Path) -> Result<ProfileSet, ProfileError> {
        let mut set = ProfileSet::builtin()?;
        if !override_dir.is_dir() {
            return Ok(set);
        }
        let mut files: Vec<_> = std::fs::read_dir(override_dir)
            .map_err(|source| ProfileError::Io { file: override_dir.display().to_string(), source })?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "toml"))
            .collect();
        files.sort();
        for path in files {
            let text = std::fs::read_to_string(&path).map_err(|source| ProfileError::Io { file: path.display().to_string(), source })?;
            set.add(&path.display().to_string(), &text, true)?;
        }
        Ok(set)
    }

    pub fn draft(&self, platform: Platform) -> Option<&DraftProfile> {
        self.drafts.get(&platform)
    }

    pub fn risk_list(&self, base_id: &str) -> Option<&RiskList> {
        self.risk_lists.iter().find(|l| l.id.split('+').next() == Some(base_id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_profile_parses_and_every_platform_has_both_kinds() {
        let set = ProfileSet::builtin().unwrap();
        for platform in Platform::ALL {
            let draft = set.draft(platform).unwrap();
            assert!(draft.id.ends_with("@draft-v1"), "{}", draft.id);
            assert!(!draft.limits.is_empty());
            assert!(draft.limits.iter().all(|l| !l.source.is_empty()), "every limit says where it comes from");
            assert!(set.growth[&platform].id.ends_with("@growth-v1"));
        }
        assert!(set.risk_list("ad-law-zh@v2").is_some());
        assert!(set.risk_list("growth-promise@v1").is_some());
    }

    #[test]
    fn conflicting_sources_are_kept_per_route() {
        let set = ProfileSet::builtin().unwrap();
        let routes: Vec<(Option<&str>, u32)> = set.draft(Platform::Wechat).unwrap().limits_for(LimitField::Title).map(|l| (l.route.as_deref(), l.max)).collect();
        assert_eq!(routes, vec![(Some("editor"), 64), (Some("api"), 32)]);
    }

    #[test]
    fn a_user_override_replaces_the_builtin_and_names_its_version() {
        let dir = tempfile::tempdir().unwrap();
        let mut text = BUILTIN.iter().find(|(f, _)| f.contains("x@draft")).unwrap().1.replace("max = 280", "max = 25000");
        text.push('\n');
        text = text.replacen("platform = \"x\"", "platform = \"x\"\noverride = 2", 1);
        std::fs::write(dir.path().join("x@draft-v1.toml"), text).unwrap();
        let set = ProfileSet::load(dir.path()).unwrap();
        let x = set.draft(Platform::X).unwrap();
        assert_eq!(x.id, "x@draft-v1+local.2");
        assert_eq!(x.limits_for(LimitField::Post).next().unwrap().max, 25000);
        std::fs::write(dir.path().join("x@draft-v1.toml"), "id = \"x@draft-v1\"\nplatform = \"x\"\nformat = \"thread\"\ndescription = \"\"\n").unwrap();
        assert!(matches!(ProfileSet::load(dir.path()), Err(ProfileError::Invalid { .. })), "an override must say its version");
    }
}
