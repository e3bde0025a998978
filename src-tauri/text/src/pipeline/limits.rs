//! Lengths as each platform counts them (characters, X's weighted length,
//! Xiaohongshu's units) held against a profile's limits: the measurement the editor
//! shows and the findings for every limit a draft breaks.

use serde::{Deserialize, Serialize};

use super::Finding;
use crate::profiles::{DraftProfile, Limit, LimitField, Severity, Unit};
use inkstone_model::Platform;

/// A length as a platform counts it, against its limits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LimitCheck {
    pub limit: Limit,
    pub length: u32,
    pub fits: bool,
}

pub(super) fn length_in(unit: Unit, text: &str) -> usize {
    match unit {
        Unit::Chars => super::measure::chars(text),
        Unit::XWeighted => super::measure::x_weighted_length(text),
        Unit::XhsUnits => super::measure::xhs_units(text),
        Unit::Count => text.split_whitespace().count(),
    }
}

pub(super) fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Measures `text` as `platform` counts `field`.
pub fn measure(profile: &DraftProfile, field: LimitField, text: &str) -> Measurement {
    let checks: Vec<LimitCheck> = profile
        .limits_for(field)
        .map(|limit| {
            let length = to_u32(length_in(limit.unit, text));
            let fits = length <= limit.max && limit.min.is_none_or(|min| length >= min);
            LimitCheck { limit: limit.clone(), length, fits }
        })
        .collect();
    let unit = checks.first().map(|c| c.limit.unit).unwrap_or(Unit::Chars);
    let weighted_length = to_u32(length_in(unit, text));
    Measurement {
        platform: profile.platform,
        field,
        unit,
        weighted_length,
        limit: checks.iter().map(|c| c.limit.max).min(),
        valid: checks.iter().filter(|c| c.limit.severity == Severity::Block || c.limit.route.is_none()).all(|c| c.fits),
        checks,
    }
}

/// Findings for every limit of `field` that `value` (a length or count) breaks.
pub(super) fn limit_findings(profile: &DraftProfile, field: LimitField, length_of: impl Fn(Unit) -> usize, location: &str) -> Vec<Finding> {
    let mut findings = Vec::new();
    for limit in profile.limits_for(field) {
        let length = length_of(limit.unit);
        let unit = match limit.unit {
            Unit::Chars => "characters",
            Unit::XWeighted => "weighted characters",
            Unit::XhsUnits => "characters (two Latin letters or digits count as one)",
            Unit::Count => "items",
        };
        let unit_id = match limit.unit {
            Unit::Chars => "chars",
            Unit::XWeighted => "xWeighted",
            Unit::XhsUnits => "xhsUnits",
            Unit::Count => "count",
        };
        let route = limit.route.as_deref().map(|r| format!(" on the {r} route")).unwrap_or_default();
        // What breaks the limit, and the fix: the length to reach. Where the limit comes
        // from (a platform's documentation, a tool's schema) stays in `params.source`.
        let message = if length > limit.max as usize {
            let fix = (format!("Cut the {location} to at most {} {unit}.", limit.max), "limit.shorten");
            Some((format!("The {location} is {length} {unit}; the limit{route} is {}.", limit.max), "limit.over", limit.max, fix))
        } else {
            limit.min.filter(|min| length < *min as usize).map(|min| {
                let fix = (format!("Bring the {location} to at least {min} {unit}."), "limit.lengthen");
                (format!("The {location} is {length} {unit}; at least {min} are expected{route}."), "limit.under", min, fix)
            })
        };
        if let Some((message, wording, bound, (fix, fix_wording))) = message {
            // The post's number when the location is one post ("post 3").
            let post = location.strip_prefix("post ").unwrap_or("");
            let (length, bound) = (length.to_string(), bound.to_string());
            let mut params = vec![("field", field_name(field)), ("length", length.as_str()), ("bound", bound.as_str()), ("unit", unit_id)];
            if !post.is_empty() {
                params.push(("post", post));
            }
            if let Some(route) = limit.route.as_deref() {
                params.push(("route", route));
            }
            params.push(("source", limit.source.as_str()));
            let mut finding = Finding::new(&format!("limit.{}", field_name(field)), limit.severity, Some(profile.platform), message)
                .worded(wording, &params)
                .at(location)
                .suggest_worded(fix_wording, fix);
            finding.route = limit.route.clone();
            findings.push(finding);
        }
    }
    findings
}

fn field_name(field: LimitField) -> &'static str {
    match field {
        LimitField::Title => "title",
        LimitField::Digest => "digest",
        LimitField::Body => "body",
        LimitField::Tags => "tags",
        LimitField::Images => "images",
        LimitField::Post => "post",
        LimitField::Posts => "posts",
    }
}
