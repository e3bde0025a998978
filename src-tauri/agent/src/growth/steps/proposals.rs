//! The last step: the proposals, one per target, in one transaction with the run's
//! record and the event that reports them. Nothing official changes until the person
//! applies them (see `growth::run::apply`).

use super::{Pipeline, NO_SAVED_DRAFT};
use crate::growth::run::TargetOutcome;
use crate::harness::script::Stop;
use crate::harness::EventBody;
use crate::proposals::{self, Candidate, NewProposal, Origin, Payload, ProposalKind, Target};

pub(super) fn run(p: &mut Pipeline<'_, '_>) -> Result<(), Stop> {
    p.stage("proposals", "started", "Recording the proposals for review")?;
    p.s.check_interrupt()?;
    let h = p.s.h;
    let store = h.store();
    let found = p.found()?;
    let prompt_version = found.prompt_version.clone();
    let source = p.made.source.clone();
    let candidates = std::mem::take(&mut p.made.candidates);
    let origin = Origin {
        session_id: None,
        run_id: Some(p.run.id.clone()),
        turn: None,
        tool_use_id: None,
        context_snapshot_id: p.s.snapshot_id.clone(),
        model: p.run.model.clone(),
        profile_id: p.run.profile_id.clone(),
        prompt_version,
        prompt_layers: p.run.prompt_layers.clone(),
        rebased_from: None,
        // The performance summaries the run's snapshot held (the model read them).
        sources: crate::harness::provenance::of_performance_context(&p.system),
    };
    let titles = p.run.titles.clone();
    let run_snapshot = p.run.clone();
    let run = p.s.append_staged(|batch| {
        let mut run = run_snapshot;
        let current = crate::project::load(store, &run.project_id)?;
        for target in &mut run.targets {
            let summary = target.summary.clone();
            match &target.target {
                Target::Source => {
                    if source != current.source {
                        let new = NewProposal {
                            project_id: run.project_id.clone(),
                            kind: ProposalKind::SourcePatch,
                            target: Target::Source,
                            summary: summary.clone(),
                            payload: Payload::Text { base_text: current.source.clone(), proposed_text: source.clone() },
                            origin: origin.clone(),
                        };
                        target.proposal_id = Some(proposals::stage_create(h.kernel, batch, new)?.id);
                    }
                    if !titles.is_empty() {
                        let new = NewProposal {
                            project_id: run.project_id.clone(),
                            kind: ProposalKind::TitleCandidates,
                            target: Target::Source,
                            summary: "Title candidates".to_owned(),
                            payload: Payload::Candidates { candidates: titles.iter().map(|t| Candidate { text: t.clone(), rationale: String::new() }).collect() },
                            origin: origin.clone(),
                        };
                        target.title_proposal_id = Some(proposals::stage_create(h.kernel, batch, new)?.id);
                    }
                }
                Target::Draft { platform } => {
                    let Some((_, text)) = candidates.iter().find(|(p, _)| p == platform) else { continue };
                    if let Some(saved) = crate::project::drafts::load(store, &run.project_id, *platform)? {
                        let base_text = proposals::draft_patch_text(&saved.content);
                        if &base_text != text && saved.status != crate::model::DraftStatus::Publishing {
                            let new = NewProposal {
                                project_id: run.project_id.clone(),
                                kind: ProposalKind::DraftPatch,
                                target: Target::Draft { platform: *platform },
                                summary: summary.clone(),
                                payload: Payload::Text { base_text, proposed_text: text.clone() },
                                origin: origin.clone(),
                            };
                            target.proposal_id = Some(proposals::stage_create(h.kernel, batch, new)?.id);
                        }
                    }
                }
                _ => {}
            }
            if target.proposal_id.is_none() && target.title_proposal_id.is_none() {
                target.outcome = TargetOutcome::Unavailable;
                target.outcome_message =
                    Some(if target.flags.iter().any(|f| f == "no_saved_draft") { NO_SAVED_DRAFT.to_owned() } else { "The candidate is the same as the current text.".to_owned() });
            }
        }
        run.stage = "proposals".to_owned();
        run.updated_at = h.now();
        batch.put(&run)?;
        let made = run.targets.iter().filter(|t| t.proposal_id.is_some()).count() + run.targets.iter().filter(|t| t.title_proposal_id.is_some()).count();
        Ok((EventBody::RunStage { stage: "proposals".to_owned(), state: "done".to_owned(), message: format!("{made} proposals recorded") }, run))
    })?;
    p.run = run;
    Ok(())
}
