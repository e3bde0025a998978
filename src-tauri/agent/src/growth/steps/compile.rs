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
    let mut platforms = p.run.input.platforms.clone();
    platforms.sort();
    // The profiles and the brand profile the snapshot loaded, not loaded again.
    let compile = |project: &Project| crate::project::drafts::compile_drafts(h.kernel, &found.set, found.brand.as_ref(), project, &platforms, None).map(|(drafts, _)| drafts);
    let compiled = compile(&optimized)?;
    let current = if platforms.iter().any(|x| !found.saved.iter().any(|d| d.platform == *x)) { compile(project)? } else { Vec::new() };
    p.made.compiled = compiled;
    p.made.current = current;
    Ok(())
}
