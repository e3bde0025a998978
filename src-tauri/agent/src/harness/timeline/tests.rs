//! The fold's cases: a whole session, and the cases of the panel's former TypeScript
//! tests (the same inputs, the same expected items).

use serde_json::json;

use super::super::event::{Mode, Selection, ToolStatus};
use super::fixtures::*;
use super::fold::parse_task;
use super::*;

#[test]
fn a_session_folds_into_its_timeline_steps_prompts_interrupts_and_compactions() {
    let log = session_log();
    let timeline = fold_all(&log.0);
    let expected: Vec<(String, String, String)> = [
        ("user", "2", "把开头改短|第一段。|false|false"),
        ("assistant", "4", "我先读一下。|false|false"),
        ("tool", "4:c1", "read_project_context|Done|prp_1"),
        ("tool", "4:c2", "apply_proposal|Denied|"),
        ("decision", "9", "apply_proposal|false|先别改"),
        ("user", "12", "继续||true|false"),
        ("assistant", "14", "写到一半|true|false"),
        ("compactionFailed", "17", "1|Failed"),
        ("compactionFailed", "19", "1|Stopped"),
        ("boundary", "20", "Truncated|6"),
        ("user", "21", "再试|一|false|false"),
        ("assistant", "23", "断了|true|true"),
        ("end", "24", "ModelError|true|再试"),
        ("user", "25", "再试|一|false|true"),
    ]
    .iter()
    .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
    .collect();
    assert_eq!(shape(&timeline), expected);
    assert_eq!(timeline.state.last_sequence, 25);
    assert_eq!(timeline.state.proposal_ids, ["prp_1"]);
    assert!(timeline.state.pending_approval.is_none() && timeline.state.queued.is_empty() && !timeline.state.turn_open);
    assert!(timeline.state.truncated);
    // The boundary after the failures starts the count again.
    assert_eq!((timeline.state.compaction_failures, timeline.state.compacting), (0, None));
    assert_eq!(timeline.state.input_tokens, 300);
    assert_eq!(timeline.state.long_session_seq, 20);
}

#[test]
fn a_prompt_waits_until_decided_and_a_blocked_turn_keeps_its_waiting_step() {
    let log = session_log();
    let at_block = fold_all(&log.0[..8]);
    assert_eq!(at_block.state.pending_approval.as_ref().map(|p| (p.request_id.as_str(), p.tool_use_id.as_str(), p.reason_id.as_deref())), Some(("req_1", "c2", Some("write"))));
    assert!(matches!(at_block.items.last(), Some(TimelineItem::Tool { state: StepState::Waiting, .. })));
    // A live-only event changes nothing.
    let mut live = at_block.clone();
    let mut delta = log.0[3].clone();
    delta.sequence = 0;
    fold(&mut live, &delta);
    assert_eq!(live, at_block);
}

/// A reader holding the fold up to any sequence `n` that replaces the items changed
/// since `n` by key (appending new keys) holds the whole fold: what `session.timeline`
/// with `since` promises the live panel.
#[test]
fn the_items_changed_since_any_sequence_bring_a_reader_to_the_whole_fold() {
    let log = session_log();
    let whole = fold_all(&log.0);
    for n in 0..=log.0.len() {
        let mut held = fold_all(&log.0[..n]);
        for item in whole.changed_since(n as u64) {
            match held.items.iter_mut().find(|i| i.key() == item.key()) {
                Some(slot) => *slot = item.clone(),
                None => held.items.push(item.clone()),
            }
        }
        assert_eq!(held.items, whole.items, "caught up from sequence {n}");
    }
}

#[test]
fn step_states_and_proposal_ids_in_results() {
    assert_eq!(step_state(ToolStatus::Success), StepState::Done);
    assert_eq!(step_state(ToolStatus::Interrupted), StepState::Cancelled);
    assert_eq!(step_state(ToolStatus::Denied), StepState::Denied);
    assert_eq!(step_state(ToolStatus::PermissionDenied), StepState::Blocked);
    assert_eq!(step_state(ToolStatus::Timeout), StepState::Failed);
    assert_eq!(
        proposal_ids_in(r#"{"proposalId": "prp_1", "proposal": {"id": "prp_2"}, "proposals": [{"id": "prp_3"}, "prp_4"], "proposalIds": ["prp_1", "x"]}"#),
        ["prp_1", "prp_2", "prp_3", "prp_4"]
    );
    assert!(proposal_ids_in("not json").is_empty());
    assert_eq!(parse_task("任务\n\n<selection from=\"3\" to=\"9\">\n第一段。\n</selection>"), ("任务".to_owned(), Some(Selection { from: 3, to: 9, text: "第一段。".into() })));
    assert_eq!(parse_task("no block").1, None);
}

// ---- The cases of the UI's former timeline.test.ts: the same inputs (its fixtures,
// ---- `ui/src/shared/testing/fixtures.ts`), the same expected items.

#[test]
fn shows_a_message_s_typed_selection_as_its_scope_and_the_text_as_the_task() {
    let mut ev = Script::default();
    let selection = json!({"from": 3, "to": 9, "text": "第一段。"});
    let s = fold_all(&[ev.ev(created()), ev.ev(user_with("把开头改短", selection.clone()))]);
    matches(&item(&s, 0), json!({"kind": "user", "text": "把开头改短", "selection": selection}));
}

#[test]
fn shows_messages_and_one_step_per_tool_call_through_its_states() {
    let mut ev = Script::default();
    let events = [
        ev.ev(created()),
        ev.ev(user("把开头改短\n\n<selection from=\"3\" to=\"9\">\n第一段。\n</selection>")),
        ev.ev(turn_started()),
        ev.ev(assistant("我先读一下。", vec![call_with("c1", "read_project_context", json!({})), call_with("c2", "propose_source_patch", json!({"summary": "改短"}))], false)),
        ev.ev_tool(("tool_decision", json!({"tool": "read_project_context", "decision": "allow", "reason": ""})), "c1"),
    ];
    let mut s = fold_all(&events);
    assert!(s.state.turn_open);
    assert_eq!(kinds(&s), ["user", "assistant", "tool", "tool"]);
    matches(&item(&s, 0), json!({"text": "把开头改短", "selection": {"from": 3, "to": 9, "text": "第一段。"}}));
    let states = |s: &Timeline| {
        s.items.iter().filter_map(|i| if let TimelineItem::Tool { state, proposal_ids, .. } = i { Some((*state, proposal_ids.clone())) } else { None }).collect::<Vec<_>>()
    };
    assert_eq!(states(&s).iter().map(|x| x.0).collect::<Vec<_>>(), [StepState::Running, StepState::Queued]);
    s = folded(
        s,
        &[
            ev.ev_tool(tool_result("read_project_context", "{}", "success"), "c1"),
            ev.ev_tool(tool_result("propose_source_patch", &json!({"proposalId": "prp_9", "hunks": 2}).to_string(), "success"), "c2"),
        ],
    );
    assert_eq!(states(&s), [(StepState::Done, vec![]), (StepState::Done, vec!["prp_9".to_owned()])]);
    assert_eq!(s.state.proposal_ids, ["prp_9"]);
    s = folded(s, &[ev.ev(assistant("好了。", vec![], false)), ev.ev(turn_ended("completed", json!([])))]);
    assert!(!s.state.turn_open);
    // A completed turn adds no line of its own.
    matches(&last(&s), json!({"kind": "assistant", "text": "好了。"}));
    assert_eq!(s.state.input_tokens, 200);
    assert_eq!(s.state.last_sequence, 9);
}

#[test]
fn a_prompt_waits_for_the_person_until_decided_and_a_denial_is_not_a_failure() {
    let mut ev = Script::default();
    let mut s = fold_all(&[
        ev.ev(created()),
        ev.ev(user("直接改吧")),
        ev.ev(turn_started()),
        ev.ev(assistant("", vec![call_with("c1", "apply_proposal", json!({"proposalId": "prp_1"}))], false)),
        ev.ev_tool(approval_requested("req_1", "apply_proposal", json!({"proposalId": "prp_1"})), "c1"),
        ev.ev(turn_ended("blocked_on_approval", json!([]))),
    ]);
    matches(&serde_json::to_value(&s.state.pending_approval).unwrap(), json!({"requestId": "req_1", "tool": "apply_proposal", "toolUseId": "c1"}));
    matches(&last(&s), json!({"kind": "tool", "state": "waiting"}));
    s = folded(s, &[ev.ev_tool(approval_resolved("req_1", "先别改", None), "c1"), ev.ev_tool(tool_result("apply_proposal", "denied: 先别改", "denied"), "c1")]);
    assert!(s.state.pending_approval.is_none());
    let find = |s: &Timeline, kind: &str| s.items.iter().map(|i| serde_json::to_value(i).unwrap()).find(|v| v["kind"] == kind).unwrap();
    matches(&find(&s, "decision"), json!({"approved": false, "note": "先别改", "noteId": null, "tool": "apply_proposal", "plan": false}));
    matches(&find(&s, "tool"), json!({"state": "denied", "status": "denied"}));
    // Plan mode's or a rule's refusal is blocked; only a real error fails.
    assert_eq!(
        [step_state(ToolStatus::Blocked), step_state(ToolStatus::PermissionDenied), step_state(ToolStatus::ToolError), step_state(ToolStatus::Success)],
        [StepState::Blocked, StepState::Blocked, StepState::Failed, StepState::Done]
    );
    // A note the core words (a new message superseded the approval) keeps its id.
    s = folded(s, &[ev.ev(approval_resolved("req_2", "Superseded by a new message.", Some("superseded_by_new_message")))]);
    matches(&last(&s), json!({"kind": "decision", "noteId": "superseded_by_new_message"}));
}

#[test]
fn queued_messages_wait_below_the_turn_and_join_the_history_when_delivered() {
    let mut ev = Script::default();
    let mut s = fold_all(&[ev.ev(created()), ev.ev(user("一")), ev.ev(turn_started()), ev.ev(("message_queued", json!({"text": "二"})))]);
    assert_eq!(s.state.queued, ["二"]);
    s = folded(s, &[ev.ev(assistant("好", vec![], false)), ev.ev(queued_user("二"))]);
    assert!(s.state.queued.is_empty());
    matches(&last(&s), json!({"kind": "user", "text": "二", "wasQueued": true}));
}

#[test]
fn an_interrupted_turn_cancels_the_steps_still_running_and_says_so_once() {
    let mut ev = Script::default();
    let s = fold_all(&[
        ev.ev(created()),
        ev.ev(user("改")),
        ev.ev(turn_started()),
        ev.ev(assistant("", vec![call_with("c1", "read_versions", json!({}))], false)),
        ev.ev(turn_ended("interrupted", json!([]))),
    ]);
    let shape: Vec<(String, String)> =
        s.items.iter().map(|i| serde_json::to_value(i).unwrap()).map(|v| (v["kind"].as_str().unwrap().to_owned(), v["state"].as_str().unwrap_or("").to_owned())).collect();
    assert_eq!(shape, [("user".to_owned(), String::new()), ("tool".to_owned(), "cancelled".to_owned()), ("end".to_owned(), String::new())]);
    // A reply cut short already says it stopped: no second line.
    let mut ev = Script::default();
    let t = fold_all(&[ev.ev(created()), ev.ev(user("写")), ev.ev(turn_started()), ev.ev(assistant("写到一半", vec![], true)), ev.ev(turn_ended("interrupted", json!([])))]);
    assert_eq!(kinds(&t), ["user", "assistant"]);
}

#[test]
fn an_error_end_keeps_its_hints_for_the_person_and_the_task_to_send_again() {
    let mut ev = Script::default();
    let s = fold_all(&[ev.ev(created()), ev.ev(user("改")), ev.ev(turn_started()), ev.ev(turn_ended("model_error", json!([{"id": "retry_connection", "message": "Try again."}])))]);
    matches(&last(&s), json!({"kind": "end", "reason": "model_error", "hints": [{"id": "retry_connection"}], "cutOff": false, "retry": {"text": "改", "selection": null}}));
    // Other ends offer no retry.
    let mut ev = Script::default();
    let t = fold_all(&[ev.ev(created()), ev.ev(user("改")), ev.ev(turn_started()), ev.ev(turn_ended("max_model_turns", json!([])))]);
    matches(&last(&t), json!({"kind": "end", "retry": null}));
}

#[test]
fn pins_too_long_end_the_turn_with_what_to_unpin_and_the_pin_list_reads_its_budget_again() {
    let mut ev = Script::default();
    let before = fold_all(&[ev.ev(created()), ev.ev(user("继续")), ev.ev(turn_started())]);
    let mut other_ev = Script { sequence: ev.sequence };
    let s = folded(
        before.clone(),
        &[ev.ev(turn_ended("pins_too_long", json!([{"id": "unpin", "message": "Unpin something."}, {"id": "larger_context", "message": "Or a larger window."}])))],
    );
    matches(&last(&s), json!({"kind": "end", "reason": "pins_too_long", "hints": [{"id": "unpin"}, {"id": "larger_context"}], "retry": null}));
    assert!(s.state.long_session_seq > before.state.long_session_seq);
    let other = folded(before.clone(), &[other_ev.ev(turn_ended("context_too_long", json!([])))]);
    assert_eq!(other.state.long_session_seq, before.state.long_session_seq);
}

#[test]
fn an_answer_a_failed_call_cut_off_is_kept_and_marked_so_unlike_one_the_person_stopped() {
    let selection = json!({"from": 3, "to": 9, "text": "第一段。"});
    let mut ev = Script::default();
    let s = fold_all(&[
        ev.ev(created()),
        ev.ev(user_with("把开头改短", selection.clone())),
        ev.ev(turn_started()),
        ev.ev(cut_off("写到一半")),
        ev.ev(turn_ended("model_error", json!([{"id": "connection_lost", "message": "The text that arrived is kept."}]))),
    ]);
    assert_eq!(kinds(&s), ["user", "assistant", "end"]);
    matches(&item(&s, 1), json!({"kind": "assistant", "text": "写到一半", "interrupted": true, "cutOff": true}));
    matches(&item(&s, 2), json!({"kind": "end", "reason": "model_error", "cutOff": true, "retry": {"text": "把开头改短", "selection": selection}}));
    // Cut off by an error the provider sent (no lost connection): its own end line.
    let mut ev = Script::default();
    let provider = fold_all(&[
        ev.ev(created()),
        ev.ev(user("写")),
        ev.ev(turn_started()),
        ev.ev(cut_off("写到一半")),
        ev.ev(turn_ended("model_error", json!([{"id": "wait_and_retry", "message": "Wait a moment and try again."}]))),
    ]);
    matches(&item(&provider, 1), json!({"kind": "assistant", "cutOff": true}));
    matches(&item(&provider, 2), json!({"kind": "end", "cutOff": false, "retry": {"text": "写"}}));
    let mut ev = Script::default();
    let stopped = fold_all(&[ev.ev(created()), ev.ev(user("写")), ev.ev(turn_started()), ev.ev(assistant("写到一半", vec![], true)), ev.ev(turn_ended("interrupted", json!([])))]);
    matches(&item(&stopped, 1), json!({"kind": "assistant", "interrupted": true, "cutOff": false}));
}

#[test]
fn live_only_events_and_duplicates_leave_the_state_alone_and_mode_context_and_rewinds_are_tracked() {
    let mut ev = Script::default();
    let mut s = fold_all(&[ev.ev(created()), ev.ev(("mode_changed", json!({"mode": "plan", "by": "user"})))]);
    assert_eq!(s.state.mode, Mode::Plan);
    let same = folded(s.clone(), &[live(("assistant_delta", json!({"text": "流"})))]);
    assert_eq!(same, s);
    s = folded(s, &[ev.ev(("context_assembled", json!({"snapshotId": "ctx_1", "estimatedTokens": 1200, "layers": [{"layer": "pinned", "tokens": 800, "trimmed": false}]})))]);
    assert_eq!(s.state.context.as_ref().map(|c| c.estimated_tokens), Some(1200));
    s = folded(s, &[ev.ev(("rewound", json!({"checkpointId": "chk_1", "toSequence": 1, "version": 4})))]);
    matches(&last(&s), json!({"kind": "rewound", "version": 4}));
}

#[test]
fn finds_proposal_ids_in_a_tool_s_result() {
    assert_eq!(proposal_ids_in(&json!({"proposalId": "prp_1"}).to_string()), ["prp_1"]);
    assert_eq!(proposal_ids_in(&json!({"proposals": [{"id": "prp_2"}, "prp_3"], "proposalIds": ["prp_2"]}).to_string()), ["prp_2", "prp_3"]);
    assert!(proposal_ids_in("not json").is_empty());
    assert!(proposal_ids_in(&json!({"proposalId": "ver_1"}).to_string()).is_empty());
    let mut ev = Script::default();
    assert!(fold_all(&[ev.ev(created())]).items.is_empty());
}

#[test]
fn a_compaction_runs_between_its_start_and_its_boundary_and_a_warning_is_a_line() {
    let mut ev = Script::default();
    let mut s = fold_all(&[ev.ev(created()), ev.ev(user("改")), ev.ev(turn_started()), ev.ev(context_warning(72, Some(80))), ev.ev(compaction_started("auto"))]);
    matches(&serde_json::to_value(s.state.compacting).unwrap(), json!({"trigger": "auto", "contextWindow": 32768}));
    matches(&last(&s), json!({"kind": "contextWarning", "percent": 72, "compactAt": 80}));
    s = folded(s, &[ev.ev(compact_boundary())]);
    assert!(s.state.compacting.is_none());
    matches(&last(&s), json!({"kind": "boundary", "compacted": 12, "summary": {"next_step_hint": "给标题三个候选"}}));
    let warned = folded(s, &[ev.ev(context_warning(75, None))]);
    matches(&last(&warned), json!({"kind": "contextWarning", "compactAt": null}));
}

#[test]
fn a_compaction_the_person_or_the_app_stopped_is_not_a_failure_and_a_failure_counts() {
    let mut ev = Script::default();
    let mut s = fold_all(&[ev.ev(created()), ev.ev(compaction_started("manual")), ev.ev(compaction_failed(0, "Stopped by the user; nothing was replaced."))]);
    assert!(s.state.compacting.is_none());
    matches(&last(&s), json!({"kind": "compactionFailed", "outcome": "stopped"}));
    s = folded(s, &[ev.ev(compaction_started("auto")), ev.ev(compaction_failed(1, "The model's summary broke the schema."))]);
    matches(&last(&s), json!({"kind": "compactionFailed", "outcome": "failed", "consecutive": 1}));
    s = folded(s, &[ev.ev(compaction_started("auto")), ev.ev(compaction_failed(1, "The app stopped during this compaction; nothing was replaced."))]);
    matches(&last(&s), json!({"kind": "compactionFailed", "outcome": "interrupted"}));
    // A turn end closes a compaction the log left open.
    let closed = folded(s, &[ev.ev(compaction_started("auto")), ev.ev(turn_ended("interrupted", json!([])))]);
    assert!(closed.state.compacting.is_none());
}

#[test]
fn the_same_task_sent_again_right_after_a_failed_turn_is_that_turn_s_retry_and_an_api_key_problem_is_named() {
    let mut ev = Script::default();
    let s = fold_all(&[
        ev.ev(created()),
        ev.ev(user("写一句")),
        ev.ev(turn_started()),
        ev.ev(turn_ended("model_error", json!([{"id": "check_api_key", "message": "Check the API key of this profile; set it again if it changed."}]))),
        ev.ev(user("写一句")),
    ]);
    assert_eq!(kinds(&s), ["user", "end", "user"]);
    matches(&item(&s, 1), json!({"kind": "end", "keyProblem": "rejected"}));
    matches(&item(&s, 0), json!({"retry": false}));
    matches(&item(&s, 2), json!({"retry": true}));
    // Another task after a failure is not a retry.
    let mut ev = Script::default();
    let other = fold_all(&[ev.ev(created()), ev.ev(user("一")), ev.ev(turn_started()), ev.ev(turn_ended("model_error", json!([]))), ev.ev(user("二"))]);
    matches(&last(&other), json!({"retry": false}));
    matches(&item(&other, 1), json!({"keyProblem": null}));
}

#[test]
fn a_key_that_was_never_set_and_a_key_gone_from_the_keychain_are_told_apart() {
    let end = |hint: &str| {
        let mut ev = Script::default();
        let s = fold_all(&[
            ev.ev(created()),
            ev.ev(user("写一句")),
            ev.ev(turn_started()),
            ev.ev(turn_ended("model_error", json!([{"id": hint, "message": "…"}, {"id": "use_env_key", "message": "…"}]))),
        ]);
        item(&s, 1)
    };
    matches(&end("set_api_key"), json!({"kind": "end", "keyProblem": "missing"}));
    matches(&end("set_api_key_again"), json!({"kind": "end", "keyProblem": "gone"}));
}

/// Replay keeps the panel's timeline in the session state: the one fold, the same
/// whether the log is replayed or applied an event at a time as the live loop does.
#[test]
fn the_session_state_holds_the_timeline_fold_live_and_replayed() {
    let log = session_log();
    let replayed = super::super::replay::replay(log.0.iter());
    assert_eq!(*replayed.timeline(), fold_all(&log.0));
    let mut live = super::super::replay::SessionState::default();
    log.0.iter().for_each(|event| live.apply(event));
    assert_eq!(live.timeline, fold_all(&log.0));
}
