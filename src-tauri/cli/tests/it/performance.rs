//! Performance data through the CLI binary: an account, a publication, metrics typed
//! by hand, an X export imported (dry run first, then for real, then again: nothing
//! more), and removal that keeps metrics until purged.

use serde_json::json;

use crate::{json_ok, run, stdout};

#[test]
fn publications_metrics_and_an_import_through_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let project = json_ok(data, &["project", "create", "春天", "--platform", "x"]);
    let id = project["id"].as_str().unwrap();
    json_ok(data, &["version", "create", id]);
    let account = json_ok(data, &["account", "add", "--platform", "x", "inkstone", "--handle", "@inkstone"]);
    let acc = account["id"].as_str().unwrap();
    let p =
        json_ok(data, &["publication", "add", id, "--platform", "x", "--account", acc, "--url", "https://x.com/inkstone/status/1798000000000000001", "--at", "2025-12-30 08:00"]);
    let pid = p["id"].as_str().unwrap();
    assert_eq!(p["timeZone"], "UTC");

    let snap = json_ok(data, &["perf", "add", pid, "--metric", "impressions=1.2万", "--metric", "likes=-", "--metric", "platform_engagement_rate=3.3%"]);
    assert_eq!(snap["metrics"]["impressions"]["qualifier"], "rounded");
    assert!(snap["metrics"].get("likes").is_none());
    let bad = run(data, &["perf", "add", pid, "--metric", "views=lots"]);
    assert_eq!(bad.status.code(), Some(1));
    let usage = run(data, &["perf", "add", pid, "--metric", "views"]);
    assert_eq!(usage.status.code(), Some(2));

    let csv = dir.path().join("account_analytics_content_2026-06-01_2026-06-30.csv");
    std::fs::write(
        &csv,
        "\u{feff}Post id,Date,Post text,Post Link,Impressions,Likes,Engagements,Bookmarks,Shares,New follows,Replies,Reposts,Profile visits,Detail Expands,URL Clicks,Hashtag Clicks,Permalink Clicks\r\n1798000000000000001,\"Fri, Jun 5, 2026\",春天,https://x.com/inkstone/status/1798000000000000001,\"12,345\",321,\"1,002\",45,6,7,8,9,10,11,12,0,3\r\n",
    )
    .unwrap();
    let path = csv.to_str().unwrap();
    let preview = stdout(&run(data, &["perf", "import", path, "--dry-run"]));
    assert!(preview.contains("X content export") && preview.contains(pid) && preview.contains("Nothing written"), "{preview}");
    assert_eq!(json_ok(data, &["perf", "list", pid])["snapshots"].as_array().unwrap().len(), 1, "a dry run writes nothing");
    let done = json_ok(data, &["perf", "import", path]);
    assert_eq!(done["committed"], true);
    let again = stdout(&run(data, &["perf", "import", path]));
    assert!(again.contains("imported before"), "{again}");
    assert_eq!(json_ok(data, &["perf", "list", pid])["snapshots"].as_array().unwrap().len(), 2);

    let listed = stdout(&run(data, &["publication", "list", id]));
    assert!(listed.contains(pid) && listed.contains("impressions=12,345"), "{listed}");
    let removed = stdout(&run(data, &["publication", "remove", pid]));
    assert!(removed.contains("kept until"), "{removed}");
    assert_eq!(run(data, &["publication", "purge", pid]).status.code(), Some(1), "purge needs --yes");
    let purged = json_ok(data, &["publication", "purge", pid, "--yes"]);
    assert_eq!(purged["snapshotsDeleted"], 2);
    assert_eq!(json_ok(data, &["publication", "list", "--removed"])["publications"], json!([]));
    json_ok(data, &["account", "delete", acc]);
}

/// WeChat 用户分析 (an HTML table saved as .xls) through the CLI: it needs the account
/// when there are two WeChat accounts, then becomes that account's days.
#[test]
fn an_account_export_becomes_the_accounts_days_through_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/performance/wechat-user-analysis.xls");
    let path = fixture.to_str().unwrap();
    let a = json_ok(data, &["account", "add", "--platform", "wechat", "墨砚官方号"]);
    json_ok(data, &["account", "add", "--platform", "wechat", "墨砚小号"]);
    let refused = run(data, &["perf", "import", path]);
    assert_eq!(refused.status.code(), Some(1), "two WeChat accounts: which one?");
    let acc = a["id"].as_str().unwrap();
    let preview = stdout(&run(data, &["perf", "import", path, "--account", acc, "--dry-run"]));
    assert!(preview.contains("公众号 用户分析") && preview.contains(&format!("→ {acc} on 2026-03-02")), "{preview}");
    assert_eq!(json_ok(data, &["perf", "import", path, "--account", acc])["snapshots"].as_array().unwrap().len(), 3);
    let days = stdout(&run(data, &["perf", "account-days", acc]));
    assert!(days.contains("2026-03-03") && days.contains("1209") && days.contains("—"), "{days}");
}

#[test]
fn the_performance_context_setting_is_read_and_set_through_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let shown = stdout(&run(data, &["perf", "context"]));
    assert!(shown.contains("Use performance history in AI context: on"), "on by default: {shown}");
    let off = json_ok(data, &["perf", "context", "off"]);
    assert_eq!(off, json!({"enabled": false, "setting": false, "decidedByPolicy": false}));
    assert!(stdout(&run(data, &["perf", "context"])).contains("context: off"));
    assert_eq!(run(data, &["perf", "context", "maybe"]).status.code(), Some(2), "only on or off");
    assert_eq!(json_ok(data, &["perf", "context", "on"])["enabled"], true);
    let summary = stdout(&run(data, &["perf", "summary", "--platform", "x"]));
    assert!(summary.contains("Not enough eligible posts on x"), "{summary}");
}
