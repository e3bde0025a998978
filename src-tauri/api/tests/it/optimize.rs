//! One-click optimize through the API against the scripted model server (real HTTP on
//! loopback, a real sled store): the strategy's repairs and failure, cancelling a run,
//! over-limit candidates, apply per platform with an audit naming the model and the
//! prompt layers, and a stale target refused while another applies.

use std::time::Duration;

use inkstone_api::api::dto;
use inkstone_api::harness::{Event, EventBody};
use inkstone_test_support::model_server::{ModelServer, Reply};
use inkstone_test_support::TestEngine;
use serde_json::{json, Value};

use crate::harness::stream;

const SOURCE: &str = "# 周报写短的办法\n\n很多人的周报写得很长。\n\n第一，先写结论。\n\n第二，只写变化。\n\n第三，附上下周计划。\n";
const NEW_SOURCE: &str = "# 周报写短的办法\n\n周报越长，越没人读。\n\n第一，先写结论。\n\n第二，只写变化。\n\n第三，附上下周计划。\n\n你的周报有多长？欢迎留言。\n";

struct O {
    t: TestEngine,
    server: ModelServer,
    project: String,
}

fn setup() -> O {
    let server = ModelServer::start(Vec::new());
    let t = TestEngine::new();
    t.ok("llmProfile.create", json!({"name": "fake", "baseUrl": server.base_url(), "model": "fake-model", "contextWindow": 65_536}));
    let project = t.ok("project.create", json!({"title": "周报", "source": SOURCE, "platforms": ["zhihu", "x"]}))["id"].as_str().unwrap().to_owned();
    for platform in ["zhihu", "x"] {
        t.ok("platformDraft.save", json!({"projectId": project, "platform": platform}));
    }
    O { t, server, project }
}

fn strategy() -> Reply {
    Reply::text(&json!({"summary": "Sharpen the opening and end with a question.", "changes": ["a sharper first line", "a question at the end"], "platforms": [{"platform": "zhihu", "plan": "headings"}, {"platform": "x", "plan": "a short thread"}]}).to_string())
}

fn source_reply() -> Reply {
    Reply::text(&json!({"source": NEW_SOURCE, "titles": ["周报写短的三个办法"], "summary": "Strengthened the opening hook and added a question at the end."}).to_string())
}

fn zhihu_reply() -> Reply {
    Reply::text(
        &json!({"text": "## 周报写短的办法\n\n周报越长，越没人读。\n\n第一，先写结论。\n\n你的周报有多长？欢迎留言。\n", "summary": "Added a heading and a closing question."})
            .to_string(),
    )
}

fn x_reply(posts: &[&str]) -> Reply {
    Reply::text(&json!({"text": posts.join("\n\n---\n\n"), "summary": "Compressed the thread to short posts."}).to_string())
}

impl O {
    fn push(&self, replies: Vec<Reply>) {
        for reply in replies {
            self.server.push(reply);
        }
    }

    fn start(&self, extra: Value) -> (Value, Vec<dto::Event>) {
        let mut params = json!({"projectId": self.project, "goal": "completion", "intensity": "balanced"});
        for (k, v) in extra.as_object().unwrap() {
            params[k] = v.clone();
        }
        let (result, events) = stream(&self.t.engine, "optimize.start", params);
        (result.unwrap_or_else(|e| panic!("optimize.start failed: {e:?}")), events)
    }

    fn target<'a>(&self, run: &'a Value, name: &str) -> &'a Value {
        run["targets"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| if name == "source" { t["target"]["type"] == "source" } else { t["target"]["platform"] == name })
            .unwrap_or_else(|| panic!("no {name} target in {run:#}"))
    }

    fn proposals(&self) -> Vec<Value> {
        self.t.ok("proposal.list", json!({"projectId": self.project}))["proposals"].as_array().unwrap().clone()
    }
}

fn stages(events: &[dto::Event], state: &str) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match &e.body {
            dto::EventBody::RunStage { stage, state: s, message } if s == state => Some(format!("{stage}: {message}")),
            _ => None,
        })
        .collect()
}

#[test]
fn a_run_makes_one_proposal_per_target_with_summaries_risks_and_fit_before_and_after() {
    let o = setup();
    o.push(vec![strategy(), source_reply(), zhihu_reply(), x_reply(&["周报越长，越没人读。三个办法：", "先写结论，只写变化。你的周报有多长？"])]);
    let (run, events) = o.start(json!({}));
    assert_eq!(run["status"], "ready", "{run:#}");
    assert_eq!(run["model"], "fake-model");
    assert!(run["disclaimer"].as_str().unwrap().contains("does not predict"));
    let layers: Vec<&str> = run["promptLayers"].as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect();
    assert_eq!(layers.len(), 8, "{layers:?}");
    assert_eq!(layers[5], "mode.optimize@v1");
    assert!(layers[6].starts_with("context:ctx_"));
    assert_eq!(layers[7], "apply-policy.optimize@v1");
    let source = o.target(&run, "source");
    assert!(source["proposalId"].is_string());
    assert!(source["titleProposalId"].is_string());
    assert_eq!(run["titles"], json!(["周报写短的三个办法"]));
    for platform in ["zhihu", "x"] {
        let target = o.target(&run, platform);
        assert!(target["proposalId"].is_string(), "{target:#}");
        assert!(target["fitBefore"]["score"].is_u64() && target["fitAfter"]["score"].is_u64());
        assert_eq!(target["outcome"], "pending");
    }
    // Nothing official changed: no version, the drafts at revision 1.
    assert_eq!(o.t.ok("version.list", json!({"projectId": o.project}))["versions"].as_array().unwrap().len(), 0);
    assert_eq!(o.t.ok("platformDraft.get", json!({"projectId": o.project, "platform": "x"}))["revision"], 1);
    // The log is the run's: watched live (the streamed events), and read back.
    let log = o.t.ok("optimize.events", json!({"runId": run["id"]}))["events"].as_array().unwrap().clone();
    assert_eq!(log.first().unwrap()["kind"], "run_started");
    assert_eq!(log.last().unwrap()["kind"], "run_ended");
    assert!(log.iter().all(|e| e["runId"] == run["id"] && e.get("sessionId").is_none()));
    let done = stages(&events, "done");
    for stage in ["snapshot", "strategy", "source", "platform:zhihu", "platform:x", "proposals"] {
        assert!(done.iter().any(|d| d.starts_with(&format!("{stage}:"))), "{stage} in {done:?}");
    }
    // The system message is the snapshot: the prompt layers in order around the digest.
    let system = o.server.chat_requests()[0].body["messages"][0]["content"].as_str().unwrap().to_owned();
    assert!(system.find("Goal: completion").unwrap() < system.find("周报写短的办法").unwrap());
    assert!(system.find("周报写短的办法").unwrap() < system.find("# Apply policy").unwrap());
    assert_eq!(o.server.chat_requests().len(), 4);
    let listed = o.t.ok("optimize.list", json!({"projectId": o.project}))["runs"].as_array().unwrap().clone();
    assert_eq!(listed.len(), 1);
}

#[test]
fn a_profile_whose_server_takes_a_schema_gets_each_steps_schema_in_its_form() {
    let replies = || vec![strategy(), source_reply(), zhihu_reply(), x_reply(&["周报越长，越没人读。", "先写结论。"])];
    let with = |o: &O, schema: Value| {
        let mut changes = json!({"name": "fake", "baseUrl": o.server.base_url(), "model": "fake-model", "contextWindow": 65_536});
        for (k, v) in schema.as_object().unwrap() {
            changes[k] = v.clone();
        }
        o.t.ok("llmProfile.update", json!({"profile": "fake", "changes": changes}));
    };
    // A llama.cpp server: the json_object form, with each step's own schema.
    let o = setup();
    with(&o, json!({"supportsJsonSchema": true, "schemaForm": "jsonObject"}));
    o.push(replies());
    let (run, _) = o.start(json!({}));
    assert_eq!(run["status"], "ready", "{run:#}");
    let requests = o.server.chat_requests();
    let strategy_schema = inkstone_api::growth::run::strategy_schema();
    assert_eq!(requests[0].body["response_format"], json!({"type": "json_object", "schema": inkstone_api::llm::server_schema(&strategy_schema)}));
    // Without the bounds llama.cpp turns into thousands of grammar rules; the engine checks them.
    assert!(strategy_schema.to_string().contains("maxLength") && !requests[0].body["response_format"].to_string().contains("maxLength"));
    assert_eq!(requests[1].body["response_format"]["schema"]["required"], json!(["source", "titles", "summary"]));
    assert_eq!(requests[2].body["response_format"]["schema"]["required"], json!(["text", "summary"]));

    // The OpenAI form; and none for a server that cannot take a schema.
    for (schema, expected) in [(json!({"supportsJsonSchema": true}), Some("json_schema")), (json!({"supportsJsonSchema": false}), None)] {
        let o = setup();
        with(&o, schema);
        o.push(replies());
        let (run, _) = o.start(json!({}));
        assert_eq!(run["status"], "ready");
        let first = &o.server.chat_requests()[0].body;
        assert_eq!(first["response_format"]["type"].as_str(), expected, "{first:#}");
    }
}

#[test]
fn a_reply_cut_off_at_the_output_limit_is_named_as_such_to_the_model_and_the_person() {
    let o = setup();
    // Cut off mid-object: its first complete value is an inner list, not the strategy.
    let cut = || {
        inkstone_test_support::model_server::Reply::Text {
        content: r#"{"summary": "Sharpen the opening", "changes": ["a sharper first line"], "platforms": [{"platform": "zhihu", "plan": "headings"}], "summary2": "and then the model went on and on"#.to_owned(),
        reasoning: None,
        chunk_chars: 16,
        usage: inkstone_test_support::model_server::Usage::Counted,
        finish: "length".to_owned(),
    }
    };
    o.push(vec![cut(), cut(), cut()]);
    let (run, _) = o.start(json!({}));
    assert_eq!(run["status"], "failed", "{run:#}");
    let message = run["error"]["message"].as_str().unwrap();
    assert!(message.contains("cut off at the output limit (8192 tokens)"), "{message}");
    assert!(run["error"]["hints"].as_array().unwrap().iter().any(|h| h["id"] == "raise_output"), "{run:#}");
    let repair = o.server.chat_requests()[1].body["messages"].as_array().unwrap().last().unwrap()["content"].as_str().unwrap().to_owned();
    assert!(repair.contains("cut off at the output limit") && repair.contains("keep every value shorter"), "{repair}");
}

#[test]
fn a_malformed_strategy_is_repaired() {
    let o = setup();
    o.push(vec![Reply::text("Here is my plan: shorter!"), Reply::text(&json!({"summary": "x"}).to_string()), strategy(), source_reply(), zhihu_reply(), x_reply(&["一", "二"])]);
    let (run, events) = o.start(json!({}));
    assert_eq!(run["status"], "ready", "{run:#}");
    let repairs = stages(&events, "repair");
    assert_eq!(repairs.len(), 2, "{repairs:?}");
    assert!(repairs[0].contains("no JSON value"), "{repairs:?}");
    assert!(repairs[1].contains("changes"), "the violation names the missing field: {repairs:?}");
    let requests = o.server.chat_requests();
    let last_user = |i: usize| requests[i].body["messages"].as_array().unwrap().last().unwrap()["content"].as_str().unwrap().to_owned();
    assert!(last_user(1).starts_with("That reply is not valid"));
    assert_eq!(run["strategy"]["changes"][0], "a sharper first line");
}

#[test]
fn a_strategy_still_malformed_after_two_repairs_fails_clearly_and_proposes_nothing() {
    let o = setup();
    o.push(vec![Reply::text("no"), Reply::text("still no"), Reply::text("{\"summary\": 1}")]);
    let (run, _) = o.start(json!({}));
    assert_eq!(run["status"], "failed", "{run:#}");
    assert_eq!(run["error"]["code"], "PROVIDER_BAD_RESPONSE");
    let message = run["error"]["message"].as_str().unwrap();
    assert!(message.contains("strategy is not valid after 2 repairs"), "{message}");
    // The real next steps: another try, another model, less at once; never the generic
    // "restart Inkstone", which cannot help a model that answers wrongly.
    let hints: Vec<&str> = run["error"]["hints"].as_array().unwrap().iter().map(|h| h["id"].as_str().unwrap()).collect();
    assert_eq!(hints, ["retry_optimize", "other_model", "smaller_input"], "{run:#}");
    assert_eq!(o.server.chat_requests().len(), 3, "three calls: the first and two repairs");
    assert!(o.proposals().is_empty());
    // A failed run cannot be applied.
    let error = o.t.engine.call("optimize.apply", json!({"runId": run["id"], "all": true})).unwrap_err();
    assert_eq!(error.code, inkstone_api::ErrorCode::Conflict);
}

#[test]
fn cancelling_mid_run_leaves_nothing_applied_or_proposed() {
    let o = setup();
    o.push(vec![strategy(), Reply::delayed(Duration::from_secs(10), source_reply())]);
    let engine = &o.t.engine;
    let project = o.project.clone();
    let run = std::thread::scope(|scope| {
        let handle = scope.spawn(|| stream(engine, "optimize.start", json!({"projectId": project})).0.unwrap());
        // Wait for the source step's model call, then cancel.
        let run_id = loop {
            std::thread::sleep(Duration::from_millis(50));
            let runs = engine.call("optimize.list", json!({"projectId": o.project})).unwrap();
            if let Some(id) = runs["runs"][0]["id"].as_str() {
                let log = engine.call("optimize.events", json!({"runId": id})).unwrap();
                let asked = log["events"].as_array().unwrap().iter().filter(|e| e["kind"] == "model_call_started").count();
                if asked == 2 {
                    break id.to_owned();
                }
            }
        };
        let cancelled = engine.call("optimize.cancel", json!({"runId": run_id})).unwrap();
        assert_eq!(cancelled["cancelled"], true);
        handle.join().unwrap()
    });
    assert_eq!(run["status"], "cancelled", "{run:#}");
    assert!(o.proposals().is_empty());
    assert_eq!(o.t.ok("version.list", json!({"projectId": o.project}))["versions"].as_array().unwrap().len(), 0);
    assert_eq!(o.t.ok("project.get", json!({"projectId": o.project}))["source"], SOURCE);
    let got = o.t.ok("optimize.get", json!({"runId": run["id"]}));
    assert_eq!(got["status"], "cancelled");
    assert_eq!(o.t.ok("optimize.cancel", json!({"runId": run["id"]}))["cancelled"], false);
}

#[test]
fn an_over_limit_candidate_gets_another_round_then_is_flagged_never_cut() {
    let o = setup();
    let long = "长".repeat(400);
    // Zhihu fine; X over its post limit, then fixed.
    o.push(vec![strategy(), source_reply(), zhihu_reply(), x_reply(&[&long]), x_reply(&["短一点的第一条。", "第二条。"])]);
    let (run, events) = o.start(json!({}));
    assert_eq!(run["status"], "ready");
    assert!(stages(&events, "repair").iter().any(|r| r.starts_with("platform:x: over a limit")), "{:?}", stages(&events, "repair"));
    assert_eq!(o.target(&run, "x")["flags"], json!([]));
    let fixed_request = o.server.chat_requests()[4].body["messages"].as_array().unwrap().last().unwrap()["content"].as_str().unwrap().to_owned();
    assert!(fixed_request.contains("breaks these limits"), "{fixed_request}");

    // Over twice: flagged, and the proposal keeps the whole text.
    let o = setup();
    o.push(vec![strategy(), source_reply(), zhihu_reply(), x_reply(&[&long]), x_reply(&[&long])]);
    let (run, events) = o.start(json!({}));
    assert_eq!(run["status"], "ready");
    let x = o.target(&run, "x");
    let flags: Vec<&str> = x["flags"].as_array().unwrap().iter().map(|f| f.as_str().unwrap()).collect();
    assert!(flags.iter().any(|f| f.starts_with("over_limit")), "{flags:?}");
    assert!(!stages(&events, "flagged").is_empty());
    assert!(x["fitAfter"]["points"].as_array().unwrap().iter().any(|p| p["check"] == "limits" && p["passed"] == false));
    let proposal = o.t.ok("proposal.get", json!({"proposalId": x["proposalId"]}));
    assert!(proposal["payload"]["proposedText"].as_str().unwrap().contains(&long), "never cut silently");
}

#[test]
fn a_title_candidate_over_a_target_platforms_title_limit_is_flagged_for_that_platform_never_cut() {
    let o = setup();
    let long = format!("周报{}", "写短".repeat(60));
    let source = Reply::text(&json!({"source": NEW_SOURCE, "titles": ["周报写短的三个办法", long], "summary": "Strengthened the opening hook."}).to_string());
    let card = Reply::text(&json!({"text": "周报越长，越没人读。先写结论。", "summary": "A short card."}).to_string());
    o.push(vec![strategy(), source, zhihu_reply(), x_reply(&["周报越长，越没人读。", "先写结论。"]), card]);
    // Xiaohongshu's title limit blocks (20 units); Zhihu's only warns; X has none.
    let (run, events) = o.start(json!({"platforms": ["zhihu", "x", "xiaohongshu"]}));
    assert_eq!(run["status"], "ready", "{run:#}");
    let flags: Vec<&str> = o.target(&run, "source")["flags"].as_array().unwrap().iter().map(|f| f.as_str().unwrap()).collect();
    assert_eq!(flags.len(), 1, "{flags:?}");
    assert!(flags[0].starts_with("over_limit: ") && flags[0].contains(&format!("title candidate “{long}” on xiaohongshu")), "{flags:?}");
    assert!(!flags[0].contains("周报写短的三个办法") && !flags[0].contains("on zhihu"), "only a blocking limit, only the candidate over it: {flags:?}");
    assert!(o.target(&run, "source")["risks"].as_array().unwrap().iter().any(|r| r["location"] == format!("title candidate “{long}” (xiaohongshu)")));
    assert!(stages(&events, "flagged").iter().any(|s| s.starts_with("source: title candidates over")), "{:?}", stages(&events, "flagged"));
    assert_eq!(run["titles"][1], json!(long), "never cut");
}

#[test]
fn a_summary_that_promises_growth_is_regenerated_once() {
    let o = setup();
    let promising = Reply::text(&json!({"text": "## 周报\n\n越长越没人读。\n", "summary": "保证涨粉: guaranteed views."}).to_string());
    o.push(vec![strategy(), source_reply(), promising, Reply::text(&json!({"summary": "Added a heading."}).to_string()), x_reply(&["一", "二"])]);
    let (run, events) = o.start(json!({}));
    assert_eq!(run["status"], "ready", "{run:#}");
    assert_eq!(o.target(&run, "zhihu")["summary"], "Added a heading.");
    assert!(stages(&events, "repair").iter().any(|r| r.contains("promises an outcome")));
}

#[test]
fn apply_per_platform_makes_draft_revisions_and_versions_with_an_audit_and_a_moved_target_conflicts_alone() {
    let o = setup();
    o.push(vec![strategy(), source_reply(), zhihu_reply(), x_reply(&["周报越长，越没人读。", "先写结论。"])]);
    let (run, _) = o.start(json!({}));
    let run_id = run["id"].as_str().unwrap().to_owned();
    // One platform.
    let applied = o.t.ok("optimize.apply", json!({"runId": run_id, "platforms": ["zhihu"]}));
    assert_eq!(applied["results"].as_array().unwrap().len(), 1);
    assert_eq!(applied["results"][0]["outcome"], "applied");
    assert_eq!(applied["results"][0]["draftRevision"], 2);
    assert_eq!(applied["run"]["status"], "partly_applied");
    let zhihu = o.t.ok("platformDraft.get", json!({"projectId": o.project, "platform": "zhihu"}));
    assert!(zhihu["content"]["markdown"].as_str().unwrap().contains("周报越长，越没人读"));
    // The audit names the model, the profile and every prompt layer.
    let audit = o.t.ok("proposal.audit", json!({"projectId": o.project}))["records"].as_array().unwrap().clone();
    let record = audit.iter().find(|r| r["proposalId"] == o.target(&run, "zhihu")["proposalId"]).expect("audited");
    assert_eq!(record["action"], "accepted");
    assert_eq!(record["origin"]["runId"], run_id);
    assert_eq!(record["origin"]["model"], "fake-model");
    let layers: Vec<&str> = record["origin"]["promptLayers"].as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect();
    assert!(layers.contains(&"mode.optimize@v1") && layers.contains(&"guardrails@v1"), "{layers:?}");
    assert!(record["origin"]["promptVersion"].as_str().unwrap().contains("core-identity@v1"));

    // The X draft moves by hand; applying X and the source: X conflicts, the source applies.
    let x = o.t.ok("platformDraft.get", json!({"projectId": o.project, "platform": "x"}));
    o.t.ok(
        "platformDraft.edit",
        json!({"projectId": o.project, "platform": "x", "baseRevision": x["revision"], "content": {"type": "thread", "posts": [{"text": "我自己改的。", "weightedLength": 0}]}}),
    );
    let applied = o.t.ok("optimize.apply", json!({"runId": run_id, "platforms": ["x"], "source": true, "title": "周报写短的三个办法"}));
    let results = applied["results"].as_array().unwrap();
    let by = |name: &str| results.iter().find(|r| if name == "source" { r["target"]["type"] == "source" } else { r["target"]["platform"] == name }).unwrap().clone();
    assert_eq!(by("source")["outcome"], "applied", "{results:#?}");
    assert_eq!(by("x")["outcome"], "conflict");
    assert_eq!(by("x")["error"]["code"], "CONFLICT");
    let x_after = o.t.ok("platformDraft.get", json!({"projectId": o.project, "platform": "x"}));
    assert_eq!(x_after["content"]["posts"][0]["text"], "我自己改的。", "nothing written for the moved target");
    let project = o.t.ok("project.get", json!({"projectId": o.project}));
    assert_eq!(project["source"], NEW_SOURCE);
    assert_eq!(project["title"], "周报写短的三个办法");
    let versions = o.t.ok("version.list", json!({"projectId": o.project}))["versions"].as_array().unwrap().len();
    assert_eq!(versions, 2, "the source patch and the title each made a version");
    let got = o.t.ok("optimize.get", json!({"runId": run_id}));
    assert_eq!(got["status"], "partly_applied");
    assert_eq!(o.target(&got, "x")["outcome"], "conflict");
    assert_eq!(o.target(&got, "zhihu")["outcome"], "applied");
}

#[test]
fn an_applied_run_appears_in_the_ai_activity_with_its_run_model_prompts_and_tokens() {
    let o = setup();
    o.push(vec![strategy(), source_reply(), zhihu_reply(), x_reply(&["周报越长，越没人读。", "先写结论。"])]);
    let (run, _) = o.start(json!({}));
    let run_id = run["id"].as_str().unwrap().to_owned();
    o.t.ok("optimize.apply", json!({"runId": run_id, "platforms": ["zhihu"]}));
    let rows = o.t.ok("aiActivity.list", json!({"filter": {"projectId": o.project}}))["rows"].as_array().unwrap().clone();
    assert_eq!(rows.len(), 1, "{rows:#?}");
    let row = &rows[0];
    assert_eq!(row["proposalId"], o.target(&run, "zhihu")["proposalId"]);
    assert_eq!(row["through"], json!({"type": "optimizeRun", "runId": run_id}));
    assert_eq!(row["decision"], "accepted");
    assert_eq!(row["target"], json!({"type": "draft", "platform": "zhihu"}));
    assert_eq!(row["draftRevision"], 2);
    assert_eq!((row["model"]["model"].as_str(), row["model"]["profileName"].as_str()), (Some("fake-model"), Some("fake")));
    let layers: Vec<&str> = row["promptLayers"].as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect();
    assert!(layers.contains(&"mode.optimize@v1"), "{layers:?}");
    // A run proposes every target together: its tokens are the run's four calls.
    assert_eq!((row["tokens"]["scope"].as_str(), row["tokens"]["calls"].as_u64()), (Some("run"), Some(4)), "{row:#}");
    // Rejecting the rest lists each rejection too.
    o.t.ok("optimize.apply", json!({"runId": run_id, "rejectAll": true}));
    let rejected = o.t.ok("aiActivity.list", json!({"filter": {"decision": "rejected"}}))["rows"].as_array().unwrap().clone();
    let kinds: Vec<&str> = rejected.iter().map(|r| r["proposalKind"].as_str().unwrap()).collect();
    assert_eq!(kinds.len(), 3, "the source patch, its title candidates and the X draft: {kinds:?}");
    assert!(rejected.iter().all(|r| r["through"]["runId"] == json!(run_id)));
}

#[test]
fn bad_input_is_refused_and_writes_nothing() {
    let o = setup();
    let error = o.t.engine.call("optimize.start", json!({"projectId": o.project, "goal": "fame"})).unwrap_err();
    assert_eq!(error.code, inkstone_api::ErrorCode::Validation);
    let error = o.t.engine.call("optimize.start", json!({"projectId": o.project, "platforms": ["x", "x"]})).unwrap_err();
    assert_eq!(error.details.unwrap()["field"], "platforms[1]");
    let error = o.t.engine.call("optimize.start", json!({"projectId": o.project, "draft": "wechat"})).unwrap_err();
    assert_eq!(error.code, inkstone_api::ErrorCode::NotFound);
    assert!(o.t.ok("optimize.list", json!({"projectId": o.project}))["runs"].as_array().unwrap().is_empty());
    assert_eq!(o.server.chat_requests().len(), 0);
}

#[test]
fn a_candidate_that_introduces_an_absolute_term_gets_one_more_round_then_is_flagged_with_its_span() {
    let o = setup();
    let risky_zhihu = |summary: &str| Reply::text(&json!({"text": "## 周报写短的办法\n\n这是最佳的周报写法，100%有效。\n", "summary": summary}).to_string());
    let risky_source = Reply::text(&json!({"source": NEW_SOURCE, "titles": ["周报写短的第一法则", "周报写短的三个办法"], "summary": "Strengthened the opening."}).to_string());
    o.push(vec![
        strategy(),
        risky_source,
        source_reply(),
        risky_zhihu("Added a heading."),
        risky_zhihu("Added a heading again."),
        x_reply(&["周报越长，越没人读。", "先写结论。"]),
    ]);
    let (run, events) = o.start(json!({}));
    assert_eq!(run["status"], "ready", "{run:#}");
    let requests = o.server.chat_requests();
    assert_eq!(requests.len(), 6, "one more round for the source's title, one for zhihu");
    let ask = |i: usize| requests[i].body["messages"].as_array().unwrap().last().unwrap()["content"].as_str().unwrap().to_owned();
    // The title candidate was checked, not only the source: a round asking to remove it.
    assert!(ask(2).contains("“第一” (ad_law)"), "{}", ask(2));
    assert_eq!(run["titles"], json!(["周报写短的三个办法"]));
    assert_eq!(o.target(&run, "source")["flags"], json!([]));
    // The zhihu draft: asked once to remove both terms, then flagged with each term's span.
    assert!(ask(4).contains("The zhihu draft introduces terms") && ask(4).contains("“最佳”") && ask(4).contains("“100%”"), "{}", ask(4));
    let zhihu = o.target(&run, "zhihu");
    let flags: Vec<&str> = zhihu["flags"].as_array().unwrap().iter().map(|f| f.as_str().unwrap()).collect();
    let text = "## 周报写短的办法\n\n这是最佳的周报写法，100%有效。\n";
    let at = |term: &str| {
        let units: Vec<u16> = text.encode_utf16().collect();
        let needle: Vec<u16> = term.encode_utf16().collect();
        units.windows(needle.len()).position(|w| w == needle.as_slice()).unwrap()
    };
    let best = at("最佳");
    assert_eq!(flags, vec![format!("risky_terms: “最佳” at {}–{}; “100%” at {}–{}", best, best + 2, at("100%"), at("100%") + 4).as_str()]);
    let risk = zhihu["risks"].as_array().unwrap().iter().find(|r| r["matched"] == "最佳").expect("the risk beside its text");
    assert_eq!(risk["check"], "ad_law");
    assert_eq!(risk["span"], json!({"from": best, "to": best + 2}));
    assert!(stages(&events, "flagged").iter().any(|s| s.starts_with("platform:zhihu: still introduces risky terms")), "{:?}", stages(&events, "flagged"));
    // The draft patch carries its new findings, and its text is the candidate, unchanged.
    let proposal = o.t.ok("proposal.get", json!({"proposalId": zhihu["proposalId"]}));
    let carried: Vec<&str> = proposal["newFindings"].as_array().unwrap().iter().filter_map(|f| f["matched"].as_str()).collect();
    assert!(carried.contains(&"最佳") && carried.contains(&"100%"), "{carried:?}");
    assert_eq!(proposal["payload"]["proposedText"], text);
    // X introduced nothing: no round, no flag.
    assert_eq!(o.target(&run, "x")["flags"], json!([]));
}

// ---- Resuming a run the app's closing interrupted ----------------------------------
//
// A child process (this same test binary, re-run with `INKSTONE_RESUME_CHILD_DIR` set)
// starts the run and is killed with SIGKILL while the model is answering a later step;
// the parent then opens the same data dir as the app would after a restart.

const RESUME_CHILD_DIR: &str = "INKSTONE_RESUME_CHILD_DIR";
const RESUME_CHILD_PROJECT: &str = "INKSTONE_RESUME_CHILD_PROJECT";

/// The child's body; a no-op unless this binary was started as the child.
#[test]
fn resume_child_optimizes_until_killed() {
    let (Ok(dir), Ok(project)) = (std::env::var(RESUME_CHILD_DIR), std::env::var(RESUME_CHILD_PROJECT)) else { return };
    let mut config = inkstone_api::EngineConfig::new(&dir, "resume child");
    config.group_commit_millis = 50;
    let engine = inkstone_api::Engine::open(config).expect("child opens the store");
    let _ = engine.call_stream("optimize.start", json!({"projectId": project, "goal": "completion", "intensity": "balanced"}), &mut |_| {});
    panic!("the run should have been killed in its fourth model call");
}

/// A data dir whose optimization of a project (zhihu and x drafts saved) was killed
/// while the model answered its fourth call (the x step), after the strategy, the
/// source and the zhihu step had their replies.
fn interrupted_run(server: &ModelServer) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let project = {
        let engine = inkstone_api::Engine::open(inkstone_api::EngineConfig::new(dir.path(), "resume parent")).unwrap();
        engine.call("llmProfile.create", json!({"name": "fake", "baseUrl": server.base_url(), "model": "fake-model", "contextWindow": 65_536})).unwrap();
        let project = engine.call("project.create", json!({"title": "周报", "source": SOURCE, "platforms": ["zhihu", "x"]})).unwrap()["id"].as_str().unwrap().to_owned();
        for platform in ["zhihu", "x"] {
            engine.call("platformDraft.save", json!({"projectId": project, "platform": platform})).unwrap();
        }
        project
    };
    for reply in [strategy(), source_reply(), zhihu_reply(), Reply::delayed(Duration::from_secs(60), x_reply(&["周报越长，越没人读。", "先写结论。"]))] {
        server.push(reply);
    }
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "optimize::resume_child_optimizes_until_killed", "--nocapture", "--test-threads=1"])
        .env(RESUME_CHILD_DIR, dir.path())
        .env(RESUME_CHILD_PROJECT, &project)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while server.chat_requests().len() < 4 {
        assert!(std::time::Instant::now() < deadline, "the child never reached its fourth model call");
        assert!(child.try_wait().unwrap().is_none(), "the child ended before its fourth model call");
        std::thread::sleep(Duration::from_millis(20));
    }
    // Past the child's group commit (50 ms), so the replies already received are on disk.
    std::thread::sleep(Duration::from_millis(600));
    child.kill().unwrap();
    child.wait().unwrap();
    (dir, project)
}

fn kinds(events: &[Value], kind: &str) -> usize {
    events.iter().filter(|e| e["kind"] == kind).count()
}

#[test]
fn an_interrupted_run_resumes_from_its_log_asking_the_model_only_for_the_steps_it_had_not_finished() {
    let server = ModelServer::start(Vec::new());
    let (dir, project) = interrupted_run(&server);
    let engine = inkstone_api::Engine::open(inkstone_api::EngineConfig::new(dir.path(), "resume parent")).unwrap();
    let runs = engine.call("optimize.list", json!({"projectId": project})).unwrap();
    let run = runs["runs"][0].clone();
    assert_eq!(run["status"], "interrupted", "{run:#}");
    assert_eq!(run["stage"], "platform:x");
    assert!(run["error"]["hints"].as_array().unwrap().iter().any(|h| h["id"] == "resume"), "{run:#}");
    let none = engine.call("proposal.list", json!({"projectId": project})).unwrap();
    assert!(none["proposals"].as_array().unwrap().is_empty(), "nothing is proposed before the run ends");
    let run_id = run["id"].as_str().unwrap().to_owned();

    server.push(x_reply(&["周报越长，越没人读。", "先写结论，再写变化。"]));
    let (result, events) = stream(&engine, "optimize.resume", json!({"runId": run_id}));
    let resumed = result.unwrap_or_else(|e| panic!("resume failed: {e:?}"));
    assert_eq!(resumed["status"], "ready", "{resumed:#}");
    assert_eq!(resumed["model"], "fake-model");
    let targets = resumed["targets"].as_array().unwrap();
    assert_eq!(targets.len(), 3, "{resumed:#}");
    assert!(targets.iter().all(|t| t["proposalId"].is_string()), "{resumed:#}");
    assert_eq!(resumed["titles"], json!(["周报写短的三个办法"]), "the source step's reply is the recorded one");
    // Only the x step asked the model again, with the very conversation it had been
    // sent before the kill.
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 5);
    assert_eq!(requests[4].body["messages"], requests[3].body["messages"]);
    // The stream showed the recorded stages again, then the new ones.
    assert!(stages(&events, "done").contains(&"strategy: strategy valid".to_owned()), "{:?}", stages(&events, "done"));
    // The log holds each step once: the recorded part is not written again.
    let log = engine.call("optimize.events", json!({"runId": run_id})).unwrap()["events"].as_array().unwrap().clone();
    assert_eq!(kinds(&log, "run_started"), 1);
    assert_eq!(kinds(&log, "assistant_message"), 4);
    assert_eq!(kinds(&log, "model_call_started"), 5, "the call the kill cut off stays in the log, unanswered");
    let done: Vec<&Value> = log.iter().filter(|e| e["kind"] == "run_stage" && e["payload"]["state"] == "done").collect();
    for stage in ["snapshot", "strategy", "source", "platform:zhihu", "platform:x", "proposals"] {
        assert_eq!(done.iter().filter(|e| e["payload"]["stage"] == stage).count(), 1, "{stage} done once in {log:#?}");
    }
    assert!(log.iter().any(|e| e["kind"] == "run_stage" && e["payload"]["stage"] == "resume"));
    assert_eq!(log.last().unwrap()["kind"], "run_ended");
    // It applies like any run; a finished run cannot be resumed again.
    let applied = engine.call("optimize.apply", json!({"runId": run_id, "all": true})).unwrap();
    assert_eq!(applied["run"]["status"], "applied", "{applied:#}");
    let again = engine.call_stream("optimize.resume", json!({"runId": run_id}), &mut |_| {}).unwrap_err();
    assert_eq!(again.code, inkstone_api::ErrorCode::Conflict);
    assert_eq!(server.chat_requests().len(), 5);
}

#[test]
fn an_interrupted_run_whose_project_changed_fails_to_resume_and_can_be_discarded() {
    let server = ModelServer::start(Vec::new());
    let (dir, project) = interrupted_run(&server);
    let engine = inkstone_api::Engine::open(inkstone_api::EngineConfig::new(dir.path(), "resume parent")).unwrap();
    let run_id = engine.call("optimize.list", json!({"projectId": project})).unwrap()["runs"][0]["id"].as_str().unwrap().to_owned();
    engine.call("project.update", json!({"projectId": project, "source": format!("{SOURCE}\n又想到一点。\n")})).unwrap();
    let (result, _) = stream(&engine, "optimize.resume", json!({"runId": run_id}));
    let failed = result.unwrap();
    assert_eq!(failed["status"], "failed", "{failed:#}");
    assert_eq!(failed["error"]["code"], "CONFLICT", "{failed:#}");
    assert!(failed["error"]["hints"].as_array().unwrap().iter().any(|h| h["id"] == "start_again"));
    assert_eq!(server.chat_requests().len(), 4, "a run that no longer fits asks the model nothing");
    assert!(engine.call("proposal.list", json!({"projectId": project})).unwrap()["proposals"].as_array().unwrap().is_empty());

    // Another interrupted run, discarded instead of resumed.
    let server = ModelServer::start(Vec::new());
    let (dir, project) = interrupted_run(&server);
    let engine = inkstone_api::Engine::open(inkstone_api::EngineConfig::new(dir.path(), "resume parent")).unwrap();
    let run_id = engine.call("optimize.list", json!({"projectId": project})).unwrap()["runs"][0]["id"].as_str().unwrap().to_owned();
    assert_eq!(engine.call("optimize.cancel", json!({"runId": run_id})).unwrap()["cancelled"], true);
    assert_eq!(engine.call("optimize.get", json!({"runId": run_id})).unwrap()["status"], "cancelled");
    let error = engine.call_stream("optimize.resume", json!({"runId": run_id}), &mut |_| {}).unwrap_err();
    assert_eq!(error.code, inkstone_api::ErrorCode::Conflict);
    assert_eq!(server.chat_requests().len(), 4);
}

/// A run the model server failed part-way (here a stream cut off in the X step) keeps
/// what it had done: it is resumable, and resuming replays the recorded replies and asks
/// the model only for the step that failed. Discarding it is the other way on.
#[test]
fn a_run_the_model_server_failed_resumes_asking_only_for_the_step_that_failed() {
    let o = setup();
    o.push(vec![strategy(), source_reply(), zhihu_reply(), Reply::Cut { content: "{\"text\": \"周报".to_owned() }]);
    let (run, _) = o.start(json!({}));
    assert_eq!((run["status"].as_str(), run["resumable"].as_bool()), (Some("failed"), Some(true)), "{run:#}");
    assert_eq!(run["stage"], "platform:x");
    assert!(run["error"]["hints"].as_array().unwrap().iter().any(|h| h["id"] == "resume_failed"), "{run:#}");
    assert!(o.proposals().is_empty(), "a failed run proposes nothing");
    let run_id = run["id"].as_str().unwrap().to_owned();

    o.push(vec![x_reply(&["周报越长，越没人读。", "先写结论，再写变化。"])]);
    let (result, events) = stream(&o.t.engine, "optimize.resume", json!({"runId": run_id}));
    let resumed = result.unwrap_or_else(|e| panic!("resume failed: {e:?}"));
    assert_eq!((resumed["status"].as_str(), resumed["resumable"].as_bool()), (Some("ready"), Some(false)), "{resumed:#}");
    assert!(resumed["targets"].as_array().unwrap().iter().all(|t| t["proposalId"].is_string()), "{resumed:#}");
    let requests = o.server.chat_requests();
    assert_eq!(requests.len(), 5, "strategy, source, zhihu and the failed x step, then x again only");
    assert_eq!(requests[4].body["messages"], requests[3].body["messages"]);
    assert!(stages(&events, "started").iter().any(|s| s.starts_with("resume: Resuming after a failure at stage platform:x")), "{:?}", stages(&events, "started"));
    let log = o.t.ok("optimize.events", json!({"runId": run_id}))["events"].as_array().unwrap().clone();
    assert_eq!(kinds(&log, "assistant_message"), 4, "the recorded replies are not written again");
    assert_eq!(kinds(&log, "run_ended"), 2, "the failure's end stays in the log, then the run's");

    // A run whose model kept answering wrongly is not resumable: it would fail the same way.
    let o = setup();
    o.push(vec![Reply::text("not json"), Reply::text("still not json"), Reply::text("nope")]);
    let (failed, _) = o.start(json!({}));
    assert_eq!((failed["status"].as_str(), failed["resumable"].as_bool()), (Some("failed"), Some(false)), "{failed:#}");
    let refused = o.t.engine.call_stream("optimize.resume", json!({"runId": failed["id"]}), &mut |_| {}).unwrap_err();
    assert_eq!(refused.code, inkstone_api::ErrorCode::Conflict);
}

/// A title candidate with a line break passes no schema the model is shown: the
/// source step's schema (in the prompt and, for a server that takes one, in the
/// request) says a candidate is one line of at most 200 characters.
#[test]
fn the_schema_the_model_sees_carries_every_rule_the_engine_enforces_on_a_candidate() {
    let o = setup();
    let changes = json!({"name": "fake", "baseUrl": o.server.base_url(), "model": "fake-model", "contextWindow": 65_536, "supportsJsonSchema": true});
    o.t.ok("llmProfile.update", json!({"profile": "fake", "changes": changes}));
    o.push(vec![strategy(), source_reply(), zhihu_reply(), x_reply(&["周报越长，越没人读。", "先写结论。"])]);
    let (run, _) = o.start(json!({}));
    assert_eq!(run["status"], "ready", "{run:#}");
    let requests = o.server.chat_requests();
    let titles = &requests[1].body["response_format"]["json_schema"]["schema"]["properties"]["titles"];
    assert_eq!(titles["items"]["pattern"], inkstone_api::growth::run::ONE_LINE_PATTERN, "{titles:#}");
    // The pattern holds what the engine checks: no line break.
    let pattern = regex_lite(inkstone_api::growth::run::ONE_LINE_PATTERN);
    assert!(pattern("周报写短的三个办法") && !pattern("周报\n写短") && !pattern("周报\r写短"));
    // The prompt states the schema in full, bounds included, and the rule in words.
    let prompt = requests[1].body["messages"].as_array().unwrap().last().unwrap()["content"].as_str().unwrap().to_owned();
    let schema = inkstone_api::growth::run::source_schema();
    assert!(prompt.contains(&schema.to_string()), "{prompt}");
    assert_eq!(schema["properties"]["titles"]["items"]["maxLength"], 200);
    assert_eq!(schema["properties"]["source"]["maxLength"], 1_000_000);
    assert_eq!(schema["properties"]["summary"]["maxLength"], 2_000);
    assert!(prompt.contains("each one line (no line break) of at most 200 characters"), "{prompt}");
    let platform = inkstone_api::growth::run::platform_schema();
    assert_eq!(platform["properties"]["text"]["maxLength"], 1_000_000);
}

/// The JSON-schema validator the engine uses, as a predicate on one string.
fn regex_lite(pattern: &str) -> impl Fn(&str) -> bool {
    let validator = inkstone_api::llm::structured::Validator::new(&json!({"type": "string", "pattern": pattern})).unwrap();
    move |text: &str| validator.check(&json!(text)).is_ok()
}

/// One bad title candidate no longer fails a run whose every model call was paid for:
/// it is dropped, the others are offered, and the review names what was dropped and
/// why. No repair round is spent on it.
#[test]
fn a_title_candidate_with_a_line_break_is_dropped_and_named_and_the_run_is_ready() {
    let o = setup();
    let source = Reply::text(
        &json!({"source": NEW_SOURCE, "titles": ["周报写短的三个办法", "周报写短\n的三个办法", "周报不必长"], "summary": "Strengthened the opening hook."}).to_string(),
    );
    o.push(vec![strategy(), source, zhihu_reply(), x_reply(&["周报越长，越没人读。", "先写结论。"])]);
    let (run, events) = o.start(json!({}));
    assert_eq!(run["status"], "ready", "{run:#}");
    assert_eq!(run["titles"], json!(["周报写短的三个办法", "周报不必长"]));
    assert_eq!(o.server.chat_requests().len(), 4, "no repair round for a title candidate");
    let target = o.target(&run, "source");
    assert_eq!(target["flags"], json!(["dropped_titles"]), "{target:#}");
    let dropped: Vec<&Value> = target["risks"].as_array().unwrap().iter().filter(|r| r["check"] == "title_candidate").collect();
    assert_eq!(dropped.len(), 1, "{target:#}");
    assert_eq!(dropped[0]["location"], "title candidate “周报写短↵的三个办法”");
    assert_eq!(dropped[0]["messageId"], "title_candidate.dropped_line");
    assert!(dropped[0]["message"].as_str().unwrap().contains("one line"), "{:#}", dropped[0]);
    assert!(stages(&events, "flagged").iter().any(|s| s.starts_with("source: 1 title candidates dropped")), "{:?}", stages(&events, "flagged"));
    // The title proposal holds the two good ones, and one can be taken.
    let proposal = o.t.ok("proposal.get", json!({"proposalId": target["titleProposalId"]}));
    assert_eq!(proposal["payload"]["candidates"].as_array().unwrap().len(), 2);
    let applied = o.t.ok("optimize.apply", json!({"runId": run["id"], "source": true, "title": "周报不必长"}));
    assert_eq!(o.t.ok("project.get", json!({"projectId": o.project}))["title"], "周报不必长", "{applied:#}");
}

/// Optimizing a platform that has no saved draft spent a model call on a candidate
/// that could never be applied, then hid it. Now the platform is not adapted (no call)
/// and its target says why.
#[test]
fn a_platform_without_a_saved_draft_spends_no_model_call_and_says_why() {
    let o = setup();
    let project = o.t.ok("project.create", json!({"title": "周报", "source": SOURCE, "platforms": ["zhihu", "x"]}))["id"].as_str().unwrap().to_owned();
    o.t.ok("platformDraft.save", json!({"projectId": project, "platform": "zhihu"}));
    o.push(vec![strategy(), source_reply(), zhihu_reply()]);
    let (result, events) = stream(&o.t.engine, "optimize.start", json!({"projectId": project, "goal": "completion", "intensity": "balanced"}));
    let run = result.unwrap();
    assert_eq!(run["status"], "ready", "{run:#}");
    assert_eq!(o.server.chat_requests().len(), 3, "strategy, source, zhihu: nothing for x");
    let x = o.target(&run, "x");
    assert_eq!(x["flags"], json!(["no_saved_draft"]));
    assert_eq!(x["outcome"], "unavailable");
    assert!(x["proposalId"].is_null() && x["fitAfter"].is_null() && x["fitBefore"]["score"].is_u64(), "{x:#}");
    assert!(x["outcomeMessage"].as_str().unwrap().contains("no saved draft"), "{x:#}");
    assert!(stages(&events, "flagged").iter().any(|s| s.starts_with("platform:x: no saved x draft")), "{:?}", stages(&events, "flagged"));
    assert!(o.target(&run, "zhihu")["proposalId"].is_string());
}

/// A run is a script over the harness: its log replays through the harness's own
/// replay (`harness::replay`, the fold the live log uses), and at each model call the
/// replayed model-visible messages are exactly what that call sent (its recorded
/// hash, and the server's request without the system message): each step's own
/// conversation, its repairs included. The usage records are the run's calls, one
/// each, under the optimize purpose.
#[test]
fn an_optimize_runs_log_replays_through_the_harness_replay_to_what_each_model_call_sent() {
    let o = setup();
    o.push(vec![Reply::text("Here is my plan: shorter!"), strategy(), source_reply(), zhihu_reply(), x_reply(&["周报越长，越没人读。", "先写结论。"])]);
    let (run, _) = o.start(json!({}));
    assert_eq!(run["status"], "ready", "{run:#}");
    let log: Vec<Event> = serde_json::from_value(o.t.ok("optimize.events", json!({"runId": run["id"]}))["events"].clone()).unwrap();
    let requests = o.server.chat_requests();
    let mut calls = 0;
    for (i, event) in log.iter().enumerate() {
        let EventBody::ModelCallStarted { messages_hash, message_count, .. } = &event.body else { continue };
        let replayed = inkstone_api::harness::replay(log[..i].iter());
        assert_eq!(&replayed.messages_hash(), messages_hash, "call {calls}: the replayed messages are what it sent");
        assert_eq!(replayed.messages().len(), *message_count as usize);
        let sent: Vec<Value> = requests[calls].body["messages"].as_array().unwrap()[1..].to_vec();
        let rebuilt: Vec<Value> = replayed.messages().iter().map(|m| json!({"role": m.role, "content": m.content})).collect();
        let sent_plain: Vec<Value> = sent.iter().map(|m| json!({"role": m["role"], "content": m["content"]})).collect();
        assert_eq!(rebuilt, sent_plain, "call {calls}");
        calls += 1;
    }
    assert_eq!(calls, 5, "the strategy (with its repair), the source and two platforms");
    assert_eq!(requests.len(), 5);
    // The repaired strategy's second call carried its own conversation: the ask, the
    // bad reply and the repair; a later step starts a conversation of its own.
    assert_eq!(requests[1].body["messages"].as_array().unwrap().len(), 4);
    assert_eq!(requests[2].body["messages"].as_array().unwrap().len(), 2);
    let whole = inkstone_api::harness::replay(log.iter());
    assert!(!whole.state.model_call_open && whole.state.open_turn.is_none());
    let kinds: Vec<&str> = whole.lines().iter().map(|t| t.kind.as_str()).collect();
    assert_eq!((kinds.first(), kinds.last()), (Some(&"run_started"), Some(&"run_ended")), "{kinds:?}");
    let usage = o.t.ok("usage.list", json!({}));
    let records: Vec<&Value> = usage["records"].as_array().unwrap().iter().filter(|r| r["runId"] == run["id"]).collect();
    assert_eq!(records.len(), 5, "{usage:#}");
    assert!(records.iter().all(|r| r["purpose"] == "optimize"), "{records:?}");
}
