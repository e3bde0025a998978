//! A table's rows read through its export profile: the post each names (id, URL,
//! title, publishing time) and its metrics, before matching.

use std::collections::BTreeMap;

use chrono::{NaiveDate, NaiveDateTime, TimeZone};

use super::super::metrics::{self, MetricValue};
use super::{ExportProfile, Table};
use crate::model::Timestamp;

/// A row read, before matching.
pub(super) struct ReadRow {
    pub(super) row: u32,
    pub(super) title: String,
    pub(super) post_id: Option<String>,
    pub(super) url: Option<String>,
    pub(super) published_at: Option<Timestamp>,
    pub(super) date_only: bool,
    pub(super) metrics: BTreeMap<String, MetricValue>,
    pub(super) extras: BTreeMap<String, MetricValue>,
    pub(super) raw: Vec<(String, String)>,
    pub(super) private: bool,
    pub(super) problem: Option<String>,
}

fn column<'a>(headers: &[String], cells: &'a [String], name: Option<&String>) -> Option<&'a str> {
    let name = name?;
    let index = headers.iter().position(|h| h == name)?;
    cells.get(index).map(String::as_str).filter(|c| !c.is_empty())
}

/// The numeric id at the end of an X or other post URL (`…/status/1234567890`).
pub fn post_id_in_url(url: &str) -> Option<String> {
    let path = url.split(['?', '#']).next()?.trim_end_matches('/');
    let last = path.rsplit('/').next()?;
    (path.contains("/status/") && !last.is_empty() && last.bytes().all(|b| b.is_ascii_digit())).then(|| last.to_owned())
}

fn read_time(text: &str, formats: &[String], zone: chrono_tz::Tz) -> Option<(Timestamp, bool)> {
    let text = text.trim();
    for format in formats {
        if format.contains("%z") {
            if let Ok(t) = chrono::DateTime::parse_from_str(text, format) {
                return Some((t.with_timezone(&chrono::Utc), false));
            }
        } else if format.contains("%H") {
            if let Ok(naive) = NaiveDateTime::parse_from_str(text, format) {
                return zone.from_local_datetime(&naive).earliest().map(|t| (t.with_timezone(&chrono::Utc), false));
            }
        } else if let Ok(date) = NaiveDate::parse_from_str(text, format) {
            let naive = date.and_hms_opt(0, 0, 0)?;
            return zone.from_local_datetime(&naive).earliest().map(|t| (t.with_timezone(&chrono::Utc), true));
        }
    }
    None
}

pub(super) fn read_rows(profile: &ExportProfile, table: &Table, header_index: usize) -> Vec<ReadRow> {
    let headers = &table.rows[header_index];
    let zone: chrono_tz::Tz = profile.row.time_zone.as_deref().and_then(|z| z.parse().ok()).unwrap_or(chrono_tz::UTC);
    let known: Vec<&String> =
        [&profile.row.post_id, &profile.row.url, &profile.row.title, &profile.row.text, &profile.row.published, &profile.row.format].into_iter().flatten().collect();
    let mut out = Vec::new();
    for (index, cells) in table.rows.iter().enumerate().skip(header_index + 1) {
        // A blank row, or the header again (a header cell spanning two rows is spread
        // over both).
        if cells.iter().all(String::is_empty) || cells == headers {
            continue;
        }
        let row = u32::try_from(index + 1).unwrap_or(u32::MAX);
        let mut problem = None;
        let mut metrics_out = BTreeMap::new();
        let mut extras = BTreeMap::new();
        for (h, header) in headers.iter().enumerate() {
            let Some(cell) = cells.get(h) else { continue };
            if header.is_empty() || known.contains(&header) {
                continue;
            }
            if let Some(mapping) = profile.columns.get(header) {
                let (key, percent) = mapping.split_once(':').map_or((mapping.as_str(), false), |(k, scale)| (k, scale == "percent"));
                let Some(info) = metrics::metric_key(key) else { continue };
                match metrics::read_value(header, cell, info.unit, percent) {
                    Ok(Some(value)) => {
                        // Two headers for one key (legacy `likes` / `favorites`): the first kept.
                        metrics_out.entry(key.to_owned()).or_insert(value);
                    }
                    Ok(None) => {}
                    Err(e) => problem = Some(e.message),
                }
            } else if let Ok(Some(value)) = metrics::read_value(header, cell, metrics::MetricUnit::Count, false) {
                // Unmapped numbers are kept as the platform's extras; text is in the raw row.
                extras.insert(format!("extra.{}.{header}", profile.platform.as_str()), value);
            }
        }
        let title = column(headers, cells, profile.row.title.as_ref().or(profile.row.text.as_ref())).unwrap_or("").to_owned();
        let url = column(headers, cells, profile.row.url.as_ref()).map(str::to_owned);
        let mut post_id = column(headers, cells, profile.row.post_id.as_ref()).map(str::to_owned);
        // A spreadsheet turns an 18-digit id into 1.23457E+18: take it from the link.
        if post_id.as_deref().is_some_and(|id| !id.bytes().all(|b| b.is_ascii_digit())) {
            post_id = url.as_deref().and_then(post_id_in_url);
        }
        let (published_at, date_only) = match column(headers, cells, profile.row.published.as_ref()) {
            Some(text) => match read_time(text, &profile.row.published_formats, zone) {
                Some((t, d)) => (Some(t), d),
                None => {
                    problem.get_or_insert_with(|| format!("{:?} is not a time this export writes.", text));
                    (None, false)
                }
            },
            None => (None, false),
        };
        let private = profile.row.private_when.as_ref().is_some_and(|p| column(headers, cells, Some(&p.column)).is_some_and(|v| p.values.iter().any(|x| x == v)));
        let raw = headers.iter().zip(cells.iter()).filter(|(h, _)| !h.is_empty()).map(|(h, c)| (h.clone(), c.clone())).collect();
        if problem.is_none() && metrics_out.is_empty() && extras.is_empty() {
            problem = Some("The row holds no number.".to_owned());
        }
        out.push(ReadRow { row, title, post_id, url, published_at, date_only, metrics: metrics_out, extras, raw, private, problem });
    }
    out
}
