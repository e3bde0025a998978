//! Performance history in AI context, against the scripted model server over real HTTP
//! on a real sled store: an optimize run's recorded context carries the platform's
//! performance summary (its own layer) when the setting is on and none when it is off;
//! a cached workspace policy that turns it off wins over the setting (offline, from the
//! cache alone) and makes the setting read-only; `read_performance` returns the summary
//! and is refused while it is off; a proposal made after reading it names it as a
//! source; and no raw export row reaches any request the model server received.

use std::sync::Arc;

use inkstone_api::clock::FakeClock;
use inkstone_api::harness::{Event, EventBody, ToolStatus};
use inkstone_api::store::{Batch, Durability};
use inkstone_api::{Engine, EngineConfig, ErrorCode};
use inkstone_test_support::model_server::{ModelServer, Reply};
use inkstone_test_support::TestEngine;
use serde_json::{json, Value};

use crate::harness::stream;

/// Text only the imported rows hold (the X export's `Post text`): it must never reach
/// the model.
const RAW_MARKER: &str = "RAW-ROW-原文-7f3a";
const SOURCE: &str = "# 周报写短的办法\n\n很多人的周报写得很长。\n\n第一，先写结论。\n";
const NEW_SOURCE: &str = "# 周报写短的办法\n\n周报越长，越没人读。\n\n第一，先写结论。\n";

struct Fx {
    t: TestEngine,
    clock: Arc<FakeClock>,
    server: ModelServer,
    /// The project the AI works on (platform X only).
    project: String,
    /// Publication ids by day (Jan 1–7 typed by hand; the imported ones on Jan 31).
    posts: Vec<String>,
}

fn at(day: u32, hour: u32, minute: u32) -> chrono::DateTime<chrono::Utc> {
    chrono::NaiveDate::from_ymd_opt(2026, 1, day).unwrap().and_hms_opt(hour, minute, 0).unwrap().and_utc()
}

/// A project of its own published on X by `account` at `published`, with its URL.
fn publish(t: &TestEngine, account: &str, title: &str, published: chrono::DateTime<chrono::Utc>, url: Option<&str>) -> String {
    let id = t.ok("project.create", json!({"title": title, "source": format!("# {title}\n\n{}\n", "正文。".repeat(40)), "platforms": ["x"]}))["id"].as_str().unwrap().to_owned();
    t.ok("version.create", json!({"projectId": id}));
    let mut details = json!({"accountId": account, "publishedAt": published.to_rfc3339(), "distribution": "organic", "title": title});
    if let Some(url) = url {
        details["url"] = json!(url);
    }
    t.ok("publication.add", json!({"projectId": id, "platform": "x", "details": details}))["id"].as_str().unwrap().to_owned()
}

fn x_export(rows: &[(&str, &str, &str)]) -> Vec<u8> {
    let mut bytes = vec![0xEF, 0xBB, 0xBF];
    let mut lines = vec![
        "Post id,Date,Post text,Post Link,Impressions,Likes,Engagements,Bookmarks,Shares,New follows,Replies,Reposts,Profile visits,Detail Expands,URL Clicks,Hashtag Clicks,Permalink Clicks"
            .to_owned(),
    ];
    for (id, text, impressions) in rows {
        lines.push(format!("{id},\"Sat, Jan 31, 2026\",{text},https://x.com/inkstone/status/{id},\"{impressions}\",3,40,1,1,0,2,3,4,5,6,0,1"));
    }
    bytes.extend_from_slice(lines.join("\r\n").as_bytes());
    bytes
}

/// Nine X posts of one account: three to set the baseline, four typed by hand at 30 h,
/// two imported from X's own export 28 h after they went out. Their multiples of the
/// account's median (1000 each time): 2.0, 0.5, 3.0, 0.8 (typed), 5.0, 0.3 (imported).
fn setup() -> Fx {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(FakeClock::new(1000));
    let config = EngineConfig { clock: clock.clone(), ..EngineConfig::for_tests(dir.path()) };
    let t = TestEngine { engine: Engine::open(config).unwrap(), dir };
    // To 2026-02-01 12:00 UTC.
    clock.advance_millis((31 * 24 + 12) * 3_600_000);
    let server = ModelServer::start(Vec::new());
    t.ok("llmProfile.create", json!({"name": "fake", "baseUrl": server.base_url(), "model": "fake-model", "contextWindow": 65_536}));
    let account = t.ok("account.create", json!({"platform": "x", "name": "墨砚"}))["id"].as_str().unwrap().to_owned();
    let mut posts = Vec::new();
    for (day, impressions) in [(1, "1000"), (2, "1000"), (3, "1000"), (4, "2000"), (5, "500"), (6, "3000"), (7, "800")] {
        let p = publish(&t, &account, &format!("第{day}篇：周报"), at(day, 8, 0), None);
        t.ok("perf.add", json!({"publicationId": p, "metrics": {"impressions": impressions}, "observedAt": (at(day, 8, 0) + chrono::Duration::hours(30)).to_rfc3339()}));
        posts.push(p);
    }
    for (minute, id) in [(0, "1799000000000000001"), (10, "1799000000000000002")] {
        let url = format!("https://x.com/inkstone/status/{id}");
        posts.push(publish(&t, &account, &format!("导入的第{}篇", minute / 10 + 1), at(31, 8, minute), Some(&url)));
    }
    let file = x_export(&[("1799000000000000001", RAW_MARKER, "5,000"), ("1799000000000000002", RAW_MARKER, "300")]);
    use base64::Engine as _;
    let params = json!({"dataBase64": base64::engine::general_purpose::STANDARD.encode(&file), "fileName": "account_analytics_content.csv", "commit": true});
    let imported = t.ok("perf.import", params);
    assert_eq!(imported["snapshots"].as_array().unwrap().len(), 2, "{imported:#}");
    let project = t.ok("project.create", json!({"title": "周报", "source": SOURCE, "platforms": ["x"]}))["id"].as_str().unwrap().to_owned();
    t.ok("platformDraft.save", json!({"projectId": project, "platform": "x"}));
    Fx { t, clock, server, project, posts }
}

impl Fx {
    fn optimize(&self) -> Value {
        self.server.push(Reply::text(
            &json!({"summary": "Sharpen the opening.", "changes": ["a sharper first line"], "platforms": [{"platform": "x", "plan": "one short post"}]}).to_string(),
        ));
        self.server.push(Reply::text(&json!({"source": NEW_SOURCE, "titles": ["周报写短的办法"], "summary": "Strengthened the opening hook."}).to_string()));
        self.server.push(Reply::text(&json!({"text": "周报越长，越没人读。先写结论。", "summary": "One short post."}).to_string()));
        let (result, _) = stream(&self.t.engine, "optimize.start", json!({"projectId": self.project, "goal": "views", "intensity": "balanced", "platforms": ["x"]}));
        let run = result.unwrap_or_else(|e| panic!("optimize.start failed: {e:?}"));
        assert_eq!(run["status"], "ready", "{run:#}");
        run
    }

    fn snapshot(&self, run: &Value) -> inkstone_api::context::ContextSnapshot {
        let id = run["snapshotId"].as_str().unwrap();
        self.t.engine.kernel().store().get::<inkstone_api::context::ContextSnapshot>(id.as_bytes()).unwrap().unwrap()
    }

    /// Every request body the model server received, as text.
    fn bodies(&self) -> Vec<String> {
        self.server.requests().iter().map(|r| r.body.to_string()).collect()
    }

    fn set_policy(&self, performance_context: bool) {
        let policy = inkstone_api::policy::CachedPolicy {
            workspace_id: "ws_team".into(),
            workspace_name: "团队".into(),
            policy: inkstone_api::policy::Policy { performance_context, ..Default::default() },
            set_by: Some("Olga".into()),
            set_at: None,
            fetched_at: self.clock.now_for_test(),
        };
        let mut batch = Batch::new();
        batch.put(&policy).unwrap();
        self.t.engine.kernel().store().apply(batch, Durability::Durable).unwrap();
    }
}

trait Now {
    fn now_for_test(&self) -> chrono::DateTime<chrono::Utc>;
}

impl Now for FakeClock {
    fn now_for_test(&self) -> chrono::DateTime<chrono::Utc> {
        use inkstone_api::clock::Clock;
        self.now()
    }
}

fn performance_layer(snapshot: &inkstone_api::context::ContextSnapshot) -> Option<&inkstone_api::context::ContextLayer> {
    snapshot.layers.iter().find(|l| l.name == "performance")
}

#[test]
fn the_summary_ranks_eligible_posts_by_the_reports_multiples_with_their_evidence() {
    let fx = setup();
    let s = fx.t.ok("perf.summary", json!({"platform": "x"}));
    assert_eq!(s["metric"], "impressions");
    assert_eq!(s["bucket"], "24h");
    assert_eq!(s["eligible"], 6, "{s:#}");
    let multiples = |side: &str| s[side].as_array().unwrap().iter().map(|p| p["multiple"].as_f64().unwrap()).collect::<Vec<_>>();
    assert_eq!(multiples("strongest"), [5.0, 3.0, 2.0]);
    assert_eq!(multiples("weakest"), [0.3, 0.5, 0.8]);
    let best = &s["strongest"][0];
    assert_eq!(best["publicationId"], json!(fx.posts[7]));
    assert_eq!(best["evidence"], "measured", "imported from the platform's export");
    assert_eq!(best["format"], "post");
    assert!(best["length"].as_u64().unwrap() > 100, "{best}");
    assert_eq!(best["posted"], "2026-01-31 Sat 08:00 UTC", "{best}");
    assert_eq!(s["strongest"][1]["evidence"], "manual");
    let evidence = fx.t.ok("perf.list", json!({"publicationId": fx.posts[7]}))["snapshots"][0]["id"].clone();
    assert_eq!(best["snapshotIds"], json!([evidence]));
    let text = s["text"].as_str().unwrap();
    assert!(text.starts_with("## performance: x\n") && text.contains("5.00× (5000 impressions vs usual 1000)") && text.contains("measured"), "{text}");
    assert!(text.contains("An association, never a cause"), "{text}");
    assert!(!text.contains(RAW_MARKER), "no raw row text: {text}");
    assert!(inkstone_api::llm::estimate_tokens(text) <= inkstone_api::performance::context::SUMMARY_BUDGET_TOKENS);
    // No other platform has anything to say.
    assert_eq!(fx.t.ok("perf.summary", json!({"platform": "wechat"}))["text"], "");
}

#[test]
fn an_optimize_run_carries_the_summary_when_the_setting_is_on_and_none_when_it_is_off() {
    let fx = setup();
    let state = fx.t.ok("perf.contextSetting", json!({}));
    assert_eq!(state, json!({"enabled": true, "setting": true, "decidedByPolicy": false}), "on by default for a local workspace");
    let summary = fx.t.ok("perf.summary", json!({"platform": "x"}));
    let summary_text = summary["text"].as_str().unwrap();

    let run = fx.optimize();
    let snapshot = fx.snapshot(&run);
    let layer = performance_layer(&snapshot).unwrap_or_else(|| panic!("a performance layer in {:?}", snapshot.layers.iter().map(|l| &l.name).collect::<Vec<_>>()));
    assert!(layer.text.contains(summary_text), "the layer is the summary: {}", layer.text);
    let names: Vec<&str> = snapshot.layers.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names.last(), Some(&"apply_policy"));
    let events = fx.t.engine.session_events(run["id"].as_str().unwrap()).unwrap();
    let layers = events
        .iter()
        .find_map(|e| match &e.body {
            EventBody::ContextAssembled { layers, .. } => Some(layers.clone()),
            _ => None,
        })
        .unwrap();
    assert!(layers.iter().any(|l| l.layer == "performance" && l.tokens > 0), "the recorded context lists the layer: {layers:?}");
    // The model was sent it, and never a raw row.
    let bodies = fx.bodies();
    assert!(bodies.iter().any(|b| b.contains("## performance: x")), "the summary reached the model");
    assert!(bodies.iter().all(|b| !b.contains(RAW_MARKER)), "a raw export row reached the model");
    // Its proposals name it as a source, with the evidence.
    let proposal = fx.t.ok("proposal.get", json!({"proposalId": run["targets"][0]["proposalId"]}));
    let sources = proposal["origin"]["sources"].as_array().unwrap();
    let named = sources.iter().find(|s| s["type"] == "performanceSummary").unwrap_or_else(|| panic!("{proposal:#}"));
    assert_eq!(named["platform"], "x");
    let mut ids: Vec<Value> = summary["strongest"].as_array().unwrap().iter().chain(summary["weakest"].as_array().unwrap()).map(|p| p["snapshotIds"][0].clone()).collect();
    let mut named_ids = named["snapshotIds"].as_array().unwrap().clone();
    ids.sort_by_key(|v| v.to_string());
    named_ids.sort_by_key(|v| v.to_string());
    assert_eq!(named_ids, ids);

    // Off: the next run's context has no performance layer, and nothing of it is sent.
    let off = fx.t.ok("perf.setContextSetting", json!({"enabled": false}));
    assert_eq!(off["enabled"], false);
    let sent_before = fx.server.requests().len();
    let run = fx.optimize();
    let snapshot = fx.snapshot(&run);
    assert!(performance_layer(&snapshot).is_none(), "{:?}", snapshot.layers.iter().map(|l| &l.name).collect::<Vec<_>>());
    assert!(!snapshot.system.contains("## performance:"));
    assert!(fx.bodies()[sent_before..].iter().all(|b| !b.contains("## performance:") && !b.contains("Performance history")));
    let proposal = fx.t.ok("proposal.get", json!({"proposalId": run["targets"][0]["proposalId"]}));
    assert!(proposal["origin"]["sources"].as_array().is_none_or(|s| s.iter().all(|s| s["type"] != "performanceSummary")), "{proposal:#}");
}

#[test]
fn the_workspace_policy_off_wins_over_the_setting_offline_and_makes_it_read_only() {
    let fx = setup();
    assert_eq!(fx.t.ok("perf.contextSetting", json!({}))["enabled"], true);
    // The policy as last fetched from the team's server: no server is running.
    fx.set_policy(false);
    let state = fx.t.ok("perf.contextSetting", json!({}));
    assert_eq!(state, json!({"enabled": false, "setting": true, "decidedByPolicy": true, "policyWorkspace": "团队", "policySetBy": "Olga"}));
    // The setting is the policy's now: changing it is refused and writes nothing.
    let refused = fx.t.engine.call("perf.setContextSetting", json!({"enabled": true})).unwrap_err();
    assert_eq!(refused.code, ErrorCode::PolicyRefused);
    assert_eq!(refused.hints[0].id, "policy_performance_context");
    assert!(fx.t.engine.kernel().store().get::<inkstone_api::performance::context::ContextSetting>(b"performance_context").unwrap().is_none());

    let run = fx.optimize();
    assert!(performance_layer(&fx.snapshot(&run)).is_none(), "the policy wins over the setting");
    assert!(fx.bodies().iter().all(|b| !b.contains("## performance:")));

    // A policy that allows it leaves the person's setting in charge again.
    fx.set_policy(true);
    assert_eq!(fx.t.ok("perf.contextSetting", json!({})), json!({"enabled": true, "setting": true, "decidedByPolicy": false}));
    let run = fx.optimize();
    assert!(performance_layer(&fx.snapshot(&run)).is_some());
}

fn tool_result(events: &[Event], id: &str) -> (ToolStatus, String) {
    events
        .iter()
        .find_map(|e| match &e.body {
            EventBody::ToolResult { status, content, .. } if e.tool_use_id.as_deref() == Some(id) => Some((*status, content.clone())),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no result for {id}"))
}

#[test]
fn read_performance_returns_the_summary_is_refused_when_off_and_a_proposal_after_it_names_it() {
    let fx = setup();
    let session = fx.t.ok("session.create", json!({"projectId": fx.project}))["session"]["id"].as_str().unwrap().to_owned();
    let send = |text: &str| {
        let (result, _) = stream(&fx.t.engine, "session.submit", json!({"sessionId": session, "text": text}));
        let result = result.unwrap_or_else(|e| panic!("submit failed: {e:?}"));
        assert_eq!(result["reason"], "completed", "{result}");
    };
    fx.server.push(Reply::tool_calls(&[("r1", "read_performance", r#"{"platform":"x"}"#)]));
    fx.server.push(Reply::tool_calls(&[(
        "e1",
        "propose_source_patch",
        &json!({"summary": "先写结论", "edits": [{"find": "很多人的周报写得很长。", "replace": "周报越长，越没人读。"}]}).to_string(),
    )]));
    fx.server.push(Reply::text("提议好了。"));
    send("参考我在 X 上表现好的帖子，改开头");

    let events = fx.t.engine.session_events(&session).unwrap();
    let (status, content) = tool_result(&events, "r1");
    assert_eq!(status, ToolStatus::Success, "{content}");
    let result: Value = serde_json::from_str(&content).unwrap();
    let summary = fx.t.ok("perf.summary", json!({"platform": "x"}));
    assert_eq!(result["summary"], summary["text"], "the tool result is the summary");
    let ids: Vec<Value> = summary["strongest"].as_array().unwrap().iter().chain(summary["weakest"].as_array().unwrap()).map(|p| p["snapshotIds"][0].clone()).collect();
    assert_eq!(result["snapshotIds"], json!(ids));
    // The drafting context carried it too, as its own layer.
    let first = fx.server.chat_requests()[0].body["messages"][0]["content"].as_str().unwrap().to_owned();
    assert!(first.contains(&format!("# Performance history (read_performance {{platform}} reads it again)\n{}", summary["text"].as_str().unwrap())), "{first}");

    let proposal = fx.t.ok("proposal.list", json!({"projectId": fx.project, "status": "proposed"}))["proposals"][0].clone();
    let sources = proposal["origin"]["sources"].as_array().unwrap();
    let read = sources.iter().find(|s| s["type"] == "performanceSummary" && s["toolUseId"] == "r1").unwrap_or_else(|| panic!("read_performance among {sources:#?}"));
    assert_eq!(read["platform"], "x");
    assert_eq!(read["snapshotIds"], json!(ids));
    let why = fx.t.ok("proposal.why", json!({"proposalId": proposal["id"]}));
    assert!(why["sources"].as_array().unwrap().iter().any(|s| s["source"]["type"] == "performanceSummary"), "{why:#}");
    assert!(fx.bodies().iter().all(|b| !b.contains(RAW_MARKER)), "a raw export row reached the model");

    // Off: the tool is refused with a clear error, and nothing of the history is sent.
    fx.t.ok("perf.setContextSetting", json!({"enabled": false}));
    let sent_before = fx.server.requests().len();
    fx.server.push(Reply::tool_calls(&[("r2", "read_performance", r#"{"platform":"x"}"#)]));
    fx.server.push(Reply::text("好的。"));
    send("再看看表现");
    let events = fx.t.engine.session_events(&session).unwrap();
    let (status, content) = tool_result(&events, "r2");
    assert_eq!(status, ToolStatus::ToolError, "{content}");
    assert!(content.contains("use performance history in AI context") && content.contains("off"), "{content}");
    // (The earlier tool result stays in the conversation; the context has no layer.)
    let systems: Vec<String> = fx.server.requests()[sent_before..].iter().map(|r| r.body["messages"][0]["content"].as_str().unwrap_or("").to_owned()).collect();
    assert!(!systems.is_empty() && systems.iter().all(|s| !s.contains("# Performance history")), "no summary in the context after it was turned off");
    // Not asked for permission: a read-only tool runs without a prompt.
    assert!(!events.iter().any(|e| matches!(e.body, EventBody::ApprovalRequested { .. }) && e.tool_use_id.as_deref() == Some("r1")));
}
