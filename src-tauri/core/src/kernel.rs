//! The kernel: the open store, the configuration (clock, ids, data dir), the model
//! runtime and the search index. Every subsystem above the store works with a
//! `&Kernel`; it decides nothing itself. Writes go through [`Kernel::write_lock`] and
//! one [`crate::store::Batch`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::config::EngineConfig;
use crate::error::ApiError;
use crate::llm::profile::LlmProfile;
use crate::llm::{Cancel, ChatEvent, ChatRequest, ChatResponse, ModelCall};
use crate::model::{Activity, ActivityKind, Timestamp, Workspace};
use crate::store::{Batch, Durability, Store, StoreOptions};

pub struct Kernel {
    // Dropped first: its thread holds the store until it stops, and the store's lock
    // must be released when the kernel goes.
    search: crate::retrieval::SearchIndex,
    store: Arc<Store>,
    config: EngineConfig,
    llm: Arc<crate::llm::Runtime>,
    /// The cancel signals of the calls running under a caller's request id (Ask), so
    /// another call can stop them.
    requests: Mutex<HashMap<String, Cancel>>,
}

/// A running request's cancel signal, registered under its id until dropped.
pub struct RequestGuard<'a> {
    kernel: &'a Kernel,
    id: Option<String>,
    pub cancel: Cancel,
}

impl Drop for RequestGuard<'_> {
    fn drop(&mut self) {
        if let Some(id) = &self.id {
            self.kernel.requests.lock().unwrap_or_else(|p| p.into_inner()).remove(id);
        }
    }
}

impl std::fmt::Debug for Kernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kernel").field("data_dir", &self.config.data_dir).finish()
    }
}

impl Kernel {
    /// Opens the data dir named by `config`, creating the store and the local
    /// workspace on first use.
    ///
    /// Errors: STORE_LOCKED when another process holds the data dir, STORE_CORRUPT,
    /// STORE_TOO_NEW, IO.
    pub fn open(config: EngineConfig) -> Result<Kernel, ApiError> {
        let store = Store::open(
            &config.data_dir,
            &StoreOptions { holder: config.holder.clone(), cache_capacity_bytes: config.cache_capacity_bytes, group_commit_millis: config.group_commit_millis },
        )?;
        let store = Arc::new(store);
        let llm = Arc::new(crate::llm::Runtime::new(config.secrets.clone(), config.env_api_key.clone(), config.llm_retry, config.jitter_seed));
        let embedder = crate::retrieval::MeteredEmbedder { llm: Arc::clone(&llm), clock: Arc::clone(&config.clock), ids: Arc::clone(&config.ids) };
        let services = crate::retrieval::Services { embedder: Arc::new(embedder) };
        let search = crate::retrieval::SearchIndex::open(Arc::clone(&store), services)?;
        let kernel = Kernel { search, store, config, llm, requests: Mutex::new(HashMap::new()) };
        kernel.ensure_workspace()?;
        Ok(kernel)
    }

    /// Creates the local workspace on first open.
    fn ensure_workspace(&self) -> Result<(), ApiError> {
        if self.store.workspace()?.is_some() {
            return Ok(());
        }
        let _guard = self.write_lock();
        let workspace =
            Workspace { id: self.new_id("wsp"), name: "Local".to_owned(), display_name: self.config.default_display_name.clone(), server_url: None, created_at: self.now() };
        let mut batch = Batch::new();
        batch.put(&workspace)?;
        self.store.apply(batch, Durability::Durable)?;
        Ok(())
    }

    /// A cancel signal for a request the caller named `id` (none: one nobody else can
    /// reach), which [`Kernel::cancel_request`] trips while the guard lives.
    pub fn begin_request(&self, id: Option<&str>) -> RequestGuard<'_> {
        let cancel = Cancel::new();
        if let Some(id) = id {
            self.requests.lock().unwrap_or_else(|p| p.into_inner()).insert(id.to_owned(), cancel.clone());
        }
        RequestGuard { kernel: self, id: id.map(str::to_owned), cancel }
    }

    /// Stops the running request named `id`; false when none runs under it.
    pub fn cancel_request(&self, id: &str) -> bool {
        match self.requests.lock().unwrap_or_else(|p| p.into_inner()).get(id) {
            Some(cancel) => {
                cancel.cancel();
                true
            }
            None => false,
        }
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// The search index, kept current by its own thread.
    pub fn search_index(&self) -> &crate::retrieval::SearchIndex {
        &self.search
    }

    /// The model runtime (keys, endpoints, the metered call).
    pub fn llm(&self) -> &crate::llm::Runtime {
        &self.llm
    }

    pub fn now(&self) -> Timestamp {
        self.config.clock.now()
    }

    pub fn new_id(&self, prefix: &str) -> String {
        self.config.ids.next_id(prefix)
    }

    /// See [`Store::write_lock`].
    pub fn write_lock(&self) -> MutexGuard<'_, ()> {
        self.store.write_lock()
    }

    /// The local workspace record.
    pub fn workspace(&self) -> Result<Workspace, ApiError> {
        self.store.workspace()?.ok_or_else(|| ApiError::internal("the workspace record is missing"))
    }

    /// The local user's display name: the author of everything made here.
    pub fn author(&self) -> Result<String, ApiError> {
        Ok(self.workspace()?.display_name)
    }

    /// A new activity entry by the local user.
    pub fn activity(&self, project_id: Option<&str>, kind: ActivityKind, summary: String) -> Result<Activity, ApiError> {
        Ok(Activity { id: self.new_id("act"), project_id: project_id.map(str::to_owned), actor: self.author()?, kind, summary, created_at: self.now() })
    }

    /// The LLM profile named by id or name.
    pub fn llm_profile(&self, name_or_id: &str) -> Result<LlmProfile, ApiError> {
        crate::llm::load_profile(&self.store, name_or_id)
    }

    /// The metered model call: [`crate::llm::Runtime::chat`] on this kernel's store,
    /// clock and ids.
    pub fn model_chat(&self, call: ModelCall<'_>, request: &ChatRequest, on_event: &mut (dyn FnMut(ChatEvent) + Send), cancel: &Cancel) -> Result<ChatResponse, ApiError> {
        self.llm.chat(&self.store, self.config.clock.as_ref(), self.config.ids.as_ref(), call, request, on_event, cancel)
    }
}
