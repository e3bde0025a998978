//! The harness: the runtime Vibe Drafting and optimization runs share.
//!
//! - [`event`]: the envelope and the kinds; one exhaustive match decides which kinds
//!   are logged and which the model sees.
//! - [`log`]: sessions, the append-only event log (one sled tree, `session 0x00 seq`),
//!   the content-addressed result store, context snapshots, approvals, executions.
//! - [`replay`]: a log → the model-visible messages (with a stable hash), the state
//!   the loop resumes from and the drafting panel's timeline ([`timeline`], folded in
//!   the same pass). The live loop folds every event it appends with the same
//!   function, so live and replayed messages, and what the panel draws, cannot drift.
//! - [`tools`]: definitions, validators (JSON schema, errors with JSON pointers) and
//!   the built-in read and workflow tools.
//! - [`permission`]: the pure permission engine.
//! - `turn`: the turn loop (`submit`, interrupts, approvals, questions, limits) for an
//!   [`Owner`] (a session, or an optimization run) and a [`Purpose`]; `model_call`: one
//!   model call of a turn (context, request, streaming); `execution`: the tool calls of
//!   a turn (validation, permission, running, results).
//! - `script`: a fixed plan of steps over a log (an optimization run), with the same
//!   appends, model calls, metering and replay as a turn, and resume from its record.
//! - `sessions`: the logs this process holds (each one's live state, the claim that
//!   lets one turn run at a time) and the registry that loads them on first use.

pub mod allow_rule;
pub mod compaction;
pub mod event;
mod execution;
pub mod log;
mod model_call;
pub mod permission;
pub mod provenance;
pub mod replay;
pub(crate) mod script;
mod sessions;
pub mod timeline;
pub mod tools;
mod turn;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};

pub use allow_rule::{AllowRule, AllowScope};
pub use compaction::{CompactThreshold, CompactionMode, CompactionTrigger, Pin};
pub use event::{ApprovalChange, ApprovalHunk, Event, EventBody, IntentSource, LayerEstimate, Mode, ToolStatus, TurnEndReason};
pub use log::{ApprovalRecord, ContextLayer, ContextSnapshot, Limits, Session, MAX_EVENT_BYTES, PREVIEW_CHARS};
pub use model_call::session_overhead;
pub use model_call::{STREAM_CHECKPOINT_CHARS, STREAM_CHECKPOINT_MILLIS};
pub use permission::{Decision, PermissionPolicy, PermissionRule};
pub use replay::{messages_hash, replay, rewound_note, LogLine, PendingApproval, PendingQuestion, QueuedMessage, Replay, SessionState};
pub use sessions::{Live, TurnClaim};
pub use tools::{Reads, Registry, ToolContext, ToolDefinition, ToolFailure, ToolHandler};
pub use turn::{answer_question, compact_session, resolve_approval, submit_message, Answer, SubmitOutcome, TurnStats};

use crate::error::{ApiError, ErrorCode};
use crate::kernel::Kernel;
use crate::store::{keys, Batch, Durability, Record};

/// What a model call's pinned layer carries besides the project: the session's
/// intent (with its clarification, when one is needed) and the memory that fits.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ContextExtras {
    pub intent: String,
    pub clarification: Option<crate::intent::Clarification>,
    pub memory: Vec<String>,
    pub memory_left_out: usize,
    /// The performance summaries of the project's platforms (every platform when it
    /// names none), "" when the setting or the workspace policy is off.
    pub performance: String,
}

/// What the project tells the intent rules.
pub fn intent_hints(records: &crate::context::ContextRecords) -> crate::intent::ProjectHints<'_> {
    project_hints(&records.project, records.brand.as_ref())
}

/// [`intent_hints`] from the project and its brand profile alone.
pub fn project_hints<'a>(project: &'a crate::model::Project, brand: Option<&'a crate::model::BrandProfile>) -> crate::intent::ProjectHints<'a> {
    crate::intent::ProjectHints { platforms: &project.platforms, brand_name: brand.map(|b| b.name.as_str()), has_content: !project.source.trim().is_empty() }
}

/// The intent text and the memory lines of a call for this project and intent.
pub fn context_extras(
    store: &crate::store::Store,
    workspace_id: &str,
    records: &crate::context::ContextRecords,
    intent: &crate::intent::SessionIntent,
) -> Result<ContextExtras, ApiError> {
    let clarification = crate::intent::clarification(intent, &intent_hints(records));
    let (memory, memory_left_out) = crate::memory::for_context(store, workspace_id, &records.project.id, crate::memory::CONTEXT_BUDGET_TOKENS)?;
    let platforms = if records.project.platforms.is_empty() { crate::model::Platform::ALL.to_vec() } else { records.project.platforms.clone() };
    let performance = crate::performance::context::layer_text(store, &platforms)?;
    Ok(ContextExtras { intent: crate::intent::render(intent, clarification.as_ref()), clarification, memory, memory_left_out, performance })
}

/// Workspace permission rules, kept in the meta tree.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StoredRules {
    pub(crate) rules: Vec<PermissionRule>,
}

pub const META_PERMISSION_RULES: &[u8] = b"permission_rules";

impl Record for StoredRules {
    const KIND: crate::store::Kind = crate::store::Kind::Meta;
    fn key(&self) -> Vec<u8> {
        META_PERMISSION_RULES.to_vec()
    }
}

/// Who a log belongs to: a drafting session or an optimization run. The turn loop
/// works for an owner; only the `session.*` methods know sessions.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Owner {
    Session(String),
    Run(String),
}

impl Owner {
    /// The owner's id: the key prefix of its log.
    pub fn id(&self) -> &str {
        match self {
            Owner::Session(id) | Owner::Run(id) => id,
        }
    }

    /// The session id, when the owner is a session.
    pub fn session_id(&self) -> Option<&str> {
        match self {
            Owner::Session(id) => Some(id),
            Owner::Run(_) => None,
        }
    }

    /// The run id, when the owner is a run.
    pub fn run_id(&self) -> Option<&str> {
        match self {
            Owner::Session(_) => None,
            Owner::Run(id) => Some(id),
        }
    }
}

/// What the model calls of a turn are for; the usage record names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// Vibe Drafting: a person's session.
    Drafting,
    /// An optimization run.
    Optimize,
}

impl Purpose {
    /// The name in usage records (`drafting`, `optimize`).
    pub fn as_str(self) -> &'static str {
        match self {
            Purpose::Drafting => "drafting",
            Purpose::Optimize => "optimize",
        }
    }
}

/// What a turn works for and on: its owner, the workspace and project it may touch,
/// the profile every model call uses, its limits and its purpose. Built from a
/// session record (or, later, a run record); the loop reads nothing else about them.
#[derive(Debug, Clone, PartialEq)]
pub struct Scope {
    pub owner: Owner,
    pub workspace_id: String,
    pub project_id: String,
    /// The LLM profile id every model call uses.
    pub profile_id: String,
    pub limits: Limits,
    pub purpose: Purpose,
}

impl Scope {
    /// The scope of a drafting session in `workspace_id`.
    pub fn for_session(session: &Session, workspace_id: &str) -> Scope {
        Scope {
            owner: Owner::Session(session.id.clone()),
            workspace_id: workspace_id.to_owned(),
            project_id: session.project_id.clone(),
            profile_id: session.profile_id.clone(),
            limits: session.limits.clone(),
            purpose: Purpose::Drafting,
        }
    }
}

/// The harness of one engine: the tool registry and the sessions loaded so far.
pub struct Runtime {
    /// Shared: each model call reads it, and cloning the whole map per call showed in
    /// the turn's profile; a registration copies it only while a call still holds it.
    registry: RwLock<Result<Arc<Registry>, tools::RefusedTool>>,
    /// The logs loaded so far, by owner id.
    logs: Mutex<HashMap<String, Arc<Live>>>,
}

impl Runtime {
    /// A runtime whose registry holds `builtins` (the tools of `crate::tools`, given
    /// by the engine, so the harness does not depend on the tools it runs).
    pub fn new(builtins: Vec<(ToolDefinition, ToolHandler)>) -> Runtime {
        let mut registry = Registry::default();
        let registered = builtins.into_iter().try_for_each(|(definition, handler)| registry.register(definition, handler));
        Runtime { registry: RwLock::new(registered.map(|()| Arc::new(registry))), logs: Mutex::new(HashMap::new()) }
    }

    /// Registers a tool (see `Engine::register_tool`).
    pub fn register_tool(&self, definition: ToolDefinition, handler: ToolHandler) -> Result<(), ApiError> {
        let mut guard = self.registry.write().unwrap_or_else(|p| p.into_inner());
        match &mut *guard {
            Ok(registry) => Arc::make_mut(registry).register(definition, handler).map_err(|e| ApiError::validation(e.field(), e.to_string())),
            Err(e) => Err(ApiError::internal(format!("the tool registry is broken: {e}"))),
        }
    }

    pub fn registry(&self) -> Result<Arc<Registry>, ApiError> {
        match &*self.registry.read().unwrap_or_else(|p| p.into_inner()) {
            Ok(registry) => Ok(Arc::clone(registry)),
            Err(e) => Err(ApiError::internal(format!("the tool registry is broken: {e}"))),
        }
    }
}

/// Where an event belongs and what it points at.
#[derive(Debug, Clone, Default)]
pub struct Meta {
    pub turn_id: Option<String>,
    pub parent_event_id: Option<String>,
    pub tool_use_id: Option<String>,
    pub context_snapshot_id: Option<String>,
}

/// The harness bound to a kernel: what the turn loop and the session methods work
/// with. Dereferences to the kernel.
#[derive(Clone, Copy)]
pub struct Harness<'a> {
    pub kernel: &'a Kernel,
    pub runtime: &'a Runtime,
}

impl std::ops::Deref for Harness<'_> {
    type Target = Kernel;
    fn deref(&self) -> &Kernel {
        self.kernel
    }
}

/// Every logged event of a session, in order.
pub fn session_events(kernel: &Kernel, session_id: &str) -> Result<Vec<Event>, ApiError> {
    let mut events = kernel.store().scan::<Event>(&keys::project_prefix(session_id))?;
    share_envelope_ids(&mut events);
    Ok(events)
}

/// Every event of a log names the same project and workspace: after decoding, the
/// events share one copy of each, so a long log in memory costs no string per event
/// for them (replay of 100,000 events was 25% slower with a copy in every event).
fn share_envelope_ids(events: &mut [Event]) {
    let (mut project, mut workspace): (Option<Arc<str>>, Option<Arc<str>>) = (None, None);
    for event in events {
        for (field, shared) in [(&mut event.project_id, &mut project), (&mut event.workspace_id, &mut workspace)] {
            match (field.as_ref(), shared.as_ref()) {
                (Some(id), Some(seen)) if id == seen => *field = Some(Arc::clone(seen)),
                (Some(id), _) => *shared = Some(Arc::clone(id)),
                (None, _) => {}
            }
        }
    }
}

impl<'a> Harness<'a> {
    pub fn harness(&self) -> &'a Runtime {
        self.runtime
    }

    pub(crate) fn session_events(&self, session_id: &str) -> Result<Vec<Event>, ApiError> {
        session_events(self.kernel, session_id)
    }

    pub fn permission_rules(&self) -> Result<Vec<PermissionRule>, ApiError> {
        Ok(self.store().get::<StoredRules>(META_PERMISSION_RULES)?.map(|r| r.rules).unwrap_or_default())
    }

    /// The stored "always allow" rules (every scope; the matcher checks the place).
    pub fn allow_rules(&self) -> Result<Vec<AllowRule>, ApiError> {
        Ok(self.store().scan::<AllowRule>(allow_rule::META_ALLOW_RULES)?)
    }

    pub fn set_permission_rules(&self, rules: Vec<PermissionRule>) -> Result<(), ApiError> {
        let _guard = self.write_lock();
        let mut batch = Batch::new();
        batch.put(&StoredRules { rules })?;
        self.store().apply(batch, Durability::Durable)?;
        Ok(())
    }

    pub fn load_session(&self, session_id: &str) -> Result<Session, ApiError> {
        self.store().get::<Session>(session_id.as_bytes())?.ok_or_else(|| ApiError::not_found("session", session_id).action("list_sessions", &[]))
    }

    /// Refuses a call that would change a session's work (send, approve, answer,
    /// compact, stage, …) while its project is archived: `session.project_archived`.
    pub fn check_project_open(&self, session: &Session) -> Result<(), ApiError> {
        let project = crate::project::load(self.store(), &session.project_id)?;
        if project.archived {
            return Err(crate::project::archived_for_session(&project));
        }
        Ok(())
    }

    /// The scope of a session's turns.
    pub(crate) fn session_scope(&self, session: &Session) -> Result<Scope, ApiError> {
        Ok(Scope::for_session(session, &self.workspace()?.id))
    }

    /// Starts a new session's log: the session record and its first event in one
    /// transaction. Errors: store errors (then nothing is written).
    pub fn start_session(&self, session: &Session, mode: Mode) -> Result<Event, ApiError> {
        let live = Arc::new(Live::new(Owner::Session(session.id.clone()), self.workspace()?.id, session.project_id.clone(), SessionState::default()));
        let mut extra = Batch::new();
        extra.put(session)?;
        let body = EventBody::SessionCreated { project_id: session.project_id.clone(), profile: session.profile_id.clone(), mode };
        let event = self.append_event(&live, Meta::default(), body, extra, Durability::Durable)?;
        self.harness().logs.lock().unwrap_or_else(|p| p.into_inner()).insert(session.id.clone(), live);
        Ok(event)
    }

    /// Appends one event to a log (with `extra` records in the same transaction) and
    /// folds it into the live state. The envelope names the owner, project and
    /// workspace of `live`. Live-only kinds are refused.
    pub fn append_event(&self, live: &Live, meta: Meta, body: EventBody, extra: Batch, durability: Durability) -> Result<Event, ApiError> {
        let _guard = self.write_lock();
        self.append_locked(live, meta, body, extra, durability)
    }

    /// Like [`Harness::append_event`], with the records and the event built by `stage`
    /// under the same write lock: what `stage` checks cannot change before its records
    /// and the event that reports them commit, as one transaction. Nothing is written
    /// when `stage` fails.
    pub fn append_staged<T>(
        &self,
        live: &Live,
        meta: Meta,
        durability: Durability,
        stage: impl FnOnce(&mut Batch) -> Result<(EventBody, T), ApiError>,
    ) -> Result<(Event, T), ApiError> {
        let _guard = self.write_lock();
        let mut batch = Batch::new();
        let (body, value) = stage(&mut batch)?;
        let event = self.append_locked(live, meta, body, batch, durability)?;
        Ok((event, value))
    }

    /// Appends under the write lock the caller holds.
    fn append_locked(&self, live: &Live, meta: Meta, body: EventBody, extra: Batch, durability: Durability) -> Result<Event, ApiError> {
        let (persist, model_visible) = body.policy();
        if persist == event::Persist::LiveOnly {
            return Err(ApiError::internal(format!("`{}` events are live only", body.kind_name())));
        }
        let mut state = live.lock_state();
        let parent_event_id = meta.parent_event_id.or_else(|| match &body {
            EventBody::ToolDecision { .. } | EventBody::ToolResult { .. } | EventBody::ApprovalRequested { .. } | EventBody::QuestionAsked { .. } => {
                state.last_assistant_event_id.clone()
            }
            EventBody::ApprovalResolved { .. } | EventBody::QuestionAnswered { .. } => state.last_block_event_id.clone(),
            _ => None,
        });
        let event = Event {
            event_id: self.new_id("evt"),
            sequence: state.last_sequence + 1,
            session_id: live.owner.session_id().map(str::to_owned),
            run_id: live.owner.run_id().map(str::to_owned),
            project_id: Some(Arc::clone(&live.project_id)),
            workspace_id: Some(Arc::clone(&live.workspace_id)),
            turn_id: meta.turn_id,
            parent_event_id,
            tool_use_id: meta.tool_use_id,
            context_snapshot_id: meta.context_snapshot_id,
            proposal_id: None,
            artifact_id: None,
            created_at: self.now(),
            model_visible,
            body,
        };
        // Serialized once: the batch's bytes are what the limit measures.
        let mut batch = extra;
        let size = batch.put_measured(&event)?;
        if size > MAX_EVENT_BYTES {
            return Err(ApiError::new(ErrorCode::Validation, format!("A `{}` event would be {size} bytes; log lines are at most {MAX_EVENT_BYTES}.", event.kind_name()))
                .hint("shorten_message", "Send a shorter message, or split it."));
        }
        self.store().apply(batch, durability)?;
        state.apply(&event);
        Ok(event)
    }

    /// A live-only event (a streaming delta), never stored.
    pub(crate) fn live_event(&self, live: &Live, turn_id: &str, body: EventBody) -> Event {
        Event {
            event_id: String::new(),
            sequence: 0,
            session_id: live.owner.session_id().map(str::to_owned),
            run_id: live.owner.run_id().map(str::to_owned),
            project_id: Some(Arc::clone(&live.project_id)),
            workspace_id: Some(Arc::clone(&live.workspace_id)),
            turn_id: Some(turn_id.to_owned()),
            parent_event_id: None,
            tool_use_id: None,
            context_snapshot_id: None,
            proposal_id: None,
            artifact_id: None,
            created_at: self.now(),
            model_visible: false,
            body,
        }
    }

    /// Sets the session's intent as the person edited it (no event when unchanged).
    pub fn set_intent(&self, session_id: &str, intent: crate::intent::SessionIntent) -> Result<(), ApiError> {
        let live = self.live_session(session_id)?;
        if live.lock_state().intent == intent {
            return Ok(());
        }
        self.append_event(&live, Meta::default(), EventBody::IntentUpdated { intent, by: IntentSource::Person }, Batch::new(), Durability::Durable)?;
        Ok(())
    }
}
