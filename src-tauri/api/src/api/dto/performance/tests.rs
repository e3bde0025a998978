//! The wire JSON of performance records, written out as in [`super::super`]'s test: a
//! rename in what the store keeps changes none of it, and a change to a twin fails here.

use std::collections::BTreeMap;

use chrono::NaiveDate;
use serde_json::json;

use crate::model::{Platform, Timestamp};
use crate::performance::{self as domain, dashboard, import, metrics, report};

fn at() -> Timestamp {
    "2026-01-02T03:04:05Z".parse().unwrap()
}

fn day(text: &str) -> NaiveDate {
    text.parse().unwrap()
}

fn reads(value: f64, raw: &str) -> metrics::MetricValue {
    metrics::MetricValue { value, unit: metrics::MetricUnit::Count, qualifier: crate::performance::numbers::Qualifier::Rounded, raw: raw.into() }
}

fn publication() -> domain::Publication {
    domain::Publication {
        id: "pub_1".into(),
        project_id: "prj_1".into(),
        platform: Platform::Wechat,
        version_number: 2,
        version_id: "ver_2".into(),
        account_id: Some("acc_1".into()),
        url: None,
        platform_post_id: None,
        title: "Tea".into(),
        published_at: at(),
        time_zone: "Asia/Shanghai".into(),
        format: domain::PublicationFormat::ImageText,
        distribution: domain::Distribution::Unnotified,
        visibility: domain::Visibility::Public,
        ai_changes: vec![domain::AiChange {
            version_number: 2,
            proposal_id: Some("prp_1".into()),
            proposal_kind: Some("source_patch".into()),
            session_id: None,
            run_id: None,
            model: Some("m".into()),
            pulled_from: None,
        }],
        previous_version_number: None,
        removed_at: None,
        created_by: "Ann".into(),
        created_at: at(),
        updated_at: at(),
    }
}

const PUBLICATION_JSON: &str = r#"{
    "id": "pub_1", "projectId": "prj_1", "platform": "wechat", "versionNumber": 2, "versionId": "ver_2", "accountId": "acc_1",
    "url": null, "platformPostId": null, "title": "Tea", "publishedAt": "2026-01-02T03:04:05Z", "timeZone": "Asia/Shanghai",
    "format": "imageText", "distribution": "unnotified", "visibility": "public",
    "aiChanges": [{
        "versionNumber": 2, "proposalId": "prp_1", "proposalKind": "source_patch", "sessionId": null, "runId": null, "model": "m", "pulledFrom": null
    }],
    "previousVersionNumber": null, "removedAt": null, "createdBy": "Ann", "createdAt": "2026-01-02T03:04:05Z", "updatedAt": "2026-01-02T03:04:05Z"
}"#;

#[test]
fn the_wire_json_of_a_dashboard_is_its_twins() {
    let row = dashboard::DashboardRow {
        publication: publication(),
        account_name: Some("Inkstone".into()),
        latest: BTreeMap::from([(
            "readers".to_owned(),
            dashboard::LatestMetric { value: reads(12000.0, "1.2万"), snapshot_id: "snp_1".into(), observed_at: at(), age_hours: 24.5 },
        )]),
        snapshot_count: 1,
    };
    let board = dashboard::Dashboard {
        rows: vec![row],
        total: 1,
        metric_keys: vec!["readers".into()],
        grouped_by_platform: false,
        interval: dashboard::Interval::Month,
        age: Some(report::AgeBucket::H72),
        medians: vec![dashboard::PlatformMedians {
            platform: Platform::Wechat,
            metric: "readers".into(),
            unit: Some(metrics::MetricUnit::Count),
            points: vec![dashboard::MedianPoint { period: day("2026-01-01"), n: 1, median: 12000.0 }],
            without_value: 0,
        }],
        posting_times: vec![dashboard::PostingCell { weekday: 4, hour: 11, count: 1 }],
    };
    let publication_json: serde_json::Value = serde_json::from_str(PUBLICATION_JSON).unwrap();
    assert_eq!(
        serde_json::to_value(super::Dashboard::from(&board)).unwrap(),
        json!({
            "rows": [{
                "publication": publication_json,
                "accountName": "Inkstone",
                "latest": {"readers": {
                    "value": 12000.0, "unit": "count", "qualifier": "rounded", "raw": "1.2万",
                    "snapshotId": "snp_1", "observedAt": "2026-01-02T03:04:05Z", "ageHours": 24.5
                }},
                "snapshotCount": 1
            }],
            "total": 1, "metricKeys": ["readers"], "groupedByPlatform": false, "interval": "month", "age": "72h",
            "medians": [{
                "platform": "wechat", "metric": "readers", "unit": "count", "points": [{"period": "2026-01-01", "n": 1, "median": 12000.0}], "withoutValue": 0
            }],
            "postingTimes": [{"weekday": 4, "hour": 11, "count": 1}]
        })
    );
    assert_eq!(serde_json::to_value(super::Publication::from(publication())).unwrap(), publication_json);
}

#[test]
fn the_wire_json_of_an_import_preview_and_a_snapshot_is_their_twins() {
    let preview = import::ImportPreview {
        file_sha256: "sha256:00".into(),
        importer: "wechat-content@v1".into(),
        importer_name: "WeChat".into(),
        platform: Platform::Wechat,
        target: import::ExportTarget::Posts,
        account_id: None,
        encoding: "utf-8".into(),
        already_imported: None,
        rows: vec![
            import::RowPreview {
                row: 2,
                title: "Tea".into(),
                post_id: None,
                published_at: Some(at()),
                outcome: import::RowOutcome::Matched { publication_id: "pub_1".into(), by: "title".into() },
                metrics: BTreeMap::from([("readers".to_owned(), reads(12000.0, "1.2万"))]),
                private: false,
            },
            import::RowPreview {
                row: 3,
                title: String::new(),
                post_id: None,
                published_at: None,
                outcome: import::RowOutcome::AccountDay { account_id: "acc_1".into(), date: day("2026-01-02") },
                metrics: BTreeMap::new(),
                private: true,
            },
        ],
        matched: 1,
        unmatched: 0,
        ambiguous: 0,
        skipped: 0,
        not_understood: 0,
    };
    assert_eq!(
        serde_json::to_value(super::ImportPreview::from(&preview)).unwrap(),
        json!({
            "fileSha256": "sha256:00", "importer": "wechat-content@v1", "importerName": "WeChat", "platform": "wechat", "target": "posts",
            "accountId": null, "encoding": "utf-8", "alreadyImported": null,
            "rows": [
                {
                    "row": 2, "title": "Tea", "postId": null, "publishedAt": "2026-01-02T03:04:05Z",
                    "outcome": {"status": "matched", "publicationId": "pub_1", "by": "title"},
                    "metrics": {"readers": {"value": 12000.0, "unit": "count", "qualifier": "rounded", "raw": "1.2万"}}, "private": false
                },
                {
                    "row": 3, "title": "", "postId": null, "publishedAt": null,
                    "outcome": {"status": "accountDay", "accountId": "acc_1", "date": "2026-01-02"}, "metrics": {}, "private": true
                }
            ],
            "matched": 1, "unmatched": 0, "ambiguous": 0, "skipped": 0, "notUnderstood": 0
        })
    );

    let snapshot = metrics::MetricSnapshot {
        id: "snp_1".into(),
        publication_id: "pub_1".into(),
        project_id: "prj_1".into(),
        platform: Platform::Wechat,
        observed_at: at(),
        age_hours: 24.5,
        window: metrics::SnapshotWindow::Period { start: day("2026-01-01"), end: day("2026-01-02") },
        source: metrics::SnapshotSource::Import {
            import_id: "imp_1".into(),
            file_sha256: "sha256:00".into(),
            importer: "wechat-content@v1".into(),
            importer_version: 1,
            sheet: None,
            row: 2,
            raw_row: vec![("阅读人数".into(), "1.2万".into())],
        },
        metrics: BTreeMap::from([("readers".to_owned(), reads(12000.0, "1.2万"))]),
        extras: BTreeMap::new(),
        created_at: at(),
    };
    assert_eq!(
        serde_json::to_value(super::MetricSnapshot::from(&snapshot)).unwrap(),
        json!({
            "id": "snp_1", "publicationId": "pub_1", "projectId": "prj_1", "platform": "wechat", "observedAt": "2026-01-02T03:04:05Z", "ageHours": 24.5,
            "window": {"type": "period", "start": "2026-01-01", "end": "2026-01-02"},
            "source": {
                "type": "import", "importId": "imp_1", "fileSha256": "sha256:00", "importer": "wechat-content@v1", "importerVersion": 1,
                "sheet": null, "row": 2, "rawRow": [["阅读人数", "1.2万"]]
            },
            "metrics": {"readers": {"value": 12000.0, "unit": "count", "qualifier": "rounded", "raw": "1.2万"}}, "extras": {},
            "createdAt": "2026-01-02T03:04:05Z"
        })
    );
    let keys: Vec<super::MetricKeyInfo> = metrics::METRIC_KEYS.iter().take(1).map(Into::into).collect();
    assert_eq!(serde_json::to_value(keys).unwrap(), json!([{"key": "impressions", "unit": "count", "basis": "times shown in feeds (曝光, 展现, X Impressions)"}]));
}

#[test]
fn the_wire_json_of_a_report_and_the_context_setting_is_their_twins() {
    let side = report::ReportSide { n: 3, median_multiple: Some(1.5), p30: None, p70: None };
    let before_after = report::BeforeAfterReport {
        platform: Platform::X,
        project_id: None,
        metric: "impressions".into(),
        unit: Some(metrics::MetricUnit::Count),
        bucket: report::AgeBucket::H24,
        with_ai: side.clone(),
        without_ai: side,
        enough_data: true,
        excluded: BTreeMap::from([(report::Exclusion::NoSnapshotAtAge, 2)]),
        after_weak_post: 0,
        points: vec![report::ReportPoint {
            publication_id: "pub_1".into(),
            project_id: "prj_1".into(),
            title: "Tea".into(),
            published_at: at(),
            account_id: None,
            format: domain::PublicationFormat::Thread,
            ai: true,
            snapshot_id: "snp_1".into(),
            age_hours: 25.0,
            value: 300.0,
            baseline: Some(200.0),
            multiple: Some(1.5),
            excluded: Some(report::Exclusion::UnderFloor),
        }],
    };
    let side_json = json!({"n": 3, "medianMultiple": 1.5, "p30": null, "p70": null});
    assert_eq!(
        serde_json::to_value(super::BeforeAfterReport::from(&before_after)).unwrap(),
        json!({
            "platform": "x", "projectId": null, "metric": "impressions", "unit": "count", "bucket": "24h",
            "withAi": side_json, "withoutAi": side_json, "enoughData": true, "excluded": {"noSnapshotAtAge": 2}, "afterWeakPost": 0,
            "points": [{
                "publicationId": "pub_1", "projectId": "prj_1", "title": "Tea", "publishedAt": "2026-01-02T03:04:05Z", "accountId": null,
                "format": "thread", "ai": true, "snapshotId": "snp_1", "ageHours": 25.0, "value": 300.0, "baseline": 200.0, "multiple": 1.5,
                "excluded": "underFloor"
            }]
        })
    );
    let state = crate::performance::context::ContextState { enabled: false, setting: true, decided_by_policy: true, policy_workspace: None, policy_set_by: Some("Ann".into()) };
    assert_eq!(serde_json::to_value(super::ContextState::from(state)).unwrap(), json!({"enabled": false, "setting": true, "decidedByPolicy": true, "policySetBy": "Ann"}));

    // What the API reads from the wire converts to the domain's values.
    let bucket: super::AgeBucket = serde_json::from_value(json!("7d")).unwrap();
    assert_eq!(report::AgeBucket::from(bucket), report::AgeBucket::D7);
    let window: super::SnapshotWindow = serde_json::from_value(json!({"type": "day", "date": "2026-01-02"})).unwrap();
    assert_eq!(metrics::SnapshotWindow::from(window), metrics::SnapshotWindow::Day { date: day("2026-01-02") });
    let interval: super::Interval = serde_json::from_value(json!("week")).unwrap();
    assert_eq!(dashboard::Interval::from(interval), dashboard::Interval::Week);
    let format: super::PublicationFormat = serde_json::from_value(json!("imageText")).unwrap();
    assert_eq!(domain::PublicationFormat::from(format), domain::PublicationFormat::ImageText);
    let (distribution, visibility): (super::Distribution, super::Visibility) = serde_json::from_value(json!(["boosted", "private"])).unwrap();
    assert_eq!((domain::Distribution::from(distribution), domain::Visibility::from(visibility)), (domain::Distribution::Boosted, domain::Visibility::Private));
}
