//! The events the timeline's tests fold (a log as the harness writes it, or a script
//! numbered as the panel's former TypeScript tests numbered theirs) and the readers that
//! check the items.

use serde_json::{json, Value};

use super::super::event::Event;
use super::{fold, TextAppend, Timeline, TimelineItem, TimelinePatch};

/// A log built as the harness writes it: sequences 1, 2, 3, … in order.
pub(super) struct Log(pub(super) Vec<Event>);

impl Log {
    pub(super) fn add(&mut self, kind: &str, payload: Value, tool_use_id: Option<&str>) -> &mut Self {
        let sequence = self.0.len() as u64 + 1;
        let mut envelope = json!({"eventId": format!("evt_{sequence}"), "sequence": sequence, "sessionId": "ses_1", "createdAt": "2026-11-27T12:00:00Z", "modelVisible": false, "kind": kind, "payload": payload});
        if let Some(id) = tool_use_id {
            envelope["toolUseId"] = json!(id);
        }
        self.0.push(serde_json::from_value(envelope).unwrap());
        self
    }
}

fn call(id: &str, name: &str) -> Value {
    json!({"id": id, "name": name, "arguments": "{}"})
}

fn answer(text: &str, calls: Vec<Value>, interrupted: bool, finish: &str) -> Value {
    json!({"text": text, "toolCalls": calls, "finishReason": finish, "interrupted": interrupted, "inputTokens": 100, "outputTokens": 10})
}

fn end(reason: &str, hints: Value) -> Value {
    json!({"reason": reason, "message": format!("ended: {reason}"), "hints": hints})
}

/// A session with a step asked and denied, an interrupted answer, a failed and then
/// a successful compaction, a connection lost mid-answer and its retry.
pub(super) fn session_log() -> Log {
    let mut log = Log(Vec::new());
    log.add("session_created", json!({"projectId": "prj_1", "profile": "fake", "mode": "default"}), None)
        .add("user_message", json!({"text": "把开头改短\n\n<selection from=\"3\" to=\"9\">\n第一段。\n</selection>", "wasQueued": false}), None)
        .add("turn_started", json!({}), None)
        .add("assistant_message", answer("我先读一下。", vec![call("c1", "read_project_context"), call("c2", "apply_proposal")], false, "tool_calls"), None)
        .add("tool_decision", json!({"tool": "read_project_context", "decision": "allow", "reason": ""}), Some("c1"))
        .add("tool_result", json!({"tool": "read_project_context", "status": "success", "content": "{\"proposalIds\": [\"prp_1\"]}"}), Some("c1"))
        .add(
            "approval_requested",
            json!({"requestId": "req_1", "tool": "apply_proposal", "input": {}, "inputHash": "h", "idempotencyKey": "k", "reason": "writes", "reasonId": "write"}),
            Some("c2"),
        )
        .add("turn_ended", end("blocked_on_approval", json!([])), None)
        .add("approval_resolved", json!({"requestId": "req_1", "approved": false, "decidedBy": "me", "note": "先别改"}), Some("c2"))
        .add("tool_result", json!({"tool": "apply_proposal", "status": "denied", "content": "denied: 先别改"}), Some("c2"))
        .add("message_queued", json!({"text": "继续"}), None)
        .add("user_message", json!({"text": "继续", "wasQueued": true}), None)
        .add("turn_started", json!({}), None)
        .add("assistant_message", answer("写到一半", vec![], true, "interrupted"), None)
        .add("turn_ended", end("interrupted", json!([])), None)
        .add("compaction_started", json!({"trigger": "manual", "estimatedTokens": 3000, "contextWindow": 4096}), None)
        .add("compaction_failed", json!({"trigger": "manual", "consecutive": 1, "message": "the summary was not valid"}), None)
        .add("compaction_started", json!({"trigger": "manual", "estimatedTokens": 3000, "contextWindow": 4096}), None)
        .add("compaction_failed", json!({"trigger": "manual", "consecutive": 1, "message": "Stopped by the user; nothing was replaced."}), None)
        .add(
            "compact_boundary",
            json!({"trigger": "auto", "mode": "truncated", "summaryText": "- 把开头改短", "keptMessages": 2, "compactedMessages": 6, "pinnedInstructions": [], "tokensBefore": 3000, "tokensAfter": 900, "note": "removed without a summary"}),
            None,
        )
        .add("user_message", json!({"text": "再试", "wasQueued": false, "selection": {"from": 1, "to": 2, "text": "一"}}), None)
        .add("turn_started", json!({}), None)
        .add("assistant_message", answer("断了", vec![], true, "error"), None)
        .add("turn_ended", end("model_error", json!([{"id": "connection_lost", "message": "lost"}])), None)
        .add("user_message", json!({"text": "再试", "wasQueued": false, "selection": {"from": 1, "to": 2, "text": "一"}}), None);
    log
}

/// Each item as `(kind, key, a short summary of its state)`.
pub(super) fn shape(timeline: &Timeline) -> Vec<(String, String, String)> {
    timeline
        .items
        .iter()
        .map(|item| {
            let value = serde_json::to_value(item).unwrap();
            let kind = value["kind"].as_str().unwrap().to_owned();
            let summary = match item {
                TimelineItem::User { text, selection, was_queued, retry, .. } => {
                    format!("{text}|{}|{was_queued}|{retry}", selection.as_ref().map_or(String::new(), |s| s.text.clone()))
                }
                TimelineItem::Assistant { text, interrupted, cut_off, .. } => format!("{text}|{interrupted}|{cut_off}"),
                TimelineItem::Tool { name, state, proposal_ids, .. } => format!("{name}|{state:?}|{}", proposal_ids.join(",")),
                TimelineItem::Decision { tool, approved, note, .. } => format!("{tool}|{approved}|{note}"),
                TimelineItem::End { reason, cut_off, retry, .. } => format!("{reason:?}|{cut_off}|{}", retry.as_ref().map_or(String::new(), |r| r.text.clone())),
                TimelineItem::Boundary { mode, compacted, .. } => format!("{mode:?}|{compacted}"),
                TimelineItem::CompactionFailed { consecutive, outcome, .. } => format!("{consecutive}|{outcome:?}"),
                other => serde_json::to_string(other).unwrap(),
            };
            (kind, item.key().to_owned(), summary)
        })
        .collect()
}

/// Events numbered as the UI's `ev` numbers them (a live one has sequence 0).
#[derive(Default)]
pub(super) struct Script {
    pub(super) sequence: u64,
}

pub(super) type Body = (&'static str, Value);

impl Script {
    pub(super) fn ev(&mut self, body: Body) -> Event {
        self.sequence += 1;
        envelope(self.sequence, body, None)
    }
    pub(super) fn ev_tool(&mut self, body: Body, tool_use_id: &str) -> Event {
        self.sequence += 1;
        envelope(self.sequence, body, Some(tool_use_id))
    }
}

pub(super) fn envelope(sequence: u64, (kind, payload): Body, tool_use_id: Option<&str>) -> Event {
    let mut value = json!({"eventId": format!("evt_{sequence}"), "sequence": sequence, "sessionId": "ses_1", "turnId": "turn_1", "createdAt": "2026-11-22T11:59:00Z", "modelVisible": false, "kind": kind, "payload": payload});
    if let Some(id) = tool_use_id {
        value["toolUseId"] = json!(id);
    }
    serde_json::from_value(value).unwrap()
}

pub(super) fn live(body: Body) -> Event {
    envelope(0, body, None)
}

pub(super) fn created() -> Body {
    ("session_created", json!({"projectId": "prj_1", "profile": "llm_1", "mode": "default"}))
}
pub(super) fn user(text: &str) -> Body {
    ("user_message", json!({"text": text, "wasQueued": false}))
}
pub(super) fn queued_user(text: &str) -> Body {
    ("user_message", json!({"text": text, "wasQueued": true}))
}
pub(super) fn user_with(text: &str, selection: Value) -> Body {
    ("user_message", json!({"text": text, "wasQueued": false, "selection": selection}))
}
pub(super) fn turn_started() -> Body {
    ("turn_started", json!({}))
}
pub(super) fn assistant(text: &str, calls: Vec<Value>, interrupted: bool) -> Body {
    let finish = if calls.is_empty() { "stop" } else { "tool_calls" };
    ("assistant_message", json!({"text": text, "toolCalls": calls, "finishReason": finish, "interrupted": interrupted, "inputTokens": 100, "outputTokens": 20}))
}
pub(super) fn cut_off(text: &str) -> Body {
    ("assistant_message", json!({"text": text, "toolCalls": [], "finishReason": "error", "interrupted": true, "inputTokens": 100, "outputTokens": 20}))
}
pub(super) fn call_with(id: &str, name: &str, args: Value) -> Value {
    json!({"id": id, "name": name, "arguments": args.to_string()})
}
pub(super) fn tool_result(tool: &str, content: &str, status: &str) -> Body {
    ("tool_result", json!({"tool": tool, "status": status, "content": content, "reusedExecution": false}))
}
pub(super) fn turn_ended(reason: &str, hints: Value) -> Body {
    ("turn_ended", json!({"reason": reason, "message": format!("turn {reason}"), "hints": hints}))
}
pub(super) fn approval_requested(request_id: &str, tool: &str, input: Value) -> Body {
    ("approval_requested", json!({"requestId": request_id, "tool": tool, "input": input, "inputHash": "sha256:x", "idempotencyKey": "k", "reason": "writes need approval"}))
}
pub(super) fn approval_resolved(request_id: &str, note: &str, note_id: Option<&str>) -> Body {
    let mut payload = json!({"requestId": request_id, "approved": false, "decidedBy": "me", "note": note});
    if let Some(id) = note_id {
        payload["noteId"] = json!(id);
    }
    ("approval_resolved", payload)
}
pub(super) fn compaction_started(trigger: &str) -> Body {
    ("compaction_started", json!({"trigger": trigger, "estimatedTokens": 26000, "contextWindow": 32768}))
}
pub(super) fn compaction_failed(consecutive: u32, message: &str) -> Body {
    ("compaction_failed", json!({"trigger": "auto", "consecutive": consecutive, "message": message, "inputTokens": 0, "outputTokens": 0}))
}
pub(super) fn compact_boundary() -> Body {
    (
        "compact_boundary",
        json!({
            "trigger": "manual",
            "mode": "summarized",
            "summary": {
                "summary": "我们把三个步骤改短了，结尾加了行动号召。",
                "user_intent": "一篇适合公众号的写作计划",
                "accepted_changes": [{"proposal_id": "prp_1", "version": 2}],
                "rejected_directions": [{"direction": "用“最佳”这类词", "reason": "绝对化用语"}],
                "open_tasks": ["改标题"],
                "active_artifacts": [],
                "source_refs": [],
                "next_step_hint": "给标题三个候选"
            },
            "summaryText": "# Earlier conversation (summarised; the full log is kept)\n我们把三个步骤改短了。\n",
            "keptMessages": 2,
            "compactedMessages": 12,
            "pinnedInstructions": [],
            "tokensBefore": 26000,
            "tokensAfter": 3000,
            "note": "Earlier conversation summarised",
            "inputTokens": 2000,
            "outputTokens": 200
        }),
    )
}
pub(super) fn context_warning(percent: u32, compact_at: Option<u32>) -> Body {
    let mut payload = json!({"estimatedTokens": 23000, "contextWindow": 32768, "percent": percent});
    if let Some(at) = compact_at {
        payload["compactAtPercent"] = json!(at);
    }
    ("context_warning", payload)
}

pub(super) fn folded(from: Timeline, events: &[Event]) -> Timeline {
    let mut timeline = from;
    events.iter().for_each(|event| fold(&mut timeline, event));
    timeline
}

pub(super) fn kinds(timeline: &Timeline) -> Vec<String> {
    timeline.items.iter().map(|item| serde_json::to_value(item).unwrap()["kind"].as_str().unwrap().to_owned()).collect()
}

/// Item `at` as JSON (its wire shape, which the UI's `toMatchObject` read).
pub(super) fn item(timeline: &Timeline, at: usize) -> Value {
    serde_json::to_value(&timeline.items[at]).unwrap()
}

pub(super) fn last(timeline: &Timeline) -> Value {
    item(timeline, timeline.items.len() - 1)
}

/// `actual` holds every field of `expected` (the UI test's `toMatchObject`).
pub(super) fn matches(actual: &Value, expected: Value) {
    match (actual, &expected) {
        (Value::Object(actual), Value::Object(expected)) => {
            for (field, value) in expected {
                matches(actual.get(field).unwrap_or(&Value::Null), value.clone());
            }
        }
        (Value::Array(actual), Value::Array(expected)) if actual.len() == expected.len() => {
            actual.iter().zip(expected).for_each(|(a, e)| matches(a, e.clone()));
        }
        _ => assert_eq!(*actual, expected),
    }
}

pub(super) fn model_call_started() -> Body {
    ("model_call_started", json!({"modelTurn": 1, "messagesHash": "sha256:x", "messageCount": 2}))
}
pub(super) fn streamed(text: &str) -> Body {
    ("assistant_streamed", json!({"text": text}))
}
pub(super) fn delta(text: &str) -> Body {
    ("assistant_delta", json!({"text": text}))
}

/// What a reader of the live stream does with a patch: drop, put by key, append.
pub(super) fn read(reader: &mut Vec<TimelineItem>, patch: &TimelinePatch) {
    for key in &patch.removed {
        reader.retain(|item| item.key() != key);
    }
    for item in &patch.items {
        match reader.iter_mut().find(|held| held.key() == item.key()) {
            Some(slot) => *slot = item.clone(),
            None => reader.push(item.clone()),
        }
    }
    if let Some(TextAppend { key, text, reasoning: false }) = &patch.append {
        match reader.iter_mut().find(|held| held.key() == key) {
            Some(TimelineItem::Assistant { text: shown, .. }) => shown.push_str(text),
            _ => reader.push(TimelineItem::Assistant { key: key.clone(), changed_at: 0, text: text.clone(), streaming: true, interrupted: false, cut_off: false }),
        }
    }
}
