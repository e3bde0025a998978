//! Compiling, checking, measuring and suggesting through the engine's API (the
//! compilers themselves are tested in inkstone-text's `tests/pipeline.rs`).

mod through_the_api {
    use inkstone_api::ErrorCode;
    use inkstone_test_support::TestEngine;
    use serde_json::json;

    /// The tags a compile and `pipeline.suggest` propose for a
    /// mostly Chinese article come from its Chinese, not from its one English sentence.
    #[test]
    fn tags_of_a_chinese_article_with_one_english_sentence_are_chinese() {
        let t = TestEngine::new();
        let project = t.ok("project.create", json!({
            "title": "周末徒步装备清单",
            "source": "# 周末徒步装备清单\n\n周末去徒步，装备要轻。徒步鞋、背包和雨衣是徒步的基本装备。\n\n路线选择也很重要：新手徒步先走平缓的路线。For example, compare every pair of boots before you buy.\n",
            "platforms": ["x", "xiaohongshu"],
        }));
        let compiled = t.ok("pipeline.compile", json!({"projectId": project["id"]}));
        let suggested = t.ok("pipeline.suggest", json!({"projectId": project["id"]}));
        for tags in [&compiled["tags"], &suggested["tags"]] {
            let tags: Vec<&str> = tags.as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
            assert!(tags.contains(&"徒步"), "{tags:?}");
            assert!(tags.iter().all(|t| !t.is_ascii()), "{tags:?}");
        }
    }

    /// An image the project does not hold is not dropped silently: every
    /// platform's draft gets a finding naming it (an unknown `media/` file, a path a
    /// pasted file brought along, an asset whose file is gone), and an image that is
    /// there gets none.
    #[test]
    fn a_missing_image_is_a_finding_on_every_platform() {
        let t = TestEngine::new();
        let project = t.ok("project.create", json!({"title": "散步", "source": "开头。"}));
        let id = project["id"].as_str().unwrap();
        let asset = t.ok("media.addBytes", json!({"projectId": id, "fileName": "dot.png", "dataBase64": inkstone_test_support::tiny_png_base64()}));
        let gone = t.ok("media.addBytes", json!({"projectId": id, "fileName": "gone.gif", "dataBase64": "R0lGODlhAQABAAAAACH5BAEKAAEALAAAAAABAAEAAAICTAEAOw=="}));
        let gone_file = t.data_dir().join("media").join(gone["fileName"].as_str().unwrap());
        std::fs::remove_file(&gone_file).unwrap();
        let source = format!(
            "开头。\n\n![在](media/{})\n\n![不在](media/med_nothere.png)\n\n![粘贴带来的](images/walk.jpg)\n\n![文件没了](media/{})\n\n![网上的](https://example.com/a.png)\n",
            asset["fileName"].as_str().unwrap(),
            gone["fileName"].as_str().unwrap()
        );
        t.ok("project.update", json!({"projectId": id, "source": source}));
        let compiled = t.ok("pipeline.compile", json!({"projectId": id}));
        let drafts = compiled["drafts"].as_array().unwrap();
        assert_eq!(drafts.len(), 5);
        let expected = vec!["media/med_nothere.png".to_owned(), "images/walk.jpg".to_owned(), format!("media/{}", gone["fileName"].as_str().unwrap())];
        for draft in drafts {
            let missing: Vec<String> = draft["findings"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|f| f["check"] == "image.missing")
                .inspect(|f| {
                    assert_eq!(f["platform"], draft["draft"]["platform"]);
                    assert_eq!(f["severity"], "warn");
                    assert_eq!(f["messageId"], "image.missing");
                })
                .map(|f| f["matched"].as_str().unwrap().to_owned())
                .collect();
            assert_eq!(missing, expected, "{}", draft["draft"]["platform"]);
        }
        let checked = t.ok("quality.check", json!({"projectId": id}));
        assert_eq!(checked["findings"].as_array().unwrap().iter().filter(|f| f["check"] == "image.missing").count(), 15, "three images on five platforms");
    }

    #[test]
    fn compile_check_measure_and_suggest_a_project() {
        let t = TestEngine::new();
        let brand = t.ok("brandProfile.create", json!({"name": "墨石", "bannedWords": ["套路"], "defaultTags": ["写作"], "cta": "关注墨石"}));
        let project = t.ok(
            "project.create",
            json!({
                "title": "写作的套路",
                "source": "# 写作的套路\n\n这是最佳方法。阅读[原文](https://example.com)。\n\n关注墨石\n",
                "platforms": ["wechat", "x"],
                "brandProfileId": brand["id"],
            }),
        );
        let compiled = t.ok("pipeline.compile", json!({"projectId": project["id"]}));
        let platforms: Vec<&str> = compiled["drafts"].as_array().unwrap().iter().map(|d| d["draft"]["platform"].as_str().unwrap()).collect();
        assert_eq!(platforms, vec!["wechat", "x"], "the project's target platforms");
        assert_eq!(compiled["drafts"][0]["draft"]["profileId"], "wechat@draft-v1");
        assert_eq!(compiled["tags"][0], "写作", "brand default tags come first");
        let html = compiled["drafts"][0]["draft"]["content"]["html"].as_str().unwrap();
        assert!(html.contains("[1]</sup>") && !html.contains("href=\"https://example.com"), "{html}");
        let checks = t.ok("quality.check", json!({"projectId": project["id"]}));
        let found: Vec<(&str, &str)> = checks["findings"].as_array().unwrap().iter().filter_map(|f| Some((f["check"].as_str()?, f["matched"].as_str()?))).collect();
        assert!(found.contains(&("brand_banned_word", "套路")) && found.contains(&("ad_law", "最佳")), "{found:?}");
        let banned = checks["findings"].as_array().unwrap().iter().find(|f| f["check"] == "brand_banned_word" && !f["span"].is_null()).unwrap();
        assert_eq!(banned["span"], json!({"from": 5, "to": 7}), "UTF-16 span of 套路 in the source");
        assert!(checks["profileIds"].as_array().unwrap().iter().any(|p| p == "ad-law-zh@v2"));
        let measured = t.ok("pipeline.measure", json!({"platform": "x", "field": "post", "text": "中".repeat(141)}));
        assert_eq!((measured["weightedLength"].as_u64(), measured["valid"].as_bool()), (Some(282), Some(false)));
        let error = t.engine.call("pipeline.measure", json!({"platform": "x", "field": "digest", "text": "x"})).unwrap_err();
        assert_eq!((error.code, error.details.unwrap()["field"].as_str().map(str::to_owned)), (ErrorCode::Validation, Some("field".to_owned())));
        let suggested = t.ok("pipeline.suggest", json!({"projectId": project["id"]}));
        assert!(suggested["titleFits"].as_array().unwrap().len() >= 4);
        let profile = t.ok("platformProfile.get", json!({"id": "xiaohongshu@draft-v1"}));
        assert_eq!(profile["type"], "draft");
    }
}

/// The platform-fit report through the API: one report per platform for the fresh
/// compile (and for the saved draft once there is one), each point explained, with the
/// statement that it measures rules, not growth.
#[test]
fn fit_reports_score_each_platform_against_its_written_rules() {
    let t = inkstone_test_support::TestEngine::new();
    let source = "# 午休\n\n上班族的三条午休放松法。\n\n一、闭眼五分钟。\n\n二、走到窗边。\n\n你最常用哪一条？欢迎收藏。\n";
    let id = t.ok("project.create", serde_json::json!({"title": "午休放松的三个小方法", "source": source}))["id"].as_str().unwrap().to_owned();
    let result = t.ok("pipeline.fit", serde_json::json!({"projectId": id}));
    let reports = result["reports"].as_array().unwrap();
    assert_eq!(reports.len(), 5, "all five platforms when the project names none");
    assert!(result["disclaimer"].as_str().unwrap().contains("does not predict"));
    for report in reports {
        let score = report["compiled"]["score"].as_u64().unwrap();
        assert!(score <= 100);
        let points = report["compiled"]["points"].as_array().unwrap();
        assert!(points.iter().any(|p| p["check"] == "limits"));
        assert!(points.iter().all(|p| !p["measured"].as_str().unwrap().is_empty() && !p["rule"].as_str().unwrap().is_empty()));
        assert!(report.get("saved").is_none());
    }
    let xhs = reports.iter().find(|r| r["platform"] == "xiaohongshu").unwrap();
    assert!(xhs["compiled"]["points"].as_array().unwrap().iter().any(|p| p["check"] == "cta" && p["passed"] == true));
    t.ok("platformDraft.save", serde_json::json!({"projectId": id, "platform": "xiaohongshu"}));
    let result = t.ok("pipeline.fit", serde_json::json!({"projectId": id, "platforms": ["xiaohongshu"]}));
    assert_eq!(result["reports"].as_array().unwrap().len(), 1);
    assert_eq!(result["reports"][0]["saved"]["score"], result["reports"][0]["compiled"]["score"], "the saved draft is the same compile");
}
