//! The Inkstone engine that the desktop shell, the CLI and the HTTP mode all call: the
//! AI activity view, backups, and the API facade over the agent (`inkstone-agent`:
//! harness, tools, optimize, context, prompts, intent) and the domain (`inkstone-core`).
//! No GUI, no HTTP server.
//!
//! Start at [`api::Engine`]: `Engine::open(EngineConfig)` then `engine.call(method, params)`.

pub mod activity;
pub mod api;
pub mod backup;
pub mod engine;
pub mod problems;

// The domain and the layers below it, under the paths this crate's modules (and its
// callers: the CLI, the desktop shell, the tests) name them by: `crate::project`,
// `crate::store`, `crate::Kernel`, …. Named one by one, so what the facade hands on is
// a decision, not whatever the core happens to export.
pub use inkstone_core::{
    clock, config, diff, error, kernel, llm, model, outbox, performance, pipeline, policy, profiles, project, proposals, quality, retrieval, store, sync, update, usage, ApiError,
    EngineConfig, ErrorCode, Kernel,
};
// Used by this crate's own modules only.
use inkstone_core::{memory, spreadsheet, suggest};
// The agent, under the same module names.
pub use inkstone_agent::{context, growth, harness, intent, prompts, tools};

pub use engine::Engine;
