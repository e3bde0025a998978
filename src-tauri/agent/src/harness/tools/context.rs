//! What a tool's handler is given: [`ToolContext`] (the engine, the turn it runs in,
//! what it may do) and [`Reads`], the reads a handler makes through it.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::error::ApiError;
use crate::harness::event::Mode;
use crate::kernel::Kernel;
use crate::model::{BrandProfile, Comment, MediaAsset, Platform, PlatformDraft, Project, Version, VersionSummary};
use crate::pipeline::Finding;
use crate::profiles::ProfileSet;
use crate::project::drafts::PipelineCompileResult;
use crate::proposals::{NewProposal, Origin, Proposal, ProposalKind};
use crate::store::{Record, Store};

use super::*;

/// What a tool gets to work with. Every handler can read ([`ToolContext::reads`]);
/// only the handler of a write ([`ToolDefinition::is_write`]: asked for, at most once,
/// never in plan mode) reaches the kernel ([`ToolContext::writer`]), so a read tool
/// cannot write by construction of its context. A proposing tool can record a
/// proposal ([`ToolContext::propose`]) and nothing else: nothing official changes.
pub struct ToolContext<'a> {
    pub(in crate::harness) kernel: &'a Kernel,
    /// True when the tool is a write and may have the kernel.
    pub(in crate::harness) may_write: bool,
    /// The tool's declared capability (decides whether it may propose).
    pub(in crate::harness) capability: Capability,
    /// Counts the proposals this turn made (for the checkpoints around a turn).
    pub(in crate::harness) proposals_made: &'a AtomicUsize,
    /// The session (or run) the call belongs to.
    pub owner: &'a crate::harness::Owner,
    pub project_id: &'a str,
    pub tool_use_id: &'a str,
    pub mode: Mode,
    /// Set on interrupt or timeout; cancellable tools check it.
    pub cancel: &'a AtomicBool,
    /// The log sequence of the turn's start.
    pub turn: Option<u64>,
    /// The log's last sequence number when the call runs.
    pub sequence: u64,
    /// The context snapshot of the model call that asked for this call.
    pub context_snapshot_id: Option<&'a str>,
    /// The model and LLM profile of the turn.
    pub model: &'a str,
    pub profile_id: &'a str,
    /// The approval this call uses up (its request id), when one allowed it.
    pub approval: Option<&'a str>,
    /// The names of every registered tool (for `load_tools`).
    pub tool_names: &'a [String],
    /// The target version the call was decided for (and an approval bound to), per
    /// the tool's [`BaseVersionPolicy`].
    pub target_version: Option<u64>,
    /// What the model had read when it asked for this call (`harness::provenance`),
    /// and the session's pins.
    pub sources: &'a [crate::model::ProvenanceSource],
    pub pins: &'a [crate::harness::Pin],
}

impl<'a> ToolContext<'a> {
    /// True once the call was interrupted or timed out; cancellable tools check it.
    pub fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::SeqCst)
    }

    /// The read-only view every tool gets.
    pub fn reads(&self) -> Reads<'a> {
        Reads { kernel: self.kernel }
    }

    /// The kernel, to write with: only for a tool whose definition is a write.
    ///
    /// Errors: a [`ToolFailure`] for any other tool (its registration promised it
    /// reads only).
    pub fn writer(&self) -> Result<&'a Kernel, ToolFailure> {
        if self.may_write {
            Ok(self.kernel)
        } else {
            Err(ToolFailure::new("This tool is registered as read-only, so it cannot write."))
        }
    }

    /// Where a proposal made by this call comes from: the owner, the turn, the call,
    /// the context snapshot, the model, the profile and the prompt version.
    pub fn origin(&self) -> Origin {
        let snapshot = self.context_snapshot_id.and_then(|id| self.kernel.store().get::<crate::context::ContextSnapshot>(id.as_bytes()).ok().flatten());
        let mut sources = self.sources.to_vec();
        if let Some(snapshot) = &snapshot {
            crate::harness::provenance::remember(&mut sources, crate::harness::provenance::of_call_context(&snapshot.system, self.pins, &self.memory_in_scope()));
        }
        Origin {
            session_id: self.owner.session_id().map(str::to_owned),
            run_id: self.owner.run_id().map(str::to_owned),
            turn: self.turn,
            tool_use_id: Some(self.tool_use_id.to_owned()),
            context_snapshot_id: self.context_snapshot_id.map(str::to_owned),
            model: self.model.to_owned(),
            profile_id: self.profile_id.to_owned(),
            prompt_version: crate::proposals::PROMPT_VERSION.to_owned(),
            prompt_layers: snapshot.map(|s| s.prompt_layers).unwrap_or_default(),
            rebased_from: None,
            sources,
        }
    }

    /// The memory items of this call's project and workspace (any status; the
    /// provenance keeps the confirmed ones its context held). Unreadable memory is
    /// left out: provenance never fails a proposal.
    fn memory_in_scope(&self) -> Vec<crate::memory::MemoryItem> {
        let mut items = crate::memory::list(self.kernel.store(), self.project_id).unwrap_or_default();
        if let Ok(workspace) = self.kernel.workspace() {
            items.extend(crate::memory::list(self.kernel.store(), &workspace.id).unwrap_or_default());
        }
        items
    }

    /// Records a proposal for the person to review (in its own durable transaction);
    /// nothing official changes. The project and the origin are this call's, whatever
    /// `new` says. Only for a proposing tool, or a validation tool recording its
    /// checklist.
    ///
    /// Errors: a [`ToolFailure`] for any other tool, and the proposal's own errors
    /// (VALIDATION, NOT_FOUND, READ_ONLY) as tool failures.
    pub fn propose(&self, new: NewProposal) -> Result<Proposal, ToolFailure> {
        let allowed = match self.capability {
            Capability::Propose => true,
            Capability::Validate => new.kind == ProposalKind::Checklist,
            _ => false,
        };
        if !allowed {
            return Err(ToolFailure::new("This tool is not registered as a proposing tool, so it cannot make proposals."));
        }
        let new = NewProposal { project_id: self.project_id.to_owned(), origin: self.origin(), ..new };
        let proposal = crate::proposals::create(self.kernel, new)?;
        self.proposals_made.fetch_add(1, Ordering::SeqCst);
        Ok(proposal)
    }
}

impl ToolContext<'_> {
    /// Records a memory item the model proposes (status `proposed`: not model-visible
    /// until the person confirms it), for the workspace or for this call's project.
    /// Only for a proposing tool; nothing else changes.
    ///
    /// Errors: a [`ToolFailure`] for any other tool, an empty or too long text, or a
    /// session without a workspace.
    pub fn propose_memory(&self, text: &str, workspace_wide: bool) -> Result<crate::memory::MemoryItem, ToolFailure> {
        if self.capability != Capability::Propose {
            return Err(ToolFailure::new("This tool is not registered as a proposing tool, so it cannot propose memory."));
        }
        let Some(session_id) = self.owner.session_id() else {
            return Err(ToolFailure::new("Memory is proposed from a drafting session only."));
        };
        let text = crate::memory::check_text(text)?;
        let (scope, scope_id) = if workspace_wide {
            let workspace = self.kernel.workspace()?;
            (crate::memory::MemoryScope::Workspace, workspace.id)
        } else {
            (crate::memory::MemoryScope::Project { project_id: self.project_id.to_owned() }, self.project_id.to_owned())
        };
        let now = self.kernel.now();
        let item = crate::memory::MemoryItem {
            id: self.kernel.new_id("mem"),
            scope,
            scope_id,
            text,
            status: crate::memory::MemoryStatus::Proposed,
            origin: crate::memory::MemoryOrigin::Model { session_id: session_id.to_owned(), tool_use_id: self.tool_use_id.to_owned() },
            created_at: now,
            updated_at: now,
        };
        let _guard = self.kernel.write_lock();
        let mut batch = crate::store::Batch::new();
        crate::memory::stage_add(&mut batch, &item)?;
        self.kernel.store().apply(batch, crate::store::Durability::Durable).map_err(ApiError::from)?;
        Ok(item)
    }
}

/// Typed reads of the store for tool handlers. It holds no way to a write: no batch,
/// no write lock, no kernel.
#[derive(Clone, Copy)]
pub struct Reads<'a> {
    kernel: &'a Kernel,
}

impl<'a> Reads<'a> {
    /// The search index: searching only reads (the index follows the store by itself).
    pub fn search_index(&self) -> &'a crate::retrieval::SearchIndex {
        self.kernel.search_index()
    }
}

impl Reads<'_> {
    fn store(&self) -> &Store {
        self.kernel.store()
    }

    /// One record by key. Errors: store errors.
    pub fn get<R: Record>(&self, key: &[u8]) -> Result<Option<R>, ApiError> {
        Ok(self.store().get::<R>(key)?)
    }

    /// Every record under `prefix`, in key order. Errors: store errors.
    pub fn scan<R: Record>(&self, prefix: &[u8]) -> Result<Vec<R>, ApiError> {
        Ok(self.store().scan::<R>(prefix)?)
    }

    /// The project. Errors: NOT_FOUND.
    pub fn project(&self, project_id: &str) -> Result<Project, ApiError> {
        crate::project::load(self.store(), project_id)
    }

    /// A fresh compile of the project's drafts, with their checks (writes nothing).
    pub fn compile(&self, project: &Project, platforms: Option<Vec<crate::model::Platform>>) -> Result<PipelineCompileResult, ApiError> {
        crate::project::drafts::compile(self.kernel, project, platforms, None)
    }

    /// The project's saved platform drafts.
    pub fn saved_drafts(&self, project_id: &str) -> Result<Vec<PlatformDraft>, ApiError> {
        crate::project::drafts::list(self.store(), project_id)
    }

    /// The project's comments, oldest first.
    pub fn comments(&self, project_id: &str, include_resolved: bool) -> Result<Vec<Comment>, ApiError> {
        crate::project::comments::list(self.store(), project_id, include_resolved)
    }

    /// Summaries of the project's versions, newest first.
    pub fn version_summaries(&self, project_id: &str) -> Result<Vec<VersionSummary>, ApiError> {
        crate::project::versions::summaries(self.store(), project_id)
    }

    /// The images the project uses.
    pub fn media(&self, project_id: &str) -> Result<Vec<MediaAsset>, ApiError> {
        crate::project::media(self.store(), project_id)
    }

    /// Every version of the project, oldest first.
    pub fn versions(&self, project_id: &str) -> Result<Vec<Version>, ApiError> {
        crate::project::versions::list(self.store(), project_id)
    }

    /// The saved draft of one platform, if any.
    pub fn saved_draft(&self, project_id: &str, platform: Platform) -> Result<Option<PlatformDraft>, ApiError> {
        crate::project::drafts::load(self.store(), project_id, platform)
    }

    /// The project's brand profile, when it has one.
    pub fn brand(&self, project: &Project) -> Result<Option<BrandProfile>, ApiError> {
        crate::project::brand(self.store(), project)
    }

    /// The platform profiles (built-in, with the data folder's overrides).
    pub fn profiles(&self) -> Result<ProfileSet, ApiError> {
        crate::project::drafts::profiles(self.kernel)
    }

    /// The source-level findings of `project` as given (title and source).
    pub fn source_findings(&self, project: &Project) -> Result<Vec<Finding>, ApiError> {
        crate::project::drafts::source_findings_of(self.kernel, project)
    }

    /// A proposal by id. Errors: NOT_FOUND.
    pub fn proposal(&self, id: &str) -> Result<Proposal, ApiError> {
        crate::proposals::load(self.store(), id)
    }

    /// Every proposal of a project, oldest first.
    pub fn proposals(&self, project_id: &str) -> Result<Vec<Proposal>, ApiError> {
        crate::proposals::list(self.store(), project_id)
    }

    /// The staged set of a session, if it has one.
    pub fn staging(&self, session_id: &str) -> Result<Option<crate::proposals::staging::Staging>, ApiError> {
        crate::proposals::staging::load(self.store(), session_id)
    }

    /// The performance summary of `platform` (`performance::context`).
    ///
    /// Errors: POLICY_REFUSED when the workspace policy keeps performance history out
    /// of AI context, PERMISSION_DENIED when the person's setting does; store errors.
    pub fn performance_summary(&self, platform: Platform) -> Result<crate::performance::context::PerformanceSummary, ApiError> {
        let state = crate::performance::context::state(self.store())?;
        if !state.enabled {
            return Err(crate::performance::context::refused(&state));
        }
        crate::performance::context::summary(self.store(), platform)
    }

    /// A stored large tool result by its reference (`sha256:…`).
    pub fn stored_result(&self, reference: &str) -> Result<Option<String>, ApiError> {
        Ok(self.store().get::<crate::harness::log::StoredResult>(reference.as_bytes())?.map(|r| r.content))
    }
}
