//! The live stream's side: the patch each event makes for a reader that holds the
//! fold, and the text deltas of the answer streaming now.

use serde::{Deserialize, Serialize};

use super::super::event::{Event, EventBody};
use super::items::{Timeline, TimelineItem, TimelineState};

/// Text for the item `key`: a live delta of the answer streaming now (or of its
/// reasoning, which no item keeps).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextAppend {
    pub key: String,
    pub text: String,
    pub reasoning: bool,
}

/// What one event changed, for a reader of the live stream (`StreamEvent::Timeline`):
/// the items to put (insert, or replace by key), the keys of items to drop, the text
/// to append to the streaming item, and the state after the event. A reader that puts,
/// drops and appends in order holds the fold of the log plus the text streaming now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TimelinePatch {
    /// The sequence of the logged event (0 for a live delta).
    pub sequence: u64,
    pub items: Vec<TimelineItem>,
    /// Items the reader made from deltas that the logged answer does not keep (an answer
    /// that turned out to be only tool calls).
    pub removed: Vec<String>,
    pub append: Option<TextAppend>,
    /// The state after a logged event (none for a delta).
    pub state: Option<TimelineState>,
}

/// One live stream's side of the timeline: the streaming items it sent deltas for, so
/// a logged checkpoint of text the reader already has is not sent back shorter, and an
/// item the reader made from deltas and the answer does not keep is dropped.
#[derive(Debug, Default)]
pub struct LiveFeed {
    appended: Vec<String>,
}

impl LiveFeed {
    /// The patch `event` makes, given `timeline` already folded with it (the harness
    /// folds an event as it logs it, before sending it). None for events that change
    /// nothing a reader holds.
    pub fn patch(&mut self, timeline: &Timeline, event: &Event) -> Option<TimelinePatch> {
        if event.sequence == 0 {
            let (text, reasoning) = match &event.body {
                EventBody::AssistantDelta { text } => (text, false),
                EventBody::ReasoningDelta { text } => (text, true),
                _ => return None,
            };
            let key = timeline.state.streaming_key.clone()?;
            if !reasoning && !self.appended.contains(&key) {
                self.appended.push(key.clone());
            }
            return Some(TimelinePatch { sequence: 0, items: Vec::new(), removed: Vec::new(), append: Some(TextAppend { key, text: text.clone(), reasoning }), state: None });
        }
        let checkpoint = matches!(event.body, EventBody::AssistantStreamed { .. });
        let items: Vec<TimelineItem> =
            timeline.items.iter().filter(|item| item.changed_at() == event.sequence && !(checkpoint && self.appended.iter().any(|key| key == item.key()))).cloned().collect();
        let mut removed = Vec::new();
        if timeline.state.streaming_key.is_none() {
            for key in self.appended.drain(..) {
                if !timeline.items.iter().rev().any(|item| item.key() == key) {
                    removed.push(key);
                }
            }
        }
        Some(TimelinePatch { sequence: event.sequence, items, removed, append: None, state: Some(timeline.state.clone()) })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::super::fixtures::*;
    use super::super::{fold, fold_all};
    use super::*;

    #[test]
    fn the_answer_streaming_is_one_item_that_the_logged_answer_replaces() {
        let mut ev = Script::default();
        let head = [ev.ev(created()), ev.ev(user("写一句")), ev.ev(turn_started()), ev.ev(model_call_started())];
        let mut s = fold_all(&head);
        assert_eq!(s.state.streaming_key.as_deref(), Some("4"));
        assert_eq!(kinds(&s), ["user"], "nothing is drawn before text arrives");
        s = folded(s, &[ev.ev(streamed("山上")), ev.ev(streamed("的春茶"))]);
        matches(&last(&s), json!({"kind": "assistant", "key": "4", "text": "山上的春茶", "streaming": true, "changedAt": 6}));
        assert_eq!(s.items.len(), 2);
        s = folded(s, &[ev.ev(assistant("山上的春茶。", vec![], false)), ev.ev(turn_ended("completed", json!([])))]);
        assert_eq!(s.items.len(), 2);
        matches(&last(&s), json!({"kind": "assistant", "key": "4", "text": "山上的春茶。", "streaming": false, "changedAt": 7}));
        assert_eq!(s.state.streaming_key, None);
        // An answer of tool calls only makes no answer item; a log that ends mid-stream
        // (the process stopped) keeps what streamed, as stopped.
        let mut ev = Script::default();
        let tools = fold_all(&[
            ev.ev(created()),
            ev.ev(user("读")),
            ev.ev(turn_started()),
            ev.ev(model_call_started()),
            ev.ev(assistant("", vec![call_with("c1", "read_versions", json!({}))], false)),
        ]);
        assert_eq!(kinds(&tools), ["user", "tool"]);
        let mut ev = Script::default();
        let cut = fold_all(&[
            ev.ev(created()),
            ev.ev(user("写")),
            ev.ev(turn_started()),
            ev.ev(model_call_started()),
            ev.ev(streamed("写到")),
            ev.ev(turn_ended("restarted", json!([]))),
        ]);
        matches(&item(&cut, 1), json!({"kind": "assistant", "text": "写到", "streaming": false, "interrupted": true}));
    }

    /// The live stream: each logged event is folded (as the harness does when it logs
    /// it) and then patched; deltas are only patched. A reader of the patches holds the
    /// fold of the log, and every delta of an answer updates that answer's one item.
    #[test]
    fn a_reader_of_the_live_patches_holds_the_fold_and_each_delta_updates_one_item() {
        let mut ev = Script::default();
        let stream: Vec<Event> = vec![
            ev.ev(created()),
            ev.ev(user("写两句")),
            ev.ev(turn_started()),
            ev.ev(model_call_started()),
            live(delta("山上")),
            live(delta("的")),
            ev.ev(streamed("山上的")),
            live(delta("春茶")),
            ev.ev(assistant("山上的春茶", vec![call_with("c1", "read_versions", json!({}))], false)),
            ev.ev_tool(tool_result("read_versions", "{}", "success"), "c1"),
            ev.ev(model_call_started()),
            // Whitespace that turns out to be an answer of tool calls only.
            live(delta(" ")),
            ev.ev(assistant(" ", vec![call_with("c2", "read_versions", json!({}))], false)),
            ev.ev_tool(tool_result("read_versions", "{}", "success"), "c2"),
            ev.ev(model_call_started()),
            live(delta("好了")),
            ev.ev(assistant("好了", vec![], false)),
            ev.ev(turn_ended("completed", json!([]))),
        ];
        let mut harness = Timeline::default();
        let mut feed = LiveFeed::default();
        let mut reader: Vec<TimelineItem> = Vec::new();
        let mut appended_to: Vec<String> = Vec::new();
        for (at, event) in stream.iter().enumerate() {
            fold(&mut harness, event);
            let patch = feed.patch(&harness, event).unwrap();
            if let Some(append) = &patch.append {
                appended_to.push(append.key.clone());
            }
            read(&mut reader, &patch);
            if at == 7 {
                // Mid-stream the reader has every delta (more than the log's checkpoint).
                matches(&serde_json::to_value(reader.last().unwrap()).unwrap(), json!({"kind": "assistant", "key": "4", "text": "山上的春茶", "streaming": true}));
            }
        }
        assert_eq!(appended_to, ["4", "4", "4", "8", "11"], "the deltas of one answer go to one item");
        assert_eq!(reader, fold_all(&stream).items);
        assert_eq!(kinds(&fold_all(&stream)), ["user", "assistant", "tool", "tool", "assistant"]);
    }
}
