//! The workspace dashboard (`perf.dashboard`) and the CSV export of performance tables
//! (`perf.export`) through the JSON API on real sled, on a small data set computed by
//! hand: filters, sorts (a metric orders within each platform, absent last), each
//! platform's median per week of one metric (latest values or at an age), the posting
//! grid in each publication's own time zone, absent never 0; and the CSV's BOM, columns,
//! empty cells for what was not reported, and defused formulas.

use inkstone_api::ErrorCode;
use inkstone_test_support::TestEngine;
use serde_json::{json, Value};

fn err(t: &TestEngine, method: &str, params: Value) -> inkstone_api::ApiError {
    match t.engine.call(method, params) {
        Ok(value) => panic!("{method} succeeded: {value}"),
        Err(error) => error,
    }
}

struct Data {
    t: TestEngine,
    wechat_account: String,
    x_account: String,
    /// wechat p1..p4, x p5, p6 (p7 removed).
    ids: Vec<String>,
    project_of_p1: String,
}

/// A publication of a project of its own, `details` over the defaults.
fn publish(t: &TestEngine, platform: &str, details: Value) -> (String, String) {
    let project = t.ok("project.create", json!({"title": "春天", "source": "# 春天\n\n今天天气很好。\n"}))["id"].as_str().unwrap().to_owned();
    t.ok("version.create", json!({"projectId": project}));
    let p = t.ok("publication.add", json!({"projectId": project, "platform": platform, "details": details}));
    (p["id"].as_str().unwrap().to_owned(), project)
}

fn observe(t: &TestEngine, publication: &str, at: &str, metrics: Value) {
    t.ok("perf.add", json!({"publicationId": publication, "metrics": metrics, "observedAt": at}));
}

/// The hand-computed data set (times in each platform's default zone: Beijing time for
/// WeChat, UTC for X).
fn data() -> Data {
    let t = TestEngine::new();
    let wechat_account = t.ok("account.create", json!({"platform": "wechat", "name": "墨砚官方号"}))["id"].as_str().unwrap().to_owned();
    let x_account = t.ok("account.create", json!({"platform": "x", "name": "inkstone"}))["id"].as_str().unwrap().to_owned();
    // p1: Monday 2 March 20:30 Beijing (12:30 UTC): readers 1000 at 24 h, then 1500 and
    // views 2000 at 48 h; a one-day window later is not a total and is left out.
    let (p1, project_of_p1) = publish(&t, "wechat", json!({"publishedAt": "2026-03-02 20:30", "accountId": wechat_account, "title": "=SUM(A1)"}));
    observe(&t, &p1, "2026-03-03 20:30", json!({"readers": "1000"}));
    observe(&t, &p1, "2026-03-04 20:30", json!({"readers": "1500", "views": "2000"}));
    t.ok("perf.add", json!({"publicationId": p1, "metrics": {"readers": "7"}, "observedAt": "2026-03-05 20:30", "window": {"type": "day", "date": "2026-03-05"}}));
    // p2: Wednesday 4 March 20:10 Beijing, readers 3000 at 30 h.
    let (p2, _) = publish(&t, "wechat", json!({"publishedAt": "2026-03-04 20:10", "accountId": wechat_account}));
    observe(&t, &p2, "2026-03-06 02:10", json!({"readers": "3000"}));
    // p3: Tuesday 10 March 08:00 Beijing, readers 10w+ (a lower bound).
    let (p3, _) = publish(&t, "wechat", json!({"publishedAt": "2026-03-10 08:00", "accountId": wechat_account}));
    observe(&t, &p3, "2026-03-20 08:00", json!({"readers": "10w+"}));
    // p4: Wednesday 11 March 09:15 Beijing, no account, never measured.
    let (p4, _) = publish(&t, "wechat", json!({"publishedAt": "2026-03-11 09:15"}));
    // p5: X, Monday 2 March 23:30 UTC (Tuesday 07:30 in Beijing): impressions 5000, likes 40.
    let (p5, _) = publish(&t, "x", json!({"publishedAt": "2026-03-02 23:30", "accountId": x_account}));
    observe(&t, &p5, "2026-03-04 00:00", json!({"impressions": "5000", "likes": "40"}));
    // p6: X thread, Tuesday 3 March 01:00 UTC: impressions 7000.
    let (p6, _) = publish(&t, "x", json!({"publishedAt": "2026-03-03 01:00", "accountId": x_account, "format": "thread"}));
    observe(&t, &p6, "2026-03-05 01:00", json!({"impressions": "7000"}));
    // p7: removed, with a huge number: never shown, never counted.
    let (p7, _) = publish(&t, "x", json!({"publishedAt": "2026-03-03 02:00", "accountId": x_account}));
    observe(&t, &p7, "2026-03-05 01:00", json!({"impressions": "99999999"}));
    t.ok("publication.remove", json!({"publicationId": p7}));
    Data { t, wechat_account, x_account, ids: vec![p1, p2, p3, p4, p5, p6], project_of_p1 }
}

fn ids(board: &Value) -> Vec<String> {
    board["rows"].as_array().unwrap().iter().map(|r| r["publication"]["id"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn the_dashboard_filters_sorts_and_shows_latest_values_absent_never_zero() {
    let d = data();
    let (t, p) = (&d.t, &d.ids);
    let all = t.ok("perf.dashboard", json!({}));
    assert_eq!(all["total"], 6, "the removed publication is not shown");
    // Newest first by default.
    assert_eq!(ids(&all), vec![p[3].clone(), p[2].clone(), p[1].clone(), p[5].clone(), p[4].clone(), p[0].clone()]);
    // The columns: keys reported by a shown publication, in canonical order.
    assert_eq!(all["metricKeys"], json!(["impressions", "views", "readers", "likes"]));
    let row = |board: &Value, id: &str| board["rows"].as_array().unwrap().iter().find(|r| r["publication"]["id"] == id).unwrap().clone();
    let p1 = row(&all, &p[0]);
    // The newest cumulative reading of each key; the one-day window is not a total.
    assert_eq!(p1["latest"]["readers"]["value"], 1500.0);
    assert_eq!(p1["latest"]["readers"]["ageHours"], 48.0);
    assert_eq!(p1["latest"]["views"]["value"], 2000.0);
    assert_eq!(p1["snapshotCount"], 3);
    assert_eq!(p1["accountName"], "墨砚官方号");
    assert_eq!(row(&all, &p[2])["latest"]["readers"]["qualifier"], "lowerBound");
    // Never measured: no value at all, not zeros.
    assert_eq!(row(&all, &p[3])["latest"], json!({}));
    assert_eq!(row(&all, &p[3])["accountName"], Value::Null);

    // Filters.
    assert_eq!(ids(&t.ok("perf.dashboard", json!({"platform": "x"}))), vec![p[5].clone(), p[4].clone()]);
    assert_eq!(ids(&t.ok("perf.dashboard", json!({"accountId": d.wechat_account}))), vec![p[2].clone(), p[1].clone(), p[0].clone()]);
    assert_eq!(ids(&t.ok("perf.dashboard", json!({"format": "thread"}))), vec![p[5].clone()]);
    assert_eq!(ids(&t.ok("perf.dashboard", json!({"projectId": d.project_of_p1}))), vec![p[0].clone()]);
    let range = t.ok("perf.dashboard", json!({"from": "2026-03-03T00:00:00Z", "to": "2026-03-10T00:00:00Z"}));
    assert_eq!(ids(&range), vec![p[1].clone(), p[5].clone()], "published in [from, to): p3 went out at 00:00 UTC on the 10th, p5 at 23:30 on the 2nd");
    assert_eq!(t.ok("perf.dashboard", json!({"platform": "x", "accountId": d.wechat_account}))["total"], 0);

    // A metric orders within each platform (WeChat first), absent last either way.
    let by_readers = t.ok("perf.dashboard", json!({"sort": "metric:readers"}));
    assert_eq!(by_readers["groupedByPlatform"], true);
    assert_eq!(ids(&by_readers), vec![p[2].clone(), p[1].clone(), p[0].clone(), p[3].clone(), p[5].clone(), p[4].clone()]);
    let ascending = t.ok("perf.dashboard", json!({"sort": "metric:readers", "descending": false}));
    assert_eq!(ids(&ascending), vec![p[0].clone(), p[1].clone(), p[2].clone(), p[3].clone(), p[5].clone(), p[4].clone()]);
    let by_impressions = t.ok("perf.dashboard", json!({"sort": "metric:impressions"}));
    assert_eq!(ids(&by_impressions)[4..], [p[5].clone(), p[4].clone()], "X's own order, after WeChat's publications");
    assert_eq!(ids(&t.ok("perf.dashboard", json!({"sort": "title", "descending": false})))[0], p[0], "'=SUM(A1)' sorts before 春天");
    let by_account = ids(&t.ok("perf.dashboard", json!({"sort": "account", "descending": false})));
    assert_eq!(by_account.last(), Some(&p[3]), "no account sorts last");
    assert_eq!(t.ok("perf.dashboard", json!({}))["groupedByPlatform"], false);
    // Pages.
    let page = t.ok("perf.dashboard", json!({"limit": 2, "offset": 2}));
    assert_eq!(page["total"], 6);
    assert_eq!(ids(&page), vec![p[1].clone(), p[5].clone()]);

    // Refusals name the field and change nothing.
    let before = t.engine.kernel().store().count(inkstone_api::store::Kind::MetricSnapshots);
    for (params, field) in [
        (json!({"metric": "vibes"}), "metric"),
        (json!({"sort": "metric:vibes"}), "sort"),
        (json!({"sort": "mood"}), "sort"),
        (json!({"from": "2026-03-05T00:00:00Z", "to": "2026-03-05T00:00:00Z"}), "to"),
        (json!({"limit": 0}), "limit"),
        (json!({"limit": 1001}), "limit"),
    ] {
        let e = err(t, "perf.dashboard", params.clone());
        assert_eq!(e.code, ErrorCode::Validation, "{params}");
        assert_eq!(e.details.as_ref().unwrap()["field"], field, "{params}");
    }
    assert_eq!(err(t, "perf.dashboard", json!({"accountId": "acc_nope"})).code, ErrorCode::NotFound);
    assert_eq!(err(t, "perf.dashboard", json!({"projectId": "prj_nope"})).code, ErrorCode::NotFound);
    assert_eq!(err(t, "perf.dashboard", json!({"platform": "myspace"})).code, ErrorCode::Validation);
    assert_eq!(t.engine.kernel().store().count(inkstone_api::store::Kind::MetricSnapshots), before);
}

#[test]
fn each_platform_has_its_own_weekly_median_of_one_key_and_posting_times_are_local() {
    let d = data();
    let t = &d.t;
    let board = t.ok("perf.dashboard", json!({}));
    assert_eq!(board["interval"], "week");
    assert_eq!(board["age"], Value::Null);
    // WeChat's reach is readers; X's impressions. Weeks start on Monday, in the
    // publications' own zones: p1 (Mon 2 Mar Beijing) and p2 in one week, p3 the next.
    assert_eq!(
        board["medians"],
        json!([
            {"platform": "wechat", "metric": "readers", "unit": "count", "withoutValue": 1, "points": [
                {"period": "2026-03-02", "n": 2, "median": 2250.0},
                {"period": "2026-03-09", "n": 1, "median": 100000.0},
            ]},
            {"platform": "x", "metric": "impressions", "unit": "count", "withoutValue": 0, "points": [
                {"period": "2026-03-02", "n": 2, "median": 6000.0},
            ]},
        ])
    );
    // One key for both: X never reports views, so it has no points rather than zeros.
    let views = t.ok("perf.dashboard", json!({"metric": "views"}));
    assert_eq!(views["medians"][0]["points"], json!([{"period": "2026-03-02", "n": 1, "median": 2000.0}]));
    assert_eq!(views["medians"][0]["withoutValue"], 3);
    assert_eq!(views["medians"][1]["points"], json!([]));
    assert_eq!(views["medians"][1]["withoutValue"], 2);
    // At 24 h (the first snapshot in [24 h, 36 h)): p1's 1000 and p2's 3000; p3 was only
    // read at 10 days and X at 24.5 h / 48 h.
    let young = t.ok("perf.dashboard", json!({"age": "24h"}));
    assert_eq!(young["age"], "24h");
    assert_eq!(young["medians"][0]["points"], json!([{"period": "2026-03-02", "n": 2, "median": 2000.0}]));
    assert_eq!(young["medians"][0]["withoutValue"], 2);
    assert_eq!(young["medians"][1]["points"], json!([{"period": "2026-03-02", "n": 1, "median": 5000.0}]));
    // By month when asked.
    let monthly = t.ok("perf.dashboard", json!({"interval": "month", "platform": "wechat"}));
    assert_eq!(
        monthly["medians"],
        json!([{"platform": "wechat", "metric": "readers", "unit": "count", "withoutValue": 1, "points": [{"period": "2026-03-01", "n": 3, "median": 3000.0}]}])
    );

    // When the person posts: each publication in its own zone (p1 is Monday 20:00 in
    // Beijing, 12:00 in UTC; p5 Monday 23:00 in UTC, where X's times are).
    assert_eq!(
        board["postingTimes"],
        json!([
            {"weekday": 0, "hour": 20, "count": 1},
            {"weekday": 0, "hour": 23, "count": 1},
            {"weekday": 1, "hour": 1, "count": 1},
            {"weekday": 1, "hour": 8, "count": 1},
            {"weekday": 2, "hour": 9, "count": 1},
            {"weekday": 2, "hour": 20, "count": 1},
        ])
    );
    assert_eq!(t.ok("perf.dashboard", json!({"platform": "x"}))["postingTimes"].as_array().unwrap().len(), 2, "the grid follows the filters");
}

fn csv_lines(csv: &str) -> Vec<Vec<String>> {
    let body = csv.strip_prefix('\u{feff}').expect("the CSV starts with a byte-order mark");
    csv::ReaderBuilder::new().has_headers(false).from_reader(body.as_bytes()).records().map(|r| r.unwrap().iter().map(str::to_owned).collect()).collect()
}

#[test]
fn any_performance_table_exports_as_csv_with_a_bom_empty_cells_for_absent_and_defused_formulas() {
    let d = data();
    let (t, p) = (&d.t, &d.ids);
    let export = t.ok("perf.export", json!({"dashboard": {"platform": "wechat", "sort": "metric:readers"}}));
    assert_eq!(export["table"], "dashboard");
    assert_eq!(export["nRows"], 4, "every matching row, not a page");
    let lines = csv_lines(export["csv"].as_str().unwrap());
    let header = &lines[0];
    assert_eq!(header[..4], ["published_at", "time_zone", "platform", "account"]);
    assert_eq!(header[header.len() - 3..], ["views", "readers", "qualified"], "the columns are the keys WeChat's publications report");
    let column = |name: &str| header.iter().position(|h| h == name).unwrap();
    let rows: Vec<&Vec<String>> = lines[1..].iter().collect();
    assert_eq!(rows.iter().map(|r| r[column("publication_id")].clone()).collect::<Vec<_>>(), vec![p[2].clone(), p[1].clone(), p[0].clone(), p[3].clone()]);
    // p3: 10w+ is a lower bound, said so; views not reported: an empty cell, not 0.
    assert_eq!(rows[0][column("readers")], "100000");
    assert_eq!(rows[0][column("views")], "");
    assert_eq!(rows[0][column("qualified")], "readers:lower_bound");
    // p1: its publishing time in its own zone; the title a spreadsheet would run is defused.
    assert_eq!(rows[2][column("published_at")], "2026-03-02T20:30:00+08:00");
    assert_eq!(rows[2][column("title")], "'=SUM(A1)");
    assert_eq!(rows[2][column("readers")], "1500");
    assert_eq!(rows[2][column("account")], "墨砚官方号");
    // p4: never measured, every metric cell empty.
    assert_eq!(rows[3][column("views")], "");
    assert_eq!(rows[3][column("readers")], "");
    assert_eq!(rows[3][column("latest_observed_at")], "");

    // A project's publications: the dashboard filtered to the project.
    let project = t.ok("perf.export", json!({"dashboard": {"projectId": d.project_of_p1}}));
    assert_eq!(project["nRows"], 1);
    // The report's points, each naming its metric and age.
    let report = t.ok("perf.export", json!({"report": {"platform": "wechat", "bucket": "24h"}}));
    assert_eq!(report["table"], "report");
    let lines = csv_lines(report["csv"].as_str().unwrap());
    assert_eq!(
        lines[0],
        [
            "published_at",
            "title",
            "project_id",
            "publication_id",
            "account_id",
            "format",
            "ai_changes",
            "metric",
            "age_bucket",
            "snapshot_id",
            "age_hours",
            "value",
            "baseline",
            "multiple",
            "excluded"
        ]
    );
    assert_eq!(lines.len(), 3, "p1 and p2 were measured at 24 h: {lines:?}");
    assert_eq!(lines[1][7..9], ["readers", "24h"]);
    assert_eq!(lines[1][11], "1000");
    assert_eq!(lines[1][12], "", "no baseline: an empty cell");
    assert_eq!(lines[1][14], "noBaseline");

    // One table at a time; the dashboard's checks apply.
    assert_eq!(err(t, "perf.export", json!({})).code, ErrorCode::Validation);
    assert_eq!(err(t, "perf.export", json!({"dashboard": {}, "report": {"platform": "x"}})).code, ErrorCode::Validation);
    assert_eq!(err(t, "perf.export", json!({"dashboard": {"sort": "metric:vibes"}})).code, ErrorCode::Validation);
    let _ = &d.x_account;
}
