//! The fourth step: the deterministic compile of the optimized source for every
//! target platform, and of the current source when a platform has no saved draft (its
//! fit report before the run is the compile's). One compile of each text for every
//! platform: the tags are suggested once per text.

use super::Pipeline;
use crate::harness::script::Stop;
use crate::model::Project;

pub(super) fn run(p: &mut Pipeline<'_, '_>) -> Result<(), Stop> {
    let h = p.s.h;
    let found = p.found()?;
    let project = &found.project;
    let optimized = Project { source: p.made.source.clone(), ..project.clone() };
    let platforms = p.run.input.platforms.clone();
    let compiled = crate::project::drafts::compile(h.kernel, &optimized, Some(platforms.clone()), None)?.drafts;
    let current = if platforms.iter().any(|x| !found.saved.iter().any(|d| d.platform == *x)) {
        crate::project::drafts::compile(h.kernel, project, Some(platforms), None)?.drafts
    } else {
        Vec::new()
    };
    p.made.compiled = compiled;
    p.made.current = current;
    Ok(())
}
