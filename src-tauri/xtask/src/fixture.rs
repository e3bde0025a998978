//! The first-schema store fixture. Made once, with the engine of schema 1, and kept:
//! later builds must keep opening it (through their migrations) with the same content.

use std::path::Path;

use anyhow::{bail, Context, Result};
use inkstone_api::{Engine, EngineConfig};
use serde_json::json;

pub fn write(dest: &Path) -> Result<()> {
    if dest.exists() {
        bail!("{} exists; the first-schema fixture is never regenerated", dest.display());
    }
    let dir = tempfile::tempdir()?;
    let data_dir = dir.path().join("data");
    {
        let engine = Engine::open(EngineConfig::for_tests(&data_dir).with_display_name("林小墨"))?;
        let call = |method: &str, params: serde_json::Value| engine.call(method, params).with_context(|| method.to_owned());
        let brand = call("brandProfile.create", json!({"name": "墨石品牌", "voice": "克制、具体", "bannedWords": ["最佳", "第一"], "defaultTags": ["写作"]}))?;
        let template =
            call("template.create", json!({"name": "周报", "titleTemplate": "周报 {date}", "sourceTemplate": "## 本周\n\n## 下周\n", "defaultPlatforms": ["wechat", "zhihu"]}))?;
        let project = call(
            "project.create",
            json!({"title": "春天的第一篇", "source": "今天天气很好。\n\nThe quick brown fox.\n", "platforms": ["wechat", "x"], "brandProfileId": brand["id"]}),
        )?;
        let project_id = project["id"].clone();
        call("version.create", json!({"projectId": project_id, "message": "初稿"}))?;
        call("project.update", json!({"projectId": project_id, "baseRevision": 1, "source": "今天天气不错。\n\nThe slow brown fox.\n"}))?;
        call("version.create", json!({"projectId": project_id}))?;
        call("comment.add", json!({"projectId": project_id, "body": "这句可以更具体", "anchor": {"from": 0, "to": 6}}))?;
        call("version.restore", json!({"projectId": project_id, "number": 1}))?;
        call("project.create", json!({"templateId": template["id"]}))?;
        let archived = call("project.create", json!({"title": "Archived draft"}))?;
        call("project.archive", json!({"projectId": archived["id"], "archived": true}))?;
        // A 1x1 transparent PNG.
        let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
        call("media.addBytes", json!({"projectId": project_id, "fileName": "dot.png", "dataBase64": png, "altText": "一个点"}))?;
    }
    std::fs::remove_file(data_dir.join("inkstone.lock")).ok();
    let file = std::fs::File::create(dest)?;
    let mut archive = tar::Builder::new(flate2::write::GzEncoder::new(file, flate2::Compression::best()));
    archive.append_dir_all("data", &data_dir)?;
    archive.into_inner()?.finish()?;
    println!("fixture-store: wrote {} ({} bytes)", dest.display(), std::fs::metadata(dest)?.len());
    Ok(())
}
