//! Talking to language models. The client, its streams, errors, retry, transport,
//! profiles and keychain are the `inkstone-llm` crate, re-exported here under their old
//! paths (`crate::llm::client`, `crate::llm::LlmError`). [`runtime`], the one metered
//! door to a model, stays in core: it writes a usage record per call and checks quotas
//! (`usage`), which are not the client's business.

pub use inkstone_llm::*;

pub mod runtime;

pub use runtime::{check_policy, endpoint, load_profile, quotas, ModelCall, Runtime};
