//! The Inkstone engine: domain model, sled store, text diffs and the API facade that
//! the desktop shell, the CLI and the HTTP mode all call. No GUI, no HTTP server.
//!
//! Start at [`api::Engine`]: `Engine::open(EngineConfig)` then `engine.call(method, params)`.

pub mod activity;
pub mod api;
pub mod backup;
pub mod config;
pub mod context;
pub mod engine;
pub mod growth;
pub mod harness;
pub mod intent;
pub mod kernel;
pub mod llm;
pub mod memory;
pub mod outbox;
pub mod performance;
pub mod policy;
pub mod project;
pub mod prompts;
pub mod proposals;
pub mod retrieval;
pub mod spreadsheet;
pub mod sync;
pub mod tools;
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
pub use engine::Engine;
pub use error::{ApiError, ErrorCode};
pub use kernel::Kernel;
