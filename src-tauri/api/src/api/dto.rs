//! The wire types of records the core keeps: what the API returns for them, and what
//! codegen turns into the UI's TypeScript. A domain record derives serde for storage
//! only; its wire twin here derives `TS` and is built from it by a plain `From` copy, so
//! a stored field can be renamed (or re-encoded) without the UI noticing. Nothing below
//! `inkstone-api` names `ts_rs` once its records have moved here (tidy checks the crates
//! that are done).

mod activity;
mod compaction;
mod context;
mod drafts;
mod error;
mod events;
mod growth;
mod harness;
mod ids;
mod intent;
mod llm;
mod memory;
mod model;
mod performance;
mod policy;
mod prompts;
mod proposal_records;
mod proposals;
mod search;
mod sync;
mod text;
mod timeline;
mod usage;

pub use activity::*;
pub use compaction::*;
pub use context::*;
pub use drafts::*;
pub use error::*;
pub use events::*;
pub use growth::*;
pub use harness::*;
pub use ids::*;
pub use intent::*;
pub use llm::*;
pub use memory::*;
pub use model::*;
pub use performance::*;
pub use policy::*;
pub use prompts::*;
pub use proposal_records::*;
pub use proposals::*;
pub use search::*;
pub use sync::*;
pub use text::*;
pub use timeline::*;
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
    crate::model::Platform,
    crate::model::Anchor,
    crate::model::DraftContent,
    crate::model::Post,
    crate::model::ProvenanceSource,
    crate::error::ErrorCode,
    crate::error::Hint,
    crate::error::ApiError,
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
    crate::performance::Account,
    crate::performance::PublicationFormat,
    crate::performance::Distribution,
    crate::performance::Visibility,
    crate::performance::AiChange,
    crate::performance::Publication,
    crate::performance::numbers::Qualifier,
    crate::performance::metrics::MetricUnit,
    crate::performance::metrics::MetricValue,
    crate::performance::metrics::MetricKeyInfo,
    crate::performance::metrics::SnapshotWindow,
    crate::performance::metrics::SnapshotSource,
    crate::performance::metrics::MetricSnapshot,
    crate::performance::account_days::AccountSnapshot,
    crate::performance::dashboard::Interval,
    crate::performance::dashboard::LatestMetric,
    crate::performance::dashboard::DashboardRow,
    crate::performance::dashboard::MedianPoint,
    crate::performance::dashboard::PlatformMedians,
    crate::performance::dashboard::PostingCell,
    crate::performance::dashboard::Dashboard,
    crate::performance::report::AgeBucket,
    crate::performance::report::Exclusion,
    crate::performance::report::ReportPoint,
    crate::performance::report::ReportSide,
    crate::performance::report::BeforeAfterReport,
    crate::performance::context::Evidence,
    crate::performance::context::SummaryPost,
    crate::performance::context::PerformanceSummary,
    crate::performance::context::ContextSetting,
    crate::performance::context::ContextState,
    crate::performance::import::ExportTarget,
    crate::performance::import::RowOutcome,
    crate::performance::import::RowPreview,
    crate::performance::import::ImportPreview,
    crate::performance::import::ImportRecord,
    crate::performance::import::FileKind,
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
    crate::harness::event::ToolStatus,
    crate::harness::event::TurnEndReason,
    crate::harness::event::IntentSource,
    crate::harness::event::LayerEstimate,
    crate::harness::event::ApprovalHunk,
    crate::harness::event::ApprovalChange,
    crate::harness::event::EventBody,
    crate::harness::event::Event,
    crate::harness::replay::LogLine,
    crate::harness::replay::PendingApproval,
    crate::harness::replay::PendingQuestion,
    crate::harness::timeline::StepState,
    crate::harness::timeline::CompactionFailure,
    crate::harness::timeline::KeyProblem,
    crate::harness::timeline::RetryTask,
    crate::harness::timeline::TimelineItem,
    crate::harness::timeline::ApprovalPrompt,
    crate::harness::timeline::QuestionPrompt,
    crate::harness::timeline::ContextEstimate,
    crate::harness::timeline::Compacting,
    crate::harness::timeline::Timeline,
    crate::harness::timeline::TimelineState,
    crate::harness::timeline::TextAppend,
    crate::harness::timeline::TimelinePatch,
    crate::harness::compaction::CompactionTrigger,
    crate::harness::compaction::CompactionMode,
    crate::harness::compaction::PinSource,
    crate::harness::compaction::Pin,
    crate::harness::compaction::CompactThreshold,
    crate::harness::compaction::ProfileContext,
    crate::harness::compaction::CalibrationSeed,
    crate::harness::compaction::AcceptedChange,
    crate::harness::compaction::RejectedDirection,
    crate::harness::compaction::CompactionSummary,
    crate::harness::allow_rule::AllowOffer,
    crate::harness::PermissionPolicy,
    crate::harness::ToolDefinition,
    crate::harness::tools::Capability,
    crate::harness::tools::RiskLevel,
    crate::harness::tools::Concurrency,
    crate::harness::tools::InterruptBehavior,
    crate::harness::tools::BaseVersionPolicy,
    crate::growth::run::RunConstraints,
    crate::growth::run::RunInput,
    crate::growth::run::RunStatus,
    crate::growth::run::TargetOutcome,
    crate::growth::run::RunTarget,
    crate::growth::run::RunError,
    crate::growth::run::RunTimings,
    crate::growth::run::Run,
    crate::growth::run::AppliedTarget,
    crate::growth::fit::FitPoint,
    crate::growth::fit::FitReport,
    crate::growth::PlatformFit,
    crate::prompts::Layer,
    crate::prompts::Goal,
    crate::prompts::Intensity,
    crate::prompts::PromptLayer,
    crate::intent::OutputType,
    crate::intent::LengthUnit,
    crate::intent::Length,
    crate::intent::Missing,
    crate::intent::Clarification,
    crate::intent::SessionIntent,
    crate::context::ContextLayer,
    crate::context::ContextSnapshot,
    crate::context::Mode,
    crate::context::Selection,
    crate::proposals::ProposalKind,
    crate::proposals::Target,
    crate::activity::ActivityRow,
    crate::activity::ActivityPage,
    crate::memory::MemoryScope,
    crate::memory::MemoryStatus,
    crate::memory::MemoryOrigin,
    crate::memory::MemoryItem,
    crate::memory::HabitDismissal,
    crate::memory::HabitKind,
    crate::memory::Habit,
    crate::policy::ProviderRule,
    crate::policy::Policy,
    crate::policy::CachedPolicy,
    crate::policy::MonthSpent,
    crate::retrieval::DocKind,
    crate::retrieval::SearchScope,
    crate::retrieval::Tier,
    crate::retrieval::Snippet,
    crate::retrieval::SearchHit,
    crate::retrieval::NoticeCode,
    crate::retrieval::SearchNotice,
    crate::retrieval::SearchResults,
    crate::retrieval::IndexStatus,
    crate::retrieval::ask::Source,
    crate::retrieval::ask::AskRoute,
    crate::retrieval::ask::Citation,
    crate::retrieval::ask::Quote,
    crate::retrieval::ask::Answer,
    crate::retrieval::suggest::Keyword,
    crate::llm::window::ServerKind,
    crate::llm::window::WindowSource,
    crate::llm::window::TokenizerEndpoint,
    crate::llm::window::ServerWindow,
    crate::llm::window::WindowOrigin,
    crate::llm::profile::Provider,
    crate::llm::profile::Health,
    crate::llm::profile::ProfileError,
    crate::llm::profile::LlmProfile,
    crate::llm::profile::SchemaForm,
    crate::llm::profile::FormSource,
    crate::llm::profile::FormRefusal,
    crate::llm::profile::StructuredForm,
    crate::llm::profile::ToolLoading,
    crate::llm::profile::LlmPreset,
    crate::llm::ApiKey,
    crate::llm::Role,
    crate::llm::Message,
    crate::llm::ToolSpec,
    crate::llm::ToolCall,
    crate::llm::FinishReason,
    crate::llm::Usage,
    crate::diff::TextDiffResult,
    crate::diff::Hunk,
    crate::diff::DiffLine,
    crate::diff::LineKind,
    crate::diff::Segment,
    crate::pipeline::Draft,
    crate::pipeline::Finding,
    crate::pipeline::Measurement,
    crate::pipeline::LimitCheck,
    crate::profiles::LimitField,
    crate::profiles::Unit,
    crate::profiles::Severity,
    crate::profiles::Limit,
    crate::profiles::DraftProfile,
    crate::profiles::GrowthProfile,
    crate::profiles::LinkPolicy,
    crate::profiles::FitRules,
    crate::profiles::RiskList,
    crate::profiles::ContextAllow,
);

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use crate::context::Selection;
    use crate::error::Hint;
    use crate::harness::compaction::{self, CompactionTrigger};
    use crate::harness::{self, timeline};
    use crate::model::{self, Anchor, DraftContent, Platform, Post, ProvenanceSource, Timestamp};
    use crate::proposals::{checkpoints, ProposalKind, Target};

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

        let event = harness::Event {
            event_id: "evt_1".into(),
            sequence: 4,
            session_id: Some("ses_1".into()),
            run_id: None,
            project_id: Some("prj_1".into()),
            workspace_id: Some("wsp_1".into()),
            turn_id: Some("trn_1".into()),
            parent_event_id: None,
            tool_use_id: Some("call_1".into()),
            context_snapshot_id: None,
            proposal_id: None,
            artifact_id: None,
            created_at: at(),
            model_visible: true,
            body: harness::EventBody::ToolResult {
                tool: "read_project".into(),
                status: harness::ToolStatus::SchemaViolation,
                content: "{}".into(),
                result_ref: None,
                reused_execution: false,
            },
        };
        assert_eq!(
            serde_json::to_value(super::Event::from(&event)).unwrap(),
            json!({
                "eventId": "evt_1", "sequence": 4, "sessionId": "ses_1", "projectId": "prj_1", "workspaceId": "wsp_1", "turnId": "trn_1",
                "toolUseId": "call_1", "createdAt": "2026-01-02T03:04:05Z", "modelVisible": true,
                "kind": "tool_result", "payload": {"tool": "read_project", "status": "schema_violation", "content": "{}", "reusedExecution": false}
            })
        );

        let change = harness::ApprovalChange {
            proposal_id: "prp_1".into(),
            kind: ProposalKind::SourcePatch,
            summary: "Tighter".into(),
            target: Target::Source,
            hunks: vec![harness::ApprovalHunk { id: "hk_1".into(), content_hash: "sha256:22".into(), display: None }],
            omitted_hunks: 0,
            hunk_set_hash: Some("sha256:33".into()),
            total_hunks: Some(1),
            total_bytes: Some(12),
            detail: None,
            creates_version: Some(3),
        };
        let asked = harness::EventBody::ApprovalRequested {
            request_id: "apr_1".into(),
            tool: "apply_proposal".into(),
            input: json!({"proposalId": "prp_1"}),
            input_hash: "sha256:11".into(),
            target_version: Some(2),
            idempotency_key: "idem_1".into(),
            reason: "It writes.".into(),
            reason_id: Some("write".into()),
            change: Some(Box::new(change.clone())),
            offer: None,
        };
        let change_json = json!({
            "proposalId": "prp_1", "kind": "source_patch", "summary": "Tighter", "target": {"type": "source"},
            "hunks": [{"id": "hk_1", "contentHash": "sha256:22"}], "omittedHunks": 0, "hunkSetHash": "sha256:33",
            "totalHunks": 1, "totalBytes": 12, "createsVersion": 3
        });
        assert_eq!(
            serde_json::to_value(super::EventBody::from(&asked)).unwrap(),
            json!({
                "kind": "approval_requested",
                "payload": {
                    "requestId": "apr_1", "tool": "apply_proposal", "input": {"proposalId": "prp_1"}, "inputHash": "sha256:11", "targetVersion": 2,
                    "idempotencyKey": "idem_1", "reason": "It writes.", "reasonId": "write", "change": change_json
                }
            })
        );
        let targets = [Target::Draft { platform: Platform::X }, Target::Comment { comment_id: "cmt_1".into() }, Target::Metadata, Target::Session];
        assert_eq!(
            targets.iter().map(|target| serde_json::to_value(super::Target::from(target)).unwrap()).collect::<Vec<_>>(),
            vec![json!({"type": "draft", "platform": "x"}), json!({"type": "comment", "commentId": "cmt_1"}), json!({"type": "metadata"}), json!({"type": "session"})]
        );
        let kind: super::ProposalKind = serde_json::from_value(json!("comment_reply")).unwrap();
        assert_eq!(ProposalKind::from(kind), ProposalKind::CommentReply);
        assert_eq!(serde_json::to_value(super::Mode::from(crate::context::Mode::Plan)).unwrap(), json!("plan"));
        let selection: super::Selection = serde_json::from_value(json!({"from": 0, "to": 3, "text": "One"})).unwrap();
        assert_eq!(Selection::from(selection), Selection { from: 0, to: 3, text: "One".into() });
        assert!(serde_json::from_value::<super::Selection>(json!({"from": 0, "to": 3, "text": "One", "extra": 1})).is_err(), "a selection refuses unknown fields");

        let tool = timeline::TimelineItem::Tool {
            key: "5:call_1".into(),
            changed_at: 6,
            tool_use_id: "call_1".into(),
            name: "propose_patch".into(),
            args: "{}".into(),
            state: timeline::StepState::Done,
            status: Some(harness::ToolStatus::Success),
            result: None,
            proposal_ids: vec!["prp_1".into()],
        };
        let end = timeline::TimelineItem::End {
            key: "7".into(),
            changed_at: 7,
            reason: harness::TurnEndReason::ModelError,
            message: "The model call failed.".into(),
            hints: vec![Hint::new("check_key", "Check the key.")],
            cut_off: true,
            retry: Some(timeline::RetryTask { text: "Shorter".into(), selection: Some(Selection { from: 0, to: 3, text: "One".into() }) }),
            key_problem: Some(timeline::KeyProblem::Rejected),
        };
        let state = timeline::TimelineState {
            last_sequence: 7,
            pending_approval: Some(timeline::ApprovalPrompt {
                request_id: "apr_1".into(),
                tool_use_id: "call_2".into(),
                tool: "apply_proposal".into(),
                input: json!({}),
                reason: "It writes.".into(),
                reason_id: None,
                target_version: None,
                change: Some(Box::new(change)),
                offer: None,
            }),
            context: Some(timeline::ContextEstimate { estimated_tokens: 900, layers: vec![harness::LayerEstimate { layer: "pinned".into(), tokens: 40, trimmed: false }] }),
            compacting: Some(timeline::Compacting { trigger: CompactionTrigger::Manual, estimated_tokens: 900, context_window: 8000 }),
            ..Default::default()
        };
        let patch = timeline::TimelinePatch {
            sequence: 7,
            items: vec![tool, end],
            removed: vec!["live:1".into()],
            append: Some(timeline::TextAppend { key: "8".into(), text: "Hi".into(), reasoning: false }),
            state: Some(state),
        };
        assert_eq!(
            serde_json::to_value(super::TimelinePatch::from(&patch)).unwrap(),
            json!({
                "sequence": 7,
                "items": [
                    {
                        "kind": "tool", "key": "5:call_1", "changedAt": 6, "toolUseId": "call_1", "name": "propose_patch", "args": "{}",
                        "state": "done", "status": "success", "proposalIds": ["prp_1"]
                    },
                    {
                        "kind": "end", "key": "7", "changedAt": 7, "reason": "model_error", "message": "The model call failed.",
                        "hints": [{"id": "check_key", "message": "Check the key."}], "cutOff": true,
                        "retry": {"text": "Shorter", "selection": {"from": 0, "to": 3, "text": "One"}}, "keyProblem": "rejected"
                    }
                ],
                "removed": ["live:1"],
                "append": {"key": "8", "text": "Hi", "reasoning": false},
                "state": {
                    "lastSequence": 7, "mode": "default", "turnOpen": false,
                    "pendingApproval": {
                        "requestId": "apr_1", "toolUseId": "call_2", "tool": "apply_proposal", "input": {}, "reason": "It writes.", "change": change_json
                    },
                    "pendingQuestion": null, "queued": [],
                    "context": {"estimatedTokens": 900, "layers": [{"layer": "pinned", "tokens": 40, "trimmed": false}]},
                    "inputTokens": 0, "outputTokens": 0, "archived": false, "proposalIds": [], "truncated": false, "longSessionSeq": 0,
                    "lastTask": null, "compacting": {"trigger": "manual", "estimatedTokens": 900, "contextWindow": 8000},
                    "compactionFailures": 0, "streamingKey": null
                }
            })
        );

        let settings =
            compaction::ProfileContext { profile_id: "p".into(), ratio: 1.25, samples: 3, threshold: Some(compaction::CompactThreshold::Auto { percent: 70 }), seed: None };
        assert_eq!(
            serde_json::to_value(super::ProfileContext::from(&settings)).unwrap(),
            json!({"profileId": "p", "ratio": 1.25, "samples": 3, "threshold": {"mode": "auto", "percent": 70}})
        );
        let summary = compaction::CompactionSummary {
            summary: "Short".into(),
            user_intent: "A post".into(),
            accepted_changes: vec![compaction::AcceptedChange { proposal_id: "prp_1".into(), version: Some(2) }],
            rejected_directions: vec![compaction::RejectedDirection { direction: "Longer".into(), reason: "Too long".into() }],
            open_tasks: vec!["Title".into()],
            active_artifacts: Vec::new(),
            source_refs: Vec::new(),
            next_step_hint: "Ask".into(),
        };
        assert_eq!(
            serde_json::to_value(super::CompactionSummary::from(&summary)).unwrap(),
            json!({
                "summary": "Short", "user_intent": "A post", "accepted_changes": [{"proposal_id": "prp_1", "version": 2}],
                "rejected_directions": [{"direction": "Longer", "reason": "Too long"}], "open_tasks": ["Title"], "active_artifacts": [],
                "source_refs": [], "next_step_hint": "Ask"
            })
        );
        let pin = compaction::Pin { id: "pin_1".into(), text: "Keep it short".into(), source: compaction::PinSource::Instruction };
        assert_eq!(serde_json::to_value(super::Pin::from(&pin)).unwrap(), json!({"id": "pin_1", "text": "Keep it short", "source": "instruction"}));

        let intent = crate::intent::SessionIntent {
            topic: Some("Tea".into()),
            output_type: Some(crate::intent::OutputType::TitleSet),
            platforms: vec![Platform::Wechat],
            length: Some(crate::intent::Length { value: 800, unit: crate::intent::LengthUnit::Characters }),
            ..Default::default()
        };
        assert_eq!(
            serde_json::to_value(super::SessionIntent::from(&intent)).unwrap(),
            json!({"topic": "Tea", "outputType": "title_set", "platforms": ["wechat"], "length": {"value": 800, "unit": "characters"}})
        );
        let clarification = crate::intent::Clarification { missing: vec![crate::intent::Missing::Subject], question: "About what?".into() };
        assert_eq!(serde_json::to_value(super::Clarification::from(&clarification)).unwrap(), json!({"missing": ["subject"], "question": "About what?"}));

        let fit = crate::growth::fit::FitReport {
            platform: Platform::X,
            profile_ids: vec!["x@growth-v1".into()],
            score: 60,
            points: vec![crate::growth::fit::FitPoint {
                check: "tags".into(),
                passed: false,
                weight: 10,
                measured: "no tags".into(),
                rule: "1-3 tags".into(),
                message_id: Some("tags.missing".into()),
                params: BTreeMap::new(),
                findings: Vec::new(),
            }],
            disclaimer: "Fit, not growth.".into(),
        };
        let run = crate::growth::run::Run {
            id: "run_1".into(),
            project_id: "prj_1".into(),
            profile_id: "p".into(),
            model: "m".into(),
            input: crate::growth::run::RunInput {
                platforms: vec![Platform::X],
                goal: Default::default(),
                intensity: Default::default(),
                constraints: crate::growth::run::RunConstraints { keep_voice: true, ..Default::default() },
                draft: None,
            },
            status: crate::growth::run::RunStatus::PartlyApplied,
            stage: "proposals".into(),
            base_revision: 3,
            base_head: 2,
            snapshot_id: None,
            prompt_layers: vec!["core@1".into()],
            strategy: Some(json!({"angle": "short"})),
            titles: Vec::new(),
            targets: vec![crate::growth::run::RunTarget {
                target: Target::Draft { platform: Platform::X },
                proposal_id: Some("prp_1".into()),
                title_proposal_id: None,
                summary: "Shorter".into(),
                risks: Vec::new(),
                fit_before: Some(fit),
                fit_after: None,
                flags: vec!["no_saved_draft".into()],
                outcome: crate::growth::run::TargetOutcome::Conflict,
                outcome_message: None,
            }],
            error: None,
            resumable: false,
            disclaimer: "Fit, not growth.".into(),
            timings: crate::growth::run::RunTimings { total_micros: 5, model_micros: 3, model_calls: 1 },
            created_at: at(),
            updated_at: at(),
        };
        assert_eq!(
            serde_json::to_value(super::Run::from(&run)).unwrap(),
            json!({
                "id": "run_1", "projectId": "prj_1", "profileId": "p", "model": "m",
                "input": {
                    "platforms": ["x"], "goal": "recommendation", "intensity": "balanced",
                    "constraints": {"keepVoice": true, "keepTitle": false, "keepStructure": false, "avoidClickbait": false}
                },
                "status": "partly_applied", "stage": "proposals", "baseRevision": 3, "baseHead": 2, "promptLayers": ["core@1"],
                "strategy": {"angle": "short"}, "titles": [],
                "targets": [{
                    "target": {"type": "draft", "platform": "x"}, "proposalId": "prp_1", "summary": "Shorter", "risks": [],
                    "fitBefore": {
                        "platform": "x", "profileIds": ["x@growth-v1"], "score": 60, "disclaimer": "Fit, not growth.",
                        "points": [{"check": "tags", "passed": false, "weight": 10, "measured": "no tags", "rule": "1-3 tags", "messageId": "tags.missing"}]
                    },
                    "flags": ["no_saved_draft"], "outcome": "conflict"
                }],
                "resumable": false, "disclaimer": "Fit, not growth.", "timings": {"totalMicros": 5, "modelMicros": 3, "modelCalls": 1},
                "createdAt": "2026-01-02T03:04:05Z", "updatedAt": "2026-01-02T03:04:05Z"
            })
        );
    }

    /// Memory items and habits, held to their twins' wire JSON the same way.
    #[test]
    fn the_wire_json_of_memory_records_is_their_twins() {
        let item = crate::memory::MemoryItem {
            id: "mem_1".into(),
            scope: crate::memory::MemoryScope::Project { project_id: "prj_1".into() },
            scope_id: "prj_1".into(),
            text: "Short titles".into(),
            status: crate::memory::MemoryStatus::Proposed,
            origin: crate::memory::MemoryOrigin::Model { session_id: "ses_1".into(), tool_use_id: "call_1".into() },
            created_at: at(),
            updated_at: at(),
        };
        assert_eq!(
            serde_json::to_value(super::MemoryItem::from(&item)).unwrap(),
            json!({
                "id": "mem_1", "scope": {"type": "project", "projectId": "prj_1"}, "scopeId": "prj_1", "text": "Short titles", "status": "proposed",
                "origin": {"type": "model", "sessionId": "ses_1", "toolUseId": "call_1"}, "createdAt": "2026-01-02T03:04:05Z", "updatedAt": "2026-01-02T03:04:05Z"
            })
        );
        let mine = crate::memory::MemoryItem {
            scope: crate::memory::MemoryScope::Workspace,
            status: crate::memory::MemoryStatus::Confirmed,
            origin: crate::memory::MemoryOrigin::Person,
            ..item.clone()
        };
        let wire = serde_json::to_value(super::MemoryItem::from(&mine)).unwrap();
        assert_eq!((&wire["scope"], &wire["status"], &wire["origin"]), (&json!({"type": "workspace"}), &json!("confirmed"), &json!({"type": "person"})));
        let habit =
            crate::memory::Habit { id: "platform:wechat".into(), kind: crate::memory::HabitKind::PreferredPlatform, text: "Often WeChat".into(), sources: vec!["v1".into()] };
        assert_eq!(
            serde_json::to_value(super::Habit::from(&habit)).unwrap(),
            json!({"id": "platform:wechat", "kind": "preferred_platform", "text": "Often WeChat", "sources": ["v1"]})
        );
    }

    /// The workspace policy as the app last saw it, with the month's spend; a provider
    /// rule as a parameter.
    #[test]
    fn the_wire_json_of_the_policy_is_its_twins() {
        let cached = crate::policy::CachedPolicy {
            workspace_id: "wsp_1".into(),
            workspace_name: "Team".into(),
            policy: crate::policy::Policy {
                providers: crate::policy::ProviderRule::Hosts { hosts: vec!["api.example.com".into()] },
                performance_context: false,
                monthly_cap_usd: Some(2.5),
                monthly_cap_tokens: None,
                share_activity: true,
            },
            set_by: Some("Olga".into()),
            set_at: None,
            fetched_at: at(),
        };
        let standing = crate::sync::policy::PolicyStanding { policy: Some(cached), can_set: true, fresh: false, spent: crate::policy::MonthSpent { tokens: 1200, cost_usd: 0.5 } };
        assert_eq!(
            serde_json::to_value(super::PolicyStanding::from(&standing)).unwrap(),
            json!({
                "policy": {
                    "workspaceId": "wsp_1", "workspaceName": "Team", "setBy": "Olga", "fetchedAt": "2026-01-02T03:04:05Z",
                    "policy": {
                        "providers": {"kind": "hosts", "hosts": ["api.example.com"]}, "performanceContext": false, "monthlyCapUsd": 2.5,
                        "shareActivity": true
                    }
                },
                "canSet": true, "fresh": false, "spent": {"tokens": 1200, "costUsd": 0.5}
            })
        );
        let rules: Vec<super::ProviderRule> = serde_json::from_value(json!([{"kind": "any"}, {"kind": "local"}, {"kind": "hosts", "hosts": ["h"]}])).unwrap();
        assert_eq!(
            rules.into_iter().map(crate::policy::ProviderRule::from).collect::<Vec<_>>(),
            [crate::policy::ProviderRule::Any, crate::policy::ProviderRule::Local, crate::policy::ProviderRule::Hosts { hosts: vec!["h".into()] }]
        );
    }

    /// Search's hits, the index status, Ask's answers and suggested keywords, and what
    /// search takes as parameters.
    #[test]
    fn the_wire_json_of_search_records_is_their_twins() {
        use crate::retrieval::{self as search, ask};
        let span = Anchor { from: 0, to: 3 };
        let results = search::SearchResults {
            hits: vec![search::SearchHit {
                project_id: "prj_1".into(),
                project_title: "Tea".into(),
                archived: false,
                kind: search::DocKind::Version,
                version: Some(2),
                comment_id: None,
                title: "Tea".into(),
                span: Some(span),
                snippet: search::Snippet { text: "Tea time".into(), highlights: vec![span] },
                tier: search::Tier::TitleKeywords,
                score: 0.5,
                also_in: vec![1],
            }],
            semantic: false,
            notice: Some(search::SearchNotice { code: search::NoticeCode::SemanticOff, message: "Lexical only.".into() }),
        };
        assert_eq!(
            serde_json::to_value(super::SearchResults::from(&results)).unwrap(),
            json!({
                "hits": [{
                    "projectId": "prj_1", "projectTitle": "Tea", "archived": false, "kind": "version", "version": 2, "commentId": null, "title": "Tea",
                    "span": {"from": 0, "to": 3}, "snippet": {"text": "Tea time", "highlights": [{"from": 0, "to": 3}]}, "tier": "titleKeywords",
                    "score": 0.5, "alsoIn": [1]
                }],
                "semantic": false, "notice": {"code": "semanticOff", "message": "Lexical only."}
            })
        );
        let status = search::IndexStatus { documents: 4, building: true, pending: 1, embedding_model: None, vectors: 0, vectors_missing: 4 };
        assert_eq!(
            serde_json::to_value(super::IndexStatus::from(status)).unwrap(),
            json!({"documents": 4, "building": true, "pending": 1, "embeddingModel": null, "vectors": 0, "vectorsMissing": 4})
        );
        let answer = ask::Answer {
            answer: "Tea [1].".into(),
            model: Some("m".into()),
            sources: vec![ask::Source {
                n: 1,
                project_id: "prj_1".into(),
                project_title: "Tea".into(),
                kind: search::DocKind::Working,
                version: None,
                comment_id: None,
                span,
                text: "Tea".into(),
                tier: search::Tier::Body,
            }],
            citations: vec![ask::Citation { n: 1, project_id: "prj_1".into(), kind: search::DocKind::Comment, version: None, comment_id: Some("cmt_1".into()), span }],
            quotes: vec![ask::Quote { text: "Tea time".into(), found: false, source: None, span: None }],
            unknown_citations: vec![7],
            retrieved: 3,
            cited: 1,
            footer: "retrieved 3, cited 1".into(),
            notice: None,
            cached: false,
            reranked: true,
            route: ask::AskRoute::Material,
            route_chosen: false,
        };
        assert_eq!(
            serde_json::to_value(super::Answer::from(&answer)).unwrap(),
            json!({
                "answer": "Tea [1].", "model": "m",
                "sources": [{
                    "n": 1, "projectId": "prj_1", "projectTitle": "Tea", "kind": "working", "version": null, "commentId": null,
                    "span": {"from": 0, "to": 3}, "text": "Tea", "tier": "body"
                }],
                "citations": [{"n": 1, "projectId": "prj_1", "kind": "comment", "version": null, "commentId": "cmt_1", "span": {"from": 0, "to": 3}}],
                "quotes": [{"text": "Tea time", "found": false, "source": null, "span": null}],
                "unknownCitations": [7], "retrieved": 3, "cited": 1, "footer": "retrieved 3, cited 1", "notice": null, "cached": false,
                "reranked": true, "route": "material", "routeChosen": false
            })
        );
        let keyword = search::suggest::Keyword { keyword: "tea".into(), weight: 0.25 };
        assert_eq!(serde_json::to_value(super::Keyword::from(&keyword)).unwrap(), json!({"keyword": "tea", "weight": 0.25}));
        let (kinds, scope, route): (Vec<super::DocKind>, super::SearchScope, super::AskRoute) =
            serde_json::from_value(json!([["working", "version", "comment"], "project", "general"])).unwrap();
        assert_eq!(kinds.into_iter().map(search::DocKind::from).collect::<Vec<_>>(), [search::DocKind::Working, search::DocKind::Version, search::DocKind::Comment]);
        assert_eq!((search::SearchScope::from(scope), ask::AskRoute::from(route)), (search::SearchScope::Project, ask::AskRoute::General));
    }

    /// The small values many records hold, both ways where they come in as parameters,
    /// and the error every transport sends: its code, hints with values, problem and
    /// details, exactly as the UI reads them.
    #[test]
    fn the_wire_json_of_ids_and_errors_is_their_twins() {
        use crate::error::{ApiError, ErrorCode};
        let content = DraftContent::Thread { posts: vec![Post { text: "Tea".into(), weighted_length: 3 }] };
        let wire = serde_json::to_value(super::DraftContent::from(&content)).unwrap();
        assert_eq!(wire, json!({"type": "thread", "posts": [{"text": "Tea", "weightedLength": 3}]}));
        assert_eq!(DraftContent::from(serde_json::from_value::<super::DraftContent>(wire).unwrap()), content);
        let source = ProvenanceSource::SearchHit {
            tool: "search".into(),
            tool_use_id: "call_1".into(),
            reference: "prj_1@v3:0-3".into(),
            project_id: "prj_1".into(),
            title: "Tea".into(),
            version: Some(3),
            comment_id: None,
            span: Some(Anchor { from: 0, to: 3 }),
            snippet: "Tea".into(),
        };
        assert_eq!(
            serde_json::to_value(super::ProvenanceSource::from(&source)).unwrap(),
            json!({
                "type": "searchHit", "tool": "search", "toolUseId": "call_1", "reference": "prj_1@v3:0-3", "projectId": "prj_1", "title": "Tea",
                "version": 3, "span": {"from": 0, "to": 3}, "snippet": "Tea"
            })
        );
        let (platforms, anchor): (Vec<super::Platform>, super::Anchor) = serde_json::from_value(json!([["xiaohongshu", "x"], {"from": 2, "to": 5}])).unwrap();
        assert_eq!(platforms.into_iter().map(Platform::from).collect::<Vec<_>>(), [Platform::Xiaohongshu, Platform::X]);
        assert_eq!(Anchor::from(anchor), Anchor { from: 2, to: 5 });

        let error = ApiError::new(ErrorCode::Conflict, "The proposal is stale.")
            .problem("proposal.stale", &[("proposal", "prp_1")])
            .hint_with("review_again", "Review it again.", &[("session", "ses_1")])
            .hint("reload", "Reload.")
            .details(json!({"head": 4}));
        assert_eq!(
            serde_json::to_value(super::ApiError::from(&error)).unwrap(),
            json!({
                "code": "CONFLICT", "message": "The proposal is stale.",
                "hints": [{"id": "review_again", "message": "Review it again.", "params": {"session": "ses_1"}}, {"id": "reload", "message": "Reload."}],
                "details": {"head": 4}, "messageId": "proposal.stale", "params": {"proposal": "prp_1"}
            })
        );
        assert_eq!(
            serde_json::to_value(super::ApiError::from(ApiError::new(ErrorCode::StoreTooNew, "Newer."))).unwrap(),
            json!({"code": "STORE_TOO_NEW", "message": "Newer.", "hints": []})
        );
    }

    /// A model profile (its server's window, the structured-output form it takes, the
    /// last test's error) and a preset; the parameters that convert back; and a key
    /// parameter, which is read but never written.
    #[test]
    fn the_wire_json_of_model_profiles_is_their_twins() {
        use crate::llm::{profile, window};
        let server_window = window::ServerWindow { tokens: 4096, source: window::WindowSource::LlamaCppProps, server: window::ServerKind::LlamaCpp, detected_at: at() };
        let llm_profile = profile::LlmProfile {
            id: "llm_1".into(),
            name: "Local".into(),
            provider: profile::Provider::OpenaiCompatible,
            base_url: "http://127.0.0.1:8080/v1".into(),
            model: "qwen".into(),
            embedding_model: None,
            timeout_s: 60,
            context_window: 4096,
            context_window_origin: window::WindowOrigin::Server,
            server_window: Some(server_window),
            max_output_tokens: Some(512),
            temperature: None,
            seed: Some(7),
            input_price_per_mtok: None,
            output_price_per_mtok: Some(0.5),
            key_required: false,
            key_fingerprint: Some("…WXYZ".into()),
            supports_json_schema: true,
            schema_form: profile::SchemaForm::JsonObject,
            structured_form: Some(profile::StructuredForm {
                form: profile::SchemaForm::JsonObject,
                source: profile::FormSource::Test,
                refused: vec![profile::FormRefusal { form: profile::SchemaForm::ResponseFormat, status: 400, message: "no".into() }],
                at: at(),
            }),
            tool_loading: profile::ToolLoading::OnDemand,
            proxy_url: None,
            ca_cert_path: None,
            is_default: true,
            health: profile::Health::Failed,
            last_tested_at: Some(at()),
            last_latency_ms: None,
            last_error: Some(profile::ProfileError { code: crate::error::ErrorCode::Timeout, message: "Slow".into() }),
            created_at: at(),
            updated_at: at(),
        };
        assert_eq!(
            serde_json::to_value(super::LlmProfile::from(&llm_profile)).unwrap(),
            json!({
                "id": "llm_1", "name": "Local", "provider": "openai-compatible", "baseUrl": "http://127.0.0.1:8080/v1", "model": "qwen", "timeoutS": 60,
                "contextWindow": 4096, "contextWindowOrigin": "server",
                "serverWindow": {"tokens": 4096, "source": "llamaCppProps", "server": "llamaCpp", "detectedAt": "2026-01-02T03:04:05Z"},
                "maxOutputTokens": 512, "seed": 7, "outputPricePerMtok": 0.5, "keyRequired": false, "keyFingerprint": "…WXYZ",
                "supportsJsonSchema": true, "schemaForm": "jsonObject",
                "structuredForm": {
                    "form": "jsonObject", "source": "test", "refused": [{"form": "responseFormat", "status": 400, "message": "no"}],
                    "at": "2026-01-02T03:04:05Z"
                },
                "toolLoading": "onDemand", "isDefault": true, "health": "failed", "lastTestedAt": "2026-01-02T03:04:05Z",
                "lastError": {"code": "TIMEOUT", "message": "Slow"}, "createdAt": "2026-01-02T03:04:05Z", "updatedAt": "2026-01-02T03:04:05Z"
            })
        );
        let preset = profile::presets().into_iter().find(|p| p.id == "ollama").unwrap();
        assert_eq!(
            serde_json::to_value(super::LlmPreset::from(&preset)).unwrap(),
            json!({
                "id": "ollama", "label": "Ollama", "baseUrl": "http://127.0.0.1:11434/v1", "exampleModel": "qwen2.5:7b", "keyRequired": false,
                "local": true, "supportsJsonSchema": true, "schemaForm": "responseFormat", "toolLoading": "onDemand"
            })
        );
        assert_eq!(serde_json::to_value(super::WindowSource::from(window::WindowSource::OllamaModelMax)).unwrap(), json!("ollamaModelMax"));
        assert_eq!(serde_json::to_value(super::TokenizerEndpoint::from(window::TokenizerEndpoint::LlamaCppPython)).unwrap(), json!("llamaCppPython"));
        assert_eq!(serde_json::to_value(super::WindowOrigin::from(window::WindowOrigin::Assumed)).unwrap(), json!("assumed"));
        let (provider, form, loading): (super::Provider, super::SchemaForm, super::ToolLoading) = serde_json::from_value(json!(["disabled", "instructions", "all"])).unwrap();
        assert_eq!(
            (profile::Provider::from(provider), profile::SchemaForm::from(form), profile::ToolLoading::from(loading)),
            (profile::Provider::Disabled, profile::SchemaForm::Instructions, profile::ToolLoading::All)
        );
        let key: super::ApiKey = serde_json::from_value(json!("sk-secret-ABCD")).unwrap();
        assert_eq!(format!("{key:?}"), "ApiKey(…ABCD)");
        assert_eq!(crate::llm::ApiKey::from(key).expose(), "sk-secret-ABCD");
        let call = crate::llm::ToolCall { id: "call_1".into(), name: "read_project".into(), arguments: "{}".into() };
        assert_eq!(serde_json::to_value(super::ToolCall::from(&call)).unwrap(), json!({"id": "call_1", "name": "read_project", "arguments": "{}"}));
    }

    /// The text pipeline's records: a diff, a compiled draft with a finding, a
    /// measurement, the platform profiles, and a field as a parameter.
    #[test]
    fn the_wire_json_of_text_records_is_their_twins() {
        use crate::diff::{DiffLine, Hunk, LineKind, Segment, TextDiffResult};
        use crate::profiles::{self, LimitField, Severity, Unit};
        let line = DiffLine { kind: LineKind::Delete, old_line: Some(1), new_line: None, segments: vec![Segment { text: "Tea".into(), emphasized: true }] };
        let diff =
            TextDiffResult { hunks: vec![Hunk { old_start: 1, old_len: 1, new_start: 1, new_len: 0, lines: vec![line] }], n_insertions: 0, n_deletions: 1, identical: false };
        assert_eq!(
            serde_json::to_value(super::TextDiffResult::from(&diff)).unwrap(),
            json!({
                "hunks": [{
                    "oldStart": 1, "oldLen": 1, "newStart": 1, "newLen": 0,
                    "lines": [{"kind": "delete", "oldLine": 1, "newLine": null, "segments": [{"text": "Tea", "emphasized": true}]}]
                }],
                "nInsertions": 0, "nDeletions": 1, "identical": false
            })
        );
        let draft = crate::pipeline::Draft {
            platform: Platform::Zhihu,
            profile_id: "zhihu@draft-v1".into(),
            title: "Tea".into(),
            content: DraftContent::Markdown { markdown: "Tea".into() },
            n_images: 0,
            n_links: 1,
        };
        assert_eq!(
            serde_json::to_value(super::Draft::from(&draft)).unwrap(),
            json!({"platform": "zhihu", "profileId": "zhihu@draft-v1", "title": "Tea", "content": {"type": "markdown", "markdown": "Tea"}, "nImages": 0, "nLinks": 1})
        );
        let mut finding = crate::pipeline::Finding::new("limit.title", Severity::Warn, Some(Platform::X), "Too long");
        finding.span = Some(Anchor { from: 0, to: 3 });
        finding.message_id = Some("limit.title".into());
        finding.params = BTreeMap::from([("max".to_owned(), "30".to_owned())]);
        assert_eq!(
            serde_json::to_value(super::Finding::from(&finding)).unwrap(),
            json!({
                "check": "limit.title", "severity": "warn", "platform": "x", "span": {"from": 0, "to": 3}, "location": null, "matched": null,
                "message": "Too long", "suggestion": null, "route": null, "messageId": "limit.title", "params": {"max": "30"}
            })
        );
        let limit = profiles::Limit { field: LimitField::Title, min: None, max: 280, unit: Unit::XWeighted, route: None, severity: Severity::Block, source: "x.com".into() };
        let measurement = crate::pipeline::Measurement {
            platform: Platform::X,
            field: LimitField::Title,
            unit: Unit::XWeighted,
            weighted_length: 5,
            limit: Some(280),
            valid: true,
            checks: vec![crate::pipeline::LimitCheck { limit: limit.clone(), length: 5, fits: true }],
        };
        assert_eq!(
            serde_json::to_value(super::Measurement::from(&measurement)).unwrap(),
            json!({
                "platform": "x", "field": "title", "unit": "x_weighted", "weightedLength": 5, "limit": 280, "valid": true,
                "checks": [{
                    "limit": {"field": "title", "min": null, "max": 280, "unit": "x_weighted", "route": null, "severity": "block", "source": "x.com"},
                    "length": 5, "fits": true
                }]
            })
        );
        let profile = profiles::DraftProfile {
            id: "x@draft-v1".into(),
            platform: Platform::X,
            format: "thread".into(),
            description: "X".into(),
            limits: vec![limit],
            settings: BTreeMap::from([("numbering".to_owned(), toml::Value::String("1/".into())), ("width".to_owned(), toml::Value::Integer(60))]),
            theme: BTreeMap::new(),
        };
        let wire = serde_json::to_value(super::DraftProfile::from(&profile)).unwrap();
        assert_eq!((&wire["settings"], &wire["theme"], &wire["limits"][0]["unit"]), (&json!({"numbering": "1/", "width": 60}), &json!({}), &json!("x_weighted")));
        let fit = profiles::FitRules { title_chars: Some([10, 30]), links: profiles::LinkPolicy::Footnotes, ..Default::default() };
        assert_eq!(
            serde_json::to_value(super::FitRules::from(&fit)).unwrap(),
            json!({"titleChars": [10, 30], "hookChars": null, "tags": null, "ctaMarkers": [], "links": "footnotes", "maxParagraphChars": null, "headingEveryChars": null})
        );
        let risk = profiles::RiskList {
            id: "ad-law-zh@v2".into(),
            description: "Ad law".into(),
            source: "law".into(),
            suggestion: "Say it plainly".into(),
            strict_industries: vec!["health".into()],
            terms: vec!["第一".into()],
            allow: vec!["第一次".into()],
            allow_context: vec![profiles::ContextAllow {
                term: "第一".into(),
                followed_by: vec!["个".into()],
                opening_followed_by: Vec::new(),
                not_preceded_by: vec!["行业".into()],
            }],
        };
        assert_eq!(
            serde_json::to_value(super::RiskList::from(&risk)).unwrap(),
            json!({
                "id": "ad-law-zh@v2", "description": "Ad law", "source": "law", "suggestion": "Say it plainly", "strictIndustries": ["health"],
                "terms": ["第一"], "allow": ["第一次"],
                "allowContext": [{"term": "第一", "followedBy": ["个"], "openingFollowedBy": [], "notPrecededBy": ["行业"]}]
            })
        );
        let fields: Vec<super::LimitField> = serde_json::from_value(json!(["title", "posts"])).unwrap();
        assert_eq!(fields.into_iter().map(LimitField::from).collect::<Vec<_>>(), [LimitField::Title, LimitField::Posts]);
    }
}
