//! Performance data through the JSON API on real sled: accounts, publications (time
//! zones, defaults, the draft set to published, remove/restore/purge keeping metrics
//! until confirmed), the AI changes each publication carries derived from version
//! origins, and metric snapshots typed by hand (absent never 0, units, qualifiers,
//! append-only). Every refusal is checked to write nothing.

use inkstone_api::kernel::Kernel;
use inkstone_api::proposals::{self, apply_edits, Edit, NewProposal, Origin, Payload, ProposalKind, Target};
use inkstone_api::store::Kind;
use inkstone_api::ErrorCode;
use inkstone_test_support::TestEngine;
use serde_json::{json, Value};

const SOURCE: &str = "# 春天\n\n第一段：今天天气很好。\n\n第二段：我们去公园散步。\n";

fn err(t: &TestEngine, method: &str, params: Value) -> inkstone_api::ApiError {
    match t.engine.call(method, params) {
        Ok(value) => panic!("{method} succeeded: {value}"),
        Err(error) => error,
    }
}

fn project(t: &TestEngine) -> String {
    t.ok("project.create", json!({"title": "春天", "source": SOURCE, "platforms": ["wechat", "x", "xiaohongshu"]}))["id"].as_str().unwrap().to_owned()
}

/// Accepts an AI source patch (`find` → `replace`) of a session, making a version.
fn accept_ai_patch(t: &TestEngine, project_id: &str, find: &str, replace: &str) -> (String, u32) {
    let kernel: &Kernel = t.engine.kernel();
    let project = inkstone_api::project::load(kernel.store(), project_id).unwrap();
    let proposed = apply_edits(&project.source, &[Edit { find: find.into(), replace: replace.into() }]).unwrap();
    let origin =
        Origin { session_id: Some("ses_a".into()), model: "scripted".into(), profile_id: "llm_test".into(), prompt_version: proposals::PROMPT_VERSION.into(), ..Origin::default() };
    let proposal = proposals::create(
        kernel,
        NewProposal {
            project_id: project_id.to_owned(),
            kind: ProposalKind::SourcePatch,
            target: Target::Source,
            summary: "润色".into(),
            payload: Payload::Text { base_text: project.source, proposed_text: proposed },
            origin,
        },
    )
    .unwrap();
    let accepted = t.ok("proposal.accept", json!({"proposalId": proposal.id, "expectedBase": project.revision}));
    (proposal.id, accepted["version"]["number"].as_u64().unwrap() as u32)
}

/// Every record count of the performance trees, to prove a refusal wrote nothing.
fn counts(t: &TestEngine) -> [usize; 3] {
    let store = t.engine.kernel().store();
    [store.count(Kind::PerfAccounts), store.count(Kind::Publications), store.count(Kind::MetricSnapshots)]
}

#[test]
fn accounts_are_a_small_per_workspace_list() {
    let t = TestEngine::new();
    let a = t.ok("account.create", json!({"platform": "wechat", "name": "墨砚官方号", "handle": "gh_123"}));
    assert!(a["id"].as_str().unwrap().starts_with("acc_"));
    assert_eq!(a["handle"], "gh_123");
    let before = counts(&t);
    let dup = err(&t, "account.create", json!({"platform": "wechat", "name": "墨砚官方号"}));
    assert_eq!(dup.code, ErrorCode::Validation);
    assert_eq!(dup.message_id.as_deref(), Some("perf.account_exists"));
    assert_eq!(err(&t, "account.create", json!({"platform": "wechat", "name": "  "})).code, ErrorCode::Validation);
    assert_eq!(err(&t, "account.create", json!({"platform": "weibo", "name": "x"})).code, ErrorCode::Validation);
    assert_eq!(counts(&t), before, "refusals write nothing");
    // The same name on another platform is another account.
    t.ok("account.create", json!({"platform": "x", "name": "墨砚官方号"}));
    let renamed = t.ok("account.update", json!({"accountId": a["id"], "name": "墨砚", "handle": ""}));
    assert_eq!(renamed["name"], "墨砚");
    assert_eq!(renamed["handle"], Value::Null);
    assert_eq!(t.ok("account.list", json!({}))["accounts"].as_array().unwrap().len(), 2);
    assert_eq!(err(&t, "account.update", json!({"accountId": "prj_1"})).code, ErrorCode::Validation, "an id of another kind");
    assert_eq!(err(&t, "account.update", json!({"accountId": "acc_missing"})).code, ErrorCode::NotFound);
}

#[test]
fn a_publication_records_version_account_time_zone_and_defaults() {
    let t = TestEngine::new();
    let id = project(&t);
    // No version yet: nothing to say was published.
    let before = counts(&t);
    let none = err(&t, "publication.add", json!({"projectId": id, "platform": "wechat"}));
    assert_eq!(none.code, ErrorCode::Validation);
    assert_eq!(none.hints[0].id, "save_version_first");
    assert_eq!(counts(&t), before);

    t.ok("version.create", json!({"projectId": id}));
    let account = t.ok("account.create", json!({"platform": "wechat", "name": "墨砚"}));
    let x_account = t.ok("account.create", json!({"platform": "x", "name": "inkstone"}));
    let p = t.ok(
        "publication.add",
        json!({"projectId": id, "platform": "wechat", "details": {
            "accountId": account["id"], "url": "https://mp.weixin.qq.com/s/abc", "publishedAt": "2026-03-04 12:30",
            "platformPostId": "2247483650_1"
        }}),
    );
    assert!(p["id"].as_str().unwrap().starts_with("pub_"));
    assert_eq!(p["versionNumber"], 1);
    assert_eq!(p["title"], "春天", "the version's title by default");
    assert_eq!(p["timeZone"], "Asia/Shanghai", "Beijing time for the Chinese platforms");
    assert_eq!(p["publishedAt"], "2026-03-04T04:30:00Z", "12:30 in Shanghai is 04:30 UTC");
    assert_eq!(p["format"], "article");
    assert_eq!(p["distribution"], "notified");
    assert_eq!(p["visibility"], "public");

    let x = t.ok("publication.add", json!({"projectId": id, "platform": "x", "details": {"publishedAt": "2026-03-04T18:42:00+00:00"}}));
    assert_eq!(x["timeZone"], "UTC");
    assert_eq!(x["format"], "post");
    assert_eq!(x["publishedAt"], "2026-03-04T18:42:00Z");

    // Refusals, each naming its field and writing nothing.
    let before = counts(&t);
    for (details, field) in [
        (json!({"accountId": x_account["id"]}), "accountId"),
        (json!({"url": "mp.weixin.qq.com/s/abc"}), "url"),
        (json!({"publishedAt": "next tuesday"}), "publishedAt"),
        (json!({"timeZone": "Mars/Olympus"}), "timeZone"),
        (json!({"versionNumber": 9}), "versionNumber"),
        (json!({"title": "长".repeat(201)}), "title"),
    ] {
        let e = err(&t, "publication.add", json!({"projectId": id, "platform": "wechat", "details": details}));
        assert_eq!(e.code, ErrorCode::Validation, "{details}");
        assert_eq!(e.details.as_ref().unwrap()["field"], field, "{details}: {e:?}");
    }
    assert_eq!(err(&t, "publication.add", json!({"projectId": id, "platform": "wechat", "details": {"colour": "red"}})).code, ErrorCode::Validation);
    assert_eq!(err(&t, "publication.add", json!({"projectId": "prj_nope", "platform": "wechat"})).code, ErrorCode::NotFound);
    assert_eq!(counts(&t), before);

    let edited = t.ok("publication.edit", json!({"publicationId": p["id"], "details": {"distribution": "boosted", "timeZone": "UTC", "publishedAt": "2026-03-04 04:30"}}));
    assert_eq!(edited["distribution"], "boosted");
    assert_eq!(edited["publishedAt"], "2026-03-04T04:30:00Z");
    let cleared = t.ok("publication.edit", json!({"publicationId": p["id"], "details": {"accountId": ""}}));
    assert_eq!(cleared["accountId"], Value::Null);

    let list = t.ok("publication.list", json!({"projectId": id}));
    let pubs = list["publications"].as_array().unwrap();
    assert_eq!(pubs.len(), 2);
    assert_eq!(pubs[0]["publication"]["platform"], "x", "newest publishing time first");
    assert_eq!(t.ok("publication.list", json!({"platform": "wechat"}))["publications"].as_array().unwrap().len(), 1);
}

#[test]
fn setting_a_draft_published_records_the_publication_in_the_same_write() {
    let t = TestEngine::new();
    let id = project(&t);
    t.ok("version.create", json!({"projectId": id}));
    t.ok("platformDraft.save", json!({"projectId": id, "platform": "xiaohongshu"}));
    // A publication with any other status is refused, and nothing changes.
    let draft_before = t.ok("platformDraft.get", json!({"projectId": id, "platform": "xiaohongshu"}));
    let e = err(&t, "platformDraft.setStatus", json!({"projectId": id, "platform": "xiaohongshu", "status": "ready", "publication": {}}));
    assert_eq!(e.code, ErrorCode::Validation);
    assert_eq!(t.ok("platformDraft.get", json!({"projectId": id, "platform": "xiaohongshu"})), draft_before);
    // A bad detail refuses the status change too.
    let e = err(&t, "platformDraft.setStatus", json!({"projectId": id, "platform": "xiaohongshu", "status": "published", "publication": {"url": "not a url"}}));
    assert_eq!(e.code, ErrorCode::Validation);
    assert_eq!(t.ok("platformDraft.get", json!({"projectId": id, "platform": "xiaohongshu"}))["status"], "draft");
    assert_eq!(counts(&t)[1], 0);

    let syncs = t.engine.kernel().store().durable_sync_count();
    let draft = t.ok(
        "platformDraft.setStatus",
        json!({"projectId": id, "platform": "xiaohongshu", "status": "published", "publication": {"url": "https://www.xiaohongshu.com/explore/65f0", "publishedAt": "2026-03-05 20:00"}}),
    );
    assert_eq!(t.engine.kernel().store().durable_sync_count(), syncs + 1, "one transaction");
    assert_eq!(draft["status"], "published");
    let pubs = t.ok("publication.list", json!({"projectId": id}))["publications"].as_array().unwrap().clone();
    assert_eq!(pubs.len(), 1);
    let p = &pubs[0]["publication"];
    assert_eq!(p["platform"], "xiaohongshu");
    assert_eq!(p["versionNumber"], 1, "the version the draft was compiled from");
    assert_eq!(p["format"], "imageText");
    assert_eq!(p["publishedAt"], "2026-03-05T12:00:00Z");
}

#[test]
fn each_publication_carries_the_ai_changes_accepted_since_the_previous_one_on_its_platform() {
    let t = TestEngine::new();
    let id = project(&t);
    t.ok("version.create", json!({"projectId": id})); // v1, by hand
    let (first_ai, v2) = accept_ai_patch(&t, &id, "天气很好", "天气不错");
    assert_eq!(v2, 2);
    let p1 = t.ok("publication.add", json!({"projectId": id, "platform": "wechat", "details": {"publishedAt": "2026-03-01 08:00"}}));
    assert_eq!(p1["versionNumber"], 2);
    let changes = p1["aiChanges"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{p1}");
    assert_eq!(changes[0]["proposalId"], first_ai.as_str());
    assert_eq!(changes[0]["proposalKind"], "source_patch");
    assert_eq!(changes[0]["sessionId"], "ses_a");
    assert_eq!(changes[0]["versionNumber"], 2);
    assert_eq!(p1["previousVersionNumber"], Value::Null);

    t.ok("project.update", json!({"projectId": id, "source": format!("{SOURCE}\n手写的一段。\n")}));
    t.ok("version.create", json!({"projectId": id})); // v3, by hand
    let (second_ai, v4) = accept_ai_patch(&t, &id, "去公园散步", "去河边散步");
    let p2 = t.ok("publication.add", json!({"projectId": id, "platform": "wechat", "details": {"publishedAt": "2026-03-08 08:00"}}));
    assert_eq!(p2["versionNumber"], v4);
    assert_eq!(p2["previousVersionNumber"], 2);
    let ids: Vec<&str> = p2["aiChanges"].as_array().unwrap().iter().map(|c| c["proposalId"].as_str().unwrap()).collect();
    assert_eq!(ids, vec![second_ai.as_str()], "only what came after the previous wechat publication");

    // Another platform counts from its own previous publication: all of them.
    let x = t.ok("publication.add", json!({"projectId": id, "platform": "x", "details": {"publishedAt": "2026-03-09 08:00"}}));
    assert_eq!(x["aiChanges"].as_array().unwrap().len(), 2);

    // Republishing the same version carries nothing new.
    let again = t.ok("publication.add", json!({"projectId": id, "platform": "wechat", "details": {"publishedAt": "2026-03-10 08:00"}}));
    assert_eq!(again["aiChanges"], json!([]));

    // Removing the first wechat publication re-derives its neighbours: the second now
    // counts from the start; restoring puts the base back.
    t.ok("publication.remove", json!({"publicationId": p1["id"]}));
    let p2_now = t.ok("publication.get", json!({"publicationId": p2["id"]}))["publication"].clone();
    assert_eq!(p2_now["aiChanges"].as_array().unwrap().len(), 2);
    assert_eq!(p2_now["previousVersionNumber"], Value::Null);
    t.ok("publication.restore", json!({"publicationId": p1["id"]}));
    let p2_now = t.ok("publication.get", json!({"publicationId": p2["id"]}))["publication"].clone();
    assert_eq!(p2_now["aiChanges"].as_array().unwrap().len(), 1);

    // Moving the second publication's version back re-derives it and the one after it.
    t.ok("publication.edit", json!({"publicationId": p2["id"], "details": {"versionNumber": 3}}));
    let later = t.ok("publication.get", json!({"publicationId": again["id"]}))["publication"].clone();
    assert_eq!(later["previousVersionNumber"], 3);
    assert_eq!(later["aiChanges"].as_array().unwrap().len(), 1, "v4's change is now the third publication's");
}

#[test]
fn manual_metrics_keep_units_qualifiers_and_raw_text_and_absent_is_never_zero() {
    let t = TestEngine::new();
    let id = project(&t);
    t.ok("version.create", json!({"projectId": id}));
    let p = t.ok("publication.add", json!({"projectId": id, "platform": "wechat", "details": {"publishedAt": "2026-01-01 08:00"}}));
    let snap = t.ok(
        "perf.add",
        json!({"publicationId": p["id"], "observedAt": "2026-01-02 08:00", "metrics": {
            "readers": "10w+", "views": "1.2万", "read_completion": "45.5%", "sharers": "1,234",
            "likes": "-", "comments": "", "avg_read_s": "95", "extra.赞赏人数": "12"
        }}),
    );
    assert!(snap["id"].as_str().unwrap().starts_with("snp_"));
    assert_eq!(snap["ageHours"], 24.0);
    assert_eq!(snap["window"]["type"], "cumulative");
    assert_eq!(snap["source"]["type"], "manual");
    let m = &snap["metrics"];
    assert_eq!(m["readers"], json!({"value": 100000.0, "unit": "count", "qualifier": "lowerBound", "raw": "10w+"}));
    assert_eq!(m["views"], json!({"value": 12000.0, "unit": "count", "qualifier": "rounded", "raw": "1.2万"}));
    assert_eq!(m["read_completion"]["unit"], "ratio");
    assert!((m["read_completion"]["value"].as_f64().unwrap() - 0.455).abs() < 1e-12);
    assert_eq!(m["sharers"]["value"], 1234.0);
    assert_eq!(m["avg_read_s"]["unit"], "seconds");
    assert!(m.get("likes").is_none(), "`-` is not reported: absent, never 0");
    assert!(m.get("comments").is_none(), "an empty value is absent");
    assert_eq!(snap["extras"]["extra.wechat.赞赏人数"]["value"], 12.0);

    // Refusals write nothing.
    let before = counts(&t);
    for (metrics, id) in [
        (json!({"readers": "lots"}), "perf.not_a_number"),
        (json!({"read_completion": "45"}), "perf.rate_form"),
        (json!({"views": "12%"}), "perf.not_a_rate"),
        (json!({"reads": "12"}), "perf.unknown_metric"),
        (json!({"likes": "-"}), "perf.empty_snapshot"),
    ] {
        let e = err(&t, "perf.add", json!({"publicationId": p["id"], "metrics": metrics}));
        assert_eq!(e.code, ErrorCode::Validation, "{metrics}");
        assert_eq!(e.message_id.as_deref(), Some(id), "{metrics}: {e:?}");
    }
    let early = err(&t, "perf.add", json!({"publicationId": p["id"], "observedAt": "2025-12-31 08:00", "metrics": {"views": "1"}}));
    assert_eq!(early.message_id.as_deref(), Some("perf.observed_before_published"));
    assert_eq!(counts(&t), before);

    // Append-only: a second observation is a second snapshot; the list is in time order.
    t.ok("perf.add", json!({"publicationId": p["id"], "observedAt": "2026-01-08 08:00", "metrics": {"views": "2.5万"}, "window": {"type": "period", "start": "2026-01-01", "end": "2026-01-07"}}));
    let list = t.ok("perf.list", json!({"publicationId": p["id"]}));
    let snaps = list["snapshots"].as_array().unwrap();
    assert_eq!(snaps.len(), 2);
    assert_eq!(snaps[0]["metrics"]["views"]["raw"], "1.2万", "the first is untouched");
    assert_eq!(snaps[1]["ageHours"], 168.0);
    assert_eq!(snaps[1]["window"], json!({"type": "period", "start": "2026-01-01", "end": "2026-01-07"}));
    let view = t.ok("publication.get", json!({"publicationId": p["id"]}));
    assert_eq!(view["snapshotCount"], 2);
    assert_eq!(view["latest"]["id"], snaps[1]["id"]);
    assert!(t.ok("perf.keys", json!({}))["keys"].as_array().unwrap().iter().any(|k| k["key"] == "zhihu_likes" && k["unit"] == "count"));
}

#[test]
fn removal_keeps_metrics_until_confirmed() {
    let t = TestEngine::new();
    let id = project(&t);
    t.ok("version.create", json!({"projectId": id}));
    let account = t.ok("account.create", json!({"platform": "x", "name": "inkstone"}));
    let p = t.ok("publication.add", json!({"projectId": id, "platform": "x", "details": {"accountId": account["id"], "publishedAt": "2025-12-31 08:00"}}));
    t.ok("perf.add", json!({"publicationId": p["id"], "metrics": {"impressions": "1,000"}}));

    let in_use = err(&t, "account.delete", json!({"accountId": account["id"]}));
    assert_eq!(in_use.code, ErrorCode::Conflict);

    // Purging a live publication is refused; so is an unconfirmed purge.
    assert_eq!(err(&t, "publication.purge", json!({"publicationId": p["id"], "confirm": true})).message_id.as_deref(), Some("perf.purge_not_removed"));
    let removed = t.ok("publication.remove", json!({"publicationId": p["id"]}));
    assert!(removed["removedAt"].is_string());
    assert_eq!(t.ok("publication.list", json!({"projectId": id}))["publications"], json!([]));
    assert_eq!(t.ok("publication.list", json!({"projectId": id, "includeRemoved": true}))["publications"].as_array().unwrap().len(), 1);
    assert_eq!(t.ok("perf.list", json!({"publicationId": p["id"]}))["snapshots"].as_array().unwrap().len(), 1, "metrics kept while removed");
    assert_eq!(err(&t, "perf.add", json!({"publicationId": p["id"], "metrics": {"likes": "1"}})).message_id.as_deref(), Some("perf.publication_removed"));

    let restored = t.ok("publication.restore", json!({"publicationId": p["id"]}));
    assert_eq!(restored["removedAt"], Value::Null);
    assert_eq!(t.ok("publication.get", json!({"publicationId": p["id"]}))["snapshotCount"], 1);

    t.ok("publication.remove", json!({"publicationId": p["id"]}));
    assert_eq!(err(&t, "publication.purge", json!({"publicationId": p["id"], "confirm": false})).code, ErrorCode::Validation);
    assert_eq!(counts(&t)[2], 1);
    let purged = t.ok("publication.purge", json!({"publicationId": p["id"], "confirm": true}));
    assert_eq!(purged["snapshotsDeleted"], 1);
    assert_eq!(counts(&t), [1, 0, 0]);
    assert_eq!(err(&t, "publication.get", json!({"publicationId": p["id"]})).code, ErrorCode::NotFound);
    t.ok("account.delete", json!({"accountId": account["id"]}));
}

#[test]
fn publications_and_snapshots_survive_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let open = || inkstone_api::Engine::open(inkstone_api::EngineConfig::for_tests(dir.path())).unwrap();
    let ok = |engine: &inkstone_api::Engine, method: &str, params: Value| engine.call(method, params).unwrap_or_else(|e| panic!("{method}: {e:?}"));
    let (pid, snapshot) = {
        let engine = open();
        let id = ok(&engine, "project.create", json!({"title": "春天", "source": SOURCE}))["id"].clone();
        ok(&engine, "version.create", json!({"projectId": id}));
        let p = ok(&engine, "publication.add", json!({"projectId": id, "platform": "zhihu", "details": {"publishedAt": "2026-01-01 08:00"}}));
        let s = ok(&engine, "perf.add", json!({"publicationId": p["id"], "metrics": {"upvotes": "321", "zhihu_likes": "12"}}));
        (p["id"].clone(), s)
    };
    let engine = open();
    let view = ok(&engine, "publication.get", json!({"publicationId": pid}));
    assert_eq!(view["latest"], snapshot);
    assert_eq!(view["latest"]["metrics"]["upvotes"]["value"], 321.0);
    assert_eq!(view["latest"]["metrics"]["zhihu_likes"]["value"], 12.0, "赞同 and 喜欢 stay two keys");
}

mod number_forms {
    use inkstone_api::performance::numbers::{parse, Qualifier};
    use proptest::prelude::*;

    /// `n` with thousands separators: 1234567 → 1,234,567.
    fn grouped(n: u64) -> String {
        let digits = n.to_string();
        let mut out = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// Every way a count is written reads back as the same number, with the right
        /// qualifier; never as 0 unless it is 0.
        #[test]
        fn counts_read_back_in_every_form(n in 0u64..1_000_000_000_000, tenths in 1u32..100_000, quoted in any::<bool>()) {
            let q = |s: String| if quoted { format!("\"{s}\"") } else { s };
            let exact = parse(&q(n.to_string())).unwrap().unwrap();
            prop_assert_eq!((exact.value, exact.qualifier, exact.percent), (n as f64, Qualifier::Exact, false));
            let with_commas = parse(&q(grouped(n))).unwrap().unwrap();
            prop_assert_eq!(with_commas.value, n as f64);
            let bound = parse(&format!("{n}+")).unwrap().unwrap();
            prop_assert_eq!((bound.value, bound.qualifier), (n as f64, Qualifier::LowerBound));
            // x.y万 / x.yw: tenths of ten thousand.
            let text = format!("{}.{}", tenths / 10, tenths % 10);
            for suffix in ["万", "w", "W"] {
                let p = parse(&format!("{text}{suffix}")).unwrap().unwrap();
                prop_assert_eq!((p.value, p.qualifier), (f64::from(tenths) * 1000.0, Qualifier::Rounded));
                let p = parse(&format!("{text}{suffix}+")).unwrap().unwrap();
                prop_assert_eq!((p.value, p.qualifier), (f64::from(tenths) * 1000.0, Qualifier::LowerBound));
            }
            let k = parse(&format!("{text}k")).unwrap().unwrap();
            prop_assert_eq!(k.value, f64::from(tenths) * 100.0);
            let yi = parse(&format!("{text}亿")).unwrap().unwrap();
            prop_assert_eq!(yi.value, f64::from(tenths) * 10_000_000.0);
        }

        /// Percent texts keep the number before the sign and say they were percent.
        #[test]
        fn percents_keep_their_number(hundredths in 0u32..10_001) {
            let text = format!("{}.{:02}%", hundredths / 100, hundredths % 100);
            let p = parse(&text).unwrap().unwrap();
            prop_assert!(p.percent);
            prop_assert!((p.value - f64::from(hundredths) / 100.0).abs() < 1e-9);
        }

        /// Any text either parses, is "missing", or is refused: never a panic, and a
        /// refused text is never taken for a number.
        #[test]
        fn no_text_panics(text in "\\PC{0,16}") {
            let _ = parse(&text);
        }
    }
}

/// Fixture exports, built here from the exact headers the research lists (the generator
/// is this code): X content CSV with a BOM, CRLF and quoted thousands; X's legacy file
/// with an id a spreadsheet mangled; X's by-day overview; a Douyin 作品列表 re-saved as a
/// GB18030 CSV with `-` for missing values and a 自见 row; a Xiaohongshu list with a
/// title row above the header.
mod exports {
    pub fn x_content() -> Vec<u8> {
        let mut bytes = vec![0xEF, 0xBB, 0xBF];
        let text = [
            "Post id,Date,Post text,Post Link,Impressions,Likes,Engagements,Bookmarks,Shares,New follows,Replies,Reposts,Profile visits,Detail Expands,URL Clicks,Hashtag Clicks,Permalink Clicks",
            "1798000000000000001,\"Fri, Jun 5, 2026\",春天来了 — a thread,https://x.com/inkstone/status/1798000000000000001,\"12,345\",321,\"1,002\",45,6,7,8,9,10,11,12,0,3",
            "1798000000000000002,\"Sat, Jun 6, 2026\",Another post,https://x.com/inkstone/status/1798000000000000002,900,-,40,,1,0,2,3,4,5,6,0,1",
        ]
        .join("\r\n");
        bytes.extend_from_slice(text.as_bytes());
        bytes.extend_from_slice(b"\r\n");
        bytes
    }

    pub fn x_legacy() -> Vec<u8> {
        let header = [
            "Tweet id",
            "Tweet permalink",
            "Tweet text",
            "time",
            "impressions",
            "engagements",
            "engagement rate",
            "retweets",
            "replies",
            "likes",
            "user profile clicks",
            "url clicks",
            "hashtag clicks",
            "detail expands",
            "permalink clicks",
            "app opens",
            "app installs",
            "follows",
            "email tweet",
            "dial phone",
            "media views",
            "media engagements",
        ];
        let row = [
            "1.79800E+18",
            "https://twitter.com/inkstone/status/1798000000000000001",
            "春天来了",
            "2026-06-05 08:00 +0000",
            "2000",
            "66",
            "0.033",
            "4",
            "5",
            "30",
            "7",
            "8",
            "0",
            "9",
            "10",
            "0",
            "0",
            "2",
            "0",
            "0",
            "0",
            "0",
        ];
        let quote = |cells: &[&str]| cells.iter().map(|c| format!("\"{c}\"")).collect::<Vec<_>>().join(",");
        format!("{}\n{}\n", quote(&header), quote(&row)).into_bytes()
    }

    pub fn x_overview() -> Vec<u8> {
        b"Date,Impressions,Likes,Engagements,Bookmarks,Shares,New follows,Unfollows,Replies,Reposts,Profile visits,Create Post,Video views,Media views\n\"Fri, Jun 5, 2026\",100,1,2,0,0,0,0,0,0,0,1,0,0\n".to_vec()
    }

    pub fn douyin_gb18030() -> Vec<u8> {
        let text = [
            "作品名称,发布时间,体裁,审核状态,播放量,完播率,5s完播率,作品时长,封面点击率,2s跳出率,平均播放时长,点赞量,评论量,分享量,收藏量,主页访问量,粉丝增量",
            "春天来了 #春天 #散步,2026-03-05 20:00:00,图文,公开,1.2万,0.31,0.45,-,0.082,0.4,12.5,860,45,—,120,33,12",
            "别的作品,2026-03-06 09:00:00,视频,自见,500,0.2,0.3,30,0.05,0.5,8,10,1,0,2,1,0",
        ]
        .join("\r\n");
        let (bytes, _, errors) = encoding_rs::GB18030.encode(&text);
        assert!(!errors);
        bytes.into_owned()
    }

    pub fn xiaohongshu() -> Vec<u8> {
        [
            "笔记列表明细表（2026-03-01 至 2026-03-31）,,,,,,,,,,,,",
            "笔记标题,首次发布时间,体裁,曝光,观看量,封面点击率,点赞,评论,收藏,涨粉,分享,人均观看时长,弹幕",
            "春天,2026年03月05日20时00分05秒,图文,10w+,3.4w,0.112,1200,88,460,35,20,41,0",
        ]
        .join("\n")
        .into_bytes()
    }
}

fn b64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn import(t: &TestEngine, bytes: &[u8], extra: Value) -> Result<Value, inkstone_api::ApiError> {
    let mut params = json!({"dataBase64": b64(bytes), "fileName": "export.csv"});
    for (k, v) in extra.as_object().unwrap() {
        params[k] = v.clone();
    }
    t.engine.call("perf.import", params)
}

#[test]
fn an_x_content_export_previews_then_commits_once() {
    let t = TestEngine::new();
    let id = project(&t);
    t.ok("version.create", json!({"projectId": id}));
    // One publication named by its URL (the post id is read from it), one not recorded.
    let p = t.ok(
        "publication.add",
        json!({"projectId": id, "platform": "x", "details": {"url": "https://x.com/inkstone/status/1798000000000000001", "publishedAt": "2026-06-05 08:00"}}),
    );
    let file = exports::x_content();

    let before = counts(&t);
    let preview = import(&t, &file, json!({})).unwrap();
    assert_eq!(counts(&t), before, "a preview writes nothing");
    assert_eq!(preview["committed"], false);
    let pv = &preview["preview"];
    assert_eq!(pv["importer"], "x-content@v1");
    assert_eq!(pv["encoding"], "UTF-8");
    assert_eq!(pv["matched"], 1);
    assert_eq!(pv["unmatched"], 1);
    let rows = pv["rows"].as_array().unwrap();
    assert_eq!(rows[0]["row"], 2);
    assert_eq!(rows[0]["outcome"], json!({"status": "matched", "publicationId": p["id"], "by": "postId"}));
    assert_eq!(rows[0]["metrics"]["impressions"], json!({"value": 12345.0, "unit": "count", "qualifier": "exact", "raw": "12,345"}));
    assert_eq!(rows[0]["metrics"]["saves"]["value"], 45.0, "Bookmarks are saves");
    assert_eq!(rows[1]["outcome"]["status"], "unmatched");
    assert!(rows[1]["metrics"].get("likes").is_none(), "`-` is absent, never 0");
    assert!(rows[1]["metrics"].get("saves").is_none(), "an empty cell is absent");

    // A commit with an unmatched row is refused and writes nothing.
    let e = import(&t, &file, json!({"commit": true})).unwrap_err();
    assert_eq!(e.message_id.as_deref(), Some("perf.rows_unresolved"));
    assert_eq!(counts(&t), before);

    let done = import(&t, &file, json!({"commit": true, "assign": {"3": "skip"}})).unwrap();
    assert_eq!(done["committed"], true);
    assert_eq!(done["snapshots"].as_array().unwrap().len(), 1);
    let snaps = t.ok("perf.list", json!({"publicationId": p["id"]}))["snapshots"].as_array().unwrap().clone();
    assert_eq!(snaps.len(), 1);
    let source = &snaps[0]["source"];
    assert_eq!(source["type"], "import");
    assert_eq!(source["importer"], "x-content");
    assert_eq!(source["importerVersion"], 1);
    assert_eq!(source["row"], 2);
    assert!(source["fileSha256"].as_str().unwrap().starts_with("sha256:"));
    assert_eq!(source["rawRow"][4], json!(["Impressions", "12,345"]), "the raw row is kept");
    assert_eq!(snaps[0]["extras"]["extra.x.Detail Expands"]["value"], 11.0, "unmapped numbers are platform extras");

    // Re-importing the same file changes nothing.
    let after = counts(&t);
    let again = import(&t, &file, json!({"commit": true, "assign": {"3": "skip"}})).unwrap();
    assert_eq!(again["committed"], false);
    assert!(again["preview"]["alreadyImported"].is_string());
    assert_eq!(counts(&t), after);
}

#[test]
fn legacy_x_ids_mangled_by_a_spreadsheet_are_recovered_from_the_permalink() {
    let t = TestEngine::new();
    let id = project(&t);
    t.ok("version.create", json!({"projectId": id}));
    let p = t.ok("publication.add", json!({"projectId": id, "platform": "x", "details": {"platformPostId": "1798000000000000001", "publishedAt": "2026-06-05 08:00"}}));
    let pv = import(&t, &exports::x_legacy(), json!({})).unwrap()["preview"].clone();
    assert_eq!(pv["importer"], "x-tweet-activity@v1");
    let row = &pv["rows"][0];
    assert_eq!(row["postId"], "1798000000000000001");
    assert_eq!(row["outcome"]["publicationId"], p["id"]);
    assert_eq!(row["metrics"]["platform_engagement_rate"]["unit"], "ratio");
    assert_eq!(row["metrics"]["platform_engagement_rate"]["value"], 0.033);
    assert_eq!(row["publishedAt"], "2026-06-05T08:00:00Z");
}

#[test]
fn a_by_day_file_and_files_that_are_not_exports_are_refused_writing_nothing() {
    let t = TestEngine::new();
    let before = counts(&t);
    let e = import(&t, &exports::x_overview(), json!({"commit": true})).unwrap_err();
    assert_eq!(e.code, ErrorCode::Validation);
    assert_eq!(e.message_id.as_deref(), Some("perf.export_refused"));
    assert!(e.message.contains("one row per day"), "{}", e.message);

    let png = inkstone_test_support::tiny_png();
    assert_eq!(import(&t, &png, json!({})).unwrap_err().message_id.as_deref(), Some("perf.not_an_export"), "a PNG renamed .csv");
    assert_eq!(import(&t, b"", json!({})).unwrap_err().message_id.as_deref(), Some("perf.not_an_export"), "empty");
    let truncated_xlsx = b"PK\x03\x04\x14\x00\x00\x00";
    assert_eq!(import(&t, truncated_xlsx, json!({})).unwrap_err().code, ErrorCode::Validation);
    let e = import(&t, b"name,age\nalice,3\n", json!({})).unwrap_err();
    assert_eq!(e.message_id.as_deref(), Some("perf.not_an_export"));
    assert!(e.message.contains("X content export"), "the error names what was expected: {}", e.message);
    let mut garbage = vec![0u8; 3 * 1024 * 1024];
    let mut rng = inkstone_test_support::Rng::new(7);
    for b in garbage.iter_mut() {
        *b = (rng.next() & 0xff) as u8;
    }
    assert_eq!(import(&t, &garbage, json!({})).unwrap_err().code, ErrorCode::Validation);
    let big = vec![b'a'; 21 * 1024 * 1024];
    assert_eq!(import(&t, &big, json!({})).unwrap_err().code, ErrorCode::Validation, "too large");
    assert_eq!(t.engine.call("perf.import", json!({"path": "/no/such/export.csv"})).unwrap_err().code, ErrorCode::Validation);
    assert_eq!(counts(&t), before);
    assert_eq!(t.engine.kernel().store().count(Kind::PerfImports), 0);
}

#[test]
fn a_douyin_list_resaved_as_gb18030_matches_by_title_and_time() {
    let t = TestEngine::new();
    let id = project(&t);
    t.ok("version.create", json!({"projectId": id}));
    // Published at 20:00 Beijing time; the export says 20:00:00 too.
    let p = t.ok("publication.add", json!({"projectId": id, "platform": "douyin", "details": {"title": "春天来了", "publishedAt": "2026-03-05 20:01"}}));
    let pv = import(&t, &exports::douyin_gb18030(), json!({})).unwrap()["preview"].clone();
    assert_eq!(pv["importer"], "douyin-works@v1");
    assert_eq!(pv["encoding"], "gb18030");
    let rows = pv["rows"].as_array().unwrap();
    assert_eq!(rows[0]["title"], "春天来了 #春天 #散步");
    assert_eq!(rows[0]["outcome"], json!({"status": "matched", "publicationId": p["id"], "by": "titleAndTime"}));
    let m = &rows[0]["metrics"];
    assert_eq!(m["views"], json!({"value": 12000.0, "unit": "count", "qualifier": "rounded", "raw": "1.2万"}));
    assert_eq!(m["play_completion"]["value"], 0.31);
    assert_eq!(m["avg_watch_s"]["unit"], "seconds");
    assert!(m.get("shares").is_none(), "— is missing, never 0");
    assert_eq!(rows[1]["private"], true, "自见 is private");
    assert_eq!(rows[1]["outcome"]["status"], "unmatched");
}

#[test]
fn a_xiaohongshu_list_with_a_title_row_above_the_header_is_read() {
    let t = TestEngine::new();
    let id = project(&t);
    t.ok("version.create", json!({"projectId": id}));
    let p = t.ok("publication.add", json!({"projectId": id, "platform": "xiaohongshu", "details": {"publishedAt": "2026-03-05 20:00:05"}}));
    let pv = import(&t, &exports::xiaohongshu(), json!({})).unwrap()["preview"].clone();
    assert_eq!(pv["importer"], "xiaohongshu-notes@v1");
    let row = &pv["rows"][0];
    assert_eq!(row["row"], 3);
    assert_eq!(row["publishedAt"], "2026-03-05T12:00:05Z", "年月日时分秒 in Beijing time");
    assert_eq!(row["outcome"]["publicationId"], p["id"]);
    assert_eq!(row["metrics"]["impressions"], json!({"value": 100000.0, "unit": "count", "qualifier": "lowerBound", "raw": "10w+"}));
    assert_eq!(row["metrics"]["views"]["value"], 34000.0);
    assert_eq!(row["metrics"]["cover_ctr"]["value"], 0.112);
    // The person can point an unmatched row at a publication; a bad pick is refused.
    assert_eq!(import(&t, &exports::xiaohongshu(), json!({"assign": {"3": "pub_nope"}})).unwrap_err().message_id.as_deref(), Some("perf.bad_assignment"));
}

/// Which publication each row of the fixture exports fits, and by which rule, when
/// several fit (ambiguous) and when none does: the matcher's index (by post id, URL,
/// publishing time) finds what the scan of every publication found.
#[test]
fn rows_of_the_fixture_exports_match_ambiguously_or_not_at_all_as_before() {
    let t = TestEngine::new();
    let id = project(&t);
    t.ok("version.create", json!({"projectId": id}));
    let add = |platform: &str, details: Value| t.ok("publication.add", json!({"projectId": id, "platform": platform, "details": details}))["id"].clone();
    // X: row 2 by the id in a URL; row 3's id is on two publications.
    let by_url = add("x", json!({"url": "https://x.com/inkstone/status/1798000000000000001/", "publishedAt": "2026-06-01 08:00"}));
    let twin_a = add("x", json!({"platformPostId": "1798000000000000002", "publishedAt": "2026-06-06 08:00"}));
    let twin_b = add("x", json!({"platformPostId": "1798000000000000002", "url": "https://x.com/inkstone/status/1798000000000000002", "publishedAt": "2026-06-06 09:00"}));
    let rows = import(&t, &exports::x_content(), json!({})).unwrap()["preview"]["rows"].clone();
    assert_eq!(rows[0]["outcome"], json!({"status": "matched", "publicationId": by_url, "by": "postId"}));
    assert_eq!(rows[1]["outcome"], json!({"status": "ambiguous", "candidates": [twin_a, twin_b]}));

    // Douyin: 春天来了 twice within five minutes of the row (ambiguous), once six minutes
    // off and once under another title (neither fits); the 自见 row fits nothing.
    let spring_a = add("douyin", json!({"title": "春天来了", "publishedAt": "2026-03-05 20:04"}));
    add("douyin", json!({"title": "春天来了", "publishedAt": "2026-03-05 20:06"}));
    let spring_b = add("douyin", json!({"title": "春天来了 #春天", "publishedAt": "2026-03-05 19:57"}));
    add("douyin", json!({"title": "夏天", "publishedAt": "2026-03-05 20:00"}));
    let pv = import(&t, &exports::douyin_gb18030(), json!({})).unwrap()["preview"].clone();
    assert_eq!(pv["rows"][0]["outcome"], json!({"status": "ambiguous", "candidates": [spring_a, spring_b]}));
    assert_eq!(pv["rows"][1]["outcome"], json!({"status": "unmatched"}));
    assert_eq!((pv["matched"].clone(), pv["ambiguous"].clone(), pv["unmatched"].clone()), (json!(0), json!(1), json!(1)));
    // The person's pick settles it.
    let picked = import(&t, &exports::douyin_gb18030(), json!({"assign": {"2": spring_b, "3": "skip"}})).unwrap()["preview"].clone();
    assert_eq!(picked["rows"][0]["outcome"], json!({"status": "matched", "publicationId": spring_b, "by": "person"}));

    // Xiaohongshu: by title and time to the second, in Beijing time.
    let note = add("xiaohongshu", json!({"title": "春天", "publishedAt": "2026-03-05 20:00:05"}));
    add("xiaohongshu", json!({"title": "春天", "publishedAt": "2026-03-05 20:07:00"}));
    let pv = import(&t, &exports::xiaohongshu(), json!({})).unwrap()["preview"].clone();
    assert_eq!(pv["rows"][0]["outcome"], json!({"status": "matched", "publicationId": note, "by": "titleAndTime"}));
}

#[test]
fn every_built_in_export_profile_loads_and_maps_to_known_keys() {
    let profiles = inkstone_api::performance::import::profiles().unwrap();
    assert!(profiles.len() >= 7);
    assert!(profiles.iter().any(|p| p.id == "wechat-notified"
        && p.columns.get("总阅读人数").map(String::as_str) == Some("readers")
        && p.columns.get("总阅读次数").map(String::as_str) == Some("views")));
}

#[test]
fn an_export_and_import_carry_publications_and_snapshots() {
    let t = TestEngine::new();
    let id = project(&t);
    t.ok("version.create", json!({"projectId": id}));
    let acc = t.ok("account.create", json!({"platform": "zhihu", "name": "墨砚"}));
    let p = t.ok("publication.add", json!({"projectId": id, "platform": "zhihu", "details": {"accountId": acc["id"], "publishedAt": "2025-12-31 08:00"}}));
    let s = t.ok("perf.add", json!({"publicationId": p["id"], "metrics": {"upvotes": "1.1k"}}));
    let outside = tempfile::tempdir().unwrap();
    let out = outside.path().join("export-out");
    t.ok("export.run", json!({"path": out.display().to_string()}));
    let other = TestEngine::new();
    other.ok("import.run", json!({"path": out.display().to_string()}));
    let view = other.ok("publication.get", json!({"publicationId": p["id"]}));
    assert_eq!(view["publication"], t.ok("publication.get", json!({"publicationId": p["id"]}))["publication"]);
    assert_eq!(view["latest"], s);
    assert_eq!(other.ok("account.list", json!({}))["accounts"][0]["id"], acc["id"]);
}

/// A publication of a project of its own on X (account `account`), published on
/// 2026-01-`day` 08:00 UTC, with AI changes or not, and one snapshot `age_hours` later.
#[allow(clippy::too_many_arguments)]
fn measured_post(t: &TestEngine, account: &str, day: u32, ai: bool, distribution: &str, age_hours: i64, metrics: Value) -> String {
    let id = project(t);
    if ai {
        accept_ai_patch(t, &id, "天气很好", "天气不错");
    } else {
        t.ok("version.create", json!({"projectId": id}));
    }
    let published = chrono::NaiveDate::from_ymd_opt(2026, 1, day).unwrap().and_hms_opt(8, 0, 0).unwrap().and_utc();
    let p =
        t.ok("publication.add", json!({"projectId": id, "platform": "x", "details": {"accountId": account, "publishedAt": published.to_rfc3339(), "distribution": distribution}}));
    assert_eq!(!p["aiChanges"].as_array().unwrap().is_empty(), ai);
    let observed = published + chrono::Duration::hours(age_hours);
    t.ok("perf.add", json!({"publicationId": p["id"], "metrics": metrics, "observedAt": observed.to_rfc3339()}));
    p["id"].as_str().unwrap().to_owned()
}

/// The report on a data set computed by hand: each post's multiple of the median of the
/// account's previous comparable posts at 24 h, the bands, the gates and their counts,
/// and the regression-to-the-mean warning.
#[test]
fn the_before_after_report_compares_multiples_of_the_accounts_own_median_at_one_age() {
    let t = TestEngine::new();
    let acc = t.ok("account.create", json!({"platform": "x", "name": "墨砚"}))["id"].as_str().unwrap().to_owned();
    let post = |day, ai, views: &str| measured_post(&t, &acc, day, ai, "organic", 30, json!({"impressions": views}));
    // Baselines: the first three have no earlier posts to compare with.
    for day in 1..=3 {
        post(day, false, "1000");
    }
    let p4 = post(4, true, "2000"); // 2000 / median(1000 ×3) = 2.0
    post(5, false, "1000"); // 1.0
    post(6, true, "3000"); // 3.0
    post(7, false, "400"); // 0.4: an unusually weak post…
    post(8, true, "4000"); // …right before an AI change: 4000 / 1000 = 4.0, flagged
    post(9, false, "1200"); // median of 8 earlier = 1000: 1.2
    measured_post(&t, &acc, 10, true, "boosted", 30, json!({"impressions": "9000"}));
    measured_post(&t, &acc, 11, false, "organic", 10, json!({"impressions": "5000"})); // observed at 10 h only
    post(12, false, "50"); // under the floor
    measured_post(&t, &acc, 13, true, "organic", 30, json!({"likes": "80"})); // another basis: never compared

    let r = t.ok("perf.report", json!({"platform": "x"}));
    assert_eq!(r["metric"], "impressions");
    assert_eq!(r["bucket"], "24h");
    let close = |v: &Value, want: f64| assert!((v.as_f64().unwrap() - want).abs() < 1e-9, "{v} != {want}");
    assert_eq!(r["withAi"]["n"], 3);
    close(&r["withAi"]["medianMultiple"], 3.0);
    close(&r["withAi"]["p30"], 2.6);
    close(&r["withAi"]["p70"], 3.4);
    assert_eq!(r["withoutAi"]["n"], 3);
    close(&r["withoutAi"]["medianMultiple"], 1.0);
    close(&r["withoutAi"]["p30"], 0.76);
    close(&r["withoutAi"]["p70"], 1.08);
    assert_eq!(r["enoughData"], true);
    assert_eq!(r["excluded"], json!({"boosted": 1, "noSnapshotAtAge": 1, "metricNotReported": 1, "underFloor": 1, "noBaseline": 3}));
    assert_eq!(r["afterWeakPost"], 1);
    let p4_point = r["points"].as_array().unwrap().iter().find(|p| p["publicationId"] == p4.as_str()).unwrap().clone();
    assert_eq!(p4_point["baseline"], 1000.0);
    assert_eq!(p4_point["multiple"], 2.0);
    assert_eq!(p4_point["ageHours"], 30.0);

    // At 72 h nothing was observed: no number on either side.
    let later = t.ok("perf.report", json!({"platform": "x", "bucket": "72h"}));
    assert_eq!(later["enoughData"], false);
    assert_eq!(later["withAi"], json!({"n": 0, "medianMultiple": null, "p30": null, "p70": null}));
    assert_eq!(later["excluded"]["noSnapshotAtAge"], 12);
    // Boosted posts only when asked for.
    assert_eq!(t.ok("perf.report", json!({"platform": "x", "includeBoosted": true}))["withAi"]["n"], 4);
    // One project's posts: one side of one, not enough data, the baseline still the account's.
    let one = t.ok("perf.report", json!({"platform": "x", "projectId": t.ok("publication.get", json!({"publicationId": p4}))["publication"]["projectId"]}));
    assert_eq!(one["withAi"], json!({"n": 1, "medianMultiple": null, "p30": null, "p70": null}));
    assert_eq!(one["points"][0]["multiple"], 2.0);
    assert_eq!(err(&t, "perf.report", json!({"platform": "x", "metric": "vibes"})).code, ErrorCode::Validation);
}

/// The report reads the `MetricPoint` index (the key's points and each snapshot's stamp),
/// not whole snapshots: on posts observed at many ages, some snapshots reporting other
/// keys or only platform extras, it says exactly what the report over the stored
/// snapshots says, for every key and age; a purged publication takes its points and
/// stamps with it.
#[test]
fn the_report_read_from_the_point_index_equals_the_report_over_whole_snapshots() {
    use inkstone_api::performance::report::{before_after, AgeBucket, ReportQuery};
    let t = TestEngine::new();
    let acc = t.ok("account.create", json!({"platform": "x", "name": "墨砚"}))["id"].as_str().unwrap().to_owned();
    let ages = [10i64, 26, 30, 80, 100, 170, 200, 260];
    let mut ids = Vec::new();
    for day in 1..=16u32 {
        let n = day as usize;
        let metrics = match n % 4 {
            0 => json!({"likes": format!("{}", 10 * n)}),
            1 => json!({"impressions": format!("{}", 500 + 97 * n), "likes": format!("{}", 3 * n)}),
            _ => json!({"impressions": format!("{}", 900 + 131 * (n % 7))}),
        };
        let id = measured_post(&t, &acc, day, n.is_multiple_of(3), if n == 5 { "boosted" } else { "organic" }, ages[n % ages.len()], metrics);
        let published = chrono::NaiveDate::from_ymd_opt(2026, 1, day).unwrap().and_hms_opt(8, 0, 0).unwrap().and_utc();
        // A second observation: only a platform extra, or another key, at another age.
        let (age, more) =
            if n.is_multiple_of(2) { (ages[(n + 3) % ages.len()], json!({"extra.Detail Expands": "7"})) } else { (ages[(n + 5) % ages.len()], json!({"impressions": "2,345"})) };
        t.ok("perf.add", json!({"publicationId": id, "metrics": more, "observedAt": (published + chrono::Duration::hours(age)).to_rfc3339()}));
        ids.push(id);
    }
    let store = t.engine.kernel().store();
    let compare = |store: &inkstone_api::store::Store| {
        let publications: Vec<inkstone_api::performance::Publication> = store.scan(b"").unwrap();
        let snapshots = publications.iter().map(|p| (p.id.clone(), inkstone_api::performance::metrics::snapshots(store, &p.id).unwrap())).collect();
        for metric in ["impressions", "likes", "views"] {
            for (bucket, name) in [(AgeBucket::H24, "24h"), (AgeBucket::H72, "72h"), (AgeBucket::D7, "7d")] {
                for include_boosted in [false, true] {
                    let api = t.ok("perf.report", json!({"platform": "x", "metric": metric, "bucket": name, "includeBoosted": include_boosted}));
                    let query = ReportQuery { platform: inkstone_api::model::Platform::X, project_id: None, metric: metric.into(), bucket, include_boosted };
                    assert_eq!(api, serde_json::to_value(before_after(&query, &publications, &snapshots)).unwrap(), "{metric} at {name}");
                }
            }
        }
    };
    compare(store);
    let r = t.ok("perf.report", json!({"platform": "x", "bucket": "24h"}));
    assert!(r["excluded"]["metricNotReported"].as_u64().unwrap() > 0 && r["points"].as_array().unwrap().len() > 3, "the data set reaches every rule: {r}");

    let points = store.count(Kind::MetricPoints);
    let snapshots = t.ok("perf.list", json!({"publicationId": ids[0]}))["snapshots"].as_array().unwrap().clone();
    let metrics: usize = snapshots.iter().map(|s| s["metrics"].as_object().unwrap().len()).sum();
    t.ok("publication.remove", json!({"publicationId": ids[0]}));
    t.ok("publication.purge", json!({"publicationId": ids[0], "confirm": true}));
    assert_eq!(store.count(Kind::MetricPoints), points - metrics - snapshots.len(), "its points and one stamp per snapshot are deleted with it");
    compare(store);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
    /// Whatever the snapshots hold, a report's points all carry the asked key's value
    /// from a snapshot inside the bucket's window, and its sides count only those.
    #[test]
    fn the_report_never_compares_other_keys_or_ages(posts in proptest::collection::vec((0u8..3, 0i64..400, 1u32..100_000, proptest::bool::ANY), 0..24)) {
        use inkstone_api::performance::metrics::{MetricSnapshot, MetricUnit, MetricValue, SnapshotSource, SnapshotWindow};
        use inkstone_api::performance::report::{before_after, AgeBucket, ReportQuery};
        use inkstone_api::performance::{Distribution, Publication, PublicationFormat, Visibility};
        let start = chrono::DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z").unwrap().with_timezone(&chrono::Utc);
        let keys = ["impressions", "likes", "views"];
        let mut publications = Vec::new();
        let mut snapshots = std::collections::BTreeMap::new();
        for (i, (key, age, value, ai)) in posts.iter().enumerate() {
            let id = format!("pub_{i:03}");
            let published_at = start + chrono::Duration::days(i as i64);
            publications.push(Publication {
                id: id.clone(), project_id: "prj".into(), platform: inkstone_api::model::Platform::X, version_number: 1, version_id: "ver".into(),
                account_id: None, url: None, platform_post_id: None, title: id.clone(), published_at, time_zone: "UTC".into(), format: PublicationFormat::Post,
                distribution: Distribution::Organic, visibility: Visibility::Public,
                ai_changes: if *ai { vec![inkstone_api::performance::AiChange { version_number: 1, proposal_id: None, proposal_kind: None, session_id: None, run_id: None, model: None, pulled_from: None }] } else { Vec::new() },
                previous_version_number: None, removed_at: None, created_by: "me".into(), created_at: published_at, updated_at: published_at,
            });
            let metric = MetricValue { value: f64::from(*value), unit: MetricUnit::Count, qualifier: inkstone_api::performance::numbers::Qualifier::Exact, raw: value.to_string() };
            snapshots.insert(id.clone(), vec![MetricSnapshot {
                id: format!("snp_{i:03}"), publication_id: id, project_id: "prj".into(), platform: inkstone_api::model::Platform::X,
                observed_at: published_at + chrono::Duration::hours(*age), age_hours: *age as f64, window: SnapshotWindow::Cumulative,
                source: SnapshotSource::Manual { author: "me".into() },
                metrics: [(keys[*key as usize].to_owned(), metric)].into_iter().collect(), extras: Default::default(), created_at: published_at,
            }]);
        }
        for bucket in [AgeBucket::H24, AgeBucket::H72, AgeBucket::D7] {
            let query = ReportQuery { platform: inkstone_api::model::Platform::X, project_id: None, metric: "impressions".into(), bucket, include_boosted: false };
            let report = before_after(&query, &publications, &snapshots);
            for point in &report.points {
                let snapshot = &snapshots[&point.publication_id][0];
                proptest::prop_assert!(snapshot.metrics.contains_key("impressions"));
                proptest::prop_assert!(point.age_hours >= bucket.hours() && point.age_hours < bucket.hours() * 1.5);
            }
            let compared = report.points.iter().filter(|p| p.excluded.is_none() && p.multiple.is_some()).count() as u32;
            proptest::prop_assert_eq!(report.with_ai.n + report.without_ai.n, compared);
            proptest::prop_assert_eq!(report.enough_data, report.with_ai.n >= 3 && report.without_ai.n >= 3);
        }
    }
}

/// The Xiaohongshu list as the platform downloads it, an .xlsx (tests/fixtures/performance,
/// written by its committed generator `make_xlsx.py`): the same rows as the CSV, numbers
/// as numeric cells, read through calamine with the CSV's header search and mapping; the
/// sheet is recorded in each snapshot's source. A truncated .xlsx writes nothing.
#[test]
fn an_xlsx_export_is_read_like_its_csv() {
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/performance");
    let xlsx = std::fs::read(fixtures.join("xiaohongshu-notes.xlsx")).unwrap();
    let csv = std::fs::read(fixtures.join("xiaohongshu-notes.csv")).unwrap();
    let t = TestEngine::new();
    let id = project(&t);
    t.ok("version.create", json!({"projectId": id}));
    let p = t.ok("publication.add", json!({"projectId": id, "platform": "xiaohongshu", "details": {"publishedAt": "2026-03-05 20:00:05"}}));
    let from_xlsx = import(&t, &xlsx, json!({})).unwrap()["preview"].clone();
    let from_csv = import(&t, &csv, json!({})).unwrap()["preview"].clone();
    assert_eq!(from_xlsx["importer"], "xiaohongshu-notes@v1");
    assert_eq!(from_xlsx["encoding"], "xlsx");
    assert_eq!(from_xlsx["rows"], from_csv["rows"], "the same rows, metrics, units, qualifiers and outcomes");
    let row = &from_xlsx["rows"][0];
    assert_eq!(row["row"], 3, "the title row above the header is skipped");
    assert_eq!(row["outcome"]["publicationId"], p["id"]);
    assert_eq!(row["metrics"]["likes"], json!({"value": 1200.0, "unit": "count", "qualifier": "exact", "raw": "1200"}), "a numeric cell");
    assert_eq!(row["metrics"]["impressions"]["qualifier"], "lowerBound");
    assert!(row["metrics"].get("shares").is_none(), "`-` is absent, never 0");

    let before = counts(&t);
    let truncated = &xlsx[..xlsx.len() / 2];
    let e = import(&t, truncated, json!({"commit": true})).unwrap_err();
    assert_eq!(e.message_id.as_deref(), Some("perf.not_an_export"));
    assert_eq!(counts(&t), before);

    let done = import(&t, &xlsx, json!({"commit": true, "assign": {"4": "skip"}})).unwrap();
    assert_eq!(done["committed"], true);
    let snaps = t.ok("perf.list", json!({"publicationId": p["id"]}))["snapshots"].clone();
    assert_eq!(snaps[0]["source"]["sheet"], "笔记列表明细表");
}

/// The same 小红书 list as an old Excel workbook (OLE/BIFF8, written by xlwt): sniffed by
/// its bytes and read through calamine exactly as its CSV.
#[test]
fn a_biff_xls_export_is_read_like_its_csv() {
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/performance");
    let xls = std::fs::read(fixtures.join("xiaohongshu-notes.xls")).unwrap();
    let csv = std::fs::read(fixtures.join("xiaohongshu-notes.csv")).unwrap();
    let t = TestEngine::new();
    let id = project(&t);
    t.ok("version.create", json!({"projectId": id}));
    t.ok("publication.add", json!({"projectId": id, "platform": "xiaohongshu", "details": {"publishedAt": "2026-03-05 20:00:05"}}));
    let from_xls = import(&t, &xls, json!({})).unwrap()["preview"].clone();
    let from_csv = import(&t, &csv, json!({})).unwrap()["preview"].clone();
    assert_eq!(from_xls["encoding"], "xls");
    assert_eq!(from_xls["importer"], "xiaohongshu-notes@v1");
    assert_eq!(from_xls["rows"], from_csv["rows"], "the same rows, metrics, units, qualifiers and outcomes");
    assert!(from_xls["rows"][0]["metrics"].get("shares").is_none(), "`-` is absent, never 0");
}

/// WeChat 用户分析: an HTML table saved as `.xls`, its header spanning two rows. Each row
/// is a day of the account (an account snapshot, never a post's number); the account is
/// the platform's only one, or the one the person picks; `-` is absent; the same file
/// again changes nothing.
#[test]
fn a_wechat_user_analysis_html_xls_becomes_days_of_the_account() {
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/performance");
    let html = std::fs::read(fixtures.join("wechat-user-analysis.xls")).unwrap();
    let t = TestEngine::new();
    let before = counts(&t);
    // No WeChat account yet: the preview says so and a commit is refused.
    let preview = import(&t, &html, json!({})).unwrap()["preview"].clone();
    assert_eq!(preview["importer"], "wechat-user-analysis@v1");
    assert_eq!(preview["target"], "account");
    assert_eq!(preview["encoding"], "UTF-8");
    assert_eq!(preview["accountId"], Value::Null);
    assert_eq!(preview["rows"].as_array().unwrap().len(), 3, "the header's second row is not a day");
    assert_eq!(preview["unmatched"], 3);
    let e = import(&t, &html, json!({"commit": true})).unwrap_err();
    assert_eq!(e.message_id.as_deref(), Some("perf.account_export_needs_account"));
    assert_eq!(counts(&t), before);
    assert_eq!(t.engine.kernel().store().count(Kind::AccountSnapshots), 0);

    let a = t.ok("account.create", json!({"platform": "wechat", "name": "墨砚官方号"}));
    let x = t.ok("account.create", json!({"platform": "x", "name": "@inkstone"}));
    let wrong = import(&t, &html, json!({"accountId": x["id"]})).unwrap_err();
    assert_eq!(wrong.message_id.as_deref(), Some("perf.account_platform"), "an X account cannot take WeChat days");
    let preview = import(&t, &html, json!({})).unwrap()["preview"].clone();
    assert_eq!(preview["accountId"], a["id"], "the platform's only account");
    let rows = preview["rows"].as_array().unwrap();
    assert_eq!(rows[0]["outcome"], json!({"status": "accountDay", "accountId": a["id"], "date": "2026-03-01"}));
    assert_eq!(rows[0]["metrics"]["followers_total"], json!({"value": 1204.0, "unit": "count", "qualifier": "exact", "raw": "1,204"}));
    assert_eq!(rows[1]["metrics"]["followers_net"]["value"], -3.0);
    assert_eq!(rows[2]["metrics"]["followers_new"]["value"], 8.0, "an &nbsp; after the number");
    assert!(rows[2]["metrics"].get("followers_lost").is_none() && rows[2]["metrics"].get("followers_net").is_none(), "`-` is absent, never 0");

    let done = import(&t, &html, json!({"commit": true, "fileName": "user_analysis.xls"})).unwrap();
    assert_eq!(done["committed"], true);
    assert_eq!(done["snapshots"].as_array().unwrap().len(), 3);
    assert_eq!(counts(&t)[1..], [0, 0], "no publication and no post snapshot");
    let days = t.ok("perf.accountDays", json!({"accountId": a["id"]}));
    let dates: Vec<&str> = days["days"].as_array().unwrap().iter().map(|d| d["date"].as_str().unwrap()).collect();
    assert_eq!(dates, ["2026-03-01", "2026-03-02", "2026-03-03"]);
    assert_eq!(days["days"][0]["source"]["importer"], "wechat-user-analysis");
    assert_eq!(days["days"][0]["source"]["rawRow"][4], json!(["累积关注人数", "1,204"]));
    let again = import(&t, &html, json!({"commit": true})).unwrap();
    assert_eq!(again["committed"], false);
    assert!(again["preview"]["alreadyImported"].is_string());
    assert_eq!(t.engine.kernel().store().count(Kind::AccountSnapshots), 3, "the same file again changes nothing");
    // An HTML page without a table is not an export.
    let e = import(&t, b"<html><body><p>hello</p></body></html>", json!({})).unwrap_err();
    assert_eq!(e.message_id.as_deref(), Some("perf.not_an_export"));
}

/// Deleting an account deletes its days (followers per day) in the same write: none is
/// left behind under an account that no longer exists.
#[test]
fn deleting_an_account_deletes_its_days() {
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/performance");
    let html = std::fs::read(fixtures.join("wechat-user-analysis.xls")).unwrap();
    let t = TestEngine::new();
    let gone = t.ok("account.create", json!({"platform": "wechat", "name": "墨砚官方号"}));
    let kept = t.ok("account.create", json!({"platform": "wechat", "name": "墨砚小号"}));
    import(&t, &html, json!({"commit": true, "accountId": gone["id"]})).unwrap();
    // Another file (the same days saved again, one byte more) for the other account.
    let mut again = html.clone();
    again.push(b'\n');
    import(&t, &again, json!({"commit": true, "accountId": kept["id"], "fileName": "again.xls"})).unwrap();
    let store = t.engine.kernel().store();
    assert_eq!(store.count(Kind::AccountSnapshots), 6);
    t.ok("account.delete", json!({"accountId": gone["id"]}));
    let left = inkstone_api::performance::account_days::snapshots(store, gone["id"].as_str().unwrap()).unwrap();
    assert!(left.is_empty(), "the deleted account's days stayed: {left:?}");
    assert_eq!(store.count(Kind::AccountSnapshots), 3, "the other account's days stay");
    assert_eq!(t.ok("perf.accountDays", json!({"accountId": kept["id"]}))["days"].as_array().unwrap().len(), 3);
}
