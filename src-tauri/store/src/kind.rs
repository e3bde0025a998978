//! The record kinds: one sled tree each.

/// The record kinds, one sled tree each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    Meta,
    Projects,
    ProjectSummaries,
    Versions,
    Comments,
    Activities,
    BrandProfiles,
    Templates,
    Media,
    LlmProfiles,
    UsageRecords,
    PlatformDrafts,
    /// Harness sessions (one record each).
    Sessions,
    /// Harness event logs: `session_id 0x00 sequence(u64 BE)`.
    SessionEvents,
    /// Large tool results, content-addressed (`sha256:<hex>`), outside the logs.
    ToolResults,
    /// Immutable context snapshots, content-addressed.
    ContextSnapshots,
    /// Recorded approval decisions, bound to tool, input hash, target version and
    /// idempotency key.
    Approvals,
    /// Executed write tools by idempotency key, so a write runs at most once.
    ToolExecutions,
    /// Proposals: `project_id 0x00 proposal_id` (ids sort by creation).
    Proposals,
    /// Proposal id → its project, so a proposal can be found by id alone.
    ProposalIndex,
    /// Who accepted or rejected which hunks of which proposal, from which model.
    ProposalAudit,
    /// Durable constraints of a session or run (rejection reasons):
    /// `owner_id 0x00 constraint_id`.
    Constraints,
    /// Checkpoints: `owner_id 0x00 checkpoint_id`.
    Checkpoints,
    /// A session's staged proposals (its working copy), one record per session.
    Staging,
    /// Sync delivery jobs, one per accepted version of a linked workspace.
    Outbox,
    /// Per project: the workspace server's head this client has seen, and the local
    /// version that holds the same content (the base of the next push).
    SyncProjects,
    /// Sync conflicts: a push on a stale base or a pull onto edited work, for the
    /// person to resolve.
    SyncConflicts,
    /// Embedding vectors of search documents, by model and content hash: a cache the
    /// search index refills, so it is neither exported nor counted as user data.
    Embeddings,
    /// Memory items of a workspace or a project, and dismissed habits:
    /// `scope_id 0x00 memory_id`.
    Memory,
    /// Token and cost budgets of a project, one record each.
    ProjectBudgets,
    /// Optimization runs (one record each, by run id); their logs are in
    /// `SessionEvents` under the run id.
    OptimizeRuns,
    /// Publishing accounts of the workspace (`performance`), by id.
    PerfAccounts,
    /// Publications (`performance`): a project's version published somewhere, by id.
    Publications,
    /// Metric snapshots, append-only: `publication_id 0x00 snapshot_id`.
    MetricSnapshots,
    /// Imports of platform exports, by the file's SHA-256 (re-importing changes nothing).
    PerfImports,
    /// The AI activity index, derived from `ProposalAudit` (accepts and rejects only):
    /// `scope 0x00 time(u64 BE) audit_id`, one entry per scope (everything, the
    /// project, the person, the model), so a filtered page reads newest-first and stops.
    AuditIndex,
    /// Usage records by their session or run, derived from `UsageRecords`:
    /// `owner_id 0x00 usage_id`.
    UsageIndex,
    /// Daily account snapshots (`performance`: followers), append-only:
    /// `account_id 0x00 date 0x00 snapshot_id`.
    AccountSnapshots,
    /// Performance records (accounts, publications, snapshots) owed to the workspace
    /// server: `kind 0x00 id`, one entry per record however often it changed.
    PerfOutbox,
    /// Running totals of the usage records by UTC calendar month (`2026-11`) and day
    /// (`2026-11-27`), written in the same batch as each record (`usage::stage_call`)
    /// and rebuilt from the records on import and when an older folder opens.
    UsageTotals,
    /// One entry per canonical metric of each metric snapshot, derived from
    /// `MetricSnapshots`: `platform 0x00 metric 0x00 publication_id 0x00 snapshot_id`, so
    /// the dashboard reads one platform's values of one key without decoding snapshots.
    MetricPoints,
    /// A metric snapshot's canonical metrics without its source (no raw export row),
    /// derived from `MetricSnapshots` under the same key (`publication_id 0x00
    /// snapshot_id`), so the dashboard's rows read a publication's latest values without
    /// decoding whole snapshots.
    SnapshotMetrics,
    /// The open proposals of each session or run, derived from `Proposals`:
    /// `project_id 0x00 owner_id 0x00 proposal_id`, so a new proposal finds the ones it
    /// supersedes without decoding every proposal of its project.
    OpenProposals,
}

impl Kind {
    pub(super) const ALL: [Kind; 43] = [
        Kind::Meta,
        Kind::Projects,
        Kind::ProjectSummaries,
        Kind::Versions,
        Kind::Comments,
        Kind::Activities,
        Kind::BrandProfiles,
        Kind::Templates,
        Kind::Media,
        Kind::LlmProfiles,
        Kind::UsageRecords,
        Kind::PlatformDrafts,
        Kind::Sessions,
        Kind::SessionEvents,
        Kind::ToolResults,
        Kind::ContextSnapshots,
        Kind::Approvals,
        Kind::ToolExecutions,
        Kind::Proposals,
        Kind::ProposalIndex,
        Kind::ProposalAudit,
        Kind::Constraints,
        Kind::Checkpoints,
        Kind::Staging,
        Kind::Outbox,
        Kind::Embeddings,
        Kind::Memory,
        Kind::ProjectBudgets,
        Kind::SyncProjects,
        Kind::SyncConflicts,
        Kind::OptimizeRuns,
        Kind::PerfAccounts,
        Kind::Publications,
        Kind::MetricSnapshots,
        Kind::PerfImports,
        Kind::AuditIndex,
        Kind::UsageIndex,
        Kind::AccountSnapshots,
        Kind::PerfOutbox,
        Kind::UsageTotals,
        Kind::MetricPoints,
        Kind::SnapshotMetrics,
        Kind::OpenProposals,
    ];

    pub(super) fn tree_name(self) -> &'static str {
        match self {
            Kind::Meta => "meta",
            Kind::Projects => "projects",
            Kind::ProjectSummaries => "project_summaries",
            Kind::Versions => "versions",
            Kind::Comments => "comments",
            Kind::Activities => "activities",
            Kind::BrandProfiles => "brand_profiles",
            Kind::Templates => "templates",
            Kind::Media => "media",
            Kind::LlmProfiles => "llm_profiles",
            Kind::UsageRecords => "usage_records",
            Kind::PlatformDrafts => "platform_drafts",
            Kind::Sessions => "sessions",
            Kind::SessionEvents => "session_events",
            Kind::ToolResults => "tool_results",
            Kind::ContextSnapshots => "context_snapshots",
            Kind::Approvals => "approvals",
            Kind::ToolExecutions => "tool_executions",
            Kind::Proposals => "proposals",
            Kind::ProposalIndex => "proposal_index",
            Kind::ProposalAudit => "proposal_audit",
            Kind::Constraints => "constraints",
            Kind::Checkpoints => "checkpoints",
            Kind::Staging => "staging",
            Kind::Outbox => "outbox",
            Kind::Embeddings => "embeddings",
            Kind::Memory => "memory",
            Kind::ProjectBudgets => "project_budgets",
            Kind::SyncProjects => "sync_projects",
            Kind::SyncConflicts => "sync_conflicts",
            Kind::OptimizeRuns => "optimize_runs",
            Kind::PerfAccounts => "perf_accounts",
            Kind::Publications => "publications",
            Kind::MetricSnapshots => "metric_snapshots",
            Kind::PerfImports => "perf_imports",
            Kind::AuditIndex => "proposal_audit_index",
            Kind::UsageIndex => "usage_index",
            Kind::AccountSnapshots => "account_snapshots",
            Kind::PerfOutbox => "perf_outbox",
            Kind::UsageTotals => "usage_totals",
            Kind::MetricPoints => "metric_points",
            Kind::SnapshotMetrics => "snapshot_metrics",
            Kind::OpenProposals => "open_proposals",
        }
    }

    pub(super) fn index(self) -> usize {
        match self {
            Kind::Meta => 0,
            Kind::Projects => 1,
            Kind::ProjectSummaries => 2,
            Kind::Versions => 3,
            Kind::Comments => 4,
            Kind::Activities => 5,
            Kind::BrandProfiles => 6,
            Kind::Templates => 7,
            Kind::Media => 8,
            Kind::LlmProfiles => 9,
            Kind::UsageRecords => 10,
            Kind::PlatformDrafts => 11,
            Kind::Sessions => 12,
            Kind::SessionEvents => 13,
            Kind::ToolResults => 14,
            Kind::ContextSnapshots => 15,
            Kind::Approvals => 16,
            Kind::ToolExecutions => 17,
            Kind::Proposals => 18,
            Kind::ProposalIndex => 19,
            Kind::ProposalAudit => 20,
            Kind::Constraints => 21,
            Kind::Checkpoints => 22,
            Kind::Staging => 23,
            Kind::Outbox => 24,
            Kind::Embeddings => 25,
            Kind::Memory => 26,
            Kind::ProjectBudgets => 27,
            Kind::SyncProjects => 28,
            Kind::SyncConflicts => 29,
            Kind::OptimizeRuns => 30,
            Kind::PerfAccounts => 31,
            Kind::Publications => 32,
            Kind::MetricSnapshots => 33,
            Kind::PerfImports => 34,
            Kind::AuditIndex => 35,
            Kind::UsageIndex => 36,
            Kind::AccountSnapshots => 37,
            Kind::PerfOutbox => 38,
            Kind::UsageTotals => 39,
            Kind::MetricPoints => 40,
            Kind::SnapshotMetrics => 41,
            Kind::OpenProposals => 42,
        }
    }
}
