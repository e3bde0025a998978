//! The engine behind every transport: the [`Kernel`] (store, configuration, model
//! runtime) plus the harness runtime (the tool registry with the built-in tools, and
//! the sessions this process holds). The dispatcher, [`Engine::call`], is in `api`.
//!
//! An `Engine` dereferences to its kernel: everything below the harness takes a
//! `&Kernel`, so `engine.store()`, `engine.now()` or `engine.model_chat(…)` are the
//! kernel's.

use std::ops::Deref;

use crate::config::EngineConfig;
use crate::error::ApiError;
use crate::harness::{self, ContextSnapshot, Event, ToolDefinition, ToolHandler};
use crate::kernel::Kernel;

pub struct Engine {
    // Dropped first: it stops the delivery thread before the kernel closes the store.
    sync: crate::sync::Runtime,
    kernel: Kernel,
    harness: harness::Runtime,
    /// What the performance dashboard reads on every query, until the store changes it.
    perf_cache: crate::performance::cache::Cache,
    /// Moved by every commit of session events: what `session.watch` waits on (the
    /// store tells it once the first watch asks, see [`Engine::log_changes`]).
    log_changes: std::sync::Arc<crate::sync::Changes>,
    log_changes_hooked: std::sync::atomic::AtomicBool,
    /// Moved by every turn or compaction that starts in a session: the session-activity
    /// marker of the pushed sync status (see [`Engine::session_activity`]).
    session_starts: std::sync::Arc<std::sync::atomic::AtomicU64>,
    session_starts_hooked: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine").field("data_dir", &self.kernel.config().data_dir).finish()
    }
}

impl Deref for Engine {
    type Target = Kernel;
    fn deref(&self) -> &Kernel {
        &self.kernel
    }
}

impl Engine {
    /// The performance dashboard's read cache.
    pub fn perf_cache(&self) -> &crate::performance::cache::Cache {
        &self.perf_cache
    }

    /// Opens the data dir named by `config`, creating the store and the local
    /// workspace on first use, with the built-in tools registered.
    ///
    /// Errors: STORE_LOCKED when another process holds the data dir, STORE_CORRUPT,
    /// STORE_TOO_NEW, IO.
    pub fn open(config: EngineConfig) -> Result<Engine, ApiError> {
        let kernel = Kernel::open(config)?;
        crate::activity::index_existing(kernel.store(), kernel.now())?;
        crate::performance::metrics::index_existing(kernel.store(), kernel.now())?;
        crate::proposals::open_index::index_existing(kernel.store(), kernel.now())?;
        let sync = crate::sync::Runtime::new(kernel.config().jitter_seed).with_part(crate::performance::sync::cycle_part);
        Ok(Engine {
            sync,
            kernel,
            harness: harness::Runtime::new(crate::tools::builtins()),
            perf_cache: Default::default(),
            log_changes: Default::default(),
            log_changes_hooked: Default::default(),
            session_starts: Default::default(),
            session_starts_hooked: Default::default(),
        })
    }

    /// The sync machinery: the cycle lock, the transport and the delivery thread.
    pub fn sync_runtime(&self) -> &crate::sync::Runtime {
        &self.sync
    }

    /// Starts the background delivery thread: it pulls and pushes while the workspace
    /// is connected and not paused, woken by every committed version. The long-lived
    /// binaries (the desktop app, `serve`) start it; one-shot CLI commands do not.
    pub fn start_sync(self: &std::sync::Arc<Self>) {
        crate::sync::Runtime::start(self, |engine: &Engine| (&engine.kernel, &engine.sync));
    }

    /// What wakes a watcher of a session's log (`session.watch`): a count moved by every
    /// committed session event, of any session (the watcher reads its own session's
    /// state to see whether it grew). The first call subscribes it to the store (held
    /// weakly), so an engine nobody watches pays nothing.
    pub(crate) fn log_changes(&self) -> std::sync::Arc<crate::sync::Changes> {
        if !self.log_changes_hooked.swap(true, std::sync::atomic::Ordering::SeqCst) {
            let weak = std::sync::Arc::downgrade(&self.log_changes);
            self.kernel.store().subscribe(
                &[crate::store::Kind::SessionEvents],
                Box::new(move |_| match weak.upgrade() {
                    Some(changes) => {
                        changes.bump();
                        true
                    }
                    None => false,
                }),
            );
        }
        std::sync::Arc::clone(&self.log_changes)
    }

    /// The session-activity marker: moved whenever a turn or a compaction starts in any
    /// session of this data folder in this process (by any window, the API or a queued
    /// message), counted from the first call on. It moves the sync status's watchers
    /// too, so every window is pushed it: a drafting panel showing an idle session reads
    /// the session again when it moves and follows a turn that now runs
    /// (`session.watch`), instead of reading the log on a timer. Its value means nothing
    /// across processes.
    pub(crate) fn session_activity(&self) -> u64 {
        use std::sync::atomic::Ordering;
        if !self.session_starts_hooked.swap(true, Ordering::SeqCst) {
            let starts = std::sync::Arc::downgrade(&self.session_starts);
            let status = std::sync::Arc::downgrade(&self.sync.changes(&self.kernel));
            self.kernel.store().subscribe(
                &[crate::store::Kind::SessionEvents],
                Box::new(move |committed| {
                    let (Some(starts), Some(status)) = (starts.upgrade(), status.upgrade()) else { return false };
                    // Decoded on the writer's thread: a few small records per commit, and
                    // only the start of a turn or compaction wakes anyone.
                    let started = committed.iter().any(|change| {
                        matches!(change.record::<Event>(), Some(Ok(event)) if event.session_id.is_some()
                            && matches!(event.body, harness::EventBody::TurnStarted {} | harness::EventBody::CompactionStarted { .. }))
                    });
                    if started {
                        starts.fetch_add(1, Ordering::SeqCst);
                        status.bump();
                    }
                    true
                }),
            );
        }
        self.session_starts.load(Ordering::SeqCst)
    }

    /// Ends every subscription (`sync.watch`, `session.watch`), now and later: a server
    /// shutting down lets its open streams go.
    pub fn close_watches(&self) {
        self.sync.close_watches();
        self.log_changes.close();
    }

    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }

    /// The harness of this engine, bound to its kernel.
    pub(crate) fn harness(&self) -> harness::Harness<'_> {
        harness::Harness { kernel: &self.kernel, runtime: &self.harness }
    }

    /// Registers a tool beside the built-in ones (the write tools arrive with
    /// proposals; tests register theirs here). Replaces a tool of the same name.
    /// Errors: VALIDATION when the definition is refused (an invalid input schema, or
    /// a write that would not ask).
    pub fn register_tool(&self, definition: ToolDefinition, handler: ToolHandler) -> Result<(), ApiError> {
        self.harness.register_tool(definition, handler)
    }

    /// The definitions of every registered tool, by name.
    pub fn tool_definitions(&self) -> Result<Vec<ToolDefinition>, ApiError> {
        Ok(self.harness.registry()?.definitions().cloned().collect())
    }

    /// Every logged event of a session, in order.
    pub fn session_events(&self, session_id: &str) -> Result<Vec<Event>, ApiError> {
        harness::session_events(&self.kernel, session_id)
    }

    /// The stored context snapshot `id`.
    pub fn context_snapshot(&self, id: &str) -> Result<Option<ContextSnapshot>, ApiError> {
        Ok(self.store().get::<ContextSnapshot>(id.as_bytes())?)
    }

    /// A stored large tool result by its reference (`sha256:...`).
    pub fn stored_result(&self, reference: &str) -> Result<Option<String>, ApiError> {
        Ok(self.store().get::<harness::log::StoredResult>(reference.as_bytes())?.map(|r| r.content))
    }
}
