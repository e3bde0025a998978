//! The wire JSON of the session's stored records (projects, versions, checkpoints,
//! events, compaction, intent, growth runs), written out against their twins.

use std::collections::BTreeMap;

use serde_json::json;

use crate::context::Selection;
use crate::harness;
use crate::harness::compaction;
use crate::model::{self, Anchor, DraftContent, Platform, Post, ProvenanceSource};
use crate::proposals::{checkpoints, ProposalKind, Target};

use super::tests::{approval_change, at};

/// The wire JSON of stored records, written out here rather than taken from the
/// records' own serde: a `#[serde(rename = "…")]` (or any re-encoding) on a stored
/// field changes what the store holds but not one line below, and a change to a
/// wire twin fails here, not in the store's round trips.
///
/// Projects and versions.
#[test]
fn the_wire_json_of_projects_and_versions_is_their_twins() {
    let project = model::Project {
        id: "prj_1".into(),
        title: "Title".into(),
        source: "Source".into(),
        revision: 3,
        head: 2,
        platforms: vec![Platform::X, Platform::Wechat],
        brand_profile_id: None,
        template_id: Some("tpl_1".into()),
        archived: false,
        created_at: at(),
        updated_at: at(),
    };
    assert_eq!(
        serde_json::to_value(super::Project::from(&project)).unwrap(),
        json!({
            "id": "prj_1", "title": "Title", "source": "Source", "revision": 3, "head": 2, "platforms": ["x", "wechat"],
            "brandProfileId": null, "templateId": "tpl_1", "archived": false,
            "createdAt": "2026-01-02T03:04:05Z", "updatedAt": "2026-01-02T03:04:05Z"
        })
    );
    assert_eq!(
        serde_json::to_value(super::ProjectSummary::from(&model::ProjectSummary::from(&project))).unwrap(),
        json!({
            "id": "prj_1", "title": "Title", "revision": 3, "head": 2, "platforms": ["x", "wechat"],
            "brandProfileId": null, "templateId": "tpl_1", "archived": false, "excerpt": "Source", "nChars": 6,
            "createdAt": "2026-01-02T03:04:05Z", "updatedAt": "2026-01-02T03:04:05Z"
        })
    );

    let version = model::Version {
        id: "ver_1".into(),
        project_id: "prj_1".into(),
        number: 2,
        title: "Title".into(),
        source: "Source".into(),
        author: "Ann".into(),
        message: Some("Accepted".into()),
        message_id: None,
        message_params: BTreeMap::new(),
        origin: model::VersionOrigin::AiProposal {
            proposal_id: "prp_1".into(),
            session_id: Some("ses_1".into()),
            run_id: None,
            model: "m".into(),
            profile_id: "p".into(),
            sources: vec![
                ProvenanceSource::Memory { memory_id: "mem_1".into(), text: "Short".into() },
                ProvenanceSource::Selection { span: Anchor { from: 1, to: 4 }, text: "our".into() },
            ],
        },
        content_hash: "sha256:00".into(),
        created_at: at(),
    };
    assert_eq!(
        serde_json::to_value(super::Version::from(&version)).unwrap(),
        json!({
            "id": "ver_1", "projectId": "prj_1", "number": 2, "title": "Title", "source": "Source", "author": "Ann", "message": "Accepted",
            "origin": {
                "type": "aiProposal", "proposalId": "prp_1", "sessionId": "ses_1", "model": "m", "profileId": "p",
                "sources": [
                    {"type": "memory", "memoryId": "mem_1", "text": "Short"},
                    {"type": "selection", "span": {"from": 1, "to": 4}, "text": "our"}
                ]
            },
            "contentHash": "sha256:00", "createdAt": "2026-01-02T03:04:05Z"
        })
    );
}

/// A checkpoint of a session, with the drafts it holds.
#[test]
fn the_wire_json_of_checkpoints_is_their_twins() {
    let draft = model::PlatformDraft {
        project_id: "prj_1".into(),
        platform: Platform::X,
        revision: 1,
        status: model::DraftStatus::Ready,
        profile_id: "x@1".into(),
        source_revision: 3,
        source_version: 2,
        title: "Title".into(),
        content: DraftContent::Thread { posts: vec![Post { text: "One".into(), weighted_length: 3 }] },
        hand_edited: true,
        updated_at: at(),
        updated_by: "Ann".into(),
    };
    let checkpoint = checkpoints::Checkpoint {
        id: "chk_1".into(),
        owner_id: "ses_1".into(),
        project_id: "prj_1".into(),
        label: "Before the turn".into(),
        label_id: Some("turn_before".into()),
        label_params: BTreeMap::from([("proposals".into(), "2".into())]),
        reason: checkpoints::CheckpointReason::BeforeTurn,
        head: 2,
        revision: 3,
        working_title: None,
        working_source: Some("Unsaved".into()),
        drafts: vec![draft],
        sequence: 7,
        created_at: at(),
    };
    assert_eq!(
        serde_json::to_value(super::Checkpoint::from(&checkpoint)).unwrap(),
        json!({
            "id": "chk_1", "ownerId": "ses_1", "projectId": "prj_1", "label": "Before the turn", "labelId": "turn_before",
            "labelParams": {"proposals": "2"}, "reason": "before_turn", "head": 2, "revision": 3, "workingSource": "Unsaved",
            "drafts": [{
                "projectId": "prj_1", "platform": "x", "revision": 1, "status": "ready", "profileId": "x@1", "sourceRevision": 3,
                "sourceVersion": 2, "title": "Title", "content": {"type": "thread", "posts": [{"text": "One", "weightedLength": 3}]},
                "handEdited": true, "updatedAt": "2026-01-02T03:04:05Z", "updatedBy": "Ann"
            }],
            "sequence": 7, "createdAt": "2026-01-02T03:04:05Z"
        })
    );
}

/// A harness event and an approval it asks for; proposal targets, kinds, modes and a
/// selection as parameters.
#[test]
fn the_wire_json_of_events_and_proposal_parameters_is_their_twins() {
    let event = harness::Event {
        event_id: "evt_1".into(),
        sequence: 4,
        session_id: Some("ses_1".into()),
        run_id: None,
        project_id: Some("prj_1".into()),
        workspace_id: Some("wsp_1".into()),
        turn_id: Some("trn_1".into()),
        parent_event_id: None,
        tool_use_id: Some("call_1".into()),
        context_snapshot_id: None,
        proposal_id: None,
        artifact_id: None,
        created_at: at(),
        model_visible: true,
        body: harness::EventBody::ToolResult {
            tool: "read_project".into(),
            status: harness::ToolStatus::SchemaViolation,
            content: "{}".into(),
            result_ref: None,
            reused_execution: false,
        },
    };
    assert_eq!(
        serde_json::to_value(super::Event::from(&event)).unwrap(),
        json!({
            "eventId": "evt_1", "sequence": 4, "sessionId": "ses_1", "projectId": "prj_1", "workspaceId": "wsp_1", "turnId": "trn_1",
            "toolUseId": "call_1", "createdAt": "2026-01-02T03:04:05Z", "modelVisible": true,
            "kind": "tool_result", "payload": {"tool": "read_project", "status": "schema_violation", "content": "{}", "reusedExecution": false}
        })
    );

    let (change, change_json) = approval_change();
    let asked = harness::EventBody::ApprovalRequested {
        request_id: "apr_1".into(),
        tool: "apply_proposal".into(),
        input: json!({"proposalId": "prp_1"}),
        input_hash: "sha256:11".into(),
        target_version: Some(2),
        idempotency_key: "idem_1".into(),
        reason: "It writes.".into(),
        reason_id: Some("write".into()),
        change: Some(Box::new(change.clone())),
        offer: None,
    };
    assert_eq!(
        serde_json::to_value(super::EventBody::from(&asked)).unwrap(),
        json!({
            "kind": "approval_requested",
            "payload": {
                "requestId": "apr_1", "tool": "apply_proposal", "input": {"proposalId": "prp_1"}, "inputHash": "sha256:11", "targetVersion": 2,
                "idempotencyKey": "idem_1", "reason": "It writes.", "reasonId": "write", "change": change_json
            }
        })
    );
    let targets = [Target::Draft { platform: Platform::X }, Target::Comment { comment_id: "cmt_1".into() }, Target::Metadata, Target::Session];
    assert_eq!(
        targets.iter().map(|target| serde_json::to_value(super::Target::from(target)).unwrap()).collect::<Vec<_>>(),
        vec![json!({"type": "draft", "platform": "x"}), json!({"type": "comment", "commentId": "cmt_1"}), json!({"type": "metadata"}), json!({"type": "session"})]
    );
    let kind: super::ProposalKind = serde_json::from_value(json!("comment_reply")).unwrap();
    assert_eq!(ProposalKind::from(kind), ProposalKind::CommentReply);
    assert_eq!(serde_json::to_value(super::Mode::from(crate::context::Mode::Plan)).unwrap(), json!("plan"));
    let selection: super::Selection = serde_json::from_value(json!({"from": 0, "to": 3, "text": "One"})).unwrap();
    assert_eq!(Selection::from(selection), Selection { from: 0, to: 3, text: "One".into() });
    assert!(serde_json::from_value::<super::Selection>(json!({"from": 0, "to": 3, "text": "One", "extra": 1})).is_err(), "a selection refuses unknown fields");
}

/// Compaction settings, summaries and pins, and the session intent.
#[test]
fn the_wire_json_of_compaction_and_intent_is_their_twins() {
    let settings = compaction::ProfileContext { profile_id: "p".into(), ratio: 1.25, samples: 3, threshold: Some(compaction::CompactThreshold::Auto { percent: 70 }), seed: None };
    assert_eq!(
        serde_json::to_value(super::ProfileContext::from(&settings)).unwrap(),
        json!({"profileId": "p", "ratio": 1.25, "samples": 3, "threshold": {"mode": "auto", "percent": 70}})
    );
    let summary = compaction::CompactionSummary {
        summary: "Short".into(),
        user_intent: "A post".into(),
        accepted_changes: vec![compaction::AcceptedChange { proposal_id: "prp_1".into(), version: Some(2) }],
        rejected_directions: vec![compaction::RejectedDirection { direction: "Longer".into(), reason: "Too long".into() }],
        open_tasks: vec!["Title".into()],
        active_artifacts: Vec::new(),
        source_refs: Vec::new(),
        next_step_hint: "Ask".into(),
    };
    assert_eq!(
        serde_json::to_value(super::CompactionSummary::from(&summary)).unwrap(),
        json!({
            "summary": "Short", "user_intent": "A post", "accepted_changes": [{"proposal_id": "prp_1", "version": 2}],
            "rejected_directions": [{"direction": "Longer", "reason": "Too long"}], "open_tasks": ["Title"], "active_artifacts": [],
            "source_refs": [], "next_step_hint": "Ask"
        })
    );
    let pin = compaction::Pin { id: "pin_1".into(), text: "Keep it short".into(), source: compaction::PinSource::Instruction };
    assert_eq!(serde_json::to_value(super::Pin::from(&pin)).unwrap(), json!({"id": "pin_1", "text": "Keep it short", "source": "instruction"}));

    let intent = crate::intent::SessionIntent {
        topic: Some("Tea".into()),
        output_type: Some(crate::intent::OutputType::TitleSet),
        platforms: vec![Platform::Wechat],
        length: Some(crate::intent::Length { value: 800, unit: crate::intent::LengthUnit::Characters }),
        ..Default::default()
    };
    assert_eq!(
        serde_json::to_value(super::SessionIntent::from(&intent)).unwrap(),
        json!({"topic": "Tea", "outputType": "title_set", "platforms": ["wechat"], "length": {"value": 800, "unit": "characters"}})
    );
    let clarification = crate::intent::Clarification { missing: vec![crate::intent::Missing::Subject], question: "About what?".into() };
    assert_eq!(serde_json::to_value(super::Clarification::from(&clarification)).unwrap(), json!({"missing": ["subject"], "question": "About what?"}));
}

/// A growth run and its platform-fit report.
#[test]
fn the_wire_json_of_growth_runs_is_their_twins() {
    let fit = crate::growth::fit::FitReport {
        platform: Platform::X,
        profile_ids: vec!["x@growth-v1".into()],
        score: 60,
        points: vec![crate::growth::fit::FitPoint {
            check: "tags".into(),
            passed: false,
            weight: 10,
            measured: "no tags".into(),
            rule: "1-3 tags".into(),
            message_id: Some("tags.missing".into()),
            params: BTreeMap::new(),
            findings: Vec::new(),
        }],
        disclaimer: "Fit, not growth.".into(),
    };
    let run = crate::growth::run::Run {
        id: "run_1".into(),
        project_id: "prj_1".into(),
        profile_id: "p".into(),
        model: "m".into(),
        input: crate::growth::run::RunInput {
            platforms: vec![Platform::X],
            goal: Default::default(),
            intensity: Default::default(),
            constraints: crate::growth::run::RunConstraints { keep_voice: true, ..Default::default() },
            draft: None,
        },
        status: crate::growth::run::RunStatus::PartlyApplied,
        stage: "proposals".into(),
        base_revision: 3,
        base_head: 2,
        snapshot_id: None,
        prompt_layers: vec!["core@1".into()],
        strategy: Some(json!({"angle": "short"})),
        titles: Vec::new(),
        targets: vec![crate::growth::run::RunTarget {
            target: Target::Draft { platform: Platform::X },
            proposal_id: Some("prp_1".into()),
            title_proposal_id: None,
            summary: "Shorter".into(),
            risks: Vec::new(),
            fit_before: Some(fit),
            fit_after: None,
            flags: vec!["no_saved_draft".into()],
            outcome: crate::growth::run::TargetOutcome::Conflict,
            outcome_message: None,
        }],
        error: None,
        resumable: false,
        disclaimer: "Fit, not growth.".into(),
        timings: crate::growth::run::RunTimings { total_micros: 5, model_micros: 3, model_calls: 1 },
        created_at: at(),
        updated_at: at(),
    };
    assert_eq!(
        serde_json::to_value(super::Run::from(&run)).unwrap(),
        json!({
            "id": "run_1", "projectId": "prj_1", "profileId": "p", "model": "m",
            "input": {
                "platforms": ["x"], "goal": "recommendation", "intensity": "balanced",
                "constraints": {"keepVoice": true, "keepTitle": false, "keepStructure": false, "avoidClickbait": false}
            },
            "status": "partly_applied", "stage": "proposals", "baseRevision": 3, "baseHead": 2, "promptLayers": ["core@1"],
            "strategy": {"angle": "short"}, "titles": [],
            "targets": [{
                "target": {"type": "draft", "platform": "x"}, "proposalId": "prp_1", "summary": "Shorter", "risks": [],
                "fitBefore": {
                    "platform": "x", "profileIds": ["x@growth-v1"], "score": 60, "disclaimer": "Fit, not growth.",
                    "points": [{"check": "tags", "passed": false, "weight": 10, "measured": "no tags", "rule": "1-3 tags", "messageId": "tags.missing"}]
                },
                "flags": ["no_saved_draft"], "outcome": "conflict"
            }],
            "resumable": false, "disclaimer": "Fit, not growth.", "timings": {"totalMicros": 5, "modelMicros": 3, "modelCalls": 1},
            "createdAt": "2026-01-02T03:04:05Z", "updatedAt": "2026-01-02T03:04:05Z"
        })
    );
}
