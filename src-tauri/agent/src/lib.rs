//! The Inkstone agent: the harness (sessions as event logs, the turn loop, permissions,
//! compaction, replay), the tools the model may call, context assembly, the layered
//! prompts, session intent, and one-click optimize as a scripted run over the harness.
//! Over the domain (`inkstone-core`); the engine and the method table (`inkstone-api`)
//! sit above this crate.

pub mod context;
pub mod growth;
pub mod harness;
pub mod intent;
pub mod prompts;
pub mod tools;

// The domain and the layers below it, under the paths this crate's modules name them by
// (`crate::project`, `crate::store`, …); not part of this crate's surface.
use inkstone_core::{diff, error, kernel, llm, memory, model, performance, pipeline, profiles, project, proposals, quality, retrieval, store, suggest, usage};
