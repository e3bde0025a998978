//! The Inkstone engine: domain model, sled store, text diffs and the API facade that
//! the desktop shell, the CLI and the HTTP mode all call. No GUI, no HTTP server.
//!
//! Start at [`api::Engine`]: `Engine::open(EngineConfig)` then `engine.call(method, params)`.

pub mod api;
pub mod config;
pub mod diff;
pub mod model;
pub mod store;

pub use api::{ApiError, Engine, ErrorCode};
pub use config::EngineConfig;
