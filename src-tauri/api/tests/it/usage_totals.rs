//! The running usage totals (`usage::UsageTotal`, by UTC month and day): written in the
//! same batch as each usage record, carried through an export and import as the records
//! they are derived from, and rebuilt when a folder written before them opens. The
//! policy's monthly cap and the quotas read them instead of every record, so they must
//! equal the sum of the records, always.

use std::collections::BTreeMap;
use std::sync::Arc;

use inkstone_api::config::FakeClock;
use inkstone_api::llm::{Cancel, ChatRequest, Message, ModelCall};
use inkstone_api::policy::{CachedPolicy, Policy};
use inkstone_api::store::{Batch, Durability, Store};
use inkstone_api::usage::{day_of, month_of, UsageRecord, UsageTotal};
use inkstone_api::{Engine, EngineConfig, ErrorCode};
use inkstone_test_support::model_server::{ModelServer, Reply, Usage};
use serde_json::json;

const DAY_MS: i64 = 86_400_000;

fn open(dir: &std::path::Path, clock: &Arc<FakeClock>) -> Engine {
    let mut config = EngineConfig::for_tests(dir);
    config.clock = clock.clone();
    Engine::open(config).unwrap()
}

fn call(engine: &Engine, profile: &str) -> Result<inkstone_api::llm::ChatResponse, inkstone_api::ApiError> {
    let call = ModelCall { profile, purpose: "drafting", session_id: None, run_id: None };
    engine.model_chat(call, &ChatRequest::new(vec![Message::user("改写这一段")]), &mut |_| {}, &Cancel::new())
}

/// The totals summed from every record, period by period, in call order.
fn summed(store: &Store) -> BTreeMap<String, (u64, u64, f64)> {
    let mut sums = BTreeMap::new();
    for record in store.scan::<UsageRecord>(b"").unwrap() {
        for period in [month_of(record.at), day_of(record.at)] {
            let sum: &mut (u64, u64, f64) = sums.entry(period).or_default();
            sum.0 += 1;
            sum.1 += record.input_tokens + record.output_tokens;
            sum.2 += record.cost.unwrap_or(0.0);
        }
    }
    sums
}

fn stored(store: &Store) -> BTreeMap<String, (u64, u64, f64)> {
    store.scan::<UsageTotal>(b"").unwrap().into_iter().map(|t| (t.period, (t.calls, t.tokens, t.cost))).collect()
}

fn assert_totals_match(store: &Store, when: &str) {
    let (summed, stored) = (summed(store), stored(store));
    assert_eq!(summed.keys().collect::<Vec<_>>(), stored.keys().collect::<Vec<_>>(), "{when}: the periods");
    for (period, (calls, tokens, cost)) in &summed {
        let (s_calls, s_tokens, s_cost) = stored[period];
        assert_eq!((s_calls, s_tokens), (*calls, *tokens), "{when}: {period}");
        assert!((s_cost - cost).abs() < 1e-9, "{when}: {period}: {s_cost} ≠ {cost}");
    }
}

fn cap(engine: &Engine, policy: Policy) {
    let cached = CachedPolicy { workspace_id: "wsp_1".into(), workspace_name: "团队".into(), policy, set_by: Some("Olga".into()), set_at: None, fetched_at: engine.now() };
    let mut batch = Batch::new();
    batch.put(&cached).unwrap();
    engine.store().apply(batch, Durability::Durable).unwrap();
}

#[test]
fn the_running_totals_equal_the_sum_of_the_usage_records_after_many_calls_an_import_and_a_reopen() {
    let model = ModelServer::start(vec![]);
    model.set_fallback(Reply::text_with("好的，改好了。", 4, Usage::Fixed { input: 1_234, output: 321 }));
    let clock = Arc::new(FakeClock::new(1000));
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path(), &clock);
    engine
        .call(
            "llmProfile.create",
            json!({"name": "priced", "baseUrl": model.base_url(), "model": "m", "keyRequired": false, "contextWindow": 8192, "inputPricePerMtok": 3.0, "outputPricePerMtok": 15.0}),
        )
        .unwrap();
    engine.call("llmProfile.create", json!({"name": "free", "baseUrl": model.base_url(), "model": "m", "keyRequired": false, "contextWindow": 8192})).unwrap();

    // 60 calls over about three months, priced and not, some failing (metered too).
    for i in 0..60 {
        if i % 4 == 0 {
            clock.advance_millis(5 * DAY_MS + 3_600_000);
        }
        if i % 9 == 5 {
            model.push(Reply::error(400, json!({"error": {"message": "bad request"}})));
        }
        let _ = call(&engine, if i % 3 == 0 { "free" } else { "priced" });
    }
    let records = engine.store().scan::<UsageRecord>(b"").unwrap();
    assert_eq!(records.len(), 60);
    assert!(records.iter().any(|r| r.cost.is_none()) && records.iter().any(|r| r.cost.is_some()));
    let months: std::collections::BTreeSet<String> = records.iter().map(|r| month_of(r.at)).collect();
    assert!(months.len() >= 3, "{months:?}");
    assert_totals_match(engine.store(), "after 60 calls");
    let standing = engine.call("usage.standing", json!({})).unwrap();
    let this_month = inkstone_api::policy::month_spent(&records, engine.now());
    assert_eq!((standing["spent"]["tokens"].as_u64(), standing["month"].as_str()), (Some(this_month.tokens), Some(month_of(engine.now()).as_str())));
    assert!((standing["spent"]["costUsd"].as_f64().unwrap() - this_month.cost_usd).abs() < 1e-9);
    assert_eq!(standing["level"], "none", "no policy, no cap");

    // An export carries the records only; importing them writes the totals again.
    let out = tempfile::tempdir().unwrap();
    let path = out.path().join("export");
    engine.call("export.run", json!({"path": path.display().to_string()})).unwrap();
    assert!(!std::fs::read_dir(path.join("usage")).unwrap().any(|e| e.unwrap().file_name().to_string_lossy().contains("total")), "derived, not exported");
    let imported_dir = tempfile::tempdir().unwrap();
    let imported = open(imported_dir.path(), &clock);
    imported.call("import.run", json!({"path": path.display().to_string()})).unwrap();
    assert_totals_match(imported.store(), "after an import");
    assert_eq!(stored(imported.store()), stored(engine.store()));
    drop(imported);

    // A folder written before the totals existed: records stored without them (as an
    // older app wrote them) get their totals when it opens.
    let mut batch = Batch::new();
    let mut old = records[0].clone();
    for i in 0..5 {
        old.id = format!("usg_old{i}");
        batch.put(&old).unwrap();
    }
    for total in engine.store().scan::<UsageTotal>(b"").unwrap() {
        batch.delete::<UsageTotal>(total.period.into_bytes());
    }
    // The meta record saying the folder's derived data is built (any meta kind deletes it).
    batch.delete::<CachedPolicy>(b"activity_indexed_v2".to_vec());
    engine.store().apply(batch, Durability::Durable).unwrap();
    assert!(stored(engine.store()).is_empty());
    drop(engine);
    let engine = open(dir.path(), &clock);
    assert_eq!(engine.store().scan::<UsageRecord>(b"").unwrap().len(), 65);
    assert_totals_match(engine.store(), "after reopening an older folder");

    // And calls after that keep them equal. (The test engine's ids start again on
    // reopening, so these records replace stored ones under the same ids: the totals
    // take the replaced records' part out.)
    for _ in 0..5 {
        call(&engine, "priced").unwrap();
    }
    assert_totals_match(engine.store(), "after more calls");
}

#[test]
fn a_member_over_the_monthly_cap_by_the_running_total_is_refused_before_any_byte_is_sent() {
    let model = ModelServer::start(vec![]);
    model.set_fallback(Reply::text_with("好的。", 4, Usage::Fixed { input: 1_000_000, output: 0 }));
    let clock = Arc::new(FakeClock::new(1000));
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path(), &clock);
    // A million input tokens at 1 USD per million: each call costs exactly 1 USD.
    engine
        .call("llmProfile.create", json!({"name": "priced", "baseUrl": model.base_url(), "model": "m", "keyRequired": false, "contextWindow": 8192, "inputPricePerMtok": 1.0}))
        .unwrap();
    cap(&engine, Policy { monthly_cap_usd: Some(3.0), ..Policy::default() });
    let standing = engine.call("usage.standing", json!({})).unwrap();
    assert_eq!((standing["level"].as_str(), standing["capUsd"].as_f64(), standing["setBy"].as_str()), (Some("under"), Some(3.0), Some("Olga")));
    call(&engine, "priced").unwrap();
    call(&engine, "priced").unwrap();
    assert_eq!(engine.call("usage.standing", json!({})).unwrap()["level"], "under", "2 of 3 USD is under 80%");
    call(&engine, "priced").unwrap();
    let standing = engine.call("usage.standing", json!({})).unwrap();
    assert_eq!((standing["level"].as_str(), standing["spent"]["costUsd"].as_f64()), (Some("reached"), Some(3.0)), "{standing}");

    let sent = model.requests().len();
    let refused = call(&engine, "priced").unwrap_err();
    assert_eq!(refused.code, ErrorCode::PolicyRefused);
    assert_eq!(refused.details.as_ref().unwrap()["used"], 3.0);
    assert!(refused.hints.iter().any(|h| h.id == "policy_monthly_cap" && h.params.get("owner").map(String::as_str) == Some("Olga")), "{refused:?}");
    assert_eq!(model.requests().len(), sent, "no byte reached the scripted server over the cap");
    assert_eq!(engine.store().scan::<UsageRecord>(b"").unwrap().len(), 3, "a refused call leaves no usage record");

    // The next calendar month starts from zero.
    clock.advance_millis(32 * DAY_MS);
    assert_eq!(engine.call("usage.standing", json!({})).unwrap()["level"], "under");
    call(&engine, "priced").unwrap();
    // A token cap near its end warns.
    cap(&engine, Policy { monthly_cap_tokens: Some(1_200_000), ..Policy::default() });
    let standing = engine.call("usage.standing", json!({})).unwrap();
    assert_eq!((standing["level"].as_str(), standing["capTokens"].as_u64(), standing["spent"]["tokens"].as_u64()), (Some("near"), Some(1_200_000), Some(1_000_000)));
}
