//! `inkstone-cli proposal …`: a proposal made by the engine (as the assistant's tools
//! make them) is listed, shown as a diff with hunk ids, accepted in part, and the
//! version it made names it.

use inkstone_api::model::{Anchor, ProvenanceSource};
use inkstone_api::proposals::{self, Edit, NewProposal, Origin, Payload, ProposalKind, Target};
use inkstone_api::{Engine, EngineConfig};

use crate::{json_ok, run, stdout};

fn seed_proposal(data: &std::path::Path, project_id: &str) -> String {
    let engine = Engine::open(EngineConfig::new(data.to_path_buf(), "test")).unwrap();
    let project = inkstone_api::project::load(engine.store(), project_id).unwrap();
    let edits = [Edit { find: "很好".into(), replace: "不错".into() }, Edit { find: "公园".into(), replace: "湖边".into() }];
    let proposed = proposals::apply_edits(&project.source, &edits).unwrap();
    let proposal = proposals::create(
        engine.kernel(),
        NewProposal {
            project_id: project_id.to_owned(),
            kind: ProposalKind::SourcePatch,
            target: Target::Source,
            summary: "两处润色".into(),
            payload: Payload::Text { base_text: project.source, proposed_text: proposed },
            origin: Origin { session_id: Some("ses_cli".into()), model: "scripted".into(), profile_id: "llm_x".into(), prompt_version: "drafting@1".into(), ..Origin::default() },
        },
    )
    .unwrap();
    proposal.id
}

#[test]
fn list_show_accept_part_and_reject_with_a_reason() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let source = data.join("a.md");
    std::fs::write(&source, "今天天气很好。\n\n中间一段。\n\n第二段。\n\n第三段。\n\n第四段。\n\n我们去公园散步。\n").unwrap();
    let project = json_ok(data, &["project", "create", "春天", "--source-file", source.to_str().unwrap()]);
    let id = project["id"].as_str().unwrap().to_owned();
    let proposal = seed_proposal(data, &id);

    let listed = stdout(&run(data, &["proposal", "list", &id]));
    assert!(listed.contains(&proposal) && listed.contains("source_patch") && listed.contains("2 hunks"), "{listed}");
    let shown = stdout(&run(data, &["proposal", "show", &proposal]));
    assert!(shown.contains("-今天天气很好。") && shown.contains("+今天天气不错。") && shown.contains("@@ hk_"), "{shown}");
    assert!(shown.contains("base: project revision 1"), "{shown}");

    let view = json_ok(data, &["proposal", "show", &proposal]);
    let second = view["hunks"][1]["id"].as_str().unwrap().to_owned();
    // A wrong base is a CONFLICT: exit 1 with the code on stderr, nothing written.
    let stale = run(data, &["proposal", "accept", &proposal, "--base", "7"]);
    assert_eq!(stale.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&stale.stderr).contains("CONFLICT"));
    let accepted = stdout(&run(data, &["proposal", "accept", &proposal, "--base", "1", "--hunk", &second]));
    assert_eq!(accepted.trim(), format!("Accepted {proposal} (partially_accepted) as version 1."));
    let shown = json_ok(data, &["project", "show", &id]);
    assert!(shown["source"].as_str().unwrap().contains("湖边") && shown["source"].as_str().unwrap().contains("很好"));
    let versions = stdout(&run(data, &["version", "list", &id]));
    assert!(versions.contains(&format!("AI proposal {proposal} (scripted)")), "{versions}");

    let other = seed_proposal_after(data, &id);
    let rejected = stdout(&run(data, &["proposal", "reject", &other, "--reason", "不要改开头"]));
    assert!(rejected.contains("rejected") && rejected.contains("不要改开头"), "{rejected}");
}

fn seed_proposal_after(data: &std::path::Path, project_id: &str) -> String {
    let engine = Engine::open(EngineConfig::new(data.to_path_buf(), "test")).unwrap();
    let project = inkstone_api::project::load(engine.store(), project_id).unwrap();
    let proposed = proposals::apply_edits(&project.source, &[Edit { find: "今天".into(), replace: "昨天".into() }]).unwrap();
    proposals::create(
        engine.kernel(),
        NewProposal {
            project_id: project_id.to_owned(),
            kind: ProposalKind::SourcePatch,
            target: Target::Source,
            summary: "改开头".into(),
            payload: Payload::Text { base_text: project.source, proposed_text: proposed },
            origin: Origin { session_id: Some("ses_cli".into()), model: "scripted".into(), profile_id: "llm_x".into(), prompt_version: "drafting@1".into(), ..Origin::default() },
        },
    )
    .unwrap()
    .id
}

#[test]
fn why_lists_the_sources_of_a_hunk_and_refuses_an_unknown_hunk() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let source = data.join("a.md");
    std::fs::write(&source, "今天天气很好。\n\n中间一段。\n\n第二段。\n\n第三段。\n\n第四段。\n\n我们去公园散步。\n").unwrap();
    let id = json_ok(data, &["project", "create", "春天", "--source-file", source.to_str().unwrap()])["id"].as_str().unwrap().to_owned();
    let proposal = {
        let engine = Engine::open(EngineConfig::new(data.to_path_buf(), "test")).unwrap();
        let project = inkstone_api::project::load(engine.store(), &id).unwrap();
        let proposed = proposals::apply_edits(&project.source, &[Edit { find: "公园".into(), replace: "湖边".into() }]).unwrap();
        let sources = vec![
            ProvenanceSource::SearchHit {
                tool: "search_workspace".into(),
                tool_use_id: "s1".into(),
                reference: "prj_lake@v2:3-7".into(),
                project_id: "prj_lake".into(),
                title: "湖边笔记".into(),
                version: Some(2),
                comment_id: None,
                span: Some(Anchor { from: 3, to: 7 }),
                snippet: "湖边的柳树".into(),
            },
            ProvenanceSource::Memory { memory_id: "mem_1".into(), text: "这个账号喜欢写湖".into() },
        ];
        let origin =
            Origin { session_id: Some("ses_cli".into()), model: "scripted".into(), profile_id: "llm_x".into(), prompt_version: "drafting@1".into(), sources, ..Origin::default() };
        let new = NewProposal {
            project_id: id.clone(),
            kind: ProposalKind::SourcePatch,
            target: Target::Source,
            summary: "湖边".into(),
            payload: Payload::Text { base_text: project.source, proposed_text: proposed },
            origin,
        };
        proposals::create(engine.kernel(), new).unwrap()
    };
    let hunk = proposal.hunks[0].id.clone();

    let why = stdout(&run(data, &["proposal", "why", &proposal.id, "--hunk", &hunk]));
    assert!(why.starts_with(&format!("Hunk {hunk} of {} was proposed after reading:", proposal.id)), "{why}");
    assert!(why.contains(&format!("search hit   prj_lake@v2:3-7  湖边笔记: 湖边的柳树  [{hunk}]")), "{why}");
    assert!(why.contains(&format!("memory       mem_1  这个账号喜欢写湖  [{hunk}]")), "{why}");
    let as_json = json_ok(data, &["proposal", "why", &proposal.id]);
    assert_eq!(as_json["sources"][0]["source"]["span"], serde_json::json!({"from": 3, "to": 7}));
    assert_eq!(as_json["sources"][1]["source"]["memoryId"], "mem_1");

    let unknown = run(data, &["proposal", "why", &proposal.id, "--hunk", "hk_nope"]);
    assert_eq!(unknown.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&unknown.stderr);
    assert!(stderr.contains("NOT_FOUND") && stderr.contains(&hunk), "the hint names the hunks: {stderr}");
}
