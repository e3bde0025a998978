#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

fn event(sequence: u64, body: EventBody) -> Event {
    let (_, model_visible) = body.policy();
    Event {
        event_id: format!("evt_{sequence}"),
        sequence,
        session_id: Some("ses_1".to_owned()),
        run_id: None,
        project_id: None,
        workspace_id: None,
        turn_id: None,
        parent_event_id: None,
        tool_use_id: None,
        context_snapshot_id: None,
        proposal_id: None,
        artifact_id: None,
        created_at: chrono::DateTime::UNIX_EPOCH,
        model_visible,
        body,
    }
}

#[test]
fn the_kept_hash_and_tokens_of_the_messages_are_those_of_the_whole_conversation_after_every_event() {
    use super::super::compaction::CompactionTrigger;
    let user = |n: u64| EventBody::UserMessage { text: format!("第 {n} 条 message"), was_queued: false, selection: None };
    let answer = |n: u64| EventBody::AssistantMessage {
        text: format!("答复 {n}"),
        tool_calls: Vec::new(),
        finish_reason: "stop".to_owned(),
        interrupted: false,
        input_tokens: 1,
        output_tokens: 1,
    };
    let boundary = EventBody::CompactBoundary {
        trigger: CompactionTrigger::Auto,
        mode: CompactionMode::Truncated,
        summary: None,
        summary_text: "摘要".to_owned(),
        kept_messages: 1,
        compacted_messages: 3,
        pinned_instructions: Vec::new(),
        tokens_before: 10,
        tokens_after: 2,
        note: "truncated".to_owned(),
        input_tokens: 0,
        output_tokens: 0,
        sources: None,
    };
    let step = EventBody::RunStage { stage: "source".to_owned(), state: STEP_STARTED.to_owned(), message: String::new() };
    let bodies = vec![
        EventBody::SessionCreated { project_id: "prj_1".to_owned(), profile: "llm_1".to_owned(), mode: Mode::Default },
        user(1),
        answer(1),
        user(2),
        answer(2),
        boundary,
        user(3),
        EventBody::Rewound { checkpoint_id: "chk_1".to_owned(), to_sequence: 1, version: 4 },
        step,
        user(4),
        answer(4),
    ];
    let mut state = SessionState::default();
    for (sequence, body) in bodies.into_iter().enumerate() {
        state.apply(&event(sequence as u64 + 1, body));
        // Kept, not worked out again: the fallback would hide a digest left behind.
        let kept = state.digest.of(&state.messages).expect("the digest follows the messages");
        assert_eq!(kept, (messages_hash(&state.messages), crate::llm::estimate_messages_tokens(&state.messages)), "after event {}", sequence + 1);
    }
    assert_eq!(state.messages.len(), 2, "the run's step started the conversation again");
}

#[test]
fn a_rewind_tells_the_model_and_replays_from_its_stored_form() {
    let log = [
        event(1, EventBody::SessionCreated { project_id: "prj_1".to_owned(), profile: "llm_1".to_owned(), mode: Mode::Default }),
        event(2, EventBody::UserMessage { text: "改短一点".to_owned(), was_queued: false, selection: None }),
        event(3, EventBody::Rewound { checkpoint_id: "chk_1".to_owned(), to_sequence: 1, version: 4 }),
    ];
    assert!(log[2].model_visible, "the model must learn the project was restored");
    // The event as the log stores it: the JSON shape is the one replayed.
    let stored: Vec<Event> = log.iter().map(|e| serde_json::from_str(&serde_json::to_string(e).unwrap()).unwrap()).collect();
    let json = serde_json::to_value(&log[2]).unwrap();
    assert_eq!(json["kind"], "rewound");
    assert_eq!(json["payload"], serde_json::json!({"checkpointId": "chk_1", "toSequence": 1, "version": 4}));
    let replayed = replay(stored.iter());
    let messages = replayed.messages();
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[1], Message::user(rewound_note("chk_1", 1, 4)));
    assert!(messages[1].content.contains("chk_1") && messages[1].content.contains("version 4"));
    let item = replayed.lines().last().unwrap();
    assert_eq!((item.sequence, item.kind.as_str()), (3, "rewound"));
    // Replay is the live fold: folding the events one by one gives the same state.
    let mut live = SessionState::default();
    log.iter().for_each(|e| live.apply(e));
    assert_eq!(live, replayed.state);
    assert_eq!(live.last_sequence, 3);
    assert!(live.queued.is_empty() && live.open_turn.is_none());
}

/// What the engine says happened is an id and values on the wire (the English
/// stays beside it); the person's and the model's words have no id.
#[test]
fn the_engine_s_timeline_lines_are_ids_with_values() {
    let log = [
        event(1, EventBody::SessionCreated { project_id: "prj_1".to_owned(), profile: "llm_1".to_owned(), mode: Mode::Default }),
        event(2, EventBody::UserMessage { text: "改短一点".to_owned(), was_queued: false, selection: None }),
        event(3, EventBody::ModeChanged { mode: Mode::Plan, by: "user".to_owned() }),
        event(
            4,
            EventBody::ToolResult { tool: "read_project".to_owned(), status: ToolStatus::PermissionDenied, content: "{}".to_owned(), result_ref: None, reused_execution: false },
        ),
        event(5, EventBody::TurnEnded { reason: TurnEndReason::Completed, message: String::new(), hints: Vec::new() }),
        event(6, EventBody::SessionArchived {}),
        event(7, EventBody::SessionUnarchived {}),
    ];
    let replayed = replay(log.iter());
    type Line<'a> = (Option<&'a str>, Vec<(&'a str, &'a str)>);
    let lines: Vec<Line<'_>> = replayed.lines().iter().map(|i| (i.text_id.as_deref(), i.params.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect())).collect();
    assert_eq!(
        lines,
        [
            (Some("session_started"), vec![]),
            (None, vec![]),
            (Some("mode"), vec![("mode", "plan")]),
            (Some("tool_result"), vec![("status", "permission_denied"), ("tool", "read_project")]),
            (Some("turn_ended"), vec![("reason", "completed")]),
            (Some("archived"), vec![]),
            (Some("unarchived"), vec![]),
        ]
    );
    assert_eq!(replayed.lines()[1].text, "改短一点");
    let json = serde_json::to_value(&replayed.lines()[3]).unwrap();
    assert_eq!(json["textId"], "tool_result");
    assert_eq!(json["params"]["status"], "permission_denied");
    assert!(replayed.lines()[1].params.is_empty() && serde_json::to_value(&replayed.lines()[1]).unwrap().get("textId").is_none());
}
