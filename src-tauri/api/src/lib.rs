//! The Inkstone engine that the desktop shell, the CLI and the HTTP mode all call: the
//! agent runtime (harness, tools, optimize, context, prompts, intent), the AI activity
//! view, backups, and the API facade over the domain (`inkstone-core`). No GUI, no HTTP
//! server.
//!
//! Start at [`api::Engine`]: `Engine::open(EngineConfig)` then `engine.call(method, params)`.

pub mod activity;
pub mod api;
pub mod backup;
pub mod context;
pub mod engine;
pub mod growth;
pub mod harness;
pub mod intent;
pub mod prompts;
pub mod tools;

// The domain and the layers below it, under the paths this crate's modules (and its
// callers) name them by: `crate::project`, `crate::store`, `crate::Kernel`, ….
pub use inkstone_core::*;

pub use engine::Engine;
