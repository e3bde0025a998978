//! The Inkstone domain: projects, versions, proposals, memory, usage, policy, team sync,
//! performance data and updates over the store, with the kernel (store, configuration,
//! metered model runtime, search index) they share. No agent, no API: the agent runtime
//! and the engine that the shells call (`inkstone-api`) sit above this crate.

pub mod config;
pub mod kernel;
pub mod llm;
pub mod memory;
pub mod outbox;
pub mod performance;
pub mod policy;
pub mod project;
pub mod proposals;
pub mod retrieval;
pub mod spreadsheet;
pub mod sync;
pub mod update;
pub mod usage;

// The layers below, under the paths the rest of core (and its callers) name them by.
pub use inkstone_error as error;
pub use inkstone_model as model;
pub use inkstone_model::clock;
pub use inkstone_store as store;
pub use inkstone_text::{diff, pipeline, profiles, quality};
// Keyword suggestions live beside the search index, which shares their segmenter.
pub use inkstone_search::suggest;

pub use config::EngineConfig;
pub use error::{ApiError, ErrorCode};
pub use kernel::Kernel;
