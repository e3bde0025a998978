//! inkstone-core's integration tests: the engine through its public API, one binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod api;
mod checkpoints;
mod compaction;
mod crash;
mod data;
mod drafting_tools;
mod drafts;
mod harness;
mod keychain;
mod layering;
mod llm_api;
mod llm_client;
mod long_session;
mod optimize;
mod optimize_eval;
mod outbox;
mod pipeline;
mod proposals;
mod search;
mod staging;
mod store;
mod sync;
mod sync_paging;
mod tidy;
mod x_count;
