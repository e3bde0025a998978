//! How the performance commands print their answers: the dashboard, a publication and
//! its latest metrics, an import's preview, the AI context setting; or the answer as
//! JSON when asked.

use serde_json::Value;

use crate::commands::{print_json, s};

const WEEKDAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];

pub(super) fn print_dashboard(d: &Value) {
    let rows = d["rows"].as_array().cloned().unwrap_or_default();
    let keys: Vec<String> = d["metricKeys"].as_array().into_iter().flatten().filter_map(|k| k.as_str().map(str::to_owned)).collect();
    if rows.is_empty() {
        println!("No publications match.");
    }
    for row in &rows {
        let p = &row["publication"];
        let account = row["accountName"].as_str().map(|a| format!("  {a}")).unwrap_or_default();
        println!("{}  {:<11} {}  {}{account}  {}", s(p, "id"), s(p, "platform"), s(p, "publishedAt"), s(p, "format"), s(p, "title"));
        let values: Vec<String> = keys
            .iter()
            .filter(|k| row["latest"][k.as_str()].is_object() || usual(s(p, "platform")).contains(&k.as_str()))
            .map(|k| match row["latest"][k.as_str()]["raw"].as_str() {
                Some(raw) => format!("{k}={raw}"),
                None => format!("{k}=—"),
            })
            .collect();
        if !values.is_empty() {
            println!("    {}", values.join(" "));
        }
    }
    println!("{} of {} publications shown{}.", rows.len(), d["total"], if d["groupedByPlatform"] == true { ", ordered within each platform" } else { "" });
    let age = d["age"].as_str().map(|a| format!(" at {a}")).unwrap_or_else(|| " (latest values)".to_owned());
    for m in d["medians"].as_array().into_iter().flatten() {
        let points: Vec<String> = m["points"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|p| {
                format!(
                    "{} {} (n={})",
                    s(p, "period"),
                    p["median"].as_f64().map(|v| format!("{v:.6}").trim_end_matches('0').trim_end_matches('.').to_owned()).unwrap_or_default(),
                    p["n"]
                )
            })
            .collect();
        let without = m["withoutValue"].as_u64().filter(|n| *n > 0).map(|n| format!("; {n} without a value")).unwrap_or_default();
        println!(
            "median {} {}{age} by {}: {}{without}",
            s(m, "platform"),
            s(m, "metric"),
            s(d, "interval"),
            if points.is_empty() { "no data".to_owned() } else { points.join(", ") }
        );
    }
    let cells: Vec<String> = d["postingTimes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| format!("{} {:02}:00 ×{}", WEEKDAYS.get(c["weekday"].as_u64().unwrap_or(0) as usize).unwrap_or(&"?"), c["hour"].as_u64().unwrap_or(0), c["count"]))
        .collect();
    if !cells.is_empty() {
        println!("posted (day and hour in each publication's time zone): {}", cells.join(", "));
    }
}

/// The metrics a platform usually shows, as the window's table does.
fn usual(platform: &str) -> &'static [&'static str] {
    match platform {
        "wechat" => &["readers", "views"],
        "zhihu" => &["views", "upvotes"],
        "x" => &["impressions", "likes"],
        "douyin" => &["views", "likes"],
        "xiaohongshu" => &["impressions", "views"],
        _ => &[],
    }
}

pub(super) fn print_context_state(r: &Value) {
    let word = |on: bool| if on { "on" } else { "off" };
    println!("Use performance history in AI context: {}", word(r["enabled"] == true));
    if r["decidedByPolicy"] == true {
        println!(
            "  decided by the policy of the workspace \"{}\" (set by {}); your own setting ({}) applies when the policy allows it",
            s(r, "policyWorkspace"),
            s(r, "policySetBy"),
            word(r["setting"] == true)
        );
    }
}

pub(super) fn print_publication(p: &Value, latest: Option<&Value>) {
    let removed = if p["removedAt"].is_string() { " (removed)" } else { "" };
    let ai = p["aiChanges"].as_array().map_or(0, Vec::len);
    println!(
        "{}  {:<11} v{:<3} {}  {}  {} {} {}  AI changes: {ai}{removed}",
        s(p, "id"),
        s(p, "platform"),
        p["versionNumber"],
        s(p, "publishedAt"),
        s(p, "title"),
        s(p, "format"),
        s(p, "distribution"),
        s(p, "visibility")
    );
    if let Some(url) = p["url"].as_str() {
        println!("    {url}");
    }
    if let Some(snapshot) = latest.filter(|l| l.is_object()) {
        println!("    {}", metrics_line(snapshot));
    }
}

pub(super) fn metrics_line(snapshot: &Value) -> String {
    let mut parts: Vec<String> = Vec::new();
    for map in [&snapshot["metrics"], &snapshot["extras"]] {
        for (key, m) in map.as_object().into_iter().flatten() {
            parts.push(format!("{key}={}", s(m, "raw")));
        }
    }
    format!("at {} (age {:.1} h): {}", s(snapshot, "observedAt"), snapshot["ageHours"].as_f64().unwrap_or(0.0), parts.join(" "))
}

pub(super) fn print_import(r: &Value) {
    let p = &r["preview"];
    println!("{} ({}), {}", s(p, "importerName"), s(p, "importer"), s(p, "encoding"));
    for row in p["rows"].as_array().into_iter().flatten() {
        let o = &row["outcome"];
        let what = match s(o, "status") {
            "matched" => format!("→ {} (by {})", s(o, "publicationId"), s(o, "by")),
            "ambiguous" => format!("ambiguous: {}", o["candidates"]),
            "notUnderstood" => format!("not understood: {}", s(o, "problem")),
            "accountDay" => format!("→ {} on {}", s(o, "accountId"), s(o, "date")),
            other => other.to_owned(),
        };
        println!("  row {:<5} {}  {what}", row["row"], s(row, "title"));
    }
    println!("matched {}, unmatched {}, ambiguous {}, skipped {}, not understood {}", p["matched"], p["unmatched"], p["ambiguous"], p["skipped"], p["notUnderstood"]);
    if p["alreadyImported"].is_string() {
        println!("This file was imported before ({}); nothing was written.", s(p, "alreadyImported"));
    } else if r["committed"] == true {
        println!("Imported: {} snapshot(s) written.", r["snapshots"].as_array().map_or(0, Vec::len));
    } else {
        println!("Nothing written (preview).");
    }
}

pub(super) fn show(as_json: bool, value: &Value, text: impl Fn(&Value)) {
    if as_json {
        print_json(value);
    } else {
        text(value);
    }
}
