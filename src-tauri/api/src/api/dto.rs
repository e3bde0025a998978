//! The wire types of records the core keeps: what the API returns for them, and what
//! codegen turns into the UI's TypeScript. A domain record derives serde for storage
//! only; its wire twin here derives `TS` and is built from it by a plain `From` copy, so
//! a stored field can be renamed (or re-encoded) without the UI noticing. Nothing below
//! `inkstone-api` names `ts_rs` once its records have moved here (tidy checks the crates
//! that are done).

mod drafts;
mod harness;
mod model;
mod proposal_records;
mod proposals;
mod sync;
mod usage;

pub use drafts::*;
pub use harness::*;
pub use model::*;
pub use proposal_records::*;
pub use proposals::*;
pub use sync::*;
pub use usage::*;

/// Fails to compile when a stored record named here implements `TS` again: then it
/// could stand in the method table for its wire twin, and storage would decide the
/// wire once more. (An impl of `TS` makes the two impls below overlap for it, and the
/// call in the closure ambiguous.)
macro_rules! stored_only {
    ($($record:ty),* $(,)?) => {
        $( const _: fn() = || {
            trait AmbiguousIfTs<A> {
                fn check() {}
            }
            impl<T: ?Sized> AmbiguousIfTs<()> for T {}
            struct IsTs;
            impl<T: ?Sized + ts_rs::TS> AmbiguousIfTs<IsTs> for T {}
            <$record as AmbiguousIfTs<_>>::check();
        }; )*
    };
}

stored_only!(
    crate::model::Workspace,
    crate::model::Project,
    crate::model::ProjectSummary,
    crate::model::Version,
    crate::model::VersionSummary,
    crate::model::VersionOrigin,
    crate::model::Comment,
    crate::model::Activity,
    crate::model::ActivityKind,
    crate::model::BrandProfile,
    crate::model::ContentTemplate,
    crate::model::MediaAsset,
    crate::model::PlatformDraft,
    crate::model::DraftStatus,
    crate::proposals::apply::Accepted,
    crate::proposals::staging::StagingApplied,
    crate::proposals::checkpoints::Checkpoint,
    crate::proposals::checkpoints::CheckpointReason,
    crate::proposals::checkpoints::SkippedDraft,
    crate::proposals::checkpoints::CheckpointRestored,
    crate::project::drafts::CompiledDraft,
    crate::project::drafts::PipelineCompileResult,
    crate::project::drafts::DraftSaveOutcome,
    crate::outbox::JobState,
    crate::outbox::DeliveryJob,
    crate::sync::Connection,
    crate::sync::ProjectLink,
    crate::sync::ConflictKind,
    crate::sync::ConflictState,
    crate::sync::ConflictSide,
    crate::sync::SyncConflict,
    crate::sync::MergedContent,
    crate::sync::members::MemberRole,
    crate::sync::members::MemberToken,
    crate::sync::members::SyncMember,
    crate::sync::SyncState,
    crate::sync::merge::Overlap,
    crate::sync::merge::RegionKind,
    crate::sync::merge::MergeRegion,
    crate::sync::policy::PolicyStanding,
    crate::proposals::ProposalStatus,
    crate::proposals::Base,
    crate::proposals::ProposalHunk,
    crate::proposals::Candidate,
    crate::proposals::ChecklistItem,
    crate::proposals::MetadataChange,
    crate::proposals::Payload,
    crate::proposals::Origin,
    crate::proposals::SupersededReason,
    crate::proposals::CarriedEdits,
    crate::proposals::HunkSources,
    crate::proposals::Applied,
    crate::proposals::Proposal,
    crate::proposals::Staleness,
    crate::proposals::ProposalView,
    crate::proposals::Edit,
    crate::proposals::apply::AuditAction,
    crate::proposals::apply::AuditRecord,
    crate::proposals::apply::Constraint,
    crate::proposals::apply::Rejected,
    crate::proposals::apply::RebaseConflict,
    crate::proposals::apply::Rebased,
    crate::proposals::staging::StagedEntry,
    crate::proposals::staging::Staging,
    crate::proposals::staging::StagingView,
    crate::harness::AllowScope,
    crate::harness::AllowRule,
    crate::harness::PermissionRule,
    crate::harness::Limits,
    crate::harness::Session,
    crate::harness::ApprovalRecord,
    crate::usage::UsageOutcome,
    crate::usage::UsageRecord,
    crate::usage::ProjectBudget,
    crate::usage::Spent,
    crate::usage::Quotas,
    crate::usage::UsageTotals,
    crate::usage::UsageRow,
    crate::usage::UsageReport,
    crate::policy::CapLevel,
    crate::policy::CapStanding,
);

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use crate::model::{self, Anchor, DraftContent, Platform, Post, ProvenanceSource, Timestamp};
    use crate::proposals::checkpoints;

    fn at() -> Timestamp {
        "2026-01-02T03:04:05Z".parse().unwrap()
    }

    /// The wire JSON of stored records, written out here rather than taken from the
    /// records' own serde: a `#[serde(rename = "…")]` (or any re-encoding) on a stored
    /// field changes what the store holds but not one line below, and a change to a
    /// wire twin fails here, not in the store's round trips.
    #[test]
    fn the_wire_json_of_a_stored_record_is_its_twins_not_its_own() {
        let project = model::Project {
            id: "prj_1".into(),
            title: "Title".into(),
            source: "Source".into(),
            revision: 3,
            head: 2,
            platforms: vec![Platform::X, Platform::Wechat],
            brand_profile_id: None,
            template_id: Some("tpl_1".into()),
            archived: false,
            created_at: at(),
            updated_at: at(),
        };
        assert_eq!(
            serde_json::to_value(super::Project::from(&project)).unwrap(),
            json!({
                "id": "prj_1", "title": "Title", "source": "Source", "revision": 3, "head": 2, "platforms": ["x", "wechat"],
                "brandProfileId": null, "templateId": "tpl_1", "archived": false,
                "createdAt": "2026-01-02T03:04:05Z", "updatedAt": "2026-01-02T03:04:05Z"
            })
        );
        assert_eq!(
            serde_json::to_value(super::ProjectSummary::from(&model::ProjectSummary::from(&project))).unwrap(),
            json!({
                "id": "prj_1", "title": "Title", "revision": 3, "head": 2, "platforms": ["x", "wechat"],
                "brandProfileId": null, "templateId": "tpl_1", "archived": false, "excerpt": "Source", "nChars": 6,
                "createdAt": "2026-01-02T03:04:05Z", "updatedAt": "2026-01-02T03:04:05Z"
            })
        );

        let version = model::Version {
            id: "ver_1".into(),
            project_id: "prj_1".into(),
            number: 2,
            title: "Title".into(),
            source: "Source".into(),
            author: "Ann".into(),
            message: Some("Accepted".into()),
            message_id: None,
            message_params: BTreeMap::new(),
            origin: model::VersionOrigin::AiProposal {
                proposal_id: "prp_1".into(),
                session_id: Some("ses_1".into()),
                run_id: None,
                model: "m".into(),
                profile_id: "p".into(),
                sources: vec![
                    ProvenanceSource::Memory { memory_id: "mem_1".into(), text: "Short".into() },
                    ProvenanceSource::Selection { span: Anchor { from: 1, to: 4 }, text: "our".into() },
                ],
            },
            content_hash: "sha256:00".into(),
            created_at: at(),
        };
        assert_eq!(
            serde_json::to_value(super::Version::from(&version)).unwrap(),
            json!({
                "id": "ver_1", "projectId": "prj_1", "number": 2, "title": "Title", "source": "Source", "author": "Ann", "message": "Accepted",
                "origin": {
                    "type": "aiProposal", "proposalId": "prp_1", "sessionId": "ses_1", "model": "m", "profileId": "p",
                    "sources": [
                        {"type": "memory", "memoryId": "mem_1", "text": "Short"},
                        {"type": "selection", "span": {"from": 1, "to": 4}, "text": "our"}
                    ]
                },
                "contentHash": "sha256:00", "createdAt": "2026-01-02T03:04:05Z"
            })
        );

        let draft = model::PlatformDraft {
            project_id: "prj_1".into(),
            platform: Platform::X,
            revision: 1,
            status: model::DraftStatus::Ready,
            profile_id: "x@1".into(),
            source_revision: 3,
            source_version: 2,
            title: "Title".into(),
            content: DraftContent::Thread { posts: vec![Post { text: "One".into(), weighted_length: 3 }] },
            hand_edited: true,
            updated_at: at(),
            updated_by: "Ann".into(),
        };
        let checkpoint = checkpoints::Checkpoint {
            id: "chk_1".into(),
            owner_id: "ses_1".into(),
            project_id: "prj_1".into(),
            label: "Before the turn".into(),
            label_id: Some("turn_before".into()),
            label_params: BTreeMap::from([("proposals".into(), "2".into())]),
            reason: checkpoints::CheckpointReason::BeforeTurn,
            head: 2,
            revision: 3,
            working_title: None,
            working_source: Some("Unsaved".into()),
            drafts: vec![draft],
            sequence: 7,
            created_at: at(),
        };
        assert_eq!(
            serde_json::to_value(super::Checkpoint::from(&checkpoint)).unwrap(),
            json!({
                "id": "chk_1", "ownerId": "ses_1", "projectId": "prj_1", "label": "Before the turn", "labelId": "turn_before",
                "labelParams": {"proposals": "2"}, "reason": "before_turn", "head": 2, "revision": 3, "workingSource": "Unsaved",
                "drafts": [{
                    "projectId": "prj_1", "platform": "x", "revision": 1, "status": "ready", "profileId": "x@1", "sourceRevision": 3,
                    "sourceVersion": 2, "title": "Title", "content": {"type": "thread", "posts": [{"text": "One", "weightedLength": 3}]},
                    "handEdited": true, "updatedAt": "2026-01-02T03:04:05Z", "updatedBy": "Ann"
                }],
                "sequence": 7, "createdAt": "2026-01-02T03:04:05Z"
            })
        );
    }
}
