//! Performance tables as CSV for spreadsheets, through the one writer
//! ([`crate::spreadsheet`]: UTF-8 with a BOM, quoted, formulas defused): the dashboard's
//! table (also a project's publications: the dashboard filtered to the project) and the
//! before/after report's points. A value that was not reported is an empty cell, never 0.

use serde::Serialize;

use super::dashboard::Dashboard;
use super::numbers::Qualifier;
use super::report::BeforeAfterReport;
use crate::spreadsheet::Cell;

/// The dashboard's rows (every matching one: call [`super::dashboard::dashboard`] without a limit) as a
/// table for [`crate::spreadsheet`]: the publication's facts, then one column per metric
/// key (empty when not reported, never 0), and which values are lower bounds (`10w+`)
/// or rounded (`1.2万`).
pub fn dashboard_table(board: &Dashboard) -> (Vec<String>, Vec<Vec<crate::spreadsheet::Cell>>) {
    let mut header: Vec<String> = [
        "published_at",
        "time_zone",
        "platform",
        "account",
        "format",
        "distribution",
        "visibility",
        "title",
        "project_id",
        "version",
        "ai_changes",
        "url",
        "post_id",
        "publication_id",
        "latest_observed_at",
    ]
    .iter()
    .map(|h| (*h).to_owned())
    .collect();
    header.extend(board.metric_keys.iter().cloned());
    header.push("qualified".to_owned());
    let rows = board
        .rows
        .iter()
        .map(|row| {
            let p = &row.publication;
            let zone = p.time_zone.parse::<chrono_tz::Tz>().unwrap_or(chrono_tz::UTC);
            let text = |s: &str| Cell::Text(s.to_owned());
            let mut cells = vec![
                Cell::Text(p.published_at.with_timezone(&zone).to_rfc3339_opts(chrono::SecondsFormat::Secs, true)),
                text(&p.time_zone),
                text(p.platform.as_str()),
                text(row.account_name.as_deref().unwrap_or("")),
                text(&enum_name(&p.format)),
                text(&enum_name(&p.distribution)),
                text(&enum_name(&p.visibility)),
                text(&p.title),
                text(&p.project_id),
                Cell::Number(p.version_number.to_string()),
                Cell::Number(p.ai_changes.len().to_string()),
                text(p.url.as_deref().unwrap_or("")),
                text(p.platform_post_id.as_deref().unwrap_or("")),
                text(&p.id),
                Cell::Text(row.latest.values().map(|l| l.observed_at).max().map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)).unwrap_or_default()),
            ];
            let mut qualified = Vec::new();
            for key in &board.metric_keys {
                match row.latest.get(key) {
                    Some(l) => {
                        cells.push(Cell::Number(number(l.value.value)));
                        match l.value.qualifier {
                            Qualifier::Exact => {}
                            Qualifier::LowerBound => qualified.push(format!("{key}:lower_bound")),
                            Qualifier::Rounded => qualified.push(format!("{key}:rounded")),
                        }
                    }
                    None => cells.push(Cell::empty()),
                }
            }
            cells.push(Cell::Text(qualified.join(" ")));
            cells
        })
        .collect();
    (header, rows)
}

/// A number as a spreadsheet reads it: no exponent, no trailing zeros.
pub fn number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{value:.0}")
    } else {
        let text = format!("{value:.6}");
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    }
}

/// An enum's wire name (`imageText`).
fn enum_name<T: Serialize>(value: &T) -> String {
    serde_json::to_value(value).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
}

/// The before/after report's points as a table: each measured publication with its
/// value at the age, the account's baseline, the multiple and why it was left out. Every
/// row names the metric and the age it was measured by, so a row read alone keeps its
/// basis; the report is an association, never a cause.
pub fn report_table(report: &BeforeAfterReport) -> (Vec<String>, Vec<Vec<Cell>>) {
    let header: Vec<String> = [
        "published_at",
        "title",
        "project_id",
        "publication_id",
        "account_id",
        "format",
        "ai_changes",
        "metric",
        "age_bucket",
        "snapshot_id",
        "age_hours",
        "value",
        "baseline",
        "multiple",
        "excluded",
    ]
    .iter()
    .map(|h| (*h).to_owned())
    .collect();
    let optional = |v: Option<f64>| v.map(|v| Cell::Number(number(v))).unwrap_or_else(Cell::empty);
    let rows = report
        .points
        .iter()
        .map(|p| {
            vec![
                Cell::Text(p.published_at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)),
                Cell::Text(p.title.clone()),
                Cell::Text(p.project_id.clone()),
                Cell::Text(p.publication_id.clone()),
                Cell::Text(p.account_id.clone().unwrap_or_default()),
                Cell::Text(enum_name(&p.format)),
                Cell::Text(if p.ai { "yes" } else { "no" }.to_owned()),
                Cell::Text(report.metric.clone()),
                Cell::Text(enum_name(&report.bucket)),
                Cell::Text(p.snapshot_id.clone()),
                Cell::Number(number(p.age_hours)),
                Cell::Number(number(p.value)),
                optional(p.baseline),
                optional(p.multiple),
                Cell::Text(p.excluded.map(|e| enum_name(&e)).unwrap_or_default()),
            ]
        })
        .collect();
    (header, rows)
}
