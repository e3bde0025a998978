//! One-click optimize: [`run`], the optimization run (a harness log of its
//! own, a fixed plan of steps in `steps/` from context snapshot to proposals, which
//! the harness's script runs; `apply` per target), and
//! [`fit`], the deterministic platform-fit report — a score per platform computed
//! from the growth profile's machine-checkable rules and the draft profile's limits,
//! each point explained. It measures fit to written rules, not growth, and says so.

mod apply;
pub mod fit;
pub mod run;
mod steps;

use serde::{Deserialize, Serialize};

use crate::error::ApiError;
use crate::kernel::Kernel;
use crate::model::{Platform, Project};

/// The fit report of each platform's draft: the fresh compile of the working copy, and
/// the saved draft when there is one.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlatformFit {
    pub platform: Platform,
    pub compiled: fit::FitReport,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub saved: Option<fit::FitReport>,
}

/// Fit reports for `project`'s platforms (or `platforms`). Reads only.
pub fn fit_reports(kernel: &Kernel, project: &Project, platforms: Option<Vec<Platform>>, tags: Option<Vec<String>>) -> Result<Vec<PlatformFit>, ApiError> {
    let set = crate::project::drafts::profiles(kernel)?;
    let compiled = crate::project::drafts::compile(kernel, project, platforms, tags)?;
    let saved = crate::project::drafts::list(kernel.store(), &project.id)?;
    let mut out = Vec::new();
    for draft in &compiled.drafts {
        let platform = draft.draft.platform;
        let Some(growth) = set.growth.get(&platform) else { continue };
        let profile = crate::project::drafts::draft_profile(&set, platform)?;
        let saved = saved.iter().find(|s| s.platform == platform).map(|s| fit::report(growth, profile, &s.title, &s.content));
        out.push(PlatformFit { platform, compiled: fit::report(growth, profile, &draft.draft.title, &draft.draft.content), saved });
    }
    Ok(out)
}
