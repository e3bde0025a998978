//! The Inkstone engine: domain model, sled store, text diffs and the API facade that
//! the desktop shell, the CLI and the HTTP mode all call. No GUI, no HTTP server.
//!
//! Start at [`api::Engine`]: `Engine::open(EngineConfig)` then `engine.call(method, params)`.

pub mod api;
pub mod config;
pub mod context;
pub mod diff;
pub mod harness;
pub mod llm;
pub mod model;
pub mod pipeline;
pub mod profiles;
pub mod quality;
pub mod store;
pub mod usage;
pub mod suggest;

pub use api::{ApiError, Engine, ErrorCode};
pub use config::EngineConfig;
