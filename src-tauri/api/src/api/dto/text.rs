//! The wire form of the text pipeline's records: diffs, compiled drafts with their
//! findings and measurements, and the platform profiles (see [`super`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::{Anchor, DraftContent, Platform};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TextDiffResult {
    pub hunks: Vec<Hunk>,
    pub n_insertions: u32,
    pub n_deletions: u32,
    /// True when both texts are equal (then `hunks` is empty).
    pub identical: bool,
}

/// A run of changed lines with context. Line numbers are 1-based.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Hunk {
    pub old_start: u32,
    pub old_len: u32,
    pub new_start: u32,
    pub new_len: u32,
    pub lines: Vec<DiffLine>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DiffLine {
    pub kind: LineKind,
    pub old_line: Option<u32>,
    pub new_line: Option<u32>,
    /// The line's text without its line ending, split into segments; `emphasized`
    /// segments are the words that changed within a changed line.
    pub segments: Vec<Segment>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum LineKind {
    Equal,
    Delete,
    Insert,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Segment {
    pub text: String,
    pub emphasized: bool,
}

impl From<&crate::diff::TextDiffResult> for TextDiffResult {
    fn from(record: &crate::diff::TextDiffResult) -> Self {
        TextDiffResult { hunks: record.hunks.iter().map(Into::into).collect(), n_insertions: record.n_insertions, n_deletions: record.n_deletions, identical: record.identical }
    }
}

impl From<crate::diff::TextDiffResult> for TextDiffResult {
    fn from(record: crate::diff::TextDiffResult) -> Self {
        TextDiffResult::from(&record)
    }
}

impl From<&crate::diff::Hunk> for Hunk {
    fn from(record: &crate::diff::Hunk) -> Self {
        Hunk { old_start: record.old_start, old_len: record.old_len, new_start: record.new_start, new_len: record.new_len, lines: record.lines.iter().map(Into::into).collect() }
    }
}

impl From<&crate::diff::DiffLine> for DiffLine {
    fn from(record: &crate::diff::DiffLine) -> Self {
        DiffLine { kind: record.kind.into(), old_line: record.old_line, new_line: record.new_line, segments: record.segments.iter().map(Into::into).collect() }
    }
}

impl From<crate::diff::LineKind> for LineKind {
    fn from(record: crate::diff::LineKind) -> Self {
        use crate::diff::LineKind as K;
        match record {
            K::Equal => Self::Equal,
            K::Delete => Self::Delete,
            K::Insert => Self::Insert,
        }
    }
}

impl From<&crate::diff::Segment> for Segment {
    fn from(record: &crate::diff::Segment) -> Self {
        Segment { text: record.text.clone(), emphasized: record.emphasized }
    }
}

/// A compiled platform draft.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Draft {
    pub platform: Platform,
    /// The exact draft profile version used.
    pub profile_id: String,
    pub title: String,
    pub content: DraftContent,
    pub n_images: u32,
    pub n_links: u32,
}

/// Something a person should know about a draft or its source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
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
    #[ts(optional)]
    pub message_id: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[ts(as = "Option<BTreeMap<String, String>>", optional)]
    pub params: BTreeMap<String, String>,
    /// The stable id of the suggestion's wording, when it is a fixed one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub suggestion_id: Option<String>,
}

/// A length as a platform counts it, against its limits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Measurement {
    pub platform: Platform,
    pub field: LimitField,
    pub unit: Unit,
    /// The length in `unit` (for X: the weighted length).
    pub weighted_length: u32,
    /// The strictest limit that applies (of any route), when there is one.
    pub limit: Option<u32>,
    pub valid: bool,
    /// Every limit of the field, with its verdict.
    pub checks: Vec<LimitCheck>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct LimitCheck {
    pub limit: Limit,
    pub length: u32,
    pub fits: bool,
}

impl From<&crate::pipeline::Draft> for Draft {
    fn from(record: &crate::pipeline::Draft) -> Self {
        Draft {
            platform: record.platform.into(),
            profile_id: record.profile_id.clone(),
            title: record.title.clone(),
            content: (&record.content).into(),
            n_images: record.n_images,
            n_links: record.n_links,
        }
    }
}

impl From<&crate::pipeline::Finding> for Finding {
    fn from(record: &crate::pipeline::Finding) -> Self {
        Finding {
            check: record.check.clone(),
            severity: record.severity.into(),
            platform: record.platform.map(Into::into),
            span: record.span.map(Into::into),
            location: record.location.clone(),
            matched: record.matched.clone(),
            message: record.message.clone(),
            suggestion: record.suggestion.clone(),
            route: record.route.clone(),
            message_id: record.message_id.clone(),
            params: record.params.clone(),
            suggestion_id: record.suggestion_id.clone(),
        }
    }
}

impl From<crate::pipeline::Finding> for Finding {
    fn from(record: crate::pipeline::Finding) -> Self {
        Finding::from(&record)
    }
}

impl From<&crate::pipeline::Measurement> for Measurement {
    fn from(record: &crate::pipeline::Measurement) -> Self {
        Measurement {
            platform: record.platform.into(),
            field: record.field.into(),
            unit: record.unit.into(),
            weighted_length: record.weighted_length,
            limit: record.limit,
            valid: record.valid,
            checks: record.checks.iter().map(Into::into).collect(),
        }
    }
}

impl From<crate::pipeline::Measurement> for Measurement {
    fn from(record: crate::pipeline::Measurement) -> Self {
        Measurement::from(&record)
    }
}

impl From<&crate::pipeline::LimitCheck> for LimitCheck {
    fn from(record: &crate::pipeline::LimitCheck) -> Self {
        LimitCheck { limit: (&record.limit).into(), length: record.length, fits: record.fits }
    }
}

/// Which field of a draft a limit applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, TS)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warn,
    Block,
}

/// One machine-checkable limit, with where it comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DraftProfile {
    /// `wechat@draft-v1`, or `wechat@draft-v1+local.2` for a user override.
    pub id: String,
    pub platform: Platform,
    pub format: String,
    pub description: String,
    pub limits: Vec<Limit>,
    /// Platform-specific settings (column width, numbering format, ...).
    #[ts(type = "Record<string, unknown>")]
    pub settings: BTreeMap<String, serde_json::Value>,
    /// Per-element inline styles (WeChat).
    pub theme: BTreeMap<String, String>,
}

/// What a platform's readers want: for people to read and for a model to follow.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
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
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
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
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
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

impl From<crate::profiles::LimitField> for LimitField {
    fn from(record: crate::profiles::LimitField) -> Self {
        use crate::profiles::LimitField as F;
        match record {
            F::Title => Self::Title,
            F::Digest => Self::Digest,
            F::Body => Self::Body,
            F::Tags => Self::Tags,
            F::Images => Self::Images,
            F::Post => Self::Post,
            F::Posts => Self::Posts,
        }
    }
}

impl From<LimitField> for crate::profiles::LimitField {
    fn from(wire: LimitField) -> Self {
        use LimitField as F;
        match wire {
            F::Title => Self::Title,
            F::Digest => Self::Digest,
            F::Body => Self::Body,
            F::Tags => Self::Tags,
            F::Images => Self::Images,
            F::Post => Self::Post,
            F::Posts => Self::Posts,
        }
    }
}

impl From<crate::profiles::Unit> for Unit {
    fn from(record: crate::profiles::Unit) -> Self {
        use crate::profiles::Unit as U;
        match record {
            U::Chars => Self::Chars,
            U::XWeighted => Self::XWeighted,
            U::XhsUnits => Self::XhsUnits,
            U::Count => Self::Count,
        }
    }
}

impl From<crate::profiles::Severity> for Severity {
    fn from(record: crate::profiles::Severity) -> Self {
        use crate::profiles::Severity as S;
        match record {
            S::Info => Self::Info,
            S::Warn => Self::Warn,
            S::Block => Self::Block,
        }
    }
}

impl From<&crate::profiles::Limit> for Limit {
    fn from(record: &crate::profiles::Limit) -> Self {
        Limit {
            field: record.field.into(),
            min: record.min,
            max: record.max,
            unit: record.unit.into(),
            route: record.route.clone(),
            severity: record.severity.into(),
            source: record.source.clone(),
        }
    }
}

impl From<&crate::profiles::DraftProfile> for DraftProfile {
    fn from(record: &crate::profiles::DraftProfile) -> Self {
        DraftProfile {
            id: record.id.clone(),
            platform: record.platform.into(),
            format: record.format.clone(),
            description: record.description.clone(),
            limits: record.limits.iter().map(Into::into).collect(),
            // A TOML value's serde form, as the stored profile's own would serialize.
            settings: record.settings.iter().map(|(key, value)| (key.clone(), serde_json::to_value(value).unwrap_or_default())).collect(),
            theme: record.theme.clone(),
        }
    }
}

impl From<&crate::profiles::GrowthProfile> for GrowthProfile {
    fn from(record: &crate::profiles::GrowthProfile) -> Self {
        GrowthProfile {
            id: record.id.clone(),
            platform: record.platform.into(),
            audience: record.audience.clone(),
            content_preferences: record.content_preferences.clone(),
            title_rules: record.title_rules.clone(),
            opening_rules: record.opening_rules.clone(),
            structure_rules: record.structure_rules.clone(),
            tag_rules: record.tag_rules.clone(),
            cta_rules: record.cta_rules.clone(),
            risk_rules: record.risk_rules.clone(),
            metrics_focus: record.metrics_focus.clone(),
            fit: (&record.fit).into(),
        }
    }
}

impl From<crate::profiles::LinkPolicy> for LinkPolicy {
    fn from(record: crate::profiles::LinkPolicy) -> Self {
        use crate::profiles::LinkPolicy as L;
        match record {
            L::Allowed => Self::Allowed,
            L::Footnotes => Self::Footnotes,
            L::None => Self::None,
        }
    }
}

impl From<&crate::profiles::FitRules> for FitRules {
    fn from(record: &crate::profiles::FitRules) -> Self {
        FitRules {
            title_chars: record.title_chars,
            hook_chars: record.hook_chars,
            tags: record.tags,
            cta_markers: record.cta_markers.clone(),
            links: record.links.into(),
            max_paragraph_chars: record.max_paragraph_chars,
            heading_every_chars: record.heading_every_chars,
        }
    }
}

impl From<&crate::profiles::RiskList> for RiskList {
    fn from(record: &crate::profiles::RiskList) -> Self {
        RiskList {
            id: record.id.clone(),
            description: record.description.clone(),
            source: record.source.clone(),
            suggestion: record.suggestion.clone(),
            strict_industries: record.strict_industries.clone(),
            terms: record.terms.clone(),
            allow: record.allow.clone(),
            allow_context: record.allow_context.iter().map(Into::into).collect(),
        }
    }
}

impl From<&crate::profiles::ContextAllow> for ContextAllow {
    fn from(record: &crate::profiles::ContextAllow) -> Self {
        ContextAllow {
            term: record.term.clone(),
            followed_by: record.followed_by.clone(),
            opening_followed_by: record.opening_followed_by.clone(),
            not_preceded_by: record.not_preceded_by.clone(),
        }
    }
}
