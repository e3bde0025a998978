//! Provenance: what the model had read before it proposed a change.
//!
//! A log folds, event by event, into the sources its model has read
//! ([`SessionState::sources`](super::SessionState)): every successful tool result (a
//! search tool's result as its hits: document, version, span and snippet), the
//! selection a person's message was scoped to and the links pasted into it. A
//! compaction replaces the messages that carried them by a summary, but the
//! `compact_boundary` event keeps the list ([`EventBody::CompactBoundary`]'s
//! `sources`), so a proposal made after any number of compactions still names what
//! was read before them. At the moment of a proposal the call adds what its system
//! message held: the pins, the confirmed memory items and the performance summaries
//! in its context snapshot. A `read_performance` result is kept as the summary it read
//! (its platform and evidence), not as a bare tool result.
//!
//! The list is bounded ([`MAX_SOURCES`], the newest kept), so a boundary event stays
//! within the log's line limit however long the session.
//!
//! [`EventBody::CompactBoundary`]: super::EventBody::CompactBoundary

use serde_json::Value;

use super::event::ToolStatus;
use crate::context::Selection;
use crate::model::{Anchor, ProvenanceSource};

/// The most sources a log keeps in context (the newest).
pub const MAX_SOURCES: usize = 48;
/// The most characters of a hit's title and snippet, or a pin's and memory item's
/// text, a source keeps.
const SOURCE_TEXT_CHARS: usize = 160;
/// The most characters of a pasted link.
const LINK_CHARS: usize = 500;

fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        let mut out: String = text.chars().take(max).collect();
        out.push('…');
        out
    }
}

/// Adds `new` to `sources` (once: an equal source moves to the end), keeping the
/// newest [`MAX_SOURCES`].
pub(crate) fn remember(sources: &mut Vec<ProvenanceSource>, new: Vec<ProvenanceSource>) {
    for source in new {
        sources.retain(|s| s != &source);
        sources.push(source);
    }
    if sources.len() > MAX_SOURCES {
        sources.drain(..sources.len() - MAX_SOURCES);
    }
}

/// True for the built-in tools whose result is something the model read (the read,
/// search and check tools), by their names' prefixes; a proposal, a question, a write
/// or a tool registered from outside is not.
fn is_reading(tool: &str) -> bool {
    ["read_", "search_", "compile_", "validate_", "run_"].iter().any(|prefix| tool.starts_with(prefix))
}

/// The sources a tool result adds: a search tool's hits, or the result itself.
/// Failures and the results of tools that do not read add nothing.
pub(crate) fn of_tool_result(owner_id: &str, sequence: u64, tool_use_id: &str, tool: &str, status: ToolStatus, content: &str, result_ref: Option<&str>) -> Vec<ProvenanceSource> {
    if status != ToolStatus::Success || !is_reading(tool) {
        return Vec::new();
    }
    if tool == "read_performance" {
        if let Some(source) = performance_result(tool_use_id, content) {
            return vec![source];
        }
    }
    if tool.starts_with("search_") {
        if let Some(hits) = serde_json::from_str::<Value>(content).ok().and_then(|v| v.get("results").and_then(Value::as_array).cloned()) {
            return hits.iter().filter_map(|hit| search_hit(tool, tool_use_id, hit)).collect();
        }
    }
    vec![ProvenanceSource::ToolResult {
        tool: tool.to_owned(),
        tool_use_id: tool_use_id.to_owned(),
        owner_id: owner_id.to_owned(),
        sequence,
        result_ref: result_ref.map(str::to_owned),
    }]
}

fn search_hit(tool: &str, tool_use_id: &str, hit: &Value) -> Option<ProvenanceSource> {
    let text = |key: &str| hit.get(key).and_then(Value::as_str).map(str::to_owned);
    let span = hit.get("span").and_then(|s| serde_json::from_value::<Anchor>(s.clone()).ok());
    Some(ProvenanceSource::SearchHit {
        tool: tool.to_owned(),
        tool_use_id: tool_use_id.to_owned(),
        reference: text("reference")?,
        project_id: text("projectId")?,
        title: clip(&text("title").unwrap_or_default(), SOURCE_TEXT_CHARS),
        version: hit.get("version").and_then(Value::as_u64).and_then(|v| u32::try_from(v).ok()),
        comment_id: text("commentId"),
        span,
        snippet: clip(&text("snippet").unwrap_or_default(), SOURCE_TEXT_CHARS),
    })
}

/// A `read_performance` result (`{platform, snapshotIds, …}`) as the summary it read.
fn performance_result(tool_use_id: &str, content: &str) -> Option<ProvenanceSource> {
    let value: Value = serde_json::from_str(content).ok()?;
    let platform = serde_json::from_value(value.get("platform")?.clone()).ok()?;
    let snapshot_ids = value.get("snapshotIds").and_then(Value::as_array).map(|ids| ids.iter().filter_map(Value::as_str).map(str::to_owned).collect()).unwrap_or_default();
    Some(ProvenanceSource::PerformanceSummary { platform, snapshot_ids, tool_use_id: Some(tool_use_id.to_owned()) })
}

/// The performance summaries a call's system message held (its `performance` layer,
/// one `## performance: <platform>` block each, with its evidence line).
pub(crate) fn of_performance_context(system: &str) -> Vec<ProvenanceSource> {
    use crate::performance::context::{EVIDENCE_PREFIX, PLATFORM_HEADING};
    let mut out = Vec::new();
    for block in system.split(PLATFORM_HEADING).skip(1) {
        let name = block.lines().next().unwrap_or("").trim();
        let Some(platform) = crate::model::Platform::ALL.into_iter().find(|p| p.as_str() == name) else { continue };
        let snapshot_ids = block
            .lines()
            .find_map(|l| l.strip_prefix(EVIDENCE_PREFIX))
            .map(|ids| ids.split(", ").map(|id| id.trim().to_owned()).filter(|id| !id.is_empty()).collect())
            .unwrap_or_default();
        out.push(ProvenanceSource::PerformanceSummary { platform, snapshot_ids, tool_use_id: None });
    }
    out
}

/// The sources a person's message adds: its selection and the links in it.
pub(crate) fn of_message(text: &str, selection: Option<&Selection>) -> Vec<ProvenanceSource> {
    let mut out = Vec::new();
    if let Some(selection) = selection {
        out.push(ProvenanceSource::Selection { span: Anchor { from: selection.from, to: selection.to }, text: clip(&selection.text, SOURCE_TEXT_CHARS) });
    }
    out.extend(links(text).into_iter().map(|url| ProvenanceSource::Link { url }));
    out
}

/// The `http(s)://` links in `text`, each once, up to white space, a closing bracket
/// or quote, or full-width punctuation.
fn links(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut rest = text;
    while let Some(start) = ["https://", "http://"].iter().filter_map(|scheme| rest.find(scheme)).min() {
        let tail = &rest[start..];
        let end = tail.find(|c: char| c.is_whitespace() || matches!(c, ')' | ']' | '>' | '"' | '\'' | '，' | '。' | '）' | '、' | '；' | '」')).unwrap_or(tail.len());
        let url = tail[..end].trim_end_matches(['.', ',', ';', ':', '!', '?']);
        if url.len() > "https://".len() && !out.iter().any(|u| u == url) {
            out.push(clip(url, LINK_CHARS));
        }
        rest = &tail[end.max(1)..];
    }
    out
}

/// The pins and confirmed memory items a model call's system message held (by the
/// text of its context snapshot), as sources.
pub(crate) fn of_call_context(system: &str, pins: &[super::Pin], memory: &[crate::memory::MemoryItem]) -> Vec<ProvenanceSource> {
    let mut out: Vec<ProvenanceSource> =
        pins.iter().filter(|p| system.contains(&p.text)).map(|p| ProvenanceSource::Pin { pin_id: p.id.clone(), text: clip(&p.text, SOURCE_TEXT_CHARS) }).collect();
    out.extend(
        memory
            .iter()
            .filter(|m| m.status == crate::memory::MemoryStatus::Confirmed && system.contains(&m.text))
            .map(|m| ProvenanceSource::Memory { memory_id: m.id.clone(), text: clip(&m.text, SOURCE_TEXT_CHARS) }),
    );
    out.extend(of_performance_context(system));
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn links_are_found_once_and_end_at_punctuation() {
        assert_eq!(links("see https://example.com/a, and (http://x.cn/b) 还有https://example.com/a。"), ["https://example.com/a", "http://x.cn/b"]);
        assert!(links("no link, just https:// alone").is_empty());
    }

    #[test]
    fn search_results_become_hits_and_own_outputs_add_nothing() {
        let content = r#"{"query":"茶","results":[{"reference":"prj_1@v2:3-5","projectId":"prj_1","title":"春茶","kind":"version","version":2,"span":{"from":3,"to":5},"snippet":"明前茶","tier":"lexical"}]}"#;
        let hits = of_tool_result("ses_1", 9, "c1", "search_workspace", ToolStatus::Success, content, None);
        assert_eq!(
            hits,
            [ProvenanceSource::SearchHit {
                tool: "search_workspace".into(),
                tool_use_id: "c1".into(),
                reference: "prj_1@v2:3-5".into(),
                project_id: "prj_1".into(),
                title: "春茶".into(),
                version: Some(2),
                comment_id: None,
                span: Some(Anchor { from: 3, to: 5 }),
                snippet: "明前茶".into(),
            }]
        );
        assert!(of_tool_result("ses_1", 9, "c1", "propose_source_patch", ToolStatus::Success, "{}", None).is_empty());
        assert!(of_tool_result("ses_1", 9, "c1", "read_versions", ToolStatus::ToolError, "{}", None).is_empty());
        let read = of_tool_result("ses_1", 9, "c1", "read_versions", ToolStatus::Success, "{}", Some("sha256:ab"));
        assert!(matches!(&read[..], [ProvenanceSource::ToolResult { sequence: 9, result_ref: Some(r), .. }] if r == "sha256:ab"));
    }

    #[test]
    fn the_newest_sources_are_kept_each_once() {
        let mut sources = Vec::new();
        for i in 0..(MAX_SOURCES + 10) {
            remember(&mut sources, vec![ProvenanceSource::Link { url: format!("https://e.com/{i}") }]);
        }
        remember(&mut sources, vec![ProvenanceSource::Link { url: format!("https://e.com/{}", MAX_SOURCES + 5) }]);
        assert_eq!(sources.len(), MAX_SOURCES);
        assert_eq!(sources.last(), Some(&ProvenanceSource::Link { url: format!("https://e.com/{}", MAX_SOURCES + 5) }));
        assert_eq!(sources.first(), Some(&ProvenanceSource::Link { url: "https://e.com/10".into() }));
    }
}
