//! Brand profiles and content templates: the workspace's reusable settings.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::{bounded_text, required_text, ApiError, Deleted, Empty, Engine, IdRef};
use crate::model::{ActivityKind, BrandProfile, ContentTemplate, Platform, Project};
use crate::store::{Batch, Durability};

/// The editable fields of a brand profile.
#[derive(Debug, Clone, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BrandProfileInput {
    pub name: String,
    #[serde(default)]
    #[ts(optional)]
    pub voice: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub target_audience: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub banned_words: Option<Vec<String>>,
    #[serde(default)]
    #[ts(optional)]
    pub cta: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub link_strategy: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub default_tags: Option<Vec<String>>,
    #[serde(default)]
    #[ts(optional)]
    pub industry: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BrandProfileUpdateParams {
    pub id: String,
    /// The new values; absent optional fields become empty.
    pub profile: BrandProfileInput,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct BrandProfileListResult {
    pub brand_profiles: Vec<BrandProfile>,
}

fn word_list(field: &str, words: Option<Vec<String>>) -> Result<Vec<String>, ApiError> {
    let mut out: Vec<String> = Vec::new();
    for (idx, word) in words.unwrap_or_default().iter().enumerate() {
        let word = bounded_text(&format!("{field}[{idx}]"), word.trim(), 100)?;
        if !word.is_empty() && !out.contains(&word) {
            out.push(word);
        }
    }
    if out.len() > 500 {
        return Err(ApiError::validation(field, format!("`{field}` has {} entries; at most 500 are allowed.", out.len())));
    }
    Ok(out)
}

fn text(field: &str, value: Option<String>) -> Result<String, ApiError> {
    bounded_text(field, value.unwrap_or_default().trim(), 5_000)
}

fn fill_brand_profile(profile: &mut BrandProfile, input: BrandProfileInput) -> Result<(), ApiError> {
    profile.name = required_text("name", &input.name, 100)?;
    profile.voice = text("voice", input.voice)?;
    profile.target_audience = text("targetAudience", input.target_audience)?;
    profile.banned_words = word_list("bannedWords", input.banned_words)?;
    profile.cta = text("cta", input.cta)?;
    profile.link_strategy = text("linkStrategy", input.link_strategy)?;
    profile.default_tags = word_list("defaultTags", input.default_tags)?;
    profile.industry = text("industry", input.industry)?;
    Ok(())
}

pub(super) fn create_brand_profile(engine: &Engine, input: BrandProfileInput) -> Result<BrandProfile, ApiError> {
    let _guard = engine.write_lock();
    let now = engine.now();
    let mut profile = BrandProfile {
        id: engine.new_id("brd"),
        name: String::new(),
        voice: String::new(),
        target_audience: String::new(),
        banned_words: Vec::new(),
        cta: String::new(),
        link_strategy: String::new(),
        default_tags: Vec::new(),
        industry: String::new(),
        created_at: now,
        updated_at: now,
    };
    fill_brand_profile(&mut profile, input)?;
    let activity = engine.activity(None, ActivityKind::BrandProfileCreated, format!("Created brand profile \"{}\"", profile.name))?;
    let mut batch = Batch::new();
    batch.put(&profile)?.put(&activity)?;
    engine.store().apply(batch, Durability::Durable)?;
    Ok(profile)
}

fn load_brand_profile(engine: &Engine, id: &str) -> Result<BrandProfile, ApiError> {
    engine.store().get::<BrandProfile>(id.as_bytes())?.ok_or_else(|| ApiError::not_found("brand profile", id))
}

pub(super) fn get_brand_profile(engine: &Engine, params: IdRef) -> Result<BrandProfile, ApiError> {
    load_brand_profile(engine, &params.id)
}

pub(super) fn list_brand_profiles(engine: &Engine, _: Empty) -> Result<BrandProfileListResult, ApiError> {
    let mut brand_profiles = engine.store().scan::<BrandProfile>(b"")?;
    brand_profiles.sort_by(|a, b| a.name.cmp(&b.name).then_with(|| a.id.cmp(&b.id)));
    Ok(BrandProfileListResult { brand_profiles })
}

pub(super) fn update_brand_profile(engine: &Engine, params: BrandProfileUpdateParams) -> Result<BrandProfile, ApiError> {
    let _guard = engine.write_lock();
    let mut profile = load_brand_profile(engine, &params.id)?;
    fill_brand_profile(&mut profile, params.profile)?;
    profile.updated_at = engine.now();
    let activity = engine.activity(None, ActivityKind::BrandProfileUpdated, format!("Updated brand profile \"{}\"", profile.name))?;
    let mut batch = Batch::new();
    batch.put(&profile)?.put(&activity)?;
    engine.store().apply(batch, Durability::Durable)?;
    Ok(profile)
}

/// Deletes a brand profile and clears it from the projects that used it, in one
/// transaction.
pub(super) fn delete_brand_profile(engine: &Engine, params: IdRef) -> Result<Deleted, ApiError> {
    let _guard = engine.write_lock();
    let profile = load_brand_profile(engine, &params.id)?;
    let mut batch = Batch::new();
    let now = engine.now();
    for mut project in engine.store().scan::<Project>(b"")?.into_iter().filter(|p| p.brand_profile_id.as_deref() == Some(profile.id.as_str())) {
        project.brand_profile_id = None;
        project.revision += 1;
        project.updated_at = now;
        batch.put(&project)?;
    }
    let activity = engine.activity(None, ActivityKind::BrandProfileDeleted, format!("Deleted brand profile \"{}\"", profile.name))?;
    batch.delete::<BrandProfile>(profile.id.as_bytes().to_vec()).put(&activity)?;
    engine.store().apply(batch, Durability::Durable)?;
    Ok(Deleted { id: profile.id, deleted: true })
}

/// The editable fields of a template.
#[derive(Debug, Clone, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TemplateInput {
    pub name: String,
    /// May contain `{date}`, filled with the creation date (YYYY-MM-DD).
    #[serde(default)]
    #[ts(optional)]
    pub title_template: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub source_template: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub default_platforms: Option<Vec<Platform>>,
    #[serde(default)]
    #[ts(optional)]
    pub tags: Option<Vec<String>>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TemplateUpdateParams {
    pub id: String,
    /// The new values; absent optional fields become empty.
    pub template: TemplateInput,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TemplateListResult {
    pub templates: Vec<ContentTemplate>,
}

fn fill_template(template: &mut ContentTemplate, input: TemplateInput) -> Result<(), ApiError> {
    template.name = required_text("name", &input.name, 100)?;
    template.title_template = bounded_text("titleTemplate", input.title_template.unwrap_or_default().trim(), super::MAX_TITLE_CHARS)?;
    template.source_template = bounded_text("sourceTemplate", &input.source_template.unwrap_or_default(), super::MAX_SOURCE_CHARS)?;
    let mut platforms = input.default_platforms.unwrap_or_default();
    platforms.sort();
    platforms.dedup();
    template.default_platforms = platforms;
    template.tags = word_list("tags", input.tags)?;
    Ok(())
}

pub(super) fn create_template(engine: &Engine, input: TemplateInput) -> Result<ContentTemplate, ApiError> {
    let _guard = engine.write_lock();
    let now = engine.now();
    let mut template = ContentTemplate {
        id: engine.new_id("tpl"),
        name: String::new(),
        title_template: String::new(),
        source_template: String::new(),
        default_platforms: Vec::new(),
        tags: Vec::new(),
        created_at: now,
        updated_at: now,
    };
    fill_template(&mut template, input)?;
    let activity = engine.activity(None, ActivityKind::TemplateCreated, format!("Created template \"{}\"", template.name))?;
    let mut batch = Batch::new();
    batch.put(&template)?.put(&activity)?;
    engine.store().apply(batch, Durability::Durable)?;
    Ok(template)
}

fn load_template(engine: &Engine, id: &str) -> Result<ContentTemplate, ApiError> {
    engine.store().get::<ContentTemplate>(id.as_bytes())?.ok_or_else(|| ApiError::not_found("template", id))
}

pub(super) fn get_template(engine: &Engine, params: IdRef) -> Result<ContentTemplate, ApiError> {
    load_template(engine, &params.id)
}

pub(super) fn list_templates(engine: &Engine, _: Empty) -> Result<TemplateListResult, ApiError> {
    let mut templates = engine.store().scan::<ContentTemplate>(b"")?;
    templates.sort_by(|a, b| a.name.cmp(&b.name).then_with(|| a.id.cmp(&b.id)));
    Ok(TemplateListResult { templates })
}

pub(super) fn update_template(engine: &Engine, params: TemplateUpdateParams) -> Result<ContentTemplate, ApiError> {
    let _guard = engine.write_lock();
    let mut template = load_template(engine, &params.id)?;
    fill_template(&mut template, params.template)?;
    template.updated_at = engine.now();
    let activity = engine.activity(None, ActivityKind::TemplateUpdated, format!("Updated template \"{}\"", template.name))?;
    let mut batch = Batch::new();
    batch.put(&template)?.put(&activity)?;
    engine.store().apply(batch, Durability::Durable)?;
    Ok(template)
}

/// Deletes a template. Projects made from it keep their content; their `templateId`
/// still names where they came from.
pub(super) fn delete_template(engine: &Engine, params: IdRef) -> Result<Deleted, ApiError> {
    let _guard = engine.write_lock();
    let template = load_template(engine, &params.id)?;
    let activity = engine.activity(None, ActivityKind::TemplateDeleted, format!("Deleted template \"{}\"", template.name))?;
    let mut batch = Batch::new();
    batch.delete::<ContentTemplate>(template.id.as_bytes().to_vec()).put(&activity)?;
    engine.store().apply(batch, Durability::Durable)?;
    Ok(Deleted { id: template.id, deleted: true })
}
