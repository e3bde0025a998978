//! Platform profiles, draft compilation, measuring, quality checks and offline
//! suggestions, over a project's working copy.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::dto::Platform;
use super::dto::{DraftProfile, Finding, GrowthProfile, LimitField, Measurement, RiskList};
use super::projects::{load as load_project, ProjectRef};
use super::{ApiError, Empty, Engine, IdRef};
use crate::pipeline;
use crate::profiles::ProfileSet;
use crate::project::drafts::PipelineCompileResult;
use crate::project::drafts::{self, draft_profile};

fn profiles(engine: &Engine) -> Result<ProfileSet, ApiError> {
    drafts::profiles(engine)
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PlatformProfileListResult {
    pub drafts: Vec<DraftProfile>,
    pub growth: Vec<GrowthProfile>,
    pub risk_lists: Vec<RiskList>,
}

pub(super) fn list_profiles(engine: &Engine, _: Empty) -> Result<PlatformProfileListResult, ApiError> {
    let set = profiles(engine)?;
    Ok(PlatformProfileListResult {
        drafts: set.drafts.values().map(Into::into).collect(),
        growth: set.growth.values().map(Into::into).collect(),
        risk_lists: set.risk_lists.iter().map(Into::into).collect(),
    })
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(tag = "type", content = "profile", rename_all = "camelCase")]
pub enum PlatformProfile {
    Draft(DraftProfile),
    Growth(GrowthProfile),
    Risk(RiskList),
}

/// One profile by id (`wechat@draft-v1`, `x@growth-v1`, `ad-law-zh@v2`); an override's
/// id (`...+local.2`) or its base id both find it.
pub(super) fn get_profile(engine: &Engine, params: IdRef) -> Result<PlatformProfile, ApiError> {
    let set = profiles(engine)?;
    let matches = |id: &str| id == params.id || id.split('+').next() == Some(params.id.as_str());
    if let Some(profile) = set.drafts.values().find(|p| matches(&p.id)) {
        return Ok(PlatformProfile::Draft(profile.into()));
    }
    if let Some(profile) = set.growth.values().find(|p| matches(&p.id)) {
        return Ok(PlatformProfile::Growth(profile.into()));
    }
    if let Some(list) = set.risk_lists.iter().find(|l| matches(&l.id)) {
        return Ok(PlatformProfile::Risk(list.into()));
    }
    Err(ApiError::not_found("profile", &params.id).action("list_platform_profiles", &[]))
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PipelineCompileParams {
    pub project_id: String,
    /// The platforms to compile; the project's target platforms (or all) when absent.
    #[serde(default)]
    #[ts(optional)]
    pub platforms: Option<Vec<Platform>>,
    /// Topic tags; suggested from the text and the brand profile when absent.
    #[serde(default)]
    #[ts(optional)]
    pub tags: Option<Vec<String>>,
}

pub(super) fn compile(engine: &Engine, params: PipelineCompileParams) -> Result<PipelineCompileResult, ApiError> {
    let project = load_project(engine, &params.project_id)?;
    drafts::compile(engine, &project, params.platforms.map(|platforms| platforms.into_iter().map(Into::into).collect()), params.tags)
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PipelineMeasureParams {
    pub platform: Platform,
    pub field: LimitField,
    pub text: String,
}

pub(super) fn measure(engine: &Engine, params: PipelineMeasureParams) -> Result<Measurement, ApiError> {
    let set = profiles(engine)?;
    let profile = draft_profile(&set, params.platform.into())?;
    let field = params.field.into();
    if profile.limits_for(field).next().is_none() {
        let fields: Vec<String> = profile.limits.iter().map(|l| format!("{:?}", l.field).to_lowercase()).collect();
        return Err(ApiError::validation("field", format!("{} has no limit on that field; it limits: {}.", profile.id, fields.join(", "))));
    }
    Ok(pipeline::measure(profile, field, &params.text).into())
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct QualityCheckParams {
    pub project_id: String,
    #[serde(default)]
    #[ts(optional)]
    pub platforms: Option<Vec<Platform>>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct QualityCheckResult {
    pub project_id: String,
    pub revision: u64,
    /// Source findings first, then each platform's draft findings.
    pub findings: Vec<Finding>,
    /// The exact profile versions the checks used.
    pub profile_ids: Vec<String>,
}

pub(super) fn check(engine: &Engine, params: QualityCheckParams) -> Result<QualityCheckResult, ApiError> {
    let compiled = compile(engine, PipelineCompileParams { project_id: params.project_id, platforms: params.platforms, tags: None })?;
    let set = profiles(engine)?;
    let mut profile_ids: Vec<String> = compiled.drafts.iter().map(|d| d.draft.profile_id.clone()).collect();
    profile_ids.extend(set.risk_lists.iter().map(|l| l.id.clone()));
    let mut findings: Vec<Finding> = compiled.findings.iter().map(Into::into).collect();
    for draft in compiled.drafts {
        findings.extend(draft.findings.iter().map(Finding::from));
    }
    Ok(QualityCheckResult { project_id: compiled.project_id, revision: compiled.revision, findings, profile_ids })
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SuggestResult {
    pub tags: Vec<String>,
    pub keywords: Vec<super::dto::Keyword>,
    /// How the title fits each platform's title limits.
    pub title_fits: Vec<Measurement>,
}

pub(super) fn suggest(engine: &Engine, params: ProjectRef) -> Result<SuggestResult, ApiError> {
    let project = load_project(engine, &params.project_id)?;
    let set = profiles(engine)?;
    let brand = crate::project::brand(engine.store(), &project)?;
    let plain = pipeline::plain_text(&project.source).blocks.join("\n");
    let keywords = crate::suggest::keywords(&format!("{}\n{plain}", project.title), 10).iter().map(Into::into).collect();
    let tags = crate::suggest::tags(&project.title, &project.source, brand.as_ref().map(|b| b.default_tags.as_slice()).unwrap_or(&[]), 10);
    use crate::profiles::LimitField::Title;
    let title_fits = set.drafts.values().filter(|p| p.limits_for(Title).next().is_some()).map(|p| pipeline::measure(p, Title, &project.title).into()).collect();
    Ok(SuggestResult { tags, keywords, title_fits })
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct FitReportResult {
    pub project_id: String,
    pub revision: u64,
    pub reports: Vec<super::dto::PlatformFit>,
    /// What the score measures, and what it does not.
    pub disclaimer: String,
}

pub(super) fn fit(engine: &Engine, params: PipelineCompileParams) -> Result<FitReportResult, ApiError> {
    let project = load_project(engine, &params.project_id)?;
    let reports = crate::growth::fit_reports(engine, &project, params.platforms.map(|platforms| platforms.into_iter().map(Into::into).collect()), params.tags)?
        .iter()
        .map(Into::into)
        .collect();
    Ok(FitReportResult { project_id: project.id, revision: project.revision, reports, disclaimer: crate::growth::fit::DISCLAIMER.to_owned() })
}
