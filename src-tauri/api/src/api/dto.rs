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
    use serde_json::json;

    use crate::context::Selection;
    use crate::error::Hint;
    use crate::harness::compaction::CompactionTrigger;
    use crate::harness::{self, timeline};
    use crate::model::{Anchor, DraftContent, Platform, Post, ProvenanceSource, Timestamp};
    use crate::proposals::{ProposalKind, Target};

    pub(super) fn at() -> Timestamp {
        "2026-01-02T03:04:05Z".parse().unwrap()
    }

    /// An approval's change and its wire JSON, which the event and the timeline tests share.
    pub(super) fn approval_change() -> (harness::ApprovalChange, serde_json::Value) {
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
        let change_json = json!({
            "proposalId": "prp_1", "kind": "source_patch", "summary": "Tighter", "target": {"type": "source"},
            "hunks": [{"id": "hk_1", "contentHash": "sha256:22"}], "omittedHunks": 0, "hunkSetHash": "sha256:33",
            "totalHunks": 1, "totalBytes": 12, "createsVersion": 3
        });
        (change, change_json)
    }

    /// The session timeline: its items, its state and a patch of it.
    #[test]
    fn the_wire_json_of_the_timeline_is_its_twins() {
        let (change, change_json) = approval_change();
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
}

#[cfg(test)]
mod record_wire_tests;
#[cfg(test)]
mod subsystem_wire_tests;
