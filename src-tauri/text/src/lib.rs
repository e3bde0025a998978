//! Inkstone's pure text pipeline: the platform compilers and how each platform measures
//! length ([`pipeline`]), the draft profiles they read ([`profiles`]), the checks that
//! return findings ([`quality`]) and the line and word diffs proposals are made of
//! ([`diff`]). Pure functions over [`inkstone_model`] records: no IO runtime, no HTTP,
//! no search index (a tidy test in inkstone-core holds this crate's dependencies to that).

pub mod diff;
pub mod pipeline;
pub mod profiles;
pub mod quality;
