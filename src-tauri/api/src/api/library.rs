//! Brand profiles and content templates: the workspace's reusable settings.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::dto::Platform;
use super::{bounded_text, required_text, ApiError, Deleted, Empty, Engine, IdRef};
use crate::model::{ActivityKind, BrandProfile, ContentTemplate, Project, Timestamp};
use crate::store::{Batch, Durability, Record};

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
    pub brand_profiles: Vec<super::dto::BrandProfile>,
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
    pub templates: Vec<super::dto::ContentTemplate>,
}

fn fill_template(template: &mut ContentTemplate, input: TemplateInput) -> Result<(), ApiError> {
    template.name = required_text("name", &input.name, 100)?;
    template.title_template = bounded_text("titleTemplate", input.title_template.unwrap_or_default().trim(), super::MAX_TITLE_CHARS)?;
    template.source_template = bounded_text("sourceTemplate", &input.source_template.unwrap_or_default(), super::MAX_SOURCE_CHARS)?;
    let mut platforms: Vec<crate::model::Platform> = input.default_platforms.unwrap_or_default().into_iter().map(Into::into).collect();
    platforms.sort();
    platforms.dedup();
    template.default_platforms = platforms;
    template.tags = word_list("tags", input.tags)?;
    Ok(())
}

/// Brand profiles and templates are edited alike: created from an input, listed by
/// name, updated as a whole, deleted with an activity entry. One generic set of
/// methods serves both; what differs is in [`LibraryRecord`].
trait LibraryRecord: Record + Clone {
    type Input;
    /// `brand profile`, `template`: in messages and activity summaries.
    const WHAT: &'static str;
    const ID_PREFIX: &'static str;
    /// The activity kinds of create, update and delete.
    const ACTIVITY: [ActivityKind; 3];
    fn empty(id: String, now: Timestamp) -> Self;
    fn fill(&mut self, input: Self::Input) -> Result<(), ApiError>;
    fn id(&self) -> &str;
    fn name(&self) -> &str;
    fn touch(&mut self, now: Timestamp);
    /// Records that a delete changes besides the record itself.
    fn stage_delete_references(&self, _engine: &Engine, _batch: &mut Batch) -> Result<(), ApiError> {
        Ok(())
    }
}

impl LibraryRecord for BrandProfile {
    type Input = BrandProfileInput;
    const WHAT: &'static str = "brand profile";
    const ID_PREFIX: &'static str = "brd";
    const ACTIVITY: [ActivityKind; 3] = [ActivityKind::BrandProfileCreated, ActivityKind::BrandProfileUpdated, ActivityKind::BrandProfileDeleted];
    fn empty(id: String, now: Timestamp) -> Self {
        BrandProfile {
            id,
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
        }
    }
    fn fill(&mut self, input: BrandProfileInput) -> Result<(), ApiError> {
        fill_brand_profile(self, input)
    }
    fn id(&self) -> &str {
        &self.id
    }
    fn name(&self) -> &str {
        &self.name
    }
    fn touch(&mut self, now: Timestamp) {
        self.updated_at = now;
    }
    /// The projects that used the profile lose it, in the same transaction.
    fn stage_delete_references(&self, engine: &Engine, batch: &mut Batch) -> Result<(), ApiError> {
        let now = engine.now();
        for mut project in engine.store().scan::<Project>(b"")?.into_iter().filter(|p| p.brand_profile_id.as_deref() == Some(self.id.as_str())) {
            project.brand_profile_id = None;
            project.revision += 1;
            project.updated_at = now;
            batch.put(&project)?;
        }
        Ok(())
    }
}

impl LibraryRecord for ContentTemplate {
    type Input = TemplateInput;
    const WHAT: &'static str = "template";
    const ID_PREFIX: &'static str = "tpl";
    const ACTIVITY: [ActivityKind; 3] = [ActivityKind::TemplateCreated, ActivityKind::TemplateUpdated, ActivityKind::TemplateDeleted];
    fn empty(id: String, now: Timestamp) -> Self {
        ContentTemplate {
            id,
            name: String::new(),
            title_template: String::new(),
            source_template: String::new(),
            default_platforms: Vec::new(),
            tags: Vec::new(),
            created_at: now,
            updated_at: now,
        }
    }
    fn fill(&mut self, input: TemplateInput) -> Result<(), ApiError> {
        fill_template(self, input)
    }
    fn id(&self) -> &str {
        &self.id
    }
    fn name(&self) -> &str {
        &self.name
    }
    fn touch(&mut self, now: Timestamp) {
        self.updated_at = now;
    }
}

fn create<R: LibraryRecord>(engine: &Engine, input: R::Input) -> Result<R, ApiError> {
    let _guard = engine.write_lock();
    let now = engine.now();
    let mut record = R::empty(engine.new_id(R::ID_PREFIX), now);
    record.fill(input)?;
    let activity = engine.activity(None, R::ACTIVITY[0], format!("Created {} \"{}\"", R::WHAT, record.name()))?;
    let mut batch = Batch::new();
    batch.put(&record)?.put(&activity)?;
    engine.store().apply(batch, Durability::Durable)?;
    Ok(record)
}

fn load<R: LibraryRecord>(engine: &Engine, id: &str) -> Result<R, ApiError> {
    engine.store().get::<R>(id.as_bytes())?.ok_or_else(|| ApiError::not_found(R::WHAT, id))
}

/// Sorted by name, then id.
fn list<R: LibraryRecord>(engine: &Engine) -> Result<Vec<R>, ApiError> {
    let mut records = engine.store().scan::<R>(b"")?;
    records.sort_by(|a, b| a.name().cmp(b.name()).then_with(|| a.id().cmp(b.id())));
    Ok(records)
}

fn update<R: LibraryRecord>(engine: &Engine, id: &str, input: R::Input) -> Result<R, ApiError> {
    let _guard = engine.write_lock();
    let mut record: R = load(engine, id)?;
    record.fill(input)?;
    record.touch(engine.now());
    let activity = engine.activity(None, R::ACTIVITY[1], format!("Updated {} \"{}\"", R::WHAT, record.name()))?;
    let mut batch = Batch::new();
    batch.put(&record)?.put(&activity)?;
    engine.store().apply(batch, Durability::Durable)?;
    Ok(record)
}

fn delete<R: LibraryRecord>(engine: &Engine, id: &str) -> Result<Deleted, ApiError> {
    let _guard = engine.write_lock();
    let record: R = load(engine, id)?;
    let mut batch = Batch::new();
    record.stage_delete_references(engine, &mut batch)?;
    let activity = engine.activity(None, R::ACTIVITY[2], format!("Deleted {} \"{}\"", R::WHAT, record.name()))?;
    batch.delete::<R>(record.id().as_bytes().to_vec()).put(&activity)?;
    engine.store().apply(batch, Durability::Durable)?;
    Ok(Deleted { id: record.id().to_owned(), deleted: true })
}

pub(super) fn create_brand_profile(engine: &Engine, input: BrandProfileInput) -> Result<BrandProfile, ApiError> {
    create(engine, input)
}

pub(super) fn get_brand_profile(engine: &Engine, params: IdRef) -> Result<BrandProfile, ApiError> {
    load(engine, &params.id)
}

pub(super) fn list_brand_profiles(engine: &Engine, _: Empty) -> Result<BrandProfileListResult, ApiError> {
    Ok(BrandProfileListResult { brand_profiles: list::<BrandProfile>(engine)?.iter().map(Into::into).collect() })
}

pub(super) fn update_brand_profile(engine: &Engine, params: BrandProfileUpdateParams) -> Result<BrandProfile, ApiError> {
    update(engine, &params.id, params.profile)
}

/// Deletes a brand profile and clears it from the projects that used it, in one
/// transaction.
pub(super) fn delete_brand_profile(engine: &Engine, params: IdRef) -> Result<Deleted, ApiError> {
    delete::<BrandProfile>(engine, &params.id)
}

pub(super) fn create_template(engine: &Engine, input: TemplateInput) -> Result<ContentTemplate, ApiError> {
    create(engine, input)
}

pub(super) fn get_template(engine: &Engine, params: IdRef) -> Result<ContentTemplate, ApiError> {
    load(engine, &params.id)
}

pub(super) fn list_templates(engine: &Engine, _: Empty) -> Result<TemplateListResult, ApiError> {
    Ok(TemplateListResult { templates: list::<ContentTemplate>(engine)?.iter().map(Into::into).collect() })
}

pub(super) fn update_template(engine: &Engine, params: TemplateUpdateParams) -> Result<ContentTemplate, ApiError> {
    update(engine, &params.id, params.template)
}

/// Deletes a template. Projects made from it keep their content; their `templateId`
/// still names where they came from.
pub(super) fn delete_template(engine: &Engine, params: IdRef) -> Result<Deleted, ApiError> {
    delete::<ContentTemplate>(engine, &params.id)
}
