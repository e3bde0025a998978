//! The first step: an immutable context snapshot (project, brand, template, saved
//! drafts, comment and version summaries, the platforms' rules) with the composed
//! optimize prompt, stored once and named by every later event of the run.

use super::{Found, Pipeline, MIN_RESERVE};
use crate::error::ApiError;
use crate::harness::script::Stop;
use crate::harness::EventBody;
use crate::prompts::{Composed, Entry, PromptSet};
use crate::proposals;
use crate::store::{Batch, Kind};

pub(super) fn run(p: &mut Pipeline<'_, '_>) -> Result<(), Stop> {
    let h = p.s.h;
    let store = h.store();
    let window = p.profile.context_window;
    p.stage("snapshot", "started", "Reading the project, its drafts and the platforms' rules")?;
    let records = crate::context::gather(store, &p.run.project_id)?;
    let saved = crate::project::drafts::list(store, &p.run.project_id)?;
    let set = crate::project::drafts::profiles(h.kernel)?;
    let brand = crate::project::brand(store, &records.project)?;
    let prompts = PromptSet::load(&h.config().data_dir.join("prompts"))?;
    let entry = match p.run.input.draft {
        Some(platform) => Entry::Draft(platform),
        None => Entry::Article,
    };
    let mode = crate::prompts::Mode::Optimize { goal: p.run.input.goal, intensity: p.run.input.intensity, constraints: p.run.input.constraints.texts() };
    let prompt: Composed = prompts.compose(&mode, entry);
    let constraints = p.run.input.constraints.texts();
    // The target platforms' performance summaries, when the setting and the workspace
    // policy allow them (a layer of their own in the snapshot).
    let performance = crate::performance::context::layer_text(store, &p.run.input.platforms)?;
    let input = crate::context::ContextInput { prompt: Some(&prompt), performance: &performance, ..records.input(crate::context::Mode::Plan, "", &constraints, &[], None) };
    // The context layers take what the smallest step leaves; each step then takes the
    // part of the snapshot it needs ([`Parts`]).
    // The layers are counted by the estimate: the room as the server counts it, scaled.
    let budget = (u64::from(window).saturating_sub(u64::from(MIN_RESERVE)) as f64 / p.ratio) as u64;
    p.max_output = MIN_RESERVE;
    let assembled = crate::context::assemble(&input, budget).map_err(|too| p.too_long("snapshot", p.counted(too.needed)))?;
    let mut layers = assembled.layers;
    let policy = layers.pop();
    p.parts.source_trimmed = layers.iter().any(|l| l.name == "working_set" && l.trimmed);
    p.parts.head = layers.clone();
    p.parts.policy = policy.clone();
    let mut drafts_text = String::from("# Saved platform drafts\n");
    for draft in &saved {
        let text = proposals::draft_patch_text(&draft.content);
        let head: String = text.chars().take(1_500).collect();
        let entry = format!("## {} (revision {}, {:?})\ntitle: {}\n{head}\n", draft.platform.as_str(), draft.revision, draft.status, draft.title);
        drafts_text.push_str(&entry);
        p.parts.drafts.push((draft.platform, entry));
    }
    if saved.is_empty() {
        drafts_text.push_str("none\n");
    }
    layers.push(crate::context::named_layer("drafts", drafts_text));
    let mut rules = String::from("# The target platforms' written rules\n");
    for platform in &p.run.input.platforms {
        let growth = set.growth.get(platform).ok_or_else(|| ApiError::internal(format!("no growth profile for {}", platform.as_str())))?;
        let entry = platform_rules(growth, crate::project::drafts::draft_profile(&set, *platform)?);
        rules.push_str(&entry);
        p.parts.rules.push((*platform, entry));
    }
    layers.push(crate::context::named_layer("platform_rules", rules));
    layers.extend(policy);
    let snapshot = crate::context::snapshot(layers, &prompt);
    let mut extra = Batch::new();
    if !store.contains(Kind::ContextSnapshots, snapshot.id.as_bytes())? {
        extra.put(&snapshot)?;
    }
    p.system = snapshot.system.clone();
    p.s.snapshot_id = Some(snapshot.id.clone());
    p.run.snapshot_id = Some(snapshot.id.clone());
    p.run.prompt_layers = snapshot.prompt_layers.clone();
    extra.put(&p.run)?;
    let estimates: Vec<crate::harness::LayerEstimate> =
        snapshot.layers.iter().map(|l| crate::harness::LayerEstimate { layer: l.name.clone(), tokens: l.tokens, trimmed: l.trimmed }).collect();
    let estimated_tokens = estimates.iter().map(|l| l.tokens).sum();
    p.s.append_with(EventBody::ContextAssembled { snapshot_id: snapshot.id.clone(), estimated_tokens, layers: estimates, prompt_layers: snapshot.prompt_layers.clone() }, extra)?;
    p.stage("snapshot", "done", format!("snapshot {}", snapshot.id))?;
    let prompt_version = prompt.version();
    p.found = Some(Found { project: records.project, saved, set, brand, prompt_version });
    Ok(())
}

fn platform_rules(growth: &crate::profiles::GrowthProfile, draft: &crate::profiles::DraftProfile) -> String {
    let mut out = format!("## {} ({}, {})\naudience: {}\n", growth.platform.as_str(), growth.id, draft.id, growth.audience);
    for (name, rules) in [
        ("title", &growth.title_rules),
        ("opening", &growth.opening_rules),
        ("structure", &growth.structure_rules),
        ("tags", &growth.tag_rules),
        ("call to action", &growth.cta_rules),
        ("risks", &growth.risk_rules),
    ] {
        if !rules.is_empty() {
            out.push_str(&format!("{name}: {}\n", rules.join(" / ")));
        }
    }
    let limits: Vec<String> =
        draft.limits.iter().map(|l| format!("{:?} {}{} {:?}", l.field, l.min.map(|m| format!("{m}–")).unwrap_or_else(|| "≤".to_owned()), l.max, l.unit).to_lowercase()).collect();
    out.push_str(&format!("limits: {}\nformat: {}\n", limits.join("; "), draft.format));
    out
}
